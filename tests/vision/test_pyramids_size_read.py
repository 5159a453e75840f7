"""The pyramid finder's size reader (pyramids-size.onnx): how its answer is weighed against the
shape classifier's, which finds it reads, its file, and its training data's labels."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from vision_truth import pyramids_on_bare_mat

from vision.pyramids.classifier import SHAPE_CLASSES, SIZE_CLASSES
from vision.pyramids.find import blend_size


@pytest.fixture(scope="module")
def white_and_red(tarot: Any) -> tuple[np.ndarray, Any, dict[str, Any]]:
    """An upright white 2 and an upright red 2, apart."""
    from vision.synth.scene import PyramidPlacement

    return pyramids_on_bare_mat(tarot, PyramidPlacement("white", 2, True, (300.0, 300.0)),
                                PyramidPlacement("red", 2, True, (480.0, 310.0)))


def _shape_read(**classes: float) -> np.ndarray:
    p = np.zeros((1, len(SHAPE_CLASSES)), np.float32)
    for name, v in classes.items():
        p[0, SHAPE_CLASSES.index(name.replace("_", ""))] = v
    return p


def test_a_sure_size_reader_outweighs_a_leaning_shape_read():
    ps = _shape_read(_2U=0.6, _3U=0.3, _3L04=0.1)
    p6 = np.array([[0.01, 0.04, 0.9, 0.01, 0.01, 0.03]])
    out = blend_size(ps, SHAPE_CLASSES, p6, SIZE_CLASSES, 1.0)
    assert out.sum() == pytest.approx(1.0, abs=1e-5)
    by_size = [out[0, [i for i, n in enumerate(SHAPE_CLASSES) if n[0] == str(s)]].sum()
               for s in (1, 2, 3)]
    assert int(np.argmax(by_size)) + 1 == 3
    # weight 0: the shape classifier alone
    same = blend_size(ps, SHAPE_CLASSES, p6, SIZE_CLASSES, 0.0)
    assert np.allclose(same, ps, atol=1e-5)


def test_the_lying_sectors_keep_their_shares():
    ps = _shape_read(_2L01=0.3, _2L02=0.6, _1U=0.1)
    p6 = np.array([[0.2, 0.1, 0.1, 0.1, 0.4, 0.1]])
    out = blend_size(ps, SHAPE_CLASSES, p6, SIZE_CLASSES, 1.0)[0]
    i1, i2 = SHAPE_CLASSES.index("2L01"), SHAPE_CLASSES.index("2L02")
    assert out[i2] / out[i1] == pytest.approx(2.0, rel=1e-4)
    assert out[i2] > out[SHAPE_CLASSES.index("1U")]


def test_a_mirrored_read_is_averaged_with_the_read_as_cut():
    from vision.pyramids.find import _mirror_read

    class LeftOrRight:
        """Says 'left' where a patch's left half is the brighter: a mirror swaps it."""

        def probs(self, patches: np.ndarray) -> np.ndarray:
            left = patches[:, :, :32].mean(axis=(1, 2, 3)) > patches[:, :, 32:].mean(
                axis=(1, 2, 3))
            return np.stack([left, ~left], axis=1).astype(np.float32)

    patches = np.zeros((2, 64, 64, 3), np.uint8)
    patches[0, :, :32] = 200
    patches[1, :, :20] = 200
    patches[1, :, 44:] = 90
    reader: Any = LeftOrRight()
    assert np.allclose(_mirror_read(reader, patches, False), [[1, 0], [1, 0]])
    assert np.allclose(_mirror_read(reader, patches, True), [[0.5, 0.5], [0.5, 0.5]])
    assert _mirror_read(reader, patches[:0], True).shape == (0, 2)


def test_a_read_surer_than_asked_is_not_read_mirrored():
    from vision.pyramids.find import _mirror_read

    class Counting:
        """Sure of its class for the bright patches, unsure of the dark; counts what it
        reads."""

        def __init__(self) -> None:
            self.read: list[int] = []

        def probs(self, patches: np.ndarray) -> np.ndarray:
            self.read.append(len(patches))
            bright = patches.mean(axis=(1, 2, 3)) > 100
            return np.where(bright[:, None], [[0.99, 0.01]], [[0.6, 0.4]]).astype(np.float32)

    patches = np.zeros((3, 64, 64, 3), np.uint8)
    patches[1] = 200
    reader: Any = Counting()
    out = _mirror_read(reader, patches, True, sure=0.95)
    assert reader.read == [3, 2]   # the bright patch is not read again
    assert np.allclose(out, [[0.6, 0.4], [0.99, 0.01], [0.6, 0.4]])
    reader.read.clear()
    _mirror_read(reader, patches, True)          # no sure: every patch again
    assert reader.read == [3, 3]
    reader.read.clear()
    patches[:] = 200
    _mirror_read(reader, patches, True, sure=0.95)
    assert reader.read == [3]                     # none unsure: no second read


