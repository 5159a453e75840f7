"""Benchmark of the classical pyramid finder (vision/pyramids) on rendered scenes.

Renders seeded random Zarcana scenes (1920x1080, no hands; seed ``--seed``, never the colour
table's training seed), calibrates from the markers with the truth camera intrinsics, runs
:class:`vision.pyramids.PyramidFinder` and matches finds to the truth greedily by distance
(within 12 mm of ``base_center_mm``). Truth pyramids less than half visible or outside the
frame are "don't care": neither missed when not found nor false when found.

Reports detection recall / precision, and among matched pyramids the accuracy of colour,
pips, upright-or-lying and (lying ones) pointing within 45 degrees; per colour and per pose;
the median time per image of the finder alone (rectify + segment + fit) and of the marker
calibration. Writes "## Pyramids (classical prototype)" in bench/RESULTS.md, replacing only
that section.

    python bench/pyramids.py [--scenes 100] [--seed 7] [--no-write]
"""

from __future__ import annotations

import argparse
import logging
import math
import os
import platform
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.results import write_section  # noqa: E402  (after the path insert)

SECTION = "## Pyramids (classical prototype)"
MATCH_MM = 12.0
POINT_TOL_DEG = 45.0


def _angle_diff(a: float, b: float) -> float:
    return abs((a - b + 180.0) % 360.0 - 180.0)


def match(truth: list[dict[str, Any]], finds: list[dict[str, Any]]
          ) -> tuple[list[tuple[int, int]], list[int], list[int]]:
    """Greedy nearest pairs within MATCH_MM: (pairs, unmatched truth, unmatched finds)."""
    pairs = []
    for ti, t in enumerate(truth):
        for fi, f in enumerate(finds):
            d = math.dist(t["base_center_mm"], f["base_center_mm"])
            if d <= MATCH_MM:
                pairs.append((d, ti, fi))
    used_t: set[int] = set()
    used_f: set[int] = set()
    out = []
    for _, ti, fi in sorted(pairs):
        if ti not in used_t and fi not in used_f:
            used_t.add(ti)
            used_f.add(fi)
            out.append((ti, fi))
    return (out, [i for i in range(len(truth)) if i not in used_t],
            [i for i in range(len(finds)) if i not in used_f])


def run(scenes: int, seed: int) -> dict[str, Any]:
    from calibration.mat import DEFAULT_MAT
    from vision.pyramids import PyramidFinder
    from vision.pyramids.colors import TRAIN_SEED
    from vision.pyramids.train_colors import truth_calibration
    from vision.synth.deck import load_deck, shared_dir
    from vision.synth.generate import make_example

    if seed == TRAIN_SEED:
        raise SystemExit(f"seed {seed} is the colour table's training seed: pick another")
    sd = shared_dir()
    if sd is None:
        raise SystemExit("shared/decks not found (set ARCANA_SHARED)")
    deck = load_deck(sd / "decks" / "rws-tarot")
    mat = DEFAULT_MAT
    finder = PyramidFinder(mat)
    rows: list[dict[str, Any]] = []   # one per counted truth pyramid
    fps: list[dict[str, Any]] = []    # false finds
    t_find: list[float] = []
    t_cal: list[float] = []
    uncal = 0
    uncal_pyr = 0
    for i in range(scenes):
        image, truth, _ = make_example(seed, i, deck, mat, "zarcana", hands=0.0,
                                       size=(1920, 1080))
        t0 = time.perf_counter()
        calib = truth_calibration(image, truth, mat)
        t1 = time.perf_counter()
        finds = [f.to_dict() for f in finder.find(image, calib)] if calib.calibrated else []
        t2 = time.perf_counter()
        if not calib.calibrated:
            # no marker in sight (cards over them, or outside the frame): nothing can be
            # placed in the table frame; those scenes are left out of every figure
            uncal += 1
            uncal_pyr += sum(p.get("visible", 1.0) >= 0.5 for p in truth["pyramids"])
            continue
        t_cal.append(t1 - t0)
        t_find.append(t2 - t1)
        tp = truth["pyramids"]
        pairs, _, extra = match(tp, finds)
        care = [p.get("visible", 1.0) >= 0.5 and p.get("in_frame", True) for p in tp]
        by_t = dict(pairs)
        for ti, t in enumerate(tp):
            if not care[ti]:
                continue
            f = finds[by_t[ti]] if ti in by_t else None
            rows.append({"scene": i, "truth": t, "find": f})
        for fi in extra:
            fps.append({"scene": i, "find": finds[fi]})
    return {"rows": rows, "fps": fps, "t_find": t_find, "t_cal": t_cal, "uncal": uncal, "uncal_pyr": uncal_pyr,
            "scenes": scenes, "seed": seed}


def _pct(n: int, d: int) -> str:
    return f"{100.0 * n / d:.1f}%" if d else "n/a"


