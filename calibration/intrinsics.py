"""Camera intrinsics from photos of a ChArUco board, and the camera file that keeps them.

``companion calibrate-camera`` detects the board in several photos, runs
``cv2.calibrateCamera`` on the interpolated chessboard corners and writes a camera file::

    {"version": 1, "image_size": [1280, 720],
     "K": [[fx, 0, cx], [0, fy, cy], [0, 0, 1]], "dist": [k1, k2, p1, p2, k3],
     "rms_px": 0.21, "views": 12,
     "board": {"squares": [7, 5], "square_mm": 30, "marker_mm": 22,
               "dictionary": "DICT_5X5_100"}}

:func:`load_intrinsics` turns it back into the :class:`calibration.table.Intrinsics` that
:class:`~calibration.table.TableCalibrator` takes; given the size of the images it will be used
on, it rescales K for the same camera at another resolution of the same aspect ratio.
The default file lives in the user's config dir (:func:`default_camera_path`).
"""

from __future__ import annotations

import json
import logging
import math
import os
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from calibration.images import HEIF_WORDS, IMAGE_SUFFIXES, folder_images, natural_key
from calibration.mat import BOARD_DICTIONARY, COMMON_DICTIONARIES, KNOWN_DICTIONARIES
from calibration.table import Intrinsics, marker_ids
from companion.core.errors import CompanionError
from companion.core.files import (JsonTextError, given_path, read_json, refusal_words,
                                  write_text_atomic, wrong_kind)
from companion.core.numbers import finite_number

log = logging.getLogger(__name__)

CAMERA_FILE_VERSION = 1
APP_DIR = "arcana-companion"
#: A view needs at least this many board corners: fewer (a board seen at its very edge)
#: constrain the pose badly and mostly add noise to the calibration.
MIN_CORNERS = 6
#: Fewer usable views than this cannot separate focal length, principal point and
#: distortion (OpenCV would still return numbers, but meaningless ones).
MIN_VIEWS = 3


class IntrinsicsError(CompanionError, ValueError):
    """A camera file or calibration input that is missing, unreadable or bad."""


def default_camera_path() -> Path:
    """``$XDG_CONFIG_HOME/arcana-companion/camera.json`` (default ``~/.config/...``)."""
    base = os.environ.get("XDG_CONFIG_HOME")
    # the XDG spec says a relative value is invalid and must be ignored
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".config"
    return root / APP_DIR / "camera.json"


# ---------------------------------------------------------------------------------------------
# the board


@dataclass(frozen=True)
class BoardSpec:
    """A ChArUco board: squares across x down, square and marker side in mm, dictionary."""

    squares_x: int = 7
    squares_y: int = 5
    square_mm: float = 30.0
    marker_mm: float = 22.0
    dictionary: str = BOARD_DICTIONARY

    def __post_init__(self) -> None:
        if self.squares_x < 3 or self.squares_y < 3:
            raise IntrinsicsError(f"board {self.squares_x}x{self.squares_y}: need at least 3x3 "
                                  "squares")
        if not (self.square_mm > 0 and self.marker_mm > 0 and self.marker_mm < self.square_mm):
            raise IntrinsicsError(f"board: marker side ({self.marker_mm} mm) must be positive and "
                                  f"smaller than the square side ({self.square_mm} mm)")
        if self.dictionary not in KNOWN_DICTIONARIES:
            raise IntrinsicsError(f"board: unknown dictionary {self.dictionary!r}; expected one "
                                  f"of {', '.join(KNOWN_DICTIONARIES)}")
        size = _dictionary_size(self.dictionary)
        if self.n_markers > size:
            raise IntrinsicsError(f"board {self.squares_x}x{self.squares_y} needs {self.n_markers} "
                                  f"markers but {self.dictionary} has only {size}")

    @property
    def n_markers(self) -> int:
        return (self.squares_x * self.squares_y) // 2

    @property
    def size_mm(self) -> tuple[float, float]:
        return (self.squares_x * self.square_mm, self.squares_y * self.square_mm)

    def make(self) -> Any:
        """The ``cv2.aruco.CharucoBoard`` (object points in mm, origin at the board's corner)."""
        import cv2

        dictionary = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, self.dictionary))
        return cv2.aruco.CharucoBoard((self.squares_x, self.squares_y), float(self.square_mm),
                                      float(self.marker_mm), dictionary)

    def image(self, px_per_mm: float, margin_mm: float = 0.0) -> np.ndarray:
        """The board drawn at ``px_per_mm`` with a white margin (grey uint8)."""
        bw, bh = self.size_mm
        m = round(margin_mm * px_per_mm)
        w = round(bw * px_per_mm) + 2 * m
        h = round(bh * px_per_mm) + 2 * m
        return np.asarray(self.make().generateImage((w, h), marginSize=m, borderBits=1))

    def to_dict(self) -> dict[str, Any]:
        return {"squares": [self.squares_x, self.squares_y], "square_mm": _num(self.square_mm),
                "marker_mm": _num(self.marker_mm), "dictionary": self.dictionary}


