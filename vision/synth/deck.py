"""Decks of card art: where the images are, what size the cards are, which ids exist.

A deck is a folder of images named by card id (shared/spec/table.md), e.g. ``cups-07.jpg``
or ``decktet-ace-moons.png``, optionally with ``back.png`` (the back art) and ``deck.json``::

    {"name": "my-deck", "card_size_mm": [70, 120], "cards": ["cups-01", ...], "back": "back.png"}

Without ``deck.json`` the kind is recognised from the file names: the 78 tarot ids (card
size 70 x 120 mm) or the 45 Decktet ids (63.5 x 89 mm). The card size is a deck setting;
nothing in the geometry code assumes one. Deck art is never copied into the repository:
the default folder is ``shared/decks`` next to the repository (or ``$ARCANA_SHARED/decks``).
"""

from __future__ import annotations

import json
import logging
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from companion.core.cards import tarot_deck
from companion.core.files import JsonTextError, given_path, read_json
from vision.synth.errors import DeckError, SceneError

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    import numpy as np

BACK_ID = "back"

TAROT_SIZE_MM = (70.0, 120.0)
DECKTET_SIZE_MM = (63.5, 89.0)
#: no playing card is longer than this (mm): a size past it is a typo (or infinite); the
#: largest decks sold (5 x 8 in oracle cards, 127 x 203 mm) fit
MAX_CARD_MM = 250.0
#: nor shorter than this each way (mm): mini tarot is 44 x 70 mm; [7, 12] is centimetres
MIN_CARD_MM = 30.0

_DECKTET_NAMES = (
    "ace-knots", "ace-leaves", "ace-moons", "ace-suns", "ace-waves", "ace-wyrms",
    "2-author", "2-desert", "2-origin", "3-journey", "3-painter", "3-savage",
    "4-battle", "4-mountain", "4-sailor", "5-discovery", "5-forest", "5-soldier",
    "6-lunatic", "6-market", "6-penitent", "7-castle", "7-cave", "7-chance-meeting",
    "8-betrayal", "8-diplomat", "8-mill", "9-darkness", "9-merchant", "9-pact",
    "crown-knots", "crown-leaves", "crown-moons", "crown-suns", "crown-waves", "crown-wyrms",
    "court-consul", "court-island", "court-rite", "court-window",
    "pawn-borderland", "pawn-harvest", "pawn-light-keeper", "pawn-watchman", "excuse",
)
DECKTET_IDS: tuple[str, ...] = tuple(f"decktet-{n}" for n in _DECKTET_NAMES)
TAROT_IDS: tuple[str, ...] = tarot_deck()
#: a card's art is kept at most this many pixels on its long side (a tarot card 4 px/mm in
#: a 4K render of the whole table is under 500 px tall; the shared scans are 600)
MAX_ART_PX = 2000
#: the ids a card file may be named by, in any case and with _ for - (:func:`_card_id_of`)
_KNOWN_IDS = frozenset(TAROT_IDS) | frozenset(DECKTET_IDS) | {BACK_ID}


def shared_dir(repo_root: Path | None = None) -> Path | None:
    """The shared folder: ``$ARCANA_SHARED`` if set, else ``shared/`` beside or above the repo."""
    env = os.environ.get("ARCANA_SHARED")
    if env:
        return Path(env)
    root = repo_root or Path(__file__).resolve().parents[2]
    for cand in (root / "shared", root.parent / "shared", root.parent.parent / "shared"):
        if (cand / "decks").is_dir():
            return cand
    return None


#: what a deck folder's images may be (:attr:`Deck.faces`)
FACES = ("scans", "photos", "auto")


def default_deck_dir(name: str = "rws-tarot") -> Path:
    """``<shared>/decks/<name>``; raises :class:`DeckError` when no shared folder is found."""
    sd = shared_dir()
    if sd is None:
        raise DeckError("cannot find the shared decks folder: pass --deck DIR or set "
                        "ARCANA_SHARED to the folder that holds decks/")
    return sd / "decks" / name


