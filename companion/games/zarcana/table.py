"""What a camera can see of a Zarcana game, and which move explains a change of it.

The camera sees the top card of every lattice cell (a face-down card as ``back``), the
pyramids on each cell and the top card of the discard pile; it never sees hands or the
draw pile. :func:`game_from_table` starts a game from a table seen at setup with every
hidden card unknown; :func:`explain` answers "which legal move turns this state into what
the camera sees now?" and, when none does, which rules the nearest explanation breaks.
"""

from __future__ import annotations

import itertools
import time
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from companion.core.cards import BACK, card_info
from companion.core.errors import CompanionError
from companion.core.pieces import Cell, Color, Minion, Pose, Pyramid, format_cell
from companion.core.verdict import Verdict
from companion.games.zarcana.engine import ZarcanaState, _Found, covered_at_once, position
from companion.games.zarcana.moves import (
    UNKNOWN,
    Action,
    Build,
    Draw,
    Move,
    Reorient,
    Source,
    Start,
    Turn,
)
from companion.games.zarcana.rules import Edition, Settings
from companion.games.zarcana.state import ExtraOption, FoolDraw, FoolPlay, Layer, with_names


@dataclass(frozen=True)
class TableView:
    """The visible table: top card per cell, pyramids per cell, top of the discard pile."""

    cards: Mapping[Cell, str]
    pyramids: Mapping[Cell, tuple[Pyramid, ...]]
    discard_top: str | None = None

    @classmethod
    def of(cls, state: ZarcanaState) -> "TableView":
        cards = {c: (s[-1][0] if s[-1][1] else BACK) for c, s in state.board.items()}
        pyr = {c: tuple(sorted(ps)) for c, ps in state.pieces.items() if ps}
        return cls(cards, pyr, state.discard_top())

    def normalised(self) -> tuple[tuple[tuple[Cell, str], ...], tuple[tuple[Cell, tuple[Pyramid, ...]], ...], str | None]:
        cards = tuple(sorted(self.cards.items()))
        pyr = tuple(sorted((c, tuple(sorted(ps))) for c, ps in self.pyramids.items() if ps))
        return cards, pyr, self.discard_top

    def same_as(self, other: "TableView", *, with_discard: bool = True) -> bool:
        a, b = self.normalised(), other.normalised()
        if with_discard:
            return a == b
        return a[:2] == b[:2]


@dataclass(frozen=True)
class Change:
    """One difference between two views, in plain words."""

    cell: Cell | None
    what: str

    def __str__(self) -> str:
        return self.what if self.cell is None else f"{format_cell(self.cell)}: {self.what}"


def diff(before: TableView, after: TableView) -> list[Change]:
    out: list[Change] = []
    for cell in sorted(set(before.cards) | set(after.cards)):
        a, b = before.cards.get(cell), after.cards.get(cell)
        if a != b:
            if a is None:
                out.append(Change(cell, f"new card {b}"))
            elif b is None:
                out.append(Change(cell, f"card {a} removed"))
            else:
                out.append(Change(cell, f"card {a} became {b}"))
    for cell in sorted(set(before.pyramids) | set(after.pyramids)):
        a_ps = Counter(before.pyramids.get(cell, ()))
        b_ps = Counter(after.pyramids.get(cell, ()))
        gone, came = a_ps - b_ps, b_ps - a_ps
        for p in sorted(gone.elements()):
            out.append(Change(cell, f"{p.describe()} left"))
        for p in sorted(came.elements()):
            out.append(Change(cell, f"{p.describe()} arrived"))
    if before.discard_top != after.discard_top:
        out.append(Change(None, f"discard pile now shows {after.discard_top or 'nothing'}"))
    return out


@dataclass(frozen=True)
class Explanation:
    """Legal moves that explain a change, or the nearest illegal ones with their verdicts."""

    changes: tuple[Change, ...]
    moves: tuple[Move, ...] = ()
    illegal: tuple[Verdict, ...] = ()
    states: tuple[ZarcanaState, ...] = field(default=(), repr=False)
    #: (position explained, state after a move, that position with the face-down card the
    #: move destroyed named from the discard pile): :meth:`named_before`
    named: tuple[tuple[ZarcanaState, ZarcanaState, ZarcanaState], ...] = \
        field(default=(), repr=False, compare=False)

    @property
    def explained(self) -> bool:
        return bool(self.moves)

    def named_before(self, before: ZarcanaState | None,
                     after: ZarcanaState) -> ZarcanaState | None:
        """``before`` with the face-down card named that the move giving ``after`` (one of
        :attr:`states`) destroyed, where the card was read off the discard pile
        (:func:`face_down_named`); None where it was not, or ``before`` is not the position
        explained (the very objects: a name found once is not searched for again)."""
        return next((n for b, a, n in self.named if b is before and a is after), None)

    @property
    def unchanged(self) -> bool:
        return not self.changes

    def describe(self) -> str:
        if self.unchanged:
            return "nothing changed"
        if self.moves:
            return "explained by: " + " | ".join(str(m) for m in self.moves)
        if self.illegal:
            return "illegal:\n" + "\n".join(v.explain() for v in self.illegal)
        return "no move explains: " + "; ".join(str(c) for c in self.changes)


class TableError(CompanionError, ValueError):
    """A table observation that cannot start or continue a game."""


