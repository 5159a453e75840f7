"""The searches for moves seen at once (:func:`explain_two`, :func:`explain_three`) give the
same answers however much of their work is shared: the moves tried from a position, kept for
the searches after it (:class:`MovesTried`), as the live referee searches one table for each
top card of a pile in no known order, two moves and then three.

The golden answers (tests/data/table/moves_at_once.json) were written by the searches
before any work was shared (commit b3db281), each search on its own, with a budget no table
here reaches; written again with ``python tests/test_zarcana_moves_at_once.py --write``
(only where a change to the rules or the moves' words is meant to change them).
"""

from __future__ import annotations

import json
import random
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # (run as a script to write the golden answers)

from bench.live_search import as_the_camera_knows  # noqa: E402
from companion.commands.play import choose_bot_move  # noqa: E402
from companion.core.cards import BACK  # noqa: E402
from companion.core.pieces import Pyramid  # noqa: E402
from companion.games.zarcana import Edition, new_game  # noqa: E402
from companion.games.zarcana.engine import ZarcanaState  # noqa: E402
from companion.games.zarcana.moves import UNKNOWN  # noqa: E402
from companion.games.zarcana.table import (  # noqa: E402
    MovesTried,
    TableView,
    _changes,
    _legal_results,
    candidate_moves,
    explain,
    explain_three,
    explain_two,
)

GOLDEN = ROOT / "tests" / "data" / "table" / "moves_at_once.json"
GAMES = 8
#: a budget (CPU s) no search here reaches: the answers are the whole search's
BUDGET_S = 60.0


@dataclass
class Case:
    name: str
    start: ZarcanaState
    seen: TableView
    #: the discard pile's cards seen, top first
    pile: tuple[str, ...]
    compare_discard: bool

    def tops(self) -> Iterator[tuple[TableView, tuple[str, ...]]]:
        """The table with each of the pile's new cards as its top (a pile in no known
        order: the live referee tries each), and the cards seen under it."""
        new = [c for c in self.pile if c not in self.start.discard]
        if not self.pile:
            yield self.seen, ()
        for top in dict.fromkeys(new or self.pile[:1]):
            under = tuple(c for c in self.pile if c != top)
            yield replace(self.seen, discard_top=top), under


def _spoilt(view: TableView, rng: random.Random) -> TableView:
    """``view`` with a pyramid one size larger, or two territories swapped: a table that
    no run of moves may reach, searched through."""
    small = [(c, k) for c, ps in sorted(view.pyramids.items()) for k, p in enumerate(ps)
             if p.size < 3]
    faces = sorted(c for c, cid in view.cards.items() if cid != BACK)
    if small and (len(faces) < 2 or rng.random() < 0.5):
        cell, k = rng.choice(small)
        ps = list(view.pyramids[cell])
        ps[k] = Pyramid(ps[k].color, ps[k].size + 1, ps[k].pose)
        return TableView(view.cards, {**view.pyramids, cell: tuple(sorted(ps))},
                         view.discard_top)
    a, b = rng.sample(faces, 2)
    return TableView({**view.cards, a: view.cards[b], b: view.cards[a]}, view.pyramids,
                     view.discard_top)


def cases(games: int = GAMES) -> list[Case]:
    """Per seeded bot game, a table two moves on, three moves on, and three moves on with
    one thing changed, from positions at turn 15 or later (hidden cards unknown)."""
    out: list[Case] = []
    for g in range(games):
        rng = random.Random(f"moves-at-once:{g}")
        st = new_game(3, edition=(Edition.E1996, Edition.LOONEY)[g % 2], seed=500 + g)
        states = [st]
        while not st.is_over and len(states) < 300:
            st = st.apply(choose_bot_move(st, rng))
            states.append(st)

        def changed(a: ZarcanaState, b: ZarcanaState) -> bool:
            return not TableView.of(a).same_as(TableView.of(b))

        starts = [t for t in range(15, len(states) - 3) if not states[t].pending
                  and all(changed(states[t + k], states[t + k + 1]) for k in range(3))]
        for kind, t in zip(("two", "three", "none"), rng.sample(starts, 3)):
            end = states[t + (2 if kind == "two" else 3)]
            seen = TableView.of(end)
            if kind == "none":
                seen = _spoilt(seen, rng)
            out.append(Case(f"{kind} game {g} turn {states[t].turn_number}",
                            as_the_camera_knows(states[t]), seen,
                            tuple(reversed(end.discard[-3:])), compare_discard=g % 3 != 2))
    return out


def _runs(runs: Sequence[Any]) -> list[str]:
    return [" / ".join(str(m) for m in (r.moves if hasattr(r, "moves") else
                                        (r.first, r.second))) for r in runs]


