"""Made-up observation records of a lattice layout on the sample game's mat, as a
pipeline reports them: the live tests and the window tests build their pictures with
:func:`make_record` (a module of its own name: every test folder has a ``conftest``, so
``from conftest import`` could pick another folder's)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from calibration.mat import load_mat
from companion.core.pieces import Cell, Pyramid

#: the sample game's mat, whose zones the records' discard pile and draw pile lie in
MAT = load_mat(Path(__file__).resolve().parent.parent / "sample_images" / "zarcana" / "mat.json")


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
