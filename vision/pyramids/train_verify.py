"""Train the pyramid finder's second opinion, ``models/pyramids-verify.onnx``
(:mod:`vision.pyramids.verify`), on rendered scenes.

    python -m vision.pyramids.train_verify --out runs/verify --render DIR [--render DIR ...]
        [--candidates all|doubtful] [--spans 72,48] [--samples OTHER/samples.npz ...]
        [--init models/pyramids-verify.onnx] [--lr LR] [--prepare-only]

Needs the ``train`` extra (torch); never imported at runtime, never run in CI. Small enough
to train on the CPU in tens of minutes.

Data: every rendered scene is looked at as the finder looks at it (the scene's markers and
true lens give the calibration, as for the other pyramid models): the colour table's
candidates and the shipped heat map's peaks of at least :data:`CUT_PEAK` (the finder's
floor, :data:`vision.pyramids.find.HEAT_PEAK`, has been higher: faint peaks are where white
and clear plastic hides), those at least :data:`vision.pyramids.find.COLD` warm, read by the
shipped colour classifier; every one the finder may ask about is kept (``--candidates
all``, the default; of those only the heat map proposed and the colour classifier calls
nothing, only the ones from :data:`CUT_NONE_MIN_HEAT` warm), or with ``--candidates
doubtful`` the :func:`vision.pyramids.verify.doubtful` ones alone. Each
is a pyramid when it lies within :data:`POS_MM` of the centroid of the silhouette of a
pyramid at least half visible, ``none`` when it is :data:`NEG_MM` from every centroid and
outside every silhouette (grown by 3 mm), else left out. Every 10th scene is validation.
The cut is cached as ``OUT/samples.npz``; ``--samples`` trains on earlier cuts beside it.
The exported file's int8 copy, which the finder runs, is made on that cut
(:func:`vision.pyramids.quantize.verifier_int8`).
``--init`` goes on from an exported verifier (:func:`from_onnx`) instead of starting afresh.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Sequence
from multiprocessing import Pool
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from calibration.mat import load_mat
from vision.pyramids.classifier import PATCH_MM, PATCH_PX
from vision.pyramids.geometry import polygon_centroid
from vision.pyramids.train_colors import (
    SCENE_GLOB,
    budget_epochs,
    patch_trainer_parser,
    start_patch_training,
)
from vision.pyramids.verify import DOUBT_MAX_NONE, FEATURES, doubtful, features
from vision.train_extra import TORCH_PACKAGES

log = logging.getLogger(__name__)

#: heat-map peaks cut (the finder's floor may be higher; see the module docstring)
CUT_PEAK = 0.1
#: ... but of the heat map's own candidates that the colour classifier calls nothing
#: (``none`` of at least DOUBT_MAX_NONE), only those at least this warm: below it they were
#: 86% of all samples and nearly all of them card art, and the finder's peaks start at 0.3
CUT_NONE_MIN_HEAT = 0.2
#: training patches are shifted by up to this many pixels each way (0: not at all)
SHIFT_PX = 3
POS_MM = 6.0
NEG_MM = 12.0
VAL_EVERY = 10
#: patch spans cut for every sample (mm): the colour classifier's, and a closer one
SPANS = (72.0, 48.0)
#: the span the shipped file was trained on
PATCH_MM_TRAIN = 48.0
#: scenes a cutting process takes at a time
CHUNK = 50
LR = 3e-3
#: the cut samples' cache in the working folder (``companion train pyramid-verify`` and
#: this module's main share it), and the default wall-clock budget (minutes)
SAMPLES_FILE = "samples.npz"
MINUTES = 30.0
#: which candidates are cut: the doubtful ones (what the first verifiers were asked about),
#: or every one the finder may ask about (it also asks about hues the colour classifier
#: took alone, :data:`vision.pyramids.find.VERIFY_HUE_MIN`, and candidates it turned away,
#: :data:`vision.pyramids.find.VERIFY_RECALL_MIN`)
CANDIDATES = ("doubtful", "all")
#: going on from a shipped file: its peak learning rate, and the training batches its batch
#: norms are recalibrated on (:func:`vision.pyramids.train_heat.recalibrate_bn`)
LR_INIT = 1e-3
RECALIBRATE_BATCHES = 16
#: scene ids of each further samples file are moved up by this much times its place, so
#: that scenes of different files never share an id (a multiple of VAL_EVERY: the split
#: stays the file's own)
SCENE_ID_STRIDE = 10_000_000


# -- data -------------------------------------------------------------------------------------

def label_points(pts: np.ndarray, truth: dict[str, Any], calib: Any) -> np.ndarray:
    """1 (a pyramid), 0 (``none``) or -1 (left out: beside a pyramid, or on one less than
    half visible) for each point (N, 2) mm."""
    from vision.pyramids.train_colors import truth_silhouettes_mm

    pyrs = truth.get("pyramids", [])
    sils = truth_silhouettes_mm(truth, calib)
    out = np.full(len(pts), -1, np.int8)
    if not sils:
        out[:] = 0
        return out
    cents = np.array([polygon_centroid(s) for s in sils])
    hulls = [cv2.convexHull(s.astype(np.float32)) for s in sils]
    good = np.array([p.get("visible", 1.0) >= 0.5 and p.get("in_frame", True) for p in pyrs])
    for i, pt in enumerate(np.asarray(pts, np.float64).reshape(-1, 2)):
        d = np.linalg.norm(cents - pt, axis=1)
        k = int(np.argmin(d))
        if d[k] <= POS_MM:
            out[i] = 1 if good[k] else -1
        elif d[k] > NEG_MM and all(
                cv2.pointPolygonTest(h, (float(pt[0]), float(pt[1])), True) <= -3.0
                for h in hulls):
            out[i] = 0
    return out


def scene_samples(image: np.ndarray, truth: dict[str, Any], look: Any, finder: Any,
                  which: str = "doubtful", spans: Sequence[float] = SPANS
                  ) -> tuple[dict[float, np.ndarray], np.ndarray, np.ndarray]:
    """({span mm: patches (N, 64, 64, 3) uint8} for each of ``spans``, features (N, F)
    float32, labels (N,) int8) of one scene's candidates (``which``, one of
    :data:`CANDIDATES`) as ``finder`` (a :class:`vision.pyramids.find.PyramidFinder` with
    the shipped heat map and colour classifier) reads them, its heat floor lowered to
    CUT_PEAK; labelled, the left-out ones dropped."""
    _check_candidates(which)
    reads = finder.read_candidates(image, look, CUT_PEAK)
    if reads is None:
        return ({s: np.zeros((0, PATCH_PX, PATCH_PX, 3), np.uint8) for s in spans},
                np.zeros((0, len(FEATURES)), np.float32), np.zeros(0, np.int8))
    names = finder.what.names
    none = reads.p_what[:, list(names).index("none")]
    faint = reads.from_heat & (none >= DOUBT_MAX_NONE) & (reads.heat < CUT_NONE_MIN_HEAT)
    asked = (np.ones(len(none), bool) if which == "all"
             else doubtful(reads.p_what, names, reads.from_heat))
    sel = np.flatnonzero(asked & ~faint)
    labels = label_points(reads.centers[sel], truth, look.topdown.calib)
    sel, labels = sel[labels >= 0], labels[labels >= 0]
    cut = {s: reads.patches[sel] if s == PATCH_MM else look.patches(image, reads.centers[sel], s)
           for s in spans}
    return cut, features(reads.p_what[sel], names, reads.heat[sel], reads.from_heat[sel]), labels


def _check_candidates(which: str) -> None:
    if which not in CANDIDATES:
        raise ValueError(f"candidates {which!r}: expected one of {', '.join(CANDIDATES)}")


def _key(span_mm: float) -> str:
    return f"patches{span_mm:g}"


def _prepare_chunk(args: tuple[str, int, int, int, str, tuple[float, ...], str | None]
                   ) -> dict[str, np.ndarray]:
    """The samples of scenes ``lo:hi`` (in name order) of one folder, scene ids from
    ``first``, candidates ``which``, patches of ``spans``, the candidates proposed with the
    heat map ``heat`` (None: the shipped one)."""
    from vision.pyramids.find import PyramidFinder
    from vision.pyramids.train_colors import calibrated_scenes

    name, first, lo, hi, which, spans, heat = args
    folder = Path(name)
    cv2.setNumThreads(1)
    mat = load_mat(folder / "mat.json")
    # the shipped heat map (or the one asked for) and colour classifier, as the finder
    # reads; not the verifier being trained
    finder = PyramidFinder(mat, heat_model=None if heat is None else Path(heat),
                           verify_model=False)
    parts: dict[str, list[np.ndarray]] = {"features": [], "labels": [], "scene": [],
                                          **{_key(s): [] for s in spans}}
    for n, image, truth, calib in calibrated_scenes(folder, mat, lo, hi):
        p, f, lab = scene_samples(image, truth, finder.look(image, calib), finder, which, spans)
        for s in spans:
            parts[_key(s)].append(p[s])
        parts["features"].append(f)
        parts["labels"].append(lab)
        parts["scene"].append(np.full(len(lab), first + n, np.int32))
    if not parts["labels"]:
        return {}
    return {k: np.concatenate(v) for k, v in parts.items()}


def prepare(folders: Sequence[Path], cache: Path, jobs: int = 2, which: str = "doubtful",
            spans: Sequence[float] = SPANS) -> dict[str, np.ndarray]:
    """The samples (candidates ``which``, patches of ``spans``) of every scene of
    ``folders`` (cached in ``cache``, an .npz, reused when it is there)."""
    if cache.is_file():
        log.info("reusing %s", cache)
        with np.load(cache) as z:
            return {k: z[k] for k in z.files}
    _check_candidates(which)
    bad = [s for s in spans if s not in SPANS]
    if bad or not spans:
        raise ValueError(f"patch spans {list(spans)}: expected some of {list(SPANS)}")
    for f in folders:
        if not (Path(f) / "mat.json").is_file():
            raise ValueError(f"{f} is not a rendered synth folder (no mat.json)")
    sizes = [len(list(Path(f).glob(SCENE_GLOB))) for f in folders]
    total = sum(sizes)
    tasks = [(str(f), 100_000 * k, lo, lo + CHUNK, which, tuple(spans), None)
             for k, (f, size) in enumerate(zip(folders, sizes)) for lo in range(0, size, CHUNK)]
    t0 = time.monotonic()
    got: list[dict[str, np.ndarray]] = []
    with Pool(max(1, jobs)) as pool:
        for k, part in enumerate(pool.imap_unordered(_prepare_chunk, tasks), 1):
            got.append(part)
            log.info("cut %d of %d scenes (%.1f min)", min(k * CHUNK, total), total,
                     (time.monotonic() - t0) / 60)
    got = [g for g in got if g]
    if not got:
        raise ValueError("no scene of the rendered folders could be calibrated")
    data = {k: np.concatenate([g[k] for g in got]) for k in got[0]}
    cache.parent.mkdir(parents=True, exist_ok=True)
    arrays: dict[str, Any] = data   # (numpy's stub reads **arrays as its allow_pickle flag)
    np.savez(cache, **arrays)
    log.info("%d samples (%d pyramids) from %d scenes -> %s", len(data["labels"]),
             int(data["labels"].sum()), len(np.unique(data["scene"])), cache)
    return data


# -- network ----------------------------------------------------------------------------------

def conv_bn_relu(i: int, o: int, s: int = 1) -> list[Any]:
    """A 3x3 convolution (stride ``s``, no bias), batch norm and ReLU: the patch networks'
    building block (this one's and the size reader's, :mod:`vision.pyramids.train_size`)."""
    from torch import nn

    return [nn.Conv2d(i, o, 3, s, 1, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True)]


def build_net() -> Any:
    """Patch branch (four stride-2 stages, 64 px -> 4 x 4, averaged) and feature branch,
    joined by two layers into one logit: ~125 k parameters, ~17 MFLOPs a patch."""
    import torch
    from torch import nn

    cbr = conv_bn_relu

    class VerifyNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.patch = nn.Sequential(*cbr(3, 16, 2), *cbr(16, 32, 2), *cbr(32, 32),
                                       *cbr(32, 64, 2), *cbr(64, 64), *cbr(64, 96, 2),
                                       nn.AdaptiveAvgPool2d(1), nn.Flatten())
            self.feats = nn.Sequential(nn.Linear(len(FEATURES), 32), nn.ReLU(inplace=True))
            self.head = nn.Sequential(nn.Linear(96 + 32, 64), nn.ReLU(inplace=True),
                                      nn.Linear(64, 1))

        def forward(self, patch: Any, feats: Any) -> Any:
            z = torch.cat([self.patch(patch), self.feats(feats)], dim=1)
            return self.head(z).squeeze(1)

    return VerifyNet()


def from_onnx(path: Path) -> Any:
    """The :func:`build_net` network of an exported verifier ``path``
    (``pyramids-verify.onnx`` as shipped), so a training can go on from a shipped file whose
    ``best.pt`` stayed where it was trained. As for the heat map
    (:func:`vision.pyramids.train_heat.from_onnx`), the export folded each batch norm into
    its convolution: here each batch norm holds that bias and otherwise passes its input
    through; call :func:`vision.pyramids.train_heat.recalibrate_bn` on training batches
    before training it."""
    net = build_net()
    return load_folded(path, net, net.patch, ("feats.", "head."),
                       "verifier of build_net's shape")


def load_folded(path: Path, net: Any, body: Any, prefixes: tuple[str, ...], what: str) -> Any:
    """``net`` with the weights of the exported file ``path``: the convolutions of its module
    ``body`` in order, each batch norm after one given the bias the export folded into it
    (:func:`vision.pyramids.train_heat.unfold_bias`), and its layers named from
    ``prefixes`` by name (the verifier's and the size readers' ``from_onnx``). A file of
    another shape is refused by name (ValueError: not an exported ``what``)."""
    import onnx
    import torch
    from onnx import numpy_helper

    from vision.pyramids.train_heat import unfold_bias

    model = onnx.load(str(path))
    weights = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    convs = [n for n in model.graph.node if n.op_type == "Conv"]
    mine = [m for m in body.modules() if isinstance(m, torch.nn.Conv2d)]
    named = {k: v for k, v in net.state_dict().items() if k.startswith(prefixes)}
    if len(mine) != len(convs) or any(
            len(c.input) < 3 or c.input[1] not in weights
            or tuple(m.weight.shape) != weights[c.input[1]].shape for m, c in zip(mine, convs)) \
            or any(k not in weights or tuple(v.shape) != weights[k].shape
                   for k, v in named.items()):
        raise ValueError(f"{path}: not an exported {what} ({len(mine)} convolutions, "
                         f"layers {sorted(named)})")
    bns = [m for m in body.modules() if isinstance(m, torch.nn.BatchNorm2d)]
    with torch.no_grad():
        for m, bn, c in zip(mine, bns, convs):
            m.weight.copy_(torch.from_numpy(weights[c.input[1]].copy()))
            unfold_bias(bn, torch.from_numpy(weights[c.input[2]].copy()))
        state = net.state_dict()
        for k in named:
            state[k].copy_(torch.from_numpy(weights[k].copy()))
    return net


def load_samples(paths: Sequence[Path], patch_mm: float) -> dict[str, np.ndarray]:
    """The samples of several cut files (``samples.npz`` of earlier runs) as one, with the
    patches spanning ``patch_mm`` only; each file's scene ids moved up by
    :data:`SCENE_ID_STRIDE` times its place, so each keeps its own validation scenes."""
    key = _key(patch_mm)
    parts: dict[str, list[np.ndarray]] = {"patches": [], "features": [], "labels": [],
                                          "scene": []}
    for k, path in enumerate(paths):
        with np.load(path) as z:
            if key not in z.files:
                raise ValueError(f"{path}: no {patch_mm:g} mm patches (has {sorted(z.files)})")
            if z["features"].shape[1:] != (len(FEATURES),):
                raise ValueError(f"{path}: features of shape {z['features'].shape}, expected "
                                 f"(N, {len(FEATURES)})")
            parts["patches"].append(z[key])
            parts["features"].append(z["features"])
            parts["labels"].append(z["labels"])
            parts["scene"].append(z["scene"].astype(np.int64) + SCENE_ID_STRIDE * k)
        log.info("%s: %d samples (%d pyramids)", path, len(parts["labels"][-1]),
                 int(parts["labels"][-1].sum()))
    out = {k: np.concatenate(v) for k, v in parts.items()}
    return {_key(patch_mm): out.pop("patches"), **out}


def mirror_shift_index(count: int, h: int, w: int, rng: np.random.Generator,
                       shift_px: int = SHIFT_PX) -> tuple[np.ndarray, np.ndarray]:
    """The source rows (count, h) and columns (count, w) of ``count`` patches of h x w,
    half of them mirrored left to right and each then shifted by up to ``shift_px`` each
    way, edges repeated: what :func:`mirror_and_shift` and the trainer's batches gather."""
    flip = rng.random(count) < 0.5
    rows = np.broadcast_to(np.arange(h), (count, h))
    cols = np.broadcast_to(np.arange(w), (count, w))
    if shift_px:
        dx, dy = rng.integers(0, 2 * shift_px + 1, (2, count))
        rows = np.clip(rows + dy[:, None] - shift_px, 0, h - 1)
        cols = np.clip(cols + dx[:, None] - shift_px, 0, w - 1)
    return rows, np.where(flip[:, None], w - 1 - cols, cols)


