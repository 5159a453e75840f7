"""Optional trumps of the 1996 text, the Looney Gateway and Doppelganger, extra cards,
bidding for the first turn, the hidden-hand mode, and scoring."""

from __future__ import annotations

import json

import pytest

from companion.commands.play import render_grid
from companion.core.pieces import Color
from companion.games.zarcana import Edition, IncompleteMoveError, UNKNOWN, new_game
from companion.games.zarcana.engine import from_dict, invariant_errors, to_dict

from conftest import (board, both_editions, hand, illegal, legal, pieces_at, pos, score,
                      stack)

LOONEY, E1996 = Edition.LOONEY, Edition.E1996


def opt(name: str, card: str = "major-09") -> dict:
    """Settings overrides giving ``card`` the optional trump ``name``."""
    return {"optional_trumps": ((card, name),)}


# ------------------------------------------------------------------------- Alchemist ---

@both_editions
def test_alchemist_stack_of_two(ed):
    st = pos(ed=ed, pieces={"1,1": "red1E"}, hands={"red": ["major-09"]},
             deck=["cups-02", "cups-03", "cups-04"], **opt("alchemist"))
    new = legal(st, "red: play major-09 as alchemist by red1E@1,1: build 2,1; build 2,1")
    assert stack(new, "2,1") == ["pentacles-07", "cups-04", "cups-03"]
    new = legal(pos(ed=ed, pieces={"2,1": "red1E"}, hands={"red": ["major-09"]},
                    deck=["cups-02", "cups-03", "cups-04"], **opt("alchemist")),
                "red: play major-09 as alchemist by red1E@2,1: build 3,1; build 3,1")
    assert stack(new, "3,1") == ["cups-04", "cups-03"]


@both_editions
def test_alchemist_stack(ed):
    st = pos(ed=ed, pieces={"1,1": "red1E"}, hands={"red": ["major-09"]}, **opt("alchemist"))
    illegal(st, "red: play major-09 as alchemist by red1E@1,1: build 2,1; build 1,1", "alchemist.stack")
    # a stack of two, not "up to twice" as the Chariot and Strength: one build is refused,
    # and not listed
    st = pos(ed=ed, pieces={"1,1": "red1E"}, hands={"red": ["major-09"]},
             deck=["cups-02", "cups-03", "cups-04"], **opt("alchemist"))
    illegal(st, "red: play major-09 as alchemist by red1E@1,1: build 2,1", "alchemist.twice")
    listed = [str(m) for m in st.legal_moves() if "alchemist" in str(m)]
    assert listed and all(m.count("build") == 2 for m in listed), listed
    illegal(st, "red: play major-09 by red1E@1,1: move 2,1", "card.wrong-power")   # not a Hermit now


# --------------------------------------------------------------------------- Assassin ---

@both_editions
def test_assassin_ignores_orientation(ed):
    st = pos(ed=ed, pieces={"1,1": "red1E", "1,2": "blue1U"}, hands={"red": ["major-09"]}, **opt("assassin"))
    new = legal(st, "red: play major-09 as assassin by red1E@1,1: attack blue1U@1,2")
    assert pieces_at(new, "1,2") == []


@both_editions
def test_assassin_range(ed):
    st = pos(ed=ed, pieces={"1,1": "red1E", "1,2": "blue1U", "2,2": "blue1U"}, hands={"red": ["major-09"]},
             **opt("assassin"))
    illegal(st, "red: play major-09 as assassin by red1E@1,1: attack blue1U@2,2", "swords.direction")


# -------------------------------------------------------------------- Doppelganger ---

@both_editions
def test_doppelganger_copies_top_discard(ed):
    st = pos(ed=ed, pieces={"1,1": "red1E", "2,1": "blue1U"}, hands={"red": ["extra-doppelganger"]},
             discard=["cups-02", "swords-05"], extra_cards=("extra-doppelganger",))
    new = legal(st, "red: play extra-doppelganger like swords-05 by red1E@1,1: attack blue1U@2,1")
    assert pieces_at(new, "2,1") == []
    assert new.discard[-1] == "extra-doppelganger"
    # as an optional trump on another card (1996 "house option")
    st2 = pos(ed=ed, pieces={"1,1": "red1E", "2,1": "blue1U"}, hands={"red": ["major-09"]},
              discard=["swords-05"], **opt("doppelganger"))
    legal(st2, "red: play major-09 like swords-05 by red1E@1,1: attack blue1U@2,1")


