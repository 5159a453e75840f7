"""Map camera pixels to the table frame from the mat's ArUco markers.

Each of the four markers gives four corners whose table positions the mat file fixes, so a
homography from (undistorted) pixels to table millimetres follows from any marker seen.
Hands and cards hide markers during play: :class:`TableCalibrator` keeps the last good
calibration and, when only some markers are seen, fits the homography to the markers it
sees plus where the last calibration puts the hidden ones, as long as the seen markers
still agree with it (the camera has not moved). Without an earlier calibration, one to
three markers and a known lens give a camera pose (PnP) rather than a free homography.
With no marker and no usable previous calibration it says so instead of guessing. Each
marker's corners are measured twice: found by the detector, then refined along its edges
(:func:`refine_corners`), which blur does not pull.
"""

from __future__ import annotations

import functools
import itertools
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import cv2
import math

import numpy as np

from calibration.mat import BOARD_DICTIONARY, COMMON_DICTIONARIES, Mat
from calibration.motion import SPECTRUM_TILE, Deconvolver, MotionBlur, guesses
from calibration.sharpness import BLURRED_EDGE_PX

log = logging.getLogger(__name__)

#: A marker that has moved by more than this (mm, through the old homography) means the
#: camera or the mat moved: the old calibration is not trusted any more.
MOVED_MM = 8.0


@dataclass(frozen=True)
class Intrinsics:
    """Pinhole camera matrix and OpenCV distortion coefficients."""

    K: np.ndarray
    dist: np.ndarray

    @functools.cached_property
    def distorts(self) -> bool:
        """Whether the lens bends the image at all. With every coefficient zero, undistorted
        pixels are the image's own (same K), and undistorting a frame is a costly copy.
        (Kept: asked for every card patch of every frame; the instance is frozen.)"""
        return bool(np.any(np.abs(np.asarray(self.dist, np.float64)) > 0))

    def undistort_points(self, px: np.ndarray) -> np.ndarray:
        pts = np.asarray(px, np.float64).reshape(-1, 1, 2)
        return cv2.undistortPoints(pts, self.K, self.dist, P=self.K).reshape(-1, 2)

    def distort_points(self, px: np.ndarray) -> np.ndarray:
        """Undistorted pixels (N, 2) to pixels of the image as the lens took it: the inverse
        of :meth:`undistort_points`, the same as ``cv2.projectPoints`` of the rays.

        Written out in numpy for OpenCV's radial and tangential terms (up to 8
        coefficients): ``cv2.projectPoints`` took 23 ms for the 45,000 points of the pyramid
        finder's map of the mat on one core of this project's machines, this 1.5 ms. Thin
        prism and tilt terms (more than 8) go through OpenCV."""
        ideal = np.asarray(px, np.float64).reshape(-1, 2)
        K = np.asarray(self.K, np.float64)
        dist = np.asarray(self.dist, np.float64).ravel()
        x = (ideal[:, 0] - K[0, 2]) / K[0, 0]
        y = (ideal[:, 1] - K[1, 2]) / K[1, 1]
        if dist.size > 8:
            rays = np.column_stack([x, y, np.ones(len(x))])
            out, _ = cv2.projectPoints(rays.reshape(-1, 1, 3), np.zeros(3), np.zeros(3), K,
                                       dist)
            res: np.ndarray = out.reshape(-1, 2)
            return res
        k1, k2, p1, p2, k3, k4, k5, k6 = np.concatenate([dist, np.zeros(8 - dist.size)])
        r2 = x * x + y * y
        radial = (1 + r2 * (k1 + r2 * (k2 + r2 * k3))) / (1 + r2 * (k4 + r2 * (k5 + r2 * k6)))
        xd = x * radial + 2 * p1 * x * y + p2 * (r2 + 2 * x * x)
        yd = y * radial + p1 * (r2 + 2 * y * y) + 2 * p2 * x * y
        return np.column_stack([K[0, 0] * xd + K[0, 1] * yd + K[0, 2],
                                K[1, 1] * yd + K[1, 2]])


@dataclass(frozen=True)
class Calibration:
    """Pixels to table millimetres for one image, or why there is none."""

    calibrated: bool
    H: np.ndarray | None = None          # undistorted pixels -> table mm
    markers_seen: tuple[int, ...] = ()
    markers_assumed: tuple[int, ...] = ()  # hidden markers taken from the last calibration
    reprojection_mm: float | None = None   # RMS of the marker corners through H
    reason: str = ""
    intrinsics: Intrinsics | None = field(default=None, repr=False)
    image_size: tuple[int, int] | None = None  # (width, height) of the calibrated image
    # the camera moved during the exposure: the markers were read only after undoing this
    # blur (:meth:`TableCalibrator._deblurred_look`), and so should the rest of the frame be
    motion_blur: MotionBlur | None = None
    # how far the mat's marker edges spread (px, :func:`calibration.sharpness.edge_blur_px`),
    # where the pipeline measured it: the pyramid finder reads a blurred frame its own way
    edge_blur_px: float | None = None
    # the spread over which the frame is blurred (px): BLURRED_EDGE_PX, more where the
    # table is drawn larger than in any frame it was set on (:func:`calibration.sharpness.
    # blurred_over_px`: a sharp 12 MP photo's edges spread 1.6-1.8 px)
    blurred_over_px: float = BLURRED_EDGE_PX
    # with a camera file in use and all four markers seen: the RMS of their corners through
    # a homography of the picture as taken, the lens not undone (:func:`lens_doubt`)
    reprojection_without_lens_mm: float | None = None
    # the median seen marker's side measured through H over the mat file's marker size: a
    # mat file whose width and height are not the mat's scales the markers as it does the
    # cards (:func:`calibration.mat.card_scale_doubt`); None where not measured
    marker_scale: float | None = None

    @property
    def blurred(self) -> bool:
        """Whether :attr:`edge_blur_px` calls the frame blurred (False where not measured)."""
        return self.edge_blur_px is not None and self.edge_blur_px > self.blurred_over_px

    def camera_matrix(self) -> np.ndarray | None:
        """K: the known intrinsics, else one estimated from H (see :func:`estimate_camera_matrix`)."""
        if self.intrinsics is not None:
            return self.intrinsics.K
        if self.H is None or self.image_size is None:
            return None
        return estimate_camera_matrix(self.H, self.image_size)

    def to_table(self, px: np.ndarray) -> np.ndarray:
        """Image pixels (N, 2) to table mm (N, 2)."""
        if self.H is None:
            raise ValueError("not calibrated: " + self.reason)
        pts = np.asarray(px, np.float64).reshape(-1, 2)
        if self.intrinsics is not None:
            pts = self.intrinsics.undistort_points(pts)
        return cv2.perspectiveTransform(pts.reshape(-1, 1, 2), self.H).reshape(-1, 2)

    def to_image(self, mm: np.ndarray) -> np.ndarray:
        """Table mm (N, 2) to (undistorted) image pixels (N, 2)."""
        if self.H is None:
            raise ValueError("not calibrated: " + self.reason)
        pts = np.asarray(mm, np.float64).reshape(-1, 1, 2)
        return cv2.perspectiveTransform(pts, self._table_to_image).reshape(-1, 2)

    @functools.cached_property
    def _table_to_image(self) -> np.ndarray:
        """inv(H), once per calibration: the card stages map dozens of cuts a frame."""
        assert self.H is not None
        Hi: np.ndarray = np.linalg.inv(self.H)
        return Hi

    def record(self) -> dict[str, object]:
        """The calibration fields of an observation record."""
        out: dict[str, object] = {"calibrated": self.calibrated}
        if self.calibrated:
            out.update(self.fit_fields())
        if self.reason:
            out["calibration_note" if self.calibrated else "calibration_error"] = self.reason
        return out

    def fit_fields(self) -> dict[str, Any]:
        """The markers and how well the fit holds, as the record's ``calibration`` object
        gives them (:meth:`record`, and the pipeline's)."""
        out: dict[str, Any] = {"markers_seen": list(self.markers_seen)}
        if self.markers_assumed:
            out["markers_assumed"] = list(self.markers_assumed)
        if self.reprojection_mm is not None:
            out["reprojection_mm"] = round(float(self.reprojection_mm), 3)
        if self.reprojection_without_lens_mm is not None:
            out["reprojection_without_lens_mm"] = round(
                float(self.reprojection_without_lens_mm), 3)
        return out


