"""``companion print-mat``: the mat's four corner markers as pages, and its mat file."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

cv2 = pytest.importorskip("cv2")

from calibration.mat import load_mat  # noqa: E402
from calibration.mat_sheets import png_dpi  # noqa: E402
from calibration.table import TableCalibrator, marker_ids  # noqa: E402
from companion.cli import main  # noqa: E402


def _table_of(folder: Path, mat_mm: tuple[float, float], px_per_mm: float = 1.0) -> np.ndarray:
    """A flat table seen straight from above at ``px_per_mm``, each printed page laid with
    its marker's centre on a corner of a ``mat_mm`` rectangle, its top to the north."""
    w, h = mat_mm
    pad = 160.0
    table = np.full((int((h + 2 * pad) * px_per_mm), int((w + 2 * pad) * px_per_mm)), 120,
                    np.uint8)
    for k, (x, y) in enumerate([(0, 0), (w, 0), (w, h), (0, h)]):
        page = cv2.imread(str(folder / f"marker-{k}.png"), cv2.IMREAD_GRAYSCALE)
        ppm = png_dpi((folder / f"marker-{k}.png").read_bytes()) / 25.4
        small = cv2.resize(page, None, fx=px_per_mm / ppm, fy=px_per_mm / ppm,
                           interpolation=cv2.INTER_AREA)
        # the marker's centre on the page, where the detector finds it
        detector = cv2.aruco.ArucoDetector(
            cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50))
        corners, ids, _ = detector.detectMarkers(small)
        assert ids is not None and ids.ravel().tolist() == [k], ids
        cx, cy = corners[0][0].mean(axis=0)
        top = int(round((y + pad) * px_per_mm - cy))
        left = int(round((x + pad) * px_per_mm - cx))
        # (a page reaching past the table's picture is cut, as a photo would frame it)
        t0, l0 = max(top, 0), max(left, 0)
        t1 = min(top + small.shape[0], table.shape[0])
        l1 = min(left + small.shape[1], table.shape[1])
        table[t0:t1, l0:l1] = small[t0 - top:t1 - top, l0 - left:l1 - left]
    return cv2.cvtColor(table, cv2.COLOR_GRAY2BGR)


