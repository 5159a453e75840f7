"""Controllers: they wire the window's signals to the live session (or a recorded game) and
fill the widgets. This is the one module of the window that knows the live loop's API
(:mod:`companion.live`) and the recording store (:mod:`companion.recording`).

Threads. The session and the pipeline never run on the window's thread:

* the :class:`~companion.live.runner.LiveRunner` runs capture -> settle -> pipeline -> session
  in its own thread; its ``on_frame`` hook converts each shown frame to a ``QImage`` there and
  posts it with a queued signal;
* the user's clicks (manual moves, corrections, overrides, take-backs, the end) go to a
  one-thread :class:`CommandRunner`, so a slow re-judgement never freezes the window;
* the session's listener runs in whichever thread produced the event; it takes a
  :class:`Snapshot` of the session there (the only place that may wait on the session's lock)
  and posts it; the window thread only ever reads snapshots, and keeps the newest when two
  threads' snapshots arrive out of order.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

import numpy as np
import companion.ui.qtcompat  # noqa: F401  (before any Qt call: see its notes)
from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QObject, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication, QFileDialog, QListWidgetItem, QMessageBox

from companion.core.cards import BACK, card_words, tarot_deck
from companion.core.errors import CompanionError
from companion.core.files import write_text_atomic
from companion.core.pieces import Cell, Color, Pose, Pyramid, format_cell, parse_cell
from companion.live.session import (
    CardCorrection,
    EventKind,
    HistoryEntry,
    LiveEvent,
    LiveSession,
    PyramidCorrection,
    Status,
    Suggestion,
)
from companion.live.tablestate import DISCARD_ZONE, TableReading, TableTracker, stacks_of
from companion.ui.gamemodel import (
    describe_position,
    describe_targets,
    final_scoring,
    minion_targets,
    move_line,
)
from companion.ui.overlay import (
    Hit,
    Overlay,
    TableMapping,
    build_overlay,
    illegal_cells,
    mapping_from_calibration,
    mapping_from_record,
)
from companion.ui.views import MANUAL_TITLE, MainWindow
from companion.ui.widgets import CorrectionDialog

log = logging.getLogger(__name__)

#: Frames shown per second at most (the pipeline sees every settled frame regardless).
DISPLAY_FPS = 15.0
#: Keyframes kept for stepping back are scaled to this width and stored as JPEG.
KEYFRAME_WIDTH = 960
#: keyframes a replay keeps decoded (about 6 MB each at 1600x900)
REPLAY_KEYFRAMES_KEPT = 24
#: With no calibration yet, try the markers of an unsettled frame this often (s).
CALIBRATE_EVERY_S = 2.0
#: What the window's title starts with while the game file cannot be written.
NOT_RECORDED_TITLE = "NOT RECORDED: "
#: How the buttons that name an unnamed card begin, the cell after: a face-down territory
#: (a Wheel of Fortune build), or a face-up card the Alchemist covered, uncovered where no
#: picture could name it (LiveSession.name_card)
NAME_FACE_DOWN = "name the face-down card at"
NAME_CARD = "name the card at"


class PausedError(CompanionError):
    """The user paused the companion: a settled frame is not judged."""


def picture_warning(record: Mapping[str, Any]) -> str | None:
    """What the window keeps saying about a settled frame's picture: blurred (the record's
    ``blurred``, read on the mat's marker edges), the cards another size than the deck's
    (``calibration.card_scale``: the mat file is not the mat's size), else nothing."""
    from calibration.mat import calibration_scale_doubt
    from calibration.sharpness import blurred_picture

    said = blurred_picture(record)
    doubt = calibration_scale_doubt(record.get("calibration"))
    words = ([] if said is None else [f"{said}: steady or focus the camera"]) + (
        [] if doubt is None else [doubt])
    return "; ".join(words) or None


def bgr_to_qimage(image: np.ndarray) -> QImage:
    """A BGR (or grey) OpenCV image as a QImage that owns its pixels (any thread)."""
    arr = np.ascontiguousarray(image)
    if arr.ndim == 2:
        h, w = arr.shape
        return QImage(arr.data, w, h, arr.strides[0], QImage.Format.Format_Grayscale8).copy()
    h, w = arr.shape[:2]
    if arr.shape[2] == 4:
        return QImage(arr.data, w, h, arr.strides[0], QImage.Format.Format_ARGB32).copy()
    return QImage(arr.data, w, h, arr.strides[0], QImage.Format.Format_BGR888).copy()


def jpeg_bytes(image: QImage, width: int = KEYFRAME_WIDTH, quality: int = 80) -> bytes:
    small = image if image.width() <= width else image.scaledToWidth(
        width, Qt.TransformationMode.SmoothTransformation)
    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    small.save(buf, "JPG", quality)  # type: ignore[call-overload]  # the stubs say bytes; Qt wants str
    buf.close()
    return bytes(data.data())


def image_from_jpeg(data: bytes) -> QImage:
    img = QImage()
    img.loadFromData(data)
    return img


# ------------------------------------------------------------------ command runner ---

class CommandRunner(QObject):
    """Runs the user's session calls one at a time, off the window's thread.

    ``failed(text)``: a call raised; a :class:`CompanionError` is the user's mistake or a
    refusal (its message is shown as it is), anything else is logged with its traceback.
    """

    failed = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="session-commands")
        self._futures: list[Future[Any]] = []
        self._lock = threading.Lock()

    def submit(self, what: str, fn: Callable[..., Any], *args: Any) -> Future[Any]:
        def job() -> Any:
            try:
                return fn(*args)
            except CompanionError as exc:
                self.failed.emit(f"{what}: {exc}")
            except Exception as exc:  # noqa: BLE001 - the window must survive a failure
                log.exception("%s failed", what)
                self.failed.emit(f"{what} failed: {exc}")
            return None

        try:
            fut = self._pool.submit(job)
        except RuntimeError:      # (a click while the window closes)
            self.failed.emit(f"{what}: not done, the window is closing")
            fut = Future()
            fut.set_result(None)
            return fut
        with self._lock:
            self._futures = [f for f in self._futures if not f.done()] + [fut]
        return fut

    def busy(self) -> bool:
        with self._lock:
            return any(not f.done() for f in self._futures)

    def shutdown(self, timeout_s: float = 5.0) -> bool:
        """Take no more calls, and wait up to ``timeout_s`` for those already clicked (a
        move clicked just before the window closed is still recorded before the session
        closes). False when some were still running after it."""
        with self._lock:
            pending = [f for f in self._futures if not f.done()]
        self._pool.shutdown(wait=False)
        _done, running = wait(pending, timeout_s)
        if running:
            # (one hangs: those queued behind it would only run after the session closed)
            self._pool.shutdown(wait=False, cancel_futures=True)
            log.warning("%d clicked command(s) still running; closing anyway", len(running))
        return not running


