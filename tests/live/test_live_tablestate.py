"""Observation -> TableView: lattice snapping, stacks, discard top, pyramid poses."""

from __future__ import annotations

import math
from typing import Any

import pytest
from live_support import MAT, make_record, sample_record

from companion.core.pieces import Color, Pose, Pyramid
from companion.live.tablestate import Lattice, TableTracker, fit_lattice

LAYOUT = {(i, j): card for (i, j), card in zip(
    [(i, j) for j in range(3) for i in range(3)],
    ["swords-05", "major-18", "cups-09", "swords-08", "pentacles-04", "cups-05", "major-10",
     "wands-07", "swords-13"])}


def P(text: str) -> Pyramid:
    from companion.core.pieces import parse_pyramid

    return parse_pyramid(text)


@pytest.mark.parametrize("rotation", [0.0, 7.5, -12.0])
def test_a_rotated_offset_lattice_is_learned_and_cards_snap_to_their_cells(rotation: float) -> None:
    rec = make_record(LAYOUT, origin=(333.3, 187.0), rotation=rotation, jitter=4.0, seed=3)
    tr = TableTracker(MAT)
    reading = tr.read(rec)
    assert reading.trusted
    assert dict(reading.view.cards) == LAYOUT
    lat = tr.lattice
    assert lat is not None
    assert lat.rotation_deg == pytest.approx(rotation, abs=1.0)
    assert lat.origin_mm[0] == pytest.approx(333.3, abs=4.0)
    assert lat.origin_mm[1] == pytest.approx(187.0, abs=4.0)
    assert lat.portrait_parity == 0
    assert not reading.notes  # every card lies in its chequerboard orientation
    # the lattice is kept: a later table shifted by a whole cell keeps its cell names
    moved = {(i + 1, j): c for (i, j), c in LAYOUT.items()}
    later = tr.read(make_record(moved, origin=(333.3, 187.0), rotation=rotation))
    assert dict(later.view.cards) == moved


def test_a_known_board_names_the_cells_by_card_ids() -> None:
    named = {(i - 1, j + 2): c for (i, j), c in LAYOUT.items()}
    rec = make_record(LAYOUT, origin=(300.0, 200.0))
    lat = fit_lattice([c for c in TableTracker(MAT).read(rec).cards if c.zone is None], 95.0,
                      expected=named)
    assert lat.center((-1, 2)) == pytest.approx((300.0, 200.0), abs=0.5)
    tr = TableTracker(MAT)
    assert dict(tr.read(rec, expected=named).view.cards) == named


def test_the_odd_parity_lattice_and_a_card_lying_across_it() -> None:
    shifted = {(i + 1, j): c for (i, j), c in LAYOUT.items()}  # (i + j) odd cells portrait
    rec = make_record(shifted)
    tr = TableTracker(MAT)
    reading = tr.read(rec)
    assert tr.lattice is not None and tr.lattice.portrait_parity == 1
    assert set(reading.view.cards) == set(LAYOUT)  # renamed from the north-west corner
    assert not reading.notes
    wrong = make_record(LAYOUT, extra_cards=[{"id": "cups-02", "center_mm": [300 + 3 * 95, 200],
                                               "angle_deg": 270.0, "confidence": 0.9}])
    tr2 = TableTracker(MAT)
    tr2.read(make_record(LAYOUT))
    r2 = tr2.read(wrong)
    assert r2.view.cards[(3, 0)] == "cups-02"
    assert any("3,0" in n for n in r2.notes)


def test_a_covered_card_is_remembered_under_the_new_one() -> None:
    tr = TableTracker(MAT)
    first = tr.read(make_record(LAYOUT))
    tr.remember(first)
    # a new card put on 1,1: the camera sees both (the old one peeks out), no levels
    both = make_record(LAYOUT, extra_cards=[{"id": "pentacles-02", "center_mm": [398.0, 298.0],
                                             "angle_deg": 270.0, "confidence": 0.9}])
    r = tr.read(both)
    assert r.view.cards[(1, 1)] == "pentacles-02"
    assert r.covered[(1, 1)] == ("pentacles-04",)
    assert r.stacks[(1, 1)] == ("pentacles-04", "pentacles-02")
    tr.remember(r)
    # later only the top card is seen: the one underneath is still remembered
    only_top = dict(LAYOUT)
    only_top[(1, 1)] = "pentacles-02"
    r = tr.read(make_record(only_top))
    assert r.stacks[(1, 1)] == ("pentacles-04", "pentacles-02")
    tr.remember(r)
    # the top card taken away: the old one shows again
    r = tr.read(make_record(LAYOUT))
    assert r.view.cards[(1, 1)] == "pentacles-04"
    assert r.stacks[(1, 1)] == ("pentacles-04",)


