"""Steadying the shape classifier's unsure reads (vision/pyramids/find.py: SHAPE_SURE,
SHAPE_SHIFT_MM): which reads count as unsure, and that those alone are averaged with reads
beside them."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from vision.pyramids.classifier import SHAPE_CLASSES
from vision.pyramids.find import SHAPE_SHIFT_MM, SHAPE_SURE, PyramidFinder, shape_sureness

NAMES = list(SHAPE_CLASSES)


def _row(**p: float) -> np.ndarray:
    out = np.zeros(len(NAMES), np.float32)
    for k, v in p.items():
        out[NAMES.index(k.lstrip("_"))] = v
    return out


def test_sureness_is_the_weaker_of_size_and_pose():
    ps = np.stack([
        _row(_1U=1.0),                              # sure
        _row(_1U=0.6, _1L03=0.4),                   # size sure, pose 60:40
        _row(_2U=0.5, _3U=0.5),                     # pose sure, size 50:50
        _row(_3L00=0.45, _3L01=0.45, _3U=0.1),      # lying 3 over two sectors: 0.9
    ])
    assert shape_sureness(ps, NAMES) == pytest.approx([1.0, 0.6, 0.5, 0.9], abs=1e-6)


class _Looks:
    """Stands in for the finder's Look: records where patches were asked for."""

    def __init__(self) -> None:
        self.asked: list[np.ndarray] = []
        # the nadir at (100, 100): centre 0 of the test lies straight +y of it
        self.camera = np.array([100.0, 100.0, -1200.0])

    def patches(self, image: np.ndarray, centers: np.ndarray) -> np.ndarray:
        self.asked.append(np.array(centers))
        return np.zeros((len(centers), 64, 64, 3), np.uint8)


class _Upright:
    names = NAMES

    def probs(self, patches: np.ndarray) -> np.ndarray:
        return np.tile(_row(_1U=1.0), (len(patches), 1))


def test_only_unsure_reads_are_averaged_with_reads_beside_them():
    finder: Any = PyramidFinder.__new__(PyramidFinder)   # no models needed
    finder.how = _Upright()
    look = _Looks()
    centers = np.array([[100.0, 200.0], [300.0, 400.0]])
    ps = np.stack([_row(_1U=0.4, _1L03=0.6), _row(_2U=1.0)])
    out = finder._steady_shape(look, np.zeros((8, 8, 3), np.uint8), centers, ps)
    # the sure read is left alone, and only the unsure one was looked at again, at the two
    # points SHAPE_SHIFT_MM from it along the line from the nadir (here along +y)
    assert SHAPE_SURE > 0.6
    np.testing.assert_array_equal(out[1], ps[1])
    (asked,) = look.asked
    np.testing.assert_allclose(sorted(asked.tolist()), [[100.0, 200.0 - SHAPE_SHIFT_MM],
                                                        [100.0, 200.0 + SHAPE_SHIFT_MM]])
    # (1 x lying 60:40 + 2 x upright) / 3: upright wins
    assert out[0][NAMES.index("1U")] == pytest.approx((0.4 + 2.0) / 3)
    assert out[0][NAMES.index("1L03")] == pytest.approx(0.6 / 3)
    np.testing.assert_array_equal(ps[0], _row(_1U=0.4, _1L03=0.6))   # input untouched
