"""``companion observe``: output forms, --annotate, and every kind of bad input.

The card detector and the pyramid finder are the :class:`TruthBoxes` test double (patched
in where the command builds the real ones), so these tests run whether or not their models
are shipped; one test runs the shipped models when they are there.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

cv2 = pytest.importorskip("cv2")

from companion.cli import main  # noqa: E402
from vision_truth import SAMPLES, TruthBoxes  # noqa: E402

FRAMES = [SAMPLES / "zarcana" / n for n in ("0005.jpg", "0011.jpg", "0023.jpg")]


@pytest.fixture()
def fake(monkeypatch, tmp_path):
    """TruthBoxes in place of the card detector and the pyramid finder, knowing the sample
    frames; no saved camera file or enrolled decks of the user's leak in."""
    import vision.detection.cards as cards
    import vision.pyramids.find as find

    double = TruthBoxes()
    for f in FRAMES:
        double.add(f)
    monkeypatch.setattr(cards, "CardDetector", lambda model=None, threads=2: double)
    monkeypatch.setattr(find, "PyramidFinder", lambda mat, **kw: double)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    return double


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["observe", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_one_image_prints_one_pretty_record(fake, capsys):
    code, out, err = _run(capsys, str(FRAMES[0]))
    assert code == 0, err
    assert out.count("\n") > 10          # pretty, not one line
    record = json.loads(out)
    assert record["image"] == str(FRAMES[0])
    assert record["calibrated"] is True
    truth = json.loads(FRAMES[0].with_suffix(".json").read_text())
    assert sorted(c["id"] for c in record["cards"]) == sorted(c["id"] for c in truth["cards"])


def test_jsonl_and_folder(fake, capsys, tmp_path):
    code, out, _ = _run(capsys, "--jsonl", str(FRAMES[1]))
    assert code == 0 and len(out.splitlines()) == 1
    assert json.loads(out)["image"] == str(FRAMES[1])
    folder = tmp_path / "frames"
    folder.mkdir()
    for f in FRAMES:
        shutil.copy(f, folder / f.name)
        shutil.copy(f.with_suffix(".json"), folder / f.with_suffix(".json").name)
    code, out, err = _run(capsys, str(folder))
    assert code == 0, err
    lines = out.splitlines()
    assert [Path(json.loads(line)["image"]).name for line in lines] == [f.name for f in FRAMES]
    assert all(json.loads(line)["cards"] for line in lines)
    # a GIF in the folder is read too (its first frame), as it is when named alone
    cv2.imwrite(str(folder / "zz.gif"), cv2.imread(str(FRAMES[0])))
    code, out, err = _run(capsys, str(folder))
    assert code == 0, err
    assert Path(json.loads(out.splitlines()[-1])["image"]).name == "zz.gif"


def test_annotate_writes_each_image(fake, capsys, tmp_path):
    out_dir = tmp_path / "seen"
    code, out, err = _run(capsys, "--annotate", str(out_dir), str(FRAMES[0]), str(FRAMES[2]))
    assert code == 0, err
    written = sorted(p.name for p in out_dir.iterdir())
    assert written == ["0005.jpg", "0023.jpg"]
    drawn = cv2.imread(str(out_dir / "0005.jpg"))
    src = cv2.imread(str(FRAMES[0]))
    assert drawn.shape == src.shape
    # something was drawn over the cards (outlines, ids) and the banner
    assert float(np.mean(cv2.absdiff(drawn, src))) > 0.5
    records = [json.loads(line) for line in out.splitlines()]
    assert [Path(r["annotated"]).name for r in records] == ["0005.jpg", "0023.jpg"]


def test_bad_files_are_named_and_the_rest_still_processed(fake, capsys, tmp_path):
    folder = tmp_path / "mixed"
    folder.mkdir()
    shutil.copy(FRAMES[0], folder / "a-good.jpg")
    (folder / "b-empty.jpg").write_bytes(b"")
    (folder / "c-garbage.png").write_bytes(b"\x00\x01not a png" * 50)
    data = FRAMES[1].read_bytes()
    (folder / "d-truncated.jpg").write_bytes(data[: int(len(data) * 0.6)])
    shutil.copy(FRAMES[2], folder / "e-good.jpg")
    (folder / "notes.txt").write_text("ignored: not an image suffix")
    missing = tmp_path / "nowhere.jpg"
    code, out, err = _run(capsys, str(folder), str(missing))
    assert code == 1
    # every image given gets its line, in order: a tool pairing inputs with lines stays
    # in step; the unread ones say why
    records = {Path(r["image"]).name: r for r in map(json.loads, out.splitlines())}
    assert list(records) == ["a-good.jpg", "b-empty.jpg", "c-garbage.png", "d-truncated.jpg",
                             "e-good.jpg", "nowhere.jpg"]
    assert records["a-good.jpg"]["cards"] and "error" not in records["a-good.jpg"]
    for name, words in (("b-empty.jpg", "empty"), ("c-garbage.png", "not an image"),
                        ("d-truncated.jpg", "truncated JPEG"), ("nowhere.jpg", "no such file")):
        line = next((ln for ln in err.splitlines() if name in ln), "")
        assert words in line, (name, err)
        unread = records[name]
        assert unread["error"] is True and unread["calibrated"] is False, unread
        assert words in unread["reason"] and name not in unread["reason"], unread
        assert unread["cards"] == [] and unread["pyramids"] == []
    assert "no table" not in err          # an unread image is not a table not found
    assert "Traceback" not in err


def test_no_table_is_still_a_record_but_exit_1(fake, capsys, tmp_path):
    blank = tmp_path / "floor.jpg"
    rng = np.random.default_rng(3)
    cv2.imwrite(str(blank), rng.integers(60, 90, (360, 640, 3), dtype=np.uint8))
    code, out, err = _run(capsys, str(blank))
    assert code == 1
    record = json.loads(out)
    assert record["calibrated"] is False and record["reason"]
    assert record["cards"] == [] and record["pyramids"] == []
    assert "floor.jpg" in err and "no table" in err


def test_empty_folder_is_an_error(fake, capsys, tmp_path):
    (tmp_path / "none").mkdir()
    code, out, err = _run(capsys, str(tmp_path / "none"), str(FRAMES[0]))
    assert code == 1
    assert "holds no images" in err
    assert json.loads(out.splitlines()[0])["image"] == str(FRAMES[0])


@pytest.mark.parametrize("text, words", [
    ("{not json", "not valid JSON"),
    ('{"dictionary": "DICT_4X4_50", "marker_size_mm": 60, "width_mm": 900}', "height_mm"),
    # (more digits than Python reads: was "internal error", exit 1)
    ('{"dictionary": "DICT_4X4_50", "marker_size_mm": 60, "width_mm": 900, "height_mm": 6'
     + "5" * 5000 + "}", "field 'height_mm'"),
    ('{"dictionary": "DICT_4X4_50", "marker_size_mm": 60, "width_mm": 900, "height_mm": 650, '
     '"zones": {"draw": [20, 560, 110, 1e300]}}', "'zones.draw'"),
])
def test_wrong_mat_is_a_usage_error(fake, capsys, tmp_path, text, words):
    mat = tmp_path / "mat.json"
    mat.write_text(text)
    code, out, err = _run(capsys, "--mat", str(mat), str(FRAMES[0]))
    assert code == 2 and out == ""
    assert "mat.json" in err and words in err and "Traceback" not in err


def test_missing_or_corrupt_gallery_is_a_usage_error(fake, capsys, tmp_path):
    code, _, err = _run(capsys, "--deck", str(tmp_path / "gone.npz"), str(FRAMES[0]))
    assert code == 2 and "gone.npz" in err and "does not exist" in err
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"PK\x03\x04" + b"\x00" * 40)
    code, _, err = _run(capsys, "--deck", str(bad), str(FRAMES[0]))
    assert code == 2 and "bad.npz" in err
    code, _, err = _run(capsys, "--deck", "no-such-deck", str(FRAMES[0]))
    assert code == 2 and "no enrolled deck 'no-such-deck'" in err
    # a camera file or a photo given as the deck: said as what it is (it was "not a
    # gallery file of this program ... enroll the deck again")
    from calibration.intrinsics import save_intrinsics

    camera = tmp_path / "camera.json"
    save_intrinsics(camera, np.eye(3), np.zeros(5), (100, 100))
    for given, what in ((camera, "a camera file"), (FRAMES[1], "an image (JPEG)")):
        code, _, err = _run(capsys, "--deck", str(given), str(FRAMES[0]))
        assert code == 2 and f"is {what}" in err and "given to the wrong option?" in err, err


