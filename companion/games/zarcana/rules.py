"""Zarcana editions, settings and the rule catalogue every verdict cites.

Rules are quoted in our own words, with the edition and section they come from. Where the
texts are silent or lost a table in extraction, the choice made is a setting and is listed
in docs/zarcana-rulings.md.
"""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass, fields
from collections.abc import Mapping
from typing import Any

from companion.core.cards import card_info
from companion.core.errors import CompanionError, SavedGameError
from companion.core.pieces import Color
from companion.core.verdict import Violation


class Edition(enum.Enum):
    E1996 = "1996"      # "Arcana" in More Icehouse Games, John Cooper
    LOONEY = "looney"   # Looney Pyramids edition

    @property
    def label(self) -> str:
        return "Zarcana 1996" if self is Edition.E1996 else "Zarcana (Looney Pyramids)"

    @classmethod
    def parse(cls, text: str) -> "Edition":
        try:
            return cls(str(text).lower())
        except ValueError:
            raise ValueError(f"unknown Zarcana edition {text!r}: expected '1996' or 'looney'") from None


class Power(enum.Enum):
    """Every effect a card can give. Wild and mimic cards resolve to one of these."""

    CUPS = "cups"
    WANDS = "wands"
    SWORDS = "swords"
    PENTACLES = "pentacles"
    FOOL = "fool"
    HIGH_PRIESTESS = "high-priestess"
    EMPRESS = "empress"
    EMPEROR = "emperor"
    HIEROPHANT = "hierophant"
    LOVERS = "lovers"
    CHARIOT = "chariot"
    STRENGTH = "strength"
    HERMIT = "hermit"
    WHEEL = "wheel"
    JUSTICE = "justice"
    HANGED_MAN = "hanged-man"
    DEATH = "death"
    TEMPERANCE = "temperance"
    DEVIL = "devil"
    TOWER = "tower"
    STAR = "star"
    MOON = "moon"
    SUN = "sun"
    JUDGEMENT = "judgement"
    GATEWAY = "gateway"
    # Optional trumps of the 1996 text; a setting says which card carries each.
    ALCHEMIST = "alchemist"
    ASSASSIN = "assassin"
    EVIL_EYE = "evil-eye"
    HOLY_GRAIL = "holy-grail"
    MISER = "miser"
    PLAGUE = "plague"
    GATE = "gate"
    GHOST = "ghost"
    CATAPULT = "catapult"

    #: hashed by identity, in C: Enum's own hash (of the name) is Python code, paid in every
    #: set and dict look-up of the Zarcana move generation; a member is its only equal
    __hash__ = object.__hash__


SUIT_POWERS: tuple[Power, ...] = (Power.CUPS, Power.WANDS, Power.SWORDS, Power.PENTACLES)

#: Powers that act through a minion on the board.
MINION_POWERS: frozenset[Power] = frozenset({
    Power.CUPS, Power.WANDS, Power.SWORDS, Power.PENTACLES, Power.EMPRESS, Power.EMPEROR,
    Power.HIEROPHANT, Power.CHARIOT, Power.STRENGTH, Power.HERMIT, Power.WHEEL,
    Power.HANGED_MAN, Power.DEATH, Power.TEMPERANCE, Power.DEVIL, Power.TOWER, Power.MOON,
    Power.SUN, Power.GATEWAY, Power.ALCHEMIST, Power.ASSASSIN, Power.EVIL_EYE,
    Power.HOLY_GRAIL, Power.GATE, Power.CATAPULT,
})

#: Special card roles that are not a single power: wild suit, mimic of a face-up trump,
#: mimic of the top discard.
MAGICIAN = "magician"
WORLD = "world"
DOPPELGANGER = "doppelganger"

#: The native role of each major arcanum (RWS numbering).
MAJOR_ROLES: dict[int, Power | str] = {
    0: Power.FOOL, 1: MAGICIAN, 2: Power.HIGH_PRIESTESS, 3: Power.EMPRESS, 4: Power.EMPEROR,
    5: Power.HIEROPHANT, 6: Power.LOVERS, 7: Power.CHARIOT, 8: Power.STRENGTH,
    9: Power.HERMIT, 10: Power.WHEEL, 11: Power.JUSTICE, 12: Power.HANGED_MAN,
    13: Power.DEATH, 14: Power.TEMPERANCE, 15: Power.DEVIL, 16: Power.TOWER, 17: Power.STAR,
    18: Power.MOON, 19: Power.SUN, 20: Power.JUDGEMENT, 21: WORLD,
}

