"""``companion run`` end to end on a folder of sample frames, with a stand-in pipeline that
reads the truth beside each frame (the real one needs the shipped card detector)."""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from ui_support import SAMPLE, truth

from companion.cli import main


class TruthPipeline:
    """Stands in for vision.pipeline.TablePipeline: the truth record of each sample frame."""

    #: the keyword arguments of each one made (the last one last)
    made: list[dict[str, Any]] = []
    card_size_mm = (70.0, 120.0)

    def __init__(self, mat: Any = None, deck: Any = None, **kwargs: Any) -> None:
        self.mat = mat
        self.last_calibration = None
        self.closed = False
        self.gallery = type("Gallery", (), {"card_ids": ["back", "cups-01", "major-00"]})()
        TruthPipeline.made.append(dict(kwargs, mat=mat, deck=deck))

    def observe(self, image: Any, name: str) -> dict[str, Any]:
        return truth(int(Path(name).stem))

    def close(self) -> None:
        self.closed = True


def sample_folder(folder: Path, frames: range) -> Path:
    """A folder of the sample game's frames (as the camera's photos)."""
    folder.mkdir()
    for k in frames:
        shutil.copy(SAMPLE / f"{k:04d}.jpg", folder / f"{k:04d}.jpg")
    return folder


def profile_of(path: Path, names: list[str]) -> Path:
    """A colour profile file naming these colours (as `calibrate-colors` saves one)."""
    from vision.pyramids.profile import ColorProfile, ColorSample

    eye = ((25.0, 0.0, 0.0), (0.0, 25.0, 0.0), (0.0, 0.0, 25.0))
    profile = ColorProfile(tuple(ColorSample(n, (50.0, 10.0 * k, -5.0 * k), eye, {}, 100)
                                 for k, n in enumerate(names)))
    return profile.save(path)


def run_until(argv: list[str], moves: int) -> tuple[int, list[str]]:
    """Run the command; close its window once ``moves`` moves are in its log."""
    app = QApplication.instance()
    seen: list[str] = []
    deadline = time.monotonic() + 30.0
    done = False

    def poll() -> None:
        if done:    # the command returned without a window: stop, or the next test's goes
            return
        for w in app.topLevelWidgets():
            log = getattr(w, "log", None)
            if w.isVisible() and log is not None and hasattr(log, "moves"):
                if len(log.moves()) >= moves or time.monotonic() > deadline:
                    seen[:] = log.moves()
                    w.close()
                    app.quit()
                    return
        QTimer.singleShot(50, poll)

    app.setQuitOnLastWindowClosed(False)
    try:
        QTimer.singleShot(50, poll)
        code = main(argv)
    finally:
        done = True
        app.setQuitOnLastWindowClosed(True)
    return code, seen


