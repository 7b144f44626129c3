"""Compiled fixed-step batch integrator for many initial conditions, serial or parallel.

:func:`batch_periodic` validates the inputs, allocates the outputs and calls the kernel
``batch_rk4`` of ``fesub/_core/freeplay.pyx`` (NumPy twin ``freeplay_ref.py``).
:func:`batch_parallel` splits the initial conditions into chunks and runs them on any
``concurrent.futures`` executor (default: a local ``ProcessPoolExecutor`` with ``os.cpu_count()``
workers whose OpenMP/BLAS thread counts are set to 1).
"""

from __future__ import annotations

import contextlib
import math
import os
from concurrent.futures import Executor
from dataclasses import dataclass

import numpy as np

from .. import _backend
from ..errors import ParameterError, check_positive
from ..io import Result, summary_record
from ..parallel import THREAD_VARS, init_worker, process_pool, shutdown_now, worker_pool
from ._dataset import MASS_COORD, POSITION, VELOCITY, join_state, split_state, var
from .system import get_params

__all__ = ["BatchResult", "batch_periodic", "batch_parallel", "LAWS", "init_worker", "worker_pool",
           "executor_scope", "shutdown_now", "tile_bounds", "period_of"]

LAWS = {"exact": 0, "smooth": 1, "sigmoid": 1}


@dataclass
class BatchResult(Result):
    """Output of the batch integrator.

    Parameters
    ----------
    strobe : ndarray, shape (B, n_record + 1, 4)
        Stroboscopic states ``[x1, y1, x2, y2]`` [m, m/s] at t = (n_transient + j) T.
    x1_max, x1_min : ndarray, shape (B,)
        Extrema of x1 over the recorded periods [m].
    sections : ndarray, shape (B, nsmax, 5)
        Section x1' = 0 points ``[x1 [m], x2 [m], y2 [m/s], phase [-] in [0, 1) of the
        forcing period, direction (-1 maximum of x1, +1 minimum)]``.
    nsec : ndarray, shape (B,)
        Number of section points (first ``nsmax`` stored).
    nswitch : ndarray, shape (B,)
        Number of switches in the recorded periods (exact law).
    n_used : ndarray, shape (B,)
        Transient periods actually integrated (< n_transient with early exit).
    """

    kind = "freeplay-batch"

    strobe: np.ndarray
    x1_max: np.ndarray
    x1_min: np.ndarray
    sections: np.ndarray
    nsec: np.ndarray
    nswitch: np.ndarray
    n_used: np.ndarray = None

    _SECTION = (("x1", POSITION), ("x2", POSITION), ("y2", VELOCITY),
                ("phase", "1"), ("direction", "1"))

    def to_xarray(self):
        import xarray as xr

        t, sp = ("trajectory",), ("trajectory", "section_point")
        data = {**split_state("strobe", self.strobe, t + ("record",), "stroboscopic state"),
                "x1_max": var(t, self.x1_max, POSITION, "max x1 (recorded periods)"),
                "x1_min": var(t, self.x1_min, POSITION, "min x1 (recorded periods)"),
                "nsec": var(t, self.nsec, "1", "section points found"),
                "nswitch": var(t, self.nswitch, "1", "switches in the recorded periods")}
        for k, (name, unit) in enumerate(self._SECTION):
            data[f"section_{name}"] = var(sp, np.ascontiguousarray(self.sections[..., k]),
                                              unit, f"section x1' = 0: {name}")
        if self.n_used is not None:
            data["n_used"] = var(t, self.n_used, "1", "transient periods integrated")
        coords = {"record": ("record", np.arange(self.strobe.shape[1]),
                             {"units": "1", "long_name": "forcing periods after the transient"}),
                  "mass": MASS_COORD}
        return xr.Dataset(data, coords)

    @classmethod
    def from_xarray(cls, ds):
        sec = np.stack([ds[f"section_{n}"].values for n, _ in cls._SECTION], axis=-1)
        return cls(strobe=join_state(ds, "strobe"), x1_max=ds["x1_max"].values,
                   x1_min=ds["x1_min"].values, sections=sec, nsec=ds["nsec"].values,
                   nswitch=ds["nswitch"].values,
                   n_used=ds["n_used"].values if "n_used" in ds else None)

    def summary(self) -> dict:
        return summary_record(self.kind, {"trajectories": (len(self.x1_max), None)},
                              {"x1_max": (float(np.nanmax(self.x1_max)), POSITION)
                               if len(self.x1_max) else (None, POSITION)})

    @staticmethod
    def concat(parts):
        nsm = max(p.sections.shape[1] for p in parts)
        secs = []
        for p in parts:
            s = np.full((p.sections.shape[0], nsm, 5), np.nan)
            s[:, :p.sections.shape[1]] = p.sections
            secs.append(s)
        return BatchResult(*(np.concatenate([getattr(p, f) for p in parts])
                             for f in ("strobe", "x1_max", "x1_min")),
                           np.concatenate(secs),
                           np.concatenate([p.nsec for p in parts]),
                           np.concatenate([p.nswitch for p in parts]),
                           np.concatenate([p.n_used for p in parts]))


