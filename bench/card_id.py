"""Benchmark of the classical card identifier (vision/cards) on rendered scenes.

Enrolls each deck from its reference scans (shared/decks), renders seeded scenes that the
gallery never saw, cuts every card that is at least half uncovered by other cards out of the
image with :func:`vision.cards.warp_card` (truth corners, turned 180 degrees at random so
the identifier must find the art's top itself), and reports identity and orientation accuracy
per group:

* ``ordinary``: the renderer's own random look (printing strength 0..1), camera tilt <= 15 deg;
* ``hard``: tilt 15..25 deg, dim light (exposure 0.35..0.6), strongly coloured light;
* ``unseen printing``: printing strength 1.6..2.4 (colour matrix, saturation, gamma,
  yellowing, borders all well beyond the enrollment augmentations' usual range).

Each is split by the truth's visibility (pyramids, hands and the frame edge count). Writes
the figures to bench/RESULTS.md under "## Card identity (classical gallery)", replacing only
that section.

With ``--photos`` each deck is enrolled from its scans and again from photos of its cards
(:func:`vision.synth.photos.card_photo`: each card printed, laid on a plain table surface,
photographed from above by a hand-held camera, a third of them lying across the picture),
as ``companion enroll-deck`` takes them (:mod:`vision.cards.face` finds and cuts out each
card), into a temporary folder; a photo whose card is not found is taken again, as a player
would. Both galleries read the same crops. It also reports how often the card is found, and cut where it lies, in photos on
plain and on patterned cloths. The figures go under "## Card identity, enrolled from photos".

    python bench/card_id.py [--scenes 120] [--decktet-scenes 40] [--seed 5] [--photos]
                            [--no-write]
"""

from __future__ import annotations

import argparse
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.cameras import bench_camera  # noqa: E402
from bench.results import write_section  # noqa: E402  (after the path insert)

SECTION = "## Card identity (classical gallery)"
PHOTO_SECTION = "## Card identity, enrolled from photos"
#: the surfaces a player is asked to photograph cards on, and the ones they are warned off
PLAIN, PATTERNED = ("cloth", "felt", "wood"), ("pattern",)
#: a cut counts as right where no corner is further than this share of the card's long side
#: from where the card's corner is
CUT_TOLERANCE = 0.02
GROUPS = ("ordinary", "hard", "unseen printing")
SIZE = (1280, 720)


def _camera(rng: np.random.Generator, mat: Any, card_long_mm: float,
            tilt: tuple[float, float]) -> Any:
    """The bench's camera (:func:`bench.cameras.bench_camera`) at 1280x720."""
    return bench_camera(rng, mat, card_long_mm, tilt, SIZE, square_yaw=False)


def render_group(deck: Any, group: str, n: int, seed: int) -> list[dict[str, Any]]:
    """Crops with truth from ``n`` scenes of ``group`` (seeded per scene)."""
    import cv2

    from calibration.mat import DEFAULT_MAT
    from vision.cards import warp_card
    from vision.synth.generate import image_rng, random_scene, random_style
    from vision.synth.render import render

    mat = DEFAULT_MAT
    out: list[dict[str, Any]] = []
    gseed = GROUPS.index(group) + 1
    for i in range(n):
        rng = image_rng(seed * 100 + gseed, i)
        scene = random_scene(rng, deck, mat, "mixed")
        cam = _camera(rng, mat, deck.card_size_mm[1], (15.0, 25.0) if group == "hard"
                      else (0.0, 15.0))
        style = random_style(rng, int(rng.integers(0, 2**62)), 0.15, deck.back_file is not None,
                             mat)
        if group == "hard":
            style.exposure = float(rng.uniform(0.35, 0.6))
            tint = rng.uniform(-0.3, 0.3, 3)
            wb = np.exp(tint - tint.mean())
            style.wb = (float(wb[0]), float(wb[1]), float(wb[2]))
            style.ambient *= float(rng.uniform(0.5, 0.9))
        elif group == "unseen printing":
            style.printing_strength = float(rng.uniform(1.6, 2.4))
        image, truth = render(scene, deck, mat, cam, style)
        ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, style.jpeg_quality])
        decoded = cv2.imdecode(buf, cv2.IMREAD_COLOR)
        assert decoded is not None     # (the JPEG it has just encoded)
        image = decoded
        for c in truth["cards"]:
            if not c.get("in_frame", True):
                continue
            corners = np.asarray(c["corners_px"], float)
            flip = bool(rng.random() < 0.5)
            if flip:  # the quad's first edge is the art's bottom edge
                corners = np.roll(corners, 2, axis=0)
            long_px = float(np.linalg.norm(corners[0] - corners[3]))
            out.append({"crop": warp_card(image, corners), "id": c["id"], "rotated": flip,
                        "visible": float(c.get("visible", 1.0)), "long_px": long_px,
                        "scene": i})
    return out