OPTIONAL_TRUMP_NAMES: dict[str, Power | str] = {
    "alchemist": Power.ALCHEMIST, "assassin": Power.ASSASSIN, "doppelganger": DOPPELGANGER,
    "evil-eye": Power.EVIL_EYE, "holy-grail": Power.HOLY_GRAIL, "miser": Power.MISER,
    "plague": Power.PLAGUE, "gate": Power.GATE, "ghost": Power.GHOST,
    "catapult": Power.CATAPULT, "gateway": Power.GATEWAY,
}


@dataclass(frozen=True)
class Settings:
    """Everything chosen at game creation. ``None`` fields take the edition's default."""

    edition: Edition = Edition.LOONEY
    #: cards dealt to start the board: 4, 9 or 13 (None: edition default for the player count)
    layout_cards: int | None = None
    hand_size: int = 3
    hand_limit: int = 6
    #: most cards the DRAW option takes (Looney: 3; 1996: 2, its turn list was lost)
    draw_limit: int | None = None
    #: pyramids per size in each stash (5 = a full stash of 15)
    pieces_per_size: int = 5
    #: cards put back in the box unseen at setup (Looney: at least 3; 1996: none)
    box_cards: int | None = None
    #: extra cards shuffled in ("extra-gateway", "extra-doppelganger")
    extra_cards: tuple[str, ...] = ()
    #: 1996 optional trumps (or house options): card id -> optional trump name
    optional_trumps: tuple[tuple[str, str], ...] = ()
    #: play without the 22 trumps (a 1996 option for teaching)
    without_trumps: bool = False
    #: "suits" (the four suits only), "suits+majors" (trumps count as one suit) or "off"
    wild_doubles: str | None = None
    #: START only on a territory nobody occupies (1996 reconstruction) or on any territory
    start_on_unoccupied: bool | None = None
    #: index of the first player, or "bid" for the bidding ritual of the edition
    first_player: int | str = 0
    #: colour of the invisible player when the Ghost is in play
    ghost_color: str = "clear"
    #: the game ends when the last territory is destroyed (the texts are silent)
    end_when_board_empty: bool = True

    # --- derived defaults -------------------------------------------------------------
    def layout_for(self, players: int) -> int:
        if self.layout_cards is not None:
            return self.layout_cards
        if self.edition is Edition.LOONEY:
            if players == 2:
                return 4
            if players >= 5:
                return 13
        return 9

    @property
    def draw_amount(self) -> int:
        if self.draw_limit is not None:
            return self.draw_limit
        return 3 if self.edition is Edition.LOONEY else 2

    @property
    def box_amount(self) -> int:
        if self.box_cards is not None:
            return self.box_cards
        return 3 if self.edition is Edition.LOONEY else 0

    @property
    def doubles(self) -> str:
        if self.wild_doubles is not None:
            return self.wild_doubles
        return "suits+majors" if self.edition is Edition.LOONEY else "suits"

    @property
    def start_unoccupied(self) -> bool:
        if self.start_on_unoccupied is not None:
            return self.start_on_unoccupied
        return self.edition is Edition.E1996

    @property
    def optional_map(self) -> dict[str, str]:
        return dict(self.optional_trumps)

    def validate(self, players: int) -> None:
        # (a count set in code or a file as text, "30", met Python's "'<' not supported";
        # a fraction or True passed)
        for name in ("layout_cards", "hand_size", "hand_limit", "draw_limit", "pieces_per_size",
                     "box_cards", "first_player"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)) \
                    and not (name == "first_player" and isinstance(value, str)):
                raise ValueError(f"{name} must be a whole number, got {value!r}")
        if self.layout_for(players) not in (4, 9, 13):
            raise ValueError(f"layout_cards must be 4, 9 or 13, got {self.layout_cards}")
        if not 1 <= self.pieces_per_size <= 5:
            raise ValueError(f"pieces_per_size must be 1..5, got {self.pieces_per_size}")
        # (the counts parse_setting bounds when typed: set in code or a file, -3 cards in the
        # box dealt an empty box without a word)
        for name, low in (("box_cards", 0), ("hand_size", 1), ("hand_limit", 1),
                          ("draw_limit", 1)):
            count = getattr(self, name)
            if count is not None and count < low:
                raise ValueError(f"{name} must be {low} or more, got {count}")
        if self.doubles not in ("suits", "suits+majors", "off"):
            raise ValueError(f"wild_doubles must be 'suits', 'suits+majors' or 'off', got {self.doubles!r}")
        for card, name in self.optional_trumps:
            if name not in OPTIONAL_TRUMP_NAMES:
                known = ", ".join(sorted(OPTIONAL_TRUMP_NAMES))
                raise ValueError(f"unknown optional trump {name!r} for {card}: expected one of {known}")
        if isinstance(self.first_player, str) and self.first_player != "bid":
            raise ValueError(f"first_player must be a player index or 'bid', got {self.first_player!r}")
        if isinstance(self.first_player, int) and not 0 <= self.first_player < players:
            raise ValueError(f"first_player must be a seat from 0 to {players - 1}, got "
                             f"{self.first_player}")

    def check_deal(self, players: int) -> None:
        """Raise ValueError when a new game of ``players`` cannot be dealt with these
        settings: more cards asked of the deck than it has, a hand dealt over its limit."""
        self.validate(players)
        if self.hand_size > self.hand_limit:
            raise ValueError(f"hand_size {self.hand_size} is more than hand_limit "
                             f"{self.hand_limit}: no hand could ever draw")
        deck = 78 + len(self.extra_cards) - (22 if self.without_trumps else 0)
        layout, hands, box = self.layout_for(players), self.hand_size * players, self.box_amount
        if layout + hands + box > deck:
            raise ValueError(f"the deal needs {layout + hands + box} cards ({layout} on the "
                             f"board, {hands} in {players} hands, {box} in the box) and the "
                             f"deck has {deck}")

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["edition"] = self.edition.value
        d["extra_cards"] = list(self.extra_cards)
        d["optional_trumps"] = [list(p) for p in self.optional_trumps]
        return d

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Settings":
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise SavedGameError(f"unknown Zarcana settings: {', '.join(sorted(unknown))}")
        d = dict(data)
        try:
            d["edition"] = Edition.parse(d.get("edition", "looney"))
            d["extra_cards"] = tuple(d.get("extra_cards", ()))
            d["optional_trumps"] = tuple(tuple(p) for p in d.get("optional_trumps", ()))
        except (TypeError, ValueError) as exc:
            raise SavedGameError(f"bad Zarcana settings: {exc}") from None
        return cls(**d)


