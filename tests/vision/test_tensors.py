"""The network-input conversion every ONNX network of the runtime is fed through."""

from __future__ import annotations

import numpy as np
import pytest

from vision.tensors import nchw_rgb01


def test_same_numbers_as_the_plain_conversion() -> None:
    rng = np.random.default_rng(7)
    imgs = rng.integers(0, 256, (5, 9, 13, 3), dtype=np.uint8)
    plain = imgs[..., ::-1].transpose(0, 3, 1, 2).astype(np.float32) * (1.0 / 255.0)
    x = nchw_rgb01(imgs)
    assert x.dtype == np.float32 and x.flags["C_CONTIGUOUS"]
    assert np.array_equal(x, plain)


def test_bgr_kept_when_asked() -> None:
    img = np.zeros((1, 2, 2, 3), np.uint8)
    img[..., 0] = 255                      # blue
    assert nchw_rgb01(img)[0, 2].min() == 1.0          # last channel in RGB order
    assert nchw_rgb01(img, swap_rb=False)[0, 0].min() == 1.0


def test_a_wrong_shape_is_named() -> None:
    with pytest.raises(ValueError, match=r"\(N, h, w, 3\).*\(4, 4, 3\)"):
        nchw_rgb01(np.zeros((4, 4, 3), np.uint8))
