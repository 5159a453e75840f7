"""Finding cards: a small YOLO11n-OBB (ONNX, onnxruntime) on the detector's table view.

The model sees the mat rectified into a square canvas (:mod:`vision.detection.view`), so its
oriented boxes are card rectangles in table millimetres. It says where cards are and which
way their long side runs; which card it is, and which end is the top of the art, is the
gallery's job (:mod:`vision.cards.identify`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from calibration.mat import Mat
from calibration.table import Calibration, seen_area_mm
from models import ModelError, model_path, open_onnx
from vision.detection.view import (PAD_VALUE, TILE_OVERLAP_MM, DetectorView,
                                   depth_in_tile, spill_views, tiled, tiles)
from vision.tensors import nchw_rgb01

log = logging.getLogger(__name__)

DEFAULT_MODEL = "cards-obb.onnx"
#: a tile keeps the boxes whose centres lie at least this far (mm) from its sides shared
#: with another tile: more than half a tarot card's diagonal (70 mm), so the box is whole,
#: and no more than half the overlap, so every card is kept by one tile at least
TILE_DEPTH_MM = TILE_OVERLAP_MM / 2 - 8.0

#: The second look. Where the detector scored a box at least WEAK_SCORE but under its floor
#: farther than SECOND_LOOK_SEP_MM from every box it kept, it reads the canvas again turned
#: by SECOND_LOOK_DEG and adds the boxes scored at least SECOND_LOOK_MIN there that lie as
#: far from every kept box. On crowded lattices under a steep tilt the network can miss a
#: card lying askew across its neighbours, and sees it at another angle; most frames have no
#: such weak box and pay nothing (about one in twelve on dev renders). The pipeline keeps a
#: box found only this way where the gallery names its card surely
#: (``vision.pipeline.SECOND_LOOK_ID_MIN``). Figures: docs/vision-tuning.md.
WEAK_SCORE = 0.1
SECOND_LOOK_DEG = 45.0
SECOND_LOOK_MIN = 0.5
SECOND_LOOK_SEP_MM = 25.0


@dataclass(frozen=True)
class CardBoxes:
    """N cards found in one image, as parallel arrays in the table frame.

    ``angles_deg`` is the direction of each card's long side, in [0, 180): a box cannot say
    which end is the top of the art."""

    centers_mm: np.ndarray   # (N, 2)
    angles_deg: np.ndarray   # (N,)
    sizes_mm: np.ndarray     # (N, 2) short side, long side
    scores: np.ndarray       # (N,)
    #: (N,) bool: found only by the second look on the turned canvas
    #: (:meth:`CardDetector.second_look`); None: no box was
    second_look: np.ndarray | None = None

    def __post_init__(self) -> None:
        n = len(self.scores)
        want = {"centers_mm": (n, 2), "angles_deg": (n,), "sizes_mm": (n, 2), "scores": (n,)}
        if self.second_look is not None:
            want["second_look"] = (n,)
        for name, shape in want.items():
            arr = getattr(self, name)
            if not isinstance(arr, np.ndarray) or arr.shape != shape:
                got = getattr(arr, "shape", type(arr).__name__)
                raise ValueError(f"CardBoxes.{name}: expected shape {shape}, got {got}")

    def __len__(self) -> int:
        return len(self.scores)

    @property
    def from_second_look(self) -> np.ndarray:
        """(N,) bool: which boxes only the second look found."""
        if self.second_look is None:
            return np.zeros(len(self.scores), bool)
        return self.second_look.astype(bool)

    @classmethod
    def empty(cls) -> "CardBoxes":
        return cls(np.zeros((0, 2)), np.zeros(0), np.zeros((0, 2)), np.zeros(0))

    def take(self, index: np.ndarray) -> "CardBoxes":
        """The boxes at ``index`` (an int array), in that order."""
        i = np.asarray(index, np.int64).reshape(-1)
        return CardBoxes(self.centers_mm[i], self.angles_deg[i], self.sizes_mm[i],
                         self.scores[i],
                         None if self.second_look is None else self.second_look[i])

    @classmethod
    def concatenate(cls, parts: "list[CardBoxes]") -> "CardBoxes":
        """All boxes of ``parts``, in order."""
        if not parts:
            return cls.empty()
        flagged = any(p.second_look is not None for p in parts)
        return cls(np.concatenate([p.centers_mm for p in parts]).reshape(-1, 2),
                   np.concatenate([p.angles_deg for p in parts]),
                   np.concatenate([p.sizes_mm for p in parts]).reshape(-1, 2),
                   np.concatenate([p.scores for p in parts]),
                   np.concatenate([p.from_second_look for p in parts]) if flagged else None)

    @classmethod
    def from_yolo_obb(cls, raw: np.ndarray, view: DetectorView, conf: float = 0.35,
                      iou: float = 0.5) -> "CardBoxes":
        """From the raw output of an ultralytics OBB export, shape (1, 4 + classes + 1, A):
        per anchor cx, cy, w, h (canvas px), class scores, angle (radians)."""
        p, scores = _anchors(raw)
        keep = scores >= conf
        p, scores = p[keep], scores[keep]
        if len(p) == 0:
            return cls.empty()
        cx, cy, w, h, ang = p[:, 0], p[:, 1], p[:, 2], p[:, 3], p[:, -1]
        order = _rotated_nms(cx, cy, w, h, ang, scores, iou)
        cx, cy, w, h, ang, scores = (a[order] for a in (cx, cy, w, h, ang, scores))
        # the long side's direction: the box's w axis at ``ang`` (y down = table south)
        long_dir = np.where(w >= h, np.degrees(ang), np.degrees(ang) + 90.0) % 180.0
        centers = view.to_mm(np.column_stack([cx, cy]))
        sizes = np.column_stack([np.minimum(w, h), np.maximum(w, h)]) / view.px_per_mm
        return cls(centers, long_dir.astype(np.float64), sizes.astype(np.float64),
                   scores.astype(np.float64))


def _checked_output(raw: np.ndarray) -> np.ndarray:
    out = np.asarray(raw, np.float32)
    if out.ndim != 3 or out.shape[0] != 1 or out.shape[1] < 6:
        raise ModelError(f"card detector output has shape {out.shape}, expected "
                         "(1, 4 + classes + 1, anchors) from a YOLO OBB export")
    return out


def _anchors(raw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(A, 4 + classes + 1) anchors of a YOLO OBB output, and each one's best class score."""
    p = _checked_output(raw)[0].T
    scores: np.ndarray = p[:, 4:-1].max(axis=1)
    return p, scores


