"""Recorded games: one embedded SQLite file per game, written move by move.

A game file holds the game's metadata (one row) and an append-only list of events: the
start position, each accepted move, overrides, corrections and notes, each with its wall
time, the observation record that confirmed it, a keyframe JPEG and the engine state after
it. The file is written in WAL mode with ``synchronous=FULL`` and one transaction per event,
so a crash or a power cut loses at most the event being written: every event that
:meth:`GameRecorder.record` returned for is on disk.

Reading never needs the engine (``open_game``, ``list_games``); :func:`rebuild_state` replays
the moves through the Zarcana engine and checks them against the stored states.

Event numbers: events are numbered in the order they were recorded, from 1; a start
position recorded first (as :meth:`GameRecorder.create` does with ``initial_state``) is
event 0. Numbers never change: the event table is append-only (triggers refuse updates and
deletes), and a taken-back move stays in the file, followed by its "undo" event.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import sqlite3
import stat
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import IO, TYPE_CHECKING, Any

from companion import __version__
from companion.core.errors import CompanionError
from companion.core.files import SQLITE_HEADER, file_in_the_way, given_path, not_a_folder

if TYPE_CHECKING:
    from companion.games.zarcana.engine import ZarcanaState
    from companion.games.zarcana.state import FaceDownNames

log = logging.getLogger(__name__)

#: ``PRAGMA application_id`` of a game file ("ATC0"): tells our files from other SQLite files.
APPLICATION_ID = 0x41544330
#: ``PRAGMA user_version``: the schema this module writes and reads.
SCHEMA_VERSION = 1
#: Event kinds. "start" is the position before the first move (event 0); "move" an accepted
#: legal move (seen by the camera, or clicked: then it has no observation); "override" a move
#: the players accepted although the engine refused it; "correction" a fixed reading (a
#: misread card or pyramid; with the state when it changed the position); "undo" takes back
#: the last accepted move; "illegal" a refused table change, kept for the record (it changes
#: nothing); "note" free text.
KINDS: tuple[str, ...] = ("start", "move", "override", "correction", "undo", "illegal", "note")
#: Kinds whose ``move`` is a move the game went through (see :meth:`RecordedGame.moves`).
MOVE_KINDS: tuple[str, ...] = ("move", "override")
#: Other names callers use for a kind: stored under the kind they stand for.
KIND_ALIASES: dict[str, str] = {"setup": "start", "manual": "move", "clicked": "move"}
#: How long a write waits for another program's lock on the game file (ms)
WRITE_WAIT_MS = 2000
#: File name ending of game files; ``list_games`` looks at these.
SUFFIX = ".db"
#: The line a correction's ``move`` holds where the camera read a face-down card's name off
#: the discard pile as a move destroyed it: ``pile-name before 1,0 major-10`` (the move
#: recorded next destroyed it) or ``pile-name after 1,0 major-10`` (the last move standing
#: did: it was clicked before a picture showed the pile). A continued game and the replay
#: find such a name by it (:func:`pile_name_read`), never by the note's wording.
PILE_NAME_MARK = "pile-name"
#: The line a correction's ``move`` holds where the camera saw a card the Alchemist covered
#: at once (built from a draw pile nobody sees: "?" in the game) as a move took the card
#: above it away: ``covered-name before 1,0 cups-04`` (the move recorded next uncovered
#: it: the correction's state names it in the position before) or ``covered-name after 1,0
#: cups-04`` (the last move standing did: clicked before a picture showed the card); or
#: ``covered-name said 1,0 cups-04`` where no picture could name it and the players did
#: (uncovered by some earlier move: named from where it lay on top then). The replay
#: names the card from the correction's state alone, as it names a face-down card
#: (:func:`~companion.games.zarcana.state.names_given`); a continued game passes such a
#: correction over as no misread to hold (:func:`covered_name_read`).
COVERED_NAME_MARK = "covered-name"
#: the words after the mark: seen before or after the move that uncovered it, or said by
#: the players
COVERED_NAME_WHEN: tuple[str, ...] = ("before", "after", "said")
#: The words the note of such a correction held in files written before the mark
#: (2026-12-02), which a continued game and the replay read instead: the session's wording
#: of then, kept here as those files have it
_PILE_NAME_NOTE_BEFORE_THE_MARK = "seen on the discard pile"
#: The endings a new game file may have (or none): :meth:`GameRecorder.create` refuses others
GAME_SUFFIXES: tuple[str, ...] = (".db", ".sqlite", ".sqlite3", ".db3")
#: The ending of a game record in JSON lines (``companion play --record FILE.jsonl``)
LINES_SUFFIX = ".jsonl"

_SCHEMA = f"""
CREATE TABLE game (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    game        TEXT NOT NULL,
    edition     TEXT NOT NULL,
    players     TEXT NOT NULL,      -- JSON list, in turn order
    settings    TEXT NOT NULL,      -- JSON object
    seed        INTEGER,
    created     TEXT NOT NULL,      -- ISO 8601 with the UTC offset
    ended       TEXT,
    app_version TEXT NOT NULL,
    scores      TEXT,               -- JSON object player -> score, once ended
    winners     TEXT                -- JSON list, once ended
);
CREATE TABLE event (
    number      INTEGER PRIMARY KEY,
    time        TEXT NOT NULL,
    kind        TEXT NOT NULL CHECK (kind IN ({", ".join(repr(k) for k in KINDS)})),
    turn        INTEGER,
    player      TEXT,
    move        TEXT,               -- engine notation
    observation TEXT,               -- JSON observation record, NULL for clicked moves
    state       TEXT,               -- engine dumps() after the event
    note        TEXT NOT NULL DEFAULT ''
);
-- Keyframes live apart so that reading the event list never pages through JPEG data.
CREATE TABLE keyframe (
    number      INTEGER PRIMARY KEY REFERENCES event(number),
    jpeg        BLOB NOT NULL
);
CREATE TRIGGER event_no_update BEFORE UPDATE ON event
    BEGIN SELECT RAISE(ABORT, 'recorded events are append-only'); END;
CREATE TRIGGER event_no_delete BEFORE DELETE ON event
    BEGIN SELECT RAISE(ABORT, 'recorded events are append-only'); END;
CREATE TRIGGER keyframe_no_update BEFORE UPDATE ON keyframe
    BEGIN SELECT RAISE(ABORT, 'recorded keyframes are append-only'); END;
CREATE TRIGGER keyframe_no_delete BEFORE DELETE ON keyframe
    BEGIN SELECT RAISE(ABORT, 'recorded keyframes are append-only'); END;
