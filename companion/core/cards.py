"""Card ids of the table contract (shared/spec/table.md) and what a card is in play.

Ids are plain strings (``"swords-07"``, ``"major-13"``, ``"extra-gateway"``, ``"back"``) so
that states copy cheaply and serialise as they are; :func:`card_info` parses one once and
caches the answer.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from functools import lru_cache

from companion.core.errors import NotationError


class Suit(enum.Enum):
    """The four suits of the minor arcana, plus the trumps as a pseudo-suit."""

    WANDS = "wands"
    CUPS = "cups"
    SWORDS = "swords"
    PENTACLES = "pentacles"
    MAJOR = "major"
    EXTRA = "extra"

    @property
    def is_minor(self) -> bool:
        return self in MINOR_SUITS


MINOR_SUITS: tuple[Suit, ...] = (Suit.WANDS, Suit.CUPS, Suit.SWORDS, Suit.PENTACLES)

#: Other names the rules texts and decks use for the suits.
SUIT_ALIASES: dict[str, Suit] = {
    "wands": Suit.WANDS, "rods": Suit.WANDS, "staves": Suit.WANDS, "batons": Suit.WANDS,
    "cups": Suit.CUPS, "chalices": Suit.CUPS,
    "swords": Suit.SWORDS,
    "pentacles": Suit.PENTACLES, "discs": Suit.PENTACLES, "coins": Suit.PENTACLES,
}

#: Rider-Waite-Smith numbering of the major arcana (8 Strength, 11 Justice).
MAJOR_NAMES: tuple[str, ...] = (
    "The Fool", "The Magician", "The High Priestess", "The Empress", "The Emperor",
    "The Hierophant", "The Lovers", "The Chariot", "Strength", "The Hermit",
    "Wheel of Fortune", "Justice", "The Hanged Man", "Death", "Temperance", "The Devil",
    "The Tower", "The Star", "The Moon", "The Sun", "Judgement", "The World",
)

RANK_NAMES: dict[int, str] = {1: "Ace", 11: "Page", 12: "Knight", 13: "Queen", 14: "King"}

EXTRA_CARDS: tuple[str, ...] = ("extra-gateway", "extra-doppelganger")

BACK = "back"

_MINOR_RE = re.compile(r"^(wands|cups|swords|pentacles)-(0[1-9]|1[0-4])$")
_MAJOR_RE = re.compile(r"^major-(0[0-9]|1[0-9]|2[01])$")


@dataclass(frozen=True, slots=True)
class CardInfo:
    """What a tarot card id means: its suit, its number and whether it is royalty."""

    id: str
    suit: Suit
    number: int  # rank 1..14 for the minor arcana, 0..21 for trumps, 0 for extras

    @property
    def is_royalty(self) -> bool:
        """Pages, knights, queens and kings: suit cards without a printed value (aces excluded)."""
        return self.suit.is_minor and self.number >= 11

    @property
    def is_major(self) -> bool:
        return self.suit is Suit.MAJOR

    @property
    def printed_value(self) -> int:
        """Score value before any game-specific adjustment: royalty 11, others their number."""
        if self.is_royalty:
            return 11
        return self.number

    @property
    def name(self) -> str:
        if self.suit is Suit.MAJOR:
            return MAJOR_NAMES[self.number]
        if self.suit is Suit.EXTRA:
            return "The " + self.id.split("-", 1)[1].capitalize()
        rank = RANK_NAMES.get(self.number, str(self.number))
        return f"{rank} of {self.suit.value.capitalize()}"


@lru_cache(maxsize=None)
def card_info(card_id: str) -> CardInfo:
    """Parse a tarot card id; raises :class:`NotationError` naming the bad id."""
    m = _MINOR_RE.match(card_id)
    if m:
        return CardInfo(card_id, Suit(m.group(1)), int(m.group(2)))
    m = _MAJOR_RE.match(card_id)
    if m:
        return CardInfo(card_id, Suit.MAJOR, int(m.group(1)))
    if card_id in EXTRA_CARDS:
        return CardInfo(card_id, Suit.EXTRA, 0)
    raise NotationError(
        f"unknown card id {card_id!r}: expected e.g. 'cups-07', 'major-13' or 'extra-gateway'",
        card_id,
    )


def is_card_id(card_id: str) -> bool:
    try:
        card_info(card_id)
    except NotationError:
        return False
    return True


def card_words(card_id: str) -> str:
    """The id with the card's name, for people: ``cups-03 (3 of Cups)``; an id that is not a
    card (``?``, ``back``) as it is."""
    try:
        return f"{card_id} ({card_info(card_id).name})"
    except NotationError:
        return card_id


def minor(suit: Suit, rank: int) -> str:
    return f"{suit.value}-{rank:02d}"


def major(number: int) -> str:
    return f"major-{number:02d}"


def tarot_deck(extras: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The 78 cards of a tarot deck in a fixed order, plus any extra cards asked for."""
    return _tarot_deck(tuple(extras))


# (kept: the referee asks for the deck of each position it weighs, tens of thousands of
# times a game, and building it took a tenth of a millisecond)
@lru_cache(maxsize=None)
def _tarot_deck(extras: tuple[str, ...]) -> tuple[str, ...]:
    cards = [minor(s, r) for s in MINOR_SUITS for r in range(1, 15)]
    cards += [major(n) for n in range(22)]
    for extra in extras:
        card_info(extra)
        cards.append(extra)
    return tuple(cards)
