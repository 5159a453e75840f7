"""Calibration without a mat, from the cards alone, checked against rendered scenes' truth.

The sample game's frames are rendered scenes with exact truth (each card's ``center_px`` and
``center_mm``; the mat's markers, which the card calibration does not use, give far-away
check points). The card calibration has its own table frame, so positions are compared
after the best rigid alignment (fitted on the corners of the cards it used). Bounds are
about twice what this frame measures (docs/calibration.md has the benchmark).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

cv2 = pytest.importorskip("cv2")

from calibration.from_cards import (  # noqa: E402
    FOLLOW_FRAME_MM,
    CardCalibrationError,
    CardCalibrator,
    calibrate_from_cards,
    fit_cards,
)
from calibration.mat import DEFAULT_MAT  # noqa: E402
from calibration.table import Calibration, Intrinsics  # noqa: E402
from companion.core.errors import CompanionError  # noqa: E402
from vision.cards.identify import card_corners_mm  # noqa: E402

SAMPLES = Path(__file__).resolve().parent.parent / "sample_images" / "zarcana"
TAROT = (70.0, 120.0)


def _load(n: int) -> tuple[np.ndarray, dict]:
    image = cv2.imread(str(SAMPLES / f"{n:04d}.jpg"))
    truth = json.loads((SAMPLES / f"{n:04d}.json").read_text(encoding="utf-8"))
    return image, truth


def _intrinsics(truth: dict) -> Intrinsics:
    cam = truth["camera"]
    return Intrinsics(np.array(cam["K"], np.float64), np.array(cam["dist"], np.float64))


def _rigid(src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    ms, md = src.mean(axis=0), dst.mean(axis=0)
    U, _, Vt = np.linalg.svd((dst - md).T @ (src - ms))
    R = U @ np.diag([1.0, float(np.sign(np.linalg.det(U @ Vt)))]) @ Vt
    return R, md - R @ ms


def _errors(fit, truth: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(used cards' centre errors, other flat cards' centre errors, marker centre errors),
    mm, after aligning the card frame onto the mat frame on the used cards' corners."""
    cal = fit.calibration
    flat = [c for c in truth["cards"] if c["height_mm"] < 3.0]
    px = np.array([c["center_px"] for c in flat], np.float64)
    und = cal.intrinsics.undistort_points(px) if cal.intrinsics is not None else px
    used = set()
    for q in fit.quads_px:
        d = np.linalg.norm(und - q.mean(axis=0), axis=1)
        if d.min() < 0.3 * math.sqrt(abs(cv2.contourArea(q.astype(np.float32)))):
            used.add(int(np.argmin(d)))
    assert used, "the fit used no flat card"
    src = np.vstack([cal.to_table(np.array(flat[j]["corners_px"])) for j in sorted(used)])
    dst = np.vstack([card_corners_mm(flat[j]["center_mm"], flat[j]["angle_deg"], TAROT)
                     for j in sorted(used)])
    R, t = _rigid(src, dst)
    err = np.linalg.norm(cal.to_table(px) @ R.T + t - np.array([c["center_mm"] for c in flat]),
                         axis=1)
    centres = DEFAULT_MAT.marker_centers()
    mk = []
    for k, m in truth["markers"].items():
        c = np.array(m["corners_px"], np.float64)
        # the marker's centre: where its diagonals cross
        d1, d2 = c[2] - c[0], c[3] - c[1]
        s = np.linalg.solve(np.array([d1, -d2]).T, c[1] - c[0])
        p = cal.to_table((c[0] + s[0] * d1)[None]) @ R.T + t
        mk.append(float(np.linalg.norm(p[0] - np.array(centres[int(k)]))))
    idx = sorted(used)
    others = [j for j in range(len(flat)) if j not in used]
    return err[idx], err[others], np.array(mk)


@pytest.fixture(scope="module")
def frame5():
    image, truth = _load(5)
    fit = fit_cards(image, TAROT, intrinsics=_intrinsics(truth))
    return image, truth, fit


