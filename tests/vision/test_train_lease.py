"""The lent-GPU trainer's rendering side (vision.pyramids.train_lease): each batch of
scenes rendered, cut for both networks and its images deleted; batches gathered in order;
nothing started that cannot end before the deadline."""

from pathlib import Path

import numpy as np
import pytest

from vision.pyramids import train_lease
from vision.pyramids.train_verify import PATCH_MM_TRAIN


def test_a_batch_is_rendered_cut_for_both_networks_and_its_images_deleted(tmp_path: Path):
    got = train_lease.render_and_cut(3, 4321, "crowded", 2, tmp_path)
    assert not (tmp_path / "r000003").exists()
    with np.load(tmp_path / "heat_000003.npz") as z:
        views, targets, weights = z["views"], z["targets"], z["weights"]
    assert views.dtype == np.uint8 and views.ndim == 4 and views.shape[3] == 3
    assert len(views) == len(targets) == len(weights) == got["views"] > 0
    assert targets.max() == pytest.approx(1.0)      # a pyramid's cell on every crowded table
    with np.load(tmp_path / "verify_000003.npz") as z:
        scene, labels = z["scene"], z["labels"]
        patches = z[f"patches{PATCH_MM_TRAIN:g}"]
    assert len(scene) == len(labels) == len(patches) == got["samples"] > 0
    assert set(np.unique(scene)) <= {3000, 3001}    # batch * SCENE_IDS + scene


def test_a_batch_for_one_network_is_cut_for_that_one_alone(tmp_path: Path):
    got = train_lease.render_and_cut(5, 4322, "mixed", 1, tmp_path, ("heat",))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["heat_000005.npz"]
    assert got["views"] == 1 and got["samples"] == 0


def test_a_batch_for_the_card_network_keeps_one_crop_of_each_card_with_its_id(
        tmp_path: Path):
    from vision.cards import CROP_SIZE
    from vision.cards.identify import BACK_ID
    from vision.synth.deck import default_deck_dir, load_deck

    got = train_lease.render_and_cut(9, 4324, "crowded", 2, tmp_path, ("cards",))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cards_000009.npz"]
    with np.load(tmp_path / "cards_000009.npz") as z:
        X, y = z["X"], z["y"]
    # a crowded lattice holds a dozen cards and more, each cut once
    assert len(X) == len(y) == got["crops"] >= 24
    assert X.dtype == np.uint8 and X.shape[1:] == (CROP_SIZE[1], CROP_SIZE[0], 3)
    ids = set(load_deck(default_deck_dir("rws-tarot"), validate=False).ids) | {BACK_ID}
    assert set(y.tolist()) <= ids
    assert got["views"] == got["samples"] == got["patches"] == 0


def test_a_batch_of_a_later_recipe_cuts_every_candidate_at_48_mm_alone(tmp_path: Path):
    # crowded lattice, recoloured printing: the verifier's later stages
    got = train_lease.render_and_cut(4, 4324, "crowded-printed", 1, tmp_path, ("verify",))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["verify_000004.npz"]
    with np.load(tmp_path / "verify_000004.npz") as z:
        assert f"patches{PATCH_MM_TRAIN:g}" in z.files and "patches72" not in z.files
        assert len(z["labels"]) == got["samples"] > 0
    doubtful = train_lease.render_and_cut(4, 4324, "crowded-printed", 1, tmp_path / "d",
                                          ("verify",), "doubtful")
    assert 0 < doubtful["samples"] < got["samples"]   # "all" adds the classifier's own hues
    assert set(train_lease.CYCLE) <= set(train_lease.RECIPES)