def mirror_and_shift(p: np.ndarray, rng: np.random.Generator, shift_px: int = SHIFT_PX
                     ) -> np.ndarray:
    """(N, h, w, 3) patches, half of them mirrored left to right (the patch frame is
    mirror-symmetric: up is away from the nadir) and each shifted by up to ``shift_px``
    each way, edges repeated (the candidate is rarely on the pyramid's middle)."""
    rows, cols = mirror_shift_index(len(p), p.shape[1], p.shape[2], rng, shift_px)
    out: np.ndarray = p[np.arange(len(p))[:, None, None], rows[:, :, None], cols[:, None, :]]
    return out


def light_jitter(x: Any, rng: np.random.Generator) -> Any:
    """Network input ``x`` (N, 3, h, w, 0-1 tensor) with a brightness gain of 0.85-1.15 and
    an offset of up to 0.05 each, for the light the renders did not draw."""
    import torch

    gain = torch.from_numpy(rng.uniform(0.85, 1.15, (len(x), 1, 1, 1))).float()
    bias = torch.from_numpy(rng.uniform(-0.05, 0.05, (len(x), 1, 1, 1))).float()
    return (x * gain.to(x.device) + bias.to(x.device)).clamp(0, 1)


class PatchBatches:
    """The samples as tensors on ``device`` (all of them on the GPU when there is one, so
    each batch is cut, mirrored, shifted and jittered there instead of on the CPU), drawn
    as :func:`mirror_and_shift` and :func:`light_jitter` draw them (the same
    :func:`mirror_shift_index`)."""

    def __init__(self, data: dict[str, np.ndarray], device: str = "cpu",
                 class_labels: bool = False, mirror_labels: np.ndarray | None = None
                 ) -> None:
        import torch

        self.torch = torch
        self.device = device
        self.patches = torch.from_numpy(data["patches"]).to(device)        # N, h, w, 3 BGR
        # the size reader's samples have no features and class indices for labels
        n = len(data["labels"])
        self.features = torch.from_numpy(data.get("features", np.zeros((n, 0), np.float32))
                                         ).float().to(device)
        self.labels = torch.from_numpy(data["labels"].astype(np.int64 if class_labels
                                                             else np.float32)).to(device)
        # class k of a patch mirrored left to right is class mirror_labels[k] (a lying apex's
        # sector); None: mirroring keeps the label
        self.mirror_labels = (None if mirror_labels is None else
                              torch.from_numpy(np.asarray(mirror_labels, np.int64)).to(device))

    def draw(self, idx: np.ndarray, rng: np.random.Generator | None
             ) -> tuple[Any, Any, Any]:
        """(patch RGB 0-1 (B, 3, h, w), features, labels) of samples ``idx``; augmented
        when ``rng`` is given: half mirrored left to right, each shifted by up to
        :data:`SHIFT_PX` each way with its edges repeated, light jittered."""
        torch = self.torch
        i = torch.from_numpy(np.asarray(idx, np.int64)).to(self.device)
        p = self.patches[i]
        y = self.labels[i]
        if rng is not None:
            rows, cols = mirror_shift_index(len(idx), p.shape[1], p.shape[2], rng)
            if self.mirror_labels is not None:
                # a mirrored patch's columns run right to left
                flip = torch.from_numpy(cols[:, 0] > cols[:, -1]).to(self.device)
                y = torch.where(flip, self.mirror_labels[y], y)
            r = torch.from_numpy(np.ascontiguousarray(rows)).to(self.device)
            c = torch.from_numpy(np.ascontiguousarray(cols)).to(self.device)
            p = p[torch.arange(len(idx), device=self.device)[:, None, None], r[:, :, None],
                  c[:, None, :]]
        x = p.flip(3).permute(0, 3, 1, 2).float() / 255.0
        if rng is not None:
            x = light_jitter(x, rng)
        return x, self.features[i], y


