"""``companion enroll-deck``: enroll a small custom deck made here (six procedural cards and a
deck.json), then identify perspective-warped crops of its cards through the saved gallery;
a bad deck folder or name is a clean one-line error with exit code 2. Seeded throughout."""

from __future__ import annotations

import json
import re
import shutil
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

cv2 = pytest.importorskip("cv2")

from companion.cli import main
from vision.cards.galleries import gallery_path, list_galleries, load_gallery
from vision.cards.identify import Gallery, GalleryError, warp_card

ROOT = Path(__file__).resolve().parents[1]
IDS = [f"glyph-{k:02d}" for k in range(6)]
CARD_MM = (63.5, 89.0)


def make_deck(folder: Path) -> Path:
    """Six poker-size cards: coloured field, random discs and bars, a big digit (so that
    each card is distinct and none looks the same turned 180 degrees)."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(1)
    for k, cid in enumerate(IDS):
        img = np.full((240, 170, 3), 245, np.uint8)
        field = tuple(int(v) for v in rng.integers(40, 220, 3))
        cv2.rectangle(img, (8, 8), (161, 231), field, -1)
        for _ in range(5):
            c = tuple(int(v) for v in rng.integers(0, 255, 3))
            x, y = int(rng.integers(20, 140)), int(rng.integers(20, 200))
            if rng.random() < 0.5:
                cv2.circle(img, (x, y), int(rng.integers(8, 30)), c, -1)
            else:
                cv2.rectangle(img, (x, y), (x + int(rng.integers(10, 40)),
                                            y + int(rng.integers(10, 50))), c, -1)
        cv2.putText(img, str(k), (20, 70), cv2.FONT_HERSHEY_SIMPLEX, 2.0, (0, 0, 0), 5)
        cv2.imwrite(str(folder / f"{cid}.png"), img)
    (folder / "deck.json").write_text(json.dumps(
        {"name": "glyphs", "card_size_mm": list(CARD_MM), "cards": IDS}))
    return folder


def run_cli(*args: str, env_extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    # one BLAS thread: the fit's eigendecompositions run several times slower when OpenBLAS
    # threads fight other jobs for the two cores of a shared test machine
    env.update({"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}, **env_extra)
    return subprocess.run([sys.executable, "-m", "companion.cli", *args], capture_output=True,
                          text=True, check=False, timeout=300, cwd=ROOT, env=env)


@pytest.fixture(scope="module")
def enrolled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """(deck folder, XDG data home, CLI stdout) after enrolling the deck once."""
    base = tmp_path_factory.mktemp("enroll")
    deck = make_deck(base / "glyph-deck")
    data = base / "data"
    proc = run_cli("enroll-deck", str(deck), "--per-card", "8", "--seed", "3",
                   env_extra={"XDG_DATA_HOME": str(data)})
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return deck, data, proc.stdout


def test_enroll_writes_the_gallery_to_the_data_dir(enrolled: tuple[Path, Path, str],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    _, data, out = enrolled
    path = data / "arcana-companion" / "decks" / "glyphs.npz"
    assert path.is_file()
    assert "enrolled 6 cards (+ procedural backs)" in out and f"wrote {path}" in out
    assert " s; " in out and "kB" in out  # time taken and file size
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    assert gallery_path("glyphs") == path
    assert list_galleries() == ["glyphs"]
    gal = load_gallery("glyphs")
    assert gal.deck_name == "glyphs"
    assert gal.card_size_mm == CARD_MM
    assert set(gal.card_ids) >= set(IDS)
    # by path too, and the same gallery
    assert load_gallery(str(path)).class_ids == gal.class_ids


def _scene(art: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The card art warped onto a green felt image as a tilted, turned quad; returns the
    image and the card's corners (TL, TR, BR, BL of the art)."""
    img = np.empty((360, 480, 3), np.uint8)
    img[:] = (70, 110, 60)
    img = cv2.add(img, rng.normal(0, 6, img.shape).clip(-20, 20).astype(np.int8),
                  dtype=cv2.CV_8U)
    h_px = float(rng.uniform(110, 170))
    w_px = h_px * CARD_MM[0] / CARD_MM[1]
    a = np.radians(rng.uniform(0, 360))
    u = np.array([np.cos(a), np.sin(a)])
    r = np.array([-u[1], u[0]])
    c = np.array([240.0, 180.0]) + rng.uniform(-40, 40, 2)
    quad = np.array([c - u * h_px / 2 - r * w_px / 2, c - u * h_px / 2 + r * w_px / 2,
                     c + u * h_px / 2 + r * w_px / 2, c + u * h_px / 2 - r * w_px / 2])
    quad += rng.normal(0, 4, quad.shape)  # perspective: the quad is no rectangle
    ah, aw = art.shape[:2]
    M = cv2.getPerspectiveTransform(
        np.array([[-0.5, -0.5], [aw - 0.5, -0.5], [aw - 0.5, ah - 0.5], [-0.5, ah - 0.5]],
                 np.float32),
        quad.astype(np.float32))
    warped = cv2.warpPerspective(art, M, (480, 360), flags=cv2.INTER_AREA)
    mask = cv2.warpPerspective(np.full((ah, aw), 255, np.uint8), M, (480, 360))
    img[mask > 127] = warped[mask > 127]
    img = cv2.GaussianBlur(img, (3, 3), 0.7)
    return img, quad