def test_run_records_the_game_and_continues_it(qapp: Any, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    import vision.pipeline

    from companion.recording.store import open_game

    monkeypatch.setattr(vision.pipeline, "TablePipeline", TruthPipeline)
    first, second = tmp_path / "first", tmp_path / "second"
    for folder, frames in ((first, range(0, 3)), (second, range(2, 5))):
        folder.mkdir()
        for k in frames:
            shutil.copy(SAMPLE / f"{k:04d}.jpg", folder / f"{k:04d}.jpg")
    db = tmp_path / "game.db"
    args = ["run", "--source", str(first), "--fast", "--record", str(db), "--mat",
            str(SAMPLE / "mat.json"), "--edition", "looney", "--players", "red,blue,green"]
    code, seen = run_until(args, 2)
    assert code == 0
    assert seen == ["red: start 0,2", "blue: start 2,2"]
    assert open_game(db).moves() == seen
    out = capsys.readouterr().out
    assert f"recording the game into {db}" in out
    # the same file again: the game goes on from where it stopped
    args[2] = str(second)
    code, seen = run_until(args, 4)
    assert code == 0
    assert "continuing the game recorded in" in capsys.readouterr().out
    # the window's log shows the whole game: the first sitting's moves, then the new ones
    whole = ["red: start 0,2", "blue: start 2,2", "green: start 1,1",
             "red: use cups-09 by red1U@0,2: clone 1"]
    assert seen == whole
    assert open_game(db).moves() == whole


def test_run_with_a_bad_source_is_a_clear_error(qapp: Any, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--source", str(tmp_path / "nowhere")]) == 2
    err = capsys.readouterr().err
    assert "companion run: error:" in err and "nowhere" in err and "Traceback" not in err


def test_run_watches_a_folder_for_the_photos_of_a_tethered_camera(
        qapp: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--watch`` on a folder empty at the start: the photos saved into it while the window
    is open are refereed one by one."""
    import threading

    import vision.pipeline

    from companion.recording.store import open_game

    monkeypatch.setattr(vision.pipeline, "TablePipeline", TruthPipeline)
    shots = tmp_path / "shots"
    shots.mkdir()
    stop = threading.Event()

    def camera() -> None:     # a photo after each move, as a player would take it
        for k in range(3):
            if stop.wait(0.3):
                return
            shutil.copy(SAMPLE / f"{k:04d}.jpg", shots / f"{k:04d}.jpg")

    thread = threading.Thread(target=camera, daemon=True)
    thread.start()
    db = tmp_path / "game.db"
    try:
        code, seen = run_until(["run", "--source", str(shots), "--watch", "--record", str(db),
                                "--mat", str(SAMPLE / "mat.json"), "--edition", "looney",
                                "--players", "red,blue,green"], 2)
    finally:
        stop.set()
        thread.join(5)
    assert code == 0
    assert seen == ["red: start 0,2", "blue: start 2,2"]
    assert open_game(db).moves() == seen


def test_the_tables_settings_are_dealt_and_recorded(qapp: Any, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The sample game sets 50 cards aside: told so, the live game's draw pile is as short
    (the end can be declared when it runs out), and the game file keeps it for the replay."""
    import vision.pipeline

    from companion.recording.store import accepted_moves, open_game

    monkeypatch.setattr(vision.pipeline, "TablePipeline", TruthPipeline)
    folder = sample_folder(tmp_path / "shots", range(2))
    db = tmp_path / "game.db"
    code, seen = run_until(["run", "--source", str(folder), "--fast", "--record", str(db),
                            "--mat", str(SAMPLE / "mat.json"), "--setting", "box_cards=50",
                            "--setting", "hand-size=3"], 1)
    assert code == 0 and seen == ["red: start 0,2"]
    start, _moves = accepted_moves(open_game(db))
    assert start is not None and start.settings.box_cards == 50
    assert open_game(db).settings == {"box_cards": 50, "hand_size": 3}   # the file's header
    # 78 cards: 9 on the board, 9 in hands, 50 in the box
    assert len(start.deck) == 78 - 9 - 9 - 50


@pytest.mark.parametrize("settings, words", [
    (["box_cards=lots"], "box_cards takes cards put back in the box unseen"),
    (["colour=red"], "no setting 'colour'"),
    (["first_player=1"], "the first of --players moves first"),
    (["box_cards=70"], "the deal needs 88 cards (9 on the board, 9 in 3 hands, 70 in the box) "
                       "and the deck has 78"),
    (["optional_trumps=major-05:ghost", "ghost_color=red"], "that is a player's colour"),
])
def test_a_bad_setting_is_refused_before_the_window(qapp: Any, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str],
                                                    settings: list[str], words: str) -> None:
    shutil.copy(SAMPLE / "0000.jpg", tmp_path / "0000.jpg")
    games = tmp_path / "games"
    try:
        code = main(["run", "--source", str(tmp_path), "--record", str(games / "g.db")]
                    + [x for s in settings for x in ("--setting", s)])
    except SystemExit as exc:      # (argparse's own refusal of one --setting)
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err, err
    if "no setting" in words:   # (the names offered are those run takes)
        assert "box_cards" in err and "first_player" not in err, err
    assert not games.exists()


def test_only_a_folder_can_be_watched(qapp: Any, tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copy(SAMPLE / "0000.jpg", tmp_path / "one.jpg")
    assert main(["run", "--source", str(tmp_path / "one.jpg"), "--watch"]) == 2
    err = capsys.readouterr().err
    assert "only a folder can be watched for new photos" in err and "Traceback" not in err


@pytest.mark.parametrize("source, words", [
    ("zero.mp4", "video {dir}/zero.mp4: cannot be opened (the file is empty)"),
    ("notes.txt", "video {dir}/notes.txt: cannot be opened (11 bytes: not a video OpenCV can "
                  "read, or one cut short before its index was written)"),
    ("99999999999999999999", "camera 99999999999999999999: no camera has that number"),
    ("", "give a camera number, a URL, a video file or a folder"),
    # one photo that cannot be read: its window waited on nothing
    ("cut.jpg", "source '{dir}/cut.jpg': truncated JPEG"),
])
def test_a_source_that_cannot_be_opened_is_said_before_the_window(
        qapp: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str], source: str,
        words: str) -> None:
    (tmp_path / "zero.mp4").write_bytes(b"")
    (tmp_path / "notes.txt").write_text("not a video")
    (tmp_path / "cut.jpg").write_bytes((SAMPLE / "0003.jpg").read_bytes()[:20000])
    given = str(tmp_path / source) if "." in source else source
    games = tmp_path / "games"
    assert main(["run", "--source", given, "--record", str(games / "g.db")]) == 2
    err = capsys.readouterr().err
    assert words.format(dir=tmp_path) in err and "Traceback" not in err, err
    assert not games.exists()                  # no empty game file left behind


@pytest.mark.parametrize("players", ["red", "red,blue,green,yellow,purple,orange,cyan"])
def test_run_needs_two_to_six_players(qapp: Any, players: str,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["run", "--source", "0", "--players", players])
    assert "Zarcana is for 2 to 6 players" in capsys.readouterr().err


def test_run_reads_the_table_with_the_saved_camera_and_colours(
        qapp: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """What `companion calibrate-camera` and `calibrate-colors` saved is what the live window
    reads the table with, as `companion observe` does; --no-intrinsics / --no-colors not."""
    import vision.pipeline

    from calibration.intrinsics import default_camera_path
    from vision.pyramids.profile import default_profile_path

    monkeypatch.setattr(vision.pipeline, "TablePipeline", TruthPipeline)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    camera, colors = default_camera_path(), default_profile_path()
    camera.parent.mkdir(parents=True)
    camera.write_text("{}")
    profile_of(colors, ["red", "blue", "green"])
    folder = tmp_path / "frames"
    folder.mkdir()
    shutil.copy(SAMPLE / "0000.jpg", folder / "0000.jpg")
    args = ["run", "--source", str(folder), "--fast", "--mat", str(SAMPLE / "mat.json")]
    code, _ = run_until(args + ["--record", str(tmp_path / "a.db")], 0)
    assert code == 0
    made = TruthPipeline.made[-1]
    assert made["intrinsics"] == camera and made["colors"] == colors
    assert made["threads"] == 2                  # as observe's default
    out = capsys.readouterr().out
    assert f"using the camera file {camera}" in out and f"using the colour profile {colors}" in out
    code, _ = run_until(args + ["--record", str(tmp_path / "b.db"), "--no-intrinsics",
                                "--no-colors"], 0)
    assert code == 0
    made = TruthPipeline.made[-1]
    assert "intrinsics" not in made and "colors" not in made
    assert "using the" not in capsys.readouterr().out
    given = tmp_path / "other-camera.json"
    given.write_text("{}")
    code, _ = run_until(args + ["--record", str(tmp_path / "c.db"), "--intrinsics",
                                str(given), "--threads", "1"], 0)
    assert code == 0 and TruthPipeline.made[-1]["intrinsics"] == given
    assert TruthPipeline.made[-1]["threads"] == 1


def test_a_colour_profile_of_other_players_is_refused_or_warned_of(
        qapp: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture) -> None:
    """A profile calibrated for red, blue and green read a purple or black pyramid as blue,
    silently: one naming none of the players' colours is refused before the window, one
    naming some of them is warned of."""
    import vision.pipeline

    monkeypatch.setattr(vision.pipeline, "TablePipeline", TruthPipeline)
    colors = profile_of(tmp_path / "colors.json", ["red", "blue", "green"])
    folder = sample_folder(tmp_path / "frames", range(1))
    args = ["run", "--source", str(folder), "--fast", "--colors", str(colors)]
    assert main(args + ["--players", "purple,orange,black",
                        "--record", str(tmp_path / "games" / "a.db")]) == 2
    err = capsys.readouterr().err
    assert "names red, blue, green, none of the players' colours" in err, err
    assert "calibrate-colors 0 --colors purple,orange,black" in err and "--no-colors" in err
    # the command said can be pasted (it lacked the camera or photo it reads)
    import shlex

    from companion.cli import build_parser

    said = shlex.split(err.split("`")[1])
    assert said[0] == "companion"
    assert build_parser().parse_args(said[1:]).colors == ["purple", "orange", "black"]
    assert not (tmp_path / "games").exists()
    code, _ = run_until(args + ["--players", "red,blue,purple",
                                "--record", str(tmp_path / "b.db")], 0)
    assert code == 0
    assert "does not name purple: a pyramid of that colour may be read as one of its " \
        "colours" in caplog.text
    # a game file made but not yet dealt: checked too (its players are the ones given)
    from companion.recording.store import GameRecorder

    GameRecorder.create(tmp_path / "undealt.db", game="zarcana", edition="looney",
                        players=["purple", "orange", "black"], settings={}).close()
    assert main(args + ["--players", "purple,orange,black",
                        "--record", str(tmp_path / "undealt.db")]) == 2
    assert "none of the players' colours" in capsys.readouterr().err


def test_run_with_an_empty_deck_name_is_refused(qapp: Any, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """`--deck ""` was taken as no deck at all, and the game played with the tarot."""
    folder = sample_folder(tmp_path / "frames", range(1))
    assert main(["run", "--source", str(folder), "--deck", "",
                 "--record", str(tmp_path / "games" / "g.db")]) == 2
    assert "the deck's name is empty" in capsys.readouterr().err
    assert not (tmp_path / "games").exists()


def test_run_refuses_a_deck_that_is_not_a_tarot(qapp: Any, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Zarcana is played with a tarot: the Decktet is said by name, and no game file made."""
    pytest.importorskip("onnxruntime")
    games = tmp_path / "games"
    # (run_until: were the deck taken, the window would be closed, not waited on)
    code, _ = run_until(["run", "--source", str(SAMPLE), "--fast", "--deck", "decktet",
                         "--record", str(games / "g.db")], 0)
    err = capsys.readouterr().err
    assert code == 2, err
    assert "deck decktet: zarcana is played with a tarot deck" in err, err
    assert "'decktet-" in err and "Traceback" not in err
    assert not games.exists()


def test_the_live_lattice_follows_the_decks_card_size(
        qapp: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An enrolled tarot of 60 x 100 mm cards: the lattice's pitch is (60 + 100) / 2."""
    import companion.live.session
    import vision.pipeline

    made: list[Any] = []

    class Session(companion.live.session.LiveSession):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            made.append(self)

    monkeypatch.setattr(vision.pipeline, "TablePipeline", TruthPipeline)
    monkeypatch.setattr(TruthPipeline, "card_size_mm", (60.0, 100.0))
    monkeypatch.setattr(companion.live.session, "LiveSession", Session)
    code, _ = run_until(["run", "--source", str(SAMPLE), "--fast", "--record",
                         str(tmp_path / "g.db")], 0)
    assert code == 0 and made[-1].tracker.pitch_mm == 80.0


def test_run_says_which_moves_the_game_file_lacks_when_it_could_not_be_written(
        qapp: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    import vision.pipeline

    from companion.recording.store import GameRecorder, WriteFailed

    def full(self: Any, kind: str, move: Any, **kw: Any) -> Any:
        raise WriteFailed(f"{self.path}: database or disk is full")

    monkeypatch.setattr(vision.pipeline, "TablePipeline", TruthPipeline)
    monkeypatch.setattr(GameRecorder, "record", full)
    folder = sample_folder(tmp_path / "frames", range(3))
    db = tmp_path / "g.db"
    code, seen = run_until(["run", "--source", str(folder), "--fast", "--record", str(db),
                            "--mat", str(SAMPLE / "mat.json")], 2)
    assert seen == ["red: start 0,2", "blue: start 2,2"]
    captured = capsys.readouterr()
    assert code == 1
    assert f"companion run: error: {db}: the last 3 event(s)" in captured.err
    assert "disk is full" in captured.err and "red: start 0,2; blue: start 2,2" in captured.err
    assert "only up to that point" in captured.out


@pytest.mark.skipif(not hasattr(__import__("signal"), "SIGTERM"), reason="no signals here")
def test_a_polite_kill_closes_the_window_and_the_run_ends_as_usual(
        qapp: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Ctrl-C or SIGTERM ends `run` as the close button does: the game file says so, and
    the exit code that the signal ended it (128 + 15; it was 0, as a run closed by hand)."""
    import os
    import signal

    import vision.pipeline

    from companion.recording.store import open_game

    monkeypatch.setattr(vision.pipeline, "TablePipeline", TruthPipeline)
    folder = sample_folder(tmp_path / "frames", range(3))
    db = tmp_path / "g.db"
    app = QApplication.instance()
    deadline = time.monotonic() + 30.0
    before = signal.getsignal(signal.SIGTERM)

    def poll() -> None:
        for w in app.topLevelWidgets():
            log = getattr(w, "log", None)
            if w.isVisible() and log is not None and hasattr(log, "moves") and (
                    len(log.moves()) >= 2 or time.monotonic() > deadline):
                os.kill(os.getpid(), signal.SIGTERM)
                return
        QTimer.singleShot(50, poll)

    QTimer.singleShot(50, poll)
    code = main(["run", "--source", str(folder), "--fast", "--record", str(db), "--mat",
                 str(SAMPLE / "mat.json")])
    assert code == 128 + signal.SIGTERM
    assert signal.getsignal(signal.SIGTERM) == before      # put back as it was
    assert open_game(db).moves() == ["red: start 0,2", "blue: start 2,2"]
    assert f"the game is recorded in {db}" in capsys.readouterr().out


def test_a_run_closed_before_any_deal_keeps_no_empty_game_file(
        qapp: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """(A wrong camera, closed at once, left an empty unfinished game in `companion games`
    each time.) A file the user named is never removed, new or not."""
    import vision.pipeline

    from companion.recording.store import default_games_dir

    class NoTable(TruthPipeline):
        def observe(self, image: Any, name: str) -> dict[str, Any]:
            return {"image": name, "calibrated": False, "reason": "no markers", "cards": [],
                    "pyramids": []}

    monkeypatch.setattr(vision.pipeline, "TablePipeline", NoTable)
    args = ["run", "--source", str(SAMPLE), "--fast"]
    code, _ = run_until(args, 0)
    out = capsys.readouterr().out
    assert code == 0 and "no board was dealt: nothing recorded, and " in out and \
        " is not kept" in out
    assert not list(default_games_dir().glob("*.db*"))
    db = tmp_path / "named.db"
    code, _ = run_until(args + ["--record", str(db)], 0)
    assert code == 0 and db.exists()             # named: kept, empty or not
    assert f"the game is recorded in {db}" in capsys.readouterr().out


@pytest.mark.parametrize("when", ["open_recording", "open_live_window"])
def test_a_ctrl_c_while_the_window_is_being_made_ends_the_run_with_no_game_left(
        qapp: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], when: str) -> None:
    """Ctrl-C between the game file being made and the window taking the signals raised
    wherever the interpreter was: in PySide6's import it crashed ("could not initialize
    part 2"), and every way it left an empty game in the games folder. Now it is noted,
    the window is not run, the run ends with 130 and keeps no empty game."""
    import os
    import signal

    import vision.pipeline

    import companion.commands.run as run_command
    import companion.ui.app as ui_app
    from companion.recording.store import default_games_dir

    monkeypatch.setattr(vision.pipeline, "TablePipeline", TruthPipeline)
    module = run_command if when == "open_recording" else ui_app
    real = getattr(module, when)

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        out = real(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGINT)     # the Ctrl-C, just after this step
        return out

    monkeypatch.setattr(module, when, interrupted)
    before = signal.getsignal(signal.SIGINT)
    code = main(["run", "--source", str(sample_folder(tmp_path / "frames", range(2))),
                 "--fast"])
    assert code == 130
    out = capsys.readouterr().out
    assert "no board was dealt: nothing recorded" in out, out
    assert not list(default_games_dir().glob("*.db*"))
    assert signal.getsignal(signal.SIGINT) == before


@pytest.mark.parametrize("name", ["game.jsonl", "game.json"])
def test_run_refuses_a_record_named_as_another_format_and_makes_nothing(
        qapp: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], name: str) -> None:
    """`run --record game.jsonl` made a SQLite game file under the name of a record in JSON
    lines: refused by name with the formats accepted, exit 2, nothing made."""
    import vision.pipeline

    monkeypatch.setattr(vision.pipeline, "TablePipeline", TruthPipeline)
    frames = sample_folder(tmp_path / "frames", range(2))
    out = tmp_path / "out"
    out.mkdir()
    rec = out / name
    # (the window, had it been opened, closed at once)
    code, _ = run_until(["run", "--source", str(frames), "--fast", "--record", str(rec),
                         "--mat", str(SAMPLE / "mat.json")], 0)
    assert code == 2
    err = capsys.readouterr().err
    assert f"companion run: error: {rec}: a game file (SQLite) is not made under a name " \
           "ending in" in err, err
    assert ".db, .sqlite, .sqlite3, .db3 or no ending" in err and "Traceback" not in err
    assert list(out.iterdir()) == []


def test_a_games_folder_replaced_by_a_file_before_any_deal_fails_the_run_saying_so(
        qapp: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The games folder replaced by a file while the window waited for a table: the empty
    game was saved elsewhere, the run said so, then removed that copy saying it was not
    kept, and ended with 0 as if all was well."""
    import vision.pipeline

    import companion.recording.store as store
    import companion.ui.app as ui_app
    from companion.recording.store import default_games_dir

    games = default_games_dir()
    real = ui_app.run_live

    def folder_replaced(*args: Any, **kwargs: Any) -> Any:
        shutil.move(str(games), str(tmp_path / "moved"))     # (the run's file is in it)
        games.write_text("not a folder any more")
        return real(*args, **kwargs)

    class NoTable(TruthPipeline):       # (no board is ever dealt)
        def observe(self, image: Any, name: str) -> dict[str, Any]:
            return {"image": name, "calibrated": False, "reason": "no markers", "cards": [],
                    "pyramids": []}

    monkeypatch.setattr(vision.pipeline, "TablePipeline", NoTable)
    monkeypatch.setattr(ui_app, "run_live", folder_replaced)
    elsewhere = tmp_path / "elsewhere"       # (where the recorder saves what it cannot keep)
    elsewhere.mkdir()
    monkeypatch.setattr(store, "_fallback_folders", lambda path: [elsewhere])
    code, _ = run_until(["run", "--source", str(sample_folder(tmp_path / "frames", range(2))),
                         "--fast"], 0)
    out, err = capsys.readouterr()
    assert code == 1, (out, err)
    assert "Traceback" not in out + err
    (line,) = err.splitlines()
    assert line.startswith(f"companion run: error: {games}/zarcana-"), line
    assert line.endswith(f".db: the game file could not be kept (its folder {games} is no "
                         "longer a folder); no board was dealt: nothing recorded, and no "
                         "game file is kept"), line
    assert "saved to" not in out + err and "not kept" not in out
    assert games.is_file() and not list(elsewhere.iterdir())



def test_a_game_saved_elsewhere_than_its_folder_fails_the_run_naming_where_it_went(
        qapp: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The games folder replaced by a file after the deal: the game is saved elsewhere, the
    run names where and fails (as it did), and the move held back since the folder went is
    in that copy too (it was left out, said as missing from it)."""
    import vision.pipeline

    import companion.recording.store as store
    from companion.recording.store import default_games_dir, open_game

    games = default_games_dir()

    class Replacing(TruthPipeline):
        def observe(self, image: Any, name: str) -> dict[str, Any]:
            if Path(name).stem == "0002" and games.is_dir():
                shutil.move(str(games), str(tmp_path / "moved"))
                games.write_text("not a folder any more")
            return super().observe(image, name)

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.setattr(store, "_fallback_folders", lambda path: [elsewhere])
    monkeypatch.setattr(vision.pipeline, "TablePipeline", Replacing)
    code, seen = run_until(["run", "--source", str(sample_folder(tmp_path / "frames",
                                                                   range(3))), "--fast"], 2)
    out, err = capsys.readouterr()
    assert code == 1, (out, err)
    (saved,) = elsewhere.iterdir()
    assert f"the game so far is saved to {saved} instead" in err, err
    assert f"the game is recorded in {saved} (companion replay" in out
    assert "Traceback" not in out + err and "could not be written" not in err
    assert open_game(saved).moves() == seen == ["red: start 0,2", "blue: start 2,2"]
