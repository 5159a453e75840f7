"""Go on training a shipped pyramid patch classifier, the shape classifier
(``models/pyramids-shape.onnx``) or the colour classifier (``models/pyramids-color.onnx``,
``--task color``), from its ONNX file, with plain torch on the CPU.

    python -m vision.pyramids.finetune --out runs/shape-ft --render DIR [--render DIR ...]
        [--task shape|color] [--minutes 20] [--lr 3e-4] [--threads 2] [--jobs 2]

Needs the ``train`` extra (torch, ultralytics, onnx); never imported at runtime and never run
in CI. Nothing is downloaded.

Why: the shipped classifiers were trained by ultralytics from the YAML in
:mod:`vision.pyramids.train` on a GPU lent for one session, and only their ONNX exports are
kept. To teach one new scenes (crowded tables under lamps, say) without a GPU and without
starting again from random weights, this module

1. rebuilds the same network in torch: ultralytics' ``ClassificationModel`` from
   :data:`vision.pyramids.train.MODEL_YAML` with its batch norms fused, as the export has
   them, and copies every weight from the ONNX file by name (:func:`from_onnx`; the two
   agree to 1e-5 on any input);
2. cuts the patches of the rendered folders exactly as :mod:`vision.pyramids.train`
   does (:func:`vision.pyramids.train.scene_samples`, the shipped heat map's peaks
   included), kept as arrays in memory instead of PNG folders (:func:`cut`, cached in
   ``OUT/shape.npz`` or ``OUT/color.npz``; every 10th scene is validation): the shape
   classifier's are the pyramids', the colour classifier's the ``none`` ones too;
3. trains on with AdamW and a cosine learning rate over the wall-clock budget, each batch
   half mirrored (for shapes, the mirrored sector's label,
   :func:`classifier.mirror_shape_label`) and its brightness jittered by up to 15% as
   ultralytics did (:func:`finetune`); the weights with the best validation pips (what the
   finder reads first of a shape), or top-1 for colours, are kept, the starting ones
   included, so the result is never worse than the shipped file on that measure;
4. exports ONNX with the shipped file's input and output names and metadata (class names
   in the network's own order) to ``OUT/pyramids-shape.onnx`` or
   ``OUT/pyramids-color.onnx``.

Its first result (2026-11-24) read more pips right on dev and held-out renders but misread a
pyramid of the bundled sample game, so it was not shipped (models/pyramids-shape.md): check
``companion demo --observations vision`` before shipping what it writes.
"""

from __future__ import annotations

import json
import logging
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from vision.pyramids.classifier import (
    COLOR_CLASSES,
    COLOR_MODEL,
    PATCH_PX,
    SHAPE_CLASSES,
    SHAPE_MODEL,
    mirror_shape_label,
    network_input,
)
from vision.pyramids.train_colors import (
    SCENE_GLOB,
    budget_epochs,
    patch_trainer_parser,
    start_patch_training,
)
from vision.train_extra import TRAIN_PACKAGES

log = logging.getLogger(__name__)

VAL_EVERY = 10
LR = 3e-4
T = TypeVar("T")
#: scenes cut per task of the process pool
CHUNK = 100
#: each classifier: (its classes, its shipped file, its cut samples' cache in --out)
TASKS: dict[str, tuple[tuple[str, ...], str, str]] = {
    "shape": (SHAPE_CLASSES, SHAPE_MODEL, "shape.npz"),
    "color": (COLOR_CLASSES, COLOR_MODEL, "color.npz"),
}


def from_onnx(path: Path, n_classes: int) -> Any:
    """The torch network of the ONNX patch classifier ``path`` (ultralytics YAML of
    :mod:`vision.pyramids.train`, batch norms fused), its weights copied by name."""
    import onnx
    import torch
    from onnx import numpy_helper
    from ultralytics.nn.tasks import ClassificationModel

    from vision.pyramids.train import MODEL_YAML

    with tempfile.TemporaryDirectory() as d:
        yaml = Path(d) / "cls.yaml"
        yaml.write_text(MODEL_YAML.format(nc=n_classes), encoding="utf-8")
        net = ClassificationModel(str(yaml), ch=3, nc=n_classes, verbose=False)
    net = net.fuse(verbose=False)
    weights = {i.name: numpy_helper.to_array(i) for i in onnx.load(str(path)).graph.initializer}
    state = net.state_dict()
    missing = [k for k in state if k not in weights]
    if missing:
        raise ValueError(f"{path}: not the network of vision.pyramids.train.MODEL_YAML "
                         f"(no weights for {', '.join(missing[:3])}...)")
    net.load_state_dict({k: torch.from_numpy(weights[k].copy()).reshape(state[k].shape)
                         for k in state})
    return net


