"""Pyramid finder: colour-table candidates in the top-down table view, two small ONNX patch
classifiers (what: none or a colour; how: pips and pose), and the solid's predicted
silhouette for position. See find.py for the method, profile.py for player colours,
train.py for how the classifiers are made and bench/pyramids.py for how well it works."""

from vision.pyramids.colors import COLORS, ColorModel, default_model
from vision.pyramids.find import PyramidFind, PyramidFinder, find_pyramids
from vision.pyramids.geometry import SIZES_MM, camera_center, footprint_mm

__all__ = [
           "COLORS",
           "SIZES_MM",
           "ColorModel",
           "PyramidFind",
           "PyramidFinder",
           "camera_center",
           "default_model",
           "find_pyramids",
           "footprint_mm",
]
