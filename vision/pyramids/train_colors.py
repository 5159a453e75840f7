"""Fit the pixel colour table (:mod:`vision.pyramids.colors`) on seeded renders.

    python -m vision.pyramids.train_colors [--scenes 240] [--seed 90001]

Renders scenes (Zarcana and free layouts, 1920x1080, some hands) with
``vision.synth.generate.make_example`` under ``--seed`` (default
:data:`colors.TRAIN_SEED`, which the benchmarks never use), takes the top-down view exactly
as the finder does (:class:`vision.pyramids.topdown.TopDown` at
:data:`vision.pyramids.find.VIEW_PPM`, normalised by the marker paper), and counts Lab bins
of the pixels inside each pyramid's true silhouette (eroded 1 mm, so edge pixels blended
with the table do not teach the wrong colour) against everything well outside all
silhouettes (the background).
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from calibration.mat import DEFAULT_MAT, Mat
from calibration.table import Calibration, Intrinsics, TableCalibrator
from vision.pyramids.colors import (
    BACKGROUND,
    BINS,
    COLORS,
    LUT_PATH,
    TRAIN_SEED,
    ColorModel,
    bin_index,
)
from vision.train_extra import TORCH_PACKAGES, train_extra_problem

log = logging.getLogger(__name__)

PX_PER_MM = 1.0
BG_STRIDE = 3  # background pixels are plentiful: count every 3rd row/column, weight 9


def truth_calibration(image: np.ndarray, truth: dict[str, Any], mat: Mat) -> Calibration:
    """Calibrate from the markers as the pipeline would, with the truth camera intrinsics."""
    cam = truth["camera"]
    intr = Intrinsics(np.array(cam["K"], np.float64), np.array(cam["dist"], np.float64))
    return TableCalibrator(mat, intr).calibrate(image)


#: a rendered folder's scenes (``companion synth`` names them 00000.jpg, 00001.jpg, ...)
SCENE_GLOB = "[0-9]*.jpg"


def budget_cosine_lr(opt: Any, peak: float, t0: float, deadline: float) -> None:
    """Set every parameter group of the torch optimiser ``opt`` to the learning rate of a
    cosine from ``peak`` at ``t0`` to 0 at ``deadline`` (``time.monotonic`` seconds), for
    the pyramid trainers, which train for a wall-clock budget."""
    frac = min(1.0, (time.monotonic() - t0) / (deadline - t0))
    for g in opt.param_groups:
        g["lr"] = peak * 0.5 * (1 + math.cos(math.pi * frac))


def budget_epochs(opt: Any, lr: float, minutes: float, train_idx: np.ndarray, batch: int,
                  rng: np.random.Generator, batch_loss: Callable[[np.ndarray], Any]
                  ) -> Iterator[tuple[int, float]]:
    """The pyramid trainers' epochs on a wall-clock budget of ``minutes``: each a random order
    of ``train_idx`` (drawn from ``rng``) in batches of ``batch``, the learning rate on
    :func:`budget_cosine_lr` from ``lr``, ``batch_loss(indices)`` (a torch loss) stepped by
    ``opt``. Yields (epoch, mean training loss) after each epoch, where the caller validates;
    that time counts against the budget too. An epoch cut short by the deadline still
    yields."""
    t0 = time.monotonic()
    deadline = t0 + 60.0 * minutes
    epoch = 0
    while time.monotonic() < deadline:
        epoch += 1
        order = rng.permutation(train_idx)
        losses = []
        for s in range(max(1, len(order) // batch)):
            budget_cosine_lr(opt, lr, t0, deadline)
            loss = batch_loss(order[s * batch:(s + 1) * batch])
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
            if time.monotonic() >= deadline:
                break
        yield epoch, float(np.mean(losses))


def patch_trainer_parser(prog: str, doc: str | None, minutes: float | None
                         ) -> argparse.ArgumentParser:
    """The command line the patch trainers share (``train_verify``, ``train_size``,
    ``finetune``): ``--out`` (the working folder, where the cut samples are cached),
    ``--render`` (repeatable), ``--minutes`` (default ``minutes``; None: the trainer sets
    it after parsing, e.g. by task), ``--threads``, ``--jobs`` and ``--seed``; each trainer
    adds its own."""
    ap = argparse.ArgumentParser(prog=prog, description=(doc or "").split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True, help="working folder")
    ap.add_argument("--render", type=Path, action="append", default=[],
                    help="rendered synth folder (repeatable)")
    ap.add_argument("--minutes", type=float, default=minutes,
                    help="training wall clock" + ("" if minutes is None
                                                  else f" (default {minutes:g})"))
    ap.add_argument("--threads", type=int, default=2, help="torch threads")
    ap.add_argument("--jobs", type=int, default=2, help="processes cutting the samples")
    ap.add_argument("--seed", type=int, default=0)
    return ap


def start_patch_training(ap: argparse.ArgumentParser, renders: list[Path], cache: Path,
                         packages: tuple[str, ...] = TORCH_PACKAGES) -> None:
    """Logging with times for a training run from the command line; refuses (``ap.error``)
    a run without the ``packages`` of the train extra it needs (it cut its samples, then
    stopped on a traceback), or with neither its cut samples in ``cache`` nor ``--render``
    folders to cut them from. ``YOLO_OFFLINE``: nothing is ever downloaded."""
    if not cache.is_file() and not renders:
        ap.error(f"{cache} does not exist: give --render folders to cut it from")
    problem = train_extra_problem(packages)
    if problem is not None:
        ap.error(problem)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    os.environ.setdefault("YOLO_OFFLINE", "1")


def calibrated_scenes(folder: Path, mat: Mat, lo: int = 0, hi: int | None = None
                      ) -> Iterator[tuple[int, np.ndarray, dict[str, Any], Calibration]]:
    """(index in name order, image, truth, calibration) of the scenes ``lo:hi`` of the
    rendered ``folder`` that calibrate from their markers (:func:`truth_calibration`); an
    unreadable image or one without its truth is logged and skipped."""
    for n, img in enumerate(sorted(folder.glob(SCENE_GLOB))[lo:hi], lo):
        js = img.with_suffix(".json")
        image = cv2.imread(str(img), cv2.IMREAD_COLOR)
        if image is None or not js.is_file():
            log.warning("%s: unreadable or without its truth, skipped", img)
            continue
        truth = json.loads(js.read_text(encoding="utf-8"))
        calib = truth_calibration(image, truth, mat)
        if calib.calibrated:
            yield n, image, truth, calib


def truth_silhouettes_mm(truth: dict[str, Any], calib: Calibration) -> list[np.ndarray]:
    """Each pyramid's silhouette on the table plane (mm): the hull of its projected vertices
    taken back through the calibration, which is what the rectified view shows."""
    out = []
    for p in truth["pyramids"]:
        px = np.vstack([p["base_corners_px"], [p["apex_px"]]])
        out.append(cv2.convexHull(calib.to_table(px).astype(np.float32)).reshape(-1, 2))
    return out


def accumulate(counts: np.ndarray, image: np.ndarray, truth: dict[str, Any], mat: Mat,
               ppm: float = PX_PER_MM) -> bool:
    from vision.pyramids.topdown import TopDown, apply_gains

    calib = truth_calibration(image, truth, mat)
    if not calib.calibrated:
        return False
    td = TopDown(calib, mat)
    view = apply_gains(td.view(image, ppm), td.paper_gains(image))
    idx = bin_index(view)
    h, w = idx.shape
    near = np.zeros((h, w), np.uint8)
    ncls = BACKGROUND + 1
    r_near = int(round(6 * ppm)) * 2 + 1
    r_in = max(3, int(round(1.0 * ppm)) * 2 + 1)
    for p, sil in zip(truth["pyramids"], truth_silhouettes_mm(truth, calib)):
        poly = np.round((sil * ppm - 0.5) * 16).astype(np.int32)
        m = np.zeros((h, w), np.uint8)
        cv2.fillConvexPoly(m, poly, 1, cv2.LINE_8, 4)
        near = np.maximum(near, cv2.dilate(m, np.ones((r_near, r_near), np.uint8)))
        if p.get("visible", 1.0) < 0.9:
            continue
        inner = cv2.erode(m, np.ones((r_in, r_in), np.uint8)).astype(bool)
        c = COLORS.index(p["color"])
        counts += np.bincount(idx[inner] * ncls + c, minlength=BINS ** 3 * ncls)
    stride = BG_STRIDE if ppm >= 2 else 2
    bg = (near[::stride, ::stride] == 0)
    counts += stride ** 2 * np.bincount(idx[::stride, ::stride][bg] * ncls + BACKGROUND,
                                        minlength=BINS ** 3 * ncls)
    return True


def fit(scenes: int, seed: int, mat: Mat = DEFAULT_MAT) -> ColorModel:
    from vision.synth.deck import load_deck, shared_dir
    from vision.synth.generate import make_example

    sd = shared_dir()
    if sd is None:
        raise FileNotFoundError("shared/decks not found (set ARCANA_SHARED)")
    deck = load_deck(sd / "decks" / "rws-tarot")
    counts = np.zeros(BINS ** 3 * (BACKGROUND + 1), np.float64)
    t0 = time.perf_counter()
    for i in range(scenes):
        # mostly Zarcana lattices, some free layouts (pyramids at any angle on cards), a
        # few hands: the background the table must learn is everything a game shows
        game = "free" if i % 4 == 3 else "zarcana"
        image, truth, _ = make_example(seed, i, deck, mat, game, hands=0.15,
                                       size=(1920, 1080))
        if not accumulate(counts, image, truth, mat):
            log.info("scene %d: not calibrated, skipped", i)
        if (i + 1) % 20 == 0:
            log.info("%d/%d scenes, %.0f s", i + 1, scenes, time.perf_counter() - t0)
    return ColorModel(counts.reshape(BINS ** 3, BACKGROUND + 1))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenes", type=int, default=240)
    ap.add_argument("--seed", type=int, default=TRAIN_SEED)
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    model = fit(args.scenes, args.seed)
    model.save(LUT_PATH)
    per = model.counts.sum(axis=0)
    log.info("saved %s; pixels per class: %s", LUT_PATH,
             ", ".join(f"{n}={int(v)}" for n, v in zip((*COLORS, "background"), per)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
