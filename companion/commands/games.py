"""``companion games [--dir DIR]``: the recorded games, one line each.

A file that cannot be read is listed as broken with the reason and the others still list;
the exit code is then 1.
"""

from __future__ import annotations

import argparse
import sys

from companion.commands.argtypes import user_path

#: Exit code when some file in the folder could not be read.
EXIT_BROKEN = 1


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "games", help="list the recorded games",
        description="List the recorded games: file, start time, game and edition, players, "
                    "moves, finished or not, final scores. Damaged files are listed as "
                    "broken (exit code 1).")
    p.add_argument("--dir", type=user_path, default=None, metavar="DIR",
                   help="the games folder (default: $XDG_DATA_HOME/arcana-companion/games)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from companion.core.files import folder_problem
    from companion.recording.export import format_scores
    from companion.recording.store import BrokenGame, EmptyGame, default_games_dir, list_games

    folder = (args.dir if args.dir is not None else default_games_dir()).expanduser()
    if args.dir is not None and not folder.is_dir():
        what = (folder_problem(folder) or (f"{folder} is not a folder" if folder.exists()
                                           else f"{folder} does not exist"))
        print(f"companion games: error: {what}", file=sys.stderr)
        return 2
    entries = list_games(folder)
    if not entries:
        print(f"no recorded games in {folder}")
        return 0
    broken = [e for e in entries if isinstance(e, BrokenGame)]
    empty = [e for e in entries if isinstance(e, EmptyGame)]
    good = len(entries) - len(broken) - len(empty)
    print(f"{good} recorded game(s) in {folder}"
          + (f", {len(broken)} broken file(s)" if broken else "")
          + (f", {len(empty)} empty file(s)" if empty else "") + ":")
    width = max(len(e.path.name) for e in entries)
    for e in entries:
        name = e.path.name.ljust(width)
        if isinstance(e, BrokenGame):
            print(f"  {name}  BROKEN: {e.reason}")
            continue
        if isinstance(e, EmptyGame):
            # (a companion stopped before the deal; or a copy of a game file that an older
            # companion was writing, made without its log: then the moves are in that log)
            print(f"  {name}  empty: no game in the file itself (a companion stopped "
                  f"before the deal; or a copy made without its {e.path.name}-wal file of "
                  "a game an older companion was recording: that log holds the moves, copy "
                  "it beside this file)")
            continue
        status = "finished" if e.finished else "not finished"
        line = (f"  {name}  {e.created.strftime('%Y-%m-%d %H:%M')}  {e.game} {e.edition}  "
                f"{', '.join(e.players)}  {e.moves} move(s)  {status}")
        if e.scores is not None:
            line += f"  {format_scores(e.scores, e.players)}"
        print(line)
    if broken:
        print(f"companion games: {len(broken)} file(s) could not be read", file=sys.stderr)
        return EXIT_BROKEN
    return 0
