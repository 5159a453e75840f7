"""``companion calibrate-colors``: teach the pyramid finder the players' own plastic.

    companion calibrate-colors --colors red,blue,green [--mat FILE] IMAGE_OR_CAMERA
                               [--zone X0,Y0,X1,Y1] [--out colors.json]

Each player puts one pyramid of their colour (any size, standing or lying) in the
calibration zone, apart from the others, west to east in the order ``--colors`` names them;
nothing else lies in the zone. The zone is the mat's zone ``colors`` when the mat file has
one, else the 400 x 240 mm middle of the mat (``--zone`` sets another, in table mm).
``IMAGE_OR_CAMERA`` is a photo from the table camera or a camera number (0, 1, ...), which
is read until the mat's markers are in sight.

The profile goes to ``$XDG_CONFIG_HOME/arcana-companion/colors.json`` unless ``--out`` says
otherwise; ``companion observe`` and the live view read it from there
(:mod:`vision.pyramids.profile` says what it holds and how it is used). The ten spec
colours work without it.
"""

from __future__ import annotations

import argparse
import logging
import math
import re
import sys
from pathlib import Path
from typing import Any

from companion.commands.argtypes import (add_intrinsics_options, camera_file, check_output,
                                         json_with, user_path)

log = logging.getLogger(__name__)

#: frames a camera is read for at most (about three seconds of a webcam) ...
CAMERA_TRIES = 90
#: ... of which the first few are passed over: a webcam's first frames come before its
#: exposure and white balance have settled, and a profile learned there is off
SETTLE_FRAMES = 10
#: a frame shows the mat when this many of its markers are read
MARKERS_IN_SIGHT = 3


def _zone_arg(text: str) -> tuple[float, float, float, float]:
    try:
        vals = tuple(float(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected X0,Y0,X1,Y1 in mm, got {text!r}") from None
    if len(vals) != 4 or not all(math.isfinite(v) for v in vals) or not (
            vals[0] < vals[2] and vals[1] < vals[3]):
        raise argparse.ArgumentTypeError(
            f"expected X0,Y0,X1,Y1 in mm with X0 < X1 and Y0 < Y1, got {text!r}")
    return vals[0], vals[1], vals[2], vals[3]


def _colors_arg(text: str) -> list[str]:
    from vision.pyramids.colors import COLORS

    names = [t.strip().lower() for t in text.split(",") if t.strip()]
    bad = [n for n in names if n not in COLORS]
    if not names or bad:
        raise argparse.ArgumentTypeError(
            f"unknown colour(s) {', '.join(bad) or text!r}: expected names from "
            f"{', '.join(COLORS)}, comma-separated")
    if len(set(names)) != len(names):
        raise argparse.ArgumentTypeError(f"a colour is named twice in {text!r}")
    return names


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "calibrate-colors", help="learn the players' pyramid colours under this light",
        description="Each player puts one pyramid of their colour in the calibration zone "
                    "(the mat's zone 'colors', else the middle of the mat), apart, west to "
                    "east in the order --colors names them, nothing else there; one photo "
                    "(or a camera) then gives a colour profile the pyramid finder uses, so "
                    "unusual plastic and lighting still classify. A pyramid that looks "
                    "another hue than its name is learned as named when the hues are "
                    "neighbours (teal for green, warned of two steps round the colour wheel: "
                    "green for blue; and of black where a hue is named, as dim plastic "
                    "looks black); one that looks a far hue (green named purple, red named "
                    "cyan), or a hue where white or clear is named (or the other way round), "
                    "or where black is named, is refused, and no profile is written.")
    p.add_argument("source", metavar="IMAGE_OR_CAMERA",
                   help="photo from the table camera, or a camera number (0, 1, ...)")
    p.add_argument("--colors", required=True, type=_colors_arg, metavar="C1,C2,...",
                   help="the shown pyramids' colours, west to east (e.g. red,blue,green)")
    p.add_argument("--mat", type=user_path, default=None, metavar="FILE",
                   help="mat file (default: the standard 900 x 650 mm mat)")
    p.add_argument("--zone", type=_zone_arg, default=None, metavar="X0,Y0,X1,Y1",
                   help="calibration zone in table mm (default: the mat's zone 'colors', "
                        "else the middle of the mat)")
    # a zone west or north of the mat starts with a minus: "--zone -100,0,400,240" was read
    # as an option, "expected one argument". A word of a minus and a digit is a value here
    # (no option of this command is one; argparse's own takes "-100" alone)
    p._negative_number_matcher = re.compile(r"-\.?\d")
    add_intrinsics_options(p)
    p.add_argument("--out", type=user_path, default=None,
                   help="profile file to write (default $XDG_CONFIG_HOME/arcana-companion/"
                        "colors.json, i.e. ~/.config/arcana-companion/colors.json)")
    p.set_defaults(func=run)


def _read_image(source: str, dictionary: str) -> tuple[Any, str]:
    """(the picture, its name) of a photo, or of a camera number: its first frame after
    :data:`SETTLE_FRAMES` that shows :data:`MARKERS_IN_SIGHT` of the mat's markers (of
    ``dictionary``), else its last frame, of which the calibration then says what it
    lacks."""
    import cv2

    from calibration.images import read_image
    from calibration.table import marker_ids
    from vision.pyramids.profile import ProfileError

    if source.isdigit() and not Path(source).exists():
        from companion.live.capture import camera_number

        # (OpenCV's own warnings of a camera it cannot open name no remedy: ours does)
        cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_ERROR)
        cap = cv2.VideoCapture(camera_number(source))
        last = None
        try:
            if not cap.isOpened():
                raise ProfileError(f"camera {source} cannot be opened")
            for k in range(CAMERA_TRIES):
                ok, frame = cap.read()
                if not ok or frame is None:
                    continue
                last = frame
                if k + 1 < SETTLE_FRAMES:
                    continue
                ids = marker_ids(cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY), dictionary)
                if ids is not None and len(set(ids.ravel().tolist()) & {0, 1, 2, 3}) >= \
                        MARKERS_IN_SIGHT:
                    return frame, f"camera {source}"
        finally:
            cap.release()
        if last is not None:
            return last, f"camera {source}"
        raise ProfileError(f"camera {source} gives no picture")
    path = user_path(source)
    if not path.exists():
        raise ProfileError(f"{source}: no such image file (or camera number)")
    return read_image(path), str(path)


