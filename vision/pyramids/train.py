"""Train the pyramid patch classifiers (``models/pyramids-color.onnx``,
``models/pyramids-shape.onnx``) on rendered scenes.

    python -m vision.pyramids.train --out runs/pyramids [--render DIR ...] [--minutes 10]

Needs the ``train`` extra (ultralytics, torch); never imported at runtime and never run in
CI. Nothing is downloaded: the networks start from the YAML below (``pretrained=False``).

Data: every image of the rendered folders (``companion synth`` output; rendered here when
none are given, seeds :data:`TRAIN_SEEDS`) is looked at exactly as the finder does
(:class:`vision.pyramids.find.Looker`), and patches are cut (:data:`classifier.PATCH_PX`
square, :data:`classifier.PATCH_MM` of table, turned away from the nadir):

* at every candidate: a pyramid's when it lies within :data:`POS_MM` of the centroid of a
  pyramid's silhouette that is at least half visible; ``none`` when it is outside every
  silhouette (grown by 3 mm) and :data:`NEG_MM` from every centroid (a random
  :data:`NEG_KEEP` of those); otherwise left out (half on a pyramid: neither answer is
  right);
* at every peak of at least :data:`HEAT_CUT_PEAK` of the shipped heat map
  (``pyramids-heat.onnx``) away from those candidates, labelled the same way but every
  ``none`` kept: the finder reads the map's peaks too, and the card art and shadows that warm
  it are the hardest ``none`` there is;
* at each visible pyramid's silhouette centroid moved by up to 4 mm (so pyramids the colour
  table misses, white and clear most of all, are still learned);
* at a few random points of the mat away from pyramids;

and every patch once more mirrored left to right (the nadir-away frame is mirror-symmetric;
a lying apex's sector changes sign). Every 10th scene goes to validation.

Each model trains for ``minutes`` of wall clock on the CPU (``time=`` of ultralytics) with
one torch thread by default: the machine is shared.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import shutil
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from calibration.mat import load_mat
from vision.pyramids.classifier import (
    COLOR_CLASSES,
    COLOR_MODEL,
    PATCH_PX,
    SHAPE_CLASSES,
    SHAPE_MODEL,
    mirror_shape_label,
    patch_up_deg,
    shape_label,
)
from vision.pyramids.colors import ColorModel, default_model
from vision.pyramids.find import Look, Looker
from vision.pyramids.geometry import polygon_centroid
from vision.pyramids.train_colors import truth_calibration, truth_silhouettes_mm

log = logging.getLogger(__name__)

#: candidate within this of a silhouette centroid: that pyramid's patch
POS_MM = 6.0
#: candidate this far from every centroid (and outside every silhouette): ``none``
NEG_MM = 12.0
JITTER_MM = 4.0
RANDOM_NEGATIVES = 4
#: heat map peaks at least this warm are cut too (the finder proposes from 0.3, and faint
#: peaks are where white and clear plastic and their look-alikes are)
HEAT_CUT_PEAK = 0.1
#: share of the candidates' ``none`` patches kept: card art gives ~8 per pyramid, more
#: than a short CPU training can use
NEG_KEEP = 0.4
#: ``none`` patches kept at most (train, val): about 1.5 times the pyramids
MAX_NONE = (45_000, 4_000)
VAL_EVERY = 10
#: the two classifiers, by the names their patch folders and ``best.pt`` files carry
TASKS = ("color", "shape")
#: render seeds of the training scenes (Zarcana, free layouts); benchmarks use others
TRAIN_SEEDS = (91001, 91002)
#: first run's learning rate from the YAML, and going on from earlier weights (new scenes,
#: not a new task)
LR = 0.003
LR_INIT = 0.001

#: a small classification network: YOLO11 building blocks at an eighth of the "n" width,
#: four stride-2 stages to a 4x4 map and one more to 2x2 (64 px in): ~13 MFLOPs a patch,
#: well under a millisecond on one core, so every candidate of an image can be classified
MODEL_YAML = """\
# pyramid patch classifier (vision/pyramids/train.py)
nc: {nc}
backbone:
  - [-1, 1, Conv, [16, 3, 2]]
  - [-1, 1, Conv, [32, 3, 2]]
  - [-1, 1, C3k2, [32, False, 0.25]]
  - [-1, 1, Conv, [64, 3, 2]]
  - [-1, 1, C3k2, [64, False, 0.25]]
  - [-1, 1, Conv, [128, 3, 2]]
  - [-1, 1, C3k2, [128, True]]
  - [-1, 1, Conv, [128, 3, 2]]
