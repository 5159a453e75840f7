"""The guard against the Qt binding's reference-count fault (companion.ui.qtcompat)."""

from __future__ import annotations

import gc
import subprocess
import sys
import textwrap
from typing import Any

from ui_support import ROOT


def test_qt_calls_do_not_exhaust_none_or_true(qapp: Any) -> None:
    import companion.ui.qtcompat as qtcompat
    from PySide6.QtCore import QObject, Signal
    from PySide6.QtWidgets import QLabel

    class Emitter(QObject):
        said = Signal(object)

    label = QLabel()
    em = Emitter()
    got: list[object] = []
    em.said.connect(got.append)
    gc.collect()
    before = sys.getrefcount(None), sys.getrefcount(True)
    for k in range(2000):
        label.setText(str(k))       # a void C++ call
        em.said.emit(k)             # a signal emission
    gc.collect()
    after = sys.getrefcount(None), sys.getrefcount(True)
    assert len(got) == 2000
    if sys.version_info < (3, 12):
        # whatever the binding drops, the guard keeps the singletons far from zero
        assert min(after) > qtcompat.EXTRA // 2
    assert all(a > 0 for a in after) and all(b > 0 for b in before)


def test_a_long_paint_run_does_not_abort_the_interpreter() -> None:
    """Without the guard this aborts with 'deallocating None' on CPython 3.11."""
    script = textwrap.dedent("""
        import os
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
        from companion.ui.app import ensure_app
        ensure_app()
        from PySide6.QtGui import QColor, QImage, QPainter, QPen
        img = QImage(64, 64, QImage.Format.Format_RGB32)
        p = QPainter(img)
        for _ in range(50000):
            p.setPen(QPen(QColor(1, 2, 3), 2.0))
        p.end()
        print("ok")
    """)
    proc = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, env={"PYTHONPATH": str(ROOT),
                                                       "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().endswith("ok")
