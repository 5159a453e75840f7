"""The game file: round trips, event kinds, replays that check themselves, misuse."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import pytest

from companion.core.errors import CompanionError
from companion.games.zarcana.engine import dumps, loads, new_game
from companion.games.zarcana.table import game_from_table
from companion.recording import (
    GameRecorder,
    GameSummary,
    RecordingError,
    default_games_dir,
    list_games,
    new_game_path,
    open_game,
    rebuild_state,
    replay_states,
)
from recording_support import bot_game, record_bot_game

# The smallest JPEG-looking bytes: the store checks the start-of-image marker only.
JPEG = b"\xff\xd8\xff\xe0" + bytes(range(256)) + b"\xff\xd9"


def test_whole_bot_game_round_trip(tmp_path: Path) -> None:
    game = bot_game()
    path = tmp_path / "g.db"
    record_bot_game(path, game)
    rec = open_game(path)
    assert (rec.game, rec.edition, rec.players, rec.seed) == ("zarcana", "looney",
                                                             game.players, game.seed)
    assert rec.settings == game.start.settings.to_dict()
    assert rec.moves() == list(game.moves)
    assert [e.number for e in rec.events] == list(range(len(game.moves) + 1))
    assert rec.events[0].kind == "start" and rec.events[0].state == dumps(game.start)
    final = game.final
    assert rec.finished and rec.ended is not None and rec.ended >= rec.created
    assert rec.scores == {c.value: v for c, v in final.scores().items()}
    assert rec.winners == tuple(c.value for c in final.winners())
    # Player and turn come from the move text and the states without being passed.
    first = rec.events[1]
    assert first.player == game.moves[0].split(":")[0]
    assert first.turn == game.start.turn_number
    turns = [e.turn for e in rec.events[1:]]
    assert turns == [s.turn_number for s in (game.start, *game.states[:-1])]
    assert dumps(rebuild_state(rec)) == dumps(final)
    # Reading leaves no journal files behind.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.db"]


def test_seeded_game_without_a_start_event_is_dealt_again(tmp_path: Path) -> None:
    game = bot_game()
    path = tmp_path / "g.db"
    with GameRecorder.create(path, game="zarcana", edition="looney", players=game.players,
                             settings=game.start.settings.to_dict(), seed=game.seed) as rec:
        for move in game.moves[:30]:
            assert rec.record("move", move) >= 1
    rec_game = open_game(path)
    assert rec_game.events[0].number == 1 and not rec_game.finished
    assert dumps(rebuild_state(rec_game)) == dumps(game.states[29])
    steps = list(replay_states(rec_game))
    assert steps[0][0] is None and dumps(steps[0][1]) == dumps(game.start)
    assert [dumps(s) for _, s in steps[1:]] == [dumps(s) for s in game.states[:30]]


def test_camera_game_replays_from_its_start_state(tmp_path: Path) -> None:
    cards = {(0, 0): "pentacles-02", (1, 0): "pentacles-03", (0, 1): "pentacles-05",
             (1, 1): "pentacles-06"}
    start = game_from_table(["red", "blue"], cards)
    moves = ["red: start 0,0", "blue: draw 2", "red: reorient red1U@0,0>E"]
    path = tmp_path / "cam.db"
    obs = {"image": "frame-0001.jpg", "calibrated": True,
           "cards": [{"id": "pentacles-02", "center_mm": [100.0, 80.5], "angle_deg": 90.0,
                      "confidence": 0.97}], "pyramids": []}
    with GameRecorder.create(path, game="zarcana", edition="looney", players=["red", "blue"],
                             settings=start.settings.to_dict()) as rec:
        assert rec.record("start", None, state=dumps(start), keyframe_jpeg=JPEG) == 0
        st = start
        for k, move in enumerate(moves):
            st = st.apply(move)
            rec.record("move", move, observation=obs if k != 1 else None,
                       keyframe_jpeg=JPEG if k != 1 else None, state=dumps(st))
        rec.record("note", None, note="blue drew with the lights off\nsecond line")
    game = open_game(path)
    assert game.seed is None and game.moves() == moves
    assert game.events[1].observation == obs and game.events[2].observation is None
    assert [e.has_keyframe for e in game.events] == [True, True, False, True, False]
    assert game.keyframe(1) == JPEG and game.keyframe(2) is None
    assert game.events[-1].kind == "note" and game.events[-1].note.startswith("blue drew")
    assert dumps(rebuild_state(game)) == dumps(st)


def test_override_and_correction_take_the_stored_state(tmp_path: Path) -> None:
    game = bot_game()
    start = game.start
    after_draw = start.apply("red: draw 3")
    # The players let blue draw out of turn: the engine refuses it, the table is what it is.
    accepted = loads(dumps(after_draw))
    path = tmp_path / "g.db"
    with GameRecorder.create(path, game="zarcana", edition="looney", players=game.players,
                             seed=game.seed, settings=start.settings.to_dict(),
                             initial_state=dumps(start)) as rec:
        rec.record("override", "blue: draw 3", state=dumps(accepted), note="agreed by all")
        corrected = accepted.apply("blue: draw 2")
        rec.record("move", "blue: draw 2", state=dumps(corrected))
        rec.record("correction", "cups-03 at 1,1 was cups-08", state=dumps(corrected))
    rec_game = open_game(path)
    assert rec_game.moves() == ["blue: draw 3", "blue: draw 2"]
    assert [e.kind for e in rec_game.events] == ["start", "override", "move", "correction"]
    assert rec_game.events[1].player == "blue" and rec_game.events[1].note == "agreed by all"
    assert dumps(rebuild_state(rec_game)) == dumps(corrected)


def test_override_refused_without_a_stored_state_names_the_event(tmp_path: Path) -> None:
    game = bot_game()
    path = tmp_path / "g.db"
    with GameRecorder.create(path, game="zarcana", edition="looney", players=game.players,
                             seed=game.seed, initial_state=dumps(game.start)) as rec:
        rec.record("move", game.moves[0])
        rec.record("override", "red: draw 3")   # red again: not red's turn
    with pytest.raises(RecordingError, match=r"g\.db: event 2 \(override 'red: draw 3'\): "
                                             r"the engine refuses"):
        rebuild_state(open_game(path))


def test_a_stored_state_that_disagrees_is_named(tmp_path: Path) -> None:
    game = bot_game()
    path = tmp_path / "g.db"
    with GameRecorder.create(path, game="zarcana", edition="looney", players=game.players,
                             seed=game.seed, initial_state=dumps(game.start)) as rec:
        for k in range(4):
            # Event 3 stores the state after the wrong move.
            state = game.states[k] if k != 2 else game.states[3]
            rec.record("move", game.moves[k], state=dumps(state))
    with pytest.raises(RecordingError, match=r"event 3 \(move .*disagrees.*differs in: .*"
                                             r"history"):
        rebuild_state(open_game(path))


def test_a_start_the_seed_does_not_deal_is_named(tmp_path: Path) -> None:
    other = new_game(3, seed=6)
    path = tmp_path / "g.db"
    GameRecorder.create(path, game="zarcana", edition="looney", players=["red", "blue", "green"],
                        seed=5, initial_state=dumps(other)).close()
    with pytest.raises(RecordingError, match=r"event 0 \(start\).*seed 5"):
        rebuild_state(open_game(path))


def test_no_start_and_no_seed_cannot_be_replayed(tmp_path: Path) -> None:
    path = tmp_path / "g.db"
    with GameRecorder.create(path, game="zarcana", edition="looney",
                             players=["red", "blue"]) as rec:
        rec.record("move", "red: draw 3")
    with pytest.raises(RecordingError, match="no start position and no seed"):
        rebuild_state(open_game(path))


def test_other_games_are_stored_but_not_replayed(tmp_path: Path) -> None:
    path = tmp_path / "h.db"
    with GameRecorder.create(path, game="homeworlds", edition="", players=["ann", "bob"],
                             settings={"stash": 3}) as rec:
        rec.record("move", "ann: build g1")
        rec.finish({"ann": 1, "bob": 0}, ["ann"])
    game = open_game(path)
    assert game.moves() == ["ann: build g1"] and game.events[0].player == "ann"
    with pytest.raises(RecordingError, match="a game of 'homeworlds'") as replayed:
        rebuild_state(game)
    # (the replay command refuses it by the same check, in the same words, and says how to
    # read it instead)
    from companion.commands.replay import refuse_other_rules

    with pytest.raises(CompanionError) as refused:
        refuse_other_rules(game)
    assert str(refused.value).startswith(f"{replayed.value} ("), (refused.value, replayed.value)
    assert f"companion export {path} --format text" in str(refused.value)


def test_resume_continues_numbering_and_turns(tmp_path: Path) -> None:
    game = bot_game()
    path = tmp_path / "g.db"
    record_bot_game(path, game, moves=10)
    with GameRecorder.resume(path) as rec:
        assert rec.events_recorded == 11
        n = rec.record("move", game.moves[10], state=dumps(game.states[10]))
        assert n == 11
    rec_game = open_game(path)
    assert rec_game.events[-1].turn == game.states[9].turn_number
    assert dumps(rebuild_state(rec_game)) == dumps(game.states[10])


def test_misuse_is_refused_with_the_file_named(tmp_path: Path) -> None:
    path = tmp_path / "g.db"
    rec = GameRecorder.create(path, game="zarcana", edition="looney", players=["red", "blue"],
                              seed=1)
    name = r"g\.db: "
    with pytest.raises(RecordingError, match=name + "unknown event kind 'jump'"):
        rec.record("jump", "red: draw 3")
    with pytest.raises(RecordingError, match=name + "a move event needs the move text"):
        rec.record("move", None)
    with pytest.raises(RecordingError, match=name + "the keyframe is not a JPEG"):
        rec.record("move", "red: draw 3", keyframe_jpeg=b"\x89PNG\r\n")
    with pytest.raises(RecordingError, match=name + "the observation cannot be stored"):
        rec.record("move", "red: draw 3", observation={"cards": {1, 2}})
    with pytest.raises(RecordingError, match=name + "the state is not a JSON object"):
        rec.record("move", "red: draw 3", state="not json")
    with pytest.raises(RecordingError, match=name + "the start event needs the start state"):
        rec.record("start", None)
    assert rec.record("move", "red: draw 3") == 1   # refusals wrote nothing
    with pytest.raises(RecordingError, match=name + "the start position must come before every move"):
        rec.record("start", None, state=dumps(new_game(2, seed=1)))
    rec.finish({"red": 0, "blue": 0}, ["red", "blue"])
    with pytest.raises(RecordingError, match=name + "the game is finished"):
        rec.record("move", "blue: draw 3")
    assert rec.record("note", None, note="a note after the end is fine") == 2
    with pytest.raises(RecordingError, match=name + "the game is finished"):
        rec.finish({"red": 1}, ["red"])
    rec.close()
    rec.close()   # twice is fine
    with pytest.raises(RecordingError, match=name + "the recorder is closed"):
        rec.record("note", None, note="late")
    with pytest.raises(RecordingError, match=name + "a file of that name already exists"):
        GameRecorder.create(path, game="zarcana", edition="looney", players=["red", "blue"])
    with pytest.raises(RecordingError, match=r"is a folder; give a file name for the game in it"):
        GameRecorder.create(path.parent, game="zarcana", edition="looney",
                            players=["red", "blue"])
    with pytest.raises(RecordingError, match=name + "the game is finished"):
        GameRecorder.resume(path)
    with pytest.raises(RecordingError, match="a player is listed twice"):
        GameRecorder.create(tmp_path / "x.db", game="zarcana", edition="looney",
                            players=["red", "red"])
    assert not (tmp_path / "x.db").exists()
    game = open_game(path)
    assert [e.kind for e in game.events] == ["move", "note"] and game.winners == ("red", "blue")


def test_events_are_append_only(tmp_path: Path) -> None:
    path = tmp_path / "g.db"
    with GameRecorder.create(path, game="zarcana", edition="looney", players=["red", "blue"],
                             seed=1) as rec:
        rec.record("move", "red: draw 3", keyframe_jpeg=JPEG)
    con = sqlite3.connect(path)
    try:
        for sql in ("UPDATE event SET move = 'red: pass'", "DELETE FROM event",
                    "DELETE FROM keyframe"):
            with pytest.raises(sqlite3.DatabaseError, match="append-only"):
                con.execute(sql)
    finally:
        con.close()


def test_threads_share_a_recorder(tmp_path: Path) -> None:
    path = tmp_path / "g.db"
    numbers: list[int] = []
    with GameRecorder.create(path, game="zarcana", edition="looney", players=["red", "blue"],
                             seed=1) as rec:
        def write(k: int) -> None:
            for i in range(10):
                numbers.append(rec.record("note", None, note=f"thread {k} note {i}"))
        threads = [threading.Thread(target=write, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert sorted(numbers) == list(range(1, 41))
    assert len(open_game(path).events) == 40


def test_colours_and_scores_from_the_engine_are_accepted(tmp_path: Path) -> None:
    game = bot_game()
    final = game.final
    path = tmp_path / "g.db"
    with GameRecorder.create(path, game="zarcana", edition="looney",
                             players=list(game.start.players), seed=game.seed) as rec:  # type: ignore[arg-type]
        rec.finish(final.scores(), final.winners())  # type: ignore[arg-type]
    got = open_game(path)
    assert got.players == game.players
    assert got.scores == {c.value: v for c, v in final.scores().items()}


def test_games_folder_and_new_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert default_games_dir() == tmp_path / "data" / "arcana-companion" / "games"
    monkeypatch.setenv("XDG_DATA_HOME", "relative/ignored")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_games_dir() == tmp_path / "home" / ".local/share/arcana-companion/games"
    assert new_game_path().parent == default_games_dir()
    when = datetime(2024, 5, 1, 15, 30, 12)
    first = new_game_path("zarcana", tmp_path / "games", when=when)
    assert first.name == "zarcana-2024-05-01-153012.db"
    GameRecorder.create(first, game="zarcana", edition="looney", players=["red", "blue"],
                        seed=1).close()   # creates the folder
    second = new_game_path("zarcana", tmp_path / "games", when=when)
    assert second.name == "zarcana-2024-05-01-153012-2.db"


def test_settings_json_is_kept_exactly(tmp_path: Path) -> None:
    start = new_game(["red", "blue"], edition="1996", seed=3, layout_cards=4,
                     optional_trumps=(("major-13", "ghost"),), ghost_color="clear")
    path = tmp_path / "g.db"
    GameRecorder.create(path, game="zarcana", edition="1996", players=["red", "blue"],
                        settings=start.settings.to_dict(), seed=3).close()
    game = open_game(path)
    assert game.settings == json.loads(json.dumps(start.settings.to_dict()))
    assert dumps(rebuild_state(game)) == dumps(start)


def test_live_session_kinds_undo_and_illegal(tmp_path: Path) -> None:
    """The kinds the live session records: setup/manual are stored as start/move, an undo
    takes the last move back, an illegal change is kept but changes nothing."""
    cards = {(0, 0): "pentacles-02", (1, 0): "pentacles-03", (0, 1): "pentacles-05",
             (1, 1): "pentacles-06"}
    start = game_from_table(["red", "blue"], cards)
    s1 = start.apply("red: start 0,0")
    s2 = s1.apply("blue: draw 2")
    s2b = s1.apply("blue: draw 1")
    path = tmp_path / "live.db"
    # A seed recorded for a camera game is not used to check its (hidden) start.
    with GameRecorder.create(path, game="zarcana", edition="looney", players=["red", "blue"],
                             settings=start.settings.to_dict(), seed=11) as rec:
        assert rec.record("note", None, note="camera on") == 1   # before the table is dealt
        assert rec.record("setup", None, state=dumps(start), note=None) == 2
        rec.record("move", "red: start 0,0", state=dumps(s1), keyframe_jpeg=JPEG)
        rec.record("manual", "blue: draw 2", state=dumps(s2), note=None)
        rec.record("illegal", "red: start 1,1", player="red", note="illegal: red has pieces")
        rec.record("undo", "blue: draw 2", player="blue", note="took back blue: draw 2")
        rec.record("manual", "blue: draw 1", state=dumps(s2b))
        with pytest.raises(RecordingError, match="start position must come before"):
            rec.record("start", None, state=dumps(start))
    game = open_game(path)
    assert [e.kind for e in game.events] == ["note", "start", "move", "move", "illegal",
                                            "undo", "move"]
    assert [e.undone for e in game.events] == [False] * 3 + [True] + [False] * 3
    assert game.moves() == ["red: start 0,0", "blue: draw 1"]
    assert game.events[3].observation is None and game.events[3].note == ""
    states = list(replay_states(game))
    assert [e.number for e, _ in states if e is not None] == [2, 3, 4, 5, 6, 7]
    assert dumps(states[-2][1]) == dumps(s1)    # after the undo: back to red's move
    assert dumps(rebuild_state(game)) == dumps(s2b)
    (summary,) = list_games(tmp_path)
    assert isinstance(summary, GameSummary) and summary.moves == 2


def test_verify_off_trusts_stored_states(tmp_path: Path) -> None:
    """A correction that changed the position but was recorded without its state breaks the
    check of the next move; without verify the stored states still rebuild the game."""
    game = bot_game()
    moved = game.states[1]
    fixed = loads(dumps(moved))
    fixed.hands = dict(fixed.hands)
    red = fixed.players[0]
    fixed.hands[red] = tuple(reversed(fixed.hands[red]))   # "a misread hand, put right"
    after = fixed.apply(game.moves[2])
    path = tmp_path / "g.db"
    with GameRecorder.create(path, game="zarcana", edition="looney", players=game.players,
                             seed=game.seed, initial_state=dumps(game.start)) as rec:
        rec.record("move", game.moves[0], state=dumps(game.states[0]))
        rec.record("move", game.moves[1], state=dumps(moved))
        rec.record("correction", None, note="red's hand was read in the wrong order")
        rec.record("move", game.moves[2], state=dumps(after))
    recorded = open_game(path)
    with pytest.raises(RecordingError, match=r"event 4 \(move .*differs in: hands"):
        rebuild_state(recorded)
    assert dumps(rebuild_state(recorded, verify=False)) == dumps(after)


def test_a_game_in_a_read_only_folder_is_read(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    game = bot_game()
    done = tmp_path / "done.db"
    record_bot_game(done, game)
    playing = tmp_path / "playing.db"
    recorder = GameRecorder.create(playing, game="zarcana", edition="looney",
                                   players=game.players, seed=game.seed)
    recorder.record("move", game.moves[0], state=dumps(game.states[0]))
    real_access = os.access
    # (as root a chmod does not bite: the folder is made read-only for the store by hand)
    monkeypatch.setattr(os, "access", lambda p, mode: False if Path(p) == tmp_path.resolve()
                        and mode == os.W_OK else real_access(p, mode))
    try:
        # a game closed properly reads whole, and leaves nothing beside it
        assert open_game(done).moves() == list(game.moves)
        assert not (tmp_path / "done.db-shm").exists()
        # one whose log still holds moves cannot be read whole from there: said so
        with pytest.raises(RecordingError, match="read-only and the game's log playing.db-wal "
                                                 "holds moves"):
            open_game(playing)
        # the same through a link from elsewhere: the log is looked for beside the file
        links = tmp_path.parent / f"{tmp_path.name}-links"
        links.mkdir()
        (links / "g.db").symlink_to(playing)
        with pytest.raises(RecordingError, match="game's log playing.db-wal holds moves"):
            open_game(links / "g.db")
    finally:
        recorder.close()


def test_a_game_copied_without_its_log_is_named_so(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A file written before each commit was copied into it (older companions): all of it
    was in the log, and the message says what is missing."""
    configure = GameRecorder._configure

    def as_older_companions(path: Path, con: sqlite3.Connection) -> None:
        configure(path, con)
        con.execute("PRAGMA wal_autocheckpoint = 0")

    monkeypatch.setattr(GameRecorder, "_configure", staticmethod(as_older_companions))
    game = bot_game()
    playing = tmp_path / "playing.db"
    recorder = GameRecorder.create(playing, game="zarcana", edition="looney",
                                   players=game.players, seed=game.seed)
    recorder.record("move", game.moves[0], state=dumps(game.states[0]))
    copy = tmp_path / "copy.db"
    copy.write_bytes(playing.read_bytes())        # the file alone, its -wal left behind
    recorder.close()
    with pytest.raises(RecordingError, match="copied without its copy.db-wal file"):
        open_game(copy)


