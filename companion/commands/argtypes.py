"""Argument types the sub-commands share, so a bad value reads the same everywhere."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from companion.core.files import given_path

if TYPE_CHECKING:
    from calibration.mat import Mat

T = TypeVar("T", int, float)


def ranged(parse: Callable[[str], T], ok: Callable[[T], bool], words: str
           ) -> Callable[[str], T]:
    """An argument type: ``parse`` the text (int or float), and refuse what ``ok`` does not
    take, saying "expected ``words``"."""
    def check(text: str) -> T:
        try:
            v = parse(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {words}, got {text!r}") from None
        if not ok(v):
            raise argparse.ArgumentTypeError(f"expected {words}, got {text!r}")
        return v
    return check


#: more threads than this only queue on each other (one image took 8.7 s on 100, 71 s on 1000)
MAX_THREADS = 64

#: a whole number of at least 1 (counts, sizes)
positive_int = ranged(int, lambda v: v > 0, "a positive whole number")
#: a whole number of at least 0
count_arg = ranged(int, lambda v: v >= 0, "a whole number of 0 or more")
#: a finite number above 0 (hours, minutes, a rate, a resolution)
positive_float = ranged(float, lambda v: math.isfinite(v) and v > 0, "a positive number")
#: a share: a number from 0 to 1
share_arg = ranged(float, lambda v: 0.0 <= v <= 1.0, "a share from 0 to 1")
#: a random seed numpy takes
seed_arg = ranged(int, lambda v: 0 <= v < 2 ** 32, f"a seed from 0 to {2 ** 32 - 1}")
#: a number of threads
thread_count = ranged(int, lambda v: 1 <= v <= MAX_THREADS, f"1 to {MAX_THREADS} threads")
#: a number of worker processes
process_count = ranged(int, lambda v: 1 <= v <= MAX_THREADS,
                       f"1 to {MAX_THREADS} worker processes")

#: the argument type of a file or folder: kept as typed, for messages to name it so
user_path = given_path


#: pages to print (the mat's, the camera's board): a printer needs no more than 1200 dpi, and
#: an A4 page at 1200 is already 140 megapixels
print_dpi = ranged(int, lambda v: 72 <= v <= 1200, "72 to 1200 dots per inch")


def colour_list(text: str) -> tuple[str, ...]:
    """An argument type: pyramid colours separated by commas (``red,blue``), each named once;
    a colour named twice is a slip (``red,red`` for ``red,blue``), never what was meant."""
    from companion.core.errors import CompanionError
    from companion.core.pieces import Color

    names = [t.strip() for t in text.strip().strip(",").split(",")]    # (red,blue, is fine)
    if not any(names):
        raise argparse.ArgumentTypeError("expected colours separated by commas, e.g. red,blue")
    if not all(names):
        # (``red,,blue``: a colour left out, more often than not; it became red,blue)
        raise argparse.ArgumentTypeError(f"a colour is missing between commas in {text!r}")
    try:
        out = tuple(Color.parse(n).value for n in names)
    except CompanionError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if len(set(out)) != len(out):
        raise argparse.ArgumentTypeError(f"a colour is named twice in {text!r}")
    return out


def player_colours(text: str) -> tuple[str, ...]:
    """An argument type: the players of a Zarcana table by colour (``red,blue,green``)."""
    out = colour_list(text)
    if not 2 <= len(out) <= 6:
        raise argparse.ArgumentTypeError(f"Zarcana is for 2 to 6 players, not {len(out)}")
    return out


def add_mat_options(p: argparse.ArgumentParser, mat_help: str) -> None:
    """``--mat FILE`` and ``--no-mat``, for the commands that read a table."""
    p.add_argument("--mat", type=user_path, default=None, metavar="FILE", help=mat_help)
    p.add_argument("--no-mat", action="store_true",
                   help="there is no printed mat: calibrate from the cards themselves (see "
                        "docs/calibration.md for how well that works)")


def table_mat(args: argparse.Namespace) -> "Mat | None":
    """The mat of ``--mat`` (the standard one by default), or None for ``--no-mat``; both
    given is a usage error."""
    from calibration.mat import load_mat
    from companion.core.errors import CompanionError

    if args.no_mat and args.mat is not None:
        raise CompanionError("--mat and --no-mat contradict each other: give one")
    return None if args.no_mat else load_mat(args.mat)


def add_camera_options(p: argparse.ArgumentParser) -> None:
    """``--intrinsics FILE`` / ``--no-intrinsics`` and ``--colors FILE`` / ``--no-colors``, for
    the commands that read a table through the vision pipeline: the camera file of
    ``companion calibrate-camera`` and the players' colour profile of ``companion
    calibrate-colors``, the saved ones by default (:func:`camera_file`, :func:`colour_profile`)."""
    add_intrinsics_options(p)
    p.add_argument("--colors", type=user_path, default=None, metavar="FILE",
                   help="players' colour profile from 'companion calibrate-colors' (default: "
                        "the saved one, when there is one)")
    p.add_argument("--no-colors", action="store_true", help="ignore the saved colour profile")


def add_intrinsics_options(p: argparse.ArgumentParser) -> None:
    """``--intrinsics FILE`` / ``--no-intrinsics``: the camera file of ``companion
    calibrate-camera``, the saved one by default (:func:`camera_file`)."""
    p.add_argument("--intrinsics", type=user_path, default=None, metavar="FILE",
                   help="camera file from 'companion calibrate-camera' (default: the saved "
                        "one, when there is one)")
    p.add_argument("--no-intrinsics", action="store_true",
                   help="ignore the saved camera file")


def camera_file(args: argparse.Namespace) -> Path | None:
    """The camera file to use: ``--intrinsics``, else the saved one unless
    ``--no-intrinsics`` (None: none, the lens is taken as undistorted)."""
    from calibration.intrinsics import default_camera_path

    return _given_or_saved(args.intrinsics, args.no_intrinsics, default_camera_path,
                           "--intrinsics")


def colour_profile(args: argparse.Namespace) -> Path | None:
    """The colour profile to use: ``--colors``, else the saved one unless ``--no-colors``
    (None: the ten standard colours as shipped)."""
    from vision.pyramids.profile import default_profile_path

    return _given_or_saved(args.colors, args.no_colors, default_profile_path, "--colors")


def _given_or_saved(given: Path | None, ignore: bool, saved: Callable[[], Path], option: str
                    ) -> Path | None:
    if given is not None and ignore:
        from companion.core.errors import CompanionError

        raise CompanionError(f"{option} and --no-{option[2:]} contradict each other: give one")
    if given is not None:
        return given
    if ignore:
        return None
    path = saved()
    if path.is_dir():
        # (left out without a word, the table was read as if never calibrated)
        from companion.core.errors import CompanionError

        raise CompanionError(f"the saved {path.name} {path} is a folder, not a file: remove "
                             f"it, give {option} FILE, or read without it (--no-{option[2:]})")
    return path if path.is_file() else None


def check_output(out: Path, kind: str, is_kind: Callable[[Path], bool],
                 inputs: Sequence[Path] = (), given: bool = True, option: str = "--out"
                 ) -> str | None:
    """Before a command writes ``out`` (a ``kind`` file: a camera file, a card gallery, a
    colour profile; ``given``: named by ``--out``, else the saved one): refuse, as a
    :class:`~companion.core.errors.CompanionError`, to write over one of its ``inputs`` or
    over a file that is not a ``kind`` (a photo named by a slip of the keyboard); return
    what replacing an existing ``kind`` file means to say (None when nothing is there).
    ``is_kind`` recognises the kind loosely: an outdated or damaged file of the kind, which
    the program itself says to make again, is replaced; so is the saved one (not
    ``given``) whatever it holds, the program's own file at the program's own path."""
    import os

    from companion.core.errors import CompanionError

    out = out.expanduser()      # (--out=~/x reaches here with its ~, as the shell left it)
    what = f"{option} {str(out)!r}" if given else f"the saved {kind} {str(out)!r}"
    if not out.exists():
        return None
    if out.is_dir():
        raise CompanionError(f"{what} is a folder; give a file name")
    for p in inputs:
        try:
            same = p.exists() and os.path.samefile(p, out)
        except OSError:
            same = False
        if same:
            raise CompanionError(f"{what} is one of the files it is made from; give another "
                                 f"name for the {kind}")
    if not is_kind(out):
        if not given:
            # the program's own saved file, damaged (cut short, edited by hand): this run
            # is how it is made again, and another name would never be found
            return f"the saved {kind} {out} is damaged: it is replaced"
        raise CompanionError(f"{what} exists and is not a {kind}: it is not written over "
                             "(remove it, or give another name)")
    return f"replacing the {kind} {out}"


def json_with(path: Path, *keys: str) -> bool:
    """Whether ``path`` holds a JSON object with one of ``keys`` (a file of the program's,
    whatever its version or state)."""
    from companion.core.files import JsonTextError, read_json

    try:
        data = read_json(path)
    except (OSError, JsonTextError):
        return False
    return isinstance(data, dict) and any(k in data for k in keys)
