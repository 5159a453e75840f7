"""The pipeline's fast paths give what the plain computation gives.

Each speed-up of the per-frame work is checked against a straightforward version of the same
computation: the colour table's per-image labels, the Lab bin index, the rotated-box NMS,
the patch cutter past remap's size limit and against each patch cut alone, the detector view's shrink before the warp,
skipping the undistortion for a lens with no distortion, undistorting only the part of
the frame where the table lies, and the colour table's candidates (blob statistics from the set
pixels alone, the merge).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

cv2 = pytest.importorskip("cv2")

from calibration.mat import DEFAULT_MAT  # noqa: E402
from calibration.table import Calibration, Intrinsics  # noqa: E402
from vision.detection.cards import _rotated_nms  # noqa: E402
from vision.detection.view import DetectorView  # noqa: E402
from vision.pyramids.colors import BINS, SHIFT, bin_index, default_model  # noqa: E402
from vision.pyramids.topdown import TopDown  # noqa: E402


def _photo(seed: int, h: int = 240, w: int = 320) -> np.ndarray:
    """Smooth blobs of colour with noise: a colour histogram that is not uniform."""
    rng = np.random.default_rng(seed)
    small = rng.integers(0, 256, (h // 16, w // 16, 3), dtype=np.uint8)
    img = cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC).astype(np.int16)
    img += rng.integers(-12, 13, img.shape, dtype=np.int16)
    return np.clip(img, 0, 255).astype(np.uint8)


@pytest.mark.parametrize("seed", range(4))
def test_bin_index_is_the_quantised_lab_bin(seed):
    img = _photo(seed)
    lab = cv2.cvtColor(img, cv2.COLOR_BGR2LAB).astype(np.int64) >> SHIFT
    want = (lab[..., 0] * BINS + lab[..., 1]) * BINS + lab[..., 2]
    assert np.array_equal(bin_index(img).astype(np.int64), want)


@pytest.mark.parametrize("seed", range(4))
def test_labels_are_the_tables_decisions(seed):
    model = default_model()
    idx = bin_index(_photo(seed))
    want, _ = model.tables(idx)
    got = model.labels(idx)
    assert got.dtype == np.uint8 and got.shape == want.shape
    assert np.array_equal(got, want)


def _greedy_nms(cx, cy, w, h, ang, scores, iou):
    """The plain definition: in score order, a box stays unless it overlaps a kept one."""
    kept: list[int] = []
    for i in np.argsort(-scores, kind="stable"):
        ri = ((float(cx[i]), float(cy[i])), (float(w[i]), float(h[i])), math.degrees(ang[i]))
        ok = True
        for k in kept:
            rk = ((float(cx[k]), float(cy[k])), (float(w[k]), float(h[k])), math.degrees(ang[k]))
            r, pts = cv2.rotatedRectangleIntersection(ri, rk)
            inter = cv2.contourArea(pts) if r != cv2.INTERSECT_NONE and pts is not None else 0.0
            if inter / max(1e-6, w[i] * h[i] + w[k] * h[k] - inter) > iou:
                ok = False
                break
        if ok:
            kept.append(int(i))
    return kept


@pytest.mark.parametrize("seed", range(6))
def test_rotated_nms_keeps_what_plain_greedy_nms_keeps(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 200))
    cards = rng.uniform(0, 320, (10, 2))
    k = rng.integers(0, len(cards), n)
    cx = (cards[k, 0] + rng.normal(0, 3, n)).astype(np.float32)
    cy = (cards[k, 1] + rng.normal(0, 3, n)).astype(np.float32)
    w = rng.uniform(20, 40, n).astype(np.float32)
    h = rng.uniform(35, 60, n).astype(np.float32)
    ang = rng.uniform(0, math.pi, n).astype(np.float32)
    scores = rng.random(n).astype(np.float32)
    got = _rotated_nms(cx, cy, w, h, ang, scores, 0.5).tolist()
    assert got == _greedy_nms(cx, cy, w, h, ang, scores, 0.5)
    assert 1 <= len(got) <= n


def _plain_calibration(px_per_mm: float) -> Calibration:
    """A camera looking straight down: table mm -> pixels is a scale and a shift."""
    to_px = np.array([[px_per_mm, 0, 40.0], [0, px_per_mm, 30.0], [0, 0, 1.0]])
    return Calibration(True, H=np.linalg.inv(to_px))


def test_patches_beyond_remaps_size_limit():
    """More patches than one remap can stack (32767 px): cut in pieces, the same pixels."""
    calib = _plain_calibration(1.2)
    td = TopDown(calib, DEFAULT_MAT)
    img = _photo(7, 1080, 1200)
    rng = np.random.default_rng(3)
    centers = rng.uniform(60, 600, (620, 2))
    angles = rng.uniform(0, 360, 620)
    every = td.patches(img, centers, angles, 64, 72.0)
    tail = td.patches(img, centers[560:], angles[560:], 64, 72.0)
    assert every.shape == (620, 64, 64, 3)
    assert np.array_equal(every[560:], tail)
    assert every[:, 20:44, 20:44].std() > 5       # real pixels, not a border fill


def _patch_one_by_one(td: TopDown, image: np.ndarray, center: np.ndarray, angle: float,
                      size: int, span: float) -> np.ndarray:
    """One patch the plain way: its affine matrix from its own "up" and "right", the
    grid warped to its map, the image remapped with the map's x and y apart."""
    k = span / size
    t = math.radians(angle)
    up = np.array([math.cos(t), math.sin(t)])
    right = np.array([-up[1], up[0]])
    M = np.column_stack([right * k, -up * k, center + (right - up) * (0.5 * k - span / 2)])
    M[:, 2] += td.border
    M /= td.step
    m = cv2.warpAffine(td._grid, M, (size, size), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                       borderMode=cv2.BORDER_REPLICATE)
    out: np.ndarray = cv2.remap(image, np.ascontiguousarray(m[..., 0]),
                                np.ascontiguousarray(m[..., 1]), cv2.INTER_LINEAR,
                                borderMode=cv2.BORDER_REPLICATE)
    return out