def test_records_with_levels_name_the_top_card() -> None:
    rec = make_record(LAYOUT, extra_cards=[{"id": "pentacles-02", "center_mm": [395.0, 295.0],
                                            "angle_deg": 270.0, "confidence": 0.9, "level": 0}])
    for c in rec["cards"]:
        if c["id"] == "pentacles-04":
            c["level"] = 1
    assert TableTracker(MAT).read(rec).view.cards[(1, 1)] == "pentacles-04"


def test_the_top_of_the_discard_pile_is_the_card_just_played() -> None:
    tr = TableTracker(MAT)
    r = tr.read(make_record(LAYOUT, discard=["cups-07"]))
    assert r.view.discard_top == "cups-07"
    assert r.draw_pile == 1
    tr.remember(r)
    r = tr.read(make_record(LAYOUT, discard=["cups-07", "wands-04"]))
    assert r.view.discard_top == "wands-04"  # the card not there before is the new top
    assert r.discard_seen == ("wands-04", "cups-07")
    tr.remember(r)
    assert tr.read(make_record(LAYOUT)).view.discard_top is None
    # no discard card is ever a territory
    assert "cups-07" not in tr.read(make_record(LAYOUT, discard=["cups-07"])).view.cards.values()


def test_two_cards_new_on_the_pile_with_no_level_may_lie_either_way_up() -> None:
    """Two cards new on the pile, no level: their confidence says nothing of which covers
    which, so the reading gives both orders (the remembered card stays under them); with
    levels, or one new card, the order is known and none are given."""
    tr = TableTracker(MAT)
    tr.remember(tr.read(make_record(LAYOUT, discard=["cups-07"])))
    r = tr.read(make_record(LAYOUT, discard=["cups-07", "wands-04", "major-10"]))
    assert r.discard_seen == r.discard_orders[0]
    assert sorted(r.discard_orders) == [("major-10", "wands-04", "cups-07"),
                                        ("wands-04", "major-10", "cups-07")]
    assert r.with_pile(r.discard_orders[1]).view.discard_top == r.discard_orders[1][0]
    assert tr.read(make_record(LAYOUT, discard=["cups-07", "wands-04"])).discard_orders == ()
    rec = make_record(LAYOUT, discard=["cups-07", "wands-04", "major-10"])
    rec["cards"] = [dict(c, level=k) for k, c in enumerate(rec["cards"])]
    assert tr.read(rec).discard_orders == ()


@pytest.mark.parametrize("rotation", [0.0, 10.0])
def test_lying_pyramids_snap_to_the_nearest_lattice_direction(rotation: float) -> None:
    tr = TableTracker(MAT)
    tr.read(make_record(LAYOUT, rotation=rotation))
    lat = tr.lattice
    assert lat is not None
    # table angles: E = 0, S = 90, W = 180, N = 270 (plus the lattice rotation)
    for deg, pose in [(3.0, Pose.E), (95.0, Pose.S), (181.0, Pose.W), (262.0, Pose.N),
                      (314.0, Pose.N), (316.0, Pose.E), (44.0, Pose.E), (46.0, Pose.S)]:
        assert lat.pose(False, deg + rotation) is pose, deg
    assert lat.pose(True, None) is Pose.UP
    pyr = {(0, 2): [P("red1W"), P("red2U")], (2, 2): [P("blue2N")], (-1, 2): [P("green1S")]}
    r = tr.read(make_record(LAYOUT, pyr, rotation=rotation))
    assert dict(r.view.pyramids) == {(0, 2): (P("red1W"), P("red2U")), (2, 2): (P("blue2N"),),
                                     (-1, 2): (P("green1S"),)}  # -1,2: a wasteland space


