"""``companion train cards``: render scenes, train the card detector, export ONNX;
``companion train card-net``: train a deck's card identity network (vision/cards/train_net.py).

Needs the ``train`` extra (ultralytics, and the torch it brings); never run in CI. Everything is offline: the model
starts from its YAML and nothing is downloaded.
"""

from __future__ import annotations

import argparse
import logging
import re
from pathlib import Path

from companion.commands.argtypes import (count_arg, positive_float, positive_int, process_count,
                                         seed_arg, share_arg, thread_count, user_path)
from companion.core.errors import CompanionError
from companion.core.files import check_folder
from vision.train_extra import MODEL_PACKAGES

log = logging.getLogger(__name__)


class TrainError(CompanionError, RuntimeError):
    """Training cannot start (missing extra, bad folder)."""


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("train", help="train a model on rendered scenes (needs the train extra)",
                       description="Render training scenes, train a model (the card detector, "
                       "the card identity network and the pyramid patch classifiers with "
                       "ultralytics, the other networks "
                       "with torch alone) and export it to ONNX for the runtime. Needs "
                       "'pip install -e .[train]'; nothing is downloaded.")
    p.add_argument("model", choices=list(MODEL_PACKAGES),
                   help="which model: cards = the card detector, card-net = a deck's card "
                        "identity network, pyramids = the pyramid patch classifiers (colour; "
                        "pips and pose), pyramid-heat = the pyramid heat map, pyramid-verify "
                        "= the pyramid finder's second opinion on the candidates it doubts, "
                        "pyramid-size = the pyramid size reader, pyramid-white-clear = the "
                        "reader telling white pyramids from clear ones, pyramid-point = the "
                        "reader of a lying pyramid's apex, pyramid-color-read = the reader of a "
                        "found pyramid's colour (these four on a closer patch)")
    p.add_argument("--out", required=True, type=user_path, help="working folder (data, runs, ONNX)")
    p.add_argument("--train-count", type=positive_int, default=1300,
                   help="rendered training scenes (default 1300)")
    p.add_argument("--val-count", type=positive_int, default=120,
                   help="rendered validation scenes (default 120)")
    p.add_argument("--seed", type=seed_arg, default=None,
                   help="cards: first render seed, validation uses seed + 2 (default 1000); "
                        "card-net: the crops' seed (default 11); the pyramid networks: "
                        "the training's seed (default 0)")
    p.add_argument("--decktet-share", type=share_arg, default=0.15,
                   help="share of training scenes dealt with the Decktet (default 0.15)")
    p.add_argument("--render", type=user_path, action="append", default=None,
                   help="use this already rendered synth folder for training instead of "
                        "rendering (repeatable); card-net: its cards are cut and added to "
                        "the simulated crops; pyramid-verify, pyramid-size, "
                        "pyramid-white-clear, pyramid-point, pyramid-color-read and "
                        "pyramid-heat need none once "
                        "--out holds "
                        "their cut samples from an earlier run")
    p.add_argument("--val-render", type=user_path, action="append", default=None,
                   help="already rendered validation folder (repeatable); card-net: "
                        "crops of its cards choose the best epoch")
    p.add_argument("--imgsz", type=positive_int, default=384, help="input size (default 384)")
    p.add_argument("--epochs", type=positive_int, default=None,
                   help="most epochs (default: cards 30, card-net 60)")
    p.add_argument("--hours", type=positive_float, default=None,
                   help="wall-clock budget in hours (overrides --epochs)")
    p.add_argument("--batch", type=positive_int, default=None,
                   help="batch size (default: cards 16, card-net 128, pyramids 256, "
                        "pyramid-heat 32, pyramid-verify, pyramid-size, pyramid-white-clear, "
                        "pyramid-point and pyramid-color-read 128)")
    p.add_argument("--device", type=_device_arg, default="cpu",
                   help="cpu, or a CUDA device such as 0")
    p.add_argument("--jobs", type=process_count, default=2, help="render worker processes")
    p.add_argument("--deck", type=user_path, default=None,
                   help="card-net: the deck folder, one image per card (default: the shared "
                        "Rider-Waite-Smith tarot)")
    p.add_argument("--per-card", type=positive_int, default=500,
                   help="card-net: simulated crops per card (default 500)")
    p.add_argument("--minutes", type=positive_float, default=None,
                   help="every model but cards (--hours): wall-clock training budget "
                        "(default: card-net 40, pyramid-verify 30, "
                        "pyramid-size 60, pyramid-white-clear 14, pyramid-point 40, "
                        "pyramid-color-read 40, the others "
                        "10 per model)")
    p.add_argument("--threads", type=thread_count, default=2,
                   help="every model but cards: torch threads (default 2)")
    p.add_argument("--workers", type=count_arg, default=None,
                   help="data-loader workers (default: cards 2, pyramids 0)")
    p.add_argument("--init", type=user_path, default=None,
                   help="go on from earlier weights instead of starting afresh: cards, a "
                        "best.pt or an exported detector (models/cards-obb.onnx: its "
                        "weights are rebuilt into a checkpoint); pyramid-heat, a best.pt; "
                        "pyramid-verify, pyramid-size, "
                        "pyramid-white-clear, pyramid-point and pyramid-color-read, the "
                        "exported file (models/pyramids-verify.onnx, ...; pyramid-point and "
                        "pyramid-color-read may start from another reader's file: its "
                        "convolutions, a new last layer); card-net, "
                        "a card-net-best.pt; pyramids, a "
                        "folder holding color-best.pt and/or shape-best.pt, or an earlier "
                        "'train pyramids --out' folder")
    p.add_argument("--lr0", type=positive_float, default=None,
                   help="initial learning rate (default: cards, ultralytics' own choice "
                        "of optimiser and rate, AdamW at this rate when given; card-net "
                        "0.004, the pyramid models 0.003; with --init, cards AdamW at "
                        "0.0005, card-net and the pyramid models 0.001)")
    # vision.pyramids.train_verify.CANDIDATES, written out for the same reason as --only's
    p.add_argument("--candidates", choices=["all", "doubtful"], default="all",
                   help="pyramid-verify: the candidates cut for it: every one the finder "
                        "asks it about (default), or the doubtful ones alone (what its "
                        "versions before 2026-11-26 learned from)")
    p.add_argument("--samples", type=user_path, action="append", default=None,
                   help="pyramid-verify: an earlier run's cut samples.npz to train on as well "
                        "(repeatable; each keeps its own validation scenes)")
    p.add_argument("--max-none", default="45000,4000",
                   help="pyramids: 'none' patches kept, TRAIN,VAL (default %(default)s)")
    # the names of vision.pyramids.train.TASKS, written out: importing it here would load
    # OpenCV on every start of the CLI
    p.add_argument("--only", choices=["color", "shape"], default=None,
                   help="pyramids: train this patch classifier alone (default: both)")
    p.add_argument("--width", type=positive_int, default=48,
                   help="pyramid-heat: channels of the dilated blocks (default 48)")
    # vision.pyramids.heat.HEAT_PPM, written out for the same reason as --only's choices
    p.add_argument("--ppm", type=positive_float, default=0.5,
                   help="pyramid-heat: the view's resolution the map sees, px per mm of "
                        "table (default 0.5; 1.0 sees finer edges for a few ms more a frame)")
    # the cutting, epochs and exports are logged at info: shown without -v
    p.set_defaults(func=run, log_level_floor=1)