def game_from_table(players: Sequence[Color | str], cards: Mapping[Cell, str], *,
                    edition: Edition | str | None = None, settings: Settings | None = None,
                    hand_size: int = 3, current: int = 0, **overrides: Any) -> ZarcanaState:
    """A game as the camera first sees it: the dealt board, every hidden card unknown."""
    for cell, card in cards.items():
        if card == BACK:
            raise TableError(f"the starting board has a face-down card at {format_cell(cell)}")
        try:
            card_info(card)
        except ValueError as exc:
            raise TableError(f"starting board at {format_cell(cell)}: {exc}") from None
    if len(set(cards.values())) != len(cards):
        dup = [c for c, n in Counter(cards.values()).items() if n > 1]
        raise TableError(f"the same card lies twice on the starting board: {', '.join(dup)}")
    # (the hands dealt are the settings' hand size, so a recorded game says what was dealt)
    st = position(players, edition=edition, settings=settings,
                  board={format_cell(c): card for c, card in cards.items()},
                  hands={}, deck=[], current=current, hand_size=hand_size, **overrides)
    deck = set(st.full_deck())
    foreign = sorted(c for c in cards.values() if c not in deck)
    if foreign:
        raise TableError(f"{', '.join(foreign)} on the starting board, but this game's deck "
                         "has no such card (played without the trumps?)")
    # (a card already face up on the discard pile is no more hidden than the board's)
    hidden = len(st.full_deck()) - len(cards) - len(st.discard)
    box = st.settings.box_amount
    dealt = hand_size * len(st.all_colors)
    if hidden - dealt - box < 0:
        raise TableError(f"not enough cards for the hands and the box: {hidden} unseen, "
                         f"{dealt} for the hands and {box} for the box")
    for c in st.all_colors:
        st.hands[c] = (UNKNOWN,) * hand_size
    st.box = (UNKNOWN,) * box
    st.deck = (UNKNOWN,) * (hidden - dealt - box)
    return st


# ------------------------------------------------------------------ explanations ---

def fill_builds(move: Move, seen: TableView, state: ZarcanaState) -> Move:
    """Name the card each build from the draw pile put down, read from the table, ``move``
    being made in ``state``; the live referee's misread search names them the same way. A
    build the same move covers (the Alchemist's first) is not seen: it is the top card of
    the draw pile where the game knows the pile's order (a game started from a known
    position), else left unnamed ("?")."""
    if not isinstance(move, Action):
        return move
    steps = []
    changed = False
    for i, s in enumerate(move.steps):
        if isinstance(s, Build) and not s.from_hand and s.card is None:
            covered = covered_at_once(move.power, i, move.steps)
            card = state.next_drawn() if covered else seen.cards.get(s.cell)
            s = replace(s, card=UNKNOWN if card in (None, BACK) else card)
            changed = True
        steps.append(s)
    return replace(move, steps=tuple(steps)) if changed else move


def _reorients_from_diff(state: ZarcanaState, seen: TableView, *, own_only: bool = False,
                         short: int = 0) -> Iterator[Move]:
    """A REORIENT is read straight off the table: same cells and sizes, new poses.

    ``own_only``: only the mover's own pyramids, and a cell whose change is no reorient is
    passed over (another move changed the table too: a picture missed between them).
    ``short``: up to this many of the game's pyramids may be missing from ``seen`` (hidden,
    or missed by the camera): a reorient for each way of telling which ones those are."""
    who = state.to_move
    if who is None:
        return
    ways: list[list[tuple[tuple[Turn, ...], int]]] = []
    for cell in sorted(set(state.pieces) | set(seen.pyramids)):
        before = Counter(p for p in state.pieces.get(cell, ()) if not own_only or p.color is who)
        after = Counter(p for p in seen.pyramids.get(cell, ()) if not own_only or p.color is who)
        here = _cell_turns(cell, before - after, after - before, short)
        if not here:
            if own_only:
                continue
            return
        ways.append(here)
    done: set[tuple[Turn, ...]] = set()
    for way in itertools.product(*ways):
        if sum(n for _, n in way) > short:
            continue
        turns = tuple(sorted(t for ts, _ in way for t in ts))
        if turns and turns not in done:
            done.add(turns)
            yield Reorient(who, turns)


def _cell_turns(cell: Cell, gone: Counter[Pyramid], came: Counter[Pyramid], short: int
                ) -> list[tuple[tuple[Turn, ...], int]]:
    """The ways one cell's change reads as turns of its pyramids, each with how many of
    the pyramids gone are not seen (at most ``short``); none: no reorient changes it so."""
    per_kind: list[list[tuple[tuple[Turn, ...], int]]] = []
    for kind in sorted({(p.color.value, p.size) for p in gone + came}):
        g = sorted(p for p in gone.elements() if (p.color.value, p.size) == kind)
        c = sorted(p for p in came.elements() if (p.color.value, p.size) == kind)
        unseen = len(g) - len(c)
        if unseen < 0 or unseen > short:
            return []
        options: dict[tuple[Turn, ...], int] = {}
        for kept in itertools.combinations(g, len(c)):
            options.setdefault(tuple(Turn(Minion(cell, a), b.pose)
                                     for a, b in zip(kept, c)), unseen)
        per_kind.append(list(options.items()))
    return [(tuple(t for ts, _ in combo for t in ts), sum(n for _, n in combo))
            for combo in itertools.product(*per_kind)]


def candidate_moves(state: ZarcanaState, seen: TableView, *, short: int = 0) -> Iterator[Move]:
    """Moves worth testing against what the camera sees (a superset of the answers);
    ``short``: up to this many of the game's pyramids may be missing from ``seen`` (a
    reorient is read off the table with them)."""
    for _, moves in _candidate_parts(state, seen, short):
        yield from moves()


#: A part of :func:`candidate_moves`: what the part's moves depend on besides the position
#: and the table's cards and pyramids (the key :class:`MovesTried` keeps them under), and
#: the moves.
_Part = tuple[Hashable, Callable[[], Iterable[Move]]]


