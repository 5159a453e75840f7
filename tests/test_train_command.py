"""`companion train pyramids --init/--only`: which weights each classifier goes on from (no
training here: that needs the train extra and is never run in CI)."""

from __future__ import annotations

from pathlib import Path

import pytest

from companion.commands.train import TrainError, _pyramid_init


@pytest.fixture(autouse=True)
def copies(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Path, Path]]:
    """The int8 copies the trainers ask for, the readers' and the verifier's (their training
    is faked here, so is this): (the exported file, the cut it is measured on)."""
    from vision.pyramids import quantize

    asked: list[tuple[Path, Path]] = []

    def int8_copy(src: Path, cut: Path) -> Path:
        asked.append((src, cut))
        return quantize.int8_path(src)

    def verifier_int8(src: Path, cut: Path) -> tuple[Path, dict[str, float]]:
        asked.append((src, cut))
        return quantize.int8_path(src), {"p99_diff": 0.05}

    monkeypatch.setattr(quantize, "int8_copy", int8_copy)
    monkeypatch.setattr(quantize, "verifier_int8", verifier_int8)
    return asked


def _touch(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"weights")
    return path


def test_init_takes_named_weights_or_an_earlier_out_folder(tmp_path: Path) -> None:
    named = _touch(tmp_path / "a" / "shape-best.pt")
    assert _pyramid_init(tmp_path / "a", ("shape",)) == {"shape": named}
    # an earlier `train pyramids --out b`: the weights where ultralytics left them
    color = _touch(tmp_path / "b" / "runs" / "color" / "weights" / "best.pt")
    shape = _touch(tmp_path / "b" / "runs" / "shape" / "weights" / "best.pt")
    assert _pyramid_init(tmp_path / "b", ("color", "shape")) == {"color": color,
                                                                 "shape": shape}
    assert _pyramid_init(tmp_path / "b", ("shape",)) == {"shape": shape}


def test_init_without_the_wanted_weights_names_the_folder_and_the_files(tmp_path: Path
                                                                         ) -> None:
    _touch(tmp_path / "c" / "color-best.pt")
    with pytest.raises(TrainError, match=r"--init .*c: expected shape-best\.pt"):
        _pyramid_init(tmp_path / "c", ("shape",))


def test_an_unknown_classifier_is_refused_before_anything_is_imported() -> None:
    from vision.pyramids.train import train_pyramid_classifier

    with pytest.raises(ValueError, match="expected one or both of color, shape"):
        train_pyramid_classifier(Path("unused"), tasks=("colour",))


def test_the_size_reader_asks_for_rendered_folders_and_names_a_bad_one(tmp_path: Path
                                                                       ) -> None:
    import argparse

    from companion.commands.train import _pyramid_size

    args = argparse.Namespace(model="pyramid-size", render=None, out=tmp_path / "out",
                              jobs=1, minutes=0.1, threads=1, seed=0, batch=None, lr0=None)
    with pytest.raises(TrainError, match="train pyramid-size trains on rendered scenes"):
        _pyramid_size(args)
    args.render = [tmp_path / "photos"]
    with pytest.raises(TrainError, match="photos is not a rendered synth folder"):
        _pyramid_size(args)


def test_the_white_or_clear_reader_asks_for_rendered_folders(tmp_path: Path) -> None:
    import argparse

    from companion.commands.train import _pyramid_size

    args = argparse.Namespace(model="pyramid-white-clear", render=None, out=tmp_path / "o",
                              jobs=1, minutes=0.1, threads=1, seed=0, batch=None, lr0=None)
    with pytest.raises(TrainError, match="train pyramid-white-clear trains on rendered"):
        _pyramid_size(args)


