"""``companion demo``: the bundled sample game, from frames to moves, scores and a record.

Runs ``sample_images/zarcana/`` (a scripted three-player Zarcana game, one image per settled
table, with three frames where a hand is over the table) through the live loop: capture ->
settle -> pipeline -> :class:`~companion.live.session.LiveSession`. It prints each accepted
move, the flagged illegal move with its rule and the final scores, and writes to ``--out``:
annotated frames (``frames/``), the event log (``record.txt``), the move list (``moves.txt``)
and, when the recording store is available, the recorded game (``game.db``).

Observations come from the vision pipeline (``vision.pipeline.TablePipeline``) when it is
installed, or with ``--observations truth`` from the truth record beside each frame, reduced
to the fields of the observation record (no lattice cells, no game state).

The camera cannot see draws, passes or the declared end; at a real table a player clicks
them. The demo plays that user: its clicks are the moves ``game.json`` marks
``"visible": false``, each made when the frame of that move comes up, and labelled as the
user's clicks in the output. Every other move is read off the table.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from companion.commands.argtypes import user_path
from companion.core.errors import CompanionError
from companion.core.files import check_folder, refusal_words, write_text_atomic

log = logging.getLogger(__name__)

#: Fields of the observation record (shared/spec/table.md) plus the trust flags a pipeline
#: sets; everything else in a truth record is the renderer's knowledge and is dropped.
RECORD_KEYS = ("image", "calibrated", "cards", "pyramids", "hands", "trustworthy")
CARD_KEYS = ("id", "center_mm", "angle_deg", "confidence")
PYRAMID_KEYS = ("color", "pips", "upright", "pointing_deg", "base_center_mm", "confidence")

ENV_SAMPLES = "COMPANION_SAMPLES"


class DemoError(CompanionError):
    """The demo cannot run (the message says what is missing)."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "demo",
        help="run the bundled sample game through the live companion",
        description="Run the sample Zarcana game (sample_images/zarcana) through capture, "
                    "settle detection, the pipeline and the referee; print the moves, the "
                    "illegal move and the final scores; write annotated frames and the record.",
    )
    p.add_argument("--headless", action="store_true",
                   help="no window: write annotated frames and the record to --out")
    p.add_argument("--out", type=user_path, default=Path("companion-demo"),
                   help="folder for annotated frames, record.txt, moves.txt and game.db "
                        "(default: ./companion-demo)")
    p.add_argument("--frames", type=user_path, default=None,
                   help="the sample game folder (default: sample_images/zarcana of this "
                        f"checkout, or ${ENV_SAMPLES}/zarcana)")
    p.add_argument("--observations", choices=("truth", "vision"), default=None,
                   help="where observations come from: the vision pipeline (default when "
                        "installed) or the truth record beside each frame")
    p.add_argument("--deck", default=None, help="deck for the vision pipeline (its default if "
                                                "not given)")
    p.set_defaults(func=run)


# ------------------------------------------------------------------------ finding things ---

def find_sample_game(frames: Path | None) -> Path:
    """The sample game folder: --frames, $COMPANION_SAMPLES/zarcana, ./sample_images/zarcana,
    or the installed ``sample_images`` package's zarcana folder."""
    if frames is not None:
        if not (frames / "game.json").is_file():
            raise DemoError(f"--frames {frames}: no game.json there (expected a sample game "
                            "folder like sample_images/zarcana)")
        return frames
    candidates: list[Path] = []
    env = os.environ.get(ENV_SAMPLES)
    if env:
        candidates.append(Path(env) / "zarcana")
    candidates.append(Path.cwd() / "sample_images" / "zarcana")
    # installed with the package (wheel, editable install or checkout on the path); the
    # frames are plain files in the package folder, so a real path is available
    try:
        from importlib.resources import files

        candidates.append(Path(str(files("sample_images") / "zarcana")))
    except ModuleNotFoundError:
        pass
    for c in candidates:
        if (c / "game.json").is_file():
            return c
    raise DemoError("the sample game is not here: run from the repository, set "
                    f"{ENV_SAMPLES}, or pass --frames sample_images/zarcana")


