"""Files written whole or not at all (companion.core.files): saved games, exports, camera
files, colour profiles and card galleries all go through it."""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pytest

from companion.core.files import atomic_file, write_text_atomic


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def test_writes_and_replaces(tmp_path):
    p = tmp_path / "game.json"
    write_text_atomic(p, "first\n")
    assert p.read_text(encoding="utf-8") == "first\n"
    write_text_atomic(p, "second, ünïcode\n")
    assert p.read_text(encoding="utf-8") == "second, ünïcode\n"
    assert _leftovers(tmp_path) == []


def test_an_error_midway_keeps_the_old_file(tmp_path):
    p = tmp_path / "game.json"
    p.write_text("the old game\n", encoding="utf-8")
    with pytest.raises(RuntimeError, match="disk full"):
        with atomic_file(p) as fh:
            fh.write("half of the new")
            raise RuntimeError("disk full")
    assert p.read_text(encoding="utf-8") == "the old game\n"
    assert _leftovers(tmp_path) == []


def test_a_failed_move_leaves_no_temporary_file(tmp_path, monkeypatch):
    p = tmp_path / "game.json"

    def refuse(src: str, dst: str) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(PermissionError):
        write_text_atomic(p, "new\n")
    assert not p.exists()
    assert _leftovers(tmp_path) == []


def test_binary_for_numpy_archives(tmp_path):
    p = tmp_path / "gallery.npz"
    with atomic_file(p, binary=True) as fh:
        np.savez_compressed(fh, a=np.arange(5))
    with np.load(p) as data:
        assert data["a"].tolist() == [0, 1, 2, 3, 4]


def test_a_missing_folder_is_the_callers_oserror(tmp_path):
    with pytest.raises(FileNotFoundError):
        write_text_atomic(tmp_path / "no" / "such" / "folder.json", "x")


def test_a_bare_file_name_writes_in_the_current_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_text_atomic(Path("here.txt"), "x")
    assert (tmp_path / "here.txt").read_text(encoding="utf-8") == "x"


def test_a_link_is_written_through_and_the_mode_kept(tmp_path):
    target = tmp_path / "real.txt"
    target.write_text("old\n", encoding="utf-8")
    target.chmod(0o640)
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    write_text_atomic(link, "new\n")
    assert link.is_symlink() and target.read_text(encoding="utf-8") == "new\n"
    assert target.stat().st_mode & 0o777 == 0o640
    # a new file gets the mode any new file gets (not mkstemp's 0600)
    fresh = tmp_path / "fresh.txt"
    write_text_atomic(fresh, "x\n")
    umask = os.umask(0o022)
    os.umask(umask)
    assert fresh.stat().st_mode & 0o777 == 0o666 & ~umask
    assert _leftovers(tmp_path) == []


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_pipe_is_written_to_not_replaced(tmp_path):
    import threading

    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(pipe.read_bytes()))
    reader.start()
    write_text_atomic(pipe, "through the pipe\n")
    reader.join(10)
    assert got == [b"through the pipe\n"]
    assert pipe.is_fifo() and _leftovers(tmp_path) == []


@pytest.mark.skipif(not Path("/dev/stdout").exists(), reason="no /dev/stdout here")
def test_dev_stdout_appends_to_what_stdout_is(tmp_path):
    import subprocess
    import sys

    log = tmp_path / "log.txt"
    log.write_text("earlier lines\n", encoding="utf-8")
    code = ("from pathlib import Path\nfrom companion.core.files import write_text_atomic\n"
            "write_text_atomic(Path('/dev/stdout'), 'the export\\n')\n")
    with open(log, "a", encoding="utf-8") as out:
        subprocess.run([sys.executable, "-c", code], stdout=out, check=True,
                       cwd=Path(__file__).resolve().parents[1])
    assert log.read_text(encoding="utf-8") == "earlier lines\nthe export\n"
    piped = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True,
                           text=True, cwd=Path(__file__).resolve().parents[1])
    assert piped.stdout == "the export\n"


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "utf-16", "utf-16-be", "utf-32"])
def test_a_json_file_an_editor_saved_with_a_byte_order_mark_is_read(tmp_path: Path,
                                                                    encoding: str) -> None:
    """Windows' Notepad saves UTF-8 with a BOM, PowerShell's > writes UTF-16."""
    from companion.core.files import read_json

    text = '{"width_mm": 900, "name": "tapis vert é"}'
    data = text.encode(encoding)
    if encoding == "utf-16-be":
        data = b"\xfe\xff" + data
    (tmp_path / "mat.json").write_bytes(data)
    assert read_json(tmp_path / "mat.json") == {"width_mm": 900, "name": "tapis vert é"}


