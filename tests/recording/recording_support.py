"""Helpers the recording tests share: seeded bot games and recorded copies of them.

(Not a conftest.py: several test folders have one, and they would shadow each other as
``conftest``.)
"""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass
from pathlib import Path

from companion.commands.play import choose_bot_move
from companion.games.zarcana.engine import ZarcanaState, dumps, new_game
from companion.recording import GameRecorder


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


def play_bot_game(seed: int, players: int = 3, edition: str = "looney") -> BotGame:
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


@functools.cache
def bot_game(seed: int = 5, players: int = 3, edition: str = "looney") -> BotGame:
    """A finished bot game, played once per test session."""
    return play_bot_game(seed, players, edition)


def record_bot_game(path: Path, game: BotGame, *, moves: int | None = None,
                    finish: bool = True) -> None:
    """Record ``game`` (its first ``moves`` moves) the way the companion does."""
    start = game.start
    with GameRecorder.create(path, game="zarcana", edition=start.settings.edition.value,
                             players=game.players, settings=start.settings.to_dict(),
                             seed=game.seed, initial_state=dumps(start)) as rec:
        n = len(game.moves) if moves is None else moves
        for move, state in zip(game.moves[:n], game.states[:n]):
            rec.record("move", move, state=dumps(state))
        if finish and n == len(game.moves):
            final = game.final
            rec.finish({c.value: v for c, v in final.scores().items()},
                       [c.value for c in final.winners()])
