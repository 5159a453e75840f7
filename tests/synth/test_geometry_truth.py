"""Single objects on a plain table land where the truth records say."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.synth.camera import camera_over_mat as overhead_camera
from vision.synth.render import Light, plain_style, render
from vision.synth.scene import CardPlacement, PyramidPlacement, TableScene

TABLE = (40, 40, 40)


def _style():
    st = plain_style(TABLE)
    st.lights = [Light(40, 70, 0.6, 0.0, 1.0)]  # no shadows: the mask is the object
    return st


def _mask(image, thresh=25):
    diff = np.abs(image.astype(np.int16) - np.int16(TABLE)).max(axis=2)
    return (diff > thresh).astype(np.uint8)


def _iou(a, b):
    return (a & b).sum() / max(1, (a | b).sum())


def _poly_mask(shape, pts):
    m = np.zeros(shape[:2], np.uint8)
    cv2.fillPoly(m, [np.round(np.asarray(pts) * 16).astype(np.int32)], 1, cv2.LINE_8, 4)
    return m


def _card_scene(deck, angle, center=(300.0, 250.0)):
    return TableScene(cards=[CardPlacement("top-red" if "top-red" in deck.files else "cups-07",
                                           center, angle)], card_size_mm=deck.card_size_mm)


@pytest.mark.parametrize("angle", [270.0, 0.0, 33.0, 135.0])
def test_card_corners_straight_down(two_tone_deck, mat, angle):
    cam = overhead_camera(mat, (640, 480), card_px=160, target=(300, 250))
    image, truth = render(_card_scene(two_tone_deck, angle), two_tone_deck, mat, cam, _style())
    (card,) = truth["cards"]
    corners = np.array(card["corners_px"])
    m = _mask(image)
    cnts, _ = cv2.findContours(m, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    big = max(cnts, key=cv2.contourArea)
    rect = cv2.boxPoints(cv2.minAreaRect(big))
    # every truth corner has a detected rectangle corner within 1.5 px (corners are rounded,
    # the rectangle fitted to the outline still hits the sharp corner)
    for c in corners:
        assert np.linalg.norm(rect - c, axis=1).min() < 1.5, (c, rect)
    # the art's top (red) is between corners 0 and 1, its bottom (blue) between 2 and 3
    top = corners[0] * 0.35 + corners[1] * 0.35 + corners[2] * 0.15 + corners[3] * 0.15
    bottom = corners[0] * 0.15 + corners[1] * 0.15 + corners[2] * 0.35 + corners[3] * 0.35
    bt = image[int(round(top[1])), int(round(top[0]))]
    bb = image[int(round(bottom[1])), int(round(bottom[0]))]
    assert bt[2] > 150 and bt[0] < 100, f"top of the art is not red: {bt}"
    assert bb[0] > 150 and bb[2] < 100, f"bottom of the art is not blue: {bb}"
    assert card["angle_deg"] == pytest.approx(angle % 360)


def test_card_outline_tilted_and_distorted(tarot, mat):
    cam = overhead_camera(mat, (800, 600), tilt=22, yaw=40, tilt_dir=120, card_px=180,
                          target=(320, 300), dist=[-0.14, 0.03, 0.0, 0.0, 0.0])
    scene = TableScene(cards=[CardPlacement("major-19", (330.0, 290.0), 200.0)],
                       card_size_mm=tarot.card_size_mm)
    image, truth = render(scene, tarot, mat, cam, _style())
    (card,) = truth["cards"]
    # the card's outline under distortion: sample each edge densely through the camera model
    from vision.synth.camera import Camera
    from vision.synth.geometry import card_corners

    c = truth["camera"]
    cam2 = Camera(np.array(c["K"]), np.array(c["dist"]), np.array(c["R"]), np.array(c["t"]),
                  c["width"], c["height"])
    w3 = card_corners(scene.cards[0], scene.card_size_mm)
    assert np.abs(cam2.project(w3) - np.array(card["corners_px"])).max() < 0.02
    edge = [w3[i] + (w3[(i + 1) % 4] - w3[i]) * t for i in range(4)
            for t in np.linspace(0, 1, 40, endpoint=False)]
    outline = cam2.project(np.array(edge))
    m = _mask(image)
    iou = _iou(m.astype(bool), _poly_mask(image.shape, outline).astype(bool))
    assert iou > 0.97, iou


@pytest.mark.parametrize("upright,pointing", [(True, None), (False, 30.0), (False, 250.0)])
def test_pyramid_apex_and_silhouette(tarot, mat, upright, pointing):
    # off-centre and tilted so that parallax matters: the apex is far from the base
    cam = overhead_camera(mat, (800, 600), tilt=20, yaw=15, tilt_dir=300, card_px=200,
                          target=(450, 325))
    p = PyramidPlacement("white", 3, upright, (520.0, 380.0), pointing, yaw_deg=20.0)
    scene = TableScene(pyramids=[p])
    image, truth = render(scene, tarot, mat, cam, _style())
    (tp,) = truth["pyramids"]
    apex = np.array(tp["apex_px"])
    base = np.array(tp["base_center_px"])
    m = _mask(image, 15)
    ys, xs = np.nonzero(m)
    pts = np.column_stack([xs, ys]).astype(float)
    # the apex is drawn where the record says: on the silhouette's extreme point along the
    # base->apex direction (within 2 px), and well away from the base (parallax)
    d = apex - base
    assert np.linalg.norm(d) > 15
    d /= np.linalg.norm(d)
    tip = pts[np.argmax(pts @ d)]
    assert abs((tip - apex) @ d) < 2.0, (tip, apex)
    near = np.linalg.norm(pts - apex, axis=1).min()
    assert near < 1.5
    # the silhouette is the hull of the projected vertices
    hull = cv2.convexHull(np.vstack([tp["base_corners_px"], [tp["apex_px"]]]).astype(np.float32))
    hm = _poly_mask(image.shape, hull.reshape(-1, 2))
    k = np.ones((3, 3), np.uint8)
    outside = (m & (1 - cv2.dilate(hm, k))).sum() / m.sum()   # drawn beyond the truth
    missing = (hm & (1 - cv2.dilate(m, k))).sum() / hm.sum()  # truth not drawn
    assert outside < 0.01 and missing < 0.01, (outside, missing)
    if not upright:
        # base_center_mm of a lying pyramid is the centroid of the face it lies on: the
        # projected point sits inside the silhouette, between the apex and the base edge
        assert m[int(round(base[1])), int(round(base[0]))] == 1
        assert tp["pointing_deg"] == pytest.approx(pointing)
        assert tp["apex_mm"][2] == pytest.approx(0.0, abs=1e-6)
    else:
        assert tp["apex_mm"][2] == pytest.approx(44.5)


def test_translucent_pyramid_shows_the_card_beneath(tarot, mat):
    cam = overhead_camera(mat, (640, 480), card_px=220, target=(300, 250))
    card = CardPlacement("cups-07", (300.0, 250.0), 270.0)
    st = _style()
    base_img, _ = render(TableScene(cards=[card]), tarot, mat, cam, st)
    out = {}
    for color in ("red", "black"):
        p = PyramidPlacement(color, 3, True, (300.0, 250.0), None, rest_height_mm=0.35)
        img, _ = render(TableScene(cards=[card], pyramids=[p]), tarot, mat, cam, st)
        m = np.abs(img.astype(int) - base_img.astype(int)).max(axis=2) > 20
        ys, xs = np.nonzero(m)
        region_new = img[ys, xs].astype(float)
        region_old = base_img[ys, xs].astype(float)
        # how much of the card's texture survives under the pyramid
        out[color] = np.corrcoef(region_new.mean(axis=1), region_old.mean(axis=1))[0, 1]
    assert out["red"] > 0.5, out
    assert out["red"] > out["black"] + 0.3, out