#: In a window around where a marker was, a candidate's outline must be at least this
#: share of the window's longer side (the marker's own is about 1.1 of it): the default,
#: 3% of the frame, lets a small window fill up with specks to decode (about 4x the time).
WINDOW_MIN_PERIMETER = 0.6


def _detector(mat: Mat, window: bool = False) -> Any:
    dictionary = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, mat.dictionary))
    params = cv2.aruco.DetectorParameters()
    if window:
        params.minMarkerPerimeterRate = WINDOW_MIN_PERIMETER
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    # Reading each cell from 10x10 px of the unwarped marker instead of 4x4 averages out
    # blur and JPEG noise: 71 -> 105 of 152 markers found in the bench renders where some
    # marker was missed (far or unfocused cameras), the corners unchanged, no time added.
    params.perspectiveRemovePixelPerCell = 10
    return cv2.aruco.ArucoDetector(dictionary, params)


#: The second look at a frame where a marker was missed: an unsharp mask of this Gaussian
#: sigma (px) and amount. Out of focus or far away, a marker's cells smear into each other
#: and its outline stops looking square; the mask restores enough edge for the detector.
SHARPEN_SIGMA = 4.0
SHARPEN_AMOUNT = 3.0


#: The fourth look (:meth:`TableCalibrator._deblurred_look`) runs where the first three
#: read fewer markers than this: none, or one, whose camera pose is the weakest calibration
#: there is (about 5 mm off across the mat). Not with two: on dev renders the one frame of
#: two markers it changed (seeds 545000-590000) got a better calibration (card centres 2.1
#: -> 0.1 mm median) but more pyramids missed from the deblurred frame (7 -> 12), and a
#: camera that frames one side of the mat reads two markers and would pay the guesses for
#: nothing. It tries at most DEBLUR_GUESSES line blurs: the frames it calibrated there
#: needed the 1st to the 7th guess.
DEBLUR_LOOK_BELOW = 2
DEBLUR_GUESSES = 8
#: A larger frame is searched for a blur on a copy scaled down to this many pixels (the
#: 1080p frames the look was made on), the markers read there scaled back up: the guesses
#: cost in proportion to the pixels, and a 48 MP photo with no marker in view took 45 s and
#: 2.6 GB for them at full size (5.4 s on a 4K copy, 1.3 s at this size).
DEBLUR_MAX_PIXELS = 1920 * 1080


#: frames without the sharpened whole-frame search after one that found nothing new, as
#: long as the plain search sees the same markers
SECOND_LOOK_PAUSE = 15
#: A fixed camera whose whole-frame search read some markers but not all four (the others
#: out of view or under a hand) does not search the whole frame again for this many frames
#: while the markers it read are found again in windows around where they were, within
#: STILL_PX px (:meth:`TableCalibrator._still_in_view`; a camera that moved more is searched
#: whole at once). A missing marker is still looked for on every frame: in its window where
#: the markers seen place it, else by the half-size search alone. The whole-frame search
#: came before the cards and pyramids could start: on dev renders (seeds 541000 and
#: 543000, 440 tables each observed three times, 30 of them calibrated from one to three
#: markers) the calibration of those tables' later frames went from a median 15.5 and 17.5
#: ms (mean 23.4 and 27.8) to 4.3 and 5.7 (mean 4.6 and 6.2) on 2 threads, and all 1,320
#: records came out the same.
SEARCH_PAUSE = SECOND_LOOK_PAUSE
STILL_PX = 3.0


def _sharpened(gray: np.ndarray) -> np.ndarray:
    blur = cv2.GaussianBlur(gray, (0, 0), SHARPEN_SIGMA)
    return cv2.addWeighted(gray, 1.0 + SHARPEN_AMOUNT, blur, -SHARPEN_AMOUNT, 0)


#: OpenCV reads a marker whose outline is at least ``minMarkerPerimeterRate`` (0.03 by
#: default) of the searched image's longer side: 58 px in a 1920 px frame, 120 px in a
#: 4000 px one, so the mat that a 1080p camera reads was lost in a 12 MP photo of the same
#: table (its markers 31 px wide: "no mat marker is visible"), and a 48 MP photo asked for
#: markers of 60 px. A whole-frame search never asks for more outline than a 1920 px frame
#: does (the window searches' own rates, relative to a window, are left alone).
MAX_MIN_PERIMETER_PX = 0.03 * 1920


def _all_of_mat(gray: np.ndarray, detector: Any) -> list[tuple[int, np.ndarray]]:
    """Every detection of the mat's ids 0..3 (an id may come more than once)."""
    longest = max(gray.shape[:2])
    params, rate = None, 0.0
    if longest * 0.03 > MAX_MIN_PERIMETER_PX and hasattr(detector, "getDetectorParameters"):
        params = detector.getDetectorParameters()
        rate = params.minMarkerPerimeterRate
        if rate < 0.1 and rate * longest > MAX_MIN_PERIMETER_PX:
            params.minMarkerPerimeterRate = MAX_MIN_PERIMETER_PX / longest
            detector.setDetectorParameters(params)
        else:
            params = None
    try:
        corners, ids, _ = detector.detectMarkers(gray)
    finally:
        if params is not None:
            params.minMarkerPerimeterRate = rate
            detector.setDetectorParameters(params)
    if ids is None:   # (OpenCV 4 with none read; OpenCV 5 gives an empty array)
        return []
    return [(int(m), c.reshape(4, 2).astype(np.float64)) for m, c in zip(ids.ravel(), corners)
            if int(m) in (0, 1, 2, 3)]


def _detect(gray: np.ndarray, detector: Any) -> dict[int, np.ndarray]:
    """The mat's markers in ``gray``: the first detection of each id."""
    found: dict[int, np.ndarray] = {}
    for mid, c in _all_of_mat(gray, detector):
        found.setdefault(mid, c)
    return found


def _with_second_look(gray: np.ndarray, found: dict[int, np.ndarray], detector: Any,
                      sharp: np.ndarray | None = None) -> dict[int, np.ndarray]:
    """``found`` plus the markers that only a sharpened copy of ``gray`` (``sharp``, made
    here when not given) shows (a marker in both keeps its plain corners)."""
    out = dict(found)
    for mid, c in _detect(_sharpened(gray) if sharp is None else sharp, detector).items():
        out.setdefault(mid, c)
    return out


def _forgiving_detector(mat: Mat, window: bool = False) -> Any:
    """The third look's detector (:func:`with_third_look`). On dev renders (seeds
    545000-595000, 2,700 images) 84 images lost a marker that was wholly in view, 26 of
    them all four; in those the plain and sharpened looks found 109 of 298 such markers,
    and this look 67 more that agree with the rest, none in the wrong place (images with
    three markers or more: 21 -> 46). Each setting is needed: the paper's edge a few pixels
    outside a marker's black border is grouped with the border at the default
    minMarkerDistanceRate (0.125 of the perimeter) and the wrong one of the two can be kept
    (a sharp marker missed); a smeared marker needs threshold windows wider than the
    default 23 px and forgiveness of every bit the dictionary can correct; a marker
    touching the frame's edge is refused at the default minDistanceToBorder (3 px). It is
    forgiving enough to read the odd patch of card art as one of the mat's ids (in 10 of
    900 dev images: 8 beside the true four, 2 alone), so what it finds must agree with the
    rest (:data:`THIRD_LOOK_MM`). ``window``: for a window around one marker
    (:data:`WINDOW_MIN_PERIMETER`)."""
    det = _detector(mat, window)
    params = det.getDetectorParameters()
    params.minMarkerDistanceRate = 0.001
    params.adaptiveThreshWinSizeMax = 53
    params.adaptiveThreshWinSizeStep = 10
    params.errorCorrectionRate = 1.0
    params.minDistanceToBorder = 0
    det.setDetectorParameters(params)
    return det


#: a marker of the third look stands only where the homography fitted to every marker found
#: puts its corners within this of where the mat has them (mm, mean over its four corners,
#: the lens not yet undone). On the dev renders above the true ones were at most 7.1 mm
#: off (median 3.3); a look-alike 100 mm from where its id belongs, beside three true
#: markers, 11 mm (a homography bends to meet a fourth point, so the check is weak: the
#: rule that this look's markers alone need three of them does more)
THIRD_LOOK_MM = 8.0


