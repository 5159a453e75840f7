"""Candidate places for pyramids: where the colour table sees plastic in the top-down view.

This stage is tuned for recall, not precision: every blob of pyramid-coloured pixels the
size of a pyramid (or of a few touching ones) yields candidates, and the classifier
(:mod:`vision.pyramids.classifier`) decides what each one is. A candidate is a point in
table mm near the middle of a pyramid's silhouette:

* the centroid of each blob, and of each colour's part of a blob that holds several
  colours (touching pyramids of different colours);
* for a blob larger than one pyramid, the peaks of its distance transform (touching
  pyramids of one colour, a pyramid beside a same-coloured patch of card art).

White, clear and black plastic are weak in colour alone (card borders, paper, ink): their
blobs come from the same table but the classifier, which sees shading and outline, does the
separating.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass

import cv2
import numpy as np

from calibration.mat import Mat
from vision.pyramids.colors import BACKGROUND, ColorModel, bin_index

log = logging.getLogger(__name__)

#: blob area limits, mm^2: the smallest upright pyramid seen from above covers ~200 mm^2
#: (a 14.3 mm square), a lying large one ~1000 mm^2 with parallax; half of the smallest
#: still counts (a translucent pyramid's pixels split by ridges and what shows through)
MIN_AREA_MM2 = 60.0
#: larger than a few touching pyramids: table cloth or card art, not searched
MAX_AREA_MM2 = 9000.0
#: candidates closer than this are one
MERGE_MM = 5.0
#: paper margin around each marker left out of the search (mm)
MARKER_PAPER_MM = 12.0


@dataclass(frozen=True)
class Candidate:
    center_mm: tuple[float, float]
    color: int               # colour index the table favours (a hint; BACKGROUND: none)
    area_mm2: float          # area of the blob it came from
    source: str              # "blob", "part", "peak", or "heat" (the heat map alone)


@dataclass
class Segmentation:
    """The colour table's reading of one top-down view."""

    label: np.ndarray        # (h, w) uint8 class per pixel
    ppm: float


def segment(view: np.ndarray, model: ColorModel, mat: Mat, ppm: float) -> Segmentation:
    idx = bin_index(view)
    label = np.take(model.labels(idx), idx)
    # the ArUco markers' black cells are perfect "black pyramid" blobs and their paper
    # margins white ones; a pyramid on a marker would hide it (no calibration), so the
    # markers and their paper are never searched
    half = (mat.marker_size_mm / 2 + MARKER_PAPER_MM) * ppm
    for mx, my in mat.marker_centers().values():
        u, v = mx * ppm, my * ppm
        label[max(0, int(v - half)):max(0, int(v + half)),
              max(0, int(u - half)):max(0, int(u + half))] = BACKGROUND
    return Segmentation(label, ppm)


#: colour groups whose blobs are found separately: a white pyramid on a yellow card is not
#: one blob with the card's yellow, and white/clear, favoured by the table, would otherwise
#: join every hue's blob that touches a card border
GROUPS: tuple[tuple[int, ...], ...] = (tuple(range(8)), (8, 9))
#: blobs at least this large (mm^2) also get distance peaks (two touching small pyramids)
PEAKS_FROM_MM2 = 380.0
#: and at most this large, per group: large white/clear blobs are card paper and borders
#: (peaks of white/clear blobs over 800 mm^2 were 591 of 5144 candidates on 60 training-seed
#: scenes, 3 of them on a pyramid the classifier took, none that a blob candidate missed)
PEAK_LIMIT_MM2 = (MAX_AREA_MM2, 800.0)
MAX_AREA_BY_GROUP = (MAX_AREA_MM2, 2500.0)
#: smallest blob per group: white/clear specks under 100 mm^2 are paper and highlights
#: (558 candidates on those scenes, 2 on a pyramid the classifier took, none of them lost).
#: Together the two limits cut the candidates by a quarter and the pyramid stage by 7-30 ms
#: a frame (crowded tables gain most); on bench/pyramids.py's held-out renders white recall
#: went from 30% to 26% and false finds from 92 to 83: kept for the speed and precision
MIN_AREA_BY_GROUP = (MIN_AREA_MM2, 100.0)


