"""Resources refused before they are spent: how many steps, samples or harmonics a run may take,
and how much memory it may allocate.

A run whose size is absurd (a time step so small that it needs 1e10 steps, a harmonic balance
with a million harmonics) is refused before anything is allocated, with the estimate in the
message: what it would need (count, memory, time at a stated rate) and which limit it exceeds.
The limits are generous defaults, not physics: raise them when a run really is that large,

* in a script: ``fesub.limits.set_limits(max_steps=1e11)`` or, for one block,
  ``with fesub.limits.raised(max_memory_gib=64): ...``;
* from the shell: the environment variables ``FESUB_MAX_STEPS``, ``FESUB_MAX_MEMORY_GIB``.

Defaults: :data:`DEFAULTS` (2e9 time steps or samples, 16 GiB for the arrays of one call).
"""

from __future__ import annotations

import contextlib
import math
import os

from .errors import ParameterError

__all__ = ["DEFAULTS", "limits", "set_limits", "raised", "check_steps", "check_memory"]

#: default limits: ``max_steps`` (time steps, samples or iterations of one run, a count) and
#: ``max_memory_gib`` (GiB of arrays one call may allocate)
DEFAULTS = {"max_steps": 2e9, "max_memory_gib": 16.0}
_ENV = {"max_steps": "FESUB_MAX_STEPS", "max_memory_gib": "FESUB_MAX_MEMORY_GIB"}
_set: dict = {}


def limits() -> dict:
    """The limits in force: those set in this process, else the environment's, else the defaults.

    Returns
    -------
    dict
        ``{"max_steps": count, "max_memory_gib": GiB}``.
    """
    out = {}
    for name, default in DEFAULTS.items():
        if name in _set:
            out[name] = _set[name]
            continue
        env = os.environ.get(_ENV[name])
        if env:
            try:
                v = float(env)
            except ValueError:
                v = float("nan")
            if not (math.isfinite(v) and v > 0):
                raise ParameterError(f"{_ENV[name]} must be a finite number > 0, got {env!r}")
            out[name] = v
        else:
            out[name] = default
    return out


def set_limits(**values) -> dict:
    """Set limits for this process (``None`` restores a limit's default).

    Parameters
    ----------
    max_steps : float, optional
        Largest number of time steps, samples or iterations of one run (count).
    max_memory_gib : float, optional
        Largest memory for the arrays of one call (GiB).

    Returns
    -------
    dict
        The limits set before (to restore them with ``set_limits(**old)``).
    """
    old = {k: _set.get(k) for k in values}
    for name, v in values.items():
        if name not in DEFAULTS:
            raise ParameterError(f"unknown limit {name!r}; the limits are {sorted(DEFAULTS)}")
        if v is None:
            _set.pop(name, None)
            continue
        try:
            f = float(v)
        except (TypeError, ValueError):
            f = float("nan")
        if isinstance(v, bool) or not (math.isfinite(f) and f > 0):
            raise ParameterError(f"{name} must be a finite number > 0, got {v!r}")
        _set[name] = f
    return old


@contextlib.contextmanager
def raised(**values):
    """Context manager: the limits ``values`` (as :func:`set_limits`) inside the block only."""
    old = set_limits(**values)
    try:
        yield
    finally:
        set_limits(**old)


def _gib(nbytes: float) -> str:
    return f"{nbytes / 2**30:.3g} GiB"


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.3g} s"
    if seconds < 7200:
        return f"{seconds / 60:.3g} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.3g} h"
    return f"{seconds / 86400:.3g} days"


def check_steps(what: str, count, *, seconds_each: float | None = None,
                bytes_each: float = 0.0, hint: str = "") -> int:
    """Refuse a run of ``count`` steps (samples, iterations) above ``max_steps``, or whose arrays
    (``bytes_each`` per step) exceed ``max_memory_gib``, before anything is allocated.

    Parameters
    ----------
    what : str
        What is counted, for the message (``"time steps of the transient"``).
    count : float
        The number of steps the run needs (may be huge or non-finite: refused then).
    seconds_each : float, optional
        Time per step (s) of a typical run, for the estimate in the message.
    bytes_each : float, optional
        Memory per step (bytes) kept by the run (its output arrays).
    hint : str, optional
        What to change to make the run smaller (``"a larger --time-step"``).

    Returns
    -------
    int
        ``ceil(count)``.
    """
    lim = limits()
    c = float(count)
    if not math.isfinite(c):
        raise ParameterError(f"the run needs a non-finite number of {what} ({count!r}); "
                             f"{hint or 'check its duration and step'}")
    need = bytes_each * c
    too_many = c > lim["max_steps"]
    too_big = need > lim["max_memory_gib"] * 2**30
    if too_many or too_big:
        est = [f"{c:.3g} {what}"]
        if seconds_each:
            est.append(f"about {_duration(c * seconds_each)} at {seconds_each:.2g} s each")
        if bytes_each:
            est.append(f"{_gib(need)} of arrays")
        which = (f"max_steps = {lim['max_steps']:.3g}" if too_many
                 else f"max_memory_gib = {lim['max_memory_gib']:.3g}")
        env = _ENV["max_steps" if too_many else "max_memory_gib"]
        raise ParameterError(
            f"the run needs {', '.join(est)}: more than the limit {which}"
            f"{'; ' + hint if hint else ''}; if you mean it, raise the limit "
            f"(fesub.limits.set_limits({which.split(' =')[0]}=...) or {env})")
    return int(math.ceil(c))


def check_memory(what: str, nbytes: float, *, hint: str = "") -> float:
    """Refuse an allocation of ``nbytes`` above ``max_memory_gib`` before it is made.

    Parameters
    ----------
    what : str
        What would be allocated, for the message (``"the harmonic-balance Jacobian"``).
    nbytes : float
        Its size (bytes).
    hint : str, optional
        What to change to make it smaller.

    Returns
    -------
    float
        ``nbytes``.
    """
    lim = limits()["max_memory_gib"]
    b = float(nbytes)
    if not (math.isfinite(b) and b <= lim * 2**30):
        raise ParameterError(
            f"{what} needs {_gib(b)}: more than the limit max_memory_gib = {lim:.3g}"
            f"{'; ' + hint if hint else ''}; if you mean it, raise the limit "
            "(fesub.limits.set_limits(max_memory_gib=...) or FESUB_MAX_MEMORY_GIB)")
    return b
