"""The ``companion`` command. Logging is configured here and nowhere else."""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from collections.abc import Sequence
from typing import Any, TextIO, cast

from companion import __version__
from companion.commands import COMMAND_MODULES
from companion.core.errors import CompanionError

log = logging.getLogger("companion")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="companion",
        description="Arcana Table Companion: referee and scorekeeper for tarot-and-pyramid games.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0,
                        help="more logging (-v info, -vv debug)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            # A command module that is listed but not written yet must not take the other
            # commands down with it. Only the module itself being absent is forgiven: a
            # missing dependency *inside* it (exc.name differs) is a real error and raises.
            if exc.name != name:
                raise
            log.warning("command module %s is not available; its command is skipped", name)
            continue
        module.register(sub)
    return parser


def configure_logging(verbosity: int) -> None:
    level = logging.WARNING if verbosity <= 0 else logging.INFO if verbosity == 1 else logging.DEBUG
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")


def hold_closed_streams() -> None:
    """Point a standard stream the shell closed (``2>&-``) at the null device. Else what is
    said on stderr lands in the records (``print`` falls back to stdout when ``sys.stderr``
    is None), and the next file opened takes the closed stream's number, so that what a
    library writes to stderr lands in it: a game's database. A closed stdout stays
    ``sys.stdout is None`` for the commands to refuse (the records would vanish)."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            held = os.open(os.devnull, os.O_RDWR)
            if held != fd:
                os.dup2(held, fd)
                os.close(held)
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 (for the run)


class _StderrGuard:
    """``sys.stderr`` for the run: a write the system refuses (``2>/dev/full``, a reader of
    stderr that has gone) is dropped, and the stream is pointed at the null device for the
    rest of the run. What is said on stderr is never worth the records on stdout: the error
    escaped the command, which the CLI took for stdout's and ended the run on."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def _refused(self) -> None:
        try:
            null = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(null, self._stream.fileno())
            finally:
                os.close(null)
            self._stream.flush()    # (what was held back goes to the null device)
        except (OSError, ValueError, AttributeError):
            self._stream = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except OSError:
            self._refused()
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError:
            self._refused()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def main(argv: Sequence[str] | None = None) -> int:
    hold_closed_streams()
    given = sys.stderr
    sys.stderr = cast(TextIO, _StderrGuard(given))
    try:
        return _main(argv)
    finally:
        sys.stderr = given


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    # a command whose work runs for minutes (training) reports its progress through logging
    # at info: it asks for that level by default (``log_level_floor``), -v or not
    configure_logging(max(args.verbose, getattr(args, "log_level_floor", 0)))
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except CompanionError as exc:
        print(f"companion {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"companion {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader of the output stopped reading (``| head``): nothing is wrong with the
        # work, and there is no one left to tell. Ended as a tool killed by SIGPIPE ends,
        # with the stream pointed away so that the exit's flush says nothing either
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        return 128 + 13
    except OSError as exc:
        # a file or folder the command was pointed at (or writes to) that the system refused:
        # its message names the path
        log.debug("companion %s failed", args.command, exc_info=True)
        print(f"companion {args.command}: error: {_os_words(exc)}", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - a bug still gets a line, not a traceback
        log.debug("companion %s failed", args.command, exc_info=True)
        print(f"companion {args.command}: internal error ({type(exc).__name__}: {exc}); "
              "run it again with -vv for the details", file=sys.stderr)
        return 1


def _os_words(exc: OSError) -> str:
    """An OSError in plain words: ``'seen/x': Not a directory`` instead of ``[Errno 20]``."""
    what = exc.strerror or str(exc)
    if exc.filename is None:
        return what
    name = f"{str(exc.filename)!r}"
    return f"{name}: {what}" if exc.filename2 is None else (
        f"{name} -> {str(exc.filename2)!r}: {what}")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
