"""bench/RESULTS.md holds one ``## `` section per benchmark; each replaces only its own."""

from __future__ import annotations

import platform
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


def library_versions() -> str:
    """The versions of the libraries that decide the figures (OpenCV draws the renders and
    reads the markers and cards, onnxruntime runs the networks): a figure from another
    stack is not the same measurement (OpenCV 5 answers some calls differently from 4)."""
    from importlib.metadata import PackageNotFoundError, version

    parts = []
    for label, dist in (("numpy", "numpy"), ("OpenCV", "opencv-python-headless"),
                        ("onnxruntime", "onnxruntime")):
        try:
            parts.append(f"{label} {version(dist)}")
        except PackageNotFoundError:
            parts.append(f"{label} not installed as {dist}")
    return ", ".join(parts)


def cpu_name() -> str:
    """The CPU's model and its widest vector instructions that matter to onnxruntime (int8
    kernels differ with VNNI, AVX-512 and AVX2): timings from different CPUs are not
    comparable, and the int8 heat map's speed depends on them (models/pyramids-heat.md)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return platform.processor() or "unknown CPU"
    name = "unknown CPU"
    flags: set[str] = set()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "model name" and name == "unknown CPU":
            name = value.strip()
        elif key.strip() == "flags" and not flags:
            flags = set(value.split())
    simd = ("AVX-512 VNNI" if "avx512_vnni" in flags else "AVX-VNNI" if "avx_vnni" in flags
            else "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "")
    return f"{name} ({simd})" if simd else name
