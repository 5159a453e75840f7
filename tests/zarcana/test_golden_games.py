"""Whole scripted games (tests/data/zarcana/*.json) checked move by move against
expectations worked out by hand from the rules texts.

A game file: ``setup`` (a position: players, edition, board, pieces, hands, deck bottom-first,
discard, settings, and ``bidding: true`` to open with the bidding ritual), then ``moves``:
each ``{"move": text}`` is legal unless it carries ``"illegal": [rule ids]`` (then it is
refused and the game goes on unchanged); ``expect`` holds what must be true after it; and
``final`` what must be true at the end.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from companion.core.errors import IllegalMoveError
from companion.core.pieces import Color, parse_cell
from companion.games.zarcana import Edition, parse_move
from companion.games.zarcana.engine import dumps, invariant_errors, loads
from companion.games.zarcana.state import Bidding

from conftest import pos

DATA = Path(__file__).resolve().parents[1] / "data" / "zarcana"
GAMES = sorted(DATA.glob("*.json"))


def build(setup: dict):
    setup = dict(setup)
    players = setup.pop("players")
    ed = Edition.parse(setup.pop("edition"))
    settings = dict(setup.pop("settings", {}))
    if "extra_cards" in settings:
        settings["extra_cards"] = tuple(settings["extra_cards"])
    if "optional_trumps" in settings:
        settings["optional_trumps"] = tuple(tuple(p) for p in settings["optional_trumps"])
    bidding = setup.pop("bidding", False)
    st = pos(players, ed=ed, **setup, **settings)
    if bidding:
        st = st.copy()
        st.phase = "bid"
        st.bidding = Bidding(st.players, mandatory=ed is Edition.E1996)
    return st


def check_expect(st, expect: dict, where: str) -> None:
    for key, want in expect.items():
        if key == "pieces":
            got = {f"{c[0]},{c[1]}": sorted(str(p) for p in ps) for c, ps in st.pieces.items()}
            assert got == {k: sorted(v.split()) for k, v in want.items()}, f"{where}: pieces"
        elif key == "stacks":
            for cell, cards in want.items():
                got = [("" if up else "~") + c for c, up in st.board.get(parse_cell(cell), ())]
                assert got == cards, f"{where}: stack at {cell}"
        elif key == "stash":
            for color, s in want.items():
                assert list(st.stashes[Color(color)]) == s, f"{where}: {color}'s stash"
        elif key == "hand_sizes":
            for color, n in want.items():
                assert len(st.hands[Color(color)]) == n, f"{where}: {color}'s hand size"
        elif key == "hands":
            for color, cards in want.items():
                assert sorted(st.hands[Color(color)]) == sorted(cards), f"{where}: {color}'s hand"
        elif key == "hand_has":
            for color, cards in want.items():
                for c in cards:
                    assert c in st.hands[Color(color)], f"{where}: {color} should hold {c}"
        elif key == "to_move":
            assert (st.to_move.value if st.to_move else None) == want, f"{where}: to move"
        elif key == "scores":
            assert {c.value: v for c, v in st.scores().items()} == want, f"{where}: scores"
        elif key == "discard":
            assert list(st.discard) == want, f"{where}: discard pile"
        elif key == "discard_top":
            assert st.discard_top() == want, f"{where}: top of the discard pile"
        elif key == "deck_size":
            assert len(st.deck) == want, f"{where}: draw pile size"
        elif key == "reshuffles":
            assert st.reshuffles == want, f"{where}: reshuffles"
        elif key == "marks":
            marked = [st.board[cell][-1][0] for cell in st.marks]
            assert sorted(marked) == sorted(want), f"{where}: marked cards"
        elif key == "phase":
            assert st.phase == want, f"{where}: phase"
        elif key == "over":
            assert st.is_over is want, f"{where}: game over"
        else:
            raise AssertionError(f"{where}: unknown expectation {key!r}")


@pytest.mark.parametrize("path", GAMES, ids=[p.stem for p in GAMES])
def test_golden_game(path):
    game = json.loads(path.read_text())
    st = build(game["setup"])
    legal_count = 0
    for i, step in enumerate(game["moves"]):
        text = step["move"]
        where = f"{path.name} step {i + 1} ({text})"
        verdict = st.check(text)
        if "illegal" in step:
            assert not verdict.legal, f"{where}: should be illegal"
            assert set(step["illegal"]) == set(verdict.rules), f"{where}: {verdict.explain()}"
            with pytest.raises(IllegalMoveError):
                st.apply(text)
        else:
            assert verdict.legal, f"{where}: {verdict.explain()}"
            assert str(parse_move(text)) in {str(m) for m in st.legal_moves()}, f"{where}: not listed"
            st = st.apply(text)
            legal_count += 1
            assert invariant_errors(st) == [], f"{where}: {invariant_errors(st)}"
            assert dumps(loads(dumps(st))) == dumps(st)
        check_expect(st, step.get("expect", {}), where)
    assert legal_count >= 15
    check_expect(st, game["final"], f"{path.name} final")


def test_golden_games_present():
    assert len(GAMES) >= 3
    editions = {json.loads(p.read_text())["setup"]["edition"] for p in GAMES}
    assert editions == {"looney", "1996"}
