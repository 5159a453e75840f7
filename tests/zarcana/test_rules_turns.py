"""The turn options: start, play a card, use a territory, wild doubles, reorient, draw, pass,
declare the end and the final round; one card never used twice in a turn."""

from __future__ import annotations

import pytest

from companion.games.zarcana import Edition

from conftest import (board, both_editions, hand, illegal, legal, pieces_at, pos, stash)

LOONEY, E1996 = Edition.LOONEY, Edition.E1996


# ------------------------------------------------------------------------------ start ---

@both_editions
def test_start_small_upright_on_a_territory(ed):
    st = pos(ed=ed, pieces={"0,0": "blue1U"})
    new = legal(st, "red: start 2,2")
    assert pieces_at(new, "2,2") == ["red1U"]
    assert stash(new, "red") == (4, 5, 5)
    assert new.to_move.value == "blue"


@both_editions
def test_start_has_pieces(ed):
    st = pos(ed=ed, pieces={"0,0": "red1U"})
    illegal(st, "red: start 2,2", "start.has-pieces")


@both_editions
def test_start_not_territory(ed):
    st = pos(ed=ed)
    illegal(st, "red: start 3,1", "start.not-territory")      # wasteland
    illegal(st, "red: start 7,7", "start.not-territory")      # void


def test_start_occupied_1996():
    # 1996 (reconstructed turn list, a setting): start on a territory nobody occupies
    st = pos(ed=E1996, pieces={"1,1": "blue1U"})
    illegal(st, "red: start 1,1", "start.occupied")
    legal(st, "red: start 0,0")


def test_start_occupied_allowed_looney():
    # Looney: "any card territory"
    st = pos(ed=LOONEY, pieces={"1,1": "blue1U"})
    new = legal(st, "red: start 1,1")
    assert pieces_at(new, "1,1") == ["blue1U", "red1U"]


def test_start_population_limit_looney():
    st = pos(ed=LOONEY, pieces={"1,1": "blue1U blue2U blue3U"})
    illegal(st, "red: start 1,1", "start.population")


def test_start_setting_overrides_edition():
    st = pos(ed=LOONEY, pieces={"1,1": "blue1U"}, start_on_unoccupied=True)
    illegal(st, "red: start 1,1", "start.occupied")


# ------------------------------------------------------------------------------- draw ---

def test_draw_up_to_three_looney():
    st = pos(ed=LOONEY, hands={"red": ["cups-02"]})
    for n in (1, 2, 3):
        new = legal(st, f"red: draw {n}")
        assert len(hand(new, "red")) == 1 + n
    illegal(st, "red: draw 4", "draw.too-many")
    illegal(st, "red: draw 0", "draw.too-many")


def test_draw_up_to_two_1996():
    # the 1996 turn list was lost in extraction; the engine's reading is "draw up to 2" (a setting)
    st = pos(ed=E1996, hands={"red": ["cups-02"]})
    legal(st, "red: draw 2")
    illegal(st, "red: draw 3", "draw.too-many")
    st3 = pos(ed=E1996, hands={"red": ["cups-02"]}, draw_limit=3)
    legal(st3, "red: draw 3")


@both_editions
def test_draw_hand_limit(ed):
    # hand limit 6: with 4 cards only 2 may be drawn (not 3 then discard)
    st = pos(ed=ed, hands={"red": ["cups-02", "cups-03", "cups-04", "cups-05"]})
    new = legal(st, "red: draw 2")
    assert len(hand(new, "red")) == 6
    if ed is LOONEY:
        illegal(st, "red: draw 3", "draw.hand-limit")
    full = pos(ed=ed, hands={"red": ["cups-02", "cups-03", "cups-04", "cups-05", "cups-06", "cups-07"]})
    illegal(full, "red: draw 1", "draw.hand-limit")


@both_editions
def test_draw_takes_top_of_pile(ed):
    st = pos(ed=ed, deck=["cups-09", "cups-08", "cups-07"], hands={"red": []})
    new = legal(st, "red: draw 2")
    assert hand(new, "red") == ["cups-07", "cups-08"]
    assert new.deck == ("cups-09",)


@both_editions
def test_draw_empty(ed):
    st = pos(ed=ed, deck=[], discard=[])
    illegal(st, "red: draw 1", "draw.empty")
    st2 = pos(ed=ed, deck=["cups-02"], discard=[])
    illegal(st2, "red: draw 2", "draw.empty")