# ------------------------------------------------------------------------ records ---

@dataclass(frozen=True)
class Snapshot:
    """The session as one event left it: all the window thread reads of it."""

    status: Status
    state: Any                                  # ZarcanaState or None before the deal
    states: tuple[Any, ...]                     # initial position, then after each move
    history: tuple[HistoryEntry, ...]
    reading: TableReading | None
    lattice: Any
    manual: tuple[str, ...]
    #: the unnamed cards on top the players may name: (cell, face up), face-down
    #: territories first, then the Alchemist's covered cards uncovered unnamed
    unnamed: tuple[tuple[Cell, bool], ...]
    suggestions: tuple[Suggestion, ...]
    series: Mapping[str, list[int]] = field(default_factory=dict)
    can_override: bool = False          # the session's override has something to accept
    #: the order the snapshots were taken in (under the session's lock): a snapshot posted
    #: from one thread may arrive after a newer one from another, and must not replace it
    seq: int = 0

    @property
    def over(self) -> bool:
        return self.status is Status.OVER


@dataclass(frozen=True)
class FramePost:
    """One frame for the window, made in the runner's thread."""

    image: QImage
    index: int
    name: str
    record: Mapping[str, Any] | None = None     # the observation, for a settled frame
    mapping: TableMapping | None = None
    note: str | None = None                     # a runner message (a skipped frame)


@dataclass(frozen=True)
class KeyFrame:
    """What the window shows for an earlier position."""

    jpeg: bytes
    size: tuple[int, int]                       # the original frame size (overlay pixels)
    reading: TableReading | None
    mapping: TableMapping | None


# ------------------------------------------------------------------- shared logic ---

class _ViewBase(QObject):
    """What live and replay share: positions to step through, selection, overlay."""

    def __init__(self, window: MainWindow, card_size_mm: Sequence[float]) -> None:
        super().__init__(window)
        self.window = window
        self.card_size_mm = (float(card_size_mm[0]), float(card_size_mm[1]))
        self.view_index: int | None = None      # None: the live position / the last one
        self.selected: Hit | None = None
        self.targets: list[Any] = []
        w = window
        w.video.clicked.connect(self.on_click)
        w.back_button.clicked.connect(lambda: self.step_view(-1))
        w.forward_button.clicked.connect(lambda: self.step_view(+1))
        w.live_button.clicked.connect(self.go_live)
        w.log.picked.connect(self.view_position)
        w.zoom_button.toggled.connect(lambda _on: self.refresh_overlay())

    # -- positions (subclasses say how many and what each one is)
    def position_count(self) -> int:
        raise NotImplementedError

    def state_at(self, k: int) -> Any:
        raise NotImplementedError

    def refresh(self) -> None:
        raise NotImplementedError

    def shown_index(self) -> int:
        n = self.position_count()
        return n - 1 if self.view_index is None else min(self.view_index, n - 1)

    def step_view(self, delta: int) -> None:
        n = self.position_count()
        if n == 0:
            return
        k = max(0, min(n - 1, self.shown_index() + delta))
        self.view_position(k)

    def view_position(self, k: int) -> None:
        n = self.position_count()
        if n == 0:
            return
        k = max(0, min(n - 1, k))
        self.view_index = None if k == n - 1 else k
        self.selected = None
        self.targets = []
        self.window.targets.clear()
        self.window.selection.setText("Click a pyramid to see its legal moves in the shown "
                                      "position.")
        self.refresh()

    def go_live(self) -> None:
        self.view_position(self.position_count() - 1)

    # -- selection
    def on_click(self, x: float, y: float) -> None:
        hit = self.window.video.overlay().hit(x, y)
        self.select(hit)

    def select(self, hit: Hit | None) -> None:
        self.selected = hit
        self.targets = []
        w = self.window
        w.targets.clear()
        if hit is None:
            w.selection.setText("Nothing selected: click a card or a pyramid.")
            self.selection_changed()
            self.refresh_overlay()
            return
        if hit.what == "pyramid":
            state = self.state_at(self.shown_index()) if self.position_count() else None
            minion = hit.minion
            who = state.to_move.value if state is not None and state.to_move is not None else None
            if state is None or minion is None:
                w.selection.setText(f"Pyramid {hit.label}: not on the board.")
            elif not state.has_minion(minion):
                w.selection.setText(f"Pyramid {minion}: the game does not have it there "
                                    "(the table differs from the game).")
            else:
                self.targets = minion_targets(state, minion)
                if self.targets:
                    w.selection.setText(f"Pyramid {minion}: {who}'s legal moves with it "
                                        f"({sum(t.count for t in self.targets)}):")
                    for line in describe_targets(self.targets):
                        w.targets.addItem(QListWidgetItem(line))
                elif who is not None and minion.color.value != who:
                    w.selection.setText(f"Pyramid {minion}: {who} is to move, so it has "
                                        "no move now.")
                else:
                    w.selection.setText(f"Pyramid {minion}: no legal move with it now.")
        else:
            where = format_cell(hit.cell) if hit.cell is not None else (
                getattr(hit.card, "zone", None) or "off the board")
            card_id = hit.label.split(" ", 1)[0]
            w.selection.setText(f"Card at {where}: {card_words(card_id)}.")
        self.selection_changed()
        self.refresh_overlay()

    def selection_changed(self) -> None:
        """Enable what the selection allows (nothing here; the live window corrects)."""

    def refresh_overlay(self) -> None:
        raise NotImplementedError

    def show_overlay(self, overlay: Overlay) -> None:
        """Put the overlay on the video and, when zoomed, frame the game's part of it."""
        video = self.window.video
        video.set_overlay(overlay)
        box = overlay.extent() if self.window.zoom_button.isChecked() else None
        if box is None:
            video.set_view(None)
            return
        x0, y0, x1, y1 = box
        pad = 0.12 * max(x1 - x0, y1 - y0) + 40.0
        video.set_view(QRectF(x0 - pad, y0 - pad, x1 - x0 + 2 * pad, y1 - y0 + 2 * pad))


