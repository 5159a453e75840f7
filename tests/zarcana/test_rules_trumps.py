"""The 22 trumps, their powers and limits, per edition where they differ."""

from __future__ import annotations

from companion.games.zarcana import Edition

from conftest import (NINE, board, both_editions, hand, illegal, legal, pieces_at, pos, stack,
                      stash, top_card)

LOONEY, E1996 = Edition.LOONEY, Edition.E1996


# --------------------------------------------------------------------- 0 the Fool ---

@both_editions
def test_fool_draws_and_plays_two_random_cards(ed):
    st = pos(ed=ed, pieces={"1,1": "red1U"}, hands={"red": ["major-00"]},
             deck=["cups-06", "swords-02", "cups-05"])
    st = legal(st, "red: play major-00")
    assert st.to_move.value == "red" and st.in_flight == ("cups-05",)
    offered = {str(m) for m in st.legal_moves()}
    assert offered == {"red: fool cups-05 by red1U@1,1: grow", "red: fool cups-05 by red1U@1,1: clone 1"}
    st = legal(st, "red: fool cups-05 by red1U@1,1: grow")
    # the second card, swords-02, has nothing it could attack: it is discarded unplayed
    assert pieces_at(st, "1,1") == ["red2U"]
    assert st.discard == ("major-00", "cups-05", "swords-02")
    assert st.to_move.value == "blue" and st.in_flight == () and st.pending == ()
    assert st.deck == ("cups-06",)


@both_editions
def test_fool_must_play(ed):
    # the drawn card must be played if at all possible, even against friendly pyramids
    st = pos(ed=ed, pieces={"1,1": "red2U red1U"}, hands={"red": ["major-00"]},
             deck=["cups-06", "wands-02", "swords-02"])
    st = legal(st, "red: play major-00")
    illegal(st, "red: pass", "fool.must-play")
    illegal(st, "red: draw 1", "fool.must-play")
    st = legal(st, "red: fool swords-02 by red2U@1,1: attack red1U@1,1")
    assert pieces_at(st, "1,1") == ["red2U"]
    # wands-02: the only pyramid stands upright and cannot move: discarded
    assert st.discard[-1] == "wands-02" and st.to_move.value == "blue"


@both_editions
def test_fool_royalty(ed):
    st = pos(ed=ed, pieces={"1,1": "red1U"}, hands={"red": ["major-00"]},
             deck=["cups-06", "wands-02", "cups-13"])
    st = legal(st, "red: play major-00")
    illegal(st, "red: fool cups-13 as wands by red1U@1,1: move 1,2", "fool.royalty")
    legal(st, "red: fool cups-13 by red1U@1,1: grow")
    # a lying pyramid cannot use Cups: the queen is discarded and the Fool draws again
    lying = pos(ed=ed, pieces={"1,1": "red1E"}, hands={"red": ["major-00"]},
                deck=["cups-06", "wands-02", "cups-13"])
    lying = legal(lying, "red: play major-00")
    assert lying.discard == ("major-00", "cups-13") and lying.in_flight == ("wands-02",)
    lying = legal(lying, "red: fool wands-02 by red1E@1,1: move 2,1")
    assert pieces_at(lying, "2,1") == ["red1U"] and lying.to_move.value == "blue"


@both_editions
def test_fool_card_only_when_drawn(ed):
    st = pos(ed=ed, pieces={"1,1": "red1U"}, hands={"red": ["cups-05"]})
    illegal(st, "red: fool cups-05 by red1U@1,1: grow", "fool.must-play")


# ---------------------------------------------------------------- 2 High Priestess ---

@both_editions
def test_high_priestess_draw_two_and_take_a_turn(ed):
    st = pos(ed=ed, pieces={"1,1": "red1U"}, hands={"red": ["major-02", "cups-04"]},
             deck=["wands-09", "wands-08", "wands-07"])
    st = legal(st, "red: play major-02: draw 2")
    assert sorted(hand(st, "red")) == ["cups-04", "wands-07", "wands-08"]
    assert st.to_move.value == "red"                 # another turn option
    st = legal(st, "red: play cups-04 by red1U@1,1: grow")
    assert st.to_move.value == "blue"
    legal(pos(ed=ed, hands={"red": ["major-02"]}), "red: play major-02: draw 0")


@both_editions
def test_high_priestess_count(ed):
    st = pos(ed=ed, hands={"red": ["major-02"]})
    illegal(st, "red: play major-02: draw 3", "priestess.count")
    five = pos(ed=ed, board=board(c1_1="major-02"), pieces={"1,1": "red1U"},
               hands={"red": ["cups-02", "cups-03", "cups-04", "cups-05", "cups-06"]})
    illegal(five, "red: use major-02 by red1U@1,1: draw 2", "priestess.count")    # hand limit
    legal(five, "red: use major-02 by red1U@1,1: draw 1")


