"""Training sets for the card detector, made from rendered scenes (``companion synth``).

Each rendered image is rectified with its true camera into the detector's square canvas (:class:`vision.detection.view.DetectorView`), and labelled with the
true card rectangles in YOLO OBB format (one class, ``card``). Cards at least half
uncovered are labelled, as the observation record lists them.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from calibration.mat import Mat, load_mat
from calibration.table import Calibration, Intrinsics
from vision.cards.identify import card_corners_mm
from vision.detection.view import DetectorView

log = logging.getLogger(__name__)

CLASS_NAMES: tuple[str, ...] = ("card",)


@dataclass
class DatasetSummary:
    images: int = 0
    skipped: int = 0
    cards: int = 0


def card_obb_labels(truth: dict[str, Any], view: DetectorView) -> list[str]:
    """YOLO OBB label lines (class 0, four normalised canvas corners) for the record's cards."""
    lines = []
    for card in truth.get("cards", []):
        size = card.get("card_size_mm") or truth.get("deck", {}).get("card_size_mm")
        if size is None:
            raise ValueError("truth record gives no card size (deck.card_size_mm)")
        mm = card_corners_mm(card["center_mm"], float(card["angle_deg"]), size)
        px = view.to_px(mm) / view.size
        # ultralytics drops a whole label file with a coordinate outside 0..1; a card
        # reaching past the canvas edge is rare (the margin is 40 mm) and clipping it only
        # shaves its box
        px = np.clip(px, 0.0, 1.0)
        lines.append("0 " + " ".join(f"{v:.6f}" for v in px.ravel()))
    return lines


def truth_calibration(truth: dict[str, Any]) -> Calibration:
    """The exact table homography of a rendered image, from its true camera.

    Labels must sit exactly on the cards; an image calibrated from its markers alone can be
    off by centimetres when one marker is visible, which would teach the model to draw
    boxes beside cards."""
    cam = truth["camera"]
    K = np.asarray(cam["K"], np.float64)
    R = np.asarray(cam["R"], np.float64)
    t = np.asarray(cam["t"], np.float64)
    G = K @ np.column_stack([R[:, 0], R[:, 1], t])   # table (x, y, 1) -> ideal pixels
    dist = np.asarray(cam.get("dist", [0, 0, 0, 0, 0]), np.float64)
    intr = Intrinsics(K, dist) if np.any(np.abs(dist) > 0) else None
    return Calibration(True, np.linalg.inv(G), intrinsics=intr,
                       image_size=(int(cam["width"]), int(cam["height"])))


def export_folder(src: str | Path, out: str | Path, split: str, size: int,
                  mat: Mat | None = None, start: int = 0,
                  progress: Callable[[int], None] | None = None) -> DatasetSummary:
    """Rectify every ``NNNNN.jpg`` of a synth folder into ``out/images/split`` with labels in
    ``out/labels/split``; the synth split field is ignored (the caller keeps train and
    validation in different folders rendered from different seeds)."""
    src, out = Path(src), Path(out)
    mat = mat or load_mat(src / "mat.json")
    view = DetectorView.for_mat(mat, size)
    (out / "images" / split).mkdir(parents=True, exist_ok=True)
    (out / "labels" / split).mkdir(parents=True, exist_ok=True)
    summary = DatasetSummary()
    for i, img_path in enumerate(sorted(src.glob("*.jpg"))):
        truth_path = img_path.with_suffix(".json")
        image = cv2.imread(str(img_path))
        if image is None or not truth_path.is_file():
            log.warning("skipping %s: unreadable image or no truth record", img_path)
            summary.skipped += 1
            continue
        truth = json.loads(truth_path.read_text(encoding="utf-8"))
        calib = truth_calibration(truth)
        canvas = view.render(image, calib)
        stem = f"{src.name}-{img_path.stem}"
        cv2.imwrite(str(out / "images" / split / f"{stem}.jpg"), canvas,
                    [cv2.IMWRITE_JPEG_QUALITY, 92])
        lines = card_obb_labels(truth, view)
        (out / "labels" / split / f"{stem}.txt").write_text("\n".join(lines) + "\n")
        summary.images += 1
        summary.cards += len(lines)
        if progress:
            progress(1)
    return summary


def write_yaml(out: str | Path, names: Sequence[str] = CLASS_NAMES) -> Path:
    out = Path(out)
    path = out / "data.yaml"
    body = [f"path: {out.resolve()}", "train: images/train", "val: images/val", "names:"]
    body += [f"  {i}: {n}" for i, n in enumerate(names)]
    path.write_text("\n".join(body) + "\n")
    return path
