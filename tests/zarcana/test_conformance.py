"""Seeded random playouts of both editions for 2 to 6 players, checking invariants after
every move. ZARCANA_CONFORMANCE_GAMES sets the games per edition-and-player-count: the
default 60 (600 games, plus 120 in the settings variants) runs in about four minutes on a
two-core machine, leaving CI room for the vision and window tests;
ZARCANA_CONFORMANCE_GAMES=300 plays over 3,000."""

from __future__ import annotations

import os
import random
from collections import Counter, defaultdict

import pytest

from companion.core.cards import tarot_deck
from companion.games.zarcana import Edition, new_game, parse_move
from companion.games.zarcana.engine import dumps, invariant_errors, loads
from companion.games.zarcana.moves import Action
from companion.games.zarcana.rules import Power

GAMES = int(os.environ.get("ZARCANA_CONFORMANCE_GAMES", "60"))
#: a game that has not ended after this many moves is a failure (random games end in ~200)
MAX_MOVES = 3000
#: a position where every player, for two full rounds, could only pass is dead: the rules
#: have no way out of it (e.g. every territory destroyed while all hands are full), so the
#: playout stops there and the sweep counts it (and the sweep fails)
DEAD_ROUNDS = 2
#: Since the engine ends a game whose last territory is gone (docs/zarcana-rulings.md),
#: no dead position is known: any one found is a failure.
#: powers that may lift a space above the population limit of 3
OVER_LIMIT_POWERS = {Power.EMPRESS, Power.HERMIT}
#: round-trip the save every this many moves, and compare the reloaded game's legal moves
#: every RELOAD_MOVES_EVERY moves (every move of each sweep's first game does both)
SAVE_EVERY = 5
RELOAD_MOVES_EVERY = 25

VARIANTS = {
    "optional": dict(
        optional_trumps=(("major-09", "assassin"), ("major-12", "plague"), ("major-15", "miser"),
                         ("major-17", "holy-grail"), ("major-19", "evil-eye"), ("major-20", "catapult"),
                         ("major-05", "alchemist"), ("major-06", "ghost"), ("major-02", "doppelganger")),
        extra_cards=("extra-gateway", "extra-doppelganger"),
        first_player="bid"),
    "fewer-trios-13": dict(pieces_per_size=3, layout_cards=13, box_cards=25, first_player="bid"),
}


def all_cards(st) -> Counter:
    """Every card where it lies: board stacks, hands, draw and discard piles, box, in flight."""
    c: Counter = Counter()
    for stack in st.board.values():
        c.update(card for card, _ in stack)
    for h in st.hands.values():
        c.update(h)
    for zone in (st.deck, st.discard, st.box, st.in_flight):
        c.update(zone)
    return c


def excess(st) -> int:
    return sum(max(0, len(ps) - 3) for ps in st.pieces.values())


def play_and_check(edition: Edition, players: int, seed: int, *, full_saves: bool = False,
                   **settings: object) -> tuple[int, dict[str, int]]:
    """Play one seeded random game; returns (moves, move kinds); kinds["dead"] = 1 when the
    game stopped in a dead position instead of ending."""
    st = new_game(players, edition=edition, seed=seed, **settings)
    rng = random.Random(f"conformance:{edition.value}:{players}:{seed}")
    n = st.settings.pieces_per_size
    full = Counter(tarot_deck(st.settings.extra_cards))
    kinds: dict[str, int] = defaultdict(int)
    moves = 0
    only_pass = 0
    assert invariant_errors(st) == []
    while not st.is_over:
        assert moves < MAX_MOVES, f"game {edition.value}/{players}/{seed} did not end"
        legal = st.legal_moves()
        assert legal, f"no legal move in a game that is not over: {st.history[-5:]}"
        only_pass = only_pass + 1 if [type(m).__name__ for m in legal] == ["Pass"] else 0
        if only_pass > DEAD_ROUNDS * len(st.players):
            kinds["dead"] = 1
            break
        groups: dict[str, list] = defaultdict(list)
        for m in legal:
            groups[type(m).__name__].append(m)
        kind = rng.choice(sorted(groups))
        move = rng.choice(groups[kind])
        kinds[kind] += 1
        where = f"{edition.value}/{players}p/seed {seed}, move {moves}: {move}"
        # the enumerator and the verdict agree, and the text notation round-trips
        verdict = st.check(move)
        assert verdict.legal, f"{where}: listed but {verdict.explain()}"
        assert parse_move(str(move)) == move, where
        assert st.check(str(move)).legal, where
        before = dumps(st) if (full_saves or moves % SAVE_EVERY == 0) else None
        before_excess = excess(st)
        new = st.apply(move)
        # apply is pure
        if before is not None:
            assert dumps(st) == before, f"{where}: apply changed the old state"
        problems = invariant_errors(new)
        assert problems == [], f"{where}: {problems}"
        assert all_cards(new) == full, f"{where}: cards lost or duplicated"
        for c in new.all_colors:
            on_board = sum(1 for _, p in new.pieces_of(c))
            assert sum(new.stashes[c]) + on_board == 3 * n, f"{where}: {c.value} pyramids"
        power = move.power if isinstance(move, Action) else None
        if power not in OVER_LIMIT_POWERS:
            assert excess(new) <= before_excess, f"{where}: population over 3"
        if full_saves or moves % SAVE_EVERY == 0:
            text = dumps(new)
            again = loads(text)
            assert dumps(again) == text, f"{where}: save round trip"
        if full_saves or moves % RELOAD_MOVES_EVERY == 0:
            # (the same moves; their order may follow the board's insertion order)
            assert sorted(map(str, again.legal_moves())) == sorted(map(str, new.legal_moves())), \
                f"{where}: reloaded game differs"
        st = new
        moves += 1
    scores = st.scores()
    assert set(scores) >= set(st.players)
    if not kinds.get("dead"):
        assert st.legal_moves() == []
    return moves, dict(kinds)


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
@pytest.mark.parametrize("edition", [Edition.LOONEY, Edition.E1996], ids=["looney", "1996"])
def test_conformance_random_games(edition, players):
    total = 0
    dead = []
    for seed in range(GAMES):
        moves, kinds = play_and_check(edition, players, seed, full_saves=(seed == 0))
        total += moves
        if kinds.get("dead"):
            dead.append(seed)
    assert total > GAMES * 20
    assert not dead, f"dead positions in games {dead}"


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("edition", [Edition.LOONEY, Edition.E1996], ids=["looney", "1996"])
def test_conformance_settings_variants(edition, variant):
    kinds: dict[str, int] = defaultdict(int)
    for seed in range(max(2, GAMES // 2)):
        players = 2 + seed % 5
        _, k = play_and_check(edition, players, 1000 + seed, **VARIANTS[variant])
        for key, v in k.items():
            kinds[key] += v
    assert kinds["Bid"] > 0                      # the bidding ran
    assert kinds["dead"] == 0, "dead positions"


def test_conformance_is_deterministic():
    a = new_game(3, seed=77)
    b = new_game(3, seed=77)
    assert dumps(a) == dumps(b)
    m1, k1 = play_and_check(Edition.LOONEY, 3, 77)
    m2, k2 = play_and_check(Edition.LOONEY, 3, 77)
    assert (m1, k1) == (m2, k2)
