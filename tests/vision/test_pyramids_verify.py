"""The pyramid finder's second opinion (pyramids-verify.onnx): its features, which candidates
it is asked about, the shipped file, bad files, and how the finder takes its answer."""

from __future__ import annotations

import numpy as np
import pytest

from vision.pyramids.classifier import COLOR_CLASSES
from vision.pyramids.verify import DOUBT_MAX_NONE, FEATURES, doubtful, features


def _probs(rows: list[dict[str, float]], names: tuple[str, ...] = COLOR_CLASSES) -> np.ndarray:
    p = np.zeros((len(rows), len(names)), np.float32)
    for i, row in enumerate(rows):
        for name, v in row.items():
            p[i, names.index(name)] = v
    return p


def test_features_follow_the_spec_colour_order_whatever_the_model_says():
    shuffled = tuple(reversed(COLOR_CLASSES))
    p = _probs([{"none": 0.25, "clear": 0.75}], shuffled)
    f = features(p, shuffled, np.array([0.6]), np.array([True]))
    assert f.shape == (1, len(FEATURES)) and f.dtype == np.float32
    assert f[0, FEATURES.index("p_none")] == pytest.approx(0.25)
    assert f[0, FEATURES.index("p_clear")] == pytest.approx(0.75)
    assert f[0, FEATURES.index("heat")] == pytest.approx(0.6)
    assert f[0, FEATURES.index("from_heat")] == 1.0


def test_features_refuse_mismatched_inputs_by_shape():
    p = _probs([{"none": 1.0}, {"red": 1.0}])
    with pytest.raises(ValueError, match="2 probability rows, 1 heats"):
        features(p, COLOR_CLASSES, np.array([0.1]), np.array([False, False]))
    with pytest.raises(ValueError, match="expected columns"):
        features(p[:, :5], COLOR_CLASSES[:5], np.zeros(2), np.zeros(2))


def test_doubtful_candidates_are_light_black_or_the_heat_maps_own():
    rows = [{"none": 0.3, "white": 0.7},                      # light: asked
            {"none": 0.3, "black": 0.7},                      # black: asked
            {"none": 0.3, "red": 0.7},                        # a hue from the colour table
            {"none": 0.3, "red": 0.7},                        # a hue the heat map proposed
            {"none": DOUBT_MAX_NONE + 0.05, "clear": 0.05},   # nearly sure it is nothing
            {"none": DOUBT_MAX_NONE + 0.05, "clear": 0.05},   # ... but the heat map's own
            {"none": 0.6, "yellow": 0.1, "clear": 0.3}]       # best colour decides
    from_heat = np.array([False, False, False, True, False, True, False])
    got = doubtful(_probs(rows), COLOR_CLASSES, from_heat)
    assert got.tolist() == [True, True, False, True, False, True, True]
    assert doubtful(np.zeros((0, len(COLOR_CLASSES))), COLOR_CLASSES,
                    np.zeros(0, bool)).shape == (0,)


def test_the_shipped_verifier_loads_and_answers_per_patch(monkeypatch):
    pytest.importorskip("onnxruntime")
    from models import model_path
    from vision.pyramids.verify import VERIFY_MODEL, Verifier

    v = Verifier(model_path(VERIFY_MODEL))
    patches = np.full((3, 64, 64, 3), 180, np.uint8)
    f = features(_probs([{"none": 0.9, "white": 0.1}] * 3), COLOR_CLASSES, np.zeros(3),
                 np.ones(3, bool))
    p = v.p_pyramid(patches, f)
    assert p.shape == (3,) and np.all((p >= 0) & (p <= 1))
    # a blank grey patch the heat map is cold on, that the colour classifier calls nothing
    assert float(p.max()) < 0.5
    assert v.p_pyramid(patches[:0], f[:0]).shape == (0,)
    # a patch whose answer is not clear is read as cut and mirrored, and the two averaged:
    # a patch and its mirror image get the same answer (a single read of noise would not)
    import vision.pyramids.verify as verify

    rng = np.random.default_rng(5)
    odd = rng.integers(0, 255, (2, 64, 64, 3), np.uint8)
    pair = (np.concatenate([odd, odd[:, :, ::-1]]), np.concatenate([f[:2], f[:2]]))
    monkeypatch.setattr(verify, "MIRROR_BAND", (-np.inf, np.inf))
    both = v.p_pyramid(*pair)
    assert np.allclose(both[:2], both[2:], atol=1e-5)
    monkeypatch.setattr(verify, "MIRRORED", False)
    once = v.p_pyramid(*pair)
    # compared as logits: noise is far from a pyramid, so both reads are near p = 0
    logit = np.log(once) - np.log1p(-once)
    assert not np.allclose(logit[:2], logit[2:], atol=0.1)
    # a clear answer (outside MIRROR_BAND) is the single read
    monkeypatch.setattr(verify, "MIRRORED", True)
    monkeypatch.setattr(verify, "MIRROR_BAND", (np.inf, np.inf))
    assert np.array_equal(v.p_pyramid(*pair), once)
    with pytest.raises(ValueError, match="expected shape"):
        v.p_pyramid(patches, f[:, :3])


