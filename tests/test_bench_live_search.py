"""bench/live_search.py's tables are read by the live session as the bench means them: the
position it starts from is the table's, and its cases are the kinds it says."""

from __future__ import annotations

import pytest


def test_the_start_of_a_case_reads_as_no_change_and_its_kinds_are_judged() -> None:
    from bench.live_search import KINDS, MAT, make_cases, record_of, time_case
    from companion.games.zarcana.table import TableView
    from companion.live.session import LiveSession
    from companion.live.tablestate import Lattice

    cases = make_cases(1, 0)
    assert sorted({c.kind for c in cases}) == sorted(KINDS)
    case = cases[0]
    s = LiveSession("zarcana", edition=case.start.settings.edition,
                    players=[c.value for c in case.start.players], mat=MAT,
                    initial_state=case.start, lattice=Lattice(case.origin))
    start = TableView.of(case.start)
    ev = s.observe(record_of(start, case.origin, case.start.discard[-1:]), frame=0)
    who = case.start.to_move
    assert who is not None
    assert [e.text for e in ev] == [f"no change; {who.value} to move"], ev
    for c in cases:
        timed = time_case(c)
        assert timed.verdict_s > 0 and timed.said
        assert timed.search_s <= timed.verdict_s


def test_the_bench_runs_without_writing_its_results(capsys: pytest.CaptureFixture[str]) -> None:
    from bench.live_search import KINDS, PER_GAME, main

    assert main(["--games", "1", "--repeat", "1", "--no-write"]) == 0
    out = capsys.readouterr().out
    assert f"| all | {PER_GAME * len(KINDS)} |" in out and "tables in" in out
