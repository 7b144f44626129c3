"""Results of the free-play basins: the blocks of cells computed and the classified basin.

:class:`BasinCells` holds one block of rows of a basin grid as integrated (the stroboscopic
record of every cell); :func:`classify` clusters the cells' signatures ``(period, max x1,
min x1)`` into attractors; :class:`BasinResult` is the joined and classified basin with its
labels (:data:`LABEL_NAMES` for the cells that reach no periodic attractor), saved and reopened
through :mod:`fesub.io`. The computation is in :mod:`fesub.nonsmooth.basin`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import ParameterError
from ..io import Result, summary_record
from ._dataset import FREQUENCY, MASS_COORD, POSITION, join_state, split_state, var

__all__ = ["classify", "BasinCells", "BasinResult", "LABEL_NAMES", "NOT_PERIODIC", "DIVERGENT",
           "NOT_COMPUTED"]


#: labels of the cells that reach no periodic attractor
NOT_PERIODIC, DIVERGENT, NOT_COMPUTED = -1, -2, -3
LABEL_NAMES = {NOT_PERIODIC: "not converged (no period found)", DIVERGENT: "divergent",
               NOT_COMPUTED: "not computed (interrupted)"}
_LABEL_DOC = "attractor label (0.. periodic attractors, -1 not converged, -2 divergent, " \
             "-3 not computed)"


def classify(period, x1_max, x1_min, *, cluster_tol=1e-3):
    """Cluster signatures ``(p, max x1, min x1)`` into attractor labels.

    Two periodic cells belong to the same attractor when their periods are equal and their max
    and min of x1 differ by less than ``cluster_tol``. Labels are 0..K-1 ordered by
    (period, -max x1, min x1); -1 = non-periodic, -2 = diverged.

    Parameters
    ----------
    period : array_like (B,) of int
        Period of each cell in forcing periods (-; 0 none, -1 diverged).
    x1_max, x1_min : array_like (B,)
        Extrema of x1 of each cell (m).
    cluster_tol : float
        Clustering tolerance on the extrema (m).

    Returns
    -------
    labels : (B,) int
        Attractor label of each cell (-).
    attractors : list of dict(label, period, x1_max, x1_min, count)
        One per attractor; extrema in m.
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


@dataclass
class BasinCells(Result):
    """Integrated cells of a basin grid (all of it or a block of rows), before classification.

    A basin is computed as blocks of rows (:func:`basin_cells`), each of which can be saved as it
    finishes; :func:`assemble_basin` joins the blocks and classifies the attractors. Each cell is
    integrated independently, so the assembled basin equals one computed in a single run exactly.

    Parameters
    ----------
    W : float
        Forcing frequency [rad/s].
    law : str
        ``'exact'`` or ``'smooth'``.
    x1, x2 : ndarray, shapes (r,), (n2,)
        Initial positions of the rows and columns [m] (zero initial velocities, t0 = 0).
    strobe : ndarray, shape (r, n2, n_record + 1, 4)
        Stroboscopic states ``[x1, y1, x2, y2]`` [m, m/s] after the transient.
    x1_max, x1_min : ndarray, shape (r, n2)
        Extrema of x1 over the recorded periods [m].
    n_used : ndarray, shape (r, n2)
        Transient periods integrated (fewer than ``n_transient`` with an early exit).
    options : dict
        The run: ``W``, ``law``, ``n_transient``, ``n_record``, ``steps_per_period``,
        ``early_exit_tol`` [m, m/s], ``params``.
    """

    kind = "freeplay-basin-cells"

    W: float
    law: str
    x1: np.ndarray
    x2: np.ndarray
    strobe: np.ndarray
    x1_max: np.ndarray
    x1_min: np.ndarray
    n_used: np.ndarray
    options: dict = field(default_factory=dict)

    def to_xarray(self):
        import xarray as xr

        dims = ("x1_0", "x2_0")
        data = {"W": var((), float(self.W), FREQUENCY, "forcing frequency"),
                "x1_max": var(dims, self.x1_max, POSITION, "steady-state max x1"),
                "x1_min": var(dims, self.x1_min, POSITION, "steady-state min x1"),
                "n_used": var(dims, self.n_used, "1", "transient periods integrated"),
                **split_state("strobe", self.strobe, dims + ("record",),
                                  "stroboscopic state after the transient")}
        coords = {"x1_0": ("x1_0", np.asarray(self.x1, float), {"units": "m",
                                                                 "long_name": "initial x1"}),
                  "x2_0": ("x2_0", np.asarray(self.x2, float), {"units": "m",
                                                                 "long_name": "initial x2"}),
                  "record": ("record", np.arange(self.strobe.shape[2]),
                             {"units": "1", "long_name": "forcing periods after the transient"}),
                  "mass": MASS_COORD}
        return xr.Dataset(data, coords, {"law": self.law, "options": self.options})

    @classmethod
    def from_xarray(cls, ds):
        return cls(W=float(ds["W"].values), law=ds.attrs["law"], x1=ds["x1_0"].values,
                   x2=ds["x2_0"].values, strobe=join_state(ds, "strobe"),
                   x1_max=ds["x1_max"].values, x1_min=ds["x1_min"].values,
                   n_used=ds["n_used"].values, options=ds.attrs.get("options", {}))

    def summary(self) -> dict:
        return summary_record(self.kind, {"W": (self.W, FREQUENCY), "law": (self.law, None),
                                          "rows": (len(self.x1), None),
                                          "columns": (len(self.x2), None)}, {})


