"""Choice between the compiled kernels and their NumPy twins.

Every compiled kernel module ``fesub/_core/<name>.pyx`` has a pure-NumPy twin
``fesub/_core/<name>_ref.py`` exposing the same functions with the same signatures.
:func:`kernels` returns the module to use:

* ``FESUB_BACKEND=python`` forces the twins;
* otherwise the compiled module is used when it imports;
* ``FESUB_REQUIRE_EXT=1`` turns a missing compiled module into :class:`~fesub.errors.BackendError`.

Tests run both backends through :func:`use`.
"""

from __future__ import annotations

import contextlib
import importlib
import os

from .errors import BackendError

__all__ = ["kernels", "use", "active", "compiled_available", "status"]

_CHOICES = ("auto", "compiled", "python")
_override: list[str] = []


def _truthy(name: str) -> bool:
    return os.environ.get(name, "0").strip().lower() not in ("", "0", "false", "no")


def _requested() -> str:
    if _override:
        return _override[-1]
    env = os.environ.get("FESUB_BACKEND", "auto").strip().lower() or "auto"
    if env not in _CHOICES:
        raise BackendError(f"FESUB_BACKEND must be one of {_CHOICES}, got {env!r}")
    return env


def _import_compiled(name: str):
    try:
        return importlib.import_module(f"fesub._core.{name}"), None
    except ImportError as exc:
        return None, exc


def compiled_available(name: str) -> bool:
    """True when the compiled kernel module ``name`` imports."""
    return _import_compiled(name)[0] is not None


def kernels(name: str):
    """Return the kernel module ``name`` (compiled, or its NumPy twin)."""
    choice = _requested()
    if choice != "python":
        mod, exc = _import_compiled(name)
        if mod is not None:
            return mod
        if choice == "compiled" or _truthy("FESUB_REQUIRE_EXT"):
            raise BackendError(
                f"compiled kernel fesub._core.{name} is required but does not import ({exc}); "
                "reinstall with a C compiler available (pip install . -v shows the build log)"
            )
    return importlib.import_module(f"fesub._core.{name}_ref")


def active(name: str) -> str:
    """'compiled' or 'python': which implementation :func:`kernels` returns for ``name``."""
    return "python" if kernels(name).__name__.endswith("_ref") else "compiled"


@contextlib.contextmanager
def use(backend: str):
    """Temporarily force ``'python'``, ``'compiled'`` or ``'auto'`` (used by the tests)."""
    if backend not in _CHOICES:
        raise BackendError(f"backend must be one of {_CHOICES}, got {backend!r}")
    _override.append(backend)
    try:
        yield
    finally:
        _override.pop()


def kernel_names() -> list[str]:
    """Names of all kernel modules that have a NumPy twin."""
    import pkgutil

    from . import _core

    return sorted(m.name[:-4] for m in pkgutil.iter_modules(_core.__path__) if m.name.endswith("_ref"))


def status() -> dict:
    """Backend status of every kernel: {'name': ('compiled'|'python', reason)}."""
    out = {}
    choice = _requested()
    for name in kernel_names():
        mod, exc = _import_compiled(name)
        if choice == "python":
            out[name] = ("python", "forced by FESUB_BACKEND=python")
        elif mod is None:
            out[name] = ("python", f"compiled module missing: {exc}")
        else:
            out[name] = ("compiled", f"{mod.__file__}")
    return out