"""

_TABLES = frozenset({"game", "event", "keyframe"})


class RecordingError(CompanionError, ValueError):
    """A game file that cannot be created, written or read; the message names the file."""


class WriteFailed(RecordingError):
    """An event (or the game's end) that was right but could not be written to the file (a
    full disk, a file gone read-only, a lock held): the same write may succeed later.
    ``full``: the disk (or the file's quota) is full, where a smaller event may still fit."""

    def __init__(self, message: str, full: bool = False) -> None:
        super().__init__(message)
        self.full = full


def _full(exc: sqlite3.Error) -> bool:
    return getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL


# ------------------------------------------------------------------------ records ---

@dataclass(frozen=True)
class RecordedEvent:
    """One event of a recorded game, as stored."""

    number: int
    time: datetime
    kind: str
    move: str | None
    player: str | None
    observation: dict[str, Any] | None
    has_keyframe: bool
    state: str | None
    note: str
    #: the turn the event happened in (None when it was not known)
    turn: int | None = None
    #: a move or override that a later "undo" took back
    undone: bool = False


@dataclass(frozen=True)
class RecordedGame:
    """A whole recorded game, read from its file (keyframes are read on demand)."""

    path: Path
    game: str
    edition: str
    players: tuple[str, ...]
    settings: dict[str, Any]
    seed: int | None
    created: datetime
    ended: datetime | None
    scores: dict[str, int] | None
    winners: tuple[str, ...] | None
    events: tuple[RecordedEvent, ...]
    app_version: str = ""
    #: what is lost where the file was cut short (an interrupted copy) and only the events
    #: before the cut are read (:func:`open_game`); None for a whole file
    cut_short: str | None = None
    #: the keyframes of a file cut short, read with its events (the file itself no longer
    #: opens): number -> JPEG
    salvaged_keyframes: Mapping[int, bytes] | None = field(default=None, repr=False,
                                                           compare=False)

    @property
    def finished(self) -> bool:
        return self.ended is not None

    def moves(self) -> list[str]:
        """The move texts the game went through, in order (kinds move and override; moves
        taken back by an undo are left out)."""
        return [e.move for e in self.events
                if e.kind in MOVE_KINDS and e.move is not None and not e.undone]

    def event(self, number: int) -> RecordedEvent:
        for e in self.events:
            if e.number == number:
                return e
        raise RecordingError(f"{self.path}: no event {number}")

    def keyframe(self, number: int) -> bytes | None:
        """The keyframe JPEG of event ``number``, or None if it has none."""
        if self.salvaged_keyframes is not None:
            return self.salvaged_keyframes.get(number)
        # The whole file was checked when it was opened; stepping through keyframes of a
        # replay should not re-read every page each time.
        try:
            with _reading(self.path, integrity=False) as con:
                row = _query_one(self.path, con, "SELECT jpeg FROM keyframe WHERE number = ?",
                                 (number,))
        except RecordingError as exc:
            # a damaged page among the pictures (the moves were read), or the file changed
            # since: this one is lost
            log.warning("%s", exc)
            return None
        return None if row is None else bytes(row[0])


@dataclass(frozen=True)
class GameSummary:
    """One line of :func:`list_games`: what a game file holds, without its events."""

    path: Path
    game: str
    edition: str
    players: tuple[str, ...]
    created: datetime
    ended: datetime | None
    moves: int
    scores: dict[str, int] | None
    winners: tuple[str, ...] | None

    @property
    def finished(self) -> bool:
        return self.ended is not None


@dataclass(frozen=True)
class BrokenGame:
    """A file in the games folder that could not be read, and why."""

    path: Path
    reason: str


@dataclass(frozen=True)
class EmptyGame:
    """A file in the games folder with nothing of a game in it (:func:`never_made`): what a
    companion stopped before the deal (killed, a power cut) leaves. Nothing is lost."""

    path: Path


# ------------------------------------------------------------------------ helpers ---

def _now() -> datetime:
    return datetime.now().astimezone()


def _time_text(t: datetime) -> str:
    return t.isoformat(timespec="milliseconds")


def _at_text(at: datetime | None) -> str:
    """When an event happened (``at``, default now) as a game file stores it: with its
    offset from UTC, as every time there is; a time without one (``datetime.now()``) is
    taken as this computer's local time."""
    return _time_text(_now() if at is None else at if at.tzinfo is not None else at.astimezone())


def _name(x: object) -> str:
    """A player as text; an enum member (a Color) gives its value."""
    value = getattr(x, "value", x)
    return str(value)


def default_games_dir() -> Path:
    """Where recorded games go: ``$XDG_DATA_HOME/arcana-companion/games``.

    ``$XDG_DATA_HOME`` defaults to ``~/.local/share`` as the XDG spec says. The folder is not
    created here; :meth:`GameRecorder.create` creates missing folders.
    """
    base = os.environ.get("XDG_DATA_HOME", "").strip()
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".local" / "share"
    return root / "arcana-companion" / "games"


def new_game_path(game: str = "zarcana", folder: Path | str | None = None,
                  when: datetime | None = None) -> Path:
    """A fresh file name for a new game, e.g. ``zarcana-2024-05-01-153012.db``.

    Names sort by start time; a second game started in the same second gets ``-2``, ``-3``...
    """
    where = given_path(folder).expanduser() if folder is not None else default_games_dir()
    stamp = (when or _now()).strftime("%Y-%m-%d-%H%M%S")
    path = where / f"{game}-{stamp}{SUFFIX}"
    n = 2
    while path.exists():
        path = where / f"{game}-{stamp}-{n}{SUFFIX}"
        n += 1
    return path


def _describe_sqlite_error(exc: sqlite3.Error) -> str:
    text = str(exc)
    if "file is not a database" in text:
        return "not a game file (not an SQLite database)"
    if "malformed" in text or "disk image" in text:
        return f"the file is damaged ({text}); it may have been truncated or overwritten"
    if "unable to open" in text:
        return f"cannot be opened ({text})"
    return text


def _query(path: Path, con: sqlite3.Connection, sql: str,
           params: Sequence[Any] = ()) -> list[Any]:
    """All rows of a query; damage found while reading them is a RecordingError too."""
    try:
        return con.execute(sql, params).fetchall()
    except sqlite3.Error as exc:
        raise RecordingError(f"{path}: {_describe_sqlite_error(exc)}") from None


def _query_one(path: Path, con: sqlite3.Connection, sql: str,
               params: Sequence[Any] = ()) -> Any:
    rows = _query(path, con, sql, params)
    return rows[0] if rows else None


def _saved_position(path: Path) -> bool:
    """Whether ``path`` holds a game position as `play --save` writes it: one JSON object
    with the board, the hands and the turn (a JSON-lines record starts with its header)."""
    try:
        with path.open("r", encoding="utf-8") as fh:
            first = json.loads(fh.readline())
    except (OSError, ValueError):
        return False
    return isinstance(first, dict) and all(k in first for k in ("board", "hands", "current"))


def _connect(path: Path, *, write: bool) -> sqlite3.Connection:
    """Open an existing file. ``mode=rw`` never creates a file for a mistyped name; a file
    that the OS write-protects is opened read-only by SQLite itself."""
    if not path.exists():
        raise RecordingError(f"{path}: no such game file")
    if path.is_dir():
        raise RecordingError(f"{path}: is a folder, not a game file")
    if path.stat().st_size == 0:
        raise RecordingError(f"{path}: not a game file (the file is empty: a companion "
                             "stopped while making it? it holds nothing, remove it)")
    if _head(path, 64).lstrip().startswith(b"{"):
        # (SQLite says "not a database" of it, as of any other file)
        if _saved_position(path):
            raise RecordingError(f"{path}: a saved game (as `companion play --save` writes: "
                                 "one position, not a game file): continue it with `companion "
                                 f"play zarcana --load {path}`")
        raise RecordingError(f"{path}: a game record in JSON lines (as `companion play --record "
                             "FILE.jsonl` writes), not a game file: it is read as it is, one "
                             "JSON object a line")
    real = path.resolve()     # (SQLite opens the file a link names, its log beside it)
    mode = "mode=rw"
    if not write and not os.access(real.parent, os.W_OK):
        # A WAL file is opened with a shared-memory file beside it, which a read-only
        # folder (a backup, a shared copy, a read-only mount) cannot hold. A game closed
        # properly has its log folded into the file, and reads as it lies (immutable); one
        # with a log left over cannot be read whole from here.
        if _log_holds_moves(path):
            raise RecordingError(f"{path}: the folder is read-only and the game's log "
                                 f"{_log_of(path).name} holds moves not yet in the file: "
                                 "copy the folder somewhere you can write, and open the copy")
        mode = "mode=ro&immutable=1"
    try:
        con = sqlite3.connect(f"{real.as_uri()}?{mode}", uri=True, timeout=10.0,
                              check_same_thread=False)
    except sqlite3.Error as exc:
        raise RecordingError(f"{path}: {_describe_sqlite_error(exc)}") from None
    if not write:
        con.execute("PRAGMA query_only = ON")
    con.text_factory = _LenientText(path)
    return con


class _LenientText:
    """A connection's ``text_factory``: text that is not UTF-8 (one byte changed by a disk
    or a hand edit) is read with U+FFFD in place of the bytes, and said once. Strict
    decoding made a whole game unreadable for export and replay over one byte in a name or
    a note, while `companion games` (which never reads those) listed it as fine."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.said = False

    def __call__(self, raw: bytes) -> str:
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            if not self.said:
                self.said = True
                log.warning("%s: text that is not UTF-8 (byte 0x%02x in %r); read with "
                            "U+FFFD in its place", self.path, raw[exc.start],
                            raw[max(0, exc.start - 20):exc.start + 20])
            return raw.decode("utf-8", errors="replace")


def _log_of(path: Path) -> Path:
    """The write-ahead log SQLite keeps beside a game file (beside the file a link names)."""
    real = path.resolve()
    return real.with_name(real.name + "-wal")


def _log_holds_moves(path: Path) -> bool:
    """Whether the game's log holds anything not yet folded into the file."""
    log_file = _log_of(path)
    return log_file.exists() and log_file.stat().st_size > 0


def _check_file(path: Path, con: sqlite3.Connection, *, integrity: bool = True,
                writing: bool = False) -> None:
    """Is this one of our game files, of a schema we read, and (``integrity``) undamaged?"""
    app_id = _query_one(path, con, "PRAGMA application_id")[0]
    version = _query_one(path, con, "PRAGMA user_version")[0]
    tables = {r[0] for r in _query(path, con,
                                   "SELECT name FROM sqlite_master WHERE type = 'table'")}
    if app_id != APPLICATION_ID:
        if not tables:
            # (opening it made an empty log beside it: an empty one counts as none)
            hint = "" if _log_holds_moves(path) else (
                f"; if it is a game copied without its {_log_of(path).name} file, copy that "
                "too: a game not closed keeps its moves there; else a companion stopped "
                "while making it, and it holds nothing: remove it")
            raise RecordingError(f"{path}: not a game file (an empty SQLite database{hint})")
        shown = ", ".join(sorted(tables)[:6])
        raise RecordingError(f"{path}: not a game file (an SQLite database of another kind, "
                             f"with tables {shown})")
    if version > SCHEMA_VERSION:
        raise RecordingError(f"{path}: written by a newer version of the companion (game file "
                             f"schema {version}; this version reads up to {SCHEMA_VERSION})")
    if version < 1 or not _TABLES <= tables:
        missing = ", ".join(sorted(_TABLES - tables)) or "none"
        raise RecordingError(f"{path}: incomplete game file (schema {version}, "
                             f"missing tables: {missing})")
    if not integrity:
        return
    try:
        problems = [r[0] for r in con.execute("PRAGMA quick_check")]
    except sqlite3.Error as exc:
        problems = [str(exc)]      # (the check itself stopped on the damage)
    if problems != ["ok"]:
        # (SQLite's first line names the damage; the rest lists pages by the hundred)
        first = " ".join(str(problems[0]).replace("*** in database main ***", "").split())
        said = first if len(first) <= 100 else first[:97] + "..."
        if _moves_intact(con):
            if not writing:
                # a damaged page among the pictures: the moves are read, the pictures as far
                # as they can be (RecordedGame.keyframe)
                log.warning("%s: the file is damaged in its pictures (%s); its moves are "
                            "intact and read", path, said)
                return
            raise RecordingError(f"{path}: the file is damaged in its pictures ({said}); its "
                                 "moves are intact (`companion export` reads them), but no "
                                 "more can be recorded into it: record a new game")
        raise RecordingError(f"{path}: the file is damaged ({said})")


def _moves_intact(con: sqlite3.Connection) -> bool:
    """Whether the game's header and its events check out in a file whose whole check
    failed: ``quick_check`` of those tables alone, every event read whole (the check sees
    the pages' structure, not their text), event numbers without a gap, and no picture of
    an event the table no longer holds (a page of events written back from an older copy
    passes the rest and loses the last events; where the pictures' table cannot be read at
    all, that last check cannot be made)."""
    try:
        if not all([tuple(r) for r in con.execute(f"PRAGMA quick_check({t})")] == [("ok",)]
                   for t in ("game", "event")):
            return False
        con.execute("SELECT * FROM game").fetchall()
        con.execute("SELECT number, time, kind, turn, player, move, observation, state, note "
                    "FROM event").fetchall()
        low, high, n = con.execute("SELECT min(number), max(number), count(*) "
                                   "FROM event").fetchone()
    except sqlite3.Error:
        return False
    if n and high - low + 1 != n:
        return False
    try:
        orphans = con.execute("SELECT count(*) FROM keyframe k WHERE NOT EXISTS "
                              "(SELECT 1 FROM event e WHERE e.number = k.number)").fetchone()
    except sqlite3.Error:
        return True
    return bool(orphans[0] == 0)


class _reading:
    """``with _reading(path) as con``: a checked read-only connection, always closed."""

    def __init__(self, path: Path, *, integrity: bool = True) -> None:
        self.path = path
        self.integrity = integrity
        self.con: sqlite3.Connection | None = None

    def __enter__(self) -> sqlite3.Connection:
        self.con = _connect(self.path, write=False)
        try:
            _check_file(self.path, self.con, integrity=self.integrity)
        except BaseException:
            self.con.close()
            raise
        return self.con

    def __exit__(self, *exc: object) -> None:
        if self.con is not None:
            self.con.close()


def _json_field(path: Path, where: str, text: str | None) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except (json.JSONDecodeError, TypeError) as exc:
        raise RecordingError(f"{path}: {where} is not valid JSON ({exc})") from None


def _time_field(path: Path, where: str, text: str | None) -> datetime | None:
    if text is None:
        return None
    try:
        return datetime.fromisoformat(text)
    except (ValueError, TypeError):
        raise RecordingError(f"{path}: {where} is not a time: {text!r}") from None


@dataclass(frozen=True)
class _Meta:
    game: str
    edition: str
    players: tuple[str, ...]
    settings: dict[str, Any]
    seed: int | None
    created: datetime
    ended: datetime | None
    app_version: str
    scores: dict[str, int] | None
    winners: tuple[str, ...] | None


def _read_meta(path: Path, con: sqlite3.Connection) -> _Meta:
    row = _query_one(path, con, "SELECT game, edition, players, settings, seed, created, ended, "
                            "app_version, scores, winners FROM game WHERE id = 1")
    if row is None:
        raise RecordingError(f"{path}: incomplete game file (no game metadata)")
    game, edition, players, settings, seed, created, ended, app_version, scores, winners = row
    players_v = _json_field(path, "the player list", players)
    if not isinstance(players_v, list) or not all(isinstance(p, str) for p in players_v):
        raise RecordingError(f"{path}: the player list is not a list of names: {players!r}")
    settings_v = _json_field(path, "the settings", settings)
    if not isinstance(settings_v, dict):
        raise RecordingError(f"{path}: the settings are not a JSON object: {settings!r}")
    scores_v = _json_field(path, "the final scores", scores)
    if scores_v is not None and not (isinstance(scores_v, dict) and all(
            isinstance(v, int) for v in scores_v.values())):
        raise RecordingError(f"{path}: the final scores are not player -> score: {scores!r}")
    winners_v = _json_field(path, "the winners", winners)
    if winners_v is not None and not isinstance(winners_v, list):
        raise RecordingError(f"{path}: the winners are not a list: {winners!r}")
    created_t = _time_field(path, "the start time", created)
    assert created_t is not None  # NOT NULL in the schema
    if seed is not None and not isinstance(seed, int):
        raise RecordingError(f"{path}: the seed is not a whole number: {seed!r}")
    return _Meta(
        game=str(game), edition=str(edition), players=tuple(players_v), settings=settings_v,
        seed=seed, created=created_t, ended=_time_field(path, "the end time", ended),
        app_version=str(app_version), scores=scores_v,
        winners=None if winners_v is None else tuple(str(w) for w in winners_v))


def _read_events(path: Path, con: sqlite3.Connection) -> tuple[RecordedEvent, ...]:
    try:
        rows = _query(path, con, """
            SELECT e.number, e.time, e.kind, e.turn, e.player, e.move, e.observation, e.state,
                   e.note, k.number IS NOT NULL
            FROM event e LEFT JOIN keyframe k ON k.number = e.number
            ORDER BY e.number""")
    except RecordingError:
        # the pictures' table damaged (_check_file let it by: the events check out): the
        # moves without their pictures
        rows = [(*r, False) for r in _query(path, con, """
            SELECT number, time, kind, turn, player, move, observation, state, note
            FROM event ORDER BY number""")]
    return _events_of(path, rows)


def _events_of(path: Path, rows: Sequence[Sequence[Any]]) -> tuple[RecordedEvent, ...]:
    """The events of ``rows`` (number, time, kind, turn, player, move, observation, state,
    note, has a keyframe), checked; RecordingError names the event that is wrong."""
    undone = _undone_numbers([(int(r[0]), str(r[2])) for r in rows])
    events = []
    for number, at, kind, turn, player, move, obs, state, note, has_kf in rows:
        where = f"event {number}"
        when = _time_field(path, f"the time of {where}", at)
        assert when is not None  # NOT NULL in the schema
        observation = _json_field(path, f"the observation of {where}", obs)
        if observation is not None and not isinstance(observation, dict):
            raise RecordingError(f"{path}: the observation of {where} is not a JSON object")
        if turn is not None and (isinstance(turn, bool) or not isinstance(turn, int)):
            # (SQLite keeps what a hand edit wrote, whatever the column's type)
            raise RecordingError(f"{path}: the turn of {where} is not a whole number: "
                                 f"{turn!r}")
        events.append(RecordedEvent(
            number=int(number), time=when, kind=str(kind), move=move, player=player,
            observation=observation, has_keyframe=bool(has_kf), state=state,
            note=str(note or ""), turn=turn, undone=int(number) in undone))
    return tuple(events)


def _undone_numbers(kinds: Sequence[tuple[int, str]]) -> set[int]:
    """The numbers of the moves that an "undo" took back (each undo the latest one left)."""
    accepted: list[int] = []
    undone: set[int] = set()
    for number, kind in kinds:
        if kind in MOVE_KINDS:
            accepted.append(number)
        elif kind == "undo" and accepted:
            undone.add(accepted.pop())
    return undone


# ------------------------------------------------------------------------ reading ---

def open_game(path: Path | str) -> RecordedGame:
    """Read a whole game file. RecordingError (naming the file) when it is missing, damaged
    or not a game file. The file is not changed."""
    p = given_path(path).expanduser()
    # a file cut short (an interrupted copy) holds nearly every event still: those before
    # the cut are read, and what is lost is said (SQLite refused the whole file, or, cut
    # inside its last page, read the lost bytes as zeros: a state of nonsense "not JSON")
    salvaged = salvage(p)       # (None for a whole file)
    if salvaged is not None:
        log.warning("%s: %s", p, salvaged.cut_short)
        return salvaged
    with _reading(p) as con:
        meta = _read_meta(p, con)
        events = _read_events(p, con)
    return _game_of(p, meta, events)


def _game_of(path: Path, meta: _Meta, events: tuple[RecordedEvent, ...],
             cut_short: str | None = None) -> RecordedGame:
    return RecordedGame(
        path=path, game=meta.game, edition=meta.edition, players=meta.players,
        settings=meta.settings, seed=meta.seed, created=meta.created, ended=meta.ended,
        scores=meta.scores, winners=meta.winners, events=events, app_version=meta.app_version,
        cut_short=cut_short)


def _cut_size(path: Path) -> tuple[int, int, int] | None:
    """``(file size, size the header gives, page size)`` of an SQLite file shorter than its
    header says it is (cut by an interrupted copy or a full disk); None for any other."""
    head = _head(path, 100)
    if len(head) < 100 or not head.startswith(SQLITE_HEADER):
        return None
    page = int.from_bytes(head[16:18], "big")
    page = 65536 if page == 1 else page
    pages = int.from_bytes(head[28:32], "big")
    # (the header's size counts only where its change counter matches the one it was
    # written with, as SQLite itself checks)
    if head[24:28] != head[92:96] or pages == 0 or page < 512:
        return None
    try:
        size = path.stat().st_size
    except OSError:
        return None
    return (size, pages * page, page) if size < pages * page else None


def salvage(path: Path | str, *, keyframes: bool = True) -> RecordedGame | None:
    """What a game file cut short (:func:`_cut_size`) still holds: its header and its events
    up to the first one that is lost (with their keyframes, unless ``keyframes`` is off: a
    listing counts the events only), read from a copy whose header no longer claims the
    lost pages (SQLite then reads the pages there are, and stops at the first missing one
    instead of refusing the whole file). ``cut_short`` says where the file stops. None
    where the file is not cut short, its log holds moves (not in this copy), or not even
    the game's header can be read."""
    import shutil
    import tempfile

    p = given_path(path).expanduser()
    cut = _cut_size(p) if p.is_file() else None
    if cut is None or _log_holds_moves(p):
        return None
    size, whole, page = cut
    with tempfile.TemporaryDirectory(prefix="companion-salvage-") as tmp:
        copy = Path(tmp) / p.name
        try:
            # (copied on disk, not through memory: a game file can hold hundreds of MB of
            # pictures) whole pages only, the header's page count zeroed
            shutil.copyfile(p, copy)
            with open(copy, "r+b") as fh:
                fh.truncate(size // page * page)
                fh.seek(28)
                fh.write(bytes(4))
            con = sqlite3.connect(f"{copy.as_uri()}?mode=ro", uri=True)
        except (OSError, sqlite3.Error) as exc:
            log.debug("%s: no copy to salvage from (%s)", p, exc)
            return None
        con.text_factory = _LenientText(p)
        try:
            try:
                _check_file(p, con, integrity=False)
                meta = _read_meta(p, con)
            except RecordingError:
                return None
            rows: list[tuple[Any, ...]] = []
            pictures: dict[int, bytes] = {}
            number = 0
            while True:
                try:
                    row = con.execute("SELECT number, time, kind, turn, player, move, "
                                      "observation, state, note FROM event WHERE number = ?",
                                      (number,)).fetchone()
                except sqlite3.Error:
                    break       # (its page lies past the cut)
                if row is None:
                    if number == 0:
                        number = 1      # (a game with no start event numbers from 1)
                        continue
                    break
                try:
                    jpeg = con.execute("SELECT jpeg FROM keyframe WHERE number = ?" if keyframes
                                       else "SELECT 1 FROM keyframe WHERE number = ?",
                                       (number,)).fetchone()
                except sqlite3.Error:
                    jpeg = None         # (past the cut too)
                if jpeg is not None and keyframes:
                    pictures[number] = bytes(jpeg[0])
                rows.append((*row, jpeg is not None))
                number += 1
        finally:
            con.close()
    last = f"after event {rows[-1][0]}" if rows else "before its first event"
    said = (f"the file is cut short ({size} of its {whole} bytes: an interrupted copy, or a "
            f"full disk?); it stops {last}: any later event is lost")
    game = _game_of(p, meta, _events_of(p, rows), said)
    return replace(game, salvaged_keyframes=pictures)


def summarize(path: Path | str) -> GameSummary:
    """The metadata of one game file and its number of moves (RecordingError if unreadable,
    or cut short: :func:`salvage` reads what it holds)."""
    p = given_path(path).expanduser()
    if _cut_size(p) is not None and not _log_holds_moves(p):
        raise RecordingError(f"{p}: the file is cut short")
    with _reading(p) as con:
        meta = _read_meta(p, con)
        kinds = _query(p, con, "SELECT number, kind FROM event WHERE kind IN "
                               "('move', 'override', 'undo') ORDER BY number")
        moves = sum(1 for _, k in kinds if k in MOVE_KINDS) - len(_undone_numbers(kinds))
    return GameSummary(path=p, game=meta.game, edition=meta.edition, players=meta.players,
                       created=meta.created, ended=meta.ended, moves=int(moves),
                       scores=meta.scores, winners=meta.winners)


def _head(path: Path, size: int) -> bytes:
    """The first ``size`` bytes of ``path`` (fewer for a shorter file; none unreadable, and
    none of what is not a regular file). A pipe or a FIFO (``--out /dev/stdout`` piped on,
    a named pipe) is never read: reading it waited forever for a writer, or took the bytes
    from the program feeding it."""
    try:
        # (non-blocking: opening a FIFO for reading waits for a writer otherwise)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return b""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return b""
        with os.fdopen(fd, "rb") as fh:
            fd = -1     # (closed with fh)
            return fh.read(size)
    except OSError:
        return b""
    finally:
        if fd >= 0:
            os.close(fd)


def is_sqlite_file(path: Path | str) -> bool:
    """Whether ``path`` is an SQLite database (a game file, most likely, or another
    program's): what must never be written over as text."""
    return _head(given_path(path).expanduser(), len(SQLITE_HEADER)) == SQLITE_HEADER


#: The files SQLite keeps beside a database, by name ending: it removes or empties them when
#: the database is next opened or closed, whatever else was written there.
SIDE_FILES: dict[str, str] = {"-wal": "write-ahead log", "-shm": "shared-memory index",
                              "-journal": "rollback journal"}


def side_file_of(path: Path | str) -> tuple[Path, str] | None:
    """``(the database, what the file is to it)`` where ``path`` (through links) is named as
    one of the files SQLite keeps beside an SQLite file that is there (``GAME.db-wal``);
    else None."""
    real = Path(os.path.realpath(given_path(path).expanduser()))
    for ending, what in SIDE_FILES.items():
        if real.name.endswith(ending) and len(real.name) > len(ending):
            base = real.with_name(real.name[:-len(ending)])
            if is_sqlite_file(base):
                return base, what
    return None


def _is_game_file(path: Path) -> bool:
    """Whether ``path`` is an SQLite file that says it is a companion's game file (its
    application id), whatever its name: ``play --record game.sqlite`` makes one."""
    head = _head(path, 72)
    return (len(head) == 72 and head.startswith(SQLITE_HEADER)
            and int.from_bytes(head[68:72], "big") == APPLICATION_ID)


def list_games(folder: Path | str) -> list[GameSummary | BrokenGame | EmptyGame]:
    """Every game file in ``folder`` (not its subfolders), by file name: each ``*.db``
    file, and a file of any other name that is a game file (:func:`_is_game_file`).

    A file that cannot be read is a :class:`BrokenGame` with the reason; it never stops the
    others from listing. One with nothing of a game in it is an :class:`EmptyGame`. A game's
    log (``NAME-wal``) without its file beside it is a :class:`BrokenGame` too: it may hold
    the game's last moves. A folder that does not exist holds no games.
    """
    where = given_path(folder).expanduser()
    if not where.is_dir():
        return []
    out: list[GameSummary | BrokenGame | EmptyGame] = []
    try:
        names = sorted(where.iterdir())
    except OSError:
        return []
    for path in names:
        if path.name.endswith("-wal"):
            base = path.with_name(path.name[:-4])
            if not os.path.lexists(base) and _log_holds_moves(base):
                out.append(BrokenGame(path, f"the log of a game whose file {base.name} is "
                                            "not beside it (it may hold the game's last "
                                            "moves): put that file back beside it"))
            continue
        if path.suffix != SUFFIX and not (path.is_file() and _is_game_file(path)):
            continue
        try:
            out.append(summarize(path))
        except RecordingError as exc:
            if never_made(path):    # (asked only of a file that does not read as a game)
                out.append(EmptyGame(path))
                continue
            salvaged = salvage(path, keyframes=False)
            if salvaged is not None:
                out.append(BrokenGame(path, f"{salvaged.cut_short}; `companion export` gives "
                                            f"the {len(salvaged.events)} event(s) it holds"))
                continue
            prefix = f"{path}: "
            reason = str(exc)
            out.append(BrokenGame(path, reason[len(prefix):] if reason.startswith(prefix)
                                  else reason))
        except OSError as exc:
            out.append(BrokenGame(path, f"cannot be read ({exc.strerror or exc})"))
    return out


# ------------------------------------------------------------------------ writing ---

class GameRecorder:
    """Writes one game file. Every :meth:`record` is committed (and synced) on return.

    Safe to share between threads (a lock serialises the writes), so a capture thread can
    record while the UI thread finishes the game.
    """

    def __init__(self, path: Path, con: sqlite3.Connection, *, players: tuple[str, ...],
                 next_number: int, last_turn: int | None, ended: bool,
                 started: bool = False, moved: bool = False) -> None:
        self.path = path
        self.players = players
        self._con: sqlite3.Connection | None = con
        self._lock = threading.Lock()
        self._next = next_number
        self._last_turn = last_turn   # turn number of the last stored state
        self._ended = ended
        self._started = started       # a start event is recorded
        self._moved = moved           # a move, override or undo is recorded
        self._held: int | None = None  # the descriptor holding the file's lock (_hold)
        # the file written (device, inode): a file removed, moved or replaced under the
        # recorder is noticed at the next event and the game written again (_keep_file)
        self._ident = _identity(path)
        #: where the game was recorded before :meth:`close` had to save it elsewhere
        self.saved_from: Path | None = None
        #: why the game could not be saved at all, once closed (None: :attr:`path` holds it)
        self.lost: str | None = None

    # ------------------------------------------------------------------ opening
    @staticmethod
    def _configure(path: Path, con: sqlite3.Connection) -> None:
        mode = _query_one(path, con, "PRAGMA journal_mode = WAL")[0]
        if str(mode).lower() != "wal":
            log.warning("%s: WAL journal not available (journal mode %s)", path, mode)
        # FULL also syncs the WAL on every commit: a committed move survives a power cut.
        _query(path, con, "PRAGMA synchronous = FULL")
        # Each commit is copied from the log into the file itself at once (a passive
        # checkpoint): a backup or a copy of the .db alone, taken mid-game or after a crash,
        # then holds the game so far instead of an empty shell (every move was in -wal)
        _query(path, con, "PRAGMA wal_autocheckpoint = 1")
        # Another program writing the file (a database browser, a backup tool) holds up a
        # write this long, not the connection's 10 s: the live game waits for each event
        # it records, and one not written is held back and written with the next
        _query(path, con, f"PRAGMA busy_timeout = {WRITE_WAIT_MS}")
        _query(path, con, "PRAGMA foreign_keys = ON")

    @classmethod
    def create(cls, path: Path | str, *, game: str, edition: str, players: Sequence[str],
               settings: Mapping[str, Any] | None = None, seed: int | None = None,
               initial_state: str | None = None) -> "GameRecorder":
        """Start a new game file (never overwrites one). ``initial_state``, if given, is
        recorded as event 0 ("start") in the same transaction as the metadata."""
        p = given_path(path).expanduser()
        if not isinstance(game, str) or not game.strip():
            raise RecordingError(f"{p}: the game name is empty")
        if not isinstance(edition, str):
            raise RecordingError(f"{p}: the edition must be text, got {edition!r}")
        if isinstance(players, str):
            raise RecordingError(f"{p}: players must be a list of names, got the text {players!r}")
        names = tuple(_name(x) for x in players)
        if not names or not all(n.strip() for n in names):
            raise RecordingError(f"{p}: a game needs named players, got {list(names)!r}")
        if len(set(names)) != len(names):
            raise RecordingError(f"{p}: a player is listed twice: {list(names)!r}")
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
            raise RecordingError(f"{p}: the seed must be a whole number, got {seed!r}")
        try:
            settings_text = json.dumps(dict(settings or {}), sort_keys=True)
        except (TypeError, ValueError) as exc:
            raise RecordingError(f"{p}: the settings cannot be stored as JSON ({exc})") from None
        exists = RecordingError(f"{p}: a file of that name already exists (game files are "
                                "never overwritten: give a new name)")
        check_record_target(p)
        _check_name(p, lines=False)
        if p.exists():
            raise exists
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            # (the games folder replaced by a file: "File exists" or "Not a directory", of
            # no name, said which)
            in_way = file_in_the_way(p.parent)
            why = not_a_folder(in_way) if in_way is not None else exc.strerror or exc
            raise RecordingError(f"{p}: cannot create its folder ({why})") from None
        # Made here, and only if no one else made it first: two companions starting the same
        # new file at once both passed the check above, and the one that then failed removed
        # the file the other was recording into (a whole game lost, nothing said). The
        # file's lock is taken before its schema is written.
        try:
            os.close(os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        except FileExistsError:
            check_not_recording(p)      # (another companion made it first: said so)
            raise exists from None
        except OSError as exc:
            raise RecordingError(f"{p}: cannot create the file ({exc.strerror or exc})") \
                from None
        # the file is this call's (O_EXCL): a lock on it can only be another companion
        # looking whether it is in use (check_not_recording), a moment long
        for attempt in range(50):
            try:
                held = _hold(p)
                break
            except RecordingError:
                if attempt == 49:
                    _remove_quietly(p)
                    raise
                time.sleep(0.02)
        try:
            con = sqlite3.connect(str(p), timeout=10.0, check_same_thread=False,
                                  isolation_level=None)
        except sqlite3.Error as exc:
            if held is not None:
                os.close(held)
            _remove_quietly(p)
            raise RecordingError(f"{p}: cannot create the file ({exc})") from None
        rec: GameRecorder | None = None
        try:
            cls._configure(p, con)
            con.execute("BEGIN IMMEDIATE")
            con.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            con.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            for statement in _split_sql(_SCHEMA):
                con.execute(statement)
            con.execute(
                "INSERT INTO game (id, game, edition, players, settings, seed, created, "
                "app_version) VALUES (1, ?, ?, ?, ?, ?, ?, ?)",
                (game, edition, json.dumps(list(names)), settings_text, seed,
                 _time_text(_now()), __version__))
            con.execute("COMMIT")
            rec = cls(p, con, players=names, next_number=0, last_turn=None, ended=False)
            rec._held, held = held, None
            if initial_state is not None:
                rec.record("start", None, state=initial_state)
        except sqlite3.Error as exc:
            cls._give_up(con, rec, p, held)
            raise RecordingError(f"{p}: cannot create the game file ({exc})") from None
        except BaseException:
            cls._give_up(con, rec, p, held)
            raise
        return rec

    @staticmethod
    def _give_up(con: sqlite3.Connection, rec: "GameRecorder | None", path: Path,
                 held: int | None) -> None:
        """A game file whose creation failed (this recorder made the file): closed, its lock
        let go, removed."""
        con.close()
        if rec is not None:
            rec._let_go()
        _remove_quietly(path)
        if held is not None:
            os.close(held)

    @classmethod
    def resume(cls, path: Path | str) -> "GameRecorder":
        """Continue an unfinished game file (after a crash, or a game saved and closed)."""
        p = given_path(path).expanduser()
        if p.is_file():
            # SQLite opens a write-protected file read-only without a word, and every move
            # of the sitting would then fail to be written: said now, before play
            try:
                os.close(os.open(p, os.O_RDWR))
            except PermissionError:
                raise RecordingError(f"{p}: the file is read-only, so the game cannot go on "
                                     "being recorded into it: copy it somewhere you can "
                                     "write and continue the copy") from None
            except OSError as exc:
                if exc.errno == errno.EROFS:
                    # (SQLite would say only "unable to open database file")
                    raise RecordingError(f"{p}: the file lies on a read-only file system, so "
                                         "the game cannot go on being recorded into it: copy "
                                         "it somewhere you can write and continue the copy"
                                         ) from None
                # (else the connection says what is wrong with it)
            if _cut_size(p) is not None and not _log_holds_moves(p):
                # (cut inside its last page it still opens, its lost bytes read as zeros)
                raise RecordingError(f"{p}: the file is damaged: cut short (an interrupted "
                                     "copy?); `companion export` gives the events it holds")
        held = _hold(p) if p.is_file() else None
        con: sqlite3.Connection | None = None
        try:
            con = _connect(p, write=True)
            con.isolation_level = None
            _check_file(p, con, writing=True)
            meta = _read_meta(p, con)
            if meta.ended is not None:
                raise RecordingError(f"{p}: the game is finished (ended "
                                     f"{_time_text(meta.ended)}); there is nothing to resume")
            cls._configure(p, con)
            last = _query_one(p, con, "SELECT max(number) FROM event")[0]
            kinds = {r[0] for r in _query(p, con, "SELECT DISTINCT kind FROM event")}
            row = _query_one(p, con, "SELECT state FROM event WHERE state IS NOT NULL "
                                     "ORDER BY number DESC LIMIT 1")
        except BaseException:
            if con is not None:
                con.close()
            if held is not None:
                os.close(held)
            raise
        rec = cls(p, con, players=meta.players, next_number=0 if last is None else last + 1,
                  last_turn=_turn_of(row[0]) if row else None, ended=False,
                  started="start" in kinds, moved=bool(kinds & {"move", "override", "undo"}))
        rec._held = held
        return rec

    # ------------------------------------------------------------------ writing
    @property
    def closed(self) -> bool:
        return self._con is None

    @property
    def finished(self) -> bool:
        return self._ended

    @property
    def events_recorded(self) -> int:
        """How many events the file holds (the start position counts)."""
        return self._next

    def record(self, kind: str, move: str | None, *, player: str | None = None,
               observation: Mapping[str, Any] | None = None, keyframe_jpeg: bytes | None = None,
               state: str | None = None, note: str | None = "",
               turn: int | None = None, at: datetime | None = None) -> int:
        """Append one event; it is committed and synced when this returns its number.

        ``kind`` is one of :data:`KINDS` (or an alias of :data:`KIND_ALIASES`). ``state`` is
        the engine's ``dumps()`` after the event: give it for every move, override and
        correction that changes the position, so a replay needs no re-simulation.
        ``player`` defaults to the colour before ``:`` in the move text (``red: draw 3``).
        ``turn`` defaults to the turn number of the last stored state (the turn this event
        happened in). ``note`` None is the same as no note. ``at``: when the event happened
        (default now; an event held back, :class:`Backlog`, is written with its own time).
        """
        kind = KIND_ALIASES.get(kind, kind)
        if note is None:
            note = ""
        if kind not in KINDS:
            raise RecordingError(f"{self.path}: unknown event kind {kind!r} "
                                 f"(expected one of {', '.join(KINDS)})")
        if kind in MOVE_KINDS and (not isinstance(move, str) or not move.strip()):
            raise RecordingError(f"{self.path}: a {kind} event needs the move text, got {move!r}")
        if move is not None and not isinstance(move, str):
            raise RecordingError(f"{self.path}: the move must be text, got {move!r}")
        if kind == "start" and state is None:
            raise RecordingError(f"{self.path}: the start event needs the start state")
        if not isinstance(note, str):
            raise RecordingError(f"{self.path}: the note must be text, got {note!r}")
        obs_text: str | None = None
        if observation is not None:
            try:
                obs_text = json.dumps(dict(observation), sort_keys=True)
            except (TypeError, ValueError) as exc:
                raise RecordingError(f"{self.path}: the observation cannot be stored as JSON "
                                     f"({exc})") from None
        state_turn: int | None = None
        if state is not None:
            if not isinstance(state, str):
                raise RecordingError(f"{self.path}: the state must be the engine's dumps() "
                                     f"text, got {type(state).__name__}")
            try:
                state_turn = _turn_of(state)
            except ValueError as exc:
                raise RecordingError(f"{self.path}: the state is not a JSON object "
                                     f"({exc})") from None
        jpeg: bytes | None = None
        if keyframe_jpeg is not None:
            if not isinstance(keyframe_jpeg, (bytes, bytearray, memoryview)):
                raise RecordingError(f"{self.path}: the keyframe must be JPEG bytes, got "
                                     f"{type(keyframe_jpeg).__name__}")
            jpeg = bytes(keyframe_jpeg)
            if not jpeg.startswith(b"\xff\xd8"):
                raise RecordingError(f"{self.path}: the keyframe is not a JPEG image "
                                     "(it does not start with the JPEG marker)")
        if player is None and move:
            head, sep, _ = move.partition(":")
            if sep and head.strip().lower() in self.players:
                player = head.strip().lower()
        elif player is not None:
            player = _name(player)
        with self._lock:
            con = self._keep_file(self._writable(kind))
            if kind == "start" and (self._started or self._moved):
                raise RecordingError(f"{self.path}: the start position must come before "
                                     "every move, and only once")
            number = self._next if self._next > 0 or kind == "start" else 1
            when = turn if turn is not None else (
                state_turn if kind == "start" else self._last_turn)
            try:
                con.execute("BEGIN IMMEDIATE")
                con.execute(
                    "INSERT INTO event (number, time, kind, turn, player, move, observation, "
                    "state, note) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (number, _at_text(at), kind, when, player, move, obs_text,
                     state, note))
                if jpeg is not None:
                    con.execute("INSERT INTO keyframe (number, jpeg) VALUES (?, ?)",
                                (number, jpeg))
                con.execute("COMMIT")
            except sqlite3.Error as exc:
                _rollback(con)
                raise WriteFailed(f"{self.path}: event {number} ({kind}) could not be "
                                  f"written: {_describe_sqlite_error(exc)}",
                                  full=_full(exc)) from None
            self._next = number + 1
            self._started = self._started or kind == "start"
            self._moved = self._moved or kind in ("move", "override", "undo")
            if state_turn is not None:
                self._last_turn = state_turn
        log.debug("%s: event %d %s %s", self.path, number, kind, move or "")
        return number

    def finish(self, scores: Mapping[str, int], winners: Sequence[str], *,
               at: datetime | None = None) -> None:
        """Mark the game ended with its final scores and winners (committed on return);
        ``at``: when it ended (default now)."""
        score_map = {_name(k): v for k, v in scores.items()}
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in score_map.values()):
            raise RecordingError(f"{self.path}: scores must be whole numbers, got {score_map!r}")
        if isinstance(winners, str):
            raise RecordingError(f"{self.path}: winners must be a list of names, got the "
                                 f"text {winners!r}")
        winner_list = [_name(w) for w in winners]
        with self._lock:
            con = self._keep_file(self._writable("finish"))
            try:
                con.execute("BEGIN IMMEDIATE")
                con.execute("UPDATE game SET ended = ?, scores = ?, winners = ? WHERE id = 1",
                            (_at_text(at), json.dumps(score_map, sort_keys=True),
                             json.dumps(winner_list)))
                con.execute("COMMIT")
            except sqlite3.Error as exc:
                _rollback(con)
                raise WriteFailed(f"{self.path}: the end of the game could not be "
                                  f"written: {_describe_sqlite_error(exc)}",
                                  full=_full(exc)) from None
            self._ended = True

    def _writable(self, what: str) -> sqlite3.Connection:
        if self._con is None:
            raise RecordingError(f"{self.path}: the recorder is closed")
        # A note may still be added to a finished game; nothing else may.
        if self._ended and what != "note":
            raise RecordingError(f"{self.path}: the game is finished; a {what} cannot be "
                                 "recorded after its end")
        return self._con

    def _keep_file(self, con: sqlite3.Connection) -> sqlite3.Connection:
        """``con``, once the file at :attr:`path` is still the one it writes. Where that
        file was removed, moved away or replaced during the game (a clean-up, a sync tool,
        the games folder moved), every later move would go to a file no one can reach, and
        the end would name a file that is not the game: the game so far is written again
        (from the open connection) at :attr:`path`, or beside it where another file took
        the name, and recorded on there. :class:`WriteFailed` where that cannot be done
        (the event is then held back by the caller, as on a full disk)."""
        now = _identity(self.path)
        if self._ident is None or now == self._ident:
            return con
        if now is not None and self._same_game(con):
            # the same file under another inode number (a network share that does not keep
            # them): nothing to write again
            self._ident = now
            return con
        old = target = self.path
        new: sqlite3.Connection | None = None
        held: int | None = None
        made = False        # (only a file this call made is removed again on failure)
        try:
            # the log first emptied into the file this connection holds (moved away, or
            # gone): left beside the name, its frames of this game would be applied by the
            # next reader to whatever file now has the name
            try:
                con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.Error:
                log.debug("%s: checkpoint before writing the game again failed", old,
                          exc_info=True)
            if os.path.lexists(old):
                target = _free_name(old)
            target.parent.mkdir(parents=True, exist_ok=True)
            os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            made = True
            held = _hold(target)
            new = sqlite3.connect(str(target), timeout=10.0, check_same_thread=False,
                                  isolation_level=None)
            con.backup(new)
            self._configure(target, new)
        except (OSError, sqlite3.Error, RecordingError) as exc:
            if new is not None:
                new.close()
            if held is not None:
                os.close(held)
            if made:
                _remove_quietly(target)
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            raise WriteFailed(f"{old}: the game file was removed, moved or replaced during "
                              f"the game, and it cannot be written again at {target} "
                              f"({why})") from None
        con.close()
        self._let_go()
        self._held = held
        self._con, self.path, self._ident = new, target, _identity(target)
        log.warning("%s: the game file was removed, moved or replaced during the game; the "
                    "game so far is written again%s and recorded on there", old,
                    "" if target == old else f" to {target} (another file has its name)")
        return new

    def _same_game(self, con: sqlite3.Connection) -> bool:
        """Whether the file at :attr:`path` holds this very game (its creation time and
        last event as ``con`` has them), though its inode number changed."""
        try:
            ours = con.execute("SELECT (SELECT created FROM game WHERE id = 1), "
                               "(SELECT max(number) FROM event)").fetchone()
            other = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True)
            try:
                theirs = other.execute("SELECT (SELECT created FROM game WHERE id = 1), "
                                       "(SELECT max(number) FROM event)").fetchone()
            finally:
                other.close()
        except (OSError, sqlite3.Error):
            return False
        return bool(ours == theirs and ours[0] is not None)

    def close(self) -> None:
        """Close the file. Where it was removed and cannot be written again where it was
        (a full disk, the folder replaced by a file), the open connection is the only thing
        that still holds the game: it is saved elsewhere first (:meth:`_save_elsewhere`),
        and :attr:`path` then names that copy; :attr:`lost` says why where nothing could
        be saved."""
        with self._lock:
            if self._con is not None:
                # a file removed while no event came (the game waiting for a click) is
                # written again now, before the connection that alone still holds it goes
                try:
                    self._keep_file(self._con)
                except WriteFailed as exc:
                    self._save_elsewhere(self._con, str(exc).removeprefix(f"{self.path}: "))
                assert self._con is not None
                self._con.close()
                self._con = None
            self._let_go()

    def _save_elsewhere(self, con: sqlite3.Connection, why: str) -> None:
        """The game so far (``con``'s copy, the only one left) saved under its own name in
        the system's temporary folder or the current folder, one on another file system
        than the lost file's first (a full disk there is full for its whole file system);
        :attr:`path` names the copy. Where none takes it, :attr:`lost` says why."""
        old = self.path
        tried: list[str] = []
        for folder in _fallback_folders(old):
            target = folder / old.name
            if os.path.lexists(target):
                target = _free_name(target)
            new: sqlite3.Connection | None = None
            made = False
            try:
                os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
                made = True
                new = sqlite3.connect(str(target), timeout=10.0, isolation_level=None)
                con.backup(new)
                new.close()
                new = None
            except (OSError, sqlite3.Error, RecordingError) as exc:
                if new is not None:
                    new.close()
                if made:
                    _remove_quietly(target)
                said = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
                tried.append(f"{folder}: {said}")
                continue
            log.error("%s: %s; the game so far is saved to %s instead", old, why, target)
            self.path, self.saved_from = target, old
            self._ident = _identity(target)
            return
        self.lost = (f"{why}; it could not be saved elsewhere either "
                     f"({'; '.join(tried) or 'no folder to save it in'})")
        log.error("%s: the game could not be saved: %s", old, self.lost)

    def not_kept(self) -> str | None:
        """Once closed, where the game is not in the file it was recorded into, the words
        for the players (``companion run`` and ``companion play`` alike): the file it was
        saved to instead, or why it could not be saved at all; None where it is there."""
        if self.lost is not None:
            return f"{self.path}: the game could not be saved: {self.lost}"
        if self.saved_from is not None:
            return (f"{self.saved_from}: the game file could not be kept there; the game so "
                    f"far is saved to {self.path} instead")
        return None

    def _let_go(self) -> None:
        """Let the file's lock go (closing its descriptor does)."""
        if self._held is not None:
            os.close(self._held)
            self._held = None

    def __enter__(self) -> "GameRecorder":
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._con is None else "finished" if self._ended else "open"
        return f"GameRecorder({str(self.path)!r}, {self._next} events, {state})"


