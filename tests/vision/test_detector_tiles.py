"""A play area larger than the card detector's trained view is read in tiles.

Without a printed mat the play area is a square of :data:`calibration.mat.NO_MAT_REACH_MM`
around the centre card, larger than the 980 mm the detector was trained to see on its
canvas; it is read in tiles at the trained scale, only where the frame shows the table, and
the pyramid finder looks only at the window of the area the frame shows.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

cv2 = pytest.importorskip("cv2")

from calibration.mat import DEFAULT_MAT, NO_MAT_REACH_MM, virtual_mat  # noqa: E402
from calibration.table import Calibration, seen_area_mm  # noqa: E402
from vision.detection.cards import TILE_DEPTH_MM, CardBoxes, CardDetector  # noqa: E402
from vision.detection.view import (TILE_OVERLAP_MM, TILE_SPAN_MM, DetectorView,  # noqa: E402
                                   depth_in_tile, tiles)
from vision.pyramids.find import window_mm  # noqa: E402

SIZE = 320


def test_the_default_mat_is_one_view_as_before():
    views = tiles(DEFAULT_MAT, SIZE, (-500.0, -500.0, 2000.0, 2000.0))
    assert views == [DetectorView.for_mat(DEFAULT_MAT, SIZE)]
    assert math.isclose(views[0].span_mm(), TILE_SPAN_MM)


def test_a_large_area_is_read_in_overlapping_tiles_at_the_trained_scale():
    mat = virtual_mat()
    assert mat.width_mm == mat.height_mm == 2 * NO_MAT_REACH_MM
    views = tiles(mat, SIZE)
    assert len(views) == 4
    for v in views:
        assert math.isclose(v.span_mm(), TILE_SPAN_MM)
    xs = sorted({v.shown()[0] for v in views})
    assert xs[0] == pytest.approx(-40.0)
    assert max(v.shown()[2] for v in views) == pytest.approx(mat.width_mm + 40.0)
    assert xs[0] + TILE_SPAN_MM - xs[1] >= TILE_OVERLAP_MM


def test_only_the_part_of_the_area_the_frame_shows_is_read():
    mat = virtual_mat()
    assert len(tiles(mat, SIZE, (300.0, 400.0, 1100.0, 1000.0))) == 1
    assert len(tiles(mat, SIZE, (300.0, 400.0, 1500.0, 1000.0))) == 2
    assert tiles(mat, SIZE, (3000.0, 3000.0, 4000.0, 4000.0)) == []


def test_every_card_centre_lies_deep_enough_in_one_tile_to_be_read_whole():
    mat = virtual_mat()
    rng = np.random.default_rng(5)
    for area in [None, (-300.0, 100.0, 2400.0, 1500.0), (200.0, -100.0, 1700.0, 900.0)]:
        views = tiles(mat, SIZE, area)
        lo = np.array([min(v.shown()[0] for v in views), min(v.shown()[1] for v in views)])
        hi = np.array([max(v.shown()[2] for v in views), max(v.shown()[3] for v in views)])
        pts = lo + rng.random((2000, 2)) * (hi - lo)
        deepest = np.max([depth_in_tile(views, k, pts) for k in range(len(views))], axis=0)
        assert np.all(deepest >= TILE_DEPTH_MM)
    # a card's half diagonal fits in that depth
    assert TILE_DEPTH_MM > 0.5 * math.hypot(70.0, 120.0)


def test_a_shifted_view_shows_the_table_where_it_says():
    view = DetectorView(SIZE, SIZE / TILE_SPAN_MM, 40.0, (700.0, 300.0))
    assert view.shown() == pytest.approx((660.0, 260.0, 660.0 + TILE_SPAN_MM, 260.0 + TILE_SPAN_MM))
    px = np.array([[0.5, 0.5], [100.0, 250.0], [319.5, 10.0]])
    assert np.allclose(view.to_px(view.to_mm(px)), px)
    # an image that is the table at 1 px/mm: the canvas samples it where to_mm says
    image = np.zeros((2000, 2000, 3), np.uint8)
    yy, xx = np.mgrid[0:2000, 0:2000]
    image[..., 0] = (xx // 8) % 256
    image[..., 1] = (yy // 8) % 256
    calib = Calibration(True, np.eye(3))
    canvas = view.render(image, calib)
    for u, v in [(40, 40), (160, 200), (300, 100)]:
        x, y = view.to_mm(np.array([u + 0.5, v + 0.5]))
        assert abs(int(canvas[v, u, 0]) - (int(x) // 8) % 256) <= 1
        assert abs(int(canvas[v, u, 1]) - (int(y) // 8) % 256) <= 1


def test_the_seen_area_of_a_frame():
    calib = Calibration(True, np.diag([2.0, 2.0, 1.0]), image_size=(100, 50))
    assert seen_area_mm(calib) == pytest.approx((0.0, 0.0, 200.0, 100.0))
    assert seen_area_mm(Calibration(False)) is None
    # a frame whose top looks past the horizon: no bounded area
    H = np.array([[1.0, 0, 0], [0, 1.0, 0], [0, -0.02, 1.0]])
    assert seen_area_mm(Calibration(True, H, image_size=(100, 100))) is None


def test_the_pyramid_window_is_the_seen_part_of_the_bordered_area_in_whole_cells():
    mat = virtual_mat()
    assert window_mm(mat, 24.0, None) == (-24.0, -24.0, mat.width_mm + 24.0, mat.height_mm + 24.0)
    assert window_mm(mat, 24.0, (101.0, -500.0, 702.5, 301.0)) == (100.0, -24.0, 704.0, 304.0)
    assert window_mm(mat, 24.0, (5000.0, 0.0, 6000.0, 100.0)) is None


class _Tiled(CardDetector):
    """The detector's tiling with its network replaced: each tile 'sees' the cards of a
    list, whole where they lie inside the tile and cut where they cross its edge."""

    def __init__(self, cards: list[tuple[float, float]]) -> None:
        self.size, self.iou, self.conf, self.last_view = SIZE, 0.5, 0.35, None
        self.cards = cards
        self.canvases: list[DetectorView] = []

    def detect_canvas(self, canvas: np.ndarray, view: DetectorView) -> CardBoxes:
        self.canvases.append(view)
        x0, y0, x1, y1 = view.shown()
        out = []
        for cx, cy in self.cards:
            # a portrait card, 70 x 120 mm: the part of it inside the tile
            a, b = max(cx - 35, x0), min(cx + 35, x1)
            c, d = max(cy - 60, y0), min(cy + 60, y1)
            if b - a > 10 and d - c > 10:
                out.append(((a + b) / 2, (c + d) / 2, b - a, d - c))
        if not out:
            return CardBoxes.empty()
        arr = np.array(out)
        return CardBoxes(arr[:, :2], np.full(len(arr), 90.0),
                         np.column_stack([arr[:, 2], arr[:, 3]]), np.full(len(arr), 0.9))


def test_tiles_read_each_card_once_and_whole():
    mat = virtual_mat()
    views = tiles(mat, SIZE)
    xs = sorted({v.shown()[0] for v in views})
    # one card in the middle of the overlap, one cut by the first tile's right edge, one
    # far from any edge, one on a corner where four tiles meet
    edge = xs[0] + TILE_SPAN_MM
    cards = [(0.5 * (xs[1] + edge), 300.0), (edge - 20.0, 500.0), (200.0, 200.0),
             (0.5 * (xs[1] + edge), 0.5 * (xs[1] + edge))]
    det = _Tiled(cards)
    calib = Calibration(True, np.eye(3), image_size=(2100, 2100))
    boxes = det.detect(np.zeros((2100, 2100, 3), np.uint8), calib, mat)
    assert len(det.canvases) == 4
    assert len(boxes) == len(cards)
    got = sorted(map(tuple, np.round(boxes.centers_mm, 1)))
    assert got == sorted((round(x, 1), round(y, 1)) for x, y in cards)
    assert np.allclose(np.sort(boxes.sizes_mm, axis=1), [[70.0, 120.0]] * len(cards))


def test_a_game_spread_past_the_mats_canvas_is_read_in_a_tile_beside_it():
    """With the printed mat one canvas shows 40 mm past its west, north and east edges; a
    card that lies near one of those sides has the table past it read as well (where the
    frame shows it), at the same scale, and every card is read once and whole."""
    from vision.detection.view import SPILL_EDGE_MM, spill_views

    main = DetectorView.for_mat(DEFAULT_MAT, SIZE)
    x0, y0, x1, y1 = main.shown()
    wide = (-400.0, -300.0, 1500.0, 1000.0)
    # nothing near a side: one canvas
    sure = np.array([0.9, 0.9])
    assert spill_views(main, np.array([[450.0, 325.0], [65.0, 600.0]]), sure, wide) == []
    # the lattice at the east edge of the mat, one card past the canvas's side
    cards = [(805.0, 325.0), (900.0, 325.0), (995.0, 325.0), (1090.0, 325.0)]
    assert x1 - 900.0 < SPILL_EDGE_MM
    east = spill_views(main, np.array(cards[:2]), sure, wide)
    assert len(east) == 1 and math.isclose(east[0].span_mm(), main.span_mm())
    ex0, ey0, ex1, ey1 = east[0].shown()
    assert math.isclose(ex0, x1 - TILE_OVERLAP_MM) and (ey0, ey1) == (y0, y1)
    # ... unless the frame stops at the canvas's side
    assert spill_views(main, np.array(cards[:2]), sure, (-400.0, -300.0, x1 + 10.0, 1000.0)) == []
    # ... or the card near the side is a box the detector is unsure of
    assert spill_views(main, np.array(cards[:2]), np.array([0.9, 0.6]), wide) == []
    det = _Tiled(cards + [(300.0, 200.0)])
    calib = Calibration(True, np.eye(3), image_size=(1600, 1100))
    boxes = det.detect(np.zeros((1100, 1600, 3), np.uint8), calib, DEFAULT_MAT)
    assert [v.shown()[0] for v in det.canvases] == [x0, ex0]
    got = sorted(map(tuple, np.round(boxes.centers_mm, 1)))
    assert got == sorted(cards + [(300.0, 200.0)])
    assert np.allclose(np.sort(boxes.sizes_mm, axis=1), [[70.0, 120.0]] * 5)
    # the main canvas is still the one kept for the pipeline's cuts
    assert det.last_view is not None


def test_the_tile_beside_the_canvas_is_read_only_when_a_card_is_near_that_side():
    det = _Tiled([(450.0, 325.0), (200.0, 500.0)])
    calib = Calibration(True, np.eye(3), image_size=(1600, 1100))
    det.detect(np.zeros((1100, 1600, 3), np.uint8), calib, DEFAULT_MAT)
    assert len(det.canvases) == 1
