"""Pixel colour model: a Lab look-up table of P(pyramid colour | pixel), learned from renders.

Every pixel of the rectified view is quantised to 32 levels per Lab channel; the table holds,
per bin, the share of training pixels that belonged to each pyramid colour or to the
background (table textures, card art, markers, shadows). It is a histogram Bayes classifier:
nothing is hand-tuned per colour, translucent plastic over varied backgrounds is covered by
what the renders showed, and looking a pixel up is one indexing operation.

Fitted by ``python -m vision.pyramids.train_colors`` on seeded renders that the benchmark
never uses (seed :data:`TRAIN_SEED`); stored in ``color_lut.npz`` next to this file.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

log = logging.getLogger(__name__)

COLORS: tuple[str, ...] = ("red", "orange", "yellow", "green", "blue", "purple", "cyan",
                           "black", "white", "clear")
BACKGROUND = len(COLORS)          # class index of "not a pyramid"
BINS = 32                          # per Lab channel
SHIFT = 3                          # 256 / 32
LUT_PATH = Path(__file__).with_name("color_lut.npz")
TRAIN_SEED = 90_001                # renders for fitting; the benchmark uses other seeds


@dataclass
class ColorModel:
    """Per-class Lab histograms (``counts``: (BINS**3, classes)) and how to turn them into
    per-bin decisions for one image.

    A global table alone cannot work: red plastic and a red cloth or red card art share Lab
    bins, and with the true prior the background wins those bins everywhere. So each image's
    own Lab histogram joins the background likelihood: pyramids cover well under 1% of the
    table, so a colour that is common in *this* image (the cloth, a card's sky) is
    background here, while the same colour as a few small blobs on a green felt is not.
    ``bg_weight`` scales the background likelihood against the colours' (a recall /
    precision knob; the shape fit rejects blobs that are not pyramid-shaped).
    """

    counts: np.ndarray
    bg_weight: float = 15.0
    image_share: float = 0.7   # part of the background likelihood taken from the image
    #: per-colour factor on the likelihood (None: all 1); white and clear plastic share
    #: their bins with card paper, so they are favoured here and sorted out by shape later
    class_gain: tuple[float, ...] | None = None

    @property
    def likelihood(self) -> np.ndarray:
        """(BINS**3, classes) float32: smoothed per-class histograms, each summing to 1."""
        if not hasattr(self, "_lik"):
            c = self.counts.reshape(BINS, BINS, BINS, -1).astype(np.float32)
            # smooth each class's histogram over neighbouring bins: renders never cover every
            # bin a real pixel can fall in, and noise moves a pixel a bin or two
            sm = _smooth(c)
            sm /= np.maximum(sm.sum(axis=(0, 1, 2), keepdims=True), 1e-9)
            self._lik = sm.reshape(BINS ** 3, -1)
        return self._lik

    def tables(self, idx: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(label per bin uint8, normalised class scores per bin float32) for an image whose
        Lab bin indices are ``idx`` (None: the global background only)."""
        sc = np.empty_like(self.likelihood)
        sc[:, :BACKGROUND] = self._color_scores()
        # the floor makes empty bins background
        sc[:, BACKGROUND] = self.bg_weight * self._background(idx) + 1e-7
        sc /= sc.sum(axis=1, keepdims=True)
        return np.argmax(sc, axis=1).astype(np.uint8), sc

    def _color_scores(self) -> np.ndarray:
        """(BINS**3, colours) float32: the colours' likelihoods times their ``class_gain``
        (the same for every image, so kept)."""
        if not hasattr(self, "_colors"):
            sc = self.likelihood[:, :BACKGROUND].copy()
            if self.class_gain is not None:
                sc *= np.asarray(self.class_gain, np.float32)
            self._colors = sc
        return self._colors

    def _background(self, idx: np.ndarray | None) -> np.ndarray:
        """Background likelihood per bin: the global one, joined by the image's own colours
        (``idx``: its Lab bin indices; None: the global one alone)."""
        bg: np.ndarray = self.likelihood[:, BACKGROUND]
        if idx is not None and self.image_share > 0:
            # every other row and column: the image's colours, a quarter of the counting
            h = np.bincount(idx[::2, ::2].ravel(), minlength=BINS ** 3).astype(np.float32)
            h = _smooth(h.reshape(BINS, BINS, BINS, 1)).reshape(-1)
            h /= max(float(h.sum()), 1.0)
            bg = (1 - self.image_share) * bg + self.image_share * h
        return bg

    def labels(self, idx: np.ndarray) -> np.ndarray:
        """The label per bin of :meth:`tables` (its first half) for an image whose Lab bin
        indices are ``idx``, without the per-bin scores: only the background column depends
        on the image, so the colours' best class and score per bin are kept between frames
        and each bin is background exactly where its background score beats them."""
        if not hasattr(self, "_best_color"):
            sc = self._color_scores()
            self._best_color = (np.argmax(sc, axis=1).astype(np.uint8), sc.max(axis=1))
        arg, best = self._best_color
        bg = self._background(idx)
        # argmax picks the first of equal scores, and background is the last class
        out: np.ndarray = np.where(self.bg_weight * bg + 1e-7 > best, np.uint8(BACKGROUND), arg)
        return out

    def save(self, path: Path = LUT_PATH) -> None:
        np.savez_compressed(path, counts=self.counts.astype(np.float32), colors=np.array(COLORS))

    @classmethod
    def load(cls, path: Path = LUT_PATH, **kw: Any) -> ColorModel:
        with np.load(path) as z:
            if tuple(str(c) for c in z["colors"]) != COLORS:
                raise ValueError(f"{path}: colour list differs from {COLORS}")
            return cls(z["counts"].astype(np.float64), **kw)


def bin_index(bgr: np.ndarray) -> np.ndarray:
    """Lab bin of every pixel of a BGR image, ``(L * BINS + a) * BINS + b`` (uint16)."""
    q = np.right_shift(cv2.cvtColor(bgr, cv2.COLOR_BGR2LAB), SHIFT)
    bits = BINS.bit_length() - 1                   # BINS is a power of two
    out: np.ndarray = q[..., 0].astype(np.uint16) << (2 * bits)
    out |= q[..., 1].astype(np.uint16) << bits
    out |= q[..., 2]
    return out


def _smooth(v: np.ndarray) -> np.ndarray:
    """[1, 2, 1] / 4 along each of the three Lab axes of (B, B, B, classes) histograms."""
    out = v.astype(np.float32)
    for ax in range(3):
        p = np.pad(out, [(1, 1) if a == ax else (0, 0) for a in range(out.ndim)], mode="edge")
        n = out.shape[ax]

        def cut(start: int) -> np.ndarray:
            # slices, not np.take with a range (a copy each): the same sums, a third faster
            # (the image's own histogram is smoothed every frame)
            return p[tuple(slice(start, start + n) if a == ax else slice(None)
                           for a in range(p.ndim))]

        out = (cut(0) + 2 * cut(1) + cut(2)) / 4.0
    return out


#: white and clear favoured threefold (see ColorModel.class_gain)
DEFAULT_CLASS_GAIN: tuple[float, ...] = (1.0,) * 8 + (3.0, 3.0)

_MODEL: ColorModel | None = None


def default_model() -> ColorModel:
    global _MODEL
    if _MODEL is None:
        if not LUT_PATH.exists():
            raise FileNotFoundError(f"{LUT_PATH} missing: run python -m vision.pyramids."
                                    "train_colors")
        _MODEL = ColorModel.load(class_gain=DEFAULT_CLASS_GAIN)
    return _MODEL
