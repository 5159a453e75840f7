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
class EdgeFit:
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
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int, int]:
    """Flat view indices of the sheared sampling lines, (turns, samples, positions), for the
    long edges (positions: view columns) and for the short ones (view rows), only at the
    positions an edge may be found at (around where the box puts each edge); those
    positions; and the numbers of samples per line."""
    cx, cy = w_px / 2 - 0.5, h_px / 2 - 0.5
    t = np.tan(np.radians(np.asarray(TURNS_DEG)))[:, None]
    half_h = card_h * PX_PER_MM * SIDE_SPAN / 2
    half_w = card_w * PX_PER_MM * SIDE_SPAN / 2
    ys = np.arange(int(cy - half_h), int(cy + half_h) + 1, SAMPLE_STEP)
    xs = np.arange(int(cx - half_w), int(cx + half_w) + 1, SAMPLE_STEP)
    reach = int(round(MAX_SHIFT_MM * PX_PER_MM)) + EDGE_SLACK_PX + 1

    def around(c: float, half: float, size: int) -> np.ndarray:
        lo, hi = int(round(c - half)), int(round(c + half))
        pos = np.concatenate([np.arange(lo - reach, lo + reach + 1),
                              np.arange(hi - reach, hi + reach + 1)])
        return np.unique(np.clip(pos, 0, size - 1))

    cols = around(cx, card_w * PX_PER_MM / 2, w_px)
    rows = around(cy, card_h * PX_PER_MM / 2, h_px)
    # a long edge turned by t about the view centre: x = x0 + (y - cy) * t; a short edge:
    # y = y0 - (x - cx) * t (the view's y runs along the card's long axis)
    off_long = np.round((ys[None, :] - cy) * t).astype(np.intp)
    off_short = np.round((xs[None, :] - cx) * -t).astype(np.intp)
    c_at = np.clip(cols[None, None, :] + off_long[:, :, None], 0, w_px - 1)
    long_idx = (ys[None, :, None] * w_px + c_at).astype(np.intp)
    r_at = np.clip(rows[None, None, :] + off_short[:, :, None], 0, h_px - 1)
    short_idx = (r_at * w_px + xs[None, :, None]).astype(np.intp)
    return long_idx, short_idx, cols, rows, len(ys), len(xs)


def fit_card_box(image: np.ndarray, H_px_to_mm: np.ndarray, center_mm: Sequence[float],
                 axis_deg: float, card_size_mm: Sequence[float]) -> EdgeFit:
    """The box of a ``card_size_mm`` (short, long) card near (``center_mm``, ``axis_deg``)
    whose outline best follows the edges in ``image`` (BGR or grey, undistorted), with
    ``H_px_to_mm`` the calibration's image-to-table homography."""
    return _fit(image, H_px_to_mm, np.asarray([center_mm], np.float64).reshape(1, 2),
                np.asarray([axis_deg], np.float64), card_size_mm)[0]