def turned_back(raw: np.ndarray, turn: np.ndarray, deg: float, size: tuple[int, int]
                ) -> np.ndarray:
    """The raw output of the detector on a canvas turned by ``turn`` (OpenCV's 2x3 matrix of
    a turn by ``deg`` about the middle) as if read on the canvas itself, of ``size`` (w, h):
    the centres turned back, the directions too, and the anchors whose centre falls outside
    the canvas (the turned canvas's padded corners) scored 0."""
    import cv2

    out = _checked_output(raw).copy()
    back = cv2.invertAffineTransform(turn)
    cx, cy = out[0, 0].copy(), out[0, 1].copy()
    out[0, 0] = back[0, 0] * cx + back[0, 1] * cy + back[0, 2]
    out[0, 1] = back[1, 0] * cx + back[1, 1] * cy + back[1, 2]
    # OpenCV turns counter-clockwise as the image is seen (y down): a direction read at a
    # on the turned canvas is a + deg on the canvas
    out[0, -1] += np.radians(deg)
    w, h = size
    outside = (out[0, 0] < 0) | (out[0, 0] >= w) | (out[0, 1] < 0) | (out[0, 1] >= h)
    out[0, 4:-1, outside] = 0.0
    return out


def overlap_area(a: tuple[tuple[float, float], tuple[float, float], float],
                 b: tuple[tuple[float, float], tuple[float, float], float]) -> float:
    """The area two rotated rectangles (OpenCV's (centre, size, degrees)) share."""
    import cv2

    found, pts = cv2.rotatedRectangleIntersection(a, b)
    if found == cv2.INTERSECT_NONE or pts is None:
        return 0.0
    return float(cv2.contourArea(pts))


