"""Fixtures shared by the test folders: the reference card art from shared/decks (never from
the repository; tests that need it skip when that folder is not there) and the shipped
pyramid finder; and, for every test, folders of its own for saved settings and games."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(autouse=True)
def own_config_and_data(tmp_path_factory: pytest.TempPathFactory,
                        monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads or writes the user's saved camera file, colour profile, decks or games:
    each gets empty folders of its own (a test may point them elsewhere)."""
    home = tmp_path_factory.mktemp("xdg")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))


@pytest.fixture(scope="session")
def shared() -> Path:
    from vision.synth.deck import shared_dir

    sd = shared_dir()
    if sd is None or not (sd / "decks" / "rws-tarot").is_dir():
        pytest.skip("shared/decks not found (set ARCANA_SHARED)")
    return sd


@pytest.fixture(scope="session")
def tarot(shared: Path) -> Any:
    from vision.synth.deck import load_deck

    return load_deck(shared / "decks" / "rws-tarot")


@pytest.fixture(scope="module")
def finder() -> Any:
    """The shipped pyramid finder, one per test module (it keeps the last camera's maps)."""
    from calibration.mat import DEFAULT_MAT
    from models import ModelError
    from vision.pyramids import PyramidFinder

    try:
        return PyramidFinder(DEFAULT_MAT)
    except ModelError as exc:
        pytest.skip(f"pyramid models not shipped: {exc}")
