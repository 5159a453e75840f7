"""The live window on a real session fed with the sample game's frames (offscreen Qt)."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt
from ui_support import open_live, truth

from companion.live.session import CardCorrection, PyramidCorrection, Status


def spy(monkeypatch: pytest.MonkeyPatch, obj: Any, name: str) -> list[tuple]:
    """Record the calls of ``obj.name`` and let them through."""
    calls: list[tuple] = []
    real = getattr(obj, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(obj, name, wrapper)
    return calls


def test_scores_and_log_follow_accepted_moves(qtbot: Any) -> None:
    lw = open_live(qtbot)
    w = lw.window
    assert "waiting for the dealt board" in w.scores.headline.text()
    lw.feed(0)
    assert w.scores.score_text() == "red 0, blue 0, green 0"
    assert w.log.moves() == []
    lw.feed_until(4)
    assert w.log.moves() == ["red: start 0,2", "blue: start 2,2", "green: start 1,1",
                             "red: use cups-09 by red1U@0,2: clone 1"]
    assert w.scores.score_text() == "red 9, blue 11, green 4"
    assert w.scores.headline.text() == "Turn 5, round 2: blue to move"
    # the territories that make the scores are listed under each player
    red = w.scores.tree.topLevelItem(0)
    assert [red.child(k).text(0) for k in range(red.childCount())] == ["0,2  cups-09"]
    # the moves the camera cannot see are buttons for the player to move
    assert w.manual.options()[:3] == ["blue: draw 1", "blue: draw 2", "blue: draw 3"]
    # (labelled "draw 1"...: the box says whose they are, the camera may be a move behind)
    assert w.manual_box.title() == "Moves the camera cannot see: blue's turn"
    assert "accepted: red: use cups-09" in w.statusBar().currentMessage()
    # the overlay is placed: card ids and pyramids over the frame
    roles = w.video.overlay().roles()
    assert {"card", "card-label", "pyramid", "lattice"} <= roles


def test_manual_move_button_calls_the_session(qtbot: Any, monkeypatch: pytest.MonkeyPatch
                                              ) -> None:
    lw = open_live(qtbot)
    lw.feed_until(7)
    calls = spy(monkeypatch, lw.session, "manual")
    button = next(b for b in lw.window.manual.buttons if b.text() == "draw 3")
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert lw.controller.wait_idle()
    assert calls == [("blue: draw 3",)]
    assert lw.window.log.moves()[-1] == "blue: draw 3"
    assert lw.window.scores.headline.text().endswith("green to move")


def test_illegal_change_is_red_with_the_rule_and_can_be_overridden(
        qtbot: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    lw = open_live(qtbot)
    w = lw.window
    lw.feed_until(11)                    # frame 11: blue moves an upright pyramid
    assert lw.session.status is Status.WRONG_TABLE
    assert w.alert.isVisible() and w.alert.kind == "illegal"
    text = w.alert.text()
    assert "wands.upright" in text and "an upright pyramid has no direction to move" in text
    assert "#e00000" in w.alert.styleSheet()          # red
    assert "illegal" in w.video.overlay().roles()      # the cells drawn in red
    assert w.override_button.isEnabled()
    calls = spy(monkeypatch, lw.session, "override")
    qtbot.mouseClick(w.override_button, Qt.MouseButton.LeftButton)
    assert lw.controller.wait_idle()
    assert len(calls) == 1
    assert w.log.moves()[-1] == "blue: play wands-09 by blue2U@2,2: move 2,1"
    assert not w.alert.isVisible()
    assert "illegal" not in w.video.overlay().roles()


def test_a_snapshot_taken_before_a_newer_one_does_not_bring_back_the_old_position(
        qtbot: Any) -> None:
    """A picture's snapshot and a click's are taken in two threads; the older one may be
    posted last. Its event is still told, but the window keeps the newer position."""
    lw = open_live(qtbot)
    lw.feed_until(7)
    old = lw.controller._take_snapshot()        # (a picture's, before the click below)
    told = lw.controller.events[-1]
    lw.controller.manual("blue: draw 3")
    assert lw.controller.wait_idle()
    assert lw.window.log.moves()[-1] == "blue: draw 3"
    newer = lw.controller.snapshot
    assert newer.seq > old.seq
    lw.controller._apply_snapshot(told, old)
    assert lw.controller.snapshot is newer
    assert lw.window.log.moves()[-1] == "blue: draw 3"
    assert lw.window.scores.headline.text().endswith("green to move")
    assert lw.controller.events[-1] is told


def test_a_refused_click_leaves_the_ruling_and_no_move_offers_no_override(qtbot: Any) -> None:
    """A click the rules refuse while a camera ruling is on show leaves the ruling (the
    refusal is in the status line); a table no move explains, not even a rule-breaking one,
    offers no "Accept anyway" (it could only fail)."""
    lw = open_live(qtbot)
    w = lw.window
    lw.feed_until(11)
    ruling = w.alert.text()
    lw.controller.manual("green: draw 1")         # not green's turn
    assert lw.controller.wait_idle()
    assert w.alert.isVisible() and w.alert.text().startswith(ruling)
    assert "Refused: illegal: green: draw 1" in w.alert.text()
    assert "not this player's turn" in w.alert.text()
    assert [b.text() for b in w.alert.choice_buttons] == ["Accept anyway (override)"]
    assert w.override_button.isEnabled()
    rec = truth(12)
    swap = {"major-18": "wands-13", "cups-09": "cups-13"}   # two cards changed: no move
    for c in rec["cards"]:
        c["id"] = swap.get(c["id"], c["id"])
    lw.feed(12, rec)
    assert lw.session.status is Status.WRONG_TABLE and not lw.session.can_override
    assert "No legal move explains" in w.alert.text() and "accept anyway" not in w.alert.text()
    assert not w.override_button.isEnabled()


def test_a_single_misread_asks_and_the_answer_corrects_the_session(
        qtbot: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    lw = open_live(qtbot)
    w = lw.window
    lw.feed_until(4)
    rec = truth(5)
    for c in rec["cards"]:
        if c["id"] == "swords-05":
            c["id"] = "swords-06"            # the camera misreads one card
    lw.feed(5, rec)
    assert w.question.isVisible() and not w.alert.isVisible()
    assert [b.text() for b in w.question.choice_buttons][0].startswith(
        "is the card at 0,0 swords-05, not swords-06?")
    calls = spy(monkeypatch, lw.session, "correct")
    qtbot.mouseClick(w.question.choice_buttons[0], Qt.MouseButton.LeftButton)
    assert lw.controller.wait_idle()
    assert calls == [(CardCorrection((0, 0), "swords-06", "swords-05"),)]
    assert w.log.moves()[-1] == "blue: play cups-07 by blue1U@2,2: grow"
    assert not w.question.isVisible()


def test_correcting_a_clicked_card_and_pyramid_calls_the_session(
        qtbot: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    lw = open_live(qtbot)
    w, ctl = lw.window, lw.controller
    lw.feed_until(4)
    rec = truth(5)
    for c in rec["cards"]:
        if c["id"] == "swords-05":
            c["id"] = "swords-06"
    lw.feed(5, rec)
    calls = spy(monkeypatch, lw.session, "correct")
    # click the misread card in the video (at its pixels), then correct it in the dialog
    card = next(c for c in rec["cards"] if c["id"] == "swords-06")
    mapping = ctl.mapping
    cx, cy = mapping.to_px([card["center_mm"]])[0]
    x, y = mapping.to_px([(card["center_mm"][0], card["center_mm"][1] + 40.0)])[0]
    p = w.video.to_widget(x, y).toPoint()
    qtbot.mouseClick(w.video, Qt.MouseButton.LeftButton, pos=p)
    assert ctl.selected is not None and ctl.selected.what == "card"
    assert ctl.selected.cell == (0, 0)
    assert w.correct_button.isEnabled()
    qtbot.mouseClick(w.correct_button, Qt.MouseButton.LeftButton)
    dialog = ctl._dialog
    assert dialog is not None and dialog.isVisible()
    dialog.card_box.setCurrentText("swords-05")
    dialog.accept()
    assert ctl.wait_idle()
    assert calls == [(CardCorrection((0, 0), "swords-06", "swords-05"),)]
    assert w.log.moves()[-1] == "blue: play cups-07 by blue1U@2,2: grow"
    # a pyramid: select it, and say it is not there at all
    pyr = rec["pyramids"][0]
    qtbot.mouseClick(w.video, Qt.MouseButton.LeftButton,
                     pos=w.video.to_widget(*pyr["base_center_px"]).toPoint())
    assert ctl.selected is not None and ctl.selected.what == "pyramid"
    assert "legal moves" in w.selection.text() or "move" in w.selection.text()
    ctl.correct_selection({"absent": True})
    assert ctl.wait_idle()
    assert isinstance(calls[-1][0], PyramidCorrection) and calls[-1][0].actual is None


def test_selecting_a_pyramid_draws_its_legal_moves(qtbot: Any) -> None:
    lw = open_live(qtbot)
    w, ctl = lw.window, lw.controller
    lw.feed_until(7)                     # blue to move; blue2U at 2,2
    blue = next(p for p in truth(7)["pyramids"] if p["color"] == "blue")
    qtbot.mouseClick(w.video, Qt.MouseButton.LeftButton,
                     pos=w.video.to_widget(*blue["base_center_px"]).toPoint())
    assert ctl.selected is not None and str(ctl.selected.minion) == "blue2U@2,2"
    lines = [w.targets.item(k).text() for k in range(w.targets.count())]
    assert any(t.startswith("grow 2,2") for t in lines)
    assert any(t.startswith("turn 2,1") for t in lines)
    roles = w.video.overlay().roles()
    assert {"move-grow", "move-turn", "pyramid-selected"} <= roles


def test_step_back_shows_the_earlier_position(qtbot: Any) -> None:
    lw = open_live(qtbot)
    w, ctl = lw.window, lw.controller
    lw.feed_until(6)
    assert w.scores.score_text() == "red 9, blue 11, green 2"
    qtbot.mouseClick(w.back_button, Qt.MouseButton.LeftButton)
    assert ctl.view_index == 5
    assert w.scores.score_text() == "red 9, blue 11, green 4"     # before green built
    assert "green to move" in w.scores.headline.text()
    assert "an earlier position" in w.scores.headline.text()
    assert w.log.currentRow() == 5
    assert not w.manual_box.isEnabled()                            # no moves in the past
    assert w.video.frame() is not None                             # the keyframe of move 5
    assert "Position 5" in (w.video._caption or "")
    ctl.view_position(0)
    assert w.scores.score_text() == "red 0, blue 0, green 0"
    qtbot.mouseClick(w.live_button, Qt.MouseButton.LeftButton)
    assert ctl.view_index is None
    assert w.scores.score_text() == "red 9, blue 11, green 2"
    # taking a move back is a different thing: the session forgets it
    qtbot.mouseClick(w.undo_button, Qt.MouseButton.LeftButton)
    assert ctl.wait_idle()
    assert len(w.log.moves()) == 5


def test_camera_loss_shows_a_message_until_frames_return(qtbot: Any) -> None:
    lw = open_live(qtbot)
    lw.feed(0)
    lw.session.camera_lost("the camera was unplugged")
    assert lw.controller.wait_idle()
    qtbot.waitUntil(lambda: lw.window.video.message() is not None, timeout=2000)
    assert "unplugged" in lw.window.video.message()
    lw.session.camera_back("frames again")
    qtbot.waitUntil(lambda: lw.window.video.message() is None, timeout=2000)


def test_a_game_file_that_cannot_be_written_is_shown_until_it_can(qtbot: Any,
                                                                   tmp_path: Any) -> None:
    from companion.recording.store import GameRecorder, WriteFailed

    class FullDisk:
        def __init__(self) -> None:
            self.inner = GameRecorder.create(tmp_path / "g.db", game="zarcana",
                                             edition="looney", players=["red", "blue", "green"])
            self.path, self.full = self.inner.path, True

        def record(self, kind: str, move: Any, **kw: Any) -> Any:
            if self.full:
                raise WriteFailed(f"{self.path}: database or disk is full")
            return self.inner.record(kind, move, **kw)

        def finish(self, scores: Any, winners: Any, **kw: Any) -> Any:
            return self.inner.finish(scores, winners, **kw)

        def close(self) -> None:
            self.inner.close()

    disk = FullDisk()
    lw = open_live(qtbot, recorder=disk)
    lw.feed(0)
    assert lw.controller.wait_idle()
    qtbot.waitUntil(lambda: lw.window.alert.kind == "not_recorded"
                    and lw.window.alert.isVisible(), timeout=2000)
    assert "not being recorded" in lw.window.alert.text() and "disk is full" in \
        lw.window.alert.text()
    assert lw.window.windowTitle().startswith("NOT RECORDED: ")
    disk.full = False
    lw.feed(1)
    assert lw.controller.wait_idle()
    qtbot.waitUntil(lambda: not lw.window.alert.isVisible(), timeout=2000)
    assert lw.window.windowTitle() == "test"
    lw.session.close()


def test_end_of_game_shows_the_final_scoring_and_chart(qtbot: Any, tmp_path: Any) -> None:
    lw = open_live(qtbot)
    w, ctl = lw.window, lw.controller
    lw.feed_until(6)
    saved = ctl.save_to(tmp_path / "game.json")
    from companion.games.zarcana.engine import loads
    assert loads(saved.read_text()).history == lw.session.state.history
    ctl.end_game()
    assert ctl.wait_idle()
    assert lw.session.is_over
    assert w.tabs.currentWidget() is w.final
    rows = w.final.rows()
    assert ["red", "0,2", rows[0][2], "+9", "9"] == rows[0]
    assert "Winner: blue" in w.final.winners.text()
    series = w.final.chart.series()
    assert series["blue"][-1] == 11 and len(series["red"]) == 7
    assert not w.manual_box.isEnabled() and not w.end_button.isEnabled()
    img = w.final.chart.grab().toImage()
    assert img.width() > 100


def test_pause_stops_judging_until_resumed(qtbot: Any) -> None:
    lw = open_live(qtbot)
    w, ctl = lw.window, lw.controller
    qtbot.mouseClick(w.pause_button, Qt.MouseButton.LeftButton)
    assert ctl.paused and w.pause_button.text() == "Resume"
    assert "PAUSED" in (w.video._caption or "")
    qtbot.mouseClick(w.pause_button, Qt.MouseButton.LeftButton)
    assert not ctl.paused and w.video._caption is None


def test_a_refused_click_is_reported_not_raised(qtbot: Any) -> None:
    lw = open_live(qtbot)
    lw.controller.take_back()                     # nothing to take back yet
    assert lw.controller.wait_idle()
    assert "no accepted move to take back" in lw.window.statusBar().currentMessage()
    lw.controller.correct_selection({"card": "cups-01"})   # nothing selected
    assert "select a card or a pyramid first" in lw.window.alert.text()


def test_records_without_pixels_are_placed_through_the_mat_markers(qtbot: Any) -> None:
    import json
    import math

    from ui_support import SAMPLE

    lw = open_live(qtbot)
    for k in range(3):
        lw.feed(k, truth(k, pixels=False))     # the spec's fields only, as the demo's truth
    mapping = lw.controller.mapping
    assert mapping is not None
    raw = json.loads((SAMPLE / "0002.json").read_text())
    for c in raw["cards"]:
        x, y = mapping.to_px([c["center_mm"]])[0]
        assert math.hypot(x - c["center_px"][0], y - c["center_px"][1]) < 6.0
    assert {"card", "pyramid"} <= lw.window.video.overlay().roles()


def test_a_blurred_picture_is_said_beside_the_status_line_until_it_is_sharp(qtbot: Any
                                                                             ) -> None:
    lw = open_live(qtbot)
    lw.feed(0, dict(truth(0), blurred=False, calibration={"edge_blur_px": 0.8}))
    assert lw.window.picture.text() == ""
    lw.feed(1, dict(truth(1), blurred=True, calibration={"edge_blur_px": 1.9}))
    qtbot.waitUntil(lambda: "blurred (the mat's marker edges spread over 1.9 px): steady"
                    in lw.window.picture.text(),
                    timeout=2000)
    # the session judged the frame and said so too, its picture line last
    qtbot.waitUntil(lambda: "the picture is blurred" in lw.window.statusBar().currentMessage(),
                    timeout=2000)
    lw.feed(2, dict(truth(2), blurred=False, calibration={"edge_blur_px": 0.8}))
    qtbot.waitUntil(lambda: lw.window.picture.text() == "", timeout=2000)


def test_cards_another_size_than_the_decks_are_said_beside_the_status_line(qtbot: Any
                                                                           ) -> None:
    """A mat file measured wrongly (the record's calibration.card_scale 1.085) is said
    beside the status line for as long as the cards measure so, not only in the passing
    status line."""
    lw = open_live(qtbot)
    lw.feed(0, dict(truth(0), calibration={"card_scale": 1.085}))
    qtbot.waitUntil(lambda: "the cards measure 8% larger than the deck's" in
                    lw.window.picture.text(), timeout=2000)
    lw.feed(1, dict(truth(1), calibration={"card_scale": 1.085}))
    assert "the cards measure 8% larger" in lw.window.picture.text()
    lw.feed(2, dict(truth(2), calibration={"card_scale": 1.01}))
    qtbot.waitUntil(lambda: lw.window.picture.text() == "", timeout=2000)


def test_a_move_taken_from_a_picture_before_a_click_stays_on_show(qtbot: Any) -> None:
    """Frame 17 misreads green's small as lying: a question. Blue clicks its draw, and the
    same picture now fits green's reorient, which is accepted with a note on how to take it
    back: the note stays in the banner (the next picture's status line does not hide it)."""
    lw = open_live(qtbot)
    w = lw.window
    lw.feed_until(16)
    lw.controller.manual("red: draw 3")
    assert lw.controller.wait_idle()
    rec = truth(17)
    p = next(p for p in rec["pyramids"] if p["color"] == "green")
    p["upright"], p["pointing_deg"] = False, 90.0
    lw.feed(17, rec)
    assert w.question.isVisible()
    lw.controller.manual("blue: draw 2")
    assert lw.controller.wait_idle()
    qtbot.waitUntil(lambda: w.alert.isVisible() and w.alert.kind == "info", timeout=2000)
    assert w.alert.text().startswith("green: reorient green1U@1,2&gt;S: seen before the click")
    lw.feed(18, rec)
    assert w.alert.isVisible() and "seen before the click" in w.alert.text()
    lw.controller.take_back()           # as the notice says: it goes with the move
    assert lw.controller.wait_idle()
    qtbot.waitUntil(lambda: not w.alert.isVisible(), timeout=2000)


def test_what_the_game_waits_for_stays_on_show_until_a_move_is_taken(qtbot: Any) -> None:
    """A wait the players must act on (here, a hand over part of the dealt board: cards not
    seen) went to the status bar alone, and the next line there replaced it: the banner
    keeps it, until a move is taken or a clear picture shows none."""
    lw = open_live(qtbot)
    w = lw.window
    lw.feed_until(1)
    rec = truth(2)
    rec["cards"] = rec["cards"][3:]             # three territories hidden under a hand
    lw.feed(2, rec)
    assert w.alert.isVisible() and w.alert.kind == "info"
    assert w.alert.text().startswith("<b>Waiting:</b> part of the table is covered")
    w.show_status("the frame source has ended")
    assert "part of the table is covered" in w.alert.text()
    lw.feed(1)                                  # the hand gone, no move yet: over too
    assert not w.alert.isVisible()
    lw.feed(2, rec)
    assert w.alert.isVisible()
    lw.feed(2)
    assert not w.alert.isVisible()
    assert w.log.moves()[-1] == "blue: start 2,2"


def _window_on(qtbot: Any, session: Any) -> Any:
    """A live window on ``session`` (a position of the test's own), fed by the test."""
    from ui_support import SAMPLE, LiveWindow

    from calibration.mat import load_mat
    from companion.ui.controllers import LiveController
    from companion.ui.views import MainWindow

    window = MainWindow("test")
    qtbot.addWidget(window)
    controller = LiveController(window, session, mat=load_mat(SAMPLE / "mat.json"),
                                display_fps=0)
    window.show()
    qtbot.waitExposed(window)
    return LiveWindow(window, controller, session)


def test_a_face_down_build_named_is_named_in_the_move_log(qtbot: Any,
                                                         wheel_build_start: Any) -> None:
    """Red's Wheel of Fortune build lays a card face down; the players name it through the
    window: the log line of the build said "build 1,0 =?" still."""
    from companion.live.session import LiveSession

    start = wheel_build_start
    lw = _window_on(qtbot, LiveSession("zarcana", edition="looney", players=["red", "blue"],
                                       initial_state=start))
    lw.controller.manual("red: play major-10 by red1E@0,0: build 1,0 =?")
    assert lw.controller.wait_idle()
    assert lw.window.log.moves() == ["red: play major-10 by red1E@0,0: build 1,0 =?"]
    assert "name the face-down card at 1,0" in lw.window.manual.options()
    lw.controller.manual("name the face-down card at 1,0")
    dialog = lw.controller._dialog
    dialog.card_box.setCurrentText("cups-05")
    dialog.accept()
    assert lw.controller.wait_idle()
    assert lw.window.log.moves() == [
        "red: play major-10 by red1E@0,0: build 1,0 =? (face down: cups-05)"]


@pytest.mark.parametrize("how", ["seen", "clicked"])
def test_the_alchemists_covered_card_is_named_in_the_move_log_once_a_picture_shows_it(
        qtbot: Any, how: str) -> None:
    """Red's Alchemist builds twice at 1,0 from a draw pile nobody sees, the first card
    covered at once ("=?" in the log); blue's attack takes the top card away and the
    camera sees the covered one, cups-04, on the attack's picture ("seen"), or on the next
    picture after the attack was clicked ("clicked"). The move log names it on the
    Alchemist's line, as the replay window and the text record do; the attack's line stays
    as it was made."""
    from alchemist_support import (ALCHEMIST_COVERING, ALCHEMIST_SETTINGS,
                                   ALCHEMIST_UNCOVERING, alchemist_pictures, alchemist_start)
    from table_records import MAT

    from companion.live.session import LiveSession

    session = LiveSession("zarcana", edition="1996", players=["red", "blue"], mat=MAT,
                          settings=ALCHEMIST_SETTINGS, initial_state=alchemist_start())
    lw = _window_on(qtbot, session)
    covering, uncovering = alchemist_pictures()

    def show(k: int, rec: dict[str, Any]) -> None:
        lw.controller.commands.submit(f"frame {k}", lambda: session.observe(rec, frame=k))
        assert lw.controller.wait_idle(30.0), "the session did not answer"

    show(1, covering)
    assert lw.window.log.moves() == [ALCHEMIST_COVERING]
    if how == "clicked":
        lw.controller.manual(ALCHEMIST_UNCOVERING)
        assert lw.controller.wait_idle()
        assert lw.window.log.moves() == [ALCHEMIST_COVERING, ALCHEMIST_UNCOVERING]
    show(2, uncovering)
    assert lw.window.log.moves() == [f"{ALCHEMIST_COVERING} (covered: cups-04)",
                                     ALCHEMIST_UNCOVERING]
    if how == "seen":
        # (the attack's accepted line says the name the picture gave, as the game file's
        # correction does)
        said = lw.window.statusBar().currentMessage()
        assert said.startswith(f"accepted: {ALCHEMIST_UNCOVERING}"), said
        assert "the card the Alchemist covered at 1,0 is cups-04" in said, said
    else:
        # (the next picture's "no change; red to move" took the status bar at once: the
        # line naming the card stays on show, as a face-down card named off the pile does)
        assert lw.window.alert.isVisible() and lw.window.alert.kind == "info"
        shown = lw.window.alert.text()
        assert "the card the Alchemist covered at 1,0 is cups-04" in shown, shown
        assert lw.window.statusBar().currentMessage() == "no change; red to move"


def test_the_alchemists_covered_card_no_picture_named_is_named_through_the_window(
        qtbot: Any) -> None:
    """Blue's attack, clicked, uncovers the card red's Alchemist covered at once, and no
    picture names it: it lies face up as "?". The window's buttons named only face-down
    cards; one names this card now ("name the card at 1,0"), and the move log then names
    it on the Alchemist's line."""
    from alchemist_support import (ALCHEMIST_COVERING, ALCHEMIST_SETTINGS,
                                   ALCHEMIST_UNCOVERING, alchemist_pictures, alchemist_start)
    from table_records import MAT

    from companion.live.session import LiveSession

    session = LiveSession("zarcana", edition="1996", players=["red", "blue"], mat=MAT,
                          settings=ALCHEMIST_SETTINGS, initial_state=alchemist_start())
    lw = _window_on(qtbot, session)
    lw.controller.commands.submit("frame 1",
                                  lambda: session.observe(alchemist_pictures()[0], frame=1))
    assert lw.controller.wait_idle(30.0), "the session did not answer"
    lw.controller.manual(ALCHEMIST_UNCOVERING)
    assert lw.controller.wait_idle()
    options = lw.window.manual.options()
    assert "name the card at 1,0" in options, options
    assert not any(o.startswith("name the face-down card") for o in options), options
    lw.controller.manual("name the card at 1,0")
    dialog = lw.controller._dialog
    dialog.card_box.setCurrentText("cups-04")
    dialog.accept()
    assert lw.controller.wait_idle()
    assert session.state is not None and session.state.board[(1, 0)][-1] == ("cups-04", True)
    assert "name the card at 1,0" not in lw.window.manual.options()
    assert lw.window.log.moves() == [f"{ALCHEMIST_COVERING} (covered: cups-04)",
                                     ALCHEMIST_UNCOVERING]


def test_naming_the_alchemists_covered_card_settles_the_question_its_misread_asked(
        qtbot: Any) -> None:
    """Blue's attack, clicked, uncovers the card red's Alchemist covered at once, and the
    next picture reads it as swords-02, which lies at 0,1: the window asks "is the card at
    1,0 ?, not swords-02?". The players name the card with the window's button while the
    question is on show: the question goes (the name answers it), and the same picture
    again asks nothing."""
    from alchemist_support import (ALCHEMIST_SETTINGS, ALCHEMIST_UNCOVERING,
                                   alchemist_pictures, alchemist_start)
    from table_records import MAT, make_record

    from companion.games.zarcana.table import TableView
    from companion.live.session import LiveSession

    session = LiveSession("zarcana", edition="1996", players=["red", "blue"], mat=MAT,
                          settings=ALCHEMIST_SETTINGS, initial_state=alchemist_start())
    lw = _window_on(qtbot, session)
    view = TableView.of(alchemist_start())
    misread = make_record({**view.cards, (1, 0): "swords-02"}, view.pyramids,
                          discard=["major-09", "wands-07", "swords-03"])

    def show(k: int, rec: dict[str, Any]) -> None:
        lw.controller.commands.submit(f"frame {k}", lambda: session.observe(rec, frame=k))
        assert lw.controller.wait_idle(30.0), "the session did not answer"

    show(1, alchemist_pictures()[0])
    lw.controller.manual(ALCHEMIST_UNCOVERING)
    assert lw.controller.wait_idle()
    show(2, misread)
    assert lw.window.question.isVisible()
    assert "name the card at 1,0" in lw.window.manual.options()
    lw.controller.manual("name the card at 1,0")
    dialog = lw.controller._dialog
    dialog.card_box.setCurrentText("cups-04")
    dialog.accept()
    assert lw.controller.wait_idle()
    assert not lw.window.question.isVisible()
    assert session.status is Status.PLAYING
    assert lw.window.statusBar().currentMessage() == "the table is put right; red to move"
    show(3, misread)
    assert not lw.window.question.isVisible()
    assert lw.window.statusBar().currentMessage() == "no change; red to move"


def test_a_territory_power_draw_that_rebuilds_the_draw_pile_is_a_button(
        qtbot: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Red's High Priestess territory draws 2 with one card left in the draw pile (the
    discard pile shuffled into a new draw pile): the window had no button for it, only for
    the power's draws of 0 and 1 card; the live referee waits for that click."""
    from companion.games.zarcana.engine import position
    from companion.live.session import LiveSession

    start = position(["red", "blue"], edition="looney",
                     board={"0,0": "cups-03", "1,0": "major-02", "0,1": "swords-02"},
                     pieces={"1,0": "red1U"}, hands={"red": ["?"] * 3, "blue": ["?"] * 3},
                     deck=["?"], discard=["cups-07", "major-04", "wands-02"], box=["?"] * 65)
    from calibration.mat import load_mat
    from ui_support import SAMPLE

    # (on a mat with a discard zone: the pile is watched, as at a real table)
    lw = _window_on(qtbot, LiveSession("zarcana", edition="looney", players=["red", "blue"],
                                       mat=load_mat(SAMPLE / "mat.json"), initial_state=start))
    assert lw.session.watch_discard
    lw.controller.refresh()
    calls = spy(monkeypatch, lw.session, "manual")
    label = "use major-02 by red1U@1,0: draw 2"
    button = next((b for b in lw.window.manual.buttons if b.text() == label), None)
    assert button is not None, [b.text() for b in lw.window.manual.buttons]
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert lw.controller.wait_idle()
    assert calls == [(f"red: {label}",)]
    assert lw.window.log.moves() == [f"red: {label}"]
    assert lw.session.state.discard == () and lw.session.state.reshuffles == 1


def test_a_pyramid_taken_back_as_covered_can_be_said_destroyed_with_a_button(
        qtbot: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two players: blue's territory attack on red's only pyramid, then red's pyramid back
    on its card (tests/restart_support.py), read as a hand over it and taken back; blue is
    to move either way. The window shows the players' button that says red's pyramid was
    destroyed and red started again there, in those words (not cut at the colon as a
    move's "blue: " is), and pressing it has the attack and the start stand."""
    from restart_support import DESTROYED, TERRITORY_ATTACK, restart_pictures, restart_start
    from table_records import MAT

    from companion.live.session import LiveSession

    start = restart_start()
    session = LiveSession("zarcana", edition="looney", players=["red", "blue"], mat=MAT,
                          initial_state=start)
    lw = _window_on(qtbot, session)
    for k, rec in enumerate(restart_pictures(start)):
        lw.controller.commands.submit(f"frame {k}", lambda r=rec, k=k: session.observe(
            r, frame=k))
        assert lw.controller.wait_idle(30.0), "the session did not answer"
    assert lw.window.log.moves() == []
    calls = spy(monkeypatch, lw.session, "manual")
    button = next((b for b in lw.window.manual.buttons if b.text() == DESTROYED), None)
    assert button is not None, [b.text() for b in lw.window.manual.buttons]
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert lw.controller.wait_idle()
    assert calls == [(DESTROYED,)]
    assert lw.window.log.moves() == [TERRITORY_ATTACK, "red: start 2,1"]
    assert DESTROYED not in [b.text() for b in lw.window.manual.buttons]
