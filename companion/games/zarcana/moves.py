"""Zarcana moves and their text notation.

A move is one decision of one player. Most turns are one move; a few powers leave a
decision for later in the same turn (the High Priestess's extra option, the Fool's random
cards, the Emperor's tax, the Plague, the Ghost), and those come as further moves.

Notation (round-trips through :func:`parse_move` and ``str(move)``)::

    red: start 1,1
    red: draw 3 | red: pass | red: end
    red: reorient red2U@1,1>E blue1N@0,1>U
    red: play swords-05 by red2E@1,1: attack blue1U@2,1
    red: use major-13 by red3U@1,1: attack blue3U@1,1; attack blue3U@1,1
    red: wild cups-03+cups-07 as wands by red2E@1,1: move 2,1
    red: play cups-14 as pentacles by red1U@1,1: build 1,1 =wands-04
    red: play major-21 like major-13 by red3U@1,1: attack @2,1
    red: play major-11: trade blue
    blue: pay cups-03+wands-01        red: reveal swords-04        red: bid cups-03
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

from companion.core.cards import card_info
from companion.core.errors import NotationError
from companion.core.pieces import (
    Cell,
    Color,
    Minion,
    Pose,
    format_cell,
    parse_cell,
    parse_minion,
)
from companion.games.zarcana.rules import Power

UNKNOWN = "?"  # a card whose face nobody at the table (or the camera) has seen


class Source(enum.Enum):
    HAND = "play"        # a card played from the hand
    TERRITORY = "use"    # the power of the card the acting pyramid sits on
    WILD = "wild"        # two cards of a suit discarded for a wild suit action
    FOOL = "fool"        # a card drawn at random by the Fool, played as from the hand


# ---------------------------------------------------------------------------- steps ---

@dataclass(frozen=True, slots=True)
class Grow:
    def __str__(self) -> str:
        return "grow"


@dataclass(frozen=True, slots=True)
class Clone:
    size: int

    def __str__(self) -> str:
        return f"clone {self.size}"


@dataclass(frozen=True, slots=True)
class MoveTo:
    cell: Cell

    def __str__(self) -> str:
        return f"move {format_cell(self.cell)}"


@dataclass(frozen=True, slots=True)
class Attack:
    """Attack a pyramid (``target``) or, with ``target`` None, the top card at ``cell``."""

    cell: Cell
    target: Minion | None = None

    def __str__(self) -> str:
        if self.target is not None:
            return f"attack {self.target}"
        return f"attack @{format_cell(self.cell)}"


@dataclass(frozen=True, slots=True)
class Convert:
    target: Minion
    size: int

    def __str__(self) -> str:
        return f"convert {self.target} to {self.size}"


@dataclass(frozen=True, slots=True)
class Tax:
    count: int

    def __str__(self) -> str:
        return f"tax {self.count}"


@dataclass(frozen=True, slots=True)
class Build:
    """Put a card on ``cell``: drawn from the deck (``card`` = what was drawn, if known) or,
    with ``from_hand``, chosen from the hand (the Sun)."""

    cell: Cell
    card: str | None = None
    from_hand: bool = False

    def __str__(self) -> str:
        s = f"build {format_cell(self.cell)}"
        if self.from_hand:
            return f"{s} from {self.card}"
        if self.card is not None:
            return f"{s} ={self.card}"
        return s


@dataclass(frozen=True, slots=True)
class Place:
    cell: Cell
    size: int

    def __str__(self) -> str:
        return f"place {self.size}@{format_cell(self.cell)}"


@dataclass(frozen=True, slots=True)
class Trade:
    other: Color

    def __str__(self) -> str:
        return f"trade {self.other.value}"


@dataclass(frozen=True, slots=True)
class Sacrifice:
    def __str__(self) -> str:
        return "sacrifice"


@dataclass(frozen=True, slots=True)
class Turn:
    minion: Minion
    pose: Pose

    def __lt__(self, other: "Turn") -> bool:
        return (self.minion.key, self.pose.value) < (other.minion.key, other.pose.value)

    def __str__(self) -> str:
        return f"turn {self.minion}>{self.pose.value}"


@dataclass(frozen=True, slots=True)
class DrawCards:
    count: int

    def __str__(self) -> str:
        return f"draw {self.count}"


@dataclass(frozen=True, slots=True)
class Transport:
    cell: Cell

    def __str__(self) -> str:
        return f"transport {format_cell(self.cell)}"


@dataclass(frozen=True, slots=True)
class Mark:
    cell: Cell

    def __str__(self) -> str:
        return f"mark {format_cell(self.cell)}"


@dataclass(frozen=True, slots=True)
class DiscardCards:
    cards: tuple[str, ...]

    def __str__(self) -> str:
        return "discard " + "+".join(self.cards)


Step = (Grow | Clone | MoveTo | Attack | Convert | Tax | Build | Place | Trade | Sacrifice | Turn
        | DrawCards | Transport | Mark | DiscardCards)


# ---------------------------------------------------------------------------- moves ---

def _who(player: Color) -> str:
    return f"{player.value}: "


@dataclass(frozen=True, slots=True)
class Start:
    player: Color
    cell: Cell

    def __str__(self) -> str:
        return f"{_who(self.player)}start {format_cell(self.cell)}"


@dataclass(frozen=True, slots=True)
class Draw:
    player: Color
    count: int

    def __str__(self) -> str:
        return f"{_who(self.player)}draw {self.count}"


@dataclass(frozen=True, slots=True)
class Pass:
    player: Color

    def __str__(self) -> str:
        return f"{_who(self.player)}pass"


@dataclass(frozen=True, slots=True)
class DeclareEnd:
    player: Color

    def __str__(self) -> str:
        return f"{_who(self.player)}end"


@dataclass(frozen=True, slots=True)
class Reorient:
    player: Color
    turns: tuple[Turn, ...]

    def __str__(self) -> str:
        body = " ".join(f"{t.minion}>{t.pose.value}" for t in self.turns)
        return f"{_who(self.player)}reorient {body}"


@dataclass(frozen=True, slots=True)
class Action:
    """A card power used by the player (through ``minion`` for most powers)."""

    player: Color
    source: Source
    cards: tuple[str, ...]
    power: Power
    minion: Minion | None = None
    steps: tuple[Step, ...] = ()
    #: the card a World or Doppelganger copies
    mimic: str | None = None

    @property
    def card(self) -> str:
        return self.cards[0]

    def __str__(self) -> str:
        parts = [self.source.value, "+".join(self.cards)]
        if self.mimic is not None:
            parts += ["like", self.mimic]
        if _needs_as(self):
            parts += ["as", self.power.value]
        if self.minion is not None:
            parts += ["by", str(self.minion)]
        text = _who(self.player) + " ".join(parts)
        if self.steps:
            text += ": " + "; ".join(str(s) for s in self.steps)
        return text


def _native_power(card: str) -> Power | None:
    from companion.games.zarcana.rules import MAJOR_ROLES

    if card == UNKNOWN:
        return None
    info = card_info(card)
    if info.suit.is_minor:
        return Power(info.suit.value)
    if info.is_major:
        role = MAJOR_ROLES[info.number]
        return role if isinstance(role, Power) else None
    if card == "extra-gateway":
        return Power.GATEWAY  # the Looney card; in 1996 games it is written "as gate"
    return None


def _needs_as(action: Action) -> bool:
    """``as POWER`` is written unless the card's own power says it already."""
    if action.source is Source.WILD:
        return True
    card = action.mimic if action.mimic is not None else action.card
    return _native_power(card) is not action.power


