"""From an observation record to the engine's view of a Zarcana table.

The camera reports cards and pyramids in millimetres of the table frame
(``shared/spec/table.md``); the engine thinks in lattice cells. :class:`TableTracker` turns one
into the other:

* the lattice (origin, pitch (w + h) / 2, a small rotation and the chequerboard parity) is
  learned from the first settled layout and then kept, so cell names never drift; cell (0, 0)
  is the north-west card of that layout unless the cells of a known starting board are given;
* every card away from the mat's zones snaps to its nearest cell; when several cards are seen
  in one cell the top one is the one with the highest ``level`` if the record says, else the
  newest by the remembered stack (a card put on a territory covers it: the old one is still
  underneath and is remembered as such);
* the top card of the mat's ``discard`` zone is the card just played; cards in the ``draw``
  zone are the draw pile;
* each pyramid goes to the cell its base stands in, its pose snapped to upright or to the
  lattice direction nearest to where it points (N = j - 1, E = i + 1, S = j + 1, W = i - 1);
  a pyramid in a zone (a player's stash) or away from every territory and wasteland space is
  off the board;
* the user's corrections of a misread card or pyramid are applied while the camera keeps
  reading it the same way.

Pure Python: no OpenCV, no Qt.
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from itertools import permutations
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from companion.core.cards import BACK
from companion.core.errors import CompanionError
from companion.core.observation import Observation
from companion.core.pieces import Cell, Color, Pose, Pyramid, format_cell, neighbours
from companion.games.zarcana.table import TableView

log = logging.getLogger(__name__)

#: Tarot card size (Rider-Waite-Smith), the default deck of Zarcana; a deck setting elsewhere.
TAROT_CARD_MM: tuple[float, float] = (70.0, 120.0)

#: Zone names that are piles, not stashes.
DRAW_ZONE = "draw"
DISCARD_ZONE = "discard"

#: Cards new on the discard pile with no level, up to this many, are tried in every order.
PILE_ORDERS_OF = 3

#: How far (mm) outside a zone rectangle a card or pyramid still counts as in it.
ZONE_MARGIN_MM = 10.0

#: A card farther than this share of the pitch from its cell centre is not on the lattice.
SNAP_TOLERANCE = 0.35

#: The board is looked for again (:meth:`TableTracker.refind`) when at least this many of
#: the game's territories do not show their top card where the lattice puts them: no move
#: changes more than two at once, a camera or table that moved changes them all.
REFIND_MISSES = 3
#: and the lattice found again is taken when it puts at least this share of them (and 3)
#: on their cells, and 2 more than the old lattice did.
REFIND_SHARE = 0.6
#: It is looked for too when the cards on the lattice lie this far (mm, on average, all the
#: same way) from their cells' centres: a camera nudged a little, before the cards drift past
#: the snap tolerance one by one; then the refit is taken when it loses no territory and puts
#: the cards at most REFIND_CLOSER as far (root mean square) from their centres.
DRIFT_MM = 12.0
#: or this far in root mean square (a turn about the board's middle: the offsets cancel out)
DRIFT_RMS_MM = 16.0
REFIND_CLOSER = 0.6


class TableStateError(CompanionError, ValueError):
    """An observation that cannot be read as a Zarcana table (the message says why)."""


# ---------------------------------------------------------------------------- lattice ---

@dataclass(frozen=True)
class Lattice:
    """Where the cells lie on the table: centre of (i, j) = origin + R(rotation) (i, j) pitch.

    ``rotation_deg`` is the angle of the +i axis in the table frame (0 for a layout square
    with the mat). ``portrait_parity`` is (i + j) % 2 of the cells whose card's long side runs
    along j (north-south when not rotated); the others lie across.
    """

    origin_mm: tuple[float, float]
    pitch_mm: float = 95.0
    rotation_deg: float = 0.0
    portrait_parity: int = 0

    def center(self, cell: Cell) -> tuple[float, float]:
        u, v = cell[0] * self.pitch_mm, cell[1] * self.pitch_mm
        c, s = self._cs()
        return (self.origin_mm[0] + u * c - v * s, self.origin_mm[1] + u * s + v * c)

    def locate(self, point: Sequence[float]) -> tuple[Cell, float]:
        """The nearest cell to a table point and the distance (mm) from its centre."""
        u, v = self._to_lattice(point)
        i, j = round(u / self.pitch_mm), round(v / self.pitch_mm)
        du, dv = u - i * self.pitch_mm, v - j * self.pitch_mm
        return (int(i), int(j)), math.hypot(du, dv)

    def pose(self, upright: bool, pointing_deg: float | None) -> Pose:
        """Upright, or the lattice direction nearest to a pointing angle of the table frame."""
        if upright or pointing_deg is None:
            return Pose.UP
        return Pose.from_degrees(pointing_deg - self.rotation_deg)

    def portrait(self, angle_deg: float) -> bool:
        """Whether a card at this art angle has its long side along the lattice's j axis."""
        rel = (angle_deg - self.rotation_deg) % 180.0
        return abs(rel - 90.0) < 45.0

    def expects_portrait(self, cell: Cell) -> bool:
        return (cell[0] + cell[1]) % 2 == self.portrait_parity

    def moved_from(self, other: "Lattice") -> tuple[float, float]:
        """How far (mm, x and y) cell 0,0 lies from where ``other`` puts it."""
        (x0, y0), (x1, y1) = other.center((0, 0)), self.center((0, 0))
        return x1 - x0, y1 - y0

    def shifted(self, di: int, dj: int) -> "Lattice":
        """The same lattice with cell (di, dj) renamed (0, 0)."""
        return Lattice(self.center((di, dj)), self.pitch_mm, self.rotation_deg,
                       (self.portrait_parity + di + dj) % 2)

    def to_dict(self) -> dict[str, Any]:
        return {"origin_mm": [round(self.origin_mm[0], 3), round(self.origin_mm[1], 3)],
                "pitch_mm": round(self.pitch_mm, 3), "rotation_deg": round(self.rotation_deg, 3),
                "portrait_parity": self.portrait_parity}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Lattice":
        try:
            o = d["origin_mm"]
            return cls((float(o[0]), float(o[1])), float(d.get("pitch_mm", 95.0)),
                       float(d.get("rotation_deg", 0.0)), int(d.get("portrait_parity", 0)) % 2)
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise TableStateError(f"bad lattice {dict(d)!r}: {exc}") from None

    def _cs(self) -> tuple[float, float]:
        a = math.radians(self.rotation_deg)
        return math.cos(a), math.sin(a)

    def _to_lattice(self, point: Sequence[float]) -> tuple[float, float]:
        dx, dy = float(point[0]) - self.origin_mm[0], float(point[1]) - self.origin_mm[1]
        c, s = self._cs()
        return (dx * c + dy * s, -dx * s + dy * c)