# ------------------------------------------------------------------------ 3 Empress ---

@both_editions
def test_empress_ignores_population_limit_and_wasteland(ed):
    st = pos(ed=ed, pieces={"1,1": "red1U blue1U blue2U"}, hands={"red": ["major-03"]})
    new = legal(st, "red: play major-03 by red1U@1,1: clone 1")
    assert len(pieces_at(new, "1,1")) == 4
    waste = pos(ed=ed, pieces={"3,1": "red2U"}, hands={"red": ["major-03"]})
    assert pieces_at(legal(waste, "red: play major-03 by red2U@3,1: grow"), "3,1") == ["red3U"]
    assert pieces_at(legal(waste, "red: play major-03 by red2U@3,1: clone 2"), "3,1") == ["red2U", "red2U"]


@both_editions
def test_empress_upright_only(ed):
    st = pos(ed=ed, pieces={"1,1": "red1E"}, hands={"red": ["major-03"]})
    illegal(st, "red: play major-03 by red1E@1,1: clone 1", "cups.upright")


# ------------------------------------------------------------------------ 4 Emperor ---

@both_editions
def test_emperor_attacks_and_takes_cards(ed):
    st = pos(ed=ed, pieces={"1,1": "red2E", "2,1": "blue1U"}, hands={
        "red": ["major-04"], "blue": ["cups-02", "cups-03", "cups-04"]})
    st = legal(st, "red: play major-04 by red2E@1,1: attack blue1U@2,1; tax 2")
    assert pieces_at(st, "2,1") == []
    assert st.to_move.value == "blue"                # the defender picks the cards
    illegal(st, "blue: pay cups-02", "tax.pay")
    illegal(st, "blue: pass", "turn.pending")
    st = legal(st, "blue: pay cups-02+cups-04")
    assert sorted(hand(st, "red")) == ["cups-02", "cups-04"]
    assert hand(st, "blue") == ["cups-03"]
    assert st.to_move.value == "blue" and st.current == 1     # now blue's own turn
    # also a normal sword
    legal(pos(ed=ed, pieces={"1,1": "red2E"}, hands={"red": ["major-04"]}),
          "red: play major-04 by red2E@1,1: attack @2,1")


@both_editions
def test_emperor_tax(ed):
    st = pos(ed=ed, pieces={"1,1": "red2E", "2,1": "blue1U"}, hands={
        "red": ["major-04", "wands-02", "wands-03", "wands-04", "wands-05"],
        "blue": ["cups-02", "cups-03", "cups-04", "cups-05"]})
    illegal(st, "red: play major-04 by red2E@1,1: attack blue1U@2,1; tax 4", "emperor.tax")
    # red will hold 4 after playing the Emperor: only 2 more within the limit of six
    illegal(st, "red: play major-04 by red2E@1,1: attack blue1U@2,1; tax 3", "emperor.tax")
    legal(st, "red: play major-04 by red2E@1,1: attack blue1U@2,1; tax 2")
    poor = pos(ed=ed, pieces={"1,1": "red2E", "2,1": "blue1U"}, hands={"red": ["major-04"], "blue": ["cups-02"]})
    illegal(poor, "red: play major-04 by red2E@1,1: attack blue1U@2,1; tax 2", "emperor.tax")
    own = pos(ed=ed, pieces={"1,1": "red2U red1U"}, hands={"red": ["major-04"], "blue": ["cups-02"]})
    illegal(own, "red: play major-04 by red2U@1,1: attack red1U@1,1; tax 1", "emperor.tax")
    terr = pos(ed=ed, pieces={"1,1": "red2E"}, hands={"red": ["major-04"], "blue": ["cups-02"]})
    illegal(terr, "red: play major-04 by red2E@1,1: attack @2,1; tax 1", "emperor.tax")


@both_editions
def test_emperor_attacks_invincible_minion_which_still_pays(ed):
    st = pos(ed=ed, pieces={"1,1": "red1E", "2,1": "blue3U", "0,0": "blue2U"},
             hands={"red": ["major-04"], "blue": ["cups-02"]}, pieces_per_size=1)
    if ed is LOONEY:
        # "cannot be attacked. The exception to this is Death": the 1996 Emperor's own
        # exception is not in the Looney text
        illegal(st, "red: play major-04 by red1E@1,1: attack blue3U@2,1; tax 1",
                "swords.invincible")
        return
    st = legal(st, "red: play major-04 by red1E@1,1: attack blue3U@2,1; tax 1")
    assert pieces_at(st, "2,1") == ["blue3U"]        # unaffected ...
    st = legal(st, "blue: pay cups-02")               # ... but pays
    assert hand(st, "red") == ["cups-02"]


