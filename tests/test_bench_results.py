"""bench/results.py, what every benchmark's section says of the machine and the stack."""

from __future__ import annotations

import cv2
import numpy as np
import onnxruntime

from bench.results import library_versions


def test_the_stack_named_is_the_one_that_ran() -> None:
    """A figure is tied to the library versions that made it (OpenCV 5 reads some things
    differently from 4): the section names those this process has imported."""
    said = library_versions()
    assert f"numpy {np.__version__}" in said
    assert f"onnxruntime {onnxruntime.__version__}" in said
    # (the wheel's version has a fourth part, cv2's the first three of it)
    assert f"OpenCV {cv2.__version__}" in said