def _cut_chunk(args: tuple[str, int, int, int], task: str = "shape"
               ) -> tuple[np.ndarray, list[str], np.ndarray]:
    import cv2

    from calibration.mat import load_mat
    from models import model_path
    from vision.pyramids.colors import default_model
    from vision.pyramids.find import Looker
    from vision.pyramids.heat import HEAT_MODEL, HeatNet
    from vision.pyramids.train import heat_peaks, scene_samples
    from vision.pyramids.train_colors import calibrated_scenes

    folder, lo, hi, first = Path(args[0]), args[1], args[2], args[3]
    cv2.setNumThreads(1)
    mat = load_mat(folder / "mat.json")
    looker, heat = Looker(mat, default_model()), HeatNet(model_path(HEAT_MODEL))
    patches, labels, scenes = [], [], []
    for n, image, truth, calib in calibrated_scenes(folder, mat, lo, hi):
        look = looker.look(image, calib)
        rng = np.random.default_rng(first + n)
        for patch, color, shape in scene_samples(image, truth, look, rng,
                                                 heat_peaks(heat, look)):
            label = color if task == "color" else shape
            if label is not None:
                patches.append(patch)
                labels.append(label)
                scenes.append(first + n)
    return (np.array(patches, np.uint8).reshape(-1, PATCH_PX, PATCH_PX, 3), labels,
            np.array(scenes, np.int64))


def cut_chunks(folders: Sequence[Path], cut_chunk: Callable[[tuple[str, int, int, int]], T],
               jobs: int = 2) -> list[T]:
    """``cut_chunk((folder, lo, hi, first))`` over each CHUNK scenes of each rendered folder
    (folder k's scene ids from ``first`` = k x 100000), in ``jobs`` processes, in order,
    with progress logged. A folder that is not a render is named (ValueError)."""
    work = []
    for k, folder in enumerate(folders):
        n = len(list(Path(folder).glob(SCENE_GLOB)))
        if n == 0 or not (Path(folder) / "mat.json").is_file():
            raise ValueError(f"{folder}: not a rendered folder (companion synth output)")
        work += [(str(folder), lo, min(n, lo + CHUNK), k * 100_000) for lo in range(0, n, CHUNK)]
    parts = []
    t0 = time.monotonic()
    with ProcessPoolExecutor(max(1, jobs)) as pool:
        for i, part in enumerate(pool.map(cut_chunk, work)):
            parts.append(part)
            log.info("cut %d/%d chunks of %d scenes (%.0f s)", i + 1, len(work), CHUNK,
                     time.monotonic() - t0)
    return parts


def cut(folders: list[Path], cache: Path, jobs: int = 2, task: str = "shape"
        ) -> dict[str, np.ndarray]:
    """The patches of ``folders`` with their labels for ``task`` (the pyramids' with their
    shape classes; for ``color`` the ``none`` ones too, with colour classes): ``patches``
    (N, 64, 64, 3) uint8, ``labels`` (N,) class names, ``scene`` (N,) ids (folder k's
    scenes from k x 100000). Cached in ``cache``."""
    if cache.is_file():
        log.info("using the cut patches in %s", cache)
        return dict(np.load(cache))
    parts = cut_chunks(folders, partial(_cut_chunk, task=task), jobs)
    data = {"patches": np.concatenate([p[0] for p in parts]),
            "labels": np.array([lab for p in parts for lab in p[1]]),
            "scene": np.concatenate([p[2] for p in parts])}
    cache.parent.mkdir(parents=True, exist_ok=True)
    np.savez(cache, **data)  # type: ignore[arg-type]
    return data


def pips_and_pose(p: np.ndarray, y: np.ndarray, names: tuple[str, ...]) -> tuple[float, float]:
    """(pips right, upright/lying right) as the finder reads them: each size's classes
    summed, upright against the lying sectors."""
    size = np.array([int(c[0]) for c in names])
    upright = np.array([c[1] == "U" for c in names])
    by_size = np.stack([p[:, size == s].sum(axis=1) for s in (1, 2, 3)], axis=1)
    pips = float(np.mean(by_size.argmax(axis=1) + 1 == size[y]))
    pose = float(np.mean((p[:, upright].sum(axis=1) >= 0.5) == upright[y]))
    return pips, pose