#: the settings :meth:`Settings.validate` checks the values of, naming each with its value
#: (the others, a yes/no, the extra cards, a colour, a trump's card, it takes as given)
VALIDATED_SETTINGS: frozenset[str] = frozenset({
    "layout_cards", "hand_size", "hand_limit", "draw_limit", "pieces_per_size", "box_cards",
    "first_player", "wild_doubles"})


class SettingError(CompanionError, ValueError):
    """A ``name=value`` setting that does not parse (the message quotes it)."""


#: what each setting a table may choose takes, in words (``Settings`` fields but the edition)
SETTING_VALUES: dict[str, str] = {
    "box_cards": "cards put back in the box unseen at setup: 0 or more (Looney: at least 3, "
                 "25 or 30 for a shorter game; 1996: 0)",
    "layout_cards": "cards of the starting board: 4, 9 or 13",
    "hand_size": "cards dealt to each hand: 1 or more",
    "hand_limit": "most cards a hand may hold after a draw: 1 or more",
    "draw_limit": "most cards one DRAW takes: 1 or more",
    "pieces_per_size": "pyramids of each size in a stash: 1 to 5",
    "extra_cards": "extra cards shuffled in: gateway, doppelganger (comma-separated), or none",
    "optional_trumps": "trumps with an optional power: CARD:NAME,... (e.g. major-01:alchemist), "
                       "or none",
    "without_trumps": "play without the 22 trumps: yes or no",
    "wild_doubles": "what two cards make a wild suit: suits, suits+majors or off",
    "start_on_unoccupied": "START only on a territory nobody occupies: yes or no",
    "first_player": "who starts: a seat number (0 first) or bid",
    "ghost_color": "a pyramid colour, the invisible player's when the Ghost is in play "
                   "(default clear)",
    "end_when_board_empty": "the game ends when the last territory is destroyed: yes or no",
}