def _circular_mean(values: Iterable[float], period: float,
                   weights: Iterable[float] | None = None) -> float:
    """Mean of values on a circle of the given period, in [-period/2, period/2)."""
    sx = sy = 0.0
    ws = list(weights) if weights is not None else None
    for k, v in enumerate(values):
        w = ws[k] if ws is not None else 1.0
        a = 2.0 * math.pi * v / period
        sx += w * math.cos(a)
        sy += w * math.sin(a)
    if sx == 0.0 and sy == 0.0:
        return 0.0
    m = math.atan2(sy, sx) * period / (2.0 * math.pi)
    return ((m + period / 2.0) % period) - period / 2.0


class CardLike(Protocol):
    """What the lattice fit needs of a card sighting."""

    @property
    def id(self) -> str: ...

    @property
    def center_mm(self) -> tuple[float, float]: ...

    @property
    def angle_deg(self) -> float: ...

    @property
    def confidence(self) -> float: ...


def _offsets(reading: "TableReading", lattice: Lattice) -> tuple[float, float]:
    """How far the cards read onto cells lie from the cells' centres: the length of their
    mean offset (a shift) and their root mean square offset (mm)."""
    offs = [(c.center_mm[0] - x, c.center_mm[1] - y) for c in reading.cards
            if c.cell is not None for x, y in [lattice.center(c.cell)]]
    if not offs:
        return 0.0, 0.0
    n = len(offs)
    mean = math.hypot(sum(o[0] for o in offs) / n, sum(o[1] for o in offs) / n)
    return mean, math.sqrt(sum(o[0] ** 2 + o[1] ** 2 for o in offs) / n)


def _middle(points: Sequence[Sequence[float]]) -> tuple[float, float]:
    """The mean of some points (at least one)."""
    return (sum(float(q[0]) for q in points) / len(points),
            sum(float(q[1]) for q in points) / len(points))


def _heaps(cards: list[SeenCard], link_mm: float) -> list[list[SeenCard]]:
    """Cards in heaps: a card within ``link_mm`` of one of a heap's is in that heap."""
    heaps: list[list[SeenCard]] = []
    for sc in cards:
        joined = [h for h in heaps if any(
            math.hypot(sc.center_mm[0] - o.center_mm[0], sc.center_mm[1] - o.center_mm[1])
            <= link_mm for o in h)]
        merged = [sc] + [o for h in joined for o in h]
        heaps = [h for h in heaps if h not in joined] + [merged]
    return heaps


