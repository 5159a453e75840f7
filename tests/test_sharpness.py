"""How sharp a frame is, read on the mat's markers (calibration.sharpness)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

cv2 = pytest.importorskip("cv2")

from calibration.mat import DEFAULT_MAT  # noqa: E402
from calibration.sharpness import (BLURRED_EDGE_PX, blurred_picture, edge_blur_px,  # noqa: E402
                                  edge_sigmas)
from calibration.table import Calibration, Intrinsics, TableCalibrator  # noqa: E402

SAMPLE = Path(__file__).resolve().parent.parent / "sample_images" / "zarcana" / "0005.jpg"

LENS = [-0.12, 0.03, 0.0005, -0.0004, 0.0]


def _table(blur_sigma: float = 0.0, motion: tuple[float, float] = (0.0, 0.0),
           dist: list[float] | None = None) -> tuple[np.ndarray, Calibration]:
    """The marker tests' small table rendered with this blur, and its calibration from the
    markers (with the lens's intrinsics where it has a distortion)."""
    from test_marker_calibration import _render_table

    image, truth = _render_table(np.zeros(5) if dist is None else np.asarray(dist),
                                 motion=motion, blur_sigma=blur_sigma)
    intr = None
    if dist is not None:
        intr = Intrinsics(np.array(truth["camera"]["K"]), np.array(truth["camera"]["dist"]))
    calib = TableCalibrator(DEFAULT_MAT, intr).calibrate(image)
    assert calib.calibrated and len(calib.markers_seen) == 4
    return image, calib


def test_a_sharp_frame_reads_sharp_and_a_defocused_one_reads_about_its_blur() -> None:
    sharp, calib = _table()
    assert len(edge_sigmas(sharp, calib, DEFAULT_MAT)) == 16
    s = edge_blur_px(sharp, calib, DEFAULT_MAT)
    assert s is not None and s < BLURRED_EDGE_PX
    soft, calib = _table(blur_sigma=1.6)
    s = edge_blur_px(soft, calib, DEFAULT_MAT)
    # the render's own softness adds to the defocus (in quadrature)
    assert s is not None and 1.45 < s < 2.1
    # gray frames read as colour ones do
    gray = cv2.cvtColor(soft, cv2.COLOR_BGR2GRAY)
    assert abs(edge_blur_px(gray, calib, DEFAULT_MAT) - s) < 0.2


def test_a_shake_spreads_the_edges_across_it_more_than_those_along_it() -> None:
    image, calib = _table(motion=(9.0, 0.0))
    sigmas = sorted(edge_sigmas(image, calib, DEFAULT_MAT))
    # (the markers lie 27 degrees off the image's axes, so no edge lies quite along it)
    assert sigmas[-1] > 1.5 * sigmas[0]
    s = edge_blur_px(image, calib, DEFAULT_MAT)
    assert s is not None and s > 2.0


def test_through_a_lens_with_distortion_the_edges_are_found_where_the_lens_put_them() -> None:
    image, calib = _table(dist=LENS)
    assert calib.intrinsics is not None and calib.intrinsics.distorts
    assert len(edge_sigmas(image, calib, DEFAULT_MAT)) == 16
    s = edge_blur_px(image, calib, DEFAULT_MAT)
    assert s is not None and s < BLURRED_EDGE_PX


def test_a_covered_marker_gives_no_edges_and_no_marker_gives_no_figure() -> None:
    image, calib = _table()
    hidden = image.copy()
    c = calib.to_image(np.asarray(DEFAULT_MAT.marker_corners()[calib.markers_seen[0]]))
    big = (c.mean(axis=0) + (c - c.mean(axis=0)) * 1.6).astype(np.int32)
    cv2.fillConvexPoly(hidden, big, (120, 150, 200))      # a hand over it, flat colour
    assert len(edge_sigmas(hidden, calib, DEFAULT_MAT)) == 12
    assert edge_blur_px(image, Calibration(False, reason="no markers"), DEFAULT_MAT) is None
    none_seen = Calibration(True, H=calib.H, markers_seen=())
    assert edge_blur_px(image, none_seen, DEFAULT_MAT) is None


def test_an_edge_past_the_frames_side_is_not_read() -> None:
    """A profile that leaves the frame meets a false, sharp step at its side: a blurred
    frame cut through a marker still reads blurred on every edge left."""
    image, calib = _table(blur_sigma=1.6)
    c = calib.to_image(np.asarray(DEFAULT_MAT.marker_corners()[calib.markers_seen[0]]))
    assert min(edge_sigmas(image, calib, DEFAULT_MAT)) > BLURRED_EDGE_PX
    for x0 in np.linspace(c[:, 0].min() - 8, c[:, 0].mean(), 6).astype(int):
        cut = image[:, x0:]
        shifted = Calibration(True, H=calib.H @ np.array([[1, 0, x0], [0, 1, 0], [0, 0, 1.0]]),
                              markers_seen=calib.markers_seen)
        sigmas = edge_sigmas(cut, shifted, DEFAULT_MAT)
        assert 12 <= len(sigmas) <= 16 and min(sigmas) > BLURRED_EDGE_PX, x0


def test_a_blurred_record_is_put_in_a_players_words_and_a_sharp_one_is_not() -> None:
    assert blurred_picture({"blurred": True, "calibration": {"edge_blur_px": 1.9}}) == \
        "the picture is blurred (the mat's marker edges spread over 1.9 px)"
    assert blurred_picture({"blurred": True}) == "the picture is blurred"
    for sharp in ({"blurred": False, "calibration": {"edge_blur_px": 0.8}}, {},
                  {"blurred": "yes"}):
        assert blurred_picture(sharp) is None



def test_a_calibration_is_blurred_only_where_its_marker_edges_were_measured_wide() -> None:
    from dataclasses import replace

    calib = Calibration(calibrated=True, H=np.eye(3))
    assert calib.edge_blur_px is None and calib.blurred is False   # not measured
    assert replace(calib, edge_blur_px=BLURRED_EDGE_PX).blurred is False
    assert replace(calib, edge_blur_px=BLURRED_EDGE_PX + 0.1).blurred is True



def test_a_photo_that_draws_the_table_larger_is_not_called_blurred_for_it() -> None:
    """A sharp sample frame scaled up 2.5 times (a 12 MP photo of the table: its edges
    spread over 2.3 px, for 0.85 at 1080p) is still sharp: the limit grows with the pixels
    a millimetre takes; the same photo defocused (4 px) is blurred."""
    from calibration.sharpness import blurred_over_px

    image = cv2.imread(str(SAMPLE))
    big = cv2.resize(image, (4800, 2700), interpolation=cv2.INTER_CUBIC)
    for frame, blurred in ((big, False), (cv2.GaussianBlur(big, (0, 0), 4.0), True)):
        calib = TableCalibrator(DEFAULT_MAT).calibrate(frame)
        spread = edge_blur_px(frame, calib, DEFAULT_MAT)
        limit = blurred_over_px(calib, DEFAULT_MAT)
        assert spread is not None and spread > BLURRED_EDGE_PX and limit > BLURRED_EDGE_PX
        assert replace(calib, edge_blur_px=spread, blurred_over_px=limit).blurred is blurred
    # a 1080p frame keeps the limit it was set with
    calib = TableCalibrator(DEFAULT_MAT).calibrate(image)
    assert blurred_over_px(calib, DEFAULT_MAT) == BLURRED_EDGE_PX
