"""Training the card detector with ultralytics (the ``train`` extra), then exporting ONNX.

Never imported at run time: ``companion train`` imports this module, and this module imports
ultralytics only inside :func:`train_card_detector`. Nothing is downloaded: the model is
built from its YAML (``pretrained=False``), ``YOLO_OFFLINE=1`` is set, plots are off.

Steps: render scenes (``vision.synth``) with separate seeds for training and validation,
rectify them into the detector's canvas with labels (:mod:`vision.detection.dataset`),
train YOLO11n-OBB, export ONNX with a fixed square input, and write the model card's
figures from the validation run.
"""

from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from calibration.mat import DEFAULT_MAT, Mat

log = logging.getLogger(__name__)


@dataclass
class CardTrainConfig:
    out: Path
    imgsz: int = 384
    epochs: int = 30
    hours: float | None = None        # wall-clock budget; overrides epochs when given
    batch: int = 16
    workers: int = 2
    train_sets: list[Path] = field(default_factory=list)   # synth folders for training
    val_sets: list[Path] = field(default_factory=list)     # synth folders for validation
    model_yaml: str = "yolo11n-obb.yaml"
    device: str = "cpu"
    seed: int = 0
    mat: Mat = DEFAULT_MAT
    init: Path | None = None          # go on from these weights (a best.pt), not the YAML
    lr0: float | None = None


#: training canvases the batch norms of a detector rebuilt from ONNX take their statistics from
BN_CANVASES = 64
#: the first learning rate when going on from trained weights and none is given (AdamW)
INIT_LR0 = 0.0005


def _hold_batch_norms(trainer: Any) -> None:
    """Going on from trained weights, the batch norms keep their statistics (their weight
    and bias still learn): a CPU batch of 16 canvases, most of them bare table, normalised
    by its own mean and spread, computes something other than the network that was trained
    (ultralytics sets the model to training mode at each epoch, so this runs each batch)."""
    import torch

    for m in trainer.model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.eval()


def build_dataset(cfg: CardTrainConfig, progress: Any = None) -> Path:
    """Rectified images and labels under ``cfg.out/data``; returns the data.yaml path."""
    from vision.detection.dataset import export_folder, write_yaml

    data = Path(cfg.out) / "data"
    for split, sets in (("train", cfg.train_sets), ("val", cfg.val_sets)):
        for folder in sets:
            s = export_folder(folder, data, split, cfg.imgsz, cfg.mat, progress=progress)
            log.info("%s: %d images (%d skipped), %d cards from %s", split, s.images,
                     s.skipped, s.cards, folder)
    return write_yaml(data)


def _epochs_run(results_csv: Path) -> int:
    """Epochs finished, from ultralytics' per-epoch results table."""
    try:
        lines = results_csv.read_text(encoding="utf-8").strip().splitlines()
    except OSError:
        return 0
    return max(0, len(lines) - 1)


def train_card_detector(cfg: CardTrainConfig, data_yaml: Path) -> dict[str, Any]:
    """Train, validate and export; returns the figures for the model card."""
    os.environ.setdefault("YOLO_OFFLINE", "1")
    from ultralytics import YOLO  # the train extra

    from vision.half_weights import store_half

    out = Path(cfg.out).resolve()
    init = cfg.init
    if init is not None and Path(init).suffix.lower() == ".onnx":
        # an exported detector (the shipped one has no best.pt beside it): its weights,
        # rebuilt into the network it was exported from, its batch norms given the
        # statistics of this run's own training canvases (recover.calibrate_batch_norms)
        from vision.detection.recover import (calibrate_batch_norms, canvases_from, rebuild,
                                              save_checkpoint)

        net = rebuild(Path(init))
        calibrate_batch_norms(net, canvases_from(Path(data_yaml).parent / "images" / "train",
                                                 BN_CANVASES, cfg.imgsz, cfg.seed))
        init = save_checkpoint(net, out / "init-from-onnx.pt", cfg.imgsz)
        log.info("card detector: going on from %s (rebuilt as %s)", cfg.init, init)
    model = YOLO(str(init) if init else cfg.model_yaml, task="obb")
    if cfg.init is not None:
        model.add_callback("on_train_batch_start", _hold_batch_norms)
    t0 = time.monotonic()
    kwargs: dict[str, Any] = dict(
        data=str(data_yaml), imgsz=cfg.imgsz, epochs=cfg.epochs, batch=cfg.batch,
        workers=cfg.workers, device=cfg.device, pretrained=cfg.init is not None, plots=False,
        project=str(out), name="run", exist_ok=True, seed=cfg.seed, deterministic=False,
        # the canvas has a fixed scale and the table's orientation is arbitrary: rotate and
        # flip freely, hardly rescale, no colour-space surprises beyond the renderer's own
        degrees=180.0, flipud=0.5, fliplr=0.5, scale=0.1, translate=0.1, mosaic=0.5,
        close_mosaic=3, hsv_h=0.02, amp=False, val=True, patience=100, verbose=False)
    if cfg.hours:
        kwargs["time"] = float(cfg.hours)
    if cfg.lr0 is not None or cfg.init is not None:
        # ultralytics' "auto" optimiser ignores lr0 (AdamW at 0.002 for short runs); with a
        # named one, the warm-up would start every bias at a learning rate of 0.1 (auto: 0)
        kwargs["optimizer"] = "AdamW"
        kwargs["lr0"] = float(cfg.lr0 if cfg.lr0 is not None else INIT_LR0)
        kwargs["warmup_bias_lr"] = 0.0
    if cfg.init is not None:
        kwargs["warmup_epochs"] = 0.5   # going on from trained weights: a short warm-up
    model.train(**kwargs)
    train_s = time.monotonic() - t0
    best = out / "run" / "weights" / "best.pt"
    trained = YOLO(str(best), task="obb")
    metrics = trained.val(data=str(data_yaml), imgsz=cfg.imgsz, batch=cfg.batch,
                          device=cfg.device, plots=False, verbose=False)
    onnx_path = Path(trained.export(format="onnx", imgsz=cfg.imgsz, dynamic=False,
                                    simplify=False, opset=17))
    # the shipped form: weights stored in float16, computed in float32 (vision.half_weights)
    final = store_half(onnx_path, out / "cards-obb.onnx")
    box = metrics.box
    figures = {"mAP50": float(box.map50), "mAP50-95": float(box.map),
               "precision": float(box.mp), "recall": float(box.mr),
               "train_seconds": round(train_s), "imgsz": cfg.imgsz,
               "epochs_run": _epochs_run(out / "run" / "results.csv"),
               "onnx_bytes": final.stat().st_size,
               "config": {k: str(v) for k, v in asdict(cfg).items() if k != "mat"}}
    (out / "figures.json").write_text(json.dumps(figures, indent=1) + "\n")
    log.info("card detector: %s", figures)
    return figures
