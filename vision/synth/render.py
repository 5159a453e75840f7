"""Render a :class:`~vision.synth.scene.TableScene` as an overhead camera sees it, with truth.

Pipeline (all randomness comes from the :class:`Style`, which is sampled from a seeded
numpy Generator, so the same style and scene give the same pixels):

1. ideal (undistorted) canvas: the table surface, a procedural texture in table millimetres
   warped by the camera's table homography; the four ArUco markers on their paper squares;
2. soft contact shadows, then the cards as textured quads (lowest level first), each at its
   stack height;
3. soft pyramid shadows for every light, then the pyramids as 3D solids, far to near, faces
   shaded (Lambert + Blinn specular) and alpha-blended when translucent;
4. lens distortion (cv2.remap), so every pixel matches ``cv2.projectPoints`` of the truth;
5. hands and arms, glare, then the sensor: exposure, white balance, vignetting, blur, noise.

:func:`render` returns the BGR image and the ground-truth record (the observation record
of shared/spec/table.md plus image-space geometry, camera and occlusion).
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np

from calibration.mat import Mat
from companion.core.observation import CardSighting, Observation, PyramidSighting
from vision.synth import textures
from vision.synth.camera import Camera, distortion_maps
from vision.synth.deck import Deck
from vision.synth.geometry import PYRAMID_FACES, card_corners, face_normals, pyramid_vertices
from vision.synth.scene import CardPlacement, TableScene

log = logging.getLogger(__name__)

SHIFT = 4
ONE = 1 << SHIFT

#: BGR of each pyramid colour, and how opaque its plastic is (1 = opaque).
PYRAMID_BGR: dict[str, tuple[float, float, float]] = {
    "red": (45, 35, 205), "orange": (20, 115, 245), "yellow": (35, 215, 245),
    "green": (55, 165, 35), "blue": (195, 85, 20), "purple": (145, 45, 115),
    "cyan": (205, 195, 35), "black": (28, 28, 30), "white": (236, 236, 233),
    "clear": (232, 232, 226),
}
PYRAMID_ALPHA: dict[str, float] = {c: 0.74 for c in PYRAMID_BGR}
PYRAMID_ALPHA.update({"black": 1.0, "white": 1.0, "clear": 0.3})

LABEL_MARKER = 1       # 1..4
LABEL_CARD = 16        # 16 + card index
LABEL_PYRAMID = 40000  # + pyramid index
LABEL_HAND = 65000


@dataclass
class Light:
    azimuth_deg: float        # table-frame direction toward the light
    elevation_deg: float      # above the table
    intensity: float
    shadow: float             # darkness of its shadows, 0..1
    softness_mm: float        # shadow blur

    def direction(self) -> np.ndarray:
        """World-frame unit vector from a surface toward the light (Z is down)."""
        a, e = math.radians(self.azimuth_deg), math.radians(self.elevation_deg)
        return np.array([math.cos(e) * math.cos(a), math.cos(e) * math.sin(a), -math.sin(e)])


@dataclass
class Hand:
    edge: int                 # 0 top, 1 right, 2 bottom, 3 left image edge
    pos: float                # -1..1: entry point shift along the edge (x reach)
    target_mm: tuple[float, float]  # table point under the palm
    width_frac: float         # forearm width / card length in px
    skin: tuple[float, float, float]
    sleeve: tuple[float, float, float] | None
    sleeve_frac: float
    finger_curl: float
    spread_deg: float


@dataclass
class Style:
    """Everything about one image's look that is not the scene or the camera."""

    seed: int = 0
    surface: str = "cloth"
    plain_color: tuple[float, float, float] | None = None   # flat table (tests)
    newspaper: tuple[float, float, float, float, float] | None = None  # cx, cy, w, h, angle
    lights: list[Light] = field(default_factory=lambda: [Light(30, 70, 0.7, 0.45, 4.0)])
    ambient: float = 0.45
    printing_strength: float = 0.0
    wear: float = 0.0                 # bend / gloss amount on cards
    marker_margin_mm: float = 10.0
    marker_paper: tuple[float, float, float] = (245, 246, 246)
    marker_ink: float = 20.0
    back: np.ndarray | None = None    # back art for decks without one
    pyramid_tint: float = 0.0         # colour jitter of the plastic
    hands: list[Hand] = field(default_factory=list)
    glare: list[tuple[float, float, float, float, float, float]] = field(default_factory=list)
    exposure: float = 1.0
    wb: tuple[float, float, float] = (1.0, 1.0, 1.0)
    vignette: float = 0.0
    light_gradient: tuple[float, float] = (0.0, 0.0)  # amount, direction deg
    blur_sigma: float = 0.0
    motion: tuple[float, float] = (0.0, 0.0)          # length px, angle deg
    noise_sigma: float = 0.0
    jpeg_quality: int = 92
    contact_shadow: float = 0.3

    def describe(self) -> dict[str, Any]:
        return {
            "surface": "plain" if self.plain_color is not None else self.surface,
            "newspaper": self.newspaper is not None,
            "lights": [{"azimuth_deg": round(li.azimuth_deg, 1),
                        "elevation_deg": round(li.elevation_deg, 1),
                        "intensity": round(li.intensity, 3)} for li in self.lights],
            "printing_strength": round(self.printing_strength, 3),
            "exposure": round(self.exposure, 3),
            "white_balance": [round(v, 3) for v in self.wb],
            "vignette": round(self.vignette, 3),
            "blur_sigma": round(self.blur_sigma, 3),
            "motion_blur_px": round(self.motion[0], 2),
            "noise_sigma": round(self.noise_sigma, 3),
            "jpeg_quality": self.jpeg_quality,
        }


