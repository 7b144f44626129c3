"""fesub: dynamics of structures with friction and contact.

Substructuring with a sliding frictional contact (Craig-Bampton, primal/dual assembly, a compiled
forward-increment transient), closed-form Coulomb steady states, harmonic balance with friction
contact elements, free-play oscillators and friction over circular contacts.
"""

from __future__ import annotations

__version__ = "0.1.0"

from . import errors  # noqa: F401
from ._backend import status as _status
from .errors import FesubError  # noqa: F401

__all__ = ["__version__", "show_config", "backend_name", "load", "FesubError", "errors"]


def load(path):
    """Reopen any fesub result file (``.nc``), sweep store or study output folder.

    The file records which result it holds; see :func:`fesub.io.load`.
    """
    from .io import load as _load

    return _load(path)


def backend_name() -> str:
    """'compiled' when every kernel module is compiled, 'python' when none is, else 'mixed'."""
    kinds = {kind for kind, _ in _status().values()}
    if not kinds:
        return "python"
    return kinds.pop() if len(kinds) == 1 else "mixed"


def show_config(file=None) -> dict:
    """Print (and return) which backend each kernel uses and why, with library versions."""
    import os
    import sys

    import numpy
    import scipy

    st = _status()
    info = {
        "fesub": __version__,
        "python": sys.version.split()[0],
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
        "backend": backend_name(),
        "FESUB_BACKEND": os.environ.get("FESUB_BACKEND", "auto"),
        "FESUB_REQUIRE_EXT": os.environ.get("FESUB_REQUIRE_EXT", "0"),
        "kernels": {k: {"backend": v[0], "reason": v[1]} for k, v in st.items()},
    }
    out = file or sys.stdout
    print(f"fesub {__version__} (python {info['python']}, numpy {info['numpy']}, "
          f"scipy {info['scipy']})", file=out)
    print(f"backend: {info['backend']}  (FESUB_BACKEND={info['FESUB_BACKEND']}, "
          f"FESUB_REQUIRE_EXT={info['FESUB_REQUIRE_EXT']})", file=out)
    for k, v in st.items():
        print(f"  {k:<16s} {v[0]:<9s} {v[1]}", file=out)
    return info
