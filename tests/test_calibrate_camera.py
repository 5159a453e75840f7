"""``companion calibrate-camera``: synthetic photos of a ChArUco board taken through the
renderer's camera model (known K and lens distortion, nine poses) must give back K within 2%
and a distortion model that makes the board's corners an ideal pinhole image again; bad
photos are skipped by name and too few views is a clean error. The camera file round-trips
through :func:`calibration.intrinsics.load_intrinsics`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

cv2 = pytest.importorskip("cv2")

from calibration.intrinsics import (
    BoardSpec,
    IntrinsicsError,
    default_camera_path,
    detect_board,
    lens_fold,
    load_intrinsics,
    read_camera_file,
    save_intrinsics,
)
from companion.cli import main
from vision.synth.camera import Camera, distortion_maps, look_camera, undistort_points

W, H = 1280, 720
F_X, F_Y = 1000.0, 1008.0
PRINCIPAL_OFFSET = (6.0, -4.0)       # px off the image centre: cx, cy must be found, not assumed
DIST = np.array([-0.25, 0.09, 0.0008, -0.0006, -0.01])  # a wide webcam's barrel distortion
BOARD = BoardSpec()                  # the command's defaults: 7x5, 30/22 mm, DICT_5X5_100
ORIGIN_MM = (400.0, 300.0)           # where the board's corner lies on the table
TEX_PX_PER_MM = 4.0                  # board texture resolution (~ the image's, no aliasing)
# (tilt deg, yaw deg, tilt direction deg, distance mm, aim offset from the board centre mm):
# tilted views from all sides, the board pushed toward different parts of the image
POSES = [(0, 0, 0, 420, (0, 0)), (25, 10, 0, 450, (60, 30)), (30, -20, 90, 430, (-70, 20)),
         (35, 30, 180, 460, (50, -40)), (30, 80, 270, 440, (-60, -30)),
         (20, -45, 45, 400, (90, 50)), (40, 15, 135, 480, (-80, 40)),
         (15, 60, 225, 380, (70, -50)), (28, -70, 315, 420, (-40, -55))]


def _camera(tilt: float, yaw: float, tdir: float, dist_mm: float,
            aim: tuple[float, float]) -> Camera:
    bw, bh = BOARD.size_mm
    target = (ORIGIN_MM[0] + bw / 2 + aim[0], ORIGIN_MM[1] + bh / 2 + aim[1])
    cam = look_camera(target, dist_mm, tilt, yaw, tdir, F_X, W, H, DIST,
                      principal_offset=PRINCIPAL_OFFSET)
    cam.K[1, 1] = F_Y  # non-square pixels: fx and fy are estimated separately
    return cam


def render_board(cam: Camera) -> np.ndarray:
    """The board lying flat on the table as ``cam`` sees it: drawn on the ideal (pinhole)
    canvas through the table homography, then bent by the lens with the renderer's maps so
    that a board point lands exactly where ``cam.project`` puts it."""
    tex = BOARD.image(TEX_PX_PER_MM)
    mx, my, K_ideal, (cw, ch) = distortion_maps(cam)
    # texture pixel centres (u + 0.5) / ppm mm from the board's corner
    S = np.array([[1 / TEX_PX_PER_MM, 0, ORIGIN_MM[0] + 0.5 / TEX_PX_PER_MM],
                  [0, 1 / TEX_PX_PER_MM, ORIGIN_MM[1] + 0.5 / TEX_PX_PER_MM],
                  [0, 0, 1]])
    ideal = cv2.warpPerspective(tex, cam.table_homography(K_ideal) @ S, (cw, ch),
                                flags=cv2.INTER_LINEAR, borderValue=235)
    return np.asarray(cv2.remap(ideal, mx, my, cv2.INTER_LINEAR, borderValue=235))


def _world(obj: np.ndarray) -> np.ndarray:
    """Board points (N, 3) mm -> table world points (N, 3)."""
    return np.column_stack([obj[:, :2] + ORIGIN_MM, np.zeros(len(obj))])


@pytest.fixture(scope="module")
def views(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Camera]]:
    folder = tmp_path_factory.mktemp("board-photos")
    cams = [_camera(*p) for p in POSES]
    for i, cam in enumerate(cams):
        cv2.imwrite(str(folder / f"view{i:02d}.png"), render_board(cam))
    return folder, cams


@pytest.fixture(scope="module")
def calibrated(views: tuple[Path, list[Camera]], tmp_path_factory: pytest.TempPathFactory
               ) -> tuple[Path, str]:
    folder, _ = views
    out = tmp_path_factory.mktemp("cam") / "camera.json"
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = main(["calibrate-camera", str(folder), "--out", str(out)])
    assert rc == 0, buf.getvalue()
    return out, buf.getvalue()


def test_recovers_the_camera_matrix(calibrated: tuple[Path, str]) -> None:
    out, text = calibrated
    assert f"calibrated from {len(POSES)} of {len(POSES)} image(s)" in text
    assert "RMS reprojection error" in text
    rms = float(text.split("RMS reprojection error ")[1].split(" px")[0])
    assert rms < 0.5  # the renderer's only error is resampling
    intr = load_intrinsics(out)
    cx, cy = W / 2 - 0.5 + PRINCIPAL_OFFSET[0], H / 2 - 0.5 + PRINCIPAL_OFFSET[1]
    K = intr.K
    for got, want in ((K[0, 0], F_X), (K[1, 1], F_Y), (K[0, 2], cx), (K[1, 2], cy)):
        assert abs(got - want) / want < 0.02, (got, want)
    # the synthetic photos are clean: in fact much closer than 2%
    assert abs(K[0, 0] - F_X) / F_X < 0.005 and abs(K[1, 1] - F_Y) / F_Y < 0.005
    data = read_camera_file(out)
    assert data["image_size"] == (W, H)
    assert data["views"] == len(POSES)
    assert data["board"] == {"squares": [7, 5], "square_mm": 30, "marker_mm": 22,
                             "dictionary": "DICT_5X5_100"}


def test_undistorted_corners_are_a_pinhole_image(views: tuple[Path, list[Camera]],
                                                 calibrated: tuple[Path, str]) -> None:
    folder, cams = views
    intr = load_intrinsics(calibrated[0])
    K, dist = intr.K, intr.dist
    covered = []
    for i, cam in enumerate(cams):
        view = detect_board(cv2.imread(str(folder / f"view{i:02d}.png")), BOARD)
        assert view is not None
        obj = view.object_points.astype(np.float64)
        # where the lens really puts the corners, undistorted with the recovered model...
        seen = cam.project(_world(obj))
        und = intr.undistort_points(seen)
        # ...is an ideal pinhole image of the board: the recovered K at the pose PnP finds
        ok, rvec, tvec = cv2.solvePnP(obj, und, K, None)
        assert ok
        pin, _ = cv2.projectPoints(obj, rvec, tvec, K, None)
        err = np.linalg.norm(pin.reshape(-1, 2) - und, axis=1)
        assert err.max() < 0.5, (i, err.max())
        covered.append(seen)
    # Over the whole part of the image the photos cover, the recovered undistortion equals
    # the true one up to a homography (K and pose trade a little; straight lines are
    # straight in both), while the raw distorted image is pixels away from it.
    hull = cv2.convexHull(np.concatenate(covered).astype(np.float32))
    gx, gy = np.meshgrid(np.arange(0, W, 20.0), np.arange(0, H, 20.0))
    grid = np.column_stack([gx.ravel(), gy.ravel()])
    grid = grid[[cv2.pointPolygonTest(hull, (float(x), float(y)), False) >= 0 for x, y in grid]]
    assert len(grid) > 500
    crit = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 40, 1e-9)
    true_und = undistort_points(grid.reshape(-1, 1, 2), cams[0].K, DIST, cams[0].K,
                                crit).reshape(-1, 2)
    est_und = undistort_points(grid.reshape(-1, 1, 2), K, dist, K, crit).reshape(-1, 2)

    def residual(src: np.ndarray) -> float:
        Hm, _ = cv2.findHomography(src, true_und, 0)
        mapped = cv2.perspectiveTransform(src.reshape(-1, 1, 2), Hm).reshape(-1, 2)
        return float(np.linalg.norm(mapped - true_und, axis=1).max())

    assert residual(est_und) < 0.5
    assert residual(grid) > 2.0  # the test has teeth: the lens distortion is real


def test_default_camera_file_in_config_dir(views: tuple[Path, list[Camera]], tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    folder, _ = views
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    expected = tmp_path / "cfg" / "arcana-companion" / "camera.json"
    assert default_camera_path() == expected
    files = sorted(folder.glob("*.png"))[:4]
    assert main(["calibrate-camera", *map(str, files)]) == 0
    assert f"wrote {expected}" in capsys.readouterr().out
    assert load_intrinsics(expected).K[0, 0] == pytest.approx(F_X, rel=0.02)
    monkeypatch.delenv("XDG_CONFIG_HOME")
    assert default_camera_path() == Path.home() / ".config" / "arcana-companion" / "camera.json"


def test_bad_photos_are_skipped_by_name_and_too_few_views_fail(
        views: tuple[Path, list[Camera]], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    folder, _ = views
    junk = tmp_path / "junk.png"
    junk.write_text("not an image")
    blank = tmp_path / "blank.png"
    cv2.imwrite(str(blank), np.full((H, W), 200, np.uint8))
    missing = tmp_path / "missing.jpg"
    good = [str(folder / "view00.png"), str(folder / "view01.png")]
    out = tmp_path / "camera.json"
    rc = main(["calibrate-camera", *good, str(junk), str(blank), str(missing), "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 2
    assert f"skipped {junk}: not an image OpenCV can decode" in err
    assert f"skipped {blank}: no ChArUco board found" in err
    assert f"skipped {missing}: no such file" in err
    assert "error: only 2 usable view(s) of the board; calibration needs at least 3" in err
    assert "Traceback" not in err
    assert not out.exists()
    # with a third good view it calibrates, and the file that was not an image still
    # makes the exit code say something failed
    rc = main(["calibrate-camera", *good, str(folder / "view02.png"), str(junk), str(blank),
               "--out", str(out)])
    io = capsys.readouterr()
    assert rc == 1, io.err
    assert "calibrated from 3 of 5 image(s)" in io.out and out.exists()
    assert "1 file(s) could not be read as images" in io.err
    # a photo without the board is no failure
    rc = main(["calibrate-camera", *good, str(folder / "view02.png"), str(blank),
               "--out", str(out)])
    assert rc == 0, capsys.readouterr().err
    # nor a copy of a photo, but it adds no view: two views and a copy are too few
    copy = tmp_path / "copy.png"
    copy.write_bytes((folder / "view00.png").read_bytes())
    rc = main(["calibrate-camera", *good, str(copy), "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 2 and f"skipped {copy}: the board lies as in view00.png" in err, err


def test_a_board_photo_held_the_other_way_is_named_so(
        views: tuple[Path, list[Camera]], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A phone held upright for some board photos: skipped, and the message says the
    photo is turned, not merely of another resolution."""
    folder, _ = views
    turned = tmp_path / "upright.png"
    cv2.imwrite(str(turned), cv2.rotate(cv2.imread(str(folder / "view03.png")),
                                        cv2.ROTATE_90_CLOCKWISE))
    photos = [str(folder / f"view0{k}.png") for k in range(3)]
    assert main(["calibrate-camera", *photos, str(turned), "--out",
                 str(tmp_path / "camera.json")]) == 0
    err = capsys.readouterr().err
    assert f"skipped {turned}: its size {H}x{W} differs" in err
    assert "turned between landscape and portrait" in err