def evaluate(net: Any, batches: PatchBatches, idx: np.ndarray) -> dict[str, float]:
    """Validation loss, accuracy at 0.5, and the share of pyramids kept when 95% and 99% of
    the ``none`` are turned away."""
    import torch

    net.eval()
    logits, ys = [], []
    with torch.no_grad():
        for a in range(0, len(idx), 512):
            x, f, y = batches.draw(idx[a:a + 512], None)
            logits.append(net(x, f).cpu().numpy())
            ys.append(y.cpu().numpy())
    net.train()
    z, y = np.concatenate(logits), np.concatenate(ys)
    loss = float(np.mean(np.logaddexp(0, z) - y * z))
    out = {"loss": loss, "accuracy": float(((z > 0) == (y > 0.5)).mean())}
    neg, pos = z[y < 0.5], z[y > 0.5]
    for q in (95, 99):
        t = np.percentile(neg, q) if len(neg) else 0.0
        out[f"kept_at_{q}"] = float((pos > t).mean()) if len(pos) else 0.0
    return out


def train(data: dict[str, np.ndarray], out: Path, minutes: float, threads: int = 2,
          seed: int = 0, batch: int = 128, lr: float | None = None,
          patch_mm: float = PATCH_MM_TRAIN, device: str = "cpu", init: Path | None = None
          ) -> tuple[Path, dict[str, float]]:
    """Train for ``minutes`` of wall clock (cosine learning rate) on the patches spanning
    ``patch_mm`` (one of SPANS), validating after each epoch on every 10th scene; exports
    the weights of the best validation loss to ``out/pyramids-verify.onnx``. Returns the
    file and its validation figures. ``device``: ``cpu``, or ``cuda`` where there is a
    GPU (the samples are held there). ``init``: go on from an exported verifier
    (:func:`from_onnx`, its batch norms recalibrated on :data:`RECALIBRATE_BATCHES`
    training batches), validated first, so the result is never worse on this validation
    set than it. ``lr``: peak learning rate (default :data:`LR`, :data:`LR_INIT` going on
    from ``init``)."""
    if _key(patch_mm) not in data:
        raise ValueError(f"no {patch_mm:g} mm patches were cut (spans cut: {SPANS})")
    import torch

    data = {**data, "patches": data[_key(patch_mm)]}

    torch.manual_seed(seed)
    torch.set_num_threads(max(1, threads))
    rng = np.random.default_rng(seed)
    val_mask = data["scene"] % VAL_EVERY == 0
    tr, val = np.flatnonzero(~val_mask), np.flatnonzero(val_mask)
    if not len(tr) or not len(val):
        raise ValueError(f"{len(tr)} training and {len(val)} validation samples: render more "
                         "scenes")
    log.info("%d training samples (%d pyramids), %d validation (%d pyramids)", len(tr),
             int(data["labels"][tr].sum()), len(val), int(data["labels"][val].sum()))
    lr = lr or (LR if init is None else LR_INIT)
    batches = PatchBatches(data, device)
    net = (build_net() if init is None else from_onnx(init)).to(device)
    if init is not None:
        from vision.pyramids.train_heat import recalibrate_bn

        calib = np.random.default_rng(seed + 1)
        recalibrate_bn(net, [batches.draw(calib.choice(tr, min(len(tr), batch)), calib)[:2]
                             for _ in range(RECALIBRATE_BATCHES)])
        log.info("going on from %s, peak learning rate %g", init, lr)
    opt = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=1e-4)
    lossf = torch.nn.BCEWithLogitsLoss()

    def batch_loss(idx: np.ndarray) -> Any:
        x, f, y = batches.draw(idx, rng)
        return lossf(net(x, f), y)

    def weights() -> dict[str, Any]:
        return {k: v.detach().cpu().clone() for k, v in net.state_dict().items()}

    t0 = time.monotonic()
    # (loss, weights, figures, epoch: 0 where the file it went on from stood)
    best: tuple[float, Any, dict[str, float], int] = (math.inf, None, {}, 0)
    out.mkdir(parents=True, exist_ok=True)
    epoch = 0
    if init is not None:
        ev = evaluate(net, batches, val)
        log.info("%s on this validation set: loss %.4f, accuracy %.4f, pyramids kept at 95%% "
                 "/ 99%% of none turned away: %.3f / %.3f", init, ev["loss"], ev["accuracy"],
                 ev["kept_at_95"], ev["kept_at_99"])
        best = (ev["loss"], weights(), ev, 0)
    for epoch, train_loss in budget_epochs(opt, lr, minutes, tr, batch, rng, batch_loss):
        ev = evaluate(net, batches, val)
        log.info("epoch %d (%.1f min): train loss %.4f, val loss %.4f, accuracy %.4f, "
                 "pyramids kept at 95%% / 99%% of none turned away: %.3f / %.3f", epoch,
                 (time.monotonic() - t0) / 60, train_loss, ev["loss"], ev["accuracy"],
                 ev["kept_at_95"], ev["kept_at_99"])
        if ev["loss"] < best[0]:
            state = weights()
            torch.save({"state": state}, out / "best.pt")
            best = (ev["loss"], state, ev, epoch)
    net = net.cpu()
    net.load_state_dict(best[1])
    # best_epoch 0: no epoch beat the file it went on from, which is what is exported again
    figures = dict(best[2], epochs=epoch, best_epoch=best[3],
                   train_seconds=round(time.monotonic() - t0),
                   train_samples=len(tr), val_samples=len(val))
    return export(net, out / "pyramids-verify.onnx", patch_mm), figures


