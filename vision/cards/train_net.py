"""Train the card identity network (``models/cards-tarot-net.onnx``) for one deck.

    python -m vision.cards.train_net --deck ../shared/decks/rws-tarot --out runs/card-net \
        [--per-card 400] [--minutes 40] [--seed 11] [--jobs 2] [--threads 2]

(also ``companion train card-net ...``). Needs the ``train`` extra (torch, ultralytics); never
imported at run time and never run in CI. Nothing is downloaded: the network is built from
:data:`MODEL_YAML` (YOLO11 blocks, ``pretrained=False`` in effect).

Why a network beside the gallery: the classical gallery (:mod:`vision.cards.identify`) is a
linear projection of hand-made features, and a card under three pyramids in dim light keeps
too little of what it was enrolled on for a linear read (bench/vision.py, hard scenes). A
small convolutional network trained on the same simulated crops, with many more of them and
more pyramid-like occluders, reads those; the gallery stays the way to teach the companion a
new deck in minutes (``companion enroll-deck``), and the pipeline uses the network only for
the deck it was trained on.

Data: every card image of the deck folder is augmented as the gallery's enrollment does
(:func:`vision.cards.identify._augment`: another printing, wear, light, resolution, blur,
noise, JPEG, quad jitter, occluders and shadows; here with :data:`NET_OCCLUDERS_P`), the
face-down class from the deck's back or the renderer's procedural backs, and bare table
patches as the ``none`` class. Every crop is also shown turned 180 degrees, as the class of
the other orientation (``{id}@180``). The validation crops are drawn from a seed apart.
Progress (crops made, then each epoch's loss and validation accuracy) goes to ``logging``.

On a GPU (``--device cuda``) every crop is held on the device and each batch is turned and
converted there; ``python -m vision.pyramids.train_lease --networks cards`` renders the
scenes for it on a lent machine's cores and keeps every tenth batch of scenes apart, whose
crops then choose the best epoch (the simulated validation crops saturate within a few
epochs). The shipped file was made so (``models/cards-tarot-net.md``).
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import logging
import math
import os
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, Callable, Sequence

import cv2
import numpy as np

from vision.cards.identify import BACK_ID, CROP_SIZE, NONE_ID

log = logging.getLogger(__name__)

#: Occluders per crop (0, 1, 2, 3 of them): a lattice card often carries three pyramids.
NET_OCCLUDERS_P = (0.2, 0.2, 0.3, 0.3)
ROTATED_SUFFIX = "@180"

MODEL_YAML = """\
# card identity network (vision/cards/train_net.py)
nc: {nc}
backbone:
  - [-1, 1, Conv, [24, 3, 2]]
  - [-1, 1, Conv, [48, 3, 2]]
  - [-1, 1, C3k2, [48, False, 0.25]]
  - [-1, 1, Conv, [96, 3, 2]]
  - [-1, 1, C3k2, [96, False, 0.25]]
  - [-1, 1, Conv, [160, 3, 2]]
  - [-1, 1, C3k2, [160, True]]
  - [-1, 1, Conv, [192, 3, 2]]
head:
  - [-1, 1, Classify, [nc]]
"""


def class_names(card_ids: Sequence[str]) -> list[str]:
    """The network's classes: every card in both orientations, ``back``, ``__none__``."""
    ids = sorted(c for c in card_ids if c != BACK_ID)
    return [n for c in ids for n in (c, c + ROTATED_SUFFIX)] + [BACK_ID, NONE_ID]


