"""Pyramid finder: colour-table and heat-map candidates, two small patch classifiers, exact
geometry.

1. **Top-down view** (:mod:`vision.pyramids.topdown`): the table plane at
   :data:`VIEW_PPM` px/mm, read from the camera image through one cached map (lens and
   homography at once), its colours normalised by the white paper around the mat's markers.
2. **Candidates** (:mod:`vision.pyramids.proposals`): the Lab colour table marks pixels that
   look like pyramid plastic; each blob, each colour within a blob, and each distance peak of
   a large blob is a candidate. Tuned for recall: most candidates on card art are not
   pyramids. The heat map (:mod:`vision.pyramids.heat`, ``pyramids-heat.int8.onnx``) over the
   whole view adds its peaks where the colour table proposed nothing (white and clear
   plastic, which has no colour of its own; a hue there only where both networks are sure,
   :data:`HEAT_HUE_MAX_NONE`: light that shifts its plastic out of the colour table), and
   candidates where it is cold are not read (:data:`COLD`).
3. **What** (:mod:`vision.pyramids.classifier`, ``pyramids-color.onnx``): a patch around each
   candidate, turned so that "up" is away from the camera's nadir, is ``none`` or one of the
   ten colours. This is what tells a pyramid from a yellow patch of card art: it sees
   outline, faces of different brightness, ridges and the shadow, not colour alone.
   The doubtful ones (read as white, clear or black, or proposed by the heat map alone:
   :func:`vision.pyramids.verify.doubtful`) get a second opinion
   (:mod:`vision.pyramids.verify`, ``pyramids-verify.onnx``), a small network trained on
   exactly such candidates that sees a closer patch, the colour classifier's answer and the
   heat: its p(pyramid) decides them (:data:`VERIFY_MIN`; on a busy table, one where many
   candidates are surely pyramids, :data:`BUSY_VERIFY_MIN`) in place of the thresholds of 6.
   The colour of a candidate kept is read again from a closer patch
   (``pyramids-color-read.onnx``, :data:`COLOR_READ_WEIGHT`), and white against clear once
   more (``pyramids-white-clear.onnx``, :data:`WHITE_CLEAR_WEIGHT`).
   It is asked about the others too: a candidate the colour classifier turned away is
   taken where it is very sure (:data:`VERIFY_RECALL_MIN`), a hue the colour classifier
   took is dropped as card art where it leans that way (:data:`VERIFY_HUE_MIN`),
   and a hue short of its silhouette in 5 is kept where it is all but certain
   (:data:`HUE_IOU_TRUST`; with none of the heat map's backing, :data:`HUE_CERTAIN`).
4. **How** (``pyramids-shape.onnx``), on accepted candidates: pips, and upright or lying
   with the apex's direction in 30-degree sectors, read back into the table frame (each
   patch read as cut and mirrored, :data:`SHAPE_MIRRORED`); the size reader
   (``pyramids-size.onnx``) looks at a closer patch and weighs in on pips and upright or
   lying (:data:`SIZE_READ_COLORS`, :data:`SIZE_READ_WEIGHT`), and the pointing reader
   (``pyramids-point.onnx``, made for clear plastic) on where a lying pyramid's apex points
   (:data:`POINT_READ_COLORS`, :data:`POINT_READ_WEIGHT`).
5. **Where**: the solid's predicted silhouette (:func:`geometry.footprint_mm`, parallax from
   the camera centre) is slid onto the blob of its colour, and a lying pyramid's pointing
   refined by the overlap (for a hue, each size's silhouette is tried and the size is the
   best of classifier and fit together: :data:`SIZE_FIT_WEIGHT`), which gives
   ``base_center_mm`` (base square centre, or the centroid of the face it lies on) to about
   a millimetre.
6. The heat map has a say: white and clear are taken on less certainty where it is warm
   (:data:`HEAT_LIGHT`); finds where it is cold are dropped (:data:`MIN_HEAT`,
   :data:`MIN_HEAT_LIGHT`, :data:`MIN_HEAT_FLAT`) unless a hue fills its silhouette, or
   the second opinion is all but certain of a hue whose plastic shows (:data:`HUE_CERTAIN`).
7. Finds whose silhouettes overlap are one pyramid, and so are two whose solids would
   stand on the same table (:data:`SAME_GROUND`): the more confident stays.

A frame the calibration calls blurred (:attr:`~calibration.table.Calibration.blurred`, read
on the mat's marker edges before the frame is sent here) is read another way: the heat map
also reads the view mirrored and takes the mean of the two, and the second opinion's word
counts from :data:`BLURRED_VERIFY_MIN`.

:meth:`PyramidFinder.find` looks at the mat and :data:`BORDER_MM` around it;
:meth:`PyramidFinder.find_past` looks farther where the cards say the game went
(:func:`spill_areas`, :func:`spill_window`).

A colour profile from ``companion calibrate-colors`` (:mod:`vision.pyramids.profile`)
teaches both the colour table and the colour decision a player's own plastic.
"""

from __future__ import annotations

import functools
import logging
import math
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import cv2
import numpy as np

from calibration.mat import Mat
from calibration.table import Calibration, seen_area_mm
from companion.core.observation import record_deg
from vision.pyramids.classifier import (
    COLOR_CLASSES,
    COLOR_MODEL,
    COLOR_READ_CLASSES,
    COLOR_READ_MODEL,
    PATCH_MM,
    PATCH_PX,
    POINT_CLASSES,
    POINT_MODEL,
    SECTORS,
    SHAPE_CLASSES,
    SHAPE_MODEL,
    SIZE_CLASSES,
    SIZE_MODEL,
    WHITE_CLEAR_CLASSES,
    WHITE_CLEAR_MODEL,
    PatchClassifier,
    int8_name,
    mirror_sector,
    patch_up_deg,
    pointing_from_sectors,
)
from vision.pyramids.colors import BACKGROUND, COLORS, ColorModel, default_model
from vision.pyramids.geometry import (camera_center, footprint_mm, ground_footprint_mm,
                                      polygon_centroid)
from vision.pyramids.heat import CELL_MM, HEAT_MODEL, HeatMap, HeatNet
from vision.pyramids.proposals import Candidate, Segmentation, propose, segment
from vision.pyramids.topdown import TopDown, apply_gains
from vision.pyramids.verify import VERIFY_MODEL, Verifier, doubtful, features

log = logging.getLogger(__name__)

# The finder's settings. Each comment says what the setting does and why; how its value was
# chosen (the dev renders it was tried on, the figures, the values that lost) is in
# docs/vision-tuning.md under its name.