def test_missing_or_corrupt_model_is_a_usage_error(capsys, tmp_path, monkeypatch):
    import models
    import vision.detection.cards as cards

    def missing(name: str) -> Path:
        raise models.ModelError(f"model file {name!r} is missing from models/")

    monkeypatch.setattr(cards, "model_path", missing)
    code, out, err = _run(capsys, str(FRAMES[0]))
    assert code == 2 and out == "" and "cards-obb.onnx" in err
    corrupt = tmp_path / "cards-obb.onnx"
    corrupt.write_bytes(b"\x08\x07 definitely not onnx")
    monkeypatch.setattr(cards, "model_path", lambda name: corrupt)
    code, out, err = _run(capsys, str(FRAMES[0]))
    assert code == 2 and "cannot be loaded" in err and "Traceback" not in err


def test_bad_camera_file_is_a_usage_error(fake, capsys, tmp_path):
    cam = tmp_path / "camera.json"
    cam.write_text('{"K": [[1, 0, 0]], "dist": [0, 0, 0, 0, 0], "image_size": [1600, 900]}')
    code, out, err = _run(capsys, "--intrinsics", str(cam), str(FRAMES[0]))
    assert code == 2 and "camera.json" in err


def test_camera_file_is_used(fake, capsys, tmp_path):
    from calibration.intrinsics import save_intrinsics

    truth = json.loads(FRAMES[0].with_suffix(".json").read_text())
    cam = truth["camera"]
    path = save_intrinsics(tmp_path / "cam.json", np.array(cam["K"]), np.array(cam["dist"]),
                           (cam["width"], cam["height"]))
    code, out, err = _run(capsys, "--intrinsics", str(path), str(FRAMES[0]))
    assert code == 0, err
    assert json.loads(out)["calibration"]["intrinsics"] is True


