"""Whole seeded bot games, as ``companion play zarcana --bots --seed SEED`` plays them, for
the tests of every folder (its own name, not a conftest: several folders have one).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from companion.commands.play import choose_bot_move
from companion.games.zarcana.engine import ZarcanaState, new_game
from companion.games.zarcana.rules import Edition


@dataclass(frozen=True)
class BotGame:
    """A whole seeded bot game: the start, every move as the engine recorded it, the states."""

    seed: int
    players: tuple[str, ...]
    start: ZarcanaState
    moves: tuple[str, ...]
    states: tuple[ZarcanaState, ...]   # states[k] is the state after moves[k]

    @property
    def final(self) -> ZarcanaState:
        return self.states[-1]


def play_bot_game(seed: int, players: int = 3,
                  edition: Edition | str = "looney") -> BotGame:
    """The same bot stream as ``companion play --bots`` for this seed."""
    start = new_game(players, edition=edition, seed=seed)
    rng = random.Random(f"zarcana-bots:{seed}")
    st, moves, states = start, [], []
    while not st.is_over:
        st = st.apply(choose_bot_move(st, rng))
        moves.append(st.history[-1])
        states.append(st)
    return BotGame(seed, tuple(c.value for c in start.players), start, tuple(moves),
                   tuple(states))