def _check_name(path: Path, *, lines: bool) -> None:
    """A new recording's name must end as its format's files do: a name ending as the other
    format's (or as neither's) is a slip, and the file made would be read as what it is
    not. Said before anything is made. A dot before digits or a space is no format's ending
    (``2026.12.01``, ``game 1.5``): such a name is one of no ending."""
    suffix = path.suffix.lower()
    if not (suffix[1:2].isalpha() and suffix[1:].isalnum()):
        suffix = ""
    if (suffix == LINES_SUFFIX) if lines else (suffix in GAME_SUFFIXES or not suffix):
        return
    made = "a game record in JSON lines" if lines else "a game file (SQLite)"
    raise RecordingError(
        f"{path}: {made} is not made under a name ending in {path.suffix or 'nothing'}: the "
        f"formats accepted are a game file ({', '.join(GAME_SUFFIXES)} or no ending) and, "
        f"with companion play only, a record in JSON lines ({LINES_SUFFIX})")


def check_record_target(path: Path) -> None:
    """A game is recorded into a file (``run --record``, ``play --record``; a game file or
    JSON lines): a folder, or a pipe or a device, named for it is refused here, in the same
    words for each (``run`` said "not a game file (not a regular file)" of a folder,
    ``play`` "is a folder", or "a file of that name already exists" for JSON lines)."""
    if path.is_dir():
        raise RecordingError(f"{path}: is a folder; give a file name for the game in it "
                             "(NAME.db)")
    if path.exists() and not path.is_file():
        raise RecordingError(f"{path}: not a regular file (a pipe or a device); give a file "
                             "name for the game")


