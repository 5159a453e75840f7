"""``companion play``: whole bot games, a scripted person at the prompt, saves and records.

The CLI runs in a subprocess (``python -m companion.cli``) so a traceback, an exit code or
a prompt that never returns shows up exactly as a user would see it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # a checkout without `pip install -e .` still imports

from companion.commands.play import card_short, render_grid
from companion.games.zarcana.engine import loads, position


def run_cli(*args: str, stdin: str = "", timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "-m", "companion.cli", "play", "zarcana", *args],
        input=stdin, capture_output=True, check=False, text=True, timeout=timeout, cwd=ROOT, env=env,
    )


def assert_no_traceback(proc: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stdout[-3000:] + proc.stderr


@pytest.mark.parametrize(("edition", "players", "quiet"), [
    ("1996", "2", False),
    ("looney", "5", True),
    ("1996", "red,blue,green,yellow,purple", True),
    ("looney", "2", True),
])
def test_bots_finish_a_whole_game(edition: str, players: str, quiet: bool) -> None:
    args = ["--edition", edition, "--players", players, "--seed", "3", "--bots"]
    proc = run_cli(*args, *(["--quiet"] if quiet else []))
    assert_no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "final scores:" in out
    assert "winner:" in out or "tie between" in out
    n = int(players) if players.isdigit() else len(players.split(","))
    score_lines = out.split("final scores:")[1].strip().splitlines()[:n]
    assert len(score_lines) == n and all(line.split()[1].lstrip("-").isdigit()
                                         for line in score_lines)
    if not quiet:
        assert "turn 1: red: " in out          # moves are printed as they are made
        assert "j\\i" in out and "stash" in out  # and the table each turn


def test_max_turns_stops_early(tmp_path: Path) -> None:
    save = tmp_path / "g.json"
    proc = run_cli("--bots", "--seed", "5", "--max-turns", "10", "--quiet", "--save", str(save))
    assert_no_traceback(proc)
    assert proc.returncode == 1
    assert "--max-turns" in proc.stdout and "scores so far" in proc.stdout
    state = loads(save.read_text())
    assert state.turn_number == 11 and not state.is_over


def test_scripted_person_at_the_prompt(tmp_path: Path) -> None:
    save = tmp_path / "person.json"
    script = "\n".join([
        "help",
        "moves",
        "draw 9",                 # parses, but breaks two rules
        "red: flurb 1,1",         # does not parse
        "play cups-99 by red1U@0,0: grow",  # no such card
        "red: :oops",             # malformed in a way the parser once crashed on
        "check red: draw 9",
        "check pass",
        "moves red1U@5,5",        # filters to nothing; the numbered list stays
        "1",                      # the first listed move: red starts on 0,0
        "board",
        "hand",
        "scores",
        "quit",
    ]) + "\n"
    proc = run_cli("--players", "red,blue", "--bot-seats", "blue", "--seed", "7",
                   "--save", str(save), stdin=script)
    assert_no_traceback(proc)
    assert proc.returncode == 1  # stopped before the end
    out = proc.stdout
    assert "   1. red: start 0,0" in out
    # the illegal move's reasons, with the rules they come from
    assert "red: draw 9: illegal" in out
    assert "more cards than this option draws" in out
    assert "drawing may not take the hand past six cards" in out
    assert "unknown form 'flurb'" in out
    assert "unknown card id 'cups-99'" in out
    assert "red: pass: legal" in out
    assert "no legal move for red1U@5,5" in out
    assert "red's hand:" in out
    state = loads(save.read_text())
    # only the picked move and the bot's reply were played: check never applies a move
    assert state.history[0] == "red: start 0,0"
    assert len(state.history) == 2 and state.history[1].startswith("blue: ")


def test_end_of_input_stops_cleanly_and_saves(tmp_path: Path) -> None:
    save = tmp_path / "eof.json"
    proc = run_cli("--players", "2", "--seed", "1", "--save", str(save), stdin="pass\n")
    assert_no_traceback(proc)
    assert proc.returncode == 1
    assert "end of input" in proc.stdout
    state = loads(save.read_text())
    assert state.history == ("red: pass",) and state.to_move is not None
    assert state.to_move.value == "blue"


def test_save_and_load_round_trip(tmp_path: Path) -> None:
    first = tmp_path / "first.json"
    proc = run_cli("--edition", "1996", "--players", "3", "--seed", "11", "--bots", "--quiet",
                   "--max-turns", "30", "--save", str(first))
    assert proc.returncode == 1
    saved = loads(first.read_text())
    assert saved.turn_number == 31 and saved.settings.edition.value == "1996"

    # a person loads it, saves it again from the prompt without moving: nothing changes
    second = tmp_path / "second.json"
    proc = run_cli("--load", str(first), stdin=f"save {second}\nquit\n")
    assert_no_traceback(proc)
    assert f"saved to {second}" in proc.stdout
    assert json.loads(second.read_text()) == json.loads(first.read_text())

    # and bots play the loaded game to its end
    proc = run_cli("--load", str(second), "--bots", "--quiet", "--save", str(second))
    assert_no_traceback(proc)
    assert proc.returncode == 0 and "final scores:" in proc.stdout
    done = loads(second.read_text())
    assert done.is_over and done.history[:len(saved.history)] == saved.history


def test_record_replays_to_the_same_scores(tmp_path: Path) -> None:
    from companion.games.zarcana import Settings, new_game

    rec = tmp_path / "game.jsonl"
    proc = run_cli("--players", "4", "--seed", "9", "--bots", "--quiet", "--record", str(rec))
    assert proc.returncode == 0
    lines = [json.loads(line) for line in rec.read_text().splitlines()]
    header, moves, final = lines[0], lines[1:-1], lines[-1]
    assert header["type"] == "header" and header["seed"] == 9
    assert final["type"] == "final" and moves and all(m["type"] == "move" for m in moves)
    state = new_game(header["players"], seed=header["seed"],
                     settings=Settings.from_dict(header["settings"]))
    for m in moves:
        assert m["player"] == state.to_move.value if state.to_move else False
        assert m["turn"] == state.turn_number
        state = state.apply(m["move"])
    assert state.is_over
    assert {c.value: v for c, v in state.scores().items()} == final["scores"]


def test_record_into_the_game_store(tmp_path: Path) -> None:
    from companion.recording.store import open_game, rebuild_state

    db = tmp_path / "game.db"
    proc = run_cli("--players", "3", "--seed", "5", "--bots", "--quiet", "--record", str(db))
    assert proc.returncode == 0, proc.stderr
    game = open_game(db)
    assert game.finished and game.players == ("red", "blue", "green") and game.seed == 5
    state = rebuild_state(game)
    assert state.is_over and len(game.moves()) == len(state.history)
    assert {c.value: v for c, v in state.scores().items()} == dict(game.scores or {})
    again = run_cli("--players", "3", "--seed", "5", "--bots", "--quiet", "--record", str(db))
    assert again.returncode == 2 and "already exists" in again.stderr
    assert_no_traceback(again)


def test_bad_arguments_are_reported_without_traceback(tmp_path: Path) -> None:
    game_db = tmp_path / "game.db"
    game_db.write_bytes(b"SQLite format 3\x00" + bytes(range(256)) * 4)
    for args, words in (
            (["--players", "7"], "error"), (["--players", "red,pink"], "error"),
            (["--players", "red,blue", "--bot-seats", "green"], "not a player colour"),
            (["--players", "red,blue", "--bots", "--bot-seats", "green"], "not a player colour"),
            # --bots took every seat and --bot-seats went unheeded, without a word
            (["--players", "red,blue", "--bots", "--bot-seats", "red"],
             "--bots makes every seat a bot and --bot-seats red names the bots: give one"),
            # a colour named twice is a slip for another seat, never what was meant
            (["--players", "red,blue", "--bot-seats", "blue,Blue"], "a colour is named twice"),
            (["--players", "red,red,blue"], "a colour is named twice"),
            # and one left out between commas (it became a game of two)
            (["--players", "red,,blue"], "a colour is missing between commas in 'red,,blue'"),
            (["--players", "red"], "for 2 to 6 players, not 1"),
            (["--load", str(tmp_path / "missing.json")], "error"),
            (["--load", str(game_db)], "not a saved game (not text) (a recorded game"),
            # a save that cannot be written is said before the game, not after it
            (["--save", str(tmp_path)], "is a folder; give a file name"),
            (["--save", str(tmp_path / "nowhere" / "g.json")], "does not exist")):
        proc = run_cli(*args)
        assert_no_traceback(proc)
        assert proc.returncode == 2, args
        assert words in proc.stderr, (args, proc.stderr)


def test_a_save_in_a_folder_that_is_a_file_says_so(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """``--save notes.txt/g.json`` said "the folder 'notes.txt' does not exist", of a file
    that does: what is wrong with it is said."""
    from companion.cli import main

    notes = tmp_path / "notes.txt"
    notes.write_text("x")
    assert main(["play", "zarcana", "--bots", "--save", str(notes / "g.json")]) == 2
    err = capsys.readouterr().err
    assert f"{str(notes)!r} is a file, not a folder" in err and "does not exist" not in err, err


@pytest.mark.skipif(not hasattr(__import__("signal"), "SIGHUP"), reason="POSIX signals")
def test_a_kill_or_a_closed_terminal_saves_the_game(tmp_path: Path) -> None:
    import signal

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    for sig in (signal.SIGTERM, signal.SIGHUP):
        save = tmp_path / f"{sig.name}.json"
        proc = subprocess.Popen(
            [sys.executable, "-m", "companion.cli", "play", "zarcana", "--players", "2",
             "--seed", "1", "--save", str(save)], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env)
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write("pass\n")
        proc.stdin.flush()
        # wait for the pass to be played (blue's turn), then the signal; the lines are read
        # on a thread, so that other words time out here instead of hanging the test
        import queue
        import threading

        lines: queue.Queue[str] = queue.Queue()
        stream = proc.stdout
        threading.Thread(target=lambda: [lines.put(line) for line in stream], daemon=True
                         ).start()
        seen = ""
        while "turn 2: blue's turn" not in seen:
            seen += lines.get(timeout=60)
        proc.send_signal(sig)
        err = proc.stderr.read() if proc.stderr is not None else ""
        proc.wait(60)
        assert proc.returncode == 130 and "interrupted" in err, (sig, err)
        assert loads(save.read_text()).history == ("red: pass",)


def test_grid_shows_cards_pyramids_wasteland_and_face_down() -> None:
    st = position(2, board={"0,0": "cups-03", "1,0": ["swords-14", "~major-13"],
                            "0,1": "major-13"},
                  pieces={"0,0": "red2U blue1E"})
    grid = render_grid(st)
    assert "C3" in grid and "##[2]" in grid and "M13" in grid and "..." in grid
    assert "red2U" in grid and "blue1E" in grid
    assert [card_short(c) for c in ("cups-03", "wands-12", "swords-14", "pentacles-01",
                                    "major-13")] == ["C3", "W12", "S14", "P1", "M13"]


def test_a_loaded_game_recorded_into_the_store_replays(tmp_path: Path) -> None:
    """A game loaded mid-way starts from its saved position: the file names no seed whose
    deal the replay would hold it against."""
    from companion.recording.store import open_game, rebuild_state

    save, db = tmp_path / "s1.json", tmp_path / "g2.db"
    run_cli("--players", "3", "--seed", "5", "--bots", "--quiet", "--max-turns", "3",
            "--save", str(save))
    proc = run_cli("--load", str(save), "--bots", "--quiet", "--max-turns", "6", "--record",
                   str(db))
    assert_no_traceback(proc)
    game = open_game(db)
    assert game.seed is None and game.moves()
    state = rebuild_state(game)
    assert list(state.history[-len(game.moves()):]) == game.moves()


def test_max_turns_counts_the_turns_of_a_continued_game_from_its_load(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A game saved at turn 4 and loaded with --max-turns 2 played nothing and said it had
    stopped after 2 turns (the game's own turn count was compared): it plays two turns."""
    from companion.games.zarcana.engine import loads

    save, db = tmp_path / "s.json", tmp_path / "cont.db"
    run_cli("--players", "3", "--seed", "960003", "--bots", "--quiet", "--max-turns", "3",
            "--save", str(save))
    before = loads(save.read_text()).turn_number
    # a save given to `export` is said to be one, with how to continue it (it was called a
    # JSON-lines record)
    from companion.cli import main

    assert main(["export", str(save)]) == 2
    err = capsys.readouterr().err
    assert "a saved game (as `companion play --save` writes" in err and f"--load {save}" in err
    proc = run_cli("--load", str(save), "--bots", "--quiet", "--max-turns", "2",
                   "--save", str(save))
    assert_no_traceback(proc)
    assert loads(save.read_text()).turn_number == before + 2, proc.stdout