def parse_board(text: str) -> tuple[int, int]:
    """``"7x5"`` -> (7, 5); :class:`IntrinsicsError` otherwise."""
    parts = text.lower().replace("×", "x").split("x")
    try:
        sx, sy = (int(p) for p in parts)
    except ValueError:
        raise IntrinsicsError(f"board {text!r}: expected SQUARESxSQUARES such as 7x5") from None
    return sx, sy


def _dictionary_size(name: str) -> int:
    if name == "DICT_ARUCO_ORIGINAL":
        return 1024
    return int(name.rsplit("_", 1)[1])


# ---------------------------------------------------------------------------------------------
# detection and calibration


@dataclass
class View:
    """One photo's board corners: image points (N, 2) and board points (N, 3), mm."""

    name: str
    image_points: np.ndarray
    object_points: np.ndarray


@dataclass
class CameraCalibration:
    """What :func:`calibrate_views` found."""

    K: np.ndarray
    dist: np.ndarray
    image_size: tuple[int, int]     # (width, height)
    rms_px: float
    board: BoardSpec
    views: list[str]
    view_errors_px: list[float] = field(default_factory=list)
    rvecs: list[np.ndarray] = field(default_factory=list, repr=False)
    tvecs: list[np.ndarray] = field(default_factory=list, repr=False)

    @property
    def intrinsics(self) -> Intrinsics:
        return Intrinsics(self.K.copy(), self.dist.copy())


def detect_board(image: np.ndarray, board: BoardSpec, name: str = "image",
                 detector: Any = None) -> View | None:
    """The board's chessboard corners in one image, or None when there are too few
    (fewer than :data:`MIN_CORNERS`, or all on one line: no pose from those)."""
    import cv2

    gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    if detector is None:
        detector = make_detector(board)
    corners, ids, _, _ = detector.detectBoard(gray)
    if corners is None or ids is None or len(ids) < MIN_CORNERS:
        return None
    cboard = detector.getBoard()
    if cboard.checkCharucoCornersCollinear(ids):
        return None
    obj, img = cboard.matchImagePoints(corners, ids)
    return View(name, np.asarray(img, np.float32).reshape(-1, 2),
                np.asarray(obj, np.float32).reshape(-1, 3))


def make_detector(board: BoardSpec) -> Any:
    import cv2

    params = cv2.aruco.DetectorParameters()
    # sub-pixel marker corners: the chessboard corners are refined anyway, but better
    # marker corners give a better initial guess for that refinement
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    cparams = cv2.aruco.CharucoParameters()
    # recover markers missed at first (glare, steep angles) from the board layout
    cparams.tryRefineMarkers = True
    return cv2.aruco.CharucoDetector(board.make(), cparams, params)


