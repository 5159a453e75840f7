"""Hues the colour table misjudges (vision/pyramids/find.py): one it proposed is read where
the heat map is warm even when the colour classifier calls it ``none`` (HUE_WARM,
PyramidFinder._warm_hue; white, clear and black, and the heat map's own candidates, are left
to the second opinion), and one only the heat map proposed is found with no plastic of its
colour seen when both the colour classifier and the second opinion are sure
(HEAT_HUE_TRUST), or the second opinion alone is all but certain (HEAT_HUE_SURE)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from vision.pyramids.classifier import COLOR_CLASSES
from vision.pyramids.find import (HEAT_HUE_SURE, HEAT_HUE_TRUST, HUE_WARM, MIN_IOU_HUE,
                                   PyramidFinder, Reads)
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


class _Seg:
    def __init__(self) -> None:
        # not one pixel of any colour: the colour table saw only cloth
        self.label = np.full((200, 200), BACKGROUND, np.uint8)


class _Look:
    seg = _Seg()
    camera = np.array([100.0, 100.0, -1200.0])
    blurred = False


def _upright_small() -> np.ndarray:
    from vision.pyramids.classifier import SHAPE_CLASSES

    p = np.zeros(len(SHAPE_CLASSES), np.float32)
    p[SHAPE_CLASSES.index("1U")] = 1.0
    return p


def _bare_finder() -> Any:
    from vision.pyramids.classifier import SHAPE_CLASSES, PatchClassifier

    finder = _finder()
    finder.what = PatchClassifier.__new__(PatchClassifier)
    finder.what.names = COLOR_CLASSES
    finder.how = PatchClassifier.__new__(PatchClassifier)
    finder.how.names = SHAPE_CLASSES
    finder.profile = None
    finder.min_iou_hue = MIN_IOU_HUE
    finder.max_none = 0.5
    finder.max_none_light = 0.04
    return finder


@pytest.mark.parametrize("p_none, p_ver, found", [
    (0.0, HEAT_HUE_TRUST + 0.05, True),
    (0.0, HEAT_HUE_TRUST - 0.1, False),
    # the colour classifier unsure: the verifier alone must be HEAT_HUE_SURE sure
    (0.9, HEAT_HUE_SURE, True),
    (0.9, HEAT_HUE_SURE - 0.01, False)])
def test_a_hue_with_no_plastic_seen_is_found_only_when_the_networks_are_sure(
        p_none: float, p_ver: float, found: bool) -> None:
    cand = Candidate((100.0, 120.0), BACKGROUND, 0.0, "heat")
    f = _bare_finder()._read(_Look(), cand, _p(none=p_none, red=1.0 - p_none),
                             _upright_small(), 0.0, heat=0.7, p_ver=p_ver)
    assert (f is not None) == found
    if f is not None:
        assert (f.color, f.pips, f.upright) == ("red", 1, True)
        assert f.extra["iou"] == 0.0


class _NamesWhite:
    """Stands in for a colour profile that names the plastic white."""

    def classify(self, look: Any, center: np.ndarray) -> str:
        return "white"


def test_a_warm_hue_a_colour_profile_names_white_is_not_read_against_none() -> None:
    # the classifier's likeliest colour is yellow (so _warm_hue keeps it), but the profile
    # names it white, which is never read where the classifier calls it none
    from vision.pyramids.classifier import PatchClassifier

    finder = _finder()
    finder.what = PatchClassifier.__new__(PatchClassifier)
    finder.what.names = COLOR_CLASSES
    finder.max_none = 0.5
    finder.max_none_light = 0.04
    cand = Candidate((100.0, 120.0), BACKGROUND, 0.0, "blob")
    warm = HUE_WARM + 0.1
    finder.profile = None
    assert finder._first_checks(_Look(), cand, _p(none=0.9, yellow=0.1), warm)[0] == "yellow"
    finder.profile = _NamesWhite()
    assert finder._first_checks(_Look(), cand, _p(none=0.9, yellow=0.1), warm) is None
    assert finder._first_checks(_Look(), cand, _p(none=0.3, yellow=0.7), warm) is not None
