"""Helpers for the Zarcana engine tests.

``legal``/``illegal`` check a move both ways: the verdict of ``check``, what ``apply`` does
with it, and (where the move is written in the enumerator's own form) ``legal_moves``.
"""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from companion.core.errors import IllegalMoveError
from companion.games.zarcana import Edition, parse_move
from companion.games.zarcana.engine import ZarcanaState, invariant_errors, position

EDITIONS = [Edition.LOONEY, Edition.E1996]

#: parametrize a test over both editions (the rule is shared)
both_editions = pytest.mark.parametrize("ed", EDITIONS, ids=["looney", "1996"])

#: A 3x3 block of plain territories (cells "i,j", i east, j south). Pentacles are used so
#: that no test card (swords, cups, wands, trumps) collides with them.
NINE = {
    "0,0": "pentacles-02", "1,0": "pentacles-03", "2,0": "pentacles-04",
    "0,1": "pentacles-05", "1,1": "pentacles-06", "2,1": "pentacles-07",
    "0,2": "pentacles-08", "1,2": "pentacles-09", "2,2": "pentacles-10",
}


def board(**cells: object) -> dict[str, object]:
    """NINE with some cells replaced; keys written like c1_1 for "1,1"; None removes a cell."""
    out: dict[str, object] = dict(NINE)
    for key, card in cells.items():
        cell = key.lstrip("c").replace("_", ",").replace("m", "-")
        if card is None:
            out.pop(cell, None)
        else:
            out[cell] = card
    return out


def pos(players: Iterable[str] = ("red", "blue"), ed: Edition = Edition.LOONEY,
        **kw: object) -> ZarcanaState:
    kw.setdefault("board", dict(NINE))
    st = position(list(players), edition=ed, **kw)  # type: ignore[arg-type]
    if "deck" in kw and "box" not in kw:
        # a short draw pile was given: the cards placed nowhere go back in the box
        from collections import Counter

        placed: Counter[str] = Counter()
        for s in st.board.values():
            placed.update(c for c, _ in s)
        for h in st.hands.values():
            placed.update(h)
        placed.update(st.deck)
        placed.update(st.discard)
        kw["box"] = [c for c in st.full_deck() if not placed[c]]
        st = position(list(players), edition=ed, **kw)  # type: ignore[arg-type]
    assert invariant_errors(st) == []
    return st


def legal(st: ZarcanaState, move: str, *, listed: bool = True) -> ZarcanaState:
    """Assert the move is legal (and, if ``listed``, offered by legal_moves); return the new state."""
    verdict = st.check(move)
    assert verdict.legal, verdict.explain()
    if listed:
        offered = {str(m) for m in st.legal_moves()}
        assert str(parse_move(move)) in offered, f"{move} is legal but not in legal_moves()"
    new = st.apply(move)
    assert invariant_errors(new) == [], invariant_errors(new)
    return new


def illegal(st: ZarcanaState, move: str, *rules: str) -> None:
    """Assert the move is illegal for (at least) the given rule ids, and apply refuses it."""
    verdict = st.check(move)
    assert not verdict.legal, f"{move} should break {rules}"
    for rid in rules:
        assert rid in verdict.rules, f"expected {rid} in {verdict.rules}:\n{verdict.explain()}"
    with pytest.raises(IllegalMoveError) as info:
        st.apply(move)
    assert info.value.verdict.rules == verdict.rules
    assert str(parse_move(move)) not in {str(m) for m in st.legal_moves()}


def pieces_at(st: ZarcanaState, cell: str) -> list[str]:
    from companion.core.pieces import parse_cell

    return sorted(str(p) for p in st.pieces.get(parse_cell(cell), ()))


def top_card(st: ZarcanaState, cell: str) -> str | None:
    from companion.core.pieces import parse_cell

    t = st.top(parse_cell(cell))
    return None if t is None else t[0]


def stack(st: ZarcanaState, cell: str) -> list[str]:
    from companion.core.pieces import parse_cell

    return [("" if up else "~") + c for c, up in st.board.get(parse_cell(cell), ())]


def stash(st: ZarcanaState, color: str) -> tuple[int, int, int]:
    from companion.core.pieces import Color

    return st.stashes[Color(color)]


def hand(st: ZarcanaState, color: str) -> list[str]:
    from companion.core.pieces import Color

    return list(st.hands[Color(color)])


def score(st: ZarcanaState) -> dict[str, int]:
    return {c.value: v for c, v in st.scores().items()}