def answers(case: Case, **shared: Any) -> dict[str, Any]:
    """Each search's answer for each top of the pile: two moves for every top, then three
    for every top (``shared``: passed to each search, e.g. ``tried``)."""
    out: dict[str, Any] = {}
    tops = list(case.tops())
    for kind, search in (("two", explain_two), ("three", explain_three)):
        for view, under in tops:
            runs, complete = search(case.start, view, under=under,
                                    compare_discard=case.compare_discard, budget_s=BUDGET_S,
                                    **shared)
            _check_states(case, view, runs)
            out.setdefault(str(view.discard_top), {}).update(
                {kind: _runs(runs), f"{kind} complete": complete})
    return out


def _check_states(case: Case, view: TableView, runs: Sequence[Any]) -> None:
    """Each run's positions are its moves made in turn, the last the table seen."""
    for r in runs:
        middles = [r.middle] + ([r.rest.middle] if hasattr(r, "rest") else [])
        moves = r.moves if hasattr(r, "moves") else (r.first, r.second)
        state = case.start
        for mv, middle in zip(moves, middles):
            state = state.apply(mv)
            assert state == middle, (case.name, moves)
        assert TableView.of(r.after).same_as(view, with_discard=case.compare_discard)


def _golden() -> dict[str, Any]:
    return dict(json.loads(GOLDEN.read_text()))


def test_each_search_on_its_own_answers_as_before() -> None:
    """Every search on its own (the table's moves tried afresh) gives the golden answer:
    the same runs in the same order, complete."""
    golden = _golden()
    all_cases = cases()
    assert sorted(c.name for c in all_cases) == sorted(golden)
    for case in all_cases:
        assert answers(case) == golden[case.name], case.name


def test_searches_sharing_the_moves_tried_answer_as_each_on_its_own() -> None:
    """The searches of a table for each top of the pile, two moves then three, sharing one
    :class:`MovesTried` as the live referee does, give the golden answers; and so do they
    with a :class:`MovesTried` last used for another table (it forgets that table)."""
    golden = _golden()
    all_cases = cases()
    other = MovesTried()
    for case in all_cases:
        tried = MovesTried()
        assert answers(case, tried=tried) == golden[case.name], case.name
        assert answers(case, tried=tried) == golden[case.name], case.name   # all kept now
        assert answers(case, tried=other) == golden[case.name], case.name
    assert len(all_cases) >= 20 and sum(len(r["three"]) for a in golden.values()
                                        for r in a.values()) > 100


