"""A recorded game continued in a later sitting: the log shows the whole game, the recording
stays one game, and a step back reaches into the earlier sitting."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from live_support import (SCRIPT, play_sample, sample_record, sample_session, scripted_clicks,
                          scripted_moves)

from companion.commands.run import open_recording, restore_recorded_corrections
from companion.live.session import LiveEvent, LiveSession
from companion.recording.store import open_game, rebuild_state
from companion.games.zarcana.engine import ZarcanaState, dumps
from companion.games.zarcana.table import TableView


def sitting(path: Path, frames: range) -> LiveSession:
    recorder, start, history, _, _ = open_recording(
        path, game="zarcana", edition=SCRIPT["edition"], players=tuple(SCRIPT["players"]))
    return play_sample(sample_session(recorder=recorder, initial_state=start,
                                      history=history), frames)


def test_a_continued_game_shows_every_move_and_ends_with_the_true_scores(tmp_path: Path) -> None:
    path = tmp_path / "game.db"
    first = sitting(path, range(0, 9))
    played = [h.move for h in first.history]
    assert played and not first.is_over
    first.close()  # the process ends; the game is not finished

    second = sitting(path, range(0))
    assert [h.move for h in second.history] == played
    assert second.history[0].kind in ("move", "manual")
    assert second.state is not None and dumps(second.state) == dumps(first.state)
    # a step back reaches a move of the first sitting, and the file agrees
    second.step_back()
    assert [h.move for h in second.history] == played[:-1]
    assert dumps(rebuild_state(open_game(path))) == dumps(second.state)
    second.close()

    third = sitting(path, range(8, 24))  # the camera sees the taken-back move again
    moves = [h.move for h in third.history]
    want = scripted_moves()
    assert len(moves) == len(want)
    assert all(got.startswith(exp) for got, exp in zip(moves, want))
    assert third.is_over and third.scores() == SCRIPT["final_scores"]
    third.close()
    assert open_game(path).finished


def test_a_game_file_closed_before_the_deal_is_continued_from_the_next_dealt_table(
        tmp_path: Path) -> None:
    from companion.recording.store import RecordingError

    path = tmp_path / "game.db"
    sitting(path, range(0)).close()          # the window closed before the board was dealt
    second = sitting(path, range(0, 4))
    assert second.history and open_game(path).moves() == [h.move for h in second.history]
    second.close()
    empty = tmp_path / "empty.db"
    sitting(empty, range(0)).close()
    with pytest.raises(RecordingError, match="not yet dealt of red, blue, green"):
        open_recording(empty, game="zarcana", edition=SCRIPT["edition"],
                       players=("red", "blue"))


def test_a_game_not_yet_dealt_is_dealt_with_the_settings_its_file_was_made_with(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A sitting closed before the deal, continued without ``--setting``: the file's
    header kept them (50 cards set aside), so the deal is the one the table made; other
    settings for it are refused rather than mixed."""
    from companion.recording.store import RecordingError

    path = tmp_path / "game.db"
    players = tuple(SCRIPT["players"])
    rec, *_ = open_recording(path, game="zarcana", edition=SCRIPT["edition"], players=players,
                             settings={"box_cards": 50})
    rec.close()
    assert open_game(path).settings == {"box_cards": 50}
    rec, start, history, _, settings = open_recording(
        path, game="zarcana", edition=SCRIPT["edition"], players=players)
    rec.close()
    assert start is None and not history and settings == {"box_cards": 50}
    assert "dealt with its settings: box_cards=50" in capsys.readouterr().out
    with pytest.raises(RecordingError, match="not yet dealt with the settings box_cards=50: "
                                             "give those --setting, none, or a new file"):
        open_recording(path, game="zarcana", edition=SCRIPT["edition"], players=players,
                       settings={"box_cards": 30})


def test_a_record_target_that_is_no_file_is_named(tmp_path: Path) -> None:
    import os

    from companion.recording.store import RecordingError

    if not hasattr(os, "mkfifo"):
        pytest.skip("no named pipes here")
    pipe = tmp_path / "pipe.db"
    os.mkfifo(pipe)
    said = f"{pipe}: not a regular file (a pipe or a device); give a file name for the game"
    with pytest.raises(RecordingError, match=re.escape(said)):
        open_recording(pipe, game="zarcana", edition=SCRIPT["edition"],
                       players=tuple(SCRIPT["players"]))


