"""Bifurcation diagrams and basins of attraction on the compiled batch integrator.

* :func:`basins` -- grid of initial positions ``(x1(0), x2(0))`` with zero velocities at t = 0;
  each cell is integrated ``n_transient`` periods (discarded) and ``n_record`` periods (recorded);
  its attractor is identified by Poincare return: the period ``p`` is the smallest ``p <= pmax``
  with ``|P^p(x) - x|_inf < period_tol`` on the stroboscopic points, and the signature
  ``(p, max x1, min x1)`` is clustered (``max |x1|`` alone would merge mirror pairs). ``p = 0``
  means non-periodic (chaotic or unconverged) and gets the label ``-1``; diverged cells get ``-2``.
* :func:`bifurcation_diagram` -- Poincare section ``x1' = 0`` (and the stroboscopic map) against
  the forcing frequency from several initial conditions; ``mode='fresh'`` restarts every
  frequency from the initial conditions (the paper's brute-force sweep), ``mode='follow'``
  continues each initial condition from the previous frequency's final state.
* :func:`basin_point`, :func:`bifurcation_point` -- pure, picklable single-point functions for a
  sweep engine.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field

import numpy as np

from ..errors import ParameterError, check_positive
from .batch import BatchResult, batch_parallel, batch_periodic
from .system import FreePlayParams, get_params

__all__ = ["PAPER_ICS", "period_of", "classify", "BasinResult", "basins", "BifurcationResult",
           "bifurcation_diagram", "basin_point", "bifurcation_point"]

#: Initial conditions of the paper's bifurcation diagram (Sec. 4.1), 4-D part [x1, y1, x2, y2]
PAPER_ICS = np.array([[0.2, 0, 0.2, 0], [0.2, 0, -0.2, 0], [-0.2, 0, 0.2, 0], [-0.2, 0, -0.2, 0],
                      [0, 0, 0.1, 0], [0, 0, 0, 0]], dtype=float)


def period_of(strobe: np.ndarray, tol: float = 1e-6, pmax: int | None = None) -> np.ndarray:
    """Period (in forcing periods) from stroboscopic recurrence; 0 = none found, -1 = diverged.

    ``strobe`` has shape (B, n+1, 4); ``p`` is the smallest ``1 <= p <= min(pmax, n)`` with
    ``max |strobe[:, p] - strobe[:, 0]| < tol``.
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


def classify(period, x1_max, x1_min, *, cluster_tol=1e-3):
    """Cluster signatures ``(p, max x1, min x1)`` into attractor labels.

    Two periodic cells belong to the same attractor when their periods are equal and their max
    and min of x1 differ by less than ``cluster_tol``. Labels are 0..K-1 ordered by
    (period, -max x1, min x1); -1 = non-periodic, -2 = diverged.

    Returns
    -------
    labels : (B,) int
    attractors : list of dict(label, period, x1_max, x1_min, count)
    """
    period = np.asarray(period)
    xM = np.asarray(x1_max, float)
    xm = np.asarray(x1_min, float)
    labels = np.full(period.shape, -1, dtype=int)
    labels[period < 0] = -2
    reps = []  # (p, max, min)
    idx = np.nonzero(period > 0)[0]
    order = idx[np.lexsort((xm[idx], -xM[idx], period[idx]))]
    for i in order:
        for r, (p, M, m_) in enumerate(reps):
            if p == period[i] and abs(M - xM[i]) < cluster_tol and abs(m_ - xm[i]) < cluster_tol:
                labels[i] = r
                break
        else:
            reps.append((int(period[i]), float(xM[i]), float(xm[i])))
            labels[i] = len(reps) - 1
    # order the clusters and relabel
    keys = sorted(range(len(reps)), key=lambda r: (reps[r][0], -reps[r][1], reps[r][2]))
    remap = {old: new for new, old in enumerate(keys)}
    out = labels.copy()
    for old, new in remap.items():
        out[labels == old] = new
    attractors = []
    for new, old in enumerate(keys):
        sel = out == new
        attractors.append({"label": new, "period": reps[old][0],
                           "x1_max": float(np.mean(xM[sel])), "x1_min": float(np.mean(xm[sel])),
                           "count": int(sel.sum())})
    return out, attractors


def _split_params(params):
    """Split a dict into model parameters and run options."""
    if isinstance(params, FreePlayParams) or params is None or isinstance(params, str):
        return get_params(params), {}
    if not isinstance(params, dict):
        raise ParameterError(f"params must be a dict, preset name or FreePlayParams, got {type(params)}")
    names = set(FreePlayParams.__dataclass_fields__)
    model = {k: v for k, v in params.items() if k in names or k == "preset"}
    opts = {k: v for k, v in params.items() if k not in model}
    return get_params(model), opts


