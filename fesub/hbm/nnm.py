"""Backbones from the modes: phase resonance (the driven DOF lags the force by 90 deg,
:func:`phase_resonance`) and damped nonlinear normal modes with the extended energy balance
(:func:`dnnm`); :func:`linear_modes` gives the undamped linear modes they start from.

Both are continued in a log amplitude by :func:`fesub.continuation.continue_branch`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..continuation import continue_branch
from ..errors import ConvergenceError, ParameterError, check_positive
from ..io import summary_record
from ._common import (DNNM_ARRAYS, REUSE_FROM, Curve, check_analysis_memory, dof_or_load, increasing_range,
                      single_threaded, step_count)
from .newton import abs_dynamic_stiffness, damped_newton
from .system import HBSystem

__all__ = ["linear_modes", "PhaseResonance", "phase_resonance", "DNNM", "dnnm", "REUSE_FROM"]


def linear_modes(M, K):
    """Undamped modes: (w (rad/s), mass-normalised shapes (n, nmodes)).

    Parameters
    ----------
    M : (n, n) array
        Mass matrix (kg), symmetric positive definite.
    K : (n, n) array
        Stiffness matrix (N/m), symmetric.

    Returns
    -------
    w : (n,) ndarray
        Natural angular frequencies (rad/s), increasing (negative eigenvalues clipped to 0).
    V : (n, n) ndarray
        Mode shapes normalised to ``V^T M V = I`` (1/sqrt(kg)).
    """
    from scipy.linalg import eigh

    ev, V = eigh(K, M)
    return np.sqrt(np.maximum(ev, 0.0)), V


@dataclass
class PhaseResonance(Curve):
    """Phase-resonance backbone: points where the driven DOF lags the force by 90 deg.

    Saved files: dimensions ``point`` and ``coefficient``, ``alpha`` (N) the coordinate.

    Parameters
    ----------
    alpha : (npts,) ndarray
        Force amplitude (N).
    w : (npts,) ndarray
        Frequency (rad/s).
    Am : (npts,) ndarray
        RMS amplitude at the monitor DOF (m).
    Q : (npts, N) ndarray
        Harmonic coefficients (m).
    stop_reason : str
        Why the continuation stopped (``'interrupted'``: stopped by a KeyboardInterrupt,
        ``status``).
    """

    alpha: np.ndarray
    w: np.ndarray
    Am: np.ndarray
    Q: np.ndarray
    stop_reason: str

    kind = "phase-resonance"

    def to_xarray(self):
        return self._dataset(
            {"w": ("point", np.asarray(self.w, float), {"units": "rad/s",
                                                        "long_name": "phase-resonance frequency"}),
             "Am": ("point", np.asarray(self.Am, float),
                    {"units": "m", "long_name": "RMS amplitude at the monitor DOF"}),
             "Q": self._Q(self.Q)},
            {"alpha": ("point", np.asarray(self.alpha, float),
                       {"units": "N", "long_name": "force amplitude"})},
            {"stop_reason": self.stop_reason})

    @classmethod
    def from_xarray(cls, ds):
        return cls(ds["alpha"].values.copy(), ds["w"].values.copy(), ds["Am"].values.copy(),
                   ds["Q"].values.copy(), ds.attrs["stop_reason"])

    def summary(self) -> dict:
        res = {"points": (len(self.alpha), None), "stop_reason": (self.stop_reason, None)}
        if len(self.alpha):
            res.update(w_first=(float(self.w[0]), "rad/s"), w_last=(float(self.w[-1]), "rad/s"),
                       alpha_last=(float(self.alpha[-1]), "N"))
        return summary_record(self.kind, {}, res)


@single_threaded
def phase_resonance(sys: HBSystem, alpha_range, w_guess, *, force_dof=None, ds=0.05,
                    ds_max=0.3, max_steps=600, progress=False) -> PhaseResonance:
    """Continue ``R = 0`` with the quadrature condition ``Q^c1_k = 0`` in ``log alpha``.

    ``force_dof`` (default: the DOF with the largest entry of the load pattern) is the DOF
    whose cosine fundamental must vanish. ``w_guess`` (rad/s) is near the stuck resonance.
    The rows are scaled at the start point (the dynamic ones by the rounding scale of their
    terms, the quadrature row by ``max |Q / alpha|``), so the corrector's tolerance is relative.
    A KeyboardInterrupt during the continuation returns the points computed so far with
    ``stop_reason = 'interrupted'``.

    Parameters
    ----------
    sys : HBSystem
        Structure, contacts and load pattern.
    alpha_range : (float, float)
        Force amplitudes (N), 0 < first < second; continued in ``log alpha``.
    w_guess : float
        Frequency near the stuck resonance (rad/s), > 0.
    force_dof : int, optional
        Index of the DOF whose cosine fundamental must vanish; default the DOF with the largest
        entry of the load pattern.
    ds, ds_max : float, optional
        Initial and largest arclength step (dimensionless: scaled unknowns and ``log alpha``);
        defaults 0.05 and 0.3.
    max_steps : int, optional
        Continuation steps allowed; default 600.
    progress : bool, optional
        tqdm progress bar.

    Returns
    -------
    PhaseResonance
        Forces (N), frequencies (rad/s), amplitudes (m) and harmonic coefficients (m).
    """
    a0, a1 = increasing_range("alpha_range", alpha_range, " (N)")
    w_guess = check_positive("w_guess (rad/s)", w_guess)
    max_steps = step_count("max_steps", max_steps)
    N = sys.N
    k = dof_or_load("force_dof", sys, force_dof)
    e = np.zeros(N)
    e[k] = 1.0

    # row scales, set at the start point: the dynamic rows by the rounding scale of their terms
    # (|D(w)| |Qt| + |F_nl| / alpha + |f_ex|, N/N), the quadrature row by max |Qt| (m/N). The
    # corrector's absolute tolerance then means the same relative accuracy for any structure:
    # unscaled, a stiff interface (K ~ 1e10 N/m, Qt ~ 1e-4 m/N: terms ~ 1e6, rounding ~ 1e-10)
    # put it at the rounding of the residual and the corrector failed at the first step.
    rs = np.ones(N + 1)

    def res(y, s):
        a = math.exp(s)
        Qt, w = y[:N], y[N]
        F, _, _ = sys.fnl(a * Qt)
        return rs * np.append(sys.D(w) @ Qt + F / a - sys.fex, Qt[k])

    def jac(y, s):
        a = math.exp(s)
        Qt, w = y[:N], y[N]
        F, K, _ = sys.fnl(a * Qt)
        J = np.zeros((N + 1, N + 1))
        J[:N, :N] = sys.D(w) + K
        J[:N, N] = sys.D(w, 1) @ Qt
        J[N, :N] = e
        Js = np.zeros(N + 1)
        Js[:N] = (K @ (a * Qt) - F) / a
        return rs[:, None] * J, rs * Js

    # start: linear (stuck) quadrature point near w_guess
    s0 = math.log(a0)
    Q0 = sys.linear_response(w_guess, a0)
    def start(y):
        Qt, w = y[:N], y[N]
        F, _, _ = sys.fnl(a0 * Qt)
        sc = np.max(abs_dynamic_stiffness(sys, w) @ np.abs(Qt) + np.abs(F) / a0
                    + np.abs(sys.fex))
        return res(y, s0), jac(y, s0)[0], np.append(np.full(N, sc), np.abs(Qt).max())

    y, st = damped_newton(start, np.append(Q0 / a0, w_guess), atol=1e-11, max_iter=40)
    if not st.converged:
        raise ConvergenceError(f"phase resonance cannot start near w={w_guess:g} rad/s "
                               f"({st.describe()})")
    qmax = np.abs(y[:N]).max()
    F, _, _ = sys.fnl(a0 * y[:N])
    rs[:N] = 1.0 / max(np.max(abs_dynamic_stiffness(sys, y[N]) @ np.abs(y[:N]) + np.abs(F) / a0
                              + np.abs(sys.fex)), 1e-300)
    rs[N] = 1.0 / max(qmax, 1e-300)
    sc = np.append(np.full(N, qmax), [y[N], 1.0])
    br = continue_branch(res, jac, y, s0, ds=ds, ds_max=ds_max, ds_min=1e-7,
                         lam_range=(s0, math.log(a1)), max_steps=max_steps, tol=1e-10,
                         max_angle_deg=10.0, scale=sc, progress=progress, kink_ds=1e-5)
    alpha = np.exp(br.lam)
    Q = br.x[:, :N] * alpha[:, None]
    return PhaseResonance(alpha, br.x[:, N], np.array([sys.amplitude(q) for q in Q]), Q,
                          br.stop_reason)


@dataclass
class DNNM(Curve):
    """Damped nonlinear normal mode with the extended energy balance (spec 3.1).

    Its equations are those of the extended periodic motion concept (EPMC): the periodic
    motion of ``M q'' + (C + xi M) q' + K q + f_nl = 0`` whose extra mass-proportional damping
    ``xi`` (< 0) cancels the dissipation, normalised on the fundamental's modal mass and phase,
    with the modal damping ratio ``-xi / (2 w0)``; :attr:`decay_rate` and
    :attr:`damped_frequency` read it as a free decay.

    Saved files: dimensions ``point`` and ``coefficient``, ``a`` the coordinate along ``point``.

    Parameters
    ----------
    a : (npts,) ndarray
        Modal amplitude (sqrt(kg) m).
    w0 : (npts,) ndarray
        Natural frequency (rad/s).
    xi : (npts,) ndarray
        Extra damping ``C -> C + xi M`` (1/s, < 0 = injection).
    zeta : (npts,) ndarray
        Damping ratio ``-xi / (2 w0)`` (dimensionless).
    Q : (npts, N) ndarray
        Harmonic coefficients ``a psi`` (m).
    Am : (npts,) ndarray
        RMS amplitude at the monitor DOF (m).
    F_eq : (npts,) ndarray
        Force amplitude (N) whose work balances the dissipation (single point, in phase).
    stop_reason : str
        Why the continuation stopped (``'interrupted'``: stopped by a KeyboardInterrupt,
        ``status``).
    """

    a: np.ndarray
    w0: np.ndarray
    xi: np.ndarray
    zeta: np.ndarray
    Q: np.ndarray
    Am: np.ndarray
    F_eq: np.ndarray
    stop_reason: str

    kind = "dnnm"

    @property
    def decay_rate(self) -> np.ndarray:
        """Decay rate ``sigma = zeta w0`` (1/s) of the amplitude in a free decay along the mode
        (``d ln a / dt = -sigma`` in the slow flow)."""
        return np.asarray(self.zeta) * np.asarray(self.w0)

    @property
    def damped_frequency(self) -> np.ndarray:
        """Frequency of the free decay along the mode, ``w0 sqrt(1 - zeta^2)`` (rad/s).

        The mode's ``w0`` is the frequency of the periodic motion whose dissipation the extra
        damping cancels (exact for a linear mode: the undamped natural frequency); a ring-down
        oscillates at this one. The decay's damping ratio (rate over its frequency) is
        ``decay_rate / damped_frequency = zeta / sqrt(1 - zeta^2)``: the two readings of the
        same mode differ by ``zeta^2 / 2`` relative (2 % at ``zeta = 0.2``)."""
        z = np.asarray(self.zeta)
        return np.asarray(self.w0) * np.sqrt(np.clip(1.0 - z * z, 0.0, None))

    def to_xarray(self):
        pt = "point"
        return self._dataset(
            {"w0": (pt, np.asarray(self.w0, float), {"units": "rad/s",
                                                    "long_name": "natural frequency"}),
             "xi": (pt, np.asarray(self.xi, float),
                    {"units": "1/s", "long_name": "extra damping (C -> C + xi M), < 0: injection"}),
             "zeta": (pt, np.asarray(self.zeta, float),
                      {"units": "1", "long_name": "damping ratio -xi / (2 w0)"}),
             "Q": self._Q(self.Q),
             "Am": (pt, np.asarray(self.Am, float),
                    {"units": "m", "long_name": "RMS amplitude at the monitor DOF"}),
             "F_eq": (pt, np.asarray(self.F_eq, float),
                      {"units": "N", "long_name": "force amplitude of the energy balance"})},
            {"a": (pt, np.asarray(self.a, float),
                   {"units": "kg^0.5 m", "long_name": "modal amplitude (mass-normalised mode)"})},
            {"stop_reason": self.stop_reason})

    @classmethod
    def from_xarray(cls, ds):
        return cls(*(ds[k].values.copy() for k in ("a", "w0", "xi", "zeta", "Q", "Am", "F_eq")),
                   ds.attrs["stop_reason"])

    def summary(self) -> dict:
        res = {"points": (len(self.a), None), "stop_reason": (self.stop_reason, None)}
        if len(self.a):
            res.update(w0_first=(float(self.w0[0]), "rad/s"), w0_last=(float(self.w0[-1]), "rad/s"),
                       zeta_max=(float(np.max(self.zeta)), "1"))
        return summary_record(self.kind, {}, res)


def _guessed_start(guess, N, f1, mass_grad):
    """The continuation's start ``(psi, w0, xi)`` from ``guess = (Q, w0, xi)`` (see
    :func:`dnnm`): ``Q`` padded with zeros to ``N`` and normalised like ``psi``."""
    try:
        Q, w0, xi = guess
        Q = np.asarray(Q, float).ravel()
        w0, xi = float(w0), float(xi)
    except (TypeError, ValueError):
        raise ParameterError("guess must be (Q, w0, xi): harmonic coefficients, frequency "
                             "and extra damping of a point of a mode") from None
    if not 0 < Q.size <= N or not np.all(np.isfinite(Q)) or not (w0 > 0 and math.isfinite(xi)):
        raise ParameterError(f"guess: Q must have at most {N} finite entries (fewer: fewer "
                             f"harmonics), w0 > 0 and xi finite; got {Q.size} entries, "
                             f"w0={w0!r}, xi={xi!r}")
    psi = np.zeros(N)
    psi[:Q.size] = Q
    norm = math.sqrt(max(0.5 * psi[f1] @ mass_grad(psi)[f1], 0.0))
    if not norm > 0:
        raise ParameterError("guess: Q has no fundamental harmonic")
    return np.concatenate([psi / norm, [w0, xi]])


@single_threaded
def dnnm(sys: HBSystem, a_range, mode: int = 0, *, force_dof=None, harmonics="all", ds=0.05,
         ds_max=0.3, max_steps=600, progress=False, reuse_factorization=None,
         kink_ds: float = 1e-5, guess=None) -> DNNM:
    """dNNM continuation in ``log a`` (spec 3.1, paper eqs. 8-12, printed typos fixed).

    These are the equations of the extended periodic motion concept (EPMC): a periodic motion
    with the extra damping ``xi M`` (negative: an injection) that cancels the dissipation per
    cycle, the modal damping ratio ``-xi / (2 w0)``; one implementation serves both names.

    Unknowns ``(psi, w0, xi)``: ``Dbar(w0, xi) psi + F_nl(a psi)/a = 0`` with ``C -> C + xi M``,
    ``psi^c1 . M psi^c1 + psi^s1 . M psi^s1 = 1``, phase ``psi^s1_k = 0`` (k = force DOF).
    Energy balance: ``E_d = -xi pi w0 sum_n n^2 (Q^cn.M Q^cn + Q^sn.M Q^sn)`` (``harmonics='all'``)
    or the fundamental only; ``F_eq = E_d / (pi |Q^1_k|)``. With the constant term
    (``sys.constant``) the mean ``Q^0`` is solved with the harmonics (the contact forces' mean
    kept, against the static load ``sys.fs`` that holds the structure at rest) and comes first
    in ``Q``.
    A KeyboardInterrupt during the continuation returns the points computed so far with
    ``stop_reason = 'interrupted'``.

    Parameters
    ----------
    sys : HBSystem
        Structure and contacts.
    a_range : (float, float)
        Modal amplitudes (sqrt(kg) m, mass-normalised mode), 0 < first < second; continued in
        ``log a``.
    mode : int, optional
        Index of the stuck-linear mode followed (0 = lowest); default 0.
    force_dof : int, optional
        DOF of the phase condition and of ``F_eq``; default the DOF with the largest entry of
        the load pattern.
    harmonics : {'all', 'fundamental'}, optional
        Harmonics counted in the dissipated energy.
    ds, ds_max : float, optional
        Initial and largest arclength step (dimensionless: scaled unknowns and ``log a``);
        defaults 0.05 and 0.3.
    max_steps : int, optional
        Continuation steps allowed; default 600.
    progress : bool, optional
        tqdm progress bar.
    reuse_factorization : bool, optional
        Solve the continuation's linear systems by GMRES preconditioned with an earlier
        Jacobian's LU factors (``continue_branch(reuse_factorization=True)``); default None:
        on from ``N >= REUSE_FROM`` unknowns, where the dense factorisation dominates a step.
    kink_ds : float, optional
        Step (arclength, as ``ds``) at or below which a converged point whose tangent still
        turns too much is taken as a kink of the non-smooth branch (a contact changing state)
        and the step before it restored (:func:`~fesub.continuation.continue_branch`); default
        1e-5. A larger value passes the many kinks of a joint's contacts in fewer steps (the
        points are solutions either way; the kink is located less closely).
    guess : (Q, w0, xi), optional
        Start of the first point instead of the stuck mode: harmonic coefficients (m) of a
        point of a mode of the same system, or of the system with fewer harmonics (``Q``
        shorter: the harmonics it lacks start at zero), its frequency (rad/s) and extra
        damping (1/s), e.g. ``(d.Q[i], d.w0[i], d.xi[i])`` of a :class:`DNNM` ``d`` at
        ``d.a[i]`` near ``a_range[0]``. A branch of many harmonics then starts where the
        contacts already slip, from a branch of few harmonics that reached it cheaply.

    Returns
    -------
    DNNM
        Natural frequency (rad/s), extra damping (1/s), damping ratio (-), harmonic
        coefficients (m), amplitude (m) and equivalent force (N) along the mode.

    Raises
    ------
    ParameterError
        Before the first step, when the analysis's arrays
        (:meth:`~fesub.hbm.HBSystem.memory_bytes`) exceed :mod:`fesub.limits`' memory limit.
    """
    if harmonics not in ("all", "fundamental"):
        raise ParameterError(f"harmonics must be 'all' or 'fundamental', got {harmonics!r}")
    a0, a1 = increasing_range("a_range", a_range, " (modal amplitude, sqrt(kg) m)")
    max_steps = step_count("max_steps", max_steps)
    n, N = sys.n, sys.N
    if int(mode) != mode or not 0 <= mode < n:
        raise ParameterError(f"mode must be an integer in [0, {n - 1}], got {mode!r}")
    mode = int(mode)
    k = dof_or_load("force_dof", sys, force_dof)
    check_analysis_memory(sys, "a damped nonlinear mode", DNNM_ARRAYS)
    M = sys.M
    Mst, Cst, Kst = sys.linear_matrices(stuck=True)
    wm, V = linear_modes(Mst, Kst)
    phi = V[:, mode]
    if phi[k] < 0:
        phi = -phi
    h0 = sys.h0 * n                  # the mean block first with the constant term
    # the normalisation psi^c1 . M psi^c1 + psi^s1 . M psi^s1 = 1 and its gradient, from the
    # fundamental's two blocks (not an N x N matrix: a product with one costs as much as a
    # GMRES iteration at the joint's size)
    f1 = slice(h0, h0 + 2 * n)

    def mass_grad(psi):
        g = np.zeros(N)
        g[f1] = 2 * (M @ psi[f1].reshape(2, n).T).T.ravel()
        return g
    ks = h0 + n + k
    # with the constant term the static load balancing the contacts' normal loads at rest
    # (sys.fs) is part of the mean's equilibrium: (F(a psi) - fs) / a
    fs = sys.fs
    # the dynamic rows are scaled to O(1) (w^2 M phi): an absolute corrector tolerance on
    # N/sqrt(kg) would be below rounding for stiff structures (beam: K ~ 1e9 N/m)
    rs = 1.0 / max(wm[mode] ** 2 * np.abs(M @ phi).max(), 1e-300)

    # the continuation evaluates the Jacobian first, then the residual at the same point: the
    # contact forces of the Jacobian's evaluation are kept for it
    memo = {}

    def forces(y, s, K_out=None):
        if K_out is None and memo.get("s") == s and np.array_equal(memo.get("y"), y):
            return memo["F"]
        F, _, _ = sys.fnl(math.exp(s) * y[:N], K_out=K_out)
        memo.update(s=s, y=np.array(y), F=F)
        return F

    def res(y, s):
        a = math.exp(s)
        psi, w0, xi = y[:N], y[N], y[N + 1]
        F = forces(y, s)
        return np.concatenate([rs * (sys.D_dot(w0, psi, extra_xi=xi) + (F - fs) / a),
                               [0.5 * psi[f1] @ mass_grad(psi)[f1] - 1.0, psi[ks]]])

    work = []

    def jac(y, s):
        # assembled in place (N x N arrays of 100 MB at the joint's size: every temporary or
        # copy costs as much as a few contact evaluations): the contacts' stiffness straight
        # into the Jacobian, then D's blocks, then the row scale. One array serves every call
        # (the continuation copies the Jacobian into its scaled matrix before it asks again):
        # a fresh one each time costs the kernel's page faults and zeroing, 5 % of the
        # joint's backbone
        a = math.exp(s)
        psi, w0, xi = y[:N], y[N], y[N + 1]
        if work:
            J = work[0]
            J.fill(0.0)
        else:
            J = np.zeros((N + 2, N + 2))
            work.append(J)
        K = J[:N, :N]
        F = forces(y, s, K_out=K)
        Js = np.zeros(N + 2)
        Js[:N] = rs * (K @ (a * psi) - F + fs) / a
        sys.add_D(K, w0, extra_xi=xi)
        K *= rs
        J[:N, N] = rs * sys.D_dot(w0, psi, 1, extra_xi=xi)
        J[:N, N + 1] = rs * sys.D_xi_dot(w0, psi)
        J[N, :N] = mass_grad(psi)
        J[N + 1, ks] = 1.0
        return J, Js

    s0 = math.log(a0)
    psi0 = np.zeros(N)
    psi0[h0:h0 + n] = phi
    cm = phi @ sys.C @ phi
    y0 = np.concatenate([psi0, [wm[mode], -cm]])
    if guess is not None:
        y0 = _guessed_start(guess, N, f1, mass_grad)
    # xi by the extra damping of a damping ratio of 0.5 % (not the viscous one alone: a
    # friction damping ratio of a few per cent would then take a hundred steps of ds_max)
    sc = np.concatenate([np.full(N, np.abs(phi).max()), [wm[mode], max(abs(cm), 1e-2 * wm[mode])],
                         [1.0]])
    br = continue_branch(res, jac, y0, s0, ds=ds, ds_max=ds_max, ds_min=1e-7,
                         lam_range=(s0, math.log(a1)), max_steps=max_steps, tol=1e-10,
                         max_angle_deg=10.0, scale=sc, progress=progress,
                         kink_ds=check_positive("kink_ds", kink_ds, error=ParameterError),
                         reuse_factorization=(N >= REUSE_FROM if reuse_factorization is None
                                              else bool(reuse_factorization)))
    a = np.exp(br.lam)
    psi = br.x[:, :N]
    w0 = br.x[:, N]
    xi = br.x[:, N + 1]
    Q = psi * a[:, None]
    nh = sys.nh
    Ed = np.zeros(len(a))
    for i in range(len(a)):
        tot = 0.0
        for h in range(1, (nh if harmonics == "all" else 1) + 1):
            j = 2 * (h - 1) * n + h0
            qc, qs = Q[i, j:j + n], Q[i, j + n:j + 2 * n]
            tot += h * h * (qc @ M @ qc + qs @ M @ qs)
        Ed[i] = -xi[i] * math.pi * w0[i] * tot
    q1 = np.hypot(Q[:, h0 + k], Q[:, h0 + n + k])
    Feq = Ed / (math.pi * q1)
    return DNNM(a, w0, xi, -xi / (2 * w0), Q, np.array([sys.amplitude(q) for q in Q]), Feq,
                br.stop_reason)
