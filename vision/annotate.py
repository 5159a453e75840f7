"""Draw an observation record on its image, for a person to check what the pipeline saw.

Cards: outline (green when the gallery was sure of the id, orange when it only guessed),
the id, and an arrow from the centre toward the top of the art. Pyramids: a ring at the
base in the pyramid's colour, colour and pips, and for a lying one an arrow toward the apex.
A banner says whether the table was calibrated (and from which markers) or why not;
:func:`verdict_bar` adds a verdict along the bottom (the demo's frames: the referee's word).

Card outlines come from the record's ``corners_px``; pyramid marks need table mm mapped to
pixels, which ``to_px`` does (the pipeline's :meth:`~vision.pipeline.TablePipeline.to_px`);
without it only ``base_center_px`` is drawn and the pointing arrows are left out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Callable

import cv2
import numpy as np

#: BGR of the spec's pyramid colours, for the marks (clear drawn as light grey).
COLOR_BGR: dict[str, tuple[int, int, int]] = {
    "red": (40, 40, 230), "orange": (0, 140, 255), "yellow": (0, 230, 255),
    "green": (60, 200, 60), "blue": (230, 110, 30), "purple": (200, 60, 150),
    "cyan": (230, 220, 0), "black": (30, 30, 30), "white": (250, 250, 250),
    "clear": (200, 200, 200),
}
SURE = (80, 220, 80)
UNSURE = (0, 150, 255)
BAD = (40, 40, 230)

ToPx = Callable[[np.ndarray], np.ndarray]


def _text(img: np.ndarray, text: str, org: tuple[int, int], scale: float,
          color: tuple[int, int, int], center: bool = False) -> None:
    """Text with a dark outline, readable on any card art."""
    font = cv2.FONT_HERSHEY_SIMPLEX
    th = max(1, int(round(scale * 2)))
    (tw, tht), _ = cv2.getTextSize(text, font, scale, th)
    x, y = org
    if center:
        x, y = int(x - tw / 2), int(y + tht / 2)
    # the outline is the text itself shifted around, at the same thickness: a thicker stroke
    # spaces OpenCV's glyphs differently (at thickness 1 against 2 and more), and the outline
    # then runs out of step with the text
    d = max(1, th)
    for dx, dy in ((-d, 0), (d, 0), (0, -d), (0, d), (-d, -d), (d, d), (-d, d), (d, -d)):
        cv2.putText(img, text, (x + dx, y + dy), font, scale, (0, 0, 0), th, cv2.LINE_AA)
    cv2.putText(img, text, (x, y), font, scale, color, th, cv2.LINE_AA)


def _ipt(p: np.ndarray) -> tuple[int, int]:
    return int(round(float(p[0]))), int(round(float(p[1])))


def annotate(image: np.ndarray, record: Mapping[str, Any], to_px: ToPx | None = None
             ) -> np.ndarray:
    """A copy of ``image`` (BGR) with ``record`` drawn on it."""
    out = image.copy() if image.ndim == 3 else cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    h, w = out.shape[:2]
    scale = max(0.35, min(w, h) / 1800.0)
    lw = max(1, int(round(min(w, h) / 500.0)))

    for card in record.get("cards", []):
        corners = np.asarray(card.get("corners_px", []), np.float64).reshape(-1, 2)
        if len(corners) != 4:
            # a record without the card's outline (a truth record): its id at its centre
            if to_px is not None and "center_mm" in card:
                at = to_px(np.asarray(card["center_mm"], np.float64).reshape(1, 2))[0]
                _text(out, str(card.get("id", "?")), _ipt(at), scale, (255, 255, 255),
                      center=True)
            continue
        color = SURE if card.get("identified", True) else UNSURE
        cv2.polylines(out, [np.round(corners).astype(np.int32)], True, color, lw, cv2.LINE_AA)
        c = corners.mean(axis=0)
        if card.get("face_up", card.get("id") != "back"):
            top = (corners[0] + corners[1]) / 2   # corners are TL, TR, BR, BL of the art
            tip = c + (top - c) * 0.8
            cv2.arrowedLine(out, _ipt(c), _ipt(tip), color, lw, cv2.LINE_AA, tipLength=0.2)
        # the id in the lower half of the card, clear of its arrow and of pyramids standing
        # in its middle (the lattice's usual place for them)
        bottom = (corners[2] + corners[3]) / 2
        _text(out, str(card.get("id", "?")), _ipt(c + (bottom - c) * 0.55), scale,
              (255, 255, 255), center=True)

    for pyr in record.get("pyramids", []):
        color = COLOR_BGR.get(str(pyr.get("color")), (255, 0, 255))
        base_mm = np.asarray(pyr.get("base_center_mm", [0, 0]), np.float64)
        if "base_center_px" in pyr:
            base = np.asarray(pyr["base_center_px"], np.float64)
        elif to_px is not None:
            base = to_px(base_mm.reshape(1, 2))[0]
        else:
            continue
        r = 7 * scale * 2 + 2 * int(pyr.get("pips", 1))
        cv2.circle(out, _ipt(base), int(round(r)), (0, 0, 0), lw + 2, cv2.LINE_AA)
        cv2.circle(out, _ipt(base), int(round(r)), color, lw, cv2.LINE_AA)
        label = f"{pyr.get('color')}{pyr.get('pips')}"
        if pyr.get("upright"):
            label += " up"
        elif pyr.get("pointing_deg") is not None and to_px is not None:
            a = math.radians(float(pyr["pointing_deg"]))
            tip_mm = base_mm + 25.0 * np.array([math.cos(a), math.sin(a)])
            tip = to_px(np.vstack([base_mm, tip_mm]))
            cv2.arrowedLine(out, _ipt(tip[0]), _ipt(tip[1]), (0, 0, 0), lw + 2, cv2.LINE_AA,
                            tipLength=0.3)
            cv2.arrowedLine(out, _ipt(tip[0]), _ipt(tip[1]), color, lw, cv2.LINE_AA,
                            tipLength=0.3)
        _text(out, label, _ipt(base + np.array([r + 3, -r])), scale * 0.9, color)

    if record.get("calibrated"):
        cal = record.get("calibration", {})
        seen = ",".join(str(m) for m in cal.get("markers_seen", []))
        banner = f"calibrated: markers {seen}"
        if cal.get("markers_assumed"):
            banner += " (+" + ",".join(str(m) for m in cal["markers_assumed"]) + " remembered)"
        if cal.get("reprojection_mm") is not None:
            banner += f", {cal['reprojection_mm']:.1f} mm"
        banner += f"; {len(record.get('cards', []))} cards, " \
                  f"{len(record.get('pyramids', []))} pyramids"
        bcolor = SURE
        if record.get("blurred"):
            # the pyramids of a blurred frame are missed and misread most: say why in colour
            banner += f"; BLURRED ({cal.get('edge_blur_px', '?')} px)"
            bcolor = UNSURE
    else:
        banner = "NOT calibrated: " + str(record.get("reason", "no table found"))
        bcolor = BAD
    _text(out, banner, (int(10 * scale + 4), int(40 * scale + 8)), scale * 1.2, bcolor)
    return out


def verdict_bar(image: np.ndarray, text: str, bad: bool = False) -> np.ndarray:
    """``image`` (BGR, changed in place and returned) with ``text`` in a dark bar along its
    bottom edge, wrapped at spaces to the image's width (at most three lines, the last cut
    with "..."): red for ``bad`` (an illegal move, a question to the players), else green."""
    h, w = image.shape[:2]
    font = cv2.FONT_HERSHEY_SIMPLEX
    scale = max(0.45, min(w, h) / 1500.0)
    th = max(1, int(round(scale * 2)))
    lines = _wrapped(text, font, scale, th, w - 20)
    (_, line_h), base = cv2.getTextSize("Ag", font, scale, th)
    step = line_h + base + int(6 * scale)
    top = h - step * len(lines) - int(12 * scale)
    cv2.rectangle(image, (0, top), (w, h), (30, 30, 30), -1)
    color = (80, 80, 255) if bad else (120, 255, 120)
    for k, line in enumerate(lines):
        y = top + int(6 * scale) + line_h + k * step
        cv2.putText(image, line, (10, y), font, scale, color, th, cv2.LINE_AA)
    return image


def _wrapped(text: str, font: int, scale: float, th: int, width: int, most: int = 3
             ) -> list[str]:
    """``text`` in lines no wider than ``width`` px, broken at spaces; at most ``most``."""
    lines: list[str] = []
    for word in text.split():
        if lines and cv2.getTextSize(lines[-1] + " " + word, font, scale, th)[0][0] <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    if len(lines) > most:
        lines = lines[:most]
        lines[-1] += " ..."
    return lines or [""]
