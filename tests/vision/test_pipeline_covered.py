"""Cards over or under another card are cut a little off their box too, and the cut the
gallery reads best is kept (`TablePipeline._recut_covered_boxes`, vision/pipeline.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("cv2")
pytest.importorskip("onnxruntime")

import numpy as np  # noqa: E402

import vision.pipeline as vp  # noqa: E402
from vision.cards.identify import CardMatch  # noqa: E402
from vision.pipeline import COVERED_GAIN, COVERED_SHIFTS_MM, TablePipeline  # noqa: E402

#: where the fake gallery reads the hidden card well
TRUE_CENTRE = (100.0 + COVERED_SHIFTS_MM[-1], 100.0)


def match(cid: str, margin: float, *, table: bool = False) -> CardMatch:
    if table:
        return CardMatch(None, "back", False, 0.0, margin, 1.0, 10.0)
    return CardMatch(cid, cid, False, 0.9, margin, 1.0, 10.0)


@pytest.fixture(scope="module")
def pipeline() -> Iterator[TablePipeline]:
    with TablePipeline(deck="tarot", threads=1) as p:
        yield p


@pytest.fixture
def fake_gallery(pipeline: TablePipeline, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Cuts carry their centre; the gallery reads ``major-05`` with margin 8 at
    TRUE_CENTRE and ``wands-09`` with margin 2 anywhere else. Returns the cut centres read."""
    read: list[Any] = []

    def warp(image: Any, calib: Any, center: tuple[float, float], axis: float,
             size: Any) -> tuple[float, float]:
        return (round(float(center[0]), 6), round(float(center[1]), 6))

    def identify_batch(crops: list[tuple[float, float]]) -> list[CardMatch]:
        read.extend(crops)
        return [match("major-05", 8.0) if np.allclose(c, TRUE_CENTRE) else match("wands-09", 2.0)
                for c in crops]

    monkeypatch.setattr(vp, "warp_card_mm", warp)
    monkeypatch.setattr(pipeline.gallery, "identify_batch", identify_batch)
    return read


def recut(p: TablePipeline, centers: list[list[float]], axes: list[float],
          matches: list[CardMatch]) -> tuple[np.ndarray, list[CardMatch]]:
    c = np.array(centers, np.float64)
    a = np.array(axes, np.float64)
    m = list(matches)
    p._recut_covered_boxes(np.zeros((4, 4, 3), np.uint8), None, c, a, m)  # type: ignore[arg-type]
    return c, m


def test_a_card_under_another_takes_the_cut_read_best(pipeline: TablePipeline,
                                                      fake_gallery: list[Any]) -> None:
    # card 0 along x, card 1 across its east end: they overlap by about 35 x 70 mm
    c, m = recut(pipeline, [[100.0, 100.0], [160.0, 100.0]], [0.0, 90.0],
                 [match("wands-09", 2.0), match("cups-02", 2.0)])
    assert c[0].tolist() == list(TRUE_CENTRE)
    assert m[0].card_id == "major-05"
    # every overlapping card is cut both ways along and across its axis at each shift
    assert len(fake_gallery) == 2 * 4 * len(COVERED_SHIFTS_MM)
    # card 1 read no better anywhere: it stays
    assert c[1].tolist() == [160.0, 100.0] and m[1].card_id == "cups-02"


def test_a_card_alone_is_not_cut_again(pipeline: TablePipeline,
                                       fake_gallery: list[Any]) -> None:
    c, m = recut(pipeline, [[100.0, 100.0], [400.0, 400.0]], [0.0, 90.0],
                 [match("wands-09", 2.0), match("cups-02", 2.0)])
    assert fake_gallery == []
    assert c[0].tolist() == [100.0, 100.0] and m[0].card_id == "wands-09"


def test_a_cut_must_read_better_by_the_gain(pipeline: TablePipeline,
                                            fake_gallery: list[Any]) -> None:
    # the card's own cut reads nearly as well as the best moved one: it stays
    own = 8.0 - COVERED_GAIN + 0.05
    c, m = recut(pipeline, [[100.0, 100.0], [160.0, 100.0]], [0.0, 90.0],
                 [match("wands-09", own), match("cups-02", 2.0)])
    assert c[0].tolist() == [100.0, 100.0] and m[0].card_id == "wands-09"
    c, m = recut(pipeline, [[100.0, 100.0], [160.0, 100.0]], [0.0, 90.0],
                 [match("wands-09", own - 0.1), match("cups-02", 2.0)])
    assert m[0].card_id == "major-05"


def test_a_cut_over_bare_table_is_left_to_be_dropped(pipeline: TablePipeline,
                                                     fake_gallery: list[Any]) -> None:
    c, m = recut(pipeline, [[100.0, 100.0], [160.0, 100.0]], [0.0, 90.0],
                 [match("", 2.0, table=True), match("cups-02", 2.0)])
    assert c[0].tolist() == [100.0, 100.0] and m[0].looks_like_table


def test_a_moved_cut_naming_the_same_card_leaves_the_box_where_it_was(
        pipeline: TablePipeline, fake_gallery: list[Any]) -> None:
    # the gallery reads the card better from TRUE_CENTRE, but it names the same card there:
    # the move would only take the card away from where its edges put it
    c, m = recut(pipeline, [[100.0, 100.0], [160.0, 100.0]], [0.0, 90.0],
                 [match("major-05", 2.0), match("cups-02", 2.0)])
    assert c[0].tolist() == [100.0, 100.0]
    assert m[0].card_id == "major-05" and m[0].margin == 2.0