def _device_arg(text: str) -> str:
    """``cpu``, or a CUDA device: a number, numbers with commas, ``cuda`` or ``cuda:N``."""
    t = text.strip().lower()
    if t == "cpu" or t == "cuda" or re.fullmatch(r"(cuda:)?\d+(,\d+)*", t):
        return t
    raise argparse.ArgumentTypeError(f"expected cpu or a CUDA device such as 0, got {text!r}")


def _render(out: Path, count: int, seed: int, deck: Path | None, jobs: int) -> Path:
    from vision.synth.deck import load_deck
    from vision.synth.generate import Progress, SynthConfig, synthesize

    if (out / "mat.json").is_file() and len(list(out.glob("*.jpg"))) >= count:
        log.info("reusing %s", out)
        return out
    bar = Progress(count, f"render {out.name}")
    synthesize(SynthConfig(out=out, count=count, seed=seed, game="mixed", jobs=jobs,
                           deck=load_deck(deck) if deck else None), bar.update)
    bar.close()
    return out


def run(args: argparse.Namespace) -> int:
    from vision.train_extra import train_extra_problem

    problem = train_extra_problem(MODEL_PACKAGES[args.model])
    if problem is not None:
        # every package the model needs, now: a missing onnx once showed only at the
        # export, after the whole training budget
        raise TrainError(problem)
    from vision.detection.train import CardTrainConfig, build_dataset, train_card_detector
    from vision.synth.deck import default_deck_dir
    from vision.synth.generate import Progress

    # a weights file (a folder for pyramids, checked there), the folders given and the
    # device are named now, not after the minutes of rendering or cutting that come first
    if args.init is not None and args.model != "pyramids" and not Path(args.init).is_file():
        raise TrainError(f"--init {args.init}: no such weights file")
    check_folder(args.out, "--out", TrainError)
    _check_rendered([*(args.render or []), *(args.val_render or [])])
    if args.device != "cpu":
        import torch

        if not torch.cuda.is_available():
            raise TrainError(f"--device {args.device}: torch sees no CUDA GPU here; train "
                             "with --device cpu")
    if args.model == "card-net":
        return _card_net(args)
    if args.model in ("pyramids", "pyramid-heat"):
        return _pyramids(args)
    if args.model == "pyramid-verify":
        return _pyramid_verify(args)
    if args.model in ("pyramid-size", "pyramid-white-clear", "pyramid-point",
                      "pyramid-color-read"):
        return _pyramid_size(args)
    args.seed = 1000 if args.seed is None else args.seed
    args.epochs = args.epochs or 30
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    train_sets = list(args.render or [])
    val_sets = list(args.val_render or [])
    if not train_sets:
        n_dt = int(round(args.train_count * args.decktet_share))
        decktet = default_deck_dir("decktet")
        train_sets.append(_render(out / "render-train", args.train_count - n_dt, args.seed,
                                  None, args.jobs))
        if n_dt and decktet.is_dir():
            train_sets.append(_render(out / "render-train-decktet", n_dt, args.seed + 1,
                                      decktet, args.jobs))
    if not val_sets:
        val_sets.append(_render(out / "render-val", args.val_count, args.seed + 2, None,
                                args.jobs))
    _check_rendered(train_sets + val_sets)
    cfg = CardTrainConfig(out=out, imgsz=args.imgsz, epochs=args.epochs, hours=args.hours,
                          batch=args.batch or 16, train_sets=train_sets, val_sets=val_sets,
                          device=str(args.device), seed=args.seed, init=args.init,
                          lr0=args.lr0, workers=2 if args.workers is None else args.workers)
    total = sum(len(list(f.glob("*.jpg"))) for f in train_sets + val_sets)
    bar = Progress(total, "rectify")
    data_yaml = build_dataset(cfg, bar.update)
    bar.close()
    figures = train_card_detector(cfg, data_yaml)
    print(f"card detector: {out / 'cards-obb.onnx'}  mAP50 {figures['mAP50']:.3f}  "
          f"precision {figures['precision']:.3f}  recall {figures['recall']:.3f}  "
          f"({figures['train_seconds']} s)")
    return 0


