"""Pyramid finder (classical prototype): colour look-up segmentation in the rectified table
view plus analysis-by-synthesis shape fitting. See find.py for the method and
bench/pyramids.py for how well it works."""

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
