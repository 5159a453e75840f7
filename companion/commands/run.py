"""``companion run``: watch a real table through a camera and referee the game in the window.

Frames come from a camera (``--source 0``), a stream (``rtsp://...``), a video file or a
folder of photos; capture, settle detection, the vision pipeline and the referee run off the
window's thread (:mod:`companion.live.runner`), and the window (:mod:`companion.ui`) shows
the video with the overlay, the scores, the log and the controls.

The game is recorded move by move into ``--record GAME.db`` (default: a new file in the
recorded games folder, see ``companion games``). Naming an unfinished game file continues
that game where it stopped (after a crash, say): its moves are replayed and checked first.

Without a display the command stops with a message (try ``companion demo --headless``).
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from companion.commands.argtypes import (
    add_camera_options,
    add_mat_options,
    camera_file,
    colour_profile,
    player_colours,
    table_mat,
    thread_count,
    user_path,
)
from companion.core.errors import CompanionError
from companion.games.zarcana.rules import (
    SETTING_VALUES,
    SettingError,
    format_settings,
    parse_setting,
    setting_values,
)

if TYPE_CHECKING:
    from companion.games.zarcana.engine import ZarcanaState
    from companion.recording.store import RecordedEvent

log = logging.getLogger(__name__)

GAMES: tuple[str, ...] = ("zarcana",)


def _profile_covers(path: Path, players: Sequence[str], source: str = "0") -> None:
    """The colour profile names the players' colours: one that names none of them was
    made for other players, and would read their pyramids as its own colours (purple and
    black as blue): refused. One that names some of them: a warning. The command said to
    make one again reads the run's camera (``source``, when a camera number; else the
    first camera, 0)."""
    from vision.pyramids.profile import load_profile

    named = load_profile(path).names()
    missing = [c for c in players if c not in named]
    if not missing:
        return
    camera = source if source.isdigit() else "0"
    again = (f"`companion calibrate-colors {camera} --colors {','.join(players)}` with these "
             "players' pyramids in the middle of the mat, west to east (or a photo of them "
             "for the camera number), or run with --no-colors")
    if len(missing) == len(players):
        raise CompanionError(f"the colour profile {path} names {', '.join(named)}, none of "
                             f"the players' colours ({', '.join(players)}): it would read "
                             f"their pyramids as its own colours; calibrate again: {again}")
    log.warning("the colour profile %s does not name %s: a pyramid of %s may be read as one of "
                "its colours (%s); calibrate again: %s", path, ", ".join(missing),
                "that colour" if len(missing) == 1 else "those colours", ", ".join(named),
                again)


#: settings a live table does not take (the game starts with the first player named; a bid is
#: not followed live)
NOT_LIVE = {"first_player": "at a live table the first of --players moves first: list the "
                            "players from the one who starts"}


def _setting(text: str) -> tuple[str, Any]:
    try:
        return parse_setting(text, not_here=NOT_LIVE)
    except SettingError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def table_settings(args: argparse.Namespace, players: Sequence[str], edition: str
                   ) -> dict[str, Any]:
    """The ``--setting`` choices, checked together for these players and edition."""
    from companion.games.zarcana.rules import Edition, Settings

    chosen = dict(args.setting)
    for name, why in NOT_LIVE.items():
        if name in chosen:      # (args made without the parser's check)
            raise CompanionError(f"--setting {name}: {why}")
    settings = Settings(edition=Edition.parse(edition), **chosen)
    try:
        settings.check_deal(len(players))
    except ValueError as exc:
        raise CompanionError(f"--setting: {exc}") from None
    if "ghost" in settings.optional_map.values() and settings.ghost_color in players:
        raise CompanionError(f"--setting ghost_color={settings.ghost_color}: that is a "
                             "player's colour; the invisible player needs a colour of its own")
    return chosen


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "run", help="watch a table through a camera and referee the game in a window",
        description="Open the companion's window on a camera, stream, video file or photo "
                    "folder: every settled table is read, matched against the rules and "
                    "scored; the game is recorded move by move.")
    p.add_argument("--source", required=True, metavar="SRC",
                   help="camera number (0), stream URL (rtsp://...), video file or image folder")
    p.add_argument("--game", choices=GAMES, default="zarcana", help="the game (default zarcana)")
    p.add_argument("--edition", choices=("1996", "looney"), default="looney",
                   help="Zarcana edition (default looney)")
    p.add_argument("--players", type=player_colours, default=("red", "blue", "green"),
                   metavar="COLOURS", help="player colours in turn order (default red,blue,green)")
    p.add_argument("--setting", action="append", type=_setting, default=[],
                   metavar="NAME=VALUE",
                   help="a choice the table made that the camera cannot see, as many as "
                        "needed, e.g. --setting box_cards=30 (the cards set aside unseen: "
                        "the draw pile runs out, and the end may be declared, sooner). "
                        "Names: " + ", ".join(sorted(set(SETTING_VALUES) - set(NOT_LIVE)))
                        + " (docs/zarcana-rulings.md); the first of --players starts")
    add_mat_options(p, "the calibration mat file (default: the standard 900 x 650 mm mat)")
    add_camera_options(p)
    p.add_argument("--deck", default=None, metavar="NAME",
                   help="card deck: a shipped one (tarot, decktet), an enrolled name (or the "
                        "folder it was enrolled from) or a gallery file (default tarot)")
    p.add_argument("--record", type=user_path, default=None, metavar="GAME.db",
                   help="record into this file (an unfinished one is continued; a new one's name "
                        "ends in .db, .sqlite, .sqlite3, .db3 or nothing); default: a "
                        "new file in the recorded games folder")
    p.add_argument("--threads", type=thread_count, default=2, metavar="N",
                   help="CPU threads for the vision pipeline and OpenCV (default 2: the "
                        "pyramids beside the cards, one thread each), as for observe")
    p.add_argument("--fast", action="store_true",
                   help="read a video file or folder as fast as possible instead of at its "
                        "own pace")
    p.add_argument("--watch", nargs="?", const="new", choices=("new", "all"), default=None,
                   help="with a folder: referee the photos saved into it (a camera tethered "
                        "to this computer) until the window is closed; new (the default): "
                        "only those taken from now on; all: those already there first")
    p.set_defaults(func=run)


def restore_recorded_corrections(session: Any, path: Path) -> int:
    """A continued game's corrected readings held again by its session (before, the same
    misread was asked about again and play stalled until answered): those the game's
    position still bears out (:meth:`LiveSession.restore_corrections`). How many."""
    from companion.recording.store import covered_name_read, open_game, pile_name_read

    # (a name read off the pile, or of a card the Alchemist covered, is no misread to hold)
    return int(session.restore_corrections([ev.move for ev in open_game(path).events
                                            if ev.kind == "correction" and ev.move
                                            and pile_name_read(ev) is None
                                            and covered_name_read(ev) is None]))


def open_recording(path: Path | None, *, game: str, edition: str, players: tuple[str, ...],
                   settings: Mapping[str, Any] | None = None
                   ) -> tuple[Any, Any, list[Any], Path, dict[str, Any]]:
    """(recorder, start position or None, moves already played, path, settings to deal
    with): a new game file (its header keeps ``settings``), or the unfinished game ``path``
    continued. The moves are the live session's history entries, so the window's log shows
    the whole game, not just this sitting. A game not dealt yet is dealt with the settings
    its file was made with (other ``settings`` are refused); a dealt one keeps its own."""
    from companion.recording.store import (
        GameRecorder,
        RecordingError,
        accepted_moves,
        check_not_recording,
        check_record_target,
        new_game_path,
        open_game,
    )

    if path is not None:
        check_record_target(path)
    if path is not None and path.exists():
        # another companion making this very file at this moment holds its lock while the
        # file is still an empty database: said as that, not as "not a game file"
        check_not_recording(path)
        recorded = open_game(path)
        if recorded.finished:
            raise RecordingError(f"{path}: this game is finished; give a new file name to "
                                 "record a new game (or `companion replay` it)")
        same = tuple(recorded.players) == tuple(players) and recorded.edition == edition
        start: ZarcanaState | None = None
        moves: list[tuple[RecordedEvent, ZarcanaState]] = []
        dealt_with: dict[str, Any] = {}
        if not recorded.events:
            # a sitting closed before the board was dealt: the game starts from the next
            # dealt table, as a new one would, with the players and settings the file names
            if not same:
                raise RecordingError(
                    f"{path}: holds a game not yet dealt of {', '.join(recorded.players)} "
                    f"({recorded.edition} edition): give those --players and --edition, or "
                    "a new file name")
            try:
                dealt_with = setting_values(recorded.settings)
            except SettingError as exc:
                raise RecordingError(f"{path}: {exc}") from None
            if settings and setting_values(settings) != dealt_with:
                raise RecordingError(
                    f"{path}: holds a game not yet dealt with the settings "
                    f"{format_settings(dealt_with)}: give those --setting, none, or a new "
                    "file name")
            if dealt_with:
                print(f"the game will be dealt with its settings: {format_settings(dealt_with)}")
        else:
            start, moves = accepted_moves(recorded)
        history = _recorded_history(recorded, start, moves)
        recorder = GameRecorder.resume(path)    # (a file it cannot write is said first)
        if not same:
            log.warning("%s: continuing its game (%s edition, players %s); --edition and "
                        "--players are ignored", path, recorded.edition,
                        ",".join(recorded.players))
        print(f"continuing the game recorded in {path} ({len(history)} moves so far)")
        return recorder, start, history, path, dealt_with
    target = path if path is not None else new_game_path(game)
    recorder = GameRecorder.create(target, game=game, edition=edition, players=list(players),
                                   settings=dict(settings or {}))
    return recorder, None, [], target, dict(settings or {})


def _recorded_history(recorded: Any, start: Any, moves: list[tuple[Any, Any]]) -> list[Any]:
    """The live session's history entries of a continued game's moves, each with the
    face-down card it destroyed where the correction recorded just before it (or after it,
    the move clicked) read that card's name off the discard pile (a take-back in this
    sitting forgets it, as in the sitting that read it)."""
    from companion.games.zarcana.state import names_read_off_the_pile
    from companion.live.session import HistoryEntry
    from companion.recording.store import MOVE_KINDS, pile_name_read

    before_event = {e.number: p for p, e in zip(recorded.events, recorded.events[1:])}
    # (or recorded after it: the move clicked, the next picture read the card on the pile,
    # :meth:`LiveSession._face_down_seen_later`; the move is the last one standing then)
    read_after: set[int] = set()
    standing: list[int] = []
    for e in recorded.events:
        said = pile_name_read(e)
        if e.kind in MOVE_KINDS:
            standing.append(e.number)
        elif e.kind == "undo" and standing:
            standing.pop()
        elif said is not None and said.when == "after" and standing:
            read_after.add(standing[-1])
    history = []
    before = start
    for ev, state in moves:
        prev = before_event.get(ev.number)
        said = pile_name_read(prev) if prev is not None else None
        read = before is not None and (
            (said is not None and said.when == "before") or ev.number in read_after)
        history.append(HistoryEntry.recorded(
            ev.kind, ev.move, ev.player, ev.note, state,
            names_read_off_the_pile(before, state) if read else None))
        before = state
    return history


def check_deck(game: str, card_ids: Sequence[str], deck: str | None) -> None:
    """Zarcana is played with a tarot: a deck whose cards are not tarot cards (the Decktet,
    another game's deck enrolled) is refused by name before a game file is made."""
    from companion.core.cards import BACK, is_card_id

    foreign = [c for c in card_ids if c != BACK and not is_card_id(c)]
    if foreign:
        raise CompanionError(
            f"deck {deck or 'tarot'}: {game} is played with a tarot deck, and "
            f"{len(foreign)} of this deck's {len(card_ids)} cards are not tarot cards "
            f"(e.g. {foreign[0]!r})")


def run(args: argparse.Namespace) -> int:
    from companion.ui.app import NoDisplayError, display_problem

    problem = display_problem()
    if problem is not None:
        raise NoDisplayError(problem)
    from companion.live.capture import open_source
    from companion.live.session import LiveSession

    mat = table_mat(args)
    # (checked before anything is opened; a game continued keeps its own)
    chosen = table_settings(args, args.players, args.edition)
    source = open_source(args.source, realtime=not args.fast, watch=args.watch)
    if not source.live:
        # a video file or photos that cannot be opened at all are said here, before the
        # window: there it would only wait. (A camera or stream is left to the capture
        # thread, which retries one that is not there yet, and says so in the window.)
        source.open()
        source.close()
    # the pipeline first: a missing model must not leave an empty game file behind
    print("loading the vision pipeline...")
    from companion.live.runner import LiveRunner
    from companion.ui.app import hold_signals, run_live
    from vision.pipeline import TablePipeline

    import cv2

    cv2.setNumThreads(args.threads)
    if getattr(args, "verbose", 0) < 2:
        # OpenCV's own warnings (a photo's odd TIFF tag) name no file: each problem gets its
        # line from the companion instead, as in observe
        cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_ERROR)
    kwargs: dict[str, Any] = {"mat": mat, "threads": args.threads}
    if args.deck is not None:       # (an empty name is said to be so, not taken as none)
        kwargs["deck"] = args.deck
    # the camera's lens and the players' colours, as the calibration steps saved them
    # (or as given): the table is read as `companion observe` reads it
    camera, colors = camera_file(args), colour_profile(args)
    if camera is not None:
        print(f"using the camera file {camera}")
        kwargs["intrinsics"] = camera
    if colors is not None:
        print(f"using the colour profile {colors}")
        kwargs["colors"] = colors
    pipeline = TablePipeline(**kwargs)
    session = None
    recorder = None
    # a game file the run names itself (no --record), which nobody else knows of yet
    own_file = args.record is None
    # from here until the window takes them, Ctrl-C (or a kill) is noted, not raised: the
    # game file is about to be made, and the run must end as usual to say or remove it
    caught: list[int] = []
    release = hold_signals(caught)
    try:
        check_deck(args.game, pipeline.gallery.card_ids, args.deck)
        # (before a new game file is made; a game file given is checked for its players)
        checked = args.record is None or not args.record.exists()
        if colors is not None and checked:
            _profile_covers(colors, args.players, str(args.source))
        recorder, state, history, path, settings = open_recording(
            args.record, game=args.game, edition=args.edition, players=args.players,
            settings=chosen)
        if state is not None:
            players = [c.value for c in state.players]
            edition = state.settings.edition.value
            if args.setting:
                log.warning("%s: continuing its game with the settings it was dealt with; "
                            "--setting is ignored", path)
        else:
            players, edition = list(args.players), args.edition
        if colors is not None and not checked:
            _profile_covers(colors, players, str(args.source))
        # the lattice's pitch follows the deck's cards (shared/spec/table.md): an enrolled
        # printing need not be the standard 70 x 120 mm
        session = LiveSession(args.game, edition=edition, players=players, recorder=recorder,
                              settings=settings, mat=pipeline.mat, initial_state=state,
                              history=history,
                              card_size_mm=pipeline.card_size_mm)
        if history or state is not None:
            restore_recorded_corrections(session, path)
        print(f"recording the game into {path}")
        runner = LiveRunner(source, session, pipeline.observe)
        code = run_live(runner, mat=pipeline.mat, caught=caught)
    finally:
        release()
        if session is not None:
            session.close()
        elif recorder is not None:
            recorder.close()
        pipeline.close()
    from companion.recording.store import remove_empty_game

    # (the window closed, or the game file was lost, before a board was dealt)
    undealt = own_file and session is not None and session.state is None
    if recorder is not None:
        # (the recorder writes the game again beside its file where that file was replaced
        # during the game, or elsewhere where it could not be kept there: the name said
        # from here on is the one that holds it)
        path = recorder.path
        lost = getattr(recorder, "lost", None)
        saved_from = getattr(recorder, "saved_from", None)
        if undealt and (lost is not None or saved_from is not None):
            # its own file lost before any deal (the games folder replaced by a file): there
            # was no game to lose, and a copy of the empty one elsewhere is not kept; but the
            # folder it records into is broken, and the run fails saying so
            gone = saved_from or path
            if lost is not None or remove_empty_game(path):
                folder = gone.parent
                if lost is not None:
                    why = lost
                elif not folder.exists():
                    why = f"its folder {folder} is gone"
                elif not folder.is_dir():
                    why = f"its folder {folder} is no longer a folder"
                else:
                    why = "it was removed or replaced"
                print(f"companion run: error: {gone}: the game file could not be kept ({why}); "
                      "no board was dealt: nothing recorded, and no game file is kept",
                      file=sys.stderr)
                return 1
        if (not_kept := recorder.not_kept()) is not None:
            print(f"companion run: error: {not_kept}", file=sys.stderr)
            if lost is not None:
                return 1    # (never a name that holds nothing of the game)
    problem = session.record_problem() if session is not None else None
    if problem is not None:
        # (a full disk, a file gone read-only: the moves it lacks are said, not lost unseen)
        print(f"companion run: error: {problem}", file=sys.stderr)
        print(f"the game is recorded in {path} only up to that point")
        return 1
    if undealt:
        # the window closed before a board was dealt (a wrong camera, say): the game file
        # this run named and made holds nothing, and is not left in the games folder
        if remove_empty_game(path):
            print(f"no board was dealt: nothing recorded, and {path} is not kept")
            return code
    print(f"the game is recorded in {path} (companion replay {path})")
    # (saved elsewhere than its own file: said as an error above, and the run fails)
    return 1 if recorder is not None and getattr(recorder, "saved_from", None) is not None \
        else code


__all__ = ["open_recording", "register", "run"]
