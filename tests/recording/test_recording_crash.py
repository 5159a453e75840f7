"""Crash safety: a recording process killed with SIGKILL mid-game loses no accepted move."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from companion.games.zarcana.engine import dumps
from companion.recording import GameRecorder, list_games, open_game, rebuild_state
from companion.recording.store import GameSummary
from recording_support import bot_game

ROOT = Path(__file__).resolve().parents[2]

# The child records the seeded bot game and says so after each committed move. After
# KILL_AFTER moves it slows down, so that the kill lands mid-game whatever the machine's load.
CHILD = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, sys.argv[3])
    from bot_games import play_bot_game
    from companion.games.zarcana.engine import dumps
    from companion.recording import GameRecorder

    game = play_bot_game(5)
    kill_after = int(sys.argv[2])
    rec = GameRecorder.create(sys.argv[1], game="zarcana", edition="looney",
                              players=game.players, settings=game.start.settings.to_dict(),
                              seed=game.seed, initial_state=dumps(game.start))
    for k, (move, state) in enumerate(zip(game.moves, game.states), 1):
        rec.record("move", move, state=dumps(state),
                   keyframe_jpeg=b"\\xff\\xd8" + bytes(50_000) + b"\\xff\\xd9")
        print("committed", k, flush=True)
        if k >= kill_after:
            time.sleep(0.05)
    rec.finish({}, [])
    print("finished", flush=True)
""")

KILL_AFTER = 25


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_sigkill_mid_game_keeps_every_committed_move(tmp_path: Path) -> None:
    game = bot_game()
    assert len(game.moves) > KILL_AFTER + 40  # the game cannot end before the kill
    path = tmp_path / "games" / "killed.db"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [
        str(ROOT), os.environ.get("PYTHONPATH")])), OMP_NUM_THREADS="1")
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path), str(KILL_AFTER), str(Path(__file__).parents[1])],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env)
    committed = 0
    deadline = time.monotonic() + 60
    try:
        assert child.stdout is not None
        while committed < KILL_AFTER and time.monotonic() < deadline:
            line = child.stdout.readline()
            if not line:
                break
            committed = int(line.split()[1])
        assert committed == KILL_AFTER, child.stderr.read() if child.stderr else ""
        os.kill(child.pid, signal.SIGKILL)
    finally:
        if child.poll() is None:
            child.kill()
        child.wait(timeout=30)
        for stream in (child.stdout, child.stderr):
            if stream is not None:
                stream.close()
    assert child.returncode == -signal.SIGKILL

    # Every move reported committed is in the file; a move being written may or may not be.
    recorded = open_game(path)
    n = len(recorded.moves())
    assert KILL_AFTER <= n < len(game.moves)
    assert recorded.moves() == list(game.moves[:n])
    assert not recorded.finished
    assert all(e.has_keyframe for e in recorded.events[1:])
    assert dumps(rebuild_state(recorded)) == dumps(game.states[n - 1])
    (summary,) = list_games(path.parent)
    assert isinstance(summary, GameSummary) and summary.moves == n and not summary.finished

    # The game goes on in the same file and ends as the uninterrupted game did.
    with GameRecorder.resume(path) as rec:
        for move, state in zip(game.moves[n:], game.states[n:]):
            rec.record("move", move, state=dumps(state))
        final = game.final
        rec.finish({c.value: v for c, v in final.scores().items()},
                   [c.value for c in final.winners()])
    done = open_game(path)
    assert done.moves() == list(game.moves) and done.finished
    assert [e.number for e in done.events] == list(range(len(game.moves) + 1))
    assert dumps(rebuild_state(done)) == dumps(game.final)


def _recorder_of(path: Path, moves: int) -> GameRecorder:
    game = bot_game()
    rec = GameRecorder.create(path, game="zarcana", edition="looney", players=game.players,
                              settings=game.start.settings.to_dict(), seed=game.seed,
                              initial_state=dumps(game.start))
    for move, state in zip(game.moves[:moves], game.states[:moves]):
        rec.record("move", move, state=dumps(state))
    return rec


def _remove_folder(folder: Path) -> None:
    """The games folder and the game file in it gone, as a clean-up tool would leave it."""
    for p in folder.iterdir():
        p.unlink()
    folder.rmdir()


