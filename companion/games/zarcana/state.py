"""The Zarcana game state: what lies on the table, in the hands, the piles and the stashes.

The state is a plain dataclass treated as immutable by its users: ``apply`` returns a new
one (dicts and tuples are copied shallowly, which is cheap at this size).

Knowledge: in a simulated game every card is known. When the companion follows a real
table, it cannot see hands or the draw pile; those hold :data:`UNKNOWN` (``"?"``) entries and
the engine answers what *some* hand could do.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeVar

from companion.core.pieces import Cell, Color, Pyramid
from companion.games.zarcana.moves import UNKNOWN
from companion.games.zarcana.rules import Settings

_S = TypeVar("_S", bound="StateData")

#: One card of a territory stack: (card id, face up?)
Layer = tuple[str, bool]


# ------------------------------------------------------------------ pending decisions ---

@dataclass(frozen=True, slots=True)
class ExtraOption:
    """High Priestess: the player takes another turn option this turn."""


@dataclass(frozen=True, slots=True)
class FoolDraw:
    """The Fool still has ``remaining`` random cards to draw and play."""

    remaining: int


@dataclass(frozen=True, slots=True)
class FoolPlay:
    """A card drawn by the Fool that must be played now if at all possible."""

    card: str
    remaining: int


@dataclass(frozen=True, slots=True)
class TaxDue:
    payer: Color
    payee: Color
    count: int


@dataclass(frozen=True, slots=True)
class PlagueCull:
    player: Color


@dataclass(frozen=True, slots=True)
class PlagueRaze:
    player: Color


@dataclass(frozen=True, slots=True)
class GhostTurn:
    """The player takes one turn option for the invisible player."""


@dataclass(frozen=True, slots=True)
class GhostDone:
    """Marks where the invisible player's turn option ends on the pending stack."""


Pending = (ExtraOption | FoolDraw | FoolPlay | TaxDue | PlagueCull | PlagueRaze | GhostTurn
           | GhostDone)


@dataclass(frozen=True, slots=True)
class Bidding:
    """Who still bids for the first turn, what they bid, and whether they must."""

    eligible: tuple[Color, ...]
    bids: tuple[tuple[Color, str | None], ...] = ()
    mandatory: bool = False


@dataclass
class StateData:
    settings: Settings
    players: tuple[Color, ...]
    seed: int
    board: dict[Cell, tuple[Layer, ...]] = field(default_factory=dict)
    pieces: dict[Cell, tuple[Pyramid, ...]] = field(default_factory=dict)
    stashes: dict[Color, tuple[int, int, int]] = field(default_factory=dict)
    hands: dict[Color, tuple[str, ...]] = field(default_factory=dict)
    deck: tuple[str, ...] = ()        # the draw pile, top card last
    discard: tuple[str, ...] = ()     # the discard pile, top card last
    box: tuple[str, ...] = ()         # cards put back in the box at setup
    # territories whose top card carries an Evil Eye mark: kept by where the card lies, not
    # by its id, since every card nobody could name is "?" (a mark goes when the card is
    # covered or taken away, and travels with it on the Moon)
    marks: frozenset[Cell] = frozenset()
    phase: str = "play"               # "bid", "play" or "over"
    current: int = 0                  # index into players of whose turn it is
    turn_number: int = 1
    reshuffles: int = 0
    end_declared_by: Color | None = None
    final_turns_left: int | None = None
    used: frozenset[str] = frozenset()   # cards whose power was used this turn
    pending: tuple[Pending, ...] = ()    # decisions still owed this turn, last on top
    in_flight: tuple[str, ...] = ()      # a Fool card drawn and not yet played
    bidding: Bidding | None = None
    ghost: Color | None = None           # the invisible player's colour, if any
    acting_as: Color | None = None       # set while a player acts for the ghost
    history: tuple[str, ...] = ()
    events: tuple[str, ...] = ()         # what the last move did, in plain words

    # ------------------------------------------------------------------ basic queries
    def copy(self: _S) -> _S:
        return self.__class__(
            settings=self.settings, players=self.players, seed=self.seed,
            board=dict(self.board), pieces=dict(self.pieces), stashes=dict(self.stashes),
            hands=dict(self.hands), deck=self.deck, discard=self.discard, box=self.box,
            marks=self.marks, phase=self.phase, current=self.current,
            turn_number=self.turn_number, reshuffles=self.reshuffles,
            end_declared_by=self.end_declared_by, final_turns_left=self.final_turns_left,
            used=self.used, pending=self.pending, in_flight=self.in_flight,
            bidding=self.bidding, ghost=self.ghost, acting_as=self.acting_as,
            history=self.history, events=(),
        )

    @property
    def current_player(self) -> Color:
        return self.players[self.current]

    @property
    def all_colors(self) -> tuple[Color, ...]:
        return self.players + ((self.ghost,) if self.ghost is not None else ())

    @property
    def is_over(self) -> bool:
        return self.phase == "over"

    @property
    def hidden(self) -> bool:
        """True when some card is unknown (the companion following a real table)."""
        return (UNKNOWN in self.deck or any(UNKNOWN in h for h in self.hands.values())
                or UNKNOWN in self.box)

    def top(self, cell: Cell) -> Layer | None:
        stack = self.board.get(cell)
        return stack[-1] if stack else None

    def is_territory(self, cell: Cell) -> bool:
        return cell in self.board

    def is_wasteland(self, cell: Cell) -> bool:
        if cell in self.board:
            return False
        i, j = cell
        b = self.board
        return (i, j - 1) in b or (i + 1, j) in b or (i, j + 1) in b or (i - 1, j) in b

    def on_map(self, cell: Cell) -> bool:
        """A territory or a wasteland space: anywhere a pyramid can live."""
        return cell in self.board or self.is_wasteland(cell)

    def population(self, cell: Cell) -> int:
        return len(self.pieces.get(cell, ()))

    def pieces_of(self, color: Color) -> list[tuple[Cell, Pyramid]]:
        return [(c, p) for c, ps in self.pieces.items() for p in ps if p.color is color]

    def has_pieces(self, color: Color) -> bool:
        return any(p.color is color for ps in self.pieces.values() for p in ps)

    def discard_top(self) -> str | None:
        return self.discard[-1] if self.discard else None

    def hand(self, color: Color) -> tuple[str, ...]:
        return self.hands.get(color, ())

    def stash(self, color: Color) -> tuple[int, int, int]:
        return self.stashes[color]