@both_editions
def test_draw_rebuilds_pile_from_discard(ed):
    st = pos(ed=ed, deck=["cups-02"], discard=["cups-03", "cups-04", "cups-05"])
    new = legal(st, "red: draw 2")
    assert len(hand(new, "red")) == 2
    assert hand(new, "red")[0] == "cups-02"        # the old pile first
    assert hand(new, "red")[1] in ("cups-03", "cups-04", "cups-05")
    assert new.reshuffles == 1 and new.discard == ()
    assert len(new.deck) == 2


# ------------------------------------------------------------------------------- pass ---

@both_editions
def test_pass_always_allowed(ed):
    st = pos(ed=ed)
    new = legal(st, "red: pass")
    assert new.to_move.value == "blue" and new.board == st.board


# --------------------------------------------------------------------------- reorient ---

@both_editions
def test_reorient_any_or_all_own_pyramids(ed):
    st = pos(ed=ed, pieces={"0,0": "red1U red2N", "2,2": "red3W blue1U"})
    new = legal(st, "red: reorient red1U@0,0>E red2N@0,0>U red3W@2,2>S", listed=False)
    assert pieces_at(new, "0,0") == ["red1E", "red2U"]
    assert pieces_at(new, "2,2") == ["blue1U", "red3S"]
    legal(st, "red: reorient red3W@2,2>N")


@both_editions
def test_reorient_not_own(ed):
    st = pos(ed=ed, pieces={"0,0": "red1U", "2,2": "blue1U"})
    illegal(st, "red: reorient blue1U@2,2>E", "reorient.not-own")


@both_editions
def test_reorient_unchanged(ed):
    st = pos(ed=ed, pieces={"0,0": "red1U"})
    illegal(st, "red: reorient red1U@0,0>U", "reorient.unchanged")


@both_editions
def test_reorient_missing_pyramid(ed):
    st = pos(ed=ed, pieces={"0,0": "red1U"})
    illegal(st, "red: reorient red2U@0,0>E", "minion.missing")
    illegal(st, "red: reorient red1U@0,0>E red1U@0,0>S", "devil.twice")


# -------------------------------------------------------------------- declare the end ---

@both_editions
def test_declare_end_only_after_reshuffle(ed):
    st = pos(ed=ed, reshuffles=0)
    illegal(st, "red: end", "end.not-reshuffled")
    legal(pos(ed=ed, reshuffles=1), "red: end")


@both_editions
def test_declare_end_not_when_pile_merely_empty(ed):
    # an empty draw pile with a discard pile is not yet a rebuilt pile (1996 technical note)
    st = pos(ed=ed, deck=[], discard=["cups-02", "cups-03"], reshuffles=0)
    illegal(st, "red: end", "end.not-reshuffled")
    drew = legal(st, "red: draw 1")           # needing a card rebuilds the pile ...
    assert drew.reshuffles == 1
    legal(drew, "blue: end")                  # ... and now the end may be declared


@both_editions
def test_declare_end_already(ed):
    st = pos(["red", "blue", "green"], ed=ed, reshuffles=1)
    st = legal(st, "red: end")
    illegal(st, "blue: end", "end.already")


@both_editions
def test_final_round(ed):
    # after the declaration every player has one more turn, the declarer last
    st = pos(["red", "blue", "green"], ed=ed, reshuffles=1, current="blue")
    st = legal(st, "blue: end")
    for who in ("green", "red", "blue"):
        assert not st.is_over
        assert st.to_move.value == who
        st = legal(st, f"{who}: pass")
    assert st.is_over and st.to_move is None
    assert st.legal_moves() == []
    illegal(st, "green: pass", "turn.game-over")


# ------------------------------------------------------------------ play / use a card ---

@both_editions
def test_play_card_from_hand(ed):
    st = pos(ed=ed, pieces={"1,1": "red1U"}, hands={"red": ["cups-05", "wands-02"]})
    new = legal(st, "red: play cups-05 by red1U@1,1: grow")
    assert pieces_at(new, "1,1") == ["red2U"]
    assert hand(new, "red") == ["wands-02"]
    assert new.discard[-1] == "cups-05"


