"""Two finds where only one solid fits are one pyramid (SAME_GROUND): the ground each would
stand on (:func:`geometry.ground_footprint_mm`) overlaps too much."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

cv2 = pytest.importorskip("cv2")

import vision.pyramids.find as find  # noqa: E402
from vision.pyramids.find import PyramidFind  # noqa: E402
from vision.pyramids.geometry import SIZES_MM, ground_footprint_mm  # noqa: E402

#: a camera high over the middle of the mat: little parallax, as on most tables
CAMERA = np.array([400.0, 300.0, 900.0])


def _find(color: str, pips: int, x: float, y: float, upright: bool = True,
          pointing: float | None = None, confidence: float = 0.9) -> PyramidFind:
    return PyramidFind(color, pips, upright, pointing, (x, y), confidence)


def _area(poly: np.ndarray) -> float:
    return float(cv2.contourArea(poly.astype(np.float32)))


@pytest.mark.parametrize("pips", [1, 2, 3])
def test_an_upright_pyramid_stands_on_its_base_inscribed_circle(pips: int) -> None:
    side = SIZES_MM[pips][0]
    disc = ground_footprint_mm(pips, True, None, np.array([100.0, 50.0]))
    assert np.allclose(np.hypot(disc[:, 0] - 100.0, disc[:, 1] - 50.0), side / 2)
    # a little under the circle's area (a polygon inside it), well under the square's
    assert 0.95 * math.pi * (side / 2) ** 2 < _area(disc) < math.pi * (side / 2) ** 2


@pytest.mark.parametrize("pointing", [0.0, 75.0, 200.0])
def test_a_lying_pyramid_covers_more_ground_along_where_it_points(pointing: float) -> None:
    side, height = SIZES_MM[3]
    hull = ground_footprint_mm(3, False, pointing, np.array([0.0, 0.0]))
    a = math.radians(pointing)
    along = hull @ np.array([math.cos(a), math.sin(a)])
    across = hull @ np.array([-math.sin(a), math.cos(a)])
    # from the base's edge to the apex: about the slant height; across: the base's side
    assert along.max() - along.min() > 0.9 * math.hypot(height, side / 2)
    assert across.max() - across.min() == pytest.approx(side, abs=0.5)
    assert along.max() > -along.min()   # the reference point is nearer the base than the apex


def test_two_reads_of_one_upright_pyramid_are_one_find(finder: Any,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    # 8 mm apart: their base circles (7.15 mm radius) overlap by more than a third; the
    # silhouettes (IoU under SAME_IOU) and the 6 mm rule alone keep both
    a, b = _find("clear", 1, 300.0, 200.0, confidence=0.95), _find("clear", 1, 308.0, 200.0)
    assert finder._one_per_pyramid([b, a], CAMERA) == [a]
    monkeypatch.setattr(find, "SAME_GROUND", 0.0)
    assert finder._one_per_pyramid([b, a], CAMERA) == [a, b]


def test_touching_neighbours_of_one_colour_stay_two(finder: Any) -> None:
    # side by side, bases touching (as on a crowded card), and a little misplaced
    ps = [_find("red", 1, 300.0, 200.0), _find("red", 2, 316.5, 200.5),
          _find("red", 3, 300.0, 223.0, upright=False, pointing=90.0)]
    assert len(finder._one_per_pyramid(ps, CAMERA)) == 3


def test_neighbours_read_toward_each_other_stay_two(finder: Any) -> None:
    # tests/test_pyramid_find.py's touching reds (1-pip at 450, 2-pip at 468) as the finder
    # placed them: the 1-pip 4 mm toward the 2-pip. Their grounds overlap by a quarter of the
    # 1-pip's, an eighth of the 2-pip's: the share of the larger keeps them apart
    ps = [_find("red", 2, 466.1, 300.3, confidence=1.0), _find("red", 1, 454.1, 300.1),
          _find("red", 1, 452.1, 322.5, upright=False, pointing=90.8)]
    assert len(finder._one_per_pyramid(ps, CAMERA)) == 3


def test_two_colours_cannot_stand_in_one_place_either(finder: Any,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # one pyramid read twice, as white and as clear: the surer read stays
    ps = [_find("white", 1, 300.0, 200.0), _find("clear", 1, 308.0, 200.0, confidence=0.95)]
    assert finder._one_per_pyramid(ps, CAMERA) == [ps[1]]
    monkeypatch.setattr(find, "SAME_GROUND", 0.0)
    assert len(finder._one_per_pyramid(ps, CAMERA)) == 2


def _one_pyramid_in_full(a: PyramidFind, ha: np.ndarray, b: PyramidFind, hb: np.ndarray
                         ) -> bool:
    """find._same_pyramid's rule, every pair tested in full: the bases near, the silhouettes
    overlapping, or one's base well inside the other's silhouette."""
    return (math.dist(a.base_center_mm, b.base_center_mm) <= find.SAME_BASE_MM
            or find._iou(ha, hb) > find.SAME_IOU
            or cv2.pointPolygonTest(hb.astype(np.float32), a.base_center_mm, True) > 3.0
            or cv2.pointPolygonTest(ha.astype(np.float32), b.base_center_mm, True) > 3.0)


def test_two_finds_whose_boxes_are_apart_are_told_apart_without_the_overlap(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """_same_pyramid takes the silhouettes' boxes and answers from them where they are apart
    (the overlap's test is the costly part); it answered in full alone, and its callers
    asked _apart first themselves."""
    from vision.pyramids.geometry import footprint_mm

    rng = np.random.default_rng(7)
    finds = [_find("red", int(rng.integers(1, 4)), rng.uniform(0, 200), rng.uniform(0, 150),
                   bool(rng.random() < 0.5), float(rng.uniform(0, 360))) for _ in range(40)]
    shapes = []
    for f in finds:
        fp = footprint_mm(f.pips, f.upright, f.pointing_deg or 0.0, np.array(f.base_center_mm),
                          CAMERA)
        hull = cv2.convexHull(fp.astype(np.float32)).reshape(-1, 2)
        shapes.append((f, hull, find._box(hull)))
    overlaps: list[int] = []
    iou = find._iou
    monkeypatch.setattr(find, "_iou", lambda a, b: overlaps.append(1) or iou(a, b))
    same = apart = 0
    for i, (a, ha, ba) in enumerate(shapes):
        for b, hb, bb in shapes[i + 1:]:
            before = len(overlaps)
            said = find._same_pyramid(a, ha, ba, b, hb, bb)
            if find._apart(a, ba, b, bb):
                assert len(overlaps) == before and not said
                apart += 1
            else:
                assert said == _one_pyramid_in_full(a, ha, b, hb)
                same += said
    assert apart > 100 and same > 5


def _plain_one_per_pyramid(finds: list[PyramidFind], cam: np.ndarray) -> list[PyramidFind]:
    """The rule the plain way: in confidence order, a find stays unless it is one pyramid
    with one kept (every pair tested in full)."""
    from vision.pyramids.geometry import footprint_mm

    keep: list[tuple[PyramidFind, np.ndarray, np.ndarray]] = []
    for f in sorted(finds, key=lambda f: -f.confidence):
        fp = footprint_mm(f.pips, f.upright, f.pointing_deg or 0.0, np.array(f.base_center_mm),
                          cam)
        hull = cv2.convexHull(fp.astype(np.float32)).reshape(-1, 2)
        ground = ground_footprint_mm(f.pips, f.upright, f.pointing_deg,
                                     np.array(f.base_center_mm))
        if all(not _one_pyramid_in_full(f, hull, k, h) and not find._same_ground(f, ground, k, g)
               for k, h, g in keep):
            keep.append((f, hull, ground))
    return [k for k, _, _ in keep]


@pytest.mark.parametrize("seed", range(6))
def test_a_crowded_table_keeps_what_testing_every_pair_keeps(seed: int) -> None:
    """Pairs whose silhouettes' boxes are apart are passed over without the overlap test:
    the same finds kept, on tables where many are near, touching or one pyramid read
    twice."""
    rng = np.random.default_rng(seed)
    cams = [CAMERA, np.array([-300.0, 900.0, 500.0])]     # and one low, off the mat
    finds = []
    for _ in range(60):
        x, y = rng.uniform(0, 300), rng.uniform(0, 200)
        upright = bool(rng.random() < 0.5)
        finds.append(_find("red", int(rng.integers(1, 4)), x, y, upright,
                           None if upright else float(rng.uniform(0, 360)),
                           float(rng.uniform(0.1, 1.0))))
        if rng.random() < 0.3:   # a second read of it, a few mm off
            finds.append(replace(finds[-1], base_center_mm=(x + rng.normal(0, 4),
                                                             y + rng.normal(0, 4)),
                                 confidence=finds[-1].confidence * 0.9))
    finder = find.PyramidFinder.__new__(find.PyramidFinder)
    for cam in cams:
        want = _plain_one_per_pyramid(finds, cam)
        assert 10 < len(want) < len(finds)
        assert finder._one_per_pyramid(finds, cam) == want
