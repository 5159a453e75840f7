"""The classical card identifier (vision/cards): enroll the tarot scans, identify rendered
cards and their 180-degree orientation, reject table texture, persist the gallery.
Seeded; card art from shared/decks (skipped without it)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

cv2 = pytest.importorskip("cv2")

from calibration.mat import DEFAULT_MAT  # noqa: E402
from calibration.table import Calibration  # noqa: E402
from vision.cards import (CROP_SIZE, Gallery, GalleryError, art_angle_deg, enroll,  # noqa: E402
                          half_turn_symmetric, order_card_corners, warp_card, warp_card_mm)
from vision.synth.deck import shared_dir  # noqa: E402
from vision.synth.errors import DeckError  # noqa: E402


@pytest.fixture(scope="module")
def tarot_dir() -> Path:
    sd = shared_dir()
    if sd is None or not (sd / "decks" / "rws-tarot").is_dir():
        pytest.skip("shared/decks not found (set ARCANA_SHARED)")
    return sd / "decks" / "rws-tarot"


@pytest.fixture(scope="module")
def gallery(tarot_dir: Path) -> Gallery:
    # few augmentations: enough for clean renders, and the test stays fast
    return enroll(tarot_dir, per_card=12, seed=3)


def _render(tarot_dir: Path, cards: list[tuple[str, tuple[float, float], float, bool]],
            seed: int, tilt: float = 0.0):
    from vision.synth.camera import camera_over_mat
    from vision.synth.deck import load_deck
    from vision.synth.render import Light, plain_style, render
    from vision.synth.scene import CardPlacement, TableScene

    deck = load_deck(tarot_dir, validate=False)
    scene = TableScene(cards=[CardPlacement(cid, c, a, face_up=up) for cid, c, a, up in cards],
                       card_size_mm=deck.card_size_mm)
    cam = camera_over_mat(DEFAULT_MAT, (960, 720), tilt=tilt, yaw=17.0, tilt_dir=60.0,
                          card_px=130, target=(450.0, 325.0))
    style = plain_style((60, 95, 70), seed=seed)
    style.lights = [Light(40, 65, 0.6, 0.3, 3.0)]
    style.printing_strength = 0.6
    style.noise_sigma = 2.0
    image, truth = render(scene, deck, DEFAULT_MAT, cam, style)
    return image, truth, cam


CARDS = [("cups-07", (330.0, 250.0), 270.0, True), ("major-13", (450.0, 250.0), 90.0, True),
         ("swords-12", (570.0, 250.0), 0.0, True), ("pentacles-01", (330.0, 400.0), 200.0, True),
         ("wands-10", (450.0, 400.0), 33.0, True), ("major-00", (570.0, 400.0), 135.0, False)]


def test_identity_and_orientation(tarot_dir: Path, gallery: Gallery) -> None:
    image, truth, _ = _render(tarot_dir, CARDS, seed=11, tilt=8.0)
    rng = np.random.default_rng(5)
    for c in truth["cards"]:
        corners = np.asarray(c["corners_px"])
        flip = bool(rng.random() < 0.5)
        if flip:  # the detector's quad starts at the art's bottom edge
            corners = np.roll(corners, 2, axis=0)
        m = gallery.identify(warp_card(image, corners))
        assert m.card_id == c["id"], (c["id"], m)
        assert m.confidence > 0.5
        if c["id"] != "back":
            assert m.rotated == flip, (c["id"], m)
            # the record's angle: the crop's top edge direction, turned when rotated
            top = (corners[0] + corners[1]) / 2 - corners.mean(axis=0)
            quad_deg = float(np.degrees(np.arctan2(top[1], top[0])))
            img_art = art_angle_deg(quad_deg, m.rotated)
            true_top = (np.asarray(c["corners_px"])[:2].mean(axis=0)
                        - np.asarray(c["corners_px"]).mean(axis=0))
            want = float(np.degrees(np.arctan2(true_top[1], true_top[0])))
            assert abs((img_art - want + 180) % 360 - 180) < 1.0


def test_warp_from_table_mm_and_shuffled_corners(tarot_dir: Path, gallery: Gallery) -> None:
    image, truth, cam = _render(tarot_dir, CARDS[:3], seed=12)
    calib = Calibration(True, H=np.linalg.inv(cam.table_homography()))
    for c in truth["cards"]:
        # a card given in table mm at the art angle: upright crop
        crop = warp_card_mm(image, calib, c["center_mm"], c["angle_deg"], (70.0, 120.0))
        assert crop.shape[:2] == (CROP_SIZE[1], CROP_SIZE[0])
        m = gallery.identify(crop)
        assert (m.card_id, m.rotated) == (c["id"], False)
        # corners in a scrambled order come back as a portrait quad
        scrambled = np.asarray(c["corners_px"])[[2, 0, 3, 1]]
        q = order_card_corners(scrambled)
        assert np.linalg.norm(q[1] - q[0]) < np.linalg.norm(q[2] - q[1])
        assert gallery.identify(warp_card(image, q)).card_id == c["id"]


def test_table_texture_is_rejected(gallery: Gallery) -> None:
    from vision.synth import textures

    rng = np.random.default_rng(99)
    for kind in ("cloth", "wood", "felt"):
        tex = textures.table_surface(rng, kind, CROP_SIZE[1], CROP_SIZE[0], 0.9)
        m = gallery.identify(tex)
        assert m.card_id is None and m.confidence < 0.5, (kind, m)


def test_bad_deck_folder(tmp_path: Path) -> None:
    with pytest.raises(DeckError, match="does not exist"):
        enroll(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(DeckError, match="no card images"):
        enroll(tmp_path / "empty")


def test_save_load_round_trip(tmp_path: Path, tarot_dir: Path, gallery: Gallery) -> None:
    path = gallery.save(tmp_path / "tarot.npz")
    assert path.stat().st_size < 4_000_000
    again = Gallery.load(path)
    image, truth, _ = _render(tarot_dir, CARDS[:3], seed=13)
    crops = [warp_card(image, c["corners_px"]) for c in truth["cards"]]
    a, b = gallery.identify_batch(crops), again.identify_batch(crops)
    assert [m.card_id for m in a] == [m.card_id for m in b] == [c["id"] for c in truth["cards"]]
    assert np.allclose([m.margin for m in a], [m.margin for m in b], atol=0.05)
    with pytest.raises(GalleryError, match="does not exist"):
        Gallery.load(tmp_path / "missing.npz")
    (tmp_path / "junk.npz").write_bytes(b"not a gallery")
    with pytest.raises(GalleryError, match="not readable"):
        Gallery.load(tmp_path / "junk.npz")


def test_a_garbled_gallery_is_refused_naming_what_is_wrong(tmp_path: Path,
                                                           gallery: Gallery) -> None:
    import json

    with np.load(gallery.save(tmp_path / "good.npz")) as z:
        good = dict(z)
    meta = json.loads(good["meta"].tobytes())

    def load(name: str, **changed: np.ndarray) -> None:
        np.savez(tmp_path / f"{name}.npz", **{**good, **changed})
        Gallery.load(tmp_path / f"{name}.npz")

    def meta_of(value: object) -> np.ndarray:
        return np.frombuffer(json.dumps(value).encode(), np.uint8)

    with pytest.raises(GalleryError, match=r"proj\.npz': array 'proj' has shape"):
        load("proj", proj=good["proj"][:, :5].T)
    with pytest.raises(GalleryError, match="array 'proto_class' has shape"):
        load("classes", proto_class=good["proto_class"][:3])
    with pytest.raises(GalleryError, match="its meta is list"):
        load("list", meta=meta_of([1, 2]))
    with pytest.raises(GalleryError, match="'deck_name'"):
        load("nameless", meta=meta_of({k: v for k, v in meta.items() if k != "deck_name"}))
    with pytest.raises(GalleryError, match="holds Python objects"):
        load("objects", meta=np.array([{"a": 1}], dtype=object))
    np.save(tmp_path / "one.npy", np.zeros(3))
    (tmp_path / "one.npy").rename(tmp_path / "one.npz")
    with pytest.raises(GalleryError, match="a single numpy array"):
        Gallery.load(tmp_path / "one.npz")


def test_art_that_looks_the_same_both_ways_up() -> None:
    rng = np.random.default_rng(11)
    art = cv2.GaussianBlur(rng.integers(0, 256, (240, 140, 3), dtype=np.uint8), (0, 0), 6.0)
    art = cv2.normalize(art, None, 0, 255, cv2.NORM_MINMAX)     # scan-like contrast
    assert not half_turn_symmetric(art)
    both = cv2.normalize(((art.astype(np.uint16) + art[::-1, ::-1]) // 2).astype(np.uint8),
                         None, 0, 255, cv2.NORM_MINMAX)
    assert half_turn_symmetric(both)
    # a small mark in one corner (a detail drawn once) is not seen at a camera's scale
    marked = both.copy()
    marked[8:12, 8:12] = 0
    assert half_turn_symmetric(marked)
    assert not half_turn_symmetric(np.full((240, 140, 3), 128, np.uint8))   # no art at all


def test_six_decktet_cards_and_no_tarot_card_look_the_same_both_ways_up(tarot_dir: Path) -> None:
    from vision.synth.deck import load_deck

    decktet = load_deck(tarot_dir.parent / "decktet", validate=False)
    tarot = load_deck(tarot_dir, validate=False)
    found = {c for c in decktet.ids if half_turn_symmetric(decktet.image(c))}
    assert found == {"decktet-4-battle", "decktet-5-forest", "decktet-8-mill",
                     "decktet-9-darkness", "decktet-crown-knots", "decktet-crown-waves"}
    assert not [c for c in tarot.ids if half_turn_symmetric(tarot.image(c))]
    # the shipped galleries say the same (read by the pipeline, which has no scans)
    from models import model_path

    assert Gallery.load(model_path("cards-decktet.npz")).half_turn_symmetric == found
    assert Gallery.load(model_path("cards-tarot-rws.npz")).half_turn_symmetric == frozenset()


def test_enrollment_records_the_symmetric_cards(tmp_path: Path, tarot_dir: Path) -> None:
    deck = tmp_path / "deck"
    deck.mkdir()
    art = cv2.imread(str(tarot_dir / "cups-02.jpg"))
    cv2.imwrite(str(deck / "plain.png"), art)
    cv2.imwrite(str(deck / "mirror.png"), cv2.addWeighted(art, 0.5, art[::-1, ::-1], 0.5, 0))
    g = enroll(deck, per_card=4, seed=1)
    assert g.half_turn_symmetric == {"mirror"}
    g.save(tmp_path / "g.npz")
    assert Gallery.load(tmp_path / "g.npz").half_turn_symmetric == {"mirror"}


def test_a_back_with_a_top_is_told_which_way_up_it_lies(tmp_path: Path, tarot_dir: Path
                                                         ) -> None:
    """The Decktet's back has a top: the shipped gallery keeps a thumbnail of it and tells
    a back's cut from the same cut turned round; the tarot's back (drawn by the program,
    alike both ways up) has none, and a deck enrolled with a symmetric back gets none."""
    from models import model_path

    decktet = Gallery.load(model_path("cards-decktet.npz"))
    assert decktet.back_has_top
    assert Gallery.load(model_path("cards-tarot-rws.npz")).back_alike_both_ways
    back = cv2.imread(str(tarot_dir.parent / "decktet" / "back.png"))
    rng = np.random.default_rng(2)
    for _ in range(5):
        # a cut as the pipeline makes it: smaller, a little off, noisy, another light
        cut = cv2.resize(back, CROP_SIZE, interpolation=cv2.INTER_AREA).astype(np.float32)
        cut = cut * rng.uniform(0.5, 1.2) + rng.normal(0.0, 8.0, cut.shape)
        cut = np.clip(np.roll(cut, int(rng.integers(-3, 4)), axis=1), 0, 255).astype(np.uint8)
        assert not decktet.back_turned(cut)
        assert decktet.back_turned(cut[::-1, ::-1])
    deck = tmp_path / "deck"
    deck.mkdir()
    art = cv2.imread(str(tarot_dir / "cups-02.jpg"))
    cv2.imwrite(str(deck / "plain.png"), art)
    alike = cv2.addWeighted(art, 0.5, art[::-1, ::-1], 0.5, 0)
    h, w = alike.shape[:2]
    ramp = np.linspace(0.96, 1.04, w, dtype=np.float32)[None, :, None]
    for back in (alike, alike[: h - h // 100, w // 100:],             # scanned a little off
                 np.clip(alike * ramp, 0, 255).astype(np.uint8),      # under a light gradient
                 np.full_like(art, 90)):                              # one plain colour
        cv2.imwrite(str(deck / "back.png"), back)
        g = enroll(deck, per_card=2, seed=1)
        assert not g.back_has_top and g.back_alike_both_ways
    cv2.imwrite(str(deck / "back.png"), art)
    g = enroll(deck, per_card=4, seed=1)
    assert g.back_has_top
    g.save(tmp_path / "g.npz")
    again = Gallery.load(tmp_path / "g.npz")
    assert again.back_has_top and again.back_turned(cv2.resize(art, CROP_SIZE)[::-1, ::-1])


def test_a_garbled_or_missing_back_thumbnail(tmp_path: Path) -> None:
    """A back thumbnail of NaNs or zeros is refused as garbled; a gallery enrolled before
    backs were asked about (no ``back_top`` at all) claims neither a top nor its absence."""
    import json

    from models import model_path

    src = model_path("cards-decktet.npz")
    with np.load(src) as z:
        arrays = {k: z[k] for k in z.files}
    meta = json.loads(arrays["meta"].tobytes())
    for bad in (float("nan"), 0.0):
        garbled = dict(meta, back_top=[bad] * len(meta["back_top"]))
        path = tmp_path / "garbled.npz"
        np.savez(path, **{**arrays, "meta": np.frombuffer(json.dumps(garbled).encode(),
                                                          np.uint8)})
        with pytest.raises(GalleryError, match="back thumbnail .* enroll again"):
            Gallery.load(path)
    old = {k: v for k, v in meta.items() if k != "back_top"}
    path = tmp_path / "old.npz"
    np.savez(path, **{**arrays, "meta": np.frombuffer(json.dumps(old).encode(), np.uint8)})
    g = Gallery.load(path)
    assert not g.back_has_top and not g.back_alike_both_ways


def _lda_reference(X: np.ndarray, y: np.ndarray, n_pca: int, shrink: float) -> np.ndarray:
    """The enrollment's projection as it was fitted before the fit learnt the few-samples
    path: PCA from an eigendecomposition of the whole D x D covariance, then LDA."""
    Xc = X - X.mean(axis=0)
    cov = (Xc.T @ Xc) / len(X)
    ev, evec = np.linalg.eigh(cov.astype(np.float64))
    idx = np.argsort(ev)[::-1][:n_pca]
    P = evec[:, idx]
    Z = Xc @ P
    classes = np.unique(y)
    means = np.stack([Z[y == c].mean(axis=0) for c in classes])
    R = Z - means[np.searchsorted(classes, y)]
    Sw = (R.T @ R) / len(Z)
    Sw = (1 - shrink) * Sw + shrink * np.trace(Sw) / len(Sw) * np.eye(len(Sw))
    ew, evw = np.linalg.eigh(Sw)
    Wh = evw / np.sqrt(np.maximum(ew, 1e-9))[None, :]
    Mb = (means - means.mean(axis=0)) @ Wh
    _, sv, vt = np.linalg.svd(Mb, full_matrices=False)
    k = int(min(len(classes) - 1, n_pca, np.sum(sv > 1e-6 * sv[0])))
    return (P @ Wh @ vt[:k].T).astype(np.float32)


def _class_data(rng: np.random.Generator, n: int, d: int, classes: int
                ) -> tuple[np.ndarray, np.ndarray]:
    """Standardised features like an enrollment's: class means plus correlated noise whose
    variance falls off across the features' directions."""
    y = np.arange(n) % classes
    mix = rng.standard_normal((d, d)) * np.linspace(1.0, 0.02, d)[:, None]
    X = rng.standard_normal((classes, d))[y] * 0.7 + rng.standard_normal((n, d)) @ mix
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    return X.astype(np.float32), y


