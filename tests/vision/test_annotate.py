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


@pytest.mark.parametrize("width", [640, 1600, 3840])
def test_a_label_and_its_dark_outline_line_up(width: int) -> None:
    # small frames draw one-pixel text; an outline drawn thicker is spaced wider by OpenCV
    # and ran past the text, the two reading as doubled letters
    from vision.annotate import _text

    img = np.full((120, width, 3), 128, np.uint8)
    scale = max(0.35, min(width, width * 9 // 16) / 1800.0)
    _text(img, "calibrated: markers 0,1,2,3, 0.7 mm; 10 cards, 3 pyramids", (10, 60), scale,
          (255, 255, 255))
    text_cols = np.flatnonzero((img.min(axis=2) > 200).any(axis=0))
    dark_cols = np.flatnonzero((img.max(axis=2) < 40).any(axis=0))
    reach = max(1, int(round(scale * 2))) + 4   # the outline, and anti-aliased edges
    assert abs(int(dark_cols.max()) - int(text_cols.max())) <= reach
    assert abs(int(dark_cols.min()) - int(text_cols.min())) <= reach
