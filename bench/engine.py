"""Zarcana engine benchmark: legal-move enumeration, ``check`` and whole random games.

    python bench/engine.py                 # default: 20 games per edition, seed 0
    python bench/engine.py --games 5 --no-write

Random 3-player games of both editions are played by the CLI's bots (seeded). Positions
at turns 40-80 are sampled from them; on those, ``legal_moves()`` and ``check(move)`` are
timed for legal moves and for illegal ones made by mutating legal moves. Figures are
medians; each call is timed a few times and the fastest kept, so a scheduler hiccup on a
small machine does not land in the figure. The results replace the ``## Zarcana engine``
section of bench/RESULTS.md (other sections belong to other benchmarks).

Goals (2-core machine): ``check`` under 1 ms median, a whole random game under 1 s median.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import platform
import random
import re
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # runnable from a checkout without `pip install -e .`

from bench.results import RESULTS, cpu_name, write_section
from companion.commands.play import choose_bot_move
from companion.core.errors import NotationError
from companion.games.zarcana import Edition, new_game, parse_move
from companion.games.zarcana.engine import ZarcanaState
from companion.games.zarcana.moves import Move

SECTION = "## Zarcana engine"
PLAYERS = 3
TURNS = range(40, 81)
CHECK_GOAL_MS = 1.0
GAME_GOAL_S = 1.0

_CELL_RE = re.compile(r"(-?\d+),(-?\d+)")
_CARD_RE = re.compile(r"\b(?:cups|wands|swords|pentacles)-\d\d\b|\bmajor-\d\d\b")


@dataclass
class EditionFigures:
    edition: Edition
    game_s: list[float] = field(default_factory=list)
    game_moves: list[int] = field(default_factory=list)
    positions: list[ZarcanaState] = field(default_factory=list)
    legal_moves_s: list[float] = field(default_factory=list)
    moves_listed: list[int] = field(default_factory=list)
    check_legal_s: list[float] = field(default_factory=list)
    check_illegal_s: list[float] = field(default_factory=list)
    check_text_s: list[float] = field(default_factory=list)  # parse_move included


def best_of(fn: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def play_games(fig: EditionFigures, games: int, seed: int, per_game: int) -> None:
    """Whole random games, timed; keeps up to ``per_game`` positions from turns 40-80."""
    for g in range(games):
        rng = random.Random(f"bench:{fig.edition.value}:{seed}:{g}")
        t0 = time.perf_counter()
        st = new_game(PLAYERS, edition=fig.edition, seed=seed + g)
        sampled: list[ZarcanaState] = []
        n = 0
        while not st.is_over:
            if st.turn_number in TURNS:
                sampled.append(st)  # states are immutable: keeping a reference is free
            st = st.apply(choose_bot_move(st, rng))
            n += 1
        fig.game_s.append(time.perf_counter() - t0)
        fig.game_moves.append(n)
        if sampled:
            pick = random.Random(f"sample:{seed}:{g}")
            fig.positions += pick.sample(sampled, min(per_game, len(sampled)))


def mutations(st: ZarcanaState, text: str, rng: random.Random) -> list[str]:
    """Near-miss versions of a legal move: another player, another cell, a card not held."""
    out = []
    who, _, rest = text.partition(":")
    others = [c.value for c in st.players if c.value != who]
    out.append(f"{rng.choice(others)}:{rest}")
    cells = list(_CELL_RE.finditer(text))
    if cells:
        m = rng.choice(cells)
        i, j = int(m.group(1)), int(m.group(2))
        di, dj = rng.choice([(1, 0), (-1, 0), (0, 1), (0, -1), (2, 2)])
        out.append(f"{text[:m.start()]}{i + di},{j + dj}{text[m.end():]}")
    cards = list(_CARD_RE.finditer(text))
    if cards:
        m = rng.choice(cards)
        held = set(st.hand(st.players[st.current]))
        stranger = rng.choice([c for c in st.full_deck() if c not in held])
        out.append(f"{text[:m.start()]}{stranger}{text[m.end():]}")
    if " draw " in text:
        out.append(re.sub(r"draw \d", "draw 5", text))
    return out


def time_calls(fig: EditionFigures, seed: int, per_position: int, repeat: int) -> None:
    rng = random.Random(f"calls:{fig.edition.value}:{seed}")
    for st in fig.positions:
        legal: list[Move] = st.legal_moves()
        fig.legal_moves_s.append(best_of(st.legal_moves, repeat))
        fig.moves_listed.append(len(legal))
        chosen = rng.sample(legal, min(per_position, len(legal)))
        for mv in chosen:
            fig.check_legal_s.append(best_of(partial(st.check, mv), repeat))
            fig.check_text_s.append(best_of(partial(st.check, str(mv)), repeat))
        illegal: list[Move] = []
        for mv in chosen:
            for text in mutations(st, str(mv), rng):
                try:
                    bad = parse_move(text)
                except (NotationError, IndexError):
                    continue
                if not st.check(bad).legal:
                    illegal.append(bad)
        for bad in rng.sample(illegal, min(per_position, len(illegal))):
            fig.check_illegal_s.append(best_of(partial(st.check, bad), repeat))


def ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1e3:.3f} ms" if values else "n/a"


def report(figs: list[EditionFigures], command: str) -> tuple[str, bool]:
    all_check = [t for f in figs for t in f.check_legal_s + f.check_illegal_s]
    all_games = [t for f in figs for t in f.game_s]
    check_med = statistics.median(all_check) * 1e3
    game_med = statistics.median(all_games)
    ok = check_med < CHECK_GOAL_MS and game_med < GAME_GOAL_S
    head = "| measure (median) | " + " | ".join(f.edition.label for f in figs) + " | both | goal |"
    rows = [head, "|" + "---|" * (len(figs) + 3)]

    def row(name: str, per: Callable[[EditionFigures], str], both: str, goal: str = "") -> None:
        rows.append(f"| {name} | " + " | ".join(per(f) for f in figs) + f" | {both} | {goal} |")

    row("legal_moves(), turns 40-80", lambda f: ms(f.legal_moves_s),
        ms([t for f in figs for t in f.legal_moves_s]))
    row("moves listed per position", lambda f: f"{statistics.median(f.moves_listed):.0f}",
        f"{statistics.median([n for f in figs for n in f.moves_listed]):.0f}")
    row("check(), legal moves", lambda f: ms(f.check_legal_s),
        ms([t for f in figs for t in f.check_legal_s]))
    row("check(), illegal moves", lambda f: ms(f.check_illegal_s),
        ms([t for f in figs for t in f.check_illegal_s]))
    row("check(), all", lambda f: ms(f.check_legal_s + f.check_illegal_s), f"{check_med:.3f} ms",
        f"< {CHECK_GOAL_MS:g} ms")
    row("check(text), legal moves, parsing included", lambda f: ms(f.check_text_s),
        ms([t for f in figs for t in f.check_text_s]))
    row("whole random game", lambda f: f"{statistics.median(f.game_s):.3f} s",
        f"{game_med:.3f} s", f"< {GAME_GOAL_S:g} s")
    row("games per second (1 / median)", lambda f: f"{1 / statistics.median(f.game_s):.2f}",
        f"{1 / game_med:.2f}")
    row("moves per game", lambda f: f"{statistics.median(f.game_moves):.0f}",
        f"{statistics.median([n for f in figs for n in f.game_moves]):.0f}")
    counts = ", ".join(f"{f.edition.value}: {len(f.game_s)} games, {len(f.positions)} positions, "
                       f"{len(f.check_legal_s)} legal + {len(f.check_illegal_s)} illegal checks"
                       for f in figs)
    verdict = "goals met" if ok else "GOALS NOT MET"
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [
        SECTION, "",
        f"Command: `{command}`  ",
        (f"Date: {_dt.date.today().isoformat()}; Python {platform.python_version()}; "
         f"{os.cpu_count()} CPUs, {cpu_name()}; {platform.platform()}; load average "
         f"{load:.2f} when done (other work on these cores slows every figure)  "),
        f"{PLAYERS}-player random games (bots of `companion play`); {counts}.  ",
        (f"Goals: check() under {CHECK_GOAL_MS:g} ms median, a whole random game under "
         f"{GAME_GOAL_S:g} s median: **{verdict}**."), "",
        *rows, "",
    ]
    return "\n".join(lines), ok


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--games", type=int, default=20, help="random games per edition")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--positions-per-game", type=int, default=10)
    ap.add_argument("--moves-per-position", type=int, default=5,
                    help="legal (and as many illegal) moves checked per position")
    ap.add_argument("--repeat", type=int, default=3, help="timings per call; the fastest is kept")
    ap.add_argument("--no-write", action="store_true", help="do not update bench/RESULTS.md")
    args = ap.parse_args(argv)
    command = "python bench/engine.py" + "".join(
        f" {a}" for a in (argv if argv is not None else sys.argv[1:]))
    figs = []
    for edition in (Edition.E1996, Edition.LOONEY):
        fig = EditionFigures(edition)
        play_games(fig, args.games, args.seed, args.positions_per_game)
        time_calls(fig, args.seed, args.moves_per_position, args.repeat)
        figs.append(fig)
    section, ok = report(figs, command)
    print(section)
    if not args.no_write:
        write_section(SECTION, section)
        print(f"(written to {RESULTS.relative_to(ROOT)})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
