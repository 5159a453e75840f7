"""Player colours: the calibrate-colors step under strongly coloured light, the profile file,
and the finder using it (rendered scenes, seeded)."""

from __future__ import annotations

import json

import numpy as np
import pytest

cv2 = pytest.importorskip("cv2")

from calibration.mat import DEFAULT_MAT  # noqa: E402
from calibration.table import Intrinsics, TableCalibrator  # noqa: E402
from vision.pyramids.profile import (  # noqa: E402
    ColorProfile,
    ProfileError,
    calibration_zone,
    load_profile,
)
from vision.synth.camera import camera_over_mat  # noqa: E402
from vision.synth.render import Light, plain_style, render  # noqa: E402
from vision.synth.scene import CardPlacement, PyramidPlacement, TableScene  # noqa: E402

ORANGE_LAMP = (0.37, 0.63, 1.0)   # BGR gains: a strongly orange light, paper unclipped
SHOWN = [("red", 2, True, (360.0, 330.0)), ("blue", 3, False, (450.0, 320.0)),
         ("green", 1, True, (540.0, 335.0))]


def _shoot(tarot, pyramids, wb=ORANGE_LAMP, seed=7):
    cam = camera_over_mat(DEFAULT_MAT, (1920, 1080), tilt=10.0, yaw=5.0, tilt_dir=30.0)
    st = plain_style((70, 95, 120), seed=seed)
    st.lights = [Light(60, 65, 0.6, 0.3, 3.0)]
    st.wb = wb
    image, truth = render(TableScene(pyramids=pyramids), tarot, DEFAULT_MAT, cam, st)
    calib = TableCalibrator(DEFAULT_MAT, Intrinsics(cam.K, cam.dist)).calibrate(image)
    assert calib.calibrated
    return image, calib, truth


def _placements(spec, pointing=200.0):
    return [PyramidPlacement(c, pips, up, xy, None if up else pointing, yaw_deg=20.0)
            for c, pips, up, xy in spec]


def test_zone_default_and_named():
    x0, y0, x1, y1 = calibration_zone(DEFAULT_MAT)
    assert (x0 + x1) / 2 == DEFAULT_MAT.width_mm / 2 and x1 - x0 == 400
    from calibration.mat import Mat

    m = Mat.from_dict({**DEFAULT_MAT.to_dict(), "zones": {"colors": [10, 20, 210, 120]}})
    assert calibration_zone(m) == (10, 20, 210, 120)


def test_calibrate_under_orange_light_then_find_with_the_profile(tarot, finder, tmp_path,
                                                                monkeypatch):
    from vision.pyramids import PyramidFinder
    from vision.pyramids.profile import measure_profile

    image, calib, _ = _shoot(tarot, _placements(SHOWN))
    asked = []
    find = finder.find
    monkeypatch.setattr(finder, "find", lambda *a: asked.append(1) or find(*a))
    profile, shown = measure_profile(finder, image, calib, ["red", "blue", "green"])
    assert profile.names() == ["red", "blue", "green"]
    # each looks its name at first sight: the pyramid finder (a quarter of a second) is not
    # asked what it reads there
    assert [s.guess for s in shown] == ["red", "blue", "green"]
    assert not asked and [s.read for s in shown] == [None] * 3
    # named otherwise, it is (the finder's reading is what the names are judged by)
    _, shown = measure_profile(finder, image, calib, ["red", "green", "blue"])
    assert asked and [s.read for s in shown] == ["red", "blue", "green"]
    for s, (_, _, _, xy) in zip(shown, SHOWN):
        assert abs(s.center_mm[0] - xy[0]) < 15 and abs(s.center_mm[1] - xy[1]) < 15
    for c in profile.colors:
        assert c.pixels > 50 and c.hist
    # the file round-trips
    path = profile.save(tmp_path / "colors.json")
    again = load_profile(path)
    assert again.names() == profile.names()
    assert np.allclose(again.colors[0].lab_mean, profile.colors[0].lab_mean, atol=0.01)
    # the same plastic elsewhere on the table, under the same lamp: named by the profile
    others = [("green", 2, False, (250.0, 480.0)), ("red", 3, True, (700.0, 180.0)),
              ("blue", 1, True, (640.0, 500.0))]
    image2, calib2, truth2 = _shoot(tarot, _placements(others, 45.0), seed=8)
    with_profile = PyramidFinder(DEFAULT_MAT, colors=path)
    found = with_profile.find(image2, calib2)
    got = sorted((f.color, round(f.base_center_mm[0], -1)) for f in found)
    want = sorted((c, round(xy[0], -1)) for c, _, _, xy in others)
    assert [g[0] for g in got] == [w[0] for w in want], [f.to_dict() for f in found]


