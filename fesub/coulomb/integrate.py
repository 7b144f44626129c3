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

:func:`simulate_chain_scipy` is the baseline: the same event logic with ``solve_ivp(DOP853)``.
Regime maps built from these runs are in :mod:`fesub.coulomb.numeric_map`.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from .._backend import kernels
from ..errors import ConvergenceError, ParameterError
from .analytic import CONTINUOUS, STICK_SLIP, STUCK, contact_setup
from .model import ChainModel, as_beta, as_r1, check_mu
from .results import NOT_COMPUTED, SimResult

__all__ = ["SimResult", "simulate_chain", "simulate_chain_scipy", "build_system",
           "segment_solution", "period_history"]

TWO_PI = 2.0 * np.pi
_KICK = 1e-11


def _nullspace(w):
    return scipy.linalg.null_space(w[None, :])


def build_system(model: ChainModel, contact, load: int, r1: float, beta: float, mu: float) -> dict:
    """Arrays the exact-segment propagator needs (slip and stick modal bases, contact data)."""
    contact, l, w = contact_setup(model, contact, load)
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
    if np.min(np.abs(lam - r2) / lam) < 1e-9:
        raise ParameterError(
            f"r1 = {r1!r} coincides with a natural frequency of the chain "
            f"(sqrt(lambda) = {np.sqrt(lam).round(9).tolist()}); the exact-segment propagator "
            "needs a non-resonant forcing: shift r1 by more than 1e-9 relative"
        )
    # a resonance of the stuck chain only matters if the contact ever sticks: mark it with NaN
    # (checked after the run)
    stick_res = lam_s.size > 0 and bool(np.min(np.abs(lam_s - r2) / lam_s) < 1e-9)
    pc = w @ phi
    kvec = Ps.T @ model.K @ d2
    kw = (ginv_w @ model.K) / sig_w
    Lc0 = (ginv_w[l] + r2 * bamp) / sig_w
    L0 = -float(kw @ d2)
    om1 = np.sqrt(lam) / r1
    om2 = np.sqrt(lam_s) / r1
    with np.errstate(divide="ignore", invalid="ignore"):
        H2 = ((Ps[l] - bamp * kvec) / (lam_s - r2)) if n > 1 else np.zeros(0)
    H2 = np.where(np.abs(lam_s - r2) < 1e-9 * lam_s, np.nan, H2) if n > 1 else H2
    sysd = {
        "om1": om1, "B1": np.ascontiguousarray(phi), "P1": np.ascontiguousarray(phi.T * gam[None, :]),
        "cv1": pc, "H1": phi[l] / (lam - r2), "K1": -beta * pc / lam,
        "om2": om2, "B2": np.ascontiguousarray(Ps), "P2": np.ascontiguousarray(Ps.T * gam[None, :]),
        "d2": d2, "H2": H2,
        "stick_resonant": stick_res, "lam_s": lam_s,
        "K2": -kvec / lam_s if n > 1 else np.zeros(0), "lrow": -(kw @ Ps) if n > 1 else np.zeros(0),
        "w": w, "kw": kw,
        "bamp": bamp, "Lc0": Lc0, "Lc": Lc0 + L0 * bamp, "L0": L0, "mubeta": mu * beta,
        "beta": beta, "mu": mu, "r1": r1, "l": l, "n": n, "contact": contact,
        "h1": TWO_PI / (24.0 * max(1.0, om1.max())),
        "h2": TWO_PI / (24.0 * max(1.0, om2.max() if om2.size else 1.0)),
    }
    return sysd


def _initial_mode(sysd, x, v, tau=0.0):
    """Initial contact state: slip in the direction of a non-zero relative velocity; at zero
    relative velocity, stick if the holding force is admissible, else slip its way."""
    cvel = float(sysd["w"] @ v) + sysd["bamp"] * np.sin(tau)
    if abs(cvel) > 1e-300:
        return (1 if cvel > 0 else -1), 0.0, v
    lam_n = sysd["Lc0"] * np.cos(tau) - float(sysd["kw"] @ x)
    if abs(lam_n) <= sysd["mubeta"]:
        return 0, float(sysd["w"] @ x) - sysd["bamp"] * np.cos(tau), v
    s = 1 if lam_n > 0 else -1
    return s, 0.0, v + s * _KICK * sysd["d2"]


