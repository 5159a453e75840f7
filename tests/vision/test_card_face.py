"""A card's face from a photo of it (vision.cards.face), for enroll-deck: the card found on a
table, cut out square on and upright; scans left as they are; a photo with no card a clear
error. Photos are drawn by vision.synth.photos from the shared scans, seeded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

cv2 = pytest.importorskip("cv2")

from vision.cards.face import card_face, find_card  # noqa: E402
from vision.synth.deck import DeckError, load_deck  # noqa: E402
from vision.synth.photos import card_photo  # noqa: E402

PLAIN = ("cloth", "felt", "wood")


def _aspect(deck: Any) -> float:
    return float(deck.card_size_mm[1] / deck.card_size_mm[0])


def _likeness(face: np.ndarray, art: np.ndarray) -> float:
    """Correlation of the two pictures' grey levels at a small common size."""
    a, b = (cv2.resize(x, (35, 60), interpolation=cv2.INTER_AREA).astype(np.float32).mean(2)
            for x in (face, art))
    a, b = (a - a.mean()) / (a.std() + 1e-6), (b - b.mean()) / (b.std() + 1e-6)
    return float((a * b).mean())


@pytest.mark.parametrize("name", ["rws-tarot", "decktet"])
def test_every_shared_scan_is_left_as_it_is(shared: Path, name: str) -> None:
    # a scan holds rectangles of a card's proportions (its art's frame): auto must not cut
    deck = load_deck(shared / "decks" / name, faces="auto")
    for cid in deck.ids:
        deck.image(cid)
    assert deck.photos == {}
    art = deck.image(deck.ids[0])
    assert card_face(art, _aspect(deck), "scans")[1] is None


@pytest.mark.parametrize("name,upright", [("rws-tarot", True), ("rws-tarot", False),
                                          ("decktet", True)])
def test_a_photographed_card_is_found_and_cut_upright(shared: Path, name: str,
                                                      upright: bool) -> None:
    deck = load_deck(shared / "decks" / name)
    rng = np.random.default_rng(11 + upright)
    right = 0
    ids = deck.ids[::7][:8]
    for cid in ids:
        art = deck.image(cid)
        photo, corners = card_photo(rng, art, deck.card_size_mm, upright=upright,
                                    surfaces=PLAIN)
        outline = find_card(photo, _aspect(deck))
        assert outline is not None, cid
        long_px = float(np.linalg.norm(corners[0] - corners[3]))
        right += float(np.abs(outline.corners - corners).max()) <= 0.02 * long_px
        face, how = card_face(photo, _aspect(deck), "auto")
        assert how is not None                     # 4:3: taken for a photo
        assert face.shape[0] > face.shape[1]       # portrait
        assert abs(face.shape[0] / face.shape[1] / _aspect(deck) - 1) < 0.02
        # upright, the art's top at row 0 (a card lying across had its top to the left)
        # (some Decktet cards look nearly the same both ways up: no fixed margin)
        assert _likeness(face, art) > max(0.6, _likeness(face, art[::-1, ::-1])), cid
    assert right >= len(ids) - 2


def test_no_card_in_the_photo_is_a_clear_error() -> None:
    rng = np.random.default_rng(3)
    table = np.full((900, 1200, 3), (60, 110, 70), np.uint8)
    table = cv2.add(table, rng.normal(0, 4, table.shape).clip(-10, 10).astype(np.int8),
                    dtype=cv2.CV_8U)
    for faces in ("auto", "photos"):
        with pytest.raises(ValueError, match="no card found in the photo"):
            card_face(table, 1.4, faces)
    assert card_face(table, 1.4, "scans")[0] is table
    with pytest.raises(ValueError, match="faces must be"):
        card_face(table, 1.4, "pictures")


def test_a_deck_folder_of_scans_and_photos(shared: Path, tmp_path: Path) -> None:
    """Two scans, two photos and a picture of an empty table: the loader cuts the photos,
    keeps the scans, and names the image with no card in it."""
    tarot = load_deck(shared / "decks" / "rws-tarot")
    ids = list(tarot.ids[:4])
    folder = tmp_path / "mixed"
    folder.mkdir()
    rng = np.random.default_rng(5)
    for k, cid in enumerate(ids):
        art = tarot.image(cid)
        if k < 2:
            cv2.imwrite(str(folder / f"{cid}.png"), art)
        else:
            photo, _ = card_photo(rng, art, tarot.card_size_mm, surfaces=PLAIN)
            cv2.imwrite(str(folder / f"{cid}.jpg"), photo)
    (folder / "deck.json").write_text(json.dumps({"name": "mixed", "cards": ids,
                                                  "card_size_mm": [70, 120]}))
    deck = load_deck(folder, faces="auto")
    assert sorted(deck.photos) == ids[2:]
    assert all(0.05 < share < 0.6 for share in deck.photos.values())
    for cid in ids[2:]:
        assert _likeness(deck.image(cid), tarot.image(cid)) > 0.5
    # as scans the photos are taken whole
    assert load_deck(folder, faces="scans").photos == {}
    # an image of the table alone
    cv2.imwrite(str(folder / f"{ids[3]}.jpg"), np.full((900, 1200, 3), 90, np.uint8))
    with pytest.raises(DeckError, match=rf"{ids[3]}\.jpg: no card found in the photo"):
        load_deck(folder, faces="auto")
    with pytest.raises(DeckError, match="faces must be one of"):
        load_deck(folder, faces="pictures")


def test_two_cards_in_one_photo_are_named_as_such(tarot: Any) -> None:
    photo = np.full((1200, 1600, 3), (40, 90, 50), np.uint8)
    for k, x0 in enumerate((250, 900)):
        art = cv2.resize(tarot.image(tarot.ids[k]), (350, 600), interpolation=cv2.INTER_AREA)
        photo[300:900, x0:x0 + 350] = art
    photo = cv2.GaussianBlur(photo, (0, 0), 1.0)
    outline = find_card(photo, _aspect(tarot))
    assert outline is not None and outline.rivals == 1
    with pytest.raises(ValueError, match="shows 2 cards or more: photograph one card"):
        card_face(photo, _aspect(tarot), "photos")


def test_a_card_at_the_photos_edge_is_said_to_be_there(shared: Path) -> None:
    """A whole card 12 px from the top of a 1600x1200 photo is closer than the edge margin:
    it was "no card found in the photo", as if there were none."""
    deck = load_deck(shared / "decks" / "rws-tarot")
    art = cv2.resize(deck.image(deck.ids[5]), (400, 686), interpolation=cv2.INTER_AREA)
    photo = np.full((1200, 1600, 3), (60, 120, 50), np.uint8)
    photo[12:12 + 686, 600:1000] = art
    with pytest.raises(ValueError, match="the card found reaches the photo's edge, or nearly"):
        card_face(photo, _aspect(deck), "photos")
    moved = np.full_like(photo, (60, 120, 50))
    moved[200:200 + 686, 600:1000] = art
    assert card_face(moved, _aspect(deck), "photos")[1] is not None