def test_shipped_models_when_present(capsys, monkeypatch, tmp_path):
    from models import ModelError, model_path

    try:
        model_path("cards-obb.onnx")
        from vision.pyramids.find import PyramidFinder
        from calibration.mat import DEFAULT_MAT

        PyramidFinder(DEFAULT_MAT)
    except ModelError as exc:
        pytest.skip(f"not shipped yet: {exc}")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    code, out, err = _run(capsys, "--jsonl", str(FRAMES[0]))
    assert code == 0, err
    record = json.loads(out)
    assert len(record["cards"]) >= 9
    assert record["pyramids"]


def test_a_blurred_image_gets_a_warning_and_still_counts_as_read(capsys):
    """The sample game's hand-02.jpg was shaken 6 px (its truth's style); the shipped models
    read it, and the record and stderr say it is blurred."""
    from models import model_path

    if not model_path("cards-obb.onnx").is_file():
        pytest.skip("the shipped card detector is not there")
    shaken, sharp = SAMPLES / "zarcana" / "hand-02.jpg", FRAMES[0]
    code, out, err = _run(capsys, "--jsonl", str(shaken), str(sharp))
    assert code == 0, err
    records = [json.loads(line) for line in out.splitlines()]
    assert [r["blurred"] for r in records] == [True, False]
    assert f"warning: {shaken}: the picture is blurred (the mat's marker edges spread over" in err
    assert str(sharp) not in err


def test_annotated_copies_never_replace_the_images_given(fake, capsys, tmp_path):
    folder = tmp_path / "photos"
    folder.mkdir()
    shutil.copy(FRAMES[0], folder / "a.jpg")
    before = (folder / "a.jpg").read_bytes()
    code, out, err = _run(capsys, str(folder), "--annotate", str(folder))
    assert code == 2 and "would replace the image" in err and "a.jpg" in err
    assert (folder / "a.jpg").read_bytes() == before and out == ""
    # the same file under another name (a hard link here; IMG_1.JPG for IMG_1.jpg where
    # case is ignored) is the same image too
    other = tmp_path / "other"
    other.mkdir()
    os.link(folder / "a.jpg", other / "b.png")
    (tmp_path / "out").mkdir()
    os.link(folder / "a.jpg", tmp_path / "out" / "b.jpg")
    code, _, err = _run(capsys, str(other / "b.png"), "--annotate", str(tmp_path / "out"))
    assert code == 2 and "would replace the image" in err
    assert (folder / "a.jpg").read_bytes() == before
    # a folder beside them is fine
    code, _, err = _run(capsys, str(folder), "--annotate", str(folder / "seen"))
    assert code == 0, err
    assert (folder / "seen" / "a.jpg").is_file() and (folder / "a.jpg").read_bytes() == before


def test_an_annotated_copy_never_replaces_another_photo_of_its_name(fake, capsys, tmp_path):
    """A camera names every day's first shot IMG_0001.jpg: the annotate folder may hold
    another photo of that name. It is kept, and the copy is IMG_0001-annotated.jpg; a copy
    written before (its header says so) is replaced by the next run."""
    folder, seen = tmp_path / "today", tmp_path / "Pictures"
    folder.mkdir()
    seen.mkdir()
    shutil.copy(FRAMES[0], folder / "IMG_0001.jpg")
    (seen / "IMG_0001.jpg").write_bytes(b"yesterday's photo")
    for _ in range(2):
        code, out, err = _run(capsys, str(folder / "IMG_0001.jpg"), "--annotate", str(seen))
        assert code == 0, err
        assert json.loads(out)["annotated"] == str(seen / "IMG_0001-annotated.jpg")
    assert (seen / "IMG_0001.jpg").read_bytes() == b"yesterday's photo"
    assert sorted(p.name for p in seen.iterdir()) == ["IMG_0001-annotated.jpg", "IMG_0001.jpg"]
    # an annotated copy of the plain name is the command's own: replaced, not kept
    (seen / "IMG_0001.jpg").unlink()
    (seen / "IMG_0001-annotated.jpg").rename(seen / "IMG_0001.jpg")
    code, out, err = _run(capsys, str(folder / "IMG_0001.jpg"), "--annotate", str(seen))
    assert json.loads(out)["annotated"] == str(seen / "IMG_0001.jpg")
    assert cv2.imread(str(seen / "IMG_0001.jpg")) is not None


