"""``companion games`` and ``companion export`` through ``companion.cli.main``."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from companion.cli import main
from companion.games.zarcana.engine import dumps
from companion.recording import GameRecorder, open_game
from recording_support import bot_game, record_bot_game


@pytest.fixture()
def games_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "games"
    record_bot_game(folder / "zarcana-2024-05-01-153000.db", bot_game())
    record_bot_game(folder / "zarcana-2024-05-02-090000.db", bot_game(), moves=12)
    return folder


def test_games_lists_each_game(games_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["games", "--dir", str(games_dir)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == f"2 recorded game(s) in {games_dir}:"
    final = bot_game().final
    done, partial = lines[1], lines[2]
    assert done.split()[0] == "zarcana-2024-05-01-153000.db"
    assert "zarcana looney" in done and "red, blue, green" in done
    assert f"{len(bot_game().moves)} move(s)  finished" in done
    scores = ", ".join(f"{c.value} {v}" for c, v in final.scores().items())
    assert done.endswith(scores)
    assert "12 move(s)  not finished" in partial and partial.endswith("not finished")


def test_games_lists_a_broken_file_and_exits_1(games_dir: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    (games_dir / "crashed-disk.db").write_bytes(b"SQLite format 3\x00" + bytes(200))
    (games_dir / "random.db").write_bytes(bytes(range(256)) * 20)
    assert main(["games", "--dir", str(games_dir)]) == 1
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert lines[0] == f"2 recorded game(s) in {games_dir}, 2 broken file(s):"
    broken = [line for line in lines if "BROKEN:" in line]
    assert [line.split()[0] for line in broken] == ["crashed-disk.db", "random.db"]
    assert "not a game file" in broken[1]
    assert sum("move(s)" in line for line in lines) == 2   # the good ones still list
    assert "2 file(s) could not be read" in captured.err
    assert "Traceback" not in captured.out + captured.err


def test_games_lists_an_empty_file_without_calling_it_broken(
        games_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """What a companion killed before the deal leaves (an empty file, or a database with no
    table yet) holds nothing to lose: listed as empty, and the exit code stays 0."""
    import sqlite3

    (games_dir / "killed-before-the-deal.db").write_bytes(b"")
    sqlite3.connect(games_dir / "killed-while-made.db").execute("PRAGMA user_version = 0")
    assert main(["games", "--dir", str(games_dir)]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert lines[0] == f"2 recorded game(s) in {games_dir}, 2 empty file(s):"
    empty = [line for line in lines if "empty: no game in the file itself" in line]
    assert all("that log holds the moves" in line for line in empty)
    assert [line.split()[0] for line in empty] == ["killed-before-the-deal.db",
                                                   "killed-while-made.db"]
    assert captured.err == ""


def test_games_in_an_empty_or_missing_folder(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    assert main(["games", "--dir", str(tmp_path)]) == 0
    assert capsys.readouterr().out.strip() == f"no recorded games in {tmp_path}"
    assert main(["games", "--dir", str(tmp_path / "nope")]) == 2
    # (worded as every command's refusal: "companion CMD: error: ...")
    nope, notes = tmp_path / "nope", tmp_path / "notes.txt"
    assert capsys.readouterr().err == f"companion games: error: {nope} does not exist\n"
    notes.write_text("hi")
    assert main(["games", "--dir", str(notes)]) == 2
    assert capsys.readouterr().err == (f"companion games: error: {str(notes)!r} is a file, not "
                                       "a folder\n")
    # Without --dir: the XDG folder, which need not exist yet.
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert main(["games"]) == 0
    assert "no recorded games in" in capsys.readouterr().out


def test_export_text(games_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = games_dir / "zarcana-2024-05-01-153000.db"
    game = bot_game()
    assert main(["export", str(path), "--format", "text"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Zarcana (Looney Pyramids): recorded game\n")
    assert "players:   red, blue, green (in turn order)" in out
    assert "settings:  the edition defaults" in out
    move_lines = [line for line in out.splitlines() if re.match(r"\s+\d+\s+[\d:-]+", line)]
    assert len(move_lines) == len(game.moves) + 1   # the start position, then every move
    first = move_lines[1].split()
    assert first[0] == "1" and first[3] == game.moves[0].split(":")[0]
    assert move_lines[1].endswith(game.moves[0])
    assert move_lines[-1].endswith(game.moves[-1])
    final = game.final
    scores = ", ".join(f"{c.value} {v}" for c, v in final.scores().items())
    assert f"final scores: {scores}" in out
    winners = [c.value for c in final.winners()]
    assert (f"winner: {winners[0]}" if len(winners) == 1
            else f"tie between {', '.join(winners)}") in out


def test_export_text_shows_overrides_notes_and_unfinished(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    path = tmp_path / "g.db"
    with GameRecorder.create(path, game="zarcana", edition="1996", players=["red", "blue"],
                             settings={"edition": "1996", "hand_size": 4}, seed=9) as rec:
        rec.record("override", "red: draw 3", note="we allowed it\nbecause of the house rule")
        rec.record("note", None, note="coffee break")
        rec.record("correction", "2,1 is cups-08, not cups-03")
        rec.record("move", "blue: pass")
        rec.record("undo", "blue: pass")
        rec.record("illegal", "blue: start 9,9", note="not a territory")
    assert main(["export", str(path)]) == 0
    out = capsys.readouterr().out
    assert "Zarcana 1996: recorded game" in out
    assert "settings:  hand_size=4" in out
    assert "red: draw 3   [override: accepted against the rules]" in out
    assert "note: we allowed it" in out and "note: because of the house rule" in out
    assert "note: coffee break" in out
    assert "correction: 2,1 is cups-08, not cups-03" in out
    assert "blue: pass [taken back]" in out and "took back: blue: pass" in out
    assert "refused: blue: start 9,9" in out and "note: not a territory" in out
    assert "not finished (1 move(s) recorded)" in out
    assert out.rstrip().endswith("the game was not finished")


def test_export_jsonl_to_a_file(games_dir: Path, tmp_path: Path,
                                capsys: pytest.CaptureFixture[str]) -> None:
    path = games_dir / "zarcana-2024-05-01-153000.db"
    out_file = tmp_path / "out" / "game.jsonl"
    out_file.parent.mkdir()
    assert main(["export", str(path), "--format", "jsonl", "--out", str(out_file)]) == 0
    assert capsys.readouterr().out == ""
    records = [json.loads(line) for line in out_file.read_text().splitlines()]
    header, events = records[0], records[1:]
    game = bot_game()
    assert header["type"] == "header" and header["format"] == "arcana-companion-game"
    assert header["players"] == list(game.players) and header["seed"] == game.seed
    assert header["moves"] == len(game.moves) and header["ended"] is not None
    assert header["scores"] == {c.value: v for c, v in game.final.scores().items()}
    assert [e["number"] for e in events] == list(range(len(game.moves) + 1))
    assert [e["move"] for e in events[1:]] == list(game.moves)
    assert all(e["type"] == "event" and e["keyframe"] is False for e in events)
    assert events[-1]["state"] == json.loads(dumps(game.final))
    assert sorted(p.name for p in out_file.parent.iterdir()) == ["game.jsonl"]


def test_export_jsonl_flags_keyframes_and_keeps_observations(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]
                                                             ) -> None:
    path = tmp_path / "g.db"
    obs = {"image": "0001.jpg", "calibrated": True, "cards": [], "pyramids": []}
    with GameRecorder.create(path, game="zarcana", edition="looney", players=["red", "blue"],
                             seed=2) as rec:
        rec.record("move", "red: draw 3", observation=obs, keyframe_jpeg=b"\xff\xd8jpeg")
    assert main(["export", str(path), "--format", "jsonl"]) == 0
    lines = capsys.readouterr().out.splitlines()
    event = json.loads(lines[1])
    assert event["keyframe"] is True and event["observation"] == obs
    assert "jpeg" not in lines[1].replace('"keyframe"', "")
    assert open_game(path).keyframe(1) == b"\xff\xd8jpeg"


@pytest.mark.parametrize("content", [None, b"", b"garbage" * 100])
def test_export_of_a_missing_or_bad_file_exits_2(tmp_path: Path, content: bytes | None,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.db"
    if content is not None:
        path.write_bytes(content)
    assert main(["export", str(path), "--format", "jsonl"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"companion export: error: {path}: ")
    assert "Traceback" not in captured.err


def test_export_refuses_to_overwrite_the_game(games_dir: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    path = games_dir / "zarcana-2024-05-01-153000.db"
    before = path.read_bytes()
    assert main(["export", str(path), "--out", str(path)]) == 2
    assert "the game file itself" in capsys.readouterr().err
    assert path.read_bytes() == before


def test_export_jsonl_of_a_garbled_state_names_the_file_and_event(
        games_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import sqlite3

    path = games_dir / "zarcana-2024-05-01-153000.db"
    con = sqlite3.connect(path)
    tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    table = next(t for t in tables
                 if "state" in [c[1] for c in con.execute(f"PRAGMA table_info({t})")])
    # (by hand: the file's triggers keep the events append-only)
    for (trigger,) in con.execute("SELECT name FROM sqlite_master WHERE type='trigger'"
                                  ).fetchall():
        con.execute(f"DROP TRIGGER {trigger}")
    con.execute(f"UPDATE {table} SET state = '{{not json' WHERE number = 3")
    con.commit()
    con.close()
    assert main(["export", str(path), "--format", "jsonl"]) == 2
    err = capsys.readouterr().err
    assert f"{path}: the stored state of event 3 is not JSON" in err and "Traceback" not in err


def test_text_that_is_not_utf8_is_read_with_a_replacement_character(
        games_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One byte not UTF-8 in an event's player or note, or in the game's players, made the
    whole game unreadable for export and replay, while `companion games` listed it."""
    import sqlite3

    from companion.recording import rebuild_state

    path = games_dir / "zarcana-2024-05-01-153000.db"
    con = sqlite3.connect(path)
    for (trigger,) in con.execute("SELECT name FROM sqlite_master WHERE type='trigger'"
                                  ).fetchall():
        con.execute(f"DROP TRIGGER {trigger}")
    con.execute("UPDATE event SET player = CAST(? AS TEXT), note = CAST(? AS TEXT) "
                "WHERE number = 5", (b"bl\xffue", b"n\xc3ote"))
    con.commit()
    con.close()
    game = open_game(path)
    assert game.event(5).player == "bl\ufffdue" and game.event(5).note == "n\ufffdote"
    assert rebuild_state(game) is not None
    assert main(["export", str(path), "--format", "jsonl"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert json.loads(lines[6])["player"] == "bl\ufffdue"
    con = sqlite3.connect(path)
    con.execute("UPDATE game SET players = CAST(? AS TEXT)",
                (json.dumps(list(bot_game().players)).encode().replace(b"red", b"r\xffd"),))
    con.commit()
    con.close()
    assert open_game(path).players[0] == "r\ufffdd"
    assert main(["export", str(path), "--format", "text"]) == 0
    assert "r\ufffdd" in capsys.readouterr().out


def test_a_hand_edited_turn_that_is_no_number_names_the_file_and_event(
        games_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A turn of 'abc' (SQLite keeps what a hand edit writes) gave "internal error
    (ValueError ...)" in export, replay and run."""
    import sqlite3

    path = games_dir / "zarcana-2024-05-01-153000.db"
    con = sqlite3.connect(path)
    for (trigger,) in con.execute("SELECT name FROM sqlite_master WHERE type='trigger'"
                                  ).fetchall():
        con.execute(f"DROP TRIGGER {trigger}")
    con.execute("UPDATE event SET turn = 'abc' WHERE number = 2")
    con.commit()
    con.close()
    assert main(["export", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}: the turn of event 2 is not a whole number: 'abc'" in err, err


def test_games_lists_a_game_file_of_any_name_and_a_log_without_its_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`play --record game.sqlite` makes a game file that `games` did not list (only
    *.db); a game's log left without its file was not listed either, though it holds the
    moves."""
    folder = tmp_path / "games"
    record_bot_game(folder / "tuesday.sqlite", bot_game(), moves=12)
    (folder / "notes.txt").write_text("not a game")
    (folder / "lost.db-wal").write_bytes(b"\x37\x7f\x06\x82" + bytes(4000))
    assert main(["games", "--dir", str(folder)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"1 recorded game(s) in {folder}, 1 broken file(s):"
    assert out[1].split()[0] == "lost.db-wal" and "put that file back beside it" in out[1]
    assert out[2].split()[0] == "tuesday.sqlite" and "12 move(s)  not finished" in out[2]


def test_export_never_writes_over_another_recorded_game(
        games_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    done, partial = sorted(games_dir.glob("*.db"))
    before = done.read_bytes()
    assert main(["export", str(partial), "--out", str(done)]) == 2
    assert "that is a recorded game" in capsys.readouterr().err
    assert done.read_bytes() == before


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="needs FIFOs")
def test_export_to_a_fifo_writes_it_and_never_reads_it(games_dir: Path, tmp_path: Path) -> None:
    """The check that --out is no game file opened it for reading: a FIFO (or a pipe)
    with no writer held the export forever."""
    import os
    import threading

    path = games_dir / "zarcana-2024-05-01-153000.db"
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    codes: list[int] = []

    def read() -> None:
        with open(fifo, "rb") as fh:
            got.append(fh.read())

    exporter = threading.Thread(target=lambda: codes.append(
        main(["export", str(path), "--format", "jsonl", "--out", str(fifo)])), daemon=True)
    exporter.start()
    exporter.join(1.0)      # (before the fix it hung here, in its check, with no reader)
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    exporter.join(10.0)
    reader.join(10.0)
    assert codes == [0] and not exporter.is_alive()
    assert got and json.loads(got[0].splitlines()[0])["type"] == "header"


def test_export_to_its_own_stdout_piped_on_does_not_hang(games_dir: Path) -> None:
    import subprocess
    import sys

    path = games_dir / "zarcana-2024-05-01-153000.db"
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-m", "companion.cli", "export", str(path),
                           "--format", "jsonl", "--out", "/dev/stdout"], cwd=root,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[0])["type"] == "header"


@pytest.mark.parametrize("ending", ["-wal", "-shm", "-journal"])
def test_export_refuses_the_name_of_a_games_sqlite_side_file(
        games_dir: Path, ending: str, capsys: pytest.CaptureFixture[str]) -> None:
    """SQLite removes or empties GAME.db-wal (-shm, -journal) when the game is next opened:
    an export written there was deleted without a word."""
    done, partial = sorted(games_dir.glob("*.db"))
    out = done.with_name(done.name + ending)
    assert main(["export", str(partial), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"beside the game file {done}" in err and "Traceback" not in err
    assert not out.exists()


def test_an_unfinished_games_text_export_gives_the_scores_so_far(
        games_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    partial = sorted(games_dir.glob("*.db"))[1]
    assert main(["export", str(partial), "--format", "text"]) == 0
    out = capsys.readouterr().out.splitlines()
    at_12 = bot_game().states[11]
    assert out[-2:] == ["the game was not finished", "scores so far: " + ", ".join(
        f"{c.value} {v}" for c, v in at_12.scores().items())]


def test_text_export_names_an_event_kind_it_does_not_know_and_goes_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """An event of a kind this version does not know (a newer companion's file) was written
    as a "note", its move dropped: it is named as it is, and the events after it still
    come."""
    import companion.recording.store as store

    path = tmp_path / "g.db"
    with monkeypatch.context() as newer:      # a companion that knows one kind more
        newer.setattr(store, "KINDS", (*store.KINDS, "pause"))
        newer.setattr(store, "_SCHEMA", store._SCHEMA.replace("'note')", "'note', 'pause')"))
        with GameRecorder.create(path, game="zarcana", edition="looney",
                                 players=["red", "blue"]) as rec:
            rec.record("move", "red: draw 3")
            rec.record("pause", "red: waits")
            rec.record("note", None, note="after the pause")
    assert main(["export", str(path)]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("    2 "))
    assert line.endswith("unknown event kind 'pause': red: waits"), line
    assert "note: after the pause" in out


def test_export_text_names_a_card_built_face_down_once_a_correction_names_it(
        face_down_named_game: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A Wheel of Fortune build ("build 1,0 =?"), its card named later (by the players, or
    read off the discard pile as it was destroyed): the text record's line of the build
    said "=?" still, as the window's move log did. The move stays as recorded."""
    build = "red: play major-10 by red1E@0,0: build 1,0 =?"
    assert main(["export", str(face_down_named_game)]) == 0
    out = capsys.readouterr().out
    assert f"{build} (face down: cups-05)" in out, out
    assert "blue: draw 1\n" in out and "note: the face-down card at 1,0 is cups-05" in out


@pytest.mark.parametrize("when", ["before", "after", None])
def test_export_text_names_the_card_the_alchemist_covered_once_a_correction_names_it(
        capsys: pytest.CaptureFixture[str], alchemist_covered_game: Any,
        when: str | None) -> None:
    """The Alchemist's two builds from a draw pile nobody sees ("build 1,0 =?; build 1,0
    =wands-07"), the first card covered at once; a later attack uncovers it and the camera
    sees it, cups-04: a correction names it (``covered-name before|after 1,0 cups-04``,
    recorded before the attack, or after it where it was clicked first). The text record's
    line of the Alchemist said "=?" still, where a card built face down and named later is
    named on its build's line. The move stays as recorded; a covered card never seen
    (``when`` None) stays unnamed."""
    alchemist = "red: play major-09 as alchemist by red1E@0,0: build 1,0 =?; build 1,0 =wands-07"
    attack = "blue: play swords-03 by blue1N@1,1: attack @1,0"
    path = alchemist_covered_game(when)
    assert main(["export", str(path)]) == 0
    out = capsys.readouterr().out
    line = f"{alchemist} (covered: cups-04)" if when else alchemist
    assert f"{line}\n" in out, out
    assert f"{attack}\n" in out and "red: draw 1\n" in out, out


def test_export_of_a_game_file_whose_name_is_not_utf8_writes_its_record(
        games_dir: Path, tmp_path: Path) -> None:
    """A game file named in bytes that are not UTF-8 (a Latin-1 locale's é): the record
    names its file, and writing it failed ("internal error (UnicodeEncodeError ...)"); the
    JSON lines carried a "\\udce9" escape strict parsers refuse. The odd byte is U+FFFD."""
    import os

    odd = games_dir / os.fsdecode(b"partie-\xe9.db")
    (games_dir / "zarcana-2024-05-01-153000.db").rename(odd)
    text, lines = tmp_path / "g.txt", tmp_path / "g.jsonl"
    assert main(["export", str(odd), "--out", str(text)]) == 0
    assert main(["export", str(odd), "--format", "jsonl", "--out", str(lines)]) == 0
    assert f"file:      {games_dir}/partie-\ufffd.db\n" in text.read_text(encoding="utf-8")
    header = json.loads(lines.read_text(encoding="utf-8").splitlines()[0])
    assert header["file"] == f"{games_dir}/partie-\ufffd.db"
    assert "\\udc" not in lines.read_text(encoding="utf-8")
