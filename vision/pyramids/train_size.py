"""Train the pyramid finder's size reader, ``models/pyramids-size.onnx``: pips and upright
or lying from a closer patch than the shape classifier's, for the white, clear and black
pyramids whose size the finder cannot fit to their colour's pixels.

    python -m vision.pyramids.train_size --out runs/size --render DIR [--render DIR ...]
        [--task size|white-clear|pointing|color] [--minutes 60|14|40|40] [--threads 2]
        [--jobs 2]
        [--seed 0] [--device cpu|cuda] [--init models/pyramids-size.onnx] [--lr LR]

The same cut patches train three more readers: ``--task white-clear`` (white or clear, on
the white and clear pyramids' patches), ``--task pointing`` (a lying pyramid's apex in
twelve sectors clockwise from the patch's up, :data:`POINT_CLASSES`, on every lying
pyramid's patches, its mirrored patches labelled with the mirrored sector) and ``--task
color`` (a pyramid's colour, the ten of :data:`vision.pyramids.colors.COLORS`, on every
patch); ``--init`` with another task's file (the size or white-or-clear reader's) takes its
convolutions and starts a new last layer.

Needs the ``train`` extra (torch); never imported at runtime, never run in CI. Small enough
to train on the CPU in tens of minutes; ``--device cuda`` holds the patches on a GPU and
draws each batch there, and ``--init`` goes on from a shipped file (:func:`from_onnx`).
:mod:`vision.pyramids.train_lease` renders, cuts and trains both tasks on a lent GPU
machine.

Why: the shape classifier (``pyramids-shape.onnx``) sees 72 mm of table in 64 px, 0.9 px a
mm; a small pyramid's base is 16 px there and a large one's 28, and white and clear plastic
shows its outline only as faint edges on paper and art. For the seven hues the finder fits
each size's silhouette to the colour's pixels (``SIZE_FIT_WEIGHT``); for white, clear and
black it has only that classifier, which on crowded dev tables under lamps got one white or
clear pyramid's size in four wrong. This network looks at :data:`SPAN_MM` of table (1.14 px
a mm) and answers six classes: ``{pips}U`` and ``{pips}L``.

Data: every rendered scene is calibrated from its markers with its true lens and looked at
as the finder looks at it (:class:`vision.pyramids.find.Looker`, the shipped heat map's
peaks of at least 0.1 beside the colour table's candidates). Each pyramid at least half
visible gives a patch at every candidate within :data:`POS_MM` of its silhouette's
centroid and one at the centroid moved up to :data:`JITTER_MM` at random, since the finder
reads a pyramid where its candidate lies, which is rarely the middle. All colours are cut
(the network is colour-blind, and the hues' outlines teach it sizes too); the pyramid's
colour is kept with each patch, and validation figures are given for white and clear apart.
Every 10th scene is validation. Each patch keeps its pyramid's apex direction too (degrees
clockwise from the patch's up, nan when upright), for the pointing task.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from vision.pyramids.classifier import (
    COLOR_READ_CLASSES,
    COLOR_READ_MODEL,
    PATCH_PX,
    POINT_CLASSES,
    POINT_MODEL,
    SECTORS,
    SIZE_CLASSES,
    SIZE_MODEL,
    WHITE_CLEAR_CLASSES,
    WHITE_CLEAR_MODEL,
    mirror_sector,
    sector,
)
from vision.pyramids.train_colors import (
    budget_epochs,
    patch_trainer_parser,
    start_patch_training,
)

log = logging.getLogger(__name__)

#: table each patch covers: a large lying pyramid (about 45 mm apex to base) still fits
#: when the candidate is a few mm off its middle
SPAN_MM = 56.0
POS_MM = 6.0
JITTER_MM = 4.0
VAL_EVERY = 10
LR = 3e-3
BATCH = 128
#: peak learning rate going on from a shipped file (``--init``), as the verifier's
LR_INIT = 1e-3
LIGHT = ("white", "clear")
#: the cut patches' cache in the working folder, for every task (:data:`TASKS`) and both
#: entry points (``companion train pyramid-size`` / ``pyramid-white-clear`` /
#: ``pyramid-point`` / ``pyramid-color-read`` and this module's main)
SAMPLES_FILE = "size.npz"
#: wall-clock budgets (minutes) by default: the size reader's validation loss still fell
#: at 25 (models/pyramids-size.md); the white-or-clear reader overfits after about 14
MINUTES = {"size": 60.0, "white-clear": 14.0, "pointing": 40.0, "color": 40.0}
#: what can be trained on the cut patches: (classes, file written)
TASKS: dict[str, tuple[tuple[str, ...], str]] = {
    "size": (SIZE_CLASSES, SIZE_MODEL),
    "white-clear": (WHITE_CLEAR_CLASSES, WHITE_CLEAR_MODEL),
    "pointing": (POINT_CLASSES, POINT_MODEL),
    "color": (COLOR_READ_CLASSES, COLOR_READ_MODEL),
}


def size_label(pips: int, upright: bool) -> int:
    """Index in :data:`SIZE_CLASSES`."""
    return (pips - 1) + (0 if upright else 3)


def scene_samples(image: np.ndarray, truth: dict[str, Any], look: Any, peaks: np.ndarray,
                  rng: np.random.Generator
                  ) -> tuple[np.ndarray, list[int], list[str], list[float]]:
    """(patches (N, 64, 64, 3) uint8 BGR, class indices, colours, apex directions) of one
    rendered scene: a lying pyramid's apex in degrees clockwise from its patch's up (away
    from the camera's nadir, as the finder cuts it), nan for an upright one."""
    from vision.pyramids.classifier import patch_up_deg
    from vision.pyramids.geometry import polygon_centroid
    from vision.pyramids.train_colors import truth_silhouettes_mm

    pyrs = truth.get("pyramids", [])
    sils = truth_silhouettes_mm(truth, look.topdown.calib)
    if not sils:
        return np.zeros((0, PATCH_PX, PATCH_PX, 3), np.uint8), [], [], []
    cents = np.array([polygon_centroid(s) for s in sils])
    good = [p.get("visible", 1.0) >= 0.5 and p.get("in_frame", True) for p in pyrs]
    pts = [np.array(c.center_mm, np.float64) for c in look.candidates]
    pts += [np.asarray(p, np.float64) for p in np.asarray(peaks).reshape(-1, 2)]
    centers: list[np.ndarray] = []
    which: list[int] = []
    for pt in pts:
        d = np.linalg.norm(cents - pt, axis=1)
        k = int(np.argmin(d))
        if d[k] <= POS_MM and good[k]:
            centers.append(pt)
            which.append(k)
    for k, ok in enumerate(good):
        if ok:
            r, a = JITTER_MM * math.sqrt(rng.random()), rng.uniform(0, 2 * math.pi)
            centers.append(cents[k] + r * np.array([math.cos(a), math.sin(a)]))
            which.append(k)
    if not centers:
        return np.zeros((0, PATCH_PX, PATCH_PX, 3), np.uint8), [], [], []
    patches = look.patches(image, np.array(centers), SPAN_MM)
    labels = [size_label(int(pyrs[k]["pips"]), bool(pyrs[k]["upright"])) for k in which]
    up = patch_up_deg(np.array(centers), look.camera[:2])
    rel = [math.nan if pyrs[k]["upright"] else (float(pyrs[k]["pointing_deg"]) - float(u)) % 360.0
           for k, u in zip(which, up)]
    return patches, labels, [str(pyrs[k]["color"]) for k in which], rel


def _cut_chunk(args: tuple[str, int, int, int]
               ) -> tuple[np.ndarray, list[int], list[str], np.ndarray, list[float]]:
    import cv2

    from calibration.mat import load_mat
    from models import model_path
    from vision.pyramids.colors import default_model
    from vision.pyramids.find import Looker
    from vision.pyramids.heat import HEAT_MODEL, HeatNet
    from vision.pyramids.train import heat_peaks
    from vision.pyramids.train_colors import calibrated_scenes

    folder, lo, hi, first = Path(args[0]), args[1], args[2], args[3]
    cv2.setNumThreads(1)
    mat = load_mat(folder / "mat.json")
    looker, heat = Looker(mat, default_model()), HeatNet(model_path(HEAT_MODEL))
    parts, labels, colors, scenes, rels = [], [], [], [], []
    for n, image, truth, calib in calibrated_scenes(folder, mat, lo, hi):
        look = looker.look(image, calib)
        rng = np.random.default_rng(first + n)
        p, lab, col, rel = scene_samples(image, truth, look, heat_peaks(heat, look), rng)
        parts.append(p)
        labels += lab
        colors += col
        rels += rel
        scenes += [first + n] * len(lab)
    patches = (np.concatenate(parts) if parts
               else np.zeros((0, PATCH_PX, PATCH_PX, 3), np.uint8))
    return patches, labels, colors, np.array(scenes, np.int64), rels


def cut(folders: Sequence[Path], cache: Path, jobs: int = 2) -> dict[str, np.ndarray]:
    """``patches`` (N, 64, 64, 3) uint8, ``labels`` (N,) class indices, ``colors`` (N,),
    ``scene`` (N,) ids (folder k's scenes from k x 100000), ``pointing`` (N,) a lying
    apex's degrees clockwise from the patch's up (nan upright) of the rendered ``folders``;
    cached in ``cache``."""
    from vision.pyramids.finetune import cut_chunks

    if cache.is_file():
        log.info("using the cut patches in %s", cache)
        return dict(np.load(cache))
    parts = cut_chunks(folders, _cut_chunk, jobs)
    data = {"patches": np.concatenate([p[0] for p in parts]),
            "labels": np.array([v for p in parts for v in p[1]], np.int64),
            "colors": np.array([v for p in parts for v in p[2]]),
            "scene": np.concatenate([p[3] for p in parts]),
            "pointing": np.array([v for p in parts for v in p[4]], np.float32)}
    if not len(data["labels"]):
        raise ValueError("no pyramid in the rendered folders calibrated from its markers")
    cache.parent.mkdir(parents=True, exist_ok=True)
    np.savez(cache, **data)  # type: ignore[arg-type]
    return data


def task_data(data: dict[str, np.ndarray], task: str) -> dict[str, np.ndarray]:
    """The cut patches as one task's training data: every patch with its size class
    (``size``), the white and clear pyramids' patches labelled by colour (``white-clear``),
    the lying pyramids' patches, every colour, labelled by their apex's sector
    (``pointing``), or every patch labelled by its colour (``color``)."""
    if task not in TASKS:
        raise ValueError(f"unknown task {task!r}: expected one of {', '.join(TASKS)}")
    if task == "size":
        return data
    if task == "pointing":
        if "pointing" not in data:
            raise ValueError("the cut patches have no apex directions (cut before the "
                             "pointing task existed): delete the cache and cut again")
        keep = np.isfinite(data["pointing"])
        out = {k: v[keep] for k, v in data.items()}
        out["labels"] = np.array([sector(float(a)) for a in out["pointing"]], np.int64)
        return out
    classes = COLOR_READ_CLASSES if task == "color" else WHITE_CLEAR_CLASSES
    keep = np.isin(data["colors"], classes)
    out = {k: v[keep] for k, v in data.items()}
    out["labels"] = np.array([classes.index(str(c)) for c in out["colors"]], np.int64)
    return out


def build_net(n_classes: int = len(SIZE_CLASSES)) -> Any:
    """Six 3x3 convolutions with batch norm (24-48-48-96-96-128 channels, four of stride 2),
    global average pooling, one linear layer to the classes, softmax when exported:
    about 0.23 M parameters, about 36 MFLOPs a patch."""
    import torch
    from torch import nn

    from vision.pyramids.train_verify import conv_bn_relu as cbr

    class SizeNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.body = nn.Sequential(*cbr(3, 24, 2), *cbr(24, 48, 2), *cbr(48, 48),
                                      *cbr(48, 96, 2), *cbr(96, 96), *cbr(96, 128, 2),
                                      nn.AdaptiveAvgPool2d(1), nn.Flatten())
            self.head = nn.Linear(128, n_classes)
            self.export = False

        def forward(self, x: Any) -> Any:
            z = self.head(self.body(x))
            return torch.softmax(z, dim=1) if self.export else z

    return SizeNet()


def figures(p: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """Pips right and upright/lying right, read as the finder reads them
    (:func:`vision.pyramids.finetune.pips_and_pose` over the six classes)."""
    from vision.pyramids.finetune import pips_and_pose

    pips, pose = pips_and_pose(p, y, SIZE_CLASSES)
    return {"pips": pips, "pose": pose}


def evaluate(net: Any, batches: Any, colors: np.ndarray, idx: np.ndarray, task: str = "size"
             ) -> dict[str, float]:
    """Validation loss and accuracy of samples ``idx`` of ``batches``
    (:class:`vision.pyramids.train_verify.PatchBatches`); for ``size`` also pips and pose,
    over all and of the white and clear ones (``colors``)."""
    import torch

    net.eval()
    net.export = True
    ps, ys = [], []
    with torch.no_grad():
        for a in range(0, len(idx), 512):
            x, _, y = batches.draw(idx[a:a + 512], None)
            ps.append(net(x).cpu().numpy())
            ys.append(y.cpu().numpy())
    net.export = False
    net.train()
    p, y = np.concatenate(ps), np.concatenate(ys)
    out = {"loss": float(-np.mean(np.log(p[np.arange(len(y)), y] + 1e-9))),
           "accuracy": float(np.mean(p.argmax(axis=1) == y))}
    if task == "white-clear":
        return out
    light = np.isin(colors[idx], LIGHT)
    if task == "color":
        if light.any():
            out["light_accuracy"] = float(np.mean(p[light].argmax(axis=1) == y[light]))
        return out
    if task == "pointing":
        off = np.abs((p.argmax(axis=1) - y + SECTORS // 2) % SECTORS - SECTORS // 2)
        out["within_45"] = float(np.mean(off <= 1))
        if light.any():
            out["light_accuracy"] = float(np.mean(off[light] == 0))
            out["light_within_45"] = float(np.mean(off[light] <= 1))
        return out
    out.update(figures(p, y))
    if light.any():
        out.update({f"light_{k}": v for k, v in figures(p[light], y[light]).items()})
    return out


def from_onnx(path: Path, n_classes: int, body_only: bool = False) -> Any:
    """The :func:`build_net` network of an exported reader ``path`` (``pyramids-size.onnx``
    or ``pyramids-white-clear.onnx`` as shipped), so a training can go on from a shipped
    file whose ``best.pt`` stayed where it was trained. As for the verifier
    (:func:`vision.pyramids.train_verify.from_onnx`), each batch norm the export folded
    into its convolution holds that bias and otherwise passes its input through; call
    :func:`vision.pyramids.train_heat.recalibrate_bn` on training batches before training
    it. ``body_only``: the convolutions alone, the last layer left as built (another task's
    file: the pointing reader starts from the size reader's body)."""
    from vision.pyramids.train_verify import load_folded

    net = build_net(n_classes)
    return load_folded(path, net, net.body, () if body_only else ("head.",),
                       f"reader of build_net's shape with {n_classes} classes")


def train(data: dict[str, np.ndarray], out: Path, minutes: float, threads: int = 2,
          seed: int = 0, batch: int = BATCH, lr: float | None = None, task: str = "size",
          device: str = "cpu", init: Path | None = None) -> tuple[Path, dict[str, float]]:
    """Train ``task`` (:data:`TASKS`) for ``minutes`` of wall clock (cosine learning rate),
    validating after each epoch on every 10th scene; exports the weights of the best
    validation loss to ``out/`` + the task's file name. Returns the file and its validation
    figures. Each batch is half mirrored (size and pose do not change), shifted by up to
    3 px (:data:`vision.pyramids.train_verify.SHIFT_PX`) and its light jittered, on
    ``device`` (``cpu``, or ``cuda`` where there is a GPU: the patches are held there).
    ``init``: go on from the task's exported file (:func:`from_onnx`, its batch norms
    recalibrated on training batches), validated first, so the result is never worse on
    this validation set than it. ``lr``: peak learning rate (default :data:`LR`,
    :data:`LR_INIT` going on from ``init``)."""
    import torch

    from vision.pyramids.train_verify import RECALIBRATE_BATCHES, PatchBatches

    if task not in TASKS:
        raise ValueError(f"unknown task {task!r}: expected one of {', '.join(TASKS)}")
    classes, name = TASKS[task]
    data = task_data(data, task)

    torch.manual_seed(seed)
    torch.set_num_threads(max(1, threads))
    rng = np.random.default_rng(seed)
    val_mask = data["scene"] % VAL_EVERY == 0
    tr, val = np.flatnonzero(~val_mask), np.flatnonzero(val_mask)
    if not len(tr) or not len(val):
        raise ValueError(f"{len(tr)} training and {len(val)} validation patches: render more "
                         "scenes")
    log.info("%d training patches, %d validation (%d white or clear)", len(tr), len(val),
             int(np.isin(data["colors"][val], LIGHT).sum()))
    lr = lr or (LR if init is None else LR_INIT)
    # a mirrored patch's apex turns the other way: its sector is mirrored with it
    mirror = (np.array([mirror_sector(k) for k in range(SECTORS)], np.int64)
              if task == "pointing" else None)
    batches = PatchBatches({"patches": data["patches"], "labels": data["labels"]}, device,
                           class_labels=True, mirror_labels=mirror)
    body_only = init is not None and _class_count(init) != len(classes)
    if body_only:
        log.info("%s answers other classes: its convolutions only, a new last layer", init)
    net = (build_net(len(classes)) if init is None
           else from_onnx(init, len(classes), body_only))
    net = net.to(device)
    if init is not None:
        from vision.pyramids.train_heat import recalibrate_bn

        calib = np.random.default_rng(seed + 1)
        recalibrate_bn(net, [batches.draw(calib.choice(tr, min(len(tr), batch)), calib)[0]
                             for _ in range(RECALIBRATE_BATCHES)])
        log.info("going on from %s, peak learning rate %g", init, lr)
    opt = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=1e-4)
    lossf = torch.nn.CrossEntropyLoss()

    def batch_loss(idx: np.ndarray) -> Any:
        x, _, y = batches.draw(idx, rng)
        return lossf(net(x), y)

    def weights() -> dict[str, Any]:
        return {k: v.detach().cpu().clone() for k, v in net.state_dict().items()}

    t0 = time.monotonic()
    best: tuple[float, Any, dict[str, float]] = (math.inf, None, {})
    out.mkdir(parents=True, exist_ok=True)
    epoch = 0
    if init is not None:
        ev = evaluate(net, batches, data["colors"], val, task)
        log.info("%s on this validation set: loss %.4f, accuracy %.4f", init, ev["loss"],
                 ev["accuracy"])
        best = (ev["loss"], weights(), ev)
    for epoch, train_loss in budget_epochs(opt, lr, minutes, tr, batch, rng, batch_loss):
        ev = evaluate(net, batches, data["colors"], val, task)
        if task == "color":
            log.info("epoch %d (%.1f min): train loss %.4f, val loss %.4f, accuracy %.4f; "
                     "white and clear: accuracy %.4f", epoch, (time.monotonic() - t0) / 60,
                     train_loss, ev["loss"], ev["accuracy"],
                     ev.get("light_accuracy", math.nan))
        elif task == "pointing":
            log.info("epoch %d (%.1f min): train loss %.4f, val loss %.4f, sector %.4f, "
                     "within 45 degrees %.4f; white and clear: sector %.4f, within 45 %.4f",
                     epoch, (time.monotonic() - t0) / 60, train_loss, ev["loss"],
                     ev["accuracy"], ev["within_45"], ev.get("light_accuracy", math.nan),
                     ev.get("light_within_45", math.nan))
        elif task == "white-clear":
            log.info("epoch %d (%.1f min): train loss %.4f, val loss %.4f, accuracy %.4f",
                     epoch, (time.monotonic() - t0) / 60, train_loss, ev["loss"],
                     ev["accuracy"])
        else:
            log.info("epoch %d (%.1f min): train loss %.4f, val loss %.4f, accuracy %.4f, "
                     "pips %.4f, upright/lying %.4f; white and clear: pips %.4f, "
                     "upright/lying %.4f", epoch, (time.monotonic() - t0) / 60, train_loss,
                     ev["loss"], ev["accuracy"], ev.get("pips", math.nan),
                     ev.get("pose", math.nan), ev.get("light_pips", math.nan),
                     ev.get("light_pose", math.nan))
        if ev["loss"] < best[0]:
            state = weights()
            torch.save({"state": state}, out / f"{task}-best.pt")
            best = (ev["loss"], state, ev)
    net.load_state_dict(best[1])
    net = net.cpu()
    result = dict(best[2], epochs=epoch, train_seconds=round(time.monotonic() - t0),
                  train_patches=len(tr), val_patches=len(val))
    return export(net, out / name, classes), result


def _class_count(path: Path) -> int:
    """How many classes the exported reader ``path`` answers (its last layer's rows)."""
    import onnx
    from onnx import numpy_helper

    for w in onnx.load(str(path)).graph.initializer:
        if w.name == "head.weight":
            return int(numpy_helper.to_array(w).shape[0])
    raise ValueError(f"{path}: not an exported reader of build_net's shape (no head.weight)")


def export(net: Any, path: Path, classes: tuple[str, ...] = SIZE_CLASSES) -> Path:
    """``net`` as ONNX: input (N, 3, 64, 64) RGB 0-1, output (N, classes) probabilities;
    class names (``names``, as the other patch classifiers have them) and ``patch_mm`` in
    its metadata."""
    import onnx
    import torch

    net.eval()
    net.export = True
    torch.onnx.export(net, (torch.zeros(2, 3, PATCH_PX, PATCH_PX),), str(path),
                      input_names=["images"], output_names=["probs"],
                      dynamic_axes={"images": {0: "n"}, "probs": {0: "n"}},
                      opset_version=17, dynamo=False)
    net.export = False
    model = onnx.load(str(path))
    onnx.helper.set_model_props(model, {
        "names": repr(dict(enumerate(classes))), "patch_mm": repr(SPAN_MM)})
    onnx.save(model, str(path))
    log.info("wrote %s (%d bytes)", path, path.stat().st_size)
    return path


def parser() -> argparse.ArgumentParser:
    """``python -m vision.pyramids.train_size``'s command line; its ``--minutes`` defaults
    to the task's budget (:data:`MINUTES`, as ``companion train`` has it)."""
    ap = patch_trainer_parser("python -m vision.pyramids.train_size", __doc__, None)
    ap.add_argument("--batch", type=int, default=BATCH)
    ap.add_argument("--lr", type=float, default=None,
                    help=f"peak learning rate (default {LR:g}, {LR_INIT:g} with --init)")
    ap.add_argument("--device", default="cpu", help="cpu, or cuda where there is a GPU")
    ap.add_argument("--init", type=Path, default=None,
                    help="go on from this exported file of the task (say "
                         "models/pyramids-size.onnx) instead of random weights")
    ap.add_argument("--task", choices=list(TASKS), default="size",
                    help="size: pips and pose (pyramids-size.onnx); white-clear: white or "
                         "clear (pyramids-white-clear.onnx); pointing: a lying pyramid's apex "
                         "(pyramids-point.onnx); color: a pyramid's colour "
                         "(pyramids-color-read.onnx), all on the same cut patches; the "
                         "default budget is the task's: "
                         + ", ".join(f"{t} {m:g} min" for t, m in MINUTES.items()))
    return ap


def main(argv: list[str] | None = None) -> int:
    ap = parser()
    args = ap.parse_args(argv)
    if args.minutes is None:
        args.minutes = MINUTES[args.task]
    if args.init is not None and not args.init.is_file():
        ap.error(f"--init {args.init}: no such file")
    cache = args.out / SAMPLES_FILE
    start_patch_training(ap, args.render, cache)
    try:
        data = cut(args.render, cache, args.jobs)
        path, result = train(data, args.out, args.minutes, args.threads, args.seed,
                             args.batch, args.lr, args.task, args.device, args.init)
        from vision.pyramids.quantize import int8_copy

        print(int8_copy(path, cache))    # the file the finder runs
    except ValueError as exc:
        ap.error(str(exc))
    print(path, json.dumps({k: round(float(v), 4) for k, v in result.items()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