def _main_group(cells: Iterable[Cell]) -> set[Cell]:
    """The largest group of ``cells`` joined side to side or corner to corner."""
    left = set(cells)
    best: set[Cell] = set()
    while left:
        group = {left.pop()}
        todo = list(group)
        while todo:
            i, j = todo.pop()
            for n in [(i + di, j + dj) for di in (-1, 0, 1) for dj in (-1, 0, 1)]:
                if n in left:
                    left.discard(n)
                    group.add(n)
                    todo.append(n)
        if len(group) > len(best) or (len(group) == len(best) and min(group) < min(best)):
            best = group
    return best


def fit_lattice(cards: Sequence[CardLike], pitch_mm: float,
                expected: Mapping[Cell, str] | None = None, turn: int = 0) -> Lattice:
    """Fit the lattice to a layout of cards (at least one).

    The rotation is the mean card angle modulo 90 degrees (plus ``turn`` quarter turns:
    the cards alone cannot tell a board turned by a quarter), the origin's phase the mean
    card position modulo the pitch. Cell (0, 0) is the north-west card (smallest i and j)
    unless ``expected`` (cell -> card id of a known board) names the cells: then the naming
    that puts most seen cards on their expected cell wins.
    """
    if not cards:
        raise TableStateError("cannot learn the lattice from a table without cards")
    w = [max(c.confidence, 1e-3) for c in cards]
    rot = _circular_mean([c.angle_deg for c in cards], 90.0, w) + 90.0 * turn
    base = Lattice((0.0, 0.0), pitch_mm, rot)
    uv = [base._to_lattice(c.center_mm) for c in cards]
    ou = _circular_mean([p[0] for p in uv], pitch_mm, w)
    ov = _circular_mean([p[1] for p in uv], pitch_mm, w)
    c_, s_ = math.cos(math.radians(rot)), math.sin(math.radians(rot))
    phase = Lattice((ou * c_ - ov * s_, ou * s_ + ov * c_), pitch_mm, rot)
    cells = [phase.locate(c.center_mm)[0] for c in cards]
    shift: tuple[int, int] | None = None
    if expected:
        votes = Counter((ec[0] - cell[0], ec[1] - cell[1])
                        for card, cell in zip(cards, cells)
                        for ec, eid in expected.items() if eid == card.id)
        if votes:
            (si, sj), _ = votes.most_common(1)[0]
            shift = (-si, -sj)
    if shift is None:
        shift = (min(c[0] for c in cells), min(c[1] for c in cells))
    lat = phase.shifted(*shift)
    # chequerboard parity: which (i + j) parity holds the cards whose long side runs along j
    parity_votes = Counter(
        ((cell[0] - shift[0] + cell[1] - shift[1]) % 2) ^ (0 if lat.portrait(card.angle_deg) else 1)
        for card, cell in zip(cards, cells))
    parity = parity_votes.most_common(1)[0][0]
    return Lattice(lat.origin_mm, pitch_mm, rot, parity)


# ---------------------------------------------------------------------------- reading ---

@dataclass(frozen=True)
class SeenCard:
    """A card sighting and where it went: a cell, a zone, or nowhere (a stray card)."""

    id: str
    center_mm: tuple[float, float]
    angle_deg: float
    confidence: float
    cell: Cell | None = None
    zone: str | None = None
    off_mm: float = 0.0        # distance from the cell centre
    level: int | None = None   # stacking level when the record gives one
    read_as: str | None = None  # the camera's id when a user correction replaced it


@dataclass(frozen=True)
class SeenPyramid:
    """A pyramid sighting and where it went (``cell`` None: off the board, e.g. a stash)."""

    pyramid: Pyramid
    base_center_mm: tuple[float, float]
    pointing_deg: float | None
    confidence: float
    cell: Cell | None = None
    zone: str | None = None
    raw_cell: Cell | None = None  # the nearest cell even when off the board
    read_as: Pyramid | None = None  # the camera's reading when a user correction replaced it


@dataclass(frozen=True)
class TableReading:
    """What one observation says about the game, in lattice terms."""

    view: TableView
    trusted: bool
    reason: str = ""                       # why it is not trusted (hands, no calibration)
    cards: tuple[SeenCard, ...] = ()
    pyramids: tuple[SeenPyramid, ...] = ()
    covered: Mapping[Cell, tuple[str, ...]] = field(default_factory=dict)  # seen under the top
    stacks: Mapping[Cell, tuple[str, ...]] = field(default_factory=dict)   # bottom -> top
    discard_seen: tuple[str, ...] = ()     # ids in the discard zone, top first
    draw_pile: int = 0                     # cards seen in the draw zone
    off_board: tuple[SeenPyramid, ...] = ()
    strays: tuple[SeenCard, ...] = ()
    notes: tuple[str, ...] = ()            # warnings in plain words
    # the orders the pile may be in (top first, ``discard_seen`` first) where the camera
    # cannot tell: two cards or more new on it, with no level to say which covers which
    discard_orders: tuple[tuple[str, ...], ...] = ()

    def with_pile(self, order: tuple[str, ...]) -> "TableReading":
        """This reading with the discard pile in ``order`` (top first)."""
        return replace(self, view=replace(self.view, discard_top=order[0] if order else None),
                       discard_seen=order)

    def card_at(self, cell: Cell) -> SeenCard | None:
        """The top card sighting of a cell."""
        top = self.view.cards.get(cell)
        best = None
        for c in self.cards:
            if c.cell == cell and c.id == top:
                if best is None or c.confidence > best.confidence:
                    best = c
        return best