def test_the_searches_sharing_the_moves_tried_make_each_move_once_a_position(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """No move is made twice from the same position by the searches of one table (each top
    of the pile, two moves then three) sharing one :class:`MovesTried`: each top's search
    made the same first moves again, and the three-move search the two-move search's
    second moves."""
    made: Counter[tuple[int, str]] = Counter()
    positions: list[ZarcanaState] = []      # (held: an id is not another position's)
    apply = ZarcanaState.apply

    def counted(self: ZarcanaState, move: Any) -> ZarcanaState:
        positions.append(self)
        made[id(self), str(move)] += 1
        return apply(self, move)

    monkeypatch.setattr(ZarcanaState, "apply", counted)
    case = next(c for c in cases() if c.name.startswith("three") and len(list(c.tops())) == 3)
    tried = MovesTried()
    for search in (explain_two, explain_three):
        for view, under in case.tops():
            search(case.start, view, under=under,
                   compare_discard=case.compare_discard, budget_s=BUDGET_S, tried=tried)
    assert sum(made.values()) > 100
    assert [k for k, n in made.items() if n > 1] == []


def test_a_move_tried_is_checked_against_the_rules_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Trying a move (is it legal, and the position after it) checks it against the rules
    once: it was checked, then made, which checks it again (half the work of a move
    tried, most of those tried being legal)."""
    checked: Counter[tuple[int, str]] = Counter()
    positions: list[ZarcanaState] = []      # (held: an id is not another position's)
    violations = ZarcanaState._violations

    def counted(self: ZarcanaState, move: Any) -> Any:
        positions.append(self)
        checked[id(self), str(move)] += 1
        return violations(self, move)

    monkeypatch.setattr(ZarcanaState, "_violations", counted)
    case = next(c for c in cases() if c.name.startswith("two") and c.compare_discard)
    view, under = next(case.tops())
    explain_two(case.start, view, under=under, budget_s=BUDGET_S)
    assert sum(checked.values()) > 100
    assert [k for k, n in checked.items() if n > 1] == []


def test_the_tables_kept_count_the_changes_as_diff_does() -> None:
    """:class:`MovesTried` tells how far a position's table is from the one seen as
    :func:`diff` does (how many changes), and whether it is the one seen as
    :meth:`TableView.same_as` does, for the positions one move on from each table's start
    and for the tables made by changing one thing."""
    checked = 0
    for case in cases(3):
        for view, _ in case.tops():
            tried = MovesTried()._for(view)
            after = [a for _, a in _legal_results(case.start, candidate_moves(case.start, view),
                                                  view, set())]
            for st in [case.start] + after:
                for cd in (True, False):
                    ours = TableView.of(st)
                    assert tried.gap(st, view, cd) == len(_changes(ours, view, cd))
                    assert tried.same(st, view, cd) == ours.same_as(view, with_discard=cd)
                    checked += 1
    assert checked > 200, checked


def _alchemist_built() -> tuple[ZarcanaState, ZarcanaState]:
    """Red's Alchemist has built twice at 1,0 from a draw pile nobody sees: the game as the
    camera knows it (the first card, covered at once, "?") and as it is (that card
    cups-04), blue to move."""
    from alchemist_support import ALCHEMIST_COVERING, alchemist_start

    known = alchemist_start().apply(ALCHEMIST_COVERING)
    true = known.copy()
    true.board[(1, 0)] = (("swords-05", True), ("cups-04", True), ("wands-07", True))
    return known, true


_ATTACK = "play swords-03 by {}: attack @1,0"


@pytest.mark.parametrize("moves, uncovers", [
    (["blue: " + _ATTACK.format("blue1N@1,1"), "red: reorient red1E@0,0>N"], 0),
    (["blue: reorient blue1N@1,1>E", "red: " + _ATTACK.format("red1E@0,0")], 1),
    (["blue: " + _ATTACK.format("blue1N@1,1"), "red: reorient red1E@0,0>N",
      "blue: reorient blue1N@1,1>E"], 0),
    (["blue: reorient blue1N@1,1>E", "red: " + _ATTACK.format("red1E@0,0"),
      "blue: play major-06: place 1@0,-1"], 1),
    (["blue: play major-06: place 1@0,-1", "red: reorient red1E@0,0>N",
      "blue: " + _ATTACK.format("blue1N@1,1")], 2),
])
@pytest.mark.parametrize("shared", [False, True])
def test_a_card_the_alchemist_covered_is_named_by_the_move_of_a_run_that_uncovers_it(
        moves: list[str], uncovers: int, shared: bool) -> None:
    """Two or three moves seen at once (the pictures between them missed), one of them an
    attack that destroys the Alchemist's top card at 1,0: the card under it, covered at
    once and "?" in the game, is seen, cups-04. The run is found with the card named
    where it lay covered, as :func:`explain` names it for one move (before, the attack's
    position kept "?" where the table showed cups-04: only a wild pair that builds cups-04
    there, which the players did not play, explained the table), and the run says in which
    position it named the card (``named``: that position with the card named, before the
    move that uncovers it; None for the others), so that the live referee records it."""
    from companion.games.zarcana.moves import parse_move

    known, true = _alchemist_built()
    end = true
    for mv in moves:
        end = end.apply(parse_move(mv))
    seen = TableView.of(end)
    under = tuple(reversed(end.discard[-3:]))[1:]
    search = explain_two if len(moves) == 2 else explain_three
    tried = MovesTried() if shared else None
    if shared:          # (the one-move search first, as the live referee makes it)
        explain(known, seen, diagnose=False, tried=tried)
    runs, complete = search(known, seen, under=under, budget_s=BUDGET_S, tried=tried)
    assert complete and runs
    assert _runs(runs)[0] == " / ".join(moves)
    run = runs[0]
    assert run.after == end
    named = list(run.named)
    assert [k for k, n in enumerate(named) if n is not None] == [uncovers]
    middles = [known] + ([run.middle] if len(moves) == 2 else [run.middle, run.rest.middle])
    before = named[uncovers]
    assert before is not None
    assert before.board[(1, 0)] == middles[uncovers].board[(1, 0)][:1] + (
        ("cups-04", True),) + middles[uncovers].board[(1, 0)][2:]
    # the positions before it keep "?" (the session names it back in them), those after it
    # are made from the position named
    assert all(m.board[(1, 0)][1] == (UNKNOWN, True) for m in middles[:uncovers + 1])
    state = before
    for mv, middle in zip(moves[uncovers:], middles[uncovers + 1:] + [run.after]):
        state = state.apply(parse_move(mv))
        assert state == middle


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit(f"usage: python {sys.argv[0]} --write  (writes {GOLDEN})")
    golden = {c.name: answers(c) for c in cases()}
    GOLDEN.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n")
    print(f"{GOLDEN}: {len(golden)} tables, "
          f"{sum(len(r['two']) + len(r['three']) for a in golden.values() for r in a.values())}"
          " runs")