@pytest.mark.parametrize("span", [72.0, 56.0, 48.0])
def test_patches_are_the_patches_cut_one_by_one(span):
    """All of a call's patch matrices at once, the maps remapped as one two-channel map:
    the same pixels as each patch cut alone, through a distorting lens too."""
    cam = np.array([[1400.0, 0, 960], [0, 1400.0, 540], [0, 0, 1]])
    R = cv2.Rodrigues(np.array([0.25, -0.1, 0.3]))[0]
    to_px = cam @ np.column_stack([R[:, 0], R[:, 1], np.array([-420.0, -300.0, 1250.0])])
    calib = Calibration(True, H=np.linalg.inv(to_px), intrinsics=Intrinsics(
        cam, np.array([-0.12, 0.03, 0.0005, -0.0004, 0.0])), image_size=(1920, 1080))
    td = TopDown(calib, DEFAULT_MAT)
    img = _photo(11, 1080, 1920)
    rng = np.random.default_rng(int(span))
    centers = np.column_stack([rng.uniform(-20, 920, 40), rng.uniform(-20, 670, 40)])
    angles = rng.uniform(0, 360, 40)
    got = td.patches(img, centers, angles, 64, span)
    assert got[:, 20:44, 20:44].std() > 5
    for c, a, p in zip(centers, angles, got):
        assert np.array_equal(p, _patch_one_by_one(td, img, c, float(a), 64, span))