def calibrate_views(views: Sequence[View], image_size: tuple[int, int],
                    board: BoardSpec) -> CameraCalibration:
    """``cv2.calibrateCamera`` (5-coefficient model) on the views' corners."""
    import cv2

    if len(views) < MIN_VIEWS:
        raise IntrinsicsError(f"only {len(views)} usable view(s) of the board; calibration "
                              f"needs at least {MIN_VIEWS} (better 10 or more, tilted and "
                              "spread over the whole image)")
    obj = [v.object_points.reshape(-1, 1, 3) for v in views]
    img = [v.image_points.reshape(-1, 1, 2) for v in views]
    crit = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 100, 1e-9)
    try:
        rms, K, dist, rvecs, tvecs, _, _, per_view = cv2.calibrateCameraExtended(
            obj, img, image_size, np.eye(3), np.zeros(5), criteria=crit)
    except cv2.error as exc:
        raise IntrinsicsError(f"calibration failed: {exc.err or exc}") from None
    K = np.asarray(K, np.float64)
    dist = np.asarray(dist, np.float64).reshape(-1)
    if not (np.all(np.isfinite(K)) and np.all(np.isfinite(dist)) and math.isfinite(rms)):
        raise IntrinsicsError("calibration did not converge: take more photos with the board "
                              "tilted and covering the image corners")
    seen = board_reach(K, views, image_size)
    if seen < MIN_BOARD_REACH:
        raise IntrinsicsError(
            f"the board was seen only near the middle of the image: its corners reach "
            f"{100 * seen:.0f}% of the way from the centre to the image's corners, and the "
            "lens model beyond that would be guessed (it bends most there). Take 10 to 20 "
            "photos with the board near the edges and in the corners too")
    fold = lens_fold(K, dist, image_size)
    if fold is not None:
        raise IntrinsicsError(f"the lens model fitted to these photos is no lens: it {fold}. "
                              "The photos do not pin it down: take 10 to 20, the board tilted "
                              "and reaching into the image corners")
    return CameraCalibration(K=K, dist=dist, image_size=(int(image_size[0]), int(image_size[1])),
                             rms_px=float(rms), board=board, views=[v.name for v in views],
                             view_errors_px=[float(e) for e in np.asarray(per_view).ravel()],
                             rvecs=list(rvecs), tvecs=list(tvecs))


#: The board's corners, over all the photos, must reach at least this share of the way from
#: the image centre to its corners (:func:`board_reach`), else the fit is refused: beyond
#: what the photos showed the lens model is extrapolated. Four photos of the board near the
#: middle (28% of the way) once gave k3 = +14.6 and put cards 19 mm off where no camera file
#: put them 13 mm off; 15 photos spread over the image reach 76%.
MIN_BOARD_REACH = 0.5


def board_reach(K: np.ndarray, views: Sequence[View], image_size: tuple[int, int]) -> float:
    """How far the views' board corners reach from the image centre (the farthest, as a
    share of the image corners' distance, both as rays through ``K``)."""
    pts = np.vstack([np.asarray(v.image_points, np.float64).reshape(-1, 2) for v in views])
    w, h = image_size
    Kinv = np.linalg.inv(np.asarray(K, np.float64))

    def radius(px: np.ndarray) -> np.ndarray:
        q = Kinv @ np.vstack([px.T, np.ones(len(px))])
        return np.asarray(np.hypot(q[0] / q[2], q[1] / q[2]))

    corners = radius(np.array([[0, 0], [w, 0], [0, h], [w, h]], np.float64))
    return float(radius(pts).max() / max(float(corners.max()), 1e-9))


#: how far undistorting may move the image's corners, as a multiple of their distance from
#: the centre (see :func:`lens_fold`)
LENS_STRETCH = (0.5, 4.0)
#: a lens model's tangential terms (p1, p2: a lens tilted against the sensor) past this are
#: no real lens's (a camera's are under 0.01)
TANGENTIAL_MAX = 0.05
#: the share of the way from the image centre to its corners over which a lens model must
#: rise (see :func:`lens_fold`)
LENS_MIN_REACH = 0.6