@pytest.mark.parametrize("data, words", [
    (b'{"a": "\xe9"}', "is not UTF-8 text (byte 7: b'\\xe9'); save it as UTF-8"),
    (b'{"a": ', "is not valid JSON: Expecting value"),
    (b"[" * 100000, "is not valid JSON: nested too deeply"),
])
def test_a_file_that_is_not_json_text_says_why(tmp_path: Path, data: bytes, words: str) -> None:
    from companion.core.files import JsonTextError, read_json

    (tmp_path / "x.json").write_bytes(data)
    with pytest.raises(JsonTextError) as exc:
        read_json(tmp_path / "x.json")
    assert str(exc.value).startswith(words)


def test_a_file_given_to_the_wrong_option_is_said_to_be_of_its_kind(tmp_path: Path) -> None:
    """A colour profile given as --intrinsics said "missing field 'K'", a camera file as
    --mat "missing field 'dictionary'", a photo as a camera file "not UTF-8 text": each
    is now named for what it is."""
    import json

    from calibration.intrinsics import IntrinsicsError, read_camera_file
    from calibration.mat import MatError, load_mat
    from companion.core.files import file_kind
    from vision.pyramids.profile import ProfileError, load_profile

    camera = tmp_path / "camera.json"
    camera.write_text(json.dumps({"K": [[1, 0, 0], [0, 1, 0], [0, 0, 1]], "dist": [0] * 5,
                                  "image_size": [640, 480]}))
    colours = tmp_path / "colors.json"
    colours.write_text(json.dumps({"version": 1, "colors": {}}))
    mat = tmp_path / "mat.json"
    mat.write_text(json.dumps({"dictionary": "DICT_4X4_50", "marker_size_mm": 60,
                               "width_mm": 900, "height_mm": 650}))
    photo = tmp_path / "photo.jpg"
    photo.write_bytes(b"\xff\xd8\xff\xe0" + bytes(100))
    assert file_kind(camera) == "a camera file (from calibrate-camera)"
    assert file_kind(photo) == "an image (JPEG)" and file_kind(tmp_path / "none") is None
    with pytest.raises(IntrinsicsError, match="is a colour profile .*not a camera file: given "
                                              "to the wrong option"):
        read_camera_file(colours)
    with pytest.raises(IntrinsicsError, match=r"is an image \(JPEG\), not a camera file"):
        read_camera_file(photo)
    with pytest.raises(MatError, match="is a camera file .*not a mat file"):
        load_mat(camera)
    with pytest.raises(ProfileError, match="is a mat file, not a colour profile"):
        load_profile(mat)
    assert load_mat(mat).width_mm == 900


def test_a_json_file_that_is_a_folder_is_said_to_be_one(tmp_path: Path) -> None:
    """A camera.json, colors.json or mat.json made a folder said "cannot be read: Is a
    directory" (the system's words): each reader now names the path as a folder."""
    from calibration.intrinsics import IntrinsicsError, read_camera_file
    from calibration.mat import MatError, load_mat
    from companion.core.files import JsonTextError, read_json
    from vision.pyramids.profile import ProfileError, load_profile

    folder = tmp_path / "camera.json"
    folder.mkdir()
    with pytest.raises(JsonTextError, match="^is a folder, not a file$"):
        read_json(folder)
    with pytest.raises(IntrinsicsError) as camera:
        read_camera_file(folder)
    assert str(camera.value) == f"camera file {str(folder)!r} is a folder, not a file"
    with pytest.raises(ProfileError) as colours:
        load_profile(folder)
    assert str(colours.value) == f"colour profile {folder}: is a folder, not a file"
    with pytest.raises(MatError) as mat:
        load_mat(folder)
    assert str(mat.value) == f"mat file {str(folder)!r} is a folder, not a file"


