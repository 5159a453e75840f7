"""Identify a card from a rectified crop with a classical gallery enrolled from one scan per card.

Pipeline
--------
* :func:`warp_card` / :func:`warp_card_mm` cut a card's quad out of a camera image into the
  canonical portrait patch (:data:`CROP_SIZE`, 64 x 112 px, the size of the exported
  ``card-crops``). A detector's quad says where the card is, not which short edge is the top
  of the art, so a crop may show the art upside down; the gallery says which.
* :func:`features`: grey-level gradient orientations (HOG), a contrast-normalised grey
  thumbnail and a white-balance-normalised Lab chroma thumbnail of the crop, inset a little so
  that the rounded corners (table showing through) and quad jitter weigh less.
* :func:`enroll`: every reference image is rendered many times with seeded augmentations (a
  different printing: colour matrix, saturation, gamma, yellowing, trimmed or added borders;
  bend shading and gloss; light level and white balance; resolution, blur, noise and JPEG;
  quad jitter; pyramid-like occluders and shadows) and, turned 180 degrees, as a class of its
  own. Standardise -> PCA -> LDA (whitened within-class scatter) gives a projection of about
  150 dimensions in which a card's variants cluster; per class a few k-means prototypes are
  kept. Face-down cards are the class ``back`` (the deck's ``back`` image, or for a deck
  without one the family of procedural backs the renderer draws); table textures are a
  rejection class so that an empty patch is not forced onto a card.
* :meth:`Gallery.identify`: nearest prototype per (card, orientation); the margin to the
  best *other* card decides acceptance. A batch of 20 crops takes a few ms on one core.

Only numpy and OpenCV are used at run time; enrollment also draws procedural textures from
:mod:`vision.synth.textures` (numpy + OpenCV too).
"""

from __future__ import annotations

import json
import logging
import math
import time
import zipfile
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import cv2
import numpy as np

from companion.core.errors import CompanionError
from companion.core.files import atomic_file, given_path

if TYPE_CHECKING:
    from vision.synth.deck import Deck

log = logging.getLogger(__name__)

#: Canonical crop (width, height) px: a card's quad warped to an upright portrait patch.
CROP_SIZE: tuple[int, int] = (64, 112)
BACK_ID = "back"
#: Internal class of "no card here" (table textures); never returned as an id.
NONE_ID = "__none__"
GALLERY_VERSION = 1

# feature geometry: the crop is inset by INSET of its width on every side (rounded corners,
# quad jitter), then resampled to FEAT_WH for HOG (8 px cells) and to smaller thumbnails.
INSET = 0.05
FEAT_WH = (32, 56)
GREY_WH = (16, 28)      # grey thumbnail (also the fine HOG's input)
CHROMA_WH = (8, 14)

HOG_BINS = 9
#: Chances of 0, 1, 2, 3 pyramid-like occluders on an enrollment crop (the identity network
#: of vision/cards/train_net.py trains with more of them).
OCCLUDERS_P = (0.6, 0.25, 0.1, 0.05)


class GalleryError(CompanionError, ValueError):
    """A gallery file that is missing, unreadable or of another version."""


@dataclass(frozen=True)
class CardMatch:
    """What a crop shows.

    ``card_id`` is None when the crop is rejected (no card, or no card clearly enough);
    ``best_id`` is then still the nearest card. ``rotated`` is True when the art's top is at
    the bottom of the crop (the art direction is the crop's "down"); it is False for
    ``back``. ``margin`` is the distance (LDA units) from the best card to the best other
    card, ``orientation_margin`` the same between the two orientations of the best card;
    ``confidence`` maps the margin to 0..1. Where two readers name one cut differently the
    pipeline weighs each one's view of both names (:func:`vision.pipeline._fuse`), so each
    reader also says what it makes of every card: the gallery its distance to the card's
    nearest prototype (``distances``), the identity network its probability (``probs``),
    either orientation; None where the reader does not say. The gallery also keeps the cut
    it read (``cut``) and its distance to every class (``class_distances``, as
    :meth:`Gallery.unknown_face` takes them), so that a back it names is checked without
    cutting and embedding the card again.
    """

    card_id: str | None
    best_id: str
    rotated: bool
    confidence: float
    margin: float
    orientation_margin: float
    distance: float
    distances: Mapping[str, float] | None = field(default=None, compare=False, repr=False)
    probs: Mapping[str, float] | None = field(default=None, compare=False, repr=False)
    cut: np.ndarray | None = field(default=None, compare=False, repr=False)
    class_distances: np.ndarray | None = field(default=None, compare=False, repr=False)

    @property
    def accepted(self) -> bool:
        return self.card_id is not None

    @property
    def looks_like_table(self) -> bool:
        """Nearest to the gallery's bare-table class (rejected with confidence 0)."""
        return self.card_id is None and self.confidence <= 0.0


# ---------------------------------------------------------------------------------------------
# geometry: quads to the canonical patch


def order_card_corners(corners_px: np.ndarray | Sequence[Sequence[float]]) -> np.ndarray:
    """Four corners in any order -> (4, 2) clockwise in the image (as TL, TR, BR, BL of a
    portrait card), starting at a corner whose next edge is a short edge. Which of the two
    short edges comes first is arbitrary: :meth:`Gallery.identify` tells the art's top."""
    pts = np.asarray(corners_px, np.float64).reshape(4, 2)
    c = pts.mean(axis=0)
    ang = np.arctan2(pts[:, 1] - c[1], pts[:, 0] - c[0])
    pts = pts[np.argsort(ang)]  # image y is down, so increasing angle = clockwise on screen
    e01 = np.linalg.norm(pts[1] - pts[0]) + np.linalg.norm(pts[3] - pts[2])
    e12 = np.linalg.norm(pts[2] - pts[1]) + np.linalg.norm(pts[0] - pts[3])
    if e01 > e12:
        pts = np.roll(pts, -1, axis=0)
    return pts


def warp_card(image: np.ndarray, corners_px: np.ndarray | Sequence[Sequence[float]],
              size: tuple[int, int] = CROP_SIZE) -> np.ndarray:
    """Warp the quad ``corners_px`` (TL, TR, BR, BL of the card as a portrait) to a
    ``size`` = (w, h) patch. Large cards are warped at a multiple of the size and shrunk with
    area averaging, because a plain perspective warp point-samples and would alias the art."""
    src = np.asarray(corners_px, np.float32).reshape(4, 2)
    cw, ch = size
    long_px = max(float(np.linalg.norm(src[3] - src[0])), float(np.linalg.norm(src[2] - src[1])))
    k = int(min(4, max(1, math.floor(long_px / ch))))
    ww, hh = cw * k, ch * k
    dst = np.array([[-0.5, -0.5], [ww - 0.5, -0.5], [ww - 0.5, hh - 0.5], [-0.5, hh - 0.5]],
                   np.float32)
    M = cv2.getPerspectiveTransform(src, dst)
    out = cv2.warpPerspective(image, M, (ww, hh), flags=cv2.INTER_LINEAR,
                              borderMode=cv2.BORDER_REPLICATE)
    if k > 1:
        out = cv2.resize(out, (cw, ch), interpolation=cv2.INTER_AREA)
    return out


def card_corners_mm(center_mm: Sequence[float], angle_deg: float,
                    card_size_mm: Sequence[float]) -> np.ndarray:
    """(4, 2) table-mm corners TL, TR, BR, BL of a card whose art top points along
    ``angle_deg`` (0 = east, 90 = south), as in the observation record."""
    w, h = float(card_size_mm[0]), float(card_size_mm[1])
    a = math.radians(angle_deg)
    u = np.array([math.cos(a), math.sin(a)])      # toward the top of the art
    r = np.array([-math.sin(a), math.cos(a)])     # toward the art's right
    c = np.asarray(center_mm, np.float64)
    return np.array([c + u * h / 2 - r * w / 2, c + u * h / 2 + r * w / 2,
                     c - u * h / 2 + r * w / 2, c - u * h / 2 - r * w / 2])


