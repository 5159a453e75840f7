"""The int8 copies of the pyramid finder's closer-patch readers (vision/pyramids/quantize.py):
the finder runs them, each is a copy of its float file (a float file trained anew without a
new copy fails here), and the quantiser makes one from a cut."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from vision_truth import pyramids_on_bare_mat

from vision.pyramids.classifier import (COLOR_READ_CLASSES, COLOR_READ_MODEL, POINT_CLASSES,
                                        POINT_MODEL, SIZE_CLASSES, SIZE_MODEL,
                                        WHITE_CLEAR_CLASSES, WHITE_CLEAR_MODEL, int8_name)
from vision.pyramids.verify import VERIFY_MODEL

READERS = {SIZE_MODEL: SIZE_CLASSES, POINT_MODEL: POINT_CLASSES,
           WHITE_CLEAR_MODEL: WHITE_CLEAR_CLASSES, COLOR_READ_MODEL: COLOR_READ_CLASSES}


#: the pyramids the fixture cuts: colour, pips, upright, base centre (mm), pointing (deg)
PLACED = [("white", 2, True, (300.0, 300.0), None), ("red", 3, False, (480.0, 310.0), 40.0),
          ("clear", 1, True, (380.0, 420.0), None), ("blue", 1, False, (220.0, 200.0), 200.0),
          ("yellow", 2, False, (560.0, 180.0), 300.0), ("black", 3, True, (150.0, 380.0), None),
          ("clear", 2, False, (640.0, 300.0), 120.0), ("white", 1, False, (300.0, 150.0), 250.0)]
#: which of them each reader's answer means something for (the pointing reader is asked
#: about lying pyramids, the white-or-clear reader about pale ones)
ASKED = {SIZE_MODEL: [True] * len(PLACED),
         POINT_MODEL: [not p[2] for p in PLACED],
         WHITE_CLEAR_MODEL: [p[0] in ("white", "clear") for p in PLACED],
         COLOR_READ_MODEL: [True] * len(PLACED)}


@pytest.fixture(scope="module")
def pyramid_patches(tarot: Any) -> dict[float, np.ndarray]:
    """Patches (by span, mm) around the pyramids of :data:`PLACED`, cut as the finder cuts
    them."""
    from calibration.mat import DEFAULT_MAT
    from vision.pyramids.colors import default_model
    from vision.pyramids.find import Looker
    from vision.synth.scene import PyramidPlacement

    placed = [PyramidPlacement(c, n, up, at, deg) for c, n, up, at, deg in PLACED]
    image, calib, _ = pyramids_on_bare_mat(tarot, *placed)
    look = Looker(DEFAULT_MAT, default_model()).look(image, calib)
    centres = np.array([p[3] for p in PLACED])
    return {56.0: look.patches(image, centres, 56.0)}


def test_the_finder_runs_the_int8_copies_and_the_setting_turns_them_off(monkeypatch):
    import vision.pyramids.find as find

    finder = find.PyramidFinder(_mat())
    runs = {r.path.name for r in (finder.sizer, finder.pointer, finder.white_clear,
                                  finder.color_reader)}
    assert find.READERS_INT8 == set(READERS)
    assert runs == {int8_name(n) for n in READERS}
    monkeypatch.setattr(find, "READERS_INT8", frozenset())
    plain = find.PyramidFinder(_mat())
    assert plain.sizer.path.name == SIZE_MODEL and plain.verifier.path.name == VERIFY_MODEL


def _mat() -> Any:
    from calibration.mat import DEFAULT_MAT

    return DEFAULT_MAT


@pytest.mark.parametrize("name", list(READERS))
def test_each_int8_copy_keeps_its_float_files_metadata(name):
    from models import model_path, open_onnx

    _, meta, names = open_onnx(model_path(name))
    _, meta8, names8 = open_onnx(model_path(int8_name(name)))
    assert meta8.get("quantized_from") == name
    assert names8 == names
    assert {k: v for k, v in meta8.items() if k != "quantized_from"} == meta


@pytest.mark.parametrize("name", list(READERS))
def test_each_int8_reader_answers_as_its_float_file(name, pyramid_patches):
    from models import model_path
    from vision.pyramids.classifier import PatchClassifier
    from vision.pyramids.find import _patch_mm

    plain = PatchClassifier(model_path(name), READERS[name])
    copy = PatchClassifier(model_path(int8_name(name)), READERS[name])
    patches = pyramid_patches[_patch_mm(plain)][np.array(ASKED[name])]
    a, b = plain.probs(patches), copy.probs(patches)
    # every answer the same class, no probability moved by more than a little: a copy of
    # another (older) float file differs by far more
    assert (a.argmax(axis=1) == b.argmax(axis=1)).all()
    assert float(np.abs(a - b).max()) < 0.15


def test_the_verifier_runs_in_float():
    import vision.pyramids.find as find

    # its int8 copy turned more true pyramids away at VERIFY_MIN (models/pyramids-size.md)
    assert find.PyramidFinder(_mat()).verifier.path.name == VERIFY_MODEL


def test_the_quantiser_makes_an_int8_copy_from_a_cut(tmp_path, pyramid_patches):
    pytest.importorskip("onnx")
    pytest.importorskip("sympy")
    import shutil

    from models import model_path, open_onnx
    from vision.pyramids.quantize import agreement, calibration_inputs, int8_path, main

    src = tmp_path / SIZE_MODEL
    shutil.copy(model_path(SIZE_MODEL), src)
    patches = pyramid_patches[56.0]
    cut = tmp_path / "size.npz"
    np.savez(cut, patches=np.concatenate([patches] * 4),
             scene=np.repeat(np.arange(8), len(patches) // 2 + 1)[:4 * len(patches)])
    assert main([str(src), "--patches", str(cut), "--count", "64", "--check", "16"]) == 0
    dst = int8_path(src)
    assert dst.is_file() and dst.stat().st_size < src.stat().st_size / 2
    assert open_onnx(dst)[1]["quantized_from"] == SIZE_MODEL
    got = agreement(src, dst, calibration_inputs(cut, "images", 32, half=1))
    assert got["same"] >= 0.9 and got["max_diff"] < 0.3


def test_the_quantiser_names_a_cut_without_patches(tmp_path, capsys):
    pytest.importorskip("onnx")
    from models import model_path

    cut = tmp_path / "empty.npz"
    np.savez(cut, labels=np.zeros(3))
    from vision.pyramids.quantize import main

    assert main([str(model_path(SIZE_MODEL)), "--patches", str(cut)]) == 1
    assert "empty.npz: no patches in it" in capsys.readouterr().err
    # the verifier (two inputs) is not one of the readers it copies
    np.savez(cut, patches=np.zeros((4, 64, 64, 3), np.uint8))
    assert main([str(model_path(VERIFY_MODEL)), "--patches", str(cut)]) == 1
    assert "2 inputs, expected one patch input" in capsys.readouterr().err
