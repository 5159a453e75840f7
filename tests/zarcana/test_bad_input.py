"""Bad input: malformed move strings, unknown card ids, moves for the wrong player and
corrupt saved games each give a clear error naming the problem, never a stray traceback."""

from __future__ import annotations

import json

import pytest

from companion.core.errors import CompanionError, IllegalMoveError, NotationError, SavedGameError
from companion.games.zarcana import new_game, parse_move
from companion.games.zarcana.engine import dumps, from_dict, loads, position, to_dict

from conftest import NINE, pos

MALFORMED = [
    "",
    "red",
    "red:",
    "red: : grow",
    "pink: draw 3",
    "red draw 3",
    "red: fly 1,1",
    "red: draw many",
    "red: draw 3 4",
    "red: start 1;1",
    "red: start",
    "red: pass now",
    "red: play",
    "red: play swords-05 by red9U@1,1: attack blue1U@2,1",
    "red: play swords-05 by red2X@1,1: attack @2,1",
    "red: play swords-05 by red2E: attack @2,1",
    "red: play swords-05 by red2E@1,1: attack",
    "red: play swords-05 by red2E@1,1: attack blue1U@2,1;",
    "red: play swords-05 by red2E@1,1: explode",
    "red: play cups-05 as banana by red1U@1,1: grow",
    "red: play swords-05 by: attack",
    "red: play swords-05 with red2E@1,1: attack @2,1",
    "red: reorient red1U@1,1",
    "red: reorient red1U@1,1>Q",
    "red: play swords-05 by red2E@1,1: place x@1,1",
    "red: play swords-05 by red2E@1,1: convert blue1U@1,1 to",
    "red: play extra-doppelganger by red2E@1,1: move 2,1",  # copies what? (no like CARD)
    "red: pay",
    "red: cull",
]


@pytest.mark.parametrize("text", MALFORMED)
def test_malformed_move_string(text):
    with pytest.raises(NotationError) as info:
        parse_move(text)
    err = info.value
    assert isinstance(err, ValueError) and isinstance(err, CompanionError)
    assert repr(text.strip()) in str(err) or text.strip() in str(err)
    assert err.text == text.strip()


@pytest.mark.parametrize("text", ["red: fly 1,1", "red: play cups-15 by red1U@1,1: grow", ""])
def test_malformed_move_through_check_and_apply(text):
    st = pos()
    with pytest.raises(NotationError, match="bad move|unknown card id"):
        st.check(text)
    with pytest.raises(NotationError):
        st.apply(text)


@pytest.mark.parametrize("text, card", [
    ("red: play cups-15 by red1U@1,1: grow", "cups-15"),
    ("red: play major-22", "major-22"),
    ("red: bid joker", "joker"),
    ("red: wild cups-03+cups-00 as wands by red1E@1,1: move 2,1", "cups-00"),
    ("red: play major-21 like major-99 by red1U@1,1: grow", "major-99"),
    ("red: play major-19 by red1U@1,1: build 1,1 from wands-15", "wands-15"),
    ("blue: pay cups-02+wand-03", "wand-03"),
])
def test_unknown_card_id(text, card):
    with pytest.raises(NotationError) as info:
        parse_move(text)
    assert f"unknown card id {card!r}" in str(info.value)
    assert text in str(info.value)


def test_unknown_card_id_in_a_position():
    with pytest.raises(NotationError, match="'cups-99'"):
        position(["red", "blue"], board={"0,0": "cups-99"})
    with pytest.raises(NotationError, match="'tower'"):
        position(["red", "blue"], board=dict(NINE), hands={"red": ["tower"]})


def test_move_for_the_wrong_player():
    st = pos(pieces={"1,1": "blue1U"}, current="red")
    verdict = st.check("blue: pass")
    assert not verdict.legal and verdict.rules == ("turn.wrong-player",)
    assert "blue moved, red is to move" in verdict.explain()
    with pytest.raises(IllegalMoveError) as info:
        st.apply("blue: pass")
    assert info.value.verdict.rules == ("turn.wrong-player",)
    assert "not this player's turn" in str(info.value)


def test_move_for_a_player_not_in_the_game():
    st = pos()
    verdict = st.check("green: pass")
    assert verdict.rules == ("turn.wrong-player",)