# ------------------------------------------------------------------------- live ---

class LiveController(_ViewBase):
    """Wires a :class:`MainWindow` to a :class:`LiveSession` and (optionally) a
    :class:`~companion.live.runner.LiveRunner` feeding it.

    ``mat``: the calibration mat (for the overlay's calibration when the pipeline gives
    none); ``card_ids``: the deck's card ids offered when correcting a card.
    """

    snapshot_ready = Signal(object, object)     # (LiveEvent | None, Snapshot)
    frame_ready = Signal(object)                # FramePost
    feed_ended = Signal(str)

    def __init__(self, window: MainWindow, session: LiveSession, *, runner: Any = None,
                 mat: Any = None, card_size_mm: Sequence[float] | None = None,
                 card_ids: Sequence[str] | None = None,
                 display_fps: float = DISPLAY_FPS) -> None:
        size: Sequence[float] = (card_size_mm if card_size_mm is not None else
                                 getattr(session.tracker, "card_size_mm", (70.0, 120.0)))
        super().__init__(window, size)
        self.session = session
        self.runner = runner
        self.mat = mat
        self.card_ids = list(card_ids) if card_ids else list(tarot_deck(
            ("extra-gateway", "extra-doppelganger"))) + [BACK]
        self.min_interval_s = 1.0 / display_fps if display_fps > 0 else 0.0
        self.commands = CommandRunner(self)
        self._snapshots_taken = 0
        self.snapshot: Snapshot = self._take_snapshot()
        self.mapping: TableMapping | None = None
        self.latest: FramePost | None = None
        self.last_settled: FramePost | None = None
        self.keyframes: dict[int, KeyFrame] = {}
        self.illegal: dict[Cell, str] = {}
        #: the camera's ruling on show (its text, its choices), kept when a click is refused
        self._ruling: tuple[str, list[str]] | None = None
        # the banner shows what the game waits for (cleared by the next move taken)
        self._wait_shown = False
        self.events: list[LiveEvent] = []       # every event, in order (the log's source)
        self.paused = False
        self.source_ended: str | None = None
        self._resume = threading.Event()
        self._resume.set()
        self._stopping = threading.Event()
        self._last_post = 0.0
        self._last_calib_try = 0.0
        self._calibrator: Any = None
        self._runner_thread: threading.Thread | None = None
        self._dialog: CorrectionDialog | None = None

        self.snapshot_ready.connect(self._apply_snapshot, Qt.ConnectionType.QueuedConnection)
        self.frame_ready.connect(self._show_frame, Qt.ConnectionType.QueuedConnection)
        self.feed_ended.connect(self._on_feed_ended, Qt.ConnectionType.QueuedConnection)
        self.commands.failed.connect(self._on_failed, Qt.ConnectionType.QueuedConnection)
        self._unsubscribe = session.subscribe(self._on_session_event)

        w = window
        w.pause_button.toggled.connect(self.set_paused)
        w.correct_button.clicked.connect(self.open_correction)
        w.override_button.clicked.connect(self.override)
        w.undo_button.clicked.connect(self.take_back)
        w.end_button.clicked.connect(self.confirm_end)
        w.save_button.clicked.connect(self.save_dialog)
        w.manual.chosen.connect(self.manual)
        w.question.chosen.connect(self.answer_question)
        w.alert.chosen.connect(self._alert_choice)
        if runner is not None:
            self._hook_runner(runner)
        self.refresh()

    # ================================================================ the feed ===
    def _hook_runner(self, runner: Any) -> None:
        previous = runner.on_frame
        inner = runner.observer
        owner = getattr(inner, "__self__", None)
        self._pipeline = owner if hasattr(owner, "last_calibration") else None
        if self.mat is None:
            self.mat = getattr(owner, "mat", None)

        def on_frame(report: Any) -> None:
            if previous is not None:
                previous(report)
            self.post_report(report)

        def observer(image: np.ndarray, name: str) -> Mapping[str, Any]:
            if not self._resume.is_set():
                if getattr(runner.source, "live", False):
                    raise PausedError("paused: the table is not being watched")
                # a file or folder waits where it is, so no move is skipped
                while not self._resume.wait(0.2):
                    if self._stopping.is_set():
                        raise PausedError("the window was closed")
            if self._stopping.is_set():
                # (closing sets resume too, to let this wait go: the paused frame is not
                # judged on the way out)
                raise PausedError("the window was closed")
            record: Mapping[str, Any] = inner(image, name)
            return record

        runner.on_frame = on_frame
        runner.observer = observer

    def start(self) -> None:
        """Start the runner in its thread (the window's thread stays free)."""
        if self.runner is None or self._runner_thread is not None:
            return
        runner = self.runner

        def run() -> None:
            try:
                stats = runner.run()
                text = stats.summary() if hasattr(stats, "summary") else "done"
            except Exception as exc:  # noqa: BLE001 - reported in the window
                log.exception("the live loop failed")
                text = f"the live loop failed: {exc}"
            self.feed_ended.emit(text)

        self._runner_thread = threading.Thread(target=run, name="live runner", daemon=True)
        self._runner_thread.start()

    def stop(self) -> None:
        """Stop the feed and the command thread (the window is closing)."""
        self._stopping.set()
        self._resume.set()
        if self.runner is not None:
            try:
                self.runner.stop(2.0)
            except Exception:  # noqa: BLE001 - closing must go on
                log.exception("the live loop did not stop cleanly")
        thread = self._runner_thread
        if thread is not None and thread is not threading.current_thread():
            # (the loop runs on this thread, not the runner's own: wait for the frame in
            # hand, so that the session is not closed under a move being accepted)
            thread.join(5.0)
            if thread.is_alive():
                log.warning("the live loop has not stopped (a frame in hand, or the source "
                            "not answering); closing anyway")
        self.commands.shutdown()
        self._unsubscribe()

    def post_report(self, report: Any) -> None:
        """A runner report (runner thread): the frame for the window, and its calibration."""
        record = getattr(report, "observation", None)
        frame = report.frame
        now = time.monotonic()
        note = None
        for e in getattr(report, "events", ()):
            if e.kind is EventKind.FRAME_SKIPPED:
                note = e.text
        if record is None and note is None and now - self._last_post < self.min_interval_s:
            return
        self._last_post = now
        mapping = self._mapping_for(frame.image, record)
        self.frame_ready.emit(FramePost(bgr_to_qimage(frame.image), frame.index, frame.name,
                                        record, mapping, note))

    def post_frame(self, image: np.ndarray, index: int, name: str = "",
                   record: Mapping[str, Any] | None = None,
                   mapping: TableMapping | None = None) -> None:
        """Show a frame (any thread): for callers that feed the session themselves."""
        if mapping is None:
            mapping = self._mapping_for(image, record)
        self.frame_ready.emit(FramePost(bgr_to_qimage(image), index, name or str(index),
                                        record, mapping))

    def _mapping_for(self, image: np.ndarray, record: Mapping[str, Any] | None
                     ) -> TableMapping | None:
        """Table mm -> image px: the pipeline's calibration, the record's pixel positions,
        else the mat's markers in the frame (tried at most every few seconds)."""
        if record is not None:
            pipe = getattr(self, "_pipeline", None)
            if pipe is not None:
                m = mapping_from_calibration(getattr(pipe, "last_calibration", None))
                if m is not None:
                    return m
            m = mapping_from_record(record, self.mat, self.card_size_mm)
            if m is not None:
                return m
        elif self.mapping is not None:
            return None  # keep the one the window has: the camera does not move
        now = time.monotonic()
        if record is None and now - self._last_calib_try < CALIBRATE_EVERY_S:
            return None
        self._last_calib_try = now
        try:
            from calibration.mat import DEFAULT_MAT
            from calibration.table import TableCalibrator

            if self._calibrator is None:
                self._calibrator = TableCalibrator(self.mat if self.mat is not None
                                                   else DEFAULT_MAT)
            return mapping_from_calibration(self._calibrator.calibrate(image))
        except Exception as exc:  # noqa: BLE001 - no overlay is better than no video
            log.debug("overlay calibration failed: %s", exc)
            return None

    def _show_frame(self, post: FramePost) -> None:
        self.latest = post
        if post.mapping is not None:
            self.mapping = post.mapping
        if post.record is not None:
            self.last_settled = post
            self.window.show_picture_warning(picture_warning(post.record))
        if post.note:
            self.window.show_status(post.note)
        if self.view_index is None:
            self.window.video.set_frame(post.image)
            if post.record is not None or post.mapping is not None:
                self.refresh_overlay()

    def _on_feed_ended(self, text: str) -> None:
        self.source_ended = text
        self.window.show_status(f"the frame source has ended: {text}")
        if not self.snapshot.over:
            self.window.video.set_message(None)

    # ================================================================ the session ===
    def _take_snapshot(self) -> Snapshot:
        """Read the session (a worker thread, or the window's before anything runs), with its
        lock held: a move a click makes in another thread waits, and comes in a later
        snapshot."""
        return self.session.read(self._read_session)

    def _read_session(self, s: LiveSession) -> Snapshot:
        state = s.state
        history = tuple(s.history)
        initial = s.initial_state
        states: tuple[Any, ...] = ()
        if initial is not None:
            states = (initial,) + tuple(h.state for h in history)
            if state is not None and states[-1] is not state:
                # the game ended by the players, or a face-down card named: the latest
                # position is the session's state, with no move of its own
                states = states[:-1] + (state,)
        series: dict[str, list[int]] = {}
        for st in states:
            for c, v in st.scores().items():
                series.setdefault(c.value, []).append(v)
        try:
            manual = tuple(s.manual_options())
            unnamed = tuple((c, False) for c in s.hidden_cards()) + \
                tuple((c, True) for c in s.unnamed_face_up_cards())
        except CompanionError as exc:
            log.debug("no manual options: %s", exc)
            manual, unnamed = (), ()
        self._snapshots_taken += 1
        return Snapshot(s.status, state, states, history, s.last_reading, s.tracker.lattice,
                        manual, unnamed, tuple(s.pending_suggestions), series,
                        s.can_override, self._snapshots_taken)

    def _on_session_event(self, event: LiveEvent) -> None:
        self.snapshot_ready.emit(event, self._take_snapshot())

    def _apply_snapshot(self, event: LiveEvent | None, snap: Snapshot) -> None:
        before = self.snapshot
        w = self.window
        if snap.seq < before.seq:
            # taken before the one on show (a picture and a click a moment apart, in two
            # threads): its event is still told, the newer position stays
            if event is not None:
                self.events.append(event)
                self._show_event(event)
                self._clear_banners(before)
                self.refresh()
            return
        self.snapshot = snap
        if event is not None:
            self.events.append(event)
            self._show_event(event)
        # keyframes: the frame that showed each new position
        if snap.states and not before.states:
            self._keep_keyframe(0, None)
        # (a move read again replaces the last one: its picture is the new one's)
        first_new = next((k for k, (a, b) in enumerate(zip(before.history, snap.history))
                          if (a.move, a.frame) != (b.move, b.frame)), len(before.history))
        for k in range(first_new, len(snap.history)):
            self._keep_keyframe(k + 1, snap.history[k].frame)
        for k in [k for k in self.keyframes if k >= len(snap.states)]:
            del self.keyframes[k]           # taken back
        if len(snap.history) < len(before.history) and w.alert.kind == "info":
            w.alert.clear()                 # (a notice of a move now taken back)
        self._clear_banners(snap)
        self.refresh()

    def _clear_banners(self, snap: Snapshot) -> None:
        """A ruling or question the position on show no longer has goes."""
        w = self.window
        if snap.status is not Status.WRONG_TABLE:
            self.illegal = {}
            if w.alert.kind == "illegal":
                w.alert.clear()
        if snap.status is not Status.QUESTION and w.question.isVisible():
            w.question.clear()

    def _show_event(self, e: LiveEvent) -> None:
        w = self.window
        if e.notice and not (w.alert.isVisible() and w.alert.kind != "info"):
            # kept on show (a move read again, one taken from a picture before a click) until
            # dismissed or another message takes the banner
            w.alert.show_message("info", _html(e.notice))
            self._wait_shown = False
        if e.kind is EventKind.ACCEPTED:
            if self._wait_shown and w.alert.kind == "info":
                w.alert.clear()
            self._wait_shown = False
            w.show_status(f"accepted: {e.text}")
        elif e.kind in (EventKind.UNCHANGED, EventKind.INFO) and self._wait_shown:
            # (a clear picture with no move since, the table put right: the wait is over)
            if w.alert.kind == "info":
                w.alert.clear()
            self._wait_shown = False
            w.show_status(e.text)
        elif e.kind is EventKind.WAITING:
            if not e.text.startswith("frame not used") and not (
                    w.alert.isVisible() and w.alert.kind != "info"):
                # what the game waits for (the deal laid out otherwise, a covered table,
                # moves held): on the status bar alone, the next line there (the source
                # ended) replaced it, and the window said nothing of why it waited
                w.alert.show_message("info", f"<b>Waiting:</b> {_html(e.text)}")
                self._wait_shown = True
            w.show_status(e.text)
        elif e.kind is EventKind.ILLEGAL:
            if e.move:
                lines = [f"<b>Illegal:</b> {_html(e.move)}"]
                lines += [f"&nbsp;&nbsp;\u2717 {_html(v)}" for v in e.verdicts] or [
                    _html(e.text)]
            else:
                lines = ["<b>No legal move explains what changed on the table.</b>"]
            if e.rules:
                lines.append(f"rule: {_html(', '.join(e.rules))}")
            if e.changes:
                lines.append("changed: " + _html("; ".join(e.changes)))
            if e.source == "camera":
                if e.move:
                    lines.append("Put the table right, correct a misread piece, or accept "
                                 "anyway.")
                    choices = ["Accept anyway (override)"]
                else:
                    # no move explains it, not even one that breaks a rule: nothing to accept
                    lines.append("Put the table right, or correct a misread piece.")
                    choices = []
                self.illegal = illegal_cells(e.changes)
                self._ruling = ("<br>".join(lines), choices)
                w.alert.show_message("illegal", self._ruling[0], choices)
            elif w.alert.kind == "illegal" and self.illegal and self._ruling is not None:
                # a click refused while a camera's ruling is on show: the ruling stays, and
                # says the click was refused
                w.alert.show_message("illegal", f"{self._ruling[0]}<br><i>Refused: "
                                     f"{_html(e.text)}</i>", self._ruling[1])
            else:   # a clicked move the rules refuse: nothing changed, nothing to override
                w.alert.show_message("illegal", "<br>".join(lines))
            w.show_status(e.text)
        elif e.kind is EventKind.QUESTION:
            choices = [s.text for s in e.suggestions]
            w.question.show_message(
                "question", "<b>Please check:</b> no move explains what the camera sees, "
                "but one misread would. Is this what is on the table?", choices)
            w.show_status(e.text)
        elif e.kind is EventKind.CAMERA_LOST:
            w.video.set_message(f"{e.text}\nwaiting for frames to come back\u2026")
            w.show_status(e.text)
        elif e.kind is EventKind.CAMERA_BACK:
            w.video.set_message(None)
            w.show_status(e.text)
        elif e.kind is EventKind.NOT_RECORDED:
            w.alert.show_message("not_recorded",
                                 f"<b>The game is not being recorded.</b> {_html(e.text)}")
            # (the banner gives way to the next ruling; the title stays until it is written)
            if not w.windowTitle().startswith(NOT_RECORDED_TITLE):
                w.setWindowTitle(NOT_RECORDED_TITLE + w.windowTitle())
            w.show_status(e.text)
        elif e.kind is EventKind.RECORDED_AGAIN:
            if w.alert.kind == "not_recorded":
                w.alert.clear()
            w.setWindowTitle(w.windowTitle().removeprefix(NOT_RECORDED_TITLE))
            w.show_status(e.text)
        elif e.kind is EventKind.GAME_OVER:
            w.alert.show_message("over", f"<b>Game over.</b> {_html(e.text)}")
            w.tabs.setCurrentWidget(w.final)
            w.show_status(e.text)
        else:
            w.show_status(e.text)

    def _keep_keyframe(self, position: int, frame: int | None) -> None:
        post = self.last_settled if (self.last_settled is not None and (
            frame is None or self.last_settled.index == frame)) else self.latest
        if post is None:
            return
        img = post.image
        self.keyframes[position] = KeyFrame(jpeg_bytes(img), (img.width(), img.height()),
                                            self.snapshot.reading, self.mapping)

    # ================================================================ positions ===
    def selection_changed(self) -> None:
        self.window.correct_button.setEnabled(
            self.selected is not None and self.view_index is None and not self.snapshot.over)

    def position_count(self) -> int:
        return len(self.snapshot.states)

    def state_at(self, k: int) -> Any:
        states = self.snapshot.states
        if not states:
            return None
        return states[max(0, min(len(states) - 1, k))]

    def refresh(self) -> None:
        """Fill every widget from the snapshot and the shown position."""
        w = self.window
        snap = self.snapshot
        n = self.position_count()
        k = self.shown_index() if n else 0
        live = self.view_index is None
        if n == 0:
            w.scores.show_position(None, note="waiting for the dealt board: lay out the cards")
        else:
            note = None if live else "an earlier position"
            w.scores.show_position(describe_position(self.state_at(k)), note=note)
        # (a card built face down, or covered at once by the Alchemist, named once known:
        # the notation stays what was seen; the positions after a move read only for a
        # covered card the camera saw after a later move)
        states = [h.state for h in snap.history]
        w.log.set_moves([move_line(h.move, h.state, itertools.islice(states, i + 1, None))
                         for i, h in enumerate(snap.history)], k if n else None)
        # ("blue: draw 1" is labelled "draw 1"; a click not a player's move, such as
        # "destroyed: red started again at 2,1", keeps its words)
        colours = {c.value for c in Color}
        labels = [m.split(": ", 1)[1] if m.split(": ", 1)[0] in colours else m
                  for m in snap.manual]
        extra = [f"{NAME_CARD if up else NAME_FACE_DOWN} {format_cell(c)}"
                 for c, up in snap.unnamed]
        w.manual.set_options(list(snap.manual) + extra, labels + extra)
        # the buttons act for the player the game waits for, who may not be the one at the
        # table reaching for them (a move the camera has not seen yet): say whose they are
        who = snap.state.to_move if snap.state is not None and not snap.over else None
        w.manual_box.setTitle(MANUAL_TITLE if who is None
                              else f"{MANUAL_TITLE}: {who.value}'s turn")
        can_play = live and not snap.over and not self.paused and snap.state is not None
        w.manual_box.setEnabled(can_play)
        w.override_button.setEnabled(snap.can_override and live)
        w.undo_button.setEnabled(bool(snap.history) and live and not snap.over)
        w.end_button.setEnabled(snap.state is not None and not snap.over)
        w.correct_button.setEnabled(self.selected is not None and live and not snap.over)
        w.back_button.setEnabled(n > 0 and k > 0)
        w.forward_button.setEnabled(n > 0 and not live)
        w.live_button.setEnabled(not live)
        if n:
            w.position_label.setText("live" + (" (paused)" if self.paused else "") if live
                                     else f"showing position {k} of {n - 1}")
        state = self.state_at(k)
        if state is not None:
            over = bool(getattr(state, "is_over", False))
            totals = {c.value: v for c, v in state.scores().items()}
            winners = [c.value for c in state.winners()] if over else []
            w.final.show_scoring(final_scoring(state), totals, winners, over)
        w.final.chart.set_series(snap.series, None if live else k)
        if live:
            w.video.set_caption("PAUSED: the table is not being judged" if self.paused else None)
            if self.latest is not None:
                w.video.set_frame(self.latest.image)
        else:
            kf = self.keyframes.get(k)
            move = snap.history[k - 1].move if k > 0 else "the start"
            w.video.set_caption(f"Position {k}: after {move}" if k else "Position 0: the start")
            if kf is not None:
                w.video.set_frame(image_from_jpeg(kf.jpeg), QSize(*kf.size))
        self.refresh_overlay()

    def refresh_overlay(self) -> None:
        snap = self.snapshot
        live = self.view_index is None
        sel = self.selected.minion if self.selected is not None else None
        sel_card = None
        if self.selected is not None and self.selected.what == "card":
            sel_card = self.selected.cell if self.selected.cell is not None else getattr(
                self.selected.card, "zone", None)
        if live:
            overlay = build_overlay(self.mapping, reading=snap.reading, lattice=snap.lattice,
                                    state=snap.state, card_size_mm=self.card_size_mm,
                                    selected=sel, targets=self.targets, illegal=self.illegal,
                                    selected_card=sel_card)
        else:
            k = self.shown_index()
            kf = self.keyframes.get(k)
            overlay = Overlay() if kf is None else build_overlay(
                kf.mapping, reading=kf.reading, lattice=snap.lattice, state=self.state_at(k),
                card_size_mm=self.card_size_mm, selected=sel, targets=self.targets,
                selected_card=sel_card)
        self.show_overlay(overlay)

    # ================================================================ the user ===
    def set_paused(self, paused: bool) -> None:
        resumed = self.paused and not paused
        self.paused = bool(paused)
        if self.paused:
            self._resume.clear()
            self.window.show_status("paused: settled tables are not judged until you resume")
        else:
            self._resume.set()
            detector = getattr(self.runner, "detector", None)
            if resumed and detector is not None and hasattr(detector, "retry"):
                detector.retry()     # the table that settled while paused is judged now
            self.window.show_status("watching the table again")
        if self.window.pause_button.isChecked() != self.paused:
            self.window.pause_button.setChecked(self.paused)
        self.window.pause_button.setText("Resume" if self.paused else "Pause")
        self.refresh()

    def manual(self, option: str) -> Future[Any] | None:
        """A move the camera cannot see, as clicked (or naming an unnamed card)."""
        for words, face_up in ((NAME_FACE_DOWN, False), (NAME_CARD, True)):
            if option.startswith(words + " "):
                self._name_card(parse_cell(option.rsplit(" ", 1)[1]), face_up)
                return None
        return self.commands.submit(f"move {option!r}", self.session.manual, option)

    def override(self) -> Future[Any]:
        return self.commands.submit("accept anyway", self.session.override)

    def take_back(self) -> Future[Any]:
        return self.commands.submit("take back", self.session.step_back)

    def end_game(self) -> Future[Any]:
        return self.commands.submit("end the game", self.session.end_game)

    def answer_question(self, k: int) -> Future[Any] | None:
        suggestions = self.snapshot.suggestions
        if not 0 <= k < len(suggestions):
            self.window.question.clear()
            return None
        return self.commands.submit("correction", self.session.correct,
                                    suggestions[k].correction)

    def _alert_choice(self, k: int) -> None:
        if k == 0 and self.window.alert.kind == "illegal":
            self.override()

    def confirm_end(self) -> None:
        box = QMessageBox(QMessageBox.Icon.Question, "End the game",
                          "End the game now and score it as the table stands?",
                          QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
                          self.window)
        def done(_result: int) -> None:
            if box.standardButton(box.clickedButton()) == QMessageBox.StandardButton.Yes:
                self.end_game()

        box.finished.connect(done)
        box.open()

    def save_to(self, path: str | Path) -> Path:
        """Write the game as it stands (the engine's saved game, loadable by
        ``companion play --load``); the recording is on disk already, move by move."""
        from companion.games.zarcana.engine import dumps

        state = self.snapshot.state
        if state is None:
            raise CompanionError("there is no game to save yet: the board has not been dealt")
        p = Path(path)
        try:
            write_text_atomic(p, dumps(state) + "\n")
        except OSError as exc:
            raise CompanionError(f"cannot write {p}: {exc.strerror or exc}") from None
        rec = getattr(self.session.recorder, "path", None)
        self.window.show_status(f"saved to {p}" + (f"; the game is recorded in {rec}"
                                                   if rec else ""))
        return p

    def save_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self.window, "Save the game", "zarcana-game.json",
                                              "Saved game (*.json)")
        if path:
            try:
                self.save_to(path)
            except CompanionError as exc:
                self._on_failed(str(exc))

    # -- corrections
    def correction_for(self, values: Mapping[str, Any]) -> CardCorrection | PyramidCorrection:
        """The session's correction for the selected piece and the user's answer."""
        hit = self.selected
        if hit is None:
            raise CompanionError("select a card or a pyramid first (click it in the video)")
        if hit.what == "card":
            card = hit.card
            where: Cell | str | None = hit.cell
            if where is None and getattr(card, "zone", None) == DISCARD_ZONE:
                where = DISCARD_ZONE
            if where is None:
                raise CompanionError("this card is not on the board or the discard pile: "
                                     "there is nothing to correct")
            seen = getattr(card, "read_as", None) or getattr(card, "id", None)
            card_id = str(values.get("card", "")).strip()
            if not card_id:
                raise CompanionError("say which card it is")
            return CardCorrection(where, str(seen), card_id)
        sp = hit.pyramid
        if sp is None:
            raise CompanionError("this pyramid is not on the board: there is nothing to correct")
        cell: Cell | None = sp.raw_cell if getattr(sp, "raw_cell", None) is not None else hit.cell
        if cell is None:
            raise CompanionError("this pyramid is away from the lattice: there is nothing to "
                                 "correct")
        seen_pyr = sp.read_as if getattr(sp, "read_as", None) is not None else sp.pyramid
        if values.get("absent"):
            return PyramidCorrection(cell, seen_pyr, None)
        try:
            actual = Pyramid(Color.parse(str(values["color"])), int(values["size"]),
                             Pose(str(values["pose"]).upper()))
            text = str(values.get("cell") or "").strip()
            target = parse_cell(text) if text else None
        except (KeyError, ValueError) as exc:
            raise CompanionError(f"not a pyramid reading: {exc}") from None
        return PyramidCorrection(cell, seen_pyr, actual,
                                 None if target in (None, cell) else target)

    def correct_selection(self, values: Mapping[str, Any]) -> Future[Any] | None:
        try:
            correction = self.correction_for(values)
        except CompanionError as exc:
            self._on_failed(str(exc))
            return None
        return self.commands.submit("correction", self.session.correct, correction)

    def open_correction(self) -> None:
        hit = self.selected
        if hit is None:
            self._on_failed("select a card or a pyramid first (click it in the video)")
            return
        if hit.what == "card":
            card_id = hit.label.split(" ", 1)[0]
            dlg = CorrectionDialog("card", hit.label, card_ids=self.card_ids, card=card_id,
                                   parent=self.window)
        else:
            p = hit.pyramid.pyramid if hit.pyramid is not None else None
            dlg = CorrectionDialog(
                "pyramid", hit.label, colors=[c.value for c in Color],
                pyramid=(p.color.value, p.size, p.pose.value) if p is not None else None,
                cell=format_cell(hit.cell) if hit.cell is not None else "", parent=self.window)
        dlg.accepted.connect(lambda: self.correct_selection(dlg.values()))
        self._dialog = dlg
        dlg.open()

    def _name_card(self, cell: Cell, face_up: bool) -> None:
        where = format_cell(cell)
        dlg = CorrectionDialog("card", f"unnamed at {where}" if face_up
                               else f"face down at {where}",
                               card_ids=[c for c in self.card_ids if c != BACK],
                               parent=self.window)
        dlg.accepted.connect(lambda: self.commands.submit(
            "naming the card" if face_up else "naming the face-down card",
            self.session.name_card, cell, str(dlg.values()["card"])))
        self._dialog = dlg
        dlg.open()

    def _on_failed(self, text: str) -> None:
        self.window.show_status(text)
        self.window.alert.show_message("info", _html(text))

    # -- for tests and scripted callers
    def wait_idle(self, timeout_s: float = 10.0) -> bool:
        """Process events until the command thread is idle and posted signals are handled."""
        app = QApplication.instance()
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if app is not None:
                app.processEvents()
            if not self.commands.busy():
                if app is not None:
                    app.processEvents()
                return True
            time.sleep(0.01)
        return False


