"""``companion calibrate-camera``: the camera's focal length, principal point and lens
distortion from photos of a printed ChArUco board.

    companion calibrate-camera PHOTOS_OR_FOLDER... [--board 7x5] [--square-mm 30]
                               [--marker-mm 22] [--dictionary DICT_5X5_100] [--out camera.json]
    companion calibrate-camera --print-board board.png

The camera file goes to ``$XDG_CONFIG_HOME/arcana-companion/camera.json`` unless ``--out``
says otherwise; the table pipeline reads it from there (:mod:`calibration.intrinsics`).
Unreadable photos and photos without the board are skipped with a line naming them; fewer
than three usable views is an error (exit code 2).
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from companion.commands.argtypes import (check_output, json_with, print_dpi, ranged,
                                         user_path)

if TYPE_CHECKING:
    from calibration.intrinsics import BoardSpec

log = logging.getLogger(__name__)

# The defaults fit an A4 or Letter sheet with margins (7 x 5 squares of 30 mm = 210 x 150 mm).
DEFAULT_BOARD = "7x5"
PRINT_MARGIN_MM = 10.0


def _board_arg(text: str) -> tuple[int, int]:
    from calibration.intrinsics import IntrinsicsError, parse_board

    try:
        return parse_board(text)
    except IntrinsicsError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


#: a board square or marker larger than this (mm) makes a board no printer or table holds
MAX_SQUARE_MM = 300.0


_positive_mm = ranged(float, lambda v: 0 < v <= MAX_SQUARE_MM,
                      f"a positive length in mm up to {MAX_SQUARE_MM:g}")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from calibration.mat import BOARD_DICTIONARY, KNOWN_DICTIONARIES

    p = subparsers.add_parser(
        "calibrate-camera", help="measure the camera's lens from photos of a ChArUco board",
        description="Detect a printed ChArUco board in several photos taken with the table "
                    "camera (the board tilted and moved over the whole picture, 10 to 20 "
                    "photos) and save the camera matrix and lens distortion. The board's "
                    "markers come from another dictionary than the calibration mat's, so the "
                    "mat may stay in view (unless --dictionary names the mat's own, "
                    "DICT_4X4_50: then take the photos away from it).")
    p.add_argument("images", nargs="*", type=user_path, metavar="IMAGES",
                   help="photos of the board, or folders of them")
    p.add_argument("--board", type=_board_arg, default=DEFAULT_BOARD,
                   metavar="SQUARESxSQUARES",
                   help=f"squares across and down (default {DEFAULT_BOARD})")
    p.add_argument("--square-mm", type=_positive_mm, default=30.0,
                   help="side of a chessboard square as printed, mm (default 30)")
    p.add_argument("--marker-mm", type=_positive_mm, default=22.0,
                   help="side of a marker as printed, mm (default 22)")
    p.add_argument("--dictionary", choices=KNOWN_DICTIONARIES, default=BOARD_DICTIONARY,
                   metavar="DICT", help="ArUco dictionary of the board (default DICT_5X5_100, unlike the mat's)")
    p.add_argument("--out", type=user_path, default=None,
                   help="camera file to write (default $XDG_CONFIG_HOME/arcana-companion/"
                        "camera.json, i.e. ~/.config/arcana-companion/camera.json)")
    p.add_argument("--print-board", type=user_path, default=None, metavar="FILE.png",
                   help="write the board as an image to print at 100%% scale (and calibrate "
                        "too when photos are given)")
    p.add_argument("--dpi", type=print_dpi, default=300,
                   help="resolution of --print-board (default 300)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from calibration.intrinsics import (
        BoardSpec,
        IntrinsicsError,
        calibrate_images,
        default_camera_path,
        expand_images,
        lens_reach,
        save_intrinsics,
    )

    sx, sy = args.board
    board = BoardSpec(sx, sy, args.square_mm, args.marker_mm, args.dictionary)
    paths = expand_images(args.images) if args.images else []
    if args.print_board is not None:
        _write_board(board, args.print_board, args.dpi, paths)
    if not args.images:
        if args.print_board is not None:
            return 0
        raise IntrinsicsError("no photos given: pass photos of the board (files or a folder), "
                              "or --print-board FILE.png to make a board")
    out = args.out if args.out is not None else default_camera_path()
    replacing = check_output(out, "camera file", _is_camera_file, paths,
                             given=args.out is not None)
    unread: list[Path] = []

    def report(path: Path, why: str | None, corners: int, read: bool) -> None:
        if why is None:
            log.info("%s: %d board corners", path, corners)
        else:
            if not read:
                unread.append(path)
            print(f"skipped {path}: {why}", file=sys.stderr)

    cal = calibrate_images(paths, board, report)
    if replacing is not None:
        print(replacing, file=sys.stderr)
    save_intrinsics(out, cal.K, cal.dist, cal.image_size, rms_px=cal.rms_px, board=board,
                    views=len(cal.views))
    K, d = cal.K, cal.dist
    print(f"calibrated from {len(cal.views)} of {len(paths)} image(s) "
          f"({cal.image_size[0]}x{cal.image_size[1]}): "
          f"RMS reprojection error {cal.rms_px:.3f} px")
    print(f"fx {K[0, 0]:.1f}  fy {K[1, 1]:.1f}  cx {K[0, 2]:.1f}  cy {K[1, 2]:.1f} px;  "
          f"distortion {' '.join(f'{v:+.4f}' for v in d)}")
    worst = max(range(len(cal.views)), key=lambda i: cal.view_errors_px[i], default=None)
    if worst is not None and cal.view_errors_px[worst] > max(1.0, 2.5 * cal.rms_px):
        # one bad photo (motion blur, a curled print) drags the whole fit: name it
        print(f"note: {cal.views[worst]} fits worst ({cal.view_errors_px[worst]:.2f} px); "
              "consider leaving it out", file=sys.stderr)
    if cal.rms_px > 1.0:
        print("note: an RMS above 1 px usually means blurred photos, a board that is not flat, "
              "or --square-mm/--marker-mm not matching the print", file=sys.stderr)
    share, _ = lens_reach(cal.K, cal.dist, cal.image_size)
    if share < 1.0:
        # past the board's reach the fitted polynomial turns back: undistorted, those
        # corners of the picture fold over (the table seldom lies there)
        print(f"note: the lens model holds only {100 * share:.0f}% of the way from the image "
              "centre to its corners; photos with the board in the corners extend it",
              file=sys.stderr)
    if len(cal.views) < 8:
        print(f"note: {len(cal.views)} views is few; 10 to 20 photos covering the image corners "
              "give a steadier lens model", file=sys.stderr)
    print(f"wrote {out}")
    if unread:
        # calibrated from the rest, but a file given was not an image: the run says so
        print(f"error: {len(unread)} file(s) could not be read as images (named above)",
              file=sys.stderr)
        return 1
    return 0


#: the image types the board is written as (lossless: a JPEG's blur costs corner accuracy)
BOARD_SUFFIXES = (".png", ".tif", ".tiff", ".bmp")


#: the text a board image this command wrote carries (a PNG ``tEXt`` chunk), so that
#: writing it again is known to replace a board and not a photo
BOARD_TAG = b"Software\x00companion calibrate-camera --print-board"


def _write_board(board: BoardSpec, path: Path, dpi: int, photos: list[Path]) -> None:
    """The board as an image to print, at ``path``: never over one of the ``photos`` or a
    file that is not a board this command wrote."""
    import cv2

    from calibration.intrinsics import IntrinsicsError
    from calibration.mat_sheets import png_bytes
    from companion.core.files import atomic_file, refusal_words

    if path.is_dir():
        raise IntrinsicsError(f"cannot write board image {str(path)!r}: it is a folder; give a "
                              ".png file name")
    if path.suffix.lower() not in BOARD_SUFFIXES:
        # (OpenCV's own words for a .pdf name its source file, not the remedy)
        raise IntrinsicsError(f"cannot write board image {str(path)!r}: {path.suffix or 'no'} "
                              f"is not an image type it writes; give a .png file name")
    replacing = check_output(path, "board image",
                             lambda p: _is_board_image(p, board.dictionary), photos,
                             option="--print-board")
    img = board.image(dpi / 25.4, PRINT_MARGIN_MM)
    try:
        if path.suffix.lower() == ".png":
            # its resolution in the file (a viewer that assumed 72 or 96 dpi printed the
            # board two or three times too large), and the tag
            ok, data = True, png_bytes(img, dpi, BOARD_TAG)
        else:
            ok, buf = cv2.imencode(path.suffix.lower(), img)
            data = buf.tobytes() if ok else b""
        if ok:
            path.parent.mkdir(parents=True, exist_ok=True)
            with atomic_file(path, binary=True) as fh:
                fh.write(data)
    except (OSError, cv2.error) as exc:
        why = refusal_words(exc) if isinstance(exc, OSError) else str(exc)
        raise IntrinsicsError(f"cannot write board image {str(path)!r}: {why}") from None
    if not ok:
        raise IntrinsicsError(f"cannot write board image {str(path)!r} (use a .png file name)")
    if replacing is not None:
        print(replacing, file=sys.stderr)
    bw, bh = board.size_mm
    print(f"wrote {path} ({img.shape[1]}x{img.shape[0]} px at {dpi} dpi): print it at 100% "
          f"scale; the board is {bw:g} x {bh:g} mm, squares {board.square_mm:g} mm - measure "
          "them and pass --square-mm/--marker-mm if the printer scaled it")


def _is_board_image(path: Path, dictionary: str) -> bool:
    """A board image this command wrote: :data:`BOARD_TAG` near its start (a PNG), or (a
    TIFF or BMP, or a PNG of an older version) a picture of pure black and white holding
    markers of ``dictionary``, which no photo is."""
    import cv2
    import numpy as np

    from calibration.table import marker_ids
    from companion.core.files import carries_tag

    if carries_tag(path, BOARD_TAG, 256):
        return True
    image = cv2.imread(str(path), cv2.IMREAD_GRAYSCALE)
    if image is None or image.size == 0:
        return False
    pure = float(np.count_nonzero((image == 0) | (image == 255))) / image.size
    ids = marker_ids(image, dictionary) if pure > 0.95 else None
    return ids is not None and len(ids) >= 4


def _is_camera_file(path: Path) -> bool:
    """A camera file of any version or state (the program says to make a bad one again)."""
    return json_with(path, "K", "dist")