#: top-down view resolution for candidates and the geometric fit, px per mm: a small pyramid's
#: 14 mm base is still 10 px across, at about half the cost of 1 px/mm
VIEW_PPM = 0.75
#: the finder looks this far past each edge of the mat's play area (mm): a pyramid set down
#: beside the mat, or at its edge, is on the table too (0: the play area alone). A whole number
#: of heat-map cells (CELL_MM), so that the view of the mat itself and the heat map's cells are
#: the same pixels as without the border
BORDER_MM = 24.0
#: ... where the heat map's own candidates must be warmer than on the mat (HEAT_PEAK): the map
#: was trained on mats, and past them it warms to the table's grain and cloth, each peak a
#: patch for the classifiers to read
HEAT_PEAK_PAST_MAT = 0.4
#: :meth:`PyramidFinder.find_past`'s windows reach this far back over the border's edge (a
#: large pyramid lying across it is seen whole in one of the two looks) and have edges at
#: whole multiples of SPILL_STEP_MM (mm; a multiple of the heat map's cells and the view's
#: pixels)
SPILL_OVERLAP_MM = 32.0
#: a card whose corner lies this far past the border (mm) has taken the game off the mat
SPILL_CARD_MM = 10.0
SPILL_STEP_MM = 16.0
#: a candidate is a pyramid when the colour classifier gives ``none`` less than this...
MAX_NONE = 0.5
#: ... and, for white and clear (the colour of card paper and of whatever lies under them),
#: much less: it halves their false finds for few found
MAX_NONE_LIGHT = 0.04
#: ... and for black (ink, night skies, shadows), less
MAX_NONE_BLACK = 0.3
#: two finds whose silhouettes overlap more than this (IoU) are one pyramid
SAME_IOU = 0.3
#: ... and so are two whose bases lie this near (mm)
SAME_BASE_MM = 6.0
#: two finds are one pyramid where the table each would stand on
#: (:func:`geometry.ground_footprint_mm`: an upright base's inscribed circle, a lying solid's
#: outline from straight above) overlaps more than this share of the larger of the two: two
#: solids cannot be in one place, and a second read of one pyramid 6-16 mm from the first is
#: too far for SAME_IOU (0 turns it off). The larger's share: two touching neighbours read a
#: few mm toward each other stay two
SAME_GROUND = 0.2
#: a find of a hue (not white, clear or black, whose pixels the colour table cannot tell from
#: paper and ink) must have its colour's pixels fill its predicted silhouette this well (IoU):
#: a solid seen through the camera's parallax, not a flat patch of card art. Lower than at 1
#: px/mm: at VIEW_PPM a pyramid's edge pixels are a larger share of it
MIN_IOU_HUE = 0.57
#: ... unless the colour classifier is this sure (p of none below it)
SURE = 0.05
#: a hue's size (pips) is chosen by log p(size) + SIZE_FIT_WEIGHT x the silhouette's IoU with
#: its colour's pixels, each size's solid slid onto them: the three sizes' silhouettes differ
#: by a factor ~1.8 in area, which the colour table sees where the patch classifier guesses.
#: White, clear and black keep the classifiers' size: their pixels are mixed with paper and ink
SIZE_FIT_WEIGHT = 5.0
#: a shape read less sure than this of its size or, at that size, of upright or lying
#: (shape_sureness) is averaged with reads SHAPE_SHIFT_MM to either side along the line from
#: the camera's nadir: a candidate a mm or two off a pyramid's middle can flip the read where
#: card art of its colour touches it (the sample game's small upright red beside a red hat)
SHAPE_SURE = 0.8
SHAPE_SHIFT_MM = 1.5
#: the shape classifier reads each patch twice, as cut and mirrored left to right (it was
#: trained with mirrors), and averages the two reads: fewer wrong pips, poses and pointings for
#: about 0.3 ms a find
SHAPE_MIRRORED = True
#: ... only the patches whose first read gives its likeliest class less than this (None: every
#: patch): above it the second read changed nothing on the dev renders, and skipping it saves
#: about 1 ms a frame
SHAPE_MIRROR_SURE: float | None = 0.999
#: the size reader too reads each patch as cut and mirrored, the two reads averaged (its
#: classes, size and upright or lying, do not change with a mirror; it was trained with
#: mirrors). Not the colour, white-or-clear and pointing readers: no more tables right
SIZE_READ_MIRRORED = True
#: ... but a patch whose first read gives its likeliest class at least this is not read again
#: (None: every patch is): the mirror never changed such a read's likeliest class, and skipping
#: it saves about 3 ms a frame
SIZE_MIRROR_SURE: float | None = 0.95
#: the size reader (``pyramids-size.onnx``, models/pyramids-size.md: pips and upright or lying
#: from a closer patch, 56 mm of table instead of 72) reads the finds of these colours and
#: weighs in against the shape classifier: each shape class's probability times the reader's
#: for its size and pose, to the power SIZE_READ_WEIGHT, normalised. Made for white, clear and
#: black, whose size cannot be fitted to their own colour's pixels; it helps the hues too
SIZE_READ_COLORS = frozenset(COLORS)
#: the size reader's power against the shape classifier (SIZE_READ_COLORS): the higher, the
#: more the closer patch decides; set again each time a reader was retrained
SIZE_READ_WEIGHT = 5.0
#: ... where the shape classifier is less sure than this of its size and pose (shape_sureness).
#: Above 1 every find is asked: more tables right for about 1 ms a frame
SIZE_READ_SURE = 1.01
#: a find the colour classifier calls white or clear is named again by its two probabilities
#: times the white-or-clear reader's (``pyramids-white-clear.onnx``,
#: models/pyramids-white-clear.md: the size reader's recipe and 56 mm patch) to this power:
#: under lamps the colour classifier reads white as clear far more often than the other way
WHITE_CLEAR_WEIGHT = 4.0
#: the colour reader (``pyramids-color-read.onnx``, models/pyramids-color-read.md: the ten
#: colours from the size reader's closer patch) reads each kept candidate whose colour the
#: colour classifier gives less than COLOR_READ_SURE, and weighs in as the white-or-clear
#: reader does: the colour classifier's ten probabilities times the reader's to the power
#: COLOR_READ_WEIGHT, the largest names the find (before the white-or-clear reader, which has
#: the last word on white against clear). 0 turns it off. Asking only the less sure finds reads
#: 4 patches a frame instead of 19 for the same tables right
COLOR_READ_WEIGHT = 2.0
COLOR_READ_SURE = 0.999
#: the pointing reader (``pyramids-point.onnx``, models/pyramids-point.md: the size reader's
#: recipe and 56 mm patch, twelve sectors of a lying apex) reads the finds of these colours
#: that the shape classifier gives at least POINT_READ_LYING of lying, and its sectors weigh in
#: against the shape classifier's: each size's lying sectors times the reader's to the power
#: POINT_READ_WEIGHT, renormalised to the size's lying total (pips and upright or lying stay
#: the shape classifier's). Made for clear plastic, whose apex the shape classifier alone often
#: pointed more than 45 degrees off; it helps every colour
POINT_READ_COLORS: frozenset[str] = frozenset(COLORS)
POINT_READ_WEIGHT = 1.0
POINT_READ_LYING = 0.1
#: the pointing reader reads a patch mirrored too (its sectors mapped back,
#: :func:`_mirror_columns`) where its first read gives its likeliest sector less than
#: POINT_MIRROR_SURE, the two reads averaged (None: every patch is read again). Off: within the
#: noise either way, for about 1 ms a frame
POINT_READ_MIRRORED = False
POINT_MIRROR_SURE: float | None = 0.95
#: heat map (``pyramids-heat.int8.onnx``): its peaks of at least this are candidates too. As
#: low as COLD, every warm peak: the second opinion (VERIFY_MIN) decides the heat map's own
#: candidates, and faint peaks are where white and clear plastic hides; each costs a little
#: time, not false finds
HEAT_PEAK = 0.1
#: ... and white or clear is taken at the plain MAX_NONE where the heat is at least this
#: (the colour classifier alone must be far surer: MAX_NONE_LIGHT)
HEAT_LIGHT = 0.5
#: a heat peak within this of a colour-table candidate adds nothing (mm)
HEAT_MERGE_MM = 5.0
#: a find where the heat map is below this is card art or shadow, whatever the patch classifier
#: says (white and clear: MIN_HEAT_LIGHT, their plastic looks most like paper)
MIN_HEAT = 0.2
MIN_HEAT_LIGHT = 0.3
#: ... and black (ink, night skies, shadows) likewise
MIN_HEAT_BLACK = 0.3
#: ... except a hue whose plastic fills its predicted silhouette at least this well (IoU): the
#: colour table is sure there, and the heat map can miss a small pyramid pressed against a
#: larger one
HEAT_OVERRULED_IOU = 0.67
#: a hue that does not fill its silhouette (taken only because the colour classifier is sure,
#: SURE) needs at least this much heat: flat card art in a pyramid's colour
MIN_HEAT_FLAT = 0.3
#: candidates where the heat map is below this are not read at all, a saving of time: about
#: half the candidates, and hardly ever a true find
COLD = 0.1
#: a hue that only the heat map proposed (the colour table made no candidate there) is card art
#: the classifier was never shown, unless the classifier is this sure of a pyramid (p of none
#: below it) where the heat is at least HEAT_HUE_MIN_HEAT, and some of a hue's plastic lies
#: under its silhouette: under dim or coloured light the plastic leaves the colour table's bins
#: (without the plastic test, many more false finds on unseen printings)
HEAT_HUE_MAX_NONE = 0.2
HEAT_HUE_MIN_HEAT = 0.4
#: ... unless the second opinion's p(pyramid) is at least this and the colour classifier is
#: sure (``none`` under SURE): a lamp or a cloth can shift a hue's plastic out of the colour
#: table's bins altogether (a pink-lit red lying on a green cloth had not one red pixel)
HEAT_HUE_TRUST = 0.9
#: ... or where the verifier alone gives it at least this, whatever the colour classifier says:
#: under a lamp's colour the colour table can see none of a pyramid's plastic, and the colour
#: classifier may call it ``none``, where the verifier is all but certain
HEAT_HUE_SURE = 0.99
#: a hue the colour table proposed is read (and must then fill its silhouette, see MIN_IOU_HUE)
#: even where the colour classifier calls it ``none``, if the heat map is at least this warm
#: there: small yellows and greens, lying or beside same-coloured card art, are often ``none``
#: to the classifier and plain to the heat map
HUE_WARM = 0.65
#: the second opinion (``pyramids-verify.onnx``, :mod:`vision.pyramids.verify`) on a doubtful
#: candidate (white, clear or black, or proposed by the heat map alone): it is a pyramid when
#: p(pyramid) is at least this, whatever the colour classifier's ``none`` and the heat floors
#: above say; a hue still has to pass the silhouette tests. Lower floors found more pyramids
#: for as many more false finds and misreads
VERIFY_MIN = 0.8
#: VERIFY_MIN on a frame the calibration calls blurred (:attr:`Calibration.blurred`), where the
#: heat map is also read mirrored, the mean of the two readings (``models/pyramids-heat.md``):
#: the looser word is worth taking only with that steadier map
BLURRED_VERIFY_MIN = 0.6
#: VERIFY_MIN on a busy table: a look with at least BUSY_SURE candidates that are surely
#: pyramids (the colour classifier took them without asking the verifier, or the verifier gave
#: them at least BUSY_SURE_P) takes a doubtful one from BUSY_VERIFY_MIN. Late in a game the
#: lattice is crowded with pyramids, so a doubtful candidate there is a pyramid more often than
#: on a quiet table. Blurred frames already have this floor
BUSY_VERIFY_MIN = 0.6
BUSY_SURE = 12
BUSY_SURE_P = 0.95
#: a hue the colour classifier accepted alone (not doubtful, so not asked above) is dropped as
#: card art where the verifier, asked after the first checks, gives it under this: recoloured
#: card art that the colour classifier takes for a hue. Every such hue is asked anyway, so it
#: adds no time
VERIFY_HUE_MIN = 0.5
#: a candidate turned away unasked (the colour classifier's none over its threshold, and not
#: doubtful: its likeliest colour a hue, or none at 0.9 and more) is asked too, and its answer
#: decides it as a doubtful one's does where it is at least this sure: a yellow or a clear
#: pyramid the colour classifier missed on busy art
VERIFY_RECALL_MIN = 0.9
#: a hue whose colour's pixels fill its silhouette less than MIN_IOU_HUE asks (a neighbour's
#: plastic or a lamp took some of them) is still read where the verifier gives it at least
#: HUE_IOU_TRUST and the IoU is at least HUE_IOU_TRUST_MIN (without that floor, more wrong
#: colours)
HUE_IOU_TRUST = 0.95
HUE_IOU_TRUST_MIN = 0.3
#: a hue is read whatever its silhouette's IoU where the verifier gives it at least
#: HUE_HEAT_TRUST and the heat map is at least HUE_HEAT_TRUST_HEAT there: under a lamp's colour
#: the colour table can miss most of a pyramid's own plastic that both networks see
HUE_HEAT_TRUST = 0.99
HUE_HEAT_TRUST_HEAT = 0.45
#: a hue that some of its colour's plastic backs (IoU over 0) is read whatever the rest of its
#: silhouette and the heat map say where the verifier gives it at least this: a hue on busy art
#: that the heat map misses (under MIN_HEAT, where a hue had to fill HEAT_OVERRULED_IOU of its
#: silhouette) or whose plastic the table's pixels only partly show
HUE_CERTAIN = 0.99
#: a doubtful hue the verifier was asked about (``p_ver``) is read despite a thin silhouette
#: (no IoU floor) where it gives at least this: on crowded lattices a pyramid's own plastic
#: hides under its neighbours', and the verifier, trained on every such candidate, tells it
#: from card art better than the pixel count does
VERIFY_IOU_TRUST = 0.9
#: a doubtful candidate whose answer lies in VERIFY_STEADY is asked again at cuts
#: VERIFY_STEADY_MM to either side along the line from the camera's nadir (as the shape
#: classifier's unsure reads, SHAPE_SHIFT_MM; the features stay the candidate's own) and the
#: three answers averaged: near the floor one cut's answer is noisy
VERIFY_STEADY_MM = 1.5
VERIFY_STEADY = (0.5, 0.95)
#: a hue's silhouette is slid onto the pixels of its own colour where they cover at least this
#: share of it, else onto any hue's or black's (translucent plastic over art straddles
#: neighbouring hues): on crowded tables the pixels of touching pyramids of other colours
#: pulled a silhouette 12-20 mm off
SLIDE_OWN = 0.3
#: a find sliding onto its colour group's pixels rather than its own colour's (white, clear and
#: black always; a hue under SLIDE_OWN) moves at most this far a step (two steps): those pixels
#: are card paper and borders, ink and every hue, and a free slide carried finds 12-20 mm off
SLIDE_MAX_GROUP_MM = 2.0
#: the colour's pixels this far outside a silhouette still count against it in the overlap (its
#: union), and a slide reaches for pixels SLIDE_REACH_MM outside it: in mm, so that the view's
#: resolution (VIEW_PPM) does not move them (in pixels at 0.75 px/mm a small red touching a
#: 2-pip red slid onto the 2-pip's plastic: test_touching_pyramids_of_one_colour)
NEAR_MM = 2.0
SLIDE_REACH_MM = 4.0
HUES = frozenset(COLORS[:7])
DARK_CLASSES = "dark"     # the seven hues and black
LIGHT_CLASSES = "light"   # white and clear
_GROUP_LUT = {DARK_CLASSES: np.isin(np.arange(256), np.arange(8)),
              LIGHT_CLASSES: np.isin(np.arange(256), [8, 9])}