@dataclass(frozen=True, slots=True)
class Pay:
    """The taxed player hands cards to the Emperor's player."""

    player: Color
    cards: tuple[str, ...]

    def __str__(self) -> str:
        return f"{_who(self.player)}pay " + ("+".join(self.cards) if self.cards else "-")


@dataclass(frozen=True, slots=True)
class Cull:
    """Plague: the player destroys one of their own pyramids."""

    player: Color
    minion: Minion

    def __str__(self) -> str:
        return f"{_who(self.player)}cull {self.minion}"


@dataclass(frozen=True, slots=True)
class Raze:
    """Plague: the announcer discards an empty territory."""

    player: Color
    cell: Cell

    def __str__(self) -> str:
        return f"{_who(self.player)}raze {format_cell(self.cell)}"


@dataclass(frozen=True, slots=True)
class Reveal:
    """Chance: which card the Fool drew, when the deck's order is unknown (camera play)."""

    player: Color
    card: str

    def __str__(self) -> str:
        return f"{_who(self.player)}reveal {self.card}"


@dataclass(frozen=True, slots=True)
class Bid:
    player: Color
    card: str | None

    def __str__(self) -> str:
        return f"{_who(self.player)}bid {self.card if self.card is not None else '-'}"


Move = Start | Draw | Pass | DeclareEnd | Reorient | Action | Pay | Cull | Raze | Reveal | Bid