def with_third_look(gray: np.ndarray, found: dict[int, np.ndarray], detector: Any,
                    corners_mm: dict[int, np.ndarray], sharp: np.ndarray | None = None
                    ) -> dict[int, np.ndarray]:
    """``found`` plus the missing markers that a forgiving detector
    (:func:`_forgiving_detector`) sees in ``gray`` or, failing that, in a sharpened copy
    (``sharp``, made here when not given), each kept only where it agrees with the others
    (:data:`THIRD_LOOK_MM`): every one of the third look's within THIRD_LOOK_MM of where
    the homography of all of them puts it, and at least three markers in all: otherwise
    ``found`` as it was."""
    cands = [(m, c) for m, c in _all_of_mat(gray, detector)
             if m not in found and _clear_of_edge(c, gray.shape)]
    if len({m for m, _ in cands} | set(found)) < 4:
        sharp = _sharpened(gray) if sharp is None else sharp
        cands += [(m, c) for m, c in _all_of_mat(sharp, detector)
                  if m not in found and _clear_of_edge(c, gray.shape)]
    return _agreeing(found, cands, corners_mm)


#: a marker the forgiving looks read with a corner this near the frame's edge (px) is not
#: taken: one the frame cuts off is read as the quad the edge leaves of it, its corners
#: about 8 px off, and three markers with it put cards 11 mm off after a bumped camera
#: (the plain detector's own margin is 3 px)
EDGE_PX = 3.0


def _clear_of_edge(corners: np.ndarray, shape: tuple[int, ...]) -> bool:
    h, w = shape[:2]
    c = np.asarray(corners, np.float64).reshape(-1, 2)
    return bool(np.all(c[:, 0] >= EDGE_PX) and np.all(c[:, 1] >= EDGE_PX)
                and np.all(c[:, 0] <= w - 1 - EDGE_PX) and np.all(c[:, 1] <= h - 1 - EDGE_PX))


def _agreeing(found: dict[int, np.ndarray], cands: list[tuple[int, np.ndarray]],
              corners_mm: dict[int, np.ndarray]) -> dict[int, np.ndarray]:
    """``found`` plus those of the third look's detections ``cands`` (id, corners) that
    agree with the rest (:func:`with_third_look`)."""
    if not cands:
        return found

    def fit(markers: dict[int, np.ndarray]) -> tuple[np.ndarray | None, float]:
        ids = sorted(markers)
        return _fit(np.vstack([markers[k] for k in ids]),
                    np.vstack([corners_mm[k] for k in ids]))

    # one detection per id: of an id's several (the forgiving detector sees a marker more
    # than once), the one the homography of all the markers fits best
    extra: dict[int, list[np.ndarray]] = {}
    for m, c in cands:
        extra.setdefault(m, []).append(c)
    chosen = {**found, **{m: cs[0] for m, cs in extra.items()}}
    for m, cs in extra.items():
        if len(cs) > 1:
            chosen[m] = min(cs, key=lambda c: fit({**chosen, m: c})[1])
    # then this look's markers that do not agree with the others go, the worst first
    while set(chosen) - set(found):
        # two markers can be fitted by a homography wherever they lie, and one of this
        # look's beside one found plainly made worse poses than that one alone (dev renders)
        if len(chosen) < 3:
            break
        H, _ = fit(chosen)
        if H is None:
            break
        off = {k: float(np.mean(np.linalg.norm(cv2.perspectiveTransform(
            chosen[k].reshape(-1, 1, 2), H).reshape(-1, 2) - corners_mm[k], axis=1)))
            for k in chosen if k not in found}
        worst = max(off, key=lambda k: off[k])
        if off[worst] <= THIRD_LOOK_MM:
            return chosen
        del chosen[worst]
    return dict(found)


def detect_markers(image: np.ndarray, mat: Mat, detector: Any = None,
                   second_look: bool = True) -> dict[int, np.ndarray]:
    """Marker id -> its 4 corner pixels (OpenCV order), for the mat's ids 0..3 only.

    When a marker is missing, ``second_look`` searches a sharpened copy for it. Only the
    missing ones are taken from there: sharpened corners are about 0.5 px from the plain ones
    (median) and up to 7 px, so a marker the plain image shows keeps its plain corners."""
    gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    det = detector or _detector(mat)
    found = _detect(gray, det)
    if second_look and len(found) < 4:
        found = _with_second_look(gray, found, det)
    return found


#: a marker is looked for again within this many of its own sizes around where it was
ROI_MARGIN = 0.75

#: A camera's first frame that misses a marker looks for it again (at full size, sharpened,
#: then with the forgiving detector) only around where the markers it found put it, once
#: they are this many. Two are not enough even with the lens known: on a dev render (hard
#: group, seed 550000, image 40) the pose of two put the other two 80 px off, and the
#: whole-frame looks found them. A marker placed with a corner outside the frame by more
#: than PLACE_TOLERANCE of its own size (it cannot be read whole) is not looked for at all:
#: over the whole frame the looks cost 100-300 ms on one thread for 1920x1080, mostly for a
#: marker the camera does not frame. (The tolerance: one marker touching the frame's edge,
#: which the forgiving look reads, was placed 5 px past it by three markers; over 1,036
#: markers left out in turn from dev renders' four, three placed them 0.2 px off (median),
#: 5 px at the 99th percentile, 22 at most, well inside the windows of ROI_MARGIN.)
PLACE_MISSING_MIN = 3
PLACE_TOLERANCE = 0.25
#: Two markers still tell a marker far out of the frame, with the lens known (without it a
#: homography through two squares is free to swing): the missing markers are not looked
#: for at all when the pose of two puts a corner of every one of them further outside the
#: frame than this many of its own sizes (dev renders, seeds 552000-553000, 3,108 markers
#: placed from two: off by a median 0.05 of a marker's size, 99th percentile 0.54, at most
#: 1.39), so that none of them can lie wholly in the frame.
PLACE_FAR = 2.0


def _window(corners: np.ndarray, shape: tuple[int, ...]) -> tuple[int, int, int, int] | None:
    """(x0, y0, x1, y1): the pixels within :data:`ROI_MARGIN` marker sizes around a marker's
    ``corners``, clipped to an image of ``shape``; None when too little of it is inside."""
    h, w = shape[:2]
    lo, hi = corners.min(axis=0), corners.max(axis=0)
    pad = ROI_MARGIN * float(max(hi - lo)) + 8.0
    x0, y0 = max(0, int(lo[0] - pad)), max(0, int(lo[1] - pad))
    x1, y1 = min(w, int(math.ceil(hi[0] + pad))), min(h, int(math.ceil(hi[1] + pad)))
    if x1 - x0 < 16 or y1 - y0 < 16:
        return None
    return x0, y0, x1, y1


def detect_markers_near(image: np.ndarray, mat: Mat, last: dict[int, np.ndarray],
                        detector: Any = None) -> dict[int, np.ndarray]:
    """:func:`detect_markers` in small windows around where each marker of ``last`` was
    (a fixed camera's markers barely move): a few ms instead of a search of the whole
    frame. A marker not found there is looked for again in the sharpened window. Only the
    markers found again are returned."""
    gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    det = detector or _detector(mat, window=True)
    found: dict[int, np.ndarray] = {}
    for mid, c in last.items():
        win = _window(c, gray.shape)
        if win is None:
            continue
        x0, y0, x1, y1 = win
        window = gray[y0:y1, x0:x1]
        got = _detect(window, det)
        if mid not in got:
            got = _detect(_sharpened(window), det)
        if mid in got:
            found[mid] = got[mid] + np.array([x0, y0], np.float64)
    return found


