"""int8 copies of the pyramid finder's closer-patch readers: size, pointing, white or clear,
and colour (:mod:`vision.pyramids.train_size` trains all four), and of its verifiers.

The four are plain stacks of 3x3 convolutions with batch norm and ReLU
(:func:`vision.pyramids.train_size.build_net`), which onnxruntime runs in int8 end to end. On
this project's 2-core Xeon (one thread, batches of 16 training-seed patches) a patch took
88-105 us in int8 against 212-254 us in float. The first convolution stays in float: on three
input channels int8 is slower than float (the heat map's stem shows the same), and it is the
layer whose rounding moved the answers most (the size and pointing readers' top class agreed
with the float file's on 99.55 and 99.40% of held-out patches with it quantised, 99.70 and
99.68% without; measuring the ranges on 4,096 patches instead of 1,024, entropy calibration,
or the last layer in float changed nothing).

Static quantisation (QDQ, weights per channel in 7 bits for CPUs without VNNI, as the heat
map's; activations uint8), the activations' ranges measured on patches cut as the readers see
them (:func:`vision.pyramids.train_size.cut`'s ``patches``). Needs the ``onnx`` package (the
``train`` and ``test`` extras); ``companion train pyramid-size`` (and the other three) writes
the copy itself, on its own cut. By hand::

    python -m vision.pyramids.quantize --patches runs/pt/size.npz models/pyramids-size.onnx \
        models/pyramids-point.onnx models/pyramids-white-clear.onnx \
        models/pyramids-color-read.onnx

Each writes ``NAME.int8.onnx`` beside ``NAME.onnx`` (metadata kept, ``quantized_from``
added), and checks it against the float file on patches of other scenes of the cut. The
finder runs the copies (``READERS_INT8`` in :mod:`vision.pyramids.find`).

The verifiers (:mod:`vision.pyramids.verify`, the tarot's and the Decktet's) have int8
copies too, measured on their own cut (``samples.npz`` of python -m
vision.pyramids.train_verify, whose patches and features are what the finder feeds them),
with the head in float as well as the first convolution (:data:`VERIFIER_FLOAT_OPS`); the
finder runs them (``VERIFIER_INT8``), and ``companion train pyramid-verify`` writes the copy
itself. By hand::

    python -m vision.pyramids.quantize --verifier-samples runs/bver/all/samples.npz \
        models/pyramids-verify.onnx
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from vision.pyramids.classifier import int8_name, network_input

log = logging.getLogger(__name__)

#: patches the activations' ranges are measured on (4,096 made no closer copies)
CALIBRATION_PATCHES = 1024
BATCH = 16


def int8_path(src: Path) -> Path:
    """``NAME.int8.onnx`` beside ``NAME.onnx``."""
    return src.with_name(int8_name(src.name))


def calibration_inputs(cut: Path, input_name: str, count: int = CALIBRATION_PATCHES,
                       half: int = 0) -> list[dict[str, np.ndarray]]:
    """Batches of network inputs (``{input_name: (n, 3, h, w)}``) for ``count`` patches drawn
    at random from the size readers' cut ``cut`` (its ``patches``). ``half`` 0 draws from the
    scenes whose number ends in 0-4, 1 from the others (a check sees other scenes than the
    measurement)."""
    with np.load(cut) as data:
        if "patches" not in data.files:
            raise ValueError(f"{cut}: no patches in it (a cut of python -m "
                             "vision.pyramids.train_size)")
        every = data["patches"]      # an .npz member is read whole at each access: once
        if len(every) == 0:
            raise ValueError(f"{cut}: its patches are empty")
        pick = _draw(data, len(every), count, half)
        patches = network_input(every[pick])
    return [{input_name: np.ascontiguousarray(patches[a:a + BATCH])}
            for a in range(0, len(pick), BATCH)]


def _draw(data: Any, n: int, count: int, half: int) -> np.ndarray:
    """Sorted indices of ``count`` of a cut's ``n`` samples drawn at random (seed ``half``),
    from its scenes whose number ends in 0-4 (``half`` 0) or in 5-9 (1) where ``data`` (the
    open .npz) numbers them in ``scene``, else from all."""
    pool = np.arange(n)
    if "scene" in data.files:
        part = np.flatnonzero((np.asarray(data["scene"]) % 10 >= 5) == bool(half))
        pool = part if len(part) else pool
    rng = np.random.default_rng(half)
    out: np.ndarray = np.sort(rng.choice(pool, min(count, len(pool)), replace=False))
    return out


def static_int8(src: Path, dst: Path, feeds: Iterable[dict[str, np.ndarray]],
                float_convs: int = 0, float_ops: tuple[str, ...] = ()) -> Path:
    """The int8 copy of the ONNX file ``src`` at ``dst``: onnxruntime's static quantisation
    (QDQ, weights per channel in 7 bits, activations uint8), the activations' ranges measured
    on ``feeds`` (network inputs by name); the first ``float_convs`` convolutions stay in
    float, and so do the nodes of the types ``float_ops``. The metadata is kept, and
    ``quantized_from`` names ``src``. The heat map's copy
    (:func:`vision.pyramids.train_heat.quantize`), the readers' and the verifiers' are made
    here.

    Weights in 7 bits (``reduce_range``): on a CPU without VNNI (AVX2 alone) onnxruntime's
    uint8 x int8 kernels add pairs of products in 16 bits, which full-range weights overflow
    (models/pyramids-heat.md)."""
    import onnx
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                          quantize_static)
    from onnxruntime.quantization.shape_inference import quant_pre_process

    meta = {p.key: p.value for p in onnx.load(str(src)).metadata_props}

    class Feeds(CalibrationDataReader):
        def __init__(self) -> None:
            self.left = iter(feeds)

        def get_next(self) -> dict[str, np.ndarray] | None:
            return next(self.left, None)

    pre = dst.with_name(dst.name + ".pre")
    try:
        quant_pre_process(str(src), str(pre))
        nodes = onnx.load(str(pre)).graph.node
        convs = [n.name for n in nodes if n.op_type == "Conv"]
        kept = convs[:float_convs] + [n.name for n in nodes if n.op_type in float_ops]
        quantize_static(str(pre), str(dst), Feeds(), quant_format=QuantFormat.QDQ,
                        per_channel=True, reduce_range=True,
                        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                        nodes_to_exclude=kept)
    finally:
        pre.unlink(missing_ok=True)
    out = onnx.load(str(dst))
    onnx.helper.set_model_props(out, {**meta, "quantized_from": src.name})
    onnx.save(out, str(dst))
    return dst


def quantize(src: Path, batches: list[dict[str, np.ndarray]], dst: Path | None = None) -> Path:
    """The int8 copy of the patch reader ``src`` at ``dst`` (default :func:`int8_path`), its
    activations' ranges measured on ``batches`` (:func:`calibration_inputs`); the first
    convolution stays in float."""
    if not batches:
        raise ValueError("no patches to measure the activations on")
    dst = static_int8(src, dst or int8_path(src), batches, float_convs=1)
    log.info("wrote %s (%d bytes, int8 but the first convolution, %d patches measured)",
             dst, dst.stat().st_size, sum(len(x) for b in batches for x in b.values()))
    return dst


def int8_copy(src: Path, cut: Path, count: int = CALIBRATION_PATCHES) -> Path:
    """The int8 copy of the reader ``src`` beside it (:func:`int8_path`), its activations
    measured on ``count`` patches of ``cut`` (the training run's own cut)."""
    return quantize(src, calibration_inputs(cut, _input_name(src), count, half=0))


def _input_name(src: Path) -> str:
    from models import ModelError, open_onnx

    inputs = open_onnx(src)[0].get_inputs()
    if len(inputs) != 1:
        raise ModelError(f"model file {src}: {len(inputs)} inputs, expected one patch input "
                         "(a size, pointing, white-or-clear or colour reader)")
    return str(inputs[0].name)


def _answers(path: Path, batches: list[dict[str, np.ndarray]]) -> np.ndarray:
    """The first output of the ONNX file ``path`` on each of ``batches``, one after
    another."""
    from models import open_onnx

    session = open_onnx(path)[0]
    out: np.ndarray = np.concatenate([session.run(None, x)[0] for x in batches])
    return out


def agreement(src: Path, dst: Path, batches: list[dict[str, np.ndarray]]) -> dict[str, float]:
    """How the int8 copy ``dst`` answers against the float ``src`` on ``batches``: the share
    of patches with the same top class, and the largest and 99th-percentile difference of a
    probability."""
    a, b = _answers(src, batches), _answers(dst, batches)
    d = np.abs(a - b)
    return {"same": float((a.argmax(1) == b.argmax(1)).mean()), "max_diff": float(d.max()),
            "p99_diff": float(np.quantile(d, 0.99))}


#: the node types the verifier's int8 copy keeps in float beside its first convolution: its
#: head (three small Gemm layers over the pooled patch and the thirteen features) costs
#: little, and quantised with the rest it moved the answers half as far again (on 5,132
#: inputs the finder gave it on other scenes, p 99th percentile 0.10 apart against 0.07; an
#: earlier copy so made turned true pyramids away at VERIFY_MIN, ``models/pyramids-verify.md``)
VERIFIER_FLOAT_OPS = ("Gemm",)


def verifier_batches(cut: Path, patch_mm: float, count: int = CALIBRATION_PATCHES,
                     half: int = 0) -> list[dict[str, np.ndarray]]:
    """Batches of the verifier's inputs (``{"patch": ..., "features": ...}``) for ``count``
    samples drawn at random from the verifier's cut ``cut`` (``samples.npz`` of python -m
    vision.pyramids.train_verify: its patches spanning ``patch_mm`` and their features),
    from the scenes whose number ends in 0-4 (``half`` 0) or in 5-9 (1), as
    :func:`calibration_inputs` draws."""
    return _verifier_draws(cut, patch_mm, [(count, half)])[0]


def _verifier_draws(cut: Path, patch_mm: float, draws: list[tuple[int, int]]
                    ) -> list[list[dict[str, np.ndarray]]]:
    """:func:`verifier_batches` for each (count, half) of ``draws``, the cut read once (its
    patches can be gigabytes, and an .npz member is read whole at each access)."""
    key = f"patches{patch_mm:g}"
    with np.load(cut) as data:
        if key not in data.files or "features" not in data.files:
            raise ValueError(f"{cut}: no {key} and features in it (a cut of python -m "
                             f"vision.pyramids.train_verify --spans {patch_mm:g})")
        feats = np.asarray(data["features"], np.float32)
        if len(feats) == 0:
            raise ValueError(f"{cut}: its samples are empty")
        picks = [_draw(data, len(feats), count, half) for count, half in draws]
        every = data[key]
    out = []
    for pick in picks:
        patches = network_input(every[pick])
        out.append([{"patch": np.ascontiguousarray(patches[a:a + BATCH]),
                     "features": np.ascontiguousarray(feats[pick[a:a + BATCH]])}
                    for a in range(0, len(pick), BATCH)])
    return out


def verifier_int8(src: Path, cut: Path, count: int = CALIBRATION_PATCHES, check: int = 4000,
                  dst: Path | None = None) -> tuple[Path, dict[str, float]]:
    """The int8 copy of the verifier ``src`` (default beside it, :func:`int8_path`), its
    activations' ranges measured on ``count`` samples of its cut ``cut``
    (:func:`verifier_batches`), its first convolution and its head
    (:data:`VERIFIER_FLOAT_OPS`) in float; and how it answers against ``src`` on ``check``
    samples of the other scenes (:func:`verifier_agreement`; none for 0)."""
    from vision.pyramids.verify import Verifier

    span = Verifier(src).patch_mm
    drawn = _verifier_draws(cut, span, [(count, 0)] + ([(check, 1)] if check else []))
    dst = static_int8(src, dst or int8_path(src), drawn[0], float_convs=1,
                      float_ops=VERIFIER_FLOAT_OPS)
    log.info("wrote %s (%d bytes, int8 but the first convolution and the head)", dst,
             dst.stat().st_size)
    if not check:
        return dst, {}
    return dst, verifier_agreement(src, dst, drawn[1])


def verifier_agreement(src: Path, dst: Path, batches: list[dict[str, np.ndarray]]
                       ) -> dict[str, float]:
    """How the verifier's int8 copy ``dst`` answers against the float ``src`` on ``batches``:
    the largest, 99th-percentile and median difference of p(pyramid), and the share of
    inputs that the two put on different sides of the finder's floor
    (:data:`vision.pyramids.find.VERIFY_MIN`)."""
    from vision.pyramids.find import VERIFY_MIN

    a, b = (1.0 / (1.0 + np.exp(-_answers(path, batches).astype(np.float64).reshape(-1)))
            for path in (src, dst))
    d = np.abs(a - b)
    return {"max_diff": float(d.max()), "p99_diff": float(np.quantile(d, 0.99)),
            "median_diff": float(np.median(d)),
            "across_floor": float(((a >= VERIFY_MIN) != (b >= VERIFY_MIN)).mean())}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vision.pyramids.quantize",
                                 description="int8 copies of the pyramid patch readers and of "
                                 "the pyramid verifier")
    ap.add_argument("models", type=Path, nargs="+", help="float ONNX files")
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--patches", type=Path,
                     help="readers: the size readers' cut (.npz) of python -m "
                     "vision.pyramids.train_size")
    src.add_argument("--verifier-samples", type=Path, metavar="CUT",
                     help="verifiers: the verifier's cut (samples.npz) of python -m "
                     "vision.pyramids.train_verify")
    ap.add_argument("--count", type=int, default=CALIBRATION_PATCHES)
    ap.add_argument("--check", type=int, default=4000,
                    help="other patches of the cut to compare int8 with float on (0: none)")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    from models import ModelError

    # the readers' patches drawn once per input name, not once per reader and half (the
    # cut can be gigabytes, and each draw reads it whole): the same draws, so the same copies
    drawn: dict[str, tuple[list[dict[str, np.ndarray]], list[dict[str, np.ndarray]]]] = {}
    for src_file in args.models:
        try:
            if args.verifier_samples:
                dst, agree = verifier_int8(src_file, args.verifier_samples, args.count,
                                           args.check)
                log.info("%s against %s: %s", dst.name, src_file.name,
                         {k: round(v, 4) for k, v in agree.items()})
                continue
            name = _input_name(src_file)
            if name not in drawn:
                drawn[name] = (
                    calibration_inputs(args.patches, name, args.count, half=0),
                    calibration_inputs(args.patches, name, args.check, half=1)
                    if args.check else [])
            measure, check = drawn[name]
            dst = quantize(src_file, measure)
            if check:
                log.info("%s against %s: %s", dst.name, src_file.name, {
                    k: round(v, 4) for k, v in agreement(src_file, dst, check).items()})
        except (ModelError, ValueError, OSError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
