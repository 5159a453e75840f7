"""How long the pyramid finder's heat map takes a view, on this machine's CPU.

Reads a sample frame through the pipeline once to take the network's input as the finder
gives it (its top-down view of the mat, shrunk and padded: ``vision.pyramids.heat.
heat_input``), then times ``pyramids-heat.int8.onnx`` (the file the finder runs) and
``pyramids-heat.onnx`` on it, on one onnxruntime thread and on two: the median of
``--runs`` readings after 20 not counted, wall time and the process's CPU time a reading.
On shared cores the wall time is the others' work as much as the network's: run it with
the machine as idle as it can be (the figures in ``models/pyramids-heat.md`` say how).
Writes the figures as "## Heat map speed" to bench/RESULTS.md, replacing only that section
(``--no-write``: print only).

    python bench/heat_speed.py [--runs 400] [--frame sample_images/zarcana/0005.jpg]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.results import cpu_name, write_section  # noqa: E402  (after the path insert)

SECTION = "## Heat map speed"

MODELS = ("pyramids-heat.int8.onnx", "pyramids-heat.onnx")
THREADS = (1, 2)
WARM_UP = 20


def finder_input(frame: Path) -> np.ndarray:
    """The heat network's input for ``frame`` as the finder makes it (the frame's folder's
    mat.json, where there is one)."""
    import cv2

    from calibration.mat import load_mat
    from vision.pipeline import TablePipeline
    from vision.pyramids import heat

    image = cv2.imread(str(frame))
    if image is None:
        raise SystemExit(f"heat_speed: {frame}: not an image that can be read")
    seen: list[np.ndarray] = []
    made = heat.heat_input

    def kept(*args: Any, **kw: Any) -> np.ndarray:
        seen.append(made(*args, **kw))
        return seen[-1]

    mat_file = frame.parent / "mat.json"
    heat.heat_input = kept
    try:
        with TablePipeline(mat=load_mat(mat_file if mat_file.is_file() else None), threads=1,
                           pyramid_process=False) as pipeline:
            pipeline.observe(image, frame.name)
    finally:
        heat.heat_input = made
    if not seen:
        raise SystemExit(f"heat_speed: {frame}: the finder did not read it (no mat found?)")
    return seen[0]


def timed(name: str, threads: int, x: np.ndarray, runs: int) -> tuple[float, float]:
    """(median wall ms, median CPU ms) of ``runs`` readings of ``x`` by model ``name``."""
    from models import model_path, open_onnx

    session, _, _ = open_onnx(model_path(name), threads)
    feed = {session.get_inputs()[0].name: x}
    for _ in range(WARM_UP):
        session.run(None, feed)
    wall, cpu = [], []
    for _ in range(runs):
        c0, t0 = time.process_time(), time.perf_counter()
        session.run(None, feed)
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return float(np.median(wall)) * 1e3, float(np.median(cpu)) * 1e3


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=400, help="readings timed (default 400)")
    ap.add_argument("--frame", type=Path, default=ROOT / "sample_images" / "zarcana" / "0005.jpg",
                    help="the frame whose view is read (default: a sample game's)")
    ap.add_argument("--no-write", action="store_true", help="print only")
    args = ap.parse_args(argv)
    x = finder_input(args.frame)
    load = os.getloadavg()[0]
    lines = [f"input {tuple(x.shape)}; {os.cpu_count()} CPUs; load average {load:.1f} before"]
    print(lines[0])
    rows = []
    for name in MODELS:
        for threads in THREADS:
            wall, cpu = timed(name, threads, x, args.runs)
            print(f"{name} on {threads} thread(s): median {wall:.1f} ms a view "
                  f"(CPU {cpu:.1f} ms), {args.runs} runs")
            rows.append(f"| {name} | {threads} | {wall:.1f} ms | {cpu:.1f} ms |")
    after = os.getloadavg()[0]
    print(f"load average {after:.1f} after")
    cmd = "python bench/heat_speed.py " + " ".join(argv if argv is not None else sys.argv[1:])
    text = "\n".join([
        SECTION,
        "",
        f"Command: `{cmd.strip()}`; {cpu_name()}, {os.cpu_count()} cores, "
        f"{platform.machine()}; load average {load:.1f} before, {after:.1f} after.",
        "",
        f"The heat map's network on the finder's input {tuple(x.shape)}: median of "
        f"{args.runs} readings each.",
        "",
        "| file | threads | wall | CPU |",
        "|---|---|---|---|",
        *rows,
    ])
    if not args.no_write:
        write_section(SECTION, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
