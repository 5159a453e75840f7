"""Frame sources for the live companion: a camera, a stream URL, a video file, an image folder.

:func:`open_source` picks the source from what the user typed (``0``, ``rtsp://...``,
``game.mp4``, ``photos/``). Every source yields :class:`Frame` s; a failure (the video ends or
breaks off, the device is unplugged) is reported as a :class:`SourceEvent` (``camera_lost``
with the reason, ``camera_back`` when frames come again) instead of an exception, and a file in
a folder that cannot be read is skipped with a warning and an ``unreadable`` event (one frame
lost, not the camera).

:class:`CaptureThread` reads a source in a plain worker thread into a small buffer. For a live
source (camera, stream) and for a file replayed in real time the buffer drops the oldest
frames, so a slow pipeline never blocks capture; a file read as fast as possible waits for
the consumer instead, so no frame is lost. Events are never dropped. A camera or stream that
fails is reopened every ``retry_s`` seconds.
"""

from __future__ import annotations

import collections
import logging
import os
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from calibration.images import (
    HEIF_WORDS,
    IMAGE_SUFFIXES,
    ImageError,
    folder_images,
    read_image,
)
from companion.core.errors import CompanionError

log = logging.getLogger(__name__)

VIDEO_SUFFIXES = frozenset({".mp4", ".avi", ".mov", ".mkv", ".webm", ".m4v", ".mpg", ".mpeg"})


class CaptureError(CompanionError, ValueError):
    """A source that cannot be opened at all (the message names it and says why)."""


@dataclass(frozen=True)
class Frame:
    """One image from a source. ``shot``: a still photo (a folder image), settled by itself."""

    index: int
    time_s: float
    image: np.ndarray = field(repr=False)
    name: str
    shot: bool = False


@dataclass(frozen=True)
class SourceEvent:
    """Something that happened to the source: ``camera_lost`` (with the reason),
    ``camera_back``, ``unreadable`` (one image of a folder could not be read: the reason names
    it; the next comes as usual), ``waiting`` (a watched folder has no new photo yet) or
    ``end`` (nothing more will come)."""

    kind: str
    reason: str
    index: int | None = None


Item = Frame | SourceEvent

#: a file's (size, mtime_ns, inode): see :func:`_mark`
Mark = tuple[int, int, int]


class FrameSource:
    """Base of the sources: ``open()``, then ``read()`` until it returns ``None`` (end)."""

    kind = "source"
    live = False  # a camera or stream: frames come in real time and failures are retried

    def __init__(self, name: str) -> None:
        self.name = name
        self.error: str | None = None  # why the last read returned no frame
        #: how a clean end is said (a video file played to its last frame): no failure
        self.ended: str | None = None

    @property
    def end_reason(self) -> str:
        """What the ``end`` event says: the failure, else how the source ended."""
        return self.error or self.ended or "the source is finished"

    def open(self) -> None:
        raise NotImplementedError

    def read(self) -> Frame | SourceEvent | None:
        """The next frame, an event, or None when the source is finished or broken
        (``error`` says which: None for a clean end)."""
        raise NotImplementedError

    def close(self) -> None:
        pass

    def interrupt(self) -> None:
        """Ask a read that waits for frames to come (a watched folder) to give up now: the
        capture thread is stopping."""

    def __iter__(self) -> Iterator[Item]:
        """Read the whole source in this thread (a test or a batch run)."""
        self.open()
        try:
            while True:
                item = self.read()
                if item is None:
                    if self.error:
                        yield SourceEvent("camera_lost", self.error)
                    yield SourceEvent("end", self.end_reason)
                    return
                yield item
        finally:
            self.close()