def propose(seg: Segmentation) -> list[Candidate]:
    out: list[Candidate] = []
    for gi, group in enumerate(GROUPS):
        out.extend(_propose_group(seg, group_mask(seg.label, group), MAX_AREA_BY_GROUP[gi],
                                  PEAK_LIMIT_MM2[gi], parts=gi == 0,
                                  min_area=MIN_AREA_BY_GROUP[gi]))
    return _merge(out)


def group_mask(label: np.ndarray, group: tuple[int, ...]) -> np.ndarray:
    """(h, w) uint8, nonzero where ``label`` (uint8) is one of ``group``'s classes."""
    lo, hi = min(group), max(group)
    if len(set(group)) == hi - lo + 1:
        # a run of classes (both groups): one comparison, a quarter of a look-up table's
        # time over the whole view (25 against 95 us)
        out: np.ndarray = cv2.inRange(label, lo, hi)
        return out
    lut = np.zeros(256, np.uint8)
    lut[list(group)] = 1
    out = cv2.LUT(label, lut)
    return out


def _propose_group(seg: Segmentation, fg: np.ndarray, max_area: float, peak_limit: float,
                   parts: bool, min_area: float = MIN_AREA_MM2) -> list[Candidate]:
    ppm = seg.ppm
    ppm2 = ppm * ppm
    label = seg.label
    k3 = np.ones((3, 3), np.uint8)
    # closing joins a translucent pyramid's pixels split by the ridges and back faces
    # drawn inside it; the area limit below drops single-pixel speckle
    fg = cv2.morphologyEx(fg, cv2.MORPH_CLOSE, k3)
    blobs = _blobs(fg, min_area * ppm2, max_area * ppm2)
    if blobs is None:
        return []
    xs, ys, starts, area, x0, y0, x1, y1, cx, cy = blobs
    # each blob's pixels by colour class, all blobs at once
    which = np.repeat(np.arange(len(starts)), area)
    counts = np.bincount(which * (BACKGROUND + 1) + label[ys, xs],
                         minlength=len(starts) * (BACKGROUND + 1)
                         ).reshape(len(starts), BACKGROUND + 1)[:, :BACKGROUND]
    mains = np.argmax(counts, axis=1)
    a_mm = area / ppm2
    # each blob's candidate; then, in the loop, only the blobs that hold a colour strong
    # enough to be a pyramid of its own or are large enough for distance peaks (on a table
    # of card art most blobs are neither: a Python pass over each cost more than the rest)
    out: list[Candidate] = [
        Candidate(((x + 0.5) / ppm, (y + 0.5) / ppm), m, a, "blob")
        for x, y, m, a in zip(cx, cy, mains.tolist(), a_mm.tolist())]
    strong_of = ((counts / ppm2 >= MIN_AREA_MM2) & (counts < 0.9 * area[:, None])) if parts \
        else np.zeros(counts.shape, bool)
    with_peaks = (PEAKS_FROM_MM2 <= a_mm) & (a_mm <= peak_limit)
    for k in np.flatnonzero(strong_of.any(axis=1) | with_peaks):
        strong = np.flatnonzero(strong_of[k])
        peaks = bool(with_peaks[k])
        x, y = int(x0[k]), int(y0[k])
        h, w = int(y1[k]) - y + 1, int(x1[k]) - x + 1
        sub = np.zeros((h, w), bool)
        s, e = starts[k], starts[k] + area[k]
        sub[ys[s:e] - y, xs[s:e] - x] = True
        lab = label[y:y + h, x:x + w]
        for c in strong:
            m = (sub & (lab == c)).astype(np.uint8)
            m = cv2.morphologyEx(m, cv2.MORPH_CLOSE, k3)
            nn, _, st, cc = cv2.connectedComponentsWithStats(m, connectivity=8)
            for j in range(1, nn):
                if st[j, 4] / ppm2 >= MIN_AREA_MM2:
                    out.append(Candidate(((x + cc[j][0] + 0.5) / ppm, (y + cc[j][1] + 0.5) / ppm),
                                         int(c), st[j, 4] / ppm2, "part"))
        if peaks:
            out.extend(_peaks(sub, (x, y), ppm, lab, float(a_mm[k])))
    return out