def lens_reach(K: np.ndarray, dist: np.ndarray, image_size: tuple[int, int]
               ) -> tuple[float, float | None]:
    """(the share of the way from the image centre to its corners over which the lens model
    maps farther rays farther out, 1.0 for all the way; how many times farther from the
    centre undistorting moves the point that far out, None when no ray gets there).

    The model is OpenCV's radial and rational terms (tangential ones are small):
    r -> r (1 + k1 r^2 + k2 r^4 + k3 r^6) / (1 + k4 r^2 + k5 r^4 + k6 r^6), r the ray's
    normalised distance from the axis. A fit is pinned down only where the photos showed the
    board: past that its polynomial can turn back, and undistorting folds the picture over
    there."""
    d = np.zeros(8)
    d[:min(8, len(dist))] = np.asarray(dist, np.float64).ravel()[:8]
    k1, k2, _, _, k3, k4, k5, k6 = d
    w, h = image_size
    Kinv = np.linalg.inv(np.asarray(K, np.float64))
    corners = Kinv @ np.array([[0, w, 0, w], [0, 0, h, h], [1, 1, 1, 1]], np.float64)
    reach = max(float(np.max(np.hypot(corners[0] / corners[2], corners[1] / corners[2]))),
                1e-9)
    # rays up to ten times the corners' radius (normalised 10: 84 degrees off the axis)
    r = np.linspace(0.0, 10.0 * reach, 20001)
    r2 = r * r
    with np.errstate(all="ignore"):
        f = r * (1 + r2 * (k1 + r2 * (k2 + r2 * k3))) / (1 + r2 * (k4 + r2 * (k5 + r2 * k6)))
    turns = np.flatnonzero(~(np.diff(f) > 0))
    rising = f[:turns[0] + 1] if len(turns) else f
    share = min(1.0, max(float(rising[-1]), 0.0) / reach)
    out = np.flatnonzero(rising >= share * reach)
    stretch = float(r[out[0]] / (share * reach)) if len(out) and share > 0 else None
    return share, stretch


def lens_fold(K: np.ndarray, dist: np.ndarray, image_size: tuple[int, int]) -> str | None:
    """Why the lens model (K, OpenCV's distortion coefficients) is no real lens over an
    image of ``image_size``, or None when it may be one: it turns back less than
    :data:`LENS_MIN_REACH` of the way to the image's corners (k3 of -30000, fitted to too few
    photos, folded the picture over and no card was found in it), or undistorting moves
    points outside :data:`LENS_STRETCH` times their distance from the centre (a strong
    wide-angle lens about doubles it). See :func:`lens_reach`. Also where its principal
    point lies outside the picture, or its tangential terms are far beyond a real lens's
    (:data:`TANGENTIAL_MAX`): such a file made OpenCV fail on every image."""
    w, h = image_size
    cx, cy = float(np.asarray(K)[0, 2]), float(np.asarray(K)[1, 2])
    if not (0 <= cx <= w and 0 <= cy <= h):
        return (f"puts the lens's centre (the principal point {cx:.0f}, {cy:.0f}) outside the "
                f"{w}x{h} picture")
    d = np.asarray(dist, np.float64).ravel()
    if len(d) >= 4 and max(abs(float(d[2])), abs(float(d[3]))) > TANGENTIAL_MAX:
        return (f"has tangential terms (p1 {float(d[2]):g}, p2 {float(d[3]):g}) far beyond a "
                f"real lens's (under {TANGENTIAL_MAX:g})")
    share, stretch = lens_reach(K, dist, image_size)
    if share < LENS_MIN_REACH:
        return (f"turns back {100 * share:.0f}% of the way from the image centre to its "
                "corners (undistorting would fold the picture over)")
    if stretch is None or not LENS_STRETCH[0] <= stretch <= LENS_STRETCH[1]:
        return (f"moves the image's points to {stretch or float('inf'):.2g} times their "
                f"distance from the centre (a lens: {LENS_STRETCH[0]:g} to "
                f"{LENS_STRETCH[1]:g} times)")
    return None


def image_files(inputs: Iterable[str | Path], suffixes: Sequence[str],
                bad: Callable[[Path, str], Exception], heif_read: bool = False) -> list[Path]:
    """Files as given; a folder stands for its files with one of ``suffixes``
    (:func:`calibration.images.folder_images`: in name order, numbers by value, hidden files
    left out, not recursive; a link there that leads nowhere too, for the reader to say so);
    a folder with none, or one that cannot be listed, raises
    ``bad(folder, what is wrong)``. A folder's HEIC photos, which are not read, are named in
    a warning (or in that error); with ``heif_read`` they are listed among the images, in
    their place, so that a caller that answers every image (``observe``) says each one's
    problem and fails for it."""
    out: list[Path] = []
    for item in inputs:
        p = given_path(item)
        if p.is_dir():
            try:
                found, heif = folder_images(p, suffixes, broken_links=True)
            except OSError as exc:
                raise bad(p, f"cannot be read ({exc.strerror or exc})") from None
            if not found:
                also = (f"; its {len(heif)} HEIC photo(s) are not: {HEIF_WORDS}" if heif
                        else "")
                raise bad(p, f"holds no images ({', '.join(suffixes)}){also}")
            if heif and heif_read:
                found = sorted(found + heif, key=natural_key)
            elif heif:
                log.warning("%s: %d HEIC photo(s) left out (%s): %s", p, len(heif),
                            ", ".join(f.name for f in heif[:3]) + (", ..." if len(heif) > 3
                                                                   else ""), HEIF_WORDS)
            out += found
        else:
            out.append(p)
    return out


