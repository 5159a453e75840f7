"""Writing a file whole or not at all.

A saved game, an export, a camera file, a colour profile or a card gallery that a crash or
a full disk cuts short would be worse than none: the next load fails, or reads half of what
was meant. So each is written to a temporary file beside its destination and moved into
place in one step (:func:`os.replace`, atomic on one file system); a failed write leaves
the old file as it was and no temporary file behind.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any


@contextmanager
def atomic_file(path: Path, binary: bool = False) -> Iterator[IO[Any]]:
    """``with atomic_file(path) as fh:`` what is written to ``fh`` (text in UTF-8, or bytes
    with ``binary``) becomes ``path`` when the block ends without an error, and nothing
    does otherwise. The folder must exist; an ``OSError`` is raised as it came, for the
    caller to word."""
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=directory)
    try:
        with (os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8")) as fh:
            yield fh
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all (:func:`atomic_file`)."""
    with atomic_file(path) as fh:
        fh.write(text)
