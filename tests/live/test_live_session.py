"""The live referee on the sample game: moves, the illegal move, misreads, clicks, undo."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from live_support import (MAT, SCRIPT, make_record, play_sample, sample_record, sample_session,
                          scripted_clicks, scripted_moves)

from companion.core.errors import NotationError
from companion.core.pieces import Color, parse_pyramid
from companion.live.session import (
    CardCorrection,
    EventKind,
    LiveError,
    LiveEvent,
    LiveSession,
    PyramidCorrection,
    Status,
    pyramid_words,
)


class FakeRecorder:
    """Collects what the session records, with the store's kinds and argument types."""

    from companion.recording.store import KINDS

    def __init__(self) -> None:
        self.calls: list[tuple[str, str | None, dict[str, Any]]] = []
        self.finished: tuple[dict[str, int], list[str]] | None = None
        self.closed = False

    def record(self, kind: str, move: str | None, **kw: Any) -> int:
        assert kind in self.KINDS
        assert isinstance(kw.get("note", ""), str)
        assert kw.get("state") is None or isinstance(kw["state"], str)
        self.calls.append((kind, move, kw))
        return len(self.calls)

    def finish(self, scores: dict[str, int], winners: list[str], **kw: Any) -> None:
        self.finished = (dict(scores), list(winners))

    def close(self) -> None:
        self.closed = True


def play(session: LiveSession, frames: range, *, clicks: bool = True,
         change: Callable[[int, dict[str, Any]], dict[str, Any]] = lambda k, rec: rec
         ) -> list[LiveEvent]:
    """The sample game's frames (``change`` alters frame k's record), with its clicks."""
    events: list[LiveEvent] = []
    todo = scripted_clicks()
    for k in frames:
        if clicks and k in todo:
            events += session.manual(todo[k])
        events += session.observe(change(k, sample_record(k)), frame=k)
    return events