@dataclass
class PyramidFind:
    color: str
    pips: int
    upright: bool
    pointing_deg: float | None
    base_center_mm: tuple[float, float]
    confidence: float
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"color": self.color, "pips": self.pips, "upright": self.upright,
                "pointing_deg": (None if self.pointing_deg is None
                                 else record_deg(self.pointing_deg, 1)),
                "base_center_mm": [round(self.base_center_mm[0], 1),
                                   round(self.base_center_mm[1], 1)],
                "confidence": round(self.confidence, 3), **self.extra}


@dataclass
class Look:
    """Everything the finder saw in one image before classifying (also what the training
    data is cut from)."""

    topdown: TopDown
    gains: np.ndarray
    view: np.ndarray          # the normalised top-down view at VIEW_PPM
    seg: Segmentation
    candidates: list[Candidate]
    camera: np.ndarray        # camera centre (x, y, height) in table mm
    #: the calibration called the frame blurred (:attr:`Calibration.blurred`, measured on
    #: the mat's marker edges): the heat map is read mirrored too, and the verifier's word
    #: counts at :data:`BLURRED_VERIFY_MIN`
    blurred: bool = False
    #: the patches cut so far, by (image, span, centre): the closer readers (size, colour,
    #: white or clear, pointing) read the same 56 mm patches of the same finds
    _cuts: dict[tuple[int, float, float, float], np.ndarray] = field(
        default_factory=dict, init=False, repr=False, compare=False)

    def patches(self, image: np.ndarray, centers_mm: np.ndarray,
                span_mm: float = PATCH_MM) -> np.ndarray:
        """(N, PATCH_PX, PATCH_PX, 3) patches ``span_mm`` wide, "up" away from the nadir
        (each cut once: the same centre and span again is the patch cut before)."""
        c = np.asarray(centers_mm, np.float64).reshape(-1, 2)
        keys = [(id(image), float(span_mm), float(x), float(y)) for x, y in c]
        missing = [i for i, k in enumerate(keys) if k not in self._cuts]
        if missing:
            for i, p in zip(missing, self._cut(image, c[missing], span_mm)):
                self._cuts[keys[i]] = p
        if not keys:
            return np.zeros((0, PATCH_PX, PATCH_PX, 3), np.uint8)
        return np.stack([self._cuts[k] for k in keys])

    def _cut(self, image: np.ndarray, centers_mm: np.ndarray, span_mm: float) -> np.ndarray:
        # never empty: patches() answers no centres itself (OpenCV's LUT gives None for an
        # empty array)
        up = patch_up_deg(centers_mm, self.camera[:2])
        p = self.topdown.patches(image, centers_mm, up, PATCH_PX, span_mm)
        out: np.ndarray = apply_gains(p.reshape(-1, PATCH_PX, 3), self.gains).reshape(p.shape)
        return out


@dataclass
class Reads:
    """The candidates the colour classifier read in one image (those where the heat map is
    not cold), with what the finder knows of each."""

    candidates: list[Candidate]
    centers: np.ndarray       # (N, 2) mm
    heat: np.ndarray          # (N,) the heat map at each (zeros without a heat map)
    from_heat: np.ndarray     # (N,) bool: the heat map alone proposed it
    patches: np.ndarray       # (N, PATCH_PX, PATCH_PX, 3) uint8, PATCH_MM wide
    p_what: np.ndarray        # (N, classes) the colour classifier's probabilities


#: what became of a candidate (:class:`CandidateFate`), in the order the finder decides:
#: turned away before any fit by the second opinion (asked, and under its floor) or else by
#: the thresholds on the colour classifier and the heat map (:meth:`PyramidFinder._first_checks`);
#: dropped as card art (:data:`VERIFY_HUE_MIN`); by the reading and fit
#: (:meth:`PyramidFinder._read`: the silhouette and heat tests); as a second read of a
#: pyramid another find kept; or found
FATES = ("second opinion", "thresholds", "card art", "not read", "merged", "found")


@dataclass(frozen=True)
class CandidateFate:
    """One candidate a look read, and what the finder made of it (:attr:`PyramidFinder.trace`:
    where a pyramid that is not in the record was lost, for ``bench/vision_dev.py``)."""

    center_mm: tuple[float, float]    # table frame
    source: str                       # "color" (the colour table) or "heat" (the map alone)
    heat: float
    p_pyramid: float                  # the second opinion's answer; nan where not asked
    fate: str                         # one of FATES


def _fates(reads: Reads, origin: tuple[float, float], p_ver: np.ndarray, p_hue: np.ndarray,
           checked: np.ndarray, kept: np.ndarray, read: list[int], found: list[int]
           ) -> list[CandidateFate]:
    """What became of each of one look's candidates (``reads``, in a frame whose origin is
    table point ``origin``), from what each stage of :meth:`PyramidFinder._find` let
    through: ``checked`` past the checks before any fit, ``kept`` past the art check,
    ``read`` into a find, ``found`` still a find after the merging. Turned away before any
    fit by the second opinion where it was asked (``p_ver`` not nan), else by thresholds."""
    fate = np.where(np.isnan(p_ver), FATES.index("thresholds"), FATES.index("second opinion"))
    for stage, survivors in (("card art", checked), ("not read", kept), ("merged", read),
                             ("found", found)):
        fate[np.asarray(survivors, np.int64)] = FATES.index(stage)
    return [CandidateFate((float(c[0] + origin[0]), float(c[1] + origin[1])), cand.source,
                          float(h), float(p), FATES[int(k)])
            for cand, c, h, p, k in zip(reads.candidates, reads.centers, reads.heat, p_hue,
                                        fate)]


class Looker:
    """Stages 1-2 (no classifiers): the normalised top-down view and the candidates, with
    the view's maps kept while the camera stays put. ``mat`` may be :func:`bordered`; then
    ``calib`` must be in its frame (:func:`shifted`)."""

    def __init__(self, mat: Mat, model: ColorModel) -> None:
        self.mat = mat
        self.model = model
        self._topdown: TopDown | None = None
        # the view's pixels past the image's edge, for one camera and image size
        self._outside: tuple[tuple[int, ...], np.ndarray] | None = None

    def _for_camera(self, calib: Calibration) -> TopDown:
        """The view's maps for ``calib``'s camera (made again when it changed)."""
        td = self._topdown
        if td is None or not td.same_camera(calib):
            td = self._topdown = TopDown(calib, self.mat)
            self._outside = None
        return td

    def look(self, image: np.ndarray, calib: Calibration, gains: np.ndarray | None = None
             ) -> Look:
        """``gains``: the paper's (another looker's :meth:`paper_gains` of this image) where
        this looker's own frame holds no marker."""
        td = self._for_camera(calib)
        view = td.view(image, VIEW_PPM)
        if self._outside is None or self._outside[0] != image.shape[:2]:
            self._outside = (image.shape[:2], td.outside(image.shape[:2], VIEW_PPM))
        outside = self._outside[1]
        if gains is None:
            gains = td.paper_gains(image)
        view = apply_gains(view, gains)
        seg = segment(view, self.model, self.mat, VIEW_PPM)
        if outside.any():
            # past the image's edge the view is black: no black pyramid stands there
            seg.label[outside] = BACKGROUND
        return Look(td, gains, view, seg, propose(seg), camera_center(calib), calib.blurred)

    def paper_gains(self, image: np.ndarray, calib: Calibration) -> np.ndarray:
        """The gains :meth:`look` gives ``image`` (the marker paper's, for a printed mat)."""
        return self._for_camera(calib).paper_gains(image)


@dataclass(frozen=True)
class _BorderedMat(Mat):
    """A mat's frame grown by ``border_mm`` on every side, its origin moved with it: the
    markers and zones where they are on the table, the play area's corner at (border,
    border)."""

    border_mm: float = 0.0

    def marker_centers(self) -> dict[int, tuple[float, float]]:
        # the mat's own layout, moved by the border
        b = self.border_mm
        mat = Mat(dictionary=self.dictionary, marker_size_mm=self.marker_size_mm,
                  width_mm=self.width_mm - 2 * b, height_mm=self.height_mm - 2 * b,
                  printed=self.printed)
        return {k: (x + b, y + b) for k, (x, y) in mat.marker_centers().items()}


def bordered(mat: Mat, border_mm: float) -> Mat:
    """``mat`` grown by ``border_mm`` on every side (:class:`_BorderedMat`), or ``mat``
    itself for no border."""
    if border_mm <= 0:
        return mat
    b = float(border_mm)
    zones = {k: (x0 + b, y0 + b, x1 + b, y1 + b) for k, (x0, y0, x1, y1) in mat.zones.items()}
    return _BorderedMat(dictionary=mat.dictionary, marker_size_mm=mat.marker_size_mm,
                        width_mm=mat.width_mm + 2 * b, height_mm=mat.height_mm + 2 * b,
                        zones=zones, printed=mat.printed, border_mm=b)


def shifted(calib: Calibration, border_mm: float) -> Calibration:
    """``calib`` into the frame of :func:`bordered`: table point (x, y) -> (x + border,
    y + border)."""
    if border_mm <= 0:
        return calib
    return moved(calib, border_mm, border_mm)


def moved(calib: Calibration, dx_mm: float, dy_mm: float) -> Calibration:
    """``calib`` into a frame moved by (dx, dy): table point (x, y) -> (x + dx, y + dy)."""
    if calib.H is None or (dx_mm == 0 and dy_mm == 0):
        return calib
    T = np.array([[1.0, 0.0, dx_mm], [0.0, 1.0, dy_mm], [0.0, 0.0, 1.0]])
    return replace(calib, H=T @ calib.H)


def window_mm(mat: Mat, border_mm: float, shown: tuple[float, float, float, float] | None
              ) -> tuple[float, float, float, float] | None:
    """(x0, y0, x1, y1): the part of ``mat``'s play area grown by ``border_mm`` that the
    frame shows (``shown``: :func:`calibration.table.seen_area_mm`; None: all of it), its
    edges moved out to whole heat-map cells (:data:`CELL_MM`, also whole view pixels) so that
    the cells of one camera's windows line up; None when the frame shows none of it."""
    return _shown_in_steps(_bordered_bounds(mat, border_mm), shown, CELL_MM)


