"""A trainable checkpoint of the card detector, rebuilt from its shipped ONNX file.

Only ``models/cards-obb.onnx`` is shipped: the ``best.pt`` it was exported from stayed on
the machine that trained it, so going on from it (``companion train cards --init``, on a
lent GPU) meant starting from random weights. The weights are all in the ONNX file, though:
ultralytics' export folds each convolution's batch norm into the convolution (weight and
bias, under the module's own name). This module builds the same network from its YAML and
undoes the folding: the convolution takes the folded weight, and its batch norm becomes the
identity plus the folded bias (weight 1, running mean 0, running variance ``1 - eps``), so
the rebuilt network computes what the ONNX file computes. Fine-tuning then re-learns the
batch norms' statistics as usual.

    python -m vision.detection.recover [--onnx models/cards-obb.onnx] --out cards-obb.pt

Training only (the ``train`` extra: torch and ultralytics); nothing is downloaded.
"""

from __future__ import annotations

import argparse
import ast
import logging
import os
from pathlib import Path
from typing import Any

import numpy as np

from companion.core.errors import CompanionError

log = logging.getLogger(__name__)

#: the network the shipped detector is (vision.detection.train.CardTrainConfig.model_yaml)
MODEL_YAML = "yolo11n-obb.yaml"


class RecoverError(CompanionError, ValueError):
    """The ONNX file does not fit the network (the message names what differs)."""


def _onnx_weights(path: Path) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    import onnx
    from onnx import numpy_helper

    try:
        model = onnx.load(str(path))
    except Exception as exc:  # onnx raises its own types for a bad file
        raise RecoverError(f"{path}: not an ONNX model ({str(exc).splitlines()[0][:200]})") \
            from None
    weights = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    meta = {p.key: p.value for p in model.metadata_props}
    return weights, meta


def rebuild(onnx_path: Path, model_yaml: str = MODEL_YAML) -> Any:
    """The ultralytics detection network of ``model_yaml`` carrying the ONNX file's weights
    (a torch ``nn.Module``, in eval mode). RecoverError when a weight is missing or of
    another shape, or when the file has weights the network has no place for."""
    os.environ.setdefault("YOLO_OFFLINE", "1")
    import torch
    from ultralytics.nn.modules import Conv
    from ultralytics.nn.tasks import OBBModel

    weights, meta = _onnx_weights(Path(onnx_path))
    try:   # ultralytics writes the class names as a Python dict literal
        names = {int(k): str(v) for k, v in
                 ast.literal_eval(meta.get("names", "{0: 'card'}")).items()}
    except (ValueError, SyntaxError, AttributeError, TypeError):
        raise RecoverError(f"{onnx_path}: unreadable class names {meta.get('names')!r}") \
            from None
    nc = max(1, len(names))
    net = OBBModel(model_yaml, nc=nc, verbose=False)
    used: set[str] = set()

    def take(name: str, like: Any) -> Any:
        if name not in weights:
            raise RecoverError(f"{onnx_path}: no weight {name!r} for the {model_yaml} network")
        w = torch.from_numpy(np.array(weights[name], np.float32))
        if tuple(w.shape) != tuple(like.shape):
            raise RecoverError(f"{onnx_path}: {name} has shape {tuple(w.shape)}, the network "
                               f"expects {tuple(like.shape)}")
        used.add(name)
        return w

    with torch.no_grad():
        for mod_name, mod in net.named_modules():
            if isinstance(mod, Conv) and isinstance(getattr(mod, "bn", None),
                                                    torch.nn.BatchNorm2d):
                prefix = f"{mod_name}.conv"
                mod.conv.weight.copy_(take(f"{prefix}.weight", mod.conv.weight))
                bias = take(f"{prefix}.bias", mod.bn.bias)
                mod.bn.weight.fill_(1.0)
                mod.bn.bias.copy_(bias)
                mean, var = mod.bn.running_mean, mod.bn.running_var
                assert mean is not None and var is not None   # tracked by YOLO's batch norms
                mean.zero_()
                var.fill_(1.0 - mod.bn.eps)
        # the head's last convolutions have a bias of their own and no batch norm
        for name, param in net.named_parameters():
            if name in weights and name not in used:
                param.copy_(take(name, param))
    unused = sorted(set(weights) - used)
    if unused:
        raise RecoverError(f"{onnx_path}: {len(unused)} weights have no place in the "
                           f"{model_yaml} network (first: {unused[0]})")
    net.eval()
    stride = meta.get("stride")
    if stride is not None and int(float(stride)) != int(net.stride.max()):
        raise RecoverError(f"{onnx_path}: stride {stride}, the network's is "
                           f"{int(net.stride.max())}")
    net.names = names
    return net


def save_checkpoint(net: Any, out: Path, imgsz: int) -> Path:
    """``net`` as an ultralytics checkpoint that ``YOLO(out)`` (and so ``companion train cards
    --init out``) loads."""
    import torch

    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    net.args = {"task": "obb", "imgsz": imgsz}
    torch.save({"model": net, "train_args": {"task": "obb", "imgsz": imgsz},
                "epoch": -1, "date": None, "version": None}, str(out))
    return out


def max_difference(onnx_path: Path, net: Any, count: int = 3, seed: int = 0) -> float:
    """The largest difference between the ONNX file's raw output and ``net``'s on ``count``
    random canvases: how exactly the rebuilt network computes what was shipped."""
    import onnxruntime as ort
    import torch

    sess = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    inp = sess.get_inputs()[0]
    size = int(inp.shape[2])
    rng = np.random.default_rng(seed)
    worst = 0.0
    for _ in range(count):
        x = rng.random((1, 3, size, size), dtype=np.float32)
        want = sess.run(None, {inp.name: x})[0]
        with torch.no_grad():
            got = net(torch.from_numpy(x))
        got = got[0] if isinstance(got, (tuple, list)) else got
        worst = max(worst, float(np.abs(got.numpy() - want).max()))
    return worst


def main(argv: list[str] | None = None) -> int:
    from models import model_path

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--onnx", type=Path, default=None,
                    help="the exported detector (default: the shipped cards-obb.onnx)")
    ap.add_argument("--out", type=Path, required=True, help="the checkpoint to write (.pt)")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    onnx_path = args.onnx or model_path("cards-obb.onnx")
    try:
        net = rebuild(onnx_path)
    except RecoverError as exc:
        log.error("recover: %s", exc)
        return 1
    diff = max_difference(onnx_path, net)
    imgsz = 320
    save_checkpoint(net, args.out, imgsz)
    log.info("recover: %s -> %s (largest output difference from the ONNX file: %.2g)",
             onnx_path, args.out, diff)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
