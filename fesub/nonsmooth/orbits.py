"""Periodic orbits by shooting and their Floquet multipliers (the backbone of periodic orbits is
in :mod:`fesub.nonsmooth.branches`).

Shooting: Newton on ``R(z) = P(z) - z`` where ``P`` is the flow over ``n T`` (``T = 2 pi / W``,
t0 = 0) of the 4-D form; the Jacobian is ``M - I`` with the monodromy ``M`` from the variational
equations (for the exact law the saltation matrix is the identity because the vector field is
continuous, so no jump correction is applied). Floquet multipliers are ``eig(M)``; in the 4-D
form there are no trivial multipliers (the 6-D autonomous form adds 1 and exp(-2T)).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import ConvergenceError, ParameterError, check_positive
from ..io import Result, summary_record
from ._dataset import FREQUENCY, MASS_COORD, POSITION, TIME, join_state, split_state, var
from .integrate import flow, make_system

__all__ = ["Orbit", "periodic_orbit", "poincare_map", "floquet_test_functions"]

#: solve_ivp tolerances used for periodic orbits (spec 4.2: DOP853, rtol 1e-11, atol 1e-12)
PO_RTOL, PO_ATOL = 1e-11, 1e-12


@dataclass
class Orbit(Result):
    """A periodic orbit of the forced system, with its Floquet multipliers.

    Parameters
    ----------
    z0 : ndarray, shape (4,)
        State ``[x1, y1, x2, y2]`` [m, m/s] at t = 0 (phase of the forcing cos(W t) = 1).
    W : float
        Forcing frequency [rad/s].
    n_periods : int
        Period in forcing periods (orbit period T = n 2 pi / W).
    monodromy : ndarray, shape (4, 4)
        d z(T) / d z(0) (in the state units: blocks of 1, s and 1/s).
    floquet : ndarray, shape (4,)
        Complex Floquet multipliers [-], sorted by decreasing modulus.
    stable : bool
        ``max |multiplier| < 1``.
    x1_max, x1_min, peak : float
        Extrema of x1 and ``max |x1|`` over the orbit [m].
    n_switch : int
        Switching events per orbit period (exact law; 0 for smooth).
    law : str
        'exact' or 'smooth'.
    residual : float
        |P(z0) - z0|_inf [m, m/s].
    grazings : list of float
        x1 [m] of extrema of x1 within the grazing tolerance of the gap edges.
    """

    kind = "freeplay-orbit"

    z0: np.ndarray
    W: float
    n_periods: int
    monodromy: np.ndarray
    floquet: np.ndarray
    stable: bool
    x1_max: float
    x1_min: float
    peak: float
    n_switch: int
    law: str
    residual: float
    grazings: list = field(default_factory=list)

    @property
    def T(self) -> float:
        """Orbit period [s]."""
        return self.n_periods * 2 * math.pi / self.W

    @property
    def max_multiplier(self) -> float:
        return float(np.max(np.abs(self.floquet)))

    def to_dict(self) -> dict:
        return {"z0": self.z0.tolist(), "W": self.W, "n_periods": self.n_periods,
                "floquet_re": self.floquet.real.tolist(), "floquet_im": self.floquet.imag.tolist(),
                "stable": bool(self.stable), "x1_max": self.x1_max, "x1_min": self.x1_min,
                "peak": self.peak, "n_switch": self.n_switch, "law": self.law,
                "residual": self.residual}

    def to_xarray(self):
        import xarray as xr

        data = {"W": var((), float(self.W), FREQUENCY, "forcing frequency"),
                **split_state("z0", self.z0, (), "orbit state at t = 0"),
                "monodromy": var(("state", "state0"), np.asarray(self.monodromy, float),
                                     "mixed: d state / d state0, state = [x1 m, y1 m/s, x2 m, "
                                     "y2 m/s]", "monodromy matrix"),
                "floquet": var(("multiplier",), np.asarray(self.floquet, complex), "1",
                                   "Floquet multipliers (decreasing modulus)"),
                "x1_max": var((), float(self.x1_max), POSITION, "max x1"),
                "x1_min": var((), float(self.x1_min), POSITION, "min x1"),
                "peak": var((), float(self.peak), POSITION, "max |x1|"),
                "residual": var((), float(self.residual), "1",
                                    "|P(z0) - z0|_inf over the state [m, m/s]"),
                "grazings": var(("grazing",), np.asarray(self.grazings, float).reshape(-1),
                                    POSITION, "x1 at grazing extrema")}
        coords = {"mass": MASS_COORD,
                  "state": ("state", ["x1", "y1", "x2", "y2"], {"units": "1"}),
                  "state0": ("state0", ["x1", "y1", "x2", "y2"], {"units": "1"}),
                  "multiplier": ("multiplier", np.arange(len(self.floquet)), {"units": "1"})}
        attrs = {"n_periods": int(self.n_periods), "stable": bool(self.stable),
                 "n_switch": int(self.n_switch), "law": self.law,
                 "period_T": self.T, "period_T_units": TIME}
        return xr.Dataset(data, coords, attrs)

    @classmethod
    def from_xarray(cls, ds):
        a = ds.attrs
        return cls(z0=join_state(ds, "z0"), W=float(ds["W"].values),
                   n_periods=int(a["n_periods"]), monodromy=ds["monodromy"].values,
                   floquet=ds["floquet"].values, stable=bool(a["stable"]),
                   x1_max=float(ds["x1_max"].values), x1_min=float(ds["x1_min"].values),
                   peak=float(ds["peak"].values), n_switch=int(a["n_switch"]), law=a["law"],
                   residual=float(ds["residual"].values),
                   grazings=[float(g) for g in ds["grazings"].values])

    def summary(self) -> dict:
        par = {"W": (self.W, FREQUENCY), "law": (self.law, None),
               "n_periods": (self.n_periods, None)}
        res = {"x1_max": (self.x1_max, POSITION), "x1_min": (self.x1_min, POSITION),
               "peak": (self.peak, POSITION), "max_multiplier": (self.max_multiplier, "1"),
               "stable": (bool(self.stable), None), "period": (self.T, TIME),
               "switches_per_period": (self.n_switch, None)}
        det = {"floquet_multipliers": {"real": self.floquet.real.tolist(),
                                       "imag": self.floquet.imag.tolist()},
               "z0": {"x1_m": self.z0[0], "y1_m_per_s": self.z0[1], "x2_m": self.z0[2],
                      "y2_m_per_s": self.z0[3]}}
        return summary_record(self.kind, par, res, details=det)


def poincare_map(sys, z, W, n_periods=1, *, variational=True, sens_W=False, rtol=PO_RTOL,
                 atol=PO_ATOL):
    """Stroboscopic map over ``n_periods`` forcing periods from t = 0, with derivatives.

    Parameters
    ----------
    sys : TwoMassFreePlay, or params for the exact law
        The system (parameters in the units of :data:`PARAM_UNITS`).
    z : array_like (4,)
        State ``[x1, y1, x2, y2]`` [m, m/s] at t = 0.
    W : float
        Forcing frequency (rad/s).
    n_periods : int
        Forcing periods mapped over (-).
    variational : bool
        Also integrate the variational equations for ``M``.
    sens_W : bool
        Also compute ``dP/dW``.
    rtol, atol : float
        Relative (-) and absolute (m, m/s) tolerances of the flow integration.

    Returns
    -------
    (P, M, dPdW, flowresult) : P (4,), M = dP/dz (4, 4) or None, dP/dW (4,) or None.
        ``P`` in [m, m/s]; ``M`` in the state units (blocks of 1, s and 1/s); ``dP/dW`` in
        [m/(rad/s), m/s/(rad/s)], including the change of the end time ``n 2 pi / W``;
        ``flowresult`` the :class:`FlowResult` of the integration.
    """
    sys = make_system(sys)
    T = n_periods * 2 * math.pi / W
    fr = flow(sys, z, 0.0, T, W, variational=variational, sens_W=sens_W, rtol=rtol, atol=atol)
    dPdW = None
    if sens_W:
        fT = _rhs_at(sys, T, fr.z, W, fr)
        dPdW = fr.dzdW + fT * (-T / W)
    return fr.z, fr.Phi, dPdW, fr


def _rhs_at(sys, t, z, W, fr):
    region = None
    if sys.exact:
        region = fr.switches[-1][2] if fr.switches else None
        if region is None:
            from .integrate import region_of
            region = region_of(z[0], sys.p.a, z[1])
    return sys.rhs(t, z, W, region=region)


def sorted_multipliers(M):
    lam = np.linalg.eigvals(M)
    return lam[np.argsort(-np.abs(lam), kind="stable")]


def periodic_orbit(sys, z_guess, W, n_periods=1, *, tol=1e-10, max_iter=30, rtol=PO_RTOL,
                   atol=PO_ATOL) -> Orbit:
    """Periodic orbit of period ``n_periods * 2 pi / W`` by Newton shooting.

    Parameters
    ----------
    sys : TwoMassFreePlay, or params for the exact law
        The system (parameters in the units of :data:`PARAM_UNITS`).
    z_guess : array_like (4,)
        Initial guess ``[x1, y1, x2, y2]`` [m, m/s] at t = 0.
    W : float
        Forcing frequency (rad/s), > 0.
    n_periods : int
        Orbit period in forcing periods (-), >= 1.
    tol : float
        Convergence on ``max |P(z) - z|`` (in m and m/s).
    max_iter : int
        Most Newton iterations (-).
    rtol, atol : float
        Relative (-) and absolute (m, m/s) tolerances of the flow integration.

    Returns
    -------
    Orbit
        The orbit and its Floquet multipliers.

    Raises
    ------
    ConvergenceError
        if Newton does not reach ``tol`` in ``max_iter`` iterations.
    """
    sys = make_system(sys)
    W = check_positive("W (forcing frequency)", W)
    n_periods = int(n_periods)
    if n_periods < 1:
        raise ParameterError(f"n_periods must be >= 1, got {n_periods}")
    z = np.asarray(z_guess, dtype=float).copy()
    if z.shape != (4,):
        raise ParameterError(f"z_guess must have shape (4,), got {z.shape}")
    res = np.inf
    for it in range(max_iter):
        P, M, _, fr = poincare_map(sys, z, W, n_periods, rtol=rtol, atol=atol)
        R = P - z
        res = float(np.max(np.abs(R)))
        if res < tol:
            break
        dz = np.linalg.solve(M - np.eye(4), -R)
        # simple damping: limit the step to 0.2 (a few gap widths) per iteration
        nrm = np.max(np.abs(dz))
        if nrm > 0.2:
            dz *= 0.2 / nrm
        z = z + dz
    else:
        raise ConvergenceError(f"shooting did not converge at W={W}: |P(z)-z| = {res:.3g} after "
                               f"{max_iter} iterations", partial=z)
    lam = sorted_multipliers(M)
    return Orbit(z0=z, W=W, n_periods=n_periods, monodromy=M, floquet=lam,
                 stable=bool(np.max(np.abs(lam)) < 1.0), x1_max=fr.x1_max, x1_min=fr.x1_min,
                 peak=max(fr.x1_max, -fr.x1_min), n_switch=len(fr.switches), law=sys.law_name,
                 residual=res, grazings=list(fr.grazings))


def floquet_test_functions(M) -> dict:
    """Bifurcation test functions on the monodromy matrix.

    * ``'PD'``: det(M + I) = prod(lam + 1) -- zero at a multiplier -1 (period doubling);
    * ``'NS'``: det(M (.) M - I) = prod_{i<j} (lam_i lam_j - 1) (bialternate product) -- zero when a
      complex pair crosses ``|lam| = 1`` (Neimark-Sacker; also a neutral saddle lam_i lam_j = 1);
    * ``'LP'``: det(M - I) = prod(lam - 1) -- zero at a multiplier +1 (fold / branch point).

    Parameters
    ----------
    M : array_like (n, n)
        Monodromy matrix (in the state units: blocks of 1, s and 1/s; its eigenvalues are
        dimensionless).

    Returns
    -------
    dict
        ``{'PD': float, 'NS': float, 'LP': float}``, the real parts of the products (dimensionless).
    """
    lam = np.linalg.eigvals(np.asarray(M, dtype=float))
    n = lam.size
    ns = 1.0 + 0j
    for i in range(n):
        for j in range(i + 1, n):
            ns *= lam[i] * lam[j] - 1.0
    return {"PD": float(np.real(np.prod(lam + 1.0))), "NS": float(np.real(ns)),
            "LP": float(np.real(np.prod(lam - 1.0)))}


def orbit_from_ic(sys, ic, W, n_periods=1, *, n_transient=150, steps_per_period=400, **kw) -> Orbit:
    """Periodic orbit reached from an initial condition: ``n_transient`` periods of the batch RK4
    integrator (same law) give the shooting guess (spec 4.2), then :func:`periodic_orbit`."""
    from .batch import batch_periodic

    sys = make_system(sys)
    r = batch_periodic(sys.p, np.asarray(ic, float)[None], W, law=sys.law_name,
                       n_transient=n_transient, n_record=1, steps_per_period=steps_per_period,
                       nsec_max=0)
    return periodic_orbit(sys, r.strobe[0, 0], W, n_periods, **kw)
