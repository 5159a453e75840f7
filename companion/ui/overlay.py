"""The overlay drawn over the live video, as plain shapes in image pixels (no Qt).

Everything is placed in the table frame (millimetres, ``shared/spec/table.md``) and mapped
into the image through a homography: the pipeline's calibration when the window has it,
else one fitted to the pixel positions an observation record carries (marker corners, card
``corners_px``, pyramid ``base_center_px``). :func:`build_overlay` turns a table reading,
the lattice, the game state and the user's selection into :class:`Shape` s (what to draw,
with a role the view maps to a colour) and :class:`Hit` s (what a click can select).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np

from companion.core.pieces import Cell, Minion, Pose, Pyramid, format_cell

Point = tuple[float, float]

#: Base edge and height (mm) of small, medium, large pyramids (shared/spec/table.md).
PYRAMID_MM: dict[int, tuple[float, float]] = {1: (14.3, 25.4), 2: (19.8, 34.9), 3: (25.4, 44.5)}

#: One letter per kind of target drawn at a cell for a selected pyramid.
TARGET_LETTERS: dict[str, str] = {"move": "M", "attack": "A", "build": "B", "grow": "G",
                                  "clone": "C", "place": "P", "transport": "T", "convert": "V",
                                  "turn": "R", "other": "*"}

_CELL_RE = re.compile(r"^\s*(-?\d+),(-?\d+)\s*:")


# ------------------------------------------------------------------------ mapping ---

class TableMapping:
    """Table millimetres to image pixels (and back) through a 3x3 homography, and through the
    camera's lens where one bends the picture (``lens``: a
    :class:`calibration.table.Intrinsics`, whose undistorted pixels the homography is in)."""

    def __init__(self, mm_to_px: np.ndarray, lens: Any = None) -> None:
        H = np.asarray(mm_to_px, np.float64).reshape(3, 3)
        if not np.all(np.isfinite(H)) or abs(np.linalg.det(H)) < 1e-12:
            raise ValueError("the table-to-image homography is degenerate")
        self.H = H
        self.H_inv = np.linalg.inv(H)
        self.lens = lens if lens is not None and getattr(lens, "distorts", False) else None

    @classmethod
    def from_image_to_table(cls, px_to_mm: np.ndarray, lens: Any = None) -> "TableMapping":
        return cls(np.linalg.inv(np.asarray(px_to_mm, np.float64).reshape(3, 3)), lens)

    def to_px(self, points_mm: Iterable[Sequence[float]]) -> list[Point]:
        pts = np.asarray(list(points_mm), np.float64).reshape(-1, 1, 2)
        if pts.size == 0:
            return []
        out = cv2.perspectiveTransform(pts, self.H).reshape(-1, 2)
        if self.lens is not None:
            out = self.lens.distort_points(out)
        return [(float(x), float(y)) for x, y in out]

    def to_mm(self, points_px: Iterable[Sequence[float]]) -> list[Point]:
        pts = np.asarray(list(points_px), np.float64).reshape(-1, 1, 2)
        if pts.size == 0:
            return []
        if self.lens is not None:
            pts = self.lens.undistort_points(pts.reshape(-1, 2)).reshape(-1, 1, 2)
        out = cv2.perspectiveTransform(pts, self.H_inv).reshape(-1, 2)
        return [(float(x), float(y)) for x, y in out]

    def px_per_mm(self, at_mm: Sequence[float]) -> float:
        """The image scale near a table point (pixels per millimetre)."""
        a, b = self.to_px([at_mm, (at_mm[0] + 10.0, at_mm[1])])
        return math.hypot(b[0] - a[0], b[1] - a[1]) / 10.0


def mapping_from_calibration(calib: Any) -> TableMapping | None:
    """The mapping of a :class:`calibration.table.Calibration` (None when uncalibrated),
    through its camera's lens when it has one (its ``H`` is in undistorted pixels)."""
    H = getattr(calib, "H", None)
    if H is None or not getattr(calib, "calibrated", True):
        return None
    try:
        return TableMapping.from_image_to_table(H, getattr(calib, "intrinsics", None))
    except (ValueError, np.linalg.LinAlgError):
        return None