def test_annotated_copy_names_are_ones_a_file_system_takes(fake, capsys, tmp_path,
                                                            monkeypatch):
    """A photo's name of 250 characters, with "-annotated" (and the temporary file's dot
    and letters) added, was longer than a file name may be: the run stopped with no
    record. The copy's name is cut short instead. And a photo given twice by its name
    alone (no folder) got "-x.jpg", a name read as an option: it is named after the
    current folder."""
    long = "p" * 250
    seen = tmp_path / "seen"
    seen.mkdir()
    shutil.copy(FRAMES[0], tmp_path / f"{long}.jpg")
    shutil.copy(FRAMES[0], seen / f"{long}.jpg")        # another photo of that name there
    code, out, err = _run(capsys, str(tmp_path / f"{long}.jpg"), "--annotate", str(seen))
    assert code == 0, err
    made = Path(json.loads(out)["annotated"])
    assert made.name.endswith("-annotated.jpg") and len(made.name) <= 255 and made.is_file()
    monkeypatch.chdir(tmp_path)
    shutil.copy(FRAMES[0], tmp_path / "x.jpg")
    code, out, err = _run(capsys, "x.jpg", "x.jpg", "--annotate", "ann")
    assert code == 0, err
    assert sorted(p.name for p in (tmp_path / "ann").iterdir()) == [f"{tmp_path.name}-x.jpg",
                                                                    "x.jpg"]
    # and as ../x.jpg: named after that folder, not a hidden "..-x.jpg"
    (tmp_path / "sub").mkdir()
    shutil.copy(FRAMES[0], tmp_path / "sub" / "x.jpg")
    monkeypatch.chdir(tmp_path / "sub")
    code, out, err = _run(capsys, "x.jpg", "../x.jpg", "--annotate", "ann2")
    assert code == 0, err
    assert sorted(p.name for p in (tmp_path / "sub" / "ann2").iterdir()) == [
        f"{tmp_path.name}-x.jpg", "x.jpg"]


def test_a_warning_never_shares_the_progress_bars_line(fake, capsys, tmp_path, monkeypatch):
    """On a terminal the progress bar is drawn on stderr with carriage returns: a warning
    was written after the bar on its line ("... eta 2scompanion observe: warning: ...").
    Each warning and each record now takes the bar off its line first."""
    import vision.synth.generate as generate

    drawn = generate.Progress.__init__

    def on_a_terminal(self: Any, total: int, label: str = "synth", stream: Any = None,
                      force: bool = False) -> None:
        drawn(self, total, label, stream, force=True)

    monkeypatch.setattr(generate.Progress, "__init__", on_a_terminal)
    (tmp_path / "bad.jpg").write_bytes(b"not a picture")
    code, out, err = _run(capsys, "--jsonl", str(FRAMES[0]), str(tmp_path / "bad.jpg"),
                          str(FRAMES[1]))
    assert code == 1 and len(out.splitlines()) == 3
    assert "observe [" in err                               # the bar was drawn
    said = [line for line in err.split("\n") if "companion observe:" in line]
    assert said and all(line.split("\r\033[K")[-1].startswith("companion observe:")
                        for line in said), said


def test_an_annotate_folder_that_cannot_be_made_is_a_usage_error(fake, capsys, tmp_path):
    (tmp_path / "afile").write_text("x")
    code, _, err = _run(capsys, str(FRAMES[0]), "--annotate", str(tmp_path / "afile" / "sub"))
    assert code == 2 and f"{str(tmp_path / 'afile')!r} is a file, not a folder" in err, err
    assert "Traceback" not in err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_pipe_and_a_huge_image_are_refused_without_reading_them(fake, capsys, tmp_path):
    import os

    pipe = tmp_path / "pipe.jpg"
    os.mkfifo(pipe)                 # reading it would wait forever
    # a PNG saying 30000 x 30000 (such a file can be a few hundred kB): refused from its
    # header, not decoded
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(
            ">I", zlib.crc32(kind + data))

    bomb = tmp_path / "bomb.png"
    bomb.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 30000, 30000,
                                                                       8, 0, 0, 0, 0))
                     + chunk(b"IDAT", zlib.compress(b"\0" * 30001)) + chunk(b"IEND", b""))
    code, out, err = _run(capsys, "--jsonl", str(pipe), str(bomb), str(FRAMES[0]))
    assert code == 1
    records = [json.loads(line) for line in out.splitlines()]
    assert [r.get("error", False) for r in records] == [True, True, False]
    assert "not a regular file" in records[0]["reason"]
    assert "30000 x 30000 pixels" in records[1]["reason"]


def test_a_greyscale_picture_is_said_to_have_no_colour(fake, capsys, tmp_path):
    grey = tmp_path / "grey.png"
    cv2.imwrite(str(grey), cv2.imread(str(FRAMES[0]), cv2.IMREAD_GRAYSCALE))
    code, out, err = _run(capsys, "--jsonl", str(grey), str(FRAMES[0]))
    records = [json.loads(line) for line in out.splitlines()]
    assert [r.get("greyscale", False) for r in records] == [True, False]
    assert f"error: {grey}: the picture has no colour (greyscale)" in err
    assert str(FRAMES[0]) not in err and code == 1, err