def _law_code(law) -> int:
    if law not in LAWS:
        raise ParameterError(f"law must be 'exact' or 'smooth', got {law!r}")
    return LAWS[law]


def validate_batch(params, X0, W, law, n_transient, n_record, steps_per_period, nsec_max, section_dir):
    p = get_params(params)
    X0 = np.ascontiguousarray(np.asarray(X0, dtype=float))
    if X0.ndim == 1:
        X0 = X0[None, :]
    if X0.ndim != 2 or X0.shape[1] != 4:
        raise ParameterError(f"X0 must have shape (B, 4) [x1, y1, x2, y2], got {X0.shape}")
    if X0.shape[0] == 0:
        raise ParameterError("X0 is empty: at least one initial condition is needed")
    if not np.all(np.isfinite(X0)):
        raise ParameterError("X0 must be finite")
    W = np.asarray(W, dtype=float)
    if W.ndim == 0:
        W = np.full(X0.shape[0], float(W))
    W = np.ascontiguousarray(W)
    if W.shape != (X0.shape[0],):
        raise ParameterError(f"W must be a scalar or have shape ({X0.shape[0]},), got {W.shape}")
    if not np.all(np.isfinite(W) & (W > 0)):
        raise ParameterError("W (forcing frequency) must be finite and > 0")
    code = _law_code(law)
    n_transient = int(n_transient)
    n_record = int(n_record)
    steps = int(steps_per_period)
    if n_transient < 0:
        raise ParameterError(f"n_transient must be >= 0, got {n_transient}")
    if n_record < 1:
        raise ParameterError(f"n_record must be >= 1, got {n_record}")
    if steps < 8:
        raise ParameterError(f"steps_per_period must be >= 8, got {steps}")
    if section_dir not in (-1, 0, 1):
        raise ParameterError(f"section_dir must be -1, 0 or +1, got {section_dir!r}")
    if nsec_max is None:
        nsec_max = 4 * n_record
    nsec_max = int(nsec_max)
    if nsec_max < 0:
        raise ParameterError(f"nsec_max must be >= 0, got {nsec_max}")
    return p, X0, W, code, n_transient, n_record, steps, nsec_max