def segment_solution(sysd: dict, mode: int, tau0: float, x, v, c0: float):
    """Exact modal solution of one stick or slip segment starting at ``tau0``.

    In the segment's modal coordinates (the free chain while slipping, the constrained chain
    while stuck) ``y(tau) = a cos(om (tau - tau0)) + b sin(om (tau - tau0)) + Pc + H cos(tau)``.

    Parameters
    ----------
    sysd : dict
        System arrays from :func:`build_system`.
    mode : int
        -1 or +1 slipping that way, 0 stuck.
    tau0 : float
        Start of the segment (rad).
    x, v : ndarray (N,)
        Displacements and velocities ``dx/dtau`` at ``tau0`` (non-dimensional).
    c0 : float
        Offset of the frozen relative coordinate while stuck.

    Returns
    -------
    om, H, Pc, a, b : ndarray
        Modal frequencies (per unit forcing frequency), particular amplitudes of ``cos tau``, the
        constant particular part, and the homogeneous amplitudes (the same set-up the kernel
        ``run_periods`` makes for each segment).
    """
    bamp = sysd["bamp"]
    if mode != 0:
        om, H, P = sysd["om1"], sysd["H1"], sysd["P1"]
        y0, yd0 = P @ x, P @ v
        Pc = mode * sysd["K1"]
    else:
        om, H, P, d2 = sysd["om2"], sysd["H2"], sysd["P2"], sysd["d2"]
        y0 = P @ (x - d2 * (bamp * np.cos(tau0) + c0))
        yd0 = P @ (v - d2 * (-bamp * np.sin(tau0)))
        Pc = c0 * sysd["K2"]
    a = y0 - Pc - H * np.cos(tau0)
    b = (yd0 + H * np.sin(tau0)) / om if om.size else yd0 * 0.0
    return om, H, Pc, a, b


def _segment_state(sysd, mode, tau0, x, v, c0, t):
    """Displacements (N, nt) at absolute times ``t`` inside the segment starting at ``tau0``."""
    om, H, Pc, a, b = segment_solution(sysd, mode, tau0, x, v, c0)
    dt = np.asarray(t, dtype=float) - tau0
    ph = om[:, None] * dt[None, :]
    y = a[:, None] * np.cos(ph) + b[:, None] * np.sin(ph) + Pc[:, None] + H[:, None] * np.cos(t)[None, :]
    if mode != 0:
        return sysd["B1"] @ y
    return sysd["B2"] @ y + sysd["d2"][:, None] * (sysd["bamp"] * np.cos(t) + c0)[None, :]


def period_history(model: ChainModel, contact, load: int, sim: SimResult, tau) -> np.ndarray:
    """Displacements of every mass at times ``tau`` (rad, in [0, 2 pi]) over the last period of a
    :func:`simulate_chain` run, evaluated exactly from its segment log; shape (N, nt), per unit load.

    Parameters
    ----------
    model : ChainModel
        The chain (mass and stiffness ratios, dimensionless).
    contact : CoulombContact or str
        Where the contact sits (see :meth:`CoulombContact.from_spec`; 0-based indices).
    load : int
        Index of the loaded mass (-); ignored for a moving base, which loads mass 0.
    sim : SimResult
        A :func:`simulate_chain` run of this chain, contact and load, with its segment log.
    tau : array_like (nt,)
        Non-dimensional times ``omega t`` (rad), in [0, 2 pi].

    Returns
    -------
    numpy.ndarray (N, nt)
        Displacements ``x k_0 / P`` (dimensionless; per unit base amplitude for a moving base).
    """
    seglog = sim.state.get("seglog")
    if seglog is None or len(seglog) == 0:
        raise ParameterError("period_history needs a SimResult of simulate_chain() with its segment log "
                             "(simulate_chain_scipy and interrupted runs have none)")
    sysd = build_system(model, contact, load, sim.r1, sim.beta, sim.mu)
    xfun, _, _ = _period_history(sysd, seglog, seglog.shape[0])
    return xfun(np.asarray(tau, dtype=float))


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