def test_no_usable_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["calibrate-camera", str(empty)]) == 2
    assert "holds no images" in capsys.readouterr().err
    assert main(["calibrate-camera"]) == 2
    assert "no photos given" in capsys.readouterr().err
    assert main(["calibrate-camera", str(tmp_path / "x.png"), "--marker-mm", "40"]) == 2
    assert "must be positive and smaller than the square side" in capsys.readouterr().err
    assert main(["calibrate-camera", "--print-board", str(tmp_path)]) == 2
    assert "it is a folder; give a .png file name" in capsys.readouterr().err
    assert main(["calibrate-camera", "--print-board", str(tmp_path / "board.pdf")]) == 2
    err = capsys.readouterr().err
    assert ".pdf is not an image type it writes; give a .png file name" in err
    assert "OpenCV" not in err and not (tmp_path / "board.pdf").exists()
    for size in ("inf", "nan", "100000"):   # (100 m squares once asked for a 48 TB image)
        with pytest.raises(SystemExit):
            main(["calibrate-camera", "--square-mm", size, "--print-board",
                  str(tmp_path / "b.png")])
        assert "expected a positive length in mm up to 300" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # argparse: bad --board text
        main(["calibrate-camera", "--board", "seven"])
    assert "expected SQUARESxSQUARES" in capsys.readouterr().err