def evaluate(gallery: Any, items: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    crops = [it["crop"] for it in items]
    t0 = time.perf_counter()
    res = gallery.identify_batch(crops)
    dt = time.perf_counter() - t0
    buckets: dict[str, dict[str, Any]] = {}
    for it, r in zip(items, res):
        v = it["visible"]
        b = "visible >= 0.85" if v >= 0.85 else ("visible 0.5-0.85" if v >= 0.5 else
                                                 "visible < 0.5")
        for key in ("all", b):
            s = buckets.setdefault(key, {"n": 0, "id_ok": 0, "top1": 0, "orient_n": 0,
                                         "orient_ok": 0, "rejected": 0, "wrong_accepted": 0})
            s["n"] += 1
            s["top1"] += int(r.best_id == it["id"])
            s["id_ok"] += int(r.card_id == it["id"])
            s["rejected"] += int(r.card_id is None)
            s["wrong_accepted"] += int(r.card_id is not None and r.card_id != it["id"])
            if it["id"] != "back" and r.best_id == it["id"]:
                s["orient_n"] += 1
                s["orient_ok"] += int(r.rotated == it["rotated"])
    buckets["all"]["seconds"] = dt
    return buckets


def timing(gallery: Any, items: list[dict[str, Any]], reps: int = 30) -> float:
    """Median ms to identify a batch of 20 crops (features included), one thread."""
    import cv2

    cv2.setNumThreads(1)
    crops = [it["crop"] for it in items[:20]]
    gallery.identify_batch(crops)
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        gallery.identify_batch(crops)
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts) * 1000)


def photograph_deck(deck: Any, folder: Path, seed: int) -> dict[str, Any]:
    """Photos of every card of ``deck`` (and its back) in ``folder``, named by card id, on
    plain surfaces (one taken again, up to four times, where its card is not found), and a
    photo of each on a patterned cloth, only to count: how many cards :func:`find_card`
    found and cut where they lie, on each kind of surface, and how long it took."""
    import cv2

    from vision.cards.face import find_card
    from vision.synth.photos import card_photo

    w, h = deck.card_size_mm
    ids = list(deck.ids) + (["back"] if deck.back_file is not None else [])
    stats: dict[str, Any] = {k: {"n": 0, "found": 0, "right": 0} for k in ("plain", "patterned")}
    stats.update(retaken=0, ms=[])
    for k, cid in enumerate(ids):
        art = deck.image(cid)
        for kind, surfaces in (("plain", PLAIN), ("patterned", PATTERNED)):
            for take in range(4 if kind == "plain" else 1):
                rng = np.random.default_rng([seed, k, take, kind == "plain"])
                photo, corners = card_photo(rng, art, deck.card_size_mm, upright=k % 3 != 0,
                                            surfaces=surfaces)
                t0 = time.perf_counter()
                outline = find_card(photo, h / w)
                stats["ms"].append(1000 * (time.perf_counter() - t0))
                if take == 0:
                    s = stats[kind]
                    s["n"] += 1
                    if outline is not None:
                        s["found"] += 1
                        long_px = float(np.linalg.norm(corners[0] - corners[3]))
                        err = float(np.abs(outline.corners - corners).max())
                        s["right"] += int(err <= CUT_TOLERANCE * long_px)
                if kind == "patterned":
                    break
                if outline is not None or take == 3:
                    cv2.imwrite(str(folder / f"{cid}.jpg"), photo)
                    break
                stats["retaken"] += 1
    return stats


