"""Player colours: a per-session colour profile from pyramids the players show the camera.

The ten spec colours work without it: the finder normalises every image by the white paper
of the mat's markers (:mod:`vision.pyramids.topdown`), which undoes the colour of the light,
and its classifier knows the spec colours. A profile is for plastic that does not look like
the renders (a pinkish red, a dark green set, a lamp whose colour differs across the table):
``companion calibrate-colors`` has each player put one pyramid of their colour in the
calibration zone (the mat's zone named ``colors`` when the mat file has one, else the
middle of the mat, :func:`calibration_zone`), in the order the players' colours are named,
west to east; this module finds them, samples their plastic and saves, per colour name:

* the Lab mean and covariance of its pixels (after the paper normalisation), which decides
  the colour of any pyramid whose middle is close to one of them (Mahalanobis distance,
  :data:`MAX_DISTANCE`); others keep the classifier's colour;
* a histogram over the colour table's Lab bins, added to that colour's part of the table
  (:meth:`ColorProfile.adapt`) so that its pyramids become candidates at all.

The file is JSON (:func:`default_profile_path`, or ``--out``);
``PyramidFinder(mat, colors=path_or_profile)`` uses it.
"""

from __future__ import annotations

import functools
import json
import logging
import math
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

import cv2
import numpy as np

from calibration.mat import Mat
from companion.core.errors import CompanionError
from companion.core.files import (JsonTextError, given_path, read_json, refusal_words,
                                  write_text_atomic, wrong_kind)
from vision.pyramids.colors import BINS, COLORS, ColorModel, bin_index

if TYPE_CHECKING:
    from calibration.table import Calibration
    from vision.pyramids.find import Look, PyramidFind, PyramidFinder

log = logging.getLogger(__name__)

VERSION = 1
APP_DIR = "arcana-companion"
#: a pyramid's middle within this Mahalanobis distance of a profile colour takes its name
MAX_DISTANCE = 4.0
#: floor of each Lab channel's standard deviation (8-bit Lab units): a profile from a few
#: hundred pixels under one light must still accept the same plastic under a slightly
#: different one
MIN_SD = 6.0
#: the profile's histogram is added with this share of the colour's training mass
BOOST = 0.5
#: and the global background likelihood of its bins is cut by this factor
BG_CUT = 0.2
#: radius (mm) around a pyramid's middle that is compared with the profile
PROBE_MM = 4.0
#: A thing in the calibration zone named for a hue, that the colour classifier calls no
#: pyramid and where the heat map stays under this within SHOWN_HEAT_MM of its middle, is
#: not a pyramid. On 12 dev renders with card art in the zone (seed 980500) such things had
#: 0.013-0.142 (the heat at their very middle 0.001-0.045, the pyramids found there
#: 0.71-0.87); on a tester's 49 renders of pyramids alone, where the heat at the middle of
#: 42 was under 0.2 (the blob takes in the shadow and the tilted body: 12.6 mm off its base
#: centre, median), every hue had 0.2 or more. White, clear and black ones are not judged
#: so (only the finder's HUES are): on a light table the heat map can miss them (0.03-0.14
#: there).
NOT_SHOWN_HEAT = 0.1
SHOWN_HEAT_MM = 12.0
#: the table around a pixel, that it is compared with to find the shown pyramids: a median
#: over a square this wide (mm), over twice a lying pyramid's length
BACKGROUND_MM = 60.0
#: the heat map's peaks of at least this, that no blob was found near (within
#: HOT_MISSED_APART_MM), are pyramids too: the pixels within HOT_MISSED_MM of it that
#: differ from the table at all
HOT_MISSED = 0.5
HOT_MISSED_APART_MM = 20.0
HOT_MISSED_MM = 14.0
#: more things found in the zone than colours named: those the heat map stays under this
#: near are dropped, where that leaves as many as named (the pattern of a cloth, print and
#: wood grain: 350 of 355 such things on 116 dim renders had under 0.25, 11 of 495 pyramids;
#: a newspaper's black print named black had 0.07)
TEXTURE_HEAT = 0.25
PIECES_MM = 25.0
#: a find names the shown pyramid nearest it only where any find of another colour near
#: that pyramid (within PIECES_MM) is at least this many times as far from it
CLEARLY_FARTHER = 2.0