def test_bad_verifier_files_are_named(tmp_path):
    pytest.importorskip("onnxruntime")
    from models import ModelError, model_path
    from vision.pyramids.verify import Verifier

    junk = tmp_path / "pyramids-verify.onnx"
    junk.write_bytes(b"not a model")
    with pytest.raises(ModelError, match="pyramids-verify.onnx"):
        Verifier(junk)
    # a model file of another kind (the heat map): its inputs are named
    with pytest.raises(ModelError, match="not a verifier"):
        Verifier(model_path("pyramids-heat.onnx"))


def test_the_finder_takes_a_doubtful_candidate_on_the_second_opinion(tarot, finder):
    """A white pyramid the thresholds alone would turn away (the colour classifier unsure, the
    heat cool) is taken when the verifier is sure, and a candidate the thresholds would take
    is turned away when it is not."""
    from vision.pyramids.colors import BACKGROUND
    from vision.pyramids.find import VERIFY_MIN
    from vision.pyramids.proposals import Candidate

    from test_pyramids_heat import _one_pyramid_read

    look, where, up, p_how = _one_pyramid_read(tarot, finder, "white", 2)
    cand = Candidate((float(where[0]), float(where[1])), BACKGROUND, 0.0, "heat")
    p_what = np.zeros(len(COLOR_CLASSES), np.float32)
    p_what[finder.what.column("none")] = 0.4
    p_what[finder.what.column("white")] = 0.6
    assert finder._read(look, cand, p_what, p_how, up, 0.1) is None      # thresholds alone
    got = finder._read(look, cand, p_what, p_how, up, 0.1, VERIFY_MIN + 0.2)
    assert got is not None and got.color == "white" and got.pips == 2
    assert got.extra["p_pyramid"] == pytest.approx(VERIFY_MIN + 0.2, abs=1e-3)
    sure = p_what.copy()
    sure[finder.what.column("none")], sure[finder.what.column("white")] = 0.0, 1.0
    assert finder._read(look, cand, sure, p_how, up, 0.9) is not None    # thresholds alone
    assert finder._read(look, cand, sure, p_how, up, 0.9, VERIFY_MIN - 0.2) is None


def test_a_busy_table_is_one_with_enough_sure_pyramids():
    """Sure: taken by the colour classifier without asking the verifier, or given at least
    BUSY_SURE_P by it; a look is busy from BUSY_SURE of them."""
    from vision.pyramids.find import BUSY_SURE, BUSY_SURE_P, busy_table

    max_none = 0.5
    none = np.full(BUSY_SURE, 0.1)
    unasked = np.full(BUSY_SURE, np.nan)
    assert busy_table(none, unasked, max_none)
    assert not busy_table(none[1:], unasked[1:], max_none)
    # one the colour classifier turned away, unasked: not sure
    turned = none.copy()
    turned[0] = 0.9
    assert not busy_table(turned, unasked, max_none)
    # ... unless the verifier is sure of it
    asked = unasked.copy()
    asked[0] = BUSY_SURE_P
    assert busy_table(turned, asked, max_none)
    asked[0] = BUSY_SURE_P - 0.01
    assert not busy_table(turned, asked, max_none)
    # asked and only fairly sure counts for nothing, whatever the colour classifier said
    assert not busy_table(none, asked, max_none)


def test_on_a_busy_table_a_doubtful_candidate_needs_less_of_the_verifier(tarot, finder):
    """The same white candidate, the verifier between the two floors: turned away on a quiet
    table, taken on a busy one."""
    from vision.pyramids.colors import BACKGROUND
    from vision.pyramids.find import BUSY_VERIFY_MIN, VERIFY_MIN, verify_min
    from vision.pyramids.proposals import Candidate

    from test_pyramids_heat import _one_pyramid_read

    look, where, _, _ = _one_pyramid_read(tarot, finder, "white", 2)
    assert not look.blurred
    assert verify_min(look) == VERIFY_MIN
    assert verify_min(look, busy=True) == BUSY_VERIFY_MIN < VERIFY_MIN
    cand = Candidate((float(where[0]), float(where[1])), BACKGROUND, 0.0, "heat")
    p_what = np.zeros(len(COLOR_CLASSES), np.float32)
    p_what[finder.what.column("none")] = 0.4
    p_what[finder.what.column("white")] = 0.6
    between = (BUSY_VERIFY_MIN + VERIFY_MIN) / 2
    assert finder._first_checks(look, cand, p_what, 0.5, between) is None
    taken = finder._first_checks(look, cand, p_what, 0.5, between, verify_min(look, True))
    assert taken is not None and taken[0] == "white"


def test_the_finder_asks_whether_the_table_is_busy(tarot, finder, monkeypatch):
    """The floor the finder uses follows the count of sure pyramids in the look."""
    from vision.pyramids import find as vf

    from test_pyramids_heat import _light_scene

    image, calib, _ = _light_scene(tarot)
    real = vf.verify_min
    told: list[bool] = []

    def spy(look, busy=False):
        told.append(busy)
        return real(look, busy)

    monkeypatch.setattr(vf, "verify_min", spy)
    monkeypatch.setattr(vf, "BUSY_SURE", 0)
    finder.find(image, calib)
    assert told and all(told)
    told.clear()
    monkeypatch.setattr(vf, "BUSY_SURE", 10 ** 6)
    finder.find(image, calib)
    assert told and not any(told)


