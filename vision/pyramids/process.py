"""The pyramid finder in a process of its own, beside the card stages.

:class:`vision.pipeline.TablePipeline` runs the pyramid finder beside the card detector and
identifier. On a thread of the same process the two halves share one interpreter lock, and
both run a good deal of Python between their OpenCV and onnxruntime calls: each waits for the
other's. In a process of its own the finder waits for nobody. On renders of the
benchmark's groups (1920x1080, two cores, the next frame of a still camera, 51 frames, the
two pipelines alternating) the whole frame took a median 61 ms against 72 on a thread, 1.46
against 1.72 times the plain detector timed in the same loop; ``python bench/vision.py``
(its own 40 frames) went from 1.76 to 1.64 (``bench/RESULTS.md``).

Measured in the process and not kept (the same kind of A/B, 51 frames): onnxruntime on two
threads for the heat map (the pipeline 1.45 -> 1.78 times the detector: two spinning pools on
two cores), OpenCV on two threads (the finder 51 -> 48 ms, the frame the same), and the patch
networks' batches split over two threads (1.42 -> 1.47). The finder is the longer of the two
halves in most frames: what is left is making it cheaper. Measured again 2026-11-29 (the
same kind of A/B, 45-60 frames a run): the finder's onnxruntime sessions on two threads
with spinning off took the whole frame 87.6 -> 79.5, 85.9 -> 89.9 and 85.2 -> 86.4 ms
median in three runs (noise, not a gain). OpenCV's count is the whole caller's: capping
it at one thread while the card stages ran beside the finder (10a90d9, reverted) gave the
finder its core to itself, and in an A/B of that kind the whole frame went 73.6 -> 70.6 ms
(90 frames, twice each, records identical). But in ``bench/vision.py``'s own loop (120 frames,
new / old / old / new) the pyramid stage's 4 ms (63.8 and 63.9 -> 59.6 and 60.2 ms median)
went to the card stages: the whole frame 71.9 and 73.4 -> 72.9 and 73.7 ms median, 77.5 and
78.1 -> 77.1 and 77.7 mean.

Where the finder's CPU goes (2026-12-02; its thread's CPU time, one thread, the next frame of
a still camera, 29 dev frames of seed 535000, each the least of several runs; an Intel Xeon
with AVX-512 VNNI and AMX, load about 3): about 50 ms median, 60 mean. The networks take
about half: the heat map 13 ms (its int8 network 9.3 ms on the 476x352 input, the input made
1.7 ms, twice on a frame called blurred), the colour classifier 5 (30 patches, 165 us each:
a float SiLU network, like the shape classifier), the shape classifier 3 median, 6.6 mean
(32 reads with its mirrored and steadying ones), the verifier 3 (35 reads, 60-90 us), the
readers on the 56 mm patches 2-3 together. The look 13 ms (the view's remap 2.4, the paper's
gains 0.8, the colour table 4.5, the candidates 4.1), cutting the patches 4.6 (80 a frame),
reading and fitting the finds 2-3.4. Its networks already run as onnxruntime fuses them
(SiLU as QuickGelu, the int8 heat map as QLinearConv in NHWC), and each gives a patch the
same answer in a batch of any size: batches of 32 are the cheapest a patch. Not taken, as
not giving the same numbers: the patches' remap through fixed-point maps (1.4 against 2.0 ms
for 80 patches: OpenCV's remap interpolates float maps otherwise), one remap of the cached
grid for all patches' maps instead of a warpAffine each. No faster form of the Lab bin index
or of the network input's conversion was found that gives the same numbers.

The image goes through shared memory (one copy, about a millisecond for 1920x1080), the
calibration and the finds through a pipe. :class:`PyramidProcess` is what the pipeline
holds: ``submit(image, calib)`` starts a frame and returns a handle whose ``result()``
waits for its finds. A finder error in the process comes back as that error; a process that
dies or stops answering raises :class:`PyramidProcessError`, and the pipeline goes on with
a finder of its own (one bad frame never stops the rest).

The process imports the modules afresh: settings changed at run time in the caller (a
module's threshold set by a tuning script, say) do not reach it. Such scripts build their
pipeline with ``pyramid_process=False``, or one thread.
"""

from __future__ import annotations

import atexit
import logging
import os
import secrets
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from multiprocessing import shared_memory
from multiprocessing.connection import Client, Connection, Listener
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

#: seconds to wait for the process to load its models, and for one frame's finds (a frame
#: takes well under a second; a process that is this late is taken for stuck)
START_TIMEOUT_S = 120.0
FRAME_TIMEOUT_S = 30.0


class PyramidProcessError(RuntimeError):
    """The pyramid process could not start, died, or stopped answering."""


def _attach(name: str) -> shared_memory.SharedMemory:
    shm = shared_memory.SharedMemory(name=name)
    try:
        # the parent made it and unlinks it; the child only borrows it (on Python < 3.13
        # attaching registers it with the resource tracker as if the child owned it)
        from multiprocessing import resource_tracker

        resource_tracker.unregister(shm._name, "shared_memory")  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - the tracker's bookkeeping only
        pass
    return shm