def _diag_center(quad: Sequence[Sequence[float]]) -> Point | None:
    """Where the diagonals of a quadrilateral cross: the image of the card's centre."""
    p = np.asarray(quad, np.float64).reshape(-1, 2)
    if p.shape[0] != 4:
        return None
    d1, d2 = p[2] - p[0], p[3] - p[1]
    den = d1[0] * d2[1] - d1[1] * d2[0]
    if abs(den) < 1e-9:
        return None
    t = ((p[1][0] - p[0][0]) * d2[1] - (p[1][1] - p[0][1]) * d2[0]) / den
    c = p[0] + t * d1
    return float(c[0]), float(c[1])


def card_corners_mm(center: Sequence[float], angle_deg: float,
                    size_mm: Sequence[float]) -> list[Point]:
    """Corners (art top-left, top-right, bottom-right, bottom-left) of a card in table mm."""
    w, h = float(size_mm[0]), float(size_mm[1])
    a = math.radians(angle_deg)
    ux, uy = math.cos(a), math.sin(a)     # toward the top of the art
    rx, ry = -math.sin(a), math.cos(a)    # toward the art's right
    cx, cy = float(center[0]), float(center[1])
    return [(cx + ux * h / 2 - rx * w / 2, cy + uy * h / 2 - ry * w / 2),
            (cx + ux * h / 2 + rx * w / 2, cy + uy * h / 2 + ry * w / 2),
            (cx - ux * h / 2 + rx * w / 2, cy - uy * h / 2 + ry * w / 2),
            (cx - ux * h / 2 - rx * w / 2, cy - uy * h / 2 - ry * w / 2)]


def _fit(mm: list[Point], px: list[Point]) -> tuple[np.ndarray | None, float]:
    if len(mm) < 4:
        return None, math.inf
    src = np.asarray(mm, np.float64)
    dst = np.asarray(px, np.float64)
    if np.linalg.matrix_rank(np.c_[src, np.ones(len(src))]) < 3:
        return None, math.inf  # all on one line
    method = cv2.RANSAC if len(mm) >= 8 else 0
    H, _ = cv2.findHomography(src, dst, method, 6.0)
    if H is None:
        return None, math.inf
    got = cv2.perspectiveTransform(src.reshape(-1, 1, 2), H).reshape(-1, 2)
    err = float(np.median(np.hypot(*(got - dst).T)))
    return H, err


def mapping_from_record(record: Mapping[str, Any], mat: Any = None,
                        card_size_mm: Sequence[float] = (70.0, 120.0)) -> TableMapping | None:
    """A mapping fitted to the pixel positions an observation record carries, or None.

    Uses the mat's marker centres when the record has ``markers`` with ``corners_px`` (and
    the mat's size is known, from ``mat`` or the record's ``mat``), each card's centre (where
    the diagonals of its ``corners_px`` cross) and each pyramid's ``base_center_px``; card
    corners too when they agree with the card's angle and the deck's size.
    """
    mm: list[Point] = []
    px: list[Point] = []
    markers = record.get("markers")
    size = None
    mat_d = record.get("mat") if isinstance(record.get("mat"), Mapping) else None
    if mat is not None and hasattr(mat, "width_mm"):
        size = (float(mat.width_mm), float(mat.height_mm))
    elif mat_d is not None and "width_mm" in mat_d and "height_mm" in mat_d:
        size = (float(mat_d["width_mm"]), float(mat_d["height_mm"]))
    if isinstance(markers, Mapping) and size is not None:
        centres = {0: (0.0, 0.0), 1: (size[0], 0.0), 2: (size[0], size[1]), 3: (0.0, size[1])}
        for key, m in markers.items():
            try:
                mid = int(key)
                corners = m["corners_px"] if isinstance(m, Mapping) else None
            except (TypeError, ValueError, KeyError):
                continue
            if mid in centres and corners is not None and (
                    not isinstance(m, Mapping) or float(m.get("visible", 1.0) or 0.0) > 0.5):
                c = _diag_center(corners)
                if c is not None:
                    mm.append(centres[mid])
                    px.append(c)
    corner_mm: list[Point] = []
    corner_px: list[Point] = []
    for card in record.get("cards") or ():
        if not isinstance(card, Mapping):
            continue
        quad, centre = card.get("corners_px"), card.get("center_mm")
        if quad is None or centre is None:
            continue
        try:
            c = _diag_center(quad)
            if c is None:
                continue
            mm.append((float(centre[0]), float(centre[1])))
            px.append(c)
            corner_mm += card_corners_mm(centre, float(card.get("angle_deg", 0.0)),
                                         card_size_mm)
            corner_px += [(float(q[0]), float(q[1])) for q in quad]
        except (TypeError, ValueError, IndexError):
            continue
    for p in record.get("pyramids") or ():
        if isinstance(p, Mapping) and p.get("base_center_px") is not None:
            try:
                mm.append((float(p["base_center_mm"][0]), float(p["base_center_mm"][1])))
                px.append((float(p["base_center_px"][0]), float(p["base_center_px"][1])))
            except (TypeError, ValueError, IndexError, KeyError):
                continue
    best, best_err = _fit(mm, px)
    if corner_mm:
        H2, err2 = _fit(mm + corner_mm, px + corner_px)
        if H2 is not None and err2 < 6.0 and err2 <= best_err + 1.0:
            best = H2
    if best is None:
        return None
    try:
        return TableMapping(best)
    except ValueError:
        return None