@both_editions
def test_card_not_in_hand(ed):
    st = pos(ed=ed, pieces={"1,1": "red1U"}, hands={"red": ["wands-02"], "blue": ["cups-05"]})
    illegal(st, "red: play cups-05 by red1U@1,1: grow", "card.not-in-hand")


@both_editions
def test_use_territory_power(ed):
    st = pos(ed=ed, board=board(c1_1="cups-05"), pieces={"1,1": "red1U"})
    new = legal(st, "red: use cups-05 by red1U@1,1: clone 1")
    assert pieces_at(new, "1,1") == ["red1U", "red1U"]
    assert new.board == st.board and new.discard == ()      # the territory stays


@both_editions
def test_territory_not_occupying(ed):
    st = pos(ed=ed, board=board(c1_1="cups-05"), pieces={"0,0": "red1U", "1,1": "blue1U"})
    illegal(st, "red: use cups-05 by red1U@0,0: grow", "territory.not-occupying")


@both_editions
def test_territory_face_down(ed):
    st = pos(ed=ed, board=board(c1_1=["~cups-05"]), pieces={"1,1": "red1U"})
    illegal(st, "red: use cups-05 by red1U@1,1: grow", "territory.face-down")


@both_editions
def test_territory_only_top_card(ed):
    st = pos(ed=ed, board=board(c1_1=["cups-05", "swords-05"]), pieces={"1,1": "red1U"})
    illegal(st, "red: use cups-05 by red1U@1,1: grow", "territory.not-occupying")
    legal(pos(ed=ed, board=board(c1_1=["swords-05", "cups-05"]), pieces={"1,1": "red1U"}),
          "red: use cups-05 by red1U@1,1: grow")


@both_editions
def test_minion_missing_not_own_needed(ed):
    st = pos(ed=ed, pieces={"1,1": "red1U blue1U"}, hands={"red": ["cups-05"]})
    illegal(st, "red: play cups-05 by red2U@1,1: grow", "minion.missing")
    illegal(st, "red: play cups-05 by blue1U@1,1: grow", "minion.not-own")
    illegal(st, "red: play cups-05: grow", "minion.needed")


@both_editions
def test_card_wrong_power(ed):
    st = pos(ed=ed, pieces={"1,1": "red1U"}, hands={"red": ["swords-05"]})
    illegal(st, "red: play swords-05 as cups by red1U@1,1: grow", "card.wrong-power")


@both_editions
def test_step_shape(ed):
    st = pos(ed=ed, pieces={"1,1": "red1U", "2,1": "blue1U"}, hands={"red": ["cups-05"]})
    illegal(st, "red: play cups-05 by red1U@1,1: grow; grow", "step.shape")        # Cups once
    illegal(st, "red: play cups-05 by red1U@1,1: move 2,1", "step.shape")          # not a Cups step
    illegal(st, "red: play cups-05 by red1U@1,1", "step.shape")                    # no step at all


# ------------------------------------------------------------------ one use per turn ---

@both_editions
def test_card_never_used_twice_in_a_turn(ed):
    # High Priestess gives a second turn option; her territory cannot be used again
    st = pos(ed=ed, board=board(c1_1="major-02"), pieces={"1,1": "red1U"},
             hands={"red": []}, deck=["cups-09", "cups-08", "cups-07", "cups-06", "cups-05", "cups-04"])
    st = legal(st, "red: use major-02 by red1U@1,1: draw 2")
    assert st.to_move.value == "red"
    illegal(st, "red: use major-02 by red1U@1,1: draw 1", "turn.card-used")
    st = legal(st, "red: draw 1")
    assert st.to_move.value == "blue"
    # next turn the card is fresh again
    st = legal(st, "blue: pass")
    legal(st, "red: use major-02 by red1U@1,1: draw 2")


# ----------------------------------------------------------------- wild doubles/royalty ---

@both_editions
def test_wild_doubles_two_of_a_suit(ed):
    st = pos(ed=ed, pieces={"1,1": "red1E"}, hands={"red": ["cups-03", "cups-07", "wands-02"]})
    new = legal(st, "red: wild cups-03+cups-07 as wands by red1E@1,1: move 2,1")
    assert pieces_at(new, "2,1") == ["red1U"]
    assert hand(new, "red") == ["wands-02"]
    assert new.discard == ("cups-03", "cups-07")