def expand_images(inputs: Iterable[str | Path]) -> list[Path]:
    """Files as given; a folder stands for its image files (sorted, not recursive)."""
    return image_files(inputs, IMAGE_SUFFIXES,
                       lambda p, why: IntrinsicsError(f"folder {str(p)!r} {why}"))


def calibrate_images(paths: Sequence[Path], board: BoardSpec,
                     report: Callable[[Path, str | None, int, bool], None] | None = None
                     ) -> CameraCalibration:
    """Detect the board in every image and calibrate. ``report(path, why_skipped, corners,
    read)`` is told about each image (``why_skipped`` None when it is used; ``read`` False
    for a file that could not be read as an image at all). K holds for one
    resolution only: the size most views have wins, views of other sizes are skipped."""
    detector = make_detector(board)
    found: list[tuple[Path, View, tuple[int, int]]] = []
    for path in paths:
        why, view, wh = _one_image(path, board, detector)
        if view is None:
            if report is not None:
                report(path, why, 0, wh != (0, 0))
        else:
            found.append((path, view, wh))
    sizes = Counter(wh for _, _, wh in found)
    # most views first, then the larger image (more pixels, a finer calibration)
    size = max(sizes, key=lambda s: (sizes[s], s[0] * s[1]), default=(0, 0))
    views: list[View] = []
    for path, view, wh in found:
        if wh != size:
            turned = _turned(wh, size)
            why = (f"its size {wh[0]}x{wh[1]} differs from the {size[0]}x{size[1]} of most "
                   "photos (calibrate one resolution at a time" + (
                       "; this one is turned between landscape and portrait: take every "
                       "board photo held as the camera will be at the table)" if turned
                       else ")"))
        elif (twin := next((v for v in views if _same_view(v, view)), None)) is not None:
            # a copy of a photo adds no view, only weight, and would count toward the
            # views the fit needs
            why = f"the board lies as in {twin.name} (a copy adds nothing)"
        else:
            views.append(view)
            why = None
        if report is not None:
            report(path, why, len(view.image_points), True)
    return calibrate_views(views, size, board)


def _same_view(a: View, b: View, tolerance_px: float = 0.5) -> bool:
    """Whether two views show the same board corners within ``tolerance_px`` (one photo
    given twice, or two shots of a board and camera that did not move)."""
    if a.object_points.shape != b.object_points.shape or not np.array_equal(
            a.object_points, b.object_points):
        return False
    return bool(np.max(np.abs(a.image_points - b.image_points)) <= tolerance_px)


def _one_image(path: Path, board: BoardSpec, detector: Any
               ) -> tuple[str | None, View | None, tuple[int, int]]:
    """(why ``path`` gives no view or None, its view, its size)."""
    import cv2

    from calibration.images import ImageError, read_image

    try:
        # (the checks every photo gets: cut short, damaged, a pipe, too large)
        img = cv2.cvtColor(read_image(path), cv2.COLOR_BGR2GRAY)
    except ImageError as exc:
        why = str(exc)
        return why.removeprefix(f"{path}: "), None, (0, 0)
    h, w = img.shape[:2]
    view = detect_board(img, board, path.name, detector)
    if view is None:
        return (f"no ChArUco board found (need {MIN_CORNERS}+ corners, not all on one line)"
                + _board_hint(img, board), None, (w, h))
    return None, view, (w, h)


