"""Calibrate from the cards themselves when there is no printed mat.

A card is a rectangle of known size (a deck setting: tarot 70 x 120 mm, Decktet 63.5 x 89),
and every card lies on the table plane, so the cards alone fix the map from (undistorted)
pixels to table millimetres, up to where the table frame's origin and axes are.

How it works (figures in docs/calibration.md):

1. **Seeds.** L-shaped corners where two line segments (OpenCV's LSD) meet; two corners at
   the ends of one side, with the card's aspect, predict a card; so do the outlines of
   bright regions (a card alone on the table). The few whose sides are really there
   (below) are the seeds. A seed that is a rectangle inside a card (the art's
   frame within a wide white border, the frames of a card back's pattern) is replaced by
   the card outline around it; when that outline grows into fewer than three cards (in a
   tight lattice the outline found may span neighbours), the seed as found is grown too.
2. **Search in the rectified view.** A seed gives a rough map to millimetres; the image is
   warped to a top-down view where every card parallel or perpendicular to the seed is a
   rectangle of known size, and a rectangle-outline filter (box sums of the signed
   brightness step across each side) finds them all at once, touching neighbours included.
   The first round also corrects the seed's scale and aspect over a small grid.
3. **Seeing a card's sides.** Back in the image each side is refitted to the brightness
   step near it (sub-pixel, polarity-aware, robust line fit). A side is kept only if the
   step runs the same way all along the fitted line and stops at one end at least: a hidden
   side (a pyramid, a hand, a neighbour lying over it) or a line of the table's texture is
   left out. A card needs three sides; one whose inside has the table's colours is the
   table's texture, not a card.
4. **One camera for all cards.** A pinhole camera (the calibrated intrinsics, or square
   pixels, centred principal point and a fitted focal length) looking at the plane, and a
   rigid pose (x, y, angle) per card, are fitted together by Levenberg-Marquardt to every
   side seen (its model corners should lie on its line in the image), with robust weights
   per side; sides that still disagree are dropped. A free homography fitted to small cards
   readily skews or stretches the table; a camera's cannot. New cards must agree with the
   fit so far. Steps 2-4 repeat until no card is added, then each side is looked for again
   where the fit puts it. A fit that ran along the art's frame lines inside the cards' white
   borders (a close camera: every card the same share too small) is scaled to the cards'
   edges, found just outside all the cards at one common factor.
5. **The table frame.** Without a mat there is no absolute frame: the x axis runs along the
   dominant card axis (lattice cards are parallel or perpendicular to it, so the Zarcana
   lattice's axes are the frame's axes), turned to the quarter nearest the image's right,
   y toward the image's bottom (as with the mat); the origin is the centre of the card
   nearest the centroid of the cards found (so lattice cells sit at whole multiples of the
   pitch from it). Given the ``previous`` calibration, the search starts from it (a video
   frame needs no seeds), and a fit that agrees with it within :data:`KEEP_FRAME_MM` is
   expressed in the previous frame, so positions do not jump. Frame after frame of one
   camera (:class:`CardCalibrator`) a fit that agrees less well, within
   :data:`FOLLOW_FRAME_MM`, is still put in the previous frame by the best rigid shift: a
   new frame's origin would be another card (the one nearest the centroid of the cards
   found this time), and a game's lattice cells would jump by whole cells.

``reprojection_mm`` is the RMS misfit in mm of the corners of the cards used. With one or
two cards the map is poorly constrained away from them; ``reason`` says so.
"""

from __future__ import annotations

import logging
import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace

import cv2
import numpy as np

from calibration.mat import Mat, virtual_mat
from calibration.table import (
    PRIOR_FOCAL_SHARE,
    Calibration,
    Intrinsics,
    clockwise_from_top_left,
)
from companion.core.errors import CompanionError

log = logging.getLogger(__name__)

#: A new fit that maps the cards' corners within this many mm of the previous calibration
#: (after the best rigid shift) is the same camera and table: the previous frame is kept.
KEEP_FRAME_MM = 6.0
#: Frame after frame of one camera (:class:`CardCalibrator`), a fit further off than that but
#: within this many mm is still expressed in the previous frame (a fit from other cards): a
#: new frame would put its origin on another card, and every position, and so every lattice
#: cell of a game in progress, would jump by whole cells. (A camera that moved is not told
#: apart here: the same pixels are put where the old camera saw them. The live game finds
#: its board again from the cards, companion.live.tablestate.TableTracker.refind.)
FOLLOW_FRAME_MM = 25.0
#: Cards shorter than this (long side, px) are not looked for: too few pixels for corners.
MIN_LONG_PX = 36.0
#: A card side must show a brightness step of at least this many grey levels on average.
MIN_STEP = 12.0
#: A card side that misses the joint fit by more than this (px RMS) is left out of it.
MAX_SIDE_PX = 0.6
#: Scale (px) of the robust weight of a side in the joint fit.
ROBUST_PX = 0.5
#: A quad whose inside is this similar to the whole image's colours is the table's texture.
TABLE_LIKE = 0.8
#: Seeds grown at most (each is a full search; the best result is kept).
MAX_STARTS = 4
#: Rectangles of one search round looked at closely, the best scoring first.
MAX_CANDIDATES = 60
#: CardCalibrator: thumbnails this wide are compared to tell a still camera from a moved one
THUMB_WIDTH = 256
#: a frame shifted less than this (thumbnail px, about 2 mm on the table) is the same view
STILL_PX = 0.35
#: and the phase correlation's peak must be at least this clear (a hand over half the table
#: still leaves one; a moved camera's blurred or doubled peak does not)
STILL_RESPONSE = 0.2
#: a fit from fewer cards is tried again on the next frame (more cards, a better fit)
ENOUGH_CARDS = 3
#: a lone card seen on three sides, refitted to them with K known, may move its corners
#: this share of its long side at most (:func:`_lone_card_on_its_sides`)
LONE_CARD_MOVE = 0.15


class CardCalibrationError(CompanionError, ValueError):
    """Input that cannot be calibrated from at all: not an image, or a bad card size."""


@dataclass(frozen=True)
class CardFit:
    """What :func:`fit_cards` found: the calibration and the cards that made it."""

    calibration: Calibration
    #: (4, 2) corners (undistorted px, clockwise) of each card used in the fit
    quads_px: tuple[np.ndarray, ...] = ()
    #: each card's centre (table mm) and the direction (deg) of its long axis, mod 180
    centers_mm: tuple[tuple[float, float], ...] = ()
    axes_deg: tuple[float, ...] = ()
    rms_px: float | None = None
    #: True when the fit agreed with ``previous`` and is expressed in its table frame
    kept_frame: bool = False
    #: True when it agreed less well (within ``follow_mm``) and is still expressed in it
    followed_frame: bool = False


# ---------------------------------------------------------------------------------------------
# small geometry helpers


def _gray(image: np.ndarray) -> np.ndarray:
    if image.ndim == 2:
        return image
    return cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)


def _intersect(pa: np.ndarray, da: np.ndarray, pb: np.ndarray, db: np.ndarray
               ) -> np.ndarray | None:
    det = da[0] * (-db[1]) - (-db[0]) * da[1]
    if abs(det) < 1e-9:
        return None
    r = pb - pa
    t = (r[0] * (-db[1]) - r[1] * (-db[0])) / det
    return np.asarray(pa + t * da, np.float64)


def _cross(u: np.ndarray, v: np.ndarray) -> float:
    return float(u[0] * v[1] - u[1] * v[0])


def _persp(H: np.ndarray, pts: np.ndarray) -> np.ndarray:
    p = np.asarray(pts, np.float64).reshape(-1, 2)
    q = p @ H[:, :2].T + H[:, 2]
    return np.asarray(q[:, :2] / q[:, 2:3], np.float64)


def _rect_model(size: tuple[float, float]) -> np.ndarray:
    """Corners of a card centred at 0 with its long side along y, clockwise (y down)."""
    w, h = size
    return np.array([[-w / 2, -h / 2], [w / 2, -h / 2], [w / 2, h / 2], [-w / 2, h / 2]])


