"""Train the pyramid heat map, the verifier, the size readers or the tarot card identity
network on a lent GPU machine in one command.

    python -m vision.pyramids.train_lease --work /tmp/lease --out RESULTS \\
        --render-seconds 290 --total-seconds 540 --workers 16 --device cuda

A lent machine comes bare, for minutes, and its files go back with it; the renders behind
a training set are gigabytes, too many to carry there. So this renders fresh scenes on
every core of that machine, each batch of ``--scenes`` cut at once for both networks (the
heat map's views and targets, :mod:`vision.pyramids.train_heat`; the verifier's samples,
:mod:`vision.pyramids.train_verify`) and its images deleted, until ``--render-seconds``
from the start; then it trains both side by side on the GPU, each for what is left of
``--total-seconds``, and copies what they made (``heat/``: ``best.pt``, the ONNX file and
its int8 copy; ``verify/``: ``best.pt``, the ONNX file, ``figures.json``; ``size/``: the
size reader's, the white-or-clear reader's, the pointing reader's and the colour reader's ONNX
files and figures) to ``--out``. ``--networks size`` cuts the size readers' patches
(:mod:`vision.pyramids.train_size`) and trains its four tasks, each in its own process,
going on from the shipped files with ``--size-init models``.
The batches cycle through the recipes of the shipped files' data (:data:`CYCLE`), from seed
``--seed``, each batch numbered by its seed: the training takes every batch in ``--work``,
so several commands in one lease add up (give each the seed after the last one's batches;
with ``--render-seconds`` too short for a batch it trains on those alone). Progress is
logged. Needs the ``train`` extra (torch); never run in CI.

What these steps gave on an H200 machine (2026-11-26, run by a first script of this
module; ``models/pyramids-heat.md``, ``models/pyramids-verify.md``): 16 workers rendered
and cut 144 batches of 60 scenes (8,165 views, 114,230 samples) in 290 s, and each network
trained 3.6 minutes; neither beat the shipped file, trained on more scenes for longer.
The next lease gave it all to the heat map, going on from the shipped file
(``--networks heat --heat-init models/pyramids-heat.onnx``): 171 batches (9,715 views) in
299 s, then 3.9 minutes of training and 3.2 more in a second command on the same
``--work``; that map missed 3.8% fewer pyramids on dev renders, as many false finds. A third
lease went on from it the same way (214 batches, 12,114 views, seed 98501, one command of
4.0 minutes' training): fewer false finds and wrong pointings on dev renders for a few more
misses, and it is the one shipped. A fourth lease (an H100 machine, 2026-11-26) gave it all
to the size readers (``--networks size --size-init models``, seed 99001): 178 batches,
10,680 scenes, 223,604 patches in 300 s, then 3.5 minutes of training for each
(``models/pyramids-size.md``).
A fifth (an H100 machine, 2026-11-27) trained the heat map on again with the loss weighed
up round clear and white pyramids (155 batches, seed 100001): it found more pyramids and
made as many more false finds, and was not shipped (``models/pyramids-heat.md``).
A sixth (an H100 machine, 2026-11-27) trained the four size readers on from the shipped
files (``--networks size --size-init models``, seed 101001, three crowded batches under lamps
in eight): 156 batches, 258,091 patches in 299 s, then 3.5 minutes each. Only the colour
reader improved on its start, a little, and it ships (``models/pyramids-color-read.md``).
A seventh (an H200 machine, 2026-11-27) trained the heat map and the verifier for each
other: the map on from one fine-tuned on pale renders, the verifier's samples cut with that
map (``--cut-heat``), 4 batches in 10 rich in white and clear pyramids (``mixed-pale``,
``crowded-pale``); more pyramids found, more false finds, fewer tables, not shipped
(``models/pyramids-heat.md``).
An eighth (an H200 machine, 2026-11-28) trained the heat map on from the shipped file and the
Decktet's verifier on from its own, six batches in ten of Decktet tables (``mixed-decktet``,
``crowded-decktet``; seed 104001): 62 batches in 296 s, half the seventh's; the verifier did
no better than its start, and the map won no table on the Decktet and lost some on the
tarot; neither shipped (``models/pyramids-heat.md``).
A ninth (an H200 machine, 2026-11-30) trained both on from the shipped files with a third
of the frames blurred (``mixed-blur``, ``crowded-blur`` among the usual recipes; seed
105101): 76 batches in 279 s. The map found more pyramids and made as many more false finds
and misreads; the verifier never beat its start at the usual learning rate, and at a tenth
of it (``--verify-lr 0.0001``) beat it on its validation samples but lost dev tables.
Neither shipped (``models/pyramids-heat.md``, ``models/pyramids-verify.md``).
``--networks cards`` cuts one crop of every card at least half seen from each scene
(:func:`vision.cards.train_net.render_crops`, as the card network's rendered crops) and trains
that network from random weights on them, beside the simulated crops of the deck's scans
(``$ARCANA_SHARED/decks/rws-tarot`` must be on the lent machine), every tenth batch kept
apart to choose the best epoch (``cards/``: ``card-net.onnx``, ``card-net-best.pt``,
``figures.json``; ``models/cards-tarot-net.md``).
``--networks verify --verify-init models/pyramids-verify.onnx`` goes on from the shipped
verifier, cut on every candidate the finder may ask about (``--candidates all``, as its later
stages were), and ``--recipes`` names the batches' recipes in turn, e.g. more crowded lattices
under lamps and recoloured printings (:data:`RECIPES`). ``mixed-decktet`` and
``crowded-decktet`` render Decktet tables, whose art no pyramid reader has seen (it takes the
Decktet's suns for orange pyramids: ``models/cards-decktet.md``); mixed with the tarot's
recipes, e.g. ``--recipes mixed,crowded,mixed-decktet,mixed-lamp,crowded-decktet``.
``mixed-blur`` and ``crowded-blur`` blur 60% and 70% of their frames (``companion synth
--blur``), where the usual draw blurs about one in six: the frames whose pyramids the finder
misses and misreads most. Trained alone they cost the sharp tables (the CPU tries in
``models/pyramids-size.md``), so mix them with the usual recipes, e.g. ``--recipes
mixed,crowded-blur,mixed-lamp,mixed-blur,crowded``.
"""

