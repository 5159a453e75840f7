"""bench/no_mat.py's alignment of a record without a mat to the truth's table frame: a card
named wrong must not drag every other card of its image off."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("cv2")

from bench.no_mat import align  # noqa: E402


def _tables(turn_deg: float, shift: tuple[float, float]) -> tuple[dict, dict]:
    rng = np.random.default_rng(4)
    ids = [f"cups-0{k}" for k in range(1, 8)]
    true_xy = rng.uniform(0.0, 600.0, (len(ids), 2))
    a = math.radians(turn_deg)
    R = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    seen_xy = (true_xy - np.asarray(shift)) @ R   # the calibration's own frame
    truth = {"cards": [{"id": i, "center_mm": list(map(float, p)), "height_mm": 0.0}
                       for i, p in zip(ids, true_xy)]}
    record = {"cards": [{"id": i, "center_mm": list(map(float, p)), "angle_deg": 0.0}
                        for i, p in zip(ids, seen_xy)], "pyramids": []}
    return record, truth


def test_the_right_names_align_the_record_exactly() -> None:
    record, truth = _tables(30.0, (40.0, -25.0))
    moved, errs = align(record, truth)
    assert max(errs) < 1e-6
    for got, want in zip(moved["cards"], truth["cards"]):
        assert np.allclose(got["center_mm"], want["center_mm"], atol=1e-6)


def test_one_card_named_wrong_leaves_the_others_in_place() -> None:
    record, truth = _tables(30.0, (40.0, -25.0))
    # the card at index 0 is read as cups-07, whose true place is elsewhere
    record["cards"][0]["id"] = "cups-07"
    moved, errs = align(record, truth)
    for got, want in zip(moved["cards"][1:], truth["cards"][1:]):
        assert np.allclose(got["center_mm"], want["center_mm"], atol=1e-6)
    assert sorted(errs)[-1] > 25.0 and sorted(errs)[-2] < 1e-6
