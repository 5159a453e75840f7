"""Recorded games: the SQLite game files, reading them back, replaying and exporting them."""

from companion.recording.store import (
    KIND_ALIASES,
    KINDS,
    MOVE_KINDS,
    BrokenGame,
    EmptyGame,
    GameRecorder,
    GameSummary,
    RecordedEvent,
    RecordedGame,
    RecordingError,
    accepted_moves,
    default_games_dir,
    list_games,
    new_game_path,
    open_game,
    rebuild_state,
    replay_states,
    summarize,
)

__all__ = ["KIND_ALIASES", "KINDS", "MOVE_KINDS", "BrokenGame", "EmptyGame", "GameRecorder", "GameSummary", "RecordedEvent",
           "RecordedGame", "RecordingError", "accepted_moves", "default_games_dir", "list_games", "new_game_path",
           "open_game", "rebuild_state", "replay_states", "summarize"]
