"""A guard against a reference-counting fault of the installed PySide6 on CPython < 3.12.

PySide6 6.12 (shiboken6 6.12, built for interpreters whose ``None``, ``True`` and ``False``
are immortal, PEP 683) drops one reference to ``None`` on every call of a C++ method that
returns nothing (``QPainter.setPen``, ``QLabel.setText``...) and one to ``True`` on every
signal emission. On CPython 3.11 those objects are not immortal: after some thousands of
calls (a few seconds of live video) the count reaches zero and the interpreter aborts with
``Fatal Python error: none_dealloc: deallocating None``. Measured with
``sys.getrefcount(None)`` around such calls (tests/ui/test_ui_qtcompat.py).

The singletons are statically allocated and never freed, so giving each a huge extra count,
as 3.12 does, is harmless and keeps the window alive whatever the binding does to them.
Nothing happens on 3.12 and later. :func:`guard` runs once, when the first module of
:mod:`companion.ui` that imports Qt is imported.
"""

from __future__ import annotations

import ctypes
import logging
import sys

log = logging.getLogger(__name__)

#: The extra references given to each singleton: far more than any run can drop.
EXTRA = 1 << 60

_done = False


def guard() -> bool:
    """Make ``None``, ``True`` and ``False`` effectively immortal on CPython < 3.12.

    Returns whether the counts were raised (False on 3.12+, other interpreters, or when it
    was done already).
    """
    global _done
    if _done or sys.version_info >= (3, 12) or sys.implementation.name != "cpython":
        return False
    # ob_refcnt is the object's first field, after two list pointers in a trace-refs build
    offset = 2 * ctypes.sizeof(ctypes.c_void_p) if hasattr(sys, "getobjects") else 0
    for obj in (None, True, False):
        before = sys.getrefcount(obj)
        count = ctypes.c_ssize_t.from_address(id(obj) + offset)
        if abs(count.value - before) > 16:      # not where we expect it: leave it alone
            log.warning("cannot guard the reference count of %r (layout unknown)", obj)
            continue
        count.value += EXTRA
    _done = True
    return True


guard()

__all__ = ["EXTRA", "guard"]