def _board_hint(gray: np.ndarray, board: BoardSpec) -> str:
    """What the markers in a photo where the board was not found say of the settings: a
    board of other squares (its marker ids run past this one's), or none of the board's
    markers at all (another dictionary, or no board in the photo)."""
    ids = marker_ids(gray, board.dictionary)
    if ids is None or len(ids) < 4:
        import cv2

        flipped = marker_ids(cv2.flip(gray, 1), board.dictionary)
        if flipped is not None and len(flipped) >= 4:
            # (markers read only mirrored: a webcam's mirror setting, a front camera)
            return ("; the photo is mirrored: the board's markers read only flipped left to "
                    "right (a webcam's mirror setting, a front camera): turn the mirroring off")
        for other in COMMON_DICTIONARIES:
            seen = marker_ids(gray, other) if other != board.dictionary else None
            # (a board shows many; the mat's four corner markers are no board)
            if seen is not None and len(seen) >= 6:
                return (f"; it shows {len(seen)} {other} markers: was the board printed "
                        f"with --dictionary {other}?")
        return ""
    top = int(np.max(ids))
    if top >= board.n_markers:
        return (f"; it shows {len(ids)} {board.dictionary} markers with ids up to {top}, more "
                f"than a {board.squares_x}x{board.squares_y} board has ({board.n_markers}): "
                "is --board the printed board's squares (across x down)?")
    if board.squares_x != board.squares_y:
        turned = BoardSpec(board.squares_y, board.squares_x, board.square_mm,
                           board.marker_mm, board.dictionary)
        if detect_board(gray, turned) is not None:
            return (f"; it is a {turned.squares_x}x{turned.squares_y} board (squares across x "
                    f"down): pass --board {turned.squares_x}x{turned.squares_y}")
    # the settings' own board, but too little of it: cut by the frame, blurred or small
    return (f"; it shows {len(ids)} of the board's markers but too few of its corners: is "
            "the whole board in the photo, sharp, and not too small?")


# ---------------------------------------------------------------------------------------------
# the camera file


def save_intrinsics(path: str | Path, K: np.ndarray, dist: np.ndarray,
                    image_size: tuple[int, int], rms_px: float | None = None,
                    board: BoardSpec | None = None, views: int | None = None) -> Path:
    """Write a camera file (atomically: an interrupted save leaves the old one intact)."""
    path = given_path(path).expanduser()
    K = np.asarray(K, np.float64).reshape(3, 3)
    dist = np.asarray(dist, np.float64).ravel()
    data: dict[str, Any] = {
        "version": CAMERA_FILE_VERSION,
        "image_size": [int(image_size[0]), int(image_size[1])],
        "K": [[float(v) for v in row] for row in K],
        "dist": [float(v) for v in dist],
    }
    if rms_px is not None:
        data["rms_px"] = round(float(rms_px), 4)
    if views is not None:
        data["views"] = int(views)
    if board is not None:
        data["board"] = board.to_dict()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # one field per line: readable in a diff, K's rows stay on one line
        write_text_atomic(path, "{\n" + ",\n".join(f" {json.dumps(k)}: {json.dumps(v)}"
                                                    for k, v in data.items()) + "\n}\n")
    except OSError as exc:
        raise IntrinsicsError(f"cannot write camera file {str(path)!r}: "
                              f"{refusal_words(exc)}") from None
    return path


def read_camera_file(path: str | Path) -> dict[str, Any]:
    """The validated camera file as a dict (K and dist as arrays, image_size a tuple). The
    saved one that cannot be read says how to make it again: it is used without being
    named, and blocked every command until removed by hand."""
    try:
        return _read_camera_file(path)
    except IntrinsicsError as exc:
        p = given_path(path).expanduser()
        if p.is_file() and (other := wrong_kind(p, "a camera file")) is not None:
            # (a colour profile or a mat file given as --intrinsics: said as such)
            raise IntrinsicsError(f"camera file {str(p)!r} {other}") from None
        if not p.is_file() or p != default_camera_path():
            raise
        raise IntrinsicsError(f"{exc}; it is the saved camera file: `companion "
                              "calibrate-camera` with board photos replaces it, and "
                              "--no-intrinsics reads without it") from None


