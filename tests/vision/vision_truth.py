"""Helpers of the table-pipeline tests (a module of its own name: every test folder has a
``conftest``, so ``from conftest import`` could pick another folder's).

:class:`TruthBoxes` is a TEST DOUBLE of the card detector: it returns the true card boxes of
the rendered image it is shown (from the renderer's truth record beside the image), reduced
to what a detector gives (centre, long-axis direction mod 180, size, score). The pipeline
must still cut each card out and tell its id and its art's top itself. The real detector
(``models/cards-obb.onnx``) is tested as well wherever it is shipped.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_images"


def image_key(image: np.ndarray) -> str:
    return hashlib.sha1(np.ascontiguousarray(image).tobytes()).hexdigest()


def truth_of(image_path: Path) -> dict[str, Any]:
    return json.loads(image_path.with_suffix(".json").read_text(encoding="utf-8"))


class TruthBoxes:
    """Test double of the card detector (:meth:`detect`) and of the pyramid finder
    (:meth:`find`): the true boxes and pyramids of the images registered with :meth:`add`,
    recognised by their decoded pixels; for any other image (e.g. the pipeline's undistorted
    copy) the truth in ``fallback`` when set, else nothing."""

    def __init__(self, model: Any = None, threads: int = 2) -> None:
        self.by_key: dict[str, dict[str, Any]] = {}
        self.fallback: dict[str, Any] | None = None
        self.calls = 0

    def add(self, image_path: Path) -> np.ndarray:
        image = cv2.imread(str(image_path), cv2.IMREAD_COLOR)
        assert image is not None, image_path
        self.by_key[image_key(image)] = truth_of(image_path)
        return image

    def detect(self, image: np.ndarray, calib: Any, mat: Any) -> Any:
        from vision.detection.cards import CardBoxes

        self.calls += 1
        truth = self.by_key.get(image_key(image), self.fallback)
        cards = [] if truth is None else [c for c in truth["cards"] if c.get("in_frame", True)]
        if not cards:
            return CardBoxes.empty()
        size = truth["deck"]["card_size_mm"]
        return CardBoxes(
            centers_mm=np.array([c["center_mm"] for c in cards], np.float64),
            angles_deg=np.array([float(c["angle_deg"]) % 180.0 for c in cards]),
            sizes_mm=np.array([[min(size), max(size)]] * len(cards), np.float64),
            scores=np.full(len(cards), 0.9))

    def find(self, image: np.ndarray, calib: Any) -> list[dict[str, Any]]:
        truth = self.by_key.get(image_key(image), self.fallback)
        keys = ("color", "pips", "upright", "pointing_deg", "base_center_mm", "confidence")
        return [] if truth is None else [{k: p[k] for k in keys} for p in truth["pyramids"]
                                         if p.get("in_frame", True)]


def pyramids_on_bare_mat(tarot: Any, *pyramids: Any) -> tuple[np.ndarray, Any, dict[str, Any]]:
    """(image, calibration, truth) of ``pyramids`` (``PyramidPlacement``) rendered on the
    bare default mat by a camera tilted 8 degrees, seeded; calibrated from the markers with
    the camera's own lens."""
    from calibration.mat import DEFAULT_MAT
    from calibration.table import Intrinsics, TableCalibrator
    from vision.synth.camera import camera_over_mat
    from vision.synth.render import plain_style, render
    from vision.synth.scene import TableScene

    cam = camera_over_mat(DEFAULT_MAT, (1920, 1080), tilt=8.0, yaw=3.0, tilt_dir=200.0)
    image, truth = render(TableScene(pyramids=list(pyramids)), tarot, DEFAULT_MAT, cam,
                          plain_style((95, 120, 85), seed=3))
    calib = TableCalibrator(DEFAULT_MAT, Intrinsics(cam.K, cam.dist)).calibrate(image)
    return image, calib, truth