from __future__ import annotations

import argparse
import json
import logging
import multiprocessing as mp
import os
import shutil
import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

log = logging.getLogger(__name__)

class Recipe(NamedTuple):
    """A ``companion synth`` recipe: the game, the light, the share of images with hands,
    the card printing's strength (None for the usual 0-1), the share of pyramids
    recoloured white or clear (``--pale``), the deck (a folder of shared/decks) and the
    share of images out of focus or shaken (``--blur``; None for the usual draw, about one
    in six)."""

    game: str
    light: str
    hands: float
    printing: tuple[float, float] | None = None
    pale: float = 0.0
    deck: str = "rws-tarot"
    blur: float | None = None


#: the first three are the shipped files' usual recipes; then the verifier's later stages
#: (``models/pyramids-verify.md``): crowded lattices under a lamp in every image, and
#: recoloured printings (``--printing``), still short of the benchmark's unseen printing
#: (1.6-2.4); then scenes rich in white and clear pyramids, the ones the finder misses most
#: (``--pale 0.6``, as the readers' pale renders, ``models/pyramids-size.md``)
RECIPES: dict[str, Recipe] = {
    "mixed": Recipe("mixed", "ordinary", 0.15),
    "crowded": Recipe("crowded", "mixed", 0.10),
    "mixed-lamp": Recipe("mixed", "mixed", 0.15),
    "crowded-lamp": Recipe("crowded", "lamp", 0.10),
    "crowded-printed": Recipe("crowded", "mixed", 0.10, (1.0, 1.5)),
    "mixed-printed": Recipe("mixed", "mixed", 0.15, (0.0, 1.5)),
    "mixed-pale": Recipe("mixed", "mixed", 0.15, None, 0.6),
    "crowded-pale": Recipe("crowded", "mixed", 0.10, None, 0.6),
    # Decktet tables: the pyramid readers never saw its art, and take its suns and blues
    # for pyramids (models/cards-decktet.md, "In the pipeline")
    "mixed-decktet": Recipe("mixed", "mixed", 0.15, None, 0.0, "decktet"),
    "crowded-decktet": Recipe("crowded", "mixed", 0.10, None, 0.0, "decktet"),
    # blurred frames: the finder misses 17% of a crowded blurred table's pyramids against 3%
    # of a sharp one's, and reads their pips and pointing worst (models/pyramids-size.md);
    # trained beside the usual recipes, which keep the sharp tables in the mix
    "mixed-blur": Recipe("mixed", "mixed", 0.15, blur=0.6),
    "crowded-blur": Recipe("crowded", "mixed", 0.10, blur=0.7),
}
#: the recipe of each batch, in turn (``--recipes`` names another cycle): 4 mixed, 3 crowded
#: tables under lamps, 3 mixed under lamps, as the shipped verifier's first renders
CYCLE = ("mixed", "crowded", "mixed-lamp", "mixed", "crowded", "mixed-lamp", "mixed",
         "crowded", "mixed-lamp", "mixed")
