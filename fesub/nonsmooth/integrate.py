"""Adaptive reference integrators (SciPy ``solve_ivp``) for both free-play laws.

* :func:`flow` -- one trajectory of the 4-D non-autonomous form from ``t0`` to ``t1``:

  - exact law: event-driven. Regions ``s in {-1, 0, +1}`` each have a polynomial field. Events use
    region-specific directions (region 0: ``x1 - a`` upward and ``x1 + a`` downward; region
    ``s = +-1``: ``x1 - s a`` with direction ``-s``) so that nothing re-triggers at the restart
    point. At an event the integration stops, ``x1`` is set to the boundary exactly, the region
    switches and the integration restarts; no reset map is needed (the law is C0) and the
    variational matrix continues unchanged (saltation = identity). An extremum of ``x1`` within
    ``graze_tol`` of ``+-a`` is reported as a grazing.
  - smooth law: a single ``solve_ivp`` run.

  Optionally integrates the variational equations ``Phi' = J Phi`` (monodromy) and the
  sensitivity to the forcing frequency ``s' = J s + df/dW``.

Defaults follow spec 3.2 (rtol = atol = 1e-9 for the event path, DOP853).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.integrate import solve_ivp

from ..errors import ConvergenceError, ParameterError, check_positive
from ..io import Result, summary_record
from ._dataset import MASS_COORD, POSITION, TIME, join_state, split_state, var
from .system import TwoMassFreePlay

__all__ = ["FlowResult", "flow", "make_system", "region_of"]


def make_system(params=None, law="exact") -> TwoMassFreePlay:
    if isinstance(params, TwoMassFreePlay):
        return params
    return TwoMassFreePlay(params, law)


def region_of(x1: float, a: float, y1: float = 0.0) -> int:
    """Region of ``x1``; on a boundary the velocity decides where the motion goes."""
    if x1 > a or (x1 == a and y1 > 0):
        return 1
    if x1 < -a or (x1 == -a and y1 < 0):
        return -1
    return 0


def _expit_neg(y):
    """1/(1+exp(y)) without overflow."""
    if y >= 0:
        e = math.exp(-y)
        return e / (1.0 + e)
    return 1.0 / (1.0 + math.exp(y))


def _force_funcs(sys: TwoMassFreePlay, region):
    p = sys.p
    kp, a = p.kp, p.a
    if sys.exact:
        if region == 0:
            return (lambda x: 0.0), (lambda x: 0.0)
        s = float(region)
        return (lambda x: kp * (x - s * a)), (lambda x: kp)
    law = sys.law
    if law.is_logistic:
        d = law.delta

        def F(x):
            z1, z2 = a + x, a - x
            return kp * (z1 * _expit_neg(d * z1) - z2 * _expit_neg(d * z2))

        def dF(x):
            z1, z2 = a + x, a - x
            e1, e2 = _expit_neg(d * z1), _expit_neg(d * z2)
            return kp * (e1 - d * z1 * e1 * (1 - e1) + e2 - d * z2 * e2 * (1 - e2))

        return F, dF
    return (lambda x: float(law.force(x))), (lambda x: float(law.stiffness(x)))


def _field(sys: TwoMassFreePlay, W, region, variational, sens_W):
    p = sys.p
    m, c, k, mu, cd, kd, mud, Q1, Q2 = p.m, p.c, p.k, p.mu, p.cd, p.kd, p.mud, p.Q1, p.Q2
    F, dF = _force_funcs(sys, region)
    nstate = 4 + (16 if variational else 0) + (4 if sens_W else 0)

    def f(t, Y):
        x1, y1, x2, y2 = Y[0], Y[1], Y[2], Y[3]
        r, rv = x2 - x1, y2 - y1
        wt = W * t
        cw = math.cos(wt)
        coup = kd * r + mud * r * r * r + cd * rv
        out = np.empty(nstate)
        out[0] = y1
        out[1] = (Q1 * cw - c * y1 - k * x1 - mu * x1 * x1 * x1 + coup - F(x1)) / m
        out[2] = y2
        out[3] = (Q2 * cw - c * y2 - k * x2 - mu * x2 * x2 * x2 - coup) / m
        if nstate > 4:
            kc = kd + 3 * mud * r * r
            J = np.array([[0.0, 1.0, 0.0, 0.0],
                          [(-k - 3 * mu * x1 * x1 - kc - dF(x1)) / m, (-c - cd) / m, kc / m, cd / m],
                          [0.0, 0.0, 0.0, 1.0],
                          [kc / m, cd / m, (-k - 3 * mu * x2 * x2 - kc) / m, (-c - cd) / m]])
            i = 4
            if variational:
                out[4:20] = (J @ Y[4:20].reshape(4, 4)).ravel()
                i = 20
            if sens_W:
                sw = -math.sin(wt) * t
                out[i:i + 4] = J @ Y[i:i + 4]
                out[i + 1] += Q1 * sw / m
                out[i + 3] += Q2 * sw / m
        return out

    return f


@dataclass
class FlowResult(Result):
    """Result of :func:`flow`.

    Parameters
    ----------
    z : ndarray, shape (4,)
        State ``[x1, y1, x2, y2]`` [m, m/s] at t1.
    Phi : ndarray, shape (4, 4), or None
        d z(t1) / d z(t0) (state units: blocks of 1, s and 1/s).
    dzdW : ndarray, shape (4,), or None
        d z(t1) / dW at fixed t1 [m/(rad/s), m/s/(rad/s)].
    switches : list of (t [s], boundary [m], new_region)
        Switching events of the exact law, in time order.
    grazings : list of float
        x1 [m] of the grazing extrema.
    x1_max, x1_min : float
        Extrema of x1 over [t0, t1] [m] (event-located).
    t, Z : ndarray or None
        Sampled output [s], [m, m/s] when ``t_eval`` was given.
    nfev : int
        Right-hand-side evaluations.
    """

    kind = "freeplay-flow"

    z: np.ndarray
    Phi: np.ndarray | None = None
    dzdW: np.ndarray | None = None
    switches: list = field(default_factory=list)
    grazings: list = field(default_factory=list)
    x1_max: float = -np.inf
    x1_min: float = np.inf
    t: np.ndarray | None = None
    Z: np.ndarray | None = None
    nfev: int = 0

    def to_xarray(self):
        import xarray as xr

        sw = np.array([(t, b, s) for t, b, s in self.switches], float).reshape(-1, 3)
        data = {**split_state("z", self.z, (), "state at t1"),
                "switch_t": var(("switch",), sw[:, 0], TIME, "switching time"),
                "switch_boundary": var(("switch",), sw[:, 1], POSITION,
                                           "gap edge crossed (x1)"),
                "switch_region": var(("switch",), sw[:, 2].astype(np.int64), "1",
                                         "region entered (-1, 0, +1)"),
                "grazings": var(("grazing",), np.asarray(self.grazings, float).reshape(-1),
                                    POSITION, "x1 at grazing extrema"),
                "x1_max": var((), float(self.x1_max), POSITION, "max x1"),
                "x1_min": var((), float(self.x1_min), POSITION, "min x1")}
        coords = {"mass": MASS_COORD}
        if self.Phi is not None:
            data["Phi"] = var(("state", "state0"), np.asarray(self.Phi, float),
                                  "mixed: d state / d state0, state = [x1 m, y1 m/s, x2 m, "
                                  "y2 m/s]", "state transition matrix")
            coords["state"] = ("state", ["x1", "y1", "x2", "y2"], {"units": "1"})
            coords["state0"] = ("state0", ["x1", "y1", "x2", "y2"], {"units": "1"})
        if self.dzdW is not None:
            data.update(split_state("dzdW", self.dzdW, (), "d state / dW per rad/s"))
            for k in ("dzdW_position", "dzdW_velocity"):
                data[k].attrs["units"] += "/(rad/s)"
        if self.t is not None:
            coords["t"] = ("t", np.asarray(self.t, float), {"units": TIME})
            data.update(split_state("Z", self.Z, ("t",), "sampled state"))
        return xr.Dataset(data, coords, {"nfev": int(self.nfev)})

    @classmethod
    def from_xarray(cls, ds):
        sw = [(float(t), float(b), int(s)) for t, b, s in
              zip(ds["switch_t"].values, ds["switch_boundary"].values, ds["switch_region"].values)]
        return cls(z=join_state(ds, "z"),
                   Phi=ds["Phi"].values if "Phi" in ds else None,
                   dzdW=join_state(ds, "dzdW") if "dzdW_position" in ds else None,
                   switches=sw, grazings=[float(g) for g in ds["grazings"].values],
                   x1_max=float(ds["x1_max"].values), x1_min=float(ds["x1_min"].values),
                   t=ds["t"].values if "t" in ds.coords else None,
                   Z=join_state(ds, "Z") if "Z_position" in ds else None,
                   nfev=int(ds.attrs["nfev"]))

    def summary(self) -> dict:
        return summary_record(self.kind, {}, {"x1_max": (float(self.x1_max), POSITION),
                                              "x1_min": (float(self.x1_min), POSITION),
                                              "switches": (len(self.switches), None)})


def _switch_events(s, a):
    """Terminal events of the exact law in region ``s`` (0 inside the gap ``|x1| < a``, +-1 in
    contact): leaving the gap at ``x1 = +-a``, or coming back to it at ``x1 = s a``."""
    if s == 0:
        def e_up(t, Yv):
            return Yv[0] - a
        e_up.terminal, e_up.direction = True, 1

        def e_dn(t, Yv):
            return Yv[0] + a
        e_dn.terminal, e_dn.direction = True, -1
        return [e_up, e_dn]
    b = s * a

    def e_back(t, Yv, b=b):
        return Yv[0] - b
    e_back.terminal, e_back.direction = True, -s
    return [e_back]


def flow(sys, z0, t0, t1, W, *, variational=False, sens_W=False, rtol=1e-9, atol=1e-9,
         max_step=np.inf, method="DOP853", t_eval=None, graze_tol=1e-6, max_switches=1_000_000):
    """Integrate the 4-D free-play system from ``t0`` to ``t1`` (adaptive, event-driven if exact).

    Parameters
    ----------
    sys : TwoMassFreePlay
    z0 : (4,) array -- initial state [x1, y1, x2, y2]
    t0, t1 : float -- non-dimensional times, t1 > t0
    W : float -- forcing frequency (non-dimensional), > 0
    variational, sens_W : bool -- integrate Phi (monodromy) and dz/dW
    rtol, atol, max_step, method : solve_ivp options
    t_eval : array, optional -- output times
    graze_tol : float -- |x1 -+ a| at an extremum below which a grazing is reported

    Returns
    -------
    FlowResult
    """
    sys = make_system(sys)
    W = check_positive("W (forcing frequency)", W)
    z0 = np.asarray(z0, dtype=float)
    if z0.shape != (4,) or not np.all(np.isfinite(z0)):
        raise ParameterError(f"z0 must be a finite array of shape (4,), got {z0!r}")
    if not t1 > t0:
        raise ParameterError(f"t1 must be > t0, got t0={t0}, t1={t1}")
    a = sys.p.a
    Y = [z0]
    if variational:
        Y.append(np.eye(4).ravel())
    if sens_W:
        Y.append(np.zeros(4))
    Y = np.concatenate(Y)
    res = FlowResult(z=z0.copy())
    ts, zs = [], []

    def ext_event(t, Yv):
        return Yv[1]

    t = float(t0)
    s = region_of(z0[0], a, z0[1]) if sys.exact else 0
    nsw = 0
    while True:
        f = _field(sys, W, s, variational, sens_W)
        events = [ext_event] + (_switch_events(s, a) if sys.exact else [])
        te = None
        if t_eval is not None:
            te = np.asarray(t_eval, float)
            te = te[(te >= t) & (te <= t1)]
        sol = solve_ivp(f, (t, t1), Y, method=method, rtol=rtol, atol=atol, max_step=max_step,
                        events=events, t_eval=te)
        res.nfev += sol.nfev
        if sol.status == -1:
            raise ConvergenceError(f"solve_ivp failed at t={sol.t[-1]:.6g}: {sol.message}")
        # a segment between two switches may hold none of the output times: SciPy then returns
        # empty lists, and the segment's start state stands for its sampled end points
        sampled = np.size(sol.t) > 0
        if te is not None and sampled:
            ts.append(sol.t)
            zs.append(sol.y[:4].T)
        # extrema of x1: sampled end points and located y1 = 0 events
        xs = [sol.y[0, 0], sol.y[0, -1]] if sampled else [Y[0]]
        for ye in sol.y_events[0]:
            xs.append(ye[0])
            if sys.exact and min(abs(ye[0] - a), abs(ye[0] + a)) < graze_tol:
                res.grazings.append((None, ye[0]))
        res.x1_max = max(res.x1_max, max(xs))
        res.x1_min = min(res.x1_min, min(xs))
        if sol.status == 1 and sys.exact:
            # which terminal event fired
            if s == 0:
                if sol.t_events[1].size:
                    tev, Yev, b, s_new = sol.t_events[1][0], sol.y_events[1][0], a, 1
                else:
                    tev, Yev, b, s_new = sol.t_events[2][0], sol.y_events[2][0], -a, -1
            else:
                tev, Yev, b, s_new = sol.t_events[1][0], sol.y_events[1][0], s * a, 0
            Y = np.array(Yev, dtype=float)
            Y[0] = b
            t = float(tev)
            res.switches.append((t, b, s_new))
            s = s_new
            nsw += 1
            if nsw > max_switches:
                raise ConvergenceError(f"more than {max_switches} switches before t1 (Zeno?)")
            if t >= t1:
                break
            continue
        Y = sol.y[:, -1]
        break
    res.z = Y[:4].copy()
    i = 4
    if variational:
        res.Phi = Y[4:20].reshape(4, 4).copy()
        i = 20
    if sens_W:
        res.dzdW = Y[i:i + 4].copy()
    if ts:
        res.t = np.concatenate(ts)
        res.Z = np.concatenate(zs)
    # grazing times are not needed by callers; keep (x1) only
    res.grazings = [g[1] for g in res.grazings]
    return res
