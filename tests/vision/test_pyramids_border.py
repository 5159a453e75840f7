"""The pyramid finder looks past the mat's edges (vision.pyramids.find.BORDER_MM): a pyramid
set down beside the play area is on the table too, and is reported in the mat's frame."""

from __future__ import annotations

import numpy as np
import pytest

from calibration.mat import DEFAULT_MAT, Mat
from vision.pyramids.find import BORDER_MM, bordered, shifted

#: pyramids whose base centre lies past an edge of the play area (900 x 650 mm), and two
#: inside it
PAST_EDGE = [("red", 2, True, (450.0, -12.0)), ("blue", 3, True, (912.0, 330.0)),
             ("yellow", 1, True, (300.0, 662.0)), ("green", 2, True, (-10.0, 420.0)),
             ("purple", 2, True, (200.0, 200.0)), ("orange", 3, True, (640.0, 380.0))]


def test_a_bordered_mat_keeps_its_markers_and_zones_where_they_are_on_the_table():
    mat = Mat(zones={"stash": (10.0, 20.0, 110.0, 220.0)})
    wide = bordered(mat, 25.0)
    assert (wide.width_mm, wide.height_mm) == (950.0, 700.0)
    for k, (x, y) in mat.marker_centers().items():
        assert wide.marker_centers()[k] == pytest.approx((x + 25.0, y + 25.0))
        assert np.allclose(np.array(wide.marker_corners()[k]),
                           np.array(mat.marker_corners()[k]) + 25.0)
    assert wide.zones["stash"] == (35.0, 45.0, 135.0, 245.0)
    assert bordered(mat, 0.0) is mat
    assert bordered(Mat(printed=False), 25.0).marker_centers() == {}


def test_a_shifted_calibration_moves_every_table_point_by_the_border():
    from calibration.table import Calibration

    H = np.array([[0.5, 0.02, -40.0], [-0.01, 0.52, -30.0], [1e-5, 2e-5, 1.0]])
    calib = Calibration(True, H=H, image_size=(1920, 1080))
    px = np.array([[100.0, 200.0], [1500.0, 900.0]])
    assert np.allclose(shifted(calib, 25.0).to_table(px), calib.to_table(px) + 25.0)
    assert np.allclose(shifted(calib, 25.0).to_image(calib.to_table(px) + 25.0), px)
    assert shifted(calib, 0.0) is calib


def _scene(tarot):
    from calibration.table import Intrinsics, TableCalibrator
    from vision.synth.camera import camera_over_mat
    from vision.synth.render import plain_style, render
    from vision.synth.scene import PyramidPlacement, TableScene

    cam = camera_over_mat(DEFAULT_MAT, (1920, 1080), tilt=6.0, yaw=2.0, tilt_dir=120.0)
    scene = TableScene(cards=[], pyramids=[PyramidPlacement(c, pips, up, xy, None)
                                           for c, pips, up, xy in PAST_EDGE])
    image, truth = render(scene, tarot, DEFAULT_MAT, cam, plain_style((95, 120, 85), seed=4))
    calib = TableCalibrator(DEFAULT_MAT, Intrinsics(cam.K, cam.dist)).calibrate(image)
    assert calib.calibrated
    return image, calib, truth


def _found(finds, truth) -> list[str]:
    out = []
    for p in truth["pyramids"]:
        b = np.array(p["base_center_mm"])
        if any(np.linalg.norm(np.array(f.base_center_mm) - b) < 12.0 and f.color == p["color"]
               for f in finds):
            out.append(p["color"])
    return out


def test_pyramids_just_past_the_mat_are_found_and_reported_in_the_mats_frame(tarot):
    from vision.pyramids import PyramidFinder

    assert BORDER_MM >= 20.0
    image, calib, truth = _scene(tarot)
    wide = PyramidFinder(DEFAULT_MAT)
    got = wide.find(image, calib)
    assert sorted(_found(got, truth)) == sorted(c for c, _, _, _ in PAST_EDGE)
    assert len(got) == len(PAST_EDGE)       # nothing false on the bare table past the mat
    # the play area alone: the four past the edges are not looked for
    narrow = PyramidFinder(DEFAULT_MAT, border_mm=0.0)
    assert sorted(_found(narrow.find(image, calib), truth)) == ["orange", "purple"]
    # look() stays in the mat's own frame (the training cutters label in it)
    assert wide.look(image, calib).view.shape == narrow.look(image, calib).view.shape


def test_the_mat_itself_is_seen_through_the_same_pixels_and_heat_cells_as_without(tarot):
    """The border is whole heat-map cells, view pixels and map steps: the bordered view
    holds the plain one pixel for pixel, and the heat map's cells lie where they did."""
    from vision.pyramids import PyramidFinder
    from vision.pyramids.find import VIEW_PPM
    from vision.pyramids.heat import CELL_MM
    from vision.pyramids.topdown import MAP_STEP_MM

    assert BORDER_MM % CELL_MM == 0 and BORDER_MM % MAP_STEP_MM == 0
    image, calib, _ = _scene(tarot)
    finder = PyramidFinder(DEFAULT_MAT)
    plain = finder.look(image, calib).view
    wide = finder._wide.look(image, shifted(calib, BORDER_MM)).view
    k = int(BORDER_MM * VIEW_PPM)
    inner = wide[k:k + plain.shape[0], k:k + plain.shape[1]]
    assert inner.shape == plain.shape
    assert np.abs(inner.astype(int) - plain.astype(int)).max() <= 1
    with pytest.raises(ValueError, match="border_mm 25.0: expected a multiple of 4 mm"):
        PyramidFinder(DEFAULT_MAT, border_mm=25.0)


def test_where_the_view_runs_past_the_image_nothing_is_found(tarot):
    """Past the image's edge the view is black; black there is not a black pyramid."""
    from vision.pyramids import PyramidFinder
    from vision.pyramids.colors import BACKGROUND
    from vision.pyramids.find import VIEW_PPM

    image, calib, _ = _scene(tarot)
    # the frame's right third cut away (the kept pixels keep their coordinates): the mat
    # runs past the image there
    small = np.ascontiguousarray(image[:, :1280])
    finder = PyramidFinder(DEFAULT_MAT)
    look = finder._wide.look(small, shifted(calib, finder.border_mm))
    out = look.topdown.outside(small.shape[:2], VIEW_PPM)
    assert 0.1 < out.mean() < 0.9
    assert (look.view[out] == 0).all(axis=-1).mean() > 0.98
    assert (look.seg.label[out] == BACKGROUND).all()
    assert not [f for f in finder.find(small, calib) if f.color == "black"]