# --------------------------------------------------------------------- 5 Hierophant ---

@both_editions
def test_hierophant_converts(ed):
    st = pos(ed=ed, pieces={"1,1": "red2E", "2,1": "blue3S"}, hands={"red": ["major-05"]})
    new = legal(st, "red: play major-05 by red2E@1,1: convert blue3S@2,1 to 3")
    assert pieces_at(new, "2,1") == ["red3U"]        # one of red's, standing up
    assert stash(new, "blue") == (5, 5, 5) and stash(new, "red") == (5, 4, 4)
    assert pieces_at(legal(st, "red: play major-05 by red2E@1,1: convert blue3S@2,1 to 1"), "2,1") == ["red1U"]


@both_editions
def test_hierophant_limits(ed):
    st = pos(ed=ed, pieces={"1,1": "red2E", "2,1": "blue2U red1U"}, hands={"red": ["major-05"]})
    illegal(st, "red: play major-05 by red2E@1,1: convert blue2U@2,1 to 3", "hierophant.size")
    illegal(st, "red: play major-05 by red2E@1,1: convert red1U@2,1 to 1", "hierophant.own")
    illegal(st, "red: play major-05 by red2E@1,1: attack blue2U@2,1", "step.shape")   # not a normal sword
    illegal(st, "red: play major-05 by red2E@1,1: convert blue2U@1,2 to 1", "swords.direction")


# ------------------------------------------------------------------------- 6 Lovers ---

@both_editions
def test_lovers_place_in_empty_wasteland(ed):
    st = pos(ed=ed, hands={"red": ["major-06"]})
    new = legal(st, "red: play major-06: place 3@3,1")    # no pyramid needed, any size
    assert pieces_at(new, "3,1") == ["red3U"] and stash(new, "red") == (5, 5, 4)


@both_editions
def test_lovers_wasteland(ed):
    st = pos(ed=ed, pieces={"3,1": "blue1U"}, hands={"red": ["major-06"]})
    illegal(st, "red: play major-06: place 1@3,1", "lovers.wasteland")   # not empty
    illegal(st, "red: play major-06: place 1@1,1", "lovers.wasteland")   # a territory
    illegal(st, "red: play major-06: place 1@5,5", "lovers.wasteland")   # the void


# ------------------------------------------------------------------------ 7 Chariot ---

@both_editions
def test_chariot_moves_twice_ignoring_orientation(ed):
    st = pos(ed=ed, pieces={"1,1": "red2U"}, hands={"red": ["major-07"]})
    new = legal(st, "red: play major-07 by red2U@1,1: move 2,1; move 3,1")
    assert pieces_at(new, "3,1") == ["red2U"]
    new = legal(pos(ed=ed, pieces={"1,1": "red2W"}, hands={"red": ["major-07"]}),
                "red: play major-07 by red2W@1,1: move 1,2")     # once, not where it points
    assert pieces_at(new, "1,2") == ["red2U"]                   # standing up at the end


@both_editions
def test_chariot_limits(ed):
    st = pos(ed=ed, pieces={"1,1": "red2U", "1,2": "blue1U blue1U blue2U"}, hands={"red": ["major-07"]})
    illegal(st, "red: play major-07 by red2U@1,1: move 2,1; move 2,2; move 1,2", "step.shape")
    illegal(st, "red: play major-07 by red2U@1,1: move 2,2", "move.adjacent")
    illegal(st, "red: play major-07 by red2U@1,1: move 1,2", "wands.population")
    illegal(st, "red: play major-07 by red2U@1,1: move 2,1; move 3,1; move 4,1", "step.shape")
    far = pos(ed=ed, pieces={"2,1": "red2U"}, hands={"red": ["major-07"]})
    illegal(far, "red: play major-07 by red2U@2,1: move 3,1; move 4,1", "wands.void")


# ----------------------------------------------------------------------- 8 Strength ---

@both_editions
def test_strength_grows_twice(ed):
    st = pos(ed=ed, pieces={"1,1": "red1U"}, hands={"red": ["major-08"]})
    assert pieces_at(legal(st, "red: play major-08 by red1U@1,1: grow; grow"), "1,1") == ["red3U"]
    assert pieces_at(legal(st, "red: play major-08 by red1U@1,1: clone 1; grow"), "1,1") == ["red1U", "red2U"]
    assert pieces_at(legal(st, "red: play major-08 by red1U@1,1: grow"), "1,1") == ["red2U"]


@both_editions
def test_strength_population_limit(ed):
    st = pos(ed=ed, pieces={"1,1": "red1U blue1U"}, hands={"red": ["major-08"]})
    illegal(st, "red: play major-08 by red1U@1,1: clone 1; clone 1", "cups.population")
    illegal(st, "red: play major-08 by red1U@1,1: grow; grow; grow", "step.shape")
    illegal(pos(ed=ed, pieces={"1,1": "red1E"}, hands={"red": ["major-08"]}),
            "red: play major-08 by red1E@1,1: grow", "cups.upright")


