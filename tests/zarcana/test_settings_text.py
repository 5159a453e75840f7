"""Settings as a table types them (``companion run --setting NAME=VALUE``)."""

from __future__ import annotations

import re
from dataclasses import fields

import pytest

from companion.games.zarcana.rules import SETTING_VALUES, Settings, SettingError, parse_setting
from companion.games.zarcana.engine import new_game
from companion.games.zarcana.table import TableError, game_from_table


@pytest.mark.parametrize("text, expected", [
    ("box_cards=30", ("box_cards", 30)),
    ("box-cards = 3", ("box_cards", 3)),
    ("layout_cards=13", ("layout_cards", 13)),
    ("hand_size=4", ("hand_size", 4)),
    ("pieces_per_size=3", ("pieces_per_size", 3)),
    ("extra_cards=gateway,doppelganger", ("extra_cards",
                                          ("extra-gateway", "extra-doppelganger"))),
    ("extra_cards=none", ("extra_cards", ())),
    ("optional_trumps=major-01:alchemist,major-13:plague",
     ("optional_trumps", (("major-01", "alchemist"), ("major-13", "plague")))),
    ("without_trumps=yes", ("without_trumps", True)),
    ("end_when_board_empty=off", ("end_when_board_empty", False)),
    ("wild_doubles=suits+majors", ("wild_doubles", "suits+majors")),
    ("first_player=bid", ("first_player", "bid")),
    ("first_player=2", ("first_player", 2)),
    ("ghost_color=Clear", ("ghost_color", "clear")),
])
def test_a_setting_is_read_with_its_type(text: str, expected: tuple[str, object]) -> None:
    assert parse_setting(text) == expected


@pytest.mark.parametrize("text, words", [
    ("box_cards", "expected NAME=VALUE"),
    ("=3", "expected NAME=VALUE"),
    ("boxcards=3", "no setting 'boxcards' (known: box_cards,"),
    ("box_cards=-1", "box_cards takes cards put back in the box unseen"),
    ("box_cards=many", "box_cards takes"),
    ("layout_cards=10", "layout_cards takes cards of the starting board: 4, 9 or 13"),
    ("pieces_per_size=6", "pieces_per_size takes"),
    ("without_trumps=perhaps", "yes or no"),
    ("wild_doubles=any", "suits, suits+majors or off"),
    ("extra_cards=joker", "gateway, doppelganger"),
    ("optional_trumps=major-01:dragon", "CARD:NAME"),
    ("optional_trumps=cups-01:alchemist", "CARD:NAME"),
    ("ghost_color=pink", "a pyramid colour"),
    ("optional_trumps=major-1:alchemist", "CARD:NAME"),
    ("optional_trumps=major-01:alchemist,major-01:plague", "one optional power only"),
    ("extra_cards=gateway,gateway", "each extra card is in the deck once"),
    ("edition=1996", "no setting 'edition'"),
])
def test_a_bad_setting_quotes_itself_and_says_what_it_takes(text: str, words: str) -> None:
    with pytest.raises(SettingError) as info:
        parse_setting(text)
    assert repr(text) in str(info.value) and words in str(info.value)
    assert isinstance(info.value, ValueError)


def test_every_setting_but_the_edition_can_be_typed() -> None:
    assert set(SETTING_VALUES) == {f.name for f in fields(Settings)} - {"edition"}


def test_a_table_dealt_with_cards_set_aside_has_the_shorter_draw_pile() -> None:
    cards = {(i, j): f"cups-{1 + i + 3 * j:02d}" for i in range(3) for j in range(3)}
    usual = game_from_table(["red", "blue", "green"], cards)
    name, value = parse_setting("box_cards=30")
    short = game_from_table(["red", "blue", "green"], cards, **{name: value})
    assert len(usual.deck) - len(short.deck) == 30 - 3
    four = game_from_table(["red", "blue", "green"], cards, hand_size=4)
    assert four.settings.hand_size == 4 and len(four.deck) == len(usual.deck) - 3
    with pytest.raises(ValueError, match="first_player must be a seat from 0 to 2"):
        Settings(first_player=3).validate(3)


