"""Fit the pixel colour table (:mod:`vision.pyramids.colors`) on seeded renders.

    python -m vision.pyramids.train_colors [--scenes 160] [--seed 90001]

Renders Zarcana scenes (1920x1080, no hands) with ``vision.synth.generate.make_example``
under ``--seed`` (default :data:`colors.TRAIN_SEED`, which the benchmark never uses),
rectifies each exactly as the finder does, and counts Lab bins of the pixels inside each
pyramid's true silhouette (eroded 1 mm, so edge pixels blended with the table do not teach
the wrong colour) against everything well outside all silhouettes (the background).
"""

from __future__ import annotations

import argparse
import logging
import time
from typing import Any

import cv2
import numpy as np

from calibration.mat import DEFAULT_MAT, Mat
from calibration.table import Calibration, Intrinsics, TableCalibrator, rectify
from vision.pyramids.colors import (
    BACKGROUND,
    BINS,
    COLORS,
    LUT_PATH,
    TRAIN_SEED,
    ColorModel,
    bin_index,
)

log = logging.getLogger(__name__)

PX_PER_MM = 2.0
BG_STRIDE = 3  # background pixels are plentiful: count every 3rd row/column, weight 9


def truth_calibration(image: np.ndarray, truth: dict[str, Any], mat: Mat) -> Calibration:
    """Calibrate from the markers as the pipeline would, with the truth camera intrinsics."""
    cam = truth["camera"]
    intr = Intrinsics(np.array(cam["K"], np.float64), np.array(cam["dist"], np.float64))
    return TableCalibrator(mat, intr).calibrate(image)


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
    calib = truth_calibration(image, truth, mat)
    if not calib.calibrated:
        return False
    rect = rectify(image, calib, ppm, mat=mat)
    idx = bin_index(rect)
    h, w = idx.shape
    near = np.zeros((h, w), np.uint8)
    ncls = BACKGROUND + 1
    for p, sil in zip(truth["pyramids"], truth_silhouettes_mm(truth, calib)):
        poly = np.round((sil * ppm - 0.5) * 16).astype(np.int32)
        m = np.zeros((h, w), np.uint8)
        cv2.fillConvexPoly(m, poly, 1, cv2.LINE_8, 4)
        near = np.maximum(near, cv2.dilate(m, np.ones((13, 13), np.uint8)))
        if p.get("visible", 1.0) < 0.9:
            continue
        inner = cv2.erode(m, np.ones((5, 5), np.uint8)).astype(bool)
        c = COLORS.index(p["color"])
        counts += np.bincount(idx[inner] * ncls + c, minlength=BINS ** 3 * ncls)
    bg = (near[::BG_STRIDE, ::BG_STRIDE] == 0)
    counts += BG_STRIDE ** 2 * np.bincount(idx[::BG_STRIDE, ::BG_STRIDE][bg] * ncls + BACKGROUND,
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
        image, truth, _ = make_example(seed, i, deck, mat, "zarcana", hands=0.0,
                                       size=(1920, 1080))
        if not accumulate(counts, image, truth, mat):
            log.info("scene %d: not calibrated, skipped", i)
        if (i + 1) % 20 == 0:
            log.info("%d/%d scenes, %.0f s", i + 1, scenes, time.perf_counter() - t0)
    return ColorModel(counts.reshape(BINS ** 3, BACKGROUND + 1))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenes", type=int, default=160)
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
