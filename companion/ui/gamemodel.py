"""What the window shows of a Zarcana position, in plain Python (no Qt).

The side panel, the final scoring and the score chart read a
:class:`~companion.games.zarcana.engine.ZarcanaState` through these small frozen records, so
the widgets only lay text out and the tests can check the words without a window.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from companion.core.cards import card_words
from companion.core.errors import NotationError
from companion.core.pieces import Cell, Minion, format_cell
from companion.games.zarcana.engine import ZarcanaState, covered_at_once, pending_text
from companion.games.zarcana.moves import (
    UNKNOWN,
    Action,
    Attack,
    Build,
    Clone,
    Convert,
    Grow,
    MoveTo,
    Place,
    Reorient,
    Transport,
    parse_move,
    with_covered_names,
    with_face_down_names,
)


@dataclass(frozen=True)
class Territory:
    """A territory that scores for a player: where, its top card, its points now."""

    cell: Cell
    card: str
    points: int

    def describe(self) -> str:
        return f"{format_cell(self.cell)} {self.card} {self.points:+d}"


@dataclass(frozen=True)
class PlayerLine:
    """One player's line of the side panel."""

    color: str
    score: int
    territories: tuple[Territory, ...]
    stash: tuple[int, int, int]   # small, medium, large pyramids not on the table
    hand: int                     # cards in hand
    to_move: bool                 # the decision awaited is this player's
    ghost: bool = False           # the invisible player (its points go to the Ghost's holder)


@dataclass(frozen=True)
class Position:
    """Everything the side panel says about one position."""

    turn: int
    round: int
    current: str | None           # whose turn it is (None once over)
    decider: str | None           # whose decision is awaited (a taxed player, a bidder...)
    pending: str | None           # what that decision is, in words
    players: tuple[PlayerLine, ...]
    draw_pile: int
    discard_pile: int
    discard_top: str | None
    reshuffles: int
    may_declare_end: bool
    end_text: str
    over: bool
    winners: tuple[str, ...]

    def headline(self) -> str:
        """``Turn 7, round 3: blue to move`` (or the game-over line)."""
        if self.over:
            who = ", ".join(self.winners)
            return f"Game over after turn {self.turn}: {'winner' if len(self.winners) == 1 else 'winners'} {who}"
        who = self.decider or self.current or "nobody"
        text = f"Turn {self.turn}, round {self.round}: {who} to move"
        if self.decider and self.current and self.decider != self.current:
            text += f" (in {self.current}'s turn)"
        return text


def end_text(state: ZarcanaState) -> tuple[bool, str]:
    """Whether the end may be declared now, and the panel's words for it."""
    # The engine's end.* rules on public fields: check() would answer "another decision
    # first" whenever a decision is pending mid-turn.
    if state.is_over:
        return False, "the game is over"
    if state.end_declared_by is not None:
        return False, (f"declared by {state.end_declared_by.value} "
                       f"({state.final_turns_left} turn(s) left)")
    if state.reshuffles > 0:
        return True, "the end may be declared"
    return False, "the end may not be declared yet (the draw pile has not been rebuilt)"


def describe_position(state: ZarcanaState) -> Position:
    """The side panel's record of ``state``."""
    scores = state.scores()
    details = state.score_details()
    to_move = state.to_move
    lines = []
    for c in state.all_colors:
        terr = tuple(Territory(cell, card, pts) for cell, card, pts in details.get(c, []))
        lines.append(PlayerLine(c.value, scores.get(c, sum(t.points for t in terr)), terr,
                                state.stash(c), len(state.hand(c)), c is to_move,
                                ghost=c is state.ghost))
    may_end, words = end_text(state)
    n = max(1, len(state.players))
    over = state.is_over
    decider = to_move.value if to_move is not None and not over else None
    return Position(
        turn=state.turn_number,
        round=(state.turn_number - 1) // n + 1,
        current=None if over else state.current_player.value,
        decider=decider,
        pending=None if over else pending_text(state),
        players=tuple(lines),
        draw_pile=len(state.deck),
        discard_pile=len(state.discard),
        discard_top=state.discard_top(),
        reshuffles=state.reshuffles,
        may_declare_end=may_end,
        end_text=words,
        over=over,
        winners=tuple(c.value for c in state.winners()) if over else (),
    )


def move_line(move: str, after: ZarcanaState, later: Iterable[ZarcanaState] = ()) -> str:
    """``move`` as the move log shows it, the cards it left unnamed ("=?") named once the
    game knows them, in the words of the text record (moves.with_face_down_names,
    moves.with_covered_names): a card it built face down (a Wheel of Fortune build) that the
    players named or the camera read off the discard pile as it was destroyed, from
    ``after``, the position after the move, which holds the name then (named back into
    every position the card lay face down in); and the Alchemist's first card, covered at
    once by its second, that the camera saw as a later move took the card above it away,
    from ``after`` or, where that move was clicked before a picture showed the card, from
    the first of ``later`` (the positions after the moves that followed, in order; read
    only for such a card) that names it. The notation stays what was seen at the time, as
    the game file keeps it."""
    if f"={UNKNOWN}" not in move:
        return move
    try:
        mv = parse_move(move)
    except NotationError:
        return move
    if not isinstance(mv, Action):
        return move
    names: list[str] = []
    covered: list[str] = []
    for i, step in enumerate(mv.steps):
        if isinstance(step, Build) and not step.from_hand and step.card == UNKNOWN:
            if covered_at_once(mv.power, i, mv.steps):
                card = _covered_name(step.cell, after, later)
                if card is not None:
                    covered.append(card)
                continue
            top = after.top(step.cell)
            if top is not None and not top[1] and top[0] != UNKNOWN:
                names.append(top[0])
    return with_covered_names(with_face_down_names(move, names), covered)


