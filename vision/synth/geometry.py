"""3D geometry of cards and pyramids in the world frame of :mod:`vision.synth.camera`
(X east, Y south, Z down; a point ``up`` mm above the table has Z = -up)."""

from __future__ import annotations

import math

import numpy as np

from vision.synth.scene import CardPlacement, PyramidPlacement

#: Faces of a pyramid by vertex index: 0..3 base corners, 4 apex.
PYRAMID_FACES: tuple[tuple[int, ...], ...] = ((0, 1, 2, 3), (0, 1, 4), (1, 2, 4), (2, 3, 4),
                                              (3, 0, 4))


def card_corners(card: CardPlacement, size_mm: tuple[float, float]) -> np.ndarray:
    """(4, 3) world corners of a card: art top-left, top-right, bottom-right, bottom-left."""
    w, h = size_mm
    a = math.radians(card.angle_deg)
    u = np.array([math.cos(a), math.sin(a)])       # toward the top of the art
    r = np.array([-math.sin(a), math.cos(a)])      # toward the right of the art
    c = np.array(card.center_mm, dtype=np.float64)
    pts = [c + u * h / 2 - r * w / 2, c + u * h / 2 + r * w / 2,
           c - u * h / 2 + r * w / 2, c - u * h / 2 - r * w / 2]
    z = -card.height_mm
    return np.array([[p[0], p[1], z] for p in pts])


def _rodrigues(axis: np.ndarray, angle: float) -> np.ndarray:
    k = axis / np.linalg.norm(axis)
    Kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    R: np.ndarray = np.eye(3) + math.sin(angle) * Kx + (1 - math.cos(angle)) * (Kx @ Kx)
    return R


def pyramid_vertices(p: PyramidPlacement) -> np.ndarray:
    """(5, 3) world vertices (base corners 0..3, apex 4) of a placed pyramid."""
    b, h = p.size_mm
    # local frame: x east, y south, third coordinate = up
    v = np.array([[-b / 2, -b / 2, 0.0], [b / 2, -b / 2, 0.0], [b / 2, b / 2, 0.0],
                  [-b / 2, b / 2, 0.0], [0.0, 0.0, h]])
    if p.upright:
        a = math.radians(p.yaw_deg)
        c, s = math.cos(a), math.sin(a)
        Rz = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]])
        v = v @ Rz.T
        v[:, 0] += p.base_center_mm[0]
        v[:, 1] += p.base_center_mm[1]
    else:
        # lay the solid on face (2, 3, 4): rotate its outward normal onto "down"
        centroid = v.mean(axis=0)
        f = v[[2, 3, 4]]
        n = np.cross(f[1] - f[0], f[2] - f[0])
        n /= np.linalg.norm(n)
        if np.dot(n, f.mean(axis=0) - centroid) < 0:
            n = -n
        down = np.array([0.0, 0.0, -1.0])
        axis = np.cross(n, down)
        ang = math.acos(max(-1.0, min(1.0, float(np.dot(n, down)))))
        v = v @ _rodrigues(axis, ang).T
        v[:, 2] -= v[[2, 3, 4], 2].mean()
        contact = v[[2, 3, 4]].mean(axis=0)
        base_c = v[:4].mean(axis=0)
        d = v[4, :2] - base_c[:2]
        cur = math.atan2(d[1], d[0])
        want = math.radians(p.pointing_deg or 0.0)
        a = want - cur
        c, s = math.cos(a), math.sin(a)
        Rz = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]])
        v = (v - contact) @ Rz.T
        v[:, 0] += p.base_center_mm[0]
        v[:, 1] += p.base_center_mm[1]
        v[:, 2] = np.maximum(v[:, 2], 0.0)
    out: np.ndarray = v.copy()
    out[:, 2] = -(v[:, 2] + p.rest_height_mm)
    return out


def face_normals(verts: np.ndarray) -> np.ndarray:
    """Outward unit normals (world frame) of the five faces."""
    c = verts.mean(axis=0)
    out = []
    for f in PYRAMID_FACES:
        p = verts[list(f)]
        n = np.cross(p[1] - p[0], p[2] - p[0])
        n /= np.linalg.norm(n)
        if np.dot(n, p.mean(axis=0) - c) < 0:
            n = -n
        out.append(n)
    return np.array(out)
