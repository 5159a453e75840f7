"""The calibration mat as sheets to print: one page for each corner marker.

A play area of 900 x 650 mm is larger than any home printer's page, and the table between
the markers needs no print at all: the mat is four markers, one in each corner of the play
area (shared/spec/table.md, "The table frame and the calibration mat"). So each marker gets
a page of its own (A4 or Letter) with:

* the marker, ``marker_size_mm`` square, centred on the page, white all round it (the
  detector needs a white border; the pipeline also reads the paper's white as the light's);
* thin lines along the marker's two centre lines, out toward the page's edges, to measure
  the distances between the markers' centres across the table with a tape;
* an arrow and words saying which corner of the play area it goes in, and which way is
  north (the top of the camera's picture, toward markers 0 and 1);
* a 100 mm scale bar, to check that the printer did not scale the page.

The page is a PNG carrying its resolution (a ``pHYs`` chunk), so that printing it at
"actual size" gives millimetres as drawn.
"""

from __future__ import annotations

import math
import zlib

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

#: The measuring lines start this far from the marker's edge (mm), or one and a half of the
#: marker's cells where that is more: the detector needs a white quiet zone round the
#: marker, a cell wide at least (10 mm for a 60 mm marker).
LINE_GAP_MM = 15.0
#: The north arrow runs down from here (mm from the page's top), at least ARROW_MM long.
ARROW_TOP_MM = 52.0
ARROW_MM = 20.0


def marker_sheet(mat: Mat, marker_id: int, paper: str = "a4", dpi: int = 300) -> np.ndarray:
    """The page for marker ``marker_id`` (0-3) of ``mat``, greyscale, ``dpi`` dots an inch.
    Raises ValueError for a paper or marker the page cannot hold."""
    if paper not in PAPERS:
        raise ValueError(f"paper {paper!r}: expected one of {', '.join(PAPERS)}")
    if marker_id not in CORNERS:
        raise ValueError(f"marker {marker_id}: a mat has markers 0 to 3")
    pw, ph = PAPERS[paper]
    px = dpi / 25.4

    def at(mm: float) -> int:
        return int(round(mm * px))

    side = mat.marker_size_mm
    dictionary = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, mat.dictionary))
    cells = dictionary.markerSize + 2
    gap = max(LINE_GAP_MM, 1.5 * side / cells)
    cx, cy = pw / 2.0, ph / 2.0 + 10.0
    half = side / 2.0 + gap
    if 2 * half > pw - 20.0 or cy - half - 4.0 - ARROW_TOP_MM < ARROW_MM:
        raise ValueError(f"a {side:g} mm marker with its white border does not fit on "
                         f"the {paper.upper()} page beside its north arrow")
    page = np.full((at(ph), at(pw)), 255, np.uint8)
    bits = cv2.aruco.generateImageMarker(dictionary, marker_id, cells)
    n = at(side)
    marker = cv2.resize(bits, (n, n), interpolation=cv2.INTER_NEAREST)
    x0, y0 = at(cx) - n // 2, at(cy) - n // 2
    page[y0:y0 + n, x0:x0 + n] = marker

    thin = max(1, at(0.25))
    grey = 0
    # centre lines, outside the quiet zone: a tape laid across two sheets reads the
    # distance between the markers' centres
    for a, b in ((cx - half, 8.0), (cx + half, pw - 8.0)):
        cv2.line(page, (at(a), at(cy)), (at(b), at(cy)), grey, thin)
    for a, b in ((cy - half, ARROW_TOP_MM), (cy + half, ph - 40.0)):
        cv2.line(page, (at(cx), at(a)), (at(cx), at(b)), grey, thin)

    font = cv2.FONT_HERSHEY_SIMPLEX

    def text(words: str, x_mm: float, y_mm: float, height_mm: float = 3.6,
             bold: bool = False) -> None:
        scale = at(height_mm) / 22.0      # (the font's capitals are about 22 px at scale 1)
        cv2.putText(page, words, (at(x_mm), at(y_mm)), font, scale, grey,
                    max(1, int(round(scale * (2.4 if bold else 1.6)))), cv2.LINE_AA)

    text(f"Calibration mat: marker {marker_id} of 0-3 ({mat.dictionary} id {marker_id}, "
         f"{side:g} mm)", 12.0, 16.0, 4.2, bold=True)
    text(f"Goes at the play area's {CORNERS[marker_id]} corner, as the camera sees it.",
         12.0, 23.0)
    text(f"Marker centres: {mat.width_mm:g} mm apart east-west, {mat.height_mm:g} mm "
         "north-south", 12.0, 29.0)
    text(f"(the rectangle's diagonals: {math.hypot(mat.width_mm, mat.height_mm):.0f} mm "
         "each).", 12.0, 35.0)
    text("Print at 100% / actual size. Tape the sheet flat, the marker's top to the north.",
         12.0, 41.0)
    # the arrow: north, the top of the camera's picture (beside the measuring line)
    # (ending above the marker's white border, which a large marker brings near x = 30)
    ax, top, bottom = 30.0, ARROW_TOP_MM, cy - half - 4.0
    cv2.arrowedLine(page, (at(ax), at(bottom)), (at(ax), at(top)), grey, max(2, at(0.8)),
                    cv2.LINE_AA, tipLength=min(0.5, 6.0 / max(bottom - top, 1.0)))
    text("NORTH", ax + 3.0, top + 6.0, 4.2, bold=True)
    text("(toward markers 0 and 1)", ax + 3.0, top + 12.0, 3.0)
    # the scale bar: 100 mm, a tick each 10
    y = ph - 22.0
    cv2.line(page, (at(12.0), at(y)), (at(112.0), at(y)), grey, max(1, at(0.4)))
    for k in range(11):
        tick = 4.0 if k % 5 == 0 else 2.0
        cv2.line(page, (at(12.0 + 10 * k), at(y - tick)), (at(12.0 + 10 * k), at(y)), grey,
                 max(1, at(0.3)))
    text("100 mm: measure it. Not 100 mm? The printer scaled the page.", 12.0, y + 6.0, 3.0)
    text(f"Measure the marker's side too: a mat file says it ({side:g} mm here).", 12.0,
         y + 11.0, 3.0)
    return page


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
