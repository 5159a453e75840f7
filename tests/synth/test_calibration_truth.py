"""The truth agrees with the pixels: OpenCV finds the markers of a rendered image and the
homography they give maps table points to within 1 mm of where the truth says they are."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.synth.camera import camera_over_mat as overhead_camera
from vision.synth.render import Style, plain_style, render
from vision.synth.scene import scene_from_lattice


def _detect(image, mat):
    d = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, mat.dictionary))
    p = cv2.aruco.DetectorParameters()
    p.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    corners, ids, _ = cv2.aruco.ArucoDetector(d, p).detectMarkers(image)
    return {int(i): c.reshape(4, 2) for i, c in zip(ids.ravel(), corners)} if ids is not None else {}


def _scene(tarot):
    return scene_from_lattice({(0, 0): ["cups-07"], (1, 0): ["major-13", "swords-02"],
                               (0, 1): [("wands-10", False)]},
                              {(0, 0): ["red2U"], (1, 1): ["blue3W"]},
                              card_size_mm=tarot.card_size_mm, center_on=(450, 320))


@pytest.mark.parametrize("case", ["straight", "tilted-distorted"])
def test_markers_found_and_homography_within_1mm(tarot, mat, case):
    if case == "straight":
        cam = overhead_camera(mat, (1280, 720))
        style = plain_style()
    else:
        cam = overhead_camera(mat, (1600, 900), tilt=18, yaw=27, tilt_dir=200,
                              dist=[-0.12, 0.03, 0.0005, -0.0004, 0.0])
        style = Style(seed=4, surface="wood", noise_sigma=2.0, vignette=0.2, jpeg_quality=90)
    scene = _scene(tarot)
    image, truth = render(scene, tarot, mat, cam, style)
    image = cv2.imdecode(cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 90])[1], 1)
    found = _detect(image, mat)
    assert sorted(found) == [0, 1, 2, 3], f"markers found: {sorted(found)}"
    assert truth["calibrated"] is True
    K = np.array(truth["camera"]["K"])
    dist = np.array(truth["camera"]["dist"])
    img_pts, tab_pts = [], []
    for mid, corners in mat.marker_corners().items():
        # the detector's corners agree with the truth's marker corners
        tc = np.array(truth["markers"][str(mid)]["corners_px"])
        assert np.abs(found[mid] - tc).max() < 1.0, (mid, found[mid], tc)
        img_pts.append(found[mid])
        tab_pts.append(np.array(corners))
    img_pts = np.vstack(img_pts).reshape(-1, 1, 2)
    und = cv2.undistortPoints(img_pts, K, dist, P=K).reshape(-1, 2)
    H, _ = cv2.findHomography(und, np.vstack(tab_pts), 0)
    # table points where the truth says things were drawn: card centres and marker corners
    probes_px, probes_mm = [], []
    for c in truth["cards"] + truth["covered_cards"]:
        probes_px.append(c["center_px"])
        probes_mm.append(c["center_mm"])
    for p in truth["pyramids"]:
        probes_px.append(p["base_center_px"])
        probes_mm.append(p["base_center_mm"])
    pts = cv2.undistortPoints(np.array(probes_px, float).reshape(-1, 1, 2), K, dist, P=K)
    mapped = cv2.perspectiveTransform(pts, H).reshape(-1, 2)
    err = np.linalg.norm(mapped - np.array(probes_mm), axis=1)
    assert err.max() < 1.0, err
    # and a grid of plain table points drawn through the camera model
    from vision.synth.camera import Camera

    cam2 = Camera(K=K, dist=dist, R=np.array(truth["camera"]["R"]), t=np.array(truth["camera"]["t"]),
                  width=truth["camera"]["width"], height=truth["camera"]["height"])
    gx, gy = np.meshgrid(np.linspace(50, 850, 9), np.linspace(50, 600, 7))
    grid = np.column_stack([gx.ravel(), gy.ravel(), np.zeros(gx.size)])
    gpx = cv2.undistortPoints(cam2.project(grid).reshape(-1, 1, 2), K, dist, P=K)
    gm = cv2.perspectiveTransform(gpx, H).reshape(-1, 2)
    assert np.linalg.norm(gm - grid[:, :2], axis=1).max() < 1.0