def _rotated_nms(cx: np.ndarray, cy: np.ndarray, w: np.ndarray, h: np.ndarray,
                 ang: np.ndarray, scores: np.ndarray, iou: float) -> np.ndarray:
    """Greedy NMS with exact rotated-rectangle IoU (OpenCV): the best box left is kept and
    every later box overlapping it more than ``iou`` goes. Only boxes whose centres are
    closer than their two half-diagonals are measured exactly (one card's dozens of anchors
    against its kept box, a few neighbours), which is decided for all of them at once."""
    order = np.argsort(-scores, kind="stable")
    n = len(order)
    x, y = cx[order].astype(np.float64), cy[order].astype(np.float64)
    bw, bh = w[order].astype(np.float64), h[order].astype(np.float64)
    deg = np.degrees(ang[order].astype(np.float64))
    half_diag = 0.5 * np.hypot(bw, bh)
    areas = bw * bh
    alive = np.ones(n, bool)
    kept: list[int] = []
    for i in range(n):
        if not alive[i]:
            continue
        kept.append(int(order[i]))
        rest = np.flatnonzero(alive[i + 1:]) + i + 1
        near = rest[np.hypot(x[rest] - x[i], y[rest] - y[i]) <= half_diag[i] + half_diag[rest]]
        ri = ((x[i], y[i]), (bw[i], bh[i]), deg[i])
        for j in near:
            inter = overlap_area(ri, ((x[j], y[j]), (bw[j], bh[j]), deg[j]))
            if inter / max(1e-6, areas[i] + areas[j] - inter) > iou:
                alive[j] = False
    return np.array(kept, dtype=np.int64)