def _amplitudes(xfun, tgrid, dt, w, bamp, iters=60):
    """Max |x_k| and phase of the positive maximum for every mass and the contact coordinate.

    Grid maximum, then a vectorised golden-section refinement in +-dt around it.
    """
    xg = xfun(tgrid)
    n = xg.shape[0]
    rows = np.vstack([xg, (w @ xg - bamp * np.cos(tgrid))[None, :]])
    nr = rows.shape[0]
    i_abs = np.argmax(np.abs(rows), axis=1)
    i_pos = np.argmax(rows, axis=1)
    centre = np.concatenate([tgrid[i_abs], tgrid[i_pos]])
    grid_best = np.concatenate([np.abs(rows)[np.arange(nr), i_abs], rows[np.arange(nr), i_pos]])
    which = np.concatenate([np.arange(nr), np.arange(nr)])
    use_abs = np.concatenate([np.ones(nr, bool), np.zeros(nr, bool)])

    def f(t):
        xv = xfun(np.mod(t, TWO_PI))
        allv = np.vstack([xv, (w @ xv - bamp * np.cos(t))[None, :]])
        val = allv[which, np.arange(t.size)]
        return np.where(use_abs, np.abs(val), val)

    g = (np.sqrt(5.0) - 1.0) / 2.0
    a, b = centre - dt, centre + dt
    c, d = b - g * (b - a), a + g * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(iters):
        left = fc >= fd
        b = np.where(left, d, b)
        a = np.where(left, a, c)
        cn, dn = b - g * (b - a), a + g * (b - a)
        c, d = np.where(left, cn, d), np.where(left, c, dn)
        fnew = f(np.where(left, c, d))
        fc, fd = np.where(left, fnew, fd), np.where(left, fc, fnew)
    tb = 0.5 * (a + b)
    vb = f(tb)
    better = vb >= grid_best
    val = np.where(better, vb, grid_best)
    tb = np.where(better, tb, centre)
    X = val[:nr]
    ph = np.pi - np.mod(np.pi - tb[nr:], TWO_PI)
    return X[:n], ph[:n], X[n], ph[n]


def _regime(nstick, nrev, nslip, mode_start):
    if nslip == 0 and nstick == 0 and nrev == 0 and mode_start == 0:
        return STUCK
    if nstick == 0 and nslip == 0 and nrev == 2:
        return CONTINUOUS
    return STICK_SLIP