# ------------------------------------------------------------------------ shapes ---

@dataclass(frozen=True)
class Shape:
    """One thing to draw. ``role`` picks the colour and pen (see the view's palette);
    ``player`` a player colour name for pyramids and their targets."""

    kind: str                      # polygon, polyline, line, circle, text
    points: tuple[Point, ...]
    role: str
    text: str = ""
    player: str | None = None
    radius: float = 0.0            # circle radius (px)


@dataclass(frozen=True)
class Hit:
    """A piece a click can select: a card or a pyramid, with its outline in image pixels."""

    what: str                      # "card" or "pyramid"
    polygon: tuple[Point, ...]
    label: str
    cell: Cell | None
    card: Any = None               # the SeenCard (or record dict) of a card
    pyramid: Any = None            # the SeenPyramid of a pyramid

    def contains(self, x: float, y: float) -> bool:
        poly = np.asarray(self.polygon, np.float32).reshape(-1, 1, 2)
        return cv2.pointPolygonTest(poly, (float(x), float(y)), False) >= 0

    @property
    def minion(self) -> Minion | None:
        if self.pyramid is None or self.cell is None:
            return None
        return Minion(self.cell, self.pyramid.pyramid)


@dataclass(frozen=True)
class Overlay:
    shapes: tuple[Shape, ...] = ()
    hits: tuple[Hit, ...] = ()
    notes: tuple[str, ...] = field(default=())

    def hit(self, x: float, y: float) -> Hit | None:
        """The piece under an image point: pyramids first (they sit on the cards)."""
        for what in ("pyramid", "card"):
            for h in self.hits:
                if h.what == what and h.contains(x, y):
                    return h
        return None

    def roles(self) -> set[str]:
        return {s.role for s in self.shapes}

    def extent(self, roles: Iterable[str] = ("lattice", "wasteland", "card", "pyramid")
               ) -> tuple[float, float, float, float] | None:
        """(x0, y0, x1, y1) around the shapes of these roles, or None when there are none."""
        keep = set(roles)
        pts = [p for s in self.shapes if s.role in keep for p in s.points]
        if not pts:
            return None
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        return min(xs), min(ys), max(xs), max(ys)


def illegal_cells(changes: Iterable[str]) -> dict[Cell, str]:
    """The cells an illegal change names (``"2,1: card X removed"``) and the words for each."""
    out: dict[Cell, str] = {}
    for text in changes:
        m = _CELL_RE.match(text)
        if m:
            cell = (int(m.group(1)), int(m.group(2)))
            words = text[m.end():].strip()
            out[cell] = f"{out[cell]}; {words}" if cell in out else words
    return out


def _cell_quad(lattice: Any, cell: Cell, size_mm: Sequence[float], shrink: float = 1.0
               ) -> list[Point]:
    """The outline a card at ``cell`` has: long side along j on portrait cells."""
    centre = lattice.center(cell)
    rot = float(getattr(lattice, "rotation_deg", 0.0))
    portrait = lattice.expects_portrait(cell) if hasattr(lattice, "expects_portrait") else True
    angle = rot + (90.0 if portrait else 0.0)
    w, h = float(size_mm[0]) * shrink, float(size_mm[1]) * shrink
    return card_corners_mm(centre, angle, (w, h))