@pytest.mark.parametrize("command", [
    ["observe", "{image}", "--intrinsics", "{folder}"],
    ["observe", "{image}", "--colors", "{folder}"],
    ["calibrate-colors", "{image}", "--colors", "red,blue,green", "--intrinsics", "{folder}"],
])
def test_a_camera_or_colour_file_given_as_a_folder_is_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]) -> None:
    from companion.cli import main

    folder = tmp_path / "settings.json"
    folder.mkdir()
    image = Path(__file__).resolve().parents[1] / "sample_images" / "zarcana" / "0000.jpg"
    argv = [a.format(image=image, folder=folder) for a in command]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"{folder}" in err and "is a folder, not a file" in err, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize("name, option", [("camera.json", "--intrinsics"),
                                          ("colors.json", "--colors")])
def test_a_saved_camera_or_colour_file_that_is_a_folder_is_said(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, option: str) -> None:
    """The saved file made a folder was passed over without a word (the table read as if
    the camera or the colours had never been calibrated)."""
    import os

    from companion.cli import main

    folder = Path(os.environ["XDG_CONFIG_HOME"]) / "arcana-companion" / name
    folder.mkdir(parents=True)
    image = Path(__file__).resolve().parents[1] / "sample_images" / "zarcana" / "0000.jpg"
    assert main(["observe", str(image)]) == 2
    err = capsys.readouterr().err
    assert err.strip() == (f"companion observe: error: the saved {name} {folder} is a folder, "
                           f"not a file: remove it, give {option} FILE, or read without it "
                           f"(--no-{option[2:]})")
    assert main(["observe", str(image), f"--no-{option[2:]}"]) == 0


def test_a_colour_profile_with_an_integer_too_long_names_no_class_of_ours(
        tmp_path: Path) -> None:
    """read_json gives an integer of 5000 digits as a placeholder: a reader that converts
    the field (``float(v)``, ``int(v)``) said "... not 'LongInteger'", a class of ours, in a
    user's error; it says the number is too long."""
    import json

    from vision.pyramids.profile import VERSION, ProfileError, load_profile

    colour = {"lab_mean": [50, 0, 0], "lab_cov": [[1, 0, 0], [0, 1, 0], [0, 0, 1]],
              "hist": {"3": 1.0}, "pixels": 5}
    text = json.dumps({"version": VERSION, "colors": {"red": colour}})
    for field, too_long in (('"pixels": 5', '"pixels": ' + "9" * 5000),
                            ('"lab_mean": [50, 0, 0]', '"lab_mean": [50, 0, ' + "9" * 5000 + "]")):
        path = tmp_path / "colors.json"
        path.write_text(text.replace(field, too_long))
        with pytest.raises(ProfileError) as err:
            load_profile(path)
        assert "LongInteger" not in str(err.value)
        assert "an integer of 5000 digits is too long to be a number" in str(err.value), err.value