def _covered_name(cell: Cell, after: ZarcanaState, later: Iterable[ZarcanaState]) -> str | None:
    """The name the card the Alchemist covered at once at ``cell`` (under the top card in
    ``after``) is given in ``after`` or in the first of ``later`` that names it, while it
    lies there still (None: it went unnamed, or was taken away first)."""
    stack = after.board.get(cell, ())
    place = len(stack) - 2
    if place < 0:
        return None
    below = stack[:place]
    for st in itertools.chain((after,), later):
        now = st.board.get(cell, ())
        if len(now) <= place or now[:place] != below:
            return None
        card, face_up = now[place]
        if (card, face_up) != (UNKNOWN, True):
            return card if face_up and card != UNKNOWN else None
    return None


# ------------------------------------------------------------------------ scoring ---

def score_series(states: Iterable[ZarcanaState]) -> dict[str, list[int]]:
    """Each player's score after every position, in order (the chart's lines)."""
    out: dict[str, list[int]] = {}
    for st in states:
        for c, v in st.scores().items():
            out.setdefault(c.value, []).append(v)
    return out


@dataclass(frozen=True)
class ScoreRow:
    """One card of the final scoring: whose territory, which card, how many points."""

    player: str
    cell: Cell
    card: str
    name: str
    points: int
    running: int   # the player's total so far, this card included


def final_scoring(state: ZarcanaState) -> list[ScoreRow]:
    """The scoring card by card: each player's territories in lattice order, with totals."""
    rows: list[ScoreRow] = []
    details = state.score_details()
    for c in state.all_colors:
        total = 0
        for cell, card, pts in details.get(c, []):
            total += pts
            rows.append(ScoreRow(c.value, cell, card, card_words(card), pts, total))
    return rows


# --------------------------------------------------------------- a pyramid's moves ---

#: Kinds of target a selected pyramid's legal moves have, in drawing order.
TARGET_KINDS: tuple[str, ...] = ("move", "attack", "build", "grow", "clone", "place",
                                 "transport", "convert", "turn", "other")


@dataclass(frozen=True)
class MinionTarget:
    """Where a selected pyramid can act, and how (``count`` moves lead there this way)."""

    kind: str
    cell: Cell
    example: str     # one such move, in engine notation
    count: int


def minion_targets(state: ZarcanaState, minion: Minion) -> list[MinionTarget]:
    """The current player's legal moves by ``minion``, grouped by (kind, target cell).

    Each step of a card power counts (``move 2,1``, ``attack @2,1``, ``build 1,1``, grow and
    clone at the pyramid's own cell...); a reorientation targets the cell the pyramid would
    then point at. Empty when the pyramid is not the player's to move or has no move.
    """
    if state.is_over:
        return []
    found: dict[tuple[str, Cell], list[str]] = {}

    def add(kind: str, cell: Cell, text: str) -> None:
        found.setdefault((kind, cell), []).append(text)

    for mv in state.legal_moves():
        if isinstance(mv, Action) and mv.minion == minion:
            text = str(mv)
            if not mv.steps:
                add("other", minion.cell, text)
            for step in mv.steps:
                if isinstance(step, MoveTo):
                    add("move", step.cell, text)
                elif isinstance(step, Attack):
                    add("attack", step.cell, text)
                elif isinstance(step, Build):
                    add("build", step.cell, text)
                elif isinstance(step, Grow):
                    add("grow", minion.cell, text)
                elif isinstance(step, Clone):
                    add("clone", minion.cell, text)
                elif isinstance(step, Place):
                    add("place", step.cell, text)
                elif isinstance(step, Transport):
                    add("transport", step.cell, text)
                elif isinstance(step, Convert):
                    add("convert", step.target.cell, text)
                else:
                    add("other", minion.cell, text)
        elif isinstance(mv, Reorient):
            for turn in mv.turns:
                if turn.minion == minion and len(mv.turns) == 1:
                    d = turn.pose.delta
                    add("turn", (minion.cell[0] + d[0], minion.cell[1] + d[1]), str(mv))
    order = {k: i for i, k in enumerate(TARGET_KINDS)}
    out = [MinionTarget(kind, cell, texts[0], len(texts)) for (kind, cell), texts in found.items()]
    out.sort(key=lambda t: (order.get(t.kind, len(order)), t.cell))
    return out


def describe_targets(targets: Sequence[MinionTarget]) -> list[str]:
    """One line per target for the side panel: ``attack 2,1 (3 ways), e.g. ...``."""
    lines = []
    for t in targets:
        ways = f" ({t.count} ways)" if t.count > 1 else ""
        lines.append(f"{t.kind} {format_cell(t.cell)}{ways}: {t.example}")
    return lines


__all__ = ["MinionTarget", "PlayerLine", "Position", "ScoreRow", "TARGET_KINDS", "Territory",
           "describe_position", "describe_targets", "end_text", "final_scoring",
           "minion_targets", "move_line", "score_series"]