def _save(path, arrays: dict, meta: dict):
    path = os.fspath(path)
    base = path[:-4] if path.endswith(".npz") else path
    np.savez_compressed(base + ".npz", **arrays)
    with open(base + ".json", "w") as f:
        json.dump(meta, f, indent=1, default=float)
    return base + ".npz"


@dataclass
class BasinResult:
    """Basins of attraction on a grid of initial positions.

    Attributes
    ----------
    W : forcing frequency; law : 'exact' | 'smooth'
    x1, x2 : (n1,), (n2,) grid of initial positions
    labels : (n1, n2) attractor label per cell (-1 non-periodic, -2 diverged)
    period : (n1, n2) detected period (0 none)
    x1_max, x1_min : (n1, n2) steady-state extrema of x1
    attractors : list of dict(label, period, x1_max, x1_min, count, fraction, strobe)
    """

    W: float
    law: str
    x1: np.ndarray
    x2: np.ndarray
    labels: np.ndarray
    period: np.ndarray
    x1_max: np.ndarray
    x1_min: np.ndarray
    attractors: list
    strobe_last: np.ndarray = field(repr=False, default=None)
    options: dict = field(default_factory=dict)

    @property
    def fractions(self) -> dict:
        """label -> fraction of cells (including -1 and -2 when present)."""
        n = self.labels.size
        return {int(l): float(np.sum(self.labels == l)) / n for l in np.unique(self.labels)}

    @property
    def unclassified(self) -> float:
        return float(np.mean(self.labels < 0))

    def same_attractor(self, other: "BasinResult", tol: float = 1e-3) -> np.ndarray:
        """Cell-wise: both runs reach attractors with equal period and max/min x1 within tol."""
        if self.labels.shape != other.labels.shape:
            raise ParameterError("basins on different grids cannot be compared")
        return ((self.period == other.period) & (self.period > 0)
                & (np.abs(self.x1_max - other.x1_max) < tol)
                & (np.abs(self.x1_min - other.x1_min) < tol))

    def agreement(self, other: "BasinResult", tol: float = 1e-3) -> float:
        """Fraction of cells whose attractors agree (see :meth:`same_attractor`)."""
        return float(np.mean(self.same_attractor(other, tol)))

    def save(self, path):
        meta = {"W": self.W, "law": self.law, "attractors": self.attractors,
                "fractions": {str(k): v for k, v in self.fractions.items()}, "options": self.options}
        return _save(path, {"x1": self.x1, "x2": self.x2, "labels": self.labels,
                            "period": self.period, "x1_max": self.x1_max, "x1_min": self.x1_min,
                            "strobe_last": self.strobe_last}, meta)

    @classmethod
    def load(cls, path):
        path = os.fspath(path)
        base = path[:-4] if path.endswith(".npz") else path
        d = np.load(base + ".npz")
        with open(base + ".json") as f:
            meta = json.load(f)
        return cls(W=meta["W"], law=meta["law"], x1=d["x1"], x2=d["x2"], labels=d["labels"],
                   period=d["period"], x1_max=d["x1_max"], x1_min=d["x1_min"],
                   attractors=meta["attractors"], strobe_last=d["strobe_last"],
                   options=meta.get("options", {}))


def _grid(rng, n, name):
    try:
        lo, hi = (float(v) for v in rng)
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be a pair (lo, hi), got {rng!r}") from None
    n = int(n)
    if n < 1:
        raise ParameterError(f"grid size along {name} must be >= 1 (empty grid), got {n}")
    if not (math.isfinite(lo) and math.isfinite(hi)) or (n > 1 and not hi > lo):
        raise ParameterError(f"{name} must satisfy lo < hi (finite), got {rng!r}")
    return np.linspace(lo, hi, n)