@pytest.mark.parametrize("size, grey", [((1, 1), True), ((40, 60), True), ((63, 640), False)])
def test_a_picture_too_small_to_hold_a_table_is_said_to_be(fake, capsys, tmp_path, size, grey):
    """A 1x1 image (a thumbnail, a placeholder) was said to have no colour (greyscale)."""
    tiny = tmp_path / "tiny.png"
    h, w = size
    cv2.imwrite(str(tiny), np.full((h, w) if grey else (h, w, 3), 128 if grey else
                                   (40, 90, 200), np.uint8))
    code, out, err = _run(capsys, "--jsonl", str(tiny), str(FRAMES[0]))
    records = [json.loads(line) for line in out.splitlines()]
    assert [r.get("error", False) for r in records] == [True, False]
    assert f"error: {tiny}: {w} x {h} pixels is too small to hold a table" in err, err
    assert "greyscale" not in err and str(FRAMES[0]) not in err and code == 1, err
    assert f"{w} x {h} pixels is too small" in records[0]["reason"]


def test_a_nearly_grey_picture_has_no_colour_and_one_pyramid_gives_it_some():
    """Channels a level or two apart (a grey picture saved again, a night mode's noise) are
    still no colour; one pyramid's worth of colour on a grey table is colour."""
    from calibration.images import greyscale

    grey = cv2.cvtColor(cv2.imread(str(FRAMES[0]), cv2.IMREAD_GRAYSCALE), cv2.COLOR_GRAY2BGR)
    assert greyscale(grey)
    noisy = grey.astype(np.int16)
    noisy[..., 2] += np.random.default_rng(4).integers(-2, 3, noisy.shape[:2])
    noisy = np.clip(noisy, 0, 255).astype(np.uint8)
    assert greyscale(noisy)
    pyramid = noisy.copy()
    cv2.circle(pyramid, (900, 500), 12, (40, 40, 200), -1)      # 24 px across, red
    assert not greyscale(pyramid)
    assert not greyscale(cv2.imread(str(FRAMES[0])))


def test_another_cameras_file_is_said_not_to_fit(fake, capsys, tmp_path):
    """A camera file measured on another camera (a 720p webcam's strong barrel) was applied
    without a word, every card 6-10 mm off: the markers fit the mat worse with it than
    without it, which the record now gives, and observe says so and fails."""
    from calibration.intrinsics import save_intrinsics

    h, w = cv2.imread(str(FRAMES[0])).shape[:2]
    other = tmp_path / "webcam.json"
    save_intrinsics(other, np.array([[0.9 * w, 0, w / 2], [0, 0.9 * w, h / 2], [0, 0, 1]]),
                    np.array([-0.26, 0.08, 0, 0, 0]), (w, h))
    code, out, err = _run(capsys, "--jsonl", "--intrinsics", str(other), str(FRAMES[0]))
    calib = json.loads(out)["calibration"]
    assert calib["reprojection_mm"] > 2 * calib["reprojection_without_lens_mm"], calib
    assert code == 1 and f"the camera file {str(other)!r} does not fit this camera" in err, err
    assert "--no-intrinsics" in err and "fit the mat file badly" not in err
    code, out, err = _run(capsys, "--jsonl", "--no-intrinsics", str(FRAMES[0]))
    assert code == 0 and "does not fit this camera" not in err
    assert "reprojection_without_lens_mm" not in json.loads(out)["calibration"]


def test_a_mat_file_that_is_not_the_mat_in_the_picture_is_warned_of(fake, capsys, tmp_path):
    swapped = tmp_path / "swapped.json"         # 650 x 900 given for the 900 x 650 mat
    swapped.write_text(json.dumps({"dictionary": "DICT_4X4_50", "marker_size_mm": 60,
                                   "width_mm": 650, "height_mm": 900}))
    code, _, err = _run(capsys, "--jsonl", "--mat", str(swapped), str(FRAMES[0]))
    assert f"error: {FRAMES[0]}: the markers fit the mat file badly" in err and code == 1
    assert "camera file" not in err
    # with no camera file, a lens that bends straight lines is the other suspect
    assert "does the lens bend straight lines" in err and "calibrate-camera" in err
    # with a camera file in use, the lens is named as the other suspect
    from calibration.intrinsics import save_intrinsics

    camera = tmp_path / "camera.json"
    save_intrinsics(camera, np.array([[1500.0, 0, 960], [0, 1500.0, 540], [0, 0, 1]]),
                    np.zeros(5), (1920, 1080))
    code, _, err = _run(capsys, "--jsonl", "--mat", str(swapped), "--intrinsics", str(camera),
                        str(FRAMES[0]))
    assert code == 1 and f"is the camera file {str(camera)!r} this camera's lens?" in err, err
    assert "--no-intrinsics" in err
    code, out, err = _run(capsys, "--jsonl", str(FRAMES[0]))
    assert "fit the mat file badly" not in err and "the cards measure" not in err
    assert code == 0 and 0.97 < json.loads(out)["calibration"]["card_scale"] < 1.03


