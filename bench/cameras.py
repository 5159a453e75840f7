"""The camera a benchmark scene is seen from: one draw for every benchmark that renders.

As :func:`vision.synth.generate.random_camera` (a field of view of 55-80 degrees, the lens
distortion of most webcams in 60% of views, the mat's centre within 6% of the aim, a card
60-250 px long), but at a fixed image size and with the tilt range of the benchmark's group;
the random draws come in a fixed order, so a seed always gives the same camera.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def bench_camera(rng: np.random.Generator, mat: Any, card_long_mm: float,
                 tilt: tuple[float, float], size: tuple[int, int], square_yaw: bool) -> Any:
    """A camera over ``mat`` for an image of ``size``, tilted within ``tilt`` degrees.
    ``square_yaw``: 40% of the views are turned square to the mat (0, 90, 180 or 270
    degrees, give or take 3), as a camera set up by hand often is; else any turn."""
    from vision.synth.camera import fit_distance, look_camera, mat_outline

    w, h = size
    f = w / 2 / math.tan(math.radians(rng.uniform(55, 80)) / 2)
    t = float(rng.uniform(*tilt))
    if square_yaw:
        yaw = float(rng.uniform(0, 360)) if rng.random() < 0.6 else float(
            rng.choice([0, 90, 180, 270]) + rng.normal(0, 3))
    else:
        yaw = float(rng.uniform(0, 360))
    tilt_dir = float(rng.uniform(0, 360))
    target = (mat.width_mm / 2 + rng.uniform(-0.06, 0.06) * mat.width_mm,
              mat.height_mm / 2 + rng.uniform(-0.06, 0.06) * mat.height_mm)
    dist = None
    if rng.random() < 0.6:
        dist = np.array([rng.uniform(-0.15, 0.03), rng.uniform(-0.02, 0.04),
                         rng.normal(0, 0.0008), rng.normal(0, 0.0008), 0.0])
    hi = fit_distance(target, t, yaw, tilt_dir, f, w, h, mat_outline(mat))
    L_fit = f * card_long_mm / hi
    L = rng.uniform(60.0, min(250.0, max(61.0, L_fit))) if rng.random() < 0.85 else \
        rng.uniform(60.0, 250.0)
    return look_camera(target, f * card_long_mm / L, t, yaw, tilt_dir, f, w, h, dist)