def simulate_chain(model: ChainModel, contact, load: int = 0, r1: float = 1.0, beta: float = 0.0,
                   mu: float = 1.0, x0=None, v0=None, max_periods: int = 3000,
                   min_periods: int = 20, tol: float = 1e-10, max_seg: int = 500,
                   keep_unconverged: bool = False, pts_per_period: int = 64,
                   amplitudes: bool = True) -> SimResult:
    """Integrate the chain from ``(x0, v0)`` at ``tau = 0`` (default: rest) to a periodic steady state.

    Parameters
    ----------
    model, contact, load
        As in :func:`fesub.coulomb.steady_state`.
    r1, beta, mu : float
        Frequency ratio (> 0), friction ratio (>= 0), static/kinetic ratio (>= 1).
    x0, v0 : array_like (N,), optional
        Initial displacements and velocities (non-dimensional, default rest). With a non-zero
        relative velocity the contact starts slipping that way; otherwise it starts stuck if the
        holding force is admissible.
    max_periods, min_periods : int
        Limits on the number of forcing periods.
    tol : float
        Tolerance on the estimated distance of the Poincare state to its fixed point (relative).
    max_seg : int
        Cap on segments per period (raises :class:`~fesub.errors.ConvergenceError` beyond).
    keep_unconverged : bool
        Report the last period's numbers even when the Poincare map did not settle.
    pts_per_period : int
        Grid points per shortest period for the amplitude search (then golden-section refined).
    amplitudes : bool
        False skips the amplitudes and phases (regime maps need only the regime).

    Returns
    -------
    SimResult
        ``status == "interrupted"`` (regime -1, NaN amplitudes, the integrator's state) when
        Ctrl-C stopped the run.
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
    tau = np.linspace(0.0, TWO_PI, 401)
    try:
        status = K.run_periods(x, v, istate, dstate, sysd["om1"], sysd["B1"], sysd["P1"],
                               sysd["cv1"], sysd["H1"], sysd["K1"], sysd["om2"], sysd["B2"],
                               sysd["P2"], sysd["d2"], sysd["H2"], sysd["K2"], sysd["lrow"],
                               sysd["w"], sysd["kw"], params, iparams, seglog, counts,
                               np.zeros(20 * n + 16))
        return _finish(sysd, status, x, v, istate, dstate, seglog, counts, tau, max_seg,
                       pts_per_period, amplitudes, keep_unconverged)
    except KeyboardInterrupt:   # Ctrl-C: what the integrator holds, marked as interrupted
        nseg = int(counts[5])
        nan = np.full(n, np.nan)
        return SimResult(
            r1=sysd["r1"], beta=sysd["beta"], mu=sysd["mu"], converged=False,
            periods=int(counts[0]), delta=float(dstate[1]), regime=NOT_COMPUTED,
            stops_per_period=int(counts[2]), reversals_per_period=int(counts[3]),
            slip_starts_per_period=int(counts[4]), X=nan, phi=nan.copy(), Z=np.nan,
            phi_c=np.nan, tau=tau, x=np.full((n, tau.size), np.nan),
            state={"x": x.copy(), "v": v.copy(), "mode": int(istate[0]), "c0": float(dstate[0]),
                   "seglog": seglog[:nseg].copy()},
            status="interrupted")


def _finish(sysd, status, x, v, istate, dstate, seglog, counts, tau, max_seg, pts_per_period,
            amplitudes, keep_unconverged) -> SimResult:
    """The :class:`SimResult` of a finished :func:`simulate_chain` run (errors as exceptions)."""
    n, r1, beta, mu = sysd["n"], sysd["r1"], sysd["beta"], sysd["mu"]
    if status == 2:
        raise ConvergenceError(
            f"more than max_seg = {max_seg} stick/slip segments in one period at r1 = {r1}, "
            f"beta = {beta}, mu = {mu} (chattering); raise max_seg or check the parameters",
            partial={"periods": int(counts[0])})
    nseg = int(counts[5])
    converged = bool(counts[1])
    if not np.isfinite(x).all():
        raise ParameterError(
            f"r1 = {r1!r} coincides with a natural frequency of the stuck chain "
            f"(sqrt(lambda) = {np.sqrt(sysd['lam_s']).round(9).tolist()}) and the contact sticks: "
            "shift r1 by more than 1e-9 relative")
    xfun, tgrid, dt = _period_history(sysd, seglog, nseg, pts_per_period)
    regime = _regime(int(counts[2]), int(counts[3]), int(counts[4]), int(seglog[0, 1]))
    if amplitudes and (converged or keep_unconverged):
        X, ph, Z, phc = _amplitudes(xfun, tgrid, dt, sysd["w"], sysd["bamp"])
    else:
        X = np.full(n, np.nan)
        ph = np.full(n, np.nan)
        Z = phc = np.nan
    return SimResult(
        r1=float(r1), beta=float(beta), mu=float(mu), converged=converged, periods=int(counts[0]),
        delta=float(dstate[1]), regime=regime, stops_per_period=int(counts[2]),
        reversals_per_period=int(counts[3]), slip_starts_per_period=int(counts[4]),
        X=X, phi=ph, Z=float(Z), phi_c=float(phc), tau=tau, x=xfun(tau),
        state={"x": x.copy(), "v": v.copy(), "mode": int(istate[0]), "c0": float(dstate[0]),
               "seglog": seglog[:nseg].copy()},
    )


# ---------------------------------------------------------------------------------------------
# baseline: the same event logic with scipy.integrate.solve_ivp (DOP853)

def simulate_chain_scipy(model: ChainModel, contact, load: int = 0, r1: float = 1.0,
                         beta: float = 0.0, mu: float = 1.0, x0=None, v0=None,
                         max_periods: int = 3000, min_periods: int = 20, tol: float = 1e-10,
                         max_seg: int = 500, rtol: float = 1e-10, atol: float = 1e-12,
                         keep_unconverged: bool = False) -> SimResult:
    """Event-driven integration with ``solve_ivp(method="DOP853")`` (spec section 7 recipe).

    Same transitions, guard and convergence test as :func:`simulate_chain`, but every segment
    is integrated numerically and the events are located by SciPy. Much slower; kept as the
    independent baseline of the exact-segment integrator. Parameters as in
    :func:`simulate_chain`, with the tolerances ``rtol``, ``atol`` of ``solve_ivp``.

    Parameters
    ----------
    model : ChainModel
        The chain (mass and stiffness ratios, dimensionless).
    contact : CoulombContact or str
        Where the contact sits (see :meth:`CoulombContact.from_spec`; 0-based indices).
    load : int
        Index of the loaded mass (-); ignored for a moving base, which loads mass 0.
    r1, beta, mu : float
        Frequency ratio omega sqrt(m_0/k_0) (> 0), friction ratio F/P (>= 0), static/kinetic
        ratio (>= 1); all dimensionless.
    x0, v0 : array_like (N,), optional
        Initial displacements and velocities (dimensionless, default rest).
    max_periods, min_periods : int
        Limits on the number of forcing periods (-).
    tol : float
        Relative tolerance on the distance of the Poincare state to its fixed point (-).
    max_seg : int
        Cap on segments per period (-).
    rtol, atol : float
        Relative (-) and absolute (dimensionless state units) tolerances of ``solve_ivp``.
    keep_unconverged : bool
        Report the last period's numbers even when the Poincare map did not settle.

    Returns
    -------
    SimResult
        As :func:`simulate_chain` returns.
    """
    sysd = build_system(model, contact, load, r1, beta, mu)
    n = sysd["n"]
    x = np.zeros(n) if x0 is None else np.array(x0, dtype=float).reshape(-1)
    v = np.zeros(n) if v0 is None else np.array(v0, dtype=float).reshape(-1)
    mode, c0, v = _initial_mode(sysd, x, v)
    eq = _ScipyEquations(model, sysd)
    delta_prev = np.inf
    delta = np.inf
    rho = 1.0
    converged = False
    sols = []
    counts = (0, 0, 0)
    seg_modes = []
    nper = 0
    for nper in range(1, int(max_periods) + 1):
        z_old = np.concatenate([x, v])
        mode_old = mode
        x, v, mode, c0, sols, seg_modes, counts = _scipy_period(eq, x, v, mode, c0, max_seg,
                                                                rtol, atol)
        z = np.concatenate([x, v])
        delta = float(np.abs(z - z_old).max()) / max(float(np.abs(z).max()), 1e-300)
        rho = min(max(delta / delta_prev, 0.0), 0.999) if delta_prev > 0 else 0.0
        delta_prev = delta
        if nper >= min_periods and mode == mode_old and delta / (1.0 - rho) < tol:
            converged = True
            break
    return _scipy_result(sysd, sols, seg_modes, counts, converged or keep_unconverged,
                         r1=float(r1), beta=float(beta), mu=float(mu), converged=converged,
                         periods=nper, delta=delta,
                         state={"x": x, "v": v, "mode": int(mode), "c0": float(c0)})


class _ScipyEquations:
    """Right-hand sides and events of the stick and slip segments for ``solve_ivp``."""

    def __init__(self, model: ChainModel, sysd: dict):
        n, l, w, kw = sysd["n"], sysd["l"], sysd["w"], sysd["kw"]
        bamp, Lc0, mubeta, r1f = sysd["bamp"], sysd["Lc0"], sysd["mubeta"], sysd["r1"]
        ginv = 1.0 / model.gamma
        Kmat = model.K
        el = np.zeros(n)
        el[l] = 1.0
        inv_r2 = 1.0 / (r1f * r1f)
        self.n, self.w, self.d2, self.bamp, self.mubeta = n, w, sysd["d2"], bamp, mubeta

        def lam_hold(t, xx):
            return Lc0 * np.cos(t) - kw @ xx

        def rhs_slip(s):
            def f(t, y):
                xx = y[:n]
                return np.concatenate([y[n:], ginv * (el * np.cos(t) - Kmat @ xx - s * sysd["beta"] * w) * inv_r2])
            return f

        def rhs_stick(t, y):
            xx = y[:n]
            return np.concatenate([y[n:], ginv * (el * np.cos(t) - Kmat @ xx - lam_hold(t, xx) * w) * inv_r2])

        def ev_vel(t, y):
            return w @ y[n:] + bamp * np.sin(t)

        def ev_up(t, y):
            return lam_hold(t, y[:n]) - mubeta

        def ev_dn(t, y):
            return lam_hold(t, y[:n]) + mubeta

        ev_vel.terminal = ev_up.terminal = ev_dn.terminal = True
        ev_up.direction = 1
        ev_dn.direction = -1
        self.lam_hold, self.rhs_slip, self.rhs_stick = lam_hold, rhs_slip, rhs_stick
        self.ev_vel, self.ev_up, self.ev_dn = ev_vel, ev_up, ev_dn


def _scipy_period(eq: _ScipyEquations, x, v, mode, c0, max_seg, rtol, atol):
    """One forcing period ``tau in [0, 2 pi]`` segment by segment; returns the end state, mode,
    stick offset, the segments ``(start, end, dense solution, mode, c0)``, the mode of each
    segment and the counts (sticks, reversals, slip starts)."""
    from scipy.integrate import solve_ivp

    n, w, d2, bamp, mubeta = eq.n, eq.w, eq.d2, eq.bamp, eq.mubeta
    tau = 0.0
    nstick = nrev = nslip = 0
    sols = []
    seg_modes = [mode]
    for _ in range(int(max_seg) + 1):
        if len(sols) >= max_seg:
            raise ConvergenceError(f"more than max_seg = {max_seg} segments in one period", partial=None)
        y0 = np.concatenate([x, v])
        if mode != 0:
            eq.ev_vel.direction = -mode
            sol = solve_ivp(eq.rhs_slip(mode), (tau, TWO_PI), y0, method="DOP853", rtol=rtol,
                            atol=atol, events=eq.ev_vel, dense_output=True)
        else:
            sol = solve_ivp(eq.rhs_stick, (tau, TWO_PI), y0, method="DOP853", rtol=rtol,
                            atol=atol, events=(eq.ev_up, eq.ev_dn), dense_output=True)
        sols.append((tau, sol.t[-1], sol.sol, mode, c0))
        x, v = sol.y[:n, -1].copy(), sol.y[n:, -1].copy()
        if sol.status != 1:
            break
        tau = sol.t[-1]
        if mode != 0:
            lam_n = eq.lam_hold(tau, x)
            v = v - d2 * (w @ v + bamp * np.sin(tau))
            if abs(lam_n) <= mubeta:
                mode, c0 = 0, float(w @ x) - bamp * np.cos(tau)
                nstick += 1
            else:
                mode = 1 if lam_n > 0 else -1
                v = v + mode * _KICK * d2
                nrev += 1
        else:
            mode = 1 if eq.lam_hold(tau, x) > 0 else -1
            v = v + mode * _KICK * d2
            nslip += 1
        seg_modes.append(mode)
    return x, v, mode, c0, sols, seg_modes, (nstick, nrev, nslip)


def _scipy_result(sysd, sols, seg_modes, counts, amplitudes, **fields) -> SimResult:
    """The :class:`SimResult` of the last period's dense segments (amplitudes when asked)."""
    n = sysd["n"]
    starts = np.array([s[0] for s in sols])

    def xfun(t):
        t = np.atleast_1d(np.asarray(t, dtype=float))
        out = np.empty((n, t.size))
        seg = np.clip(np.searchsorted(starts, t, side="right") - 1, 0, len(sols) - 1)
        for s in np.unique(seg):
            m = seg == s
            out[:, m] = sols[s][2](t[m])[:n]
        return out

    om_max = max(1.0, sysd["om1"].max())
    dt = TWO_PI / (64 * om_max)
    tgrid = np.linspace(0.0, TWO_PI, int(np.ceil(TWO_PI / dt)) + 1)
    regime = _regime(counts[0], counts[1], counts[2], seg_modes[0])
    if amplitudes:
        X, ph, Z, phc = _amplitudes(xfun, tgrid, dt, sysd["w"], sysd["bamp"])
    else:
        X = np.full(n, np.nan)
        ph = np.full(n, np.nan)
        Z = phc = np.nan
    tau_out = np.linspace(0.0, TWO_PI, 401)
    return SimResult(
        regime=regime, stops_per_period=counts[0], reversals_per_period=counts[1],
        slip_starts_per_period=counts[2], X=X, phi=ph, Z=float(Z), phi_c=float(phc), tau=tau_out,
        x=xfun(tau_out), **fields)
