"""A hue's size is read from its silhouette as well as from the shape classifier: a classifier
leaning to the wrong size is overruled by how each size's solid fits the colour's pixels
(rendered scene, seeded)."""

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

TRUE_PIPS = {(300.0, 300.0): 3, (600.0, 330.0): 1}


class LeaningShape:
    """Stands in for pyramids-shape.onnx: upright, and 60:40 for a size one off the truth."""

    names = SHAPE_CLASSES

    def __init__(self, wrong: dict[tuple[float, float], int]) -> None:
        self.wrong = wrong
        self.centers: list[np.ndarray] = []

    def probs(self, patches: np.ndarray) -> np.ndarray:
        out = np.zeros((len(patches), len(self.names)), np.float32)
        for row, c in zip(out, self.centers):
            key = min(self.wrong, key=lambda k: float(np.hypot(*(np.subtract(k, c)))))
            truth = TRUE_PIPS[key]
            row[self.names.index(f"{self.wrong[key]}U")] = 0.6
            row[self.names.index(f"{truth}U")] = 0.4
        return out


@pytest.fixture(scope="module")
def shot(tarot: Any) -> tuple[np.ndarray, Any]:
    cam = camera_over_mat(DEFAULT_MAT, (1920, 1080), tilt=10.0, yaw=5.0, tilt_dir=60.0)
    scene = TableScene(pyramids=[
        PyramidPlacement("red", TRUE_PIPS[(300.0, 300.0)], True, (300.0, 300.0), yaw_deg=20.0),
        PyramidPlacement("blue", TRUE_PIPS[(600.0, 330.0)], True, (600.0, 330.0), yaw_deg=0.0)])
    image, _ = render(scene, tarot, DEFAULT_MAT, cam, plain_style((70, 95, 120), seed=5))
    calib = TableCalibrator(DEFAULT_MAT, Intrinsics(cam.K, cam.dist)).calibrate(image)
    assert calib.calibrated
    return image, calib


def _find(image: np.ndarray, calib: Any, weight: float, monkeypatch: Any) -> dict[str, int]:
    import vision.pyramids.find as find_mod
    from vision.pyramids import PyramidFinder

    monkeypatch.setattr(find_mod, "SIZE_FIT_WEIGHT", weight)
    finder = PyramidFinder(DEFAULT_MAT)
    stub = LeaningShape({(300.0, 300.0): 2, (600.0, 330.0): 2})
    real_how = finder.how
    finder.how = stub  # type: ignore[assignment]
    # the stub needs each patch's candidate: record them as the finder asks
    look = finder.look(image, calib)
    centers = np.array([c.center_mm for c in look.candidates])
    keep = np.flatnonzero(finder.what.probs(look.patches(image, centers))[
        :, finder.what.column("none")] < finder.max_none)
    stub.centers = list(centers[keep])
    assert set(real_how.names) == set(stub.names) and len(SHAPE_CLASSES) == 3 * (1 + SECTORS)
    return {f.color: f.pips for f in finder.find(image, calib)}


def test_the_silhouette_overrules_a_classifier_leaning_to_the_wrong_size(shot, monkeypatch):
    image, calib = shot
    assert _find(image, calib, 20.0, monkeypatch) == {"red": 3, "blue": 1}


def test_without_the_fit_the_classifier_size_stands(shot, monkeypatch):
    # the same scene and stub with the fit switched off: the stub's wrong size comes out,
    # so the test above is the fit's doing
    image, calib = shot
    assert _find(image, calib, 0.0, monkeypatch) == {"red": 2, "blue": 2}