def test_a_mat_file_measured_to_the_markers_outer_edges_is_caught_by_the_cards(capsys,
                                                                               tmp_path):
    """960 x 710 for the 900 x 650 between the markers' centres: the markers still fit it
    (3 mm RMS), but every card comes out 8-9% too big, and so is every position. (The
    shipped detector: the truth's boxes would have the deck's size whatever the mat.)"""
    outer = tmp_path / "outer.json"
    outer.write_text(json.dumps({"dictionary": "DICT_4X4_50", "marker_size_mm": 60,
                                 "width_mm": 960, "height_mm": 710}))
    code, out, err = _run(capsys, "--jsonl", "--mat", str(outer), str(FRAMES[0]))
    assert code == 1 and json.loads(out)["calibrated"]
    assert (f"error: {FRAMES[0]}: the cards measure 8% larger than the deck's: is the mat "
            "file's size right?") in err


def test_a_jpeg_damaged_in_the_middle_is_refused_not_guessed_at(fake, capsys, tmp_path):
    data = bytearray(FRAMES[1].read_bytes())
    third = len(data) // 3
    data[third:third + 2000] = bytes(2000)         # zeros: the end marker is still there
    damaged = tmp_path / "damaged.jpg"
    damaged.write_bytes(bytes(data))
    code, out, err = _run(capsys, "--jsonl", str(damaged), str(FRAMES[0]))
    assert code == 1
    records = [json.loads(line) for line in out.splitlines()]
    assert records[0]["error"] and "image data is damaged" in records[0]["reason"]
    assert "error" not in records[1]
    assert f"error: {damaged}: the JPEG's image data is damaged" in err


def test_a_reader_that_stops_reading_ends_the_run_quietly(tmp_path):
    """``observe FOLDER | head -1``: once the reader has gone, the run ends as a tool
    killed by SIGPIPE does (141, nothing said), not with "error: Broken pipe" and the exit
    code of a bad mat; started with standard output closed, it says so (2)."""
    import subprocess
    import sys

    code = ("import sys; from companion.cli import main; sys.exit(main(sys.argv[1:]))")
    args = [sys.executable, "-c", code, "observe", "--jsonl", str(FRAMES[0]), str(FRAMES[1]),
            str(FRAMES[2])]
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert proc.stdout is not None and proc.stderr is not None
    assert json.loads(proc.stdout.readline())["image"] == str(FRAMES[0])
    proc.stdout.close()
    assert proc.wait(timeout=120) == 141
    assert proc.stderr.read().decode() == ""
    closed = subprocess.run(args[:6], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env=env, timeout=120, close_fds=True,
                            preexec_fn=lambda: os.close(1))
    assert closed.returncode == 2
    assert b"standard output is closed" in closed.stderr


def test_a_camera_file_that_does_not_fit_one_image_names_that_image(fake, capsys, tmp_path):
    from calibration.intrinsics import save_intrinsics

    camera = tmp_path / "camera.json"
    h, w = cv2.imread(str(FRAMES[0])).shape[:2]
    save_intrinsics(camera, np.array([[1500.0, 0, w / 2], [0, 1500.0, h / 2], [0, 0, 1]]),
                    np.zeros(5), (w, h))
    upright = tmp_path / "upright.jpg"
    cv2.imwrite(str(upright), cv2.rotate(cv2.imread(str(FRAMES[0])), cv2.ROTATE_90_CLOCKWISE))
    code, out, err = _run(capsys, "--jsonl", "--intrinsics", str(camera), str(FRAMES[0]),
                          str(upright))
    assert code == 1
    assert f"error: {upright}: camera file {str(camera)!r} was calibrated at {w}x{h}" in err, err
    records = [json.loads(line) for line in out.splitlines()]
    assert records[1]["error"] and records[1]["reason"].startswith("camera file")


def test_with_stderr_closed_the_records_are_all_that_is_printed(tmp_path):
    """``observe ... 2>&-``: the problems are said nowhere, not among the records (print's
    fallback when there is no stderr), and nothing the decoders write lands in a file."""
    import subprocess
    import sys

    (tmp_path / "text.jpg").write_bytes(b"not a picture")
    png = bytearray(cv2.imencode(".png", np.full((60, 80, 3), 128, np.uint8))[1].tobytes())
    png[png.index(b"IDAT") + 8:png.index(b"IDAT") + 14] = bytes(6)
    (tmp_path / "crc.png").write_bytes(bytes(png))
    code = ("import sys; from companion.cli import main; sys.exit(main(sys.argv[1:]))")
    args = [sys.executable, "-c", code, "observe", "--jsonl", str(tmp_path / "text.jpg"),
            str(tmp_path / "missing.jpg"), str(tmp_path / "crc.png")]
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run(args, stdout=subprocess.PIPE, env=env, timeout=120,
                          close_fds=True, preexec_fn=lambda: os.close(2))
    assert done.returncode == 1
    lines = done.stdout.decode().splitlines()
    assert [json.loads(line)["image"] for line in lines] == [
        str(tmp_path / n) for n in ("text.jpg", "missing.jpg", "crc.png")], lines