def _rigid(src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Best rotation R and shift t with R @ src + t ~ dst (2D Procrustes, no scale)."""
    ms, md = src.mean(axis=0), dst.mean(axis=0)
    C = (dst - md).T @ (src - ms)
    U, _, Vt = np.linalg.svd(C)
    D = np.diag([1.0, float(np.sign(np.linalg.det(U @ Vt)) or 1.0)])
    R = U @ D @ Vt
    return R, md - R @ ms


def _plausible(q: np.ndarray, aspect: float, min_short: float, max_side: float) -> bool:
    if not np.all(np.isfinite(q)):
        return False
    if not cv2.isContourConvex(q.astype(np.float32).reshape(-1, 1, 2)):
        return False
    sides = np.linalg.norm(np.roll(q, -1, axis=0) - q, axis=1)
    if sides.min() < min_short or sides.max() > max_side:
        return False
    # opposite sides about equal: a tilt of up to ~30 degrees
    if not (0.7 < sides[0] / sides[2] < 1.43 and 0.7 < sides[1] / sides[3] < 1.43):
        return False
    a = (sides[0] + sides[2]) / (sides[1] + sides[3])
    r = max(a, 1 / a)
    if not (aspect / 1.35 < r < aspect * 1.35):
        return False
    for i in range(4):
        u = q[i - 1] - q[i]
        v = q[(i + 1) % 4] - q[i]
        if abs(float(u @ v / (np.linalg.norm(u) * np.linalg.norm(v)))) > 0.5:
            return False
    return True


# ---------------------------------------------------------------------------------------------
# edge snapping: a quad's sides refitted to the brightness step along them


def _sample(img: np.ndarray, pts: np.ndarray) -> np.ndarray:
    shape = pts.shape[:-1]
    p = pts.reshape(-1, 2).astype(np.float32)
    out = cv2.remap(img, p[:, 0].reshape(1, -1), p[:, 1].reshape(1, -1), cv2.INTER_LINEAR,
                    borderMode=cv2.BORDER_REPLICATE)
    return out.reshape(shape)


def _side_steps(img: np.ndarray, a: np.ndarray, b: np.ndarray, pol: int, radius: float,
                ts: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Along side a->b of a clockwise quad: the edge point (px) and the brightness step
    (grey levels, inside minus outside times ``pol``) at each station ``ts`` (shares of the
    side; default: evenly from 12% to 88%)."""
    L = float(np.linalg.norm(b - a))
    d = (b - a) / max(L, 1e-9)
    n_out = np.array([d[1], -d[0]])
    if ts is None:
        ts = np.linspace(0.12, 0.88, int(np.clip(L / 3.0, 6, 40)))
    m = len(ts)
    offs = np.arange(-radius, radius + 1e-6, 0.5)
    base = a[None, :] + ts[:, None] * (b - a)[None, :]
    pts = base[:, None, :] + offs[None, :, None] * n_out[None, None, :]
    prof = _sample(img, pts)
    # step over 2 px (4 samples): robust to blur, sharp enough to tell a neighbour's edge
    k = 2
    step = (prof[:, :-2 * k] - prof[:, 2 * k:]) * pol        # inside minus outside
    # of the clear peaks, the one nearest the prior line: a touching neighbour's border or
    # the art's frame line can give a stronger step a pixel or two away
    n_off = step.shape[1]
    centre = (n_off - 1) / 2.0
    peak = np.zeros_like(step, dtype=bool)
    peak[:, 1:-1] = (step[:, 1:-1] >= step[:, :-2]) & (step[:, 1:-1] >= step[:, 2:])
    peak[:, 0] = step[:, 0] >= step[:, 1]
    peak[:, -1] = step[:, -1] >= step[:, -2]
    top = step.max(axis=1, keepdims=True)
    ok = peak & (step >= 0.5 * top) & (step >= MIN_STEP * 0.5)
    dist = np.where(ok, np.abs(np.arange(n_off)[None, :] - centre), np.inf)
    idx = np.where(np.isfinite(dist).any(axis=1), np.argmin(dist, axis=1),
                   np.argmax(step, axis=1))
    rows = np.arange(m)
    best = step[rows, idx]
    # parabola through the peak for a sub-sample position
    lo = np.clip(idx - 1, 0, step.shape[1] - 1)
    hi = np.clip(idx + 1, 0, step.shape[1] - 1)
    y0, y1, y2 = step[rows, lo], best, step[rows, hi]
    den = y0 - 2 * y1 + y2
    frac = np.where((np.abs(den) > 1e-6) & (lo != idx) & (hi != idx), 0.5 * (y0 - y2) / np.where(
        np.abs(den) > 1e-6, den, 1.0), 0.0)
    off = offs[0] + 0.5 * (idx + k + np.clip(frac, -0.5, 0.5))
    edge = base + off[:, None] * n_out[None, :]
    return edge, best


def _fit_line(pts: np.ndarray, w: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray, float, float] | None:
    """Weighted total-least-squares line through edge points: (point, unit direction, RMS
    distance of the points kept, share kept). Refitting drops stations more than 1 px off
    (a pyramid, a hand or a neighbour's edge there)."""
    keep = w > 0
    c = d = None
    for _ in range(3):
        if keep.sum() < 3:
            return None
        ww = w[keep]
        p = pts[keep]
        c = (p * ww[:, None]).sum(axis=0) / ww.sum()
        X = (p - c) * np.sqrt(ww)[:, None]
        _, _, Vt = np.linalg.svd(X, full_matrices=False)
        d = Vt[0]
        res = np.abs((pts - c) @ np.array([-d[1], d[0]]))
        keep = (w > 0) & (res < 1.0)
    assert c is not None and d is not None
    if keep.sum() < 3:
        return None
    rms = float(np.sqrt(np.mean(res[keep] ** 2)))
    return c, d, rms, float(keep.mean())


# ---------------------------------------------------------------------------------------------
# the table's look: a "card" that looks just like the table is its texture


class _TableLook:
    """Colour histogram of the whole image, which is mostly table. A rectangle of a
    chequered or patterned cloth passes every edge test a card does, but its inside has
    the table's colours; a card's white border and art do not (on the rendered scenes:
    Bhattacharyya coefficient 0.05-0.6 for cards, above 0.9 for such rectangles)."""

    BINS = 8

    def __init__(self, image: np.ndarray) -> None:
        self.image = image if image.ndim == 3 else cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
        h, w = self.image.shape[:2]
        k = max(1.0, math.sqrt(h * w / 250_000.0))
        small = cv2.resize(self.image, (max(1, int(w / k)), max(1, int(h / k))),
                           interpolation=cv2.INTER_AREA)
        self.table = self._hist(small)

    def _hist(self, bgr: np.ndarray) -> np.ndarray:
        lab = cv2.cvtColor(bgr, cv2.COLOR_BGR2Lab)
        b = self.BINS
        hist = cv2.calcHist([lab], [0, 1, 2], None, [b, b, b], [0, 256, 0, 256, 0, 256]).ravel()
        return np.asarray(hist / max(float(hist.sum()), 1.0), np.float64)

    def like_table(self, q: np.ndarray) -> float:
        """Bhattacharyya coefficient of the quad's inside (85%) against the image."""
        c = q.mean(axis=0)
        inner = (c + (q - c) * 0.85).astype(np.float32)
        dst = np.array([[0, 0], [23, 0], [23, 39], [0, 39]], np.float32)
        M = cv2.getPerspectiveTransform(_long_side_first(inner), dst)
        patch = cv2.warpPerspective(self.image, M, (24, 40), flags=cv2.INTER_AREA,
                                    borderMode=cv2.BORDER_REPLICATE)
        return float(np.sum(np.sqrt(self._hist(patch) * self.table)))

    def card_like(self, q: np.ndarray) -> bool:
        return self.like_table(q) < TABLE_LIKE


# ---------------------------------------------------------------------------------------------
# seeds


@dataclass
class _Segs:
    p0: np.ndarray
    p1: np.ndarray
    d: np.ndarray
    nb: np.ndarray      # unit normal toward the brighter side
    length: np.ndarray


def _segments(gray: np.ndarray, min_len: float) -> _Segs:
    lines = cv2.createLineSegmentDetector(cv2.LSD_REFINE_STD).detect(gray)[0]
    if lines is None:
        z = np.zeros((0, 2))
        return _Segs(z, z, z, z, np.zeros(0))
    L = lines.reshape(-1, 4).astype(np.float64)
    p0, p1 = L[:, :2], L[:, 2:]
    length = np.linalg.norm(p1 - p0, axis=1)
    keep = length >= min_len
    p0, p1, length = p0[keep], p1[keep], length[keep]
    d = (p1 - p0) / length[:, None]
    # OpenCV's LSD orients a segment so that the brighter side is on its right
    nb = np.column_stack([d[:, 1], -d[:, 0]])
    return _Segs(p0, p1, d, nb, length)


@dataclass
class _Corners:
    X: np.ndarray      # (n, 2) corner points
    a1: np.ndarray     # (n, 2) unit vectors along the two sides, into the card
    a2: np.ndarray
    pol: np.ndarray    # (n,) +1: brighter inside the corner
    arm: np.ndarray    # (n,) the shorter of the two segments' lengths


def _l_corners(s: _Segs, cell: float = 16.0) -> _Corners:
    """Where two segments meet at roughly a right angle near their ends (an L), with the
    brighter (or darker) side of both inside the L."""
    n = len(s.length)
    empty = _Corners(np.zeros((0, 2)), np.zeros((0, 2)), np.zeros((0, 2)), np.zeros(0, int),
                     np.zeros(0))
    if n < 2:
        return empty
    ends = np.vstack([s.p0, s.p1])
    keys = np.floor(ends / cell).astype(np.int64)
    grid: dict[tuple[int, int], list[int]] = defaultdict(list)
    for k, (cx, cy) in enumerate(keys.tolist()):
        grid[(cx, cy)].append(k)
    ks: list[int] = []
    k2s: list[int] = []
    for (cx, cy), members in grid.items():
        near = [k2 for ox in (-1, 0, 1) for oy in (-1, 0, 1)
                for k2 in grid.get((cx + ox, cy + oy), ())]
        for k in members:
            for k2 in near:
                if k2 % n > k % n:
                    ks.append(k)
                    k2s.append(k2)
    if not ks:
        return empty
    K1, K2 = np.array(ks), np.array(k2s)
    i, ei, j, ej = K1 % n, K1 // n, K2 % n, K2 // n
    di, dj = s.d[i], s.d[j]
    keep = np.abs(np.sum(di * dj, axis=1)) < 0.5
    i, ei, j, ej, di, dj, K1, K2 = (v[keep] for v in (i, ei, j, ej, di, dj, K1, K2))
    det = di[:, 0] * (-dj[:, 1]) + dj[:, 0] * di[:, 1]
    r = s.p0[j] - s.p0[i]
    t = (r[:, 0] * (-dj[:, 1]) + dj[:, 0] * r[:, 1]) / det
    X = s.p0[i] + t[:, None] * di
    out_i = np.where(ei[:, None] == 1, di, -di)
    out_j = np.where(ej[:, None] == 1, dj, -dj)
    ti = np.sum((X - ends[K1]) * out_i, axis=1)
    tj = np.sum((X - ends[K2]) * out_j, axis=1)
    gi = np.clip(0.2 * s.length[i], 4.0, cell)
    gj = np.clip(0.2 * s.length[j], 4.0, cell)
    si = np.sum(s.nb[i] * -out_j, axis=1)
    sj = np.sum(s.nb[j] * -out_i, axis=1)
    ok = (ti >= -3) & (ti <= gi) & (tj >= -3) & (tj <= gj) & (si * sj > 0)
    return _Corners(X[ok], -out_i[ok], -out_j[ok], np.where(si[ok] > 0, 1, -1),
                    np.minimum(s.length[i], s.length[j])[ok])


def _corner_quads(gray: np.ndarray, aspect: float, min_short: float, limit: int = 400,
                  max_corners: int = 600) -> list[tuple[np.ndarray, int, int]]:
    """Card hypotheses from pairs of L corners at the two ends of one side: the side's
    length and the other sides' directions give the quad (the other side is the card's
    aspect longer or shorter). Returns (quad, polarity, corners supporting it), the best
    supported first. A busy table (a chequered cloth) has thousands of corners: only the
    ``max_corners`` with the longest arms are paired."""
    s = _segments(gray, max(6.0, 0.3 * min_short))
    C = _l_corners(s)
    if len(C.X) > max_corners:
        keep = np.argsort(-C.arm)[:max_corners]
        C = _Corners(C.X[keep], C.a1[keep], C.a2[keep], C.pol[keep], C.arm[keep])
    n = len(C.X)
    if n < 2:
        return []
    cos_side, cos_arm = math.cos(math.radians(7.0)), math.cos(math.radians(12.0))
    max_len = 0.5 * max(gray.shape[:2])
    V = C.X[None, :, :] - C.X[:, None, :]                      # [i, j] = X_j - X_i
    dist = np.linalg.norm(V, axis=2)
    U = V / np.maximum(dist, 1e-9)[:, :, None]
    upper = np.triu(np.ones((n, n), bool), 1)
    cand = upper & (dist >= 0.9 * min_short) & (dist <= max_len) & (C.pol[:, None] == C.pol[None])
    arms = (C.a1, C.a2)
    found = []
    for k in (0, 1):
        along, other = arms[k], arms[1 - k]
        on_side = cand & (np.einsum("ijc,ic->ij", U, along) > cos_side)
        if not on_side.any():
            continue
        for m in (0, 1):
            back = along @ arms[m].T            # [i, j]: i's side arm . j's arm m
            par = other @ arms[1 - m].T
            ok = on_side & (back < -cos_side) & (par > cos_arm)
            for i, j in zip(*np.nonzero(ok)):
                found.append((int(i), int(j), k, m))
    if not found:
        return []
    quads = []
    pols = []
    for i, j, k, m in found:
        other_i, other_j = arms[1 - k][i], arms[1 - m][j]
        side = float(dist[i, j])
        for ratio in (aspect, 1.0 / aspect):
            quads.append(np.array([C.X[i], C.X[j], C.X[j] + other_j * side * ratio,
                                   C.X[i] + other_i * side * ratio]))
            pols.append(int(C.pol[i]))
    Q = np.array(quads)
    # support: detected corners at the predicted far corners too
    tol = np.maximum(3.0, 0.06 * np.linalg.norm(Q[:, 1] - Q[:, 0], axis=1))
    sup = np.full(len(Q), 2)
    for c in (2, 3):
        d = np.linalg.norm(Q[:, c][:, None, :] - C.X[None], axis=2).min(axis=1)
        sup += d < tol
    order = np.argsort(-sup, kind="stable")[:limit]
    return [(Q[h], pols[h], int(sup[h])) for h in order]


def _contour_quads(image: np.ndarray, gray: np.ndarray, min_short: float) -> list[np.ndarray]:
    """Quads from outlines of bright regions (a card alone on the table, a pile)."""
    g = cv2.GaussianBlur(gray, (3, 3), 0)
    masks = [cv2.adaptiveThreshold(g, 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY,
                                   51, -8)]
    if image.ndim == 3:
        white = cv2.GaussianBlur(image.min(axis=2), (3, 3), 0)
        masks.append(cv2.threshold(white, 0, 255, cv2.THRESH_BINARY | cv2.THRESH_OTSU)[1])
    out = []
    for m in masks:
        cnts, _ = cv2.findContours(m, cv2.RETR_LIST, cv2.CHAIN_APPROX_SIMPLE)
        for c in cnts:
            area = cv2.contourArea(c)
            if area < min_short * min_short:
                continue
            hull = cv2.convexHull(c)
            peri = cv2.arcLength(hull, True)
            for eps in (0.02, 0.04):
                ap = cv2.approxPolyDP(hull, eps * peri, True)
                if len(ap) == 4:
                    q = ap.reshape(4, 2).astype(np.float64)
                    qa = abs(cv2.contourArea(q.astype(np.float32)))
                    if qa > 0 and 0.85 < area / qa < 1.1:
                        out.append(q)
                    break
    return out


def _seeds(image: np.ndarray, gray: np.ndarray, imgf: np.ndarray, aspect: float,
           look: _TableLook, limit: int = 24, budget: int = 200
           ) -> list[tuple[_Card, int, float]]:
    """The best distinct cards seen (at least three clean sides): (card, polarity, score)."""
    h, w = gray.shape[:2]
    min_short = MIN_LONG_PX / aspect
    raw = _corner_quads(gray, aspect, min_short)
    raw += [(q, pol, 0) for q in _contour_quads(image, gray, min_short) for pol in (1, -1)]
    out: list[tuple[_Card, int, float]] = []
    tried = 0
    for q, pol, sup in raw:
        q = _long_side_first(clockwise_from_top_left(q))
        if not _plausible(q, aspect, min_short, 0.5 * max(h, w)):
            continue
        c = q.mean(axis=0)
        size = math.sqrt(abs(cv2.contourArea(q.astype(np.float32))))
        if any(np.linalg.norm(c - o.centre) < 0.3 * size for o, _, _ in out):
            continue
        tried += 1
        if tried > budget:
            break
        card = _see_card(imgf, q, pol, radius=3.0)
        if card.sides < 3:
            continue
        again = _see_card(imgf, _long_side_first(clockwise_from_top_left(card.quad)), pol, radius=1.5)
        if again.sides >= card.sides:
            card = again
        if card.sides >= 3 and _plausible(card.quad, aspect, min_short, 0.5 * max(h, w)) \
                and look.card_like(card.quad):
            # four sides seen beats three; then corners found there, then contrast
            out.append((card, pol, 1000.0 * card.sides + 100.0 * sup + min(card.step, 99.0)))
            if len(out) >= limit:
                break
    out.sort(key=lambda t: -t[2])
    return out


# ---------------------------------------------------------------------------------------------
# cards as seen: up to four sides, each a straight brightness step


@dataclass
class _Card:
    quad: np.ndarray                               # (4, 2) clockwise, side 0->1 a short side
    lines: list[tuple[np.ndarray, float] | None]   # side k (quad[k] -> quad[k+1]): n . x = c
    step: float = 0.0                              # weakest seen side's median step

    @property
    def sides(self) -> int:
        return sum(ln is not None for ln in self.lines)

    @property
    def centre(self) -> np.ndarray:
        return np.asarray(self.quad.mean(axis=0))


def _long_side_first(q: np.ndarray) -> np.ndarray:
    """Roll a clockwise quad so that its side 0->1 is a short side (as in the model)."""
    s = np.linalg.norm(np.roll(q, -1, axis=0) - q, axis=1)
    return np.roll(q, -1, axis=0) if s[0] + s[2] > s[1] + s[3] else q


def _on_line(img: np.ndarray, a: np.ndarray, b: np.ndarray, pol: int, ts: np.ndarray
             ) -> np.ndarray:
    """The brightness step (inside minus outside, times ``pol``) across the line a->b of a
    clockwise quad at stations ``ts``, measured on the line itself (the best of three
    offsets within half a pixel): a real edge steps the same way all along, a texture
    crossed by the line does not."""
    L = max(float(np.linalg.norm(b - a)), 1e-9)
    d = (b - a) / L
    n_out = np.array([d[1], -d[0]])
    base = a[None, :] + ts[:, None] * (b - a)[None, :]
    # one sampling for all: offsets -1.5 .. 1.5 px across the line, steps over 2 px
    offs = np.array([-1.5, -1.0, -0.5, 0.5, 1.0, 1.5])
    prof = _sample(img, base[:, None, :] + offs[None, :, None] * n_out[None, None, :])
    st = (prof[:, :3] - prof[:, 3:]) * pol      # centred at -0.5, 0, +0.5
    return np.asarray(st.max(axis=1))


def _see_card(img: np.ndarray, q: np.ndarray, pol: int, radius: float) -> _Card:
    """Fit each side of the predicted quad ``q`` to the brightness step near it; a side that
    is hidden (a pyramid, a hand, a neighbour lying over it), not straight, or a line of
    the table's texture running on past the card's corners is left out."""
    lines: list[tuple[np.ndarray, float] | None] = []
    steps = []
    ctr = q.mean(axis=0)
    for k in range(4):
        if k - sum(ln is not None for ln in lines) >= 2:
            lines.append(None)      # two sides missing already: not a card here
            continue
        a, b = q[k], q[(k + 1) % 4]
        L = float(np.linalg.norm(b - a))
        edge, st = _side_steps(img, a, b, pol, radius)
        fit = _fit_line(edge, np.where(st > MIN_STEP * 0.5, st, 0.0))
        if fit is None or L <= 0:
            lines.append(None)
            continue
        c0, d, rms, kept = fit
        n = np.array([-d[1], d[0]])
        if n @ ((a + b) / 2 - ctr) < 0:
            n = -n
        side_d = (b - a) / L
        off = abs(float(n @ ((a + b) / 2 - c0)))
        if not (kept >= 0.7 and rms <= 0.7 and abs(float(side_d @ d)) > math.cos(
                math.radians(4.0)) and off <= radius + 0.5):
            lines.append(None)
            continue
        # the side's ends on the fitted line
        dd = d if d @ side_d > 0 else -d
        a2 = c0 + dd * float((a - c0) @ dd)
        b2 = c0 + dd * float((b - c0) @ dd)
        on = _on_line(img, a2, b2, pol, np.linspace(0.12, 0.88, int(np.clip(L / 3, 6, 40))))
        med = float(np.median(on))
        if med < MIN_STEP or float(np.mean(on > 0.5 * MIN_STEP)) < 0.75:
            lines.append(None)
            continue
        # a line of the table's texture (wood grain, a chequered cloth) runs on past both
        # ends; a card's side stops at one end at least (a neighbour's edge may go on)
        runs = sum(float(np.median(_on_line(img, a2, b2, pol, ts))) > 0.6 * med
                   for ts in (np.linspace(1.05, 1.25, 5), np.linspace(-0.25, -0.05, 5)))
        if runs >= 2:
            lines.append(None)
            continue
        lines.append((n, float(n @ c0)))
        steps.append(med)
    quad = q.copy()
    for k in range(4):
        l1, l2 = lines[k - 1], lines[k]
        if l1 is not None and l2 is not None:
            d1 = np.array([-l1[0][1], l1[0][0]])
            d2 = np.array([-l2[0][1], l2[0][0]])
            X = _intersect(l1[0] * l1[1], d1, l2[0] * l2[1], d2)
            if X is not None:
                quad[k] = X
    if sum(ln is not None for ln in lines) == 3:
        # one side unseen: the two sides beside it must end where it would be, or this
        # is a rectangle slid along a longer pair of edges (a pile, a card's edge and its
        # neighbour's) with an edge inside the card taken for its end
        gone = next(k for k in range(4) if lines[k] is None)
        for k, ts in (((gone - 1) % 4, np.linspace(1.05, 1.25, 5)),
                      ((gone + 1) % 4, np.linspace(-0.25, -0.05, 5))):
            p0, p1 = quad[k], quad[(k + 1) % 4]
            along = float(np.median(_on_line(img, p0, p1, pol, np.linspace(0.12, 0.88, 12))))
            ext = float(np.median(_on_line(img, p0, p1, pol, ts)))
            if ext > 0.6 * max(along, 1e-6):
                lines = [None, None, None, None]
                break
    return _Card(quad, lines, min(steps) if steps else 0.0)


def _outermost(img: np.ndarray, card: _Card, pol: int, look: _TableLook, aspect: float,
               min_short: float, max_side: float) -> tuple[_Card, int]:
    """The card's own outline around a rectangle found inside it: a wide white border
    around the art, the frames of a card back's pattern. Looks outward (4% steps, up to
    1.6 times the size, either polarity) for an enclosing card-like outline, repeatedly."""
    cur, cp = card, pol
    for _ in range(4):
        found = None
        ctr = cur.centre
        short = math.sqrt(abs(cv2.contourArea(cur.quad.astype(np.float32))) / aspect)
        for f in np.arange(1.04, 1.61, 0.04):
            q = _long_side_first(clockwise_from_top_left(ctr + (cur.quad - ctr) * f))
            if not _plausible(q, aspect, min_short, max_side):
                continue
            for p in (cp, -cp):
                oc = _see_card(img, q, p, radius=max(2.0, 0.02 * f * short))
                if oc.sides >= 3 and _plausible(oc.quad, aspect, min_short, max_side) \
                        and look.card_like(oc.quad):
                    found = (oc, p)
                    break
            if found is not None:
                break
        if found is None:
            return cur, cp
        cur, cp = found
    return cur, cp


# ---------------------------------------------------------------------------------------------
# the joint fit: one homography, one rigid pose per card, to every side seen


def _pose0(H: np.ndarray, q: np.ndarray, model: np.ndarray) -> tuple[float, float, float]:
    R, t = _rigid(model, _persp(H, q))
    return float(t[0]), float(t[1]), float(math.atan2(R[1, 0], R[0, 0]))


class _Camera:
    """The table->image homography G as a function of a few parameters: a pinhole camera
    K [r1 r2 t] looking at the table plane (6 parameters, or 7 with the focal length when
    the intrinsics are not known; square pixels, principal point at the image centre), or
    a free homography (8) when no camera matrix is given. A camera's homography cannot
    skew or stretch the table, which a free one fitted to small cards readily does."""

    def __init__(self, G0: np.ndarray, K: np.ndarray | None, focal_free: bool) -> None:
        self.K = K
        self.focal_free = focal_free and K is not None
        G0 = G0 / G0[2, 2]
        if K is None:
            self.x0 = G0.ravel()[:8].copy()
            self.f0 = 1.0
            return
        M = np.linalg.inv(K) @ G0
        lam = 2.0 / (np.linalg.norm(M[:, 0]) + np.linalg.norm(M[:, 1]))
        if (M[:, 2] * lam)[2] < 0:
            lam = -lam
        r1, r2 = M[:, 0] * lam, M[:, 1] * lam
        U, _, Vt = np.linalg.svd(np.column_stack([r1, r2, np.cross(r1, r2)]))
        R = U @ Vt
        if np.linalg.det(R) < 0:
            R = U @ np.diag([1.0, 1.0, -1.0]) @ Vt
        rvec, _ = cv2.Rodrigues(R)
        self.f0 = float(K[0, 0])
        x = [*rvec.ravel(), *(M[:, 2] * lam)]
        if self.focal_free:
            x.append(0.0)                   # log(f / f0)
        self.x0 = np.array(x, np.float64)

    def G(self, x: np.ndarray) -> np.ndarray:
        if self.K is None:
            return np.append(x[:8], 1.0).reshape(3, 3)
        R, _ = cv2.Rodrigues(np.asarray(x[:3], np.float64).reshape(3, 1))
        K = self.K.copy()
        if self.focal_free:
            K[0, 0] = K[1, 1] = self.f0 * math.exp(float(x[6]))
        return np.asarray(K @ np.column_stack([R[:, 0], R[:, 1], x[3:6]]), np.float64)

    def dG(self, x: np.ndarray) -> np.ndarray:
        """(9, n) derivative of G's entries with respect to the parameters."""
        if self.K is None:
            D = np.zeros((9, 8))
            D[:8, :8] = np.eye(8)
            return D
        G0 = self.G(x).ravel()
        cols = []
        for k in range(len(x)):
            h = 1e-6 * max(1.0, abs(float(x[k])))
            xk = x.copy()
            xk[k] += h
            cols.append((self.G(xk).ravel() - G0) / h)
        return np.column_stack(cols)


def _joint_fit(cards: list[_Card], model: np.ndarray, H0: np.ndarray,
               K: np.ndarray | None = None, focal_free: bool = True, iters: int = 40
               ) -> tuple[np.ndarray, list[tuple[float, float, float]], np.ndarray,
                          dict[tuple[int, int], float]]:
    """Levenberg-Marquardt: the model corners of each seen side, through the table->image
    homography G and the card's pose, should lie on that side's line in the image.
    Returns (H image->mm, poses (x, y, angle), each card's RMS misfit in px, each seen
    side's RMS misfit in px by (card, side))."""
    n = len(cards)
    cam = _Camera(np.linalg.inv(H0), K, focal_free)
    nc = len(cam.x0)
    poses0 = [_pose0(H0, c.quad, model) for c in cards]
    x = np.concatenate([cam.x0, np.array([v for p in poses0 for v in p])])
    rows = [(j, k) for j, c in enumerate(cards) for k in range(4) if c.lines[k] is not None]
    m = 2 * len(rows)
    Jr = np.repeat(np.array([j for j, _ in rows]), 2)
    Mr = np.array([model[mi] for _, k in rows for mi in (k, (k + 1) % 4)])
    seen = [cards[j].lines[k] for j, k in rows]
    Nr = np.repeat(np.array([ln[0] for ln in seen if ln is not None]), 2, axis=0)
    Cr = np.repeat(np.array([ln[1] for ln in seen if ln is not None]), 2)
    # a weak prior keeps an unobservable focal length (a camera looking straight down) near
    # its starting value instead of drifting
    prior = cam.focal_free

    def evaluate(x: np.ndarray, jac: bool) -> tuple[np.ndarray, np.ndarray | None]:
        G = cam.G(x[:nc])
        P = x[nc:].reshape(n, 3)
        c, s_ = np.cos(P[Jr, 2]), np.sin(P[Jr, 2])
        mx, my = Mr[:, 0], Mr[:, 1]
        pw = np.column_stack([c * mx - s_ * my + P[Jr, 0], s_ * mx + c * my + P[Jr, 1],
                              np.ones(m)])
        u = pw @ G.T
        w = u[:, 2]
        xy = u[:, :2] / w[:, None]
        nxy = np.sum(Nr * xy, axis=1)
        r = nxy - Cr
        if prior:
            r = np.append(r, x[6] / 0.3)
        if not jac:
            return r, None
        J = np.zeros((len(r), len(x)))
        JG = np.hstack([Nr[:, :1] * pw / w[:, None], Nr[:, 1:] * pw / w[:, None],
                        -nxy[:, None] * pw / w[:, None]])
        J[:m, :nc] = JG @ cam.dG(x[:nc])
        dxy = (G[None, :2, :2] - xy[:, :, None] * G[None, 2:3, :2]) / w[:, None, None]
        g = np.einsum("ka,kab->kb", Nr, dxy)
        ar = np.arange(m)
        J[ar, nc + 3 * Jr] = g[:, 0]
        J[ar, nc + 3 * Jr + 1] = g[:, 1]
        J[ar, nc + 3 * Jr + 2] = g[:, 0] * (-s_ * mx - c * my) + g[:, 1] * (c * mx - s_ * my)
        if prior:
            J[m, 6] = 1.0 / 0.3
        return r, J

    # iteratively reweighted: a Cauchy weight per side (both its residuals) makes a side
    # snapped to the wrong edge (a neighbour's border merged with this card's, the art's
    # frame) count for little, however far off it is
    r, _ = evaluate(x, False)
    for scale in (4 * ROBUST_PX, 2 * ROBUST_PX, ROBUST_PX, ROBUST_PX):
        res = r[:m].reshape(-1, 2)
        side_r = np.sqrt(0.5 * np.sum(res ** 2, axis=1))
        wt = np.ones(len(r))
        wt[:m] = np.repeat(1.0 / (1.0 + (side_r / scale) ** 2), 2)
        sw = np.sqrt(wt)
        lam = 1e-3
        r, J = evaluate(x, True)
        assert J is not None
        r, J = r * sw, J * sw[:, None]
        cost = float(r @ r)
        for _ in range(iters):
            A = J.T @ J
            g = J.T @ r
            D = np.diag(np.diag(A)) + 1e-12 * np.eye(len(x))
            try:
                step = -np.linalg.solve(A + lam * D, g)
            except np.linalg.LinAlgError:
                lam *= 10
                continue
            x_new = x + step
            r_new, _ = evaluate(x_new, False)
            r_new = r_new * sw
            c_new = float(r_new @ r_new)
            if np.isfinite(c_new) and c_new < cost:
                gain = cost - c_new
                x, cost = x_new, c_new
                r, J = evaluate(x, True)
                assert J is not None
                r, J = r * sw, J * sw[:, None]
                lam = max(lam / 3, 1e-9)
                if gain < 1e-9 * max(cost, 1e-9):
                    break
            else:
                lam *= 4
                if lam > 1e8:
                    break
        r, _ = evaluate(x, False)
    G = cam.G(x[:nc])
    H = np.linalg.inv(G)
    H /= H[2, 2]
    P = x[nc:].reshape(n, 3)
    rr = r[:m]
    sq = np.bincount(Jr, weights=rr ** 2, minlength=n)
    cnt = np.bincount(Jr, minlength=n)
    per = np.sqrt(sq / np.maximum(cnt, 1))
    sides = {(j, k): float(math.sqrt(0.5 * (rr[2 * i] ** 2 + rr[2 * i + 1] ** 2)))
             for i, (j, k) in enumerate(rows)}
    return H, [(float(p[0]), float(p[1]), float(p[2])) for p in P], per, sides


def _agree(card: _Card, H: np.ndarray, model: np.ndarray, tol_px: float) -> _Card | None:
    """The card with only the sides that agree with H (the card's pose fitted to them with
    H fixed, each side within ``tol_px``), or None when fewer than three do."""
    c_img = card.centre
    Hi = np.linalg.inv(H)
    # px per mm at the card, from how H's inverse stretches a small square there
    c_mm = _persp(H, c_img[None])[0]
    sq = _persp(Hi, np.array([c_mm, c_mm + (1.0, 0.0), c_mm + (0.0, 1.0)]))
    px_per_mm = math.sqrt(abs(_cross(sq[1] - sq[0], sq[2] - sq[0])))
    tol = tol_px / max(px_per_mm, 1e-9)
    ctr_t = c_mm
    lines_t: dict[int, tuple[np.ndarray, float]] = {}
    for k, ln in enumerate(card.lines):
        if ln is None:
            continue
        n, c = ln
        lt = Hi.T @ np.array([n[0], n[1], -c])     # image line -> table line
        nn = float(np.hypot(lt[0], lt[1]))
        if nn < 1e-12:
            continue
        nt, ct = lt[:2] / nn, -lt[2] / nn
        if nt @ ctr_t - ct > 0:                    # outward: the centre on the inside
            nt, ct = -nt, -ct
        lines_t[k] = (nt, ct)
    x, y, th = _pose0(H, card.quad, model)
    keep = sorted(lines_t)
    for _ in range(3):
        if len(keep) < 3:
            return None
        for _ in range(6):
            c, s_ = math.cos(th), math.sin(th)
            R = np.array([[c, -s_], [s_, c]])
            dR = np.array([[-s_, -c], [c, -s_]])
            rows, res = [], []
            for k in keep:
                nt, ct = lines_t[k]
                for mi in (k, (k + 1) % 4):
                    m = model[mi]
                    res.append(float(nt @ (R @ m + (x, y)) - ct))
                    rows.append([nt[0], nt[1], float(nt @ (dR @ m))])
            J = np.array(rows)
            step, *_ = np.linalg.lstsq(J, -np.array(res), rcond=None)
            x, y, th = x + step[0], y + step[1], th + step[2]
        c, s_ = math.cos(th), math.sin(th)
        R = np.array([[c, -s_], [s_, c]])
        side_err = {}
        for k in keep:
            nt, ct = lines_t[k]
            e = [float(nt @ (R @ model[mi] + (x, y)) - ct) for mi in (k, (k + 1) % 4)]
            side_err[k] = math.sqrt(0.5 * (e[0] ** 2 + e[1] ** 2))
        worst = max(keep, key=lambda k: side_err[k])
        if side_err[worst] <= tol:
            lines = [card.lines[k] if k in keep else None for k in range(4)]
            return _Card(card.quad, lines, card.step)
        keep.remove(worst)
    return None


def _fit_all(cards: list[_Card], model: np.ndarray, H: np.ndarray, K: np.ndarray | None = None,
             focal_free: bool = True
             ) -> tuple[list[_Card], np.ndarray, list[tuple[float, float, float]], np.ndarray]:
    """Joint fit, dropping the sides that disagree with the rest (a side half hidden under
    a neighbour that lies over it shows the neighbour's edge, a few pixels in), then cards
    left with fewer than three sides."""
    cards = [_Card(c.quad, list(c.lines), c.step) for c in cards]
    while True:
        cards = [c for c in cards if c.sides >= 3]
        if not cards:
            return [], H, [], np.zeros(0)
        # unknowns: the camera (6 with K, 8 for a free homography) and a pose per card,
        # less the 3 that only move the whole table frame
        unknowns = (6 if K is not None else 8) + 3 * len(cards) - 3
        if sum(2 * c.sides for c in cards) < unknowns + 1:
            # too few sides for the joint fit: the best card alone, from its four corners
            best = max(cards, key=lambda c: (c.sides, c.step))
            q = best.quad
            Hq = cv2.getPerspectiveTransform(q.astype(np.float32), model.astype(np.float32))
            return [best], Hq / Hq[2, 2], [(0.0, 0.0, 0.0)], np.zeros(1)
        Hn, poses, per, sides = _joint_fit(cards, model, H, K, focal_free)
        H = Hn
        vals = np.array(list(sides.values()))
        lim = max(MAX_SIDE_PX, 3.0 * float(np.median(vals)))
        worst = float(vals.max())
        if worst <= lim:
            return cards, Hn, poses, per
        for (j, k), v in sides.items():
            if v > max(lim, 0.5 * worst):
                cards[j].lines[k] = None


# ---------------------------------------------------------------------------------------------
# the search in the rectified view


def _box_mean(a: np.ndarray, kx: int, ky: int) -> np.ndarray:
    return cv2.boxFilter(a, -1, (max(1, kx), max(1, ky)), normalize=True,
                         borderType=cv2.BORDER_CONSTANT)


def _rect_scores(Dx: np.ndarray, Dy: np.ndarray, ha: float, hb: float, tol: int
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Weakest side's mean step (inside minus outside) of an axis-parallel rectangle of
    half sizes (ha, hb) centred at each pixel, each side allowed ``tol`` px off; and the
    mean steps along vertical and horizontal segments of the sides' lengths (V, Hh)."""
    V = _box_mean(Dx, 1, int(round(1.4 * hb)))      # vertical sides
    Hh = _box_mean(Dy, int(round(1.4 * ha)), 1)     # horizontal sides
    kx = np.ones((1, 2 * tol + 1), np.uint8)
    ky = np.ones((2 * tol + 1, 1), np.uint8)
    Vp, Vm = cv2.dilate(V, kx), cv2.dilate(-V, kx)
    Hp, Hm = cv2.dilate(Hh, ky), cv2.dilate(-Hh, ky)
    a, b = int(round(ha)), int(round(hb))
    # the weakest of the four sides, each read a half size away (the left side at x - a:
    # dark -> bright going +x). Where a side falls outside the view the score is left 0
    # (the shifted maps read zero there: no peak either way), so only the pixels with all
    # four sides inside are worked out, on slices, not on four shifted copies
    h, w = V.shape
    score = np.zeros_like(V)
    if w > 2 * a and h > 2 * b:
        inner = score[b:h - b, a:w - a]
        np.minimum(Vp[b:h - b, :w - 2 * a], Vm[b:h - b, 2 * a:], out=inner)
        np.minimum(inner, Hp[:h - 2 * b, a:w - a], out=inner)
        np.minimum(inner, Hm[2 * b:, a:w - a], out=inner)
    return score, V, Hh


def _peaks(score: np.ndarray, radius: int, thresh: float) -> list[tuple[int, int, float]]:
    k = cv2.getStructuringElement(cv2.MORPH_RECT, (2 * radius + 1, 2 * radius + 1))
    mx = cv2.dilate(score, k)
    ys, xs = np.nonzero((score >= mx) & (score > thresh))
    return [(int(x), int(y), float(score[y, x])) for x, y in zip(xs, ys)]


def _best_offset(vals: np.ndarray) -> float:
    """Sub-sample position of the maximum of a short profile (index units)."""
    i = int(np.argmax(vals))
    if 0 < i < len(vals) - 1:
        y0, y1, y2 = float(vals[i - 1]), float(vals[i]), float(vals[i + 1])
        den = y0 - 2 * y1 + y2
        if abs(den) > 1e-9:
            return i + float(np.clip(0.5 * (y0 - y2) / den, -0.5, 0.5))
    return float(i)


def _side_positions(V: np.ndarray, Hh: np.ndarray, x: int, y: int, a: int, b: int, tol: int
                    ) -> tuple[float, float, float, float] | None:
    """Each side of the rectangle found at (x, y) placed on its own best step:
    (left, top, right, bottom) in R px."""
    h, w = V.shape
    if not (tol <= x - a and x + a + tol < w and tol <= y - b and y + b + tol < h):
        return None
    r = np.arange(-tol, tol + 1)
    left = x - a - tol + _best_offset(V[y, x - a + r])
    right = x + a - tol + _best_offset(-V[y, x + a + r])
    top = y - b - tol + _best_offset(Hh[y - b + r, x])
    bottom = y + b - tol + _best_offset(-Hh[y + b + r, x])
    return left, top, right, bottom


def _search(imgf: np.ndarray, H: np.ndarray, size: tuple[float, float], pol: int,
            region: tuple[float, float, float, float], ppm: float,
            grid: Sequence[tuple[float, float]], rank_only: bool = False
            ) -> tuple[list[np.ndarray], tuple[float, float]]:
    """Card rectangles parallel to the frame's axes in ``region`` (mm) of the view through
    H: their corners in mm, and the (scale, aspect) factors of the grid that scored best."""
    x0, y0, x1, y1 = region
    Wr, Hr = int(math.ceil((x1 - x0) * ppm)), int(math.ceil((y1 - y0) * ppm))
    if Wr < 8 or Hr < 8:
        return [], (1.0, 1.0)
    S = np.array([[ppm, 0, -x0 * ppm], [0, ppm, -y0 * ppm], [0, 0, 1.0]])
    M = S @ H
    R = cv2.warpPerspective(imgf, M, (Wr, Hr), flags=cv2.INTER_LINEAR,
                            borderMode=cv2.BORDER_REPLICATE)
    valid = cv2.warpPerspective(np.ones(imgf.shape[:2], np.uint8), M, (Wr, Hr),
                                flags=cv2.INTER_NEAREST, borderValue=0)
    R = cv2.GaussianBlur(R, (0, 0), 0.7)
    Dx = np.zeros_like(R)
    Dy = np.zeros_like(R)
    Dx[:, 1:-1] = (R[:, 2:] - R[:, :-2]) * pol
    Dy[1:-1, :] = (R[2:, :] - R[:-2, :]) * pol
    w, h = size
    tol = 2
    best = None
    for f, sk in grid:
        maps = []
        for portrait in (True, False):
            cw, ch = (w, h) if portrait else (h, w)
            ha, hb = cw * f * sk * ppm / 2, ch * f / sk * ppm / 2
            sc, V, Hh = _rect_scores(Dx, Dy, ha, hb, tol)
            sc[valid == 0] = 0
            maps.append((sc, V, Hh, ha, hb))
        both = np.maximum(maps[0][0], maps[1][0])
        r = int(max(2, 0.45 * min(w, h) * f * ppm))
        found = []
        for x, y, s in _peaks(both, r, MIN_STEP * 0.8):
            if rank_only:
                found.append(((0.0, 0.0, 0.0, 0.0), s))
                continue
            which = 0 if maps[0][0][y, x] >= maps[1][0][y, x] else 1
            _, V, Hh, ha, hb = maps[which]
            sides = _side_positions(V, Hh, x, y, int(round(ha)), int(round(hb)), tol)
            if sides is not None:
                found.append((sides, s))
        total = sum(sorted((t[1] for t in found), reverse=True)[:8])
        if best is None or total > best[0]:
            best = (total, found, (f, sk))
    assert best is not None
    if rank_only:
        return [], best[2]
    out = []
    Si = np.linalg.inv(S)
    for (l, t, r_, b_), _ in sorted(best[1], key=lambda fs: -fs[1]):
        rect = np.array([[l, t], [r_, t], [r_, b_], [l, b_]])
        out.append(_persp(Si, rect))
    return out, best[2]


# ---------------------------------------------------------------------------------------------
# growing from one seed


@dataclass
class _Grown:
    cards: list[_Card]
    H: np.ndarray
    poses: list[tuple[float, float, float]]
    per_card: np.ndarray


def _predicted(H: np.ndarray, poses: list[tuple[float, float, float]], model: np.ndarray
               ) -> list[np.ndarray]:
    Hi = np.linalg.inv(H)
    out = []
    for x, y, th in poses:
        c, s = math.cos(th), math.sin(th)
        pts = model @ np.array([[c, s], [-s, c]]) + (x, y)
        out.append(_persp(Hi, pts))
    return out


@dataclass
class _Start:
    """Where growing starts: a rough map to mm, the region (mm) to search first, the
    image's scale (px per mm), the cards' polarity and the cards known so far."""

    H: np.ndarray
    region: tuple[float, float, float, float]
    px_per_mm: float
    pol: int
    cards: list[_Card]
    score: float = 0.0
    exact: bool = False      # H is a full calibration already (the previous frame's)


def _start_from_card(card: _Card, pol: int, size: tuple[float, float], score: float) -> _Start:
    model = _rect_model(size)
    A, *_ = np.linalg.lstsq(np.column_stack([card.quad, np.ones(4)]), model, rcond=None)
    H = np.vstack([A.T, [0.0, 0.0, 1.0]])
    ppm = math.sqrt(abs(cv2.contourArea(card.quad.astype(np.float32))) / (size[0] * size[1]))
    pad = 1.6 * max(size)
    return _Start(H, (-pad, -pad, pad, pad), ppm, pol, [card], score)


def _start_from_previous(previous: Calibration, image_size: tuple[int, int], pol: int
                         ) -> _Start | None:
    """Search where the previous calibration puts the table: the cards are found at once
    when the camera has not moved (a frame of a video), without seeds."""
    if previous.H is None or not previous.calibrated:
        return None
    H = np.asarray(previous.H, np.float64)
    w, h = image_size
    try:
        c = _persp(H, np.array([[w / 2, h / 2], [w / 2 + 1, h / 2], [w / 2, h / 2 + 1]]))
        box = _persp(H, np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float64))
    except (ValueError, FloatingPointError):
        return None
    if not np.all(np.isfinite(box)):
        return None
    mm_per_px = math.sqrt(abs(_cross(c[1] - c[0], c[2] - c[0])))
    if not (mm_per_px > 0 and math.isfinite(mm_per_px)):
        return None
    lim = 1500.0
    x0, y0 = np.maximum(box.min(axis=0), c[0] - lim)
    x1, y1 = np.minimum(box.max(axis=0), c[0] + lim)
    region = (float(x0), float(y0), float(x1), float(y1))
    return _Start(H, region, 1.0 / mm_per_px, pol, [], 0.0, exact=True)


def _grow(imgf: np.ndarray, start: _Start, size: tuple[float, float], aspect: float,
          look: _TableLook, K: np.ndarray | None = None, focal_free: bool = True,
          rounds: int = 5) -> _Grown:
    h_img, w_img = imgf.shape[:2]
    model = _rect_model(size)
    H = start.H
    pol = start.pol
    cards = list(start.cards)
    # the rectified view: finer than the image for small cards (the search's steps are
    # whole pixels), coarser for big ones (speed; the corners come from the image anyway)
    ppm = float(np.clip(start.px_per_mm, 0.6 if start.exact else 1.0, 1.5))
    min_short = MIN_LONG_PX / aspect
    poses: list[tuple[float, float, float]] = [(0.0, 0.0, 0.0)] * len(cards)
    per = np.zeros(len(cards))
    for rnd in range(rounds):
        if rnd == 0 and start.exact:
            region = start.region
            grid = [(1.0, 1.0)]
        elif rnd == 0:
            region = start.region
            # the start's scale and aspect are rough: try a few, first the scale alone
            _, (f, _) = _search(imgf, H, size, pol, region, ppm,
                                [(f, 1.0) for f in (0.86, 0.9, 0.95, 1.0, 1.05, 1.1, 1.16)],
                                rank_only=True)
            grid = [(f, sk) for sk in (0.92, 0.96, 1.0, 1.04, 1.08)]
        else:
            centres = _persp(H, np.array([c.centre for c in cards]))
            pad = 2.2 * max(size)
            region = (float(centres[:, 0].min() - pad), float(centres[:, 1].min() - pad),
                      float(centres[:, 0].max() + pad), float(centres[:, 1].max() + pad))
            grid = [(1.0, 1.0)]
        rects, _ = _search(imgf, H, size, pol, region, ppm, grid)
        Hi = np.linalg.inv(H)
        added = 0
        for r in rects[:MAX_CANDIDATES]:
            qi = _long_side_first(clockwise_from_top_left(_persp(Hi, r)))
            if not _plausible(qi, aspect, min_short, 0.5 * max(h_img, w_img)):
                continue
            side = math.sqrt(abs(cv2.contourArea(qi.astype(np.float32))) / aspect)
            if any(np.linalg.norm(qi.mean(axis=0) - o.centre) < 0.4 * side for o in cards):
                continue
            card = _see_card(imgf, qi, pol, radius=4.0 if rnd == 0 else 3.0)
            if card.sides >= (4 if rnd == 0 and not cards else 3) and look.card_like(card.quad):
                if start.exact and not cards:
                    agreed = _agree(card, H, model, 2.0)
                    if agreed is None:
                        continue
                    card = agreed
                elif cards:
                    # it must sit on the plane the cards so far make (loosely in the
                    # first round, whose map is only the seed's affine one)
                    agreed = _agree(card, H, model, 3.0 if rnd == 0 else 1.5)
                    if agreed is None:
                        continue
                    card = agreed
                cards.append(card)
                added += 1
        if not cards:
            break
        fitted = _fit_all(cards, model, H, K, focal_free)
        if not fitted[0]:
            break
        cards, H, poses, per = fitted
        if added == 0 and rnd > 0:
            break
    # polish: look again for every card's sides where the fit puts them, closer in
    if len(cards) >= 2:
        for _ in range(2):
            again = []
            for card, pq in zip(cards, _predicted(H, poses, model)):
                c2 = _see_card(imgf, _long_side_first(clockwise_from_top_left(pq)), pol, radius=1.5)
                again.append(c2 if c2.sides >= 3 else card)
            fitted = _fit_all(again, model, H, K, focal_free)
            if not fitted[0]:
                break
            cards, H, poses, per = fitted
    return _Grown(cards, H, poses, per)


def _sides_stepping(imgf: np.ndarray, H: np.ndarray, poses: list[tuple[float, float, float]],
                    model: np.ndarray, pol: int) -> tuple[int, float]:
    """How many sides of the cards at ``poses`` (and their summed median step) show a clear
    brightness step of polarity ``pol`` along their whole length, as in :func:`_see_card`."""
    seen, total = 0, 0.0
    for q in _predicted(H, poses, model):
        q = clockwise_from_top_left(q)
        for k in range(4):
            a, b = q[k], q[(k + 1) % 4]
            L = float(np.linalg.norm(b - a))
            on = _on_line(imgf, a, b, pol, np.linspace(0.12, 0.88, int(np.clip(L / 3, 6, 40))))
            med = float(np.median(on))
            if med >= MIN_STEP and float(np.mean(on > 0.5 * MIN_STEP)) >= 0.75:
                seen += 1
                total += med
    return seen, total


def _border_factor(imgf: np.ndarray, H: np.ndarray, poses: list[tuple[float, float, float]],
                   model: np.ndarray) -> float:
    """How much larger than the fitted rectangles the cards really are: 1 when the fit runs
    on their edges. On a close camera a fit can run on the art's frame line inside the white
    border on every card alike (the rectangle search scores the frame as well as the edge,
    and where cards touch their edges do not show all round), every card the same share too
    small. Such a fit has the border brighter just outside it on half its sides at least;
    the factor is the one (1.03-1.2) at which a brighter-inside step (the border against the
    table) shows just outside the most sides, on at least 35% of them, with a plain band
    between it and the fitted outline (else it is the fitted edge itself, blurred outward)."""
    need = max(3, 0.35 * 4 * len(poses))
    framed = max(_sides_stepping(imgf, H, poses, model * f, -1)[0]
                 for f in np.arange(1.0, 1.0301, 0.0025))
    if framed < max(need, 0.5 * 4 * len(poses)):
        return 1.0
    factors = np.arange(1.0, 1.2001, 0.0025)
    scores = [_sides_stepping(imgf, H, poses, model * f, 1) for f in factors]
    first = int(np.searchsorted(factors, 1.03 - 1e-9))
    i = max(range(first, len(factors)), key=lambda j: scores[j])
    seen = scores[i][0]
    if seen < need or min(s[0] for s in scores[:i]) > 0.5 * seen:
        return 1.0
    return float(factors[i])


def _lone_card_on_its_sides(g: _Grown, model: np.ndarray, K: np.ndarray) -> _Grown:
    """A fit of one card seen on three sides, refitted to those sides with the camera's K
    known: its six line ends fix the camera's six unknowns, where the fit from the card's
    four corners takes the unseen side's guessed ones (a close camera's lone card on a
    striped cloth, dev seed 940000 scene 12: the table 12% too large, 3.6% refitted). Only
    the final fit: while growing, a side on an art's frame line then tilts the whole view,
    and the search goes astray (seed 560000 scene 9: a card found where there is none).
    Kept only when no corner moves more than :data:`LONE_CARD_MOVE` of the card's long
    side: a guessed side is a few per cent off (dev seeds 940000 and 950000: 1-4.5%), while
    three sides that no card under this camera has (an art's frame on a white cloth, a
    cloth's stripes) move them 40-66%, and the table comes out further off than before."""
    if len(g.cards) != 1 or g.cards[0].sides != 3:
        return g
    H, poses, per, _ = _joint_fit(g.cards, model, g.H, K, focal_free=False)
    if not np.all(np.isfinite(H)):
        return g
    q0 = g.cards[0].quad
    q1 = _predicted(H, poses, model)[0]
    if not np.all(np.isfinite(q1)):
        return g
    q1 = _long_side_first(clockwise_from_top_left(q1))
    long_side = max(float(np.linalg.norm(q0[k] - q0[(k + 1) % 4])) for k in range(4))
    moved = min(float(np.linalg.norm(np.roll(q1, k, axis=0) - q0, axis=1).max())
                for k in range(4))
    if moved > LONE_CARD_MOVE * long_side:
        return g
    # the card as fitted: its unseen side where the camera puts it, not the guess
    card = g.cards[0]
    return _Grown([_Card(q1, card.lines, card.step)], H, poses, per)


# ---------------------------------------------------------------------------------------------
# the table frame and the public API


def _frame(H: np.ndarray, poses: list[tuple[float, float, float]], quads: list[np.ndarray]
           ) -> np.ndarray:
    """The rigid change of frame T (3x3) that puts the fit's table frame in the documented
    one: x along the dominant card axis, the quarter nearest the image's right, origin at the
    card nearest the cards' centroid."""
    th = np.array([p[2] for p in poses])
    phi = 0.25 * math.atan2(float(np.sin(4 * th).sum()), float(np.cos(4 * th).sum()))
    c_img = np.mean([q.mean(axis=0) for q in quads], axis=0)
    a, bx, by = _persp(H, np.array([c_img, c_img + (1.0, 0.0), c_img + (0.0, 1.0)]))
    ex, ey = bx - a, by - a
    best = None
    for k in range(4):
        ang = -phi + k * math.pi / 2
        Rk = np.array([[math.cos(ang), -math.sin(ang)], [math.sin(ang), math.cos(ang)]])
        vx = Rk @ ex
        score = vx[0] / (np.linalg.norm(vx) + 1e-12)
        if best is None or score > best[0]:
            best = (score, Rk)
    assert best is not None
    R = best[1]
    vy = R @ ey
    if vy[1] < 0:       # a mirrored fit: image down must be table south
        R = np.diag([1.0, -1.0]) @ R
    centres = np.array([(p[0], p[1]) for p in poses]) @ R.T
    mid = centres.mean(axis=0)
    origin = centres[int(np.argmin(np.linalg.norm(centres - mid, axis=1)))]
    T = np.eye(3)
    T[:2, :2] = R
    T[:2, 2] = -origin
    return T


def _check_inputs(image: np.ndarray, card_size_mm: Sequence[float]) -> tuple[float, float]:
    if not isinstance(image, np.ndarray) or image.size == 0:
        raise CardCalibrationError("calibrate from cards: the image is empty or not an image")
    if image.ndim not in (2, 3) or (image.ndim == 3 and image.shape[2] not in (1, 3, 4)):
        raise CardCalibrationError(f"calibrate from cards: an image of shape {image.shape} "
                                   "is neither grey nor colour")
    try:
        w, h = (float(v) for v in card_size_mm)
    except (TypeError, ValueError):
        raise CardCalibrationError(f"card size {card_size_mm!r}: expected (width, height) "
                                   "in mm") from None
    if not (math.isfinite(w) and math.isfinite(h) and w > 0 and h > 0):
        raise CardCalibrationError(f"card size {card_size_mm!r}: width and height must be "
                                   "positive mm")
    if abs(w - h) < 0.02 * max(w, h):
        raise CardCalibrationError(f"card size {card_size_mm!r}: a square card does not "
                                   "tell its long side from its short one")
    return (min(w, h), max(w, h))


def fit_cards(image_bgr: np.ndarray, card_size_mm: Sequence[float], *,
              intrinsics: Intrinsics | None = None,
              previous: Calibration | None = None, follow_mm: float = 0.0,
              follow_within_mm: float = math.inf) -> CardFit:
    """:func:`calibrate_from_cards`, plus the cards it used.

    ``follow_mm``: a fit that misses ``previous`` by more than :data:`KEEP_FRAME_MM` but no
    more than this is still expressed in its frame, when every card then lies within
    ``follow_within_mm`` of its origin on both axes (the area the detectors look at)."""
    size = _check_inputs(image_bgr, card_size_mm)
    aspect = size[1] / size[0]
    image = image_bgr
    if image.ndim == 3 and image.shape[2] == 4:
        image = cv2.cvtColor(image, cv2.COLOR_BGRA2BGR)
    elif image.ndim == 3 and image.shape[2] == 1:
        image = image[:, :, 0]
    if image.dtype != np.uint8:
        image = np.clip(image, 0, 255).astype(np.uint8)
    h_img, w_img = image.shape[:2]
    image_size = (int(w_img), int(h_img))
    if intrinsics is not None and intrinsics.distorts:
        image = cv2.undistort(image, intrinsics.K, intrinsics.dist)
    gray = _gray(image)
    imgf = gray.astype(np.float32)
    look = _TableLook(image)
    # a pinhole camera: the calibrated one, else square pixels, the principal point at the
    # centre and a focal length fitted from a webcam-like prior
    if intrinsics is not None:
        K, focal_free = np.asarray(intrinsics.K, np.float64), False
    else:
        f0 = PRIOR_FOCAL_SHARE * w_img
        K = np.array([[f0, 0.0, (w_img - 1) / 2.0], [0.0, f0, (h_img - 1) / 2.0], [0, 0, 1.0]])
        focal_free = True
    best: _Grown | None = None
    if previous is not None and previous.image_size in (None, image_size):
        for pol in (1, -1):
            st = _start_from_previous(previous, image_size, pol)
            if st is None:
                break
            g = _grow(imgf, st, size, aspect, look, K, focal_free)
            if g.cards and (best is None or len(g.cards) > len(best.cards)):
                best = g
            if best is not None and len(best.cards) >= 3:
                break
    starts: list[_Start] = []
    seeds: list[tuple[_Card, int, float]] = []
    if best is None or len(best.cards) < 3:
        seeds = _seeds(image, gray, imgf, aspect, look)
        starts = [_start_from_card(c, pol, size, sc) for c, pol, sc in seeds]
    tried = stale = 0
    for start in starts:
        if best is not None and any(
                np.linalg.norm(start.cards[0].centre - c.centre) < 10.0 for c in best.cards):
            continue        # this seed is one of the cards already found: same result
        outer, pol = _outermost(imgf, start.cards[0], start.pol, look, aspect,
                                MIN_LONG_PX / aspect, 0.5 * max(h_img, w_img))
        inner = start
        if outer is not start.cards[0]:
            if best is not None and any(
                    np.linalg.norm(outer.centre - c.centre) < 10.0 for c in best.cards):
                continue
            start = _start_from_card(outer, pol, size, start.score)
        g = _grow(imgf, start, size, aspect, look, K, focal_free)
        if start is not inner and len(g.cards) < 3:
            # the outline may span touching neighbours (a tight lattice of small cards),
            # and then nothing grows from it. Dev renders without a mat (seeds 596000 and
            # 597000, 80 images): 8 fits better, 6 of them from 8-27 mm off (median card)
            # to under 4, and 4 more tables exactly right
            g_in = _grow(imgf, inner, size, aspect, look, K, focal_free)
            if len(g_in.cards) > len(g.cards):
                g = g_in
        # a seed that grows into nothing (a hand's edge, a box) is cheap: count it half
        tried += 2 if len(g.cards) >= 2 else 1
        if g.cards and (best is None or (len(g.cards), -float(np.mean(g.per_card))) > (
                len(best.cards), -float(np.mean(best.per_card)))):
            best = g
            stale = 0
        elif best is not None and len(best.cards) >= 3:
            stale += 1
        if tried >= 2 * MAX_STARTS or stale >= 2 or (best is not None and len(best.cards) >= 8):
            break
    if best is not None and seeds:
        # cards at other angles (a free layout) are not in the search's view of the
        # seed's orientation; other seeds that sit on the same plane join the fit
        # nearest first, refitting after each: a fit from two cards only reaches so far
        model = _rect_model(size)
        rest = [c for c, _, _ in seeds]
        while rest:
            ctr = np.mean([c.centre for c in best.cards], axis=0)
            rest.sort(key=lambda c: float(np.linalg.norm(c.centre - ctr)))
            c = rest.pop(0)
            short = math.sqrt(abs(cv2.contourArea(c.quad.astype(np.float32))) / aspect)
            if any(np.linalg.norm(c.centre - o.centre) < 0.4 * short for o in best.cards):
                continue
            agreed = _agree(c, best.H, model, 1.5)
            if agreed is None:
                continue
            cards, H, poses, per = _fit_all(best.cards + [agreed], model, best.H, K,
                                            focal_free)
            if len(cards) > len(best.cards):
                best = _Grown(cards, H, poses, per)
    if best is not None and not focal_free:
        best = _lone_card_on_its_sides(best, _rect_model(size), K)
    if best is None:
        return CardFit(Calibration(False, reason="no card found in the image (a card must be "
                                   f"at least {MIN_LONG_PX:.0f} px long and show its edges)",
                                   intrinsics=intrinsics, image_size=image_size))
    model = _rect_model(size)
    quads = [c.quad for c in best.cards]
    seen, seen_model = quads, model
    if len(best.cards) >= 2:
        border = _border_factor(imgf, best.H, best.poses, model)
        if border > 1.0:
            # the fit ran on the frame lines: the table is that much smaller than it made it
            # (the same fit with the card size divided by the factor), and the cards are the
            # outlines around the frames
            log.debug("the fit ran %.1f%% inside the cards' edges (frame lines): corrected",
                      100.0 * (1.0 - 1.0 / border))
            S = np.diag([1.0 / border, 1.0 / border, 1.0])
            poses = [(x / border, y / border, th) for x, y, th in best.poses]
            best = _Grown(best.cards, S @ best.H, poses, best.per_card)
            quads = [clockwise_from_top_left(q) for q in _predicted(best.H, poses, model)]
            seen_model = model / border
    T = _frame(best.H, best.poses, quads)
    H = T @ best.H
    H /= H[2, 2]
    # the misfit in mm: each card's corners through H against its fitted rectangle
    errs = []
    centers = []
    axes = []
    for q, q_seen in zip(quads, seen):
        p = _persp(H, q)
        R, t = _rigid(model, p)
        # (the error on the sides seen: those of the frame lines where the fit was scaled)
        p_seen, R_seen, t_seen = p, R, t
        if q_seen is not q:
            p_seen = _persp(H, q_seen)
            R_seen, t_seen = _rigid(seen_model, p_seen)
        errs.append(float(np.sum((seen_model @ R_seen.T + t_seen - p_seen) ** 2)))
        centers.append((float(t[0]), float(t[1])))
        axes.append(float(math.degrees(math.atan2(R[1, 1], R[0, 1])) % 180.0))
    rms_mm = math.sqrt(sum(errs) / (4 * len(errs)))
    notes = []
    kept = followed = False
    n = len(quads)
    if n == 1:
        notes.append("only one card found: positions far from it are unreliable")
    elif n == 2:
        notes.append("only two cards found: positions far from them are less accurate")
    if previous is not None and previous.calibrated and previous.H is not None and (
            previous.image_size in (None, image_size)):
        pts = np.vstack(quads)
        a = _persp(H, pts)
        b = _persp(np.asarray(previous.H, np.float64), pts)
        R, t = _rigid(a, b)
        off = float(np.max(np.linalg.norm(a @ R.T + t - b, axis=1)))
        kept = off <= KEEP_FRAME_MM
        moved = [R @ np.array(c) + t for c in centers]
        followed = not kept and off <= follow_mm and all(
            abs(float(v)) <= follow_within_mm for c in moved for v in c)
        if kept or followed:
            T2 = np.eye(3)
            T2[:2, :2], T2[:2, 2] = R, t
            H = T2 @ H
            H /= H[2, 2]
            centers = [(float(c[0]), float(c[1])) for c in moved]
            turn = math.degrees(math.atan2(R[1, 0], R[0, 0]))
            axes = [float((x + turn) % 180.0) for x in axes]
        if followed:
            notes.append(f"the cards are {off:.0f} mm from where the previous calibration put "
                         "them (a fit from other cards): kept in its table frame")
        elif not kept:
            notes.append(f"the cards are {off:.0f} mm from where the previous calibration put "
                         "them (camera or cards moved): the table frame starts afresh")
    cal = Calibration(True, H, (), (), rms_mm, "; ".join(notes), intrinsics, image_size)
    return CardFit(cal, tuple(quads), tuple(centers), tuple(axes),
                   float(np.sqrt(np.mean(best.per_card ** 2))), kept, followed)


def calibrate_from_cards(image_bgr: np.ndarray, card_size_mm: tuple[float, float], *,
                         intrinsics: Intrinsics | None = None,
                         previous: Calibration | None = None) -> Calibration:
    """Pixels to table mm from the cards in the image, without a mat (see the module doc).

    ``card_size_mm`` is the deck's (width, height); ``intrinsics`` removes lens distortion
    first (H then maps undistorted pixels, as with the mat); ``previous`` keeps the table
    frame of an earlier calibration when the cards still sit where it put them. Returns a
    :class:`~calibration.table.Calibration` with ``calibrated`` False and the ``reason`` when
    no card is found."""
    return fit_cards(image_bgr, card_size_mm, intrinsics=intrinsics,
                     previous=previous).calibration


class CardCalibrator:
    """Frame after frame of one camera, calibrated from the cards: the live counterpart of
    :class:`calibration.table.TableCalibrator` for a table with no mat.

    The table frame is the card frame (see the module doc) moved so that its origin, the
    centre card, sits in the middle of ``mat`` (a :func:`~calibration.mat.virtual_mat`), so
    the cards lie inside the play area the detectors look at. Each frame starts from the
    previous calibration and keeps its frame while the cards agree with it. When a frame
    shows fewer cards than the one before (a hand over them) and agrees with it, or shows
    none (the camera is assumed not to have moved), the earlier calibration, made from more
    cards, is kept and the record's note says so.

    A fit takes seconds on two cores, and a fixed camera does not need a new one every
    frame: while the frame lines up with the last fitted one (phase correlation of small
    grey thumbnails: a shift under :data:`STILL_PX` and a clear peak), and that fit used at
    least :data:`ENOUGH_CARDS` cards, its calibration is reused at once.
    """

    def __init__(self, card_size_mm: tuple[float, float], intrinsics: Intrinsics | None = None,
                 mat: Mat | None = None) -> None:
        self.card_size_mm = (float(card_size_mm[0]), float(card_size_mm[1]))
        self.intrinsics = intrinsics
        self.mat = mat if mat is not None else virtual_mat()
        shift = np.eye(3)
        shift[0, 2], shift[1, 2] = self.mat.width_mm / 2.0, self.mat.height_mm / 2.0
        self._shift = shift
        #: a frame kept from the last fit must leave every card this far inside the play
        #: area, or it starts afresh (half the area, less a card's length)
        self._reach_mm = min(self.mat.width_mm, self.mat.height_mm) / 2.0 - max(
            self.card_size_mm)
        self._raw: Calibration | None = None   # the last good fit, in the card frame
        self._cards = 0                        # how many cards it used
        self._thumb: np.ndarray | None = None  # the frame it was fitted on, small and grey
        #: frames that reused the last fit without fitting again (for tests and benchmarks)
        self.reused = 0

    @staticmethod
    def _thumbnail(image: np.ndarray) -> np.ndarray:
        g = _gray(image)
        scale = THUMB_WIDTH / g.shape[1]
        small = cv2.resize(g, (THUMB_WIDTH, max(8, int(round(g.shape[0] * scale)))),
                           interpolation=cv2.INTER_AREA)
        out: np.ndarray = small.astype(np.float32)
        return out

    def _camera_still(self, thumb: np.ndarray) -> bool:
        if self._thumb is None or self._thumb.shape != thumb.shape:
            return False
        win = cv2.createHanningWindow(thumb.shape[::-1], cv2.CV_32F)
        (dx, dy), response = cv2.phaseCorrelate(self._thumb, thumb, win)
        return bool(math.hypot(dx, dy) < STILL_PX and response > STILL_RESPONSE)

    def _framed(self, raw: Calibration, note: str = "") -> Calibration:
        assert raw.H is not None
        H = self._shift @ raw.H
        reason = "; ".join(x for x in ("calibrated from the cards (no mat)", raw.reason, note)
                           if x)
        return Calibration(True, H / H[2, 2], (), (), raw.reprojection_mm, reason,
                           raw.intrinsics, raw.image_size)

    def calibrate(self, image: np.ndarray) -> Calibration:
        h, w = image.shape[:2]
        prev = self._raw if self._raw is not None and self._raw.image_size == (w, h) else None
        thumb = self._thumbnail(image)
        if prev is not None and self._cards >= ENOUGH_CARDS and self._camera_still(thumb):
            self.reused += 1
            return self._framed(prev, f"the camera has not moved: the fit from {self._cards} "
                                      "cards is kept")
        fit = fit_cards(image, self.card_size_mm, intrinsics=self.intrinsics, previous=prev,
                        follow_mm=FOLLOW_FRAME_MM, follow_within_mm=self._reach_mm)
        cal = fit.calibration
        n = len(fit.quads_px)
        if not cal.calibrated or cal.H is None:
            if prev is not None:
                return self._framed(prev, f"no card seen in this frame ({cal.reason}): the "
                                          f"last calibration ({self._cards} cards) is kept")
            return replace(cal, reason="no mat: " + cal.reason)
        if fit.kept_frame and n < self._cards and prev is not None:
            return self._framed(prev, f"{n} cards seen here: the calibration from "
                                      f"{self._cards} cards is kept")
        self._raw, self._cards, self._thumb = cal, n, thumb
        return self._framed(cal, f"{n} cards used")
