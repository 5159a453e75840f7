"""Table millimetres to image pixels for one calibration: the top-down view and patches.

The finder looks at the table plane in millimetres: a rectified top-down view for finding
candidates, and small patches around each candidate for the classifier. Both are read
straight from the camera image through one map from table mm to (distorted) image pixels,
computed once per calibration and reused while the camera stays put (a fixed camera gives
the same homography, up to marker noise, frame after frame), so the lens is undone and the
homography applied in a single ``cv2.remap``.

The mat's ArUco markers sit on white paper: the median colour of the paper ring around
each marker tells the light's colour and brightness, and :func:`paper_gains` turns it into
per-channel gains that bring the paper to a neutral grey. Everything downstream (colour
table, classifier) sees images so normalised, which is what keeps a strongly coloured lamp
from turning every yellow pyramid orange.
"""

from __future__ import annotations

import functools
import logging
import math

import cv2
import numpy as np

from calibration.mat import Mat
from calibration.table import Calibration

log = logging.getLogger(__name__)

#: the map is sampled every MAP_STEP_MM and interpolated: lens distortion is smooth, so this
#: is exact to far below a pixel and 16x cheaper than a full-resolution projection
MAP_STEP_MM = 4.0
#: a new calibration whose mat corners move less than this (image px) reuses the cached map
REUSE_PX = 0.25
#: the paper is brought to this grey level (a little under white: no channel clips)
PAPER_LEVEL = 225.0
GAIN_RANGE = (0.4, 3.0)


def table_to_image(calib: Calibration, pts_mm: np.ndarray) -> np.ndarray:
    """Table points (N, 2) in mm to distorted image pixels (N, 2)."""
    if calib.H is None:
        raise ValueError("not calibrated: " + calib.reason)
    pts = np.asarray(pts_mm, np.float64).reshape(-1, 2)
    Hinv = np.linalg.inv(calib.H)
    hom = np.hstack([pts, np.ones((len(pts), 1))]) @ Hinv.T
    und = hom[:, :2] / hom[:, 2:3]
    if calib.intrinsics is None or not calib.intrinsics.distorts:
        return und
    return calib.intrinsics.distort_points(und)