# ------------------------------------------------------------------------- 9 Hermit ---

@both_editions
def test_hermit_moves_ignoring_population_and_orientation(ed):
    st = pos(ed=ed, pieces={"1,1": "red1U", "2,1": "blue1U blue2U blue3U"}, hands={"red": ["major-09"]})
    new = legal(st, "red: play major-09 by red1U@1,1: move 2,1")
    assert pieces_at(new, "2,1") == ["blue1U", "blue2U", "blue3U", "red1U"]


@both_editions
def test_hermit_limits(ed):
    st = pos(ed=ed, pieces={"2,1": "red1U"}, hands={"red": ["major-09"]})
    illegal(st, "red: play major-09 by red1U@2,1: move 0,1", "move.adjacent")
    illegal(st, "red: play major-09 by red1U@2,1: move 3,1; move 2,1", "step.shape")
    w = pos(ed=ed, pieces={"3,1": "red1U"}, hands={"red": ["major-09"]})
    illegal(w, "red: play major-09 by red1U@3,1: move 4,1", "wands.void")


# ------------------------------------------------------------------ 10 Wheel of Fortune ---

@both_editions
def test_wheel_of_fortune_builds_face_down(ed):
    st = pos(ed=ed, pieces={"2,1": "red1E"}, hands={"red": ["major-10"]}, deck=["cups-02", "swords-09"])
    st = legal(st, "red: play major-10 by red1E@2,1: build 3,1")
    assert stack(st, "3,1") == ["~swords-09"]
    # a pyramid on a face-down territory has no territorial power
    st = pos(ed=ed, board=board(c3_1=["~swords-09"]), pieces={"3,1": "red1U"})
    illegal(st, "red: use swords-09 by red1U@3,1: attack @2,1", "territory.face-down")
    assert not any(getattr(m, "source", None) is not None and m.source.value == "use" for m in st.legal_moves())


@both_editions
def test_wheel_of_fortune_from_an_unknown_draw_pile_builds_an_unknown_card(ed):
    """The companion at a real table knows neither the draw pile nor the card the Wheel
    builds (the camera sees its back): the build is legal, the card unknown until named or
    turned up (it was refused as a card that could not be in the draw pile, and the live
    game stalled on it). A face-up build still shows its card."""
    unseen = ["?"] * (78 - len(NINE) - 1)       # (every card but the board's and red's)
    st = pos(ed=ed, pieces={"2,1": "red1E"}, hands={"red": ["major-10"]}, deck=unseen, box=[])
    new = legal(st, "red: play major-10 by red1E@2,1: build 3,1 =?", listed=False)
    assert stack(new, "3,1") == ["~?"]
    discs = pos(ed=ed, pieces={"2,1": "red1E"}, hands={"red": ["pentacles-12"]},
                deck=unseen, box=[])
    illegal(discs, "red: play pentacles-12 by red1E@2,1: build 3,1 =?", "pentacles.drawn")


@both_editions
def test_wheel_of_fortune_limits(ed):
    st = pos(ed=ed, pieces={"2,1": "red1E", "3,1": "blue1U"}, hands={"red": ["major-10"]})
    illegal(st, "red: play major-10 by red1E@2,1: build 3,1", "pentacles.enemies")
    w = pos(ed=ed, pieces={"3,1": "red1W"}, hands={"red": ["major-10"]})
    illegal(w, "red: play major-10 by red1W@3,1: build 2,1", "pentacles.wasteland")


# ------------------------------------------------------------------------ 11 Justice ---

@both_editions
def test_justice_trades_hands(ed):
    st = pos(["red", "blue", "green"], ed=ed, hands={
        "red": ["major-11", "cups-02"], "blue": ["wands-02"], "green": ["swords-02", "swords-03"]})
    new = legal(st, "red: play major-11: trade green")
    assert hand(new, "red") == ["swords-02", "swords-03"]
    assert hand(new, "green") == ["cups-02"]
    assert hand(new, "blue") == ["wands-02"]
    assert new.discard == ("major-11",)


@both_editions
def test_justice_player(ed):
    st = pos(["red", "blue"], ed=ed, hands={"red": ["major-11"]})
    illegal(st, "red: play major-11: trade red", "justice.player")
    illegal(st, "red: play major-11: trade green", "justice.player")


# --------------------------------------------------------------------- 12 Hanged Man ---