#: the first seed: none of the shipped files' renders (93001-97204), the dev seeds (4242-4244,
#: 500000-570000) or the benchmark's (>= 900000)
SEED = 98001
#: seconds a scene takes one worker (render, heat views, verifier samples), until measured
SCENE_SECONDS = 0.45
#: a verifier sample's scene id is batch * SCENE_IDS + its index in the batch
SCENE_IDS = 1000
#: seconds kept back from the training budget for loading the batches and exporting
TRAIN_MARGIN_S = 40.0
#: the shipped networks' shapes and the batches that kept an H200 busy
HEAT_WIDTH, HEAT_DILATIONS, HEAT_BATCH = 48, (1, 2, 4, 8), 64
VERIFY_BATCH = 256
#: the networks a lease can train; each is cut for and trained only when asked for (``cards``:
#: the tarot identity network, ``models/cards-tarot-net.md``)
NETWORKS = ("heat", "verify", "size", "cards")
#: the card identity network on a GPU: crops a step, crops an epoch (each epoch ends with a
#: validation), and one crop of each card a scene (more scenes rather than more jitters)
CARDS_BATCH, CARDS_EPOCH, CARDS_PER_CARD = 512, 200_000, 1
#: every CARDS_VAL_EVERY-th batch of scenes is kept apart to choose the best epoch
CARDS_VAL_EVERY = 10
#: seconds the card network's trainer keeps back for its simulated crops (made on every core)
CARDS_DATA_S = 45.0
#: what each network's cut trains, one process each: the size cut trains the size, the
#: white-or-clear, the pointing and the colour reader (:mod:`vision.pyramids.train_size`'s
#: four tasks)
TRAINERS: dict[str, tuple[str, ...]] = {"heat": ("heat",), "verify": ("verify",),
                                        "size": ("size", "white-clear", "pointing", "color"),
                                        "cards": ("cards",)}
#: the networks a command trains unless told (the size readers are asked for by name)
DEFAULT_NETWORKS = ("heat", "verify")
#: the packages of the train extra these trainers use (the exports' shape inference: sympy)
LEASE_PACKAGES = ("torch", "onnx", "sympy")


