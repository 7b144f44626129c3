"""Exceptions raised by fesub.

Every error a user can provoke with bad input is a :class:`FesubError`. The message names the
file, field or parameter at fault and the allowed range, so that no NumPy broadcasting error
from deep inside a routine ever reaches the user.
"""

from __future__ import annotations

__all__ = [
    "BackendError",
    "ContactLost",
    "ConvergenceError",
    "FesubError",
    "MeshError",
    "ModelError",
    "ParameterError",
    "StepWarning",
    "check_positive",
    "check_range",
    "check_real",
]


class FesubError(Exception):
    """Base class of every fesub exception."""


class ParameterError(FesubError, ValueError):
    """A numeric or categorical parameter is outside its allowed range."""


class MeshError(FesubError, ValueError):
    """A mesh file or mesh object is unreadable, inconsistent or lacks a named set."""


class ModelError(FesubError, ValueError):
    """A model is inconsistent: mismatched DOFs, missing boundary conditions, bad material."""


class BackendError(FesubError, ImportError):
    """The compiled kernels were required (``FESUB_REQUIRE_EXT=1``) but are not importable."""


class ConvergenceError(FesubError, RuntimeError):
    """An iterative solver failed; ``partial`` holds what was computed before the failure.

    Parameters
    ----------
    message : str
        Description of the failure (which solver, which step, the last residual).
    partial : object, optional
        What was computed before the failure (for instance the branch points already converged,
        in the units of that result), kept as the attribute ``partial``; None when nothing was.
    """

    def __init__(self, message: str, partial=None):
        super().__init__(message)
        self.partial = partial


class ContactLost(FesubError, RuntimeError):
    """A contact left its admissible state (detachment, slave off the target surface)."""


class StepWarning(RuntimeWarning):
    """A time integration ran, but its step does not resolve the contacts: the discrete contact
    law returned energy (J) it had not received (see :func:`fesub.hbm.newmark`)."""


def check_real(name: str, value, *, error=ParameterError) -> float:
    """Return ``float(value)`` for one real number (NaN and inf pass: the caller states the
    range); a string, a sequence (even a ragged one such as ``(0.0, [])``) or an array of more
    than one number is refused.

    Parameters
    ----------
    name : str
        Name of the parameter, quoted in the error message (with its unit, e.g. ``"s (m)"``).
    value : float or int
        The value to check, in the units of the parameter it stands for (any unit).
    error : type, optional
        Exception class raised on failure (default :class:`ParameterError`).

    Returns
    -------
    float
        ``value`` as a float, in the same units as ``value``.
    """
    import numpy as np  # here: the command line imports this module for --help without NumPy

    try:  # a ragged sequence makes NumPy itself raise ValueError
        scalar = not isinstance(value, (str, bytes)) and np.ndim(value) == 0
        v = float(value) if scalar else None
    except (TypeError, ValueError):
        scalar = False
    if not scalar:
        raise error(f"{name} must be a real number, got {value!r}")
    return v


def check_positive(name: str, value, *, strict: bool = True, error=ParameterError) -> float:
    """Return ``float(value)`` if it is finite and > 0 (>= 0 when ``strict=False``), else raise.

    Parameters
    ----------
    name : str
        Name of the parameter, quoted in the error message.
    value : float or int
        The value to check, in the units of the parameter it stands for (any unit: only its sign
        and finiteness are checked).
    strict : bool, optional
        True (default): 0 is refused; False: 0 is accepted.
    error : type, optional
        Exception class raised on failure (default :class:`ParameterError`).

    Returns
    -------
    float
        ``value`` as a float, in the same units as ``value``.

    Raises
    ------
    ParameterError
        (or ``error``) when ``value`` is not a real number, not finite or not positive.
    """
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise error(f"{name} must be a real number, got {value!r}") from None
    ok = v > 0 if strict else v >= 0
    if not (ok and v == v and v != float("inf")):
        bound = "> 0" if strict else ">= 0"
        raise error(f"{name} must be finite and {bound}, got {value!r}")
    return v


def check_range(name: str, value, lo=None, hi=None, *, lo_open=False, hi_open=False,
                error=ParameterError) -> float:
    """Return ``float(value)`` if it lies in the interval [lo, hi] (open ends on request).

    Parameters
    ----------
    name : str
        Name of the parameter, quoted in the error message.
    value : float or int
        The value to check, in the units of the parameter it stands for.
    lo, hi : float, optional
        Bounds of the allowed interval, in the same units as ``value``; None (default) leaves that
        end unbounded.
    lo_open, hi_open : bool, optional
        True excludes the bound itself (open end); False (default) includes it.
    error : type, optional
        Exception class raised on failure (default :class:`ParameterError`).

    Returns
    -------
    float
        ``value`` as a float, in the same units as ``value``.

    Raises
    ------
    ParameterError
        (or ``error``) when ``value`` is not a real number, is NaN or lies outside the interval.
    """
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise error(f"{name} must be a real number, got {value!r}") from None
    bad = v != v
    if lo is not None:
        bad |= v <= lo if lo_open else v < lo
    if hi is not None:
        bad |= v >= hi if hi_open else v > hi
    if bad:
        left = "(" if lo_open else "["
        right = ")" if hi_open else "]"
        lo_s = "-inf" if lo is None else repr(lo)
        hi_s = "inf" if hi is None else repr(hi)
        raise error(f"{name} must lie in {left}{lo_s}, {hi_s}{right}, got {value!r}")
    return v


def check_count(name: str, value, lo: int = 0, hi: int | None = None, *, error=ParameterError) -> int:
    """Return ``int(value)`` for an integer count in [lo, hi]; a float, even an integral one
    like ``3.0``, a bool or a string is refused, not truncated (``1.7`` never becomes 1)."""
    import numbers

    rng = f">= {lo}" if hi is None else f"in {lo}..{hi}"
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise error(f"{name} must be an integer {rng}, got {value!r}")
    v = int(value)
    if v < lo or (hi is not None and v > hi):
        raise error(f"{name} must be an integer {rng}, got {v}")
    return v


def check_names(what: str, given, allowed, *, error=ParameterError) -> None:
    """Refuse names outside ``allowed`` (parameter overrides, options) with one message that
    lists them and what is allowed: ``check_names("pad-on-beam parameter(s)", overrides,
    PadOnBeamParams.__dataclass_fields__)``."""
    bad = sorted(set(given) - set(allowed))
    if bad:
        raise error(f"unknown {what} {bad}; allowed: {sorted(allowed)}")