#: The corners of each marker found are measured again in a window around it with
#: AprilTag's refinement (a line fitted to each edge's gradient, corners where the lines
#: cross): blur spreads an edge evenly to both sides, so the lines stay put where the
#: sub-pixel corner search is pulled in by 2-4 px on an unfocused camera. Dev renders (seed
#: 500000, 443 markers), the worst corner of each against the truth: sub-pixel search median
#: 0.47 px, p99 2.5, max 4.0; refined 0.39, 0.96, 1.2. Over a whole frame this refinement
#: costs ten times the search, in the windows about 1.5 ms a marker. OpenCV reports its
#: corners half a pixel off its own pixel-centre convention (mean offset measured +0.45 px in
#: x and y): this is taken off.
APRILTAG_OFFSET_PX = 0.5
#: a refined corner further than this from the searched one is a misreading, not kept (px)
REFINE_MAX_MOVE_PX = 6.0
#: a fixed camera: a marker whose searched corners are all within this of the last frame's
#: keeps the last frame's refined corners (the refinement costs ~7 ms a frame, the search 2)
REFINE_REUSE_PX = 0.5


#: A camera's first frame (or one after the markers moved) is searched whole at half size
#: first when its short side has at least this many pixels; the corners are then measured
#: again at full size (:func:`refine_corners`), so only finding them is done small. On this
#: project's machines (2 cores, AMD EPYC) a 1920x1080 frame took 17-19 ms at full size and
#: 6 at half; of 216 markers in 60 dev renders (seed 550000, bench/vision.py's scenes) the
#: half-size search missed 2, which the full-size search that follows then found.
HALF_SEARCH_MIN_PX = 720


def _refining_detector(mat: Mat) -> Any:
    det = _detector(mat, window=True)
    params = det.getDetectorParameters()
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_APRILTAG
    det.setDetectorParameters(params)
    return det


def refine_corners(image: np.ndarray, mat: Mat, found: dict[int, np.ndarray],
                   detector: Any = None) -> dict[int, np.ndarray]:
    """``found`` (marker id -> corner pixels) with each marker's corners measured again in a
    window around it (:data:`APRILTAG_OFFSET_PX`); a marker not found again keeps its
    corners."""
    gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    det = detector or _refining_detector(mat)
    out = dict(found)
    for mid, c in found.items():
        win = _window(c, gray.shape)
        if win is None:
            continue
        x0, y0, x1, y1 = win
        got = _detect(gray[y0:y1, x0:x1], det).get(mid)
        # the same marker, not a neighbour's look-alike: its corners near the old ones
        if got is not None:
            again = got + np.array([x0, y0], np.float64) - APRILTAG_OFFSET_PX
            if float(np.abs(again - c).max()) <= REFINE_MAX_MOVE_PX:
                out[mid] = again
    return out


#: a camera file whose fit of the markers is worse than this (mm RMS) ...
LENS_DOUBT_MM = 1.0
#: ... and this many times worse than the picture's own without it is not this camera's
LENS_DOUBT_RATIO = 2.0


def lens_doubt(calibration: Mapping[str, Any] | None, camera: str = "the camera file"
               ) -> str | None:
    """What to say of a record's ``calibration`` whose camera file fits the markers worse
    than none: the file is another camera's (or the zoom or focus changed since it was
    measured), and it bends every position (cards 6-10 mm off where they were 2 mm without
    it). None where it fits, or where it cannot be told (fewer than four markers)."""
    if not isinstance(calibration, Mapping):
        return None
    with_lens = calibration.get("reprojection_mm")
    bare = calibration.get("reprojection_without_lens_mm")
    if not isinstance(with_lens, (int, float)) or not isinstance(bare, (int, float)):
        return None
    if with_lens <= LENS_DOUBT_MM or with_lens <= LENS_DOUBT_RATIO * bare:
        return None
    return (f"{camera} does not fit this camera: the markers fit the mat {with_lens:.1f} mm "
            f"with it and {bare:.1f} mm without it (another camera's file, or the zoom or "
            "focus changed since): run calibrate-camera for this camera, or read without "
            "it (--no-intrinsics)")


#: the markers' corners miss the mat file's by more than this (mm, RMS) when the file is not
#: the mat in the picture (900 x 650 given for a 650 x 900 mat: 14 mm); on 40 renders (tilt,
#: lens distortion, no camera file) at most 1.3 mm, on the sample frames 0.7 mm
POOR_MAT_FIT_MM = 5.0


def mat_fit_doubt(fit_mm: float | None, camera: str | None = None) -> str | None:
    """What to say of markers that fit the mat file badly (``fit_mm`` RMS over
    :data:`POOR_MAT_FIT_MM`): another mat's file, or a lens that bends straight lines (or,
    with ``camera``, a camera file that is not this camera's). None where they fit."""
    if fit_mm is None or fit_mm <= POOR_MAT_FIT_MM:
        return None
    lens = (", or does the lens bend straight lines (a wide-angle webcam: `companion "
            "calibrate-camera` measures it, and the lens is then undone)?"
            if camera is None else
            f", and is the camera file {camera!r} this camera's lens? (--no-intrinsics "
            "reads the picture without it)")
    return (f"the markers fit the mat file badly ({fit_mm:.1f} mm RMS): is the mat file "
            f"(--mat, else the standard mat) the mat in the picture{lens}")


def marker_scale(found: dict[int, np.ndarray], H: np.ndarray, size_mm: float) -> float | None:
    """The markers' size on the table as ``H`` (undistorted pixels -> mm) measures them, over
    the mat file's ``size_mm``: the median over the markers ``found`` (id -> their four corners,
    undistorted pixels) of each one's mean side. None where none maps to finite
    millimetres."""
    sides = []
    for corners in found.values():
        mm = cv2.perspectiveTransform(np.asarray(corners, np.float64).reshape(-1, 1, 2),
                                      H).reshape(-1, 2)
        side = float(np.linalg.norm(mm - np.roll(mm, -1, axis=0), axis=1).mean())
        if math.isfinite(side):
            sides.append(side)
    return float(np.median(sides)) / float(size_mm) if sides and size_mm > 0 else None


def _fit(img_pts: np.ndarray, tab_pts: np.ndarray) -> tuple[np.ndarray | None, float]:
    H, _ = cv2.findHomography(img_pts.reshape(-1, 1, 2), tab_pts.reshape(-1, 1, 2), 0)
    if H is None:
        return None, float("inf")
    mapped = cv2.perspectiveTransform(img_pts.reshape(-1, 1, 2), H).reshape(-1, 2)
    rms = float(np.sqrt(np.mean(np.sum((mapped - tab_pts) ** 2, axis=1))))
    return H, rms