def test_a_batch_for_the_size_readers_keeps_each_patch_with_its_class_colour_and_apex(
        tmp_path: Path):
    from vision.pyramids.classifier import SIZE_CLASSES

    got = train_lease.render_and_cut(7, 4323, "crowded", 2, tmp_path, ("size",))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["size_000007.npz"]
    with np.load(tmp_path / "size_000007.npz") as z:
        patches, labels, colors, scene = z["patches"], z["labels"], z["colors"], z["scene"]
        pointing = z["pointing"]
    assert len(patches) == len(labels) == len(colors) == len(scene) == got["patches"] > 0
    # a lying pyramid's apex, from its patch's up; nan for an upright one
    assert len(pointing) == len(labels)
    lying = labels >= 3
    assert lying.any() and not lying.all()
    assert np.isfinite(pointing[lying]).all() and np.isnan(pointing[~lying]).all()
    assert ((pointing[lying] >= 0) & (pointing[lying] < 360)).all()
    assert patches.dtype == np.uint8 and patches.shape[1:] == (64, 64, 3)
    assert set(labels.tolist()) <= set(range(len(SIZE_CLASSES)))
    assert set(colors.tolist()) <= {"red", "orange", "yellow", "green", "blue", "purple",
                                    "cyan", "black", "white", "clear"}
    assert set(np.unique(scene)) <= {7000, 7001} and got["samples"] == got["views"] == 0


def test_the_size_readers_start_from_a_folder_that_holds_both_files(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    (tmp_path / "pyramids-size.onnx").write_bytes(b"x")
    with pytest.raises(SystemExit):
        train_lease.main(["--work", str(tmp_path), "--out", str(tmp_path), "--networks",
                          "size", "--size-init", str(tmp_path)])
    assert f"--size-init {tmp_path}: no pyramids-white-clear.onnx there" in \
        capsys.readouterr().err
    assert train_lease.TRAINERS["size"] == ("size", "white-clear", "pointing", "color")
    # a lent machine sends back 8 files at most
    assert len(dict(train_lease.RESULTS)["size"]) <= 8


def test_a_pale_recipe_recolours_most_pyramids_white_or_clear(tmp_path: Path):
    shares = {}
    for recipe in ("crowded", "crowded-pale"):
        train_lease.render_and_cut(8, 4325, recipe, 2, tmp_path / recipe, ("size",))
        with np.load(tmp_path / recipe / "size_000008.npz") as z:
            colors = z["colors"]
        shares[recipe] = float(np.isin(colors, ["white", "clear"]).mean())
    assert train_lease.RECIPES["crowded-pale"].pale == 0.6
    assert shares["crowded-pale"] > 0.4 > shares["crowded"]


def test_the_verifier_samples_are_cut_with_the_heat_map_asked_for(tmp_path: Path):
    from models import model_path
    from vision.pyramids.heat import HEAT_MODEL_FLOAT
    from vision.pyramids.verify import FEATURES

    heat = {}
    for name, cut_heat in (("shipped", None), ("float", model_path(HEAT_MODEL_FLOAT))):
        train_lease.render_and_cut(9, 4326, "mixed", 2, tmp_path / name, ("verify",),
                                   cut_heat=cut_heat)
        with np.load(tmp_path / name / "verify_000009.npz") as z:
            heat[name] = z["features"][:, FEATURES.index("heat")]
    # the int8 copy the finder runs and its float original read nearly alike, not the same
    n = min(len(heat["shipped"]), len(heat["float"]))
    assert n > 0 and not np.array_equal(heat["shipped"][:n], heat["float"][:n])


def test_batches_are_gathered_in_order_and_a_missing_kind_is_named(tmp_path: Path):
    for k in (2, 0, 1):
        np.savez(tmp_path / f"heat_{k:06d}.npz", views=np.full((k + 1, 2), k), other=[k])
    data = train_lease.load_batches(tmp_path, "heat", ("views",))
    assert list(data) == ["views"]
    assert data["views"][:, 0].tolist() == [0, 1, 1, 2, 2, 2]
    with pytest.raises(ValueError, match="no verify_\\*.npz batches in"):
        train_lease.load_batches(tmp_path, "verify", ("labels",))


def test_no_batch_starts_that_cannot_end_before_the_deadline(tmp_path: Path):
    assert train_lease.render_until(tmp_path, 1.0, 2, 10) == []
    assert list(tmp_path.iterdir()) == []


def test_the_trained_files_are_copied_to_out(tmp_path: Path):
    work, out = tmp_path / "work", tmp_path / "out"
    (work / "heat").mkdir(parents=True)
    (work / "heat" / "best.pt").write_bytes(b"w")
    (work / "heat" / "views.npz").write_bytes(b"big")
    assert train_lease.collect(work, out) == [out / "heat" / "best.pt"]
    assert sorted(p.name for p in out.rglob("*")) == ["best.pt", "heat"]


@pytest.mark.parametrize("argv, message", [
    (["--render-seconds", "600", "--total-seconds", "540"], "--render-seconds <"),
    (["--scenes", "1000"], "--scenes: expected 1 to 999"),
    (["--networks", "heat,colour"],
     "--networks 'heat,colour': expected some of heat, verify, size"),
    (["--networks", "heat", "--size-init", "models"], "--size-init is for the size readers"),
    (["--heat-init", "nowhere.onnx"], "--heat-init nowhere.onnx: no such file"),
    (["--networks", "verify", "--heat-init", "x.onnx"], "--heat-init is for the heat map"),
    (["--networks", "heat", "--verify-init", "models/pyramids-verify.onnx"],
     "--verify-init is for the verifier"),
    (["--verify-init", "nowhere.onnx"], "--verify-init nowhere.onnx: no such file"),
    (["--networks", "heat", "--cut-heat", "models/pyramids-heat.onnx"],
     "--cut-heat is for the verifier's samples"),
    (["--cut-heat", "nowhere.onnx"], "--cut-heat nowhere.onnx: no such file"),
    (["--networks", "heat", "--verify-lr", "0.0001"], "--verify-lr is for the verifier"),
    (["--verify-lr", "0"], "--verify-lr 0: expected a learning rate between 0 and 1"),
    (["--recipes", "mixed,crowded-lamp,beach"],
     "--recipes 'mixed,crowded-lamp,beach': expected some of mixed, crowded, mixed-lamp"),
])
def test_a_bad_budget_is_refused_by_name(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                         argv: list[str], message: str):
    with pytest.raises(SystemExit):
        train_lease.main(["--work", str(tmp_path), "--out", str(tmp_path), *argv])
    assert message in capsys.readouterr().err


def test_with_nothing_rendered_and_no_batches_kept_it_stops_by_name(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    pytest.importorskip("torch")
    with pytest.raises(SystemExit):
        train_lease.main(["--work", str(tmp_path / "w"), "--out", str(tmp_path / "o"),
                          "--render-seconds", "0.5", "--total-seconds", "60", "--device",
                          "cpu"])
    assert "no batch was rendered and cut" in capsys.readouterr().err


def test_without_torch_it_names_the_train_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]):
    import sys

    monkeypatch.setitem(sys.modules, "torch", None)     # import torch raises ImportError
    with pytest.raises(SystemExit):
        train_lease.main(["--work", str(tmp_path / "w"), "--out", str(tmp_path / "o")])
    assert "needs the train extra (torch" in capsys.readouterr().err
    assert not (tmp_path / "w").exists()