def create_lines_record(path: Path | str) -> IO[str]:
    """A new game record in JSON lines (``companion play --record FILE.jsonl``), opened for
    writing; never over a file already there."""
    p = given_path(path).expanduser()
    check_record_target(p)
    _check_name(p, lines=True)
    try:
        return open(p, "x", encoding="utf-8")  # noqa: SIM115 (the caller closes it)
    except FileExistsError:
        raise RecordingError(f"{path}: a file of that name already exists (game records are "
                             "never overwritten: give a new name)") from None
    except OSError as exc:
        raise RecordingError(f"cannot write {path}: {exc.strerror or exc}") from None


class Backlog:
    """The events a game file could not take yet (a full disk, a lock held by another
    program), oldest first, each ``(what, its arguments)``: ``("record", kwargs of
    :meth:`GameRecorder.record`)`` or ``("finish", {"scores": ..., "winners": ...})``. A new
    event waits behind them, so the file never holds a move without the one before it;
    :meth:`write` tries them all again. Each is given the time it was :meth:`add`-ed, and
    written with it, not the time the file took it (minutes later, after a full disk).
    Shared by ``companion run``'s live session and
    ``companion play``, so that one failed write never ends a game. Not thread-safe: its
    owner's lock guards it."""

    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []
        #: why the game file cannot be written now (None: everything is in it)
        self.error: str | None = None

    def add(self, what: str, kw: dict[str, Any]) -> None:
        """Hold an event (``"record"`` or ``"finish"`` and its arguments), stamped with the
        time it happened (its ``at``, unless given); :meth:`write` writes it."""
        self.events.append((what, {**kw, "at": kw.get("at") or _now()}))

    def write(self, recorder: Any, *, drop_bad: bool = False) -> str:
        """Write what it holds to ``recorder`` (a :class:`GameRecorder`, or what has its
        ``record`` and ``finish``), oldest first, up to the first failure.
        Returns what changed: ``"failing"`` when a failure began now (:attr:`error` says
        why), ``"recovered"`` when every event is in the file again after one, else ``""``.
        An event refused for another reason than the file (a bad event) is logged and left
        out where ``drop_bad`` (a live game must not be held up by it), else raised."""
        failing = self.error
        while self.events:
            what, kw = self.events[0]
            try:
                _write_event(recorder, what, kw)
            except WriteFailed as exc:
                self.error = str(exc)
                return "failing" if failing is None else ""
            except Exception as exc:  # noqa: BLE001 - a wrong event must not hold up the rest
                if not drop_bad:
                    raise
                log.warning("could not record %s %s: %s", kw.get("kind", what),
                            kw.get("move") or "", exc)
            self.events.pop(0)
        if failing is not None:
            self.error = None
            return "recovered"
        return ""


    def into_saved_copy(self, recorder: Any, *, drop_bad: bool = False) -> None:
        """After ``recorder`` is closed: where it had to save the game elsewhere at its close
        (its file gone, :attr:`GameRecorder.saved_from`), what is still held is written into
        that copy, which can take it; left out, those moves were missing from the only file
        that holds the game."""
        if (not self.events or getattr(recorder, "saved_from", None) is None
                or getattr(recorder, "lost", None) is not None):
            return
        try:
            copy = GameRecorder.resume(recorder.path)
        except RecordingError as exc:
            log.warning("%s: the moves held back cannot be written into it: %s",
                        recorder.path, exc)
            return
        try:
            self.write(copy, drop_bad=drop_bad)
        finally:
            copy.close()


