"""Make ``sample_images/``: the demo's input, rendered from scripted games with their truth.

    python -m vision.synth.samples [--out sample_images] [--deck-root SHARED/decks]

* ``zarcana/``: the scripted three-player game ``zarcana/game.json`` (written by hand and
  checked by tests/test_sample_game.py) replayed with the engine; one image per settled
  table (``0000.jpg`` is the table before the first move, ``NNNN.jpg`` the table after move
  NNNN), the illegal move as the players first made it (then put right), and a few frames
  with a hand over the table (``hand-NN.jpg``). Beside each image its truth record
  (``.json``: the observation record plus the move, the game state and image geometry).
* ``arcanoid/``: a free layout (rows per player and a battlefield) with the tarot deck.
* ``decktet-table/``: a Decktet table (not named ``decktet/``, the card-art folder's name).

One fixed camera and look per folder, as a real camera on a stand would give.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np

from calibration.mat import DEFAULT_MAT, Mat
from companion.core.errors import CompanionError
from vision.synth.camera import Camera, fit_distance, look_camera, mat_outline
from vision.synth.deck import Deck, load_deck
from vision.synth.errors import SynthError
from vision.synth.generate import add_pile, encode_jpeg, random_free_scene, truth_json
from vision.synth.render import Hand, Light, Style, render
from vision.synth.scene import TableScene, scene_from_lattice

log = logging.getLogger(__name__)

SIZE = (1600, 900)
QUALITY = 82


def scene_from_state(state: Any, deck: Deck, mat: Mat, origin_mm: tuple[float, float],
                     slop_seed: int = 7, piles: bool = True) -> TableScene:
    """A Zarcana engine state (``board``: cell -> (card, face_up) layers bottom to top,
    ``pieces``: cell -> pyramids, ``deck``/``discard`` piles) as a table scene."""
    cards = {cell: [(cid, bool(up)) for cid, up in stack] for cell, stack in state.board.items()}
    pyramids = {cell: list(ps) for cell, ps in state.pieces.items() if ps}
    scene = scene_from_lattice(cards, pyramids, card_size_mm=deck.card_size_mm,
                               origin_mm=origin_mm, slop_seed=slop_seed, slop_mm=2.5,
                               slop_deg=2.0, pointing_jitter_deg=4.0)
    if piles:
        add_state_piles(scene, state, deck, mat, slop_seed)
    scene.state = state_summary(state)
    return scene


def add_state_piles(scene: TableScene, state: Any, deck: Deck, mat: Mat, slop_seed: int) -> None:
    """The engine state's draw pile (face down) and discard pile in the mat's zones; a mat
    without a zone for one (a zone is optional in a mat file) gets no such pile."""
    rng = np.random.default_rng([slop_seed, 1])
    n_draw = min(len(state.deck), 40)
    if n_draw and "draw" in mat.zones:
        add_pile(scene, np.random.default_rng([slop_seed, 2]),
                 ["back"] * n_draw, _zone(mat, "draw", deck), False, "draw", loose=0.6)
    if state.discard and "discard" in mat.zones:
        shown = list(state.discard)[-8:]
        add_pile(scene, rng, shown, _zone(mat, "discard", deck), True, "discard", loose=2.0)


def state_summary(state: Any) -> dict[str, Any]:
    """The JSON-able game state stored in a truth record."""
    return {
        "lattice": {f"{c[0]},{c[1]}": [cid if up else f"{cid} (face down)" for cid, up in s]
                    for c, s in sorted(state.board.items())},
        "pyramids": {f"{c[0]},{c[1]}": [str(p) for p in ps]
                     for c, ps in sorted(state.pieces.items()) if ps},
        "discard_top": state.discard_top(),
        "draw_pile": len(state.deck),
        "history": list(state.history),
        "scores": {c.value: v for c, v in state.scores().items()},
    }


def _zone(mat: Mat, name: str, deck: Deck) -> tuple[float, float]:
    from vision.synth.generate import _clear_of_markers

    return _clear_of_markers(mat.zone_center(name), deck.card_size_mm, mat)


def fixed_camera(mat: Mat, size: tuple[int, int], tilt: float, yaw: float, tilt_dir: float,
                 hfov: float = 62.0, dist: tuple[float, ...] = (-0.06, 0.01, 0, 0, 0)
                 ) -> Camera:
    w, h = size
    f = w / 2 / math.tan(math.radians(hfov / 2))
    target = (mat.width_mm / 2, mat.height_mm / 2)
    D = fit_distance(target, tilt, yaw, tilt_dir, f, w, h, mat_outline(mat), 0.03)
    return look_camera(target, D, tilt, yaw, tilt_dir, f, w, h, np.array(dist, float))


def _style(seed: int, surface: str, back: np.ndarray | None = None) -> Style:
    return Style(seed=seed, surface=surface,
                 lights=[Light(225, 62, 0.55, 0.4, 5.0), Light(40, 75, 0.25, 0.15, 8.0)],
                 ambient=0.45, printing_strength=0.3, wear=0.5, back=back, pyramid_tint=0.3,
                 exposure=1.03, wb=(0.97, 1.0, 1.04), vignette=0.18,
                 light_gradient=(0.08, 30.0), blur_sigma=0.45, noise_sigma=2.0,
                 jpeg_quality=QUALITY, contact_shadow=0.3)


_MOVE_RE = re.compile(r"by (?P<pyr>[a-z]+[123][UNESW])@(?P<cell>-?\d+,-?\d+): move "
                      r"(?P<dest>-?\d+,-?\d+)")
_CARD_RE = re.compile(r": (?:play|use) (?P<card>[a-z]+-\d+)")


def _attempted(state: Any, move: str) -> Any:
    """The table as the players first laid out an illegal move (before it is put right):
    the card goes to the discard pile and a moving pyramid goes where it was sent."""
    from companion.core.pieces import parse_cell, parse_pyramid

    st = state.copy()
    m = _CARD_RE.search(move)
    if m and any(m.group("card") == c for c in state.hands.get(_who(state, move), ())):
        st.discard = tuple(st.discard) + (m.group("card"),)
    m = _MOVE_RE.search(move)
    if m:
        pyr = parse_pyramid(m.group("pyr"))
        src, dst = parse_cell(m.group("cell")), parse_cell(m.group("dest"))
        pieces = dict(st.pieces)
        lst = list(pieces.get(src, ()))
        if pyr in lst:
            lst.remove(pyr)
            pieces[src] = tuple(lst)
            pieces[dst] = tuple(pieces.get(dst, ())) + (pyr,)
            st.pieces = pieces
    return st


def _who(state: Any, move: str) -> Any:
    from companion.core.pieces import Color

    try:
        return Color(move.split(":", 1)[0].strip())
    except ValueError:
        return None


def _write(out: Path, name: str, image: np.ndarray, truth: dict[str, Any], quality: int) -> int:
    data = encode_jpeg(image, quality)
    (out / f"{name}.jpg").write_bytes(data)
    text = truth_json(truth)
    (out / f"{name}.json").write_text(text, encoding="utf-8")
    return len(data) + len(text)


def zarcana_game(out: Path, deck: Deck, mat: Mat) -> int:
    from companion.games.zarcana import new_game

    path = out / "game.json"
    try:
        script = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SynthError(f"scripted game {str(path)!r} cannot be read: {exc}") from None
    st = new_game(script["players"], edition=script["edition"], seed=script["seed"],
                  **script["settings"])
    frames: list[tuple[str, Any, dict[str, Any]]] = [("0000", st, {"move": None})]
    for k, entry in enumerate(script["moves"], start=1):
        move = entry["move"]
        info = {"move": move, "move_number": k, "note": entry.get("note")}
        if "illegal" in entry:
            verdict = st.check(move)
            info.update(legal=False, broken_rules=list(verdict.rules),
                        verdict=verdict.explain())
            frames.append((f"{k:04d}", _attempted(st, move), info))
            continue
        st = st.apply(move)
        info["legal"] = True
        frames.append((f"{k:04d}", st, info))
    # the fixed lattice origin: every cell the game uses, centred on the mat
    cells = {c for _, s, _ in frames for c in list(s.board) + list(s.pieces)}
    pitch = deck.lattice_pitch_mm
    ci = (min(c[0] for c in cells) + max(c[0] for c in cells)) / 2
    cj = (min(c[1] for c in cells) + max(c[1] for c in cells)) / 2
    origin = (mat.width_mm / 2 + 40 - ci * pitch, mat.height_mm / 2 - 30 - cj * pitch)
    cam = fixed_camera(mat, SIZE, tilt=14.0, yaw=3.0, tilt_dir=80.0)
    style = _style(31, "wood")
    total = 0
    for name, state, info in frames:
        scene = scene_from_state(state, deck, mat, origin)
        image, truth = render(scene, deck, mat, cam, style, image_name=f"zarcana/{name}.jpg")
        truth.update(info)
        total += _write(out, name, image, truth, QUALITY)
    # frames with a hand over the table: the player reaching for the cell of the next move
    hand_frames = [(3, 0, 0.7), (10, 2, -0.4), (15, 1, 0.2)]
    for n, (k, edge, pos) in enumerate(hand_frames, start=1):
        name, state, info = frames[k]
        nxt = frames[min(k + 1, len(frames) - 1)][2].get("move") or ""
        m = re.search(r"@(-?\d+),(-?\d+)", nxt)
        cell = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
        target = (origin[0] + cell[0] * pitch, origin[1] + cell[1] * pitch)
        hstyle = _style(31, "wood")
        hstyle.hands = [Hand(edge=edge, pos=pos, target_mm=target, width_frac=0.8,
                             skin=((95, 135, 200), (60, 95, 150), (120, 160, 225))[n % 3],
                             sleeve=((120, 60, 30), None, (40, 40, 140))[n % 3],
                             sleeve_frac=0.45, finger_curl=0.3, spread_deg=25)]
        if n == 2:
            hstyle.motion = (6.0, 30.0)
        scene = scene_from_state(state, deck, mat, origin)
        hname = f"hand-{n:02d}"
        image, truth = render(scene, deck, mat, cam, hstyle, image_name=f"zarcana/{hname}.jpg")
        truth.update(info)
        truth["after_frame"] = name
        total += _write(out, hname, image, truth, QUALITY)
    mat.write(out / "mat.json")
    return total


def free_table(out: Path, deck: Deck, mat: Mat, seed: int, surface: str, game: str,
               tilt: float, yaw: float) -> int:
    rng = np.random.default_rng([seed, 0])
    scene = random_free_scene(rng, deck, mat)
    scene.game = game
    cam = fixed_camera(mat, SIZE, tilt=tilt, yaw=yaw, tilt_dir=250.0)
    back = None
    if deck.back_file is None:
        from vision.synth.textures import procedural_back

        back = procedural_back(np.random.default_rng([seed, 5]))
    style = _style(seed, surface, back)
    image, truth = render(scene, deck, mat, cam, style, image_name=f"{out.name}/0000.jpg")
    total = _write(out, "0000", image, truth, QUALITY)
    mat.write(out / "mat.json")
    return total


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="render sample_images/")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[2] / "sample_images")
    ap.add_argument("--decks", type=Path, default=None, help="folder holding rws-tarot/, decktet/")
    args = ap.parse_args(argv)
    try:
        return _render_all(args)
    except CompanionError as exc:
        print(f"samples: error: {exc}", file=sys.stderr)
        return 2


def _render_all(args: argparse.Namespace) -> int:
    from vision.synth.deck import default_deck_dir

    tarot = load_deck(args.decks / "rws-tarot" if args.decks else default_deck_dir("rws-tarot"))
    decktet = load_deck(args.decks / "decktet" if args.decks else default_deck_dir("decktet"))
    mat = DEFAULT_MAT
    out = args.out
    total = zarcana_game(out / "zarcana", tarot, mat)
    for sub, deck, seed, surface, game, tilt, yaw in (
            ("arcanoid", tarot, 41, "felt", "arcanoid", 10.0, 92.0),
            ("decktet-table", decktet, 43, "cloth", "decktet", 8.0, -4.0)):
        d = out / sub
        d.mkdir(parents=True, exist_ok=True)
        total += free_table(d, deck, mat, seed, surface, game, tilt, yaw)
    print(f"sample_images: {total / 1e6:.1f} MB written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