def test_the_verifiers_learning_rate_reaches_its_trainer(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch):
    """--verify-lr goes from the command line through train_both to train_verify.train
    (a lease's fine-tune at the default 0.001 never beat its start; at 0.0001 it did).
    (torch stood in for: CI installs no train extra)"""
    import sys
    import types

    import vision.train_extra
    from vision.pyramids import train_verify

    monkeypatch.setattr(vision.train_extra, "train_extra_problem", lambda *a: None)
    monkeypatch.setitem(sys.modules, "torch", types.ModuleType("torch"))
    (tmp_path / "w").mkdir()
    np.savez(tmp_path / "w" / "verify_000001.npz", x=np.zeros(1))
    monkeypatch.setattr(train_lease, "render_until", lambda *a, **k: [])
    passed: dict[str, object] = {}
    monkeypatch.setattr(train_lease, "train_both",
                        lambda *a, **k: passed.update(args=a) or {"verify": 0})
    assert train_lease.main(["--work", str(tmp_path / "w"), "--out", str(tmp_path / "o"),
                             "--networks", "verify", "--verify-lr", "0.0001",
                             "--device", "cpu"]) == 0
    assert passed["args"][-1] == pytest.approx(1e-4)

    got: dict[str, object] = {}
    monkeypatch.setattr(train_lease, "load_batches", lambda *a: {})
    monkeypatch.setattr(train_verify, "train",
                        lambda *a, **k: (got.update(k), (tmp_path, {"loss": 0.0}))[1])
    (tmp_path / "verify").mkdir()
    train_lease._train_verify(tmp_path, 0.1, "cpu", None, 1e-4)
    assert got["lr"] == pytest.approx(1e-4)


