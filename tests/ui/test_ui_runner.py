"""The window on the live loop (capture -> settle -> observer -> session in a thread)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from ui_support import SAMPLE, new_session, truth

from companion.live.session import EventKind


def make_runner(session: Any, files: list[Path]) -> Any:
    from companion.live.capture import FolderSource
    from companion.live.runner import LiveRunner

    def observer(image: Any, name: str) -> dict[str, Any]:
        return truth(int(Path(name).stem))

    return LiveRunner(FolderSource(files=files), session, observer)


def test_the_runner_feeds_the_window_and_a_skipped_file_is_said(qtbot: Any,
                                                                tmp_path: Path) -> None:
    from calibration.mat import load_mat
    from companion.ui.app import open_live_window

    bad = tmp_path / "0099.jpg"
    bad.write_bytes(b"\xff\xd8 not really a jpeg")
    files = [SAMPLE / f"{k:04d}.jpg" for k in range(5)] + [bad] + [
        SAMPLE / f"{k:04d}.jpg" for k in range(5, 8)]
    session = new_session()
    runner = make_runner(session, files)
    window, ctl = open_live_window(session, runner, mat=load_mat(SAMPLE / "mat.json"),
                                   start=False)
    qtbot.addWidget(window)
    said: list[str] = []
    session.subscribe(lambda e: said.append(e.kind.value)
                      if e.kind in (EventKind.CAMERA_LOST, EventKind.CAMERA_BACK,
                                    EventKind.FRAME_SKIPPED) else None)
    with qtbot.waitSignal(ctl.feed_ended, timeout=60000):
        ctl.start()
    qtbot.waitUntil(lambda: len(window.log.moves()) == 7, timeout=5000)
    assert window.log.moves()[-1] == "red: reorient red1U@0,2>W"
    # one file of the folder unreadable: that frame is skipped, the camera is not lost
    assert said == ["frame_skipped"]
    skipped = [e for e in ctl.events if e.kind is EventKind.FRAME_SKIPPED]
    assert len(skipped) == 1 and "0099.jpg" in skipped[0].text
    assert window.video.message() is None
    assert window.video.frame() is not None and window.video.frame().width() == 1600
    assert "card" in window.video.overlay().roles()
    assert "the frame source has ended" in window.statusBar().currentMessage()
    ctl.stop()


def paused_on_the_first_frame(qtbot: Any) -> tuple[Any, Any, Any]:
    """(session, window, controller) of a folder of three sample frames started paused,
    after long enough for the first frame to wait in the pause."""
    from companion.ui.app import open_live_window

    session = new_session()
    runner = make_runner(session, [SAMPLE / f"{k:04d}.jpg" for k in range(3)])
    window, ctl = open_live_window(session, runner, start=False)
    qtbot.addWidget(window)
    ctl.set_paused(True)
    ctl.start()
    t0 = time.monotonic()
    while time.monotonic() - t0 < 0.8:
        QApplication.processEvents()
        time.sleep(0.02)
    return session, window, ctl


def test_pause_holds_a_folder_until_resumed(qtbot: Any) -> None:
    session, window, ctl = paused_on_the_first_frame(qtbot)
    assert session.state is None and window.log.moves() == []   # nothing judged
    with qtbot.waitSignal(ctl.feed_ended, timeout=30000):
        ctl.set_paused(False)
    qtbot.waitUntil(lambda: len(window.log.moves()) == 2, timeout=5000)
    ctl.stop()


def test_resuming_asks_for_the_still_table_to_be_judged_again(qtbot: Any) -> None:
    """(With a camera, a table that settled while paused was refused; nothing moving after
    it, it would never be judged.)"""
    from companion.ui.app import open_live_window

    session = new_session()
    runner = make_runner(session, [SAMPLE / "0000.jpg"])
    asked: list[str] = []
    runner.detector.retry = lambda: asked.append("retry")  # type: ignore[method-assign]
    window, ctl = open_live_window(session, runner, start=False)
    qtbot.addWidget(window)
    ctl.set_paused(True)
    assert asked == []
    ctl.set_paused(False)
    assert asked == ["retry"]
    ctl.stop()


def test_closing_while_paused_does_not_judge_the_paused_frame(qtbot: Any) -> None:
    """(Closing lets the pause's wait go; the frame held there was then judged on the way
    out, against the pause.)"""
    session, _window, ctl = paused_on_the_first_frame(qtbot)
    ctl.stop()
    assert ctl._runner_thread is not None and not ctl._runner_thread.is_alive()
    assert session.state is None and session.history == []


def test_run_live_shows_the_window_until_it_is_closed(qtbot: Any) -> None:
    from companion.ui import run_live

    session = new_session()
    runner = make_runner(session, [SAMPLE / f"{k:04d}.jpg" for k in range(3)])
    app = QApplication.instance()
    deadline = time.monotonic() + 30.0

    def close_when_done() -> None:
        if len(session.history) < 2 and time.monotonic() < deadline:
            QTimer.singleShot(50, close_when_done)
            return
        for w in app.topLevelWidgets():
            if w.isVisible() and w.windowTitle().startswith("Arcana Table Companion"):
                w.close()
        app.quit()

    # closing the last window would post a quit that ends the next test's event loops
    app.setQuitOnLastWindowClosed(False)
    try:
        QTimer.singleShot(50, close_when_done)
        assert run_live(runner) == 0
    finally:
        app.setQuitOnLastWindowClosed(True)
    assert [h.move for h in session.history] == ["red: start 0,2", "blue: start 2,2"]