def _card_net(args: argparse.Namespace) -> int:
    from vision.cards.train_net import train
    from vision.synth.deck import default_deck_dir, load_deck

    deck = Path(args.deck) if args.deck else default_deck_dir("rws-tarot")
    deck_name = load_deck(deck).name  # a bad folder is named now, not after minutes of crops
    val_folders = list(args.val_render or [])
    _check_rendered([*(args.render or []), *val_folders])
    seed = 11 if args.seed is None else args.seed
    rendered_val = None
    if val_folders:
        # rendered tables apart choose the best epoch: the simulated validation crops
        # saturate within a few epochs and say little about a camera's view of a table
        from vision.cards.train_net import render_crops

        rendered_val = render_crops(val_folders, deck_name, seed + 1, per_card=1)
        log.info("card-net: %d validation crops of %d rendered folder(s)",
                 len(rendered_val[1]), len(val_folders))
    figures = train(deck, args.out, per_card=args.per_card,
                    minutes=40.0 if args.minutes is None else args.minutes,
                    epochs=args.epochs or 60, seed=seed,
                    jobs=args.jobs, threads=args.threads, batch=args.batch or 128,
                    render_dirs=list(args.render or []), init=args.init, lr=args.lr0,
                    device=_torch_device(args), rendered_val=rendered_val)
    print(f"card identity network: {figures['onnx']}  validation top-1 "
          f"{figures['best_val_top1']:.4f}  ({figures['train_seconds']} s)")
    return 0


