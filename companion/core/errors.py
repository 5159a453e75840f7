"""Two tiers of errors, as python-chess has them.

* :class:`NotationError` (a ``ValueError``) for text that does not parse: a move string, a
  card id, a saved game. It quotes the bad input.
* A :class:`~companion.core.verdict.Verdict` (not an exception) for a move that parses but
  breaks a rule; :class:`IllegalMoveError` wraps one when a caller insists on applying it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from companion.core.verdict import Verdict


class CompanionError(Exception):
    """Base of every error this project raises on purpose."""


class NotationError(CompanionError, ValueError):
    """Input text that does not parse. ``text`` is the offending input."""

    def __init__(self, message: str, text: str = "") -> None:
        super().__init__(message)
        self.text = text


class SavedGameError(CompanionError, ValueError):
    """A saved game that cannot be loaded (corrupt, truncated, wrong game or version)."""


class IllegalMoveError(CompanionError, ValueError):
    """Raised by ``apply`` for a move that breaks the rules; carries the verdict."""

    def __init__(self, verdict: "Verdict") -> None:
        super().__init__(verdict.explain())
        self.verdict = verdict