def _candidate_parts(state: ZarcanaState, seen: TableView, short: int = 0,
                     found: _Found | None = None) -> list[_Part]:
    """:func:`candidate_moves` in parts, in its order: those of the tables that differ only
    in the discard pile's top (each of the pile's top cards tried) are mostly the same.
    ``found``: the legal steps of the suit powers played from the hand in this position,
    where the caller keeps them (the engine's own listing of moves finds them once for every
    card and pair that gives them: ``_HAND_BLIND``); else they are found once for these."""
    who = state.to_move
    if who is None:
        return []
    top = state.pending[-1] if state.pending else None
    if isinstance(top, (FoolPlay, FoolDraw)) or (top is not None and not isinstance(top, ExtraOption)):
        return [(("legal",), state.legal_moves)]
    parts: list[_Part] = [
        (("reorients", short), partial(_reorients_from_diff, state, seen, short=short)),
        (("rebuilding draws", seen.discard_top is None), partial(_rebuilding_draws, state, seen)),
        (("board",), partial(_board_moves, state, who))]
    found = {} if found is None else found
    played: list[str] = []
    if seen.discard_top not in (None, state.discard_top()):
        assert seen.discard_top is not None
        played.append(seen.discard_top)
    played += [c for c in state.hand(who) if c != UNKNOWN and c not in played]
    parts += [(("hand", card), partial(_hand_moves, state, who, card, found))
              for card in played]
    if seen.discard_top is not None and state.settings.doubles != "off":
        last = seen.discard_top
        parts.append((("pair", last), partial(_pair_moves, state, who, last, found)))
    return parts


def _board_moves(state: ZarcanaState, who: Color) -> Iterator[Move]:
    """The STARTs (none of ``who``'s pyramids on the board yet) and the powers of the
    territories under ``who``'s pyramids."""
    if not state.has_pieces(who):
        for cell in state.board:
            yield Start(who, cell)
    for m in state.minions_of(who):
        t = state.top(m.cell)
        if t is not None and t[1]:
            yield from state._card_actions(who, Source.TERRITORY, (t[0],), only=m)


def _hand_moves(state: ZarcanaState, who: Color, card: str, found: _Found) -> Iterator[Move]:
    if state.could_hold(who, (card,)):
        yield from state._card_actions(who, Source.HAND, (card,), found=found)


def _pair_moves(state: ZarcanaState, who: Color, last: str, found: _Found) -> Iterator[Move]:
    """The doubles played with ``last`` on top."""
    for other in sorted(state.unseen_cards() | set(state.hand(who)) - {UNKNOWN}):
        if state._pair_ok(other, last) and state.could_hold(who, (other, last)):
            yield from state._card_actions(who, Source.WILD, (other, last), found=found)


def _rebuilding_draws(state: ZarcanaState, seen: TableView) -> Iterator[Move]:
    """The draws (the turn option) that take more cards than the draw pile holds, where
    the discard pile is gone from the table: the pile is shuffled into a new draw pile
    (the rules' reshuffle), and the draw is the one move that empties it. Without them a
    draw that rebuilt the deck was "no move explains this change: discard pile now shows
    nothing" (a draw changes nothing else on the table)."""
    who = state.to_move
    if who is None or seen.discard_top is not None or not state.discard or \
            state.phase != "play":
        return
    for n in range(len(state.deck) + 1, state.settings.draw_amount + 1):
        yield Draw(who, n)


@dataclass(frozen=True)
class PyramidsShort:
    """A table seen with pyramids missing: ``move`` (None: no move, the table is the
    game's) fits it but for ``missing``, each a pyramid and its cell; ``after`` is the
    game after the move (the game itself when there is none)."""

    move: Move | None
    missing: tuple[tuple[Pyramid, Cell], ...]
    after: ZarcanaState = field(repr=False)


def pyramids_short(state: ZarcanaState, seen: TableView, most: int = 2, *,
                   compare_discard: bool = True) -> PyramidsShort | None:
    """The pyramids (one to ``most``) ``seen`` lacks where the table is otherwise the
    game's (move None) or one legal move's result (pyramids the camera missed: a hand over
    them, often the one the move grew or moved), fewest missing first, the game's own
    table first among equals; None when there are none."""
    def short_of(full: TableView) -> tuple[tuple[Pyramid, Cell], ...] | None:
        return _short_of(full, seen, most, compare_discard)

    best: PyramidsShort | None = None
    found = short_of(TableView.of(state))
    if found is not None:
        best = PyramidsShort(None, found, state)
        if len(found) == 1:
            return best
    for mv, after in _legal_results(state, candidate_moves(state, seen, short=most), seen,
                                    set()):
        found = short_of(TableView.of(after))
        if found is not None and (best is None or len(found) < len(best.missing)):
            best = PyramidsShort(mv, found, after)
            if len(found) == 1:
                break
    return best


def _short_of(full: TableView, seen: TableView, most: int, compare_discard: bool
              ) -> tuple[tuple[Pyramid, Cell], ...] | None:
    """The pyramids (one to ``most``) of ``full`` that ``seen`` lacks, where the two are
    otherwise the same table; None where they are not."""
    if full.cards != seen.cards or (compare_discard and full.discard_top != seen.discard_top):
        return None
    extra: list[tuple[Pyramid, Cell]] = []
    for cell in sorted(set(full.pyramids) | set(seen.pyramids)):
        have, want = Counter(seen.pyramids.get(cell, ())), Counter(full.pyramids.get(cell, ()))
        if have - want:
            return None
        extra += [(p, cell) for p in sorted((want - have).elements())]
    return tuple(extra) if 0 < len(extra) <= most else None