def warp_card_mm(image: np.ndarray, calib: Any, center_mm: Sequence[float], angle_deg: float,
                 card_size_mm: Sequence[float], size: tuple[int, int] = CROP_SIZE) -> np.ndarray:
    """The canonical patch of a card given in table mm through a
    :class:`calibration.table.Calibration` (lens distortion included when it carries
    intrinsics: the patch is then sampled through a dense map, since straight card edges
    are curved in the image)."""
    if getattr(calib, "H", None) is None:
        raise ValueError("not calibrated: " + str(getattr(calib, "reason", "")))
    intr = getattr(calib, "intrinsics", None)
    corners = card_corners_mm(center_mm, angle_deg, card_size_mm)
    if intr is None or not intr.distorts:
        return warp_card(image, calib.to_image(corners), size)
    cw, ch = size
    # a coarse grid of patch points -> table mm -> ideal px -> distorted px, upsampled to a
    # per-pixel map (the distortion is smooth over one card)
    gx, gy = 9, 15
    s = np.linspace(0.0, 1.0, gx)
    t = np.linspace(0.0, 1.0, gy)
    S, T = np.meshgrid(s, t)
    tl, tr, br, bl = corners
    mm = ((1 - S)[..., None] * (1 - T)[..., None] * tl + S[..., None] * (1 - T)[..., None] * tr
          + S[..., None] * T[..., None] * br + (1 - S)[..., None] * T[..., None] * bl)
    ideal = calib.to_image(mm.reshape(-1, 2))
    grid = intr.distort_points(ideal).reshape(gy, gx, 2).astype(np.float32)
    # grid nodes sit on the patch's outer pixel edges; resize maps node i to pixel centres
    big = cv2.resize(grid, (cw, ch), interpolation=cv2.INTER_LINEAR)
    return cv2.remap(image, big[..., 0], big[..., 1], cv2.INTER_LINEAR,
                     borderMode=cv2.BORDER_REPLICATE)


#: A card whose art, at the crop's size and slightly blurred, correlates with itself turned
#: half-way round at least this well looks the same both ways up: the Decktet draws six
#: such cards (the Mill, the Windfall, the Sea, the Darkness, the Battle, the Forest: 0.997
#: or more; the next, the Market, 0.976); no card of the Rider-Waite-Smith tarot reaches
#: 0.7.
HALF_TURN_CORRELATION = 0.99


def half_turn_symmetric(art_bgr: np.ndarray) -> bool:
    """Whether a card's art (a scan, any size, upright) looks the same turned 180 degrees
    at the scale a camera sees it (:data:`HALF_TURN_CORRELATION`): which end is its top
    cannot be told from the image, by a player or a camera."""
    g = art_bgr if art_bgr.ndim == 2 else cv2.cvtColor(art_bgr[:, :, :3], cv2.COLOR_BGR2GRAY)
    g = cv2.resize(g, CROP_SIZE, interpolation=cv2.INTER_AREA).astype(np.float32)
    g = cv2.GaussianBlur(g, (0, 0), 1.0)
    a = (g - g.mean()).ravel()
    b = (g[::-1, ::-1] - g.mean()).ravel()
    den = float(np.linalg.norm(a) * np.linalg.norm(b))
    return den > 0.0 and float(a @ b) / den >= HALF_TURN_CORRELATION


def half_turn_symmetric_ids(deck: Any) -> list[str]:
    """The ids of ``deck`` (a :class:`vision.synth.deck.Deck`) whose scan is
    :func:`half_turn_symmetric`, in the deck's order."""
    return [cid for cid in deck.ids if half_turn_symmetric(deck.image(cid))]


#: A card back with a top (the Decktet's: its art is not :func:`half_turn_symmetric`) is told
#: which way up it lies by comparing its cut with a thumbnail of the back this size (w, h),
#: kept in the gallery at enrollment (``meta["back_top"]``); the same thumbnail of a card's
#: cut, inside its border (:data:`BACK_TOP_INSET`), is compared both ways up.
BACK_TOP_WH: tuple[int, int] = (16, 28)
BACK_TOP_INSET = 0.08
#: a back's thumbnail correlated with itself turned round at least this much has no top
#: to tell: the Decktet's back 0.62; a back alike both ways up, scanned 1% off centre 0.93,
#: under a light gradient 0.99, one plain colour (no thumbnail at all) too
BACK_SYMMETRIC_CORRELATION = 0.8


def back_top_thumb(image_bgr: np.ndarray) -> np.ndarray:
    """A back's (or a card cut's, portrait) thumbnail for telling its top
    (:data:`BACK_TOP_WH`): grey, inside the border, zero mean and unit norm."""
    g = image_bgr if image_bgr.ndim == 2 else cv2.cvtColor(image_bgr[:, :, :3],
                                                           cv2.COLOR_BGR2GRAY)
    h, w = g.shape[:2]
    dx, dy = int(round(w * BACK_TOP_INSET)), int(round(h * BACK_TOP_INSET))
    g = cv2.resize(g[dy:h - dy, dx:w - dx], BACK_TOP_WH, interpolation=cv2.INTER_AREA)
    t = g.astype(np.float32) - float(g.mean())
    n = float(np.linalg.norm(t))
    return t / n if n > 0 else t


#: A cut the gallery names ``back`` is read as a face-up card it does not know (a card left
#: out of an enrolled deck, a face it cannot name) where the back class is nearer than every
#: face by less than FACE_UP_BACK_GAP (LDA units) and the cut does not look alike both ways up
#: (:func:`half_turn_asymmetry` above FACE_UP_ASYMMETRY: backs are printed so, faces are not).
#: On 40 renders with every fourth tarot card left out of a deck enrolled at enroll-deck's
#: default 40 views a card (true boxes, seed 931000): true backs lay 0.9-15.3 nearer the back
#: class than any face (5th percentile 3.2), faces left out -5.8-3.7 (95th percentile 2.6);
#: a face's asymmetry is 0.23 or more, a back's 0.04-0.56 (under a pyramid or in a pile the
#: cut shows more than the back), so the gap decides most. Checked on three fresh sets (seeds
#: 411000, 422000, 433000): neither 2.5 nor 3.5 does better on all. Figures:
#: docs/vision-tuning.md
FACE_UP_BACK_GAP = 3.0
FACE_UP_ASYMMETRY = 0.3
#: For a back with a top (the Decktet's) the cut is like a back where its thumbnail correlates
#: with the back's (:func:`back_top_thumb`, the better way up) at least this well. A Decktet
#: face shares the back's broad light and shade: with a quarter of the Decktet left out of the
#: deck (true boxes, seeds 444000, 455000, 466000) faces' cuts reached 0.68 (median 0.47; 170
#: of 394 at 0.5 or more, kept as backs where the gallery took them for one), backs' 0.15-1.0
#: (median 0.89; 22 of 185 under 0.7, all but one 4.7 or more nearer the back class than any
#: face, so the gap keeps them; the one is under 0.5 too)
FACE_UP_BACK_LIKE = 0.7


