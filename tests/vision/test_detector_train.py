"""What ``companion train cards`` asks of ultralytics (a stand-in records it: no training)."""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any

import pytest

from vision.detection.train import INIT_LR0, CardTrainConfig, train_card_detector


class _FakeYOLO:
    calls: list[tuple[str, dict[str, Any]]] = []
    callbacks: list[str] = []

    def __init__(self, model: str, task: str = "") -> None:
        self.model = model

    def add_callback(self, event: str, fn: Any) -> None:
        _FakeYOLO.callbacks.append(event)

    def train(self, **kwargs: Any) -> None:
        _FakeYOLO.calls.append(("train", kwargs))
        weights = Path(kwargs["project"]) / kwargs["name"] / "weights"
        weights.mkdir(parents=True, exist_ok=True)
        (weights / "best.pt").write_bytes(b"pt")

    def val(self, **kwargs: Any) -> Any:
        box = types.SimpleNamespace(map50=0.9, map=0.8, mp=0.95, mr=0.9)
        return types.SimpleNamespace(box=box)

    def export(self, **kwargs: Any) -> str:
        from onnx_nets import conv_model

        return str(conv_model(Path(self.model).with_suffix(".onnx")))


@pytest.fixture
def fake_ultralytics(monkeypatch):
    _FakeYOLO.calls, _FakeYOLO.callbacks = [], []
    monkeypatch.setitem(sys.modules, "ultralytics", types.SimpleNamespace(YOLO=_FakeYOLO))
    return _FakeYOLO


def _train(tmp_path: Path, **cfg: Any) -> dict[str, Any]:
    data = tmp_path / "data" / "data.yaml"
    data.parent.mkdir(parents=True)
    data.write_text("path: .\n")
    train_card_detector(CardTrainConfig(out=tmp_path / "out", **cfg), data)
    return _FakeYOLO.calls[0][1]


def test_from_the_yaml_ultralytics_chooses_the_optimiser(fake_ultralytics, tmp_path):
    kw = _train(tmp_path)
    assert "optimizer" not in kw and "lr0" not in kw and "warmup_epochs" not in kw
    assert kw["pretrained"] is False and kw["plots"] is False
    assert fake_ultralytics.callbacks == []


def test_going_on_uses_adamw_at_a_low_rate_without_a_bias_kick(fake_ultralytics, tmp_path):
    init = tmp_path / "best.pt"
    init.write_bytes(b"pt")
    kw = _train(tmp_path, init=init)
    # "auto" would ignore lr0; its warm-up would start every bias at 0.1
    assert kw["optimizer"] == "AdamW" and kw["lr0"] == INIT_LR0
    assert kw["warmup_bias_lr"] == 0.0 and kw["warmup_epochs"] == 0.5
    assert kw["pretrained"] is True
    assert fake_ultralytics.callbacks == ["on_train_batch_start"]


def test_the_trained_detector_is_written_with_its_weights_in_float16(fake_ultralytics,
                                                                     tmp_path):
    import onnx

    from vision.half_weights import STORED_KEY

    _train(tmp_path)
    out = onnx.load(str(tmp_path / "out" / "cards-obb.onnx"))
    assert {p.key: p.value for p in out.metadata_props}[STORED_KEY] == "float16"


def test_a_given_rate_is_the_rate_used(fake_ultralytics, tmp_path):
    kw = _train(tmp_path, lr0=0.0002)
    assert kw["optimizer"] == "AdamW" and kw["lr0"] == 0.0002


def test_batch_norm_canvases_come_from_the_training_split(tmp_path):
    import cv2
    import numpy as np

    from vision.detection.recover import RecoverError, canvases_from

    for i in range(3):
        cv2.imwrite(str(tmp_path / f"{i:05d}.jpg"), np.full((40, 40, 3), (10, 20, 30), np.uint8))
    (tmp_path / "notes.txt").write_text("not an image")
    x = canvases_from(tmp_path, 2, 32, seed=1)
    assert x.shape == (2, 3, 32, 32) and x.dtype == np.float32
    assert abs(float(x[0, 0].mean()) - 30 / 255) < 0.02     # RGB, the red channel first
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(RecoverError, match="empty: fewer than 2 readable images"):
        canvases_from(empty, 4, 32)