def _distances(X: np.ndarray, W: np.ndarray) -> np.ndarray:
    Z = X.astype(np.float64) @ W.astype(np.float64)
    return np.linalg.norm(Z[:, None] - Z[None], axis=-1)


@pytest.mark.parametrize("n, n_pca", [(150, 60), (150, 320), (600, 120)])
def test_the_projection_means_what_it_meant(n: int, n_pca: int) -> None:
    """Fewer samples than features (a small deck's enrollment) fit the projection from the
    N x N Gram matrix: the same principal subspace, so the same distances between projected
    samples, seen and unseen, as the D x D covariance gave; with more principal axes asked
    for than the samples span, too. With more samples than features: the same numbers."""
    from vision.cards.identify import _lda

    rng = np.random.default_rng([17, n, n_pca])
    X, y = _class_data(rng, n + 60, 400, 12)
    fit, new = X[:n], X[n:]
    W, ref = _lda(fit, y[:n], n_pca, 0.05), _lda_reference(fit, y[:n], n_pca, 0.05)
    assert W.shape == ref.shape
    for sample in (fit, new):
        got, want = _distances(sample, W), _distances(sample, ref)
        assert np.abs(got - want).max() < 1e-5 * want.max()
    if n >= X.shape[1]:
        assert np.array_equal(W, ref)