def test_an_unusual_red_is_learned(tarot, finder, monkeypatch):
    """A pinkish red set of pyramids: after calibration the finder calls it red."""
    from vision.pyramids import PyramidFinder
    from vision.pyramids.profile import measure_profile
    from vision.synth import render as render_mod

    monkeypatch.setitem(render_mod.PYRAMID_BGR, "red", (150, 90, 235))
    image, calib, _ = _shoot(tarot, _placements([("red", 3, True, (450.0, 320.0))]),
                             wb=(1.0, 1.0, 1.0))
    profile, _ = measure_profile(finder, image, calib, ["red"])
    later = [("red", 2, True, (300.0, 450.0)), ("red", 3, False, (620.0, 200.0))]
    image2, calib2, _ = _shoot(tarot, _placements(later, 300.0), wb=(1.0, 1.0, 1.0), seed=9)
    found = PyramidFinder(DEFAULT_MAT, colors=profile).find(image2, calib2)
    assert sorted(f.color for f in found) == ["red", "red"], [f.to_dict() for f in found]


def test_wrong_count_is_a_clear_error(tarot, finder):
    from vision.pyramids.profile import measure_profile

    image, calib, _ = _shoot(tarot, _placements(SHOWN[:2]))
    with pytest.raises(ProfileError, match=r"found 2 pyramid\(s\).*expected 3"):
        measure_profile(finder, image, calib, ["red", "blue", "green"])
    with pytest.raises(ProfileError, match="unknown colour 'pink'"):
        measure_profile(finder, image, calib, ["pink"])


def test_card_art_in_the_zone_is_not_learned_as_a_pyramid(tarot, finder):
    """A card reaching into the calibration zone, and no pyramid: the edge of its art was
    counted as the one pyramid named, and its colours saved as red for every game after.
    The colour classifier calls it no pyramid and the heat map is cold there: refused."""
    from vision.pyramids.profile import measure_profile

    cam = camera_over_mat(DEFAULT_MAT, (1920, 1080), tilt=10.0, yaw=5.0, tilt_dir=30.0)
    image, _ = render(TableScene(cards=[CardPlacement("major-19", (330.0, 180.0), 0.0)]),
                      tarot, DEFAULT_MAT, cam, plain_style((70, 95, 120), seed=7))
    calib = TableCalibrator(DEFAULT_MAT, Intrinsics(cam.K, cam.dist)).calibrate(image)
    with pytest.raises(ProfileError, match=r"what is taken for the red pyramid, at \(330, "
                                           r"210\) mm, does not look like a pyramid"):
        measure_profile(finder, image, calib, ["red"])


def test_only_a_hue_the_heat_map_sees_nothing_near_is_refused(finder, monkeypatch):
    """The first check read the heat at the blob's middle, which takes in the pyramid's
    shadow and tilted body (12.6 mm off its base, median): a tester's renders of real
    pyramids alone were refused in 62 of 700 (a blue one upright on a light table, a
    yellow one lying under an orange lamp, a white one on wood). Now the heat near it
    counts, and white, clear and black ones (which the heat map can miss on a light
    table) are not judged so."""
    from vision.pyramids import profile as prof

    # (only its flag is read; no H: the pyramid finder finds nothing)
    calib = type("C", (), {"calibrated": True, "reason": "", "H": None})()
    pixels = np.full((40, 3), 120, np.uint8)

    def shown(*things):
        monkeypatch.setattr(prof, "find_shown", lambda *a: [
            prof.Shown((300.0 + 100 * k, 320.0), pixels, guess, heat)
            for k, (guess, heat) in enumerate(things)])

    shown(("none", 0.15), ("none", 0.02), ("blue", 0.0))
    prof.measure_profile(finder, None, calib, ["yellow", "clear", "blue"])
    shown(("none", 0.05))
    with pytest.raises(ProfileError, match="what is taken for the red pyramid"):
        prof.measure_profile(finder, None, calib, ["red"])

    class Heat:                                 # warm only 10 mm east of the middle
        def at(self, pts):
            return np.where(np.hypot(pts[:, 0] - 310.0, pts[:, 1] - 320.0) < 2.5, 0.6, 0.0)

    assert prof._heat_near(Heat(), np.array([300.0, 320.0])) == 0.6
    assert prof._heat_near(Heat(), np.array([280.0, 320.0])) == 0.0


