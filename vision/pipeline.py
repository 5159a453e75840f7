"""From one overhead photo to the observation record of shared/spec/table.md.

Stages, each timed into the record's ``timings_ms``:

1. **calibrate**: the mat's ArUco markers give the table frame
   (:class:`calibration.table.TableCalibrator`, kept across frames so that a marker hidden
   by a hand reuses the last good calibration). No table, no guessing: the record says
   ``"calibrated": false`` and why, with no cards and no pyramids.
2. **cards**: a card detector (any object with ``detect(image, calib, mat) -> CardBoxes``;
   by default the ONNX one of :mod:`vision.detection.cards`) says where cards lie and which
   way their long side runs.
3. **fit**: each box is snapped onto the card's own edges (:mod:`vision.cards.fit`): the
   detector's boxes are a few millimetres and degrees off, which is enough for the gallery
   to read a patch as another card.
4. **identify**: every box is cut out of the image as an upright patch through the
   calibration (:func:`vision.cards.identify.warp_card_mm`, at the deck's card size) and the
   deck's identity network (:mod:`vision.cards.net`, shipped for the tarot) or else its
   gallery names it ("the identifier" below); either also says which end is the top of the
   art, which a box cannot. A card lying over or under another is cut a little off its box
   too, and a cut read better as another card is kept (:data:`COVERED_SHIFTS_MM`). A patch
   the identifier takes for bare table is dropped when the detector was unsure of the box
   too (a false box); any other card the identifier is unsure of is kept with its nearest
   card id, ``"identified": false`` and a low confidence. So is a face the gallery alone
   reads as a back while the cut does not look like one
   (:meth:`vision.cards.identify.Gallery.unknown_face`): a face up card is never a back.
5. **pyramids**: :class:`vision.pyramids.find.PyramidFinder`, run beside stages 2-4 when
   ``threads >= 2``: the shipped finder in a process of its own
   (:mod:`vision.pyramids.process`; on a thread the two halves wait for each other's Python),
   an injected one on a second thread. It looks at the mat and a border around it; where
   stage 4 found cards lying past that border (a game spread off the mat, most often south,
   where the detector's square canvas shows 290 mm of table), it then looks there too
   (**pyramids_past**, :data:`SPILL_REACH_CELLS`).

Everything heavy (detector session, gallery, colour model) is built once in ``__init__``.
"""

from __future__ import annotations

import logging
import math
import shlex
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

import cv2
import numpy as np

from calibration.mat import DEFAULT_MAT, Mat, virtual_mat
from calibration.from_cards import CardCalibrator
from calibration.images import (IMAGE_SUFFIXES, ImageError, check_table_size, folder_images,
                                greyscale, read_image)
from calibration.intrinsics import image_files
from calibration.motion import deblur
from calibration.sharpness import blur_limit_px, edge_blur_px, markers_px_per_mm
from calibration.table import Calibration, Intrinsics, TableCalibrator
from companion.core.errors import CompanionError
from companion.core.files import given_path, record_text
from companion.core.observation import record_deg
from vision.cards.fit import fit_card_boxes
from vision.cards.identify import (BACK_ID, CardMatch, Gallery, GalleryError, art_angle_deg,
                                   card_corners_mm, warp_card_mm)
from vision.cards.net import CardNet
from vision.detection.cards import overlap_area
from vision.detection.view import shown_mm
from vision.pyramids.process import PyramidProcess, PyramidProcessError

log = logging.getLogger(__name__)

#: With two or more threads the shipped pyramid finder runs in a process of its own
#: (:mod:`vision.pyramids.process`): on a thread it waits for the card stages' Python and
#: they for its. Next frame of a still camera on renders of the benchmark's groups (two
#: cores, 51 frames alternating): 72 -> 61 ms median, 1.72 -> 1.46 times the plain detector;
#: ``bench/vision.py``'s own 40 frames: 1.76 -> 1.64.
PYRAMIDS_IN_PROCESS = True

#: A game can spread off the mat: where a card found lies past the border the pyramid finder
#: looks at (its corner more than vision.pyramids.find.SPILL_CARD_MM past the mat grown by
#: BORDER_MM; the detector's canvas shows that far, and farther south), the finder looks again
#: there, around each such card as far as this many lattice pitches (a pyramid on it or in
#: the cell beside it); 0: never. A pyramid found there within SPILL_SAME_MM of one found
#: on the mat is that one.
SPILL_REACH_CELLS = 1.5
SPILL_SAME_MM = 12.0

#: ``--deck`` names of the galleries shipped in ``models/`` (see their model cards).
SHIPPED_DECKS: dict[str, str] = {
    "tarot": "cards-tarot-rws.npz",
    "rws-tarot": "cards-tarot-rws.npz",
    "decktet": "cards-decktet.npz",
}
#: The identity networks shipped for some of those decks (vision/cards/net.py): they read a
#: card under pyramids or in dim light better than the gallery; other decks use the gallery.
SHIPPED_NETS: dict[str, str] = {
    "tarot": "cards-tarot-net.onnx",
    "rws-tarot": "cards-tarot-net.onnx",
    "decktet": "cards-decktet-net.onnx",
}
#: The pyramid finder's second opinion (vision/pyramids/verify.py) trained on for some decks:
#: it tells a pyramid from card art, and a deck's art is its own. The one shipped for the
#: tarot took the Decktet's suns and blues for pyramids (held out: 116 false finds on 177
#: tables); the Decktet's copy was trained on from it with Decktet tables among tarot ones,
#: and read the tarot's tables worse than the default one (models/pyramids-verify-decktet.md),
#: so it is the Decktet's alone. Other decks: the default. Each runs as its int8 copy
#: (:data:`vision.pyramids.find.VERIFIER_INT8`).
SHIPPED_VERIFIERS: dict[str, str] = {
    "decktet": "pyramids-verify-decktet.onnx",
}
#: The card detector trained on for some decks (models/cards-obb-decktet.md): the shipped one
#: learnt the tarot's long cards and missed the Decktet's shorter ones on busy tables; the
#: Decktet's copy, trained on from it with Decktet tables alone, is the Decktet's alone.
#: Other decks: the default (models/cards-obb.onnx).
SHIPPED_DETECTORS: dict[str, str] = {
    "decktet": "cards-obb-decktet.onnx",
}
DEFAULT_DECK = "tarot"

#: A box whose patch the identifier takes for bare table is dropped only when the detector
#: was not sure of it either: a card under three pyramids in dim light can look more like
#: table than like any card to the gallery (bench/vision.py, hard scenes), while its box is
#: sure.
DROP_TABLE_BELOW_SCORE = 0.6

#: A box only the detector's second look found (``vision.detection.cards.SECOND_LOOK_DEG``)
#: is kept where the gallery names its card with at least this confidence and the box's
#: long side is the deck's card's within SECOND_LOOK_LONG_TOLERANCE (a share): the turned
#: canvas also offers boxes across two cards or over patterned cloth, which the gallery
#: cannot name or names unsurely, and a few short ones over part of a card
#: (figures: docs/vision-tuning.md).
SECOND_LOOK_ID_MIN = 0.85
SECOND_LOOK_LONG_TOLERANCE = 0.12