def test_identifies_warped_crops(enrolled: tuple[Path, Path, str]) -> None:
    deck, data, _ = enrolled
    gal = Gallery.load(data / "arcana-companion" / "decks" / "glyphs.npz")
    rng = np.random.default_rng(17)
    for trial in range(2):
        for cid in IDS:
            img, quad = _scene(cv2.imread(str(deck / f"{cid}.png")), rng)
            flip = (trial + IDS.index(cid)) % 2 == 1
            corners = np.roll(quad, 2, axis=0) if flip else quad  # detector's quad upside down
            m = gal.identify(warp_card(img, corners))
            assert m.card_id == cid, (cid, m)
            assert m.rotated == flip, (cid, m)
    # plain felt is not a card
    felt = np.empty((112, 64, 3), np.uint8)
    felt[:] = (70, 110, 60)
    assert gal.identify(felt).card_id is None


def test_enroll_from_photos(tmp_path: Path) -> None:
    """The same deck photographed on a table, a card lying across in some: enroll-deck finds
    and cuts out each card, and the gallery names crops of the scans as the scans' does."""
    from vision.synth.photos import card_photo

    scans = make_deck(tmp_path / "scans")
    photos = tmp_path / "photos"
    photos.mkdir()
    (photos / "deck.json").write_text((scans / "deck.json").read_text())
    rng = np.random.default_rng(8)
    for k, cid in enumerate(IDS):
        photo, _ = card_photo(rng, cv2.imread(str(scans / f"{cid}.png")), CARD_MM,
                              upright=k % 3 != 0, surfaces=("cloth", "felt", "wood"))
        cv2.imwrite(str(photos / f"{cid}.jpg"), photo)
    out = tmp_path / "photos.npz"
    proc = run_cli("enroll-deck", str(photos), "--per-card", "8", "--seed", "3", "--out",
                   str(out), "--no-progress", env_extra={})
    assert proc.returncode == 0, proc.stderr
    assert "6 image(s) read as photos" in proc.stderr
    gal = Gallery.load(out)
    rng = np.random.default_rng(17)
    for cid in IDS:
        img, quad = _scene(cv2.imread(str(scans / f"{cid}.png")), rng)
        m = gal.identify(warp_card(img, quad))
        assert m.card_id == cid, (cid, m)
        assert not m.rotated, (cid, m)
    # told they are scans, the photos are taken whole
    proc = run_cli("enroll-deck", str(photos), "--faces", "scans", "--per-card", "2", "--out",
                   str(tmp_path / "whole.npz"), "--no-progress", env_extra={})
    assert proc.returncode == 0, proc.stderr
    assert "read as photos" not in proc.stderr
    # a photo without a card is named
    cv2.imwrite(str(photos / f"{IDS[2]}.jpg"), np.full((600, 800, 3), 80, np.uint8))
    proc = run_cli("enroll-deck", str(photos), "--out", str(out), "--no-progress",
                   env_extra={})
    assert proc.returncode == 2
    assert f"{IDS[2]}.jpg: no card found in the photo" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_out_and_name(tmp_path: Path) -> None:
    deck = make_deck(tmp_path / "d")
    out = tmp_path / "g" / "mine.npz"
    proc = run_cli("enroll-deck", str(deck), "--per-card", "2", "--name", "my-glyphs",
                   "--out", str(out), "--no-progress",
                   env_extra={"XDG_DATA_HOME": str(tmp_path / "unused")})
    assert proc.returncode == 0, proc.stderr
    assert out.is_file() and not (tmp_path / "unused").exists()
    assert Gallery.load(out).deck_name == "my-glyphs"


