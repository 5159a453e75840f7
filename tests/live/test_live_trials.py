"""The searches' outcomes remembered for a still table (companion.live.trials)."""

from __future__ import annotations

import pytest

from companion.live.trials import Trials


class Position:
    """A stand-in for a game position: equal to any other, the same only to itself."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Position)

    __hash__ = None  # type: ignore[assignment]


def test_an_outcome_is_tried_once_per_table_and_position() -> None:
    trials: Trials[str] = Trials()
    made: list[str] = []

    def trial(name: str) -> str:
        made.append(name)
        return name

    here = Position()
    assert trials.outcome(here, ("table", 1), lambda: trial("a")) == "a"
    assert trials.outcome(here, ("table", 1), lambda: trial("b")) == "a"
    assert made == ["a"]
    # (an equal position that is another object: a move taken and taken back, a click)
    assert trials.outcome(Position(), ("table", 1), lambda: trial("c")) == "c"
    assert trials.outcome(here, ("table", 2), lambda: trial("d")) == "d"
    assert made == ["a", "c", "d"] and len(trials) == 1


def test_a_failed_or_cut_short_outcome_is_kept_as_any_other() -> None:
    trials: Trials[tuple[list[int], bool] | None] = Trials()
    here = Position()
    assert trials.outcome(here, "t", lambda: None) is None
    assert trials.outcome(here, "t", lambda: ([1], True)) is None
    assert trials.outcome(here, "u", lambda: ([], False)) == ([], False)
    assert trials.outcome(here, "u", lambda: ([1], True)) == ([], False)


def test_the_last_ones_are_kept_the_latest_used_last() -> None:
    trials: Trials[int] = Trials(keep=2)
    here = Position()
    trials.outcome(here, 1, lambda: 1)
    trials.outcome(here, 2, lambda: 2)
    assert trials.outcome(here, 1, lambda: -1) == 1       # (1 used: 2 is the oldest now)
    trials.outcome(here, 3, lambda: 3)
    assert len(trials) == 2
    assert trials.outcome(here, 1, lambda: -1) == 1
    assert trials.outcome(here, 2, lambda: -2) == -2      # (forgotten: tried anew)
    trials.forget()
    assert len(trials) == 0 and trials.outcome(here, 1, lambda: -1) == -1


def test_a_memory_of_nothing_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one"):
        Trials(keep=0)
