"""What counts as a number in the files the companion reads (mat, camera, observation)."""

from __future__ import annotations

import math
from typing import Any, TypeGuard


def finite_number(v: Any) -> TypeGuard[int | float]:
    """Whether ``v`` is a JSON number (an int or a float, not true or false) that a float
    holds and that is finite. JSON allows an integer of 400 digits, which no float holds:
    ``math.isfinite`` raises on it instead of answering."""
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        return False
    try:
        return math.isfinite(v)
    except OverflowError:
        return False