def _write_event(recorder: Any, what: str, kw: dict[str, Any]) -> None:
    if what == "finish":
        recorder.finish(kw["scores"], kw["winners"], at=kw.get("at"))
        return
    try:
        recorder.record(**kw)
    except WriteFailed as exc:
        if kw.get("keyframe_jpeg") is None or not exc.full:
            raise
        # the picture is most of an event's size: on a full disk the move may still fit
        # (tried on a copy: if even that fails, the event waits with its picture)
        recorder.record(**dict(kw, keyframe_jpeg=None))
        log.warning("%s: %s recorded without its picture",
                    getattr(recorder, "path", "the game file"), kw.get("move") or kw.get("kind"))


def _identity(path: Path) -> tuple[int, int] | None:
    """The (device, inode) of the file at ``path``; None if there is none."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def _fallback_folders(path: Path) -> list[Path]:
    """Where a game that cannot be kept at ``path`` may be saved: the system's temporary
    folder, then the current folder; those on another file system than ``path``'s first."""
    import tempfile

    def device(p: Path) -> int | None:
        for q in (p, *p.parents):
            try:
                return os.stat(q).st_dev
            except OSError:
                continue
        return None

    home = device(path.parent)
    out: list[Path] = []
    for where in (tempfile.gettempdir, os.getcwd):
        try:
            folder = Path(where()).resolve()
        except OSError:
            continue        # (a current folder removed meanwhile)
        if folder.is_dir() and folder not in out:
            out.append(folder)
    # (sorted is stable: the temporary folder stays first among equals)
    return sorted(out, key=lambda f: home is not None and device(f) == home)