@both_editions
def test_hanged_man_destroys_self_space_and_fellows(ed):
    st = pos(ed=ed, board=board(c1_1=["cups-09", "major-12"]),
             pieces={"1,1": "red2U red1N blue3U", "3,1": "blue1U"})
    new = legal(st, "red: use major-12 by red2U@1,1: sacrifice")
    assert pieces_at(new, "1,1") == []
    assert stack(new, "1,1") == ["cups-09"]          # the card underneath stays
    assert new.discard == ("major-12",)
    assert stash(new, "red") == (5, 5, 5) and stash(new, "blue") == (4, 5, 5)


@both_editions
def test_hanged_man_wasteland(ed):
    st = pos(ed=ed, pieces={"3,1": "red1U"}, hands={"red": ["major-12"]})
    illegal(st, "red: play major-12 by red1U@3,1: sacrifice", "hanged.wasteland")


@both_editions
def test_hanged_man_last_card_kills_wasteland_neighbours(ed):
    st = pos(ed=ed, board={"0,0": "major-12"}, pieces={"0,0": "red1U", "1,0": "blue1U"})
    new = legal(st, "red: use major-12 by red1U@0,0: sacrifice")
    assert new.board == {} and new.pieces == {}


# -------------------------------------------------------------------------- 13 Death ---

@both_editions
def test_death_attacks_twice(ed):
    st = pos(ed=ed, pieces={"1,1": "red2E", "2,1": "blue1U blue3U"}, hands={"red": ["major-13"]})
    new = legal(st, "red: play major-13 by red2E@1,1: attack blue1U@2,1; attack blue3U@2,1")
    assert pieces_at(new, "2,1") == ["blue2U"]
    new = legal(st, "red: play major-13 by red2E@1,1: attack blue3U@2,1; attack blue2U@2,1")
    assert pieces_at(new, "2,1") == ["blue1U"]
    assert pieces_at(legal(st, "red: play major-13 by red2E@1,1: attack blue1U@2,1"), "2,1") == ["blue3U"]
    illegal(st, "red: play major-13 by red2E@1,1: attack blue1U@2,1; attack blue1U@2,1", "swords.no-target")


@both_editions
def test_death_kills_invincible(ed):
    st = pos(ed=ed, pieces={"1,1": "red1E", "2,1": "blue3U", "0,0": "blue2U"},
             hands={"red": ["major-13"]}, pieces_per_size=1)
    illegal(st, "red: play major-13 by red1E@1,1: attack blue3U@2,1", "swords.invincible")
    new = legal(st, "red: play major-13 by red1E@1,1: attack blue3U@2,1; attack blue3U@2,1")
    assert pieces_at(new, "2,1") == []
    assert stash(new, "blue") == (1, 0, 1)


@both_editions
def test_death_limits(ed):
    st = pos(ed=ed, pieces={"1,1": "red2E", "2,1": "blue1U blue1U blue1U"}, hands={"red": ["major-13"]})
    illegal(st, "red: play major-13 by red2E@1,1: attack blue1U@2,1; attack blue1U@2,1; "
                "attack blue1U@2,1", "step.shape")
    illegal(st, "red: play major-13 by red2E@1,1: attack blue1U@1,2", "swords.direction")


# --------------------------------------------------------------------- 14 Temperance ---

@both_editions
def test_temperance_builds_under_enemy_pieces(ed):
    st = pos(ed=ed, pieces={"1,1": "red1E", "2,1": "blue1U"}, hands={"red": ["major-14"]},
             deck=["swords-09"])
    new = legal(st, "red: play major-14 by red1E@1,1: build 2,1")
    assert stack(new, "2,1") == ["pentacles-07", "swords-09"]
    assert pieces_at(new, "2,1") == ["blue1U"]


@both_editions
def test_temperance_from_hand_in_the_wasteland(ed):
    st = pos(ed=ed, pieces={"3,1": "red1N"}, hands={"red": ["major-14"]}, deck=["swords-09"])
    new = legal(st, "red: play major-14 by red1N@3,1: build 3,0")
    assert stack(new, "3,0") == ["swords-09"]


@both_editions
def test_temperance_void(ed):
    st = pos(ed=ed, pieces={"3,1": "red1E"}, hands={"red": ["major-14"]})
    illegal(st, "red: play major-14 by red1E@3,1: build 4,1", "pentacles.void")
    illegal(st, "red: play major-14 by red1E@3,1: build 3,0", "pentacles.target")


# -------------------------------------------------------------------------- 15 Devil ---

