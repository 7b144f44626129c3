"""Single-threaded BLAS for the many small dense solves of harmonic balance.

Continuation solves thousands of systems of a few hundred unknowns; a multi-threaded BLAS spends
more time synchronising threads than computing on such sizes (and thrashes on a shared machine).
:func:`single_thread_blas` temporarily sets the OpenBLAS thread count to one when the OpenBLAS
bundled with NumPy can be found, and does nothing otherwise.
"""

from __future__ import annotations

import contextlib
import ctypes

__all__ = ["single_thread_blas"]

_LIB = None
_SET = None
_GET = None


def _find():
    global _LIB, _SET, _GET
    if _LIB is not None:
        return _SET is not None
    _LIB = False
    try:
        with open("/proc/self/maps") as fh:
            paths = {ln.split()[-1] for ln in fh if "openblas" in ln.lower() and ".so" in ln}
    except OSError:
        return False
    for p in sorted(paths):
        try:
            lib = ctypes.CDLL(p)
        except OSError:
            continue
        for pre in ("scipy_openblas_", "openblas_", ""):
            for suf in ("64_", ""):
                s = getattr(lib, f"{pre}set_num_threads{suf}", None)
                g = getattr(lib, f"{pre}get_num_threads{suf}", None)
                if s is not None and g is not None:
                    g.restype = ctypes.c_int
                    _LIB, _SET, _GET = lib, s, g
                    return True
    return False


@contextlib.contextmanager
def single_thread_blas():
    """Context manager: OpenBLAS uses one thread inside, the previous count is restored."""
    if not _find():
        yield
        return
    old = int(_GET())
    _SET(ctypes.c_int(1))
    try:
        yield
    finally:
        _SET(ctypes.c_int(old))
