"""The two small patch classifiers (ONNX, run with onnxruntime) and their patch convention.

Every candidate gets one patch: :data:`PATCH_PX` pixels square covering :data:`PATCH_MM` of
table, cut from the camera image through the table frame (so sizes are true millimetres and
pips read from size), turned so that the patch's "up" points away from the camera's nadir.
A pyramid's apex is seen pushed away from the nadir (parallax), so in every patch an upright
pyramid leans the same way, up: the classifier does not have to learn that lean for every
direction, and the pointing direction it reports is relative to the patch.

* ``pyramids-color.onnx`` ("what"): ``none`` or one of the ten spec colours, on every
  candidate. It decides what is a pyramid at all, so it sees the false candidates the
  colour table makes on card art, cloth and hands.
* ``pyramids-shape.onnx`` ("how"): pips and pose, on candidates the first one accepts:
  ``{pips}U`` (upright) or ``{pips}L{k:02d}`` (lying, apex toward patch direction k * 30
  degrees clockwise from up), colour-blind.

Both are ultralytics classification models (trained by :mod:`vision.pyramids.train`);
their input is RGB in [0, 1], NCHW, and their class names are in the ONNX metadata.
"""

from __future__ import annotations

import logging
import math
from pathlib import Path

import numpy as np

from vision.pyramids.colors import COLORS
from vision.tensors import nchw_rgb01

log = logging.getLogger(__name__)

PATCH_PX = 64
PATCH_MM = 72.0
#: patches per onnxruntime call
BATCH = 32
SECTORS = 12
SECTOR_DEG = 360.0 / SECTORS
COLOR_CLASSES: tuple[str, ...] = ("none", *COLORS)
SHAPE_CLASSES: tuple[str, ...] = tuple(
    [f"{p}U" for p in (1, 2, 3)] + [f"{p}L{k:02d}" for p in (1, 2, 3) for k in range(SECTORS)])
COLOR_MODEL = "pyramids-color.onnx"
SHAPE_MODEL = "pyramids-shape.onnx"
#: the size reader (``pyramids-size.onnx``, :mod:`vision.pyramids.train_size`): pips and
#: upright or lying from a closer patch (its ``patch_mm`` metadata)
SIZE_CLASSES: tuple[str, ...] = ("1U", "2U", "3U", "1L", "2L", "3L")
SIZE_MODEL = "pyramids-size.onnx"
#: the white-or-clear reader (``pyramids-white-clear.onnx``, same recipe and patch)
WHITE_CLEAR_CLASSES: tuple[str, ...] = ("white", "clear")
WHITE_CLEAR_MODEL = "pyramids-white-clear.onnx"
#: the pointing reader (``pyramids-point.onnx``, same recipe and patch): a lying pyramid's
#: apex in the shape classifier's sectors, ``L{k:02d}`` k sectors clockwise from up
POINT_CLASSES: tuple[str, ...] = tuple(f"L{k:02d}" for k in range(SECTORS))
POINT_MODEL = "pyramids-point.onnx"
#: the colour reader (``pyramids-color-read.onnx``, same recipe and patch): a found
#: pyramid's colour, the ten of :data:`vision.pyramids.colors.COLORS`
COLOR_READ_CLASSES: tuple[str, ...] = COLORS
COLOR_READ_MODEL = "pyramids-color-read.onnx"


def int8_name(name: str) -> str:
    """``NAME.int8.onnx``: the int8 copy of the float file ``NAME.onnx``
    (:mod:`vision.pyramids.quantize`, and the heat map's)."""
    return name.removesuffix(".onnx") + ".int8.onnx"


def shape_label(pips: int, upright: bool, rel_deg: float | None) -> str:
    """Class name of a pyramid whose apex points ``rel_deg`` clockwise from the patch's up."""
    if upright or rel_deg is None:
        return f"{pips}U"
    return f"{pips}L{sector(rel_deg):02d}"


def sector(rel_deg: float) -> int:
    """The sector (0 .. SECTORS - 1) of an apex ``rel_deg`` clockwise from the patch's up."""
    return int(round((rel_deg % 360.0) / SECTOR_DEG)) % SECTORS


def mirror_sector(k: int) -> int:
    """The sector of an apex in sector ``k`` once its patch is flipped left-right (its angle
    from up changes sign)."""
    return (SECTORS - k) % SECTORS


def mirror_shape_label(name: str) -> str:
    """The label of the same patch flipped left-right (a lying apex's angle changes sign)."""
    if name[1] == "U":
        return name
    return f"{name[0]}L{mirror_sector(int(name[2:])):02d}"


def patch_up_deg(centers_mm: np.ndarray, nadir_mm: np.ndarray) -> np.ndarray:
    """Table direction (degrees) away from the camera's nadir at each centre."""
    d = np.asarray(centers_mm, np.float64).reshape(-1, 2) - np.asarray(nadir_mm, np.float64)[:2]
    out: np.ndarray = np.degrees(np.arctan2(d[:, 1], d[:, 0])) % 360.0
    return out


def network_input(patches_bgr: np.ndarray) -> np.ndarray:
    """(N, 3, h, w) float32 RGB 0-1, what the patch networks take, from (N, h, w, 3) uint8 BGR
    patches."""
    return nchw_rgb01(patches_bgr)


class PatchClassifier:
    """One ONNX classifier; ``probs(patches)`` -> (N, classes) float32, class names in
    ``names``."""

    def __init__(self, path: Path, expected: tuple[str, ...], threads: int = 1) -> None:
        from models import ModelError, open_onnx

        self.path = Path(path)
        self.session, self.meta, listed = open_onnx(self.path, threads)
        names = tuple(listed)
        if set(names) != set(expected):
            raise ModelError(f"model file {self.path}: classes {names or '(none)'} are not "
                             f"the expected {expected}")
        self.names = names
        self.input = self.session.get_inputs()[0].name
        shape = self.session.get_inputs()[0].shape
        self.size = int(shape[2]) if isinstance(shape[2], int) else PATCH_PX

    def probs(self, patches_bgr: np.ndarray) -> np.ndarray:
        """Class probabilities for (N, h, w, 3) uint8 BGR patches."""
        if len(patches_bgr) == 0:
            return np.zeros((0, len(self.names)), np.float32)
        x = network_input(patches_bgr)
        # batches of BATCH: a batch's activations then stay in the CPU's cache (about 10%
        # faster per patch than one batch of a hundred)
        outs = [self.session.run(None, {self.input: np.ascontiguousarray(x[a:a + BATCH])})[0]
                for a in range(0, len(x), BATCH)]
        p: np.ndarray = np.concatenate([np.asarray(o, np.float32).reshape(len(o), -1)
                                        for o in outs])
        return p

    def column(self, name: str) -> int:
        return self.names.index(name)


def pointing_from_sectors(p_lying: np.ndarray) -> tuple[float, float]:
    """(relative degrees, concentration 0..1) from the probabilities of the lying sectors
    of one size: the circular mean of the best sector and its two neighbours."""
    k = int(np.argmax(p_lying))
    idx = [(k - 1) % SECTORS, k, (k + 1) % SECTORS]
    w = p_lying[idx]
    ang = np.radians(np.array(idx, np.float64) * SECTOR_DEG)
    c, s = float((w * np.cos(ang)).sum()), float((w * np.sin(ang)).sum())
    total = float(w.sum())
    if total <= 0:
        return k * SECTOR_DEG, 0.0
    return math.degrees(math.atan2(s, c)) % 360.0, math.hypot(c, s) / total