@both_editions
def test_devil_reorients_nearby_pyramids_of_all_colours(ed):
    st = pos(ed=ed, pieces={"1,1": "red1U blue2N", "2,1": "blue1U", "1,0": "red3S"},
             hands={"red": ["major-15"]})
    new = legal(st, "red: play major-15 by red1U@1,1: turn blue2N@1,1>U; turn blue1U@2,1>W; "
                    "turn red3S@1,0>E; turn red1U@1,1>S", listed=False)
    assert pieces_at(new, "1,1") == ["blue2U", "red1S"]
    assert pieces_at(new, "2,1") == ["blue1W"] and pieces_at(new, "1,0") == ["red3E"]
    legal(st, "red: play major-15 by red1U@1,1: turn blue1U@2,1>W")


@both_editions
def test_devil_range(ed):
    st = pos(ed=ed, pieces={"1,1": "red1U blue1U", "2,2": "blue1U"}, hands={"red": ["major-15"]})
    illegal(st, "red: play major-15 by red1U@1,1: turn blue1U@2,2>W", "devil.range")
    illegal(st, "red: play major-15 by red1U@1,1: turn blue1U@1,1>W; turn blue1U@1,1>E", "devil.twice")
    illegal(st, "red: play major-15 by red1U@1,1: turn blue1U@1,1>U", "reorient.unchanged")


# -------------------------------------------------------------------------- 16 Tower ---

@both_editions
def test_tower_destroys_occupied_territory(ed):
    st = pos(ed=ed, board=board(c2_1=["cups-09", "swords-09"]),
             pieces={"1,1": "red1E", "2,1": "blue3U blue1U"}, hands={"red": ["major-16"]})
    new = legal(st, "red: play major-16 by red1E@1,1: attack @2,1")
    assert stack(new, "2,1") == ["cups-09"]
    assert pieces_at(new, "2,1") == ["blue1U", "blue3U"]     # the pyramids stay
    # the last card goes: the pyramids are left standing in the wasteland
    new = legal(pos(ed=ed, pieces={"1,1": "red1E", "2,1": "blue3U"}, hands={"red": ["major-16"]}),
                "red: play major-16 by red1E@1,1: attack @2,1")
    assert (2, 1) not in new.board and pieces_at(new, "2,1") == ["blue3U"]
    # also a normal sword
    legal(pos(ed=ed, pieces={"1,1": "red1E", "2,1": "blue1U"}, hands={"red": ["major-16"]}),
          "red: play major-16 by red1E@1,1: attack blue1U@2,1")


def test_tower_own_territory_1996():
    st = pos(ed=E1996, pieces={"1,1": "red1U"}, hands={"red": ["major-16"]})
    illegal(st, "red: play major-16 by red1U@1,1: attack @1,1", "tower.own")


def test_tower_own_territory_looney():
    # Looney: "regardless of who occupies it"
    st = pos(ed=LOONEY, pieces={"1,1": "red1U"}, hands={"red": ["major-16"]})
    new = legal(st, "red: play major-16 by red1U@1,1: attack @1,1")
    assert (1, 1) not in new.board and pieces_at(new, "1,1") == ["red1U"]


@both_editions
def test_tower_limits(ed):
    st = pos(ed=ed, pieces={"1,1": "red1E"}, hands={"red": ["major-16"]})
    illegal(st, "red: play major-16 by red1E@1,1: attack @1,2", "swords.direction")
    illegal(pos(ed=ed, pieces={"2,1": "red1E"}, hands={"red": ["major-16"]}),
            "red: play major-16 by red1E@2,1: attack @3,1", "swords.no-target")


# --------------------------------------------------------------------------- 17 Star ---

@both_editions
def test_star_draws_four_ignoring_hand_limit(ed):
    st = pos(ed=ed, hands={"red": ["major-17", "cups-02", "cups-03", "cups-04", "cups-05", "cups-06"]})
    new = legal(st, "red: play major-17: draw 4")
    assert len(hand(new, "red")) == 9


@both_editions
def test_star_count(ed):
    st = pos(ed=ed, hands={"red": ["major-17"]})
    illegal(st, "red: play major-17: draw 3", "star.count")
    short = pos(ed=ed, hands={"red": ["major-17"]}, deck=["cups-02", "cups-03"], discard=[])
    legal(short, "red: play major-17: draw 2")       # all that are left
    illegal(short, "red: play major-17: draw 4", "star.count")


# --------------------------------------------------------------------------- 18 Moon ---

@both_editions
def test_moon_moves_territory_with_its_pyramids(ed):
    st = pos(ed=ed, board=board(c1_1=["cups-09", "major-18"]),
             pieces={"1,1": "red1U blue2E", "0,0": "red3N"})
    new = legal(st, "red: use major-18 by red1U@1,1: transport 3,1")
    assert stack(new, "3,1") == ["major-18"]
    assert pieces_at(new, "3,1") == ["blue2U", "red1U"]       # all switched upright
    assert stack(new, "1,1") == ["cups-09"] and pieces_at(new, "1,1") == []
    onto = legal(st, "red: use major-18 by red1U@1,1: transport 2,2")    # onto an empty territory
    assert stack(onto, "2,2") == ["pentacles-10", "major-18"]


