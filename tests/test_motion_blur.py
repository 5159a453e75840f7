"""Motion blur: guessed from a frame, undone, and the mat's markers read through it."""

from __future__ import annotations

import math

import numpy as np
import pytest

cv2 = pytest.importorskip("cv2")

from calibration.mat import DEFAULT_MAT  # noqa: E402
from calibration.motion import (Deconvolver, MotionBlur, deblur, guess_angles,  # noqa: E402
                                guess_length, guesses)
from calibration.table import TableCalibrator, detect_markers  # noqa: E402


def _angle_off(a: float, b: float) -> float:
    return abs((a - b + 90.0) % 180.0 - 90.0)


def test_a_blur_must_have_a_positive_length_and_a_finite_angle() -> None:
    with pytest.raises(ValueError, match="length must be a positive"):
        MotionBlur(0.0, 10.0)
    with pytest.raises(ValueError, match="length must be a positive"):
        MotionBlur(float("nan"), 10.0)
    with pytest.raises(ValueError, match="angle must be finite"):
        MotionBlur(5.0, float("inf"))


@pytest.mark.parametrize("length, angle", [(9.0, 0.0), (12.0, 90.0), (11.0, 45.0),
                                           (7.0, 150.0)])
def test_the_kernel_is_a_line_of_that_length_and_direction(length: float, angle: float) -> None:
    k = MotionBlur(length, angle).kernel()
    assert k.shape[0] == k.shape[1] and k.shape[0] % 2 == 1
    assert math.isclose(float(k.sum()), 1.0, rel_tol=1e-5)
    ys, xs = np.nonzero(k)
    c = k.shape[0] // 2
    # every tap lies on the line through the middle
    d = np.abs((xs - c) * math.sin(math.radians(angle)) - (ys - c) * math.cos(math.radians(angle)))
    assert d.max() <= 0.75
    # and the taps reach as far as the length says
    along = (xs - c) * math.cos(math.radians(angle)) + (ys - c) * math.sin(math.radians(angle))
    assert abs(float(along.max() - along.min()) + 1 - length) <= 1.5


