"""Writing a file whole or not at all.

A saved game, an export, a camera file, a colour profile or a card gallery that a crash or
a full disk cuts short would be worse than none: the next load fails, or reads half of what
was meant. So each is written to a temporary file beside its destination and moved into
place in one step (:func:`os.replace`, atomic on one file system); a failed write leaves
the old file as it was and no temporary file behind. A link is followed to the file it
names, a pipe or a device is written to as it is, and the file keeps its mode.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Self, TypeVar

from companion.core.errors import CompanionError


if TYPE_CHECKING:
    _ConcretePath = Path
else:
    _ConcretePath = type(Path())    # (Path itself cannot be subclassed before Python 3.12)


_P = TypeVar("_P", bound=Path)


class GivenPath(_ConcretePath):
    """A path the user named, whose ``str`` is as they typed it: ``Path`` drops ``./`` and
    ``//``, and a message naming ``odd/x.jpg`` for ``./odd//x.jpg`` sends them looking for
    a file they never named. Paths made from it (its parent, a file in it) keep the typed
    spelling as far as it goes: ``wrote ./odd//mat.json``, not ``wrote odd/mat.json``."""

    _typed: str | None = None

    def __str__(self) -> str:
        return self._typed if self._typed is not None else super().__str__()

    def __truediv__(self, key: str | os.PathLike[str]) -> Self:
        made = super().__truediv__(key)
        if self._typed is None or Path(key).anchor:
            return made     # (``/x``, ``C:x``: a path of its own, not a name in this one)
        sep = "" if self._typed.endswith(("/", os.sep)) else "/"
        return _typed_as(self._typed + sep + os.fspath(key), made)

    def joinpath(self, *keys: str | os.PathLike[str]) -> Self:
        out = self
        for key in keys:
            out = out / key
        return out

    @property
    def parent(self) -> Self:
        made = super().parent
        if self._typed is None:
            return made
        cut = max(self._typed.rfind("/"), self._typed.rfind(os.sep))
        if cut < 0:
            return made     # (``x.jpg``'s folder is ``.``, typed or not)
        return _typed_as(self._typed[:cut] or self._typed[0], made)

    def with_name(self, name: str) -> Self:
        # (with_stem goes through here)
        return self._in_typed_folder(super().with_name(name))

    def with_suffix(self, suffix: str) -> Self:
        return self._in_typed_folder(super().with_suffix(suffix))

    def _in_typed_folder(self, made: _P) -> _P:
        """``made``, a file in this path's folder, spelt with the folder as typed."""
        if self._typed is None:
            return made
        cut = max(self._typed.rfind("/"), self._typed.rfind(os.sep))
        return _typed_as(self._typed[:cut + 1] + made.name, made)

    def __reduce__(self) -> tuple[Any, ...]:
        # (kept as typed in another process too: the pyramid finder's reads the profile)
        return given_path, (str(self),)


def given_path(path: Path | str) -> Path:
    """``path`` as a :class:`Path`, a text kept as typed for messages (:class:`GivenPath`);
    where ``Path(path)`` would drop what a path already kept. Trailing separators are left
    out (``photos/`` is ``photos``): the system takes ``x.jpg/`` for a folder, where
    ``Path`` opens the file."""
    if isinstance(path, Path):
        return path
    out = GivenPath(path)
    shown = path
    while shown[1:].endswith(("/", os.sep)) or shown.endswith(("/.", os.sep + ".")):
        shown = shown[:-1]
    if shown and Path(shown) == out:
        out._typed = shown
    return out


def _typed_as(typed: str, made: _P) -> _P:
    """``made`` spelt ``typed``, where that is the same path (else as ``Path`` spells it)."""
    out = given_path(typed)
    return out if out == made else made