def _free_name(path: Path) -> Path:
    """``NAME-restored.db`` beside ``path`` (``NAME-restored-2.db``, ... where taken)."""
    for n in range(1, 1000):
        cand = path.with_name(f"{path.stem}-restored{'' if n == 1 else f'-{n}'}{path.suffix}")
        if not os.path.lexists(cand):
            return cand
    raise RecordingError(f"{path}: no free name beside it to write the game again")


def _turn_of(state_text: str) -> int | None:
    """The ``turn_number`` of a stored state (None if it has none); ValueError if not JSON."""
    data = json.loads(state_text)
    if not isinstance(data, dict):
        raise ValueError(f"expected an object, got {type(data).__name__}")
    turn = data.get("turn_number")
    return turn if isinstance(turn, int) and not isinstance(turn, bool) else None


def _split_sql(script: str) -> list[str]:
    """The schema's statements (``executescript`` would commit the open transaction)."""
    out: list[str] = []
    buf = ""
    for line in script.splitlines(keepends=True):
        if line.strip().startswith("--"):
            continue
        buf += line
        if sqlite3.complete_statement(buf):
            out.append(buf.strip())
            buf = ""
    if buf.strip():
        raise ValueError(f"incomplete SQL statement in the schema: {buf!r}")
    return out


def _rollback(con: sqlite3.Connection) -> None:
    try:
        if con.in_transaction:
            con.execute("ROLLBACK")
    except sqlite3.Error:
        log.debug("rollback failed", exc_info=True)