def half_turn_asymmetry(crop_bgr: np.ndarray) -> float:
    """How unlike itself turned half-way round a card's cut (portrait) is, 0..1: 0 for art
    alike both ways up (a card back), about 0.5 for unrelated halves. Read on an 8 x 14 grey
    thumbnail inside the border (:data:`BACK_TOP_INSET`) with its best-fitting plane taken
    away, so that light falling off across the card (which a half turn reverses) does not
    count; the share of the thumbnail's variation that a half turn changes."""
    g = crop_bgr if crop_bgr.ndim == 2 else cv2.cvtColor(crop_bgr[:, :, :3], cv2.COLOR_BGR2GRAY)
    h, w = g.shape[:2]
    dx, dy = int(round(w * BACK_TOP_INSET)), int(round(h * BACK_TOP_INSET))
    t = cv2.resize(g[dy:h - dy, dx:w - dx], (8, 14), interpolation=cv2.INTER_AREA
                   ).astype(np.float64)
    ys, xs = np.mgrid[0:t.shape[0], 0:t.shape[1]].astype(np.float64)
    A = np.stack([np.ones(t.size), xs.ravel(), ys.ravel()], axis=1)
    coef = np.linalg.lstsq(A, t.ravel(), rcond=None)[0]
    r = t - (A @ coef).reshape(t.shape)
    turned = r[::-1, ::-1]
    odd = float(np.sqrt(np.mean((r - turned) ** 2)))
    even = float(np.sqrt(np.mean((r + turned) ** 2)))
    return odd / (odd + even) if odd + even > 1e-6 else 0.0


def art_angle_deg(quad_angle_deg: float, rotated: bool) -> float:
    """The record's ``angle_deg`` (centre -> art top) from the direction of the crop's top
    edge and :attr:`CardMatch.rotated`."""
    return float((quad_angle_deg + (180.0 if rotated else 0.0)) % 360.0)


# ---------------------------------------------------------------------------------------------
# features


def _inset(crop: np.ndarray) -> np.ndarray:
    h, w = crop.shape[:2]
    m = int(round(w * INSET))
    return crop[m:h - m, m:w - m] if m > 0 else crop


