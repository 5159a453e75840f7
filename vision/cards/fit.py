"""Fit a detector's card box to the card's own edges.

The card detector sees the whole mat at 640 px, so its boxes are a few millimetres and
degrees off (bench/vision.py: median 3.7 mm and 2.3 degrees, 90th percentile 8.6 mm and 7
degrees), and more on cards under pyramids. The gallery reads a patch cut that far off as
another card. A card's outline is a rectangle of known size with straight, high-contrast
edges, so the box is snapped onto them here:

* the neighbourhood of the box is warped, through the calibration, to a small top-down view
  at :data:`PX_PER_MM` aligned with the box (the long side vertical);
* for a fan of small turns (:data:`TURNS_DEG`), the horizontal and vertical gradient
  magnitudes are summed along lines at that turn (a shear of the view, exact enough for a
  few degrees), giving for each turn a profile across the long edges and one across the
  short edges;
* the pose scores the two long edges together (they lie exactly a card's width apart) plus
  the two short edges together, less a small price per millimetre moved, so that a stronger
  edge far away (a neighbour's, the art's frame) does not pull a box that was nearly right;
* each edge is then placed on its own within a pixel of that (the calibration's scale error
  makes a card a millimetre longer or shorter in the view), to a fraction of a pixel, and
  the centre is put midway between the edges.

On bench renders the fit takes the detector's error to a median 1.2 mm and 0.3 degrees; the
pipeline (:mod:`vision.pipeline`) still lets the gallery choose between the fitted cut and
the detector's, since in a pile the edges of the cards underneath can pull a box off.

Pyramids on the card and overlapping neighbours hide parts of the edges; the sums run over
the middle 70% of each side and the pair of edges must agree, which they rarely do by chance.
A box with no edge evidence at all (a blank patch) is left where it is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Sequence

import cv2
import numpy as np

#: Resolution of the fitting view (a card 120 mm long is 120 px; finer buys nothing at the
#: 0.5-2 px/mm a card has in a 1080p overhead image).
PX_PER_MM = 1.0
#: Table around the card in the view: the largest shift plus the shear of the largest turn.
PAD_MM = 16.0
#: Turns tried about the detector's angle.
TURNS_DEG: tuple[float, ...] = tuple(float(a) for a in np.arange(-7.5, 7.51, 1.5))
#: Largest move of each edge pair, mm.
MAX_SHIFT_MM = 10
#: Price of a move, in mean gradient (Sobel 3x3 magnitude) per millimetre: measured on
#: bench renders, it keeps boxes that were right from jumping to a neighbour's edge.
SHIFT_PRICE = 6.0
#: Below this mean gradient along the fitted edges there are no edges to fit to.
MIN_EDGE = 8.0
#: How far each edge may sit from where the pair of edges put it, px.
EDGE_SLACK_PX = 1
#: Share of each side the edge sums run over (its middle).
SIDE_SPAN = 0.7
#: Sample every SAMPLE_STEP-th row (column) along a side.
SAMPLE_STEP = 2


@dataclass(frozen=True)
class CardFit:
    """A box fitted to a card's edges: ``center_mm`` and ``axis_deg`` (the long side's
    direction, as the detector gives it), the move from the detector's box, and
    ``edge`` (the mean gradient along the fitted edges; 0 when nothing was fitted)."""

    center_mm: tuple[float, float]
    axis_deg: float
    shift_mm: float
    turn_deg: float
    edge: float

    @property
    def moved(self) -> bool:
        return self.shift_mm > 0.0 or self.turn_deg != 0.0


@lru_cache(maxsize=16)
def _sample_indices(w_px: int, h_px: int, card_w: float, card_h: float
                    ) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Flat view indices of the sheared sampling lines: (turns, rows, columns) for the long
    edges and (turns, columns, rows) for the short ones, and the numbers of samples."""
    cx, cy = w_px / 2 - 0.5, h_px / 2 - 0.5
    t = np.tan(np.radians(np.asarray(TURNS_DEG)))[:, None]
    half_h = card_h * PX_PER_MM * SIDE_SPAN / 2
    half_w = card_w * PX_PER_MM * SIDE_SPAN / 2
    ys = np.arange(int(cy - half_h), int(cy + half_h) + 1, SAMPLE_STEP)
    xs = np.arange(int(cx - half_w), int(cx + half_w) + 1, SAMPLE_STEP)
    # a long edge turned by t about the view centre: x = x0 + (y - cy) * t; a short edge:
    # y = y0 - (x - cx) * t (the view's y runs along the card's long axis)
    off_long = np.round((ys[None, :] - cy) * t).astype(np.intp)
    off_short = np.round((xs[None, :] - cx) * -t).astype(np.intp)
    cols = np.clip(np.arange(w_px)[None, None, :] + off_long[:, :, None], 0, w_px - 1)
    long_idx = (ys[None, :, None] * w_px + cols).astype(np.intp)
    rows = np.clip(np.arange(h_px)[None, None, :] + off_short[:, :, None], 0, h_px - 1)
    short_idx = (rows * w_px + xs[None, :, None]).astype(np.intp)
    return long_idx, short_idx, len(ys), len(xs)


