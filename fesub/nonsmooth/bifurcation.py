"""Bifurcation diagrams of the free-play oscillator on the compiled batch integrator.

:func:`bifurcation_diagram` records the Poincare section ``x1' = 0`` (and the stroboscopic map)
against the forcing frequency from several initial conditions; ``mode='fresh'`` restarts every
frequency from the initial conditions (the paper's brute-force sweep), ``mode='follow'``
continues each initial condition from the previous frequency's final state. The result is a
:class:`BifurcationResult`; :func:`bifurcation_point` is the pure, picklable single-frequency
function for a sweep engine.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import ParameterError, check_positive
from ..io import Result, summary_record
from ._dataset import FREQUENCY, MASS_COORD, POSITION, join_state, split_state, var
from .batch import (BatchResult, batch_parallel, batch_periodic, executor_scope, period_of, tile_bounds,
                    validate_batch)
from .system import get_params, split_params

__all__ = ["PAPER_ICS", "BifurcationResult", "bifurcation_diagram", "bifurcation_point"]

#: Initial conditions of the paper's bifurcation diagram (Sec. 4.1), 4-D part [x1, y1, x2, y2]
PAPER_ICS = np.array([[0.2, 0, 0.2, 0], [0.2, 0, -0.2, 0], [-0.2, 0, 0.2, 0], [-0.2, 0, -0.2, 0],
                      [0, 0, 0.1, 0], [0, 0, 0, 0]], dtype=float)


@dataclass
class BifurcationResult(Result):
    """Bifurcation diagram data.

    Parameters
    ----------
    W : ndarray, shape (nW,)
        Forcing frequencies [rad/s].
    ics : ndarray, shape (nIC, 4)
        Initial conditions ``[x1, y1, x2, y2]`` [m, m/s].
    section : ndarray, shape (nW, nIC, n_points)
        x1 at the section x1' = 0 [m] (NaN-padded).
    strobe : ndarray, shape (nW, nIC, n_record + 1, 4)
        Stroboscopic states [m, m/s].
    period : ndarray, shape (nW, nIC)
        Detected period in forcing periods (0 none, -1 diverged).
    x1_max, x1_min : ndarray, shape (nW, nIC)
        Extrema of x1 over the recorded periods [m].
    law : str
        ``'exact'`` or ``'smooth'``.
    options : dict
        Run options and model parameters.
    status : str
        ``'complete'`` or ``'interrupted'`` (then ``W`` holds the frequencies computed).
    """

    kind = "freeplay-bifurcation"

    W: np.ndarray
    ics: np.ndarray
    section: np.ndarray
    strobe: np.ndarray
    period: np.ndarray
    x1_max: np.ndarray
    x1_min: np.ndarray
    law: str
    options: dict = field(default_factory=dict)
    status: str = "complete"

    def to_xarray(self):
        import xarray as xr

        d = ("W", "ic")
        data = {"section": var(d + ("section_point",), self.section, POSITION,
                                   "x1 at the section x1' = 0 (NaN-padded)"),
                "period": var(d, self.period, "1",
                                  "period in forcing periods (0 none, -1 diverged)"),
                "x1_max": var(d, self.x1_max, POSITION, "max x1 over the recorded periods"),
                "x1_min": var(d, self.x1_min, POSITION, "min x1 over the recorded periods"),
                **split_state("ic", self.ics, ("ic",), "initial condition"),
                **split_state("strobe", self.strobe, d + ("record",), "stroboscopic state")}
        coords = {"W": ("W", np.asarray(self.W, float), {"units": FREQUENCY,
                                                          "long_name": "forcing frequency"}),
                  "ic": ("ic", np.arange(self.ics.shape[0]), {"units": "1"}),
                  "section_point": ("section_point", np.arange(self.section.shape[2]),
                                    {"units": "1"}),
                  "record": ("record", np.arange(self.strobe.shape[2]),
                             {"units": "1", "long_name": "forcing periods after the transient"}),
                  "mass": MASS_COORD}
        return xr.Dataset(data, coords, {"law": self.law, "status": self.status,
                                         "options": self.options})

    @classmethod
    def from_xarray(cls, ds):
        return cls(W=ds["W"].values, ics=join_state(ds, "ic"), section=ds["section"].values,
                   strobe=join_state(ds, "strobe"), period=ds["period"].values,
                   x1_max=ds["x1_max"].values, x1_min=ds["x1_min"].values, law=ds.attrs["law"],
                   options=ds.attrs.get("options", {}), status=ds.attrs.get("status", "complete"))

    def summary(self) -> dict:
        per = self.period
        par = {"law": (self.law, None),
               "W_range": ([float(np.min(self.W)), float(np.max(self.W))] if len(self.W)
                           else None, FREQUENCY),
               "n_W": (len(self.W), None), "initial_conditions": (self.ics.shape[0], None),
               "n_transient": (self.options.get("n_transient"), None)}
        res = {"periodic_fraction": (float(np.mean(per > 0)) if per.size else None, "1"),
               "periods_found": (sorted({int(v) for v in np.unique(per) if v > 0}), None),
               "status": (self.status, None)}
        return summary_record(self.kind, par, res)

    @classmethod
    def concat(cls, parts) -> "BifurcationResult":
        """Join diagrams over consecutive frequency blocks (same initial conditions and options)."""
        parts = list(parts)
        if not parts:
            raise ParameterError("no bifurcation blocks to join")
        first = parts[0]
        for q in parts[1:]:
            if q.law != first.law or q.options != first.options or not np.array_equal(q.ics,
                                                                                      first.ics):
                raise ParameterError("bifurcation blocks come from different runs")
        cat = {f: np.concatenate([getattr(q, f) for q in parts])
               for f in ("W", "section", "strobe", "period", "x1_max", "x1_min")}
        status = "complete" if all(q.status == "complete" for q in parts) else "interrupted"
        return cls(ics=first.ics, law=first.law, options=first.options, status=status, **cat)


def bifurcation_diagram(params=None, W_values=None, ics=None, *, law="exact", n_transient=300,
                        n_points=100, section_dir=0, steps_per_period=200, mode="fresh",
                        period_tol=1e-6, pmax=12, block=None, executor=None,
                        progress=True) -> BifurcationResult:
    """Poincare section x1' = 0 of the steady state against the forcing frequency.

    On Ctrl-C (KeyboardInterrupt) the frequencies finished so far are returned with
    ``status='interrupted'``; the worker processes of a pool created here are stopped.

    Parameters
    ----------
    W_values : (nW,) array_like
        Forcing frequencies [rad/s] (default ``linspace(0.8, 1.8, 101)``).
    ics : (nIC, 4) array_like
        Initial states [m, m/s] (default :data:`PAPER_ICS`).
    n_transient : int
        Discarded periods.
    n_points : int
        Section points recorded per (W, IC).
    section_dir : int
        0 maxima and minima of x1, -1 maxima only, +1 minima only.
    mode : str
        'fresh' (every W from the ICs) or 'follow' (each IC continues from the previous W).
    pmax : int
        Largest period detected from the stroboscopic points.
    block : int, optional
        Frequencies integrated together in 'fresh' mode (default: about 10 blocks); the result
        does not depend on it.
    executor : None, 'serial' or any executor
        None: a local process pool with os.cpu_count() workers.
    progress : bool
        Progress bar.
    """
    p = get_params(params)
    W_values = np.linspace(0.8, 1.8, 101) if W_values is None else np.asarray(W_values, float)
    if W_values.ndim != 1 or W_values.size == 0:
        raise ParameterError("W_values must be a non-empty 1-D array")
    ics = PAPER_ICS if ics is None else np.asarray(ics, float)
    if ics.ndim != 2 or ics.shape[1] != 4 or ics.shape[0] == 0:
        raise ParameterError(f"ics must have shape (nIC, 4) with nIC >= 1, got {ics.shape}")
    n_points = int(n_points)
    if n_points < 1:
        raise ParameterError(f"n_points must be >= 1, got {n_points}")
    if mode not in ("fresh", "follow"):
        raise ParameterError(f"mode must be 'fresh' or 'follow', got {mode!r}")
    per_period = 2 if section_dir == 0 else 1
    n_record = max(int(pmax), int(math.ceil(n_points / per_period)))
    nW, nI = W_values.size, ics.shape[0]
    kw = dict(law=law, n_record=n_record, steps_per_period=steps_per_period,
              nsec_max=n_points, section_dir=section_dir)
    validate_batch(p, ics, W_values[0], law, n_transient, n_record, steps_per_period, n_points,
              section_dir)
    parts = []
    status = "complete"
    try:
        if mode == "fresh":
            size = max(1, math.ceil(nW / 10)) if block is None else int(block)
            it = tile_bounds(nW, size)
            if progress:
                from tqdm import tqdm
                it = tqdm(it, desc=f"bifurcation ({law})", unit="block")
            with executor_scope(executor) as ex:
                for i0, i1 in it:
                    X0 = np.repeat(ics[None], i1 - i0, axis=0).reshape(-1, 4)
                    Wb = np.repeat(W_values[i0:i1], nI)
                    parts.append(batch_parallel(p, X0, Wb, executor=ex, progress=False,
                                                n_transient=n_transient, **kw))
        else:
            z = ics.copy()
            it = range(nW)
            if progress:
                from tqdm import tqdm
                it = tqdm(it, desc="bifurcation (follow)")
            for i in it:
                ri = batch_periodic(p, z, W_values[i], n_transient=n_transient, **kw)
                parts.append(ri)
                z = np.where(np.isfinite(ri.strobe[:, -1]), ri.strobe[:, -1], ics)
    except KeyboardInterrupt:
        status = "interrupted"
    opts = dict(n_transient=n_transient, n_points=n_points, section_dir=section_dir,
                steps_per_period=steps_per_period, mode=mode, period_tol=period_tol, pmax=pmax,
                params=p.to_dict())
    if not parts:
        return BifurcationResult(W=W_values[:0], ics=ics, section=np.zeros((0, nI, n_points)),
                                 strobe=np.zeros((0, nI, n_record + 1, 4)),
                                 period=np.zeros((0, nI), int), x1_max=np.zeros((0, nI)),
                                 x1_min=np.zeros((0, nI)), law=law, options=opts, status=status)
    r = BatchResult.concat(parts)
    nW = r.strobe.shape[0] // nI
    per = period_of(r.strobe, period_tol, pmax)
    sec = r.sections[:, :n_points, 0].reshape(nW, nI, n_points)
    return BifurcationResult(W=W_values[:nW], ics=ics, section=sec,
                             strobe=r.strobe.reshape(nW, nI, n_record + 1, 4),
                             period=per.reshape(nW, nI), x1_max=r.x1_max.reshape(nW, nI),
                             x1_min=r.x1_min.reshape(nW, nI), law=law, options=opts,
                             status=status)


# ---------------------------------------------------------------- sweep-engine entry point ----

def bifurcation_point(params: dict, omega: float) -> dict:
    """Section points of the steady states at one forcing frequency from the paper's 6 ICs.

    ``params`` holds model parameters plus optional ``law``, ``n_transient`` (300),
    ``n_points`` (100), ``section_dir`` (0), ``steps_per_period`` (200), ``period_tol``, ``pmax``,
    ``ics``. Returns a dict of plain lists (JSON-serialisable).

    Parameters
    ----------
    params : dict
        Model parameters (units of :data:`PARAM_UNITS`) and the options above.
    omega : float
        Forcing frequency W (rad/s), > 0.

    Returns
    -------
    dict
        ``W`` (rad/s), ``law``, ``ics`` [m, m/s], ``section_x1`` (m, one list per IC),
        ``period`` (forcing periods, -), ``x1_max`` and ``x1_min`` (m).
    """
    p, opts = split_params(params)
    allowed = {"law", "n_transient", "n_points", "section_dir", "steps_per_period", "period_tol",
               "pmax", "ics"}
    unknown = set(opts) - allowed
    if unknown:
        raise ParameterError(f"unknown option(s) {sorted(unknown)} for bifurcation_point")
    omega = check_positive("omega (forcing frequency)", omega)
    r = bifurcation_diagram(p, [omega], **opts, executor="serial", progress=False)
    sec = [[float(v) for v in row if np.isfinite(v)] for row in r.section[0]]
    return {"W": omega, "law": r.law, "ics": r.ics.tolist(), "section_x1": sec,
            "period": r.period[0].tolist(), "x1_max": r.x1_max[0].tolist(),
            "x1_min": r.x1_min[0].tolist()}