@both_editions
def test_doppelganger_royalty_wild_only_from_hand(ed):
    st = pos(ed=ed, board=board(c1_1="extra-doppelganger"), pieces={"1,1": "red1E"},
             discard=["cups-13"], extra_cards=("extra-doppelganger",))
    illegal(st, "red: use extra-doppelganger like cups-13 as wands by red1E@1,1: move 2,1", "doppelganger.empty")
    st2 = pos(ed=ed, pieces={"1,1": "red1E"}, hands={"red": ["extra-doppelganger"]},
              discard=["cups-13"], extra_cards=("extra-doppelganger",))
    legal(st2, "red: play extra-doppelganger like cups-13 as wands by red1E@1,1: move 2,1")


@both_editions
def test_doppelganger_empty(ed):
    st = pos(ed=ed, pieces={"1,1": "red1E", "2,1": "blue1U"}, hands={"red": ["extra-doppelganger"]},
             discard=[], extra_cards=("extra-doppelganger",))
    illegal(st, "red: play extra-doppelganger like swords-05 by red1E@1,1: attack blue1U@2,1",
            "doppelganger.empty")
    st = pos(ed=ed, pieces={"1,1": "red1E", "2,1": "blue1U"}, hands={"red": ["extra-doppelganger"]},
             discard=["swords-05", "cups-02"], extra_cards=("extra-doppelganger",))
    illegal(st, "red: play extra-doppelganger like swords-05 by red1E@1,1: attack blue1U@2,1",
            "doppelganger.empty")     # only the top card


@both_editions
def test_doppelganger_changing_value(ed):
    st = pos(ed=ed, board=board(c0_0="extra-doppelganger"), pieces={"0,0": "red1U"},
             discard=["cups-13", "swords-07"], extra_cards=("extra-doppelganger",))
    assert score(st)["red"] == 7
    st = pos(ed=ed, board=board(c0_0="extra-doppelganger"), pieces={"0,0": "red1U"},
             discard=["swords-07", "cups-13"], extra_cards=("extra-doppelganger",))
    assert score(st)["red"] == 11
    st = pos(ed=ed, board=board(c0_0="extra-doppelganger"), pieces={"0,0": "red1U"},
             discard=[], extra_cards=("extra-doppelganger",))
    assert score(st)["red"] == 0


# --------------------------------------------------------------------------- Evil Eye ---

@both_editions
def test_evil_eye_marks_territory_minus_two(ed):
    st = pos(ed=ed, pieces={"1,1": "red1E", "2,1": "blue1U"}, hands={"red": ["major-09"]},
             deck=["cups-02"], **opt("evil-eye"))
    assert score(st)["blue"] == 7
    new = legal(st, "red: play major-09 as evil-eye by red1E@1,1: mark 2,1")
    assert score(new)["blue"] == -2
    assert new.marks == frozenset({(2, 1)})           # pentacles-07's territory


@both_editions
def test_evil_eye_mark_disappears_when_covered_or_destroyed(ed):
    st = pos(ed=ed, pieces={"1,1": "red1E"}, hands={"red": ["major-09", "pentacles-01"]},
             deck=["cups-02", "cups-03"], **opt("evil-eye"))
    st = legal(st, "red: play major-09 as evil-eye by red1E@1,1: mark 2,1")
    st = legal(st, "blue: pass")
    st = legal(st, "red: play pentacles-01 by red1E@1,1: build 2,1")
    assert st.marks == frozenset()
    st = pos(ed=ed, pieces={"1,1": "red1E"}, hands={"red": ["major-09", "swords-02"]}, **opt("evil-eye"))
    st = legal(st, "red: play major-09 as evil-eye by red1E@1,1: mark 2,1")
    st = legal(legal(st, "blue: pass"), "red: play swords-02 by red1E@1,1: attack @2,1")
    assert st.marks == frozenset()


@both_editions
def test_evil_eye_target(ed):
    st = pos(ed=ed, pieces={"2,1": "red1E"}, hands={"red": ["major-09"]}, **opt("evil-eye"))
    illegal(st, "red: play major-09 as evil-eye by red1E@2,1: mark 3,1", "evil-eye.target")   # wasteland
    illegal(st, "red: play major-09 as evil-eye by red1E@2,1: mark 1,1", "evil-eye.target")


def _camera_position(cards: dict[str, object], **kw: object):
    """A 1996 game as the camera follows it, the Evil Eye in play: hands and draw pile
    unknown, and the board's "?" cards unknown too (a card the Alchemist covered at once,
    uncovered where the picture could not name it; a Wheel of Fortune build, face down)."""
    hands = {"red": [UNKNOWN] * 3, "blue": [UNKNOWN] * 3}
    return pos(ed=E1996, board=cards, hands=hands, box=[],
               deck=[UNKNOWN] * (78 - len(cards) - 6), **kw, **opt("evil-eye"))