def test_pyramids_in_a_stash_or_the_void_are_off_the_board() -> None:
    tr = TableTracker({"zones": {**MAT.zones, "stash-red": (700, 500, 880, 640)}})
    rec = make_record(LAYOUT)
    rec["pyramids"] = [
        {"color": "red", "pips": 3, "upright": True, "pointing_deg": None,
         "base_center_mm": [750.0, 560.0], "confidence": 0.9},   # in red's stash zone
        {"color": "blue", "pips": 1, "upright": True, "pointing_deg": None,
         "base_center_mm": [300.0 + 5 * 95, 200.0], "confidence": 0.9},  # two cells away
        {"color": "green", "pips": 1, "upright": True, "pointing_deg": None,
         "base_center_mm": [300.0 + 3 * 95, 200.0], "confidence": 0.9},  # wasteland
    ]
    r = tr.read(rec)
    assert dict(r.view.pyramids) == {(3, 0): (P("green1U"),)}
    assert {p.pyramid.color for p in r.off_board} == {Color.RED, Color.BLUE}
    assert {p.zone for p in r.off_board} == {"stash-red", None}


def test_untrusted_records_are_read_but_flagged() -> None:
    tr = TableTracker(MAT)
    r = tr.read(make_record(LAYOUT, hands=True, trustworthy=False))
    assert not r.trusted and "hand" in r.reason
    assert tr.lattice is None  # an untrusted record never teaches the lattice
    r = tr.read(make_record(LAYOUT, calibrated=False))
    assert not r.trusted and r.reason == "the table was not located"
    r = tr.read(make_record(LAYOUT, calibrated=False, reason="only 1 of the mat's 4 markers"))
    assert r.reason == "the table was not located (only 1 of the mat's 4 markers)"


def test_the_sample_game_reads_as_its_truth() -> None:
    """Every sample frame's spec fields give the truth's cells, discard top and pyramids."""
    import json

    from live_support import SAMPLES

    tr = TableTracker(MAT)
    for k in range(24):
        truth = json.loads((SAMPLES / f"{k:04d}.json").read_text())
        r = tr.read(sample_record(k))
        cards = {tuple(c["cell"]): c["id"] for c in truth["cards"] if c["group"] == "lattice"}
        disc = [c["id"] for c in truth["cards"] if c["group"] == "discard"]
        pyr: dict[tuple[int, int], list[Pyramid]] = {}
        for p in truth["pyramids"]:
            pyr.setdefault(tuple(p["cell"]), []).append(
                Pyramid(Color(p["color"]), p["pips"], Pose.from_degrees(p["pointing_deg"])))
        assert dict(r.view.cards) == cards, k
        assert r.view.discard_top == (disc[0] if disc else None), k
        assert dict(r.view.pyramids) == {c: tuple(sorted(v)) for c, v in pyr.items()}, k
        tr.remember(r)
    assert tr.lattice == Lattice(tr.lattice.origin_mm, 95.0, tr.lattice.rotation_deg, 0)


def test_a_card_away_from_the_board_is_not_part_of_it() -> None:
    """Two cells or more from every territory no move puts a card: with a mat it is a stray,
    without one (no zones) a face-up one is the discard pile, which names the card played."""
    from calibration.mat import virtual_mat

    far = {"id": "cups-07", "center_mm": [300.0 + 1 * 95.0, 200.0 + 4 * 95.0],
           "angle_deg": 270.0, "confidence": 0.98}
    near = {"id": "wands-02", "center_mm": [300.0 + 1 * 95.0, 200.0 + 3 * 95.0],
            "angle_deg": 0.0, "confidence": 0.98}
    for mat, discard in ((MAT, None), (virtual_mat(), "cups-07")):
        tr = TableTracker(mat)
        tr.read(make_record(LAYOUT, draw=0), expected=LAYOUT)
        tr.sync({cell: (card,) for cell, card in LAYOUT.items()})
        reading = tr.read(make_record(LAYOUT, draw=0, extra_cards=[far, near]))
        assert (1, 4) not in reading.view.cards                  # away: not the board's
        assert reading.view.cards.get((1, 3)) == "wands-02"      # next to it: a build
        assert reading.view.discard_top == discard


