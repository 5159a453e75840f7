"""The table pipeline (vision/pipeline.py) on rendered sample frames with known truth.

Cards come from the :class:`TruthBoxes` test double (true boxes, long axis mod 180) and,
where the real detector is shipped, from it as well; ids, art directions and
positions are checked against the truth, the records against the spec.
"""

from __future__ import annotations

import math
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from calibration.mat import DEFAULT_MAT, load_mat
from calibration.table import Intrinsics
from companion.core.observation import Observation

cv2 = pytest.importorskip("cv2")

from vision_truth import SAMPLES, TruthBoxes, image_key, truth_of  # noqa: E402
from vision.cards.identify import GalleryError  # noqa: E402
from calibration.images import truncation  # noqa: E402
from vision.pipeline import (ImageError, TablePipeline, angle_diff_deg,  # noqa: E402
                             expand_images, load_deck_gallery, read_image)

FRAMES = ["zarcana/0005.jpg", "zarcana/0011.jpg", "zarcana/0023.jpg"]


def _match(records: list[dict], truths: list[dict], key: str, radius: float
           ) -> list[tuple[dict, dict]]:
    """Greedy nearest pairs within ``radius`` mm."""
    pairs = sorted(((math.dist(r[key], t[key]), i, j) for i, r in enumerate(records)
                    for j, t in enumerate(truths)), key=lambda x: x[0])
    used_r: set[int] = set()
    used_t: set[int] = set()
    out = []
    for d, i, j in pairs:
        if d <= radius and i not in used_r and j not in used_t:
            used_r.add(i)
            used_t.add(j)
            out.append((records[i], truths[j]))
    return out


@pytest.fixture(scope="module")
def fake() -> TruthBoxes:
    return TruthBoxes()


@pytest.fixture(scope="module")
def pipeline(fake):
    with TablePipeline(mat=DEFAULT_MAT, deck="tarot", card_detector=fake,
                       pyramid_finder=fake) as p:
        yield p


def test_a_frame_whose_blur_cannot_be_measured_says_nothing_of_it(pipeline, fake,
                                                                   monkeypatch):
    """Every marker edge too faint to read (a dim table): no ``blurred`` word, as before
    the record gave ``px_per_mm`` (which still comes from the markers seen), rather than a
    "sharp" the live window would then announce."""
    import vision.pipeline as vp

    path = SAMPLES / FRAMES[0]
    fake.add(path)
    monkeypatch.setattr(vp, "edge_blur_px", lambda *a: None)
    pipeline.forget_calibration()
    record = pipeline.observe_file(path)
    assert "blurred" not in record and "edge_blur_px" not in record["calibration"]
    assert record["calibration"]["px_per_mm"] > 0.3


#: Even from the true boxes, a card's centre is where the pipeline fits it to the card's edges
#: in the image (vision/cards/fit.py), which lie a millimetre or two from the rendered truth
#: (the calibration's error, a card's border lines): a box left 5 mm off still fails.
CARD_TOL_MM = 4.0


def _check_cards(record: dict, truth: dict, tol_mm: float = CARD_TOL_MM, max_flipped: int = 0
                 ) -> None:
    want = [c for c in truth["cards"] if c.get("in_frame", True)]
    got = record["cards"]
    pairs = _match(got, want, "center_mm", 25.0)
    assert len(pairs) == len(want) == len(got), (record["image"], len(got), len(want))
    flipped = []
    for r, t in pairs:
        assert r["id"] == t["id"], (record["image"], t["center_mm"])
        assert math.dist(r["center_mm"], t["center_mm"]) <= tol_mm
        assert r["face_up"] == (t["id"] != "back")
        if r["face_up"]:
            d = angle_diff_deg(r["angle_deg"], t["angle_deg"])
            assert d < 10.0 or d > 170.0, (r, t["angle_deg"])
            if r.get("art_symmetric"):
                # art that looks the same both ways up: the long axis, in [0, 180)
                assert 0.0 <= r["angle_deg"] < 180.0
            elif d > 170.0:
                flipped.append(r["id"])
        elif r.get("art_symmetric"):
            # a back drawn alike both ways up (the tarot's here): the long axis
            d = angle_diff_deg(r["angle_deg"], t["angle_deg"])
            assert (d < 10.0 or d > 170.0) and 0.0 <= r["angle_deg"] < 180.0, (r, t)
        else:
            # a back with a top (the Decktet's): its angle points to it
            assert angle_diff_deg(r["angle_deg"], t["angle_deg"]) < 10.0, (r, t["angle_deg"])
        assert 0.0 <= r["confidence"] <= 1.0
    assert len(flipped) <= max_flipped, flipped


