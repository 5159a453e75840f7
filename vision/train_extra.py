"""Whether the ``train`` extra is installed whole, asked before any training starts.

``pip install ultralytics`` alone brings torch but not ``onnx``, which every export needs:
without this check a run trained for its whole budget and then failed at the export.
"""

from __future__ import annotations

import importlib.util

#: the packages training needs (the ``train`` extra of pyproject.toml, and the torch that
#: ultralytics brings); ``sympy`` only for the int8 copies' shape inference
TRAIN_PACKAGES = ("torch", "ultralytics", "onnx", "sympy")
#: what the networks built in plain torch need (the pyramid heat map, verifier and readers):
#: no ultralytics
TORCH_PACKAGES = ("torch", "onnx", "sympy")
#: what each model of ``companion train`` needs
MODEL_PACKAGES: dict[str, tuple[str, ...]] = {
    "cards": TRAIN_PACKAGES, "card-net": TRAIN_PACKAGES, "pyramids": TRAIN_PACKAGES,
    "pyramid-heat": TORCH_PACKAGES, "pyramid-verify": TORCH_PACKAGES,
    "pyramid-size": TORCH_PACKAGES, "pyramid-white-clear": TORCH_PACKAGES,
    "pyramid-point": TORCH_PACKAGES, "pyramid-color-read": TORCH_PACKAGES}


def missing_train_packages(packages: tuple[str, ...] = TRAIN_PACKAGES) -> list[str]:
    """The ones of ``packages`` that cannot be imported here (looked up, not imported:
    importing torch takes seconds)."""
    missing = []
    for name in packages:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            missing.append(name)
    return missing


def train_extra_problem(packages: tuple[str, ...] = TRAIN_PACKAGES) -> str | None:
    """What to say when part of the train extra is missing, else None."""
    missing = missing_train_packages(packages)
    if not missing:
        return None
    return (f"training needs the train extra ({', '.join(missing)} missing): "
            "pip install -e '.[train]'")