def _pct(a: int, b: int) -> str:
    return "n/a" if b == 0 else f"{100.0 * a / b:.1f}%"


def table(rows: list[tuple[str, str, dict[str, Any]]]) -> str:
    lines = ["| deck | group | cards | visibility | top-1 id | accepted & right | rejected | "
             "accepted & wrong | 180° orientation (of right ids) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for deck, group, b in rows:
        for key in ("all", "visible >= 0.85", "visible 0.5-0.85", "visible < 0.5"):
            s = b.get(key)
            if not s:
                continue
            lines.append(f"| {deck} | {group} | {s['n']} | {key} | {_pct(s['top1'], s['n'])} | "
                         f"{_pct(s['id_ok'], s['n'])} | {_pct(s['rejected'], s['n'])} | "
                         f"{_pct(s['wrong_accepted'], s['n'])} | "
                         f"{_pct(s['orient_ok'], s['orient_n'])} |")
    return "\n".join(lines)


def compare_table(rows: list[tuple[str, str, dict[str, Any], dict[str, Any]]]) -> str:
    lines = ["| deck | group | cards | top-1 id: scans / photos | accepted & right: scans / "
             "photos | accepted & wrong: scans / photos |", "|---|---|---|---|---|---|"]
    for deck, group, a, b in rows:
        n = a["n"]
        lines.append(f"| {deck} | {group} | {n} | {_pct(a['top1'], n)} / {_pct(b['top1'], n)} "
                     f"| {_pct(a['id_ok'], n)} / {_pct(b['id_ok'], n)} | "
                     f"{_pct(a['wrong_accepted'], n)} / {_pct(b['wrong_accepted'], n)} |")
    return "\n".join(lines)


def _decks(args: argparse.Namespace) -> list[tuple[str, int]]:
    return [(name, n) for name, n in (("rws-tarot", args.scenes),
                                      ("decktet", args.decktet_scenes)) if n > 0]


def _gallery_note(name: str, gal: Any, seconds: float, per_card: int) -> str:
    tmp = ROOT / "bench" / f".card-gallery-{name}.npz"
    gal.save(tmp)
    size_mb = tmp.stat().st_size / 1e6
    tmp.unlink()
    return (f"{name}: enrollment {seconds:.1f} s ({per_card} augmentations per card and "
            f"orientation), gallery file {size_mb:.2f} MB, {len(gal.protos)} prototypes x "
            f"{gal.proj.shape[1]} dims")


def _print_row(name: str, group: str, n_crops: int, b: dict[str, Any], label: str,
               seconds: float) -> None:
    print(f"{name:10s} {group:16s} {label:7s}{n_crops:5d} crops  top-1 "
          f"{_pct(b['top1'], b['n'])}  accepted&right {_pct(b['id_ok'], b['n'])}  "
          f"orientation {_pct(b['orient_ok'], b['orient_n'])}  ({seconds:.0f} s)", flush=True)


def run_scans(args: argparse.Namespace) -> tuple[list[str], str]:
    """Enrolled from the scans: (notes, the table by visibility)."""
    from vision.cards import enroll
    from vision.synth.deck import default_deck_dir, load_deck

    rows = []
    notes = []
    timing_ms = None
    for name, n in _decks(args):
        deck = load_deck(default_deck_dir(name))
        t0 = time.perf_counter()
        gal = enroll(deck.folder, per_card=args.per_card, seed=args.seed)
        notes.append(_gallery_note(name, gal, time.perf_counter() - t0, args.per_card))
        for group in GROUPS:
            t1 = time.perf_counter()
            items = render_group(deck, group, n, args.seed)
            b = evaluate(gal, items)
            rows.append((name, group, b))
            _print_row(name, group, len(items), b["all"], "", time.perf_counter() - t1)
            if timing_ms is None:
                timing_ms = timing(gal, items)
    notes.append(f"Speed: {timing_ms:.2f} ms to identify a batch of 20 crops (features "
                 "included), one thread, median of 30")
    return notes, table(rows)


def run_photos(args: argparse.Namespace) -> tuple[list[str], str]:
    """Enrolled from the scans and from photos, on the same crops: (notes, the table)."""
    from vision.cards import enroll
    from vision.synth.deck import default_deck_dir, load_deck

    rows = []
    notes = []
    for name, n in _decks(args):
        deck = load_deck(default_deck_dir(name))
        with tempfile.TemporaryDirectory(prefix="card-photos-") as tmpd:
            t0 = time.perf_counter()
            ps = photograph_deck(deck, Path(tmpd), args.seed)
            t_photos = time.perf_counter() - t0
            t0 = time.perf_counter()
            shot = load_deck(tmpd, card_size_mm=deck.card_size_mm, faces="auto")
            from_photos = enroll(shot, per_card=args.per_card, seed=args.seed)
            t_enroll = time.perf_counter() - t0
        from_scans = enroll(deck.folder, per_card=args.per_card, seed=args.seed)
        pl, pt = ps["plain"], ps["patterned"]
        notes.append(
            f"{name}: {pl['n']} photos ({t_photos:.0f} s to draw them), {len(shot.photos)} "
            f"of them read as photos by `--faces auto`; the card found in "
            f"{_pct(pl['found'], pl['n'])} of those on plain surfaces at the first take "
            f"({ps['retaken']} taken again; cut where it lies, every corner within "
            f"{100 * CUT_TOLERANCE:g}% of the card's length of the truth: "
            f"{_pct(pl['right'], pl['n'])}), and in {_pct(pt['found'], pt['n'])} of photos of "
            f"the same cards on patterned cloths (cut where it lies "
            f"{_pct(pt['right'], pt['n'])}); {np.median(ps['ms']):.0f} ms median to find a "
            f"card in a 1600x1200 photo; loading and enrolling from the photos "
            f"{t_enroll:.1f} s")
        for group in GROUPS:
            t1 = time.perf_counter()
            items = render_group(deck, group, n, args.seed)
            a, b = evaluate(from_scans, items)["all"], evaluate(from_photos, items)["all"]
            rows.append((name, group, a, b))
            _print_row(name, group, len(items), a, "scans", time.perf_counter() - t1)
            _print_row(name, group, len(items), b, "photos", 0.0)
    return notes, compare_table(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scenes", type=int, default=120, help="tarot scenes per group")
    ap.add_argument("--decktet-scenes", type=int, default=40, help="Decktet scenes per group")
    ap.add_argument("--per-card", type=int, default=40, help="augmentations per card")
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--photos", action="store_true",
                    help="enroll from rendered photos of the cards as well as from the scans, "
                         "and compare the two on the same crops")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args(argv)

    import cv2

    cv2.setNumThreads(1)
    notes, body = run_photos(args) if args.photos else run_scans(args)
    cmd = "python bench/card_id.py" + "".join(
        f" {a}" for a in (argv if argv is not None else sys.argv[1:]))
    section = PHOTO_SECTION if args.photos else SECTION
    text = "\n".join([
        section, "",
        f"Command: `{cmd}`  ",
        f"Date: {time.strftime('%Y-%m-%d')}; Python {platform.python_version()}; "
        f"{platform.platform()}  ",
        f"Scenes: {args.scenes} tarot and {args.decktet_scenes} Decktet per group, "
        f"{SIZE[0]}x{SIZE[1]}, `--game mixed`, seed {args.seed}; every card at least half "
        "uncovered by other cards and inside the frame, cut from the JPEG with "
        "`warp_card` on its truth corners (64 x 112 px), the quad's start turned 180° at "
        "random. Face-down cards count as id `back`. The gallery never saw these renders: it "
        + ("is enrolled from the reference scans, and again from photos of the cards (drawn "
           "from the scans by `vision.synth.photos`: each printed, on a plain table surface, "
           "under uneven light, slanted, blurred a little, JPEG; a third lying across the "
           "picture; `enroll-deck --faces auto` finds and cuts out each card), each with its "
           "own augmentations, the same seed.  " if args.photos else
           "is enrolled from the reference scans with its own augmentations.  "),
        "Columns: top-1 = nearest id right (no rejection); accepted & right = returned id "
        "right; rejected = returned None (margin below the gallery threshold); orientation = "
        "180° flag right among crops whose top-1 id is right (backs excluded).  ",
        ";  \n".join(notes) + ".", "",
        body, ""])
    print()
    print(text)
    if not args.no_write:
        write_section(section, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