def broken_short(state: ZarcanaState, seen: TableView, most: int = 2, *,
                 compare_discard: bool = True
                 ) -> list[tuple[Verdict, tuple[tuple[Pyramid, Cell], ...]]]:
    """The moves that break a rule and fit ``seen`` but for one to ``most`` of the pyramids
    they leave (a hand over them as the rule was broken), each with those pyramids and
    their cells: those with the fewest missing, fewest rules broken first (several where
    the pyramid the move took is the one hidden); none: empty. Without it
    such a picture was "no move explains this change", and the next, clear one named the
    rule: two illegal entries for one move."""
    fits: list[tuple[Verdict, tuple[tuple[Pyramid, Cell], ...]]] = []
    for verdict, after in _relaxed_results(state, seen, short=most):
        found = _short_of(TableView.of(after), seen, most, compare_discard)
        if found is not None:
            fits.append((verdict, found))
    fewest = min((len(f) for _, f in fits), default=0)
    fits = [vf for vf in fits if len(vf[1]) == fewest]
    return sorted(fits, key=lambda vf: len(vf[0].violations))


def unseen_uses(state: ZarcanaState, *, with_discard: bool = True) -> list[Move]:
    """The territory powers the player to move may use that leave the table as it was (a
    trade of hands, cards drawn; ``with_discard`` off: the discard pile is not seen either,
    and Judgement's draw from it leaves the table as it was too): no camera sees them, so
    the players say them (a click). Without them a Justice trade read as no move, and the
    next player's move was judged as this one's. A draw that shuffles the discard pile into
    a new draw pile is one too: the camera sees the pile gone, not how many cards were
    drawn nor by which draw (the live referee waits for the click), and it had no button."""
    who = state.to_move
    if who is None or state.is_over or state.pending or state.phase != "play":
        return []
    shown = TableView.of(state)
    out: list[Move] = []
    keys: set[str] = set()
    for m in state.minions_of(who):
        t = state.top(m.cell)
        if t is None or not t[1]:
            continue
        moves = state._card_actions(who, Source.TERRITORY, (t[0],), only=m)
        for mv, after in _legal_results(state, moves, shown, keys):
            rebuilt = after.reshuffles > state.reshuffles
            if TableView.of(after).same_as(shown, with_discard=with_discard and not rebuilt):
                out.append(mv)
    return out


def _changes(before: TableView, seen: TableView, compare_discard: bool) -> tuple[Change, ...]:
    """What differs between two tables (the discard pile only with ``compare_discard``)."""
    return tuple(c for c in diff(before, seen) if compare_discard or c.cell is not None)


def _legal_results(state: ZarcanaState, moves: Iterator[Move], seen: TableView,
                   keys: set[str]) -> Iterator[tuple[Move, ZarcanaState]]:
    """Each legal move of ``moves`` (its builds named from ``seen``; each once: ``keys``
    holds those already tried) with the state after it."""
    for mv in moves:
        mv = fill_builds(mv, seen, state)
        key = str(mv)
        if key in keys:
            continue
        keys.add(key)
        after = _legal_after(state, mv)
        if after is not None:
            yield mv, after


def _legal_after(state: ZarcanaState, move: Move) -> ZarcanaState | None:
    """The position after ``move`` (None: it is not legal). (Not checked first: ``apply``
    checks the move itself, and the rules' checks were half the work of trying a move.)"""
    try:
        return state.apply(move)
    except CompanionError:      # (IllegalMoveError among them)
        return None


def explain(state: ZarcanaState, seen: TableView, *, diagnose: bool = True,
            compare_discard: bool = True, tried: MovesTried | None = None) -> Explanation:
    """Which legal move turns ``state`` into the table the camera sees now.

    ``seen.discard_top`` is the card now showing on the discard pile (None: the pile is
    empty); with ``compare_discard`` off (the camera cannot see the pile) it is ignored.
    When no legal move explains the change and ``diagnose`` is set, the moves that would
    explain it but break rules are returned with their verdicts, so a ruling can say what
    was done wrong. ``tried``: the moves tried from ``state`` for this table kept, as for
    :func:`explain_two`, which the searches for moves seen at once that may follow make
    again as their first moves (this one's are kept there too).
    """
    changes = _changes(TableView.of(state), seen, compare_discard)
    if not changes:
        return Explanation(changes)
    found: list[Move] = []
    states: list[ZarcanaState] = []
    named: list[tuple[ZarcanaState, ZarcanaState, ZarcanaState]] = []
    if tried is None:
        results = _legal_results(state, candidate_moves(state, seen), seen, set())
    else:
        tried = tried._for(seen)
        results = tried.legal_results(
            state, _candidate_parts(state, seen, found=tried.found(state)), seen, set())
    for mv, after in results:
        both = _seen_named(state, mv, after, seen, compare_discard, tried)
        if both is not None:
            after = both[1]
        if TableView.of(after).same_as(seen, with_discard=compare_discard):
            found.append(mv)
            states.append(after)
            if both is not None:
                named.append((state, after, both[0]))
    if found or not diagnose:
        # Simplest first: a single card played is likelier than a discarded pair whose
        # lower card the camera cannot see.
        order = sorted(range(len(found)), key=lambda i: _complexity(found[i]))
        return Explanation(changes, tuple(found[i] for i in order), (),
                           tuple(states[i] for i in order), tuple(named))
    return Explanation(changes, (), tuple(_diagnose(state, seen, compare_discard)))


def _seen_named(state: ZarcanaState, move: Move, after: ZarcanaState, seen: TableView,
                compare_discard: bool, tried: MovesTried | None = None
                ) -> tuple[ZarcanaState, ZarcanaState] | None:
    """``state`` and ``after`` (``move`` made in ``state``) with the unknown cards the move
    brings into view named as ``seen`` shows them: a card the Alchemist covered, uncovered
    (:func:`uncovered_named`; kept in ``tried``, for ``seen``, where given), and a
    face-down territory destroyed, face up on the discard pile (:func:`_discarded_named`,
    with ``compare_discard``). None: nothing named."""
    named = None
    if tried is not None:
        named = tried.uncovered(state, move, after)
    elif any(s and s[-1] == (UNKNOWN, True) for s in after.board.values()):
        named = uncovered_named(state, move, seen.cards, plain=after)
    if named is not None:
        state, after = named
    if compare_discard:
        named = _discarded_named(state, move, after, seen) or named
    return named


