"""Weights stored in float16, computed in float32 (vision/half_weights.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")   # the test and train extras
from onnx import numpy_helper  # noqa: E402
from onnx_nets import conv_model  # noqa: E402

from vision.half_weights import (HALF_SUFFIX, STORED_KEY, HalfWeightsError,  # noqa: E402
                                 float_weights, store_half)


def run(path: Path, x: np.ndarray) -> np.ndarray:
    import onnxruntime as ort

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return np.asarray(session.run(None, {"images": x})[0])


def test_a_halved_copy_computes_what_the_float_file_does(tmp_path):
    src = conv_model(tmp_path / "net.onnx")
    dst = store_half(src, tmp_path / "half.onnx")
    x = np.random.default_rng(1).random((1, 3, 16, 16), dtype=np.float32)
    full, half = run(src, x), run(dst, x)
    assert np.abs(full - half).max() < 2e-3 * np.abs(full).max()
    assert not np.array_equal(full, half)   # the weights were rounded: a real copy
    model = onnx.load(str(dst))
    meta = {p.key: p.value for p in model.metadata_props}
    assert meta == {"names": "{0: 'card'}", "stride": "32", STORED_KEY: "float16"}
    stored = {i.name: numpy_helper.to_array(i).dtype for i in model.graph.initializer}
    # the convolutions' weights are halved; the 8 biases and the scale are too small to
    assert stored == {"c1.weight" + HALF_SUFFIX: np.float16, "c1.bias": np.float32,
                      "c2.weight" + HALF_SUFFIX: np.float16, "scale": np.float32}


def test_float_weights_gives_each_weight_its_own_name_in_float32(tmp_path):
    src = conv_model(tmp_path / "net.onnx")
    dst = store_half(src, tmp_path / "half.onnx")
    before = float_weights(onnx.load(str(src)))
    after = float_weights(onnx.load(str(dst)))
    assert sorted(after) == sorted(before) == ["c1.bias", "c1.weight", "c2.weight", "scale"]
    for name, w in before.items():
        assert after[name].dtype == np.float32 and after[name].shape == w.shape
        np.testing.assert_allclose(after[name], w, rtol=1e-3, atol=1e-4)


def test_halving_twice_and_a_file_that_is_not_onnx_are_refused(tmp_path):
    dst = store_half(conv_model(tmp_path / "net.onnx"), tmp_path / "half.onnx")
    with pytest.raises(HalfWeightsError, match="half.onnx: its weights are already stored"):
        store_half(dst, tmp_path / "again.onnx")
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    with pytest.raises(HalfWeightsError, match="bad.onnx: not an ONNX model"):
        store_half(bad, tmp_path / "x.onnx")


def test_the_command_halves_in_place_and_names_a_bad_file(tmp_path, capsys):
    from vision.half_weights import main

    src = conv_model(tmp_path / "net.onnx")
    assert main([str(src)]) == 0
    meta = {p.key: p.value for p in onnx.load(str(src)).metadata_props}
    assert meta[STORED_KEY] == "float16"
    assert main([str(src)]) == 2
    assert "already stored in float16" in capsys.readouterr().err


def test_a_weight_too_large_for_float16_stays_float32(tmp_path):
    src = conv_model(tmp_path / "net.onnx")
    model = onnx.load(str(src))
    for init in model.graph.initializer:
        if init.name == "c2.weight":
            w = numpy_helper.to_array(init).copy()
            w.flat[0] = 1e6   # float16 would store it as infinity
            init.CopyFrom(numpy_helper.from_array(w, "c2.weight"))
    onnx.save(model, str(src))
    dst = store_half(src, tmp_path / "half.onnx")
    stored = {i.name for i in onnx.load(str(dst)).graph.initializer}
    assert "c2.weight" in stored and "c1.weight" + HALF_SUFFIX in stored
    x = np.random.default_rng(2).random((1, 3, 16, 16), dtype=np.float32)
    full, half = run(src, x), run(dst, x)
    assert np.isfinite(half).all()
    assert np.abs(full - half).max() < 2e-3 * np.abs(full).max()