_YES = {"yes": True, "true": True, "on": True, "1": True,
        "no": False, "false": False, "off": False, "0": False}


def setting_values(data: Mapping[str, Any]) -> dict[str, Any]:
    """Settings as stored in JSON (a game file's header) back to the values that differ from
    the defaults: lists are tuples again; the edition (said apart) and defaults are left
    out, so a header of every field (``play --record``) and one of the choices made
    (``run``) compare equal. Raises :class:`SettingError` for a name that is no setting."""
    chosen = {name: value for name, value in data.items() if name != "edition"}
    for name in chosen:
        if name not in SETTING_VALUES:
            raise SettingError(f"setting {name!r}: no such setting")
    try:
        given = Settings.from_dict(chosen)     # (its lists become tuples again)
    except SavedGameError as exc:
        raise SettingError(str(exc)) from None
    defaults = Settings()
    return {name: getattr(given, name) for name in chosen
            if getattr(given, name) != getattr(defaults, name)}


def format_settings(values: Mapping[str, Any]) -> str:
    """``name=value`` words as ``--setting`` takes them (the defaults: "none")."""
    def text(name: str, value: Any) -> str:
        if name == "extra_cards":
            return ",".join(str(x).removeprefix("extra-") for x in value) or "none"
        if name == "optional_trumps":
            return ",".join(f"{a}:{b}" for a, b in value) or "none"
        if isinstance(value, bool):
            return "yes" if value else "no"
        return str(value)

    return " ".join(f"{k}={text(k, v)}" for k, v in sorted(values.items())) or "none"


def parse_setting(text: str, *, not_here: Mapping[str, str] | None = None
                  ) -> tuple[str, Any]:
    """``name=value`` (a :data:`SETTING_VALUES` name; ``-`` may stand for ``_``) as the
    field and its typed value. Raises :class:`SettingError` quoting ``text``. ``not_here``:
    names this caller does not take, each with why (left out of the names offered)."""
    name, sep, raw = text.partition("=")
    name, raw = name.strip().replace("-", "_"), raw.strip()
    if not sep or not name:
        raise SettingError(f"setting {text!r}: expected NAME=VALUE, e.g. box_cards=30")
    refused = not_here or {}
    if name in refused:
        raise SettingError(f"setting {text!r}: {refused[name]}")
    if name not in SETTING_VALUES:
        known = ", ".join(sorted(set(SETTING_VALUES) - set(refused)))
        raise SettingError(f"setting {text!r}: no setting {name!r} (known: {known})")

    def bad() -> SettingError:
        return SettingError(f"setting {text!r}: {name} takes {SETTING_VALUES[name]}")

    def number(low: int, high: int | None = None) -> int:
        try:
            n = int(raw)
        except ValueError:
            raise bad() from None
        if n < low or (high is not None and n > high):
            raise bad()
        return n

    value: Any
    if name == "box_cards":
        value = number(0)
    elif name == "layout_cards":
        value = number(4, 13)
        if value not in (4, 9, 13):
            raise bad()
    elif name in ("hand_size", "hand_limit", "draw_limit"):
        value = number(1)
    elif name == "pieces_per_size":
        value = number(1, 5)
    elif name in ("without_trumps", "start_on_unoccupied", "end_when_board_empty"):
        if raw.lower() not in _YES:
            raise bad()
        value = _YES[raw.lower()]
    elif name == "wild_doubles":
        if raw not in ("suits", "suits+majors", "off"):
            raise bad()
        value = raw
    elif name == "first_player":
        value = raw if raw == "bid" else number(0, 5)
    elif name == "extra_cards":
        extras = [] if raw.lower() in ("", "none") else [x.strip() for x in raw.split(",")]
        value = tuple(x if x.startswith("extra-") else f"extra-{x}" for x in extras)
        if any(x not in ("extra-gateway", "extra-doppelganger") for x in value):
            raise bad()
        if len(set(value)) < len(value):
            raise SettingError(f"setting {text!r}: each extra card is in the deck once")
    elif name == "optional_trumps":
        pairs = [] if raw.lower() in ("", "none") else [x.strip() for x in raw.split(",")]
        out = []
        for pair in pairs:
            card, colon, power = (x.strip() for x in pair.partition(":"))
            try:
                trump = card_info(card).is_major
            except ValueError:
                trump = False
            if not colon or power not in OPTIONAL_TRUMP_NAMES or not trump:
                raise bad()
            out.append((card, power))
        value = tuple(out)
        if len({card for card, _ in value}) < len(value):
            raise SettingError(f"setting {text!r}: a trump can have one optional power only")
    else:   # ghost_color
        try:
            value = Color.parse(raw).value
        except ValueError:
            raise bad() from None
    return name, value