def _shown_in_steps(box: tuple[float, float, float, float],
                    shown: tuple[float, float, float, float] | None, step: float
                    ) -> tuple[float, float, float, float] | None:
    """``box`` (x0, y0, x1, y1) cut to what the frame shows (``shown``; None: all of it),
    its edges moved out to whole multiples of ``step`` (mm); None when less than one step
    of it is left."""
    x0, y0, x1, y1 = box
    if shown is not None:
        x0, y0 = max(x0, shown[0]), max(y0, shown[1])
        x1, y1 = min(x1, shown[2]), min(y1, shown[3])
    x0, y0 = math.floor(x0 / step) * step, math.floor(y0 / step) * step
    x1, y1 = math.ceil(x1 / step) * step, math.ceil(y1 / step) * step
    if x1 - x0 < step or y1 - y0 < step:
        return None
    return (float(x0), float(y0), float(x1), float(y1))


def _bordered_bounds(mat: Mat, border_mm: float) -> tuple[float, float, float, float]:
    """(x0, y0, x1, y1): ``mat``'s play area grown by ``border_mm`` on every side."""
    return (-border_mm, -border_mm, mat.width_mm + border_mm, mat.height_mm + border_mm)


def _farthest_past(mat: Mat, border_mm: float, box: tuple[float, float, float, float]
                   ) -> tuple[str, float]:
    """The side of ``mat``'s play area grown by ``border_mm`` that ``box`` (x0, y0, x1, y1)
    reaches farthest past, and how far (mm; 0 or less: not past it)."""
    x0, y0, x1, y1 = box
    lo_x, lo_y, hi_x, hi_y = _bordered_bounds(mat, border_mm)
    past = {"west": lo_x - x0, "north": lo_y - y0, "east": x1 - hi_x, "south": y1 - hi_y}
    side = max(past, key=lambda k: past[k])
    return side, past[side]


def spill_areas(mat: Mat, border_mm: float, cards: list[tuple[tuple[float, float], float]],
                reach_mm: float) -> list[tuple[float, float, float, float]]:
    """Where to look past the border for the cards a game has laid past it: ``cards`` are
    (centre, half-diagonal) in table mm; each that lies past ``mat``'s play area grown by
    ``border_mm`` by more than :data:`SPILL_CARD_MM` is grown by ``reach_mm`` (a pyramid
    on it, or in the cell beside it), and those past one side make one area (x0, y0, x1,
    y1) for that side."""
    by_side: dict[str, list[float]] = {}
    for (x, y), r in cards:
        side, past = _farthest_past(mat, border_mm, (x - r, y - r, x + r, y + r))
        if past <= SPILL_CARD_MM:
            continue
        box = [x - reach_mm, y - reach_mm, x + reach_mm, y + reach_mm]
        got = by_side.setdefault(side, box)
        by_side[side] = [min(got[0], box[0]), min(got[1], box[1]), max(got[2], box[2]),
                         max(got[3], box[3])]
    return [(a[0], a[1], a[2], a[3]) for a in by_side.values()]


def spill_window(mat: Mat, border_mm: float, area: tuple[float, float, float, float],
                 shown: tuple[float, float, float, float] | None
                 ) -> tuple[float, float, float, float] | None:
    """(x0, y0, x1, y1): the window :meth:`PyramidFinder.find_past` looks at for ``area``:
    the part of it past ``mat``'s play area grown by ``border_mm`` (and reaching
    :data:`SPILL_OVERLAP_MM` back over that edge, so that a pyramid standing on it is seen
    whole) that the frame shows (``shown``), its edges moved out to whole
    :data:`SPILL_STEP_MM` (one window, and its view's maps, for every frame of a still
    game); None when nothing of it lies past the border or in the frame. ``area`` past two
    sides is cut to the side it reaches farthest past."""
    x0, y0, x1, y1 = (float(v) for v in area)
    lo_x, lo_y, hi_x, hi_y = _bordered_bounds(mat, border_mm)
    side, past = _farthest_past(mat, border_mm, (x0, y0, x1, y1))
    if past <= 0:
        return None
    if side == "west":
        x1 = min(x1, lo_x + SPILL_OVERLAP_MM)
    elif side == "east":
        x0 = max(x0, hi_x - SPILL_OVERLAP_MM)
    elif side == "north":
        y1 = min(y1, lo_y + SPILL_OVERLAP_MM)
    else:
        y0 = max(y0, hi_y - SPILL_OVERLAP_MM)
    return _shown_in_steps((x0, y0, x1, y1), shown, SPILL_STEP_MM)


def verify_min(look: Look, busy: bool = False) -> float:
    """The verifier's p(pyramid) a doubtful candidate needs in this look: :data:`VERIFY_MIN`,
    or :data:`BLURRED_VERIFY_MIN` on a blurred frame, or :data:`BUSY_VERIFY_MIN` on a
    ``busy`` table (:func:`busy_table`) where that is lower (all read at each call)."""
    floor = BLURRED_VERIFY_MIN if look.blurred else VERIFY_MIN
    return min(floor, BUSY_VERIFY_MIN) if busy else floor


def busy_table(p_none: np.ndarray, p_ver: np.ndarray, max_none: float) -> bool:
    """Whether a look's candidates hold at least :data:`BUSY_SURE` sure pyramids: the colour
    classifier's ``none`` (``p_none``) under ``max_none`` where the verifier was not asked
    (``p_ver`` nan), or the verifier's p(pyramid) at least :data:`BUSY_SURE_P`."""
    p_ver = np.asarray(p_ver, np.float64)
    sure = (np.isnan(p_ver) & (np.asarray(p_none) < max_none)) | (p_ver >= BUSY_SURE_P)
    return int(np.count_nonzero(sure)) >= BUSY_SURE


def shape_sureness(ps: np.ndarray, names: list[str] | tuple[str, ...]) -> np.ndarray:
    """(N,) how sure each row of shape probabilities is of its size and, at that size, of
    upright or lying: the smaller of the two shares."""
    cols = {k: i for i, k in enumerate(names)}
    up = np.stack([ps[:, cols[f"{p}U"]] for p in (1, 2, 3)], axis=1)
    lie = np.stack([ps[:, [cols[f"{p}L{k:02d}"] for k in range(SECTORS)]].sum(axis=1)
                    for p in (1, 2, 3)], axis=1)
    tot = up + lie
    best = np.argmax(tot, axis=1)
    r = np.arange(len(ps))
    pose = np.maximum(up[r, best], lie[r, best]) / np.maximum(tot[r, best], 1e-9)
    out: np.ndarray = np.minimum(tot[r, best] / np.maximum(tot.sum(axis=1), 1e-9), pose)
    return out


def peaks_beside(heat: HeatMap, cands: list[Candidate], min_p: float) -> np.ndarray:
    """The heat map's peaks (N, 2) mm of at least ``min_p`` more than HEAT_MERGE_MM from
    every candidate in ``cands`` (those the colour table already proposed)."""
    pts, _ = heat.peaks(min_p)
    if len(pts) and cands:
        have = np.array([c.center_mm for c in cands], np.float64)
        pts = pts[np.linalg.norm(pts[:, None] - have[None], axis=2).min(axis=1)
                  > HEAT_MERGE_MM]
    return np.asarray(pts, np.float64).reshape(-1, 2)


#: The readers that run as their int8 copies (:mod:`vision.pyramids.quantize`:
#: ``NAME.int8.onnx`` beside each float file, which stays the one trained and exported): these
#: plain convolution-and-ReLU networks run about 2.3 times as fast so, the tables right within
#: what any retraining moves. The verifier runs in int8 too, its head in float
#: (:data:`VERIFIER_INT8`). Not the shape and colour classifiers: their SiLU networks gain
#: little in int8, and the colour classifier's copy lost crowded tables. Empty: every reader in
#: float.
READERS_INT8: frozenset[str] = frozenset({SIZE_MODEL, POINT_MODEL, WHITE_CLEAR_MODEL,
                                          COLOR_READ_MODEL})


def reader_file(name: str) -> str:
    """The file the finder runs for the float reader file ``name`` (:data:`READERS_INT8`)."""
    return int8_name(name) if name in READERS_INT8 else name


#: The verifiers (the tarot's and the Decktet's) run as their int8 copies, made by
#: :func:`vision.pyramids.quantize.verifier_int8` with the head in float (quantised whole, its
#: answers near VERIFY_MIN moved below it): about 2.5 times as fast a patch, the tables right
#: within one of the float file's. False: the float files.
VERIFIER_INT8 = True


def verifier_file(name: str) -> str:
    """The file the finder runs for the float verifier file ``name`` (:data:`VERIFIER_INT8`)."""
    return int8_name(name) if VERIFIER_INT8 else name


