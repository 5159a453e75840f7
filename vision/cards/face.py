"""A card's face from a photo of it: find the card, undo the perspective.

``companion enroll-deck`` learns a deck from one image per card. A scan is the face itself;
a photo (a phone held over the card on a table) also shows the table round it, at a slant.
:func:`find_card` looks for the card's outline: the largest convex four-sided shape in the
photo whose sides are in the deck's proportions and lie on strong edges all round (a card's
corners are rounded, so the outline's hull is fitted with four sides, then each side with a
line through the edge it lies on). :func:`card_face` cuts it out, square on and portrait,
ready for enrollment. A photo with another card-shaped outline beside the card, at least
half its size (:data:`RIVAL_SHARE`), shows several cards and is refused.

Photograph the card whole, flat on a plain surface of another colour: on a busy cloth
(checks, dots, stripes) the card is found less often, and where it is not, the loader names
the photo (``bench/RESULTS.md``, "Card identity, enrolled from photos").

Which end of the card is the top of its art cannot be seen in its outline, so a photo is
taken as it stands: a card upright in the photo is upright, and a card lying across the
photo has its top to the left, as for a landscape scan (:meth:`vision.synth.deck.Deck.image`).
Enrollment learns each card both ways up anyway; only which end the record calls the top
follows this.

With ``faces="auto"`` an image in the card's own proportions (within
:data:`SCAN_ASPECT_TOLERANCE`) is taken for a scan, as it stands, and any other for a photo.
A photo's proportions are the camera's (4:3, 3:2, 16:9), a scan's the card's. The outline
alone cannot tell them apart: a scan holds smaller rectangles in a card's proportions (its
art's frame, a panel of the art), and a search would cut the scan down to one of them.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from calibration.table import clockwise_from_top_left
from vision.synth.deck import FACES

#: longest side of the picture the outline is looked for in (photos are large; the outline
#: needs no detail)
WORK_SIDE = 800
#: the card's outline must cover at least this share of the photo
MIN_SHARE = 0.04
#: and its sides' ratio (long over short) be within this share of the deck's: a hand-held
#: camera's slant moves it a few percent, while at 0.2 a whole table's lattice of cards was
#: taken for one card of the Decktet's proportions (sample_images/zarcana/0000.jpg)
ASPECT_TOLERANCE = 0.12
#: ``auto``: an image whose long side over its short is within this share of the card's is a
#: scan (the shared decks' scans are within 0.2%; a phone's 16:9 is 3.7% off the tarot's 12:7)
SCAN_ASPECT_TOLERANCE = 0.03
#: a card's corners must stand at least this share of the picture's longer side inside it:
#: the whole card in the picture
EDGE_MARGIN = 0.015


@dataclass(frozen=True)
class CardOutline:
    """A card found in a photo: its corners (px, the art's top-left, top-right, bottom-right,
    bottom-left) and the share of the photo it covers."""

    corners: np.ndarray
    share: float
    #: other card-shaped outlines at least half as large elsewhere in the photo (beside it,
    #: not inside it): a photo of several cards, or of a table
    rivals: int = 0

    def clear_of_edges(self, shape: tuple[int, ...], margin: float = EDGE_MARGIN) -> bool:
        h, w = shape[:2]
        m = margin * max(h, w)
        x, y = self.corners[:, 0], self.corners[:, 1]
        return bool(x.min() >= m and y.min() >= m and x.max() <= w - 1 - m
                    and y.max() <= h - 1 - m)


def _order(quad: np.ndarray) -> np.ndarray:
    """Four corners in the art's order: top-left, top-right, bottom-right, bottom-left of a
    portrait card; a card lying across the picture has its top to the left."""
    q = clockwise_from_top_left(quad)
    # q[0] top-left, q[1] top-right, q[2] bottom-right, q[3] bottom-left (on screen)
    top = np.linalg.norm(q[1] - q[0]) + np.linalg.norm(q[2] - q[3])
    side = np.linalg.norm(q[3] - q[0]) + np.linalg.norm(q[2] - q[1])
    if top > side:
        # lying across: its top is the picture's left edge, as if the picture were turned a
        # quarter clockwise (bottom-left, top-left, top-right, bottom-right)
        q = np.roll(q, 1, axis=0)
    return q.astype(np.float32)


def _quad_of(contour: np.ndarray) -> np.ndarray | None:
    """Four corners fitted to a contour's convex hull (rounded corners give it more than
    four points), or None when no four-sided shape fits it."""
    hull = cv2.convexHull(contour)
    peri = cv2.arcLength(hull, True)
    for eps in (0.01, 0.02, 0.03, 0.05):
        approx = cv2.approxPolyDP(hull, eps * peri, True)
        if len(approx) == 4:
            return approx.reshape(4, 2).astype(np.float32)
        if len(approx) < 4:
            break
    # rounded corners left extra points: the hull's area-fitting rectangle, if it fits well
    box = cv2.boxPoints(cv2.minAreaRect(hull)).astype(np.float32)
    if cv2.contourArea(hull) >= 0.93 * cv2.contourArea(box):
        return box
    return None


def _aspect(q: np.ndarray) -> float:
    a = float(np.linalg.norm(q[1] - q[0]) + np.linalg.norm(q[2] - q[3])) / 2
    b = float(np.linalg.norm(q[3] - q[0]) + np.linalg.norm(q[2] - q[1])) / 2
    return max(a, b) / max(min(a, b), 1e-6)


def _masks(small: np.ndarray) -> list[np.ndarray]:
    """Binary pictures whose outlines may hold the card: edges closed into shapes (also on
    a blurred copy, where a dotted or checked cloth's fine pattern fades and a card's long
    edges stay), and the picture split by brightness and by colour both ways (a light card
    on a dark table, a dark-bordered card on a light one, a card on a table of another
    hue)."""
    grey = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)
    out = []
    for sigma in (1.0, 2.5, 4.0):
        g = cv2.GaussianBlur(grey, (0, 0), sigma)
        mag = cv2.magnitude(cv2.Sobel(g, cv2.CV_32F, 1, 0), cv2.Sobel(g, cv2.CV_32F, 0, 1))
        # plain thresholds, not Canny: OpenCV 5.0's Canny crashed on a busy cloth's
        # thousands of edges with one thread
        for level in (max(float(np.percentile(mag, 85)), 20.0), 40.0):
            e = (mag >= level).astype(np.uint8) * 255
            out.append(cv2.morphologyEx(e, cv2.MORPH_CLOSE, np.ones((5, 5), np.uint8),
                                        iterations=2))
    lab = cv2.cvtColor(cv2.GaussianBlur(small, (0, 0), 2.0), cv2.COLOR_BGR2LAB)
    for ch in range(3):
        _, t = cv2.threshold(lab[..., ch], 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
        t = cv2.morphologyEx(t, cv2.MORPH_OPEN, np.ones((5, 5), np.uint8))
        out += [t, 255 - t]
    return out


def _side_points(gx: np.ndarray, gy: np.ndarray, a: np.ndarray, b: np.ndarray,
                 strong: float, reach: float) -> tuple[np.ndarray, int]:
    """Points of the picture's strongest edge across the side ``a``-``b`` (within ``reach``
    px of it, the gradient across the side at least ``strong``), and how many were looked
    for (the rounded corners are left out)."""
    h, w = gx.shape
    side = b - a
    length = float(np.linalg.norm(side))
    normal = np.array([-side[1], side[0]]) / max(length, 1e-6)
    t = np.linspace(0.1, 0.9, 32)
    offsets = np.arange(-reach, reach + 0.5, 1.0)
    pts = a[None, None] + t[:, None, None] * side[None, None] + offsets[None, :, None] * normal
    ix = np.rint(pts[..., 0]).astype(int).clip(0, w - 1)
    iy = np.rint(pts[..., 1]).astype(int).clip(0, h - 1)
    across = np.abs(gx[iy, ix] * normal[0] + gy[iy, ix] * normal[1])
    k = across.argmax(axis=1)
    rows = np.arange(len(t))
    ok = across[rows, k] >= strong
    return pts[rows, k][ok], len(t)


def _refine(q: np.ndarray, gx: np.ndarray, gy: np.ndarray, strong: float
            ) -> tuple[np.ndarray, float] | None:
    """The quad's corners moved onto the lines fitted to its sides' edge points, and the
    share of its sides' points that lie on those lines (within 1.5 px); None where a side
    has too few edge points for a line. A card's outline lies on strong edges all round;
    the hull of a card merged with a patch of cloth does not."""
    lines = []
    on = total = 0
    for a, b in zip(q, np.roll(q, -1, axis=0)):
        pts, n = _side_points(gx, gy, a, b, strong, reach=6.0)
        total += n
        if len(pts) < 0.5 * n:
            return None
        vx, vy, x0, y0 = cv2.fitLine(pts.astype(np.float32), cv2.DIST_HUBER, 0, 0.01, 0.01
                                     ).reshape(4)
        d = np.abs((pts[:, 0] - x0) * vy - (pts[:, 1] - y0) * vx)
        on += int((d <= 1.5).sum())
        lines.append((np.array([x0, y0]), np.array([vx, vy])))
    corners = []
    for (p1, d1), (p2, d2) in zip(np.roll(np.array(lines, dtype=object), 1, axis=0), lines):
        # where the previous side's line meets this one's: this side's start corner
        m = np.array([[d1[0], -d2[0]], [d1[1], -d2[1]]], np.float64)
        if abs(np.linalg.det(m)) < 1e-6:
            return None
        s1 = np.linalg.solve(m, (p2 - p1).astype(np.float64))[0]
        corners.append(p1 + s1 * d1)
    return np.array(corners, np.float32), on / max(total, 1)


#: another card-shaped outline beside the card at least this share of its size makes the
#: photo one of several cards
RIVAL_SHARE = 0.5
#: a card's outline must lie on strong edges along at least this share of its sides
MIN_SUPPORT = 0.6


def find_card(image: np.ndarray, aspect: float, cut_off: list[bool] | None = None
              ) -> CardOutline | None:
    """The largest card-shaped outline in ``image`` (BGR) that stands clear of its edges,
    ``aspect`` the card's long side over its short; None where there is none (and then,
    where a card-shaped outline was left out for reaching the picture's edge, True appended
    to ``cut_off``)."""
    h, w = image.shape[:2]
    scale = min(1.0, WORK_SIDE / max(h, w))
    small = cv2.resize(image, (max(1, round(w * scale)), max(1, round(h * scale))),
                       interpolation=cv2.INTER_AREA) if scale < 1 else image
    area = float(small.shape[0] * small.shape[1])
    grey = cv2.GaussianBlur(cv2.cvtColor(small, cv2.COLOR_BGR2GRAY), (0, 0), 1.5)
    gx = cv2.Sobel(grey, cv2.CV_32F, 1, 0)
    gy = cv2.Sobel(grey, cv2.CV_32F, 0, 1)
    strong = max(float(np.percentile(cv2.magnitude(gx, gy), 85)), 20.0)
    found: list[tuple[float, np.ndarray]] = []
    largest = 0.0
    edge = False
    for mask in _masks(small):
        contours, _ = cv2.findContours(mask, cv2.RETR_LIST, cv2.CHAIN_APPROX_SIMPLE)
        for c in contours:
            a = cv2.contourArea(c)
            # outlines under half the largest card's matter only as other cards beside it
            if a < MIN_SHARE * area or a < RIVAL_SHARE * 0.8 * largest * area:
                continue
            q = _quad_of(c)
            if q is None or not cv2.isContourConvex(q.reshape(-1, 1, 2)):
                continue
            if abs(_aspect(q) / aspect - 1.0) > ASPECT_TOLERANCE:
                continue
            share = float(cv2.contourArea(q)) / area
            if not CardOutline(q, share).clear_of_edges(small.shape):
                edge = edge or share < 0.9      # (not the picture's own outline)
                continue    # the picture's own edge, or a card cut off by it
            fitted = _refine(q, gx, gy, strong)
            if fitted is None or fitted[1] < MIN_SUPPORT:
                continue
            q = fitted[0]
            if abs(_aspect(q) / aspect - 1.0) > ASPECT_TOLERANCE:
                continue
            found.append((share, q))
            largest = max(largest, share)
    if not found:
        if edge and cut_off is not None:
            cut_off.append(True)
        return None
    share, q = max(found, key=lambda f: f[0])
    outline = q.reshape(-1, 1, 2)
    rivals = [f for f in found if f[0] >= RIVAL_SHARE * share and cv2.pointPolygonTest(
        outline, tuple(float(v) for v in f[1].mean(axis=0)), False) < 0]
    # the same card beside it twice (two masks' outlines of one rival) counts once
    centres: list[np.ndarray] = []
    for _, r in rivals:
        c = r.mean(axis=0)
        if all(np.linalg.norm(c - o) > 0.25 * np.sqrt(share * area) for o in centres):
            centres.append(c)
    return CardOutline(_order(q / scale), share, len(centres))


def cut_face(image: np.ndarray, outline: CardOutline, aspect: float) -> np.ndarray:
    """The card square on and portrait (its top at row 0), as tall as its longer side was."""
    q = outline.corners
    height = int(round(max(np.linalg.norm(q[3] - q[0]), np.linalg.norm(q[2] - q[1]))))
    height = max(height, 16)
    width = max(8, int(round(height / aspect)))
    dst = np.array([[0, 0], [width, 0], [width, height], [0, height]], np.float32) - 0.5
    M = cv2.getPerspectiveTransform(q, dst)
    return cv2.warpPerspective(image, M, (width, height), flags=cv2.INTER_AREA,
                               borderMode=cv2.BORDER_REPLICATE)


def card_face(image: np.ndarray, aspect: float, faces: str = "auto"
              ) -> tuple[np.ndarray, CardOutline | None]:
    """(the card's face, the outline it was cut from or None for a scan) of one deck image,
    ``aspect`` the card's long side over its short.

    ``faces``: ``"scans"`` (the image is the face), ``"photos"`` (find the card in it) or
    ``"auto"`` (a scan where the image has the card's proportions, else a photo). ValueError
    where a photo shows no card, or several."""
    if faces not in FACES:
        raise ValueError(f"faces must be one of {', '.join(FACES)}; got {faces!r}")
    h, w = image.shape[:2]
    own = max(h, w) / max(min(h, w), 1)
    if faces == "scans" or (faces == "auto"
                            and abs(own / aspect - 1.0) <= SCAN_ASPECT_TOLERANCE):
        return image, None
    cut_off: list[bool] = []
    outline = find_card(image, aspect, cut_off)
    if outline is None and cut_off:
        raise ValueError("the card found reaches the photo's edge, or nearly (within "
                         f"{EDGE_MARGIN:.1%} of its longer side): photograph the whole card "
                         "with some of the surface round it on every side")
    if outline is None:
        why = ("" if faces == "photos" else
               f" (its sides are {own:.2f} to 1, not the card's {aspect:.2f}, so it was "
               "taken for a photo; for images cut to the cards, pass --faces scans)")
        raise ValueError(f"no card found in the photo{why}: photograph the whole card, "
                         "flat on a plain surface of another colour, from above")
    if outline.rivals:
        raise ValueError(f"the photo shows {outline.rivals + 1} cards or more: photograph "
                         "one card at a time")
    return cut_face(image, outline, aspect), outline