def basins(params=None, W=1.15, *, law="exact", x1_range=(-0.5, 0.5), x2_range=(-0.5, 0.5),
           shape=(20, 20), n_transient=150, n_record=4, steps_per_period=200, period_tol=1e-6,
           cluster_tol=1e-3, early_exit_tol=0.0, executor=None, progress=True) -> BasinResult:
    """Basins of attraction over initial positions (x1(0), x2(0)), zero velocities, t0 = 0.

    Parameters
    ----------
    params : FreePlayParams, dict or preset
    W : forcing frequency (non-dimensional)
    law : 'exact' | 'smooth'
    x1_range, x2_range : (lo, hi) initial positions; grid ``np.linspace(lo, hi, n)``
    shape : (n1, n2) cells
    n_transient, n_record : discarded and recorded forcing periods
    steps_per_period : RK4 steps per period
    period_tol : stroboscopic recurrence tolerance (max norm)
    cluster_tol : tolerance on max/min x1 when clustering signatures
    early_exit_tol : if > 0, a cell's transient ends once its stroboscopic state repeats within
        this tolerance (see :func:`~fesub.nonsmooth.batch.batch_periodic`); use it well below
        ``period_tol`` (e.g. 1e-9). 0 (default) keeps the fixed ``n_transient`` protocol.
    executor : None (default: local ProcessPoolExecutor with os.cpu_count() workers), 'serial',
        or any concurrent.futures executor (chunks of cells are submitted to it)
    progress : tqdm progress bar over the chunks

    Returns
    -------
    BasinResult
    """
    p = get_params(params)
    W = check_positive("W (forcing frequency)", W)
    try:
        n1, n2 = (int(s) for s in shape)
    except (TypeError, ValueError):
        raise ParameterError(f"shape must be a pair (n1, n2), got {shape!r}") from None
    g1 = _grid(x1_range, n1, "x1_range")
    g2 = _grid(x2_range, n2, "x2_range")
    X1, X2 = np.meshgrid(g1, g2, indexing="ij")
    X0 = np.zeros((X1.size, 4))
    X0[:, 0] = X1.ravel()
    X0[:, 2] = X2.ravel()
    r = batch_parallel(p, X0, W, executor=executor, progress=progress, law=law,
                       n_transient=n_transient, n_record=n_record,
                       steps_per_period=steps_per_period, nsec_max=0,
                       early_exit_tol=early_exit_tol)
    per = period_of(r.strobe, period_tol)
    labels, attractors = classify(per, r.x1_max, r.x1_min, cluster_tol=cluster_tol)
    B = X0.shape[0]
    for at in attractors:
        sel = np.nonzero(labels == at["label"])[0]
        at["fraction"] = at["count"] / B
        at["strobe"] = r.strobe[sel[0], :at["period"]].tolist()
    opts = dict(x1_range=list(map(float, x1_range)), x2_range=list(map(float, x2_range)),
                shape=[n1, n2], n_transient=n_transient, n_record=n_record,
                steps_per_period=steps_per_period, period_tol=period_tol,
                cluster_tol=cluster_tol, early_exit_tol=early_exit_tol, params=p.to_dict(),
                mean_transient_periods=float(np.mean(r.n_used)))
    return BasinResult(W=W, law=law, x1=g1, x2=g2, labels=labels.reshape(n1, n2),
                       period=per.reshape(n1, n2), x1_max=r.x1_max.reshape(n1, n2),
                       x1_min=r.x1_min.reshape(n1, n2), attractors=attractors,
                       strobe_last=r.strobe[:, -1].reshape(n1, n2, 4), options=opts)


@dataclass
class BifurcationResult:
    """Bifurcation diagram data.

    Attributes
    ----------
    W : (nW,) frequencies; ics : (nIC, 4) initial conditions
    section : (nW, nIC, n_points) x1 at the section x1' = 0 (NaN-padded)
    strobe : (nW, nIC, n_record+1, 4) stroboscopic states
    period : (nW, nIC) detected period (0 none, -1 diverged)
    x1_max, x1_min : (nW, nIC)
    """

    W: np.ndarray
    ics: np.ndarray
    section: np.ndarray
    strobe: np.ndarray
    period: np.ndarray
    x1_max: np.ndarray
    x1_min: np.ndarray
    law: str
    options: dict = field(default_factory=dict)

    def save(self, path):
        meta = {"law": self.law, "options": self.options}
        return _save(path, {"W": self.W, "ics": self.ics, "section": self.section,
                            "strobe": self.strobe, "period": self.period, "x1_max": self.x1_max,
                            "x1_min": self.x1_min}, meta)

    @classmethod
    def load(cls, path):
        path = os.fspath(path)
        base = path[:-4] if path.endswith(".npz") else path
        d = np.load(base + ".npz")
        with open(base + ".json") as f:
            meta = json.load(f)
        return cls(W=d["W"], ics=d["ics"], section=d["section"], strobe=d["strobe"],
                   period=d["period"], x1_max=d["x1_max"], x1_min=d["x1_min"], law=meta["law"],
                   options=meta.get("options", {}))


