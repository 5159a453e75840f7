"""What the window says of a position, computed without Qt (companion.ui.gamemodel, overlay)."""

from __future__ import annotations

import math
import random
from pathlib import Path
from typing import Any

import pytest
from ui_support import SAMPLE, script, truth

from companion.core.pieces import Color, Minion, Pose, Pyramid
from companion.games.zarcana import new_game
from companion.games.zarcana.rules import Settings
from companion.ui.gamemodel import (
    describe_position,
    final_scoring,
    minion_targets,
    score_series,
)
from companion.ui.overlay import (
    TableMapping,
    build_overlay,
    illegal_cells,
    mapping_from_record,
)


def sample_states() -> list:
    s = script()
    settings = Settings.from_dict({"edition": s["edition"], **s["settings"]})
    st = new_game(s["players"], edition=s["edition"], seed=s["seed"], settings=settings)
    states = [st]
    for entry in s["moves"]:
        if "illegal" in entry:
            continue
        st = st.apply(entry["move"])
        states.append(st)
    return states


def test_position_names_turn_round_scores_and_territories() -> None:
    states = sample_states()
    pos = describe_position(states[7])          # after red's reorientation (move 7)
    assert (pos.turn, pos.round) == (8, 3)
    assert pos.current == "blue" and pos.decider == "blue"
    assert pos.headline() == "Turn 8, round 3: blue to move"
    by = {p.color: p for p in pos.players}
    assert {c: p.score for c, p in by.items()} == {"red": 9, "blue": 11, "green": 2}
    assert [(t.cell, t.card, t.points) for t in by["green"].territories] == [
        ((1, 1), "pentacles-02", 2)]
    assert by["blue"].to_move and not by["red"].to_move
    assert sum(by["red"].stash) + 2 == 15       # two small red pyramids on the table
    assert not pos.may_declare_end and "not be declared" in pos.end_text


def test_final_scoring_card_by_card_adds_up_to_the_scores() -> None:
    final = sample_states()[-1]
    assert final.is_over
    pos = describe_position(final)
    assert pos.over and pos.winners == ("blue",)
    assert pos.headline().startswith("Game over")
    rows = final_scoring(final)
    totals: dict[str, int] = {}
    for r in rows:
        totals[r.player] = totals.get(r.player, 0) + r.points
        assert r.running == totals[r.player]
        assert r.name.startswith(r.card)
    assert totals == script()["final_scores"]


def test_score_series_has_one_point_per_position() -> None:
    states = sample_states()
    series = score_series(states)
    assert set(series) == {"red", "blue", "green"}
    assert all(len(v) == len(states) for v in series.values())
    assert {k: v[-1] for k, v in series.items()} == script()["final_scores"]


@pytest.mark.parametrize("seed", [3, 11])
def test_minion_targets_are_the_legal_moves_of_that_pyramid(seed: int) -> None:
    rng = random.Random(seed)
    st = new_game(["red", "blue", "green"], edition="looney", seed=seed)
    checked = 0
    for _ in range(40):
        if st.is_over:
            break
        who = st.to_move if st.phase == "play" and not st.pending else None
        for cell, pieces in sorted(st.pieces.items()):
            for p in set(pieces):
                m = Minion(cell, p)
                targets = minion_targets(st, m)
                for t in targets:
                    assert st.is_legal(t.example), t.example
                    assert str(m) in t.example
                    assert t.count >= 1
                if p.color is who:
                    assert targets, f"{m} of the player to move has no target"
                checked += len(targets)
        st = st.apply(rng.choice(st.legal_moves()))
    assert checked > 0


def test_minion_targets_of_a_lying_pyramid_include_its_reorientations() -> None:
    st = sample_states()[7]                      # blue to move, blue2U at 2,2
    m = Minion((2, 2), Pyramid(Color.BLUE, 2, Pose.UP))
    kinds = {(t.kind, t.cell) for t in minion_targets(st, m)}
    assert ("turn", (2, 1)) in kinds             # reorient to point north at 2,1
    assert ("grow", (2, 2)) in kinds
    other = Minion((1, 1), Pyramid(Color.GREEN, 1, Pose.UP))
    assert minion_targets(st, other) == []       # green's pyramid: not green's turn


def test_mapping_from_a_record_puts_cards_on_their_pixels() -> None:
    import json

    raw = json.loads((SAMPLE / "0005.json").read_text())
    m = mapping_from_record(truth(5))
    assert m is not None
    for c in raw["cards"]:
        x, y = m.to_px([c["center_mm"]])[0]
        assert math.hypot(x - c["center_px"][0], y - c["center_px"][1]) < 3.0
    back = m.to_mm(m.to_px([(100.0, 200.0)]))[0]
    assert math.hypot(back[0] - 100.0, back[1] - 200.0) < 1e-6
    # without pixel positions there is nothing to fit
    assert mapping_from_record(truth(5, pixels=False)) is None