def test_a_picture_too_small_to_hold_a_table_is_refused_by_the_pipeline(pipeline) -> None:
    """A 1x1 placeholder or a thumbnail was only refused by `companion observe`; through the
    pipeline (a live camera's frame, the demo's) it was read as a table with no colour and
    no marker. The pipeline itself refuses it, naming the picture and its size."""
    for h, w in ((1, 1), (40, 60), (63, 640)):
        with pytest.raises(ImageError, match=f"tiny.jpg: {w} x {h} pixels is too small to "
                                             "hold a table"):
            pipeline.observe(np.zeros((h, w, 3), np.uint8), "tiny.jpg")


@pytest.mark.parametrize("frame", FRAMES)
def test_sample_frames_ids_positions_and_art_direction(pipeline, fake, frame):
    path = SAMPLES / frame
    fake.add(path)
    record = pipeline.observe_file(path)
    Observation.from_dict(record)   # the spec's record, every field valid
    assert record["image"] == str(path)
    assert record["calibrated"] is True
    assert record["calibration"]["markers_seen"] == [0, 1, 2, 3]
    assert record["calibration"]["reprojection_mm"] < 3.0
    # the sample game's frames are sharp: the markers' edges say so
    assert record["calibration"]["edge_blur_px"] < 1.0 and record["blurred"] is False
    assert set(record["timings_ms"]) >= {"read", "calibrate", "sharpness", "cards", "identify",
                                         "pyramids", "total"}
    truth = truth_of(path)
    _check_cards(record, truth)
    # the pyramid stage's finds (here the truth, from the test double) pass into the record
    assert len(record["pyramids"]) == len(truth["pyramids"])
    for p in record["pyramids"]:
        assert len(p["base_center_px"]) == 2


def test_the_pyramid_finder_is_handed_a_calibration_that_says_how_sharp_the_frame_is() -> None:
    """The pipeline reads the marker edges before it sends the frame to the pyramid finder,
    which reads a blurred frame its own way (vision/pyramids/find.py, BLURRED_VERIFY_MIN)."""
    from calibration.table import Calibration
    from test_sharpness import _table

    class Spy(TruthBoxes):
        def __init__(self) -> None:
            super().__init__()
            self.calibs: list[Calibration] = []

        def find(self, image: np.ndarray, calib: Calibration) -> list[dict]:
            self.calibs.append(calib)
            return super().find(image, calib)

    spy = Spy()
    with TablePipeline(mat=DEFAULT_MAT, deck="tarot", card_detector=spy,
                       pyramid_finder=spy) as pipeline:
        for sigma, blurred in ((0.0, False), (1.6, True)):
            image, _ = _table(blur_sigma=sigma)
            record = pipeline.observe(image, f"sigma {sigma}")
            seen = spy.calibs[-1]
            assert record["blurred"] is blurred and seen.blurred is blurred
            assert seen.edge_blur_px == pytest.approx(record["calibration"]["edge_blur_px"],
                                                      abs=0.01)
            assert pipeline.last_calibration is seen
    assert len(spy.calibs) == 2


def test_pyramids_from_the_shipped_finder():
    """The default pyramid stage (vision.pyramids) through the pipeline: valid spec pyramids,
    most true ones found with their colour."""
    from models import ModelError

    path = SAMPLES / "zarcana/0023.jpg"
    double = TruthBoxes()
    double.add(path)
    try:
        p = TablePipeline(deck="tarot", card_detector=double)
    except ModelError as exc:
        pytest.skip(f"the pyramid finder's models are not shipped yet: {exc}")
    with p:
        record = p.observe_file(path)
    Observation.from_dict(record)
    truth = truth_of(path)
    pairs = _match(record["pyramids"], truth["pyramids"], "base_center_mm", 12.0)
    assert len(pairs) >= len(truth["pyramids"]) // 2
    assert all(r["color"] == t["color"] for r, t in pairs)


def test_corners_in_image_pixels_with_the_cameras_intrinsics():
    """With the lens known, the reported card corners land on the true (distorted) pixel
    corners; the art's first corner is its top-left."""
    path = SAMPLES / "zarcana/0005.jpg"
    image = read_image(path)
    truth = truth_of(path)
    cam = truth["camera"]
    intr = Intrinsics(np.array(cam["K"], float), np.array(cam["dist"], float))
    double = TruthBoxes()   # the detector sees the undistorted copy of the frame
    double.fallback = truth
    with TablePipeline(deck="tarot", intrinsics=intr, card_detector=double,
                       pyramid_finder=double, threads=1) as p:
        record = p.observe(image, "frame")
    assert record["calibration"]["intrinsics"] is True
    assert record["timings_ms"]["undistort"] >= 0.0
    _check_cards(record, truth)
    for r, t in _match(record["cards"], truth["cards"], "center_mm", 5.0):
        if t["id"] == "back":
            continue
        err = np.abs(np.array(r["corners_px"]) - np.array(t["corners_px"])).max()
        assert err < 3.0, (t["id"], err)
    for r, t in _match(record["pyramids"], truth["pyramids"], "base_center_mm", 1.0):
        # a lying pyramid's truth pixel is that of its raised base square, not its contact
        # face's centroid on the table, so only upright ones compare
        if t["upright"]:
            assert math.dist(r["base_center_px"], t["base_center_px"]) < 3.0


