"""bench/RESULTS.md holds one ``## `` section per benchmark; each replaces only its own."""

from __future__ import annotations

import re
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
HEADER = "# Benchmark results"


def write_section(title: str, text: str, path: Path = RESULTS) -> None:
    """Put ``text`` (which starts with the ``title`` line) in place of the old section
    of that title, or after the others; every other section stays as it was."""
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    if not old.strip():
        old = HEADER + "\n"
    pattern = re.compile(r"^" + re.escape(title) + r"\n.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(old):
        new = pattern.sub(lambda _: text.rstrip() + "\n\n", old)
    else:
        new = old.rstrip() + "\n\n" + text.rstrip() + "\n"
    path.write_text(new.rstrip() + "\n", encoding="utf-8")