def render_and_cut(batch: int, seed: int, recipe: str, scenes: int, work: Path,
                   networks: tuple[str, ...] = DEFAULT_NETWORKS,
                   candidates: str = "all", cut_heat: Path | None = None) -> dict[str, Any]:
    """Render ``scenes`` scenes of ``recipe`` (seed ``seed``) into ``work/rBATCH``, cut them
    for each of ``networks`` into ``work/heat_BATCH.npz`` (views, targets, weights),
    ``work/verify_BATCH.npz`` (the verifier's samples: ``candidates``, as
    :mod:`vision.pyramids.train_verify` names them, the 48 mm patches alone) and
    ``work/size_BATCH.npz`` (the size readers' patches, labels and colours), scene ids from
    ``batch * SCENE_IDS``, then delete the images. The verifier's candidates (and the heat
    each sample reads) come from the heat map ``cut_heat`` where given, else the shipped one:
    a verifier is trained on the map it will be asked beside.
    Returns counts and seconds. :func:`render_until` numbers each batch by its seed, so
    the batches of several runs into one folder add up."""
    import cv2

    from vision.pyramids.heat import HEAT_PPM
    from vision.pyramids.train_heat import prepare_views
    from vision.pyramids.train_verify import PATCH_MM_TRAIN, _prepare_chunk
    from vision.synth.generate import SynthConfig, synthesize

    if scenes >= SCENE_IDS:
        raise ValueError(f"at most {SCENE_IDS - 1} scenes a batch, not {scenes}")
    cv2.setNumThreads(1)
    t0 = time.monotonic()
    folder = work / f"r{batch:06d}"
    r = RECIPES[recipe]
    from vision.synth.deck import default_deck_dir, load_deck

    deck = load_deck(default_deck_dir(r.deck))
    synthesize(SynthConfig(out=folder, count=scenes, seed=seed, game=r.game, light=r.light,
                           hands=r.hands, printing=r.printing, pale=r.pale, deck=deck,
                           blur=r.blur))
    t1 = time.monotonic()
    views: dict[str, np.ndarray] = {}
    if "heat" in networks:
        views = prepare_views([folder], 1, HEAT_PPM)   # in this process: it is a worker
    if views:
        heat_arrays: dict[str, Any] = views   # (numpy's stub reads **arrays as allow_pickle)
        np.savez(work / f"heat_{batch:06d}.npz", **heat_arrays)
    t2 = time.monotonic()
    samples: dict[str, np.ndarray] = {}
    if "verify" in networks:
        samples = _prepare_chunk((str(folder), batch * SCENE_IDS, 0, scenes, candidates,
                                  (PATCH_MM_TRAIN,), None if cut_heat is None else str(cut_heat)))
    if samples:
        verify_arrays: dict[str, Any] = samples
        np.savez(work / f"verify_{batch:06d}.npz", **verify_arrays)
    t3 = time.monotonic()
    labels: list[int] = []
    if "size" in networks:
        from vision.pyramids.train_size import _cut_chunk as cut_size

        patches, labels, colors, scene, pointing = cut_size(
            (str(folder), 0, scenes, batch * SCENE_IDS))
        if labels:
            np.savez(work / f"size_{batch:06d}.npz", patches=patches,
                     labels=np.array(labels, np.int64), colors=np.array(colors), scene=scene,
                     pointing=np.array(pointing, np.float32))
    crops: list[str] = []
    if "cards" in networks and r.deck == "rws-tarot":
        # (the card network reads the tarot alone: another deck's crops are not its classes)
        from vision.cards.train_net import render_crops

        X, crops = render_crops([folder], deck.name, seed, per_card=CARDS_PER_CARD)
        if crops:
            np.savez(work / f"cards_{batch:06d}.npz", X=X, y=np.array(crops))
    t4 = time.monotonic()
    shutil.rmtree(folder)
    return {"batch": batch, "views": len(views.get("views", [])),
            "samples": len(samples.get("labels", [])), "patches": len(labels),
            "crops": len(crops),
            "render_s": t1 - t0, "heat_s": t2 - t1, "cut_s": t3 - t2, "size_s": t4 - t3}