class PyramidFinder:
    """``PyramidFinder(mat).find(image, calib)`` -> list of :class:`PyramidFind`.

    ``colors``: a colour profile (:class:`vision.pyramids.profile.ColorProfile` or the path
    of its file) from ``companion calibrate-colors``; ``threads``: onnxruntime threads.
    ``color_model`` / ``shape_model`` / ``heat_model`` / ``verify_model`` / ``size_model``
    / ``white_clear_model`` / ``point_model`` / ``color_read_model``: other ONNX files than
    the shipped ones (``heat_model=False``: no heat map, the colour table's candidates
    alone; ``verify_model=False``: no second opinion, the thresholds alone;
    ``size_model=False``: the shape classifier alone reads pips and pose;
    ``white_clear_model=False``: the colour classifier alone tells white from clear;
    ``point_model=False``: the shape classifier alone points lying pyramids;
    ``color_read_model=False``: the colour classifier alone names colours)."""

    def __init__(self, mat: Mat, model: ColorModel | None = None, *, colors: Any = None,
                 color_model: Path | None = None, shape_model: Path | None = None,
                 heat_model: Path | None | Literal[False] = None,
                 verify_model: Path | None | Literal[False] = None,
                 size_model: Path | None | Literal[False] = None,
                 white_clear_model: Path | None | Literal[False] = None,
                 point_model: Path | None | Literal[False] = None,
                 color_read_model: Path | None | Literal[False] = None,
                 threads: int = 1, max_none: float = MAX_NONE,
                 max_none_light: float = MAX_NONE_LIGHT,
                 min_iou_hue: float = MIN_IOU_HUE, border_mm: float = BORDER_MM) -> None:
        from models import model_path
        from vision.pyramids.profile import ColorProfile, load_profile

        self.mat = mat
        profile = colors
        if profile is not None and not isinstance(profile, ColorProfile):
            profile = load_profile(profile)
        self.profile: ColorProfile | None = profile
        base = model or default_model()
        self.model = profile.adapt(base) if profile is not None else base
        self.what = PatchClassifier(color_model or model_path(COLOR_MODEL), COLOR_CLASSES,
                                    threads)
        self.how = PatchClassifier(shape_model or model_path(SHAPE_MODEL), SHAPE_CLASSES,
                                   threads)
        self.heat = None if heat_model is False else HeatNet(
            heat_model or model_path(HEAT_MODEL), threads)
        self.verifier = None if verify_model is False else Verifier(
            verify_model or model_path(verifier_file(VERIFY_MODEL)), threads)
        self.sizer = None if size_model is False else PatchClassifier(
            size_model or model_path(reader_file(SIZE_MODEL)), SIZE_CLASSES, threads)
        self.size_span = PATCH_MM if self.sizer is None else _patch_mm(self.sizer)
        self.white_clear = None if white_clear_model is False else PatchClassifier(
            white_clear_model or model_path(reader_file(WHITE_CLEAR_MODEL)), WHITE_CLEAR_CLASSES,
            threads)
        self.white_clear_span = (PATCH_MM if self.white_clear is None
                                 else _patch_mm(self.white_clear))
        self.pointer = None if point_model is False else PatchClassifier(
            point_model or model_path(reader_file(POINT_MODEL)), POINT_CLASSES, threads)
        self.point_span = PATCH_MM if self.pointer is None else _patch_mm(self.pointer)
        self.color_reader = None if color_read_model is False else PatchClassifier(
            color_read_model or model_path(reader_file(COLOR_READ_MODEL)), COLOR_READ_CLASSES,
            threads)
        self.color_read_span = (PATCH_MM if self.color_reader is None
                                else _patch_mm(self.color_reader))
        self.max_none = float(max_none)
        self.min_iou_hue = float(min_iou_hue)
        self.max_none_light = float(max_none_light)
        self.looker = Looker(mat, self.model)
        self.border_mm = max(0.0, float(border_mm))
        if self.border_mm % CELL_MM or (self.border_mm * VIEW_PPM) % 1:
            raise ValueError(f"border_mm {border_mm}: expected a multiple of {CELL_MM:g} mm "
                             "(whole heat-map cells and view pixels)")
        # find() looks past the mat's edges (BORDER_MM) in a frame moved by the border;
        # look() stays in the mat's own frame (the training cutters label in it)
        self._wide = Looker(bordered(mat, self.border_mm), self.model) \
            if self.border_mm else self.looker
        # without a mat: one look per window of the play area a camera shows (find())
        self._windows: dict[tuple[float, float, float, float], Looker] = {}
        #: None, or a list that each look's candidates are added to with their fate
        self.trace: list[CandidateFate] | None = None

    # -- stages -----------------------------------------------------------------------------

    def look(self, image: np.ndarray, calib: Calibration) -> Look:
        """Stages 1-2: the normalised top-down view and the candidates."""
        return self.looker.look(image, calib)

    def find(self, image: np.ndarray, calib: Calibration) -> list[PyramidFind]:
        if not calib.calibrated or calib.H is None:
            return []
        if not self.mat.printed:
            return self._find_in_view(image, calib)
        b = self.border_mm
        return self._found_from(image, calib, self._wide, -b, -b)

    def _find_in_view(self, image: np.ndarray, calib: Calibration) -> list[PyramidFind]:
        """A table without a mat: its play area (a :func:`~calibration.mat.virtual_mat`
        around the cards) is larger than most frames show, so only the part of it the
        frame shows (:func:`window_mm`) is looked at, in a frame of its own."""
        h, w = image.shape[:2]
        win = window_mm(self.mat, self.border_mm, seen_area_mm(calib, (w, h)))
        if win is None:
            return []
        return self._found_from(image, calib, self._window_looker(win), win[0], win[1])

    def find_past(self, image: np.ndarray, calib: Calibration,
                  areas: list[tuple[float, float, float, float]]) -> list[PyramidFind]:
        """The pyramids in ``areas`` (x0, y0, x1, y1, table mm) past what :meth:`find` looks
        at (the mat and :data:`BORDER_MM` around it): where a game has spread off the mat
        (the pipeline asks where it found cards there, :data:`vision.pipeline.SPILL_REACH_CELLS`
        lattice pitches around them). Each area is
        looked at in a frame of its own, in the mat paper's colours; a find is kept where it
        stands past the border (what stands within it is :meth:`find`'s)."""
        if not calib.calibrated or calib.H is None or not self.mat.printed or not areas:
            return []
        h, w = image.shape[:2]
        shown = seen_area_mm(calib, (w, h))
        gains = self._wide.paper_gains(image, shifted(calib, self.border_mm))
        b = self.border_mm
        finds: list[PyramidFind] = []
        for area in areas:
            win = spill_window(self.mat, b, area, shown)
            if win is None:
                continue
            for f in self._found_from(image, calib, self._window_looker(win), win[0], win[1],
                                      gains):
                x, y = f.base_center_mm
                if _farthest_past(self.mat, b, (x, y, x, y))[1] > 0:
                    finds.append(f)
        return finds

    def _window_looker(self, win: tuple[float, float, float, float]) -> Looker:
        looker = self._windows.get(win)
        if looker is None:
            if len(self._windows) >= 4:   # a new camera or layout: the old windows are done
                self._windows.clear()
            x0, y0, x1, y1 = win
            area = Mat(dictionary=self.mat.dictionary, marker_size_mm=self.mat.marker_size_mm,
                       width_mm=x1 - x0, height_mm=y1 - y0, zones={}, printed=False)
            looker = self._windows[win] = Looker(area, self.model)
        return looker

    def _found_from(self, image: np.ndarray, calib: Calibration, looker: Looker, x0: float,
                    y0: float, gains: np.ndarray | None = None) -> list[PyramidFind]:
        """The finds of ``looker``, whose frame's origin is table point (x0, y0), in the
        table frame (``gains``: see :meth:`Looker.look`)."""
        finds = self._find(image, looker.look(image, moved(calib, -x0, -y0), gains), (x0, y0))
        if not x0 and not y0:
            return finds
        return [replace(f, base_center_mm=(f.base_center_mm[0] + x0, f.base_center_mm[1] + y0))
                for f in finds]

    def _find(self, image: np.ndarray, look: Look, origin: tuple[float, float] = (0.0, 0.0)
              ) -> list[PyramidFind]:
        """The finds of one look, in its frame (whose origin is table point ``origin``: for
        :attr:`trace`)."""
        t0 = time.perf_counter()
        reads = self.read_candidates(image, look)
        if reads is None:
            return []
        cands, centers, h_at = reads.candidates, reads.centers, reads.heat
        patches, pw = reads.patches, reads.p_what
        none = pw[:, self.what.column("none")]
        p_ver = self._second_opinion(look, image, reads)
        # nan (not asked) is never >= the verifier's floor
        floor = verify_min(look, busy_table(none, p_ver, self.max_none))
        taken = (none < self.max_none) | (p_ver >= floor) | self._warm_hue(reads)
        p_ver = self._last_word(look, image, reads, taken, p_ver)
        keep = np.flatnonzero(taken | (p_ver >= floor))
        # the checks that need neither the shape classifier nor a fit come first: on the
        # bench's renders they turn away a third of these, whose shape reads would be wasted
        first = {int(k): self._first_checks(look, cands[k], pw[k], float(h_at[k]),
                                            float(p_ver[k]), floor) for k in keep}
        keep = np.array([k for k in keep if first[int(k)] is not None], np.int64)
        checked = keep
        first = self._color_read(look, image, reads, keep, first)
        first = self._white_or_clear(look, image, reads, keep, first)
        keep, p_hue = self._art_dropped(look, image, reads, keep, first, p_ver)
        read_from: dict[int, int] = {}    # id of a find -> its candidate (for trace)
        finds: list[PyramidFind] = []
        if len(keep):
            colors = [(first[int(k)] or ("",))[0] for k in keep]
            ps = self._steady_shape(look, image, centers[keep], self._shape(patches[keep]))
            ps = self._sized(look, image, centers[keep], ps, colors)
            ps = self._pointed(look, image, centers[keep], ps, colors)
            up = patch_up_deg(centers[keep], look.camera[:2])
            for j, k in enumerate(keep):
                f = self._read(look, cands[k], pw[k], ps[j], float(up[j]), float(h_at[k]),
                               float(p_ver[k]), first[int(k)], float(p_hue[k]))
                if f is not None:
                    finds.append(f)
                    read_from[id(f)] = int(k)
        finds = self._one_per_pyramid(finds, look.camera)
        if self.trace is not None:
            self.trace += _fates(reads, origin, p_ver, p_hue, checked, keep,
                                 list(read_from.values()), [read_from[id(f)] for f in finds])
        log.debug("%d candidates -> %d pyramids in %.0f ms", len(cands), len(finds),
                  1000 * (time.perf_counter() - t0))
        return finds

    def read_candidates(self, image: np.ndarray, look: Look,
                        heat_peak: float | None = None) -> Reads | None:
        """Stage 2-3: the colour table's candidates and the heat map's peaks of at least
        ``heat_peak`` (None: :data:`HEAT_PEAK`, read at each call) beside them, those not
        cold, each read by the colour classifier (None when there is none). The verifier's
        training cutter reads with a lower ``heat_peak``, so that it sees the faint peaks
        too."""
        heat = None if self.heat is None else self.heat(look.view, VIEW_PPM, look.blurred)
        cands = look.candidates
        if heat is not None:
            peak = HEAT_PEAK if heat_peak is None else heat_peak
            cands = cands + self._heat_candidates(heat, cands, peak, look.topdown.mat)
        if not cands:
            return None
        centers = np.array([c.center_mm for c in cands], np.float64)
        h_at = np.zeros(len(cands), np.float32) if heat is None else heat.at(centers)
        if heat is not None:
            warm = np.flatnonzero(h_at >= COLD)
            if not len(warm):
                return None
            cands = [cands[k] for k in warm]
            centers, h_at = centers[warm], h_at[warm]
        patches = look.patches(image, centers)
        return Reads(cands, centers, h_at, np.array([c.source == "heat" for c in cands]),
                     patches, self.what.probs(patches))

    def _second_opinion(self, look: Look, image: np.ndarray, reads: Reads) -> np.ndarray:
        """p(pyramid) of the verifier for the doubtful candidates, nan for the others (and for
        all without a heat map: the heat is one of the verifier's inputs)."""
        out = np.full(len(reads.candidates), np.nan, np.float32)
        if self.verifier is None or self.heat is None:
            return out
        ask = np.flatnonzero(doubtful(reads.p_what, self.what.names, reads.from_heat))
        if len(ask):
            out[ask] = self._ask(look, image, reads, ask)
        if VERIFY_STEADY_MM and len(ask):
            near = ask[(out[ask] >= VERIFY_STEADY[0]) & (out[ask] < VERIFY_STEADY[1])]
            if len(near):
                out[near] = self._steady_verify(look, image, reads, near, out[near])
        return out

    def _steady_verify(self, look: Look, image: np.ndarray, reads: Reads, near: np.ndarray,
                       p: np.ndarray) -> np.ndarray:
        """``p`` (the verifier's answers for candidates ``near``) averaged with its answers
        at cuts VERIFY_STEADY_MM to either side along the line from the camera's nadir."""
        assert self.verifier is not None
        pts = _beside_on_nadir_line(reads.centers[near], look.camera, VERIFY_STEADY_MM)
        feats = features(reads.p_what[near], self.what.names, reads.heat[near],
                         reads.from_heat[near])
        more = self.verifier.p_pyramid(look.patches(image, pts, self.verifier.patch_mm),
                                       np.concatenate([feats, feats]))
        out: np.ndarray = (p + more[:len(near)] + more[len(near):]) / 3.0
        return out

    def _ask(self, look: Look, image: np.ndarray, reads: Reads, ask: np.ndarray
             ) -> np.ndarray:
        """The verifier's p(pyramid) for candidates ``ask`` (indices into ``reads``)."""
        assert self.verifier is not None
        span = self.verifier.patch_mm
        mine = reads.patches[ask] if span == PATCH_MM else look.patches(
            image, reads.centers[ask], span)
        return self.verifier.p_pyramid(mine, features(reads.p_what[ask], self.what.names,
                                                      reads.heat[ask], reads.from_heat[ask]))

    def _last_word(self, look: Look, image: np.ndarray, reads: Reads, taken: np.ndarray,
                   p_ver: np.ndarray) -> np.ndarray:
        """``p_ver`` with the candidates turned away unasked (the colour classifier's none
        too high, not doubtful) asked too; their answer counts only where it is at least
        :data:`VERIFY_RECALL_MIN`."""
        if self.verifier is None or self.heat is None or VERIFY_RECALL_MIN > 1.0:
            return p_ver
        ask = np.flatnonzero(~taken & np.isnan(p_ver))
        if not len(ask):
            return p_ver
        p = self._ask(look, image, reads, ask)
        out = p_ver.copy()
        sure = p >= VERIFY_RECALL_MIN
        out[ask[sure]] = p[sure]
        return out

    def _art_dropped(self, look: Look, image: np.ndarray, reads: Reads, keep: np.ndarray,
                     first: dict[int, tuple[str, float, bool] | None], p_ver: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray]:
        """``keep`` without the hues the verifier was not asked about and now gives under
        :data:`VERIFY_HUE_MIN`, and the verifier's answer for every candidate (``p_ver``
        with these hues' answers filled in)."""
        p_all = p_ver.copy()
        if self.verifier is None or self.heat is None or not VERIFY_HUE_MIN or not len(keep):
            return keep, p_all
        ask = np.array([k for k in keep if np.isnan(p_ver[k])
                        and (first[int(k)] or ("", 0.0, False))[0] in HUES], np.int64)
        if not len(ask):
            return keep, p_all
        p = self._ask(look, image, reads, ask)
        p_all[ask] = p
        art = set(ask[p < VERIFY_HUE_MIN].tolist())
        out: np.ndarray = np.array([k for k in keep if int(k) not in art], np.int64)
        return out, p_all

    def _warm_hue(self, reads: Reads) -> np.ndarray:
        """Boolean (N,): the colour table's candidates whose likeliest colour is a hue and
        where the heat map is at least HUE_WARM."""
        if self.heat is None or not HUE_WARM:
            return np.zeros(len(reads.candidates), bool)
        hue_cols = [i for i, n in enumerate(self.what.names) if n in HUES]
        other = [i for i, n in enumerate(self.what.names) if n != "none" and n not in HUES]
        pw = reads.p_what
        is_hue = pw[:, hue_cols].max(axis=1) > pw[:, other].max(axis=1)
        out: np.ndarray = is_hue & ~reads.from_heat & (reads.heat >= HUE_WARM)
        return out

    def _shape(self, patches: np.ndarray) -> np.ndarray:
        """The shape classifier's probabilities for ``patches``, averaged with its read of
        each patch mirrored left to right (:data:`SHAPE_MIRRORED`)."""
        return _mirror_read(self.how, patches, SHAPE_MIRRORED,
                            _mirror_columns(tuple(self.how.names)), SHAPE_MIRROR_SURE)

    def _pointed(self, look: Look, image: np.ndarray, centers: np.ndarray, ps: np.ndarray,
                 colors: list[str]) -> np.ndarray:
        """The shape classifier's probabilities ``ps`` with the lying sectors of the finds
        whose colour is one of POINT_READ_COLORS weighed by the pointing reader's
        (:func:`blend_pointing`)."""
        if self.pointer is None or not POINT_READ_WEIGHT or not len(ps):
            return ps
        lying = ps[:, [i for i, n in enumerate(self.how.names) if "L" in n]].sum(axis=1)
        ask = np.flatnonzero([c in POINT_READ_COLORS for c in colors])
        ask = ask[lying[ask] >= POINT_READ_LYING]
        if not len(ask):
            return ps
        p12 = _mirror_read(self.pointer, look.patches(image, centers[ask], self.point_span),
                           POINT_READ_MIRRORED, _mirror_columns(tuple(self.pointer.names)),
                           POINT_MIRROR_SURE)
        out = ps.copy()
        out[ask] = blend_pointing(ps[ask], self.how.names, p12, self.pointer.names,
                                  POINT_READ_WEIGHT)
        return out

    def _steady_shape(self, look: Look, image: np.ndarray, centers: np.ndarray,
                      ps: np.ndarray) -> np.ndarray:
        """The shape classifier's probabilities ``ps`` (N, classes) with those of the
        reads it is unsure of averaged with reads SHAPE_SHIFT_MM to either side along the
        line from the camera's nadir (the way parallax leans an upright apex)."""
        unsure = np.flatnonzero(shape_sureness(ps, self.how.names) < SHAPE_SURE)
        if not len(unsure) or not SHAPE_SHIFT_MM:
            return ps
        pts = _beside_on_nadir_line(centers[unsure], look.camera, SHAPE_SHIFT_MM)
        more = self.how.probs(look.patches(image, pts)).reshape(2, len(unsure), -1)
        out = ps.copy()
        out[unsure] = (ps[unsure] + more.sum(axis=0)) / 3.0
        return out

    def _sized(self, look: Look, image: np.ndarray, centers: np.ndarray, ps: np.ndarray,
               colors: list[str]) -> np.ndarray:
        """The shape classifier's probabilities ``ps`` with those of the finds whose colour
        is one of SIZE_READ_COLORS weighed by the size reader's (:func:`blend_size`; read
        as cut and mirrored: SIZE_READ_MIRRORED)."""
        if self.sizer is None or not SIZE_READ_WEIGHT:
            return ps
        ask = np.flatnonzero([c in SIZE_READ_COLORS for c in colors])
        ask = ask[shape_sureness(ps[ask], self.how.names) < SIZE_READ_SURE]
        if not len(ask):
            return ps
        p6 = _mirror_read(self.sizer, look.patches(image, centers[ask], self.size_span),
                          SIZE_READ_MIRRORED, sure=SIZE_MIRROR_SURE)
        out = ps.copy()
        out[ask] = blend_size(ps[ask], self.how.names, p6, self.sizer.names, SIZE_READ_WEIGHT)
        return out

    def _color_read(self, look: Look, image: np.ndarray, reads: Reads, keep: np.ndarray,
                    first: dict[int, tuple[str, float, bool] | None]
                    ) -> dict[int, tuple[str, float, bool] | None]:
        """``first`` with the colour of each kept candidate that the colour classifier gives
        less than COLOR_READ_SURE chosen again: its ten probabilities times the colour
        reader's to COLOR_READ_WEIGHT (a colour profile's naming stands)."""
        if self.color_reader is None or not COLOR_READ_WEIGHT or self.profile is not None:
            return first
        # (every candidate in ``keep`` has passed the first checks)
        ask = [int(k) for k in keep if (first[int(k)] or ("", 1.0))[1] < COLOR_READ_SURE]
        return self._renamed(look, image, reads, first, ask, self.color_reader,
                             self.color_read_span, COLOR_READ_WEIGHT)

    def _white_or_clear(self, look: Look, image: np.ndarray, reads: Reads, keep: np.ndarray,
                        first: dict[int, tuple[str, float, bool] | None]
                        ) -> dict[int, tuple[str, float, bool] | None]:
        """``first`` with the colour of each kept white or clear candidate chosen again: the
        colour classifier's two probabilities times the white-or-clear reader's to
        WHITE_CLEAR_WEIGHT (a colour profile's naming stands)."""
        if self.white_clear is None or not WHITE_CLEAR_WEIGHT or self.profile is not None:
            return first
        ask = [int(k) for k in keep if (first[int(k)] or ("",))[0] in WHITE_CLEAR_CLASSES]
        return self._renamed(look, image, reads, first, ask, self.white_clear,
                             self.white_clear_span, WHITE_CLEAR_WEIGHT)

    def _renamed(self, look: Look, image: np.ndarray, reads: Reads,
                 first: dict[int, tuple[str, float, bool] | None], ask: list[int],
                 reader: PatchClassifier, span_mm: float, weight: float
                 ) -> dict[int, tuple[str, float, bool] | None]:
        """``first`` with candidates ``ask`` named again by a colour ``reader`` (its classes
        are colours): among the reader's colours, the colour classifier's probability
        times the reader's to ``weight``, the largest wins; p(colour) stays the colour
        classifier's for the colour named."""
        if not ask:
            return first
        names = reader.names
        p = reader.probs(look.patches(image, reads.centers[ask], span_mm))
        cols = [self.what.column(c) for c in names]
        out = dict(first)
        for j, k in enumerate(ask):
            _, _, cold = first[k] or ("", 0.0, False)
            score = reads.p_what[k, cols] * np.power(p[j] + 1e-6, weight)
            name = names[int(np.argmax(score))]
            out[k] = (name, float(reads.p_what[k, self.what.column(name)]), cold)
        return out

    def _heat_candidates(self, heat: HeatMap, cands: list[Candidate],
                         min_p: float = HEAT_PEAK, mat: Mat | None = None) -> list[Candidate]:
        """The heat map's peaks of at least ``min_p`` where the colour table proposed
        nothing; past the play area of a :func:`bordered` ``mat``, of at least
        HEAT_PEAK_PAST_MAT."""
        pts = peaks_beside(heat, cands, min_p)
        b = float(getattr(mat, "border_mm", 0.0))
        if mat is not None and b and len(pts):
            x, y = pts[:, 0], pts[:, 1]
            past = (x < b) | (y < b) | (x > mat.width_mm - b) | (y > mat.height_mm - b)
            pts = pts[~past | (heat.at(pts) >= HEAT_PEAK_PAST_MAT)]
        return [Candidate((float(x), float(y)), BACKGROUND, 0.0, "heat") for x, y in pts]

    # -- reading one candidate --------------------------------------------------------------

    def _color(self, p_what: np.ndarray, look: Look, center: np.ndarray) -> tuple[str, float]:
        probs = {n: float(p_what[i]) for i, n in enumerate(self.what.names) if n != "none"}
        if self.profile is not None:
            named = self.profile.classify(look, center)
            if named is not None:
                return named, max(probs.values())
        name = max(probs, key=lambda n: probs[n])
        return name, probs[name]

    def _first_checks(self, look: Look, cand: Candidate, p_what: np.ndarray, heat: float,
                      p_ver: float = math.nan, floor: float | None = None
                      ) -> tuple[str, float, bool] | None:
        """The checks on a candidate that need neither its shape nor a fit: None where it is
        turned away, else (colour, p(colour), cold: the heat map is cold there, so its hue
        must fill its silhouette). ``floor``: the verifier's floor in this look (default
        :func:`verify_min` of a table that is not busy)."""
        color, p_color = self._color(p_what, look, np.array(cand.center_mm, np.float64))
        p_none = float(p_what[self.what.column("none")])
        if not math.isnan(p_ver):
            # the second opinion was trained on exactly these candidates: it replaces the
            # thresholds below (a hue still has to pass the silhouette tests after the fit)
            floor = verify_min(look) if floor is None else floor
            return (color, p_color, False) if p_ver >= floor else None
        if p_none >= self.max_none and color not in HUES:
            # only a hue is read against the colour classifier's none (HUE_WARM): a colour
            # profile may name another colour than the classifier's likeliest
            return None
        if cand.source == "heat" and color in HUES and not (
                p_none < HEAT_HUE_MAX_NONE and heat >= HEAT_HUE_MIN_HEAT):
            # a hue's plastic makes colour-table candidates of its own; one the heat map
            # alone proposes is card art (on dev renders these were nearly all false, read
            # as red with no red pixels under them) unless both networks are sure
            return None
        if color in ("white", "clear") and p_none >= self.max_none_light and heat < HEAT_LIGHT:
            return None
        if color == "black" and p_none >= MAX_NONE_BLACK:
            return None
        cold = self.heat is not None and heat < (
            MIN_HEAT_LIGHT if color in ("white", "clear") else
            MIN_HEAT_BLACK if color == "black" else MIN_HEAT)
        if cold and color not in HUES:
            return None
        return color, p_color, cold

    def _read(self, look: Look, cand: Candidate, p_what: np.ndarray, p_how: np.ndarray,
              up_deg: float, heat: float = 0.0, p_ver: float = math.nan,
              first: tuple[str, float, bool] | None = None,
              p_hue: float = math.nan) -> PyramidFind | None:
        """One candidate read into a find, or None where it is turned away. ``first``: what
        :meth:`_first_checks` gave for it, when the caller has already asked."""
        if first is None:
            first = self._first_checks(look, cand, p_what, heat, p_ver)
            if first is None:
                return None
        color, p_color, cold = first
        center = np.array(cand.center_mm, np.float64)
        by_size = []
        for iu, il in _size_columns(tuple(self.how.names)):
            by_size.append((float(p_how[iu]), float(p_how[il].sum()), p_how[il]))
        totals = [u + lying for u, lying, _ in by_size]
        pips = int(np.argmax(totals)) + 1
        p_up, p_lie, _ = by_size[pips - 1]
        upright = p_up >= p_lie

        def place(size: int) -> tuple[np.ndarray, float, float, float | None]:
            pointing = None
            if not upright:
                rel, _ = pointing_from_sectors(by_size[size - 1][2])
                pointing = (up_deg + rel) % 360.0
            return (*self._place(look, cand, color, size, upright, pointing, center), pointing)

        p_none = float(p_what[self.what.column("none")])
        heat_hue = cand.source == "heat" and color in HUES
        verified = not math.isnan(p_ver)
        base, ang, iou, pointing = place(pips)
        if heat_hue and iou <= 0.0 and not (p_ver >= HEAT_HUE_TRUST and p_none < SURE) \
                and not p_ver >= HEAT_HUE_SURE:
            # not a pixel of a hue's plastic under it: the false ones on dev renders were
            # all such (card art both networks took for a pyramid) unless both are sure, or
            # the verifier all but certain
            return None
        certain = color in HUES and iou > 0.0 and p_hue >= HUE_CERTAIN
        if cold and not iou >= HEAT_OVERRULED_IOU and not certain:
            # a hue that fills its silhouette stands against a cold heat map
            return None
        trusted = (p_hue >= HUE_IOU_TRUST and iou >= HUE_IOU_TRUST_MIN) or \
            p_ver >= VERIFY_IOU_TRUST or \
            (p_hue >= HUE_HEAT_TRUST and heat >= HUE_HEAT_TRUST_HEAT) or certain
        if color in HUES and iou < self.min_iou_hue and p_none > SURE and not trusted:
            log.debug("%s at %s rejected: silhouette IoU %.2f", color, center.round(1), iou)
            return None
        if self.heat is not None and color in HUES and iou < self.min_iou_hue \
                and heat < MIN_HEAT_FLAT and not trusted:
            return None
        if color in HUES and iou > 0.0:
            # the silhouette's size, seen in the colour's pixels, against the classifier's
            # (after the checks above: only for finds, each size costs a fit)
            fits = {pips: (base, ang, iou, pointing)}

            def worth(s: int) -> float:
                return math.log(totals[s - 1] + 1e-6)

            for size in (1, 2, 3):
                # a size the classifier all but rules out cannot win even with a perfect
                # silhouette (IoU 1): not fitted, same answer, a fit saved
                if size != pips and worth(size) + SIZE_FIT_WEIGHT > \
                        worth(pips) + SIZE_FIT_WEIGHT * iou:
                    fits[size] = place(size)
            pips = max(fits, key=lambda s: worth(s) + SIZE_FIT_WEIGHT * fits[s][2])
            base, ang, iou, pointing = fits[pips]
            p_up, p_lie, _ = by_size[pips - 1]
        if not upright:
            pointing = ang
        p_pyr = p_ver if verified else 1.0 - p_none
        # how sure the whole read is: pyramid, and its size and pose together. Two reads of
        # one pyramid (a blob's part and a distance peak 7 mm off) keep the surer
        # (_one_per_pyramid); the pose's share within its size alone (the earlier measure)
        # tied at 0.99 in the sample game between the right 1-pip upright (size 0.99) and a
        # 2-pip lying read at the peak (size 0.86). Dev renders (seeds 550000 / 560000,
        # 100 images a group): tables right 95 -> 96 and 129 -> 129, pips +0.1 to +0.4
        conf = p_pyr * max(p_up, p_lie)
        return PyramidFind(
            color=color, pips=pips, upright=upright, pointing_deg=pointing,
            base_center_mm=(float(base[0]), float(base[1])), confidence=float(conf),
            extra={"p_pyramid": round(p_pyr, 3),
                   "p_color": round(p_color, 3), "p_size": round(float(totals[pips - 1]), 3),
                   "iou": round(iou, 3), "heat": round(heat, 3)})

    # -- geometry ---------------------------------------------------------------------------

    def _hull_px(self, pips: int, upright: bool, ang: float, base: np.ndarray,
                 cam: np.ndarray) -> np.ndarray:
        fp = footprint_mm(pips, upright, ang, base, cam)
        hull: np.ndarray = cv2.convexHull((fp * VIEW_PPM - 0.5).astype(np.float32)).reshape(-1, 2)
        return hull

    def _place(self, look: Look, cand: Candidate, color: str, pips: int, upright: bool,
               pointing: float | None, center: np.ndarray) -> tuple[np.ndarray, float, float]:
        """(base centre mm, pointing or yaw deg, IoU with the blob): the silhouette slid onto
        the pixels of its colour near the candidate, and a lying one's direction refined."""
        cam = look.camera
        ang0 = 0.0 if pointing is None else pointing
        # start: the silhouette's centroid on the candidate (a blob centroid)
        hull = self._hull_px(pips, upright, ang0, center, cam)
        shift = center * VIEW_PPM - 0.5 - polygon_centroid(hull)
        base = center + shift / VIEW_PPM
        label = look.seg.label
        r = int(math.ceil(40 * VIEW_PPM))
        u0, v0 = int(center[0] * VIEW_PPM) - r, int(center[1] * VIEW_PPM) - r
        H, W = label.shape
        x0, y0, x1, y1 = max(0, u0), max(0, v0), min(W, u0 + 2 * r), min(H, v0 + 2 * r)
        if x1 <= x0 or y1 <= y0:
            return base, ang0, 0.0
        win = label[y0:y1, x0:x1]
        # its plastic: pixels of its colour group (translucent plastic over art straddles
        # neighbouring hues, so any hue or black counts for a hue; white and clear for those)
        group = LIGHT_CLASSES if color in ("white", "clear") else DARK_CLASSES
        mask = (_GROUP_LUT[group][win]).astype(np.uint8)
        if mask.sum() < 0.3 * cv2.contourArea(hull):
            # too few pixels of its colour (white, clear, black on similar art): the
            # candidate's centre stands
            return base, ang0, 0.0
        origin = np.array([x0, y0], np.float64)
        own = mask    # the pixels the silhouette slides onto (SLIDE_OWN)
        if color in HUES:
            mine = (win == COLORS.index(color)).astype(np.uint8)
            if mine.sum() >= SLIDE_OWN * cv2.contourArea(hull):
                own = mine
        grow = _disc_px(NEAR_MM * VIEW_PPM)
        reach = _disc_px(SLIDE_REACH_MM * VIEW_PPM)

        def score(b: np.ndarray, a: float) -> float:
            pm = np.zeros_like(mask)
            h = self._hull_px(pips, upright, a, b, cam) - origin
            cv2.fillConvexPoly(pm, np.round(h * 16).astype(np.int32), 1, cv2.LINE_8, 4)
            near = cv2.dilate(pm, grow)
            inter = int(np.count_nonzero(pm & mask))
            union = int(np.count_nonzero(pm | (mask & near)))
            return inter / union if union else 0.0

        for _ in range(2):
            # slide: the centroid of the colour's pixels within the grown silhouette
            pm = np.zeros_like(mask)
            h = self._hull_px(pips, upright, ang0, base, cam) - origin
            cv2.fillConvexPoly(pm, np.round(h * 16).astype(np.int32), 1, cv2.LINE_8, 4)
            sel = own & cv2.dilate(pm, reach)
            m = cv2.moments(sel, binaryImage=True)
            if m["m00"] < 10:
                break
            d = np.array([m["m10"], m["m01"]]) / m["m00"] - polygon_centroid(h)
            step = d / VIEW_PPM
            if own is mask and SLIDE_MAX_GROUP_MM > 0:
                n = float(np.hypot(*step))
                if n > SLIDE_MAX_GROUP_MM:
                    step = step * (SLIDE_MAX_GROUP_MM / n)
            base = base + step
        best = (score(base, ang0), base, ang0)
        if not upright:
            # the classifier's 30-degree sectors leave the apex's direction to +-15 degrees:
            # the overlap picks it to 5, then the slide is redone for that direction
            for da in (-10.0, -5.0, 5.0, 10.0):
                s = score(base, ang0 + da)
                if s > best[0] + 1e-9:
                    best = (s, base, ang0 + da)
        s, b, a = best
        return b, a % 360.0, s

    def _one_per_pyramid(self, finds: list[PyramidFind], cam: np.ndarray) -> list[PyramidFind]:
        keep: list[tuple[PyramidFind, np.ndarray, np.ndarray, tuple[float, ...]]] = []
        for f in sorted(finds, key=lambda f: -f.confidence):
            ang = f.pointing_deg if f.pointing_deg is not None else 0.0
            fp = footprint_mm(f.pips, f.upright, ang, np.array(f.base_center_mm), cam)
            hull = cv2.convexHull(fp.astype(np.float32)).reshape(-1, 2)
            ground = ground_footprint_mm(f.pips, f.upright, f.pointing_deg,
                                         np.array(f.base_center_mm))
            box = _box(hull)
            if all(not _same_pyramid(f, hull, box, k, h, b)
                   and not _same_ground(f, ground, k, g) for k, h, g, b in keep):
                keep.append((f, hull, ground, box))
        return [k for k, _, _, _ in keep]