@dataclass
class BasinResult(Result):
    """Basins of attraction on a grid of initial positions.

    Parameters
    ----------
    W : float
        Forcing frequency [rad/s].
    law : str
        ``'exact'`` | ``'smooth'``.
    x1, x2 : ndarray, shapes (n1,), (n2,)
        Grid of initial positions [m] (zero initial velocities).
    labels : ndarray, shape (n1, n2)
        Attractor label per cell (-1 not converged / non-periodic, -2 diverged, -3 not computed).
    period : ndarray, shape (n1, n2)
        Detected period in forcing periods (0 none, -1 diverged).
    x1_max, x1_min : ndarray, shape (n1, n2)
        Steady-state extrema of x1 [m].
    attractors : list of dict
        ``label, period, x1_max [m], x1_min [m], count, fraction, strobe`` (the stroboscopic
        states ``[x1, y1, x2, y2]`` [m, m/s] of one period of the orbit).
    strobe_last : ndarray, shape (n1, n2, 4)
        Last stroboscopic state of each cell [m, m/s].
    options : dict
        Run options and parameters.
    status : str
        ``'complete'`` or ``'interrupted'`` (cells not computed have label -3).
    """

    kind = "freeplay-basin"

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
    status: str = "complete"

    @property
    def fractions(self) -> dict:
        """label -> fraction of cells (including -1 and -2 when present)."""
        n = self.labels.size
        return {int(l): float(np.sum(self.labels == l)) / n for l in np.unique(self.labels)}

    @property
    def unclassified(self) -> float:
        return float(np.mean(self.labels < 0))

    def same_attractor(self, other: "BasinResult", tol: float = 1e-3) -> np.ndarray:
        """Cell-wise: both runs reach attractors with equal period and max/min x1 within tol [m]."""
        if self.labels.shape != other.labels.shape:
            raise ParameterError("basins on different grids cannot be compared")
        return ((self.period == other.period) & (self.period > 0)
                & (np.abs(self.x1_max - other.x1_max) < tol)
                & (np.abs(self.x1_min - other.x1_min) < tol))

    def agreement(self, other: "BasinResult", tol: float = 1e-3) -> float:
        """Fraction of cells whose attractors agree (see :meth:`same_attractor`)."""
        return float(np.mean(self.same_attractor(other, tol)))

    def attractor_name(self, label: int) -> str:
        """Words for a label: ``'period-1 orbit, x1 in [-0.084, 0.116] m'``, ``'divergent'``, ..."""
        label = int(label)
        if label in LABEL_NAMES:
            return LABEL_NAMES[label]
        a = next(a for a in self.attractors if a["label"] == label)
        return (f"period-{a['period']} orbit, x1 from {a['x1_min']:.4g} to {a['x1_max']:.4g} m")

    def to_xarray(self):
        import xarray as xr

        dims = ("x1_0", "x2_0")
        K = len(self.attractors)
        pmax = max([len(a.get("strobe", [])) for a in self.attractors], default=0)
        astrobe = np.full((K, pmax, 4), np.nan)
        for i, a in enumerate(self.attractors):
            s = np.asarray(a.get("strobe", []), float).reshape(-1, 4)
            astrobe[i, :len(s)] = s
        data = {"W": var((), float(self.W), FREQUENCY, "forcing frequency"),
                "labels": var(dims, self.labels, "1", _LABEL_DOC),
                "period": var(dims, self.period, "1",
                                  "period in forcing periods (0 none, -1 diverged)"),
                "x1_max": var(dims, self.x1_max, POSITION, "steady-state max x1"),
                "x1_min": var(dims, self.x1_min, POSITION, "steady-state min x1"),
                "attractor_period": var(("attractor",), np.array(
                    [a["period"] for a in self.attractors], np.int64), "1",
                    "period in forcing periods"),
                "attractor_x1_max": var(("attractor",), np.array(
                    [a["x1_max"] for a in self.attractors], float), POSITION,
                    "mean max x1 over the basin"),
                "attractor_x1_min": var(("attractor",), np.array(
                    [a["x1_min"] for a in self.attractors], float), POSITION,
                    "mean min x1 over the basin"),
                "attractor_count": var(("attractor",), np.array(
                    [a["count"] for a in self.attractors], np.int64), "1", "cells"),
                "attractor_fraction": var(("attractor",), np.array(
                    [a.get("fraction", np.nan) for a in self.attractors], float), "1",
                    "fraction of the grid"),
                **split_state("attractor_strobe", astrobe, ("attractor", "strobe_point"),
                                  "stroboscopic states of one orbit period (NaN-padded)")}
        if self.strobe_last is not None:
            data.update(split_state("last", self.strobe_last, dims,
                                        "last stroboscopic state"))
        coords = {"x1_0": ("x1_0", np.asarray(self.x1, float), {"units": "m",
                                                                 "long_name": "initial x1"}),
                  "x2_0": ("x2_0", np.asarray(self.x2, float), {"units": "m",
                                                                 "long_name": "initial x2"}),
                  "attractor": ("attractor", np.array([a["label"] for a in self.attractors],
                                                      np.int64), {"units": "1",
                                                                  "long_name": "attractor label"}),
                  "strobe_point": ("strobe_point", np.arange(pmax), {"units": "1"}),
                  "mass": MASS_COORD}
        attrs = {"law": self.law, "status": self.status, "options": self.options,
                 "attractor_keys": [list(a) for a in self.attractors]}
        return xr.Dataset(data, coords, attrs)

    @classmethod
    def from_xarray(cls, ds):
        keys = ds.attrs.get("attractor_keys", [])
        astrobe = join_state(ds, "attractor_strobe")
        attractors = []
        for i, lab in enumerate(ds["attractor"].values):
            p = int(ds["attractor_period"].values[i])
            full = {"label": int(lab), "period": p,
                    "x1_max": float(ds["attractor_x1_max"].values[i]),
                    "x1_min": float(ds["attractor_x1_min"].values[i]),
                    "count": int(ds["attractor_count"].values[i]),
                    "fraction": float(ds["attractor_fraction"].values[i]),
                    "strobe": astrobe[i, :p].tolist()}
            attractors.append({k: full[k] for k in keys[i]})
        last = join_state(ds, "last") if "last_position" in ds else None
        return cls(W=float(ds["W"].values), law=ds.attrs["law"], x1=ds["x1_0"].values,
                   x2=ds["x2_0"].values, labels=ds["labels"].values, period=ds["period"].values,
                   x1_max=ds["x1_max"].values, x1_min=ds["x1_min"].values,
                   attractors=attractors, strobe_last=last, options=ds.attrs.get("options", {}),
                   status=ds.attrs.get("status", "complete"))

    def summary(self) -> dict:
        o = self.options
        par = {"W": (self.W, FREQUENCY), "law": (self.law, None),
               "grid": ([len(self.x1), len(self.x2)], None),
               "x1_range": (o.get("x1_range"), POSITION),
               "x2_range": (o.get("x2_range"), POSITION),
               "n_transient": (o.get("n_transient"), None),
               "steps_per_period": (o.get("steps_per_period"), None)}
        res = {"attractors": (len(self.attractors), None),
               "unclassified_fraction": (self.unclassified, "1"), "status": (self.status, None)}
        det = {"attractors": [{"name": self.attractor_name(a["label"]), "period": a["period"],
                               "x1_max_m": a["x1_max"], "x1_min_m": a["x1_min"],
                               "fraction": a.get("fraction")} for a in self.attractors]}
        return summary_record(self.kind, par, res, details=det)