@dataclass
class Deck:
    """A validated deck folder. Images are decoded lazily and cached (BGR uint8)."""

    name: str
    folder: Path
    card_size_mm: tuple[float, float]  # (width, height) of a card, portrait
    files: dict[str, Path]             # card id -> image file
    back_file: Path | None = None
    kind: str = "custom"               # "tarot", "decktet" or "custom"
    # what the images are: "scans" (each is the card's face), "photos" (a card is found in
    # each and cut out square on) or "auto" (a scan when in the card's proportions), see
    # vision.cards.face
    faces: str = "scans"
    # card id -> share of its photo the card covered, for each image read as a photo
    photos: dict[str, float] = field(default_factory=dict)
    # a card's art (an array), or its halvings under "#levels:" + id (a list of arrays)
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(self.files)

    @property
    def lattice_pitch_mm(self) -> float:
        """Zarcana lattice pitch: (w + h) / 2."""
        return (self.card_size_mm[0] + self.card_size_mm[1]) / 2.0

    def check_id(self, card_id: str) -> None:
        """Raise :class:`SceneError` naming an id this deck has no art for."""
        if card_id == BACK_ID or card_id in self.files:
            return
        hint = ""
        if self.kind == "tarot":
            from companion.core.cards import card_info
            try:
                card_info(card_id)
            except Exception as exc:  # NotationError: say why the id is bad
                hint = f" ({exc})"
        raise SceneError(f"unknown card id {card_id!r}: deck {self.name!r} in {self.folder} "
                         f"has no such card{hint}")

    def image(self, card_id: str) -> np.ndarray:
        """The art of ``card_id`` (BGR uint8, portrait, art top at row 0)."""
        import cv2

        with self._lock:
            img: np.ndarray | None = self._cache.get(card_id)
        if img is not None:
            return img
        if card_id == BACK_ID:
            if self.back_file is None:
                raise DeckError(f"deck {self.name!r} has no back art")
            path = self.back_file
        else:
            self.check_id(card_id)
            path = self.files[card_id]
        img = _read(path)
        if self.faces != "scans":
            img = self._face(card_id, path, img)
        h, w = img.shape[:2]
        if w > h:  # landscape scan: turn to portrait, top to the left
            img = cv2.rotate(img, cv2.ROTATE_90_CLOCKWISE)
        if max(h, w) > MAX_ART_PX:
            # kept at a size no render or enrollment needs more of: 78 scans at 1200 dpi
            # held 5.2 GB
            s = MAX_ART_PX / max(h, w)
            img = cv2.resize(img, (max(1, round(img.shape[1] * s)),
                                   max(1, round(img.shape[0] * s))),
                             interpolation=cv2.INTER_AREA)
        with self._lock:
            self._cache[card_id] = img
        return img

    def _face(self, card_id: str, path: Path, img: np.ndarray) -> np.ndarray:
        """The card's face in ``img``: the image itself for a scan, the card cut out of a
        photo (:func:`vision.cards.face.card_face`)."""
        from vision.cards.face import card_face

        w, h = self.card_size_mm
        try:
            face, outline = card_face(img, h / w, self.faces)
        except ValueError as exc:
            raise DeckError(f"card image {path}: {exc}") from None
        if outline is not None:
            with self._lock:
                self.photos[card_id] = outline.share
        return face

    def image_at_least(self, card_id: str, height: int) -> np.ndarray:
        """The art at the smallest cached size (halvings of the scan) at least ``height`` px
        tall, so that resampling it to ``height`` is cheap and does not alias."""
        import cv2

        levels: list[np.ndarray] | None = self._cache.get("#levels:" + card_id)
        if levels is None:
            img = self.image(card_id)
            levels = [img]
            while levels[-1].shape[0] >= 80:
                prev = levels[-1]
                levels.append(cv2.resize(prev, (max(2, prev.shape[1] // 2),
                                                max(2, prev.shape[0] // 2)),
                                         interpolation=cv2.INTER_AREA))
            with self._lock:
                self._cache["#levels:" + card_id] = levels
        for lvl in levels[::-1]:
            if lvl.shape[0] >= height:
                return lvl
        return levels[0]

    def validate_images(self) -> None:
        """Decode every image; :class:`DeckError` lists all the unreadable ones."""
        bad = []
        for cid in list(self.files) + ([BACK_ID] if self.back_file else []):
            try:
                self.image(cid)
            except DeckError as exc:
                bad.append(str(exc))
        if bad:
            raise DeckError(f"deck {self.name!r} has {len(bad)} unreadable image(s): "
                            + "; ".join(bad[:8]) + (" ..." if len(bad) > 8 else ""))
        if self.faces == "scans":
            self._warn_unlike_scans()

    def _warn_unlike_scans(self) -> None:
        """Say which images taken as scans are not shaped like the deck's cards: photos of
        them (table and all), taken whole as the card's face, stretched to its shape, with
        no word (``--faces auto`` finds the card in each)."""
        w, h = self.card_size_mm
        odd = []
        for cid in list(self.files) + ([BACK_ID] if self.back_file else []):
            ih, iw = self.image(cid).shape[:2]      # (portrait, as every face is kept)
            if abs((ih / iw) / (h / w) - 1.0) > SCAN_SHAPE_TOLERANCE:
                odd.append(f"{cid} ({iw} x {ih})")
        if odd:
            log.warning("deck %r: %d image(s) taken as scans are not shaped like its %g x %g mm "
                        "cards: %s%s; photos of the cards? (--faces auto or photos finds the "
                        "card in each)", self.name, len(odd), w, h, ", ".join(odd[:5]),
                        " ..." if len(odd) > 5 else "")


#: how far a scan's height over width may differ from the card's (a share) before it is said
#: to be unlike one: the shared scans are within 0.2%, a 4:3 photo of a tarot card 22% off
SCAN_SHAPE_TOLERANCE = 0.1


def _read(path: Path) -> np.ndarray:
    """A scan or photo of a card, through the one reader of pictures (cut short, damaged,
    too large: each named)."""
    from calibration.images import ImageError, read_image

    try:
        img = read_image(path)
    except ImageError as exc:
        why = str(exc).removeprefix(f"{path}: ")
        raise DeckError(f"card image {path} is not a readable image ({why})") from None
    if img.shape[0] < 8 or img.shape[1] < 8:
        raise DeckError(f"card image {path} is not a readable image ({img.shape[1]} x "
                        f"{img.shape[0]} pixels)")
    return img


def _card_id_of(stem: str, listed: set[Any]) -> str:
    """The card id a file name's stem stands for: a tarot or Decktet id (or ``back``) however
    a scanner or a camera spelt it (``CUPS-07``, ``Cups_07``), else the stem as it is (a
    deck.json may list its own ids, which are taken as written)."""
    if stem in listed:
        return stem
    key = stem.lower().replace("_", "-")
    return key if key in _KNOWN_IDS else stem


def _not_a_card_id(card_id: str) -> str | None:
    """What is wrong with an id of a tarot or Decktet card's form that is no such card
    (``cups-15``, ``major-22``, ``decktet-ace-stars``: shared/spec/table.md), else None. An
    id of another form is a custom deck's own, taken as written."""
    import re

    from companion.core.cards import EXTRA_CARDS

    if card_id in _KNOWN_IDS:
        return None
    if (spelt := card_id.lower().replace("_", "-")) in _KNOWN_IDS:
        return f"card id {card_id!r} is written {spelt!r} (shared/spec/table.md)"
    head = card_id.split("-", 1)[0].lower()
    if re.fullmatch(r"(wands|cups|swords|pentacles)-\d+", card_id, re.IGNORECASE):
        return (f"card id {card_id!r} is not a tarot card: a suit card's rank is 01 to 14, "
                f"two digits ({head}-01 to {head}-14)")
    if re.fullmatch(r"major-\d+", card_id, re.IGNORECASE):
        return (f"card id {card_id!r} is not a tarot card: the major arcana are major-00 "
                "(the Fool) to major-21 (the World), two digits")
    if head == "decktet":
        return (f"card id {card_id!r} is not a Decktet card: the Decktet's ids are "
                f"{DECKTET_IDS[0]} to {DECKTET_IDS[-1]} (shared/decks/decktet)")
    if head == "extra" and card_id not in EXTRA_CARDS:
        return (f"card id {card_id!r} is not an extra card: those are "
                f"{', '.join(sorted(EXTRA_CARDS))}")
    return None


def load_deck(folder: str | Path | None = None, *, card_size_mm: tuple[float, float] | None = None,
              validate: bool = True, faces: str = "scans") -> Deck:
    """Open and check a deck folder (default: the shared RWS tarot).

    ``faces``: what the images are (:attr:`Deck.faces`: ``"scans"``, ``"photos"`` or
    ``"auto"``). Errors (:class:`DeckError`) name the folder and the missing or unreadable
    cards, and the photos with no card found in them.
    """
    # (here, not at the top: the CLI reads FACES from this module at every start, and the
    # image module brings OpenCV)
    from calibration.images import IMAGE_SUFFIXES

    if faces not in FACES:
        raise DeckError(f"faces must be one of {', '.join(FACES)}; got {faces!r}")
    path = given_path(folder) if folder is not None else default_deck_dir()
    if not path.is_dir():
        raise DeckError(f"deck folder {str(path)!r} does not exist or is not a folder")
    meta: dict[str, Any] = {}
    meta_file = path / "deck.json"
    if meta_file.exists():
        try:
            # (read as the mat file is: a byte-order mark, as Windows' Notepad saves, is fine)
            meta = read_json(meta_file)
            if not isinstance(meta, dict):
                raise ValueError("expected a JSON object")
        except JsonTextError as exc:
            raise DeckError(f"deck file {meta_file} {exc}") from None
        except (OSError, ValueError) as exc:
            raise DeckError(f"deck file {meta_file} is not valid: {exc}") from None
    found: dict[str, Path] = {}
    try:
        listed = sorted(path.iterdir())
    except OSError as exc:
        raise DeckError(f"deck folder {str(path)!r} cannot be read "
                        f"({exc.strerror or exc})") from None
    listed_ids = ({c for c in meta["cards"] if isinstance(c, str)}
                  if isinstance(meta.get("cards"), list) else set())
    for f in listed:
        if f.suffix.lower() in IMAGE_SUFFIXES and f.is_file():
            stem = _card_id_of(f.stem, listed_ids)
            if stem in found:
                # which of the two is the card? taking one quietly could enroll the wrong art
                raise DeckError(f"deck folder {str(path)!r} has two images of {stem!r}: "
                                f"{found[stem].name} and {f.name}; keep one")
            found[stem] = f
    back = found.pop(BACK_ID, None)
    if isinstance(meta.get("back"), str):
        back = path / meta["back"]
        if not back.is_file():
            raise DeckError(f"deck {path}: back image {back.name!r} named in deck.json is missing")
    if "cards" in meta:
        cards = meta["cards"]
        if (not isinstance(cards, list) or not cards
                or not all(isinstance(c, str) and c for c in cards)):
            raise DeckError(f"deck file {meta_file}: cards must be a list of card ids "
                            f"(the image names without their suffix), got {cards!r}")
        if len(set(cards)) < len(cards):
            twice = sorted({c for c in cards if cards.count(c) > 1})
            raise DeckError(f"deck file {meta_file}: cards names {', '.join(twice)} twice")
        expected = tuple(cards)
        kind = str(meta.get("kind", "custom"))
    elif any(s.startswith("decktet-") for s in found):
        expected, kind = DECKTET_IDS, "decktet"
    elif any(s in TAROT_IDS for s in found):
        expected, kind = TAROT_IDS, "tarot"
    elif not found:
        raise DeckError(f"deck folder {str(path)!r} holds no card images "
                        f"({', '.join(IMAGE_SUFFIXES)} named by card id)")
    else:
        expected, kind = tuple(found), "custom"
    for c in expected:
        if (bad := _not_a_card_id(c)) is not None:
            where = f"deck file {meta_file}" if "cards" in meta else f"deck folder {str(path)!r}"
            raise DeckError(f"{where}: {bad}")
    missing = [c for c in expected if c not in found]
    if missing:
        more = f" and {len(missing) - 10} more" if len(missing) > 10 else ""
        # the images there that are named by no card id are most likely the missing ones
        # under another spelling (cups-1.jpg for cups-01)
        strays = [found[c].name for c in found if c not in expected]
        hint = (f"; these images are named by no card id of the deck: {', '.join(strays[:10])}"
                f"{' and more' if len(strays) > 10 else ''}" if strays else "")
        # (a deck of fewer cards says which in its deck.json: its "cards" list)
        subset = ("" if "cards" in meta else
                  "; to enroll only some cards, list them as \"cards\" in a deck.json there")
        raise DeckError(f"deck folder {str(path)!r} is missing {len(missing)} card image(s): "
                        f"{', '.join(missing[:10])}{more}{hint}{subset}")
    files = {c: found[c] for c in expected}
    sized = f"deck {path}: card size"
    if card_size_mm is None:
        if "card_size_mm" in meta:
            sized = f"deck file {meta_file}: card_size_mm"
            try:
                w, h = (float(v) for v in meta["card_size_mm"])
            except (TypeError, ValueError):
                raise DeckError(f"deck file {meta_file}: card_size_mm must be [width, height] "
                                "in mm") from None
            card_size_mm = (w, h)
        else:
            card_size_mm = DECKTET_SIZE_MM if kind == "decktet" else TAROT_SIZE_MM
    w, h = card_size_mm
    if not (MIN_CARD_MM <= w <= h <= MAX_CARD_MM):
        raise DeckError(f"{sized} must be width <= height, both from "
                        f"{MIN_CARD_MM:g} to {MAX_CARD_MM:g} mm (a card's size in "
                        f"millimetres, not centimetres or inches); got {card_size_mm}")
    # (the folder's own name also for "." or "..", which name no deck; a link keeps its
    # own name, not its target's)
    named = Path(os.path.abspath(path)).name
    name = meta.get("name", named)
    if not isinstance(name, str):
        # ("name": null was enrolled as 'None', the saved gallery None.npz)
        raise DeckError(f"deck file {meta_file}: name must be the deck's name in quotes "
                        f"(e.g. \"my-tarot\"), got {json.dumps(name)}")
    deck = Deck(name=name, folder=path, card_size_mm=(w, h),
                files=files, back_file=back, kind=kind, faces=faces)
    if validate:
        deck.validate_images()
    return deck