def _chunk(task: tuple[str, list[str], int, int, float]) -> tuple[np.ndarray, list[str]]:
    """Crops of some cards (``which`` ids, or ``back`` / ``__none__``) from one seed."""
    from vision.cards import identify as idf
    from vision.synth.deck import load_deck

    folder, which, n, seed, strength = task
    deck = load_deck(folder, validate=False)
    rng = np.random.default_rng(seed)
    pool = idf._table_pool(np.random.default_rng([seed, 2]))
    tex_wh = (CROP_SIZE[0] * 2, CROP_SIZE[1] * 2)

    def texture(img: np.ndarray) -> np.ndarray:
        return cv2.resize(img, tex_wh, interpolation=cv2.INTER_AREA).astype(np.float32)

    crops: list[np.ndarray] = []
    labels: list[str] = []
    for cid in which:
        if cid == NONE_ID:
            for k in range(n):
                src = pool[k % len(pool)]
                py = int(rng.integers(0, src.shape[0] - CROP_SIZE[1] + 1))
                px = int(rng.integers(0, src.shape[1] - CROP_SIZE[0] + 1))
                patch = src[py:py + CROP_SIZE[1], px:px + CROP_SIZE[0]].astype(np.float32)
                crops.append(idf._augment(patch, rng, [], strength, card=False,
                                          occluders_p=NET_OCCLUDERS_P))
                labels.append(NONE_ID)
            continue
        if cid == BACK_ID:
            if deck.back_file is not None:
                backs = [texture(deck.image(BACK_ID))]
            else:
                backs = [texture(b) for b in idf._procedural_backs(64)]
            arts = [backs[k % len(backs)] for k in range(n)]
        else:
            arts = [texture(deck.image(cid))] * n
        for art in arts:
            crops.append(idf._augment(art, rng, pool, strength, occluders_p=NET_OCCLUDERS_P))
            labels.append(cid)
    return np.stack(crops), labels


def make_crops(deck_folder: str | Path, per_card: int, seed: int, jobs: int = 2,
               strength: float = 1.0, progress: Callable[[int, int], None] | None = None
               ) -> tuple[np.ndarray, list[str], list[str]]:
    """(crops (N, h, w, 3) uint8, their labels (card ids in the art's orientation, ``back``
    or ``__none__``), the class names) for ``deck_folder``."""
    from vision.synth.deck import load_deck

    deck = load_deck(deck_folder)
    names = class_names(deck.ids)
    ids = [c for c in deck.ids if c != BACK_ID]
    groups = [ids[i:i + 4] for i in range(0, len(ids), 4)]
    tasks = [(str(deck.folder), g, per_card, int(seed) * 1000 + k, strength)
             for k, g in enumerate(groups)]
    # the extra classes: as many crops as two cards' worth (many looks of one class)
    tasks.append((str(deck.folder), [BACK_ID], per_card * 3, int(seed) * 1000 + 900, strength))
    tasks.append((str(deck.folder), [NONE_ID], per_card * 3, int(seed) * 1000 + 901, strength))
    X: list[np.ndarray] = []
    y: list[str] = []
    with ProcessPoolExecutor(max(1, jobs)) as ex:
        for k, (crops, labels) in enumerate(ex.map(_chunk, tasks)):
            X.append(crops)
            y += labels
            if progress is not None:
                progress(k + 1, len(tasks))
    return np.concatenate(X), y, names