def test_the_evil_eye_on_an_unnamed_card_marks_that_card_alone():
    """The marks were kept by card id, and every card nobody can name is "?": the Evil Eye
    on one such card made every "?" on top score -2 (another one uncovered, a face-down
    Wheel of Fortune card at the end), and destroying any other "?" took the mark off the
    one marked. The mark lies on the card the pyramid targets, as the penny does."""
    st = _camera_position(
        board(c2_1=UNKNOWN, c0_1=UNKNOWN, c0_2="~?", c1_2=UNKNOWN),
        pieces={"1,1": "red1E", "2,1": "blue1U", "0,1": "blue1U", "0,2": "blue1U",
                "2,2": "blue1W"})
    assert st.hidden
    assert score(st)["blue"] == 10                    # only 2,2's pentacles-10 is known
    st = legal(st, "red: play major-09 as evil-eye by red1E@1,1: mark 2,1")
    blue = {cell: v for cell, _, v in st.score_details()[Color.BLUE]}
    assert blue == {(0, 1): 0, (0, 2): 0, (2, 1): -2, (2, 2): 10}
    assert render_grid(st).count("!") == 1           # the text table's mark, on 2,1
    over = st.copy()
    over.phase = "over"                               # the face-down card is turned up
    blue = {cell: v for cell, _, v in over.score_details()[Color.BLUE]}
    assert blue == {(0, 1): 0, (0, 2): 0, (2, 1): -2, (2, 2): 10}
    # another unnamed card destroyed: the one marked keeps its mark
    st = legal(st, "blue: play swords-03 by blue1W@2,2: attack @1,2")
    assert stack(st, "1,2") == []
    assert score(st)["blue"] == 8


def test_the_moon_carries_the_evil_eye_mark_with_the_card_named_or_not():
    """The mark travels with the card the Moon moves (the penny lies on the card), and
    only with it: another unnamed card stays unmarked."""
    for marked in ("pentacles-07", UNKNOWN):
        st = _camera_position(board(c2_1=marked, c0_1=UNKNOWN),
                              pieces={"1,1": "red1E", "2,1": "blue1U", "0,1": "blue1U"})
        st = legal(st, "red: play major-09 as evil-eye by red1E@1,1: mark 2,1")
        st = legal(st, "blue: play major-18 by blue1U@2,1: transport 3,0")
        assert stack(st, "3,0") == [marked] and st.marks == frozenset({(3, 0)})
        blue = {cell: v for cell, _, v in st.score_details()[Color.BLUE]}
        assert blue == {(0, 1): 0, (3, 0): -2}, marked


def test_a_mark_on_an_unnamed_card_is_saved_by_where_it_lies():
    """A marked card is saved by its id, as before; an unnamed one by its cell ("?" would
    say every unnamed card). A save from before, holding "?", reads as it did: every
    unnamed card on top marked."""
    st = _camera_position(board(c2_1=UNKNOWN, c0_1=UNKNOWN, c1_0="~?"),
                          pieces={"1,1": "red1E", "2,1": "blue1U", "0,1": "blue1U",
                                  "1,0": "blue1U"})
    st = legal(st, "red: play major-09 as evil-eye by red1E@1,1: mark 2,1")
    data = to_dict(st)
    assert data["marks"] == ["2,1"]
    again = from_dict(json.loads(json.dumps(data)))
    assert to_dict(again) == data and again.marks == frozenset({(2, 1)})
    assert score(again) == score(st) == {"red": 6, "blue": -2}
    known = legal(_camera_position(board(), pieces={"1,1": "red1E", "2,1": "blue1U"}),
                  "red: play major-09 as evil-eye by red1E@1,1: mark 2,1")
    assert to_dict(known)["marks"] == ["pentacles-07"]
    assert from_dict(to_dict(known)).marks == frozenset({(2, 1)})
    before = from_dict({**data, "marks": ["?"]})
    assert before.marks == frozenset({(2, 1), (0, 1), (1, 0)})
    assert score(before)["blue"] == -4            # (the face-down one: 0 until the end)
    assert to_dict(before)["marks"] == ["0,1", "1,0", "2,1"]


# ------------------------------------------------------------------------- Holy Grail ---

@both_editions
def test_holy_grail_ignores_orientation_and_wasteland(ed):
    st = pos(ed=ed, pieces={"3,1": "red2E"}, hands={"red": ["major-09"]}, **opt("holy-grail"))
    new = legal(st, "red: play major-09 as holy-grail by red2E@3,1: clone 1")
    assert pieces_at(new, "3,1") == ["red1E", "red2E"]          # keeps the orientation
    assert pieces_at(legal(st, "red: play major-09 as holy-grail by red2E@3,1: grow"), "3,1") == ["red3E"]