def export(net: Any, path: Path, patch_mm: float = PATCH_MM_TRAIN) -> Path:
    """``net`` as ONNX (inputs ``patch`` (N, 3, 64, 64) RGB 0-1 and ``features`` (N, F),
    output ``logit`` (N,)), the feature names in its metadata."""
    import onnx
    import torch

    net.eval()
    x = torch.zeros(2, 3, PATCH_PX, PATCH_PX)
    f = torch.zeros(2, len(FEATURES))
    torch.onnx.export(net, (x, f), str(path), input_names=["patch", "features"],
                      output_names=["logit"],
                      dynamic_axes={"patch": {0: "n"}, "features": {0: "n"}, "logit": {0: "n"}},
                      opset_version=17, dynamo=False)
    model = onnx.load(str(path))
    onnx.helper.set_model_props(model, {"features": ",".join(FEATURES),
                                        "patch_mm": repr(float(patch_mm))})
    onnx.save(model, str(path))
    log.info("wrote %s (%d bytes)", path, path.stat().st_size)
    return path


def main(argv: list[str] | None = None) -> int:
    ap = patch_trainer_parser("python -m vision.pyramids.train_verify", __doc__, MINUTES)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--patch-mm", type=float, default=PATCH_MM_TRAIN, choices=SPANS,
                    help=f"the patches' span in mm (default {PATCH_MM_TRAIN:g})")
    ap.add_argument("--device", default="cpu", help="cpu, or cuda where there is a GPU")
    ap.add_argument("--prepare-only", action="store_true", help="cut the samples and stop")
    ap.add_argument("--candidates", choices=CANDIDATES, default="all",
                    help="cut every candidate the finder may ask about (default) or the "
                         "doubtful ones alone")
    ap.add_argument("--spans", default=",".join(f"{s:g}" for s in SPANS),
                    help="patch spans to cut, mm (default %(default)s)")
    ap.add_argument("--samples", type=Path, action="append", default=[],
                    help="an earlier run's cut samples.npz to train on as well (repeatable)")
    ap.add_argument("--init", type=Path, default=None,
                    help="go on from an exported verifier (.onnx) instead of starting afresh")
    ap.add_argument("--lr", type=float, default=None,
                    help=f"peak learning rate (default {LR:g}, {LR_INIT:g} with --init)")
    args = ap.parse_args(argv)
    cache = args.out / SAMPLES_FILE
    if args.init is not None and not args.init.is_file():
        ap.error(f"--init {args.init}: no such file")
    seen: set[Path] = set()
    for extra in args.samples:
        if not extra.is_file():
            ap.error(f"--samples {extra}: no such file")
        # a cut read twice would weigh twice and sit in the validation set twice
        where = extra.resolve()
        if where == cache.resolve():
            ap.error(f"--samples {extra}: this run's own cut ({cache}), trained on already")
        if where in seen:
            ap.error(f"--samples {extra}: given twice")
        seen.add(where)
    try:
        spans = tuple(float(v) for v in args.spans.split(","))
    except ValueError:
        ap.error(f"--spans {args.spans!r}: expected mm values such as 72,48")
    # (the arguments first; cutting alone needs no torch)
    start_patch_training(ap, args.render, cache, () if args.prepare_only else TORCH_PACKAGES)
    try:
        if not cache.is_file():
            prepare(args.render, cache, args.jobs, args.candidates, spans)
        if args.prepare_only:
            return 0
        # read back with the trained span alone (the others stay on disk)
        data = load_samples([cache, *args.samples], args.patch_mm)
        path, figures = train(data, args.out, args.minutes, args.threads, args.seed,
                              args.batch, args.lr, patch_mm=args.patch_mm, device=args.device,
                              init=args.init)
        from vision.pyramids.quantize import verifier_int8

        copy, agree = verifier_int8(path, cache)    # the file the finder runs
    except ValueError as exc:
        ap.error(str(exc))
    print(copy, json.dumps({k: round(v, 4) for k, v in agree.items()}))
    print(path, json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
