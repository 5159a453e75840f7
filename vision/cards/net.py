"""The card identity network of one deck (``models/cards-tarot-net.onnx``), run with
onnxruntime on the same upright patches the gallery reads (:data:`identify.CROP_SIZE`).

Trained by :mod:`vision.cards.train_net`. Its classes are every card in both orientations
(``{id}`` and ``{id}@180``: the art's top at the bottom of the patch), ``back`` and
``__none__`` (bare table); their names are in the ONNX metadata. :meth:`CardNet.identify_batch`
answers with the gallery's :class:`~vision.cards.identify.CardMatch`, so either can name a
card; the pipeline uses the network for the deck it was trained on and the gallery for the
rest (:mod:`vision.pipeline`).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Sequence

import numpy as np

from vision.cards.identify import BACK_ID, CROP_SIZE, NONE_ID, CardMatch
from vision.tensors import nchw_rgb01

ROTATED_SUFFIX = "@180"
#: Crops per onnxruntime call.
BATCH = 32
#: Below this probability of its card (both orientations together) a crop is not named
#: (``card_id`` None, ``best_id`` still the best guess).
MIN_PROB = 0.5


class CardNet:
    """One deck's identity network. ``threads``: onnxruntime intra-op threads."""

    def __init__(self, path: str | Path, threads: int = 1) -> None:
        from models import ModelError, open_onnx

        self.path = Path(path)
        self.session, meta, names = open_onnx(self.path, threads)
        if meta.get("task") != "card-identity" or NONE_ID not in names or BACK_ID not in names:
            raise ModelError(f"model file {self.path}: not a card identity network "
                             f"(metadata task {meta.get('task')!r}, {len(names)} classes)")
        self.names = names
        self.input = self.session.get_inputs()[0].name
        base = [n.removesuffix(ROTATED_SUFFIX) for n in names]
        self.card_names = sorted(set(base))
        self._card_of = np.array([self.card_names.index(b) for b in base])
        self._rotated = np.array([n.endswith(ROTATED_SUFFIX) for n in names])
        self._none = self.card_names.index(NONE_ID)

    @property
    def card_ids(self) -> list[str]:
        """The ids this network can name (cards and ``back``)."""
        return [n for n in self.card_names if n != NONE_ID]

    def probs(self, crops: Sequence[np.ndarray] | np.ndarray) -> np.ndarray:
        """(N, classes) probabilities of BGR crops (resized to :data:`CROP_SIZE` if not)."""
        import cv2

        if len(crops) == 0:
            return np.zeros((0, len(self.names)), np.float32)
        cw, ch = CROP_SIZE
        x = np.stack([c if c.shape[:2] == (ch, cw) else
                      cv2.resize(c, (cw, ch), interpolation=cv2.INTER_AREA) for c in crops])
        x = nchw_rgb01(x)
        outs = [self.session.run(None, {self.input: x[a:a + BATCH]})[0]
                for a in range(0, len(x), BATCH)]
        return np.concatenate([np.asarray(o, np.float32).reshape(len(o), -1) for o in outs])

    def card_probs(self, p: np.ndarray) -> np.ndarray:
        """(N, cards) probability of each card id (orientations summed), columns as
        :attr:`card_names`."""
        out = np.zeros((len(p), len(self.card_names)), np.float32)
        np.add.at(out.T, self._card_of, p.T)
        return out

    def identify_batch(self, crops: Sequence[np.ndarray] | np.ndarray) -> list[CardMatch]:
        """Name each crop as :meth:`vision.cards.identify.Gallery.identify_batch` does;
        ``margin`` is the log-ratio of the best card's probability to the next card's."""
        return self.matches(self.probs(crops))

    def matches(self, p: np.ndarray) -> list[CardMatch]:
        """The readings (:meth:`identify_batch`) of rows of class probabilities ``p``."""
        pc = self.card_probs(p)
        out = []
        for i in range(len(p)):
            probs = dict(zip(self.card_names, pc[i].tolist()))
            order = np.argsort(-pc[i])
            best, second = int(order[0]), int(order[1])
            pb, p2 = float(pc[i, best]), float(pc[i, second])
            margin = math.log(max(pb, 1e-6) / max(p2, 1e-6))
            cls = np.flatnonzero(self._card_of == best)
            k = int(cls[np.argmax(p[i, cls])])
            o_margin = (math.log(max(float(p[i, k]), 1e-6) / max(pb - float(p[i, k]), 1e-6))
                        if len(cls) > 1 else float("inf"))
            if best == self._none:
                card = int(order[1])
                ccls = np.flatnonzero(self._card_of == card)
                kc = int(ccls[np.argmax(p[i, ccls])])
                cid = self.card_names[card]
                out.append(CardMatch(None, cid, bool(self._rotated[kc]) and cid != BACK_ID,
                                     0.0, margin, o_margin, 0.0, probs=probs))
                continue
            cid = self.card_names[best]
            ok = pb >= MIN_PROB
            out.append(CardMatch(cid if ok else None, cid,
                                 bool(self._rotated[k]) and cid != BACK_ID,
                                 pb if ok else min(pb, 0.5), margin, o_margin, 0.0,
                                 probs=probs))
        return out


__all__ = ["CardNet", "MIN_PROB"]
