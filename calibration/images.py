"""Reading a picture from a file: whole, readable and of a sane size, or an error naming the
file and what is wrong with it (:class:`ImageError`). Everything that reads a photo of the
table, of the board or of a card goes through :func:`read_image`: ``companion observe``, the
live companion's photo folders, ``calibrate-camera``, ``calibrate-colors`` and a deck's scans
and photos (:mod:`vision.synth.deck`).
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

import cv2
import numpy as np

from companion.core.errors import CompanionError
from companion.core.files import given_path, image_format

#: the image files a folder is read for: photos of the table or the board, a deck's scans
#: (a GIF as its first frame: read when named alone, it was left out of a folder unsaid)
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff", ".gif")
#: the largest image :func:`read_image` decodes: a 200-megapixel phone photo reads; a small
#: file that unpacks to a gigapixel (30000 x 30000 took 8 GB and a minute before OpenCV gave
#: up) is refused from its header
MAX_IMAGE_PIXELS = 250_000_000

#: what libjpeg says (on stderr, decoding all the same) of image data that is damaged: not
#: its "N extraneous bytes before marker", which some cameras' whole pictures give
JPEG_DAMAGE = ("Corrupt JPEG data: premature end of data segment",
               "Corrupt JPEG data: bad Huffman code", "Premature end of JPEG file")


#: photos the companion cannot decode but a user is likely to have: named, not passed over
#: (an iPhone saves HEIC unless set to "Most Compatible")
HEIF_SUFFIXES = (".heic", ".heif")
HEIF_WORDS = ("HEIC/HEIF photos (an iPhone's default) are not read: set the camera to "
              "\"Most Compatible\", or export them as JPEG")


class ImageError(CompanionError, ValueError):
    """An image file that is missing, empty, truncated or not an image."""


def natural_key(path: Path) -> tuple[tuple[tuple[int, int | str], ...], str]:
    """A sort key that puts ``2.jpg`` before ``10.jpg`` (frames a tool numbered without
    leading zeros, ffmpeg's ``%d.jpg``), case aside (the name itself settles ties:
    ``01.jpg`` and ``1.jpg``, ``A.jpg`` and ``a.jpg``)."""
    parts = re.split(r"([0-9]+)", path.name.lower())
    return tuple((0, int(t)) if t.isdecimal() and t.isascii() else (1, t)
                 for t in parts if t), path.name


def folder_images(folder: Path, suffixes: Sequence[str] = IMAGE_SUFFIXES,
                  broken_links: bool = False) -> tuple[list[Path], list[Path]]:
    """The image files of ``folder`` (one of ``suffixes``, not hidden: a camera's temporary
    ``.`` file, macOS's ``._`` shadow of a photo), in :func:`natural_key` order; and its HEIC
    photos, which are not read (:data:`HEIF_WORDS`). Not recursive. Raises OSError when the
    folder cannot be listed. ``broken_links``: links of an image's name that lead nowhere,
    and pipes, devices and sockets of one, count as images too, for :func:`read_image` to
    say so (not passed over unsaid)."""
    found: list[Path] = []
    heif: list[Path] = []
    for p in folder.iterdir():
        if p.name.startswith("."):
            continue
        suffix = p.suffix.lower()
        if suffix in suffixes and (p.is_file() or (broken_links and not p.is_dir() and (
                p.exists() or p.is_symlink()))):
            found.append(p)
        elif suffix in HEIF_SUFFIXES:
            heif.append(p)
    return sorted(found, key=natural_key), sorted(heif, key=natural_key)


def read_image(path: str | Path) -> np.ndarray:
    """The BGR image in ``path``; :class:`ImageError` naming the file otherwise.

    A JPEG cut short still decodes (libjpeg fills the missing rows with grey and only
    warns), and half a grey table would read as cards gone missing; so a file that ends
    before its image data does is refused, not guessed at."""
    p = given_path(path)
    name = str(p)
    if p.is_dir():
        raise ImageError(f"{name}: is a folder, not an image")
    if p.exists() and not p.is_file():
        # a pipe or a device: reading it could wait forever
        raise ImageError(f"{name}: not a regular file (a pipe or a device?), not an image")
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        if p.is_symlink():
            raise ImageError(f"{name}: a link to {os.readlink(p)}, which does not exist") \
                from None
        raise ImageError(f"{name}: no such file") from None
    except OSError as exc:
        raise ImageError(f"{name}: cannot be read ({exc.strerror or exc})") from None
    if not data:
        raise ImageError(f"{name}: the file is empty (0 bytes)")
    problem = truncation(data)
    if problem:
        raise ImageError(f"{name}: {problem}")
    size = header_size(data)
    if size is not None and size[0] * size[1] > MAX_IMAGE_PIXELS:
        raise ImageError(f"{name}: {size[0]} x {size[1]} pixels is more than the companion reads "
                         f"({MAX_IMAGE_PIXELS // 1_000_000} megapixels at most); scale it down")
    said: list[str] = []
    with decoder_words(said):
        image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    # the decoder's own lines go into the message where one is raised; anything else caught
    # meanwhile (another thread's log line), and all of it where the image is read, is
    # passed on as it came
    folded: list[str] = []
    try:
        damage = next((line for line in said if line.startswith(JPEG_DAMAGE)), None)
        if damage is not None:
            # libjpeg decodes past damaged data with garbage or grey, and only says so
            folded = [damage]
            raise ImageError(f"{name}: the JPEG's image data is damaged (the decoder: "
                             f"{damage.strip()}); take or copy the picture again")
        if image is None or image.size == 0:
            if p.suffix.lower() in HEIF_SUFFIXES or data[4:12] in _HEIF_BRANDS:
                raise ImageError(f"{name}: {HEIF_WORDS}")
            kind = image_format(data)
            if kind is not None:
                # a file of a kind it reads, that it could not: damaged (a PNG's checksum),
                # or a variant it does not take (a TIFF of floats). Its decoder's words go
                # here, not on stderr above the message, as if about something else
                folded = [line for line in said if _DECODER_WORDS.search(line)]
                words = " ".join(" ".join(_LOG_TAG.sub("", line).split()) for line in folded)
                raise ImageError(
                    f"{name}: a {kind} file that cannot be decoded"
                    + (f" (the decoder: {words[:200]})" if words else "")
                    + f": damaged, or a kind of {kind} that is not read; take or copy the "
                    "picture again, or save it as an 8-bit JPEG or PNG")
            if _a_video(p, data):
                raise ImageError(f"{name}: a video, not a picture: `companion run --source "
                                 f"{name}` follows a game on video (this reads pictures)")
            raise ImageError(f"{name}: not an image OpenCV can decode ({len(data)} bytes; "
                             f"expected one of {', '.join(IMAGE_SUFFIXES)})")
    finally:
        for line in said:
            if line not in folded:
                os.write(2, (line + "\n").encode("utf-8", "replace"))
    return image


#: what a video file is named with
VIDEO_SUFFIXES = (".mp4", ".mov", ".m4v", ".avi", ".mkv", ".webm", ".mpg", ".mpeg", ".wmv")


#: the brands of an MP4 or QuickTime file's first box (not HEIF's or AVIF's, which are
#: pictures in the same box format)
VIDEO_BRANDS = (b"isom", b"iso2", b"iso4", b"iso5", b"iso6", b"mp41", b"mp42", b"avc1",
                b"qt  ", b"M4V ", b"M4VH", b"M4VP", b"3gp4", b"3gp5", b"3gp6", b"3g2a",
                b"mmp4", b"dash", b"f4v ", b"MSNV")


def _a_video(path: Path, data: bytes) -> bool:
    """Whether a file no image decoder took is a video: by its name, or by its first bytes
    (an MP4 or QuickTime box of a video's brand, AVI's RIFF, Matroska's EBML)."""
    return (path.suffix.lower() in VIDEO_SUFFIXES
            or (data[4:8] == b"ftyp" and data[8:12] in VIDEO_BRANDS)
            or (data[:4] == b"RIFF" and data[8:12] == b"AVI ")
            or data[:4] == b"\x1a\x45\xdf\xa3")


#: the tag OpenCV's log puts before a decoder's warning: ``[ WARN:0@0.037] global
#: grfmt_tiff.cpp:811 readData``
_LOG_TAG = re.compile(r"^\[\s*\w+:[^\]]*\]\s*(global\s+\S+\s+\S+\s+)?")
#: what a line an image decoder writes looks like (libjpeg's, libpng's, libtiff's, OpenCV's
#: codecs' through its log), against another thread's log line caught meanwhile
_DECODER_WORDS = re.compile(r"JPEG|libpng|TIFF|WebP|webp|BMP|grfmt_|imgcodecs|^\[\s*WARN")


#: an ISO media file's ``ftyp`` box and the brands of HEIC/HEIF stills
_HEIF_BRANDS = tuple(b"ftyp" + b for b in (b"heic", b"heix", b"heim", b"heis", b"hevc",
                                           b"mif1", b"msf1"))

_STDERR_SWAP = threading.Lock()


@contextmanager
def decoder_words(said: list[str]) -> Iterator[None]:
    """Catch what the image decoders print on the process's stderr (file descriptor 2)
    meanwhile into ``said``, one line each (with anything else written there meanwhile:
    the caller passes on what it does not fold into its own words). Without a descriptor
    2, nothing is caught."""
    # one at a time: two threads swapping descriptor 2 could leave it on a closed file
    with _STDERR_SWAP:
        try:
            sys.stderr.flush()
            saved = os.dup(2)
        except (OSError, ValueError, AttributeError):
            yield
            return
        with tempfile.TemporaryFile() as caught:
            os.dup2(caught.fileno(), 2)
            try:
                yield
            finally:
                os.dup2(saved, 2)
                os.close(saved)
                caught.seek(0)
                said += caught.read().decode("utf-8", "replace").splitlines()


#: a pixel whose channels lie further apart than this (of 255) has a colour ...
GREY_SPREAD = 4
#: ... and a picture with under this share of such pixels has none (a pyramid 24 px across
#: in a 1600x900 frame is three times this share)
GREY_SHARE = 0.0001


#: the fewest pixels a side of a picture that can hold a table (its mat's markers a few
#: pixels each): a smaller one (a thumbnail, a 1x1 placeholder) was read, and said to have
#: no colour, or no marker, as if a table had been there to find
SMALLEST_TABLE_PX = 64


def check_table_size(image: np.ndarray, name: str) -> None:
    """ImageError naming ``name`` where ``image`` is too small to hold a table
    (:data:`SMALLEST_TABLE_PX`): the same words wherever a picture of the table is read."""
    h, w = image.shape[:2]
    if min(h, w) < SMALLEST_TABLE_PX:
        raise ImageError(f"{name}: {w} x {h} pixels is too small to hold a table (one needs "
                         f"{SMALLEST_TABLE_PX} pixels a side at the least, a camera's picture "
                         "hundreds)")


def greyscale(image_bgr: np.ndarray) -> bool:
    """Whether a BGR image has no colour (on every eighth pixel each way: a fraction of a
    millisecond): a black-and-white camera or file, or a webcam's night mode, in which no
    pyramid colour can be told. Its channels need not be exactly equal: a grey picture
    saved again, or its noise, leaves them a level or two apart (:data:`GREY_SPREAD`,
    :data:`GREY_SHARE`)."""
    if image_bgr.ndim < 3 or image_bgr.shape[2] < 3:
        return True

    def coloured(step: int) -> float:
        c = image_bgr[::step, ::step, :3].astype(np.int32)     # (16-bit pictures too)
        spread = c.max(axis=2) - c.min(axis=2)
        return float(np.count_nonzero(spread > GREY_SPREAD)) / max(1, int(spread.size))

    # a picture of a table in colour shows it on a coarse grid already (a tenth of the time)
    return coloured(32) < 0.01 and coloured(8) < GREY_SHARE


def header_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) from a PNG's, JPEG's, BMP's, WebP's or TIFF's header, before anything
    is decoded; None for other formats or a header not understood (OpenCV's own limit then
    applies). (A 2 MB run-length BMP unpacks to 16000 x 16000 pixels and 13 GB.)"""
    kind = image_format(data)
    if kind == "PNG" and data[12:16] == b"IHDR" and len(data) >= 24:
        return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    if kind == "BMP" and len(data) >= 26:
        if int.from_bytes(data[14:18], "little") == 12:
            # an OS/2 bitmap's 12-byte header: 16-bit sizes
            return (int.from_bytes(data[18:20], "little"),
                    int.from_bytes(data[20:22], "little"))
        return (abs(int.from_bytes(data[18:22], "little", signed=True)),
                abs(int.from_bytes(data[22:26], "little", signed=True)))
    if kind == "WebP":
        return _webp_size(data)
    if kind == "TIFF":
        return _tiff_size(data)
    if kind != "JPEG":
        return None
    k = 2
    while k + 9 <= len(data):
        if data[k] != 0xFF:
            return None
        marker = data[k + 1]
        if marker == 0xFF:             # fill byte
            k += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            k += 2
            continue
        length = int.from_bytes(data[k + 2:k + 4], "big")
        # a start-of-frame segment (SOF0-SOF15 but for DHT, JPG and DAC) holds the size
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            h = int.from_bytes(data[k + 5:k + 7], "big")
            w = int.from_bytes(data[k + 7:k + 9], "big")
            return w, h
        if marker == 0xDA or length < 2:
            return None
        k += 2 + length
    return None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    """A WebP's canvas from its first chunk (VP8X, lossless VP8L or lossy VP8)."""
    chunk = data[12:16]
    if chunk == b"VP8X" and len(data) >= 30:
        return (int.from_bytes(data[24:27], "little") + 1,
                int.from_bytes(data[27:30], "little") + 1)
    if chunk == b"VP8L" and len(data) >= 25 and data[20] == 0x2F:
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8 " and len(data) >= 30 and data[23:26] == b"\x9d\x01\x2a":
        return (int.from_bytes(data[26:28], "little") & 0x3FFF,
                int.from_bytes(data[28:30], "little") & 0x3FFF)
    return None


def _tiff_size(data: bytes) -> tuple[int, int] | None:
    """A TIFF's first image's width and length (tags 256 and 257 of its first IFD)."""
    order: Literal["little", "big"] = "little" if data[:2] == b"II" else "big"
    at = int.from_bytes(data[4:8], order)
    if at + 2 > len(data):
        return None
    n = int.from_bytes(data[at:at + 2], order)
    found: dict[int, int] = {}
    for k in range(min(n, 4096)):
        e = at + 2 + 12 * k
        if e + 12 > len(data):
            break
        tag, kind = int.from_bytes(data[e:e + 2], order), int.from_bytes(data[e + 2:e + 4], order)
        if tag in (256, 257) and kind in (3, 4):
            size = 2 if kind == 3 else 4
            found[tag] = int.from_bytes(data[e + 8:e + 8 + size], order)
    if 256 in found and 257 in found:
        return found[256], found[257]
    return None


#: in a scan's entropy-coded data, 0xFF followed by a byte that ends the data: not a stuffed
#: FF 00, not a restart marker FF D0-D7, not a fill byte FF
_SCAN_END = re.compile(rb"\xff[^\x00\xd0-\xd7\xff]")


def _jpeg_walk(data: bytes) -> tuple[str, bool]:
    """Walk a JPEG's segments and scans from its start marker: ("end", ...) at its
    end-of-image marker, ("short", ...) when the file ends first, ("odd", ...) where its
    structure is not understood (left to the decoder); and whether a scan started. The
    end is found from the start, not by searching for the marker's bytes: phones append a
    whole MP4 video after it (a "motion photo"), whose bytes may hold anything."""
    n, i, scanned = len(data), 2, False
    while i + 1 < n:
        if data[i] != 0xFF:
            return "odd", scanned         # not a marker where one must be
        m = data[i + 1]
        if m == 0xFF:                     # fill byte before a marker
            i += 1
            continue
        if m == 0xD9:
            return "end", scanned
        if m == 0x01 or 0xD0 <= m <= 0xD7:
            i += 2                        # markers without a length
            continue
        if i + 3 >= n:
            return "short", scanned
        length = int.from_bytes(data[i + 2:i + 4], "big")
        if length < 2:
            return "odd", scanned
        i += 2 + length
        if m == 0xDA:                     # a scan: its entropy-coded data runs to a marker
            scanned = True
            found = _SCAN_END.search(data, min(i, n))
            if found is None:
                return "short", scanned
            i = found.start()
    return "short", scanned


def truncation(data: bytes) -> str:
    """Why ``data`` (a JPEG or PNG file's bytes) is incomplete, or "" when it is whole or of
    another format (those are left to the decoder)."""
    kind = image_format(data)
    if kind == "JPEG":
        walked, scanned = _jpeg_walk(data)
        if walked == "odd":
            # (a structure not understood: the last scan's start, and an end marker after
            # it, as a fallback; entropy-coded data never holds FF DA, stuffed as FF 00)
            sos = data.rfind(b"\xff\xda")
            scanned = sos >= 0
            walked = "end" if scanned and data.find(b"\xff\xd9", sos) >= 0 else "short"
        if walked == "end":
            return ""       # (what follows the end marker, a phone's motion video, is harmless)
        if not scanned:
            return "truncated JPEG: the file ends before its image data starts"
        return (f"truncated JPEG: no end-of-image marker after the image data "
                f"({len(data)} bytes; the file was cut short while being written or "
                "copied)")
    if kind == "PNG":
        if data.rfind(b"IEND") < 0:
            return f"truncated PNG: no IEND chunk ({len(data)} bytes; the file was cut short)"
    return ""