#: Box refinement for cards the identifier could not name: a box a few millimetres or
#: degrees off cuts a patch with table along one side and a strip of the card missing, which
#: reads as table or as a back (bench/vision.py). The patch is cut again around the box,
#: coarse to fine (angle, then position, then half steps), and the cut the identifier
#: matches best is kept; a refined card also gets the refined centre and angle.
REFINE_ANGLES_DEG = (-8.0, -4.0, 4.0, 8.0)
REFINE_STEP_MM = 6.0

#: A box fitted to edges (vision/cards/fit.py) further than FIT_SHORT_MOVE_MM from the
#: detector's is kept only when the gallery reads its cut better by FIT_LONG_MOVE_GAIN (margin
#: units): the cards under the top of a pile offer edges a few millimetres off everywhere, and
#: a box pulled onto them still reads as the same card (sample game, draw pile). A fit that
#: corrects a misread card gains far more (7 -> 26 on the sample frames).
FIT_SHORT_MOVE_MM = 4.0
FIT_LONG_MOVE_GAIN = 2.0

#: The long side (mm) of the cards the default detector was trained on (the tarot's).
DETECTOR_CARD_LONG_MM = 120.0
#: With a deck whose cards are shorter than the detector's by more than LONG_BOX_MM (a deck
#: enrolled from a folder, which the tarot's detector reads; the Decktet has its own), a card
#: box longer than the deck's cards by more than LONG_BOX_MM is cut again with the card at
#: either end of it and in eighths between (LONG_BOX_STEPS;
#: :meth:`TablePipeline._recut_long_boxes`); a cut replaces the box's when the gallery reads it
#: better by LONG_BOX_GAIN (margin units). Not with the tarot: its boxes are seldom long, and
#: recutting them lost a table and won none (figures: docs/vision-tuning.md)
LONG_BOX_MM = 8.0
LONG_BOX_GAIN = 0.0
#: where along such a box its card is cut, as shares of the excess length from the middle
LONG_BOX_STEPS = (-0.5, -0.375, -0.25, -0.125, 0.125, 0.25, 0.375, 0.5)

#: A card whose cut overlaps another card's by more than COVERED_OVERLAP of a card's area (a
#: row's cards over each other, a pile, a loose card across the lattice) is also cut
#: COVERED_SHIFTS_MM along and across its axis, both ways; the cut the gallery reads best
#: replaces the card's own where it reads better by COVERED_GAIN (margin units) and names
#: another card: :meth:`TablePipeline._recut_covered_boxes`. The detector places such a card's
#: box 8-25 mm off now and then, between the card and the one over or under it, and the cut
#: then shows parts of both, which the readers can name wrongly and surely. A cut that names
#: the same card does not move it: that carried misread cards further off
#: (figures: docs/vision-tuning.md)
COVERED_OVERLAP = 0.05
COVERED_SHIFTS_MM = (8.0, 16.0)
COVERED_GAIN = 1.0


#: An enrolled deck's cards no longer than this (mm) are boxed by the Decktet's detector: a
#: detector learns the cards' shape, not their art, and the tarot's (120 mm) boxed a Decktet
#: printing enrolled from photos 9% long, so that observe called the mat file wrong
SHORT_CARD_MM = 100.0


def _detector_deck(card_size_mm: tuple[float, float]) -> str:
    """The shipped deck whose card detector fits an enrolled deck of cards this size."""
    return "decktet" if max(card_size_mm) <= SHORT_CARD_MM else ""


def _deck_model(shipped: dict[str, str], deck: str) -> Path | None:
    """The model file shipped for the deck named ``deck`` in ``shipped`` (one of the
    SHIPPED_* tables above); None where the deck takes the default one."""
    from models import model_path

    return model_path(shipped[deck]) if deck in shipped else None


class CardBoxesLike(Protocol):
    """What a card detector returns (:class:`vision.detection.cards.CardBoxes`)."""

    @property
    def centers_mm(self) -> np.ndarray: ...        # (N, 2) table mm

    @property
    def angles_deg(self) -> np.ndarray: ...        # (N,) long side's direction, [0, 180)

    @property
    def sizes_mm(self) -> np.ndarray: ...          # (N, 2) short, long side

    @property
    def scores(self) -> np.ndarray: ...            # (N,)


class CardDetectorLike(Protocol):
    def detect(self, image_bgr: np.ndarray, calib: Calibration, mat: Mat) -> CardBoxesLike: ...


# ---------------------------------------------------------------------------------------------
# reading images


def expand_images(inputs: list[str | Path]) -> list[Path]:
    """Files as given; folders become their images (sorted by name, by suffix
    :data:`IMAGE_SUFFIXES`, and their HEIC photos, not recursive). A missing path, or a
    HEIC photo, is kept, so the caller's :func:`read_image` names it among the results."""
    return image_files(inputs, IMAGE_SUFFIXES, lambda p, why: ImageError(f"{p}: folder {why}"),
                       heif_read=True)


# ---------------------------------------------------------------------------------------------
# decks


def load_deck_gallery(deck: str | Path | Gallery | None = None) -> Gallery:
    """The card gallery for ``deck``: a shipped deck name (``tarot``, ``decktet``; see
    :data:`SHIPPED_DECKS`), a name enrolled with ``companion enroll-deck``, or the path of
    a gallery file. A deck *folder* (card images) must be enrolled first."""
    from vision.cards.galleries import load_gallery

    if isinstance(deck, Gallery):
        return deck
    if deck is None:
        deck = DEFAULT_DECK
    if not isinstance(deck, Path) and deck in SHIPPED_DECKS:
        from models import model_path

        return load_gallery(model_path(SHIPPED_DECKS[deck]))
    if str(deck).strip() == "":
        raise GalleryError("the deck's name is empty: give a shipped deck (tarot, decktet), "
                           "an enrolled deck's name, or a gallery file")
    p = given_path(deck).expanduser()
    if p.is_dir():
        enrolled = _enrolled_from(p, deck)
        if enrolled is not None:
            return enrolled
        if not folder_images(p)[0]:
            raise GalleryError(f"deck {str(deck)!r} is a folder with no card images in it, "
                               "and no deck is enrolled from it or by that name: give a "
                               "shipped deck (tarot, decktet), an enrolled deck's name, or a "
                               "gallery file")
        raise GalleryError(
            f"deck {str(deck)!r} is a folder of card images, not a gallery: enroll it first "
            f"('companion enroll-deck {deck} --name NAME'), then pass --deck NAME")
    return load_gallery(deck)


