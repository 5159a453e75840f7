"""The renderer's lens maps work on OpenCV 4 and 5 alike: the iterated undistortion takes
its criteria from undistortPointsIter on OpenCV 4 and from undistortPoints on OpenCV 5."""

from __future__ import annotations

import cv2
import numpy as np

from vision.synth.camera import ITERATE, distortion_maps, look_camera, undistort_points

DIST = np.array([-0.32, 0.12, 0.001, -0.0008, 0.0])


def _cam():
    return look_camera((450.0, 300.0), 600.0, 12.0, 20.0, 100.0, 1400.0, 1920, 1080, DIST)


def test_undistort_points_iterates_to_the_ideal_point():
    cam = _cam()
    # ideal pixels out to the frame's corners, bent by the lens as cv2.projectPoints does
    ideal = np.array([[30.0, 20.0], [1890.0, 1060.0], [960.0, 540.0], [100.0, 1000.0]])
    norm = cv2.undistortPoints(ideal.reshape(-1, 1, 2), cam.K, None).reshape(-1, 2)
    obj = np.column_stack([norm, np.ones(len(norm))])
    bent, _ = cv2.projectPoints(obj, np.zeros(3), np.zeros(3), cam.K, DIST)
    got = undistort_points(bent.reshape(-1, 1, 2), cam.K, DIST, cam.K, ITERATE).reshape(-1, 2)
    assert np.abs(got - ideal).max() < 1e-3
    # the plain call's five rounds are pixels off at the corners: the criteria matter
    plain = cv2.undistortPoints(bent.reshape(-1, 1, 2), cam.K, DIST, P=cam.K).reshape(-1, 2)
    assert np.abs(plain - ideal).max() > 0.1


def test_distortion_maps_land_on_the_projected_pixel():
    cam = _cam()
    mx, my, K_ideal, _ = distortion_maps(cam)
    # a distorted pixel's map entry is its ideal-canvas position: back through the lens it
    # lands on that pixel again
    for u, v in [(40, 30), (1880, 1050), (960, 540)]:
        p = np.array([mx[v, u], my[v, u]], np.float64)
        norm = np.linalg.solve(K_ideal, np.array([p[0], p[1], 1.0]))
        px, _ = cv2.projectPoints(norm.reshape(1, 3), np.zeros(3), np.zeros(3), cam.K, DIST)
        assert np.abs(px.reshape(2) - (u, v)).max() < 0.05
