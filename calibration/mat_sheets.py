"""The calibration mat as sheets to print: one page for each corner marker, and one page
of instructions.

A play area of 900 x 650 mm is larger than any home printer's page, and the table between
the markers needs no print at all: the mat is four markers, one in each corner of the play
area (shared/spec/table.md, "The table frame and the calibration mat"). So each marker gets
a page of its own (A4 or Letter), laid outside the play area:

* the marker, ``marker_size_mm`` square, in the page's corner toward the play area's
  middle, so that only its white border reaches into the play area (the detector needs a
  white border; the pipeline also reads the paper's white as the light's);
* short ticks on the marker's two centre lines, to measure the distances between the
  markers' centres across the table with a tape;
* nothing else: no words, no arrow. On renders of the pages laid out at a table's corners,
  the card detector read a page laid across the play area as a card, and any block of
  text or drawing beside a marker as a face-down card, outside the play area too.

The instructions page says the rest: where each marker goes (the four drawn as the camera
sees them, without their black border, so that the page shows the calibration no marker),
which way is north, the distances, and a 100 mm bar to check the print's scale.

The pages are PNGs carrying their resolution (a ``pHYs`` chunk), so that printing them at
"actual size" gives millimetres as drawn.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable

import cv2
import numpy as np

from calibration.mat import Mat

#: Page sizes (portrait, mm).
PAPERS: dict[str, tuple[float, float]] = {"a4": (210.0, 297.0), "letter": (215.9, 279.4)}

#: Where each marker goes, in the players' words (ids as in the spec).
CORNERS = {0: "top-left (north-west)", 1: "top-right (north-east)",
           2: "bottom-right (south-east)", 3: "bottom-left (south-west)"}

#: The text chunk every sheet carries, so that writing the sheets again replaces only them.
SHEET_TAG = b"Software\x00companion print-mat"

#: The marker's white border (mm), between it and the page's edges and the ticks, or one
#: and a half of the marker's cells where that is more: the detector needs a white quiet
#: zone round the marker, a cell wide at least (10 mm for a 60 mm marker).
BORDER_MM = 15.0
#: The north arrow's length on the instructions page (mm).
ARROW_MM = 20.0
#: The length of the ticks on the marker's centre lines (mm).
TICK_MM = 8.0


def marker_reach_mm(mat: Mat) -> float:
    """How far (mm) a marker's page reaches into the play area from its corner, each way:
    half the marker and its white border (:func:`marker_sheet`)."""
    dictionary = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, mat.dictionary))
    side = mat.marker_size_mm
    return side / 2.0 + max(BORDER_MM, 1.5 * side / (dictionary.markerSize + 2))


def marker_sheet(mat: Mat, marker_id: int, paper: str = "a4", dpi: int = 300) -> np.ndarray:
    """The page for marker ``marker_id`` (0-3) of ``mat``, greyscale, ``dpi`` dots an inch.
    Raises ValueError for a paper or marker the page cannot hold."""
    if marker_id not in CORNERS:
        raise ValueError(f"marker {marker_id}: a mat has markers 0 to 3")
    page, at = _blank_page(paper, dpi)
    pw, ph = PAPERS[paper]
    side = mat.marker_size_mm
    dictionary = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, mat.dictionary))
    cells = dictionary.markerSize + 2
    gap = max(BORDER_MM, 1.5 * side / cells)
    # the marker in the page's corner toward the play area's middle, the page lying outside
    # the play area: only its white border reaches in (a page laid across the area read as
    # a card, its text as art)
    top, left = marker_id in (2, 3), marker_id in (1, 2)
    mx = gap + side / 2.0 if left else pw - gap - side / 2.0
    my = gap + side / 2.0 if top else ph - gap - side / 2.0
    half = side / 2.0 + gap
    if 2 * half > min(pw, ph) - 20.0:
        raise ValueError(f"a {side:g} mm marker with its white border does not fit on "
                         f"the {paper.upper()} page")
    bits = cv2.aruco.generateImageMarker(dictionary, marker_id, cells)
    n = at(side)
    marker = cv2.resize(bits, (n, n), interpolation=cv2.INTER_NEAREST)
    x0, y0 = at(mx) - n // 2, at(my) - n // 2
    page[y0:y0 + n, x0:x0 + n] = marker

    thin = max(1, at(0.25))
    grey = 0
    # ticks on the centre lines, outside the white border and at the page's far edges: a
    # tape laid across two pages reads the distance between the markers' centres
    far_x = mx + half if left else mx - half
    edge_x = pw - 6.0 if left else 6.0
    sx = 1.0 if left else -1.0
    for a in (far_x, edge_x - sx * TICK_MM):
        cv2.line(page, (at(a), at(my)), (at(a + sx * TICK_MM), at(my)), grey, thin)
    far_y = my + half if top else my - half
    sy = 1.0 if top else -1.0
    cv2.line(page, (at(mx), at(far_y)), (at(mx), at(far_y + sy * TICK_MM)), grey, thin)

    return page


def instructions_page(mat: Mat, paper: str = "a4", dpi: int = 300) -> np.ndarray:
    """The page that goes with the four marker pages, to read, not to lay on the table:
    where each marker goes (the four drawn as the camera sees them), which way is north,
    the distances between their centres, and a 100 mm bar to check the print's scale. (The
    marker pages carry none of it: any text or drawing on white paper beside the table read
    as a card on renders of the pages laid out.)"""
    page, at = _blank_page(paper, dpi)
    pw, ph = PAPERS[paper]
    dictionary = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, mat.dictionary))
    font = cv2.FONT_HERSHEY_SIMPLEX

    def text(words: str, x_mm: float, y_mm: float, height_mm: float = 3.6,
             bold: bool = False) -> None:
        scale = at(height_mm) / 22.0      # (the font's capitals are about 22 px at scale 1)
        cv2.putText(page, words, (at(x_mm), at(y_mm)), font, scale, 0,
                    max(1, int(round(scale * (2.4 if bold else 1.6)))), cv2.LINE_AA)

    text(f"Calibration mat ({mat.dictionary}, {mat.marker_size_mm:g} mm markers)", 12.0,
         18.0, 4.6, bold=True)
    lines = ["Print the four marker pages at 100% / actual size. Lay them flat at the",
             "corners of the play area as drawn below, as the camera sees the table:",
             "each marker upright as printed (its top to the north, the top of the",
             "camera's picture), its page outside the play area. (Drawn here without",
             "their black border.)",
             f"Marker centres: {mat.width_mm:g} mm apart east-west, {mat.height_mm:g} mm "
             "north-south;",
             f"the rectangle's diagonals {math.hypot(mat.width_mm, mat.height_mm):.0f} mm "
             "each. Laid out otherwise: measure,",
             "and run `companion print-mat` again with --width-mm/--height-mm."]
    for k, line in enumerate(lines):
        text(line, 12.0, 28.0 + 6.0 * k)
    # the play area as the camera sees it, each marker at its corner
    # (at most 120 mm tall: a narrow play area is drawn narrower, not off the page)
    box_w = min(pw - 80.0, 120.0 * mat.width_mm / mat.height_mm)
    box_h = box_w * mat.height_mm / mat.width_mm
    x0, y0 = (pw - box_w) / 2.0, 94.0
    cv2.rectangle(page, (at(x0), at(y0)), (at(x0 + box_w), at(y0 + box_h)), 0,
                  max(1, at(0.3)))
    thumb = 18.0
    cells = dictionary.markerSize + 2
    for mid, (fx, fy) in {0: (0, 0), 1: (1, 0), 2: (1, 1), 3: (0, 1)}.items():
        # the marker's inner pattern in a thin outline, without its black border: a page
        # left in the camera's view must show no marker the calibration would read
        bits = cv2.aruco.generateImageMarker(dictionary, mid, cells)[1:-1, 1:-1]
        n = at(thumb)
        mark = cv2.resize(bits, (n, n), interpolation=cv2.INTER_NEAREST)
        mark = np.where(mark > 0, 255, 110).astype(np.uint8)
        cv2.rectangle(mark, (0, 0), (n - 1, n - 1), 0, max(1, at(0.3)))
        cx, cy = x0 + fx * box_w, y0 + fy * box_h
        page[at(cy) - n // 2:at(cy) - n // 2 + n, at(cx) - n // 2:at(cx) - n // 2 + n] = mark
        text(f"{mid}", cx + (thumb / 2 + 2.0 if fx else -thumb / 2 - 6.0),
             cy + (thumb / 2 + 6.0 if fy else -thumb / 2 - 2.0), 4.2, bold=True)
    text("the play area", x0 + box_w / 2 - 14.0, y0 + box_h / 2 + 2.0)
    # north
    ax, a_top = x0 + box_w + 22.0, y0
    cv2.arrowedLine(page, (at(ax), at(a_top + ARROW_MM)), (at(ax), at(a_top)), 0,
                    max(2, at(0.8)), cv2.LINE_AA, tipLength=0.3)
    text("N", ax - 2.0, a_top + ARROW_MM + 7.0, 4.2, bold=True)
    # the scale bar: 100 mm, a tick each 10
    y = y0 + box_h + 30.0
    cv2.line(page, (at(12.0), at(y)), (at(112.0), at(y)), 0, max(1, at(0.4)))
    for k in range(11):
        tick = 4.0 if k % 5 == 0 else 2.0
        cv2.line(page, (at(12.0 + 10 * k), at(y - tick)), (at(12.0 + 10 * k), at(y)), 0,
                 max(1, at(0.3)))
    text("100 mm: measure it. Not 100 mm? The printer scaled the pages: print again at", 12.0,
         y + 7.0)
    text(f"100%, or measure the markers' side and give it as --marker-mm (now "
         f"{mat.marker_size_mm:g}).", 12.0, y + 13.0)
    text("Short ticks on each marker page mark its centre lines, to measure along.", 12.0,
         y + 19.0)
    return page


def _blank_page(paper: str, dpi: int) -> tuple[np.ndarray, Callable[[float], int]]:
    """A white ``paper`` page at ``dpi``, and the function from millimetres on it to
    pixels. Raises ValueError for a paper it does not know."""
    if paper not in PAPERS:
        raise ValueError(f"paper {paper!r}: expected one of {', '.join(PAPERS)}")
    pw, ph = PAPERS[paper]
    px = dpi / 25.4

    def at(mm: float) -> int:
        return int(round(mm * px))

    return np.full((at(ph), at(pw)), 255, np.uint8), at


def png_bytes(image: np.ndarray, dpi: int, tag: bytes | None = None) -> bytes:
    """``image`` as a PNG that says its resolution (``pHYs``: a print at actual size keeps
    its millimetres) and carries ``tag`` as a ``tEXt`` chunk."""
    ok, buf = cv2.imencode(".png", image)
    if not ok:
        raise ValueError("the image could not be encoded as PNG")
    data = buf.tobytes()
    per_metre = int(round(dpi / 0.0254))
    chunks = [_chunk(b"pHYs", per_metre.to_bytes(4, "big") * 2 + b"\x01")]
    if tag is not None:
        chunks.append(_chunk(b"tEXt", tag))
    # after the signature (8 bytes) and the header chunk (25)
    return data[:33] + b"".join(chunks) + data[33:]


def png_dpi(data: bytes) -> float | None:
    """The resolution a PNG says (its ``pHYs`` chunk in metres), or None."""
    at = data.find(b"pHYs")
    if at < 4 or data[at + 12] != 1:
        return None
    return int.from_bytes(data[at + 4:at + 8], "big") * 0.0254


def _chunk(kind: bytes, body: bytes) -> bytes:
    return len(body).to_bytes(4, "big") + kind + body + zlib.crc32(kind + body).to_bytes(4, "big")