#: a file or folder option of each command, named as a user may type it ("./" and "//"):
#: (the command line, what is made before it runs: "x.jpg" a junk file, "x/" a folder)
TYPED_PATHS = [
    (["play", "zarcana", "--load", "./odd//s.json"], ()),
    (["play", "zarcana", "--bots", "--quiet", "--record", "./odd//x.jpg"], ()),
    (["print-mat", "./odd//x.jpg"], ("x.jpg",)),
    (["calibrate-camera", "./odd//x.jpg"], ()),
    (["calibrate-camera", "--print-board", "./odd//x", "{image}"], ("x/",)),
    (["calibrate-camera", "--out", "./odd//x.jpg", "{image}"], ("x.jpg",)),
    (["enroll-deck", "./odd//deck"], ()),
    (["games", "--dir", "./odd//games"], ()),
    (["export", "./odd//g.db"], ()),
    (["export", "./odd//x.jpg"], ("x.jpg",)),
    (["replay", "./odd//g.db"], ()),
    (["observe", "./odd//x.jpg"], ()),
    (["observe", "{image}", "--mat", "./odd//m.json"], ()),
    (["observe", "{image}", "--intrinsics", "./odd//c.json"], ()),
    (["observe", "{image}", "--colors", "./odd//p.json"], ()),
    (["observe", "{image}", "--deck", "./odd//deck.npz"], ()),
    (["observe", "{image}", "--annotate", "./odd//x.jpg"], ("x.jpg",)),
    (["run", "--source", "./odd//x.mp4"], ()),
    (["run", "--source", "{image}", "--mat", "./odd//m.json"], ()),
    (["run", "--source", "{image}", "--intrinsics", "./odd//c.json"], ()),
    (["run", "--source", "{image}", "--colors", "./odd//p.json"], ()),
    (["calibrate-colors", "--colors", "red,blue", "./odd//x.jpg"], ("x.jpg",)),
    (["calibrate-colors", "--colors", "red,blue", "--mat", "./odd//m.json", "{image}"], ()),
    (["calibrate-colors", "--colors", "red,blue", "--intrinsics", "./odd//c.json", "{image}"],
     ()),
    (["demo", "--headless", "--frames", "./odd//frames"], ()),
    (["synth", "--out", "./odd//x.jpg"], ("x.jpg",)),
    (["synth", "--out", "out", "--mat", "./odd//m.json"], ()),
    (["synth", "--out", "out", "--deck", "./odd//deck"], ()),
]


def _option_of(command: list[str]) -> str:
    at = next(k for k, a in enumerate(command) if a.startswith("./odd//"))
    return f"{command[0]} {command[at - 1] if command[at - 1].startswith('--') else 'arg'}"


@pytest.mark.parametrize("command, made", TYPED_PATHS,
                         ids=[_option_of(c) + (" made" if m else "") for c, m in TYPED_PATHS])
def test_a_path_is_named_as_typed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str], command: list[str],
                                  made: tuple[str, ...]) -> None:
    """A message named ``odd/x.jpg`` for ``./odd//x.jpg`` (Path drops ``./`` and ``//``):
    the path the user typed is the one to look for."""
    from companion.cli import main

    if command[0] == "run":     # (its window is checked for before its files)
        pytest.importorskip("PySide6")
        monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "odd").mkdir()
    for name in made:
        if name.endswith("/"):
            (tmp_path / "odd" / name).mkdir()
        else:
            (tmp_path / "odd" / name).write_text("junk\n", encoding="utf-8")
    image = Path(__file__).resolve().parents[1] / "sample_images" / "zarcana" / "0000.jpg"
    argv = [a.format(image=image) for a in command]
    typed = next(a for a in argv if a.startswith("./odd//"))
    assert main(argv) != 0
    err = capsys.readouterr().err
    assert typed in err, err
    assert "Traceback" not in err


def test_a_typed_path_is_the_same_path() -> None:
    """given_path keeps the spelling for messages, not another file: a trailing separator
    is left out (the system would take ``x.jpg/`` for a folder), and a worker process
    (the pyramid finder's) gets it as typed."""
    import pickle

    from companion.core.files import given_path

    for typed, shown in (("./odd//x.jpg", "./odd//x.jpg"), ("photos/", "photos"),
                         ("a/./", "a"), ("/", "/"), ("", ".")):
        path = given_path(typed)
        assert (str(path), os.fspath(path)) == (shown, shown)
        assert path == Path(typed)
    kept = pickle.loads(pickle.dumps(given_path("./odd//x.jpg")))
    assert str(kept) == "./odd//x.jpg" and kept == Path("odd/x.jpg")
    assert str(given_path("./odd//x.jpg").parent) == "./odd"
    assert given_path("./odd//x.jpg").parent == Path("odd")


