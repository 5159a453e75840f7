"""Pyramid solids and where the overhead camera puts them on the table plane.

The finder works in the rectified top-down view (the table-plane homography), where a point
on the table sits at its true (x, y) in mm but a point ``up`` mm above the table is seen
where the camera's ray through it meets the table: pushed radially away from the camera's
nadir by the factor ``Hc / (Hc - up)`` (Hc = camera height). That parallax is what makes an
upright pyramid's apex lean outward, so the silhouette of every (size, pose, direction)
hypothesis is predicted exactly from the camera centre, which the calibration gives.
"""

from __future__ import annotations

import logging
import math

import cv2
import numpy as np

from calibration.table import Calibration

log = logging.getLogger(__name__)

#: Looney pyramid sizes (shared/spec/table.md): pips -> (base side mm, height mm).
SIZES_MM: dict[int, tuple[float, float]] = {1: (14.3, 25.4), 2: (19.8, 34.9), 3: (25.4, 44.5)}


def camera_center(calib: Calibration) -> np.ndarray:
    """Camera centre (x, y, height above the table) in table mm, from H and K.

    H maps undistorted pixels to the table, so inv(H) = s * K [r1 r2 t]; r1 and r2 have unit
    length, which fixes s, and the camera must be in front of the plane (t_z > 0). K is the
    calibration's (:meth:`Calibration.camera_matrix`): the known intrinsics, else one
    estimated from H and the image size."""
    K = calib.camera_matrix()
    if calib.H is None or K is None:
        raise ValueError("camera_center needs a calibration with a homography and image size")
    M = np.linalg.inv(K) @ np.linalg.inv(calib.H)
    lam = 2.0 / (np.linalg.norm(M[:, 0]) + np.linalg.norm(M[:, 1]))
    M = M * lam
    if M[2, 2] < 0:
        M = -M
    r1, r2, t = M[:, 0], M[:, 1], M[:, 2]
    R = np.column_stack([r1, r2, np.cross(r1, r2)])
    U, _, Vt = np.linalg.svd(R)  # nearest rotation: H carries noise from marker corners
    R = U @ Vt
    C = -R.T @ t
    # world z points down into the table (vision/synth/camera.py), so height = -C_z
    out: np.ndarray = np.array([C[0], C[1], -C[2]])
    return out


def local_vertices(pips: int, upright: bool) -> np.ndarray:
    """(5, 3) vertices (base corners 0..3, apex 4; x east, y south, z *up*) of a pyramid
    with its reference point (base centre / lying face centroid) at the origin, yaw 0 or
    pointing east (0 deg)."""
    b, h = SIZES_MM[pips]
    v = np.array([[-b / 2, -b / 2, 0.0], [b / 2, -b / 2, 0.0], [b / 2, b / 2, 0.0],
                  [-b / 2, b / 2, 0.0], [0.0, 0.0, h]])
    if upright:
        return v
    # lying on face (2, 3, 4): turn that face's outward normal to point down
    f = v[[2, 3, 4]]
    n = np.cross(f[1] - f[0], f[2] - f[0])
    n /= np.linalg.norm(n)
    if np.dot(n, f.mean(axis=0) - v.mean(axis=0)) < 0:
        n = -n
    down = np.array([0.0, 0.0, -1.0])
    axis = np.cross(n, down)
    ang = math.acos(max(-1.0, min(1.0, float(np.dot(n, down)))))
    k = axis / np.linalg.norm(axis)
    Kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    Rm = np.eye(3) + math.sin(ang) * Kx + (1 - math.cos(ang)) * (Kx @ Kx)
    v = v @ Rm.T
    v[:, 2] -= v[[2, 3, 4], 2].mean()
    v -= np.array([*v[[2, 3, 4], :2].mean(axis=0), 0.0])
    d = v[4, :2] - v[:4, :2].mean(axis=0)
    a = -math.atan2(d[1], d[0])  # turn so that base -> apex points east
    c, s = math.cos(a), math.sin(a)
    v[:, :2] = v[:, :2] @ np.array([[c, -s], [s, c]]).T
    v[:, 2] = np.maximum(v[:, 2], 0.0)
    out: np.ndarray = v
    return out


_TEMPLATES = {(p, u): local_vertices(p, u) for p in SIZES_MM for u in (True, False)}


def _placed_xy(pips: int, upright: bool, angle_deg: float, center_mm: np.ndarray
               ) -> np.ndarray:
    """(5, 2): the (x, y) of a pyramid's vertices, turned by ``angle_deg`` and moved to
    ``center_mm``, straight down (no parallax)."""
    v = _TEMPLATES[(pips, upright)]
    a = math.radians(angle_deg)
    c, s = math.cos(a), math.sin(a)
    xy: np.ndarray = v[:, :2] @ np.array([[c, -s], [s, c]]).T + center_mm
    return xy


def footprint_mm(pips: int, upright: bool, angle_deg: float, center_mm: np.ndarray,
                 cam: np.ndarray) -> np.ndarray:
    """Table-plane points (5, 2) where the camera sees the vertices of a pyramid whose
    reference point is at ``center_mm``; ``angle_deg`` is the yaw (upright) or the pointing
    direction (lying). The silhouette in the rectified view is their convex hull."""
    xy = _placed_xy(pips, upright, angle_deg, center_mm)
    up = _TEMPLATES[(pips, upright)][:, 2:3]
    hc = cam[2]
    k = hc / np.maximum(hc - up, 1.0)
    out: np.ndarray = cam[:2] + (xy - cam[:2]) * k
    return out


#: the circle a pyramid standing upright covers whatever its yaw (the base square's
#: inscribed circle), as a polygon of this many corners
_DISC_CORNERS = 24


def ground_footprint_mm(pips: int, upright: bool, angle_deg: float | None,
                        center_mm: np.ndarray) -> np.ndarray:
    """Table-plane polygon (N, 2) that a pyramid whose reference point is at ``center_mm``
    takes up for itself, seen from straight above (no parallax): no other pyramid can be
    there. Upright, its base's inscribed circle (the finder does not read the yaw); lying,
    the convex hull of its vertices straight down (``angle_deg``: where the apex points)."""
    c = np.asarray(center_mm, np.float64)
    if upright:
        r = SIZES_MM[pips][0] / 2.0
        t = np.linspace(0.0, 2.0 * math.pi, _DISC_CORNERS, endpoint=False)
        disc: np.ndarray = np.stack([c[0] + r * np.cos(t), c[1] + r * np.sin(t)], axis=1)
        return disc
    xy = _placed_xy(pips, False, angle_deg or 0.0, c)
    hull: np.ndarray = cv2.convexHull(xy.astype(np.float32)).reshape(-1, 2).astype(np.float64)
    return hull


def polygon_centroid(poly: np.ndarray) -> np.ndarray:
    """Area centroid of a polygon (N, 2); the mean of its vertices when it has no area."""
    m = cv2.moments(poly.astype(np.float32))
    if m["m00"] <= 0:
        out: np.ndarray = poly.mean(axis=0)
        return out
    return np.array([m["m10"] / m["m00"], m["m01"] / m["m00"]])
