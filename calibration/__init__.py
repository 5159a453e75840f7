"""The calibration mat: ArUco markers at the corners of the play area (shared/spec/table.md)."""

from calibration.mat import DEFAULT_MAT, Mat, MatError, load_mat

__all__ = ["DEFAULT_MAT", "Mat", "MatError", "load_mat"]