def _read_camera_file(path: str | Path) -> dict[str, Any]:
    p = given_path(path).expanduser()
    src = f"camera file {str(p)!r}"
    try:
        data = read_json(p)
    except FileNotFoundError:
        raise IntrinsicsError(f"{src} does not exist (run 'companion calibrate-camera' "
                              "first)") from None
    except OSError as exc:
        raise IntrinsicsError(f"{src} cannot be read: {exc.strerror or exc}") from None
    except JsonTextError as exc:
        raise IntrinsicsError(f"{src} {exc}") from None
    if not isinstance(data, dict):
        raise IntrinsicsError(f"{src}: expected a JSON object, got {type(data).__name__}")
    if data.get("version", CAMERA_FILE_VERSION) != CAMERA_FILE_VERSION:
        raise IntrinsicsError(f"{src}: version {data.get('version')!r}; this program reads "
                              f"version {CAMERA_FILE_VERSION}")
    for name in ("K", "dist", "image_size"):
        if name not in data:
            raise IntrinsicsError(f"{src}: missing field {name!r}")
    K = _matrix(data["K"], src)
    dist = data["dist"]
    if (not isinstance(dist, list) or len(dist) not in (4, 5, 8, 12, 14)
            or not all(finite_number(v) for v in dist)):
        raise IntrinsicsError(f"{src}: field 'dist' must be a list of 4, 5, 8, 12 or 14 "
                              f"numbers (OpenCV distortion coefficients), got {dist!r}")
    size = data["image_size"]
    if (not isinstance(size, list) or len(size) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in size)):
        raise IntrinsicsError(f"{src}: field 'image_size' must be [width, height] in pixels, "
                              f"got {size!r}")
    coefficients = np.array(dist, np.float64)
    fold = lens_fold(K, coefficients, (size[0], size[1]))
    if fold is not None:
        raise IntrinsicsError(f"{src}: its lens model is no lens: it {fold}: run 'companion "
                              "calibrate-camera' again with more photos")
    out = dict(data)
    out.update(K=K, dist=coefficients, image_size=(size[0], size[1]))
    return out


def _turned(size: tuple[int, int], other: tuple[int, int]) -> bool:
    """Whether an image of ``size`` (width, height) is one of ``other`` turned a quarter
    (its sides swapped, at any scale)."""
    w, h = size
    ow, oh = other
    return w != h and abs(w * ow - h * oh) <= 0.01 * max(w * ow, h * oh)


def load_intrinsics(path: str | Path, image_size: tuple[int, int] | None = None) -> Intrinsics:
    """The camera file's K and distortion. With ``image_size`` (width, height) of the images
    they will be used on, K is rescaled when those are the calibration images scaled (the
    same camera at another resolution); another aspect ratio means another sensor crop,
    which no rescaling fixes, so that is an error."""
    data = read_camera_file(path)
    K: np.ndarray = data["K"]
    if image_size is not None and tuple(image_size) != data["image_size"]:
        cw, ch = data["image_size"]
        w, h = int(image_size[0]), int(image_size[1])
        sx, sy = w / cw, h / ch
        if abs(sx - sy) > 0.01 * max(sx, sy):
            if _turned((w, h), (cw, ch)):
                # (a phone held upright: the same lens, but which way it turned the picture
                # is not known here, and the principal point moves with it)
                raise IntrinsicsError(
                    f"camera file {str(path)!r} was calibrated at {cw}x{ch} and the "
                    f"images are {w}x{h}: the camera is turned between landscape and "
                    "portrait. Hold it as when its board photos were taken, calibrate it "
                    "again held this way, or read them without it (--no-intrinsics)")
            raise IntrinsicsError(
                f"camera file {str(path)!r} was calibrated at {cw}x{ch}; images of "
                f"{w}x{h} have another aspect ratio (another camera, or a crop): calibrate "
                "at this resolution, or read them without it (--no-intrinsics)")
        S = np.array([[sx, 0, 0.5 * sx - 0.5], [0, sy, 0.5 * sy - 0.5], [0, 0, 1.0]])
        K = S @ K  # pixel centres at (i + 0.5) / size scale about the image's edge
    return Intrinsics(K, data["dist"])


def _matrix(v: Any, src: str) -> np.ndarray:
    ok = (isinstance(v, list) and len(v) == 3
          and all(isinstance(r, list) and len(r) == 3 and all(finite_number(x) for x in r)
                  for r in v))
    if not ok:
        raise IntrinsicsError(f"{src}: field 'K' must be a 3x3 list of numbers, got {v!r}")
    K = np.array(v, np.float64)
    if not (K[0, 0] > 0 and K[1, 1] > 0 and np.allclose(K[2], [0, 0, 1])):
        raise IntrinsicsError(f"{src}: field 'K' is not a camera matrix (need fx, fy > 0 and "
                              f"last row [0, 0, 1]), got {v!r}")
    return K


def _num(v: float) -> float | int:
    return int(v) if float(v).is_integer() else float(v)