def test_the_shipped_size_reader_says_its_classes_and_span():
    from models import model_path
    from vision.pyramids.classifier import SIZE_MODEL, PatchClassifier
    from vision.pyramids.find import _patch_mm

    reader = PatchClassifier(model_path(SIZE_MODEL), SIZE_CLASSES)
    assert set(reader.names) == set(SIZE_CLASSES)
    assert 40.0 <= _patch_mm(reader) <= 72.0
    p = reader.probs(np.full((3, 64, 64, 3), 128, np.uint8))
    assert p.shape == (3, 6) and np.allclose(p.sum(axis=1), 1.0, atol=1e-4)


def test_a_size_reader_without_its_span_is_named():
    from models import ModelError, model_path
    from vision.pyramids.classifier import SHAPE_MODEL, PatchClassifier
    from vision.pyramids.find import _patch_mm

    shape = PatchClassifier(model_path(SHAPE_MODEL), SHAPE_CLASSES)   # no patch_mm
    with pytest.raises(ModelError, match="pyramids-shape.onnx: no patch_mm"):
        _patch_mm(shape)


def test_the_finder_asks_the_size_reader_about_the_colours_it_is_told(
        white_and_red, finder, monkeypatch):
    """A white and a red pyramid: the shipped finder asks the reader about both; told to ask
    about white, clear and black alone, it asks about the white one, which takes the size
    the reader is sure of while the red keeps its own; at weight 0, or where the shape
    classifier is surer than SIZE_READ_SURE, it is not asked. (A hue
    the shape classifier is all but sure of keeps its size against a reader as sure of
    another: the product of the two is what counts, and the hue's silhouette fit too.)"""
    import vision.pyramids.find as find_mod

    image, calib, _ = white_and_red
    asked: list[int] = []
    sure_of = {"1U": 0, "3U": 2}

    def reader_says(name):
        def probs(patches):
            asked.append(len(patches))
            p = np.full((len(patches), 6), 1e-4, np.float32)
            p[:, sure_of[name]] = 1.0
            return p
        return probs

    # asked wherever the shape classifier is less than sure (here: always), each patch as
    # cut and mirrored (SIZE_READ_MIRRORED; every patch: SIZE_MIRROR_SURE None)
    monkeypatch.setattr(find_mod, "SIZE_READ_SURE", 1.01)
    monkeypatch.setattr(find_mod, "SIZE_MIRROR_SURE", None)
    monkeypatch.setattr(finder.sizer, "probs", reader_says("3U"))
    assert {f.color for f in finder.find(image, calib)} == {"white", "red"}
    assert asked == ([2, 2] if find_mod.SIZE_READ_MIRRORED else [2])
    asked.clear()
    # a reader this sure of its first reads is not asked about their mirror images
    monkeypatch.setattr(find_mod, "SIZE_MIRROR_SURE", 0.95)
    assert {f.color for f in finder.find(image, calib)} == {"white", "red"}
    assert asked == [2]
    asked.clear()
    monkeypatch.setattr(find_mod, "SIZE_READ_MIRRORED", False)
    assert {f.color for f in finder.find(image, calib)} == {"white", "red"}
    assert asked == [2]
    asked.clear()
    monkeypatch.setattr(find_mod, "SIZE_READ_COLORS", frozenset({"white", "clear", "black"}))
    plain = {f.color: f.pips for f in finder.find(image, calib)}
    assert plain == {"white": 3, "red": 2} and asked == [1]
    monkeypatch.setattr(finder.sizer, "probs", reader_says("1U"))
    assert {f.color: f.pips for f in finder.find(image, calib)} == {"white": 1, "red": 2}
    asked.clear()
    monkeypatch.setattr(find_mod, "SIZE_READ_WEIGHT", 0.0)
    assert {f.color: f.pips for f in finder.find(image, calib)} == {"white": 2, "red": 2}
    assert asked == []
    # nor where the shape classifier is sure enough
    monkeypatch.setattr(find_mod, "SIZE_READ_WEIGHT", 1.0)
    monkeypatch.setattr(find_mod, "SIZE_READ_SURE", 0.0)
    assert {f.color: f.pips for f in finder.find(image, calib)} == {"white": 2, "red": 2}
    assert asked == []