def test_decktet_table_with_the_shipped_decktet_gallery(fake):
    path = SAMPLES / "decktet-table/0000.jpg"
    fake.add(path)
    with TablePipeline(mat=load_mat(path.parent / "mat.json"), deck="decktet",
                       card_detector=fake, pyramid_finder=fake) as p:
        assert p.card_size_mm == (63.5, 89.0)
        record = p.observe_file(path)
    truth = truth_of(path)
    # Decktet art is nearly point-symmetric (ranks and suits in opposite corners), and two of
    # this table's cards (the Windfall, the Sea) look the same both ways up: the record
    # says so and gives their long axis; the gallery tells the others' top from their
    # bottom for about 93% of cards (bench/RESULTS.md)
    symmetric = {c["id"] for c in record["cards"] if c.get("art_symmetric")}
    assert symmetric == {"decktet-crown-knots", "decktet-crown-waves"}
    Observation.from_dict(record)
    _check_cards(record, truth, max_flipped=2)


class LongBoxes(TruthBoxes):
    """The true boxes drawn as long as a tarot card's (120 mm) and reaching past one end
    of the card, as the shipped detector, which learnt the tarot, boxes Decktet cards in a
    row: the cut at the box's middle is 15.5 mm off the card."""

    def detect(self, image, calib, mat):
        from vision.detection.cards import CardBoxes

        b = super().detect(image, calib, mat)
        a = np.radians(b.angles_deg)
        way = np.where(np.arange(len(b)) % 2 == 0, 1.0, -1.0)
        off = (120.0 - b.sizes_mm[:, 1]) / 2.0 * way
        centres = b.centers_mm + np.column_stack([np.cos(a), np.sin(a)]) * off[:, None]
        sizes = np.column_stack([b.sizes_mm[:, 0], np.full(len(b), 120.0)])
        return CardBoxes(centres, b.angles_deg, sizes, b.scores)


def test_decktet_cards_in_boxes_too_long_are_read_where_they_lie():
    path = SAMPLES / "decktet-table/0000.jpg"
    boxes = LongBoxes()
    boxes.add(path)
    with TablePipeline(mat=load_mat(path.parent / "mat.json"), deck="decktet",
                       card_detector=boxes, pyramid_finder=boxes) as p:
        record = p.observe_file(path)
    _check_cards(record, truth_of(path), max_flipped=2)


class JitteredBoxes(TruthBoxes):
    """The true boxes moved as far as the shipped detector's usually are (bench/vision.py:
    a median 3.7 mm and 2.3 degrees, 90th percentile 8.6 mm and 7 degrees), seeded."""

    def detect(self, image, calib, mat):
        from vision.detection.cards import CardBoxes

        b = super().detect(image, calib, mat)
        rng = np.random.default_rng(7)
        turn = rng.uniform(3.0, 6.0, len(b)) * rng.choice([-1.0, 1.0], len(b))
        step = rng.uniform(3.0, 6.0, len(b))
        way = rng.uniform(0.0, 2 * math.pi, len(b))
        moved = b.centers_mm + np.column_stack([np.cos(way), np.sin(way)]) * step[:, None]
        return CardBoxes(moved, (b.angles_deg + turn) % 180.0, b.sizes_mm, b.scores)


@pytest.mark.parametrize("frame", FRAMES)
def test_boxes_millimetres_off_are_fitted_back_onto_the_cards(frame):
    # every box 3-6 mm and 3-6 degrees off: the edge fit (vision/cards/fit.py) puts them back
    path = SAMPLES / frame
    jittered = JitteredBoxes()
    jittered.add(path)
    with TablePipeline(mat=DEFAULT_MAT, deck="tarot", card_detector=jittered,
                       pyramid_finder=jittered, threads=1) as p:
        record = p.observe_file(path)
    truth = truth_of(path)
    # the top card of a pile is only named, not placed to the millimetre: the cards under it
    # show edges a few millimetres off on every side, and the fit may take one of them
    _check_cards(record, truth, tol_mm=25.0)
    for r, t in _match(record["cards"], truth["cards"], "center_mm", 25.0):
        if t.get("stack_size", 1) > 1:
            continue
        assert math.dist(r["center_mm"], t["center_mm"]) <= CARD_TOL_MM, (r["id"], t["center_mm"])
        if r["face_up"]:
            d = angle_diff_deg(r["angle_deg"], t["angle_deg"])
            assert min(d, 180.0 - d) < 2.0, (r["id"], d)


