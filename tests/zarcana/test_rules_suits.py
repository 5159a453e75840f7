"""The four suit actions with every legality condition (shared by both editions).

Board: the 3x3 block NINE (cells 0..2 x 0..2); 3,1 is wasteland east of 2,1; 4,1 is void.
"""

from __future__ import annotations


from conftest import (board, both_editions, hand, illegal, legal, pieces_at, pos, stack, stash,
                      top_card)


# ------------------------------------------------------------------------------- CUPS ---

@both_editions
def test_cups_grow(ed):
    st = pos(ed=ed, pieces={"1,1": "red1U"}, hands={"red": ["cups-04"]})
    assert stash(st, "red") == (4, 5, 5)
    new = legal(st, "red: play cups-04 by red1U@1,1: grow")
    assert pieces_at(new, "1,1") == ["red2U"]
    assert stash(new, "red") == (5, 4, 5)          # the small goes back, a medium comes out
    big = pos(ed=ed, board=board(c1_1="cups-05"), pieces={"1,1": "red2U"})
    assert pieces_at(legal(big, "red: use cups-05 by red2U@1,1: grow"), "1,1") == ["red3U"]


@both_editions
def test_cups_clone_same_size_or_smaller(ed):
    st = pos(ed=ed, pieces={"1,1": "red2U"}, hands={"red": ["cups-04"]})
    assert pieces_at(legal(st, "red: play cups-04 by red2U@1,1: clone 2"), "1,1") == ["red2U", "red2U"]
    new = legal(st, "red: play cups-04 by red2U@1,1: clone 1")
    assert pieces_at(new, "1,1") == ["red1U", "red2U"]
    assert stash(new, "red") == (4, 4, 5)
    illegal(st, "red: play cups-04 by red2U@1,1: clone 3", "cups.clone-size")


@both_editions
def test_cups_upright_only(ed):
    st = pos(ed=ed, pieces={"1,1": "red1E"}, hands={"red": ["cups-04"]})
    illegal(st, "red: play cups-04 by red1E@1,1: grow", "cups.upright")
    illegal(st, "red: play cups-04 by red1E@1,1: clone 1", "cups.upright")


@both_editions
def test_cups_wasteland(ed):
    st = pos(ed=ed, pieces={"3,1": "red1U"}, hands={"red": ["cups-04"]})
    illegal(st, "red: play cups-04 by red1U@3,1: grow", "cups.wasteland")
    illegal(st, "red: play cups-04 by red1U@3,1: clone 1", "cups.wasteland")


@both_editions
def test_cups_population_limit(ed):
    st = pos(ed=ed, pieces={"1,1": "red1U blue1U"}, hands={"red": ["cups-04"]})
    new = legal(st, "red: play cups-04 by red1U@1,1: clone 1")     # 3 after cloning: fine
    assert len(pieces_at(new, "1,1")) == 3
    full = pos(ed=ed, pieces={"1,1": "red1U blue1U blue2U"}, hands={"red": ["cups-04"]})
    illegal(full, "red: play cups-04 by red1U@1,1: clone 1", "cups.population")
    # growing keeps the population, so it is allowed in a full space
    assert pieces_at(legal(full, "red: play cups-04 by red1U@1,1: grow"), "1,1") == \
        ["blue1U", "blue2U", "red2U"]


@both_editions
def test_cups_no_larger(ed):
    # a fewer-trios game with one pyramid per size: the only medium is already out
    st = pos(ed=ed, pieces={"1,1": "red1U", "0,0": "red2U"}, hands={"red": ["cups-04"]},
             pieces_per_size=1)
    illegal(st, "red: play cups-04 by red1U@1,1: grow", "cups.no-larger")


@both_editions
def test_cups_max_size(ed):
    st = pos(ed=ed, pieces={"1,1": "red3U"}, hands={"red": ["cups-04"]})
    illegal(st, "red: play cups-04 by red3U@1,1: grow", "cups.max-size")
    legal(st, "red: play cups-04 by red3U@1,1: clone 3")


@both_editions
def test_cups_no_piece(ed):
    st = pos(ed=ed, pieces={"1,1": "red2U", "0,0": "red1U"}, hands={"red": ["cups-04"]},
             pieces_per_size=1)
    illegal(st, "red: play cups-04 by red2U@1,1: clone 1", "cups.no-piece")
    legal(pos(ed=ed, pieces={"1,1": "red2U"}, hands={"red": ["cups-04"]}, pieces_per_size=1),
          "red: play cups-04 by red2U@1,1: clone 1")


