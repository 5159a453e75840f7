"""The main job end to end: ``companion demo --headless`` with the real vision pipeline.

Every frame of the bundled sample game goes through calibration, the card detector, the card
gallery and the pyramid finder; the session must accept exactly the scripted moves, flag the
scripted illegal move with its rule, and end with the true final scores.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from companion.cli import main


def test_demo_with_vision_referees_the_sample_game(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["demo", "--headless", "--observations", "vision", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert "observations: vision" in out
    assert "ILLEGAL" in out and "wands.upright" in out
    assert "script check: 22 accepted moves match game.json; final scores match" in out
    assert "final scores: red 9, blue 11, green 5" in out
    assert code == 0
    assert (tmp_path / "game.db").is_file() and (tmp_path / "moves.txt").is_file()