def test_training_patches_are_labelled_by_the_pyramid_they_lie_on(tarot):
    """Each patch gets its pyramid's size class and colour, and a lying one's apex in
    degrees clockwise from the patch's up (for the pointing reader; nan when upright)."""
    from calibration.mat import DEFAULT_MAT
    from vision.pyramids.classifier import patch_up_deg
    from vision.pyramids.colors import default_model
    from vision.pyramids.find import Looker
    from vision.pyramids.train_size import scene_samples, size_label
    from vision.synth.scene import PyramidPlacement

    image, calib, truth = pyramids_on_bare_mat(
        tarot, PyramidPlacement("clear", 3, True, (300.0, 300.0)),
        PyramidPlacement("blue", 1, False, (480.0, 310.0), 90.0))
    look = Looker(DEFAULT_MAT, default_model()).look(image, calib)
    patches, labels, colors, rel = scene_samples(image, truth, look, np.zeros((0, 2)),
                                                 np.random.default_rng(0))
    assert patches.shape[1:] == (64, 64, 3)
    assert len(patches) == len(labels) == len(colors) == len(rel)
    assert set(colors) == {"clear", "blue"}
    up = float(patch_up_deg(np.array([[480.0, 310.0]]), look.camera[:2])[0])
    for lab, col, r in zip(labels, colors, rel):
        assert lab == (size_label(3, True) if col == "clear" else size_label(1, False))
        if col == "clear":
            assert np.isnan(r)
        else:
            # each patch's up is its own centre's (a few mm apart): within a few degrees
            assert abs((r - (90.0 - up) + 180.0) % 360.0 - 180.0) < 3.0
    assert SIZE_CLASSES[size_label(3, True)] == "3U"
    assert SIZE_CLASSES[size_label(1, False)] == "1L"


def test_size_training_refuses_a_folder_that_is_not_rendered(tmp_path):
    from vision.pyramids.train_size import cut

    (tmp_path / "photos").mkdir()
    with pytest.raises(ValueError, match="photos: not a rendered folder"):
        cut([tmp_path / "photos"], tmp_path / "size.npz")


def test_the_finder_asks_the_white_or_clear_reader_about_white_and_clear_finds(
        white_and_red, finder, monkeypatch):
    """A white and a red pyramid: the reader is asked about the white one alone; sure of
    clear, it renames it; at weight 0 it is not asked and the colour classifier's white
    stands."""
    import vision.pyramids.find as find_mod

    image, calib, _ = white_and_red
    asked: list[int] = []

    def reader_says(name):
        def probs(patches):
            asked.append(len(patches))
            p = np.full((len(patches), 2), 1e-4, np.float32)
            p[:, finder.white_clear.names.index(name)] = 1.0
            return p
        return probs

    monkeypatch.setattr(finder.white_clear, "probs", reader_says("clear"))
    assert sorted(f.color for f in finder.find(image, calib)) == ["clear", "red"]
    assert asked == [1]
    asked.clear()
    monkeypatch.setattr(find_mod, "WHITE_CLEAR_WEIGHT", 0.0)
    assert sorted(f.color for f in finder.find(image, calib)) == ["red", "white"]
    assert asked == []


def test_the_finder_asks_the_colour_reader_about_the_finds_it_is_unsure_of(
        white_and_red, finder, monkeypatch):
    """A white and a red pyramid: the colour reader is asked about both (COLOR_READ_SURE
    above 1); ruling out white (it says clear or red, both sure), it renames the white one
    clear and leaves the red one red; asked only below a sureness both reads pass, or at
    weight 0, it is not asked and the colour classifier's colours stand."""
    import vision.pyramids.find as find_mod

    image, calib, _ = white_and_red
    asked: list[int] = []

    def reader_says(*names):
        def probs(patches):
            asked.append(len(patches))
            p = np.full((len(patches), 10), 1e-4, np.float32)
            for name in names:
                p[:, finder.color_reader.names.index(name)] = 1.0
            return p
        return probs

    monkeypatch.setattr(find_mod, "WHITE_CLEAR_WEIGHT", 0.0)   # the colour reader alone
    monkeypatch.setattr(find_mod, "COLOR_READ_SURE", 1.01)
    monkeypatch.setattr(find_mod, "COLOR_READ_WEIGHT", 4.0)
    monkeypatch.setattr(finder.color_reader, "probs", reader_says("clear", "red"))
    assert sorted(f.color for f in finder.find(image, calib)) == ["clear", "red"]
    assert asked == [2]
    asked.clear()
    monkeypatch.setattr(find_mod, "COLOR_READ_SURE", 1e-3)
    assert sorted(f.color for f in finder.find(image, calib)) == ["red", "white"]
    assert asked == []
    monkeypatch.setattr(find_mod, "COLOR_READ_SURE", 1.01)
    monkeypatch.setattr(find_mod, "COLOR_READ_WEIGHT", 0.0)
    assert sorted(f.color for f in finder.find(image, calib)) == ["red", "white"]
    assert asked == []