class VideoSource(FrameSource):
    """A camera index, a stream URL or a video file, through OpenCV's VideoCapture."""

    def __init__(self, target: int | str, *, realtime: bool | None = None,
                 api: int | None = None, max_fps: float | None = 10.0) -> None:
        super().__init__(str(target))
        self.target = target
        if isinstance(target, int):
            self.kind, self.live = "camera", True
        elif "://" in str(target):
            self.kind, self.live = "stream", True
        else:
            self.kind, self.live = "video", False
        self.realtime = self.live if realtime is None else realtime
        self.api = api
        # Settling needs a few frames per half second, not thirty a second: the frames in
        # between are only grabbed (not decoded into images where the backend allows), which
        # is most of the cost of watching an idle table.
        self.max_fps = max_fps
        self._skip = 0
        self._cap: cv2.VideoCapture | None = None
        self._index = 0
        self._t0 = 0.0
        self._fps = 0.0
        self._count = 0
        #: Motion-JPEG read as raw packets: FFmpeg decodes every frame it grabs, so the
        #: skipped frames are only read and each kept one is decoded by imdecode
        self.raw_mjpeg = False

    def open(self) -> None:
        if self.kind == "video" and not Path(str(self.target)).is_file():
            raise CaptureError(f"video {self.name}: no such file")
        cap = (cv2.VideoCapture(self.target) if self.api is None
               else cv2.VideoCapture(self.target, self.api))
        if not cap.isOpened():
            cap.release()
            why = (self._why_not_opened() if self.kind == "video" else
                   f"is a camera plugged in, and is {self.name} its number? The first camera "
                   "is 0" if self.kind == "camera" else
                   "is the address right, and is the stream running?")
            raise CaptureError(f"{self.kind} {self.name}: cannot be opened ({why})")
        self._cap = cap
        self._fps = float(cap.get(cv2.CAP_PROP_FPS) or 0.0)
        self._count = int(cap.get(cv2.CAP_PROP_FRAME_COUNT) or 0)
        self._skip = 0
        if self.max_fps and self._fps > self.max_fps:
            self._skip = max(0, round(self._fps / self.max_fps) - 1)
        self.raw_mjpeg = False
        if self.kind == "video" and self._skip:
            fourcc = int(cap.get(cv2.CAP_PROP_FOURCC) or 0)
            code = "".join(chr((fourcc >> (8 * k)) & 0xFF) for k in range(4)).upper()
            if code == "MJPG" and cap.set(cv2.CAP_PROP_FORMAT, -1) \
                    and cap.get(cv2.CAP_PROP_FORMAT) == -1:
                self.raw_mjpeg = True
        self._t0 = time.monotonic()
        self.error = None

    def _why_not_opened(self) -> str:
        """What the file itself says of why OpenCV would not open it as a video."""
        path = str(self.target)
        try:
            size = Path(path).stat().st_size
        except OSError as exc:
            return str(exc.strerror or exc)
        if size == 0:
            return "the file is empty"
        if not os.access(path, os.R_OK):
            return "no permission to read it"
        return (f"{size} bytes: not a video OpenCV can read, or one cut short before its "
                "index was written")

    def read(self) -> Frame | SourceEvent | None:
        cap = self._cap
        if cap is None:
            self.error = f"{self.kind} {self.name} is not open"
            return None
        for _ in range(self._skip):
            if not cap.grab():
                break
            self._index += 1
        ok, image = cap.read()
        if ok and image is not None and self.raw_mjpeg:
            decoded = cv2.imdecode(image.reshape(-1), cv2.IMREAD_COLOR)
            if decoded is None:
                ok = False
            else:
                image = decoded
        if not ok or image is None:
            if self.kind == "video":
                if self._count and self._index < self._count - 1:
                    self.error = (f"video {self.name} broke off at frame {self._index} of "
                                  f"{self._count}")
                else:
                    # played to its end: nothing was lost
                    self.error = None
                    self.ended = f"video {self.name} ended after {self._index} frames"
            else:
                self.error = f"{self.kind} {self.name} stopped delivering frames"
            return None
        if self.kind == "video":
            t = (self._index / self._fps) if self._fps > 0 else float(
                cap.get(cv2.CAP_PROP_POS_MSEC) or 0.0) / 1000.0
            if self.realtime:
                wait = self._t0 + t - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
        else:
            t = time.monotonic() - self._t0
        frame = Frame(self._index, t, image, f"{self.name}#{self._index}")
        self._index += 1
        return frame

    def close(self) -> None:
        if self._cap is not None:
            self._cap.release()
            self._cap = None


