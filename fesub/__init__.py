"""fesub: dynamics of structures with friction and contact.

Where to start (each subpackage loads on first use: ``import fesub`` then ``fesub.contact``):

==========================  ===========================================  ==============================
subpackage                  what it does                                 start with
==========================  ===========================================  ==============================
``fesub.fe``                meshes (meshio), elements, assembly, modes   ``fe.rectangle``, ``fe.read``
``fesub.substructure``      substructures and Craig-Bampton reduction    ``substructure.CraigBampton``
``fesub.fbs``               FRF-based substructuring: LM-FBS coupling    ``fbs.frf_from_matrices``,
                            and decoupling, virtual points, UFF 58       ``fbs.couple``
``fesub.contact``           sliding frictional contact: transient,       ``contact.simulate``
                            eigenvalue loci, critical mu, TD-FRF
``fesub.models``            ready-made systems (the beam-on-beam, ...)   ``models.beam_on_beam.build``
``fesub.coulomb``           closed-form Coulomb steady states of chains  ``coulomb.steady_state``
``fesub.hbm``               harmonic balance with friction contact       ``hbm.forced_response``
``fesub.nonsmooth``         free-play oscillators, orbits, basins        ``nonsmooth.basins``
``fesub.circular``          friction over circular contacts              ``circular.ExactCircularFriction``
``fesub.sweep``             parameter sweeps on a pool or Dask           ``sweep.run_sweep``
``fesub.io``                the one result protocol (netCDF files)       ``fesub.load(path)``
==========================  ===========================================  ==============================

Every result has ``save(path)``, ``load(path)``, ``summary()`` and ``to_xarray()``;
``fesub.load(path)`` reopens any of them. The command line is ``fesub STUDY`` (``fesub --help``).
"""

from __future__ import annotations

from . import errors  # noqa: F401
from ._backend import isa_levels as _isa_levels
from ._backend import status as _status
from .errors import FesubError  # noqa: F401
from .version import __version__

__all__ = ["__version__", "show_config", "backend_name", "load", "FesubError", "errors"]

#: subpackages loaded on first attribute access (``fesub.contact`` after ``import fesub``)
_LAZY = ("fe", "substructure", "fbs", "contact", "models", "coulomb", "hbm", "nonsmooth", "circular",
         "sweep", "io", "plots", "signal", "continuation", "cli")


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'fesub' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


def load(path):
    """Reopen any fesub result file (``.nc``), sweep store or study output folder.

    The file records which result it holds; see :func:`fesub.io.load`.

    Parameters
    ----------
    path : str or os.PathLike
        A result file (``.nc``), a sweep store or a study output folder.

    Returns
    -------
    Result or StudyOutput or object
        The reopened result, its values in the units the result documents.
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
    """Print (and return) which backend each kernel uses and why, with library versions.

    Parameters
    ----------
    file : file-like, optional
        Text stream printed to; None (default) is standard output.

    Returns
    -------
    dict
        The configuration printed: versions, backend and its environment variables, per-kernel
        status.
    """
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
        "FESUB_ISA": os.environ.get("FESUB_ISA", "auto"),
        "cpu_isa": _isa_levels(),
        "kernels": {k: {"backend": v[0], "reason": v[1]} for k, v in st.items()},
    }
    out = file or sys.stdout
    print(f"fesub {__version__} (python {info['python']}, numpy {info['numpy']}, "
          f"scipy {info['scipy']})", file=out)
    print(f"backend: {info['backend']}  (FESUB_BACKEND={info['FESUB_BACKEND']}, "
          f"FESUB_REQUIRE_EXT={info['FESUB_REQUIRE_EXT']})", file=out)
    print(f"instruction sets: {', '.join(info['cpu_isa'])} (widest first; "
          f"FESUB_ISA={info['FESUB_ISA']})", file=out)
    for k, v in st.items():
        print(f"  {k:<16s} {v[0]:<9s} {v[1]}", file=out)
    return info