def test_the_shipped_colour_reader_says_its_classes_and_span():
    from models import model_path
    from vision.pyramids.classifier import (COLOR_READ_CLASSES, COLOR_READ_MODEL,
                                            PatchClassifier)
    from vision.pyramids.colors import COLORS
    from vision.pyramids.find import _patch_mm

    reader = PatchClassifier(model_path(COLOR_READ_MODEL), COLOR_READ_CLASSES)
    assert set(reader.names) == set(COLORS)
    assert 40.0 <= _patch_mm(reader) <= 72.0


def test_the_colour_task_labels_every_patch_by_its_colour():
    from vision.pyramids.colors import COLORS
    from vision.pyramids.train_size import task_data

    data = {"patches": np.arange(4)[:, None], "labels": np.array([0, 1, 2, 3]),
            "colors": np.array(["white", "red", "clear", "black"]), "scene": np.arange(4)}
    got = task_data(data, "color")
    assert got["patches"].ravel().tolist() == [0, 1, 2, 3]
    assert [COLORS[k] for k in got["labels"]] == ["white", "red", "clear", "black"]


def test_the_shipped_white_or_clear_reader_says_its_classes_and_span():
    from models import model_path
    from vision.pyramids.classifier import (WHITE_CLEAR_CLASSES, WHITE_CLEAR_MODEL,
                                            PatchClassifier)
    from vision.pyramids.find import _patch_mm

    reader = PatchClassifier(model_path(WHITE_CLEAR_MODEL), WHITE_CLEAR_CLASSES)
    assert set(reader.names) == {"white", "clear"}
    assert 40.0 <= _patch_mm(reader) <= 72.0


def test_the_white_or_clear_task_takes_the_white_and_clear_patches_by_colour():
    from vision.pyramids.train_size import task_data

    data = {"patches": np.arange(5)[:, None], "labels": np.array([0, 1, 2, 3, 4]),
            "colors": np.array(["white", "red", "clear", "black", "white"]),
            "scene": np.arange(5)}
    got = task_data(data, "white-clear")
    assert got["patches"].ravel().tolist() == [0, 2, 4]
    assert got["labels"].tolist() == [0, 1, 0]          # white, clear, white
    assert task_data(data, "size") is data
    with pytest.raises(ValueError, match="unknown task 'colour'"):
        task_data(data, "colour")


