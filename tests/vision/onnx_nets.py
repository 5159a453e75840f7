"""A small ONNX network written with the onnx package, for tests of ONNX tools."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def conv_model(path: Path, seed: int = 0) -> Path:
    """A 3->8->2 channel pair of convolutions with biases and a small scale that stays float."""
    rng = np.random.default_rng(seed)
    w1 = numpy_helper.from_array(rng.normal(0, 0.3, (8, 3, 3, 3)).astype(np.float32), "c1.weight")
    b1 = numpy_helper.from_array(rng.normal(0, 0.1, 8).astype(np.float32), "c1.bias")
    w2 = numpy_helper.from_array(rng.normal(0, 0.3, (2, 8, 1, 1)).astype(np.float32), "c2.weight")
    scale = numpy_helper.from_array(np.array([0.5], np.float32), "scale")
    nodes = [helper.make_node("Conv", ["images", "c1.weight", "c1.bias"], ["h"], pads=[1] * 4),
             helper.make_node("Relu", ["h"], ["r"]),
             helper.make_node("Conv", ["r", "c2.weight"], ["o"]),
             helper.make_node("Mul", ["o", "scale"], ["out"])]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("images", TensorProto.FLOAT, [1, 3, 16, 16])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, 2, 16, 16])],
        [w1, b1, w2, scale])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    helper.set_model_props(model, {"names": "{0: 'card'}", "stride": "32"})
    onnx.save(model, str(path))
    return path
