"""A recorded game as text: JSON lines for programs, a readable game record for people."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Any, TextIO

from companion.core.errors import CompanionError
from companion.core.files import record_text
from companion.recording.store import (
    RecordedEvent,
    RecordedGame,
    RecordingError,
    covered_name_read,
)

#: ``format`` of the JSON lines header, and its version.
JSONL_FORMAT = "arcana-companion-game"
JSONL_VERSION = 1


def game_title(game: RecordedGame) -> str:
    """``Zarcana (Looney Pyramids)`` for a known game and edition, else ``game (edition)``."""
    if game.game == "zarcana":
        from companion.games.zarcana.rules import Edition

        try:
            return Edition.parse(game.edition).label
        except ValueError:
            pass
    return f"{game.game} ({game.edition})" if game.edition else game.game


def changed_settings(game: RecordedGame) -> dict[str, Any]:
    """The settings that differ from the edition's defaults (all of them for an unknown game)."""
    if game.game != "zarcana":
        return dict(game.settings)
    from companion.games.zarcana.rules import Edition, Settings

    try:
        defaults = Settings(edition=Edition.parse(game.edition)).to_dict()
    except ValueError:
        return dict(game.settings)
    return {k: v for k, v in sorted(game.settings.items())
            if k != "edition" and defaults.get(k, object()) != v}


def format_scores(scores: Mapping[str, int], players: tuple[str, ...]) -> str:
    """``red 11, blue 0`` in turn order (then anyone else the scores name)."""
    order = [p for p in players if p in scores] + sorted(p for p in scores if p not in players)
    return ", ".join(f"{p} {scores[p]}" for p in order)


def _time(t: datetime | None) -> str:
    return "-" if t is None else t.strftime("%Y-%m-%d %H:%M:%S %Z").strip()


# ---------------------------------------------------------------------- JSON lines ---

def jsonl_records(game: RecordedGame) -> Iterator[dict[str, Any]]:
    """The header, then one object per event (keyframes as a flag; states as objects)."""
    header: dict[str, Any] = {
        "type": "header", "format": JSONL_FORMAT, "version": JSONL_VERSION,
        "file": record_text(str(game.path)), "game": game.game, "edition": game.edition,
        "players": list(game.players), "settings": game.settings, "seed": game.seed,
        "created": game.created.isoformat(),
        "ended": None if game.ended is None else game.ended.isoformat(),
        "app_version": game.app_version,
        "scores": game.scores, "winners": None if game.winners is None else list(game.winners),
        "events": len(game.events), "moves": len(game.moves()),
    }
    if game.cut_short is not None:
        header["cut_short"] = game.cut_short
    yield header
    for ev in game.events:
        yield {
            "type": "event", "number": ev.number, "time": ev.time.isoformat(), "kind": ev.kind,
            "turn": ev.turn, "player": ev.player, "move": ev.move, "undone": ev.undone,
            "note": ev.note,
            "observation": ev.observation, "keyframe": ev.has_keyframe,
            "state": _state(game, ev),
        }


def _state(game: RecordedGame, ev: RecordedEvent) -> Any:
    """An event's stored state as an object (None when it has none)."""
    if ev.state is None:
        return None
    try:
        return json.loads(ev.state)
    except json.JSONDecodeError as exc:
        raise RecordingError(f"{game.path}: the stored state of event {ev.number} is not "
                             f"JSON ({exc}); `--format text` exports the rest") from None


def write_jsonl(game: RecordedGame, out: TextIO) -> None:
    for record in jsonl_records(game):
        out.write(json.dumps(record, sort_keys=True) + "\n")


# ---------------------------------------------------------------------------- text ---

def face_down_names(game: RecordedGame) -> dict[int, str]:
    """The moves that built a card face down ("build 1,0 =?", a Wheel of Fortune build), by
    event number, each with the card a later correction names there (the players named it,
    or the camera read it off the discard pile as it was destroyed): the move's line names
    it too, as the window's move log and the replay window do; the move itself stays as it
    was recorded. A name
    read off the pile goes with the move taken back that destroyed the card (as the live
    session and the replay forget it): the card is "?" again until named anew."""
    if game.game != "zarcana":
        return {}
    from companion.core.errors import NotationError
    from companion.core.pieces import format_cell
    from companion.games.zarcana.moves import UNKNOWN, Action, Build, parse_move

    out: dict[int, str] = {}
    unnamed: dict[str, int] = {}    # cell -> the move that built its face-down card
    named: dict[str, int] = {}      # cell -> the move that built the card named there
    standing: list[RecordedEvent] = []   # the moves an undo can take back, latest last
    for ev in game.events:
        if ev.kind in ("move", "override"):
            standing.append(ev)
        if ev.kind in ("move", "override") and ev.move and not ev.undone:
            try:
                mv = parse_move(ev.move)
            except NotationError:
                continue
            for step in mv.steps if isinstance(mv, Action) else ():
                if isinstance(step, Build):
                    # (a card built over it later is another card)
                    unnamed.pop(format_cell(step.cell), None)
                    named.pop(format_cell(step.cell), None)
                    if step.card == UNKNOWN and not step.from_hand:
                        unnamed[format_cell(step.cell)] = ev.number
        elif ev.kind == "undo" and standing:
            for cell in _pile_names_taken_back(standing.pop(), ev,
                                               {c: out[n] for c, n in named.items()}):
                number = named.pop(cell)
                del out[number]
                unnamed[cell] = number
        elif ev.kind == "correction" and unnamed:
            board = (_board_and_pile(ev) or ({}, []))[0]
            for cell, number in list(unnamed.items()):
                top = (board.get(cell) or [None])[-1]
                if isinstance(top, list) and len(top) == 2 and top[1] is False \
                        and isinstance(top[0], str) and top[0] != UNKNOWN:
                    out[number] = top[0]
                    named[cell] = number
                    del unnamed[cell]
    return out


