"""``vision.annotate``: the banner says what the record says of the frame."""

from __future__ import annotations

import numpy as np
import pytest

cv2 = pytest.importorskip("cv2")

from vision.annotate import SURE, UNSURE, annotate  # noqa: E402


def _banner_colours(record: dict) -> set[tuple[int, int, int]]:
    out = annotate(np.zeros((360, 640, 3), np.uint8), record)
    band = out[:40].reshape(-1, 3)
    return {tuple(int(v) for v in px) for px in band if px.any()}


def test_a_blurred_frame_is_said_in_the_banner_in_the_unsure_colour() -> None:
    sharp = {"calibrated": True, "cards": [], "pyramids": [], "blurred": False,
             "calibration": {"markers_seen": [0, 1, 2, 3], "edge_blur_px": 0.7}}
    blurred = dict(sharp, blurred=True, calibration={"markers_seen": [0, 1, 2, 3],
                                                      "edge_blur_px": 2.3})
    assert SURE in _banner_colours(sharp) and UNSURE not in _banner_colours(sharp)
    assert UNSURE in _banner_colours(blurred) and SURE not in _banner_colours(blurred)
    # the longer banner reaches further right
    wide = [np.flatnonzero(annotate(np.zeros((360, 640, 3), np.uint8), r)[:40].any(axis=(0, 2)))
            .max() for r in (sharp, blurred)]
    assert wide[1] > wide[0] + 40