def test_it_does_not_ask_for_ultralytics(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]):
    """A lent GPU machine has torch and onnx but no ultralytics, which none of these
    networks needs: the check of the train extra asks for torch, onnx and sympy alone
    (with ultralytics asked for, every lease stopped at the start)."""
    import vision.train_extra

    asked: list[tuple[str, ...]] = []

    def problem(packages: tuple[str, ...] = vision.train_extra.TRAIN_PACKAGES) -> str:
        asked.append(tuple(packages))
        return "stopped here"

    monkeypatch.setattr(vision.train_extra, "train_extra_problem", problem)
    with pytest.raises(SystemExit):
        train_lease.main(["--work", str(tmp_path / "w"), "--out", str(tmp_path / "o")])
    assert "stopped here" in capsys.readouterr().err
    assert asked == [("torch", "onnx", "sympy")]


def test_a_decktet_recipe_renders_decktet_tables(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch):
    from vision.synth.deck import shared_dir

    sd = shared_dir()
    if sd is None or not (sd / "decks" / "decktet").is_dir():
        pytest.skip("shared/decks not found")
    assert train_lease.RECIPES["mixed-decktet"].deck == "decktet"
    seen = []
    real = train_lease.shutil.rmtree

    def keep_truth(folder):      # read one truth record before the batch's images go
        import json

        truth = next(Path(folder).rglob("*.json"))
        if truth.name != "dataset.json":
            seen.append(json.loads(truth.read_text(encoding="utf-8")))
        real(folder)

    monkeypatch.setattr(train_lease.shutil, "rmtree", keep_truth)
    train_lease.render_and_cut(10, 4327, "mixed-decktet", 2, tmp_path, ("heat",))
    monkeypatch.undo()
    assert (tmp_path / "heat_000010.npz").is_file()
    ids = {c["id"] for t in seen for c in t.get("cards", [])}
    assert ids and all(i == "back" or i.startswith("decktet-") for i in ids)


def test_a_blur_recipe_renders_its_share_of_blurred_frames(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch):
    assert train_lease.RECIPES["crowded-blur"].blur == 0.7
    assert train_lease.RECIPES["mixed-blur"].blur == 0.6
    assert all(r.blur is None for name, r in train_lease.RECIPES.items()
               if not name.endswith("-blur"))
    styles, cards = [], []
    real = train_lease.shutil.rmtree

    def keep_truth(folder):      # read the batch's truth and dataset card before they go
        import json

        for truth in sorted(Path(folder).rglob("[0-9]*.json")):
            styles.append(json.loads(truth.read_text(encoding="utf-8"))["style"])
        cards.extend(p.read_text(encoding="utf-8") for p in Path(folder).rglob("DATASET.md"))
        real(folder)

    monkeypatch.setattr(train_lease.shutil, "rmtree", keep_truth)
    train_lease.render_and_cut(11, 4328, "crowded-blur", 4, tmp_path, ())
    monkeypatch.undo()
    assert len(styles) == 4 and len(cards) == 1
    assert "images out of focus or shaken: 70%, half each" in cards[0]
    # a blurred frame is out of focus (sigma over 0.75 px) or shaken, never both
    blurred = [s["blur_sigma"] > 0.75 or s["motion_blur_px"] > 0 for s in styles]
    assert 1 <= sum(blurred) <= 4