def test_a_hue_the_colour_classifier_took_alone_is_dropped_when_the_verifier_calls_it_art(
        tarot, finder, monkeypatch):
    """A red pyramid is not doubtful, so the verifier is asked about it only after the first
    checks: under VERIFY_HUE_MIN it is dropped as card art, at or over it the find stands."""
    from calibration.mat import DEFAULT_MAT
    from calibration.table import Intrinsics, TableCalibrator
    from vision.pyramids.find import VERIFY_HUE_MIN
    from vision.synth.camera import camera_over_mat
    from vision.synth.render import plain_style, render
    from vision.synth.scene import PyramidPlacement, TableScene

    cam = camera_over_mat(DEFAULT_MAT, (1920, 1080), tilt=8.0, yaw=3.0, tilt_dir=200.0)
    scene = TableScene(pyramids=[PyramidPlacement("red", 2, True, (400.0, 300.0))])
    image, truth = render(scene, tarot, DEFAULT_MAT, cam, plain_style((95, 120, 85), seed=3))
    calib = TableCalibrator(DEFAULT_MAT, Intrinsics(cam.K, cam.dist)).calibrate(image)
    asked = []

    def verifier_says(p):
        def p_pyramid(patches, feats):
            asked.append(len(patches))
            return np.full(len(patches), p, np.float32)
        return p_pyramid

    monkeypatch.setattr(finder.verifier, "p_pyramid", verifier_says(VERIFY_HUE_MIN))
    got = finder.find(image, calib)
    assert [(f.color, f.pips) for f in got] == [("red", 2)] and asked
    monkeypatch.setattr(finder.verifier, "p_pyramid", verifier_says(VERIFY_HUE_MIN - 0.01))
    assert finder.find(image, calib) == []


def test_a_candidate_turned_away_unasked_is_taken_when_the_verifier_is_sure(
        tarot, finder, monkeypatch):
    """A red pyramid the colour classifier calls nothing (not doubtful: red is a hue) is
    asked of the verifier after all, and taken when it is at least VERIFY_RECALL_MIN sure."""
    from calibration.mat import DEFAULT_MAT
    from calibration.table import Intrinsics, TableCalibrator
    from vision.pyramids.find import VERIFY_RECALL_MIN
    from vision.synth.camera import camera_over_mat
    from vision.synth.render import plain_style, render
    from vision.synth.scene import PyramidPlacement, TableScene

    cam = camera_over_mat(DEFAULT_MAT, (1920, 1080), tilt=8.0, yaw=3.0, tilt_dir=200.0)
    scene = TableScene(pyramids=[PyramidPlacement("red", 2, True, (400.0, 300.0))])
    image, truth = render(scene, tarot, DEFAULT_MAT, cam, plain_style((95, 120, 85), seed=3))
    calib = TableCalibrator(DEFAULT_MAT, Intrinsics(cam.K, cam.dist)).calibrate(image)
    names = finder.what.names

    def nothing_there(patches):
        p = np.zeros((len(patches), len(names)), np.float32)
        p[:, names.index("none")], p[:, names.index("red")] = 0.97, 0.03
        return p

    monkeypatch.setattr(finder.what, "probs", nothing_there)
    monkeypatch.setattr(finder, "_warm_hue", lambda reads: np.zeros(len(reads.candidates), bool))
    for p, want in ((VERIFY_RECALL_MIN - 0.01, []), (VERIFY_RECALL_MIN, [("red", 2)])):
        monkeypatch.setattr(finder.verifier, "p_pyramid",
                            lambda patches, feats, p=p: np.full(len(patches), p, np.float32))
        assert [(f.color, f.pips) for f in finder.find(image, calib)] == want


def _unsure_red(tarot, finder):
    """(look, candidate, colour probabilities, shape probabilities, up) of a lone red 2-pip
    pyramid proposed by the colour table, the colour classifier's ``none`` 0.1 over SURE."""
    from vision.pyramids.colors import BACKGROUND
    from vision.pyramids.find import SURE
    from vision.pyramids.proposals import Candidate

    from test_pyramids_heat import _one_pyramid_read

    look, where, up, p_how = _one_pyramid_read(tarot, finder, "red", 2)
    cand = Candidate((float(where[0]), float(where[1])), BACKGROUND, 0.0, "color")
    p_what = np.zeros(len(COLOR_CLASSES), np.float32)
    p_what[finder.what.column("none")] = SURE + 0.1
    p_what[finder.what.column("red")] = 1.0 - SURE - 0.1
    return look, cand, p_what, p_how, up


