"""bench/pile_names.py's judging of the cards a record reads (right or wrong, on the discard
pile's top, under it or elsewhere, how much of them shows) and its table of floors: the
figures PILE_NAME_SURE was chosen on."""

from __future__ import annotations

from bench.pile_names import Read, floor_rows, floor_table, populations, reads

ZONE = (130.0, 560.0, 220.0, 640.0)


def _truth() -> dict:
    """A pile of two in the zone (cups-07 over major-10, the latter mostly covered), a card
    on the table half covered by another, and a card buried out of sight."""
    return {"cards": [
        {"id": "cups-07", "center_mm": [175.0, 600.0], "group": "discard", "level": 1,
         "uncovered": 1.0},
        {"id": "wands-02", "center_mm": [400.0, 300.0], "group": None, "level": 0,
         "uncovered": 0.6},
        {"id": "wands-05", "center_mm": [440.0, 300.0], "group": None, "level": 1,
         "uncovered": 1.0},
        {"id": "swords-01", "center_mm": [700.0, 300.0], "group": None, "level": 0,
         "uncovered": 1.0, "in_frame": False}],
        "covered_cards": [
        {"id": "major-10", "center_mm": [180.0, 596.0], "group": "discard", "level": 0,
         "uncovered": 0.1}]}


def _card(cid: str, x: float, y: float, confidence: float) -> dict:
    return {"id": cid, "center_mm": [x, y], "confidence": confidence}


def test_each_read_is_judged_by_the_true_card_it_lies_on() -> None:
    record = [_card("cups-07", 176.0, 600.0, 0.9),      # the pile's top, right
              _card("major-10", 181.0, 596.0, 0.7),     # under it, right
              _card("wands-03", 400.0, 301.0, 0.6),     # the half-covered card, misread
              _card("wands-05", 440.0, 300.0, 0.93),    # in full view, right
              _card("back", 441.0, 300.0, 0.9),         # a back: never named
              _card("major-01", 600.0, 100.0, 0.5),     # a false box: no card there
              _card("swords-01", 700.0, 300.0, 0.9)]    # cut by the frame's edge
    assert reads(record, _truth(), ZONE, 10.0) == [
        Read(0.9, True, "top", 1.0), Read(0.7, True, "under", 0.1),
        Read(0.6, False, "elsewhere", 0.6), Read(0.93, True, "elsewhere", 1.0)]


def test_a_misread_on_the_pile_is_the_card_nearest_it() -> None:
    # (major-10 read as major-11 beside where it lies; cups-07 read as cups-08 on it)
    record = [_card("major-11", 181.0, 596.0, 0.5), _card("cups-08", 175.0, 600.5, 0.4)]
    assert reads(record, _truth(), ZONE, 10.0) == [Read(0.5, False, "under", 0.1),
                                                  Read(0.4, False, "top", 1.0)]


def test_a_name_is_kept_at_the_floor_and_over_it() -> None:
    rs = [Read(0.9, True, "under", 0.2), Read(0.7, True, "under", 0.2),
          Read(0.6, False, "under", 0.2), Read(0.75, False, "elsewhere", 0.7)]
    assert floor_rows(rs, (0.6, 0.7, 0.8)) == [(0.6, 2, 2, 2, 2), (0.7, 2, 2, 1, 2),
                                               (0.8, 1, 2, 0, 2)]
    assert "| 0.70 | 2/2 (100.0 %) | 1/2 (50.0 %) | 1/3 (33.3 %) |" in floor_table(rs, (0.7,))
    kinds = dict(populations(rs))
    assert len(kinds["cards under the discard pile's top"]) == 3
    assert kinds["cards elsewhere partly covered (50%-95% uncovered)"] == rs[3:]
    assert len(kinds["every card covered in part (under 95% uncovered; the pile's under "
                     "its top)"]) == 4
