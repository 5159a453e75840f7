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
    label = model.labels(idx)[idx]
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
        lut = np.zeros(256, np.uint8)
        lut[list(group)] = 1
        out.extend(_propose_group(seg, cv2.LUT(seg.label, lut), MAX_AREA_BY_GROUP[gi],
                                  PEAK_LIMIT_MM2[gi], parts=gi == 0,
                                  min_area=MIN_AREA_BY_GROUP[gi]))
    return _merge(out)


def _propose_group(seg: Segmentation, fg: np.ndarray, max_area: float, peak_limit: float,
                   parts: bool, min_area: float = MIN_AREA_MM2) -> list[Candidate]:
    ppm = seg.ppm
    ppm2 = ppm * ppm
    label = seg.label
    k3 = np.ones((3, 3), np.uint8)
    # closing joins a translucent pyramid's pixels split by the ridges and back faces
    # drawn inside it; the area limit below drops single-pixel speckle
    fg = cv2.morphologyEx(fg, cv2.MORPH_CLOSE, k3)
    n, comp, stats, cents = cv2.connectedComponentsWithStats(fg, connectivity=8)
    out: list[Candidate] = []
    areas = stats[:, cv2.CC_STAT_AREA] / ppm2
    # most components are speckle on card art: only pyramid-sized ones are looked at
    for i in np.flatnonzero((areas >= min_area) & (areas <= max_area)):
        if i == 0:
            continue
        x, y, w, h, area = (int(v) for v in stats[i])
        a_mm = area / ppm2
        sub = comp[y:y + h, x:x + w] == i
        labs = label[y:y + h, x:x + w][sub]
        counts = np.bincount(labs, minlength=BACKGROUND + 1)[:BACKGROUND]
        main = int(np.argmax(counts))
        cx, cy = cents[i]
        out.append(Candidate(((cx + 0.5) / ppm, (cy + 0.5) / ppm), main, a_mm, "blob"))
        # each colour strong enough to be a pyramid of its own
        strong = [c for c in np.flatnonzero(counts)
                  if parts and counts[c] / ppm2 >= MIN_AREA_MM2 and counts[c] < 0.9 * area]
        for c in strong:
            m = (sub & (label[y:y + h, x:x + w] == c)).astype(np.uint8)
            m = cv2.morphologyEx(m, cv2.MORPH_CLOSE, k3)
            nn, _, st, cc = cv2.connectedComponentsWithStats(m, connectivity=8)
            for j in range(1, nn):
                if st[j, 4] / ppm2 >= MIN_AREA_MM2:
                    out.append(Candidate(((x + cc[j][0] + 0.5) / ppm, (y + cc[j][1] + 0.5) / ppm),
                                         int(c), st[j, 4] / ppm2, "part"))
        if PEAKS_FROM_MM2 <= a_mm <= peak_limit:
            out.extend(_peaks(sub, (x, y), ppm, label[y:y + h, x:x + w], a_mm))
    return out


def _peaks(sub: np.ndarray, origin: tuple[int, int], ppm: float, lab: np.ndarray,
           a_mm: float) -> list[Candidate]:
    """Local maxima of the distance to the blob's edge at least a small pyramid's half
    width deep: the middles of the pyramids a merged blob holds."""
    m = np.pad(sub.astype(np.uint8), 1)
    dist = cv2.distanceTransform(m, cv2.DIST_L2, 3)
    r = max(1, int(round(6.0 * ppm)))
    dil = cv2.dilate(dist, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1, 2 * r + 1)))
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


def _merge(cands: list[Candidate]) -> list[Candidate]:
    order = {"part": 0, "blob": 1, "peak": 2}
    cands = sorted(cands, key=lambda c: order[c.source])
    if not cands:
        return []
    pts = np.array([c.center_mm for c in cands], np.float64)
    kept = np.empty((len(cands), 2))
    keep: list[Candidate] = []
    for c, p in zip(cands, pts):
        n = len(keep)
        if n == 0 or np.min(np.sum((kept[:n] - p) ** 2, axis=1)) > MERGE_MM ** 2:
            kept[n] = p
            keep.append(c)
    return keep