@contextmanager
def atomic_file(path: Path, binary: bool = False) -> Iterator[IO[Any]]:
    """``with atomic_file(path) as fh:`` what is written to ``fh`` (text in UTF-8, or bytes
    with ``binary``) becomes ``path`` when the block ends without an error, and nothing
    does otherwise. The folder must exist; an ``OSError`` is raised as it came, for the
    caller to word."""
    given = Path(path)
    real = os.path.realpath(given)
    if (given.exists() and not given.is_file()) or _a_stream(str(given)) or _a_stream(real):
        # a pipe or a device, or a process's own stream (/dev/stdout, /dev/null,
        # /proc/self/fd/1): written to as it is; a file moved over it would put a plain
        # file in its place, or replace what the stream was appending to
        fd = _own_stream(str(given))
        if fd is not None:
            # this process's own stream: written through a copy of its descriptor, since
            # opening the name anew would truncate the file it appends to
            handle = os.dup(fd)
            direct: IO[Any] = (os.fdopen(handle, "wb") if binary
                               else os.fdopen(handle, "w", encoding="utf-8"))
        else:
            direct = open(given, "wb") if binary else open(given, "w", encoding="utf-8")
        with direct:
            yield direct
        return
    path = Path(real)   # a link to a file is written through, not replaced
    # the mode the file has, or a new file would get (mkstemp's is 0600: an export shared
    # with other players would be unreadable to them)
    mode = path.stat().st_mode & 0o7777 if path.exists() else 0o666 & ~_umask()
    # (the temporary name is the file's, cut short: a name near the file system's 255
    # bytes, with mkstemp's dot and eight letters added, would be too long to make)
    short = os.fsencode(path.name)[:200].decode("utf-8", "ignore")
    fd, tmp = tempfile.mkstemp(prefix=f".{short}.", dir=path.parent)
    try:
        with (os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8")) as fh:
            yield fh
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _a_stream(path: str) -> bool:
    """Whether ``path`` names a device or a process's open stream rather than a file."""
    return path.startswith(("/dev/", "/proc/"))


def _own_stream(path: str) -> int | None:
    """The descriptor ``path`` names when it is one of this process's own streams
    (/dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N), else None."""
    named = {"/dev/stdout": 1, "/dev/stderr": 2}
    if path in named:
        return named[path]
    for prefix in ("/dev/fd/", "/proc/self/fd/", f"/proc/{os.getpid()}/fd/"):
        if path.startswith(prefix) and path[len(prefix):].isdigit():
            return int(path[len(prefix):])
    return None


def _umask() -> int:
    """The process's umask, read without setting it where the system tells it (setting it
    to read it back would leave other threads a moment of umask 0)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    umask = os.umask(0o022)
    os.umask(umask)
    return umask


class JsonTextError(ValueError):
    """A file that is not JSON text; the message says why, without the file's name."""


#: byte-order marks of the encodings an editor may save JSON in (Windows' Notepad puts one
#: before UTF-8, PowerShell's ``>`` writes UTF-16)
_BOMS = ((b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe\x00\x00", "utf-32"),
         (b"\x00\x00\xfe\xff", "utf-32"), (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16"))


def read_json(path: Path) -> Any:
    """The JSON value in ``path``: UTF-8, or UTF-8, UTF-16 or UTF-32 with a byte-order
    mark. Raises OSError as it came (for the caller to word) and :class:`JsonTextError` for
    text that is not JSON, or a folder (a camera.json or colors.json made a folder: "is a
    folder, not a file", as the callers word it after the file's name)."""
    p = given_path(path)
    try:
        data = p.read_bytes()
    except (IsADirectoryError, PermissionError):
        # (Windows refuses to open a folder as PermissionError)
        if p.is_dir():
            raise JsonTextError("is a folder, not a file") from None
        raise
    encoding = next((enc for bom, enc in _BOMS if data.startswith(bom)), "utf-8")
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise JsonTextError(f"is not UTF-8 text (byte {exc.start}: {data[exc.start:exc.start + 1]!r});"
                            " save it as UTF-8") from None
    try:
        return json.loads(text, parse_int=_json_int)
    except json.JSONDecodeError as exc:
        raise JsonTextError(f"is not valid JSON: {exc}") from None
    except RecursionError:
        raise JsonTextError("is not valid JSON: nested too deeply") from None


class LongInteger:
    """An integer in a JSON file too long for Python to read (more than 4300 digits): not a
    number to whoever checks the field, and said by its length (``read_json``). Python
    refused the whole file with a ValueError, which no caller took for bad text."""

    def __init__(self, digits: int) -> None:
        self.digits = digits

    def __repr__(self) -> str:
        return f"an integer of {self.digits} digits"

    def _too_long(self) -> ValueError:
        # (a reader that converts the field, ``float(v)``, says this, as for text that is
        # no number; a TypeError named this class)
        return ValueError(f"{self!r} is too long to be a number")

    def __int__(self) -> int:
        raise self._too_long()

    def __float__(self) -> float:
        raise self._too_long()


def _json_int(text: str) -> int | LongInteger:
    try:
        return int(text)
    except ValueError:
        return LongInteger(len(text.lstrip("-")))


def record_text(name: str) -> str:
    """A file name (or a reason naming one) as a record prints it. A name that is not
    UTF-8 (bytes written under a Latin-1 locale, a camera's card) reaches Python with its
    odd bytes as lone surrogates, which JSON would carry as ``\\udcXX`` escapes that strict
    parsers refuse: those bytes become U+FFFD. (A tool pairs records with its inputs by
    their order, which stays.)"""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return name


def carries_tag(path: Path, tag: bytes, within: int = 512) -> bool:
    """Whether ``path`` holds ``tag`` in its first ``within`` bytes: the mark a file this
    program wrote carries (a PNG text chunk, a JPEG comment), so that writing it again
    replaces only the program's own file, never a photo of that name."""
    try:
        with open(path, "rb") as fh:
            return tag in fh.read(within)
    except OSError:
        return False


def image_format(data: bytes) -> str | None:
    """The kind of image a file's first bytes say it is (JPEG, PNG, BMP, WebP or TIFF),
    else None."""
    if data[:2] == b"\xff\xd8":
        return "JPEG"
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return "PNG"
    if data[:2] == b"BM":
        return "BMP"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "WebP"
    if data[:4] in (b"II*\x00", b"MM\x00*"):
        return "TIFF"
    return None


#: what every SQLite database file begins with (a game file's, among others)
SQLITE_HEADER = b"SQLite format 3\x00"
#: the program's JSON files, each by the keys only it has
_JSON_KINDS = ((("K", "dist", "image_size"), "a camera file (from calibrate-camera)"),
               (("colors",), "a colour profile (from calibrate-colors)"),
               (("dictionary", "marker_size_mm"), "a mat file"))


def file_kind(path: Path) -> str | None:
    """What ``path`` is, where it is plainly one of the files a user may give to the wrong
    option (a camera file, a colour profile, a mat file, an image, a game file); None
    otherwise (unreadable, or of no kind told here)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(16)
    except OSError:
        return None
    kind = image_format(head) or ("GIF" if head.startswith(b"GIF8") else None)
    if kind is not None:
        return f"an image ({kind})"
    if head.startswith(b"PK\x03\x04"):
        return "a card gallery or another zip archive"
    if head.startswith(SQLITE_HEADER):
        return "a game file (SQLite)"
    try:
        data = read_json(path)
    except (OSError, JsonTextError):
        return None
    if isinstance(data, dict):
        for keys, what in _JSON_KINDS:
            if all(k in data for k in keys):
                return what
    return None


def wrong_kind(path: Path, own: str) -> str | None:
    """" is a colour profile (...), not a camera file: given to the wrong option?" where
    ``path`` is plainly another kind of file than ``own``; else None."""
    what = file_kind(path)
    if what is None or what.startswith(own):
        return None
    return f"is {what}, not {own}: given to the wrong option?"


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all (:func:`atomic_file`)."""
    with atomic_file(path) as fh:
        fh.write(text)


def refusal_words(exc: OSError) -> str:
    """Why the system refused a write, in words. Making an output's folder where a file
    stands (``--out notes.txt/camera.json``) fails with mkdir's "File exists", which sends
    the user looking for the file they meant to write: the file in the way is named."""
    if isinstance(exc, FileExistsError) and exc.filename is not None:
        return not_a_folder(exc.filename)
    return exc.strerror or str(exc)


def not_a_folder(path: Path | str) -> str:
    """The words for a file standing where a folder is wanted (an output folder given as a
    file, ``--out notes.txt``, or a folder above it, ``--out notes.txt/out``): the same in
    every command."""
    return f"{str(path)!r} is a file, not a folder"


def file_in_the_way(folder: Path) -> Path | None:
    """The file standing at ``folder`` or in place of a folder above it, where making it
    fails with mkdir's "File exists" or "Not a directory", of no name (None: each is a
    folder or is not there yet)."""
    d = folder
    while True:
        if d.exists() and not d.is_dir():
            return d
        if d.parent == d:
            return None
        d = d.parent


def folder_problem(folder: Path, option: str | None = None) -> str | None:
    """What is wrong with ``folder``, given (by ``option``, named first) for a command's
    folder (its output's, said before anything is made): a file stands there or in place
    of a folder above it (:func:`not_a_folder`). None: it is a folder, or can be one."""
    in_way = file_in_the_way(folder)
    if in_way is None:
        return None
    named = f"{option} " if option else ""
    if in_way == folder:
        return f"{named}{not_a_folder(folder)}"
    return f"{named}{str(folder)!r}: {not_a_folder(in_way)}"


def check_folder(folder: Path, option: str | None = None,
                 error: Callable[[str], Exception] = CompanionError) -> None:
    """Raise ``error`` with :func:`folder_problem`'s words where ``folder`` cannot be the
    command's folder (each command's own error class: the CLI and the tests tell them
    apart)."""
    problem = folder_problem(folder, option)
    if problem is not None:
        raise error(problem)