def test_a_save_never_writes_over_a_recorded_game(tmp_path: Path) -> None:
    """--save (or `save FILE` at the prompt) onto a game file replaced the whole recorded
    game with one position, without a word: refused, the game file kept."""
    db = tmp_path / "game.db"
    assert run_cli("--bots", "--seed", "5", "--quiet", "--max-turns", "2",
                   "--record", str(db)).returncode == 1
    kept = db.read_bytes()
    proc = run_cli("--bots", "--seed", "6", "--quiet", "--max-turns", "2", "--save", str(db))
    assert proc.returncode == 2 and "is a recorded game" in proc.stderr, proc.stderr
    proc = run_cli("--players", "red,blue", "--bot-seats", "blue", "--seed", "7",
                   stdin=f"save {db}\nquit\n")
    assert_no_traceback(proc)
    assert "is a recorded game" in proc.stdout + proc.stderr
    assert db.read_bytes() == kept


def _fail_writes(monkeypatch: pytest.MonkeyPatch, calls: range,
                 error: Callable[[Path, int], Exception]) -> None:
    """GameRecorder.record raises ``error(file, call)`` on the ``calls``-th calls (from 1),
    as a full disk or another program's lock would; the others write."""
    from companion.recording.store import GameRecorder

    real = GameRecorder.record
    count = {"n": 0}

    def record(self: GameRecorder, *a: object, **k: object) -> int:
        count["n"] += 1
        if count["n"] in calls:
            raise error(self.path, count["n"])
        return real(self, *a, **k)

    monkeypatch.setattr(GameRecorder, "record", record)