def plain_style(color: tuple[float, float, float] = (70, 110, 60), seed: int = 0) -> Style:
    """A clean look for pixel-exact tests: flat table, one light, no sensor effects."""
    return Style(seed=seed, plain_color=color, contact_shadow=0.0,
                 lights=[Light(30, 70, 0.6, 0.0, 2.0)], ambient=0.55, jpeg_quality=95)


# ---------------------------------------------------------------------------------------------
# drawing helpers


def _roi_box(pts: np.ndarray, w: int, h: int, pad: int = 2) -> tuple[int, int, int, int] | None:
    x0 = max(int(math.floor(pts[:, 0].min())) - pad, 0)
    y0 = max(int(math.floor(pts[:, 1].min())) - pad, 0)
    x1 = min(int(math.ceil(pts[:, 0].max())) + pad + 1, w)
    y1 = min(int(math.ceil(pts[:, 1].max())) + pad + 1, h)
    if x1 <= x0 or y1 <= y0:
        return None
    return x0, y0, x1, y1


_LIMIT = 1e6  # px; beyond this a point is behind or beside the camera


def _drawable(pts: np.ndarray) -> bool:
    a = np.asarray(pts, dtype=np.float64)
    return bool(np.all(np.isfinite(a)) and np.all(np.abs(a) < _LIMIT))


def _fixed(pts: np.ndarray) -> np.ndarray:
    return np.round(np.asarray(pts, dtype=np.float64) * ONE).astype(np.int32).reshape(-1, 1, 2)


def draw_quad(canvas: np.ndarray, tex: np.ndarray, alpha: np.ndarray | None,
              quad: np.ndarray) -> None:
    """Warp texture ``tex`` (BGR uint8) onto ``quad`` (TL, TR, BR, BL ideal px), in place."""
    h, w = canvas.shape[:2]
    if not _drawable(quad):
        return
    box = _roi_box(quad, w, h)
    if box is None:
        return
    x0, y0, x1, y1 = box
    th, tw = tex.shape[:2]
    src = np.array([[-0.5, -0.5], [tw - 0.5, -0.5], [tw - 0.5, th - 0.5], [-0.5, th - 0.5]],
                   np.float32)
    dst = (quad - np.array([x0, y0])).astype(np.float32)
    M = cv2.getPerspectiveTransform(src, dst)
    if alpha is None:
        alpha = np.full((th, tw), 255, np.uint8)
    bgra = np.dstack([tex, alpha])
    warped = cv2.warpPerspective(bgra, M, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR,
                                 borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0, 0))
    a = warped[..., 3:4].astype(np.float32) * (1.0 / 255.0)
    roi = canvas[y0:y1, x0:x1]
    roi[:] = (roi.astype(np.float32) * (1.0 - a) + warped[..., :3].astype(np.float32) * a
              + 0.5).astype(np.uint8)


def blend_poly(canvas: np.ndarray, pts: np.ndarray, color: np.ndarray, alpha: float) -> None:
    """Fill polygon ``pts`` (ideal px) with ``color`` at opacity ``alpha``, anti-aliased."""
    h, w = canvas.shape[:2]
    if not _drawable(pts):
        return
    box = _roi_box(pts, w, h)
    if box is None:
        return
    col = tuple(float(c) for c in np.clip(color, 0, 255))
    if alpha >= 0.999:
        cv2.fillPoly(canvas, [_fixed(pts)], col, cv2.LINE_AA, SHIFT)
        return
    x0, y0, x1, y1 = box
    mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
    cv2.fillPoly(mask, [_fixed(pts - np.array([x0, y0]))], 255, cv2.LINE_AA, SHIFT)
    a = mask[..., None].astype(np.float32) * (alpha / 255.0)
    roi = canvas[y0:y1, x0:x1]
    roi[:] = (roi.astype(np.float32) * (1.0 - a) + np.array(col, np.float32) * a
              + 0.5).astype(np.uint8)


def _label_poly(label: np.ndarray, pts: np.ndarray, value: int) -> None:
    if not _drawable(pts):
        return
    cv2.fillPoly(label, [_fixed(pts)], int(value), cv2.LINE_8, SHIFT)


def _apply_shadow(canvas: np.ndarray, mask_small: np.ndarray, sigma_small: float,
                  toward: float = 0.0) -> None:
    """Darken ``canvas`` by a low-resolution shadow mask (0..1) after blurring it; with a
    negative mask and ``toward=255`` it brightens instead (glare).

    Only the bounding box of the shadow is touched, so small shadows cost little."""
    if toward:
        mask_small = -mask_small
    ys, xs = np.nonzero(mask_small)
    if len(xs) == 0:
        return
    pad = int(3 * sigma_small) + 2
    sh, sw = mask_small.shape
    x0, x1 = max(0, xs.min() - pad), min(sw, xs.max() + pad + 1)
    y0, y1 = max(0, ys.min() - pad), min(sh, ys.max() + pad + 1)
    m = mask_small[y0:y1, x0:x1]
    if sigma_small > 0.3:
        m = cv2.GaussianBlur(m, (0, 0), sigma_small, borderType=cv2.BORDER_CONSTANT)
    h, w = canvas.shape[:2]
    fy, fx = h / sh, w / sw
    X0, X1 = int(x0 * fx), min(w, int(math.ceil(x1 * fx)))
    Y0, Y1 = int(y0 * fy), min(h, int(math.ceil(y1 * fy)))
    if X1 <= X0 or Y1 <= Y0:
        return
    # sample the small mask at the full-resolution pixel centres of the box
    M = np.array([[1 / fx, 0, (X0 + 0.5) / fx - 0.5 - x0],
                  [0, 1 / fy, (Y0 + 0.5) / fy - 0.5 - y0]], np.float32)
    full = cv2.warpAffine(m, M, (X1 - X0, Y1 - Y0), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                          borderMode=cv2.BORDER_CONSTANT, borderValue=0)
    np.clip(full, 0.0, 0.95, out=full)
    roi = canvas[Y0:Y1, X0:X1]
    f = full[..., None]
    roi[:] = (roi.astype(np.float32) * (1.0 - f) + (toward * f + 0.5)).astype(np.uint8)