# ------------------------------------------------------------------------------ WANDS ---

@both_editions
def test_wands_move_where_pointing(ed):
    st = pos(ed=ed, pieces={"1,1": "red2E"}, hands={"red": ["wands-04"]})
    new = legal(st, "red: play wands-04 by red2E@1,1: move 2,1")
    assert pieces_at(new, "1,1") == []
    assert pieces_at(new, "2,1") == ["red2U"]        # arrives standing up


@both_editions
def test_wands_every_direction(ed):
    for pose, dest in (("N", "1,0"), ("E", "2,1"), ("S", "1,2"), ("W", "0,1")):
        st = pos(ed=ed, pieces={"1,1": f"red1{pose}"}, hands={"red": ["wands-04"]})
        assert pieces_at(legal(st, f"red: play wands-04 by red1{pose}@1,1: move {dest}"), dest) == ["red1U"]


@both_editions
def test_wands_upright(ed):
    st = pos(ed=ed, pieces={"1,1": "red2U"}, hands={"red": ["wands-04"]})
    illegal(st, "red: play wands-04 by red2U@1,1: move 2,1", "wands.upright")
    illegal(st, "red: play wands-04 by red2U@1,1: move 1,1", "wands.upright")


@both_editions
def test_wands_direction(ed):
    st = pos(ed=ed, pieces={"1,1": "red2E"}, hands={"red": ["wands-04"]})
    illegal(st, "red: play wands-04 by red2E@1,1: move 1,2", "wands.direction")


@both_editions
def test_wands_population_limit(ed):
    two = pos(ed=ed, pieces={"1,1": "red2E", "2,1": "blue1U blue2U"}, hands={"red": ["wands-04"]})
    new = legal(two, "red: play wands-04 by red2E@1,1: move 2,1")   # into enemy territory, 2 -> 3
    assert pieces_at(new, "2,1") == ["blue1U", "blue2U", "red2U"]
    three = pos(ed=ed, pieces={"1,1": "red2E", "2,1": "blue1U blue2U red1U"}, hands={"red": ["wands-04"]})
    illegal(three, "red: play wands-04 by red2E@1,1: move 2,1", "wands.population")


@both_editions
def test_wands_into_and_out_of_wasteland(ed):
    st = pos(ed=ed, pieces={"2,1": "red1E"}, hands={"red": ["wands-04", "wands-05"]})
    st = legal(st, "red: play wands-04 by red1E@2,1: move 3,1")
    assert pieces_at(st, "3,1") == ["red1U"]
    st = legal(st, "blue: pass")
    st = legal(st, "red: reorient red1U@3,1>W")
    st = legal(st, "blue: pass")
    st = legal(st, "red: play wands-05 by red1W@3,1: move 2,1")
    assert pieces_at(st, "2,1") == ["red1U"]


@both_editions
def test_wands_wasteland_to_wasteland_only_next_to_territory(ed):
    # 3,1 -> 3,0: both wasteland, 3,0 touches 2,0: allowed
    ok = pos(ed=ed, pieces={"3,1": "red1N"}, hands={"red": ["wands-04"]})
    assert pieces_at(legal(ok, "red: play wands-04 by red1N@3,1: move 3,0"), "3,0") == ["red1U"]
    # 3,1 -> 4,1: touches no territory
    far = pos(ed=ed, pieces={"3,1": "red1E"}, hands={"red": ["wands-04"]})
    illegal(far, "red: play wands-04 by red1E@3,1: move 4,1", "wands.void")
    # 3,0 -> 3,-1: touches no territory either
    corner = pos(ed=ed, pieces={"3,0": "red1N"}, hands={"red": ["wands-04"]})
    illegal(corner, "red: play wands-04 by red1N@3,0: move 3,-1", "wands.void")


# ----------------------------------------------------------------------------- SWORDS ---

@both_editions
def test_swords_destroy_same_size_or_smaller(ed):
    for blue in ("blue1U", "blue2N"):
        st = pos(ed=ed, pieces={"1,1": "red2E", "2,1": blue}, hands={"red": ["swords-04"]})
        new = legal(st, f"red: play swords-04 by red2E@1,1: attack {blue}@2,1")
        assert pieces_at(new, "2,1") == []
        assert stash(new, "blue") == (5, 5, 5)       # back to its stash