def test_cards_alone_map_the_table_within_a_few_mm(frame5) -> None:
    _, truth, fit = frame5
    cal = fit.calibration
    assert cal.calibrated and cal.H is not None, cal.reason
    assert len(fit.quads_px) >= 4
    assert cal.reprojection_mm is not None and cal.reprojection_mm < 1.0
    assert cal.image_size == (truth["camera"]["width"], truth["camera"]["height"])
    used, others, markers = _errors(fit, truth)
    # measured: used cards <= 1.3 mm, the other cards <= 2.3 mm, markers (200-450 mm
    # from the cards) <= 7.5 mm
    assert used.max() < 2.5
    assert others.max() < 4.5
    assert len(markers) == 4 and markers.max() < 15.0
    rec = cal.record()
    assert rec["calibrated"] is True and rec["reprojection_mm"] < 1.0


def test_the_frame_runs_along_the_lattice(frame5) -> None:
    _, _, fit = frame5
    # every card's long axis is parallel to x or y: the lattice's axes are the frame's
    for a in fit.axes_deg:
        assert min(a % 90.0, 90.0 - a % 90.0) < 3.0, fit.axes_deg
    # the origin is a card's centre, and lattice neighbours are a pitch (95 mm) apart
    centres = np.array(fit.centers_mm)
    assert np.min(np.linalg.norm(centres, axis=1)) < 0.5
    d = np.linalg.norm(centres[:, None] - centres[None], axis=2)
    d[d == 0] = np.inf
    assert np.any(np.abs(d.min(axis=1) - 95.0) < 6.0)
    # image right is east (+x), image down is south (+y), as with the mat
    cal = fit.calibration
    c = np.mean([q.mean(axis=0) for q in fit.quads_px], axis=0)
    p = cal.to_table(np.array([c, c + (40.0, 0.0), c + (0.0, 40.0)]))
    right, down = p[1] - p[0], p[2] - p[0]
    assert right[0] > abs(right[1]) and down[1] > abs(down[0])
    # and back: table mm to undistorted pixels is the inverse (quads_px are undistorted)
    assert cal.intrinsics is not None
    back = cal.to_image(cal.to_table(c[None]))
    assert np.allclose(back, cal.intrinsics.undistort_points(c[None]), atol=1e-6)


def test_a_second_frame_keeps_the_first_frame(frame5) -> None:
    image, truth, fit = frame5
    again = fit_cards(image, TAROT, intrinsics=_intrinsics(truth), previous=fit.calibration)
    assert again.calibration.calibrated and not again.calibration.reason
    px = np.vstack(fit.quads_px)     # where the cards are: positions there must not jump
    first = fit.calibration.to_table(px)
    second = again.calibration.to_table(px)
    assert np.abs(first - second).max() < 2.0


def test_a_moved_camera_starts_a_new_frame(frame5) -> None:
    image, truth, fit = frame5
    # the previous calibration of a camera that looked from elsewhere: the same pixels
    # land on the table in another shape, not just shifted
    tilt = np.array([[1.0, 0.05, 0.0], [0.0, 1.0, 0.0], [2e-4, 0.0, 1.0]])
    H = fit.calibration.H @ tilt
    prev = Calibration(True, H / H[2, 2], reason="", intrinsics=fit.calibration.intrinsics,
                       image_size=fit.calibration.image_size)
    moved = fit_cards(image, TAROT, intrinsics=_intrinsics(truth), previous=prev)
    assert moved.calibration.calibrated
    assert "afresh" in moved.calibration.reason
    used, _, _ = _errors(moved, truth)
    assert used.max() < 2.5


