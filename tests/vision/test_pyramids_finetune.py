"""Training a shipped patch classifier (shape or colour) on from its ONNX file
(vision/pyramids/finetune.py): the rebuilt torch network is the ONNX one, the finder's
reading of pips and pose, the colour cut, and bad folders named."""

from __future__ import annotations

import numpy as np
import pytest

from vision.pyramids.classifier import COLOR_CLASSES, SHAPE_CLASSES
from vision.pyramids.finetune import cut, pips_and_pose


def test_pips_and_pose_are_read_as_the_finder_reads_them():
    names = SHAPE_CLASSES
    p = np.zeros((3, len(names)), np.float32)
    # 1: upright 2 at 0.4, but the lying 3s sum to 0.6 -> pips 3, lying
    p[0, names.index("2U")] = 0.4
    p[0, names.index("3L00")] = 0.3
    p[0, names.index("3L01")] = 0.3
    # 2: a sure upright 1
    p[1, names.index("1U")] = 1.0
    # 3: a lying 2 spread over sectors, upright 1 at 0.3
    p[2, names.index("1U")] = 0.3
    p[2, [names.index(f"2L{k:02d}") for k in range(3)]] = 0.7 / 3
    truth = np.array([names.index("3L05"), names.index("1U"), names.index("1U")])
    pips, pose = pips_and_pose(p, truth, names)
    assert pips == pytest.approx(2 / 3)    # the third is read as 2
    assert pose == pytest.approx(2 / 3)    # and as lying


def test_a_folder_that_is_not_a_render_is_named(tmp_path):
    (tmp_path / "photos").mkdir()
    with pytest.raises(ValueError, match="photos: not a rendered folder"):
        cut([tmp_path / "photos"], tmp_path / "cache.npz")
    assert not (tmp_path / "cache.npz").exists()


def test_the_torch_network_is_the_shipped_onnx_file():
    pytest.importorskip("torch")        # the train extra
    pytest.importorskip("ultralytics")
    pytest.importorskip("onnx")
    import torch

    from models import model_path
    from vision.pyramids.classifier import SHAPE_MODEL, PatchClassifier, network_input
    from vision.pyramids.finetune import from_onnx

    shipped = PatchClassifier(model_path(SHAPE_MODEL), SHAPE_CLASSES)
    net = from_onnx(model_path(SHAPE_MODEL), len(SHAPE_CLASSES)).eval()
    net.model[-1].export = True
    rng = np.random.default_rng(3)
    patches = rng.integers(0, 256, (6, 64, 64, 3), dtype=np.uint8)
    with torch.no_grad():
        mine = net(torch.from_numpy(network_input(patches))).numpy()
    assert np.abs(mine - shipped.probs(patches)).max() < 1e-4


def test_a_network_of_another_recipe_is_refused(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("ultralytics")
    pytest.importorskip("onnx")
    from pathlib import Path

    from vision.pyramids.finetune import from_onnx

    heat = Path(__file__).parent / "data" / "heat-1ppm.onnx"
    with pytest.raises(ValueError, match="heat-1ppm.onnx: not the network"):
        from_onnx(heat, len(SHAPE_CLASSES))


def test_the_colour_cut_keeps_the_none_patches_and_the_shape_cut_only_pyramids(tmp_path):
    """``--task color`` cuts what the colour classifier is asked about, card art and bare
    table (``none``) too; the shape classifier's cut holds pyramids alone."""
    from calibration.mat import DEFAULT_MAT
    from vision.pyramids.finetune import _cut_chunk
    from vision.synth.generate import SynthConfig, synthesize

    synthesize(SynthConfig(out=tmp_path / "r", count=2, seed=77, mat=DEFAULT_MAT,
                           game="crowded"))
    patches, colours, scenes = _cut_chunk((str(tmp_path / "r"), 0, 2, 500), task="color")
    _, shapes, _ = _cut_chunk((str(tmp_path / "r"), 0, 2, 500), task="shape")
    assert len(patches) == len(colours) == len(scenes)
    assert patches.shape[1:] == (64, 64, 3) and set(scenes.tolist()) <= {500, 501}
    assert "none" in colours and set(colours) <= set(COLOR_CLASSES)
    assert set(shapes) <= set(SHAPE_CLASSES)
    # the same scenes, the same draws: every pyramid the shape cut holds, the colour cut has
    assert len(shapes) == sum(c != "none" for c in colours)


def test_the_colour_classifier_trains_on_and_keeps_its_names(tmp_path):
    """``finetune(task="color")``: colours kept when mirrored, the best validation top-1
    kept (the start's counts), the shipped file's class names and metadata in the export."""
    pytest.importorskip("torch")
    pytest.importorskip("ultralytics")
    pytest.importorskip("onnx")
    from models import model_path
    from vision.pyramids.classifier import COLOR_MODEL, PatchClassifier
    from vision.pyramids.finetune import finetune

    rng = np.random.default_rng(0)
    n = 40
    data = {"patches": rng.integers(0, 256, (n, 64, 64, 3), dtype=np.uint8),
            "labels": np.array([COLOR_CLASSES[i % len(COLOR_CLASSES)] for i in range(n)]),
            "scene": np.arange(n)}
    out, figures = finetune(data, model_path(COLOR_MODEL), tmp_path / COLOR_MODEL, 0.02,
                            threads=1, batch=8, task="color")
    assert figures["top1"] >= figures["start_top1"]
    assert {"loss", "none_right"} <= set(figures) and "pips" not in figures
    shipped = PatchClassifier(model_path(COLOR_MODEL), COLOR_CLASSES)
    assert PatchClassifier(out, COLOR_CLASSES).names == shipped.names