def render_until(work: Path, seconds: float, workers: int, scenes: int, seed: int = SEED,
                 networks: tuple[str, ...] = DEFAULT_NETWORKS,
                 cycle: tuple[str, ...] = CYCLE, candidates: str = "all",
                 cut_heat: Path | None = None) -> list[dict[str, Any]]:
    """Batches of ``scenes`` rendered and cut by ``workers`` processes, seeds (and batch
    numbers) from ``seed``, recipes in turn from ``cycle`` (the verifier's samples:
    ``candidates``, proposed with the heat map ``cut_heat``), a new one started only while
    it can end within ``seconds`` of now (its time measured on the batches done). Returns
    what each batch done reported; a batch that fails is logged and left out, and after two
    failures before any success none more is started."""
    t0 = time.monotonic()
    per_batch = scenes * SCENE_SECONDS
    done: list[dict[str, Any]] = []
    failed = 0
    running: dict[Future[dict[str, Any]], float] = {}
    k = 0
    work.mkdir(parents=True, exist_ok=True)
    with ProcessPoolExecutor(max(1, workers), mp_context=mp.get_context("spawn")) as pool:
        while True:
            while (len(running) < workers and time.monotonic() - t0 + per_batch < seconds
                   and not (failed >= 2 and not done)):
                running[pool.submit(render_and_cut, seed + k, seed + k,
                                    cycle[k % len(cycle)], scenes, work,
                                    networks, candidates, cut_heat)] = time.monotonic()
                k += 1
            if not running:
                break
            finished, _ = wait(list(running), return_when=FIRST_COMPLETED)
            for f in finished:
                took = time.monotonic() - running.pop(f)
                try:
                    got = f.result()
                except Exception as exc:  # one bad batch never stops the others
                    failed += 1
                    log.warning("a batch failed: %s", exc)
                    continue
                done.append(got)
                # the slowest batch so far, then a running mean: a batch started late must
                # still end before the deadline
                per_batch = max(per_batch, took) if len(done) < 3 else \
                    0.8 * per_batch + 0.2 * took
                if len(done) <= 3 or len(done) % 20 == 0:
                    log.info("%d batches done (%.0f s): the last %d views, %d samples, %d "
                             "size patches, %d card crops, %.0f s", len(done),
                             time.monotonic() - t0, got["views"], got["samples"],
                             got["patches"], got["crops"], took)
    log.info("rendered and cut %d batches (%d views, %d samples, %d size patches, %d card "
             "crops) in %.0f s", len(done), sum(d["views"] for d in done),
             sum(d["samples"] for d in done), sum(d["patches"] for d in done),
             sum(d["crops"] for d in done), time.monotonic() - t0)
    return done


def load_batches(work: Path, prefix: str, keys: tuple[str, ...]) -> dict[str, np.ndarray]:
    """The arrays ``keys`` of every ``work/PREFIX_*.npz``, concatenated in batch order."""
    files = sorted(work.glob(f"{prefix}_*.npz"))
    if not files:
        raise ValueError(f"no {prefix}_*.npz batches in {work}")
    parts = []
    for f in files:
        with np.load(f) as z:
            parts.append({k: z[k] for k in keys})
    return {k: np.concatenate([p[k] for p in parts]) for k in keys}


def _train_heat(work: Path, minutes: float, device: str, init: Path | None = None) -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s heat: %(message)s")
    from vision.pyramids import train_heat

    data = load_batches(work, "heat", ("views", "targets", "weights"))
    train_heat.train(data, work / "heat", minutes, threads=1, seed=0, batch=HEAT_BATCH,
                     device=device, width=HEAT_WIDTH, dilations=HEAT_DILATIONS,
                     eval_every_s=45.0, init=init)


def _train_verify(work: Path, minutes: float, device: str, init: Path | None = None,
                  lr: float | None = None) -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s verify: %(message)s")
    from vision.pyramids import train_verify

    data = load_batches(work, "verify", (f"patches{train_verify.PATCH_MM_TRAIN:g}",
                                         "features", "labels", "scene"))
    _, figures = train_verify.train(data, work / "verify", minutes, threads=1, seed=1,
                                    batch=VERIFY_BATCH, lr=lr, device=device, init=init)
    (work / "verify" / "figures.json").write_text(json.dumps(figures), encoding="utf-8")


