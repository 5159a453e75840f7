"""Random scenes, cameras and looks, and writing a dataset of rendered images with truth.

Image ``index`` of a run with ``seed`` draws everything from
``numpy.random.default_rng([seed, index])``, so one image can be re-made alone, in any order,
by any number of worker processes, and the same seed gives the same bytes.
"""

from __future__ import annotations

import json
import logging
import math
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from calibration.mat import DEFAULT_MAT, Mat
from companion.core.files import atomic_file
from companion.core.pieces import DIRECTIONS, Color, Pose, Pyramid
from vision.synth import textures
from vision.synth.camera import RESOLUTIONS, Camera, fit_distance, look_camera, mat_outline
from vision.synth.deck import Deck
from vision.synth.errors import SynthError
from vision.synth.render import Hand, Light, Style, render
from vision.synth.scene import (CardPlacement, PyramidPlacement, TableScene, lying_extent_mm,
                                scene_from_lattice)

log = logging.getLogger(__name__)

GAMES = ("zarcana", "free", "mixed", "crowded")
#: lighting: the renderer's everyday rooms, a dim or coloured lamp in every image, or either
LIGHTS = ("ordinary", "lamp", "mixed")
COLORS = tuple(c.value for c in Color)
SKIN = [(95, 135, 200), (120, 160, 225), (70, 105, 165), (50, 75, 120), (35, 55, 90),
        (150, 180, 230), (85, 120, 185)]


def image_rng(seed: int, index: int) -> np.random.Generator:
    return np.random.default_rng([int(seed), int(index)])


# ---------------------------------------------------------------------------------------------
# scenes


def _grow_blob(rng: np.random.Generator, n: int) -> list[tuple[int, int]]:
    cells = [(0, 0)]
    cellset = {(0, 0)}
    while len(cells) < n:
        base = cells[int(rng.integers(len(cells)))]
        d = DIRECTIONS[int(rng.integers(4))].delta
        c = (base[0] + d[0], base[1] + d[1])
        if c not in cellset:
            cells.append(c)
            cellset.add(c)
    return cells


def _rect_overlap(a: tuple[float, float, float, float], b: tuple[float, float, float, float]
                  ) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _keepouts(mat: Mat, pad: float = 15.0) -> list[tuple[float, float, float, float]]:
    half = mat.marker_size_mm / 2 + pad
    rects = [(x - half, y - half, x + half, y + half) for x, y in mat.marker_centers().values()]
    rects += [(z[0] - pad, z[1] - pad, z[2] + pad, z[3] + pad) for z in mat.zones.values()]
    return rects