def _html(text: str) -> str:
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace("\n", "<br>"))


# ------------------------------------------------------------------------ replay ---

@dataclass(frozen=True)
class ReplayStep:
    """One event of a recorded game and the position after it."""

    number: int | None
    kind: str
    text: str
    state: Any
    observation: Mapping[str, Any] | None
    has_keyframe: bool
    note: str


def recorded_table(game: Any) -> tuple[Any, tuple[float, float] | None]:
    """(mat, card size) the game file says the game was played on (the ``table`` the live
    session keeps with the dealt board), each None where it says nothing readable (a file
    of an older version, or of ``play``)."""
    from calibration.mat import Mat, MatError, virtual_mat

    for ev in getattr(game, "events", ()):
        table = ev.observation.get("table") if isinstance(ev.observation, Mapping) else None
        if not isinstance(table, Mapping):
            continue
        mat = None
        raw = table.get("mat")
        if isinstance(raw, Mapping) and raw.get("printed") is False:
            # played without a mat: the play area the cards gave, no zones
            w, h = raw.get("width_mm"), raw.get("height_mm")
            mat = virtual_mat(float(w), float(h)) if _in(w, 100, 5000) and _in(h, 100, 5000) \
                else virtual_mat()
        elif isinstance(raw, Mapping):
            try:
                mat = Mat.from_dict(dict(raw), f"{game.path}: the table's mat")
            except MatError as exc:
                log.warning("%s", exc)
        size = table.get("card_size_mm")
        cards = None
        if isinstance(size, (list, tuple)) and len(size) == 2 and all(
                _in(v, 20, 300) for v in size):
            cards = (float(size[0]), float(size[1]))
        return mat, cards
    return None, None


