"""Train the pyramid heat map (``models/pyramids-heat.onnx``, :mod:`vision.pyramids.heat`).

    python -m vision.pyramids.train_heat --out runs/heat --render DIR [--render DIR ...]
        [--minutes 25] [--threads 2]
    python -m vision.pyramids.train_heat --out runs/heat --render DIR \
        --quantize models/pyramids-heat.onnx      # the int8 copy alone

Needs the ``train`` extra (torch); never imported at runtime and never run in CI. Nothing is
downloaded: the network is small and defined here, trained from random weights.

Data: each image of the rendered folders (``companion synth`` output) is calibrated from its
markers with its true intrinsics and turned into the finder's normalised top-down view
(:class:`vision.pyramids.find.Looker`), shrunk to ``--ppm`` (default :data:`heat.HEAT_PPM`;
the exported model says its own in its metadata, ``view_ppm``). The target of each
:data:`heat.CELL_MM` cell is 1 where the centroid of a pyramid's silhouette (as the view
shows it, parallax included) falls, a Gaussian of :data:`SIGMA_MM` around it, 0 elsewhere;
pyramids less than half visible (hands) are "don't care" within :data:`IGNORE_MM`. Every
10th image is validation. Loss: the CenterNet focal loss on the cells. Training sees random
crops with flips and quarter turns (the view's parallax points every way already) and a
little brightness and contrast jitter; progress is logged every epoch.

Export writes ``pyramids-heat.onnx`` (float) and its int8 copy ``pyramids-heat.int8.onnx``,
the one the finder runs (:func:`quantize`: a third less time a frame on a CPU with VNNI,
as fast as the float file without).
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from calibration.mat import load_mat
from vision.pyramids.geometry import polygon_centroid
from vision.pyramids.heat import CELL_MM, HEAT_PPM, heat_input, pad_to, stride_for
from vision.pyramids.quantize import int8_path, static_int8
from vision.pyramids.train_colors import budget_cosine_lr

log = logging.getLogger(__name__)

SIGMA_MM = 3.0
IGNORE_MM = 14.0
VAL_EVERY = 10
#: training crops are this many mm square (256 px at 0.5 px/mm)
CROP_MM = 512
#: peak learning rate from random weights, and going on from a best.pt
LR = 3e-3
LR_INIT = 1e-3
#: training batches whose statistics a network read from ONNX starts its batch norms with
RECALIBRATE_BATCHES = 16


# -- data -------------------------------------------------------------------------------------

def prepare_one(args: tuple[str, str, float]
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(view at ``ppm`` uint8 (h, w, 3), centroids mm (N, 2), don't-care points (M, 2)) of
    one rendered image ``(image path, mat path, ppm)``, or None when its markers do not
    calibrate it."""
    from vision.pyramids.colors import default_model
    from vision.pyramids.find import VIEW_PPM, Looker
    from vision.pyramids.train_colors import truth_calibration, truth_silhouettes_mm

    img_path, mat_path, ppm = args
    image = cv2.imread(img_path, cv2.IMREAD_COLOR)
    if image is None:
        log.warning("%s: unreadable, skipped", img_path)
        return None
    truth = json.loads(Path(img_path).with_suffix(".json").read_text(encoding="utf-8"))
    mat = load_mat(Path(mat_path))
    calib = truth_calibration(image, truth, mat)
    if not calib.calibrated:
        return None
    look = Looker(mat, default_model()).look(image, calib)
    x = heat_input(look.view, VIEW_PPM, ppm)[0]
    small = np.clip(x.transpose(1, 2, 0) * 255.0 + 0.5, 0, 255).astype(np.uint8)
    cents, dont = [], []
    for p, sil in zip(truth.get("pyramids", []), truth_silhouettes_mm(truth, calib)):
        c = polygon_centroid(sil)
        if p.get("visible", 1.0) >= 0.5 and p.get("in_frame", True):
            cents.append(c)
        elif p.get("visible", 1.0) > 0.02:
            dont.append(c)
    return (small, np.array(cents, np.float64).reshape(-1, 2),
            np.array(dont, np.float64).reshape(-1, 2))


