"""``companion export GAME.db --format jsonl|text [--out FILE]``: a recorded game as text.

``jsonl`` is one JSON object per line (a header with the game's metadata, then one object
per event; keyframes are flagged, not included); ``text`` is a readable game record.
A missing or damaged game file is an error (exit code 2); one cut short (an interrupted
copy) gives the events it still holds, says where it stops, and exits with 1.
"""

from __future__ import annotations

import argparse
import io
import logging
import sys

from companion.commands.argtypes import user_path
from companion.core.errors import CompanionError
from companion.core.files import write_text_atomic

log = logging.getLogger(__name__)

FORMATS: tuple[str, ...] = ("text", "jsonl")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "export", help="write a recorded game as a readable record or JSON lines",
        description="Write a recorded game (a .db file from the games folder) as a readable "
                    "game record (text) or as JSON lines (a header, then one object per "
                    "event).")
    p.add_argument("game", type=user_path, metavar="GAME.db", help="the recorded game file")
    p.add_argument("--format", choices=FORMATS, default="text",
                   help="text (a readable record, the default) or jsonl")
    p.add_argument("--out", type=user_path, metavar="FILE",
                   help="write here instead of to standard output")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from companion.recording.export import write_jsonl, write_text
    from companion.recording.store import is_sqlite_file, open_game, side_file_of

    game = open_game(args.game)
    buf = io.StringIO()
    if args.format == "jsonl":
        write_jsonl(game, buf)
    else:
        write_text(game, buf)
    if args.out is None:
        sys.stdout.write(buf.getvalue())
        # (a file cut short gives what it holds, said by open_game; not a whole game)
        return 1 if game.cut_short is not None else 0
    out = args.out.expanduser()
    if out.resolve() == game.path.resolve():
        raise CompanionError(f"--out {args.out}: that is the game file itself")
    side = side_file_of(out)
    if side is not None:
        # SQLite removes or empties it the next time its game is opened or closed: the
        # export would be gone without a word
        raise CompanionError(f"--out {args.out}: that name is the {side[1]} SQLite keeps "
                             f"beside the game file {side[0]}, and SQLite would delete what "
                             "is written there: give another name")
    if is_sqlite_file(out):
        raise CompanionError(f"--out {args.out}: that is a recorded game (or another "
                             "database); an export never writes over one: give a new name")
    try:
        write_text_atomic(out, buf.getvalue())  # an interrupted export leaves no half record
    except OSError as exc:
        raise CompanionError(f"cannot write {args.out}: {exc.strerror or exc}") from None
    log.info("wrote %s (%s, %d events)", out, args.format, len(game.events))
    print(f"wrote {out} ({args.format}, {len(game.moves())} moves)", file=sys.stderr)
    return 1 if game.cut_short is not None else 0
