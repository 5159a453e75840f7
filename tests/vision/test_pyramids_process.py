"""The pyramid finder in a process of its own (vision.pyramids.process): the same record as
on a thread, an error loading its models raised where the pipeline is built, and a process
that dies costs no frame."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest
from vision_truth import SAMPLES, TruthBoxes

from calibration.mat import DEFAULT_MAT
from vision.pipeline import TablePipeline

FRAMES = [SAMPLES / "zarcana" / f"{k:04d}.jpg" for k in (23, 5)]


@pytest.fixture(scope="module")
def truth_boxes() -> TruthBoxes:
    boxes = TruthBoxes()
    for path in FRAMES:
        boxes.add(path)
    return boxes


def test_the_process_finds_what_the_thread_finds(truth_boxes: TruthBoxes):
    with TablePipeline(deck="tarot", card_detector=truth_boxes, pyramid_process=True) as p, \
            TablePipeline(deck="tarot", card_detector=truth_boxes,
                          pyramid_process=False) as q:
        assert p._process is not None and p._process.alive and q._process is None
        for path in FRAMES:
            a, b = p.observe_file(path), q.observe_file(path)
            assert a["pyramids"] and a["pyramids"] == b["pyramids"]
            assert a["cards"] == b["cards"]
            assert a["timings_ms"]["pyramids"] > 0
            # once the process has the frame's memory mapped, its name is gone: a companion
            # killed outright leaves nothing behind in /dev/shm
            shm = p._process._shm
            assert shm is not None and not p._process._named
            if Path("/dev/shm").is_dir():
                assert not (Path("/dev/shm") / shm.name.lstrip("/")).exists()
        proc = p._process
    assert p._process is None and not proc.alive      # closed with the pipeline


def test_a_process_that_dies_costs_no_frame(truth_boxes: TruthBoxes,
                                            caplog: pytest.LogCaptureFixture):
    with TablePipeline(deck="tarot", card_detector=truth_boxes, pyramid_process=False) as q:
        want = q.observe_file(FRAMES[0])["pyramids"]
    with TablePipeline(deck="tarot", card_detector=truth_boxes, pyramid_process=True) as p:
        proc = p._process
        proc._proc.kill()
        proc._proc.wait(10)
        with caplog.at_level(logging.WARNING, logger="vision.pipeline"):
            got = p.observe_file(FRAMES[0])["pyramids"]
        assert got == want
        assert p._process is None and p._pool is not None   # on a thread from now on
        assert "found in this process from now on" in caplog.text
        # and the next frame too, on the pipeline's own finder
        assert p.observe_file(FRAMES[0])["pyramids"] == want


def test_no_shared_memory_for_a_frame_costs_no_frame(truth_boxes: TruthBoxes,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     caplog: pytest.LogCaptureFixture):
    """The frame's shared memory cannot be made (/dev/shm full, ``ulimit -f``): every frame
    failed with a traceback; the pyramids are found in the pipeline's own process."""
    import vision.pyramids.process as process_module

    with TablePipeline(deck="tarot", card_detector=truth_boxes, pyramid_process=False) as q:
        want = q.observe_file(FRAMES[0])["pyramids"]
    with TablePipeline(deck="tarot", card_detector=truth_boxes, pyramid_process=True) as p:
        def too_large(*args: object, **kwargs: object) -> None:
            raise OSError(27, "File too large")

        monkeypatch.setattr(process_module.shared_memory, "SharedMemory", too_large)
        with caplog.at_level(logging.WARNING, logger="vision.pipeline"):
            got = p.observe_file(FRAMES[0])["pyramids"]
        assert got == want and p._process is None
        assert "no shared memory for the frame ([Errno 27] File too large)" in caplog.text


def test_a_bad_colour_profile_fails_where_the_pipeline_is_built(tmp_path: Path):
    bad = tmp_path / "colors.json"
    bad.write_text("{not json", encoding="utf-8")
    errors = []
    for in_process in (False, True):
        with pytest.raises(Exception) as info:
            TablePipeline(deck="tarot", colors=bad, pyramid_process=in_process)
        errors.append(info.value)
    assert type(errors[0]) is type(errors[1])
    assert str(errors[0]) == str(errors[1]) and "colors.json" in str(errors[1])


def test_the_decks_second_opinion_is_loaded_in_the_process(tmp_path: Path):
    """The verifier a pipeline takes for its deck reaches the process: a file that is not one
    fails where the process is built, named, as it does on a thread."""
    from vision.pyramids.find import PyramidFinder
    from vision.pyramids.process import PyramidProcess

    junk = tmp_path / "verify.onnx"
    junk.write_bytes(b"not a model")
    errors = []
    for build in (lambda: PyramidProcess(DEFAULT_MAT, None, junk),
                  lambda: PyramidFinder(DEFAULT_MAT, verify_model=junk)):
        with pytest.raises(Exception) as info:
            build()
        errors.append(info.value)
    assert str(errors[0]) == str(errors[1]) and "verify.onnx" in str(errors[0])


def test_one_frame_at_a_time():
    from vision.pyramids.process import PyramidProcess, PyramidProcessError

    proc = PyramidProcess(DEFAULT_MAT)
    try:
        image = np.zeros((120, 160, 3), np.uint8)
        from calibration.table import Calibration

        pending = proc.submit(image, Calibration(calibrated=False))
        with pytest.raises(PyramidProcessError, match="never taken"):
            proc.submit(image, Calibration(calibrated=False))
        found, ms = pending.result()
        assert found == [] and ms >= 0.0           # no table, no pyramids
        with pytest.raises(PyramidProcessError, match="no frame was sent"):
            pending.result()
    finally:
        proc.close()
        proc.close()                                  # twice is fine
    assert not proc.alive


@pytest.mark.parametrize("python", ["/nowhere/python", "false"])
def test_a_process_that_cannot_start_leaves_the_pyramids_on_a_thread(
        python: str, truth_boxes: TruthBoxes, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture):
    import shutil
    import sys

    from vision.pyramids.process import PyramidProcess, PyramidProcessError

    exe = python if python.startswith("/") else shutil.which(python)
    if exe is None:
        pytest.skip(f"no {python} here")
    monkeypatch.setattr(sys, "executable", exe)
    with pytest.raises(PyramidProcessError, match="did not (start|connect)"):
        PyramidProcess(DEFAULT_MAT)
    with caplog.at_level(logging.WARNING, logger="vision.pipeline"):
        p = TablePipeline(deck="tarot", card_detector=truth_boxes, pyramid_process=True)
    with p:
        assert p._process is None and p._pool is not None
        assert "the pyramids run on a thread instead" in caplog.text
        assert p.observe_file(FRAMES[0])["pyramids"]
