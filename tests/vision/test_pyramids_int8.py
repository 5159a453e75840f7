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
    return {span: look.patches(image, centres, span) for span in (56.0, 48.0)}


def test_the_finder_runs_the_int8_copies_and_the_setting_turns_them_off(monkeypatch):
    import vision.pyramids.find as find

    finder = find.PyramidFinder(_mat())
    runs = {r.path.name for r in (finder.sizer, finder.pointer, finder.white_clear,
                                  finder.color_reader)}
    assert find.READERS_INT8 == set(READERS)
    assert runs == {int8_name(n) for n in READERS}
    monkeypatch.setattr(find, "READERS_INT8", frozenset())
    plain = find.PyramidFinder(_mat())
    assert plain.sizer.path.name == SIZE_MODEL
    # the verifier's copy has a setting of its own (VERIFIER_INT8)
    assert plain.verifier.path.name == int8_name(VERIFY_MODEL)


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


VERIFIERS = (VERIFY_MODEL, "pyramids-verify-decktet.onnx")


def test_the_finder_runs_the_verifiers_int8_copies_and_the_setting_turns_them_off(
        monkeypatch):
    import vision.pyramids.find as find
    from vision.pipeline import TablePipeline

    assert find.PyramidFinder(_mat()).verifier.path.name == int8_name(VERIFY_MODEL)
    decktet = TablePipeline(deck="decktet", threads=1)
    assert decktet.pyramid_finder.verifier.path.name == int8_name(VERIFIERS[1])
    monkeypatch.setattr(find, "VERIFIER_INT8", False)
    assert find.PyramidFinder(_mat()).verifier.path.name == VERIFY_MODEL
    assert TablePipeline(deck="decktet", threads=1).verify_model.name == VERIFIERS[1]


@pytest.mark.parametrize("name", VERIFIERS)
def test_each_int8_verifier_keeps_its_float_files_metadata_and_its_head_in_float(name):
    pytest.importorskip("onnx")
    import onnx

    from models import model_path, open_onnx
    from vision.pyramids.quantize import VERIFIER_FLOAT_OPS

    _, meta, _ = open_onnx(model_path(name))
    _, meta8, _ = open_onnx(model_path(int8_name(name)))
    assert meta8.get("quantized_from") == name
    assert {k: v for k, v in meta8.items() if k != "quantized_from"} == meta
    graph = onnx.load(str(model_path(int8_name(name)))).graph
    made = {o: n.op_type for n in graph.node for o in n.output}
    head = [n for n in graph.node if n.op_type in VERIFIER_FLOAT_OPS]
    convs = [n for n in graph.node if n.op_type == "Conv"]
    assert head and convs
    # the head's weights are float; those of the convolutions after the first, int8 ones
    # dequantised
    assert all(made.get(n.input[1]) != "DequantizeLinear" for n in head)
    assert made.get(convs[0].input[1]) != "DequantizeLinear"
    assert all(made.get(n.input[1]) == "DequantizeLinear" for n in convs[1:])


@pytest.mark.parametrize("name", VERIFIERS)
def test_each_int8_verifier_answers_as_its_float_file(name, pyramid_patches, tarot):
    from models import model_path
    from vision.pyramids.classifier import COLOR_CLASSES, COLOR_MODEL, PatchClassifier
    from vision.pyramids.find import VERIFY_MIN
    from vision.pyramids.verify import Verifier, features

    plain = Verifier(model_path(name))
    copy = Verifier(model_path(int8_name(name)))
    patches = pyramid_patches[plain.patch_mm]
    what = PatchClassifier(model_path(COLOR_MODEL), COLOR_CLASSES)
    n = len(patches)
    feats = features(what.probs(patches), what.names, np.full(n, 0.6), np.zeros(n))
    a, b = plain.p_pyramid(patches, feats), copy.p_pyramid(patches, feats)
    # a copy of another verifier differs by far more; none moved across the finder's floor
    assert float(np.abs(a - b).max()) < 0.1
    assert ((a >= VERIFY_MIN) == (b >= VERIFY_MIN)).all()


def test_a_verifiers_int8_copy_is_made_from_its_cut_with_the_head_in_float(
        tmp_path, pyramid_patches):
    pytest.importorskip("onnx")
    pytest.importorskip("sympy")
    import shutil

    from models import model_path, open_onnx
    from vision.pyramids.quantize import main, verifier_batches

    src = tmp_path / VERIFY_MODEL
    shutil.copy(model_path(VERIFY_MODEL), src)
    patches = np.concatenate([pyramid_patches[48.0]] * 4)
    n = len(patches)
    rng = np.random.default_rng(3)
    cut = tmp_path / "samples.npz"
    np.savez(cut, patches48=patches, features=rng.random((n, 13), dtype=np.float32),
             labels=np.zeros(n, np.int8), scene=np.arange(n) % 20)
    # the measurement draws from the scenes whose number ends in 0-4, the check from the rest
    first = verifier_batches(cut, 48.0, 8)
    assert sum(len(b["patch"]) for b in first) == 8
    with np.load(cut) as data:
        feats, scene = data["features"], data["scene"]
    for half, ends in ((0, {0, 1, 2, 3, 4}), (1, {5, 6, 7, 8, 9})):
        rows = np.concatenate([b["features"] for b in verifier_batches(cut, 48.0, n, half)])
        got = {int(scene[np.flatnonzero((feats == r).all(axis=1))[0]]) % 10 for r in rows}
        assert got == ends
    with pytest.raises(ValueError, match="no patches72 and features in it"):
        verifier_batches(cut, 72.0)
    assert main([str(src), "--verifier-samples", str(cut), "--count", "16", "--check",
                 "16"]) == 0
    dst = tmp_path / int8_name(VERIFY_MODEL)
    assert open_onnx(dst)[1]["quantized_from"] == VERIFY_MODEL
    assert dst.stat().st_size < src.stat().st_size / 2


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
