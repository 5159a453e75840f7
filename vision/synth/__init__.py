"""Synthetic overhead-camera scenes with exact ground truth (issue 3).

* :mod:`vision.synth.scene`: :class:`TableScene` (cards and pyramids in table mm) and
  :func:`scene_from_lattice` for Zarcana layouts;
* :mod:`vision.synth.deck`: deck folders (card art, card size, id checks);
* :mod:`vision.synth.camera`: the pinhole camera with lens distortion;
* :mod:`vision.synth.render`: :func:`render` -> image + truth record;
* :mod:`vision.synth.generate`: random scenes, cameras and looks; dataset writing;
* :mod:`vision.synth.export`: training sets (YOLO OBB cards, YOLO pose pyramids, card crops).

Heavy imports (numpy, OpenCV) happen in the submodules; importing this package is cheap.
"""