def test_a_create_that_loses_a_race_for_the_name_leaves_the_winners_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two companions start recording the same new file at once: both see no file yet, the
    first makes it, and the second must refuse without touching it (before, its clean-up
    removed the file the first was recording into: the game lost, nothing said; 27 races
    of 100 in two processes)."""
    from companion.recording.store import check_not_recording

    path = tmp_path / "game.db"
    first = GameRecorder.create(path, game="zarcana", edition="looney", players=["red", "blue"])
    real_exists = Path.exists
    monkeypatch.setattr(Path, "exists", lambda p: False if p == path else real_exists(p))
    # (said as in use: "already exists" sent the user to look for a file they never made)
    with pytest.raises(RecordingError, match="another companion is recording this game"):
        GameRecorder.create(path, game="zarcana", edition="looney", players=["red", "blue"])
    monkeypatch.undo()
    first.record("note", None, note="still here")
    first.close()
    assert [e.note for e in open_game(path).events] == ["still here"]
    # and a file another companion records into right now is said to be in use
    again = GameRecorder.resume(path)
    with pytest.raises(RecordingError, match="another companion is recording this game"):
        check_not_recording(path)
    again.close()
    check_not_recording(path)


def test_a_write_protected_game_is_refused_before_play_not_after(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SQLite opens a write-protected file read-only without a word: continuing it was
    accepted, and every event of the sitting then failed to be written. (The protection is
    stood in for: root writes through mode bits, and chattr needs a file system for it.)"""
    import os

    import companion.recording.store as store

    path = tmp_path / "game.db"
    GameRecorder.create(path, game="zarcana", edition="looney", players=["red", "blue"]).close()
    real_open = os.open

    def refused(error: OSError) -> Callable[..., int]:
        """os.open, refusing to open the game file for writing with ``error``."""
        def opener(name: object, flags: int, *a: object) -> int:
            if Path(str(name)) == path and flags & os.O_RDWR:
                raise error
            return real_open(name, flags, *a)  # type: ignore[arg-type]
        return opener

    monkeypatch.setattr(store.os, "open", refused(PermissionError(13, "Permission denied")))
    with pytest.raises(RecordingError, match="the file is read-only, so the game cannot go on "
                                             "being recorded into it"):
        GameRecorder.resume(path)
    # on a read-only file system (a mount, a camera's card locked): SQLite said only
    # "unable to open database file"
    monkeypatch.setattr(store.os, "open", refused(OSError(30, "Read-only file system")))
    with pytest.raises(RecordingError, match="the file lies on a read-only file system, so the "
                                             "game cannot go on being recorded into it"):
        GameRecorder.resume(path)


