"""A pictured check: a contact sheet of varied scenes, with properties asserted.

Set ARCANA_CONTACT_SHEET=path.png to keep the sheet for a look (it is written to pytest's
temporary folder otherwise).
"""

from __future__ import annotations

import os
import shutil

import cv2
import numpy as np

from vision.synth.generate import make_example

SIZE = (1280, 720)
TILE = (640, 360)


def _markers(image):
    d = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)
    _, ids, _ = cv2.aruco.ArucoDetector(d, cv2.aruco.DetectorParameters()).detectMarkers(image)
    return set() if ids is None else set(int(i) for i in ids.ravel())


def test_contact_sheet_of_varied_scenes(tarot, decktet, mat, tmp_path):
    tiles, truths = [], []
    for k in range(12):
        deck = decktet if k % 4 == 3 else tarot
        game = "free" if k % 3 == 2 else "zarcana"
        img, truth, _ = make_example(2024, k, deck, mat, game=game, hands=0.35, size=SIZE)
        tile = cv2.resize(img, TILE, interpolation=cv2.INTER_AREA)
        s = TILE[0] / SIZE[0]
        for c in truth["cards"]:
            cv2.polylines(tile, [np.round(np.array(c["corners_px"]) * s * 4).astype(np.int32)],
                          True, (0, 0, 255), 1, cv2.LINE_AA, 2)
        for p in truth["pyramids"]:
            a = tuple(int(round(v * s)) for v in p["apex_px"])
            cv2.circle(tile, a, 2, (255, 255, 0), -1)
        tiles.append((img, tile))
        truths.append(truth)
    sheet = np.vstack([np.hstack([t[1] for t in tiles[r * 4:(r + 1) * 4]]) for r in range(3)])
    path = tmp_path / "contact_sheet.png"
    cv2.imwrite(str(path), sheet)
    if os.environ.get("ARCANA_CONTACT_SHEET"):
        shutil.copyfile(path, os.environ["ARCANA_CONTACT_SHEET"])
    assert sheet.shape == (3 * TILE[1], 4 * TILE[0], 3)
    raw = [t[0] for t in tiles]
    # no blank or flat tiles
    assert all(im.std() > 12 for im in raw), [round(float(im.std()), 1) for im in raw]
    # the tables differ: mean colours of the tiles spread
    means = np.array([im.reshape(-1, 3).mean(axis=0) for im in raw])
    assert means.std(axis=0).max() > 12, means
    # every scene has cards; most have pyramids; some have hands; surfaces vary
    assert all(len(t["cards"]) >= 1 for t in truths)
    assert sum(len(t["pyramids"]) > 0 for t in truths) >= 6
    assert any(t["hands"] for t in truths)
    assert len({t["style"]["surface"] for t in truths}) >= 3
    # calibration markers are readable in most views where the truth says they should be
    calibrated = [(im, t) for im, t in zip(raw, truths) if t["calibrated"] and not t["hands"]]
    assert len(calibrated) >= 4
    found = sum(len(_markers(im)) == 4 for im, _ in calibrated)
    assert found >= 0.75 * len(calibrated), (found, len(calibrated))
    # face-up cards look like their art: a rectified crop correlates with the scan
    from vision.synth.export import rectify_card

    scores = []
    for im, t in zip(raw, truths):
        for c in t["cards"]:
            if c["id"] == "back" or c["visible"] < 0.95 or not c["in_frame"]:
                continue
            deck = decktet if c["id"].startswith("decktet") else tarot
            crop = cv2.cvtColor(rectify_card(im, c["corners_px"], (48, 84)), cv2.COLOR_BGR2GRAY)
            ref = cv2.cvtColor(cv2.resize(deck.image(c["id"]), (48, 84),
                                          interpolation=cv2.INTER_AREA), cv2.COLOR_BGR2GRAY)
            scores.append(np.corrcoef(crop.ravel().astype(float), ref.ravel().astype(float))[0, 1])
    assert len(scores) >= 10
    assert np.median(scores) > 0.6, np.round(scores, 2)