class TableCalibrator:
    """Calibrates frame after frame, remembering the last good calibration."""

    def __init__(self, mat: Mat, intrinsics: Intrinsics | None = None,
                 deblur_look: bool = True) -> None:
        self.mat = mat
        self.intrinsics = intrinsics
        #: whether a frame with too few markers is searched again with motion blur undone
        self.deblur_look = deblur_look
        self.last_good: Calibration | None = None
        #: how far the table had moved when the last calibration was forgotten (mm), until
        #: three markers or more calibrate again: what a frame with fewer then says
        self._moved_mm: float | None = None
        self._corners_mm = {k: np.array(v, np.float64) for k, v in mat.marker_corners().items()}
        self._detector = _detector(mat)
        self._window_detector = _detector(mat, window=True)
        self._refining_detector = _refining_detector(mat)
        self._forgiving_detector = _forgiving_detector(mat)
        self._forgiving_window_detector = _forgiving_detector(mat, window=True)
        # marker id -> (its searched corners, their refinement) in the last frame
        self._refined: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        # the markers' pixels in the last frame where all four were seen, and its size
        self._last_px: dict[int, np.ndarray] = {}
        self._last_size: tuple[int, int] | None = None
        # after a sharpened whole-frame search that found nothing new: the markers the plain
        # search saw then, and how many more frames with just those skip the sharpened one
        # (a marker off the frame stays off it: no need to pay for the search every frame)
        self._fruitless_look: tuple[frozenset[int], int] | None = None
        # frames of a calibrated camera left without the deblurred look after one that
        # read nothing (hands over the markers, not a shaken camera)
        self._shaken_pause = 0
        # after a whole-frame search that read some markers but not all four: the markers
        # it read (image px, as searched), the frame's size, and how many more frames that
        # find just those, where they were, skip the search (:meth:`_still_in_view`)
        self._partial: tuple[dict[int, np.ndarray], tuple[int, int], int] | None = None

    def calibrate(self, image: np.ndarray) -> Calibration:
        h, w = image.shape[:2]
        gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
        found: dict[int, np.ndarray] = {}
        blur: MotionBlur | None = None
        near: dict[int, np.ndarray] | None = None
        if self._last_px and self._last_size == (w, h):
            found = near = detect_markers_near(gray, self.mat, self._last_px,
                                               self._window_detector)
        still = None if len(found) == 4 else self._still_in_view(gray, (w, h), near)
        if still is not None:
            found = still
        elif len(found) < 4:
            # a marker hidden or moved: search the whole frame. A fixed camera's windows
            # were already searched sharpened, so a hand over a marker costs one plain pass.
            found, windowed = self._search_frame(gray)
            drift = self._moved_from_last(found) if len(found) < 4 else None
            if drift is not None and drift > MOVED_MM:
                # the camera or the mat moved: what this calibrator knew of them no longer
                # holds, and the frame gets the looks a new camera's first frame gets (before,
                # a frame read after another camera's kept one marker of three, and every
                # frame after it too)
                self._forget_camera(drift)
            if len(found) < 4 and not self._last_px:
                seen, fruitless = frozenset(found), self._fruitless_look
                if fruitless is not None and fruitless[0] == seen and fruitless[1] > 0:
                    self._fruitless_look = (seen, fruitless[1] - 1)
                else:
                    where = self._where_missing(found, (w, h))
                    if where is not None:
                        found = self._look_where_missing(gray, found, where, windowed)
                    else:
                        # one sharpened copy serves the second look and the third
                        sharp = _sharpened(gray)
                        found = _with_second_look(gray, found, self._detector, sharp)
                        if len(found) < 4:
                            found = with_third_look(gray, found, self._forgiving_detector,
                                                    self._corners_mm, sharp)
                        if len(found) < DEBLUR_LOOK_BELOW and self.deblur_look:
                            found, blur, gray = self._deblurred_look(gray, found)
                    self._fruitless_look = None if len(found) > len(seen) \
                        else (seen, SECOND_LOOK_PAUSE)
            elif not found and self.deblur_look:
                found, blur, gray = self._shaken_look(gray, found)
            self._partial = (dict(found), (w, h), SEARCH_PAUSE) \
                if 0 < len(found) < 4 and blur is None else None
        if found:
            self._shaken_pause = 0
        found = self._refine(gray, found)
        if len(found) == 4:
            self._last_px, self._last_size = dict(found), (w, h)
            self._partial = None
        as_taken = found
        if self.intrinsics is not None:
            found = {k: self.intrinsics.undistort_points(v) for k, v in found.items()}
        result = self._from_markers(found)
        if result.calibrated and result.H is not None and found:
            result = replace(result, marker_scale=marker_scale(found, result.H,
                                                               self.mat.marker_size_mm))
        if self.intrinsics is not None and result.calibrated and len(as_taken) == 4:
            # the same fit without the lens: a camera file of another camera fits the
            # markers worse than none (lens_doubt); 16 points, a tenth of a millisecond
            _, bare = _fit(np.vstack([as_taken[k] for k in sorted(as_taken)]),
                           np.vstack([self._corners_mm[k] for k in sorted(as_taken)]))
            result = replace(result, reprojection_without_lens_mm=bare)
        if not found and self.last_good is None:
            # why no marker: looked for once per such frame, on one half-size copy
            small = _half_size(gray)
            if self._mirrored(small):
                result = replace(result, reason="the picture is mirrored: the mat's markers "
                                 "read only flipped left to right (a webcam's mirror setting, "
                                 "a front camera): turn the mirroring off")
            elif (other := self._other_dictionary(small)) is not None:
                # (the calibration board's markers: a photo of the board given to observe
                # is no mat printed from another file)
                board = (" (those of calibrate-camera's ChArUco board: a photo of the board, "
                         "not of the table?)" if other[0] == BOARD_DICTIONARY else "")
                result = replace(result, reason=f"no marker of the mat file's "
                                 f"{self.mat.dictionary} in the image, but {other[1]} "
                                 f"{other[0]} markers{board}: is the mat file's dictionary "
                                 "the printed mat's?")
        result = replace(result, image_size=(int(w), int(h)))
        if blur is not None and result.calibrated:
            note = f"motion blur {blur.describe()} undone to read the markers"
            result = replace(result, motion_blur=blur,
                             reason="; ".join(x for x in (result.reason, note) if x))
        if result.calibrated and not result.markers_assumed and len(result.markers_seen) >= 3:
            self.last_good = result
            self._moved_mm = None
        return result

    def _still_in_view(self, gray: np.ndarray, size: tuple[int, int],
                       near: dict[int, np.ndarray] | None) -> dict[int, np.ndarray] | None:
        """The markers of a fixed camera that sees only some of them, found again in windows
        around where the last whole-frame search read them, or None when the whole frame must
        be searched: no such search to go by, :data:`SEARCH_PAUSE` frames since it, a
        marker of it not found again or moved more than :data:`STILL_PX` (the camera moved),
        or a missing marker found in the window where the markers seen place it (a hand
        lifted) or, where they cannot place it (:meth:`_where_missing`), a marker that the
        half-size search reads and the last search did not. ``near``: this frame's search
        around the last frame with all four, which has looked in every marker's window."""
        if self._partial is None:
            return None
        last, last_size, left = self._partial
        if last_size != size or left <= 0:
            return None
        if near is None:
            found = detect_markers_near(gray, self.mat, last, self._window_detector)
        elif set(near) - set(last):
            return None             # a marker the last search missed is back
        else:
            found = dict(near)
        lost = {k: c for k, c in last.items() if k not in found}
        if lost:
            # read last time by the forgiving look (smeared, or at the frame's edge): so
            # again, in its window (plain and sharpened windows were searched above). Its
            # reads of a smeared marker wander by a pixel or two from one look to another
            # (dev render: 1.0 and 1.5 px, 3-4 px from the truth): one still in place keeps
            # the whole-frame search's corners, so that the frames agree with that one
            found = self._look_where_missing(gray, found, dict(lost), frozenset(lost))
            for k in lost:
                if k in found and float(np.abs(found[k] - last[k]).max()) <= STILL_PX:
                    found[k] = last[k]
        if set(found) != set(last) or any(
                float(np.abs(found[k] - last[k]).max()) > STILL_PX for k in last):
            return None
        if near is None:
            where = self._where_missing(found, size)
            if where is None:
                # the markers seen cannot place the others: the half-size search alone
                # (about a third of the whole-frame search) tells whether one came back
                small = self._half_size_search(gray)
                if small is None or set(small) - set(last):
                    return None
            else:
                places = {k: c for k, c in where.items() if c is not None}
                if places and detect_markers_near(gray, self.mat, places,
                                                  self._window_detector):
                    return None
        self._partial = (last, last_size, left - 1)
        if self._fruitless_look is not None:
            # these frames count towards the sharpened look's pause as well: when the
            # whole frame is searched again, so is it sharpened
            seen, pause = self._fruitless_look
            self._fruitless_look = (seen, max(0, pause - 1))
        return found

    def _where_missing(self, found: dict[int, np.ndarray], size: tuple[int, int]
                       ) -> dict[int, np.ndarray | None] | None:
        """Where the markers missing from ``found`` (image pixels, as searched) lie in the
        image: marker id -> its corners, or None for one that is not wholly in the frame
        (nothing to find there). None when ``found`` cannot place them: fewer than
        :data:`PLACE_MISSING_MIN` markers, unless two, with the lens known, put every
        missing one far out of the frame (:data:`PLACE_FAR`)."""
        loose = len(found) < PLACE_MISSING_MIN
        intr = self.intrinsics
        if len(found) < 2 or (loose and intr is None):
            return None
        ids = sorted(found)
        img = np.vstack([found[k] if intr is None else intr.undistort_points(found[k])
                         for k in ids])
        H, _ = self._fit_pose(img, np.vstack([self._corners_mm[k] for k in ids]))
        if H is None:
            return None
        Hi = np.linalg.inv(H)
        w, h = size
        out: dict[int, np.ndarray | None] = {}
        for k in self._corners_mm:
            if k in found:
                continue
            ideal = cv2.perspectiveTransform(self._corners_mm[k].reshape(-1, 1, 2),
                                             Hi).reshape(-1, 2)
            px: np.ndarray | None = ideal
            # the lens model folds points far outside the frame back into it: those are
            # out of view before any distortion
            if intr is not None and intr.distorts:
                far = (ideal < -0.25 * np.array([w, h])) | (ideal > 1.25 * np.array([w, h]))
                px = None if far.any() else intr.distort_points(ideal)
            if px is not None:
                tol = (PLACE_FAR if loose else PLACE_TOLERANCE) \
                    * float((px.max(axis=0) - px.min(axis=0)).max())
                if (px < -tol).any() or (px > np.array([w - 1, h - 1]) + tol).any():
                    px = None
            if loose and px is not None:
                return None
            out[k] = px
        return out

    def _look_where_missing(self, gray: np.ndarray, found: dict[int, np.ndarray],
                            where: dict[int, np.ndarray | None],
                            sharpened: frozenset[int] = frozenset()) -> dict[int, np.ndarray]:
        """The second and third looks (sharpened, then forgiving: :func:`with_third_look`)
        in a window around where each missing marker must be (``where``), instead of over
        the whole frame; a marker out of the frame is not looked for, and the markers of
        ``sharpened`` (whose windows :meth:`_search_frame` already searched sharpened, with
        the same detector) get the forgiving look alone."""
        out = dict(found)
        cands: list[tuple[int, np.ndarray]] = []
        for mid, corners in where.items():
            win = None if corners is None else _window(corners, gray.shape)
            if win is None:
                continue
            x0, y0, x1, y1 = win
            at = np.array([x0, y0], np.float64)
            plain = gray[y0:y1, x0:x1]
            sharp = _sharpened(plain)
            got = {} if mid in sharpened else _detect(sharp, self._window_detector)
            if mid in got:
                out[mid] = got[mid] + at
                continue
            for look in (plain, sharp):
                mine = [(m, c + at) for m, c in _all_of_mat(look, self._forgiving_window_detector)
                        if m == mid and _clear_of_edge(c + at, gray.shape)]
                if mine:
                    cands += mine
                    break
        return _agreeing(out, cands, self._corners_mm)

    def _deblurred_look(self, gray: np.ndarray, found: dict[int, np.ndarray]
                        ) -> tuple[dict[int, np.ndarray], MotionBlur | None, np.ndarray]:
        """The fourth look, for a frame where the other looks read no marker or one
        (:data:`DEBLUR_LOOK_BELOW`; a camera calibrated before goes through
        :meth:`_shaken_look`): the camera may have moved while the shutter was open. Each
        guess of a line blur (:func:`calibration.motion.guesses`, the likeliest first) is
        undone and the frame searched again; a guess counts only where the markers it
        reads agree with each other (three at least, as the third look's must,
        :func:`_agreeing`). The first guess that reads all four is taken, else the one that
        read the most. Returns (markers, the blur or None, the frame to refine them in).
        On dev renders (seeds 545000-590000, 2,177 tables with the mat in view) the first
        three looks read no marker on 19 tables, all of them blurred 9-14 px by motion; this
        look calibrated 18 (four markers on 15, three on 3), and the cards and pyramids
        then read from the deblurred frame found 266 more cards and 158 more pyramids. A
        guess costs about 70-130 ms on 2 threads for 1920x1080, and only such frames pay it
        (``docs/calibration.md``)."""
        best: tuple[dict[int, np.ndarray], MotionBlur | None, np.ndarray] = (found, None, gray)
        if min(gray.shape[:2]) < SPECTRUM_TILE:
            return best  # too small a frame to guess a blur from (and markers too small)
        h, w = gray.shape[:2]
        scale = min(1.0, math.sqrt(DEBLUR_MAX_PIXELS / float(h * w)))
        look = gray if scale == 1.0 else cv2.resize(
            gray, (max(1, round(w * scale)), max(1, round(h * scale))),
            interpolation=cv2.INTER_AREA)
        sx, sy = look.shape[1] / w, look.shape[0] / h
        # (pixel centres: small pixel i covers full pixels [i / s, (i + 1) / s))
        down = np.array([sx, sy])
        found_there = {m: (c + 0.5) * down - 0.5 for m, c in found.items()}
        frame = Deconvolver(look)
        for blur in itertools.islice(guesses(look), DEBLUR_GUESSES):
            sharp = frame(blur)
            cands = _all_of_mat(sharp, self._detector)
            # markers read in the deblurred frame replace the blurred frame's reads
            read = {k for k, _ in cands}
            got = _agreeing({}, cands + [(m, c) for m, c in found_there.items()
                                         if m not in read], self._corners_mm)
            if len(got) >= 3 and len(got) > len(best[0]):
                best = (got, blur, sharp)
                if len(got) == 4:
                    break
        if best[1] is not None and scale != 1.0:
            # back to the frame's pixels; its corners are refined in the frame as taken
            got, undone = best[0], best[1]
            best = ({m: (c + 0.5) / down - 0.5 for m, c in got.items()},
                    MotionBlur(undone.length_px / scale, undone.angle_deg), gray)
        if best[1] is not None:
            log.info("motion blur %s undone: markers %s read", best[1].describe(),
                     sorted(best[0]))
        return best

    def _shaken_look(self, gray: np.ndarray, found: dict[int, np.ndarray]
                     ) -> tuple[dict[int, np.ndarray], MotionBlur | None, np.ndarray]:
        """:meth:`_deblurred_look` for a camera calibrated before whose frame now reads no
        marker: a fixed camera knocked while the shutter was open smears every marker at
        once. Without this look such a frame came back uncalibrated, though the same image
        read as a first frame is calibrated. (One marker read is left to the last
        calibration, :meth:`_from_markers`: a sharp frame with three markers under hands is
        far likelier than a shaken one that still shows one.) A look that reads nothing is
        most likely hands or cards over all four, which deblurring cannot lift: the next
        :data:`SECOND_LOOK_PAUSE` frames that read no marker skip it, so covered markers
        cost the guesses once per pause rather than on every frame."""
        if self._shaken_pause > 0:
            self._shaken_pause -= 1
            return found, None, gray
        got = self._deblurred_look(gray, found)
        self._shaken_pause = 0 if got[1] is not None else SECOND_LOOK_PAUSE
        return got

    def _other_dictionary(self, small: np.ndarray) -> tuple[str, int] | None:
        """(dictionary, markers read) where a frame in which no marker of the mat file's
        dictionary was read (``small``: at half size, :func:`_half_size`) shows three of a
        mat's ids (0-3) or more in another common one: a mat printed from another file."""
        for name in COMMON_DICTIONARIES:
            if name == self.mat.dictionary:
                continue
            ids = marker_ids(small, name)
            # (a mat's ids are 0-3: card art read as a few markers of a large dictionary
            # would not name three of them)
            if ids is not None and len({int(i) for i in ids.ravel()} & {0, 1, 2, 3}) >= 3:
                return name, len(ids)
        return None

    def _mirrored(self, small: np.ndarray) -> bool:
        """Whether a frame in which no marker was read (``small``: at half size,
        :func:`_half_size`) shows the mat's markers flipped left to right."""
        return bool(_detect(cv2.flip(small, 1), self._detector))

    def _search_frame(self, gray: np.ndarray
                      ) -> tuple[dict[int, np.ndarray], frozenset[int]]:
        """The plain search of the whole frame: at half size first
        (:data:`HALF_SEARCH_MIN_PX`), at full size when that does not find all four. Also
        the ids whose windows the full-size search covered instead (plain and sharpened,
        :func:`detect_markers_near`), so that the looks after it do not repeat that."""
        h, w = gray.shape[:2]
        found: dict[int, np.ndarray] = {}
        half = self._half_size_search(gray)
        if half is not None:
            found = half
            if len(found) == 4:
                # searched again at full size in a window around each, as the next frame
                # of a fixed camera will be: its corners then agree with this frame's and
                # the refinement is reused (:data:`REFINE_REUSE_PX`)
                near = detect_markers_near(gray, self.mat, found, self._window_detector)
                return {**found, **near}, frozenset(found)
            where = self._where_missing(found, (w, h))
            if where is not None:
                # the markers missed can only be where the others put them, or out of the
                # frame: the full-size search (plain, then sharpened) only there
                places = {**found, **{k: c for k, c in where.items() if c is not None}}
                near = detect_markers_near(gray, self.mat, places, self._window_detector)
                return {**found, **near}, frozenset(places)
        full = _detect(gray, self._detector)
        return {**found, **full}, frozenset()

    def _half_size_search(self, gray: np.ndarray) -> dict[int, np.ndarray] | None:
        """The markers a search of the whole frame at half size reads, in full-size
        pixels; None for a frame too small for it (:data:`HALF_SEARCH_MIN_PX`)."""
        h, w = gray.shape[:2]
        if min(h, w) < HALF_SEARCH_MIN_PX:
            return None
        small = _half_size(gray)
        scale = np.array([w / small.shape[1], h / small.shape[0]])
        # pixel centres: small pixel i covers full pixels [i * scale, (i + 1) * scale)
        return {k: (c + 0.5) * scale - 0.5 for k, c in _detect(small, self._detector).items()}

    def _refine(self, gray: np.ndarray, found: dict[int, np.ndarray]) -> dict[int, np.ndarray]:
        """:func:`refine_corners`, reusing the last frame's refinement of a marker that has
        not moved (:data:`REFINE_REUSE_PX`)."""
        out: dict[int, np.ndarray] = {}
        todo: dict[int, np.ndarray] = {}
        for mid, c in found.items():
            last = self._refined.get(mid)
            if last is not None and last[0].shape == c.shape \
                    and float(np.abs(last[0] - c).max()) <= REFINE_REUSE_PX:
                out[mid] = last[1]
            else:
                todo[mid] = c
        if todo:
            again = refine_corners(gray, self.mat, todo, self._refining_detector)
            for mid, c in todo.items():
                self._refined[mid] = (c, again[mid])
                out[mid] = again[mid]
        return out

    def _lone_marker(self, seen: tuple[int, ...], moved_mm: float | None = None
                     ) -> Calibration | None:
        """The refusal of a table placed by one marker alone without the camera's lens,
        else None. With no earlier calibration to lean on, one marker places the table only
        with the lens known (a pose, IPPE); without it the homography through one small
        square swings freely. Dev renders (seed 547100, 24 images, each marker alone in
        turn, 96 cases), the worst card centre: with the lens a median 7.9 mm off (over
        20 mm in 14%), without it 42 mm (over 20 mm in 76%, up to metres; a 12 MP photo read
        that way gave 6 of 8 cards the wrong id and every pyramid 3 pips). Two markers
        without the lens: a median 5.3 mm (2% over 20 mm), still taken."""
        if len(seen) != 1 or self.intrinsics is not None:
            return None
        moved = self._moved_mm if moved_mm is None else moved_mm
        why = (f"the camera or mat moved ({moved:.0f} mm) and only marker {seen[0]} is "
               "visible" if moved is not None else f"only marker {seen[0]} is visible and "
               "there is no earlier calibration")
        return Calibration(False, markers_seen=seen,
                           reason=f"{why}: one marker cannot place the table without the "
                           "camera's lens (positions would be centimetres off): show more of "
                           "the mat, or measure the lens (companion calibrate-camera)")

    def _fit_pose(self, img: np.ndarray, tab: np.ndarray) -> tuple[np.ndarray | None, float]:
        """One to three markers: with known intrinsics a camera pose (PnP, 6 unknowns)
        extrapolates far better than a free homography (8) fitted to a few small squares.
        Three markers, dev renders (220 frames, each marker dropped in turn), worst error
        over the mat: homography median 1.5 mm, p90 5.3; pose 0.35 and 1.6 (with the focal
        length 3% wrong, the pose is no worse than the homography: 1.5 and 5.2)."""
        if self.intrinsics is None:
            return _fit(img, tab)
        obj = np.column_stack([tab, np.zeros(len(tab))]).astype(np.float64)
        # img is already undistorted with K as its camera matrix. One marker: IPPE, made for
        # one square. Two: SQPnP; IPPE goes through a homography of the points, which two
        # small squares far apart pin down badly (dev renders: cards 2-30 mm off against
        # 0.1-2 mm)
        flag = cv2.SOLVEPNP_IPPE if len(tab) <= 4 else cv2.SOLVEPNP_SQPNP
        ok, rvec, tvec = cv2.solvePnP(obj, img.reshape(-1, 1, 2), self.intrinsics.K, None,
                                      flags=flag)
        if not ok:
            return _fit(img, tab)
        R, _ = cv2.Rodrigues(rvec)
        H_tab_to_img = self.intrinsics.K @ np.column_stack([R[:, 0], R[:, 1], tvec.ravel()])
        H = np.linalg.inv(H_tab_to_img)
        H /= H[2, 2]
        return H, _rms(H, img, tab)

    def _moved_from_last(self, found: dict[int, np.ndarray]) -> float | None:
        """How far (mm) the markers ``found`` (image px, as searched) say the table moved
        from where the last good calibration puts it (:meth:`_drift_mm`); None without one."""
        prev = self.last_good
        if prev is None or prev.H is None or not found:
            return None
        ids = sorted(found)
        img = np.vstack([found[k] if self.intrinsics is None
                         else self.intrinsics.undistort_points(found[k]) for k in ids])
        return self._drift_mm(prev.H, img, ids)

    def _drift_mm(self, H: np.ndarray, img: np.ndarray, ids: list[int]) -> float:
        """How far (mm) the markers ``ids`` seen at ``img`` (undistorted px, four corners
        each) lie from where the homography ``H`` puts them, and with two markers seen, how
        far the same turn, shift and scale carries the hidden ones: a camera turned a
        degree about the two seen markers moves them under MOVED_MM while the hidden ones
        move 10-15 mm (their corners were then taken from the old calibration, and cards
        read 11 mm off). One marker's own turn is not read out that far: its corners are
        too close together."""
        tab = np.vstack([self._corners_mm[k] for k in ids])
        now = cv2.perspectiveTransform(img.reshape(-1, 1, 2), H).reshape(-1, 2)
        drift = float(np.max(np.linalg.norm(now - tab, axis=1)))
        hidden = [k for k in (0, 1, 2, 3) if k not in ids]
        if len(ids) >= 2 and hidden:
            M, _ = cv2.estimateAffinePartial2D(tab.astype(np.float32), now.astype(np.float32))
            if M is not None:
                out = np.vstack([self._corners_mm[k] for k in hidden])
                carried = out @ M[:, :2].T + M[:, 2]
                drift = max(drift, float(np.max(np.linalg.norm(carried - out, axis=1))))
        return drift

    def _forget_camera(self, moved_mm: float) -> None:
        """Forget where the markers were: the next look is a new camera's (and what it
        says of itself says the camera or mat moved ``moved_mm``)."""
        self._moved_mm = moved_mm
        self.last_good = None
        self._last_px, self._last_size = {}, None
        self._partial = None
        self._fruitless_look = None
        self._shaken_pause = 0

    def _from_markers(self, found: dict[int, np.ndarray]) -> Calibration:
        seen = tuple(sorted(found))
        prev = self.last_good
        names = ", ".join(map(str, seen))
        if not found:
            if prev is not None or self._moved_mm is not None:
                return Calibration(False, reason="no mat marker is visible (hand or cards over "
                                   "all four?); the last calibration is not reused blindly")
            return Calibration(False, reason="no mat marker found in the image")
        img = np.vstack([found[k] for k in seen])
        tab = np.vstack([self._corners_mm[k] for k in seen])
        if len(seen) >= 3 or prev is None or prev.H is None:
            if (refused := self._lone_marker(seen)) is not None:
                return refused
            H, rms = self._fit_pose(img, tab) if len(seen) < 4 else _fit(img, tab)
            if H is None:
                return Calibration(False, markers_seen=seen, reason="the markers give no homography")
            if len(seen) >= 3:
                note = ""
            elif self._moved_mm is not None:
                # (forgotten when the markers moved: that is what to say, not "no earlier")
                note = (f"the camera or mat moved ({self._moved_mm:.0f} mm) and only marker(s) "
                        f"{names} are visible: positions far from them are less accurate")
            else:
                note = (f"only marker(s) {names} seen and no earlier calibration: positions "
                        "far from them are less accurate")
            return Calibration(True, H, seen, (), rms, note, self.intrinsics)
        # One or two markers: do they still sit where the last calibration put them, and
        # with two, does the turn they show leave the hidden ones where they were?
        drift = self._drift_mm(prev.H, img, list(seen))
        if drift > MOVED_MM:
            if (refused := self._lone_marker(seen, moved_mm=drift)) is not None:
                return refused
            H, rms = self._fit_pose(img, tab)
            if H is None:
                return Calibration(False, markers_seen=seen, reason="the markers give no homography")
            return Calibration(True, H, seen, (), rms,
                               f"the camera or mat moved ({drift:.0f} mm) and only marker(s) "
                               f"{names} are visible", self.intrinsics)
        hidden = tuple(k for k in (0, 1, 2, 3) if k not in found)
        Hi = np.linalg.inv(prev.H)
        assumed_img = [cv2.perspectiveTransform(self._corners_mm[k].reshape(-1, 1, 2), Hi).reshape(-1, 2)
                       for k in hidden]
        img_all = np.vstack([img, *assumed_img])
        tab_all = np.vstack([tab, *[self._corners_mm[k] for k in hidden]])
        H, _ = _fit(img_all, tab_all)
        if H is None:
            return Calibration(False, markers_seen=seen, reason="the markers give no homography")
        rms_seen = float(np.sqrt(np.mean(np.sum(
            (cv2.perspectiveTransform(img.reshape(-1, 1, 2), H).reshape(-1, 2) - tab) ** 2, axis=1))))
        return Calibration(True, H, seen, hidden, rms_seen,
                           f"marker(s) {', '.join(map(str, hidden))} hidden: taken from the last "
                           "calibration", self.intrinsics)


