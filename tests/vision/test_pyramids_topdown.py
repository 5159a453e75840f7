"""The pyramid finder's table-to-image maps, patches and marker-paper white balance."""

from __future__ import annotations

import math

import numpy as np
import pytest

cv2 = pytest.importorskip("cv2")

from calibration.mat import DEFAULT_MAT  # noqa: E402
from calibration.table import Calibration, Intrinsics, TableCalibrator  # noqa: E402
from vision.pyramids.topdown import (  # noqa: E402
    PAPER_LEVEL,
    TopDown,
    apply_gains,
    paper_gains,
    table_to_image,
)
from vision.synth.camera import camera_over_mat  # noqa: E402
from vision.synth.render import plain_style, render  # noqa: E402
from vision.synth.scene import TableScene  # noqa: E402


def _camera(dist: bool = True):
    cam = camera_over_mat(DEFAULT_MAT, (1280, 720), tilt=14.0, yaw=20.0, tilt_dir=120.0)
    if dist:
        cam.dist = np.array([-0.12, 0.03, 0.0005, -0.0004, 0.0])
    return cam


def _exact_calibration(cam) -> Calibration:
    """The calibration the markers would give with no error: the camera's own table plane."""
    return Calibration(True, H=np.linalg.inv(cam.K @ np.column_stack(
        [cam.R[:, 0], cam.R[:, 1], cam.t])), intrinsics=Intrinsics(cam.K, cam.dist),
        image_size=(1280, 720))


def test_image_px_matches_the_camera_projection():
    cam = _camera()
    calib = _exact_calibration(cam)
    rng = np.random.default_rng(5)
    pts = np.column_stack([rng.uniform(0, 900, 200), rng.uniform(0, 650, 200)])
    want = cam.project(np.column_stack([pts, np.zeros(len(pts))]))
    got_exact = table_to_image(calib, pts)
    assert np.abs(got_exact - want).max() < 0.05
    td = TopDown(calib, DEFAULT_MAT)
    # the cached grid is interpolated: still far below a pixel
    assert np.abs(td.image_px(pts) - want).max() < 0.1
    # any leading shape is kept
    assert td.image_px(pts.reshape(10, 20, 2)).shape == (10, 20, 2)


@pytest.mark.parametrize("ppm", [0.75, 1.0, 0.5])
def test_the_views_map_is_the_grid_read_at_each_view_pixel(ppm):
    cam = _camera()
    calib = _exact_calibration(cam)
    td = TopDown(calib, DEFAULT_MAT)
    m1, m2 = td._view_maps(ppm)
    w, h = int(round(DEFAULT_MAT.width_mm * ppm)), int(round(DEFAULT_MAT.height_mm * ppm))
    assert m1.shape[:2] == (h, w)
    # view pixel (u, v) shows table point ((u + 0.5) / ppm, (v + 0.5) / ppm)
    u, v = np.meshgrid((np.arange(w) + 0.5) / ppm, (np.arange(h) + 0.5) / ppm)
    want = td.image_px(np.dstack([u, v]))
    got = cv2.convertMaps(m1, m2, cv2.CV_32FC2)[0]
    assert np.abs(got - want).max() < 1 / 32 + 1e-3   # the fixed-point maps' resolution


def test_view_and_patches_show_the_table_where_it_is(tarot):
    cam = _camera()
    style = plain_style((60, 85, 110), seed=1)
    image, _ = render(TableScene(), tarot, DEFAULT_MAT, cam, style)
    # a small bright square drawn on the table at a known place (500, 300) mm, 10 mm wide
    sq = np.array([[495, 295], [505, 295], [505, 305], [495, 305]], np.float64)
    px = cam.project(np.column_stack([sq, np.zeros(4)]))
    cv2.fillConvexPoly(image, np.round(px).astype(np.int32), (255, 255, 255))
    calib = TableCalibrator(DEFAULT_MAT, Intrinsics(cam.K, cam.dist)).calibrate(image)
    assert calib.calibrated
    td = TopDown(calib, DEFAULT_MAT)
    view = td.view(image, 1.0)
    assert view.shape[:2] == (650, 900)
    ys, xs = np.nonzero(view.min(axis=2) > 200)
    ys, xs = ys[(xs > 400) & (xs < 600)], xs[(xs > 400) & (xs < 600)]
    assert abs(xs.mean() + 0.5 - 500) < 1.0 and abs(ys.mean() + 0.5 - 300) < 1.0
    # a patch centred 20 mm west of the square with "up" pointing east shows it above
    # the centre; turned so that "up" is south (right is then west), to the left
    p = td.patches(image, np.array([[480.0, 300.0], [480.0, 300.0]]), np.array([0.0, 90.0]),
                   64, 64.0)
    for k, (dx_want, dy_want) in enumerate([(0.0, -20.0), (-20.0, 0.0)]):
        ys, xs = np.nonzero(p[k].min(axis=2) > 200)
        assert len(xs) > 20
        assert abs((xs.mean() + 0.5) - 32 - dx_want) < 1.5, k
        assert abs((ys.mean() + 0.5) - 32 - dy_want) < 1.5, k