def fit_card_box(image: np.ndarray, H_px_to_mm: np.ndarray, center_mm: Sequence[float],
                 axis_deg: float, card_size_mm: Sequence[float]) -> CardFit:
    """The box of a ``card_size_mm`` (short, long) card near (``center_mm``, ``axis_deg``)
    whose outline best follows the edges in ``image`` (BGR or grey, undistorted), with
    ``H_px_to_mm`` the calibration's image-to-table homography."""
    card_w, card_h = float(min(card_size_mm)), float(max(card_size_mm))
    a = math.radians(axis_deg)
    u = np.array([math.cos(a), math.sin(a)])        # the view's +y: along the long side
    r = np.array([-math.sin(a), math.cos(a)])       # the view's +x
    w_px = int(round((card_w + 2 * PAD_MM) * PX_PER_MM))
    h_px = int(round((card_h + 2 * PAD_MM) * PX_PER_MM))
    cx, cy = w_px / 2 - 0.5, h_px / 2 - 0.5
    s = 1.0 / PX_PER_MM
    c = np.asarray(center_mm, np.float64)
    view_to_mm = np.array([[r[0] * s, u[0] * s, c[0] - cx * s * r[0] - cy * s * u[0]],
                           [r[1] * s, u[1] * s, c[1] - cx * s * r[1] - cy * s * u[1]],
                           [0.0, 0.0, 1.0]])
    M = np.linalg.inv(np.asarray(H_px_to_mm, np.float64)) @ view_to_mm
    view = cv2.warpPerspective(image, M, (w_px, h_px),
                               flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                               borderMode=cv2.BORDER_REPLICATE)
    if view.ndim == 3:
        view = cv2.cvtColor(view, cv2.COLOR_BGR2GRAY)
    gx = np.abs(cv2.Sobel(view, cv2.CV_16S, 1, 0, ksize=3))
    gy = np.abs(cv2.Sobel(view, cv2.CV_16S, 0, 1, ksize=3))
    long_idx, short_idx, n_long, n_short = _sample_indices(w_px, h_px, card_w, card_h)
    across_long = np.take(gx.ravel(), long_idx).sum(axis=1, dtype=np.int32)    # (turns, w)
    across_short = np.take(gy.ravel(), short_idx).sum(axis=1, dtype=np.int32)  # (turns, h)
    d = np.arange(-MAX_SHIFT_MM, MAX_SHIFT_MM + 1)
    dpx = np.round(d * PX_PER_MM).astype(np.intp)
    left = np.clip(int(round(cx - card_w / 2 * PX_PER_MM)) + dpx, 0, w_px - 1)
    right = np.clip(int(round(cx + card_w / 2 * PX_PER_MM)) + dpx, 0, w_px - 1)
    top = np.clip(int(round(cy - card_h / 2 * PX_PER_MM)) + dpx, 0, h_px - 1)
    bottom = np.clip(int(round(cy + card_h / 2 * PX_PER_MM)) + dpx, 0, h_px - 1)
    price = SHIFT_PRICE * np.abs(d)[None, :].astype(np.float64)
    sx = (across_long[:, left] + across_long[:, right]) / n_long - price      # (turns, shifts)
    sy = (across_short[:, top] + across_short[:, bottom]) / n_short - price
    best_x, best_y = sx.max(axis=1), sy.max(axis=1)
    k = int(np.argmax(best_x + best_y))
    ix, iy = int(np.argmax(sx[k])), int(np.argmax(sy[k]))
    edge = float(sx[k, ix] + sy[k, iy] + price[0, ix] + price[0, iy]) / 4.0
    if edge < MIN_EDGE:
        return CardFit((float(c[0]), float(c[1])), float(axis_deg), 0.0, 0.0, 0.0)
    # each edge on its own within EDGE_SLACK_PX of the pair's fit (the card's size in this
    # view is off by the calibration's scale error, up to a millimetre or two), to a
    # fraction of a pixel (a parabola through the peak and its neighbours); the centre is
    # midway between the edges
    step = TURNS_DEG[1] - TURNS_DEG[0] if len(TURNS_DEG) > 1 else 0.0
    turn = TURNS_DEG[k] + step * _vertex(best_x + best_y, k)
    x = (_edge_at(across_long[k], int(left[ix])) + _edge_at(across_long[k], int(right[ix]))) / 2
    y = (_edge_at(across_short[k], int(top[iy])) + _edge_at(across_short[k], int(bottom[iy]))) / 2
    p = view_to_mm @ np.array([x, y, 1.0])
    moved = (float(p[0]), float(p[1]))
    return CardFit(moved, float(axis_deg + turn), float(math.dist(moved, c)), float(turn), edge)


def _edge_at(profile: np.ndarray, i: int) -> float:
    """The strongest position of ``profile`` within EDGE_SLACK_PX of ``i``, sub-pixel."""
    lo, hi = max(0, i - EDGE_SLACK_PX), min(len(profile), i + EDGE_SLACK_PX + 1)
    j = lo + int(np.argmax(profile[lo:hi]))
    return j + _vertex(profile, j)


def _vertex(v: np.ndarray, i: int) -> float:
    """Offset (-0.5..0.5 samples) of the vertex of the parabola through v[i-1..i+1]; 0 at
    the ends of ``v`` or where it is flat."""
    if i <= 0 or i >= len(v) - 1:
        return 0.0
    a, b, c = float(v[i - 1]), float(v[i]), float(v[i + 1])
    den = a - 2.0 * b + c
    if den >= 0.0:
        return 0.0
    return float(np.clip(0.5 * (a - c) / den, -0.5, 0.5))


def fit_card_boxes(image: np.ndarray, calib: Any, centers_mm: np.ndarray, axes_deg: np.ndarray,
                   card_size_mm: Sequence[float]) -> list[CardFit]:
    """:func:`fit_card_box` for every box (``calib``: a :class:`calibration.table.Calibration`
    of ``image``, which must be undistorted)."""
    return [fit_card_box(image, calib.H, centers_mm[i], float(axes_deg[i]), card_size_mm)
            for i in range(len(axes_deg))]
