"""``companion enroll-deck``: build the card identifier's gallery from one scan or photo per card.

    companion enroll-deck FOLDER [--name NAME] [--out FILE.npz] [--per-card N] [--seed S]
                                 [--faces auto|scans|photos]

FOLDER holds one image per card named by card id (``cups-07.png``), optionally ``back.png``
and ``deck.json`` (see :mod:`vision.synth.deck`). Each image is a scan of the card or a photo
of it lying flat on a table, taken from above: the card is then found in the photo and cut
out square on (:mod:`vision.cards.face`; ``--faces`` says which, by default told apart by
their proportions). The gallery goes to
``$XDG_DATA_HOME/arcana-companion/decks/NAME.npz`` (NAME defaults to the deck's name) unless
``--out`` says otherwise; :func:`vision.cards.galleries.load_gallery` finds it by that name.
A shipped deck's name (``tarot``, ``rws-tarot``, ``decktet``) is refused there: ``--deck
tarot`` always means the shipped deck.
The same folder, ``--per-card`` and ``--seed`` give the same gallery.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from companion.commands.argtypes import check_output, positive_int, seed_arg, user_path
from vision.synth.deck import FACES

log = logging.getLogger(__name__)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "enroll-deck", help="teach the card identifier a deck from one scan or photo per card",
        description="Enroll a deck for card identification: every card's face (a scan, or "
                    "cut out of a photo of the card) is rendered many times as a camera might "
                    "see it (printing, light, blur, tilt, occluders) and the gallery is saved "
                    "for the table pipeline.")
    p.add_argument("folder", type=user_path, metavar="FOLDER",
                   help="deck folder: one scan or photo per card named by card id "
                        "(cups-07.jpg), optional back.png and deck.json")
    p.add_argument("--name", default=None,
                   help="name to save the gallery under (default: the deck's name)")
    p.add_argument("--out", type=user_path, default=None, metavar="FILE.npz",
                   help="gallery file to write (default $XDG_DATA_HOME/arcana-companion/decks/"
                        "NAME.npz, i.e. ~/.local/share/arcana-companion/decks/NAME.npz)")
    p.add_argument("--per-card", type=positive_int, default=40, metavar="N",
                   help="simulated views per card (default 40; fewer is faster and less robust)")
    p.add_argument("--faces", choices=FACES, default="auto",
                   help="what the images are: scans (each image is the card's face), photos "
                        "(each shows one card flat on a table, from above: it is found and "
                        "cut out) or auto (the default: an image in the card's own "
                        "proportions is a scan, any other a photo)")
    p.add_argument("--seed", type=seed_arg, default=0, help="augmentation seed (default 0)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def _not_shipped(name: str, out: Path | None) -> None:
    """A gallery saved under a shipped deck's name would never be found by it: ``--deck
    tarot`` keeps meaning the shipped one (:data:`vision.pipeline.SHIPPED_DECKS`)."""
    from vision.cards.identify import GalleryError
    from vision.pipeline import SHIPPED_DECKS

    if out is None and name in SHIPPED_DECKS:
        raise GalleryError(f"the name {name!r} is a shipped deck's (--deck {name} always "
                           f"means that one): pass another with --name, e.g. my-{name}")


def run(args: argparse.Namespace) -> int:
    from vision.cards.galleries import check_name, gallery_path
    from vision.cards.identify import GalleryError, enroll, look_alikes
    from vision.synth.deck import load_deck
    from vision.synth.generate import Progress

    # Check the name and the folder before the long part, so a typo fails at once. Loading
    # decodes every image (and finds the card in each photo); enroll takes the loaded deck.
    if args.name is not None:
        check_name(args.name)
        _not_shipped(args.name, args.out)
    if args.faces != "scans":
        log.info("reading %s (a card is looked for in each photo)", args.folder)
    deck = load_deck(args.folder, faces=args.faces)
    name = args.name if args.name is not None else deck.name
    _not_shipped(name, args.out)
    if args.out is not None:
        out = args.out.expanduser()
        if out.is_dir():
            raise GalleryError(f"--out {str(out)!r} is a folder; give a file name such as "
                               f"{name}.npz")
    else:
        try:
            out = gallery_path(name)
        except GalleryError:
            raise GalleryError(f"the deck's name {name!r} cannot be a file name; pass --name "
                               "or --out") from None
    read = [*deck.files.values(), *([deck.back_file] if deck.back_file else []),
            deck.folder / "deck.json"]
    replacing = check_output(out, "card gallery", _is_gallery, read,
                             given=args.out is not None)
    if replacing is not None:
        print(f"{replacing} (enrolled from {_source_of(out)})", file=sys.stderr)
    _writable_folder(out)
    n_cards = len(deck.ids)
    back = "its back image" if deck.back_file is not None else "procedural backs"
    if deck.photos:
        # the folder was read on loading (every image decoded), so each photo is cut already
        for cid, share in sorted(deck.photos.items()):
            log.info("%s: a photo; the card cut out of it covered %.0f%% of it", cid,
                     100 * share)
        scans = len(deck.ids) + (deck.back_file is not None) - len(deck.photos)
        print(f"{len(deck.photos)} image(s) read as photos, the card found and cut out of "
              f"each" + (f"; {scans} as scans" if scans else ""), file=sys.stderr)
    print(f"enrolling {n_cards} cards of deck {deck.name!r} ({deck.card_size_mm[0]:g} x "
          f"{deck.card_size_mm[1]:g} mm, {back}), {args.per_card} views per card, "
          f"seed {args.seed}", file=sys.stderr)

    bar = Progress(n_cards, "enroll", force=not args.no_progress)
    if args.no_progress:
        bar.enabled = False
    t0 = time.perf_counter()

    def progress(stage: str, done: int, total: int) -> None:
        if stage == "cards":
            bar.update(done - bar.done)
            # without a terminal the bar is silent: leave a trace in the log instead
            if not bar.enabled and (done == total or done % 10 == 0):
                log.info("augmented %d/%d cards (%.1f s)", done, total,
                         time.perf_counter() - t0)
        elif stage == "fit":
            bar.close()
            print(f"fitting the projection ({time.perf_counter() - t0:.1f} s so far) ...",
                  file=sys.stderr)

    gallery = enroll(deck, per_card=args.per_card, seed=args.seed, progress=progress)
    if args.name is not None:
        gallery.deck_name = args.name
    elapsed = time.perf_counter() - t0
    try:
        gallery.save(out)
    except OSError as exc:
        raise GalleryError(f"cannot write gallery {str(out)!r}: {exc.strerror or exc}"
                           ) from None
    size = out.stat().st_size
    backs = "its back" if deck.back_file is not None else "procedural backs"
    print(f"enrolled {n_cards} cards (+ {backs}) as {name!r} in {elapsed:.1f} s; "
          f"wrote {out} ({_size(size)})")
    left_out = _left_out(deck.ids)
    if left_out:
        # (the gallery names what it knows: a face it was never shown is nearer to some
        # enrolled card, or to the backs, than to nothing)
        print(f"warning: {left_out}: a card of those lying face up will be read as another "
              "card or as face down, often surely; enroll every card that can come to the "
              "table", file=sys.stderr)
    for a, b in look_alikes(gallery, deck):
        # enrolled all the same: a deck may hold two cards alike, but more often one image
        # was saved under two names
        print(f"warning: {a} and {b} look alike to the gallery: it may take one for the "
              "other; check that their images are of two different cards", file=sys.stderr)
    return 0


def _writable_folder(out: Path) -> None:
    """The gallery's folder made, and found writable, before the long part: a folder that
    cannot be (XDG_DATA_HOME set wrong, a read-only disk) was said only once every card
    had been augmented and the projection fitted."""
    from companion.core.files import refusal_words
    from vision.cards.identify import GalleryError

    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise GalleryError(f"cannot write gallery {str(out)!r}: its folder cannot be made "
                           f"({refusal_words(exc)})") from None
    if not os.access(out.parent, os.W_OK):
        raise GalleryError(f"cannot write gallery {str(out)!r}: its folder is not writable")


def _left_out(ids: Sequence[str]) -> str:
    """What a deck of some of the tarot's or the Decktet's cards leaves out ("70 of the
    tarot's 78 cards are not enrolled"), or "" for a whole deck or another deck."""
    from vision.synth.deck import DECKTET_IDS, TAROT_IDS

    have = set(ids)
    for name, whole in (("tarot", TAROT_IDS), ("Decktet", DECKTET_IDS)):
        if have < set(whole):
            n = len(whole) - len(have)
            return (f"{n} of the {name}'s {len(whole)} cards {'is' if n == 1 else 'are'} "
                    "not enrolled")
    return ""


def _is_gallery(path: Path) -> bool:
    """A gallery of any version or state (an .npz with its meta; the program says to enroll
    a bad one again)."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as z:
            return "meta.npy" in z.namelist()
    except (OSError, zipfile.BadZipFile):
        return False


def _source_of(path: Path) -> str:
    """The folder a gallery file says it was enrolled from."""
    from vision.cards.identify import Gallery, GalleryError

    try:
        return str((Gallery.load(path).meta or {}).get("deck_folder", "an unknown folder"))
    except (GalleryError, OSError):
        return "a folder it no longer says (an older or damaged gallery)"


def _size(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 1e6 else f"{n / 1e3:.0f} kB"
