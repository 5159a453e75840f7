"""Whole seeded bot games refereed picture by picture, with the camera's usual troubles.

Each game is played by the bots of ``companion play zarcana --bots`` (their seed and move
stream), both editions, 2 to 4 players. A live session deals from the first picture and is
shown the table after every move, as the camera knows it (hands, draw pile and face-down
cards unseen; the discard pile's top three cards spread, their order seen), with now and
then a picture lost (one, or two in a row), a hand over part of the table, a pyramid
missed or a card misread on one picture. The players click what the camera cannot see (a
draw, a pass, a bid, a payment, the Fool's drawn card); where a picture fits more moves
than one and the session takes another than the one made (how many cards a High
Priestess drew), or asks, they take it back and click the moves made, as its log tells
them to.

Checks, each game: nothing escapes the session; the camera never has a legal game ruled
against; with the table read right, the moves it takes are the game's but for the choices
no table shows (:data:`UNSEEN_CHOICES`); the game ends with the engine's scores; and the
game file it wrote replays to the same final position.

A longer hunt of the same kind, over many more games, found the faults fixed beside this
test; these games fail when three of those fixes are undone (Judgement's draw read off the
pile, the Fool's draw from a rebuilt draw pile, moves a broken rule would make one asked
about).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from bench.live_search import MAT, as_the_camera_knows, record_of
from companion.core.cards import BACK
from companion.games.zarcana import Edition
from companion.games.zarcana.engine import ZarcanaState, dumps
from companion.games.zarcana.moves import Action, Move, Reorient, Start, parse_move
from companion.games.zarcana.table import TableView
from companion.live.session import EventKind, LiveEvent, LiveSession, Status
from companion.recording.store import GameRecorder, open_game, replay_states

from bot_games import BotGame, play_bot_game

#: where cell 0,0 lies on the mat (mm): far from the piles' zones, the board may grow any way
ORIGIN = (1500.0, 1500.0)
#: the choices a table never shows: how many cards the High Priestess drew (2), whose hand
#: Justice took (11), whether the Sun built from the hand or the draw pile (19), and which
#: trump the World copied (21); the players put these right by hand
UNSEEN_CHOICES = ("major-02", "major-11", "major-19", "major-21")


def bot_game(seed: int, edition: Edition, players: int) -> BotGame:
    """The game ``companion play zarcana --bots --seed SEED`` plays."""
    return play_bot_game(seed, players, edition)


def picture(st: ZarcanaState) -> dict[str, Any]:
    return record_of(TableView.of(st), ORIGIN, st.discard[-3:])


def clicked(before: ZarcanaState, after: ZarcanaState, move: Move) -> bool:
    """Whether the players click ``move``: one that changes nothing the camera sees, and
    every draw, pass, end, bid and decision (a draw that rebuilds the pile changes it)."""
    seen = not TableView.of(before).same_as(TableView.of(after))
    if isinstance(move, (Start, Reorient, Action)):
        return not seen
    return True


def fool_draws(st: ZarcanaState) -> list[str]:
    """The cards the Fool drew in the move that led to ``st``, in order."""
    return [e.removeprefix("the Fool draws ") for e in st.events
            if e.startswith("the Fool draws ")]


def the_same(a: ZarcanaState, b: ZarcanaState) -> bool:
    """Whether two positions agree on all the camera and the clicks can know."""
    def known(st: ZarcanaState) -> tuple[Any, ...]:
        return (TableView.of(st).normalised(), st.stashes, st.phase, st.current,
                st.turn_number, st.reshuffles, st.end_declared_by, st.final_turns_left,
                {c: len(h) for c, h in st.hands.items()}, len(st.deck), len(st.discard),
                [type(p).__name__ for p in st.pending], st.is_over,
                {c: len(s) for c, s in st.board.items()})
    return known(a) == known(b)


@dataclass
class Referee:
    """A live session following ``game`` as the players at the table feed it."""

    game: BotGame
    session: LiveSession
    rng: random.Random
    ruled: list[str] = field(default_factory=list)       # rulings on the legal game
    put_right: list[str] = field(default_factory=list)   # moves the players took back

    def heard(self, k: int, events: list[LiveEvent]) -> None:
        self.ruled += [f"move {k}: {e.text}" for e in events if e.kind is EventKind.ILLEGAL]

    def taken(self) -> int:
        """The moves of the game the session has (the Fool's reveals are no moves of the
        bots' game: their engine knows the card drawn)."""
        return sum(1 for h in self.session.history if ": reveal " not in h.move)

    def after_each(self) -> list[tuple[int, ZarcanaState]]:
        """Per move of the game the session took: its entries so far, and the position."""
        out: list[tuple[int, ZarcanaState]] = []
        for n, h in enumerate(self.session.history, start=1):
            if ": reveal " in h.move and out:
                out[-1] = (n, h.state)
            else:
                out.append((n, h.state))
        return out

    def click(self, k: int, text: str) -> None:
        self.heard(k, self.session.manual(text))

    def reveal(self, k: int, st: ZarcanaState) -> None:
        for card in fool_draws(st):
            now = self.session.state
            assert now is not None and now.to_move is not None
            self.click(k, f"{now.to_move.value}: reveal {card}")

    def put_back(self, k: int, upto: int) -> None:
        """The players put the session right: the moves it took otherwise taken back, the
        game's moves up to ``upto`` clicked."""
        s = self.session
        taken = self.after_each()
        wrong = next((n for n, (_, st) in enumerate(taken)
                      if not the_same(st, self.game.states[n])), None)
        if wrong is not None:
            keep = taken[wrong - 1][0] if wrong else 0
            self.put_right += [h.move for h in s.history[keep:] if ": reveal " not in h.move]
            while len(s.history) > keep:
                s.step_back()
        while self.taken() < upto and not s.is_over:
            i = self.taken()
            self.click(k, self.game.moves[i])
            self.reveal(k, self.game.states[i])
            assert self.taken() > i, f"move {k}: the click of {self.game.moves[i]} not taken"

    def play(self, trouble: float) -> None:
        """The whole game, a picture after each move, ``trouble`` the share of pictures the
        camera gets wrong."""
        s, game, rng = self.session, self.game, self.rng
        self.heard(0, s.observe(picture(game.start), frame=0))
        before, lost, asked = game.start, 0, None
        for k, (text, st) in enumerate(zip(game.moves, game.states), start=1):
            move = parse_move(text)
            if k == len(game.moves):
                # the last turn: the players turn the face-down territories up and name them
                self.put_back(k, k - 1)
                for cell in s.hidden_cards():
                    self.heard(k, s.name_card(cell, before.board[cell][-1][0]))
            click = clicked(before, st, move)
            if click:
                if k - 1 - self.taken() >= 2:
                    self.put_back(k, k - 1)     # (a click two seats ahead is refused)
                self.click(k, text)
            if fool_draws(st):
                # the Fool's card played is seen first (its player stops to draw), then
                # each card drawn is named
                played = as_the_camera_knows(before).apply(text)
                if not TableView.of(played).same_as(TableView.of(before)):
                    self.heard(k, s.observe(picture(played), frame=k))
                elif not click:
                    self.click(k, text)     # (the Fool's territory used: nothing seen)
                self.reveal(k, st)
            before = st
            seen = picture(st)
            what = rng.choice(("lost", "hand", "pyramid", "card")) \
                if rng.random() < trouble and k < len(game.moves) - 1 else None
            if what == "lost" and lost < 2:
                lost += 1
                continue
            lost = 0
            if what == "hand":
                over = dict(seen, hands=True,
                            cards=[c for c in seen["cards"] if rng.random() < 0.7],
                            pyramids=[p for p in seen["pyramids"] if rng.random() < 0.7])
                self.heard(k, s.observe(over, frame=k))
            elif what == "pyramid" and seen["pyramids"]:
                missed = list(seen["pyramids"])
                missed.pop(rng.randrange(len(missed)))
                self.heard(k, s.observe(dict(seen, pyramids=missed), frame=k))
            elif what == "card":
                misread = misread_card(seen, rng)
                if misread is not None:
                    self.heard(k, s.observe(misread, frame=k))
            self.heard(k, s.observe(seen, frame=k))
            if s.is_over:
                continue
            later = game.moves[k] if k < len(game.moves) else None
            if (st.pending and later is not None and self.taken() == k
                    and clicked(st, game.states[k], parse_move(later))):
                continue    # (the tax an Emperor asked for: the payer's click tells)
            if s.status in (Status.QUESTION, Status.WRONG_TABLE):
                # asked: the next picture may tell; else the players answer by hand
                if asked is not None and k > asked:
                    self.put_back(k, k)
                    asked = None
                elif asked is None:
                    asked = k
                continue
            asked = None
            taken = self.after_each()
            if any(not the_same(st_n, game.states[n]) for n, (_, st_n) in enumerate(taken)) \
                    or k - self.taken() >= 3:
                self.put_back(k, k)
        s.source_ended("the game")
        if not s.is_over:
            self.put_back(len(game.moves), len(game.moves))


def misread_card(seen: dict[str, Any], rng: random.Random) -> dict[str, Any] | None:
    """``seen`` with one face-up card read as another of its suit, a rank or two off."""
    cards = [dict(c) for c in seen["cards"]]
    ids = {c["id"] for c in cards}
    for c in rng.sample(cards, len(cards)):
        suit, _, rank = c["id"].rpartition("-")
        if c["id"] == BACK or not rank.isdigit():
            continue
        top = 21 if suit == "major" else 14
        others = [f"{suit}-{int(rank) + d:02d}" for d in (-2, -1, 1, 2)
                  if 0 <= int(rank) + d <= top and f"{suit}-{int(rank) + d:02d}" not in ids]
        if others:
            c["id"] = rng.choice(others)
            return dict(seen, cards=cards)
    return None


#: (seed, edition, players, share of pictures the camera gets wrong)
GAMES = [(2, Edition.E1996, 3, 0.0), (6, Edition.E1996, 2, 0.0),
         (5, Edition.LOONEY, 4, 0.08), (0, Edition.E1996, 2, 0.08),
         (3, Edition.LOONEY, 3, 0.08)]


@pytest.mark.parametrize("seed,edition,players,trouble", GAMES,
                         ids=[f"{e.value}-{n}p-seed{s}-{'troubled' if t else 'clear'}"
                              for s, e, n, t in GAMES])
def test_a_whole_bot_game_is_refereed_to_its_true_end(seed: int, edition: Edition,
                                                      players: int, trouble: float,
                                                      tmp_path: Path) -> None:
    game = bot_game(seed, edition, players)
    start = game.start
    path = tmp_path / "game.db"
    recorder = GameRecorder.create(path, game="zarcana", edition=edition.value,
                                   players=[c.value for c in start.players],
                                   settings=start.settings.to_dict())
    session = LiveSession("zarcana", edition=edition, players=[c.value for c in start.players],
                          settings=start.settings, mat=MAT, recorder=recorder)
    ref = Referee(game, session, random.Random(f"whole-games:{seed}:{edition.value}"))
    ref.play(trouble)
    assert ref.ruled == []
    if not trouble:
        # the table read right: only the choices no table shows are put right
        assert [m for m in ref.put_right if not any(c in m for c in UNSEEN_CHOICES)] == []
    final = game.states[-1]
    assert session.is_over and session.state is not None
    assert the_same(session.state, final)
    want = {c.value: v for c, v in final.scores().items()}
    assert session.scores() == want
    session.close()
    recorded = open_game(path)
    replayed = [st for _, st in replay_states(recorded)][-1]
    assert dumps(replayed) == dumps(session.state)
    assert recorded.scores == want


def test_a_click_after_the_players_own_lost_picture_is_kept_not_refused() -> None:
    """From seeded bot game 17 (Looney, four players): green, six cards in hand, plays the
    High Priestess drawing none and then draws one card with the extra option. The picture
    of the Priestess is lost, so green's draw is clicked while the game so far still holds
    six cards in green's hand: it was refused ("drawing may not take the hand past six
    cards") and lost. It is kept, said so, and taken once the next picture shows the
    Priestess; a click that no move of green's could make good is still refused."""
    game = bot_game(17, Edition.LOONEY, 4)
    before = game.states[109]
    assert game.moves[110:112] == ("green: play major-02: draw 0", "green: draw 1")
    s = LiveSession("zarcana", edition=before.settings.edition,
                    players=[c.value for c in before.players], settings=before.settings,
                    mat=MAT, initial_state=as_the_camera_knows(before))
    s.observe(picture(before), frame=110)
    ev = s.manual("green: draw 9")
    assert [e.kind for e in ev] == [EventKind.ILLEGAL] and "more cards than" in ev[0].text
    ev = s.manual("green: draw 1")
    assert [e.kind for e in ev] == [EventKind.WAITING], [e.text for e in ev]
    assert "past six cards" in ev[0].text
    assert len(s.history) == 0
    ev = s.observe(picture(game.states[111]), frame=112)
    assert [e.move for e in ev if e.kind is EventKind.ACCEPTED] == list(game.moves[110:112])
    assert s.state is not None and the_same(s.state, game.states[111])
