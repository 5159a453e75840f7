"""sample_images/ (the demo's input) is complete, small, and its truth is consistent."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.core.observation import Observation

ROOT = Path(__file__).resolve().parents[2] / "sample_images"


def _records(sub: str) -> list[Path]:
    return sorted(p for p in (ROOT / sub).glob("*.json") if p.name not in ("game.json", "mat.json"))


@pytest.fixture(scope="module")
def zarcana() -> list[dict]:
    recs = _records("zarcana")
    if not recs:
        pytest.skip("sample_images not rendered (python -m vision.synth.samples)")
    return [json.loads(p.read_text()) for p in recs]


def test_sample_images_are_small_and_complete(zarcana):
    total = sum(p.stat().st_size for p in ROOT.rglob("*") if p.is_file())
    assert total < 15e6, total
    script = json.loads((ROOT / "zarcana" / "game.json").read_text())
    frames = [t for t in zarcana if not t["image"].split("/")[-1].startswith("hand-")]
    assert len(frames) == len(script["moves"]) + 1 >= 16
    assert sum(t["hands"] for t in zarcana) >= 3
    illegal = [t for t in frames if t.get("legal") is False]
    assert len(illegal) == 1 and illegal[0]["broken_rules"]
    for sub in ("zarcana", "arcanoid", "decktet-table"):
        assert (ROOT / sub / "mat.json").exists()
        assert _records(sub)


def test_sample_truth_is_an_observation_and_matches_the_pixels(zarcana):
    d = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)
    det = cv2.aruco.ArucoDetector(d, cv2.aruco.DetectorParameters())
    for t in zarcana[::4]:
        Observation.from_dict(t)
        img = cv2.imread(str(ROOT / t["image"]))
        assert img.shape[:2] == (t["camera"]["height"], t["camera"]["width"])
        corners, ids, _ = det.detectMarkers(img)
        found = {int(i): c.reshape(4, 2) for i, c in zip(ids.ravel(), corners)}
        assert set(found) == {0, 1, 2, 3}
        for mid, c in found.items():
            assert np.abs(c - np.array(t["markers"][str(mid)]["corners_px"])).max() < 1.5
    # a stack, a lying pyramid in the wasteland, an attack
    assert any(c["stack_size"] > 1 for t in zarcana for c in t["cards"] if c["group"] == "lattice")
    assert any(not p["upright"] and p["rest_height_mm"] == 0 for t in zarcana for p in t["pyramids"])
    assert any("attack" in (t.get("move") or "") for t in zarcana)
