"""The detector's view of the table: the mat rectified top-down onto a square canvas.

The canvas is square and the mat is not: the spare side (south of a landscape mat) shows
the table beyond the margin, where players lay cards down near their seats, rather than
padding.

Detecting in the table frame instead of the camera image means a card always has the same
size in pixels whatever the camera's height, tilt or resolution, so a small model at a small
input size suffices, and its boxes are already in millimetres. Training images are made with
the very same function, so training and inference see identical pixels.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from calibration.mat import Mat
from calibration.table import Calibration

#: Table seen beyond the markers' centres on every side (cards of the draw and discard
#: piles sit near the edge; a card half off the mat is still a card).
MARGIN_MM = 40.0
#: Grey of the letterbox padding, as ultralytics pads.
PAD_VALUE = 114


def shown_mm(mat: Mat, margin_mm: float = MARGIN_MM) -> tuple[float, float, float, float]:
    """(x0, y0, x1, y1): the table the canvas shows, in mm: the mat plus ``margin_mm`` on its
    long side, and as far again on its short side as the square allows."""
    span = max(mat.width_mm, mat.height_mm) + 2 * margin_mm
    return (-margin_mm, -margin_mm, span - margin_mm, span - margin_mm)


@dataclass(frozen=True)
class DetectorView:
    """Square ``size`` px canvas showing :func:`shown_mm` of the table, top-left aligned."""

    size: int
    px_per_mm: float
    margin_mm: float

    @classmethod
    def for_mat(cls, mat: Mat, size: int, margin_mm: float = MARGIN_MM) -> "DetectorView":
        x0, _, x1, _ = shown_mm(mat, margin_mm)
        return cls(int(size), float(size) / (x1 - x0), float(margin_mm))

    def to_mm(self, px: np.ndarray) -> np.ndarray:
        """Canvas pixel coordinates (continuous, pixel centres at +0.5) to table mm."""
        return np.asarray(px, np.float64) / self.px_per_mm - self.margin_mm

    def to_px(self, mm: np.ndarray) -> np.ndarray:
        return (np.asarray(mm, np.float64) + self.margin_mm) * self.px_per_mm

    def render(self, image: np.ndarray, calib: Calibration) -> np.ndarray:
        """The canvas for ``image`` (BGR). Raises ValueError when ``calib`` has no H."""
        if calib.H is None:
            raise ValueError("not calibrated: " + calib.reason)
        src = image
        if calib.intrinsics is not None and calib.intrinsics.distorts:
            src = cv2.undistort(image, calib.intrinsics.K, calib.intrinsics.dist)
        S = np.array([[self.px_per_mm, 0, self.margin_mm * self.px_per_mm - 0.5],
                      [0, self.px_per_mm, self.margin_mm * self.px_per_mm - 0.5],
                      [0, 0, 1]], np.float64)
        M = S @ np.asarray(calib.H, np.float64)   # source px -> canvas px
        # A warp samples; shrinking by 3-4x that way aliases the card art into noise. Shrink
        # the source first by a whole factor k (OpenCV's fast block average; an arbitrary
        # factor costs 40-60 ms a frame), to 1-3x the canvas scale, then warp.
        scale = _local_scale(M, src.shape[1], src.shape[0])
        if scale < 0.5:
            k = max(2, int(1.0 / (1.5 * scale)))
            hk, wk = (src.shape[0] // k) * k, (src.shape[1] // k) * k
            src = cv2.resize(src[:hk, :wk], (wk // k, hk // k), interpolation=cv2.INTER_AREA)
            f = 1.0 / k
            M = M @ np.array([[1 / f, 0, 0.5 / f - 0.5], [0, 1 / f, 0.5 / f - 0.5], [0, 0, 1]])
        # the whole square: what lies beyond the frame is padding
        canvas: np.ndarray = cv2.warpPerspective(
            src, M, (self.size, self.size), flags=cv2.INTER_LINEAR,
            borderMode=cv2.BORDER_CONSTANT, borderValue=(PAD_VALUE,) * 3)
        return canvas


def _local_scale(M: np.ndarray, w: int, h: int) -> float:
    """How many canvas px one source px becomes around the image centre."""
    c = np.array([[w / 2, h / 2], [w / 2 + 1, h / 2], [w / 2, h / 2 + 1]], np.float64)
    p = cv2.perspectiveTransform(c.reshape(-1, 1, 2), M).reshape(-1, 2)
    a, b = p[1] - p[0], p[2] - p[0]
    return float(np.sqrt(abs(a[0] * b[1] - a[1] * b[0])))