def blend_size(ps: np.ndarray, shape_names: tuple[str, ...], p_size: np.ndarray,
               size_names: tuple[str, ...], weight: float) -> np.ndarray:
    """Shape probabilities ``ps`` (N, shape classes) times the size reader's ``p_size`` (N,
    six classes ``{pips}U`` / ``{pips}L``) for each class's size and pose, to ``weight``,
    normalised: a product of the two experts (the lying sectors keep their shares)."""
    col = [size_names.index(f"{n[0]}{'U' if n[1] == 'U' else 'L'}") for n in shape_names]
    out = ps * np.power(np.asarray(p_size, np.float64)[:, col] + 1e-6, weight)
    total = out.sum(axis=1, keepdims=True)
    res: np.ndarray = (out / np.maximum(total, 1e-12)).astype(np.float32)
    return res


def blend_pointing(ps: np.ndarray, shape_names: tuple[str, ...], p_point: np.ndarray,
                   point_names: tuple[str, ...], weight: float) -> np.ndarray:
    """Shape probabilities ``ps`` (N, shape classes) with each size's lying sectors times
    the pointing reader's ``p_point`` (N, sectors ``L{k:02d}``) to ``weight``, rescaled to
    that size's lying total: a product of the two experts on where the apex points that
    leaves pips and upright or lying alone."""
    out = np.array(ps, np.float64)
    # the reader's sectors in order, the same for every size
    mine = np.power(np.asarray(p_point, np.float64)[
        :, [point_names.index(f"L{k:02d}") for k in range(SECTORS)]] + 1e-6, weight)
    for pips in (1, 2, 3):
        cols = [shape_names.index(f"{pips}L{k:02d}") for k in range(SECTORS)]
        total = out[:, cols].sum(axis=1, keepdims=True)
        blended = out[:, cols] * mine
        out[:, cols] = blended / np.maximum(blended.sum(axis=1, keepdims=True), 1e-12) * total
    res: np.ndarray = out.astype(np.float32)
    return res


