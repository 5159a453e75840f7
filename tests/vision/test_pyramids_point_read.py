"""The pyramid finder's pointing reader (pyramids-point.onnx): how its sectors are weighed
against the shape classifier's, which finds it reads, its file, and its training data."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from vision_truth import pyramids_on_bare_mat

from vision.pyramids.classifier import POINT_CLASSES, SECTORS, SHAPE_CLASSES, sector
from vision.pyramids.find import blend_pointing


def _shape_read(**classes: float) -> np.ndarray:
    p = np.zeros((1, len(SHAPE_CLASSES)), np.float32)
    for name, v in classes.items():
        p[0, SHAPE_CLASSES.index(name.replace("_", ""))] = v
    return p


def _reader_sure_of(k: int, n: int = 1) -> np.ndarray:
    p = np.full((n, SECTORS), 1e-4, np.float32)
    p[:, k] = 1.0
    return p / p.sum(axis=1, keepdims=True)


def test_a_sure_pointing_reader_turns_the_apex_but_not_the_size_or_pose():
    ps = _shape_read(_2L03=0.5, _2L09=0.2, _2U=0.2, _1L09=0.1)
    out = blend_pointing(ps, SHAPE_CLASSES, _reader_sure_of(9), POINT_CLASSES, 1.0)[0]
    lying2 = [SHAPE_CLASSES.index(f"2L{k:02d}") for k in range(SECTORS)]
    assert out[lying2].sum() == pytest.approx(0.7, abs=1e-5)
    assert out[SHAPE_CLASSES.index("2U")] == pytest.approx(0.2, abs=1e-6)
    assert out[SHAPE_CLASSES.index("1L09")] == pytest.approx(0.1, abs=1e-5)
    assert SHAPE_CLASSES[lying2[int(np.argmax(out[lying2]))]] == "2L09"
    # weight 0: the shape classifier alone
    same = blend_pointing(ps, SHAPE_CLASSES, _reader_sure_of(9), POINT_CLASSES, 0.0)
    assert np.allclose(same, ps, atol=1e-5)


def test_an_unsure_pointing_reader_leaves_the_shape_classifiers_apex():
    ps = _shape_read(_3L02=0.6, _3L08=0.3, _3U=0.1)
    flat = np.full((1, SECTORS), 1.0 / SECTORS, np.float32)
    out = blend_pointing(ps, SHAPE_CLASSES, flat, POINT_CLASSES, 1.0)
    assert np.allclose(out, ps, atol=1e-5)


@pytest.mark.parametrize("rel, k", [(0.0, 0), (14.9, 0), (15.1, 1), (-20.0, 11), (345.0, 0),
                                    (90.0, 3), (200.0, 7)])
def test_an_apex_falls_in_the_nearest_sector(rel: float, k: int):
    assert sector(rel) == k


@pytest.fixture(scope="module")
def clear_and_red_lying(tarot: Any) -> tuple[np.ndarray, Any, dict[str, Any]]:
    """A lying clear 3 and a lying red 3, apart, both pointing the same way."""
    from vision.synth.scene import PyramidPlacement

    return pyramids_on_bare_mat(tarot,
                                PyramidPlacement("clear", 3, False, (300.0, 300.0), 60.0),
                                PyramidPlacement("red", 3, False, (500.0, 310.0), 60.0))


def _angle_off(a: float, b: float) -> float:
    return abs((a - b + 180.0) % 360.0 - 180.0)


def _reader_saying(k: int, asked: list[int]) -> Any:
    """A pointing reader sure of sector ``k`` for every patch, counting them into ``asked``."""
    def probs(patches: np.ndarray) -> np.ndarray:
        asked.append(len(patches))
        return _reader_sure_of(k, len(patches))
    return probs


def test_the_finder_asks_the_pointing_reader_about_the_lying_finds_of_its_colours(
        clear_and_red_lying, finder, monkeypatch):
    """A lying clear and a lying red pyramid: the shipped finder points both about right,
    asking the reader about both. With a shape classifier sure of a lying 3 but not of its
    apex (every sector alike), the reader decides: told to ask about white and clear alone,
    it reads the clear one's candidates alone, and the clear one points where it says, a
    half turn from the truth or the truth itself, while the red (not asked) points the
    same either way. At weight 0 it is not asked."""
    import vision.pyramids.find as find_mod
    from vision.pyramids.classifier import patch_up_deg

    image, calib, _ = clear_and_red_lying
    asked: list[int] = []
    real = finder.pointer.probs

    def counted(patches):
        asked.append(len(patches))
        return real(patches)

    monkeypatch.setattr(finder.pointer, "probs", counted)
    plain = {f.color: f for f in finder.find(image, calib)}
    # one batch: each find's candidates (a pyramid may have two, one find is kept)
    assert set(plain) == {"clear", "red"} and len(asked) == 1 and asked[0] >= 2
    every_colour = asked[0]
    assert all(not f.upright and _angle_off(f.pointing_deg, 60.0) <= 45.0
               for f in plain.values())

    def unsure_of_the_apex(patches):
        p = np.full((len(patches), len(SHAPE_CLASSES)), 1e-6, np.float32)
        p[:, [SHAPE_CLASSES.index(f"3L{k:02d}") for k in range(SECTORS)]] = 1.0 / SECTORS
        return p

    monkeypatch.setattr(finder.how, "probs", unsure_of_the_apex)
    monkeypatch.setattr(find_mod, "POINT_READ_COLORS", frozenset({"white", "clear"}))
    cam = finder.look(image, calib).camera[:2]
    ups = {c: float(patch_up_deg(np.array([f.base_center_mm]), cam)[0])
           for c, f in plain.items()}
    red = []
    for apex in (60.0, 240.0):
        asked.clear()
        monkeypatch.setattr(finder.pointer, "probs",
                            _reader_saying(sector(apex - ups["clear"]), asked))
        got = {f.color: f for f in finder.find(image, calib)}
        assert len(asked) == 1 and 1 <= asked[0] < every_colour
        # the sector's 30 degrees (read at the candidate, whose up differs a little from
        # the base centre's), refined by the silhouette by up to 10 either way
        assert _angle_off(got["clear"].pointing_deg, apex) <= 35.0
        assert got["clear"].pips == 3 and not got["clear"].upright
        red.append(got["red"].pointing_deg)
    assert _angle_off(red[0], red[1]) < 1.0
    asked.clear()
    monkeypatch.setattr(find_mod, "POINT_READ_WEIGHT", 0.0)
    finder.find(image, calib)
    assert asked == []


def test_an_unsure_pointing_read_is_read_again_mirrored_and_its_sectors_mapped_back(
        clear_and_red_lying, finder, monkeypatch):
    """With POINT_READ_MIRRORED a reader less sure than POINT_MIRROR_SURE is asked again
    about the same patches flipped left to right; its sector there (the apex mirrored) is
    mapped back before the two reads are averaged, so a reader that reads the flipped
    patch as the mirror of what it read first keeps the apex where the first read put it.
    A reader sure of its first reads is not asked again."""
    import vision.pyramids.find as find_mod
    from vision.pyramids.classifier import mirror_sector, patch_up_deg

    image, calib, _ = clear_and_red_lying

    def unsure_of_the_apex(patches):
        p = np.full((len(patches), len(SHAPE_CLASSES)), 1e-6, np.float32)
        p[:, [SHAPE_CLASSES.index(f"3L{k:02d}") for k in range(SECTORS)]] = 1.0 / SECTORS
        return p

    monkeypatch.setattr(finder.how, "probs", unsure_of_the_apex)
    monkeypatch.setattr(find_mod, "POINT_READ_COLORS", frozenset({"clear"}))
    monkeypatch.setattr(find_mod, "POINT_READ_MIRRORED", True)
    monkeypatch.setattr(find_mod, "POINT_MIRROR_SURE", 0.95)
    cam = finder.look(image, calib).camera[:2]
    plain = {f.color: f for f in finder.find(image, calib)}
    up = float(patch_up_deg(np.array([plain["clear"].base_center_mm]), cam)[0])
    k = sector(240.0 - up)
    calls: list[np.ndarray] = []

    def reader(sure: float):
        def probs(patches: np.ndarray) -> np.ndarray:
            calls.append(patches.copy())
            at = k if len(calls) == 1 else mirror_sector(k)
            p = np.full((len(patches), SECTORS), (1.0 - sure) / (SECTORS - 1), np.float32)
            p[:, at] = sure
            return p
        return probs

    monkeypatch.setattr(finder.pointer, "probs", reader(0.6))
    got = {f.color: f for f in finder.find(image, calib)}
    assert len(calls) == 2 and calls[1].shape == calls[0].shape
    assert np.array_equal(calls[1], calls[0][:, :, ::-1])
    assert _angle_off(got["clear"].pointing_deg, 240.0) <= 35.0
    calls.clear()
    monkeypatch.setattr(finder.pointer, "probs", reader(0.99))
    finder.find(image, calib)
    assert len(calls) == 1


def test_the_shipped_pointing_reader_says_its_classes_and_span():
    from models import model_path
    from vision.pyramids.classifier import POINT_MODEL, PatchClassifier
    from vision.pyramids.find import _patch_mm

    reader = PatchClassifier(model_path(POINT_MODEL), POINT_CLASSES)
    assert set(reader.names) == set(POINT_CLASSES)
    assert 40.0 <= _patch_mm(reader) <= 72.0
    p = reader.probs(np.full((2, 64, 64, 3), 128, np.uint8))
    assert p.shape == (2, SECTORS) and np.allclose(p.sum(axis=1), 1.0, atol=1e-4)


def test_the_pointing_task_takes_the_lying_patches_by_their_apex():
    from vision.pyramids.train_size import task_data

    nan = float("nan")
    data = {"patches": np.arange(5)[:, None], "labels": np.array([0, 3, 1, 4, 5]),
            "colors": np.array(["white", "red", "clear", "black", "white"]),
            "scene": np.arange(5),
            "pointing": np.array([nan, 92.0, nan, 359.0, 200.0], np.float32)}
    got = task_data(data, "pointing")
    assert got["patches"].ravel().tolist() == [1, 3, 4]
    assert got["labels"].tolist() == [3, 0, 7]
    del data["pointing"]
    with pytest.raises(ValueError, match="no apex directions .* cut again"):
        task_data(data, "pointing")


def test_a_mirrored_training_patch_has_its_apex_mirrored_too():
    """The trainer's batches mirror half the patches left to right: a patch bright on its
    right (apex to the right, sector 3) drawn mirrored is bright on its left and labelled
    sector 9; drawn as it is, it keeps sector 3."""
    pytest.importorskip("torch")
    from vision.pyramids.train_verify import PatchBatches

    n = 64
    patches = np.zeros((n, 64, 64, 3), np.uint8)
    patches[:, :, 40:] = 255
    mirror = np.array([(SECTORS - k) % SECTORS for k in range(SECTORS)])
    batches = PatchBatches({"patches": patches, "labels": np.full(n, 3)}, class_labels=True,
                           mirror_labels=mirror)
    x, _, y = batches.draw(np.arange(n), np.random.default_rng(1))
    bright_right = (x[:, :, :, 40:].mean(dim=(1, 2, 3)) > x[:, :, :, :24].mean(dim=(1, 2, 3)))
    y = y.numpy()
    assert 10 < int(bright_right.sum()) < n - 10
    assert (y[bright_right.numpy()] == 3).all() and (y[~bright_right.numpy()] == 9).all()
    # without a mirror table the labels stay (size and pose do not change in a mirror)
    plain = PatchBatches({"patches": patches, "labels": np.full(n, 3)}, class_labels=True)
    assert (plain.draw(np.arange(n), np.random.default_rng(1))[2].numpy() == 3).all()


def test_the_pointing_reader_can_start_from_the_size_readers_convolutions():
    """``--init models/pyramids-size.onnx`` for the pointing task: the size reader answers
    six classes, so its convolutions are taken and the last layer is new; the full load
    of that file into twelve classes is refused by name."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("onnx")
    from models import model_path
    from vision.pyramids.classifier import SIZE_MODEL, network_input
    from vision.pyramids.train_size import _class_count, from_onnx

    size_file = model_path(SIZE_MODEL)
    assert _class_count(size_file) == 6
    net = from_onnx(size_file, SECTORS, body_only=True).eval()
    whole = from_onnx(size_file, 6).eval()
    x = torch.from_numpy(network_input(
        np.random.default_rng(2).integers(0, 256, (3, 64, 64, 3), dtype=np.uint8)))
    with torch.no_grad():
        assert torch.allclose(net.body(x), whole.body(x), atol=1e-5)
        assert net(x).shape == (3, SECTORS)
    with pytest.raises(ValueError, match="not an exported reader"):
        from_onnx(size_file, SECTORS)
