"""bench/colors.py: a dim table's pyramids named right are learned, and each named every
other colour is judged as calibrate-colors judges it."""

from __future__ import annotations

import pytest

pytest.importorskip("cv2")

from bench.colors import _seeds, run  # noqa: E402
from companion.commands.calibrate_colors import another_colour  # noqa: E402


def test_seed_ranges() -> None:
    assert _seeds("700-702,800") == [700, 701, 702, 800]


def test_one_dim_table(tarot) -> None:
    from bench.colors import scene

    names = scene(1003, (0.2, 0.45), tarot)[2]
    fig = run([1003], (0.2, 0.45))
    assert (fig["pictures"], fig["counted"], fig["pyramids"]) == (1, 1, len(names))
    assert fig["misread"] == 0 and fig["refused"] == []
    assert fig["wrong"] == 9 * len(names)
    # every one read as its colour: the wrong names refused are those another_colour
    # refuses for it (a hue's pyramid named black among them)
    assert fig["caught"] == sum(another_colour(o, n) for n in names
                                for o in ("red", "orange", "yellow", "green", "blue",
                                          "purple", "cyan", "black", "white", "clear")
                                if o != n)


def test_main_writes_its_section(monkeypatch, capsys) -> None:
    import bench.colors as colors

    written: list[tuple[str, str]] = []
    monkeypatch.setattr(colors, "write_section", lambda t, text: written.append((t, text)))
    assert colors.main(["--seeds", "1003"]) == 0
    [(title, text)] = written
    assert title == "## Colour calibration" and text.startswith(title)
    assert "Command: `python bench/colors.py --seeds 1003`" in text
    row = next(line for line in text.splitlines() if line.startswith("| 1 |"))
    assert row.split("|")[2].strip() == "1"    # counted
    assert text in capsys.readouterr().out
    colors.main(["--seeds", "1003", "--no-write"])
    assert len(written) == 1


@pytest.mark.parametrize("args, words", [
    (["--seeds", "abc"], "--seeds 'abc': seeds are whole numbers or ranges"),
    (["--seeds", "5-3"], "--seeds '5-3': no seeds"),
    (["--exposure", "0.5"], "--exposure '0.5': two exposures, low and high"),
    (["--exposure", "0.5,x"], "--exposure '0.5,x': two exposures, low and high")])
def test_bad_arguments_are_named_not_a_traceback(args: list[str], words: str,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """A seed that is no number, a range with no seeds in it (nothing rendered: the
    median of nothing) or one exposure were a Python traceback."""
    import bench.colors as colors

    with pytest.raises(SystemExit) as exit_:
        colors.main(args + ["--no-write"])
    assert exit_.value.code == 2
    assert words in capsys.readouterr().err
