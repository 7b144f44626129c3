"""Continuation of periodic orbits in the forcing frequency, and backbones (NNM families).

Periodic orbits are continued with the project's pseudo-arclength driver
(:func:`fesub.continuation.continue_branch`) on the shooting residual::

    R(z, W) = P_W(z) - z,   R_z = M - I,   R_W = dP/dW

where ``P_W`` is the flow over ``n 2 pi / W`` from t = 0 and ``dP/dW`` includes the moving end time
(sensitivity equations, no finite differences). One code path serves both laws: the exact law goes
through the event-driven flow (saltation = identity, no re-segmentation at grazing).

Test functions (sign changes located by the driver):

* ``'fold'`` -- built into the driver (W component of the tangent);
* ``'PD'`` -- det(M + I) (a multiplier crosses -1);
* ``'NS'`` -- det(M (.) M - I), bialternate product (a complex pair crosses |lam| = 1);
* ``'BP'`` -- the driver's branch-point test: the determinant of the augmented Jacobian
  ``[M - I, dP/dW; t^T]`` changes sign (a real multiplier crosses +1 while the branch goes on in
  W: branch point, e.g. symmetry breaking). Unlike ``det(M - I)``, which also changes sign at
  every fold, it keeps its sign through a regular fold;
* ``'GR+'``, ``'GR-'`` -- grazing: ``max x1 - a`` and ``-min x1 - a`` change sign;
* ``'stability'`` -- max |multiplier| crosses 1.

Backbones: the conservative (c = cd = 0, Q = 0) NNM family, i.e. the unfolding of the unforced,
undamped Hopf point, by continuation in the amplitude ``A = x1(0)``: the orbit starts at rest at
``(A, 0, x2, 0)`` and must be at rest again at the half period ``tau`` (time reversibility), so the
unknowns are ``(x2(0), tau)`` and the residual is ``(y1(tau), y2(tau))``.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from .. import continuation as _cont
from ..errors import ParameterError, check_positive
from ..io import Result, summary_record
from ._dataset import (FREQUENCY, MASS_COORD, POSITION, TIME, branch_from, branch_vars, join_state,
                       split_state, var)
from .integrate import flow, make_system, region_of
from .orbits import PO_ATOL, PO_RTOL, Orbit, floquet_test_functions, poincare_map, sorted_multipliers

__all__ = ["ShootingProblem", "continue_orbit", "switch_orbit", "event_multipliers", "branch_summary",
           "orbit_backbone", "EVENT_NAMES", "OrbitBranch", "orbit_branch", "OrbitBackbone"]

EVENT_NAMES = ("PD", "NS", "BP", "GR+", "GR-")


class ShootingProblem:
    """Residual, Jacobian and test functions of the shooting problem, with a small cache.

    Every evaluation integrates the state, the variational equations and the W-sensitivity once;
    results are cached by ``(z, W)`` so that residual, Jacobian and test functions at the same
    point share one integration.
    """

    def __init__(self, sys, n_periods=1, rtol=PO_RTOL, atol=PO_ATOL, cache_size=16):
        self.sys = make_system(sys)
        self.n = int(n_periods)
        if self.n < 1:
            raise ParameterError(f"n_periods must be >= 1, got {n_periods}")
        self.rtol, self.atol = rtol, atol
        self._cache = OrderedDict()
        self._size = cache_size
        self.n_integrations = 0

    def _eval(self, z, W):
        z = np.asarray(z, float)
        key = (z.tobytes(), float(W))
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        if not W > 0:
            raise ParameterError(f"W must be > 0 along the branch, got {W}")
        P, M, dPdW, fr = poincare_map(self.sys, z, W, self.n, sens_W=True, rtol=self.rtol,
                                      atol=self.atol)
        self.n_integrations += 1
        out = (P, M, dPdW, fr)
        self._cache[key] = out
        if len(self._cache) > self._size:
            self._cache.popitem(last=False)
        return out

    def residual(self, z, W):
        return self._eval(z, W)[0] - z

    def jacobian(self, z, W):
        P, M, dPdW, _ = self._eval(z, W)
        return M - np.eye(4), dPdW

    def monodromy(self, z, W):
        return self._eval(z, W)[1]

    def events(self) -> dict:
        a = self.sys.p.a

        def pd(z, W):
            return floquet_test_functions(self.monodromy(z, W))["PD"]

        def ns(z, W):
            return floquet_test_functions(self.monodromy(z, W))["NS"]

        def lp(z, W):
            return floquet_test_functions(self.monodromy(z, W))["LP"]

        def grp(z, W):
            return self._eval(z, W)[3].x1_max - a

        def grm(z, W):
            return -self._eval(z, W)[3].x1_min - a

        return {"PD": pd, "NS": ns, "BP": lp, "GR+": grp, "GR-": grm}

    def stable(self, z, W) -> bool:
        return bool(np.max(np.abs(np.linalg.eigvals(self.monodromy(z, W)))) < 1.0)

    def orbit(self, z, W) -> Orbit:
        P, M, _, fr = self._eval(z, W)
        lam = sorted_multipliers(M)
        return Orbit(z0=np.asarray(z, float).copy(), W=float(W), n_periods=self.n, monodromy=M,
                     floquet=lam, stable=bool(np.max(np.abs(lam)) < 1), x1_max=fr.x1_max,
                     x1_min=fr.x1_min, peak=max(fr.x1_max, -fr.x1_min),
                     n_switch=len(fr.switches), law=self.sys.law_name,
                     residual=float(np.max(np.abs(P - z))))


def continue_orbit(sys, z0, W0, W_range, *, n_periods=1, ds=0.02, ds_min=1e-6, ds_max=0.05,
                   max_steps=200, direction=+1, detect=("PD", "NS", "BP", "GR+", "GR-"), tol=1e-10,
                   progress=True, rtol=PO_RTOL, atol=PO_ATOL):
    """Continue a periodic orbit in the forcing frequency.

    Parameters
    ----------
    sys : TwoMassFreePlay (or params for the exact law)
    z0 : (4,) orbit state at t = 0 (corrected by Newton at ``W0`` first)
    W0 : starting frequency; W_range : (W_lo, W_hi) stop bounds
    n_periods : orbit period in forcing periods (n > 1 for isolas / subharmonics)
    ds, ds_min, ds_max, max_steps, direction, tol : driver options
    detect : names among ``EVENT_NAMES`` to locate

    Returns
    -------
    branch : fesub.continuation.Branch  (x = orbit states at t = 0, lam = W, stable = max|mult| < 1)
    problem : ShootingProblem (use ``problem.orbit(x, W)`` for details of a point)
    """
    check_positive("W0 (forcing frequency)", W0)
    try:
        lo, hi = (float(v) for v in W_range)
    except (TypeError, ValueError):
        raise ParameterError(f"W_range must be a pair (lo, hi), got {W_range!r}") from None
    if not (0 < lo < hi):
        raise ParameterError(f"W_range must satisfy 0 < lo < hi, got {W_range!r}")
    unknown = set(detect) - set(EVENT_NAMES)
    if unknown:
        raise ParameterError(f"unknown test function(s) {sorted(unknown)}; allowed {EVENT_NAMES}")
    prob = ShootingProblem(sys, n_periods, rtol, atol)
    ev = {k: v for k, v in prob.events().items() if k in detect and k != "BP"}
    br = _cont.continue_branch(prob.residual, prob.jacobian, np.asarray(z0, float), float(W0),
                               ds=ds, ds_min=ds_min, ds_max=ds_max, lam_range=(lo, hi),
                               max_steps=max_steps, tol=tol, direction=direction, events=ev,
                               stability=prob.stable, progress=progress,
                               branch_points="BP" in detect)
    for e in br.events:  # the driver's arrays as lists: the orbit files keep events as JSON
        e.kind = "BP" if e.kind == "branch_point" else e.kind
        e.info = {k: v.tolist() if isinstance(v, np.ndarray) else v for k, v in e.info.items()}
    for e in br.events:  # attach multipliers; a neutral saddle (real lam_i lam_j = 1) is no NS
        try:
            lam = sorted_multipliers(prob.monodromy(e.x, e.lam))
        except Exception:  # noqa: BLE001 - a failed re-evaluation only loses the extra info
            continue
        e.info["multipliers_re"] = lam.real.tolist()  # JSON-friendly (Branch.save)
        e.info["multipliers_im"] = lam.imag.tolist()
        if e.kind == "NS":
            cpx = lam[np.abs(lam.imag) > 1e-9]
            if cpx.size == 0 or np.min(np.abs(np.abs(cpx) - 1.0)) > 1e-3:
                e.kind = "NS-neutral-saddle"
    return br, prob


def switch_orbit(prob: "ShootingProblem", event, W_range, *, side=+1, ds=0.02, ds_max=0.05,
                 max_steps=200, tol=1e-10, progress=False):
    """Continue the other family of orbits through a branch point ``'BP'`` of a branch of
    :func:`continue_orbit` (e.g. the asymmetric orbits born where a symmetric one breaks its
    symmetry), with the shared engine's branch switching
    (:func:`fesub.continuation.switch_branch`).

    Parameters
    ----------
    prob : ShootingProblem
        The problem :func:`continue_orbit` returned with the branch.
    event : Event
        One of the branch's ``'BP'`` events.
    W_range : (float, float)
        Bounds of the forcing frequency (rad/s).
    side : {+1, -1}
        Which of the two halves of the other family (at a symmetry-breaking pitchfork, the two
        mirror images).
    ds, ds_max, max_steps, tol : driver options

    Returns
    -------
    fesub.continuation.Branch
        Orbit states at t = 0 over W, with stability and the bifurcation events of
        :func:`continue_orbit`.
    """
    lo, hi = (float(v) for v in W_range)
    if not (0 < lo < hi):
        raise ParameterError(f"W_range must satisfy 0 < lo < hi, got {W_range!r}")
    ev = {k: v for k, v in prob.events().items() if k != "BP"}
    return _cont.switch_branch(prob.residual, prob.jacobian, event, ds=ds, side=side,
                               ds_max=ds_max, lam_range=(lo, hi), max_steps=max_steps, tol=tol,
                               events=ev, stability=prob.stable, progress=progress)


def event_multipliers(event) -> np.ndarray:
    """Floquet multipliers stored with an event by :func:`continue_orbit` (complex array)."""
    return np.asarray(event.info["multipliers_re"]) + 1j * np.asarray(event.info["multipliers_im"])


def branch_summary(branch, prob: ShootingProblem) -> dict:
    """Per-point arrays of a branch: W, x1_max, x1_min, peak, max |multiplier|, stable."""
    rows = [prob.orbit(x, W) for x, W in zip(branch.x, branch.lam)]
    return {"W": np.array([o.W for o in rows]), "x1_max": np.array([o.x1_max for o in rows]),
            "x1_min": np.array([o.x1_min for o in rows]), "peak": np.array([o.peak for o in rows]),
            "max_multiplier": np.array([o.max_multiplier for o in rows]),
            "stable": np.array([o.stable for o in rows])}


class _ContinuedResult(Result):
    """What the results holding a continuation ``branch`` share: status and the dataset frame."""

    @property
    def status(self) -> str:
        """``'interrupted'`` when Ctrl-C stopped the continuation, else ``'complete'``."""
        return "interrupted" if self.branch.stop_reason == "interrupted" else "complete"

    def _dataset(self, data: dict, coords: dict, attrs: dict):
        import xarray as xr

        bdata, battrs = branch_vars(self.branch, "point")
        coords = {"point": ("point", np.arange(len(self.branch.lam)), {"units": "1"}), **coords}
        return xr.Dataset({**bdata, **data}, coords, {**battrs, **attrs})


@dataclass
class OrbitBranch(_ContinuedResult):
    """A branch of periodic orbits continued in the forcing frequency, with the orbit data and
    Floquet multipliers of every point.

    Parameters
    ----------
    branch : fesub.continuation.Branch
        States ``x`` [m, m/s] at t = 0, ``lam`` = forcing frequency W [rad/s], events (PD, NS,
        BP, grazings, folds) with their multipliers.
    law : str
        'exact' or 'smooth'.
    n_periods : int
        Orbit period in forcing periods.
    direction : int
        +1 continued towards higher W first, -1 towards lower W.
    x1_max, x1_min, peak : ndarray, shape (npts,)
        Extrema of x1 and ``max |x1|`` of each orbit [m].
    multipliers : ndarray, shape (npts, 4)
        Floquet multipliers [-] of each orbit (decreasing modulus).
    stable : ndarray of bool, shape (npts,)
        ``max |multiplier| < 1``.
    """

    kind = "freeplay-branch"

    branch: object
    law: str
    n_periods: int
    direction: int
    x1_max: np.ndarray
    x1_min: np.ndarray
    peak: np.ndarray
    multipliers: np.ndarray
    stable: np.ndarray

    @property
    def W(self) -> np.ndarray:
        """Forcing frequency of each point [rad/s]."""
        return self.branch.lam

    @property
    def events(self) -> list:
        return self.branch.events

    @property
    def max_multiplier(self) -> np.ndarray:
        return np.max(np.abs(self.multipliers), axis=1) if len(self.multipliers) else np.zeros(0)

    @property
    def label(self) -> str:
        return f"{self.law}, {'up' if self.direction > 0 else 'down'} from W0"

    def to_xarray(self):
        br = self.branch
        d = ("point",)
        data = {"W": var(d, np.asarray(br.lam, float), FREQUENCY, "forcing frequency"),
                **split_state("x", np.asarray(br.x, float).reshape(-1, 4), d,
                                  "orbit state at t = 0"),
                "x1_max": var(d, self.x1_max, POSITION, "max x1 of the orbit"),
                "x1_min": var(d, self.x1_min, POSITION, "min x1 of the orbit"),
                "peak": var(d, self.peak, POSITION, "max |x1| of the orbit"),
                "multipliers": var(d + ("multiplier",),
                                       np.asarray(self.multipliers, complex), "1",
                                       "Floquet multipliers"),
                "orbit_stable": var(d, np.asarray(self.stable, np.int8), "1",
                                        "1 = stable orbit (max |multiplier| < 1)")}
        coords = {"mass": MASS_COORD,
                  "multiplier": ("multiplier", np.arange(4), {"units": "1"})}
        return self._dataset(data, coords, dict(law=self.law, n_periods=int(self.n_periods),
                                                direction=int(self.direction)))

    @classmethod
    def from_xarray(cls, ds):
        br = branch_from(ds, join_state(ds, "x"), ds["W"].values)
        a = ds.attrs
        return cls(branch=br, law=a["law"], n_periods=int(a["n_periods"]),
                   direction=int(a["direction"]), x1_max=ds["x1_max"].values,
                   x1_min=ds["x1_min"].values, peak=ds["peak"].values,
                   multipliers=ds["multipliers"].values,
                   stable=ds["orbit_stable"].values.astype(bool))

    def summary(self) -> dict:
        W = np.asarray(self.W)
        par = {"law": (self.law, None), "n_periods": (self.n_periods, None),
               "direction": (self.direction, None)}
        res = {"points": (len(W), None),
               "W_reached": ([float(W.min()), float(W.max())] if W.size else None, FREQUENCY),
               "stop_reason": (self.branch.stop_reason, None)}
        det = {"events": [{"kind": e.kind, "W_rad_per_s": float(e.lam)} for e in self.events]}
        return summary_record(self.kind, par, res, details=det)


def orbit_branch(branch, prob: ShootingProblem, direction: int = 1) -> OrbitBranch:
    """The :class:`OrbitBranch` of a branch from :func:`continue_orbit` (orbit data and Floquet
    multipliers of every point, from the cached shooting evaluations).

    Parameters
    ----------
    branch : fesub.continuation.Branch
        Branch from :func:`continue_orbit` (states [m, m/s], ``lam`` = W in rad/s).
    prob : ShootingProblem
        The shooting problem it was continued with.
    direction : int
        +1 continued towards higher W first, -1 towards lower W (-).

    Returns
    -------
    OrbitBranch
        Extrema in m, multipliers dimensionless.
    """
    rows = [prob.orbit(x, W) for x, W in zip(branch.x, branch.lam)]
    return OrbitBranch(branch=branch, law=prob.sys.law_name, n_periods=prob.n,
                       direction=int(direction), x1_max=np.array([o.x1_max for o in rows]),
                       x1_min=np.array([o.x1_min for o in rows]),
                       peak=np.array([o.peak for o in rows]),
                       multipliers=np.array([o.floquet for o in rows]).reshape(-1, 4),
                       stable=np.array([o.stable for o in rows], dtype=bool))


# ---------------------------------------------------------------- backbones ----------------------

@dataclass
class OrbitBackbone(_ContinuedResult):
    """Backbone of periodic orbits (conservative NNM family, by shooting): amplitude ``A = x1``
    at rest [m], ``x2`` at rest [m], frequency [rad/s]; ``branch`` is the continuation branch
    (``x = (x2, half period [s])``, ``lam = A``).

    Parameters
    ----------
    A : ndarray, shape (npts,)
        Amplitude ``x1`` at rest (m).
    x2 : ndarray, shape (npts,)
        ``x2`` at rest (m).
    frequency : ndarray, shape (npts,)
        Frequency of the orbit (rad/s).
    branch : fesub.continuation.Branch
        The continuation branch.
    mode : int
        1 (in phase) or 2 (anti-phase).
    law : str
        ``'exact'`` or ``'smooth'``.
    """

    kind = "freeplay-backbone"

    A: np.ndarray
    x2: np.ndarray
    frequency: np.ndarray
    branch: object
    mode: int
    law: str = ""

    def to_xarray(self):
        br = self.branch
        d = ("point",)
        data = {"A": var(d, np.asarray(self.A, float), POSITION, "amplitude x1 at rest"),
                "x2": var(d, np.asarray(self.x2, float), POSITION,
                              "x2 at rest (same instant)"),
                "frequency": var(d, np.asarray(self.frequency, float), FREQUENCY,
                                     "frequency of the free periodic motion"),
                "branch_A": var(d, np.asarray(br.lam, float), POSITION,
                                    "continuation parameter"),
                "branch_x2": var(d, np.asarray(br.x[:, 0], float), POSITION,
                                     "continuation state: x2 at rest"),
                "half_period": var(d, np.asarray(br.x[:, 1], float), TIME,
                                       "continuation state: half period")}
        return self._dataset(data, {}, dict(mode=int(self.mode), law=self.law))

    @classmethod
    def from_xarray(cls, ds):
        x = np.stack([ds["branch_x2"].values, ds["half_period"].values], axis=1)
        br = branch_from(ds, x, ds["branch_A"].values)
        return cls(A=ds["A"].values, x2=ds["x2"].values, frequency=ds["frequency"].values,
                   branch=br, mode=int(ds.attrs["mode"]), law=ds.attrs.get("law", ""))

    def summary(self) -> dict:
        f = np.asarray(self.frequency)
        par = {"mode": (self.mode, None), "law": (self.law, None),
               "A_range": ([float(self.A[0]), float(self.A[-1])] if len(self.A) else None,
                           POSITION)}
        res = {"points": (len(self.A), None),
               "frequency_range": ([float(f.min()), float(f.max())] if f.size else None,
                                   FREQUENCY),
               "stop_reason": (self.branch.stop_reason, None)}
        return summary_record(self.kind, par, res)


def _conservative(sys):
    p = sys.p.replace(c=0.0, cd=0.0, Q1=0.0, Q2=0.0)
    law = "exact" if sys.exact else sys.law
    from .system import TwoMassFreePlay
    return TwoMassFreePlay(p, law)


def orbit_backbone(sys, mode=1, A_range=(0.005, 0.3), *, ds=0.01, ds_max=0.03, max_steps=300,
                   rtol=1e-11, atol=1e-12, progress=False) -> OrbitBackbone:
    """Backbone of periodic orbits by shooting: the conservative NNM family of mode 1 (in
    phase) or 2 (anti-phase).

    Starts from the linear mode at ``A_range[0]`` (must be below the gap ``a`` so that only the
    cubic springs act) and continues in ``A = x1(0)`` up to ``A_range[1]``.

    Parameters
    ----------
    sys : TwoMassFreePlay, or params for the exact law
        The system; damping and forcing are set to zero.
    mode : int
        1 (in phase) or 2 (anti-phase).
    A_range : tuple of float
        First and last amplitude ``A = x1(0)`` (m); the first below the half-gap ``a``.
    ds, ds_max : float
        Initial and largest continuation steps, arclength in the mixed units of
        (x2 [m], half period [s], A [m]).
    max_steps : int
        Most continuation steps (-).
    rtol, atol : float
        Relative (-) and absolute (m, m/s) tolerances of the flow integration.
    progress : bool
        Show a progress bar.

    Returns
    -------
    OrbitBackbone
        With ``frequency = pi / tau`` (rad per unit time).
    """
    sys = make_system(sys)
    cons = _conservative(sys)
    p = cons.p
    if mode not in (1, 2):
        raise ParameterError(f"mode must be 1 or 2, got {mode!r}")
    A0, A1 = (float(v) for v in A_range)
    if not (0 < A0 < A1):
        raise ParameterError(f"A_range must satisfy 0 < A0 < A1, got {A_range!r}")
    if A0 >= p.a:
        raise ParameterError(f"A_range[0] must be below the half-gap a={p.a} (linear start)")
    wn = p.wn[mode - 1]
    sgn = 1.0 if mode == 1 else -1.0

    def run(u, A):
        x2, tau = u
        if not tau > 0:
            raise ParameterError("half period became non-positive")
        fr = flow(cons, np.array([A, 0.0, x2, 0.0]), 0.0, tau, 1.0, variational=True, rtol=rtol,
                  atol=atol)
        return fr

    cache = {}

    def ev(u, A):
        key = (np.asarray(u, float).tobytes(), float(A))
        if key not in cache:
            if len(cache) > 8:
                cache.clear()
            cache[key] = run(u, A)
        return cache[key]

    def residual(u, A):
        fr = ev(u, A)
        return np.array([fr.z[1], fr.z[3]])

    def jacobian(u, A):
        fr = ev(u, A)
        s = region_of(fr.z[0], p.a, fr.z[1]) if cons.exact else None
        if cons.exact and fr.switches:
            s = fr.switches[-1][2]
        f = cons.rhs(u[1], fr.z, 1.0, region=s)
        Phi = fr.Phi
        Ru = np.array([[Phi[1, 2], f[1]], [Phi[3, 2], f[3]]])
        RA = np.array([Phi[1, 0], Phi[3, 0]])
        return Ru, RA

    u0 = np.array([sgn * A0, math.pi / wn])
    br = _cont.continue_branch(residual, jacobian, u0, A0, ds=ds, ds_max=ds_max,
                               lam_range=(A0, A1), max_steps=max_steps, tol=1e-11,
                               progress=progress)
    return OrbitBackbone(A=br.lam.copy(), x2=br.x[:, 0].copy(), frequency=math.pi / br.x[:, 1],
                    branch=br, mode=mode, law=cons.law_name)
