"""bench/calibration.py's scale of a fit without a mat: the ratio of fitted to true
distances between cards, which tells a fit along the cards' inner frames (every distance
too long by the border's share) from a right one."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("cv2")

from bench.calibration import fitted_scale  # noqa: E402


class _Stretched:
    """A calibration that maps pixels to mm with a scale and a turn (and an origin)."""

    calibrated = True

    def __init__(self, scale: float) -> None:
        a = np.radians(25.0)
        self.M = scale * np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])

    def to_table(self, px: np.ndarray) -> np.ndarray:
        return np.asarray(px, np.float64) @ self.M.T + (40.0, -15.0)


def _truth() -> dict:
    rng = np.random.default_rng(7)
    mm = rng.uniform(0.0, 400.0, (6, 2))
    cards = [{"center_mm": list(p), "center_px": list(p), "height_mm": 0.35, "in_frame": True}
             for p in mm]
    # the draw pile's top card is off the table plane, and left out
    cards.append({"center_mm": [0.0, 0.0], "center_px": [900.0, 900.0], "height_mm": 8.0,
                  "in_frame": True})
    return {"cards": cards}


@pytest.mark.parametrize("scale", [1.0, 0.93, 1.08])
def test_the_scale_is_the_fitted_over_the_true_distance(scale: float) -> None:
    assert fitted_scale(_Stretched(scale), _truth()) == pytest.approx(scale, abs=1e-9)


def test_no_scale_without_a_calibration_or_two_cards_apart() -> None:
    cal = _Stretched(1.0)
    cal.calibrated = False
    assert fitted_scale(cal, _truth()) is None
    one = {"cards": _truth()["cards"][:1]}
    assert fitted_scale(_Stretched(1.0), one) is None