def test_a_game_file_that_cannot_be_written_for_a_while_does_not_end_the_game(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A full disk or another program's lock on the game file used to end the game at the
    next move, with no --save written and nothing to continue from. The moves are now kept
    and written once the file takes them again, as `companion run` does."""
    from companion.cli import main
    from companion.recording.store import WriteFailed, open_game, rebuild_state

    _fail_writes(monkeypatch, range(10, 20), lambda path, n: WriteFailed(
        f"{path}: event {n} (move) could not be written: database is locked"))
    db = tmp_path / "g.db"
    assert main(["play", "zarcana", "--players", "3", "--seed", "5", "--bots", "--quiet",
                 "--record", str(db), "--save", str(tmp_path / "s.json")]) == 0
    err = capsys.readouterr().err
    assert err.count("database is locked") == 1 and "written again" in err, err
    game = open_game(db)
    assert game.finished and rebuild_state(game).is_over
    assert loads((tmp_path / "s.json").read_text()).is_over


def test_a_game_file_that_never_takes_the_moves_again_still_saves_and_says_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from companion.cli import main
    from companion.recording.store import WriteFailed, open_game

    _fail_writes(monkeypatch, range(10, 10_000), lambda path, n: WriteFailed(
        f"{path}: database or disk is full", full=True))
    db = tmp_path / "g.db"
    assert main(["play", "zarcana", "--players", "3", "--seed", "5", "--bots", "--quiet",
                 "--record", str(db), "--save", str(tmp_path / "s.json")]) == 1
    err = capsys.readouterr().err
    assert f"companion play: error: {db} lacks the last" in err, err
    assert loads((tmp_path / "s.json").read_text()).is_over     # --save holds the whole game
    assert len(open_game(db).moves()) == 8                      # (the start was the first)


def test_a_lines_record_never_overwrites_and_is_on_disk_move_by_move(tmp_path: Path) -> None:
    """`--record FILE.jsonl` opened its file with "w" (an earlier game's record gone) and
    buffered it (a crash lost the moves already printed)."""
    rec = tmp_path / "tue.JSONL"             # (any case of the suffix is JSON lines)
    proc = run_cli("--players", "3", "--seed", "5", "--bots", "--quiet", "--record", str(rec))
    assert proc.returncode == 0, proc.stderr
    first = rec.read_text()
    assert json.loads(first.splitlines()[-1])["type"] == "final"
    again = run_cli("--players", "3", "--seed", "6", "--bots", "--quiet", "--max-turns", "1",
                    "--record", str(rec))
    assert again.returncode == 2 and "already exists" in again.stderr
    assert rec.read_text() == first
    assert_no_traceback(again)


def test_a_lines_record_that_cannot_be_written_names_its_file_and_the_game_goes_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from companion.cli import main

    real_fsync = os.fsync
    calls = {"n": 0}

    def full_disk(fd: int) -> None:
        calls["n"] += 1
        if calls["n"] >= 5:
            raise OSError(28, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", full_disk)
    rec = tmp_path / "g.jsonl"
    assert main(["play", "zarcana", "--players", "3", "--seed", "5", "--bots", "--quiet",
                 "--record", str(rec), "--save", str(tmp_path / "s.json")]) == 1
    monkeypatch.setattr(os, "fsync", real_fsync)
    err = capsys.readouterr().err
    assert err.count(f"{rec}: cannot be written any more (No space left on device)") == 2, err
    assert loads((tmp_path / "s.json").read_text()).is_over


def test_a_colour_list_takes_a_comma_at_either_end_not_one_left_out() -> None:
    """``red,blue,`` (a comma typed last) is red and blue; ``red,,blue`` leaves a colour
    out, more often than not, and is refused (it became a game of two)."""
    import argparse

    from companion.commands.argtypes import colour_list

    assert colour_list("red,blue,") == colour_list(",red, blue") == ("red", "blue")
    with pytest.raises(argparse.ArgumentTypeError, match="a colour is missing between commas"):
        colour_list("red,,blue")


@pytest.mark.parametrize("name", ["g.json", "g.ndjson"])
def test_a_record_named_as_neither_format_is_refused_and_nothing_is_made(
        tmp_path: Path, name: str) -> None:
    """`--record g.json` made a SQLite game file named as JSON (a `--load` of it, or any
    JSON reader, then failed on it)."""
    rec = tmp_path / name
    proc = run_cli("--players", "3", "--seed", "5", "--bots", "--quiet", "--record", str(rec))
    assert_no_traceback(proc)
    assert proc.returncode == 2
    assert f"{rec}: a game file (SQLite) is not made under a name ending in" in proc.stderr
    assert ".jsonl" in proc.stderr and ".db" in proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_game_file_lost_during_the_game_is_saved_elsewhere_whole_and_said(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The game file's folder replaced by a file mid-game: the moves after it were held
    back, the game saved elsewhere at the close without them, and where it went was only
    in a log line. The copy now holds the whole game, and the run names it and fails."""
    import shutil

    import companion.recording.store as store
    from companion.cli import main
    from companion.recording.store import GameRecorder, open_game, rebuild_state

    folder = tmp_path / "games"
    db = folder / "g.db"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.setattr(store, "_fallback_folders", lambda path: [elsewhere])
    real = GameRecorder.record
    count = {"n": 0}

    def record(self: GameRecorder, *a: object, **k: object) -> int:
        count["n"] += 1
        if count["n"] == 6:
            shutil.move(str(folder), str(tmp_path / "moved"))
            folder.write_text("not a folder any more")
        return real(self, *a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(GameRecorder, "record", record)
    assert main(["play", "zarcana", "--players", "3", "--seed", "5", "--bots", "--quiet",
                 "--record", str(db)]) == 1
    err = capsys.readouterr().err
    saved = elsewhere / "g.db"
    assert f"companion play: error: {db}: the game file could not be kept there; the game " \
           f"so far is saved to {saved} instead" in err, err
    assert "lacks the last" not in err
    game = open_game(saved)
    assert game.finished and rebuild_state(game).is_over