def uncovered_named(before: ZarcanaState, move: Move, cards: Mapping[Cell, str], *,
                    plain: ZarcanaState | None = None
                    ) -> tuple[ZarcanaState, ZarcanaState] | None:
    """``before`` with each card the Alchemist covered at once (built from a draw pile
    nobody sees: "?", face up, under the top card) that ``move`` brings into view (it takes
    the card above away: destroyed, discarded, moved by the Moon) named as ``cards`` (the
    table after the move) shows it, in every position it lay covered in, so that the move
    made from there uncovers it, as a replay of the game file does; with the game after
    that move. None where the move uncovers no such card, or the card seen there cannot be
    it (the game knows it to lie elsewhere, or one card is seen in two such places).
    ``plain``: ``move`` made in ``before`` already, where the caller has it. Without it the
    table showed a card where the game had "?": the move was not explained, or a build
    of that card was taken instead."""
    try:
        plain = before.apply(move) if plain is None else plain
    except CompanionError:
        return None
    unseen = before.unseen_cards()
    names: dict[Cell, tuple[tuple[Layer, ...], tuple[Layer, ...]]] = {}
    taken: set[str] = set()
    for cell, stack in sorted(plain.board.items()):
        if not stack or stack[-1] != (UNKNOWN, True):
            continue
        under = before.board.get(cell, ())
        k = len(stack)
        if len(under) <= k or under[:k] != stack:
            continue    # (not uncovered by this move)
        card = cards.get(cell)
        if card is None or card in (BACK, UNKNOWN) or card not in unseen or card in taken:
            return None
        taken.add(card)
        names[cell] = (under, under[:k - 1] + ((card, True),) + under[k:])
    if not names:
        return None
    named = with_names(before, names)
    try:
        after = named.apply(move)
    except CompanionError:
        return None
    return named, after


def _discarded_named(state: ZarcanaState, move: Move, after: ZarcanaState,
                     seen: TableView) -> tuple[ZarcanaState, ZarcanaState] | None:
    """``state`` and ``after`` (``move`` made in ``state``) with the card on top of the
    discard pile after it named from ``seen`` where the game does not know it (a face-down
    territory, a Wheel of Fortune build, destroyed and discarded face up) and the camera
    shows a card the game has not seen elsewhere: the move made with the card named
    (:func:`face_down_named`); None where nothing is named. Without it the destroyed card's
    face was "no move explains this change", and a card missing from the table beside it
    read as covered: the game waited for good."""
    shown = seen.discard_top
    if after.discard_top() != UNKNOWN or shown is None:
        return None
    # (made again, not patched: the engine's own words then name the card destroyed)
    return face_down_named(state, move, shown, plain=after)


def face_down_named(before: ZarcanaState, move: Move, card: str, *,
                    plain: ZarcanaState | None = None
                    ) -> tuple[ZarcanaState, ZarcanaState] | None:
    """``before`` with the face-down territory ``move`` destroys named ``card``, the card
    seen face up on top of the discard pile after it: the card it was in every position it
    lay face down in (:func:`~companion.games.zarcana.state.name_back`), so that the move
    made from there discards it, as a replay of the game file does; with the game after
    that move. None where the move puts no unknown card on top of the pile, or ``card``
    cannot be it (the game knows it to lie elsewhere). ``plain``: ``move`` made in
    ``before`` already, where the caller has it."""
    if not any(s and s[-1] == (UNKNOWN, False) for s in before.board.values()) or \
            card in (BACK, UNKNOWN) or card not in before.unseen_cards():
        return None
    try:
        plain = before.apply(move) if plain is None else plain
    except CompanionError:
        return None
    if plain.discard_top() != UNKNOWN:
        return None
    for cell, stack in sorted(before.board.items()):
        if not stack or stack[-1] != (UNKNOWN, False) or plain.board.get(cell) == stack:
            continue
        named = before.copy()
        named.board[cell] = stack[:-1] + ((card, False),)
        try:
            after = named.apply(move)
        except CompanionError:
            continue
        if after.discard_top() == card:
            return named, after
    return None