def test_a_file_name_with_a_newline_keeps_its_problem_on_one_line(fake, capsys, tmp_path):
    (tmp_path / "bad\nname.jpg").write_bytes(b"not a picture")
    code, _, err = _run(capsys, str(tmp_path / "bad\nname.jpg"))
    assert code == 1 and err.count("\n") == 1
    assert f"error: {tmp_path}/bad\\nname.jpg: not an image" in err


def test_a_file_name_that_is_not_utf8_is_printed_as_strict_json(fake, capsys, tmp_path):
    """Latin-1 bytes in a name came out as \\udcXX escapes of lone surrogates, which
    strict JSON parsers refuse: the odd bytes are U+FFFD in the record."""
    folder = tmp_path / "latin"
    folder.mkdir()
    shutil.copy(FRAMES[0], os.fsdecode(bytes(folder) + b"/caf\xe9.jpg"))
    Path(os.fsdecode(bytes(folder) + b"/b\xe9d.jpg")).write_bytes(b"not a picture")
    code, out, err = _run(capsys, "--jsonl", str(folder))
    assert code == 1 and "not an image" in err
    assert "\\udc" not in out
    records = [json.loads(line) for line in out.splitlines()]
    assert [r["image"] for r in records] == [f"{folder}/b\ufffdd.jpg", f"{folder}/caf\ufffd.jpg"]
    assert records[0]["error"] is True and records[1]["calibrated"] is True


def test_images_given_together_are_one_cameras_frames_unless_each_alone(fake, capsys,
                                                                        tmp_path):
    """Markers hidden in the second of two frames of one camera are taken from the first's
    calibration; with --each-alone every image is calibrated as if it were the only one."""
    first = FRAMES[0]
    image = cv2.imread(str(first))
    markers = json.loads(first.with_suffix(".json").read_text())["markers"]
    for k in ("2", "3"):        # (three markers seen are a calibration of their own)
        corners = np.array(markers[k]["corners_px"], np.float64)
        c = corners.mean(axis=0)
        cv2.fillConvexPoly(image, (c + (corners - c) * 1.5).astype(np.int32), (120, 150, 200))
    covered = tmp_path / first.name         # (the name the test double knows the frame by)
    cv2.imwrite(str(covered), image)
    code, out, _ = _run(capsys, str(first), str(covered))
    together = json.loads(out.splitlines()[1])["calibration"]
    assert code == 0 and together["markers_seen"] == [0, 1]
    assert together["markers_assumed"] == [2, 3]
    code, out, _ = _run(capsys, str(first), str(covered), "--each-alone")
    alone = json.loads(out.splitlines()[1])
    assert code == 0 and alone["calibration"]["markers_seen"] == [0, 1]
    assert "markers_assumed" not in alone["calibration"]
    code, out, _ = _run(capsys, str(covered), "--jsonl")
    by_itself = json.loads(out)
    for rec in (alone, by_itself):
        rec.pop("timings_ms")
    assert alone == by_itself


@pytest.fixture()
def shipped(monkeypatch, tmp_path):
    """The shipped models (else the test is skipped), and no saved camera or colour file
    of this machine's."""
    from models import ModelError, model_path

    try:
        model_path("cards-obb.onnx")
    except ModelError as exc:
        pytest.skip(f"not shipped yet: {exc}")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


def test_one_or_two_markers_give_no_card_scale_to_doubt_the_mat_by(capsys, shipped,
                                                                    tmp_path):
    """With two markers seen, their pose and not the mat file sets the scale: the sample's
    right mat file was called wrong ("the cards measure 6% larger", the shipped models).
    No card_scale there, no error. One marker without the camera's lens places no table at
    all (it put cards centimetres off, and a 12 MP photo read that way gave 6 of 8 cards
    the wrong id with exit 0): not calibrated, and said why."""
    first = FRAMES[0]
    markers = json.loads(first.with_suffix(".json").read_text())["markers"]
    for hidden, seen in ((("1", "2"), [0, 3]), (("1", "2", "3"), [0])):
        image = cv2.imread(str(first))
        for k in hidden:
            corners = np.array(markers[k]["corners_px"], np.float64)
            c = corners.mean(axis=0)
            cv2.fillConvexPoly(image, (c + (corners - c) * 1.5).astype(np.int32),
                               (120, 150, 200))
        one = tmp_path / f"{len(seen)}-{first.name}"
        cv2.imwrite(str(one), image)
        code, out, err = _run(capsys, "--jsonl", str(one))
        rec = json.loads(out)
        assert "card_scale" not in rec.get("calibration", {}) and "cards measure" not in err
        if len(seen) == 2:
            assert rec["calibration"]["markers_seen"] == seen and len(rec["cards"]) >= 9
            assert code == 0, err
        else:
            assert rec["calibrated"] is False and rec["cards"] == []
            assert "one marker cannot place the table without the camera's lens" in rec["reason"]
            assert code == 1 and "no table found" in err