@lru_cache(maxsize=8)
def _cell_index(n: int, h: int, w: int, cell: int) -> np.ndarray:
    """Flat (crop, cell) index * bins of every pixel of an (n, h, w) stack."""
    hc, wc = h // cell, w // cell
    idx = ((np.arange(n)[:, None, None] * hc + (np.arange(h) // cell)[None, :, None]) * wc
           + (np.arange(w) // cell)[None, None, :])
    return (idx.ravel() * HOG_BINS).astype(np.intp)


def _hog(L: np.ndarray, cell: int) -> np.ndarray:
    """Batched HOG (Dalal-Triggs layout: unsigned orientations with linear binning, 2 x 2
    cell blocks at a one cell stride, L2-Hys). OpenCV 5 dropped ``cv2.HOGDescriptor`` from
    its main modules, and one batched pass is faster than per-crop calls anyway.
    ``L``: (N, H, W) float32 with H and W multiples of ``cell``."""
    n, h, w = L.shape
    gx = np.zeros_like(L)
    gy = np.zeros_like(L)
    np.subtract(L[:, :, 2:], L[:, :, :-2], out=gx[:, :, 1:-1])
    np.subtract(L[:, 2:, :], L[:, :-2, :], out=gy[:, 1:-1, :])
    mag = np.sqrt(gx * gx + gy * gy).ravel()
    pos = (np.arctan2(gy, gx).ravel() % np.pi) * (HOG_BINS / np.pi) - 0.5
    b0f = np.floor(pos)
    w1 = (pos - b0f) * mag
    b0 = b0f.astype(np.intp) % HOG_BINS
    b1 = b0 + 1
    b1[b1 == HOG_BINS] = 0
    hc, wc = h // cell, w // cell
    base = _cell_index(n, h, w, cell)
    # one weighted bincount straight into (crop, cell, bin): both linear-binning neighbours
    cells = np.bincount(np.concatenate([base + b0, base + b1]),
                        weights=np.concatenate([mag - w1, w1]),
                        minlength=n * hc * wc * HOG_BINS).astype(np.float32)
    cells = cells.reshape(n, hc, wc, HOG_BINS)
    blocks = np.concatenate([cells[:, :-1, :-1], cells[:, :-1, 1:], cells[:, 1:, :-1],
                             cells[:, 1:, 1:]], axis=3).reshape(n, -1, 4 * HOG_BINS)
    blocks /= np.sqrt((blocks ** 2).sum(axis=2, keepdims=True)) + 1e-3
    np.minimum(blocks, 0.2, out=blocks)
    blocks /= np.sqrt((blocks ** 2).sum(axis=2, keepdims=True)) + 1e-3
    return blocks.reshape(n, -1)


def _prep(crop: np.ndarray) -> np.ndarray:
    if crop.ndim == 2:
        crop = cv2.cvtColor(crop, cv2.COLOR_GRAY2BGR)
    if crop.dtype != np.uint8:
        crop = np.clip(crop, 0, 255).astype(np.uint8)
    return cv2.resize(_inset(crop), FEAT_WH, interpolation=cv2.INTER_AREA)


def features(crops: Sequence[np.ndarray] | np.ndarray) -> np.ndarray:
    """(N, D) float32 raw features of BGR crops (any size; portrait)."""
    if len(crops) == 0:
        return np.zeros((0, feature_dim()), np.float32)
    if len(crops) > 256:  # bounded memory for enrollment-sized batches
        return np.concatenate([features(crops[i:i + 256]) for i in range(0, len(crops), 256)])
    fw, fh = FEAT_WH
    f = np.stack([_prep(np.asarray(c)) for c in crops]).astype(np.float32)  # (N, fh, fw, 3)
    n = len(f)
    B, G, R = f[..., 0], f[..., 1], f[..., 2]
    L = 0.114 * B + 0.587 * G + 0.299 * R
    hog = _hog(L, 8)
    gw, gh = GREY_WH
    small = cv2.resize(L.reshape(n * fh, fw), (gw, n * gh),
                       interpolation=cv2.INTER_AREA).reshape(n, gh, gw)
    hog2 = _hog(small, 4)
    g = small.reshape(n, -1)
    # contrast normalisation: exposure, gamma-ish and paper tone shifts drop out
    g = (g - g.mean(axis=1, keepdims=True)) / (g.std(axis=1, keepdims=True) + 4.0)
    # opponent chromaticity (divided by intensity: the light level drops out), relative to
    # the card's median so that a white balance or printing hue shift drops out too; the
    # median itself is kept (the augmentations decide how much it is trusted)
    inv = 1.0 / (L + 16.0)
    opp = np.stack([(R - G) * inv, ((R + G) * 0.5 - B) * inv], axis=-1)
    cw_, ch_ = CHROMA_WH
    opp = cv2.resize(opp.reshape(n * fh, fw, 2), (cw_, n * ch_),
                     interpolation=cv2.INTER_AREA).reshape(n, -1, 2)
    med = np.median(opp, axis=1, keepdims=True)
    rel = (opp - med) * 4.0
    # 180-degree asymmetry maps: card backs are (nearly always) printed point-symmetric so
    # that a reversed card cannot be told from its back, faces are not; this lets the
    # projection separate "back" from faces whatever the back's colours and pattern
    g3 = g.reshape(n, gh, gw)
    asym_g = np.abs(g3 - g3[:, ::-1, ::-1]).reshape(n, gh // 4, 4, gw // 4, 4).mean(axis=(2, 4))
    r3 = rel.reshape(n, ch_, cw_, 2)
    asym_c = np.abs(r3 - r3[:, ::-1, ::-1]).reshape(n, ch_ // 2, 2, cw_ // 2, 2, 2
                                                    ).mean(axis=(2, 4))
    return np.concatenate([hog, hog2, g, rel.reshape(n, -1), med[:, 0] * 4.0,
                           asym_g.reshape(n, -1), asym_c.reshape(n, -1)], axis=1
                          ).astype(np.float32)


def feature_dim() -> int:
    return int(features([np.zeros((CROP_SIZE[1], CROP_SIZE[0], 3), np.uint8)]).shape[1])


# ---------------------------------------------------------------------------------------------
# the gallery


#: see :func:`look_alikes`
LOOK_ALIKE_RATIO = 0.25


@dataclass
class Gallery:
    """An enrolled deck: feature standardisation, projection and prototypes per class.

    Classes are (card, orientation) pairs; ``class_ids[k]`` and ``class_rot[k]`` name class
    ``k``; ``proto_class`` maps each prototype row to its class.
    """

    deck_name: str
    card_size_mm: tuple[float, float]
    class_ids: list[str]
    class_rot: np.ndarray          # (C,) bool: the art is upside down in the crop
    mean: np.ndarray               # (D,)
    scale: np.ndarray              # (D,)
    proj: np.ndarray               # (D, k): standardised features -> LDA space
    protos: np.ndarray             # (M, k)
    proto_class: np.ndarray        # (M,) int
    min_margin: float = 0.5        # below this margin a match is rejected
    max_distance: float = 1e9      # beyond this distance to the best prototype: rejected
    meta: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        self._prepare()

    def _prepare(self) -> None:
        # fold the standardisation into the projection: z = f @ W + b
        self._Wt = np.ascontiguousarray((self.proj / self.scale[:, None]).T, np.float32)
        self._b = (-(self.mean / self.scale) @ self.proj).astype(np.float32)
        order = np.argsort(self.proto_class, kind="stable")
        self._p = np.ascontiguousarray(self.protos[order], np.float32)
        self._pn = (self._p ** 2).sum(axis=1)
        pc = self.proto_class[order].astype(np.int64)
        if not np.array_equal(np.unique(pc), np.arange(len(self.class_ids))):
            raise GalleryError("gallery prototypes do not cover every class")
        self._starts = np.flatnonzero(np.r_[True, pc[1:] != pc[:-1]])
        names = sorted(set(self.class_ids))
        self._names = names
        self._name_of_class = np.array([names.index(c) for c in self.class_ids])
        self._none = names.index(NONE_ID) if NONE_ID in names else -1
        self._back = names.index(BACK_ID) if BACK_ID in names else -1
        self._symmetric = frozenset(str(c) for c in (self.meta or {}).get("half_turn_symmetric",
                                                                           []))
        meta = self.meta or {}
        top = meta.get("back_top")
        #: whether the gallery says if its back has a top (a gallery enrolled before it was
        #: asked does not: its backs keep their boxes' direction, claiming neither)
        self._back_top_known = "back_top" in meta
        self._back_top: np.ndarray | None = None
        if top is not None:
            bad = GalleryError(f"its back thumbnail is not {BACK_TOP_WH[0]}x{BACK_TOP_WH[1]} "
                               "numbers of unit length: enroll again")
            try:
                t = np.asarray(top, np.float32).reshape(BACK_TOP_WH[1], BACK_TOP_WH[0])
            except (TypeError, ValueError) as exc:
                raise bad from exc
            if not np.all(np.isfinite(t)) or abs(float(np.linalg.norm(t)) - 1.0) > 0.05:
                raise bad
            self._back_top = t
        #: the last cut's thumbnail (:meth:`_cut_thumb`): a cut named back is asked both
        #: whether it is a face (:meth:`unknown_face`) and which way up it lies
        #: (:meth:`back_turned`), and cut once for the two
        self._last_thumb: tuple[np.ndarray, np.ndarray] | None = None

    @property
    def back_alike_both_ways(self) -> bool:
        """Whether this gallery says its back looks the same both ways up (a face-down
        card's record then gives its long axis, ``art_symmetric``); False for a back with
        a top, and for a gallery enrolled before that was asked."""
        return self._back_top_known and self._back_top is None

    @property
    def back_has_top(self) -> bool:
        """Whether this deck's back has a top (:data:`BACK_TOP_WH`): a face-down card's
        ``angle_deg`` then points to it (:meth:`back_turned`); otherwise a back looks the
        same both ways up, and the record gives the card's long axis in [0, 180)."""
        return self._back_top is not None

    def back_turned(self, crop: np.ndarray) -> bool:
        """Whether the back in ``crop`` (a card cut, portrait, as :meth:`identify_batch`
        takes) lies with its top at the cut's bottom; False for a back with no top."""
        if self._back_top is None:
            return False
        t = self._cut_thumb(crop)
        return float(np.sum(t[::-1, ::-1] * self._back_top)) > float(np.sum(t * self._back_top))

    def _cut_thumb(self, crop: np.ndarray) -> np.ndarray:
        """``back_top_thumb(crop)``, kept for the same cut (the array itself: the cache holds
        it, so another cut cannot take its place in memory) asked again."""
        last = self._last_thumb     # (read once: another thread may set it meanwhile)
        if last is not None and last[0] is crop:
            return last[1]
        t = back_top_thumb(crop)
        self._last_thumb = (crop, t)
        return t

    def unknown_face(self, crop: np.ndarray, class_distances: np.ndarray | None = None
                     ) -> CardMatch | None:
        """Where this gallery would name ``crop`` (a cut, as :meth:`identify_batch` takes) a
        back that is no back (:data:`FACE_UP_BACK_GAP`, :data:`FACE_UP_ASYMMETRY`): its
        nearest face, unidentified (``card_id`` None), with the identifier's confidence of
        the face over the next one, at most 0.5; else None (a back, or a face named
        anyway). A back with a top (the Decktet's) is not alike both ways up: its cut is
        compared with the back's own thumbnail instead, either way up
        (:data:`FACE_UP_BACK_LIKE`). ``class_distances``:
        the crop's, where :meth:`identify_batch` has worked them out already
        (:attr:`CardMatch.class_distances`)."""
        if BACK_ID not in self._names:
            return None
        dist = (class_distances if class_distances is not None
                else self._class_distances(self.embed([crop]))[0])
        is_back = self._name_of_class == self._back
        faces = ~is_back & (self._name_of_class != self._none)
        if not faces.any() or not is_back.any():
            return None
        d_back = float(dist[is_back].min())
        order = np.flatnonzero(faces)[np.argsort(dist[faces])]
        best = int(order[0])
        if not 0.0 <= float(dist[best]) - d_back < FACE_UP_BACK_GAP:
            return None
        if self._back_top is not None:
            t = self._cut_thumb(crop)
            if max(float(np.sum(t * self._back_top)),
                   float(np.sum(t[::-1, ::-1] * self._back_top))) >= FACE_UP_BACK_LIKE:
                return None
        elif half_turn_asymmetry(crop) <= FACE_UP_ASYMMETRY:
            return None
        name = self._name_of_class[best]
        other = next((int(c) for c in order[1:] if self._name_of_class[c] != name), best)
        margin = float(dist[other] - dist[best])
        conf = 1.0 / (1.0 + math.exp(-(margin - self.min_margin) * 3.0 / max(self.min_margin,
                                                                              1e-6)))
        return CardMatch(None, self._names[name], bool(self.class_rot[best]), min(conf, 0.5),
                         margin, float("inf"), float(dist[best]))

    @property
    def half_turn_symmetric(self) -> frozenset[str]:
        """The ids whose art looks the same both ways up (:func:`half_turn_symmetric`,
        found at enrollment from the deck's scans): which way up such a card lies is not
        in the image, so the pipeline does not claim it (its record says
        ``"art_symmetric": true``)."""
        return self._symmetric

    @property
    def card_ids(self) -> list[str]:
        """The ids this gallery can return (cards and ``back``)."""
        return [n for n in self._names if n != NONE_ID]

    def embed(self, crops: Sequence[np.ndarray] | np.ndarray) -> np.ndarray:
        """(N, k) LDA-space points of crops."""
        F = features(crops)
        # one matrix-vector product per crop: a small matrix-matrix product goes to a
        # multi-threaded BLAS whose spinning threads cost ~20x more on a busy machine
        return np.stack([self._Wt @ f for f in F]) + self._b if len(F) else \
            np.zeros((0, len(self._b)), np.float32)

    def _class_distances(self, z: np.ndarray) -> np.ndarray:
        """(N, C) distance from each point to the nearest prototype of each class."""
        out = np.empty((len(z), len(self._starts)), np.float32)
        for i, zi in enumerate(z):
            d2 = self._pn - 2.0 * (self._p @ zi) + float(zi @ zi)
            out[i] = np.minimum.reduceat(d2, self._starts)
        return np.sqrt(np.maximum(out, 0.0))

    def identify(self, crop: np.ndarray) -> CardMatch:
        """Identify one crop (see :meth:`identify_batch`)."""
        return self.identify_batch([crop])[0]

    def identify_batch(self, crops: Sequence[np.ndarray] | np.ndarray) -> list[CardMatch]:
        """Identify rectified card crops (portrait, BGR, any size; :data:`CROP_SIZE` is what
        the gallery was built at)."""
        if len(crops) == 0:
            return []
        dist = self._class_distances(self.embed(crops))
        # each card's nearest prototype, either orientation
        per_card = np.full((len(dist), len(self._names)), np.inf, np.float32)
        np.minimum.at(per_card.T, self._name_of_class, dist.T)
        out = []
        for i in range(len(dist)):
            order = np.argsort(dist[i])
            best = int(order[0])
            name = self._name_of_class[best]
            other = next((int(c) for c in order[1:] if self._name_of_class[c] != name), best)
            d_best = float(dist[i, best])
            margin = float(dist[i, other] - d_best)
            same = [int(c) for c in order[1:] if self._name_of_class[c] == name]
            o_margin = float(dist[i, same[0]] - d_best) if same else float("inf")
            cid = self._names[name]
            rotated = bool(self.class_rot[best]) and cid != BACK_ID
            conf = float(1.0 / (1.0 + math.exp(-(margin - self.min_margin) * 3.0 / max(
                self.min_margin, 1e-6))))
            ok = cid != NONE_ID and margin >= self.min_margin and d_best <= self.max_distance
            if cid == NONE_ID:
                conf = 0.0
                # the best *card* is still useful to a caller that wants a guess
                card = next((int(c) for c in order if self._name_of_class[c] != self._none), best)
                cid = self._names[self._name_of_class[card]]
                rotated = bool(self.class_rot[card]) and cid != BACK_ID
            out.append(CardMatch(cid if ok else None, cid, rotated, conf if ok else min(conf, 0.5),
                                 margin, o_margin, d_best,
                                 distances=dict(zip(self._names, per_card[i].tolist())),
                                 cut=crops[i], class_distances=dist[i]))
        return out

    # -- persistence ------------------------------------------------------------------------

    def save(self, path: str | Path) -> Path:
        """Write the gallery as a compressed ``.npz`` (float16 where precision allows)."""
        path = Path(path)
        meta = dict(self.meta or {})
        meta.update({"version": GALLERY_VERSION, "deck_name": self.deck_name,
                     "card_size_mm": list(self.card_size_mm), "class_ids": self.class_ids,
                     "min_margin": self.min_margin, "max_distance": self.max_distance,
                     "features": {"inset": INSET, "feat_wh": list(FEAT_WH),
                                  "grey_wh": list(GREY_WH), "chroma_wh": list(CHROMA_WH),
                                  "crop_size": list(CROP_SIZE), "dim": int(self.mean.size)}})
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_file(path, binary=True) as fh:  # an interrupted save keeps the old one
            np.savez_compressed(fh, meta=np.frombuffer(json.dumps(meta).encode("utf-8"), np.uint8),
                                class_rot=self.class_rot.astype(np.uint8),
                                mean=self.mean.astype(np.float32),
                                scale=self.scale.astype(np.float32),
                                proj=self.proj.astype(np.float32),
                                protos=self.protos.astype(np.float16),
                                proto_class=self.proto_class.astype(np.int16))
        return path

    @classmethod
    def load(cls, path: str | Path) -> "Gallery":
        path = given_path(path)
        if path.exists() and not path.is_file():
            raise GalleryError(f"card gallery {str(path)!r} is not a file (a folder, a "
                               "device or a pipe?)")
        if not path.is_file():
            raise GalleryError(f"card gallery {str(path)!r} does not exist "
                               "(enroll the deck first)")
        where = f"card gallery {str(path)!r}"
        try:
            z = np.load(path, allow_pickle=False)
        except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
            from companion.core.files import wrong_kind

            if (other := wrong_kind(path, "a card gallery")) is not None:
                # (a camera file or a photo given as --deck: said as what it is)
                raise GalleryError(f"{where} {other}") from None
            # (numpy's own words here suggest allow_pickle, which would run what it holds)
            raise GalleryError(f"{where} is not readable: not a gallery file of this program "
                               f"({type(exc).__name__}); if it was one, it is damaged: enroll "
                               "the deck again") from None
        if not isinstance(z, np.lib.npyio.NpzFile):
            raise GalleryError(f"{where} is a single numpy array, not a gallery (.npz of "
                               "`companion enroll-deck`)")
        try:
            with z:
                meta = json.loads(z["meta"].tobytes().decode("utf-8"))
                arrays = {k: z[k] for k in ("class_rot", "mean", "scale", "proj", "protos",
                                            "proto_class")}
        except (OSError, ValueError, KeyError, UnicodeDecodeError, EOFError,
                zipfile.BadZipFile) as exc:
            why = ("it holds Python objects, which are never loaded (a gallery is numbers)"
                   if "allow_pickle" in str(exc) else str(exc))
            raise GalleryError(f"{where} is not readable: {why}") from None
        if not isinstance(meta, dict):
            raise GalleryError(f"{where}: its meta is {type(meta).__name__}, not an object")
        if meta.get("version") != GALLERY_VERSION:
            raise GalleryError(f"{where} has version {meta.get('version')!r}; this program "
                               f"reads version {GALLERY_VERSION}: enroll again")
        if meta.get("features", {}).get("dim") != feature_dim():
            raise GalleryError(f"{where} was built with other features: enroll again")
        _check_shapes(arrays, len(meta.get("class_ids") or ()), where)
        try:
            return cls(deck_name=str(meta["deck_name"]),
                       card_size_mm=(float(meta["card_size_mm"][0]),
                                     float(meta["card_size_mm"][1])),
                       class_ids=[str(c) for c in meta["class_ids"]],
                       class_rot=arrays["class_rot"].astype(bool), mean=arrays["mean"],
                       scale=arrays["scale"], proj=arrays["proj"],
                       protos=arrays["protos"].astype(np.float32),
                       proto_class=arrays["proto_class"].astype(np.int64),
                       min_margin=float(meta["min_margin"]),
                       max_distance=float(meta["max_distance"]), meta=meta)
        except GalleryError as exc:
            raise GalleryError(f"{where}: {exc}") from None
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise GalleryError(f"{where}: its meta lacks or garbles "
                               f"{exc if isinstance(exc, KeyError) else 'a field'} "
                               f"({type(exc).__name__}: {exc}): enroll again") from None


def back_top_meta(deck: Any) -> dict[str, Any]:
    """``{"back_top": [...]}``, the thumbnail of a deck's back that has a top, or
    ``{"back_top": None}`` for one alike both ways up (:data:`BACK_SYMMETRIC_CORRELATION`)
    and for the program's own backs, which are drawn so."""
    if deck.back_file is None:
        return {"back_top": None}
    t = back_top_thumb(deck.image(BACK_ID))
    if float(np.linalg.norm(t)) == 0.0 or float(np.sum(t * t[::-1, ::-1])) \
            >= BACK_SYMMETRIC_CORRELATION:
        return {"back_top": None}
    return {"back_top": [round(float(v), 5) for v in t.ravel()]}


def _check_shapes(arrays: dict[str, np.ndarray], classes: int, where: str) -> None:
    """The gallery's arrays agree with each other (a file put together by hand, or by
    another program, fails here with the array named, not in the first frame's arithmetic)."""
    d = feature_dim()
    proj, protos = arrays["proj"], arrays["protos"]
    k = proj.shape[1] if proj.ndim == 2 else -1
    m = protos.shape[0] if protos.ndim == 2 else -1
    want = {"mean": (d,), "scale": (d,), "proj": (d, k), "protos": (m, k),
            "proto_class": (m,), "class_rot": (classes,)}
    for name, shape in want.items():
        a = arrays[name]
        if a.shape != shape or -1 in shape or not (np.issubdtype(a.dtype, np.number)
                                                  or a.dtype == bool):
            raise GalleryError(f"{where}: array {name!r} has shape {a.shape} ({a.dtype}), "
                               f"expected {tuple('?' if n < 0 else n for n in shape)}: "
                               "enroll again")


# ---------------------------------------------------------------------------------------------
# enrollment: augmentations


def _rounded_alpha(h: int, w: int, r: float) -> np.ndarray:
    a = np.zeros((h, w), np.uint8)
    ri = int(max(0, round(r)))
    if ri < 1:
        a[:] = 255
        return a
    cv2.rectangle(a, (ri, 0), (w - 1 - ri, h - 1), 255, -1)
    cv2.rectangle(a, (0, ri), (w - 1, h - 1 - ri), 255, -1)
    for cx, cy in ((ri, ri), (w - 1 - ri, ri), (w - 1 - ri, h - 1 - ri), (ri, h - 1 - ri)):
        cv2.circle(a, (cx, cy), ri, 255, -1, cv2.LINE_AA)
    return a


def _print_variant(art: np.ndarray, rng: np.random.Generator, strength: float) -> np.ndarray:
    """Another printing of ``art`` (float32 BGR 0..255, the texture size kept)."""
    h, w = art.shape[:2]
    img = art
    u = rng.random()
    if u < 0.35:  # trimmed scan border
        t = rng.uniform(0.0, 0.05) * strength
        cy, cx = int(h * t), int(w * t)
        if cy > 0 and cx > 0:
            img = cv2.resize(img[cy:h - cy, cx:w - cx], (w, h), interpolation=cv2.INTER_LINEAR)
    elif u < 0.7:  # an added paper border
        b = max(1, int(round(w * rng.uniform(0.01, 0.14) * strength)))
        paper = (np.array([232, 240, 244], np.float32)
                 + rng.uniform(-25, 15, 3).astype(np.float32))
        inner = cv2.resize(img, (w - 2 * b, h - 2 * b), interpolation=cv2.INTER_AREA)
        img = np.empty_like(art)
        img[:] = paper
        img[b:h - b, b:w - b] = inner
    M = np.eye(3, dtype=np.float32) + rng.uniform(-0.06, 0.06, (3, 3)).astype(np.float32) * strength
    M /= M.sum(axis=1, keepdims=True)
    sat = 1.0 + rng.uniform(-0.5, 0.3) * strength
    S = sat * np.eye(3) + (1 - sat) / 3.0 * np.ones((3, 3))
    yel = max(0.0, rng.uniform(-0.2, 0.5)) * strength
    Y = (1 - yel) * np.eye(3) + yel * np.diag([0.86, 0.97, 1.0])
    gam = 1.0 + rng.uniform(-0.3, 0.3) * strength
    x = np.clip(img, 0, 255) / 255.0
    x = np.power(x, gam, dtype=np.float32) * 255.0
    return cv2.transform(x, (Y @ S @ M).astype(np.float32))


def _background(rng: np.random.Generator, h: int, w: int, pool: list[np.ndarray]) -> np.ndarray:
    if pool and rng.random() < 0.7:
        src = pool[int(rng.integers(len(pool)))]
        y = int(rng.integers(0, src.shape[0] - h + 1))
        x = int(rng.integers(0, src.shape[1] - w + 1))
        return src[y:y + h, x:x + w].astype(np.float32)
    bg = np.empty((h, w, 3), np.float32)
    bg[:] = rng.uniform(20, 235, 3)
    return bg


def _augment(art: np.ndarray, rng: np.random.Generator, pool: list[np.ndarray],
             strength: float = 1.0, card: bool = True,
             occluders_p: Sequence[float] | None = None) -> np.ndarray:
    """One simulated crop (CROP_SIZE, uint8) of a card face ``art`` (float32 texture);
    ``occluders_p``: chances of 0-3 occluders (default :data:`OCCLUDERS_P`)."""
    cw, ch = CROP_SIZE
    # camera resolution: the card is L px long in the image, then warped to the crop
    L = float(np.exp(rng.uniform(math.log(45), math.log(220))))
    s = min(1.0, L / ch)
    sw, sh = max(8, int(round(cw * s))), max(12, int(round(ch * s)))
    if card:
        tex = _print_variant(art, rng, strength * rng.uniform(0.3, 1.0))
        th, tw = tex.shape[:2]
        # wear: bend shading ramp and an occasional gloss band
        ang = rng.uniform(0, 2 * math.pi)
        t = (((np.arange(tw, dtype=np.float32) / tw - 0.5) * math.cos(ang))[None, :]
             + ((np.arange(th, dtype=np.float32) / th - 0.5) * math.sin(ang))[:, None])
        shade = 1.0 + rng.uniform(-0.18, 0.18) * t * 2
        if rng.random() < 0.15:
            shade = shade + np.exp(-((t - rng.uniform(-0.4, 0.4)) / rng.uniform(0.05, 0.2)) ** 2
                                   ) * rng.uniform(0.1, 0.45)
        tex = tex * shade[..., None]
        # the card in the crop: its corners where a (slightly wrong) quad puts them
        j = rng.normal(0, 0.012, (4, 2)) * [sw, sh] + rng.normal(0, 0.01, (1, 2)) * [sw, sh]
        dst = np.array([[-0.5, -0.5], [sw - 0.5, -0.5], [sw - 0.5, sh - 0.5],
                        [-0.5, sh - 0.5]], np.float32) + j.astype(np.float32)
        src = np.array([[-0.5, -0.5], [tw - 0.5, -0.5], [tw - 0.5, th - 0.5], [-0.5, th - 0.5]],
                       np.float32)
        Hm = cv2.getPerspectiveTransform(src, dst)
        alpha = _rounded_alpha(th, tw, rng.uniform(0.025, 0.065) * tw).astype(np.float32) / 255.0
        rgba = np.dstack([tex, alpha])
        warped = cv2.warpPerspective(rgba, Hm, (sw, sh), flags=cv2.INTER_AREA if tw > 2 * sw
                                     else cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)
        bg = _background(rng, sh, sw, pool)
        a = warped[..., 3:4]
        img = bg * (1 - a) + warped[..., :3] * a
    else:
        img = cv2.resize(art, (sw, sh), interpolation=cv2.INTER_AREA)
    # pyramid-like occluders or their shadows
    for _ in range(int(rng.choice([0, 1, 2, 3], p=occluders_p or OCCLUDERS_P))):
        n = int(rng.integers(3, 5))
        c = rng.uniform([0, 0], [sw, sh])
        r = rng.uniform(0.12, 0.35) * sw
        a_ = np.sort(rng.uniform(0, 2 * math.pi, n))
        pts = np.round((c + r * np.stack([np.cos(a_), np.sin(a_)], 1)) * 16).astype(np.int32)
        m: np.ndarray = np.zeros((sh, sw), np.float32)
        cv2.fillPoly(m, [pts], 1.0, cv2.LINE_AA, 4)
        if rng.random() < 0.5:   # the solid: a plastic colour, often see-through
            col = rng.uniform(15, 245, 3).astype(np.float32)
            op = rng.choice([1.0, rng.uniform(0.5, 0.8)])
            img = img * (1 - m[..., None] * op) + col * m[..., None] * op
        else:                    # its soft shadow
            m = cv2.GaussianBlur(m, (0, 0), max(0.5, rng.uniform(0.5, 3.0) * s))
            img = img * (1 - rng.uniform(0.2, 0.55) * m[..., None])
    # light: exposure, white balance, gradient
    wb = np.exp(rng.normal(0, 0.1, 3)).astype(np.float32)
    gain = float(np.exp(rng.uniform(math.log(0.35), math.log(1.45))))
    gx = np.linspace(-1, 1, sw, dtype=np.float32)[None, :] * rng.uniform(-0.2, 0.2)
    gy = np.linspace(-1, 1, sh, dtype=np.float32)[:, None] * rng.uniform(-0.2, 0.2)
    img = img * (gain * (1 + gx + gy))[..., None] * wb
    # optics and sensor
    sig = rng.choice([rng.uniform(0.0, 0.6), rng.uniform(0.6, 1.6), rng.uniform(1.6, 2.8)],
                     p=[0.65, 0.25, 0.1])
    if sig > 0.25:
        img = cv2.GaussianBlur(img, (0, 0), sig)
    if rng.random() < 0.12:  # motion blur: up to a fifth of a small card's length
        k = int(rng.integers(3, 14))
        ker: np.ndarray = np.zeros((k, k), np.float32)
        ker[k // 2] = 1.0 / k
        R = cv2.getRotationMatrix2D(((k - 1) / 2, (k - 1) / 2), rng.uniform(0, 180), 1.0)
        ker = cv2.warpAffine(ker, R, (k, k))
        img = cv2.filter2D(img, -1, ker / max(ker.sum(), 1e-6))
    img = img + rng.normal(0, rng.uniform(0.5, 6.0), img.shape).astype(np.float32)
    out: np.ndarray = np.clip(img, 0, 255).astype(np.uint8)
    if rng.random() < 0.6:
        q = int(rng.integers(55, 95))
        ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, q])
        decoded = cv2.imdecode(buf, cv2.IMREAD_COLOR) if ok else None
        if decoded is not None:
            out = decoded
    if (sw, sh) != (cw, ch):
        out = cv2.resize(out, (cw, ch), interpolation=cv2.INTER_LINEAR)
    return out


def _table_pool(rng: np.random.Generator, n: int = 10) -> list[np.ndarray]:
    """Procedural table surfaces at about the scale a crop shows them (backgrounds of card
    augmentations, and the rejection class)."""
    from vision.synth import textures

    pool = []
    for k in range(n):
        kind = textures.SURFACES[k % len(textures.SURFACES)]
        ppm = float(rng.uniform(0.5, 1.4))
        if kind == "newspaper":
            img = textures.newspaper_sheet(rng, 260.0, 260.0, ppm)
            img = cv2.resize(img, (256, 256), interpolation=cv2.INTER_AREA)
        else:
            img = textures.table_surface(rng, kind, 256, 256, ppm)
        pool.append(img)
    return pool


@lru_cache(maxsize=1)
def _procedural_backs(n: int) -> tuple[np.ndarray, ...]:
    """The first ``n`` procedural backs (read-only): the same for every deck and seed, so
    kept for the next enrollment in the process (about 12 MB, and 0.3 s to draw)."""
    from vision.synth import textures

    # seeds apart from anything the renderer derives from a style seed
    backs = tuple(textures.procedural_back(np.random.default_rng([7_000_003, k]))
                  for k in range(n))
    for b in backs:
        b.flags.writeable = False
    return backs


# ---------------------------------------------------------------------------------------------
# enrollment: projection and prototypes


def _principal_axes_few(Xc: np.ndarray, m: int) -> np.ndarray:
    """(D, <= m) float64 orthonormal top-``m`` principal axes of centred ``Xc`` (N, D) with
    fewer samples than features: the same subspace as the covariance's leading eigenvectors,
    from the N x N Gram matrix (N^3, not D^3: a small deck's fit ran seconds in a D x D
    eigendecomposition). Axes beyond the data's rank are left out: the covariance's
    eigenvectors there are arbitrary directions in which no sample, and no class mean, lies."""
    X64 = Xc.astype(np.float64)
    ev, U = np.linalg.eigh(X64 @ X64.T)
    order = np.argsort(ev)[::-1][:m]
    ev, U = ev[order], U[:, order]
    # float64 rounding leaves the null eigenvalues near 1e-13 of the largest
    U = U[:, ev > max(float(ev[0]), 0.0) * 1e-9]
    V = X64.T @ U
    axes: np.ndarray = V / np.linalg.norm(V, axis=0)
    return axes


def _lda(X: np.ndarray, y: np.ndarray, n_pca: int, shrink: float) -> np.ndarray:
    """(D, k) projection: PCA to ``n_pca`` then LDA with a whitened within-class scatter, so
    Euclidean distance in the output is the Mahalanobis distance of the pooled classes."""
    Xc = X - X.mean(axis=0)
    m = min(n_pca, X.shape[1])
    if len(X) < X.shape[1]:
        P = _principal_axes_few(Xc, m)
    else:
        cov = (Xc.T @ Xc) / len(X)
        ev, evec = np.linalg.eigh(cov.astype(np.float64))
        idx = np.argsort(ev)[::-1][:m]
        P = evec[:, idx]
    Z = Xc @ P
    classes = np.unique(y)
    means = np.stack([Z[y == c].mean(axis=0) for c in classes])
    R = Z - means[np.searchsorted(classes, y)]
    Sw = (R.T @ R) / len(Z)
    # shrunk towards the mean variance of all m principal axes, as when the axes the data
    # lacks (variance 0, left out by _principal_axes_few) were kept
    Sw = (1 - shrink) * Sw + shrink * np.trace(Sw) / m * np.eye(len(Sw))
    ew, evw = np.linalg.eigh(Sw)
    Wh = evw / np.sqrt(np.maximum(ew, 1e-9))[None, :]
    Mb = (means - means.mean(axis=0)) @ Wh
    _, sv, vt = np.linalg.svd(Mb, full_matrices=False)
    # (no singular value: samples all alike, no axis kept; a projection to 0 dims as before)
    k = int(min(len(classes) - 1, n_pca, np.sum(sv > 1e-6 * sv[0]) if len(sv) else 0))
    W: np.ndarray = (P @ Wh @ vt[:k].T).astype(np.float32)
    return W


def _kmeans(Z: np.ndarray, k: int, seed: int) -> np.ndarray:
    if len(Z) <= k:
        return Z.copy()
    crit = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 30, 1e-3)
    # k-means++ seeding draws from OpenCV's RNG: keep enrollment seeded (in a C int: the
    # seeds a user may give reach 2**32 - 1)
    cv2.setRNGSeed(seed % 2 ** 31)
    # bestLabels None (OpenCV allocates them), which OpenCV 4's stubs do not allow for (5's do)
    _, _, centers = cv2.kmeans(  # type: ignore[call-overload, unused-ignore]
        Z.astype(np.float32), k, None, crit, 2, cv2.KMEANS_PP_CENTERS)
    return np.asarray(centers, np.float32)


def look_alikes(gallery: Gallery, deck: Deck, ratio: float = LOOK_ALIKE_RATIO
                ) -> list[tuple[str, str]]:
    """Pairs of the deck's cards whose faces the gallery's features can hardly tell apart:
    closer, standardised, than ``ratio`` times the median distance from a card to its
    nearest other card (one image saved under two names, say). The shipped decks' closest
    pairs stand at 0.86 (tarot) and 0.72 (Decktet) of it."""
    if len(deck.ids) < 3:
        return []
    crops = [cv2.resize(deck.image(cid), CROP_SIZE, interpolation=cv2.INTER_AREA)
             for cid in deck.ids]
    z = (features(crops).astype(np.float64) - gallery.mean) / gallery.scale
    # |a - b|^2 = |a|^2 + |b|^2 - 2 a.b: no cards x cards x features array
    sq = (z * z).sum(axis=1)
    dist = np.sqrt(np.maximum(sq[:, None] + sq[None] - 2.0 * (z @ z.T), 0.0))
    np.fill_diagonal(dist, np.inf)
    scale = float(np.median(dist.min(axis=1)))
    return [(deck.ids[i], deck.ids[j]) for i, j in zip(*np.nonzero(dist < ratio * scale))
            if i < j]


def enroll(deck_folder: str | Path | Deck | None = None, *, per_card: int = 40, seed: int = 0,
           protos_per_class: int = 4, back_protos: int = 24, strength: float = 1.0,
           n_pca: int = 320, card_size_mm: tuple[float, float] | None = None,
           progress: Callable[[str, int, int], None] | None = None) -> Gallery:
    """Build a gallery from a deck folder (one image per card, named by id; see
    :func:`vision.synth.deck.load_deck`, whose :class:`DeckError` names a bad folder), or
    from a deck already loaded (:func:`~vision.synth.deck.load_deck` with ``faces`` for a
    folder of photos, :mod:`vision.cards.face`).

    ``per_card`` augmentations per card (each also turned 180 degrees), all drawn from
    ``seed``; the face-down class uses the deck's back image or, without one, procedural
    backs; procedural table textures form a rejection class. ``progress(stage, done, total)``
    hears of each card augmented (stage ``"cards"``) and of the fit starting (``"fit"``, 0, 1).
    """
    from vision.synth.deck import Deck, load_deck

    t0 = time.perf_counter()
    deck = (deck_folder if isinstance(deck_folder, Deck)
            else load_deck(deck_folder, card_size_mm=card_size_mm))
    rng = np.random.default_rng([int(seed), 1])
    pool = _table_pool(np.random.default_rng([int(seed), 2]))
    tex_wh = (CROP_SIZE[0] * 2, CROP_SIZE[1] * 2)

    def texture(img: np.ndarray) -> np.ndarray:
        return cv2.resize(img, tex_wh, interpolation=cv2.INTER_AREA).astype(np.float32)

    crops: list[np.ndarray] = []
    labels: list[tuple[str, bool]] = []
    for i, cid in enumerate(deck.ids):
        art = texture(deck.image(cid))
        for _ in range(per_card):
            c = _augment(art, rng, pool, strength)
            crops += [c, c[::-1, ::-1]]
            labels += [(cid, False), (cid, True)]
        if progress is not None:
            progress("cards", i + 1, len(deck.ids))
    n_back = max(per_card * 3, 120)
    if deck.back_file is not None:
        backs = [texture(deck.image(BACK_ID))]
    else:
        backs = [texture(b) for b in _procedural_backs(n_back)]
    for k in range(n_back):
        c = _augment(backs[k % len(backs)], rng, pool, strength)
        # a back's up is meaningless: one class, both turns
        crops.append(c if k % 2 == 0 else c[::-1, ::-1])
        labels.append((BACK_ID, False))
    for k in range(n_back):
        src = pool[k % len(pool)]
        py = int(rng.integers(0, src.shape[0] - CROP_SIZE[1] + 1))
        px = int(rng.integers(0, src.shape[1] - CROP_SIZE[0] + 1))
        patch = src[py:py + CROP_SIZE[1], px:px + CROP_SIZE[0]].astype(np.float32)
        crops.append(_augment(patch, rng, [], strength, card=False))
        labels.append((NONE_ID, False))
    t1 = time.perf_counter()
    if progress is not None:
        progress("fit", 0, 1)
    F = features(crops)
    class_keys = sorted(set(labels))
    key_index = {k: i for i, k in enumerate(class_keys)}
    y = np.array([key_index[lab] for lab in labels])
    mean = F.mean(axis=0)
    scale = F.std(axis=0) + 1e-3
    X = (F - mean) / scale
    proj = _lda(X, y, min(n_pca, X.shape[1]), shrink=0.05)
    Z = X @ proj
    protos, pclass = [], []
    for i, key in enumerate(class_keys):
        k = back_protos if key[0] in (BACK_ID, NONE_ID) else protos_per_class
        cz = _kmeans(Z[y == i], k, seed + i)
        protos.append(cz)
        pclass += [i] * len(cz)
    P = np.concatenate(protos).astype(np.float32)
    gal = Gallery(deck_name=deck.name, card_size_mm=deck.card_size_mm,
                  class_ids=[k[0] for k in class_keys],
                  class_rot=np.array([k[1] for k in class_keys], bool),
                  mean=mean, scale=scale, proj=proj, protos=P,
                  proto_class=np.array(pclass, np.int64),
                  meta={"deck_folder": str(Path(deck.folder).resolve()), "deck_kind": deck.kind,
                        # when: the latest of a folder's galleries is the one meant, whatever
                        # a copy did to the file's own time
                        "enrolled_at": round(time.time(), 3),
                        "per_card": per_card, "seed": seed,
                        "back": "deck image" if deck.back_file is not None else "procedural",
                        "half_turn_symmetric": sorted(half_turn_symmetric_ids(deck)),
                        **back_top_meta(deck),
                        "credit": _credit(deck.kind)})
    _calibrate(gal, deck, rng, pool, backs, strength)
    log.info("enrolled %s: %d classes, %d crops, %d prototypes of %d dims; augment %.1f s, "
             "fit %.1f s", deck.name, len(class_keys), len(crops), len(P), proj.shape[1],
             t1 - t0, time.perf_counter() - t1)
    return gal


def _credit(kind: str) -> str:
    if kind == "tarot":
        return ("Rider-Waite-Smith scans of the 1971 U.S. Games printing (data.totl.net via "
                "metabismuth/tarot-json)")
    if kind == "decktet":
        return "Decktet art by P. D. Magnus, CC BY-NC-SA 3.0 (mcdemarco/adaman)"
    return "user deck"


def _calibrate(gal: Gallery, deck: Any, rng: np.random.Generator, pool: list[np.ndarray],
               backs: list[np.ndarray], strength: float) -> None:
    """Set the rejection thresholds from fresh augmentations (not used for the prototypes):
    ``max_distance`` well beyond what true cards reach; ``min_margin`` small, since a wrong
    card's margin is what the threshold must cut and true margins are large."""
    tex_wh = (CROP_SIZE[0] * 2, CROP_SIZE[1] * 2)
    ids = list(deck.ids)
    crops = []
    for k in range(min(len(ids), 60)):
        cid = ids[int(rng.integers(len(ids)))]
        art = cv2.resize(deck.image(cid), tex_wh, interpolation=cv2.INTER_AREA).astype(np.float32)
        crops.append(_augment(art, rng, pool, strength))
    d = gal._class_distances(gal.embed(crops)).min(axis=1)
    gal.max_distance = float(np.percentile(d, 99) * 2.0)
    gal.min_margin = 0.5