# --------------------------------------------------------------------------- parsing ---

def _card(text: str, whole: str) -> str:
    if text == UNKNOWN:
        return text
    try:
        card_info(text)
    except NotationError:
        raise NotationError(f"unknown card id {text!r} in move {whole!r}", whole) from None
    return text


def _int(text: str, whole: str, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise NotationError(f"bad {what} {text!r} in move {whole!r}: expected a number", whole) from None


def _parse_step(text: str, whole: str) -> Step:
    words = text.split()
    if not words:
        raise NotationError(f"empty step in move {whole!r}", whole)
    verb, args = words[0], words[1:]
    try:
        if verb == "grow" and not args:
            return Grow()
        if verb == "clone" and len(args) == 1:
            return Clone(_int(args[0], whole, "size"))
        if verb == "move" and len(args) == 1:
            return MoveTo(parse_cell(args[0]))
        if verb == "attack" and len(args) == 1:
            if args[0].startswith("@"):
                return Attack(parse_cell(args[0][1:]))
            m = parse_minion(args[0])
            return Attack(m.cell, m)
        if verb == "convert" and len(args) == 3 and args[1] == "to":
            return Convert(parse_minion(args[0]), _int(args[2], whole, "size"))
        if verb == "tax" and len(args) == 1:
            return Tax(_int(args[0], whole, "card count"))
        if verb == "build" and len(args) in (1, 2, 3):
            cell = parse_cell(args[0])
            if len(args) == 1:
                return Build(cell)
            if len(args) == 2 and args[1].startswith("="):
                return Build(cell, _card(args[1][1:], whole))
            if len(args) == 3 and args[1] == "from":
                return Build(cell, _card(args[2], whole), from_hand=True)
        if verb == "place" and len(args) == 1 and "@" in args[0]:
            size, _, where = args[0].partition("@")
            return Place(parse_cell(where), _int(size, whole, "size"))
        if verb == "trade" and len(args) == 1:
            return Trade(Color.parse(args[0]))
        if verb == "sacrifice" and not args:
            return Sacrifice()
        if verb == "turn" and len(args) == 1:
            return _parse_turn(args[0], whole)
        if verb == "draw" and len(args) == 1:
            return DrawCards(_int(args[0], whole, "card count"))
        if verb == "transport" and len(args) == 1:
            return Transport(parse_cell(args[0]))
        if verb == "mark" and len(args) == 1:
            return Mark(parse_cell(args[0]))
        if verb == "discard" and len(args) == 1:
            return DiscardCards(tuple(_card(c, whole) for c in args[0].split("+")))
    except NotationError as exc:
        if exc.text == whole:
            raise
        raise NotationError(f"{exc} in move {whole!r}", whole) from None
    raise NotationError(f"unknown step {text!r} in move {whole!r}", whole)


def _parse_turn(text: str, whole: str) -> Turn:
    head, sep, pose = text.rpartition(">")
    if not sep or pose not in {p.value for p in Pose}:
        raise NotationError(f"bad reorientation {text!r} in move {whole!r}: expected e.g. 'red2U@1,1>E'", whole)
    return Turn(parse_minion(head), Pose(pose))


def with_face_down_names(move: str, names: Sequence[str]) -> str:
    """``move`` as a log or record shows it once the cards it built face down ("=?", a
    Wheel of Fortune build) are named (``names``: the players named them, or the camera
    read them off the discard pile): "... build 1,0 =? (face down: cups-05)". The notation
    stays what was seen at the time, as the game file keeps it; ``move`` itself where
    nothing is named."""
    return f"{move} (face down: {', '.join(names)})" if names else move


def with_covered_names(move: str, names: Sequence[str]) -> str:
    """``move`` as a record shows it once the cards the Alchemist covered at once are
    named (``names``: its first build from a draw pile nobody sees, "=?", which the camera
    saw as a later move took the card above it away): "... build 1,0 =?; build 1,0
    =wands-07 (covered: cups-04)". As :func:`with_face_down_names`, the notation stays what
    was seen at the time; ``move`` itself where nothing is named."""
    return f"{move} (covered: {', '.join(names)})" if names else move


def parse_move(text: str) -> Move:
    """Parse the notation above; raises :class:`NotationError` quoting the text."""
    whole = text.strip()
    who, sep, rest = whole.partition(":")
    if not sep or not rest.strip():
        raise NotationError(f"bad move {whole!r}: expected 'colour: move', e.g. 'red: draw 3'", whole)
    try:
        player = Color.parse(who)
    except NotationError:
        raise NotationError(f"bad move {whole!r}: {who.strip()!r} is not a player colour", whole) from None
    rest = rest.strip()
    head, _, tail = rest.partition(":")
    words = head.split()
    if not words:
        raise NotationError(f"bad move {whole!r}: nothing to do after the colour", whole)
    verb = words[0]
    args = words[1:]
    try:
        if verb == "start" and len(args) == 1 and not tail:
            return Start(player, parse_cell(args[0]))
        if verb == "draw" and len(args) == 1 and not tail:
            return Draw(player, _int(args[0], whole, "card count"))
        if verb == "pass" and not args and not tail:
            return Pass(player)
        if verb == "end" and not args and not tail:
            return DeclareEnd(player)
        if verb == "reorient" and args and not tail:
            return Reorient(player, tuple(_parse_turn(a, whole) for a in args))
        if verb == "pay" and len(args) == 1 and not tail:
            cards = () if args[0] == "-" else tuple(_card(c, whole) for c in args[0].split("+"))
            return Pay(player, cards)
        if verb == "cull" and len(args) == 1 and not tail:
            return Cull(player, parse_minion(args[0]))
        if verb == "raze" and len(args) == 1 and not tail:
            return Raze(player, parse_cell(args[0]))
        if verb == "reveal" and len(args) == 1 and not tail:
            return Reveal(player, _card(args[0], whole))
        if verb == "bid" and len(args) == 1 and not tail:
            return Bid(player, None if args[0] == "-" else _card(args[0], whole))
        if verb in {s.value for s in Source} and args:
            return _parse_action(player, Source(verb), args, tail, whole)
    except NotationError as exc:
        if exc.text == whole:
            raise
        raise NotationError(f"{exc} in move {whole!r}", whole) from None
    raise NotationError(f"bad move {whole!r}: unknown form {verb!r}", whole)


def _parse_action(player: Color, source: Source, args: list[str], tail: str, whole: str) -> Action:
    cards = tuple(_card(c, whole) for c in args[0].split("+"))
    mimic: str | None = None
    power: Power | None = None
    minion: Minion | None = None
    i = 1
    while i < len(args):
        key = args[i]
        if i + 1 >= len(args):
            raise NotationError(f"bad move {whole!r}: {key!r} needs a value", whole)
        val = args[i + 1]
        if key == "like":
            mimic = _card(val, whole)
        elif key == "as":
            try:
                power = Power(val)
            except ValueError:
                raise NotationError(f"bad move {whole!r}: unknown power {val!r}", whole) from None
        elif key == "by":
            minion = parse_minion(val)
        else:
            raise NotationError(f"bad move {whole!r}: unexpected {key!r}", whole)
        i += 2
    if power is None:
        native = _native_power(mimic if mimic is not None else cards[0])
        if native is None:
            raise NotationError(f"bad move {whole!r}: say which power the card is used as ('as cups')", whole)
        power = native
    steps = tuple(_parse_step(s, whole) for s in tail.split(";")) if tail.strip() else ()
    return Action(player, source, cards, power, minion, steps, mimic)
