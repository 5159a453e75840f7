"""Training sets from a synthetic run (a folder of NNNNN.jpg + NNNNN.json truth records).

* ``yolo-cards-obb/``: Ultralytics OBB (``images/{train,val}``, ``labels/{train,val}``,
  ``data.yaml``); one class ``card`` (face up or down); a line per card that is at least
  30% visible: ``0 x1 y1 x2 y2 x3 y3 x4 y4`` normalised, corners in the art's order
  (top-left, top-right, bottom-right, bottom-left), so the art's orientation is kept.
* ``yolo-pyramids-pose/``: Ultralytics pose, 30 classes ``<colour>-<pips>``, box = the
  solid's bounding box, keypoints ``base`` (the point of ``base_center_mm``) and ``apex``
  (visibility 2, or 1 when the pyramid is mostly hidden).
* ``card-crops/{train,val}/<id>/NNNNN_k.jpg``: each well-visible card rectified to 64 x 112
  px (portrait, art top up), for the identity classifier; face-down cards under ``back``.

Images are hard links to the run's JPEGs where the file system allows (copies otherwise).
The split is the one in each truth record (decided by seed and index).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from pathlib import Path
from typing import Any, Callable

import numpy as np

from companion.core.observation import COLORS
from vision.synth.errors import SynthError

log = logging.getLogger(__name__)

PYRAMID_CLASSES: tuple[str, ...] = tuple(f"{c}-{p}" for c in COLORS for p in (1, 2, 3))
CROP_SIZE = (64, 112)


def pyramid_class(color: str, pips: int) -> int:
    return COLORS.index(color) * 3 + (pips - 1)


def _link(src: Path, dst: Path) -> None:
    if dst.exists():
        dst.unlink()
    try:
        os.link(src, dst)
    except OSError:
        shutil.copyfile(src, dst)


def _norm(pts: list[list[float]], w: int, h: int) -> list[float]:
    out = []
    for x, y in pts:
        out += [min(max(x / w, 0.0), 1.0), min(max(y / h, 0.0), 1.0)]
    return out


def card_obb_lines(truth: dict[str, Any], min_visible: float = 0.3) -> list[str]:
    w, h = truth["camera"]["width"], truth["camera"]["height"]
    lines = []
    for c in truth["cards"]:
        if c.get("visible", 1.0) < min_visible:
            continue
        lines.append("0 " + " ".join(f"{v:.6f}" for v in _norm(c["corners_px"], w, h)))
    return lines


def pyramid_pose_lines(truth: dict[str, Any], min_visible: float = 0.15) -> list[str]:
    w, h = truth["camera"]["width"], truth["camera"]["height"]
    lines = []
    for p in truth["pyramids"]:
        vis = p.get("visible", 1.0)
        if vis < min_visible:
            continue
        x0, y0, x1, y1 = p["bbox_px"]
        x0, x1 = max(0.0, x0), min(w - 1.0, x1)
        y0, y1 = max(0.0, y0), min(h - 1.0, y1)
        if x1 <= x0 or y1 <= y0:
            continue
        cls = pyramid_class(p["color"], p["pips"])
        box = [(x0 + x1) / 2 / w, (y0 + y1) / 2 / h, (x1 - x0) / w, (y1 - y0) / h]
        kp = []
        for key in ("base_center_px", "apex_px"):
            x, y = p[key]
            inside = 0 <= x < w and 0 <= y < h
            v = 0 if not inside else (2 if vis >= 0.5 else 1)
            kp += [min(max(x / w, 0.0), 1.0), min(max(y / h, 0.0), 1.0), v]
        lines.append(f"{cls} " + " ".join(f"{v:.6f}" for v in box) + " "
                     + " ".join(f"{v:.6f}" if i % 3 != 2 else str(int(v))
                                for i, v in enumerate(kp)))
    return lines


def rectify_card(image: np.ndarray, corners_px: list[list[float]],
                 size: tuple[int, int] = CROP_SIZE) -> np.ndarray:
    import cv2

    cw, ch = size
    src = np.array(corners_px, np.float32)
    dst = np.array([[-0.5, -0.5], [cw - 0.5, -0.5], [cw - 0.5, ch - 0.5], [-0.5, ch - 0.5]],
                   np.float32)
    M = cv2.getPerspectiveTransform(src, dst)
    return cv2.warpPerspective(image, M, (cw, ch), flags=cv2.INTER_AREA,
                               borderMode=cv2.BORDER_REPLICATE)


def _yaml(path: Path, names: list[str], extra: str = "") -> None:
    lines = [f"path: {path.resolve()}", "train: images/train", "val: images/val",
             f"nc: {len(names)}", "names:"]
    lines += [f"  {i}: {n}" for i, n in enumerate(names)]
    (path / "data.yaml").write_text("\n".join(lines) + "\n" + extra, encoding="utf-8")


#: the training sets' folders :func:`export_all` writes: OBB boxes, pyramid poses, card crops
EXPORT_FOLDERS = ("yolo-cards-obb", "yolo-pyramids-pose", "card-crops")


def export_all(root: str | Path, out: str | Path | None = None,
               progress: Callable[[int], None] | None = None,
               crop_min_visible: float = 0.85) -> dict[str, int]:
    """Write the three training sets for the run in ``root`` (into ``out``, default root)."""
    import cv2

    root = Path(root)
    out = Path(out) if out is not None else root
    records = sorted(p for p in root.glob("[0-9]*.json"))
    if not records:
        raise SynthError(f"no truth records (NNNNN.json) in {root}")
    obb, pose, crops = (out / name for name in EXPORT_FOLDERS)
    counts = {"images": 0, "cards": 0, "pyramids": 0, "crops": 0}
    for split in ("train", "val"):
        for d in (obb, pose):
            (d / "images" / split).mkdir(parents=True, exist_ok=True)
            (d / "labels" / split).mkdir(parents=True, exist_ok=True)
    for rec in records:
        truth = json.loads(rec.read_text(encoding="utf-8"))
        split = truth.get("split", "train")
        img_path = root / truth["image"]
        if not img_path.exists():
            raise SynthError(f"{rec}: image {truth['image']!r} is missing")
        stem = img_path.stem
        cards = card_obb_lines(truth)
        pyrs = pyramid_pose_lines(truth)
        for d, lines in ((obb, cards), (pose, pyrs)):
            _link(img_path, d / "images" / split / img_path.name)
            (d / "labels" / split / f"{stem}.txt").write_text(
                "".join(line + "\n" for line in lines), encoding="utf-8")
        counts["images"] += 1
        counts["cards"] += len(cards)
        counts["pyramids"] += len(pyrs)
        good = [c for c in truth["cards"]
                if c.get("visible", 1.0) >= crop_min_visible and c.get("in_frame", True)]
        if good:
            image = cv2.imread(str(img_path), cv2.IMREAD_COLOR)
            if image is None:
                raise SynthError(f"{rec}: image {truth['image']!r} cannot be decoded")
            for k, c in enumerate(good):
                crop = rectify_card(image, c["corners_px"])
                d = crops / split / c["id"]
                d.mkdir(parents=True, exist_ok=True)
                cv2.imwrite(str(d / f"{stem}_{k:02d}.jpg"), crop, [cv2.IMWRITE_JPEG_QUALITY, 92])
                counts["crops"] += 1
        if progress:
            progress(1)
    _yaml(obb, ["card"])
    _yaml(pose, list(PYRAMID_CLASSES), "kpt_shape: [2, 3]\nflip_idx: [0, 1]\n"
          "# keypoints: 0 base (centre of the base, or of the face it lies on), 1 apex\n")
    log.info("exported %s from %s", counts, root)
    return counts
