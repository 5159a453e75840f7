"""What models/ ships: each weights file listed in models/README.md with its model card, and
all of them together under the issue's 30 MB."""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

MODELS = Path(str(resources.files("models")))
WEIGHTS = (".onnx", ".npz")
LIMIT_BYTES = 30_000_000


def _shipped() -> list[Path]:
    return sorted(p for p in MODELS.iterdir() if p.suffix in WEIGHTS)


def test_every_shipped_file_is_listed_with_a_model_card_that_exists():
    rows = {}
    for line in (MODELS / "README.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and cells[0].startswith("`"):
            rows[cells[0].strip("`")] = re.findall(r"`([^`]+\.md)`", cells[2])
    for path in _shipped():
        assert path.name in rows, f"{path.name} is not in models/README.md's table"
        assert rows[path.name], f"{path.name}: no model card named in models/README.md"
        for card in rows[path.name]:
            assert (MODELS / card).is_file(), f"{path.name}: model card {card} is missing"
    for name in rows:
        assert (MODELS / name).is_file(), f"models/README.md lists {name}, not shipped"


def test_the_shipped_models_fit_in_30_mb():
    total = sum(p.stat().st_size for p in _shipped())
    assert 1_000_000 < total < LIMIT_BYTES, f"models/ ships {total / 1e6:.1f} MB"


def test_a_loaders_complaint_is_quoted_by_its_first_line_or_its_type() -> None:
    from models import first_line

    assert first_line(RuntimeError("Protobuf parsing failed.\n  at node 3\n")) == \
        "Protobuf parsing failed."
    assert first_line(RuntimeError("")) == "RuntimeError"
    assert first_line(ValueError("x" * 500)) == "x" * 200