@pytest.mark.parametrize("px_per_mm", [0.9, 1.15, 1.4])
def test_detector_view_averages_fine_detail_instead_of_aliasing(px_per_mm):
    """A one-pixel checkerboard shrunk 2-3x onto the canvas is an even grey, as an area
    average makes it (a bare warp samples it into stripes of black and white). 0.9 to 1.4
    image px per mm puts the canvas at 1/3 to 1/2 of the image's scale, the range that now
    takes the whole-factor shrink."""
    calib = _plain_calibration(px_per_mm)
    view = DetectorView.for_mat(DEFAULT_MAT, 320)
    h = int(DEFAULT_MAT.height_mm * px_per_mm) + 80
    w = int(DEFAULT_MAT.width_mm * px_per_mm) + 80
    yy, xx = np.mgrid[0:h, 0:w]
    board = np.where((xx + yy) % 2 == 0, 255, 0).astype(np.uint8)
    canvas = view.render(cv2.merge([board] * 3), calib)
    inside = canvas[20:150, 20:250, 0].astype(np.float64)
    assert abs(inside.mean() - 127.5) < 12
    assert inside.std() < 20


def test_a_lens_without_distortion_is_not_undistorted():
    """Intrinsics with every distortion coefficient zero move no pixel: the detector's view
    is the same as with no intrinsics, and the pipeline hands on the frame itself."""
    from vision.pipeline import TablePipeline

    K = np.array([[900.0, 0, 640], [0, 900.0, 360], [0, 0, 1]])
    flat = Intrinsics(K, np.zeros(5))
    bent = Intrinsics(K, np.array([-0.1, 0.02, 0, 0, 0]))
    assert not flat.distorts and bent.distorts
    calib = _plain_calibration(1.2)
    img = _photo(11, 720, 1280)
    view = DetectorView.for_mat(DEFAULT_MAT, 320)
    with_k = Calibration(True, H=calib.H, intrinsics=flat)
    assert np.array_equal(view.render(img, with_k),
                          view.render(img, calib))
    ideal, ideal_calib = TablePipeline._undistorted(
        TablePipeline.__new__(TablePipeline), img, with_k)
    assert ideal is img and ideal_calib is with_k


def _far_calibration(lens: Intrinsics) -> Calibration:
    """A camera straight down, far enough that the mat fills about a third of the frame."""
    to_px = np.array([[0.6, 0, 640.0], [0, 0.6, 300.0], [0, 0, 1.0]])
    return Calibration(True, H=np.linalg.inv(to_px), intrinsics=lens)


def test_the_lens_is_taken_out_only_where_the_table_can_be():
    """A far camera: the undistorted frame is the whole frame's undistortion inside the
    window (the table the detector's square view shows, and a card length around it) and
    black outside; a camera whose frame the table fills gets the whole frame."""
    from vision.detection.view import shown_mm
    from vision.pipeline import TablePipeline, table_window

    K = np.array([[1100.0, 0, 960], [0, 1100.0, 540], [0, 0, 1]])
    lens = Intrinsics(K, np.array([-0.12, 0.03, 0.0005, -0.0004, 0.0]))
    img = _photo(12, 1080, 1920)
    pl = TablePipeline.__new__(TablePipeline)
    pl.mat, pl.card_size_mm, pl._undistort_maps = DEFAULT_MAT, (70.0, 120.0), {}
    calib = _far_calibration(lens)
    ideal, ideal_calib = pl._undistorted(img, calib)
    assert ideal_calib.intrinsics is None
    area, pad = shown_mm(DEFAULT_MAT), 120.0
    assert area == (-40.0, -40.0, 940.0, 940.0)   # the 900 x 650 mat's square view
    x0, y0, x1, y1 = table_window(ideal_calib, area, (1920, 1080), pad)
    # the padded view: (-160 .. 1060) x (-160 .. 1060) mm at 0.6 px/mm from (640, 300)
    assert (x0, y0, x1, y1) == (542, 202, 1278, 938)
    m1, m2 = cv2.initUndistortRectifyMap(K, lens.dist, None, K, (1920, 1080), cv2.CV_16SC2)
    whole = cv2.remap(img, m1, m2, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)
    assert np.array_equal(ideal[y0:y1, x0:x1], whole[y0:y1, x0:x1])
    outside = np.ones(img.shape[:2], bool)
    outside[y0:y1, x0:x1] = False
    assert not ideal[outside].any()
    # close up: the window would be most of the frame, so the whole frame is undistorted
    near = Calibration(True, H=np.linalg.inv(np.array([[1.6, 0, 240.0], [0, 1.6, 20.0],
                                                       [0, 0, 1.0]])), intrinsics=lens)
    assert table_window(replace(near, intrinsics=None), area, (1920, 1080), pad) is None
    close, _ = pl._undistorted(img, near)
    assert np.array_equal(close, whole)