# --------------------------------------------------------------------------------------
# The rule catalogue. Each entry: plain words, and where each edition says it.
# --------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    words: str
    e1996: str
    looney: str


_RULES: dict[str, Rule] = {}


def _rule(rid: str, words: str, e1996: str, looney: str | None = None) -> None:
    _RULES[rid] = Rule(rid, words, e1996, looney if looney is not None else e1996)


T = "Turn options"
_rule("turn.wrong-player", "it is not this player's turn", T, "The eight turn options")
_rule("turn.game-over", "the game is over", "Declaring the end", "Ending the game")
_rule("turn.pending", "another decision must be made first", T, "The eight turn options")
_rule("turn.card-used", "a card may not be used twice in one turn",
      "Trump cards: multiple turn options do not allow a card to be used twice",
      "Trump cards (1996 clarification)")
_rule("start.has-pieces", "START is only for a player with no pieces on the board",
      "Minions start off the board (turn list lost; reconstructed)", "The eight turn options: Start")
_rule("start.not-territory", "a starting pyramid goes on a territory card",
      "Minions start off the board", "The eight turn options: Start")
_rule("start.occupied", "the starting pyramid goes on a territory nobody occupies",
      "Minions start off the board (reconstruction, a setting)", "The eight turn options: Start")
_rule("start.no-small", "no small pyramid left in the stash", "Minions", "The eight turn options: Start")
_rule("start.population", "a START may not make a space hold more than three pyramids",
      "Minions start off the board (population limit kept)",
      "Restriction icons: population limit (START's icons lost; the limit kept)")
_rule("draw.hand-limit", "drawing may not take the hand past six cards",
      "Hand limit of six", "Restriction icons: exceeding limits")
_rule("draw.too-many", "more cards than this option draws", T, "The eight turn options: Draw")
_rule("draw.empty", "no cards left to draw", "Draw pile and discard pile",
      "The eight turn options: Draw")
_rule("end.not-reshuffled", "the end may only be declared once the draw pile has been rebuilt from the discard pile",
      "Declaring the end of the game (technical note)", "Ending the game")
_rule("end.already", "the end has already been declared", "Declaring the end", "Ending the game")
_rule("reorient.not-own", "only your own pyramids can be reoriented", T, "The eight turn options: Reorient")
_rule("reorient.unchanged", "a reoriented pyramid must change its orientation", T,
      "The eight turn options: Reorient")
_rule("card.not-in-hand", "the card is not in the player's hand", "Card play", "Play a card")
_rule("card.no-power", "this card has no power to use", "Trump cards", "Card power table")
_rule("card.unnamed", "nobody has named this card: its power is not known until the players "
      "or the camera name it", "Card play", "Play a card")
_rule("card.wrong-power", "the card cannot be played as that power", "Suit cards and trumps",
      "Wild cards")
_rule("wild.not-pair", "a wild action needs two different cards of the same suit from the hand",
      "Wild doubles (setting)", "Wild cards: doubles")
_rule("wild.off", "discarding two cards for a wild action is not allowed in this game", "Wild doubles (setting)",
      "Wild cards: doubles")
