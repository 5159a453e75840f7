"""Shipped model files (ONNX weights, card galleries), each with a model card beside it.

Found through :mod:`importlib.resources`, so they work from a checkout, an editable install
or a wheel alike.
"""

from __future__ import annotations

import ast
from importlib import resources
from pathlib import Path
from typing import Any

from companion.core.errors import CompanionError


class ModelError(CompanionError, ValueError):
    """A model file that is missing, unreadable or not the kind of model expected."""


def model_path(name: str) -> Path:
    """The path of the shipped model file ``name`` (e.g. ``"cards-obb.onnx"``).

    Raises :class:`ModelError` naming the file when it is not shipped."""
    ref = resources.files(__name__).joinpath(name)
    path = Path(str(ref))
    if not path.is_file():
        raise ModelError(f"model file {name!r} is missing from {path.parent} "
                         "(reinstall the package, or train it: see models/README.md)")
    return path


def first_line(exc: BaseException) -> str:
    """What a loader's exception says, for a message naming the file: onnx's and
    onnxruntime's run to many lines, and the first says what is wrong (at most 200
    characters; the exception's type where it says nothing)."""
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]


def open_onnx(path: str | Path, threads: int = 1) -> tuple[Any, dict[str, str], list[str]]:
    """(onnxruntime session on the CPU, the model's metadata, its class names) of the ONNX
    file ``path``; the names come from the ``names`` metadata (``{0: "a", ...}``, empty when
    absent or unreadable). Raises :class:`ModelError` naming the file when it is missing or
    cannot be loaded."""
    import onnxruntime as ort

    path = Path(path)
    if not path.is_file():
        raise ModelError(f"model file {path} is missing")
    try:
        so = ort.SessionOptions()
        so.intra_op_num_threads = max(1, int(threads))
        so.inter_op_num_threads = 1
        so.log_severity_level = 3
        session = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime raises its own untyped errors
        raise ModelError(f"model file {path}: cannot be loaded ({first_line(exc)})") from None
    meta = dict(session.get_modelmeta().custom_metadata_map)
    try:
        names_map = ast.literal_eval(meta.get("names", "{}"))
        names = [str(names_map[i]) for i in range(len(names_map))]
    except (ValueError, SyntaxError, KeyError, TypeError):
        names = []
    return session, meta, names
