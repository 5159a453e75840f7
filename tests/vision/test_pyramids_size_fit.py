"""A hue's size is read from its silhouette as well as from the shape classifier: a classifier
leaning to the wrong size is overruled by how each size's solid fits the colour's pixels
(rendered scenes, seeded)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

cv2 = pytest.importorskip("cv2")
pytest.importorskip("onnxruntime")

from calibration.mat import DEFAULT_MAT  # noqa: E402
from calibration.table import Intrinsics, TableCalibrator  # noqa: E402
from vision.pyramids.classifier import SECTORS, SHAPE_CLASSES  # noqa: E402
from vision.synth.camera import camera_over_mat  # noqa: E402
from vision.synth.render import plain_style, render  # noqa: E402
from vision.synth.scene import PyramidPlacement, TableScene  # noqa: E402

#: one scene per pyramid (colour, true pips, yaw), each read by a stand-in leaning to size 2
PYRAMIDS = (("red", 3, 20.0), ("blue", 1, 0.0))
WRONG_PIPS = 2


class LeaningShape:
    """Stands in for pyramids-shape.onnx: upright, ``lean`` (60:40 by default) for WRONG_PIPS
    against the truth."""

    names = SHAPE_CLASSES

    def __init__(self, true_pips: int, lean: float = 0.6) -> None:
        self.true_pips = true_pips
        self.lean = lean

    def probs(self, patches: np.ndarray) -> np.ndarray:
        out = np.zeros((len(patches), len(self.names)), np.float32)
        out[:, self.names.index(f"{WRONG_PIPS}U")] = self.lean
        out[:, self.names.index(f"{self.true_pips}U")] = 1.0 - self.lean
        return out


@pytest.fixture(scope="module")
def shots(tarot: Any) -> list[tuple[np.ndarray, Any, int]]:
    cam = camera_over_mat(DEFAULT_MAT, (1920, 1080), tilt=10.0, yaw=5.0, tilt_dir=60.0)
    out = []
    for (color, pips, yaw), xy in zip(PYRAMIDS, ((300.0, 300.0), (600.0, 330.0))):
        scene = TableScene(pyramids=[PyramidPlacement(color, pips, True, xy, yaw_deg=yaw)])
        image, _ = render(scene, tarot, DEFAULT_MAT, cam, plain_style((70, 95, 120), seed=5))
        calib = TableCalibrator(DEFAULT_MAT, Intrinsics(cam.K, cam.dist)).calibrate(image)
        assert calib.calibrated
        out.append((image, calib, pips))
    return out


def _find(shots: list[tuple[np.ndarray, Any, int]], weight: float,
          monkeypatch: Any, lean: float = 0.6) -> dict[str, int]:
    import vision.pyramids.find as find_mod
    from vision.pyramids import PyramidFinder

    monkeypatch.setattr(find_mod, "SIZE_FIT_WEIGHT", weight)
    # the size reader (pyramids-size.onnx) left out: these scenes test the fit alone
    finder = PyramidFinder(DEFAULT_MAT, size_model=False)
    assert set(finder.how.names) == set(LeaningShape.names)
    assert len(SHAPE_CLASSES) == 3 * (1 + SECTORS)
    read: dict[str, int] = {}
    for image, calib, pips in shots:
        finder.how = LeaningShape(pips, lean)  # type: ignore[assignment]
        read.update({f.color: f.pips for f in finder.find(image, calib)})
    return read


def test_the_silhouette_overrules_a_classifier_leaning_to_the_wrong_size(shots, monkeypatch):
    from vision.pyramids.find import SIZE_FIT_WEIGHT

    # at the weight the earlier shape network had, a 60:40 lean is overruled; at the
    # shipped one (5, for a network that is surer and more often right) a 52:48 lean is
    assert _find(shots, 20.0, monkeypatch) == {"red": 3, "blue": 1}
    assert _find(shots, SIZE_FIT_WEIGHT, monkeypatch, lean=0.52) == {"red": 3, "blue": 1}


def test_without_the_fit_the_classifier_size_stands(shots, monkeypatch):
    # the same scenes and stand-ins with the fit switched off: the stub's wrong size comes out,
    # so the test above is the fit's doing
    assert _find(shots, 0.0, monkeypatch) == {"red": 2, "blue": 2}
