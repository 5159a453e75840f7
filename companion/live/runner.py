"""The live loop: capture -> settle -> pipeline -> session, off the window's thread.

:class:`LiveRunner` reads a :class:`~companion.live.capture.FrameSource` through a
:class:`~companion.live.capture.CaptureThread`, lets the
:class:`~companion.live.settle.SettleDetector` pick the settled frames, runs the vision
pipeline (any ``observer(image_bgr, name) -> observation record``, e.g.
``vision.pipeline.TablePipeline.observe``) on those only, and hands the records to the
:class:`~companion.live.session.LiveSession`. Every frame is reported to ``on_frame`` (a
window draws the live video and overlay from it); the session's events go to its listeners.

A frame the pipeline cannot read is skipped with an ``info`` event; a record with a hand over
the table or without calibration is refused and the detector keeps waiting for the table to
settle again. Camera loss and return become session events.
"""

from __future__ import annotations

import logging
import statistics
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from companion.core.errors import CompanionError
from companion.live.capture import CaptureThread, Frame, FrameSource, SourceEvent, encode_jpeg
from companion.live.session import EventKind, LiveEvent, LiveSession
from companion.live.settle import SettleDecision, SettleDetector
from companion.live.tablestate import as_observation, observation_trust

log = logging.getLogger(__name__)

#: The pipeline as the runner sees it: a BGR image and its name in, an observation record out.
Observer = Callable[[np.ndarray, str], Mapping[str, Any]]


@dataclass(frozen=True)
class FrameReport:
    """What the runner did with one frame (for an overlay or annotated output)."""

    frame: Frame
    decision: SettleDecision
    observation: Mapping[str, Any] | None = None  # the record, for settled frames
    events: tuple[LiveEvent, ...] = ()
    verdict_ms: float | None = None               # settled frame -> verdict


@dataclass
class RunStats:
    frames: int = 0
    settled: int = 0
    refused: int = 0      # settled frames the pipeline marked untrusted (hands, no markers)
    failed: int = 0       # frames the pipeline could not read
    dropped: int = 0      # frames the capture buffer dropped (a slow consumer)
    camera_lost: int = 0
    verdict_ms: list[float] = field(default_factory=list)

    def summary(self) -> str:
        lat = ""
        if self.verdict_ms:
            med = statistics.median(self.verdict_ms)
            lat = f"; verdict {med:.0f} ms median, {max(self.verdict_ms):.0f} ms max"
        return (f"{self.frames} frames, {self.settled} settled, {self.refused} refused, "
                f"{self.failed} unreadable, {self.dropped} dropped, camera lost "
                f"{self.camera_lost} time(s){lat}")