def _counted(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[int]:
    """``module.name`` replaced by itself counting its calls: the list grows by one a call."""
    calls: list[int] = []
    real = getattr(module, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def assert_true_game(session: LiveSession) -> None:
    """The sample game's legal moves were accepted (" =card" names a build's card), and it
    ended with its true scores."""
    assert [h.move.split(" =")[0] for h in session.history] == scripted_moves()
    assert session.scores() == SCRIPT["final_scores"]


def test_the_sample_game_gives_the_scripted_moves_the_illegal_move_and_the_scores() -> None:
    rec = FakeRecorder()
    s = sample_session(recorder=rec)
    heard: list[LiveEvent] = []
    s.subscribe(heard.append)
    events = play(s, range(24))
    assert heard == events
    moves = [h.move for h in s.history]
    want = scripted_moves()
    assert len(moves) == len(want)
    for got, exp in zip(moves, want):
        assert got.startswith(exp)  # builds also name the card the camera saw put down
    illegal = [e for e in events if e.kind is EventKind.ILLEGAL]
    assert len(illegal) == 1
    assert illegal[0].frame == 11 and illegal[0].rules == ("wands.upright",)
    assert illegal[0].move == SCRIPT["moves"][10]["move"]
    assert any("upright" in v for v in illegal[0].verdicts)
    assert "2,1: blue medium (upright) arrived" in illegal[0].changes
    assert not [e for e in events if e.kind is EventKind.QUESTION]
    # the frame after the illegal one puts the table right and carries the next move
    twelve = [e.kind for e in events if e.frame == 12]
    assert twelve == [EventKind.INFO, EventKind.ACCEPTED]
    assert s.is_over and s.status is Status.OVER
    assert s.scores() == SCRIPT["final_scores"]
    assert events[-1].kind is EventKind.GAME_OVER
    # the camera's moves, the clicks and the flagged table went to the recorder
    kinds = [k for k, _, _ in rec.calls]
    assert kinds[0] == "start" and kinds.count("move") == len(want) and kinds.count("illegal") == 1
    # the recorded note names the rule's id, as the window does (an export kept only words)
    (ruled,) = [kw["note"] for k, _, kw in rec.calls if k == "illegal"]
    assert ruled.endswith("[rule wands.upright]"), ruled
    assert all(kw.get("observation") is not None for k, _, kw in rec.calls if k == "start")
    clicked = [m for k, m, kw in rec.calls if kw.get("note") == "clicked by a player"]
    assert clicked == list(scripted_clicks().values())
    assert rec.finished == (SCRIPT["final_scores"], ["blue"])
    # each judgement is timed for bench/live.py (speed is measured there, not asserted here)
    assert len(s.latencies_ms) >= len(want) - len(scripted_clicks())


def test_an_illegal_move_inserted_into_a_replay_is_flagged_with_its_rule() -> None:
    s = sample_session()
    play(s, range(5))  # ... red clones at 0,2; blue to move
    # blue lays wands-05 and slides its upright pyramid to 2,1: upright pyramids cannot move
    bad = sample_record(4)
    bad["cards"].append({"id": "wands-05", "center_mm": [175.0, 600.0], "angle_deg": 270.0,
                         "confidence": 0.97})
    for p in bad["pyramids"]:
        if p["color"] == "blue":
            p["base_center_mm"] = [p["base_center_mm"][0], p["base_center_mm"][1] - 95.0]
    ev = s.observe(bad, frame=100)
    assert [e.kind for e in ev] == [EventKind.ILLEGAL]
    assert ev[0].rules == ("wands.upright",)
    assert ev[0].move == "blue: play wands-05 by blue1U@2,2: move 2,1"
    assert s.status is Status.WRONG_TABLE
    # seen again: no second accusation, the session waits
    assert [e.kind for e in s.observe(bad, frame=101)] == [EventKind.WAITING]
    # the table put back as it was: cleared, and the game goes on exactly as scripted
    assert [e.kind for e in s.observe(sample_record(4), frame=102)] == [EventKind.INFO]
    assert s.status is Status.PLAYING
    play(s, range(5, 24))
    assert s.scores() == SCRIPT["final_scores"]
    assert len(s.history) == len(scripted_moves())


def test_a_single_misread_card_asks_instead_of_accusing_and_a_correction_settles_it() -> None:
    s = sample_session()
    play(s, range(5))
    rec = sample_record(5)  # blue plays cups-07 to grow ... and the camera misreads 0,0
    for c in rec["cards"]:
        if c["id"] == "swords-05":
            c["id"] = "swords-06"
    ev = s.observe(rec, frame=5)
    assert [e.kind for e in ev] == [EventKind.QUESTION]
    q = ev[0]
    assert q.suggestions and q.suggestions[0].correction == CardCorrection((0, 0), "swords-06",
                                                                            "swords-05")
    assert q.suggestions[0].move == "blue: play cups-07 by blue1U@2,2: grow"
    assert "swords-05" in q.text
    assert s.status is Status.QUESTION and len(s.history) == 4
    ev = s.correct(q.suggestions[0].correction)
    assert [e.kind for e in ev] == [EventKind.INFO, EventKind.ACCEPTED]
    assert ev[1].move == "blue: play cups-07 by blue1U@2,2: grow"
    # the correction holds while the camera keeps misreading that card
    assert [e.kind for e in s.observe(rec, frame=5)] == [EventKind.UNCHANGED]
    play(s, range(6, 24))
    assert s.scores() == SCRIPT["final_scores"]


def test_a_misread_pyramid_size_asks_and_override_takes_the_suggestion() -> None:
    s = sample_session()
    play(s, range(2))
    rec = sample_record(2)  # blue starts on 2,2 with a small pyramid, read as a medium
    for p in rec["pyramids"]:
        if p["color"] == "blue":
            p["pips"] = 2
    ev = s.observe(rec, frame=2)
    assert [e.kind for e in ev] == [EventKind.QUESTION]
    corr = ev[0].suggestions[0].correction
    assert corr == PyramidCorrection((2, 2), parse_pyramid("blue2U"), parse_pyramid("blue1U"))
    ev = s.override()
    assert [e.kind for e in ev] == [EventKind.INFO, EventKind.ACCEPTED]
    assert ev[-1].move == "blue: start 2,2"


def test_override_accepts_the_flagged_move_against_the_rules() -> None:
    rec = FakeRecorder()
    s = sample_session(recorder=rec)
    play(s, range(12))  # frame 11 is the illegal move
    assert s.status is Status.WRONG_TABLE
    ev = s.override()
    assert [e.kind for e in ev] == [EventKind.ACCEPTED]
    assert ev[0].source == "override" and ev[0].move == SCRIPT["moves"][10]["move"]
    assert s.history[-1].kind == "override"
    assert rec.calls[-1][0] == "override"
    state = s.state
    assert state is not None and any(p.color.value == "blue" for p in state.pieces.get((2, 1), ()))
    with pytest.raises(LiveError):
        s.override()  # nothing left to override


def test_clicks_for_moves_the_camera_cannot_see() -> None:
    s = sample_session()
    play(s, range(8), clicks=False)
    assert s.to_move is not None and s.to_move.value == "blue"
    options = s.manual_options()
    assert "blue: draw 3" in options and "blue: pass" in options
    assert all(o.startswith("blue: ") for o in options)
    ev = s.manual("red: draw 3")  # not red's turn
    assert [e.kind for e in ev] == [EventKind.ILLEGAL] and len(s.history) == 7
    with pytest.raises(NotationError):
        s.manual("blue: draw lots")
    ev = s.manual("draw 3")  # the colour is whose turn it is
    assert [e.kind for e in ev] == [EventKind.ACCEPTED] and ev[0].move == "blue: draw 3"
    assert ev[0].source == "click"
    assert s.observe(sample_record(8), frame=8)[0].kind is EventKind.UNCHANGED


def test_step_back_takes_back_a_move_and_the_camera_sees_it_again() -> None:
    rec = FakeRecorder()
    s = sample_session(recorder=rec)
    play(s, range(5))
    before = s.history[-2].state
    ev = s.step_back()
    assert ev[0].kind is EventKind.INFO and ev[0].move == "red: use cups-09 by red1U@0,2: clone 1"
    assert s.state is before and len(s.history) == 3
    assert rec.calls[-1][0] == "undo" and rec.calls[-1][2]["state"] is not None
    ev = s.observe(sample_record(4), frame=4)
    assert [e.kind for e in ev] == [EventKind.ACCEPTED]
    for _ in range(4):
        s.step_back()
    with pytest.raises(LiveError):
        s.step_back()


def test_frames_with_a_hand_are_never_trusted() -> None:
    s = sample_session()
    play(s, range(4))
    ev = s.observe(sample_record("hand-01"), frame=50)
    assert [e.kind for e in ev] == [EventKind.WAITING] and "hand" in ev[0].text
    assert len(s.history) == 3


def test_a_territory_read_face_down_with_no_move_to_explain_it_is_waited_on() -> None:
    # a hand over most of a card can leave the camera a patch it reads as a card's back
    s = sample_session()
    play(s, range(4))
    n = len(s.history)
    faceless = sample_record(3)   # the table as it stands, swords-05 (a territory) face down
    hit = [c for c in faceless["cards"] if c["id"] == "swords-05"]
    assert len(hit) == 1
    hit[0]["id"] = "back"
    ev = s.observe(faceless, frame=60)
    assert [e.kind for e in ev] == [EventKind.WAITING] and "face down" in ev[0].text
    assert len(s.history) == n and s.status is Status.PLAYING
    # the clear view after it is judged as usual
    assert [e.kind for e in s.observe(sample_record(4), frame=61)] == [EventKind.ACCEPTED]


def test_end_game_scores_and_finishes_the_recording() -> None:
    rec = FakeRecorder()
    s = sample_session(recorder=rec)
    play(s, range(6))
    ev = s.end_game()
    assert [e.kind for e in ev] == [EventKind.GAME_OVER]
    assert rec.finished is not None and rec.finished[0] == s.scores()
    assert s.observe(sample_record(6), frame=6) == []
    assert s.manual_options() == []


def test_the_board_must_be_dealt_first_and_a_bad_board_is_explained() -> None:
    s = sample_session()
    with pytest.raises(LiveError):
        s.manual("red: draw 1")
    empty = sample_record(0)
    empty["cards"] = [c for c in empty["cards"] if c["id"] == "back"]
    assert [e.kind for e in s.observe(empty)] == [EventKind.WAITING]
    dup = sample_record(0)
    dup["cards"][1]["id"] = dup["cards"][0]["id"]
    ev = s.observe(dup)
    assert ev[0].kind is EventKind.WAITING and "twice" in ev[0].text
    assert s.status is Status.SETUP
    assert s.observe(sample_record(0))[0].text.startswith("board dealt: 9 cards")


def test_a_face_down_territory_is_named_by_a_player() -> None:
    from companion.games.zarcana.engine import invariant_errors, position

    start = position(["red", "blue"], edition="looney",
                     board={"0,0": "cups-03", "1,0": "~?", "0,1": "swords-02"},
                     pieces={"1,0": "red1U"}, hands={"red": ["?"] * 3, "blue": ["?"] * 3},
                     deck=["?"] * 69)
    assert not invariant_errors(start)
    s = LiveSession("zarcana", edition="looney", players=["red", "blue"], mat=MAT,
                    initial_state=start)
    assert s.hidden_cards() == [(1, 0)]
    with pytest.raises(LiveError):
        s.name_card((0, 0), "major-10")   # face up: nothing to name
    with pytest.raises(LiveError):
        s.name_card((1, 0), "cups-03")    # that card lies elsewhere
    ev = s.name_card((1, 0), "major-10")
    assert ev[0].kind is EventKind.INFO and s.hidden_cards() == []
    st = s.state
    assert st is not None and st.board[(1, 0)][-1] == ("major-10", False)
    assert not invariant_errors(st)
    s.end_game()
    assert s.scores()["red"] == 10  # the Wheel territory is turned up at the end


def test_a_wheel_of_fortune_build_seen_face_down_is_taken_and_its_card_asked_for() -> None:
    """Red plays the Wheel of Fortune to build: the camera sees a card's back on red's
    territory. Every picture from it on was "seen face down and no move explains it", and
    the game stalled for good. The build is taken, the card is left for the players to
    name, and the game goes on."""
    from companion.games.zarcana.engine import position
    from companion.games.zarcana.table import TableView

    start = position(["red", "blue"], edition="looney",
                     board={"0,0": "cups-03", "1,0": "swords-05", "0,1": "swords-02"},
                     pieces={"1,0": "red1U"}, hands={"red": ["?"] * 3, "blue": ["?"] * 3},
                     deck=["?"] * 69)
    s = LiveSession("zarcana", edition="looney", players=["red", "blue"], mat=MAT,
                    initial_state=start)
    view = TableView.of(start)
    cards = dict(view.cards)
    cards[(1, 0)] = "back"
    ev = s.observe(make_record(cards, view.pyramids, discard=["major-10"]), frame=1)
    assert [e.kind for e in ev] == [EventKind.ACCEPTED], [e.text for e in ev]
    assert ev[0].move == "red: play major-10 by red1U@1,0: build 1,0 =?"
    assert s.hidden_cards() == [(1, 0)]
    s.name_card((1, 0), "wands-07")
    assert s.hidden_cards() == [] and s.status is Status.PLAYING
    # never named, it scores nothing at the end, and the end says so
    s = LiveSession("zarcana", edition="looney", players=["red", "blue"], mat=MAT,
                    initial_state=start)
    s.observe(make_record(cards, view.pyramids, discard=["major-10"]), frame=1)
    ev = s.end_game()
    assert ev[-1].kind is EventKind.GAME_OVER
    assert ev[-1].text.endswith("(the face-down territory at 1,0 was never named: scored 0)")


def test_an_uncovered_card_never_named_is_said_at_the_end() -> None:
    """The Alchemist's covered card, uncovered by a clicked attack that no picture followed,
    lies face up as "?": the end of the game says it was never named, as it says of a
    face-down territory, since it scored 0."""
    from alchemist_support import (ALCHEMIST_SETTINGS, ALCHEMIST_UNCOVERING, alchemist_pictures,
                                   alchemist_start)

    s = LiveSession("zarcana", edition="1996", players=["red", "blue"], mat=MAT,
                    settings=ALCHEMIST_SETTINGS, initial_state=alchemist_start())
    s.observe(alchemist_pictures()[0], frame=1)
    s.manual(ALCHEMIST_UNCOVERING)
    assert s.unnamed_face_up_cards() == [(1, 0)]
    ev = s.end_game()
    assert ev[-1].kind is EventKind.GAME_OVER
    assert ev[-1].text.endswith("(the card at 1,0 was never named: scored 0)"), ev[-1].text


def test_an_uncovered_card_named_by_the_players_settles_the_question_its_misread_asked(
        ) -> None:
    """Blue's attack, clicked, uncovers the card red's Alchemist covered at once; the next
    picture reads it as swords-02, which lies at 0,1: the session asks "is the card at 1,0
    ?, not swords-02?". The players name the card (cups-04) while the question is open:
    the name says what the camera misread there, so the question is settled (it stayed
    open, asking after a card the game now knew), the misread held and recorded as a
    correction is, and the same picture again is no change."""
    from alchemist_support import (ALCHEMIST_SETTINGS, ALCHEMIST_UNCOVERING, alchemist_pictures,
                                   alchemist_start)
    from companion.games.zarcana.table import TableView

    s = LiveSession("zarcana", edition="1996", players=["red", "blue"], mat=MAT,
                    settings=ALCHEMIST_SETTINGS, initial_state=alchemist_start())
    rec = FakeRecorder()
    s.recorder = rec
    s.observe(alchemist_pictures()[0], frame=1)
    s.manual(ALCHEMIST_UNCOVERING)
    view = TableView.of(alchemist_start())
    misread = make_record({**view.cards, (1, 0): "swords-02"}, view.pyramids,
                          discard=["major-09", "wands-07", "swords-03"])
    ev = s.observe(misread, frame=2)
    assert [e.kind for e in ev] == [EventKind.QUESTION], [e.text for e in ev]
    assert s.status is Status.QUESTION and s.unnamed_face_up_cards() == [(1, 0)]
    ev = s.name_card((1, 0), "cups-04")
    assert ev[0].text == "the card at 1,0 is cups-04: named by the players", ev[0].text
    assert s.status is Status.PLAYING and s.pending_suggestions == (), [e.text for e in ev]
    assert ev[-1].kind is EventKind.INFO and ev[-1].text == "the table is put right; red to move"
    with pytest.raises(LiveError):
        s.override()    # (no question left to answer)
    assert s.state is not None and s.state.board[(1, 0)][-1] == ("cups-04", True)
    # (the game file holds the misread, as a correction made by hand)
    assert [(k, m) for k, m, _ in rec.calls[-2:]] == [
        ("correction", "covered-name said 1,0 cups-04"),
        ("correction", "card 1,0 swords-02=cups-04")], rec.calls[-2:]
    ev = s.observe(misread, frame=3)
    assert [e.kind for e in ev] == [EventKind.UNCHANGED], [e.text for e in ev]
    ev = s.observe(alchemist_pictures()[1], frame=4)
    assert [e.kind for e in ev] == [EventKind.UNCHANGED], [e.text for e in ev]


def test_the_question_on_an_uncovered_card_misread_can_be_answered_then_the_card_named(
        ) -> None:
    """As above, the picture after the clicked attack reads the uncovered card as swords-02
    (at 0,1 already), and the session asks "is the card at 1,0 ?, not swords-02?". Its one
    answer raised "'?' is not a card id", so the question could not be answered: it is
    taken (the camera's swords-02 there read as the unnamed card). Named later, the card
    is read as named: the answer held "?" there, and every picture asked "is the card at
    1,0 cups-04, not ??", which no answer settled."""
    from alchemist_support import (ALCHEMIST_SETTINGS, ALCHEMIST_UNCOVERING, alchemist_pictures,
                                   alchemist_start)
    from companion.games.zarcana.table import TableView

    s = LiveSession("zarcana", edition="1996", players=["red", "blue"], mat=MAT,
                    settings=ALCHEMIST_SETTINGS, initial_state=alchemist_start())
    rec = FakeRecorder()
    s.recorder = rec
    s.observe(alchemist_pictures()[0], frame=1)
    s.manual(ALCHEMIST_UNCOVERING)
    view = TableView.of(alchemist_start())
    misread = make_record({**view.cards, (1, 0): "swords-02"}, view.pyramids,
                          discard=["major-09", "wands-07", "swords-03"])
    ev = s.observe(misread, frame=2)
    assert [e.kind for e in ev] == [EventKind.QUESTION], [e.text for e in ev]
    ev = s.override()       # (the window's answer: correct() with the suggestion)
    assert s.status is Status.PLAYING, [e.text for e in ev]
    assert ev[-1].text == "the table is put right; red to move", [e.text for e in ev]
    assert s.unnamed_face_up_cards() == [(1, 0)]
    ev = s.observe(misread, frame=3)
    assert [e.kind for e in ev] == [EventKind.UNCHANGED], [e.text for e in ev]
    ev = s.name_card((1, 0), "cups-04")
    assert s.status is Status.PLAYING, [e.text for e in ev]
    # (the game file holds the misread as read now, as a correction made by hand)
    assert [(k, m) for k, m, _ in rec.calls[-2:]] == [
        ("correction", "covered-name said 1,0 cups-04"),
        ("correction", "card 1,0 swords-02=cups-04")], rec.calls[-2:]
    ev = s.observe(misread, frame=4)
    assert [e.kind for e in ev] == [EventKind.UNCHANGED], [e.text for e in ev]
    ev = s.observe(alchemist_pictures()[1], frame=5)
    assert [e.kind for e in ev] == [EventKind.UNCHANGED], [e.text for e in ev]


def test_the_alchemist_built_from_an_unseen_draw_pile_is_judged() -> None:
    """``--setting optional_trumps=major-09:alchemist``: the Alchemist builds twice, a stack
    of two, from the draw pile nobody sees. Listing the moves raised on its first build's
    unknown card: the session stopped on every picture (and the window's buttons) while the
    card could be played, from the hand or from red's territory. Now the stack is accepted,
    its covered card unnamed (the camera never sees it), and the game goes on."""
    from companion.games.zarcana.engine import invariant_errors, position
    from companion.games.zarcana.table import TableView

    settings = {"optional_trumps": (("major-09", "alchemist"),)}

    def session(board: dict[str, str], pieces: dict[str, str]) -> LiveSession:
        start = position(["red", "blue"], edition="1996", board=board, pieces=pieces,
                         hands={"red": ["?"] * 3, "blue": ["?"] * 3}, deck=["?"] * 69,
                         **settings)
        return LiveSession("zarcana", edition="1996", players=["red", "blue"], mat=MAT,
                           settings=settings, initial_state=start)

    # played from the hand: red's upright pyramid stacks two cards on its own territory
    s = session({"0,0": "cups-03", "1,0": "swords-05", "0,1": "swords-02"}, {"1,0": "red1U"})
    assert s.state is not None
    view = TableView.of(s.state)
    ev = s.observe(make_record({**view.cards, (1, 0): "wands-07"}, view.pyramids,
                               discard=["major-09"]), frame=1)
    assert [e.kind for e in ev] == [EventKind.ACCEPTED], [e.text for e in ev]
    assert ev[0].move == "red: play major-09 as alchemist by red1U@1,0: build 1,0 =?; build 1,0 =wands-07"
    assert s.state is not None and [c for c, _ in s.state.board[(1, 0)]] == [
        "swords-05", "?", "wands-07"]
    assert invariant_errors(s.state) == [] and s.state.to_move is Color.BLUE
    # the same with another card misread: the question names the Alchemist's stack
    s = session({"0,0": "cups-03", "1,0": "swords-05", "0,1": "swords-02"}, {"1,0": "red1U"})
    ev = s.observe(make_record({**view.cards, (1, 0): "wands-07", (0, 0): "cups-04"},
                               view.pyramids, discard=["major-09"]), frame=1)
    assert [(e.kind, e.move) for e in ev] == [(EventKind.QUESTION, "red: play major-09 as "
                                               "alchemist by red1U@1,0: build 1,0 =?; build "
                                               "1,0 =wands-07")], [e.text for e in ev]
    # red's pyramid stands on the Alchemist: the buttons, a reorient, the power used
    s = session({"0,0": "cups-03", "1,0": "major-09", "0,1": "swords-02"}, {"1,0": "red1E"})
    assert "red: draw 1" in s.manual_options()
    assert s.state is not None
    view = TableView.of(s.state)
    ev = s.observe(make_record(view.cards, {(1, 0): (parse_pyramid("red1S"),)}), frame=1)
    assert [e.move for e in ev] == ["red: reorient red1E@1,0>S"], [e.text for e in ev]
    s.manual("blue: draw 1")
    ev = s.observe(make_record({**view.cards, (1, 1): "cups-09"},
                               {(1, 0): (parse_pyramid("red1S"),)}), frame=2)
    assert [e.move for e in ev] == [
        "red: use major-09 as alchemist by red1S@1,0: build 1,1 =?; build 1,1 =cups-09"], \
        [e.text for e in ev]


def test_the_alchemist_built_from_a_known_draw_pile_is_judged_its_cards_named() -> None:
    """A game started from a position whose draw pile is known, in order: the Alchemist's
    two builds draw its top two cards. The referee named the first (covered) build "?",
    as from a pile nobody sees, and the engine wants the top card there: no move explained
    the table. Now both builds are named from the pile, the first its top card."""
    from companion.games.zarcana.engine import invariant_errors, position
    from companion.games.zarcana.table import TableView

    settings = {"optional_trumps": (("major-09", "alchemist"),)}
    start = position(["red", "blue"], edition="1996",
                     board={"0,0": "cups-03", "1,0": "swords-05", "0,1": "swords-02"},
                     pieces={"1,0": "red1U"},
                     hands={"red": ["major-09", "cups-05", "cups-06"],
                            "blue": ["cups-07", "cups-08", "cups-09"]}, **settings)
    assert not start.hidden
    first, second = start.deck[-1], start.deck[-2]     # (the top card last)

    def session() -> LiveSession:
        return LiveSession("zarcana", edition="1996", players=["red", "blue"], mat=MAT,
                           settings=settings, initial_state=start)

    view = TableView.of(start)
    played = (f"red: play major-09 as alchemist by red1U@1,0: build 1,0 ={first}; "
              f"build 1,0 ={second}")
    s = session()
    ev = s.observe(make_record({**view.cards, (1, 0): second}, view.pyramids,
                               discard=["major-09"]), frame=1)
    assert [(e.kind, e.move) for e in ev] == [(EventKind.ACCEPTED, played)], [e.text for e in ev]
    assert s.state is not None and [c for c, _ in s.state.board[(1, 0)]] == [
        "swords-05", first, second]
    assert invariant_errors(s.state) == [] and s.state.to_move is Color.BLUE
    # the same with another card misread: the question names the Alchemist's stack
    s = session()
    ev = s.observe(make_record({**view.cards, (1, 0): second, (0, 0): "cups-04"},
                               view.pyramids, discard=["major-09"]), frame=1)
    assert [(e.kind, e.move) for e in ev] == [(EventKind.QUESTION, played)], \
        [e.text for e in ev]


def test_territory_powers_no_camera_sees_are_offered_as_clicks() -> None:
    """Justice's trade and the Star's draw, used from a territory, leave the table as it
    was: the window offered no button for them, the camera saw no change, and the next
    player's move was then judged as this one's. They are offered, and a click takes them;
    powers the table shows (a clone) are not."""
    from companion.games.zarcana.engine import position

    start = position(["red", "blue", "green"], edition="looney",
                     board={"0,0": "major-11", "1,0": "major-17", "0,1": "swords-02",
                            "1,1": "cups-04"},
                     pieces={"0,0": "red1U", "1,0": "red2U", "1,1": "red1U"},
                     hands={c: ["?"] * 3 for c in ("red", "blue", "green")}, deck=["?"] * 65)
    s = LiveSession("zarcana", edition="looney", players=["red", "blue", "green"], mat=MAT,
                    initial_state=start)
    options = s.manual_options()
    uses = [o for o in options if ": use " in o]
    assert uses == ["red: use major-11 by red1U@0,0: trade blue",
                    "red: use major-11 by red1U@0,0: trade green",
                    "red: use major-17 by red2U@1,0: draw 4"], options
    ev = s.manual("red: use major-11 by red1U@0,0: trade green")
    assert ev[0].kind is EventKind.ACCEPTED and s.state is not None
    assert s.state.to_move is Color.BLUE
    # without a mat the discard pile is not watched: Judgement's draw from it is unseen too
    from calibration.mat import virtual_mat

    judged = position(["red", "blue"], edition="looney",
                      board={"0,0": "major-20", "1,0": "cups-04", "0,1": "swords-02"},
                      pieces={"0,0": "red1U"}, discard=["swords-04", "cups-09", "wands-02"],
                      hands={c: ["?"] * 3 for c in ("red", "blue")}, deck=["?"] * 67)
    for mat, draws in ((MAT, ["draw 0"]), (virtual_mat(), ["draw 0", "draw 1", "draw 2",
                                                           "draw 3"])):
        s = LiveSession("zarcana", edition="looney", players=["red", "blue"], mat=mat,
                        initial_state=judged)
        uses = [o.rsplit(": ", 1)[1] for o in s.manual_options() if "major-20" in o]
        assert uses == draws, (mat, uses)


def test_a_picture_after_the_fool_says_its_drawn_card_is_to_be_named_first() -> None:
    """Red plays the Fool: its drawn card, unseen, must be named ("reveal") before what it
    does on the table can be judged. The pictures after it said only "is something covering
    the table?"; they say what to click."""
    from companion.games.zarcana.engine import position
    from companion.games.zarcana.table import TableView

    start = position(["red", "blue"], edition="looney",
                     board={"0,0": "cups-03", "1,0": "swords-05", "0,1": "swords-02"},
                     pieces={"1,0": "red1U"}, hands={"red": ["?"] * 3, "blue": ["?"] * 3},
                     deck=["?"] * 69)
    s = LiveSession("zarcana", edition="looney", players=["red", "blue"], mat=MAT,
                    initial_state=start)
    view = TableView.of(start)
    ev = s.observe(make_record(view.cards, view.pyramids, discard=["major-00"]), frame=1)
    assert [e.move for e in ev] == ["red: play major-00"]
    cards = dict(view.cards)
    del cards[(0, 1)]           # (a drawn Sword destroyed it)
    ev = s.observe(make_record(cards, view.pyramids, discard=["major-00", "swords-09"]),
                   frame=2)
    assert ev[-1].kind is EventKind.WAITING
    assert ev[-1].text.endswith("(the Fool's drawn card is not named yet: red clicks \"reveal\" "
                                "with it first, under Moves the camera cannot see)")
    assert "red: reveal swords-09" in s.manual_options()


@pytest.mark.parametrize("drawn", [0, 1, 2, 3])
def test_judgements_draw_from_the_discard_pile_is_read_off_the_cards_under_it(drawn: int
                                                                               ) -> None:
    """Red plays Judgement from the hand and takes cards off the discard pile: Judgement
    then lies on the pile over the cards left. A spread pile shows which: the cards under
    Judgement are those below the ones taken. Every count fits the top card, and the
    simplest ("draw 0") was taken whatever the pile showed, the hand sizes wrong from then
    on (found by the whole-game hunt: 1996, 3 players, seed 2, move 99)."""
    from companion.games.zarcana.engine import position
    from companion.games.zarcana.table import TableView

    pile = ["cups-02", "cups-03", "wands-04", "swords-05", "swords-06"]
    start = position(["red", "blue"], edition="looney",
                     board={"0,0": "cups-08", "1,0": "swords-10", "0,1": "swords-02"},
                     pieces={"1,0": "red1U"}, hands={"red": ["?"] * 3, "blue": ["?"] * 3},
                     deck=["?"] * 60, discard=pile, box=["?"] * 4)
    s = LiveSession("zarcana", edition="looney", players=["red", "blue"], mat=MAT,
                    initial_state=start)
    view = TableView.of(start)
    assert s.observe(make_record(view.cards, view.pyramids, discard=pile), frame=0)[0].kind \
        is EventKind.UNCHANGED
    left = pile[:len(pile) - drawn]
    ev = s.observe(make_record(view.cards, view.pyramids, discard=left + ["major-20"]),
                   frame=1)
    assert [(e.kind, e.move) for e in ev] == [
        (EventKind.ACCEPTED, f"red: play major-20: draw {drawn}")], [e.text for e in ev]
    assert s.state is not None and len(s.state.hand(Color.RED)) == 2 + drawn


def test_the_fools_draw_that_rebuilds_the_draw_pile_waits_for_the_card_to_be_named() -> None:
    """Red plays the Fool with the draw pile empty: its draw shuffles the discard pile into
    a new draw pile, and the picture shows the pile gone, nothing else. Any card the Fool
    may draw and play fits that picture; the first of them in the deck's order (cups-01)
    was taken as the card drawn, named from nothing, and the game went on with the wrong
    card in play. It waits for the click that names it, which is then taken (a card that
    lay on the discard pile: the Fool draws from the new pile)."""
    from companion.games.zarcana.engine import position
    from companion.games.zarcana.table import TableView

    pile = ["wands-03", "swords-10", "cups-07"]
    start = position(["red", "blue"], edition="looney",
                     board={"0,0": "cups-03", "1,0": "swords-05", "0,1": "swords-02"},
                     pieces={"1,0": "red1U"}, hands={"red": ["?"] * 3, "blue": ["?"] * 3},
                     deck=[], discard=pile, box=["?"] * 66)
    s = LiveSession("zarcana", edition="looney", players=["red", "blue"], mat=MAT,
                    initial_state=start)
    view = TableView.of(start)
    ev = s.observe(make_record(view.cards, view.pyramids, discard=pile + ["major-00"],
                               draw=0), frame=1)
    assert [e.move for e in ev] == ["red: play major-00"]
    gone = make_record(view.cards, view.pyramids, discard=[], draw=1)
    ev = s.observe(gone, frame=2)
    assert [e.kind for e in ev] == [EventKind.WAITING], [e.text for e in ev]
    assert "reveal" in ev[0].text and len(s.history) == 1
    assert "red: reveal cups-07" in s.manual_options()
    ev = s.manual("red: reveal cups-07")
    assert [(e.kind, e.move) for e in ev] == [(EventKind.ACCEPTED, "red: reveal cups-07")]
    assert s.state is not None and s.state.in_flight == ("cups-07",)
    assert [e.kind for e in s.observe(gone, frame=3)] == [EventKind.UNCHANGED]


@pytest.mark.parametrize("edition", ["1996", "looney"])
def test_the_tax_an_emperor_asked_for_is_read_from_the_payers_click(edition: str) -> None:
    """Blue's Emperor attacks green and asks a tax: the table shows the attack, never how
    many cards were asked, and the simplest reading (no tax) was taken; green's payment was
    then refused ("another decision must be made first") and could not be clicked at all.
    The payments the other readings leave are offered, and a click of one reads the move
    again with that tax."""
    from companion.games.zarcana.engine import position
    from companion.games.zarcana.table import TableView

    start = position(["red", "blue", "green"], edition=edition,
                     board={"0,0": "cups-03", "1,1": "major-04", "2,1": "swords-02",
                            "0,1": "cups-05"},
                     pieces={"1,1": "blue2E", "2,1": "green1S", "0,0": "red1U"},
                     hands={c: ["?"] * 4 for c in ("red", "blue", "green")}, deck=["?"] * 62,
                     current="blue")
    s = LiveSession("zarcana", edition=edition, players=["red", "blue", "green"], mat=MAT,
                    initial_state=start)
    attacked = TableView.of(start.apply("blue: use major-04 by blue2E@1,1: attack green1S@2,1"))
    ev = s.observe(make_record(attacked.cards, attacked.pyramids), frame=1)
    assert ev[0].move == "blue: use major-04 by blue2E@1,1: attack green1S@2,1"
    assert "green: pay ?+?" in s.manual_options()
    ev = s.manual("green: pay ?+?")
    assert [e.kind for e in ev] == [EventKind.INFO, EventKind.ACCEPTED, EventKind.ACCEPTED]
    assert ev[0].text.startswith("blue's move is read again: blue: use major-04 by blue2E@1,1: "
                                 "attack green1S@2,1; tax 2, not ")
    assert [h.move for h in s.history] == [
        "blue: use major-04 by blue2E@1,1: attack green1S@2,1; tax 2", "green: pay ?+?"]
    # a click the move as read allows leaves it as it is
    s = LiveSession("zarcana", edition=edition, players=["red", "blue", "green"], mat=MAT,
                    initial_state=start)
    s.observe(make_record(attacked.cards, attacked.pyramids), frame=1)
    ev = s.manual("green: draw 1")
    assert [e.kind for e in ev] == [EventKind.ACCEPTED]
    assert s.history[0].move == "blue: use major-04 by blue2E@1,1: attack green1S@2,1"


def test_a_session_from_a_known_position_names_cells_by_its_board() -> None:
    """Given the dealt position, the lattice takes the position's cell names from the card ids
    even when the camera's north-west card is not (0, 0) there."""
    from companion.games.zarcana.table import game_from_table

    first = {(i - 1, j + 1): c for (i, j), c in {
        (0, 0): "swords-05", (0, 1): "major-18", (0, 2): "cups-09", (1, 0): "swords-08",
        (1, 1): "pentacles-04", (1, 2): "cups-05", (2, 0): "major-10", (2, 1): "wands-07",
        (2, 2): "swords-13"}.items()}
    start = game_from_table(SCRIPT["players"], first, edition=SCRIPT["edition"],
                            **SCRIPT["settings"])
    s = sample_session(initial_state=start)
    assert s.status is Status.PLAYING
    ev = s.observe(sample_record(1), frame=1)
    assert [e.kind for e in ev] == [EventKind.ACCEPTED]
    assert ev[0].move == "red: start -1,3"  # the sample's 0,2 in this position's names


def test_a_blurred_frame_is_said_once_and_still_judged() -> None:
    session = sample_session()

    def seen(k: int, blurred: bool | None, spread: float = 0.8) -> list[LiveEvent]:
        rec = dict(sample_record(0))
        if blurred is not None:
            rec.update(blurred=blurred, calibration={"edge_blur_px": spread})
        return session.observe(rec, frame=k)

    def lines(events: list[LiveEvent]) -> list[str]:
        return [e.text for e in events if e.kind is EventKind.INFO and "picture" in e.text]

    first = seen(0, False)
    assert lines(first) == [] and session.status is not Status.SETUP   # dealt, no line
    blurred = seen(1, True, 1.9)
    assert lines(blurred) == ["the picture is blurred (the mat's marker edges spread over "
                              "1.9 px): pyramids may be missed or misread; steady or focus "
                              "the camera"]
    # the frame is still judged: the same table, unchanged
    assert [e.kind for e in blurred if e.kind is not EventKind.INFO] == [EventKind.UNCHANGED]
    assert lines(seen(2, True, 2.4)) == []                      # said once while it lasts
    assert lines(seen(3, None)) == []                           # a record without the word
    assert lines(seen(4, False)) == ["the picture is sharp again"]
    assert lines(seen(5, False)) == []


def test_pyramids_of_colours_outside_the_game_are_not_judged_but_recorded() -> None:
    rec = FakeRecorder()
    session = sample_session(recorder=rec)
    stray = {"color": "orange", "pips": 1, "upright": True, "pointing_deg": None,
             "base_center_mm": [120.0, 80.0], "confidence": 0.9}
    record = dict(sample_record(0))
    record["pyramids"] = [*record["pyramids"], stray]
    session.observe(record, frame=0)
    kind, _, kw = rec.calls[0]
    assert kind == "start"
    saved = kw["observation"]
    assert saved["pyramids"] == []                       # not a piece of this game
    assert saved["ignored_pyramids"] == [stray]          # but the game's file keeps it


def test_a_picture_without_colour_is_said_once_and_its_return_too() -> None:
    session = sample_session()

    def lines(k: int, grey: bool) -> list[str]:
        rec = dict(sample_record(0))
        if grey:
            rec["greyscale"] = True
        return [e.text for e in session.observe(rec, frame=k)
                if e.kind is EventKind.INFO and "colour" in e.text]

    assert lines(0, False) == []
    said = lines(1, True)
    assert len(said) == 1 and said[0].startswith("the picture has no colour")
    assert lines(2, True) == []                  # once while it lasts
    assert lines(3, False) == ["the picture has colour again"]


def test_a_camera_that_sees_the_table_coarsely_is_said_once_and_its_return_too() -> None:
    """A 720p webcam framing the mat (about 0.47 px a mm): its pyramids are missed and
    misread far more often, and the players are told so, once while it lasts."""
    session = sample_session()

    def lines(k: int, per_mm: float | None) -> list[str]:
        rec = dict(sample_record(0))
        if per_mm is not None:
            rec["calibration"] = {"px_per_mm": per_mm}
        return [e.text for e in session.observe(rec, frame=k)
                if e.kind is EventKind.INFO and "px a mm" in e.text or "closely" in e.text]

    assert lines(0, 0.71) == []
    said = lines(1, 0.47)
    assert len(said) == 1 and said[0].startswith("the camera sees the table at 0.47 px a mm")
    assert lines(2, 0.45) == [] and lines(3, None) == []
    assert lines(4, 0.7) == ["the camera sees the table closely enough again"]


def test_a_board_still_being_laid_out_is_not_dealt() -> None:
    """A pause between two cards settles the table: three of the nine cards are not a deal
    (the game could never get past the six still to come)."""
    s = sample_session()
    part = sample_record(0)
    faces = [c for c in part["cards"] if c["id"] != "back"]
    part["cards"] = [c for c in part["cards"] if c["id"] == "back"] + faces[:3]
    ev = s.observe(part)
    assert ev[0].kind is EventKind.WAITING
    assert "the board shows 3 of the 9 cards the deal lays out" in ev[0].text
    assert s.status is Status.SETUP
    assert s.observe(sample_record(0))[0].text.startswith("board dealt: 9 cards")


def test_a_picture_without_colour_is_not_judged() -> None:
    """A camera gone to its night mode mid-game: every pyramid reads white. Judged, that
    would be every pyramid gone, an illegal table; it waits for colour instead."""
    s = sample_session()
    play(s, range(0, 4))
    moves = [h.move for h in s.history]
    grey = dict(sample_record(4))
    grey["greyscale"] = True
    grey["pyramids"] = [dict(p, color="white") for p in grey["pyramids"]]
    ev = s.observe(grey, frame=4)
    assert [e.kind for e in ev if e.kind is EventKind.ILLEGAL] == []
    assert any(e.kind is EventKind.WAITING and "no colour" in e.text for e in ev)
    assert [h.move for h in s.history] == moves and s.status is Status.PLAYING
    s.observe(sample_record(4), frame=5)         # colour back: the move is judged
    assert len(s.history) == len(moves) + 1



def test_a_move_taken_back_on_the_table_is_named_not_taken_for_a_misread() -> None:
    """The players undo the last move by hand: the table is the position before it. Asking
    only whether a card was misread would invite a false correction; the session says first
    what the table shows (for the Take-back button, or the move put back)."""
    s = sample_session()
    play(s, range(0, 7))
    moves = [h.move for h in s.history]
    ev = s.observe(sample_record(5), frame=7)
    assert [e.kind for e in ev] == [EventKind.QUESTION]
    assert ev[0].text.startswith(f"the table shows the position before the last move "
                                 f"({moves[-1]}): press \"Take back move\"")
    assert "; or is a piece misread: " in ev[0].text and ev[0].suggestions
    assert [h.move for h in s.history] == moves
    s.step_back()                                    # the Take-back button
    assert s.observe(sample_record(5), frame=8)[0].kind is EventKind.UNCHANGED


def test_two_moves_taken_back_on_the_table_are_both_named() -> None:
    """The players undo the last two moves by hand: the session names both, oldest first,
    and two presses of the Take-back button agree with the table."""
    s = sample_session()
    play(s, range(0, 7))
    moves = [h.move for h in s.history]
    ev = s.observe(sample_record(4), frame=7)
    said = [e for e in ev if e.kind in (EventKind.QUESTION, EventKind.WAITING)]
    assert said and said[0].text.startswith(
        f"the table shows the position before the last 2 moves ({moves[-2]}; {moves[-1]}): "
        "press \"Take back move\" 2 times")
    assert [h.move for h in s.history] == moves
    s.step_back()
    s.step_back()
    assert s.observe(sample_record(4), frame=8)[0].kind is EventKind.UNCHANGED


@pytest.mark.parametrize("back", [5, 4])
def test_the_position_before_the_last_moves_seen_again_is_still_waited_on(back: int) -> None:
    """The table taken back by one move (5) or two (4), seen on three pictures in a row: it
    was said in full each time, and asked each time where a misread would explain it too;
    the other waits say "still waiting" on a repeat. It says so, naming the move(s) still."""
    s = sample_session()
    play(s, range(0, 7))
    moves = [h.move for h in s.history]
    first = s.observe(sample_record(back), frame=7)[-1]
    assert first.text.startswith("the table shows the position before"), first.text
    for frame in (8, 9):
        ev = s.observe(sample_record(back), frame=frame)
        assert [e.kind for e in ev] == [EventKind.WAITING], [e.text for e in ev]
        assert ev[0].text.startswith("still waiting"), ev[0].text
        assert moves[-1] in ev[0].text and "Take back move" in ev[0].text, ev[0].text
    asked = Status.QUESTION if first.kind is EventKind.QUESTION else Status.PLAYING
    assert s.status is asked and [h.move for h in s.history] == moves
    for _ in range(6 - back):       # (the Take-back button)
        s.step_back()
    assert s.observe(sample_record(back), frame=10)[0].kind is EventKind.UNCHANGED


@pytest.mark.parametrize("last", [3, 7])
def test_a_camera_going_back_and_forth_to_the_position_before_the_last_move_waits(
        last: int) -> None:
    """The last move's piece seen and not seen by turns (green's START at 3, red's reorient
    at 7: a hand over it and lifted, a pose misread and read right): the table before the
    move was said, or asked about, again on every other picture. It waits from the third
    picture, as for any two tables by turns; the table seen twice in a row is said again."""
    s = sample_session()
    play(s, range(last + 1))
    heard = [s.observe(sample_record(k), frame=100 + i)[-1]
             for i, k in enumerate([last - 1, last] * 3)]
    back = [e for e in heard if e.text.startswith("the table shows the position before")]
    assert heard.index(back[0]) == 0 and len(back) == 1, [e.text for e in heard]
    assert [e.kind for e in heard[2::2]] == [EventKind.WAITING] * 2, [e.text for e in heard]
    assert all(e.text.startswith("the camera sees two tables by turns") for e in heard[2::2])
    assert [s.observe(sample_record(last - 1), frame=120 + i)[-1].text.startswith(
        "the table shows the position before") for i in range(2)] == [False, True]
    play(s, range(last, 24))
    assert_true_game(s)


def test_a_table_ruled_on_before_a_move_taken_back_by_the_button_is_ruled_on_again() -> None:
    """Blue's illegal move (picture 11) ruled on, the table put right and blue's reorient
    taken (picture 12), then "Take back move" pressed and the illegal move made again: the
    game's position is the one both pictures were judged in, and the picture was taken for
    the camera going back and forth between them ("cannot tell yet which is right"), though
    the camera saw each once. It is ruled on."""
    s = sample_session()
    play(s, range(13))
    s.step_back()
    ev = s.observe(sample_record(11), frame=200)
    assert [e.kind for e in ev] == [EventKind.ILLEGAL], [e.text for e in ev]
    assert ev[0].rules == ("wands.upright",), ev[0].text


def test_a_table_further_back_than_the_take_back_depth_is_not_called_taken_back(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from companion.live import session as session_module

    s = sample_session()
    play(s, range(0, 7))
    ev = s.observe(sample_record(2), frame=7)       # four moves back
    assert any("before the last 4 moves" in e.text for e in ev)
    monkeypatch.setattr(session_module, "TAKE_BACK_DEPTH", 3)
    s2 = sample_session()
    play(s2, range(0, 7))
    ev = s2.observe(sample_record(2), frame=7)
    assert not any("the table shows the position before" in e.text for e in ev)


def test_the_ghosts_colour_given_as_a_setting_is_a_piece_of_the_game() -> None:
    """``run --setting optional_trumps=major-05:ghost --setting ghost_color=black``: a black
    pyramid is the invisible player's, judged as a piece, not dropped as a stray of a colour
    outside the game."""
    s = LiveSession("zarcana", edition="looney", players=["red", "blue", "green"],
                    settings={"optional_trumps": (("major-05", "ghost"),),
                              "ghost_color": "black"}, mat=MAT)
    assert s.observe(sample_record(0), frame=0)[0].text.startswith("board dealt")
    assert s.state is not None and s.state.ghost is Color.BLACK
    rec = sample_record(0)
    card = next(c for c in rec["cards"] if c["id"] != "back")
    rec["pyramids"] = list(rec["pyramids"]) + [
        {"color": "black", "pips": 1, "upright": True, "pointing_deg": None,
         "base_center_mm": card["center_mm"], "confidence": 0.9}]
    ev = s.observe(rec, frame=1)
    assert [e.kind for e in ev] != [EventKind.UNCHANGED]
    assert any("black" in e.text or "black" in " ".join(e.changes) for e in ev), ev


def test_a_camera_nudged_mid_game_loses_no_move() -> None:
    """Without a mat, from the 9th frame on every position is 77 mm further east (a camera
    turned a little, or a table frame fitted anew): the board is found again once, and the
    game goes on to its true scores."""
    from calibration.mat import virtual_mat

    def moved(rec: dict[str, Any]) -> dict[str, Any]:
        rec["cards"] = [dict(c, center_mm=[c["center_mm"][0] + 77.0, c["center_mm"][1]])
                        for c in rec["cards"]]
        rec["pyramids"] = [dict(p, base_center_mm=[p["base_center_mm"][0] + 77.0,
                                                   p["base_center_mm"][1]])
                           for p in rec["pyramids"]]
        return rec

    s = sample_session(mat=virtual_mat())
    heard = play(s, range(24), change=lambda k, rec: moved(rec) if k >= 9 else rec)
    found = [e for e in heard if "the board is found again" in e.text]
    assert len(found) == 1 and found[0].frame == 9
    assert_true_game(s)


@pytest.mark.parametrize("first, to_move", [(1, "blue"), (2, "green"), (3, "red")])
def test_a_companion_started_after_the_first_starts_deals_with_them(first: int,
                                                                    to_move: str) -> None:
    """The first picture already shows the first players' START pyramids (the camera came
    on late): they are dealt in, the next player is to move, and the game goes on to its
    true scores."""
    s = sample_session()
    clicks = scripted_clicks()
    dealt = s.observe(sample_record(first), frame=first)
    assert dealt[0].text.endswith(f"; {to_move} to move") and "start(s) already made" in dealt[0].text
    for k in range(first + 1, 24):
        if k in clicks:
            s.manual(clicks.pop(k))
        s.observe(sample_record(k), frame=k)
    assert [h.move.split(" =")[0] for h in s.history] == scripted_moves()[first:]
    assert s.scores() == SCRIPT["final_scores"]


def test_a_game_under_way_is_not_dealt_from_a_picture() -> None:
    s = sample_session()
    ev = s.observe(sample_record(5), frame=5)      # a pyramid has grown: a game under way
    assert ev[0].kind is EventKind.WAITING and s.state is None
    assert "not the first players' starts" in ev[0].text and "--record" in ev[0].text
    assert s.observe(sample_record(0), frame=6)[0].text.startswith("board dealt: 9 cards")


def test_a_board_with_more_cards_than_the_deal_lays_out_is_not_dealt() -> None:
    s = LiveSession("zarcana", edition=SCRIPT["edition"], players=SCRIPT["players"],
                    settings={"layout_cards": 4}, mat=MAT)
    ev = s.observe(sample_record(0), frame=0)
    assert ev[0].kind is EventKind.WAITING and s.state is None
    assert "the board shows 9 cards, and the deal lays out 4 for 3 players" in ev[0].text


def test_without_a_mat_a_card_laid_aside_does_not_change_the_move() -> None:
    """A player lays a card face up far from the board and the piles as blue plays cups-07
    onto the discard pile (no mat, so no zones): the pile beside the draw pile names the
    card played, and the game goes on to its true scores."""
    from calibration.mat import virtual_mat

    s = sample_session(mat=virtual_mat())
    aside = {"id": "cups-03", "center_mm": [880.0, 620.0], "angle_deg": 12.0,
             "confidence": 1.0}
    play(s, range(24), change=lambda k, rec: dict(rec, cards=rec["cards"] + [aside])
         if k == 5 else rec)
    assert_true_game(s)


def test_starts_already_on_the_table_are_checked_as_starts() -> None:
    """Each START the first picture shows is made through the rules: a START in the
    wasteland, or (1996) two on one territory, is not dealt from."""
    def with_starts(*where: tuple[str, tuple[float, float]]) -> dict[str, Any]:
        rec = sample_record(0)
        rec["pyramids"] = [{"color": c, "pips": 1, "upright": True, "pointing_deg": None,
                            "base_center_mm": list(xy), "confidence": 0.9} for c, xy in where]
        return rec

    middle = next(c["center_mm"] for c in sample_record(0)["cards"] if c["id"] != "back")
    waste = (middle[0] - 95.0, middle[1])            # beside the board's west edge
    looney = LiveSession("zarcana", edition="looney", players=["red", "blue", "green"],
                         settings=SCRIPT["settings"], mat=MAT)
    ev = looney.observe(with_starts(("red", waste)), frame=0)
    assert ev[0].kind is EventKind.WAITING and looney.state is None
    assert "as a START red: start -1,0 breaks the rules" in ev[0].text and ev[0].rules
    e1996 = LiveSession("zarcana", edition="1996", players=["red", "blue", "green"], mat=MAT)
    ev = e1996.observe(with_starts(("red", middle), ("blue", middle)), frame=0)
    assert ev[0].kind is EventKind.WAITING and "blue: start 0,0 breaks the rules" in ev[0].text


@pytest.mark.parametrize("lost", [5, 9, 21])
def test_two_moves_seen_at_once_are_both_accepted(lost: int) -> None:
    """The picture after a move is lost (a hand over the table, a photo not taken): the next
    one shows two moves. Both are accepted in order, said so, and the game goes on."""
    _two_moves_seen_at_once_are_both_accepted(lost)


def test_two_moves_seen_at_once_are_accepted_on_a_busy_machine(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """As above with the wall clock running on 10 s at each reading (other programs
    running meanwhile): the searches' budgets count the referee's own work, so the same
    pictures give the same game (the two moves were once judged as one move's on a loaded
    machine, the search out of time)."""
    import itertools
    import time

    wall = itertools.count(1000.0, 10.0)
    for name in ("perf_counter", "monotonic", "time"):
        monkeypatch.setattr(time, name, lambda: next(wall))
    _two_moves_seen_at_once_are_both_accepted(5)


def _pile_levels(rec: dict[str, Any], pile: int) -> dict[str, Any]:
    """``rec`` with its discard pile's ``pile`` cards (the last of them, bottom to top) given
    their levels: a camera that saw which covers which."""
    cards = [dict(c) for c in rec["cards"]]
    at = [k for k, c in enumerate(cards) if c["id"] != "back"][-pile:]
    for level, k in enumerate(at):
        cards[k]["level"] = level
    return dict(rec, cards=cards)


def test_two_moves_seen_at_once_are_read_off_the_cards_under_the_piles_top() -> None:
    """Red's growth is not photographed; the next picture shows it and blue's build with
    two Pentacles played as one (pentacles-03 under pentacles-10 on the pile, over red's
    cups-04). Blue's pentacles-10 played alone fits the cards on the board too, and was
    held and taken first, though the pile shows pentacles-03 under it: blue's hand one
    card too large from then on (found by the whole-game hunt: looney, 2 players, seed 1,
    move 41)."""
    from companion.games.zarcana.engine import position
    from companion.games.zarcana.table import TableView

    start = position(["red", "blue"], edition="looney",
                     board={"0,0": "cups-08", "1,0": "swords-10", "0,1": "swords-02",
                            "1,1": "cups-03"},
                     pieces={"1,0": "red1U", "0,1": "blue1U"},
                     hands={"red": ["?"] * 3, "blue": ["?"] * 3}, deck=["?"] * 60,
                     discard=["cups-02", "wands-07"], box=["?"] * 6)
    moves = ["red: play cups-04 by red1U@1,0: grow",
             "blue: wild pentacles-03+pentacles-10 as pentacles by blue1U@0,1: build 0,1 "
             "=major-05",
             "red: reorient red2U@1,0>E"]
    states = [start]
    for mv in moves:
        states.append(states[-1].apply(mv))
    s = LiveSession("zarcana", edition="looney", players=["red", "blue"], mat=MAT,
                    initial_state=start)

    def picture(k: int) -> dict[str, Any]:
        view = TableView.of(states[k])
        return _pile_levels(make_record(view.cards, view.pyramids,
                                        discard=states[k].discard[-3:]), 3)

    s.observe(picture(2), frame=2)          # (picture 1 lost)
    s.observe(picture(3), frame=3)
    assert [h.move for h in s.history] == moves
    assert s.state is not None and len(s.state.hand(Color.BLUE)) == 1


@pytest.mark.parametrize("answer", ["accept anyway", "next click"])
def test_two_moves_a_rule_broken_would_make_one_are_asked_about_not_ruled_on(answer: str
                                                                             ) -> None:
    """Red's reorient is not photographed; the next picture shows it and blue's, of two
    pyramids. As one move, red's, it reorients blue's pyramids, which breaks a rule, and that was ruled on
    ("only your own pyramids can be reoriented") though both players played by the rules;
    two reorients show no card, so they were not held (a misread pyramid looks like one),
    and no one misread explains three pyramids changed.
    Where a rule broken is the only one move that explains a picture and two legal moves do
    too, the players are asked, naming both readings (found by the whole-game hunt: four
    games of 24 with pictures lost had such a ruling, e.g. looney, 4 players, seed 5, move
    124). "Accept anyway", or a click of the player after them, takes the two moves."""
    from companion.games.zarcana.engine import position
    from companion.games.zarcana.table import TableView

    start = position(["red", "blue"], edition="looney",
                     board={"0,0": "cups-08", "1,0": "swords-10", "0,1": "swords-02",
                            "1,1": "cups-03"},
                     pieces={"1,0": "red1U", "1,1": "blue1U", "0,1": "blue1U"},
                     hands={"red": ["?"] * 3, "blue": ["?"] * 3}, deck=["?"] * 60,
                     discard=["cups-02", "wands-07"], box=["?"] * 6)
    moves = ["red: reorient red1U@1,0>E", "blue: reorient blue1U@0,1>S blue1U@1,1>W"]
    after = start.apply(moves[0]).apply(moves[1])
    s = LiveSession("zarcana", edition="looney", players=["red", "blue"], mat=MAT,
                    initial_state=start)
    view = TableView.of(after)
    ev = s.observe(make_record(view.cards, view.pyramids, discard=["cups-02", "wands-07"]),
                   frame=2)
    assert [e.kind for e in ev] == [EventKind.QUESTION], [e.text for e in ev]
    assert ev[0].text.startswith(f"two moves since the last picture? {moves[0]}, then "
                                 f"{moves[1]}: press"), ev[0].text
    assert "only your own pyramids can be reoriented" in ev[0].text
    assert s.history == [] and s.can_override
    if answer == "accept anyway":
        s.override()
    else:
        assert [e.kind for e in s.manual("red: pass")][-1] is EventKind.ACCEPTED
        moves.append("red: pass")
    assert [h.move for h in s.history] == moves and s.status is Status.PLAYING


def _two_moves_seen_at_once_are_both_accepted(lost: int) -> None:
    s = sample_session()
    heard = play(s, range(24), change=lambda k, rec: dict(rec, hands=True) if k == lost else rec)
    # held on the picture that shows both (a missed pyramid there could look like a
    # capture), taken when the next one agrees
    held = [e for e in heard if "two moves since the last picture (" in e.text
            or e.text.startswith("two moves since the last picture?")]
    taken = [e for e in heard if e.text.startswith("two moves since the last picture:")]
    assert len(held) == 1 and held[0].frame == lost + 1
    assert held[0].kind in (EventKind.WAITING, EventKind.QUESTION)
    assert len(taken) == 1 and taken[0].frame == lost + 2
    assert_true_game(s)


def test_two_moves_held_wait_through_a_picture_with_a_hand_over_the_table() -> None:
    """The picture after a move is lost, the next shows two moves (held), and the one after
    that has a hand over a territory: the pair waits for a clear picture and is taken with
    it (before, it was dropped there and every move after it refused)."""
    lost = 9
    s = sample_session()
    heard = play(s, range(lost + 2),
                 change=lambda k, rec: dict(rec, hands=True) if k == lost else rec)
    assert any(e.text.startswith("two moves since the last picture?") for e in heard)
    covered = sample_record(lost + 1)
    from companion.games.zarcana.table import TableView

    board = set(TableView.of(s.state).cards.values())
    gone = next(c for c in covered["cards"] if c["id"] in board and c["id"] != "back")
    covered["cards"] = [c for c in covered["cards"] if c is not gone]
    ev = s.observe(covered, frame=100)
    assert ev and ev[-1].kind is EventKind.WAITING, [e.text for e in ev]
    assert "waiting for a clear view to agree" in ev[-1].text
    heard = play(s, range(lost + 2, 24))
    taken = [e for e in heard if e.text.startswith("two moves since the last picture:")]
    assert len(taken) == 1 and taken[0].frame == lost + 2
    assert_true_game(s)


@pytest.mark.parametrize("lost", [1, 2, 3])
def test_two_starts_seen_at_once_are_taken(lost: int) -> None:
    """The picture of a START is lost: the next one shows it with the next move, a START
    (lost 1, 2) or red's clone, which has no card to show for it (lost 3). A pyramid of a
    colour not yet on the board, standing on a territory, is that player's START: the pair
    is held, and taken when the next picture agrees (before, the game stalled after its
    third move; with the clone, the players were asked whether red's new pyramid was a
    misread, and every move after it was refused)."""
    s = sample_session()
    heard = play(s, [k for k in range(24) if k != lost])
    taken = [e for e in heard if e.text.startswith("two moves since the last picture:")]
    assert [e.frame for e in taken] == [lost + 2]
    assert_true_game(s)


@pytest.mark.parametrize("lost", range(1, 22))
def test_any_one_lost_picture_still_gives_the_true_game(lost: int) -> None:
    """Any one picture of the sample game lost (the clicks still made): the game ends
    with its true moves and scores. Two moves seen at once are held and taken; a click of
    the next player made before the camera saw the move before it is kept and taken once
    it does. (Pictures 22 and 23 are left out: the last move's picture lost leaves
    nothing after it to see it on, and picture 22's two moves, a clone and a growth, show
    no card and no START, which is what one misread looks like; the players are asked.)
    Before, 7 of these 21 stalled the game."""
    clicks = scripted_clicks()
    s = sample_session()
    for k in range(24):
        if k in clicks:
            s.manual(clicks[k])
        if k != lost:
            s.observe(sample_record(k), frame=k)
    assert_true_game(s)


def _red_ends_with_a_build() -> dict[str, Any]:
    """The sample game's last picture had red, the last to move, play pentacles-03 from
    the hand to build on its own territory (0,2: swords-02 drawn onto cups-09) instead of
    using cups-09 to grow: two cards changed, so that picture 22 lost leaves the next
    picture two moves that end the game, with a card to show for them."""
    rec = sample_record(22)
    for card in rec["cards"]:
        card["id"] = {"cups-09": "swords-02", "wands-07": "pentacles-03"}.get(card["id"],
                                                                           card["id"])
    return rec


def _before_the_last_two_moves() -> LiveSession:
    return play_sample(sample_session(), range(22))


def test_two_moves_that_end_the_game_are_offered_beside_the_misread_asked() -> None:
    """Picture 22 lost, and the two moves the next picture shows end the game: no move
    follows them for a picture to agree with. The misread asked first offers them, saying
    they end the game and that "Accept anyway" takes them (it said "the next picture will
    tell", which no picture of a finished table does); the same picture again keeps the
    question, and "Accept anyway" ends the game with both moves."""
    s = _before_the_last_two_moves()
    last = _red_ends_with_a_build()
    first = s.observe(last, frame=23)
    assert first[0].kind is EventKind.QUESTION, [e.text for e in first]
    assert ("or two moves since the last picture, ending the game (green: use cups-05 by "
            "green1U@1,2: clone 1, then red: play pentacles-03 by red1U@0,2: build 0,2 "
            "=swords-02)? press \"Accept anyway\" if they were played") in first[0].text
    assert "the next picture will tell" not in first[0].text
    again = s.observe(_red_ends_with_a_build(), frame=24)
    assert [e.kind for e in again] == [EventKind.WAITING] and s.can_override
    ev = s.override()
    assert [e.kind for e in ev].count(EventKind.ACCEPTED) == 2 and s.is_over
    assert [h.move for h in s.history][-2:] == [
        "green: use cups-05 by green1U@1,2: clone 1",
        "red: play pentacles-03 by red1U@0,2: build 0,2 =swords-02"]


def test_two_moves_that_end_the_game_are_asked_about_when_nothing_else_explains_them(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """As above, with no misread to ask about first (made so here: in the sample game one
    misread and one move always explain a pyramid's change). The two moves were held for
    the next picture to agree, dropped on it, held again, and so on for every picture of
    the finished table: "waiting for the next picture to agree" with nothing to accept,
    and the game never ended. They are asked about; the same table keeps the question
    without a new search, and "Accept anyway" ends the game with them."""
    import companion.live.session as session_module

    monkeypatch.setattr(session_module.LiveSession, "_misreads",
                        lambda self, *args: iter(()))
    s = _before_the_last_two_moves()
    ev = s.observe(_red_ends_with_a_build(), frame=23)
    assert [e.kind for e in ev] == [EventKind.QUESTION], [e.text for e in ev]
    assert ev[0].text.startswith("two moves since the last picture, ending the game? green: "
                                 "use cups-05 by green1U@1,2: clone 1, then red: play")
    assert s.status is Status.QUESTION and s.can_override
    calls = _counted(monkeypatch, session_module, "explain_two")
    for frame in (24, 25):
        ev = s.observe(_red_ends_with_a_build(), frame=frame)
        assert [e.kind for e in ev] == [EventKind.WAITING]
        assert ev[0].text.startswith("still waiting for an answer: two moves since the last "
                                     "picture, ending the game? ")
    assert not calls and not s.is_over
    ev = s.override()
    assert ev[-1].kind is EventKind.GAME_OVER and s.is_over and len(s.history) == 22


def test_two_moves_that_end_the_game_on_the_last_picture_of_a_folder_are_taken(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Asked about as above, and then the folder (or video) ends: no picture will come,
    so they are taken with a note, as two moves held are; beside a misread asked first
    the question stays open, named."""
    import companion.live.session as session_module

    s = _before_the_last_two_moves()
    s.observe(_red_ends_with_a_build(), frame=23)
    ev = s.source_ended("the photos")
    assert [e.kind for e in ev] == [EventKind.WAITING] and not s.is_over
    assert ev[0].text.startswith("the photos ended on an open question: its last picture is "
                                 "a misread, or two moves (green: use cups-05")
    monkeypatch.setattr(session_module.LiveSession, "_misreads",
                        lambda self, *args: iter(()))
    s = _before_the_last_two_moves()
    s.observe(_red_ends_with_a_build(), frame=23)
    assert s.status is Status.QUESTION
    ev = s.source_ended("the photos")
    assert ev[0].text.startswith("two moves on the last picture: green: use cups-05")
    assert ev[0].text.endswith("taken at the end of the photos")
    assert s.is_over and len(s.history) == 22


@pytest.mark.parametrize("lost", [1, 2, 3, 4, 5, 8, 9, 10, 11, 12, 13, 14, 17, 18, 19, 20,
                                  21])
def test_two_lost_pictures_in_a_row_ask_about_three_moves(lost: int) -> None:
    """Two pictures in a row lost (a hand over the table through two turns, two photos not
    taken): the next shows three moves. They are asked about, not taken when the next
    picture agrees (more than one run of three can end on the table seen: at 13 the one
    asked was not played); players who accept the true ones play the game to its true end.
    Before, the game stalled on "no move explains this change" for 9 of these 16. (Of the
    22 starting points the rest stay stalled: at 6, 7 and 15 a draw was clicked two seats
    ahead of the game, which is refused; at 13, declining the false three; at 16 and 22
    the players are asked about a misread.)"""
    clicks = scripted_clicks()
    moves = scripted_moves()
    s = sample_session()
    asked = []
    for k in range(24):
        if k in clicks:
            s.manual(clicks[k])
        if k in (lost, lost + 1):
            continue
        heard = s.observe(sample_record(k), frame=k)
        question = [e for e in heard if e.kind is EventKind.QUESTION
                    and e.text.startswith("three moves since the last picture")]
        if question:
            before = len(s.history)
            shown = question[0].text.split("? ", 1)[1].split(": press", 1)[0]
            asked.append(shown)
            assert s.can_override
            if [m.split(" =")[0] for m in shown.split(", then ")] == moves[before:before + 3]:
                s.override()                # "Accept anyway": they were played
    s.source_ended("the sample game")
    if lost == 13:
        # the three asked about were not played: declined, none of them is in the game
        assert len(asked) == 1 and not any(h.move.split(" =")[0] in asked[0].split(", then ")
                                           for h in s.history[12:])
        return
    assert_true_game(s)
    # (at 8, 10, 11 and 17-20 a lost picture is a click's: two moves or one are seen)
    assert len(asked) == (0 if lost in (8, 10, 11, 17, 18, 19, 20) else 1)


def test_a_click_before_the_camera_saw_the_move_before_it_is_kept_and_taken() -> None:
    """Green's START is not photographed, and red clicks its draw: the click is kept
    (said so), not refused as out of turn, and taken once the next picture shows the
    START; the game file says it was clicked early. A click two seats ahead is still
    refused."""
    rec = FakeRecorder()
    s = sample_session(recorder=rec)
    play(s, range(16))
    assert s.to_move is not None and s.to_move.value == "green"
    before = len(s.history)
    ev = s.manual("blue: draw 2")
    assert [e.kind for e in ev] == [EventKind.ILLEGAL] and "not this player's turn" in ev[0].text
    ev = s.manual("red: draw 3")
    assert [e.kind for e in ev] == [EventKind.WAITING], [e.text for e in ev]
    assert ev[0].text.startswith("red: draw 3: kept until green's move is seen or clicked")
    assert len(s.history) == before
    ev = s.observe(sample_record(17), frame=17)
    assert [(e.kind, e.move) for e in ev if e.kind is EventKind.ACCEPTED] == [
        (EventKind.ACCEPTED, "green: start 1,2"), (EventKind.ACCEPTED, "red: draw 3")]
    assert "clicked before the camera saw" in ev[-1].text
    assert ("note", "red: draw 3") in [(c[0], c[1]) for c in rec.calls]
    assert s.to_move.value == "blue"


def test_while_two_moves_are_held_the_next_players_buttons_are_offered() -> None:
    """Green's build is not photographed; the next picture shows it and red's turn, held.
    Blue, who moves after them, is offered its draws too (only green's were, and blue's
    press went down as green's draw); blue's click takes the pair and then the draw."""
    s = sample_session()
    play(s, [k for k in range(8) if k != 6])
    options = s.manual_options()
    assert "green: draw 3" in options and "blue: draw 3" in options, options
    ev = s.manual("blue: draw 3")
    assert [e.move for e in ev if e.kind is EventKind.ACCEPTED] == [
        "green: use pentacles-04 by green1U@1,1: build 1,1 =pentacles-02",
        "red: reorient red1U@0,2>W", "blue: draw 3"]
    assert all(o.startswith("green: ") for o in s.manual_options())


def test_a_click_kept_while_a_misread_is_asked_is_taken_once_it_is_answered() -> None:
    """Green's START is read with red's pyramid a size too large: the misread is asked.
    Red clicks its draw meanwhile: kept; the answer lets green's START in, and red's draw
    follows at once, not at the next picture."""
    s = sample_session()
    play(s, range(0, 3))
    rec = sample_record(3)
    next(p for p in rec["pyramids"] if p["color"] == "red")["pips"] = 2
    assert [e.kind for e in s.observe(rec, frame=3)] == [EventKind.QUESTION]
    assert [e.kind for e in s.manual("red: draw 3")] == [EventKind.WAITING]
    ev = s.correct(s.pending_suggestions[0].correction)
    assert [e.move for e in ev if e.kind is EventKind.ACCEPTED] == ["green: start 1,1",
                                                                    "red: draw 3"], ev


def test_two_players_a_click_after_two_moves_held_goes_after_them() -> None:
    """Two players: red's build and blue's turn of its pyramid on one picture, held; red
    then clicks its draw. Red is to move both before and after the pair, and its draw was
    put before the pair (the game file had the moves out of order); the pair's first move
    was red's turn, so the click agrees with the pair and follows it."""
    from live_support import make_record

    from companion.games.zarcana.moves import parse_move
    from companion.games.zarcana.table import TableView

    layout = {(0, 0): "swords-05", (0, 1): "major-18", (0, 2): "cups-09", (1, 0): "swords-08",
              (1, 1): "pentacles-04", (1, 2): "cups-05", (2, 0): "major-10",
              (2, 1): "wands-07", (2, 2): "swords-13"}

    def record_of(st: Any) -> dict[str, Any]:
        v = TableView.of(st)
        return make_record(v.cards, v.pyramids,
                           discard=[v.discard_top] if v.discard_top else [])

    s = LiveSession("zarcana", edition="looney", players=["red", "blue"], mat=MAT,
                    settings={"layout_cards": 9})
    s.observe(make_record(layout), frame=0)
    st, true = s.state, []
    for k, m in enumerate(["red: start 0,2", "blue: start 2,2",
                           "red: play cups-11 as pentacles by red1U@0,2: build 0,2 =cups-02",
                           "blue: reorient blue1U@2,2>N"]):
        st = st.apply(parse_move(m))
        true.append(m)
        if k != 2:                          # the picture of red's build is missed
            s.observe(record_of(st), frame=k + 1)
    s.manual("red: draw 3")
    st = st.apply(parse_move("red: draw 3"))
    true.append("red: draw 3")
    assert [h.move for h in s.history] == true


def test_a_click_kept_before_another_players_click_is_taken_after_it() -> None:
    """Blue clicks its draw before red has clicked red's: blue's is kept, and taken as
    soon as red's click comes, not dropped by it."""
    s = sample_session()
    play(s, range(17))
    assert s.to_move is not None and s.to_move.value == "red"
    ev = s.manual("blue: draw 2")
    assert [e.kind for e in ev] == [EventKind.WAITING]
    # (another early click replaces it: said, not dropped without a word)
    assert s.manual("blue: draw 1")[0].text.startswith("blue: draw 2: the click kept "
                                                        "earlier is dropped")
    ev = s.manual("blue: draw 2")
    ev = s.manual("red: draw 3")
    assert [(e.kind, e.move) for e in ev] == [(EventKind.ACCEPTED, "red: draw 3"),
                                              (EventKind.ACCEPTED, "blue: draw 2")]
    assert s.to_move.value == "green"


def test_an_illegal_move_is_not_taken_for_two_legal_ones() -> None:
    """The sample game's illegal move (an upright pyramid moved) is still ruled on, even
    though the search for two moves runs when no single legal move explains a table."""
    s = sample_session()
    events = play(s, range(0, 12))
    assert any(e.kind is EventKind.ILLEGAL and "wands.upright" in e.rules for e in events)
    assert not any(e.text.startswith("two moves since") for e in events)


def test_without_a_mat_the_illegal_move_is_ruled_on_with_the_card_played() -> None:
    """No mat, so no discard zone: the pile the tracker finds beside the draw pile is not
    compared move by move, but the new card on it (wands-09) says a card was played. The
    upright pyramid moved is then ruled illegal, named with that card and recorded, as on
    the mat, rather than asked about as a pyramid misread ("then nothing changed")."""
    from calibration.mat import virtual_mat

    rec = FakeRecorder()
    s = sample_session(mat=virtual_mat(), recorder=rec)
    events = play(s, range(0, 13))
    illegal = [e for e in events if e.kind is EventKind.ILLEGAL]
    assert [e.frame for e in illegal] == [11] and "wands.upright" in illegal[0].rules
    assert illegal[0].move == "blue: play wands-09 by blue2U@2,2: move 2,1"
    assert not any(e.kind is EventKind.QUESTION for e in events)
    assert any(c[0] == "illegal" and c[1] == illegal[0].move for c in rec.calls)
    assert any(e.text == "the flagged table is put right" for e in events if e.frame == 12)


def test_without_a_mat_a_pile_with_no_new_card_still_leaves_the_misread_question() -> None:
    """The same pyramid moved with no card played (the pile's top unchanged): a misread
    is the likelier story, and the players are asked."""
    from calibration.mat import virtual_mat

    def no_card(k: int, rec: dict[str, Any]) -> dict[str, Any]:
        if k == 11:
            rec["cards"] = [dict(c, id="wands-04") if c["id"] == "wands-09" else c
                            for c in rec["cards"]]
        return rec

    s = sample_session(mat=virtual_mat())
    events = play(s, range(0, 12), change=no_card)
    assert events[-1].kind is EventKind.QUESTION and "then nothing changed" in events[-1].text


def test_without_a_mat_a_card_once_seen_on_the_pile_is_no_longer_a_play() -> None:
    """A card (wands-06, which could move a pyramid) is put on the pile with no move (the
    table otherwise unchanged): from then on it is the pile's top as remembered, so when
    the next picture shows a pyramid moved and that same card on the pile, the card is no
    evidence of a play, and a misread is asked."""
    from calibration.mat import virtual_mat

    def dropped(rec: dict[str, Any]) -> dict[str, Any]:
        pile = next(c for c in rec["cards"] if c["id"] in ("wands-04", "wands-09"))
        # (a wands card: a rule-breaking move could play it, so only its being seen on
        # the pile already stops it counting)
        rec["cards"] = [c for c in rec["cards"] if c is not pile] + [dict(pile, id="wands-06")]
        return rec

    s = sample_session(mat=virtual_mat())
    play(s, range(0, 11))
    assert s.observe(dropped(sample_record(10)), frame=10)[0].kind is EventKind.UNCHANGED
    ev = s.observe(dropped(sample_record(11)), frame=11)
    assert ev[0].kind is EventKind.QUESTION and "then nothing changed" in ev[0].text


@pytest.mark.parametrize("cells, held", [(1.3, True), (1.7, False)])
def test_without_a_mat_a_stash_near_the_board_is_named_as_such(cells: float,
                                                                held: bool) -> None:
    """Green lays three pyramids east of the board from the 5th picture on. Within one
    and a half cells of its cards (near a cell's corner, a little more) they stand on
    wasteland spaces, which the camera cannot tell from pieces in play: the question and
    the ruling say a stash may be the cause and how far away it must lie (two cells: always
    far enough). Further away, they are out of play and the game goes on."""
    from calibration.mat import virtual_mat

    board = [c["center_mm"] for c in sample_record(0)["cards"] if c["id"] != "back"]
    east, north = max(x for x, _ in board), min(y for _, y in board)

    def stash(k: int, rec: dict[str, Any]) -> dict[str, Any]:
        if k >= 5:
            rec["pyramids"] = rec["pyramids"] + [
                {"color": "green", "pips": pips, "upright": True, "pointing_deg": None,
                 "base_center_mm": [east + cells * 95.0 + 30.0 * i, north + 95.0],
                 "confidence": 0.9} for i, pips in enumerate((1, 2, 3))]
        return rec

    s = sample_session(mat=virtual_mat())
    events = play(s, range(0, 8), change=stash)
    if not held:
        assert [h.move.split(" =")[0] for h in s.history] == scripted_moves()[:7]
        return
    asked = next(e for e in events if e.kind is EventKind.QUESTION)
    assert asked.frame == 5 and "(not in play: misread, or a stash too near the board)" \
        in asked.text
    ruled = [e for e in events if e.kind is EventKind.ILLEGAL]
    assert ruled and all("a stash kept beside the board must lie two cells or more, about "
                         "190 mm, from the middle of every territory's card" in e.text
                         for e in ruled)


def test_without_a_mat_a_card_seen_discarded_before_is_no_play() -> None:
    """Frame 11's pile knocked so that wands-04 (discarded at frame 10, a card that could
    move the pyramid) shows instead of wands-09: the game has seen it discarded, so it is no
    news, and the pyramid moved is asked about as a misread."""
    from calibration.mat import virtual_mat

    def knocked(k: int, rec: dict[str, Any]) -> dict[str, Any]:
        if k == 11:
            next(c for c in rec["cards"] if c["id"] == "wands-09")["id"] = "wands-04"
        return rec

    s = sample_session(mat=virtual_mat())
    events = play(s, range(0, 12), change=knocked)
    last = [e for e in events if e.frame == 11][-1]
    assert last.kind is EventKind.QUESTION and "then nothing changed" in last.text


def _green_misread_lying(rec: dict[str, Any]) -> dict[str, Any]:
    """Frame 17's green small at 1,2 (upright) read as lying, pointing S."""
    p = next(p for p in rec["pyramids"] if p["color"] == "green")
    p["upright"], p["pointing_deg"] = False, 90.0
    return rec


@pytest.mark.parametrize("how", ["look-alike", "knocked"])
def test_without_a_mat_a_disturbed_pile_is_no_evidence_of_a_play(how: str) -> None:
    """Nothing is played at frame 17 (red's draw is a click), but a pyramid is misread
    while the pile's top changes look: read as a look-alike (swords-01 for swords-11), or
    knocked aside so that the card under it (pentacles-05, discarded before) shows where
    the pile was. Neither is a card played: no rule-breaking move plays the look-alike,
    and a card the game has seen discarded is no news. The misread is asked about."""
    from calibration.mat import virtual_mat

    def disturbed(k: int, rec: dict[str, Any]) -> dict[str, Any]:
        if k != 17:
            return rec
        rec = _green_misread_lying(rec)
        top = next(c for c in rec["cards"] if c["id"] == "swords-11")
        if how == "look-alike":
            top["id"] = "swords-01"
        else:
            rec["cards"].append(dict(top, id="pentacles-05"))
            top["center_mm"] = [top["center_mm"][0] + 20.0, top["center_mm"][1] + 120.0]
        return rec

    rec = FakeRecorder()
    s = sample_session(mat=virtual_mat(), recorder=rec)
    events = play(s, range(0, 18), change=disturbed)
    assert [e.kind for e in events if e.frame == 17][-1] is EventKind.QUESTION
    assert "then nothing changed" in events[-1].text
    assert [c[1] for c in rec.calls if c[0] == "illegal"] == [
        "blue: play wands-09 by blue2U@2,2: move 2,1"]


@pytest.mark.parametrize("on_mat", [False, True])
def test_a_picture_taken_mid_move_is_read_again(on_mat: bool) -> None:
    """Red lays wands-04 on the pile and lifts the pyramid it is moving away from the
    table: that picture fits a legal self-attack (red's other small on 0,2 with a wild
    pair), which is accepted. When the pyramid is put down in the wasteland, the move is
    read again as the move it was, recorded as an undo and the move, and the game goes on
    to its true scores."""
    from calibration.mat import virtual_mat

    rec = FakeRecorder()
    s = sample_session(mat=MAT if on_mat else virtual_mat(), recorder=rec)
    play(s, range(0, 10))
    lifted = sample_record(10)
    # the red small now standing on -1,2, west of the board, is still in red's hand
    lifted["pyramids"] = [p for p in lifted["pyramids"]
                          if p["color"] != "red" or p["base_center_mm"][0] > 380.0]
    assert len(lifted["pyramids"]) == len(sample_record(10)["pyramids"]) - 1
    mid = s.observe(lifted, frame=10)
    assert mid[0].kind is EventKind.ACCEPTED and "attack red1W@0,2" in mid[0].text
    events = play(s, range(10, 24))
    again = [e for e in events if "move is read again" in e.text]
    assert len(again) == 1 and again[0].frame == 10
    assert again[0].text.endswith("the table now shows red: play wands-04 by red1W@0,2: move "
                                  "-1,2")
    assert ("undo", None) in [c[:2] for c in rec.calls]
    assert_true_game(s)


def test_a_card_misread_after_a_self_attack_does_not_rewrite_it() -> None:
    """Red's self-attack is taken as it is (the pyramid gone for good); the next picture
    misreads the pile's top card (swords-04 for wands-04). A move of red's from before
    would explain that too, but it puts back no pyramid of red's: not a picture taken
    mid-move, so the move stands and the card is asked about."""
    s = sample_session()
    play(s, range(0, 10))
    gone = sample_record(10)
    gone["pyramids"] = [p for p in gone["pyramids"]
                        if p["color"] != "red" or p["base_center_mm"][0] > 380.0]
    taken = s.observe(gone, frame=10)[0]
    assert taken.kind is EventKind.ACCEPTED and "attack red1W@0,2" in taken.text
    next(c for c in gone["cards"] if c["id"] == "wands-04")["id"] = "swords-04"
    later = s.observe(gone, frame=11)
    assert not any("read again" in e.text for e in later)
    assert s.history[-1].move == taken.move and later[0].kind is EventKind.QUESTION


def test_a_misread_that_comes_and_goes_does_not_rewrite_the_move() -> None:
    """Red's reorient (W) is seen pointing S on its picture and accepted so; the next
    picture reads it W. Red kept every pyramid, so this is not a picture taken mid-move:
    the move stands, and the change is asked about, not read again."""
    def south(k: int, rec: dict[str, Any]) -> dict[str, Any]:
        if k == 7:
            p = next(p for p in rec["pyramids"] if p["color"] == "red" and not p["upright"])
            p["pointing_deg"] = 90.0
        return rec

    s = sample_session()
    events = play(s, range(0, 8), change=south)
    assert s.history[-1].move == "red: reorient red1U@0,2>S"
    later = s.observe(sample_record(7), frame=7)
    assert not any("read again" in e.text for e in later)
    assert s.history[-1].move == "red: reorient red1U@0,2>S"
    assert later[0].kind in (EventKind.QUESTION, EventKind.ILLEGAL), events


@pytest.mark.parametrize("on_mat", [False, True])
def test_a_click_that_makes_a_question_a_move_says_how_to_undo_it(on_mat: bool) -> None:
    """Frame 17 misreads green's pyramid as lying: asked about (it would change nothing).
    Blue then clicks its draw, and the same picture fits green's reorient, which is
    accepted (it may have been made before the click), saying that the picture was asked
    about as that misread and how to take it back; the game file notes it too."""
    from calibration.mat import virtual_mat

    rec = FakeRecorder()
    s = sample_session(mat=MAT if on_mat else virtual_mat(), recorder=rec)
    play(s, range(0, 18), change=lambda k, r: _green_misread_lying(r) if k == 17 else r)
    assert s.status is Status.QUESTION
    after = s.manual("blue: draw 2")
    taken = [e for e in after if e.kind is EventKind.ACCEPTED and e.source == "camera"]
    assert [e.move for e in taken] == ["green: reorient green1U@1,2>S"]
    assert taken[0].text.endswith(
        "[seen before the click; if it was a misread instead (the green small (lying, "
        "pointing S) at 1,2 is a green small (upright) at 1,2), press \"Take back move\" "
        "and correct it]")
    assert ("note", "green: reorient green1U@1,2>S") in [c[:2] for c in rec.calls]


def test_a_pyramid_missed_on_one_picture_delays_the_move_only() -> None:
    """The camera misses a pyramid on the picture of red's reorient: that table is ruled
    on, and the next picture (blue's attack) shows both moves: they are held, then taken
    when the picture after agrees, and the game goes on with the true moves."""
    def miss_green(k: int, rec: dict[str, Any]) -> dict[str, Any]:
        if k == 14:
            rec["pyramids"] = [p for p in rec["pyramids"] if p["color"] != "green"
                               or p["pips"] != 1 or not p["upright"]]
        return rec

    s = sample_session()
    heard = play(s, range(24), change=miss_green)
    taken = [e for e in heard if e.text.startswith("two moves since the last picture:")]
    assert [e.frame for e in taken] == [16]
    assert_true_game(s)


def test_a_pyramid_not_seen_on_one_picture_is_waited_on_not_ruled_on() -> None:
    """Picture 7 (red's reorient) misses one of red's pyramids: it was ruled "no move
    explains this change", a red accusation the next picture took back. The picture is
    waited on, and the next one takes the move; the same table again is ruled on (a
    pyramid taken off for good is no camera's miss)."""
    def missing(k: int, rec: dict[str, Any]) -> dict[str, Any]:
        return dict(rec, pyramids=rec["pyramids"][1:]) if k == 7 else rec

    s = sample_session()
    heard = play(s, range(8), change=missing)
    assert heard[-1].kind is EventKind.WAITING, [e.text for e in heard[-3:]]
    # (the reorient is named: it was said that no legal move explains the pyramid gone)
    assert heard[-1].text.startswith("red: reorient red1U@0,2>W fits, but the red small "
                                     "(upright) pyramid on the 9 of Cups at 0,2 it leaves is "
                                     "not seen on this picture")
    assert not any(e.kind is EventKind.ILLEGAL for e in heard)
    play(s, range(8, 9), clicks=False)
    # the move taken back: the same picture is waited on again, not ruled on at once
    s.step_back()
    ev = s.observe(missing(7, sample_record(7)), frame=80)
    assert ev[-1].kind is EventKind.WAITING, [e.text for e in ev]
    play(s, range(8, 24))
    assert_true_game(s)
    # the same table twice: ruled on, as before
    s = sample_session()
    play(s, range(8), change=missing)
    ev = s.observe(missing(7, sample_record(7)), frame=70)
    assert ev[-1].kind is EventKind.ILLEGAL
    # (saying first that the pyramid is still not seen, and that seen it puts this right)
    assert ev[-1].text.startswith("red: reorient red1U@0,2>W fits, but the red small "
                                  "(upright) pyramid on the 9 of Cups at 0,2 it leaves is "
                                  "still not seen: if it is still there, show it to the "
                                  "camera"), ev[-1].text
    assert "; else no move explains this change" in ev[-1].text, ev[-1].text
    ev = s.observe(missing(7, sample_record(7)), frame=71)     # (and stays so)
    assert ev[-1].text.startswith("still waiting for the table to be put right")
    assert s.status is Status.WRONG_TABLE


def test_a_pyramid_still_not_seen_is_named_again_while_the_ruling_waits() -> None:
    """As above, the table without red's pyramid seen a third time: it said only "still
    waiting for the table to be put right (or an override)", the pyramid the ruling waits to
    see no longer named. It is named again (colour, size, card and cell), with what to do."""
    def missing(k: int, rec: dict[str, Any]) -> dict[str, Any]:
        return dict(rec, pyramids=rec["pyramids"][1:]) if k == 7 else rec

    s = sample_session()
    play(s, range(8), change=missing)
    s.observe(missing(7, sample_record(7)), frame=70)
    ev = s.observe(missing(7, sample_record(7)), frame=71)
    assert [e.kind for e in ev] == [EventKind.WAITING], [e.text for e in ev]
    assert ev[-1].text.startswith("still waiting for the table to be put right (or an "
                                  "override): "), ev[-1].text
    assert ("the red small (upright) pyramid on the 9 of Cups at 0,2 it leaves is still not "
            "seen: if it is still there, show it to the camera") in ev[-1].text, ev[-1].text
    assert s.status is Status.WRONG_TABLE
    play(s, range(7, 24))       # (shown, the ruling is put right, and the game goes on)
    assert_true_game(s)



def pyramids_hidden(at: int, hidden: Callable[[dict[str, Any]], bool]
                    ) -> Callable[[int, dict[str, Any]], dict[str, Any]]:
    """A ``change`` for :func:`play`: picture ``at`` without the pyramids ``hidden`` picks
    (a hand over them, or the camera missing them); every other picture as it is."""
    def change(k: int, rec: dict[str, Any]) -> dict[str, Any]:
        if k != at:
            return rec
        return dict(rec, pyramids=[p for p in rec["pyramids"] if not hidden(p)])
    return change


def test_the_pyramid_a_move_made_not_seen_is_waited_on() -> None:
    """Picture 5 (blue grows its pyramid with cups-07) misses the grown pyramid: the move
    fits but for it, and the picture is waited on, then taken from the next."""
    s = sample_session()
    heard = play(s, range(6), change=pyramids_hidden(5, lambda p: p["color"] == "blue"))
    assert heard[-1].kind is EventKind.WAITING
    assert heard[-1].text == ("blue: play cups-07 by blue1U@2,2: grow fits, but the blue medium "
                              "(upright) pyramid on the Queen of Swords at 2,2 it leaves is not "
                              "seen on this picture (hidden, or missed by the camera?); waiting "
                              "for the next picture")
    play(s, range(6, 24))
    assert_true_game(s)


def test_two_pyramids_not_seen_on_one_picture_are_waited_on_not_ruled_on() -> None:
    """Picture 6 (green builds at 1,1) misses both of red's pyramids at 0,2 (a hand over
    them): it was ruled "no move explains this change", as only one pyramid not seen was
    waited on. The build fits but for them: the picture is waited on, and the next one
    takes the move; the same table again is ruled on."""
    no_red = pyramids_hidden(6, lambda p: p["color"] == "red")
    s = sample_session()
    heard = play(s, range(7), change=no_red)
    assert heard[-1].kind is EventKind.WAITING, [e.text for e in heard[-3:]]
    assert heard[-1].text.startswith("green: use pentacles-04 by green1U@1,1: build 1,1")
    assert ("fits, but the two red small (upright) pyramids on the 9 of Cups at 0,2 it "
            "leaves are not seen on this picture (hidden, or missed by the camera?); waiting "
            "for the next picture") in heard[-1].text
    assert not any(e.kind is EventKind.ILLEGAL for e in heard)
    play(s, range(7, 24))
    assert_true_game(s)
    # the same table twice: ruled on
    s = sample_session()
    play(s, range(7), change=no_red)
    ev = s.observe(no_red(6, sample_record(6)), frame=60)
    assert ev[-1].kind is EventKind.ILLEGAL, [e.text for e in ev]
    assert s.status is Status.WRONG_TABLE


def test_a_reorient_beside_two_pyramids_not_seen_is_waited_on() -> None:
    """Picture 7 (red lays a pyramid at 0,2 down) misses red's other pyramid there and
    blue's: the reorient was only read off a table with every pyramid seen, so that picture
    was ruled "no move explains this change". It is waited on, naming the reorient, and
    the next picture takes it."""
    two_hidden = pyramids_hidden(7, lambda p: p["color"] == "blue"
                                 or (p["color"] == "red" and p["upright"]))
    s = sample_session()
    heard = play(s, range(8), change=two_hidden)
    assert heard[-1].kind is EventKind.WAITING, [e.text for e in heard[-3:]]
    assert heard[-1].text.startswith(
        "red: reorient red1U@0,2>W fits, but the red small (upright) pyramid on the 9 of Cups "
        "at 0,2 and the blue medium (upright) pyramid on the Queen of Swords at 2,2 it leaves "
        "are not seen on this picture"), heard[-1].text
    assert not any(e.kind is EventKind.ILLEGAL for e in heard)
    play(s, range(8, 24))
    assert_true_game(s)


def test_pyramids_not_seen_are_named_as_the_players_see_them() -> None:
    """Picture 8 (blue's draw, clicked) misses green's pyramid and blue's: no move, and the
    wait names each pyramid by the card it stands on, as the players see it (it said only
    "the green small (upright) at 1,1")."""
    two_gone = pyramids_hidden(8, lambda p: p["color"] != "red")

    s = sample_session()
    heard = play(s, range(9), change=two_gone)
    assert heard[-1].kind is EventKind.WAITING, [e.text for e in heard[-3:]]
    assert heard[-1].text == (
        "the green small (upright) pyramid on the 2 of Pentacles at 1,1 and the blue medium "
        "(upright) pyramid on the Queen of Swords at 2,2: not seen on this picture, and no "
        "legal move explains them being gone (hidden, or missed by the camera?); waiting for "
        "the next picture")
    play(s, range(9, 24))
    assert_true_game(s)
    # the wasteland, a face-down card, the trumps, a card not yet named
    red = parse_pyramid("red1W")
    said = [pyramid_words(red, (0, 2), {(0, 2): c}) for c in
            ("major-00", "major-08", "back", "?")]
    assert said == ["the red small (lying, pointing W) pyramid on the Fool at 0,2",
                    "the red small (lying, pointing W) pyramid on Strength at 0,2",
                    "the red small (lying, pointing W) pyramid on a face-down card at 0,2",
                    "the red small (lying, pointing W) pyramid on a card not yet named at 0,2"]
    assert pyramid_words(red, (-1, 2), {}, 2) == ("the two red small (lying, pointing W) "
                                                  "pyramids in the wasteland at -1,2")


def test_a_pyramid_taken_off_is_ruled_on_while_the_camera_misses_another_by_turns() -> None:
    """Green's pyramid taken off the table after picture 8 (no move does that), and the
    camera misses blue's on every other picture: each picture was another table than the one
    waited on last, so each was waited on again, and the table was never ruled on. A table
    waited on once is ruled on when it is seen again."""
    s = sample_session()
    play(s, range(9))
    rec = sample_record(8)
    gone = dict(rec, pyramids=[p for p in rec["pyramids"] if p["color"] != "green"])
    also = dict(rec, pyramids=[p for p in rec["pyramids"] if p["color"] not in ("green", "blue")])
    kinds = [s.observe(r, frame=50 + i)[-1].kind for i, r in enumerate((gone, also, gone, also))]
    assert kinds[:2] == [EventKind.WAITING, EventKind.WAITING]
    assert kinds[2] is EventKind.ILLEGAL and s.status is Status.WRONG_TABLE
    # the table put back: the game goes on
    play(s, range(8, 24))
    assert_true_game(s)


def test_a_pyramid_hidden_again_after_a_clear_picture_is_waited_on_again() -> None:
    """A hand over green's pyramid after picture 8, lifted (the game's table seen again),
    then over it again: the second was ruled "no move explains this change", as the table
    last waited on, though every pyramid had been seen between them."""
    s = sample_session()
    play(s, range(9))
    rec = sample_record(8)
    hidden = dict(rec, pyramids=[p for p in rec["pyramids"] if p["color"] != "green"])
    kinds = [s.observe(r, frame=50 + i)[-1].kind for i, r in enumerate((hidden, rec, hidden))]
    assert kinds == [EventKind.WAITING, EventKind.UNCHANGED, EventKind.WAITING]
    # and seen so once more: ruled on
    assert s.observe(hidden, frame=53)[-1].kind is EventKind.ILLEGAL
    play(s, range(8, 24))
    assert_true_game(s)


def test_a_pyramid_under_a_hand_read_as_attacked_is_taken_back_when_seen_again() -> None:
    """Picture 14 seen again with a hand resting over green's pyramid (the camera misses it):
    blue's Queen of Swords attacks from its territory, and that attack changes nothing else
    on the table, so the picture was taken as that attack; the clear picture after it,
    green's pyramid back where it stood, as green starting again, and the game ended wrong.
    A pyramid an accepted attack took off, seen back on its cell, was only covered: the
    attack is taken back (said on show, recorded as an undo) and the game goes on true."""
    rec = FakeRecorder()
    s = sample_session(recorder=rec)
    play(s, range(15))
    hidden = pyramids_hidden(14, lambda p: p["color"] == "green")(14, sample_record(14))
    attack = s.observe(hidden, frame=140)
    assert [e.kind for e in attack] == [EventKind.ACCEPTED], [e.text for e in attack]
    assert attack[0].move == "blue: use swords-13 by blue2N@2,2: attack green1U@2,1"
    ev = s.observe(sample_record(14), frame=141)
    assert [e.kind for e in ev] == [EventKind.INFO, EventKind.UNCHANGED], [e.text for e in ev]
    assert ev[0].notice == ev[0].text == (
        "blue: use swords-13 by blue2N@2,2: attack green1U@2,1 is taken back: the green small "
        "(upright) pyramid on the 7 of Wands at 2,1 is back where it stood, so a hand was over "
        "it on the last picture, not an attack (or green started again on it: the next move "
        "will tell)")
    assert s.state is not None and s.to_move is Color.BLUE
    undo = [c for c in rec.calls if c[0] == "undo"]
    assert len(undo) == 1 and undo[0][2]["note"].startswith(
        "not played: blue: use swords-13 by blue2N@2,2: attack green1U@2,1"), rec.calls[-3:]
    play(s, range(15, 24))
    assert_true_game(s)


def test_one_of_two_like_pyramids_under_a_hand_read_as_attacked_is_taken_back() -> None:
    """Red has two small upright pyramids on its Swords territory; a hand over one of them
    is read as red's territory attacking it (it changes nothing else on the table). The
    clear picture after it shows both again: only the pyramid that stood where none is now
    was looked for, and the other like it still stands, so the attack stood and the players
    were asked whether the table showed the position before it; red's next click then went
    to blue's turn (found by the whole-game hunt: looney, 2 players, seed 1, move 90, a
    pyramid missed on one picture). The attack is taken back, as for a lone pyramid."""
    from companion.games.zarcana.engine import position
    from companion.games.zarcana.table import TableView

    start = position(["red", "blue"], edition="looney",
                     board={"0,0": "cups-08", "1,0": "swords-10", "0,1": "swords-02",
                            "1,1": "cups-03"},
                     pieces={"1,0": "red1U red1U", "1,1": "blue1N"},
                     hands={"red": ["?"] * 3, "blue": ["?"] * 3}, deck=["?"] * 60,
                     discard=["cups-02", "wands-07"], box=["?"] * 6)
    s = LiveSession("zarcana", edition="looney", players=["red", "blue"], mat=MAT,
                    initial_state=start)
    view = TableView.of(start)
    clear = make_record(view.cards, view.pyramids, discard=["cups-02", "wands-07"])
    hidden = make_record(view.cards, {**view.pyramids, (1, 0): view.pyramids[(1, 0)][:1]},
                         discard=["cups-02", "wands-07"])
    attack = s.observe(hidden, frame=1)
    assert [e.move for e in attack] == ["red: use swords-10 by red1U@1,0: attack red1U@1,0"]
    ev = s.observe(clear, frame=2)
    assert [e.kind for e in ev] == [EventKind.INFO, EventKind.UNCHANGED], [e.text for e in ev]
    assert "is taken back" in ev[0].text and s.history == [] and s.state is start
    assert s.to_move is Color.RED


def test_a_misread_taken_for_a_move_is_read_again_once_the_table_went_back_and_on() -> None:
    """A card misread on one picture (pentacles-10 under red's pyramid read as pentacles-11)
    fits a move: red's Pentacles territory building on itself. The next picture, read right,
    shows the table before that move, and the players are asked whether it was taken back.
    They play on: red reorients, from the table before it. That fit no move from the game,
    and was ruled on ("no move explains this change") though nobody broke a rule (found by
    the whole-game hunt: 1996, 2 players, seed 18, move 23, a card misread on one picture).
    Two pictures in a row show the table without the move, the second one legal move of
    the same player on from there: the move is read again as that one."""
    from companion.games.zarcana.engine import position
    from companion.games.zarcana.table import TableView

    start = position(["red", "blue"], edition="1996",
                     board={"0,0": "cups-08", "1,0": "swords-10", "2,1": "pentacles-10",
                            "1,1": "cups-03"},
                     pieces={"2,1": "red1U", "1,1": "blue1U"},
                     hands={"red": ["?"] * 3, "blue": ["?"] * 3}, deck=["?"] * 60,
                     discard=["cups-02", "wands-07"], box=["?"] * 6)
    s = LiveSession("zarcana", edition="1996", players=["red", "blue"], mat=MAT,
                    initial_state=start)
    view = TableView.of(start)
    pile = ["cups-02", "wands-07"]
    misread = make_record({**view.cards, (2, 1): "pentacles-11"}, view.pyramids, discard=pile)
    ev = s.observe(misread, frame=1)
    assert [e.move for e in ev] == ["red: use pentacles-10 by red1U@2,1: build 2,1 "
                                    "=pentacles-11"]
    ev = s.observe(make_record(view.cards, view.pyramids, discard=pile), frame=2)
    assert [e.kind for e in ev] == [EventKind.QUESTION]
    assert "the table shows the position before the last move" in ev[0].text
    turned = TableView.of(start.apply("red: reorient red1U@2,1>E"))
    ev = s.observe(make_record(turned.cards, turned.pyramids, discard=pile), frame=3)
    assert [e.kind for e in ev] == [EventKind.INFO, EventKind.ACCEPTED], [e.text for e in ev]
    assert ev[0].text.startswith("red's move is read again")
    assert [h.move for h in s.history] == ["red: reorient red1U@2,1>E"]
    assert s.status is Status.PLAYING and s.to_move is Color.BLUE


@pytest.mark.parametrize("on", [None, "cups-04"])
def test_a_card_built_and_misread_as_one_seen_elsewhere_is_asked_about(on: str | None
                                                                        ) -> None:
    """Blue plays pentacles-05 to build from the draw pile at 1,1 (a new territory, or on the
    territory there); the camera reads the card built (pentacles-09) as pentacles-08, which lies
    on the board already, so the build reads as an illegal one ("cannot be in the draw
    pile") and was ruled on. Only the card a cell held before was tried as the misread one
    (found by the whole-game hunt: 1996, 2 players, seed 36, move 53, a card misread on one
    picture). The cards like it that may be in the draw pile are tried too: asked, not
    ruled, and the answer takes the build."""
    from companion.games.zarcana.engine import position
    from companion.games.zarcana.table import TableView

    start = position(["red", "blue"], edition="1996",
                     board={"0,0": "pentacles-08", "1,0": "swords-10", "2,1": "cups-05",
                            "2,0": "cups-03", **({"1,1": on} if on else {})},
                     pieces={"2,1": "blue1W", "0,0": "red1U"},
                     hands={"red": ["?"] * 3, "blue": ["?"] * 3}, deck=["?"] * 60,
                     discard=["cups-02", "wands-07"], box=["?"] * (6 - bool(on)),
                     current="blue")
    cell = "1,1"
    move = f"blue: play pentacles-05 by blue1W@2,1: build {cell} =pentacles-09"
    built = TableView.of(start.apply(move))
    s = LiveSession("zarcana", edition="1996", players=["red", "blue"], mat=MAT,
                    initial_state=start)
    at = (int(cell[0]), int(cell[2]))
    misread = make_record({**built.cards, at: "pentacles-08"}, built.pyramids,
                          discard=["cups-02", "wands-07", "pentacles-05"])
    ev = s.observe(misread, frame=1)
    assert [e.kind for e in ev] == [EventKind.QUESTION], [e.text for e in ev]
    fix = next(x for x in ev[0].suggestions if x.move == move)
    assert fix.text.startswith(f"is the card at {cell} pentacles-09, not pentacles-08?")
    ev = s.correct(fix.correction)
    assert [h.move for h in s.history] == [move]


def test_a_misread_taken_for_a_move_gives_way_to_a_click_once_the_table_went_back() -> None:
    """The top of the discard pile misread on one picture as the Fool fits red playing it;
    the next picture, read right, shows the table before that, and the players are asked
    whether it was taken back. Red clicks a pass instead: refused, "another decision must
    be made first (say which card the Fool drew)" (found by the whole-game hunt: looney, 4
    players, seed 125, move 16). The table went back without the move and the click fits
    only the position before it: the move is taken back and the click taken."""
    from companion.games.zarcana.engine import position
    from companion.games.zarcana.table import TableView

    start = position(["red", "blue"], edition="looney",
                     board={"0,0": "cups-08", "1,0": "swords-10", "2,1": "pentacles-10",
                            "1,1": "cups-03"},
                     pieces={"2,1": "red1U", "1,1": "blue1U"},
                     hands={"red": ["?"] * 3, "blue": ["?"] * 3}, deck=["?"] * 60,
                     discard=["cups-02", "major-01"], box=["?"] * 6)
    rec = FakeRecorder()
    s = LiveSession("zarcana", edition="looney", players=["red", "blue"], mat=MAT,
                    initial_state=start, recorder=rec)
    view = TableView.of(start)
    ev = s.observe(make_record(view.cards, view.pyramids, discard=["cups-02", "major-00"]),
                   frame=1)
    assert [e.move for e in ev] == ["red: play major-00"]
    ev = s.observe(make_record(view.cards, view.pyramids, discard=["cups-02", "major-01"]),
                   frame=2)
    assert [e.kind for e in ev] == [EventKind.QUESTION]
    assert "the table shows the position before the last move" in ev[0].text
    ev = s.manual("red: pass")
    assert [e.kind for e in ev] == [EventKind.INFO, EventKind.ACCEPTED], [e.text for e in ev]
    assert ev[0].text.startswith("red: play major-00 is taken back")
    assert [h.move for h in s.history] == ["red: pass"] and s.status is Status.PLAYING
    assert [c[0] for c in rec.calls][-2:] == ["undo", "move"]


def test_a_pyramid_under_a_hand_read_as_attacked_is_read_again_from_the_next_move() -> None:
    """Picture 14 seen again with a hand resting over green's pyramid, taken as blue's Queen
    of Swords attacking it from its territory; the next picture shows blue's true attack on
    that pyramid, with swords-11 played. No move of green's explained that, and the game
    stopped on a question of the card played. Blue's move is read again from the position
    before it, as a move taken mid-move is, and the game goes on true."""
    s = sample_session()
    play(s, range(15))
    hidden = pyramids_hidden(14, lambda p: p["color"] == "green")(14, sample_record(14))
    assert s.observe(hidden, frame=140)[0].move == (
        "blue: use swords-13 by blue2N@2,2: attack green1U@2,1")
    ev = s.observe(sample_record(15), frame=15)
    assert [e.kind for e in ev] == [EventKind.INFO, EventKind.ACCEPTED], [e.text for e in ev]
    assert ev[0].notice == ev[0].text == (
        "blue's move is read again: a hand was over the pyramid it took off on the picture of "
        "blue: use swords-13 by blue2N@2,2: attack green1U@2,1; the table now shows blue: play "
        "swords-11 by blue2N@2,2: attack green1U@2,1")
    play(s, range(16, 24))
    assert_true_game(s)


@pytest.mark.parametrize("next_move", ["seen", "clicked"])
def test_a_pyramid_destroyed_and_started_again_on_its_card_is_read_so_by_the_next_move(
        next_move: str) -> None:
    """Blue's Queen of Swords really attacks green's only pyramid from its territory (picture
    14 without it), and green starts again on that very card (a small upright pyramid, the
    only kind a START places): the table is the one before the attack, as after a hand
    lifted off a pyramid it covered, and it is first read so (the attack taken back, blue to
    move). Red's move next, its reorient seen or its draw clicked, follows only the attack
    and the start (it is not red's turn before the attack): they are read again and stand,
    said on show and recorded (the attack and the start, then red's move)."""
    rec = FakeRecorder()
    s = sample_session(recorder=rec)
    play(s, range(15))
    attack = "blue: use swords-13 by blue2N@2,2: attack green1U@2,1"
    s.observe(pyramids_hidden(14, lambda p: p["color"] == "green")(14, sample_record(14)),
              frame=140)
    assert [h.move for h in s.history[-1:]] == [attack]
    # (a pyramid put down anew stands a little off where the old one stood)
    start = sample_record(14)
    start["pyramids"] = [dict(p, base_center_mm=[p["base_center_mm"][0] + 4.0,
                                                 p["base_center_mm"][1] - 3.0])
                         if p["color"] == "green" else p for p in start["pyramids"]]
    ev = s.observe(start, frame=141)
    assert [e.kind for e in ev] == [EventKind.INFO, EventKind.UNCHANGED], [e.text for e in ev]
    assert ev[0].text.endswith(", not an attack (or green started again on it: the next "
                               "move will tell)")
    assert s.to_move is Color.BLUE
    # (red's buttons too: the click that tells which it was; and the players' own word)
    assert s.manual_options() == ["blue: draw 1", "blue: pass", "red: draw 1", "red: draw 2",
                                  "red: draw 3", "red: pass",
                                  "destroyed: green started again at 2,1"]
    if next_move == "seen":
        turned = dict(start, pyramids=[
            dict(p, pointing_deg=0.0) if p["color"] == "red" and not p["upright"] else p
            for p in start["pyramids"]])
        ev = s.observe(turned, frame=142)
        red = "red: reorient red1N@-1,2>E"
    else:
        ev = s.manual("red: draw 3")
        red = "red: draw 3"
    assert [h.move for h in s.history[-3:]] == [attack, "green: start 2,1", red], \
        [e.text for e in ev]
    assert ev[0].kind is EventKind.INFO and ev[0].notice == ev[0].text == (
        f"{attack} stands, and green started again on 2,1: {red} follows only them (the "
        "green small (upright) pyramid on the 7 of Wands at 2,1 was destroyed, not covered)")
    assert [e.kind for e in ev[1:]] == [EventKind.ACCEPTED] * 3
    assert s.to_move is Color.BLUE and s.status is Status.PLAYING
    moves = [(c[0], c[1]) for c in rec.calls if c[0] in ("move", "undo")]
    assert moves[-5:] == [("move", attack), ("undo", None), ("move", attack),
                          ("move", "green: start 2,1"), ("move", red)]


def _two_players_territory_attack(path: Any, red: str = "red1U"
                                  ) -> tuple[LiveSession, list[dict[str, Any]]]:
    """The scene of tests/restart_support.py (``red``: red's pyramids) recorded to
    ``path``: the session, and the pictures of the table at the start, after blue's attack
    and after red starting again at 2,1."""
    from restart_support import restart_pictures, restart_start

    from companion.games.zarcana.engine import dumps
    from companion.recording.store import GameRecorder

    start = restart_start(red)
    rec = GameRecorder.create(path, game="zarcana", edition="looney", players=["red", "blue"],
                              settings=start.settings.to_dict(), initial_state=dumps(start))
    s = LiveSession("zarcana", edition="looney", players=["red", "blue"], mat=MAT,
                    recorder=rec, initial_state=start)
    return s, list(restart_pictures(start))


def test_two_players_say_a_pyramid_taken_back_as_covered_was_destroyed_and_started_again(
        tmp_path: Any) -> None:
    """Two players: blue's Queen of Swords attacks red's only pyramid from its territory,
    and red starts again on that very card; read as a hand over the pyramid (the attack
    taken back). Blue is to move either way, and blue's draw fits both positions: the
    covered reading stayed for good, and the players had no way to say it was destroyed.
    A click says so while the game stands where the attack was taken back to (a move taken
    back brings it back): the attack and the start stand, said on show and in the game
    file after the undo, and the file replays."""
    from companion.games.zarcana.engine import dumps
    from companion.recording.store import accepted_moves, open_game, rebuild_state

    from restart_support import DESTROYED as said
    from restart_support import TERRITORY_ATTACK as attack

    path = tmp_path / "game.db"
    s, (table, attacked, again) = _two_players_territory_attack(path)
    s.observe(table, frame=0)
    assert [e.move for e in s.observe(attacked, frame=1)] == [attack]
    assert said not in s.manual_options()    # (no attack taken back yet)
    ev = s.observe(again, frame=2)
    assert [e.kind for e in ev] == [EventKind.INFO, EventKind.UNCHANGED], [e.text for e in ev]
    assert ev[0].notice is not None and ev[0].notice.endswith(
        "not an attack (or red started again on it: the next move cannot tell, blue being "
        "to move either way; if red did, click \"destroyed: red started again at 2,1\" "
        "before blue's next move)"), ev[0].notice
    assert s.manual_options()[-1] == said
    # blue's draw fits both: the covered reading stays, and the click is put aside...
    assert [e.move for e in s.manual("blue: draw 1")] == ["blue: draw 1"]
    assert [h.move for h in s.history] == ["blue: draw 1"]
    assert said not in s.manual_options()
    with pytest.raises(LiveError, match="no attack taken back as only covered"):
        s.manual(said)
    # ...until the draw is taken back
    s.step_back()
    assert s.manual_options()[-1] == said
    ev = s.manual(said)
    assert [e.kind for e in ev] == [EventKind.INFO, EventKind.ACCEPTED, EventKind.ACCEPTED], \
        [e.text for e in ev]
    assert ev[0].notice == ev[0].text == (
        f"{attack} stands, and red started again on 2,1, as the players said (the red small "
        "(upright) pyramid on the 7 of Wands at 2,1 was destroyed, not covered)")
    assert [h.move for h in s.history] == [attack, "red: start 2,1"]
    assert s.to_move is Color.BLUE and s.status is Status.PLAYING
    assert said not in s.manual_options()
    s.manual("blue: draw 1")
    assert s.observe(again, frame=3)[-1].kind is EventKind.UNCHANGED
    assert [h.move for h in s.history] == [attack, "red: start 2,1", "blue: draw 1"]
    s.close()
    game = open_game(path)
    lines = [(e.kind, e.move, e.undone) for e in game.events if e.kind in ("move", "undo")]
    assert lines == [("move", attack, True), ("undo", None, False),
                     ("move", "blue: draw 1", True), ("undo", None, False),
                     ("move", attack, False), ("move", "red: start 2,1", False),
                     ("move", "blue: draw 1", False)]
    notes = [e.note for e in game.events if e.kind == "move" and not e.undone]
    assert notes[:2] == ["read again: the players said it was destroyed, not covered"] * 2
    assert game.moves() == [attack, "red: start 2,1", "blue: draw 1"]
    assert dumps(rebuild_state(game)) == dumps(s.state)
    assert [e.move for e, _ in accepted_moves(game)[1]] == game.moves()


def test_no_destroyed_click_without_an_attack_that_may_have_been_made(tmp_path: Any) -> None:
    """Red has another pyramid: red could not have started again (a START is for a player
    with none on the board), so the attack taken back was only covered, said with no "or",
    and no click says otherwise; typed anyway, it is refused and changes nothing."""
    s, (table, attacked, again) = _two_players_territory_attack(tmp_path / "game.db",
                                                                red="red2U")
    s.observe(table, frame=0)
    s.observe(attacked, frame=1)
    ev = s.observe(again, frame=2)
    assert [e.kind for e in ev] == [EventKind.INFO, EventKind.UNCHANGED], [e.text for e in ev]
    assert ev[0].text.endswith("not an attack"), ev[0].text
    assert not [o for o in s.manual_options() if o.startswith("destroyed")]
    with pytest.raises(LiveError, match="no attack taken back as only covered"):
        s.manual("destroyed: red started again at 2,1")
    assert s.history == [] and s.to_move is Color.BLUE
    s.close()


@pytest.mark.parametrize("pictures", ["hand, clear", "attacker hidden, clear",
                                      "territory attack, start"])
def test_an_attack_seen_through_or_beside_a_hand_still_stands(pictures: str) -> None:
    """Attacks really made are kept: blue's attack on green (picture 15) photographed with
    a hand over the table and then clear, or with blue's own pyramid hidden and then clear;
    and blue's Queen of Swords attacking green from its territory (only green's pyramid
    gone), green then starting on another card (a pyramid not back where it stood)."""
    s = sample_session()
    play(s, range(15))
    if pictures == "territory attack, start":
        gone = pyramids_hidden(14, lambda p: p["color"] == "green")(14, sample_record(14))
        start = dict(gone, pyramids=gone["pyramids"] + [
            p for p in sample_record(16)["pyramids"] if p["color"] == "green"])
        for k, r in enumerate((gone, gone, start)):
            s.observe(r, frame=140 + k)
        assert [h.move for h in s.history[-2:]] == [
            "blue: use swords-13 by blue2N@2,2: attack green1U@2,1", "green: start 1,2"]
        return
    first = (dict(sample_record(15), hands=True) if pictures == "hand, clear" else
             pyramids_hidden(15, lambda p: p["color"] == "blue")(15, sample_record(15)))
    heard = [e for r in (first, sample_record(15)) for e in s.observe(r, frame=150)]
    assert not any(e.kind in (EventKind.ILLEGAL, EventKind.QUESTION) for e in heard)
    assert s.history[-1].move.startswith("blue: play swords-11 by blue2N@2,2: attack")
    play(s, range(16, 24))
    assert_true_game(s)


def test_a_pyramid_still_not_seen_after_the_next_move_is_waited_on() -> None:
    """Blue's pyramid not seen on picture 6 (green builds: waited on) nor on picture 7 (red
    turns a pyramid too): the second was ruled "no move explains this change", though the
    build and the reorient fit it but for that pyramid, and picture 7 seen whole took both.
    It is waited on, naming both moves."""
    def no_blue(k: int, rec: dict[str, Any]) -> dict[str, Any]:
        return dict(rec, pyramids=[p for p in rec["pyramids"] if p["color"] != "blue"])

    s = sample_session()
    play(s, range(6))
    heard = [s.observe(no_blue(k, sample_record(k)), frame=100 + k)[-1] for k in (6, 7)]
    assert [e.kind for e in heard] == [EventKind.WAITING, EventKind.WAITING]
    assert heard[1].text.startswith(
        "green: use pentacles-04 by green1U@1,1: build 1,1 =pentacles-02 and then red: "
        "reorient red1U@0,2>W fit, but the blue medium (upright) pyramid on the Queen of "
        "Swords at 2,2 they leave is not seen on this picture"), heard[1].text
    events = play(s, range(7, 24))
    assert [e.frame for e in events if e.kind is EventKind.ILLEGAL] == [11]
    assert_true_game(s)
    # no further than that: a third move on, the picture is ruled on
    s = sample_session()
    play(s, range(6))
    kinds = [s.observe(no_blue(k, sample_record(k)), frame=100 + k)[-1].kind for k in (6, 7, 9)]
    assert kinds == [EventKind.WAITING, EventKind.WAITING, EventKind.ILLEGAL]


def test_a_rule_broken_beside_a_pyramid_not_seen_is_ruled_on_once_naming_the_rule() -> None:
    """Picture 11 (blue moves an upright pyramid: illegal) misses green's pyramid (a hand
    over it): it was ruled "no move explains this change", naming no rule, and the clear
    picture after it a second illegal entry, naming it. The first is waited on, naming the
    move and the rule, and the one illegal entry names the rule; seen twice, the picture
    is ruled on naming the rule, and the clear one after it is not ruled on again."""
    no_green = pyramids_hidden(11, lambda p: p["color"] == "green")
    for seen in ((no_green(11, sample_record(11)),),
                 (no_green(11, sample_record(11)), no_green(11, sample_record(11)))):
        rec = FakeRecorder()
        s = sample_session(recorder=rec)
        play(s, range(11))
        heard = [e for k, r in enumerate(seen + (sample_record(11),))
                 for e in s.observe(r, frame=110 + k)]
        first = heard[0]
        if len(seen) == 1:
            assert first.kind is EventKind.WAITING, first.text
            assert first.text.startswith(
                "blue: play wands-09 by blue2U@2,2: move 2,1 fits, but the green small (lying, "
                "pointing E) pyramid on the 2 of Pentacles at 1,1 it leaves is not seen on this "
                "picture, and it breaks a rule: an upright pyramid has no direction to move in"
            ), first.text
        ruled = [e for e in heard if e.kind is EventKind.ILLEGAL]
        assert [e.move for e in ruled] == ["blue: play wands-09 by blue2U@2,2: move 2,1"]
        assert ruled[0].rules == ("wands.upright",)
        notes = [c[2]["note"] for c in rec.calls if c[0] == "illegal"]
        assert len(notes) == 1 and notes[0].endswith("[rule wands.upright]"), notes
        if len(seen) == 2:
            assert heard[-1].text.startswith("still waiting for the table to be put right")
        play(s, range(12, 24))
        assert_true_game(s)


def test_a_rule_broken_with_the_pyramid_it_moved_hidden_is_ruled_on_once() -> None:
    """Picture 11 without blue's pyramid, the one the illegal move took (a hand still on
    it): any move of it fits, and the first found was ruled on, the clear picture after it
    a second illegal entry for the true one. One entry, naming the rule, however the two
    pictures come."""
    hidden = pyramids_hidden(11, lambda p: p["color"] == "blue")(11, sample_record(11))
    for seen in ([hidden, hidden, sample_record(11)],
                 [hidden, sample_record(11), hidden, sample_record(11)]):
        rec = FakeRecorder()
        s = sample_session(recorder=rec)
        play(s, range(11))
        heard = [e for k, r in enumerate(seen) for e in s.observe(r, frame=110 + k)]
        notes = [c[2]["note"] for c in rec.calls if c[0] == "illegal"]
        assert len(notes) == 1, notes
        assert notes[0].endswith("[rule wands.upright]"), notes
        assert heard[-1].text.startswith("still waiting for the table to be put right")
        play(s, range(12, 24))
        assert_true_game(s)


def test_a_camera_going_back_and_forth_between_two_tables_waits_instead_of_ruling_each_way(
        ) -> None:
    """The camera sees blue's illegal move and the table put right by turns (a hand over the
    pyramid and lifted, two readings of one table): each was ruled in turn, "illegal" and
    "put right", an illegal entry each time. From the third picture on it waits, saying it
    cannot tell which table is right; the table seen twice in a row is ruled on. So for a
    misread asked about and the game's table by turns."""
    rec = FakeRecorder()
    s = sample_session(recorder=rec)
    play(s, range(11))
    illegal, right = sample_record(11), sample_record(10)
    heard = [s.observe(r, frame=110 + k)[-1] for k, r in enumerate([illegal, right] * 3)]
    assert [e.kind for e in heard] == [EventKind.ILLEGAL, EventKind.INFO, EventKind.WAITING,
                                       EventKind.UNCHANGED, EventKind.WAITING,
                                       EventKind.UNCHANGED], [e.text for e in heard]
    assert heard[2].text.startswith("the camera sees two tables by turns (2,1: blue medium "
                                    "(upright) arrived; 2,2: blue medium (upright) left; "
                                    "discard pile now shows wands-09): cannot tell yet"), \
        heard[2].text
    assert [c[0] for c in rec.calls].count("illegal") == 1
    # the illegal table twice in a row: ruled on (a second entry), and the game goes on
    assert [s.observe(illegal, frame=120 + k)[-1].kind for k in range(2)] == [
        EventKind.WAITING, EventKind.ILLEGAL]
    assert [c[0] for c in rec.calls].count("illegal") == 2
    play(s, range(12, 24))
    assert_true_game(s)
    # a pyramid's size misread and read right by turns: asked once
    s = sample_session()
    play(s, range(9))
    big = sample_record(8)
    big["pyramids"] = [dict(p, pips=3) if p["color"] == "blue" else p for p in big["pyramids"]]
    kinds = [s.observe(r, frame=90 + k)[-1].kind
             for k, r in enumerate([big, sample_record(8)] * 2)]
    assert kinds == [EventKind.QUESTION, EventKind.INFO, EventKind.WAITING, EventKind.UNCHANGED]
    play(s, range(9, 24))
    assert_true_game(s)


def test_the_camera_going_back_and_forth_names_the_rule_and_asks_for_the_next_picture(
        ) -> None:
    """The wait of a camera going back and forth named only what differs between the two
    tables, not the rule the one table breaks, and asked for "a steady picture", which says
    nothing to players feeding photos (who must take another). It names the move and its
    rule, and waits for the next picture, as the other waits word it. A misread asked
    about names no rule."""
    s = sample_session()
    play(s, range(11))
    illegal, right = sample_record(11), sample_record(10)
    wait = [s.observe(r, frame=110 + k)[-1] for k, r in enumerate([illegal, right, illegal])][-1]
    assert wait.kind is EventKind.WAITING, wait.text
    assert ("cannot tell yet which is right; on this one, blue: play wands-09 by blue2U@2,2: "
            "move 2,1 breaks a rule: an upright pyramid has no direction to move in (blue2U@2,2); "
            "waiting for the next picture (the table seen on two pictures in a row is ruled on)"
            ) in wait.text, wait.text
    assert wait.rules == ("wands.upright",) and wait.move == "blue: play wands-09 by " \
        "blue2U@2,2: move 2,1"
    assert "steady" not in wait.text
    s = sample_session()
    play(s, range(9))
    big = sample_record(8)
    big["pyramids"] = [dict(p, pips=3) if p["color"] == "blue" else p for p in big["pyramids"]]
    wait = [s.observe(r, frame=90 + k)[-1] for k, r in enumerate([big, sample_record(8), big])][-1]
    assert wait.kind is EventKind.WAITING and wait.rules == (), wait.text
    assert wait.text.endswith("cannot tell yet which is right; waiting for the next picture "
                              "(the table seen on two pictures in a row is ruled on)"), wait.text


def test_a_card_misread_on_its_build_picture_is_offered_a_take_back() -> None:
    """Picture 6 (green builds pentacles-02 over pentacles-04) reads the new card as
    pentacles-03, and the build is taken so. The next picture, read right, asked only
    whether pentacles-03 was there after all, which the players could not answer no to.
    The question also offers the other reading, the build's picture misread, and says
    "Take back move" reads it again; taken back, the game goes on to its true end."""
    def misread_build(k: int, rec: dict[str, Any]) -> dict[str, Any]:
        if k != 6:
            return rec
        return dict(rec, cards=[dict(c, id="pentacles-03") if c["id"] == "pentacles-02" else c
                                for c in rec["cards"]])

    s = sample_session()
    heard = play(s, range(8), change=misread_build)
    asked = [e for e in heard if e.kind is EventKind.QUESTION]
    assert asked and "is the card at 1,1 pentacles-03, not pentacles-02? Or was it built as " \
        "pentacles-02, misread on the last move's picture? Then press \"Take back move\"" \
        in asked[-1].text, [e.text for e in heard[-3:]]
    s.step_back()
    play(s, range(7, 24))
    assert_true_game(s)


def test_a_misread_growth_is_not_taken_for_two_moves() -> None:
    """A pyramid's size misread on the picture of one move: two moves (a START, then a
    growth with no card) would explain it. The misread is what the players are asked
    first; the pair is only named beside it, and the next picture, read right, does not
    agree with it (red's pyramid small, not grown), so no growth is made up and the game
    goes on to its true end."""
    s = sample_session()
    play(s, range(0, 3))
    rec = sample_record(3)
    red = next(p for p in rec["pyramids"] if p["color"] == "red")
    red["pips"] = 2
    ev = s.observe(rec, frame=3)
    assert [e.kind for e in ev] == [EventKind.QUESTION]
    asked, _, beside = ev[0].text.partition("; or two moves")
    assert asked.startswith("please check: ") and "red medium" in asked, ev[0].text
    assert [h.move for h in s.history] == scripted_moves()[:2]
    play(s, range(4, 24))
    assert_true_game(s)


def test_a_camera_file_that_does_not_fit_is_said_once() -> None:
    """The camera file fits the markers worse than none (another camera's): the window
    says so once, and again when it fits; a frame with a marker hidden, which cannot tell,
    says nothing. The game is still judged."""
    def fitted(with_lens: float, bare: float | None) -> Callable[[int, dict[str, Any]],
                                                                 dict[str, Any]]:
        calib: dict[str, Any] = {"reprojection_mm": with_lens}
        if bare is not None:
            calib["reprojection_without_lens_mm"] = bare
        return lambda k, rec: dict(rec, calibration=calib)

    s = sample_session()
    heard = (play(s, range(0, 3), change=fitted(3.4, 0.7))
             + play(s, range(3, 4), change=fitted(0.4, None))
             + play(s, range(4, 6), change=fitted(0.2, 0.7)))
    said = [(e.frame, e.text.split(":")[0]) for e in heard if "camera file" in e.text]
    assert said == [(0, "the camera file does not fit this camera"),
                    (4, "the camera file fits the markers again")], said
    assert [h.move.split(" =")[0] for h in s.history] == scripted_moves()[:5]


def test_cards_another_size_than_the_decks_are_said_once() -> None:
    """A mat file measured to the markers' outer edges makes every card 8.5% too big
    (``calibration.card_scale``): the window says so once, and again when the cards measure
    right; the game is still judged."""
    def scaled(scale: float) -> Callable[[int, dict[str, Any]], dict[str, Any]]:
        return lambda k, rec: dict(rec, calibration={"card_scale": scale})

    s = sample_session()
    heard = play(s, range(0, 4), change=scaled(1.085)) + play(s, range(4, 6),
                                                               change=scaled(1.01))
    said = [e for e in heard if "the deck's" in e.text]
    assert [(e.frame, e.text.split(":")[0]) for e in said] == [
        (0, "the cards measure 8% larger than the deck's"),
        (4, "the cards measure the deck's size again")]
    assert [h.move.split(" =")[0] for h in s.history] == scripted_moves()[:5]


def test_after_the_game_is_over_nothing_can_be_taken_back_or_corrected() -> None:
    """A Take back pressed as the last move was judged (or just after End game) brought the
    game back to life with its file already finished: nothing after it was recorded."""
    s = sample_session()
    play(s, range(0, 7))
    s.end_game()
    assert s.is_over
    for attempt in (s.step_back, lambda: s.correct(CardCorrection((0, 0), "wands-04", "wands-05")),
                    lambda: s.name_card((0, 0), "wands-05")):
        with pytest.raises(LiveError, match="the game is over"):
            attempt()
    assert s.is_over and len(s.history) == 6


def test_accept_anyway_takes_the_moves_held_not_a_ruling_on_an_earlier_picture() -> None:
    """Picture 11 shows the scripted illegal move (ruled on), pictures 12 and 13 are lost,
    and 14 shows three legal moves since. "Accept anyway" forced the illegal move of
    picture 11, on a table the camera had seen put right; it takes the three moves now."""
    clicks = scripted_clicks()
    s = sample_session()
    for k in range(15):
        if k in clicks:
            s.manual(clicks[k])
        if k not in (12, 13):
            s.observe(sample_record(k), frame=k)
    assert s.can_override
    before = len(s.history)
    ev = s.override()
    taken = [e.move for e in ev if e.kind is EventKind.ACCEPTED]
    assert len(taken) == 3 and len(s.history) == before + 3, [e.text for e in ev]
    assert not any("against the rules" in e.text for e in ev)
    assert [h.move.split(" =")[0] for h in s.history] == scripted_moves()[:before + 3]


def test_three_moves_asked_about_stay_asked_on_the_same_table_without_a_new_search(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The same table again (a hand passed over it) while three moves are asked about: the
    question is said to be still open, and the three-move search (up to 2 s) is not run
    again for it."""
    import companion.live.session as session_module

    calls = _counted(monkeypatch, session_module, "explain_three")
    s = sample_session()
    play(s, [k for k in range(6) if k not in (3, 4)])
    assert s.status is Status.QUESTION and len(calls) == 1
    ev = s.observe(sample_record(5), frame=50)
    assert [e.kind for e in ev] == [EventKind.WAITING], [e.text for e in ev]
    assert ev[0].text.startswith("still waiting for an answer: three moves since the last")
    assert len(calls) == 1 and s.can_override


def test_a_discard_pile_shuffled_into_a_new_draw_pile_waits_for_the_draw_clicked() -> None:
    """Red's draw pile is empty: red shuffles the discard pile into a new draw pile and
    draws 3, and the camera sees the pile gone before the click. It was ruled "illegal: no
    move explains this change: discard pile now shows nothing" (and recorded so); a power
    that draws (the High Priestess on red's territory) would have been taken for it, or
    the simplest draw (1 card, not 3). The camera cannot tell which: the session waits for
    the click, which it then takes, the table agreeing."""
    from companion.games.zarcana.engine import position
    from companion.games.zarcana.table import TableView

    start = position(["red", "blue"], edition="looney",
                     board={"0,0": "cups-03", "1,0": "major-02", "0,1": "swords-02"},
                     pieces={"1,0": "red1U"}, hands={"red": ["?"] * 3, "blue": ["?"] * 3},
                     deck=["?"], discard=["cups-07", "major-04", "wands-02"], box=["?"] * 65)
    rec = FakeRecorder()
    s = LiveSession("zarcana", edition="looney", players=["red", "blue"], mat=MAT,
                    initial_state=start, recorder=rec)
    view = TableView.of(start)
    gone = make_record(dict(view.cards), view.pyramids, discard=[], draw=1)
    ev = s.observe(gone, frame=1)
    assert [e.kind for e in ev] == [EventKind.WAITING], [e.text for e in ev]
    assert "draw 3" in ev[0].text and "use major-02" in ev[0].text
    assert s.history == [] and s.status is Status.PLAYING
    assert not [c for c in rec.calls if c[0] == "illegal"]
    ev = s.manual("draw 3")
    assert [e.kind for e in ev] == [EventKind.ACCEPTED], [e.text for e in ev]
    st = s.state
    assert st is not None and st.discard == () and len(st.hand(Color.RED)) == 6
    ev = s.observe(gone, frame=2)
    assert [e.kind for e in ev] == [EventKind.UNCHANGED], [e.text for e in ev]
    assert [h.move for h in s.history] == ["red: draw 3"]


def test_a_draw_that_alone_fits_the_discard_pile_gone_is_still_clicked_not_taken() -> None:
    """The one draw the hand limit allows rebuilt the draw pile: taken from the picture, the
    player's click of it (as every draw is clicked) was then kept for the player's next turn
    and refused there ("drawing may not take the hand past six cards")."""
    from companion.games.zarcana.engine import position
    from companion.games.zarcana.table import TableView

    start = position(["red", "blue"], edition="looney",
                     board={"0,0": "cups-03", "1,0": "swords-05", "0,1": "swords-02"},
                     pieces={"1,0": "red1U"}, hands={"red": ["?"] * 5, "blue": ["?"] * 3},
                     deck=[], discard=["cups-07", "major-04", "wands-02"], box=["?"] * 64)
    s = LiveSession("zarcana", edition="looney", players=["red", "blue"], mat=MAT,
                    initial_state=start)
    view = TableView.of(start)
    gone = make_record(dict(view.cards), view.pyramids, discard=[], draw=1)
    ev = s.observe(gone, frame=1)
    assert [e.kind for e in ev] == [EventKind.WAITING], [e.text for e in ev]
    assert "red: draw 1" in ev[0].text and s.history == []
    ev = s.manual("draw 1")
    assert [e.kind for e in ev] == [EventKind.ACCEPTED], [e.text for e in ev]
    ev = s.observe(gone, frame=2)
    assert [e.kind for e in ev] == [EventKind.UNCHANGED], [e.text for e in ev]
    assert [h.move for h in s.history] == ["red: draw 1"] and s.to_move is Color.BLUE


def test_a_face_down_territory_destroyed_is_taken_its_card_read_off_the_discard_pile() -> None:
    """A territory power destroys a face-down territory, whose card lands face up on the
    discard pile: every picture was "card(s) at 1,0 not seen and no move explains it: is
    something covering the table?", and the game waited for good."""
    from companion.games.zarcana.engine import position
    from companion.games.zarcana.table import TableView

    start = position(["red", "blue"], edition="1996",
                     board={"0,0": "swords-05", "1,0": "~?", "0,1": "cups-02"},
                     pieces={"0,0": "red1E"}, hands={"red": ["?"] * 3, "blue": ["?"] * 3},
                     deck=["?"] * 68, discard=["wands-03"])
    s = LiveSession("zarcana", edition="1996", players=["red", "blue"], mat=MAT,
                    initial_state=start)
    view = TableView.of(start)
    cards = {c: k for c, k in view.cards.items() if c != (1, 0)}
    ev = s.observe(make_record(cards, view.pyramids, discard=["major-10"]), frame=1)
    assert [e.kind for e in ev] == [EventKind.ACCEPTED], [e.text for e in ev]
    assert ev[0].move == "red: use swords-05 by red1E@0,0: attack @1,0"
    st = s.state
    assert st is not None and st.discard_top() == "major-10" and s.to_move is Color.BLUE
    ev = s.observe(make_record(cards, view.pyramids, discard=["major-10"]), frame=2)
    assert [e.kind for e in ev] == [EventKind.UNCHANGED], [e.text for e in ev]


def test_a_face_down_territory_destroyed_by_a_click_is_named_from_the_next_picture() -> None:
    """Red's Swords territory destroys the face-down card at 1,0, clicked before the
    camera's picture: the move has "?" on the pile, and the picture after it, major-10 on
    the pile, asked "is the card played ?, not major-10?". The card seen is named, in the
    game and back to the start, and the game file says so."""
    from companion.games.zarcana.engine import position
    from companion.games.zarcana.table import TableView

    start = position(["red", "blue"], edition="1996",
                     board={"0,0": "swords-05", "1,0": "~?", "0,1": "cups-02"},
                     pieces={"0,0": "red1E"}, hands={"red": ["?"] * 3, "blue": ["?"] * 3},
                     deck=["?"] * 68, discard=["wands-03"])
    s = LiveSession("zarcana", edition="1996", players=["red", "blue"], mat=MAT,
                    initial_state=start)
    rec = FakeRecorder()
    s.recorder = rec
    view = TableView.of(start)
    cards = {c: k for c, k in view.cards.items() if c != (1, 0)}
    s.manual("red: use swords-05 by red1E@0,0: attack @1,0")
    ev = s.observe(make_record(cards, view.pyramids, discard=["major-10"]), frame=1)
    assert [e.kind for e in ev] == [EventKind.INFO, EventKind.UNCHANGED], [e.text for e in ev]
    assert "the face-down card destroyed at 1,0 is major-10" in ev[0].text, ev[0].text
    # (kept on show in the window: the picture's "no change" takes the status bar next)
    assert ev[0].notice == ev[0].text
    assert s.state is not None and s.state.discard == ("wands-03", "major-10")
    assert s.history[-1].state is s.state
    assert s.initial_state is not None
    assert s.initial_state.board[(1, 0)] == (("major-10", False),)
    assert rec.calls[-1][0] == "correction", rec.calls[-1]
    ev = s.observe(make_record(cards, view.pyramids, discard=["major-10"]), frame=2)
    assert [e.kind for e in ev] == [EventKind.UNCHANGED], [e.text for e in ev]
    # the name was read off the pile, which may be misread: taking the move back forgets it
    s.step_back()
    assert s.state is not None and s.state.board[(1, 0)] == (("?", False),)
    assert s.initial_state is not None and s.initial_state.board[(1, 0)] == (("?", False),)


def _face_down_then_grown(discard: list[str], levels: bool = True
                          ) -> tuple[LiveSession, dict[str, Any]]:
    """A two-player game where red's Swords territory at 0,0 can destroy the face-down card
    at 1,0, then blue grow its pyramid at 0,1; and the picture of both moves, the discard
    pile showing ``discard`` (bottom to top, each over the one before; with ``levels`` off,
    the record does not say which card lies over which)."""
    from companion.games.zarcana.engine import position
    from companion.games.zarcana.table import TableView

    start = position(["red", "blue"], edition="1996",
                     board={"0,0": "swords-05", "1,0": "~?", "0,1": "cups-02"},
                     pieces={"0,0": "red1E", "0,1": "blue1U"},
                     hands={"red": ["?"] * 3, "blue": ["?"] * 3}, deck=["?"] * 68,
                     discard=["wands-03"])
    s = LiveSession("zarcana", edition="1996", players=["red", "blue"], mat=MAT,
                    initial_state=start)
    view = TableView.of(start)
    rec = make_record({c: k for c, k in view.cards.items() if c != (1, 0)},
                      {**view.pyramids, (0, 1): (parse_pyramid("blue2U"),)}, discard=discard)
    level = {c: k for k, c in enumerate(discard)} if levels else {}
    rec["cards"] = [dict(c, level=level[c["id"]]) if c["id"] in level else c
                    for c in rec["cards"]]
    return s, rec


def test_a_face_down_territory_destroyed_then_covered_is_named_from_the_pile_seen() -> None:
    """Red's Swords territory destroys the face-down card at 1,0 (major-10, face up on the
    discard pile), and blue grows with cups-07 before the next picture, which shows both
    moves and major-10 under cups-07. The moves were taken with "?" on the pile ("? at 1,0
    is destroyed"): the card the picture shows was named nowhere. It is named from the pile
    as seen, in the move and back to the start."""
    s, rec = _face_down_then_grown(["wands-03", "major-10", "cups-07"])
    ev = s.observe(rec, frame=1)
    assert [e.kind for e in ev] == [EventKind.WAITING], [e.text for e in ev]
    ev = s.manual("red: draw 1")        # (the click agrees with the moves held)
    assert [h.move for h in s.history] == ["red: use swords-05 by red1E@0,0: attack @1,0",
                                          "blue: play cups-07 by blue1U@0,1: grow",
                                          "red: draw 1"], [e.text for e in ev]
    assert "major-10 at 1,0 is destroyed" in ev[1].text, ev[1].text
    assert s.state is not None and s.state.discard == ("wands-03", "major-10", "cups-07")
    assert s.initial_state is not None
    assert s.initial_state.board[(1, 0)] == (("major-10", False),)


def test_a_face_down_card_named_from_under_the_pile_top_says_where_it_was_seen() -> None:
    """The card named from under cups-07 on the pile (above): its correction in the game file
    said "seen on the discard pile as red: use swords-05 ... destroyed it", which no picture
    showed. It says where it was seen: under cups-07, the later move's card. A card seen on top of
    the pile as its move destroyed it is still said so."""
    rec = FakeRecorder()
    s, seen = _face_down_then_grown(["wands-03", "major-10", "cups-07"])
    s.recorder = rec
    s.observe(seen, frame=1)
    s.manual("red: draw 1")
    notes = [c[2]["note"] for c in rec.calls if c[0] == "correction"]
    assert notes == ["the face-down card at 1,0 is major-10: seen on the discard pile under "
                     "cups-07 (a later move's card) after red: use swords-05 by red1E@0,0: "
                     "attack @1,0 destroyed it"], notes
    rec = FakeRecorder()
    s, seen = _face_down_then_grown(["wands-03", "major-10"])
    s.recorder = rec
    seen["pyramids"] = [p for p in seen["pyramids"] if p["color"] == "red"] + [
        dict(p, pips=1) for p in seen["pyramids"] if p["color"] == "blue"]
    s.observe(seen, frame=1)
    notes = [c[2]["note"] for c in rec.calls if c[0] == "correction"]
    assert notes == ["the face-down card at 1,0 is major-10: seen on the discard pile as red: "
                     "use swords-05 by red1E@0,0: attack @1,0 destroyed it"], notes


def test_where_a_card_of_moves_held_was_seen_is_said_from_the_picture_that_showed_them() -> None:
    """As above, but a hand over blue's territory on the next picture, the pile squared up
    (only cups-07 seen): the moves wait for a clear view, and red's click takes them. The
    correction said major-10 was seen "as" the attack destroyed it, from the pile of the
    picture before the click, which does not show it; it says where the picture that
    showed the moves saw it: under cups-07."""
    from companion.games.zarcana.table import TableView

    rec = FakeRecorder()
    s, seen = _face_down_then_grown(["wands-03", "major-10", "cups-07"])
    s.recorder = rec
    s.observe(seen, frame=1)
    assert s.state is not None and s._held is not None
    view = TableView.of(s._held.after)
    covered = make_record({c: k for c, k in view.cards.items() if c != (0, 1)},
                          dict(view.pyramids), discard=["cups-07"])
    ev = s.observe(covered, frame=2)
    assert "waiting for a clear view to agree" in ev[-1].text, [e.text for e in ev]
    ev = s.manual("red: draw 1")
    assert len(s.history) == 3, [e.text for e in ev]
    notes = [c[2]["note"] for c in rec.calls if c[0] == "correction"]
    assert notes == ["the face-down card at 1,0 is major-10: seen on the discard pile under "
                     "cups-07 (a later move's card) after red: use swords-05 by red1E@0,0: "
                     "attack @1,0 destroyed it"], notes


def test_a_card_under_the_pile_top_that_may_be_an_older_card_misread_names_nothing() -> None:
    """As above, major-10 hidden under cups-07 and the pile's older card, wands-03, read as
    wands-04: the one card under the top the game knows nowhere was wands-04, and the
    destroyed card was named so; a later picture showing wands-03 and major-10 said "no
    change" (the cards under the top are never compared), and the wrong name stood for good.
    A card under the top that may be a card of the pile not seen on the picture misread (the
    same suit, a rank or two apart) names nothing: the move says which name is not sure."""
    rec = FakeRecorder()
    s, seen = _face_down_then_grown(["wands-04", "cups-07"])
    s.recorder = rec
    s.observe(seen, frame=1)
    ev = s.manual("red: draw 1")
    assert [h.move for h in s.history] == ["red: use swords-05 by red1E@0,0: attack @1,0",
                                          "blue: play cups-07 by blue1U@0,1: grow",
                                          "red: draw 1"], [e.text for e in ev]
    assert ("the face-down card destroyed at 1,0 is not known: wands-04, seen on the discard "
            "pile under cups-07, may be wands-03 misread") in ev[1].text, ev[1].text
    assert s.state is not None and s.state.discard == ("wands-03", "?", "cups-07")
    assert s.initial_state is not None and s.initial_state.board[(1, 0)] == (("?", False),)
    assert not [c for c in rec.calls if c[0] == "correction"]
    # (a card under the top no known card of the pile can be taken for is named, as before)
    s, seen = _face_down_then_grown(["major-10", "cups-07"])
    s.observe(seen, frame=1)
    s.manual("red: draw 1")
    assert s.state is not None and s.state.discard == ("wands-03", "major-10", "cups-07")


def test_a_card_under_the_pile_top_read_unsurely_names_nothing() -> None:
    """As above, the destroyed card (major-10) under cups-07, read as major-11 and unsurely
    (a card mostly covered: the camera keeps its nearest id, with a low confidence). No card
    of the pile is missing that it may be, and the game knows major-11 nowhere: the
    destroyed card was named major-11, and the wrong name stood for good (the cards under
    the top are never compared again). A card under the top read unsurely names nothing:
    the move says the card is not known and that the card seen was not read surely; the
    same card read surely is named, as before."""
    from companion.live.session import PILE_NAME_SURE

    def named(confidence: float) -> tuple[list[str], tuple[str, ...], Any]:
        rec = FakeRecorder()
        s, seen = _face_down_then_grown(["wands-03", "major-11", "cups-07"])
        seen["cards"] = [dict(c, confidence=confidence) if c["id"] == "major-11" else c
                         for c in seen["cards"]]
        s.recorder = rec
        s.observe(seen, frame=1)
        ev = s.manual("red: draw 1")
        assert [h.move for h in s.history] == [
            "red: use swords-05 by red1E@0,0: attack @1,0",
            "blue: play cups-07 by blue1U@0,1: grow", "red: draw 1"], [e.text for e in ev]
        assert s.state is not None and s.initial_state is not None
        return ([e.text for e in ev], s.state.discard,
                [c for c in rec.calls if c[0] == "correction"])

    for under in (PILE_NAME_SURE / 2, round(PILE_NAME_SURE - 0.001, 4)):
        said, pile, corrections = named(under)
        assert ("the face-down card destroyed at 1,0 is not known: major-11, seen on the "
                "discard pile under cups-07, was not read surely") in said[1], (under, said)
        assert pile == ("wands-03", "?", "cups-07") and not corrections
    # (at the floor and just over it: named)
    for sure in (PILE_NAME_SURE, round(PILE_NAME_SURE + 0.001, 4)):
        said, pile, corrections = named(sure)
        assert "major-11 at 1,0 is destroyed" in said[1], (sure, said)
        assert pile == ("wands-03", "major-11", "cups-07") and len(corrections) == 1


def test_two_new_cards_on_the_pile_in_no_known_order_are_tried_either_way_up() -> None:
    """As above, the record giving no levels: the two cards new on the pile, seen as sure,
    were ordered by confidence, major-10 taken as the top; the moves were never found and
    the game waited for good ("is something covering the table?"). Either card is tried on
    top: cups-07 on top explains the table."""
    s, rec = _face_down_then_grown(["wands-03", "major-10", "cups-07"], levels=False)
    for frame in (1, 2):
        ev = s.observe(rec, frame=frame)
        assert [e.kind for e in ev] == [EventKind.WAITING], [e.text for e in ev]
        assert "covering" not in ev[0].text and "two moves since" in ev[0].text, ev[0].text
    ev = s.manual("red: draw 1")
    assert [h.move for h in s.history] == ["red: use swords-05 by red1E@0,0: attack @1,0",
                                          "blue: play cups-07 by blue1U@0,1: grow",
                                          "red: draw 1"], [e.text for e in ev]
    assert "major-10 at 1,0 is destroyed" in ev[1].text, ev[1].text
    assert s.state is not None and s.state.discard == ("wands-03", "major-10", "cups-07")


def test_a_still_table_with_new_pile_cards_in_no_known_order_is_not_tried_again(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """As above, blue's pyramid seen as a large one, which no move makes: nothing explains
    the table, and every picture of it tried every order of the two new pile cards again
    (up to a second a picture). The same table from the same position is tried once; a move
    taken, or the table read otherwise, is tried anew, and said as before."""
    from companion.live.tablestate import TableReading

    tried: list[tuple[str, ...]] = []
    real = TableReading.with_pile

    def counted(self: TableReading, order: tuple[str, ...]) -> TableReading:
        tried.append(order)
        return real(self, order)

    monkeypatch.setattr(TableReading, "with_pile", counted)
    s, rec = _face_down_then_grown(["wands-03", "major-10", "cups-07"], levels=False)
    rec["pyramids"] = [dict(p, pips=3) if p["color"] == "blue" else p for p in rec["pyramids"]]
    said = [e.text for e in s.observe(rec, frame=1)]
    assert len(tried) == 2 and s.state is not None and not s.history, said
    for frame in (2, 3):
        tried.clear()
        assert [e.text for e in s.observe(rec, frame=frame)] == said
        assert tried == []
    s.manual("red: pass")           # (another position: tried anew)
    assert [h.move for h in s.history] == ["red: pass"]
    tried.clear()
    s.observe(rec, frame=4)
    assert len(tried) == 2
    other = dict(rec, pyramids=[p for p in rec["pyramids"] if p["color"] == "red"])
    tried.clear()
    s.observe(other, frame=5)       # (another table: tried anew)
    assert len(tried) == 2


def _searches_counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The searches for moves seen at once (two, three) the session makes, by name."""
    import companion.live.session as live

    searched: list[str] = []
    for name in ("explain_two", "explain_three"):
        def counted(*args: Any, _real: Any = getattr(live, name), _name: str = name,
                    **kw: Any) -> Any:
            searched.append(_name)
            return _real(*args, **kw)
        monkeypatch.setattr(live, name, counted)
    return searched


def test_a_still_table_nothing_explains_is_not_searched_again_for_moves_seen_at_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """As above (blue's pyramid seen as a large one, which no move makes): the pile's order
    tried once, every picture of the still table still searched two moves, then three, seen
    at once (0.25-0.4 s a picture). The same table from the same position is searched once,
    and said as before; a move taken, or the table read otherwise, is searched anew."""
    searched = _searches_counted(monkeypatch)
    s, rec = _face_down_then_grown(["wands-03", "major-10", "cups-07"], levels=False)
    rec["pyramids"] = [dict(p, pips=3) if p["color"] == "blue" else p for p in rec["pyramids"]]
    said = [e.text for e in s.observe(rec, frame=1)]
    assert "explain_three" in searched and not s.history, said
    for frame in (2, 3):
        searched.clear()
        assert [e.text for e in s.observe(rec, frame=frame)] == said
        assert searched == []
    s.manual("red: pass")           # (another position: searched anew)
    searched.clear()
    s.observe(rec, frame=4)
    assert "explain_three" in searched
    other = dict(rec, pyramids=[p for p in rec["pyramids"] if p["color"] == "red"])
    searched.clear()
    s.observe(other, frame=5)       # (another table: searched anew)
    assert "explain_three" in searched


def test_the_pile_orders_that_share_a_top_card_search_moves_seen_at_once_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Three cards new on the pile in no known order (six orders), and nothing explains the
    table (blue's pyramid seen as a large one): each order was searched for two moves (up to
    a second each), and the order kept searched again for the hold, seven searches where the
    orders show three tables (a top card each: the cards under it are each tried as the
    first move's card, whatever their order). One search a top card, the same said."""
    import companion.live.session as live

    tops: list[str | None] = []
    real = live.explain_two

    def counted(st: Any, seen: Any, **kw: Any) -> Any:
        tops.append(seen.discard_top)
        return real(st, seen, **kw)

    def still_table() -> tuple[LiveSession, dict[str, Any]]:
        s, rec = _face_down_then_grown(["wands-03", "major-10", "cups-07", "wands-05"],
                                       levels=False)
        rec["pyramids"] = [dict(p, pips=3) if p["color"] == "blue" else p
                           for p in rec["pyramids"]]
        return s, rec

    monkeypatch.setattr(live, "explain_two", counted)
    s, rec = still_table()
    said = [e.text for e in s.observe(rec, frame=1)]
    assert s.last_reading is not None and len(s.last_reading.discard_orders) == 6
    assert sorted(tops) == ["cups-07", "major-10", "wands-05"], tops
    # (every search made, none shared: the same said)
    s, rec = still_table()
    monkeypatch.setattr(s, "_searches", type("Afresh", (), {
        "outcome": staticmethod(lambda position, key, trial: trial())})())
    tops.clear()
    assert [e.text for e in s.observe(rec, frame=1)] == said, said
    assert len(tops) == 7, tops


def test_the_searches_of_a_picture_share_the_moves_they_tried(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """As above (three cards new on the pile in no known order, nothing explains the table):
    the search for two moves from each top card made the same first moves each, and the
    search for three made the second moves the searches for two had made. They share one
    :class:`MovesTried` (and say the same as each search on its own), let go once the
    picture is judged (thousands of positions where nothing explains the table)."""
    import companion.live.session as live
    from companion.games.zarcana.table import MovesTried

    given: list[Any] = []
    alone = False
    for name in ("explain_two", "explain_three"):
        def search(*args: Any, _real: Any = getattr(live, name), **kw: Any) -> Any:
            given.append(kw.get("tried"))
            if alone:
                kw.pop("tried", None)
            return _real(*args, **kw)
        monkeypatch.setattr(live, name, search)

    def said() -> list[str]:
        s, rec = _face_down_then_grown(["wands-03", "major-10", "cups-07", "wands-05"],
                                       levels=False)
        rec["pyramids"] = [dict(p, pips=3) if p["color"] == "blue" else p
                           for p in rec["pyramids"]]
        out = [e.text for e in s.observe(rec, frame=1)]
        assert len(s._moves_tried) == 0
        return out

    shared = said()
    assert len(given) == 4 and isinstance(given[0], MovesTried), given
    assert all(t is given[0] for t in given)
    alone = True
    assert said() == shared


def test_a_search_cut_short_on_a_still_table_is_not_made_again(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A search for moves seen at once that ran out of its budget (counted in the searching
    thread's CPU time, so the same table cuts it short again) was made anew on every picture
    of the still table: up to 1 s for two moves and 2 s for three a picture, for the same
    "nothing found". The same table from the same position is searched once, cut short or
    not, and said as before."""
    import companion.live.session as live

    searched: list[str] = []
    for name in ("explain_two", "explain_three"):
        def cut(*args: Any, _real: Any = getattr(live, name), _name: str = name,
                **kw: Any) -> Any:
            searched.append(_name)
            runs, _ = _real(*args, **kw)
            return runs, False          # (as out of time: nothing taken from it)
        monkeypatch.setattr(live, name, cut)
    s, rec = _face_down_then_grown(["wands-03", "major-10", "cups-07"], levels=False)
    rec["pyramids"] = [dict(p, pips=3) if p["color"] == "blue" else p for p in rec["pyramids"]]
    said = [e.text for e in s.observe(rec, frame=1)]
    assert "explain_three" in searched and not s.history, said
    searched.clear()
    assert [e.text for e in s.observe(rec, frame=2)] == said
    assert searched == []
    s.manual("red: pass")           # (another position: searched anew)
    searched.clear()
    s.observe(rec, frame=3)
    assert "explain_three" in searched


def test_moves_seen_at_once_on_a_repeated_picture_are_said_and_taken_as_without_the_memory(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The search's outcome remembered (above), a repeated picture says what it said
    searched anew: the same events, status and moves, the moves held taken from the last
    picture that showed them (its frame), a still table nothing explains waited on alike."""
    searched = _searches_counted(monkeypatch)

    def run(forget: bool) -> list[Any]:
        out: list[Any] = []
        held, rec = _face_down_then_grown(["wands-03", "major-10", "cups-07"])
        still, other = _face_down_then_grown(["wands-03", "major-10", "cups-07"],
                                             levels=False)
        other["pyramids"] = [dict(p, pips=3) if p["color"] == "blue" else p
                             for p in other["pyramids"]]
        for s, r in ((held, rec), (still, other)):
            for frame in (1, 2, 3):
                if forget:
                    s._forget_trials()
                out += [s.observe(r, frame=frame), s.status]
        out += [held.manual("red: draw 1"),     # (the click agrees with the moves held)
                [(h.move, h.frame) for h in held.history], held.state]
        return out

    remembered = run(forget=False)
    once = len(searched)
    searched.clear()
    assert run(forget=True) == remembered
    assert len(searched) > once, (once, searched)     # (searched again on each repeat)
    assert remembered[-2][0] == ("red: use swords-05 by red1E@0,0: attack @1,0", 3)


def test_the_pile_order_that_explains_the_table_is_the_one_the_session_keeps() -> None:
    """The pile's new cards in no known order (above): the order that explains the table was
    judged, but the session kept the picture's reading as read, major-10 on top: the game
    file's correction said major-10 was seen "as" the attack destroyed it, not under cups-07,
    and a table drawn from the session's last reading showed the wrong top."""
    rec = FakeRecorder()
    s, seen = _face_down_then_grown(["wands-03", "major-10", "cups-07"], levels=False)
    s.recorder = rec
    s.observe(seen, frame=1)
    reading = s.last_reading
    assert reading is not None and reading.view.discard_top == "cups-07", reading.discard_seen
    s.manual("red: draw 1")
    notes = [c[2]["note"] for c in rec.calls if c[0] == "correction"]
    assert notes == ["the face-down card at 1,0 is major-10: seen on the discard pile under "
                     "cups-07 (a later move's card) after red: use swords-05 by red1E@0,0: "
                     "attack @1,0 destroyed it"], notes


def test_a_face_down_territory_destroyed_then_covered_unseen_is_said_to_be_unknown() -> None:
    """As above, the pile neat: only cups-07 is seen on it, and no picture showed the
    destroyed card. The move said "? at 1,0 is destroyed", and the game file only that,
    leaving it unsaid whether the card was unknown or the "?" a fault. The move's line and
    the game file say plainly that the card is not known."""
    rec = FakeRecorder()
    s, seen = _face_down_then_grown(["cups-07"])
    s.recorder = rec
    s.observe(seen, frame=1)
    ev = s.manual("red: draw 1")
    said = ("the face-down card destroyed at 1,0 is not known: no picture showed it face up "
            "on the discard pile")
    assert said in ev[1].text, [e.text for e in ev]
    moves = [c for c in rec.calls if c[0] == "move"]
    assert [m[1] for m in moves][:1] == ["red: use swords-05 by red1E@0,0: attack @1,0"]
    assert said in moves[0][2]["note"], moves[0][2]
    assert not any(said in m[2]["note"] for m in moves[1:])
    assert s.state is not None and s.state.discard == ("wands-03", "?", "cups-07")


def test_a_territory_power_draw_that_rebuilds_the_draw_pile_is_offered_as_a_click() -> None:
    """Red's High Priestess territory draws 2 with one card left in the draw pile: the
    discard pile is shuffled into a new draw pile. The picture of the pile gone waits for
    the click, naming that draw, but the buttons offered only the power's draws that leave
    the table as it was (0 and 1 cards): the click had to be typed."""
    from companion.games.zarcana.engine import position
    from companion.games.zarcana.table import TableView

    start = position(["red", "blue"], edition="looney",
                     board={"0,0": "cups-03", "1,0": "major-02", "0,1": "swords-02"},
                     pieces={"1,0": "red1U"}, hands={"red": ["?"] * 3, "blue": ["?"] * 3},
                     deck=["?"], discard=["cups-07", "major-04", "wands-02"], box=["?"] * 65)
    s = LiveSession("zarcana", edition="looney", players=["red", "blue"], mat=MAT,
                    initial_state=start)
    power = "red: use major-02 by red1U@1,0: draw 2"
    view = TableView.of(start)
    gone = make_record(dict(view.cards), view.pyramids, discard=[], draw=1)
    ev = s.observe(gone, frame=1)
    assert [e.kind for e in ev] == [EventKind.WAITING] and power in ev[0].text, \
        [e.text for e in ev]
    options = s.manual_options()
    assert power in options and "red: draw 2" in options, options
    ev = s.manual(power)
    assert [e.kind for e in ev] == [EventKind.ACCEPTED], [e.text for e in ev]
    st = s.state
    assert st is not None and st.discard == () and st.reshuffles == 1
    ev = s.observe(gone, frame=2)
    assert [e.kind for e in ev] == [EventKind.UNCHANGED], [e.text for e in ev]