_rule("royalty.table", "royalty is wild only when played from the hand; on the table it is its own suit",
      "Royalty (technical note)", "Wild cards: royalty")
_rule("fool.royalty", "royalty drawn by the Fool is not wild", "The Fool", "The Fool")
_rule("fool.must-play", "a card drawn by the Fool must be played if at all possible", "The Fool", "The Fool")
_rule("territory.not-occupying", "the acting pyramid must sit on the territory whose power it uses",
      "Card play: territorial action", "Use a territory power")
_rule("territory.face-down", "a face-down territory gives no power", "Wheel of Fortune",
      "Wheel of Fortune")
_rule("minion.missing", "there is no such pyramid there", "Minions", "Minions")
_rule("minion.not-own", "the acting pyramid must belong to the player", "Card play", "Play a card")
_rule("minion.needed", "this power is used by one of the player's pyramids", "Card play",
      "Play a card")
_rule("cups.upright", "a pyramid using Cups must stand upright", "CUPS: legal/illegal",
      "Restriction icons: upright only (Cups)")
_rule("cups.wasteland", "a pyramid in the wasteland cannot use Cups", "CUPS: legal/illegal",
      "Restriction icons: on a card only (Cups)")
_rule("cups.population", "cloning may not make a space hold more than three pyramids",
      "CUPS: population limit", "Restriction icons: population limit")
_rule("cups.no-larger", "no larger pyramid left in the stash to grow into", "CUPS: growing",
      "Cups: grow")
_rule("cups.max-size", "a large pyramid cannot grow", "CUPS: growing", "Cups: grow")
_rule("cups.clone-size", "a clone is the same size as the acting pyramid or smaller",
      "CUPS: duplicating", "Cups: clone")
_rule("cups.no-piece", "no pyramid of that size left in the stash", "Minions", "Minions")
_rule("wands.upright", "an upright pyramid has no direction to move in", "WANDS: illegal",
      "Restriction icons: lying only (Rods)")
_rule("wands.direction", "a pyramid moves only in the direction it points", "WANDS", "Rods: move")
_rule("wands.population", "the space moved into already holds three pyramids",
      "WANDS: population limit", "Restriction icons: population limit")
_rule("wands.void", "a pyramid may only move onto a territory or a wasteland space next to one",
      "WANDS: illegal (wasteland only next to wasteland)", "The wasteland")
_rule("wands.steps", "this power moves a pyramid once (twice for the Chariot)", "Chariot",
      "The Chariot")
_rule("move.adjacent", "a move goes to a neighbouring space", "WANDS", "Rods: move")
_rule("swords.direction", "a pyramid attacks only the space it targets", "SWORDS: legal",
      "Targeting")
_rule("swords.self", "a pyramid cannot attack itself", "SWORDS: illegal", "Swords: attack")
_rule("swords.invincible", "the larger pyramid is invincible: its owner has no smaller pyramid to reduce it to",
      "SWORDS: reducing a larger minion", "Invincible minions")
_rule("swords.occupied-territory", "only an unoccupied territory can be destroyed",
      "SWORDS: illegal", "Swords: attack")
_rule("swords.own-territory", "a pyramid may not destroy its own territory", "SWORDS: illegal",
      "Swords: attack")
_rule("swords.no-target", "there is nothing there to attack", "SWORDS", "Swords: attack")
_rule("swords.steps", "this power attacks once (up to twice with Death)", "Death", "Death")
_rule("pentacles.wasteland", "a pyramid in the wasteland cannot build territory",
      "PENTACLES: illegal", "Restriction icons: on a card only (Discs)")
_rule("pentacles.enemies", "territory can only be built where no other player's pyramid stands",
      "PENTACLES: illegal", "Discs: build territory")
_rule("pentacles.target", "a pyramid builds only on the space it targets", "PENTACLES: legal",
      "Targeting")
_rule("pentacles.void", "territory is built on a territory or a wasteland space next to one",
      "PENTACLES", "Discs: build territory")
_rule("pentacles.no-card", "there is no card left to build with", "Draw pile and discard pile",
      "Discs: build territory")
_rule("pentacles.drawn", "the card built is the one drawn from the top of the draw pile",
      "PENTACLES", "Discs: build territory")
