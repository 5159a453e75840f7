"""Opening the window: the live companion (:func:`run_live`, :func:`run_live_window`) and a
recorded game (:func:`run_replay`).

The ``run_*`` functions need a display, create the ``QApplication``, block until the window
is closed and return the exit code. The ``open_*`` functions build the window and its
controller without running the event loop (tests, or an application that has its own).
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from companion.core.errors import CompanionError

log = logging.getLogger(__name__)

#: Qt platforms that need no display server.
HEADLESS_PLATFORMS = ("offscreen", "minimal", "vnc", "eglfs", "linuxfb")


class NoDisplayError(CompanionError):
    """There is no screen to open the window on (the message says what to do instead)."""


#: What to do without a display, unless the caller says otherwise.
NO_DISPLAY_ADVICE = "run `companion demo --headless` for the sample game without a window"


def display_problem(instead: str = NO_DISPLAY_ADVICE) -> str | None:
    """Why a window cannot be opened here, or None when it can; ``instead``: what to
    suggest when there is no display."""
    platform = os.environ.get("QT_QPA_PLATFORM", "").split(":", 1)[0].strip().lower()
    if platform in HEADLESS_PLATFORMS:
        return None
    if sys.platform.startswith("linux") and not (
            os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        return ("there is no display (neither DISPLAY nor WAYLAND_DISPLAY is set): "
                f"{instead}, or start this under a desktop session or Xvfb")
    gone = unreachable_display() if platform in ("", "xcb") else None
    if gone is not None:
        return (f"the display DISPLAY={gone!r} cannot be reached (no X server answers there: "
                f"an ssh session's, or an Xvfb that has ended?): {instead}, or unset DISPLAY "
                "and start this under a desktop session or Xvfb")
    try:
        import PySide6  # noqa: F401
    except ImportError as exc:
        return f"the window needs PySide6, which cannot be imported ({exc})"
    return None


def unreachable_display() -> str | None:
    """The X display ``DISPLAY`` names, where nothing answers there (a stale ``ssh -X``
    session's, an Xvfb that has ended): Qt would abort the whole process on it, with a core
    dump, before a game file just made could be tidied away. None where it answers, and
    where Qt will not use it (not Linux, or a Wayland session)."""
    import re
    import socket

    display = os.environ.get("DISPLAY", "")
    if not display or not sys.platform.startswith("linux") or os.environ.get("WAYLAND_DISPLAY"):
        return None
    # as libxcb reads it: [protocol/][host]:number[.screen], the number after the last
    # colon (an IPv6 host has colons of its own, maybe in brackets)
    protocol, _, rest = display.rpartition("/")
    host, colon, number = rest.rpartition(":")
    m = re.fullmatch(r"(\d+)(\.\d+)?", number)
    if not colon or m is None:
        return None             # a form not known here: Qt may know it
    num = int(m[1])
    host = host.strip("[]")
    if protocol not in ("", "unix", "tcp", "inet", "inet6") or host.endswith(":"):
        return None             # (another transport, DECnet's double colon: Qt may know it)
    if protocol != "unix" and (protocol or host not in ("", "unix")):
        try:
            with socket.create_connection((host or "localhost", 6000 + num), timeout=1.0):
                return None
        except (OSError, OverflowError):
            return display
    path = f"/tmp/.X11-unix/X{num}"
    for address in (path, "\0" + path):       # the socket's file, or its abstract name
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(1.0)
            try:
                sock.connect(address)
                return None
            except OSError:
                continue
    return display


def ensure_app() -> Any:
    """The running ``QApplication``, created if there is none."""
    import companion.ui.qtcompat  # noqa: F401  (before any Qt call: see its notes)

    qtw = sys.modules.get("PySide6.QtWidgets")
    if qtw is not None and qtw.QApplication.instance() is not None:
        return qtw.QApplication.instance()
    problem = display_problem()
    if problem is not None:
        raise NoDisplayError(problem)
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if app is None:
        app = QApplication(sys.argv[:1])
        app.setApplicationName("Arcana Table Companion")
    return app


# ------------------------------------------------------------------------- live ---

def open_live_window(session: Any, runner: Any = None, *, mat: Any = None,
                     title: str | None = None, card_ids: Sequence[str] | None = None,
                     start: bool = True) -> tuple[Any, Any]:
    """Build the window and its :class:`~companion.ui.controllers.LiveController` for
    ``session`` (fed by ``runner``, a :class:`~companion.live.runner.LiveRunner`, started
    now unless ``start`` is False). Returns ``(window, controller)``; the window is shown."""
    app = ensure_app()
    from companion.ui.controllers import LiveController
    from companion.ui.views import MainWindow

    players = ", ".join(getattr(p, "value", str(p)) for p in getattr(session, "players", ()))
    window = MainWindow(title or f"Arcana Table Companion: Zarcana, {players}")
    controller = LiveController(window, session, runner=runner, mat=mat, card_ids=card_ids)
    app.aboutToQuit.connect(controller.stop)
    window.show()
    if start:
        controller.start()
    return window, controller


def run_live(runner: Any, *, mat: Any = None, title: str | None = None,
             card_ids: Sequence[str] | None = None, caught: list[int] | None = None) -> int:
    """Show the live window for a :class:`~companion.live.runner.LiveRunner` (its session,
    source and pipeline) and run it until the window is closed.

    The runner's own ``on_frame`` and ``before_observe`` hooks keep working (the window
    chains to them). ``mat``: the calibration mat, for the overlay when the pipeline gives
    no calibration of its own (default: the pipeline's mat, else the default mat).
    ``caught``: the signals :func:`hold_signals` took before the window (one there: the
    window is not run). Returns 128 + the signal's number where a signal closed the window
    (130 for Ctrl-C).
    """
    caught = [] if caught is None else caught
    app = ensure_app()
    window, controller = open_live_window(runner.session, runner, mat=mat, title=title,
                                          card_ids=card_ids)
    restore = _close_on_signals(window, caught)
    try:
        if not caught:      # (a Ctrl-C while the window was being made: not shown at all)
            app.exec()
    finally:
        restore()
        controller.stop()
    # closed by a signal: the run still ends as usual, and its exit code says so, as a
    # tool stopped by that signal (130 for Ctrl-C) would
    return 128 + caught[0] if caught else 0


def hold_signals(caught: list[int]) -> Callable[[], None]:
    """Until the window takes them over (:func:`run_live`), Ctrl-C or a polite kill is
    noted in ``caught``, not raised: raised while PySide6 was being imported it crashed the
    interpreter ("could not initialize part 2", an abort), and raised once the game file
    was made it left an empty game in the games folder. The run checks ``caught`` and ends
    as usual, its exit code saying which signal. Returns what puts the old handlers back."""
    def note(signum: int, _frame: Any) -> None:
        log.info("signal %d: the run ends once the window would open", signum)
        caught.append(signum)

    return _swap_handlers(note)


def _close_on_signals(window: Any, caught: list[int] | None = None) -> Callable[[], None]:
    """Ctrl-C, or a polite kill (SIGTERM; SIGHUP: the terminal closed), closes the window as
    its close button does, so the run ends as usual and says what it recorded; each signal
    is appended to ``caught``. (Qt keeps the interpreter in its own loop, where Python's
    handlers never run: Ctrl-C did nothing, or raised in whatever slot ran next; a timer
    hands the interpreter a moment four times a second.) Returns what puts the old handlers
    back."""
    import threading

    from PySide6.QtCore import QTimer

    if threading.current_thread() is not threading.main_thread():
        return lambda: None     # (no handler can be set there, and no timer is needed)

    def close(signum: int, _frame: Any) -> None:
        log.info("signal %d: closing the window", signum)
        if caught is not None:
            caught.append(signum)
        QTimer.singleShot(0, window.close)

    put_back = _swap_handlers(close)
    timer = QTimer()
    timer.timeout.connect(lambda: None)
    timer.start(250)

    def restore() -> None:
        timer.stop()
        put_back()
    return restore


def _swap_handlers(handler: Callable[[int, Any], None]) -> Callable[[], None]:
    """``handler`` for Ctrl-C, SIGTERM and SIGHUP; returns what puts the old ones back. A
    signal ignored (``nohup``) stays so; off the main thread (where no handler can be set)
    nothing changes."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    old: dict[int, Any] = {}
    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        sig = getattr(signal, name, None)
        if sig is None or signal.getsignal(sig) is signal.SIG_IGN:
            continue
        old[sig] = signal.signal(sig, handler)

    def restore() -> None:
        for sig, was in old.items():
            signal.signal(sig, was)
    return restore


def run_live_window(session: Any, source: Any, observer: Any = None, *, mat: Any = None,
                    deck: str | None = None, realtime: bool | None = None,
                    title: str | None = None) -> int:
    """Show the live window for ``session`` fed from ``source`` until it is closed.

    ``source``: a :class:`~companion.live.capture.FrameSource` or what a user types
    (``0``, ``rtsp://...``, ``game.mp4``, ``photos/``); ``observer(image_bgr, name) ->
    observation record``: default the vision pipeline (``vision.pipeline.TablePipeline`` with
    ``mat`` and ``deck``); ``realtime``: replay files at their own pace (True) or as fast as
    possible (False; default: own pace for files, always real time for cameras).
    """
    ensure_app()   # no display: say so before the pipeline is loaded
    from calibration.mat import DEFAULT_MAT
    from companion.live.capture import FrameSource, open_source
    from companion.live.runner import LiveRunner

    src = source if isinstance(source, FrameSource) else open_source(
        source, realtime=True if realtime is None else realtime)
    if observer is None:
        from vision.pipeline import TablePipeline

        kwargs: dict[str, Any] = {"mat": mat if mat is not None else DEFAULT_MAT}
        if deck:
            kwargs["deck"] = deck
        observer = TablePipeline(**kwargs).observe
    runner = LiveRunner(src, session, observer)
    return run_live(runner, mat=mat, title=title)


# ------------------------------------------------------------------------ replay ---

def open_replay_window(game: Any, *, mat: Any = None) -> tuple[Any, Any]:
    """The read-only window of a recorded game (a path or a
    :class:`~companion.recording.store.RecordedGame`); returns ``(window, controller)``."""
    ensure_app()
    from companion.recording.store import open_game
    from companion.ui.controllers import ReplayController
    from companion.ui.views import MainWindow

    recorded = open_game(game) if isinstance(game, (str, Path)) else game
    window = MainWindow("Arcana Table Companion: replay", read_only=True)
    controller = ReplayController(window, recorded, mat=mat)
    window.show()
    return window, controller


def run_replay(game: Any, *, mat: Any = None) -> int:
    """Reopen a recorded game in the window and step through it until it is closed. Ctrl-C
    or a polite kill closes it as its close button does (Ctrl-C did nothing, Qt's loop
    holding the interpreter); the exit code then says which signal, as :func:`run_live`'s
    does."""
    app = ensure_app()
    window, _controller = open_replay_window(game, mat=mat)
    caught: list[int] = []
    restore = _close_on_signals(window, caught)
    try:
        app.exec()
    finally:
        restore()
    return 128 + caught[0] if caught else 0


__all__ = ["HEADLESS_PLATFORMS", "NO_DISPLAY_ADVICE", "NoDisplayError", "display_problem", "ensure_app",
           "unreachable_display",
           "open_live_window", "open_replay_window", "run_live", "run_live_window",
           "run_replay"]