def test_print_board_is_detectable(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    png = tmp_path / "board.png"
    assert main(["calibrate-camera", "--print-board", str(png), "--dpi", "100"]) == 0
    assert "print it at 100% scale" in capsys.readouterr().out
    # the file says its resolution: a viewer that took 72 or 96 dpi printed it too large
    from calibration.mat_sheets import png_dpi

    assert png_dpi(png.read_bytes()) == pytest.approx(100, abs=0.05)
    img = cv2.imread(str(png), cv2.IMREAD_GRAYSCALE)
    mm_w = (7 * 30 + 2 * 10) / 25.4 * 100
    assert abs(img.shape[1] - mm_w) <= 2
    view = detect_board(img, BOARD)
    assert view is not None and len(view.image_points) == 6 * 4  # every inner corner
    # a photo of the board given where a table photo goes: said to be the board's markers
    from calibration.mat import DEFAULT_MAT
    from calibration.table import TableCalibrator

    cal = TableCalibrator(DEFAULT_MAT).calibrate(cv2.cvtColor(img, cv2.COLOR_GRAY2BGR))
    assert not cal.calibrated and "calibrate-camera's ChArUco board" in (cal.reason or "")


def test_print_board_never_writes_over_a_photo(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """A photo of that name, and above all one of the board photos given, are kept (they
    were replaced without a word); a board written before is replaced, as --out replaces
    its camera file."""
    photo = tmp_path / "holiday.png"
    cv2.imwrite(str(photo), np.full((40, 60, 3), 90, np.uint8))
    before = photo.read_bytes()
    assert main(["calibrate-camera", "--print-board", str(photo), "--dpi", "72"]) == 2
    assert (f"--print-board {str(photo)!r} exists and is not a board image"
            in capsys.readouterr().err)
    assert photo.read_bytes() == before
    assert main(["calibrate-camera", str(photo), "--print-board", str(photo), "--dpi",
                 "72"]) == 2
    assert "is one of the files it is made from" in capsys.readouterr().err
    assert photo.read_bytes() == before
    # a board written before is replaced: tagged (PNG), or pure black and white with the
    # markers in it (a TIFF or BMP, which carry no tag; a PNG of an older version)
    for name in ("board.png", "board.tif", "board.bmp"):
        board = tmp_path / name
        for _ in range(2):
            assert main(["calibrate-camera", "--print-board", str(board), "--dpi", "72"]) == 0
        assert f"replacing the board image {board}" in capsys.readouterr().err
        assert cv2.imread(str(board)) is not None
    # a photo of a board (the calibration's own) is no board image to replace
    shot = tmp_path / "shot.png"
    img = cv2.imread(str(tmp_path / "board.png"))
    cv2.imwrite(str(shot), cv2.GaussianBlur(cv2.resize(img, None, fx=0.9, fy=0.9), (3, 3), 0))
    assert main(["calibrate-camera", "--print-board", str(shot), "--dpi", "72"]) == 2
    assert "exists and is not a board image" in capsys.readouterr().err


def test_camera_file_errors_name_the_file_and_field(tmp_path: Path) -> None:
    p = tmp_path / "camera.json"
    with pytest.raises(IntrinsicsError, match="does not exist"):
        load_intrinsics(p)
    p.write_text("{nope")
    with pytest.raises(IntrinsicsError, match=r"camera\.json.*not valid JSON"):
        load_intrinsics(p)
    p.write_text(json.dumps({"dist": [0, 0, 0, 0, 0], "image_size": [640, 480]}))
    with pytest.raises(IntrinsicsError, match=r"camera\.json.*missing field 'K'"):
        load_intrinsics(p)
    p.write_text(json.dumps({"K": [[1, 0, 0], [0, 1, 0], [0, 0, 1]], "dist": [0, "x"],
                             "image_size": [640, 480]}))
    with pytest.raises(IntrinsicsError, match="field 'dist'"):
        load_intrinsics(p)
    p.write_text(json.dumps({"K": [[-5, 0, 0], [0, 1, 0], [0, 0, 1]], "dist": [0] * 5,
                             "image_size": [640, 480]}))
    with pytest.raises(IntrinsicsError, match="field 'K' is not a camera matrix"):
        load_intrinsics(p)
    # a fit on too few photos once wrote k3 = -29542: undistorting folded the picture over
    # and observe found no card, without a word
    K = [[1400, 0, 960], [0, 1400, 540], [0, 0, 1]]
    # tangential terms far past a lens's, or the lens's centre off the picture: OpenCV
    # failed on every image ("!ssize.empty()"), the camera file unnamed
    off = [[1400, 0, -500], [0, 1400, 540], [0, 0, 1]]
    for k, dist, words in ((K, [0, 0, 0, 0, -29542], "turns back 14% of the way"),
                           (K, [1e6, 0, 0, 0, 0], "moves the image's points to 0.012 times"),
                           (K, [0, 0, 0.5, 0.5, 0], r"has tangential terms \(p1 0.5, p2 0.5\)"),
                           (off, [0] * 5, r"puts the lens's centre \(the principal point "
                                          r"-500, 540\) outside the 1920x1080 picture")):
        p.write_text(json.dumps({"K": k, "dist": dist, "image_size": [1920, 1080]}))
        with pytest.raises(IntrinsicsError, match=rf"camera\.json.*no lens: it {words}"):
            load_intrinsics(p)


@pytest.mark.parametrize("dist", [[0, 0, 0, 0, 0], [-0.15, 0.05, 0, 0, 0],
                                  [-0.4, 0.2, 0, 0, -0.05], [0.1, -0.2, 0, 0, 0],
                                  [-0.35, 0.12, 0.001, -0.002, -0.02, 0.1, 0.02, 0.0]])
def test_real_lenses_are_lenses(dist: list[float]) -> None:
    K = np.array([[1400.0, 0, 960], [0, 1400, 540], [0, 0, 1]])
    assert lens_fold(K, np.array(dist), (1920, 1080)) is None


def test_save_load_and_rescale(tmp_path: Path) -> None:
    K = np.array([[800.0, 0, 319.5], [0, 805.0, 239.5], [0, 0, 1]])
    dist = np.array([-0.1, 0.02, 0.0, 0.0, 0.0])
    p = save_intrinsics(tmp_path / "sub" / "camera.json", K, dist, (640, 480), rms_px=0.2,
                        board=BOARD, views=12)
    intr = load_intrinsics(p)
    np.testing.assert_allclose(intr.K, K)
    np.testing.assert_allclose(intr.dist, dist)
    # the same camera at twice the resolution: focal lengths double, the centre moves with
    # the pixel grid (pixel centres at i + 0.5)
    big = load_intrinsics(p, image_size=(1280, 960))
    np.testing.assert_allclose(big.K, np.array([[1600, 0, 639.5], [0, 1610, 479.5], [0, 0, 1]]))
    with pytest.raises(IntrinsicsError, match="another aspect ratio"):
        load_intrinsics(p, image_size=(1280, 720))
    # a phone held upright: the same camera turned, not another one or a crop (the message
    # sent players after the wrong cause)
    for size in ((480, 640), (960, 1280)):
        with pytest.raises(IntrinsicsError, match="turned between landscape and portrait"):
            load_intrinsics(p, image_size=size)


def test_a_number_no_float_holds_is_a_bad_field_not_a_crash(tmp_path: Path) -> None:
    p = tmp_path / "camera.json"
    p.write_text('{"K": [[1400, 0, 960], [0, 1400, 540], [0, 0, 1]], "image_size": [1920, 1080],'
                 ' "dist": [1' + "0" * 400 + ', 0, 0, 0, 0]}')
    with pytest.raises(IntrinsicsError, match="field 'dist' must be a list"):
        load_intrinsics(p)


def test_a_board_seen_only_near_the_middle_is_refused(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    """Photos that never take the board toward the image's edges leave the lens model
    guessed there (where it bends most): refused, saying why, and nothing written."""
    for i, (tilt, yaw, tdir) in enumerate([(0, 0, 0), (15, 20, 0), (18, -30, 120),
                                           (12, 50, 240), (20, 10, 300)]):
        cam = _camera(tilt, yaw, tdir, 900, (0, 0))
        cv2.imwrite(str(tmp_path / f"mid{i}.png"), render_board(cam))
    out = tmp_path / "camera.json"
    rc = main(["calibrate-camera", str(tmp_path), "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert "the board was seen only near the middle of the image" in err
    assert not out.exists()


def test_out_never_writes_over_a_photo_or_a_file_of_another_kind(
        views: tuple[Path, list[Camera]], tmp_path: Path,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    folder, _ = views
    photos = tmp_path / "photos"
    shutil.copytree(folder, photos)
    target = photos / "view00.png"
    before = target.read_bytes()
    assert main(["calibrate-camera", str(photos), "--out", str(target)]) == 2
    assert "is one of the files it is made from" in capsys.readouterr().err
    assert target.read_bytes() == before
    notes = tmp_path / "notes.json"
    notes.write_text('{"my": "notes"}')
    assert main(["calibrate-camera", str(photos), "--out", str(notes)]) == 2
    assert "exists and is not a camera file" in capsys.readouterr().err
    assert notes.read_text() == '{"my": "notes"}'
    out = tmp_path / "camera.json"
    assert main(["calibrate-camera", str(photos), "--out", str(out)]) == 0
    assert main(["calibrate-camera", str(photos), "--out", str(out)]) == 0
    assert f"replacing the camera file {out}" in capsys.readouterr().err
    # an outdated or refused camera file is one to make again: replaced
    out.write_text('{"version": 0, "K": "old", "dist": []}')
    assert main(["calibrate-camera", str(photos), "--out", str(out)]) == 0, \
        capsys.readouterr().err
    assert read_camera_file(out)["version"] == 1
    # the saved camera file damaged (cut short): observe says how to make it again, and
    # calibrate-camera replaces it (it refused: "give another name" would never be found)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    from calibration.intrinsics import default_camera_path

    saved = default_camera_path()
    saved.parent.mkdir(parents=True)
    saved.write_text(out.read_text()[:150])
    with pytest.raises(IntrinsicsError, match="it is the saved camera file: `companion "
                                              "calibrate-camera` with board photos replaces"):
        read_camera_file(saved)
    assert main(["calibrate-camera", str(photos)]) == 0, capsys.readouterr().err
    assert f"the saved camera file {saved} is damaged: it is replaced" in \
        capsys.readouterr().err
    assert read_camera_file(saved)["version"] == 1
    # --out=~/...: the shell leaves the ~, the guard sees the file it stands for
    monkeypatch.setenv("HOME", str(tmp_path))
    assert main(["calibrate-camera", str(photos), "--out=~/photos/view00.png"]) == 2
    assert "is one of the files it is made from" in capsys.readouterr().err
    assert target.read_bytes() == before


@pytest.mark.parametrize("printed, words", [
    (BoardSpec(9, 6), "markers with ids up to"),
    (BoardSpec(5, 7), "it is a 5x7 board (squares across x down): pass --board 5x7"),
    (BoardSpec(7, 5, dictionary="DICT_4X4_50"), "printed with --dictionary DICT_4X4_50"),
])
def test_a_board_other_than_the_settings_say_is_hinted_at(
        printed: BoardSpec, words: str, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    photo = tmp_path / "board.png"
    cv2.imwrite(str(photo), printed.image(4.0, 10.0))
    assert main(["calibrate-camera", str(photo), "--out", str(tmp_path / "c.json")]) == 2
    err = capsys.readouterr().err
    assert "no ChArUco board found" in err and words in err, err


def test_a_mirrored_board_photo_is_said_to_be_mirrored(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A webcam's mirror setting: the board's markers read only flipped. Observe and
    calibrate-colors said so for the mat; calibrate-camera said only "no board found"."""
    photo = tmp_path / "mirrored.png"
    cv2.imwrite(str(photo), cv2.flip(BOARD.image(4.0, 10.0), 1))
    assert main(["calibrate-camera", str(photo), "--out", str(tmp_path / "c.json")]) == 2
    err = capsys.readouterr().err
    assert "no ChArUco board found" in err and "the photo is mirrored" in err, err


def test_the_right_board_partly_in_the_photo_is_not_blamed_on_the_settings(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    img = BOARD.image(4.0, 10.0)
    part = img[: int(img.shape[0] * 0.44)]      # two rows of squares: corners on a line
    photo = tmp_path / "part.png"
    cv2.imwrite(str(photo), part)
    assert main(["calibrate-camera", str(photo), "--out", str(tmp_path / "c.json")]) == 2
    err = capsys.readouterr().err
    assert "is the whole board in the photo" in err and "--board" not in err, err