def swapped_colours(named: list[str], seen: list[str]) -> list[str]:
    """The named colours that trade places with each other in what the camera saw: a
    pyramid named X that looks Y, where the one named Y looks X (or a longer ring of such):
    a profile learned so would read those players' pyramids as each other's. A pyramid that
    looks like another named colour one way only (orange plastic under a warm lamp reading
    red, beside a red one that reads red) is what the profile is for, and not named here."""
    looks = {n: s for n, s in zip(named, seen) if s != n and s in named}
    out: list[str] = []
    for start in looks:
        ring, c = [start], looks[start]
        while c in looks and c not in ring:
            ring.append(c)
            c = looks[c]
        if c == start and start not in out:
            out += [x for x in ring if x not in out]
    return out


#: the spec's hues in the order of the colour wheel (red next to purple): a pyramid named one
#: of them that the classifier calls another this many steps round is another colour, not
#: the same plastic under odd light ...
HUE_WHEEL = ("red", "orange", "yellow", "green", "cyan", "blue", "purple")
#: ... refused at this many steps (green named purple, red named cyan); warned of at one
#: step fewer (green named blue)
HUE_STEPS_REFUSED = 3


def hue_steps(named: str, seen: str) -> int:
    """How many steps apart two spec hues are round :data:`HUE_WHEEL`; 0 where either is
    not a hue (black, white, clear, none: their plastic is told by lightness, not hue)."""
    if named not in HUE_WHEEL or seen not in HUE_WHEEL:
        return 0
    d = abs(HUE_WHEEL.index(named) - HUE_WHEEL.index(seen))
    return min(d, len(HUE_WHEEL) - d)


def another_colour(named: str, seen: str) -> bool:
    """A pyramid named ``named`` that looks ``seen`` is another colour, not the same plastic
    under odd light: a hue :data:`HUE_STEPS_REFUSED` or more steps round the wheel, a hue
    where white or clear is named, or the other way round (on dim renders, 2 of 1060
    correctly named pyramids looked so: a yellow one white, a green one clear), or a hue
    where black is named (none of 150 black pyramids looked a hue on dim renders: seeds
    700-729, 800-829 and 1000-1019 at three exposures). A hue named where black is seen is
    let be: every hue's plastic in dim light can look black (9 correctly named of 313
    pyramids at the darkest exposure would be refused)."""
    light = ("white", "clear")
    return hue_steps(named, seen) >= HUE_STEPS_REFUSED or (
        named in light and seen in HUE_WHEEL) or (named in HUE_WHEEL and seen in light) or (
        named == "black" and seen in HUE_WHEEL)