@both_editions
def test_wild_not_pair(ed):
    st = pos(ed=ed, pieces={"1,1": "red1E"}, hands={"red": ["cups-03", "wands-07"]})
    illegal(st, "red: wild cups-03+wands-07 as wands by red1E@1,1: move 2,1", "wild.not-pair")


@both_editions
def test_wild_cards_not_in_hand(ed):
    st = pos(ed=ed, pieces={"1,1": "red1E"}, hands={"red": ["cups-03"], "blue": ["cups-07"]})
    illegal(st, "red: wild cups-03+cups-07 as wands by red1E@1,1: move 2,1", "card.not-in-hand")


@both_editions
def test_wild_is_a_suit_power_only(ed):
    st = pos(ed=ed, pieces={"1,1": "red1U"}, hands={"red": ["cups-03", "cups-07"]})
    illegal(st, "red: wild cups-03+cups-07 as empress by red1U@1,1: grow", "card.wrong-power")


def test_wild_doubles_majors_count_as_one_suit_looney():
    st = pos(ed=LOONEY, pieces={"1,1": "red1E"}, hands={"red": ["major-12", "major-17"]})
    legal(st, "red: wild major-12+major-17 as wands by red1E@1,1: move 2,1")


def test_wild_doubles_majors_not_a_suit_1996():
    st = pos(ed=E1996, pieces={"1,1": "red1E"}, hands={"red": ["major-12", "major-17"]})
    illegal(st, "red: wild major-12+major-17 as wands by red1E@1,1: move 2,1", "wild.not-pair")


@both_editions
def test_wild_off(ed):
    st = pos(ed=ed, pieces={"1,1": "red1E"}, hands={"red": ["cups-03", "cups-07"]}, wild_doubles="off")
    illegal(st, "red: wild cups-03+cups-07 as wands by red1E@1,1: move 2,1", "wild.off")


@both_editions
@pytest.mark.parametrize("royal", ["cups-11", "wands-12", "swords-13", "pentacles-14"])
def test_royalty_wild_from_hand(ed, royal):
    st = pos(ed=ed, pieces={"1,1": "red1E", "2,1": "blue1U"}, hands={"red": [royal]})
    legal(st, f"red: play {royal} as swords by red1E@1,1: attack blue1U@2,1")
    legal(st, f"red: play {royal} as wands by red1E@1,1: move 2,1")
    up = pos(ed=ed, pieces={"1,1": "red1U"}, hands={"red": [royal]})
    legal(up, f"red: play {royal} as cups by red1U@1,1: grow")
    legal(up, f"red: play {royal} as pentacles by red1U@1,1: build 1,1")


@both_editions
def test_royalty_table(ed):
    # royalty on the table is only its own suit
    st = pos(ed=ed, board=board(c1_1="cups-13"), pieces={"1,1": "red1E"})
    illegal(st, "red: use cups-13 as wands by red1E@1,1: move 2,1", "royalty.table")
    up = pos(ed=ed, board=board(c1_1="cups-13"), pieces={"1,1": "red1U"})
    legal(up, "red: use cups-13 by red1U@1,1: grow")


@both_editions
def test_magician_wild_from_hand_and_territory(ed):
    st = pos(ed=ed, board=board(c1_1="major-01"), pieces={"1,1": "red1E", "2,1": "blue1U"})
    for power, step in (("wands", "move 2,1"), ("swords", "attack blue1U@2,1")):
        legal(st, f"red: use major-01 as {power} by red1E@1,1: {step}")
    st2 = pos(ed=ed, board=board(c0_0="major-17"), pieces={"1,1": "red1U"}, hands={"red": ["major-01"]})
    new = legal(st2, "red: play major-01 as cups by red1U@1,1: grow")
    assert pieces_at(new, "1,1") == ["red2U"]
    illegal(st2, "red: play major-01 as empress by red1U@1,1: grow", "card.wrong-power")


@both_editions
def test_turn_wrong_player(ed):
    st = pos(ed=ed, current="blue")
    illegal(st, "red: pass", "turn.wrong-player")



@both_editions
def test_wild_doubles_royalty_pair(ed):
    st = pos(ed=ed, pieces={"1,1": "red1U"}, hands={"red": ["swords-11", "swords-14"]})
    new = legal(st, "red: wild swords-11+swords-14 as cups by red1U@1,1: grow")
    assert pieces_at(new, "1,1") == ["red2U"] and hand(new, "red") == []