@both_editions
def test_swords_reduce_larger(ed):
    st = pos(ed=ed, pieces={"1,1": "red1E", "2,1": "blue3S"}, hands={"red": ["swords-04"]})
    new = legal(st, "red: play swords-04 by red1E@1,1: attack blue3S@2,1")
    assert pieces_at(new, "2,1") == ["blue2S"]        # one step smaller, same pose
    assert stash(new, "blue") == (5, 4, 5)
    assert pieces_at(new, "1,1") == ["red1E"]         # the attacker does not move


@both_editions
def test_swords_upright_attacks_own_space(ed):
    st = pos(ed=ed, pieces={"1,1": "red2U blue1W"}, hands={"red": ["swords-04"]})
    assert pieces_at(legal(st, "red: play swords-04 by red2U@1,1: attack blue1W@1,1"), "1,1") == ["red2U"]


@both_editions
def test_swords_direction(ed):
    st = pos(ed=ed, pieces={"1,1": "red2E", "1,2": "blue1U", "2,1": "blue2U"},
             hands={"red": ["swords-04"]})
    illegal(st, "red: play swords-04 by red2E@1,1: attack blue1U@1,2", "swords.direction")
    up = pos(ed=ed, pieces={"1,1": "red2U", "2,1": "blue1U"}, hands={"red": ["swords-04"]})
    illegal(up, "red: play swords-04 by red2U@1,1: attack blue1U@2,1", "swords.direction")


@both_editions
def test_swords_invincible_minion(ed):
    # blue's only medium is on the board: its large cannot be reduced by a smaller attacker
    st = pos(ed=ed, pieces={"1,1": "red1E", "2,1": "blue3U", "0,0": "blue2U"},
             hands={"red": ["swords-04"]}, pieces_per_size=1)
    illegal(st, "red: play swords-04 by red1E@1,1: attack blue3U@2,1", "swords.invincible")
    # an attacker of the same size still destroys it
    big = pos(ed=ed, pieces={"1,1": "red3E", "2,1": "blue3U", "0,0": "blue2U"},
              hands={"red": ["swords-04"]}, pieces_per_size=1)
    assert pieces_at(legal(big, "red: play swords-04 by red3E@1,1: attack blue3U@2,1"), "2,1") == []
    # with a full stash of 15 the same large is only reduced
    full = pos(ed=ed, pieces={"1,1": "red1E", "2,1": "blue3U", "0,0": "blue2U"}, hands={"red": ["swords-04"]})
    assert pieces_at(legal(full, "red: play swords-04 by red1E@1,1: attack blue3U@2,1"), "2,1") == ["blue2U"]


@both_editions
def test_swords_own_pieces_but_not_itself(ed):
    st = pos(ed=ed, pieces={"1,1": "red2U red1U"}, hands={"red": ["swords-04"]})
    assert pieces_at(legal(st, "red: play swords-04 by red2U@1,1: attack red1U@1,1"), "1,1") == ["red2U"]
    illegal(st, "red: play swords-04 by red2U@1,1: attack red2U@1,1", "swords.self")
    # an identical twin in the same space is another pyramid
    twins = pos(ed=ed, pieces={"1,1": "red2U red2U"}, hands={"red": ["swords-04"]})
    assert pieces_at(legal(twins, "red: play swords-04 by red2U@1,1: attack red2U@1,1"), "1,1") == ["red2U"]


@both_editions
def test_swords_destroy_empty_territory(ed):
    st = pos(ed=ed, board=board(c2_1=["cups-09", "swords-09"]), pieces={"1,1": "red1E"},
             hands={"red": ["swords-04"]})
    new = legal(st, "red: play swords-04 by red1E@1,1: attack @2,1")
    assert stack(new, "2,1") == ["cups-09"]            # the card underneath reappears
    assert new.discard == ("swords-09", "swords-04")
    single = pos(ed=ed, pieces={"1,1": "red1E"}, hands={"red": ["swords-04"]})
    gone = legal(single, "red: play swords-04 by red1E@1,1: attack @2,1")
    assert (2, 1) not in gone.board and gone.is_wasteland((2, 1))


@both_editions
def test_swords_occupied_territory(ed):
    st = pos(ed=ed, pieces={"1,1": "red1E", "2,1": "blue1U"}, hands={"red": ["swords-04"]})
    illegal(st, "red: play swords-04 by red1E@1,1: attack @2,1", "swords.occupied-territory")
    mine = pos(ed=ed, pieces={"1,1": "red1E", "2,1": "red1U"}, hands={"red": ["swords-04"]})
    illegal(mine, "red: play swords-04 by red1E@1,1: attack @2,1", "swords.occupied-territory")


