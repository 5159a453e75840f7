"""Zarcana, both editions: the 1996 rules and the Looney Pyramids edition."""

from companion.games import GameInfo, register
from companion.games.zarcana.engine import IncompleteMoveError, ZarcanaState, new_game
from companion.games.zarcana.moves import UNKNOWN, Action, Move, Source, parse_move
from companion.games.zarcana.rules import Edition, Power, Settings

INFO = register(GameInfo(
    name="zarcana",
    title="Zarcana",
    editions=tuple(e.value for e in Edition),
    min_players=2,
    max_players=6,
    rules_files=("zarcana-1996-icehouse-rules.txt", "zarcana-looney-pyramids-edition.txt"),
    new_game=new_game,
))

__all__ = ["INFO", "Action", "Edition", "IncompleteMoveError", "Move", "Power", "Settings",
           "Source", "UNKNOWN", "ZarcanaState", "new_game", "parse_move"]