def observation_trust(obs: Observation) -> tuple[bool, str]:
    """Whether a record may be used: calibrated, no hand over the table, not marked untrusted,
    in colour (in a black-and-white picture every pyramid reads white: judged, each would be
    a pyramid gone)."""
    if not obs.calibrated:
        why = obs.extra.get("reason") or obs.extra.get("calibration_reason")
        return False, "the table was not located" + (f" ({why})" if why else "")
    if obs.extra.get("hands") is True:
        return False, "a hand is over the table"
    if obs.extra.get("trustworthy") is False:
        return False, "the camera marked this view untrustworthy"
    if obs.extra.get("greyscale") is True:
        return False, "the picture has no colour"
    return True, ""


def as_observation(record: Observation | Mapping[str, Any],
                   name: str = "observation") -> Observation:
    """An :class:`Observation` from a record dict (validated, errors name the field)."""
    if isinstance(record, Observation):
        return record
    return Observation.from_dict(dict(record), name)


class TableTracker:
    """Reads observations into :class:`TableReading` s, keeping the lattice and stack memory.

    ``mat`` is anything with a ``zones`` mapping of name -> (x0, y0, x1, y1) (a
    :class:`calibration.mat.Mat`); ``lattice`` fixes the lattice instead of learning it.
    """

    def __init__(self, mat: Any = None, *, card_size_mm: tuple[float, float] = TAROT_CARD_MM,
                 lattice: Lattice | None = None, snap_tolerance: float = SNAP_TOLERANCE) -> None:
        zones = getattr(mat, "zones", None) if mat is not None else None
        if zones is None and isinstance(mat, Mapping):
            zones = mat.get("zones")
        self.zones: dict[str, tuple[float, float, float, float]] = {
            str(k): (float(r[0]), float(r[1]), float(r[2]), float(r[3]))
            for k, r in (zones or {}).items()}
        self.card_size_mm = card_size_mm
        self.pitch_mm = (card_size_mm[0] + card_size_mm[1]) / 2.0
        self.lattice = lattice
        self.snap_tolerance = snap_tolerance
        self._stacks: dict[Cell, list[str]] = {}
        self._discard: list[str] = []
        #: where the discard pile was last seen, without a mat's zone for it
        self._pile_mm: tuple[float, float] | None = None
        self._card_fixes: dict[tuple[Cell | str, str], str] = {}
        self._pyramid_fixes: dict[tuple[Cell, Pyramid], tuple[Pyramid | None, Cell | None]] = {}

    # ------------------------------------------------------------------ lattice
    def learn(self, record: Observation | Mapping[str, Any],
              expected: Mapping[Cell, str] | None = None) -> Lattice:
        """Learn (and keep) the lattice from a layout; ``expected`` names the cells."""
        obs = as_observation(record)
        cards = [c for c in obs.cards if self.zone_of(c.center_mm) is None]
        if expected:
            # a known board (a game continued): its own cards say where the lattice lies,
            # not the piles or the hands beside it
            faces = {cid for cid in expected.values() if cid != BACK}
            own = [c for c in cards if c.id in faces]
            cards = own if len(own) >= 3 else cards
        lat = fit_lattice(cards, self.pitch_mm, expected)
        if not expected:
            # the board alone names the cells (its north-west card is 0,0): a pile or a card
            # put aside away from it (no mat's zone says where) must not
            cells = [lat.locate(c.center_mm)[0] for c in cards]
            board = _main_group(cells)
            main = [c for c, cell in zip(cards, cells) if cell in board]
            if len(main) < len(cards):
                lat = fit_lattice(main, self.pitch_mm)
        self.lattice = lat
        log.info("lattice learned: %s", self.lattice.to_dict())
        return self.lattice

    def refind(self, record: Observation | Mapping[str, Any], reading: "TableReading",
               known: Mapping[Cell, str]) -> "TableReading | None":
        """The board found again after the camera or the table moved under the lattice.

        ``reading`` is ``record`` read on the current lattice; ``known`` the game's top card
        of each territory. When the cards no longer lie where the lattice says (a camera
        nudged or turned, a table frame from a mat that slid, a new fit without a mat), the
        lattice is fitted again to the board's own cards (those whose face is a known top:
        the piles, the hands and stray cards lie any way), naming its cells after the known
        board (as when a recorded game is continued), and kept when it puts clearly more
        territories' cards on their cells, or as many but much closer to their centres.
        Returns the record read on it (the lattice is then replaced), or None."""
        if self.lattice is None or not reading.trusted or not known:
            return None

        def on_their_cells(r: TableReading) -> int:
            return sum(1 for cell, cid in known.items() if r.view.cards.get(cell) == cid)

        now = on_their_cells(reading)
        mean, rms = _offsets(reading, self.lattice)
        drifted = mean >= DRIFT_MM or rms >= DRIFT_RMS_MM
        if len(known) - now < REFIND_MISSES and not drifted:
            return None
        faces = {cid for cid in known.values() if cid != BACK}
        obs = as_observation(record)
        cards = [c for c in obs.cards if self.zone_of(c.center_mm) is None and c.id in faces]
        if len(cards) < 3:
            return None
        old = self.lattice
        # (a trial read must not prune the user's corrections: they stay if it is refused)
        fixes = dict(self._card_fixes), dict(self._pyramid_fixes)
        best: tuple[int, TableReading, Lattice] | None = None
        for turn in range(4):     # a frame without a mat may turn by quarters
            self.lattice = fit_lattice(cards, self.pitch_mm, known, turn)
            try:
                trial = self.read(obs)
            finally:
                candidate, self.lattice = self.lattice, old
            self._card_fixes, self._pyramid_fixes = dict(fixes[0]), dict(fixes[1])
            score = on_their_cells(trial)
            if best is None or score > best[0]:
                best = (score, trial, candidate)
            if score == len(known):
                break
        assert best is not None
        got, again, candidate = best
        closer = _offsets(again, candidate)[1] <= REFIND_CLOSER * rms
        if got < max(3, math.ceil(REFIND_SHARE * len(known))) or not (
                got >= now + 2 or (drifted and got >= now and closer)):
            self._card_fixes, self._pyramid_fixes = fixes
            return None
        self.lattice = candidate
        if self._pile_mm is not None:   # (the pile moved with the board)
            dx, dy = candidate.moved_from(old)
            self._pile_mm = (self._pile_mm[0] + dx, self._pile_mm[1] + dy)
        log.info("board found again: %s (was %s)", candidate.to_dict(), old.to_dict())
        return again

    def zone_of(self, point: Sequence[float]) -> str | None:
        x, y = float(point[0]), float(point[1])
        m = ZONE_MARGIN_MM
        for name, (x0, y0, x1, y1) in self.zones.items():
            if x0 - m <= x <= x1 + m and y0 - m <= y <= y1 + m:
                return name
        return None

    # ------------------------------------------------------------------ memory
    @property
    def stacks(self) -> dict[Cell, tuple[str, ...]]:
        """Remembered stacks, bottom to top, per cell."""
        return {c: tuple(s) for c, s in self._stacks.items()}

    @property
    def pile_top(self) -> str | None:
        """The remembered top of the discard pile (the game's, or the last trusted
        reading's after an unchanged table)."""
        return self._discard[-1] if self._discard else None

    def sync(self, stacks: Mapping[Cell, Sequence[str]], discard: Sequence[str] = ()) -> None:
        """Replace the memory with what the game knows (bottom to top; ``back`` face down)."""
        self._stacks = {c: list(s) for c, s in stacks.items() if s}
        self._discard = list(discard)

    def _pile_of(self, loose: list[SeenCard], draw_piles: list[tuple[float, float]]
                 ) -> tuple[list[SeenCard], list[SeenCard]]:
        """Face-up cards away from the board, with no mat's zone to say where the discard
        pile is: (those of the pile, the others). The cards are taken in heaps (cards
        lying within half a card's width of one another: a pile, a hand fanned out).

        * The pile is the heap where it was last seen (its middle within a card's length).
        * Not there: it moved, if a heap holds one of its last cards.
        * Else (none seen yet, the pile emptied into the draw pile, or moved as a card was
          played on it): a heap of one or two cards (a play, a wild pair), the one nearest
          the draw pile (a face-down card away from the board: players discard next to
          it), or the only heap there is.
        * Else none of them: a card laid aside, a hand laid down, must not name the card
          played."""
        if not loose:
            return [], []
        reach = max(self.card_size_mm)
        heaps = _heaps(loose, min(self.card_size_mm) / 2.0)

        def middle(heap: list[SeenCard]) -> tuple[float, float]:
            return _middle([sc.center_mm for sc in heap])

        def dist(a: tuple[float, float], b: tuple[float, float]) -> float:
            return math.hypot(a[0] - b[0], a[1] - b[1])

        def split(heap: list[SeenCard]) -> tuple[list[SeenCard], list[SeenCard]]:
            return heap, [sc for sc in loose if sc not in heap]

        if self._pile_mm is not None:
            pile_mm = self._pile_mm
            there = min(heaps, key=lambda h: dist(middle(h), pile_mm))
            if dist(middle(there), pile_mm) <= reach:
                return split(there)
            last = set(self._discard[-3:])
            moved = [h for h in heaps if any(sc.id in last for sc in h)]
            if len(moved) == 1:
                return split(moved[0])
        # (a pile moved as a card was played on it shows only the new card: it is found as
        # a new pile is)
        small = [h for h in heaps if len(h) <= 2]
        if draw_piles:
            def to_draw(h: list[SeenCard]) -> float:
                return min(dist(middle(h), d) for d in draw_piles)

            beside = [h for h in small if to_draw(h) <= 2 * reach]
            if beside:
                return split(min(beside, key=to_draw))
        if len(small) == 1 and len(heaps) == 1:
            return split(small[0])
        return [], loose

    def remember(self, reading: TableReading) -> None:
        """Take a trusted reading's stacks and discard pile as the new memory."""
        if not reading.trusted:
            return
        self._stacks = {c: list(s) for c, s in reading.stacks.items()}
        if DISCARD_ZONE not in self.zones:
            pile = [c.center_mm for c in reading.cards if c.zone == DISCARD_ZONE]
            if pile:
                self._pile_mm = _middle(pile)
        seen = list(reversed(reading.discard_seen))
        if reading.view.discard_top is None:
            self._discard = []
        elif reading.view.discard_top in self._discard:
            k = self._discard.index(reading.view.discard_top)
            self._discard = self._discard[:k + 1]
        else:
            self._discard = [c for c in self._discard if c not in seen] + seen

    # ------------------------------------------------------------------ corrections
    def correct_card(self, where: Cell | str, seen: str, actual: str) -> None:
        """Read ``actual`` wherever the camera reads ``seen`` at ``where`` (a cell or "discard")."""
        self._card_fixes[(where, seen)] = actual

    def card_fixes_renamed(self, where: Cell, was: str, actual: str) -> list[str]:
        """The card corrections at ``where`` that read a card as ``was`` (the unnamed card
        "?" the players said lies there) read ``actual`` from now on (the name they gave
        it); what the camera reads there in each, sorted."""
        seen = sorted(s for (w, s), a in self._card_fixes.items() if w == where and a == was)
        for s in seen:
            self._card_fixes[(where, s)] = actual
        return seen

    def correct_pyramid(self, cell: Cell, seen: Pyramid, actual: Pyramid | None,
                        actual_cell: Cell | None = None) -> None:
        """Read ``actual`` (None: nothing) for the pyramid read as ``seen`` at ``cell``."""
        self._pyramid_fixes[(cell, seen)] = (actual, actual_cell)

    def clear_corrections(self) -> None:
        self._card_fixes.clear()
        self._pyramid_fixes.clear()

    @property
    def corrections(self) -> int:
        return len(self._card_fixes) + len(self._pyramid_fixes)

    def _on_discard(self, sc: SeenCard) -> SeenCard:
        """A card seen on the discard pile, with the user's correction of its reading."""
        fixed = self._card_fixes.get((DISCARD_ZONE, sc.id))
        return sc if fixed is None else replace(sc, id=fixed, read_as=sc.id)

    # ------------------------------------------------------------------ reading
    def read(self, record: Observation | Mapping[str, Any], *,
             expected: Mapping[Cell, str] | None = None) -> TableReading:
        """One observation as the engine's :class:`TableView` plus what went where.

        The lattice is learned from the first trusted observation with cards (``expected``
        names its cells when the board is known). An untrusted record (hands, no calibration)
        is still read, with ``trusted`` False and the reason; it never teaches the lattice.
        """
        obs = as_observation(record)
        trusted, reason = observation_trust(obs)
        if self.lattice is None:
            if not trusted or not any(self.zone_of(c.center_mm) is None for c in obs.cards):
                return TableReading(TableView({}, {}, None), trusted, reason,
                                    notes=("no cards on the table yet",) if trusted else ())
            self.learn(obs, expected)
        lat = self.lattice
        assert lat is not None
        notes: list[str] = []
        tol = self.snap_tolerance * lat.pitch_mm

        # before the deal nothing is remembered: the board is the largest group of cards
        # lying together on the lattice, and a card away from it is a pile or put aside
        board = set(self._stacks) or _main_group(
            cell for c in obs.cards if self.zone_of(c.center_mm) is None
            for cell, off in [lat.locate(c.center_mm)] if off <= tol)

        # ---- cards: zones, cells, strays
        by_cell: dict[Cell, list[SeenCard]] = {}
        discard: list[SeenCard] = []
        draw = 0
        strays: list[SeenCard] = []
        all_cards: list[SeenCard] = []
        loose: list[SeenCard] = []      # face-up cards away from the board, with no zones
        for c in obs.cards:
            level = c.extra.get("level")
            lvl = (int(level) if isinstance(level, (int, float)) and not isinstance(level, bool)
                   else None)
            zone = self.zone_of(c.center_mm)
            if zone is not None:
                sc = SeenCard(c.id, c.center_mm, c.angle_deg, c.confidence, None, zone, 0.0, lvl)
                if zone == DISCARD_ZONE and c.id == BACK:
                    # the pile is face up: a face-down card there (the draw pile slid onto
                    # the zone, a card dropped) is not the card played
                    sc = replace(sc, zone=None)
                    strays.append(sc)
                    notes.append("a face-down card lies on the discard pile's zone: not "
                                 "taken as the card played")
                elif zone == DISCARD_ZONE:
                    sc = self._on_discard(sc)
                    discard.append(sc)
                elif zone == DRAW_ZONE:
                    draw += 1
                all_cards.append(sc)
                continue
            cell, off = lat.locate(c.center_mm)
            # two cells or more from every territory: no move puts a card there (a build
            # goes next to the board). A pile or a card put aside: not part of the board.
            # Where no mat's zone says where the discard pile is (no mat), a face-up card
            # there is taken for it: it names the card a player plays from the hand (the
            # pile lies where the players put it, on the lattice or not)
            away = bool(board) and not any(
                max(abs(cell[0] - i), abs(cell[1] - j)) <= 1 for i, j in board)
            if away and DISCARD_ZONE not in self.zones and c.id != BACK:
                loose.append(SeenCard(c.id, c.center_mm, c.angle_deg, c.confidence, None,
                                      None, off, lvl))
                continue
            if off > tol or away:
                sc = SeenCard(c.id, c.center_mm, c.angle_deg, c.confidence, None, None, off, lvl)
                strays.append(sc)
                all_cards.append(sc)
                notes.append(f"a card ({c.id}) lies off the lattice, {off:.0f} mm from cell "
                             f"{format_cell(cell)}" if off > tol else
                             f"a card ({c.id}) lies away from the board, at "
                             f"{format_cell(cell)}: not taken as part of it")
                continue
            cid, read_as = c.id, None
            fixed = self._card_fixes.get((cell, c.id))
            if fixed is not None:
                cid, read_as = fixed, c.id
            sc = SeenCard(cid, c.center_mm, c.angle_deg, c.confidence, cell, None, off, lvl,
                          read_as)
            if lat.portrait(c.angle_deg) != lat.expects_portrait(cell):
                notes.append(f"the card at {format_cell(cell)} ({cid}) lies across the "
                             "chequerboard orientation")
            by_cell.setdefault(cell, []).append(sc)
            all_cards.append(sc)

        cards: dict[Cell, str] = {}
        covered: dict[Cell, tuple[str, ...]] = {}
        stacks: dict[Cell, tuple[str, ...]] = {}
        for cell, seen in by_cell.items():
            order = self._stack_order(cell, seen)
            top = order[-1]
            cards[cell] = top
            covered[cell] = tuple(order[:-1])
            stacks[cell] = self._stack_after(cell, order)
        pile, aside = self._pile_of(loose, [sc.center_mm for sc in strays if sc.id == BACK])
        for sc in pile:
            sc = self._on_discard(replace(sc, zone=DISCARD_ZONE, off_mm=0.0))
            discard.append(sc)
            all_cards.append(sc)
        for sc in aside:
            strays.append(sc)
            all_cards.append(sc)
            notes.append(f"a card ({sc.id}) lies away from the board and from the discard "
                         "pile: not taken as part of either")
        discard_order, discard_orders = self._discard_order(discard)
        discard_top = discard_order[0] if discard_order else None

        # ---- pyramids
        placed: dict[Cell, list[Pyramid]] = {}
        pyramids: list[SeenPyramid] = []
        off_board: list[SeenPyramid] = []
        live_fixes: set[tuple[Cell, Pyramid]] = set()
        for p in obs.pyramids:
            try:
                color = Color.parse(p.color)
            except CompanionError:
                notes.append(f"a pyramid of unknown colour {p.color!r} is ignored")
                continue
            pyr = Pyramid(color, p.pips, lat.pose(p.upright, p.pointing_deg))
            zone = self.zone_of(p.base_center_mm)
            cell, _ = lat.locate(p.base_center_mm)
            pyr_read_as: Pyramid | None = None
            key = (cell, pyr)
            target_cell: Cell | None = cell
            if key in self._pyramid_fixes:
                live_fixes.add(key)
                actual, actual_cell = self._pyramid_fixes[key]
                pyr_read_as = pyr
                if actual is None:
                    continue
                pyr = actual
                target_cell = actual_cell if actual_cell is not None else cell
            on_map = target_cell is not None and (
                target_cell in cards or any(n in cards for n in neighbours(target_cell)))
            if zone is not None or not on_map:
                sp = SeenPyramid(pyr, p.base_center_mm, p.pointing_deg, p.confidence, None, zone,
                                 cell, pyr_read_as)
                off_board.append(sp)
                pyramids.append(sp)
                continue
            assert target_cell is not None
            sp = SeenPyramid(pyr, p.base_center_mm, p.pointing_deg, p.confidence, target_cell,
                             None, cell, pyr_read_as)
            placed.setdefault(target_cell, []).append(pyr)
            pyramids.append(sp)
        if trusted:
            # a correction lasts while the camera keeps reading the piece the same way
            self._pyramid_fixes = {k: v for k, v in self._pyramid_fixes.items() if k in live_fixes}
            self._card_fixes = {
                (w, s): a for (w, s), a in self._card_fixes.items()
                if (w == DISCARD_ZONE and any(c.read_as == s for c in discard))
                or (w != DISCARD_ZONE and any(c.read_as == s and c.cell == w
                                               for c in all_cards))}
        view = TableView(cards, {c: tuple(sorted(ps)) for c, ps in placed.items()}, discard_top)
        return TableReading(view, trusted, reason, tuple(all_cards), tuple(pyramids), covered,
                            stacks, tuple(discard_order), draw, tuple(off_board), tuple(strays),
                            tuple(notes), discard_orders)

    def _stack_order(self, cell: Cell, seen: list[SeenCard]) -> list[str]:
        """The ids seen in one cell, bottom to top."""
        if len(seen) == 1:
            return [seen[0].id]
        memory = self._stacks.get(cell, [])

        def key(c: SeenCard) -> tuple[int, int, float]:
            if c.level is not None:
                return (2, c.level, c.confidence)
            if c.id not in memory:
                return (1, 0, c.confidence)  # a card not there before was put on top
            return (0, memory.index(c.id), c.confidence)

        ids: list[str] = []
        for c in sorted(seen, key=key):
            if c.id not in ids:
                ids.append(c.id)
        return ids

    def _stack_after(self, cell: Cell, order: list[str]) -> tuple[str, ...]:
        """The remembered stack of a cell once this reading is taken as true."""
        memory = list(self._stacks.get(cell, []))
        top = order[-1]
        if top in memory:
            # the cards above it were taken away
            memory = memory[:memory.index(top) + 1]
        else:
            for cid in order[:-1]:
                if cid not in memory:
                    memory.append(cid)
            memory.append(top)
        return tuple(memory)

    def _discard_order(self, discard: list[SeenCard]
                       ) -> tuple[list[str], tuple[tuple[str, ...], ...]]:
        """Ids in the discard zone, top first; and, where cards new on the pile have no level
        to order them (their confidence says nothing of which covers which), every order
        they may lie in, that one first (else none)."""
        if not discard:
            return [], ()

        def key(c: SeenCard) -> tuple[int, int, float]:
            if c.level is not None:
                return (2, c.level, c.confidence)
            if c.id not in self._discard:
                return (1, 0, c.confidence)
            return (0, self._discard.index(c.id), c.confidence)

        out: list[str] = []
        for c in sorted(discard, key=key, reverse=True):
            if c.id not in out:
                out.append(c.id)
        unsure = [cid for cid in out if any(
            c.id == cid and c.level is None and cid not in self._discard for c in discard)]
        if len(unsure) < 2:
            return out, ()
        at = [out.index(cid) for cid in unsure]
        # (all orders of up to three: three moves seen at once at most; more, each on top)
        ways = (list(permutations(unsure)) if len(unsure) <= PILE_ORDERS_OF else
                [tuple([u] + [v for v in unsure if v != u]) for u in unsure])
        orders: list[tuple[str, ...]] = []
        for way in ways:
            order = list(out)
            for k, cid in zip(at, way):
                order[k] = cid
            orders.append(tuple(order))
        return out, tuple(orders)


def stacks_of(state: Any) -> dict[Cell, tuple[str, ...]]:
    """A Zarcana state's stacks as the camera would name them (face down: ``back``)."""
    return {cell: tuple(cid if up else BACK for cid, up in stack)
            for cell, stack in state.board.items()}


__all__ = ["DISCARD_ZONE", "DRAW_ZONE", "Lattice", "SeenCard", "SeenPyramid", "TAROT_CARD_MM",
           "TableReading", "TableStateError", "TableTracker", "as_observation", "fit_lattice",
           "observation_trust", "stacks_of"]