class FolderSource(FrameSource):
    """Images of a folder in name order (or a given list), each one settled shot.

    An unreadable file is skipped: it gives an ``unreadable`` event with the reason, and the
    next image comes as usual. ``realtime`` spaces the images ``interval_s`` apart.

    ``watch``: wait for new images, as a camera tethered to the computer writes them, and
    never end by itself; ``existing`` says whether the images already there are read first
    (else they are left alone: a tethering folder often holds earlier games). A new file is read once
    its size and time stamp have stayed the same for ``steady_s`` (a photo still being
    written would read as a cut-short JPEG); new files come in name order. A photo that
    still cannot be read is tried again when it changes (a writer that paused for longer
    than ``steady_s``), and called unreadable only after ``give_up_s`` without a change.
    The first wait gives one ``waiting`` event; a folder that goes away ends the source with
    that error.
    """

    kind = "folder"

    def __init__(self, folder: str | Path | None = None, *,
                 files: Sequence[str | Path] | None = None,
                 realtime: bool = False, interval_s: float = 1.0, watch: bool = False,
                 existing: bool = True, poll_s: float = 0.5, steady_s: float = 1.0,
                 give_up_s: float = 10.0) -> None:
        if watch and folder is None:
            raise CaptureError("watching for new photos needs a folder, not a list of files")
        if files is None:
            if folder is None:
                raise CaptureError("a folder source needs a folder or a list of files")
            root = Path(folder)
            if not root.is_dir():
                raise CaptureError(f"image folder {root}: no such folder")
            files, heif = folder_images(root)
            if heif:
                log.warning("image folder %s: %d HEIC photo(s) left out: %s", root, len(heif),
                            HEIF_WORDS)
            if not files and not watch:
                raise CaptureError(f"image folder {root}: no images in it "
                                   f"({', '.join(sorted(IMAGE_SUFFIXES))})"
                                   + (f"; {HEIF_WORDS}" if heif else ""))
        super().__init__(str(folder) if folder is not None else "file list")
        self.folder = Path(folder) if folder is not None else None
        self.files = [Path(f) for f in files]
        #: the images there before, left unread (``watch`` without ``existing``)
        self.left_alone: list[Path] = []
        if watch and not existing:
            self.files, self.left_alone = [], self.files
        self.realtime = realtime and not watch
        self.interval_s = interval_s
        self.watch = watch
        self.poll_s = poll_s
        self.steady_s = steady_s
        self.give_up_s = give_up_s
        self._next = 0
        self._t0 = 0.0
        #: every file name taken (read, queued or left alone), so a photo is never shown
        #: twice: its mark when read (None: not read yet). A photo saved again
        #: under the same name (a camera writing latest.jpg each shot) is a new photo.
        self._taken: dict[str, Mark | None] = {p.name: None for p in self.files}
        self._taken.update((p.name, _mark(p)) for p in self.left_alone)
        #: new files not yet steady: name -> (mark, monotonic time first seen so)
        self._growing: dict[str, tuple[Mark, float]] = {}
        #: watched photos that could not be read: name -> (mark then, when, why)
        self._retry: dict[str, tuple[Mark, float, str]] = {}
        self._waiting_said = False
        self._interrupted = threading.Event()

    def open(self) -> None:
        self._next = 0
        self._t0 = time.monotonic()
        self.error = None
        self._interrupted.clear()

    def interrupt(self) -> None:
        self._interrupted.set()

    def read(self) -> Frame | SourceEvent | None:
        while self._next < len(self.files):
            k = self._next
            path = self.files[k]
            self._next += 1
            if self.realtime:
                wait = self._t0 + k * self.interval_s - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
            # (the mark before the read: a photo saved over it meanwhile is a new one)
            mark = _mark(path) if self.watch else None
            try:
                image = read_image(path)
            except ImageError as exc:
                if self.watch and self._tried_again_later(path, exc):
                    continue
                if self.watch:      # gone: a photo of that name later is a new one
                    self._taken.pop(path.name, None)
                log.warning("skipping %s", exc)
                return SourceEvent("unreadable", f"{exc}; skipped", k)
            if self.watch:
                self._taken[path.name] = mark
            t = (time.monotonic() - self._t0) if self.watch else k * self.interval_s
            return Frame(k, t, image, str(path), shot=True)
        if not self.watch:
            self.error = None
            return None
        return self._wait_for_new()

    def _tried_again_later(self, path: Path, exc: ImageError) -> bool:
        """A watched photo that cannot be read (yet) is kept to be tried again when it
        changes (False: it is gone)."""
        mark = _mark(path)
        if mark is None:
            return False
        self._retry[path.name] = (mark, time.monotonic(), str(exc))
        return True

    def _wait_for_new(self) -> Frame | SourceEvent | None:
        """Poll the watched folder until a new photo is steady (then read it), a photo that
        failed is given up (an ``unreadable`` event), the capture stops (a clean end) or the
        folder is gone (an error)."""
        assert self.folder is not None
        if not self._waiting_said:
            self._waiting_said = True
            before = (f" (the {len(self.left_alone)} already there are left alone)"
                      if self.left_alone else "")
            return SourceEvent("waiting", f"watching {self.folder} for new photos{before}",
                               self._next)
        while not self._interrupted.is_set():
            try:
                given_up = self._retried()
                steady = self._steady_new_files()
            except OSError as exc:
                self.error = (f"image folder {self.folder} cannot be read any more "
                              f"({exc.strerror or exc})")
                return None
            if given_up is not None:
                return given_up
            if steady:
                self.files.extend(steady)
                self._taken.update((p.name, None) for p in steady)
                return self.read()
            self._interrupted.wait(self.poll_s)
        self.error = None
        self.ended = f"stopped watching {self.folder}"
        return None

    def _retried(self) -> SourceEvent | None:
        """Photos that failed: one that changed since is looked at again as a new one; one
        unchanged for ``give_up_s`` is given up (its ``unreadable`` event)."""
        assert self.folder is not None
        now = time.monotonic()
        for name, (mark, since, why) in list(self._retry.items()):
            now_mark = _mark(self.folder / name)
            if now_mark is None:
                del self._retry[name]          # gone: nothing to read (a new one may come)
                self._taken.pop(name, None)
                continue
            if now_mark != mark:
                del self._retry[name]          # written on: a new file to wait for
                self._taken.pop(name, None)
                continue
            if now - since >= self.give_up_s:
                del self._retry[name]
                self._taken[name] = mark       # given up as it is: saved again, it is new
                log.warning("skipping %s", why)
                return SourceEvent("unreadable", f"{why}; skipped", self._next)
        return None

    def _steady_new_files(self) -> list[Path]:
        """The new images of the folder whose size and time stamp have not changed for
        ``steady_s``, in name order (raises OSError when the folder cannot be listed)."""
        assert self.folder is not None
        now = time.monotonic()
        ready: list[Path] = []
        seen: set[str] = set()
        for path in _images_in(self.folder):
            name = path.name
            mark = _mark(path)
            if mark is None:
                continue   # gone again (a camera's temporary file renamed)
            if name in self._taken and self._taken[name] in (None, mark):
                continue
            seen.add(name)
            was = self._growing.get(name)
            if was is None or was[0] != mark:
                self._growing[name] = (mark, now)
            elif mark[0] > 0 and now - was[1] >= self.steady_s:
                ready.append(path)
        for name in list(self._growing):
            if name not in seen or any(p.name == name for p in ready):
                del self._growing[name]
        return ready