def _marker_centres(cal: Calibration, truth: dict) -> np.ndarray:
    """Where ``cal`` puts the mat's markers (fixed on the table from frame to frame)."""
    out = []
    for _k, m in sorted(truth["markers"].items()):
        c = np.array(m["corners_px"], np.float64)
        d1, d2 = c[2] - c[0], c[3] - c[1]
        s = np.linalg.solve(np.array([d1, -d2]).T, c[1] - c[0])
        out.append(cal.to_table((c[0] + s[0] * d1)[None])[0])
    return np.array(out)


@pytest.fixture(scope="module")
def first_and_late_frame():
    """The sample game's deal (7 cards fitted) and a late frame of the same fixed camera
    whose fit finds 5 cards, 7 mm off the first fit at its worst corner: as a new frame its
    origin would be another card."""
    (im0, tr0), (im18, tr18) = _load(0), _load(18)
    return fit_cards(im0, TAROT), im18, tr0, tr18


def test_a_weaker_fit_of_the_same_camera_follows_the_frame(first_and_late_frame) -> None:
    first, image, tr0, tr18 = first_and_late_frame
    fresh = fit_cards(image, TAROT, previous=first.calibration)
    followed = fit_cards(image, TAROT, previous=first.calibration,
                         follow_mm=FOLLOW_FRAME_MM, follow_within_mm=700.0)
    before = _marker_centres(first.calibration, tr0)
    # a new frame: every position jumps (by the distance between two cards)
    assert "afresh" in fresh.calibration.reason and not fresh.followed_frame
    assert np.linalg.norm(_marker_centres(fresh.calibration, tr18) - before, axis=1).min() > 60
    # followed: the markers, 300-500 mm from the cards, stay within a few mm (measured 8.5)
    assert followed.followed_frame and not followed.kept_frame
    assert "kept in its table frame" in followed.calibration.reason
    assert np.linalg.norm(_marker_centres(followed.calibration, tr18) - before,
                          axis=1).max() < 15
    # the cards' own positions and axes are given in that frame too
    again = followed.calibration.to_table(np.array([q.mean(axis=0) for q in followed.quads_px]))
    assert np.allclose(again, np.array(followed.centers_mm), atol=1.0)
    # but not when the cards would leave the area looked at
    far = fit_cards(image, TAROT, previous=first.calibration, follow_mm=FOLLOW_FRAME_MM,
                    follow_within_mm=50.0)
    assert "afresh" in far.calibration.reason


