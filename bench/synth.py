"""Benchmark of the synthetic scene renderer (issue 3).

Measures scenes per second at 1920x1080 (whole pipeline: scene, camera, render, JPEG,
truth JSON, written to disk) with 1 and with N worker processes, and the disk size per
1,000 images; writes the figures to bench/RESULTS.md under "## Synthetic scenes",
replacing only that section.

    python bench/synth.py [--count 60] [--jobs 2] [--seed 1] [--no-write]
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.results import cpu_name, write_section  # noqa: E402  (after the path insert)

SECTION = "## Synthetic scenes"


def run(count: int, jobs: int, seed: int, size: tuple[int, int], game: str) -> dict[str, Any]:
    from calibration.mat import DEFAULT_MAT
    from vision.synth.deck import load_deck
    from vision.synth.generate import SynthConfig, synthesize

    deck = load_deck()
    tmp = Path(tempfile.mkdtemp(prefix="synth-bench-"))
    try:
        # warm-up (imports, deck decode, noise field) outside the timing
        synthesize(SynthConfig(out=tmp / "warm", count=2, seed=seed + 999, deck=deck,
                               mat=DEFAULT_MAT, size=size, game=game, jobs=1))
        t0 = time.perf_counter()
        s = synthesize(SynthConfig(out=tmp / "run", count=count, seed=seed, deck=deck,
                                   mat=DEFAULT_MAT, size=size, game=game, jobs=jobs))
        dt = time.perf_counter() - t0
        disk = sum(p.stat().st_size for p in (tmp / "run").glob("[0-9]*.*"))
        return {"count": count, "jobs": jobs, "seconds": dt, "per_second": count / dt,
                "mb_per_1000": disk / count * 1000 / 1e6,
                "jpeg_mb_per_1000": s["jpeg_bytes"] / count * 1000 / 1e6}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=60)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--game", default="mixed")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args(argv)
    size = (1920, 1080)
    rows = [run(args.count, 1, args.seed, size, args.game)]
    if args.jobs > 1:
        rows.append(run(args.count, args.jobs, args.seed, size, args.game))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    cmd = "python bench/synth.py " + " ".join(argv if argv is not None else sys.argv[1:])
    lines = [
        SECTION, "",
        f"`{cmd.strip()}` on {os.cpu_count()} cores ({cpu_name()}), Python "
        f"{platform.python_version()}; {args.count} images of 1920x1080, `--game {args.game}`, "
        "hands 0.2, whole pipeline (scene, camera, render, lens distortion, JPEG, truth JSON, "
        f"disk). Load average when done: {load:.2f} (other work shares these cores).", "",
        "| worker processes | scenes / s | s / scene | MB per 1,000 images (JPEG + JSON) |",
        "|---|---|---|---|",
    ]
    for r in rows:
        lines.append(f"| {r['jobs']} | {r['per_second']:.2f} | {1 / r['per_second']:.3f} | "
                     f"{r['mb_per_1000']:.0f} (JPEG {r['jpeg_mb_per_1000']:.0f}) |")
    best = max(r["per_second"] for r in rows)
    lines += ["", f"Goal: at least 5 scenes/s on 2 cores. 10,000 training images take "
                  f"{10000 / best / 60:.0f} min at the best rate above.", ""]
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_write:
        write_section(SECTION, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