@both_editions
def test_swords_own_territory(ed):
    st = pos(ed=ed, pieces={"1,1": "red1U"}, hands={"red": ["swords-04"]})
    illegal(st, "red: play swords-04 by red1U@1,1: attack @1,1", "swords.own-territory")


@both_editions
def test_swords_no_target(ed):
    st = pos(ed=ed, pieces={"1,1": "red1E", "2,1": "red2E"}, hands={"red": ["swords-04"]})
    illegal(st, "red: play swords-04 by red1E@1,1: attack blue1U@2,1", "swords.no-target")
    waste = pos(ed=ed, pieces={"2,1": "red1E"}, hands={"red": ["swords-04"]})
    illegal(waste, "red: play swords-04 by red1E@2,1: attack @3,1", "swords.no-target")


@both_editions
def test_swords_from_and_into_wasteland(ed):
    st = pos(ed=ed, pieces={"3,1": "red1W", "2,1": "blue1U"}, hands={"red": ["swords-04"]})
    assert pieces_at(legal(st, "red: play swords-04 by red1W@3,1: attack blue1U@2,1"), "2,1") == []
    st = pos(ed=ed, pieces={"2,1": "red1E", "3,1": "blue1U"}, hands={"red": ["swords-04"]})
    assert pieces_at(legal(st, "red: play swords-04 by red1E@2,1: attack blue1U@3,1"), "3,1") == []


@both_editions
def test_pyramids_left_in_the_void_die(ed):
    # a row of two cards; blue stands in the wasteland east of 1,0 and only there
    st = pos(ed=ed, board={"0,0": "cups-02", "1,0": "cups-03"},
             pieces={"0,0": "red1E", "2,0": "blue2U"}, hands={"red": ["swords-04"]})
    new = legal(st, "red: play swords-04 by red1E@0,0: attack @1,0")
    assert (1, 0) not in new.board
    assert pieces_at(new, "2,0") == []                 # lost in the void
    assert stash(new, "blue") == (5, 5, 5)
    assert any("void" in e for e in new.events)


@both_editions
def test_board_that_splits_stays_split(ed):
    st = pos(ed=ed, board={"0,0": "cups-02", "1,0": "cups-03", "2,0": "cups-04"},
             pieces={"0,0": "red1E", "2,0": "blue1U"}, hands={"red": ["swords-04", "wands-02"]})
    new = legal(st, "red: play swords-04 by red1E@0,0: attack @1,0")
    assert set(new.board) == {(0, 0), (2, 0)}           # two islands, nothing moves together
    assert pieces_at(new, "2,0") == ["blue1U"]
    assert new.is_wasteland((1, 0))
    new = legal(new, "blue: pass")
    new = legal(new, "red: play wands-02 by red1E@0,0: move 1,0")   # the gap is wasteland
    assert pieces_at(new, "1,0") == ["red1U"]


# -------------------------------------------------------------------------- PENTACLES ---

@both_editions
def test_pentacles_build_into_wasteland(ed):
    st = pos(ed=ed, pieces={"2,1": "red1E"}, hands={"red": ["pentacles-01"]}, deck=["cups-02", "swords-06"])
    new = legal(st, "red: play pentacles-01 by red1E@2,1: build 3,1")
    assert stack(new, "3,1") == ["swords-06"]          # the top of the draw pile, face up
    assert new.deck == ("cups-02",)
    assert pieces_at(new, "2,1") == ["red1E"]
    # the recorded move names the card built
    assert new.history[-1] == "red: play pentacles-01 by red1E@2,1: build 3,1 =swords-06"


@both_editions
def test_pentacles_stack_on_empty_territory(ed):
    st = pos(ed=ed, pieces={"1,1": "red1E"}, hands={"red": ["pentacles-01"]}, deck=["swords-06"])
    new = legal(st, "red: play pentacles-01 by red1E@1,1: build 2,1")
    assert stack(new, "2,1") == ["pentacles-07", "swords-06"]


