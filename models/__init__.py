"""Shipped model files (ONNX weights, card galleries), each with a model card beside it.

Found through :mod:`importlib.resources`, so they work from a checkout, an editable install
or a wheel alike.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

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