def test_illegal_move_error_explains():
    st = pos(pieces={"1,1": "red1E"}, hands={"red": ["cups-04"]})
    with pytest.raises(IllegalMoveError) as info:
        st.apply("red: play cups-04 by red1E@1,1: grow")
    assert "must stand upright" in str(info.value)
    assert "red: play cups-04 by red1E@1,1: grow: illegal" in str(info.value)


# ------------------------------------------------------------------------- saved games ---

def _save() -> dict:
    st = new_game(3, seed=21)
    st = st.apply(st.legal_moves()[0])
    return to_dict(st)


def test_saved_game_round_trip():
    data = _save()
    assert to_dict(from_dict(json.loads(json.dumps(data)))) == data


@pytest.mark.parametrize("text, words", [
    ("{not json", "not valid JSON"),
    ("", "not valid JSON"),
    ("[1, 2]", "expected a JSON object"),
    ('{"game": "chess", "version": 1}', "not a Zarcana game"),
    ('{"game": "zarcana", "version": 99}', "unsupported save version"),
])
def test_corrupt_saved_game_text(text, words):
    with pytest.raises(SavedGameError, match=words):
        loads(text, name="game.json")
    with pytest.raises(SavedGameError, match="game.json"):
        loads(text, name="game.json")


@pytest.mark.parametrize("field", ["settings", "players", "seed", "board", "pieces", "stashes", "hands",
                                   "deck", "discard", "box", "marks", "phase", "current", "pending",
                                   "history", "bidding"])
def test_corrupt_saved_game_missing_field(field):
    data = _save()
    del data[field]
    with pytest.raises(SavedGameError) as info:
        from_dict(data)
    assert repr(field) in str(info.value)


@pytest.mark.parametrize("field, value", [
    ("players", 5),
    ("players", ["red", "mauve"]),
    ("seed", "abc"),
    ("board", [["1,1", "cups-03"]]),
    ("board", [["x,y", [["cups-03", True]]]]),
    ("board", [["1,1", []]]),
    ("pieces", [["1,1", ["red7U"]]]),
    ("stashes", {"red": "five"}),
    ("hands", {"red": 3}),
    ("phase", "dancing"),
    ("current", 9),
    ("current", "first"),
    ("pending", [{"kind": "teleport"}]),
    ("settings", {"edition": "2042"}),
    ("settings", {"colour_of_the_moon": "blue"}),
    ("bidding", {"eligible": ["red"]}),
    ("marks", "pentacles-07"),
    ("marks", ["9,9"]),                 # no territory there
])
def test_corrupt_saved_game_wrong_types(field, value):
    data = _save()
    data[field] = value
    with pytest.raises(SavedGameError) as info:
        from_dict(data)
    assert "setting" in str(info.value) if field == "settings" else repr(field) in str(info.value)


def test_corrupt_saved_game_unknown_card():
    data = _save()
    data["deck"] = data["deck"][:-1] + ["cups-15"]
    with pytest.raises(SavedGameError, match="cups-15"):
        from_dict(data)
    data = _save()
    data["board"][0][1][0][0] = "tower"
    with pytest.raises(SavedGameError, match="'board'"):
        from_dict(data)


def test_corrupt_saved_game_inconsistent_card_counts():
    data = _save()
    data["deck"].append(data["deck"][0])                      # a card twice
    with pytest.raises(SavedGameError, match="inconsistent position.*appear twice"):
        from_dict(data)
    data = _save()
    data["deck"].pop()                                        # a card lost
    with pytest.raises(SavedGameError, match="inconsistent position.*unaccounted"):
        from_dict(data)


def test_corrupt_saved_game_inconsistent_pyramids():
    data = _save()
    data["stashes"]["red"] = [5, 5, 5]
    data["pieces"] = [["1,1", ["red1U"]]]                     # 16 red pyramids
    with pytest.raises(SavedGameError, match="inconsistent position.*red has"):
        from_dict(data)
    data = _save()
    data["stashes"] = {c: [5, 5, 5] for c in data["stashes"]}
    data["stashes"]["red"] = [4, 5, 5]
    data["pieces"] = [["9,9", ["red1U"]]]                     # far out in the void
    with pytest.raises(SavedGameError, match="void"):
        from_dict(data)


def test_corrupt_saved_game_is_never_a_traceback():
    """Every truncation of a save gives SavedGameError (not KeyError, IndexError...)."""
    text = dumps(new_game(2, seed=3))
    for cut in range(0, len(text), max(1, len(text) // 97)):
        with pytest.raises(SavedGameError):
            loads(text[:cut])