def _texture(seed: int = 0, size: tuple[int, int] = (540, 960)) -> np.ndarray:
    """Blocks of random grey, like card art: edges in every direction."""
    rng = np.random.default_rng(seed)
    small = rng.integers(0, 256, (size[0] // 12, size[1] // 12)).astype(np.uint8)
    img = cv2.resize(small, size[::-1], interpolation=cv2.INTER_NEAREST)
    return cv2.GaussianBlur(img, (0, 0), 1.0)


def _blurred(img: np.ndarray, blur: MotionBlur, noise: float = 1.5, seed: int = 1
             ) -> np.ndarray:
    out = cv2.filter2D(img.astype(np.float32), -1, blur.kernel(), borderType=cv2.BORDER_REFLECT)
    out += np.random.default_rng(seed).normal(0, noise, out.shape).astype(np.float32)
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)


def test_deblurring_with_the_right_line_restores_the_frame() -> None:
    sharp = _texture()
    blur = MotionBlur(11.0, 30.0)
    seen = _blurred(sharp, blur)
    inner = (slice(20, -20), slice(20, -20))

    def err(x: np.ndarray) -> float:
        return float(np.abs(x[inner].astype(float) - sharp[inner]).mean())

    back = deblur(seen, blur)
    assert back.shape == seen.shape and back.dtype == np.uint8
    assert err(back) < 0.85 * err(seen)  # (a diagonal line restores least of all)
    # the wrong direction does not
    assert err(deblur(seen, MotionBlur(11.0, 120.0))) > err(back) * 1.5
    # a colour frame: each channel as if alone (two of them share one complex transform,
    # so cross-talk between them would show here)
    others = [_blurred(_texture(seed=s), blur, seed=s) for s in (11, 12)]
    colour = deblur(cv2.merge([seen, *others]), blur)
    assert colour.shape == (*seen.shape, 3)
    for i, alone in enumerate([seen, *others]):
        assert np.abs(colour[..., i].astype(int) - deblur(alone, blur)).max() <= 1
    # one frame's transform serves one blur after another, as the calibrator's guesses use it
    frame = Deconvolver(seen)
    for b in (MotionBlur(7.0, 100.0), blur):
        assert np.array_equal(frame(b), deblur(seen, b))


def test_deblur_refuses_what_is_not_an_8_bit_image() -> None:
    with pytest.raises(ValueError, match="uint8"):
        deblur(np.zeros((40, 40), np.float32), MotionBlur(5.0, 0.0))


@pytest.mark.parametrize("length, angle", [(12.0, 20.0), (10.0, 100.0), (14.0, 160.0)])
def test_the_guesses_find_the_direction_and_about_the_length(length: float, angle: float
                                                             ) -> None:
    seen = _blurred(_texture(seed=int(angle)), MotionBlur(length, angle))
    best = guess_angles(seen)[0]
    assert _angle_off(best, angle) <= 10.0
    assert -1.0 <= guess_length(seen, best) - length <= 4.0
    tries = list(guesses(seen))
    assert len(tries) <= 12
    assert any(_angle_off(g.angle_deg, angle) <= 10.0 and 0 <= g.length_px - length <= 2.5
               for g in tries[:4])


def test_a_spectrum_needs_a_frame_of_at_least_one_tile() -> None:
    with pytest.raises(ValueError, match="smaller than one"):
        guess_angles(np.zeros((100, 100), np.uint8))


@pytest.fixture(scope="module")
def shaken_table():
    """The marker tests' small table, the camera moving 14 px along x while the shutter is
    open: the markers' cells merge and no look of the plain detector reads one."""
    from test_marker_calibration import _render_table

    return _render_table(np.zeros(5), motion=(14.0, 0.0))


def test_a_shaken_frame_is_calibrated_by_undoing_the_blur(shaken_table) -> None:
    image, truth = shaken_table
    assert detect_markers(image, DEFAULT_MAT) == {}, "the render no longer hides its markers"
    cal = TableCalibrator(DEFAULT_MAT).calibrate(image)
    assert cal.calibrated and cal.markers_seen == (0, 1, 2, 3)
    assert cal.motion_blur is not None
    assert _angle_off(cal.motion_blur.angle_deg, 0.0) <= 10.0
    assert "motion blur" in cal.reason
    px = np.array([c["center_px"] for c in truth["cards"]])
    mm = np.array([c["center_mm"] for c in truth["cards"]])
    assert np.abs(cal.to_table(px) - mm).max() < 1.5
    # without the fourth look the frame says it found no marker, as before
    off = TableCalibrator(DEFAULT_MAT, deblur_look=False).calibrate(image)
    assert not off.calibrated and "no mat marker" in off.reason


def test_a_shaken_frames_record_says_the_blur_was_undone(shaken_table) -> None:
    from vision.pipeline import TablePipeline

    image, truth = shaken_table
    with TablePipeline(mat=DEFAULT_MAT, threads=1) as pl:
        rec = pl.observe(image, "shaken")
    assert rec["calibrated"]
    cal = rec["calibration"]
    assert 11.0 <= cal["motion_blur_px"] <= 17.0
    assert _angle_off(cal["motion_blur_deg"], 0.0) <= 10.0
    assert "motion blur" in cal["note"]
    assert "deblur" in rec["timings_ms"]
    # and the markers' edges, read on the frame as taken, call it blurred
    assert rec["blurred"] is True and cal["edge_blur_px"] > 2.0
    # the cards are read from the deblurred frame: all four found where they lie
    assert len(rec["cards"]) == len(truth["cards"])


@pytest.fixture(scope="module")
def still_table():
    """The same table with the camera still: every marker reads at the first look."""
    from test_marker_calibration import _render_table

    return _render_table(np.zeros(5))


def test_a_calibrated_camera_knocked_later_is_calibrated_by_undoing_the_blur(
        still_table, shaken_table) -> None:
    """A fixed camera calibrated from a still frame, then knocked while the shutter was open:
    the shaken frame reads no marker at the window or whole-frame searches, and is read
    through deblurring as it would be as a first frame, not reported uncalibrated."""
    image, truth = shaken_table
    calibrator = TableCalibrator(DEFAULT_MAT)
    assert calibrator.calibrate(still_table[0]).calibrated
    cal = calibrator.calibrate(image)
    assert cal.calibrated and cal.markers_seen == (0, 1, 2, 3), cal.reason
    assert cal.motion_blur is not None and "motion blur" in cal.reason
    px = np.array([c["center_px"] for c in truth["cards"]])
    mm = np.array([c["center_mm"] for c in truth["cards"]])
    assert np.abs(cal.to_table(px) - mm).max() < 1.5
    # the still camera's next frame is read as before, with no blur to undo
    again = calibrator.calibrate(still_table[0])
    assert again.calibrated and again.motion_blur is None
    # switched off, the shaken frame says the markers are not visible, as it used to
    off = TableCalibrator(DEFAULT_MAT, deblur_look=False)
    assert off.calibrate(still_table[0]).calibrated
    assert not off.calibrate(image).calibrated


def test_a_pipeline_reads_a_knocked_frame_after_a_still_one(still_table, shaken_table) -> None:
    from vision.pipeline import TablePipeline

    image, truth = shaken_table
    with TablePipeline(mat=DEFAULT_MAT, threads=1) as pl:
        assert pl.observe(still_table[0], "still")["calibrated"]
        rec = pl.observe(image, "knocked")
    assert rec["calibrated"] and "motion blur" in rec["calibration"]["note"]
    assert len(rec["cards"]) == len(truth["cards"])


def test_covered_markers_on_a_calibrated_camera_pay_for_deblurring_once_a_pause(
        still_table, monkeypatch) -> None:
    """Hands over all four markers of a fixed camera: the deblurred look reads nothing, so
    the frames after it skip it until a marker is seen again or the pause runs out."""
    from test_marker_calibration import _hide, spy_on_deblurring

    from calibration import table

    image, truth = still_table
    covered = _hide(image, truth, (0, 1, 2, 3))
    calls = spy_on_deblurring(monkeypatch)
    monkeypatch.setattr(table, "SECOND_LOOK_PAUSE", 2)
    calibrator = TableCalibrator(DEFAULT_MAT)
    assert calibrator.calibrate(image).calibrated and not calls
    seen = [calibrator.calibrate(covered) for _ in range(4)]
    assert [c.calibrated for c in seen] == [False] * 4
    assert "no mat marker is visible" in seen[0].reason
    assert len(calls) == 2  # the first covered frame, then the first after a pause of two
    calibrator.calibrate(image)  # a hand lifted: the markers read, the pause is over
    calibrator.calibrate(covered)
    assert len(calls) == 3


def test_no_mat_in_a_frame_gives_no_calibration_from_deblurring() -> None:
    """A frame of card-like texture, blurred: every guess is tried and none reads three
    markers that agree, so the frame stays uncalibrated rather than guessed."""
    seen = _blurred(_texture(seed=7, size=(720, 1280)), MotionBlur(12.0, 60.0))
    cal = TableCalibrator(DEFAULT_MAT).calibrate(cv2.cvtColor(seen, cv2.COLOR_GRAY2BGR))
    assert not cal.calibrated and cal.motion_blur is None


def test_a_frame_too_small_to_guess_a_blur_from_is_simply_not_calibrated() -> None:
    small = cv2.cvtColor(_texture(seed=3, size=(120, 200)), cv2.COLOR_GRAY2BGR)
    cal = TableCalibrator(DEFAULT_MAT).calibrate(small)
    assert not cal.calibrated and cal.motion_blur is None and "no mat marker" in cal.reason


def test_a_large_shaken_frame_is_searched_on_a_smaller_copy(shaken_table, monkeypatch) -> None:
    """A frame over DEBLUR_MAX_PIXELS (a phone's 48 MP photo) is searched for its blur on a
    copy scaled down to that size (at full size the guesses took 45 s and 2.6 GB on a 48 MP
    frame): the markers read there are scaled back, and so is the blur's length."""
    import calibration.table as table

    image, truth = shaken_table
    h, w = image.shape[:2]
    big = cv2.resize(image, (2 * w, 2 * h), interpolation=cv2.INTER_CUBIC)
    monkeypatch.setattr(table, "DEBLUR_MAX_PIXELS", h * w)
    seen: list[tuple[int, ...]] = []
    real = table.Deconvolver

    def spy(frame: np.ndarray) -> object:
        seen.append(frame.shape)
        return real(frame)

    monkeypatch.setattr(table, "Deconvolver", spy)
    cal = TableCalibrator(DEFAULT_MAT).calibrate(big)
    assert seen == [(h, w)]
    assert cal.calibrated and cal.markers_seen == (0, 1, 2, 3)
    assert cal.motion_blur is not None and 20.0 <= cal.motion_blur.length_px <= 36.0
    px = 2.0 * np.array([c["center_px"] for c in truth["cards"]]) + 0.5
    mm = np.array([c["center_mm"] for c in truth["cards"]])
    assert np.abs(cal.to_table(px) - mm).max() < 2.0
