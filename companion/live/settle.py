"""When has the table settled after a move? Cheap change detection on small grey frames.

Each frame is shrunk to a thumbnail (``width`` pixels wide, grey, blurred: about a
millisecond for a 1080p frame) and compared with the previous thumbnail (motion) and with the
thumbnail of the last settled table (change). The table is *settled* when

* the share of moving pixels stayed under ``motion_fraction`` for ``still_s`` seconds (and at
  least ``min_frames`` frames), and
* the frame differs from the last settled one in more than ``change_fraction`` of its pixels
  (something was moved: the pipeline has something to look at), and
* no large moving blob (a hand or an arm) was seen during that still time.

Frames with motion are never handed on, so the pipeline runs once per move, not per frame.
A hand resting still over the table is not motion; the pipeline's record says so
(``hands``/``trustworthy``) and :meth:`SettleDetector.reject` then keeps the old settled
table as the reference, so the next still table after the hand leaves is tried again.

A still photo (an image from a folder) is settled by itself: :meth:`SettleDetector.shot`.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np


@dataclass(frozen=True)
class SettleConfig:
    """Thresholds of the change detector (pixel values are 0..255 grey levels)."""

    # A small pyramid turned on its side in a 1600 px frame of a 900 mm mat changes about a
    # dozen pixels of a 320 px thumbnail (and none of a 160 px one): hence the width and the
    # low change share. Missing a change costs a move; a needless pipeline run only time.
    width: int = 320               # thumbnail width in pixels
    blur: int = 5                  # Gaussian blur kernel (odd) against noise and compression
    pixel_delta: int = 14          # a pixel has changed when it moves more than this
    motion_fraction: float = 0.001  # moving share under which a frame is still
    still_s: float = 0.5           # how long the table must stay still
    min_frames: int = 3            # and for at least this many frames
    change_fraction: float = 0.0001  # share that must differ from the last settled table
    hand_fraction: float = 0.04    # one moving blob this large is a hand or an arm


@dataclass(frozen=True)
class SettleDecision:
    """What the detector made of one frame."""

    settled: bool          # run the pipeline on this frame
    motion: float          # share of pixels that moved since the previous frame
    change: float          # share that differs from the last settled table
    still_s: float         # how long the table has been still
    hand: bool             # a large moving blob (hand or arm) is over the table
    reason: str            # plain words: why (not) settled


class SettleDetector:
    """Feed every frame to :meth:`update`; it answers whether this one is a settled table."""

    def __init__(self, config: SettleConfig | None = None) -> None:
        self.config = config or SettleConfig()
        self.reset()

    def reset(self) -> None:
        """Forget everything (a new camera or a new game)."""
        self._prev: np.ndarray | None = None
        self._settled: np.ndarray | None = None      # reference: the last accepted settled table
        self._candidate: np.ndarray | None = None    # the last settled frame handed on
        self._before_candidate: np.ndarray | None = None
        self._anchor: np.ndarray | None = None       # the first frame of the still period
        self._checked: np.ndarray | None = None      # the still period already judged
        self._still_since: float | None = None
        self._still_frames = 0
        self._again = False    # the next still period is judged though the table is the same

    def thumbnail(self, image: np.ndarray) -> np.ndarray:
        """The small blurred grey image the detector compares."""
        cfg = self.config
        h, w = image.shape[:2]
        out_h = max(1, round(h * cfg.width / w))
        if w > 2 * cfg.width:
            # a cheap decimation (nearest) to twice the size, then a 2x area average: a
            # tenth of the cost of one area resize from full size, at 10 frames a second
            image = cv2.resize(image, (2 * cfg.width, 2 * out_h),
                               interpolation=cv2.INTER_NEAREST)
        small = cv2.resize(image, (cfg.width, out_h), interpolation=cv2.INTER_AREA)
        if small.ndim == 3:
            small = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)
        k = cfg.blur | 1
        return cv2.GaussianBlur(small, (k, k), 0) if k > 1 else small

    def _share(self, a: np.ndarray, b: np.ndarray) -> tuple[float, np.ndarray]:
        mask = cv2.absdiff(a, b) > self.config.pixel_delta
        return float(np.count_nonzero(mask)) / mask.size, mask

    def _largest_blob(self, mask: np.ndarray) -> float:
        n, _, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8), connectivity=8)
        if n <= 1:
            return 0.0
        return float(stats[1:, cv2.CC_STAT_AREA].max()) / mask.size

    def update(self, image: np.ndarray, time_s: float) -> SettleDecision:
        """Judge one frame taken at ``time_s`` seconds."""
        cfg = self.config
        small = self.thumbnail(image)
        prev, self._prev = self._prev, small
        if prev is None or prev.shape != small.shape:
            self._restart(small, time_s)
            return SettleDecision(False, 1.0, 1.0, 0.0, False, "first frame")
        motion, mask = self._share(small, prev)
        if motion > cfg.motion_fraction:
            hand = motion > cfg.hand_fraction and self._largest_blob(mask) > cfg.hand_fraction
            self._anchor, self._still_since, self._still_frames = None, time_s, 0
            return SettleDecision(False, motion, -1.0, 0.0, hand,
                                  "a hand is moving over the table" if hand else "motion")
        if self._anchor is None or self._share(small, self._anchor)[0] > cfg.change_fraction:
            # still again, or a small change with no motion to speak of: a new still period
            self._restart(small, time_s)
        self._still_frames += 1
        assert self._still_since is not None
        still = time_s - self._still_since
        if still < cfg.still_s - 1e-6 or self._still_frames < cfg.min_frames:
            return SettleDecision(False, motion, -1.0, still, False, "settling")
        if self._checked is self._anchor:
            return SettleDecision(False, motion, 0.0, still, False, "still; already judged")
        self._checked = self._anchor
        # (a camera back at another resolution: its old table cannot be compared, pixel for
        # pixel, with the new one)
        change = 1.0 if self._settled is None or self._settled.shape != small.shape else \
            self._share(small, self._settled)[0]
        if change <= cfg.change_fraction and not self._again:
            return SettleDecision(False, motion, change, still, False,
                                  "still, and the same as the last settled table")
        self._again = False
        self._before_candidate = self._settled
        self._settled = self._candidate = small
        return SettleDecision(True, motion, change, still, False, "settled after a change")

    def at_end(self) -> SettleDecision:
        """The source ended (a video played to its end): its last frame, still but not yet
        still for long (a recording stopped right after the last move), is judged now
        instead of never; a frame still moving (``motion`` 1, the only decision here with
        motion), or judged already, is not."""
        cfg = self.config
        last = self._prev
        if last is None or self._anchor is None:
            return SettleDecision(False, 1.0, -1.0, 0.0, False,
                                  "the source ended while the table was moving")
        if self._checked is self._anchor:
            return SettleDecision(False, 0.0, 0.0, 0.0, False, "ended; already judged")
        self._checked = self._anchor
        change = 1.0 if self._settled is None or self._settled.shape != last.shape else \
            self._share(last, self._settled)[0]
        if change <= cfg.change_fraction and not self._again:
            return SettleDecision(False, 0.0, change, 0.0, False,
                                  "ended on the same table as the last settled one")
        self._again = False
        self._before_candidate = self._settled
        self._settled = self._candidate = last
        return SettleDecision(True, 0.0, change, 0.0, False, "the source ended on a still table")

    def _restart(self, small: np.ndarray, time_s: float) -> None:
        self._anchor, self._still_since, self._still_frames = small, time_s, 0

    def shot(self, image: np.ndarray) -> SettleDecision:
        """A still photo: settled by itself; it becomes the reference for what follows."""
        small = self.thumbnail(image)
        change = 1.0 if self._settled is None or self._settled.shape != small.shape else \
            self._share(small, self._settled)[0]
        self._before_candidate = self._settled
        self._settled = self._candidate = self._prev = self._anchor = self._checked = small
        return SettleDecision(True, 0.0, change, 0.0, False, "a still photo")

    def retry(self) -> None:
        """Judge the still table in view once more at the next frame (the user resumed the
        watching: a table that settled while paused was refused, and nothing has moved
        since to make it new)."""
        self._checked = None

    def look_again(self) -> None:
        """Judge the still table in view once more at the next frame (or the source's end),
        though it does not change: the session waits to see it twice (a camera that went
        back and forth between two tables), and a player's move left standing was never
        ruled on."""
        self._again = True
        self._checked = None

    def reject(self) -> None:
        """The pipeline refused the last settled frame (a hand over the table, no markers):
        keep the settled table before it as the reference; the next still table after some
        motion (or any change) is tried again."""
        if self._candidate is not None and self._settled is self._candidate:
            self._settled = self._before_candidate
        self._candidate = None


__all__ = ["SettleConfig", "SettleDecision", "SettleDetector"]