def _fit(image: np.ndarray, H_px_to_mm: np.ndarray, centers: np.ndarray, axes: np.ndarray,
         card_size_mm: Sequence[float]) -> list[EdgeFit]:
    """Every box at once: one warp per card, then the gradients and profiles of all the
    views stacked (a frame's 10-20 cards cost about as much as two did one by one)."""
    n = len(axes)
    if n == 0:
        return []
    card_w, card_h = float(min(card_size_mm)), float(max(card_size_mm))
    w_px = int(round((card_w + 2 * PAD_MM) * PX_PER_MM))
    h_px = int(round((card_h + 2 * PAD_MM) * PX_PER_MM))
    cx, cy = w_px / 2 - 0.5, h_px / 2 - 0.5
    s = 1.0 / PX_PER_MM
    to_image = np.linalg.inv(np.asarray(H_px_to_mm, np.float64))
    views = np.empty((n, h_px, w_px), np.uint8)
    view_to_mm = np.empty((n, 3, 3))
    for i in range(n):
        a = math.radians(float(axes[i]))
        u = (math.cos(a), math.sin(a))         # the view's +y: along the long side
        r = (-math.sin(a), math.cos(a))        # the view's +x
        c = centers[i]
        view_to_mm[i] = [[r[0] * s, u[0] * s, c[0] - cx * s * r[0] - cy * s * u[0]],
                         [r[1] * s, u[1] * s, c[1] - cx * s * r[1] - cy * s * u[1]],
                         [0.0, 0.0, 1.0]]
        view = cv2.warpPerspective(image, to_image @ view_to_mm[i], (w_px, h_px),
                                   flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                                   borderMode=cv2.BORDER_REPLICATE)
        views[i] = cv2.cvtColor(view, cv2.COLOR_BGR2GRAY) if view.ndim == 3 else view
    # the views stacked into one tall image: only their first and last rows see a neighbour
    # view, and no edge is sampled there
    tall = views.reshape(n * h_px, w_px)
    gx = np.abs(cv2.Sobel(tall, cv2.CV_16S, 1, 0, ksize=3)).reshape(n, -1)
    gy = np.abs(cv2.Sobel(tall, cv2.CV_16S, 0, 1, ksize=3)).reshape(n, -1)
    long_idx, short_idx, cols, rows, n_long, n_short = _sample_indices(w_px, h_px, card_w,
                                                                       card_h)
    # (n, turns, view columns) and (n, turns, view rows); zero where no edge can be
    across_long = np.zeros((n, len(TURNS_DEG), w_px), np.int32)
    across_long[:, :, cols] = np.take(gx, long_idx, axis=1).sum(axis=2, dtype=np.int32)
    across_short = np.zeros((n, len(TURNS_DEG), h_px), np.int32)
    across_short[:, :, rows] = np.take(gy, short_idx, axis=1).sum(axis=2, dtype=np.int32)
    d = np.arange(-MAX_SHIFT_MM, MAX_SHIFT_MM + 1)
    dpx = np.round(d * PX_PER_MM).astype(np.intp)
    left = np.clip(int(round(cx - card_w / 2 * PX_PER_MM)) + dpx, 0, w_px - 1)
    right = np.clip(int(round(cx + card_w / 2 * PX_PER_MM)) + dpx, 0, w_px - 1)
    top = np.clip(int(round(cy - card_h / 2 * PX_PER_MM)) + dpx, 0, h_px - 1)
    bottom = np.clip(int(round(cy + card_h / 2 * PX_PER_MM)) + dpx, 0, h_px - 1)
    price = SHIFT_PRICE * np.abs(d).astype(np.float64)
    # (n, turns, shifts): both long edges, and both short edges, a card apart
    sx = (across_long[:, :, left] + across_long[:, :, right]) / n_long - price
    sy = (across_short[:, :, top] + across_short[:, :, bottom]) / n_short - price
    best_x, best_y = sx.max(axis=2), sy.max(axis=2)
    both = best_x + best_y
    step = TURNS_DEG[1] - TURNS_DEG[0] if len(TURNS_DEG) > 1 else 0.0
    out = []
    for i in range(n):
        c = centers[i]
        k = int(np.argmax(both[i]))
        ix, iy = int(np.argmax(sx[i, k])), int(np.argmax(sy[i, k]))
        edge = float(sx[i, k, ix] + sy[i, k, iy] + price[ix] + price[iy]) / 4.0
        if edge < MIN_EDGE:
            out.append(EdgeFit((float(c[0]), float(c[1])), float(axes[i]), 0.0, 0.0, 0.0))
            continue
        # each edge on its own within EDGE_SLACK_PX of the pair's fit (the card's size in
        # this view is off by the calibration's scale error, up to a millimetre or two), to
        # a fraction of a pixel (a parabola through the peak and its neighbours); the centre
        # is midway between the edges
        turn = TURNS_DEG[k] + step * _vertex(both[i], k)
        pl, ps = across_long[i, k], across_short[i, k]
        x = (_edge_at(pl, int(left[ix])) + _edge_at(pl, int(right[ix]))) / 2
        y = (_edge_at(ps, int(top[iy])) + _edge_at(ps, int(bottom[iy]))) / 2
        p = view_to_mm[i] @ np.array([x, y, 1.0])
        moved = (float(p[0]), float(p[1]))
        out.append(EdgeFit(moved, float(axes[i] + turn), float(math.dist(moved, c)),
                           float(turn), edge))
    return out


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
    return min(0.5, max(-0.5, 0.5 * (a - c) / den))


def fit_card_boxes(image: np.ndarray, calib: Any, centers_mm: np.ndarray, axes_deg: np.ndarray,
                   card_size_mm: Sequence[float]) -> list[EdgeFit]:
    """:func:`fit_card_box` for every box (``calib``: a :class:`calibration.table.Calibration`
    of ``image``, which must be undistorted)."""
    return _fit(image, calib.H, np.asarray(centers_mm, np.float64).reshape(-1, 2),
                np.asarray(axes_deg, np.float64).reshape(-1), card_size_mm)