def _plain_propose(seg):
    """The colour table's candidates the plain way: OpenCV's component statistics over the
    whole view, each blob's mask cut from the label image, and the merge as a loop over the
    candidates kept so far."""
    from vision.pyramids import proposals as P

    out = []
    k3 = np.ones((3, 3), np.uint8)
    for gi, group in enumerate(P.GROUPS):
        lut = np.zeros(256, np.uint8)
        lut[list(group)] = 1
        fg = cv2.morphologyEx(cv2.LUT(seg.label, lut), cv2.MORPH_CLOSE, k3)
        n, comp, stats, cents = cv2.connectedComponentsWithStats(fg, connectivity=8)
        areas = stats[:, cv2.CC_STAT_AREA] / seg.ppm ** 2
        for i in range(1, n):
            if not P.MIN_AREA_BY_GROUP[gi] <= areas[i] <= P.MAX_AREA_BY_GROUP[gi]:
                continue
            x, y, w, h, area = (int(v) for v in stats[i])
            sub = comp[y:y + h, x:x + w] == i
            lab = seg.label[y:y + h, x:x + w]
            counts = np.bincount(lab[sub], minlength=P.BACKGROUND + 1)[:P.BACKGROUND]
            cx, cy = cents[i]
            out.append(P.Candidate(((cx + 0.5) / seg.ppm, (cy + 0.5) / seg.ppm),
                                   int(np.argmax(counts)), areas[i], "blob"))
            for c in np.flatnonzero(counts):
                if gi == 0 and counts[c] / seg.ppm ** 2 >= P.MIN_AREA_MM2 \
                        and counts[c] < 0.9 * area:
                    m = cv2.morphologyEx((sub & (lab == c)).astype(np.uint8),
                                         cv2.MORPH_CLOSE, k3)
                    nn, _, st, cc = cv2.connectedComponentsWithStats(m, connectivity=8)
                    out.extend(P.Candidate(((x + cc[j][0] + 0.5) / seg.ppm,
                                            (y + cc[j][1] + 0.5) / seg.ppm),
                                           int(c), st[j, 4] / seg.ppm ** 2, "part")
                               for j in range(1, nn) if st[j, 4] / seg.ppm ** 2 >= P.MIN_AREA_MM2)
            if P.PEAKS_FROM_MM2 <= areas[i] <= P.PEAK_LIMIT_MM2[gi]:
                out.extend(P._peaks(sub, (x, y), seg.ppm, lab, areas[i]))
    order = {"part": 0, "blob": 1, "peak": 2}
    keep: list = []
    for c in sorted(out, key=lambda c: order[c.source]):
        if all(math.dist(c.center_mm, k.center_mm) ** 2 > P.MERGE_MM ** 2 for k in keep):
            keep.append(c)
    return keep


def _pyramid_labels(seed: int, h: int = 300, w: int = 420, shapes: int = 40) -> np.ndarray:
    """A colour table's labels as a view of pyramids gives them: ``shapes`` discs and squares
    of every class, touching and overlapping (one blob of several colours, two of one
    colour), big patches of card paper and art, and speckle."""
    from vision.pyramids.colors import BACKGROUND

    rng = np.random.default_rng(seed)
    label = np.full((h, w), BACKGROUND, np.uint8)
    for _ in range(shapes):
        c = int(rng.integers(0, 10))
        x, y = int(rng.integers(0, w)), int(rng.integers(0, h))
        r = int(rng.choice([4, 8, 12, 16, 30]))
        if rng.random() < 0.5:
            cv2.circle(label, (x, y), r, c, -1)
        else:
            cv2.rectangle(label, (x - r, y - r), (x + r, y + int(r * rng.uniform(0.5, 2))), c, -1)
    speckle = rng.random((h, w)) < 0.02
    label[speckle] = rng.integers(0, 10, int(speckle.sum()))
    return label


