"""What the harmonic-balance analyses share: argument checks, the memory check of the
continuations, the single-threaded BLAS decorator, the re-raise of an interrupt caught by an
inner continuation and the base of their results."""

from __future__ import annotations

import functools

import numpy as np

from ..errors import ParameterError, check_count, check_positive
from ..io import Result
from ..limits import check_memory, check_steps
from ..parallel import single_thread_blas

#: harmonic unknowns (-) from which the continuations of :func:`~fesub.hbm.dnnm` and
#: :func:`~fesub.hbm.forced_response` reuse their Jacobian's factorisation
#: (``continue_branch(reuse_factorization=True)``): below, a dense LU costs less than the few
#: GMRES iterations and their checks (at N = 1000, 25 ms against ~10 ms for five iterations; at
#: 3700, 1 s against ~50 ms)
REUSE_FROM = 1000

#: N x N float64 arrays (N harmonic unknowns) that :func:`~fesub.hbm.dnnm` and
#: :func:`~fesub.hbm.forced_response` hold at their peak, besides the contacts' gather matrices
#: (:meth:`~fesub.hbm.HBSystem.memory_bytes`): the Jacobian, the corrector's bordered matrices,
#: the factors and their temporaries. Measured with ``tracemalloc`` at N = 1000 and 2000:
#: 4.6 and 4.5 (dNNM, reused factorisation; 4.1 with direct solves), 7.6 (forced response;
#: 7.1 with direct solves). For the bolted joint's dNNM at Nh = 13 (N = 16686, 200 contacts)
#: this count gives 13.3 GB; the run peaked at 16.4 GB resident (the process also holds the
#: model and Python, 0.45 GB, and what its allocator keeps).
DNNM_ARRAYS, FORCED_ARRAYS = 5.0, 8.0


def check_analysis_memory(sys, what: str, square_arrays: float) -> None:
    """Refuse an analysis of ``sys`` whose peak arrays (:meth:`~fesub.hbm.HBSystem.memory_bytes`
    of ``square_arrays``) exceed :func:`fesub.limits.limits`' ``max_memory_gib``, before its
    first step."""
    check_memory(f"{what} of {sys.N} harmonic unknowns (nh = {sys.nh})",
                 sys.memory_bytes(square_arrays), hint="use fewer harmonics")


def single_threaded(fn):
    """Run ``fn`` with a single-threaded BLAS (small dense systems, see :mod:`fesub.parallel`),
    unless its first argument is a system of :data:`REUSE_FROM` harmonic unknowns or more
    (``.N``): its dense products and factorisations gain from the BLAS threads (the bolted
    joint's backbone, 4326 unknowns: 47.7 s against 58.6 s over 40 steps on 2 cores)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        n = getattr(args[0], "N", 0) if args else 0
        if isinstance(n, (int, np.integer)) and n >= REUSE_FROM:
            return fn(*args, **kwargs)
        with single_thread_blas():
            return fn(*args, **kwargs)

    return wrapper


def increasing_range(name, r, unit=""):
    """(lo, hi) with 0 < lo < hi, both finite, else ParameterError."""
    try:
        lo, hi = r
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be a pair (low, high), got {r!r}") from None
    lo = check_positive(f"{name}[0]{unit}", lo)
    hi = check_positive(f"{name}[1]{unit}", hi)
    if hi <= lo:
        raise ParameterError(f"{name} must be increasing, got {r!r}")
    return lo, hi


def step_count(name, value):
    """A number of continuation steps: an integer >= 1 and within the step limit of
    :mod:`fesub.limits`, else ParameterError naming it (NaN, inf, text and 2.5 included)."""
    v = check_count(name, value, 1)
    check_steps(f"continuation steps ({name})", v)
    return v


def go_on(result):
    """``result`` of an inner continuation; the KeyboardInterrupt it caught is raised again (the
    long run that called it returns what it has computed, ``status = 'interrupted'``)."""
    if result.stop_reason == "interrupted":
        raise KeyboardInterrupt
    return result


def dof_or_load(name, sys, dof):
    if dof is None:
        h = sys.h0 * sys.n           # the fundamental's cosine (after the mean block, if any)
        return int(np.argmax(np.abs(sys.fex[h:h + sys.n])))
    return check_count(name, dof, 0, sys.n - 1)


class Curve(Result):
    """What the harmonic-balance results share: the status, saved files' layout helpers."""

    #: what the ``coefficient`` dimension of ``Q`` holds
    Q_LAYOUT = ("harmonic coefficients of the displacements, blocks of the n DOFs: "
                "cos 1, sin 1, cos 2, sin 2, ... (x(t) = sum_h Q_cos,h cos(h w t) + "
                "Q_sin,h sin(h w t))")

    @property
    def status(self) -> str:
        """``'interrupted'`` when a KeyboardInterrupt stopped the computation (the points
        computed before it are kept), else ``'finished'``."""
        return "interrupted" if self.stop_reason == "interrupted" else "finished"

    @staticmethod
    def _Q(Q):
        return (("point", "coefficient"), np.asarray(Q, float),
                {"units": "m", "long_name": Curve.Q_LAYOUT})

    @staticmethod
    def _dataset(data: dict, coords: dict, attrs: dict):
        import xarray as xr

        return xr.Dataset(data, coords=coords, attrs=attrs)