def play_order(folder: Path) -> list[Path]:
    """Frames in the order they were taken: NNNN.jpg by number, each hand-NN.jpg right after
    the frame its record says it followed (``after_frame``)."""
    numbered = sorted(p for p in folder.glob("*.jpg") if p.stem.isdigit())
    after: dict[str, list[Path]] = {}
    for p in sorted(folder.glob("*.jpg")):
        if p.stem.isdigit():
            continue
        meta = p.with_suffix(".json")
        prev = None
        if meta.is_file():
            try:
                prev = json.loads(meta.read_text(encoding="utf-8")).get("after_frame")
            except (OSError, ValueError):
                prev = None
        after.setdefault(str(prev) if prev is not None else "", []).append(p)
    order: list[Path] = []
    for p in numbered:
        order.append(p)
        order += after.pop(p.stem, [])
    for rest in after.values():
        order += rest
    return order


def truth_record(path: Path) -> dict[str, Any]:
    """The truth beside a frame, reduced to what a pipeline reports."""
    meta = Path(path).with_suffix(".json")
    try:
        data = json.loads(meta.read_text(encoding="utf-8"))
    except OSError as exc:
        raise DemoError(f"{meta}: the truth record cannot be read: "
                        f"{exc.strerror or exc}") from None
    except ValueError as exc:
        raise DemoError(f"{meta}: not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise DemoError(f"{meta}: expected a JSON object")
    for key in ("cards", "pyramids"):
        # ("cards": [1, 2] was a frame's internal error, with its traceback)
        things = data.get(key, [])
        if not isinstance(things, list) or not all(isinstance(t, dict) for t in things):
            raise DemoError(f"{meta}: {key!r} is not a list of objects")
    rec = {k: data[k] for k in RECORD_KEYS if k in data}
    rec["image"] = str(path)
    rec["cards"] = [{k: c[k] for k in CARD_KEYS if k in c} for c in data.get("cards", [])]
    rec["pyramids"] = [{k: p[k] for k in PYRAMID_KEYS if k in p}
                       for p in data.get("pyramids", [])]
    return rec


def make_observer(mode: str | None, mat: Any, deck: str | None) -> tuple[str, Any, Any]:
    """(what runs, observer(image, name) -> record, the vision pipeline or None)."""
    if mode in (None, "vision"):
        try:
            from vision.pipeline import TablePipeline
        except ImportError as exc:
            if mode == "vision":
                raise DemoError(f"the vision pipeline is not available ({exc}); "
                                "use --observations truth") from None
            print("the vision pipeline (vision.pipeline) is not available yet: using the "
                  "truth records beside the frames")
        else:
            kwargs: dict[str, Any] = {"mat": mat}
            if deck:
                kwargs["deck"] = deck
            try:
                pipeline = TablePipeline(**kwargs)
            except CompanionError as exc:
                if mode == "vision" or deck:
                    # (a deck asked for by name is not quietly swapped for the truth)
                    raise
                print(f"the vision pipeline cannot start ({exc}): using the truth records "
                      "beside the frames")
            else:
                return "vision (vision.pipeline.TablePipeline)", pipeline.observe, pipeline
    return ("truth (the truth record beside each frame, reduced to the observation record)",
            lambda image, name: truth_record(Path(name)), None)


def make_recorder(out: Path, script: Mapping[str, Any]) -> Any:
    try:
        from companion.recording.store import GameRecorder, check_not_recording, never_made
    except ImportError:
        print("the recording store (companion.recording) is not available yet: game.db is "
              "not written; record.txt and moves.txt are")
        return None
    db = out / "game.db"
    # (what a demo killed while it made its file leaves holds nothing: made again)
    not_ours = _not_the_demos(db, script) if db.exists() and not never_made(db) else None
    if not_ours is not None:
        # another game recorded into this folder (``play --record DIR/game.db``): never
        # deleted to make room for a demo
        from companion.core.errors import CompanionError

        raise CompanionError(f"{db} is not this demo's game ({not_ours}): give the demo "
                             "another --out folder, or move that file away first")
    if db.exists():
        # (a demo still running into the same folder: its game is not pulled from under it)
        check_not_recording(db)
    for old in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
        if old.exists():
            old.unlink()  # the demo's own output of an earlier run
    # No seed: the live game is dealt from what the camera sees (hands unknown), not by the
    # seeded shuffle, so its start position is the recorded "start" event.
    return GameRecorder.create(db, game=script["game"], edition=script["edition"],
                               players=list(script["players"]),
                               settings=dict(script.get("settings", {})))


def _not_the_demos(db: Path, script: Mapping[str, Any]) -> str | None:
    """Why ``db`` is not this demo's game from an earlier run (finished or cut short), or
    None when it is: the demo records the script's game, edition and players, no seed (the
    deal comes from the camera), and the script's moves in order from the first."""
    from companion.recording import RecordingError, open_game

    try:
        rec = open_game(db)
    except RecordingError as exc:
        return str(exc)
    if (rec.game, rec.edition, tuple(rec.players)) != (
            script["game"], script["edition"], tuple(script["players"])) or rec.seed is not None:
        return f"a game of {', '.join(rec.players)}" + (
            f", seed {rec.seed}" if rec.seed is not None else "")
    scripted = [str(e["move"]) for e in script["moves"] if "illegal" not in e]
    moves = rec.moves()
    # (a recorded move may carry more than the script's text: the pieces it moved)
    if len(moves) > len(scripted) or not all(m.startswith(s) for m, s in zip(moves, scripted)):
        # a demo run that went off the script (a photo of --frames left out) wrote its moves
        # beside its game: the same moves there say the game is the demo's own
        try:
            written = (db.parent / "moves.txt").read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            written = None
        if written != list(moves):
            return "its moves are not the script's"
    return None


def has_display() -> bool:
    """Whether a window can be shown: on Linux a display is named and (an X display) answers."""
    from companion.ui.app import unreachable_display

    if sys.platform.startswith("linux"):
        return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")) and \
            unreachable_display() is None
    return True


# ------------------------------------------------------------------------ drawing ---

def annotate(image: Any, record: Mapping[str, Any] | None, banner: str, calib: Any) -> Any:
    """The frame with what the camera saw drawn on it (:func:`vision.annotate.annotate`: card
    outlines and ids, pyramid rings and arrows, the calibration along the top) and the
    referee's verdict in a bar along the bottom, wrapped to the frame's width."""
    import numpy as np

    from vision.annotate import annotate as draw_record
    from vision.annotate import verdict_bar

    to_px = None
    if calib is not None and getattr(calib, "calibrated", False):
        def to_px(mm: Any) -> Any:
            return calib.to_image(np.asarray(mm, np.float64).reshape(-1, 2))
    out = draw_record(image, record, to_px) if record is not None else image.copy()
    return verdict_bar(out, banner, bad=("ILLEGAL" in banner or "QUESTION" in banner))


# ------------------------------------------------------------------------ the demo ---

def run(args: argparse.Namespace) -> int:
    import cv2

    from calibration.mat import load_mat
    from calibration.table import TableCalibrator
    from companion.commands.run import check_deck
    from companion.live.capture import FolderSource, Frame
    from companion.live.runner import FrameReport, LiveRunner
    from companion.live.session import EventKind, LiveEvent, LiveSession
    from companion.live.tablestate import TAROT_CARD_MM

    folder = find_sample_game(args.frames)
    try:
        script = json.loads((folder / "game.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DemoError(f"{folder / 'game.json'}: cannot be read: {exc}") from None
    _check_script(script, folder / "game.json")
    mat_file = folder / "mat.json"
    mat = load_mat(mat_file if mat_file.is_file() else None)
    out: Path = args.out
    check_folder(out, "--out", DemoError)
    try:
        (out / "frames").mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        # (its words, not "[Errno 20] Not a directory: 'notes.txt/x/frames'")
        raise DemoError(f"--out {out}: cannot be created ({refusal_words(exc)})") from None

    window = False
    if not args.headless:
        if not has_display():
            print("no display: running headless")
        else:
            try:
                import companion.ui as ui
                window = hasattr(ui, "run_live")
                if not window:
                    print("companion.ui has no run_live() yet: running headless")
            except ImportError:
                print("the window (companion.ui) is not available yet: running headless")

    which, observer, pipeline = make_observer(args.observations, mat, args.deck)
    card_size_mm = TAROT_CARD_MM
    if pipeline is not None:
        # a tarot only, and the lattice's pitch from its cards' size, as for `run`
        check_deck(script["game"], pipeline.gallery.card_ids, args.deck)
        card_size_mm = pipeline.card_size_mm
    print(f"sample game: {folder} ({script.get('title', '')})")
    print(f"observations: {which}")
    recorder = make_recorder(out, script)
    session = LiveSession(script["game"], edition=script["edition"], players=script["players"],
                          settings=script.get("settings") or None, seed=script.get("seed"),
                          recorder=recorder, mat=mat, card_size_mm=card_size_mm)
    clicks = {f"{k:04d}": entry["move"] for k, entry in enumerate(script["moves"], start=1)
              if entry.get("visible") is False}
    lines: list[str] = []

    def say(text: str) -> None:
        print(text)
        lines.append(text)

    def click(frame: Frame) -> None:
        move = clicks.pop(Path(frame.name).stem, None)
        if move is None:
            return
        say(f"  user's click (scripted from game.json, move {int(Path(frame.name).stem)}): "
            f"{move}")
        for e in session.manual(move):
            show(e, Path(frame.name).stem)

    def show(e: LiveEvent, stem: str) -> None:
        if e.kind is EventKind.ACCEPTED:
            say(f"{stem}  accepted: {e.text}")
        elif e.kind is EventKind.ILLEGAL:
            rules = f" [rule {', '.join(e.rules)}]" if e.rules else ""
            say(f"{stem}  ILLEGAL: {e.text}{rules}")
            for c in e.changes:
                say(f"        changed: {c}")
        elif e.kind is EventKind.QUESTION:
            say(f"{stem}  QUESTION: {e.text}")
        elif e.kind is EventKind.GAME_OVER:
            say(f"{stem}  GAME OVER: {e.text}")
        else:
            say(f"{stem}  {e.kind.value}: {e.text}")

    session.subscribe(lambda e: show(e, "    ") if e.kind in (
        EventKind.CAMERA_LOST, EventKind.CAMERA_BACK, EventKind.FRAME_SKIPPED) else None)
    calibrator = TableCalibrator(mat)

    def on_frame(report: FrameReport) -> None:
        stem = Path(report.frame.name).stem
        for e in report.events:
            show(e, stem)
        if not report.decision.settled:
            return
        banner_ev = next((e for e in report.events if e.kind in (
            EventKind.ILLEGAL, EventKind.QUESTION, EventKind.ACCEPTED, EventKind.GAME_OVER,
            EventKind.WAITING, EventKind.UNCHANGED, EventKind.INFO, EventKind.FRAME_SKIPPED)),
            None)
        banner = "" if banner_ev is None else (
            banner_ev.kind.value.upper()
            + (f" [rule {', '.join(banner_ev.rules)}]" if banner_ev.rules else "")
            + f": {banner_ev.text}")
        try:
            calib = calibrator.calibrate(report.frame.image)
        except CompanionError:
            calib = None
        img = annotate(report.frame.image, report.observation, f"{stem} {banner}", calib)
        cv2.imwrite(str(out / "frames" / f"{stem}.jpg"), img, [int(cv2.IMWRITE_JPEG_QUALITY), 85])

    source = FolderSource(folder, files=play_order(folder))
    runner = LiveRunner(source, session, observer, on_frame=on_frame, before_observe=click)
    if window:
        import companion.ui as ui

        title = f"companion demo: {script.get('title', 'the sample game')}"
        code = int(ui.run_live(runner, mat=mat, title=title))
        session.close()
        if (problem := session.record_problem()) is not None:
            say(f"error: {problem}")
            return 1
        return code
    try:
        stats = runner.run()
    finally:
        session.close()

    scores = session.scores()
    over = session.is_over
    # (a game that did not end, its last photos missing or refused, has no final scores)
    say(("final scores: " if over else "scores so far (the game did not end): ")
        + ", ".join(f"{c} {v}" for c, v in scores.items()))
    moves = [h.move for h in session.history]
    # how the run compares with the script (game.json), for whoever watches the demo
    scripted = [e["move"] for e in script["moves"] if "illegal" not in e]
    same = len(moves) == len(scripted) and all(m.startswith(s) for m, s in zip(moves, scripted))
    say(f"script check: {len(moves)} accepted moves "
        f"{'match' if same else 'DO NOT match'} game.json; final scores "
        f"{'match' if over and scores == script.get('final_scores') else 'DO NOT match'} "
        f"{script.get('final_scores')}" + ("" if over else " (the game did not end)"))
    say(f"run: {stats.summary()}")
    problem = session.record_problem()
    if problem is not None:
        say(f"error: {problem}")
    # (a full disk left moves.txt empty and ended on "No space left on device", naming no
    # file, before the game file's own problem was said)
    unwritten = [name for name, text in (("moves.txt", moves), ("record.txt", lines))
                 if not _write_lines(out / name, text)]
    if not unwritten:
        print(f"annotated frames, record.txt and moves.txt written to {out}")
    # (a frame that could not be read fails the run too, even where the game came out right)
    return 0 if (session.is_over and same and not stats.failed and problem is None
                 and not unwritten) else 1


def _check_script(script: Any, path: Path) -> None:
    """Refuse a game.json the demo cannot play, naming what is missing or wrong (a file
    without "edition" or "moves" ended on an internal error)."""
    def wrong(what: str) -> DemoError:
        return DemoError(f"{path}: not a sample game's script: {what} (see "
                         "sample_images/zarcana/game.json)")

    if not isinstance(script, dict):
        raise wrong(f"a JSON object is expected, not {type(script).__name__}")
    for key in ("game", "edition"):
        if not isinstance(script.get(key), str):
            raise wrong(f'"{key}" is missing or not text')
    players = script.get("players")
    if not isinstance(players, list) or not players or \
            not all(isinstance(p, str) for p in players):
        raise wrong('"players" is missing or not a list of colours')
    moves = script.get("moves")
    if not isinstance(moves, list):
        raise wrong('"moves" is missing or not a list')
    for k, entry in enumerate(moves, start=1):
        if not isinstance(entry, dict) or not isinstance(entry.get("move"), str):
            raise wrong(f'move {k} has no "move" text')
    if not isinstance(script.get("settings", {}), dict):
        raise wrong('"settings" is not an object')
    if script["game"] == "zarcana":
        from companion.games.zarcana.rules import (VALIDATED_SETTINGS, Edition, Settings,
                                                   SettingError, format_settings,
                                                   parse_setting, setting_values)

        try:
            edition = Edition.parse(script["edition"])
        except ValueError as exc:
            raise wrong(f'"edition": {exc}') from None
        # the engine's settings check says what it bounds, naming the setting and value
        # (box_cards -3 boxed nothing, said nowhere); the rest (a yes/no, the extra cards, a
        # colour, a trump's card) as --setting would take it; then together as dealt
        try:
            chosen = setting_values(script.get("settings", {}))
            settings = Settings(edition=edition, **chosen)
            settings.validate(len(players))
            for name, value in chosen.items():
                if name not in VALIDATED_SETTINGS:
                    parse_setting(format_settings({name: value}))
            settings.check_deal(len(players))
        except (SettingError, ValueError, TypeError) as exc:
            raise wrong(f'"settings": {exc}') from None


def _write_lines(path: Path, lines: list[str]) -> bool:
    """``lines`` written to ``path`` whole or not at all; False (said) where it cannot be."""
    try:
        write_text_atomic(path, "\n".join(lines) + "\n")
    except OSError as exc:
        print(f"companion demo: error: {path}: could not be written "
              f"({exc.strerror or exc})", file=sys.stderr)
        try:
            path.unlink(missing_ok=True)    # (an earlier run's would pass for this one's)
        except OSError:
            pass
        return False
    return True


__all__ = ["find_sample_game", "play_order", "register", "run", "truth_record"]
