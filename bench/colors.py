"""How ``companion calibrate-colors`` judges the names given to the shown pyramids.

Renders dim tables (vision/synth: one pyramid of 6-10 spec colours in the default
calibration zone, west to east, on cloth, wood, a newspaper, a patterned cloth or a plain
table; 1920x1080, the camera tilted up to 25 degrees; exposure drawn from ``--exposure``),
runs :func:`vision.pyramids.profile.measure_profile` with the true colours named west to
east, and judges the names as the command does (:func:`swapped_colours`,
:func:`another_colour`). Then each pyramid is named every other colour in turn (the rest as
they are) and judged again, the pyramid finder asked where the command would ask it.

    python bench/colors.py [--seeds 700-729,800-829] [--exposure 0.2,0.45]

Prints: pictures, those counted (as many pyramids found as named), pyramids, those read
otherwise than named, the correctly named refused (each with seed, name and reading),
the wrong names refused of all tried, the pictures the finder was asked about, and the
median CPU time of measure_profile; writes them as "## Colour calibration" to
bench/RESULTS.md, replacing only that section (``--no-write``: print only).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.results import cpu_name, write_section  # noqa: E402  (after the path insert)

SECTION = "## Colour calibration"


def _seeds(text: str) -> list[int]:
    """The seeds ``text`` names ("700-729,800"); ValueError saying what is wrong."""
    out: list[int] = []
    for part in text.split(","):
        a, _, b = part.partition("-")
        try:
            out += list(range(int(a), int(b or a) + 1))
        except ValueError:
            raise ValueError("seeds are whole numbers or ranges A-B, comma separated "
                             "(e.g. 700-729,800)") from None
    if not out:
        raise ValueError("no seeds (a range A-B needs A <= B)")
    return out


def _exposure(text: str) -> tuple[float, float]:
    """The exposures ``text`` names ("0.2,0.45"); ValueError saying what is wrong."""
    try:
        lo, hi = (float(v) for v in text.split(","))
    except ValueError:
        raise ValueError("two exposures, low and high, comma separated (e.g. 0.2,0.45)"
                         ) from None
    return lo, hi


def scene(seed: int, exposure: tuple[float, float], deck: Any) -> tuple[Any, Any, list[str]]:
    """(picture, calibration, the colours west to east) of one seeded dim table."""
    from calibration.mat import DEFAULT_MAT
    from calibration.table import Intrinsics, TableCalibrator
    from vision.pyramids.colors import COLORS
    from vision.synth.camera import camera_over_mat
    from vision.synth.render import Light, Style, render
    from vision.synth.scene import PyramidPlacement, TableScene

    rng = np.random.default_rng(seed)
    n = int(rng.integers(6, 11))
    cols = [str(c) for c in rng.permutation(COLORS)[:n]]
    xs = np.linspace(270.0, 630.0, n) + rng.uniform(-4, 4, n)
    placed = []
    for i, (c, x) in enumerate(zip(cols, xs)):
        up = bool(rng.random() < 0.5)
        y = 325.0 + (45.0 if i % 2 else -45.0) + rng.uniform(-15, 15)
        placed.append(PyramidPlacement(c, int(rng.integers(1, 4)), up, (float(x), float(y)),
                                       None if up else float(rng.uniform(0, 360)),
                                       yaw_deg=float(rng.uniform(0, 120))))
    cam = camera_over_mat(DEFAULT_MAT, (1920, 1080), tilt=float(rng.uniform(0, 25)),
                          yaw=float(rng.uniform(-10, 10)), tilt_dir=float(rng.uniform(0, 360)))
    surface = str(rng.choice(["cloth", "wood", "newspaper", "pattern", "plain"]))
    tone = rng.uniform(40, 140, 3) if surface == "plain" else None
    plain = None if tone is None else (float(tone[0]), float(tone[1]), float(tone[2]))
    st = Style(seed=seed, surface="cloth" if plain else surface, plain_color=plain,
               lights=[Light(float(rng.uniform(0, 360)), float(rng.uniform(40, 80)),
                             float(rng.uniform(0.4, 0.8)), float(rng.uniform(0.2, 0.5)), 3.0)],
               ambient=float(rng.uniform(0.2, 0.35)), exposure=float(rng.uniform(*exposure)),
               wb=tuple(float(v) for v in rng.uniform(0.75, 1.0, 3)),  # type: ignore[arg-type]
               pyramid_tint=float(rng.uniform(0, 0.1)), noise_sigma=float(rng.uniform(0, 3)))
    image, _ = render(TableScene(pyramids=placed), deck, DEFAULT_MAT, cam, st)
    calib = TableCalibrator(DEFAULT_MAT, Intrinsics(cam.K, cam.dist)).calibrate(image)
    west_to_east = [p.color for p in sorted(placed, key=lambda p: p.base_center_mm[0])]
    return image, calib, west_to_east


def judged(names: list[str], seen: list[str]) -> list[bool]:
    """Each pyramid refused by the command's judging of ``names`` where it sees ``seen``."""
    from companion.commands.calibrate_colors import another_colour, swapped_colours

    swapped = swapped_colours(names, seen)
    return [another_colour(n, s) or n in swapped for n, s in zip(names, seen)]


