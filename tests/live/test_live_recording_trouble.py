"""A game file that cannot be written for a while (a full disk, a lock): the live session
keeps what it could not write, says so once, writes it in order when it can, and says what
is still missing at the end; a second companion cannot record into a game being recorded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from live_support import SCRIPT, sample_record, sample_session, scripted_clicks

from companion.live.session import EventKind, LiveEvent, LiveSession
from companion.recording.store import GameRecorder, RecordingError, WriteFailed, open_game


class FlakyDisk:
    """A real recorder behind a switch: while ``full``, every write fails as on a full disk;
    with ``pictures_too_big``, only the events that carry a keyframe do."""

    def __init__(self, inner: GameRecorder) -> None:
        self.inner = inner
        self.path = inner.path
        self.full = False
        self.pictures_too_big = False
        self.locked = False

    def record(self, kind: str, move: str | None, **kw: Any) -> Any:
        if self.locked:
            raise WriteFailed(f"{self.path}: event ({kind}) could not be written: the "
                              "database is locked")
        if self.full or (self.pictures_too_big and kw.get("keyframe_jpeg") is not None):
            raise WriteFailed(f"{self.path}: event ({kind}) could not be written: the disk "
                              "is full", full=True)
        return self.inner.record(kind, move, **kw)

    def finish(self, scores: Any, winners: Any, **kw: Any) -> Any:
        if self.full:
            raise WriteFailed(f"{self.path}: the end of the game could not be written",
                              full=True)
        return self.inner.finish(scores, winners, **kw)

    def close(self) -> None:
        self.inner.close()


def session_on(path: Path) -> tuple[LiveSession, FlakyDisk, list[LiveEvent]]:
    disk = FlakyDisk(GameRecorder.create(path, game="zarcana", edition=SCRIPT["edition"],
                                         players=SCRIPT["players"]))
    s = sample_session(recorder=disk)
    heard: list[LiveEvent] = []
    s.subscribe(heard.append)
    return s, disk, heard


def play(s: LiveSession, frames: range) -> None:
    clicks = scripted_clicks()
    for k in frames:
        if k in clicks:
            s.manual(clicks[k])
        s.observe(sample_record(k), frame=k, keyframe_jpeg=b"\xff\xd8 a picture")


def kinds(heard: list[LiveEvent]) -> list[EventKind]:
    return [e.kind for e in heard if e.kind in (EventKind.NOT_RECORDED,
                                                 EventKind.RECORDED_AGAIN)]


def test_moves_held_back_on_a_full_disk_are_written_in_order_when_it_has_room(
        tmp_path: Path) -> None:
    path = tmp_path / "game.db"
    s, disk, heard = session_on(path)
    play(s, range(0, 2))
    disk.full = True
    play(s, range(2, 5))
    assert kinds(heard) == [EventKind.NOT_RECORDED]        # said once, not at every move
    said = next(e for e in heard if e.kind is EventKind.NOT_RECORDED)
    assert str(path) in said.text and "the disk is full" in said.text
    held = s.unwritten
    assert held and held == [h.move for h in s.history][-len(held):]
    assert open_game(path).moves() == [h.move for h in s.history][:-len(held)]
    disk.full = False
    play(s, range(5, 7))
    assert kinds(heard) == [EventKind.NOT_RECORDED, EventKind.RECORDED_AGAIN]
    assert s.unwritten == [] and s.record_problem() is None
    assert open_game(path).moves() == [h.move for h in s.history]
    s.close()


def test_the_start_held_back_is_written_before_the_moves_after_it(tmp_path: Path) -> None:
    """(A file with moves and no start could never be replayed or continued.)"""
    path = tmp_path / "game.db"
    s, disk, _ = session_on(path)
    disk.full = True
    play(s, range(0, 3))
    assert s.unwritten[0].startswith("(start") and len(s.unwritten) == 1 + len(s.history)
    disk.full = False
    play(s, range(3, 4))
    recorded = open_game(path)
    assert recorded.events[0].kind == "start"
    assert recorded.moves() == [h.move for h in s.history]
    s.close()


def test_a_move_whose_picture_does_not_fit_is_written_without_it(tmp_path: Path) -> None:
    path = tmp_path / "game.db"
    s, disk, heard = session_on(path)
    disk.pictures_too_big = True
    play(s, range(0, 3))
    assert kinds(heard) == [] and s.unwritten == []
    recorded = open_game(path)
    assert recorded.moves() == [h.move for h in s.history]
    assert not any(e.has_keyframe for e in recorded.events)
    s.close()


def test_what_is_still_missing_at_the_end_is_said(tmp_path: Path) -> None:
    path = tmp_path / "game.db"
    s, disk, _ = session_on(path)
    play(s, range(0, 2))
    disk.full = True
    play(s, range(2, 4))
    s.close()                       # one more try, still full
    problem = s.record_problem()
    assert problem is not None and str(path) in problem and "the disk is full" in problem
    for move in s.unwritten:
        assert move in problem
    # a flagged table's note (every change listed) is cut short there, a move never
    from companion.live.session import UNWRITTEN_NOTE_CHARS

    disk.full = True
    long = "no move explains this change: " + "; ".join(f"{i},0: red small left"
                                                         for i in range(20))
    s._record("illegal", None, note=long)        # as a table no move explains is noted
    said = s.unwritten[-1]
    assert said.startswith("(illegal: no move explains this change: ") and said.endswith("…)")
    assert len(said) <= UNWRITTEN_NOTE_CHARS + len("(illegal: )")


def test_a_second_companion_cannot_record_into_a_game_being_recorded(tmp_path: Path) -> None:
    path = tmp_path / "game.db"
    first = GameRecorder.create(path, game="zarcana", edition="looney",
                                players=["red", "blue"])
    with pytest.raises(RecordingError, match="another companion is recording this game"):
        GameRecorder.resume(path)
    first.close()
    again = GameRecorder.resume(path)   # once the first has let go, it can go on
    again.close()


def test_a_picture_is_kept_when_the_file_was_only_locked(tmp_path: Path) -> None:
    """(Only a full disk costs an event its picture: a lock lets go, and the event is then
    written whole.)"""
    path = tmp_path / "game.db"
    s, disk, _ = session_on(path)
    disk.locked = True
    play(s, range(0, 2))
    disk.locked = False
    play(s, range(2, 3))
    recorded = open_game(path)
    assert recorded.moves() == [h.move for h in s.history]
    assert [e.has_keyframe for e in recorded.events] == [True] * len(recorded.events)
    s.close()


def test_a_move_accepted_after_close_is_said_missing_not_lost_unseen(tmp_path: Path) -> None:
    """The window closes the session while the runner may still be finishing a frame: what
    it accepts then is not written, and is said."""
    path = tmp_path / "game.db"
    s, _, _ = session_on(path)
    play(s, range(0, 2))
    s.close()
    assert s.record_problem() is None
    play(s, range(2, 3))
    problem = s.record_problem()
    assert problem is not None and s.unwritten == [s.history[-1].move]
    assert "the recorder was closed first" in problem
    assert f"`companion run --record {path}` goes on from where it stops" in problem
    assert open_game(path).moves() == [h.move for h in s.history][:-1]