def render_crops(render_dirs: Sequence[str | Path], deck_name: str, seed: int,
                 per_card: int = 2, jitter_mm: float = 2.5, jitter_deg: float = 2.0,
                 min_visible: float = 0.5, every: tuple[int, int] = (1, 0),
                 progress: Callable[[int, int], None] | None = None
                 ) -> tuple[np.ndarray, list[str]]:
    """Crops of the cards of rendered scenes (``companion synth`` folders) of deck
    ``deck_name``: every card in the frame and at least ``min_visible`` seen, cut
    ``per_card`` times on its true corners moved as a fitted box is (``jitter_mm``,
    ``jitter_deg``, normal), labelled in the art's orientation (``back`` when face down).
    ``every`` = (k, r): only the scenes whose index is r modulo k (a validation split)."""
    from vision.cards.identify import warp_card

    files = sorted(f for d in render_dirs for f in Path(d).glob("*.json")
                   if f.with_suffix(".jpg").is_file())
    files = [f for i, f in enumerate(files) if i % every[0] == every[1]]
    rng = np.random.default_rng([seed, 7])
    crops: list[np.ndarray] = []
    labels: list[str] = []
    for n, f in enumerate(files):
        try:
            truth = json.loads(f.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:  # a scene cut off mid-write: skip it
            log.warning("%s: skipped, not a truth record (%s)", f, exc)
            continue
        if truth.get("deck", {}).get("name") != deck_name:
            continue
        image = cv2.imread(str(f.with_suffix(".jpg")), cv2.IMREAD_COLOR)
        if image is None:
            continue
        for c in truth.get("cards", []):
            if not c.get("in_frame", True) or float(c.get("visible", 1.0)) < min_visible:
                continue
            q = np.asarray(c["corners_px"], np.float64)  # TL, TR, BR, BL of the art
            long_px = float(np.linalg.norm(q[3] - q[0]))
            mm = long_px / 120.0  # px per mm, near enough for jitter
            ctr = q.mean(axis=0)
            for _ in range(per_card):
                a = math.radians(rng.normal(0.0, jitter_deg))
                R = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
                qj = (q - ctr) @ R.T + ctr + rng.normal(0.0, jitter_mm, 2) * mm
                crops.append(warp_card(image, qj))
                labels.append(BACK_ID if not c.get("face_up", True) or c["id"] == BACK_ID
                              else str(c["id"]))
        if progress is not None and (n + 1) % 100 == 0:
            progress(n + 1, len(files))
    if not crops:
        return np.zeros((0, CROP_SIZE[1], CROP_SIZE[0], 3), np.uint8), []
    return np.stack(crops), labels


def _label_index(labels: Sequence[str], names: Sequence[str]) -> np.ndarray:
    index = {n: i for i, n in enumerate(names)}
    return np.array([index[c] for c in labels], np.int64)


def _known(crops: tuple[np.ndarray, Sequence[str]], names: Sequence[str]
           ) -> tuple[np.ndarray, np.ndarray]:
    """The crops whose label is one of ``names`` (a rendered scene can hold cards of another
    deck's classes), and their class indices."""
    keep = [i for i, c in enumerate(crops[1]) if c in names]
    return crops[0][keep], _label_index([crops[1][i] for i in keep], names)


def build_net(nc: int, work: Path) -> Any:
    """The network (a torch module) from :data:`MODEL_YAML`; torch is imported only here,
    when training."""
    import torch
    from ultralytics.nn.tasks import ClassificationModel

    class Wrapped(torch.nn.Module):
        """BGR uint8-range NHWC is the caller's business; this takes RGB 0..1 NCHW and
        normalises each crop's channels (the light's level and colour drop out)."""

        def __init__(self) -> None:
            super().__init__()
            yaml_path = work / "card-net.yaml"
            yaml_path.write_text(MODEL_YAML.format(nc=nc), encoding="utf-8")
            self.net = ClassificationModel(str(yaml_path), ch=3, nc=nc, verbose=False)

        def forward(self, x: Any) -> Any:
            m = x.mean(dim=(2, 3), keepdim=True)
            s = x.std(dim=(1, 2, 3), keepdim=True)
            out = self.net((x - m) / (s + 0.02))
            # in eval the head gives (probabilities, logits); when exporting, probabilities
            return out if self.training else out[1] if isinstance(out, tuple) else out

    return Wrapped()


def _to_tensor(X: np.ndarray) -> Any:
    import torch

    return torch.from_numpy(np.ascontiguousarray(X[..., ::-1].transpose(0, 3, 1, 2))
                            ).float().div_(255.0)


def _turn(X: np.ndarray, y: np.ndarray, names: Sequence[str], rng: np.random.Generator
          ) -> tuple[np.ndarray, np.ndarray]:
    """Turn a random half of the crops 180 degrees, their labels to the other orientation."""
    turned = {i: names.index(n[:-len(ROTATED_SUFFIX)] if n.endswith(ROTATED_SUFFIX)
                             else n + ROTATED_SUFFIX)
              for i, n in enumerate(names) if n not in (BACK_ID, NONE_ID)}
    flip = rng.random(len(X)) < 0.5
    X = X.copy()
    X[flip] = X[flip, ::-1, ::-1]
    y = y.copy()
    y[flip] = [turned.get(int(v), int(v)) for v in y[flip]]
    return X, y


def _turned_index(names: Sequence[str]) -> list[int]:
    """For each class, the class of the same crop turned 180 degrees (itself for ``back``
    and ``__none__``)."""
    index = {n: i for i, n in enumerate(names)}
    return [i if n in (BACK_ID, NONE_ID) else
            index[n[:-len(ROTATED_SUFFIX)] if n.endswith(ROTATED_SUFFIX) else n + ROTATED_SUFFIX]
            for i, n in enumerate(names)]


def _turned_batch(X: Any, y: Any, flip: Any, turned: Any) -> tuple[Any, Any]:
    """A batch of BGR uint8 NHWC crops (torch, on any device) as the network takes them
    (RGB 0..1 NCHW), the crops where ``flip`` turned 180 degrees and their labels to the
    other orientation (``turned``: :func:`_turned_index`)."""
    import torch

    X = torch.where(flip[:, None, None, None], X.flip(1, 2), X)
    y = torch.where(flip, turned[y], y)
    return X.flip(3).permute(0, 3, 1, 2).float().div_(255.0), y


#: peak learning rate from random weights, and going on from trained ones (new crops of
#: the same cards: smaller steps)
LR = 0.004
LR_INIT = 0.001


def train(deck_folder: str | Path, out_dir: str | Path, *, per_card: int = 400,
          val_per_card: int = 20, minutes: float = 40.0, epochs: int = 60, batch: int = 128,
          seed: int = 11, jobs: int = 2, threads: int = 2, lr: float | None = None,
          render_dirs: Sequence[str | Path] = (), epoch_size: int = 40_000,
          init: str | Path | None = None, device: str = "cpu",
          rendered: tuple[np.ndarray, Sequence[str]] | None = None,
          rendered_val: tuple[np.ndarray, Sequence[str]] | None = None) -> dict[str, Any]:
    """Make the crops, train for ``minutes`` (or ``epochs``), export
    ``out_dir/card-net.onnx`` (input ``images`` (N, 3, 112, 64) RGB 0..1; output class
    probabilities; class names in the metadata ``names``) and write ``figures.json``.
    ``lr``: peak learning rate (default :data:`LR`, :data:`LR_INIT` going on from ``init``).
    ``rendered``: crops of rendered scenes already cut (BGR uint8, card-id labels), added
    to the training crops as ``render_dirs``' are; ``rendered_val``: such crops of scenes
    apart, by whose card-id accuracy the best epoch is chosen (the simulated validation
    crops saturate within a few epochs). ``device``: ``cuda`` holds every crop on the GPU
    and turns and converts each batch there."""
    import torch

    if not lr:
        lr = LR if init is None else LR_INIT

    torch.set_num_threads(max(1, int(threads)))
    torch.manual_seed(seed)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()

    def said(stage: str) -> Callable[[int, int], None]:
        return lambda k, n: log.info("%s crops: %d/%d chunks", stage, k, n)

    # caches for a second run in the same folder, named by what made them
    cache = out / f"crops-{per_card}-{val_per_card}-{seed}.npz"
    if cache.is_file():
        d = np.load(cache, allow_pickle=False)
        Xtr, ytr, Xva, yva = d["Xtr"], d["ytr"], d["Xva"], d["yva"]
        names = [str(n) for n in d["names"]]
    else:
        Xtr, labels, names = make_crops(deck_folder, per_card, seed, jobs, progress=said("train"))
        Xva, vlabels, _ = make_crops(deck_folder, val_per_card, seed + 5000, jobs,
                                     progress=said("validation"))
        ytr, yva = _label_index(labels, names), _label_index(vlabels, names)
        np.savez(cache, Xtr=Xtr, ytr=ytr, Xva=Xva, yva=yva, names=np.array(names))
    if render_dirs:
        key = hashlib.sha1("|".join(sorted(str(Path(d).resolve()) for d in render_dirs))
                           .encode("utf-8")).hexdigest()[:10]
        rcache = out / f"render-crops-{key}-{seed}.npz"
        if rcache.is_file():
            r = np.load(rcache, allow_pickle=False)
            Xr, rlabels = r["X"], [str(v) for v in r["y"]]
        else:
            from vision.synth.deck import load_deck

            Xr, rlabels = render_crops(render_dirs, load_deck(deck_folder).name, seed,
                                       progress=said("rendered scenes"))
            np.savez(rcache, X=Xr, y=np.array(rlabels))
        rendered = (Xr, rlabels) if rendered is None else (
            np.concatenate([rendered[0], Xr]), [*rendered[1], *rlabels])
    if rendered is not None and len(rendered[0]):
        Xr, yr = _known(rendered, names)
        Xtr, ytr = np.concatenate([Xtr, Xr]), np.concatenate([ytr, yr])
        log.info("%d crops of rendered scenes added", len(yr))
    Xrv: np.ndarray | None = None
    if rendered_val is not None and len(rendered_val[0]):
        Xrv, yrv = _turn(*_known(rendered_val, names), names, np.random.default_rng(seed + 2))
        log.info("%d crops of rendered scenes apart choose the best epoch", len(Xrv))
    t_data = time.perf_counter() - t0
    log.info("%d training and %d validation crops in %.0f s", len(Xtr), len(Xva), t_data)
    rng = np.random.default_rng(seed)
    Xva_t, yva_t = _turn(Xva, yva, names, np.random.default_rng(seed + 1))
    dev = torch.device(device)
    model = build_net(len(names), out)
    if init is not None:
        model.load_state_dict(torch.load(str(init), map_location="cpu"))
        log.info("going on from %s", init)
    model.to(dev)
    # every crop stays where the network runs (uint8: a GPU holds a million of them), and
    # each batch is turned and converted there
    Xtr_t = torch.from_numpy(Xtr).to(dev)
    ytr_t = torch.from_numpy(ytr).to(dev)
    turned = torch.tensor(_turned_index(names), device=dev)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    per_epoch = min(len(Xtr), int(epoch_size)) if epoch_size else len(Xtr)
    steps_per_epoch = math.ceil(per_epoch / batch)
    loss_fn = torch.nn.CrossEntropyLoss(label_smoothing=0.05)
    deadline = time.perf_counter() + minutes * 60.0 if minutes else float("inf")
    # the schedule is laid out for the epochs the time budget allows, measured on epoch 1
    planned = epochs
    history = []
    best: tuple[float, dict[str, Any] | None] = (-1.0, None)
    step = 0
    for epoch in range(epochs):
        te = time.perf_counter()
        model.train()
        pick = torch.from_numpy(rng.permutation(len(Xtr))[:per_epoch]).to(dev)
        flips = torch.from_numpy(rng.random(len(pick)) < 0.5).to(dev)
        total = torch.zeros((), device=dev)
        for b in range(steps_per_epoch):
            idx = pick[b * batch:(b + 1) * batch]
            if not len(idx):
                break
            frac = min(1.0, step / max(1, planned * steps_per_epoch))
            for g in opt.param_groups:  # warm-up then cosine
                g["lr"] = lr * min(1.0, (step + 1) / 300) * 0.5 * (1 + math.cos(math.pi * frac))
            xb, yb = _turned_batch(Xtr_t[idx], ytr_t[idx], flips[b * batch:(b + 1) * batch],
                                   turned)
            loss = loss_fn(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.detach() * len(idx)
            step += 1
        acc = evaluate(model, Xva_t, yva_t, names)
        if Xrv is not None:
            racc = evaluate(model, Xrv, yrv, names)
            acc.update({"rendered_top1": racc["top1"], "rendered_card_id": racc["card_id"]})
        secs = time.perf_counter() - te
        if epoch == 0 and minutes:
            planned = max(2, min(epochs, int((deadline - time.perf_counter()) / secs) + 1))
            log.info("epoch 1 took %.0f s: planning %d epochs", secs, planned)
        mean_loss = float(total) / len(pick)
        history.append({"epoch": epoch + 1, "loss": round(mean_loss, 4), **acc,
                        "seconds": round(secs)})
        log.info("epoch %d/%d: loss %.4f, validation top-1 %.4f (card id %.4f)%s", epoch + 1,
                 planned, mean_loss, acc["top1"], acc["card_id"],
                 "" if Xrv is None else f", rendered scenes apart top-1 "
                 f"{acc['rendered_top1']:.4f} (card id {acc['rendered_card_id']:.4f})")
        score = acc["top1"] if Xrv is None else acc["rendered_card_id"] + acc["rendered_top1"]
        if score >= best[0]:
            best = (score, {k: v.detach().to("cpu", copy=True)
                            for k, v in model.state_dict().items()})
            torch.save(best[1], str(out / "card-net-best.pt"))
            if dev.type == "cpu":  # the best so far is usable while training goes on
                export(copy.deepcopy(model), names, out / "card-net-best.onnx", meta={})
            model.train()
        if epoch + 1 >= planned:
            break
    if best[1] is not None:
        model.load_state_dict(best[1])
    model.to("cpu")
    onnx_path = export(model, names, out / "card-net.onnx",
                       meta={"deck_folder": str(deck_folder), "per_card": per_card,
                             "seed": seed})
    figures = {"crops_train": int(len(Xtr)), "crops_val": int(len(Xva)),
               "data_seconds": round(t_data), "train_seconds": round(time.perf_counter() - t0
                                                                     - t_data),
               "best_val_top1": max((h["top1"] for h in history), default=0.0),
               "best_score": round(best[0], 4), "epochs": history, "onnx": str(onnx_path)}
    (out / "figures.json").write_text(json.dumps(figures, indent=1), encoding="utf-8")
    return figures


def evaluate(model: Any, X: np.ndarray, y: np.ndarray, names: Sequence[str]) -> dict[str, float]:
    """Top-1 over the classes, and the card id alone (orientation ignored)."""
    import torch

    model.eval()
    dev = next(model.parameters()).device
    preds = []
    with torch.no_grad():
        for a in range(0, len(X), 1024):
            preds.append(model(_to_tensor(X[a:a + 1024]).to(dev)).argmax(1).cpu().numpy())
    p = np.concatenate(preds)
    base = np.array([n.removesuffix(ROTATED_SUFFIX) for n in names])
    return {"top1": round(float((p == y).mean()), 4),
            "card_id": round(float((base[p] == base[y]).mean()), 4)}


def export(model: Any, names: Sequence[str], path: Path, meta: dict[str, Any]) -> Path:
    import torch

    model.eval()
    for m in model.modules():  # the ultralytics head returns probabilities only when exporting
        if hasattr(m, "export"):
            m.export = True
    dummy = torch.zeros(2, 3, CROP_SIZE[1], CROP_SIZE[0])
    torch.onnx.export(model, dummy, str(path), input_names=["images"], output_names=["probs"],
                      dynamic_axes={"images": {0: "n"}, "probs": {0: "n"}}, opset_version=17,
                      dynamo=False)
    import onnx

    from vision.half_weights import halve

    m = onnx.load(str(path))
    for k, v in {"names": repr({i: n for i, n in enumerate(names)}),
                 "task": "card-identity", **{k: str(v) for k, v in meta.items()}}.items():
        p = m.metadata_props.add()
        p.key, p.value = k, v
    # shipped as trained: weights in float16, run in float32 (half the room, the same answers)
    halve(m, path)
    onnx.save(m, str(path))
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--deck", type=Path, required=True, help="deck folder (one image per card)")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--per-card", type=int, default=400)
    ap.add_argument("--minutes", type=float, default=40.0)
    ap.add_argument("--epochs", type=int, default=60)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--render", type=Path, action="append", default=[],
                    help="rendered scenes (companion synth folder) whose cards are cut and "
                         "added to the training crops (repeatable)")
    ap.add_argument("--epoch-size", type=int, default=40_000,
                    help="crops drawn per epoch (default 40000)")
    ap.add_argument("--init", type=Path, default=None, metavar="BEST_PT",
                    help="go on from these weights (a card-net-best.pt) instead of random ones")
    ap.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    ap.add_argument("--batch", type=int, default=128, help="crops a step (default 128)")
    ap.add_argument("--lr", type=float, default=None,
                    help="peak learning rate (default 0.004, 0.001 with --init)")
    a = ap.parse_args(argv)
    if not logging.getLogger().handlers:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    os.environ.setdefault("YOLO_OFFLINE", "1")
    fig = train(a.deck, a.out, per_card=a.per_card, minutes=a.minutes, epochs=a.epochs,
                seed=a.seed, jobs=a.jobs, threads=a.threads, render_dirs=a.render,
                epoch_size=a.epoch_size, init=a.init, lr=a.lr, device=a.device,
                batch=a.batch)
    print(json.dumps({k: v for k, v in fig.items() if k != "epochs"}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