def test_overlay_has_cards_pyramids_and_hits_where_they_are() -> None:
    from companion.live.tablestate import TableTracker

    rec = truth(5)
    m = mapping_from_record(rec)
    tracker = TableTracker({"zones": {"draw": [20, 560, 110, 640],
                                      "discard": [130, 560, 220, 640]}})
    reading = tracker.read(rec)
    ov = build_overlay(m, reading=reading, lattice=tracker.lattice, state=None,
                       illegal={(2, 1): "blue medium (upright) arrived"})
    assert {"card", "card-label", "pyramid", "pyramid-label", "lattice", "illegal"} <= ov.roles()
    labels = {s.text for s in ov.shapes if s.role == "card-label"}
    assert "swords-05" in labels
    for p in rec["pyramids"]:
        hit = ov.hit(*p["base_center_px"])
        assert hit is not None and hit.what == "pyramid"
        assert hit.label.startswith(p["color"])
    x, y = m.to_px([rec["cards"][0]["center_mm"]])[0]
    hit = ov.hit(x, y + 40.0)    # inside the card, away from any pyramid
    assert hit is not None and hit.what == "card"
    assert build_overlay(None).shapes == ()


def test_illegal_changes_name_their_cells() -> None:
    cells = illegal_cells(["2,1: blue medium (upright) arrived", "2,2: blue medium left",
                           "discard pile now shows wands-09", "-1,2: card x removed",
                           "2,1: card y"])
    assert cells == {(2, 1): "blue medium (upright) arrived; card y",
                     (2, 2): "blue medium left", (-1, 2): "card x removed"}


def test_a_degenerate_mapping_is_refused() -> None:
    with pytest.raises(ValueError):
        TableMapping([[1, 0, 0], [2, 0, 0], [0, 0, 1]])


def test_the_overlay_goes_through_the_cameras_lens() -> None:
    """A calibration's homography is in undistorted pixels: the window's outlines must bend
    with the lens to land on the picture as taken (as `observe --annotate`'s do)."""
    import numpy as np

    from calibration.table import Calibration, Intrinsics
    from companion.ui.overlay import mapping_from_calibration
    from vision.pyramids.topdown import table_to_image

    K = np.array([[1400.0, 0, 800], [0, 1400.0, 450], [0, 0, 1]])
    lens = Intrinsics(K, np.array([-0.25, 0.08, 0.0, 0.0, 0.0]))
    # mm -> undistorted px: 1.5 px/mm, the mat's corner at (100, 60)
    to_px = np.array([[1.5, 0.0, 100.0], [0.0, 1.5, 60.0], [0.0, 0.0, 1.0]])
    calib = Calibration(True, H=np.linalg.inv(to_px), intrinsics=lens)
    corners = [(0.0, 0.0), (900.0, 0.0), (900.0, 650.0), (0.0, 650.0), (450.0, 325.0)]
    drawn = np.array(mapping_from_calibration(calib).to_px(corners))
    assert np.abs(drawn - table_to_image(calib, np.array(corners))).max() < 0.01
    # the lens bends the corners by many pixels: a homography alone would miss them
    flat = mapping_from_calibration(Calibration(True, H=calib.H))
    assert np.abs(drawn - np.array(flat.to_px(corners))).max() > 10
    back = np.array(mapping_from_calibration(calib).to_mm(drawn.tolist()))
    assert np.abs(back - np.array(corners)).max() < 0.05


def test_a_face_down_build_names_its_card_in_the_move_log_once_known(
        wheel_build_start: Any) -> None:
    """A Wheel of Fortune build lays a card face down ("build 1,0 =?"); once the players
    name it (or the camera reads it off the discard pile as it is destroyed) the move log
    said "=?" still. The move's notation stays what was seen; the log adds the name."""
    from companion.live.session import LiveSession
    from companion.ui.gamemodel import move_line

    start = wheel_build_start
    s = LiveSession("zarcana", edition="looney", players=["red", "blue"], initial_state=start)
    s.manual("red: play major-10 by red1E@0,0: build 1,0 =?")
    s.manual("blue: draw 1")
    build, draw = s.history
    assert move_line(build.move, build.state) == "red: play major-10 by red1E@0,0: build 1,0 =?"
    s.name_card((1, 0), "cups-05")
    build, draw = s.history
    assert move_line(build.move, build.state) == \
        "red: play major-10 by red1E@0,0: build 1,0 =? (face down: cups-05)"
    assert move_line(draw.move, draw.state) == "blue: draw 1"


def test_the_move_log_and_the_text_record_name_a_face_down_card_in_the_same_words(
        tmp_path: Path, wheel_build_start: Any) -> None:
    """The words that name a card built face down ("(face down: cups-05)") were written out
    in the move log (move_line) and in the text record (export) each: one helper gives them
    now, so the two cannot drift apart."""
    from companion.games.zarcana.engine import dumps
    from companion.games.zarcana.moves import with_face_down_names
    from companion.live.session import LiveSession
    from companion.recording.export import text_lines
    from companion.recording.store import GameRecorder, open_game
    from companion.ui.gamemodel import move_line

    start = wheel_build_start
    path = tmp_path / "g.db"
    rec = GameRecorder.create(path, game="zarcana", edition="looney", players=["red", "blue"],
                              settings=start.settings.to_dict(), initial_state=dumps(start))
    s = LiveSession("zarcana", edition="looney", players=["red", "blue"], recorder=rec,
                    initial_state=start)
    s.manual("red: play major-10 by red1E@0,0: build 1,0 =?")
    s.name_card((1, 0), "cups-05")
    s.close()
    build = s.history[0]
    line = with_face_down_names(build.move, ["cups-05"])
    assert line == "red: play major-10 by red1E@0,0: build 1,0 =? (face down: cups-05)"
    assert with_face_down_names(build.move, []) == build.move
    assert move_line(build.move, build.state) == line
    assert any(x.endswith(f"red     {line}") for x in text_lines(open_game(path)))
