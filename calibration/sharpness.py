"""How sharp is the frame? Measured on the mat's markers, whose edges are known steps.

Whatever lies on the table, each marker the calibration read has four straight edges from
its black border to the white paper round it: a step from dark to light. Blur spreads that
step. Across each edge, at points along its middle, this module reads the grey profile and
takes its steepest slope against the step's height; for a step blurred by a Gaussian of
sigma s the steepest slope is height / (s sqrt(2 pi)), so that ratio gives s in image pixels.
A shaken camera spreads the edges across its motion far more than those along it, so a
frame's figure is a high percentile over its edges, not their middle.

On dev renders of the benchmark's groups (seed 550000, 182 frames) the sharp frames read
0.4-1.09 px and the shaken ones (3-14 px) 1.33 px and more; 14 of 18 defocused ones (sigma
0.8-2.2 px) read over :data:`BLURRED_EDGE_PX`, the other four had a defocus of 0.83-1.27
px (``docs/calibration.md``). On crowded blurred tables the pyramid finder misses about six
times as many pyramids as on sharp ones (``bench/RESULTS.md``), so the record says so
(:meth:`vision.pipeline.TablePipeline.observe`: ``calibration.edge_blur_px`` and
``blurred``) and a player can steady or focus the camera. The pipeline reads it before it
sends the frame to the pyramid finder, on the calibration it hands on
(:attr:`calibration.table.Calibration.blurred`): the finder reads a blurred frame its own
way (:data:`vision.pyramids.find.BLURRED_VERIFY_MIN`). The profiles stay within the
marker's border, so a long shake reads a few pixels, not its length: the figure says that a
frame is blurred, not by how much.

Pure numpy and OpenCV: a few thousand bilinear samples a frame, about half a millisecond
(``bench/vision.py``, stage ``sharpness``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import cv2
import numpy as np

if TYPE_CHECKING:
    from calibration.mat import Mat
    from calibration.table import Calibration

#: a frame whose marker edges read wider than this (px, Gaussian sigma) is called blurred
BLURRED_EDGE_PX = 1.2
#: the most pixels a table millimetre took (the markers' side over their size) in the frames
#: BLURRED_EDGE_PX was set on (1080p renders of the benchmark's groups: 0.49-1.52, median
#: 0.77). A frame that draws the table larger (a 12 MP photo: 2-3) spreads the same defocus
#: over more pixels: its limit grows in proportion (:func:`blurred_over_px`), so that a photo
#: is not called blurred for its resolution
BLURRED_REF_PX_PER_MM = 1.52
#: the share of edges under the frame's figure: a shake spreads about half of them
EDGE_PERCENTILE = 90.0
#: where along each edge the profiles are read (fractions of its length; the corners and the
#: border's inner pattern are left out)
ALONG = np.linspace(0.2, 0.8, 9)
#: profile half-length as a share of the border's width in px, and its bounds (px); samples
#: a profile (about half a pixel apart at the widest)
HALF_OF_BORDER, HALF_MIN_PX, HALF_MAX_PX, SAMPLES = 0.8, 3.0, 10.0, 41
#: a profile whose step is lower than this (grey levels) is not an edge (a card or hand on it)
MIN_STEP = 40.0
#: an edge counts when at least this many of its profiles do; the median of theirs is its figure
MIN_PROFILES = 3
#: an ArUco marker's side is this many of its border's widths (4x4 data cells and the border)
BORDER_PARTS = 6


def _seen_marker_px(calib: Calibration, mat: Mat) -> np.ndarray:
    """The corners (markers, 4, 2) in image px (no lens) of the markers ``calib`` saw, those
    that map to finite pixels; empty (0, 4, 2) where there are none."""
    none = np.zeros((0, 4, 2))
    if calib.H is None or not calib.markers_seen:
        return none
    corners_mm = mat.marker_corners()
    seen = [m for m in calib.markers_seen if m in corners_mm]
    if not seen:
        return none
    # all the seen markers' corners at once (one transform, no loop: this runs before the
    # pyramid job is sent, so every frame waits for it)
    c = calib.to_image(np.concatenate([np.asarray(corners_mm[m], np.float64)
                                       for m in seen])).reshape(-1, 4, 2)
    out: np.ndarray = c[np.isfinite(c).all(axis=(1, 2))]
    return out


def edge_sigmas(image: np.ndarray, calib: Calibration, mat: Mat) -> list[float]:
    """The blur (Gaussian sigma, px) of each readable edge of the markers ``calib`` saw in
    ``image`` (gray or BGR, as calibrated: lens distortion included)."""
    c = _seen_marker_px(calib, mat)
    if not len(c):
        return []
    a, b = c, np.roll(c, -1, axis=1)                     # each edge, corner k to k + 1
    vec = b - a
    lengths = np.linalg.norm(vec, axis=2)                # (markers, 4)
    side = lengths.mean(axis=1)
    half = np.clip(HALF_OF_BORDER * side / BORDER_PARTS, HALF_MIN_PX, HALF_MAX_PX)
    d = vec / np.maximum(lengths, 1e-9)[..., None]
    n = np.stack([-d[..., 1], d[..., 0]], axis=2)
    # outward: from the black border to the paper
    out = np.einsum("mkj,mkj->mk", (a + b) / 2 - c.mean(axis=1, keepdims=True), n)
    n = np.where((out < 0)[..., None], -n, n)
    keep = lengths >= 4
    if not keep.any():
        return []
    # every edge gets as many samples, so they can be read in one go
    u = np.linspace(-1.0, 1.0, SAMPLES)[None, :] * half[:, None]          # (markers, S)
    u = np.broadcast_to(u[:, None, :], lengths.shape + (SAMPLES,))[keep]   # (edges, S)
    a, vec, n = a[keep], vec[keep], n[keep]
    pts = a[:, None, :] + ALONG[None, :, None] * vec[:, None, :]           # (edges, along, 2)
    g = pts[:, :, None, :] + u[:, None, :, None] * n[:, None, None, :]
    spacings = u[:, 1] - u[:, 0]
    edges = len(g)
    if calib.intrinsics is not None and calib.intrinsics.distorts:
        g = calib.intrinsics.distort_points(g.reshape(-1, 2)).reshape(g.shape)
    flat = g.reshape(-1, SAMPLES, 2).astype(np.float32)
    # (the whole image is sampled as it is: a channel taken out of it would be copied)
    prof = cv2.remap(image, flat[..., 0], flat[..., 1], cv2.INTER_LINEAR,
                     borderMode=cv2.BORDER_CONSTANT, borderValue=0).astype(np.float32)
    if prof.ndim == 3:
        prof = prof[..., 1]      # green: the channel with the most detail
    ordered = np.sort(prof, axis=1)
    step = _row_percentile(ordered, 95.0) - _row_percentile(ordered, 5.0)
    slope = np.abs(np.diff(prof, axis=1)).max(axis=1) / np.repeat(spacings, len(ALONG))
    # a profile that leaves the frame would read a false step at its side
    h, w = image.shape[:2]
    inside = ((flat[..., 0] >= 0) & (flat[..., 0] <= w - 1) & (flat[..., 1] >= 0)
              & (flat[..., 1] <= h - 1)).all(axis=1)
    ok = (step > MIN_STEP) & (slope > 0) & inside
    sigma = np.where(ok, step / np.maximum(slope, 1e-6) / math.sqrt(2 * math.pi), np.nan)
    sigma = sigma.reshape(edges, len(ALONG))
    ok = ok.reshape(sigma.shape)
    counts = ok.sum(axis=1)
    kept = counts >= MIN_PROFILES
    if not kept.any():
        return []
    # each kept edge's median over its readable profiles (nan sorts last)
    ordered, k = np.sort(sigma[kept], axis=1), counts[kept]
    rows = np.arange(len(k))
    return [float(v) for v in 0.5 * (ordered[rows, (k - 1) // 2] + ordered[rows, k // 2])]


def _row_percentile(ordered: np.ndarray, q: float) -> np.ndarray:
    """``np.percentile(x, q, axis=1)`` of rows already sorted (linear, as numpy's default),
    without its overhead: this runs on every frame before the pyramid job is sent."""
    pos = q / 100.0 * (ordered.shape[1] - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, ordered.shape[1] - 1)
    frac = pos - lo
    out: np.ndarray = ordered[:, lo] * (1.0 - frac) + ordered[:, hi] * frac
    return out


def edge_blur_px(image: np.ndarray, calib: Calibration, mat: Mat) -> float | None:
    """The frame's blur in px (:data:`EDGE_PERCENTILE` of :func:`edge_sigmas`), None where no
    marker edge could be read."""
    sigmas = edge_sigmas(image, calib, mat)
    return float(np.percentile(sigmas, EDGE_PERCENTILE)) if sigmas else None


def markers_px_per_mm(calib: Calibration, mat: Mat) -> float | None:
    """How many pixels a millimetre the markers seen take (the median marker's mean side
    over its size): how closely the camera sees the table. None where none is seen."""
    c = _seen_marker_px(calib, mat)
    if not len(c):
        return None
    sides = np.linalg.norm(c - np.roll(c, -1, axis=1), axis=2).mean(axis=1)
    return float(np.median(sides)) / float(mat.marker_size_mm)


def blurred_over_px(calib: Calibration, mat: Mat) -> float:
    """The edge spread (px) over which ``calib``'s frame is blurred
    (:func:`blur_limit_px` of :func:`markers_px_per_mm`)."""
    return blur_limit_px(markers_px_per_mm(calib, mat))


def blur_limit_px(per_mm: float | None) -> float:
    """The edge spread (px) over which a frame whose markers take ``per_mm`` pixels a
    millimetre is blurred: :data:`BLURRED_EDGE_PX`, scaled up past
    :data:`BLURRED_REF_PX_PER_MM` (as it is where no marker is measured, None)."""
    if per_mm is None:
        return BLURRED_EDGE_PX
    return BLURRED_EDGE_PX * max(1.0, per_mm / BLURRED_REF_PX_PER_MM)


#: Under this many pixels a millimetre (a record's ``calibration.px_per_mm``) the pyramids
#: are read markedly worse, and a player is told so: the pyramid finder's views are made at
#: 0.75 px/mm (vision.pyramids.find.VIEW_PPM) and upsampled from less. A 1080p camera
#: framing the standard mat sees it at about 0.7; the same cameras at 720p at about 0.47,
#: where held-out-style dev renders (seeds 551000 and 552000, 140 images a group) read 60%
#: and 15-22% of the tables exactly (ordinary / hard) against 80% and 36-39% at 1080p, the
#: white, clear and one-pip pyramids missed most. At the same density the two
#: resolutions read alike, so it is the pixels a millimetre, not the frame's size.
LOW_PX_PER_MM = 0.5


def coarse_picture(record: Mapping[str, Any]) -> str | None:
    """How a record whose camera sees the table at under :data:`LOW_PX_PER_MM` says so
    to a player; None otherwise (or where not measured)."""
    per_mm = (record.get("calibration") or {}).get("px_per_mm")
    if not isinstance(per_mm, (int, float)) or isinstance(per_mm, bool) \
            or per_mm >= LOW_PX_PER_MM:
        return None
    return (f"the camera sees the table at {per_mm:.2f} px a mm (the mat's markers), under "
            f"the {LOW_PX_PER_MM} at which pyramids are read well (about 0.7 from a 1080p "
            "camera framing the mat): bring the camera closer or raise its resolution")


def blurred_picture(record: Mapping[str, Any]) -> str | None:
    """How a record that calls its frame blurred says so to a player ("the picture is blurred
    (the mat's marker edges spread over 1.9 px)"); None when it does not (sharp, or no word).
    The live window, its session and ``companion observe`` each add what follows from it."""
    if record.get("blurred") is not True:
        return None
    spread = (record.get("calibration") or {}).get("edge_blur_px")
    how = (f" (the mat's marker edges spread over {spread:g} px)"
           if isinstance(spread, (int, float)) else "")
    return f"the picture is blurred{how}"