def test_a_weak_box_across_two_cards_does_not_become_a_card(real_detector_path):
    # on sample frame 0013 the shipped detector gives a weak box (score 0.37) across two
    # lattice cards and the gap between them; fitted onto the edges around it, its cut read
    # as cups-06 (not on the table) with confidence 0.99 and the demo's referee saw a card
    # change. Weak boxes stay unfitted.
    if real_detector_path is None:
        pytest.skip("models/cards-obb.onnx is not shipped yet")
    path = SAMPLES / "zarcana/0013.jpg"
    with TablePipeline(deck="tarot", pyramid_finder=TruthBoxes(), threads=1) as p:
        record = p.observe_file(path)
    truth = truth_of(path)
    want = [c for c in truth["cards"] if c.get("in_frame", True)]
    pairs = _match(record["cards"], want, "center_mm", 25.0)
    assert len(pairs) == len(record["cards"]) == len(want)
    assert all(r["id"] == t["id"] for r, t in pairs)


def test_no_table_is_a_record_with_the_reason(pipeline, fake):
    blank = np.full((480, 640, 3), 128, np.uint8)
    calls = fake.calls
    record = pipeline.observe(blank, "blank")
    Observation.from_dict(record)
    assert record["calibrated"] is False
    assert "marker" in record["reason"]
    assert record["cards"] == [] and record["pyramids"] == []
    assert fake.calls == calls  # nothing is searched without a table frame


def test_hidden_markers_reuse_the_last_good_calibration(fake):
    path = SAMPLES / "zarcana/0005.jpg"
    image = fake.add(path)
    truth = truth_of(path)
    covered = image.copy()
    for mid in ("0", "1"):   # a hand over two markers
        pts = np.array(truth["markers"][mid]["corners_px"], np.float32)
        c = pts.mean(axis=0)
        cv2.fillConvexPoly(covered, np.round(c + (pts - c) * 1.6).astype(np.int32), (90, 120, 170))
    fake.by_key[image_key(covered)] = truth
    with TablePipeline(deck="tarot", card_detector=fake, pyramid_finder=fake, threads=1) as p:
        cold = p.observe(covered, "covered-first")     # no earlier calibration: from 2 markers
        p.observe(image, "whole")
        warm = p.observe(covered, "covered-after")
    assert warm["calibrated"] is True
    assert warm["calibration"]["markers_seen"] == [2, 3]
    assert warm["calibration"]["markers_assumed"] == [0, 1]
    _check_cards(warm, truth)
    assert cold["calibration"]["markers_seen"] == [2, 3]


def test_a_weak_box_on_bare_table_is_dropped_a_sure_one_kept_unidentified():
    """A box where there is no card: the gallery's table class rejects the patch, and the
    box goes when the detector was unsure of it too; a sure box stays, flagged."""
    path = SAMPLES / "zarcana/0000.jpg"
    image = read_image(path)
    truth = truth_of(path)
    from vision.detection.cards import CardBoxes

    class OneBox:
        def __init__(self, score: float) -> None:
            self.score = score

        def detect(self, image, calib, mat):
            # open table: east of the lattice, between the markers
            return CardBoxes(np.array([[760.0, 320.0]]), np.array([90.0]),
                             np.array([[70.0, 120.0]]), np.array([self.score]))

    occupied = [c["center_mm"] for c in truth["cards"] + truth.get("covered_cards", [])]
    assert all(math.dist(c, (760.0, 320.0)) > 120 for c in occupied)
    with TablePipeline(deck="tarot", card_detector=OneBox(0.4), pyramid_finder=TruthBoxes(),
                       threads=1) as p:
        weak = p.observe(image, "x")
    assert weak["cards"] == []
    assert weak["boxes_dropped"] == 1
    with TablePipeline(deck="tarot", card_detector=OneBox(0.95), pyramid_finder=TruthBoxes(),
                       threads=1) as p:
        sure = p.observe(image, "x")
    assert len(sure["cards"]) == 1 and "boxes_dropped" not in sure
    assert sure["cards"][0]["identified"] is False
    assert sure["cards"][0]["confidence"] < 0.1


@pytest.mark.parametrize("frame", ["zarcana/0005.jpg", "zarcana/0023.jpg"])
def test_real_detector_when_shipped(real_detector_path, frame):
    if real_detector_path is None:
        pytest.skip("models/cards-obb.onnx is not shipped yet")
    path = SAMPLES / frame
    with TablePipeline(deck="tarot", pyramid_finder=TruthBoxes()) as p:
        record = p.observe_file(path)
    Observation.from_dict(record)
    truth = truth_of(path)
    want = [c for c in truth["cards"] if c.get("in_frame", True)]
    pairs = _match(record["cards"], want, "center_mm", 25.0)
    assert len(pairs) >= len(want) - 1
    assert sum(r["id"] == t["id"] for r, t in pairs) >= len(pairs) - 1
    assert all(math.dist(r["center_mm"], t["center_mm"]) < 8.0 for r, t in pairs)