class ProfileError(CompanionError, ValueError):
    """A colour profile file that is missing or bad, or a calibration image that does not
    show what the calibration step needs."""


def default_profile_path() -> Path:
    """``$XDG_CONFIG_HOME/arcana-companion/colors.json`` (default ``~/.config/...``)."""
    base = os.environ.get("XDG_CONFIG_HOME")
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".config"
    return root / APP_DIR / "colors.json"


def calibration_zone(mat: Mat) -> tuple[float, float, float, float]:
    """Where players show their pyramids: the mat's zone ``colors``, else a 400 x 240 mm
    rectangle in the middle of the mat."""
    if "colors" in mat.zones:
        z = mat.zones["colors"]
        return float(z[0]), float(z[1]), float(z[2]), float(z[3])
    cx, cy = mat.width_mm / 2, mat.height_mm / 2
    w, h = min(400.0, mat.width_mm - 2 * mat.marker_size_mm), min(240.0, mat.height_mm / 2)
    return cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2


@dataclass(frozen=True)
class ColorSample:
    """One named colour as the camera saw it (normalised by the marker paper)."""

    name: str
    lab_mean: tuple[float, float, float]
    lab_cov: tuple[tuple[float, float, float], ...]
    hist: dict[int, float]        # colour-table bin -> share of the pixels
    pixels: int

    def distance(self, lab: np.ndarray) -> float:
        cov = np.array(self.lab_cov, np.float64) + np.eye(3) * MIN_SD ** 2
        d = np.asarray(lab, np.float64) - np.array(self.lab_mean)
        return float(math.sqrt(max(0.0, float(d @ np.linalg.solve(cov, d)))))