def _train_size(work: Path, minutes: float, device: str, task: str,
                init: Path | None = None) -> None:
    logging.basicConfig(level=logging.INFO, format=f"%(asctime)s {task}: %(message)s")
    from vision.pyramids import train_size

    data = load_batches(work, "size", ("patches", "labels", "colors", "scene", "pointing"))
    _, figures = train_size.train(data, work / "size", minutes, threads=1, seed=0,
                                  batch=train_size.BATCH, task=task, device=device, init=init)
    (work / "size" / f"figures-{task}.json").write_text(json.dumps(figures), encoding="utf-8")


def _train_cards(work: Path, minutes: float, device: str) -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s cards: %(message)s")
    from vision.cards import train_net
    from vision.synth.deck import default_deck_dir

    files = sorted(work.glob("cards_*.npz"))
    train: list[np.ndarray] = []
    val: list[np.ndarray] = []
    labels: tuple[list[str], list[str]] = ([], [])
    for k, f in enumerate(files):
        with np.load(f) as z:
            apart = k % CARDS_VAL_EVERY == CARDS_VAL_EVERY - 1
            (val if apart else train).append(z["X"])
            labels[apart].extend(str(v) for v in z["y"])
    if not train or not val:
        raise ValueError(f"{len(files)} card batches in {work}: too few to keep some apart")
    t0 = time.monotonic()
    rendered = (np.concatenate(train), labels[0])
    rendered_val = (np.concatenate(val), labels[1])
    del train, val
    log.info("%d crops of rendered scenes, %d apart, joined in %.0f s", len(rendered[1]),
             len(rendered_val[1]), time.monotonic() - t0)
    figures = train_net.train(
        default_deck_dir("rws-tarot"), work / "cards", per_card=500,
        minutes=max(0.2, minutes - (CARDS_DATA_S + time.monotonic() - t0) / 60.0),
        epochs=1000, batch=CARDS_BATCH, seed=11, jobs=os.cpu_count() or 1, threads=4,
        epoch_size=CARDS_EPOCH, device=device, rendered=rendered, rendered_val=rendered_val)
    log.info("best score %.4f", figures["best_score"])


#: what is copied to --out: (folder under --work, files), those there (the verifier writes a
#: best.pt only when an epoch beats the file it went on from: figures.json's best_epoch is 0
#: where none did); at most 8 files come back from a lent machine (the size cut's alone are
#: 8), so the size readers' best.pt stay there (their ONNX files can be read back with
#: train_size.from_onnx)
RESULTS = (("heat", ("best.pt", "pyramids-heat.onnx", "pyramids-heat.int8.onnx")),
           ("verify", ("best.pt", "pyramids-verify.onnx", "figures.json")),
           ("size", ("pyramids-size.onnx", "figures-size.json", "pyramids-white-clear.onnx",
                     "figures-white-clear.json", "pyramids-point.onnx",
                     "figures-pointing.json", "pyramids-color-read.onnx", "figures-color.json")),
           ("cards", ("card-net.onnx", "card-net-best.pt", "figures.json")))


def train_both(work: Path, seconds: float, device: str,
               networks: tuple[str, ...] = DEFAULT_NETWORKS, heat_init: Path | None = None,
               size_init: Path | None = None, verify_init: Path | None = None,
               verify_lr: float | None = None) -> dict[str, int | None]:
    """Train ``networks`` at once (:data:`TRAINERS`: the heat map, the verifier, the four
    size readers), each in its own process, for ``seconds`` less :data:`TRAIN_MARGIN_S`, the heat
    map going on from ``heat_init`` where given (a ``best.pt`` or an exported file), the
    verifier from ``verify_init`` (an exported file; peak learning rate ``verify_lr``, else
    :mod:`vision.pyramids.train_verify`'s own) and the
    size readers from their exported files in the folder ``size_init`` (say ``models``);
    returns each one's exit code."""
    from vision.pyramids.train_size import TASKS as SIZE_TASKS

    minutes = max(0.2, (seconds - TRAIN_MARGIN_S) / 60.0)
    names = [t for n in networks for t in TRAINERS[n]]
    log.info("training %s for %.1f minutes on %s", ", ".join(names), minutes, device)
    ctx = mp.get_context("spawn")
    jobs: dict[str, tuple[Any, tuple[Any, ...]]] = {
        "heat": (_train_heat, (work, minutes, device, heat_init)),
        "verify": (_train_verify, (work, minutes, device, verify_init, verify_lr)),
        "cards": (_train_cards, (work, minutes, device))}
    for task, (_, file) in SIZE_TASKS.items():
        jobs[task] = (_train_size, (work, minutes, device, task,
                                    None if size_init is None else size_init / file))
    procs = {name: ctx.Process(target=jobs[name][0], args=jobs[name][1]) for name in names}
    for p in procs.values():
        p.start()
    for p in procs.values():
        p.join()
    return {name: p.exitcode for name, p in procs.items()}


