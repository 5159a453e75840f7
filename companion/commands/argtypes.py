"""Argument types the sub-commands share, so a bad value reads the same everywhere."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from calibration.mat import Mat


def positive_int(text: str) -> int:
    """A whole number of at least 1 (counts, sizes)."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text!r}") from None
    if v <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text!r}")
    return v


def positive_float(text: str) -> float:
    """A finite number above 0 (hours, minutes, a rate, a resolution)."""
    import math

    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
    if not (math.isfinite(v) and v > 0):
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return v


def share_arg(text: str) -> float:
    """A share: a number from 0 to 1."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a share from 0 to 1, got {text!r}") from None
    if not 0.0 <= v <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a share from 0 to 1, got {text!r}")
    return v


def count_arg(text: str) -> int:
    """A whole number of at least 0."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number of 0 or more, got {v}")
    return v


#: more threads than this only queue on each other (one image took 8.7 s on 100, 71 s on 1000)
MAX_THREADS = 64


def thread_count(text: str) -> int:
    """A number of threads, 1 to :data:`MAX_THREADS`."""
    v = positive_int(text)
    if v > MAX_THREADS:
        raise argparse.ArgumentTypeError(f"expected 1 to {MAX_THREADS} threads, got {v}")
    return v


def seed_arg(text: str) -> int:
    """A random seed: a whole number from 0 to 2**32 - 1 (what numpy takes)."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number as the seed, "
                                         f"got {text!r}") from None
    if not 0 <= v < 2 ** 32:
        raise argparse.ArgumentTypeError(f"expected a seed from 0 to {2 ** 32 - 1}, got {v}")
    return v


def add_mat_options(p: argparse.ArgumentParser, mat_help: str) -> None:
    """``--mat FILE`` and ``--no-mat``, for the commands that read a table."""
    from pathlib import Path

    p.add_argument("--mat", type=Path, default=None, metavar="FILE", help=mat_help)
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
