"""How surely the pipeline names the cards it sees partly covered, on the discard pile and
elsewhere, and how often such a name is wrong: the figures the live session's
PILE_NAME_SURE (companion/live/session.py; docs/vision-tuning.md) was chosen on.

A card under the pile's top names the face-down territory a move destroyed only where the
camera read it with at least that confidence (the record's ``confidence``: the detector's
score times the name's), and a wrong name stands for good. This renders bench/vision.py's
tarot scenes (groups ordinary, hard, unseen-printing; the renderer's ``mixed`` game, most
with a discard pile) on a development seed and runs the pipeline on them (one thread, the
card stages only: the pyramids are not looked for, and nothing of the cards waits on
them). Every face-up card read on a true card (backs aside, as the session never names
one) is right where a true card within 25 mm has its id; it is the pile's top or a card
under it where the record puts it in the mat's discard zone (its centre within the live
table reading's ZONE_MARGIN_MM), else a card elsewhere, partly covered or not by the
share of it other cards cover (the truth's ``uncovered``). The renderer draws the faces of
a pile's top two cards only, a few millimetres apart, so a card under the top is seldom
read; the cards elsewhere partly or mostly covered stand for it.

For each floor and kind of read it says the share of right names kept, the share of wrong
ones let through, and how many of the names kept are wrong. It writes nothing to
bench/RESULTS.md. About 0.3 s of CPU an image.

    python bench/pile_names.py [--seed 587000] [--count-per-group 100]
                               [--groups ordinary,hard,unseen-printing] [--json reads.json]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

#: the floors the table is given for
FLOORS = (0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95)
#: a read and a true card are the same card within this (mm), as bench/vision.py pairs them
CARD_MM = 25.0
#: a card partly covered: this share of it uncovered by other cards, at least and below
PARTLY = (0.5, 0.95)
GROUPS = ("ordinary", "hard", "unseen-printing")
BACK = "back"


class Read(NamedTuple):
    """One card the pipeline read: its confidence, whether its id is right, where it lies
    ("top" or "under": the discard pile's top or a card under it; "elsewhere") and how much
    of its true card other cards leave uncovered (the truth's ``uncovered``)."""

    confidence: float
    right: bool
    where: str
    uncovered: float


def _in_zone(point: Sequence[float], zone: Sequence[float], margin: float) -> bool:
    x0, y0, x1, y1 = zone
    return x0 - margin <= float(point[0]) <= x1 + margin and \
        y0 - margin <= float(point[1]) <= y1 + margin


def reads(record_cards: Iterable[dict[str, Any]], truth: dict[str, Any],
          zone: Sequence[float], margin: float) -> list[Read]:
    """The reads of one image: each face-up card of the record (backs aside: the session
    never names one) with a true card within :data:`CARD_MM` (the truth's ``cards`` and
    ``covered_cards``; a read with none is a false box, not a name). Right: one of those
    has the id read. A read of the discard ``zone`` (its centre within ``margin`` mm) is
    "top" where it names, or lies nearest, the pile's true top, else "under"; the others
    "elsewhere" (a card the frame's edge cuts aside), with the share of the card read (the
    true card of that id, or the nearest for a wrong id) that other cards leave
    uncovered."""
    true = list(truth.get("cards", [])) + list(truth.get("covered_cards", []))
    pile = [t for t in true if t.get("group") == "discard"]
    top = max(pile, key=lambda t: int(t.get("level", 0)), default=None)
    out: list[Read] = []
    for c in record_cards:
        near = [t for t in true if math.dist(t["center_mm"], c["center_mm"]) <= CARD_MM]
        if c["id"] == BACK or not near:
            continue
        named = [t for t in near if t["id"] == c["id"]]
        # (a wrong name: the card it misread is the true card nearest it)
        card = min(named or near, key=lambda t: math.dist(t["center_mm"], c["center_mm"]))
        if _in_zone(c["center_mm"], zone, margin):
            where = "top" if card is top else "under"
        elif card.get("in_frame", True):
            where = "elsewhere"
        else:
            continue    # (cut by the frame's edge: not what a pile hides)
        out.append(Read(float(c["confidence"]), bool(named), where,
                        float(card.get("uncovered", 1.0))))
    return out


def floor_rows(rs: Sequence[Read], floors: Sequence[float] = FLOORS
               ) -> list[tuple[float, int, int, int, int]]:
    """For each floor: (floor, right names kept, right names, wrong names let through,
    wrong names); a name is kept at a confidence of at least the floor."""
    right = [r.confidence for r in rs if r.right]
    wrong = [r.confidence for r in rs if not r.right]
    return [(f, sum(c >= f for c in right), len(right), sum(c >= f for c in wrong), len(wrong))
            for f in floors]


def floor_table(rs: Sequence[Read], floors: Sequence[float] = FLOORS) -> str:
    """:func:`floor_rows` as a Markdown table, with the share of the kept names that are
    wrong."""
    lines = ["| floor | right kept | wrong let through | wrong of kept |", "|---|---|---|---|"]
    for f, rk, rn, wk, wn in floor_rows(rs, floors):
        kept = rk + wk
        lines.append(f"| {f:.2f} | {rk}/{rn} ({_pct(rk, rn)}) | {wk}/{wn} ({_pct(wk, wn)}) | "
                     f"{wk}/{kept} ({_pct(wk, kept)}) |")
    return "\n".join(lines)


def _pct(a: int, b: int) -> str:
    return f"{100.0 * a / b:.1f} %" if b else "-"


def populations(rs: Sequence[Read]) -> list[tuple[str, list[Read]]]:
    """The reads by kind: the discard pile's cards under its top, all its cards, the cards
    elsewhere partly covered by others (:data:`PARTLY` of them uncovered) and mostly covered
    (less), every card covered so (the pile's under its top too), and the cards in full
    view for comparison."""
    lo, hi = PARTLY

    def elsewhere(r: Read, a: float, b: float) -> bool:
        return r.where == "elsewhere" and a <= r.uncovered < b

    return [
        ("cards under the discard pile's top", [r for r in rs if r.where == "under"]),
        ("the discard pile's cards, its top too", [r for r in rs if r.where != "elsewhere"]),
        (f"cards elsewhere partly covered ({lo:.0%}-{hi:.0%} uncovered)",
         [r for r in rs if elsewhere(r, lo, hi)]),
        (f"cards elsewhere mostly covered (under {lo:.0%} uncovered)",
         [r for r in rs if elsewhere(r, 0.0, lo)]),
        (f"every card covered in part (under {hi:.0%} uncovered; the pile's under its top)",
         [r for r in rs if r.where == "under" or elsewhere(r, 0.0, hi)]),
        ("cards elsewhere in full view", [r for r in rs if elsewhere(r, hi, math.inf)]),
    ]


def report(rs: Sequence[Read]) -> str:
    """Per kind of read (:func:`populations`): how many, the highest confidences of the
    wrong ones, and the floors' table."""
    parts = []
    for title, sub in populations(rs):
        wrong = sorted(r.confidence for r in sub if not r.right)
        top = ", ".join(f"{c:.3f}" for c in reversed(wrong[-6:])) or "-"
        parts.append(f"{title}: {len(sub)} reads, {len(wrong)} wrong (the highest "
                     f"confidences of those: {top})\n{floor_table(sub)}")
    return "\n\n".join(parts)


def measure(groups: Sequence[str], count: int, seed: int) -> list[Read]:
    """The reads of images 0..count-1 of each group rendered from ``seed`` (one thread)."""
    import cv2

    import bench.vision as bv
    from calibration.mat import DEFAULT_MAT
    from companion.live.tablestate import DISCARD_ZONE, ZONE_MARGIN_MM
    from vision.pipeline import TablePipeline
    from vision.synth.deck import default_deck_dir, load_deck

    class NoPyramids:
        def find(self, image: Any, calib: Any) -> list[Any]:
            return []

    cv2.setNumThreads(1)
    deck = load_deck(default_deck_dir("rws-tarot"), validate=False)
    pl = TablePipeline(mat=DEFAULT_MAT, deck="tarot", pyramid_finder=NoPyramids(), threads=1,
                       pyramid_process=False)
    zone = DEFAULT_MAT.zones[DISCARD_ZONE]
    out: list[Read] = []
    t0 = time.perf_counter()
    try:
        for g in groups:
            for i in range(count):
                image, truth, _ = bv.render_case(g, i, seed, deck, pl.mat)
                bv._new_camera(pl, truth)
                record = pl.observe(image, f"{g}-{i}")
                if record["calibrated"]:
                    out.extend(reads(record["cards"], truth, zone, ZONE_MARGIN_MM))
                if (i + 1) % 25 == 0:
                    print(f"{g}: {i + 1}/{count} images ({time.perf_counter() - t0:.0f} s)",
                          file=sys.stderr, flush=True)
    finally:
        pl.close()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--seed", type=int, default=587_000)
    ap.add_argument("--count-per-group", type=int, default=100)
    ap.add_argument("--groups", default=",".join(GROUPS))
    ap.add_argument("--json", type=Path, default=None, help="also write every read")
    args = ap.parse_args(argv)
    if args.seed >= 600_000:
        ap.error("--seed: development seeds are under 600000 (bench/vision.py takes the "
                 "held-out ones)")
    groups = [g.strip() for g in args.groups.split(",") if g.strip()]
    bad = [g for g in groups if g not in GROUPS]
    if bad:
        ap.error(f"unknown group(s) {', '.join(bad)}; expected {', '.join(GROUPS)}")
    t0 = time.process_time()
    rs = measure(groups, args.count_per_group, args.seed)
    print(f"{args.count_per_group} images a group ({', '.join(groups)}), seed {args.seed}, "
          f"{time.process_time() - t0:.0f} s CPU")
    if args.json is not None:
        args.json.write_text(json.dumps([r._asdict() for r in rs]))
    print(report(rs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
