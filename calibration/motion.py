"""Motion blur: guess it from a frame, and undo it.

A camera that moves while the shutter is open smears every point of the frame along one
line: the frame is the sharp one convolved with a short straight line (``length_px`` long,
at ``angle_deg``). Ten pixels of it are enough to merge a mat marker's cells, so the
marker detector sees no square at all, and the frame would go uncalibrated. Such a frame can
be sharpened again by Wiener deconvolution once the line is known; this module guesses the
line and deconvolves, and :class:`calibration.table.TableCalibrator` tries its guesses one
after another until the markers read and agree with each other (the markers are the check
that a guess was right: a wrong line leaves them unreadable).

The guesses come from the frame itself:

* **Direction**, from the frame's power spectrum: blur along a line multiplies it by
  ``sinc^2(L * f.u)`` (``u`` the line's direction), stripes of zeros across the spectrum
  perpendicular to the line. The spectrum, averaged over tiles and with its fall-off with
  frequency taken out, is matched against that pattern for each direction and length.
* **Length**, along a guessed direction, from the autocorrelation of the frame's derivative
  in that direction: the derivative of a box of length L is a pair of opposite spikes L
  apart, so the autocorrelation dips to its most negative near lag L.

Neither guess is exact (on dev renders the direction was within 10 degrees for most blurs
over 9 px, the length 0-3 px long), and deconvolution forgives little (about 10 degrees,
and the kernel's length or up to 2 px more), so the caller tries a few of each.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import cv2
import numpy as np

#: tile side (px) of the averaged power spectrum
SPECTRUM_TILE = 256
#: frequencies (cycles a pixel) the direction is judged on: below, the frame's content
#: dominates; above, JPEG and sensor noise fill the spectrum's zeros in
SPECTRUM_BAND = (0.02, 0.35)
#: the floor under sinc^2 in the pattern matched (its zeros are not zero in a real frame)
PATTERN_FLOOR = 0.01
#: lengths (px) the spectrum is matched against, and the longest lag of the length guess
LENGTHS_PX = np.arange(4.0, 16.5, 0.5)
MAX_LAG_PX = 20
#: the shortest lag: at 1-3 px the derivative of sensor noise and JPEG blocks anticorrelates
#: more than a long blur does
MIN_LAG_PX = 4
#: Wiener deconvolution's noise-to-signal ratio: 0.003-0.03 all read the markers of dev
#: renders blurred 9-14 px (with the true line); below, noise and JPEG blocks are amplified
#: into false edges, above, the markers' cells stay merged
WIENER_NSR = 0.01
#: the mirrored border (px) around a frame before its transform: wider than the longest
#: kernel a guess makes (:data:`MAX_LAG_PX` + 2 px) needs, so one transform of the frame
#: serves every guess; a longer blur gets a border of its own
BORDER_PX = 32


@dataclass(frozen=True)
class MotionBlur:
    """A straight-line blur: ``length_px`` long, at ``angle_deg`` (0 along +x, 90 along +y,
    image axes; a line has no sense, so 0-180)."""

    length_px: float
    angle_deg: float

    def __post_init__(self) -> None:
        if not (math.isfinite(self.length_px) and self.length_px > 0):
            raise ValueError(f"motion blur length must be a positive number of pixels, "
                             f"got {self.length_px!r}")
        if not math.isfinite(self.angle_deg):
            raise ValueError(f"motion blur angle must be finite, got {self.angle_deg!r}")

    def kernel(self) -> np.ndarray:
        """The blur as a normalised convolution kernel: a one-pixel line ``length_px`` long
        through the middle of an odd square."""
        n = int(math.ceil(self.length_px)) | 1
        k = np.zeros((n, n), np.float32)
        c = n // 2
        a = math.radians(self.angle_deg)
        half = (self.length_px - 1) / 2
        p0 = (int(round(c - math.cos(a) * half)), int(round(c - math.sin(a) * half)))
        p1 = (int(round(c + math.cos(a) * half)), int(round(c + math.sin(a) * half)))
        cv2.line(k, p0, p1, 1.0, 1)
        out: np.ndarray = k / k.sum()
        return out

    def describe(self) -> str:
        return f"about {self.length_px:.0f} px at {self.angle_deg % 180:.0f} degrees"


class Deconvolver:
    """One frame (gray or BGR, uint8), transformed once and deconvolved with one line blur
    after another: the calibrator's guesses (up to 8 a frame) share its forward transforms
    and pay only for the kernel's and the inverse ones."""

    def __init__(self, image: np.ndarray) -> None:
        if image.dtype != np.uint8 or image.ndim not in (2, 3):
            raise ValueError(f"deblur needs a uint8 gray or colour image, got {image.dtype} "
                             f"of shape {image.shape}")
        self.image = image
        # border (px) -> (the planes' transforms, two planes to each as a + ib, and the
        # transform's size)
        self._spectra: dict[int, tuple[list[np.ndarray], tuple[int, int]]] = {}

    def _transformed(self, pad: int) -> tuple[list[np.ndarray], tuple[int, int]]:
        if pad not in self._spectra:
            x = cv2.copyMakeBorder(self.image, pad, pad, pad, pad, cv2.BORDER_REFLECT)
            H2, W2 = cv2.getOptimalDFTSize(x.shape[0]), cv2.getOptimalDFTSize(x.shape[1])
            x = cv2.copyMakeBorder(x, 0, H2 - x.shape[0], 0, W2 - x.shape[1],
                                   cv2.BORDER_REFLECT)
            planes = [x.astype(np.float32)] if x.ndim == 2 else \
                [c.astype(np.float32) for c in cv2.split(x)]
            # Two real planes go through one complex transform as a + ib: the filter is
            # Hermitian (the kernel is real), so it keeps the two apart; a colour frame
            # costs two transforms, not three
            spectra = [cv2.dft(cv2.merge(planes[i:i + 2]) if i + 1 < len(planes)
                               else planes[i], flags=cv2.DFT_COMPLEX_OUTPUT)
                       for i in range(0, len(planes), 2)]
            self._spectra[pad] = (spectra, (H2, W2))
        return self._spectra[pad]

    def __call__(self, blur: MotionBlur, nsr: float = WIENER_NSR) -> np.ndarray:
        """The frame with ``blur`` undone by Wiener deconvolution; the same shape and dtype.
        The borders are mirrored first (:data:`BORDER_PX`) so that the frame's edges do not
        ring."""
        k = blur.kernel()
        n = k.shape[0]
        pad = max(BORDER_PX, n + 8)
        spectra, (H2, W2) = self._transformed(pad)
        h, w = self.image.shape[:2]
        kp = np.zeros((H2, W2), np.float32)
        kp[:n, :n] = k
        kp = np.roll(kp, (-(n // 2), -(n // 2)), (0, 1))
        K = cv2.dft(kp, flags=cv2.DFT_COMPLEX_OUTPUT)
        power = K[..., 0] ** 2 + K[..., 1] ** 2 + nsr
        G = np.empty_like(K)
        G[..., 0] = K[..., 0] / power
        G[..., 1] = -K[..., 1] / power  # the conjugate
        out: list[np.ndarray] = []
        for i, F in enumerate(spectra):
            if 2 * i + 1 < self._planes():
                r = cv2.idft(cv2.mulSpectrums(F, G, 0), flags=cv2.DFT_SCALE)
                out += [r[pad:pad + h, pad:pad + w, 0], r[pad:pad + h, pad:pad + w, 1]]
            else:
                r = cv2.idft(cv2.mulSpectrums(F, G, 0),
                             flags=cv2.DFT_SCALE | cv2.DFT_REAL_OUTPUT)
                out.append(r[pad:pad + h, pad:pad + w])
        res = out[0] if len(out) == 1 else cv2.merge(out)
        np.clip(res, 0.0, 255.0, out=res)
        res += 0.5  # round, not truncate, on the way to 8 bits
        return res.astype(np.uint8)

    def _planes(self) -> int:
        return 1 if self.image.ndim == 2 else int(self.image.shape[2])


def deblur(image: np.ndarray, blur: MotionBlur, nsr: float = WIENER_NSR) -> np.ndarray:
    """``image`` (gray or BGR, uint8) with ``blur`` undone by Wiener deconvolution
    (:class:`Deconvolver`, for one blur)."""
    return Deconvolver(image)(blur, nsr)


def _log_spectrum(gray: np.ndarray) -> np.ndarray:
    """The frame's power spectrum averaged over tiles, log, zero frequency in the middle."""
    s = SPECTRUM_TILE
    g = gray.astype(np.float32)
    h, w = g.shape
    win = np.outer(np.hanning(s), np.hanning(s)).astype(np.float32)
    acc = np.zeros((s, s), np.float64)
    n = 0
    for y in range(0, h - s + 1, s):
        for x in range(0, w - s + 1, s):
            t = g[y:y + s, x:x + s]
            t = (t - float(t.mean())) * win
            F = cv2.dft(t, flags=cv2.DFT_COMPLEX_OUTPUT)
            acc += F[..., 0] ** 2 + F[..., 1] ** 2
            n += 1
    if n == 0:
        raise ValueError(f"a frame of {w}x{h} px is smaller than one {s} px spectrum tile")
    return np.fft.fftshift(np.log(acc / n + 1e-3))


def _frequencies() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    s = SPECTRUM_TILE
    f = (np.arange(s) - s // 2) / s
    fy, fx = np.meshgrid(f, f, indexing="ij")
    return fx, fy, np.hypot(fx, fy)


def direction_scores(gray: np.ndarray, step_deg: float = 2.0) -> tuple[np.ndarray, np.ndarray]:
    """(angles in degrees, best match over :data:`LENGTHS_PX` of each): how well the
    frame's spectrum shows a line blur in each direction (see the module docstring)."""
    logp = _log_spectrum(gray)
    fx, fy, rad = _frequencies()
    s = SPECTRUM_TILE
    ring = np.minimum((rad * s).astype(np.int64), s // 2)
    counts = np.maximum(np.bincount(ring.ravel(), minlength=s // 2 + 1), 1)
    ring_mean = np.bincount(ring.ravel(), logp.ravel(), minlength=s // 2 + 1) / counts
    resid = logp - ring_mean[ring]  # the blur's stripes, without the fall-off
    lo, hi = SPECTRUM_BAND
    band = (rad > lo) & (rad < hi)
    r, bx, by = resid[band], fx[band], fy[band]
    bins = 96
    centres = (np.arange(bins) + 0.5) * hi / bins
    templ = np.log(np.sinc(LENGTHS_PX[:, None] * centres[None, :]) ** 2 + PATTERN_FLOOR)
    angles = np.arange(0.0, 180.0, step_deg)
    best = np.empty(len(angles))
    for i, a in enumerate(np.radians(angles)):
        p = np.abs(bx * math.cos(a) + by * math.sin(a))
        idx = np.minimum((p / hi * bins).astype(np.int64), bins - 1)
        cnt = np.bincount(idx, minlength=bins).astype(np.float64)
        tot = np.bincount(idx, r, minlength=bins)
        # correlate the weighted profile with each length's pattern (patterns centred
        # under the same weights, so a flat profile scores zero)
        wmean = (templ * cnt).sum(axis=1, keepdims=True) / cnt.sum()
        t = templ - wmean
        score = (t * tot).sum(axis=1) / np.sqrt((t * t * cnt).sum(axis=1))
        best[i] = float(score.max())
    return angles, best


def guess_angles(gray: np.ndarray, count: int = 3, apart_deg: float = 10.0) -> list[float]:
    """The ``count`` directions the spectrum favours most, at least ``apart_deg`` apart."""
    angles, score = direction_scores(gray)
    out: list[float] = []
    for i in np.argsort(-score):
        a = float(angles[i])
        if all(abs((a - b + 90) % 180 - 90) >= apart_deg for b in out):
            out.append(a)
            if len(out) == count:
                break
    return out


def guess_length(gray: np.ndarray, angle_deg: float) -> float:
    """The blur's length along ``angle_deg``: the lag of the most negative autocorrelation
    of the frame's derivative in that direction (see the module docstring)."""
    # the whole frame: judged on its middle quarter alone (a quarter of the cost), one dev
    # render's length came out 20 px instead of 12 and its markers stayed unread
    h, w = gray.shape
    g = gray.astype(np.float32)
    a = math.radians(angle_deg)
    dx, dy = math.cos(a), math.sin(a)

    def shifted(img: np.ndarray, by: float) -> np.ndarray:
        M = np.array([[1, 0, -dx * by], [0, 1, -dy * by]], np.float32)
        out: np.ndarray = cv2.warpAffine(img, M, (w, h), flags=cv2.INTER_LINEAR,
                                         borderMode=cv2.BORDER_REFLECT)
        return out

    d = shifted(g, 0.5) - shifted(g, -0.5)
    d -= float(d.mean())
    m = MAX_LAG_PX + 2
    core = d[m:h - m, m:w - m]
    r0 = float((core * core).mean()) or 1.0
    ac = [float((core * shifted(d, k)[m:h - m, m:w - m]).mean()) / r0
          for k in range(MIN_LAG_PX, MAX_LAG_PX + 1)]
    return float(int(np.argmin(ac)) + MIN_LAG_PX)


def guesses(gray: np.ndarray, angles: int = 3) -> Iterator[MotionBlur]:
    """Line blurs to try on ``gray``, the likeliest first. The spectrum's ``angles``
    favourite directions, each with the length guessed along it and 2 px shorter (the guess
    runs 0-3 px long, and deconvolution forgives a kernel up to 2 px too long better than
    one too short), then each again 2 px longer and 4 px shorter. Lazily: a caller that
    stops at the first guess pays for one length."""
    found: list[tuple[float, float]] = []
    directions = guess_angles(gray, angles)
    for steps in ((0.0, -2.0), (2.0, -4.0)):
        for i, a in enumerate(directions):
            if len(found) <= i:
                found.append((a, guess_length(gray, a)))
            length = found[i][1]
            for dl in steps:
                if length + dl >= 3.0:
                    yield MotionBlur(length + dl, a)