def _hold(path: Path) -> int | None:
    """A descriptor of ``path`` holding an exclusive advisory lock (``flock``) on it, for as
    long as one recorder writes the game: a second companion recording the same file would
    number its events over the first's, and every one of them would fail. None where there
    is no ``flock`` (Windows: SQLite's own locks only) or it fails for another reason than a
    lock held. (SQLite itself locks with ``fcntl``, which on a local Linux file system does
    not meet ``flock``; NFS emulates one with the other.)"""
    try:
        import fcntl
    except ImportError:
        return None
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None      # (the connection will say what is wrong with the file)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise RecordingError(f"{path}: another companion is recording this game right now "
                             "(the file is locked): close that one first, or record into a "
                             "new file") from None
    except OSError as exc:
        # a file system without flock: recorded without the guard, as before it
        os.close(fd)
        log.info("%s: not locked (%s)", path, exc.strerror or exc)
        return None
    return fd


def never_made(path: Path | str) -> bool:
    """Whether ``path`` is what a crash leaves while a game file is being made: an empty
    file, or an SQLite database with no table yet (and no log holding any). Nothing of a
    game is in it; it may be removed."""
    p = given_path(path).expanduser()
    try:
        if not p.is_file() or _log_holds_moves(p):
            return False
        if p.stat().st_size == 0:
            return True
        if not is_sqlite_file(p):
            return False
        con = sqlite3.connect(f"{p.resolve().as_uri()}?mode=ro", uri=True)
        try:
            tables = con.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        finally:
            con.close()
    except (OSError, sqlite3.Error):
        return False
    return bool(tables == 0)


def check_not_recording(path: Path | str) -> None:
    """Raise :class:`RecordingError` when another companion is recording into the game file
    ``path`` right now (its lock is held): it must not be removed or replaced."""
    held = _hold(given_path(path).expanduser())
    if held is not None:
        os.close(held)


def remove_empty_game(path: Path | str) -> bool:
    """Remove the game file ``path`` if it holds no event at all (a game never dealt);
    whether it did. A file that holds anything, or cannot be read, is kept."""
    p = given_path(path).expanduser()
    try:
        if open_game(p).events:
            return False
    except RecordingError:
        return False
    _remove_quietly(p)
    return not p.exists()


def _remove_quietly(path: Path) -> None:
    for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm"), Path(f"{path}-journal")):
        try:
            p.unlink()
        except OSError:
            pass


# ----------------------------------------------------------------------- replaying ---

def check_replayable(game: RecordedGame) -> None:
    """RecordingError naming the file and its game where this version has no rules to
    replay it by (the replay command says so too, before a window opens)."""
    if game.game != "zarcana":
        raise RecordingError(f"{game.path}: a game of {game.game!r}; this version replays "
                             "zarcana only")


def replay_states(game: RecordedGame, *, verify: bool = True
                  ) -> Iterator[tuple[RecordedEvent | None, "ZarcanaState"]]:
    """Walk a recorded Zarcana game: the start position, then the state after each event.

    Yields ``(start event, start)`` (``(None, dealt)`` when the file has no start event and
    the game is dealt again from its seed), then ``(event, state after it)`` for every later
    event. Notes recorded before the start position are not yielded.

    With ``verify`` (the default) every move is replayed through the engine and each stored
    state must agree with the replay; RecordingError names the first event that disagrees.
    An override the engine refuses, and a correction, take the stored state: the players
    decided, not the rules. An undo goes back to the state before the move it takes back.
    Without ``verify`` the stored states are trusted and the engine only fills the gaps (a
    game recorded by an older or newer engine still opens).
    """
    from companion.core.errors import IllegalMoveError, NotationError, SavedGameError
    from companion.games.zarcana.engine import dumps, loads, new_game, to_dict
    from companion.games.zarcana.moves import UNKNOWN
    from companion.games.zarcana.rules import Settings
    from companion.games.zarcana.state import (name_back, names_forgotten, names_given,
                                               with_names)

    path = game.path
    check_replayable(game)

    def where(ev: RecordedEvent) -> str:
        what = f" {ev.move!r}" if ev.move else ""
        return f"{path}: event {ev.number} ({ev.kind}{what})"

    def stored(ev: RecordedEvent) -> "ZarcanaState":
        assert ev.state is not None
        try:
            return loads(ev.state, name=f"the stored state of event {ev.number}")
        except SavedGameError as exc:
            raise RecordingError(f"{where(ev)}: {exc}") from None

    # A file recorded before 2026-12-02 kept an Evil Eye mark on a card nobody could name
    # as "?": every such card on top scored -2, and covering or destroying any of them took
    # the mark off. From the first mark on such a card its marks are that engine's.
    unnamed_marked = False

    def agree(ev: RecordedEvent, replayed: "ZarcanaState") -> None:
        nonlocal unnamed_marked
        if ev.state is None or not verify:
            return
        try:
            want = json.loads(ev.state)
        except json.JSONDecodeError as exc:
            raise RecordingError(f"{where(ev)}: the stored state is not JSON ({exc})") from None
        unnamed_marked = unnamed_marked or any(
            replayed.board[cell][-1][0] == UNKNOWN for cell in replayed.marks) or (
            isinstance(want, dict) and isinstance(want.get("marks"), list)
            and UNKNOWN in want["marks"])
        got = json.loads(json.dumps(to_dict(replayed)))
        if got != want:
            if isinstance(want, dict) and _names_alone_differ(stored(ev), replayed):
                return
            if not isinstance(want, dict):
                raise RecordingError(f"{where(ev)}: the stored state is not a JSON object")
            keys = sorted(k for k in set(got) | set(want) if got.get(k) != want.get(k))
            if keys == ["marks"] and unnamed_marked:
                return
            raise RecordingError(f"{where(ev)}: the replayed state disagrees with the stored "
                                 f"one (differs in: {', '.join(keys)})")

    def _names_alone_differ(kept: "ZarcanaState", replayed: "ZarcanaState") -> bool:
        # a file recorded before 2026-11-30 kept, after a move taken back, the positions
        # without the name of a face-down card given later (the session forgot it then)
        names = names_given(kept, replayed)
        return bool(names) and dumps(with_names(kept, names)) == dumps(replayed)

    def dealt() -> "ZarcanaState":
        try:
            settings = Settings.from_dict(dict(game.settings))
            return new_game(list(game.players), edition=game.edition or None,
                            seed=game.seed if game.seed is not None else 0, settings=settings)
        except (SavedGameError, ValueError, TypeError) as exc:
            raise RecordingError(f"{path}: cannot deal the recorded game again "
                                 f"(players {', '.join(game.players)}, edition "
                                 f"{game.edition}): {exc}") from None

    events = game.events
    first = next((k for k, e in enumerate(events) if e.kind == "start"), None)
    state: ZarcanaState
    if first is not None:
        start = events[first]
        early = [e for e in events[:first] if e.kind in MOVE_KINDS or e.kind == "undo"]
        if early:
            raise RecordingError(f"{where(early[0])}: a move before the start position")
        state = stored(start)
        # A seeded game with every card known was dealt by new_game: the engine must deal
        # it the same again. A camera game's start (hidden hands) is what the camera saw.
        if verify and game.seed is not None and not state.hidden \
                and dumps(dealt()) != dumps(state):
            raise RecordingError(f"{where(start)}: the stored start position differs from "
                                 f"the one seed {game.seed} deals")
        yield start, state
        events = events[first + 1:]
    else:
        if game.seed is None:
            raise RecordingError(f"{path}: no start position and no seed; the game cannot be "
                                 "set up again")
        state = dealt()
        yield None, state
    base = state
    accepted: list[ZarcanaState] = []   # the state after each move not taken back
    for ev in events:
        if ev.kind == "start":
            raise RecordingError(f"{where(ev)}: a second start position")
        if ev.kind in MOVE_KINDS:
            if ev.move is None:
                raise RecordingError(f"{where(ev)}: the move text is missing")
            if not verify and ev.state is not None:
                state = stored(ev)
            else:
                try:
                    after = state.apply(ev.move)
                except IllegalMoveError as exc:
                    if ev.kind != "override" or ev.state is None:
                        raise RecordingError(f"{where(ev)}: the engine refuses the move: "
                                             f"{exc}") from None
                    after = stored(ev)
                except NotationError as exc:
                    raise RecordingError(f"{where(ev)}: the move does not parse: "
                                         f"{exc}") from None
                else:
                    agree(ev, after)
                state = after
            accepted.append(state)
        elif ev.kind == "undo":
            if not accepted:
                raise RecordingError(f"{where(ev)}: there is no move to take back")
            taken = accepted.pop()
            state = accepted[-1] if accepted else base
            if ev.state is not None:
                # a name read off the discard pile goes with the move taken back (as the
                # live session forgets it: the pile may have been misread)
                forgotten = _pile_names_taken_back(taken, state, stored(ev))
                if forgotten:
                    named = names_forgotten([base] + accepted, forgotten)
                    base, accepted = named[0], named[1:]
                    state = accepted[-1] if accepted else base
                if verify:
                    agree(ev, state)
                else:
                    state = stored(ev)
        elif ev.kind == "correction" and ev.state is not None:
            corrected = stored(ev)
            # a face-down card named is named in every position it lay face down in: a move
            # taken back after it keeps the name (as the live session does)
            names = names_given(state, corrected)
            if names:
                named = name_back([base] + accepted, names)
                base, accepted = named[0], named[1:]
            elif accepted:
                # (or named off the discard pile after the move that destroyed it: in the
                # positions before that move)
                names = _pile_name_read_after(accepted[-2] if len(accepted) > 1 else base,
                                              state, corrected, pile_name_read(ev))
                named = name_back([base] + accepted[:-1], names)
                base, accepted = named[0], named[1:] + accepted[-1:]
            state = corrected
            # (the position a take-back of a later move goes back to, as the live session's)
            if accepted:
                accepted[-1] = corrected
            else:
                base = corrected
        yield ev, state


