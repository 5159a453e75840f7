"""A game that spreads off the mat: where the cards found lie past the border the pyramid
finder looks at, the pipeline has it look there too (vision.pyramids.find.spill_areas,
spill_window, PyramidFinder.find_past; vision.pipeline.SPILL_REACH_CELLS)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from calibration.mat import DEFAULT_MAT
from vision.pyramids.find import (BORDER_MM, SPILL_OVERLAP_MM, SPILL_STEP_MM, spill_areas,
                                  spill_window)

#: the default mat is 900 x 650 mm; the finder looks to 24 mm past each edge
SOUTH_EDGE = DEFAULT_MAT.height_mm + BORDER_MM
HALF_DIAG = 0.5 * float(np.hypot(70.0, 120.0))


def test_only_cards_past_the_border_make_an_area_one_for_each_side():
    inside = [((450.0, 300.0), HALF_DIAG), ((450.0, 590.0), HALF_DIAG)]
    assert spill_areas(DEFAULT_MAT, BORDER_MM, inside, 140.0) == []
    south = [((400.0, 740.0), HALF_DIAG), ((495.0, 760.0), HALF_DIAG)]
    east = [((990.0, 300.0), HALF_DIAG)]
    areas = spill_areas(DEFAULT_MAT, BORDER_MM, inside + south + east, 140.0)
    assert sorted(areas) == sorted([(260.0, 600.0, 635.0, 900.0),
                                    (850.0, 160.0, 1130.0, 440.0)])


def test_a_card_just_over_the_border_is_not_a_game_off_the_mat():
    # its corner 5 mm past the border: the finder's own look sees what stands on it
    y = SOUTH_EDGE + 5.0 - HALF_DIAG
    assert spill_areas(DEFAULT_MAT, BORDER_MM, [((450.0, y), HALF_DIAG)], 140.0) == []
    y = SOUTH_EDGE + 15.0 - HALF_DIAG
    assert len(spill_areas(DEFAULT_MAT, BORDER_MM, [((450.0, y), HALF_DIAG)], 140.0)) == 1


def test_the_window_is_what_lies_past_the_border_in_whole_steps_and_in_the_frame():
    win = spill_window(DEFAULT_MAT, BORDER_MM, (260.0, 600.0, 635.0, 900.0), None)
    assert win is not None
    x0, y0, x1, y1 = win
    # reaching SPILL_OVERLAP_MM back over the border's edge, not over the whole mat
    assert SOUTH_EDGE - SPILL_OVERLAP_MM - SPILL_STEP_MM < y0 <= SOUTH_EDGE - SPILL_OVERLAP_MM
    assert x0 <= 260.0 and x1 >= 635.0 and y1 >= 900.0
    assert all(v % SPILL_STEP_MM == 0 for v in win)
    # the frame shows the table only to 820 mm south
    shown = (-100.0, -80.0, 1000.0, 820.0)
    cut = spill_window(DEFAULT_MAT, BORDER_MM, (260.0, 600.0, 635.0, 900.0), shown)
    assert cut is not None and cut[3] == 832.0 and cut[:3] == win[:3]
    # nothing of it past the border, or none of it in the frame
    assert spill_window(DEFAULT_MAT, BORDER_MM, (100.0, 100.0, 400.0, 600.0), None) is None
    assert spill_window(DEFAULT_MAT, BORDER_MM, (260.0, 700.0, 635.0, 900.0),
                        (-100.0, -80.0, 1000.0, 660.0)) is None
    # an area past two sides is cut to the one it reaches farthest past
    corner = spill_window(DEFAULT_MAT, BORDER_MM, (800.0, 600.0, 1010.0, 700.0), None)
    assert corner is not None and corner[0] >= DEFAULT_MAT.width_mm + BORDER_MM - 48.0
    assert corner[1] <= 600.0


#: two cards laid south of the mat (the lattice has grown off it), a pyramid on one and one
#: on the table beside them, and one on the mat
CARDS = [("cups-03", (430.0, 745.0), 0.0), ("wands-05", (525.0, 745.0), 90.0)]
PYRAMIDS = [("red", 2, True, (430.0, 742.0), None, 0.35),
            ("blue", 3, False, (610.0, 765.0), 90.0, 0.0),
            ("yellow", 1, True, (300.0, 300.0), None, 0.0)]


def _render(tarot: Any, cards: list[Any], pyramids: list[Any], target: tuple[float, float],
            tilt_dir: float, seed: int) -> tuple[np.ndarray, Any, dict[str, Any], Any]:
    """(image, calibration from the markers, truth, lens) of ``cards`` (id, centre, angle)
    and ``pyramids`` (colour, pips, upright, base centre, pointing, rest height) seen by a
    camera aimed at ``target``, on a plain table."""
    from calibration.table import Intrinsics, TableCalibrator
    from vision.synth.camera import camera_over_mat
    from vision.synth.render import plain_style, render
    from vision.synth.scene import CardPlacement, PyramidPlacement, TableScene

    cam = camera_over_mat(DEFAULT_MAT, (1920, 1080), tilt=5.0, yaw=2.0, tilt_dir=tilt_dir,
                          target=target)
    scene = TableScene(
        cards=[CardPlacement(cid, xy, ang) for cid, xy, ang in cards],
        pyramids=[PyramidPlacement(c, pips, up, xy, pt, rest)
                  for c, pips, up, xy, pt, rest in pyramids])
    image, truth = render(scene, tarot, DEFAULT_MAT, cam, plain_style((95, 120, 85), seed=seed))
    lens = Intrinsics(cam.K, cam.dist)
    calib = TableCalibrator(DEFAULT_MAT, lens).calibrate(image)
    assert calib.calibrated
    assert all(c["in_frame"] and c["visible"] > 0.9 for c in truth["cards"] + truth["pyramids"])
    return image, calib, truth, lens


def _scene(tarot: Any) -> tuple[np.ndarray, Any, dict[str, Any]]:
    # aimed south of the mat's centre, so that the frame shows the table past its south edge
    image, calib, truth, _ = _render(tarot, CARDS, PYRAMIDS, (450.0, 430.0), 90.0, 5)
    return image, calib, truth


def _found(finds: list[Any], truth: dict[str, Any]) -> list[str]:
    got = []
    for p in truth["pyramids"]:
        b = np.array(p["base_center_mm"])
        for f in finds:
            xy = f["base_center_mm"] if isinstance(f, dict) else f.base_center_mm
            color = f["color"] if isinstance(f, dict) else f.color
            if np.linalg.norm(np.array(xy) - b) < 12.0 and color == p["color"]:
                got.append(p["color"])
    return sorted(got)


def test_the_finder_finds_past_the_border_only_where_it_is_asked(tarot: Any, finder: Any):
    image, calib, truth = _scene(tarot)
    # its own look stops at the border
    assert _found(finder.find(image, calib), truth) == ["yellow"]
    areas = spill_areas(DEFAULT_MAT, BORDER_MM,
                        [(xy, HALF_DIAG) for _, xy, _ in CARDS], 1.5 * 95.0)
    assert len(areas) == 1
    past = finder.find_past(image, calib, areas)
    assert _found(past, truth) == ["blue", "red"]
    assert len(past) == 2                 # nothing false on the cards or the bare table
    blue = next(f for f in past if f.color == "blue")
    assert blue.pips == 3 and not blue.upright
    assert abs((blue.pointing_deg - 90.0 + 180.0) % 360.0 - 180.0) < 30.0
    assert finder.find_past(image, calib, []) == []


@pytest.mark.parametrize("in_process", [False, True], ids=["thread", "process"])
def test_the_pipeline_reports_the_pyramids_of_a_game_spread_off_the_mat(
        tarot: Any, in_process: bool, monkeypatch: pytest.MonkeyPatch):
    import vision.pipeline as vp
    from vision_truth import TruthBoxes

    image, _, truth = _scene(tarot)
    boxes = TruthBoxes()
    boxes.fallback = truth
    with vp.TablePipeline(deck="tarot", card_detector=boxes,
                          pyramid_process=in_process) as pipe:
        assert (pipe._process is not None) == in_process
        record = pipe.observe(image, "spread.png")
        assert _found(record["pyramids"], truth) == ["blue", "red", "yellow"]
        assert len(record["pyramids"]) == 3
        assert record["timings_ms"]["pyramids_past"] > 0
        monkeypatch.setattr(vp, "SPILL_REACH_CELLS", 0.0)
        record = pipe.observe(image, "spread.png")
        assert _found(record["pyramids"], truth) == ["yellow"]
        assert "pyramids_past" not in record["timings_ms"]


#: a row of the lattice running off the mat's east edge, past the detector's canvas (it
#: shows 40 mm past that edge), a pyramid on the farthest card
EAST_CARDS = [("swords-04", (805.0, 325.0), 90.0), ("major-03", (900.0, 325.0), 0.0),
              ("cups-09", (995.0, 325.0), 90.0), ("pentacles-02", (1090.0, 325.0), 0.0)]
EAST_PYRAMIDS = [("green", 3, True, (1090.0, 320.0), None, 0.35),
                 ("orange", 2, True, (400.0, 300.0), None, 0.0)]


def test_the_shipped_pipeline_sees_a_lattice_grown_off_the_mats_east_edge(tarot: Any):
    from vision.pipeline import TablePipeline

    image, _, truth, lens = _render(tarot, EAST_CARDS, EAST_PYRAMIDS, (600.0, 325.0), 0.0, 6)
    with TablePipeline(deck="tarot", intrinsics=lens, pyramid_process=False) as pipe:
        record = pipe.observe(image, "east.png")
    assert len(record["cards"]) == len(EAST_CARDS)
    for cid, xy, _ in EAST_CARDS:
        assert any(c["id"] == cid and np.hypot(c["center_mm"][0] - xy[0],
                                               c["center_mm"][1] - xy[1]) < 25.0
                   for c in record["cards"]), cid
    assert _found(record["pyramids"], truth) == ["green", "orange"]
    assert len(record["pyramids"]) == 2


def test_a_pyramid_process_lost_before_the_second_look_costs_no_pyramid(
        tarot: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture):
    """The process answers the frame, then is gone when asked to look past the border: the
    pipeline looks there itself, and goes on without the process."""
    import logging

    import vision.pipeline as vp
    from vision.pyramids.process import PyramidProcess, PyramidProcessError
    from vision_truth import TruthBoxes

    def gone(self: Any, calib: Any, areas: Any) -> Any:
        raise PyramidProcessError("the pyramid process ended")

    monkeypatch.setattr(PyramidProcess, "submit_past", gone)
    image, _, truth = _scene(tarot)
    boxes = TruthBoxes()
    boxes.fallback = truth
    with vp.TablePipeline(deck="tarot", card_detector=boxes, pyramid_process=True) as pipe:
        with caplog.at_level(logging.WARNING, logger="vision.pipeline"):
            record = pipe.observe(image, "spread.png")
        assert _found(record["pyramids"], truth) == ["blue", "red", "yellow"]
        assert pipe._process is None
        assert "found in this process from now on" in caplog.text
