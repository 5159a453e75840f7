"""A screenshot of the real main window on the sample game: video, overlay and scores drawn.

With an ``Xvfb`` binary (Debian's ``xvfb``, which ``.ci/run`` installs where it can) the
window runs on a real X server in a child process and the screenshot is read back from that
screen; without one it is rendered on Qt's offscreen platform and grabbed. The screenshots
are kept in ``tests/ui/_artifacts/`` for a person to look at.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from ui_support import ARTIFACTS, ROOT

HERE = Path(__file__).resolve().parent


def under_xvfb(out: Path) -> dict[str, Any]:
    xvfb = shutil.which("Xvfb")
    assert xvfb is not None
    # -displayfd: the server picks a free display and writes its number when it is ready
    read_fd, write_fd = os.pipe()
    server = subprocess.Popen([xvfb, "-displayfd", str(write_fd), "-screen", "0",
                               "1600x1000x24", "-nolisten", "tcp"], pass_fds=(write_fd,),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write_fd)
    try:
        with os.fdopen(read_fd) as ready:
            number = ready.readline().strip()
        assert number.isdigit(), f"Xvfb did not start (exit {server.poll()})"
        display = f":{number}"
        env = dict(os.environ, DISPLAY=display, QT_QPA_PLATFORM="xcb",
                   PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
        proc = subprocess.run([sys.executable, str(HERE / "screenshot_app.py"), str(out)],
                              env=env, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr[-3000:]
        result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
        assert result["platform"] == "xcb", result["platform"]
        return result
    finally:
        server.terminate()
        server.wait(10)


def test_the_window_draws_video_overlay_and_scores(qapp: Any) -> None:
    out = ARTIFACTS / "window.png"
    if out.exists():
        out.unlink()
    if shutil.which("Xvfb"):
        result = under_xvfb(out)
    else:
        from screenshot_app import render

        result = render(out)
    twin = out.with_name("window-illegal.png")
    for shot, r in ((out, result), (twin, result["illegal"])):
        assert shot.is_file() and shot.stat().st_size > 50_000
        # the video shows the frame's own pixels where nothing is drawn over it
        for p in r["patches"]:
            diff = max(abs(a - b) for a, b in zip(p["frame"], p["shot"]))
            assert diff < 30, p
        # the overlay's card outline (magenta) lies along the card's edges, not in the frame
        o = r["outline"]
        assert o["shot"] >= 0.6 * o["samples"] and o["frame"] == 0, o
        assert {"card", "card-label", "pyramid", "lattice"} <= set(r["roles"])
        assert r["tree_colours"] > 5          # the score tree has text drawn in it
        assert r["scores"] == "red 9, blue 11, green 2"
        assert r["headline"].startswith("Turn 11, round 4: blue to move")
    # blue's pyramid is selected: its legal moves are drawn on the table
    assert {"pyramid-selected", "move-grow", "move-turn"} <= set(result["roles"])
    assert "blue's legal moves" in result["selection"]
    # the next frame shows blue's illegal move: red cells and the rule
    bad = result["illegal"]
    assert "illegal" in bad["roles"] and "illegal-label" in bad["roles"]
    assert "wands.upright" in bad["alert"]