# ---------------------------------------------------------------------------------------------
# the renderer


@dataclass
class _Ctx:
    cam: Camera
    K: np.ndarray          # intrinsics of the ideal canvas
    cw: int
    ch: int
    ppm: float             # px per mm near the centre of view
    shadow_scale: int      # low-res factor of shadow masks


def _project(ctx: _Ctx, pts: np.ndarray) -> np.ndarray:
    return ctx.cam.project_ideal(pts, ctx.K)


def render(scene: TableScene, deck: Deck, mat: Mat, cam: Camera, style: Style,
           image_name: str = "image.jpg") -> tuple[np.ndarray, dict[str, Any]]:
    """Render ``scene``; returns (BGR uint8 image of ``cam``'s size, truth record dict)."""
    scene.validate(deck)
    rng = np.random.default_rng([style.seed, 99])
    map_x: np.ndarray | None = None
    map_y: np.ndarray | None = None
    if cam.has_distortion:
        map_x, map_y, K_i, (cw, ch) = distortion_maps(cam)
    else:
        K_i, (cw, ch) = cam.K, (cam.width, cam.height)
    cx, cy = mat.width_mm / 2, mat.height_mm / 2
    p0 = cam.project_ideal(np.array([[cx, cy, 0.0], [cx + 10.0, cy, 0.0], [cx, cy + 10.0, 0.0]]),
                           K_i)
    ppm = float(np.mean([np.linalg.norm(p0[1] - p0[0]), np.linalg.norm(p0[2] - p0[0])]) / 10.0)
    ctx = _Ctx(cam, K_i, cw, ch, ppm, 4)

    canvas = _table(ctx, mat, style, rng)
    label: np.ndarray = np.zeros((ch, cw), np.uint16)
    markers = _markers(ctx, canvas, label, mat, style)
    cards = _cards(ctx, canvas, label, scene, deck, style, rng)
    label_cards = label.copy()
    pyrs = _pyramids(ctx, canvas, label, scene, style)

    if map_x is not None and map_y is not None:
        image = cv2.remap(canvas, map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
        label = cv2.remap(label, map_x, map_y, cv2.INTER_NEAREST,
                          borderMode=cv2.BORDER_CONSTANT, borderValue=0)
    else:
        image = canvas
    hand_polys = _hands(image, label, style, ctx, rng)
    glare = _glare(image, style)
    image = _sensor(image, cam, style, rng)

    truth = _truth(scene, deck, mat, cam, style, markers, cards, pyrs, label, label_cards,
                   hand_polys, glare, image_name)
    return image, truth


def _table(ctx: _Ctx, mat: Mat, style: Style, rng: np.random.Generator) -> np.ndarray:
    cam, cw, ch = ctx.cam, ctx.cw, ctx.ch
    H = cam.table_homography(ctx.K)
    if style.plain_color is not None:
        canvas: np.ndarray = np.empty((ch, cw, 3), np.uint8)
        canvas[:] = np.array(style.plain_color, np.uint8)
        return canvas
    Hinv = np.linalg.inv(H)
    corners = np.array([[0, 0, 1], [cw - 1, 0, 1], [cw - 1, ch - 1, 1], [0, ch - 1, 1]], float)
    t = corners @ Hinv.T
    t = t[:, :2] / t[:, 2:3]
    x0, y0 = np.maximum(t.min(axis=0) - 20, [-2000, -2000])
    x1, y1 = np.minimum(t.max(axis=0) + 20, [mat.width_mm + 2000, mat.height_mm + 2000])
    fine = style.surface in ("wood", "newspaper", "pattern")
    s = float(np.clip(ctx.ppm * (0.45 if fine else 0.3), 0.2, 1.25))
    budget = (0.22 if fine else 0.15) * cw * ch
    if (x1 - x0) * (y1 - y0) * s * s > budget:
        s = math.sqrt(budget / ((x1 - x0) * (y1 - y0)))
    tw, th = max(8, int((x1 - x0) * s)), max(8, int((y1 - y0) * s))
    srng = np.random.default_rng([style.seed, 11])
    tex = textures.table_surface(srng, style.surface, th, tw, s)
    A = np.array([[s, 0, -x0 * s - 0.5], [0, s, -y0 * s - 0.5], [0, 0, 1.0]])
    if style.newspaper is not None:
        ncx, ncy, nw, nh, nang = style.newspaper
        sheet = textures.newspaper_sheet(srng, nw, nh, s)
        sh, sw = sheet.shape[:2]
        M = cv2.getRotationMatrix2D(((sw - 1) / 2, (sh - 1) / 2), -nang, 1.0)
        M[0, 2] += (ncx - x0) * s - 0.5 - (sw - 1) / 2
        M[1, 2] += (ncy - y0) * s - 0.5 - (sh - 1) / 2
        warped = cv2.warpAffine(np.dstack([sheet, np.full((sh, sw), 255, np.uint8)]), M,
                                (tw, th), flags=cv2.INTER_LINEAR,
                                borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0, 0))
        a = warped[..., 3:4].astype(np.float32) / 255.0
        tex = (tex * (1 - a) + warped[..., :3] * a).astype(np.uint8)
    canvas = cv2.warpPerspective(tex, H @ np.linalg.inv(A), (cw, ch), flags=cv2.INTER_LINEAR,
                                 borderMode=cv2.BORDER_REFLECT)
    return canvas