@both_editions
def test_holy_grail_population_limit(ed):
    st = pos(ed=ed, pieces={"1,1": "red2E blue1U blue1U"}, hands={"red": ["major-09"]}, **opt("holy-grail"))
    illegal(st, "red: play major-09 as holy-grail by red2E@1,1: clone 1", "cups.population")


# ------------------------------------------------------------------------------ Miser ---

@both_editions
def test_miser_discards_some_cards(ed):
    st = pos(ed=ed, hands={"red": ["major-09", "cups-02", "cups-03", "cups-14"]}, **opt("miser"))
    new = legal(st, "red: play major-09 as miser: discard cups-02+cups-03")
    assert hand(new, "red") == ["cups-14"]
    assert new.discard == ("cups-02", "cups-03", "major-09")


@both_editions
def test_miser_cards(ed):
    st = pos(ed=ed, hands={"red": ["major-09", "cups-02"], "blue": ["cups-03"]}, **opt("miser"))
    illegal(st, "red: play major-09 as miser: discard cups-03", "miser.cards")
    illegal(st, "red: play major-09 as miser: discard major-09", "miser.cards")


# ----------------------------------------------------------------------------- Plague ---

@both_editions
def test_plague_each_player_culls_and_announcer_razes(ed):
    st = pos(["red", "blue", "green"], ed=ed, pieces={"0,0": "red1U red2U", "1,1": "blue3U", "2,2": "green1U"},
             hands={"red": ["major-09"]}, **opt("plague"))
    st = legal(st, "red: play major-09 as plague")
    assert st.to_move.value == "red"
    illegal(st, "red: cull blue3U@1,1", "plague.cull")
    illegal(st, "red: pass", "turn.pending")
    st = legal(st, "red: cull red2U@0,0")
    assert st.to_move.value == "blue"
    st = legal(st, "blue: cull blue3U@1,1")
    st = legal(st, "green: cull green1U@2,2")
    assert st.to_move.value == "red"                  # the announcer razes an empty territory
    illegal(st, "red: raze 0,0", "plague.raze")
    st = legal(st, "red: raze 2,2")
    assert (2, 2) not in st.board and st.to_move.value == "blue"
    assert st.pieces == {(0, 0): tuple(sorted(st.pieces[(0, 0)]))} and pieces_at(st, "0,0") == ["red1U"]


# ------------------------------------------------------------------------ Gate (1996) ---

def test_gate_teleports_to_same_suit():
    st = pos(ed=E1996, board=board(c0_0="cups-02", c2_2="cups-09", c2_0="swords-03", c1_1="major-13"),
             pieces={"0,0": "red1E"}, hands={"red": ["extra-gateway"]}, extra_cards=("extra-gateway",))
    new = legal(st, "red: play extra-gateway as gate by red1E@0,0: move 2,2")
    assert pieces_at(new, "2,2") == ["red1U"]
    illegal(st, "red: play extra-gateway as gate by red1E@0,0: move 2,0", "gate.target")
    # from a trump, to any trump
    tr = pos(ed=E1996, board=board(c0_0="major-03", c2_2="major-13"), pieces={"0,0": "red1U"},
             hands={"red": ["extra-gateway"]}, extra_cards=("extra-gateway",))
    legal(tr, "red: play extra-gateway as gate by red1U@0,0: move 2,2")
    full = pos(ed=E1996, board=board(c0_0="cups-02", c2_2="cups-09"), pieces={"0,0": "red1E", "2,2": "blue1U blue1U blue1U"},
               hands={"red": ["extra-gateway"]}, extra_cards=("extra-gateway",))
    illegal(full, "red: play extra-gateway as gate by red1E@0,0: move 2,2", "wands.population")


# -------------------------------------------------------------------- Gateway (Looney) ---

def test_gateway_teleports_anywhere():
    st = pos(ed=LOONEY, pieces={"0,0": "red2E"}, hands={"red": ["extra-gateway"]}, extra_cards=("extra-gateway",))
    new = legal(st, "red: play extra-gateway as gateway by red2E@0,0: move 2,2")
    assert pieces_at(new, "2,2") == ["red2U"]


def test_gateway_target():
    st = pos(ed=LOONEY, pieces={"0,0": "red2E"}, hands={"red": ["extra-gateway"]}, extra_cards=("extra-gateway",))
    illegal(st, "red: play extra-gateway as gateway by red2E@0,0: move 3,1", "gateway.target")    # wasteland
    illegal(st, "red: play extra-gateway as gateway by red2E@0,0: move 0,0", "gateway.target")    # no move