def test_a_hue_short_of_its_silhouette_is_read_when_the_verifier_is_sure(tarot, finder,
                                                                         monkeypatch):
    """A hue whose plastic fills its silhouette less than the finder asks is turned away,
    unless the verifier is at least HUE_IOU_TRUST sure of it."""
    from vision.pyramids.find import HUE_IOU_TRUST

    look, cand, p_what, p_how, up = _unsure_red(tarot, finder)
    got = finder._read(look, cand, p_what, p_how, up, 0.9)
    assert got is not None and got.color == "red" and got.pips == 2
    # as if a neighbour had taken some of its plastic: the IoU it has is too little
    monkeypatch.setattr(finder, "min_iou_hue", got.extra["iou"] + 0.01)
    assert finder._read(look, cand, p_what, p_how, up, 0.9) is None
    assert finder._read(look, cand, p_what, p_how, up, 0.9, p_hue=HUE_IOU_TRUST - 0.01) is None
    again = finder._read(look, cand, p_what, p_how, up, 0.9, p_hue=HUE_IOU_TRUST)
    assert again is not None and (again.color, again.pips) == ("red", 2)


def test_a_hue_with_hardly_any_plastic_seen_is_read_where_verifier_and_heat_agree(
        tarot, finder, monkeypatch):
    """A hue whose silhouette the colour table hardly fills (under a lamp's colour it can
    miss the plastic) is read, whatever its IoU, where the verifier gives it at least
    HUE_HEAT_TRUST and the heat map there is at least HUE_HEAT_TRUST_HEAT; each alone is
    not enough."""
    import vision.pyramids.find as pf

    look, cand, p_what, p_how, up = _unsure_red(tarot, finder)
    # no IoU is enough, and the IoU-backed trusts are out of reach: only this rule is left
    # (HUE_CERTAIN would take this pyramid, whose plastic shows, on the verifier's word alone)
    monkeypatch.setattr(finder, "min_iou_hue", 1.01)
    monkeypatch.setattr(pf, "HUE_IOU_TRUST_MIN", 1.01)
    monkeypatch.setattr(pf, "HUE_CERTAIN", 1.01)
    sure, warm = pf.HUE_HEAT_TRUST, pf.HUE_HEAT_TRUST_HEAT
    assert warm - 0.01 >= pf.MIN_HEAT_FLAT      # so the cooler read meets only this rule
    got = finder._read(look, cand, p_what, p_how, up, warm, p_hue=sure)
    assert got is not None and (got.color, got.pips) == ("red", 2)
    assert finder._read(look, cand, p_what, p_how, up, warm - 0.01, p_hue=sure) is None
    assert finder._read(look, cand, p_what, p_how, up, warm, p_hue=sure - 0.001) is None


def test_a_hue_whose_plastic_shows_is_read_where_the_verifier_is_certain(tarot, finder,
                                                                          monkeypatch):
    """A hue with some of its plastic under its silhouette is read, whatever the rest of
    its silhouette and the heat map say, where the verifier gives it at least HUE_CERTAIN:
    neither a cold heat map (which a hue must otherwise overrule by filling
    HEAT_OVERRULED_IOU of its silhouette) nor too thin a silhouette turns it away."""
    import vision.pyramids.find as pf

    look, cand, p_what, p_how, up = _unsure_red(tarot, finder)
    certain = pf.HUE_CERTAIN
    assert certain < 1.0    # a probability can reach it
    cold = pf.MIN_HEAT - 0.05
    assert cold >= pf.COLD
    # the cold heat map: only a silhouette filled past any IoU would overrule it
    monkeypatch.setattr(pf, "HEAT_OVERRULED_IOU", 1.01)
    assert finder._read(look, cand, p_what, p_how, up, cold, p_hue=certain - 0.001) is None
    got = finder._read(look, cand, p_what, p_how, up, cold, p_hue=certain)
    assert got is not None and (got.color, got.pips) == ("red", 2) and got.extra["iou"] > 0
    # a warm map and too thin a silhouette, the other trusts out of reach
    monkeypatch.setattr(finder, "min_iou_hue", 1.01)
    monkeypatch.setattr(pf, "HUE_IOU_TRUST_MIN", 1.01)
    monkeypatch.setattr(pf, "HUE_HEAT_TRUST", 1.01)
    warm = pf.MIN_HEAT_FLAT
    assert finder._read(look, cand, p_what, p_how, up, warm, p_hue=certain - 0.001) is None
    again = finder._read(look, cand, p_what, p_how, up, warm, p_hue=certain)
    assert again is not None and (again.color, again.pips) == ("red", 2)


def test_a_doubtful_hue_short_of_its_silhouette_is_read_when_the_verifier_is_sure(
        tarot, finder, monkeypatch):
    """A doubtful hue the verifier was asked about keeps its read despite too thin a
    silhouette where the verifier gives it VERIFY_IOU_TRUST or more."""
    from vision.pyramids.find import VERIFY_IOU_TRUST, VERIFY_MIN

    look, cand, p_what, p_how, up = _unsure_red(tarot, finder)
    got = finder._read(look, cand, p_what, p_how, up, 0.9, p_ver=VERIFY_IOU_TRUST)
    assert got is not None and (got.color, got.pips) == ("red", 2)
    # as if neighbours had taken most of its plastic: no IoU is enough now
    monkeypatch.setattr(finder, "min_iou_hue", 1.01)
    assert VERIFY_MIN <= VERIFY_IOU_TRUST - 0.01    # the first checks still let it through
    assert finder._read(look, cand, p_what, p_how, up, 0.9,
                        p_ver=VERIFY_IOU_TRUST - 0.01) is None
    again = finder._read(look, cand, p_what, p_how, up, 0.9, p_ver=VERIFY_IOU_TRUST)
    assert again is not None and (again.color, again.pips) == ("red", 2)


