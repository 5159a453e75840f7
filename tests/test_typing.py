"""The game engines and the core model pass ``mypy --strict`` (DEVELOPERS.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_engines_and_core_are_strictly_typed() -> None:
    pytest.importorskip("mypy")
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental",
         "companion/games", "companion/core", "companion/recording"],
        cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_runtime_and_training_code_type_checks() -> None:
    """The rest of the code (vision, calibration, the app, the model loader) passes mypy at
    the project's settings (pyproject.toml: the training stack and onnxruntime are Any to
    it, so the check reads the same with or without the ``train`` extra)."""
    pytest.importorskip("mypy")
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental",
         "vision", "calibration", "companion", "models"],
        cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