def _serve(conn: Connection, mat: Any, colors: Any, verify_model: Path | None = None
           ) -> None:
    """The process: build the finder (its second opinion ``verify_model``, None: the shipped
    one), say ready (or why not), then answer frames until told to stop or the pipe
    closes."""
    import cv2

    # one core for the finder, the other for the card stages
    cv2.setNumThreads(1)
    try:
        from vision.pipeline import pyramid_records
        from vision.pyramids.find import PyramidFinder

        finder = PyramidFinder(mat, colors=colors, verify_model=verify_model)
    except Exception as exc:  # noqa: BLE001 - sent back to the parent, which raises it
        conn.send(("error", _picklable(exc)))
        return
    conn.send(("ready", None))
    shm: shared_memory.SharedMemory | None = None
    try:
        while True:
            try:
                msg = conn.recv()
            except (EOFError, OSError):
                return
            if msg is None:
                return
            name, shape, dtype, calib, areas = msg
            try:
                if shm is None or shm.name != name:
                    if shm is not None:
                        shm.close()
                    shm = _attach(name)
                image = np.ndarray(shape, dtype, buffer=shm.buf)
                t0 = time.perf_counter()
                finds = finder.find(image, calib) if areas is None else \
                    finder.find_past(image, calib, areas)
                found = pyramid_records(finds, calib)
                del image
                conn.send(("ok", (found, (time.perf_counter() - t0) * 1000)))
            except Exception as exc:  # noqa: BLE001 - one bad frame, sent back
                conn.send(("error", _picklable(exc)))
    finally:
        if shm is not None:
            shm.close()


def _picklable(exc: BaseException) -> BaseException:
    import pickle

    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:  # noqa: BLE001
        return RuntimeError(f"{type(exc).__name__}: {exc}")


class _Pending:
    """One frame sent to the process; ``result()`` waits for its finds."""

    def __init__(self, owner: "PyramidProcess") -> None:
        self._owner = owner

    def result(self) -> tuple[list[dict[str, Any]], float]:
        return self._owner._receive()


