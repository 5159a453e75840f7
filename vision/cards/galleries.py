"""Where enrolled card galleries live, and loading one by name or by path.

``companion enroll-deck`` writes ``$XDG_DATA_HOME/arcana-companion/decks/NAME.npz``
(default ``~/.local/share/arcana-companion/decks/NAME.npz``); the table pipeline asks for a
deck by that name, or by the path of any gallery file.
"""

from __future__ import annotations

import os
import re
import zipfile
from pathlib import Path

from companion.core.files import given_path
from vision.cards.identify import Gallery, GalleryError

APP_DIR = "arcana-companion"
SUFFIX = ".npz"
#: A gallery name becomes a file name: letters, digits, '.', '_' and '-', no leading dot
#: (no hidden files, no path tricks such as '..').
_NAME = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9._-]{0,99}$")


def data_dir() -> Path:
    """``$XDG_DATA_HOME/arcana-companion`` (default ``~/.local/share/arcana-companion``)."""
    base = os.environ.get("XDG_DATA_HOME")
    # the XDG spec says a relative value is invalid and must be ignored
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".local" / "share"
    return root / APP_DIR


def gallery_dir() -> Path:
    return data_dir() / "decks"


def check_name(name: str) -> str:
    """``name`` if it can be a gallery's file name, else :class:`GalleryError`."""
    if not _NAME.match(name):
        raise GalleryError(f"deck name {name!r} cannot be a file name: use letters, digits, "
                           "'.', '_' and '-' (e.g. rws-tarot)")
    return name


def gallery_path(name: str) -> Path:
    """The file of the gallery called ``name`` in the user data dir."""
    return gallery_dir() / (check_name(name) + SUFFIX)


def list_galleries() -> list[str]:
    """Names of the galleries in the user data dir."""
    d = gallery_dir()
    if not d.is_dir():
        return []
    return sorted(f.stem for f in d.iterdir() if f.suffix == SUFFIX and f.is_file())


def resolve(name_or_path: str | Path) -> Path:
    """A path (it has a directory part or ends in ``.npz``, or is an existing file) as is;
    anything else is a gallery name."""
    text = str(name_or_path)
    p = given_path(text).expanduser()
    if isinstance(name_or_path, Path) or os.sep in text or "/" in text \
            or text.endswith(SUFFIX) or p.is_file():
        return p
    return gallery_path(text)


def load_gallery(name_or_path: str | Path) -> Gallery:
    """Load a gallery by name (from :func:`gallery_dir`) or by path; a missing name says
    which galleries there are."""
    path = resolve(name_or_path)
    if not path.is_file() and path.parent == gallery_dir():
        have = list_galleries()
        known = (f"enrolled decks: {', '.join(have)}" if have
                 else f"no deck is enrolled in {gallery_dir()}")
        raise GalleryError(f"no enrolled deck {path.stem!r} ({known}); enroll it with "
                           "'companion enroll-deck FOLDER'")
    try:
        return Gallery.load(path)
    except (zipfile.BadZipFile, EOFError) as exc:
        # a truncated or damaged .npz: Gallery.load only expects what np.load raises for a
        # file that is not an archive at all
        raise GalleryError(f"card gallery {str(path)!r} is damaged ({exc}): enroll again"
                           ) from None