def test_a_small_decks_fit_decomposes_no_features_by_features_matrix(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A six-card deck enrolls from a few hundred views of some 2,000 features each: the
    fit's eigendecompositions are no bigger than the number of views (a 2,000 x 2,000 one
    took most of the enrollment's seconds)."""
    from vision.cards.identify import _lda

    sizes: list[int] = []
    eigh = np.linalg.eigh

    def counted(a: np.ndarray, *args: object, **kwargs: object) -> object:
        sizes.append(len(a))
        return eigh(a, *args, **kwargs)

    monkeypatch.setattr(np.linalg, "eigh", counted)
    X, y = _class_data(np.random.default_rng(3), 150, 400, 12)
    _lda(X, y, 320, 0.05)
    assert sizes and max(sizes) <= 150, sizes


def test_enrollments_without_a_back_image_draw_the_procedural_backs_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The face-down class of a deck without a back image learns from the same 120 drawn
    backs whatever the deck and seed: a second enrollment in the same run (the tests', the
    benchmark's from scans then photos) takes them again instead of drawing them anew, and
    its gallery is the same."""
    from vision.synth import textures

    deck = tmp_path / "deck"
    deck.mkdir()
    rng = np.random.default_rng(4)
    for k in range(3):
        cv2.imwrite(str(deck / f"card-{k}.png"), rng.integers(0, 255, (120, 80, 3), np.uint8))
    drawn = 0
    draw = textures.procedural_back

    def counted(rng: np.random.Generator, *size: int) -> np.ndarray:
        nonlocal drawn
        drawn += 1
        return draw(rng, *size)

    monkeypatch.setattr(textures, "procedural_back", counted)
    first = enroll(deck, per_card=2, seed=1)
    assert first.meta["back"] == "procedural" and drawn in (0, 120)  # (0: an earlier test's)
    before = drawn
    again = enroll(deck, per_card=2, seed=1)
    assert drawn == before
    assert np.array_equal(first.protos, again.protos) and np.array_equal(first.proj, again.proj)