@both_editions
def test_moon_target(ed):
    st = pos(ed=ed, board=board(c1_1="major-18"), pieces={"1,1": "red1U", "2,2": "blue1U", "3,1": "blue1U"})
    illegal(st, "red: use major-18 by red1U@1,1: transport 2,2", "moon.target")   # occupied
    illegal(st, "red: use major-18 by red1U@1,1: transport 3,1", "moon.target")   # occupied wasteland
    illegal(st, "red: use major-18 by red1U@1,1: transport 6,6", "moon.target")   # the void
    illegal(st, "red: use major-18 by red1U@1,1: transport 1,1", "moon.target")
    # a wasteland space must touch another territory than the one carried away
    lone = pos(ed=ed, board={"0,0": "cups-02", "1,0": "major-18"}, pieces={"1,0": "red1U"})
    illegal(lone, "red: use major-18 by red1U@1,0: transport 2,0", "moon.target")
    legal(lone, "red: use major-18 by red1U@1,0: transport 0,1")


@both_editions
def test_moon_wasteland(ed):
    st = pos(ed=ed, pieces={"3,1": "red1U"}, hands={"red": ["major-18"]})
    illegal(st, "red: play major-18 by red1U@3,1: transport 3,0", "moon.wasteland")


# ---------------------------------------------------------------------------- 19 Sun ---

@both_editions
def test_sun_builds_from_hand(ed):
    st = pos(ed=ed, pieces={"1,1": "red1E"}, hands={"red": ["major-19", "wands-13"]})
    new = legal(st, "red: play major-19 by red1E@1,1: build 2,1 from wands-13")
    assert stack(new, "2,1") == ["pentacles-07", "wands-13"]
    assert hand(new, "red") == []


@both_editions
def test_sun_not_in_hand(ed):
    st = pos(ed=ed, pieces={"1,1": "red1E"}, hands={"red": ["major-19"], "blue": ["wands-13"]})
    illegal(st, "red: play major-19 by red1E@1,1: build 2,1 from wands-13", "sun.not-in-hand")
    swords = pos(ed=ed, pieces={"1,1": "red1E"}, hands={"red": ["pentacles-01", "wands-13"]})
    illegal(swords, "red: play pentacles-01 by red1E@1,1: build 2,1 from wands-13", "sun.not-in-hand")


@both_editions
def test_sun_from_a_hand_nobody_sees_does_not_build_itself(ed):
    """A hand nobody sees could hold any card not seen elsewhere, and the Sun played from it
    was in no hand and not yet on the discard pile while its build was checked: the Sun
    (and the World as the Sun) was listed building itself ("build 2,1 from major-19"), the
    card then lying on the board and on the pile at once. The card played is on its way to
    the pile; another card not seen elsewhere may still be built."""
    unknown = ["?"] * 3
    st = pos(ed=ed, board=board(c0_2="major-19"), pieces={"1,1": "red1E"},
             hands={"red": unknown, "blue": unknown}, deck=["?"] * 63, box=[])
    illegal(st, "red: play major-21 like major-19 by red1E@1,1: build 2,1 from major-21",
            "sun.not-in-hand")
    sun = pos(ed=ed, pieces={"1,1": "red1E"}, hands={"red": unknown, "blue": unknown},
              deck=["?"] * 63, box=[])
    illegal(sun, "red: play major-19 by red1E@1,1: build 2,1 from major-19", "sun.not-in-hand")
    new = legal(sun, "red: play major-19 by red1E@1,1: build 2,1 from wands-13")
    assert stack(new, "2,1") == ["pentacles-07", "wands-13"] and hand(new, "red") == ["?"]


def test_sun_draws_or_chooses_looney():
    st = pos(ed=LOONEY, pieces={"1,1": "red1E"}, hands={"red": ["major-19"]}, deck=["cups-02"])
    assert top_card(legal(st, "red: play major-19 by red1E@1,1: build 2,1"), "2,1") == "cups-02"


def test_sun_from_hand_only_1996():
    st = pos(ed=E1996, pieces={"1,1": "red1E"}, hands={"red": ["major-19"]}, deck=["cups-02"])
    illegal(st, "red: play major-19 by red1E@1,1: build 2,1", "sun.not-in-hand")


# ---------------------------------------------------------------------- 20 Judgement ---

@both_editions
def test_judgement_draws_from_the_discard_pile(ed):
    st = pos(ed=ed, hands={"red": ["major-20"]}, discard=["cups-02", "cups-03", "cups-04", "cups-05"])
    new = legal(st, "red: play major-20: draw 3")
    assert sorted(hand(new, "red")) == ["cups-03", "cups-04", "cups-05"]
    assert new.discard == ("cups-02", "major-20")      # placed on the pile after drawing