def _half_size(gray: np.ndarray) -> np.ndarray:
    """``gray`` at half size (as the first search of a frame reads it), or as it is when
    small (:data:`HALF_SEARCH_MIN_PX`)."""
    if min(gray.shape[:2]) < HALF_SEARCH_MIN_PX:
        return gray
    return cv2.resize(gray, (gray.shape[1] // 2, gray.shape[0] // 2),
                      interpolation=cv2.INTER_AREA)


def marker_ids(gray: np.ndarray, dictionary: str) -> np.ndarray | None:
    """The ids of the markers of ``dictionary`` (an OpenCV name) that a plain detector reads
    in ``gray``, or None: what a picture shows when the markers it should show are not in
    it (:meth:`TableCalibrator._other_dictionary`, the board hints of
    :mod:`calibration.intrinsics`)."""
    d = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, dictionary))
    ids: np.ndarray | None = cv2.aruco.ArucoDetector(d).detectMarkers(gray)[1]
    # (OpenCV 4 says None when it reads none, OpenCV 5 an empty array: one answer here)
    return ids if ids is not None and len(ids) else None


#: Focal length, as a share of the image width, assumed when H cannot tell it (a camera
#: looking straight down): about a 65 degree horizontal field of view, a common webcam.
PRIOR_FOCAL_SHARE = 0.8