def _mark(path: Path) -> Mark | None:
    """What tells one state of a file from another: size, time stamp and inode (a photo
    renamed onto an old name is another inode even within one time stamp tick); None when
    it cannot be looked at."""
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ino)


def _images_in(folder: Path) -> list[Path]:
    """The image files of ``folder`` in name order, numbers by value (``2.jpg`` before
    ``10.jpg``); hidden ones (a camera's temporary file, macOS's ``._`` shadows) are not
    photos (:func:`calibration.images.folder_images`). Raises OSError when it cannot be
    listed."""
    return folder_images(folder)[0]


def encode_jpeg(image: np.ndarray, quality: int = 85) -> bytes:
    """A frame as JPEG bytes (a recorded keyframe)."""
    ok, buf = cv2.imencode(".jpg", image, [int(cv2.IMWRITE_JPEG_QUALITY), int(quality)])
    if not ok:
        raise CaptureError("the frame could not be encoded as JPEG")
    return bytes(buf.tobytes())


#: camera numbers OpenCV is asked for (a larger number is a typo, and overflows OpenCV's int)
MAX_CAMERA_NUMBER = 999


def camera_number(text: str) -> int:
    """The camera number ``text`` names: 0 to :data:`MAX_CAMERA_NUMBER`."""
    n = int(text)
    if not 0 <= n <= MAX_CAMERA_NUMBER:
        raise CaptureError(f"camera {text}: no camera has that number (0 to "
                           f"{MAX_CAMERA_NUMBER})")
    return n


