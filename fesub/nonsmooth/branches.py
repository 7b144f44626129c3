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
* ``'BP'`` -- det(M - I) changes sign without a fold (a real multiplier crosses +1 while the
  branch goes on in W: branch point, e.g. symmetry breaking); sign changes at a fold are dropped;
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
from .integrate import flow, make_system, region_of
from .orbits import PO_ATOL, PO_RTOL, Orbit, _multipliers, floquet_test_functions, poincare_map

__all__ = ["ShootingProblem", "continue_orbit", "event_multipliers", "branch_summary", "backbone", "EVENT_NAMES"]

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
        lam = _multipliers(M)
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
    ev = {k: v for k, v in prob.events().items() if k in detect}
    br = _cont.continue_branch(prob.residual, prob.jacobian, np.asarray(z0, float), float(W0),
                               ds=ds, ds_min=ds_min, ds_max=ds_max, lam_range=(lo, hi),
                               max_steps=max_steps, tol=tol, direction=direction, events=ev,
                               stability=prob.stable, progress=progress)
    folds = [e.lam for e in br.events if e.kind == "fold"]
    br.events = [e for e in br.events
                 if not (e.kind == "BP" and any(abs(e.lam - f) < 1e-4 for f in folds))]
    for e in br.events:  # attach multipliers; a neutral saddle (real lam_i lam_j = 1) is no NS
        try:
            lam = _multipliers(prob.monodromy(e.x, e.lam))
        except Exception:  # noqa: BLE001 - a failed re-evaluation only loses the extra info
            continue
        e.info["multipliers_re"] = lam.real.tolist()  # JSON-friendly (Branch.save)
        e.info["multipliers_im"] = lam.imag.tolist()
        if e.kind == "NS":
            cpx = lam[np.abs(lam.imag) > 1e-9]
            if cpx.size == 0 or np.min(np.abs(np.abs(cpx) - 1.0)) > 1e-3:
                e.kind = "NS-neutral-saddle"
    return br, prob


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


# ---------------------------------------------------------------- backbones ----------------------

@dataclass
class Backbone:
    """Conservative NNM family: amplitude ``A = x1`` at rest, ``x2`` at rest, frequency."""

    A: np.ndarray
    x2: np.ndarray
    frequency: np.ndarray
    branch: object
    mode: int


def _conservative(sys):
    p = sys.p.replace(c=0.0, cd=0.0, Q1=0.0, Q2=0.0)
    law = "exact" if sys.exact else sys.law
    from .system import TwoMassFreePlay
    return TwoMassFreePlay(p, law)


def backbone(sys, mode=1, A_range=(0.005, 0.3), *, ds=0.01, ds_max=0.03, max_steps=300,
             rtol=1e-11, atol=1e-12, progress=False) -> Backbone:
    """Backbone (conservative NNM family) of mode 1 (in phase) or 2 (anti-phase).

    Starts from the linear mode at ``A_range[0]`` (must be below the gap ``a`` so that only the
    cubic springs act) and continues in ``A = x1(0)`` up to ``A_range[1]``.

    Returns
    -------
    Backbone with ``frequency = pi / tau`` (rad per unit time).
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
    return Backbone(A=br.lam.copy(), x2=br.x[:, 0].copy(), frequency=math.pi / br.x[:, 1],
                    branch=br, mode=mode)
