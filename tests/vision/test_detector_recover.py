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
