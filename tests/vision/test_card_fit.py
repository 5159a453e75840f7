"""vision/cards/fit.py: detector boxes snapped onto a card's edges."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from calibration.table import Calibration
from vision.cards.fit import EdgeFit, fit_card_box, fit_card_boxes
from vision.cards.identify import card_corners_mm

CARD = (70.0, 120.0)
PX_PER_MM = 2.0


def _camera() -> np.ndarray:
    """Table mm -> image px: 2 px/mm, turned 12 degrees, a little perspective."""
    a = math.radians(12.0)
    S = np.array([[PX_PER_MM * math.cos(a), -PX_PER_MM * math.sin(a), 140.0],
                  [PX_PER_MM * math.sin(a), PX_PER_MM * math.cos(a), 20.0],
                  [0.0, 0.0, 1.0]])
    P = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.5e-4, -1e-4, 1.0]])
    return P @ S


def _table(cards: list[tuple[tuple[float, float], float]], seed: int = 0) -> tuple[np.ndarray,
                                                                                   np.ndarray]:
    """(image, H image px -> mm) of a dark textured table with light cards (a dark frame line
    inset 4 mm and random art inside) at ((x, y) mm, long-axis angle) each."""
    rng = np.random.default_rng(seed)
    mm_scale = 4                                  # draw in a 4 px/mm table canvas
    canvas = rng.normal(60, 12, (400 * mm_scale, 400 * mm_scale, 3)).clip(0, 255)
    canvas = cv2.GaussianBlur(canvas.astype(np.uint8), (0, 0), 3)
    for center, angle in cards:
        outer = card_corners_mm(center, angle, CARD) * mm_scale
        inner = card_corners_mm(center, angle, (CARD[0] - 8, CARD[1] - 8)) * mm_scale
        cv2.fillConvexPoly(canvas, np.round(outer).astype(np.int32), (225, 232, 236),
                           cv2.LINE_AA)
        cv2.polylines(canvas, [np.round(inner).astype(np.int32)], True, (40, 40, 40), 3,
                      cv2.LINE_AA)
        for _ in range(12):                      # art: blobs well inside the frame
            u = rng.uniform(-0.3, 0.3, 2) * np.array(CARD)
            a = math.radians(angle)
            p = np.array(center) + u[1] * np.array([math.cos(a), math.sin(a)]) \
                + u[0] * np.array([-math.sin(a), math.cos(a)])
            cv2.circle(canvas, tuple(int(v) for v in p * mm_scale), int(rng.integers(8, 30)),
                       tuple(int(v) for v in rng.integers(0, 255, 3)), -1, cv2.LINE_AA)
    H_mm_to_px = _camera() @ np.diag([1 / mm_scale, 1 / mm_scale, 1.0])
    image = cv2.warpPerspective(canvas, H_mm_to_px, (960, 800), flags=cv2.INTER_AREA)
    return image, np.linalg.inv(_camera())


def _off(fit: EdgeFit, center: tuple[float, float], angle: float) -> tuple[float, float]:
    da = (fit.axis_deg - angle) % 180.0
    return math.dist(fit.center_mm, center), min(da, 180.0 - da)


@pytest.mark.parametrize("shift, turn", [((4.0, -3.0), 5.0), ((-6.0, 2.0), -3.0),
                                         ((0.0, 7.0), 0.0), ((3.0, 3.0), -6.5)])
def test_a_box_millimetres_and_degrees_off_is_snapped_onto_the_card(shift, turn):
    center, angle = (200.0, 190.0), 80.0
    image, H = _table([(center, angle)])
    start = (center[0] + shift[0], center[1] + shift[1])
    fit = fit_card_box(image, H, start, angle + turn, CARD)
    dist, dang = _off(fit, center, angle)
    assert dist < 0.8 and dang < 0.6, (fit, dist, dang)
    assert fit.moved and fit.edge > 20.0


def test_a_right_box_stays_right():
    center, angle = (200.0, 190.0), 80.0
    image, H = _table([(center, angle)])
    dist, dang = _off(fit_card_box(image, H, center, angle, CARD), center, angle)
    assert dist < 0.5 and dang < 0.3


def test_a_neighbour_across_a_narrow_gap_does_not_pull_the_box():
    # lattice neighbours 2 mm apart, end to end: the box starts 3 mm toward the neighbour
    a = math.radians(80.0)
    along = np.array([math.cos(a), math.sin(a)])
    center = np.array([200.0, 170.0])
    other = center + along * (CARD[1] + 2.0)
    image, H = _table([(tuple(center), 80.0), (tuple(other), 80.0)], seed=3)
    start = center + along * 3.0
    fit = fit_card_box(image, H, start, 80.0, CARD)
    dist, dang = _off(fit, tuple(center), 80.0)
    assert dist < 0.8 and dang < 0.6, (fit, dist)


def test_no_edges_leaves_the_box_where_it_was():
    blank = np.full((600, 800, 3), 90, np.uint8)
    fit = fit_card_box(blank, np.linalg.inv(_camera()), (150.0, 150.0), 30.0, CARD)
    assert fit == EdgeFit((150.0, 150.0), 30.0, 0.0, 0.0, 0.0)
    assert not fit.moved


def test_every_box_is_fitted_through_the_calibration():
    cards = [((120.0, 120.0), 10.0), ((260.0, 230.0), 100.0)]
    image, H = _table(cards, seed=5)
    calib = Calibration(calibrated=True, H=H)
    starts = np.array([[124.0, 117.0], [257.0, 234.0]])
    fits = fit_card_boxes(image, calib, starts, np.array([14.0, 97.0]), CARD)
    for fit, (center, angle) in zip(fits, cards):
        dist, dang = _off(fit, center, angle)
        assert dist < 0.8 and dang < 0.6
