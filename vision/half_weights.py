"""ONNX files whose weights are stored in float16 and computed in float32.

A detector's file is almost all weights: stored in half precision it takes half the room,
which is what lets ``models/`` ship a card detector and a card identity network per deck
under the issue's 30 MB. Each halved weight ``W`` becomes an initializer ``W__f16`` and a
``Cast`` node back to float32 named ``W``, so the graph is otherwise unchanged; onnxruntime
folds those casts away when it loads the file, and the network runs in float32 as before
(same speed; outputs move by the rounding of the weights: at most 0.005 in the shipped card
detector's scores, 0.001 in an identity network's probabilities). Nothing at run time needs
this module: onnxruntime reads the file as it is.

Writing a halved copy needs the ``onnx`` package (the ``train`` and ``test`` extras)::

    python -m vision.half_weights models/cards-obb.onnx [--out FILE]
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Any

import numpy as np

from companion.core.errors import CompanionError

log = logging.getLogger(__name__)

#: what a halved weight's stored initializer is called, after the weight's own name
HALF_SUFFIX = "__f16"
#: weights smaller than this stay float32 (scales and the like: nothing to save)
MIN_HALVED_SIZE = 16
#: a weight with a value this large or larger stays float32 (float16 would make it infinite)
HALF_MAX = 65000.0
#: the metadata key a halved copy carries (value: "float16")
STORED_KEY = "weights_stored"


class HalfWeightsError(CompanionError, ValueError):
    """A file that is not an ONNX model, or one already halved (the message names it)."""


def _load(path: Path) -> Any:
    import onnx

    from models import first_line

    try:
        return onnx.load(str(path))
    except Exception as exc:  # onnx raises its own types for a bad file
        raise HalfWeightsError(f"{path}: not an ONNX model ({first_line(exc)})") from None


def halve(model: Any, source: object = "model") -> int:
    """Store each float32 weight of the loaded ONNX ``model`` (in place) that has at least
    MIN_HALVED_SIZE values, all under HALF_MAX, in float16 behind a Cast to float32
    (metadata kept, ``weights_stored`` added); returns how many were halved. ``source``
    names the model in the error for one already halved."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    meta = {p.key: p.value for p in model.metadata_props}
    if meta.get(STORED_KEY) == "float16":
        raise HalfWeightsError(f"{source}: its weights are already stored in float16")
    graph = model.graph
    kept, casts = [], []
    for init in graph.initializer:
        w = numpy_helper.to_array(init)
        if (w.dtype == np.float32 and w.size >= MIN_HALVED_SIZE
                and float(np.abs(w).max()) < HALF_MAX):
            half = numpy_helper.from_array(w.astype(np.float16), init.name + HALF_SUFFIX)
            kept.append(half)
            casts.append(helper.make_node("Cast", [half.name], [init.name],
                                          to=TensorProto.FLOAT, name=init.name + "_cast"))
        else:
            kept.append(init)
    nodes = list(graph.node)
    del graph.initializer[:]
    graph.initializer.extend(kept)
    del graph.node[:]
    graph.node.extend(casts + nodes)   # a node's inputs must come before it
    helper.set_model_props(model, {**meta, STORED_KEY: "float16"})
    onnx.checker.check_model(model)
    return len(casts)


def store_half(src: Path, dst: Path) -> Path:
    """Write ``dst``: the ONNX file ``src`` halved (:func:`halve`). ``dst`` may be ``src``.
    Returns ``dst``."""
    import onnx

    model = _load(Path(src))
    count = halve(model, src)
    Path(dst).parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(dst))
    log.info("%s: %d weights stored in float16 -> %s", src, count, dst)
    return Path(dst)


def float_weights(model: Any) -> dict[str, np.ndarray]:
    """Every initializer of the loaded ONNX ``model`` as float32 where it was float32 before
    halving, under the name the graph computes with (a halved weight under its own name, not
    ``W__f16``)."""
    from onnx import TensorProto, numpy_helper

    weights = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    for node in model.graph.node:
        if (node.op_type == "Cast" and len(node.input) == 1 and node.input[0] in weights
                and node.input[0].endswith(HALF_SUFFIX)
                and any(a.name == "to" and a.i == TensorProto.FLOAT for a in node.attribute)):
            weights[node.output[0]] = weights.pop(node.input[0]).astype(np.float32)
    return weights


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("model", type=Path, help="an ONNX file with float32 weights")
    ap.add_argument("--out", type=Path, default=None,
                    help="where the halved copy goes (default: over the file itself)")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        out = store_half(args.model, args.out or args.model)
    except HalfWeightsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{out}: {out.stat().st_size / 1e6:.2f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