class MovesTried:
    """The moves the searches for moves seen at once (:func:`explain_two`,
    :func:`explain_three`) tried from each position, for one table seen: each with its builds
    named from the table, and the position after it where it is legal; and how far each
    position's table is from the one seen. Kept for the searches that follow for the same
    table from the same positions: the live referee searches a table for each top card of a
    pile in no known order, each top's search making the same first moves, and for two moves
    and then three, the three-move search making again the second moves the two-move search
    made. Seen another table (other cards or pyramids), it forgets what it kept; the
    positions are kept by identity (each object held, so that its id is not another's)."""

    def __init__(self) -> None:
        self._cards: dict[Cell, str] | None = None
        #: the table's pyramids, each cell's in order (the cells with none left out)
        self._pyramids: dict[Cell, tuple[Pyramid, ...]] = {}
        self._at: dict[int, _Tries] = {}

    def _for(self, seen: TableView) -> "MovesTried":
        """This, for the table ``seen`` (what was kept for another table forgotten)."""
        cards = dict(seen.cards)
        pyramids = {c: tuple(sorted(ps)) for c, ps in seen.pyramids.items() if ps}
        if cards != self._cards or pyramids != self._pyramids:
            self._cards, self._pyramids = cards, pyramids
            self._at.clear()
        return self

    def __len__(self) -> int:
        """How many positions it keeps moves or a table for."""
        return len(self._at)

    def _tries(self, state: ZarcanaState) -> "_Tries":
        at = self._at.get(id(state))
        if at is None or at.state is not state:
            at = self._at[id(state)] = _Tries(state)
        return at

    def _view(self, state: ZarcanaState) -> tuple["_Tries", TableView]:
        at = self._tries(state)
        if at.view is None:
            at.view = TableView.of(state)
        return at, at.view

    def gap(self, state: ZarcanaState, seen: TableView, compare_discard: bool) -> int:
        """How many changes tell ``state``'s table from ``seen`` (``len(diff(...))``, the
        discard pile's only with ``compare_discard``): the board's counted once a position."""
        at, view = self._view(state)
        if at.board_gap is None:
            at.board_gap = self._board_gap(view)
        return at.board_gap + (compare_discard and view.discard_top != seen.discard_top)

    def same(self, state: ZarcanaState, seen: TableView, compare_discard: bool) -> bool:
        """Whether ``state``'s table is ``seen`` (:meth:`TableView.same_as`): compared, not
        counted (:meth:`TableView.of` gives each cell's pyramids in order, none empty, as
        :meth:`_for` keeps the table's)."""
        _, view = self._view(state)
        return view.cards == self._cards and view.pyramids == self._pyramids and (
            not compare_discard or view.discard_top == seen.discard_top)

    def _board_gap(self, view: TableView) -> int:
        """The cards and pyramids of :func:`diff` from ``view`` to the table seen, counted
        (most cells are the same: only those that differ are counted out)."""
        assert self._cards is not None
        cards, pyramids = self._cards, self._pyramids
        n = 0
        if view.cards != cards:
            n = sum(1 for c in cards.keys() | view.cards.keys()
                    if cards.get(c) != view.cards.get(c))
        if view.pyramids != pyramids:
            for cell in pyramids.keys() | view.pyramids.keys():
                here, there = view.pyramids.get(cell, ()), pyramids.get(cell, ())
                if here != there:
                    n += _apart(here, there)
        return n

    def uncovered(self, state: ZarcanaState, move: Move, after: ZarcanaState
                  ) -> tuple[ZarcanaState, ZarcanaState] | None:
        """:func:`uncovered_named` of ``move`` made in ``state`` (giving ``after``), the
        cards named as the table seen shows them: once a move and position, so that the
        searches that follow search on from the same position named (kept by identity).
        Looked for only in a position where a card the Alchemist covered lies unnamed."""
        at = self._tries(state)
        if at.covered is None:
            at.covered = any((UNKNOWN, True) in s[:-1] for s in state.board.values())
        if not at.covered:
            return None
        assert self._cards is not None
        key = str(move)
        if key not in at.uncovered:
            at.uncovered[key] = uncovered_named(state, move, self._cards, plain=after)
        return at.uncovered[key]

    def found(self, state: ZarcanaState) -> _Found:
        """The legal steps of the suit powers played from the hand found in ``state``."""
        return self._tries(state).found

    def legal_results(self, state: ZarcanaState, parts: Iterable[_Part], seen: TableView,
                      keys: set[str]) -> Iterator[tuple[Move, ZarcanaState]]:
        """:func:`_legal_results` of the moves of ``parts``, in order, each part's tried
        once a position (and each move once, whichever parts hold it)."""
        at = self._tries(state)
        for part, moves in parts:
            tried = at.parts.get(part)
            if tried is None:
                tried = at.parts[part] = at.tried(moves(), seen)
            for key, mv, after in tried:
                if key in keys:
                    continue
                keys.add(key)
                if after is not None:
                    yield mv, after


def _apart(a: Sequence[Pyramid], b: Sequence[Pyramid]) -> int:
    """How many pyramids of ``a`` are not in ``b`` and of ``b`` not in ``a`` (each as often
    as it is there), both in order (``sorted``): the changes :func:`diff` names of a cell."""
    i = j = n = 0
    while i < len(a) and j < len(b):
        if a[i] == b[j]:
            i += 1
            j += 1
        elif a[i] < b[j]:
            n += 1
            i += 1
        else:
            n += 1
            j += 1
    return n + len(a) - i + len(b) - j


class _Tries:
    """What :class:`MovesTried` keeps of one position."""

    __slots__ = ("state", "parts", "made", "found", "view", "board_gap", "covered",
                 "uncovered")

    def __init__(self, state: ZarcanaState) -> None:
        self.state = state
        #: per part of the moves (:data:`_Part`), each move's text, the move, and the
        #: position after it (None: not legal), each text once
        self.parts: dict[Hashable, list[tuple[str, Move, ZarcanaState | None]]] = {}
        #: per move's text, the position after it (None: not legal)
        self.made: dict[str, ZarcanaState | None] = {}
        #: the legal steps of the suit powers played from the hand (:func:`_candidate_parts`)
        self.found: _Found = {}
        self.view: TableView | None = None
        self.board_gap: int | None = None
        #: whether a card the Alchemist covered lies here unnamed ("?" under another card)
        self.covered: bool | None = None
        #: per move's text, this position and the one after it with the cards the move
        #: uncovers named (:meth:`MovesTried.uncovered`; None: none named)
        self.uncovered: dict[str, tuple[ZarcanaState, ZarcanaState] | None] = {}

    def tried(self, moves: Iterable[Move], seen: TableView
              ) -> list[tuple[str, Move, ZarcanaState | None]]:
        out = []
        here: set[str] = set()
        for mv in moves:
            mv = fill_builds(mv, seen, self.state)
            key = str(mv)
            if key in here:
                continue
            here.add(key)
            if key not in self.made:
                self.made[key] = _legal_after(self.state, mv)
            out.append((key, mv, self.made[key]))
        return out


@dataclass(frozen=True)
class TwoMoves:
    """Two legal moves, one after the other, that explain a change (a picture between them
    was missed): ``first`` gives ``middle``, ``second`` gives ``after``. ``named``: per
    move, the position it is made in with the cards the Alchemist covered that it uncovers
    named as the table shows them (:func:`uncovered_named`; the move made from there gives
    the next position), None where it uncovers none: the live referee names them back and
    records them, as for one move (:attr:`Explanation.named`)."""

    first: Move
    middle: ZarcanaState = field(repr=False)
    second: Move
    after: ZarcanaState = field(repr=False)
    named: tuple[ZarcanaState | None, ZarcanaState | None] = field(
        default=(None, None), repr=False, compare=False)


