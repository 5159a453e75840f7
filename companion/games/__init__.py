"""Game registry, OpenSpiel style: each game declares its metadata once and registers it.

Importing :mod:`companion.games` registers every built-in game, so ``get_game("zarcana")``
works without knowing the module.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from companion.core.errors import CompanionError


@dataclass(frozen=True, slots=True)
class GameInfo:
    """What the companion needs to know about a game before it starts one."""

    name: str
    title: str
    editions: tuple[str, ...]
    min_players: int
    max_players: int
    rules_files: tuple[str, ...]
    new_game: Callable[..., Any]


_REGISTRY: dict[str, GameInfo] = {}
_BUILTIN = ("companion.games.zarcana",)


def register(info: GameInfo) -> GameInfo:
    if info.name in _REGISTRY and _REGISTRY[info.name] is not info:
        raise ValueError(f"game {info.name!r} is registered twice")
    _REGISTRY[info.name] = info
    return info


def _load_builtin() -> None:
    for module in _BUILTIN:
        importlib.import_module(module)


def games() -> tuple[GameInfo, ...]:
    _load_builtin()
    return tuple(_REGISTRY.values())


def get_game(name: str) -> GameInfo:
    _load_builtin()
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY))
        raise CompanionError(f"unknown game {name!r}: known games are {known}") from None
