"""Benchmark of the table pipeline without a printed mat (``TablePipeline(mat=None)``).

The same held-out scenes as bench/vision.py's ``ordinary`` group (its renderer, seeds
>= 900000, 1920x1080, JPEG), drawn with no markers on the table (a mat with
``printed=False``). Every image is a new camera, given its lens as bench/vision.py does.
The cards alone give the table frame, whose origin and axes are the calibration's own, so
each record is first moved into the truth's frame by the best rigid transform fitted on the
centres of the cards it named right (fitted again without the worst pair while one is more
than 25 mm off: a card named wrong pairs with its name's true place, elsewhere on the
table, and alone dragged every card of its image off before 2026-11-28). That alignment is
fitted on the answers themselves,
so these figures flatter position errors a little. They are then scored exactly as
bench/vision.py scores: cards within 25 mm, pyramids within 12 mm. An image whose record
names fewer than two cards right cannot be aligned and counts as failed.

Also measured: the error of the aligned card centres (median and 90th percentile, mm); the
time of the first frame of a camera (a full fit), and of the next frame of the same still
camera (the fit reused).

    python bench/no_mat.py [--count 60] [--seed 900000] [--no-write]

Writes "## Vision without a mat" to bench/RESULTS.md, replacing only that section.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.calibration import _rigid  # noqa: E402  (after the path insert)
from bench.results import write_section  # noqa: E402
from bench.vision import render_case, score, symmetric_ids  # noqa: E402

SECTION = "## Vision without a mat"
#: a pair of the alignment this far off after the fit is dropped and the fit made again
#: (bench/vision.py's card match distance)
OUTLIER_MM = 25.0


def align(record: dict[str, Any], truth: dict[str, Any]) -> tuple[dict[str, Any], list[float]] | None:
    """The record moved into the truth's frame, and the aligned card-centre errors (mm);
    None when fewer than two cards are named right (nothing to align on)."""
    flat: dict[str, np.ndarray] = {}
    for c in truth["cards"]:
        if c["id"] != "back" and c.get("height_mm", 0.0) < 3.0:
            flat.setdefault(c["id"], np.array(c["center_mm"], np.float64))
    pairs = [(np.array(c["center_mm"], np.float64), flat[c["id"]]) for c in record["cards"]
             if c["id"] in flat]
    if len(pairs) < 2:
        return None
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    # fitted again without the worst pair while it is more than a card match off: a card
    # named wrong (its name's true place is elsewhere) must not drag the whole table off
    keep = np.ones(len(a), bool)
    R, t = _rigid(a, b)
    while keep.sum() > 2:
        off = np.where(keep, np.linalg.norm(a @ R.T + t - b, axis=1), -1.0)
        worst = int(np.argmax(off))
        if off[worst] <= OUTLIER_MM:
            break
        keep[worst] = False
        R, t = _rigid(a[keep], b[keep])
    turn = math.degrees(math.atan2(R[1, 0], R[0, 0]))
    errs = [float(e) for e in np.linalg.norm(a @ R.T + t - b, axis=1)]

    def move(p: list[float]) -> list[float]:
        q = R @ np.asarray(p, np.float64) + t
        return [float(q[0]), float(q[1])]

    out = dict(record)
    out["cards"] = [dict(c, center_mm=move(c["center_mm"]),
                         angle_deg=(c["angle_deg"] + turn) % 360.0) for c in record["cards"]]
    out["pyramids"] = [dict(p, base_center_mm=move(p["base_center_mm"]),
                            pointing_deg=None if p.get("pointing_deg") is None
                            else (p["pointing_deg"] + turn) % 360.0)
                       for p in record["pyramids"]]
    return out, errs


def _pct(a: float, b: float) -> str:
    return f"{100.0 * a / b:.1f}%" if b else "n/a"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=60)
    ap.add_argument("--seed", type=int, default=900000)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args(argv)

    import cv2

    from calibration.mat import DEFAULT_MAT
    from calibration.table import Intrinsics
    from vision.pipeline import TablePipeline
    from vision.synth.deck import default_deck_dir, load_deck
    from vision.synth.generate import Progress

    cv2.setNumThreads(2)
    deck = load_deck(default_deck_dir("rws-tarot"), validate=False)
    symmetric = symmetric_ids(deck)
    bare = replace(DEFAULT_MAT, printed=False)   # the scene without markers on the table
    pipeline = TablePipeline(mat=None, threads=2)
    rows: list[dict[str, Any]] = []
    errs: list[float] = []
    first_ms: list[float] = []
    again_ms: list[float] = []
    calibrated = failed = 0
    bar = Progress(args.count, "no-mat", force=True)
    t_all = time.perf_counter()
    for i in range(args.count):
        image, truth, _ = render_case("ordinary", i, args.seed, deck, bare)
        cam = truth.get("camera", {})
        pipeline.set_camera(Intrinsics(np.array(cam["K"], np.float64),
                                       np.array(cam["dist"], np.float64))
                            if "K" in cam else None)
        t0 = time.perf_counter()
        record = pipeline.observe(image, f"no-mat-{i}")
        first_ms.append((time.perf_counter() - t0) * 1000)
        t0 = time.perf_counter()
        pipeline.observe(image, f"no-mat-{i}-again")
        again_ms.append((time.perf_counter() - t0) * 1000)
        calibrated += bool(record["calibrated"])
        aligned = align(record, truth) if record["calibrated"] else None
        if aligned is None:
            failed += 1
            empty = dict(record, calibrated=False, cards=[], pyramids=[])
            rows.append(score(empty, truth, symmetric))
        else:
            rec, card_errs = aligned
            errs += card_errs
            rows.append(score(rec, truth, symmetric))
        bar.update()
    bar.close()
    total_s = time.perf_counter() - t_all
    s = {k: sum(r[k] for r in rows) for k in (
        "cards_truth", "cards_pred", "cards_tp", "cards_id_ok", "pyr_truth", "pyr_pred",
        "pyr_tp", "pyr_color_ok", "pyr_pips_ok", "pyr_upright_ok", "pyr_point_n",
        "pyr_point_ok", "exact")}
    n = len(rows)
    e = np.array(errs) if errs else np.zeros(1)
    cmd = "python bench/no_mat.py" + "".join(
        f" --{k.replace('_', '-')} {v}" for k, v in (("count", args.count), ("seed", args.seed)))
    text = "\n".join([
        SECTION,
        "",
        f"Command: `{cmd}`; {platform.machine()}, {os.cpu_count()} cores, load average "
        f"{os.getloadavg()[0]:.1f} at the end, {total_s / 60:.1f} min.",
        "",
        f"{n} held-out renders of bench/vision.py's ordinary group, drawn with no markers; the "
        "cards alone calibrate each image. Records aligned to the truth on the cards named "
        "right (see the script's docstring), then scored as bench/vision.py scores.",
        "",
        "| calibrated | aligned | card recall | card precision | card id | pyramid recall "
        "| pyramid precision | colour | pips | upright | pointing | exact tables |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
        f"| {_pct(calibrated, n)} | {_pct(n - failed, n)} | "
        f"{_pct(s['cards_tp'], s['cards_truth'])} | {_pct(s['cards_tp'], s['cards_pred'])} | "
        f"{_pct(s['cards_id_ok'], s['cards_tp'])} | {_pct(s['pyr_tp'], s['pyr_truth'])} | "
        f"{_pct(s['pyr_tp'], s['pyr_pred'])} | {_pct(s['pyr_color_ok'], s['pyr_tp'])} | "
        f"{_pct(s['pyr_pips_ok'], s['pyr_tp'])} | {_pct(s['pyr_upright_ok'], s['pyr_tp'])} | "
        f"{_pct(s['pyr_point_ok'], s['pyr_point_n'])} | {_pct(s['exact'], n)} |",
        "",
        f"Aligned card centres: median {np.median(e):.1f} mm, 90th percentile "
        f"{np.percentile(e, 90):.1f} mm, worst {e.max():.1f} mm ({len(errs)} cards).",
        "",
        f"Time per frame (whole pipeline, 2 threads): a new camera (full fit) median "
        f"{np.median(first_ms):.0f} ms, 90th percentile {np.percentile(first_ms, 90):.0f} ms; "
        f"the next frame of the same still camera (fit reused) median "
        f"{np.median(again_ms):.0f} ms.",
    ])
    print(text)
    if not args.no_write:
        write_section(SECTION, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
