"""Shared helpers of the live tests: the sample game's records and made-up observations."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from calibration.mat import load_mat
from companion.commands.demo import truth_record
from companion.core.pieces import Cell, Pyramid

if TYPE_CHECKING:
    import numpy as np

    from companion.live.session import LiveSession

SAMPLES = Path(__file__).resolve().parent.parent.parent / "sample_images" / "zarcana"
SCRIPT: dict[str, Any] = json.loads((SAMPLES / "game.json").read_text())
MAT = load_mat(SAMPLES / "mat.json")


def small_image(value: int) -> "np.ndarray":
    """A tiny picture of one grey with a patch of its opposite (a frame of a test source)."""
    import numpy as np

    img = np.full((48, 64, 3), value, np.uint8)
    img[10:20, 10:30] = 255 - value
    return img


def sample_record(name: str | int) -> dict[str, Any]:
    """A sample frame's truth reduced to the observation record (as the demo reads it)."""
    stem = f"{name:04d}" if isinstance(name, int) else name
    return truth_record(SAMPLES / f"{stem}.jpg")


def sample_session(**kw: Any) -> "LiveSession":
    """A live session of the sample game's players, edition and settings (on its mat unless
    ``mat`` is given)."""
    from companion.live.session import LiveSession

    kw.setdefault("mat", MAT)
    return LiveSession("zarcana", edition=SCRIPT["edition"], players=SCRIPT["players"],
                       settings=SCRIPT["settings"], **kw)


def scripted_clicks() -> dict[int, str]:
    """Move number -> the move the camera cannot see (the user's click)."""
    return {k: e["move"] for k, e in enumerate(SCRIPT["moves"], start=1)
            if e.get("visible") is False}


def play_sample(session: "LiveSession", frames: "Iterable[int]") -> "LiveSession":
    """``session`` shown the sample game's pictures ``frames``, each move the camera cannot
    see clicked before its picture, as the players did."""
    clicks = scripted_clicks()
    for k in frames:
        if k in clicks:
            session.manual(clicks[k])
        session.observe(sample_record(k), frame=k)
    return session


def scripted_moves() -> list[str]:
    return [e["move"] for e in SCRIPT["moves"] if "illegal" not in e]


def make_record(cards: Mapping[Cell, str], pyramids: Mapping[Cell, Sequence[Pyramid]] = {},
                *, origin: tuple[float, float] = (300.0, 200.0), pitch: float = 95.0,
                rotation: float = 0.0, discard: Sequence[str] = (), draw: int = 1,
                extra_cards: Sequence[dict[str, Any]] = (), jitter: float = 0.0,
                seed: int = 0, **flags: Any) -> dict[str, Any]:
    """An observation record of a lattice layout (chequerboard, (i + j) even portrait).

    ``discard``: ids on the discard pile, bottom to top, all visible (offset a little).
    """
    import random

    rng = random.Random(seed)
    c, s = math.cos(math.radians(rotation)), math.sin(math.radians(rotation))

    def at(cell: Cell, du: float = 0.0, dv: float = 0.0) -> list[float]:
        u, v = cell[0] * pitch + du, cell[1] * pitch + dv
        return [origin[0] + u * c - v * s + rng.uniform(-jitter, jitter),
                origin[1] + u * s + v * c + rng.uniform(-jitter, jitter)]

    rec_cards = []
    for cell, cid in cards.items():
        angle = (270.0 if (cell[0] + cell[1]) % 2 == 0 else 0.0) + rotation
        rec_cards.append({"id": cid, "center_mm": at(cell), "angle_deg": angle % 360.0,
                          "confidence": 0.99})
    zones = MAT.zones
    dx0, dy0, dx1, dy1 = zones["discard"]
    for k, cid in enumerate(discard):
        rec_cards.append({"id": cid, "center_mm": [(dx0 + dx1) / 2 + 2 * k, (dy0 + dy1) / 2 + k],
                          "angle_deg": 270.0, "confidence": 0.97})
    x0, y0, x1, y1 = zones["draw"]
    for _ in range(draw):
        rec_cards.append({"id": "back", "center_mm": [(x0 + x1) / 2, (y0 + y1) / 2],
                          "angle_deg": 270.0, "confidence": 0.99})
    rec_cards += list(extra_cards)
    rec_pyr = []
    for cell, ps in pyramids.items():
        for k, p in enumerate(ps):
            off = (0.0, 0.0) if k == 0 else (18.0 * math.cos(k * 2.1), 18.0 * math.sin(k * 2.1))
            pdeg = p.pose.degrees
            rec_pyr.append({"color": p.color.value, "pips": p.size, "upright": p.pose.upright,
                            "pointing_deg": None if pdeg is None else (pdeg + rotation) % 360.0,
                            "base_center_mm": at(cell, *off), "confidence": 0.95})
    rec: dict[str, Any] = {"image": "made-up.jpg", "calibrated": True, "cards": rec_cards,
                           "pyramids": rec_pyr}
    rec.update(flags)
    return rec