def _blobs(fg: np.ndarray, min_px: float, max_px: float) -> tuple[np.ndarray, ...] | None:
    """The 8-connected blobs of ``fg`` of ``min_px``-``max_px`` pixels, in label order:
    (xs, ys) of their pixels blob after blob, and per blob the index of its first pixel,
    its area, bounding box (x0, y0, x1, y1 inclusive) and centroid (cx, cy); None when
    there are none. What ``cv2.connectedComponentsWithStats`` gives, from the pixels that
    are set alone: its statistics pass over every pixel of the view costs ten times the
    labelling on a view that is mostly empty."""
    n, comp = cv2.connectedComponents(fg, connectivity=8)
    pts = cv2.findNonZero(fg)
    if pts is None:
        return None
    pts = pts.reshape(-1, 2)
    lab = comp[pts[:, 1], pts[:, 0]]
    px = np.bincount(lab, minlength=n)
    wanted = (px >= min_px) & (px <= max_px)
    wanted[0] = False
    sel = wanted[lab]
    if not sel.any():
        return None
    pts, lab = pts[sel], lab[sel]
    order = np.argsort(lab, kind="stable")
    xs, ys, lab = pts[order, 0], pts[order, 1], lab[order]
    starts = np.flatnonzero(np.r_[True, lab[1:] != lab[:-1]])
    area = np.diff(np.r_[starts, len(lab)])
    # sums of whole numbers are exact in float64: the same centroids as OpenCV's
    cx = np.add.reduceat(xs.astype(np.float64), starts) / area
    cy = np.add.reduceat(ys.astype(np.float64), starts) / area
    return (xs, ys, starts, area, np.minimum.reduceat(xs, starts),
            np.minimum.reduceat(ys, starts), np.maximum.reduceat(xs, starts),
            np.maximum.reduceat(ys, starts), cx, cy)


def _peaks(sub: np.ndarray, origin: tuple[int, int], ppm: float, lab: np.ndarray,
           a_mm: float) -> list[Candidate]:
    """Local maxima of the distance to the blob's edge at least a small pyramid's half
    width deep: the middles of the pyramids a merged blob holds."""
    m = np.zeros((sub.shape[0] + 2, sub.shape[1] + 2), np.uint8)
    m[1:-1, 1:-1] = sub
    dist = cv2.distanceTransform(m, cv2.DIST_L2, 3)
    dil = cv2.dilate(dist, _disc(max(1, int(round(6.0 * ppm)))))
    pk = ((dist >= dil - 1e-6) & (dist >= 4.0 * ppm)).astype(np.uint8)
    # a plateau of the distance (a ridge of equal width) is one peak: its middle
    n, _, _, cents = cv2.connectedComponentsWithStats(pk, connectivity=8)
    out = []
    for xx, yy in cents[1:]:
        xi, yi = int(round(xx)), int(round(yy))
        c = int(lab[min(lab.shape[0] - 1, max(0, yi - 1)), min(lab.shape[1] - 1, max(0, xi - 1))])
        out.append(Candidate(((origin[0] + xx - 1 + 0.5) / ppm, (origin[1] + yy - 1 + 0.5) / ppm),
                             c, a_mm, "peak"))
    return out


@functools.lru_cache(maxsize=4)
def _disc(r: int) -> np.ndarray:
    disc: np.ndarray = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1, 2 * r + 1))
    return disc


def _merge(cands: list[Candidate]) -> list[Candidate]:
    """In the order parts, blobs, peaks: a candidate stays unless it lies within MERGE_MM
    of one that stayed."""
    order = {"part": 0, "blob": 1, "peak": 2}
    cands = sorted(cands, key=lambda c: order[c.source])
    if not cands:
        return []
    pts = np.array([c.center_mm for c in cands], np.float64)
    near = np.sum((pts[:, None] - pts[None]) ** 2, axis=2) <= MERGE_MM ** 2
    taken = np.zeros(len(cands), bool)
    keep: list[Candidate] = []
    for i, c in enumerate(cands):
        if not taken[i]:
            keep.append(c)
            taken |= near[i]
    return keep