def run(seeds: list[int], exposure: tuple[float, float]) -> dict[str, Any]:
    from calibration.mat import DEFAULT_MAT
    from companion.commands.calibrate_colors import another_colour
    from vision.pyramids import PyramidFinder
    from vision.pyramids import profile as prof
    from vision.pyramids.colors import COLORS
    from vision.synth.deck import load_deck

    deck = load_deck(ROOT.parent / "shared" / "decks" / "rws-tarot")
    finder = PyramidFinder(DEFAULT_MAT)
    asked: list[int] = []
    by_finds: list[int] = []
    find, finds_with = finder.find, prof._finds_with

    def counted_find(*a: Any) -> Any:
        asked.append(1)
        return find(*a)

    def counted_finds_with(*a: Any) -> Any:
        # (where the count is made with the finder's finds, it is asked whatever the names)
        by_finds.append(1)
        return finds_with(*a)

    finder.find = counted_find  # type: ignore[method-assign,assignment]
    prof._finds_with = counted_finds_with  # type: ignore[assignment]
    fig: dict[str, Any] = {"pictures": 0, "counted": 0, "pyramids": 0, "misread": 0,
                           "refused": [], "wrong": 0, "caught": 0, "asked": 0, "cpu": []}
    for seed in seeds:
        image, calib, names = scene(seed, exposure, deck)
        fig["pictures"] += 1
        asked.clear()
        by_finds.clear()
        t = time.process_time()
        try:
            _, shown = prof.measure_profile(finder, image, calib, names)
        except prof.ProfileError:
            continue
        finally:
            fig["cpu"].append(time.process_time() - t)
        fig["counted"] += 1
        fig["asked"] += bool(asked)
        # the finder's reading of every one, for the wrong names (where the command asks it)
        finds = prof._zone_finds(finder, image, calib, prof.calibration_zone(DEFAULT_MAT))
        reads = [prof._read_by(s, finds, shown).read or s.guess for s in shown]

        def seen_for(named: list[str]) -> list[str]:
            ask = bool(by_finds) or any(s.guess != n for s, n in zip(shown, named))
            return reads if ask else [s.guess for s in shown]

        seen = [s.read or s.guess for s in shown]
        fig["pyramids"] += len(names)
        fig["misread"] += sum(s != n for s, n in zip(seen, names))
        fig["refused"] += [(seed, n, s) for n, s, r in zip(names, seen, judged(names, seen))
                           if r]
        for i, n in enumerate(names):
            for other in COLORS:
                if other == n:
                    continue
                named = names[:i] + [other] + names[i + 1:]
                fig["wrong"] += 1
                fig["caught"] += another_colour(other, seen_for(named)[i])
    return fig


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", default="700-729,800-829")
    ap.add_argument("--exposure", default="0.2,0.45")
    ap.add_argument("--no-write", action="store_true", help="print only")
    a = ap.parse_args(argv)
    # (bad input named, as argparse names it, not a traceback)
    try:
        seeds = _seeds(a.seeds)
    except ValueError as exc:
        ap.error(f"--seeds {a.seeds!r}: {exc}")
    try:
        lo, hi = _exposure(a.exposure)
    except ValueError as exc:
        ap.error(f"--exposure {a.exposure!r}: {exc}")
    start = time.perf_counter()
    fig = run(seeds, (lo, hi))
    total_s = time.perf_counter() - start
    cmd = "python bench/colors.py " + " ".join(argv if argv is not None else sys.argv[1:])
    refused = ", ".join(str(r) for r in fig["refused"]) or "none"
    text = "\n".join([
        SECTION,
        "",
        f"Command: `{cmd.strip()}`; {cpu_name()}, {os.cpu_count()} cores, "
        f"{platform.machine()}, {total_s / 60:.1f} min.",
        "",
        f"Seeds {a.seeds}, exposure {lo}-{hi}: dim tables, one pyramid per colour in the "
        "calibration zone; calibrate-colors' measuring with the colours named right, then "
        "each pyramid named every other colour in turn.",
        "",
        "| pictures | counted | finder asked | pyramids | read otherwise | correctly named "
        "refused | wrong names refused | measure_profile CPU median |",
        "|---|---|---|---|---|---|---|---|",
        f"| {fig['pictures']} | {fig['counted']} | {fig['asked']} | {fig['pyramids']} | "
        f"{fig['misread']} | {len(fig['refused'])} | {fig['caught']} of {fig['wrong']} | "
        f"{statistics.median(fig['cpu']):.3f} s |",
        "",
        f"Correctly named pyramids refused: {refused}.",
    ])
    print(text)
    if not a.no_write:
        write_section(SECTION, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
