"""Classical pyramid finder: colour look-up segmentation in the rectified view, then
analysis-by-synthesis of each blob against every (size, pose, direction) hypothesis.

1. Rectify the table plane at ``px_per_mm`` (undistorted, top-down; calibration.table).
2. Classify every pixel with the learned Lab table (:mod:`vision.pyramids.colors`): the most
   probable class per pixel; pixels whose class is a pyramid colour form blobs. A blob that
   holds two colours in strength is split by colour (two touching pyramids); otherwise it
   takes the colour with the largest summed posterior (a translucent pyramid's pixels can
   straddle two neighbouring hues).
3. For each blob, predict the silhouette of each hypothesis on the table plane (the solid's
   vertices pushed out from the nadir by parallax, :func:`geometry.footprint_mm`), slide
   it so its centroid meets the blob's, and score the overlap (IoU) with the filled blob.
   Upright vs lying and the apex end of a lying pyramid come from the shape: a lying
   pyramid's footprint is a triangle narrowing to the apex, an upright one a square with the
   apex leaning away from the nadir.
4. Keep blobs whose best IoU clears ``min_iou``; suppress duplicates closer than 10 mm.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np

from calibration.mat import Mat
from calibration.table import Calibration, rectify
from vision.pyramids.colors import (
    BACKGROUND,
    COLORS,
    ColorModel,
    bin_index,
    default_model,
)
from vision.pyramids.geometry import SIZES_MM, camera_center, footprint_mm

log = logging.getLogger(__name__)

#: smallest / largest blob (mm^2) worth a fit: a small upright pyramid seen from above covers
#: 204 mm^2; a large lying one about 1000 mm^2 with parallax. Fragments and card-art patches
#: outside this range are not pyramids (or are merged groups the prototype cannot split).
MIN_AREA_MM2 = 70.0
MAX_AREA_MM2 = 2200.0
#: stricter shape gate per colour: dark patches of card art (outlines, night skies) pass the
#: colour test as "black" far more often than any hue does (dev scenes, seed 4242)
MIN_IOU_BY_COLOR: dict[str, float] = {"black": 0.7}


@dataclass
class PyramidFind:
    color: str
    pips: int
    upright: bool
    pointing_deg: float | None
    base_center_mm: tuple[float, float]
    confidence: float
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"color": self.color, "pips": self.pips, "upright": self.upright,
                "pointing_deg": None if self.pointing_deg is None else round(self.pointing_deg, 1),
                "base_center_mm": [round(self.base_center_mm[0], 1),
                                   round(self.base_center_mm[1], 1)],
                "confidence": round(self.confidence, 3), **self.extra}


@dataclass
class _Blob:
    mask: np.ndarray          # filled, crop of the rectified view
    origin_px: tuple[int, int]
    color: int
    area_mm2: float
    color_share: float


class PyramidFinder:
    def __init__(self, mat: Mat, model: ColorModel | None = None, px_per_mm: float = 2.0,
                 min_iou: float = 0.55) -> None:
        self.mat = mat
        self.model = model or default_model()
        self.ppm = float(px_per_mm)
        self.min_iou = float(min_iou)

    # -- public -----------------------------------------------------------------------------

    def find(self, image: np.ndarray, calib: Calibration) -> list[PyramidFind]:
        if not calib.calibrated or calib.H is None:
            return []
        t0 = time.perf_counter()
        cam = camera_center(calib)
        rect = rectify(image, calib, self.ppm, mat=self.mat)
        idx = bin_index(rect)
        # per Lab bin for this image: the winning class and every class's score
        label_lut, post = self.model.tables(idx)
        label = label_lut[idx]
        # the ArUco markers' black cells are perfect "black pyramid" blobs; a pyramid on a
        # marker would hide it (no calibration), so their squares are never searched
        half = (self.mat.marker_size_mm / 2 + 4.0) * self.ppm
        for mx, my in self.mat.marker_centers().values():
            u, v = mx * self.ppm, my * self.ppm
            label[max(0, int(v - half)):max(0, int(v + half)),
                  max(0, int(u - half)):max(0, int(u + half))] = BACKGROUND
        blobs = self._blobs(label, idx, post)
        finds = [f for b in blobs if (f := self._fit(b, cam)) is not None]
        finds = _suppress(finds, 10.0)
        log.debug("%d blobs -> %d pyramids in %.0f ms", len(blobs), len(finds),
                  1000 * (time.perf_counter() - t0))
        return finds

    # -- segmentation -----------------------------------------------------------------------

    def _blobs(self, label: np.ndarray, idx: np.ndarray, post: np.ndarray) -> list[_Blob]:
        ppm2 = self.ppm ** 2
        fg = (label != BACKGROUND).astype(np.uint8)
        # a 3x3 opening drops speckle on card art; closing joins a translucent pyramid's
        # pixels split by the ridges and back faces drawn inside it
        k = np.ones((3, 3), np.uint8)
        fg = cv2.morphologyEx(fg, cv2.MORPH_OPEN, k)
        fg = cv2.morphologyEx(fg, cv2.MORPH_CLOSE, k)
        n, comp, stats, _ = cv2.connectedComponentsWithStats(fg, connectivity=8)
        out: list[_Blob] = []
        pad = math.ceil(6 * self.ppm)
        H, W = label.shape
        for i in range(1, n):
            x, y, w, h, area = (int(v) for v in stats[i])
            if area / ppm2 < MIN_AREA_MM2 or area / ppm2 > 3 * MAX_AREA_MM2:
                continue
            x0, y0 = max(0, x - pad), max(0, y - pad)
            x1, y1 = min(W, x + w + pad), min(H, y + h + pad)
            sub = comp[y0:y1, x0:x1] == i
            votes = post[idx[y0:y1, x0:x1][sub]][:, :BACKGROUND].sum(axis=0)
            labs = label[y0:y1, x0:x1][sub]
            counts = np.bincount(labs, minlength=BACKGROUND + 1)[:BACKGROUND]
            strong = [c for c in np.argsort(-counts)
                      if counts[c] / ppm2 >= MIN_AREA_MM2 and counts[c] >= 0.25 * area]
            if len(strong) >= 2:
                # two colours, each pyramid-sized: split the blob by colour
                for c in strong:
                    m = (sub & (label[y0:y1, x0:x1] == c)).astype(np.uint8)
                    m = cv2.morphologyEx(m, cv2.MORPH_CLOSE, k)
                    nn, cc, st, _ = cv2.connectedComponentsWithStats(m, connectivity=8)
                    for j in range(1, nn):
                        if st[j, 4] / ppm2 >= MIN_AREA_MM2:
                            out.append(self._make_blob(cc == j, (x0, y0), int(c), 1.0))
                continue
            c = int(np.argmax(votes))
            out.append(self._make_blob(sub, (x0, y0), c, float(votes[c] / max(1e-6, votes.sum()))))
        return [b for b in out if MIN_AREA_MM2 <= b.area_mm2 <= MAX_AREA_MM2 * 1.5]

    def _make_blob(self, sub: np.ndarray, origin: tuple[int, int], color: int, share: float
                   ) -> _Blob:
        m = sub.astype(np.uint8)
        # fill holes: card art seen through translucent plastic, specular highlights
        cnts, _ = cv2.findContours(m, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        filled = np.zeros_like(m)
        cv2.drawContours(filled, cnts, -1, 1, thickness=cv2.FILLED)
        return _Blob(filled, origin, color, float(filled.sum()) / self.ppm ** 2, share)

    # -- shape fit --------------------------------------------------------------------------

    def _to_mm(self, px: np.ndarray) -> np.ndarray:
        return (np.asarray(px, np.float64) + 0.5) / self.ppm

    def _raster(self, pts_mm: np.ndarray, origin: tuple[int, int], shape: tuple[int, int]
                ) -> np.ndarray:
        px = pts_mm * self.ppm - 0.5 - np.array(origin, np.float64)
        hull = cv2.convexHull(np.round(px * 16).astype(np.int32))
        m = np.zeros(shape, np.uint8)
        cv2.fillConvexPoly(m, hull, 1, cv2.LINE_8, 4)
        return m

    def _score(self, blob: _Blob, pips: int, upright: bool, ang: float, center: np.ndarray,
               cam: np.ndarray, blob_c: np.ndarray, align: bool) -> tuple[float, np.ndarray]:
        if align:
            # slide the hypothesis so that its silhouette's centroid meets the blob's
            fp = footprint_mm(pips, upright, ang, center, cam)
            hull = cv2.convexHull(fp.astype(np.float32)).reshape(-1, 2)
            mo = cv2.moments(hull)
            if mo["m00"] <= 0:
                return 0.0, center
            center = center + (blob_c - np.array([mo["m10"], mo["m01"]]) / mo["m00"])
        fp = footprint_mm(pips, upright, ang, center, cam)
        pm = self._raster(fp, blob.origin_px, blob.mask.shape)
        inter = cv2.countNonZero(cv2.bitwise_and(pm, blob.mask))
        union = cv2.countNonZero(cv2.bitwise_or(pm, blob.mask))
        return (inter / union if union else 0.0), center

    def _fit(self, blob: _Blob, cam: np.ndarray) -> PyramidFind | None:
        mo = cv2.moments(blob.mask, binaryImage=True)
        if mo["m00"] <= 0:
            return None
        c_px = np.array([mo["m10"], mo["m01"]]) / mo["m00"] + np.array(blob.origin_px)
        blob_c = self._to_mm(c_px)
        hyps: list[tuple[float, int, bool, float, np.ndarray]] = []
        for pips in SIZES_MM:
            for yaw in range(0, 90, 15):
                s, c = self._score(blob, pips, True, float(yaw), blob_c, cam, blob_c, True)
                hyps.append((s, pips, True, float(yaw), c))
            for d in range(0, 360, 15):
                s, c = self._score(blob, pips, False, float(d), blob_c, cam, blob_c, True)
                hyps.append((s, pips, False, float(d), c))
        hyps.sort(key=lambda h: -h[0])
        best = hyps[0]
        # refine the best few: finer angle, then a small position search
        for s0, pips, up, ang, c0 in hyps[:4]:
            step = 5.0
            for da in (-2 * step, -step, 0.0, step, 2 * step):
                s, c = self._score(blob, pips, up, ang + da, c0, cam, blob_c, True)
                for dx, dy in ((0, 0), (1, 0), (-1, 0), (0, 1), (0, -1)):
                    cc = c + np.array([dx, dy], np.float64) * 1.0
                    s2, _ = self._score(blob, pips, up, ang + da, cc, cam, blob_c, False)
                    if s2 > best[0]:
                        best = (s2, pips, up, ang + da, cc)
        score, pips, up, ang, center = best
        if score < max(self.min_iou, MIN_IOU_BY_COLOR.get(COLORS[blob.color], 0.0)):
            log.debug("blob at %s rejected: best IoU %.2f", blob_c.round(1), score)
            return None
        return PyramidFind(
            color=COLORS[blob.color], pips=pips, upright=up,
            pointing_deg=None if up else float(ang % 360.0),
            base_center_mm=(float(center[0]), float(center[1])),
            confidence=float(score),
            extra={"iou": round(float(score), 3), "color_share": round(blob.color_share, 3),
                   "area_mm2": round(blob.area_mm2, 1)})


def _suppress(finds: list[PyramidFind], radius_mm: float) -> list[PyramidFind]:
    keep: list[PyramidFind] = []
    for f in sorted(finds, key=lambda f: -f.confidence):
        if all(math.dist(f.base_center_mm, k.base_center_mm) > radius_mm for k in keep):
            keep.append(f)
    return keep


def find_pyramids(image: np.ndarray, calib: Calibration, mat: Mat,
                  model: ColorModel | None = None) -> list[PyramidFind]:
    """One-shot helper; build a :class:`PyramidFinder` once for many images."""
    return PyramidFinder(mat, model).find(image, calib)