class PyramidProcess:
    """``PyramidProcess(mat, colors, verify_model)``: a
    :class:`vision.pyramids.find.PyramidFinder` for ``mat`` (and the colour profile ``colors``,
    and the second opinion ``verify_model``: None for the shipped one) in a process of its
    own, its models loaded before the constructor returns (an error loading them is raised
    here). One frame at a time: ``submit(image, calib).result()`` -> (the record's
    pyramids, the finder's ms).

    The process is a fresh interpreter (``python -m vision.pyramids.process``) that
    connects back over a local socket (or pipe, on Windows) with a one-time key: unlike
    :mod:`multiprocessing`'s own start methods, it never runs the caller's main script again.
    """

    def __init__(self, mat: Any, colors: Any = None, verify_model: Path | None = None) -> None:
        key = secrets.token_bytes(32)
        self._shm: shared_memory.SharedMemory | None = None
        #: the shared memory still has a name: the process has not yet answered a frame in it
        self._named = False
        #: the shape and dtype of the image in the shared memory (submit_past reads it again)
        self._frame: tuple[tuple[int, ...], str] | None = None
        self._waiting = False
        self._conn: Connection | None = None
        listener = Listener(authkey=key)
        env = dict(os.environ)
        # the caller's import path, so that the process finds these very modules
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
        # what the process prints (onnxruntime's warnings, or why it could not start) goes
        # to a file of its own: the caller's console shows the pipeline's own messages
        self._log = tempfile.TemporaryFile()
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "vision.pyramids.process"], stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL, stderr=self._log, env=env)
        except OSError as exc:
            listener.close()
            self._log.close()
            raise PyramidProcessError(f"the pyramid process did not start: {exc}") from None
        got: list[Any] = []

        def accept() -> None:
            try:
                got.append(listener.accept())
            except Exception as exc:  # noqa: BLE001 - reported below
                got.append(exc)

        waiter = threading.Thread(target=accept, daemon=True)
        waiter.start()
        try:
            assert self._proc.stdin is not None
            self._proc.stdin.write(f"{listener.address}\n{key.hex()}\n".encode())
            self._proc.stdin.close()
        except OSError:
            pass                      # it died at once: found below
        t0 = time.monotonic()
        while waiter.is_alive() and self._proc.poll() is None \
                and time.monotonic() - t0 < START_TIMEOUT_S:
            waiter.join(0.1)
        listener.close()              # ends a wait for a process that never came
        waiter.join(1.0)
        if not got or not isinstance(got[0], Connection):
            code = self._proc.poll()
            raise self._fail("the pyramid process did not connect"
                             + (f" (exit code {code})" if code is not None else ""))
        self._conn = got[0]
        try:
            self._conn.send((mat, colors, verify_model))
            if not self._conn.poll(START_TIMEOUT_S):
                raise PyramidProcessError(f"the pyramid process did not load its models in "
                                          f"{START_TIMEOUT_S:.0f} s")
            kind, what = self._conn.recv()
        except (EOFError, OSError):
            raise self._fail("the pyramid process ended before it was ready") from None
        except PyramidProcessError as exc:
            raise self._fail(str(exc)) from None
        if kind == "error":
            self.close()
            raise what
        # a pipeline nobody closed still stops its process and frees the shared image
        atexit.register(_close_if_alive, weakref.ref(self))

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - at interpreter exit anything may be gone
            pass

    def _last_words(self) -> str:
        """The last line the process printed (after it ended), as ``: LINE``, or ''."""
        try:
            self._log.seek(0)
            lines = [ln.strip() for ln in self._log.read().decode(errors="replace").splitlines()
                     if ln.strip()]
        except (OSError, ValueError):
            return ""
        return f": {lines[-1]}" if lines else ""

    @property
    def alive(self) -> bool:
        return self._proc.poll() is None

    def submit(self, image: np.ndarray, calib: Any) -> _Pending:
        """Send one frame (``image`` is copied; the caller may change it at once)."""
        if self._waiting:
            raise PyramidProcessError("the last frame's finds were never taken")
        image = np.ascontiguousarray(image)
        if self._shm is None or self._shm.size < image.nbytes:
            self._drop_shm()
            try:
                self._shm = shared_memory.SharedMemory(create=True, size=max(1, image.nbytes))
            except OSError as exc:
                # (/dev/shm full, or a file-size limit: ``ulimit -f``) every frame failed
                # with a traceback; the pipeline finds the pyramids itself from now on
                raise PyramidProcessError(f"no shared memory for the frame ({exc})") from None
            self._named = True
        np.ndarray(image.shape, image.dtype, buffer=self._shm.buf)[...] = image
        self._frame = (image.shape, image.dtype.str)
        return self._send(calib, None)

    def submit_past(self, calib: Any, areas: list[tuple[float, float, float, float]]
                    ) -> _Pending:
        """Ask about ``areas`` past the border of the frame whose finds were just taken
        (:meth:`vision.pyramids.find.PyramidFinder.find_past`): the image is still in the
        shared memory."""
        if self._waiting:
            raise PyramidProcessError("the last frame's finds were never taken")
        return self._send(calib, list(areas))

    def _send(self, calib: Any, areas: list[tuple[float, float, float, float]] | None
              ) -> _Pending:
        """Ask about the frame in the shared memory: its finds (``areas`` None) or those
        past the border in ``areas``."""
        if self._shm is None or self._frame is None:
            raise PyramidProcessError("no frame was sent")
        try:
            if self._conn is None:
                raise OSError("closed")
            self._conn.send((self._shm.name, *self._frame, calib, areas))
        except (OSError, ValueError) as exc:
            raise PyramidProcessError(f"the pyramid process is gone ({exc})") from None
        self._waiting = True
        return _Pending(self)

    def _receive(self) -> tuple[list[dict[str, Any]], float]:
        if not self._waiting:
            raise PyramidProcessError("no frame was sent")
        try:
            if self._conn is None:
                raise OSError("closed")
            if not self._conn.poll(FRAME_TIMEOUT_S):
                raise PyramidProcessError(
                    f"the pyramid process did not answer in {FRAME_TIMEOUT_S:.0f} s")
            kind, what = self._conn.recv()
        except (EOFError, OSError):
            raise PyramidProcessError("the pyramid process ended") from None
        finally:
            self._waiting = False
        if kind == "ok" and self._named and self._shm is not None:
            # the process read a frame from it, so it holds the memory mapped: its name can
            # go. Both keep their mappings, and nothing is left in /dev/shm even if both are
            # killed (after an error it may not have mapped it yet: the name stays)
            self._unlink()
        if kind == "error":
            raise what
        found, ms = what
        return found, float(ms)

    def _unlink(self) -> None:
        assert self._shm is not None
        self._named = False
        try:
            self._shm.unlink()
        except FileNotFoundError:
            pass

    def _drop_shm(self) -> None:
        if self._shm is not None:
            if self._named:
                self._unlink()
            self._shm.close()
            self._shm = None

    def close(self) -> None:
        """Stop the process and free the shared image; safe to call twice."""
        self._stop()
        self._log.close()

    def _fail(self, message: str) -> PyramidProcessError:
        """Stop the process; the error to raise, with the last line it printed."""
        self._stop()
        words = self._last_words()
        self._log.close()
        return PyramidProcessError(message + words)

    def _stop(self) -> None:
        if self._conn is not None:
            try:
                self._conn.send(None)
            except (OSError, ValueError):
                pass
            self._conn.close()
            self._conn = None
        try:
            self._proc.wait(5.0)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait(5.0)
        self._drop_shm()


def _close_if_alive(ref: "weakref.ref[PyramidProcess]") -> None:
    proc = ref()
    if proc is not None:
        proc.close()


def main() -> int:
    """The process's side: read where to connect and the key from stdin, then serve."""
    address = sys.stdin.readline().strip()
    key = bytes.fromhex(sys.stdin.readline().strip())
    conn = Client(address, authkey=key)
    try:
        mat, colors, verify_model = conn.recv()
    except (EOFError, OSError):
        return 1
    _serve(conn, mat, colors, verify_model)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