def explain_two(state: ZarcanaState, seen: TableView, *, under: Sequence[str] = (),
                compare_discard: bool = True, budget_s: float = 1.0,
                tried: MovesTried | None = None) -> tuple[list[TwoMoves], bool]:
    """Pairs of legal moves (this player's, then the next decision's) that turn ``state``
    into what the camera sees, simplest first, and whether the search was complete within
    ``budget_s`` seconds. ``under``: cards seen under the discard pile's top (the first
    move's card, when the second covered it). Only first moves that bring the table closer
    to ``seen`` are followed. The budget is of the searching thread's CPU time
    (:func:`time.thread_time`), not the wall clock's: a machine busy with other work finds
    the same moves, later, so the same pictures give the same game. ``tried``: the moves
    tried by the searches before this one, for the same table but perhaps another top of
    the pile (:class:`MovesTried`), which this one adds to; the answer is the same."""
    tried = (MovesTried() if tried is None else tried)._for(seen)
    return _pairs(state, seen, under, compare_discard, time.thread_time() + budget_s, tried)


def _pairs(state: ZarcanaState, seen: TableView, under: Sequence[str], compare_discard: bool,
           deadline: float, tried: MovesTried) -> tuple[list[TwoMoves], bool]:
    """:func:`explain_two` within ``deadline`` (of :func:`time.thread_time`), ``tried``
    for ``seen``."""
    found: list[TwoMoves] = []
    for mv, middle, named in _closer_firsts(state, seen, under, compare_discard, tried):
        if time.thread_time() > deadline:
            return _simplest_pairs(found), False
        if middle is None:
            continue
        found += [TwoMoves(mv, middle, m2, after, (named, named2))
                  for m2, after, named2 in _fits(middle, seen, compare_discard, tried)]
    return _simplest_pairs(found), True


def _fits(state: ZarcanaState, seen: TableView, compare_discard: bool, tried: MovesTried
          ) -> list[tuple[Move, ZarcanaState, ZarcanaState | None]]:
    """The moves of :func:`explain` (``diagnose`` off), each with the position after it and
    ``state`` with the cards the Alchemist covered that it uncovers named (None: none),
    the moves tried kept in ``tried``."""
    if tried.same(state, seen, compare_discard):
        return []
    found: list[tuple[Move, ZarcanaState, ZarcanaState | None]] = []
    parts = _candidate_parts(state, seen, found=tried.found(state))
    for mv, after in tried.legal_results(state, parts, seen, set()):
        uncovered = tried.uncovered(state, mv, after)
        before = state
        if uncovered is not None:
            before, after = uncovered
        both = _discarded_named(before, mv, after, seen) if compare_discard else None
        if both is not None:
            after = both[1]
        if tried.same(after, seen, compare_discard):
            found.append((mv, after, None if uncovered is None else before))
    return sorted(found, key=lambda f: _complexity(f[0]))


def _closer_firsts(state: ZarcanaState, seen: TableView, under: Sequence[str],
                   compare_discard: bool, tried: MovesTried
                   ) -> Iterator[tuple[Move, ZarcanaState | None, ZarcanaState | None]]:
    """The first moves of runs that may turn ``state`` into ``seen`` (:func:`explain_two`,
    :func:`explain_three`): each legal move shaped like the change, with the state after it
    where that brings the table closer to ``seen`` and the game goes on, else None (yielded
    all the same, so a caller's clock is checked between them); and ``state`` with the
    cards the Alchemist covered that the move uncovers named as ``seen`` shows them, the
    state after it made from there (None: it uncovers none). A card seen only once a
    later move took the card above it away was left "?", the table never reached."""
    start = tried.gap(state, seen, compare_discard)
    if start == 0:
        return
    keys: set[str] = set()
    views = [seen] + [replace(seen, discard_top=c) for c in under if c != seen.discard_top]
    for view in views:
        # (the mover's own reorients depend on the pyramids alone: the same for every view)
        own: _Part = (("own reorients",),
                      partial(_reorients_from_diff, state, view, own_only=True))
        parts = [own] + _candidate_parts(state, view, found=tried.found(state))
        for mv, middle in tried.legal_results(state, parts, seen, keys):
            uncovered = tried.uncovered(state, mv, middle)
            if uncovered is not None:
                middle = uncovered[1]
            closer = not middle.is_over and tried.gap(middle, seen, compare_discard) < start
            yield (mv, (middle if closer else None),
                   None if uncovered is None else uncovered[0])


@dataclass(frozen=True)
class ThreeMoves:
    """Three legal moves, one after another, that explain a change (the two pictures
    between them were missed): ``first`` gives ``middle``, from which ``rest`` is the
    other two. ``first_named``: as :attr:`TwoMoves.named` of the first."""

    first: Move
    middle: ZarcanaState = field(repr=False)
    rest: TwoMoves
    first_named: ZarcanaState | None = field(default=None, repr=False, compare=False)

    @property
    def moves(self) -> tuple[Move, Move, Move]:
        return (self.first, self.rest.first, self.rest.second)

    @property
    def named(self) -> tuple[ZarcanaState | None, ZarcanaState | None, ZarcanaState | None]:
        """Per move, as :attr:`TwoMoves.named`."""
        return (self.first_named,) + self.rest.named

    @property
    def after(self) -> ZarcanaState:
        return self.rest.after