def test_before_the_deal_a_pile_away_from_the_layout_is_not_the_board() -> None:
    """Without a mat no zone says where the piles are. At the deal the board is the largest
    group of cards lying together: the draw pile's face-down card and a face-up card away
    from it are not dealt as territories, and the layout's north-west card is 0,0."""
    from calibration.mat import virtual_mat

    pile = {"id": "back", "center_mm": [300.0 - 4 * 95.0 + 5.0, 200.0 + 4 * 95.0 - 8.0],
            "angle_deg": 270.0, "confidence": 0.99}
    played = {"id": "cups-07", "center_mm": [300.0 + 6 * 95.0, 200.0 + 1 * 95.0],
              "angle_deg": 270.0, "confidence": 0.98}
    tr = TableTracker(virtual_mat())
    reading = tr.read(make_record(LAYOUT, draw=0, extra_cards=[pile, played]))
    assert reading.view.cards == LAYOUT
    assert reading.view.discard_top == "cups-07"
    assert [c.id for c in reading.strays] == ["back"]


@pytest.mark.parametrize("shift", [(77.0, 0.0), (95.0, 95.0), (40.0, -30.0), (-190.0, 12.0),
                                   (25.0, 10.0), (-14.0, 0.0)])
def test_a_board_that_moved_under_the_lattice_is_found_again(shift: tuple[float, float]) -> None:
    """A camera nudged (or, without a mat, a new fit of the table frame) moves every card:
    the lattice is fitted again and the cells keep their names. A small move (still within
    the snap tolerance, but every card the same way) is followed before cards fall off."""
    tr = TableTracker(MAT)
    tr.read(make_record(LAYOUT, draw=0))
    tr.sync({cell: (card,) for cell, card in LAYOUT.items()})
    before = tr.lattice
    moved = make_record(LAYOUT, draw=0, origin=(300.0 + shift[0], 200.0 + shift[1]))
    reading = tr.read(moved)
    assert (reading.view.cards == LAYOUT) == (math.hypot(*shift) < 0.35 * 95.0)
    again = tr.refind(moved, reading, LAYOUT)
    assert again is not None and again.view.cards == LAYOUT
    assert tr.lattice is not None and before is not None
    assert tr.lattice.center((0, 0)) == pytest.approx((300.0 + shift[0], 200.0 + shift[1]),
                                                      abs=1.0)


def test_a_board_that_did_not_move_is_not_looked_for_again() -> None:
    tr = TableTracker(MAT)
    tr.read(make_record(LAYOUT, draw=0))
    tr.sync({cell: (card,) for cell, card in LAYOUT.items()})
    lattice = tr.lattice
    # a move destroys two territories: two misses are a move, not a moved board
    two_gone = {c: k for c, k in LAYOUT.items() if c not in ((0, 0), (1, 0))}
    rec = make_record(two_gone, draw=0)
    assert tr.refind(rec, tr.read(rec), LAYOUT) is None and tr.lattice is lattice
    # most of the board covered (not seen): looking again finds nothing better
    rec = make_record({(2, 2): LAYOUT[(2, 2)], (1, 2): LAYOUT[(1, 2)]}, draw=0)
    assert tr.refind(rec, tr.read(rec), LAYOUT) is None and tr.lattice is lattice


def test_without_a_mat_the_discard_pile_need_not_lie_on_the_lattice() -> None:
    """The players put the pile where they like: a face-up card away from the board names
    the card played wherever it lies (a camera nudged a few mm moved it off a lattice
    point, and every move that discards stopped matching)."""
    from calibration.mat import virtual_mat

    tr = TableTracker(virtual_mat())
    tr.read(make_record(LAYOUT, draw=0), expected=LAYOUT)
    tr.sync({cell: (card,) for cell, card in LAYOUT.items()})
    for off in (0.0, 30.0, 47.0):
        pile = {"id": "cups-07", "center_mm": [300.0 - 3 * 95.0 + off, 200.0 + 4 * 95.0],
                "angle_deg": 270.0, "confidence": 0.98}
        reading = tr.read(make_record(LAYOUT, draw=0, extra_cards=[pile]))
        assert reading.view.discard_top == "cups-07" and not reading.strays