@pytest.mark.parametrize("case", ["missing", "empty", "incomplete", "bad-image", "bad-name",
                                  "misspelt", "two-images", "cards-not-a-list", "cards-empty",
                                  "cards-twice", "endless-card", "card-in-cm",
                                  "cards-cups-15", "cards-major-22", "seed", "shipped-name",
                                  "shipped-folder-name"])
def test_bad_deck_is_a_clean_error(case: str, tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str],
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    folder = tmp_path / "deck"
    extra: list[str] = []
    if case == "empty":
        folder.mkdir()
        want = "holds no card images"
    elif case == "missing":
        want = "does not exist or is not a folder"
    elif case == "incomplete":
        make_deck(folder)
        (folder / "glyph-03.png").unlink()
        want = "is missing 1 card image(s): glyph-03"
    elif case == "bad-image":
        make_deck(folder)
        (folder / "glyph-02.png").write_bytes(b"not a png")
        want = "unreadable image"
    elif case == "misspelt":
        make_deck(folder)
        (folder / "glyph-03.png").rename(folder / "glyph-3.png")
        want = "missing 1 card image(s): glyph-03; these images are named by no card id of " \
            "the deck: glyph-3.png"
    elif case == "two-images":
        make_deck(folder)
        shutil.copy(folder / "glyph-02.png", folder / "glyph-02.jpg")
        want = "two images of 'glyph-02': glyph-02.jpg and glyph-02.png; keep one"
    elif case.startswith("cards-") or case in ("endless-card", "card-in-cm"):
        make_deck(folder)
        # (a tarot id out of range: the card exists as a file, and was enrolled as a card)
        for odd in ("cups-15", "major-22"):
            shutil.copy(folder / "glyph-00.png", folder / f"{odd}.png")
        meta = json.loads((folder / "deck.json").read_text())
        meta.update({"cards-not-a-list": {"cards": 5}, "cards-empty": {"cards": []},
                     "cards-twice": {"cards": [*IDS, IDS[0]]},
                     "cards-cups-15": {"cards": [*IDS, "cups-15"]},
                     "cards-major-22": {"cards": [*IDS, "major-22"]},
                     "endless-card": {"card_size_mm": [70, 1e308 * 10]},
                     "card-in-cm": {"card_size_mm": [7, 12]}}[case])
        (folder / "deck.json").write_text(json.dumps(meta))
        want = {"cards-not-a-list": "cards must be a list of card ids",
                "cards-empty": "cards must be a list of card ids",
                "cards-twice": f"cards names {IDS[0]} twice",
                "cards-cups-15": "card id 'cups-15' is not a tarot card: a suit card's rank "
                                 "is 01 to 14",
                "cards-major-22": "card id 'major-22' is not a tarot card: the major arcana "
                                  "are major-00 (the Fool) to major-21",
                "endless-card": "card_size_mm must be width <= height, both from 30 to 250 mm",
                "card-in-cm": "card_size_mm must be width <= height, both from 30 to 250 mm"
                }[case]
    elif case == "seed":
        make_deck(folder)
        with pytest.raises(SystemExit):
            main(["enroll-deck", str(folder), "--seed", "-1"])
        assert "expected a seed from 0 to 4294967295" in capsys.readouterr().err
        return
    elif case == "shipped-name":
        # (saved as tarot.npz, --deck tarot would still mean the shipped deck)
        make_deck(folder)
        extra = ["--name", "tarot"]
        want = "the name 'tarot' is a shipped deck's (--deck tarot always means that one)"
    elif case == "shipped-folder-name":
        make_deck(folder)
        meta = json.loads((folder / "deck.json").read_text())
        (folder / "deck.json").write_text(json.dumps(dict(meta, name="decktet")))
        want = "the name 'decktet' is a shipped deck's"
    else:
        make_deck(folder)
        extra = ["--name", "../escape"]
        want = "cannot be a file name"
    rc = main(["enroll-deck", str(folder), "--per-card", "2", *extra])
    err = capsys.readouterr().err
    assert rc == 2
    assert err.startswith("companion enroll-deck: error: ") and want in err, err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "data").exists()