def _markers(ctx: _Ctx, canvas: np.ndarray, label: np.ndarray, mat: Mat, style: Style
             ) -> dict[int, np.ndarray]:
    """Draw the four markers; returns id -> (4, 3) world corners of the marker squares."""
    dict_id = getattr(cv2.aruco, mat.dictionary)
    dictionary = cv2.aruco.getPredefinedDictionary(dict_id)
    nbits = dictionary.markerSize + 2
    cell = 8
    margin_px = int(round(style.marker_margin_mm / mat.marker_size_mm * nbits * cell))
    out = {}
    ink = style.marker_ink
    paper = np.array(style.marker_paper, np.float32)
    for mid, corners in mat.marker_corners().items():
        bits = cv2.aruco.generateImageMarker(dictionary, mid, nbits)
        big = cv2.resize(bits, (nbits * cell, nbits * cell), interpolation=cv2.INTER_NEAREST)
        big = np.pad(big, margin_px, constant_values=255)
        f = big.astype(np.float32)[..., None] / 255.0
        tex = (ink + f * (paper - ink)).clip(0, 255).astype(np.uint8)
        m = style.marker_margin_mm
        cxy = np.array(mat.marker_centers()[mid])
        half = mat.marker_size_mm / 2 + m
        quad_w = np.array([[cxy[0] - half, cxy[1] - half, -0.1], [cxy[0] + half, cxy[1] - half, -0.1],
                           [cxy[0] + half, cxy[1] + half, -0.1], [cxy[0] - half, cxy[1] + half, -0.1]])
        draw_quad(canvas, tex, None, _project(ctx, quad_w))
        mw = np.array([[x, y, -0.1] for x, y in corners])
        _label_poly(label, _project(ctx, mw), LABEL_MARKER + mid)
        out[mid] = mw
    return out


@dataclass
class _CardOut:
    index: int
    corners_w: np.ndarray
    area_ideal: float


def _card_texture(deck: Deck, card: CardPlacement, style: Style, printing: textures.Printing,
                  tw: int, th: int, size_mm: tuple[float, float], idx: int
                  ) -> tuple[np.ndarray, np.ndarray]:
    if card.face_up:
        art = deck.image_at_least(card.id, th)
    elif deck.back_file is not None:
        art = deck.image_at_least("back", th)
    else:
        art = style.back if style.back is not None else textures.procedural_back(
            np.random.default_rng([style.seed, 5]))
    img = printing.apply(art, tw, th)
    crng = np.random.default_rng([style.seed, 17, idx])
    alpha = textures.rounded_alpha(th, tw, printing.corner_mm * th / size_mm[1])
    if style.wear > 0:
        f = img.astype(np.float32)
        # bend: a smooth shading ramp across the card; gloss: a soft bright band
        ang = crng.uniform(0, 2 * math.pi)
        t = (((np.arange(tw, dtype=np.float32) / tw - 0.5) * math.cos(ang))[None, :]
             + ((np.arange(th, dtype=np.float32) / th - 0.5) * math.sin(ang))[:, None])
        bend = style.wear * printing.bend * crng.uniform(0.3, 1.0)
        shade = 1.0 + bend * np.cos(t * math.pi * crng.uniform(1, 2)) - bend / 2
        f *= shade[..., None]
        if crng.random() < printing.gloss * style.wear:
            pos = crng.uniform(-0.4, 0.4)
            width = crng.uniform(0.05, 0.2)
            band = np.exp(-((t - pos) / width) ** 2) * crng.uniform(30, 110)
            f += band[..., None]
        img = np.clip(f, 0, 255).astype(np.uint8)
    return img, alpha