@pytest.mark.parametrize("module, cache, extra", [
    ("vision.pyramids.train_size", "size.npz", []),
    ("vision.pyramids.train_verify", "samples.npz", []),
    ("vision.pyramids.finetune", "shape.npz", []),
    ("vision.pyramids.finetune", "color.npz", ["--task", "color"]),
])
def test_a_patch_trainer_run_by_hand_names_the_samples_it_lacks(
        module: str, cache: str, extra: list[str], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """`python -m vision.pyramids.<trainer>` shares one command line
    (train_colors.patch_trainer_parser): with neither its cut samples nor --render folders
    it stops before any work, naming the file it looked for."""
    import importlib

    main = importlib.import_module(module).main
    with pytest.raises(SystemExit) as stop:
        main(["--out", str(tmp_path), *extra])
    assert stop.value.code == 2
    assert f"{tmp_path / cache} does not exist: give --render folders" in capsys.readouterr().err


def test_training_shows_its_progress_without_being_asked(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    """The trainers log their cutting and epochs at info: ``companion train`` sets that
    level without -v (the other commands stay at warnings), and -vv still gives debug."""
    import argparse

    from companion import cli

    parser = cli.build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name in ("train", "games"):   # stand-ins: nothing is trained or listed
        commands.choices[name].set_defaults(func=lambda args: 0)
    levels: list[int] = []
    monkeypatch.setattr(cli, "build_parser", lambda: parser)
    monkeypatch.setattr(cli, "configure_logging", levels.append)
    assert cli.main(["train", "pyramid-verify", "--out", "x"]) == 0
    assert cli.main(["-vv", "train", "pyramid-verify", "--out", "x"]) == 0
    assert cli.main(["games"]) == 0
    assert levels == [1, 2, 0]


@pytest.mark.parametrize("task, extra, minutes", [("size", [], 60.0),
                                                  ("white-clear", [], 14.0),
                                                  ("color", [], 40.0),
                                                  ("white-clear", ["--minutes", "3"], 3.0)])
def test_python_m_train_size_takes_the_tasks_own_budget(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, task: str, extra: list[str],
        minutes: float) -> None:
    """``python -m vision.pyramids.train_size --task white-clear`` trains as long as
    ``companion train pyramid-white-clear`` by default (both read ``MINUTES``)."""
    from vision.pyramids import train_size

    assert train_size.MINUTES == {"size": 60.0, "white-clear": 14.0, "pointing": 40.0,
                                  "color": 40.0}
    budgets: list[float] = []

    def train(data, out, budget, *rest):  # type: ignore[no-untyped-def]
        budgets.append(budget)
        return out / "model.onnx", {}

    monkeypatch.setattr(train_size, "cut", lambda renders, cache, jobs: {})
    monkeypatch.setattr(train_size, "train", train)
    from vision.pyramids import train_colors

    monkeypatch.setattr(train_colors, "train_extra_problem", lambda packages: None)
    argv = ["--out", str(tmp_path), "--render", str(tmp_path), "--task", task, *extra]
    assert train_size.main(argv) == 0
    assert budgets == [minutes]


@pytest.mark.parametrize("model, module, cache", [
    ("pyramid-verify", "train_verify", "samples.npz"),
    ("pyramid-size", "train_size", "size.npz"),
    ("pyramid-white-clear", "train_size", "size.npz"),
    ("pyramid-color-read", "train_size", "size.npz"),
])
def test_a_trainer_trains_again_on_its_cut_samples_without_the_renders(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, model: str, module: str,
        cache: str) -> None:
    """The renders behind a cut can be gigabytes: once ``--out`` holds the cut samples,
    ``companion train`` trains on them with no ``--render``; without them it says both
    ways to give it data."""
    import argparse
    import importlib

    from companion.commands import train as command

    trainer = importlib.import_module(f"vision.pyramids.{module}")
    out = tmp_path / "out"
    args = argparse.Namespace(model=model, render=None, out=out, jobs=1, minutes=0.1,
                              threads=1, seed=0, batch=None, lr0=None, device="cpu",
                              init=None, candidates="all", samples=None)
    run = command._pyramid_verify if model == "pyramid-verify" else command._pyramid_size
    with pytest.raises(TrainError, match=f"give --render FOLDER .*or keep .*{cache}"):
        run(args)
    _touch(out / cache)
    asked: list[list[Path]] = []

    def cut(folders, cache_file, jobs, *rest):  # type: ignore[no-untyped-def]
        asked.append(list(folders))
        assert cache_file == out / cache
        return {}

    figures = {"accuracy": 0.9, "kept_at_99": 0.9, "pips": 0.9, "pose": 0.9,
               "train_seconds": 1}
    monkeypatch.setattr(trainer, "prepare" if module == "train_verify" else "cut", cut)
    monkeypatch.setattr(trainer, "train", lambda *a, **k: (out / "m.onnx", figures))
    assert run(args) == 0
    assert asked == [[]]


def test_the_heat_map_trains_again_on_its_prepared_views_without_the_renders(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """``companion train pyramid-heat`` with no ``--render``: refused, naming views.npz,
    until ``--out`` holds it; then trained on it alone. The patch classifiers
    (``pyramids``) keep no such cut and still ask for renders."""
    import argparse

    from companion.commands import train as command
    from vision.pyramids import train_heat

    out = tmp_path / "out"
    args = argparse.Namespace(model="pyramid-heat", render=None, out=out, jobs=1,
                              minutes=0.1, threads=1, seed=0, batch=None, lr0=None,
                              device="cpu", width=8, ppm=0.5, init=None, only=None)
    with pytest.raises(TrainError, match=r"give --render FOLDER .*or keep .*views\.npz"):
        command._pyramids(args)
    _touch(out / "views.npz")
    asked: list[tuple[list[Path], Path]] = []

    def prepare(folders, cache, jobs, ppm):  # type: ignore[no-untyped-def]
        asked.append((list(folders), cache))
        return {}

    monkeypatch.setattr(train_heat, "prepare", prepare)
    monkeypatch.setattr(train_heat, "train", lambda *a, **k: out / "pyramids-heat.onnx")
    assert command._pyramids(args) == 0
    assert asked == [([], out / "views.npz")]
    args.model = "pyramids"
    with pytest.raises(TrainError, match="train pyramids trains on rendered scenes: give "
                                         r"--render FOLDER \(repeatable; make them with "
                                         r"'companion synth --game mixed'\)$"):
        command._pyramids(args)


@pytest.mark.parametrize("device, torch_device", [("cpu", "cpu"), ("0", "cuda")])
def test_the_verifier_trains_on_the_gpu_that_device_names(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, device: str,
        torch_device: str, copies: list[tuple[Path, Path]]) -> None:
    """``companion train pyramid-verify --device 0`` trains on the GPU, as the heat map
    does (it trained on the CPU whatever --device said); ``--init`` names the exported
    verifier it goes on from."""
    import argparse

    from companion.commands import train as command
    from vision.pyramids import train_verify

    out = tmp_path / "out"
    _touch(out / "samples.npz")
    args = argparse.Namespace(model="pyramid-verify", render=None, out=out, jobs=1,
                              minutes=0.1, threads=1, seed=0, batch=None, lr0=None,
                              device=device, init=str(tmp_path / "shipped.onnx"),
                              candidates="all", samples=None)
    asked: list[tuple[str, Path]] = []

    def train(*a, **k):  # type: ignore[no-untyped-def]
        asked.append((k["device"], k["init"]))
        return out / "m.onnx", {"accuracy": 0.9, "kept_at_99": 0.9, "train_seconds": 1}

    monkeypatch.setattr(train_verify, "prepare", lambda *a: {})
    monkeypatch.setattr(train_verify, "train", train)
    assert command._pyramid_verify(args) == 0
    assert asked == [(torch_device, tmp_path / "shipped.onnx")]
    # the finder runs the verifier's int8 copy, measured on the run's own cut
    assert copies == [(out / "m.onnx", out / "samples.npz")]


@pytest.mark.parametrize("model, task", [("pyramid-size", "size"),
                                         ("pyramid-white-clear", "white-clear"),
                                         ("pyramid-color-read", "color")])
@pytest.mark.parametrize("device, torch_device", [("cpu", "cpu"), ("0", "cuda")])
def test_the_size_readers_train_on_the_gpu_that_device_names_from_the_file_init_names(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, model: str, task: str, device: str,
        torch_device: str, copies: list[tuple[Path, Path]]) -> None:
    """``companion train pyramid-size --device 0 --init models/pyramids-size.onnx`` trains
    on the GPU from the shipped file (both readers trained on the CPU from random weights
    whatever --device and --init said); the learning rate is left to the trainer's
    default, which depends on --init."""
    import argparse

    from companion.commands import train as command
    from vision.pyramids import train_size

    out = tmp_path / "out"
    _touch(out / "size.npz")
    args = argparse.Namespace(model=model, render=None, out=out, jobs=1, minutes=0.1,
                              threads=1, seed=0, batch=None, lr0=None, device=device,
                              init=str(tmp_path / "shipped.onnx"))
    asked: list[tuple[str, str, Path, object]] = []

    def train(*a, **k):  # type: ignore[no-untyped-def]
        asked.append((k["task"], k["device"], k["init"], k["lr"]))
        return out / "m.onnx", {"pips": 0.9, "pose": 0.9, "accuracy": 0.9,
                                "train_seconds": 1}

    monkeypatch.setattr(train_size, "cut", lambda *a: {})
    monkeypatch.setattr(train_size, "train", train)
    assert command._pyramid_size(args) == 0
    assert asked == [(task, torch_device, tmp_path / "shipped.onnx", None)]
    # the int8 copy the finder runs, measured on the run's own cut
    assert copies == [(out / "m.onnx", out / "size.npz")]


@pytest.mark.parametrize("candidates", ["all", "doubtful"])
def test_the_verifier_command_cuts_what_it_is_asked_and_trains_on_earlier_cuts_too(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, candidates: str) -> None:
    """``companion train pyramid-verify`` cuts the candidates ``--candidates`` names (every
    one the finder asks about by default) at the span it trains on alone, and with
    ``--samples`` trains on those cuts after its own; a missing one is named before any
    cutting."""
    from companion import cli
    from companion.commands import train as command
    from vision.pyramids import train_verify

    out = tmp_path / "out"
    _touch(out / "samples.npz")
    earlier = tmp_path / "earlier.npz"
    _touch(earlier)
    cut: list[tuple[str, tuple[float, ...]]] = []
    loaded: list[tuple[list[Path], float]] = []
    trained: list[object] = []

    def prepare(folders, cache, jobs, which, spans):  # type: ignore[no-untyped-def]
        cut.append((which, tuple(spans)))
        return {"own": True}

    def load_samples(paths, patch_mm):  # type: ignore[no-untyped-def]
        loaded.append((list(paths), patch_mm))
        return {"joined": True}

    def train(data, *a, **k):  # type: ignore[no-untyped-def]
        trained.append(data)
        return out / "m.onnx", {"accuracy": 0.9, "kept_at_99": 0.9, "train_seconds": 1}

    monkeypatch.setattr(train_verify, "prepare", prepare)
    monkeypatch.setattr(train_verify, "load_samples", load_samples)
    monkeypatch.setattr(train_verify, "train", train)
    parser = cli.build_parser()
    argv = ["train", "pyramid-verify", "--out", str(out)]
    argv += [] if candidates == "all" else ["--candidates", candidates]
    assert command._pyramid_verify(parser.parse_args(argv)) == 0
    assert command._pyramid_verify(parser.parse_args([*argv, "--samples", str(earlier)])) == 0
    span = (train_verify.PATCH_MM_TRAIN,)
    # the second run finds its own cut in the cache and reads it once, with the earlier one
    assert cut == [(candidates, span)]
    assert loaded == [([out / "samples.npz", earlier], train_verify.PATCH_MM_TRAIN)]
    assert trained == [{"own": True}, {"joined": True}]
    with pytest.raises(TrainError, match="--samples .*gone.npz: no such file"):
        command._pyramid_verify(parser.parse_args([*argv, "--samples",
                                                   str(tmp_path / "gone.npz")]))
    assert len(cut) == 1


def test_card_net_validation_renders_choose_the_best_epoch(monkeypatch: pytest.MonkeyPatch,
                                                           tmp_path: Path) -> None:
    """``companion train card-net --val-render`` cuts the cards of those tables (a seed apart
    from the training crops) and hands them to the trainer as the crops that choose the best
    epoch; a folder that is not rendered is named before anything is cut."""
    import argparse

    import numpy as np

    from companion.commands import train as command
    from vision.cards import train_net
    from vision.synth.deck import default_deck_dir

    deck = default_deck_dir("decktet")
    if not deck.is_dir():
        pytest.skip("no shared decks beside the repository")
    val = tmp_path / "val"
    _touch(val / "mat.json")
    cut: list[tuple[list[Path], str, int, int]] = []
    trained: dict[str, object] = {}

    def render_crops(dirs, deck_name, seed, per_card=2, **k):  # type: ignore[no-untyped-def]
        cut.append(([Path(d) for d in dirs], deck_name, seed, per_card))
        return np.zeros((3, 112, 64, 3), np.uint8), ["back", "back", "back"]

    def train(*a, **k):  # type: ignore[no-untyped-def]
        trained.update(k)
        return {"onnx": str(tmp_path / "card-net.onnx"), "best_val_top1": 0.9,
                "train_seconds": 1}

    monkeypatch.setattr(train_net, "render_crops", render_crops)
    monkeypatch.setattr(train_net, "train", train)
    args = argparse.Namespace(model="card-net", deck=str(deck), out=tmp_path / "out",
                              render=None, val_render=[val], per_card=10, minutes=0.1,
                              epochs=None, seed=5, jobs=1, threads=1, batch=None,
                              init=None, lr0=None, device="cpu")
    assert command._card_net(args) == 0
    assert cut == [([val], "decktet", 6, 1)]
    rendered_val = trained["rendered_val"]
    assert isinstance(rendered_val, tuple) and rendered_val[1] == ["back"] * 3
    args.val_render = [tmp_path / "not-rendered"]
    with pytest.raises(TrainError, match="not-rendered is not a rendered synth folder"):
        command._card_net(args)


@pytest.mark.parametrize("extra, words", [
    (["--minutes", "0"], "expected a positive number, got '0'"),
    (["--hours", "nan"], "expected a positive number, got 'nan'"),
    (["--lr0", "-1"], "expected a positive number, got '-1'"),
    (["--decktet-share", "2"], "expected a share from 0 to 1"),
    (["--workers", "-1"], "expected a whole number of 0 or more"),
    (["--device", "foo"], "expected cpu or a CUDA device such as 0"),
])
def test_bad_numbers_and_devices_are_refused_before_any_work(
        extra: list[str], words: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
        ) -> None:
    from companion.cli import main

    with pytest.raises(SystemExit):
        main(["train", "pyramid-verify", "--out", str(tmp_path / "o"), *extra])
    assert words in capsys.readouterr().err


def test_a_bad_render_folder_or_out_file_is_named_before_rendering(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("ultralytics")
    from companion.cli import main

    # (the card detector renders its validation scenes first when none are given)
    assert main(["train", "cards", "--out", str(tmp_path / "o"),
                 "--render", str(tmp_path / "nowhere")]) == 2
    assert "nowhere is not a rendered synth folder" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
    (tmp_path / "afile").write_text("x")
    assert main(["train", "cards", "--out", str(tmp_path / "afile")]) == 2
    assert "--out" in capsys.readouterr().err


def test_a_train_extra_installed_in_part_is_named_before_any_work(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """``pip install ultralytics`` alone leaves out onnx, which every export needs: said at
    once, before any rendering or training (it once showed only after the whole budget)."""
    import sys

    from companion.cli import main

    monkeypatch.setitem(sys.modules, "onnx", None)      # as if it were not installed
    for model in ("card-net", "pyramid-size", "cards"):
        assert main(["train", model, "--out", str(tmp_path / model)]) == 2
        err = capsys.readouterr().err
        assert "needs the train extra (" in err and "onnx" in err, err
        assert "pip install -e '.[train]'" in err
        assert not (tmp_path / model).exists()


def test_the_patch_trainers_name_a_missing_train_extra_before_any_work(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """``python -m vision.pyramids.finetune`` (a README command) cut its samples and then
    stopped on a traceback without torch; the plain-torch networks ask for no ultralytics."""
    import sys

    from vision.pyramids import finetune, train_verify

    for name in ("torch", "ultralytics"):     # as if they were not installed
        monkeypatch.setitem(sys.modules, name, None)
    for module in (finetune, train_verify):
        with pytest.raises(SystemExit) as stop:
            module.main(["--out", str(tmp_path / "run"), "--render", str(tmp_path)])
        assert stop.value.code == 2
        err = capsys.readouterr().err
        assert "needs the train extra (torch" in err and "pip install -e '.[train]'" in err
        assert ("ultralytics" in err) == (module is finetune), err
    assert not (tmp_path / "run").exists()
    from companion.cli import main

    assert main(["train", "pyramid-verify", "--out", str(tmp_path / "v")]) == 2
    assert "ultralytics" not in capsys.readouterr().err