def test_the_live_calibrator_follows_its_frame(first_and_late_frame,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    first, image, tr0, tr18 = first_and_late_frame
    cc = CardCalibrator(TAROT)
    # (frame by frame, as a camera whose picture changed too much to reuse the fit)
    monkeypatch.setattr(CardCalibrator, "_camera_still", lambda self, thumb: False)
    im0, _ = _load(0)
    c0 = cc.calibrate(im0)
    c18 = cc.calibrate(image)
    assert "kept in its table frame" in c18.reason
    assert np.linalg.norm(_marker_centres(c18, tr18) - _marker_centres(c0, tr0),
                          axis=1).max() < 15


def test_without_intrinsics_it_still_calibrates(frame5) -> None:
    image, truth, _ = frame5
    fit = fit_cards(image, TAROT)
    assert fit.calibration.calibrated and fit.calibration.intrinsics is None
    used, others, markers = _errors(fit, truth)
    # measured: used cards <= 0.4 mm, the others <= 2.4 mm, markers <= 9.5 mm (the lens
    # distortion, k1 = -0.06 here, is left in)
    assert used.max() < 2.0
    assert others.max() < 5.0
    assert markers.max() < 20.0


def test_a_blank_image_is_not_calibrated_and_says_why() -> None:
    blank = np.full((480, 640, 3), 128, np.uint8)
    cal = calibrate_from_cards(blank, TAROT)
    assert not cal.calibrated and cal.H is None
    assert "no card" in cal.reason
    assert cal.record() == {"calibrated": False, "calibration_error": cal.reason}
    with pytest.raises(ValueError, match="not calibrated"):
        cal.to_table(np.zeros((1, 2)))


def test_a_table_texture_is_not_taken_for_cards() -> None:
    # a chequered cloth: card-sized rectangles everywhere, none of them a card
    rng = np.random.default_rng(5)
    y, x = np.mgrid[0:600, 0:800]
    cloth = (((x // 24) + (y // 24)) % 2 * 90 + 80).astype(np.uint8)
    cloth = cv2.GaussianBlur(cloth, (0, 0), 1.0)
    noisy = np.clip(cloth + rng.normal(0, 3, cloth.shape), 0, 255).astype(np.uint8)
    cal = calibrate_from_cards(cv2.cvtColor(noisy, cv2.COLOR_GRAY2BGR), TAROT)
    assert not cal.calibrated, cal.reason


@pytest.mark.parametrize("image, size, match", [
    (np.zeros((0, 0, 3), np.uint8), TAROT, "empty"),
    (np.zeros((10, 10, 2), np.uint8), TAROT, "neither grey nor colour"),
    (np.zeros((100, 100, 3), np.uint8), (70.0, -120.0), "positive"),
    (np.zeros((100, 100, 3), np.uint8), (80.0, 80.0), "square"),
    (np.zeros((100, 100, 3), np.uint8), (70.0,), "expected"),
])
def test_bad_input_is_a_clear_error(image, size, match) -> None:
    with pytest.raises(CardCalibrationError, match=match) as err:
        calibrate_from_cards(image, size)
    assert isinstance(err.value, CompanionError)


def test_a_seed_whose_enclosing_outline_leads_nowhere_still_grows_the_lattice() -> None:
    """A development render with no mat (bench/vision.py's ordinary group, seed 596000,
    image 11; no benchmark seed): a tight lattice of 60-90 px cards. Looking outward from the
    best seeds finds an outline spanning neighbouring cards, of the other polarity, from
    which nothing grows; before 2026-11-28 the fit then kept one card, 14 mm off (median)
    across the table. The seed as found grows to the lattice."""
    from dataclasses import replace

    from bench.vision import render_case
    from vision.synth.deck import load_deck, shared_dir

    sd = shared_dir()
    if sd is None or not (sd / "decks" / "rws-tarot").is_dir():
        pytest.skip("shared/decks not found")
    deck = load_deck(sd / "decks" / "rws-tarot", validate=False)
    image, truth, _ = render_case("ordinary", 11, 596_000, deck,
                                  replace(DEFAULT_MAT, printed=False))
    fit = fit_cards(image, TAROT, intrinsics=_intrinsics(truth))
    cal = fit.calibration
    assert cal.calibrated and cal.H is not None, cal.reason
    assert len(fit.quads_px) >= 4
    flat = [c for c in truth["cards"] if c["height_mm"] < 3.0 and c.get("in_frame", True)]
    px = np.array([c["center_px"] for c in flat], np.float64)
    und = cal.intrinsics.undistort_points(px) if cal.intrinsics is not None else px
    R, t = _rigid(cal.to_table(und), np.array([c["center_mm"] for c in flat]))
    err = np.linalg.norm(cal.to_table(und) @ R.T + t - np.array([c["center_mm"] for c in flat]),
                         axis=1)
    # measured: median 1.8 mm, the lattice within 3 mm, the discard pile's top card (450 mm
    # from the lattice) 7.6 mm
    assert float(np.median(err)) < 4.0
    assert float(err.max()) < 15.0


@pytest.mark.parametrize("index", [6, 9])
def test_a_close_camera_fit_is_the_cards_not_their_art_frames(index: int) -> None:
    """Close-camera renders without a mat (bench/calibration.py's ``close_scene``, seed
    560000, scenes 6 and 9; no benchmark seed): 200-300 px cards whose art's frame line,
    inside the white border, is a card-like rectangle too. The fit ran along the frame lines
    on every card, the table 12% (scene 6: cards touching, their edges never all showing) and
    8% (scene 9) too large. The cards' edges are found just outside at one common factor."""
    from dataclasses import replace

    from bench.calibration import close_scene, fitted_scale
    from vision.synth.deck import load_deck, shared_dir

    sd = shared_dir()
    if sd is None or not (sd / "decks" / "rws-tarot").is_dir():
        pytest.skip("shared/decks not found")
    deck = load_deck(sd / "decks" / "rws-tarot", validate=False)
    image, truth = close_scene(560_000, index, deck, replace(DEFAULT_MAT, printed=False))
    intr = _intrinsics(truth)
    fit = fit_cards(image, TAROT, intrinsics=intr)
    assert fit.calibration.calibrated, fit.calibration.reason
    scale = fitted_scale(fit.calibration, truth)
    # measured: 0.995 (scene 6) and 0.982 (scene 9); 1.12 and 1.08 before
    assert scale is not None and abs(scale - 1.0) < 0.03
    # the cards used are the cards' outlines, not their frames (8-11% smaller): each as
    # long and wide as the true card nearest it, within 5% (measured: 4.0% at most)
    true = [intr.undistort_points(np.array(c["corners_px"], np.float64))
            for c in truth["cards"] if c.get("in_frame", True)]

    def sides(q: np.ndarray) -> np.ndarray:
        return np.sort(np.linalg.norm(np.roll(q, -1, axis=0) - q, axis=1))

    for q in fit.quads_px:
        u = min(true, key=lambda u: float(np.linalg.norm(u.mean(axis=0) - q.mean(axis=0))))
        assert np.all(np.abs(sides(q) / sides(u) - 1.0) < 0.05), (sides(q), sides(u))


def test_the_rectangle_scores_are_the_plain_shifted_minimum() -> None:
    """_rect_scores reads each side's map a half size away on slices (speed); it scores as
    the plain version, the minimum of four shifted copies (zero outside), wherever that is
    above zero, the only scores a peak can have."""
    from calibration.from_cards import _rect_scores

    def shifted(a: np.ndarray, dx: int, dy: int) -> np.ndarray:
        out = np.zeros_like(a)
        h, w = a.shape
        xs0, xs1 = max(0, -dx), min(w, w - dx)
        ys0, ys1 = max(0, -dy), min(h, h - dy)
        out[ys0:ys1, xs0:xs1] = a[ys0 + dy:ys1 + dy, xs0 + dx:xs1 + dx]
        return out

    rng = np.random.default_rng(5)
    Dx = rng.normal(0.0, 20.0, (90, 130)).astype(np.float32)
    Dy = rng.normal(0.0, 20.0, (90, 130)).astype(np.float32)
    for ha, hb in ((20.4, 33.6), (33.6, 20.4), (70.0, 10.0)):
        score, V, Hh = _rect_scores(Dx, Dy, ha, hb, 2)
        kx, ky = np.ones((1, 5), np.uint8), np.ones((5, 1), np.uint8)
        a, b = int(round(ha)), int(round(hb))
        plain = np.minimum(
            np.minimum(shifted(cv2.dilate(V, kx), -a, 0), shifted(cv2.dilate(-V, kx), a, 0)),
            np.minimum(shifted(cv2.dilate(Hh, ky), 0, -b), shifted(cv2.dilate(-Hh, ky), 0, b)))
        np.testing.assert_array_equal(np.maximum(score, 0), np.maximum(plain, 0))


def _known_camera() -> tuple[np.ndarray, np.ndarray]:
    """A close camera's K and the homography from table mm to its pixels (tilted 18 and 8
    degrees, 600 mm up): the lone-card tests' camera."""
    K = np.array([[1400.0, 0.0, 959.5], [0.0, 1400.0, 539.5], [0.0, 0.0, 1.0]])
    R, _ = cv2.Rodrigues(np.array([math.radians(18.0), math.radians(-8.0), 0.4]))
    t = np.array([20.0, -10.0, 600.0])
    return K, K @ np.column_stack([R[:, 0], R[:, 1], t])


def _three_sides_seen(quad: np.ndarray) -> list:
    """A card's side lines as the finder gives them, (outward normal, offset) each, for
    sides 0-2 of ``quad`` seen and side 3 not (None)."""
    ctr = quad.mean(axis=0)
    lines: list = []
    for k in range(3):
        a, b = quad[k], quad[(k + 1) % 4]
        d = (b - a) / np.linalg.norm(b - a)
        n = np.array([-d[1], d[0]])
        if n @ ((a + b) / 2 - ctr) < 0:
            n = -n
        lines.append((n, float(n @ a)))
    lines.append(None)
    return lines


def test_a_lone_card_seen_on_three_sides_fits_the_known_camera_to_its_sides() -> None:
    """One card whose fourth side does not show (a striped cloth crossing it, a close
    camera's dev render, seed 940000 scene 12; no benchmark seed): its quad's corners on
    that side are a guess. With the camera's K known, the three sides seen fix the camera
    (six line ends for its six unknowns); before 2026-12-02 the final fit took the four
    corners, guess included, and the table came out 12% too large in that render."""
    from calibration.from_cards import (
        _Card,
        _fit_all,
        _Grown,
        _lone_card_on_its_sides,
        _persp,
        _rect_model,
        _start_from_card,
    )

    K, G = _known_camera()
    model = _rect_model(TAROT)
    true_quad = _persp(G, model)
    lines = _three_sides_seen(true_quad)   # side 3 (a long side) hidden
    # the hidden side's corners guessed from the image's aspect: 8% short of the truth
    guess = true_quad.copy()
    guess[3] = true_quad[2] + 0.92 * (true_quad[3] - true_quad[2])
    guess[0] = true_quad[1] + 0.92 * (true_quad[0] - true_quad[1])
    card = _Card(guess, lines, 40.0)
    start = _start_from_card(card, 1, TAROT, 0.0)
    cards, H, poses, per = _fit_all([card], model, start.H, K, focal_free=False)
    assert len(cards) == 1
    refit = _lone_card_on_its_sides(_Grown(cards, H, poses, per), model, K)
    mm = _persp(refit.H, true_quad)
    sides = np.linalg.norm(np.roll(mm, -1, axis=0) - mm, axis=1)
    # the true corners are a 70 x 120 mm card again (the corners' fit: 8% off)
    np.testing.assert_allclose(sides, [70.0, 120.0, 70.0, 120.0], atol=0.5)
    # and the card used is the card's outline, its unseen side included
    got = refit.cards[0].quad
    assert min(float(np.abs(np.roll(got, k, axis=0) - true_quad).max()) for k in range(4)) < 1.0


def test_three_sides_no_card_under_the_camera_has_keep_the_corners_fit() -> None:
    """Three sides of a rectangle that is not a card (a square patch of a striped cloth,
    an art's frame on a white cloth: dev seed 950000 scenes 7 and 10, no benchmark seed)
    cannot be one card under the known camera: refitted to them, its corners move by half
    the card and the table came out 27% too small (scene 7) or four times too large
    (scene 10), where the corners' fit gave 16% and 93%. The corners' fit is kept."""
    from calibration.from_cards import (
        _Card,
        _fit_all,
        _Grown,
        _lone_card_on_its_sides,
        _persp,
        _rect_model,
        _start_from_card,
    )

    K, G = _known_camera()
    # a 70 x 84 mm patch seen where a 70 x 120 card is looked for
    patch = _persp(G, _rect_model((70.0, 84.0)))
    card = _Card(patch, _three_sides_seen(patch), 40.0)
    model = _rect_model(TAROT)
    start = _start_from_card(card, 1, TAROT, 0.0)
    g = _Grown(*_fit_all([card], model, start.H, K, focal_free=False))
    assert _lone_card_on_its_sides(g, model, K) is g