def test_training_labels_a_point_by_the_silhouettes_it_lies_near(tarot):
    """The cutter's labels: a pyramid within POS_MM of a silhouette's centroid, ``none`` well
    away from every one, left out in between and on a pyramid mostly hidden."""
    from calibration.mat import DEFAULT_MAT
    from calibration.table import Intrinsics, TableCalibrator
    from vision.pyramids.geometry import polygon_centroid
    from vision.pyramids.train_colors import truth_silhouettes_mm
    from vision.pyramids.train_verify import NEG_MM, POS_MM, label_points
    from vision.synth.camera import camera_over_mat
    from vision.synth.render import plain_style, render
    from vision.synth.scene import PyramidPlacement, TableScene

    cam = camera_over_mat(DEFAULT_MAT, (1920, 1080), tilt=8.0, yaw=3.0, tilt_dir=200.0)
    scene = TableScene(pyramids=[PyramidPlacement("clear", 2, True, (400.0, 300.0))])
    image, truth = render(scene, tarot, DEFAULT_MAT, cam, plain_style((95, 120, 85), seed=3))
    calib = TableCalibrator(DEFAULT_MAT, Intrinsics(cam.K, cam.dist)).calibrate(image)
    c = polygon_centroid(truth_silhouettes_mm(truth, calib)[0])
    pts = np.array([c + [POS_MM / 2, 0.0], c + [0.0, (POS_MM + NEG_MM) / 2],
                    c + [0.0, 3 * NEG_MM], [100.0, 100.0]])
    assert label_points(pts, truth, calib).tolist() == [1, -1, 0, 0]
    hidden = dict(truth, pyramids=[dict(truth["pyramids"][0], visible=0.3)])
    assert label_points(pts[:1], hidden, calib).tolist() == [-1]
    assert label_points(pts, dict(truth, pyramids=[]), calib).tolist() == [0, 0, 0, 0]


def test_training_refuses_a_folder_that_is_not_rendered_and_a_span_not_cut(tmp_path):
    from vision.pyramids.train_verify import prepare, train

    (tmp_path / "photos").mkdir()
    with pytest.raises(ValueError, match="photos is not a rendered synth folder"):
        prepare([tmp_path / "photos"], tmp_path / "samples.npz")
    assert not (tmp_path / "samples.npz").exists()
    with pytest.raises(ValueError, match="no 30 mm patches were cut"):
        train({"patches72": np.zeros((0, 64, 64, 3), np.uint8)}, tmp_path, 1.0,
              patch_mm=30.0)


def _cutter(rows):
    """A finder and a look that read ``rows`` (colour probabilities, heat, from the heat
    map) as candidates, candidate k's colour-classifier patch filled with k and every other
    span's patch with 200."""
    from types import SimpleNamespace

    from vision.pyramids.find import Reads
    from vision.pyramids.proposals import BACKGROUND, Candidate

    cands = [Candidate((50.0 * k, 0.0), BACKGROUND, 0.0, "heat" if h else "blob")
             for k, (_, _, h) in enumerate(rows)]
    reads = Reads(cands, np.array([c.center_mm for c in cands]),
                  np.array([r[1] for r in rows], np.float32),
                  np.array([r[2] for r in rows]),
                  np.arange(len(rows), dtype=np.uint8)[:, None, None, None]
                  * np.ones((1, 64, 64, 3), np.uint8),
                  _probs([r[0] for r in rows]))
    finder = SimpleNamespace(read_candidates=lambda image, look, peak: reads,
                             what=SimpleNamespace(names=COLOR_CLASSES))
    look = SimpleNamespace(topdown=SimpleNamespace(calib=None),
                           patches=lambda image, centers, span: np.full(
                               (len(centers), 64, 64, 3), 200, np.uint8))
    return finder, look


def test_the_cutter_leaves_out_faint_heat_candidates_the_colour_classifier_calls_nothing():
    """Of the heat map's own candidates read as ``none``, only those at least
    CUT_NONE_MIN_HEAT warm become samples (below it they are card art, and below the
    finder's peaks); the others are cut as before."""
    from vision.pyramids.classifier import PATCH_MM
    from vision.pyramids.train_verify import CUT_NONE_MIN_HEAT, scene_samples

    lo, hi = CUT_NONE_MIN_HEAT - 0.05, CUT_NONE_MIN_HEAT + 0.05
    finder, look = _cutter([({"none": 1.0}, lo, True),    # faint, nothing to the classifier: out
                            ({"none": 1.0}, hi, True),    # warm enough: in
                            ({"none": 0.5, "clear": 0.5}, lo, True),    # not sure: in
                            ({"none": 0.5, "white": 0.5}, lo, False)])  # the colour table's: in
    cut, feats, labels = scene_samples(np.zeros((8, 8, 3), np.uint8), {"pyramids": []},
                                       look, finder)
    assert cut[PATCH_MM][:, 0, 0, 0].tolist() == [1, 2, 3]
    assert labels.tolist() == [0, 0, 0]
    assert feats[:, FEATURES.index("heat")].tolist() == pytest.approx([hi, lo, lo])


