"""Load, validate and write mat files (shared/spec/table.md, "The table frame").

A mat file is JSON::

    {"dictionary": "DICT_4X4_50", "marker_size_mm": 60, "width_mm": 900, "height_mm": 650,
     "zones": {"draw": [20, 560, 110, 640], "discard": [130, 560, 220, 640]}}

Marker ids 0..3 sit with their centres on the corners (0, 0), (W, 0), (W, H), (0, H) of the
table frame (x east, y south, millimetres), axis-aligned, top edge facing north.
This module is pure Python: OpenCV is only needed by whoever draws or detects the markers.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from companion.core.errors import CompanionError
from companion.core.files import JsonTextError, given_path, read_json, wrong_kind
from companion.core.numbers import finite_number

#: Dictionaries a mat may name (OpenCV aruco predefined dictionary names).
KNOWN_DICTIONARIES = (
    "DICT_4X4_50", "DICT_4X4_100", "DICT_4X4_250", "DICT_4X4_1000",
    "DICT_5X5_50", "DICT_5X5_100", "DICT_5X5_250", "DICT_5X5_1000",
    "DICT_6X6_50", "DICT_6X6_100", "DICT_6X6_250", "DICT_6X6_1000",
    "DICT_ARUCO_ORIGINAL",
)
#: The calibrate-camera board's dictionary (calibration.intrinsics.BoardSpec): not the mat's
#: DICT_4X4_50, whose ids 0-3 would be read as mat corners
BOARD_DICTIONARY = "DICT_5X5_100"
#: The dictionaries a picture is searched in when the one it should show is not in it: what
#: a mat or a board printed from another file shows (calibration.table, calibration.intrinsics)
COMMON_DICTIONARIES = ("DICT_4X4_50", "DICT_5X5_100", "DICT_6X6_250", "DICT_7X7_1000",
                       "DICT_ARUCO_ORIGINAL")

REQUIRED_FIELDS = ("dictionary", "marker_size_mm", "width_mm", "height_mm")
#: No table is bigger than this (mm) each way; a mat file saying more has a typo (metres for
#: millimetres), and the finders would tile its area for minutes.
MAX_MAT_MM = 5000.0
#: A marker smaller than this (mm) is a few pixels in an overhead photo of a table: unreadable.
MIN_MARKER_MM = 10.0


class MatError(CompanionError, ValueError):
    """A mat file that is missing, unreadable or has a missing or bad field."""


@dataclass(frozen=True)
class Mat:
    """The calibration mat: marker dictionary and size, play-area size, named zones."""

    dictionary: str = "DICT_4X4_50"
    marker_size_mm: float = 60.0
    width_mm: float = 900.0
    height_mm: float = 650.0
    zones: dict[str, tuple[float, float, float, float]] = field(default_factory=dict)
    #: False for the play area of a table without a mat (:func:`virtual_mat`): no markers
    #: and no marker paper in the image, only the frame the cards themselves give
    printed: bool = True

    def marker_centers(self) -> dict[int, tuple[float, float]]:
        """Marker id -> centre in the table frame (mm); none when the mat is not printed."""
        if not self.printed:
            return {}
        w, h = self.width_mm, self.height_mm
        return {0: (0.0, 0.0), 1: (w, 0.0), 2: (w, h), 3: (0.0, h)}

    def marker_corners(self) -> dict[int, list[tuple[float, float]]]:
        """Marker id -> its four corners in OpenCV's order (top-left, top-right,
        bottom-right, bottom-left as printed; top faces north), table mm."""
        s = self.marker_size_mm / 2.0
        out = {}
        for mid, (cx, cy) in self.marker_centers().items():
            out[mid] = [(cx - s, cy - s), (cx + s, cy - s), (cx + s, cy + s), (cx - s, cy + s)]
        return out

    def zone_center(self, name: str) -> tuple[float, float]:
        x0, y0, x1, y1 = self.zones[name]
        return ((x0 + x1) / 2.0, (y0 + y1) / 2.0)

    def to_dict(self) -> dict[str, Any]:
        return {
            "dictionary": self.dictionary,
            "marker_size_mm": _num(self.marker_size_mm),
            "width_mm": _num(self.width_mm),
            "height_mm": _num(self.height_mm),
            "zones": {k: [_num(v) for v in r] for k, r in sorted(self.zones.items())},
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict()) + "\n"

    def write(self, path: str | Path) -> None:
        Path(path).write_text(self.to_json(), encoding="utf-8")

    @classmethod
    def from_dict(cls, data: Any, source: str = "mat") -> "Mat":
        """Validate a parsed mat file; errors name ``source`` and the bad field."""
        if not isinstance(data, dict):
            raise MatError(f"{source}: expected a JSON object, got {type(data).__name__}")
        for name in REQUIRED_FIELDS:
            if name not in data:
                raise MatError(f"{source}: missing field {name!r} (a mat file needs "
                               f"{', '.join(REQUIRED_FIELDS)})")
        dictionary = data["dictionary"]
        if not isinstance(dictionary, str) or dictionary not in KNOWN_DICTIONARIES:
            raise MatError(f"{source}: field 'dictionary' is {dictionary!r}; expected an OpenCV "
                           f"ArUco dictionary name such as 'DICT_4X4_50'")
        nums = {}
        for name in ("marker_size_mm", "width_mm", "height_mm"):
            nums[name] = _positive(data[name], name, source)
        for name in ("width_mm", "height_mm"):
            if nums[name] > MAX_MAT_MM:
                raise MatError(f"{source}: field {name!r} is {nums[name]:g} mm; a mat is at most "
                               f"{MAX_MAT_MM:g} mm each way (millimetres, not metres or tenths)")
        if nums["marker_size_mm"] < MIN_MARKER_MM:
            raise MatError(f"{source}: field 'marker_size_mm' is {nums['marker_size_mm']:g} mm; "
                           f"a marker the camera can read is at least {MIN_MARKER_MM:g} mm")
        if nums["marker_size_mm"] >= min(nums["width_mm"], nums["height_mm"]):
            raise MatError(f"{source}: field 'marker_size_mm' ({nums['marker_size_mm']}) must be "
                           "smaller than the mat")
        zones_raw = data.get("zones", {})
        if zones_raw is None:
            zones_raw = {}
        if not isinstance(zones_raw, dict):
            raise MatError(f"{source}: field 'zones' must be an object of name -> [x0, y0, x1, y1]")
        zones: dict[str, tuple[float, float, float, float]] = {}
        for zname, rect in zones_raw.items():
            where = f"zones.{zname}"
            if (not isinstance(rect, (list, tuple)) or len(rect) != 4
                    or not all(finite_number(v) for v in rect)):
                raise MatError(f"{source}: field {where!r} must be [x0, y0, x1, y1] in mm, "
                               f"got {rect!r}")
            x0, y0, x1, y1 = (float(v) for v in rect)
            if not (x1 > x0 and y1 > y0):
                raise MatError(f"{source}: field {where!r} must have x0 < x1 and y0 < y1, "
                               f"got {rect!r}")
            # a zone lies on or beside the mat: a discard pile just off its edge is still in
            # view and read (cards up to about 290 mm south of a 900 x 650 mat were found), so
            # the play area and half its size around it; a zone of 1e300 mm, or far off the
            # mat, is a typo the finders would compute with
            w, h = nums["width_mm"], nums["height_mm"]
            lo_x, hi_x, lo_y, hi_y = -w / 2, w * 1.5, -h / 2, h * 1.5
            if not (lo_x <= x0 and x1 <= hi_x and lo_y <= y0 and y1 <= hi_y):
                raise MatError(f"{source}: field {where!r} is {rect!r}, off the mat: a zone "
                               f"lies within x {lo_x:g} to {hi_x:g} and y {lo_y:g} to {hi_y:g} "
                               "mm (the play area and half its size around it)")
            zones[str(zname)] = (x0, y0, x1, y1)
        return cls(dictionary, nums["marker_size_mm"], nums["width_mm"], nums["height_mm"], zones)


def _positive(v: Any, name: str, source: str) -> float:
    if not finite_number(v) or v <= 0:
        raise MatError(f"{source}: field {name!r} must be a positive number of mm, got {v!r}")
    return float(v)


def _num(v: float) -> float | int:
    return int(v) if float(v).is_integer() else float(v)


DEFAULT_MAT = Mat(zones={"draw": (20.0, 560.0, 110.0, 640.0),
                         "discard": (130.0, 560.0, 220.0, 640.0)})


#: How far (mm) from the centre card a table without a mat is watched, every way. Without
#: a mat nothing says where play ends, and the piles and stashes lie where the players put
#: them: beside the layout, or across the table from it. The frame limits what is read
#: (the detectors look only at the part of this square it shows), so the reach mostly
#: bounds a camera that sees far past the table. Dev renders without markers (seeds 596000
#: and 597000, 40 ordinary tables each), against the 900 x 650 mm area before: cards found
#: 923 -> 948 of 1,025 (the draw and discard piles, 330-700 mm from the layout's centre
#: card), false cards 20 -> 35 (piles read 25-85 mm off: a fit to the layout's cards is
#: least sure far from them), pyramids found 404 -> 422 of 504, tables exactly right 25 ->
#: 40 of 80; a 900 x 900 mm square (one canvas of the card detector, no tiles) 32. The
#: price is time: a camera that shows the whole square reads 4 tiles of cards and a
#: pyramid view 4 times the mat's, and the next frame of a still camera took 148-162 ms
#: (median of 100 held-out renders, two runs) against 70 ms. Held out (bench/no_mat.py, 100
#: renders): card recall 88.9 -> 93.5%, tables exactly right 31 -> 63%.
NO_MAT_REACH_MM = 800.0


#: the cards measure more than this share larger or smaller than the deck's when the mat file
#: is not the mat's size (measured to the markers' outer edges: 8.5%); on dev renders of a
#: right mat at most 3% (a record's ``calibration.card_scale``, vision.pipeline)
CARD_SCALE_DOUBT = 0.05
#: ... but on a light (white) cloth the cards' pale borders melt into the table and come out
#: 2-5% large with a right mat file: the cards alone doubt the mat file only past
#: CARD_SCALE_ALONE; between the two, only where the mat's own markers, measured the same way
#: (``calibration.marker_scale``), come out off the mat file's marker size by more than
#: MARKER_SCALE_DOUBT in the same direction. A mat file whose width and height are wrong
#: scales the markers with the cards (measured to the markers' outer edges: on the sample
#: frames the cards 8.5% large, the markers 6.7%; 5.2-9.4% on six renders); a right one's
#: markers measured 0.965-1.048 on 73 renders on white cloths in every light and blur (70
#: within 2%), the cards 1.00-1.08 there. A record without ``marker_scale`` (one or two
#: markers, an older recording) is judged by the cards alone, as before.
CARD_SCALE_ALONE = 0.15
MARKER_SCALE_DOUBT = 0.03
#: ... and with the markers off that way, the cards need only be off by this share: a mat
#: file 5% large (width and height) gave cards 1.042-1.113 and markers 1.009-1.100 on 140
#: renders, the ones it was chosen on, so not held-out figures (seed 910000, that of
#: bench/calibration.py, with and without the camera file; 944000 on a white cloth; 125
#: measure the cards), and was said on 111 at 5%, on 120 at 4%; a right mat file was
#: said on none of 180 either way (its nearest: cards 1.027 with markers 1.048 on a white
#: cloth; its cards over 4% came with markers at most 1.015)
CARD_SCALE_WITH_MARKERS = 0.04


def card_scale_doubt(scale: object, marker_scale: object = None) -> str | None:
    """What a record's ``calibration.card_scale`` says of the mat file when the cards come
    out another size than the deck's (:data:`CARD_SCALE_WITH_MARKERS`) and the mat's markers
    (``calibration.marker_scale``, where the record has it) another size than the mat file's
    the same way (:data:`MARKER_SCALE_DOUBT`), or the cards alone are far off
    (:data:`CARD_SCALE_ALONE`; :data:`CARD_SCALE_DOUBT` in a record without the markers'
    measure); else None."""
    card, marker = (float(v) if finite_number(v) else None for v in (scale, marker_scale))
    if card is None or abs(card - 1.0) <= (CARD_SCALE_DOUBT if marker is None
                                           else CARD_SCALE_WITH_MARKERS):
        return None
    if marker is not None and abs(card - 1.0) <= CARD_SCALE_ALONE and not (
            abs(marker - 1.0) > MARKER_SCALE_DOUBT and (marker > 1.0) == (card > 1.0)):
        return None     # the markers measure the mat file's size: the cards are misread
    return (f"the cards measure {abs(card - 1.0) * 100:.0f}% "
            f"{'larger' if card > 1.0 else 'smaller'} than the deck's: is the mat file's size "
            "right? (its width and height are measured between the markers' centres; every "
            "position is off by as much) Or are the cards another deck than the one named "
            "(--deck; tarot by default)?")


def calibration_scale_doubt(calib: object) -> str | None:
    """:func:`card_scale_doubt` of a record's ``calibration`` object (its ``card_scale``
    and ``marker_scale``); None where there is none. The one reading of those two fields
    for ``observe``, the live session and the window."""
    if not isinstance(calib, Mapping):
        return None
    return card_scale_doubt(calib.get("card_scale"), calib.get("marker_scale"))


def virtual_mat(width_mm: float = 2 * NO_MAT_REACH_MM,
                height_mm: float = 2 * NO_MAT_REACH_MM) -> Mat:
    """The play area of a table with no printed mat: a ``width_mm`` x ``height_mm`` rectangle
    centred on the cards (see :class:`calibration.from_cards.CardCalibrator`), with no markers
    and no zones (so no discard pile is watched). The detectors read only the part of it a
    frame shows (:func:`vision.detection.view.tiles`, :meth:`vision.pyramids.find.
    PyramidFinder.find`)."""
    return Mat(width_mm=float(width_mm), height_mm=float(height_mm), zones={}, printed=False)


def load_mat(path: str | Path | None) -> Mat:
    """Read a mat file; ``None`` gives :data:`DEFAULT_MAT`."""
    if path is None:
        return DEFAULT_MAT
    p = given_path(path)
    try:
        data = read_json(p)
    except FileNotFoundError:
        raise MatError(f"mat file {str(p)!r} does not exist") from None
    except OSError as exc:
        raise MatError(f"mat file {str(p)!r} cannot be read: {exc.strerror or exc}") from None
    except JsonTextError as exc:
        raise MatError(f"mat file {str(p)!r} {wrong_kind(p, 'a mat file') or exc}") from None
    try:
        return Mat.from_dict(data, source=f"mat file {str(p)!r}")
    except MatError:
        # (a camera file or a colour profile given as --mat: said as such, not as a mat
        # file missing its fields)
        if (other := wrong_kind(p, "a mat file")) is not None:
            raise MatError(f"mat file {str(p)!r} {other}") from None
        raise
