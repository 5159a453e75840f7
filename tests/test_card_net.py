"""The shipped tarot identity network (vision/cards/net.py): names rendered cards and their
orientation, also under pyramid-sized occluders; rejects bare table; refuses model files
that are missing, corrupt or of another kind. The training module's label bookkeeping is
checked without torch. Seeded; card art from shared/decks (skipped without it)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

cv2 = pytest.importorskip("cv2")
pytest.importorskip("onnxruntime")

from models import ModelError, model_path  # noqa: E402
from vision.cards import CROP_SIZE, warp_card  # noqa: E402
from vision.cards.identify import BACK_ID  # noqa: E402
from vision.cards.net import CardNet  # noqa: E402
from vision.cards.train_net import (ROTATED_SUFFIX, _to_tensor, _turn,  # noqa: E402
                                    _turned_index, class_names)

from test_card_identify import CARDS, _render, tarot_dir  # noqa: E402,F401


@pytest.fixture(scope="module")
def net() -> CardNet:
    return CardNet(model_path("cards-tarot-net.onnx"))


def test_identity_and_orientation(tarot_dir: Path, net: CardNet) -> None:  # noqa: F811
    image, truth, _ = _render(tarot_dir, CARDS, seed=11, tilt=8.0)
    rng = np.random.default_rng(5)
    crops, want = [], []
    for c in truth["cards"]:
        corners = np.asarray(c["corners_px"])
        flip = bool(rng.random() < 0.5)
        if flip:  # the quad starts at the art's bottom edge: the art is upside down
            corners = np.roll(corners, 2, axis=0)
        crops.append(warp_card(image, corners))
        want.append((c["id"], flip and c["id"] != "back"))
    for m, (cid, rotated) in zip(net.identify_batch(crops), want):
        assert m.card_id == cid, (cid, m)
        assert m.rotated == rotated, (cid, m)
        assert m.confidence > 0.5 and m.margin > 1.0, (cid, m)


def test_cards_under_occluders(tarot_dir: Path, net: CardNet) -> None:  # noqa: F811
    # three opaque pyramid-sized triangles on every card: the gallery's hard case
    image, truth, _ = _render(tarot_dir, CARDS, seed=12, tilt=4.0)
    rng = np.random.default_rng(8)
    crops, want = [], []
    for c in truth["cards"]:
        crop = warp_card(image, np.asarray(c["corners_px"])).copy()
        w, h = CROP_SIZE
        for _ in range(3):
            cx, cy = rng.uniform(0.2, 0.8) * w, rng.uniform(0.15, 0.85) * h
            r = 0.16 * w
            tri = np.array([[cx, cy - r], [cx + r, cy + r * 0.7], [cx - r, cy + r * 0.7]])
            colour = tuple(int(v) for v in rng.integers(20, 235, 3))
            cv2.fillPoly(crop, [np.round(tri).astype(np.int32)], colour)
        crops.append(crop)
        want.append(c["id"])
    got = [m.best_id for m in net.identify_batch(crops)]
    assert sum(g == w for g, w in zip(got, want)) >= len(want) - 1, (got, want)


def test_table_texture_is_rejected(net: CardNet) -> None:
    from vision.synth import textures

    rng = np.random.default_rng(99)
    for kind in ("cloth", "wood", "felt"):
        tex = textures.table_surface(rng, kind, CROP_SIZE[1], CROP_SIZE[0], 0.9)
        m = net.identify_batch([tex])[0]
        assert m.card_id is None and m.confidence <= 0.5, (kind, m)


def test_empty_batch(net: CardNet) -> None:
    assert net.identify_batch([]) == []
    assert net.probs(np.zeros((0, CROP_SIZE[1], CROP_SIZE[0], 3), np.uint8)).shape == (
        0, len(net.names))


def test_bad_model_files(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="missing"):
        CardNet(tmp_path / "nope.onnx")
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"not a model")
    with pytest.raises(ModelError, match="cannot be loaded"):
        CardNet(junk)
    # an ONNX model of another kind: the pyramid colour classifier
    with pytest.raises(ModelError, match="not a card identity network"):
        CardNet(model_path("pyramids-color.onnx"))


def test_class_names_and_turning() -> None:
    names = class_names(["major-01", "back", "cups-02"])
    assert names == ["cups-02", "cups-02" + ROTATED_SUFFIX, "major-01",
                     "major-01" + ROTATED_SUFFIX, "back", "__none__"]
    X = np.arange(4 * 6 * 2 * 3, dtype=np.uint8).reshape(4, 6, 2, 3)
    y = np.array([0, 2, 4, 5])  # cups-02, major-01, back, none
    turned = set()
    for seed in range(8):
        Xt, yt = _turn(X, y, names, np.random.default_rng(seed))
        for i in range(4):
            flipped = not np.array_equal(Xt[i], X[i])
            if flipped:
                assert np.array_equal(Xt[i], X[i, ::-1, ::-1])
                turned.add(i)
            want = {0: (1 if flipped else 0), 1: (3 if flipped else 2), 2: 4, 3: 5}[i]
            assert yt[i] == want, (seed, i, yt[i])
    assert turned == {0, 1, 2, 3}


def test_the_batch_turned_where_the_network_runs_matches_the_numpy_turn() -> None:
    # the GPU path (each batch turned and converted on the device) must give the network
    # what the CPU path gave it: the same pixels in RGB 0..1 NCHW, the same labels
    torch = pytest.importorskip("torch")
    from vision.cards.train_net import _turned_batch

    names = class_names(["major-01", "back", "cups-02"])
    assert _turned_index(names) == [1, 0, 3, 2, 4, 5]
    rng = np.random.default_rng(3)
    X = rng.integers(0, 256, (6, 5, 3, 3), dtype=np.uint8)
    y = np.array([0, 1, 2, 3, 4, 5])
    flip = np.array([True, False, True, True, False, True])
    xb, yb = _turned_batch(torch.from_numpy(X), torch.from_numpy(y), torch.from_numpy(flip),
                           torch.tensor(_turned_index(names)))
    want_X = np.where(flip[:, None, None, None], X[:, ::-1, ::-1], X)
    assert torch.equal(xb, _to_tensor(want_X))
    assert yb.tolist() == [1, 1, 3, 2, 4, 5]


def test_the_exported_network_is_written_with_its_weights_in_float16(tmp_path: Path) -> None:
    """``companion train card-net`` ships what it exports: float16 weights that onnxruntime
    runs in float32, with the names and task the pipeline checks (train extra)."""
    pytest.importorskip("torch")
    pytest.importorskip("ultralytics")
    import onnx

    from vision.cards.train_net import build_net, class_names, export
    from vision.half_weights import STORED_KEY

    names = class_names(["major-00", "major-01", BACK_ID])
    path = export(build_net(len(names), tmp_path), names, tmp_path / "card-net.onnx",
                  meta={"seed": 1})
    meta = {p.key: p.value for p in onnx.load(str(path)).metadata_props}
    assert meta[STORED_KEY] == "float16" and meta["task"] == "card-identity"
    net = CardNet(path)
    assert net.names == names and sorted(net.card_ids) == [BACK_ID, "major-00", "major-01"]
    probs = net.probs(np.zeros((2, 112, 64, 3), np.uint8))
    assert probs.shape == (2, len(names)) and np.allclose(probs.sum(1), 1.0, atol=1e-3)