def test_a_folder_given_as_the_game_file_is_said_so_by_run_and_play_alike(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """``run --record dir.db`` said "not a game file (not a regular file)" of a folder,
    ``play --record dir.db`` "is a folder", and ``play --record dir.jsonl`` "a file of that
    name already exists": one wording now, naming the folder as typed."""
    from companion.cli import main
    from companion.commands.argtypes import user_path
    from companion.recording.store import RecordingError

    monkeypatch.chdir(tmp_path)
    said = []
    for name in ("dir.db", "dir.jsonl"):
        (tmp_path / name).mkdir()
        with pytest.raises(RecordingError) as run:
            open_recording(user_path(f"./{name}"), game="zarcana", edition=SCRIPT["edition"],
                           players=tuple(SCRIPT["players"]))
        said.append(str(run.value))
        assert main(["play", "zarcana", "--bots", "--quiet", "--record", f"./{name}"]) == 2
        said.append(capsys.readouterr().err.strip().removeprefix("companion play: error: "))
    assert said == [f"./{name}: is a folder; give a file name for the game in it (NAME.db)"
                    for name in ("dir.db", "dir.db", "dir.jsonl", "dir.jsonl")]


def test_a_game_file_of_play_not_yet_dealt_can_be_continued_live(tmp_path: Path) -> None:
    """``play --record`` writes every setting (the defaults too, and the edition) into the
    header: continued by ``run``, only the ones that differ count."""
    from companion.games.zarcana.rules import Settings
    from companion.recording.store import GameRecorder

    path = tmp_path / "play.db"
    settings = Settings(box_cards=50).to_dict()
    GameRecorder.create(path, game="zarcana", edition="looney", players=["red", "blue"],
                        settings=settings).close()
    for given in (None, {"box_cards": 50}, {"box_cards": 50, "hand_size": 3}):
        rec, start, _, _, dealt_with = open_recording(
            path, game="zarcana", edition="looney", players=("red", "blue"), settings=given)
        rec.close()
        assert start is None and dealt_with == {"box_cards": 50}


def test_a_corrected_reading_is_held_again_when_the_game_is_continued(tmp_path: Path) -> None:
    """The camera misreads green's small as lying; the players answer the question (the
    game file keeps the correction, in a line it can read back). The game is continued in a
    new sitting, the camera still misreading it: the correction holds, and no question is
    asked again (before, play stalled until the same question was answered again)."""
    from companion.live.session import EventKind, parse_correction

    def misread() -> dict:
        rec = sample_record(17)
        p = next(p for p in rec["pyramids"] if p["color"] == "green")
        p["upright"], p["pointing_deg"] = False, 90.0
        return rec

    path = tmp_path / "game.db"
    first = sitting(path, range(0, 17))
    first.manual("red: draw 3")
    asked = first.observe(misread(), frame=17)
    assert asked[0].kind is EventKind.QUESTION
    first.correct(asked[0].suggestions[0].correction)
    first.close()
    kept = [ev.move for ev in open_game(path).events if ev.kind == "correction"]
    assert kept == ["pyramid 1,2 green1S=green1U"]
    assert parse_correction(kept[0]) == asked[0].suggestions[0].correction

    second = sitting(path, range(0))
    assert restore_recorded_corrections(second, path) == 1     # as `run --record` does
    again = second.observe(misread(), frame=17)
    assert [e.kind for e in again] == [EventKind.UNCHANGED]
    for k in range(18, 24):
        if k in scripted_clicks():
            second.manual(scripted_clicks()[k])
        second.observe(sample_record(k), frame=k)
    assert second.is_over and second.scores() == SCRIPT["final_scores"]
    second.close()


def test_a_correction_the_game_has_moved_on_from_is_not_held_again(tmp_path: Path) -> None:
    """Red's small at 0,2 is misread as lying W on one picture and corrected; the next
    picture reads it upright, and two moves later red really turns it W. Continued in a
    new sitting, that old correction is not held again: the position has red's small lying
    W, so it would read the true pyramid as upright (a reorient nobody made)."""
    from companion.live.session import EventKind

    def lying(k: int) -> dict:
        rec = sample_record(k)
        p = next(p for p in rec["pyramids"] if p["color"] == "red")
        p["upright"], p["pointing_deg"] = False, 180.0
        return rec

    path = tmp_path / "game.db"
    first = sitting(path, range(0, 5))
    asked = first.observe(lying(4), frame=4)
    assert asked[0].kind is EventKind.QUESTION
    first.correct(next(s.correction for s in asked[0].suggestions if s.move is None))
    for k in range(5, 8):
        first.observe(sample_record(k), frame=k)
    assert first.history[-1].move == "red: reorient red1U@0,2>W"
    first.close()
    second = sitting(path, range(0))
    assert restore_recorded_corrections(second, path) == 0
    for k in range(8, 24):
        if k in scripted_clicks():
            second.manual(scripted_clicks()[k])
        second.observe(sample_record(k), frame=k)
    assert [h.move.split(" =")[0] for h in second.history] == scripted_moves()
    second.close()


def test_a_correction_line_reads_back_as_the_correction() -> None:
    from companion.core.errors import NotationError
    from companion.core.pieces import Color, Pose, Pyramid
    from companion.live.session import (CardCorrection, PyramidCorrection, correction_text,
                                        parse_correction)

    green, blue = Pyramid(Color.GREEN, 1, Pose.S), Pyramid(Color.BLUE, 2, Pose.UP)
    for c in (CardCorrection((1, -2), "cups-01", "cups-07"),
              CardCorrection("discard", "swords-01", "swords-11"),
              CardCorrection((0, 0), "major-04", "back"),
              PyramidCorrection((1, 2), green, green.with_pose(Pose.UP)),
              PyramidCorrection((-1, 2), blue, blue, (2, 2)),
              PyramidCorrection((3, 1), green, None)):
        assert parse_correction(correction_text(c)) == c
    for bad in ("", "card 1,2 cups-01", "pyramid x,y a=b", "move red: draw 3", "card 1,2 a=b=c"):
        with pytest.raises(NotationError):
            parse_correction(bad)


def test_a_named_face_down_card_keeps_its_name_when_a_move_is_taken_back(
        tmp_path: Path) -> None:
    """A Wheel of Fortune build left a face-down territory at 1,1; the players name it, red
    draws, and the draw is taken back. The name stays (the card lay face down there all
    along), in the session as in the game file: continued, the file replays and goes on
    (before, the session forgot the name and the file kept it, and the next move made the
    file unreplayable)."""
    from companion.games.zarcana.engine import position
    from companion.recording.store import GameRecorder

    board = {"0,0": "cups-02", "1,0": "cups-03", "2,0": "cups-04", "0,1": "wands-02",
             "1,1": "~?", "2,1": "wands-04", "0,2": "swords-02", "1,2": "swords-03",
             "2,2": "swords-04"}
    players = ["red", "blue", "green"]
    start = position(players, edition="looney", board=board,
                     pieces={"0,0": "red1U", "2,2": "blue1U", "2,0": "green1U"},
                     hands={"red": ["cups-09"], "blue": ["cups-07"], "green": ["pentacles-04"]})
    path = tmp_path / "game.db"
    rec = GameRecorder.create(path, game="zarcana", edition="looney", players=players,
                              settings=start.settings.to_dict(), initial_state=dumps(start))
    s = LiveSession("zarcana", edition="looney", players=players, recorder=rec,
                    initial_state=start)
    card = sorted(s.state.unseen_cards())[0]
    s.name_card((1, 1), card)
    s.manual("red: draw 1")
    s.step_back()
    assert s.state.board[(1, 1)] == ((card, False),) and s.hidden_cards() == []
    s.close()
    assert rebuild_state(open_game(path)).board[(1, 1)] == ((card, False),)
    rec2, start2, history, _, _ = open_recording(path, game="zarcana", edition="looney",
                                                 players=tuple(players))
    assert start2.board[(1, 1)] == ((card, False),) and history == []
    again = LiveSession("zarcana", edition="looney", players=players, recorder=rec2,
                        initial_state=start2, history=history)
    again.manual("red: draw 1")
    again.close()
    assert rebuild_state(open_game(path)).board[(1, 1)] == ((card, False),)


def _face_down_game(path: Path) -> tuple[list[str], object]:
    from companion.games.zarcana.engine import position

    board = {"0,0": "cups-02", "1,0": "cups-03", "2,0": "cups-04", "0,1": "wands-02",
             "1,1": "~?", "2,1": "wands-04", "0,2": "swords-02", "1,2": "swords-03",
             "2,2": "swords-04"}
    players = ["red", "blue", "green"]
    return players, position(players, edition="looney", board=board,
                             pieces={"0,0": "red1U", "2,2": "blue1U", "2,0": "green1U"},
                             hands={"red": ["cups-09"], "blue": ["cups-07"],
                                    "green": ["pentacles-04"]})


def test_a_card_named_after_a_move_keeps_its_name_in_a_continued_game(tmp_path: Path) -> None:
    """Named after red's draw, then the game continued in a new sitting and the draw taken
    back there: the continued game's start holds the name too (accepted_moves)."""
    from companion.recording.store import GameRecorder

    path = tmp_path / "game.db"
    players, start = _face_down_game(path)
    rec = GameRecorder.create(path, game="zarcana", edition="looney", players=players,
                              settings=start.settings.to_dict(), initial_state=dumps(start))
    s = LiveSession("zarcana", edition="looney", players=players, recorder=rec,
                    initial_state=start)
    s.manual("red: draw 1")
    card = sorted(s.state.unseen_cards())[0]
    s.name_card((1, 1), card)
    s.close()
    rec2, start2, history, _, _ = open_recording(path, game="zarcana", edition="looney",
                                                 players=tuple(players))
    again = LiveSession("zarcana", edition="looney", players=players, recorder=rec2,
                        initial_state=start2, history=history)
    again.step_back()
    assert again.state.board[(1, 1)] == ((card, False),)
    again.manual("red: draw 1")
    again.close()
    assert rebuild_state(open_game(path)).board[(1, 1)] == ((card, False),)


def test_a_file_that_forgot_a_name_on_a_take_back_still_replays(tmp_path: Path) -> None:
    """Before 2026-11-30 a move taken back after a face-down card was named stored the
    position without the name, and so did the moves after it. Such a file still replays,
    the card named."""
    from companion.recording.store import GameRecorder

    path = tmp_path / "old.db"
    players, start = _face_down_game(path)
    rec = GameRecorder.create(path, game="zarcana", edition="looney", players=players,
                              settings=start.settings.to_dict(), initial_state=dumps(start))
    card = sorted(start.unseen_cards())[0]
    named = start.copy()
    named.board[(1, 1)] = ((card, False),)
    drawn = named.apply("red: draw 1")
    rec.record("correction", None, state=dumps(named), note=f"the face-down card is {card}")
    rec.record("move", "red: draw 1", state=dumps(drawn))
    rec.record("undo", None, player="red", state=dumps(start), note="took back red: draw 1")
    rec.record("move", "red: draw 1", state=dumps(start.apply("red: draw 1")))
    rec.close()
    assert rebuild_state(open_game(path)).board[(1, 1)] == ((card, False),)


def test_a_name_is_not_given_to_an_earlier_card_that_lay_at_the_same_place() -> None:
    """A face-down card at 1,0 is sacrificed unseen; a later Wheel of Fortune build lays
    another face-down card there, which the players name. The earlier card is not that
    card: taken back to before the sacrifice, 1,0 is still unnamed."""
    from companion.games.zarcana.engine import position
    from companion.live.session import HistoryEntry

    players = ["red", "blue"]
    s0 = position(players, edition="looney",
                  board={"0,0": "cups-03", "1,0": "~?", "0,1": "swords-02"},
                  pieces={"1,0": "red1U", "0,0": "blue1E"}, deck=["?"] * 69,
                  hands={"red": ["major-12", "?", "?"], "blue": ["major-10", "?", "?"]})
    sacrifice = "red: play major-12 by red1U@1,0: sacrifice"
    s1 = s0.apply(sacrifice)
    s2 = s1.copy()
    s2.board[(1, 0)] = (("?", False),)
    s2.deck = s1.deck[:-1]
    s = LiveSession("zarcana", edition="looney", players=players, initial_state=s0,
                    history=[HistoryEntry.recorded("move", sacrifice, "red", None, s1),
                             HistoryEntry.recorded("override", "blue: wheel build 1,0", "blue",
                                                   None, s2)])
    s.name_card((1, 0), "cups-05")
    s.step_back()
    s.step_back()
    assert s.state.board[(1, 0)] == (("?", False),)


def _face_down_destroyed(path: Path) -> tuple[LiveSession, TableView]:
    """A two-player game recorded to ``path`` where red's Swords territory at 0,0 can
    destroy the face-down card at 1,0, and the table as it starts."""
    from companion.games.zarcana.engine import position
    from companion.recording.store import GameRecorder
    from live_support import MAT

    players = ["red", "blue"]
    start = position(players, edition="1996",
                     board={"0,0": "swords-05", "1,0": "~?", "0,1": "cups-02"},
                     pieces={"0,0": "red1E"}, hands={"red": ["?"] * 3, "blue": ["?"] * 3},
                     deck=["?"] * 68, discard=["wands-03"])
    rec = GameRecorder.create(path, game="zarcana", edition="1996", players=players,
                              settings=start.settings.to_dict(), initial_state=dumps(start))
    return (LiveSession("zarcana", edition="1996", players=players, mat=MAT, recorder=rec,
                        initial_state=start), TableView.of(start))


def test_a_face_down_card_destroyed_is_named_from_the_discard_pile_and_the_file_replays(
        tmp_path: Path) -> None:
    """Red's Swords territory destroys the face-down card at 1,0, which lands face up on
    the discard pile as major-10. The game file kept the move with major-10 on the pile,
    but the move replayed from the position before (the card unknown) puts "?" there: the
    file did not replay ("the replayed state disagrees with the stored one"), and the
    positions the card lay face down in, the start among them, still said "?"."""
    from companion.recording.export import text_lines
    from companion.recording.store import accepted_moves
    from live_support import make_record

    path = tmp_path / "game.db"
    s, view = _face_down_destroyed(path)
    cards = {c: k for c, k in view.cards.items() if c != (1, 0)}
    ev = s.observe(make_record(cards, view.pyramids, discard=["major-10"]), frame=1)
    assert [e.move for e in ev] == ["red: use swords-05 by red1E@0,0: attack @1,0"], \
        [e.text for e in ev]
    assert "major-10 at 1,0 is destroyed" in ev[0].text
    assert s.initial_state.board[(1, 0)] == (("major-10", False),)
    s.close()
    game = open_game(path)
    assert rebuild_state(game).discard == ("wands-03", "major-10")
    first, moves = accepted_moves(game)
    assert first.board[(1, 0)] == (("major-10", False),) and len(moves) == 1
    text = "\n".join(text_lines(game))
    assert "the face-down card at 1,0 is major-10" in text, text


def test_a_face_down_card_destroyed_by_a_click_is_named_from_the_discard_pile(
        tmp_path: Path) -> None:
    """swords-07 on the discard pile fits red playing it from the hand as well as red's
    Swords territory destroying the face-down card at 1,0 that was swords-07: the hand's
    play is taken. The players take it back and click the territory's attack: it put "?"
    on the pile, the picture showing swords-07 was then a change no move explains, and
    the game file held a pile the camera never saw."""
    from companion.live.session import EventKind
    from live_support import make_record

    path = tmp_path / "game.db"
    s, view = _face_down_destroyed(path)
    seen = make_record({c: k for c, k in view.cards.items() if c != (1, 0)}, view.pyramids,
                       discard=["swords-07"])
    ev = s.observe(seen, frame=1)
    assert [e.move for e in ev] == ["red: play swords-07 by red1E@0,0: attack @1,0"], \
        [e.text for e in ev]
    s.step_back()
    ev = s.manual("red: use swords-05 by red1E@0,0: attack @1,0")
    assert [e.kind for e in ev] == [EventKind.ACCEPTED], [e.text for e in ev]
    assert "swords-07 at 1,0 is destroyed" in ev[0].text
    assert s.state.discard == ("wands-03", "swords-07")
    ev = s.observe(seen, frame=2)
    assert [e.kind for e in ev] == [EventKind.UNCHANGED], [e.text for e in ev]
    s.close()
    assert rebuild_state(open_game(path)).discard == ("wands-03", "swords-07")


def test_a_name_misread_off_the_discard_pile_goes_with_the_move_taken_back(
        tmp_path: Path) -> None:
    """The camera reads the destroyed face-down card at 1,0 as major-10 on the pile; it was
    major-11. The name was kept through the take-back, and only a "?" card can be named,
    so the misread stood for good. Taken back, the card is "?" again (in every position it
    lay face down in, and in the game file's replay): the next picture names it major-11,
    and the file replays and exports with major-11."""
    from companion.recording.export import text_lines
    from companion.recording.store import accepted_moves
    from live_support import make_record

    path = tmp_path / "game.db"
    s, view = _face_down_destroyed(path)
    cards = {c: k for c, k in view.cards.items() if c != (1, 0)}
    attack = "red: use swords-05 by red1E@0,0: attack @1,0"
    ev = s.observe(make_record(cards, view.pyramids, discard=["major-10"]), frame=1)
    assert [e.move for e in ev] == [attack], [e.text for e in ev]
    s.step_back()
    assert s.state.board[(1, 0)] == (("?", False),) and s.hidden_cards() == [(1, 0)]
    assert s.initial_state.board[(1, 0)] == (("?", False),)
    assert dumps(rebuild_state(open_game(path))) == dumps(s.state)
    ev = s.observe(make_record(cards, view.pyramids, discard=["major-11"]), frame=2)
    assert [e.move for e in ev] == [attack], [e.text for e in ev]
    assert s.initial_state.board[(1, 0)] == (("major-11", False),)
    s.close()
    game = open_game(path)
    assert rebuild_state(game).discard == ("wands-03", "major-11")
    first, moves = accepted_moves(game)
    assert first.board[(1, 0)] == (("major-11", False),) and len(moves) == 1
    assert "the face-down card at 1,0 is major-11" in "\n".join(text_lines(game))


def test_a_name_the_players_gave_stays_when_the_move_that_destroyed_the_card_is_taken_back(
        tmp_path: Path) -> None:
    """Only a name read off the pile goes with a take-back: one the players gave stays."""
    path = tmp_path / "game.db"
    s, _ = _face_down_destroyed(path)
    s.name_card((1, 0), "major-10")
    s.manual("red: use swords-05 by red1E@0,0: attack @1,0")
    s.step_back()
    assert s.state.board[(1, 0)] == (("major-10", False),)
    s.close()
    assert rebuild_state(open_game(path)).board[(1, 0)] == (("major-10", False),)


def test_a_game_continued_after_a_misread_name_was_taken_back_has_the_card_unnamed(
        tmp_path: Path) -> None:
    """Both pass, red's Swords territory destroys the face-down card (read as major-10)
    and that is taken back: continued in a new sitting, the card is "?" in every position
    (accepted_moves follows the take-back as the replay does)."""
    from live_support import make_record

    path = tmp_path / "game.db"
    s, view = _face_down_destroyed(path)
    s.manual("red: pass")
    s.manual("blue: pass")
    cards = {c: k for c, k in view.cards.items() if c != (1, 0)}
    s.observe(make_record(cards, view.pyramids, discard=["major-10"]), frame=1)
    s.step_back()
    s.close()
    _, start, history, _, _ = open_recording(path, game="zarcana", edition="1996",
                                             players=("red", "blue"))
    assert [st.board[(1, 0)] for st in [start] + [h.state for h in history]] == \
        [(("?", False),)] * 3


def _built_face_down_then_passed(path: Path) -> LiveSession:
    """A two-player game recorded to ``path``: red's Wheel of Fortune build lays 1,0 face
    down, blue passes, and red's Swords territory at 0,0 can destroy that card."""
    from companion.games.zarcana.engine import position
    from companion.recording.store import GameRecorder
    from live_support import MAT

    players = ["red", "blue"]
    start = position(players, edition="looney",
                     board={"0,0": "swords-05", "0,1": "cups-02"}, pieces={"0,0": "red1E"},
                     hands={"red": ["major-10"], "blue": ["?"] * 3}, deck=["?"] * 72)
    rec = GameRecorder.create(path, game="zarcana", edition="looney", players=players,
                              settings=start.settings.to_dict(), initial_state=dumps(start))
    s = LiveSession("zarcana", edition="looney", players=players, mat=MAT, recorder=rec,
                    initial_state=start)
    s.manual("red: play major-10 by red1E@0,0: build 1,0 =?")
    s.manual("blue: pass")
    return s


def test_a_card_built_face_down_is_exported_with_the_name_read_again_after_a_take_back(
        tmp_path: Path) -> None:
    """Red builds 1,0 face down with the Wheel of Fortune, blue passes, red's Swords
    territory destroys it: the pile is read as cups-09, taken back, read again as cups-05.
    The text record's line of the build named cups-09, the name taken back."""
    from companion.recording.export import text_lines
    from live_support import make_record

    path = tmp_path / "game.db"
    s = _built_face_down_then_passed(path)
    build = "red: play major-10 by red1E@0,0: build 1,0 =?"
    view = TableView.of(s.state)
    cards = {c: k for c, k in view.cards.items() if c != (1, 0)}
    for frame, card in ((1, "cups-09"), (2, "cups-05")):
        ev = s.observe(make_record(cards, view.pyramids, discard=["major-10", card]),
                       frame=frame)
        assert [e.move for e in ev] == ["red: use swords-05 by red1E@0,0: attack @1,0"], \
            [e.text for e in ev]
        if card == "cups-09":
            s.step_back()
    s.close()
    text = "\n".join(text_lines(open_game(path)))
    assert f"{build} (face down: cups-05)" in text, text
    assert rebuild_state(open_game(path)).discard[-1] == "cups-05"


def test_a_face_down_card_read_off_the_pile_is_named_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The picture's reading named the destroyed card (table.explain), and the session named
    it again, the move made twice more, to record the name (_face_down_seen); a click of
    the attack named it, and the session again. The name found is taken along now: the
    session's own search is not made on a picture's path, and once on a click's."""
    import companion.live.session as session_module
    from live_support import make_record

    calls: list[str] = []
    real = session_module.face_down_named

    def counted(*args: object, **kw: object) -> object:
        calls.append(str(args[2]))
        return real(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(session_module, "face_down_named", counted)
    s, view = _face_down_destroyed(tmp_path / "game.db")
    cards = {c: k for c, k in view.cards.items() if c != (1, 0)}
    seen = make_record(cards, view.pyramids, discard=["major-10"])
    ev = s.observe(seen, frame=1)
    assert "major-10 at 1,0 is destroyed" in ev[0].text and calls == []
    s.step_back()
    s.manual("red: use swords-05 by red1E@0,0: attack @1,0")
    assert s.state.discard[-1] == "major-10" and calls == ["major-10"]
    assert s.initial_state.board[(1, 0)] == (("major-10", False),)
    s.close()
    assert rebuild_state(open_game(tmp_path / "game.db")).discard[-1] == "major-10"


def test_a_misread_name_goes_with_a_take_back_in_a_later_sitting(tmp_path: Path) -> None:
    """The pile misread as major-10 as red destroyed the face-down card; the game continued
    in a new sitting and the attack taken back there: the card is "?" again (the earlier
    sitting's move did not say that its name was read off the pile, so it stayed)."""
    from live_support import make_record

    path = tmp_path / "game.db"
    s, view = _face_down_destroyed(path)
    cards = {c: k for c, k in view.cards.items() if c != (1, 0)}
    s.observe(make_record(cards, view.pyramids, discard=["major-10"]), frame=1)
    s.close()
    rec, start, history, _, _ = open_recording(path, game="zarcana", edition="1996",
                                               players=("red", "blue"))
    again = LiveSession("zarcana", edition="1996", players=["red", "blue"], recorder=rec,
                        initial_state=start, history=history)
    again.step_back()
    assert again.state.board[(1, 0)] == (("?", False),) and again.hidden_cards() == [(1, 0)]
    again.close()
    assert rebuild_state(open_game(path)).board[(1, 0)] == (("?", False),)


def test_a_name_read_after_a_clicked_attack_goes_with_a_take_back_in_a_later_sitting(
        tmp_path: Path) -> None:
    """Red's attack on the face-down card at 1,0 clicked before the camera saw the pile, and
    the next picture naming the card off the pile (major-10, recorded as a correction after
    the move): a take-back in that sitting forgets the name, as the pile may be misread. The
    same in a later sitting (said last time to keep the name): taken back there, the card is
    "?" again, and the picture of the pile names it anew."""
    from live_support import MAT, make_record

    path = tmp_path / "game.db"
    s, view = _face_down_destroyed(path)
    attack = "red: use swords-05 by red1E@0,0: attack @1,0"
    s.manual(attack)
    assert s.state.discard[-1] == "?"
    cards = {c: k for c, k in view.cards.items() if c != (1, 0)}
    ev = s.observe(make_record(cards, view.pyramids, discard=["major-10"]), frame=1)
    assert "the face-down card destroyed at 1,0 is major-10" in ev[0].text, \
        [e.text for e in ev]
    assert s.initial_state.board[(1, 0)] == (("major-10", False),)
    s.close()
    rec, start, history, _, _ = open_recording(path, game="zarcana", edition="1996",
                                               players=("red", "blue"))
    again = LiveSession("zarcana", edition="1996", players=["red", "blue"], mat=MAT,
                        recorder=rec, initial_state=start, history=history)
    assert [h.move for h in again.history] == [attack]
    again.step_back()
    assert again.state.board[(1, 0)] == (("?", False),) and again.hidden_cards() == [(1, 0)]
    assert again.initial_state.board[(1, 0)] == (("?", False),)
    assert rebuild_state(open_game(path)).board[(1, 0)] == (("?", False),)
    ev = again.observe(make_record(cards, view.pyramids, discard=["major-11"]), frame=2)
    assert [e.move for e in ev] == [attack], [e.text for e in ev]
    assert "major-11 at 1,0 is destroyed" in ev[0].text, ev[0].text
    again.close()
    assert rebuild_state(open_game(path)).discard == ("wands-03", "major-11")


def test_a_name_read_under_the_pile_top_goes_with_a_take_back_in_a_later_sitting(
        tmp_path: Path) -> None:
    """Red's Swords territory destroys the face-down card at 1,0 and blue grows with cups-07
    before the next picture, which shows major-10 under cups-07 on the pile: the card is
    named from under the top (its correction "... seen on the discard pile under cups-07 ...",
    recorded before the attack). Continued in a later sitting, both moves taken back there:
    the card is "?" again, as a take-back in the first sitting leaves it, and in the file."""
    from companion.games.zarcana.engine import position
    from companion.core.pieces import parse_pyramid
    from companion.recording.store import GameRecorder
    from companion.live.session import PILE_NAME_NOTE
    from live_support import MAT, make_record

    players = ["red", "blue"]
    start = position(players, edition="1996",
                     board={"0,0": "swords-05", "1,0": "~?", "0,1": "cups-02"},
                     pieces={"0,0": "red1E", "0,1": "blue1U"},
                     hands={"red": ["?"] * 3, "blue": ["?"] * 3}, deck=["?"] * 68,
                     discard=["wands-03"])
    path = tmp_path / "game.db"
    rec = GameRecorder.create(path, game="zarcana", edition="1996", players=players,
                              settings=start.settings.to_dict(), initial_state=dumps(start))
    s = LiveSession("zarcana", edition="1996", players=players, mat=MAT, recorder=rec,
                    initial_state=start)
    view = TableView.of(start)
    seen = make_record({c: k for c, k in view.cards.items() if c != (1, 0)},
                       {**view.pyramids, (0, 1): (parse_pyramid("blue2U"),)},
                       discard=["wands-03", "major-10", "cups-07"])
    level = {"wands-03": 0, "major-10": 1, "cups-07": 2}
    seen["cards"] = [dict(c, level=level[c["id"]]) if c["id"] in level else c
                     for c in seen["cards"]]
    s.observe(seen, frame=1)
    s.manual("red: draw 1")
    moves = ["red: use swords-05 by red1E@0,0: attack @1,0",
             "blue: play cups-07 by blue1U@0,1: grow", "red: draw 1"]
    assert [h.move for h in s.history] == moves
    assert s.initial_state.board[(1, 0)] == (("major-10", False),)
    s.close()
    notes = [e.note for e in open_game(path).events if e.kind == "correction"]
    assert len(notes) == 1 and f"{PILE_NAME_NOTE} under cups-07" in notes[0], notes
    rec, first, history, _, _ = open_recording(path, game="zarcana", edition="1996",
                                               players=("red", "blue"))
    assert first.board[(1, 0)] == (("major-10", False),)
    again = LiveSession("zarcana", edition="1996", players=players, mat=MAT, recorder=rec,
                        initial_state=first, history=history)
    assert [h.move for h in again.history] == moves
    again.step_back()
    again.step_back()
    # (the attack still stands, and with it the name)
    assert again.state.discard[-1] == "major-10"
    assert again.initial_state.board[(1, 0)] == (("major-10", False),)
    again.step_back()
    assert again.state.board[(1, 0)] == (("?", False),) and again.hidden_cards() == [(1, 0)]
    assert again.initial_state.board[(1, 0)] == (("?", False),)
    again.close()
    assert rebuild_state(open_game(path)).board[(1, 0)] == (("?", False),)


@pytest.mark.parametrize("how, named", [("read, taken back, read again", "cups-05"),
                                         ("read, taken back", None),
                                         ("named by the players, taken back", "cups-09")])
def test_the_export_names_a_face_down_build_as_the_session_left_it(
        tmp_path: Path, how: str, named: str | None) -> None:
    """The export's names of cards built face down (face_down_names) forget a name read off
    the discard pile with the move taken back that destroyed the card, as the engine's
    names_read_off_the_pile tells such a name, and keep one the players gave: over games
    the live session recorded, each as the session's own last position has the card."""
    from companion.recording.export import face_down_names
    from live_support import make_record

    path = tmp_path / "game.db"
    s = _built_face_down_then_passed(path)
    view = TableView.of(s.state)
    cards = {c: k for c, k in view.cards.items() if c != (1, 0)}
    attack = "red: use swords-05 by red1E@0,0: attack @1,0"
    if how.startswith("named"):
        s.name_card((1, 0), "cups-09")
        s.manual(attack)
    else:
        s.observe(make_record(cards, view.pyramids, discard=["major-10", "cups-09"]), frame=1)
    assert s.state.discard[-1] == "cups-09"
    s.step_back()
    if how.endswith("read again"):
        s.observe(make_record(cards, view.pyramids, discard=["major-10", "cups-05"]), frame=2)
        assert s.state.discard[-1] == "cups-05"
    else:
        assert s.state.board[(1, 0)][-1] == (named or "?", False)
    s.close()
    game = open_game(path)
    build = next(e.number for e in game.events if e.move and "=?" in e.move)
    assert face_down_names(game) == ({} if named is None else {build: named})


def test_a_name_read_after_a_clicked_attack_stays_named_in_a_later_sitting(
        tmp_path: Path) -> None:
    """Red's attack on the face-down card at 1,0 clicked before the camera saw the pile, the
    next picture naming the card off the pile (major-10, a correction recorded after the
    move): the first sitting's start shows major-10 at 1,0. The game file's replay named it
    on the pile alone, so a later sitting started with "?" at 1,0; and a move after the
    correction, taken back, went back to "?" on the pile (the file no longer replayed: "the
    replayed state disagrees with the stored one"). The later sitting starts as the first
    one stands, the card named where it lay face down, and a take-back of the attack there
    forgets the name, as in the first."""
    from companion.recording.store import accepted_moves
    from live_support import make_record

    path = tmp_path / "game.db"
    s, view = _face_down_destroyed(path)
    attack = "red: use swords-05 by red1E@0,0: attack @1,0"
    s.manual(attack)
    cards = {c: k for c, k in view.cards.items() if c != (1, 0)}
    ev = s.observe(make_record(cards, view.pyramids, discard=["major-10"]), frame=1)
    assert "the face-down card destroyed at 1,0 is major-10" in ev[0].text, \
        [e.text for e in ev]
    s.manual("blue: draw 1")
    s.step_back()                       # (back to the attack, major-10 on the pile)
    assert s.state.discard == ("wands-03", "major-10")
    first = [dumps(s.initial_state)] + [dumps(h.state) for h in s.history]
    assert s.initial_state.board[(1, 0)] == (("major-10", False),)
    s.close()
    game = open_game(path)
    assert rebuild_state(game).discard == ("wands-03", "major-10")
    start, moves = accepted_moves(game)
    assert [dumps(start)] + [dumps(st) for _, st in moves] == first
    rec, start, history, _, _ = open_recording(path, game="zarcana", edition="1996",
                                               players=("red", "blue"))
    again = LiveSession("zarcana", edition="1996", players=["red", "blue"], recorder=rec,
                        initial_state=start, history=history)
    assert [dumps(again.initial_state)] + [dumps(h.state) for h in again.history] == first
    again.step_back()                   # (the name read off the pile goes with the attack)
    assert again.initial_state.board[(1, 0)] == (("?", False),)
    assert again.state.board[(1, 0)] == (("?", False),)
    again.close()
    assert rebuild_state(open_game(path)).board[(1, 0)] == (("?", False),)


def _pile_name_game(path: Path, how: str) -> str:
    """Red's attack destroys the face-down card at 1,0, named major-10 off the discard pile:
    ``how`` "seen" (the picture of the attack shows it: the correction is recorded before
    the move) or "clicked" (the attack clicked, the next picture shows it: after the move).
    The attack."""
    from live_support import make_record

    s, view = _face_down_destroyed(path)
    attack = "red: use swords-05 by red1E@0,0: attack @1,0"
    if how == "clicked":
        s.manual(attack)
    cards = {c: k for c, k in view.cards.items() if c != (1, 0)}
    s.observe(make_record(cards, view.pyramids, discard=["major-10"]), frame=1)
    assert [h.move for h in s.history] == [attack]
    assert s.initial_state.board[(1, 0)] == (("major-10", False),)
    s.close()
    return attack


def _copied(path: Path, to: Path, *, note: str | None = None, line: bool = True) -> None:
    """The game of ``path`` written again to ``to`` event by event, the corrections that
    named a card off the discard pile with ``note`` for their note (None: as it was), and
    without their line (``line`` False: as a file written before the line has them)."""
    from companion.live.session import PILE_NAME_NOTE
    from companion.recording.store import GameRecorder

    game = open_game(path)
    rec = GameRecorder.create(to, game=game.game, edition=game.edition,
                              players=game.players, settings=game.settings, seed=game.seed)
    for e in game.events:
        named = e.kind == "correction" and PILE_NAME_NOTE in e.note
        rec.record(e.kind, e.move if line or not named else None, player=e.player,
                   observation=e.observation, state=e.state,
                   note=note if named and note is not None else e.note, turn=e.turn, at=e.time)
    rec.close()


def _continued_and_taken_back(path: Path, attack: str) -> LiveSession:
    rec, start, history, _, _ = open_recording(path, game="zarcana", edition="1996",
                                               players=("red", "blue"))
    again = LiveSession("zarcana", edition="1996", players=["red", "blue"], recorder=rec,
                        initial_state=start, history=history)
    assert [h.move for h in again.history] == [attack]
    assert again.initial_state.board[(1, 0)] == (("major-10", False),)
    again.step_back()
    return again


@pytest.mark.parametrize("how, when", [("seen", "before"), ("clicked", "after")])
def test_a_name_read_off_the_pile_is_found_by_the_correction_line_not_its_words(
        tmp_path: Path, how: str, when: str) -> None:
    """A card named off the discard pile goes with a take-back of its attack in a later
    sitting (the pile may have been misread): the continued game found such a name by the
    words of the correction's note ("seen on the discard pile after ..."), so a note worded
    otherwise (by a later version) left the name standing. The correction's line says it
    (``pile-name after 1,0 major-10``), whatever its note says."""
    attack = _pile_name_game(tmp_path / "game.db", how)
    _copied(tmp_path / "game.db", tmp_path / "reworded.db", note="major-10 named at 1,0")
    again = _continued_and_taken_back(tmp_path / "reworded.db", attack)
    assert again.state.board[(1, 0)] == (("?", False),) and again.hidden_cards() == [(1, 0)]
    assert again.initial_state.board[(1, 0)] == (("?", False),)
    again.close()
    assert rebuild_state(open_game(tmp_path / "reworded.db")).board[(1, 0)] == (("?", False),)
    from companion.recording.store import pile_name_read

    corrections = [e for e in open_game(tmp_path / "game.db").events if e.kind == "correction"]
    assert [e.move for e in corrections] == [f"pile-name {when} 1,0 major-10"]
    assert [pile_name_read(e) for e in corrections][0].when == when


@pytest.mark.parametrize("how", ["seen", "clicked"])
def test_a_game_file_written_before_the_correction_line_reads_as_it_did(
        tmp_path: Path, how: str) -> None:
    """A game file written before corrections naming a card off the pile had their line
    (the note's words alone said so) opens, continues and replays as the same game written
    now: the card named where it lay face down, and the name going with a take-back."""
    from companion.recording.store import accepted_moves

    attack = _pile_name_game(tmp_path / "game.db", how)
    _copied(tmp_path / "game.db", tmp_path / "old.db", line=False)
    old, new = open_game(tmp_path / "old.db"), open_game(tmp_path / "game.db")
    assert [e.move for e in old.events if e.kind == "correction"] == [None]
    for a, b in zip(accepted_moves(old)[1], accepted_moves(new)[1]):
        assert dumps(a[1]) == dumps(b[1])
    assert dumps(accepted_moves(old)[0]) == dumps(accepted_moves(new)[0])
    again = _continued_and_taken_back(tmp_path / "old.db", attack)
    assert again.state.board[(1, 0)] == (("?", False),)
    again.close()
    assert rebuild_state(open_game(tmp_path / "old.db")).board[(1, 0)] == (("?", False),)


def test_a_name_read_off_the_pile_is_not_held_as_a_misread_in_a_later_sitting(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The corrections a continued game holds again are the players' fixes of misreads: a
    name read off the pile is none, and is passed over without a word."""
    import logging

    _pile_name_game(tmp_path / "game.db", "clicked")
    rec, start, history, _, _ = open_recording(tmp_path / "game.db", game="zarcana",
                                               edition="1996", players=("red", "blue"))
    again = LiveSession("zarcana", edition="1996", players=["red", "blue"], recorder=rec,
                        initial_state=start, history=history)
    with caplog.at_level(logging.WARNING):
        assert restore_recorded_corrections(again, tmp_path / "game.db") == 0
    assert not caplog.records, [r.getMessage() for r in caplog.records]
    again.close()


def _alchemist_uncovered(path: Path, how: str, events: list[LiveEvent] | None = None
                         ) -> LiveSession:
    """A two-player game recorded to ``path`` with the Alchemist an optional trump: red's
    Alchemist builds twice at 1,0 from the draw pile nobody sees (the first card covered at
    once, "?"), then blue's Swords attack destroys the top card, and the card under it,
    cups-04, comes into view: the picture of the attack shows it (``how`` "seen"), or the
    attack is clicked and the next picture shows it ("clicked"). ``events``: given, the
    session's events of the attack (its click and the picture after it) are added."""
    from alchemist_support import (ALCHEMIST_COVERING, ALCHEMIST_SETTINGS,
                                   ALCHEMIST_UNCOVERING, alchemist_pictures, alchemist_start)
    from live_support import MAT

    from companion.recording.store import GameRecorder

    players = ["red", "blue"]
    settings = ALCHEMIST_SETTINGS
    start = alchemist_start()
    rec = GameRecorder.create(path, game="zarcana", edition="1996", players=players,
                              settings=start.settings.to_dict(), initial_state=dumps(start))
    s = LiveSession("zarcana", edition="1996", players=players, mat=MAT, recorder=rec,
                    settings=settings, initial_state=start)
    covering, uncovering = alchemist_pictures()
    s.observe(covering, frame=1)
    assert [h.move for h in s.history] == [ALCHEMIST_COVERING]
    said: list[LiveEvent] = []
    if how == "clicked":
        said += s.manual(ALCHEMIST_UNCOVERING)
    said += s.observe(uncovering, frame=2)
    if events is not None:
        events += said
    return s


@pytest.mark.parametrize("how, when", [("seen", "before"), ("clicked", "after")])
def test_the_alchemists_covered_card_is_named_when_a_move_uncovers_it(
        tmp_path: Path, how: str, when: str) -> None:
    """The Alchemist's first card, covered at once, lies "?" in the game (no camera saw it).
    Blue's attack destroys the card on top and the camera sees the covered one, cups-04:
    that move was not explained (the table showed a card where the game had "?"), or a
    move that builds cups-04 there was taken instead. The card is named where it lay
    covered, the attack taken as it was made, and the game file says so in a correction
    (``covered-name before|after 1,0 cups-04``) that its replay and a later sitting read."""
    path = tmp_path / "game.db"
    s = _alchemist_uncovered(path, how)
    attack = "blue: play swords-03 by blue1N@1,1: attack @1,0"
    assert [h.move for h in s.history][1:] == [attack]
    assert s.state is not None and s.state.board[(1, 0)] == (("swords-05", True),
                                                             ("cups-04", True))
    # (seen with the attack: named where it lay covered, since the Alchemist built it, and
    # a take-back keeps it; seen after a clicked attack: from the attack on)
    covered = "cups-04" if how == "seen" else "?"
    stack = (("swords-05", True), (covered, True), ("wands-07", True))
    assert s.history[0].state.board[(1, 0)] == stack
    assert "cups-04" not in s.state.unseen_cards()
    played = [dumps(s.initial_state)] + [dumps(h.state) for h in s.history]
    s.close()
    from companion.recording.store import accepted_moves, covered_name_read

    game = open_game(path)
    corrections = [e for e in game.events if e.kind == "correction"]
    assert [e.move for e in corrections] == [f"covered-name {when} 1,0 cups-04"]
    read = covered_name_read(corrections[0])
    assert read is not None and (read.when, read.cell, read.card) == (when, "1,0", "cups-04")
    assert dumps(rebuild_state(game)) == played[-1]
    start, moves = accepted_moves(game)
    if how == "seen":
        assert [dumps(start)] + [dumps(st) for _, st in moves] == played
    else:
        assert dumps(moves[-1][1]) == played[-1]
    # a later sitting: the same game, the name no misread to hold again, and a take-back
    # of the attack leaves the card under the Alchemist's top card as the sitting had it
    rec, start, history, _, _ = open_recording(path, game="zarcana", edition="1996",
                                               players=("red", "blue"))
    again = LiveSession("zarcana", edition="1996", players=["red", "blue"], recorder=rec,
                        initial_state=start, history=history)
    assert dumps(again.state) == played[-1]
    assert restore_recorded_corrections(again, path) == 0
    again.step_back()
    assert again.state is not None and again.state.board[(1, 0)] == stack
    again.close()
    assert rebuild_state(open_game(path)).board[(1, 0)] == again.state.board[(1, 0)]



@pytest.mark.parametrize("how", ["seen", "clicked"])
def test_the_session_says_the_name_of_the_alchemists_covered_card_when_it_is_seen(
        tmp_path: Path, how: str) -> None:
    """Where the attack's own picture shows the covered card, the name went only into the
    correction's note in the game file: the attack's accepted line (the window's status
    line) said "wands-07 at 1,0 is destroyed" and nothing of cups-04, where a card read
    later, after a clicked attack, has a line of its own, and a face-down card read off the
    discard pile is named in the accepted line. The accepted line says it now, in the
    words of the correction; the move and the game file's lines stay as they were."""
    from alchemist_support import ALCHEMIST_UNCOVERING

    from companion.live.session import EventKind

    path = tmp_path / "game.db"
    events: list[LiveEvent] = []
    _alchemist_uncovered(path, how, events).close()
    said = "the card the Alchemist covered at 1,0 is cups-04: seen on the table"
    accepted = [e for e in events if e.kind is EventKind.ACCEPTED]
    assert [e.move for e in accepted] == [ALCHEMIST_UNCOVERING]
    if how == "seen":
        assert said in accepted[0].text, accepted[0].text
    else:
        # (the name came after the clicked attack, on its own line)
        assert said not in accepted[0].text
        assert any(e.kind is EventKind.INFO and e.text.startswith(said) for e in events)
    # (the game file's move line keeps its own note: its correction says the name)
    attack = [e for e in open_game(path).events if e.move == ALCHEMIST_UNCOVERING]
    assert len(attack) == 1 and "Alchemist" not in (attack[0].note or "")


@pytest.mark.parametrize("how", ["seen", "clicked"])
def test_the_move_log_names_the_alchemists_covered_card_as_the_text_record_does(
        tmp_path: Path, how: str) -> None:
    """The live window's move log (gamemodel.move_line) said "=?" on the Alchemist's line
    after the camera named the card it covered, where the text record says "(covered:
    cups-04)": named where it lay covered (the attack seen), or only from the attack on
    (the attack clicked before a picture showed the card). Both say the same now; the
    attack's and the Alchemist's own words stay as they were made."""
    from companion.recording.export import text_lines
    from companion.ui.gamemodel import move_line

    path = tmp_path / "game.db"
    s = _alchemist_uncovered(path, how)
    history = list(s.history)
    s.close()
    states = [h.state for h in history]
    lines = [move_line(h.move, h.state, states[k + 1:]) for k, h in enumerate(history)]
    alchemist = history[0].move
    assert lines == [f"{alchemist} (covered: cups-04)", history[1].move]
    record = "\n".join(text_lines(open_game(path)))
    assert all(line in record for line in lines), record
    # (the position after the Alchemist alone does not know the name where it was clicked)
    assert move_line(alchemist, states[0]) == (lines[0] if how == "seen" else alchemist)


def _alchemist_then_moves_at_once(path: Path, moves: list[str], *, blue: str = "blue1N",
                                  face_down: str | None = None, blue_on: str = "cups-08"
                                  ) -> tuple[LiveSession, str, ZarcanaState]:
    """A two-player game recorded to ``path`` with the Alchemist an optional trump: red's
    Alchemist builds twice at 1,0 from the draw pile nobody sees (seen; the first card,
    covered at once, "?" in the game, cups-04 in truth), then ``moves`` are made and the
    picture after the first is missed: the next shows two moves, the one after that the
    third. ``blue``: blue's pyramid at 1,1, on ``blue_on``. ``face_down``: the card face
    down on top of 0,1 ("?" in the game). The session, the Alchemist's move and the true
    position after it."""
    from live_support import MAT, make_record

    from companion.games.zarcana.engine import position
    from companion.games.zarcana.moves import parse_move
    from companion.recording.store import GameRecorder

    players = ["red", "blue"]
    settings = {"optional_trumps": (("major-09", "alchemist"),)}
    start = position(players, edition="1996",
                     board={"0,0": "cups-03", "1,0": "swords-05",
                            "0,1": ["swords-02"] + (["~?"] if face_down else []),
                            "1,1": blue_on},
                     pieces={"0,0": "red1E", "1,1": blue},
                     hands={"red": ["?"] * 3, "blue": ["?"] * 3},
                     deck=["?"] * (67 if face_down else 68), **settings)
    rec = GameRecorder.create(path, game="zarcana", edition="1996", players=players,
                              settings=start.settings.to_dict(), initial_state=dumps(start))
    s = LiveSession("zarcana", edition="1996", players=players, mat=MAT, recorder=rec,
                    settings=settings, initial_state=start)
    alchemist = "red: play major-09 as alchemist by red1E@0,0: build 1,0 =?; build 1,0 =wands-07"
    true = start.apply(parse_move(alchemist))
    true.board[(1, 0)] = (("swords-05", True), ("cups-04", True), ("wands-07", True))
    if face_down:
        true.board[(0, 1)] = (("swords-02", True), (face_down, False))
    tables = [true]
    for mv in moves:
        tables.append(tables[-1].apply(parse_move(mv)))

    def picture(st: ZarcanaState) -> dict[str, object]:
        view = TableView.of(st)
        rec = make_record(view.cards, view.pyramids, discard=list(st.discard))
        # (the pile's cards surer the higher they lie: its true order the first one tried
        # where the camera cannot tell which covers which)
        for k, card in enumerate(rec["cards"][len(view.cards):][:len(st.discard)]):
            card["confidence"] = 0.9 + 0.01 * k
        return rec

    s.observe(picture(true), frame=1)
    s.observe(picture(tables[2]), frame=2)      # (the picture of the first move missed)
    s.observe(picture(tables[3]), frame=3)
    return s, alchemist, true


@pytest.mark.parametrize("moves, uncovers", [
    (["blue: play swords-03 by blue1N@1,1: attack @1,0", "red: reorient red1E@0,0>N",
      "blue: reorient blue1N@1,1>E"], 0),
    (["blue: reorient blue1N@1,1>E", "red: play swords-03 by red1E@0,0: attack @1,0",
      "blue: reorient blue1E@1,1>S"], 1),
])
def test_the_alchemists_covered_card_is_named_by_two_moves_seen_at_once(
        tmp_path: Path, moves: list[str], uncovers: int) -> None:
    """As above, the picture of the attack (or of the move before it) missed: the next
    one shows two moves, the attack uncovering cups-04 where the game had "?". The two are
    found with the card named, held, and taken when the next picture shows the move after
    them; the card is named where it lay covered, and the game file says so in a
    correction recorded before the attack (``covered-name before 1,0 cups-04``), which its
    replay reads. Before, only a wild pair building cups-04 there explained the table."""
    from companion.recording.store import accepted_moves

    path = tmp_path / "game.db"
    s, alchemist, true = _alchemist_then_moves_at_once(path, moves)
    assert [h.move for h in s.history] == [alchemist] + moves
    assert s.state is not None and s.state.board[(1, 0)] == (("swords-05", True),
                                                             ("cups-04", True))
    for h in s.history[:uncovers + 1]:
        assert h.state.board[(1, 0)] == true.board[(1, 0)]
    played = [dumps(s.initial_state)] + [dumps(h.state) for h in s.history]
    s.close()
    game = open_game(path)
    kinds = [(e.kind, e.move) for e in game.events if e.kind in ("move", "correction")]
    assert kinds == [("move", alchemist)] + [("move", m) for m in moves[:uncovers]] + [
        ("correction", "covered-name before 1,0 cups-04")] + [
        ("move", m) for m in moves[uncovers:]]
    assert dumps(rebuild_state(game)) == played[-1]
    first, replayed = accepted_moves(game)
    assert [dumps(first)] + [dumps(st) for _, st in replayed] == played
    from companion.recording.export import text_lines

    assert f"{alchemist} (covered: cups-04)" in "\n".join(text_lines(game))


def test_two_moves_seen_at_once_name_a_face_down_card_off_the_pile_and_the_covered_one(
        tmp_path: Path) -> None:
    """The two moves seen at once: blue's Swords territory destroys a face-down card
    (cups-02, "?" in the game) onto the discard pile, where red's attack then covers it,
    and red's attack uncovers the Alchemist's covered card, cups-04. The face-down card is named from the
    pile under the top (the first move made again with it named) and the covered one from
    the table: the second move is made again from the position named as it was found
    (before, it was made from the plain one, leaving "?" where the table showed cups-04,
    and the moves were never taken)."""
    path = tmp_path / "game.db"
    moves = ["blue: use swords-08 by blue1W@1,1: attack @0,1",
             "red: play swords-06 by red1E@0,0: attack @1,0",
             "blue: reorient blue1W@1,1>N"]
    s, alchemist, _ = _alchemist_then_moves_at_once(path, moves, blue="blue1W",
                                                    face_down="cups-02", blue_on="swords-08")
    assert [h.move for h in s.history] == [alchemist] + moves
    assert s.state is not None and s.state.board[(1, 0)] == (("swords-05", True),
                                                             ("cups-04", True))
    assert "cups-02" in s.state.discard
    played = dumps(s.state)
    s.close()
    game = open_game(path)
    assert [e.move for e in game.events if e.kind == "correction"] == [
        "pile-name before 0,1 cups-02", "covered-name before 1,0 cups-04"]
    assert dumps(rebuild_state(game)) == played


def test_a_card_the_evil_eye_marked_unnamed_keeps_its_mark_once_named(tmp_path: Path) -> None:
    """The Alchemist's covered card, uncovered by blue's attack clicked before a picture
    showed it, lies "?" face up; red's Evil Eye marks it and blue moves onto it (both
    clicked). The next picture shows it, cups-04, and the game names it from the attack
    on (``covered-name after 1,0 cups-04``). The mark was kept as "?", the card's id then:
    the card named lost it and scored 4. It is the card marked, so it scores -2, in the
    game and in the game file's replay."""
    from live_support import MAT, make_record

    from companion.core.pieces import Color
    from companion.games.zarcana.engine import position, to_dict
    from companion.recording.store import GameRecorder

    players = ["red", "blue"]
    settings = {"optional_trumps": (("major-09", "alchemist"), ("major-11", "evil-eye"))}
    start = position(players, edition="1996",
                     board={"0,0": "cups-03", "1,0": "swords-05", "0,1": "swords-02",
                            "1,1": "cups-08"},
                     pieces={"0,0": "red1E", "1,1": "blue1N"},
                     hands={"red": ["?"] * 3, "blue": ["?"] * 3}, deck=["?"] * 68, **settings)
    path = tmp_path / "game.db"
    rec = GameRecorder.create(path, game="zarcana", edition="1996", players=players,
                              settings=start.settings.to_dict(), initial_state=dumps(start))
    s = LiveSession("zarcana", edition="1996", players=players, mat=MAT, recorder=rec,
                    settings=settings, initial_state=start)
    alchemist = "red: play major-09 as alchemist by red1E@0,0: build 1,0 =?; build 1,0 =wands-07"
    clicked = ["blue: play swords-03 by blue1N@1,1: attack @1,0",
               "red: play major-11 as evil-eye by red1E@0,0: mark 1,0",
               "blue: play wands-04 by blue1N@1,1: move 1,0"]
    true = start.apply(alchemist)
    true.board[(1, 0)] = (("swords-05", True), ("cups-04", True), ("wands-07", True))

    def picture(st: ZarcanaState) -> dict[str, object]:
        view = TableView.of(st)
        return make_record(view.cards, view.pyramids, discard=list(st.discard))

    s.observe(picture(true), frame=1)
    for mv in clicked:
        s.manual(mv)
        true = true.apply(mv)
    assert s.state is not None and s.state.board[(1, 0)][-1] == ("?", True)
    assert to_dict(true)["marks"] == ["cups-04"] and true.scores()[Color.BLUE] == -2
    s.observe(picture(true), frame=2)
    assert [h.move for h in s.history] == [alchemist] + clicked
    st = s.state
    assert st is not None and st.board[(1, 0)] == (("swords-05", True), ("cups-04", True))
    assert to_dict(st)["marks"] == ["cups-04"]
    assert st.scores()[Color.BLUE] == -2
    played = dumps(st)
    s.close()
    game = open_game(path)
    assert [e.move for e in game.events if e.kind == "correction"] == [
        "covered-name after 1,0 cups-04"]
    assert dumps(rebuild_state(game)) == played


@pytest.mark.parametrize("picture", ["none", "hand over it"])
def test_the_players_name_the_alchemists_covered_card_no_picture_named(
        tmp_path: Path, picture: str) -> None:
    """Blue's attack, clicked, uncovers the card red's Alchemist covered at once; no
    picture names it (none came, or a hand lay over it), so it lies face up as "?": no
    power, 0 points to red's pyramid moved onto it. The players could name only a
    face-down card. They name it now: a card the game knows elsewhere is refused, cups-04
    is taken, scores 4 for red and serves red as a territory, and the game file says so
    (``covered-name said 1,0 cups-04``): its replay and a later sitting agree."""
    from alchemist_support import (ALCHEMIST_COVERING, ALCHEMIST_SETTINGS,
                                   ALCHEMIST_UNCOVERING, alchemist_pictures, alchemist_start)
    from live_support import MAT, make_record

    from companion.core.pieces import Color
    from companion.live.session import EventKind, LiveError
    from companion.recording.export import text_lines
    from companion.recording.store import GameRecorder, accepted_moves, covered_name_read
    from companion.ui.gamemodel import move_line

    players = ["red", "blue"]
    start = alchemist_start()
    path = tmp_path / "game.db"
    rec = GameRecorder.create(path, game="zarcana", edition="1996", players=players,
                              settings=start.settings.to_dict(), initial_state=dumps(start))
    s = LiveSession("zarcana", edition="1996", players=players, mat=MAT, recorder=rec,
                    settings=ALCHEMIST_SETTINGS, initial_state=start)
    covering, _ = alchemist_pictures()
    s.observe(covering, frame=1)
    s.manual(ALCHEMIST_UNCOVERING)
    if picture == "hand over it":
        view = TableView.of(start)
        s.observe(make_record({c: v for c, v in view.cards.items() if c != (1, 0)},
                              view.pyramids, discard=["major-09", "wands-07", "swords-03"]),
                  frame=2)
    moved = "red: play wands-04 by red1E@0,0: move 1,0"
    s.manual(moved)
    st = s.state
    assert st is not None and st.board[(1, 0)] == (("swords-05", True), ("?", True))
    assert st.scores()[Color.RED] == 0
    assert s.unnamed_face_up_cards() == [(1, 0)] and s.hidden_cards() == []
    with pytest.raises(LiveError, match="cups-03 cannot be the card at 1,0: it is accounted "
                                        "for elsewhere"):
        s.name_card((1, 0), "cups-03")
    with pytest.raises(LiveError, match="no unnamed card at 0,0"):
        s.name_card((0, 0), "cups-04")
    said = s.name_card((1, 0), "cups-04")
    assert [(e.kind, e.text) for e in said] == [
        (EventKind.INFO, "the card at 1,0 is cups-04: named by the players")]
    st = s.state
    assert st is not None and st.board[(1, 0)] == (("swords-05", True), ("cups-04", True))
    assert s.unnamed_face_up_cards() == [] and st.scores()[Color.RED] == 4
    # (named from the attack on, where it lay on top: in the position the move onto it
    # was made in too, so taking that move back keeps the name)
    assert s.history[1].state.board[(1, 0)] == st.board[(1, 0)]
    s.manual("blue: draw 1")
    grow = "red: use cups-04 by red1U@1,0: grow"
    assert [e.kind for e in s.manual(grow)] == [EventKind.ACCEPTED]
    played = [dumps(s.initial_state)] + [dumps(h.state) for h in s.history]
    states = [h.state for h in s.history]
    s.close()
    # the window's move log and the text record name it on the Alchemist's line
    named = f"{ALCHEMIST_COVERING} (covered: cups-04)"
    assert move_line(ALCHEMIST_COVERING, states[0], states[1:]) == named
    game = open_game(path)
    assert named in "\n".join(text_lines(game))
    corrections = [e for e in game.events if e.kind == "correction"]
    assert [e.move for e in corrections] == ["covered-name said 1,0 cups-04"]
    read = covered_name_read(corrections[0])
    assert read is not None and (read.when, read.cell, read.card) == ("said", "1,0", "cups-04")
    assert dumps(rebuild_state(game)) == played[-1]
    first, moves = accepted_moves(game)
    assert [dumps(first)] + [dumps(st) for _, st in moves] == played
    assert [e.move for e, _ in moves] == [ALCHEMIST_COVERING, ALCHEMIST_UNCOVERING, moved,
                                         "blue: draw 1", grow]
    # a later sitting: the same game, the name no misread to hold again, and a take-back
    # of the grow leaves the card named
    rec, first, history, _, _ = open_recording(path, game="zarcana", edition="1996",
                                               players=("red", "blue"))
    again = LiveSession("zarcana", edition="1996", players=["red", "blue"], recorder=rec,
                        initial_state=first, history=history)
    assert dumps(again.state) == played[-1]
    assert restore_recorded_corrections(again, path) == 0
    again.step_back()
    assert again.state is not None and again.state.board[(1, 0)][-1] == ("cups-04", True)
    assert again.unnamed_face_up_cards() == []
    again.close()
    assert dumps(rebuild_state(open_game(path))) == dumps(again.state)