def test_a_moved_camera_is_noticed():
    cam = _camera(dist=False)
    H = np.linalg.inv(cam.K @ np.column_stack([cam.R[:, 0], cam.R[:, 1], cam.t]))
    calib = Calibration(True, H=H, image_size=(1280, 720))
    td = TopDown(calib, DEFAULT_MAT)
    assert td.same_camera(Calibration(True, H=H.copy(), image_size=(1280, 720)))
    moved = np.array([[1, 0, 2.0], [0, 1, 0], [0, 0, 1]]) @ H  # 2 mm along x
    assert not td.same_camera(Calibration(True, H=moved, image_size=(1280, 720)))
    assert not td.same_camera(Calibration(False))


# BGR gains of the lamp: an orange one and a blue one, each with its brightest channel
# at 1 (a camera's exposure keeps the paper from clipping)
@pytest.mark.parametrize("wb", [(1.0, 1.0, 1.0), (0.37, 0.63, 1.0), (1.0, 0.69, 0.43)])
def test_marker_paper_undoes_the_colour_of_the_light(tarot, wb):
    cam = _camera(dist=False)
    style = plain_style((60, 85, 110), seed=2)
    neutral, _ = render(TableScene(), tarot, DEFAULT_MAT, cam, style)
    style.wb = wb
    tinted, _ = render(TableScene(), tarot, DEFAULT_MAT, cam, style)
    calib = TableCalibrator(DEFAULT_MAT, Intrinsics(cam.K, cam.dist)).calibrate(tinted)
    assert calib.calibrated
    td = TopDown(calib, DEFAULT_MAT)
    g0, g1 = td.paper_gains(neutral), td.paper_gains(tinted)
    # the gains make the paper grey; their ratio is the lamp's colour, undone
    assert np.allclose(g0 / g1, wb, rtol=0.04), (g0, g1)
    table0 = apply_gains(td.view(neutral, 1.0), g0)[300:350, 400:450].reshape(-1, 3).mean(0)
    table1 = apply_gains(td.view(tinted, 1.0), g1)[300:350, 400:450].reshape(-1, 3).mean(0)
    assert np.abs(table0 - table1).max() < 4.0, (table0, table1)


def test_paper_gains_need_paper():
    # no marker ring in sight (all samples out of the frame) -> no correction
    samples = -np.ones((400, 3), np.int16)
    assert np.array_equal(paper_gains(samples, 100), np.ones(3, np.float32))
    grey = np.full((400, 3), 150, np.int16)
    g = paper_gains(grey, 100)
    assert np.allclose(g, PAPER_LEVEL / 150, atol=1e-3)
    assert math.isclose(float(apply_gains(np.full((2, 2, 3), 150, np.uint8), g)[0, 0, 0]),
                        round(PAPER_LEVEL), abs_tol=1)


def test_a_mat_file_with_huge_markers_still_gets_its_paper_read():
    # a mat file that says its markers are 600 mm rings them with about 39,000 points,
    # more than remap takes on one side: read in columns (it failed with OpenCV's
    # "dst.rows < SHRT_MAX" before), and the same gains as one column would give
    from calibration.mat import Mat

    big = Mat(DEFAULT_MAT.dictionary, 600.0, DEFAULT_MAT.width_mm, DEFAULT_MAT.height_mm)
    cam = _camera(dist=False)
    calib = _exact_calibration(cam)
    rng = np.random.default_rng(3)
    image = rng.integers(0, 256, (720, 1280, 3), dtype=np.uint8)
    image[..., 0] //= 2                 # a blue-poor light: gains other than ones
    for td in (TopDown(calib, big), TopDown(calib, DEFAULT_MAT)):
        assert not np.allclose(td.paper_gains(image), 1.0)
        # the same samples as one remap of all the points laid out in rows would give
        p = td._ring_px
        n = len(p)
        rows = -(-n // 1000)
        grid = np.zeros((rows * 1000, 2), np.float32)
        grid[:n] = p
        grid = grid.reshape(rows, 1000, 2)
        one = cv2.remap(image, grid[..., 0].copy(), grid[..., 1].copy(), cv2.INTER_LINEAR,
                        borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0)
                        ).reshape(-1, 3)[:n]
        inside = (p[:, 0] >= 0) & (p[:, 0] <= 1279) & (p[:, 1] >= 0) & (p[:, 1] <= 719)
        samples = one.astype(np.int16)
        samples[~inside] = -1
        assert np.array_equal(td.paper_gains(image), paper_gains(samples, td._ring_per_marker))
    assert len(TopDown(calib, big)._ring_px) > 32767