def test_a_board_turned_about_its_middle_is_found_again() -> None:
    """A turn about the board's middle moves the cards opposite ways: their mean offset
    stays near zero, their spread does not."""
    tr = TableTracker(MAT)
    tr.read(make_record(LAYOUT, draw=0))
    tr.sync({cell: (card,) for cell, card in LAYOUT.items()})
    theta = math.radians(12.0)
    cx, cy = 300.0 + 95.0, 200.0 + 95.0          # the middle card (1, 1)
    ox = cx + math.cos(theta) * -95.0 - math.sin(theta) * -95.0
    oy = cy + math.sin(theta) * -95.0 + math.cos(theta) * -95.0
    turned = make_record(LAYOUT, draw=0, origin=(ox, oy), rotation=12.0)
    again = tr.refind(turned, tr.read(turned), LAYOUT)
    assert again is not None and again.view.cards == LAYOUT
    assert tr.lattice is not None and tr.lattice.rotation_deg == pytest.approx(12.0, abs=0.5)


def test_the_board_is_found_again_from_its_own_cards_not_the_hands_beside_it() -> None:
    """Two players' hands lie face down at odd angles beside a 4-card board: the refit after
    a nudge follows the board's cards, so later builds still land on the lattice."""
    four = {cell: LAYOUT[cell] for cell in ((0, 0), (1, 0), (0, 1), (1, 1))}
    hands = [{"id": "back", "center_mm": [300.0 + 40.0 * k, 520.0 + 10.0 * k],
              "angle_deg": 25.0 + 10.0 * (k % 2), "confidence": 0.95} for k in range(6)]
    tr = TableTracker(MAT)
    tr.read(make_record(four, draw=0))
    tr.sync({cell: (card,) for cell, card in four.items()})
    nudged = make_record(four, draw=0, origin=(320.0, 215.0), extra_cards=hands)
    again = tr.refind(nudged, tr.read(nudged), four)
    assert again is not None and again.view.cards == four
    assert tr.lattice is not None and abs(tr.lattice.rotation_deg) < 0.5
    built = {**four, (2, 0): "wands-10", (-1, 1): "pentacles-06"}
    assert tr.read(make_record(built, draw=0, origin=(320.0, 215.0),
                               extra_cards=hands)).view.cards == built


def test_a_refit_refused_keeps_the_users_corrections(monkeypatch: pytest.MonkeyPatch) -> None:
    """A trial read on a lattice that is then refused must not prune the corrections the
    user made (a read drops those whose misread card is no longer seen where it was)."""
    import companion.live.tablestate as ts

    tr = TableTracker(MAT)
    tr.read(make_record(LAYOUT, draw=0))
    tr.sync({cell: (card,) for cell, card in LAYOUT.items()})
    misread = {**LAYOUT, (2, 0): "swords-02"}
    tr.correct_card((2, 0), "swords-02", LAYOUT[(2, 0)])
    assert tr.lattice is not None
    # a refit that lands a cell off (every card on another cell): tried, and refused
    monkeypatch.setattr(ts, "fit_lattice", lambda *a, **k: tr.lattice.shifted(1, 0))
    covered = {c: k for c, k in misread.items() if c not in ((0, 1), (0, 2), (1, 2))}
    rec = make_record(covered, draw=0)
    assert tr.refind(rec, tr.read(rec), LAYOUT) is None
    assert tr.corrections == 1
    assert tr.read(make_record(misread, draw=0)).view.cards[(2, 0)] == LAYOUT[(2, 0)]


