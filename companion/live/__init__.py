"""The live companion without a window: frames -> settled shots -> observations -> moves.

* :mod:`companion.live.capture`: frame sources (camera, stream URL, video file, image folder)
  read in a worker thread, with camera loss and return reported as events.
* :mod:`companion.live.settle`: cheap change detection that says when the table has settled
  after a move, so the vision pipeline runs on settled frames only.
* :mod:`companion.live.tablestate`: an observation record -> the engine's ``TableView``
  (lattice snapping, stacks, discard top, pyramid poses).
* :mod:`companion.live.session`: :class:`~companion.live.session.LiveSession`, the referee that
  matches each settled table against the engine and reports events a window can show.
* :mod:`companion.live.runner`: the loop that joins them (capture -> settle -> pipeline ->
  session) in a worker thread.

No module here imports Qt; only ``capture`` and ``settle`` import OpenCV.
"""