def collect(work: Path, out: Path) -> list[Path]:
    """Copy the trained files (:data:`RESULTS`) from ``work`` to ``out``; returns those
    copied."""
    got = []
    for folder, names in RESULTS:
        for name in names:
            src = work / folder / name
            if src.is_file():
                (out / folder).mkdir(parents=True, exist_ok=True)
                got.append(Path(shutil.copy2(src, out / folder / name)))
    return got


def main(argv: list[str] | None = None) -> int:
    from vision.pyramids.train_verify import CANDIDATES

    ap = argparse.ArgumentParser(prog="python -m vision.pyramids.train_lease",
                                 description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--work", type=Path, required=True,
                    help="scratch folder (gigabytes: the cut batches)")
    ap.add_argument("--out", type=Path, required=True, help="where the trained files go")
    ap.add_argument("--render-seconds", type=float, default=290.0,
                    help="render and cut until this many seconds from the start")
    ap.add_argument("--total-seconds", type=float, default=540.0,
                    help="train until this many seconds from the start")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                    help="rendering processes (default: one a core)")
    ap.add_argument("--scenes", type=int, default=60, help="scenes a batch")
    ap.add_argument("--seed", type=int, default=SEED,
                    help="the first batch's seed (another command into the same --work: "
                         "give the seed after the last one, and its batches add up)")
    ap.add_argument("--device", default="cuda", help="cuda, or cpu to try it out")
    ap.add_argument("--networks", default=",".join(DEFAULT_NETWORKS),
                    help="which to cut for and train, of heat, verify, size (the size, "
                         "white-or-clear, pointing and colour readers) and cards (the tarot "
                         "identity network), comma-separated (default heat,verify); one alone "
                         "gets all the rendering and the GPU")
    ap.add_argument("--heat-init", type=Path, default=None, metavar="PT_OR_ONNX",
                    help="the heat map goes on from this best.pt or exported file (say "
                         "models/pyramids-heat.onnx) instead of random weights")
    ap.add_argument("--verify-init", type=Path, default=None, metavar="ONNX",
                    help="the verifier goes on from this exported file (say "
                         "models/pyramids-verify.onnx) instead of random weights")
    ap.add_argument("--verify-lr", type=float, default=None, metavar="LR",
                    help="the verifier's peak learning rate (default: train_verify's, 0.001 "
                         "going on from a file; at 0.0001 a lease's fine-tune first beat its "
                         "start, models/pyramids-verify.md)")
    ap.add_argument("--recipes", default=",".join(CYCLE),
                    help="the batches' recipes in turn, comma-separated, of "
                         f"{', '.join(RECIPES)} (default: 4 mixed, 3 crowded, 3 mixed-lamp)")
    ap.add_argument("--candidates", choices=CANDIDATES, default="all",
                    help="the verifier's samples: every candidate the finder may ask about "
                         "(default, as the shipped file's later stages) or the doubtful ones")
    ap.add_argument("--cut-heat", type=Path, default=None, metavar="ONNX",
                    help="the heat map whose candidates (and heat) the verifier's samples are "
                         "cut with (default: the shipped one), e.g. the map the heat map "
                         "training goes on from, so that the two are trained for each other")
    ap.add_argument("--size-init", type=Path, default=None, metavar="FOLDER",
                    help="the size readers go on from their exported files in this folder "
                         "(say models: pyramids-size.onnx, pyramids-white-clear.onnx, "
                         "pyramids-point.onnx, pyramids-color-read.onnx)")
    args = ap.parse_args(argv)
    asked = args.networks.split(",")
    networks = tuple(n for n in NETWORKS if n in asked)
    if set(asked) - set(NETWORKS) or not networks:
        ap.error(f"--networks {args.networks!r}: expected some of {', '.join(NETWORKS)}, "
                 "comma-separated")
    if args.heat_init is not None and "heat" not in networks:
        ap.error(f"--heat-init is for the heat map, which --networks {args.networks!r} leaves out")
    if args.heat_init is not None and not args.heat_init.is_file():
        ap.error(f"--heat-init {args.heat_init}: no such file")
    if args.verify_init is not None and "verify" not in networks:
        ap.error(f"--verify-init is for the verifier, which --networks {args.networks!r} "
                 "leaves out")
    if args.verify_init is not None and not args.verify_init.is_file():
        ap.error(f"--verify-init {args.verify_init}: no such file")
    if args.verify_lr is not None and "verify" not in networks:
        ap.error(f"--verify-lr is for the verifier, which --networks {args.networks!r} "
                 "leaves out")
    if args.verify_lr is not None and not 0 < args.verify_lr < 1:
        ap.error(f"--verify-lr {args.verify_lr:g}: expected a learning rate between 0 and 1")
    if args.cut_heat is not None and "verify" not in networks:
        ap.error(f"--cut-heat is for the verifier's samples, which --networks "
                 f"{args.networks!r} leaves out")
    if args.cut_heat is not None and not args.cut_heat.is_file():
        ap.error(f"--cut-heat {args.cut_heat}: no such file")
    cycle = tuple(args.recipes.split(","))
    if set(cycle) - set(RECIPES):
        ap.error(f"--recipes {args.recipes!r}: expected some of {', '.join(RECIPES)}, "
                 "comma-separated")
    if args.size_init is not None:
        if "size" not in networks:
            ap.error(f"--size-init is for the size readers, which --networks "
                     f"{args.networks!r} leaves out")
        from vision.pyramids.train_size import TASKS as SIZE_TASKS

        for _, file in SIZE_TASKS.values():
            if not (args.size_init / file).is_file():
                ap.error(f"--size-init {args.size_init}: no {file} there")
    if not 0 < args.render_seconds < args.total_seconds:
        ap.error("expected 0 < --render-seconds < --total-seconds")
    if not 0 < args.scenes < SCENE_IDS:
        ap.error(f"--scenes: expected 1 to {SCENE_IDS - 1}")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    t0 = time.monotonic()
    from vision.train_extra import train_extra_problem

    # plain torch networks: ultralytics (the card detector's trainer) is not asked for, and
    # a lent machine's image has none
    problem = train_extra_problem(LEASE_PACKAGES)
    if problem is not None:
        ap.error(problem)
    import torch
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        ap.error("--device cuda: torch sees no GPU here")
    done = render_until(args.work, args.render_seconds, args.workers, args.scenes, args.seed,
                        networks, cycle, args.candidates,
                        None if args.cut_heat is None else args.cut_heat.resolve())
    have = sorted(args.work.glob(f"{networks[0]}_*.npz"))
    if not have:
        ap.error("no batch was rendered and cut (see the warnings above)")
    log.info("training on the %d batches in %s (%d rendered now)", len(have), args.work,
             len(done))
    codes = train_both(args.work, args.total_seconds - (time.monotonic() - t0), args.device,
                       networks, args.heat_init, args.size_init, args.verify_init,
                       args.verify_lr)
    got = collect(args.work, args.out)
    log.info("exit codes %s; %s", codes, ", ".join(map(str, got)) or "nothing trained")
    return 0 if all(c == 0 for c in codes.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
