"""Procedural textures: table surfaces, tarot backs, and the look of a printing of a deck.

Everything takes a numpy ``Generator`` and is deterministic given it.
Images are BGR uint8 unless said otherwise.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

SURFACES = ("cloth", "wood", "felt", "pattern", "newspaper")


def smooth_noise(rng: np.random.Generator, h: int, w: int, cell: float) -> np.ndarray:
    """Zero-mean, unit-ish float32 value noise with features about ``cell`` px wide."""
    gh = max(2, int(h / max(cell, 1.0)) + 3)
    gw = max(2, int(w / max(cell, 1.0)) + 3)
    g = rng.standard_normal((gh, gw)).astype(np.float32)
    return cv2.resize(g, (w, h), interpolation=cv2.INTER_CUBIC)


def _hsv_color(h: float, s: float, v: float) -> np.ndarray:
    px = np.array([[[int(h) % 180, int(np.clip(s, 0, 255)), int(np.clip(v, 0, 255))]]],
                  np.uint8)
    bgr: np.ndarray = cv2.cvtColor(px, cv2.COLOR_HSV2BGR)[0, 0].astype(np.float32)
    return bgr


def random_color(rng: np.random.Generator, s: tuple[float, float] = (20, 200),
                 v: tuple[float, float] = (40, 230)) -> np.ndarray:
    return _hsv_color(rng.uniform(0, 180), rng.uniform(*s), rng.uniform(*v))


def table_surface(rng: np.random.Generator, kind: str, h: int, w: int, px_per_mm: float
                  ) -> np.ndarray:
    """A ``h`` x ``w`` texture of table surface ``kind`` at ``px_per_mm`` (BGR uint8)."""
    s = px_per_mm
    if kind == "cloth":
        base = random_color(rng, s=(10, 190), v=(35, 235))
        shade = 1.0 + 0.06 * smooth_noise(rng, h, w, 120 * s)
        # creases: sharper, smaller features
        crease = smooth_noise(rng, h, w, 35 * s)
        shade += np.clip(crease, -1.5, 1.5) * (0.035 * float(rng.uniform(0.2, 1.0)))
        img = shade[..., None] * base[None, None]
    elif kind == "felt":
        hue = rng.choice([60, 55, 110, 0, 170, 15, 95, 130]) + rng.uniform(-6, 6)
        base = _hsv_color(hue, rng.uniform(90, 220), rng.uniform(50, 150))
        shade = 1.0 + 0.04 * smooth_noise(rng, h, w, 80 * s) + 0.05 * smooth_noise(rng, h, w, 2.0)
        img = shade[..., None] * base[None, None]
    elif kind == "wood":
        img = _wood(rng, h, w, s)
    elif kind == "pattern":
        img = _pattern(rng, h, w, s)
    elif kind == "newspaper":
        under = rng.choice(["cloth", "wood", "felt"])
        img = table_surface(rng, str(under), h, w, s).astype(np.float32)
        return img.clip(0, 255).astype(np.uint8)  # sheet is drawn later in table space
    else:
        raise ValueError(f"unknown surface {kind!r}")
    out: np.ndarray = np.clip(img, 0, 255).astype(np.uint8)
    return out


def _wood(rng: np.random.Generator, h: int, w: int, s: float) -> np.ndarray:
    c1 = _hsv_color(rng.uniform(8, 22), rng.uniform(90, 200), rng.uniform(70, 210))
    c2 = c1 * rng.uniform(0.55, 0.8)
    plank = rng.uniform(90, 200) * s
    vertical = bool(rng.random() < 0.5)
    L, A = (h, w) if vertical else (w, h)   # along / across the grain
    across = np.arange(A, dtype=np.float32)[None, :]
    # grain: lines along the plank, gently wandering; built as (along, across) then transposed
    wander = (6 * s * smooth_noise(rng, L, A, 180 * s) + 1.5 * s * smooth_noise(rng, L, A, 30 * s))
    idx = np.floor(across / plank)
    period = rng.uniform(2.5, 6) * s
    phase = (across + wander + idx * 37.0) / period
    rings = 0.5 + 0.5 * np.sin(phase)
    rings *= rings
    streak = smooth_noise(rng, L // 8 + 2, A, 1.0)
    streak = cv2.resize(streak, (A, L), interpolation=cv2.INTER_LINEAR)
    t = np.clip(0.5 * rings + 0.12 * streak + 0.12 * smooth_noise(rng, L, A, 60 * s), 0, 1)
    tint = 1.0 + 0.08 * np.sin(idx * 12.9898 + rng.uniform(0, 6))
    seam = (np.abs(across - (idx + 1) * plank) < max(0.8, 0.7 * s)).astype(np.float32)
    g = tint * (1.0 - 0.45 * seam)
    img: np.ndarray = ((c1[None, None] * (1 - t[..., None]) + c2[None, None] * t[..., None])
                       * g[..., None])
    if not vertical:
        img = np.ascontiguousarray(img.transpose(1, 0, 2))
    return img


def _pattern(rng: np.random.Generator, h: int, w: int, s: float) -> np.ndarray:
    c1 = random_color(rng, s=(0, 120), v=(150, 245))
    c2 = random_color(rng, s=(60, 230), v=(40, 200))
    kind = rng.choice(["gingham", "stripes", "dots", "diamonds"])
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    period = rng.uniform(12, 45) * s
    a = math.radians(rng.uniform(0, 180))
    u = xs * math.cos(a) + ys * math.sin(a)
    v = -xs * math.sin(a) + ys * math.cos(a)
    if kind == "gingham":
        m = 0.5 * ((np.mod(u, period) < period / 2).astype(np.float32)
                   + (np.mod(v, period) < period / 2).astype(np.float32))
    elif kind == "stripes":
        m = (np.mod(u, period) < period * rng.uniform(0.2, 0.6)).astype(np.float32)
    elif kind == "dots":
        du = np.mod(u, period) - period / 2
        dv = np.mod(v, period) - period / 2
        m = (du * du + dv * dv < (period * rng.uniform(0.15, 0.35)) ** 2).astype(np.float32)
    else:
        m = ((np.mod(u + v, period) < period / 2) ^ (np.mod(u - v, period) < period / 2)
             ).astype(np.float32)
    m = cv2.GaussianBlur(m, (0, 0), max(0.5, 0.4 * s))
    img: np.ndarray = c1[None, None] * (1 - m[..., None]) + c2[None, None] * m[..., None]
    img *= (1.0 + 0.05 * smooth_noise(rng, h, w, 100 * s))[..., None]
    return img


def newspaper_sheet(rng: np.random.Generator, w_mm: float, h_mm: float, px_per_mm: float
                    ) -> np.ndarray:
    """A newspaper page: columns of grey text lines, headlines and photos (BGR uint8)."""
    s = px_per_mm
    W, H = max(8, int(w_mm * s)), max(8, int(h_mm * s))
    paper = _hsv_color(rng.uniform(15, 30), rng.uniform(5, 35), rng.uniform(200, 240))
    img = np.empty((H, W, 3), np.float32)
    img[:] = paper
    ink = np.array([40, 40, 45], np.float32)
    ncol = int(rng.integers(3, 7))
    margin = 12 * s
    colw = (W - 2 * margin) / ncol
    line = 3.2 * s
    y = margin
    # masthead / headline
    hh = rng.uniform(12, 22) * s
    cv2.rectangle(img, (int(margin), int(y)), (int(W - margin), int(y + hh)), ink.tolist(), -1)
    y0 = y + hh + 6 * s
    for c in range(ncol):
        x0 = margin + c * colw + 2 * s
        x1 = margin + (c + 1) * colw - 2 * s
        yy = y0
        while yy < H - margin:
            r = rng.random()
            if r < 0.04:  # photo
                ph = rng.uniform(30, 80) * s
                tone = rng.uniform(60, 190)
                cv2.rectangle(img, (int(x0), int(yy)), (int(x1), int(min(yy + ph, H - margin))),
                              (tone, tone, tone), -1)
                yy += ph + 4 * s
            elif r < 0.08:  # sub-headline
                cv2.rectangle(img, (int(x0), int(yy)), (int(x1 - rng.uniform(0, 0.3) * colw),
                                                        int(yy + 5 * s)), ink.tolist(), -1)
                yy += 8 * s
            else:
                end = x1 if rng.random() > 0.15 else x0 + (x1 - x0) * rng.uniform(0.2, 0.9)
                tone = 0.55 if s < 1.5 else 0.0  # sub-resolution text reads as grey
                col = (paper * tone + ink * (1 - tone)).tolist()
                cv2.rectangle(img, (int(x0), int(yy)), (int(end), int(yy + max(1, 1.6 * s))),
                              col, -1)
                yy += line
    img *= (1.0 + 0.04 * smooth_noise(rng, H, W, 60 * s))[..., None]
    return img.clip(0, 255).astype(np.uint8)


def procedural_back(rng: np.random.Generator, w: int = 140, h: int = 240) -> np.ndarray:
    """A card back with 180-degree symmetry: border, field colour and a repeating motif."""
    field = random_color(rng, s=(80, 230), v=(50, 170))
    fg = random_color(rng, s=(0, 120), v=(170, 250)) if rng.random() < 0.6 else field * 0.5
    border = np.array([238, 240, 242], np.float32) if rng.random() < 0.6 else fg
    img = np.empty((h, w, 3), np.float32)
    img[:] = border
    m = int(w * rng.uniform(0.04, 0.09))
    img[m:h - m, m:w - m] = field
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    xc, yc = xs - (w - 1) / 2, ys - (h - 1) / 2
    kind = rng.integers(0, 3)
    p = w * rng.uniform(0.08, 0.2)
    if kind == 0:   # diamond lattice
        mask = (np.mod(np.abs(xc) + np.abs(yc), p) < p * 0.25)
    elif kind == 1:  # dots grid
        du, dv = np.mod(xc, p) - p / 2, np.mod(yc, p) - p / 2
        mask = du * du + dv * dv < (p * 0.22) ** 2
    else:            # concentric frames
        mask = np.mod(np.maximum(np.abs(xc) / w, np.abs(yc) / h) * w, p) < p * 0.3
    inner = np.zeros((h, w), bool)
    inner[m + 3:h - m - 3, m + 3:w - m - 3] = True
    img[mask & inner] = fg
    cv2.ellipse(img, (w // 2, h // 2), (int(w * 0.25), int(h * 0.17)), 0, 0, 360,
                fg.tolist() if kind != 1 else border.tolist(), max(1, w // 40), cv2.LINE_AA)
    return img.clip(0, 255).astype(np.uint8)


def rounded_alpha(h: int, w: int, radius: float) -> np.ndarray:
    """uint8 alpha of a rounded rectangle filling a ``w`` x ``h`` texture."""
    a = np.zeros((h, w), np.uint8)
    r = max(0.0, min(radius, min(w, h) / 2 - 1))
    if r < 1.0:
        a[:] = 255
        return a
    sh = 4
    R = int(round(r * (1 << sh)))
    ri = int(math.ceil(r))
    a[ri:h - ri, :] = 255
    a[:, ri:w - ri] = 255
    for cx, cy in ((r - 0.5, r - 0.5), (w - r - 0.5, r - 0.5), (w - r - 0.5, h - r - 0.5),
                   (r - 0.5, h - r - 0.5)):
        cv2.circle(a, (int(round(cx * (1 << sh))), int(round(cy * (1 << sh)))), R, 255, -1,
                   cv2.LINE_AA, sh)
    return a


class Printing:
    """How one printing of a deck differs from the scans: colour, paper, borders, corners."""

    def __init__(self, rng: np.random.Generator, strength: float = 1.0) -> None:
        k = strength
        M = np.eye(3, dtype=np.float32)
        M += (rng.uniform(-0.03, 0.03, (3, 3)) * k).astype(np.float32)
        M /= M.sum(axis=1, keepdims=True)  # keep white white; shift hues only
        M *= (1.0 + rng.uniform(-0.06, 0.06, (3, 1)) * k).astype(np.float32)
        self.matrix = M
        self.saturation = float(1.0 + rng.uniform(-0.3, 0.15) * k)
        self.yellow = float(max(0.0, rng.uniform(-0.15, 0.3)) * k)
        self.gamma = float(1.0 + rng.uniform(-0.15, 0.15) * k)
        self.border = float(max(0.0, rng.uniform(-0.02, 0.07)) * k)  # extra border, of width
        self.crop = float(max(0.0, rng.uniform(-0.02, 0.025)) * k)   # trim of the scan's border
        self.paper = (np.array([232, 240, 244], np.float32)
                      + rng.uniform(-12, 10, 3).astype(np.float32))
        self.corner_mm = float(rng.uniform(2.0, 4.5)) if k > 0 else 3.0
        self.gloss = float(rng.uniform(0.0, 0.5) * k)
        self.bend = float(rng.uniform(0.0, 0.12) * k)
        lut = np.clip(((np.arange(256) / 255.0) ** self.gamma) * 255.0, 0, 255)
        self.lut = lut.astype(np.uint8)
        self.identity = k == 0
        # colour matrix, saturation and yellowing folded into one 3x3 transform
        S = self.saturation * np.eye(3) + (1 - self.saturation) / 3.0 * np.ones((3, 3))
        Y = (1 - self.yellow) * np.eye(3) + self.yellow * np.diag([0.86, 0.97, 1.0])
        self.full = (Y @ S @ self.matrix.astype(np.float64)).astype(np.float32)

    def apply(self, art: np.ndarray, out_w: int, out_h: int) -> np.ndarray:
        """Art (any size) -> this printing's card face at ``out_w`` x ``out_h`` px."""
        h, w = art.shape[:2]
        if self.crop > 0:
            cy, cx = int(h * self.crop), int(w * self.crop)
            art = art[cy:h - cy, cx:w - cx]
        img: np.ndarray
        if self.border > 0:
            bx = max(1, int(round(out_w * self.border)))
            by = bx
            inner = cv2.resize(art, (max(2, out_w - 2 * bx), max(2, out_h - 2 * by)),
                               interpolation=cv2.INTER_AREA)
            img = np.empty((out_h, out_w, 3), np.uint8)
            img[:] = np.clip(self.paper, 0, 255).astype(np.uint8)
            img[by:by + inner.shape[0], bx:bx + inner.shape[1]] = inner
        else:
            img = cv2.resize(art, (out_w, out_h), interpolation=cv2.INTER_AREA
                             if art.shape[0] > 2 * out_h else cv2.INTER_LINEAR)
        if self.identity:
            return img
        img = cv2.LUT(img, self.lut)
        return cv2.transform(img, self.full)