def test_the_batcher_draws_what_mirror_shift_and_jitter_draw():
    """The trainer's batches (cut on the GPU where there is one) are the samples
    ``mirror_and_shift`` and ``light_jitter`` make from the same random draws: mirrored,
    shifted with their edges repeated, BGR turned to RGB, light jittered."""
    torch = pytest.importorskip("torch")
    from vision.pyramids.train_verify import PatchBatches, light_jitter, mirror_and_shift

    rng = np.random.default_rng(3)
    data = {"patches": rng.integers(0, 256, (9, 16, 16, 3), dtype=np.uint8),
            "features": rng.random((9, 13)).astype(np.float32),
            "labels": (rng.random(9) < 0.5).astype(np.int8)}
    idx = np.array([4, 0, 7, 7, 2])
    x, f, y = PatchBatches(data).draw(idx, np.random.default_rng(11))
    ref_rng = np.random.default_rng(11)
    p = mirror_and_shift(data["patches"][idx], ref_rng)
    ref = torch.from_numpy(np.ascontiguousarray(p[..., ::-1].transpose(0, 3, 1, 2))).float()
    ref = light_jitter(ref / 255.0, ref_rng)
    assert torch.allclose(x, ref, atol=1e-6)
    assert np.array_equal(f.numpy(), data["features"][idx])
    assert np.array_equal(y.numpy(), data["labels"][idx].astype(np.float32))
    plain, _, _ = PatchBatches(data).draw(idx, None)
    assert np.array_equal((plain.numpy() * 255).round().astype(np.uint8),
                          data["patches"][idx][..., ::-1].transpose(0, 3, 1, 2))
    # the size readers' samples: no features, class indices kept as such
    sizes = {"patches": data["patches"], "labels": np.arange(9) % 6}
    x2, f2, y2 = PatchBatches(sizes, class_labels=True).draw(idx, np.random.default_rng(11))
    assert torch.allclose(x2, ref, atol=1e-6)
    assert f2.shape == (5, 0) and y2.dtype == torch.int64
    assert y2.tolist() == (idx % 6).tolist()


@pytest.mark.parametrize("shift_px", [0, 3])
def test_mirror_and_shift_mirrors_then_shifts_with_the_edges_repeated(shift_px):
    """The augmentation the verifier and size trainers share, against its definition: a
    mirror of half the patches, then each cut from the edge-padded patch at a random
    offset (none drawn when ``shift_px`` is 0)."""
    from vision.pyramids.train_verify import mirror_and_shift

    p = np.random.default_rng(1).integers(0, 256, (7, 12, 12, 3), dtype=np.uint8)
    got = mirror_and_shift(p, np.random.default_rng(5), shift_px)
    rng = np.random.default_rng(5)
    flip = rng.random(len(p)) < 0.5
    want = np.where(flip[:, None, None, None], p[:, :, ::-1], p)
    if shift_px:
        pad = np.pad(want, ((0, 0), (shift_px, shift_px), (shift_px, shift_px), (0, 0)),
                     mode="edge")
        dx, dy = rng.integers(0, 2 * shift_px + 1, (2, len(p)))
        want = np.stack([pad[i, dy[i]:dy[i] + 12, dx[i]:dx[i] + 12] for i in range(len(p))])
    assert np.array_equal(got, want)
    assert got.shape == p.shape and got.dtype == p.dtype


def test_the_cutter_cuts_every_candidate_the_finder_may_ask_about_when_told():
    """``which="all"``: besides the doubtful ones, the hues the colour classifier took alone
    and the candidates it turned away (the finder asks the verifier about those too); the
    faint heat `none` stays out either way. Only the spans asked for are cut."""
    from vision.pyramids.classifier import PATCH_MM
    from vision.pyramids.train_verify import CUT_NONE_MIN_HEAT, scene_samples

    lo, hi = CUT_NONE_MIN_HEAT - 0.05, CUT_NONE_MIN_HEAT + 0.05
    finder, look = _cutter([({"none": 1.0}, lo, True),    # faint heat `none`: out either way
                            ({"none": 1.0}, hi, True),    # warm heat `none`: doubtful
                            ({"none": 0.5, "clear": 0.5}, lo, True),  # doubtful clear
                            ({"red": 0.97, "none": 0.03}, hi, False),  # a hue taken alone
                            ({"none": 0.99, "yellow": 0.01}, lo, False)])  # turned away
    image = np.zeros((8, 8, 3), np.uint8)
    cut, _, _ = scene_samples(image, {"pyramids": []}, look, finder)
    assert cut[PATCH_MM][:, 0, 0, 0].tolist() == [1, 2]
    cut, feats, labels = scene_samples(image, {"pyramids": []}, look, finder, "all",
                                       (PATCH_MM, 48.0))
    assert cut[PATCH_MM][:, 0, 0, 0].tolist() == [1, 2, 3, 4]
    assert cut[48.0].shape == (4, 64, 64, 3) and (cut[48.0] == 200).all()
    assert len(feats) == len(labels) == 4
    cut, _, _ = scene_samples(image, {"pyramids": []}, look, finder, "all", (48.0,))
    assert set(cut) == {48.0}
    with pytest.raises(ValueError, match="candidates 'some': expected one of doubtful, all"):
        scene_samples(image, {"pyramids": []}, look, finder, "some")


