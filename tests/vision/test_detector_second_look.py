"""The card detector's second look (vision/detection/cards.py) and what the pipeline keeps
of it (vision/pipeline.py).

Where the network scored a box weakly apart from every box it kept, the canvas is read
again turned by 45 degrees; a box found only there is flagged, and the pipeline keeps it
only where the gallery names a card-sized box surely.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

cv2 = pytest.importorskip("cv2")

from calibration.mat import DEFAULT_MAT  # noqa: E402
from vision.detection.cards import (SECOND_LOOK_DEG, SECOND_LOOK_SEP_MM,  # noqa: E402
                                    CardBoxes, CardDetector, turned_back)
from vision.detection.view import DetectorView  # noqa: E402
from vision.pipeline import TablePipeline, read_image  # noqa: E402
from vision_truth import SAMPLES, TruthBoxes, truth_of  # noqa: E402

SIZE = 320


def _raw(anchors: list[tuple[float, float, float, float, float, float]]) -> np.ndarray:
    """A YOLO OBB output (1, 6, A) of anchors (cx, cy, w, h, score, angle in radians)."""
    return np.array(anchors, np.float32).T[None]


def _turn(deg: float = SECOND_LOOK_DEG) -> np.ndarray:
    turn: np.ndarray = cv2.getRotationMatrix2D(((SIZE - 1) / 2, (SIZE - 1) / 2), deg, 1.0)
    return turn


def test_boxes_carry_their_second_look_flags():
    a = CardBoxes(np.zeros((2, 2)), np.zeros(2), np.ones((2, 2)), np.array([0.9, 0.8]))
    assert a.second_look is None and a.from_second_look.tolist() == [False, False]
    b = CardBoxes(np.ones((1, 2)), np.zeros(1), np.ones((1, 2)), np.array([0.7]),
                  np.array([True]))
    both = CardBoxes.concatenate([a, b])
    assert both.from_second_look.tolist() == [False, False, True]
    assert both.take(np.array([2, 0])).from_second_look.tolist() == [True, False]
    assert CardBoxes.concatenate([a, a]).second_look is None
    with pytest.raises(ValueError, match=r"CardBoxes.second_look: expected shape \(2,\), "
                                         r"got \(3,\)"):
        CardBoxes(np.zeros((2, 2)), np.zeros(2), np.ones((2, 2)), np.ones(2), np.ones(3, bool))


def test_turned_back_puts_a_box_where_it_lies_on_the_canvas():
    turn = _turn()
    # a card at (100, 150) canvas px, its long side 20 degrees below the x axis (y down)
    x, y, direction = 100.0, 150.0, math.radians(20.0)
    tx, ty = turn @ np.array([x, y, 1.0])
    # on the canvas turned counter-clockwise (as seen) by 45 degrees, it runs at -25
    on_turned = direction - math.radians(SECOND_LOOK_DEG)
    # a second anchor in the turned canvas's padded corner: off the canvas once turned back
    raw = _raw([(tx, ty, 40.0, 23.0, 0.8, on_turned), (3.0, 3.0, 40.0, 23.0, 0.9, 0.0)])
    back = turned_back(raw, turn, SECOND_LOOK_DEG, (SIZE, SIZE))
    assert back[0, 0, 0] == pytest.approx(x, abs=1e-3)
    assert back[0, 1, 0] == pytest.approx(y, abs=1e-3)
    assert back[0, -1, 0] == pytest.approx(direction, abs=1e-6)
    assert back[0, 4, 0] == pytest.approx(0.8) and back[0, 4, 1] == 0.0
    # the input is left as it was
    assert raw[0, 0, 0] == pytest.approx(tx)


class _Scripted(CardDetector):
    """The detector with its network replaced by scripted outputs, one per read."""

    def __init__(self, outputs: list[np.ndarray]) -> None:
        self.size, self.iou, self.conf, self.last_view = SIZE, 0.5, 0.35, None
        self.second_look_deg = SECOND_LOOK_DEG
        self.outputs = outputs
        self.reads = 0

    def _run(self, canvas: np.ndarray) -> np.ndarray:
        self.reads += 1
        return self.outputs.pop(0)


def test_a_weak_box_apart_asks_for_a_second_look_and_its_find_is_flagged():
    view = DetectorView.for_mat(DEFAULT_MAT, SIZE)
    canvas = np.full((SIZE, SIZE, 3), 114, np.uint8)
    turn = _turn()
    weak_at = (220.0, 120.0)
    tx, ty = turn @ np.array([*weak_at, 1.0])
    first = _raw([(100.0, 100.0, 23.0, 40.0, 0.9, 0.0), (*weak_at, 23.0, 40.0, 0.2, 0.0)])
    second = _raw([(tx, ty, 23.0, 40.0, 0.7, -math.radians(SECOND_LOOK_DEG))])
    det = _Scripted([first, second])
    boxes = det.detect_canvas(canvas, view)
    assert det.reads == 2
    assert len(boxes) == 2 and boxes.from_second_look.tolist() == [False, True]
    found = view.to_mm(np.array([weak_at]))[0]
    assert np.allclose(boxes.centers_mm[1], found, atol=0.01)
    assert boxes.angles_deg[1] == pytest.approx(90.0, abs=1e-3)   # the long side along y
    assert boxes.scores[1] == pytest.approx(0.7)


def test_no_second_look_without_a_weak_box_apart():
    view = DetectorView.for_mat(DEFAULT_MAT, SIZE)
    canvas = np.full((SIZE, SIZE, 3), 114, np.uint8)
    near_px = 0.5 * SECOND_LOOK_SEP_MM * view.px_per_mm
    # the weak box lies on the kept card (its other anchors), and another is too weak
    first = _raw([(100.0, 100.0, 23.0, 40.0, 0.9, 0.0),
                  (100.0 + near_px, 100.0, 23.0, 40.0, 0.2, 0.5),
                  (250.0, 250.0, 23.0, 40.0, 0.05, 0.0)])
    det = _Scripted([first])
    boxes = det.detect_canvas(canvas, view)
    assert det.reads == 1 and len(boxes) == 1 and boxes.second_look is None
    # and with the second look turned off, a weak box apart asks for nothing
    det = _Scripted([_raw([(100.0, 100.0, 23.0, 40.0, 0.9, 0.0),
                           (250.0, 250.0, 23.0, 40.0, 0.2, 0.0)])])
    det.second_look_deg = 0.0
    assert len(det.detect_canvas(canvas, view)) == 1 and det.reads == 1


def test_the_turned_canvas_finds_the_same_cards_in_the_same_places(real_detector_path):
    """The real network on a sample frame's canvas, turned and read back: every card it
    finds surely on the canvas it finds on the turned one at the same place and angle."""
    if real_detector_path is None:
        pytest.skip("models/cards-obb.onnx is not shipped")
    from calibration.table import TableCalibrator

    path = SAMPLES / "zarcana/0005.jpg"
    image = read_image(path)
    calib = TableCalibrator(DEFAULT_MAT).calibrate(image)
    det = CardDetector(real_detector_path, threads=1)
    det.second_look_deg = 0.0
    plain = det.detect(image, calib, DEFAULT_MAT)
    det.second_look_deg = SECOND_LOOK_DEG
    view = det.view(DEFAULT_MAT)
    assert det.last_view is not None
    turned = det.second_look(det.last_view, view, CardBoxes.empty())
    assert turned.from_second_look.all()
    sure = np.flatnonzero(plain.scores >= 0.8)
    assert len(sure) >= 5
    for i in sure:
        d = np.linalg.norm(turned.centers_mm - plain.centers_mm[i], axis=1)
        j = int(np.argmin(d))
        assert d[j] < 6.0, (plain.centers_mm[i], d[j])
        off = abs((turned.angles_deg[j] - plain.angles_deg[i] + 90.0) % 180.0 - 90.0)
        assert off < 6.0, (plain.angles_deg[i], turned.angles_deg[j])


class _Flagged:
    """A detector double: the true boxes of a sample frame, and one more flagged as found
    only by the second look."""

    def __init__(self, truth_boxes: TruthBoxes, extra: CardBoxes) -> None:
        self.truth, self.extra = truth_boxes, extra

    def detect(self, image, calib, mat):
        return CardBoxes.concatenate([self.truth.detect(image, calib, mat), self.extra])


def _one(center: list[float], angle: float, size: tuple[float, float], score: float
         ) -> CardBoxes:
    return CardBoxes(np.array([center], np.float64), np.array([angle % 180.0]),
                     np.array([size], np.float64), np.array([score]), np.array([True]))


def test_the_pipeline_keeps_a_second_look_box_only_on_a_surely_named_card():
    path = SAMPLES / "zarcana/0000.jpg"
    image = read_image(path)
    truth = truth_of(path)
    cards = [c for c in truth["cards"] if c.get("in_frame", True)]
    short, long = sorted(truth["deck"]["card_size_mm"])
    # a card the detector "missed": the truth's boxes without it, the second look's with it
    gone = max(cards, key=lambda c: c.get("visible", 1.0))
    fake = TruthBoxes()
    fake.add(path)
    key = next(iter(fake.by_key))
    fake.by_key[key] = dict(truth, cards=[c for c in cards if c is not gone])
    occupied = [c["center_mm"] for c in truth["cards"] + truth.get("covered_cards", [])]
    assert all(math.dist(c, (760.0, 320.0)) > 120 for c in occupied)
    trials = {
        "on the missed card": _one(gone["center_mm"], gone["angle_deg"], (short, long), 0.7),
        "on open table": _one([760.0, 320.0], 90.0, (short, long), 0.95),
        "half a card long": _one(gone["center_mm"], gone["angle_deg"], (short, 0.5 * long),
                                 0.7),
    }
    got = {}
    for name, extra in trials.items():
        with TablePipeline(deck="tarot", card_detector=_Flagged(fake, extra),
                           pyramid_finder=TruthBoxes(), threads=1) as p:
            got[name] = p.observe(image, name)
    n = len(cards) - 1
    kept = got["on the missed card"]
    assert len(kept["cards"]) == n + 1 and "boxes_dropped" not in kept
    near = [c for c in kept["cards"] if math.dist(c["center_mm"], gone["center_mm"]) < 10]
    assert [c["id"] for c in near] == [gone["id"]]
    # a sure box on open table would stay if the first look had found it
    # (test_pipeline.py); from the second look it goes
    for name in ("on open table", "half a card long"):
        assert len(got[name]["cards"]) == n, name
        assert got[name]["boxes_dropped"] == 1, name
