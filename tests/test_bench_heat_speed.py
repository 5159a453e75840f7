"""bench/heat_speed.py, the timing models/pyramids-heat.md quotes for the heat map."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("cv2")
pytest.importorskip("onnxruntime")


def test_the_heat_map_is_timed_on_the_view_the_finder_gives_it(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import bench.heat_speed as heat_speed
    from bench.heat_speed import main

    written: list[tuple[str, str]] = []
    monkeypatch.setattr(heat_speed, "write_section", lambda t, text: written.append((t, text)))
    assert main(["--runs", "3"]) == 0
    out = capsys.readouterr().out
    shape = re.search(r"^input \(1, 3, (\d+), (\d+)\);", out, re.M)
    assert shape is not None, out
    assert all(int(side) % 4 == 0 and int(side) > 200 for side in shape.groups())
    timed = re.findall(r"^(pyramids-heat\S*) on (\d) thread\(s\): median ([\d.]+) ms a view "
                       r"\(CPU ([\d.]+) ms\), 3 runs$", out, re.M)
    assert [(name, threads) for name, threads, _, _ in timed] == [
        ("pyramids-heat.int8.onnx", "1"), ("pyramids-heat.int8.onnx", "2"),
        ("pyramids-heat.onnx", "1"), ("pyramids-heat.onnx", "2")]
    assert all(float(wall) > 0 and float(cpu) > 0 for _, _, wall, cpu in timed)
    # the figures go to bench/RESULTS.md's own section, with the command
    [(title, text)] = written
    assert title == "## Heat map speed" and text.startswith(title)
    assert "Command: `python bench/heat_speed.py --runs 3`" in text
    assert text.count("| pyramids-heat") == 4
    assert main(["--runs", "3", "--no-write"]) == 0 and len(written) == 1