def clockwise_from_top_left(quad: np.ndarray) -> np.ndarray:
    """A quadrilateral's four corners clockwise on screen (image y down), starting at the
    one nearest the picture's top-left."""
    q = np.asarray(quad).reshape(4, 2)
    c = q.mean(axis=0)
    q = q[np.argsort(np.arctan2(q[:, 1] - c[1], q[:, 0] - c[0]))]
    return np.roll(q, -int(np.argmin(q[:, 0] + q[:, 1])), axis=0)


def estimate_camera_matrix(H: np.ndarray, image_size: tuple[int, int]) -> np.ndarray:
    """A pinhole K for an uncalibrated camera from the table homography alone.

    With the principal point at the image centre and square pixels, inv(H) = s K [r1 r2 t]
    and r1, r2 orthonormal give two linear equations in 1/f^2 (Zhang's constraints). A
    camera looking nearly straight down leaves f unobservable; then, or when the estimate is
    implausible, the prior :data:`PRIOR_FOCAL_SHARE` of the width is used."""
    w, h = image_size
    cx, cy = (w - 1) / 2.0, (h - 1) / 2.0
    T = np.array([[1.0, 0.0, -cx], [0.0, 1.0, -cy], [0.0, 0.0, 1.0]])
    G = T @ np.linalg.inv(np.asarray(H, np.float64))
    g1, g2 = G[:, 0], G[:, 1]
    a = np.array([g1[0] * g2[0] + g1[1] * g2[1], g1[0] ** 2 + g1[1] ** 2 - g2[0] ** 2 - g2[1] ** 2])
    b = np.array([g1[2] * g2[2], g1[2] ** 2 - g2[2] ** 2])
    f = PRIOR_FOCAL_SHARE * w
    denom = float(a @ a)
    if denom > 0:
        inv_f2 = -float(a @ b) / denom
        # trust it only when the tilt makes the constraints informative
        strength = float(np.linalg.norm(b)) / (float(np.linalg.norm(a)) / f ** 2 + 1e-12)
        if inv_f2 > 0 and strength > 0.05:
            est = 1.0 / math.sqrt(inv_f2)
            if 0.3 * w < est < 4.0 * w:
                f = est
    return np.array([[f, 0.0, cx], [0.0, f, cy], [0.0, 0.0, 1.0]])


