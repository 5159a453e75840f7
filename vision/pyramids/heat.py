"""Where pyramids stand: a small fully convolutional network over the whole top-down view.

The colour table (:mod:`vision.pyramids.proposals`) finds pyramids by their plastic's
colour, which white and clear plastic do not have: on card paper and art most of them make
no candidate at all, and the patch classifier, seeing the paper around them, is rarely sure
of the ones that do. ``pyramids-heat.onnx`` looks at the shape instead: given the
normalised top-down view at :data:`HEAT_PPM` px/mm it gives, for every :data:`CELL_MM` mm
cell, how likely the middle of a pyramid's silhouette lies there. Its peaks are extra
candidates, and its value at a candidate is evidence the finder weighs with the patch
classifier's (:mod:`vision.pyramids.find`).

Runtime: numpy, OpenCV and onnxruntime only; the network is trained by
:mod:`vision.pyramids.train_heat`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from vision.tensors import nchw_rgb01

log = logging.getLogger(__name__)

#: the file the finder runs: the int8 copy of the trained float network
#: (``HEAT_MODEL_FLOAT``, :func:`vision.pyramids.train_heat.quantize`), 8 -> 5 ms a frame on
#: one thread of this machine's CPU with the same peaks (models/pyramids-heat.md)
HEAT_MODEL = "pyramids-heat.int8.onnx"
HEAT_MODEL_FLOAT = "pyramids-heat.onnx"
#: the network's input: the top-down view at this many px per mm (2 mm a pixel) unless the
#: model file says otherwise (its metadata ``view_ppm``: a finer map sees clear plastic's
#: thin refracted edges, which 2 mm a pixel averages away)
HEAT_PPM = 0.5
#: the output: one cell per CELL_MM of table, whatever the input's resolution
CELL_MM = 4.0


def stride_for(ppm: float) -> int:
    """Input pixels per output cell at ``ppm`` px/mm (2 at 0.5, 4 at 1.0)."""
    s = CELL_MM * ppm
    if abs(s - round(s)) > 1e-6 or round(s) < 1:
        raise ValueError(f"heat map input at {ppm} px/mm: {CELL_MM} mm cells need a whole "
                         f"number of pixels, got {s}")
    return int(round(s))


def pad_to(ppm: float) -> int:
    """Input sides are padded to a multiple of this at ``ppm`` (two cells)."""
    return 2 * stride_for(ppm)


#: input pixels per output cell at HEAT_PPM (2), and the multiple its sides are padded to (4)
STRIDE = stride_for(HEAT_PPM)
PAD_TO = pad_to(HEAT_PPM)


def heat_input(view: np.ndarray, view_ppm: float, ppm: float = HEAT_PPM) -> np.ndarray:
    """The network's input (1, 3, H, W) float32 0..1 (BGR as the view) from a top-down view
    at ``view_ppm`` px/mm, shrunk to ``ppm`` and padded bottom/right with grey."""
    scale = ppm / view_ppm
    small = view if abs(scale - 1.0) < 1e-9 else cv2.resize(
        view, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    h, w = small.shape[:2]
    mult = pad_to(ppm)
    ph, pw = -h % mult, -w % mult
    if ph or pw:
        small = cv2.copyMakeBorder(small, 0, ph, 0, pw, cv2.BORDER_CONSTANT,
                                   value=(128, 128, 128))
    return nchw_rgb01(small[None], swap_rb=False)


@dataclass
class HeatMap:
    """The network's answer for one view: ``p[v, u]`` for the cell whose middle is table
    point ((u + 0.5) * CELL_MM, (v + 0.5) * CELL_MM)."""

    p: np.ndarray

    def at(self, pts_mm: np.ndarray) -> np.ndarray:
        """The largest value within one cell of each point (N, 2) mm (0 outside)."""
        pts = np.asarray(pts_mm, np.float64).reshape(-1, 2)
        if not len(pts):
            return np.zeros(0, np.float32)
        grown = cv2.dilate(self.p, np.ones((3, 3), np.uint8))
        uv = np.floor(pts / CELL_MM).astype(np.int64)
        h, w = grown.shape
        ok = (uv[:, 0] >= 0) & (uv[:, 0] < w) & (uv[:, 1] >= 0) & (uv[:, 1] < h)
        out = np.zeros(len(pts), np.float32)
        out[ok] = grown[uv[ok, 1], uv[ok, 0]]
        return out

    def peaks(self, min_p: float) -> tuple[np.ndarray, np.ndarray]:
        """Local maxima (3x3) of at least ``min_p``: (centres mm (N, 2), values (N,)),
        each centre refined to the weighted mean of its 3x3 neighbourhood."""
        p = self.p
        mx = cv2.dilate(p, np.ones((3, 3), np.uint8))
        vs, us = np.nonzero((p >= mx) & (p >= min_p))
        if not len(vs):
            return np.zeros((0, 2)), np.zeros(0, np.float32)
        pad = np.pad(p, 1)
        # every peak's 3x3 window at once (a frame has a hundred or more peaks: a pass each
        # took most of a millisecond), each summed in the order one window alone is: the same
        # centres to the bit
        win = np.stack([pad[vs + dv, us + du] for dv in range(3) for du in range(3)],
                       axis=1).astype(np.float64)
        s = win.sum(axis=1)
        win = win.reshape(-1, 3, 3)
        cols, rows = win.sum(axis=1), win.sum(axis=2)
        du = (cols[:, 2] - cols[:, 0]) / s
        dv = (rows[:, 2] - rows[:, 0]) / s
        pts = np.stack([(us + 0.5 + du) * CELL_MM, (vs + 0.5 + dv) * CELL_MM], axis=1)
        return pts, p[vs, us]


class HeatNet:
    """``HeatNet(path)(view, view_ppm)`` -> :class:`HeatMap` (onnxruntime, ``threads``)."""

    def __init__(self, path: Path, threads: int = 1) -> None:
        from models import ModelError, open_onnx

        self.path = Path(path)
        self.session, meta, _ = open_onnx(self.path, threads)
        inputs = self.session.get_inputs()
        if len(inputs) != 1 or len(inputs[0].shape) != 4 or inputs[0].shape[1] != 3:
            raise ModelError(f"model file {self.path}: expected one (1, 3, H, W) input, got "
                             f"{[tuple(i.shape) for i in inputs]}")
        self._input = inputs[0].name
        try:
            self.ppm = float(meta.get("view_ppm", HEAT_PPM))
            self.stride = stride_for(self.ppm)
        except ValueError as exc:
            raise ModelError(f"model file {self.path}: metadata view_ppm "
                             f"{meta.get('view_ppm')!r}: {exc}") from None

    def __call__(self, view: np.ndarray, view_ppm: float, mirrored: bool = False) -> HeatMap:
        """``mirrored``: also read the view mirrored left to right and take the mean of the
        two answers (twice the time; the finder asks for it on blurred frames, where one
        reading alone lets more false finds through, ``models/pyramids-heat.md``)."""
        x = heat_input(view, view_ppm, self.ppm)
        logits = self.session.run(None, {self._input: x})[0][0, 0]
        if mirrored:
            # the padded width is a whole number of cells, so the mirror's cells line up
            back = self.session.run(None, {self._input: np.ascontiguousarray(x[..., ::-1])})
            logits = 0.5 * (logits + back[0][0, 0, :, ::-1])
        h = int(round(view.shape[0] * self.ppm / view_ppm)) // self.stride
        w = int(round(view.shape[1] * self.ppm / view_ppm)) // self.stride
        p = 1.0 / (1.0 + np.exp(-logits[:h, :w].astype(np.float32)))
        return HeatMap(np.ascontiguousarray(p, np.float32))