def test_a_camera_that_sees_the_table_coarsely_is_warned_of(capsys, shipped, tmp_path):
    """A 720p webcam framing the mat sees it at about 0.47 px a mm, where the pyramids are
    missed and misread far more often (whole tables 80 -> 60% on dev renders) with nothing
    said. The record gives the figure and observe warns, exit 0 (the record is read)."""
    first = FRAMES[0]
    code, out, err = _run(capsys, "--jsonl", str(first))
    sharp = json.loads(out)["calibration"]["px_per_mm"]
    assert 0.55 < sharp < 1.2 and "px a mm" not in err
    small = tmp_path / first.name
    image = cv2.imread(str(first))
    cv2.imwrite(str(small), cv2.resize(image, None, fx=0.4, fy=0.4,
                                       interpolation=cv2.INTER_AREA))
    code, out, err = _run(capsys, "--jsonl", str(small))
    rec = json.loads(out)
    assert rec["calibration"]["px_per_mm"] == pytest.approx(0.4 * sharp, abs=0.03)
    assert rec["calibration"]["px_per_mm"] < 0.5
    assert f"warning: {small}: the camera sees the table at" in err
    assert "bring the camera closer or raise its resolution" in err
    assert code == 0, err


@pytest.mark.parametrize("pair", [("--mat", "--no-mat"), ("--intrinsics", "--no-intrinsics"),
                                  ("--colors", "--no-colors")])
def test_a_file_and_its_no_option_together_are_refused(fake, capsys, tmp_path, pair):
    given = tmp_path / "some.json"
    given.write_text("{}")
    code, out, err = _run(capsys, pair[0], str(given), pair[1], str(FRAMES[0]))
    assert code == 2 and out == ""
    assert f"{pair[0]} and {pair[1]} contradict each other: give one" in err, err


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full here")
def test_a_stderr_that_refuses_writes_never_loses_the_records(tmp_path):
    """``observe ... 2>/dev/full``: the warning that cannot be written is dropped, not taken
    for a failing stdout: every record is still printed, and the exit code is the run's."""
    import subprocess
    import sys

    (tmp_path / "text.jpg").write_bytes(b"not a picture")
    code = ("import sys; from companion.cli import main; sys.exit(main(sys.argv[1:]))")
    args = [sys.executable, "-c", code, "observe", "--jsonl", str(tmp_path / "text.jpg"),
            str(FRAMES[0])]
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    with open("/dev/full", "w") as full:
        done = subprocess.run(args, stdout=subprocess.PIPE, stderr=full, env=env, timeout=120)
    lines = done.stdout.decode().splitlines()
    assert [json.loads(line)["image"] for line in lines] == [
        str(tmp_path / "text.jpg"), str(FRAMES[0])], lines
    assert done.returncode == 1


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_pipe_of_an_images_name_in_a_folder_is_named_not_passed_over(fake, capsys, tmp_path):
    """A folder's pipe named b.jpg was left out without a word, as if not there: it gets its
    line and record, as a pipe given by name does; a folder named *.jpg is still no image."""
    folder = tmp_path / "frames"
    folder.mkdir()
    shutil.copy(FRAMES[0], folder / FRAMES[0].name)
    os.mkfifo(folder / "b.jpg")
    (folder / "sub.jpg").mkdir()
    code, out, err = _run(capsys, "--jsonl", str(folder))
    assert code == 1
    records = [json.loads(line) for line in out.splitlines()]
    assert [Path(r["image"]).name for r in records] == [FRAMES[0].name, "b.jpg"]
    assert "not a regular file" in records[1]["reason"]
    assert f"error: {folder / 'b.jpg'}: not a regular file" in err


def test_a_name_that_is_not_utf8_is_named_alike_in_record_stderr_and_annotated_copy(
        fake, capsys, tmp_path):
    """caf\\xe9.jpg was caf\\ufffd.jpg in the record, caf\\udce9.jpg on stderr and caf.jpg as
    the annotated copy (the byte dropped): the odd byte is U+FFFD in all three."""
    folder = tmp_path / "latin"
    folder.mkdir()
    shutil.copy(FRAMES[0], os.fsdecode(bytes(folder) + b"/caf\xe9.jpg"))
    shutil.copy(FRAMES[0], os.fsdecode(bytes(folder) + b"/caf\xe8.jpg"))
    Path(os.fsdecode(bytes(folder) + b"/b\xe9d.jpg")).write_bytes(b"not a picture")
    seen = tmp_path / "seen"
    code, out, err = _run(capsys, "--jsonl", str(folder), "--annotate", str(seen))
    assert code == 1
    records = [json.loads(line) for line in out.splitlines()]
    assert [Path(r["image"]).name for r in records] == ["b\ufffdd.jpg", "caf\ufffd.jpg",
                                                         "caf\ufffd.jpg"]
    assert f"error: {folder}/b\ufffdd.jpg: not an image" in err, err
    assert "\\udc" not in err
    made = sorted(p.name for p in seen.iterdir())
    assert made == ["caf\ufffd.jpg", "latin-caf\ufffd.jpg"], made
    assert sorted(Path(r["annotated"]).name for r in records[1:]) == made