def test_another_program_writing_the_file_holds_up_an_event_briefly(tmp_path: Path) -> None:
    """A database browser holding a write lock: the event fails after a short wait (2 s,
    not the connection's 10 s that froze the live game on every event) and is written once
    the lock is let go."""
    from companion.recording.store import WRITE_WAIT_MS, WriteFailed

    path = tmp_path / "game.db"
    rec = GameRecorder.create(path, game="zarcana", edition="looney", players=["red", "blue"])
    assert rec._con is not None
    assert rec._con.execute("PRAGMA busy_timeout").fetchone()[0] == WRITE_WAIT_MS == 2000
    other = sqlite3.connect(str(path), timeout=0.1, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    with pytest.raises(WriteFailed, match="could not be written"):
        rec.record("note", None, note="while locked")
    other.execute("ROLLBACK")
    other.close()
    rec.record("note", None, note="after")
    rec.close()
    assert [e.note for e in open_game(path).events] == ["after"]


def test_a_damaged_page_among_the_pictures_leaves_the_moves_readable(tmp_path: Path) -> None:
    """A bad sector or a worn USB stick hits the pictures' table: the moves are still read
    (export, replay, games) with one line of warning, the pictures as far as they can be,
    and no more is recorded into the file (before, the whole game was refused with a
    hundred lines of page numbers)."""
    path = tmp_path / "game.db"
    rec = GameRecorder.create(path, game="zarcana", edition="looney", players=["red", "blue"])
    for k in range(3):
        rec.record("note", None, note=f"picture {k}", keyframe_jpeg=b"\xff\xd8" + bytes(20000))
    rec.close()
    con = sqlite3.connect(str(path))
    root = con.execute("SELECT rootpage FROM sqlite_master WHERE name = 'keyframe'").fetchone()[0]
    size = con.execute("PRAGMA page_size").fetchone()[0]
    con.close()
    with open(path, "r+b") as fh:
        fh.seek((root - 1) * size)
        fh.write(bytes(size))
    game = open_game(path)
    assert [e.note for e in game.events] == ["picture 0", "picture 1", "picture 2"]
    assert game.keyframe(1) is None
    with pytest.raises(RecordingError) as exc:
        GameRecorder.resume(path)
    assert "the file is damaged in its pictures (" in str(exc.value)
    assert "its moves are intact" in str(exc.value) and "\n" not in str(exc.value)
    assert len(str(exc.value)) < 400


def test_what_a_crash_leaves_while_a_file_is_made_is_known_for_empty(tmp_path: Path) -> None:
    from companion.recording.store import never_made

    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    bare = tmp_path / "bare.db"
    con = sqlite3.connect(str(bare))
    con.execute("PRAGMA journal_mode = WAL")
    con.close()
    game = tmp_path / "game.db"
    GameRecorder.create(game, game="zarcana", edition="looney", players=["red", "blue"]).close()
    text = tmp_path / "notes.db"
    text.write_text("my notes")
    assert [never_made(p) for p in (empty, bare, game, text, tmp_path / "gone.db")] == [
        True, True, False, False, False]


def _padded_game(path: Path, events: int) -> Path:
    rec = GameRecorder.create(path, game="zarcana", edition="looney", players=["red", "blue"])
    for k in range(events):
        rec.record("note", None, note=f"ev {k}", observation={"pad": "y" * 800},
                   keyframe_jpeg=b"\xff\xd8" + bytes(1500))
    rec.close()
    return path


def test_a_file_that_lost_events_is_not_read_as_damaged_only_in_its_pictures(
        tmp_path: Path) -> None:
    """The events' root page written back from an older copy (a write the disk lost): the
    events table checks out alone, but its last 30 events are gone, and their pictures are
    still there. That is a damaged game, refused whole, with the damage said once."""
    path = _padded_game(tmp_path / "g.db", 100)
    con = sqlite3.connect(str(path))
    root = con.execute("SELECT rootpage FROM sqlite_master WHERE name='event'").fetchone()[0]
    con.close()
    old = path.read_bytes()[(root - 1) * 4096: root * 4096]
    rec = GameRecorder.resume(path)
    for k in range(30):
        rec.record("note", None, note=f"late {k}", observation={"pad": "y" * 800},
                   keyframe_jpeg=b"\xff\xd8" + bytes(1500))
    rec.close()
    with open(path, "r+b") as fh:
        fh.seek((root - 1) * 4096)
        fh.write(old)
    with pytest.raises(RecordingError) as exc:
        open_game(path)
    assert str(exc.value).count("the file is damaged") == 1 and "intact" not in str(exc.value)


def test_a_run_that_loses_the_race_for_a_new_file_says_it_is_in_use(tmp_path: Path) -> None:
    """Two `companion run --record NEW.db` at once: the second found the file the first was
    still making (an empty database, its lock held) and called it "not a game file (an
    empty SQLite database)"."""
    import os

    from companion.commands.run import open_recording
    from companion.recording.store import _hold

    path = tmp_path / "new.db"
    con = sqlite3.connect(path)
    con.execute("PRAGMA journal_mode = WAL")      # the header written, no table yet
    held = _hold(path)
    try:
        with pytest.raises(RecordingError, match="another companion is recording this game"):
            open_recording(path, game="zarcana", edition="looney", players=("red", "blue"))
    finally:
        con.close()
        if held is not None:
            os.close(held)


def test_a_new_file_whose_lock_cannot_be_had_is_not_left_behind(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import companion.recording.store as store

    def taken(path: Path) -> int | None:
        raise RecordingError(f"{path}: another companion is recording this game right now")

    monkeypatch.setattr(store, "_hold", taken)
    monkeypatch.setattr(store.time, "sleep", lambda s: None)
    with pytest.raises(RecordingError, match="another companion"):
        GameRecorder.create(tmp_path / "g.db", game="zarcana", edition="looney",
                            players=["red", "blue"])
    assert not (tmp_path / "g.db").exists()


@pytest.mark.parametrize("name", ["g.jsonl", "g.JSONL", "g.json", "g.txt"])
def test_a_game_file_is_never_made_under_another_formats_name(tmp_path: Path,
                                                               name: str) -> None:
    """`run --record g.jsonl` made a SQLite game file under the JSON lines' name (and
    `play --record g.json` one under a JSON name): refused, naming the file and the formats
    accepted, before anything is made."""
    path = tmp_path / name
    with pytest.raises(RecordingError) as err:
        GameRecorder.create(path, game="zarcana", edition="looney", players=["red", "blue"])
    assert str(err.value).startswith(f"{path}: a game file (SQLite) is not made under a name")
    assert ".db, .sqlite, .sqlite3, .db3 or no ending" in str(err.value)
    assert "(.jsonl)" in str(err.value)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["g", "g.db", "g.sqlite", "g.SQLITE3", "g.db3"])
def test_a_game_file_is_made_under_each_name_accepted(tmp_path: Path, name: str) -> None:
    GameRecorder.create(tmp_path / name, game="zarcana", edition="looney",
                        players=["red", "blue"]).close()
    assert open_game(tmp_path / name).players == ("red", "blue")


@pytest.mark.parametrize("name", ["g.db", "g", "g.json"])
def test_a_lines_record_is_never_made_under_another_formats_name(tmp_path: Path,
                                                                 name: str) -> None:
    from companion.recording.store import create_lines_record

    path = tmp_path / name
    with pytest.raises(RecordingError, match="a game record in JSON lines is not made under"):
        create_lines_record(path)
    assert list(tmp_path.iterdir()) == []


def test_events_held_back_are_written_with_the_time_they_happened(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A move held back by a full disk got the time the disk had room again (minutes
    later, or at the end of the game), as did the end of the game: each keeps its own."""
    from datetime import timedelta, timezone

    import companion.recording.store as store
    from companion.recording.store import Backlog, WriteFailed

    clock = [datetime(2026, 3, 1, 20, 0, tzinfo=timezone.utc)]
    monkeypatch.setattr(store, "_now", lambda: clock[0])
    path = tmp_path / "g.db"
    rec = GameRecorder.create(path, game="zarcana", edition="looney", players=["red", "blue"])

    class FullDisk:
        full = True

        def record(self, kind: str, move: str | None, **kw: object) -> int:
            if self.full:
                raise WriteFailed(f"{path}: the disk is full", full=True)
            return rec.record(kind, move, **kw)  # type: ignore[arg-type]

        def finish(self, scores: dict[str, int], winners: list[str], **kw: object) -> None:
            if self.full:
                raise WriteFailed(f"{path}: the disk is full", full=True)
            rec.finish(scores, winners, **kw)  # type: ignore[arg-type]

    disk, backlog = FullDisk(), Backlog()
    backlog.add("record", {"kind": "note", "move": None, "note": "first"})
    assert backlog.write(disk) == "failing"
    clock[0] += timedelta(minutes=3)
    backlog.add("record", {"kind": "note", "move": None, "note": "second"})
    backlog.add("finish", {"scores": {"red": 4, "blue": 6}, "winners": ["blue"]})
    assert backlog.write(disk) == ""
    clock[0] += timedelta(minutes=20)
    disk.full = False
    assert backlog.write(disk) == "recovered" and not backlog.events
    rec.close()
    game = open_game(path)
    start = datetime(2026, 3, 1, 20, 0, tzinfo=timezone.utc)
    assert [(e.note, e.time) for e in game.events] == [
        ("first", start), ("second", start + timedelta(minutes=3))]
    assert game.ended == start + timedelta(minutes=3)


@pytest.mark.parametrize("under", ["g.db", "sub/g.db"])
def test_a_game_file_whose_folder_is_a_file_names_that_file(tmp_path: Path,
                                                            under: str) -> None:
    """The games folder replaced by a file said "cannot create its folder (File exists)"
    (or "Not a directory"), naming no file in the way."""
    games = tmp_path / "games"
    games.write_text("not a folder")
    path = games / under
    with pytest.raises(RecordingError) as err:
        GameRecorder.create(path, game="zarcana", edition="looney", players=["red", "blue"])
    assert str(err.value) == (f"{path}: cannot create its folder ({str(games)!r} is a file, "
                              "not a folder)")
    assert games.read_text() == "not a folder"


@pytest.mark.parametrize("name", ["2026.12.01", "game 1.5", "night.2 at Ann's"])
def test_a_game_file_name_with_a_dot_that_is_no_ending_is_made(tmp_path: Path,
                                                                name: str) -> None:
    """`run --record 2026.12.01` made a game file before names were checked for a format's
    ending; its ".01" was then taken for an ending neither format has, and refused."""
    GameRecorder.create(tmp_path / name, game="zarcana", edition="looney",
                        players=["red", "blue"]).close()
    assert open_game(tmp_path / name).players == ("red", "blue")


def test_an_event_time_given_without_an_offset_is_stored_with_one(tmp_path: Path) -> None:
    """record(at=) and finish(at=) stored a time without an offset from UTC as given, beside
    times that all have one: read back, it could not be compared with them (TypeError)."""
    path = tmp_path / "g.db"
    naive = datetime(2026, 3, 1, 20, 0)
    with GameRecorder.create(path, game="zarcana", edition="looney",
                             players=["red", "blue"]) as rec:
        rec.record("note", None, note="held", at=naive)
        rec.finish({"red": 4, "blue": 6}, ["blue"], at=naive)
    game = open_game(path)
    assert game.events[0].time == naive.astimezone()
    assert game.ended == naive.astimezone()
    assert game.created <= datetime.now().astimezone()
    assert game.events[0].time.utcoffset() is not None and game.ended.utcoffset() is not None


def _evil_eye_on_unnamed_cards(tmp_path: Path, name: str, known: bool,
                               old_marks: list[list[str]]) -> Path:
    """A camera game file (hands and pile unknown, the Evil Eye an optional trump): red's
    Evil Eye marks 2,1 ("?", a card nobody could name, unless ``known``), blue's attack
    destroys the unnamed card at 1,2, red draws; each move's stored marks ``old_marks``."""
    from companion.games.zarcana.engine import position, to_dict

    cards = {"0,0": "pentacles-02", "1,0": "pentacles-03", "2,0": "pentacles-04",
             "0,1": "?", "1,1": "pentacles-06", "2,1": "pentacles-07" if known else "?",
             "0,2": "pentacles-08", "1,2": "?", "2,2": "pentacles-10"}
    start = position(["red", "blue"], edition="1996", board=cards,
                     pieces={"1,1": "red1E", "2,1": "blue1U", "0,1": "blue1U",
                             "2,2": "blue1W"},
                     hands={"red": ["?"] * 3, "blue": ["?"] * 3}, box=[],
                     deck=["?"] * (78 - 9 - 6), optional_trumps=(("major-09", "evil-eye"),))
    moves = ["red: play major-09 as evil-eye by red1E@1,1: mark 2,1",
             "blue: play swords-03 by blue1W@2,2: attack @1,2", "red: draw 1"]
    path = tmp_path / name
    with GameRecorder.create(path, game="zarcana", edition="1996", players=["red", "blue"],
                             settings=start.settings.to_dict(),
                             initial_state=dumps(start)) as rec:
        st = start
        for move, marks in zip(moves, old_marks):
            st = st.apply(move)
            saved = {**to_dict(st), "marks": marks}
            rec.record("move", move, state=json.dumps(saved, sort_keys=True))
    return path


def test_a_game_file_from_before_marks_kept_by_place_replays(tmp_path: Path) -> None:
    """A file written before the Evil Eye's mark was kept by where the card lies: the mark
    on an unnamed card stored as "?", and taken off when blue destroyed another unnamed
    card. Its moves replay (the replay's marks taken from the mark on a "?" card on: the
    card marked stays marked); other marks that disagree are still named."""
    path = _evil_eye_on_unnamed_cards(tmp_path, "old.db", False, [["?"], [], []])
    last = rebuild_state(open_game(path))
    assert last.marks == frozenset({(2, 1)})
    assert {c.value: v for c, v in last.scores().items()} == {"red": 6, "blue": 8}
    known = _evil_eye_on_unnamed_cards(tmp_path, "known.db", True,
                                       [["pentacles-07"], [], []])
    with pytest.raises(RecordingError, match=r"event 2 .*differs in: marks"):
        rebuild_state(open_game(known))
