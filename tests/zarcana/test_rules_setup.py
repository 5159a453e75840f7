"""Setup: seeded shuffle, box cards, the lattice layouts, hands and stashes (both editions)."""

from __future__ import annotations

from collections import Counter

import pytest

from companion.core.cards import tarot_deck
from companion.games.zarcana import Edition, Settings, new_game
from companion.games.zarcana.engine import dumps, invariant_errors

from conftest import EDITIONS, both_editions

NINE_CELLS = {(i, j) for i in range(3) for j in range(3)}
DIAMOND = NINE_CELLS | {(1, -1), (3, 1), (1, 3), (-1, 1)}


def all_cards(st) -> Counter:
    c: Counter = Counter()
    for s in st.board.values():
        c.update(card for card, _ in s)
    for h in st.hands.values():
        c.update(h)
    c.update(st.deck)
    c.update(st.discard)
    c.update(st.box)
    return c


@both_editions
def test_setup_seeded_shuffle(ed):
    a = new_game(3, edition=ed, seed=11)
    b = new_game(3, edition=ed, seed=11)
    c = new_game(3, edition=ed, seed=12)
    assert dumps(a) == dumps(b)
    assert dumps(a) != dumps(c)
    assert a.deck != c.deck


@both_editions
@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_setup_every_card_accounted_for(ed, players):
    st = new_game(players, edition=ed, seed=3)
    assert all_cards(st) == Counter(tarot_deck())
    assert invariant_errors(st) == []
    assert st.discard == ()


def test_setup_box_cards_looney():
    st = new_game(3, edition=Edition.LOONEY, seed=1)
    assert len(st.box) == 3                     # at least 3 back in the box, unseen
    short = new_game(3, edition=Edition.LOONEY, seed=1, box_cards=25)
    assert len(short.box) == 25                 # the shorter game
    assert len(short.deck) == 78 - 25 - 9 - 9
    assert all_cards(short) == Counter(tarot_deck())


def test_setup_box_cards_1996_none():
    st = new_game(3, edition=Edition.E1996, seed=1)
    assert st.box == ()
    assert len(st.deck) == 78 - 9 - 9


@both_editions
def test_setup_nine_card_lattice(ed):
    st = new_game(3, edition=ed, seed=2)
    assert set(st.board) == NINE_CELLS
    assert all(len(s) == 1 and s[0][1] for s in st.board.values())   # single cards, face up


def test_setup_two_players_four_cards_looney():
    st = new_game(2, edition=Edition.LOONEY, seed=2)
    assert set(st.board) == {(0, 0), (1, 0), (0, 1), (1, 1)}
    assert len(st.deck) == 78 - 3 - 4 - 6


def test_setup_two_players_nine_cards_1996():
    st = new_game(2, edition=Edition.E1996, seed=2)
    assert set(st.board) == NINE_CELLS


@pytest.mark.parametrize("players", [5, 6])
def test_setup_five_six_players_thirteen_cards_looney(players):
    st = new_game(players, edition=Edition.LOONEY, seed=2)
    assert set(st.board) == DIAMOND
    assert len(st.deck) == 78 - 3 - 13 - 3 * players


@pytest.mark.parametrize("players", [3, 4])
def test_setup_three_four_players_nine_cards_looney(players):
    assert set(new_game(players, edition=Edition.LOONEY, seed=2).board) == NINE_CELLS


def test_setup_thirteen_card_diamond_option_1996():
    st = new_game(4, edition=Edition.E1996, seed=2, layout_cards=13)
    assert set(st.board) == DIAMOND
    # the four extra cards touch the middle of each side of the 3x3 block
    for extra in DIAMOND - NINE_CELLS:
        assert sum(1 for c in NINE_CELLS if abs(c[0] - extra[0]) + abs(c[1] - extra[1]) == 1) == 1
    assert set(new_game(4, edition=Edition.E1996, seed=2).board) == NINE_CELLS   # only an option


def test_setup_layout_must_be_4_9_or_13():
    with pytest.raises(ValueError, match="layout_cards"):
        new_game(3, seed=1, layout_cards=7)


@both_editions
@pytest.mark.parametrize("players", [2, 3, 6])
def test_setup_hands_of_three(ed, players):
    st = new_game(players, edition=ed, seed=4)
    assert [len(h) for h in st.hands.values()] == [3] * players


@both_editions
def test_setup_stash_of_fifteen(ed):
    st = new_game(4, edition=ed, seed=4)
    assert all(s == (5, 5, 5) for s in st.stashes.values())
    assert st.pieces == {}


@both_editions
@pytest.mark.parametrize("trios", [3, 4])
def test_setup_fewer_trios(ed, trios):
    st = new_game(3, edition=ed, seed=4, pieces_per_size=trios)
    assert all(s == (trios, trios, trios) for s in st.stashes.values())
    with pytest.raises(ValueError, match="pieces_per_size"):
        new_game(3, edition=ed, seed=4, pieces_per_size=6)


@both_editions
@pytest.mark.parametrize("players", [1, 7])
def test_setup_two_to_six_players(ed, players):
    with pytest.raises(ValueError, match="2 to 6"):
        new_game(players, edition=ed, seed=1)


def test_setup_extra_cards_shuffled_in():
    st = new_game(3, seed=5, extra_cards=("extra-gateway", "extra-doppelganger"))
    assert all_cards(st) == Counter(tarot_deck(("extra-gateway", "extra-doppelganger")))
    assert sum(all_cards(st).values()) == 80


def test_setup_without_trumps_1996_option():
    st = new_game(3, edition=Edition.E1996, seed=5, without_trumps=True)
    cards = all_cards(st)
    assert sum(cards.values()) == 56
    assert not any(c.startswith("major-") for c in cards)


@both_editions
def test_setup_first_player_setting(ed):
    st = new_game(3, edition=ed, seed=5, first_player=2)
    assert st.to_move is st.players[2]
    with pytest.raises(ValueError):
        new_game(3, edition=ed, seed=5, first_player=3)


def test_setup_settings_round_trip():
    s = Settings(edition=Edition.E1996, layout_cards=13, optional_trumps=(("major-05", "assassin"),),
                 extra_cards=("extra-gateway",), first_player="bid")
    assert Settings.from_dict(s.to_dict()) == s


def test_setup_editions_listed():
    assert {e.value for e in EDITIONS} == {"1996", "looney"}


def test_the_open_decision_in_words():
    from dataclasses import replace

    from companion.core.cards import card_words
    from companion.core.pieces import Color
    from companion.games.zarcana.engine import pending_text
    from companion.games.zarcana.state import FoolPlay, TaxDue

    st = new_game(3, edition=Edition.LOONEY, seed=1)
    assert pending_text(replace(st, phase="bid")) == "bidding for the first turn"
    playing = replace(st, phase="play", pending=())
    assert pending_text(playing) is None
    owed = replace(playing, pending=(TaxDue(Color.RED, Color.BLUE, 2),))
    assert pending_text(owed) == "red owes blue 2 card(s) of tax"
    fool = replace(playing, pending=(FoolPlay("cups-03", 1),))
    assert pending_text(fool) == "the Fool drew cups-03 (3 of Cups): it must be played if possible"
    assert card_words("back") == "back" and card_words("major-00") == "major-00 (The Fool)"