@pytest.mark.parametrize("task", ["size", "white-clear", "color"])
def test_a_shipped_reader_read_back_from_its_file_computes_what_the_file_does(task: str):
    """Going on from a shipped size or white-or-clear reader (its best.pt stayed where it
    was trained): the network rebuilt from the ONNX file gives the file's probabilities,
    and still does once its batch norms hold the statistics of training batches; a file
    of another shape is refused by name."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("onnx")
    from models import model_path
    from vision.pyramids.classifier import PatchClassifier
    from vision.pyramids.train_heat import recalibrate_bn
    from vision.pyramids.train_size import TASKS, from_onnx

    classes, file = TASKS[task]
    rng = np.random.default_rng(4)
    patches = rng.integers(0, 256, (6, 64, 64, 3), dtype=np.uint8)
    want = PatchClassifier(model_path(file), classes).probs(patches)
    back = from_onnx(model_path(file), len(classes)).eval()
    back.export = True
    from vision.pyramids.classifier import network_input

    x = torch.from_numpy(network_input(patches))
    with torch.no_grad():
        got = back(x).numpy()
    assert np.allclose(got, want, atol=1e-4)
    recalibrate_bn(back, [torch.from_numpy(rng.random((8, 3, 64, 64)).astype(np.float32))
                          for _ in range(3)])
    with torch.no_grad():
        got = back.eval()(x).numpy()
    assert np.allclose(got, want, atol=1e-3)
    other = "white-clear" if task != "white-clear" else "size"
    with pytest.raises(ValueError, match=f"{TASKS[other][1]}: not an exported reader"):
        from_onnx(model_path(TASKS[other][1]), len(classes))


def test_going_on_from_a_shipped_reader_is_never_worse_on_the_validation_patches(tmp_path):
    """A training from the shipped size reader validates it first and keeps the best of it
    and each epoch: on any patches, the file written is no worse there than the start."""
    pytest.importorskip("torch")
    pytest.importorskip("onnx")
    from models import model_path
    from vision.pyramids.classifier import SIZE_MODEL
    from vision.pyramids.train_size import train

    rng = np.random.default_rng(5)
    n = 200
    data = {"patches": rng.integers(0, 256, (n, 64, 64, 3), dtype=np.uint8),
            "labels": rng.integers(0, 6, n).astype(np.int64),
            "colors": np.array(["white", "red", "clear", "black"] * (n // 4)),
            "scene": np.arange(n, dtype=np.int64)}
    path, got = train(data, tmp_path / "on", 0.02, threads=1, batch=32,
                      init=model_path(SIZE_MODEL))
    # no time at all: the start alone, as validated
    _, start = train(data, tmp_path / "start", 0.0, threads=1, batch=32,
                     init=model_path(SIZE_MODEL))
    assert path == tmp_path / "on" / SIZE_MODEL and path.is_file()
    assert got["val_patches"] == 20 and got["epochs"] >= 1 and start["epochs"] == 0
    assert got["loss"] <= start["loss"] + 1e-6


def test_the_white_or_clear_training_logs_its_own_figures(tmp_path, caplog):
    """An epoch of the white-or-clear reader logs its loss and accuracy, not the size
    task's pips and pose (which it has none of)."""
    pytest.importorskip("torch")
    pytest.importorskip("onnx")
    import logging

    from vision.pyramids.train_size import train

    rng = np.random.default_rng(6)
    n = 120
    data = {"patches": rng.integers(0, 256, (n, 64, 64, 3), dtype=np.uint8),
            "labels": np.zeros(n, np.int64),
            "colors": np.array(["white", "clear", "red"] * (n // 3)),
            "scene": np.arange(n, dtype=np.int64)}
    with caplog.at_level(logging.INFO, logger="vision.pyramids.train_size"):
        train(data, tmp_path, 0.01, threads=1, batch=16, task="white-clear")
    epochs = [r.getMessage() for r in caplog.records if r.getMessage().startswith("epoch ")]
    assert epochs and all("accuracy" in m and "pips" not in m for m in epochs)


def test_a_look_cuts_each_patch_once_and_the_same_as_a_fresh_cut(white_and_red):
    """The closer readers ask for the same 56 mm patches of the same finds: a look cuts a
    centre and span once and hands back that patch again (in any order), cuts only the
    centres it has not cut, and a patch it hands back is the one a fresh look cuts."""
    from calibration.mat import DEFAULT_MAT
    from vision.pyramids.colors import default_model
    from vision.pyramids.find import Looker

    image, calib, _ = white_and_red
    looker = Looker(DEFAULT_MAT, default_model())
    look = looker.look(image, calib)
    centers = np.array([[300.0, 300.0], [480.0, 310.0]])
    first = look.patches(image, centers, 56.0)
    cut = look.topdown.patches
    calls: list[int] = []

    def counted(img, c, *rest):  # type: ignore[no-untyped-def]
        calls.append(len(c))
        return cut(img, c, *rest)

    look.topdown.patches = counted  # type: ignore[method-assign]
    assert np.array_equal(look.patches(image, centers[::-1], 56.0), first[::-1])
    assert calls == []
    more = look.patches(image, np.array([[300.0, 300.0], [400.0, 400.0]]), 56.0)
    assert calls == [1] and np.array_equal(more[0], first[0])
    wider = look.patches(image, centers[:1], 72.0)          # another span: another patch
    assert calls == [1, 1] and not np.array_equal(wider[0], first[0])
    fresh = looker.look(image, calib).patches(image, np.array([[400.0, 400.0]]), 56.0)
    assert np.array_equal(more[1], fresh[0])
    assert look.patches(image, np.zeros((0, 2)), 56.0).shape == (0, 64, 64, 3)
