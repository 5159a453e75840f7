"""Helpers the window tests share: the sample game's frames and truth records, and a live
window driven frame by frame.

(Not a conftest.py: several test folders have one, and helpers imported from them would
shadow each other as ``conftest``.)
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import cv2  # noqa: E402
import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_images" / "zarcana"
ARTIFACTS = Path(__file__).resolve().parent / "_artifacts"

#: What a pipeline reports of a card / pyramid (the spec's fields plus the pixel positions
#: vision.pipeline adds); everything else in a truth record is the renderer's knowledge.
CARD_KEYS = ("id", "center_mm", "angle_deg", "confidence", "corners_px")
PYRAMID_KEYS = ("color", "pips", "upright", "pointing_deg", "base_center_mm", "confidence",
                "base_center_px")


def script() -> dict[str, Any]:
    return json.loads((SAMPLE / "game.json").read_text(encoding="utf-8"))


def truth(k: int, *, pixels: bool = True) -> dict[str, Any]:
    """Frame ``k``'s truth reduced to an observation record (``pixels``: keep the pixel
    positions, as vision.pipeline's records have them)."""
    data = json.loads((SAMPLE / f"{k:04d}.json").read_text(encoding="utf-8"))
    ck = CARD_KEYS if pixels else CARD_KEYS[:4]
    pk = PYRAMID_KEYS if pixels else PYRAMID_KEYS[:6]
    return {"image": f"{k:04d}.jpg", "calibrated": data["calibrated"],
            "hands": data.get("hands", False), "trustworthy": data.get("trustworthy", True),
            "cards": [{f: c[f] for f in ck if f in c} for c in data["cards"]],
            "pyramids": [{f: p[f] for f in pk if f in p} for p in data["pyramids"]]}


def frame(k: int) -> np.ndarray:
    image = cv2.imread(str(SAMPLE / f"{k:04d}.jpg"), cv2.IMREAD_COLOR)
    assert image is not None, f"sample frame {k} is missing"
    return image


def new_session(recorder: Any = None) -> Any:
    from calibration.mat import load_mat
    from companion.live.session import LiveSession

    s = script()
    return LiveSession(s["game"], edition=s["edition"], players=s["players"],
                       settings=s["settings"], seed=s["seed"], recorder=recorder,
                       mat=load_mat(SAMPLE / "mat.json"))


@dataclass
class LiveWindow:
    """A live window on a real session, fed by the test instead of a camera."""

    window: Any
    controller: Any
    session: Any

    def feed(self, k: int, record: Mapping[str, Any] | None = None) -> None:
        """Show frame ``k`` and judge its record (off the window thread, as in the app)."""
        rec = dict(record) if record is not None else truth(k)
        self.controller.post_frame(frame(k), k, f"{k:04d}.jpg", rec)
        s = self.session
        self.controller.commands.submit(f"frame {k}", lambda: s.observe(rec, frame=k))
        assert self.controller.wait_idle(30.0), "the session did not answer"

    def feed_until(self, last: int, *, clicks: Mapping[int, str] | None = None) -> None:
        """Frames 0..last of the sample game, with the user's clicks before the frames
        that need them (moves the camera cannot see)."""
        clicks = dict(clicks or {8: "blue: draw 3"})
        for k in range(last + 1):
            if k in clicks:
                self.controller.manual(clicks[k])
                assert self.controller.wait_idle(30.0)
            self.feed(k)


def open_live(qtbot: Any, recorder: Any = None) -> LiveWindow:
    from calibration.mat import load_mat
    from companion.ui.controllers import LiveController
    from companion.ui.views import MainWindow

    session = new_session(recorder)
    window = MainWindow("test")
    qtbot.addWidget(window)
    controller = LiveController(window, session, mat=load_mat(SAMPLE / "mat.json"),
                                display_fps=0)
    window.resize(1400, 820)
    window.show()
    qtbot.waitExposed(window)
    return LiveWindow(window, controller, session)


def record_bot_game(path: Path, *, seed: int = 4, moves: int = 12, keyframes: bool = True,
                    finish: bool = False) -> list[str]:
    """Record the first ``moves`` moves of a seeded bot game the way the companion does,
    each with a seeded synthetic keyframe (a coloured square per move); returns the moves."""
    import random

    from companion.commands.play import choose_bot_move
    from companion.games.zarcana.engine import dumps, new_game
    from companion.recording.store import GameRecorder

    start = new_game(["red", "blue", "green"], edition="looney", seed=seed)
    rng = random.Random(f"zarcana-bots:{seed}")
    pixels = np.random.default_rng(seed)
    st = start
    done: list[str] = []
    with GameRecorder.create(path, game="zarcana", edition="looney",
                             players=["red", "blue", "green"],
                             settings=start.settings.to_dict(), seed=seed,
                             initial_state=dumps(start)) as rec:
        for k in range(moves):
            if st.is_over:
                break
            st = st.apply(choose_bot_move(st, rng))
            done.append(st.history[-1])
            jpeg = None
            if keyframes:
                img = np.full((240, 320, 3), 40, np.uint8)
                colour = tuple(int(v) for v in pixels.integers(60, 255, 3))
                cv2.rectangle(img, (20 + 10 * k, 20), (120 + 10 * k, 120), colour, -1)
                ok, buf = cv2.imencode(".jpg", img)
                assert ok
                jpeg = buf.tobytes()
            rec.record("move", st.history[-1], state=dumps(st), keyframe_jpeg=jpeg)
        if finish:
            rec.finish({c.value: v for c, v in st.scores().items()},
                       [c.value for c in st.winners()])
    return done