@pytest.mark.parametrize("paper, size", [("a4", (900.0, 650.0)), ("letter", (700.0, 520.0))])
def test_the_printed_pages_laid_out_calibrate_the_table(tmp_path: Path, paper: str,
                                                        size: tuple[float, float],
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    """The four pages, laid with their markers' centres on the mat file's rectangle, give
    a calibration from all four markers that puts the table frame where the spec has it:
    there was no way to make the mat at all."""
    folder = tmp_path / "mat"
    w, h = size
    assert main(["print-mat", str(folder), "--paper", paper, "--dpi", "150",
                 "--width-mm", f"{w:g}", "--height-mm", f"{h:g}"]) == 0
    out = capsys.readouterr().out
    assert f"centres {w:g} mm apart east-west and {h:g} mm north-south" in out
    mat = load_mat(folder / "mat.json")
    assert (mat.width_mm, mat.height_mm, mat.marker_size_mm) == (w, h, 60.0)
    # the piles as far from the south-west marker as on the standard mat
    assert mat.zones["draw"] == (20.0, h - 90.0, 110.0, h - 10.0)
    for k in range(4):
        data = (folder / f"marker-{k}.png").read_bytes()
        assert png_dpi(data) == pytest.approx(150, abs=0.05)   # (whole dots a metre)
        page = cv2.imread(str(folder / f"marker-{k}.png"), cv2.IMREAD_GRAYSCALE)
        mm = {"a4": (210, 297), "letter": (215.9, 279.4)}[paper]
        assert page.shape == (round(mm[1] / 25.4 * 150), round(mm[0] / 25.4 * 150))
    image = _table_of(folder, size)
    # the instructions page shows the four markers without their border: none to read
    guide = cv2.imread(str(folder / "instructions.png"), cv2.IMREAD_GRAYSCALE)
    # (none read: None from OpenCV 4, an empty array from OpenCV 5)
    assert marker_ids(guide, "DICT_4X4_50") is None
    cal = TableCalibrator(mat).calibrate(image)
    assert cal.calibrated and sorted(cal.markers_seen) == [0, 1, 2, 3]
    assert cal.reprojection_mm is not None and cal.reprojection_mm < 1.0
    # the table frame: the picture's pixel (x + pad, y + pad) is (x, y) mm
    H = np.asarray(cal.H)
    for x, y in [(0.0, 0.0), (w, h), (w / 2, h / 3)]:
        p = H @ np.array([x + 160.0, y + 160.0, 1.0])
        assert np.hypot(p[0] / p[2] - x, p[1] / p[2] - y) < 1.0


def test_print_mat_never_writes_over_what_it_did_not_write(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]
                                                           ) -> None:
    folder = tmp_path / "pages"
    folder.mkdir()
    photo = folder / "marker-2.png"
    cv2.imwrite(str(photo), np.full((30, 40, 3), 90, np.uint8))
    before = photo.read_bytes()
    assert main(["print-mat", str(folder)]) == 2
    assert f"{str(photo)!r} exists and is not a mat page" in capsys.readouterr().err
    assert photo.read_bytes() == before and not (folder / "marker-0.png").exists()
    photo.unlink()
    (folder / "mat.json").write_text(json.dumps({"K": [[1]]}))
    assert main(["print-mat", str(folder)]) == 2
    assert "exists and is not a mat file" in capsys.readouterr().err
    (folder / "mat.json").unlink()
    # its own pages and mat file are replaced, and said to be
    assert main(["print-mat", str(folder), "--dpi", "72"]) == 0
    assert "replacing" not in capsys.readouterr().err
    assert main(["print-mat", str(folder), "--dpi", "72"]) == 0
    err = capsys.readouterr().err
    assert f"replacing the mat page {folder / 'marker-0.png'}" in err
    assert f"replacing the mat file {folder / 'mat.json'}" in err
    # a file for the folder, a marker no page holds, and a play area the piles do not fit
    assert main(["print-mat", str(folder / "mat.json")]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err
    assert main(["print-mat", str(tmp_path / "big"), "--marker-mm", "150"]) == 2
    assert "does not fit on the A4 page" in capsys.readouterr().err
    # the options typed are named, not a mat file's fields
    assert main(["print-mat", str(tmp_path / "small"), "--width-mm", "50", "--height-mm",
                 "50"]) == 2
    assert "--marker-mm 60 must be smaller than the play area" in capsys.readouterr().err
    assert main(["print-mat", str(tmp_path / "small"), "--marker-mm", "5"]) == 2
    assert "--marker-mm 5: a marker the camera can read is at least 10 mm" in \
        capsys.readouterr().err
    assert main(["print-mat", str(tmp_path / "narrow"), "--width-mm", "100", "--dpi",
                 "72"]) == 0
    assert "left out of the mat file" in capsys.readouterr().err
    assert load_mat(tmp_path / "narrow" / "mat.json").zones == {}


def test_markers_whose_pages_would_lie_over_each_other_are_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """60 mm markers 61 mm apart: the four pages were written, two corners' markers and
    white borders over each other (neither readable, no play area between them)."""
    for extra in (["--width-mm", "61"], ["--height-mm", "89"],
                  ["--marker-mm", "100", "--width-mm", "149"]):
        assert main(["print-mat", str(tmp_path / "m"), "--dpi", "72", *extra]) == 2, extra
        err = capsys.readouterr().err
        assert "with their white border reach" in err and "would lie over each other" in err
        assert "must be at least" in err and "Traceback" not in err
        assert not (tmp_path / "m").exists()
    # just apart is fine
    assert main(["print-mat", str(tmp_path / "m"), "--dpi", "72", "--width-mm", "90"]) == 0


def test_the_pages_laid_out_are_read_as_no_cards_or_pyramids(tmp_path: Path) -> None:
    """A page laid across the play area read as a card, and text or a drawing beside a
    marker as a face-down one (a tester's renders: 6 of 9 cameras on the standard mat).
    Each page now lies outside the play area with nothing on it but its marker and ticks."""
    from vision.pipeline import TablePipeline

    folder = tmp_path / "mat"
    assert main(["print-mat", str(folder), "--dpi", "150"]) == 0
    image = _table_of(folder, (900.0, 650.0), px_per_mm=1.2)
    with TablePipeline(mat=load_mat(folder / "mat.json")) as pipeline:
        record = pipeline.observe(image, "laid-out")
    assert record["calibrated"] and sorted(record["calibration"]["markers_seen"]) == [0, 1, 2, 3]
    assert record["cards"] == [] and record["pyramids"] == [], record["cards"]
