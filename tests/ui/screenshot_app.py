"""Render the real main window on the sample game, save a screenshot and say what is in it.

Run in the test process (offscreen platform) or, where an ``Xvfb`` binary exists, as
``python screenshot_app.py OUT.png`` in a child process on that X server; it prints one JSON
line with the checks' measurements.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from ui_support import SAMPLE, frame, new_session, truth  # noqa: E402


def _mean(img: Any, x: int, y: int, r: int) -> tuple[float, float, float]:
    """Mean RGB of a (2r+1)^2 patch of a QImage."""
    tot = [0.0, 0.0, 0.0]
    n = 0
    for yy in range(y - r, y + r + 1):
        for xx in range(x - r, x + r + 1):
            c = img.pixelColor(xx, yy)
            tot[0] += c.red()
            tot[1] += c.green()
            tot[2] += c.blue()
            n += 1
    return (tot[0] / n, tot[1] / n, tot[2] / n)


def render(out: Path) -> dict[str, Any]:
    """Play the sample game to frame 10 (blue to move), select blue's pyramid and grab the
    window to ``out``; then frame 11 (blue's illegal move) to ``out``'s ``-illegal`` twin.
    Returns the measurements of both."""
    from calibration.mat import load_mat
    from companion.ui.app import open_live_window

    session = new_session()
    window, ctl = open_live_window(session, None, mat=load_mat(SAMPLE / "mat.json"),
                                   start=False)
    window.resize(1400, 820)

    def feed(k: int) -> None:
        rec = truth(k)
        ctl.post_frame(frame(k), k, f"{k:04d}.jpg", rec)
        ctl.commands.submit("frame", lambda: session.observe(rec, frame=k))
        assert ctl.wait_idle(30.0)

    for k in range(11):
        if k == 8:
            ctl.manual("blue: draw 3")                    # a move the camera cannot see
            assert ctl.wait_idle(30.0)
        feed(k)
    hit = next(h for h in ctl.window.video.overlay().hits
               if h.what == "pyramid" and h.label.startswith("blue"))
    ctl.select(hit)                                       # its legal moves are drawn
    result = measure(window, out, frame(10), truth(10))
    ctl.select(None)
    feed(11)                                              # blue moves an upright pyramid
    twin = out.with_name(out.stem + "-illegal" + out.suffix)
    result["illegal"] = measure(window, twin, frame(11), truth(11))
    ctl.stop()
    window.close()
    return result


def screenshot(window: Any) -> Any:
    """The window's pixels. On a real display (xcb) they are read back from the screen, as
    the X server shows them, not re-rendered by the widgets; offscreen has no screen to
    read, so the widgets render themselves."""
    from PySide6.QtGui import QGuiApplication
    from PySide6.QtWidgets import QApplication

    window.repaint()
    if QGuiApplication.platformName() != "xcb":
        return window.grab()
    window.raise_()
    window.activateWindow()
    for _ in range(20):                       # let the X server draw what Qt sent it
        QApplication.processEvents()
    QApplication.sync()
    geo = window.geometry()                   # client area, in screen coordinates
    return window.screen().grabWindow(0, geo.x(), geo.y(), geo.width(), geo.height())


def measure(window: Any, out: Path, raw: Any, rec: dict[str, Any]) -> dict[str, Any]:
    """Take a screenshot of the window to ``out`` and measure what the checks need."""
    shot = screenshot(window)
    out.parent.mkdir(parents=True, exist_ok=True)
    shot.save(str(out))
    img = shot.toImage()
    dpr = shot.devicePixelRatio() or 1.0
    video = window.video

    def at(x: float, y: float) -> tuple[int, int]:
        p = video.mapTo(window, video.to_widget(x, y).toPoint())
        return int(p.x() * dpr), int(p.y() * dpr)

    # (a) the frame's pixels: patches near the shown region's corners (no overlay there)
    src = video.source_rect()
    patches = []
    for fx, fy in ((0.93, 0.93), (0.07, 0.93), (0.93, 0.07)):
        x = src.x() + fx * src.width()
        y = src.y() + fy * src.height()
        sx, sy = at(x, y)
        shot_rgb = _mean(img, sx, sy, 3)
        b, g, r = raw[int(y) - 3:int(y) + 4, int(x) - 3:int(x) + 4].reshape(-1, 3).mean(0)
        patches.append({"frame": [float(r), float(g), float(b)], "shot": list(shot_rgb)})
    # (b) the overlay's magenta outline along a card's edges, absent from the frame
    card = next(c for c in rec["cards"] if c["id"] == "swords-05")
    corners = card["corners_px"]
    on_shot = on_frame = total = 0
    for i in range(4):
        (x0, y0), (x1, y1) = corners[i], corners[(i + 1) % 4]
        for t in [k / 20.0 for k in range(2, 19)]:
            x, y = x0 + t * (x1 - x0), y0 + t * (y1 - y0)
            best = 0
            sx, sy = at(x, y)
            for dx in (-2, -1, 0, 1, 2):
                for dy in (-2, -1, 0, 1, 2):
                    c = img.pixelColor(sx + dx, sy + dy)
                    if c.red() > 200 and c.blue() > 200 and c.green() < 90:
                        best = 1
            on_shot += best
            b, g, r = (int(v) for v in raw[int(y), int(x)])
            on_frame += int(r > 200 and b > 200 and g < 90)
            total += 1
    # (c) the score panel
    tree = window.scores.tree
    origin = tree.mapTo(window, tree.rect().topLeft())
    tree_px = {img.pixel(int((origin.x() + x) * dpr), int((origin.y() + y) * dpr))
               for x in range(5, tree.width() - 5, 7) for y in range(5, tree.height() - 5, 7)}
    return {
        "patches": patches,
        "outline": {"shot": on_shot, "frame": on_frame, "samples": total},
        "scores": window.scores.score_text(),
        "headline": window.scores.headline.text(),
        "alert": window.alert.text() if window.alert.isVisible() else "",
        "selection": window.selection.text(),
        "tree_colours": len(tree_px),
        "roles": sorted(video.overlay().roles()),
        "size": [img.width(), img.height()],
        "platform": _platform(),
    }


def _platform() -> str:
    from PySide6.QtGui import QGuiApplication

    return QGuiApplication.platformName()


if __name__ == "__main__":
    from companion.ui.app import ensure_app

    ensure_app()
    print(json.dumps(render(Path(sys.argv[1]))))
