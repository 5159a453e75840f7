"""A trainable checkpoint of the card detector, rebuilt from its shipped ONNX file.

Only ``models/cards-obb.onnx`` is shipped: the ``best.pt`` it was exported from stayed on
the machine that trained it, so going on from it (``companion train cards --init``, on a
lent GPU) meant starting from random weights. The weights are all in the ONNX file, though:
ultralytics' export folds each convolution's batch norm into the convolution (weight and
bias, under the module's own name). This module builds the same network from its YAML and
undoes the folding: the convolution takes the folded weight, and its batch norm becomes the
identity plus the folded bias (weight 1, running mean 0, running variance ``1 - eps``), so
the rebuilt network computes what the ONNX file computes.

That identity is exact in evaluation, but not in training: a batch norm in training
normalises each batch by the batch's own mean and spread, which for a folded convolution are
far from 0 and 1, so the first training step would change what every layer computes (a CPU
fine-tune of 2026-11-28 lost a tenth of its validation mAP in its first epoch and never won
it back). :func:`calibrate_batch_norms` therefore gives each batch norm the statistics its
convolution's output really has on a few training canvases (mean ``m``, variance ``v``) and
the affine that undoes them (weight ``sqrt(v + eps)``, bias ``m`` + the folded bias): the
network still computes exactly the same in evaluation, and in training a batch whose
statistics are like those gets nearly the same output too.

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

    from models import first_line
    from vision.half_weights import float_weights

    try:
        model = onnx.load(str(path))
    except Exception as exc:  # onnx raises its own types for a bad file
        raise RecoverError(f"{path}: not an ONNX model ({first_line(exc)})") from None
    weights = float_weights(model)   # a file stored in float16 (vision.half_weights) too
    meta = {p.key: p.value for p in model.metadata_props}
    return weights, meta


def _folded_convs(net: Any) -> list[tuple[str, Any]]:
    """(name, module) of each convolution block whose batch norm ultralytics' export
    folds into the convolution."""
    import torch
    from ultralytics.nn.modules import Conv

    return [(name, m) for name, m in net.named_modules()
            if isinstance(m, Conv) and isinstance(getattr(m, "bn", None), torch.nn.BatchNorm2d)]


def rebuild(onnx_path: Path, model_yaml: str = MODEL_YAML) -> Any:
    """The ultralytics detection network of ``model_yaml`` carrying the ONNX file's weights
    (a torch ``nn.Module``, in eval mode). RecoverError when a weight is missing or of
    another shape, or when the file has weights the network has no place for."""
    os.environ.setdefault("YOLO_OFFLINE", "1")
    import torch
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
        for mod_name, mod in _folded_convs(net):
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


def calibrate_batch_norms(net: Any, canvases: np.ndarray, batch: int = 16) -> int:
    """Give the batch norms of a :func:`rebuild` network the statistics of its convolutions'
    outputs on ``canvases`` (N, 3, H, W float RGB 0-1, N >= 2), keeping what the network
    computes in evaluation (module docstring). Returns how many batch norms were set.
    ValueError names a wrong shape."""
    import torch

    x = np.asarray(canvases, np.float32)
    if x.ndim != 4 or x.shape[1] != 3 or x.shape[0] < 2:
        raise ValueError(f"canvases: expected (N >= 2, 3, H, W), got {x.shape}")
    convs = [m for _, m in _folded_convs(net)]
    sums: dict[int, list[Any]] = {}

    def hook(mod: Any, _inp: Any, out: Any) -> None:
        y = out.detach().double()
        s = sums.setdefault(id(mod), [0.0, 0.0, 0])
        s[0] = s[0] + y.sum(dim=(0, 2, 3))
        s[1] = s[1] + (y * y).sum(dim=(0, 2, 3))
        s[2] += y.shape[0] * y.shape[2] * y.shape[3]

    handles = [m.conv.register_forward_hook(hook) for m in convs]
    net.eval()
    try:
        with torch.no_grad():
            for i in range(0, len(x), batch):
                net(torch.from_numpy(x[i:i + batch]))
    finally:
        for h in handles:
            h.remove()
    with torch.no_grad():
        for m in convs:
            total, squares, n = sums[id(m.conv)]
            mean = total / n
            var = (squares / n - mean * mean).clamp(min=0.0)
            bn = m.bn
            run_mean, run_var = bn.running_mean, bn.running_var
            assert run_mean is not None and run_var is not None   # YOLO's batch norms track
            # what the batch norm computes in evaluation, y * scale + shift (after rebuild:
            # scale 1, shift the folded bias), kept with the new statistics
            scale = bn.weight.double() / torch.sqrt(run_var.double() + bn.eps)
            shift = bn.bias.double() - scale * run_mean.double()
            run_mean.copy_(mean.float())
            run_var.copy_(var.float())
            bn.weight.copy_((scale * torch.sqrt(var + bn.eps)).float())
            bn.bias.copy_((shift + scale * mean).float())
    return len(convs)


def canvases_from(folder: Path, count: int, imgsz: int, seed: int = 0) -> np.ndarray:
    """Up to ``count`` images of ``folder`` (a training split's rectified canvases), chosen
    with ``seed``, as (N, 3, imgsz, imgsz) RGB 0-1 for :func:`calibrate_batch_norms`."""
    import cv2

    from vision.tensors import nchw_rgb01

    files = sorted(p for p in Path(folder).rglob("*") if p.suffix.lower() in
                   (".jpg", ".jpeg", ".png"))
    rng = np.random.default_rng(seed)
    chosen = [files[i] for i in sorted(rng.permutation(len(files))[:count])]
    out = []
    for p in chosen:
        img = cv2.imread(str(p), cv2.IMREAD_COLOR)
        if img is not None:
            out.append(cv2.resize(img, (imgsz, imgsz), interpolation=cv2.INTER_AREA))
    if len(out) < 2:
        raise RecoverError(f"{folder}: fewer than 2 readable images to set the batch norms "
                           "from")
    return nchw_rgb01(np.stack(out))


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