@pytest.mark.parametrize("typed, made", [
    ("./odd//no/where/", "./odd//no/where/mat.json"), ("/", "/mat.json"), ("a/./", "a/mat.json"),
    (".", "./mat.json"), ("x", "x/mat.json")])
def test_a_file_in_a_typed_folder_keeps_its_spelling(typed: str, made: str) -> None:
    """A file or a folder made from a typed path is spelt as typed as far as it goes (Path
    said ``odd/no/where/mat.json`` of ``./odd//no/where/``), and is the same path."""
    from companion.core.files import given_path

    folder = given_path(typed)
    assert (str(folder / "mat.json"), folder / "mat.json") == (made, Path(typed) / "mat.json")
    assert str(folder.joinpath("a", "b")) == str(folder / "a" / "b")
    assert str((folder / "mat.json").parent) == str(folder)
    assert str(folder / "/elsewhere") == "/elsewhere"      # (a path of its own)
    assert str(given_path("x.jpg").parent) == "."


def test_paths_the_commands_make_are_named_as_typed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """print-mat's "wrote", play --save's missing folder and the demo's game.json in its
    --frames folder named the file made from the typed folder as Path spells it
    (``odd/no/where/mat.json`` for ``./odd//no/where/``)."""
    from companion.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "odd" / "frames").mkdir(parents=True)
    (tmp_path / "odd" / "frames" / "game.json").write_text("{}", encoding="utf-8")
    assert main(["print-mat", "./odd//no/where/"]) == 0
    out = capsys.readouterr().out
    assert "wrote ./odd//no/where/mat.json\n" in out and "--mat ./odd//no/where/mat.json " in out
    assert "wrote ./odd//no/where/marker-0.png " in out
    assert main(["play", "zarcana", "--bots", "--quiet", "--save", "./odd//none/s.json"]) != 0
    assert "the folder './odd//none' does not exist" in capsys.readouterr().err
    assert main(["demo", "--headless", "--observations", "truth",
                 "--frames", "./odd//frames"]) != 0
    assert "error: ./odd//frames/game.json: not a sample game's script" in \
        capsys.readouterr().err


@pytest.mark.parametrize("typed, name, suffix", [
    ("./odd//x.jpg", "./odd//y.png", "./odd//x.json"), ("x.jpg", "y.png", "x.json"),
    ("./x.jpg", "./y.png", "./x.json"), ("/a//b/x.jpg", "/a//b/y.png", "/a//b/x.json"),
    ("odd//x", "odd//y.png", "odd//x.json")])
def test_a_renamed_typed_path_keeps_its_spelling(typed: str, name: str, suffix: str) -> None:
    """with_name, with_stem and with_suffix spelt the path as Path does (``odd/y.png`` of
    ``./odd//x.jpg``), where ``/``, joinpath and parent keep the typed spelling; and each
    is still the same path as Path's."""
    from companion.core.files import given_path

    path = given_path(typed)
    assert (str(path.with_name("y.png")), path.with_name("y.png")) == (
        name, Path(typed).with_name("y.png"))
    assert (str(path.with_suffix(".json")), path.with_suffix(".json")) == (
        suffix, Path(typed).with_suffix(".json"))
    assert str(path.with_stem("y")) == str(path.with_name("y" + Path(typed).suffix))
    with pytest.raises(ValueError):
        given_path("./odd//").with_name("a/b")


