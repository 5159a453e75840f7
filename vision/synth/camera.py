"""Pinhole camera over the table, with OpenCV lens distortion.

World frame = table frame with a third axis: X east, Y south (mm), Z *down* into the table,
so (X, Y, Z) is right-handed and a camera looking straight down with its image x along east
has R = identity. A point ``up`` mm above the table has Z = -up.
``x_cam = R @ X + t``, pixel = K @ x_cam / z (plus distortion ``dist`` =
(k1, k2, p1, p2, k3) as in cv2.projectPoints).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import cv2
import numpy as np

if TYPE_CHECKING:
    from calibration.mat import Mat

RESOLUTIONS = ((1280, 720), (1920, 1080), (2560, 1440), (3840, 2160))


@dataclass
class Camera:
    K: np.ndarray        # 3x3
    dist: np.ndarray     # (5,)
    R: np.ndarray        # 3x3 world -> camera
    t: np.ndarray        # (3,)
    width: int
    height: int

    @property
    def rvec(self) -> np.ndarray:
        return cv2.Rodrigues(self.R)[0].reshape(3)

    @property
    def center_world(self) -> np.ndarray:
        c: np.ndarray = -self.R.T @ self.t
        return c

    @property
    def has_distortion(self) -> bool:
        return bool(np.any(np.abs(self.dist) > 0))

    def project(self, pts: np.ndarray) -> np.ndarray:
        """Distorted pixel positions of world points (N, 3) -> (N, 2), as cv2.projectPoints."""
        pts = np.asarray(pts, dtype=np.float64).reshape(-1, 3)
        if len(pts) == 0:
            return np.zeros((0, 2))
        out, _ = cv2.projectPoints(pts, self.rvec, self.t.astype(np.float64), self.K, self.dist)
        return out.reshape(-1, 2)

    def project_ideal(self, pts: np.ndarray, K: np.ndarray | None = None) -> np.ndarray:
        """Undistorted projection with intrinsics ``K`` (default own)."""
        K = self.K if K is None else K
        pts = np.asarray(pts, dtype=np.float64).reshape(-1, 3)
        c = pts @ self.R.T + self.t
        z = np.maximum(c[:, 2:3], 1e-6)
        uv = c[:, :2] / z
        px: np.ndarray = uv @ K[:2, :2].T + K[:2, 2]
        return px

    def depth(self, pts: np.ndarray) -> np.ndarray:
        pts = np.asarray(pts, dtype=np.float64).reshape(-1, 3)
        z: np.ndarray = (pts @ self.R.T + self.t)[:, 2]
        return z

    def table_homography(self, K: np.ndarray | None = None, up_mm: float = 0.0) -> np.ndarray:
        """Undistorted table-plane (x, y at height ``up_mm``) -> pixel homography."""
        K = self.K if K is None else K
        z = -up_mm
        H = K @ np.column_stack([self.R[:, 0], self.R[:, 1], self.R[:, 2] * z + self.t])
        out: np.ndarray = H / H[2, 2]
        return out

    def distort_ideal_pixels(self, uv: np.ndarray, K_ideal: np.ndarray) -> np.ndarray:
        """Ideal pixels (rendered with ``K_ideal``) -> distorted output pixels."""
        uv = np.asarray(uv, dtype=np.float64).reshape(-1, 2)
        if len(uv) == 0:
            return uv
        n = (uv - K_ideal[:2, 2]) / np.diag(K_ideal)[:2]
        pts = np.column_stack([n, np.ones(len(n))])
        out, _ = cv2.projectPoints(pts, np.zeros(3), np.zeros(3), self.K, self.dist)
        return out.reshape(-1, 2)

    def to_dict(self) -> dict[str, Any]:
        return {
            "width": self.width, "height": self.height,
            "K": [[round(float(v), 4) for v in row] for row in self.K],
            "dist": [round(float(v), 6) for v in self.dist],
            "R": [[round(float(v), 8) for v in row] for row in self.R],
            "t": [round(float(v), 4) for v in self.t],
            "rvec": [round(float(v), 8) for v in self.rvec],
            "center_mm": [round(float(v), 3) for v in self.center_world],
            "height_mm": round(float(-self.center_world[2]), 3),
        }


def rot_z(deg: float) -> np.ndarray:
    a = math.radians(deg)
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def rot_x(deg: float) -> np.ndarray:
    a = math.radians(deg)
    c, s = math.cos(a), math.sin(a)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def look_camera(target_mm: tuple[float, float], distance_mm: float, tilt_deg: float,
                yaw_deg: float, tilt_dir_deg: float, f_px: float, width: int, height: int,
                dist: np.ndarray | None = None, principal_offset: tuple[float, float] = (0, 0)
                ) -> Camera:
    """A camera ``distance_mm`` from ``target_mm`` on the table, looking at it.

    ``yaw_deg`` turns the image about the vertical; ``tilt_deg`` is the angle of the optical
    axis from straight down, leaning toward table direction ``tilt_dir_deg``.
    """
    # camera->world rotation: start looking down (camera axes = world axes), yaw about Z,
    # then tilt about a horizontal axis.
    R_cw = rot_z(yaw_deg)
    # tilt: rotate the forward axis (0,0,1) toward horizontal direction tilt_dir
    axis = np.array([-math.sin(math.radians(tilt_dir_deg)), math.cos(math.radians(tilt_dir_deg)),
                     0.0])
    R_tilt = cv2.Rodrigues(axis * math.radians(tilt_deg))[0]
    R_cw = R_tilt @ R_cw
    fwd = R_cw[:, 2]
    target = np.array([target_mm[0], target_mm[1], 0.0])
    C = target - fwd * distance_mm
    R = R_cw.T
    t = -R @ C
    K = np.array([[f_px, 0.0, width / 2.0 - 0.5 + principal_offset[0]],
                  [0.0, f_px, height / 2.0 - 0.5 + principal_offset[1]],
                  [0.0, 0.0, 1.0]])
    d = np.zeros(5) if dist is None else np.asarray(dist, dtype=np.float64)
    return Camera(K=K, dist=d, R=R, t=t, width=width, height=height)


def fit_distance(target_mm: tuple[float, float], tilt_deg: float, yaw_deg: float,
                 tilt_dir_deg: float, f_px: float, width: int, height: int,
                 outline_mm: np.ndarray, margin_frac: float = 0.02) -> float:
    """The smallest camera distance at which the table points ``outline_mm`` (N, 2) are all
    inside the image (with a margin), for the given look direction."""
    pts = np.column_stack([np.asarray(outline_mm, float).reshape(-1, 2),
                           np.zeros(len(outline_mm))])

    def fits(D: float) -> bool:
        cam = look_camera(target_mm, D, tilt_deg, yaw_deg, tilt_dir_deg, f_px, width, height)
        if np.any(cam.depth(pts) <= 0):
            return False
        px = cam.project_ideal(pts)
        mx, my = margin_frac * width, margin_frac * height
        return bool(np.all((px[:, 0] > mx) & (px[:, 0] < width - mx) & (px[:, 1] > my)
                           & (px[:, 1] < height - my)))

    lo, hi = 50.0, 50000.0
    for _ in range(40):
        mid = math.sqrt(lo * hi)
        if fits(mid):
            hi = mid
        else:
            lo = mid
    return hi


def mat_outline(mat: Mat, pad_mm: float = 15.0) -> np.ndarray:
    """Outer corners of the mat's marker squares (table mm), for :func:`fit_distance`."""
    half = mat.marker_size_mm / 2 + pad_mm
    return np.array([[-half, -half], [mat.width_mm + half, -half],
                     [mat.width_mm + half, mat.height_mm + half], [-half, mat.height_mm + half]])