def test_a_copy_of_the_file_alone_taken_mid_game_holds_the_game_so_far(tmp_path: Path) -> None:
    """Every move used to sit in the -wal log until the file was closed: a backup or a copy
    of the .db alone, mid-game or after a crash, was an empty shell that `games` offered to
    remove. Each commit is now copied into the file itself."""
    rec = _recorder_of(tmp_path / "g.db", 12)
    try:
        (tmp_path / "backup").mkdir()
        (tmp_path / "backup" / "g.db").write_bytes((tmp_path / "g.db").read_bytes())
        assert open_game(tmp_path / "backup" / "g.db").moves() == list(bot_game().moves[:12])
        (listed,) = list_games(tmp_path / "backup")
        assert isinstance(listed, GameSummary) and listed.moves == 12
    finally:
        rec.close()


def test_a_game_file_removed_mid_game_is_written_again_with_every_move(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A clean-up tool or a sync client removing the file used to send every later move
    to a file no one could reach, and the run then said the game was recorded there."""
    game = bot_game()
    rec = _recorder_of(tmp_path / "games" / "g.db", 5)
    try:
        _remove_folder(tmp_path / "games")
        rec.record("move", game.moves[5], state=dumps(game.states[5]))
        assert rec.path == tmp_path / "games" / "g.db"
        assert "removed, moved or replaced" in caplog.text
        rec.record("move", game.moves[6], state=dumps(game.states[6]))
    finally:
        rec.close()
    assert open_game(tmp_path / "games" / "g.db").moves() == list(game.moves[:7])


def test_a_game_file_replaced_mid_game_goes_on_beside_it(tmp_path: Path) -> None:
    """Another file put in its place (an older copy restored by a sync tool) is never
    written over: the game goes on in NAME-restored.db, which the recorder then names."""
    game = bot_game()
    rec = _recorder_of(tmp_path / "g.db", 5)
    try:
        (tmp_path / "g.db").rename(tmp_path / "moved.db")
        (tmp_path / "g.db").write_text("someone else's file")
        rec.record("move", game.moves[5], state=dumps(game.states[5]))
        rec.finish({"red": 1}, ["red"])
        assert rec.path == tmp_path / "g-restored.db"
    finally:
        rec.close()
    assert (tmp_path / "g.db").read_text() == "someone else's file"
    restored = open_game(tmp_path / "g-restored.db")
    assert restored.moves() == list(game.moves[:6]) and restored.finished


def test_a_game_file_that_cannot_be_written_again_is_a_write_failure(tmp_path: Path) -> None:
    """Where the folder is gone and cannot be made again, the event fails as on a full disk
    (the live session keeps it and tries again at the next move); the file it had is not
    lost: once the folder can be made, the game is written again whole."""
    from companion.recording.store import WriteFailed

    game = bot_game()
    rec = _recorder_of(tmp_path / "games" / "g.db", 5)
    try:
        _remove_folder(tmp_path / "games")
        (tmp_path / "games").write_text("a file where the folder was")
        with pytest.raises(WriteFailed, match="cannot be written again"):
            rec.record("move", game.moves[5], state=dumps(game.states[5]))
        (tmp_path / "games").unlink()
        rec.record("move", game.moves[5], state=dumps(game.states[5]))
    finally:
        rec.close()
    assert open_game(tmp_path / "games" / "g.db").moves() == list(game.moves[:6])


def test_a_game_file_removed_while_no_move_comes_is_written_again_on_closing(
        tmp_path: Path) -> None:
    """The game waits for a click, the file is removed, the companion is closed: the run
    then said the game was recorded in a file that was gone."""
    game = bot_game()
    rec = _recorder_of(tmp_path / "g.db", 5)
    for p in tmp_path.iterdir():
        p.unlink()
    rec.close()
    assert open_game(tmp_path / "g.db").moves() == list(game.moves[:5])


def test_a_game_that_cannot_be_written_again_on_closing_is_saved_elsewhere(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The file removed and its folder replaced by a file (or the disk full): closing used
    to only log it and close the one connection that still held the game, and the run then
    said the game was recorded in a file that did not exist. It is saved in the temporary
    folder now, and the recorder names that copy."""
    import tempfile

    game = bot_game()
    rec = _recorder_of(tmp_path / "games" / "g.db", 5)
    _remove_folder(tmp_path / "games")
    (tmp_path / "games").write_text("a file where the folder was")
    (tmp_path / "tmp").mkdir()
    (tmp_path / "cwd").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    monkeypatch.chdir(tmp_path / "cwd")
    rec.close()
    assert rec.path == tmp_path / "tmp" / "g.db" and rec.lost is None
    assert rec.saved_from == tmp_path / "games" / "g.db"
    # (one wording for companion run and companion play)
    assert rec.not_kept() == (f"{tmp_path / 'games' / 'g.db'}: the game file could not be "
                              f"kept there; the game so far is saved to {rec.path} instead")
    assert open_game(rec.path).moves() == list(game.moves[:5])


def test_a_game_that_can_be_saved_nowhere_says_so_and_why(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import companion.recording.store as store

    rec = _recorder_of(tmp_path / "games" / "g.db", 5)
    _remove_folder(tmp_path / "games")
    (tmp_path / "games").write_text("a file where the folder was")
    monkeypatch.setattr(store, "_fallback_folders", lambda p: [tmp_path / "games" / "tmp"])
    rec.close()
    assert rec.lost is not None and "could not be saved elsewhere" in rec.lost
    assert rec.not_kept() == f"{rec.path}: the game could not be saved: {rec.lost}"
    assert "cannot be written again" in rec.lost and str(tmp_path / "games" / "tmp") in rec.lost


def test_another_database_put_in_the_games_place_is_never_written_into(tmp_path: Path) -> None:
    """The log of the game left beside the name held this game's frames: the next reader
    (`companion games`) applied them to the other database, which came out damaged."""
    import sqlite3
    import subprocess
    import sys

    game = bot_game()
    rec = _recorder_of(tmp_path / "g.db", 5)
    other = tmp_path / "other.db"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE notes (text TEXT)")
    con.execute("INSERT INTO notes VALUES ('mine')")
    con.commit()
    con.close()
    os.replace(other, tmp_path / "g.db")
    try:
        rec.record("move", game.moves[5], state=dumps(game.states[5]))
    finally:
        rec.close()
    # a reader in another process, as `companion games` would be
    subprocess.run([sys.executable, "-c", "import sys; from companion.recording import "
                    "list_games; list_games(sys.argv[1])", str(tmp_path)], check=True,
                   cwd=ROOT)
    con = sqlite3.connect(tmp_path / "g.db")
    try:
        assert con.execute("SELECT text FROM notes").fetchall() == [("mine",)]
        assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    finally:
        con.close()
    assert open_game(tmp_path / "g-restored.db").moves() == list(game.moves[:6])


def test_a_lock_not_had_on_the_new_file_is_a_write_failure_and_loses_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another companion looking at the new file at that moment: the event is held back
    (WriteFailed), and the recorder still writes the whole game at the next try."""
    import companion.recording.store as store
    from companion.recording.store import RecordingError, WriteFailed

    game = bot_game()
    rec = _recorder_of(tmp_path / "g.db", 5)
    for p in tmp_path.iterdir():
        p.unlink()
    real = store._hold
    monkeypatch.setattr(store, "_hold", lambda p: (_ for _ in ()).throw(
        RecordingError(f"{p}: another companion is recording this game right now")))
    try:
        with pytest.raises(WriteFailed, match="cannot be written again"):
            rec.record("move", game.moves[5], state=dumps(game.states[5]))
        monkeypatch.setattr(store, "_hold", real)
        rec.record("move", game.moves[5], state=dumps(game.states[5]))
    finally:
        rec.close()
    assert open_game(tmp_path / "g.db").moves() == list(game.moves[:6])


def test_the_same_file_under_another_inode_number_is_not_written_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A network share that does not keep inode numbers: the file at the name holds this
    very game, so no NAME-restored.db copy is made at every move."""
    import companion.recording.store as store

    game = bot_game()
    rec = _recorder_of(tmp_path / "g.db", 5)
    real = store._identity
    shift = iter(range(1, 1000))
    monkeypatch.setattr(store, "_identity",
                        lambda p: None if (i := real(p)) is None else (i[0], i[1] + next(shift)))
    try:
        for k in range(5, 8):
            rec.record("move", game.moves[k], state=dumps(game.states[k]))
    finally:
        rec.close()
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".db") == ["g.db"]
    assert open_game(tmp_path / "g.db").moves() == list(game.moves[:8])
