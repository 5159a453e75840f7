"""``companion replay``: a recorded game in the read-only window."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import cv2
import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication
from ui_support import SAMPLE, frame, open_live, record_bot_game, truth

from companion.cli import main


def test_replay_window_steps_through_a_recorded_bot_game(qtbot: Any, tmp_path: Path) -> None:
    from companion.recording.store import open_game
    from companion.ui.app import open_replay_window

    path = tmp_path / "bots.db"
    moves = record_bot_game(path, seed=4, moves=12)
    window, ctl = open_replay_window(path)
    qtbot.addWidget(window)
    assert window.read_only and not window.manual_box.isVisible()
    assert window.log.moves() == moves
    assert ctl.view_index is None and window.log.currentRow() == len(moves)
    game = open_game(path)
    from companion.recording.store import rebuild_state
    final = rebuild_state(game)
    expect = ", ".join(f"{c.value} {v}" for c, v in final.scores().items())
    assert window.scores.score_text() == expect
    # back: the position before the last move, with that move's keyframe
    last = window.video.frame()
    assert last is not None and last.width() == 320
    qtbot.mouseClick(window.back_button, Qt.MouseButton.LeftButton)
    assert window.log.currentRow() == len(moves) - 1
    assert ctl.state_at(ctl.shown_index()).history == final.history[:-1]
    earlier = window.video.frame()
    assert earlier is not None and earlier != last          # another keyframe
    qtbot.mouseClick(window.forward_button, Qt.MouseButton.LeftButton)
    assert window.log.currentRow() == len(moves)
    ctl.view_position(0)
    assert window.scores.score_text() == "red 0, blue 0, green 0"
    assert window.video.frame() is None                     # no keyframe for the deal
    series = window.final.chart.series()
    assert all(len(v) == len(moves) + 1 for v in series.values())


def test_the_move_logs_keys_step_the_position_shown(qtbot: Any, tmp_path: Path) -> None:
    """A click on the log's row 3, then the Down key twice, then End: the highlight moved
    with the keys but the board, scores and label stayed at row 3. The position follows."""
    from companion.ui.app import open_replay_window

    path = tmp_path / "bots.db"
    moves = record_bot_game(path, seed=4, moves=12)
    window, ctl = open_replay_window(path)
    qtbot.addWidget(window)
    log = window.log
    qtbot.mouseClick(log.viewport(), Qt.MouseButton.LeftButton,
                     pos=log.visualItemRect(log.item(3)).center())
    assert ctl.shown_index() == 3
    for _ in range(2):
        qtbot.keyClick(log, Qt.Key.Key_Down)
    assert log.currentRow() == 5 and ctl.shown_index() == 5
    qtbot.keyClick(log, Qt.Key.Key_End)
    assert log.currentRow() == len(moves) and ctl.shown_index() == len(moves)


def test_a_live_recorded_game_replays_with_its_keyframes_and_overlay(
        qtbot: Any, tmp_path: Path) -> None:
    from companion.recording.store import GameRecorder
    from companion.ui.app import open_replay_window

    s = __import__("ui_support").script()
    rec = GameRecorder.create(tmp_path / "live.db", game="zarcana", edition=s["edition"],
                              players=s["players"], settings=s["settings"])
    lw = open_live(qtbot, recorder=rec)
    for k in range(6):
        ok, buf = cv2.imencode(".jpg", frame(k))
        assert ok
        r = truth(k)
        lw.controller.post_frame(frame(k), k, record=r)
        lw.controller.commands.submit("frame", lambda r=r, k=k, b=buf.tobytes():
                                      lw.session.observe(r, frame=k, keyframe_jpeg=b))
        assert lw.controller.wait_idle()
    moves = lw.window.log.moves()
    assert len(moves) == 5
    lw.session.step_back()          # the last move taken back: the replay says so
    assert lw.controller.wait_idle()
    lw.controller.stop()
    lw.session.close()

    window, ctl = open_replay_window(tmp_path / "live.db")
    qtbot.addWidget(window)
    assert window.log.moves()[:5] == moves[:4] + [moves[4] + " [taken back]"]
    assert window.log.moves()[5].startswith("[undo] took back")
    assert window.video.frame() is not None and window.video.frame().width() == 1600
    roles = window.video.overlay().roles()
    assert {"card", "card-label", "pyramid"} <= roles
    assert window.scores.score_text() == lw.window.scores.score_text()


def test_a_replay_is_drawn_on_the_mat_and_cards_the_game_was_played_on(
        qtbot: Any, tmp_path: Path) -> None:
    """The game file keeps the mat and the card size with the dealt board: a replay needs
    neither given again (a game recorded before, or by `play`, gets the standard ones)."""
    from dataclasses import replace

    from calibration.mat import DEFAULT_MAT, load_mat
    from companion.live.session import LiveSession
    from companion.recording.store import GameRecorder, open_game
    from companion.ui.app import open_replay_window

    s = __import__("ui_support").script()
    mat = load_mat(SAMPLE / "mat.json")
    mine = replace(mat, zones={**mat.zones, "draw": (700.0, 20.0, 860.0, 200.0)})
    rec = GameRecorder.create(tmp_path / "g.db", game="zarcana", edition=s["edition"],
                              players=s["players"], settings=s["settings"])
    session = LiveSession("zarcana", edition=s["edition"], players=s["players"],
                          settings=s["settings"], mat=mine, recorder=rec,
                          card_size_mm=(70.0, 121.0))
    session.observe(truth(0), frame=0)
    session.close()
    assert open_game(tmp_path / "g.db").events[0].observation["table"]["card_size_mm"] == [
        70.0, 121.0]
    window, ctl = open_replay_window(tmp_path / "g.db")
    qtbot.addWidget(window)
    assert ctl.mat == mine and tuple(ctl.card_size_mm) == (70.0, 121.0)
    window2, ctl2 = open_replay_window(tmp_path / "g.db", mat=mat)   # --mat still wins
    qtbot.addWidget(window2)
    assert ctl2.mat == mat
    record_bot_game(tmp_path / "bots.db", moves=2)
    window3, ctl3 = open_replay_window(tmp_path / "bots.db")
    qtbot.addWidget(window3)
    assert ctl3.mat == DEFAULT_MAT and tuple(ctl3.card_size_mm) == (70.0, 120.0)


def test_a_game_played_without_a_mat_replays_without_one(tmp_path: Path) -> None:
    """No zones in the replay either: the standard mat's piles would take board cards."""
    from types import SimpleNamespace

    from calibration.mat import virtual_mat
    from companion.live.session import LiveSession
    from companion.recording.store import GameRecorder, open_game
    from companion.ui.controllers import recorded_table

    s = __import__("ui_support").script()
    rec = GameRecorder.create(tmp_path / "g.db", game="zarcana", edition=s["edition"],
                              players=s["players"], settings=s["settings"])
    session = LiveSession("zarcana", edition=s["edition"], players=s["players"],
                          settings=s["settings"], mat=virtual_mat(), recorder=rec)
    dealt = dict(truth(0))     # (no zones: the draw pile would lie on the board)
    dealt["cards"] = [c for c in dealt["cards"] if c["id"] != "back"]
    session.observe(dealt, frame=0)
    session.close()
    mat, cards = recorded_table(open_game(tmp_path / "g.db"))
    assert mat == virtual_mat() and not mat.printed and not mat.zones
    assert cards == (70.0, 120.0)
    # what a file may hold instead is read as nothing, never raised
    for table in (None, 5, "x", [], {"mat": 3, "card_size_mm": [True, False]},
                  {"mat": {"width_mm": "wide"}, "card_size_mm": [float("nan"), 5]},
                  {"mat": {"printed": False, "width_mm": 1e9}, "card_size_mm": "70x120"}):
        game = SimpleNamespace(path=tmp_path / "g.db", events=[
            SimpleNamespace(observation={"table": table})])
        got_mat, got_cards = recorded_table(game)
        assert got_cards is None
        assert got_mat is None or got_mat == virtual_mat()