head:
  - [-1, 1, Classify, [nc]]
"""


# -- data -------------------------------------------------------------------------------------

def scene_samples(image: np.ndarray, truth: dict[str, Any], look: Look,
                  rng: np.random.Generator, heat_peaks: np.ndarray | None = None
                  ) -> list[tuple[np.ndarray, str, str | None]]:
    """(patch, colour class, shape class or None) for one rendered scene; ``heat_peaks``
    (N, 2) mm: more candidates, every ``none`` among them kept."""
    calib = look.topdown.calib
    pyrs = truth.get("pyramids", [])
    sils = truth_silhouettes_mm(truth, calib)
    cents = np.array([polygon_centroid(s) for s in sils]) if sils else np.zeros((0, 2))
    grown = [cv2.convexHull(s.astype(np.float32)) for s in sils]
    good = [p.get("visible", 1.0) >= 0.5 and p.get("in_frame", True) for p in pyrs]
    centers: list[np.ndarray] = []
    labels: list[int | None] = []  # index of the truth pyramid, or None for "none"

    def inside_any(pt: np.ndarray, grow_mm: float) -> bool:
        return any(cv2.pointPolygonTest(h, (float(pt[0]), float(pt[1])), True) > -grow_mm
                   for h in grown)

    peaks = np.zeros((0, 2)) if heat_peaks is None else np.asarray(heat_peaks).reshape(-1, 2)
    cand_pts = [(np.array(c.center_mm, np.float64), NEG_KEEP) for c in look.candidates]
    for pt, keep in cand_pts + [(p, 1.0) for p in peaks]:
        d = np.linalg.norm(cents - pt, axis=1) if len(cents) else np.array([np.inf])
        k = int(np.argmin(d))
        if d[k] <= POS_MM and len(cents):
            if good[k]:
                centers.append(pt)
                labels.append(k)
        elif d.min() > NEG_MM and not inside_any(pt, 3.0) and rng.random() < keep:
            centers.append(pt)
            labels.append(None)
    for k, ok in enumerate(good):
        if ok:
            r, a = JITTER_MM * math.sqrt(rng.random()), rng.uniform(0, 2 * math.pi)
            centers.append(cents[k] + r * np.array([math.cos(a), math.sin(a)]))
            labels.append(k)
    W, H = look.topdown.mat.width_mm, look.topdown.mat.height_mm
    m = look.topdown.mat.marker_size_mm
    for _ in range(RANDOM_NEGATIVES):
        pt = np.array([rng.uniform(m, W - m), rng.uniform(m, H - m)])
        d = np.linalg.norm(cents - pt, axis=1).min() if len(cents) else np.inf
        if d > NEG_MM and not inside_any(pt, 3.0):
            centers.append(pt)
            labels.append(None)
    if not centers:
        return []
    arr = np.array(centers)
    patches = look.patches(image, arr)
    up = patch_up_deg(arr, look.camera[:2])
    out: list[tuple[np.ndarray, str, str | None]] = []
    for patch, lab, u in zip(patches, labels, up):
        if lab is None:
            out.append((patch, "none", None))
            continue
        p = pyrs[lab]
        rel = None if p["upright"] else float(p["pointing_deg"]) - float(u)
        out.append((patch, str(p["color"]), shape_label(int(p["pips"]), bool(p["upright"]), rel)))
    return out


def _scenes(folder: Path) -> Iterable[tuple[str, Path, Path]]:
    for img in sorted(folder.glob("*.jpg")):
        js = img.with_suffix(".json")
        if js.is_file():
            yield img.stem, img, js


def heat_peaks(heat: Any, look: Look) -> np.ndarray:
    """The peaks (N, 2) mm of at least :data:`HEAT_CUT_PEAK` of the heat map ``heat`` (a
    :class:`vision.pyramids.heat.HeatNet`) that the colour table did not propose, merged as
    the finder merges them."""
    from vision.pyramids.find import VIEW_PPM, peaks_beside

    return peaks_beside(heat(look.view, VIEW_PPM), look.candidates, HEAT_CUT_PEAK)


def build_patch_dataset(render_dirs: Sequence[Path], out_dir: Path,
                        model: ColorModel | None = None, seed: int = 0,
                        progress: Callable[[int], None] | None = None,
                        max_none: tuple[int, int] | None = MAX_NONE,
                        heat_model: Path | None | bool = True) -> dict[str, Counter[str]]:
    """Write ``out_dir/color/{train,val}/CLASS/*.png`` and ``out_dir/shape/...`` from
    rendered folders; returns the patch count per split and class. ``max_none``: at most
    this many ``none`` patches (train, val) are kept, a seeded random choice.
    ``heat_model``: the heat map whose peaks are cut too (True: the shipped one; False or
    None: the colour table's candidates alone)."""
    from vision.pyramids.heat import HEAT_MODEL, HeatNet

    heat = None
    if heat_model:
        from models import model_path

        heat = HeatNet(model_path(HEAT_MODEL) if heat_model is True else Path(heat_model))
    model = model or default_model()
    rng = np.random.default_rng(seed)
    counts: dict[str, Counter[str]] = {"color-train": Counter(), "color-val": Counter(),
                                       "shape-train": Counter(), "shape-val": Counter()}
    for task, classes in (("color", COLOR_CLASSES), ("shape", SHAPE_CLASSES)):
        for split in ("train", "val"):
            for c in classes:
                (out_dir / task / split / c).mkdir(parents=True, exist_ok=True)
    n = 0
    for folder in render_dirs:
        mat = load_mat(folder / "mat.json") if (folder / "mat.json").is_file() else None
        if mat is None:
            raise FileNotFoundError(f"{folder}: no mat.json (not a rendered synth folder)")
        looker = Looker(mat, model)
        for stem, img_path, js in _scenes(folder):
            n += 1
            split = "val" if n % VAL_EVERY == 0 else "train"
            image = cv2.imread(str(img_path), cv2.IMREAD_COLOR)
            truth = json.loads(js.read_text(encoding="utf-8"))
            if image is None:
                log.warning("%s: unreadable, skipped", img_path)
                continue
            calib = truth_calibration(image, truth, mat)
            if not calib.calibrated:
                continue
            look = looker.look(image, calib)
            tag = f"{folder.name}-{stem}"
            peaks = None if heat is None else heat_peaks(heat, look)
            for k, (patch, ccls, scls) in enumerate(scene_samples(image, truth, look, rng,
                                                                  peaks)):
                for flip in (False, True):
                    im = patch[:, ::-1] if flip else patch
                    name = f"{tag}-{k}{'m' if flip else ''}.png"
                    cv2.imwrite(str(out_dir / "color" / split / ccls / name), im)
                    counts[f"color-{split}"][ccls] += 1
                    if scls is not None:
                        s = mirror_shape_label(scls) if flip else scls
                        cv2.imwrite(str(out_dir / "shape" / split / s / name), im)
                        counts[f"shape-{split}"][s] += 1
            if progress is not None:
                progress(1)
    if max_none is not None:
        for split, kept in cap_none(out_dir, max_none, seed).items():
            counts[f"color-{split}"]["none"] = kept
    return counts


def parse_max_none(text: str) -> tuple[int, int]:
    """``"TRAIN,VAL"`` -> the two ``none`` caps; ValueError quoting ``text`` otherwise."""
    try:
        cap: tuple[int, ...] = tuple(int(x) for x in str(text).split(","))
    except ValueError:
        cap = ()
    if len(cap) != 2 or min(cap) < 0:
        raise ValueError(f"--max-none {text!r}: expected two counts, e.g. 45000,4000")
    return cap[0], cap[1]


def cap_none(out_dir: Path, max_none: tuple[int, int], seed: int = 0) -> dict[str, int]:
    """Keep at most ``max_none`` (train, val) ``none`` patches of ``out_dir/color``, a seeded
    random choice (patches cut by several :func:`build_patch_dataset` runs into one folder
    are capped once, at the end); returns how many each split keeps."""
    pick = np.random.default_rng([seed, 1])
    kept = {}
    for split, cap in zip(("train", "val"), max_none):
        files = sorted((out_dir / "color" / split / "none").iterdir())
        if len(files) > cap:
            for k in pick.permutation(len(files))[cap:]:
                files[int(k)].unlink()
        kept[split] = min(cap, len(files))
    return kept


def mine_hard_examples(render_dirs: Sequence[Path], data_dir: Path, color_model: Path,
                       stride: int = 2, model: ColorModel | None = None, seed: int = 1,
                       progress: Callable[[int], None] | None = None) -> Counter[str]:
    """Add the patches the colour classifier ``color_model`` gets wrong on every
    ``stride``-th training scene (all of their candidates, no ``none`` left out) to
    ``data_dir/color/train`` once more, mirrored too: mostly card art taken for plastic and
    white or clear plastic taken for card. Returns the count per (truth, answer)."""
    from vision.pyramids.classifier import PatchClassifier

    global NEG_KEEP, RANDOM_NEGATIVES
    clf = PatchClassifier(color_model, COLOR_CLASSES)
    model = model or default_model()
    rng = np.random.default_rng(seed)
    out: Counter[str] = Counter()
    saved = NEG_KEEP, RANDOM_NEGATIVES
    NEG_KEEP, RANDOM_NEGATIVES = 1.0, 0
    try:
        n = 0
        for folder in render_dirs:
            mat = load_mat(folder / "mat.json")
            looker = Looker(mat, model)
            for k, (stem, img_path, js) in enumerate(_scenes(folder)):
                n += 1  # counted as build_patch_dataset counts, so that
                if k % stride or n % VAL_EVERY == 0:  # validation scenes stay unseen
                    continue
                image = cv2.imread(str(img_path), cv2.IMREAD_COLOR)
                if image is None:
                    continue
                truth = json.loads(js.read_text(encoding="utf-8"))
                calib = truth_calibration(image, truth, mat)
                if not calib.calibrated:
                    continue
                samples = scene_samples(image, truth, looker.look(image, calib), rng)
                if samples:
                    probs = clf.probs(np.stack([s[0] for s in samples]))
                    for j, ((patch, ccls, _), pk) in enumerate(zip(samples, probs)):
                        said = clf.names[int(np.argmax(pk))]
                        if said == ccls:
                            continue
                        out[f"{ccls}->{said}"] += 1
                        d = data_dir / "color" / "train" / ccls
                        for flip in (False, True):
                            im = patch[:, ::-1] if flip else patch
                            name = f"hard-{folder.name}-{stem}-{j}{'m' if flip else ''}.png"
                            cv2.imwrite(str(d / name), im)
                if progress is not None:
                    progress(1)
    finally:
        NEG_KEEP, RANDOM_NEGATIVES = saved
    return out


def render_training_scenes(out_dir: Path, counts: tuple[int, int] = (900, 300),
                           seeds: tuple[int, int] = TRAIN_SEEDS, jobs: int = 1) -> list[Path]:
    """Render the training scenes (Zarcana and free layouts, 15% with hands)."""
    from vision.synth.generate import SynthConfig, synthesize

    dirs = []
    for game, count, seed in zip(("zarcana", "free"), counts, seeds):
        d = out_dir / f"render-{game}-{seed}"
        if not (d / "mat.json").is_file() or len(list(d.glob("*.jpg"))) < count:
            synthesize(SynthConfig(out=d, count=count, seed=seed, game=game, hands=0.15,
                                   jobs=jobs))
        dirs.append(d)
    return dirs


# -- training ---------------------------------------------------------------------------------

def _train_one(data: Path, work: Path, nc: int, minutes: float, epochs: int, batch: int,
               device: str, seed: int, init: Path | None = None, name: str | None = None,
               lr0: float = LR, workers: int = 0, export: bool = True
               ) -> tuple[Path, dict[str, float]]:
    """Train one classifier on ``data`` (an ultralytics classification folder) from the
    YAML, or on from the weights ``init`` (a ``best.pt`` of an earlier run)."""
    from ultralytics import YOLO

    work.mkdir(parents=True, exist_ok=True)
    name = name or data.name
    if init is None:
        yaml_path = work / f"{data.name}-cls.yaml"
        yaml_path.write_text(MODEL_YAML.format(nc=nc), encoding="utf-8")
        model = YOLO(str(yaml_path), task="classify")
    else:
        model = YOLO(str(init))
    t0 = time.perf_counter()
    model.train(data=str(data), epochs=epochs, time=minutes / 60.0 if minutes else None,
                imgsz=PATCH_PX, batch=batch, workers=workers, device=device,
                # False re-initialises every layer: right from the YAML, wrong when going on
                # from our own weights (nothing is downloaded either way)
                pretrained=init is not None,
                plots=False, amp=False, optimizer="AdamW", lr0=lr0, cos_lr=True,
                warmup_epochs=0.5, hsv_h=0.0, hsv_s=0.0, hsv_v=0.15, fliplr=0.0, flipud=0.0,
                scale=0.0, erasing=0.0, auto_augment=None, dropout=0.0, patience=1000,
                project=str(work), name=name, exist_ok=True, seed=seed,
                deterministic=True, verbose=False, cache="ram")
    secs = time.perf_counter() - t0
    best = work / name / "weights" / "best.pt"
    trained = YOLO(str(best))
    metrics = trained.val(data=str(data), imgsz=PATCH_PX, batch=batch, device=device,
                          plots=False, verbose=False, workers=workers)
    figures = {"top1": float(metrics.top1), "top5": float(metrics.top5),
               "train_seconds": round(secs)}
    if not export:   # e.g. on a lent GPU machine: export best.pt where the runtime lives
        return best, figures
    onnx = Path(trained.export(format="onnx", imgsz=PATCH_PX, dynamic=True, simplify=False))
    return onnx, figures


def _cut_one(args: tuple[Path, Path, int, bool]) -> dict[str, Counter[str]]:
    folder, data, seed, heat_peaks = args
    return build_patch_dataset([folder], data, seed=seed, max_none=None,
                               heat_model=heat_peaks)


def cut_patches(render_dirs: Sequence[Path], data: Path, seed: int = 0, jobs: int = 1,
                max_none: tuple[int, int] = MAX_NONE,
                progress: Callable[[int], None] | None = None,
                heat_peaks: bool = True) -> dict[str, Counter[str]]:
    """:func:`build_patch_dataset` over ``render_dirs``, one process per folder with
    ``jobs`` > 1 (each folder its own seed ``seed + k`` and its own every-10th validation
    scenes), ``none`` capped once at the end. ``heat_peaks``: cut at the shipped heat map's
    peaks too (False: the colour table's candidates alone, as before 2026-11-24)."""
    if jobs <= 1:
        return build_patch_dataset(render_dirs, data, seed=seed, progress=progress,
                                   max_none=max_none, heat_model=heat_peaks)
    from concurrent.futures import ProcessPoolExecutor

    counts: dict[str, Counter[str]] = {}
    work = [(Path(d), data, seed + k, heat_peaks) for k, d in enumerate(render_dirs)]
    with ProcessPoolExecutor(jobs) as pool:
        for d, c in zip(render_dirs, pool.map(_cut_one, work)):
            log.info("patches cut from %s: %s", d, {k: sum(v.values()) for k, v in c.items()})
            for k, v in c.items():
                counts.setdefault(k, Counter()).update(v)
    for split, kept in cap_none(data, max_none, seed).items():
        counts[f"color-{split}"]["none"] = kept
    return counts


def train_pyramid_classifier(out_dir: Path, *, render_dirs: Sequence[Path] | None = None,
                             minutes: float = 10.0, more_minutes: float = 0.0,
                             mine_minutes: float = 0.0, epochs: int = 100, batch: int = 128,
                             device: str = "cpu", threads: int = 1, seed: int = 0,
                             reuse_patches: bool = False, jobs: int = 1, workers: int = 0,
                             max_none: tuple[int, int] = MAX_NONE,
                             init: Mapping[str, Path] | None = None, lr0: float | None = None,
                             tasks: Sequence[str] = TASKS,
                             progress: Callable[[int], None] | None = None,
                             heat_peaks: bool = True) -> dict[str, Any]:
    """Train both classifiers (or those in ``tasks``) and export them as
    ``out_dir/pyramids-color.onnx`` and ``out_dir/pyramids-shape.onnx``; returns the figures
    (validation top-1 accuracy per stage, patch counts, seconds), also written to
    ``out_dir/figures.json``.

    Stages: render the training scenes (unless ``render_dirs``), cut the patches (unless
    ``reuse_patches`` and they are there), train each model ``minutes`` from its YAML, then
    ``more_minutes`` on from those weights (a second, lower learning-rate run: one long run
    with ``time=`` would do the same on a machine that is not shared), then, with
    ``mine_minutes``, add the colour model's mistakes on the training scenes
    (:func:`mine_hard_examples`) and train it on for that long. Wall-clock budgets: the
    epochs reached depend on the machine. ``jobs``: processes cutting patches (one per render
    folder); ``workers``: ultralytics data-loader workers (0 on a shared CPU, a few on a GPU
    machine); ``max_none``: ``none`` patches kept (train, validation); ``init``: go on from
    earlier weights (``{"color": best.pt, "shape": best.pt}``, either or both) instead of the
    YAML; ``lr0``: the first run's learning rate (default :data:`LR`, :data:`LR_INIT` going
    on from ``init``);
    ``tasks``: which of the two to train (``"color"``, ``"shape"``; the patches of both are
    cut either way, so a later run can train the other on them); ``heat_peaks``: cut at the
    heat map's peaks too (:func:`cut_patches`)."""
    if not lr0:
        lr0 = LR if not init else LR_INIT
    unknown = sorted(set(tasks) - set(TASKS))
    if unknown or not tasks:
        raise ValueError(f"tasks {list(tasks)}: expected one or both of {', '.join(TASKS)}")
    import torch

    torch.set_num_threads(max(1, int(threads)))
    os.environ.setdefault("YOLO_OFFLINE", "1")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    dirs = list(render_dirs) if render_dirs else render_training_scenes(out_dir)
    data = out_dir / "patches"
    figures: dict[str, Any] = {"renders": [str(d) for d in dirs]}
    if not (reuse_patches and (data / "color" / "train").is_dir()):
        if data.exists():
            shutil.rmtree(data)
        counts = cut_patches(dirs, data, seed=seed, jobs=jobs, max_none=max_none,
                             progress=progress, heat_peaks=heat_peaks)
        figures["patches"] = {k: dict(v) for k, v in counts.items()}
    runs = out_dir / "runs"
    for task, classes, name in (("color", COLOR_CLASSES, COLOR_MODEL),
                                ("shape", SHAPE_CLASSES, SHAPE_MODEL)):
        if task not in tasks:
            continue
        nc = len(classes)
        start = (init or {}).get(task)
        onnx, fig = _train_one(data / task, runs, nc, minutes, epochs, batch, device, seed,
                               init=start, workers=workers, lr0=lr0)
        figures[f"{task}-1"] = fig
        if more_minutes > 0:
            onnx, fig = _train_one(data / task, runs, nc, more_minutes, epochs, batch, device,
                                   seed + 1, init=runs / task / "weights" / "best.pt",
                                   name=f"{task}-2", lr0=0.002, workers=workers)
            figures[f"{task}-2"] = fig
        if task == "color" and mine_minutes > 0:
            figures["hard"] = dict(mine_hard_examples(dirs, data, onnx, progress=progress))
            last = runs / ("color-2" if more_minutes > 0 else "color") / "weights" / "best.pt"
            onnx, fig = _train_one(data / task, runs, nc, mine_minutes, epochs, batch, device,
                                   seed + 2, init=last, name="color-3", lr0=0.001,
                                   workers=workers)
            figures["color-3"] = fig
        shutil.copyfile(onnx, out_dir / name)
    (out_dir / "figures.json").write_text(json.dumps(figures, indent=1), encoding="utf-8")
    return figures


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--render", type=Path, action="append", default=None,
                    help="rendered synth folder to train on (repeatable; default: render)")
    ap.add_argument("--minutes", type=float, default=10.0,
                    help="first training run per model, from the YAML (default 10)")
    ap.add_argument("--more-minutes", type=float, default=0.0,
                    help="second run per model on from the first's weights (default 0)")
    ap.add_argument("--mine-minutes", type=float, default=0.0,
                    help="colour model: add its mistakes on the training scenes and train on "
                         "this long (default 0: no mining)")
    ap.add_argument("--reuse-patches", action="store_true",
                    help="keep OUT/patches when it is there")
    ap.add_argument("--epochs", type=int, default=100)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--device", default="cpu", help="cpu, or a CUDA device such as 0")
    ap.add_argument("--jobs", type=int, default=1,
                    help="processes cutting patches, one per render folder (default 1)")
    ap.add_argument("--workers", type=int, default=0,
                    help="data-loader workers while training (default 0)")
    ap.add_argument("--max-none", default=f"{MAX_NONE[0]},{MAX_NONE[1]}",
                    help="'none' patches kept, TRAIN,VAL (default %(default)s)")
    ap.add_argument("--init-color", type=Path, default=None, metavar="BEST_PT",
                    help="colour model: go on from these weights instead of the YAML")
    ap.add_argument("--init-shape", type=Path, default=None, metavar="BEST_PT",
                    help="shape model: go on from these weights instead of the YAML")
    ap.add_argument("--lr0", type=float, default=None,
                    help=f"first run's learning rate (default {LR}, {LR_INIT} with --init-*)")
    ap.add_argument("--only", choices=TASKS, default=None,
                    help="train this classifier alone (default: both)")
    ap.add_argument("--no-heat-peaks", action="store_true",
                    help="cut patches at the colour table's candidates only, not at the "
                         "heat map's peaks too (how the shipped classifiers were cut)")
    args = ap.parse_args(argv)
    try:
        cap = parse_max_none(args.max_none)
    except ValueError as exc:
        ap.error(str(exc))
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    figures = train_pyramid_classifier(
        args.out, render_dirs=args.render, minutes=args.minutes,
        more_minutes=args.more_minutes, mine_minutes=args.mine_minutes, epochs=args.epochs,
        batch=args.batch, device=args.device, threads=args.threads,
        reuse_patches=args.reuse_patches, jobs=args.jobs, workers=args.workers,
        max_none=cap, lr0=args.lr0, tasks=(args.only,) if args.only else TASKS,
        heat_peaks=not args.no_heat_peaks,
        init={k: v for k, v in (("color", args.init_color), ("shape", args.init_shape)) if v})
    print(json.dumps({k: v for k, v in figures.items() if k not in ("patches", "renders")}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
