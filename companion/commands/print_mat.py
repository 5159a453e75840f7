"""``companion print-mat``: the calibration mat's four corner markers as pages to print,
a page of instructions, and the mat file that says where the markers lie.

    companion print-mat FOLDER [--paper a4|letter] [--dpi 300]
                               [--width-mm 900] [--height-mm 650] [--marker-mm 60]

Writes ``FOLDER/marker-0.png`` to ``marker-3.png`` (one page each, :mod:`calibration.
mat_sheets`), ``FOLDER/instructions.png`` and ``FOLDER/mat.json``. Files of those names
that this command did not write are not replaced.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from companion.commands.argtypes import (check_output, json_with, print_dpi, ranged,
                                         user_path)

#: the mat file's and the instructions page's names in the folder
MAT_FILE = "mat.json"
INSTRUCTIONS = "instructions.png"

_length = ranged(float, lambda v: 0 < v <= 5000, "a positive length in mm up to 5000")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "print-mat", help="write the calibration mat's four markers as pages to print, their "
                          "instructions and the mat file",
        description="The mat is four ArUco markers, one at each corner of the play area; "
                    "the table between them is not printed. This writes one page for each "
                    "marker (PNG at the page's size, to print at 100%; each page lies "
                    "outside the play area, its marker in the corner toward the middle), a "
                    "page of instructions (where each goes, which way is north, a 100 mm bar "
                    "to check the print's scale), and the mat file (mat.json) for --mat. "
                    "The standard mat (900 x 650 mm between the centres, 60 mm markers) is "
                    "what every command assumes without "
                    "--mat. Laid out otherwise: measure, and run this again with "
                    "--width-mm/--height-mm (and --marker-mm if the printer scaled it).")
    p.add_argument("folder", type=user_path, metavar="FOLDER",
                   help="folder to write marker-0.png ... marker-3.png, instructions.png "
                        "and mat.json into")
    p.add_argument("--paper", choices=("a4", "letter"), default="a4",
                   help="page size (default a4)")
    p.add_argument("--dpi", type=print_dpi, default=300, help="resolution (default 300)")
    p.add_argument("--width-mm", type=_length, default=900.0,
                   help="east-west distance between the markers' centres, mm (default 900)")
    p.add_argument("--height-mm", type=_length, default=650.0,
                   help="north-south distance between the markers' centres, mm (default 650)")
    p.add_argument("--marker-mm", type=_length, default=60.0,
                   help="side of a marker's black square as printed, mm (default 60)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from calibration.mat import DEFAULT_MAT, MIN_MARKER_MM, Mat, MatError
    from calibration.mat_sheets import (
        CORNERS,
        SHEET_TAG,
        instructions_page,
        marker_reach_mm,
        marker_sheet,
        png_bytes,
    )
    from companion.core.errors import CompanionError
    from companion.core.files import atomic_file, carries_tag, check_folder

    folder: Path = args.folder.expanduser()
    w, h = args.width_mm, args.height_mm
    # (said with the options typed: Mat.from_dict names a mat file's fields)
    if args.marker_mm < MIN_MARKER_MM:
        raise CompanionError(f"--marker-mm {args.marker_mm:g}: a marker the camera can read "
                             f"is at least {MIN_MARKER_MM:g} mm")
    if args.marker_mm >= min(w, h):
        raise CompanionError(f"--marker-mm {args.marker_mm:g} must be smaller than the play "
                             f"area between the markers' centres (--width-mm {w:g}, "
                             f"--height-mm {h:g})")
    # the standard mat's piles, as far from the south-west marker, where they still fit
    below = h - DEFAULT_MAT.height_mm
    zones = {k: (x0, y0 + below, x1, y1 + below)
             for k, (x0, y0, x1, y1) in DEFAULT_MAT.zones.items() if x1 <= w and y0 + below >= 0}
    try:
        mat = Mat.from_dict(dict(DEFAULT_MAT.to_dict(), width_mm=w, height_mm=h,
                                 marker_size_mm=args.marker_mm,
                                 zones={k: list(r) for k, r in zones.items()}),
                            source="the mat asked for")
        reach = marker_reach_mm(mat)
        if min(w, h) < 2 * reach:
            # (two markers' white borders laid over each other: neither reads, and no play
            # area is left between them)
            raise CompanionError(
                f"--marker-mm {args.marker_mm:g} markers with their white border reach "
                f"{reach:g} mm into the play area from each corner: the pages of two corners "
                f"would lie over each other, the play area between the markers' centres "
                f"({w:g} x {h:g} mm) must be at least {2 * reach:g} mm each way; give a "
                "larger --width-mm/--height-mm or a smaller --marker-mm")
        pages = [marker_sheet(mat, k, args.paper, args.dpi) for k in sorted(CORNERS)]
        pages.append(instructions_page(mat, args.paper, args.dpi))
    except (MatError, ValueError) as exc:
        raise CompanionError(str(exc)) from None
    check_folder(folder)
    names = [folder / f"marker-{k}.png" for k in sorted(CORNERS)]
    names.append(folder / INSTRUCTIONS)
    mat_path = folder / MAT_FILE
    replacing = [check_output(path, "mat page", lambda p: carries_tag(p, SHEET_TAG, 256),
                              option="print-mat") for path in names]
    replacing.append(check_output(mat_path, "mat file",
                                  lambda p: json_with(p, "dictionary", "width_mm"),
                                  option="print-mat"))
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for path, page in zip(names, pages):
            with atomic_file(path, binary=True) as fh:
                fh.write(png_bytes(page, args.dpi, SHEET_TAG))
        with atomic_file(mat_path) as fh:
            fh.write(mat.to_json())
    except OSError as exc:
        raise CompanionError(f"cannot write the mat's pages in {str(folder)!r}: "
                             f"{exc.strerror or exc}") from None
    for said in replacing:
        if said is not None:
            print(said, file=sys.stderr)
    pw, ph = pages[0].shape[1], pages[0].shape[0]
    for path in names:
        print(f"wrote {path} ({pw}x{ph} px at {args.dpi} dpi, {args.paper.upper()})")
    print(f"wrote {mat_path}")
    print(f"Print the five pages at 100% (actual size) and check the 100 mm bar on "
          f"{INSTRUCTIONS}. Lay the four marker pages flat at the corners of the play area as "
          f"it shows, each marker's top to the north (the top of the camera's picture), each "
          f"page outside the play area, the markers' centres {w:g} mm apart east-west and "
          f"{h:g} mm north-south (both diagonals {math.hypot(w, h):.0f} mm). Then give "
          f"--mat {mat_path} to observe, run and calibrate-colors. Laid out at other "
          "distances: measure them and run print-mat again with --width-mm/--height-mm.")
    left = sorted(set(DEFAULT_MAT.zones) - set(zones))
    if left:
        print(f"note: the standard mat's {' and '.join(left)} pile zone(s) do not fit a "
              f"{w:g} x {h:g} mm play area and are left out of the mat file; without them "
              "the discard pile is not watched", file=sys.stderr)
    return 0