def _cards(ctx: _Ctx, canvas: np.ndarray, label: np.ndarray, scene: TableScene, deck: Deck,
           style: Style, rng: np.random.Generator) -> list[_CardOut]:
    size = scene.card_size_mm
    printing = textures.Printing(np.random.default_rng([style.seed, 3]), style.printing_strength)
    order = sorted(range(len(scene.cards)), key=lambda i: (scene.cards[i].level, i))
    out: list[_CardOut] = []
    quads = {}
    for i in order:
        cw3 = card_corners(scene.cards[i], size)
        q = _project(ctx, cw3)
        quads[i] = (cw3, q)
    # contact shadows, one mask for all cards (they are thin)
    if style.contact_shadow > 0 and style.lights:
        sc = ctx.shadow_scale
        mask = np.zeros((ctx.ch // sc + 1, ctx.cw // sc + 1), np.float32)
        L = style.lights[0].direction()
        for i in order:
            cw3, _ = quads[i]
            lift = scene.cards[i].height_mm + 0.6
            sh = cw3.copy()
            sh[:, :2] -= L[:2] / max(1e-3, -L[2]) * lift
            sh[:, 2] = -max(0.0, scene.cards[i].height_mm - 0.35)
            sp = _project(ctx, sh) / sc
            if _drawable(sp):
                cv2.fillPoly(mask, [_fixed(sp)], style.contact_shadow, cv2.LINE_AA, SHIFT)
        _apply_shadow(canvas, mask, max(0.5, 0.8 * ctx.ppm / sc))
    top_level: dict[str, int] = {}
    for c in scene.cards:
        if c.group in ("draw", "discard"):
            top_level[c.group] = max(top_level.get(c.group, 0), c.level)
    edge = np.clip(printing.paper * 0.9, 0, 255)
    for i in order:
        card = scene.cards[i]
        cw3, q = quads[i]
        if card.group in top_level and card.level < top_level[card.group] - 1:
            # buried in a pile: only its edge can show, drawn as a plain paper-coloured quad
            shade = 0.8 + 0.15 * ((card.level * 7919) % 13) / 13.0
            blend_poly(canvas, q, edge * shade, 1.0)
            _label_poly(label, q, LABEL_CARD + i)
            out.append(_CardOut(i, cw3, float(abs(cv2.contourArea(q.astype(np.float32))))))
            continue
        lens = [np.linalg.norm(q[1] - q[0]), np.linalg.norm(q[2] - q[1])]
        th = int(np.clip(math.ceil(max(lens[1], lens[0] * size[1] / size[0]) * 1.1), 6, 1200))
        tw = max(4, int(round(th * size[0] / size[1])))
        tex, alpha = _card_texture(deck, card, style, printing, tw, th, size, i)
        draw_quad(canvas, tex, alpha, q)
        _label_poly(label, q, LABEL_CARD + i)
        out.append(_CardOut(i, cw3, float(abs(cv2.contourArea(q.astype(np.float32))))))
    return out


@dataclass
class _PyrOut:
    index: int
    verts: np.ndarray


def _pyr_shading(style: Style, n: np.ndarray, view: np.ndarray) -> tuple[float, float]:
    diff, spec = style.ambient, 0.0
    for li in style.lights:
        L = li.direction()
        d = float(np.dot(n, L))
        if d > 0:
            diff += li.intensity * d
            hv = L + view
            hv /= np.linalg.norm(hv)
            spec += li.intensity * max(0.0, float(np.dot(n, hv))) ** 40
    return diff, spec


def _pyramids(ctx: _Ctx, canvas: np.ndarray, label: np.ndarray, scene: TableScene,
              style: Style) -> list[_PyrOut]:
    if not scene.pyramids:
        return []
    C = ctx.cam.center_world
    items = []
    for i, p in enumerate(scene.pyramids):
        v = pyramid_vertices(p)
        items.append((float(ctx.cam.depth(v.mean(axis=0, keepdims=True))[0]), i, v))
    # shadows
    sc = ctx.shadow_scale
    for li in style.lights:
        if li.shadow <= 0:
            continue
        mask = np.zeros((ctx.ch // sc + 1, ctx.cw // sc + 1), np.float32)
        L = li.direction()
        for _, i, v in sorted(items, key=lambda it: PYRAMID_ALPHA[scene.pyramids[it[1]].color]):
            p = scene.pyramids[i]
            rest = -p.rest_height_mm
            t = (v[:, 2] - rest) / L[2]  # distance along L down to the resting plane
            sh = v - t[:, None] * L
            sp = _project(ctx, sh) / sc
            if not _drawable(sp):
                continue
            hull = cv2.convexHull(sp.astype(np.float32))
            strength = li.shadow * (0.45 + 0.55 * PYRAMID_ALPHA[p.color])
            cv2.fillPoly(mask, [_fixed(hull.reshape(-1, 2))], strength, cv2.LINE_AA, SHIFT)
        _apply_shadow(canvas, mask, max(0.6, li.softness_mm * ctx.ppm / sc))
    tint_rng = np.random.default_rng([style.seed, 23])
    tints = {c: 1.0 + style.pyramid_tint * tint_rng.uniform(-0.15, 0.15, 3)
             for c in PYRAMID_BGR}
    out = []
    for _, i, v in sorted(items, key=lambda it: -it[0]):
        out.append(_PyrOut(i, v))
        p = scene.pyramids[i]
        base = np.array(PYRAMID_BGR[p.color], np.float32) * tints[p.color]
        alpha = PYRAMID_ALPHA[p.color]
        normals = face_normals(v)
        pv = _project(ctx, v)
        if not _drawable(pv):
            continue
        faces = []
        for fi, f in enumerate(PYRAMID_FACES):
            fc = v[list(f)].mean(axis=0)
            view = C - fc
            view /= np.linalg.norm(view)
            front = float(np.dot(normals[fi], view)) > 1e-6
            if p.upright and fi == 0:
                continue  # the base is on the table
            faces.append((front, float(ctx.cam.depth(fc[None])[0]), fi, f, view))
        if alpha < 1.0:  # back faces show through the plastic
            for _front, _, fi, f, view in sorted([x for x in faces if not x[0]], key=lambda x: -x[1]):
                diff, _ = _pyr_shading(style, -normals[fi], view)
                col = base * (0.5 + 0.5 * min(diff, 1.3)) * 0.8
                blend_poly(canvas, pv[list(f)], col, alpha * 0.55)
        for _front, _, fi, f, view in sorted([x for x in faces if x[0]], key=lambda x: -x[1]):
            diff, spec = _pyr_shading(style, normals[fi], view)
            col = base * diff + 255.0 * spec * (0.6 if alpha < 1 else 0.35)
            if p.color == "clear":
                col = col * 0.9 + 20
            blend_poly(canvas, pv[list(f)], col, alpha if alpha >= 1 else min(1.0, alpha + 0.4 * spec))
        # bright ridges where two faces meet
        edge_col = np.clip(base * 1.25 + 45, 0, 255)
        drawn = set()
        for front, _, _fi, f, _ in faces:
            if not front:
                continue
            for a, b in zip(f, f[1:] + f[:1]):
                key = (min(a, b), max(a, b))
                if key in drawn:
                    continue
                drawn.add(key)
        h, w = canvas.shape[:2]
        box = _roi_box(pv, w, h)
        if box is not None and drawn:
            x0, y0, x1, y1 = box
            roi = canvas[y0:y1, x0:x1]
            over = roi.copy()
            th = max(1, int(round(ctx.ppm * 0.5)))
            for a, b in drawn:
                pa = _fixed(pv[a] - [x0, y0]).reshape(2)
                pb = _fixed(pv[b] - [x0, y0]).reshape(2)
                cv2.line(over, tuple(int(x) for x in pa), tuple(int(x) for x in pb),
                         edge_col.tolist(), th, cv2.LINE_AA, SHIFT)
            cv2.addWeighted(over, 0.35 if alpha < 1 else 0.2, roi, 0.65 if alpha < 1 else 0.8, 0,
                            dst=roi)
        hull = cv2.convexHull(pv.astype(np.float32)).reshape(-1, 2)
        _label_poly(label, hull, LABEL_PYRAMID + i)
    out.sort(key=lambda o: o.index)
    return out


def _hands(image: np.ndarray, label: np.ndarray, style: Style, ctx: _Ctx,
           rng: np.random.Generator) -> list[list[list[float]]]:
    """Draw hands and arms reaching in from the image edges; returns their outlines (px)."""
    if not style.hands:
        return []
    h, w = image.shape[:2]
    polys = []
    card_px = ctx.ppm * 120.0
    for hand in style.hands:
        mask = np.zeros((h, w), np.uint8)
        sleeve = np.zeros((h, w), np.uint8)
        T = ctx.cam.project(np.array([[hand.target_mm[0], hand.target_mm[1], 0.0]]))[0]
        T = np.clip(T, [0.1 * w, 0.1 * h], [0.9 * w, 0.9 * h])
        aw = max(12.0, card_px * hand.width_frac)
        pl = aw * 1.15
        if hand.edge % 2 == 0:
            dist_e = T[1] if hand.edge == 0 else h - T[1]
            E = np.array([T[0] + hand.pos * dist_e * 0.6, -5.0 if hand.edge == 0 else h + 5.0])
        else:
            dist_e = w - T[0] if hand.edge == 1 else T[0]
            E = np.array([w + 5.0 if hand.edge == 1 else -5.0, T[1] + hand.pos * dist_e * 0.6])
        to_t = T - E
        ang = math.atan2(to_t[1], to_t[0])
        d = np.array([math.cos(ang), math.sin(ang)])
        nrm = np.array([-d[1], d[0]])
        reach = max(float(np.linalg.norm(to_t)) - pl * 0.45, aw)
        Wp = E + d * reach
        back = E - d * aw * 2
        arm = np.array([back + nrm * aw * 0.6, Wp + nrm * aw * 0.45, Wp - nrm * aw * 0.45,
                        back - nrm * aw * 0.6])
        cv2.fillConvexPoly(mask, _fixed(arm), 255, cv2.LINE_AA, SHIFT)
        if hand.sleeve is not None:
            s_end = E + d * reach * hand.sleeve_frac
            sl = np.array([back + nrm * aw * 0.7, s_end + nrm * aw * 0.62,
                           s_end - nrm * aw * 0.62, back - nrm * aw * 0.7])
            cv2.fillConvexPoly(sleeve, _fixed(sl), 255, cv2.LINE_AA, SHIFT)
        Pc = Wp + d * pl * 0.45
        cv2.ellipse(mask, (tuple(int(x) for x in _fixed(Pc).reshape(2))),
                    (int(pl * 0.55 * ONE), int(aw * 0.55 * ONE)), math.degrees(ang), 0, 360, 255,
                    -1, cv2.LINE_AA, SHIFT)
        fw = max(3, int(aw * 0.2))
        for k in range(4):
            fa = ang + math.radians((k - 1.5) * hand.spread_deg / 3)
            fd = np.array([math.cos(fa), math.sin(fa)])
            start = Pc + d * pl * 0.35 + nrm * (k - 1.5) * aw * 0.22
            flen = aw * (0.75 - 0.45 * hand.finger_curl) * (0.85 if k in (0, 3) else 1.0)
            end = start + fd * flen
            cv2.line(mask, tuple(int(x) for x in _fixed(start).reshape(2)),
                     tuple(int(x) for x in _fixed(end).reshape(2)), 255, fw, cv2.LINE_AA, SHIFT)
        side = 1 if hand.edge % 2 == 0 else -1
        ta = ang + side * math.radians(55)
        tstart = Pc + nrm * side * aw * 0.4
        tend = tstart + np.array([math.cos(ta), math.sin(ta)]) * aw * 0.6
        cv2.line(mask, tuple(int(x) for x in _fixed(tstart).reshape(2)),
                 tuple(int(x) for x in _fixed(tend).reshape(2)), 255, int(fw * 1.2), cv2.LINE_AA,
                 SHIFT)
        full = cv2.max(mask, sleeve)
        # shadow on the table, offset away from the main light
        L = style.lights[0].direction() if style.lights else np.array([0, 0, -1.0])
        off = -L[:2] / max(0.2, -L[2]) * aw * 0.5
        M: np.ndarray = np.array([[1, 0, off[0]], [0, 1, off[1]]], np.float32)
        small = cv2.resize(full, (w // 4, h // 4), interpolation=cv2.INTER_AREA)
        sh = cv2.warpAffine(small.astype(np.float32) * (0.45 / 255.0),
                            M / np.array([[1, 1, 4]], np.float32), (w // 4, h // 4))
        _apply_shadow(image, sh, aw / 8)
        pts = cv2.findNonZero(small)
        if pts is None:
            continue
        bx, by, bw, bh = cv2.boundingRect(pts)
        x0, y0 = max(0, bx * 4 - 4), max(0, by * 4 - 4)
        x1, y1 = min(w, (bx + bw) * 4 + 4), min(h, (by + bh) * 4 + 4)
        fm = full[y0:y1, x0:x1]
        dist = cv2.distanceTransform((fm > 127).astype(np.uint8), cv2.DIST_L2, 3)
        shade = 0.62 + 0.38 * np.clip(dist / (aw * 0.35), 0, 1)
        shade += 0.04 * textures.smooth_noise(rng, y1 - y0, x1 - x0, aw / 2)
        skin = np.array(hand.skin, np.float32)
        col = np.empty((y1 - y0, x1 - x0, 3), np.float32)
        col[:] = skin
        if hand.sleeve is not None:
            sm = sleeve[y0:y1, x0:x1, None].astype(np.float32) / 255.0
            col = col * (1 - sm) + np.array(hand.sleeve, np.float32) * sm
        col *= shade[..., None]
        a = cv2.GaussianBlur(fm, (0, 0), 0.8).astype(np.float32)[..., None] / 255.0
        roi = image[y0:y1, x0:x1]
        roi[:] = (roi.astype(np.float32) * (1 - a) + col * a + 0.5).clip(0, 255).astype(np.uint8)
        label[y0:y1, x0:x1][fm > 127] = LABEL_HAND
        cnts, _ = cv2.findContours((full > 127).astype(np.uint8), cv2.RETR_EXTERNAL,
                                   cv2.CHAIN_APPROX_SIMPLE)
        for c in cnts:
            c = cv2.approxPolyDP(c, 2.0, True).reshape(-1, 2)
            polys.append([[float(x), float(y)] for x, y in c])
    return polys


def _glare(image: np.ndarray, style: Style) -> list[dict[str, Any]]:
    out = []
    h, w = image.shape[:2]
    for gx, gy, ax, ay, ang, strength in style.glare:
        sc = 4
        m = np.zeros((h // sc + 1, w // sc + 1), np.float32)
        cv2.ellipse(m, (int(gx * w / sc), int(gy * h / sc)),
                    (max(1, int(ax * w / sc)), max(1, int(ay * w / sc))), ang, 0, 360, 1.0, -1)
        _apply_shadow(image, m * -strength, max(1.0, ax * w / sc * 0.5), toward=255.0)
        out.append({"center_px": [round(gx * w, 1), round(gy * h, 1)],
                    "axes_px": [round(ax * w, 1), round(ay * w, 1)], "angle_deg": round(ang, 1),
                    "strength": round(strength, 3)})
    return out


_NOISE: list[np.ndarray] = []


def _noise_tile() -> np.ndarray:
    """A fixed field of unit Gaussian noise, correlated over 2x2 pixels like a demosaiced
    sensor; windows of it at seeded offsets make each image's noise."""
    if not _NOISE:
        white = np.random.default_rng(20240611).standard_normal((1100, 1000, 3))
        white = white.astype(np.float32)
        g = cv2.GaussianBlur(white, (0, 0), 0.6)
        g = g / g.std()
        _NOISE.append(g)
    return _NOISE[0]


def _sensor(image: np.ndarray, cam: Camera, style: Style, rng: np.random.Generator) -> np.ndarray:
    h, w = image.shape[:2]
    needs_gain = (style.vignette > 0 or style.light_gradient[0] != 0 or style.exposure != 1.0
                  or style.wb != (1.0, 1.0, 1.0))
    if style.motion[0] >= 1.5:
        n = int(math.ceil(style.motion[0])) | 1
        k = np.zeros((n, n), np.float32)
        c = n // 2
        a = math.radians(style.motion[1])
        cv2.line(k, (int(round(c - math.cos(a) * c)), int(round(c - math.sin(a) * c))),
                 (int(round(c + math.cos(a) * c)), int(round(c + math.sin(a) * c))), 1.0, 1)
        k /= k.sum()
        image = cv2.filter2D(image, -1, k, borderType=cv2.BORDER_REFLECT)
    if style.blur_sigma > 0.25:
        image = cv2.GaussianBlur(image, (0, 0), style.blur_sigma)
    if not needs_gain and style.noise_sigma <= 0:
        return image
    f = None
    if needs_gain:
        sw, sh = w // 16 + 2, h // 16 + 2
        ys, xs = np.mgrid[0:sh, 0:sw].astype(np.float32)
        xs = xs * (w / (sw - 1)) - cam.K[0, 2]
        ys = ys * (h / (sh - 1)) - cam.K[1, 2]
        rmax = math.hypot(w / 2, h / 2)
        r2 = (xs * xs + ys * ys) / (rmax * rmax)
        g = 1.0 - style.vignette * r2
        amt, ang = style.light_gradient
        g *= 1.0 + amt * (xs * math.cos(math.radians(ang)) + ys * math.sin(math.radians(ang))) / rmax
        g3: np.ndarray = np.stack([g * style.exposure * style.wb[0],
                                   g * style.exposure * style.wb[1],
                                   g * style.exposure * style.wb[2]], axis=2).astype(np.float32)
        g3 = cv2.resize(g3, (w, h), interpolation=cv2.INTER_LINEAR)
        f = cv2.multiply(image, g3, dtype=cv2.CV_32F)
    if f is None:
        f = image.astype(np.float32)
    if style.noise_sigma > 0:
        # sensor noise: a random window of a fixed noise field (cheap; seeded offsets)
        tile = _noise_tile()
        th_, tw_ = tile.shape[:2]
        oy, ox = int(rng.integers(0, th_)), int(rng.integers(0, tw_))
        sig = float(style.noise_sigma)
        y = 0
        while y < h:  # walk the image in blocks that map onto the (wrapped) tile
            ty = (oy + y) % th_
            bh = min(h - y, th_ - ty)
            x = 0
            while x < w:
                tx = (ox + x) % tw_
                bw = min(w - x, tw_ - tx)
                blk = f[y:y + bh, x:x + bw]
                cv2.scaleAdd(tile[ty:ty + bh, tx:tx + bw], sig, blk, dst=blk)
                x += bw
            y += bh
    np.clip(f, 0, 255, out=f)
    return (f + 0.5).astype(np.uint8)


# ---------------------------------------------------------------------------------------------
# truth


def _pts(a: np.ndarray, nd: int = 2) -> list[list[float]]:
    return [[round(float(x), nd) + 0.0 for x in row] for row in np.asarray(a)]


def _frac(counts: np.ndarray, lab: int, area: float) -> float:
    if area <= 1.0:
        return 0.0
    n = float(counts[lab]) if lab < len(counts) else 0.0
    return round(min(1.0, n / area), 3)


def _truth(scene: TableScene, deck: Deck, mat: Mat, cam: Camera, style: Style,
           markers: dict[int, np.ndarray], cards: list[_CardOut], pyrs: list[_PyrOut],
           label: np.ndarray, label_cards: np.ndarray, hand_polys: list[list[list[float]]],
           glare: list[dict[str, Any]],
           image_name: str) -> dict[str, Any]:
    w, h = cam.width, cam.height
    # occlusion: count label pixels on every other row and column (x4), enough for fractions
    counts = np.bincount(label[::2, ::2].ravel(), minlength=LABEL_HAND + 1) * 4.0
    # (cards covering cards: counted on the undistorted canvas, areas taken there too)
    counts_c = np.bincount(label_cards[::2, ::2].ravel(), minlength=LABEL_PYRAMID) * 4.0

    def in_frame(px: np.ndarray) -> bool:
        return bool(np.all((px[:, 0] >= 0) & (px[:, 0] <= w - 1) & (px[:, 1] >= 0)
                           & (px[:, 1] <= h - 1)))

    markers_px = {}
    calibrated = True
    for mid, mw in markers.items():
        px = cam.project(mw)
        area = float(abs(cv2.contourArea(px.astype(np.float32))))
        vis = _frac(counts, LABEL_MARKER + mid, area)
        markers_px[str(mid)] = {"corners_px": _pts(px), "visible": vis}
        if not in_frame(px) or vis < 0.97:
            calibrated = False

    seen: list[CardSighting] = []
    covered: list[dict[str, Any]] = []
    for co in sorted(cards, key=lambda c: c.index):
        card = scene.cards[co.index]
        px = cam.project(co.corners_w)
        ctr = cam.project(np.array([[card.center_mm[0], card.center_mm[1], -card.height_mm]]))
        area = float(abs(cv2.contourArea(px.astype(np.float32))))
        lab = LABEL_CARD + co.index
        uncovered = _frac(counts_c, lab, co.area_ideal)
        extra = {
            "card_id": card.id, "face_up": card.face_up,
            "corners_px": _pts(px), "center_px": _pts(ctr)[0],
            "height_mm": round(card.height_mm, 3), "level": card.level,
            "stack_size": card.stack_size, "cell": list(card.cell) if card.cell else None,
            "group": card.group, "visible": _frac(counts, lab, area), "uncovered": uncovered,
            "in_frame": in_frame(px),
        }
        s = CardSighting(card.shown_id, card.center_mm, card.angle_deg, 1.0, extra)
        if uncovered >= 0.5:
            seen.append(s)
        else:
            covered.append(s.to_dict())

    seen_p: list[PyramidSighting] = []
    for po in pyrs:
        p = scene.pyramids[po.index]
        v = po.verts
        px = cam.project(v)
        bc = np.array([[p.base_center_mm[0], p.base_center_mm[1], -p.rest_height_mm]])
        sq = v[:4].mean(axis=0, keepdims=True)
        more = cam.project(np.vstack([bc, sq]))
        hull = cv2.convexHull(px.astype(np.float32)).reshape(-1, 2)
        area = float(abs(cv2.contourArea(hull)))
        x0, y0 = px.min(axis=0)
        x1, y1 = px.max(axis=0)
        extra = {
            "base_center_px": _pts(more[:1])[0], "base_square_center_px": _pts(more[1:])[0],
            "apex_px": _pts(px[4:5])[0], "base_corners_px": _pts(px[:4]),
            "apex_mm": [round(float(v[4, 0]), 3), round(float(v[4, 1]), 3),
                        round(float(-v[4, 2]), 3)],
            "rest_height_mm": round(p.rest_height_mm, 3),
            "bbox_px": [round(float(x0), 2), round(float(y0), 2), round(float(x1), 2),
                        round(float(y1), 2)],
            "cell": list(p.cell) if p.cell else None,
            "visible": _frac(counts, LABEL_PYRAMID + po.index, area),
            "in_frame": in_frame(px),
        }
        seen_p.append(PyramidSighting(p.color, p.pips, p.upright, p.pointing_deg,
                                      p.base_center_mm, 1.0, extra))

    obs = Observation(image=image_name, calibrated=calibrated, cards=seen, pyramids=seen_p)
    obs.extra = {
        "covered_cards": covered,
        "hands": bool(hand_polys),
        "hand_polygons_px": [_pts(np.array(p), 1) for p in hand_polys],
        "glare": glare,
        "trustworthy": not hand_polys,
        "markers": markers_px,
        "camera": cam.to_dict(),
        "mat": mat.to_dict(),
        "deck": {"name": deck.name, "kind": deck.kind,
                 "card_size_mm": list(scene.card_size_mm)},
        "game": scene.game,
        "lattice": None if scene.lattice_pitch_mm is None else {
            "origin_mm": [round(float(v), 3) for v in (scene.lattice_origin_mm or (0, 0))],
            "pitch_mm": round(float(scene.lattice_pitch_mm), 3)},
        "state": scene.state,
        "style": style.describe(),
    }
    return obs.to_dict()
