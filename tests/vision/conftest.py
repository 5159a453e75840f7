"""Fixtures of the table-pipeline tests (helpers in vision_truth.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("cv2")

from vision_truth import ROOT  # noqa: E402


@pytest.fixture(scope="session")
def real_detector_path() -> Path | None:
    path = ROOT / "models" / "cards-obb.onnx"
    return path if path.is_file() else None
