"""A watched photo folder: a camera tethered to the computer saves photos into it while the
companion runs (``companion run --source DIR --watch``)."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import cv2
import numpy as np
import pytest
from live_support import SAMPLES, SCRIPT, sample_record, sample_session, small_image

from companion.live.capture import (
    CaptureError,
    CaptureThread,
    FolderSource,
    Frame,
    SourceEvent,
    open_source,
)
from companion.live.runner import LiveRunner
from companion.live.session import EventKind, LiveEvent


def jpeg(value: int) -> bytes:
    ok, buf = cv2.imencode(".jpg", small_image(value))
    assert ok
    return bytes(buf.tobytes())


def next_item(cap: CaptureThread, timeout: float = 10.0) -> Frame | SourceEvent:
    item = cap.get(timeout)
    assert item is not None, "nothing came from the watched folder"
    return item


def fast(folder: Path) -> FolderSource:
    return FolderSource(folder, watch=True, poll_s=0.02, steady_s=0.1)


def test_photos_saved_later_are_read_once_and_the_wait_is_said_once(tmp_path: Path) -> None:
    (tmp_path / "IMG_0001.jpg").write_bytes(jpeg(10))
    cap = CaptureThread(fast(tmp_path)).start()
    try:
        first = next_item(cap)
        assert isinstance(first, Frame) and first.name.endswith("IMG_0001.jpg") and first.shot
        waiting = next_item(cap)
        assert isinstance(waiting, SourceEvent) and waiting.kind == "waiting"
        assert str(tmp_path) in waiting.reason
        # a hidden temporary file is no photo
        (tmp_path / ".IMG_0002.jpg").write_bytes(b"partial")
        (tmp_path / "IMG_0002.jpg").write_bytes(jpeg(50))
        got = next_item(cap)
        assert isinstance(got, Frame) and Path(got.name).name == "IMG_0002.jpg"
        assert got.index == 1 and int(got.image[0, 0, 0]) in range(40, 61)
        # the wait is said once a run (it would take the window's status line from the
        # verdicts), and no photo comes twice
        assert cap.get(0.5) is None
    finally:
        cap.stop()
    items = []
    while (item := cap.get(0.1)) is not None:
        items.append(item)
    assert [i.kind for i in items if isinstance(i, SourceEvent)] == ["end"]
    assert "stopped watching" in items[-1].reason   # type: ignore[union-attr]


def test_photos_that_land_together_come_in_name_order(tmp_path: Path) -> None:
    src = FolderSource(tmp_path, watch=True, poll_s=0.02, steady_s=0.1)
    src.open()
    assert isinstance(src.read(), SourceEvent)          # waiting
    for name, v in (("IMG_0003.jpg", 90), ("IMG_0002.jpg", 50), ("IMG_0010.jpg", 20)):
        (tmp_path / name).write_bytes(jpeg(v))
    got = [src.read() for _ in range(3)]      # (read here: all three are there at the scan)
    assert [Path(f.name).name for f in got if isinstance(f, Frame)] == [
        "IMG_0002.jpg", "IMG_0003.jpg", "IMG_0010.jpg"]


def test_a_photo_whose_writer_paused_is_read_when_it_is_whole(tmp_path: Path) -> None:
    """A Wi-Fi card or a network folder can stall mid-photo for longer than the steady
    time: the cut-short file is not given up, it is read again once it has grown."""
    data = jpeg(200)
    src = FolderSource(tmp_path, watch=True, poll_s=0.02, steady_s=0.1, give_up_s=30.0)
    cap = CaptureThread(src).start()
    try:
        assert next_item(cap).kind == "waiting"   # type: ignore[union-attr]
        path = tmp_path / "IMG_0001.jpg"
        path.write_bytes(data[:len(data) // 2])
        time.sleep(0.6)                            # stalled: read (and refused) meanwhile
        with open(path, "ab") as fh:
            fh.write(data[len(data) // 2:])
        item = next_item(cap)
        assert isinstance(item, Frame), item
        assert np.abs(item.image.astype(int) - small_image(200)).mean() < 5
        assert cap.get(0.5) is None                # read once
    finally:
        cap.stop()


def test_a_photo_that_stays_broken_is_called_unreadable_in_the_end(tmp_path: Path) -> None:
    src = FolderSource(tmp_path, watch=True, poll_s=0.02, steady_s=0.05, give_up_s=0.5)
    cap = CaptureThread(src).start()
    try:
        assert next_item(cap).kind == "waiting"   # type: ignore[union-attr]
        (tmp_path / "IMG_0001.jpg").write_bytes(jpeg(10)[:200])
        t0 = time.monotonic()
        item = next_item(cap)
        assert isinstance(item, SourceEvent) and item.kind == "unreadable"
        assert "IMG_0001.jpg" in item.reason and time.monotonic() - t0 >= 0.5
        (tmp_path / "IMG_0002.jpg").write_bytes(jpeg(90))
        nxt = next_item(cap)
        assert isinstance(nxt, Frame) and nxt.name.endswith("IMG_0002.jpg")
        # the broken one saved again whole (a camera writing one name each shot): a new photo
        tmp = tmp_path / ".IMG_0001.tmp"
        tmp.write_bytes(jpeg(150))
        tmp.replace(tmp_path / "IMG_0001.jpg")
        again = next_item(cap)
        assert isinstance(again, Frame) and again.name.endswith("IMG_0001.jpg")
        # and one deleted before it could be read, then saved again, too (not given up
        # meanwhile, however long a loaded machine keeps this test from deleting it)
        src.give_up_s = 30.0
        (tmp_path / "IMG_0003.jpg").write_bytes(jpeg(10)[:200])
        time.sleep(0.2)
        (tmp_path / "IMG_0003.jpg").unlink()
        time.sleep(0.2)
        (tmp_path / "IMG_0003.jpg").write_bytes(jpeg(60))
        last = next_item(cap)
        assert isinstance(last, Frame) and last.name.endswith("IMG_0003.jpg"), last
    finally:
        cap.stop()


def test_a_photo_still_being_written_is_read_only_once_whole(tmp_path: Path) -> None:
    """A half-written JPEG read at once would be a cut-short file: the source waits until the
    file has stopped growing."""
    data = jpeg(200)
    src = FolderSource(tmp_path, watch=True, poll_s=0.02, steady_s=1.0)
    cap = CaptureThread(src).start()
    try:
        assert next_item(cap).kind == "waiting"   # type: ignore[union-attr]
        path = tmp_path / "shot.jpg"
        with open(path, "wb") as fh:
            for k in range(0, len(data), 64):
                fh.write(data[k:k + 64])
                fh.flush()
                time.sleep(0.05)
        item = next_item(cap)
        assert isinstance(item, Frame), item   # not an "unreadable" event
        assert np.abs(item.image.astype(int) - small_image(200)).mean() < 5
    finally:
        cap.stop()


def test_an_empty_folder_can_be_watched_and_other_sources_cannot(tmp_path: Path) -> None:
    src = open_source(tmp_path, watch="new")
    assert isinstance(src, FolderSource) and src.watch and not src.realtime
    with pytest.raises(CaptureError, match="no images"):
        open_source(tmp_path)
    (tmp_path / "one.jpg").write_bytes(jpeg(10))
    with pytest.raises(CaptureError, match="only a folder can be watched"):
        open_source(tmp_path / "one.jpg", watch="new")
    with pytest.raises(CaptureError, match="no such folder"):
        open_source(tmp_path / "gone", watch="all")
    with pytest.raises(CaptureError, match="say new .* or all"):
        open_source(tmp_path, watch="some")
    with pytest.raises(CaptureError, match="only a folder can be watched .* this is a camera"):
        open_source("0", watch="new")
    with pytest.raises(CaptureError, match="this is nothing"):
        open_source("  ", watch="new")
    with pytest.raises(CaptureError, match="this is a stream"):
        open_source("rtsp://table.local/live", watch="new")
    with pytest.raises(CaptureError, match="needs a folder"):
        FolderSource(files=[tmp_path / "one.jpg"], watch=True)


def test_the_photos_already_there_are_left_alone_unless_asked_for(tmp_path: Path) -> None:
    """A tethering folder often holds earlier games: ``--watch`` (new) starts with the next
    photo, ``--watch all`` referees those already there first."""
    (tmp_path / "OLD_0001.jpg").write_bytes(jpeg(10))
    (tmp_path / "OLD_0002.jpg").write_bytes(jpeg(20))
    new = open_source(tmp_path, watch="new")
    new.open()
    waiting = new.read()
    assert isinstance(waiting, SourceEvent) and waiting.kind == "waiting"
    assert "the 2 already there are left alone" in waiting.reason
    every = open_source(tmp_path, watch="all")
    every.open()
    got = every.read()
    assert isinstance(got, Frame) and got.name.endswith("OLD_0001.jpg")


def test_a_watched_folder_that_goes_away_is_a_lost_camera(tmp_path: Path) -> None:
    folder = tmp_path / "card"
    folder.mkdir()
    cap = CaptureThread(fast(folder)).start()
    try:
        assert next_item(cap).kind == "waiting"   # type: ignore[union-attr]
        shutil.rmtree(folder)
        lost = next_item(cap)
        assert isinstance(lost, SourceEvent) and lost.kind == "camera_lost"
        assert "cannot be read any more" in lost.reason and str(folder) in lost.reason
        assert next_item(cap).kind == "end"       # type: ignore[union-attr]
    finally:
        cap.stop()


def test_the_runner_referees_photos_as_they_are_taken(tmp_path: Path) -> None:
    """The sample game's first tables saved one by one into a watched folder: the window
    hears that the companion waits for photos, and each move is accepted as its photo
    comes."""
    session = sample_session()
    heard: list[LiveEvent] = []
    session.subscribe(heard.append)
    runner = LiveRunner(fast(tmp_path), session,
                        lambda img, name: sample_record(Path(name).stem))
    thread = runner.start()
    try:
        for k in range(4):
            shutil.copy(SAMPLES / f"{k:04d}.jpg", tmp_path / f"{k:04d}.jpg")
            deadline = time.monotonic() + 20
            while len(session.history) < k and time.monotonic() < deadline:
                time.sleep(0.02)
            assert len(session.history) == k
    finally:
        runner.stop()
    thread.join(10)
    assert not thread.is_alive()
    assert [h.move for h in session.history] == [m["move"] for m in SCRIPT["moves"][:3]]
    notes = [e.text for e in heard if e.kind is EventKind.INFO and "watching" in e.text]
    assert notes and str(tmp_path) in notes[0]
    assert not [e for e in heard if e.kind in (EventKind.CAMERA_LOST, EventKind.FRAME_SKIPPED)]


def test_a_photo_saved_again_under_the_same_name_is_a_new_photo(tmp_path: Path) -> None:
    """Some tethering tools write each shot to latest.jpg (a temporary file renamed onto
    it): every new shot is read."""
    src = FolderSource(tmp_path, watch=True, poll_s=0.02, steady_s=0.1)
    cap = CaptureThread(src).start()
    try:
        assert next_item(cap).kind == "waiting"   # type: ignore[union-attr]
        for value in (30, 120, 210):
            tmp = tmp_path / ".latest.tmp"
            tmp.write_bytes(jpeg(value))
            tmp.replace(tmp_path / "latest.jpg")
            item = next_item(cap)
            assert isinstance(item, Frame) and item.name.endswith("latest.jpg")
            assert abs(int(item.image[0, 0, 0]) - value) < 8
        assert cap.get(0.5) is None                # each shot once
    finally:
        cap.stop()
