"""Damaged and foreign files: a clear RecordingError naming the file; the good games still list."""

from __future__ import annotations

import random
import re
import sqlite3
from pathlib import Path

import pytest

from companion.recording import (
    BrokenGame,
    EmptyGame,
    GameRecorder,
    GameSummary,
    RecordingError,
    list_games,
    open_game,
)
from companion.recording.store import SCHEMA_VERSION
from recording_support import bot_game, record_bot_game


@pytest.fixture(scope="module")
def good_bytes(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    path = tmp_path_factory.mktemp("good") / "good.db"
    record_bot_game(path, bot_game(), moves=60, finish=False)
    return path.read_bytes()


def _other_schema(path: Path) -> None:
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE photos (id INTEGER PRIMARY KEY, jpeg BLOB)")
    con.commit()
    con.close()


def _newer_schema(path: Path, good: bytes) -> None:
    path.write_bytes(good)
    con = sqlite3.connect(path)
    con.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    con.commit()
    con.close()


def _no_metadata(path: Path, good: bytes) -> None:
    path.write_bytes(good)
    con = sqlite3.connect(path)
    con.execute("DELETE FROM game")
    con.commit()
    con.close()


def _make_broken(kind: str, path: Path, good: bytes) -> None:
    rng = random.Random(7)
    if kind == "truncated-half":
        path.write_bytes(good[: len(good) // 2])
    elif kind == "truncated-header":
        path.write_bytes(good[:60])
    elif kind == "random-bytes":
        path.write_bytes(rng.randbytes(16384))
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "text":
        path.write_text("notes of the evening's game: red won\n" * 20)
    elif kind == "json-lines":
        # what `companion play --record FILE.jsonl` writes, renamed or given as a game file
        path.write_text('{"game": "zarcana"}\n{"move": "red: start 0,2"}\n')
    elif kind == "other-schema":
        _other_schema(path)
    elif kind == "newer-schema":
        _newer_schema(path, good)
    elif kind == "no-metadata":
        _no_metadata(path, good)
    elif kind == "scribbled-pages":
        data = bytearray(good)
        # Overwrite the middle of the file (past the schema pages) with noise.
        start = len(data) // 3
        data[start:start + 8192] = rng.randbytes(8192)
        path.write_bytes(bytes(data))
    else:  # pragma: no cover
        raise AssertionError(kind)


BROKEN = {
    "truncated-half": "damaged",
    "truncated-header": "damaged|not a game file",
    "random-bytes": "not a game file",
    "empty": "the file is empty",
    "text": "not a game file \\(not an SQLite database\\)",
    "json-lines": "a game record in JSON lines .*, not a game file: it is read as it is",
    "other-schema": "an SQLite database of another kind, with tables photos",
    "newer-schema": "newer version of the companion",
    "no-metadata": "no game metadata",
    "scribbled-pages": "damaged",
}


#: broken files that still give what they hold (:func:`test_a_file_cut_short_...`)
SALVAGED = {"truncated-half"}


@pytest.mark.parametrize("kind", sorted(set(BROKEN) - SALVAGED))
def test_a_broken_file_is_a_clear_error(kind: str, tmp_path: Path, good_bytes: bytes) -> None:
    path = tmp_path / f"{kind}.db"
    _make_broken(kind, path, good_bytes)
    before = path.read_bytes()
    with pytest.raises(RecordingError, match=f"^{re.escape(str(path))}: .*({BROKEN[kind]})") as info:
        open_game(path)
    assert "Traceback" not in str(info.value)
    with pytest.raises(RecordingError, match=f"^{re.escape(str(path))}: "):
        GameRecorder.resume(path)
    assert path.read_bytes() == before   # reading and refusing never change the file


def test_missing_file_and_folder(tmp_path: Path) -> None:
    missing = re.escape(str(tmp_path / "nope.db"))
    with pytest.raises(RecordingError, match=f"^{missing}: no such game file"):
        open_game(tmp_path / "nope.db")
    assert not (tmp_path / "nope.db").exists()   # opening never creates a file
    with pytest.raises(RecordingError, match="is a folder"):
        open_game(tmp_path)
    assert list_games(tmp_path / "no-such-folder") == []


def test_list_games_lists_the_good_ones_beside_the_broken(tmp_path: Path,
                                                          good_bytes: bytes) -> None:
    for kind in BROKEN:
        _make_broken(kind, tmp_path / f"{kind}.db", good_bytes)
    (tmp_path / "a-good.db").write_bytes(good_bytes)
    finished = tmp_path / "b-finished.db"
    record_bot_game(finished, bot_game())
    (tmp_path / "notes.txt").write_text("not a game, not listed")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "nested.db").write_bytes(good_bytes)   # subfolders are not listed
    entries = list_games(tmp_path)
    assert [e.path.name for e in entries] == sorted(e.path.name for e in entries)
    good = {e.path.name: e for e in entries if isinstance(e, GameSummary)}
    broken = {e.path.name: e.reason for e in entries if isinstance(e, BrokenGame)}
    assert set(good) == {"a-good.db", "b-finished.db"}
    # an empty file holds nothing of a game (a companion stopped before the deal): listed
    # as empty, not broken
    assert set(broken) == {f"{k}.db" for k in BROKEN if k != "empty"}
    assert [e.path.name for e in entries if isinstance(e, EmptyGame)] == ["empty.db"]
    assert good["a-good.db"].moves == 60 and not good["a-good.db"].finished
    assert good["b-finished.db"].finished and good["b-finished.db"].scores is not None
    assert "cut short" in broken["truncated-half.db"]
    assert "another kind" in broken["other-schema.db"]


@pytest.mark.parametrize("kept", [0.5, 0.9, -2048])
def test_a_file_cut_short_gives_the_events_before_the_cut(
        kept: float, tmp_path: Path, good_bytes: bytes,
        capsys: pytest.CaptureFixture[str]) -> None:
    """An interrupted copy cuts the file: SQLite refused the whole file as malformed, and
    games, export and replay gave nothing though nearly every event was there. (Cut inside
    its last page, -2048 bytes, the file opened, its missing bytes read as zeros: an
    event's state was "not JSON", and `games` listed it as fine.)"""
    import json

    from companion.cli import main
    from companion.recording import rebuild_state

    path = tmp_path / "cut.db"
    cut = int(len(good_bytes) * kept) if kept > 0 else len(good_bytes) + int(kept)
    path.write_bytes(good_bytes[:cut])
    before = path.read_bytes()
    game = open_game(path)
    n = len(game.events)
    assert 0 < n < 61 and game.cut_short is not None
    assert f"it stops after event {n - 1}" in game.cut_short
    assert [e.number for e in game.events] == list(range(n))
    assert game.moves() == list(bot_game().moves[:n - 1])
    assert list(rebuild_state(game).history) == list(bot_game().moves[:n - 1])
    with pytest.raises(RecordingError, match="damaged"):
        GameRecorder.resume(path)     # (nothing is recorded into a file cut short)
    (listed,) = list_games(tmp_path)
    assert isinstance(listed, BrokenGame) and f"stops after event {n - 1}" in listed.reason
    assert main(["export", str(path), "--format", "jsonl"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == n + 1 and "stops after event" in json.loads(lines[0])["cut_short"]
    assert path.read_bytes() == before