#: iterate cv2.undistortPoints to convergence: its default (5 rounds) leaves a visible error
#: towards the corners of a strongly distorted image
ITERATE = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 40, 1e-7)


def undistort_points(pts: np.ndarray, K: np.ndarray, dist: np.ndarray, P: np.ndarray,
                     criteria: tuple[int, int, float]) -> np.ndarray:
    """cv2.undistortPoints with termination ``criteria``, on OpenCV 4 and 5 alike: OpenCV 4
    takes the criteria only in undistortPointsIter, OpenCV 5 only in undistortPoints."""
    it = getattr(cv2, "undistortPointsIter", None)
    if it is not None:
        return np.asarray(it(pts, K, dist, None, P, criteria))
    # (OpenCV 4's stubs have no criteria here, OpenCV 5's have)
    und = cv2.undistortPoints(  # type: ignore[call-overload,unused-ignore]
        pts, K, dist, P=P, criteria=criteria)
    return np.asarray(und)


def distortion_maps(cam: Camera, step: int = 8) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                           tuple[int, int]]:
    """Maps for cv2.remap from an ideal (undistorted) canvas to the distorted image.

    Returns (map_x, map_y, K_ideal, (canvas_w, canvas_h)): render the ideal image with
    ``K_ideal`` on a canvas of that size, then ``cv2.remap(ideal, map_x, map_y)`` gives the
    distorted camera image whose pixels match ``cam.project``.
    """
    w, h = cam.width, cam.height
    nx, ny = -(-w // step) + 2, -(-h // step) + 2
    # coarse sample positions aligned with cv2.resize's half-pixel convention
    xs = (np.arange(nx) - 1 + 0.5) * step - 0.5
    ys = (np.arange(ny) - 1 + 0.5) * step - 0.5
    gx, gy = np.meshgrid(xs, ys)
    pts = np.stack([gx.ravel(), gy.ravel()], axis=1).reshape(-1, 1, 2)
    und = undistort_points(pts, cam.K, cam.dist, cam.K, ITERATE).reshape(ny, nx, 2)
    res = (und - np.stack([gx, gy], axis=2)).astype(np.float32)
    full = cv2.resize(res, (nx * step, ny * step), interpolation=cv2.INTER_LINEAR)
    full = full[step:step + h, step:step + w]
    # the ideal canvas must hold every source position
    ux = und[..., 0]
    uy = und[..., 1]
    x0 = int(math.floor(min(ux.min(), 0.0))) - 2
    y0 = int(math.floor(min(uy.min(), 0.0))) - 2
    x1 = int(math.ceil(max(ux.max(), w - 1.0))) + 2
    y1 = int(math.ceil(max(uy.max(), h - 1.0))) + 2
    # cap the canvas (extreme distortion at the far corners): 25% margin at most
    x0 = max(x0, -w // 4)
    y0 = max(y0, -h // 4)
    x1 = min(x1, w - 1 + w // 4)
    y1 = min(y1, h - 1 + h // 4)
    K_ideal = cam.K.copy()
    K_ideal[0, 2] -= x0
    K_ideal[1, 2] -= y0
    map_x = full[..., 0] + (np.arange(w, dtype=np.float32) - np.float32(x0))[None, :]
    map_y = full[..., 1] + (np.arange(h, dtype=np.float32) - np.float32(y0))[:, None]
    return map_x, map_y, K_ideal, (x1 - x0 + 1, y1 - y0 + 1)


def camera_over_mat(mat: Mat, size: tuple[int, int] = (1280, 720), tilt: float = 0.0,
                    yaw: float = 0.0, tilt_dir: float = 0.0,
                    dist: np.ndarray | Sequence[float] | None = None,
                    target: tuple[float, float] | None = None, card_px: float | None = None,
                    card_mm: float = 120.0, hfov: float = 65.0) -> Camera:
    """A camera looking at ``target`` (default the mat centre) that holds the whole mat with
    a 5% margin or, with ``card_px``, makes a ``card_mm`` long card that many pixels long."""
    w, h = size
    f = w / 2 / math.tan(math.radians(hfov / 2))
    target = target or (mat.width_mm / 2, mat.height_mm / 2)
    if card_px is None:
        D = fit_distance(target, tilt, yaw, tilt_dir, f, w, h, mat_outline(mat), 0.05)
    else:
        D = f * card_mm / card_px
    return look_camera(target, D, tilt, yaw, tilt_dir, f, w, h,
                       None if dist is None else np.asarray(dist, float))
