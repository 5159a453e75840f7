"""Shared helpers of the live tests: the sample game's records and made-up observations
(:func:`make_record`, from tests/table_records.py, which the window tests share)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from table_records import MAT, make_record

from companion.commands.demo import truth_record

if TYPE_CHECKING:
    import numpy as np

    from companion.live.session import LiveSession

SAMPLES = Path(__file__).resolve().parent.parent.parent / "sample_images" / "zarcana"
SCRIPT: dict[str, Any] = json.loads((SAMPLES / "game.json").read_text())

__all__ = ["MAT", "SAMPLES", "SCRIPT", "make_record", "play_sample", "sample_record",
           "sample_session", "scripted_clicks", "scripted_moves", "small_image"]


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
