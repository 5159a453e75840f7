"""The live referee's first verdict on a still table that no single move explains.

    python bench/live_search.py                 # default: 8 games, seed 0
    python bench/live_search.py --games 2 --no-write

Seeded random 3-player games (the bots of `companion play`, both editions) give positions
from turn 15 on where the next three moves each change the table. A live session starts
from such a position as the camera knows it (hands, draw pile and face-down cards unknown,
a fixed lattice on the sample game's mat) and is shown one picture, made from the truth:

* ``two``: the table two moves on (one picture missed);
* ``three``: three moves on (two pictures missed);
* ``none``: three moves on with one thing changed that no three moves explain (a
  pyramid one size larger, two territories swapped, or a territory another card).

For each case the CPU time (this thread's, as the searches' budgets) of ``observe`` to
its verdict is taken, with the time spent in the searches for moves seen at once
(``explain_two``/``explain_three``) and how many ran to their budget. The results replace
the ``## Live search for moves seen at once`` section of bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import math
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # runnable from a checkout without `pip install -e .`

from bench.results import cpu_name, write_section  # noqa: E402
from calibration.mat import load_mat  # noqa: E402
from companion.commands.play import choose_bot_move  # noqa: E402
from companion.core.cards import BACK  # noqa: E402
from companion.core.pieces import Cell, Pyramid  # noqa: E402
from companion.games.zarcana import Edition, new_game  # noqa: E402
from companion.games.zarcana.engine import ZarcanaState  # noqa: E402
from companion.games.zarcana.moves import UNKNOWN  # noqa: E402
from companion.games.zarcana.table import TableView  # noqa: E402

SECTION = "## Live search for moves seen at once"
MAT = load_mat(ROOT / "sample_images" / "zarcana" / "mat.json")
PITCH = 95.0
#: the part of the mat the lattice may use (mm): clear of the markers and the piles' zones
FIELD = (70.0, 70.0, 830.0, 530.0)
KINDS = ("two", "three", "none")
GAMES = 20
#: each table judged this many times afresh, the fastest kept: a scheduler's or a cache's
#: hiccup on a shared machine does not land in the figure
REPEAT = 2
#: how many of the discard pile's top cards the camera sees
PILE_SEEN = 3
#: tables of each kind per game
PER_GAME = 2
SEARCHES = ("explain_two", "explain_three")


@dataclass
class Case:
    kind: str
    label: str
    start: ZarcanaState
    seen: TableView
    origin: tuple[float, float]
    #: the discard pile's cards the camera sees, bottom to top (the moves' cards fanned
    #: out over the one before them)
    pile: tuple[str, ...] = ()
    #: the pile's cards say which lies over which (else the camera cannot tell: the
    #: session tries each order, as a camera whose pile cards lie square on each other)
    levels: bool = True


@dataclass
class Timed:
    case: Case
    verdict_s: float
    search_s: float
    searches: list[tuple[str, bool]] = field(default_factory=list)
    said: str = ""
    #: the orders the pile's new cards may lie in (none: the camera could tell)
    orders: int = 0


def as_the_camera_knows(st: ZarcanaState) -> ZarcanaState:
    """``st`` with what a camera cannot see unknown: hands, the draw pile, face-down cards."""
    out = st.copy()
    out.hands = {c: (UNKNOWN,) * len(h) for c, h in st.hands.items()}
    out.deck = (UNKNOWN,) * len(st.deck)
    out.board = {cell: tuple((UNKNOWN, False) if not up else (card, up) for card, up in stack)
                 for cell, stack in st.board.items()}
    return out


def origin_for(views: Sequence[TableView]) -> tuple[float, float] | None:
    """Where cell 0,0 lies so that every cell of ``views`` fits on the mat (None: none)."""
    cells = [c for v in views for c in list(v.cards) + list(v.pyramids)]
    i0, i1 = min(c[0] for c in cells), max(c[0] for c in cells)
    j0, j1 = min(c[1] for c in cells), max(c[1] for c in cells)
    x0, y0, x1, y1 = FIELD
    if (i1 - i0) * PITCH > x1 - x0 or (j1 - j0) * PITCH > y1 - y0:
        return None
    return ((x0 + x1) / 2 - (i0 + i1) / 2 * PITCH, (y0 + y1) / 2 - (j0 + j1) / 2 * PITCH)


def record_of(view: TableView, origin: tuple[float, float], pile: Sequence[str],
              levels: bool = True) -> dict[str, Any]:
    """The observation record of ``view`` on a chequerboard lattice ((i + j) even portrait)
    and the discard pile showing ``pile``, bottom to top (with ``levels``, each said to lie
    over the one before)."""
    def at(cell: Cell, du: float = 0.0, dv: float = 0.0) -> list[float]:
        return [origin[0] + cell[0] * PITCH + du, origin[1] + cell[1] * PITCH + dv]

    cards: list[dict[str, Any]] = [
        {"id": cid, "center_mm": at(cell), "angle_deg": 270.0 if sum(cell) % 2 == 0 else 0.0,
         "confidence": 0.99} for cell, cid in sorted(view.cards.items())]
    dx0, dy0, dx1, dy1 = MAT.zones["discard"]
    for k, cid in enumerate(pile):
        cards.append({"id": cid, "center_mm": [(dx0 + dx1) / 2 + 2 * k, (dy0 + dy1) / 2 + k],
                      "angle_deg": 270.0, "confidence": 0.97, **({"level": k} if levels else {})})
    x0, y0, x1, y1 = MAT.zones["draw"]
    cards.append({"id": BACK, "center_mm": [(x0 + x1) / 2, (y0 + y1) / 2], "angle_deg": 270.0,
                  "confidence": 0.99})
    pyramids = []
    for cell, ps in sorted(view.pyramids.items()):
        for k, p in enumerate(ps):
            off = (0.0, 0.0) if k == 0 else (18.0 * math.cos(k * 2.1), 18.0 * math.sin(k * 2.1))
            deg = p.pose.degrees
            pyramids.append({"color": p.color.value, "pips": p.size, "upright": p.pose.upright,
                             "pointing_deg": deg, "base_center_mm": at(cell, *off),
                             "confidence": 0.95})
    return {"image": "bench.jpg", "calibrated": True, "cards": cards, "pyramids": pyramids}


def changed(a: ZarcanaState, b: ZarcanaState) -> bool:
    return not TableView.of(a).same_as(TableView.of(b))


def spoilt(view: TableView, start: ZarcanaState, rng: random.Random) -> TableView | None:
    """``view`` with one thing changed that no three moves make (None: nothing to change)."""
    ways: list[Callable[[], TableView | None]] = []
    small = [(c, k) for c, ps in sorted(view.pyramids.items()) for k, p in enumerate(ps)
             if p.size < 3]
    if small:
        def larger() -> TableView:
            cell, k = rng.choice(small)
            ps = list(view.pyramids[cell])
            p = ps[k]
            ps[k] = Pyramid(p.color, p.size + 1, p.pose)
            return TableView(view.cards, {**view.pyramids, cell: tuple(sorted(ps))},
                             view.discard_top)
        ways.append(larger)
    faces = sorted(c for c, cid in view.cards.items() if cid != BACK)
    if len(faces) >= 2:
        def swapped() -> TableView | None:
            a, b = rng.sample(faces, 2)
            if view.cards[a] == view.cards[b]:
                return None
            return TableView({**view.cards, a: view.cards[b], b: view.cards[a]},
                             view.pyramids, view.discard_top)
        ways.append(swapped)
    unseen = sorted(start.unseen_cards() - {UNKNOWN} - set(view.cards.values()))
    if faces and unseen:
        def another() -> TableView:
            cell = rng.choice(faces)
            return TableView({**view.cards, cell: rng.choice(unseen)}, view.pyramids,
                             view.discard_top)
        ways.append(another)
    return rng.choice(ways)() if ways else None


def make_cases(games: int, seed: int) -> list[Case]:
    """Per game one case of each kind, from seeded random games (see the module's text)."""
    cases: list[Case] = []
    for g in range(games):
        edition = (Edition.E1996, Edition.LOONEY)[g % 2]
        rng = random.Random(f"live-search:{seed}:{g}")
        st = new_game(3, edition=edition, seed=seed * 1000 + g)
        states = [st]
        while not st.is_over and len(states) < 400:
            st = st.apply(choose_bot_move(st, rng))
            states.append(st)
        starts = [t for t in range(15, len(states) - 3)
                  if all(changed(states[t + k], states[t + k + 1]) for k in range(3))
                  and not states[t].pending]
        rng.shuffle(starts)
        for kind in KINDS * PER_GAME:
            for t in starts:
                start = as_the_camera_knows(states[t])
                end = states[t + (2 if kind == "two" else 3)]
                seen = spoilt(TableView.of(end), start, rng) if kind == "none" else \
                    TableView.of(end)
                if seen is None:
                    continue
                origin = origin_for([TableView.of(start), seen])
                if origin is None:
                    continue
                starts.remove(t)
                cases.append(Case(kind, f"{edition.value} game {g} turn {states[t].turn_number}",
                                  start, seen, origin, end.discard[-PILE_SEEN:],
                                  rng.random() < 0.5))
                break
    return cases


def time_case(case: Case) -> Timed:
    from companion.live import session as live
    from companion.live.session import LiveSession
    from companion.live.tablestate import Lattice

    s = LiveSession("zarcana", edition=case.start.settings.edition,
                    players=[c.value for c in case.start.players], mat=MAT,
                    initial_state=case.start, lattice=Lattice(case.origin))
    timed = Timed(case, 0.0, 0.0)
    real = {name: getattr(live, name) for name in SEARCHES}

    def counted(name: str) -> Callable[..., Any]:
        def search(*args: Any, **kw: Any) -> Any:
            t = time.thread_time()
            runs, complete = real[name](*args, **kw)
            timed.search_s += time.thread_time() - t
            timed.searches.append((name, complete))
            return runs, complete
        return search

    rec = record_of(case.seen, case.origin, case.pile, case.levels)
    for name in SEARCHES:
        setattr(live, name, counted(name))
    try:
        t0 = time.thread_time()
        said = s.observe(rec, frame=1)
        timed.verdict_s = time.thread_time() - t0
    finally:
        for name in SEARCHES:
            setattr(live, name, real[name])
    timed.said = " | ".join(f"{e.kind.value}: {e.text}" for e in said)
    timed.orders = len(s.last_reading.discard_orders) if s.last_reading is not None else 0
    return timed


def figures(rows: Sequence[Timed]) -> tuple[str, ...]:
    ms = sorted(r.verdict_s * 1000 for r in rows)
    p90 = ms[min(len(ms) - 1, math.ceil(0.9 * len(ms)) - 1)]
    search = sorted(r.search_s * 1000 for r in rows)
    cut = sum(1 for r in rows if any(not done for _, done in r.searches))
    ran = sum(len(r.searches) for r in rows)
    return (str(len(rows)), f"{statistics.median(ms):.0f}", f"{p90:.0f}", f"{ms[-1]:.0f}",
            f"{statistics.median(search):.0f}", f"{ran}", f"{cut}")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--games", type=int, default=GAMES)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=REPEAT,
                    help="times each table is judged afresh (a new session): the fastest kept")
    ap.add_argument("--no-write", action="store_true", help="print only; RESULTS.md untouched")
    ap.add_argument("--verbose", action="store_true",
                    help="print every table's verdict in full (to compare two versions' verdicts)")
    args = ap.parse_args(argv)
    if args.games < 1:
        ap.error(f"--games must be 1 or more, not {args.games}")
    if args.repeat < 1:
        ap.error(f"--repeat must be 1 or more, not {args.repeat}")
    t0 = time.perf_counter()
    cases = make_cases(args.games, args.seed)
    if cases:
        time_case(cases[0])     # (the first picture imports what a verdict needs: not timed)
    rows = []
    for c in cases:
        tries = [time_case(c) for _ in range(args.repeat)]
        best = min(tries, key=lambda r: r.verdict_s)
        if any(r.said != best.said for r in tries):
            # (a search cut short by its budget on one try and not on another)
            print(f"{c.kind} {c.label}: the verdict differs between tries", file=sys.stderr)
        rows.append(best)
    for r in rows:
        if args.verbose:
            print(f"{r.case.kind:5} {r.case.label:28} {r.verdict_s * 1000:7.0f} ms "
                  f"(searches {r.search_s * 1000:5.0f} ms: "
                  f"{', '.join(n + ('' if done else ' CUT') for n, done in r.searches)}) "
                  f"{r.said}")
    head = ("| tables | n | verdict median (ms) | p90 | max | searches' median (ms) "
            "| searches run | cut short by the budget |")
    lines = [head, "|---|---|---|---|---|---|---|---|"]
    groups = [(kind, [r for r in rows if r.case.kind == kind]) for kind in KINDS] + [
        ("all", rows),
        ("pile in no known order", [r for r in rows if r.orders > 1])]
    for name, part in groups:
        if part:
            lines.append(f"| {name} | " + " | ".join(figures(part)) + " |")
    table = "\n".join(lines)
    print(table)
    load = os.getloadavg()[0]
    print(f"{len(rows)} tables in {time.perf_counter() - t0:.0f} s; load average {load:.2f}")
    if args.no_write:
        return 0
    from companion.live.session import THREE_MOVES_BUDGET_S, TWO_MOVES_BUDGET_S

    cmd = ("python bench/live_search.py"
           + ("" if args.games == GAMES else f" --games {args.games}")
           + ("" if args.seed == 0 else f" --seed {args.seed}")
           + ("" if args.repeat == REPEAT else f" --repeat {args.repeat}"))
    text = (f"{SECTION}\n\nCommand: `{cmd}`  \n"
            f"Date: {_dt.date.today().isoformat()}; Python {platform.python_version()}; "
            f"{os.cpu_count()} CPUs ({cpu_name()}); load average when done {load:.2f} "
            "(other work shares these cores: CPU time is taken, the searches' budgets' "
            "clock, but a loaded core runs slower).  \n"
            f"{args.games} seeded random 3-player games (bots of `companion play`, both "
            "editions); a live session starts from a position at turn 15 or later as the "
            "camera knows it and is shown one picture: `two` moves on, `three` moves on, or "
            "`none`, three moves on with one thing changed that no three moves explain; the "
            "pile's top three cards shown, half the tables without levels (`pile in no known "
            "order`: the tables whose new pile cards could lie in more than one order). "
            "Time: CPU time of `observe` to its verdict (first picture of the table; a "
            f"repeat is remembered), the fastest of {args.repeat} fresh sessions; the "
            "searches' time is the part spent in `explain_two`/`explain_three`. Budgets: "
            f"two moves {TWO_MOVES_BUDGET_S:g} s, three {THREE_MOVES_BUDGET_S:g} s of CPU "
            "time.\n\n"
            f"{table}\n")
    write_section(SECTION, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
