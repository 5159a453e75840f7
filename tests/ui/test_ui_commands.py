"""The window's command thread: a move clicked just before the window closes is still made
(and so recorded) before the session is closed."""

from __future__ import annotations

import threading
import time
from typing import Any

from companion.ui.controllers import CommandRunner


def test_closing_waits_for_the_clicked_commands(qapp: Any) -> None:
    runner = CommandRunner()
    made: list[str] = []
    started = threading.Event()

    def slow_move(name: str) -> str:
        started.set()
        time.sleep(0.3)
        made.append(name)
        return name

    runner.submit("move", slow_move, "first")
    runner.submit("move", slow_move, "second")     # queued behind the first
    assert started.wait(5)
    assert runner.shutdown(timeout_s=5.0)
    assert made == ["first", "second"]
    assert not runner.busy()


def test_a_click_after_closing_is_refused_with_a_message(qapp: Any) -> None:
    runner = CommandRunner()
    said: list[str] = []
    runner.failed.connect(said.append)
    assert runner.shutdown()
    fut = runner.submit("move red: pass", lambda: "made")
    assert fut.result(1) is None
    assert said == ["move red: pass: not done, the window is closing"]


def test_a_command_that_hangs_does_not_hold_the_closing_window(qapp: Any) -> None:
    runner = CommandRunner()
    release = threading.Event()
    runner.submit("move", release.wait, 10)
    queued = runner.submit("move", lambda: "made")
    t0 = time.monotonic()
    assert not runner.shutdown(timeout_s=0.2)
    assert time.monotonic() - t0 < 2
    release.set()
    # the one queued behind it is dropped: it would have run after the session closed
    assert queued.cancelled()