def targets(shape_hw: tuple[int, int], cents: np.ndarray, dont: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray]:
    """(target (h, w) float32, weight (h, w) float32) on the output cells."""
    h, w = shape_hw
    uu, vv = np.meshgrid((np.arange(w) + 0.5) * CELL_MM, (np.arange(h) + 0.5) * CELL_MM)
    t = np.zeros((h, w), np.float32)
    for cx, cy in cents:
        g = np.exp(-((uu - cx) ** 2 + (vv - cy) ** 2) / (2 * SIGMA_MM ** 2))
        t = np.maximum(t, g.astype(np.float32))
        u, v = int(cx // CELL_MM), int(cy // CELL_MM)
        if 0 <= u < w and 0 <= v < h:
            t[v, u] = 1.0
    wt = np.ones((h, w), np.float32)
    for cx, cy in dont:
        wt[(uu - cx) ** 2 + (vv - cy) ** 2 <= IGNORE_MM ** 2] = 0.0
    return t, wt


def prepare_views(folders: list[Path], jobs: int, ppm: float = HEAT_PPM
                  ) -> dict[str, np.ndarray]:
    """``views``, ``targets`` and ``weights`` of every image of ``folders`` that calibrates,
    at ``ppm`` px/mm, in ``jobs`` processes (1: in this one); empty when none does."""
    stride = stride_for(ppm)
    work: list[tuple[str, str, float]] = []
    for folder in folders:
        mat = folder / "mat.json"
        work += [(str(p), str(mat), ppm) for p in sorted(folder.glob("[0-9]*.jpg"))]
    views, tgts, wts = [], [], []
    t0 = time.monotonic()
    with (ProcessPoolExecutor(jobs) if jobs > 1 else nullcontext()) as pool:
        prepared = (map(prepare_one, work) if pool is None
                    else pool.map(prepare_one, work, chunksize=8))
        for i, res in enumerate(prepared):
            if res is not None:
                small, cents, dont = res
                h, w = small.shape[0] // stride, small.shape[1] // stride
                t, wt = targets((h, w), cents, dont)
                views.append(small)
                tgts.append(t)
                wts.append(wt)
            if (i + 1) % 100 == 0 or i + 1 == len(work):
                log.info("prepared %d/%d images (%.0f s)", i + 1, len(work),
                         time.monotonic() - t0)
    if not views:
        return {}
    return {"views": np.stack(views), "targets": np.stack(tgts), "weights": np.stack(wts)}


def prepare(folders: list[Path], cache: Path, jobs: int, ppm: float = HEAT_PPM
            ) -> dict[str, np.ndarray]:
    """Every image of ``folders`` prepared once at ``ppm`` px/mm (:func:`prepare_views`,
    cached in ``cache``, an .npz that records its ``ppm``)."""
    if cache.is_file():
        log.info("using prepared data %s", cache)
        data = dict(np.load(cache))
        had = float(data.pop("ppm", HEAT_PPM))
        if abs(had - ppm) > 1e-9:
            raise ValueError(f"{cache}: views prepared at {had} px/mm, not {ppm}: give "
                             f"another --views file or --ppm {had}")
        return data
    data = prepare_views(folders, jobs, ppm)
    if not data:
        raise ValueError(f"no image of {', '.join(map(str, folders))} calibrated from its "
                         "markers")
    cache.parent.mkdir(parents=True, exist_ok=True)
    arrays: dict[str, Any] = data   # (numpy's stub reads **arrays as its allow_pickle flag)
    np.savez(cache, ppm=np.float64(ppm), **arrays)
    return data


# -- network ----------------------------------------------------------------------------------

def build_net(width: int = 32, dilations: tuple[int, ...] = (2, 4, 8),
              stride: int = 2) -> Any:
    """Stem to the output cells (one stride-2 convolution per halving: ``stride`` 2 at 0.5
    px/mm, 4 at 1 px/mm), one full 3x3 conv, then one depthwise-separable dilated block per
    ``dilations`` (receptive field ~ 80 mm at the default: a pyramid and what it stands on),
    one logit a cell. At the default width 32 ~9.5 k parameters, ~10 ms on one onnxruntime
    thread for the default mat's view at 0.5 px/mm."""
    import torch.nn as nn

    def cbr(i: int, o: int, k: int = 3, s: int = 1, d: int = 1, g: int = 1) -> Any:
        return nn.Sequential(nn.Conv2d(i, o, k, s, padding=d * (k // 2), dilation=d, groups=g,
                                       bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True))

    def sep(c: int, d: int) -> Any:
        return nn.Sequential(cbr(c, c, 3, 1, d, g=c), cbr(c, c, 1))

    halvings = int(round(math.log2(stride)))
    if stride < 2 or 2 ** halvings != stride:
        raise ValueError(f"stride {stride}: expected a power of two, at least 2")
    stem = [cbr(3, 16, 3, 2)] + [cbr(16, 16, 3, 2) for _ in range(halvings - 1)]
    head = nn.Conv2d(width, 1, 1)
    nn.init.constant_(head.bias, -4.0)   # most cells are empty: start there
    return nn.Sequential(*stem, cbr(16, width), *[sep(width, d) for d in dilations], head)


def from_onnx(path: Path) -> tuple[Any, int, tuple[int, ...], float]:
    """The :func:`build_net` network of the exported heat map ``path`` (``pyramids-heat.onnx``
    as shipped), with its width, dilations and input resolution, so a training can go on
    from a shipped file whose ``best.pt`` stayed on the machine that trained it. The export
    folded each batch norm into its convolution; here each batch norm holds that
    convolution's bias and otherwise passes its input through (running mean 0, variance 1),
    so the network computes what the file does. Call :func:`recalibrate_bn` on training
    batches before training it: a batch norm normalises by the batch's own statistics
    while training, and these hold none."""
    import onnx
    import torch
    from onnx import numpy_helper

    model = onnx.load(str(path))
    weights = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    convs = [n for n in model.graph.node if n.op_type == "Conv"]
    ppm = float({p.key: p.value for p in model.metadata_props}.get("view_ppm", HEAT_PPM))

    def attr(node: Any, name: str, default: list[int]) -> list[int]:
        for a in node.attribute:
            if a.name == name:
                return list(a.ints) if a.ints else [int(a.i)]
        return default

    if not convs or any(len(c.input) < 3 or c.input[1] not in weights for c in convs):
        raise ValueError(f"{path}: not an exported heat map (expected convolutions with "
                         "weights and biases)")
    width = int(weights[convs[-1].input[1]].shape[1])
    dilations = tuple(attr(c, "dilations", [1])[0] for c in convs
                      if attr(c, "group", [1])[0] > 1)
    net = build_net(width, dilations, stride_for(ppm))
    mine = [m for m in net.modules() if isinstance(m, torch.nn.Conv2d)]
    if len(mine) != len(convs) or any(
            tuple(m.weight.shape) != weights[c.input[1]].shape for m, c in zip(mine, convs)):
        raise ValueError(f"{path}: its convolutions are not build_net's (width {width}, "
                         f"dilations {dilations}, {len(convs)} convolutions)")
    bns = {id(seq[0]): seq[1] for seq in net.modules()
           if isinstance(seq, torch.nn.Sequential) and len(seq) == 3
           and isinstance(seq[1], torch.nn.BatchNorm2d)}
    with torch.no_grad():
        for m, c in zip(mine, convs):
            m.weight.copy_(torch.from_numpy(weights[c.input[1]].copy()))
            b = torch.from_numpy(weights[c.input[2]].copy())
            if m.bias is not None:
                m.bias.copy_(b)
                continue
            unfold_bias(bns[id(m)], b)
    return net, width, dilations, ppm


def unfold_bias(bn: Any, bias: Any) -> None:
    """Make batch norm ``bn`` add ``bias`` (a tensor of its channels) and otherwise pass its
    input through in eval mode (running mean 0, variance 1): the bias an export folded into
    the convolution before it, given back (:func:`from_onnx` here and in
    :mod:`vision.pyramids.train_verify`). Call under ``torch.no_grad()``."""
    bn.running_mean.zero_()
    bn.running_var.fill_(1.0)
    bn.weight.fill_(math.sqrt(1.0 + bn.eps))
    bn.bias.copy_(bias)


def recalibrate_bn(net: Any, batches: list[Any]) -> None:
    """Give every batch norm of ``net`` the running statistics of its input over
    ``batches`` (each the network's input, or a tuple of its inputs) and change its scale
    and shift so that ``net`` in eval mode computes what it did before: a network from
    :func:`from_onnx` then trains from where the file was, rather than from whatever its
    first batches' statistics make of it."""
    import torch

    bns = [m for m in net.modules() if isinstance(m, torch.nn.BatchNorm2d)]
    sums: dict[int, list[Any]] = {}

    def hook(i: int) -> Any:
        def f(_m: Any, inp: tuple[Any, ...]) -> None:
            x = inp[0].double()
            s = sums.setdefault(i, [0.0, 0.0, 0])
            s[0] = s[0] + x.sum((0, 2, 3))
            s[1] = s[1] + (x * x).sum((0, 2, 3))
            s[2] += x.numel() // x.shape[1]
        return f

    handles = [bn.register_forward_pre_hook(hook(i)) for i, bn in enumerate(bns)]
    was = net.training
    net.eval()
    try:
        with torch.no_grad():
            for x in batches:
                net(*x) if isinstance(x, tuple) else net(x)
    finally:
        for h in handles:
            h.remove()
        net.train(was)
    with torch.no_grad():
        for i, bn in enumerate(bns):
            s0, s1, n = sums[i]
            mean = s0 / n
            var = (s1 / n - mean * mean).clamp(min=0.0)
            old = torch.sqrt(bn.running_var.double() + bn.eps)
            g = bn.weight.double()
            bn.bias.copy_((bn.bias.double() + g * (mean - bn.running_mean.double()) / old)
                          .float())
            bn.weight.copy_((g * torch.sqrt(var + bn.eps) / old).float())
            bn.running_mean.copy_(mean.float())
            bn.running_var.copy_(var.float())


def focal_loss(logits: Any, target: Any, weight: Any) -> Any:
    import torch

    p = torch.sigmoid(logits).clamp(1e-4, 1 - 1e-4)
    pos = (target >= 0.999).float()
    lp = -torch.log(p) * (1 - p) ** 2 * pos
    ln = -torch.log(1 - p) * p ** 2 * (1 - target) ** 4 * (1 - pos)
    n = (pos * weight).sum().clamp(min=1.0)
    return ((lp + ln) * weight).sum() / n


class _Batches:
    """Training batches drawn from all views held as tensors on ``device`` (the GPU when
    there is one: cutting, turning and jittering there keeps it busy): a random
    :data:`CROP_MM` square of each, a random quarter turn, a random mirror, a little
    brightness and contrast jitter."""

    def __init__(self, data: dict[str, np.ndarray], device: str, ppm: float = HEAT_PPM
                 ) -> None:
        import torch

        self.torch = torch
        self.device = device
        self.ppm = ppm
        self.stride = stride_for(ppm)
        self.crop = int(round(CROP_MM * ppm))
        self.views = torch.from_numpy(data["views"]).to(device)        # N, H, W, 3 uint8
        self.targets = torch.from_numpy(data["targets"]).to(device)    # N, h, w
        self.weights = torch.from_numpy(data["weights"]).to(device)

    def draw(self, idx: np.ndarray, rng: np.random.Generator) -> tuple[Any, Any, Any]:
        """(views, targets, weights) of a batch: views ``idx``, each cut, turned and mirrored
        at random (:meth:`cut`), the light jittered."""
        b = len(idx)
        H, W = self.views.shape[1:3]
        S, crop = self.stride, self.crop
        y0 = rng.integers(0, (H - crop) // S + 1, b) * S
        x0 = rng.integers(0, (W - crop) // S + 1, b) * S
        turns = rng.integers(0, 4, b)
        mirror = rng.random(b) < 0.5
        x, t, w = self.cut(idx, y0, x0, turns, mirror)
        gain = self.torch.from_numpy(rng.uniform(0.85, 1.15, (b, 1, 1, 1))).float()
        bias = self.torch.from_numpy(rng.uniform(-0.08, 0.08, (b, 1, 1, 1))).float()
        x = x.float() / 255.0
        return (x - 0.5) * gain.to(self.device) + 0.5 + bias.to(self.device), t, w

    def cut(self, idx: np.ndarray, y0: np.ndarray, x0: np.ndarray, turns: np.ndarray,
            mirror: np.ndarray) -> tuple[Any, Any, Any]:
        """The :data:`CROP_MM` squares of views ``idx`` from pixel ``(x0, y0)`` (multiples
        of the stride), each turned ``turns`` quarter turns, then mirrored left to right
        where ``mirror``: (views uint8 (B, 3, c, c), targets (B, 1, c', c'), weights), all
        cut at once (one gather each: on a GPU a loop over the batch was most of a step)."""
        torch = self.torch
        dev, S, crop = self.device, self.stride, self.crop
        i = torch.from_numpy(np.asarray(idx, np.int64)).to(dev)[:, None, None]

        def gather(a: Any, r0: np.ndarray, c0: np.ndarray, n: int) -> Any:
            g = np.arange(n)
            r = torch.from_numpy((r0[:, None] + g).astype(np.int64)).to(dev)[:, :, None]
            c = torch.from_numpy((c0[:, None] + g).astype(np.int64)).to(dev)[:, None, :]
            return a[i, r, c]

        v = gather(self.views, y0, x0, crop).permute(0, 3, 1, 2).contiguous()
        t = gather(self.targets, y0 // S, x0 // S, crop // S)[:, None].contiguous()
        w = gather(self.weights, y0 // S, x0 // S, crop // S)[:, None].contiguous()
        for k in range(1, 4):
            sel = np.flatnonzero(turns == k)
            if len(sel):
                j = torch.from_numpy(sel).to(dev)
                for a in (v, t, w):
                    a[j] = torch.rot90(a[j], k, (2, 3))
        sel = np.flatnonzero(mirror)
        if len(sel):
            j = torch.from_numpy(sel).to(dev)
            for a in (v, t, w):
                a[j] = torch.flip(a[j], (3,))
        return v, t, w

    def whole(self, i: int) -> tuple[Any, Any, Any]:
        """One whole view, as the finder gives it (padded as :func:`heat.heat_input` pads)."""
        torch = self.torch
        v = self.views[i].permute(2, 0, 1).float()[None] / 255.0
        mult = pad_to(self.ppm)
        ph, pw = -v.shape[2] % mult, -v.shape[3] % mult
        if ph or pw:
            v = torch.nn.functional.pad(v, (0, pw, 0, ph), value=128 / 255)
        return v, self.targets[i][None, None], self.weights[i][None, None]


def evaluate(net: Any, batches: _Batches, idx: np.ndarray) -> dict[str, float]:
    """Loss, and peak recall / precision at 0.3 within 8 mm, on whole validation views."""
    import torch

    from vision.pyramids.heat import HeatMap

    net.eval()
    losses, tp, n_t, n_p = [], 0, 0, 0
    with torch.no_grad():
        for i in idx:
            x, t, w = batches.whole(int(i))
            h, ww = t.shape[2:]
            out = net(x)[:, :, :h, :ww]
            losses.append(float(focal_loss(out, t, w)))
            p = torch.sigmoid(out)[0, 0].cpu().numpy()
            tn, wn = t[0, 0].cpu().numpy(), w[0, 0].cpu().numpy()
            pts, _ = HeatMap(p).peaks(0.3)
            tv, tu = np.nonzero(tn >= 0.999)
            truth = np.column_stack([(tu + 0.5) * CELL_MM, (tv + 0.5) * CELL_MM])
            n_t += len(truth)
            keep = wn[np.clip((pts[:, 1] // CELL_MM).astype(int), 0, h - 1),
                      np.clip((pts[:, 0] // CELL_MM).astype(int), 0, ww - 1)] > 0 \
                if len(pts) else np.zeros(0, bool)
            pts = pts[keep]
            n_p += len(pts)
            if len(pts) and len(truth):
                d = np.linalg.norm(truth[:, None] - pts[None], axis=2)
                tp += int((d.min(axis=1) <= 8.0).sum())
    net.train()
    return {"loss": float(np.mean(losses)), "recall": tp / max(1, n_t),
            "precision": min(1.0, tp / max(1, n_p))}


def train(data: dict[str, np.ndarray], out: Path, minutes: float, threads: int,
          seed: int = 0, batch: int = 16, lr: float | None = None, device: str = "cpu",
          width: int = 32, dilations: tuple[int, ...] = (2, 4, 8),
          eval_every_s: float = 60.0, init: Path | None = None, ppm: float = HEAT_PPM
          ) -> Path:
    """Train for ``minutes`` of wall clock (cosine learning rate over it), validating after
    every ``eval_every_s`` seconds of training (at least once an epoch on a slow machine);
    keeps the weights of the best validation loss (``out/best.pt``) and exports them to
    ``out/pyramids-heat.onnx``. ``init``: go on from a ``best.pt`` of an earlier run, or
    from an exported heat map (``.onnx``: :func:`from_onnx`, its batch norms recalibrated on
    :data:`RECALIBRATE_BATCHES` training batches); its
    width and dilations replace ``width`` and ``dilations``, and a resolution other than
    ``ppm``, the one ``data`` was prepared at, is refused; the starting weights are
    validated first, so the result is never worse on this validation set than them.
    ``lr``: peak learning rate (default :data:`LR`, :data:`LR_INIT` going on from ``init``)."""
    import torch

    if not lr:
        lr = LR if init is None else LR_INIT

    torch.manual_seed(seed)
    torch.set_num_threads(max(1, threads))
    rng = np.random.default_rng(seed)
    n = len(data["views"])
    val = np.arange(0, n, VAL_EVERY)
    tr = np.setdiff1d(np.arange(n), val)
    start: dict[str, Any] | None = None
    shipped = None
    if init is not None:
        if init.suffix == ".onnx":
            shipped, width, dilations, was = from_onnx(init)
        else:
            start = torch.load(init, map_location="cpu")
            width, dilations = int(start["width"]), tuple(int(d) for d in start["dilations"])
            was = float(start.get("ppm", HEAT_PPM))
        if abs(was - ppm) > 1e-9:
            raise ValueError(f"{init}: trained at {was} px/mm, the views are at {ppm}")
        log.info("going on from %s (width %d, dilations %s)", init, width, dilations)
    log.info("%d training views, %d validation views, device %s, width %d, dilations %s, "
             "%.2f px/mm", len(tr), len(val), device, width, dilations, ppm)
    batches = _Batches(data, device, ppm)
    net = shipped if shipped is not None else build_net(width, dilations, stride_for(ppm))
    if start is not None:
        net.load_state_dict(start["state"])
    net = net.to(device)
    if shipped is not None:
        calib = np.random.default_rng(seed + 1)
        recalibrate_bn(net, [batches.draw(calib.choice(tr, min(len(tr), batch)), calib)[0]
                             for _ in range(RECALIBRATE_BATCHES)])
    opt = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=1e-4)
    t0 = time.monotonic()
    deadline = t0 + 60.0 * minutes
    best: tuple[float, Any] = (math.inf, None)
    out.mkdir(parents=True, exist_ok=True)
    epoch, steps, last_eval, total = 0, 0, t0, []

    def snapshot(name: str) -> dict[str, Any]:
        """The weights now, saved as ``out/name`` (with what :func:`build_net` needs)."""
        state = {k: v.detach().cpu().clone() for k, v in net.state_dict().items()}
        torch.save({"state": state, "width": width, "dilations": list(dilations),
                    "ppm": ppm}, out / name)
        return state

    if init is not None:
        ev = evaluate(net, batches, val)
        log.info("starting weights: val loss %.3f, peak recall %.3f, precision %.3f",
                 ev["loss"], ev["recall"], ev["precision"])
        best = (ev["loss"], snapshot("best.pt"))
        last_eval = time.monotonic()
    while time.monotonic() < deadline:
        epoch += 1
        order = rng.permutation(tr)
        for s in range(max(1, len(tr) // batch)):
            budget_cosine_lr(opt, lr, t0, deadline)
            x, t, w = batches.draw(order[s * batch:(s + 1) * batch], rng)
            loss = focal_loss(net(x), t, w)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total.append(loss.item())
            steps += 1
            now = time.monotonic()
            if now >= deadline or now - last_eval >= eval_every_s:
                break
        now = time.monotonic()
        if now >= deadline or now - last_eval >= eval_every_s or device == "cpu":
            ev = evaluate(net, batches, val)
            # the interval counts training only: on a CPU, validating hundreds of whole
            # views takes most of a minute, and counting it left seconds to train between
            last_eval = time.monotonic()
            log.info("epoch %d, step %d (%.1f min): train loss %.3f, val loss %.3f, peak "
                     "recall %.3f, precision %.3f", epoch, steps, (now - t0) / 60,
                     np.mean(total), ev["loss"], ev["recall"], ev["precision"])
            total = []
            # the latest weights too: the loss is not the finder's whole story (a heat map
            # that finds more pyramids and a few more false peaks can serve it better)
            state = snapshot("last.pt")
            if ev["loss"] < best[0]:
                best = (ev["loss"], state)
                (out / "best.pt").write_bytes((out / "last.pt").read_bytes())
    net = net.cpu()
    if best[1] is not None:
        net.load_state_dict(best[1])
    path = export(net, out / "pyramids-heat.onnx", ppm)
    # the finder runs the int8 copy: its ranges measured on validation views
    quantize(path, [data["views"][i] for i in val[:QUANT_VIEWS]])
    return path


def export(net: Any, path: Path, ppm: float = HEAT_PPM) -> Path:
    """``net`` as ONNX at ``path``, its input resolution in the metadata (``view_ppm``)."""
    import onnx
    import torch

    net.eval()
    mult = pad_to(ppm)
    h, w = (int(math.ceil(mm * ppm / mult)) * mult for mm in (656, 904))
    x = torch.zeros(1, 3, h, w)
    torch.onnx.export(net, x, str(path), input_names=["view"], output_names=["heat"],
                      dynamic_axes={"view": {2: "h", 3: "w"}, "heat": {2: "hc", 3: "wc"}},
                      opset_version=17, dynamo=False)
    model = onnx.load(str(path))
    onnx.helper.set_model_props(model, {"view_ppm": repr(float(ppm))})
    onnx.save(model, str(path))
    log.info("wrote %s (%d bytes, %.2f px/mm)", path, path.stat().st_size, ppm)
    return path


#: images the int8 copy's activation ranges are measured on
QUANT_VIEWS = 64


def quantize(src: Path, views: list[np.ndarray], dst: Path | None = None) -> Path:
    """An int8 copy of the heat map ``src`` at ``dst`` (default :func:`int8_path`:
    ``pyramids-heat.onnx`` -> ``pyramids-heat.int8.onnx``,
    :data:`vision.pyramids.heat.HEAT_MODEL`, the finder's): static quantisation by
    onnxruntime (:func:`vision.pyramids.quantize.static_int8`: QDQ, weights per channel int8
    in 7 bits, activations uint8), their ranges measured on ``views``: uint8 (h, w, 3) views
    at the model's resolution, as :func:`prepare` makes them. Its peaks are the float file's
    (models/pyramids-heat.md). The metadata (``view_ppm``) is kept, and ``quantized_from``
    names ``src``.

    Weights in 7 bits (``reduce_range``): on a CPU without VNNI (AVX2 alone) onnxruntime's
    uint8 x int8 kernels add pairs of products in 16 bits, which full-range weights
    overflow: a copy made without it differed from the float map by up to 0.75 in a cell
    there (0.15 on an AVX-512 VNNI CPU); with it, at most 0.18 on either."""
    import onnx

    if not views:
        raise ValueError("no views to measure the activations on")
    model = onnx.load(str(src))
    name = model.graph.input[0].name
    meta = {p.key: p.value for p in model.metadata_props}
    mult = pad_to(float(meta.get("view_ppm", HEAT_PPM)))

    def feeds() -> Iterator[dict[str, np.ndarray]]:
        for v in views:
            h, w = v.shape[:2]
            v = cv2.copyMakeBorder(v, 0, -h % mult, 0, -w % mult, cv2.BORDER_CONSTANT,
                                   value=(128, 128, 128))
            yield {name: (v.astype(np.float32) / 255.0).transpose(2, 0, 1)[None]}

    dst = static_int8(src, dst or int8_path(src), feeds())
    log.info("wrote %s (%d bytes, int8, %d views measured)", dst, dst.stat().st_size,
             len(views))
    return dst


def calibration_views(folders: list[Path], count: int = QUANT_VIEWS, ppm: float = HEAT_PPM
                      ) -> list[np.ndarray]:
    """Views (as :func:`prepare` makes them) of ``count`` images spread evenly over the
    rendered ``folders``, for :func:`quantize`."""
    paths = [(str(p), str(f / "mat.json")) for f in folders
             for p in sorted(f.glob("[0-9]*.jpg"))]
    if not paths:
        raise ValueError(f"no rendered images in {', '.join(map(str, folders))}")
    pick = np.unique(np.linspace(0, len(paths) - 1, min(count, len(paths))).round().astype(int))
    views = []
    for k in pick:
        got = prepare_one((*paths[k], ppm))
        if got is not None:
            views.append(got[0])
    return views


def export_checkpoint(best: Path, path: Path) -> Path:
    """Export a ``best.pt`` written by :func:`train` (on another machine, say) to ONNX."""
    import torch

    ck = torch.load(best, map_location="cpu")
    ppm = float(ck.get("ppm", HEAT_PPM))
    net = build_net(int(ck["width"]), tuple(ck["dilations"]), stride_for(ppm))
    net.load_state_dict(ck["state"])
    return export(net, path, ppm)


def _model_ppm(path: Path) -> float:
    import onnx

    meta = {p.key: p.value for p in onnx.load(str(path)).metadata_props}
    return float(meta.get("view_ppm", HEAT_PPM))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vision.pyramids.train_heat",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True, help="working folder")
    ap.add_argument("--render", type=Path, action="append", default=[],
                    help="rendered synth folder (repeatable)")
    ap.add_argument("--minutes", type=float, default=25.0, help="training wall clock")
    ap.add_argument("--threads", type=int, default=2, help="torch threads")
    ap.add_argument("--jobs", type=int, default=2, help="processes preparing the views")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default="cpu", help="cpu, or cuda where there is a GPU")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=None,
                    help=f"peak learning rate (default {LR}, {LR_INIT} with --init)")
    ap.add_argument("--width", type=int, default=32, help="channels of the dilated blocks")
    ap.add_argument("--dilations", default="2,4,8", help="one dilated block per number")
    ap.add_argument("--ppm", type=float, default=HEAT_PPM,
                    help=f"input resolution, px per mm of table (default {HEAT_PPM}; 1.0 "
                         "sees finer edges for a few ms more a frame)")
    ap.add_argument("--views", type=Path, default=None,
                    help="prepared views (.npz; default OUT/views.npz, made when missing)")
    ap.add_argument("--prepare-only", action="store_true", help="prepare the views and stop")
    ap.add_argument("--init", type=Path, default=None, metavar="BEST_PT",
                    help="go on from this best.pt, or an exported heat map such as "
                         "models/pyramids-heat.onnx (its width and dilations), instead of "
                         "random weights")
    ap.add_argument("--export", type=Path, default=None, metavar="BEST_PT",
                    help="only export this best.pt to OUT/pyramids-heat.onnx (and its int8 "
                         "copy, measured on --render's images)")
    ap.add_argument("--quantize", type=Path, default=None, metavar="ONNX",
                    help="only write the int8 copy of this heat map to "
                         "OUT/<its name>.int8.onnx, measured on --render's images")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    if args.export is not None or args.quantize is not None:
        if args.quantize is not None and not args.render:
            ap.error("--quantize measures the int8 copy's ranges on --render folders")
        args.out.mkdir(parents=True, exist_ok=True)
        src = args.quantize
        if args.export is not None:
            src = export_checkpoint(args.export, args.out / "pyramids-heat.onnx")
            print(src)
            if not args.render:
                log.warning("no --render folders: the int8 copy the finder runs is not "
                            "written (run again with --quantize %s --render DIR)", src)
                return 0
        assert src is not None
        try:
            views = calibration_views(args.render, QUANT_VIEWS, _model_ppm(src))
            print(quantize(src, views, args.out / int8_path(src).name))
        except ValueError as exc:
            ap.error(str(exc))
        return 0
    views = args.views or args.out / "views.npz"
    if not views.is_file() and not args.render:
        ap.error(f"{views} does not exist: give --render folders to prepare it from")
    try:
        stride_for(args.ppm)
    except ValueError as exc:
        ap.error(str(exc))
    try:
        data = prepare(args.render, views, args.jobs, args.ppm)
    except ValueError as exc:
        ap.error(str(exc))
    if args.prepare_only:
        return 0
    dil = tuple(int(d) for d in args.dilations.split(","))
    path = train(data, args.out, args.minutes, args.threads, args.seed, batch=args.batch,
                 lr=args.lr, device=args.device, width=args.width, dilations=dil,
                 init=args.init, ppm=args.ppm)
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