def _render_folders(args: argparse.Namespace, what: str, cache: Path | None = None
                    ) -> list[Path]:
    """The ``--render`` folders, each checked. None given: refused, unless ``cache`` (the
    trainer's cut of earlier renders, in ``--out``) is there to train on again; the renders
    themselves (gigabytes) may then be gone."""
    folders = [Path(f) for f in args.render or []]
    if not folders and cache is not None and cache.is_file():
        log.info("no --render: training on the samples already cut in %s", cache)
        return []
    if not folders:
        kept = f", or keep {cache} from an earlier run" if cache is not None else ""
        raise TrainError(f"{what} trains on rendered scenes: give --render FOLDER (repeatable; "
                         f"make them with 'companion synth --game mixed'){kept}")
    _check_rendered(folders)
    return folders


def _check_rendered(folders: list[Path] | list[str]) -> None:
    """Refuse, by name, a folder that ``companion synth`` did not write."""
    for folder in folders:
        if not (Path(folder) / "mat.json").is_file():
            raise TrainError(f"{folder} is not a rendered synth folder (no mat.json)")


def _pyramid_init(folder: Path, tasks: tuple[str, ...]) -> dict[str, Path]:
    """The weights each classifier in ``tasks`` goes on from: ``{task}-best.pt`` in
    ``folder``, or where an earlier ``train pyramids --out folder`` left it."""
    init: dict[str, Path] = {}
    for task in tasks:
        for path in (folder / f"{task}-best.pt", folder / "runs" / task / "weights" / "best.pt"):
            if path.is_file():
                init[task] = path
                break
    if not init:
        wanted = " and/or ".join(f"{t}-best.pt" for t in tasks)
        raise TrainError(f"--init {folder}: expected {wanted} there, or an earlier "
                         "'train pyramids --out' folder")
    return init


def _torch_device(args: argparse.Namespace) -> str:
    """The torch device of ``--device`` for the trainers written in torch: ``cpu``, or
    ``cuda`` for any GPU number."""
    return "cuda" if str(args.device) not in ("cpu", "") else "cpu"


def _pyramid_verify(args: argparse.Namespace) -> int:
    """``pyramid-verify``: the finder's second opinion (cut from the rendered folders with the
    shipped heat map and colour classifier, then trained with torch on the CPU, or on the
    GPU with ``--device``)."""
    from vision.pyramids import quantize
    from vision.pyramids.train_verify import (MINUTES, PATCH_MM_TRAIN, SAMPLES_FILE,
                                              load_samples, prepare, train)

    cache = args.out / SAMPLES_FILE
    folders = _render_folders(args, "train pyramid-verify", cache)
    more = [Path(f) for f in args.samples or []]
    for extra in more:
        if not extra.is_file():
            raise TrainError(f"--samples {extra}: no such file")
    try:
        # only the span it trains on is cut: the other would double the cache for nothing
        if more:
            if not cache.is_file():
                prepare(folders, cache, args.jobs, args.candidates, (PATCH_MM_TRAIN,))
            # the cut is read back from its cache once, with the earlier ones
            data = load_samples([cache, *more], PATCH_MM_TRAIN)
        else:
            data = prepare(folders, cache, args.jobs, args.candidates, (PATCH_MM_TRAIN,))
        path, figures = train(data, args.out, MINUTES if args.minutes is None else args.minutes,
                              args.threads, seed=args.seed or 0, batch=args.batch or 128,
                              lr=args.lr0, device=_torch_device(args),
                              init=None if args.init is None else Path(args.init))
        # the finder runs the int8 copy (vision.pyramids.quantize), measured on this cut
        copy, agree = quantize.verifier_int8(path, cache)
    except ValueError as exc:
        raise TrainError(str(exc)) from None
    print(f"int8 copy (the file the finder runs): {copy}  against the float file: "
          + ", ".join(f"{k} {v:.4f}" for k, v in agree.items()))
    print(f"pyramid verifier: {path}  validation accuracy {figures['accuracy']:.4f}, "
          f"pyramids kept at 99% of none turned away {figures['kept_at_99']:.3f}  "
          f"({figures['train_seconds']} s)")
    return 0