def run(args: argparse.Namespace) -> int:
    from calibration.mat import load_mat
    from calibration.table import TableCalibrator, lens_doubt, mat_fit_doubt
    from vision.pyramids.find import PyramidFinder
    from vision.pyramids.profile import default_profile_path, measure_profile

    mat = load_mat(args.mat)
    intr = None
    camera = camera_file(args)
    out = args.out if args.out is not None else default_profile_path()
    source = Path(args.source)
    replacing = check_output(out, "colour profile", _is_profile,
                             [source] if source.exists() else [], given=args.out is not None)
    image, name = _read_image(args.source, mat.dictionary)
    from calibration.images import check_table_size, greyscale
    from vision.pyramids.profile import ProfileError

    # (a 1x1 placeholder was said to have no colour, or no markers: as observe says it)
    check_table_size(image, name)
    if greyscale(image):
        raise ProfileError(f"{name}: the picture has no colour (greyscale): no pyramid colour "
                           "can be learned from it; turn the camera's colour on")
    if camera is not None:
        from calibration.intrinsics import load_intrinsics

        intr = load_intrinsics(camera, (image.shape[1], image.shape[0]))
    calib = TableCalibrator(mat, intr).calibrate(image)
    doubt = None if camera is None else lens_doubt(calib.fit_fields(),
                                                   f"the camera file {str(camera)!r}")
    if doubt is not None:
        # (as observe says it: every position bent, the zone's pyramids looked for off
        # where they stand)
        raise ProfileError(f"{name}: {doubt}")
    badly = mat_fit_doubt(calib.reprojection_mm, None if camera is None else str(camera))
    if badly is not None:
        # (as observe says it: another mat's file, the zone looked for where it is not and
        # the table's colours learned; a tester's profile had red at Lab 177 174 153)
        raise ProfileError(f"{name}: {badly} No profile is written")
    finder = PyramidFinder(mat)
    profile, shown = measure_profile(finder, image, calib, args.colors, args.zone, name)
    # (the finder's reading where it found the pyramid: the first guess alone misread 91
    # of 1060 correctly named pyramids on dim renders, the finder 30)
    seen = [s.read or s.guess for s in shown]
    swapped = swapped_colours(args.colors, seen)
    if swapped:
        raise ProfileError(
            f"{name}: the pyramids look like {', '.join(seen)} west to east, "
            f"not {', '.join(args.colors)} as --colors names them: "
            f"{' and '.join(swapped)} would be swapped for every game after this. Put the "
            "pyramids down west to east in the order --colors names them, or name them in "
            "the order they lie (a colour that only looks like another, such as teal for "
            "green, is learned as named)")
    far = [(n, g) for n, g in zip(args.colors, seen) if another_colour(n, g)]
    if far:
        raise ProfileError(
            f"{name}: " + "; ".join(f"the pyramid named {n} looks {g}" for n, g in far)
            + ": that is another colour, not the same plastic under this light, and learned "
            "so it would be read as the wrong player's for every game after this. Name the "
            "pyramids by their colours, west to east, or show the right ones")
    for n, g in zip(args.colors, seen):
        # (a hue named where black is seen is let be, as dim plastic looks black; but the
        # black one named a hue, black not named, was learned without a word on stderr)
        if hue_steps(n, g) == HUE_STEPS_REFUSED - 1 or (n in HUE_WHEEL and g == "black"):
            print(f"companion calibrate-colors: warning: the pyramid named {n} looks {g}:"
                  f" is it {n}? (it is learned as {n})", file=sys.stderr)
    if replacing is not None:
        print(replacing, file=sys.stderr)
    profile.save(out)
    for c, s in zip(profile.colors, shown):
        L, a, b = c.lab_mean
        note = "" if s.guess == c.name else f" (looked {s.guess} before calibration)"
        print(f"{c.name}: at ({s.center_mm[0]:.0f}, {s.center_mm[1]:.0f}) mm, {c.pixels} "
              f"pixels, Lab {L:.0f} {a:.0f} {b:.0f}{note}")
    print(f"wrote {out}")
    return 0


def _is_profile(path: Path) -> bool:
    """A colour profile of any version or state (the program says to make a bad one
    again)."""
    return json_with(path, "colors")