def test_cards_laid_down_south_of_the_mat_are_seen(real_detector_path):
    """The detector's square view shows the table below a landscape mat (its spare side)
    rather than padding: cards a player lays down 100-200 mm off the mat's south edge are
    found and read, as well as the ones on the mat."""
    if real_detector_path is None:
        pytest.skip("models/cards-obb.onnx is not shipped yet")
    from vision.synth.camera import camera_over_mat
    from vision.synth.deck import default_deck_dir, load_deck
    from vision.synth.render import plain_style, render
    from vision.synth.scene import CardPlacement, TableScene

    deck = load_deck(default_deck_dir("rws-tarot"), validate=False)
    cards = [CardPlacement("major-19", (300.0, 300.0), 0.0),
             CardPlacement("cups-03", (600.0, 320.0), 90.0),
             CardPlacement("wands-07", (350.0, 760.0), 90.0),      # 110 mm off the mat
             CardPlacement("swords-12", (560.0, 840.0), 0.0)]      # 190 mm off the mat
    # the whole mat and the table south of it in the frame
    cam = camera_over_mat(DEFAULT_MAT, (1920, 1080), tilt=5.0, target=(450.0, 480.0),
                          card_px=110.0)
    image, truth = render(TableScene(cards=cards), deck, DEFAULT_MAT, cam,
                          plain_style((60, 85, 110), seed=4))
    with TablePipeline(mat=DEFAULT_MAT, deck="tarot", pyramid_finder=TruthBoxes()) as p:
        p.set_camera(Intrinsics(cam.K, cam.dist))
        record = p.observe(image, "south.jpg")
    assert record["calibrated"], record["calibration"]
    pairs = _match(record["cards"], truth["cards"], "center_mm", 25.0)
    assert sorted(t["id"] for r, t in pairs if r["id"] == t["id"]) == sorted(
        c.id for c in cards)
    assert len(record["cards"]) == len(cards)


# --- reading images ------------------------------------------------------------------------


