"""Choice between the compiled kernels and their NumPy twins.

Every compiled kernel module ``fesub/_core/<name>.pyx`` has a pure-NumPy twin
``fesub/_core/<name>_ref.py`` exposing the same functions with the same signatures.
:func:`kernels` returns the module to use:

* ``FESUB_BACKEND=python`` forces the twins;
* otherwise the compiled module is used when it imports;
* ``FESUB_REQUIRE_EXT=1`` turns a missing compiled module into :class:`~fesub.errors.BackendError`.

Tests run both backends through :func:`use`.

Instruction sets: the kernels whose loops vectorise are also built for AVX2+FMA and AVX-512
(``fesub._core.<name>_avx2``, ``..._avx512``, see ``setup.py``); the widest one the running CPU
has is imported (:func:`isa_levels`). ``FESUB_ISA=baseline|avx2|avx512`` caps the choice (an
unsupported level is an error); :func:`isa` says which was taken.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import os

from .errors import BackendError

__all__ = ["kernels", "use", "active", "compiled_available", "status", "isa", "isa_levels",
           "ISA_LEVELS"]

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


#: instruction-set levels of the compiled kernels, narrowest first
ISA_LEVELS = ("baseline", "avx2", "avx512")
# CPU features (as NumPy names them) each level needs
_ISA_FEATURES = {"baseline": (), "avx2": ("AVX2", "FMA3"),
                 "avx512": ("AVX2", "FMA3", "AVX512F", "AVX512DQ", "AVX512VL", "AVX512BW")}


@functools.lru_cache(maxsize=None)
def _cpu_features() -> dict:
    """The running CPU's features as NumPy detected them at import ({} when unknown)."""
    try:
        from numpy._core import _multiarray_umath as mu
    except ImportError:  # NumPy < 2
        try:
            from numpy.core import _multiarray_umath as mu
        except ImportError:
            return {}
    return dict(getattr(mu, "__cpu_features__", {}))


def isa_levels() -> list[str]:
    """Instruction-set levels this CPU runs, widest first, capped by ``FESUB_ISA``."""
    feats = _cpu_features()
    have = [lvl for lvl in ISA_LEVELS if all(feats.get(f, False) for f in _ISA_FEATURES[lvl])]
    cap = os.environ.get("FESUB_ISA", "auto").strip().lower() or "auto"
    if cap != "auto":
        if cap not in ISA_LEVELS:
            raise BackendError(f"FESUB_ISA must be 'auto' or one of {ISA_LEVELS}, got {cap!r}")
        if cap not in have:
            raise BackendError(f"FESUB_ISA={cap} but this CPU runs only {have}")
        have = have[:have.index(cap) + 1]
    return have[::-1]


def _import_compiled(name: str):
    """(module, None) of the widest compiled build of kernel ``name`` this CPU runs, or
    (None, the ImportError of the baseline build). Resolved once per kernel and ``FESUB_ISA``
    value (a kernel is looked up on every call of many small routines)."""
    return _resolve(name, os.environ.get("FESUB_ISA", "auto"))


@functools.lru_cache(maxsize=None)
def _resolve(name: str, isa_cap: str):
    for lvl in isa_levels():
        if lvl == "baseline":
            break
        try:
            return importlib.import_module(f"fesub._core.{name}_{lvl}"), None
        except ImportError:  # this kernel has no build for that level
            continue
    try:
        return importlib.import_module(f"fesub._core.{name}"), None
    except ImportError as exc:
        return None, exc


def isa(name: str) -> str | None:
    """Instruction-set level of the compiled kernel ``name`` that :func:`kernels` would use
    ('baseline', 'avx2', 'avx512'), or None when the NumPy twin is used."""
    if active(name) == "python":
        return None
    suffix = kernels(name).__name__.rsplit(".", 1)[-1][len(name):]
    return suffix[1:] if suffix else "baseline"


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
            level = mod.__name__.rsplit(".", 1)[-1][len(name):].lstrip("_") or "baseline"
            out[name] = ("compiled", f"{level}: {mod.__file__}")
    return out