# ---------------------------------------------------------------------------- Catapult ---

@both_editions
def test_catapult_two_spaces(ed):
    st = pos(ed=ed, pieces={"0,1": "red1E", "2,1": "blue1U"}, hands={"red": ["major-09"]}, **opt("catapult"))
    assert pieces_at(legal(st, "red: play major-09 as catapult by red1E@0,1: attack blue1U@2,1"), "2,1") == []
    legal(st, "red: play major-09 as catapult by red1E@0,1: attack @1,1")


@both_editions
def test_catapult_range(ed):
    st = pos(ed=ed, pieces={"0,1": "red1E", "3,1": "blue1U", "0,2": "blue1U"}, hands={"red": ["major-09"]},
             **opt("catapult"))
    illegal(st, "red: play major-09 as catapult by red1E@0,1: attack blue1U@3,1", "catapult.range")
    illegal(st, "red: play major-09 as catapult by red1E@0,1: attack blue1U@0,2", "catapult.range")


# ------------------------------------------------------------------------------- Ghost ---

@both_editions
def test_ghost_invisible_player(ed):
    st = new_game(3, edition=ed, seed=8, **opt("ghost"))
    assert st.ghost is Color.CLEAR
    assert len(st.hands[Color.CLEAR]) == 3 and st.stashes[Color.CLEAR] == (5, 5, 5)
    assert invariant_errors(st) == []
    st = pos(ed=ed, hands={"red": ["major-09"]}, pieces={"0,0": "clear1U"}, **opt("ghost"))
    st = legal(st, "red: play major-09 as ghost")
    assert st.to_move is Color.CLEAR                  # red decides for the invisible player
    illegal(st, "red: pass", "turn.wrong-player")
    illegal(st, "clear: end", "turn.pending", "end.not-reshuffled")
    st = legal(st, "clear: reorient clear1U@0,0>E")
    assert st.to_move.value == "blue" and pieces_at(st, "0,0") == ["clear1E"]


@both_editions
def test_ghost_score_goes_to_whoever_owns_the_ghost(ed):
    base = dict(ed=ed, pieces={"0,0": "clear1U", "1,1": "red1U", "2,2": "blue1U"}, **opt("ghost"))
    st = pos(board=board(c1_1="major-09"), **base)
    assert score(st) == {"red": 9 + 2, "blue": 10}    # red owns the Ghost territory
    st = pos(hands={"blue": ["major-09"]}, **base)
    assert score(st) == {"red": 6, "blue": 10 + 2}    # blue holds the Ghost
    st = pos(**base)
    assert score(st) == {"red": 6, "blue": 10, "clear": 2}   # nobody: its own score


# --------------------------------------------------------------------------- bidding ---

def test_bidding_looney_highest_goes_first():
    st = pos(["red", "blue", "green"], ed=LOONEY, first_player="bid",
             hands={"red": ["cups-05"], "blue": ["cups-13", "cups-02"], "green": ["major-03"]})
    st = _bidding(st)
    st = legal(st, "red: bid cups-05")
    st = legal(st, "blue: bid cups-13")
    st = legal(st, "green: bid -")               # withdraws: keeps the card
    assert st.phase == "play" and st.to_move.value == "blue"
    assert hand(st, "blue") == ["cups-02"] and hand(st, "green") == ["major-03"] and hand(st, "red") == []
    assert sorted(st.discard) == ["cups-05", "cups-13"]


def test_bidding_all_withdraw_then_mandatory():
    st = _bidding(pos(["red", "blue"], ed=LOONEY, first_player="bid",
                      hands={"red": ["cups-05"], "blue": ["cups-09"]}))
    st = legal(st, "red: bid -")
    st = legal(st, "blue: bid -")
    assert st.phase == "bid" and st.bidding.mandatory
    illegal(st, "red: bid -", "bid.mandatory")
    st = legal(st, "red: bid cups-05")
    st = legal(st, "blue: bid cups-09")
    assert st.phase == "play" and st.to_move.value == "blue"


def test_bidding_tie_only_tied_bid_again():
    st = _bidding(pos(["red", "blue", "green"], ed=LOONEY, first_player="bid",
                      hands={"red": ["cups-13", "cups-02"], "blue": ["major-11", "wands-03"], "green": ["cups-04"]}))
    st = legal(st, "red: bid cups-13")
    st = legal(st, "blue: bid major-11")          # 11 = 11
    st = legal(st, "green: bid cups-04")
    assert st.phase == "bid" and st.bidding.eligible == (Color.RED, Color.BLUE)
    # "all tied players must bid again": no withdrawing now (it handed blue the first turn)
    illegal(st, "red: bid -", "bid.mandatory")
    st = legal(st, "red: bid cups-02")
    st = legal(st, "blue: bid wands-03")
    assert st.phase == "play" and st.to_move.value == "blue"


