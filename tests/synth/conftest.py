"""Fixtures for the synthetic renderer tests (``shared`` and ``tarot`` are in
``tests/conftest.py``). Card art comes from shared/decks, never from the repository."""

from __future__ import annotations

import numpy as np
import pytest

cv2 = pytest.importorskip("cv2")

from calibration.mat import DEFAULT_MAT  # noqa: E402


@pytest.fixture(scope="session")
def decktet(shared):
    from vision.synth.deck import load_deck

    return load_deck(shared / "decks" / "decktet")


@pytest.fixture()
def mat():
    return DEFAULT_MAT


@pytest.fixture()
def two_tone_deck(tmp_path_factory):
    """A custom deck whose cards are red in the top half of the art and blue below."""
    from vision.synth.deck import load_deck

    d = tmp_path_factory.mktemp("deck")
    img = np.zeros((240, 140, 3), np.uint8)
    img[:120] = (30, 30, 230)
    img[120:] = (230, 60, 30)
    img[:, :6] = img[:, -6:] = 255
    img[:6] = img[-6:] = 255
    cv2.imwrite(str(d / "top-red.png"), img)
    (d / "deck.json").write_text('{"name": "two-tone", "card_size_mm": [70, 120], '
                                 '"cards": ["top-red"]}')
    return load_deck(d)