def _enrolled_from(folder: Path, given: str | Path) -> Gallery | None:
    """The enrolled gallery ``given`` means where it names a folder of card images: the one
    enrolled under that bare name (``--deck my-tarot`` run beside the folder my-tarot), or
    one enrolled from that very folder (``--deck scans/my-tarot`` after ``enroll-deck
    scans/my-tarot``); None when there is none."""
    from vision.cards.galleries import gallery_path, list_galleries, load_gallery

    text = str(given)
    if not isinstance(given, Path) and "/" not in text and "\\" not in text:
        try:
            path = gallery_path(text)
        except GalleryError:
            path = None
        if path is not None and path.is_file():
            log.info("deck %r: the gallery enrolled under that name (%s), not the folder "
                     "here", text, path)
            return load_gallery(path)
        # else the one enrolled from this folder, under whatever name
    want = folder.resolve()
    found: list[tuple[float, str, Gallery]] = []
    for name in list_galleries():
        try:
            path = gallery_path(name)
            gallery = load_gallery(path)
            source = (gallery.meta or {}).get("deck_folder")
            if source is not None and Path(source).resolve() == want:
                when = (gallery.meta or {}).get("enrolled_at")
                # (a gallery of an older version says not when: its file's time, then)
                found.append((float(when) if isinstance(when, (int, float))
                              and not isinstance(when, bool) else path.stat().st_mtime,
                              name, gallery))
        except (GalleryError, OSError):
            continue        # (a broken gallery of another deck is not this one)
    if not found:
        return None
    # enrolled again (the images mended) under another name: the latest is meant
    found.sort(key=lambda f: f[0])
    when, name, gallery = found[-1]
    if len(found) > 1:
        log.warning("deck %r: enrolled %d times; the latest, %r, is used (not %s)", text,
                    len(found), name, ", ".join(repr(f[1]) for f in found[:-1]))
    else:
        log.info("deck %r: the gallery enrolled from it (%s)", text, name)
    try:
        changed = [p.name for p in folder_images(folder)[0] if _mtime(p) > when]
    except OSError:
        changed = []
    if changed:
        log.warning("deck %r: %s changed since the gallery %r was enrolled from it: "
                    "run 'companion enroll-deck %s --name %s' again", text,
                    ", ".join(changed[:5]) + (" ..." if len(changed) > 5 else ""), name,
                    shlex.quote(str(folder)), shlex.quote(name))
    return gallery


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def deck_name(deck: str | Path | Gallery | None) -> str | None:
    """The shipped deck name ``deck`` stands for (``None`` -> the default), else None."""
    if deck is None:
        return DEFAULT_DECK
    if isinstance(deck, str) and deck in SHIPPED_DECKS:
        return deck
    return None


# ---------------------------------------------------------------------------------------------
# geometry helpers


def image_points(calib: Calibration, mm: np.ndarray) -> np.ndarray:
    """Table mm (N, 2) to pixels of the camera image as taken (lens distortion applied when
    the calibration carries it; :meth:`Calibration.to_image` gives undistorted pixels)."""
    ideal = calib.to_image(np.asarray(mm, np.float64).reshape(-1, 2))
    intr = calib.intrinsics
    if intr is None or not intr.distorts:
        return ideal
    return intr.distort_points(ideal)


def table_window(calib: Calibration, area_mm: tuple[float, float, float, float],
                 size: tuple[int, int], pad_mm: float) -> tuple[int, int, int, int] | None:
    """(x0, y0, x1, y1): the pixels of an undistorted image (``calib`` without a lens) where
    the table's ``area_mm`` (x0, y0, x1, y1) plus ``pad_mm`` around it lies, or None when
    that is the whole frame (or the padded area reaches behind the camera, where a
    homography's image means nothing)."""
    if calib.H is None:
        return None
    w, h = size
    # a homography maps the padded area's edges to straight lines: its corners bound it
    x0, y0 = area_mm[0] - pad_mm, area_mm[1] - pad_mm
    x1, y1 = area_mm[2] + pad_mm, area_mm[3] + pad_mm
    corners = np.array([[x0, y0, 1.0], [x1, y0, 1.0], [x1, y1, 1.0], [x0, y1, 1.0]])
    p = corners @ np.linalg.inv(calib.H).T
    if not (np.all(p[:, 2] > 1e-9) or np.all(p[:, 2] < -1e-9)):
        return None
    px = p[:, :2] / p[:, 2:3]
    u0, v0 = (max(0, int(math.floor(v)) - 2) for v in px.min(axis=0))
    u1 = min(w, int(math.ceil(px[:, 0].max())) + 2)
    v1 = min(h, int(math.ceil(px[:, 1].max())) + 2)
    if u1 - u0 < 2 or v1 - v0 < 2 or (u1 - u0) * (v1 - v0) > 0.9 * w * h:
        return None
    return u0, v0, u1, v1


def _r(v: float, nd: int = 1) -> float:
    return round(float(v), nd) + 0.0  # + 0.0: no -0.0 in the JSON


def pyramid_records(finds: list[Any], calib: Calibration) -> list[dict[str, Any]]:
    """The observation record's pyramids: each find's dict, its base centre in image pixels
    too (``base_center_px``)."""
    out = []
    for f in finds:
        d = f.to_dict() if hasattr(f, "to_dict") else dict(f)
        px = image_points(calib, np.asarray([d["base_center_mm"]], np.float64))[0]
        d["base_center_px"] = [_r(px[0]), _r(px[1])]
        out.append(d)
    return out


def _pts(a: np.ndarray) -> list[list[float]]:
    return [[_r(x), _r(y)] for x, y in np.asarray(a, np.float64).reshape(-1, 2)]


# ---------------------------------------------------------------------------------------------
# the pipeline


