"""What the renderer draws: a :class:`TableScene` of cards and pyramids in table millimetres.

Table frame (shared/spec/table.md): x east, y south, millimetres, origin at marker 0;
angles in degrees, 0 = east, 90 = south. Heights are millimetres *up* from the table.

* :class:`CardPlacement`: a card lying flat. ``angle_deg`` points from its centre toward the
  top edge of its art. ``level`` is its place in a stack (0 = on the table); the card's face
  is at ``height_mm`` above the table.
* :class:`PyramidPlacement`: a pyramid standing on the table or on a card stack at
  ``rest_height_mm``; ``base_center_mm`` is the centre of its base (upright) or the centroid
  of the face it lies on (lying), ``pointing_deg`` the apex direction (``None`` upright),
  ``yaw_deg`` the turn of an upright pyramid's base square.

:func:`scene_from_lattice` builds a scene from a Zarcana lattice layout: cell -> cards
(bottom to top) and cell -> pyramids, with the chequerboard orientation and optional
hand-placed slop.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from companion.core.pieces import Color, Pose, Pyramid
from vision.synth.errors import SceneError

#: Looney pyramid sizes (spec): pips -> (base side mm, apex height mm).
PYRAMID_SIZES_MM: dict[int, tuple[float, float]] = {1: (14.3, 25.4), 2: (19.8, 34.9),
                                                    3: (25.4, 44.5)}
CARD_THICKNESS_MM = 0.35
COLORS = tuple(c.value for c in Color)

Cell = tuple[int, int]


@dataclass
class CardPlacement:
    id: str                      # card id, or "back" art forced by face_up=False
    center_mm: tuple[float, float]
    angle_deg: float
    face_up: bool = True
    level: int = 0               # 0 = lies on the table
    cell: Cell | None = None
    group: str | None = None     # "lattice", "draw", "discard", "row:<player>", ...
    stack_size: int = 1          # cards in the stack/pile this one belongs to

    @property
    def height_mm(self) -> float:
        return (self.level + 1) * CARD_THICKNESS_MM

    @property
    def shown_id(self) -> str:
        """What the camera can read: the id when face up, ``back`` when face down."""
        return self.id if self.face_up else "back"


@dataclass
class PyramidPlacement:
    color: str
    pips: int
    upright: bool
    base_center_mm: tuple[float, float]
    pointing_deg: float | None = None
    rest_height_mm: float = 0.0
    yaw_deg: float = 0.0
    cell: Cell | None = None

    def __post_init__(self) -> None:
        if self.color not in COLORS:
            raise SceneError(f"unknown pyramid colour {self.color!r}: expected one of "
                             f"{', '.join(COLORS)}")
        if self.pips not in PYRAMID_SIZES_MM:
            raise SceneError(f"pyramid pips must be 1, 2 or 3, got {self.pips!r}")
        if self.upright:
            self.pointing_deg = None
        elif self.pointing_deg is None:
            raise SceneError("a lying pyramid needs pointing_deg")

    @property
    def size_mm(self) -> tuple[float, float]:
        return PYRAMID_SIZES_MM[self.pips]


@dataclass
class TableScene:
    """Cards (drawn in list order within a level) and pyramids on one table."""

    cards: list[CardPlacement] = field(default_factory=list)
    pyramids: list[PyramidPlacement] = field(default_factory=list)
    card_size_mm: tuple[float, float] = (70.0, 120.0)
    lattice_origin_mm: tuple[float, float] | None = None
    lattice_pitch_mm: float | None = None
    game: str = "free"
    state: Any = None            # the game state it came from (JSON-able), if any

    def validate(self, deck: Any) -> None:
        for c in self.cards:
            if c.face_up:
                deck.check_id(c.id)
            elif c.id != "back":
                deck.check_id(c.id)


# ---------------------------------------------------------------------------------------------
# Zarcana lattice


def lattice_angle(cell: Cell) -> float:
    """Chequerboard convention: (i + j) even -> long side north-south, art top north (270);
    odd -> long side east-west, art top east (0)."""
    return 270.0 if (cell[0] + cell[1]) % 2 == 0 else 0.0


def cell_center(cell: Cell, origin: tuple[float, float], pitch: float) -> tuple[float, float]:
    return (origin[0] + cell[0] * pitch, origin[1] + cell[1] * pitch)


def lying_extent_mm(pips: int) -> float:
    """Length of a lying pyramid along its pointing direction (base edge to apex)."""
    b, h = PYRAMID_SIZES_MM[pips]
    return math.hypot(h, b / 2.0)


CardEntry = str | tuple[str, bool]  # id, or (id, face_up)
PyramidEntry = Pyramid | str | tuple[Any, ...]


def _parse_card_entry(e: Any) -> tuple[str, bool | None]:
    if isinstance(e, str):
        return e, None
    if isinstance(e, (tuple, list)) and len(e) == 2 and isinstance(e[0], str):
        return e[0], bool(e[1])
    if isinstance(e, Mapping) and "id" in e:
        return str(e["id"]), (None if "face_up" not in e else bool(e["face_up"]))
    raise SceneError(f"bad card entry {e!r}: expected an id or (id, face_up)")


def _parse_pyramid(e: Any) -> Pyramid:
    from companion.core.pieces import parse_pyramid

    if isinstance(e, Pyramid):
        return e
    if isinstance(e, str):
        return parse_pyramid(e)
    if isinstance(e, (tuple, list)) and len(e) == 3:
        color = e[0] if isinstance(e[0], Color) else Color.parse(str(e[0]))
        pose = e[2] if isinstance(e[2], Pose) else Pose(str(e[2]))
        return Pyramid(color, int(e[1]), pose)
    raise SceneError(f"bad pyramid entry {e!r}: expected a Pyramid, 'red2U' or "
                     "(colour, pips, pose)")


def _rot(v: tuple[float, float], deg: float) -> tuple[float, float]:
    a = math.radians(deg)
    c, s = math.cos(a), math.sin(a)
    return (v[0] * c - v[1] * s, v[0] * s + v[1] * c)


def scene_from_lattice(
    cards: Mapping[Cell, Sequence[Any]],
    pyramids: Mapping[Cell, Sequence[Any]] | None = None,
    *,
    card_size_mm: tuple[float, float] = (70.0, 120.0),
    origin_mm: tuple[float, float] | None = None,
    center_on: tuple[float, float] = (450.0, 300.0),
    rng: Any = None,
    slop_mm: float = 2.5,
    slop_deg: float = 2.5,
    flip: Mapping[Cell, bool] | None = None,
    pointing_jitter_deg: float = 6.0,
    slop_seed: int | None = None,
) -> TableScene:
    """Build a scene from a lattice layout.

    ``cards``: cell -> card entries bottom to top; an entry is an id (face up) or
    ``(id, face_up)``. ``pyramids``: cell -> pyramids (``Pyramid``, ``"red2U"`` or
    ``(colour, pips, pose)``); lying ones point along their lattice direction. ``flip``
    marks cells whose top card is turned 180 degrees. With ``rng`` (a numpy Generator) cards
    and pyramids get hand-placed slop; without it the layout is exact. With ``slop_seed``
    each card's slop depends only on that seed, its cell, level and id (and each cell's
    pyramid spread on the cell and its pyramids), so a game's frames keep unchanged pieces
    exactly where they were.
    Pyramids in one cell are spread so that they do not overlap.
    """
    pyramids = pyramids or {}
    w, h = card_size_mm
    pitch = (w + h) / 2.0
    all_cells = list(cards) + [c for c in pyramids if c not in cards]
    if not all_cells:
        return TableScene(card_size_mm=card_size_mm, lattice_pitch_mm=pitch,
                          lattice_origin_mm=origin_mm or center_on, game="zarcana")
    if origin_mm is None:
        ci = (min(c[0] for c in all_cells) + max(c[0] for c in all_cells)) / 2.0
        cj = (min(c[1] for c in all_cells) + max(c[1] for c in all_cells)) / 2.0
        origin_mm = (center_on[0] - ci * pitch, center_on[1] - cj * pitch)

    import zlib

    import numpy as np

    def local(*key: Any) -> Any:
        if slop_seed is None:
            return rng
        return np.random.default_rng([int(slop_seed)] + [int(k) + 100000 for k in key])

    cur = [rng]

    def jitter(scale: float) -> float:
        r = cur[0]
        return 0.0 if r is None or scale == 0 else float(r.normal(0.0, scale / 2.0))

    scene = TableScene(card_size_mm=card_size_mm, lattice_origin_mm=origin_mm,
                       lattice_pitch_mm=pitch, game="zarcana")
    stack_height: dict[Cell, float] = {}
    for cell in sorted(cards):
        entries = [_parse_card_entry(e) for e in cards[cell]]
        cx, cy = cell_center(cell, origin_mm, pitch)
        base = lattice_angle(cell) + (180.0 if flip and flip.get(cell) else 0.0)
        n = len(entries)
        for level, (cid, face_up) in enumerate(entries):
            cur[0] = local(cell[0], cell[1], level, zlib.crc32(cid.encode()))
            up = face_up if face_up is not None else True
            if cid == "back":
                up = False
            scene.cards.append(CardPlacement(
                id=cid, center_mm=(cx + jitter(slop_mm), cy + jitter(slop_mm)),
                angle_deg=(base + jitter(slop_deg)) % 360.0, face_up=up, level=level,
                cell=cell, group="lattice", stack_size=n))
        stack_height[cell] = n * CARD_THICKNESS_MM
    for cell in sorted(pyramids):
        pyrs = [_parse_pyramid(p) for p in pyramids[cell]]
        cx, cy = cell_center(cell, origin_mm, pitch)
        on_card = cell in cards and len(cards[cell]) > 0
        cur[0] = local(cell[0], cell[1], zlib.crc32(" ".join(str(p) for p in pyrs).encode()))
        offsets = _spread(pyrs, cur[0])
        for p, off in zip(pyrs, offsets):
            pdeg = p.pose.degrees
            if pdeg is not None:
                pdeg = (pdeg + jitter(pointing_jitter_deg)) % 360.0
            yaw = float(cur[0].uniform(0, 90)) if cur[0] is not None else 0.0
            scene.pyramids.append(PyramidPlacement(
                color=p.color.value, pips=p.size, upright=p.pose.upright,
                base_center_mm=(cx + off[0], cy + off[1]), pointing_deg=pdeg,
                rest_height_mm=stack_height.get(cell, 0.0) if on_card else 0.0,
                yaw_deg=yaw, cell=cell))
    return scene


def _footprint_circles(p: Pyramid, center: tuple[float, float],
                       pdeg: float | None) -> list[tuple[float, float, float]]:
    b, h = PYRAMID_SIZES_MM[p.size]
    if pdeg is None:
        return [(center[0], center[1], b * 0.71)]
    # lying: the contact face runs from the base edge (behind the centroid) to the apex
    L = lying_extent_mm(p.size)
    d = (math.cos(math.radians(pdeg)), math.sin(math.radians(pdeg)))
    out = []
    for t in (-L / 3.0 - 2.0, -L / 9.0, L / 3.0, 2 * L / 3.0 - 3.0):
        r = b * 0.55 if t < L / 3.0 else b * 0.32
        out.append((center[0] + d[0] * t, center[1] + d[1] * t, r))
    return out


def _overlaps(a: list[tuple[float, float, float]], b: list[tuple[float, float, float]]) -> bool:
    return any(math.hypot(x1 - x2, y1 - y2) < r1 + r2 for x1, y1, r1 in a for x2, y2, r2 in b)


def _spread(pyrs: Sequence[Pyramid], rng: Any) -> list[tuple[float, float]]:
    """Offsets from the cell centre so that pyramids in one cell do not overlap."""
    if not pyrs:
        return []
    if len(pyrs) == 1 and rng is None:
        p = pyrs[0]
        if p.pose.upright:
            return [(0.0, 0.0)]
        d = p.pose.degrees or 0.0
        back = -lying_extent_mm(p.size) / 6.0  # centre the whole solid on the cell
        return [(_rot((back, 0.0), d))]
    # deterministic ring positions, shuffled a little by rng
    placed: list[list[tuple[float, float, float]]] = []
    out: list[tuple[float, float]] = []
    for k, p in enumerate(pyrs):
        pdeg = p.pose.degrees
        best = None
        for attempt in range(60):
            if rng is not None:
                r = float(rng.uniform(0, 26 + attempt * 0.3))
                a = float(rng.uniform(0, 360))
            else:
                r = 0.0 if k == 0 and attempt == 0 else 14.0 + attempt * 1.5
                a = 120.0 * k + 37.0 * attempt
            off = _rot((r, 0.0), a)
            circ = _footprint_circles(p, off, pdeg)
            if not any(_overlaps(circ, q) for q in placed):
                best = (off, circ)
                break
        if best is None:
            off = _rot((30.0 + 10 * k, 0.0), 120.0 * k)
            best = (off, _footprint_circles(p, off, pdeg))
        placed.append(best[1])
        out.append(best[0])
    return out


def iter_cells(layout: Mapping[Cell, Any]) -> Iterable[Cell]:
    return sorted(layout)