def _pyramid_outline(base_mm: Sequence[float], size: int, pointing_deg: float | None
                     ) -> list[Point]:
    """The footprint of a pyramid: its square base upright, its face when lying."""
    b, h = PYRAMID_MM.get(size, PYRAMID_MM[2])
    cx, cy = float(base_mm[0]), float(base_mm[1])
    if pointing_deg is None:
        s = b / 2.0
        return [(cx - s, cy - s), (cx + s, cy - s), (cx + s, cy + s), (cx - s, cy + s)]
    slant = math.hypot(h, b / 2.0)
    a = math.radians(pointing_deg)
    ux, uy = math.cos(a), math.sin(a)
    rx, ry = -uy, ux
    apex = (cx + ux * slant * 2 / 3, cy + uy * slant * 2 / 3)
    bx, by = cx - ux * slant / 3, cy - uy * slant / 3
    return [apex, (bx + rx * b / 2, by + ry * b / 2), (bx - rx * b / 2, by - ry * b / 2)]


def _target_of(cell: Cell, pyramid: Pyramid) -> Cell:
    d = pyramid.pose.delta if pyramid.pose is not Pose.UP else (0, 0)
    return (cell[0] + d[0], cell[1] + d[1])


def build_overlay(mapping: TableMapping | None, *, reading: Any = None,
                  record: Mapping[str, Any] | None = None, lattice: Any = None,
                  state: Any = None, card_size_mm: Sequence[float] = (70.0, 120.0),
                  selected: Minion | None = None, targets: Sequence[Any] = (),
                  illegal: Mapping[Cell, str] | None = None,
                  selected_card: Cell | str | None = None) -> Overlay:
    """The shapes over one frame.

    ``reading``: a :class:`companion.live.tablestate.TableReading` (cards and pyramids with
    their cells); without one, the raw ``record``'s cards and pyramids are drawn (no cells).
    ``lattice``: the session's lattice (territory outlines, wasteland, targets); ``state``:
    the game (which cells are territories and wasteland). ``selected`` / ``targets``: a
    pyramid the user clicked and its :class:`~companion.ui.gamemodel.MinionTarget` s.
    ``illegal``: cell -> words of an illegal change, drawn in red.
    """
    if mapping is None:
        return Overlay(notes=("no calibration: the overlay cannot be placed",))
    shapes: list[Shape] = []
    hits: list[Hit] = []

    def poly(points_mm: Sequence[Point]) -> tuple[Point, ...]:
        return tuple(mapping.to_px(points_mm))

    # -- the lattice: territories and wasteland spaces of the game
    if lattice is not None:
        cells: set[Cell] = set()
        waste: set[Cell] = set()
        if state is not None:
            cells = set(getattr(state, "board", {}) or {})
            try:
                waste = set(state.wasteland_cells())
            except AttributeError:
                waste = set()
        elif reading is not None:
            cells = set(reading.view.cards)
        for cell in sorted(cells):
            shapes.append(Shape("polygon", poly(_cell_quad(lattice, cell, card_size_mm)),
                                "lattice"))
        for cell in sorted(waste - cells):
            shapes.append(Shape("polygon", poly(_cell_quad(lattice, cell, card_size_mm, 0.9)),
                                "wasteland"))
            shapes.append(Shape("text", tuple(mapping.to_px([lattice.center(cell)])),
                                "cell-label", format_cell(cell)))

    # -- cards and their ids
    card_items: list[tuple[str, Sequence[float], float, Cell | None, Any, str | None]] = []
    if reading is not None:
        for sc in reading.cards:
            card_items.append((sc.id, sc.center_mm, sc.angle_deg, sc.cell, sc,
                               getattr(sc, "read_as", None)))
    elif record is not None:
        for c in record.get("cards") or ():
            if isinstance(c, Mapping) and "center_mm" in c:
                card_items.append((str(c.get("id", "?")), c["center_mm"],
                                   float(c.get("angle_deg", 0.0)), None, c, None))
    top_of: dict[Cell, str] = dict(reading.view.cards) if reading is not None else {}
    for cid, centre, angle, card_cell, src, read_as in card_items:
        quad = poly(card_corners_mm(centre, angle, card_size_mm))
        covered = card_cell is not None and top_of.get(card_cell) not in (None, cid)
        if covered:
            continue  # a card under the top one: its id would hide the top card's
        role = "card-fixed" if read_as else "card"
        if selected_card is not None and selected_card in (card_cell,
                                                           getattr(src, "zone", None)):
            role = "card-selected"
        shapes.append(Shape("polygon", quad, role))
        label = cid if not read_as else f"{cid} (read {read_as})"
        # the id near the card's north edge: pyramids stand nearer the middle
        north = (float(centre[0]), float(centre[1]) - 0.3 * max(card_size_mm))
        shapes.append(Shape("text", tuple(mapping.to_px([north])), "card-label", label))
        hits.append(Hit("card", quad, label, card_cell, card=src))

    # -- pyramids, with the cell each one targets
    pyr_items: list[tuple[Pyramid | None, Any, Cell | None, str, str]] = []
    if reading is not None:
        for sp in reading.pyramids:
            pyr_items.append((sp.pyramid, sp, sp.cell, sp.pyramid.color.value, str(sp.pyramid)))
    elif record is not None:
        for p in record.get("pyramids") or ():
            if isinstance(p, Mapping) and "base_center_mm" in p:
                pose = "U" if p.get("upright") else "?"
                pyr_items.append((None, p, None, str(p.get("color", "?")),
                                  f"{p.get('color', '?')}{p.get('pips', '?')}{pose}"))
    for pyr, src, pyr_cell, colour, label in pyr_items:
        base = src.base_center_mm if pyr is not None else src["base_center_mm"]
        pointing = src.pointing_deg if pyr is not None else src.get("pointing_deg")
        size = pyr.size if pyr is not None else int(src.get("pips", 2) or 2)
        if pyr is not None and pyr.pose is Pose.UP:
            pointing = None
        outline = poly(_pyramid_outline(base, size, pointing))
        is_sel = (selected is not None and pyr is not None and pyr_cell == selected.cell
                  and pyr == selected.pyramid)
        shapes.append(Shape("polygon", outline, "pyramid-selected" if is_sel else "pyramid",
                            player=colour))
        where = mapping.to_px([base])[0]
        shapes.append(Shape("text", ((where[0], where[1] - 14.0),), "pyramid-label",
                            label + (f"@{format_cell(pyr_cell)}" if pyr_cell is not None else ""),
                            player=colour))
        if pyr is not None and pyr_cell is not None and lattice is not None:
            tgt = _target_of(pyr_cell, pyr)
            tpx = mapping.to_px([lattice.center(tgt)])[0]
            if tgt != pyr_cell:
                shapes.append(Shape("line", (where, tpx), "target", player=colour))
            shapes.append(Shape("circle", (tpx,), "target", player=colour, radius=6.0))
        # a click anywhere near the piece selects it: pad small footprints
        pad = max(10.0, 0.6 * mapping.px_per_mm(base) * PYRAMID_MM.get(size, (20.0, 0))[0])
        hits.append(Hit("pyramid", ((where[0] - pad, where[1] - pad), (where[0] + pad, where[1] - pad),
                                    (where[0] + pad, where[1] + pad), (where[0] - pad, where[1] + pad)),
                        label, pyr_cell, pyramid=src if pyr is not None else None))

    # -- the selected pyramid's legal moves
    if lattice is not None and targets:
        per_cell: dict[Cell, int] = {}
        for t in targets:
            k = per_cell.get(t.cell, 0)
            per_cell[t.cell] = k + 1
            cx, cy = mapping.to_px([lattice.center(t.cell)])[0]
            off = 18.0 * k
            pos = (cx - 20.0 + off, cy + 22.0)
            shapes.append(Shape("circle", (pos,), f"move-{t.kind}", radius=11.0,
                                text=TARGET_LETTERS.get(t.kind, "*")))
        for cell in per_cell:
            shapes.append(Shape("polygon", poly(_cell_quad(lattice, cell, card_size_mm, 0.96)),
                                "move-cell"))

    # -- illegal changes, in red with the words
    if illegal:
        for cell, words in sorted(illegal.items()):
            if lattice is not None:
                quad = poly(_cell_quad(lattice, cell, card_size_mm, 1.04))
                shapes.append(Shape("polygon", quad, "illegal"))
                c = mapping.to_px([lattice.center(cell)])[0]
                shapes.append(Shape("text", ((c[0], c[1] + 40.0),), "illegal-label", words))
    return Overlay(tuple(shapes), tuple(hits))


__all__ = ["Hit", "Overlay", "PYRAMID_MM", "Shape", "TARGET_LETTERS", "TableMapping",
           "build_overlay", "card_corners_mm", "illegal_cells", "mapping_from_calibration",
           "mapping_from_record"]