def _in(v: Any, low: float, high: float) -> TypeGuard[float]:
    """Whether ``v`` is a number (of a file) from ``low`` to ``high``."""
    from companion.core.numbers import finite_number

    return finite_number(v) and low <= v <= high


class ReplayController(_ViewBase):
    """Steps through a recorded game (read-only): the log, back/forward, and each event's
    keyframe with the overlay of the observation that confirmed it."""

    def __init__(self, window: MainWindow, game: Any, *, mat: Any = None,
                 card_size_mm: Sequence[float] | None = None) -> None:
        from companion.recording.export import named_moves
        from companion.recording.store import RecordingError, replay_states

        table_mat, table_cards = recorded_table(game)
        super().__init__(window, card_size_mm or table_cards or (70.0, 120.0))
        self.game = game
        if mat is None:
            from calibration.mat import DEFAULT_MAT

            mat = table_mat or DEFAULT_MAT
        self.mat = mat
        self.steps: list[ReplayStep] = []
        self.error: str | None = None
        # a card built face down, or covered at once by the Alchemist, named on its
        # move's line once known, as the text record and the live window's move log name
        # it (only the later correction's line named it)
        named = named_moves(game)
        try:
            for ev, state in replay_states(game):
                if ev is None:
                    self.steps.append(ReplayStep(None, "start", "start of the game", state,
                                                 None, False, ""))
                    continue
                text = ev.move if ev.move else (ev.note or ev.kind)
                if ev.move and ev.number in named:
                    text = named[ev.number]
                if ev.kind == "start":
                    text = "start of the game"
                elif ev.kind not in ("move", "override"):
                    text = f"[{ev.kind}] {ev.note or ev.move or ''}".strip()
                elif ev.kind == "override":
                    text = f"{text} [accepted against the rules]"
                if ev.kind in ("move", "override") and ev.undone:
                    text += " [taken back]"
                self.steps.append(ReplayStep(ev.number, ev.kind, text, state, ev.observation,
                                             ev.has_keyframe, ev.note))
        except RecordingError as exc:
            self.error = str(exc)
        self.tracker = TableTracker(mat, card_size_mm=self.card_size_mm)
        self._readings: dict[int, tuple[TableReading | None, TableMapping | None]] = {}
        # the keyframes decoded last, a few only: kept all, a 1000-move game took 5.8 GB
        # (decoded again from the game file when stepped back to)
        self._images: OrderedDict[int, QImage | None] = OrderedDict()
        self.view_index = None
        if self.error:
            window.alert.show_message("illegal", "<b>The recorded game cannot be replayed "
                                      f"past this point:</b> {_html(self.error)}")
        title = f"{game.path.name}: {game.edition} edition, {', '.join(game.players)}"
        window.setWindowTitle(f"Replay of {title}")
        self.refresh()

    def position_count(self) -> int:
        return len(self.steps)

    def state_at(self, k: int) -> Any:
        return self.steps[max(0, min(len(self.steps) - 1, k))].state if self.steps else None

    def _frame_for(self, k: int) -> tuple[TableReading | None, TableMapping | None, QImage | None,
                                          int | None]:
        """The keyframe at or before step ``k`` and its reading (cached)."""
        j = k
        while j >= 0 and not self.steps[j].has_keyframe:
            j -= 1
        if j < 0:
            return None, None, None, None
        step = self.steps[j]
        data: bytes | None = None
        if j in self._images:
            self._images.move_to_end(j)
            image = self._images[j]
        else:
            data = self.game.keyframe(step.number) if step.number is not None else None
            image = image_from_jpeg(data) if data else None
            self._images[j] = image
            while len(self._images) > REPLAY_KEYFRAMES_KEPT:
                self._images.popitem(last=False)
        if j not in self._readings:
            reading, mapping = None, None
            obs = step.observation
            if obs is not None:
                try:
                    expected = {c: s[-1] for c, s in stacks_of(step.state).items()}
                    reading = self.tracker.read(obs, expected=expected)
                except CompanionError as exc:
                    log.debug("replay: observation of event %s unreadable: %s", step.number, exc)
                mapping = mapping_from_record(obs, self.mat, self.card_size_mm)
            if mapping is None and data is None and step.number is not None:
                data = self.game.keyframe(step.number)
            if mapping is None and data:
                mapping = self._calibrate(data)
            if mapping is not None and image is not None and obs is not None:
                # the keyframe may be stored smaller than the frame the record describes
                size = obs.get("image_size") if isinstance(obs, Mapping) else None
                if isinstance(size, (list, tuple)) and len(size) == 2 and size[0]:
                    s = image.width() / float(size[0])
                    if abs(s - 1.0) > 1e-3:
                        mapping = TableMapping(np.diag([s, s, 1.0]) @ mapping.H)
            self._readings[j] = (reading, mapping)
        reading, mapping = self._readings[j]
        return reading, mapping, image, j

    def _calibrate(self, jpeg: bytes) -> TableMapping | None:
        try:
            import cv2

            from calibration.mat import DEFAULT_MAT
            from calibration.table import TableCalibrator

            img = cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR)
            if img is None:
                return None
            calib = TableCalibrator(self.mat if self.mat is not None else DEFAULT_MAT).calibrate(img)
            return mapping_from_calibration(calib)
        except Exception as exc:  # noqa: BLE001 - the replay goes on without an overlay
            log.debug("replay: keyframe calibration failed: %s", exc)
            return None

    def refresh(self) -> None:
        w = self.window
        n = self.position_count()
        if n == 0:
            w.scores.show_position(None, note="the recorded game has no position")
            return
        k = self.shown_index()
        step = self.steps[k]
        state = step.state
        w.scores.show_position(describe_position(state))
        w.log.set_moves([s.text for s in self.steps[1:]], k, start=self.steps[0].text)
        w.back_button.setEnabled(k > 0)
        w.forward_button.setEnabled(k < n - 1)
        w.live_button.setEnabled(k < n - 1)
        w.position_label.setText(f"event {k} of {n - 1}")
        states = [s.state for s in self.steps if s.kind in ("start", "move", "override")]
        series: dict[str, list[int]] = {}
        for st in states:
            for c, v in st.scores().items():
                series.setdefault(c.value, []).append(v)
        shown = sum(1 for s in self.steps[:k + 1] if s.kind in ("start", "move", "override")) - 1
        w.final.chart.set_series(series, max(0, shown))
        over = bool(state.is_over)
        totals = {c.value: v for c, v in state.scores().items()}
        w.final.show_scoring(final_scoring(state), totals,
                             [c.value for c in state.winners()] if over else [], over)
        if step.kind == "illegal" or (step.kind == "note" and "illegal" in step.note.lower()):
            w.question.show_message("illegal", f"<b>Flagged here:</b> {_html(step.note)}")
        elif step.kind == "override":
            w.question.show_message("info", "The players accepted this move against the "
                                    f"rules. {_html(step.note)}")
        else:
            w.question.clear()
        reading, mapping, image, j = self._frame_for(k)
        if image is not None:
            w.video.set_frame(image)
            w.video.set_caption(f"{k}. {step.text}" if j == k else
                                f"{k}. {step.text}  (keyframe of event {j})")
        else:
            w.video.set_frame(None)
            w.video.set_caption(f"{k}. {step.text}  (no keyframe recorded)")
        if self.game.finished and k == n - 1:
            board = ", ".join(f"{p} {v}" for p, v in (self.game.scores or {}).items())
            w.show_status(f"final scores: {board}; winner(s): {', '.join(self.game.winners or ())}")
        else:
            w.show_status(f"{self.game.path}: event {k} of {n - 1}")
        self.refresh_overlay()

    def refresh_overlay(self) -> None:
        if not self.steps:
            return
        k = self.shown_index()
        reading, mapping, _image, _j = self._frame_for(k)
        sel = self.selected.minion if self.selected is not None else None
        self.show_overlay(build_overlay(
            mapping, reading=reading, lattice=self.tracker.lattice, state=self.state_at(k),
            card_size_mm=self.card_size_mm, selected=sel, targets=self.targets))


__all__ = ["CommandRunner", "FramePost", "KeyFrame", "LiveController", "PausedError",
           "ReplayController", "ReplayStep", "Snapshot", "bgr_to_qimage", "image_from_jpeg",
           "jpeg_bytes"]