def test_candidates_are_the_plain_components_and_merge():
    from vision.pyramids.proposals import Segmentation, propose

    kinds = set()
    # 40 shapes, and a crowded table of 150 (most blobs neither of several colours nor
    # large enough for distance peaks: read in one pass, the others one by one)
    for seed, shapes in [*((s, 40) for s in range(6)), (6, 150), (7, 150)]:
        for ppm in (1.0, 0.8, 0.75):
            seg = Segmentation(_pyramid_labels(seed, shapes=shapes), ppm)
            want = _plain_propose(seg)
            got = propose(seg)
            assert len(want) > 10
            assert [(c.center_mm, c.color, c.area_mm2, c.source) for c in got] == \
                [(c.center_mm, c.color, c.area_mm2, c.source) for c in want], (seed, ppm)
            kinds |= {c.source for c in want}
    assert kinds == {"blob", "part", "peak"}



def _plain_peaks(p, min_p):
    """The heat map's peaks the plain way: each local maximum's 3x3 window on its own."""
    from vision.pyramids.heat import CELL_MM

    mx = cv2.dilate(p, np.ones((3, 3), np.uint8))
    pad = np.pad(p, 1)
    pts, vals = [], []
    for v, u in zip(*np.nonzero((p >= mx) & (p >= min_p))):
        win = pad[v:v + 3, u:u + 3].astype(np.float64)
        s = win.sum()
        du = (win.sum(axis=0) @ np.array([-1.0, 0.0, 1.0])) / s
        dv = (win.sum(axis=1) @ np.array([-1.0, 0.0, 1.0])) / s
        pts.append(((u + 0.5 + du) * CELL_MM, (v + 0.5 + dv) * CELL_MM))
        vals.append(p[v, u])
    return np.array(pts, np.float64).reshape(-1, 2), np.array(vals, np.float32)


@pytest.mark.parametrize("seed", range(4))
def test_heat_peaks_are_each_windows_weighted_middle(seed):
    from vision.pyramids.heat import HeatMap

    rng = np.random.default_rng(seed)
    # thousands of peaks (a few sums in another order would round otherwise), some on the
    # map's edges (their window reaches past it: zeros there)
    p = (rng.random((150, 210)) ** 4).astype(np.float32)
    for min_p in (0.05, 0.3, 0.9):
        pts, vals = HeatMap(p).peaks(min_p)
        want, want_vals = _plain_peaks(p, min_p)
        assert len(want) > (0 if min_p == 0.9 else 20)
        assert pts.dtype == np.float64 and pts.shape == want.shape
        assert np.array_equal(pts, want) and np.array_equal(vals, want_vals)
    assert HeatMap(np.zeros((5, 5), np.float32)).peaks(0.1)[0].shape == (0, 2)


@pytest.mark.parametrize("group", [(0, 1, 2, 3, 4, 5, 6, 7), (8, 9), (3,), (1, 4, 9)])
def test_group_mask_is_the_classes_of_the_group(group):
    # a run of classes (the two the finder searches) by one comparison, any other set by a
    # look-up table: nonzero exactly on the group's classes, whatever else the label holds
    from vision.pyramids.proposals import group_mask

    label = np.random.default_rng(len(group)).integers(0, 256, (97, 131), dtype=np.uint8)
    label[:, :40] %= 11
    got = group_mask(label, group)
    assert got.dtype == np.uint8 and got.shape == label.shape
    assert np.array_equal(got != 0, np.isin(label, group))


