"""Helpers the recording tests share: seeded bot games and recorded copies of them.

(Not a conftest.py: several test folders have one, and they would shadow each other as
``conftest``.)
"""

from __future__ import annotations

import functools
from pathlib import Path

from companion.games.zarcana.engine import dumps
from companion.recording import GameRecorder

from bot_games import BotGame, play_bot_game  # (shared with the live tests)


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
