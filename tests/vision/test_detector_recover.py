"""The card detector's checkpoint, rebuilt from the shipped ONNX file (the train extra)."""

from __future__ import annotations

import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("ultralytics")
pytest.importorskip("onnx")
os.environ.setdefault("YOLO_OFFLINE", "1")

from models import model_path  # noqa: E402
from vision.detection.recover import (RecoverError, max_difference, rebuild,  # noqa: E402
                                      save_checkpoint)


@pytest.fixture(scope="module")
def shipped():
    path = model_path("cards-obb.onnx")
    if not path.is_file():
        pytest.skip("the shipped card detector is not here")
    return path


def test_the_rebuilt_network_computes_what_the_onnx_file_computes(shipped):
    net = rebuild(shipped)
    # raw outputs are canvas pixels (0-320) and scores: float rounding only
    assert max_difference(shipped, net, count=2) < 1e-3
    # the batch norms carry the folded biases as identities, ready to be trained again
    bn = net.model[0].bn
    assert torch.allclose(bn.weight, torch.ones_like(bn.weight))
    assert torch.allclose(bn.running_mean, torch.zeros_like(bn.running_mean))


def test_the_checkpoint_loads_as_an_ultralytics_model(shipped, tmp_path):
    from ultralytics import YOLO

    path = save_checkpoint(rebuild(shipped), tmp_path / "cards-obb.pt", 320)
    model = YOLO(str(path), task="obb")
    assert model.task == "obb" and model.model.names == {0: "card"}
    assert max_difference(shipped, model.model.eval(), count=1) < 1e-3


def test_an_onnx_file_of_another_network_is_refused_by_name():
    other = model_path("pyramids-color.onnx")
    if not other.is_file():
        pytest.skip("the shipped colour classifier is not here")
    with pytest.raises(RecoverError, match="pyramids-color.onnx"):
        rebuild(other)


def test_a_file_that_is_not_onnx_is_refused(tmp_path):
    bad = tmp_path / "cards-obb.onnx"
    bad.write_bytes(b"not a model")
    with pytest.raises(RecoverError, match="not an ONNX model"):
        rebuild(bad)


def _batch_norms_in_training(net):
    """``net`` computing as in training where the batch norms are concerned (each batch
    normalised by its own statistics), the head as in evaluation (its plain output)."""
    net.eval()
    for m in net.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.train()
            m.momentum = 0.0     # the check must not move the running statistics
    return net


def _out(net, x):
    with torch.no_grad():
        y = net(torch.from_numpy(x))
    return (y[0] if isinstance(y, (tuple, list)) else y).numpy()


def test_calibrated_batch_norms_keep_the_network_and_train_from_where_it_is(shipped):
    from vision.detection.recover import calibrate_batch_norms

    rng = np.random.default_rng(3)
    # canvas-like input: smooth colour fields, not white noise
    x = rng.random((4, 3, 10, 10), dtype=np.float32)
    x = np.stack([np.stack([np.kron(c, np.ones((32, 32), np.float32)) for c in img])
                  for img in x])
    net = rebuild(shipped)
    want = _out(net.eval(), x)
    # folded as rebuilt, a batch normalised by its own statistics is another network
    before = np.abs(_out(_batch_norms_in_training(net), x) - want).max()
    assert before > 1.0
    assert calibrate_batch_norms(net, x) == sum(
        isinstance(m, torch.nn.BatchNorm2d) for m in net.modules())
    assert np.abs(_out(net.eval(), x) - want).max() < 1e-2      # evaluation: the same
    # training on the batch the statistics came from: the same network too
    assert np.abs(_out(_batch_norms_in_training(net), x) - want).max() < 1e-2
    assert max_difference(shipped, net.eval(), count=1) < 1e-2


def test_calibration_refuses_a_wrong_shape_by_name(shipped):
    from vision.detection.recover import calibrate_batch_norms

    with pytest.raises(ValueError, match=r"expected \(N >= 2, 3, H, W\), got \(1, 3, 64, 64\)"):
        calibrate_batch_norms(rebuild(shipped), np.zeros((1, 3, 64, 64), np.float32))


def test_going_on_holds_the_batch_norms_statistics():
    from vision.detection.train import _hold_batch_norms

    class Trainer:
        model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4),
                                    torch.nn.ReLU())

    t = Trainer()
    t.model.train()
    _hold_batch_norms(t)
    assert not t.model[1].training and t.model[0].training