def test_cut_samples_of_several_files_keep_their_own_validation_scenes(tmp_path):
    """``load_samples``: the files' samples one after the other, the trained span alone,
    each file's scene ids moved up by a multiple of VAL_EVERY (so a scene keeps its split
    and no two files share a scene); a file without the span, or with features of another
    length, is refused by name."""
    from vision.pyramids.train_verify import SCENE_ID_STRIDE, VAL_EVERY, load_samples

    assert SCENE_ID_STRIDE % VAL_EVERY == 0

    def cut(path, n, scenes, feats=13):
        np.savez(path, patches48=np.full((n, 64, 64, 3), n, np.uint8),
                 patches72=np.zeros((n, 64, 64, 3), np.uint8),
                 features=np.zeros((n, feats), np.float32),
                 labels=np.arange(n, dtype=np.int8) % 2, scene=np.asarray(scenes, np.int32))

    cut(tmp_path / "a.npz", 3, [0, 1, 100_001])
    cut(tmp_path / "b.npz", 2, [0, 7])
    data = load_samples([tmp_path / "a.npz", tmp_path / "b.npz"], 48.0)
    assert set(data) == {"patches48", "features", "labels", "scene"}
    assert data["patches48"][:, 0, 0, 0].tolist() == [3, 3, 3, 2, 2]
    assert data["scene"].tolist() == [0, 1, 100_001, SCENE_ID_STRIDE, SCENE_ID_STRIDE + 7]
    assert data["labels"].tolist() == [0, 1, 0, 0, 1]
    with pytest.raises(ValueError, match=r"a\.npz: no 30 mm patches"):
        load_samples([tmp_path / "a.npz"], 30.0)
    cut(tmp_path / "c.npz", 2, [0, 1], feats=11)
    with pytest.raises(ValueError, match=r"c\.npz: features of shape \(2, 11\), expected"):
        load_samples([tmp_path / "a.npz", tmp_path / "c.npz"], 48.0)


def test_the_cutter_refuses_unknown_candidates_and_spans(tmp_path, capsys):
    from vision.pyramids.train_verify import main, prepare

    for flag in ("--samples", "--init"):
        with pytest.raises(SystemExit):
            main(["--out", str(tmp_path), "--render", str(tmp_path), flag,
                  str(tmp_path / "gone.npz")])
        assert f"{flag} {tmp_path / 'gone.npz'}: no such file" in capsys.readouterr().err
    # the run's own cut, or one cut twice, would be trained and validated on twice
    (tmp_path / "samples.npz").write_bytes(b"")
    (tmp_path / "other.npz").write_bytes(b"")
    for extra, message in (([tmp_path / "samples.npz"], "this run's own cut"),
                           ([tmp_path / "other.npz"] * 2, "given twice")):
        with pytest.raises(SystemExit):
            main(["--out", str(tmp_path), *(a for e in extra for a in ("--samples", str(e)))])
        assert f"--samples {extra[-1]}: {message}" in capsys.readouterr().err

    with pytest.raises(ValueError, match="candidates 'most'"):
        prepare([tmp_path], tmp_path / "s.npz", which="most")
    with pytest.raises(ValueError, match=r"patch spans \[30\.0\]: expected some of"):
        prepare([tmp_path], tmp_path / "s.npz", spans=(30.0,))