def test_load_gallery_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    with pytest.raises(GalleryError, match="no enrolled deck 'rws'.*no deck is enrolled"):
        load_gallery("rws")
    with pytest.raises(GalleryError, match="does not exist"):
        load_gallery(tmp_path / "nowhere.npz")
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"PK\x03\x04 truncated")
    with pytest.raises(GalleryError, match="bad.npz"):
        load_gallery(bad)
    # a gallery cut short says how to mend it; a device is not said to be missing
    bad.write_bytes((ROOT / "models" / "cards-decktet.npz").read_bytes()[:3000])
    with pytest.raises(GalleryError, match="damaged: enroll the deck again"):
        load_gallery(bad)
    with pytest.raises(GalleryError, match="'/dev/null' is not a file"):
        load_gallery(Path("/dev/null"))
    with pytest.raises(GalleryError, match="cannot be a file name"):
        gallery_path("a/b")


def test_an_enrolled_deck_is_found_by_its_folder_or_by_its_name_beside_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After ``enroll-deck my-deck``, ``--deck my-deck`` run beside that folder, and
    ``--deck PATH/my-deck``, both mean the gallery enrolled from it (before: "a folder of
    card images, not a gallery: enroll it first"); another folder is still refused."""
    from vision.cards.identify import enroll
    from vision.pipeline import load_deck_gallery

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    deck = make_deck(tmp_path / "my-deck")
    enroll(deck, per_card=2, seed=1).save(gallery_path("my-deck"))
    monkeypatch.chdir(tmp_path)
    assert load_deck_gallery("my-deck").deck_name == "glyphs"
    assert load_deck_gallery(str(deck)).deck_name == "glyphs"
    assert load_deck_gallery("./my-deck").deck_name == "glyphs"
    other = make_deck(tmp_path / "elsewhere" / "other-deck")
    with pytest.raises(GalleryError, match="is a folder of card images, not a gallery"):
        load_deck_gallery(str(other))
    # a folder with no images, or no name at all, is not called a folder of card images
    (tmp_path / "empty").mkdir()
    with pytest.raises(GalleryError, match="is a folder with no card images in it"):
        load_deck_gallery(str(tmp_path / "empty"))
    with pytest.raises(GalleryError, match="the deck's name is empty"):
        load_deck_gallery("")
    # a folder enrolled under another name is found by its bare name too
    enroll(other, per_card=2, seed=1).save(gallery_path("renamed"))
    monkeypatch.chdir(other.parent)
    assert load_deck_gallery("other-deck").deck_name == "glyphs"


def test_a_folder_enrolled_twice_means_its_latest_gallery_and_a_changed_one_is_said(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    """Two cards' images swapped by mistake, enrolled as "aaa-first-try", mended and enrolled
    again as "zzz-fixed": ``--deck FOLDER`` is the mended one (it was the first by name),
    with a warning naming both; images changed since the latest enrolment are said."""
    from vision.cards.identify import enroll
    from vision.pipeline import load_deck_gallery

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    deck = make_deck(tmp_path / "my-deck")
    enroll(deck, per_card=2, seed=1).save(gallery_path("aaa-first-try"))
    enroll(deck, per_card=2, seed=2).save(gallery_path("zzz-fixed"))
    os.utime(gallery_path("aaa-first-try"), (1e9, 1e9))
    os.utime(gallery_path("zzz-fixed"), (2e9, 2e9))
    for p in deck.iterdir():
        os.utime(p, (1.5e9, 1.5e9))
    with caplog.at_level("WARNING", logger="vision.pipeline"):
        gallery = load_deck_gallery(str(deck))
    from vision.cards.galleries import load_gallery

    latest = load_gallery(gallery_path("zzz-fixed")).protos
    assert not np.array_equal(latest, load_gallery(gallery_path("aaa-first-try")).protos)
    assert np.array_equal(gallery.protos, latest)
    words = caplog.text
    assert "enrolled 2 times; the latest, 'zzz-fixed', is used (not 'aaa-first-try')" in words
    assert "changed since" not in words
    # the first one copied back from a backup (its file new, its enrolment not): the same
    os.utime(gallery_path("aaa-first-try"), (3e9, 3e9))
    assert np.array_equal(load_deck_gallery(str(deck)).protos, latest)
    caplog.clear()
    os.utime(deck / f"{IDS[0]}.png", (2.5e9, 2.5e9))
    with caplog.at_level("WARNING", logger="vision.pipeline"):
        load_deck_gallery(str(deck))
    assert (f"{IDS[0]}.png changed since the gallery 'zzz-fixed' was enrolled from it: run "
            f"'companion enroll-deck {deck} --name zzz-fixed' again") in caplog.text


def test_two_cards_that_look_alike_are_warned_of(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    folder = make_deck(tmp_path / "deck")
    assert main(["enroll-deck", str(folder), "--per-card", "8", "--seed", "3"]) == 0
    assert "look alike" not in capsys.readouterr().err
    # one image saved under two names
    shutil.copy(folder / f"{IDS[1]}.png", folder / f"{IDS[4]}.png")
    assert main(["enroll-deck", str(folder), "--per-card", "8", "--seed", "3",
                 "--name", "twins"]) == 0
    err = capsys.readouterr().err
    assert f"warning: {IDS[1]} and {IDS[4]} look alike to the gallery" in err, err
    assert err.count("look alike") == 1


def test_out_never_writes_over_a_scan_or_a_file_of_another_kind(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    deck = make_deck(tmp_path / "scans")
    scan = deck / f"{IDS[0]}.png"
    before = scan.read_bytes()
    assert main(["enroll-deck", str(deck), "--out", str(scan), "--no-progress"]) == 2
    assert "is one of the files it is made from" in capsys.readouterr().err
    assert scan.read_bytes() == before
    photo = tmp_path / "holiday.npz"
    photo.write_bytes(b"not a gallery")
    assert main(["enroll-deck", str(deck), "--out", str(photo), "--no-progress"]) == 2
    assert "exists and is not a card gallery" in capsys.readouterr().err
    assert photo.read_bytes() == b"not a gallery"
    # a second deck enrolled under the first one's name says whose gallery it replaces
    assert main(["enroll-deck", str(deck), "--per-card", "2", "--no-progress"]) == 0
    other = make_deck(tmp_path / "elsewhere" / "scans")
    capsys.readouterr()
    assert main(["enroll-deck", str(other), "--per-card", "2", "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert f"replacing the card gallery {gallery_path('glyphs')}" in err, err
    assert f"(enrolled from {deck.resolve()})" in err
    assert "--out" not in err
    # a gallery kept in the deck's own folder is no card of it: enrolled again, replaced
    inside = deck / "glyphs.npz"
    for _ in range(2):
        assert main(["enroll-deck", str(deck), "--per-card", "2", "--no-progress",
                     "--out", str(inside)]) == 0, capsys.readouterr().err


def test_an_enrolled_deck_of_short_cards_is_boxed_by_the_short_cards_detector(
        tmp_path: Path) -> None:
    """A detector learns the cards' shape, not their art: a deck of 63.5 x 89 mm cards
    enrolled from a folder is boxed by the Decktet's detector (the tarot's boxed a Decktet
    printing 9% long, and observe then called the mat file wrong); tarot-size cards keep the
    tarot's."""
    from models import model_path
    from vision.cards.identify import enroll
    from vision.pipeline import TablePipeline

    short = enroll(make_deck(tmp_path / "short"), per_card=2, seed=1)
    assert short.card_size_mm == CARD_MM
    with TablePipeline(deck=short, threads=1, pyramid_process=False) as p:
        assert Path(p.card_detector.path) == model_path("cards-obb-decktet.onnx")
    long = make_deck(tmp_path / "long")
    meta = json.loads((long / "deck.json").read_text())
    (long / "deck.json").write_text(json.dumps(dict(meta, card_size_mm=[70, 120])))
    with TablePipeline(deck=enroll(long, per_card=2, seed=1), threads=1,
                       pyramid_process=False) as p:
        assert Path(p.card_detector.path) == model_path("cards-obb.onnx")


def test_a_deck_of_some_of_the_tarots_cards_is_warned_of() -> None:
    """A deck.json listing some of the tarot's cards (or the Decktet's): the gallery knows
    only those, and reads any other face up as one of them or as a back, so enroll-deck
    says how many are left out. A whole deck, or a deck of its own, is not warned of."""
    from companion.commands.enroll_deck import _left_out
    from vision.synth.deck import DECKTET_IDS, TAROT_IDS

    assert _left_out(TAROT_IDS[:8]) == "70 of the tarot's 78 cards are not enrolled"
    assert _left_out(DECKTET_IDS[1:]) == "1 of the Decktet's 45 cards is not enrolled"
    assert _left_out(TAROT_IDS) == "" and _left_out(DECKTET_IDS) == "" and _left_out(IDS) == ""


def test_a_deck_json_saved_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    """Windows' Notepad starts UTF-8 with a byte-order mark: a mat file so saved was read,
    a deck.json refused ("Unexpected UTF-8 BOM"). Both are read alike now; text that is not
    JSON still says so, naming the file."""
    from vision.synth.deck import DeckError, load_deck

    folder = make_deck(tmp_path / "deck")
    meta = (folder / "deck.json").read_text()
    (folder / "deck.json").write_bytes(b"\xef\xbb\xbf" + meta.encode("utf-8"))
    assert load_deck(folder).name == "glyphs"
    (folder / "deck.json").write_text("{cards: [")
    with pytest.raises(DeckError, match=r"deck file .*deck\.json is not valid JSON"):
        load_deck(folder)


def test_a_gallery_folder_that_cannot_be_written_is_said_before_enrolling(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """XDG_DATA_HOME set wrong: the gallery's folder cannot be made. That was said only
    after every card was augmented and the projection fitted (35 s for a tarot deck)."""
    import vision.cards.identify as identify

    def never(*args: object, **kw: object) -> None:
        raise AssertionError("enrolled before the gallery's folder was checked")

    monkeypatch.setattr(identify, "enroll", never)
    (tmp_path / "afile").write_text("x")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "afile" / "data"))
    rc = main(["enroll-deck", str(make_deck(tmp_path / "deck")), "--per-card", "2"])
    err = capsys.readouterr().err
    assert rc == 2 and "cannot write gallery" in err and "its folder cannot be made" in err, err


def test_a_deck_folder_given_as_dot_is_named_after_the_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`cd my-deck && companion enroll-deck .` said "the deck's name '' cannot be a file
    name": the folder's own name is the deck's."""
    from vision.synth.deck import load_deck

    folder = tmp_path / "my-deck"
    make_deck(folder)
    meta = json.loads((folder / "deck.json").read_text())
    meta.pop("name", None)
    (folder / "deck.json").write_text(json.dumps(meta))
    monkeypatch.chdir(folder)
    assert load_deck(".").name == "my-deck"
    monkeypatch.chdir(folder / "..")
    assert load_deck("my-deck/.").name == "my-deck"
    # a link to the folder keeps its own name, as it did
    (tmp_path / "my-tarot").symlink_to(folder)
    assert load_deck("my-tarot").name == "my-tarot"


@pytest.mark.parametrize("name", [None, 5, ["glyphs"]])
def test_a_deck_json_name_that_is_not_text_is_refused(tmp_path: Path, name: object) -> None:
    """deck.json's "name": null enrolled the deck as 'None' (decks/None.npz), and 5 as '5':
    a name that is not text is refused, naming the file and what it holds."""
    from vision.synth.deck import DeckError, load_deck

    folder = make_deck(tmp_path / "deck")
    meta = json.loads((folder / "deck.json").read_text())
    meta["name"] = name
    (folder / "deck.json").write_text(json.dumps(meta))
    with pytest.raises(DeckError, match=r"deck file .*deck\.json: name must be the deck's "
                                        r"name in quotes .*got " + re.escape(json.dumps(name))):
        load_deck(folder)


def test_a_file_where_the_gallerys_folder_must_be_is_named(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--out notes.txt/deck.npz`` said "its folder cannot be made (File exists)": the file
    in the way is named, before any card is enrolled."""
    notes = tmp_path / "notes.txt"
    notes.write_text("x")
    rc = main(["enroll-deck", str(make_deck(tmp_path / "deck")), "--per-card", "2",
               "--out", str(notes / "deck.npz")])
    err = capsys.readouterr().err
    assert rc == 2 and f"{str(notes)!r} is a file, not a folder" in err, err
