"""Photos of single cards, as a player would take them to enroll a deck.

``companion enroll-deck`` takes scans or photos (:mod:`vision.cards.face`). There are no
photos of these decks to test with, so this draws them: the card printed as a printing of
the deck might be (:class:`vision.synth.textures.Printing`), with its rounded corners, laid on
a table surface of the renderer's kinds, seen by a hand-held camera (a slant of up to
``tilt`` of the card's size at each corner, any turn within ``turn_deg`` of ``upright``),
under uneven light, blurred a little, noisy, saved as JPEG.
"""

from __future__ import annotations

import cv2
import numpy as np

from vision.synth import textures

SURFACES = ("cloth", "felt", "wood", "pattern")


def card_photo(rng: np.random.Generator, art: np.ndarray, card_size_mm: tuple[float, float],
               size: tuple[int, int] = (1600, 1200), *, upright: bool = True,
               turn_deg: float = 15.0, tilt: float = 0.03, printing: float = 0.5,
               cover: tuple[float, float] = (0.35, 0.7),
               surfaces: tuple[str, ...] = SURFACES) -> tuple[np.ndarray, np.ndarray]:
    """(a JPEG-decoded BGR photo of the card ``art``, the card's corners in it: the art's
    top-left, top-right, bottom-right, bottom-left). ``upright``: the card stands upright
    in the picture (turned within ``turn_deg``), else it lies across, its top to the left.
    ``cover``: the card's long side as a share of the picture's short side; ``surfaces``:
    the table surfaces to draw from (:func:`vision.synth.textures.table_surface`'s kinds)."""
    w, h = size
    surface = str(rng.choice(surfaces))
    img = textures.table_surface(rng, surface, h, w, float(rng.uniform(1.0, 3.0))
                                 ).astype(np.float32)
    # the card's face at about the size it will have in the picture
    long_px = float(rng.uniform(*cover)) * min(w, h)
    fh = int(round(long_px))
    fw = int(round(long_px * card_size_mm[0] / card_size_mm[1]))
    face = textures.Printing(rng, printing).apply(art, fw, fh).astype(np.float32)
    alpha = textures.rounded_alpha(fh, fw, 3.0 * fh / card_size_mm[1])
    # where its corners land: turned about its centre, each corner nudged for the slant
    angle = np.radians(float(rng.uniform(-turn_deg, turn_deg)) + (0.0 if upright else -90.0))
    c, s = np.cos(angle), np.sin(angle)
    local = np.array([[-fw / 2, -fh / 2], [fw / 2, -fh / 2], [fw / 2, fh / 2], [-fw / 2, fh / 2]])
    turned = local @ np.array([[c, s], [-s, c]])
    span = turned.max(axis=0) - turned.min(axis=0)
    room = np.maximum(np.array([w, h]) - span, 1.0) / 2 - 0.05 * min(w, h)
    center = np.array([w, h]) / 2 + rng.uniform(-1, 1, 2) * np.maximum(room, 0.0) * 0.6
    corners = (turned + center + rng.uniform(-tilt, tilt, (4, 2)) * fh).astype(np.float32)
    src = np.array([[0, 0], [fw, 0], [fw, fh], [0, fh]], np.float32) - 0.5
    M = cv2.getPerspectiveTransform(src, corners)
    warped = cv2.warpPerspective(face, M, (w, h), flags=cv2.INTER_LINEAR)
    a = cv2.warpPerspective(alpha, M, (w, h), flags=cv2.INTER_LINEAR).astype(np.float32) / 255
    img = (img * (1 - a[..., None]) + warped * a[..., None]).astype(np.float32)
    # light: a soft gradient across the picture and a colour cast
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    d = rng.normal(size=2)
    d /= np.linalg.norm(d) + 1e-9
    ramp = ((xx - w / 2) * d[0] + (yy - h / 2) * d[1]) / max(w, h)
    light = float(rng.uniform(0.8, 1.1)) + float(rng.uniform(0.0, 0.35)) * ramp
    cast = rng.uniform(0.9, 1.1, 3).astype(np.float32)
    img = (img * light[..., None] * cast).astype(np.float32)
    img = cv2.GaussianBlur(img, (0, 0), float(rng.uniform(0.4, 1.4)))
    img += rng.normal(0.0, float(rng.uniform(1.0, 4.0)), img.shape).astype(np.float32)
    ok, buf = cv2.imencode(".jpg", img.clip(0, 255).astype(np.uint8),
                           [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(75, 95))])
    photo = cv2.imdecode(buf, cv2.IMREAD_COLOR) if ok else None
    if photo is None:
        raise RuntimeError("OpenCV could not encode and decode a JPEG")
    out: np.ndarray = photo
    return out, corners
