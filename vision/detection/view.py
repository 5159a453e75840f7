"""The detector's view of the table: the mat rectified top-down onto a square canvas.

The canvas is square and the mat is not: the spare side (south of a landscape mat) shows
the table beyond the margin, where players lay cards down near their seats, rather than
padding. A game that grows past another side (a card found near it) has the table past that
side read as well, on a canvas beside this one (:func:`spill_views`).

Detecting in the table frame instead of the camera image means a card always has the same
size in pixels whatever the camera's height, tilt or resolution, so a small model at a small
input size suffices, and its boxes are already in millimetres. Training images are made with
the very same function, so training and inference see identical pixels.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import cv2
import numpy as np

from calibration.mat import DEFAULT_MAT, Mat
from calibration.table import Calibration

#: Table seen beyond the markers' centres on every side (cards of the draw and discard
#: piles sit near the edge; a card half off the mat is still a card).
MARGIN_MM = 40.0
#: Grey of the letterbox padding, as ultralytics pads.
PAD_VALUE = 114


#: The table the detector was trained to see on its square canvas (mm): the default mat's
#: :func:`shown_mm`. A larger area (the play area of a table without a mat) is read in tiles
#: of this span, and a smaller mat's canvas shows this much too, so that a card keeps the
#: size in pixels it was trained on.
TILE_SPAN_MM = max(DEFAULT_MAT.width_mm, DEFAULT_MAT.height_mm) + 2 * MARGIN_MM


def shown_mm(mat: Mat, margin_mm: float = MARGIN_MM) -> tuple[float, float, float, float]:
    """(x0, y0, x1, y1): the table the canvas shows, in mm: the mat plus ``margin_mm`` on its
    long side, and as far again on its short side as the square allows; at least
    :data:`TILE_SPAN_MM` square. (A 700 x 480 mm mat shown on its own 780 mm square made
    every card 1.26 times the size the detector learnt: it boxed them about 12% short, the
    record's ``card_scale`` said 0.84-0.90 and ``observe`` called the mat file wrong.)"""
    span = max(max(mat.width_mm, mat.height_mm) + 2 * margin_mm, TILE_SPAN_MM)
    return (-margin_mm, -margin_mm, span - margin_mm, span - margin_mm)
#: Neighbouring tiles overlap by this much (mm): every card's centre lies at least half of
#: it inside one of two neighbours, more than half a tarot card's diagonal (70 mm), so one
#: of them reads the card whole (vision.detection.cards.TILE_DEPTH_MM).
TILE_OVERLAP_MM = 160.0


def _starts(lo: float, hi: float, span: float, overlap: float) -> list[float]:
    """Where tiles of ``span`` begin to cover [lo, hi] with at least ``overlap`` shared."""
    if hi - lo <= span:
        return [0.5 * (lo + hi) - 0.5 * span]
    n = int(math.ceil((hi - lo - span) / (span - overlap))) + 1
    return [float(v) for v in np.linspace(lo, hi - span, n)]


@dataclass(frozen=True)
class DetectorView:
    """Square ``size`` px canvas showing :func:`shown_mm` of the table, top-left aligned."""

    size: int
    px_per_mm: float
    margin_mm: float
    #: the canvas moved this far (mm) across the table: a tile of a larger area
    #: (:func:`tiles`); (0, 0) shows :func:`shown_mm` of the mat
    shift_mm: tuple[float, float] = (0.0, 0.0)

    @classmethod
    def for_mat(cls, mat: Mat, size: int, margin_mm: float = MARGIN_MM) -> "DetectorView":
        x0, _, x1, _ = shown_mm(mat, margin_mm)
        return cls(int(size), float(size) / (x1 - x0), float(margin_mm))

    def _offset(self) -> np.ndarray:
        """The table point (mm) at the canvas's top-left corner, negated."""
        return np.array([self.margin_mm - self.shift_mm[0], self.margin_mm - self.shift_mm[1]])

    def to_mm(self, px: np.ndarray) -> np.ndarray:
        """Canvas pixel coordinates (continuous, pixel centres at +0.5) to table mm."""
        out: np.ndarray = np.asarray(px, np.float64) / self.px_per_mm - self._offset()
        return out

    def to_px(self, mm: np.ndarray) -> np.ndarray:
        out: np.ndarray = (np.asarray(mm, np.float64) + self._offset()) * self.px_per_mm
        return out

    def span_mm(self) -> float:
        """The side of the table square the canvas shows."""
        return self.size / self.px_per_mm

    def shown(self) -> tuple[float, float, float, float]:
        """(x0, y0, x1, y1): the table the canvas shows, in mm."""
        ox, oy = -self._offset()
        return (float(ox), float(oy), float(ox + self.span_mm()), float(oy + self.span_mm()))

    def render(self, image: np.ndarray, calib: Calibration) -> np.ndarray:
        """The canvas for ``image`` (BGR). Raises ValueError when ``calib`` has no H."""
        if calib.H is None:
            raise ValueError("not calibrated: " + calib.reason)
        src = image
        if calib.intrinsics is not None and calib.intrinsics.distorts:
            src = cv2.undistort(image, calib.intrinsics.K, calib.intrinsics.dist)
        ox, oy = self._offset()
        S = np.array([[self.px_per_mm, 0, ox * self.px_per_mm - 0.5],
                      [0, self.px_per_mm, oy * self.px_per_mm - 0.5],
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


def tiled(mat: Mat, margin_mm: float = MARGIN_MM) -> bool:
    """Whether ``mat``'s :func:`shown_mm` is larger than :data:`TILE_SPAN_MM`, and so is read
    in tiles (:func:`tiles`)."""
    x0, _, x1, _ = shown_mm(mat, margin_mm)
    return x1 - x0 > TILE_SPAN_MM + 1e-6


def tiles(mat: Mat, size: int, area_mm: tuple[float, float, float, float] | None = None,
          margin_mm: float = MARGIN_MM) -> list[DetectorView]:
    """The canvases that read ``mat``: one (:meth:`DetectorView.for_mat`) when its
    :func:`shown_mm` is no larger than :data:`TILE_SPAN_MM`, else tiles of that span
    overlapping by :data:`TILE_OVERLAP_MM`, covering the shown table or, given ``area_mm``
    (x0, y0, x1, y1: what the camera sees of the table, :func:`calibration.table.seen_area_mm`),
    only its part of it; none when the camera sees none of it."""
    one = DetectorView.for_mat(mat, size, margin_mm)
    if not tiled(mat, margin_mm):
        return [one]
    x0, y0, x1, y1 = shown_mm(mat, margin_mm)
    if area_mm is not None:
        x0, y0 = max(x0, area_mm[0]), max(y0, area_mm[1])
        x1, y1 = min(x1, area_mm[2]), min(y1, area_mm[3])
        if x1 <= x0 or y1 <= y0:
            return []
    base = replace(one, px_per_mm=float(size) / TILE_SPAN_MM)
    return [replace(base, shift_mm=(sx + margin_mm, sy + margin_mm))
            for sy in _starts(y0, y1, TILE_SPAN_MM, TILE_OVERLAP_MM)
            for sx in _starts(x0, x1, TILE_SPAN_MM, TILE_OVERLAP_MM)]


#: a card whose centre lies within this (mm) of a side of the mat's canvas (the mat's own
#: markers, draw and discard piles lie farther in) has a game spreading past that side: the
#: table past it is read too, where the frame shows at least SPILL_SEEN_MM of it
#: (:func:`spill_views`); 0: never
SPILL_EDGE_MM = 90.0
SPILL_SEEN_MM = 40.0
#: ... a card the detector is at least this sure of: on dev renders a weak box at the mat's
#: edge (a pile's back half off its zone, 0.57) had a canvas read past the side for
#: nothing, and that canvas took the edge of the table for a card
SPILL_SURE = 0.8


def spill_views(view: DetectorView, centers_mm: np.ndarray, scores: np.ndarray,
                area_mm: tuple[float, float, float, float] | None) -> list[DetectorView]:
    """The canvases beside ``view`` (one per side, the same scale, overlapping it by
    :data:`TILE_OVERLAP_MM` as tiles do) past each side that a card of ``centers_mm`` found
    with a score (``scores``) of at least :data:`SPILL_SURE` lies within
    :data:`SPILL_EDGE_MM` of, where the frame (``area_mm``: what the camera sees of the
    table, :func:`calibration.table.seen_area_mm`) shows the table past it."""
    if not SPILL_EDGE_MM or area_mm is None:
        return []
    pts = np.asarray(centers_mm, np.float64).reshape(-1, 2)
    pts = pts[np.asarray(scores, np.float64).reshape(-1) >= SPILL_SURE]
    if not len(pts):
        return []
    x0, y0, x1, y1 = view.shown()
    step = view.span_mm() - TILE_OVERLAP_MM
    sides = (((-step, 0.0), pts[:, 0] - x0, x0 - area_mm[0]),
             ((0.0, -step), pts[:, 1] - y0, y0 - area_mm[1]),
             ((step, 0.0), x1 - pts[:, 0], area_mm[2] - x1),
             ((0.0, step), y1 - pts[:, 1], area_mm[3] - y1))
    out = []
    for (dx, dy), depth, seen_past in sides:
        if seen_past >= SPILL_SEEN_MM and bool((depth < SPILL_EDGE_MM).any()):
            out.append(replace(view, shift_mm=(view.shift_mm[0] + dx, view.shift_mm[1] + dy)))
    return out


def depth_in_tile(views: list[DetectorView], k: int, centers_mm: np.ndarray) -> np.ndarray:
    """(N,) how far (mm) each point lies inside tile ``k`` from its sides that another tile
    continues past (inf where it has none: the edge of what is read)."""
    pts = np.asarray(centers_mm, np.float64).reshape(-1, 2)
    x0, y0, x1, y1 = views[k].shown()
    others = [v.shown() for j, v in enumerate(views) if j != k]
    depth = np.full(len(pts), np.inf)
    if any(o[0] < x0 for o in others):
        depth = np.minimum(depth, pts[:, 0] - x0)
    if any(o[2] > x1 for o in others):
        depth = np.minimum(depth, x1 - pts[:, 0])
    if any(o[1] < y0 for o in others):
        depth = np.minimum(depth, pts[:, 1] - y0)
    if any(o[3] > y1 for o in others):
        depth = np.minimum(depth, y1 - pts[:, 1])
    return depth