class TablePipeline:
    """One image in, one observation record (a JSON-ready dict) out.

    ``mat``: the calibration mat, or None for a table without one (each image is then
    calibrated from its cards: :class:`calibration.from_cards.CardCalibrator`, and the play
    area is a :func:`~calibration.mat.virtual_mat` centred on them); ``deck``: see
    :func:`load_deck_gallery`; ``intrinsics``: an :class:`~calibration.table.Intrinsics` or
    the path of a camera file from ``companion calibrate-camera`` (rescaled to each image's
    size);
    ``card_detector`` / ``pyramid_finder``: injected stages (default: the shipped ONNX card
    detector and :class:`vision.pyramids.find.PyramidFinder`); ``threads``: the CPU threads
    the pipeline may use: with 2 or more the pyramids run beside the cards, and the card
    stages' onnxruntime sessions get ``threads - 1`` (at least one); ``colors``: the
    players' colour profile (``companion calibrate-colors``) for the default pyramid finder;
    ``card_net``: the card identity network (:class:`vision.cards.net.CardNet`) to name card
    patches with, ``False`` for the gallery only, ``None`` (default) for the network shipped
    for ``deck`` when there is one (:data:`SHIPPED_NETS`); ``pyramid_process``: with 2 or more
    threads, run the shipped pyramid finder in a process of its own rather than on a thread
    (None: :data:`PYRAMIDS_IN_PROCESS`).
    """

    def __init__(self, mat: Mat | None = DEFAULT_MAT, deck: str | Path | Gallery | None = None,
                 intrinsics: Intrinsics | str | Path | None = None,
                 card_detector: CardDetectorLike | None = None,
                 pyramid_finder: Any = None, threads: int = 2, colors: Any = None,
                 card_net: "CardNet | bool | None" = None,
                 pyramid_process: bool | None = None) -> None:
        #: True when there is no printed mat: the cards give the table frame
        self.no_mat = mat is None
        self.mat = mat if mat is not None else virtual_mat()
        mat = self.mat
        self.threads = max(1, int(threads))
        self.gallery = load_deck_gallery(deck)
        # the shipped deck ``deck`` stands for ("": one enrolled from a folder), whose own
        # models are looked up below
        name = deck_name(deck) or ""
        #: the deck's identity network, where one is shipped (and ``card_net`` is not
        #: False): it has the last word on each card's final cut (:func:`_fuse`)
        self.card_net: CardNet | None = None
        if isinstance(card_net, CardNet):
            self.card_net = card_net
        elif card_net is not False and (net_path := _deck_model(SHIPPED_NETS, name)):
            self.card_net = CardNet(net_path, threads=max(1, self.threads - 1))
        self.card_size_mm = (float(self.gallery.card_size_mm[0]),
                             float(self.gallery.card_size_mm[1]))
        #: the pyramid finder's second opinion for this deck (None: the default one)
        from vision.pyramids.find import verifier_file

        self.verify_model = _deck_model(
            {deck: verifier_file(file) for deck, file in SHIPPED_VERIFIERS.items()}, name)
        self._intrinsics_path: Path | None = None
        self._intrinsics: Intrinsics | None = None
        # one calibrator per image size: its memory (last good calibration) and intrinsics
        # belong to one camera mode
        self._calibrators: dict[tuple[int, int], TableCalibrator | CardCalibrator] = {}
        self.last_calibration: Calibration | None = None
        self.set_camera(intrinsics)  # a bad camera file fails now, not at the first image
        if card_detector is None:
            from vision.detection.cards import CardDetector

            # with the pyramids on a thread of their own, one core each: two onnxruntime
            # pools on two cores fight (measured 165 ms a frame against 120)
            card_detector = CardDetector(
                _deck_model(SHIPPED_DETECTORS, name or _detector_deck(self.card_size_mm)),
                threads=max(1, self.threads - 1))
        self.card_detector: CardDetectorLike = card_detector
        self._colors = colors
        self._finder: Any = pyramid_finder
        #: the shipped finder in a process of its own (:mod:`vision.pyramids.process`)
        self._process: Any = None
        if pyramid_process is None:
            pyramid_process = PYRAMIDS_IN_PROCESS
        if pyramid_finder is None and self.threads >= 2 and pyramid_process:
            try:
                self._process = PyramidProcess(mat, colors, self.verify_model)
            except PyramidProcessError as exc:
                log.warning("%s; the pyramids run on a thread instead", exc)
        if self._process is None:
            self._own_finder()   # a missing model fails now, not at the first image
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="pyramids") \
            if self.threads >= 2 and self._process is None else None

    @property
    def pyramid_finder(self) -> Any:
        """The pyramid stage's finder in this process (built when first asked for where the
        shipped one runs in a process of its own)."""
        return self._own_finder()

    def _own_finder(self) -> Any:
        if self._finder is None:
            from vision.pyramids.find import PyramidFinder

            self._finder = PyramidFinder(self.mat, colors=self._colors,
                                         verify_model=self.verify_model)
        return self._finder

    def set_camera(self, intrinsics: Intrinsics | str | Path | None) -> None:
        """Another camera (or the same one moved or re-calibrated): new intrinsics, and the
        calibration memory of the old camera is forgotten."""
        self._intrinsics_path = None
        self._intrinsics = None
        if isinstance(intrinsics, (str, Path)):
            from calibration.intrinsics import read_camera_file

            read_camera_file(intrinsics)
            self._intrinsics_path = Path(intrinsics)
        else:
            self._intrinsics = intrinsics
        self._undistort_maps: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
        self.forget_calibration()

    def forget_calibration(self) -> None:
        """Forget where the mat (or the cards' frame) was: the next image is calibrated as a
        new camera's first frame, with the same lens (:meth:`set_camera` for another)."""
        self._calibrators.clear()
        self.last_calibration = None

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        if self._process is not None:
            self._process.close()
            self._process = None

    def __enter__(self) -> "TablePipeline":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- stages -----------------------------------------------------------------------------

    def _calibrator(self, image: np.ndarray) -> TableCalibrator | CardCalibrator:
        h, w = image.shape[:2]
        cal = self._calibrators.get((w, h))
        if cal is None:
            intr = self._intrinsics
            if self._intrinsics_path is not None:
                from calibration.intrinsics import load_intrinsics

                intr = load_intrinsics(self._intrinsics_path, (w, h))
            if self.no_mat:
                cal = CardCalibrator(self.card_size_mm, intr, self.mat)
            else:
                cal = TableCalibrator(self.mat, intr)
            self._calibrators[(w, h)] = cal
        return cal

    def _undistorted(self, image: np.ndarray, calib: Calibration
                     ) -> tuple[np.ndarray, Calibration]:
        """The image with the lens distortion taken out, and the calibration that goes with
        it (no distortion left to model). The maps are built once per camera: undistorting
        each frame from scratch costs several times the remap."""
        intr = calib.intrinsics
        if intr is None or not intr.distorts:
            return image, calib
        h, w = image.shape[:2]
        maps = self._undistort_maps.get((w, h))
        if maps is None:
            K = np.asarray(intr.K, np.float64)
            maps = cv2.initUndistortRectifyMap(K, np.asarray(intr.dist, np.float64), None, K,
                                               (w, h), cv2.CV_16SC2)
            self._undistort_maps[(w, h)] = maps
        ideal_calib = replace(calib, intrinsics=None)
        # the detector's view, and a card's length beyond it (a card it sees at its edge)
        window = table_window(ideal_calib, shown_mm(self.mat), (w, h), max(self.card_size_mm))
        if window is None:
            ideal = cv2.remap(image, maps[0], maps[1], cv2.INTER_LINEAR,
                              borderMode=cv2.BORDER_CONSTANT)
        else:
            # only where the table can be: the rest of a far camera's frame is never read
            x0, y0, x1, y1 = window
            ideal = np.zeros_like(image)
            cv2.remap(image, maps[0][y0:y1, x0:x1], maps[1][y0:y1, x0:x1], cv2.INTER_LINEAR,
                      dst=ideal[y0:y1, x0:x1], borderMode=cv2.BORDER_CONSTANT)
        return ideal, ideal_calib

    def _cards(self, image: np.ndarray, calib: Calibration, timings: dict[str, float]
               ) -> tuple[list[dict[str, Any]], int, int]:
        t0 = time.perf_counter()
        # the detector's view and the card patches are plain homographies of the undistorted
        # image; the record's pixel corners go back through the lens (``calib``)
        ideal, ideal_calib = self._undistorted(image, calib)
        t_u = time.perf_counter()
        boxes = self.card_detector.detect(ideal, ideal_calib, self.mat)
        t1 = time.perf_counter()
        timings["undistort"] = (t_u - t0) * 1000
        timings["cards"] = (t1 - t_u) * 1000
        # copies: fitting and refinement update them, the detector's boxes stay as they were
        centers = np.array(boxes.centers_mm, np.float64).reshape(-1, 2)
        axes = np.array(boxes.angles_deg, np.float64).reshape(-1)
        sizes = np.asarray(boxes.sizes_mm, np.float64).reshape(-1, 2)
        scores = np.asarray(boxes.scores, np.float64).reshape(-1)
        # a weak box is not fitted: it may lie across two cards or on a pile's edge, and a cut
        # snapped onto whatever edges are there can read as a card that is not on the table
        sure = np.flatnonzero(scores >= DROP_TABLE_BELOW_SCORE)
        fits = fit_card_boxes(ideal, ideal_calib, centers[sure], axes[sure], self.card_size_mm)
        moved = [(int(i), f) for i, f in zip(sure, fits) if f.moved]
        for k, f in zip(sure, fits):
            centers[k], axes[k] = f.center_mm, f.axis_deg % 180.0
        t_f = time.perf_counter()
        timings["fit"] = (t_f - t1) * 1000
        # the crop's top edge toward the box's long-axis direction: the gallery then tells
        # whether the art's top is there or at the other end. A fitted box is cut beside the
        # detector's own: in a pile the edges of the cards underneath can pull the fit off
        # the top card, so the gallery decides which of the two cuts shows a card better.
        crops = [warp_card_mm(ideal, ideal_calib, centers[i], float(axes[i]), self.card_size_mm)
                 for i in range(len(scores))]
        crops += [warp_card_mm(ideal, ideal_calib, boxes.centers_mm[i],
                               float(boxes.angles_deg[i]), self.card_size_mm) for i, _ in moved]
        found = self.gallery.identify_batch(crops)
        matches: list[CardMatch] = found[:len(scores)]
        for (i, f), m_det in zip(moved, found[len(scores):]):
            needed = FIT_LONG_MOVE_GAIN if f.shift_mm > FIT_SHORT_MOVE_MM else 0.0
            if _cut_score(matches[i]) < _cut_score(m_det) + needed:
                centers[i], axes[i], matches[i] = boxes.centers_mm[i], boxes.angles_deg[i], m_det
        self._recut_long_boxes(ideal, ideal_calib, centers, axes, sizes, matches)
        self._recut_covered_boxes(ideal, ideal_calib, centers, axes, matches)
        refined = 0
        for i, m in enumerate(matches):
            weak_table = m.looks_like_table and scores[i] < DROP_TABLE_BELOW_SCORE
            if not m.accepted and not weak_table:
                c, a, m2 = self._refine(ideal, ideal_calib, centers[i], float(axes[i]), m)
                if m2.accepted:
                    # the axis as cut: folded back into 0..180 across the wrap, the cut
                    # would be the other way up from the one the gallery read
                    centers[i], axes[i], matches[i] = c, a, m2
                    refined += 1
        # the gallery has chosen each card's cut (fitted or detector's, refined); the network
        # reads again the cuts the gallery is not sure of, and where it is unsure itself,
        # cuts a little around them. A weak box the gallery takes for bare table stays a
        # false box (dropped below): across two cards and the gap between them, the network
        # can be sure of either.
        reread = [i for i, g in enumerate(matches)
                  if g.margin < NET_READS_BELOW_MARGIN
                  and not (g.looks_like_table and scores[i] < DROP_TABLE_BELOW_SCORE)]
        if self.card_net is not None and reread:
            crops = [warp_card_mm(ideal, ideal_calib, centers[i], float(axes[i]),
                                  self.card_size_mm) for i in reread]
            first = self.card_net.probs(crops)
            nets = dict(zip(reread, self.card_net.matches(first)))
            det = {i: (boxes.centers_mm[i], float(boxes.angles_deg[i])) for i, _ in moved}
            read_at = centers.copy(), axes.copy()
            nets = self._net_recut(ideal, ideal_calib, centers, axes, nets, det,
                                   dict(zip(reread, first)))
            for i, n in nets.items():
                g = matches[i]
                if not (np.array_equal(centers[i], read_at[0][i]) and axes[i] == read_at[1][i]):
                    # the network moved the box: the cut the gallery read is not the card's
                    g = replace(g, cut=None, class_distances=None)
                matches[i] = _fuse(g, n)
        cards: list[dict[str, Any]] = []
        dropped = 0
        # which boxes only the detector's second look found (an injected detector's
        # boxes need not say: none)
        second = np.asarray(getattr(boxes, "from_second_look", np.zeros(len(scores), bool)))
        for i, m in enumerate(matches):
            if m.looks_like_table and scores[i] < DROP_TABLE_BELOW_SCORE:
                # nearest class bare table (the gallery's rejection class), weak box: false
                dropped += 1
                log.debug("box at %s dropped: the patch looks like bare table",
                          np.round(centers[i], 1))
                continue
            if second[i] and not self._sure_second_look(m, float(sizes[i, 1])):
                dropped += 1
                log.debug("box at %s dropped: found only by the second look, and the "
                          "gallery is not sure of it", np.round(centers[i], 1))
                continue
            back_cut: np.ndarray | None = None
            if m.best_id == BACK_ID and m.probs is None:
                # the gallery's back (the network's reads are its own): a face it was never
                # shown can lie nearer its back class than any face; unless the cut looks
                # like a back, it is face up, its nearest face named unsurely. The cut the
                # gallery read, and what it made of it, are asked again (a stand-in gallery
                # keeps neither: the card is cut again)
                back_cut = m.cut if m.cut is not None else warp_card_mm(
                    ideal, ideal_calib, centers[i], float(axes[i]), self.card_size_mm)
                m = self.gallery.unknown_face(back_cut, m.class_distances) or m
            cid = m.card_id if m.card_id is not None else m.best_id
            face_up = cid != BACK_ID
            symmetric = cid in self.gallery.half_turn_symmetric or (
                not face_up and self.gallery.back_alike_both_ways)
            if symmetric:
                # art that looks the same both ways up has no top (a back drawn alike both
                # ways up too): the long axis's direction in [0, 180), so that the record
                # does not turn the card over between frames
                angle = float(axes[i]) % 180.0
            elif face_up:
                angle = art_angle_deg(float(axes[i]), m.rotated)
            elif not self.gallery.back_has_top:
                angle = float(axes[i])  # (a gallery that does not say: the box's direction)
            else:
                # a back with a top (the Decktet's): which way up it lies, from its cut
                # (the one the unknown-face question cut, where it cut one)
                cut = m.cut if m.cut is not None else back_cut if back_cut is not None else (
                    warp_card_mm(ideal, ideal_calib, centers[i], float(axes[i]),
                                 self.card_size_mm))
                angle = art_angle_deg(float(axes[i]), self.gallery.back_turned(cut))
            corners = image_points(calib, card_corners_mm(centers[i], angle, self.card_size_mm))
            cards.append({
                "id": cid,
                "center_mm": [_r(centers[i, 0]), _r(centers[i, 1])],
                "angle_deg": record_deg(angle, 1, 180.0 if symmetric else 360.0),
                "confidence": round(float(scores[i]) * float(m.confidence), 4),
                "face_up": face_up,
                "identified": m.accepted,
                **({"art_symmetric": True} if symmetric else {}),
                "corners_px": _pts(corners),
                "size_mm": [_r(sizes[i, 0]), _r(sizes[i, 1])],
                "detector_score": round(float(scores[i]), 4),
                "id_confidence": round(float(m.confidence), 4),
            })
        cards, dupes = _one_per_card(cards)
        timings["identify"] = (time.perf_counter() - t_f) * 1000
        return cards, dropped + dupes, refined

    def _sure_second_look(self, match: CardMatch, long_mm: float) -> bool:
        """Whether a box only the detector's second look found holds a card: named surely,
        and as long as the deck's cards."""
        card_long = float(self.card_size_mm[1])
        return (match.accepted and match.confidence >= SECOND_LOOK_ID_MIN
                and abs(long_mm - card_long) <= SECOND_LOOK_LONG_TOLERANCE * card_long)

    def _best_cuts(self, image: np.ndarray, calib: Calibration,
                   trials: list[tuple[int, np.ndarray, float]]
                   ) -> dict[int, tuple[float, np.ndarray, float, CardMatch]]:
        """Each card's best of ``trials`` (card, centre, axis), cut and read by the gallery
        in one batch: (:func:`_cut_score`, centre, axis, match), the first of equal
        scores."""
        crops = [warp_card_mm(image, calib, (float(c[0]), float(c[1])), float(a),
                              self.card_size_mm) for _, c, a in trials]
        best: dict[int, tuple[float, np.ndarray, float, CardMatch]] = {}
        for (i, c, a), m in zip(trials, self.gallery.identify_batch(crops) if crops else []):
            sc = _cut_score(m)
            if i not in best or sc > best[i][0]:
                best[i] = (sc, c, a, m)
        return best

    def _recut_long_boxes(self, image: np.ndarray, calib: Calibration, centers: np.ndarray,
                          axes: np.ndarray, sizes: np.ndarray, matches: list[CardMatch]
                          ) -> None:
        """A box longer than the deck's cards by over :data:`LONG_BOX_MM` holds its card
        somewhere along it: the default detector learnt the tarot's proportions, and boxes a
        shorter card in a row or lattice with part of the neighbour it touches. Each such
        box is also cut with the card at either end and in eighths of the way between
        (:data:`LONG_BOX_STEPS`); the cut the gallery reads best is kept (``centers`` and
        ``matches`` updated)."""
        if float(self.card_size_mm[1]) > DETECTOR_CARD_LONG_MM - LONG_BOX_MM:
            return
        excess = sizes[:, 1] - float(self.card_size_mm[1])
        long = [i for i in range(len(matches)) if excess[i] > LONG_BOX_MM]
        if not long:
            return
        trials: list[tuple[int, np.ndarray, float]] = []
        for i in long:
            a = math.radians(float(axes[i]))
            u = np.array([math.cos(a), math.sin(a)])
            for f in LONG_BOX_STEPS:
                trials.append((i, centers[i] + u * f * float(excess[i]), float(axes[i])))
        for i, (sc, c, _, m) in self._best_cuts(image, calib, trials).items():
            if sc > _cut_score(matches[i]) + LONG_BOX_GAIN:
                centers[i], matches[i] = c, m

    def _recut_covered_boxes(self, image: np.ndarray, calib: Calibration, centers: np.ndarray,
                             axes: np.ndarray, matches: list[CardMatch]) -> None:
        """A card whose cut overlaps another card's (:data:`COVERED_OVERLAP`) is also cut
        :data:`COVERED_SHIFTS_MM` either way along and across its axis; the cut the gallery
        reads best replaces the card's where it reads better by :data:`COVERED_GAIN` and
        names another card (``centers`` and ``matches`` updated). The overlaps are those of
        the cuts as they were before any moved."""
        n = len(matches)
        if n < 2:
            return
        short, long = float(self.card_size_mm[0]), float(self.card_size_mm[1])
        rects = [((float(centers[i][0]), float(centers[i][1])), (long, short), float(axes[i]))
                 for i in range(n)]
        trials: list[tuple[int, np.ndarray, float]] = []
        for i in range(n):
            if matches[i].looks_like_table or not any(
                    j != i and math.dist(centers[i], centers[j]) < long
                    and overlap_area(rects[i], rects[j]) > COVERED_OVERLAP * short * long
                    for j in range(n)):
                continue
            a = math.radians(float(axes[i]))
            along = np.array([math.cos(a), math.sin(a)])
            across = np.array([-along[1], along[0]])
            for step in COVERED_SHIFTS_MM:
                for d in (along, -along, across, -across):
                    trials.append((i, centers[i] + d * step, float(axes[i])))
        for i, (sc, c, _, m) in self._best_cuts(image, calib, trials).items():
            # a moved cut is for naming the card: where it names the same card, the box
            # stays where the edges put it
            if sc > _cut_score(matches[i]) + COVERED_GAIN and m.best_id != matches[i].best_id:
                centers[i], matches[i] = c, m

    def _refine(self, image: np.ndarray, calib: Calibration, center: np.ndarray, axis: float,
                match: CardMatch) -> tuple[np.ndarray, float, CardMatch]:
        """The (centre, axis, match) of the cut around a box that the gallery matches best
        (largest margin to the next card; bare table never wins), searched coarse to fine."""
        best = (_cut_score(match), np.asarray(center, np.float64), float(axis), match)

        def trial(cands: list[tuple[np.ndarray, float]]) -> None:
            nonlocal best
            found = self._best_cuts(image, calib, [(0, c, a) for c, a in cands])
            if found and found[0][0] > best[0]:
                best = found[0]

        trial([(best[1], axis + da) for da in REFINE_ANGLES_DEG])
        for step in (REFINE_STEP_MM, REFINE_STEP_MM / 2):
            c0, a0 = best[1], best[2]
            trial([(c0 + np.array([dx, dy]) * step, a0) for dx in (-1, 0, 1) for dy in (-1, 0, 1)
                   if dx or dy])
        return best[1], best[2], best[3]

    def _net_recut(self, image: np.ndarray, calib: Calibration, centers: np.ndarray,
                   axes: np.ndarray, nets: dict[int, CardMatch],
                   det: dict[int, tuple[np.ndarray, float]],
                   first: dict[int, np.ndarray]) -> dict[int, CardMatch]:
        """Cards the network is not sure of are cut again a little around their box; their
        reading becomes the mean of the network's probabilities over the cut (``first``,
        its class probabilities) and the moved cuts (:data:`NET_SURE`). Where the fit moved
        a box, the detector's own box is read too and replaces the card's box (``centers``
        and ``axes``, in place) when its reading is surer than both: the small moves are for
        reading, the edges still say where the card lies."""
        assert self.card_net is not None
        unsure = [i for i, n in nets.items() if n.confidence < NET_SURE
                  and not (n.looks_like_table and n.margin > 3.0)]
        if not unsure:
            return nets
        # (card, centre, axis, whether the cut is a box of its own)
        cands: list[tuple[int, np.ndarray, float, bool]] = []
        for i in unsure:
            c, a = np.asarray(centers[i], np.float64), float(axes[i])
            u = np.array([math.cos(math.radians(a)), math.sin(math.radians(a))])
            r = np.array([-u[1], u[0]])
            for d in (u, -u, r, -r):
                cands.append((i, c + d * RECUT_MM, a, False))
            if i in det:
                cands.append((i, np.asarray(det[i][0], np.float64), det[i][1], True))
        crops = [warp_card_mm(image, calib, (float(c[0]), float(c[1])), a, self.card_size_mm)
                 for _, c, a, _ in cands]
        p = self.card_net.probs(crops)
        rows: dict[int, list[np.ndarray]] = {i: [first[i]] for i in unsure}
        box_cuts: list[int] = []
        for k, (i, _, _, box) in enumerate(cands):
            if box:
                box_cuts.append(k)
            else:
                rows[i].append(p[k])
        out = dict(nets)
        means = np.stack([np.mean(rows[i], axis=0) for i in unsure])
        out.update(zip(unsure, self.card_net.matches(means)))
        for k, m in zip(box_cuts, self.card_net.matches(p[box_cuts])):
            i, c, a, _ = cands[k]
            if not m.looks_like_table and m.confidence > max(
                    nets[i].confidence + 0.05, out[i].confidence):
                out[i] = m
                centers[i], axes[i] = c, a
        return out

    def _pyramids(self, image: np.ndarray, calib: Calibration
                  ) -> tuple[list[dict[str, Any]], float]:
        t0 = time.perf_counter()
        finds = self._own_finder().find(image, calib)
        return pyramid_records(finds, calib), (time.perf_counter() - t0) * 1000

    def _spill_areas(self, cards: list[dict[str, Any]]
                     ) -> list[tuple[float, float, float, float]]:
        """Where the cards found say the game has spread past what the pyramid finder looks
        at (:func:`vision.pyramids.find.spill_areas`); none without a printed mat (then the
        finder looks at all the frame shows) or with :data:`SPILL_REACH_CELLS` off."""
        if not SPILL_REACH_CELLS or not cards or not self.mat.printed:
            return []
        from vision.pyramids.find import BORDER_MM, spill_areas

        half_diag = 0.5 * math.hypot(*self.card_size_mm)
        pitch = 0.5 * sum(self.card_size_mm)
        return spill_areas(self.mat, BORDER_MM,
                           [((c["center_mm"][0], c["center_mm"][1]), half_diag) for c in cards],
                           SPILL_REACH_CELLS * pitch)

    def _pyramids_past(self, image: np.ndarray, calib: Calibration,
                       areas: list[tuple[float, float, float, float]],
                       found: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The records of the pyramids in ``areas`` past the finder's border (the same frame
        the finder has just read), less any within :data:`SPILL_SAME_MM` of one ``found``."""
        past: list[dict[str, Any]] = []
        if self._process is not None:
            try:
                past = self._process.submit_past(calib, areas).result()[0]
            except PyramidProcessError as exc:
                self._lose_process(exc)
        if self._process is None:
            finder = self._own_finder()
            if not hasattr(finder, "find_past"):
                return []
            past = pyramid_records(finder.find_past(image, calib, areas), calib)
        return [p for p in past if all(
            math.dist(p["base_center_mm"], f["base_center_mm"]) >= SPILL_SAME_MM
            for f in found)]

    def _send_pyramids(self, image: np.ndarray, calib: Calibration) -> Any:
        """The frame sent to the pyramid process, or None where it is gone (this frame's
        pyramids are then found here)."""
        try:
            return self._process.submit(image, calib)
        except PyramidProcessError as exc:
            self._lose_process(exc)
            return None

    def _pyramids_back(self, pending: Any, image: np.ndarray, calib: Calibration
                       ) -> tuple[list[dict[str, Any]], float]:
        try:
            found: tuple[list[dict[str, Any]], float] = pending.result()
            return found
        except PyramidProcessError as exc:
            self._lose_process(exc)
            return self._pyramids(image, calib)

    def _lose_process(self, exc: Exception) -> None:
        """A pyramid process that died or hangs is stopped; the finder runs here from now
        on, so that the frames keep coming."""
        log.warning("%s; the pyramids are found in this process from now on", exc)
        if self._process is not None:
            self._process.close()
            self._process = None
        if self._pool is None and self.threads >= 2:
            # still beside the card stages, on a thread
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="pyramids")

    # -- public -----------------------------------------------------------------------------

    def observe(self, image_bgr: np.ndarray, name: str) -> dict[str, Any]:
        """The observation record of one BGR image; ``name`` becomes its ``image`` field."""
        if not isinstance(image_bgr, np.ndarray) or image_bgr.ndim not in (2, 3) \
                or image_bgr.size == 0:
            raise ImageError(f"{name}: not an image array")
        check_table_size(image_bgr, name)
        image = image_bgr
        if image.ndim == 2:
            image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
        elif image.shape[2] == 4:
            image = cv2.cvtColor(image, cv2.COLOR_BGRA2BGR)
        grey = greyscale(image)
        t_start = time.perf_counter()
        timings: dict[str, float] = {}
        calib = self._calibrator(image).calibrate(image)
        self.last_calibration = calib
        timings["calibrate"] = (time.perf_counter() - t_start) * 1000
        h, w = image.shape[:2]
        record: dict[str, Any] = {"image": record_text(name),
                                  "calibrated": bool(calib.calibrated)}
        if not calib.calibrated:
            record["reason"] = calib.reason or "the table's markers were not found"
        record["cards"] = []
        record["pyramids"] = []
        calinfo: dict[str, Any] = {"source": "cards" if self.no_mat else "mat",
                                   **calib.fit_fields()}
        if calib.calibrated and calib.reason:
            calinfo["note"] = calib.reason
        calinfo["intrinsics"] = calib.intrinsics is not None
        record["calibration"] = calinfo
        record["image_size"] = [int(w), int(h)]
        if grey:
            # a black-and-white camera or file: the pyramids' colours cannot be read
            record["greyscale"] = True
        if calib.calibrated and calib.H is not None:
            raw = image          # as the camera took it, before any deblurring
            if calib.motion_blur is not None:
                # the markers could only be read with the camera's shake undone: so can
                # the cards and pyramids
                t_deblur = time.perf_counter()
                image = deblur(image, calib.motion_blur)
                timings["deblur"] = (time.perf_counter() - t_deblur) * 1000
                calinfo["motion_blur_px"] = round(calib.motion_blur.length_px, 1)
                # a line's direction, in [0, 180): rounded, then wrapped (179.96 is 0.0)
                calinfo["motion_blur_deg"] = record_deg(calib.motion_blur.angle_deg, 1, 180.0)
            # how sharp the frame is, on the markers seen (none without a mat), before the
            # pyramids are sent: the finder reads a blurred frame its own way
            t_sharp = time.perf_counter()
            blur_px = edge_blur_px(raw, calib, self.mat)
            timings["sharpness"] = (time.perf_counter() - t_sharp) * 1000
            per_mm = markers_px_per_mm(calib, self.mat)
            if per_mm is not None:
                calinfo["px_per_mm"] = round(per_mm, 2)
            if blur_px is not None:
                calib = replace(calib, edge_blur_px=blur_px,
                                blurred_over_px=blur_limit_px(per_mm))
                self.last_calibration = calib
                calinfo["edge_blur_px"] = round(blur_px, 2)
                record["blurred"] = calib.blurred
            pyr_future: Any = None
            if self._process is not None:
                pyr_future = self._send_pyramids(image, calib)
            elif self._pool is not None:
                pyr_future = self._pool.submit(self._pyramids, image, calib)
            cards, dropped, refined = self._cards(image, calib, timings)
            pyramids, t_pyr = (self._pyramids_back(pyr_future, image, calib)
                               if pyr_future is not None else self._pyramids(image, calib))
            timings["pyramids"] = t_pyr
            areas = self._spill_areas(cards)
            if areas:
                t_past = time.perf_counter()
                pyramids = pyramids + self._pyramids_past(image, calib, areas, pyramids)
                timings["pyramids_past"] = (time.perf_counter() - t_past) * 1000
            record["cards"] = cards
            record["pyramids"] = pyramids
            if not self.no_mat and len(cards) >= CARD_SCALE_MIN_CARDS and \
                    len(calib.markers_seen) >= 3:
                # how big the cards come out against the deck's size: a mat file measured
                # wrongly scales every position, and a fit of its markers alone need not
                # show it (measured to their outer edges: 2.9 mm RMS, cards 8.5% too big).
                # Not from one or two markers: their pose, not the mat file, sets the scale
                # there (a right mat file was called wrong, 6% small, from one marker)
                sizes = np.array([c["size_mm"] for c in cards], np.float64)
                calinfo["card_scale"] = round(float(np.median(
                    sizes / np.array(self.card_size_mm), axis=0).mean()), 3)
                if calib.marker_scale is not None:
                    # the markers' own size the same way: a wrong mat file scales them
                    # too, cards misread on a light cloth do not (card_scale_doubt)
                    calinfo["marker_scale"] = round(float(calib.marker_scale), 3)
            if dropped:
                record["boxes_dropped"] = dropped
            if refined:
                record["boxes_refined"] = refined
        timings["total"] = (time.perf_counter() - t_start) * 1000
        record["timings_ms"] = {k: round(v, 1) for k, v in timings.items()}
        return record

    def observe_file(self, path: str | Path) -> dict[str, Any]:
        """Read ``path`` (see :func:`read_image` for what is refused) and observe it; the
        record's ``timings_ms`` gains ``read``."""
        t0 = time.perf_counter()
        image = read_image(path)
        t_read = (time.perf_counter() - t0) * 1000
        record = self.observe(image, str(path))
        record["timings_ms"] = {"read": round(t_read, 1), **record["timings_ms"]}
        return record

    def to_px(self, mm: np.ndarray, calib: Calibration | None = None) -> np.ndarray:
        """Table mm to image pixels through ``calib`` (default: the last image's)."""
        c = calib or self.last_calibration
        if c is None or c.H is None:
            raise ValueError("no calibration to map table mm to pixels")
        return image_points(c, mm)