def covered_names(game: RecordedGame) -> dict[int, str]:
    """The Alchemist's moves whose first build, covered at once by the second, was left
    unnamed ("build 1,0 =?; build 1,0 =wands-07": from a draw pile nobody sees), by event
    number, each with the card a later correction names there (the camera saw it as a move
    took the card above it away: :func:`~companion.recording.store.covered_name_read`):
    the move's line names it too, as :func:`face_down_names` names a card built face down;
    the move itself stays as it was recorded. A take-back of the move that uncovered the
    card keeps the name, as the live session does."""
    if game.game != "zarcana":
        return {}
    from companion.core.errors import NotationError
    from companion.core.pieces import format_cell
    from companion.games.zarcana.engine import covered_at_once
    from companion.games.zarcana.moves import UNKNOWN, Action, Build, parse_move

    out: dict[int, str] = {}
    # cell -> the moves that covered an unnamed card there, latest last, each with that
    # card's place in the cell's stack (None: the move's stored state does not tell)
    covered: dict[str, list[tuple[int, int | None]]] = {}
    for ev in game.events:
        if ev.kind in ("move", "override") and ev.move and not ev.undone:
            try:
                mv = parse_move(ev.move)
            except NotationError:
                continue
            if not isinstance(mv, Action):
                continue
            for i, step in enumerate(mv.steps):
                if isinstance(step, Build) and not step.from_hand and step.card == UNKNOWN \
                        and covered_at_once(mv.power, i, mv.steps):
                    cell = format_cell(step.cell)
                    stack = (_board_and_pile(ev) or ({}, []))[0].get(cell)
                    place = len(stack) - 2 if isinstance(stack, list) and len(stack) > 1 \
                        else None
                    covered.setdefault(cell, []).append((ev.number, place))
            continue
        read = covered_name_read(ev)
        if read is None or not covered.get(read.cell):
            continue
        waiting = covered[read.cell]
        # (the move whose covered card lay where the correction's state names it: another
        # Alchemist's over it on the same cell may still be unnamed; else the latest)
        stack = (_board_and_pile(ev) or ({}, []))[0].get(read.cell)
        places = [k for k, layer in enumerate(stack) if layer == [read.card, True]] \
            if isinstance(stack, list) else []
        k = next((j for j, (_, place) in enumerate(waiting) if place in places),
                 len(waiting) - 1)
        number, _ = waiting.pop(k)
        out[number] = read.card
    return out


def named_moves(game: RecordedGame) -> dict[int, str]:
    """The line of each move that left a card unnamed which a later correction named, by
    event number: the move as recorded, with the names (a card built face down,
    :func:`face_down_names`: "... =? (face down: cups-05)"; the Alchemist's covered at once,
    :func:`covered_names`: "... =wands-07 (covered: cups-04)"). The text record and the
    replay window show these lines."""
    from companion.games.zarcana.moves import with_covered_names, with_face_down_names

    named = face_down_names(game)
    covered = covered_names(game)
    out: dict[int, str] = {}
    for ev in game.events:
        if ev.move and (ev.number in named or ev.number in covered):
            face_down = [named[ev.number]] if ev.number in named else []
            under = [covered[ev.number]] if ev.number in covered else []
            out[ev.number] = with_covered_names(with_face_down_names(ev.move, face_down), under)
    return out


def _pile_names_taken_back(taken: RecordedEvent, undo: RecordedEvent,
                           names: dict[str, str]) -> list[str]:
    """The cells of ``names`` (cell -> the card named there) whose name was read off the
    discard pile by the move taken back (``taken``), as the engine tells such a name
    (:func:`~companion.games.zarcana.state.names_read_off_the_pile`): the move put the
    named card on the pile from there, and the position the ``undo`` stored has the card
    unknown again. None where either stored state does not read as a game."""
    from companion.core.pieces import format_cell, parse_cell
    from companion.games.zarcana.engine import loads
    from companion.games.zarcana.moves import UNKNOWN
    from companion.games.zarcana.state import names_read_off_the_pile, with_names

    if taken.state is None or undo.state is None:
        return []
    try:
        after, kept = loads(taken.state), loads(undo.state)
    except CompanionError:
        return []
    unknown = {}
    for cell, card in names.items():
        stack = kept.board.get(parse_cell(cell))
        if stack and stack[-1] == (UNKNOWN, False):
            unknown[parse_cell(cell)] = (stack, stack[:-1] + ((card, False),))
    read = names_read_off_the_pile(with_names(kept, unknown), after)
    return [format_cell(c) for c in unknown if c in read]


