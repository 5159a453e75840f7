"""How the pipeline combines the tarot identity network with the gallery (vision/pipeline.py):
which deck gets the network, and how `_fuse` names one cut read by both."""

from __future__ import annotations

import pytest

pytest.importorskip("cv2")
pytest.importorskip("onnxruntime")

from vision.cards.identify import CardMatch  # noqa: E402
from vision.pipeline import (FUSE_BACK_BIAS, FUSE_DISTANCE_WEIGHT,  # noqa: E402
                             NET_BACK_OVER_TABLE, TablePipeline, _fuse, _fused_score)


def gallery(cid: str | None, best: str, *, table: bool = False, rotated: bool = False,
            distances: dict[str, float] | None = None) -> CardMatch:
    conf = 0.0 if table else (0.9 if cid else 0.3)
    d = (distances or {}).get(best, 10.0)
    return CardMatch(cid, best, rotated, conf, 2.0, 1.0, d, distances=distances)


def net(best: str, p: float, *, rotated: bool = False, table: bool = False,
        probs: dict[str, float] | None = None) -> CardMatch:
    if table:
        return CardMatch(None, best, rotated, 0.0, 3.0, 1.0, 0.0, probs=probs)
    return CardMatch(best if p >= 0.5 else None, best, rotated, p if p >= 0.5 else min(p, 0.5),
                     2.0, 1.0, 0.0, probs=probs if probs is not None else {best: p})


def test_agreeing_readings_take_the_networks_orientation() -> None:
    # the gallery is sure, the network not: the card is named, the art's top from the network
    m = _fuse(gallery("cups-02", "cups-02"), net("cups-02", 0.4, rotated=True))
    assert m.card_id == "cups-02" and m.rotated is True and m.accepted
    m = _fuse(gallery(None, "cups-02"), net("cups-02", 0.8))
    assert m.card_id == "cups-02" and m.confidence == pytest.approx(0.8)
    # neither sure: still not named
    assert not _fuse(gallery(None, "cups-02"), net("cups-02", 0.3)).accepted


def test_different_names_go_to_the_card_both_readers_together_favour() -> None:
    near = {"major-08": 3.0, "wands-08": 3.5}
    # the network is sure of wands-08, which the gallery puts nearly as near as its own card
    m = _fuse(gallery("major-08", "major-08", distances=near),
              net("wands-08", 0.9, probs={"wands-08": 0.9, "major-08": 0.05}))
    assert m.card_id == "wands-08" and m.accepted
    # the same network reading against a gallery that puts wands-08 far off
    far = {"major-08": 3.0, "wands-08": 12.0}
    m = _fuse(gallery("major-08", "major-08", distances=far),
              net("wands-08", 0.9, probs={"wands-08": 0.9, "major-08": 0.05}))
    assert m.card_id == "major-08"
    # an unsure network still names its card when the gallery does not rule it out, though
    # the card is not taken as identified
    m = _fuse(gallery("major-08", "major-08", distances=near),
              net("wands-08", 0.45, probs={"wands-08": 0.45, "major-08": 0.02}))
    assert m.best_id == "wands-08" and not m.accepted and m.confidence < 0.5


def test_the_score_weighs_the_gallery_distance_and_penalises_back() -> None:
    g = gallery("cups-05", "cups-05", distances={"cups-05": 2.0, "back": 2.0, "cups-06": 2.0})
    n = net("cups-06", 0.5, probs={"cups-06": 0.5, "back": 0.5, "cups-05": 0.0})
    assert _fused_score("back", g, n) == pytest.approx(_fused_score("cups-06", g, n)
                                                       + FUSE_BACK_BIAS)
    g2 = gallery("cups-05", "cups-05", distances={"cups-05": 2.0, "cups-06": 3.0})
    assert _fused_score("cups-06", g2, n) == pytest.approx(_fused_score("cups-06", g, n)
                                                           - FUSE_DISTANCE_WEIGHT)


def test_a_back_needs_more_than_a_face_to_win() -> None:
    # the same numbers, once for a face and once for the back: the face wins, the back not
    g = gallery("cups-05", "cups-05", distances={"cups-05": 3.0, "cups-09": 4.0, "back": 4.0})
    assert _fuse(g, net("cups-09", 0.6, probs={"cups-09": 0.6, "cups-05": 0.1})
                 ).card_id == "cups-09"
    assert _fuse(g, net("back", 0.6, probs={"back": 0.6, "cups-05": 0.1})).card_id == "cups-05"
    # a network very sure of the back, with the gallery's face not far off either: back
    assert _fuse(g, net("back", 0.97, probs={"back": 0.97, "cups-05": 0.001})
                 ).card_id == "back"


def test_over_bare_table_the_gallerys_nearest_card_is_no_default() -> None:
    # the gallery took the cut for table; its nearest card (nearly always back) is only a
    # guess, so a face the network names, even unsure, is kept
    table = gallery(None, "back", table=True,
                    distances={"__none__": 4.0, "back": 5.0, "swords-09": 5.5})
    m = _fuse(table, net("swords-09", 0.3, probs={"swords-09": 0.3, "back": 0.05}))
    assert m.best_id == "swords-09" and not m.accepted and m.confidence == 0.0
    # a sure network over table: named and accepted
    m = _fuse(table, net("swords-09", 0.8, probs={"swords-09": 0.8, "back": 0.05}))
    assert m.card_id == "swords-09" and m.accepted
    # bare cloth reads as a back: over table, the network's back is taken only when very
    # sure, and is otherwise named but unidentified, with no confidence
    near_back = {"__none__": 4.0, "back": 4.5}
    m = _fuse(gallery(None, "back", table=True, distances=near_back),
              net("back", NET_BACK_OVER_TABLE - 0.1))
    assert m.best_id == "back" and not m.accepted and m.confidence == 0.0
    m = _fuse(gallery(None, "back", table=True, distances=near_back),
              net("back", NET_BACK_OVER_TABLE + 0.01))
    assert m.card_id == "back" and m.confidence > 0.9
    # the network's own table class never names anything
    assert _fuse(gallery("cups-02", "cups-02"), net("back", 0.0, table=True)).card_id == "cups-02"
    assert _fuse(table, net("back", 0.0, table=True)).looks_like_table


