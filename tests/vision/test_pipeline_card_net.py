"""How the pipeline combines the tarot identity network with the gallery (vision/pipeline.py):
which deck gets the network, and the rules of `_fuse` for one cut read by both."""

from __future__ import annotations

import pytest

pytest.importorskip("cv2")
pytest.importorskip("onnxruntime")

from vision.cards.identify import CardMatch  # noqa: E402
from vision.pipeline import (NET_BACK_OVERRULES_FACE, NET_OVERRULES,  # noqa: E402
                             NET_OVERRULES_TABLE, TablePipeline, _fuse)


def gallery(cid: str | None, best: str, *, table: bool = False, rotated: bool = False
            ) -> CardMatch:
    conf = 0.0 if table else (0.9 if cid else 0.3)
    return CardMatch(cid, best, rotated, conf, 2.0, 1.0, 10.0)


def net(best: str, p: float, *, rotated: bool = False, table: bool = False) -> CardMatch:
    if table:
        return CardMatch(None, best, rotated, 0.0, 3.0, 1.0, 0.0)
    return CardMatch(best if p >= 0.5 else None, best, rotated, p if p >= 0.5 else min(p, 0.5),
                     2.0, 1.0, 0.0)


def test_agreeing_readings_take_the_networks_orientation() -> None:
    # the gallery is sure, the network not: the card is named, the art's top from the network
    m = _fuse(gallery("cups-02", "cups-02"), net("cups-02", 0.4, rotated=True))
    assert m.card_id == "cups-02" and m.rotated is True and m.accepted
    m = _fuse(gallery(None, "cups-02"), net("cups-02", 0.8))
    assert m.card_id == "cups-02" and m.confidence == pytest.approx(0.8)
    # neither sure: still not named
    assert not _fuse(gallery(None, "cups-02"), net("cups-02", 0.3)).accepted


def test_a_sure_network_overrules_the_gallery() -> None:
    m = _fuse(gallery("major-08", "major-08"), net("wands-08", NET_OVERRULES + 0.01))
    assert m.card_id == "wands-08"
    m = _fuse(gallery("major-08", "major-08"), net("wands-08", NET_OVERRULES - 0.1))
    assert m.card_id == "major-08"


def test_over_bare_table_a_face_needs_a_sure_network_and_a_back_a_very_sure_one() -> None:
    table = gallery(None, "back", table=True)
    # a face the network names: as sure as anywhere else
    assert _fuse(table, net("swords-09", NET_OVERRULES - 0.1)).looks_like_table
    m = _fuse(table, net("swords-09", NET_OVERRULES + 0.1))
    assert m.card_id == "swords-09" and m.accepted
    # its back: bare cloth reads as one, so only when very sure
    assert _fuse(table, net("back", NET_OVERRULES_TABLE - 0.1)).looks_like_table
    assert _fuse(table, net("back", NET_OVERRULES_TABLE + 0.01)).card_id == "back"
    # the network's own table class never names anything
    assert _fuse(gallery("cups-02", "cups-02"), net("back", 0.0, table=True)).card_id == "cups-02"


def test_a_named_face_yields_to_the_networks_back_only_when_it_is_very_sure() -> None:
    face = gallery("pentacles-13", "pentacles-13")
    assert _fuse(face, net("back", NET_BACK_OVERRULES_FACE - 0.1)).card_id == "pentacles-13"
    assert _fuse(face, net("back", NET_BACK_OVERRULES_FACE + 0.01)).card_id == "back"
    # a face the gallery could not name: the network's back as any other card
    m = _fuse(gallery(None, "pentacles-13"), net("back", NET_OVERRULES + 0.1))
    assert m.card_id == "back"


def test_which_decks_get_the_network() -> None:
    from vision.cards.net import CardNet

    with TablePipeline(deck="tarot", threads=1) as p:
        assert isinstance(p.card_net, CardNet)
        assert set(p.card_net.card_ids) == set(p.gallery.card_ids)
    with TablePipeline(deck="tarot", threads=1, card_net=False) as p:
        assert p.card_net is None
    with TablePipeline(deck="decktet", threads=1) as p:
        assert p.card_net is None
