"""A second opinion on the finder's doubtful candidates: ``pyramids-verify.onnx``.

The colour classifier (``pyramids-color.onnx``) was trained on the colour table's
candidates, where ``none`` is coloured card art. The candidates that decide whether a table
is read exactly right are others: the heat map's faint peaks (white and clear plastic, and
the paper and art that look like it) and light or black reads, where the colour classifier
is least sure. This network is trained on exactly those candidates and sees what the finder
knows there besides the patch: the colour classifier's eleven probabilities, the heat at
the candidate and whether the heat map alone proposed it. Its answer is p(pyramid); the
finder takes a doubtful candidate on it (:mod:`vision.pyramids.find`).

Which candidates are doubtful is said once, here (:func:`doubtful`), for the finder and for
the training cutter (:mod:`vision.pyramids.train_verify`) alike.

Runtime: numpy and onnxruntime only.
"""

from __future__ import annotations

import logging
import math
from pathlib import Path

import numpy as np

from vision.pyramids.classifier import BATCH, COLOR_CLASSES, PATCH_MM, network_input

log = logging.getLogger(__name__)

VERIFY_MODEL = "pyramids-verify.onnx"
#: the features beside the patch, in this order: the colour classifier's probabilities
#: (COLOR_CLASSES order), the heat at the candidate, 1 where the heat map alone proposed it
FEATURES: tuple[str, ...] = (*(f"p_{c}" for c in COLOR_CLASSES), "heat", "from_heat")
LIGHT = ("white", "clear")
#: a candidate is doubtful when the heat map alone proposed it, or when the colour
#: classifier's best colour is white, clear or black (no colour of their own: the colour
#: table cannot back them up) and it gives ``none`` less than this (above it, nothing the
#: finder does would take it). The heat map's own candidates are asked whatever the colour
#: classifier says: on dev renders a clear or white pyramid missed by everything else often
#: lay under one it called ``none`` (p 0.98-1.00), at 0.4-1 such candidates an image
DOUBT_MAX_NONE = 0.9
#: each patch is also read mirrored left to right (the network was trained with mirrors;
#: "up", away from the camera's nadir, stays up) and the two logits averaged. Dev renders
#: (seeds 550000 / 560000, 100 images a group; ordinary / crowded under lamps / unseen
#: printing): pyramids found 0 / +3 / -2 and 0 / +8 / +1, false finds -1 / -3 / -4 and
#: 0 / +1 / -2, tables right 53 / 3 / 40 -> 52 / 3 / 42 and 58 / 5 / 60 -> 59 / 4 / 61
MIRRORED = True
#: ... only where the first read's logit lies between these (p 0.01 to 0.995): outside them
#: a mirror read would seldom move the mean across a threshold the finder uses (0.1 to 0.95);
#: most true hues read 1.0. Saves most of the second reads (on dev renders the verifier then
#: took 7 ms a frame instead of 10 on 17 dev frames, the same finds on seeds 550000, 560000)
MIRROR_BAND = (-4.6, 5.3)


def _in_spec_order(p_what: np.ndarray, names: tuple[str, ...] | list[str]) -> np.ndarray:
    """The colour classifier's probabilities (N, classes), columns in the order of ``names``,
    as (N, 11) float32 in COLOR_CLASSES order; ValueError naming the shapes otherwise."""
    p = np.asarray(p_what, np.float32)
    if p.ndim != 2 or p.shape[1] != len(names) or set(names) != set(COLOR_CLASSES):
        raise ValueError(f"colour probabilities: expected columns {COLOR_CLASSES}, got "
                         f"{tuple(names)} for an array of shape {p.shape}")
    out: np.ndarray = p[:, [list(names).index(c) for c in COLOR_CLASSES]]
    return out