#: unknown cards named: cell -> (its stack with the card unknown, the stack named)
FaceDownNames = dict[Cell, tuple[tuple[Layer, ...], tuple[Layer, ...]]]


def names_given(before: StateData, after: StateData) -> FaceDownNames:
    """The unknown cards of ``before``'s stacks that ``after`` names, the rest of the stack
    the same: a face-down territory's top card (a player said which card a Wheel of Fortune
    build laid face down, or the camera read it off the discard pile), or a face-up card
    the Alchemist's second build covered at once (the camera saw it as a move took the
    card above it away)."""
    out: FaceDownNames = {}
    for cell, stack in before.board.items():
        if not any(card == UNKNOWN for card, _ in stack):
            continue
        named = after.board.get(cell)
        if named is None or len(named) != len(stack) or named == stack:
            continue
        changed = [k for k, (a, b) in enumerate(zip(stack, named)) if a != b]
        if len(changed) != 1:
            continue
        was, now = stack[changed[0]], named[changed[0]]
        if was[0] == UNKNOWN and now[0] != UNKNOWN and was[1] == now[1]:
            out[cell] = (stack, named)
    return out


def name_back(states: list[_S], names: FaceDownNames) -> list[_S]:
    """``states`` (oldest first) with the cards of ``names`` named in the latest of them
    and back to the first that does not hold the named stack: the positions the card lay
    face down in since it was laid (an earlier face-down card at the same cell, since
    gone, is another card)."""
    out = list(states)
    for cell, given in names.items():
        for k in range(len(out) - 1, -1, -1):
            if out[k].board.get(cell) != given[0]:
                break
            out[k] = with_names(out[k], {cell: given})
    return out


def names_forgotten(states: list[_S], names: FaceDownNames) -> list[_S]:
    """``states`` (oldest first) with the cards of ``names`` unknown again where they lie
    named, from the latest back (:func:`name_back` undone): a name read off the discard
    pile goes with the move taken back that showed it there, as the pile may have been
    misread."""
    return name_back(states, {cell: (named, unknown) for cell, (unknown, named) in names.items()})


def names_read_off_the_pile(before: StateData, after: StateData) -> FaceDownNames:
    """The face-down cards named in ``before`` that the move giving ``after`` put on the
    discard pile from where they lay, as :func:`names_given` gives them (the card unknown,
    the card named): names the camera read off the pile, which a take-back of that move
    forgets (the pile may have been misread). The live session's continued game finds them
    so (its correction's note said the name was read off the pile), and the game file's
    replay (:func:`companion.recording.store.replay_states`) where an undo leaves them
    unknown."""
    top = after.discard_top()
    return {cell: (stack[:-1] + ((UNKNOWN, False),), stack)
            for cell, stack in before.board.items()
            if stack and stack[-1] == (top, False) and top not in (None, UNKNOWN)
            and after.board.get(cell) != stack}


def with_names(state: _S, names: FaceDownNames) -> _S:
    """``state`` with the face-down cards of ``names`` named wherever it holds the very
    stack that was named: a card's name is true of every position the card lay face down
    in, so a move taken back does not forget it. ``state`` itself when none applies."""
    hits = {cell: named for cell, (unknown, named) in names.items()
            if state.board.get(cell) == unknown}
    if not hits:
        return state
    out = state.copy()
    out.events = state.events
    out.board.update(hits)
    return out