def open_source(spec: str | int | Path, *, realtime: bool | None = None,
                interval_s: float = 1.0, watch: str | None = None) -> FrameSource:
    """A source from what a user typed: a camera index, a URL, a video file or a folder.

    ``watch``: a folder is watched for new photos (:class:`FolderSource`), ``"new"`` ones
    only or ``"all"`` (those already there first); any other source is refused with it."""
    if watch:
        text = str(spec).strip()
        path = Path(text)
        if not text or (text.isdigit() and not path.exists()) or "://" in text:
            what = "a camera" if text.isdigit() else "a stream" if text else "nothing"
            raise CaptureError(f"source {text!r}: only a folder can be watched for new "
                               f"photos, and this is {what}")
        if not path.is_dir():
            what = ("no such folder" if not path.exists() else "not a folder: only a folder "
                    "can be watched for new photos")
            raise CaptureError(f"source {str(spec)!r}: {what}")
        if watch not in ("new", "all"):
            raise CaptureError(f"--watch {watch}: say new (the photos taken from now on) or "
                               "all (those already there first)")
        return FolderSource(path, watch=True, existing=watch == "all")
    if isinstance(spec, int):
        return VideoSource(camera_number(str(spec)), realtime=realtime)
    text = str(spec).strip()
    if not text:
        raise CaptureError("source '': give a camera number, a URL, a video file or a folder")
    if text.isdigit() and not Path(text).exists():
        return VideoSource(camera_number(text), realtime=realtime)
    if "://" in text:
        return VideoSource(text, realtime=realtime)
    path = Path(text)
    if path.is_dir():
        return FolderSource(path, realtime=bool(realtime), interval_s=interval_s)
    if path.is_file():
        if path.suffix.lower() in IMAGE_SUFFIXES:
            # one photo, which is all there is to referee: one that cannot be read is said
            # now (skipped, it left a window waiting on nothing)
            try:
                read_image(path)
            except ImageError as exc:
                raise CaptureError(f"source {text!r}: {str(exc).removeprefix(f'{path}: ')}"
                                   ) from None
            return FolderSource(files=[path], realtime=bool(realtime), interval_s=interval_s)
        return VideoSource(str(path), realtime=realtime)
    raise CaptureError(f"source {text!r}: not a camera number, a URL, a video file or a folder")