def test_bid_card():
    st = _bidding(pos(["red", "blue"], ed=LOONEY, first_player="bid",
                      hands={"red": ["cups-05"], "blue": ["cups-09"]}))
    illegal(st, "red: bid cups-09", "bid.card")
    illegal(st, "red: pass", "turn.pending")
    illegal(st, "blue: bid cups-09", "turn.wrong-player")


def test_bidding_1996_lowest_goes_first():
    st = _bidding(pos(["red", "blue", "green"], ed=E1996, first_player="bid",
                      hands={"red": ["cups-05"], "blue": ["cups-13"], "green": ["major-03"]}))
    st = legal(st, "red: bid cups-05")
    st = legal(st, "blue: bid cups-13")
    st = legal(st, "green: bid major-03")
    assert st.phase == "play" and st.to_move.value == "green"


def test_bidding_1996_every_player_bids():
    # 1996: "Players choose one card each from their hands" -- there is no withdrawing
    st = _bidding(pos(["red", "blue"], ed=E1996, first_player="bid",
                      hands={"red": ["cups-05"], "blue": ["cups-09"]}))
    illegal(st, "red: bid -", "bid.mandatory")


def test_bidding_1996_tied_players_out_of_cards_turn_up_the_deck():
    st = _bidding(pos(["red", "blue", "green"], ed=E1996, first_player="bid",
                      hands={"red": ["cups-05"], "blue": ["wands-05"], "green": ["major-09"]},
                      deck=["cups-09", "cups-02", "cups-07"]))
    st = legal(st, "red: bid cups-05")
    st = legal(st, "blue: bid wands-05")
    st = legal(st, "green: bid major-09")
    assert st.bidding.eligible == (Color.RED, Color.BLUE)
    st = legal(st, "red: bid -")                  # no cards left
    st = legal(st, "blue: bid -")
    # red turns up cups-07, blue cups-02: blue is lowest
    assert st.phase == "play" and st.to_move.value == "blue"
    assert st.deck == ("cups-09",)


def _bidding(st):
    """position() deals no bidding phase: start one as new_game does."""
    from companion.games.zarcana.state import Bidding

    st = st.copy()
    st.phase = "bid"
    st.bidding = Bidding(st.players, mandatory=st.settings.edition is E1996)
    return st


@both_editions
def test_bidding_from_new_game(ed):
    st = new_game(4, edition=ed, seed=9, first_player="bid")
    assert st.phase == "bid" and st.to_move.value == "red"
    assert (str(st.legal_moves()[-1]) == "red: bid -") is (ed is LOONEY)


# ------------------------------------------------------------------------ hidden hands ---

def _hidden(**kw):
    known = 9 + sum(len(h) for h in kw.get("hands", {}).values())
    kw.setdefault("deck", [UNKNOWN] * (78 - known))
    kw.setdefault("box", [])
    return pos(**kw)


def test_hidden_hand_plays_any_unseen_card():
    st = _hidden(pieces={"1,1": "blue1U"}, hands={"red": [], "blue": [UNKNOWN] * 3}, current="blue")
    assert st.hidden
    new = legal(st, "blue: play cups-05 by blue1U@1,1: grow")
    assert hand(new, "blue") == [UNKNOWN, UNKNOWN]
    assert new.discard == ("cups-05",)
    illegal(st, "blue: play pentacles-06 by blue1U@1,1: attack @1,1", "card.not-in-hand")   # it is on the board


def test_hidden_draw_pile_build_needs_the_card_named():
    st = _hidden(pieces={"1,1": "red1U"}, hands={"red": ["pentacles-01"]})
    assert st.check("red: play pentacles-01 by red1U@1,1: build 1,1").legal
    with pytest.raises(IncompleteMoveError):
        st.apply("red: play pentacles-01 by red1U@1,1: build 1,1")
    new = st.apply("red: play pentacles-01 by red1U@1,1: build 1,1 =swords-04")
    assert stack(new, "1,1") == ["pentacles-06", "swords-04"]
    assert invariant_errors(new) == []
    illegal(st, "red: play pentacles-01 by red1U@1,1: build 1,1 =pentacles-02", "pentacles.drawn")


