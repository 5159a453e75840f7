"""Patch-classifier conventions (labels, mirroring, pointing) and bad model files."""

from __future__ import annotations

import numpy as np
import pytest

from vision.pyramids.classifier import (
    COLOR_CLASSES,
    SECTORS,
    SHAPE_CLASSES,
    mirror_shape_label,
    patch_up_deg,
    pointing_from_sectors,
    shape_label,
)


def test_class_lists():
    assert COLOR_CLASSES[0] == "none" and len(COLOR_CLASSES) == 11
    assert len(SHAPE_CLASSES) == 3 * (1 + SECTORS) == len(set(SHAPE_CLASSES))


@pytest.mark.parametrize("pips,upright,rel,want", [
    (1, True, None, "1U"), (2, False, 0.0, "2L00"), (3, False, 29.0, "3L01"),
    (3, False, -20.0, "3L11"), (3, False, -10.0, "3L00"), (2, False, 344.0, "2L11"),
    (1, False, 346.0, "1L00"),
    (2, False, 180.0, "2L06"),
])
def test_shape_label(pips, upright, rel, want):
    assert shape_label(pips, upright, rel) == want


def test_mirroring_flips_the_sector_and_keeps_upright():
    assert mirror_shape_label("2U") == "2U"
    assert mirror_shape_label("1L00") == "1L00"
    assert mirror_shape_label("1L03") == "1L09"   # apex right -> apex left
    assert mirror_shape_label("3L06") == "3L06"   # straight down stays
    for name in SHAPE_CLASSES:
        assert mirror_shape_label(mirror_shape_label(name)) == name


def test_patch_up_points_away_from_the_nadir():
    up = patch_up_deg(np.array([[600.0, 300.0], [400.0, 500.0], [400.0, 100.0]]),
                      np.array([400.0, 300.0, 1200.0]))
    assert np.allclose(up, [0.0, 90.0, 270.0])


def test_pointing_from_sectors():
    p = np.zeros(SECTORS)
    p[3] = 1.0
    ang, conc = pointing_from_sectors(p)
    assert ang == pytest.approx(90.0) and conc == pytest.approx(1.0)
    # half way between sectors 11 and 0: 345 degrees
    p = np.zeros(SECTORS)
    p[11] = p[0] = 0.5
    ang, _ = pointing_from_sectors(p)
    assert ang == pytest.approx(345.0)


def test_bad_model_files_are_named(tmp_path):
    pytest.importorskip("onnxruntime")
    from models import ModelError
    from vision.pyramids.classifier import PatchClassifier

    junk = tmp_path / "pyramids-color.onnx"
    junk.write_bytes(b"not a model")
    with pytest.raises(ModelError, match="pyramids-color.onnx"):
        PatchClassifier(junk, COLOR_CLASSES)
    with pytest.raises(ModelError, match="missing"):
        PatchClassifier(tmp_path / "absent.onnx", COLOR_CLASSES)


def test_a_model_with_other_classes_is_refused(tmp_path):
    pytest.importorskip("onnxruntime")
    from models import ModelError, model_path
    from vision.pyramids.classifier import SHAPE_MODEL, PatchClassifier

    try:
        shape = model_path(SHAPE_MODEL)
    except ModelError:
        pytest.skip("the shape model is not shipped")
    with pytest.raises(ModelError, match="not the expected"):
        PatchClassifier(shape, COLOR_CLASSES)