def batch_periodic(params, X0, W, *, law="exact", n_transient=150, n_record=4,
                   steps_per_period=200, nsec_max=None, section_dir=0, early_exit_tol=0.0,
                   early_exit_pmax=8) -> BatchResult:
    """Integrate many initial conditions with fixed-step RK4 (serial, current backend).

    Parameters
    ----------
    params : FreePlayParams, dict or preset name
    X0 : (B, 4) initial states [x1, y1, x2, y2] at t = 0
    W : float or (B,) forcing frequencies (non-dimensional)
    law : 'exact' (event-split RK4) or 'smooth' (logistic sigmoid, ``params.delta``)
    n_transient : periods discarded; n_record : periods recorded
    steps_per_period : RK4 steps per forcing period
    nsec_max : stored section points per trajectory (default 4 n_record)
    section_dir : 0 all section points, -1 maxima of x1 only, +1 minima only
    early_exit_tol : if > 0, the transient of a trajectory ends as soon as its stroboscopic
        state repeats within this tolerance (max norm) after q <= early_exit_pmax periods;
        0 (default) integrates all n_transient periods (the reference protocol)
    early_exit_pmax : largest q checked (1..8)

    Returns
    -------
    BatchResult
    """
    p, X0, W, code, ntr, nrec, N, nsm = validate_batch(params, X0, W, law, n_transient, n_record,
                                                  steps_per_period, nsec_max, section_dir)
    early_exit_tol = check_positive("early_exit_tol", early_exit_tol, strict=False)
    early_exit_pmax = int(early_exit_pmax)
    if not 1 <= early_exit_pmax <= 8:
        raise ParameterError(f"early_exit_pmax must lie in [1, 8], got {early_exit_pmax}")
    B = X0.shape[0]
    strobe = np.empty((B, nrec + 1, 4))
    ext = np.empty((B, 2))
    sec = np.full((B, nsm, 5), np.nan)
    nsec = np.zeros(B, dtype=np.int32)
    nsw = np.zeros(B, dtype=np.int32)
    used = np.zeros(B, dtype=np.int32)
    costab = np.cos(np.pi * np.arange(2 * N + 1) / N)
    k = _backend.kernels("freeplay")
    k.batch_rk4(X0, W, p.as_array(), code, ntr, nrec, N, int(section_dir), costab, strobe, ext,
                sec, nsec, nsw, float(early_exit_tol), early_exit_pmax, used)
    return BatchResult(strobe, ext[:, 0].copy(), ext[:, 1].copy(), sec, nsec, nsw, used)


def executor_scope(executor):
    """Context for the ``executor`` argument of the batch functions: None -> a local
    :func:`worker_pool` with ``os.cpu_count()`` workers, anything else is passed through."""
    if executor is None:
        return worker_pool(None)
    return contextlib.nullcontext(executor)


def _chunk_job(args):
    backend, params, X0, W, kw = args
    for v in THREAD_VARS:
        os.environ.setdefault(v, "1")
    with _backend.use(backend):
        return batch_periodic(params, X0, W, **kw)