def test_hidden_draw_pile_alchemist_is_listed_its_cards_to_be_named():
    """The Alchemist builds twice from a draw pile nobody sees: listing the moves tried the
    second build after the first, whose card is unknown, and raised (the live referee
    stopped). The play is listed, legal, and asks for its cards, as a Pentacles build does."""
    st = _hidden(ed=E1996, pieces={"1,1": "red1E"}, hands={"red": ["major-09"]},
                 **opt("alchemist"))
    listed = [str(m) for m in st.legal_moves() if "alchemist" in str(m)]
    assert listed == ["red: play major-09 as alchemist by red1E@1,1: build 2,1; build 2,1"]
    assert st.check(listed[0]).legal
    with pytest.raises(IncompleteMoveError):
        st.apply(listed[0])
    new = legal(st, "red: play major-09 as alchemist by red1E@1,1: build 2,1 =cups-02; "
                    "build 2,1 =cups-03", listed=False)
    assert stack(new, "2,1") == ["pentacles-07", "cups-02", "cups-03"]
    illegal(st, "red: play major-09 as alchemist by red1E@1,1: build 2,1 =cups-02; "
                "build 2,1 =cups-02", "pentacles.drawn")    # one card, built twice


def test_hidden_draw_pile_alchemist_covered_card_may_stay_unnamed():
    """The Alchemist's first card is covered at once by its second: no camera sees it, so
    from an unknown draw pile it may be left unnamed (``=?``); the card on top may not, and
    from a known draw pile the top card is drawn and named as before."""
    st = _hidden(ed=E1996, pieces={"1,1": "red1E"}, hands={"red": ["major-09"]},
                 **opt("alchemist"))
    new = legal(st, "red: play major-09 as alchemist by red1E@1,1: build 2,1 =?; "
                    "build 2,1 =cups-03", listed=False)
    assert stack(new, "2,1") == ["pentacles-07", UNKNOWN, "cups-03"]
    illegal(st, "red: play major-09 as alchemist by red1E@1,1: build 2,1 =cups-03; "
                "build 2,1 =?", "pentacles.drawn")
    one = _hidden(ed=E1996, pieces={"1,1": "red1E"}, hands={"red": ["pentacles-01"]})
    illegal(one, "red: play pentacles-01 by red1E@1,1: build 2,1 =?", "pentacles.drawn")
    known = pos(ed=E1996, pieces={"1,1": "red1E"}, hands={"red": ["major-09"]},
                deck=["cups-02", "cups-03", "cups-04"], **opt("alchemist"))
    illegal(known, "red: play major-09 as alchemist by red1E@1,1: build 2,1 =?; "
                   "build 2,1 =cups-03", "pentacles.drawn")


def test_a_card_the_alchemist_covered_uncovered_unnamed_gives_no_power():
    """The Alchemist's first card, covered at once from a draw pile nobody sees ("=?"), lies
    face up as "?" once an attack destroys the card above it and the picture could not name
    it. Listing the moves then raised NotationError (the World asked whether "?" is a trump
    to copy, the Gate its suit), and so did checking a use of it. Until it is named it gives
    no power: not as a territory, not to the World, not as a Gate's end; it scores 0."""
    gate = (("major-09", "alchemist"), ("major-05", "gate"))
    st = _hidden(ed=E1996, board=board(c0_2="major-13"), pieces={"1,1": "red1E", "2,2": "blue1N"},
                 hands={"red": [UNKNOWN] * 3, "blue": [UNKNOWN] * 3}, optional_trumps=gate)
    st = legal(st, "red: play major-09 as alchemist by red1E@1,1: build 2,1 =?; "
                   "build 2,1 =cups-03", listed=False)
    st = legal(st, "blue: play swords-03 by blue1N@2,2: attack @2,1")
    assert stack(st, "2,1") == ["pentacles-07", UNKNOWN]
    listed = [str(m) for m in st.legal_moves()]          # raised NotationError
    assert not [m for m in listed if "like ?" in m or "gate by red1E@1,1: move 2,1" in m]
    assert "red: play major-05 as gate by red1E@1,1: move 0,0" in listed
    assert "red: play major-21 like major-13 by red1E@1,1: attack @2,1" in listed
    illegal(st, "red: play major-05 as gate by red1E@1,1: move 2,1", "gate.target")
    illegal(st, "red: play ? as cups by red1E@1,1: grow", "card.unnamed")
    st = legal(st, "red: pass")
    st = legal(st, "blue: play wands-04 by blue1N@2,2: move 2,1")
    st = legal(st, "red: pass")
    listed = [str(m) for m in st.legal_moves()]
    assert not [m for m in listed if "@2,1" in m and ("use" in m or " as gate " in m)], listed
    illegal(st, "blue: use ? as cups by blue1U@2,1: grow", "card.unnamed")
    illegal(st, "blue: play major-05 as gate by blue1U@2,1: move 0,0", "gate.target")
    assert score(st)["blue"] == 0


