"""Live companion figures: time from a settled frame to the verdict, and CPU while idle.

1. Verdict latency: the bundled sample game (``sample_images/zarcana``) runs through the live
   loop exactly as ``companion demo --headless`` does (settle -> vision pipeline -> session;
   the moves the camera cannot see are clicked from the script). For every settled frame
   the time from the settled decision to the session's verdict (pipeline + matching) is
   taken; median and 90th percentile. Run several rounds for more samples.
2. Idle CPU: a 30 fps video of a still table (a sample frame, 1600x900, written as MJPG and
   as mp4v) replayed in real time through capture and settle detection; nothing moves, so
   the pipeline never runs. CPU time of the process / wall time, as a share of one core.

    python bench/live.py [--rounds 3] [--idle-seconds 10] [--observations vision|truth]

Goals (issue 5): verdict under 300 ms median; idle under 15 % of one core.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import cv2  # noqa: E402
import numpy as np  # noqa: E402

from bench.results import write_section  # noqa: E402


def verdict_latency(rounds: int, observations: str) -> tuple[list[float], str, bool]:
    import json

    from calibration.mat import load_mat
    from companion.commands.demo import find_sample_game, make_observer, play_order
    from companion.live.capture import FolderSource, Frame
    from companion.live.runner import LiveRunner
    from companion.live.session import LiveSession

    folder = find_sample_game(None)
    script = json.loads((folder / "game.json").read_text(encoding="utf-8"))
    mat = load_mat(folder / "mat.json")
    which, observer, _ = make_observer(observations, mat, None)
    times: list[float] = []
    right = True
    for r in range(rounds):
        session = LiveSession(script["game"], edition=script["edition"],
                              players=script["players"],
                              settings=script.get("settings") or None, mat=mat)
        clicks = {f"{k:04d}": e["move"] for k, e in enumerate(script["moves"], start=1)
                  if e.get("visible") is False}

        def click(frame: Frame, session: LiveSession = session,
                  clicks: dict[str, str] = clicks) -> None:
            move = clicks.pop(Path(frame.name).stem, None)
            if move is not None:
                session.manual(move)

        runner = LiveRunner(FolderSource(folder, files=play_order(folder)), session, observer,
                            before_observe=click)
        stats = runner.run()
        times += stats.verdict_ms
        final = {c: v for c, v in session.scores().items()}
        right = right and session.is_over and final == script.get("final_scores")
        print(f"round {r + 1}/{rounds}: {len(stats.verdict_ms)} verdicts, median "
              f"{statistics.median(stats.verdict_ms):.0f} ms; final scores {final}", flush=True)
    return times, which, right


def idle_cpu(seconds: float) -> list[tuple[str, float, int]]:
    from companion.live.capture import VideoSource
    from companion.live.runner import LiveRunner
    from companion.live.session import LiveSession

    sample = Path("sample_images/zarcana/0005.jpg")
    frame = cv2.imread(str(sample))
    if frame is None:
        raise SystemExit(f"bench/live.py: cannot read {sample} (run it from the repository)")
    calls = {"n": 0}

    def observer(image: np.ndarray, name: str) -> dict[str, Any]:
        calls["n"] += 1   # the still table must not reach the pipeline after the first look
        return {"image": name, "calibrated": False, "reason": "bench", "cards": [],
                "pyramids": []}

    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for fourcc, ext in (("MJPG", "avi"), ("mp4v", "mp4")):
            path = Path(tmp) / f"still.{ext}"
            w = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*fourcc), 30.0,
                                (frame.shape[1], frame.shape[0]))
            rng = np.random.default_rng(0)
            for _ in range(int(seconds * 30)):
                # sensor noise, so the codec and the settle detector see a real still camera
                noise = rng.integers(0, 3, tuple(frame.shape), dtype=np.uint8)
                noisy = cv2.add(frame, noise)
                w.write(noisy)
            w.release()
            session = LiveSession("zarcana", edition="looney", players=["red", "blue", "green"])
            calls["n"] = 0
            runner = LiveRunner(VideoSource(str(path), realtime=True), session, observer)
            c0, t0 = time.process_time(), time.perf_counter()
            runner.run()
            cpu = time.process_time() - c0
            wall = time.perf_counter() - t0
            share = 100.0 * cpu / wall
            print(f"idle {fourcc}: {share:.1f} % of one core over {wall:.1f} s "
                  f"({calls['n']} pipeline call(s))", flush=True)
            out.append((fourcc, share, calls["n"]))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--idle-seconds", type=float, default=10.0)
    ap.add_argument("--observations", choices=["vision", "truth"], default="vision")
    args = ap.parse_args()
    cv2.setNumThreads(2)
    times, which, right = verdict_latency(args.rounds, args.observations)
    idle = idle_cpu(args.idle_seconds)
    med = statistics.median(times)
    p90 = float(np.percentile(times, 90))
    lines = [
        f"Sample game through the live loop ({which} observations), {args.rounds} round(s), "
        f"{len(times)} settled frames; game ended with the true final scores: "
        f"{'yes' if right else 'NO'}.",
        "",
        "| figure | value | goal |",
        "|---|---|---|",
        f"| settled frame -> verdict, median | {med:.0f} ms | < 300 ms |",
        f"| settled frame -> verdict, 90th percentile | {p90:.0f} ms | |",
        f"| settled frame -> verdict, max | {max(times):.0f} ms | |",
    ]
    for fourcc, share, n in idle:
        lines.append(f"| idle CPU, 30 fps {fourcc} video of a still table | {share:.1f} % of "
                     f"one core ({n} pipeline call) | < 15 % |")
    text = "\n".join(lines)
    print(text)
    cmd = ("python bench/live.py " + " ".join(sys.argv[1:])).strip()
    load = os.getloadavg()[0]
    write_section("## Live companion", f"## Live companion\n\nCommand: `{cmd}`  \n"
                  f"{os.cpu_count()} CPUs, cv2 and onnxruntime on 2 threads; load average "
                  f"when done {load:.2f} (other work shares these cores).\n\n{text}\n")


if __name__ == "__main__":
    main()