def test_gains_are_applied_as_the_plain_formula_each_time():
    # the look-up table is kept per gains: another frame's gains get their own
    from vision.pyramids.topdown import apply_gains

    img = _photo(3)
    for gains in ([1.1, 0.9, 1.3], [0.8, 1.0, 2.9], [1.1, 0.9, 1.3], [1.0, 1.0, 1.0]):
        g = np.array(gains, np.float32)
        want = np.clip(img.astype(np.float32) * g + 0.5, 0, 255).astype(np.uint8)
        got = apply_gains(img, g)
        assert np.array_equal(got, want), gains
    assert apply_gains(img, np.ones(3, np.float32)) is img


def test_histogram_smoothing_is_one_two_one_along_each_axis():
    from vision.pyramids.colors import _smooth

    v = np.random.default_rng(5).random((8, 7, 6, 2)).astype(np.float32)
    want = v.copy()
    for ax in range(3):
        p = np.pad(want, [(1, 1) if a == ax else (0, 0) for a in range(4)], mode="edge")
        n = want.shape[ax]
        want = (np.take(p, range(n), axis=ax) + 2 * np.take(p, range(1, n + 1), axis=ax)
                + np.take(p, range(2, n + 2), axis=ax)) / 4.0
    got = _smooth(v)
    assert got.dtype == np.float32 and np.array_equal(got, want)


def test_size_columns_follow_the_classifiers_own_order():
    # kept per list of names: a shape classifier whose classes come in another order (a
    # stand-in, another file) gets its own columns
    from vision.pyramids.classifier import SECTORS, SHAPE_CLASSES
    from vision.pyramids.find import _size_columns

    for names in (SHAPE_CLASSES, tuple(np.random.default_rng(2).permutation(SHAPE_CLASSES))):
        cols = _size_columns(tuple(str(n) for n in names))
        assert [[names[u]] + [names[i] for i in lie] for u, lie in cols] == \
            [[f"{p}U"] + [f"{p}L{k:02d}" for k in range(SECTORS)] for p in (1, 2, 3)]


def _plain_paper_gains(samples, per_marker):
    """The paper's gains marker by marker, as they were first written."""
    from vision.pyramids.topdown import GAIN_RANGE, PAPER_LEVEL

    meds = []
    for k in range(0, len(samples) - per_marker + 1, per_marker):
        px = samples[k:k + per_marker].astype(np.float32)
        px = px[(px >= 0).all(axis=1)]
        if len(px) < per_marker // 3:
            continue
        lum = px.sum(axis=1)
        keep = px[lum >= np.percentile(lum, 40)]
        if keep.sum(axis=1).mean() > 40:
            meds.append(np.median(keep, axis=0))
    if len(meds) < 2:
        return np.ones(3, np.float32)
    paper = np.median(np.array(meds, np.float32), axis=0)
    if paper.min() < 8:
        return np.ones(3, np.float32)
    return np.clip(PAPER_LEVEL / paper, *GAIN_RANGE).astype(np.float32)


def test_paper_gains_are_the_marker_by_marker_ones():
    # rings wholly in the frame (read together), partly out of it (-1: read alone) or too
    # little in it, dark rings, a ring cut short at the end; gains and ones alike
    from vision.pyramids.topdown import paper_gains

    rng = np.random.default_rng(11)
    kinds = set()
    for _ in range(400):
        per, markers = int(rng.integers(3, 80)), int(rng.integers(0, 7))
        s = rng.integers(0, 256, (markers * per + int(rng.integers(0, per)), 3)).astype(np.int16)
        if rng.random() < 0.5:
            s[rng.random(len(s)) < rng.random()] = -1
        if rng.random() < 0.3:
            s[:len(s) // 2] //= 8
        want = _plain_paper_gains(s, per)
        got = paper_gains(s, per)
        assert got.dtype == np.float32 and np.array_equal(got, want)
        kinds.add(bool(np.all(want == 1.0)))
    assert kinds == {True, False}