class CardDetector:
    """Loads the ONNX model once; :meth:`detect` runs one image."""

    def __init__(self, model: str | Path | None = None, threads: int = 2,
                 conf: float = 0.35, iou: float = 0.5) -> None:
        path = Path(model) if model is not None else model_path(DEFAULT_MODEL)
        if not path.is_file():
            raise ModelError(f"card detector model {str(path)!r} does not exist")
        try:
            self.session = open_onnx(path, threads)[0]
        except ModelError as exc:
            raise ModelError(f"card detector {exc}") from None
        inp = self.session.get_inputs()[0]
        shape = inp.shape
        if len(shape) != 4 or not isinstance(shape[2], int) or shape[2] != shape[3]:
            raise ModelError(f"card detector model {str(path)!r} has input shape {shape}; "
                             "expected a fixed square (1, 3, S, S)")
        self.path = path
        self.input_name = inp.name
        self.size = int(shape[2])
        self.conf = float(conf)
        self.iou = float(iou)
        #: the second look's turn (degrees; 0: no second look)
        self.second_look_deg = SECOND_LOOK_DEG
        self.last_view: np.ndarray | None = None

    def view(self, mat: Mat) -> DetectorView:
        return DetectorView.for_mat(mat, self.size)

    def detect(self, image_bgr: np.ndarray, calib: Calibration, mat: Mat) -> CardBoxes:
        """The cards on ``mat``'s table in ``image_bgr``. A play area larger than the
        detector's trained view (a table without a mat) is read in tiles
        (:func:`vision.detection.view.tiles`), only where the frame shows the table: each
        tile keeps the boxes whose centres lie at least :data:`TILE_DEPTH_MM` inside the
        sides it shares with another tile, and of a card read whole by two tiles one box
        stays."""
        if not calib.calibrated or calib.H is None:
            return CardBoxes.empty()
        h, w = image_bgr.shape[:2]
        if not tiled(mat):
            main = self.view(mat)
            boxes = self._read(image_bgr, calib, main)
            past = spill_views(main, boxes.centers_mm, boxes.scores,
                               seen_area_mm(calib, (w, h)))
            if not past:
                return boxes
            # a game spread past the canvas's side: the table beyond it is read as a tile
            # beside it (the canvas stays :attr:`last_view`)
            views = [main, *past]
            found = [boxes]
            for view in past:
                found.append(self.detect_canvas(view.render(image_bgr, calib), view))
            return self._merged(views, found)
        views = tiles(mat, self.size, seen_area_mm(calib, (w, h)))
        return self._merged(views, [self._read(image_bgr, calib, view) for view in views])

    def _merged(self, views: list[DetectorView], read: list[CardBoxes]) -> CardBoxes:
        """One set of boxes from those ``read`` on overlapping canvases ``views``."""
        found = []
        for k, boxes in enumerate(read):
            # a card cut by the tile's edge is read whole by its neighbour: a card's
            # centre lies at least half the overlap inside one of the two
            deep = depth_in_tile(views, k, boxes.centers_mm) >= TILE_DEPTH_MM
            found.append(boxes.take(np.flatnonzero(deep)))
        boxes = CardBoxes.concatenate(found)
        # a card deep in two tiles' overlap was read by both: one box stays
        keep = _rotated_nms(boxes.centers_mm[:, 0], boxes.centers_mm[:, 1], boxes.sizes_mm[:, 1],
                            boxes.sizes_mm[:, 0], np.radians(boxes.angles_deg), boxes.scores,
                            self.iou)
        return boxes.take(np.sort(keep))

    def _read(self, image_bgr: np.ndarray, calib: Calibration, view: DetectorView
              ) -> CardBoxes:
        """The boxes on one canvas (kept as :attr:`last_view`)."""
        self.last_view = view.render(image_bgr, calib)
        return self.detect_canvas(self.last_view, view)

    def second_look(self, canvas: np.ndarray, view: DetectorView, boxes: CardBoxes
                    ) -> CardBoxes:
        """``boxes`` and those found on ``canvas`` turned by :attr:`second_look_deg` (score
        at least :data:`SECOND_LOOK_MIN`) that lie apart from every one of them, flagged."""
        import cv2

        h, w = canvas.shape[:2]
        turn = cv2.getRotationMatrix2D(((w - 1) / 2, (h - 1) / 2), self.second_look_deg, 1.0)
        turned = cv2.warpAffine(canvas, turn, (w, h), flags=cv2.INTER_LINEAR,
                                borderMode=cv2.BORDER_CONSTANT, borderValue=(PAD_VALUE,) * 3)
        raw = turned_back(self._run(turned), turn, self.second_look_deg, (w, h))
        more = CardBoxes.from_yolo_obb(raw, view, SECOND_LOOK_MIN, self.iou)
        more = more.take(_apart(more.centers_mm, boxes))
        if not len(more):
            return boxes
        log.debug("second look: %d more card(s) at %s", len(more),
                  np.round(more.centers_mm).tolist())
        return CardBoxes.concatenate([boxes, CardBoxes(
            more.centers_mm, more.angles_deg, more.sizes_mm, more.scores,
            np.ones(len(more), bool))])

    def _run(self, canvas: np.ndarray) -> np.ndarray:
        x = nchw_rgb01(canvas[None])
        raw: np.ndarray = self.session.run(None, {self.input_name: x})[0]
        return raw

    def detect_canvas(self, canvas: np.ndarray, view: DetectorView) -> CardBoxes:
        """The boxes on one canvas, and the second look's (:meth:`second_look`) where the
        network scored a box at least :data:`WEAK_SCORE` apart from every box it kept."""
        raw = self._run(canvas)
        boxes = CardBoxes.from_yolo_obb(raw, view, self.conf, self.iou)
        if self.second_look_deg and self.conf > WEAK_SCORE:
            # the weak anchors' own centres, without NMS: those of a kept box lie on it
            p, scores = _anchors(raw)
            weak = (scores >= WEAK_SCORE) & (scores < self.conf)
            if weak.any() and len(_apart(view.to_mm(p[weak, :2]), boxes)) > 0:
                boxes = self.second_look(canvas, view, boxes)
        return boxes


def _apart(centers_mm: np.ndarray, kept: CardBoxes) -> np.ndarray:
    """Indices of the points ``centers_mm`` (N, 2) farther than :data:`SECOND_LOOK_SEP_MM`
    from the centre of every box of ``kept``."""
    pts = np.asarray(centers_mm, np.float64).reshape(-1, 2)
    if not len(kept):
        return np.arange(len(pts))
    d = np.linalg.norm(pts[:, None, :] - kept.centers_mm[None, :, :], axis=2)
    return np.flatnonzero(d.min(axis=1) > SECOND_LOOK_SEP_MM)
