"""``companion replay GAME.db``: reopen a recorded game in the window and step through it.

The window is read-only: the move log (every recorded event: moves, overrides, corrections,
flagged illegal changes), back and forward, the keyframe of each move where one was recorded
with the overlay of the observation that confirmed it, the scores and the chart. The moves
are replayed through the engine and checked against the stored positions first; a file that
cannot be read, or a game that does not replay, gives a clear error.
"""

from __future__ import annotations

import argparse
from typing import Any

from companion.commands.argtypes import user_path
from companion.core.errors import CompanionError


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "replay", help="reopen a recorded game in the window and step through it",
        description="Reopen a recorded game (a .db file from `companion run` or `companion "
                    "demo`) in the window, read-only, and step through its moves.")
    p.add_argument("game", type=user_path, metavar="GAME.db", help="the recorded game file")
    p.add_argument("--mat", type=user_path, default=None, metavar="FILE",
                   help="the calibration mat file the game was played on, for the overlay "
                        "(default: the one the game file names, else the standard mat)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from companion.ui.app import NoDisplayError, display_problem

    # read the file first: a damaged file is reported even where no window can open
    from calibration.mat import load_mat
    from companion.recording.store import open_game

    game = open_game(args.game)
    refuse_other_rules(game)
    # (none given: the mat the game file names, else the standard one)
    mat = load_mat(args.mat) if args.mat is not None else None
    problem = display_problem(f"`companion export {args.game} --format text` writes the "
                              "game as text without a window")
    if problem is not None:
        raise NoDisplayError(problem)
    from companion.ui.app import run_replay

    return run_replay(game, mat=mat)


def refuse_other_rules(game: Any) -> None:
    """Refuse a game whose header names a game or edition this version has no rules for
    (export reads such a file on purpose): the window showed it empty under an alert,
    or a camera game's moves under the rules of its stored positions, the header unsaid.
    A player asking to step through a game expects it shown as played, or told why not."""
    from companion.games.zarcana.rules import Edition
    from companion.recording.store import RecordingError, check_replayable

    text = f"`companion export {game.path} --format text` writes what it holds as text"
    try:
        check_replayable(game)      # (the replay's own check: one place, one wording)
    except RecordingError as exc:
        raise CompanionError(f"{exc} ({text})") from None
    try:
        Edition.parse(game.edition)
    except ValueError as exc:
        raise CompanionError(f"{game.path}: {exc}; the game cannot be replayed "
                             f"({text})") from None


__all__ = ["refuse_other_rules", "register", "run"]