@both_editions
def test_judgement_count(ed):
    st = pos(ed=ed, hands={"red": ["major-20"]}, discard=["cups-02", "cups-03", "cups-04", "cups-05"])
    illegal(st, "red: play major-20: draw 4", "judgement.count")
    few = pos(ed=ed, hands={"red": ["major-20"]}, discard=["cups-02"])
    illegal(few, "red: play major-20: draw 2", "judgement.count")
    full = pos(ed=ed, hands={"red": ["major-20", "wands-02", "wands-03", "wands-04", "wands-05"]},
               discard=["cups-02", "cups-03", "cups-04"])
    illegal(full, "red: play major-20: draw 3", "judgement.count")     # 4 + 3 > 6
    legal(full, "red: play major-20: draw 2")


# -------------------------------------------------------------------------- 21 World ---

@both_editions
def test_world_mimics_face_up_trump(ed):
    st = pos(ed=ed, board=board(c0_0="major-13"), pieces={"1,1": "red1E", "2,1": "blue1U blue1U"},
             hands={"red": ["major-21"]})
    new = legal(st, "red: play major-21 like major-13 by red1E@1,1: attack blue1U@2,1; attack blue1U@2,1")
    assert pieces_at(new, "2,1") == []
    # a World territory works the same way
    terr = pos(ed=ed, board=board(c1_1="major-21", c0_0="major-03"), pieces={"1,1": "red1U blue1U blue1U"})
    assert len(pieces_at(legal(terr, "red: use major-21 like major-03 by red1U@1,1: clone 1"), "1,1")) == 4


@both_editions
def test_world_target(ed):
    st = pos(ed=ed, board=board(c0_0=["major-13", "cups-02"], c2_2=["~major-16"]),
             pieces={"1,1": "red1E", "2,1": "blue1U"}, hands={"red": ["major-21", "major-03"]})
    illegal(st, "red: play major-21 like major-13 by red1E@1,1: attack blue1U@2,1", "world.target")  # covered
    illegal(st, "red: play major-21 like major-16 by red1E@1,1: attack @2,1", "world.target")       # face down
    illegal(st, "red: play major-21 like major-03 by red1E@1,1: clone 1", "world.target")           # in a hand


@both_editions
def test_world_uses_a_trump_already_used_this_turn(ed):
    st = pos(ed=ed, board=board(c1_1="major-02", c0_0="major-21"), pieces={"1,1": "red1U", "0,0": "red1U"},
             hands={"red": []})
    st = legal(st, "red: use major-02 by red1U@1,1: draw 1")
    st = legal(st, "red: use major-21 like major-02 by red1U@0,0: draw 1")
    assert st.to_move.value == "red" and len(hand(st, "red")) == 2
    illegal(st, "red: use major-21 like major-02 by red1U@0,0: draw 1", "turn.card-used")


def test_world_not_a_suit_card_1996():
    st = pos(ed=E1996, board=board(c0_0="major-01"), pieces={"1,1": "red1E"}, hands={"red": ["major-21"]})
    illegal(st, "red: play major-21 like major-01 as wands by red1E@1,1: move 2,1", "world.target")


def test_world_as_magician_looney():
    # Looney: the power of any face-up Major Arcana, the Magician's wildness included
    st = pos(ed=LOONEY, board=board(c0_0="major-01"), pieces={"1,1": "red1E"}, hands={"red": ["major-21"]})
    legal(st, "red: play major-21 like major-01 as wands by red1E@1,1: move 2,1")


@both_editions
def test_moon_leaves_wasteland_neighbours_in_the_void(ed):
    st = pos(ed=ed, board={"0,0": "cups-02", "1,0": "major-18"}, pieces={"1,0": "red1U", "2,0": "blue1U"})
    new = legal(st, "red: use major-18 by red1U@1,0: transport 0,1")
    assert set(new.board) == {(0, 0), (0, 1)}
    assert pieces_at(new, "2,0") == [] and stash(new, "blue") == (5, 5, 5)


@both_editions
def test_world_mimics_the_fool(ed):
    st = pos(ed=ed, board=board(c0_0="major-00"), pieces={"1,1": "red1U"}, hands={"red": ["major-21"]},
             deck=["cups-06", "wands-02", "cups-05"])
    st = legal(st, "red: play major-21 like major-00")
    assert st.in_flight == ("cups-05",) and st.to_move.value == "red"
    st = legal(st, "red: fool cups-05 by red1U@1,1: clone 1")
    # wands-02 cannot move an upright pyramid: discarded, the turn ends
    assert st.discard == ("major-21", "cups-05", "wands-02") and st.to_move.value == "blue"
