"""``companion demo --headless --observations truth``: the sample game end to end."""

from __future__ import annotations

from pathlib import Path

import pytest
from live_support import SAMPLES, scripted_clicks, scripted_moves

from companion.cli import main
from companion.commands.demo import play_order, truth_record


def test_the_demo_plays_the_sample_game_flags_the_illegal_move_and_scores(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "demo"
    code = main(["demo", "--headless", "--observations", "truth", "--out", str(out)])
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert "observations: truth" in printed
    assert "ILLEGAL" in printed and "[rule wands.upright]" in printed
    assert "final scores: red 9, blue 11, green 5" in printed
    # the user's clicks are labelled as such, and only the moves the camera cannot see
    clicks = [line.split(": ", 1)[1] for line in printed.splitlines() if "user's click" in line]
    assert clicks == list(scripted_clicks().values())
    # three frames with a hand are refused
    assert printed.count("a hand is over the table") == 3
    moves = (out / "moves.txt").read_text().splitlines()
    assert len(moves) == len(scripted_moves())
    assert all(m.startswith(s) for m, s in zip(moves, scripted_moves()))
    assert (out / "frames" / "0011.jpg").is_file() and (out / "frames" / "hand-02.jpg").is_file()
    assert len(list((out / "frames").glob("*.jpg"))) == 27
    record = (out / "record.txt").read_text()
    assert "wands.upright" in record and "final scores" in record
    try:
        from companion.recording.store import open_game
    except ImportError:
        return
    game = open_game(out / "game.db")
    assert game.moves()[: len(moves)] == moves
    assert game.finished
    # run again into the same folder: its own earlier game makes way
    assert main(["demo", "--headless", "--observations", "truth", "--out", str(out)]) == 0
    capsys.readouterr()


def test_a_move_list_that_cannot_be_written_is_named_and_fails_the_demo(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A full disk at the end: the demo ended on "No space left on device", naming no file,
    and left moves.txt empty. The file is named, record.txt is still written, the run fails;
    neither a half-written move list nor an earlier run's is left in its place."""
    import companion.commands.demo as demo
    from companion.core.files import write_text_atomic

    def full(path: Path, text: str) -> None:
        if path.name == "moves.txt":
            raise OSError(28, "No space left on device")
        write_text_atomic(path, text)

    monkeypatch.setattr(demo, "write_text_atomic", full)
    out = tmp_path / "demo"
    out.mkdir()
    (out / "moves.txt").write_text("an earlier run's moves\n")
    code = main(["demo", "--headless", "--observations", "truth", "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 1
    assert f"{out / 'moves.txt'}: could not be written (No space left on device)" in captured.err
    assert "final scores: red 9, blue 11, green 5" in captured.out
    assert not (out / "moves.txt").exists() and (out / "record.txt").is_file()
    assert "written to" not in captured.out


def test_the_demo_never_deletes_another_game(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "mine"
    # (cut short by --max-turns: exit 1, the game file kept)
    main(["play", "zarcana", "--players", "3", "--seed", "5", "--bots", "--quiet",
          "--max-turns", "4", "--record", str(out / "game.db")])
    assert (out / "game.db").is_file()
    before = (out / "game.db").read_bytes()
    capsys.readouterr()
    code = main(["demo", "--headless", "--observations", "truth", "--out", str(out)])
    assert code == 2
    assert "is not this demo's game (a game of red, blue, green, seed 5)" in \
        capsys.readouterr().err
    assert (out / "game.db").read_bytes() == before


def test_the_demo_explains_a_missing_frames_folder(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["demo", "--headless", "--observations", "truth", "--frames",
                 str(tmp_path / "nowhere"), "--out", str(tmp_path / "o")])
    assert code == 2
    assert "no game.json" in capsys.readouterr().err


@pytest.mark.parametrize("script, what", [
    ({"game": "zarcana"}, '"edition" is missing'),
    ({"game": "zarcana", "edition": "looney", "players": ["red", "blue"]}, '"moves" is missing'),
    ({"game": "zarcana", "edition": "looney", "players": "red", "moves": []}, '"players" is'),
    ({"game": "zarcana", "edition": "looney", "players": ["red"], "moves": [{"mv": 1}]},
     'move 1 has no "move" text'),
    ([], "a JSON object is expected, not list"),
    # (an edition of no rules: every frame was refused, "cannot start from this table")
    ({"game": "zarcana", "edition": "plastic", "players": ["red", "blue"], "moves": []},
     "\"edition\": unknown Zarcana edition 'plastic': expected '1996' or 'looney'"),
    # (settings out of range were played: box_cards -3 boxed nothing, without a word; the
    # engine's settings check says it, as for a game dealt in code)
    ({"game": "zarcana", "edition": "looney", "players": ["red", "blue"], "moves": [],
      "settings": {"box_cards": -3}}, '"settings": box_cards must be 0 or more, got -3'),
    # (a count given as text ended on Python's "'<' not supported between instances")
    ({"game": "zarcana", "edition": "looney", "players": ["red", "blue"], "moves": [],
      "settings": {"hand_limit": "6"}},
     "\"settings\": hand_limit must be a whole number, got '6'"),
    # (what the engine does not check, as --setting would take it)
    ({"game": "zarcana", "edition": "looney", "players": ["red", "blue"], "moves": [],
      "settings": {"extra_cards": ["extra-gatewy"]}},
     "\"settings\": setting 'extra_cards=gatewy': extra_cards takes extra cards"),
    ({"game": "zarcana", "edition": "looney", "players": ["red", "blue"], "moves": [],
      "settings": {"hand_size": 40}}, '"settings": hand_size 40 is more than hand_limit'),
    ({"game": "zarcana", "edition": "looney", "players": ["red", "blue"], "moves": [],
      "settings": {"box_size": 3}}, "\"settings\": setting 'box_size': no such setting")])
def test_a_script_the_demo_cannot_play_is_named(tmp_path: Path, script: object, what: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """A game.json without what the demo plays ended on an internal error (KeyError)."""
    import json

    frames = tmp_path / "frames"
    frames.mkdir()
    (frames / "game.json").write_text(json.dumps(script))
    code = main(["demo", "--headless", "--observations", "truth", "--frames", str(frames),
                 "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2 and f"{frames / 'game.json'}: not a sample game's script: {what}" in err


def test_frames_play_in_the_order_they_were_taken() -> None:
    order = [p.stem for p in play_order(SAMPLES)]
    assert order[:5] == ["0000", "0001", "0002", "0003", "hand-01"]
    assert order.index("hand-02") == order.index("0010") + 1
    assert len(order) == 27


def test_truth_records_are_reduced_to_what_a_pipeline_reports() -> None:
    rec = truth_record(SAMPLES / "0006.jpg")
    assert set(rec) <= {"image", "calibrated", "cards", "pyramids", "hands", "trustworthy"}
    assert all(set(c) == {"id", "center_mm", "angle_deg", "confidence"} for c in rec["cards"])
    assert all("cell" not in p for p in rec["pyramids"])


@pytest.mark.parametrize("truth, words", [
    ({"cards": [1, 2]}, "'cards' is not a list of objects"),
    ({"pyramids": 5}, "'pyramids' is not a list of objects"),
    (None, "the truth record cannot be read: No such file or directory")])
def test_a_truth_record_the_demo_cannot_read_is_named(tmp_path: Path, truth: object,
                                                      words: str) -> None:
    """A frame's truth record holding "cards": [1, 2] was an internal error, logged with its
    traceback; one missing said "[Errno 2] No such file or directory"."""
    import json

    from companion.commands.demo import DemoError

    frame = tmp_path / "0003.jpg"
    if truth is not None:
        frame.with_suffix(".json").write_text(json.dumps(truth))
    with pytest.raises(DemoError) as caught:
        truth_record(frame)
    assert f"{frame.with_suffix('.json')}: {words}" in str(caught.value)
    assert "Errno" not in str(caught.value)


def test_an_unreadable_frame_is_counted_as_one_and_fails_the_run(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import shutil

    frames = tmp_path / "frames"
    shutil.copytree(SAMPLES, frames)
    data = (frames / "0005.jpg").read_bytes()
    (frames / "0005.jpg").write_bytes(data[: len(data) // 2])      # cut short
    code = main(["demo", "--headless", "--observations", "truth", "--frames", str(frames),
                 "--out", str(tmp_path / "out")])
    printed = capsys.readouterr().out
    assert code == 1
    assert "1 unreadable" in printed and "camera lost 0 time(s)" in printed, printed


def test_a_demo_off_its_script_says_so_and_may_run_again(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--frames without the last photo: the game does not end, and its scores are said to
    be so far, not final (they were "final scores ... match"); and the same command run
    again takes its own game file back (it was refused as "not this demo's game")."""
    import shutil

    frames = tmp_path / "frames"
    shutil.copytree(SAMPLES, frames)
    for f in frames.glob("0023.*"):
        f.unlink()
    argv = ["demo", "--headless", "--observations", "truth", "--frames", str(frames),
            "--out", str(tmp_path / "out")]
    for _ in range(2):
        main(argv)
        printed = capsys.readouterr().out
        assert "scores so far (the game did not end): " in printed, printed
        assert "final scores: " not in printed and "(the game did not end)" in printed
        assert "not this demo's game" not in printed



def test_a_demo_game_off_the_script_is_the_demos_when_its_moves_txt_says_so(
        tmp_path: Path) -> None:
    """A demo run that went off the script (a photo of --frames left out) wrote its moves
    beside its game file: that game is the demo's own, replaced by the next run; without
    those moves beside it, a game of other moves is never taken."""
    import json

    from companion.commands.demo import _not_the_demos
    from companion.recording.store import GameRecorder

    script = json.loads((SAMPLES / "game.json").read_text())
    db = tmp_path / "game.db"
    rec = GameRecorder.create(db, game=script["game"], edition=script["edition"],
                              players=list(script["players"]),
                              settings=dict(script.get("settings", {})))
    rec.record("move", "red: start 1,1")
    rec.close()
    assert _not_the_demos(db, script) == "its moves are not the script's"
    (tmp_path / "moves.txt").write_text("red: start 1,1\n")
    assert _not_the_demos(db, script) is None


def test_the_demo_refuses_a_deck_that_is_not_a_tarot(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("onnxruntime")
    code = main(["demo", "--headless", "--deck", "decktet", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and "deck decktet: zarcana is played with a tarot deck" in err, err
    assert not (tmp_path / "out" / "game.db").exists()


def test_an_out_that_is_a_file_is_said_in_words(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """``--out notes.txt`` said "cannot be created: [Errno 20] Not a directory:
    'notes.txt/frames'"."""
    notes = tmp_path / "notes.txt"
    notes.write_text("x")
    for out, words in ((notes, f"--out {str(notes)!r} is a file, not a folder"),
                       (notes / "demo", f"--out {str(notes / 'demo')!r}: {str(notes)!r} is a "
                                        "file, not a folder")):
        code = main(["demo", "--headless", "--observations", "truth", "--out", str(out)])
        err = capsys.readouterr().err
        assert code == 2 and words in err and "Errno" not in err, err
