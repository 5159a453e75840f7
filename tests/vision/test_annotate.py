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


def test_the_verdict_bar_wraps_a_long_verdict_instead_of_cutting_it() -> None:
    from vision.annotate import _wrapped, verdict_bar

    font, scale, th = cv2.FONT_HERSHEY_SIMPLEX, 0.6, 1
    long = " ".join(["red: play wands-04 by red1W@0,2: move -1,2"] * 8)
    lines = _wrapped(long, font, scale, th, 620)
    assert 1 < len(lines) <= 3
    assert all(cv2.getTextSize(ln, font, scale, th)[0][0] <= 620 for ln in lines[:-1])
    shown = " ".join(lines).removesuffix(" ...").split()
    assert shown == long.split()[:len(shown)] and lines[-1].endswith(" ...")

    def bar_rows(text: str, bad: bool) -> tuple[int, set[tuple[int, int, int]]]:
        img = verdict_bar(np.zeros((360, 640, 3), np.uint8), text, bad)
        rows = np.flatnonzero(img.any(axis=(1, 2)))
        return int(rows.min()), {tuple(int(v) for v in px) for px in img.reshape(-1, 3)}

    top_short, colours = bar_rows("0003 ACCEPTED: red: pass", False)
    top_long, bad_colours = bar_rows(long, True)
    assert top_long < top_short < 360           # three lines need a taller bar
    assert (120, 255, 120) in colours and (80, 80, 255) in bad_colours


def test_a_record_without_card_outlines_still_names_its_cards() -> None:
    record = {"calibrated": True, "calibration": {"markers_seen": [0, 1, 2, 3]},
              "cards": [{"id": "cups-01", "center_mm": [100.0, 100.0]}], "pyramids": []}
    blank = np.zeros((360, 640, 3), np.uint8)
    drawn = annotate(blank, record, lambda mm: np.asarray(mm, np.float64) + 100.0)
    assert drawn[180:220, 150:250].any()        # the id around pixel (200, 200)
    assert not annotate(blank, record)[60:].any()   # without to_px, only the banner
