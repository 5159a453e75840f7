"""``companion observe``: what the camera saw, as observation records (shared/spec/table.md).

    companion observe IMAGE... [--mat FILE | --no-mat] [--deck NAME|PATH] [--intrinsics FILE]
                      [--colors FILE] [--jsonl] [--annotate DIR] [--threads N]

Folders expand to their images (sorted; .jpg .jpeg .png .bmp .webp). One image prints one
pretty JSON object; several images (or ``--jsonl``) print one record per line, as each is
done. ``--annotate DIR`` also writes every image with what was seen drawn on it.

A bad image (missing, empty, truncated, not an image) or an image without the table in it
gets a line on stderr naming the file and the problem; the other images are still
processed, and the exit code is 1. A blurred image (the record's ``blurred``) gets a warning
line and counts as read. A bad mat, deck, camera file or model is a usage error:
exit code 2 before any image is read.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
import unicodedata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from companion.commands.argtypes import (
    add_camera_options,
    add_mat_options,
    camera_file,
    colour_profile,
    table_mat,
    thread_count,
    user_path,
)
from companion.core.files import atomic_file, carries_tag, record_text

if TYPE_CHECKING:
    from vision.synth.generate import Progress

log = logging.getLogger(__name__)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "observe", help="find the cards and pyramids in table photos (observation records)",
        description="Calibrate each image from the mat's markers, find and identify every "
                    "card and pyramid, and print the observation record (table millimetres) "
                    "of shared/spec/table.md. Images given together are taken as one camera's "
                    "frames, in order: a marker hidden in one is taken from the last "
                    "calibration while the markers seen still sit where it put them (a camera "
                    "that moved is calibrated afresh; --each-alone forgets every time). Exit "
                    "code 1 when an image could not be read, showed no table, or gave a record "
                    "not to be trusted (a mat file that is not the mat in the picture, a "
                    "picture with no colour); 2 for a bad mat, deck, camera file or model.")
    p.add_argument("images", nargs="+", type=user_path, metavar="IMAGE",
                   help="photos of the table, or folders of them")
    add_mat_options(p, "mat file (JSON: marker dictionary and size, play area; default: the "
                    "standard 900 x 650 mm mat)")
    p.add_argument("--deck", default=None, metavar="NAME|PATH",
                   help="card gallery: 'tarot' (default) or 'decktet' (shipped), a name "
                        "enrolled with 'companion enroll-deck' (or the folder it was enrolled "
                        "from), or a gallery file")
    add_camera_options(p)
    p.add_argument("--jsonl", action="store_true",
                   help="one record per line even for a single image")
    p.add_argument("--annotate", type=user_path, default=None, metavar="DIR",
                   help="write each image with what was seen drawn on it to DIR, as "
                        "NAME.jpg (NAME-annotated.jpg where DIR holds another photo of that "
                        "name: it is kept). A copy never replaces an image given: NAME.jpg "
                        "in the folder of NAME.jpg is refused; give another folder")
    p.add_argument("--threads", type=thread_count, default=2, metavar="N",
                   help="CPU threads for the pipeline and OpenCV (default 2: the pyramids beside "
                        "the cards, one thread each)")
    p.add_argument("--each-alone", action="store_true",
                   help="read each image as if it were the only one (photos from different "
                        "cameras or places): no calibration is carried from one to the next")
    p.set_defaults(func=run)


def _warn(text: str) -> None:
    """One line on stderr per problem: a control character (a newline in a file's name)
    is written escaped, so that a tool reading the lines stays in step; a byte of a name
    that is not UTF-8 is U+FFFD, as the record and the annotated copy's name have it
    (:func:`companion.core.files.record_text`), else escaped (a stream without Python's own
    escaping would fail on it)."""
    try:
        text = record_text(text)
    except UnicodeError:    # (a lone surrogate no file name gives)
        pass
    text = "".join(ascii(c)[1:-1] if unicodedata.category(c) in ("Cc", "Zl", "Zp", "Cs")
                   else c for c in text)
    if _bar is not None:
        _bar.clear()    # (not on the progress bar's line)
    print(f"companion observe: {text}", file=sys.stderr, flush=True)


#: the progress bar of the run under way, which a warning takes off its line first
_bar: Progress | None = None



#: the comment every annotated copy carries in its JPEG header: a file of the copy's name
#: without it is someone's photo, which a copy must not replace (a camera names every day's
#: first shot IMG_0001.jpg)
ANNOTATED_TAG = b"written by companion observe --annotate"


#: the longest file name most file systems take, in bytes
NAME_MAX = 255


def _named(base: str, tail: str) -> str:
    """``base + tail``, the base cut short where the whole would be longer than
    :data:`NAME_MAX` bytes (a photo's name of 250 characters, with "-annotated" added)."""
    room = NAME_MAX - len(tail.encode("utf-8"))
    # (a byte of the photo's name that is not UTF-8 is U+FFFD, as the record names the
    # photo: it was dropped, caf\xe9.jpg's copy named caf.jpg)
    cut = record_text(base).encode("utf-8", "surrogateescape")[:max(room, 1)]
    return cut.decode("utf-8", "ignore") + tail


def _annotated_name(path: Path, used: set[str], folder: Path | None = None) -> str:
    """``stem.jpg``, or with the parent folder's name (and a number) when two inputs share
    a stem; with ``stem-annotated.jpg`` (and a number) in place of a file in ``folder``
    that is not an annotated copy (:func:`_annotated_copy`). Cut short to a name the file
    system takes (:func:`_named`)."""
    def free(name: str) -> bool:
        if name in used:
            return False
        there = None if folder is None else folder / name
        return there is None or not there.exists() or _annotated_copy(there)

    stem = path.stem
    # (a photo given by its name alone, or as ../x.jpg: its folder's own name, not "" or
    # "..", which made "-x.jpg" or a hidden "..-x.jpg"; links are not followed)
    parent = Path(os.path.abspath(path)).parent.name or "image"
    name = _named(stem, ".jpg")
    if name in used:
        name = _named(f"{parent}-{stem}", ".jpg")
        k = 2
        while name in used:
            name = _named(f"{parent}-{stem}", f"-{k}.jpg")
            k += 1
    if not free(name):
        base = name.removesuffix(".jpg")
        name = _named(base, "-annotated.jpg")
        k = 2
        while not free(name):
            name = _named(base, f"-annotated-{k}.jpg")
            k += 1
    used.add(name)
    return name


def _annotated_copy(path: Path) -> bool:
    """Whether ``path`` is a file this command wrote (:data:`ANNOTATED_TAG` in its header)."""
    return carries_tag(path, ANNOTATED_TAG, 512)


def _tagged_jpeg(image: Any) -> bytes | None:
    """``image`` as JPEG bytes with :data:`ANNOTATED_TAG` as a comment segment after the
    start marker; None when it cannot be encoded."""
    import cv2

    ok, buf = cv2.imencode(".jpg", image)
    if not ok:
        return None
    data = buf.tobytes()
    comment = b"\xff\xfe" + (len(ANNOTATED_TAG) + 2).to_bytes(2, "big") + ANNOTATED_TAG
    return data[:2] + comment + data[2:]


def run(args: argparse.Namespace) -> int:
    import cv2

    from companion.core.errors import CompanionError
    from vision.pipeline import ImageError, TablePipeline, expand_images

    cv2.setNumThreads(args.threads)
    if getattr(args, "verbose", 0) < 2:
        # OpenCV's own warnings name no file; each problem gets its line from us instead
        cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_ERROR)
    mat = table_mat(args)
    intrinsics = camera_file(args)
    if intrinsics is not None and args.intrinsics is None:
        log.info("using the saved camera file %s", intrinsics)
    colors = colour_profile(args)
    if colors is not None and args.colors is None:
        log.info("using the saved colour profile %s", colors)

    if sys.stdout is None:
        # (started with its standard output closed: every record would vanish unsaid)
        raise CompanionError("standard output is closed: there is nowhere to print the "
                             "records")
    failed = 0
    paths: list[Path] = []
    for item in args.images:
        try:
            paths += expand_images([item])
        except ImageError as exc:
            _warn(f"error: {exc}")
            failed += 1
    drawn = _annotation_paths(args.annotate, paths) if args.annotate is not None else None

    # the heavy part (models, gallery) once, after the cheap checks
    pipeline = TablePipeline(mat=mat, deck=args.deck, intrinsics=intrinsics,
                             threads=args.threads, colors=colors)
    one = len(paths) == 1 and not args.jsonl and not failed
    bar = None
    if len(paths) > 1:
        from vision.synth.generate import Progress

        bar = Progress(len(paths), "observe")
    global _bar
    _bar = bar
    t0 = time.perf_counter()
    try:
        for k, path in enumerate(paths):
            if args.each_alone:
                pipeline.forget_calibration()
            record, ok = _observe_one(pipeline, path, None if drawn is None else drawn[k])
            failed += int(not ok)
            if not record.get("error"):     # (an unread image is said and counted already)
                failed += _say_of(path, record, intrinsics)
            if bar is not None:
                bar.clear()     # the record's line must not share the bar's
            try:
                print(json.dumps(record, indent=1) if one else json.dumps(record), flush=True)
            except BrokenPipeError:
                raise       # the reader has all it wanted (| head): the CLI ends quietly
            except OSError as exc:
                raise CompanionError(
                    f"cannot write the records to standard output ({exc.strerror or exc}): "
                    f"{k} of {len(paths)} written whole, the last one may be cut short"
                ) from None
            if bar is not None:
                bar.update(1)
    finally:
        _bar = None
        pipeline.close()
        if bar is not None:
            bar.close()
    log.info("observed %d image(s) in %.1f s, %d with problems", len(paths),
             time.perf_counter() - t0, failed)
    return 1 if failed else 0


def _say_of(path: Path, record: dict[str, Any], camera: Path | None = None) -> int:
    """Say on stderr what the record of an image that was read warns of; 1 when it failed
    (its record printed all the same): no table found in it, a mat file that is not the
    mat in the picture (every position off), or no colour to read the pyramids' by; else
    0 (a blurred picture is read, its pyramids the likeliest missed: a warning)."""
    from calibration.mat import calibration_scale_doubt
    from calibration.sharpness import blurred_picture, coarse_picture
    from calibration.table import lens_doubt, mat_fit_doubt

    failed = not record["calibrated"]
    if failed:
        _warn(f"{path}: no table found: {record.get('reason', '')}")
    elif (said := blurred_picture(record)) is not None:
        _warn(f"warning: {path}: {said}: pyramids may be missed or misread")
    if not failed and (coarse := coarse_picture(record)) is not None:
        _warn(f"warning: {path}: {coarse}")
    fit = record.get("calibration", {}).get("reprojection_mm")
    lens_wrong = None if camera is None else lens_doubt(record.get("calibration"),
                                                        f"the camera file {str(camera)!r}")
    if lens_wrong is not None:
        # (the markers fit the mat without the file: the file, not the mat, is wrong)
        _warn(f"error: {path}: {lens_wrong}")
        failed = True
    elif (badly := mat_fit_doubt(fit, None if camera is None else str(camera))) is not None:
        _warn(f"error: {path}: {badly}")
        failed = True
    doubt = calibration_scale_doubt(record.get("calibration"))
    if doubt is not None:
        _warn(f"error: {path}: {doubt}")
        failed = True
    if record.get("greyscale"):
        _warn(f"error: {path}: the picture has no colour (greyscale): the pyramids' "
              "colours cannot be told apart (the record's are guesses)")
        failed = True
    return int(failed)


def _unread(path: Path, why: str) -> dict[str, Any]:
    """The record of an image that could not be read or processed: every image given gets
    its line (a tool that pairs the inputs with the lines stays in step), saying so."""
    return {"image": record_text(str(path)), "calibrated": False, "cards": [], "pyramids": [],
            "reason": record_text(why.removeprefix(f"{path}: ")), "error": True}


def _annotation_paths(folder: Path, paths: list[Path]) -> list[Path]:
    """Where each image's annotated copy goes (made ``folder`` if need be). A copy never
    replaces an image given: ``observe . --annotate .`` would overwrite the photos."""
    from companion.core.errors import CompanionError

    from companion.core.files import check_folder

    check_folder(folder, "--annotate")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CompanionError(f"--annotate {str(folder)!r}: cannot make the folder "
                             f"({exc.strerror or exc})") from None
    # the same file, by device and inode: also IMG_1.JPG for IMG_1.jpg on a file system that
    # ignores case (a camera's card, macOS, Windows)
    given = {(st.st_dev, st.st_ino) for st in (_stat(p) for p in paths) if st is not None}
    plain: set[str] = set()
    for src in paths:
        dst = folder / _annotated_name(src, plain)
        st = _stat(dst)
        if st is not None and (st.st_dev, st.st_ino) in given:
            raise CompanionError(f"--annotate {str(folder)!r}: the annotated copy of {src} would "
                                 f"replace the image {dst}; give another folder")
    # another photo of the copy's name, not one given, is kept: the copy takes another name
    used: set[str] = set()
    return [folder / _annotated_name(p, used, folder) for p in paths]


def _stat(path: Path) -> os.stat_result | None:
    try:
        return path.stat()
    except OSError:
        return None


def _observe_one(pipeline: Any, path: Path, out: Path | None) -> tuple[dict[str, Any], bool]:
    """(the record of one image, whether all went well); what went wrong is said on stderr,
    and an image that could not be read or processed gets a record that says so
    (:func:`_unread`). ``out``: where its annotated copy goes (None: none)."""
    import cv2

    from companion.core.errors import CompanionError
    from vision.pipeline import read_image

    try:
        t0 = time.perf_counter()
        image = read_image(path)
        t_read = (time.perf_counter() - t0) * 1000
        record: dict[str, Any] = pipeline.observe(image, str(path))
        record["timings_ms"] = {"read": round(t_read, 1), **record["timings_ms"]}
    except CompanionError as exc:
        # a problem of this image with what the run was given (a camera file calibrated at
        # another size) does not name the image itself: among many, say which
        said = str(exc) if str(path) in str(exc) else f"{path}: {exc}"
        _warn(f"error: {said}")
        return _unread(path, str(exc)), False
    except Exception as exc:  # one bad frame never stops the rest
        log.debug("observing %s failed", path, exc_info=True)
        # one line: OpenCV's messages end in a newline, and the record's reason is read too
        why = f"could not be processed ({type(exc).__name__}: {' '.join(str(exc).split())})"
        _warn(f"error: {path}: {why}")
        return _unread(path, why), False
    if out is not None:
        from vision.annotate import annotate

        calib = pipeline.last_calibration
        to_px = None
        if calib is not None and calib.H is not None:
            def to_px(mm: Any, _c: Any = calib) -> Any:
                return pipeline.to_px(mm, _c)
        why = "it cannot be encoded"
        try:
            data = _tagged_jpeg(annotate(image, record, to_px))
            if data is not None:
                with atomic_file(out, binary=True) as fh:
                    fh.write(data)
        except cv2.error as exc:
            data = None
            log.debug("encoding failed: %s", exc)
        except OSError as exc:
            data, why = None, exc.strerror or str(exc)
        if data is None:
            # the record itself is fine: print it, but the run did not do all it was asked
            _warn(f"error: {path}: cannot write the annotated image {out} ({why})")
            return record, False
        record["annotated"] = record_text(str(out))
    return record, True
