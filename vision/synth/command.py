"""``companion synth``: render synthetic overhead-camera scenes with exact ground truth.

    companion synth --out DIR --count N --seed S [--deck DIR] [--game zarcana|free|mixed]
                    [--hands 0.2] [--printing LOW-HIGH] [--width W --height H] [--jobs J]
                    [--mat FILE] [--export]
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from companion.commands.argtypes import positive_int, process_count, seed_arg, user_path

log = logging.getLogger(__name__)


def _fraction(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a number between 0 and 1, got {text!r}") from None
    if not 0.0 <= v <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a number between 0 and 1, got {text!r}")
    return v


def _card_size(text: str) -> tuple[float, float]:
    try:
        w, h = (float(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected WIDTHxHEIGHT in mm such as 70x120, "
                                         f"got {text!r}") from None
    return (w, h)


def _printing(text: str) -> tuple[float, float]:
    try:
        lo, hi = (float(v) for v in text.split("-"))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected LOW-HIGH such as 1.0-1.5, got {text!r}") from None
    return (lo, hi)


def register(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = subparsers.add_parser(
        "synth", help="render synthetic table scenes with exact ground truth",
        description="Render overhead-camera images of random table states, each with its "
                    "truth record (NNNNN.jpg + NNNNN.json), mat.json and a dataset card. "
                    "The same seed gives the same bytes.")
    p.add_argument("--out", required=True, type=user_path, help="output folder")
    p.add_argument("--count", type=positive_int, default=10, help="number of images (default 10)")
    p.add_argument("--seed", type=seed_arg, default=0, help="run seed (default 0)")
    p.add_argument("--deck", type=user_path, default=None,
                   help="deck folder (default: shared/decks/rws-tarot beside the repository, "
                        "or $ARCANA_SHARED/decks/rws-tarot)")
    p.add_argument("--card-size", type=_card_size, default=None, metavar="WxH",
                   help="card size in mm when the deck folder does not say (e.g. 70x120)")
    p.add_argument("--mat", type=user_path, default=None, help="mat file (default: the spec's mat)")
    p.add_argument("--game", choices=("zarcana", "free", "mixed", "crowded"),
                   default="zarcana",
                   help="layouts: Zarcana lattice, free rows (Arcanoid/Arcanum), a mix of "
                        "the two, or crowded late-game lattices (three pyramids on half the "
                        "cards)")
    p.add_argument("--light", choices=("ordinary", "lamp", "mixed"), default="ordinary",
                   help="lighting: everyday rooms (default), a dim or coloured lamp in every "
                        "image, or half and half")
    p.add_argument("--hands", type=_fraction, default=0.2,
                   help="share of images with hands over the table (default 0.2)")
    p.add_argument("--printing", type=_printing, default=None, metavar="LOW-HIGH",
                   help="card printing strength drawn per image from this range (default "
                        "0-1; the vision benchmark's unseen printings are 1.6-2.4)")
    p.add_argument("--pale", type=_fraction, default=0.0,
                   help="share of pyramids recoloured white or clear, for training the "
                        "readers of pale plastic (default 0: colours as drawn)")
    p.add_argument("--blur", type=_fraction, default=None,
                   help="share of images out of focus or shaken by camera motion, half "
                        "each, for training the readers of blurred frames (default: about "
                        "one in six, as drawn)")
    p.add_argument("--width", type=positive_int, default=None, help="image width (default random)")
    p.add_argument("--height", type=positive_int, default=None, help="image height")
    p.add_argument("--no-distortion", action="store_true", help="ideal pinhole lens")
    p.add_argument("--jobs", type=process_count, default=1, help="worker processes (default 1)")
    p.add_argument("--val", type=_fraction, default=0.1, help="validation share (default 0.1)")
    p.add_argument("--export", action="store_true",
                   help="also write training sets: YOLO OBB cards, YOLO pose pyramids, "
                        "card crops")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_run)


#: what a run writes in its folder besides NNNNN.jpg / NNNNN.json (and with ``--export``
#: :data:`vision.synth.export.EXPORT_FOLDERS`)
OWN_FILES = ("mat.json", "DATASET.md")

#: the longest side an image may be given (--width, --height): an 8K camera's
MAX_SIDE_PX = 8192


def _clear_out(out: Path) -> None:
    """Make ``out`` ready for a run: a new or empty folder as it is; an earlier run's folder
    (its DATASET.md there, or its mat.json for one stopped before its end) holding nothing
    else emptied of that run's files, so that the two never mix (12 old images beside 3 new
    ones under a DATASET.md saying 3); any other folder with files in it refused (a photo
    there could be written over)."""
    import re
    import shutil
    import sys

    from companion.core.files import check_folder
    from vision.synth.errors import SynthError
    from vision.synth.export import EXPORT_FOLDERS

    check_folder(out, "--out", SynthError)
    if not out.is_dir():
        return
    try:
        entries = sorted(out.iterdir())
    except OSError as exc:
        raise SynthError(f"--out {str(out)!r} cannot be read ({exc.strerror or exc})") from None
    if not entries:
        return
    numbered = re.compile(r"\d{5}\.(jpg|json)")
    own = [p for p in entries if (p.is_file() and (numbered.fullmatch(p.name)
                                                   or p.name in OWN_FILES))
           or (p.is_dir() and p.name in EXPORT_FOLDERS)]
    # (a run stopped before its end has written mat.json first and DATASET.md last)
    ran = (out / "DATASET.md").is_file() or (out / "mat.json").is_file()
    if not ran or len(own) < len(entries):
        others = [p.name for p in entries if p not in own]
        shown = ", ".join(others[:3]) + (" ..." if len(others) > 3 else "")
        raise SynthError(f"--out {str(out)!r} is not empty and not an earlier synth run's "
                         f"folder ({shown or 'no DATASET.md or mat.json'}): give a new or "
                         "empty folder")
    images = sum(1 for p in own if p.suffix == ".jpg")
    print(f"replacing the earlier run in {out} ({images} images)", file=sys.stderr)
    for p in own:
        if p.is_dir():
            shutil.rmtree(p)
        else:
            p.unlink()


def _run(args: argparse.Namespace) -> int:
    import sys

    from calibration.mat import load_mat
    from vision.synth.deck import load_deck
    from vision.synth.errors import SynthError
    from vision.synth.generate import Progress, SynthConfig, check_config, synthesize

    if (args.width is None) != (args.height is None):
        raise SynthError("give both --width and --height, or neither")
    if args.width is not None and (args.width < 160 or args.height < 120):
        raise SynthError(f"image size {args.width}x{args.height} is too small (min 160x120)")
    if args.width is not None and max(args.width, args.height) > MAX_SIDE_PX:
        # (100000x100000, 30 GB an image, was still rendering after two minutes)
        raise SynthError(f"image size {args.width}x{args.height} is too large (at most "
                         f"{MAX_SIDE_PX} pixels a side)")
    deck = load_deck(args.deck, card_size_mm=args.card_size)
    mat = load_mat(args.mat)
    size = None if args.width is None else (args.width, args.height)
    cfg = SynthConfig(out=args.out, count=args.count, seed=args.seed, deck=deck, mat=mat,
                      game=args.game, hands=args.hands, light=args.light, size=size,
                      distortion=not args.no_distortion, jobs=args.jobs,
                      val_fraction=args.val, printing=args.printing,
                      pale=args.pale, blur=args.blur)
    check_config(cfg)          # (a bad setting must not cost the earlier run its files)
    _clear_out(args.out)
    bar = Progress(args.count, "synth", force=not args.no_progress)
    if args.no_progress:
        bar.enabled = False
    summary = synthesize(cfg, bar.update)
    bar.close()
    if args.export:
        from vision.synth.export import export_all

        ebar = Progress(args.count, "export", force=not args.no_progress)
        if args.no_progress:
            ebar.enabled = False
        export_all(args.out, progress=ebar.update)
        ebar.close()
    print(f"wrote {summary['count']} images to {args.out} "
          f"({summary['per_second']:.2f} images/s, "
          f"{(summary['jpeg_bytes'] + summary['json_bytes']) / 1e6:.1f} MB)", file=sys.stdout)
    return 0