def test_read_image_errors_name_the_file(tmp_path):
    good = (SAMPLES / "zarcana/0000.jpg").read_bytes()
    cases = {
        "missing.jpg": None,
        "empty.jpg": b"",
        "text.jpg": b"this is not an image at all\n" * 10,
        "cut.jpg": good[: len(good) // 2],
        "cut.png": cv2.imencode(".png", np.zeros((50, 50, 3), np.uint8))[1].tobytes()[:-30],
    }
    words = {"missing.jpg": "no such file", "empty.jpg": "empty", "text.jpg": "not an image",
             "cut.jpg": "truncated JPEG", "cut.png": "truncated PNG"}
    for name, data in cases.items():
        p = tmp_path / name
        if data is not None:
            p.write_bytes(data)
        with pytest.raises(ImageError) as exc:
            read_image(p)
        assert str(p) in str(exc.value) and words[name] in str(exc.value), exc.value
    with pytest.raises(ImageError, match="folder"):
        read_image(tmp_path)
    (tmp_path / "link.jpg").symlink_to(tmp_path / "gone.jpg")
    with pytest.raises(ImageError, match=r"link\.jpg: a link to .*gone\.jpg, which does not "
                                         r"exist"):
        read_image(tmp_path / "link.jpg")


def test_truncation_check():
    good = (SAMPLES / "zarcana/0000.jpg").read_bytes()
    assert truncation(good) == ""
    assert truncation(good + b"\x00" * 100 + b"trailing metadata") == ""
    assert "truncated JPEG" in truncation(good[:-2])
    assert "truncated JPEG" in truncation(good[:2000])
    png = cv2.imencode(".png", np.zeros((20, 20, 3), np.uint8))[1].tobytes()
    assert truncation(png) == ""
    assert truncation(b"BM some bitmap") == ""


def test_a_phones_motion_photo_is_whole() -> None:
    """Phones save a "motion photo": a whole JPEG with an MP4 video after its end marker.
    The video's bytes may hold FF DA with no FF D9 after it, which once made the file read
    as cut short; its end is found by walking the JPEG from its start."""
    good = (SAMPLES / "zarcana/0005.jpg").read_bytes()
    video = b"\0\0\0\x18ftypmp42\0\0\0\0isommp42\x12\xff\xda" + bytes(range(256)) * 8
    assert truncation(good + video) == ""
    rng = np.random.default_rng(3)
    assert all(truncation(good + rng.integers(0, 256, 30000, np.uint8).tobytes()) == ""
               for _ in range(20))
    img = cv2.imread(str(SAMPLES / "zarcana/0005.jpg"))
    for params in ([cv2.IMWRITE_JPEG_PROGRESSIVE, 1], [cv2.IMWRITE_JPEG_RST_INTERVAL, 4]):
        data = cv2.imencode(".jpg", img, params)[1].tobytes()
        assert truncation(data) == "" and truncation(data + video) == ""
        assert "no end-of-image marker" in truncation(data[:len(data) // 2])
    assert "before its image data starts" in truncation(good[:300])


@pytest.mark.parametrize("ext, params", [(".jpg", []), (".png", []), (".bmp", []),
                                           (".webp", [cv2.IMWRITE_WEBP_QUALITY, 80]),
                                           (".webp", [cv2.IMWRITE_WEBP_QUALITY, 101]),
                                           (".tif", [])])
def test_an_images_size_is_read_from_its_header(ext, params):
    from calibration.images import header_size

    image = np.random.default_rng(0).integers(0, 255, (37, 53, 3), np.uint8)
    assert header_size(cv2.imencode(ext, image, params)[1].tobytes()) == (53, 37)


def test_an_os2_bitmap_is_read_at_its_size(tmp_path):
    """An old OS/2 bitmap's 12-byte header holds 16-bit sizes (read as 32-bit, a 64 x 48
    picture was refused as 31 million pixels wide)."""
    import struct

    w, h = 64, 48
    core = struct.pack("<IHHHH", 12, w, h, 1, 24)
    data = b"BM" + struct.pack("<IHHI", 26 + w * 3 * h, 0, 0, 26) + core + bytes(w * 3 * h)
    (tmp_path / "os2.bmp").write_bytes(data)
    assert read_image(tmp_path / "os2.bmp").shape == (h, w, 3)


def test_a_small_file_that_unpacks_to_too_many_pixels_is_refused_unread(tmp_path):
    """A 2 MB run-length BMP of 16000 x 16000 pixels took two minutes and 13 GB before:
    every format whose header says its size is refused from the header."""
    bmp = bytearray(cv2.imencode(".bmp", np.zeros((4, 4, 3), np.uint8))[1].tobytes())
    bmp[18:22] = (16000).to_bytes(4, "little")
    bmp[22:26] = (-16000).to_bytes(4, "little", signed=True)   # top-down rows
    (tmp_path / "bomb.bmp").write_bytes(bytes(bmp))
    with pytest.raises(ImageError, match=r"16000 x 16000 pixels is more than the companion "
                                         r"reads \(250 megapixels at most\)"):
        read_image(tmp_path / "bomb.bmp")


def test_expand_images_sorted_and_filtered(tmp_path):
    for n in ("b.png", "a.JPG", "c.txt", "d.json", "._a.JPG", ".tmp.jpg", "IMG_2.heic"):
        (tmp_path / n).write_bytes(b"x")
    (tmp_path / "sub").mkdir()
    got = expand_images([tmp_path, tmp_path / "zzz.jpg"])
    # (macOS's ._ shadows and a camera's hidden temporary files are not photos; a HEIC
    # photo is, which the reader says it cannot read)
    assert [p.name for p in got] == ["a.JPG", "b.png", "IMG_2.heic", "zzz.jpg"]
    empty = tmp_path / "sub"
    with pytest.raises(ImageError, match="no images"):
        expand_images([empty])
    # a link of a photo's name that leads nowhere (the photo moved) is taken, for the
    # reader to say so: it was passed over without a word
    (tmp_path / "c.jpg").symlink_to(tmp_path / "gone" / "c.jpg")
    got = expand_images([tmp_path])
    assert [p.name for p in got] == ["a.JPG", "b.png", "c.jpg", "IMG_2.heic"]
    with pytest.raises(ImageError, match=r"c\.jpg: a link to .*gone/c\.jpg, which does not "
                                         r"exist"):
        read_image(got[2])


def test_numbered_frames_are_taken_in_number_order(tmp_path):
    """ffmpeg's %d.jpg numbers frames without leading zeros: 2 comes before 10."""
    for n in ("10.jpg", "2.jpg", "1.jpg", "frame-9.png", "frame-10.png", "Frame-11.png"):
        (tmp_path / n).write_bytes(b"x")
    assert [p.name for p in expand_images([tmp_path])] == [
        "1.jpg", "2.jpg", "10.jpg", "frame-9.png", "frame-10.png", "Frame-11.png"]
    # digits that are not decimal (a circled one, a superscript) are text, and names that
    # differ only in padding or case keep one order
    other = tmp_path / "odd"
    other.mkdir()
    for n in ("①1.jpg", "²2.jpg", "01.jpg", "1.jpg", "A.jpg", "a.jpg"):
        (other / n).write_bytes(b"x")
    assert [p.name for p in expand_images([other])] == [
        "01.jpg", "1.jpg", "A.jpg", "a.jpg", "²2.jpg", "①1.jpg"]


def test_a_damaged_png_and_a_tiff_of_floats_are_said_to_be_so(tmp_path, capfd):
    """A file of a kind that is read, that could not be: its decoder's words go into the
    message (not raw on stderr above it), which says what it is, not that it is no image."""
    png = bytearray(cv2.imencode(".png", np.full((60, 80, 3), 128, np.uint8))[1].tobytes())
    idat = png.index(b"IDAT")
    png[idat + 8:idat + 14] = bytes(6)              # the data's checksum no longer holds
    (tmp_path / "crc.png").write_bytes(bytes(png))
    floats = tmp_path / "floats.tif"
    cv2.imwrite(str(floats), np.full((40, 50), 0.5, np.float64))
    capfd.readouterr()
    for p, kind in ((tmp_path / "crc.png", "PNG"), (floats, "TIFF")):
        try:
            image = read_image(p)
        except ImageError as exc:
            said = str(exc)
        else:
            # this OpenCV reads the TIFF after all: then it is an image like any other
            assert kind == "TIFF" and image.ndim == 3
            continue
        assert said.startswith(f"{p}: a {kind} file that cannot be decoded"), said
        assert "take or copy the picture again" in said and "expected one of" not in said
    assert capfd.readouterr().err == ""
    assert "the decoder: libpng error" in str(pytest.raises(ImageError, read_image,
                                                              tmp_path / "crc.png").value)


def test_another_threads_line_while_an_image_is_decoded_is_passed_on(tmp_path, capfd,
                                                                     monkeypatch):
    """Descriptor 2 is caught while an image decodes: a log line another thread writes
    meanwhile goes on to stderr, not into the image's message, nor nowhere."""
    import calibration.images as images

    real = cv2.imdecode

    def talking(data, flags):
        os.write(2, b"WARNING companion.live.session: camera lost\n")
        return real(data, flags)

    monkeypatch.setattr(images.cv2, "imdecode", talking)
    png = bytearray(cv2.imencode(".png", np.full((60, 80, 3), 128, np.uint8))[1].tobytes())
    png[png.index(b"IDAT") + 8:png.index(b"IDAT") + 14] = bytes(6)
    (tmp_path / "crc.png").write_bytes(bytes(png))
    (tmp_path / "text.jpg").write_bytes(b"not an image at all" * 10)
    cv2.imwrite(str(tmp_path / "good.png"), np.full((30, 40, 3), 90, np.uint8))
    capfd.readouterr()
    for name in ("crc.png", "text.jpg"):
        with pytest.raises(ImageError) as exc:
            read_image(tmp_path / name)
        assert "camera lost" not in str(exc.value)
        assert capfd.readouterr().err.count("camera lost") == 1, name
    assert "libpng" in str(pytest.raises(ImageError, read_image, tmp_path / "crc.png").value)
    capfd.readouterr()
    assert read_image(tmp_path / "good.png").shape == (30, 40, 3)
    assert capfd.readouterr().err.count("camera lost") == 1


def test_heic_photos_are_named_not_passed_over(tmp_path):
    heic = b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic" + bytes(100)
    only = tmp_path / "iphone"
    only.mkdir()
    (only / "IMG_0001.HEIC").write_bytes(heic)
    with pytest.raises(ImageError, match=r"holds no images .*its 1 HEIC photo\(s\) are not: "
                                         r"HEIC/HEIF photos \(an iPhone's default\)"):
        expand_images([only])
    # among JPEGs, in its place: observe answers it with its problem (it was left out of
    # the records with a log line, and the run ended 0)
    shutil.copy(SAMPLES / "zarcana/0005.jpg", only / "IMG_0000.jpg")
    shutil.copy(SAMPLES / "zarcana/0006.jpg", only / "IMG_0002.jpg")
    assert [p.name for p in expand_images([only])] == ["IMG_0000.jpg", "IMG_0001.HEIC",
                                                       "IMG_0002.jpg"]
    # one named, or renamed: said what it is
    (tmp_path / "renamed.jpg").write_bytes(heic)
    for p in (only / "IMG_0001.HEIC", tmp_path / "renamed.jpg"):
        with pytest.raises(ImageError, match="set the camera to \"Most Compatible\""):
            read_image(p)


def test_a_video_given_as_a_picture_is_named_as_one(tmp_path):
    """``observe game.mp4`` said "not an image OpenCV can decode": it says it is a video and
    which command follows one; by name or by its first bytes (an MP4 box, an AVI)."""
    mp4 = b"\x00\x00\x00\x18ftypisom\x00\x00\x02\x00isomiso2" + bytes(200)
    avi = b"RIFF\x00\x10\x00\x00AVI LIST" + bytes(200)
    for name, data in (("game.mp4", bytes(300)), ("clip.bin", mp4), ("old.dat", avi)):
        path = tmp_path / name
        path.write_bytes(data)
        with pytest.raises(ImageError, match=rf"{name}: a video, not a picture: `companion run "
                                             rf"--source .*{name}` follows a game on video"):
            read_image(path)
    # (a picture in the same box format is no video: an AVIF)
    (tmp_path / "photo.avif").write_bytes(b"\x00\x00\x00\x1cftypavif" + bytes(200))
    (tmp_path / "junk.bin").write_bytes(bytes(300))
    for name in ("photo.avif", "junk.bin"):
        with pytest.raises(ImageError, match="not an image OpenCV can decode"):
            read_image(tmp_path / name)


# --- decks -------------------------------------------------------------------------------


def test_shipped_and_named_galleries(tmp_path, monkeypatch):
    tarot = load_deck_gallery("tarot")
    assert tarot.card_size_mm == (70.0, 120.0)
    assert len([c for c in tarot.card_ids if c != "back"]) == 78
    dk = load_deck_gallery("decktet")
    assert dk.card_size_mm == (63.5, 89.0)
    assert "decktet-excuse" in dk.card_ids
    # a path to a gallery file, and an enrolled name in the user data dir
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    from vision.cards.galleries import gallery_path

    dk.save(gallery_path("my-deck"))
    assert load_deck_gallery("my-deck").card_size_mm == (63.5, 89.0)
    assert load_deck_gallery(str(gallery_path("my-deck"))).deck_name == dk.deck_name
    with pytest.raises(GalleryError, match="no enrolled deck 'nope'"):
        load_deck_gallery("nope")
    with pytest.raises(GalleryError, match="is a folder with no card images in it"):
        load_deck_gallery(tmp_path)
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"PK\x03\x04 broken")
    with pytest.raises(GalleryError, match="bad.npz"):
        load_deck_gallery(bad)


def test_pipeline_without_a_mat_calibrates_from_cards():
    from calibration.from_cards import CardCalibrator

    p = TablePipeline(mat=None, card_detector=TruthBoxes(), pyramid_finder=TruthBoxes())
    assert p.no_mat and not p.mat.printed and p.mat.marker_centers() == {}
    assert isinstance(p._calibrator(np.zeros((720, 1280, 3), np.uint8)), CardCalibrator)


def test_missing_detector_model_is_a_model_error(monkeypatch, tmp_path):
    import models
    import vision.detection.cards as cards

    def missing(name: str) -> Path:
        raise models.ModelError(f"model file {name!r} is missing")

    monkeypatch.setattr(cards, "model_path", missing)
    with pytest.raises(models.ModelError, match="cards-obb.onnx"):
        TablePipeline(deck="tarot", pyramid_finder=TruthBoxes())
    corrupt = tmp_path / "cards-obb.onnx"
    corrupt.write_bytes(b"\x08\x01garbage")
    monkeypatch.setattr(cards, "model_path", lambda name: corrupt)
    with pytest.raises(models.ModelError, match="cannot be loaded") as bad:
        TablePipeline(deck="tarot", pyramid_finder=TruthBoxes())
    # one line that names the detector and the file, not onnxruntime's whole report
    said = str(bad.value)
    assert said.startswith("card detector model file") and str(corrupt) in said
    assert "\n" not in said and len(said) < 300 + len(str(corrupt))


def test_a_refined_cut_across_the_axis_wrap_keeps_the_art_direction():
    """A card the gallery cannot name at first is cut again at turned angles; a cut turned
    across 0/180 degrees (axis 179 -> 183) shows the art the other way up from one at 3
    degrees, so its reading must keep the angle it was cut at (a card at art angle 0 came
    out at 183 while the axis was folded back into 0..180)."""
    from calibration.table import Calibration
    from vision.cards.identify import CardMatch
    from vision.detection.cards import CardBoxes
    from vision.synth.deck import shared_dir

    sd = shared_dir()
    if sd is None or not (sd / "decks" / "rws-tarot").is_dir():
        pytest.skip("shared/decks not found (set ARCANA_SHARED)")
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from test_card_identify import _render

    image, truth, cam = _render(sd / "decks" / "rws-tarot",
                                [("swords-12", (450.0, 300.0), 0.0, True)], seed=3)
    calib = Calibration(True, H=np.linalg.inv(cam.table_homography()))

    class WeakBox:  # weak: not fitted to edges, so the cut starts at exactly this axis
        def detect(self, image, calib, mat):
            return CardBoxes(np.array([[451.0, 301.0]]), np.array([179.0]),
                             np.array([[70.0, 120.0]]), np.array([0.5]))

    with TablePipeline(deck="tarot", card_detector=WeakBox(), pyramid_finder=TruthBoxes(),
                       threads=1, card_net=False) as p:
        real = p.gallery.identify_batch
        calls = []

        def unsure_at_first(crops):
            found = real(crops)
            calls.append(len(crops))
            if len(calls) > 1:
                return found
            # the first reading: not sure of the card (the refinement's trigger)
            return [CardMatch(None, m.best_id, m.rotated, 0.3, 0.1, 0.0, m.distance)
                    for m in found]

        p.gallery.identify_batch = unsure_at_first
        cards, _, refined = p._cards(image, calib, {})
    assert refined == 1 and len(cards) == 1
    assert cards[0]["id"] == "swords-12"
    assert angle_diff_deg(cards[0]["angle_deg"], 0.0) < 10.0, cards[0]["angle_deg"]