def test_cli(tarot, finder, tmp_path, capsys):
    from companion.cli import main

    image, _, _ = _shoot(tarot, _placements(SHOWN))
    img = tmp_path / "shown.jpg"
    cv2.imwrite(str(img), image)
    out = tmp_path / "p" / "colors.json"
    assert main(["calibrate-colors", str(img), "--colors", "red,blue,green",
                 "--out", str(out)]) == 0
    assert load_profile(out).names() == ["red", "blue", "green"]
    assert "wrote" in capsys.readouterr().out
    # a profile that cannot be written is a clear error, and the old one stays as it was
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where a folder should be", encoding="utf-8")
    assert main(["calibrate-colors", str(img), "--colors", "red,blue,green",
                 "--out", str(blocker / "colors.json")]) == 2
    assert "cannot write colour profile" in capsys.readouterr().err
    assert main(["calibrate-colors", str(img), "--colors", "red,blue",
                 "--out", str(out)]) == 2
    assert "expected 2" in capsys.readouterr().err
    assert main(["calibrate-colors", str(tmp_path / "nope.jpg"), "--colors", "red"]) == 2
    assert "no such image" in capsys.readouterr().err
    # the photo itself is never written over, nor a file that is not a profile
    photo = img.read_bytes()
    assert main(["calibrate-colors", str(img), "--colors", "red,blue,green",
                 "--out", str(img)]) == 2
    assert "is one of the files it is made from" in capsys.readouterr().err
    assert img.read_bytes() == photo
    assert main(["calibrate-colors", str(img), "--colors", "red,blue,green",
                 "--out", str(blocker)]) == 2
    assert "exists and is not a colour profile" in capsys.readouterr().err
    # two colours named in the wrong order: refused, the profile left as it was
    before = out.read_bytes()
    assert main(["calibrate-colors", str(img), "--colors", "blue,red,green",
                 "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "look like red, blue, green west to east, not blue, red, green" in err, err
    assert "blue and red would be swapped" in err
    assert out.read_bytes() == before
    with pytest.raises(SystemExit):     # an endless zone once overflowed in the cut
        main(["calibrate-colors", str(img), "--colors", "red", "--zone", "0,0,inf,inf"])
    assert "expected X0,Y0,X1,Y1" in capsys.readouterr().err
    # the saved profile damaged: how to make it again is said, and calibrate-colors
    # replaces it (it refused, and another name would never be found)
    from vision.pyramids.profile import default_profile_path

    saved = default_profile_path()
    saved.parent.mkdir(parents=True, exist_ok=True)
    saved.write_text(out.read_text()[:100])
    with pytest.raises(ProfileError, match="it is the saved colour profile: `companion "
                                           "calibrate-colors` replaces it"):
        load_profile(saved)
    assert main(["calibrate-colors", str(img), "--colors", "red,blue,green"]) == 0
    assert f"the saved colour profile {saved} is damaged: it is replaced" in \
        capsys.readouterr().err
    assert load_profile(saved).names() == ["red", "blue", "green"]
    # a broken saved camera file is said, and --no-intrinsics goes past it as for the game
    from calibration.intrinsics import default_camera_path

    default_camera_path().parent.mkdir(parents=True, exist_ok=True)
    default_camera_path().write_text("{}", encoding="utf-8")
    assert main(["calibrate-colors", str(img), "--colors", "red,blue,green",
                 "--out", str(out)]) == 2
    assert "missing field 'K'" in capsys.readouterr().err
    assert main(["calibrate-colors", str(img), "--colors", "red,blue,green", "--out", str(out),
                 "--no-intrinsics"]) == 0
    # another camera's file (a webcam's strong barrel) was used without a word: the
    # markers fit worse with it than without it, as observe says
    from calibration.intrinsics import save_intrinsics

    h, w = image.shape[:2]
    webcam = tmp_path / "webcam.json"
    save_intrinsics(webcam, np.array([[0.9 * w, 0, w / 2], [0, 0.9 * w, h / 2], [0, 0, 1]]),
                    np.array([-0.26, 0.08, 0, 0, 0]), (w, h))
    assert main(["calibrate-colors", str(img), "--colors", "red,blue,green", "--out", str(out),
                 "--intrinsics", str(webcam)]) == 2
    err = capsys.readouterr().err
    assert f"the camera file {str(webcam)!r} does not fit this camera" in err, err


def test_bad_profile_files(tmp_path):
    p = tmp_path / "colors.json"
    with pytest.raises(ProfileError, match="cannot be read"):
        load_profile(p)
    p.write_text("{", encoding="utf-8")
    with pytest.raises(ProfileError, match="is not valid JSON"):
        load_profile(p)
    p.write_text(json.dumps({"version": 1, "colors": {"pink": {}}}), encoding="utf-8")
    with pytest.raises(ProfileError, match="unknown colour 'pink'"):
        load_profile(p)
    p.write_text(json.dumps({"version": 1, "colors": {"red": {"lab_mean": [1, 2]}}}),
                 encoding="utf-8")
    with pytest.raises(ProfileError, match="malformed|3-value"):
        load_profile(p)
    p.write_text(json.dumps({"version": 9, "colors": {}}), encoding="utf-8")
    with pytest.raises(ProfileError, match="version"):
        load_profile(p)
    with pytest.raises(ProfileError, match="not a colour profile"):
        ColorProfile.from_dict([1, 2])
    # hand edits that once got through: NaN (every pyramid then read red), a covariance
    # with a negative spread, and a hist that is not an object (an internal error)
    good = {"lab_mean": [50, 10, 5], "lab_cov": [[20, 0, 0], [0, 20, 0], [0, 0, 20]],
            "pixels": 100, "hist": {"3": 0.5}}
    for bad, words in (({"lab_mean": [float("nan"), 1, 1]}, "not finite"),
                       ({"lab_cov": [[-20, 0, 0], [0, 20, 0], [0, 0, 20]]}, "not a covariance"),
                       ({"lab_cov": [[20, 9, 0], [0, 20, 0], [0, 0, 20]]}, "not a covariance"),
                       ({"hist": None}, "malformed"), ({"hist": [1, 2]}, "malformed")):
        with pytest.raises(ProfileError, match=words):
            ColorProfile.from_dict({"version": 1, "colors": {"red": dict(good, **bad)}})
    # a field left out said "is malformed ('lab_mean')"
    no_mean = {k: v for k, v in good.items() if k != "lab_mean"}
    with pytest.raises(ProfileError, match=r"colour 'red' is malformed \(no 'lab_mean' field\)"):
        ColorProfile.from_dict({"version": 1, "colors": {"red": no_mean}})
    assert ColorProfile.from_dict({"version": 1, "colors": {"red": good}}).names() == ["red"]
    # what save's rounding to hundredths leaves of a near-uniform patch (an overexposed
    # white: smallest spread +0.0013 before rounding) is still a profile
    rounded = [[0.01, 0.02, 0.0], [0.02, 0.03, 0.0], [0.0, 0.0, 0.01]]
    assert np.linalg.eigvalsh(np.array(rounded)).min() < 0
    assert ColorProfile.from_dict({"version": 1, "colors": {
        "white": dict(good, lab_cov=rounded)}}).names() == ["white"]


def test_a_pyramid_named_a_far_hue_is_refused(tarot, finder, tmp_path, capsys):
    """The green pyramid shown as "purple" (the hue across the wheel): it was learned as
    purple, only noted on stdout ("looked green before calibration"), and every green
    pyramid after it read as the purple player's. Refused, no profile written; a
    neighbouring hue (teal for green) is still learned as named."""
    from companion.cli import main

    image, _, _ = _shoot(tarot, _placements(SHOWN))
    img = tmp_path / "shown.jpg"
    cv2.imwrite(str(img), image)
    out = tmp_path / "colors.json"
    assert main(["calibrate-colors", str(img), "--colors", "red,blue,purple",
                 "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "the pyramid named purple looks green: that is another colour" in err, err
    assert not out.exists()
    # white or clear named for a hue's plastic (and the other way round) is another colour
    # too: the blue pyramid named white was learned as white (hues alone were judged)
    assert main(["calibrate-colors", str(img), "--colors", "red,white,green",
                 "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "the pyramid named white looks blue: that is another colour" in err, err
    assert not out.exists()
    assert main(["calibrate-colors", str(img), "--colors", "red,black,green",
                 "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "the pyramid named black looks blue: that is another colour" in err, err
    assert not out.exists()
    with pytest.raises(SystemExit):     # (a name that is no spec colour: refused at once)
        main(["calibrate-colors", str(img), "--colors", "red,blue,pink"])
    assert "unknown colour(s) 'pink'" in capsys.readouterr().err
    from companion.commands.calibrate_colors import hue_steps

    assert hue_steps("green", "purple") == 3 and hue_steps("red", "cyan") == 3
    assert hue_steps("green", "cyan") == 1 and hue_steps("purple", "red") == 1
    assert hue_steps("green", "black") == 0 and hue_steps("clear", "white") == 0
    from companion.commands.calibrate_colors import another_colour

    assert another_colour("green", "purple") and not another_colour("green", "blue")
    assert another_colour("white", "red") and another_colour("cyan", "clear")
    # a hue where black is named is another colour (the blue one named black was learned
    # as black); black seen where a hue is named is let be (dark plastic in dim light), and
    # white or clear are not judged against each other or black
    assert another_colour("black", "yellow") and another_colour("black", "blue")
    assert not another_colour("blue", "black") and not another_colour("purple", "black")
    assert not another_colour("white", "clear") and not another_colour("white", "black")
    assert not another_colour("red", "none")


def test_a_black_pyramid_named_a_hue_is_learned_with_a_warning(tarot, tmp_path, capsys):
    """The black pyramid named yellow (black not named: no swap to see) was learned as
    yellow with only "(looked black before calibration)" on stdout, every black pyramid
    after it read as the yellow player's. It is still learned (dim plastic of any hue can
    look black), but warned of on stderr, as a neighbouring hue is."""
    from companion.cli import main

    image, _, _ = _shoot(tarot, _placements([("red", 2, True, (360.0, 330.0)),
                                             ("black", 3, False, (450.0, 320.0)),
                                             ("green", 1, True, (540.0, 335.0))]))
    img = tmp_path / "shown.jpg"
    cv2.imwrite(str(img), image)
    out = tmp_path / "colors.json"
    assert main(["calibrate-colors", str(img), "--colors", "red,yellow,green",
                 "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "warning: the pyramid named yellow looks black: is it yellow?" in err, err
    assert out.exists()
    assert main(["calibrate-colors", str(img), "--colors", "red,black,green",
                 "--out", str(out)]) == 0
    assert "warning" not in capsys.readouterr().err


def test_swapped_colours_are_rings_of_named_colours_only():
    from companion.commands.calibrate_colors import swapped_colours

    assert swapped_colours(["red", "blue", "green"], ["red", "blue", "green"]) == []
    assert swapped_colours(["blue", "red", "green"], ["red", "blue", "green"]) == ["blue", "red"]
    assert swapped_colours(["a", "b", "c"], ["b", "c", "a"]) == ["a", "b", "c"]
    # a colour that only looks like another one way is what the profile learns
    assert swapped_colours(["orange", "red", "green"], ["red", "red", "green"]) == []
    assert swapped_colours(["green", "red"], ["cyan", "red"]) == []


def test_a_camera_is_read_until_the_mat_is_in_sight(tarot, monkeypatch):
    """A camera number: the first frames (exposure and white balance still settling) and
    frames without the mat are passed over; a camera that never shows it gives its last
    frame, for the calibration to say so."""
    import companion.commands.calibrate_colors as cc

    image, _, _ = _shoot(tarot, _placements(SHOWN))
    dark = np.zeros_like(image)
    bare = np.full_like(image, 90)

    class FakeCamera:
        def __init__(self, frames):
            self.frames = list(frames)
            self.read_count = 0

        def isOpened(self):
            return True

        def read(self):
            self.read_count += 1
            return (True, self.frames.pop(0)) if self.frames else (False, None)

        def release(self):
            pass

    cams = []

    def camera(frames):
        def open_it(_number):
            cams.append(FakeCamera(frames))
            return cams[-1]
        return open_it

    # the mat already in the second frame: still the settling frames are passed over
    monkeypatch.setattr(cv2, "VideoCapture", camera([dark, image] + [image] * 20))
    got, name = cc._read_image("0", DEFAULT_MAT.dictionary)
    assert name == "camera 0" and np.array_equal(got, image)
    assert cams[-1].read_count == cc.SETTLE_FRAMES
    monkeypatch.setattr(cv2, "VideoCapture", camera([dark] * 12 + [bare] * 5 + [image, dark]))
    got, _ = cc._read_image("0", DEFAULT_MAT.dictionary)
    assert np.array_equal(got, image) and cams[-1].read_count == 18
    monkeypatch.setattr(cv2, "VideoCapture", camera([dark] * 3 + [bare] * 200))
    got, _ = cc._read_image("0", DEFAULT_MAT.dictionary)
    assert np.array_equal(got, bare) and cams[-1].read_count == cc.CAMERA_TRIES


def test_another_mats_file_writes_no_profile(tarot, tmp_path, capsys):
    """The mat file of a mat other than the one in the picture: the zone was looked for where
    it is not, and the table's colours written as the pyramids' (exit 0), as observe refuses
    such a picture."""
    from companion.cli import main

    image, _, _ = _shoot(tarot, _placements(SHOWN))
    img = tmp_path / "shown.jpg"
    cv2.imwrite(str(img), image)
    assert main(["print-mat", str(tmp_path / "big"), "--width-mm", "1200", "--height-mm",
                 "800", "--dpi", "72"]) == 0
    capsys.readouterr()
    out = tmp_path / "colors.json"
    assert main(["calibrate-colors", str(img), "--colors", "red,blue,green", "--out", str(out),
                 "--mat", str(tmp_path / "big" / "mat.json")]) == 2
    err = capsys.readouterr().err
    assert "the markers fit the mat file badly" in err and "No profile is written" in err
    assert not out.exists()


@pytest.mark.parametrize("surface", ["wood", "newspaper", "pattern"])
def test_pyramids_shown_on_a_busy_table_in_dim_light_are_counted(tarot, finder, surface,
                                                                 monkeypatch):
    """Five pyramids on a wooden table, a newspaper or a patterned cloth, dimly lit: the
    zone's one typical colour was the bar, so the grain or print stood out as more pyramids
    (wood: 7 found) and a newspaper's pyramids did not; a tester's dim renders were refused
    for the count in 22 of 30 on wood, 20 of 20 on a newspaper. Each pixel is now judged
    against the table around it, what the heat map is cold near is dropped where too many
    were found, and a hot spot no blob was found near is one more. On the patterned cloth
    that still found 2 of the 5: where the count is wrong, the pyramid finder's own finds in
    the zone are the shown pyramids. The finder's look at the picture is made once (a find
    no blob was near had its plastic cut from a second, the same, look)."""
    from vision.pyramids.profile import measure_profile

    spec = [("red", 2, True, (300.0, 320.0)), ("orange", 1, False, (380.0, 300.0)),
            ("yellow", 3, True, (460.0, 340.0)), ("green", 2, False, (540.0, 310.0)),
            ("blue", 1, True, (610.0, 330.0))]
    cam = camera_over_mat(DEFAULT_MAT, (1920, 1080), tilt=10.0, yaw=5.0, tilt_dir=30.0)
    st = plain_style(seed=3)
    st.plain_color, st.surface, st.exposure, st.ambient = None, surface, 0.45, 0.35
    image, _ = render(TableScene(pyramids=_placements(spec)), tarot, DEFAULT_MAT, cam, st)
    calib = TableCalibrator(DEFAULT_MAT, Intrinsics(cam.K, cam.dist)).calibrate(image)
    looks = []
    look = finder.look
    monkeypatch.setattr(finder, "look", lambda *a: looks.append(1) or look(*a))
    _, shown = measure_profile(finder, image, calib, [c for c, *_ in spec])
    assert len(looks) == 1
    for s, (_, _, _, xy) in zip(shown, spec):
        assert abs(s.center_mm[0] - xy[0]) < 15 and abs(s.center_mm[1] - xy[1]) < 15


def test_more_found_than_named_drops_what_the_heat_map_is_cold_near(finder, monkeypatch):
    """Where more things are found than colours named, the ones the heat map is cold near
    (wood grain, print) and the lesser of two pieces of one pyramid (a clear one, the table
    seen through it) are dropped, if that leaves as many as named; else all are said."""
    from vision.pyramids import profile as prof

    # (only its flag is read; no H: the pyramid finder finds nothing)
    calib = type("C", (), {"calibrated": True, "reason": "", "H": None})()
    pixels = np.full((40, 3), 120, np.uint8)

    def shown(*things):
        monkeypatch.setattr(prof, "find_shown", lambda *a: [
            prof.Shown((x, 320.0), pixels[:n], guess, heat) for x, guess, heat, n in things])

    shown((300.0, "red", 0.8, 40), (340.0, "none", 0.05, 40), (380.0, "blue", 0.7, 40),
          (530.0, "none", 0.6, 35), (545.0, "clear", 0.6, 31))
    _, got = prof.measure_profile(finder, None, calib, ["red", "blue", "clear"])
    assert [s.center_mm[0] for s in got] == [300.0, 380.0, 545.0]
    shown((300.0, "red", 0.8, 40), (340.0, "none", 0.5, 40), (380.0, "blue", 0.7, 40))
    with pytest.raises(ProfileError, match=r"found 3 pyramid\(s\)"):
        prof.measure_profile(finder, None, calib, ["red", "blue"])


def test_the_finders_read_is_taken_only_from_a_find_that_is_clearly_the_pyramids(caplog):
    """The read came from the nearest find within PIECES_MM (25 mm), whatever else was
    there: on a crowded zone a neighbour's find 14 mm off where the pyramid's own is 12 mm
    off named it, and a neighbour's find alone named a pyramid the finder missed. Now a
    second find of another colour not clearly farther, or a find nearer another shown
    pyramid, leaves the read unknown (its own look judges it) and says so."""
    import logging

    from vision.pyramids import profile as prof
    from vision.pyramids.find import PyramidFind

    def find(color, x, y=320.0):
        return PyramidFind(color, 1, True, None, (x, y), 0.9)

    pixels = np.full((40, 3), 120, np.uint8)
    red = prof.Shown((300.0, 320.0), pixels, "red")
    orange = prof.Shown((330.0, 320.0), pixels, "orange")
    # one of each: the nearer clearly the pyramid's own, or both of its colour
    assert prof._read_by(red, [find("red", 305.0), find("orange", 320.0)]).read == "red"
    assert prof._read_by(red, [find("red", 312.0), find("red", 285.0)]).read == "red"
    assert prof._read_by(red, [find("purple", 296.0)]).read == "purple"
    assert prof._read_by(red, [find("orange", 330.0)]).read is None       # (26 mm off)
    with caplog.at_level(logging.WARNING, logger="vision.pyramids.profile"):
        # 12 and 14 mm off: either could be its own
        assert prof._read_by(red, [find("red", 288.0), find("orange", 314.0)]).read is None
        # the only find near it is nearer the orange pyramid beside it
        assert prof._read_by(red, [find("orange", 320.0)], [red, orange]).read is None
        assert prof._read_by(orange, [find("orange", 320.0)], [red, orange]).read == \
            "orange"
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 2 and all("(300, 320) mm" in s for s in said), said


def test_the_docs_give_the_colour_calibrations_figures_as_the_code_has_them():
    """docs/calibration.md's section on calibrate-colors quotes the command's own figures:
    how long a camera is read, the zone, what it refuses, and how a profile names a
    pyramid."""
    import re
    from pathlib import Path

    from companion.commands import calibrate_colors as cc
    from vision.pyramids import profile as prof
    from vision.pyramids.colors import COLORS

    text = (Path(__file__).resolve().parents[2] / "docs" / "calibration.md").read_text(
        encoding="utf-8")
    text = " ".join(text[text.index("## The pyramids' colours"):].split())

    def said(pattern: str) -> tuple[str, ...]:
        found = re.search(pattern, text)
        assert found, pattern
        return found.groups()

    assert said(r"up to (\d+) frames") == (str(cc.CAMERA_TRIES),)
    assert said(r"from the (\d+)th on \(`SETTLE_FRAMES`") == (str(cc.SETTLE_FRAMES),)
    assert said(r"shows (\w+) of the four markers") == (
        ("one", "two", "three", "four")[cc.MARKERS_IN_SIGHT - 1],)
    zone = [float(v) for v in said(r"x (\d+)-(\d+), y (\d+)-(\d+) mm on the standard mat")]
    assert [zone[k] for k in (0, 2, 1, 3)] == list(calibration_zone(DEFAULT_MAT))
    assert said(r"the wheel ([a-z, ]+) \(") == (", ".join(cc.HUE_WHEEL),)
    assert said(r"a hue (\w+) or more steps round") == (
        ("one", "two", "three", "four")[cc.HUE_STEPS_REFUSED - 1],)
    from calibration.table import POOR_MAT_FIT_MM

    assert said(r"the mat file badly \(over (\d+) mm RMS") == (f"{POOR_MAT_FIT_MM:g}",)
    assert said(r"stays under ([\d.]+) within (\d+) mm") == (
        f"{prof.NOT_SHOWN_HEAT:g}", f"{prof.SHOWN_HEAT_MM:g}")
    assert said(r"within (\d+) mm of it and not at least (\w+) as far") == (
        f"{prof.PIECES_MM:g}", {2.0: "twice", 3.0: "three times"}[prof.CLEARLY_FARTHER])
    assert said(r"median Lab within (\d+) mm\) lies within a Mahalanobis distance of (\d+)"
                r" .* taken as at least (\d+)\)") == (
        f"{prof.PROBE_MM:g}", f"{prof.MAX_DISTANCE:g}", f"{prof.MIN_SD:g}")

    def refused(seen: str) -> int:
        return sum(cc.another_colour(n, seen) for n in COLORS if n != seen)

    assert said(r"of each hue's nine wrong names (\d+) are refused, of a white or clear "
                r"one's (\d+), of a black one's (\w+)\)") == (
        str(refused("red")), str(refused("white")), "none" if not refused("black") else "")
    assert {refused(c) for c in cc.HUE_WHEEL} == {refused("red")}
    assert refused("white") == refused("clear")


def test_a_miscount_says_what_looks_like_no_pyramid_in_words(tmp_path, capsys):
    """A photo of a game under way (cards in the zone): the finds were listed as
    "none-looking at (385, 319) mm", the colour classifier's name for no pyramid at all."""
    from pathlib import Path

    from companion.cli import main

    photo = Path(__file__).resolve().parents[2] / "sample_images" / "zarcana" / "0000.jpg"
    assert main(["calibrate-colors", str(photo), "--colors", "red,blue,green",
                 "--no-intrinsics", "--out", str(tmp_path / "colors.json")]) == 2
    err = capsys.readouterr().err
    assert "expected 3 (red, blue, green)" in err, err
    assert "none-looking" not in err and "not pyramid-looking at (" in err, err


def test_a_zone_starting_west_or_north_of_the_mat_takes_the_spaced_form(
        capsys: pytest.CaptureFixture[str]) -> None:
    """``--zone -100,0,400,240`` said argparse's "expected one argument" (a minus first reads
    as an option), though ``--zone=-100,...`` worked."""
    from companion.cli import build_parser, main

    args = build_parser().parse_args(["calibrate-colors", "photo.jpg", "--colors", "red",
                                      "--zone", "-100,-20.5,400,240"])
    assert args.zone == (-100.0, -20.5, 400.0, 240.0)
    with pytest.raises(SystemExit):     # (the zone's own words, not argparse's)
        main(["calibrate-colors", "photo.jpg", "--colors", "red", "--zone", "-5,0,-9,1"])
    err = capsys.readouterr().err
    assert "expected X0,Y0,X1,Y1 in mm with X0 < X1 and Y0 < Y1, got '-5,0,-9,1'" in err, err



@pytest.mark.parametrize("size, grey", [((1, 1), True), ((40, 60), True), ((63, 640), False)])
def test_calibrate_colors_says_a_picture_is_too_small_to_hold_a_table(
        tmp_path, capsys, size, grey):
    """A 1x1 image (a thumbnail, a placeholder) was said to have no colour (greyscale), or,
    in colour, to show no markers: the same words as observe and the camera pipeline say
    now, naming the file, and no profile written."""
    from companion.cli import main

    tiny = tmp_path / "tiny.png"
    h, w = size
    cv2.imwrite(str(tiny), np.full((h, w) if grey else (h, w, 3), 128 if grey else
                                   (40, 90, 200), np.uint8))
    out = tmp_path / "colors.json"
    assert main(["calibrate-colors", str(tiny), "--colors", "red", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert (f"calibrate-colors: error: {tiny}: {w} x {h} pixels is too small to hold a table "
            "(one needs 64 pixels a side") in err, err
    assert "greyscale" not in err and "marker" not in err and "Traceback" not in err, err
    assert not out.exists()