class LiveRunner:
    """Joins a frame source, the settle detector, a pipeline and a session.

    ``before_observe(frame)`` is called before each settled frame is judged (a scripted user
    may click there); ``on_frame(report)`` after every frame.
    """

    def __init__(self, source: FrameSource, session: LiveSession, observer: Observer, *,
                 detector: SettleDetector | None = None,
                 on_frame: Callable[[FrameReport], None] | None = None,
                 before_observe: Callable[[Frame], None] | None = None,
                 keyframe_quality: int = 80, max_frames: int = 2,
                 retry_s: float | None = 2.0) -> None:
        self.source = source
        self.session = session
        self.observer = observer
        self.detector = detector or SettleDetector()
        self.on_frame = on_frame
        self.before_observe = before_observe
        self.keyframe_quality = keyframe_quality
        self.capture = CaptureThread(source, max_frames=max_frames, retry_s=retry_s)
        self.stats = RunStats()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._last: Frame | None = None   # the last frame taken, for a source's end

    # ---------------------------------------------------------------- control
    def run(self) -> RunStats:
        """Run until the source ends or :meth:`stop`; returns the counts."""
        self.capture.start()
        try:
            for item in self.capture:
                if self._stop.is_set():
                    break
                if isinstance(item, SourceEvent):
                    self._source_event(item)
                    if item.kind == "end":
                        self._at_end()
                        # (moves its last picture showed, held for one after them)
                        self.session.source_ended(self.source.name)
                        break
                    continue
                try:
                    self._frame(item)
                except Exception as exc:  # noqa: BLE001 - one bad frame never stops the game
                    log.exception("frame %s failed", item.name)
                    self.stats.failed += 1
                    self.detector.reject()
                    self.session.frame_skipped(
                        f"frame {item.name} skipped: internal error ({type(exc).__name__}: "
                        f"{exc}); run with -vv for the details", item.index)
        finally:
            self.capture.stop()
            self.stats.dropped = self.capture.dropped
        return self.stats

    def start(self) -> threading.Thread:
        """Run in a worker thread (a window's thread stays free)."""
        self._thread = threading.Thread(target=self.run, name="live runner", daemon=True)
        self._thread.start()
        return self._thread

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self.capture.stop(timeout)
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    # ---------------------------------------------------------------- work
    def _source_event(self, ev: SourceEvent) -> None:
        if ev.kind == "camera_lost":
            self.stats.camera_lost += 1
            self.session.camera_lost(ev.reason, ev.index)
        elif ev.kind == "unreadable":
            # an image of a folder that cannot be read is a frame lost, not a camera
            self.stats.failed += 1
            self.session.frame_skipped(ev.reason, ev.index)
        elif ev.kind == "camera_back":
            self.session.camera_back(ev.reason, ev.index)
        elif ev.kind == "waiting":
            # a watched folder: the players should know the companion is waiting for photos
            self.session.source_note(ev.reason, ev.index)
        else:
            log.info("source: %s", ev.reason)

    def _at_end(self) -> None:
        """A video that ended: a last table still too briefly to have settled (a recording
        stopped right after the last move) is judged all the same; one that ended moving
        is said, as its last move was not refereed."""
        last, self._last = self._last, None
        if last is None or self.session.is_over:
            return
        try:
            decision = self.detector.at_end()
            if decision.settled:
                log.info("%s: %s: judged", last.name, decision.reason)
                self._judge(last, decision)
            elif decision.motion > 0:
                self.session.source_note(f"{self.source.name} ended while the table was moving: "
                                         "its last frames were not refereed (a move made "
                                         "there, if any, was not seen)", last.index)
        except Exception as exc:  # noqa: BLE001 - the moves judged so far stay
            log.exception("the last frame %s failed", last.name)
            self.stats.failed += 1
            self.session.frame_skipped(
                f"frame {last.name} skipped: internal error ({type(exc).__name__}: {exc}); "
                "run with -vv for the details", last.index)

    def _frame(self, frame: Frame) -> None:
        self.stats.frames += 1
        self.session.camera_back(f"frames again from {self.source.name}", frame.index)
        decision = (self.detector.shot(frame.image) if frame.shot
                    else self.detector.update(frame.image, frame.time_s))
        self._last = frame
        self._judge(frame, decision)

    def _judge(self, frame: Frame, decision: SettleDecision) -> None:
        if not decision.settled or self.session.is_over:
            if self.on_frame is not None:
                self.on_frame(FrameReport(frame, decision))
            return
        self.stats.settled += 1
        t0 = time.perf_counter()
        events: list[LiveEvent] = []
        record: Mapping[str, Any] | None = None
        try:
            record = self.observer(frame.image, frame.name)
            obs = as_observation(record, frame.name)
        except CompanionError as exc:
            self.stats.failed += 1
            self.detector.reject()
            log.warning("frame %s skipped: %s", frame.name, exc)
            events.append(LiveEvent(EventKind.FRAME_SKIPPED,
                                    f"frame {frame.name} skipped: {exc}",
                                    frame=frame.index, source="system"))
            if self.on_frame is not None:
                self.on_frame(FrameReport(frame, decision, None, tuple(events)))
            return
        trusted, _why = observation_trust(obs)
        if not trusted:
            self.stats.refused += 1
            self.detector.reject()
        if self.before_observe is not None and trusted:
            self.before_observe(frame)
        jpeg = None
        if trusted and self.session.recorder is not None:
            jpeg = encode_jpeg(frame.image, self.keyframe_quality)
        events += self.session.observe(obs, frame=frame.index, keyframe_jpeg=jpeg,
                                       time_s=frame.time_s)
        if self.session.wants_another_look:
            self.detector.look_again()
        ms = (time.perf_counter() - t0) * 1000.0
        if trusted:
            self.stats.verdict_ms.append(ms)
        if self.on_frame is not None:
            self.on_frame(FrameReport(frame, decision, record, tuple(events), ms))


__all__ = ["FrameReport", "LiveRunner", "Observer", "RunStats"]