_rule("sun.not-in-hand", "the Sun builds with a card from the player's hand", "The Sun", "The Sun")
_rule("alchemist.stack", "the Alchemist's second territory goes on top of the first",
      "Alchemist (optional trump)")
_rule("alchemist.twice", "the Alchemist builds twice, a stack of two territories",
      "Alchemist (optional trump)")
_rule("hierophant.own", "the Hierophant converts another player's pyramid", "Hierophant",
      "The Hierophant")
_rule("hierophant.size", "the replacement is the converted pyramid's size or smaller, from the stash",
      "Hierophant", "The Hierophant")
_rule("hierophant.territory", "the Hierophant attacks pyramids, not territory", "Hierophant",
      "The Hierophant")
_rule("emperor.tax", "the Emperor demands at most three cards, within the hand limit and what the owner holds",
      "Emperor", "The Emperor")
_rule("lovers.wasteland", "the Lovers place a pyramid on an empty wasteland space next to a territory",
      "Lovers", "The Lovers")
_rule("justice.player", "Justice trades hands with another player", "Justice", "Justice")
_rule("hanged.wasteland", "the Hanged Man needs a territory under the acting pyramid",
      "Hanged Man", "Hanged Man")
_rule("devil.range", "the Devil reorients pyramids in its own and the four neighbouring spaces",
      "Devil", "The Devil")
_rule("devil.twice", "each pyramid is reoriented once", "Devil", "The Devil")
_rule("tower.own", "the Tower may not destroy the attacker's own territory", "Tower (with Swords: own territory)",
      "The Tower")
_rule("moon.target", "the Moon moves a territory onto an empty territory, or an empty wasteland space next to another territory",
      "Moon", "The Moon")
_rule("moon.wasteland", "the Moon needs a territory under the acting pyramid", "Moon", "The Moon")
_rule("judgement.count", "Judgement draws at most three cards from the discard pile, within the hand limit",
      "Judgement", "Judgement")
_rule("priestess.count", "the High Priestess draws at most two cards, within the hand limit",
      "High Priestess", "High Priestess")
_rule("star.count", "the Star draws four cards (or all that are left)", "Star", "The Star")
_rule("world.target", "the World mimics a trump face up on the board", "World", "The World")
_rule("doppelganger.empty", "the Doppelganger copies the top card of the discard pile", "Doppelganger (optional trump)",
      "Gateway and Doppelganger")
_rule("gate.target", "the Gate teleports to another territory of the same suit (any trump for a trump)",
      "Gate (optional trump)")
_rule("gateway.target", "the Gateway teleports a pyramid to another territory", "Gateway",
      "The Gateway")
_rule("evil-eye.target", "the Evil Eye marks the territory the pyramid targets", "Evil Eye (optional trump)")
_rule("miser.cards", "the Miser discards one or more cards from the hand", "Miser (optional trump)")
_rule("catapult.range", "the Catapult hits up to two spaces away in the direction the pyramid points",
      "Catapult (optional trump)")
_rule("plague.cull", "each player destroys one of their own pyramids", "Plague (optional trump)")
_rule("plague.raze", "the announcer discards one empty territory", "Plague (optional trump)")
_rule("tax.pay", "the taxed player hands over exactly the cards demanded, from their own hand", "Emperor",
      "The Emperor")
_rule("bid.card", "a bid is a card from the bidder's hand", "Optional rule for deciding who starts",
      "Bidding for the first turn")
_rule("bid.mandatory", "a bid may not be withdrawn here: every player asked must bid (in 1996 "
      "always; else after everyone withdrew, or on a tie)", "Optional rule for deciding who starts",
      "Bidding for the first turn")
_rule("step.shape", "these steps do not fit this power", T, "The eight turn options")


def rule(rid: str) -> Rule:
    return _RULES[rid]


def all_rules() -> tuple[Rule, ...]:
    return tuple(_RULES.values())


def violation(rid: str, edition: Edition, detail: str = "") -> Violation:
    r = _RULES[rid]
    where = r.e1996 if edition is Edition.E1996 else r.looney
    reason = r.words if not detail else f"{r.words} ({detail})"
    return Violation(rid, reason, f"{edition.label}, {where}")