#: the cards a record's ``calibration.card_scale`` (the median card's size over the deck's)
#: is measured on, at least: on 93 dev renders of the four bench groups it was 0.98-1.03
CARD_SCALE_MIN_CARDS = 4

#: Two cards whose centres are closer than this are one card seen twice (two boxes, or a box
#: refined onto its neighbour): a card that much under another is not half uncovered.
SAME_CARD_MM = 20.0


def _cut_score(m: CardMatch) -> float:
    """How well a cut shows a card: the gallery's margin to the next card, less a little for
    distance from the prototypes; a cut that looks like bare table never wins."""
    return -1e9 if m.looks_like_table else m.margin - 0.05 * m.distance


#: How the network's reading of a cut and the gallery's become one (:func:`_fuse`). Where they
#: name different cards, each name is scored by both readers at once: log(the network's
#: probability of it + FUSE_PROB_FLOOR) - FUSE_DISTANCE_WEIGHT x the gallery's distance to its
#: nearest prototype (LDA units), plus FUSE_BACK_BIAS for ``back``, and the higher score names
#: the card. The bias is there because both readers take worn, recoloured or half-covered faces
#: for backs, and bare cloth too. One score instead of thresholds on the network alone keeps
#: what each reader makes of the other's card (figures: docs/vision-tuning.md)
FUSE_DISTANCE_WEIGHT = 0.4
FUSE_BACK_BIAS = -3.0
FUSE_PROB_FLOOR = 1e-3
#: Where the gallery took a cut for bare table, the network's ``back`` counts as sure only
#: from NET_BACK_OVER_TABLE: bare cloth reads as a card back to it at 0.3-0.9 (on the eight
#: dev seeds, 7 of the 37 false cards were such cuts, read as backs at 0.67-0.89). Below it
#: the cut is still named ``back`` but stays unidentified with no confidence, so that the
#: table state (companion.live.tablestate, which weighs cards by confidence) leans on it
#: least.
NET_BACK_OVER_TABLE = 0.9
#: The network reads only the cuts the gallery names with a margin under NET_READS_BELOW_MARGIN
#: (its reading costs about 1.5 ms a patch on one thread, and the cards the gallery is that
#: sure of it names the same); a card the network is then less sure of than NET_SURE is read
#: again from cuts RECUT_MM along each axis (and at the detector's own box when the fit moved
#: it), and its reading is the mean of the network's probabilities over those cuts: boxes under
#: pyramids are often a few millimetres off (vision/cards/fit.py), and a cut that far off costs
#: the network its sureness. The mean, not the surest cut: the surest of five is often a wrong
#: card read sure from a cut that shows it worse (figures: docs/vision-tuning.md)
NET_READS_BELOW_MARGIN = 6.0
NET_SURE = 0.9
RECUT_MM = 3.0