@both_editions
def test_pentacles_stack_on_solely_own_territory(ed):
    st = pos(ed=ed, pieces={"1,1": "red1U red2E", "2,1": "red1U"}, hands={"red": ["pentacles-01"]},
             deck=["swords-06", "swords-07"])
    new = legal(st, "red: play pentacles-01 by red1U@1,1: build 1,1")    # upright: own space
    assert stack(new, "1,1") == ["pentacles-06", "swords-07"]
    new = legal(st, "red: play pentacles-01 by red2E@1,1: build 2,1")    # under a friendly pyramid
    assert stack(new, "2,1") == ["pentacles-07", "swords-07"]
    # a friendly pyramid in the adjacent wasteland: allowed
    w = pos(ed=ed, pieces={"2,1": "red1E", "3,1": "red2U"}, hands={"red": ["pentacles-01"]},
            deck=["swords-07"])
    assert stack(legal(w, "red: play pentacles-01 by red1E@2,1: build 3,1"), "3,1") == ["swords-07"]


@both_editions
def test_pentacles_no_enemy_pieces(ed):
    st = pos(ed=ed, pieces={"1,1": "red1E", "2,1": "blue1U"}, hands={"red": ["pentacles-01"]})
    illegal(st, "red: play pentacles-01 by red1E@1,1: build 2,1", "pentacles.enemies")
    same = pos(ed=ed, pieces={"1,1": "red1U blue1U"}, hands={"red": ["pentacles-01"]})
    illegal(same, "red: play pentacles-01 by red1U@1,1: build 1,1", "pentacles.enemies")
    waste = pos(ed=ed, pieces={"2,1": "red1E", "3,1": "blue1U"}, hands={"red": ["pentacles-01"]})
    illegal(waste, "red: play pentacles-01 by red1E@2,1: build 3,1", "pentacles.enemies")


@both_editions
def test_pentacles_wasteland(ed):
    st = pos(ed=ed, pieces={"3,1": "red1W"}, hands={"red": ["pentacles-01"]})
    illegal(st, "red: play pentacles-01 by red1W@3,1: build 2,1", "pentacles.wasteland")
    up = pos(ed=ed, pieces={"3,1": "red1U"}, hands={"red": ["pentacles-01"]})
    illegal(up, "red: play pentacles-01 by red1U@3,1: build 3,1", "pentacles.wasteland")


@both_editions
def test_pentacles_target(ed):
    st = pos(ed=ed, pieces={"1,1": "red1U"}, hands={"red": ["pentacles-01"]})
    illegal(st, "red: play pentacles-01 by red1U@1,1: build 2,1", "pentacles.target")


@both_editions
def test_pentacles_no_card(ed):
    st = pos(ed=ed, pieces={"1,1": "red1U"}, hands={"red": ["pentacles-01"]}, deck=[], discard=[])
    illegal(st, "red: play pentacles-01 by red1U@1,1: build 1,1", "pentacles.no-card")


@both_editions
def test_pentacles_drawn(ed):
    st = pos(ed=ed, pieces={"1,1": "red1U"}, hands={"red": ["pentacles-01"]}, deck=["cups-03", "cups-02"])
    illegal(st, "red: play pentacles-01 by red1U@1,1: build 1,1 =cups-03", "pentacles.drawn")
    assert top_card(legal(st, "red: play pentacles-01 by red1U@1,1: build 1,1 =cups-02", listed=False),
                    "1,1") == "cups-02"


@both_editions
def test_pentacles_rebuilds_the_draw_pile(ed):
    st = pos(ed=ed, pieces={"1,1": "red1U"}, hands={"red": ["pentacles-01"]}, deck=[],
             discard=["cups-03"])
    new = legal(st, "red: play pentacles-01 by red1U@1,1: build 1,1")
    assert top_card(new, "1,1") == "cups-03"
    assert new.reshuffles == 1
    assert new.discard == ("pentacles-01",)
    assert hand(new, "red") == []


@both_editions
def test_wasteland_pyramid_next_to_another_territory_survives(ed):
    # 3,1 touches only 2,1; 2,0's neighbour 3,0 touches 2,0 only: destroying 2,1 kills at 3,1
    st = pos(ed=ed, pieces={"1,1": "red1E", "3,1": "blue1U", "3,0": "blue2U"}, hands={"red": ["swords-04"]})
    new = legal(st, "red: play swords-04 by red1E@1,1: attack @2,1")
    assert pieces_at(new, "3,1") == [] and pieces_at(new, "3,0") == ["blue2U"]
    # 2,1 itself is now wasteland next to 1,1, 2,0 and 2,2
    assert new.is_wasteland((2, 1))
