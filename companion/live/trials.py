"""Outcomes of the referee's searches remembered for a table that stands still.

A table no single move explains is searched for the moves that may have been seen at once
(up to a second or two of CPU time); the camera sends the same table again on every picture
while nobody moves. :class:`Trials` keeps the outcome of the last searches, each under what
it depends on: the table as read (the key: the view, the pile seen, the settings that
change the outcome) and the game's position searched from, by identity (a move taken, an
undo, a click gives a new position object; a position equal to it is not enough, as the
outcome is that object's to reuse). A search cut short by its budget is kept too: its budget
is CPU time, so the same table cuts it short again.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class Trials(Generic[V]):
    """The outcomes of the last ``keep`` trials, each under its key and position."""

    def __init__(self, keep: int = 1) -> None:
        if keep < 1:
            raise ValueError(f"Trials keeps at least one outcome, not {keep}")
        self.keep = keep
        self._kept: list[tuple[Hashable, object, V]] = []

    def outcome(self, position: object, key: Hashable, trial: Callable[[], V]) -> V:
        """The outcome kept for ``key`` from ``position`` (the very object), else that of
        ``trial()``, kept (the oldest kept forgotten past :attr:`keep`)."""
        for i, (k, p, v) in enumerate(self._kept):
            if p is position and k == key:
                # (the latest used last: a table seen by turns keeps both)
                self._kept.append(self._kept.pop(i))
                return v
        v = trial()
        self._kept = self._kept[-(self.keep - 1):] if self.keep > 1 else []
        self._kept.append((key, position, v))
        return v

    def forget(self) -> None:
        """Forget every outcome kept (the next trial is made anew)."""
        self._kept.clear()

    def __len__(self) -> int:
        return len(self._kept)