def _fused_score(card: str, g: CardMatch, n: CardMatch) -> float:
    """How well both readings of one cut agree on ``card`` (:data:`FUSE_DISTANCE_WEIGHT`).
    A reader that does not list its view of every card speaks for its own best card only:
    the network gives the others no probability, and the gallery's margin (the distance to
    its next card) is the least any other card can be away."""
    p = n.probs.get(card, 0.0) if n.probs is not None else (
        n.confidence if card == n.best_id else 0.0)
    if g.distances is not None and card in g.distances:
        d = g.distances[card]
    else:
        d = g.distance if card == g.best_id else g.distance + g.margin
    return (math.log(p + FUSE_PROB_FLOOR) - FUSE_DISTANCE_WEIGHT * d
            + (FUSE_BACK_BIAS if card == BACK_ID else 0.0))


def _fuse(g: CardMatch, n: CardMatch) -> CardMatch:
    """One answer from the gallery's (``g``) and the network's (``n``) reading of a cut."""
    if n.looks_like_table:
        # the network's bare-table class never names a card: the gallery's answer stands
        return g
    if n.best_id != g.best_id and _fused_score(n.best_id, g, n) < _fused_score(g.best_id, g, n):
        return g
    # the network's card names the cut
    if g.looks_like_table and (not n.accepted or (
            n.best_id == BACK_ID and n.confidence < NET_BACK_OVER_TABLE)):
        # neither reader is sure there is a card: unidentified, with the gallery's no
        # confidence (a sure box over bare table is kept, flagged)
        return replace(g, best_id=n.best_id, rotated=n.rotated)
    if n.best_id == g.best_id and g.accepted and not n.accepted:
        return replace(n, card_id=n.best_id, confidence=g.confidence)
    return n


def _one_per_card(cards: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """The cards without duplicates (the more confident of two close ones stays), and how
    many went."""
    keep: list[dict[str, Any]] = []
    for c in sorted(cards, key=lambda c: -float(c["confidence"])):
        if all(math.dist(c["center_mm"], k["center_mm"]) >= SAME_CARD_MM for k in keep):
            keep.append(c)
    order = {id(c): i for i, c in enumerate(cards)}
    keep.sort(key=lambda c: order[id(c)])
    return keep, len(cards) - len(keep)


def angle_diff_deg(a: float, b: float) -> float:
    """Smallest absolute difference of two directions in degrees (0..180)."""
    d = (float(a) - float(b)) % 360.0
    return min(d, 360.0 - d)


__all__ = ["DEFAULT_DECK", "IMAGE_SUFFIXES", "ImageError", "SHIPPED_DECKS", "TablePipeline",
           "angle_diff_deg", "expand_images", "image_points", "load_deck_gallery", "read_image"]