def test_replay_command_opens_the_window_and_returns(qtbot: Any, tmp_path: Path) -> None:
    path = tmp_path / "bots.db"
    record_bot_game(path, seed=9, moves=5, keyframes=False, finish=True)
    app = QApplication.instance()
    seen: list[str] = []

    def close() -> None:
        for w in app.topLevelWidgets():
            if w.isVisible() and w.windowTitle().startswith("Replay of"):
                seen.append(w.windowTitle())
                w.close()
        app.quit()

    # closing the last window would post a quit that ends the next test's event loops
    app.setQuitOnLastWindowClosed(False)
    try:
        QTimer.singleShot(300, close)
        assert main(["replay", str(path)]) == 0
    finally:
        app.setQuitOnLastWindowClosed(True)
    assert seen and "bots.db" in seen[0]


def test_replay_of_a_damaged_file_is_a_clear_error(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "broken.db"
    bad.write_bytes(b"this is not a game file" * 50)
    assert main(["replay", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "companion replay: error:" in err and "broken.db" in err
    assert "Traceback" not in err
    assert main(["replay", str(tmp_path / "missing.db")]) == 2


@pytest.mark.parametrize("field, value, seed", [("game", "chess", 9),
                                                 ("edition", "plastic", 9),
                                                 ("edition", "plastic", None)])
def test_replay_of_a_game_of_no_rules_here_is_refused_naming_the_value(
        qapp: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str,
        value: str, seed: int | None) -> None:
    """A header saying game='chess' or edition='plastic' (export reads such files) opened an
    empty window, "cannot be replayed past this point", or, a camera game's (no seed), the
    moves under rules the header does not name, without a word."""
    import sqlite3

    path = tmp_path / "odd.db"
    record_bot_game(path, seed=9, moves=3, keyframes=False)
    with sqlite3.connect(path) as con:
        con.execute(f"UPDATE game SET {field} = ?, seed = ?", (value, seed))
    con.close()

    def close() -> None:
        for w in qapp.topLevelWidgets():
            if w.isVisible():
                w.close()
        qapp.quit()

    # (closes the window a replay opened, that the test fails rather than hangs; stopped
    # after, or it would end the next test's event loop)
    backstop = QTimer()
    backstop.setSingleShot(True)
    backstop.timeout.connect(close)
    qapp.setQuitOnLastWindowClosed(False)
    try:
        backstop.start(300)
        code = main(["replay", str(path)])
    finally:
        backstop.stop()
        qapp.setQuitOnLastWindowClosed(True)
    err = capsys.readouterr().err
    assert code == 2, err
    assert f"companion replay: error: {path}:" in err and repr(value) in err, err
    assert f"companion export {path} --format text" in err and "Traceback" not in err


def test_run_without_a_display_says_what_to_do(monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.setattr("sys.platform", "linux")
    assert main(["run", "--source", str(SAMPLE)]) == 2
    err = capsys.readouterr().err
    assert "no display" in err and "companion demo --headless" in err
    assert "Traceback" not in err


def test_a_display_that_does_not_answer_is_said_and_leaves_no_game(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        tmp_path: Path) -> None:
    """DISPLAY set but no X server there (a stale ssh session's): Qt aborted the process
    (a core dump) after the game file was made; now it is said as no display is, and the
    demo runs headless. A display that answers (on its abstract socket, or over TCP as an
    ssh forwarding's) is taken."""
    import socket

    from companion.ui.app import display_problem, unreachable_display

    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.setattr("sys.platform", "linux")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("DISPLAY", ":9871")
    assert unreachable_display() == ":9871"
    assert main(["run", "--source", str(SAMPLE)]) == 2
    err = capsys.readouterr().err
    assert "the display DISPLAY=':9871' cannot be reached" in err, err
    assert "companion demo --headless" in err and "Traceback" not in err
    assert not list((tmp_path / "data").rglob("*.db"))
    from companion.commands.demo import has_display

    assert not has_display()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as x:
        x.bind("\0/tmp/.X11-unix/X9871")
        x.listen(16)
        for form in (":9871", ":9871.0", "unix:9871", "unix/:9871"):
            monkeypatch.setenv("DISPLAY", form)
            assert unreachable_display() is None, form
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as x:
        x.bind(("127.0.0.1", 0))
        x.listen(16)
        n = x.getsockname()[1] - 6000
        for form in (f"127.0.0.1:{n}.0", f"localhost:{n}", f"tcp/localhost:{n}"):
            monkeypatch.setenv("DISPLAY", form)
            assert unreachable_display() is None, form
        monkeypatch.setenv("DISPLAY", f"127.0.0.1:{n + 1}")
        assert unreachable_display() == f"127.0.0.1:{n + 1}"
    if socket.has_ipv6:
        try:
            with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as x:
                x.bind(("::1", 0))
                x.listen(16)
                n = x.getsockname()[1] - 6000
                for form in (f"::1:{n}", f"[::1]:{n}"):
                    monkeypatch.setenv("DISPLAY", form)
                    assert unreachable_display() is None, form
        except OSError:
            pass        # (no IPv6 loopback here)
    # a form not known here is left to Qt
    for form in ("localhost/unix:78", "host::0", "no display"):
        monkeypatch.setenv("DISPLAY", form)
        assert unreachable_display() is None and display_problem() is None, form
    monkeypatch.setenv("DISPLAY", ":9871")
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    assert display_problem() is None


def test_ctrl_c_closes_the_replay_window(qapp: Any, tmp_path: Path) -> None:
    """Ctrl-C in the terminal did nothing to ``companion replay`` (Qt's loop holds the
    interpreter): it closes the window as its close button does, the exit code 130, and
    the handlers are put back."""
    import os
    import signal

    path = tmp_path / "bots.db"
    record_bot_game(path, seed=4, moves=4)
    before = signal.getsignal(signal.SIGINT)
    QTimer.singleShot(300, lambda: os.kill(os.getpid(), signal.SIGINT))
    # (without the handler the window stayed open: closed here after 10 s, so that the
    # test fails rather than hangs)
    backstop = QTimer()
    backstop.setSingleShot(True)
    backstop.timeout.connect(lambda: [w.close() for w in QApplication.topLevelWidgets()])
    backstop.start(10_000)
    try:
        code = main(["replay", str(path)])
    finally:
        backstop.stop()
    assert code == 130
    assert signal.getsignal(signal.SIGINT) == before
    assert not [w for w in QApplication.topLevelWidgets() if w.isVisible()]


def test_a_replay_keeps_only_the_last_keyframes_decoded(qtbot: Any, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Stepping through a long game kept every keyframe decoded (a 1000-move game took
    5.8 GB): only the last few are kept, and one stepped back to is decoded again, the
    same picture."""
    import companion.ui.controllers as controllers
    from companion.ui.app import open_replay_window

    monkeypatch.setattr(controllers, "REPLAY_KEYFRAMES_KEPT", 3)
    path = tmp_path / "bots.db"
    moves = record_bot_game(path, seed=4, moves=12)
    window, ctl = open_replay_window(path)
    qtbot.addWidget(window)
    shown = {}
    for k in range(len(moves) + 1):
        ctl.view_position(k)
        shown[k] = window.video.frame()
        assert len(ctl._images) <= 3
    assert sum(f is not None for f in shown.values()) > 3     # more keyframes than kept
    for k in (1, 2):
        ctl.view_position(k)
        assert window.video.frame() == shown[k]


def test_the_replay_names_a_card_built_face_down_once_a_correction_names_it(
        qtbot: Any, face_down_named_game: Path) -> None:
    """A Wheel of Fortune build ("build 1,0 =?"), its card named later: the replay window's
    line of the build said "=?" still, and only the later correction's line named the card,
    where the live window's move log and the text record name it on the build's line."""
    from companion.ui.app import open_replay_window

    build = "red: play major-10 by red1E@0,0: build 1,0 =?"
    window, ctl = open_replay_window(face_down_named_game)
    qtbot.addWidget(window)
    assert ctl.error is None
    assert f"{build} (face down: cups-05)" in window.log.moves(), window.log.moves()
    assert "blue: draw 1" in window.log.moves()


@pytest.mark.parametrize("when", ["before", "after", None])
def test_the_replay_names_the_card_the_alchemist_covered_once_a_correction_names_it(
        qtbot: Any, alchemist_covered_game: Any, when: str | None) -> None:
    """The Alchemist's first card, built from a draw pile nobody sees and covered at once
    ("build 1,0 =?; build 1,0 =wands-07"), named by a correction as a later attack uncovers
    it (recorded before the attack, or after it where it was clicked first): the replay
    window's line of the Alchemist said "=?" still, where the text record says
    "(covered: cups-04)". The lines are the text record's; never seen, the move as it was."""
    from companion.recording.export import text_lines
    from companion.recording.store import open_game
    from companion.ui.app import open_replay_window

    alchemist = "red: play major-09 as alchemist by red1E@0,0: build 1,0 =?; build 1,0 =wands-07"
    path = alchemist_covered_game(when)
    window, ctl = open_replay_window(path)
    qtbot.addWidget(window)
    assert ctl.error is None
    line = f"{alchemist} (covered: cups-04)" if when else alchemist
    assert line in window.log.moves(), window.log.moves()
    assert any(x.endswith(f"red     {line}") for x in text_lines(open_game(path)))