def features(p_what: np.ndarray, names: tuple[str, ...] | list[str], heat: np.ndarray,
             from_heat: np.ndarray) -> np.ndarray:
    """(N, len(FEATURES)) float32 from the colour classifier's probabilities ``p_what``
    (columns in the order of ``names``), the heat at each candidate and whether the heat map
    alone proposed it."""
    p = _in_spec_order(p_what, names)
    h = np.asarray(heat, np.float32).reshape(-1, 1)
    src = np.asarray(from_heat, np.float32).reshape(-1, 1)
    if len(h) != len(p) or len(src) != len(p):
        raise ValueError(f"features: {len(p)} probability rows, {len(h)} heats, {len(src)} "
                         "sources; expected one of each per candidate")
    return np.concatenate([p, h, src], axis=1)


def doubtful(p_what: np.ndarray, names: tuple[str, ...] | list[str],
             from_heat: np.ndarray) -> np.ndarray:
    """Boolean (N,): the candidates :class:`Verifier` is asked about (see
    :data:`DOUBT_MAX_NONE`)."""
    p = _in_spec_order(p_what, names)
    # COLOR_CLASSES: none first, then the ten colours
    best = np.asarray(COLOR_CLASSES[1:])[np.argmax(p[:, 1:], axis=1)]
    light_or_black = np.isin(best, [*LIGHT, "black"])
    out: np.ndarray = (light_or_black & (p[:, 0] < DOUBT_MAX_NONE)) | np.asarray(from_heat, bool)
    return out


class Verifier:
    """``Verifier(path).p_pyramid(patches, feats)`` -> (N,) p(pyramid) for (N, 64, 64, 3)
    uint8 BGR patches spanning ``patch_mm`` of table (cut as the finder cuts them,
    :meth:`vision.pyramids.find.Look.patches`) and their :func:`features`."""

    def __init__(self, path: Path, threads: int = 1) -> None:
        from models import ModelError, open_onnx

        self.path = Path(path)
        self.session, meta, _ = open_onnx(self.path, threads)
        inputs = {i.name: i for i in self.session.get_inputs()}
        if set(inputs) != {"patch", "features"}:
            raise ModelError(f"model file {self.path}: inputs {sorted(inputs)} are not the "
                             "expected ['features', 'patch'] (not a verifier)")
        listed = tuple(meta.get("features", "").split(","))
        if listed != FEATURES:
            raise ModelError(f"model file {self.path}: its features {listed} are not the "
                             f"finder's {FEATURES}")
        # its patch's table span (mm): a closer patch than the colour classifier's shows
        # clear plastic's edges at a finer scale; a file that does not say takes that one
        try:
            self.patch_mm = float(meta.get("patch_mm", PATCH_MM))
        except ValueError:
            self.patch_mm = math.nan
        if not 10.0 <= self.patch_mm <= 200.0:
            raise ModelError(f"model file {self.path}: patch_mm {meta.get('patch_mm')!r} is "
                             "not a span in mm (10-200)")

    def p_pyramid(self, patches_bgr: np.ndarray, feats: np.ndarray) -> np.ndarray:
        n = len(patches_bgr)
        if n == 0:
            return np.zeros(0, np.float32)
        if feats.shape != (n, len(FEATURES)):
            raise ValueError(f"verifier features: expected shape {(n, len(FEATURES))}, got "
                             f"{feats.shape}")
        x = network_input(patches_bgr)
        f = np.asarray(feats, np.float32)
        logit = self._logits(x, f)
        if MIRRORED:
            # the mirror image (left to right) of the patches whose answer is not clear
            again = np.flatnonzero((logit > MIRROR_BAND[0]) & (logit < MIRROR_BAND[1]))
            if len(again):
                logit[again] = (logit[again] + self._logits(x[again, :, :, ::-1],
                                                            f[again])) / 2.0
        p: np.ndarray = 1.0 / (1.0 + np.exp(-logit))
        return p

    def _logits(self, x: np.ndarray, f: np.ndarray) -> np.ndarray:
        outs = [self.session.run(None, {"patch": np.ascontiguousarray(x[a:a + BATCH]),
                                        "features": np.ascontiguousarray(f[a:a + BATCH])})[0]
                for a in range(0, len(x), BATCH)]
        out: np.ndarray = np.concatenate([np.asarray(o, np.float32).reshape(-1) for o in outs])
        return out
