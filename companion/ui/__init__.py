"""The companion's window (PySide6): live video with the overlay, the game panel, the
controls, the end-of-game scoring, and the replay of a recorded game.

* :mod:`companion.ui.gamemodel` and :mod:`companion.ui.overlay`: what is shown, in plain
  Python (positions, scores, a pyramid's legal moves, overlay shapes in image pixels);
* :mod:`companion.ui.widgets` and :mod:`companion.ui.views`: widgets and the window's layout
  (they only lay out and paint);
* :mod:`companion.ui.controllers`: the controllers that wire the window to the live session
  (:class:`~companion.live.session.LiveSession` fed by a
  :class:`~companion.live.runner.LiveRunner`) or to a recorded game;
* :mod:`companion.ui.app`: opening the window.

Entry points (importing this package does not import Qt; each call does)::

    run_live(runner, *, mat=None, title=None, card_ids=None) -> int
    run_live_window(session, source, observer=None, *, mat=None, deck=None,
                    realtime=None, title=None) -> int
    run_replay(game_path, *, mat=None) -> int

They raise :class:`companion.ui.app.NoDisplayError` (a ``CompanionError``) when there is no
display; :func:`display_problem` says so without raising.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def display_problem() -> str | None:
    """Why no window can be opened here (no display, no PySide6), or None."""
    from companion.ui.app import display_problem as problem

    return problem()


def run_live(runner: Any, *, mat: Any = None, title: str | None = None,
             card_ids: Sequence[str] | None = None) -> int:
    """The live window for a :class:`~companion.live.runner.LiveRunner`, until closed."""
    from companion.ui.app import run_live as run

    return run(runner, mat=mat, title=title, card_ids=card_ids)


def run_live_window(session: Any, source: Any, observer: Any = None, *, mat: Any = None,
                    deck: str | None = None, realtime: bool | None = None,
                    title: str | None = None) -> int:
    """The live window for ``session`` fed from ``source`` (see :mod:`companion.ui.app`)."""
    from companion.ui.app import run_live_window as run

    return run(session, source, observer, mat=mat, deck=deck, realtime=realtime, title=title)


def run_replay(game: Any, *, mat: Any = None) -> int:
    """A recorded game in the read-only window, until closed."""
    from companion.ui.app import run_replay as run

    return run(game, mat=mat)


__all__ = ["display_problem", "run_live", "run_live_window", "run_replay"]