def _board_and_pile(ev: RecordedEvent) -> tuple[dict[str, Any], list[Any]] | None:
    """The board (cell -> stack) and discard pile of ``ev``'s stored state, as stored (None:
    none, or not one that reads)."""
    if ev.state is None:
        return None
    try:
        data = json.loads(ev.state)
        board = {str(c): s for c, s in data["board"]}
        pile = data["discard"]
    except (json.JSONDecodeError, KeyError, TypeError, ValueError):
        return None
    return (board, pile) if isinstance(pile, list) else None


def _event_line(ev: RecordedEvent, previous: RecordedEvent | None,
                named: str | None = None) -> str:
    """``named``: the move's line with the cards a later correction named
    (:func:`named_moves`), where there are any."""
    day_changed = previous is None or previous.time.date() != ev.time.date()
    when = ev.time.strftime("%Y-%m-%d %H:%M:%S" if day_changed else "%H:%M:%S")
    turn = "" if ev.turn is None else str(ev.turn)
    player = ev.player or ""
    move = named if named is not None else ev.move
    if ev.kind == "start":
        what = "start position"
    elif ev.kind == "move":
        what = move or ""
    elif ev.kind == "override":
        what = f"{move}   [override: accepted against the rules]"
    elif ev.kind == "correction":
        what = f"correction: {ev.move}" if ev.move else "correction"
    elif ev.kind == "undo":
        what = f"took back: {ev.move}" if ev.move else "took back the last move"
    elif ev.kind == "illegal":
        what = f"refused: {ev.move}" if ev.move else "refused table change"
    elif ev.kind == "note":
        what = "note"
    else:
        # (a kind this version does not know: a newer companion's, or a hand edit) named as
        # it is, never passed off as a note
        what = f"unknown event kind {ev.kind!r}" + (f": {ev.move}" if ev.move else "")
    flags = (" [taken back]" if ev.undone else "") + (" [keyframe]" if ev.has_keyframe else "")
    return f"{ev.number:>5}  {when:>19}  {turn:>4}  {player:<7} {what}{flags}".rstrip()


def text_lines(game: RecordedGame) -> Iterator[str]:
    """A readable game record: header, numbered events with time, turn and player, notes,
    final scores."""
    yield f"{game_title(game)}: recorded game"
    yield f"file:      {record_text(str(game.path))}"
    yield f"players:   {', '.join(game.players)} (in turn order)"
    yield f"edition:   {game.edition}"
    if game.seed is not None:
        yield f"seed:      {game.seed}"
    changed = changed_settings(game)
    shown = ", ".join(f"{k}={json.dumps(v)}" for k, v in changed.items())
    yield f"settings:  {shown or 'the edition defaults'}"
    yield f"started:   {_time(game.created)}"
    moves = len(game.moves())
    if game.ended is not None:
        yield f"ended:     {_time(game.ended)} after {moves} move(s)"
    else:
        yield f"ended:     not finished ({moves} move(s) recorded)"
    if game.app_version:
        yield f"recorded by companion {game.app_version}"
    if game.cut_short is not None:
        yield f"damaged:   {game.cut_short}"
    yield ""
    yield f"{'#':>5}  {'time':>19}  {'turn':>4}  {'player':<7} move"
    previous: RecordedEvent | None = None
    named = named_moves(game)
    for ev in game.events:
        yield _event_line(ev, previous, named.get(ev.number))
        if ev.note:
            for line in ev.note.splitlines() or [""]:
                yield f"{'':>40}note: {line}"
        previous = ev
    yield ""
    if game.scores is not None:
        yield f"final scores: {format_scores(game.scores, game.players)}"
        winners = list(game.winners or ())
        if len(winners) == 1:
            yield f"winner: {winners[0]}"
        elif winners:
            yield f"tie between {', '.join(winners)}"
    else:
        yield "the game was not finished"
        so_far = _scores_so_far(game)
        if so_far is not None:
            yield f"scores so far: {format_scores(so_far, game.players)}"


def _scores_so_far(game: RecordedGame) -> dict[str, int] | None:
    """The scores of an unfinished game's last stored position (None where there is none,
    or it is not a game the engine reads)."""
    for ev in reversed(game.events):
        if ev.state is None or ev.undone:
            continue
        try:
            from companion.games.zarcana.engine import loads

            return {c.value: v for c, v in loads(ev.state).scores().items()}
        except Exception:  # noqa: BLE001 - a record of another game, or a damaged state
            return None
    return None


def write_text(game: RecordedGame, out: TextIO) -> None:
    for line in text_lines(game):
        out.write(line + "\n")


__all__ = ["JSONL_FORMAT", "JSONL_VERSION", "changed_settings", "covered_names",
           "face_down_names", "format_scores", "game_title", "jsonl_records", "named_moves",
           "text_lines", "write_jsonl", "write_text"]