def _mirror_read(reader: PatchClassifier, patches: np.ndarray, mirrored: bool,
                 columns: np.ndarray | None = None, sure: float | None = None) -> np.ndarray:
    """``reader``'s probabilities for ``patches``, averaged with its read of them mirrored
    left to right where ``mirrored``; ``columns`` (:func:`_mirror_columns`) maps the classes
    a mirror changes (a lying apex's sector) back, None where it changes none. With ``sure``,
    only the patches whose first read gives its likeliest class less than that are read
    again."""
    p = reader.probs(patches)
    if not mirrored or not len(p):
        return p
    again = np.arange(len(p)) if sure is None else np.flatnonzero(p.max(axis=1) < sure)
    if not len(again):
        return p
    # a slice, not a gather, when every patch is read again: one copy of them instead of two
    mine = patches if len(again) == len(p) else patches[again]
    m = reader.probs(np.ascontiguousarray(mine[:, :, ::-1]))
    out: np.ndarray = p.copy()
    out[again] = (p[again] + (m if columns is None else m[:, columns])) / 2.0
    return out


def _beside_on_nadir_line(centers: np.ndarray, camera: np.ndarray, shift_mm: float
                          ) -> np.ndarray:
    """(2N, 2): ``centers`` (N, 2 mm) moved ``shift_mm`` away from the camera's nadir
    (``camera``'s x, y), then the same moved toward it: the way parallax leans an upright
    apex, so a second and third cut there steady a read."""
    out_dir = centers - np.asarray(camera[:2], np.float64)
    out_dir /= np.maximum(np.linalg.norm(out_dir, axis=1, keepdims=True), 1e-9)
    pts: np.ndarray = np.concatenate([centers + shift_mm * out_dir,
                                      centers - shift_mm * out_dir])
    return pts