def test_without_a_mat_a_card_put_aside_is_not_the_discard_pile() -> None:
    """The pile is where it was seen last: a face-up card elsewhere away from the board (a
    card put aside, a player's card laid down to think) does not name the card played; and
    before any pile was seen, two cards apart name none."""
    from calibration.mat import virtual_mat

    def loose(card: str, x: float, y: float) -> dict[str, Any]:
        return {"id": card, "center_mm": [x, y], "angle_deg": 270.0, "confidence": 0.98}

    pile_at, aside_at = (300.0 - 3 * 95.0, 200.0 + 4 * 95.0), (300.0 + 6 * 95.0, 200.0)
    tr = TableTracker(virtual_mat())
    tr.read(make_record(LAYOUT, draw=0), expected=LAYOUT)
    tr.sync({cell: (card,) for cell, card in LAYOUT.items()})
    apart = tr.read(make_record(LAYOUT, draw=0, extra_cards=[loose("cups-07", *pile_at),
                                                              loose("cups-03", *aside_at)]))
    assert apart.view.discard_top is None and len(apart.strays) == 2
    first = tr.read(make_record(LAYOUT, draw=0, extra_cards=[loose("cups-07", *pile_at)]))
    assert first.view.discard_top == "cups-07"
    tr.remember(first)
    later = tr.read(make_record(LAYOUT, draw=0, extra_cards=[
        loose("cups-07", *pile_at), loose("wands-02", pile_at[0] + 4.0, pile_at[1] + 3.0),
        loose("cups-03", *aside_at)]))
    assert sorted(later.discard_seen) == ["cups-07", "wands-02"]
    assert [c.id for c in later.strays] == ["cups-03"]


@pytest.mark.parametrize("quarter", [1, 2, 3])
def test_a_board_turned_by_quarters_is_found_again(quarter: int) -> None:
    """Without a mat a frame's axes can flip by quarter turns (a camera turned past 45
    degrees, a phone turned, the tripod moved to the other side): the cells keep their
    names."""
    from calibration.mat import virtual_mat

    tr = TableTracker(virtual_mat())
    tr.read(make_record(LAYOUT, draw=0))
    tr.sync({cell: (card,) for cell, card in LAYOUT.items()})
    theta = math.radians(90.0 * quarter)
    cx, cy = 300.0 + 95.0, 200.0 + 95.0
    ox = cx + math.cos(theta) * -95.0 - math.sin(theta) * -95.0
    oy = cy + math.sin(theta) * -95.0 + math.cos(theta) * -95.0
    turned = make_record(LAYOUT, draw=0, origin=(ox, oy), rotation=90.0 * quarter)
    again = tr.refind(turned, tr.read(turned), LAYOUT)
    assert again is not None and again.view.cards == LAYOUT


def test_a_face_down_card_on_the_discard_zone_is_not_the_card_played() -> None:
    """The draw pile slid onto the discard pile's zone: a face-down card there is a stray,
    not a card played (it crashed the move search)."""
    back = {"id": "back", "center_mm": [175.0, 600.0], "angle_deg": 270.0, "confidence": 0.99}
    tr = TableTracker(MAT)
    reading = tr.read(make_record(LAYOUT, draw=0, extra_cards=[back]))
    assert reading.view.discard_top is None and [c.id for c in reading.strays] == ["back"]
    assert any("face-down card lies on the discard pile's zone" in n for n in reading.notes)


def test_without_a_mat_a_hand_laid_down_is_not_taken_for_the_discard_pile() -> None:
    """A player's hand laid face up (a heap of three) is never a new pile; a new pile is one
    or two cards beside the draw pile; after the pile is rebuilt into the draw pile, a
    hand beside it is still not the pile."""
    from calibration.mat import virtual_mat

    def card(cid: str, x: float, y: float) -> dict[str, Any]:
        return {"id": cid, "center_mm": [x, y], "angle_deg": 270.0, "confidence": 0.98}

    draw = card("back", 0.0, 600.0)
    hand = [card(c, 150.0 + 25.0 * k, 640.0) for k, c in enumerate(("cups-03", "wands-12",
                                                                      "major-00"))]
    tr = TableTracker(virtual_mat())
    tr.read(make_record(LAYOUT, draw=0), expected=LAYOUT)
    tr.sync({cell: (c,) for cell, c in LAYOUT.items()})
    laid = tr.read(make_record(LAYOUT, draw=0, extra_cards=[draw, *hand]))
    assert laid.view.discard_top is None
    played = tr.read(make_record(LAYOUT, draw=0,
                                 extra_cards=[draw, *hand, card("cups-07", 0.0, 480.0)]))
    assert played.view.discard_top == "cups-07"
    tr.remember(played)
    tr.sync({cell: (c,) for cell, c in LAYOUT.items()}, ())     # the pile rebuilt
    rebuilt = tr.read(make_record(LAYOUT, draw=0, extra_cards=[draw, *hand]))
    assert rebuilt.view.discard_top is None