def test_a_file_where_the_output_folder_must_be_is_named(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--out notes.txt/camera.json``: making the folder met a file, and the message was
    mkdir's "[Errno 17] File exists: 'notes.txt'" (the board image) or "File exists" (the
    camera file, the colour profile), which sends the user looking for the file they meant
    to write. Each names the file in the way now."""
    from calibration.intrinsics import IntrinsicsError, save_intrinsics
    from companion.cli import main
    from vision.pyramids.profile import ColorProfile, ColorSample, ProfileError

    notes = tmp_path / "notes.txt"
    notes.write_text("x", encoding="utf-8")
    in_the_way = f"{str(notes)!r} is a file, not a folder"
    assert main(["calibrate-camera", "--print-board", str(notes / "board.png")]) == 2
    err = capsys.readouterr().err
    assert in_the_way in err and "Errno" not in err, err
    K = np.array([[1000.0, 0, 640], [0, 1000.0, 360], [0, 0, 1]])
    with pytest.raises(IntrinsicsError, match=re.escape(in_the_way)):
        save_intrinsics(notes / "camera.json", K, np.zeros(5), (1280, 720))
    eye = ((25.0, 0.0, 0.0), (0.0, 25.0, 0.0), (0.0, 0.0, 25.0))
    profile = ColorProfile((ColorSample("red", (50.0, 10.0, -5.0), eye, {}, 100),))
    with pytest.raises(ProfileError, match=re.escape(in_the_way)):
        profile.save(notes / "colors.json")


@pytest.mark.parametrize("args, option", [
    (["observe", "{image}", "--annotate", "{out}"], "--annotate"),
    (["print-mat", "{out}"], ""),
    (["demo", "--headless", "--out", "{out}"], "--out"),
    (["synth", "--out", "{out}"], "--out"),
    (["play", "zarcana", "--bots", "--save", "{out}/game.json"], "--save"),
    (["games", "--dir", "{out}"], "")])
@pytest.mark.parametrize("below", [False, True])
def test_an_output_folder_given_as_a_file_is_said_in_the_same_words_by_every_command(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str],
        option: str, below: bool) -> None:
    """A file named where a command's output folder goes (``--out notes.txt``) was said in
    words of each command's own ("is a file; give a folder", "--out notes.txt: is a file;
    give a working folder", "the folder 'notes.txt' is a file"), and a folder below such a
    file (``--out notes.txt/out``) as mkdir's "Not a directory", of no name. Every command
    says the same: the option, the folder, and the file in the way."""
    from companion.cli import main
    from companion.core.files import not_a_folder

    notes = tmp_path / "notes.txt"
    notes.write_text("x", encoding="utf-8")
    out = notes / "out" if below else notes
    image = Path(__file__).parent.parent / "sample_images" / "zarcana" / "0000.jpg"
    code = main([a.format(out=out, image=image) for a in args])
    err = capsys.readouterr().err
    if args[0] == "play":       # (the file it saves named first)
        want = f"--save {str(out / 'game.json')!r}: {not_a_folder(notes)}"
    else:
        named = f"{option} " if option else ""
        want = (f"{named}{str(out)!r}: {not_a_folder(notes)}" if below
                else f"{named}{not_a_folder(notes)}")
    assert code == 2 and f"error: {want}" in err and "Errno" not in err, err
    assert not_a_folder(notes) == f"{str(notes)!r} is a file, not a folder"
    assert notes.read_text(encoding="utf-8") == "x"


def test_a_commands_folder_check_raises_its_own_error_in_the_shared_words(
        tmp_path: Path) -> None:
    """check_folder, which observe, print-mat, demo, synth and train call before making
    their output folder: the command's own error class (train's untested through the
    command line where the train extra is missing), with folder_problem's words; nothing
    for a folder that can be made."""
    from companion.commands.train import TrainError
    from companion.core.errors import CompanionError
    from companion.core.files import check_folder, folder_problem

    notes = tmp_path / "notes.txt"
    notes.write_text("x", encoding="utf-8")
    for out in (notes, notes / "out"):
        with pytest.raises(TrainError) as caught:
            check_folder(out, "--out", TrainError)
        assert str(caught.value) == folder_problem(out, "--out")
    with pytest.raises(CompanionError) as plain:
        check_folder(notes)
    assert type(plain.value) is CompanionError and str(plain.value) == folder_problem(notes)
    check_folder(tmp_path / "new" / "out", "--out", TrainError)
    assert not (tmp_path / "new").exists()