def batch_parallel(params, X0, W, *, executor=None, n_chunks=None, progress=False,
                   **kw) -> BatchResult:
    """:func:`batch_periodic` over chunks of initial conditions on a concurrent.futures executor.

    Parameters
    ----------
    params : FreePlayParams, dict or preset name
        Model parameters (units of :data:`PARAM_UNITS`).
    X0 : array_like (B, 4)
        Initial states ``[x1, y1, x2, y2]`` [m, m/s] at t = 0.
    W : float or array_like (B,)
        Forcing frequencies (rad/s).
    executor : concurrent.futures.Executor, 'serial' or None
        None: a local ProcessPoolExecutor with os.cpu_count() workers (created and shut down here);
        'serial': run in this process. Any executor with ``submit`` works (e.g. a Dask client's
        ``get_executor()``).
    n_chunks : int, optional
        Number of chunks (-; default 4 per worker, at most B).
    progress : bool
        Show a tqdm progress bar over chunks.
    **kw
        Passed to :func:`batch_periodic`.

    Returns
    -------
    BatchResult
        As :func:`batch_periodic` returns (states in m and m/s).

    The result does not depend on the executor or the chunking (each trajectory is independent
    and the kernel is deterministic).
    """
    p, X0, W, *_ = validate_batch(params, X0, W, kw.get("law", "exact"), kw.get("n_transient", 150),
                             kw.get("n_record", 4), kw.get("steps_per_period", 200),
                             kw.get("nsec_max"), kw.get("section_dir", 0))
    B = X0.shape[0]
    if executor == "serial":
        return batch_periodic(p, X0, W, **kw)
    own = executor is None
    if own:
        nw = os.cpu_count() or 1
        executor = process_pool(nw)
    elif not (isinstance(executor, Executor) or hasattr(executor, "submit")):
        raise ParameterError("executor must be a concurrent.futures Executor, 'serial' or None")
    nw = getattr(executor, "_max_workers", None) or os.cpu_count() or 1
    if n_chunks is None:
        n_chunks = 4 * nw
    n_chunks = max(1, min(int(n_chunks), B))
    bounds = np.linspace(0, B, n_chunks + 1).astype(int)
    backend = _backend.active("freeplay")
    futs = []
    try:
        futs = [executor.submit(_chunk_job, (backend, p, X0[i:j], W[i:j], kw))
                for i, j in zip(bounds[:-1], bounds[1:]) if j > i]
        parts = []
        it = futs
        if progress:
            from tqdm import tqdm
            it = tqdm(futs, desc="batch chunks", unit="chunk")
        for f in it:
            parts.append(f.result())
    except BaseException:
        for f in futs:
            f.cancel()
        if own:
            shutdown_now(executor)
            own = False
        raise
    finally:
        if own:
            executor.shutdown(wait=True, cancel_futures=True)
    return BatchResult.concat(parts)


def periods_for_decay(params, factor: float = 5.0) -> int:
    """Transient length in periods >= factor / (z1 wn1 T) at W = wn1 (spec 3.3)."""
    p = get_params(params)
    z1 = p.zeta[0]
    wn1 = p.wn[0]
    check_positive("z1 (modal damping)", z1)
    return int(math.ceil(factor / (z1 * wn1 * 2 * math.pi / wn1)))


# ------------------------------------------------------------- blocks and recurrence ---
def tile_bounds(n: int, size: int) -> list:
    """``[(i0, i1), ...]``: ``range(n)`` cut into consecutive blocks of ``size`` (the last may be
    shorter).

    Parameters
    ----------
    n : int
        Length of the range (-).
    size : int
        Block size (-), >= 1.

    Returns
    -------
    list of tuple of int
        ``(i0, i1)`` bounds, ``i1`` exclusive.
    """
    n, size = int(n), int(size)
    if size < 1:
        raise ParameterError(f"tile size must be >= 1, got {size}")
    return [(i, min(i + size, n)) for i in range(0, n, size)]


def period_of(strobe: np.ndarray, tol: float = 1e-6, pmax: int | None = None) -> np.ndarray:
    """Period (in forcing periods) from stroboscopic recurrence; 0 = none found, -1 = diverged.

    ``strobe`` has shape (B, n+1, 4); ``p`` is the smallest ``1 <= p <= min(pmax, n)`` with
    ``max |strobe[:, p] - strobe[:, 0]| < tol``.

    Parameters
    ----------
    strobe : array_like (B, n+1, 4)
        Stroboscopic states ``[x1, y1, x2, y2]`` [m, m/s].
    tol : float
        Recurrence tolerance (max norm over the state, in m and m/s).
    pmax : int, optional
        Largest period tried (-); default n.

    Returns
    -------
    numpy.ndarray (B,) of int
        Period in forcing periods (-).
    """
    strobe = np.asarray(strobe, float)
    B, n1, _ = strobe.shape
    pm = n1 - 1 if pmax is None else min(int(pmax), n1 - 1)
    per = np.zeros(B, dtype=int)
    for p in range(pm, 0, -1):
        ok = np.max(np.abs(strobe[:, p] - strobe[:, 0]), axis=1) < tol
        per[ok] = p
    per[~np.all(np.isfinite(strobe[:, 0]), axis=1)] = -1
    return per
