"""The sample game read without a mat, through the real pipeline, as ``companion run
--no-mat --setting box_cards=50`` reads it: the cards alone calibrate every frame, and the
table frame must hold from the deal to the end (a frame started afresh puts its origin on
another card, and every lattice cell of the game jumps)."""

from __future__ import annotations

import cv2
from live_support import SAMPLES, SCRIPT, sample_session

from calibration.mat import virtual_mat
from companion.live.session import EventKind


def test_the_sample_game_is_followed_to_its_scores_without_a_mat() -> None:
    from vision.pipeline import TablePipeline

    clicks = {k: e["move"] for k, e in enumerate(SCRIPT["moves"], start=1)
              if e.get("visible") is False}
    session = sample_session(mat=virtual_mat())
    notes: list[str] = []
    over: list[str] = []
    illegal: list[tuple[int, str]] = []
    with TablePipeline(mat=None, threads=2) as pipeline:
        for k in range(24):
            if k in clicks:
                session.manual(clicks.pop(k))
            record = pipeline.observe(cv2.imread(str(SAMPLES / f"{k:04d}.jpg")), f"{k:04d}")
            notes.append(record["calibration"]["note"] if record["calibrated"] else "")
            for e in session.observe(record, frame=k):
                if e.kind is EventKind.GAME_OVER:
                    over.append(e.text)
                elif e.kind in (EventKind.ILLEGAL, EventKind.QUESTION):
                    illegal.append((k, f"{e.kind.name} {e.text}"))
    assert not any("starts afresh" in n for n in notes), notes
    # (the board's north-west card is 0,0 as with the mat: the draw pile, away from the
    # board, names no cell; " =card" names the card a build put down, as the camera saw it)
    assert [h.move.split(" =")[0] for h in session.history] == [
        e["move"] for e in SCRIPT["moves"] if "illegal" not in e]
    assert len(over) == 1 and session.scores() == SCRIPT["final_scores"]
    # the script's one illegal move is ruled on, with the card the pile shows, as on the mat
    assert illegal == [(11, "ILLEGAL illegal: blue: play wands-09 by blue2U@2,2: move 2,1: "
                            "an upright pyramid has no direction to move in (blue2U@2,2)")]