@dataclass(frozen=True)
class ColorProfile:
    colors: tuple[ColorSample, ...]
    source: str = ""

    def names(self) -> list[str]:
        return [c.name for c in self.colors]

    # -- runtime ----------------------------------------------------------------------------

    def adapt(self, model: ColorModel) -> ColorModel:
        """A colour table that also knows this profile's plastic."""
        counts = np.array(model.counts, np.float64, copy=True)
        for c in self.colors:
            if c.name not in COLORS or not c.hist:
                continue
            ci = COLORS.index(c.name)
            mass = max(float(counts[:, ci].sum()), 1.0)
            bins = np.fromiter(c.hist.keys(), np.int64)
            share = np.fromiter(c.hist.values(), np.float64)
            counts[bins, ci] += BOOST * mass * share / share.sum()
            counts[bins, len(COLORS)] *= BG_CUT
        return ColorModel(counts, bg_weight=model.bg_weight, image_share=model.image_share,
                          class_gain=model.class_gain)

    def classify(self, look: Look, center_mm: np.ndarray) -> str | None:
        """The profile colour nearest to the plastic at ``center_mm``, when near enough."""
        from vision.pyramids.find import VIEW_PPM

        lab = _probe_lab(look.view, center_mm, VIEW_PPM)
        if lab is None:
            return None
        best = min(self.colors, key=lambda c: c.distance(lab))
        return best.name if best.distance(lab) <= MAX_DISTANCE else None

    # -- files ------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        return {"version": VERSION, "source": self.source, "colors": {
            c.name: {"lab_mean": [round(v, 2) for v in c.lab_mean],
                     "lab_cov": [[round(v, 2) for v in row] for row in c.lab_cov],
                     "pixels": c.pixels,
                     "hist": {str(k): round(v, 5) for k, v in sorted(c.hist.items())}}
            for c in self.colors}}

    @classmethod
    def from_dict(cls, data: Any, source: str = "colour profile") -> ColorProfile:
        if not isinstance(data, dict) or not isinstance(data.get("colors"), dict):
            raise ProfileError(f"{source}: not a colour profile (no 'colors' object)")
        if data.get("version") != VERSION:
            raise ProfileError(f"{source}: version {data.get('version')!r}, expected {VERSION}")
        out = []
        for name, d in data["colors"].items():
            if name not in COLORS:
                raise ProfileError(f"{source}: unknown colour {name!r} "
                                   f"(expected one of {', '.join(COLORS)})")
            if not isinstance(d, dict) or not isinstance(d.get("hist", {}), dict):
                raise ProfileError(f"{source}: colour {name!r} is malformed (expected an "
                                   "object with lab_mean, lab_cov and a hist object)")
            try:
                mean = tuple(float(v) for v in d["lab_mean"])
                cov = tuple(tuple(float(v) for v in row) for row in d["lab_cov"])
                hist = {int(k): float(v) for k, v in d.get("hist", {}).items()}
                pixels = int(d.get("pixels", 0))
            except KeyError as exc:
                # (a KeyError's words are the key alone: "is malformed ('lab_mean')")
                raise ProfileError(f"{source}: colour {name!r} is malformed (no {exc} field)"
                                   ) from None
            except (TypeError, ValueError, OverflowError) as exc:
                raise ProfileError(f"{source}: colour {name!r} is malformed ({exc})") from None
            if len(mean) != 3 or len(cov) != 3 or any(len(r) != 3 for r in cov):
                raise ProfileError(f"{source}: colour {name!r} needs a 3-value lab_mean and a "
                                   "3x3 lab_cov")
            C = np.array(cov, np.float64)
            if not (np.isfinite(mean).all() and np.isfinite(C).all()
                    and np.isfinite(list(hist.values())).all()):
                raise ProfileError(f"{source}: colour {name!r} holds a number that is not "
                                   "finite (NaN or infinite)")
            # a spread of colours: symmetric, no direction of negative spread (a hand edit
            # that breaks this made every pyramid read as that colour), within the file's
            # rounding to hundredths (a near-uniform patch, an overexposed white, saves a
            # spread a hair below zero)
            if not np.allclose(C, C.T, atol=0.011) or float(np.linalg.eigvalsh(C).min()) < -0.05:
                raise ProfileError(f"{source}: colour {name!r} has a lab_cov that is not a "
                                   "covariance (symmetric, with no negative spread)")
            if any(not 0 <= k < BINS ** 3 for k in hist):
                raise ProfileError(f"{source}: colour {name!r} has histogram bins out of range")
            out.append(ColorSample(name, mean, cov, hist, pixels))  # type: ignore[arg-type]
        if not out:
            raise ProfileError(f"{source}: the profile names no colour")
        return cls(tuple(out), str(data.get("source", "")))

    def save(self, path: Path) -> Path:
        path = Path(path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_text_atomic(path, json.dumps(self.to_dict(), indent=1) + "\n")
        except OSError as exc:
            raise ProfileError(f"cannot write colour profile {str(path)!r}: "
                               f"{refusal_words(exc)}") from None
        return path


def load_profile(path: Path | str) -> ColorProfile:
    """The colour profile in ``path``; the saved one that cannot be read says how to make
    it again (it is used without being named)."""
    path = given_path(path)
    try:
        try:
            data = read_json(path)
        except OSError as exc:
            raise ProfileError(f"colour profile {path}: cannot be read "
                               f"({exc.strerror or exc})") from None
        except JsonTextError as exc:
            raise ProfileError(f"colour profile {path}: {exc}") from None
        return ColorProfile.from_dict(data, str(path))
    except ProfileError as exc:
        if path.is_file() and (other := wrong_kind(path, "a colour profile")) is not None:
            raise ProfileError(f"colour profile {path} {other}") from None
        if not path.is_file() or path.expanduser() != default_profile_path():
            raise
        raise ProfileError(f"{exc}; it is the saved colour profile: `companion "
                           "calibrate-colors` replaces it, and --no-colors reads without it"
                           ) from None


def _probe_lab(view: np.ndarray, center_mm: np.ndarray, ppm: float) -> np.ndarray | None:
    r = max(1, int(round(PROBE_MM * ppm)))
    u, v = int(center_mm[0] * ppm), int(center_mm[1] * ppm)
    h, w = view.shape[:2]
    if not (r <= u < w - r and r <= v < h - r):
        return None
    patch = view[v - r:v + r + 1, u - r:u + r + 1]
    lab = cv2.cvtColor(patch, cv2.COLOR_BGR2LAB).reshape(-1, 3).astype(np.float64)
    out: np.ndarray = np.median(lab, axis=0)
    return out


# -- the calibration step ---------------------------------------------------------------------

@dataclass(frozen=True)
class Shown:
    """One pyramid found in the calibration zone."""

    center_mm: tuple[float, float]
    pixels_bgr: np.ndarray        # its plastic's pixels (normalised view)
    guess: str                    # what the classifier calls it
    heat: float | None = None     # the heat map near it (None: the finder has none)
    #: the colour the pyramid finder reads there (its closer looks and white-or-clear
    #: reader), None where it found no pyramid, or was not asked (every pyramid's ``guess``
    #: its name, :func:`measure_profile`): fewer misreads than ``guess`` (30 against 91
    #: of 1060 pyramids on dim renders)
    read: str | None = None


def find_shown(finder: PyramidFinder, image: np.ndarray, calib: Calibration,
               zone: tuple[float, float, float, float],
               looked: Callable[[], Look] | None = None) -> list[Shown]:
    """The pyramids standing in ``zone`` (table mm), west to east.

    The zone is expected to hold nothing but the shown pyramids on the bare table or mat,
    so a pyramid is whatever differs from the table around it (or where the heat map is
    sure of one, :func:`_hot_missed`); the shape
    classifier then gives its outline, and the pixels inside that outline (a millimetre in)
    and different from the table are its plastic. Colour plays no part in finding them, so
    an unusual colour is found as well as a spec one. ``looked``: the finder's look at
    ``image`` where the caller keeps it (:meth:`PyramidFinder.look`)."""
    from vision.pyramids.find import VIEW_PPM

    look = looked() if looked is not None else finder.look(image, calib)
    heat = None if finder.heat is None else finder.heat(look.view, VIEW_PPM, look.blurred)
    ppm = VIEW_PPM
    x0, y0 = max(0, int(zone[0] * ppm)), max(0, int(zone[1] * ppm))
    x1 = min(look.view.shape[1], int(zone[2] * ppm))
    y1 = min(look.view.shape[0], int(zone[3] * ppm))
    if x1 - x0 < 20 or y1 - y0 < 20:
        raise ProfileError(f"calibration zone {list(zone)} is not on the mat")
    crop = look.view[y0:y1, x0:x1]
    lab8 = cv2.cvtColor(cv2.GaussianBlur(crop, (3, 3), 0), cv2.COLOR_BGR2LAB)
    # each pixel against the table around it (a median over BACKGROUND_MM), not the zone's
    # one typical colour: a newspaper or a cloth's edge in the zone, or light falling off
    # across it, made everything else differ from "the table" and raised the bar over the
    # pyramids (none found on a newspaper)
    k = max(3, int(BACKGROUND_MM * ppm)) | 1
    bg = cv2.medianBlur(cv2.copyMakeBorder(lab8, k, k, k, k, cv2.BORDER_REFLECT), k)[k:-k, k:-k]
    diff = np.linalg.norm(lab8.astype(np.float32) - bg.astype(np.float32), axis=2)
    typical = float(np.median(diff))
    mad = float(np.median(np.abs(diff - typical)))
    fg = (diff > max(14.0, typical + 6 * mad)).astype(np.uint8)
    fg = cv2.morphologyEx(fg, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    fg = cv2.morphologyEx(fg, cv2.MORPH_CLOSE, np.ones((5, 5), np.uint8))
    n, comp, stats, cents = cv2.connectedComponentsWithStats(fg, connectivity=8)
    blobs: list[tuple[np.ndarray, np.ndarray]] = []
    for i in range(1, n):
        area = stats[i, 4] / ppm ** 2
        if not 80.0 <= area <= 4000.0:
            continue
        c = np.array([(x0 + cents[i][0] + 0.5) / ppm, (y0 + cents[i][1] + 0.5) / ppm])
        blobs.append((c, comp == i))
    if heat is not None:
        blobs += _hot_missed(heat, diff, typical, mad, blobs, (x0, y0), ppm)
    found: list[Shown] = []
    for c, mask in blobs:
        shown = _shown_at(finder, image, look, crop, mask, c, (x0, y0), heat)
        if shown is not None:
            found.append(shown)
    found.sort(key=lambda s: s.center_mm[0])
    return found


def _hot_missed(heat: Any, diff: np.ndarray, typical: float, mad: float,
                blobs: list[tuple[np.ndarray, np.ndarray]], origin: tuple[int, int],
                ppm: float) -> list[tuple[np.ndarray, np.ndarray]]:
    """Where the heat map is sure of a pyramid (:data:`HOT_MISSED`) that differs from the
    table too little to stand out from a busy one (print, a patterned cloth, dark wood in
    dim light): the pixels within :data:`HOT_MISSED_MM` of its peak that differ from the
    table at all (``diff``, with its median ``typical`` and median absolute deviation
    ``mad``, as :func:`find_shown` has them), as one more blob."""
    x0, y0 = origin
    h, w = diff.shape
    pts, _ = heat.peaks(HOT_MISSED)
    low = diff > max(10.0, typical + 2 * mad)
    out: list[tuple[np.ndarray, np.ndarray]] = []
    for p in pts:
        u, v = p[0] * ppm - x0, p[1] * ppm - y0
        if not (0 <= u < w and 0 <= v < h):
            continue
        if any(float(np.hypot(*(p - c))) < HOT_MISSED_APART_MM for c, _ in blobs + out):
            continue
        disk = np.zeros((h, w), np.uint8)
        cv2.circle(disk, (int(round(u)), int(round(v))), int(round(HOT_MISSED_MM * ppm)), 1, -1)
        mask = disk.astype(bool) & low
        if mask.sum() / ppm ** 2 < 80.0:
            continue
        vs, us = np.nonzero(mask)
        c = np.array([(x0 + us.mean() + 0.5) / ppm, (y0 + vs.mean() + 0.5) / ppm])
        out.append((c, mask))
    return out


def _shown_at(finder: PyramidFinder, image: np.ndarray, look: Look, crop: np.ndarray,
              blob: np.ndarray, c: np.ndarray, origin: tuple[int, int],
              heat: Any) -> Shown | None:
    """The pyramid whose blob (a mask over ``crop``) has its middle at ``c`` (mm): the shape
    classifier's outline there, a millimetre in, within the blob, is its plastic."""
    from vision.pyramids.classifier import SECTOR_DEG, patch_up_deg
    from vision.pyramids.find import VIEW_PPM
    from vision.pyramids.geometry import footprint_mm

    ppm = VIEW_PPM
    x0, y0 = origin
    patch = look.patches(image, c[None])
    pw = finder.what.probs(patch)[0]
    ps = finder.how.probs(patch)[0]
    names = finder.how.names
    k = int(np.argmax(ps))
    pips, pose = int(names[k][0]), names[k][1:]
    upright = pose == "U"
    ang = 0.0 if upright else float(patch_up_deg(c[None], look.camera[:2])[0]
                                     + int(pose[1:]) * SECTOR_DEG)
    # the silhouette's centroid on the blob's, then its inside, 1 mm in, as plastic
    fp = footprint_mm(pips, upright, ang, c, look.camera)
    hull = cv2.convexHull(fp.astype(np.float32)).reshape(-1, 2)
    m = cv2.moments(hull)
    if m["m00"] > 0:
        hull = hull + (c - np.array([m["m10"], m["m01"]]) / m["m00"])
    inside = np.zeros(blob.shape, np.uint8)
    poly = ((hull * ppm - 0.5 - np.array([x0, y0])) * 16).round().astype(np.int32)
    cv2.fillConvexPoly(inside, poly, 1, cv2.LINE_8, 4)
    inside = cv2.erode(inside, np.ones((3, 3), np.uint8)) & blob.astype(np.uint8)
    px = crop[inside.astype(bool)]
    if len(px) < 30:
        return None
    guess = finder.what.names[int(np.argmax(pw))]
    return Shown((float(c[0]), float(c[1])), px, guess,
                 None if heat is None else _heat_near(heat, c))


def _heat_near(heat: Any, center_mm: np.ndarray) -> float:
    """The heat map's largest value within :data:`SHOWN_HEAT_MM` of ``center_mm``."""
    step = np.arange(-SHOWN_HEAT_MM, SHOWN_HEAT_MM + 0.1, 2.0)
    dx, dy = np.meshgrid(step, step)
    near = dx ** 2 + dy ** 2 <= SHOWN_HEAT_MM ** 2
    pts = np.stack([center_mm[0] + dx[near], center_mm[1] + dy[near]], axis=1)
    return float(heat.at(pts).max())


def sample_of(name: str, pixels_bgr: np.ndarray) -> ColorSample:
    lab = cv2.cvtColor(pixels_bgr.reshape(-1, 1, 3), cv2.COLOR_BGR2LAB).reshape(-1, 3)
    labf = lab.astype(np.float64)
    idx = bin_index(pixels_bgr.reshape(-1, 1, 3)).ravel()
    counts = np.bincount(idx, minlength=BINS ** 3)
    nz = np.flatnonzero(counts)
    hist = {int(k): float(counts[k] / counts.sum()) for k in nz}
    cov = np.cov(labf.T) if len(labf) > 3 else np.zeros((3, 3))
    m = labf.mean(axis=0)
    rows = tuple((float(r[0]), float(r[1]), float(r[2])) for r in cov)
    return ColorSample(name, (float(m[0]), float(m[1]), float(m[2])), rows, hist, len(labf))


def _texture_dropped(shown: list[Shown], count: int) -> list[Shown]:
    """``shown`` without what the heat map is cold near (under :data:`TEXTURE_HEAT`: a
    cloth's pattern, print, the grain of wood), where more than ``count`` things were found
    and that leaves ``count``; else ``shown`` as found. With no more than ``count`` found
    nothing is dropped: a lone thing that is no pyramid, named as a hue, is refused as such
    (card art in the zone)."""
    if len(shown) <= count:
        return shown
    keep = [s for s in shown if s.heat is None or s.heat >= TEXTURE_HEAT]
    if len(keep) > count:
        # pieces of one pyramid (a clear one, the table seen through it, stands out from the
        # table around it in pieces): of two within PIECES_MM, the one the colour classifier
        # names, else the larger, is kept
        def rank(s: Shown) -> tuple[bool, int]:
            return s.guess != "none", len(s.pixels_bgr)

        keep = [s for s in keep if not any(
            t is not s and rank(t) > rank(s) and math.dist(s.center_mm, t.center_mm) < PIECES_MM
            for t in keep)]
    return keep if len(keep) == count else shown


def _zone_finds(finder: PyramidFinder, image: np.ndarray, calib: Calibration,
                zone: tuple[float, float, float, float]) -> list[PyramidFind]:
    """The pyramid finder's finds that stand in ``zone``."""
    return [f for f in finder.find(image, calib)
            if zone[0] <= f.base_center_mm[0] <= zone[2]
            and zone[1] <= f.base_center_mm[1] <= zone[3]]


def _read_by(shown: Shown, finds: list[PyramidFind], among: Sequence[Shown] = ()) -> Shown:
    """``shown`` with the colour of the find nearest it within :data:`PIECES_MM`, where
    that find is clearly its own; else with none (its own look judges it), said in the log.
    Not its own: a find of another colour within :data:`PIECES_MM` that is less than
    :data:`CLEARLY_FARTHER` times as far as the nearest (on a crowded zone either could be
    a neighbour's), or a nearest find that is nearer another of ``among`` (the other shown
    pyramids: the finder missed this one and found its neighbour)."""
    def off(f: PyramidFind) -> float:
        return math.dist(shown.center_mm, f.base_center_mm)

    near = sorted((f for f in finds if off(f) < PIECES_MM), key=off)
    if not near:
        return replace(shown, read=None)
    mine, where = near[0], f"({shown.center_mm[0]:.0f}, {shown.center_mm[1]:.0f}) mm"
    rival = next((f for f in near[1:] if f.color != mine.color
                  and off(f) < CLEARLY_FARTHER * off(mine)), None)
    if rival is not None:
        log.warning("the pyramid at %s has finds of %s and %s %.0f and %.0f mm off: it is "
                    "judged by its own look (%s)", where, mine.color, rival.color, off(mine),
                    off(rival), shown.guess)
        return replace(shown, read=None)
    if any(s is not shown and math.dist(s.center_mm, mine.base_center_mm) < off(mine)
           for s in among):
        log.warning("the find nearest the pyramid at %s (%s, %.0f mm off) is nearer another "
                    "pyramid shown: it is judged by its own look (%s)", where, mine.color,
                    off(mine), shown.guess)
        return replace(shown, read=None)
    return replace(shown, read=mine.color)


def _finds_with(looked: Callable[[], Look], finder: PyramidFinder, image: np.ndarray,
                finds: list[PyramidFind], found: list[Shown],
                count: int) -> list[Shown] | None:
    """The shown pyramids as the pyramid finder finds them (``finds``), with each of
    ``found`` no find is near (within :data:`PIECES_MM`) that the heat map is warm near
    (:data:`TEXTURE_HEAT`), where that makes ``count``; else None. A find near one of
    ``found`` is that one (its plastic as :func:`find_shown` cut it); one alone is sampled
    inside the ground it stands on (:func:`_shown_found`), in the finder's look that
    ``looked`` gives (the one :func:`find_shown` searched). For a busy table (print, a
    patterned cloth), where what differs from the table is no guide: the finder reads
    outline and shading too, and finds white and clear plastic that the table's print
    hides."""
    if not finds or len(finds) > count:
        return None

    def near(s: Shown, f: PyramidFind) -> float:
        return math.dist(s.center_mm, f.base_center_mm)

    out = [s for s in found if s.heat is not None and s.heat >= TEXTURE_HEAT
           and all(near(s, f) >= PIECES_MM for f in finds)]
    if len(finds) + len(out) != count:
        return None
    for f in finds:
        mine = [s for s in found if near(s, f) < PIECES_MM]
        if mine:
            one = min(mine, key=lambda s: near(s, f))
            if any(s is one for s in out):
                return None             # (one thing taken for two finds: the count is off)
            out.append(one)
            continue
        shown = _shown_found(finder, image, looked(), f)
        if shown is None:
            return None
        out.append(shown)
    return sorted(out, key=lambda s: s.center_mm[0])


def _shown_found(finder: PyramidFinder, image: np.ndarray, look: Look,
                 f: PyramidFind) -> Shown | None:
    """The pyramid the finder found as ``f``: the ground it stands on, a millimetre in (no
    camera sees past the pyramid to it), is its plastic."""
    from vision.pyramids.find import VIEW_PPM
    from vision.pyramids.geometry import ground_footprint_mm

    ppm = VIEW_PPM
    c = np.array(f.base_center_mm, np.float64)
    ground = ground_footprint_mm(f.pips, f.upright, f.pointing_deg, c)
    inside = np.zeros(look.view.shape[:2], np.uint8)
    poly = ((ground * ppm - 0.5) * 16).round().astype(np.int32)
    cv2.fillConvexPoly(inside, poly, 1, cv2.LINE_8, 4)
    px = look.view[cv2.erode(inside, np.ones((3, 3), np.uint8)).astype(bool)]
    if len(px) < 30:
        return None
    pw = finder.what.probs(look.patches(image, c[None]))[0]
    return Shown((float(c[0]), float(c[1])), px, finder.what.names[int(np.argmax(pw))],
                 None)


def measure_profile(finder: PyramidFinder, image: np.ndarray, calib: Calibration,
                    names: list[str], zone: tuple[float, float, float, float] | None = None,
                    source: str = "") -> tuple[ColorProfile, list[Shown]]:
    """The profile of the pyramids shown in the calibration zone, named west to east."""
    for n in names:
        if n not in COLORS:
            raise ProfileError(f"unknown colour {n!r}: expected one of {', '.join(COLORS)}")
    if len(set(names)) != len(names):
        raise ProfileError(f"a colour is named twice in {', '.join(names)}")
    if not calib.calibrated:
        raise ProfileError(f"{source or 'image'}: the mat's markers are not in sight "
                           f"({calib.reason})")
    zone = zone or calibration_zone(finder.mat)
    # (the finder's look at the picture is made once: the zone's search and the finds' own
    # samples are cut from the same view)
    looked = functools.cache(functools.partial(finder.look, image, calib))
    found = find_shown(finder, image, calib, zone, looked)
    shown = _texture_dropped(found, len(names))
    finds: list[PyramidFind] | None = None
    if len(shown) != len(names):
        finds = _zone_finds(finder, image, calib, zone)
        shown = _finds_with(looked, finder, image, finds, found, len(names)) or shown
    if len(shown) != len(names):
        # (the classifier's "none" is no pyramid at all: "none-looking" told the user nothing)
        where = ", ".join(f"{'not pyramid' if s.guess == 'none' else s.guess}-looking at "
                          f"({s.center_mm[0]:.0f}, {s.center_mm[1]:.0f}) mm"
                          for s in shown) or "none"
        raise ProfileError(
            f"{source or 'image'}: found {len(shown)} pyramid(s) in the calibration zone "
            f"{[round(v) for v in zone]} mm ({where}), expected {len(names)} "
            f"({', '.join(names)}): put one pyramid per colour there, apart, west to east in "
            "the order named, and nothing else")
    from vision.pyramids.find import HUES

    for n, s in zip(names, shown):
        if (s.guess == "none" and n in HUES and s.heat is not None
                and s.heat < NOT_SHOWN_HEAT):
            # card art or a shadow in the zone, counted in place of a pyramid not there:
            # learned, it would name that colour for every game after this
            raise ProfileError(
                f"{source or 'image'}: what is taken for the {n} pyramid, at "
                f"({s.center_mm[0]:.0f}, {s.center_mm[1]:.0f}) mm, does not look like a "
                "pyramid (card art, a shadow, a hand?): clear the calibration zone "
                f"{[round(v) for v in zone]} mm of everything but the pyramids, or give "
                "--zone")
    samples = tuple(sample_of(n, s.pixels_bgr) for n, s in zip(names, shown))
    if finds is None and all(s.guess == n for n, s in zip(names, shown)):
        # each looks its name at first sight: the pyramid finder (0.17 s) is not asked what
        # it reads there. On dim renders (seeds 700-729 and 800-829, three exposures) it ran
        # on 110 of 180 pictures instead of all; the correctly named pyramids refused the
        # same (2 of 1092), and of each pyramid named every other colour one fewer was
        # refused (4394 of 9828: one named what its first sight misread it as)
        return ColorProfile(samples, source), shown
    if finds is None:
        finds = _zone_finds(finder, image, calib, zone)
    return ColorProfile(samples, source), [_read_by(s, finds, shown) for s in shown]