@pytest.mark.parametrize("chosen, words", [
    ({"box_cards": -3}, "box_cards must be 0 or more, got -3"),
    ({"hand_size": 0}, "hand_size must be 1 or more, got 0"),
    ({"hand_limit": -1}, "hand_limit must be 1 or more, got -1"),
    ({"draw_limit": 0}, "draw_limit must be 1 or more, got 0"),
])
def test_a_count_out_of_range_is_refused_by_the_engine_itself(chosen: dict[str, object],
                                                              words: str) -> None:
    """Typed settings (--setting, a demo's game.json) are checked as they are read; the
    engine's own check once let a game be dealt with -3 cards in the box (an empty box, no
    word) or with empty hands."""
    with pytest.raises(ValueError, match=re.escape(words)):
        Settings(**chosen).validate(3)   # type: ignore[arg-type]
    with pytest.raises(ValueError, match=re.escape(words)):
        new_game(3, **chosen)


@pytest.mark.parametrize("chosen, words", [
    ({"box_cards": 200}, "the deal needs 218 cards (9 on the board, 9 in 3 hands, 200 in the "
                         "box) and the deck has 78"),
    ({"hand_size": 30}, "hand_size 30 is more than hand_limit 6"),
    ({"hand_size": 23, "hand_limit": 23}, "the deal needs 81 cards"),
    ({"without_trumps": True, "box_cards": 40}, "the deal needs 58 cards (9 on the board, 9 "
                                                "in 3 hands, 40 in the box) and the deck has 56"),
])
def test_a_deal_the_deck_cannot_make_is_refused(chosen: dict[str, object], words: str) -> None:
    with pytest.raises(ValueError, match=re.escape(words)):
        Settings(**chosen).check_deal(3)   # type: ignore[arg-type]
    with pytest.raises(ValueError):
        new_game(3, **chosen)


def test_a_board_the_settings_cannot_have_dealt_is_refused() -> None:
    cards = {(i, j): f"cups-{1 + i + 3 * j:02d}" for i in range(3) for j in range(3)}
    with pytest.raises(TableError, match="not enough cards for the hands and the box: 69 "
                                         "unseen, 9 for the hands and 61 for the box"):
        game_from_table(["red", "blue", "green"], cards, box_cards=61)
    with_trump = dict(cards)
    with_trump[(1, 1)] = "major-05"
    with pytest.raises(TableError, match="major-05 on the starting board, but this game's "
                                         "deck has no such card"):
        game_from_table(["red", "blue", "green"], with_trump, without_trumps=True)


def test_stored_settings_come_back_as_values_and_as_words() -> None:
    from companion.games.zarcana.rules import format_settings, setting_values

    stored = {"extra_cards": ["extra-gateway"], "optional_trumps": [["major-01", "alchemist"]],
              "box_cards": 30, "without_trumps": True, "hand_size": 3, "edition": "looney"}
    values = setting_values(stored)       # (the edition and the defaults left out)
    assert values == {"extra_cards": ("extra-gateway",),
                      "optional_trumps": (("major-01", "alchemist"),),
                      "box_cards": 30, "without_trumps": True}
    words = format_settings(values)
    assert words == ("box_cards=30 extra_cards=gateway optional_trumps=major-01:alchemist "
                     "without_trumps=yes")
    # the words are what --setting takes
    assert dict(parse_setting(w) for w in words.split()) == values
    with pytest.raises(SettingError, match="no such setting"):
        setting_values({"colour": "red"})


@pytest.mark.parametrize("name, value", [("box_cards", "30"), ("hand_size", 2.5),
                                         ("draw_limit", True), ("pieces_per_size", "5"),
                                         ("first_player", 1.0)])
def test_the_settings_check_names_a_count_that_is_not_a_whole_number(name: str,
                                                                     value: object) -> None:
    """A count set in code or a file as text ("30") or a fraction: the settings check met
    it with Python's "'<' not supported between instances of 'str' and 'int'", or let it
    by (a first player 1.0, a draw limit True)."""
    with pytest.raises(ValueError, match=re.escape(f"{name} must be a whole number, got "
                                                   f"{value!r}")):
        Settings(**{name: value}).validate(3)    # type: ignore[arg-type]