@dataclass(frozen=True)
class PileNameRead:
    """A correction that named a face-down card read off the discard pile as a move
    destroyed it (:data:`PILE_NAME_MARK`). ``when``: "before" the move that destroyed it
    (recorded next), or "after" it (the last move standing when it was recorded). ``cell``
    and ``card``: where the card lay face down and its name (None in a file written before
    the mark, which says so only in the note)."""

    when: str
    cell: str | None = None
    card: str | None = None


def pile_name_line(when: str, cell: str, card: str) -> str:
    """The ``move`` line of a correction naming the face-down card at ``cell`` ``card``, read
    off the discard pile ``when`` ("before" or "after") the move that destroyed it."""
    if when not in ("before", "after"):
        raise ValueError(f"a pile name is read before or after its move, not {when!r}")
    return f"{PILE_NAME_MARK} {when} {cell} {card}"


def pile_name_read(ev: RecordedEvent) -> PileNameRead | None:
    """What a correction says of a face-down card's name read off the discard pile (None:
    it is not such a correction). Its ``move`` line says so (:func:`pile_name_line`); a
    file written before that line has the session's words of then in the note alone:
    "... seen on the discard pile after MOVE" (recorded after the move) or "... as"/
    "under ..." (before it)."""
    if ev.kind != "correction":
        return None
    if ev.move is not None:
        parts = ev.move.split()
        if len(parts) == 4 and parts[0] == PILE_NAME_MARK and parts[1] in ("before", "after"):
            return PileNameRead(parts[1], parts[2], parts[3])
        return None     # (another correction's line: "card 1,2 cups-01=cups-07")
    if f"{_PILE_NAME_NOTE_BEFORE_THE_MARK} after " in ev.note:
        return PileNameRead("after")
    if _PILE_NAME_NOTE_BEFORE_THE_MARK in ev.note:
        return PileNameRead("before")
    return None


@dataclass(frozen=True)
class CoveredNameRead:
    """A correction that named a card the Alchemist covered at once, seen as a move took
    the card above it away (:data:`COVERED_NAME_MARK`): "before" the move that uncovered it
    (recorded next), or "after" it (the last move standing); or "said": the players named
    it, no picture having done so; where it lay, and its name."""

    when: str
    cell: str
    card: str


def covered_name_line(when: str, cell: str, card: str) -> str:
    """The ``move`` line of a correction naming ``card`` the covered card at ``cell``, seen
    ``when`` ("before" or "after") the move that uncovered it, or "said" by the players."""
    if when not in COVERED_NAME_WHEN:
        raise ValueError(f"a covered card is named before or after its move, or said by the "
                         f"players, not {when!r}")
    return f"{COVERED_NAME_MARK} {when} {cell} {card}"


def covered_name_read(ev: RecordedEvent) -> CoveredNameRead | None:
    """What a correction says of a covered card's name (:func:`covered_name_line`); None: it
    is not such a correction."""
    if ev.kind != "correction" or ev.move is None:
        return None
    parts = ev.move.split()
    if len(parts) == 4 and parts[0] == COVERED_NAME_MARK and parts[1] in COVERED_NAME_WHEN:
        return CoveredNameRead(parts[1], parts[2], parts[3])
    return None


def _pile_name_read_after(before: "ZarcanaState", after: "ZarcanaState",
                          corrected: "ZarcanaState", read: PileNameRead | None
                          ) -> "FaceDownNames":
    """The face-down card of ``before`` that the move giving ``after`` put on the discard
    pile unknown ("?": the move clicked before a picture showed the pile), where a
    correction after the move (``corrected``) names that card on the pile (the next picture
    read it there), as :func:`~companion.games.zarcana.state.names_given` gives it. The
    replay named it on the pile alone, and a later sitting started with "?" where the
    first sitting's start named it. Only where the correction says it read the name after
    the move (``read``: :func:`pile_name_read`), and the card and place it names, where it
    names them. None: no such card, or more than one."""
    from companion.core.pieces import format_cell
    from companion.games.zarcana.moves import UNKNOWN

    card = corrected.discard_top()
    if (read is None or read.when != "after" or after.discard_top() != UNKNOWN
            or card is None or card == UNKNOWN or read.card not in (None, card)
            or corrected.discard[:-1] != after.discard[:-1] or corrected.board != after.board):
        return {}
    named = {cell: (stack, stack[:-1] + ((card, False),))
             for cell, stack in before.board.items()
             if stack and stack[-1] == (UNKNOWN, False) and after.board.get(cell) != stack
             and read.cell in (None, format_cell(cell))}
    return named if len(named) == 1 else {}


def _pile_names_taken_back(taken: "ZarcanaState", before: "ZarcanaState",
                           kept: "ZarcanaState") -> "FaceDownNames":
    """The face-down cards ``before`` names that the position an undo stored (``kept``)
    leaves unknown, where the move taken back (which gave ``taken``) put that card on the
    discard pile from there: names read off the pile, which the live session forgets with
    the move. (A name the players gave stays, and so does one a file recorded before
    2026-11-30 left out after a take-back: that move did not destroy the card.)"""
    from companion.games.zarcana.state import names_given, names_read_off_the_pile

    unknown_again = names_given(kept, before)
    return {cell: names for cell, names in names_read_off_the_pile(before, taken).items()
            if cell in unknown_again}


def rebuild_state(game: RecordedGame, *, verify: bool = True) -> "ZarcanaState":
    """The position after the whole recorded game, replayed through the Zarcana engine and
    checked against every stored state (see :func:`replay_states`)."""
    state: ZarcanaState | None = None
    for _, state in replay_states(game, verify=verify):
        pass
    assert state is not None  # replay_states always yields the start
    return state


def accepted_moves(game: RecordedGame, *, verify: bool = True
                   ) -> tuple["ZarcanaState", list[tuple[RecordedEvent, "ZarcanaState"]]]:
    """The start position and the moves that stand (taken-back ones left out), each with the
    state after it: what a continued game shows in its move log.

    A correction changes the state after the move it followed (or the start) without being a
    move itself.
    """
    from companion.games.zarcana.state import name_back, names_forgotten, names_given

    start: ZarcanaState | None = None
    moves: list[tuple[RecordedEvent, ZarcanaState]] = []
    last: ZarcanaState | None = None
    for ev, state in replay_states(game, verify=verify):
        if start is None:
            start = state
        elif ev is None:
            continue
        elif ev.kind in MOVE_KINDS:
            moves.append((ev, state))
        elif ev.kind == "undo":
            _, taken = moves.pop()  # replay_states has checked that there was one to take back
            # (a name read off the pile, gone with the move: gone from every position)
            forgotten = _pile_names_taken_back(taken, moves[-1][1] if moves else start, state)
            if forgotten:
                named = names_forgotten([start] + [s for _, s in moves], forgotten)
                start = named[0]
                moves = [(e, s) for (e, _), s in zip(moves, named[1:])]
        elif ev.kind == "correction":
            # (a face-down card named: named in every position it lay face down in; one
            # named off the pile after the move that destroyed it, in those before it)
            names = names_given(last, state) if last is not None else {}
            kept = moves
            if not names and moves and last is not None:
                kept = moves[:-1]
                names = _pile_name_read_after(kept[-1][1] if kept else start, last, state,
                                              pile_name_read(ev))
            if names and start is not None:
                named = name_back([start] + [s for _, s in kept], names)
                start = named[0]
                moves = [(e, s) for (e, _), s in zip(kept, named[1:])] + moves[len(kept):]
            if moves:
                moves[-1] = (moves[-1][0], state)
            else:
                start = state
        last = state
    assert start is not None  # replay_states always yields the start
    return start, moves