class TopDown:
    """Maps of one calibration: ``view(image, ppm)`` and ``patches(image, ...)``."""

    def __init__(self, calib: Calibration, mat: Mat) -> None:
        if not calib.calibrated or calib.H is None:
            raise ValueError("TopDown needs a calibration: " + calib.reason)
        self.calib = calib
        self.mat = mat
        self.step = MAP_STEP_MM
        # the coarse grid covers the mat plus a border, so patches at the edge still sample
        self.border = 40.0
        nx = int(math.ceil((mat.width_mm + 2 * self.border) / self.step)) + 1
        ny = int(math.ceil((mat.height_mm + 2 * self.border) / self.step)) + 1
        gx, gy = np.meshgrid(np.arange(nx) * self.step - self.border,
                             np.arange(ny) * self.step - self.border)
        px = table_to_image(calib, np.column_stack([gx.ravel(), gy.ravel()]))
        self._grid = px.reshape(ny, nx, 2).astype(np.float32)
        self._views: dict[float, tuple[np.ndarray, np.ndarray]] = {}
        self._corners = table_to_image(calib, self._mat_corners())
        ring = paper_ring_mm(mat)
        self._ring_per_marker = len(ring) // max(1, len(mat.marker_centers()))
        self._ring_px = self.image_px(ring)

    def _mat_corners(self) -> np.ndarray:
        W, H = self.mat.width_mm, self.mat.height_mm
        return np.array([[0, 0], [W, 0], [W, H], [0, H]], np.float64)

    def same_camera(self, calib: Calibration) -> bool:
        """True when ``calib`` puts the mat where this one does (within :data:`REUSE_PX`)."""
        if not calib.calibrated or calib.H is None:
            return False
        if (calib.intrinsics is None) != (self.calib.intrinsics is None):
            return False
        if calib.intrinsics is not None and self.calib.intrinsics is not None and not (
                np.array_equal(calib.intrinsics.K, self.calib.intrinsics.K)
                and np.array_equal(calib.intrinsics.dist, self.calib.intrinsics.dist)):
            return False
        d = np.abs(table_to_image(calib, self._mat_corners()) - self._corners).max()
        return bool(d < REUSE_PX)

    def image_px(self, pts_mm: np.ndarray) -> np.ndarray:
        """Table mm (..., 2) to image px (..., 2), interpolated from the cached grid."""
        pts = np.asarray(pts_mm, np.float32)
        shape = pts.shape[:-1]
        g = ((pts + self.border) / self.step).reshape(-1, 2)
        n = len(g)
        # remap wants both sides under 32767: lay the points out in rows of 4096
        rows = max(1, -(-n // 4096))
        g2 = np.vstack([g, np.zeros((rows * 4096 - n, 2), np.float32)]).reshape(rows, 4096, 2)
        out = cv2.remap(self._grid, g2[..., 0], g2[..., 1], cv2.INTER_LINEAR,
                        borderMode=cv2.BORDER_REPLICATE)
        res: np.ndarray = out.reshape(-1, 2)[:n].reshape(*shape, 2)
        return res

    def paper_gains(self, image: np.ndarray) -> np.ndarray:
        """Gains (B, G, R) that make the marker paper neutral grey in ``image`` (ones with no
        printed mat: the colours are taken as they come)."""
        if self._ring_per_marker == 0:
            return np.ones(3, np.float32)
        h, w = image.shape[:2]
        p = self._ring_px
        inside = (p[:, 0] >= 0) & (p[:, 0] <= w - 1) & (p[:, 1] >= 0) & (p[:, 1] <= h - 1)
        # a column of points per remap, each under remap's limit of 32767 px a side (a mat
        # file whose markers are said to be 600 mm rings them with 39,000 points)
        px = np.concatenate([
            cv2.remap(image, np.ascontiguousarray(q[:, None, 0]),
                      np.ascontiguousarray(q[:, None, 1]), cv2.INTER_LINEAR,
                      borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0)).reshape(-1, 3)
            for q in np.array_split(p, -(-len(p) // 32000))]) if len(p) else np.zeros((0, 3))
        samples = px.astype(np.int16)
        samples[~inside] = -1
        return paper_gains(samples, self._ring_per_marker)

    def _view_maps(self, ppm: float) -> tuple[np.ndarray, np.ndarray]:
        if ppm not in self._views:
            w = int(round(self.mat.width_mm * ppm))
            h = int(round(self.mat.height_mm * ppm))
            # view pixel -> the cached grid's coordinates is affine: one warpAffine of the
            # grid gives the map, as image_px would point by point (the same values, in a
            # third of the time: a new camera's first frame waits on this)
            k = 1.0 / ppm
            off = (0.5 * k + self.border) / self.step
            M = np.array([[k / self.step, 0.0, off], [0.0, k / self.step, off]])
            px = cv2.warpAffine(self._grid, M, (w, h),
                                flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                                borderMode=cv2.BORDER_REPLICATE)
            self._views[ppm] = cv2.convertMaps(px[..., 0], px[..., 1], cv2.CV_16SC2)
        return self._views[ppm]

    def view(self, image: np.ndarray, ppm: float) -> np.ndarray:
        """The top-down view of the mat at ``ppm`` pixels per mm: pixel (u, v) shows table
        point ((u + 0.5) / ppm, (v + 0.5) / ppm)."""
        m1, m2 = self._view_maps(ppm)
        out: np.ndarray = cv2.remap(image, m1, m2, cv2.INTER_LINEAR,
                                    borderMode=cv2.BORDER_CONSTANT)
        return out

    def outside(self, image_hw: tuple[int, ...], ppm: float) -> np.ndarray:
        """(h, w) bool over :meth:`view`'s pixels: True where the table point lies outside
        an image of ``image_hw`` (the view is black there)."""
        m1, m2 = self._view_maps(ppm)
        ones = np.full(image_hw[:2], 255, np.uint8)
        seen = cv2.remap(ones, m1, m2, cv2.INTER_NEAREST, borderMode=cv2.BORDER_CONSTANT,
                         borderValue=0)
        out: np.ndarray = seen == 0
        return out

    def patches(self, image: np.ndarray, centers_mm: np.ndarray, angles_deg: np.ndarray,
                size_px: int, span_mm: float) -> np.ndarray:
        """(N, size, size, 3) patches: each ``span_mm`` wide around its centre, turned so that
        the patch's "up" (-v) is table direction ``angle`` (degrees, table frame)."""
        n = len(centers_mm)
        if n == 0:
            return np.zeros((0, size_px, size_px, 3), np.uint8)
        k = span_mm / size_px
        t = np.radians(np.asarray(angles_deg, np.float64))
        maps = np.empty((n * size_px, size_px, 2), np.float32)
        # patch pixel (col, row) -> table mm is affine, and so is table mm -> the cached
        # grid's coordinates: one small warpAffine of the grid gives each patch's map. The
        # matrices of all patches at once (the same numbers as one by one: a few small numpy
        # operations a patch cost as much as its warpAffine)
        ux = np.array([math.cos(a) for a in t.tolist()])
        uy = np.array([math.sin(a) for a in t.tolist()])
        c = np.asarray(centers_mm, np.float64).reshape(n, 2)
        off = 0.5 * k - span_mm / 2
        Ms = np.empty((n, 2, 3), np.float64)
        # right: up turned 90 degrees clockwise (y is south), (-uy, ux)
        Ms[:, 0, 0], Ms[:, 1, 0] = -uy * k, ux * k
        Ms[:, 0, 1], Ms[:, 1, 1] = -ux * k, -uy * k
        Ms[:, 0, 2] = c[:, 0] + (-uy - ux) * off
        Ms[:, 1, 2] = c[:, 1] + (ux - uy) * off
        Ms[:, :, 2] += self.border
        Ms /= self.step
        for i in range(n):
            cv2.warpAffine(self._grid, Ms[i], (size_px, size_px),
                           dst=maps[i * size_px:(i + 1) * size_px],
                           flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                           borderMode=cv2.BORDER_REPLICATE)
        # all patches in few remaps: their maps stacked into one tall image, cut where a
        # side would reach remap's limit of 32767 px
        rows = (32000 // size_px) * size_px
        res = np.empty((n * size_px, size_px, 3), np.uint8)
        for a in range(0, n * size_px, rows):
            # the two-channel map as it is (split into x and y, each would be copied)
            # (OpenCV 4's stubs want a second map, 5's do not; None is what its docs say for
            # this one)
            res[a:a + rows] = cv2.remap(  # type: ignore[call-overload, unused-ignore]
                image, maps[a:a + rows], None, cv2.INTER_LINEAR,
                borderMode=cv2.BORDER_REPLICATE)
        return res.reshape(n, size_px, size_px, 3)


def paper_ring_mm(mat: Mat, step_mm: float = 1.0) -> np.ndarray:
    """Table points (N, 2) on the paper ring 1.5 to 5 mm outside each marker's black border
    (paper in every mat: the markers are printed with a white margin)."""
    half = mat.marker_size_mm / 2
    s = np.arange(-half - 5, half + 5 + 1e-9, step_mm)
    gx, gy = np.meshgrid(s, s)
    ring = np.maximum(np.abs(gx), np.abs(gy)) > half + 1.5
    pts = np.column_stack([gx[ring], gy[ring]])
    centres = list(mat.marker_centers().values())
    if not centres:
        return np.zeros((0, 2), np.float64)
    out: np.ndarray = np.vstack([pts + np.array(c) for c in centres])
    return out


def paper_gains(samples: np.ndarray, per_marker: int) -> np.ndarray:
    """Per-channel (B, G, R) gains that bring the marker paper to a neutral
    :data:`PAPER_LEVEL`, from the ring samples (N, 3) of :func:`paper_ring_mm`, ``per_marker``
    of them per marker. Ones when too little paper is in sight."""
    meds = []
    n = len(samples) // per_marker if per_marker > 0 else 0
    # the rings' common steps for every marker at once: numpy's calls on a thousand samples
    # cost more than their work (four markers 0.69 -> 0.43 ms a frame); the same numbers as
    # marker by marker
    rings = np.asarray(samples[:n * per_marker], np.float32).reshape(n, per_marker, 3)
    b, g, r = rings[..., 0], rings[..., 1], rings[..., 2]
    seen: np.ndarray = (b >= 0) & (g >= 0) & (r >= 0)   # (markers, samples): in the frame
    lums = b + g + r                            # (as .sum(axis=...) adds them)
    whole = np.all(seen, axis=1)
    # paper is the brightest thing in the ring; shadows, ink and a card corner are not
    cuts = dict(zip(np.flatnonzero(whole).tolist(),
                    np.percentile(lums[whole], 40, axis=1) if whole.any() else []))
    for k in range(n):
        px, lum = rings[k], lums[k]
        if not whole[k]:
            px, lum = px[seen[k]], lum[seen[k]]
            if len(px) < per_marker // 3:
                continue
        above = lum >= (cuts[k] if whole[k] else np.percentile(lum, 40))
        if lum[above].mean() > 40:
            meds.append(np.median(px[above], axis=0))
    if len(meds) < 2:
        return np.ones(3, np.float32)
    paper = np.median(np.array(meds, np.float32), axis=0)
    if paper.min() < 8:
        return np.ones(3, np.float32)
    gains: np.ndarray = np.clip(PAPER_LEVEL / paper, *GAIN_RANGE).astype(np.float32)
    return gains


def apply_gains(image: np.ndarray, gains: np.ndarray) -> np.ndarray:
    """``image`` (uint8 BGR) times per-channel ``gains``, saturated."""
    lut = _gains_lut(np.asarray(gains, np.float32).tobytes())
    if lut is None:
        return image
    out: np.ndarray = cv2.LUT(image, lut)
    return out


@functools.lru_cache(maxsize=4)
def _gains_lut(gains: bytes) -> np.ndarray | None:
    """The look-up table of :func:`apply_gains` for gains given as float32 bytes (None where
    they are all 1). Kept: a frame's view and every batch of its patches take the same gains
    (eight times a frame)."""
    g = np.frombuffer(gains, np.float32)
    if np.allclose(g, 1.0):
        return None
    lut: np.ndarray = np.clip(np.arange(256, dtype=np.float32)[:, None] * g + 0.5, 0, 255
                              ).astype(np.uint8).reshape(256, 1, 3)
    lut.setflags(write=False)
    return lut