def stats(rows: list[dict[str, Any]], n_fp: int | None) -> dict[str, str]:
    found = [r for r in rows if r["find"] is not None]
    lying = [r for r in found if not r["truth"]["upright"]]
    point_ok = sum(1 for r in lying if not r["find"]["upright"] and _angle_diff(
        r["find"]["pointing_deg"], r["truth"]["pointing_deg"]) <= POINT_TOL_DEG)
    out = {
        "truth": str(len(rows)),
        "recall": _pct(len(found), len(rows)),
        "color": _pct(sum(r["find"]["color"] == r["truth"]["color"] for r in found), len(found)),
        "pips": _pct(sum(r["find"]["pips"] == r["truth"]["pips"] for r in found), len(found)),
        "upright": _pct(sum(r["find"]["upright"] == r["truth"]["upright"] for r in found),
                        len(found)),
        "pointing": _pct(point_ok, len(lying)),
        "err_mm": (f"{np.median([math.dist(r['find']['base_center_mm'], r['truth']['base_center_mm']) for r in found]):.1f}"
                   if found else "n/a"),
    }
    if n_fp is not None:
        out["precision"] = _pct(len(found), len(found) + n_fp)
    return out


def report(res: dict[str, Any], cmd: str) -> str:
    rows, fps = res["rows"], res["fps"]
    allst = stats(rows, len(fps))
    head = ("| group | truth pyramids | recall | colour | pips | upright/lying | pointing <= 45° "
            "(lying) | median position error mm |")
    sep = "|---|---|---|---|---|---|---|---|"

    def line(name: str, s: dict[str, str]) -> str:
        return (f"| {name} | {s['truth']} | {s['recall']} | {s['color']} | {s['pips']} | "
                f"{s['upright']} | {s['pointing']} | {s['err_mm']} |")

    groups: list[tuple[str, list[dict[str, Any]]]] = [("all", rows)]
    groups.append(("all but white and clear",
                   [r for r in rows if r["truth"]["color"] not in ("white", "clear")]))
    groups += [("upright" if up else "lying", [r for r in rows if r["truth"]["upright"] == up])
               for up in (True, False)]
    groups += [(f"{p} pip{'s' if p > 1 else ''}", [r for r in rows if r["truth"]["pips"] == p])
               for p in (1, 2, 3)]
    from vision.pyramids.colors import COLORS
    groups += [(c, [r for r in rows if r["truth"]["color"] == c]) for c in COLORS]
    fp_col: dict[str, int] = defaultdict(int)
    for f in fps:
        fp_col[f["find"]["color"]] += 1
    tf = np.array(res["t_find"]) * 1000
    tc = np.array(res["t_cal"]) * 1000
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [
        SECTION, "",
        f"Command: `{cmd}`  ",
        (f"Date: {time.strftime('%Y-%m-%d')}; Python {platform.python_version()}; "
         f"{os.cpu_count()} CPUs (shared; load average {load:.2f} when done)  "),
        (f"Scenes: {res['scenes']} random Zarcana scenes (`vision.synth.generate.make_example`, "
         f"seed {res['seed']}), 1920x1080, no hands; calibrated from the markers with the truth "
         f"intrinsics; {res['uncal']} scenes found no marker (no calibration) and are left out "
         f"with their {res['uncal_pyr']} pyramids. The colour table was fitted on 200 other "
         "renders (seed 90001, `python -m vision.pyramids.train_colors`); its thresholds were "
         "set on 25 dev renders (seed 4242). Neither seed is benchmarked.  "),
        (f"A find matches a truth pyramid within {MATCH_MM:.0f} mm of `base_center_mm` (greedy, "
         "nearest first); truth pyramids < 50% visible are ignored. Attribute columns are "
         "among matched pyramids; pointing among matched lying ones (called upright = wrong).  "),
        (f"**Detection: recall {allst['recall']}, precision {allst['precision']}** "
         f"({len(fps)} false finds: "
         + ", ".join(f"{c} {n}" for c, n in sorted(fp_col.items(), key=lambda kv: -kv[1]))
         + ").  "),
        (f"Time per image (1920x1080, one thread): finder median {np.median(tf):.0f} ms "
         f"(p90 {np.percentile(tf, 90):.0f} ms), marker calibration median "
         f"{np.median(tc):.0f} ms."),
        "", head, sep, *[line(n, stats(g, None)) for n, g in groups if g], "",
        ("Reading it: colour, upright/lying and pointing are good wherever a pyramid is found; "
         "detection is the weak part. White and clear are (almost) never found (their Lab bins are "
         "the card borders, paper and the table seen through them), black only in part. On "
         "the dev scenes (seed 4242), coloured misses were about half pyramids of one cell "
         "touching (one merged blob fits no single silhouette), about 40% plastic whose pixels "
         "lose to same-hued card art or to the image's own histogram (several yellow pyramids "
         "on yellow cards), and a few finds 12-25 mm off in scenes calibrated from few markers. "
         "False finds are card-art patches (yellow, red, orange) that happen to fit a "
         "silhouette. Pips suffer from the blob's blurred edge at 0.5-1 px/mm."),
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenes", type=int, default=100)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    res = run(args.scenes, args.seed)
    cmd = "python bench/pyramids.py" + (f" --scenes {args.scenes}" if args.scenes != 100 else "") \
        + (f" --seed {args.seed}" if args.seed != 7 else "")
    text = report(res, cmd)
    print(text)
    if not args.no_write:
        write_section(SECTION, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
