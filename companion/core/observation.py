"""The observation record of shared/spec/table.md: what the camera saw in one image.

Pure Python (no OpenCV, no numpy), so the rules side, the renderer's ground truth and the
vision pipeline all share one definition::

    {"image": "sample_images/zarcana/0001.jpg", "calibrated": true,
     "cards": [{"id": "swords-07", "center_mm": [412.0, 305.5], "angle_deg": 90.0,
                "confidence": 0.98}],
     "pyramids": [{"color": "red", "pips": 2, "upright": false, "pointing_deg": 180.0,
                   "base_center_mm": [430.1, 298.0], "confidence": 0.95}]}

Angles are degrees of the table frame (0 = east, 90 = south). ``angle_deg`` of a card points
from its centre toward the top edge of its art; ``pointing_deg`` of a pyramid from its base
toward its apex (``None`` when upright); ``base_center_mm`` is the centre of the square base
when upright, the centroid of the triangular face it lies on when lying.

Fields beyond the contract are kept in ``extra`` and written back unchanged, so a ground-truth
record (image-space geometry, camera, lattice cells) round-trips through these classes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from companion.core.errors import CompanionError
from companion.core.numbers import finite_number

COLORS: tuple[str, ...] = ("red", "orange", "yellow", "green", "blue", "purple", "cyan",
                           "black", "white", "clear")


class ObservationError(CompanionError, ValueError):
    """An observation record with a missing or bad field; the message names the field."""


def _need(d: dict[str, Any], key: str, where: str) -> Any:
    if key not in d:
        raise ObservationError(f"{where}: missing field {key!r}")
    return d[key]


def _point(v: Any, where: str) -> tuple[float, float]:
    if not isinstance(v, (list, tuple)) or len(v) != 2 or not all(finite_number(x) for x in v):
        raise ObservationError(f"{where}: expected [x, y] in mm, got {v!r}")
    return (float(v[0]), float(v[1]))


def _angle(v: Any, where: str) -> float:
    if not finite_number(v):
        raise ObservationError(f"{where}: expected an angle in degrees, got {v!r}")
    return float(v) % 360.0


def _confidence(v: Any, where: str) -> float:
    if not finite_number(v) or not 0.0 <= float(v) <= 1.0:
        raise ObservationError(f"{where}: expected a confidence in [0, 1], got {v!r}")
    return float(v)


def _r(v: float, nd: int = 3) -> float:
    return round(float(v), nd) + 0.0  # + 0.0 turns -0.0 into 0.0


def record_deg(v: float, nd: int = 3, period: float = 360.0) -> float:
    """An angle as a record writes it: ``nd`` decimals, in [0, ``period``) (180 for a
    line's direction, a card alike both ways up). Rounding after the wrap would write
    359.96 as 360.0, which a reader that buckets angles in [0, 360) trips over; so round,
    then wrap again."""
    return round(float(v) % period, nd) % period + 0.0


@dataclass
class CardSighting:
    id: str
    center_mm: tuple[float, float]
    angle_deg: float
    confidence: float = 1.0
    extra: dict[str, Any] = field(default_factory=dict)

    _KEYS = ("id", "center_mm", "angle_deg", "confidence")

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "id": self.id,
            "center_mm": [_r(self.center_mm[0]), _r(self.center_mm[1])],
            "angle_deg": record_deg(self.angle_deg),
            "confidence": _r(self.confidence, 4),
        }
        d.update(self.extra)
        return d

    @classmethod
    def from_dict(cls, d: Any, where: str = "card") -> "CardSighting":
        if not isinstance(d, dict):
            raise ObservationError(f"{where}: expected an object, got {d!r}")
        cid = _need(d, "id", where)
        if not isinstance(cid, str) or not cid:
            raise ObservationError(f"{where}.id: expected a card id string, got {cid!r}")
        return cls(
            id=cid,
            center_mm=_point(_need(d, "center_mm", where), f"{where}.center_mm"),
            angle_deg=_angle(_need(d, "angle_deg", where), f"{where}.angle_deg"),
            confidence=_confidence(_need(d, "confidence", where), f"{where}.confidence"),
            extra={k: v for k, v in d.items() if k not in cls._KEYS},
        )


@dataclass
class PyramidSighting:
    color: str
    pips: int
    upright: bool
    pointing_deg: float | None
    base_center_mm: tuple[float, float]
    confidence: float = 1.0
    extra: dict[str, Any] = field(default_factory=dict)

    _KEYS = ("color", "pips", "upright", "pointing_deg", "base_center_mm", "confidence")

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "color": self.color,
            "pips": self.pips,
            "upright": self.upright,
            "pointing_deg": None if self.pointing_deg is None else record_deg(self.pointing_deg),
            "base_center_mm": [_r(self.base_center_mm[0]), _r(self.base_center_mm[1])],
            "confidence": _r(self.confidence, 4),
        }
        d.update(self.extra)
        return d

    @classmethod
    def from_dict(cls, d: Any, where: str = "pyramid") -> "PyramidSighting":
        if not isinstance(d, dict):
            raise ObservationError(f"{where}: expected an object, got {d!r}")
        color = _need(d, "color", where)
        if color not in COLORS:
            raise ObservationError(f"{where}.color: {color!r} is not one of {', '.join(COLORS)}")
        pips = _need(d, "pips", where)
        if pips not in (1, 2, 3) or isinstance(pips, bool):
            raise ObservationError(f"{where}.pips: expected 1, 2 or 3, got {pips!r}")
        upright = _need(d, "upright", where)
        if not isinstance(upright, bool):
            raise ObservationError(f"{where}.upright: expected true or false, got {upright!r}")
        pointing = _need(d, "pointing_deg", where)
        if upright:
            if pointing is not None:
                raise ObservationError(f"{where}.pointing_deg: must be null for an upright "
                                       f"pyramid, got {pointing!r}")
            pdeg = None
        else:
            if pointing is None:
                raise ObservationError(f"{where}.pointing_deg: a lying pyramid needs a "
                                       "pointing angle")
            pdeg = _angle(pointing, f"{where}.pointing_deg")
        return cls(
            color=color, pips=int(pips), upright=upright, pointing_deg=pdeg,
            base_center_mm=_point(_need(d, "base_center_mm", where), f"{where}.base_center_mm"),
            confidence=_confidence(_need(d, "confidence", where), f"{where}.confidence"),
            extra={k: v for k, v in d.items() if k not in cls._KEYS},
        )


@dataclass
class Observation:
    image: str
    calibrated: bool
    cards: list[CardSighting] = field(default_factory=list)
    pyramids: list[PyramidSighting] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    _KEYS = ("image", "calibrated", "cards", "pyramids")

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "image": self.image,
            "calibrated": self.calibrated,
            "cards": [c.to_dict() for c in self.cards],
            "pyramids": [p.to_dict() for p in self.pyramids],
        }
        d.update(self.extra)
        return d

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps(self.to_dict(), indent=indent, sort_keys=False)

    @classmethod
    def from_dict(cls, d: Any, where: str = "observation") -> "Observation":
        if not isinstance(d, dict):
            raise ObservationError(f"{where}: expected a JSON object, got {type(d).__name__}")
        image = _need(d, "image", where)
        if not isinstance(image, str):
            raise ObservationError(f"{where}.image: expected a path string, got {image!r}")
        calibrated = _need(d, "calibrated", where)
        if not isinstance(calibrated, bool):
            raise ObservationError(f"{where}.calibrated: expected true or false, "
                                   f"got {calibrated!r}")
        cards_raw = _need(d, "cards", where)
        pyr_raw = _need(d, "pyramids", where)
        if not isinstance(cards_raw, list):
            raise ObservationError(f"{where}.cards: expected a list")
        if not isinstance(pyr_raw, list):
            raise ObservationError(f"{where}.pyramids: expected a list")
        return cls(
            image=image, calibrated=calibrated,
            cards=[CardSighting.from_dict(c, f"{where}.cards[{i}]")
                   for i, c in enumerate(cards_raw)],
            pyramids=[PyramidSighting.from_dict(p, f"{where}.pyramids[{i}]")
                      for i, p in enumerate(pyr_raw)],
            extra={k: v for k, v in d.items() if k not in cls._KEYS},
        )

    @classmethod
    def from_json(cls, text: str, where: str = "observation") -> "Observation":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ObservationError(f"{where}: not valid JSON: {exc}") from None
        return cls.from_dict(data, where)
