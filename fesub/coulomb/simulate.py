"""Stick-slip time integration of a chain with one Coulomb contact (spec section 7).

Between events the equations are linear, so every segment is propagated *exactly* with its
modal solution (sum of sinusoids plus the particular response to the constant friction force and
to ``cos tau``):

* slip with sign ``s``: ``r1^2 Gamma x'' + K x = e_l cos tau - s beta w`` on the modes of the
  free chain;
* stick: ``w @ x = b_amp cos tau + c0`` (relative coordinate frozen at ``c0``), propagated on the
  modes of the constrained chain ``x = Psi_s y + w~ (b_amp cos tau + c0)`` with
  ``w~ = Gamma^-1 w / (w Gamma^-1 w)``; the contact force needed to hold is
  ``Lambda = [w Gamma^-1 (e_l cos tau - K x) + r1^2 b_amp cos tau] / (w Gamma^-1 w)``.

Events (relative velocity ``c' = 0`` while slipping, ``|Lambda| = mu beta`` while sticking) are
bracketed on a grid of at least 24 points per shortest period of the segment and refined by a
safeguarded Newton iteration to machine precision. At ``c' = 0`` the contact sticks if
``|Lambda| <= mu beta``, otherwise it slips in the direction of ``Lambda``; a new slip starts with
a relative velocity of ``s * 1e-11`` so that the root at the start of the segment is not found
again. Whole periods ``tau in [2 pi n, 2 pi (n+1)]`` are run in a compiled kernel
(``fesub/_core/coulomb.pyx``, NumPy twin ``coulomb_ref.py``) until the Poincare map settles:
relative change ``delta_n`` with ``delta_n / (1 - rho_n) < tol`` (``rho_n`` the observed
contraction, capped at 0.999), after at least ``min_periods``.

:func:`simulate_scipy` is the baseline: the same event logic with ``solve_ivp(DOP853)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, asdict

import numpy as np
import scipy.linalg

from .._backend import kernels
from ..errors import ConvergenceError, ParameterError
from .analytic import CONTINUOUS, REGIME_NAMES, STICK_SLIP, STUCK, _setup as _an_setup
from .model import ChainModel, as_beta, as_r1, check_mu

__all__ = ["SimResult", "simulate", "simulate_scipy", "regime_map_point", "numeric_regime_map",
           "NumericRegimeMap"]

TWO_PI = 2.0 * np.pi
_KICK = 1e-11


@dataclass
class SimResult:
    """Steady state found by time integration.

    Amplitudes per unit load (or per unit base amplitude), phases in rad in (-pi, pi] measured
    from the load maximum (the load is ``cos tau``); ``Z``/``phi_c`` refer to the contact
    coordinate ``w @ x - b_amp cos tau``. When ``converged`` is False the numbers are those of the
    last period run and must not be read as a steady state (``X`` etc. are NaN then unless
    ``keep_unconverged=True`` was asked for).
    """

    r1: float
    beta: float
    mu: float
    converged: bool
    periods: int
    delta: float
    regime: int
    stops_per_period: int
    reversals_per_period: int
    slip_starts_per_period: int
    X: np.ndarray
    phi: np.ndarray
    Z: float
    phi_c: float
    tau: np.ndarray = field(repr=False)
    x: np.ndarray = field(repr=False)
    state: dict = field(default_factory=dict, repr=False)

    @property
    def regime_name(self) -> str:
        return REGIME_NAMES[self.regime]


def _nullspace(w):
    return scipy.linalg.null_space(w[None, :])


def build_system(model: ChainModel, contact, load: int, r1: float, beta: float, mu: float) -> dict:
    """Arrays the exact-segment propagator needs (slip and stick modal bases, contact data)."""
    contact, l, w = _an_setup(model, contact, load)
    r1 = float(as_r1(r1)[0])
    beta = float(as_beta(beta)[0])
    mu = check_mu(mu)
    n = model.n
    gam = model.gamma
    lam, phi = model.lam, model.phi
    r2 = r1 * r1
    bamp = contact.b_amp
    ginv_w = w / gam
    sig_w = float(w @ ginv_w)
    d2 = ginv_w / sig_w
    if n > 1:
        T = _nullspace(w)
        lam_s, phs = scipy.linalg.eigh(T.T @ model.K @ T, T.T @ np.diag(gam) @ T)
        Ps = T @ phs
    else:
        lam_s, Ps = np.zeros(0), np.zeros((1, 0))
    for name, lv in (("free chain", lam), ("stuck chain", lam_s)):
        if lv.size and np.min(np.abs(lv - r2) / lv) < 1e-9:
            raise ParameterError(
                f"r1 = {r1!r} coincides with a natural frequency of the {name} "
                f"(sqrt(lambda) = {np.sqrt(lv).round(9).tolist()}); the exact-segment propagator "
                "needs a non-resonant forcing: shift r1 by more than 1e-9 relative"
            )
    pc = w @ phi
    kvec = Ps.T @ model.K @ d2
    kw = (ginv_w @ model.K) / sig_w
    Lc0 = (ginv_w[l] + r2 * bamp) / sig_w
    L0 = -float(kw @ d2)
    om1 = np.sqrt(lam) / r1
    om2 = np.sqrt(lam_s) / r1
    sysd = {
        "om1": om1, "B1": np.ascontiguousarray(phi), "P1": np.ascontiguousarray(phi.T * gam[None, :]),
        "cv1": pc, "H1": phi[l] / (lam - r2), "K1": -beta * pc / lam,
        "om2": om2, "B2": np.ascontiguousarray(Ps), "P2": np.ascontiguousarray(Ps.T * gam[None, :]),
        "d2": d2, "H2": (Ps[l] - bamp * kvec) / (lam_s - r2) if n > 1 else np.zeros(0),
        "K2": -kvec / lam_s if n > 1 else np.zeros(0), "lrow": -(kw @ Ps) if n > 1 else np.zeros(0),
        "w": w, "kw": kw,
        "bamp": bamp, "Lc0": Lc0, "Lc": Lc0 + L0 * bamp, "L0": L0, "mubeta": mu * beta,
        "beta": beta, "mu": mu, "r1": r1, "l": l, "n": n, "contact": contact,
        "h1": TWO_PI / (24.0 * max(1.0, om1.max())),
        "h2": TWO_PI / (24.0 * max(1.0, om2.max() if om2.size else 1.0)),
    }
    return sysd


def _initial_mode(sysd, x, v, tau=0.0):
    """Mode at a state with zero relative velocity: stick if the holding force is admissible."""
    lam_n = sysd["Lc0"] * np.cos(tau) - float(sysd["kw"] @ x)
    if abs(lam_n) <= sysd["mubeta"]:
        return 0, float(sysd["w"] @ x) - sysd["bamp"] * np.cos(tau), v
    s = 1 if lam_n > 0 else -1
    return s, 0.0, v + s * _KICK * sysd["d2"]


def _segment_arrays(sysd, mode, tau0, x, v, c0):
    from .._core import coulomb_ref as ref

    p = np.array([sysd["bamp"], sysd["Lc0"], sysd["Lc"], sysd["L0"], sysd["mubeta"]])
    return ref._setup(mode, tau0, x, v, c0, sysd["om1"], sysd["B1"], sysd["P1"], sysd["cv1"],
                      sysd["H1"], sysd["K1"], sysd["om2"], sysd["B2"], sysd["P2"], sysd["d2"],
                      sysd["H2"], sysd["K2"], sysd["lrow"], p)


def _segment_state(sysd, mode, tau0, x, v, c0, t):
    """Displacements (N, nt) at absolute times ``t`` inside the segment starting at ``tau0``."""
    om, H, Pc, a, b, *_ = _segment_arrays(sysd, mode, tau0, x, v, c0)
    dt = np.asarray(t, dtype=float) - tau0
    ph = om[:, None] * dt[None, :]
    y = a[:, None] * np.cos(ph) + b[:, None] * np.sin(ph) + Pc[:, None] + H[:, None] * np.cos(t)[None, :]
    if mode != 0:
        return sysd["B1"] @ y
    return sysd["B2"] @ y + sysd["d2"][:, None] * (sysd["bamp"] * np.cos(t) + c0)[None, :]


def _period_history(sysd, seglog, nseg, pts_per_period=64):
    """Dense, exact history over the last period from the segment log; returns a callable and grid."""
    n = sysd["n"]
    starts = seglog[:nseg, 0]
    ends = np.append(starts[1:], TWO_PI)
    om_max = max(1.0, sysd["om1"].max(), sysd["om2"].max() if sysd["om2"].size else 1.0)
    dt = TWO_PI / (pts_per_period * om_max)

    def xfun(t):
        t = np.atleast_1d(np.asarray(t, dtype=float))
        out = np.empty((n, t.size))
        seg = np.clip(np.searchsorted(starts, t, side="right") - 1, 0, nseg - 1)
        for s in np.unique(seg):
            m = seg == s
            row = seglog[s]
            out[:, m] = _segment_state(sysd, int(row[1]), row[0], row[3:3 + n], row[3 + n:3 + 2 * n],
                                       row[2], t[m])
        return out

    grids = [np.linspace(a, b, max(2, int(np.ceil((b - a) / dt)) + 1)) for a, b in zip(starts, ends) if b > a]
    tgrid = np.unique(np.concatenate(grids)) if grids else np.array([0.0])
    return xfun, tgrid, dt


def _amplitudes(xfun, tgrid, dt, w, bamp):
    """Max |x_k| and phase of the positive maximum for every mass and the contact coordinate."""
    xg = xfun(tgrid)
    cg = w @ xg - bamp * np.cos(tgrid)
    rows = np.vstack([xg, cg[None, :]])
    X = np.empty(rows.shape[0])
    ph = np.empty(rows.shape[0])
    for k in range(rows.shape[0]):
        for target, store in ((np.abs(rows[k]), "amp"), (rows[k], "phase")):
            i = int(np.argmax(target))
            lo, hi = tgrid[i] - dt, tgrid[i] + dt

            def f(t, k=k, store=store):
                xv = xfun(np.mod(t, TWO_PI))
                val = xv[k] if k < xg.shape[0] else w @ xv - bamp * np.cos(t)
                return np.abs(val) if store == "amp" else val

            a, b = lo, hi
            g = (np.sqrt(5.0) - 1.0) / 2.0
            c, d = b - g * (b - a), a + g * (b - a)
            fc, fd = f(c)[0], f(d)[0]
            for _ in range(60):
                if fc >= fd:
                    b, d, fd = d, c, fc
                    c = b - g * (b - a)
                    fc = f(c)[0]
                else:
                    a, c, fc = c, d, fd
                    d = a + g * (b - a)
                    fd = f(d)[0]
            tb = 0.5 * (a + b)
            vb = max(f(tb)[0], target[i])
            if store == "amp":
                X[k] = vb
            else:
                ph[k] = np.pi - np.mod(np.pi - tb, TWO_PI)
    return X[:-1], ph[:-1], X[-1], ph[-1]


def _regime(nstick, nrev, nslip, mode_start):
    if nslip == 0 and nstick == 0 and nrev == 0 and mode_start == 0:
        return STUCK
    if nstick == 0 and nslip == 0 and nrev == 2:
        return CONTINUOUS
    return STICK_SLIP


def simulate(model: ChainModel, contact, load: int = 0, r1: float = 1.0, beta: float = 0.0,
             mu: float = 1.0, x0=None, v0=None, max_periods: int = 3000, min_periods: int = 20,
             tol: float = 1e-10, max_seg: int = 500, keep_unconverged: bool = False,
             pts_per_period: int = 64) -> SimResult:
    """Integrate the chain from ``(x0, v0)`` at ``tau = 0`` (default: rest) to a periodic steady state.

    Parameters
    ----------
    model, contact, load
        As in :func:`fesub.coulomb.steady_state`.
    r1, beta, mu : float
        Frequency ratio (> 0), friction ratio (>= 0), static/kinetic ratio (>= 1).
    x0, v0 : array_like (N,), optional
        Initial displacements and velocities (non-dimensional); the initial relative velocity is
        taken as zero when deciding whether the contact starts stuck.
    max_periods, min_periods : int
        Limits on the number of forcing periods.
    tol : float
        Tolerance on the estimated distance of the Poincare state to its fixed point (relative).
    max_seg : int
        Cap on segments per period (raises :class:`~fesub.errors.ConvergenceError` beyond).
    keep_unconverged : bool
        Report the last period's numbers even when the Poincare map did not settle.

    Returns
    -------
    SimResult
    """
    sysd = build_system(model, contact, load, r1, beta, mu)
    n = sysd["n"]
    for name, val in (("max_periods", max_periods), ("min_periods", min_periods), ("max_seg", max_seg)):
        if int(val) < 1:
            raise ParameterError(f"{name} must be >= 1, got {val!r}")
    if not (0 < float(tol) < 1):
        raise ParameterError(f"tol must lie in (0, 1), got {tol!r}")
    x = np.zeros(n) if x0 is None else np.array(x0, dtype=float).reshape(-1)
    v = np.zeros(n) if v0 is None else np.array(v0, dtype=float).reshape(-1)
    if x.size != n or v.size != n:
        raise ParameterError(f"x0 and v0 must have {n} entries (one per mass)")
    mode, c0, v = _initial_mode(sysd, x, v)
    x = np.ascontiguousarray(x)
    v = np.ascontiguousarray(v)
    istate = np.array([mode], dtype=np.int64)
    dstate = np.array([c0, np.inf, 1.0])
    params = np.array([sysd["bamp"], sysd["Lc0"], sysd["Lc"], sysd["L0"], sysd["mubeta"], _KICK,
                       sysd["h1"], sysd["h2"], float(tol)])
    iparams = np.array([int(max_periods), int(min_periods), int(max_seg)], dtype=np.int64)
    seglog = np.zeros((int(max_seg), 3 + 2 * n))
    counts = np.zeros(7, dtype=np.int64)
    K = kernels("coulomb")
    status = K.run_periods(x, v, istate, dstate, sysd["om1"], sysd["B1"], sysd["P1"], sysd["cv1"],
                           sysd["H1"], sysd["K1"], sysd["om2"], sysd["B2"], sysd["P2"], sysd["d2"],
                           sysd["H2"], sysd["K2"], sysd["lrow"], sysd["w"], sysd["kw"], params,
                           iparams, seglog, counts, np.zeros(16 * n + 16))
    if status == 2:
        raise ConvergenceError(
            f"more than max_seg = {max_seg} stick/slip segments in one period at r1 = {r1}, "
            f"beta = {beta}, mu = {mu} (chattering); raise max_seg or check the parameters",
            partial={"periods": int(counts[0])})
    nseg = int(counts[5])
    converged = bool(counts[1])
    xfun, tgrid, dt = _period_history(sysd, seglog, nseg, pts_per_period)
    regime = _regime(int(counts[2]), int(counts[3]), int(counts[4]), int(seglog[0, 1]))
    if converged or keep_unconverged:
        X, ph, Z, phc = _amplitudes(xfun, tgrid, dt, sysd["w"], sysd["bamp"])
    else:
        X = np.full(n, np.nan)
        ph = np.full(n, np.nan)
        Z = phc = np.nan
    tau = np.linspace(0.0, TWO_PI, 401)
    return SimResult(
        r1=float(r1), beta=float(beta), mu=float(mu), converged=converged, periods=int(counts[0]),
        delta=float(dstate[1]), regime=regime, stops_per_period=int(counts[2]),
        reversals_per_period=int(counts[3]), slip_starts_per_period=int(counts[4]),
        X=X, phi=ph, Z=float(Z), phi_c=float(phc), tau=tau, x=xfun(tau),
        state={"x": x.copy(), "v": v.copy(), "mode": int(istate[0]), "c0": float(dstate[0]),
               "seglog": seglog[:nseg].copy()},
    )