def _pyramid_size(args: argparse.Namespace) -> int:
    """``pyramid-size``: the size reader; ``pyramid-white-clear``: the white-or-clear
    reader; ``pyramid-point``: the pointing reader; ``pyramid-color-read``: the colour
    reader (the same patches, cut from the rendered folders once into ``OUT/size.npz``,
    then trained with torch on the CPU, or on the GPU with ``--device``; ``--init`` goes on
    from the task's exported file, or for the pointing and colour readers from another
    reader's convolutions)."""
    from vision.pyramids.quantize import int8_copy
    from vision.pyramids.train_size import BATCH, MINUTES, SAMPLES_FILE, cut, train

    task = {"pyramid-white-clear": "white-clear", "pyramid-point": "pointing",
            "pyramid-color-read": "color"}.get(args.model, "size")
    cache = args.out / SAMPLES_FILE
    folders = _render_folders(args, f"train {args.model}", cache)
    try:
        data = cut(folders, cache, args.jobs)
        minutes = MINUTES[task] if args.minutes is None else args.minutes
        path, figures = train(data, args.out, minutes, args.threads, seed=args.seed or 0,
                              batch=args.batch or BATCH, lr=args.lr0, task=task,
                              device=_torch_device(args),
                              init=None if args.init is None else Path(args.init))
        # the finder runs the int8 copy (vision.pyramids.quantize), measured on this cut
        copy = int8_copy(path, cache)
    except ValueError as exc:
        raise TrainError(str(exc)) from None
    print(f"int8 copy (the file the finder runs): {copy}")
    if task == "size":
        print(f"pyramid size reader: {path}  validation pips {figures['pips']:.4f} (white "
              f"and clear {figures.get('light_pips', float('nan')):.4f}), upright/lying "
              f"{figures['pose']:.4f}  ({figures['train_seconds']} s)")
    elif task == "pointing":
        print(f"pointing reader: {path}  validation sector {figures['accuracy']:.4f}, within "
              f"45 degrees {figures['within_45']:.4f} (white and clear "
              f"{figures.get('light_within_45', float('nan')):.4f})  "
              f"({figures['train_seconds']} s)")
    elif task == "color":
        print(f"colour reader: {path}  validation accuracy {figures['accuracy']:.4f} (white "
              f"and clear {figures.get('light_accuracy', float('nan')):.4f})  "
              f"({figures['train_seconds']} s)")
    else:
        print(f"white-or-clear reader: {path}  validation accuracy "
              f"{figures['accuracy']:.4f}  ({figures['train_seconds']} s)")
    return 0


def _pyramids(args: argparse.Namespace) -> int:
    """``pyramids``: both patch classifiers (or ``--only`` one); ``pyramid-heat``: the heat
    map."""
    from vision.pyramids.train import TASKS

    tasks = (args.only,) if args.model == "pyramids" and args.only else TASKS
    init: dict[str, Path] = {}
    if args.model == "pyramids" and args.init is not None:
        init = _pyramid_init(Path(args.init), tasks)
    # the heat map trains again on its prepared views; the classifiers cut their own
    views = args.out / "views.npz" if args.model == "pyramid-heat" else None
    folders = _render_folders(args, f"train {args.model}", views)
    minutes = 10.0 if args.minutes is None else args.minutes
    if args.model == "pyramid-heat":
        from vision.pyramids.train_heat import prepare, train

        assert views is not None   # the heat map's, set above
        try:   # a views file or --init weights made at another resolution
            data = prepare(folders, views, args.jobs, args.ppm)
            path = train(data, args.out, minutes, args.threads, seed=args.seed or 0,
                         batch=args.batch or 32, device=_torch_device(args),
                         width=args.width, dilations=(1, 2, 4, 8), init=args.init,
                         lr=args.lr0, ppm=args.ppm)
        except ValueError as exc:
            raise TrainError(str(exc)) from None
        print(f"pyramid heat map: {path} (the finder runs its int8 copy, "
              f"{path.with_name('pyramids-heat.int8.onnx')})")
        return 0
    from vision.pyramids.train import parse_max_none, train_pyramid_classifier

    try:
        cap = parse_max_none(args.max_none)
    except ValueError as exc:
        raise TrainError(str(exc)) from None
    figures = train_pyramid_classifier(
        args.out, render_dirs=folders, minutes=minutes, device=str(args.device),
        batch=args.batch or 256, threads=args.threads,
        seed=args.seed or 0, jobs=args.jobs, workers=args.workers or 0,
        max_none=cap, init=init, lr0=args.lr0,
        tasks=tasks)
    print("pyramid classifiers: " + ", ".join(
        f"{k} top-1 {v['top1']:.3f}" for k, v in figures.items()
        if isinstance(v, dict) and "top1" in v) + f"  ({args.out})")
    return 0
