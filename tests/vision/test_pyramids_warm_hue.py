"""A hue the colour table proposed is read where the heat map is warm even when the colour
classifier calls it ``none`` (vision/pyramids/find.py: HUE_WARM, PyramidFinder._warm_hue);
white, clear and black, and the heat map's own candidates, are left to the second opinion."""

from __future__ import annotations

from typing import Any

import numpy as np

from vision.pyramids.classifier import COLOR_CLASSES
from vision.pyramids.find import HUE_WARM, PyramidFinder, Reads
from vision.pyramids.proposals import BACKGROUND, Candidate


def _p(**p: float) -> np.ndarray:
    out = np.zeros(len(COLOR_CLASSES), np.float32)
    for k, v in p.items():
        out[COLOR_CLASSES.index(k)] = v
    return out


class _Names:
    names = COLOR_CLASSES


def _finder(heat: bool = True) -> Any:
    finder: Any = PyramidFinder.__new__(PyramidFinder)   # no models needed
    finder.what = _Names()
    finder.heat = object() if heat else None
    return finder


def _reads(rows: list[tuple[np.ndarray, float, str]]) -> Reads:
    cands = [Candidate((10.0 * k, 0.0), BACKGROUND, 0.0, src) for k, (_, _, src) in
             enumerate(rows)]
    return Reads(cands, np.array([c.center_mm for c in cands]),
                 np.array([h for _, h, _ in rows], np.float32),
                 np.array([src == "heat" for _, _, src in rows]),
                 np.zeros((len(rows), 64, 64, 3), np.uint8),
                 np.stack([p for p, _, _ in rows]))


def test_only_warm_hues_from_the_colour_table_are_read_against_none() -> None:
    warm, cool = HUE_WARM + 0.05, HUE_WARM - 0.05
    reads = _reads([
        (_p(none=0.9, yellow=0.1), warm, "blob"),     # read
        (_p(none=0.9, green=0.1), warm, "part"),      # read
        (_p(none=0.9, yellow=0.1), cool, "blob"),     # not warm enough
        (_p(none=0.9, yellow=0.1), warm, "heat"),     # the heat map's own: HEAT_HUE_*
        (_p(none=0.9, white=0.1), warm, "blob"),      # light: the second opinion's
        (_p(none=0.9, black=0.06, red=0.04), warm, "peak"),   # likelier black than a hue
        (_p(none=0.9, red=0.06, black=0.04), warm, "peak"),   # likelier a hue: read
    ])
    assert _finder()._warm_hue(reads).tolist() == [True, True, False, False, False, False,
                                                   True]


def test_without_a_heat_map_nothing_is_read_against_none() -> None:
    reads = _reads([(_p(none=0.9, yellow=0.1), 0.0, "blob")])
    assert _finder(heat=False)._warm_hue(reads).tolist() == [False]