def _patch_mm(classifier: PatchClassifier) -> float:
    """The span of table (mm) a patch classifier's file says it was trained on."""
    try:
        return float(classifier.meta.get("patch_mm", ""))
    except ValueError:
        from models import ModelError

        raise ModelError(f"model file {classifier.path}: no patch_mm in its metadata") from None


@functools.lru_cache(maxsize=4)
def _mirror_columns(names: tuple[str, ...]) -> np.ndarray:
    """Column j of the result: the class of a mirrored patch that class ``names[j]`` of the
    patch itself is. Mirroring left to right keeps "up" (away from the nadir) and turns an
    apex k sectors clockwise from up to k counter-clockwise; an upright class stays. Kept
    per list of names (read-only): each read of a patch batch asks for it."""
    cols = []
    for n in names:
        pips, lying, k = n.partition("L")
        cols.append(names.index(f"{pips}L{mirror_sector(int(k)):02d}") if lying
                    else names.index(n))
    out = np.array(cols, np.int64)
    out.setflags(write=False)
    return out


@functools.lru_cache(maxsize=4)
def _size_columns(names: tuple[str, ...]) -> tuple[tuple[int, list[int]], ...]:
    """Per size (1, 2, 3 pips): the column of upright and the twelve of lying, in sector
    order, among shape classes ``names``. Kept per list of names: every candidate read asks
    (39 look-ups each)."""
    return tuple((names.index(f"{pips}U"),
                  [names.index(f"{pips}L{k:02d}") for k in range(SECTORS)])
                 for pips in (1, 2, 3))


@functools.lru_cache(maxsize=8)
def _disc_px(radius_px: float) -> np.ndarray:
    """An elliptical structuring element of the given radius, rounded to whole pixels."""
    r = max(1, int(round(radius_px)))
    disc: np.ndarray = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1, 2 * r + 1))
    return disc


def _same_pyramid(a: PyramidFind, ha: np.ndarray, box_a: tuple[float, ...], b: PyramidFind,
                  hb: np.ndarray, box_b: tuple[float, ...]) -> bool:
    """Two finds are one pyramid when their silhouettes (hulls ``ha``, ``hb``, bounding
    boxes ``box_a``, ``box_b``: :func:`_box`) overlap, or one's base lies inside the other's
    silhouette (two candidates on one pyramid read as different poses)."""
    if _apart(a, box_a, b, box_b):
        return False    # (most pairs on a crowded table: the boxes say it, for less)
    if math.dist(a.base_center_mm, b.base_center_mm) <= SAME_BASE_MM or _iou(ha, hb) > SAME_IOU:
        return True
    # well inside (3 mm): a touching neighbour's base lies on the silhouette's edge
    return (cv2.pointPolygonTest(hb.astype(np.float32), a.base_center_mm, True) > 3.0
            or cv2.pointPolygonTest(ha.astype(np.float32), b.base_center_mm, True) > 3.0)


def _box(poly: np.ndarray) -> tuple[float, ...]:
    """(x0, y0, x1, y1): the bounding box of a polygon (N, 2)."""
    lo, hi = poly.min(axis=0), poly.max(axis=0)
    return float(lo[0]), float(lo[1]), float(hi[0]), float(hi[1])


def _apart(a: PyramidFind, box_a: tuple[float, ...], b: PyramidFind, box_b: tuple[float, ...]
           ) -> bool:
    """True where :func:`_same_pyramid` cannot hold for two finds whose silhouettes have the
    bounding boxes ``box_a`` and ``box_b`` (:func:`_box`): the bases more than SAME_BASE_MM
    apart, the boxes apart (no overlap) and neither base inside the other's box (not inside
    its silhouette). Most pairs on a crowded table are such, and the test costs a fraction
    of the overlap's."""
    (ax, ay), (bx, by) = a.base_center_mm, b.base_center_mm
    return (math.dist((ax, ay), (bx, by)) > SAME_BASE_MM
            and (box_a[2] < box_b[0] or box_b[2] < box_a[0]
                 or box_a[3] < box_b[1] or box_b[3] < box_a[1])
            and not (box_b[0] < ax < box_b[2] and box_b[1] < ay < box_b[3])
            and not (box_a[0] < bx < box_a[2] and box_a[1] < by < box_a[3]))


def _same_ground(a: PyramidFind, ga: np.ndarray, b: PyramidFind, gb: np.ndarray) -> bool:
    """Two finds are one pyramid where the ground each would stand on (``ga``, ``gb``)
    overlaps more than SAME_GROUND of the larger, whatever their colours. (Of the larger:
    two touching neighbours read a few millimetres toward each other overlap by a quarter
    of a 1-pip's ground, a read twice by far more of both.)"""
    if not SAME_GROUND:
        return False
    if math.dist(a.base_center_mm, b.base_center_mm) > 40.0:
        # farther apart, two 3-pips' grounds (about 46 mm long lying) touch at most at a tip
        return False
    inter, area_a, area_b = _overlap(ga, gb)
    larger = max(area_a, area_b)
    return inter > 0 and larger > 0 and inter / larger > SAME_GROUND


def _overlap(a: np.ndarray, b: np.ndarray) -> tuple[float, float, float]:
    """(intersection, area of ``a``, area of ``b``) of two convex polygons; the areas are
    0 where they do not meet (not needed then)."""
    fa, fb = a.astype(np.float32), b.astype(np.float32)
    inter, _ = cv2.intersectConvexConvex(fa, fb)
    if inter <= 0:
        return 0.0, 0.0, 0.0
    return float(inter), float(cv2.contourArea(fa)), float(cv2.contourArea(fb))


def _iou(a: np.ndarray, b: np.ndarray) -> float:
    inter, area_a, area_b = _overlap(a, b)
    if inter <= 0:
        return 0.0
    union = area_a + area_b - inter
    return inter / union if union > 0 else 0.0


def find_pyramids(image: np.ndarray, calib: Calibration, mat: Mat,
                  model: ColorModel | None = None) -> list[PyramidFind]:
    """One-shot helper; build a :class:`PyramidFinder` once for many images."""
    return PyramidFinder(mat, model).find(image, calib)