def _rms(H: np.ndarray, img_pts: np.ndarray, tab_pts: np.ndarray) -> float:
    mapped = cv2.perspectiveTransform(img_pts.reshape(-1, 1, 2), H).reshape(-1, 2)
    return float(np.sqrt(np.mean(np.sum((mapped - tab_pts) ** 2, axis=1))))


def seen_area_mm(calib: Calibration, size: tuple[int, int] | None = None, samples: int = 9
                 ) -> tuple[float, float, float, float] | None:
    """(x0, y0, x1, y1): the box in table mm around what the frame (``size`` (width, height),
    default ``calib.image_size``) shows of the table plane, through the lens; None when
    uncalibrated, when the size is unknown, or when part of the frame looks above the
    horizon (its edge does not map onto the plane: the box would be unbounded).

    Each edge is sampled at ``samples`` points, since the lens bends straight image edges."""
    if calib.H is None:
        return None
    wh = size if size is not None else calib.image_size
    if wh is None:
        return None
    w, h = float(wh[0]), float(wh[1])
    t = np.linspace(0.0, 1.0, max(2, int(samples)))
    edge = np.concatenate([np.column_stack([t * w, np.zeros_like(t)]),
                           np.column_stack([np.full_like(t, w), t * h]),
                           np.column_stack([t * w, np.full_like(t, h)]),
                           np.column_stack([np.zeros_like(t), t * h])])
    if calib.intrinsics is not None:
        edge = calib.intrinsics.undistort_points(edge)
    q = np.column_stack([edge, np.ones(len(edge))]) @ np.asarray(calib.H, np.float64).T
    if not np.all(q[:, 2] > 1e-9) and not np.all(q[:, 2] < -1e-9):
        return None
    mm = q[:, :2] / q[:, 2:3]
    if not np.all(np.isfinite(mm)):
        return None
    return (float(mm[:, 0].min()), float(mm[:, 1].min()), float(mm[:, 0].max()),
            float(mm[:, 1].max()))


def rectify(image: np.ndarray, calib: Calibration, px_per_mm: float = 1.0,
            margin_mm: float = 0.0, mat: Mat | None = None) -> np.ndarray:
    """A top-down view of the table plane: pixel (u, v) shows table point
    ((u + 0.5) / px_per_mm - margin, (v + 0.5) / px_per_mm - margin)."""
    if calib.H is None:
        raise ValueError("not calibrated: " + calib.reason)
    if mat is None:
        raise ValueError("rectify needs the mat for the table's size")
    src = image
    if calib.intrinsics is not None and calib.intrinsics.distorts:
        src = cv2.undistort(image, calib.intrinsics.K, calib.intrinsics.dist)
    S = np.array([[px_per_mm, 0, margin_mm * px_per_mm - 0.5],
                  [0, px_per_mm, margin_mm * px_per_mm - 0.5],
                  [0, 0, 1]], np.float64)
    w = int(round((mat.width_mm + 2 * margin_mm) * px_per_mm))
    h = int(round((mat.height_mm + 2 * margin_mm) * px_per_mm))
    return cv2.warpPerspective(src, S @ calib.H, (w, h), flags=cv2.INTER_AREA)
