"""The dataset card written beside every synthetic run (DATASET.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

ART_CREDITS = """\
## Art credits

Images in this dataset are rendered from card art in `shared/decks` (never copied into the
project repository):

- Rider-Waite-Smith tarot (`rws-tarot/`): scans of the 1971 U.S. Games printing, from
  data.totl.net via the public repository metabismuth/tarot-json. Public domain in the US
  (not yet in the EU).
- Decktet (`decktet/`): art by P. D. Magnus, as published in the public repository
  mcdemarco/adaman, licensed CC BY-NC-SA 3.0. Images rendered from it are under the same
  licence (attribution, non-commercial, share-alike).
"""

VARIES = """\
## What varies (per image, from `numpy.random.default_rng([seed, index])`)

- **Table surface**: plain cloth (any colour, creases), wood planks with grain, felt, printed
  patterns (gingham, stripes, dots, diamonds), a newspaper sheet under the cards.
- **Calibration mat**: four ArUco `DICT_4X4_50` markers (ids 0-3) at the corners of the play
  area on paper squares (margin 8-20 mm, paper and ink tone vary).
- **Cards**: any card of the deck, face up or face down (deck back, or a procedural back for
  decks without one); Zarcana lattice with chequerboard orientation, 180-degree turns and
  hand-placed slop (0.5-4 mm, 0.5-4 degrees), stacks of 2-4, draw pile (3-30 face down) and
  loose discard pile (1-10 face up) in the mat zones; free layouts (rows per player,
  battlefield, dropped cards at any angle). Printing: colour shift, saturation, gamma,
  yellowed paper, extra border or trimmed border, corner radius 2-4.5 mm; wear: bend shading
  and gloss bands.
- **Pyramids**: 3D Looney pyramids (14.3/25.4, 19.8/34.9, 25.4/44.5 mm), ten colours,
  translucent (alpha blended, back faces showing) or opaque (black, white), upright (any base
  yaw) or lying on a face with the apex along a lattice direction (+-3 degrees) or any angle,
  on cards (at the stack height) or in the wasteland, up to three per cell, touching.
  Lambert + specular shading, bright ridges, soft shadows from 1-3 lights.
- **Camera**: pinhole, tilt 0-25 degrees from straight down toward any direction, any yaw
  (40% near a multiple of 90), horizontal field of view 55-80 degrees, distance set so a card
  is 60-250 px long (85% of views hold the whole mat), resolutions 1280x720, 1920x1080,
  2560x1440, 3840x2160 (unless fixed); radial/tangential lens distortion in 60% of images.
- **Sensor**: exposure (log-normal, sigma 0.18), white balance / colour temperature shift,
  vignetting (0-35%), light gradient, focus blur (10%), motion blur (8%), Gaussian sensor
  noise (sigma 0.5-6), JPEG quality 70-95.
- **Hands and arms** reaching in from an image edge (skin tones, sleeves, finger poses,
  soft shadow) in the requested share of images (`"hands": true`, `"trustworthy": false`
  and their outlines in `hand_polygons_px`); glare spots in 15% (`"glare"`).
"""

FILES = """\
## Files

- `NNNNN.jpg`: the camera image.
- `NNNNN.json`: the truth: the observation record of `shared/spec/table.md` (`image`,
  `calibrated`, `cards`, `pyramids`, table millimetres, confidence 1.0) plus:
  per card `card_id` (also for face-down cards, whose `id` is `back`), `corners_px`
  (distorted pixel positions of the art's top-left, top-right, bottom-right, bottom-left
  corners), `center_px`, `level`, `stack_size`, `cell`, `group`, `visible` (fraction of the
  card's area seen), `uncovered` (fraction not hidden by other cards), `in_frame`;
  `covered_cards` (cards less than half uncovered; not in `cards`); per pyramid
  `base_corners_px`, `apex_px`, `base_center_px` (the point of `base_center_mm`),
  `base_square_center_px`, `apex_mm`, `bbox_px`, `cell`, `visible`; `markers` (corners px);
  `camera` (`K`, `dist` (k1 k2 p1 p2 k3), `R`, `t`, `rvec`: world = table frame with z down,
  pixel = cv2.projectPoints(world, rvec, t, K, dist)); `hands`, `hand_polygons_px`, `glare`,
  `trustworthy`; `game`, `state` (the lattice it came from), `lattice` (origin, pitch);
  `style` (what the look was); `split` (`train`/`val`), `seed` ([run seed, index]).
  The truth is the whole table, not only what shows: a card or pyramid a hand hides or the
  frame cuts off stays in `cards` / `pyramids` with its `visible` (0 when nothing of it
  shows) and `in_frame`; score a reader only on objects at least half visible, as
  `bench/vision.py` does. `calibrated` here is strict: all four markers fully in the frame
  and unhidden (the pipeline calibrates from fewer, and says `true` there).
- `mat.json`: the mat file.
- With `--export`: `yolo-cards-obb/` (Ultralytics OBB, one class `card`),
  `yolo-pyramids-pose/` (Ultralytics pose, 30 classes colour x size, keypoints base centre
  and apex), `card-crops/{train,val}/<id>/` (rectified 64x112 crops for the identity
  classifier, `back` for face-down cards).
"""


def write_dataset_card(out: Path, cfg: Any, deck: Any, extra: str = "") -> None:
    size = "random (1280x720 .. 3840x2160)" if cfg.size is None else f"{cfg.size[0]}x{cfg.size[1]}"
    lines = [
        "# Synthetic Arcana table scenes",
        "",
        "Rendered by `companion synth` (vision/synth) from table states, with exact ground",
        "truth. Same command, same bytes.",
        "",
        "## This run",
        "",
        f"- images: {cfg.count}",
        f"- seed: {cfg.seed}",
        f"- deck: {deck.name} ({deck.kind}, card {deck.card_size_mm[0]} x "
        f"{deck.card_size_mm[1]} mm, {len(deck.ids)} cards)",
        f"- game layouts: {cfg.game}",
        f"- share of images with hands: {cfg.hands}",
        f"- lighting: {cfg.light}",
        f"- card printing strength: "
        f"{'0-1' if cfg.printing is None else '%g-%g' % cfg.printing}",
        f"- pyramids recoloured white or clear: "
        f"{'none' if not cfg.pale else format(cfg.pale, '.0%')}",
        "- images out of focus or shaken: " + ("about one in six (as drawn)" if cfg.blur is None
                                               else f"{cfg.blur:.0%}, half each"),
        f"- resolution: {size}",
        f"- lens distortion: {'yes' if cfg.distortion else 'no'}",
        f"- validation share: {cfg.val_fraction} (decided per image from seed and index)",
        "",
        VARIES,
        FILES,
        ART_CREDITS,
    ]
    if extra:
        lines += [extra]
    (Path(out) / "DATASET.md").write_text("\n".join(lines), encoding="utf-8")
