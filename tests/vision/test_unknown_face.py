"""A face-up card the enrolled deck does not know is a face, not a back: with a quarter of the
tarot left out of the enrolled deck, the gallery finds some of those faces nearer its back
class than any card it knows, and observe called them face-down cards ("back"). They are now
named as their nearest card, unidentified, with a low confidence; the true backs stay backs.
One seeded render (true boxes), the deck enrolled from the shared scans into a temporary
folder (links, no copies)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

cv2 = pytest.importorskip("cv2")

from vision_truth import TruthBoxes  # noqa: E402

SEED, INDEX = 931000, 0     # 10 cards: one back, three faces left out of the deck


class _NoPyramids:
    def find(self, image: np.ndarray, calib: Any) -> list[dict[str, Any]]:
        return []


def _near(record: dict[str, Any], truth: dict[str, Any]) -> dict[str, Any] | None:
    best = min(record["cards"], default=None,
               key=lambda r: math.dist(r["center_mm"], truth["center_mm"]))
    return best if best is not None and math.dist(best["center_mm"],
                                                  truth["center_mm"]) <= 25 else None


def test_a_face_the_enrolled_deck_lacks_is_not_called_a_back(shared: Path,
                                                             tmp_path: Path) -> None:
    from calibration.mat import DEFAULT_MAT
    from calibration.table import Intrinsics
    from vision.cards.identify import enroll
    from vision.pipeline import TablePipeline
    from vision.synth.deck import TAROT_IDS, load_deck
    from vision.synth.generate import make_example

    scans = shared / "decks" / "rws-tarot"
    left_out = set(TAROT_IDS[::4])
    folder = tmp_path / "deck"
    folder.mkdir()
    kept = [c for c in TAROT_IDS if c not in left_out]
    for cid in kept:
        (folder / f"{cid}.jpg").symlink_to(scans / f"{cid}.jpg")
    (folder / "deck.json").write_text(json.dumps({"name": "most", "card_size_mm": [70, 120],
                                                  "cards": kept}))
    gallery = enroll(folder, seed=0)           # enroll-deck's default 40 views a card
    image, truth, _ = make_example(SEED, INDEX, load_deck(scans, validate=False), DEFAULT_MAT,
                                   game="mixed", hands=0.0, size=(1920, 1080))
    boxes = TruthBoxes()
    boxes.fallback = truth
    cam = truth["camera"]
    with TablePipeline(mat=DEFAULT_MAT, deck=gallery, card_detector=boxes,
                       pyramid_finder=_NoPyramids(), threads=1, pyramid_process=False,
                       intrinsics=Intrinsics(np.array(cam["K"], np.float64),
                                             np.array(cam["dist"], np.float64))) as pipeline:
        record = pipeline.observe(image, "unknown-faces")
    seen = [t for t in truth["cards"] if t.get("in_frame", True) and t["visible"] >= 0.5]
    unknown = [t for t in seen if t["face_up"] and t["card_id"] in left_out]
    backs = [t for t in seen if not t["face_up"]]
    assert len(unknown) == 3 and len(backs) == 1
    for t in backs:
        found = _near(record, t)
        assert found is not None and found["id"] == "back" and not found["face_up"]
    for t in unknown:
        found = _near(record, t)
        assert found is not None, t["card_id"]
        assert found["id"] != "back" and found["face_up"], t["card_id"]
        assert found["id"] in kept
        if not found["identified"]:
            assert found["confidence"] <= 0.5 and found["id_confidence"] <= 0.5
    assert sum(c["id"] == "back" for c in record["cards"]) == len(backs)