def random_lattice(rng: np.random.Generator, deck: Deck, n_cards: int | None = None
                   ) -> tuple[dict[tuple[int, int], list[Any]],
                          dict[tuple[int, int], list[Pyramid]], dict[tuple[int, int], bool]]:
    """A plausible Zarcana position: (cards by cell, pyramids by cell, flipped cells)."""
    n = int(n_cards or rng.integers(4, 21))
    cells = _grow_blob(rng, n)
    ids = list(deck.ids)
    order = rng.permutation(len(ids))
    pool = [ids[k] for k in order]
    cards: dict[tuple[int, int], list[Any]] = {}
    for c in cells:
        depth = 1 if rng.random() < 0.8 else int(rng.integers(2, 5))
        stack = []
        for _ in range(depth):
            cid = pool.pop() if pool else ids[int(rng.integers(len(ids)))]
            stack.append(cid)
        if rng.random() < 0.06:
            stack[-1] = (stack[-1], False)  # face down on top
        cards[c] = stack
    flip = {c: bool(rng.random() < 0.3) for c in cells}
    waste = sorted({(c[0] + d.delta[0], c[1] + d.delta[1]) for c in cells for d in DIRECTIONS}
                   - set(cells))
    pyramids: dict[tuple[int, int], list[Pyramid]] = {}
    candidates = cells + waste
    n_pyr_cells = int(rng.integers(0, max(2, len(candidates) // 3) + 1))
    for k in rng.permutation(len(candidates))[:n_pyr_cells]:
        c = candidates[int(k)]
        pop = int(rng.choice([1, 1, 1, 2, 2, 3]))
        plist = []
        for _ in range(pop):
            color = Color(COLORS[int(rng.integers(len(COLORS)))])
            size = int(rng.integers(1, 4))
            pose = Pose.UP if rng.random() < 0.55 else DIRECTIONS[int(rng.integers(4))]
            plist.append(Pyramid(color, size, pose))
        pyramids[c] = plist
    return cards, pyramids, flip


def _place_lattice(rng: np.random.Generator, scene: TableScene, mat: Mat) -> TableScene | None:
    """Shift a lattice scene to a random spot on the mat that avoids markers and zones."""
    if not scene.cards and not scene.pyramids:
        return scene
    w, h = scene.card_size_mm
    boxes = []
    for c in scene.cards:
        portrait = abs(math.sin(math.radians(c.angle_deg))) > 0.7
        hw, hh = (w / 2, h / 2) if portrait else (h / 2, w / 2)
        boxes.append((c.center_mm[0] - hw, c.center_mm[1] - hh, c.center_mm[0] + hw,
                      c.center_mm[1] + hh))
    for p in scene.pyramids:
        r = lying_extent_mm(p.pips)
        boxes.append((p.base_center_mm[0] - r, p.base_center_mm[1] - r,
                      p.base_center_mm[0] + r, p.base_center_mm[1] + r))
    bx0 = min(b[0] for b in boxes)
    by0 = min(b[1] for b in boxes)
    bx1 = max(b[2] for b in boxes)
    by1 = max(b[3] for b in boxes)
    keep = _keepouts(mat)
    for _ in range(60):
        dx = rng.uniform(10 - bx0, max(10 - bx0 + 1, mat.width_mm - 10 - bx1))
        dy = rng.uniform(10 - by0, max(10 - by0 + 1, mat.height_mm - 10 - by1))
        moved = [(b[0] + dx, b[1] + dy, b[2] + dx, b[3] + dy) for b in boxes]
        if not any(_rect_overlap(m, k) for m in moved for k in keep):
            break
    else:
        return None
    for c in scene.cards:
        c.center_mm = (c.center_mm[0] + dx, c.center_mm[1] + dy)
    for p in scene.pyramids:
        p.base_center_mm = (p.base_center_mm[0] + dx, p.base_center_mm[1] + dy)
    if scene.lattice_origin_mm is not None:
        scene.lattice_origin_mm = (scene.lattice_origin_mm[0] + dx, scene.lattice_origin_mm[1] + dy)
    return scene


def add_pile(scene: TableScene, rng: np.random.Generator, ids: list[str], center: tuple[float, float],
             face_up: bool, group: str, loose: float = 1.0, base_angle: float = 270.0) -> None:
    """A pile of cards (bottom to top) around ``center``; ``loose`` scales the mess."""
    n = len(ids)
    level0 = max((c.level + 1 for c in scene.cards
                  if math.dist(c.center_mm, center) < 40), default=0)
    for k, cid in enumerate(ids):
        scene.cards.append(CardPlacement(
            id=cid, center_mm=(center[0] + rng.normal(0, 1.5 * loose),
                               center[1] + rng.normal(0, 1.5 * loose)),
            angle_deg=(base_angle + rng.normal(0, 2.5 * loose)) % 360, face_up=face_up,
            level=level0 + k, group=group, stack_size=n))


def _clear_of_markers(center: tuple[float, float], size: tuple[float, float], mat: Mat,
                      margin: float = 22.0) -> tuple[float, float]:
    """Move a portrait card's centre away from the markers until it covers none of them."""
    w, h = size
    half = mat.marker_size_mm / 2 + margin
    x, y = center
    for _ in range(60):
        box = (x - w / 2 - 6, y - h / 2 - 6, x + w / 2 + 6, y + h / 2 + 6)
        hit = [(mx, my) for mx, my in mat.marker_centers().values()
               if _rect_overlap(box, (mx - half, my - half, mx + half, my + half))]
        if not hit:
            break
        mx, my = hit[0]
        d = np.array([x - mx, y - my])
        d /= max(1e-6, float(np.linalg.norm(d)))
        x, y = x + 4 * d[0], y + 4 * d[1]
    return (float(x), float(y))


def _piles(scene: TableScene, rng: np.random.Generator, deck: Deck, mat: Mat,
           used: set[str]) -> None:
    # (a deck of a few cards can lay them all out: the piles then repeat some)
    ids = [c for c in deck.ids if c not in used] or list(deck.ids)
    rng.shuffle(ids)
    if "draw" in mat.zones and rng.random() < 0.85:
        n = int(rng.integers(3, 30))
        add_pile(scene, rng, [ids[k % len(ids)] for k in range(n)],
                 _clear_of_markers(mat.zone_center("draw"), deck.card_size_mm, mat),
                 False, "draw", loose=rng.uniform(0.3, 1.5))
    if "discard" in mat.zones and rng.random() < 0.75:
        n = int(rng.integers(1, 10))
        add_pile(scene, rng, [ids[-1 - (k % len(ids))] for k in range(n)],
                 _clear_of_markers(mat.zone_center("discard"), deck.card_size_mm, mat),
                 True, "discard", loose=rng.uniform(1.0, 4.0))


def _pyramid_ok(p: PyramidPlacement, others: list[PyramidPlacement]) -> bool:
    for q in others:
        if math.dist(p.base_center_mm, q.base_center_mm) < (
                lying_extent_mm(p.pips) + lying_extent_mm(q.pips)) * 0.55:
            return False
    return True


def engine_zarcana_scene(rng: np.random.Generator, deck: Deck, mat: Mat) -> TableScene | None:
    """A position from a random playout of the Zarcana engine (None if it is unavailable or
    the deck is not a tarot deck)."""
    if deck.kind != "tarot":
        return None
    try:
        import random

        from companion.games.zarcana import new_game
        from vision.synth.samples import add_state_piles, scene_from_state, state_summary
    except ImportError:
        return None
    players = [c.value for c in Color][: int(rng.integers(2, 5))]
    order = [players[int(k)] for k in rng.permutation(len(players))]
    st = new_game(order, edition=str(rng.choice(["looney", "1996"])),
                  seed=int(rng.integers(0, 2**31)))
    chooser = random.Random(int(rng.integers(0, 2**31)))
    for _ in range(int(rng.integers(0, 50))):
        if st.is_over:
            break
        moves = st.legal_moves()
        if not moves:
            break
        st = st.apply(chooser.choice(moves))
    slop_seed = int(rng.integers(0, 2**31))
    cells = list(st.board) + list(st.pieces) or [(0, 0)]
    pitch = deck.lattice_pitch_mm
    ci = (min(c[0] for c in cells) + max(c[0] for c in cells)) / 2
    cj = (min(c[1] for c in cells) + max(c[1] for c in cells)) / 2
    origin = (mat.width_mm / 2 - ci * pitch, mat.height_mm / 2 - 40 - cj * pitch)
    scene = scene_from_state(st, deck, mat, origin, slop_seed=slop_seed, piles=False)
    for c in scene.cards:
        if c.id not in deck.files and c.id != "back":
            return None  # an id the deck folder lacks (e.g. extra cards)
    scene.game = "zarcana"
    placed = _place_lattice(rng, scene, mat) or scene
    add_state_piles(placed, st, deck, mat, slop_seed)
    placed.state = dict(state_summary(st), source="engine playout")
    return placed


def random_zarcana_scene(rng: np.random.Generator, deck: Deck, mat: Mat,
                         engine_share: float = 0.5) -> TableScene:
    if rng.random() < engine_share:
        played = engine_zarcana_scene(rng, deck, mat)
        if played is not None:
            return played
    for _ in range(20):
        cards, pyramids, flip = random_lattice(rng, deck)
        scene = scene_from_lattice(cards, pyramids, card_size_mm=deck.card_size_mm, rng=rng,
                                   flip=flip, slop_mm=rng.uniform(0.5, 4.0),
                                   slop_deg=rng.uniform(0.5, 4.0))
        # some lying pyramids at free angles, for training variety
        for p in scene.pyramids:
            if not p.upright and rng.random() < 0.2:
                p.pointing_deg = float(rng.uniform(0, 360))
        placed = _place_lattice(rng, scene, mat)
        if placed is not None:
            break
    else:
        placed = scene
    # (the state as the table shows it: a lying pyramid turned to a free angle targets the
    # lattice direction nearest to where it now points, as the spec reads it; the scene's
    # pyramids are in the lattice's own frame before it is placed, cell by cell in order)
    shown: dict[Any, list[str]] = {}
    for p in scene.pyramids:
        pose = Pose.UP if p.upright else Pose.from_degrees(p.pointing_deg)
        shown.setdefault(p.cell, []).append(str(Pyramid(Color(p.color), p.pips, pose)))
    placed.state = {"lattice": {
        f"{c[0]},{c[1]}": [e if isinstance(e, str) else (e[0] if e[1] else "back")
                           for e in stack] for c, stack in sorted(cards.items())},
        "pyramids": {f"{c[0]},{c[1]}": shown.get(c, []) for c in sorted(pyramids)},
        "source": "random"}
    used = {c.id for c in placed.cards}
    _piles(placed, rng, deck, mat, used)
    return placed


def random_free_scene(rng: np.random.Generator, deck: Deck, mat: Mat) -> TableScene:
    """Arcanoid / Arcanum style: rows of cards in front of each player and a battlefield."""
    w, h = deck.card_size_mm
    W, H = mat.width_mm, mat.height_mm
    scene = TableScene(card_size_mm=deck.card_size_mm, game="free")
    ids = list(deck.ids)
    rng.shuffle(ids)
    pool = iter(ids * 3)
    sides = [s for s in ("south", "north", "west", "east") if rng.random() < 0.7] or ["south"]
    gap = rng.uniform(4, 20)
    for side in sides:
        n = int(rng.integers(2, 7))
        if side in ("south", "north"):
            y = H - 85 - h / 2 if side == "south" else 85 + h / 2
            span = n * (w + gap)
            x0 = W / 2 - span / 2 + (w + gap) / 2
            pos = [(x0 + k * (w + gap), y) for k in range(n)]
            ang = 270.0 if side == "south" else 90.0
        else:
            x = 85 + h / 2 if side == "west" else W - 85 - h / 2
            n = min(n, 3)
            span = n * (w + gap)
            y0 = H / 2 - span / 2 + (w + gap) / 2
            pos = [(x, y0 + k * (w + gap)) for k in range(n)]
            ang = 0.0 if side == "west" else 180.0
        for (x, y) in pos:
            scene.cards.append(CardPlacement(
                id=next(pool), center_mm=(x + rng.normal(0, 2), y + rng.normal(0, 2)),
                angle_deg=(ang + rng.normal(0, 3)) % 360, face_up=bool(rng.random() > 0.12),
                group=f"row:{side}"))
    # battlefield: a loose row or two in the middle
    nb = int(rng.integers(0, 7))
    for k in range(nb):
        x = W / 2 + (k - (nb - 1) / 2) * (w + rng.uniform(5, 25)) + rng.normal(0, 4)
        y = H / 2 + rng.normal(0, 15)
        scene.cards.append(CardPlacement(
            id=next(pool), center_mm=(x, y), angle_deg=float(rng.choice([270, 90]) + rng.normal(0, 8)),
            face_up=True, group="battlefield"))
    # a few dropped loose cards at any angle
    for _ in range(int(rng.integers(0, 3))):
        scene.cards.append(CardPlacement(
            id=next(pool), center_mm=(rng.uniform(150, W - 150), rng.uniform(120, H - 120)),
            angle_deg=float(rng.uniform(0, 360)), face_up=bool(rng.random() < 0.7),
            level=1, group="loose"))
    # pyramids on cards and on the table
    pyrs: list[PyramidPlacement] = []
    for _ in range(int(rng.integers(0, 14))):
        on_card = scene.cards and rng.random() < 0.6
        if on_card:
            c = scene.cards[int(rng.integers(len(scene.cards)))]
            base = (c.center_mm[0] + rng.normal(0, 15), c.center_mm[1] + rng.normal(0, 25))
            rest = c.height_mm
        else:
            base = (rng.uniform(100, W - 100), rng.uniform(100, H - 100))
            rest = 0.0
        upright = bool(rng.random() < 0.5)
        p = PyramidPlacement(color=COLORS[int(rng.integers(len(COLORS)))],
                             pips=int(rng.integers(1, 4)), upright=upright, base_center_mm=base,
                             pointing_deg=None if upright else float(rng.uniform(0, 360)),
                             rest_height_mm=rest, yaw_deg=float(rng.uniform(0, 90)))
        if _pyramid_ok(p, pyrs):
            pyrs.append(p)
    scene.pyramids = pyrs
    _piles(scene, rng, deck, mat, {c.id for c in scene.cards})
    return scene


def random_crowded_scene(rng: np.random.Generator, deck: Deck, mat: Mat) -> TableScene:
    """A late-game Zarcana table: 12-20 lattice cards, half of them (at least four) carrying
    three pyramids each (touching, stacked views, the pyramids' hardest case)."""
    colors = [c for c in Color]
    for _ in range(30):
        cards, _pyr, flip = random_lattice(rng, deck, int(rng.integers(12, 21)))
        cells = sorted(cards)
        k = max(4, len(cells) // 2)
        chosen = [cells[int(i)] for i in rng.permutation(len(cells))[:k]]
        pyramids = {}
        for c in chosen:
            pyramids[c] = [Pyramid(colors[int(rng.integers(len(colors)))], int(rng.integers(1, 4)),
                                   Pose.UP if rng.random() < 0.55
                                   else DIRECTIONS[int(rng.integers(4))]) for _ in range(3)]
        scene = scene_from_lattice(cards, pyramids, card_size_mm=deck.card_size_mm, rng=rng,
                                   flip=flip, slop_mm=rng.uniform(0.5, 4.0),
                                   slop_deg=rng.uniform(0.5, 4.0))
        placed = _place_lattice(rng, scene, mat)
        if placed is not None:
            _piles(placed, rng, deck, mat, {c.id for c in placed.cards})
            return placed
    raise SynthError("no crowded lattice fits the mat")


def random_scene(rng: np.random.Generator, deck: Deck, mat: Mat, game: str) -> TableScene:
    if game == "mixed":
        game = "zarcana" if rng.random() < 0.65 else "free"
    if game == "zarcana":
        return random_zarcana_scene(rng, deck, mat)
    if game == "free":
        return random_free_scene(rng, deck, mat)
    if game == "crowded":
        return random_crowded_scene(rng, deck, mat)
    raise SynthError(f"unknown game {game!r}: expected one of {', '.join(GAMES)}")


# ---------------------------------------------------------------------------------------------
# cameras and looks


def random_camera(rng: np.random.Generator, mat: Mat, card_long_mm: float,
                  size: tuple[int, int] | None = None, distortion: bool = True) -> Camera:
    """Tilt up to 25 degrees, any yaw, a card 60-250 px long; most views hold the whole mat."""
    if size is None:
        size = RESOLUTIONS[int(rng.choice(len(RESOLUTIONS), p=[0.3, 0.4, 0.15, 0.15]))]
    w, h = size
    hfov = math.radians(rng.uniform(55, 80))
    f = w / 2 / math.tan(hfov / 2)
    tilt = float(rng.uniform(0, 25))
    yaw = float(rng.uniform(0, 360)) if rng.random() < 0.6 else float(
        rng.choice([0, 90, 180, 270]) + rng.normal(0, 3))
    tilt_dir = float(rng.uniform(0, 360))
    target = (mat.width_mm / 2 + rng.uniform(-0.06, 0.06) * mat.width_mm,
              mat.height_mm / 2 + rng.uniform(-0.06, 0.06) * mat.height_mm)
    dist = None
    if distortion and rng.random() < 0.6:
        dist = np.array([rng.uniform(-0.15, 0.03), rng.uniform(-0.02, 0.04),
                         rng.normal(0, 0.0008), rng.normal(0, 0.0008), 0.0])
    # find the distance at which the mat (with its markers) just fits, then pick a card size
    hi = fit_distance(target, tilt, yaw, tilt_dir, f, w, h, mat_outline(mat))
    L_fit = f * card_long_mm / hi
    # the spec's 60-250 px, scaled down for images smaller than 1280 x 720 (tests, previews)
    k = min(1.0, w / 1280.0, h / 720.0)
    lo, top = 60.0 * k, 250.0 * k
    if rng.random() < 0.85 and L_fit >= lo:
        L = rng.uniform(lo, min(top, L_fit))
    else:
        L = rng.uniform(lo, top)
    D = f * card_long_mm / L
    return look_camera(target, D, tilt, yaw, tilt_dir, f, w, h, dist)


def _defocus(rng: np.random.Generator) -> float:
    """A lens out of focus: the Gaussian sigma (px) of its blur."""
    return float(rng.uniform(0.8, 2.2))


def _in_focus(rng: np.random.Generator) -> float:
    """A lens in focus: what little blur it still has (Gaussian sigma, px)."""
    return float(rng.uniform(0, 0.7))


def _shake(rng: np.random.Generator) -> tuple[float, float]:
    """The camera moving while the shutter is open: a line blur (length px, angle deg)."""
    return float(rng.uniform(3, 14)), float(rng.uniform(0, 180))


def _rgb(v: Any) -> tuple[float, float, float]:
    """Three numbers (a colour, white balance gains) as a tuple of floats."""
    a, b, c = (float(x) for x in v)
    return a, b, c


def random_style(rng: np.random.Generator, seed: int, hands: float, card_back: bool,
                 mat: Mat) -> Style:
    st = Style(seed=seed)
    st.surface = str(rng.choice(textures.SURFACES, p=[0.3, 0.25, 0.15, 0.15, 0.15]))
    if st.surface == "newspaper":
        st.newspaper = (mat.width_mm / 2 + rng.uniform(-150, 150),
                        mat.height_mm / 2 + rng.uniform(-100, 100),
                        rng.uniform(380, 600), rng.uniform(280, 420), rng.uniform(-30, 30))
    n_lights = int(rng.choice([1, 1, 2, 2, 3]))
    st.lights = []
    for k in range(n_lights):
        st.lights.append(Light(
            azimuth_deg=float(rng.uniform(0, 360)),
            elevation_deg=float(rng.uniform(35, 85)),
            intensity=float(rng.uniform(0.35, 0.75) / (1 + 0.5 * k)),
            shadow=float(rng.uniform(0.2, 0.55) / (1 + 0.6 * k)),
            softness_mm=float(rng.uniform(1.0, 8.0))))
    st.ambient = float(rng.uniform(0.3, 0.55))
    st.printing_strength = float(rng.uniform(0.0, 1.0))
    st.wear = float(rng.uniform(0.0, 1.0))
    st.marker_margin_mm = float(rng.uniform(8, 20))
    st.marker_paper = _rgb((238 + rng.uniform(-14, 12, 3)).clip(0, 255))
    st.marker_ink = float(rng.uniform(10, 45))
    if not card_back:
        st.back = textures.procedural_back(np.random.default_rng([seed, 5]))
    st.pyramid_tint = float(rng.uniform(0, 1))
    if rng.random() < hands:
        st.hands = []
        for _ in range(int(rng.choice([1, 1, 1, 2]))):
            st.hands.append(Hand(
                edge=int(rng.integers(4)), pos=float(rng.uniform(-1, 1)),
                target_mm=(float(rng.uniform(0.1, 0.9) * mat.width_mm),
                           float(rng.uniform(0.1, 0.9) * mat.height_mm)),
                width_frac=float(rng.uniform(0.6, 1.0)),
                skin=_rgb(np.array(SKIN[int(rng.integers(len(SKIN)))])
                          * rng.uniform(0.85, 1.1)),
                sleeve=(_rgb(textures.random_color(rng)) if rng.random() < 0.6 else None),
                sleeve_frac=float(rng.uniform(0.2, 0.7)),
                finger_curl=float(rng.uniform(0, 1)), spread_deg=float(rng.uniform(10, 45))))
    if rng.random() < 0.15:
        st.glare = [(float(rng.uniform(0.15, 0.85)), float(rng.uniform(0.15, 0.85)),
                     float(rng.uniform(0.03, 0.12)), float(rng.uniform(0.02, 0.06)),
                     float(rng.uniform(0, 180)), float(rng.uniform(0.4, 0.9)))]
    st.exposure = float(np.exp(rng.normal(0, 0.18)))
    temp = rng.normal(0, 0.08)  # + warm, - cold
    st.wb = (float(1 - temp + rng.normal(0, 0.02)), float(1 + rng.normal(0, 0.02)),
             float(1 + temp + rng.normal(0, 0.02)))
    st.vignette = float(rng.uniform(0, 0.35))
    st.light_gradient = (float(rng.uniform(0, 0.25)), float(rng.uniform(0, 360)))
    r = rng.random()
    st.blur_sigma = _defocus(rng) if r < 0.1 else _in_focus(rng)
    if rng.random() < 0.08:
        st.motion = _shake(rng)
    st.noise_sigma = float(rng.uniform(0.5, 6.0))
    st.jpeg_quality = int(rng.integers(70, 96))
    st.contact_shadow = float(rng.uniform(0.1, 0.4))
    return st


def _check_light(light: str) -> None:
    if light not in LIGHTS:
        raise SynthError(f"unknown light {light!r}: expected one of {', '.join(LIGHTS)}")


def lamp_light(rng: np.random.Generator, st: Style) -> str:
    """Turn ``st`` into a lamp-lit room: dim (exposure 0.35-0.6, less ambient light),
    coloured (a per-channel tint up to about +-30%, far beyond a white balance's drift) or
    both. Returns which. Evening tables are lit like this; the everyday looks of
    :func:`random_style` stay near daylight."""
    mode = str(rng.choice(["dim", "coloured", "both"]))
    if mode in ("dim", "both"):
        st.exposure = float(rng.uniform(0.35, 0.6))
        st.ambient *= float(rng.uniform(0.5, 0.9))
    if mode in ("coloured", "both"):
        tint = rng.uniform(-0.3, 0.3, 3)
        st.wb = _rgb(np.exp(tint - tint.mean()))
    return mode


# ---------------------------------------------------------------------------------------------
# one image, a dataset


@dataclass
class SynthConfig:
    out: Path
    count: int
    seed: int = 0
    deck: Deck | None = None
    mat: Mat = DEFAULT_MAT
    game: str = "zarcana"
    hands: float = 0.2
    light: str = "ordinary"
    size: tuple[int, int] | None = None
    distortion: bool = True
    jobs: int = 1
    val_fraction: float = 0.1
    #: (low, high) of the card printing's strength, drawn per image; None: the usual 0-1
    printing: tuple[float, float] | None = None
    #: share of pyramids recoloured white or clear (:func:`paler`); 0: as the layout drew them
    pale: float = 0.0
    #: share of images out of focus or shaken (:func:`reblur`); None: the usual draw
    blur: float | None = None


def make_example(seed: int, index: int, deck: Deck, mat: Mat, game: str = "zarcana",
                 hands: float = 0.2, size: tuple[int, int] | None = None,
                 distortion: bool = True, image_name: str = "image.jpg",
                 scene: TableScene | None = None, light: str = "ordinary",
                 printing: tuple[float, float] | None = None, pale: float = 0.0,
                 blur: float | None = None) -> tuple[np.ndarray, dict[str, Any], Style]:
    """Render image ``index`` of run ``seed``: (BGR image, truth record, style).
    ``printing``: the card printing's strength is drawn from this range instead of 0-1
    (:func:`check_printing`); ``pale``: this share of the drawn scene's pyramids is
    recoloured white or clear (:func:`paler`); ``blur``: this share of images is out of
    focus or shaken instead of about one in six (:func:`reblur`). A ``scene`` passed in is
    rendered as given, whatever ``pale`` says: it is the caller's, and recolouring it would
    change it."""
    _check_light(light)
    if printing is not None:
        check_printing(printing)
    check_share("pale", pale)
    if blur is not None:
        check_share("blur", blur)
    rng = image_rng(seed, index)
    if scene is None:
        scene = random_scene(rng, deck, mat, game)
        if pale > 0.0:
            paler(scene, pale, np.random.default_rng([int(seed), int(index), PALE_STREAM]))
    cam = random_camera(rng, mat, deck.card_size_mm[1], size, distortion)
    style = random_style(rng, int(rng.integers(0, 2**62)), hands, deck.back_file is not None, mat)
    # drawn after everything else: "ordinary" renders stay what they were for a seed
    if light == "lamp" or (light == "mixed" and rng.random() < 0.5):
        lamp_light(rng, style)
    if printing is not None:
        # its own stream: the rest of the scene stays what the seed gives without it
        style.printing_strength = float(
            np.random.default_rng([int(seed), int(index), PRINTING_STREAM]).uniform(*printing))
    if blur is not None:
        reblur(style, blur, np.random.default_rng([int(seed), int(index), BLUR_STREAM]))
    image, truth = render(scene, deck, mat, cam, style, image_name)
    return image, truth, style


#: the random stream of an image's printing strength when a range is asked for
PRINTING_STREAM = 11
#: the strongest printing a range may ask for (2.5: colours far off any real deck's)
PRINTING_MAX = 2.5
#: the random stream of the pyramids recoloured by ``pale``
PALE_STREAM = 13
#: the colours ``pale`` recolours to: the plastics the finder misses and mixes up most
PALE_COLORS = ("white", "clear")


def check_share(what: str, share: float) -> None:
    """Refuse a share (``what``: its name in the message) outside 0-1."""
    if not 0.0 <= float(share) <= 1.0:
        raise SynthError(f"{what} share {share:g} is not between 0 and 1")


#: the random stream of an image's focus and shake when a blur share is asked for
BLUR_STREAM = 17


def reblur(style: Style, share: float, rng: np.random.Generator) -> None:
    """Draw ``style``'s focus and shake again: with probability ``share`` the image is
    blurred, half the time out of focus and half the time shaken, in the ranges
    :func:`random_style` draws them (a defocus of 0.8-2.2 px, a line of 3-14 px); else it
    is sharp (a defocus under 0.7 px, no shake). Training renders for the readers of
    blurred frames: the usual draw blurs about one image in six, and on those the finder
    reads pips and pointing several times worse than on sharp ones."""
    if rng.random() < share:
        if rng.random() < 0.5:
            style.blur_sigma, style.motion = _defocus(rng), (0.0, 0.0)
        else:
            style.blur_sigma, style.motion = _in_focus(rng), _shake(rng)
    else:
        style.blur_sigma, style.motion = _in_focus(rng), (0.0, 0.0)


def paler(scene: TableScene, share: float, rng: np.random.Generator) -> None:
    """Recolour about ``share`` of ``scene``'s pyramids white or clear, half each: training
    renders for the readers of pale plastic get several such pyramids a scene instead of
    one in five. Layout, sizes and poses stay; only colours change. A recoloured table is
    no longer the game state it was drawn from, so its ``state`` is dropped from the truth
    (the pixels are what these renders are for)."""
    recoloured = False
    for p in scene.pyramids:
        if rng.random() < share:
            p.color = PALE_COLORS[int(rng.integers(len(PALE_COLORS)))]
            recoloured = True
    if recoloured:
        scene.state = None


def check_printing(printing: tuple[float, float]) -> None:
    """Refuse a printing-strength range that is not 0 <= low <= high <= PRINTING_MAX."""
    lo, hi = printing
    if not (0.0 <= lo <= hi <= PRINTING_MAX):
        raise SynthError(f"printing strength range {lo:g}-{hi:g} is not 0 <= low <= high <= "
                         f"{PRINTING_MAX:g}")


def split_of(seed: int, index: int, val_fraction: float) -> str:
    """Train/val split decided by the run seed and the index alone."""
    r = np.random.default_rng([int(seed), int(index), 7]).random()
    return "val" if r < val_fraction else "train"


def encode_jpeg(image: np.ndarray, quality: int) -> bytes:
    import cv2

    ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    if not ok:
        raise SynthError("JPEG encoding failed")
    return buf.tobytes()


def truth_json(truth: dict[str, Any]) -> str:
    return json.dumps(truth, indent=1, sort_keys=False) + "\n"


# worker state (set once per process)
_W: dict[str, Any] = {}


def _init_worker(deck_folder: str, card_size: tuple[float, float], mat_dict: dict[str, Any],
                 threads: int) -> None:
    import cv2

    from vision.synth.deck import load_deck

    cv2.setNumThreads(threads)
    _W["deck"] = load_deck(deck_folder, card_size_mm=card_size, validate=False)
    _W["mat"] = Mat.from_dict(mat_dict)


def _work(args: tuple[Any, ...]) -> tuple[int, int]:
    (index, seed, game, hands, size, distortion, out, val_fraction, light, printing,
     pale, blur) = args
    return write_example(Path(out), index, seed, _W["deck"], _W["mat"], game, hands, size,
                         distortion, val_fraction, light, printing, pale, blur)


def write_example(out: Path, index: int, seed: int, deck: Deck, mat: Mat, game: str,
                  hands: float, size: tuple[int, int] | None, distortion: bool,
                  val_fraction: float = 0.1, light: str = "ordinary",
                  printing: tuple[float, float] | None = None,
                  pale: float = 0.0, blur: float | None = None) -> tuple[int, int]:
    name = f"{index:05d}.jpg"
    image, truth, style = make_example(seed, index, deck, mat, game, hands, size, distortion,
                                       image_name=name, light=light, printing=printing,
                                       pale=pale, blur=blur)
    truth["split"] = split_of(seed, index, val_fraction)
    truth["seed"] = [int(seed), int(index)]
    data = encode_jpeg(image, style.jpeg_quality)
    text = truth_json(truth)
    # each file whole or not at all (a full disk left a cut-off image without its truth,
    # and an error that named no file); an image whose truth cannot be written goes too
    for path, blob in ((out / name, data), (out / f"{index:05d}.json", text.encode("utf-8"))):
        try:
            with atomic_file(path, binary=True) as fh:
                fh.write(blob)
        except OSError as exc:
            if path.suffix == ".json":
                try:
                    (out / name).unlink(missing_ok=True)
                except OSError:
                    pass
            raise SynthError(f"{path}: could not be written ({exc.strerror or exc})") from None
    return len(data), len(text)


class Progress:
    """A plain progress bar on stderr (no dependency); quiet when stderr is not a terminal
    unless ``force``; always logs a summary at INFO."""

    def __init__(self, total: int, label: str = "synth", stream: Any = None,
                 force: bool = False) -> None:
        self.total = max(1, total)
        self.label = label
        self.stream = stream or sys.stderr
        self.enabled = force or (hasattr(self.stream, "isatty") and self.stream.isatty())
        self.t0 = time.monotonic()
        self.done = 0
        self._last = -1.0

    def update(self, n: int = 1) -> None:
        self.done += n
        now = time.monotonic()
        if not self.enabled or (now - self._last < 0.2 and self.done < self.total):
            return
        self._last = now
        frac = self.done / self.total
        bar = "#" * int(30 * frac) + "-" * (30 - int(30 * frac))
        rate = self.done / max(1e-6, now - self.t0)
        eta = (self.total - self.done) / max(rate, 1e-6)
        self.stream.write(f"\r{self.label} [{bar}] {self.done}/{self.total} "
                          f"{rate:5.1f}/s eta {eta:4.0f}s")
        if self.done >= self.total:
            self.stream.write("\n")
        self.stream.flush()

    def clear(self) -> None:
        """Take the bar off its line, for other lines (a record, a warning) to be written
        there; the next :meth:`update` draws it again."""
        if self.enabled:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self._last = -1.0

    def close(self) -> None:
        if self.enabled and self.done < self.total:
            self.stream.write("\n")


def check_config(cfg: SynthConfig) -> None:
    """:class:`SynthError` for a setting no render can take (before anything is written)."""
    if cfg.game not in GAMES:
        raise SynthError(f"unknown game {cfg.game!r}: expected one of {', '.join(GAMES)}")
    _check_light(cfg.light)
    if cfg.printing is not None:
        check_printing(cfg.printing)
    check_share("pale", cfg.pale)
    if cfg.blur is not None:
        check_share("blur", cfg.blur)


def synthesize(cfg: SynthConfig, progress: Callable[[int], None] | None = None
               ) -> dict[str, Any]:
    """Write ``cfg.count`` images with truth to ``cfg.out`` (+ mat.json and DATASET.md)."""
    from vision.synth.deck import load_deck

    deck = cfg.deck or load_deck()
    check_config(cfg)
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    cfg.mat.write(out / "mat.json")
    t0 = time.monotonic()
    sizes = [0, 0]
    tasks = [(i, cfg.seed, cfg.game, cfg.hands, cfg.size, cfg.distortion, str(out),
              cfg.val_fraction, cfg.light, cfg.printing, cfg.pale, cfg.blur)
             for i in range(cfg.count)]
    if cfg.jobs <= 1:
        for t in tasks:
            a, b = write_example(out, t[0], cfg.seed, deck, cfg.mat, cfg.game, cfg.hands,
                                 cfg.size, cfg.distortion, cfg.val_fraction, cfg.light,
                                 cfg.printing, cfg.pale, cfg.blur)
            sizes[0] += a
            sizes[1] += b
            if progress:
                progress(1)
    else:
        import multiprocessing as mp

        # never plain fork: a child forked after OpenCV started its thread pool can hang
        ctx = mp.get_context("forkserver" if sys.platform.startswith("linux") else "spawn")
        with ctx.Pool(cfg.jobs, initializer=_init_worker,
                      initargs=(str(deck.folder), deck.card_size_mm, cfg.mat.to_dict(), 1)) as pool:
            for a, b in pool.imap(_work, tasks, chunksize=1):
                sizes[0] += a
                sizes[1] += b
                if progress:
                    progress(1)
    elapsed = time.monotonic() - t0
    from vision.synth.dataset_card import write_dataset_card

    write_dataset_card(out, cfg, deck)
    summary = {"count": cfg.count, "seconds": elapsed, "jpeg_bytes": sizes[0],
               "json_bytes": sizes[1], "per_second": cfg.count / max(elapsed, 1e-9)}
    log.info("wrote %d images to %s in %.1f s (%.2f/s)", cfg.count, out, elapsed,
             summary["per_second"])
    return summary


def default_jobs() -> int:
    return max(1, min(4, (os.cpu_count() or 1)))