def test_readers_that_list_no_other_cards_still_fuse() -> None:
    # without the lists the network speaks for its own card and the gallery's margin is the
    # least distance of any other card: a sure network wins, a doubtful one against a gallery
    # far surer of its card does not
    g = CardMatch("major-08", "major-08", False, 0.99, 6.0, 1.0, 2.0)
    sure = CardMatch("wands-08", "wands-08", False, 0.95, 3.0, 1.0, 0.0)
    assert _fuse(CardMatch("major-08", "major-08", False, 0.9, 1.0, 1.0, 2.0), sure
                 ).card_id == "wands-08"
    unsure = CardMatch(None, "wands-08", False, 0.002, 0.1, 1.0, 0.0)
    assert _fuse(g, unsure).card_id == "major-08"


def test_which_decks_get_the_network() -> None:
    from vision.cards.net import CardNet

    with TablePipeline(deck="tarot", threads=1) as p:
        assert isinstance(p.card_net, CardNet)
        assert set(p.card_net.card_ids) == set(p.gallery.card_ids)
    with TablePipeline(deck="tarot", threads=1, card_net=False) as p:
        assert p.card_net is None
    with TablePipeline(deck="decktet", threads=1) as p:
        assert isinstance(p.card_net, CardNet)
        assert p.card_net.path.name == "cards-decktet-net.onnx"
        assert set(p.card_net.card_ids) == set(p.gallery.card_ids)


def test_which_decks_get_their_own_second_opinion() -> None:
    """The Decktet's pyramid verifier was trained on with its art (its suns and blues are
    card art); the tarot, and a deck enrolled from a folder, take the default one (each
    as its int8 copy, :data:`vision.pyramids.find.VERIFIER_INT8`)."""
    from models import model_path
    from vision.pyramids.classifier import int8_name
    from vision.pyramids.verify import VERIFY_MODEL

    with TablePipeline(deck="decktet", threads=1) as p:
        assert p.verify_model == model_path(int8_name("pyramids-verify-decktet.onnx"))
        assert p.pyramid_finder.verifier.path == p.verify_model
    with TablePipeline(deck="tarot", threads=1) as p:
        assert p.verify_model is None
        assert p.pyramid_finder.verifier.path == model_path(int8_name(VERIFY_MODEL))


def test_which_decks_get_their_own_card_detector() -> None:
    """The Decktet's detector was trained on with its shorter cards; the tarot, and a deck
    enrolled from a folder, take the default one."""
    from models import model_path
    from vision.detection.cards import DEFAULT_MODEL

    with TablePipeline(deck="decktet", threads=1) as p:
        assert p.card_detector.path == model_path("cards-obb-decktet.onnx")
    with TablePipeline(deck="tarot", threads=1) as p:
        assert p.card_detector.path == model_path(DEFAULT_MODEL)


def test_an_unsure_card_is_read_as_the_mean_of_its_cuts(monkeypatch) -> None:
    """The moved cuts' readings are averaged with the cut's own: one moved cut that reads
    another card very surely does not outvote four that agree."""
    import numpy as np

    import vision.pipeline as vp

    with TablePipeline(deck="tarot", threads=1) as p:
        net_ = p.card_net
        assert net_ is not None

        def row(probs: dict[str, float]) -> np.ndarray:
            r = np.zeros(len(net_.names), np.float32)
            for name, v in probs.items():
                r[net_.names.index(name)] = v
            return r

        agree = row({"wands-08": 0.6, "cups-02": 0.4})
        stray = row({"major-08": 0.95, "cups-02": 0.05})
        # the moved cuts, in the order they are cut: one strays, three agree
        monkeypatch.setattr(vp, "warp_card_mm", lambda *a, **k: np.zeros((112, 64, 3), np.uint8))
        monkeypatch.setattr(net_, "probs", lambda crops: np.stack([stray, agree, agree, agree]))
        first = {0: agree}
        nets = {0: net_.matches(agree[None])[0]}
        centers, axes = np.array([[100.0, 100.0]]), np.array([0.0])
        out = p._net_recut(np.zeros((10, 10, 3), np.uint8), None, centers, axes, nets, {},
                           first)
        assert out[0].best_id == "wands-08"
        # all four moved cuts reading major-08 surely: their mean wins
        monkeypatch.setattr(net_, "probs", lambda crops: np.stack([stray] * 4))
        out = p._net_recut(np.zeros((10, 10, 3), np.uint8), None, centers, axes, nets, {},
                           first)
        assert out[0].best_id == "major-08"
        assert centers.tolist() == [[100.0, 100.0]]


def test_the_networks_readings_from_probabilities_match_its_reading_of_crops() -> None:
    import numpy as np

    from models import model_path
    from vision.cards.net import CardNet

    n = CardNet(model_path("cards-tarot-net.onnx"), threads=1)
    rng = np.random.default_rng(3)
    crops = [rng.integers(0, 255, (112, 64, 3), dtype=np.uint8) for _ in range(3)]
    a, b = n.identify_batch(crops), n.matches(n.probs(crops))
    assert [(m.best_id, m.card_id, m.rotated) for m in a] == [
        (m.best_id, m.card_id, m.rotated) for m in b]
    assert [m.confidence for m in a] == pytest.approx([m.confidence for m in b])