def bifurcation_diagram(params=None, W_values=None, ics=None, *, law="exact", n_transient=300,
                        n_points=100, section_dir=0, steps_per_period=200, mode="fresh",
                        period_tol=1e-6, pmax=12, executor=None,
                        progress=True) -> BifurcationResult:
    """Poincare section x1' = 0 of the steady state against the forcing frequency.

    Parameters
    ----------
    W_values : (nW,) frequencies (default ``linspace(0.8, 1.8, 101)``)
    ics : (nIC, 4) initial states (default :data:`PAPER_ICS`)
    n_transient : discarded periods; n_points : section points recorded per (W, IC)
    section_dir : 0 maxima and minima of x1, -1 maxima only, +1 minima only
    mode : 'fresh' (every W from the ICs) or 'follow' (each IC continues from the previous W)
    pmax : largest period detected from the stroboscopic points
    executor : None (local process pool, os.cpu_count() workers), 'serial' or any executor
    progress : tqdm progress bar
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
    if mode == "fresh":
        X0 = np.repeat(ics[None], nW, axis=0).reshape(-1, 4)
        Wb = np.repeat(W_values, nI)
        r = batch_parallel(p, X0, Wb, executor=executor, progress=progress,
                           n_transient=n_transient, **kw)
    else:
        parts = []
        z = ics.copy()
        it = range(nW)
        if progress:
            from tqdm import tqdm
            it = tqdm(it, desc="bifurcation (follow)")
        for i in it:
            ri = batch_periodic(p, z, W_values[i], n_transient=n_transient, **kw)
            parts.append(ri)
            z = np.where(np.isfinite(ri.strobe[:, -1]), ri.strobe[:, -1], ics)
        r = BatchResult.concat(parts)
    per = period_of(r.strobe, period_tol, pmax)
    sec = r.sections[:, :n_points, 0].reshape(nW, nI, n_points)
    opts = dict(n_transient=n_transient, n_points=n_points, section_dir=section_dir,
                steps_per_period=steps_per_period, mode=mode, period_tol=period_tol, pmax=pmax,
                params=p.to_dict())
    return BifurcationResult(W=W_values, ics=ics, section=sec,
                             strobe=r.strobe.reshape(nW, nI, n_record + 1, 4),
                             period=per.reshape(nW, nI), x1_max=r.x1_max.reshape(nW, nI),
                             x1_min=r.x1_min.reshape(nW, nI), law=law, options=opts)


# ---------------------------------------------------------------- sweep-engine entry points ---

_POINT_DEFAULTS = dict(law="exact", n_transient=150, n_record=4, steps_per_period=200,
                       period_tol=1e-6)


def basin_point(params: dict, x0) -> dict:
    """Steady state reached from one initial condition (pure and picklable, for sweeps).

    Parameters
    ----------
    params : dict
        Model parameters (any :class:`FreePlayParams` field, or ``preset``) plus ``W`` (required)
        and optional run options ``law``, ``n_transient``, ``n_record``, ``steps_per_period``,
        ``period_tol``.
    x0 : sequence
        ``(x1, x2)`` initial positions (zero velocities) or a full state ``(x1, y1, x2, y2)``.

    Returns
    -------
    dict with ``period``, ``x1_max``, ``x1_min``, ``strobe`` (list of states) and the inputs.
    """
    p, opts = _split_params(params)
    o = dict(_POINT_DEFAULTS)
    unknown = set(opts) - set(o) - {"W"}
    if unknown:
        raise ParameterError(f"unknown option(s) {sorted(unknown)} for basin_point")
    if "W" not in opts:
        raise ParameterError("basin_point needs the forcing frequency 'W' in params")
    o.update(opts)
    x0 = np.asarray(x0, float).ravel()
    if x0.size == 2:
        z0 = np.array([x0[0], 0.0, x0[1], 0.0])
    elif x0.size == 4:
        z0 = x0
    else:
        raise ParameterError(f"x0 must have 2 (x1, x2) or 4 (x1, y1, x2, y2) entries, got {x0.size}")
    r = batch_periodic(p, z0[None], o["W"], law=o["law"], n_transient=o["n_transient"],
                       n_record=o["n_record"], steps_per_period=o["steps_per_period"], nsec_max=0)
    per = int(period_of(r.strobe, o["period_tol"])[0])
    return {"W": float(o["W"]), "x0": z0.tolist(), "law": o["law"], "period": per,
            "x1_max": float(r.x1_max[0]), "x1_min": float(r.x1_min[0]),
            "strobe": r.strobe[0].tolist()}


def bifurcation_point(params: dict, omega: float) -> dict:
    """Section points of the steady states at one forcing frequency from the paper's 6 ICs.

    ``params`` holds model parameters plus optional ``law``, ``n_transient`` (300),
    ``n_points`` (100), ``section_dir`` (0), ``steps_per_period`` (200), ``period_tol``, ``pmax``,
    ``ics``. Returns a dict of plain lists (JSON-serialisable).
    """
    p, opts = _split_params(params)
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
