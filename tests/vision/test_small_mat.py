"""A mat smaller than the standard one: the card detector still sees cards at the size in
pixels it learnt, so the cards measure their true size and the mat file is not doubted.

Before, a 700 x 480 mm mat was shown on its own 780 mm square canvas, every card came out
about 9% short (the record's ``calibration.card_scale`` 0.90-0.92 on these renders) and
``observe`` said the mat file's size was wrong.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

cv2 = pytest.importorskip("cv2")

from calibration.mat import CARD_SCALE_DOUBT, DEFAULT_MAT, Mat, card_scale_doubt  # noqa: E402
from vision.detection.view import TILE_SPAN_MM, DetectorView, tiles  # noqa: E402

SMALL = Mat(width_mm=700.0, height_mm=480.0, marker_size_mm=60.0,
            zones={"draw": (20.0, 390.0, 110.0, 470.0), "discard": (130.0, 390.0, 220.0, 470.0)})
SEED, INDEX = 920100, 1     # a held-out render of that mat: 17 cards, no hands


def test_a_small_mat_is_shown_at_the_trained_scale():
    view = DetectorView.for_mat(SMALL, 640)
    assert math.isclose(view.span_mm(), TILE_SPAN_MM)
    assert math.isclose(view.px_per_mm, DetectorView.for_mat(DEFAULT_MAT, 640).px_per_mm)
    assert tiles(SMALL, 640) == [view]


def test_cards_on_a_small_mat_measure_the_decks_size():
    from vision.synth.deck import load_deck, shared_dir
    from vision.synth.generate import make_example

    sd = shared_dir()
    if sd is None or not (sd / "decks" / "rws-tarot").is_dir():
        pytest.skip("shared/decks not found (set ARCANA_SHARED)")
    from vision.pipeline import TablePipeline

    try:
        pipeline = TablePipeline(mat=SMALL, threads=2)
    except Exception as exc:  # noqa: BLE001 - models not shipped in this checkout
        pytest.skip(f"the shipped models are not here: {exc}")
    image, truth, _ = make_example(SEED, INDEX, load_deck(sd / "decks" / "rws-tarot"), SMALL,
                                   hands=0.0, distortion=False)
    with pipeline:
        record = pipeline.observe(image, "small-mat.jpg")
    scale = record["calibration"]["card_scale"]
    assert abs(scale - 1.0) <= CARD_SCALE_DOUBT / 2, scale
    assert card_scale_doubt(scale) is None
    seen = [c for c in truth["cards"] if c.get("visible", 1.0) >= 0.85]
    assert len(seen) >= 15
    for t in seen:
        near = [c for c in record["cards"]
                if np.hypot(*(np.subtract(c["center_mm"], t["center_mm"]))) < 25.0]
        assert [c["id"] for c in near] == [t["id"]], (t["id"], near)
