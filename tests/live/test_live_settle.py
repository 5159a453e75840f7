"""Settle detection on synthetic frame sequences: motion then still, a hand, noise, cost."""

from __future__ import annotations

import time

import numpy as np
import pytest

from companion.live.settle import SettleConfig, SettleDetector

FPS = 30.0
H, W = 360, 640


def table(seed: int = 1) -> np.ndarray:
    """A textured table (wood-ish stripes and blotches), seeded."""
    rng = np.random.default_rng(seed)
    base = rng.integers(60, 120, size=(H // 8, W // 8, 3), dtype=np.uint8)
    img = np.kron(base, np.ones((8, 8, 1), dtype=np.uint8))
    return img


def with_card(img: np.ndarray, x: int, y: int, value: int = 230) -> np.ndarray:
    out = img.copy()
    out[y:y + 60, x:x + 35] = value
    return out


def with_hand(img: np.ndarray, x: int) -> np.ndarray:
    """A large skin-coloured blob (an arm reaching in from the bottom edge)."""
    out = img.copy()
    out[140:H, max(0, x):max(0, x + 110)] = (110, 150, 210)
    return out


def feed(det: SettleDetector, frames: list[np.ndarray], start: int = 0) -> list[int]:
    """Indices of the frames judged settled."""
    out = []
    for k, f in enumerate(frames, start=start):
        if det.update(f, k / FPS).settled:
            out.append(k)
    return out


def test_the_first_still_table_settles_once_after_half_a_second() -> None:
    det = SettleDetector()
    t = table()
    got = feed(det, [t] * 60)
    # still from frame 0: 0.5 s later (frame 15) it is settled, and only once
    assert got == [15]


def test_motion_then_still_settles_once_after_the_motion_stops() -> None:
    det = SettleDetector()
    t = table()
    assert feed(det, [t] * 30) == [15]
    # a card slides in over 20 frames, then lies still for 40
    moving = [with_card(t, 50 + 12 * k, 100) for k in range(20)]
    still = [with_card(t, 50 + 12 * 19, 100)] * 40
    got = feed(det, moving + still, start=30)
    assert got == [30 + 20 + 15]  # 0.5 s after the first still frame, never during motion
    decisions = [det.update(f, (100 + k) / FPS) for k, f in enumerate(still[:5])]
    assert not any(d.settled for d in decisions)  # nothing new: no second report


def test_tiny_noise_does_not_trigger() -> None:
    rng = np.random.default_rng(7)
    det = SettleDetector()
    t = table()
    variants = [np.clip(t.astype(np.int16) + rng.integers(-6, 7, t.shape), 0, 255).astype(np.uint8)
                for _ in range(6)]
    noisy = [variants[k % 6] for k in range(90)]
    assert feed(det, noisy) == [15]  # the first settled table, then nothing


def test_a_hand_passing_over_an_unchanged_table_gives_nothing_new() -> None:
    det = SettleDetector()
    t = table()
    assert feed(det, [t] * 20) == [15]
    hands = []
    for k in range(12):
        f = with_hand(t, 40 * k)
        d = det.update(f, (20 + k) / FPS)
        hands.append(d)
    assert not any(d.settled for d in hands)
    assert any(d.hand for d in hands[1:])
    # the hand is gone and the table is as it was: still, but not a new settled table
    assert feed(det, [t] * 40, start=32) == []


def test_a_hand_placing_a_card_settles_after_it_leaves() -> None:
    det = SettleDetector()
    t = table()
    feed(det, [t] * 20)
    frames = [with_hand(t, 40 * k) for k in range(8)]
    after = with_card(t, 300, 60)
    frames += [with_hand(after, 40 * (8 - k)) for k in range(8)]
    frames += [after] * 30
    got = feed(det, frames, start=20)
    # frame 36 shows the hand gone (motion), 37 is the first still frame; 0.5 s later
    assert got == [20 + 17 + 15]


def test_a_hand_resting_still_is_refused_and_tried_again_after_it_leaves() -> None:
    det = SettleDetector()
    t = table()
    feed(det, [t] * 20)
    resting = with_hand(with_card(t, 300, 60), 200)
    got = feed(det, [resting] * 30, start=20)
    assert got == [21 + 15]  # frame 20 moved; still from 21 and changed: handed on...
    det.reject()             # ... which sees the hand and refuses it
    assert feed(det, [resting] * 30, start=50) == []  # no retry while nothing moves
    gone = with_card(t, 300, 60)
    assert feed(det, [gone] * 30, start=80) == [81 + 15]


def test_a_still_photo_is_settled_by_itself() -> None:
    det = SettleDetector()
    t = table()
    assert det.shot(t).settled and det.shot(with_card(t, 10, 10)).settled


def test_idle_cost_at_30_fps_of_full_hd_frames_is_well_under_15_percent_of_a_core() -> None:
    det = SettleDetector(SettleConfig())
    rng = np.random.default_rng(3)
    frame = rng.integers(0, 255, size=(1080, 1920, 3), dtype=np.uint8)
    for k in range(5):
        det.update(frame, k / FPS)
    n = 60
    t0 = time.process_time()
    for k in range(n):
        det.update(frame, (5 + k) / FPS)
    per_frame = (time.process_time() - t0) / n
    # 15 % of one core at 30 fps is 5 ms per frame
    assert per_frame < 0.005, f"{per_frame * 1000:.2f} ms per frame"


@pytest.mark.parametrize("width", [120, 160, 200])
def test_the_thumbnail_keeps_the_aspect(width: int) -> None:
    det = SettleDetector(SettleConfig(width=width))
    th = det.thumbnail(np.zeros((1080, 1920, 3), np.uint8))
    assert th.shape == (round(1080 * width / 1920), width)


def test_a_small_change_without_visible_motion_is_still_a_new_table() -> None:
    """A pyramid turned on its side changes a few thumbnail pixels: below the motion share,
    but a new still table all the same."""
    det = SettleDetector()
    t = table()
    assert feed(det, [t] * 30) == [15]
    turned = t.copy()
    turned[200:208, 300:308] = 240
    d = det.update(turned, 30 / FPS)
    assert d.motion <= det.config.motion_fraction  # not motion ...
    assert feed(det, [turned] * 30, start=31) == [30 + 15]  # ... yet judged once, 0.5 s on


def test_a_camera_back_at_another_resolution_settles_its_new_table() -> None:
    """A camera that reconnects at another size: the old table cannot be compared with the
    new one pixel for pixel; the new one settles as a table of its own."""
    import cv2

    det = SettleDetector()
    assert feed(det, [table()] * 30) == [15]
    smaller = cv2.resize(table(2), (480, 360), interpolation=cv2.INTER_AREA)
    assert feed(det, [smaller] * 30, start=30) == [30 + 15]


def test_a_table_refused_while_paused_is_judged_again_on_resume() -> None:
    """The user paused while a move settled: the frame was refused, and nothing moves after
    it; resuming asks for that still table to be judged once more (and only once)."""
    det = SettleDetector()
    t = table()
    feed(det, [t] * 20)
    moved = with_card(t, 300, 60)
    assert feed(det, [moved] * 30, start=20) == [21 + 15]
    det.reject()                                   # paused: refused
    assert feed(det, [moved] * 10, start=50) == []
    det.retry()                                    # resumed
    assert feed(det, [moved] * 30, start=60) == [60]


def test_a_table_to_be_looked_at_again_is_judged_once_more_though_it_does_not_change() -> None:
    """The session waits to see the table in view twice (a camera that went back and forth
    between two tables): the still table is judged at the next frame, or at the source's
    end, once; it was never judged again, as it did not change."""
    det = SettleDetector()
    t = table()
    assert feed(det, [t] * 20) == [15]
    det.look_again()
    assert feed(det, [t] * 20, start=20) == [20]
    det.look_again()
    assert det.at_end().settled
    assert not det.at_end().settled
    assert feed(det, [t] * 20, start=40) == []