def test_a_verifier_read_back_from_its_file_computes_what_the_file_does(tmp_path):
    """Going on from a shipped verifier (its best.pt elsewhere): the network rebuilt from
    the ONNX file, whose export folded the batch norms, gives the file's logits, and still
    does once its batch norms hold the statistics of training batches; a file of another
    shape is refused by name."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    from vision.pyramids.train_heat import recalibrate_bn
    from vision.pyramids.train_verify import build_net, export, from_onnx

    torch.manual_seed(2)
    net = build_net()
    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 2.0)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.3, 0.3)
    path = export(net, tmp_path / "pyramids-verify.onnx")
    rng = np.random.default_rng(0)
    x = rng.random((6, 3, 64, 64)).astype(np.float32)
    f = rng.random((6, 13)).astype(np.float32)
    want = ort.InferenceSession(str(path)).run(None, {"patch": x, "features": f})[0]
    back = from_onnx(path).eval()
    with torch.no_grad():
        got = back(torch.from_numpy(x), torch.from_numpy(f)).numpy()
    assert np.allclose(got, want, atol=1e-4)
    batches = [(torch.from_numpy(rng.random((8, 3, 64, 64)).astype(np.float32)),
                torch.from_numpy(rng.random((8, 13)).astype(np.float32))) for _ in range(3)]
    recalibrate_bn(back, batches)
    with torch.no_grad():
        got = back.eval()(torch.from_numpy(x), torch.from_numpy(f)).numpy()
    assert np.allclose(got, want, atol=1e-3)
    from vision.pyramids.train_heat import build_net as build_heat
    from vision.pyramids.train_heat import export as export_heat

    heat = export_heat(build_heat(), tmp_path / "pyramids-heat.onnx")
    with pytest.raises(ValueError, match="pyramids-heat.onnx: not an exported verifier"):
        from_onnx(heat)


def test_a_doubtful_candidate_near_the_floor_is_asked_again_beside_itself(
        tarot, finder, monkeypatch):
    """Where the verifier's answer about a doubtful candidate is within VERIFY_STEADY, it is
    asked again at cuts VERIFY_STEADY_MM to either side and the three answers averaged; a
    surer answer, or VERIFY_STEADY_MM 0, stands as it is."""
    import vision.pyramids.find as find_mod
    from calibration.mat import DEFAULT_MAT
    from calibration.table import Intrinsics, TableCalibrator
    from vision.synth.camera import camera_over_mat
    from vision.synth.render import plain_style, render
    from vision.synth.scene import PyramidPlacement, TableScene

    cam = camera_over_mat(DEFAULT_MAT, (1920, 1080), tilt=8.0, yaw=3.0, tilt_dir=200.0)
    scene = TableScene(pyramids=[PyramidPlacement("white", 2, True, (400.0, 300.0))])
    image, _ = render(scene, tarot, DEFAULT_MAT, cam, plain_style((95, 120, 85), seed=3))
    calib = TableCalibrator(DEFAULT_MAT, Intrinsics(cam.K, cam.dist)).calibrate(image)
    look = finder.look(image, calib)
    reads = finder.read_candidates(image, look)
    assert reads is not None
    calls: list[int] = []

    def verifier_says(first: float):
        def p_pyramid(patches, feats):
            calls.append(len(patches))
            return np.full(len(patches), first if len(calls) == 1 else 1.0, np.float32)
        return p_pyramid

    lo, hi = find_mod.VERIFY_STEADY
    monkeypatch.setattr(find_mod, "VERIFY_STEADY_MM", 1.5)
    monkeypatch.setattr(finder.verifier, "p_pyramid", verifier_says((lo + hi) / 2))
    p = finder._second_opinion(look, image, reads)
    asked = int(np.isfinite(p).sum())
    assert asked >= 1 and calls == [asked, 2 * asked]
    assert np.allclose(p[np.isfinite(p)], ((lo + hi) / 2 + 2.0) / 3.0)
    calls.clear()
    monkeypatch.setattr(finder.verifier, "p_pyramid", verifier_says(hi))
    p = finder._second_opinion(look, image, reads)
    assert calls == [asked] and np.allclose(p[np.isfinite(p)], hi)
    calls.clear()
    monkeypatch.setattr(find_mod, "VERIFY_STEADY_MM", 0.0)
    monkeypatch.setattr(finder.verifier, "p_pyramid", verifier_says((lo + hi) / 2))
    p = finder._second_opinion(look, image, reads)
    assert calls == [asked] and np.allclose(p[np.isfinite(p)], (lo + hi) / 2)


def test_the_figures_name_the_best_epoch_and_0_where_the_starting_file_stood(
        tmp_path, monkeypatch):
    """Three epochs whose validation losses are given; from random weights the best of them
    is named, going on from a file that none of them beats, epoch 0 (its weights exported
    again, and no best.pt written)."""
    pytest.importorskip("torch")
    from vision.pyramids import train_verify as tv

    rng = np.random.default_rng(0)
    n = 40
    data = {f"patches{tv.PATCH_MM_TRAIN:g}": rng.integers(0, 255, (n, 64, 64, 3), np.uint8),
            "features": rng.random((n, len(tv.FEATURES)), np.float32),
            "labels": (np.arange(n) % 2).astype(np.float32), "scene": np.arange(n)}
    losses: list[float] = []

    def evaluate(net, batches, idx):
        return {"loss": losses.pop(0), "accuracy": 0.5, "kept_at_95": 0.5, "kept_at_99": 0.5}

    def three_epochs(opt, lr, minutes, tr, batch, rng, batch_loss):
        for epoch in (1, 2, 3):
            yield epoch, 0.1

    monkeypatch.setattr(tv, "evaluate", evaluate)
    monkeypatch.setattr(tv, "budget_epochs", three_epochs)
    losses[:] = [0.5, 0.3, 0.4]
    _, figures = tv.train(data, tmp_path / "a", 0.01, threads=1, batch=8)
    assert figures["best_epoch"] == 2 and figures["loss"] == 0.3 and figures["epochs"] == 3
    assert (tmp_path / "a" / "best.pt").is_file()
    losses[:] = [0.2, 0.5, 0.3, 0.4]   # the file it goes on from, then three epochs
    from models import model_path

    _, figures = tv.train(data, tmp_path / "b", 0.01, threads=1, batch=8,
                          init=model_path("pyramids-verify.onnx"))
    assert figures["best_epoch"] == 0 and figures["loss"] == 0.2
    assert not (tmp_path / "b" / "best.pt").exists()