class CaptureThread:
    """Reads a source in a worker thread into a small buffer; see the module notes.

    ``get()`` returns the next frame or event (None on timeout); iterate to drain until the
    ``end`` event. ``retry_s``: how often a failed camera or stream is reopened (None: never).
    """

    def __init__(self, source: FrameSource, *, max_frames: int = 2, retry_s: float | None = 2.0,
                 drop_old: bool | None = None) -> None:
        self.source = source
        self.max_frames = max(1, max_frames)
        self.retry_s = retry_s if source.live else None
        self.drop_old = (source.live or bool(getattr(source, "realtime", False))
                         if drop_old is None else drop_old)
        self.dropped = 0
        self._items: collections.deque[Item] = collections.deque()
        self._cond = threading.Condition()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._finished = False

    # ---------------------------------------------------------------- consumer side
    def start(self) -> "CaptureThread":
        thread = threading.Thread(target=self._run, name=f"capture {self.source.name}",
                                  daemon=True)
        thread.start()
        # (only a started thread is kept: a stop() from the window's thread between the two
        # lines, a Ctrl-C as the window opened, failed to join one never started)
        self._thread = thread
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self.source.interrupt()
        with self._cond:
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)

    def get(self, timeout: float | None = None) -> Item | None:
        with self._cond:
            if not self._items:
                self._cond.wait_for(lambda: bool(self._items) or self._finished, timeout)
            if not self._items:
                return None
            item = self._items.popleft()
            self._cond.notify_all()
            return item

    def __iter__(self) -> Iterator[Item]:
        while True:
            item = self.get(timeout=0.5)
            if item is None:
                # (stopped: a source stuck in its read does not hold the consumer)
                if (self._finished and not self._items) or self._stop.is_set():
                    return
                continue
            yield item
            if isinstance(item, SourceEvent) and item.kind == "end":
                return

    def __enter__(self) -> "CaptureThread":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---------------------------------------------------------------- worker side
    def _put(self, item: Item) -> None:
        with self._cond:
            if isinstance(item, Frame):
                frames = sum(1 for x in self._items if isinstance(x, Frame))
                if frames >= self.max_frames:
                    if self.drop_old:
                        for x in self._items:
                            if isinstance(x, Frame):
                                self._items.remove(x)
                                self.dropped += 1
                                break
                    else:
                        self._cond.wait_for(
                            lambda: self._stop.is_set() or sum(
                                1 for x in self._items if isinstance(x, Frame)) < self.max_frames)
            self._items.append(item)
            self._cond.notify_all()

    def _run(self) -> None:
        src = self.source
        try:
            try:
                src.open()
            except CaptureError as exc:
                if self.retry_s is None:
                    self._put(SourceEvent("camera_lost", str(exc)))
                    return
                self._put(SourceEvent("camera_lost", str(exc)))
                if not self._reopen():
                    return
            while not self._stop.is_set():
                item = src.read()
                if item is None:
                    if src.error is None:
                        return
                    self._put(SourceEvent("camera_lost", src.error))
                    src.close()
                    if self.retry_s is None or not self._reopen():
                        return
                    continue
                self._put(item)
        except Exception as exc:  # noqa: BLE001 - the consumer must hear of any failure
            log.exception("capture from %s failed", src.name)
            self._put(SourceEvent("camera_lost", f"{src.name}: {exc}"))
        finally:
            src.close()
            self._put(SourceEvent("end", src.end_reason))
            with self._cond:
                self._finished = True
                self._cond.notify_all()

    def _reopen(self) -> bool:
        """Retry opening a live source until it works or the thread is stopped."""
        assert self.retry_s is not None
        while not self._stop.wait(self.retry_s):
            try:
                self.source.open()
            except CaptureError as exc:
                log.info("still no frames: %s", exc)
                continue
            self._put(SourceEvent("camera_back", f"{self.source.kind} {self.source.name} is back"))
            return True
        return False


__all__ = ["CaptureError", "CaptureThread", "FolderSource", "Frame", "FrameSource", "Item",
           "SourceEvent", "VideoSource", "encode_jpeg", "open_source"]
