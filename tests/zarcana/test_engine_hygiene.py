"""The engine stands alone (no camera, GUI or ML imports), and every rule of the catalogue
is exercised by a test of this suite."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from companion.games.zarcana.rules import all_rules

HEAVY = {"cv2", "onnxruntime", "PySide6", "torch", "ultralytics"}


def test_engine_imports_no_heavy_modules():
    code = ("import companion.games.zarcana, companion.games.zarcana.engine, sys; "
            f"bad = sorted(m for m in sys.modules if m.split('.')[0] in {sorted(HEAVY)!r}); "
            "assert not bad, bad")
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


#: catalogue entries the engine never emits (its step-shape check covers them), or that no
#: consistent position can reach
NOT_REACHABLE = {
    "card.no-power": "not emitted by the engine",
    "wands.steps": "not emitted: a wrong number of moves is step.shape",
    "swords.steps": "not emitted: a wrong number of attacks is step.shape",
    "hierophant.territory": "not emitted: an attack step for the Hierophant is step.shape",
    "start.no-small": "a player with no pyramid on the board has all the smalls in the stash",
}


def test_every_rule_is_tested():
    here = Path(__file__).parent
    text = "\n".join(p.read_text() for p in here.glob("test_*.py"))
    text += "\n".join(p.read_text() for p in (here.parent / "data" / "zarcana").glob("*"))
    missing = [r.id for r in all_rules()
               if r.id not in NOT_REACHABLE and not re.search(rf"['\"]{re.escape(r.id)}['\"]", text)]
    assert missing == []


def test_unreachable_rules_are_in_the_catalogue():
    ids = {r.id for r in all_rules()}
    assert set(NOT_REACHABLE) <= ids