def finetune(data: dict[str, np.ndarray], start: Path, out: Path, minutes: float,
             threads: int = 2, lr: float = LR, batch: int = 256, seed: int = 0,
             task: str = "shape") -> tuple[Path, dict[str, float]]:
    """Train the ``task`` classifier of the ONNX file ``start`` on for ``minutes`` on
    ``data`` (as :func:`cut` gives it); write the best weights' ONNX to ``out`` (the
    start's metadata kept). Returns (``out``, figures of the start and of the result on
    validation)."""
    import onnx
    import torch

    from vision.pyramids.classifier import PatchClassifier

    torch.set_num_threads(max(1, threads))
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    classes = TASKS[task][0]
    names = PatchClassifier(start, classes).names    # the network's order
    index = {c: i for i, c in enumerate(names)}
    y_all = np.array([index[str(c)] for c in data["labels"]], np.int64)
    # a mirrored patch: the mirrored sector of a lying pyramid, the same colour
    mirror = np.array([index[mirror_shape_label(c)] if task == "shape" else i
                       for i, c in enumerate(names)])
    measure = "pips" if task == "shape" else "top1"
    val = data["scene"] % VAL_EVERY == 0
    xt, yt, xv, yv = data["patches"][~val], y_all[~val], data["patches"][val], y_all[val]
    if not len(xt) or not len(xv):
        raise ValueError("too few scenes for training and validation")
    net = from_onnx(start, len(names))
    head = net.model[-1]

    def evaluate() -> dict[str, float]:
        net.eval()
        head.export = True       # softmax, as exported
        with torch.no_grad():
            p = np.concatenate([net(torch.from_numpy(network_input(xv[a:a + 512]))).numpy()
                                for a in range(0, len(xv), 512)])
        head.export = False
        net.train()
        got = {"top1": float(np.mean(p.argmax(axis=1) == yv)),
               "loss": float(-np.mean(np.log(np.clip(p[np.arange(len(yv)), yv], 1e-7, 1))))}
        if task == "shape":
            got["pips"], got["pose"] = pips_and_pose(p, yv, names)
        else:   # the finder's first question: pyramid or not
            none = index["none"]
            got["none_right"] = float(np.mean((p.argmax(axis=1) == none) == (yv == none)))
        return got

    def line(ev: dict[str, float]) -> str:
        return ", ".join(f"{k} {v:.4f}" for k, v in ev.items())

    first = evaluate()
    log.info("%d training and %d validation patches; the start: %s", len(xt), len(xv),
             line(first))
    best = (first[measure], {k: v.clone() for k, v in net.state_dict().items()}, first)
    opt = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=1e-4)
    loss_f = torch.nn.CrossEntropyLoss()

    def batch_loss(idx: np.ndarray) -> Any:
        x, y = xt[idx].copy(), yt[idx].copy()
        flip = rng.random(len(idx)) < 0.5
        x[flip], y[flip] = x[flip, :, ::-1], mirror[y[flip]]
        gain = rng.uniform(0.85, 1.15, (len(idx), 1, 1, 1)).astype(np.float32)
        xi = np.clip(network_input(x) * gain, 0.0, 1.0)
        return loss_f(net(torch.from_numpy(xi)), torch.from_numpy(y))

    t0 = time.monotonic()
    epoch = 0
    for epoch, train_loss in budget_epochs(opt, lr, minutes, np.arange(len(xt)), batch, rng,
                                           batch_loss):
        ev = evaluate()
        log.info("epoch %d (%.1f min): train loss %.3f, validation %s", epoch,
                 (time.monotonic() - t0) / 60, train_loss, line(ev))
        if ev[measure] > best[0]:
            best = (ev[measure], {k: v.clone() for k, v in net.state_dict().items()}, ev)
    net.load_state_dict(best[1])
    net.eval()
    head.export = True
    src = onnx.load(str(start))
    i_name, o_name = src.graph.input[0].name, src.graph.output[0].name
    out.parent.mkdir(parents=True, exist_ok=True)
    torch.onnx.export(net, torch.zeros(1, 3, PATCH_PX, PATCH_PX), str(out),
                      input_names=[i_name], output_names=[o_name],
                      dynamic_axes={i_name: {0: "batch"}, o_name: {0: "batch"}},
                      opset_version=17, dynamo=False)
    model = onnx.load(str(out))
    onnx.helper.set_model_props(model, {p.key: p.value for p in src.metadata_props})
    onnx.save(model, str(out))
    figures = {**{f"start_{k}": v for k, v in first.items()}, **best[2], "epochs": epoch}
    log.info("wrote %s: validation %s %.4f (start %.4f)", out, measure, best[2][measure],
             first[measure])
    return out, figures


def main(argv: list[str] | None = None) -> int:
    ap = patch_trainer_parser("python -m vision.pyramids.finetune", __doc__, 20.0)
    ap.add_argument("--task", choices=sorted(TASKS), default="shape",
                    help="the classifier (default shape)")
    ap.add_argument("--start", type=Path, default=None,
                    help="the ONNX file to go on from (default: the shipped "
                         f"models/{SHAPE_MODEL} or models/{COLOR_MODEL})")
    ap.add_argument("--lr", type=float, default=LR, help=f"peak learning rate (default {LR})")
    args = ap.parse_args(argv)
    from models import model_path

    _, model, cache_name = TASKS[args.task]
    cache = args.out / cache_name
    start_patch_training(ap, args.render, cache, TRAIN_PACKAGES)   # (ultralytics' network)
    try:
        data = cut(args.render, cache, args.jobs, args.task)
        path, figures = finetune(data, args.start or model_path(model), args.out / model,
                                 args.minutes, args.threads, args.lr, seed=args.seed,
                                 task=args.task)
    except ValueError as exc:
        ap.error(str(exc))
    print(path, json.dumps({k: round(v, 4) for k, v in figures.items()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