def explain_three(state: ZarcanaState, seen: TableView, *, under: Sequence[str] = (),
                  compare_discard: bool = True, budget_s: float = 1.5,
                  tried: MovesTried | None = None) -> tuple[list[ThreeMoves], bool]:
    """Runs of three legal moves (this player's and the next two decisions') that turn
    ``state`` into what the camera sees, simplest first, and whether the search was
    complete within ``budget_s`` seconds: :func:`explain_two` from each first move that
    brings the table closer to ``seen``, so the search stays as narrow as the change. The
    budget is of CPU time, as :func:`explain_two`'s; ``tried`` as there (the moves the
    two-move search made from its first moves' positions are this one's second moves)."""
    deadline = time.thread_time() + budget_s
    tried = (MovesTried() if tried is None else tried)._for(seen)
    found: list[ThreeMoves] = []
    for mv, middle, named in _closer_firsts(state, seen, under, compare_discard, tried):
        if deadline - time.thread_time() <= 0:
            return _simplest_runs(found), False
        if middle is None:
            continue
        pairs, complete = _pairs(middle, seen, under, compare_discard, deadline, tried)
        found += [ThreeMoves(mv, middle, pair, named) for pair in pairs]
        if not complete:
            return _simplest_runs(found), False
    return _simplest_runs(found), True


def _simplest_runs(runs: list[ThreeMoves]) -> list[ThreeMoves]:
    return sorted(runs, key=lambda r: _simplest_first(r.moves))


def _simplest_pairs(pairs: list[TwoMoves]) -> list[TwoMoves]:
    return sorted(pairs, key=lambda p: _simplest_first((p.first, p.second)))


def _simplest_first(moves: Sequence[Move]) -> tuple[tuple[tuple[int, int], ...], tuple[str, ...]]:
    """The sort key of a run of moves: the simplest moves first, in order, then by text."""
    return (tuple((c[0], c[1]) for c in map(_complexity, moves)), tuple(map(str, moves)))


def _complexity(move: Move) -> tuple[int, int, str]:
    if isinstance(move, Action):
        return (2 if move.source is Source.WILD else 1, len(move.steps), str(move))
    return (0, 0, str(move))


def _diagnose(state: ZarcanaState, seen: TableView, compare_discard: bool) -> Iterator[Verdict]:
    """Rule-breaking moves that would explain the change: carried out with the checks off."""
    out: dict[str, Verdict] = {}
    for verdict, scratch in _relaxed_results(state, seen):
        if TableView.of(scratch).same_as(seen, with_discard=compare_discard):
            out[verdict.move] = verdict
    # Prefer the explanations that break the fewest rules.
    ranked = sorted(out.values(), key=lambda v: len(v.violations))
    yield from ranked[:5]


def _relaxed_results(state: ZarcanaState, seen: TableView, short: int = 0
                     ) -> Iterator[tuple[Verdict, ZarcanaState]]:
    """Each rule-breaking move shaped like the change (once), its verdict and the game after
    it carried out with the checks off; ``short`` as for :func:`candidate_moves`."""
    who = state.to_move
    if who is None:
        return
    tried: set[str] = set()
    for mv in _relaxed_candidates(state, seen, who, short):
        mv = fill_builds(mv, seen, state)
        if str(mv) in tried:
            continue
        tried.add(str(mv))
        verdict = state.check(mv)
        if verdict.legal:
            continue
        try:
            scratch = state.copy()
            scratch._perform(mv)
            scratch._cull_void()
        except (AssertionError, KeyError, ValueError, IndexError, CompanionError):
            continue
        yield verdict, scratch


def _relaxed_candidates(state: ZarcanaState, seen: TableView, who: Color, short: int = 0
                        ) -> Iterator[Move]:
    """Moves shaped like the change, generated without the legality filter."""
    yield from _reorients_from_diff(state, seen, short=short)
    own = state.minions_of(who)
    cards: list[tuple[Source, str]] = []
    if seen.discard_top not in (None, state.discard_top()):
        assert seen.discard_top is not None
        cards.append((Source.HAND, seen.discard_top))
    for m in own:
        t = state.top(m.cell)
        if t is not None:
            cards.append((Source.TERRITORY, t[0]))
    if not state.has_pieces(who):
        for cell in state.board:
            yield Start(who, cell)
    for cell in seen.cards:
        if cell not in state.board and any(p.color is who for p in seen.pyramids.get(cell, ())):
            yield Start(who, cell)
    for source, card in cards:
        options = state.power_options(card, source) or state.power_options(card, Source.HAND)
        actors: list[Minion | None] = list(own) if source is Source.HAND else [
            m for m in own if (state.top(m.cell) or ("", True))[0] == card]
        for power, mimic in options:
            for actor in (actors or [None]):
                base = Action(who, source, (card,), power, actor, (), mimic)
                yield from _relaxed_steps(state, base, actor)


def _relaxed_steps(state: ZarcanaState, base: Action, m: Minion | None) -> Iterator[Action]:
    scratch = state.copy()
    try:
        scratch._lift_card(base)
    except AssertionError:
        pass
    ctx = scratch._ctx(base)
    try:
        firsts = list(scratch._first_steps(ctx))
    except AssertionError:
        return
    if m is not None:
        # also the steps a differently oriented or upright pyramid could have taken
        for pose in Pose:
            if pose is m.pose:
                continue
            ctx2 = replace(ctx, minion=Minion(m.cell, m.pyramid.with_pose(pose)))
            try:
                firsts += list(scratch._first_steps(ctx2))
            except AssertionError:
                continue
    seen_steps: set[str] = set()
    for s in firsts:
        if str(s) in seen_steps:
            continue
        seen_steps.add(str(s))
        yield replace(base, steps=(s,))


__all__ = ["Change", "Explanation", "MovesTried", "PyramidsShort", "TableError", "TableView",
           "TwoMoves", "candidate_moves", "diff", "explain", "explain_three", "explain_two",
           "broken_short", "face_down_named", "game_from_table", "pyramids_short",
           "uncovered_named"]