def test_hidden_draw_adds_unknown_cards():
    st = _hidden(hands={"red": [UNKNOWN]})
    new = legal(st, "red: draw 2")
    assert hand(new, "red") == [UNKNOWN] * 3 and invariant_errors(new) == []


# ----------------------------------------------------------------------------- scoring ---

@both_editions
def test_score_only_exclusively_occupied_territories(ed):
    st = pos(ed=ed, pieces={"0,0": "red1U red2E", "1,1": "red1U blue1U", "2,2": "blue3U", "3,1": "red3U"})
    assert score(st) == {"red": 2, "blue": 10}         # 1,1 shared; wasteland scores nothing
    details = st.score_details()
    assert details[Color.RED] == [((0, 0), "pentacles-02", 2)]


@both_editions
def test_score_only_top_card(ed):
    st = pos(ed=ed, board=board(c0_0=["major-21", "cups-03"]), pieces={"0,0": "red1U"})
    assert score(st)["red"] == 3


@both_editions
def test_score_card_values(ed):
    cells = {"0,0": "cups-14", "1,0": "wands-11", "2,0": "swords-01", "0,1": "major-00",
             "1,1": "major-13", "2,1": "major-21", "0,2": "pentacles-10"}
    st = pos(ed=ed, board=cells, pieces={c: ("red1U" if i < 5 else "red2U") for i, c in enumerate(cells)})
    details = {card: v for _, card, v in st.score_details()[Color.RED]}
    assert details == {"cups-14": 11, "wands-11": 11, "swords-01": 1, "major-00": 0,
                       "major-13": 13, "major-21": 21, "pentacles-10": 10}
    assert score(st)["red"] == 11 + 11 + 1 + 0 + 13 + 21 + 10


@both_editions
def test_score_face_down_wheel_territory_at_the_end(ed):
    st = pos(ed=ed, board=board(c3_1=["~major-17"]), pieces={"3,1": "red1U"}, reshuffles=1)
    st = legal(st, "red: end")
    st = legal(st, "blue: pass")
    st = legal(st, "red: pass")
    assert st.is_over
    assert score(st)["red"] == 17


@both_editions
def test_score_ties_possible(ed):
    st = pos(ed=ed, pieces={"0,1": "red1U", "1,0": "blue1U", "0,0": "blue1U"})
    assert score(st) == {"red": 5, "blue": 5}
    assert sorted(c.value for c in st.winners()) == ["blue", "red"]


def test_hidden_draw_pile_fool_asks_which_card_came_up():
    st = _hidden(pieces={"1,1": "red1U"}, hands={"red": ["major-00"]})
    st = legal(st, "red: play major-00")
    assert st.to_move.value == "red"
    kinds = {type(m).__name__ for m in st.legal_moves()}
    assert kinds == {"Reveal"}
    illegal(st, "red: reveal major-00", "fool.must-play")          # it is on the discard pile
    illegal(st, "red: pass", "turn.pending")
    st = legal(st, "red: reveal cups-05", listed=True)
    assert st.in_flight == ("cups-05",)
    st = legal(st, "red: fool cups-05 by red1U@1,1: grow")
    assert pieces_at(st, "1,1") == ["red2U"]
    assert invariant_errors(st) == []


def test_hidden_draw_pile_fool_drawing_from_a_rebuilt_pile_may_name_a_discarded_card():
    """The Fool's draw with the draw pile empty shuffles the discard pile into a new one
    (1996 rules, "Ending the game": the discard pile is shuffled into a new draw pile once a
    player needs to draw a card): the card that comes up may be any card that lay on the
    discard pile. Only the cards unseen before the shuffle were offered and allowed, so the
    true card was refused ("cannot be in the draw pile") and the game could not go on."""
    pile = ["cups-05", "wands-07", "swords-03"]
    known = 9 + len(pile) + 1
    st = pos(pieces={"1,1": "red1U"}, hands={"red": ["major-00"], "blue": [UNKNOWN] * 3},
             deck=[], discard=pile, box=[UNKNOWN] * (78 - known - 3))
    st = legal(st, "red: play major-00")
    assert st.deck == () and st.discard == ("cups-05", "wands-07", "swords-03", "major-00")
    offered = {str(m) for m in st.legal_moves()}
    assert "red: reveal cups-05" in offered and "red: reveal major-00" in offered
    st = legal(st, "red: reveal cups-05")
    assert st.in_flight == ("cups-05",) and st.reshuffles == 1 and st.discard == ()
    assert len(st.deck) == 3 and invariant_errors(st) == []
