"""Time-domain validation: Newmark (average acceleration) with an exact return mapping of the
friction contact elements.

Each step solves ``M a + C v + K q + G^T f_c(G q) = alpha f_ex cos(w t)`` implicitly. The
linear part is condensed once on the contact coordinates (``S = G K_eff^{-1} G^T``).

* Jenkins and stick-slip-separation contacts: the laws (stick / slip+ / slip- / separation per
  element) are affine for a given state combination; the combination is found by a fixed point
  on the states (start: previous step), with an exhaustive search as fallback, so the return
  mapping is solved exactly (no Newton tolerance).
* :class:`~fesub.hbm.Friction3D` contacts: the step applies the element's own time-discrete law
  (the one its AFT marches: elastic predictor, radial return onto the circle ``mu f_n`` of the
  current normal load, force zero when separated, re-contact from the interpolated crossing of
  ``N0 + kn un = 0``) at the end of the step; the contact displacements solve
  ``u + S (f(u) - f_0) = u_lin`` by a semismooth Newton method (exact derivative of the law,
  backtracking on the residual), to rounding.

The static preload is balanced by a static load (decoupled scheme, as in the harmonic
balance): the normal contact force enters as ``f_n - N0``. A system mixes no 3D contact with
the scalar ones.

The average-acceleration rule conserves energy for linear forces only. Each contact is a
penalty spring whose own circular frequency ``w_c = sqrt(k / m_c)`` (``k`` = kn or kt, N/m;
``1 / m_c = g M^{-1} g^T`` for its row ``g`` of the contact map, kg) is usually far above the
excitation: when ``w_c dt`` exceeds about 1 the contact coordinates alternate from step to step
(the rule's image of an unresolved mode, undamped), and a contact that closes, opens or slips
within such a step returns more energy than it received. The run therefore books the energy
the contact laws create, from each step's balance ``dPhi - du . (f_n + f_n+1) / 2`` of each
contact (``Phi`` its stored energy, J; the work by the trapezoidal rule): the normal springs'
net sum (a conservative law: zero when exact) plus each step's positive excess of the
tangential ones (dissipative: never positive when exact). It is weighed against the energy put
in (the initial energy plus the positive work of the load): above ``energy_tol`` of it a
:class:`~fesub.errors.StepWarning` names the time and ``max w_c dt``; above the whole of it
(the run is then dominated by energy the integrator made, and grows without bound) a
:class:`~fesub.errors.ConvergenceError` stops the run. The option ``hht`` (the
Hilber-Hughes-Taylor rule) damps the unresolved modes instead, ``(1 - hht) / (1 + hht)`` per
step, and keeps the resolved ones to third order.
"""

from __future__ import annotations

import itertools
import math
import warnings
from dataclasses import dataclass

import numpy as np

from ..errors import (
    ConvergenceError,
    ModelError,
    ParameterError,
    StepWarning,
    check_count,
    check_positive,
    check_range,
)
from ..parallel import single_thread_blas
from .step3d import ReturnMap3D
from .system import HBSystem

__all__ = ["TimeResult", "fundamental", "harmonics", "initial_from_hb", "newmark"]


@dataclass
class TimeResult:
    """Samples of the last ``record_periods`` periods.

    Parameters
    ----------
    t : (nrec,) ndarray
        Time (s).
    q : (nrec, n) ndarray
        Displacements (m).
    fc : (nrec, ncomp_total) ndarray
        Contact forces (N), normal ones including the preload N0.
    state : (nrec, ncontacts) ndarray of int
        0 stick, 1 slip+, 2 slip-, 3 separation.
    steps_per_period : int
        Time steps per excitation period.
    w : float
        Excitation frequency (rad/s).
    v : (nrec, n) ndarray
        Velocities (m/s).
    energy_created : float
        The most energy (J) the discrete contact laws had created at any step (module
        docstring; zero for an exact integration of passive contacts).
    energy_in : float
        Initial energy plus the positive work of the load (J).
    wc_dt : float
        Largest ``w_c dt`` of the contacts' penalty modes (rad per step; module docstring).
    """

    t: np.ndarray
    q: np.ndarray
    fc: np.ndarray
    state: np.ndarray
    steps_per_period: int
    w: float
    v: np.ndarray | None = None
    energy_created: float = 0.0
    energy_in: float = 0.0
    wc_dt: float = 0.0


def _laws(el, fprev, uprev, state):
    """Affine law f = A u + b of one contact in a given state (local, normal minus N0)."""
    kt, mu = el.kt, el.mu
    if el.ncomp == 1:
        if state == 0:
            return np.array([[kt]]), np.array([fprev - kt * uprev[0]])
        xi = 1.0 if state == 1 else -1.0
        return np.zeros((1, 1)), np.array([xi * mu * el.n0])
    kn, n0 = el.kn, el.n0
    if state == 0:
        return np.array([[kt, 0.0], [0.0, kn]]), np.array([fprev - kt * uprev[0], 0.0])
    if state in (1, 2):
        xi = 1.0 if state == 1 else -1.0
        return np.array([[0.0, xi * mu * kn], [0.0, kn]]), np.array([xi * mu * n0, 0.0])
    return np.zeros((2, 2)), np.array([0.0, -n0])


def _state_of(el, fprev, uprev, u):
    N = el.n0 + (el.kn * float(u[1]) if el.ncomp == 2 else 0.0)
    if N <= 0:
        return 3
    trial = fprev + el.kt * float(u[0] - uprev[0])
    if trial > el.mu * N:
        return 1
    if trial < -el.mu * N:
        return 2
    return 0


def newmark(sys, alpha, w, **kwargs) -> TimeResult:
    """Integrate the structure with its contacts in time.

    Newmark average acceleration, ``periods`` excitation periods of ``alpha f_ex cos(w t)``,
    with an exact return mapping of the contact elements.

    Parameters
    ----------
    sys : HBSystem
        Structure, contacts and load pattern (its harmonic content is not used).
    alpha : float
        Force amplitude (N).
    w : float
        Excitation frequency (rad/s), > 0.
    periods : int, optional
        Excitation periods integrated (>= 1); default 100.
    steps_per_period : int, optional
        Time steps per period (>= 8); default 512 (time step ``2 pi / (w steps_per_period)``, s).
    q0, v0 : (n,) arrays, optional
        Initial displacement (m) and velocity (m/s); default rest.
    contact_init : list of float, optional
        Initial tangential force of each contact (N); default 0.
    record_periods : int, optional
        Number of final periods returned; default 1.
    progress : bool, optional
        tqdm progress bar over the steps.
    energy_tol : float, optional
        Share of the energy put in that the contact laws may create before a
        :class:`~fesub.errors.StepWarning` (default 0.01; module docstring).
    hht : float, optional
        Numerical dissipation of the Hilber-Hughes-Taylor rule (its ``-alpha``), in [0, 1/3]:
        the forces are taken at ``t_n+1 - hht dt``, with Newmark's ``beta = (1 + hht)^2 / 4``
        and ``gamma = 1/2 + hht``. Default 0: average acceleration. Above 0 a mode with
        ``w dt >> 1`` loses the factor ``(1 - hht) / (1 + hht)`` of its amplitude per step,
        while one resolved by the step keeps it to third order (damping ratio 2.7e-7 at
        ``w dt = 2 pi / 256`` for ``hht = 0.3``); still second-order accurate.

    Returns
    -------
    TimeResult
        Time (s), displacements (m), contact forces (N) and states of the last
        ``record_periods`` periods, and the run's energy balance.

    Raises
    ------
    ConvergenceError
        When a step's return mapping fails, or when the contacts have created more energy than
        was put in (the step does not resolve the contacts' penalty modes: ``w_c dt`` well
        above 1; more steps per period, or softer contacts).

    Warns
    -----
    StepWarning
        When the contacts have created more than ``energy_tol`` of the energy put in.

    Notes
    -----
    The step resolves a contact when ``w_c dt <= 1``, ``w_c = sqrt(k / m_c)`` its penalty
    mode's circular frequency (module docstring; ``TimeResult.wc_dt`` gives the run's largest).
    Stiff penalty contacts are far from it (the bundled bolted joint: ``w_c dt`` about 50 at
    256 steps per period); there a run is trustworthy only as far as its energy balance says,
    and ``hht > 0`` damps the unresolved contact modes instead of letting them alternate.
    """
    with single_thread_blas():
        return _newmark(sys, alpha, w, **kwargs)


def _newmark(sys: HBSystem, alpha, w, *, periods=100, steps_per_period=512, q0=None, v0=None,
             contact_init=None, record_periods=1, progress=False, energy_tol=0.01,
             hht=0.0) -> TimeResult:
    """Integrate ``periods`` excitation periods of ``alpha f_ex cos(w t)`` (N, rad/s).

    Parameters
    ----------
    sys : HBSystem
        Structure, contacts and load pattern (its harmonic content is not used).
    q0, v0 : (n,) arrays, optional
        Initial displacement (m) and velocity (m/s); default rest.
    contact_init : list of float, optional
        Initial tangential force of each contact (N); default 0.
    record_periods : int
        Number of final periods returned.
    """
    alpha = float(alpha)
    w = check_positive("w (rad/s)", w)
    three = [c.element.ncomp == 3 for c in sys.contacts]
    if any(three) and not all(three):
        raise ModelError("newmark integrates either Friction3D contacts or the scalar ones "
                         "(Jenkins, stick-slip-separation), not a mix of both")
    periods = int(periods)
    spp = int(steps_per_period)
    if periods < 1 or spp < 8:
        raise ParameterError("periods must be >= 1 and steps_per_period >= 8")
    energy_tol = check_positive("energy_tol", energy_tol)
    hht = check_range("hht", hht, 0.0, 1.0 / 3.0)
    record_periods = int(record_periods)
    if not 1 <= record_periods <= periods:
        raise ParameterError(f"record_periods must be in [1, periods={periods}], "
                             f"got {record_periods}")
    n = sys.n
    M, C, K = sys.M, sys.C, sys.K
    f0 = sys.fex[sys.h0 * n:(sys.h0 + 1) * n] * alpha     # the cosine of the fundamental
    dt = 2 * math.pi / w / spp
    # Hilber-Hughes-Taylor: the forces at t_n+1 - hht dt; hht = 0 is average acceleration
    beta, gamma = (1 + hht) ** 2 / 4, 0.5 + hht
    wf = 1.0 - hht
    a1 = 1.0 / (beta * dt * dt)
    a2 = 1.0 / (beta * dt)
    a3 = 1.0 / (2 * beta) - 1.0
    c1 = gamma / (beta * dt)
    c2 = gamma / beta - 1.0
    c3 = dt * (gamma / (2 * beta) - 1.0)
    Keff = wf * (K + c1 * C) + a1 * M
    Kinv = np.linalg.inv(Keff)
    els = [c.element for c in sys.contacts]
    Gs = [np.atleast_2d(c.G) for c in sys.contacts]
    G = np.vstack(Gs) if Gs else np.zeros((0, n))
    offs = np.cumsum([0] + [g.shape[0] for g in Gs])
    Z = Kinv @ G.T
    q = np.zeros(n) if q0 is None else np.asarray(q0, float).copy()
    v = np.zeros(n) if v0 is None else np.asarray(v0, float).copy()
    if q.shape != (n,) or v.shape != (n,):
        raise ParameterError(f"q0 and v0 must have shape ({n},)")
    if els and all(three):
        rmap = ReturnMap3D(els, wf * (G @ Z), G @ q, contact_init)
    else:
        rmap = _ReturnMap(els, offs, wf * (G @ Z), G @ q, contact_init)
    a = np.linalg.solve(M, f0 - C @ v - K @ q - G.T @ rmap.fc)
    # the contacts' penalty modes: w_c^2 = k g M^-1 g^T per contact row g
    gmg = np.einsum("ij,ji->i", G, np.linalg.solve(M, G.T)) if len(els) else np.zeros(0)
    krow, nrow = rmap.stiffness_rows() if len(els) else (np.zeros(0), np.zeros(0, bool))
    wc_dt = float(np.sqrt(krow * gmg).max() * dt) if len(els) else 0.0
    u, fc_old, phi = G @ q, rmap.fc.copy(), rmap.energies()
    energy_in = 0.5 * (v @ M @ v + q @ K @ q) + float(phi.sum())
    # energy the laws return beyond what they received: the normal springs' net balance (a
    # conservative law: zero when exact) and each step's excess of the frictional ones
    # (dissipative: never positive when exact)
    net_n, made_t, created, peak, cos_old, warned = 0.0, 0.0, 0.0, 0.0, 1.0, False
    nsteps = periods * spp
    nrec = record_periods * spp
    t_rec = np.empty(nrec)
    q_rec = np.empty((nrec, n))
    v_rec = np.empty((nrec, n))
    f_rec = np.empty((nrec, rmap.nc))
    s_rec = np.empty((nrec, len(els)), int)
    # condensed step operators: qlin = kf (wf cos(w t) + hht cos(w t_n)) + Bq q + Bv v + Ba a
    # - hht Z f_n, and q = qlin - wf Z f
    kf = Kinv @ f0
    Bq = Kinv @ (a1 * M + wf * c1 * C - hht * K)
    Bv = Kinv @ (a2 * M + wf * c2 * C - hht * C)
    Ba = Kinv @ (a3 * M + wf * c3 * C)
    GB = [G @ kf, G @ Bq, G @ Bv, G @ Ba, -hht * (G @ Z) if hht else None]
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=nsteps, desc="newmark", leave=False)
    for step in range(1, nsteps + 1):
        t = step * dt
        cwt = math.cos(w * t)
        load = wf * cwt + hht * cos_old
        ulin = GB[0] * load + GB[1] @ q + GB[2] @ v + GB[3] @ a
        if hht:
            ulin += GB[4] @ fc_old
        st, fcs = rmap.step(ulin, t)
        qn = kf * load + Bq @ q + Bv @ v + Ba @ a + Z @ (-hht * fc_old - wf * fcs)
        an = a1 * (qn - q) - a2 * v - a3 * a
        v = v + dt * ((1 - gamma) * a + gamma * an)
        # energy balance of each contact over the step: stored gain less the work received
        un, phin = G @ qn, rmap.energies()
        if len(els):
            work = (un - u) * (fc_old + fcs) * 0.5
            gain = phin - phi
            net_n += float(gain[:, 1].sum() - work[nrow].sum())
            made_t += float(np.maximum(
                gain[:, 0] - np.add.reduceat(np.where(nrow, 0.0, work), offs[:-1]), 0.0).sum())
            created = made_t + max(net_n, 0.0)
            peak = max(peak, created)
        energy_in += max(0.0, 0.5 * (cos_old + cwt) * float((qn - q) @ f0))
        u, fc_old, phi, cos_old = un, fcs, phin, cwt
        q, a = qn, an
        if created > energy_tol * energy_in and not warned:
            warned = True
            warnings.warn(_energy_message(t, created, energy_in, wc_dt, spp), StepWarning,
                          stacklevel=3)
        if created > energy_in:
            raise ConvergenceError("newmark stopped: " + _energy_message(
                t, created, energy_in, wc_dt, spp))
        k = step - (nsteps - nrec) - 1
        if k >= 0:
            t_rec[k], q_rec[k], v_rec[k], s_rec[k] = t, q, v, st
            f_rec[k] = rmap.total(fcs)
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    return TimeResult(t_rec, q_rec, f_rec, s_rec, spp, w, v_rec, peak, energy_in, wc_dt)


def _energy_message(t, created, energy_in, wc_dt, spp):
    return (f"by t={t:.6g} s the contact laws have created {created:.3g} J, "
            f"{created / energy_in:.3g} of the energy put in ({energy_in:.3g} J): the step does "
            f"not resolve the contacts' penalty modes (max w_c dt = {wc_dt:.3g} at "
            f"{spp} steps per period; resolved when <= 1), so contacts that close, open or slip "
            f"within a step return energy they did not receive. Use more steps per period "
            f"(about {math.ceil(spp * wc_dt)} resolve them), softer contact stiffnesses, or "
            f"the numerical dissipation hht (e.g. 0.3) that damps the unresolved modes")


class _ReturnMap:
    """Exact return mapping of the scalar contacts in one step, condensed on the contact
    coordinates (``S = G K_eff^{-1} G^T``): for a combination of states the laws are affine and
    the contact displacements follow from one linear solve. Holds each contact's tangential
    force (N), local displacement (m) and state of the last step."""

    def __init__(self, els, offs, S, u0, contact_init):
        self.els, self.offs, self.S = els, offs, S
        self.nc = S.shape[0]
        self.combos = list(itertools.product(*[range(4 if el.ncomp == 2 else 3) for el in els]))
        self.slopes = {}
        self.fprev = [0.0] * len(els) if contact_init is None else \
            [float(x) for x in contact_init]
        if len(self.fprev) != len(els):
            raise ParameterError(f"contact_init must hold {len(els)} tangential forces (N)")
        self.uprev = [u0[offs[i]:offs[i + 1]].copy() for i in range(len(els))]
        self.states = [_state_of(el, self.fprev[i], self.uprev[i], self.uprev[i])
                       for i, el in enumerate(els)]
        fc = np.zeros(self.nc)
        for i, el in enumerate(els):
            if el.ncomp == 1:
                fc[offs[i]] = self.fprev[i]
            else:
                N = max(el.n0 + el.kn * self.uprev[i][1], 0.0)
                fc[offs[i]:offs[i + 1]] = [self.fprev[i] if N > 0 else 0.0, N - el.n0]
        #: contact forces at t = 0 (N; normal ones minus N0)
        self.fc = fc

    def step(self, ulin, t):
        """States and contact forces (N; normal ones minus N0) at the end of the step at time
        ``t`` (s) from the linear predictor ``ulin`` (m); the history is advanced."""
        st, uc, fcs = self._consistent(self.states, ulin, self.fprev, self.uprev, t)
        for i, el in enumerate(self.els):
            self.fprev[i] = 0.0 if st[i] == 3 else float(fcs[self.offs[i]])
            self.uprev[i] = uc[self.offs[i]:self.offs[i + 1]]
        self.states = st
        return st, fcs

    def energies(self):
        """Energy (J) each contact stores at the last step, (ncontacts, 2): tangential
        ``f_t^2 / (2 kt)`` and, with a normal, ``max(N, 0)^2 / (2 kn) - n0 un`` less its
        minimum ``n0^2 / (2 kn)`` (both >= 0)."""
        out = np.zeros((len(self.els), 2))
        for i, el in enumerate(self.els):
            out[i, 0] = 0.5 * self.fprev[i] ** 2 / el.kt
            if el.ncomp == 2:
                un = float(self.uprev[i][1])
                N = max(el.n0 + el.kn * un, 0.0)
                out[i, 1] = (N * N - el.n0 ** 2) / (2 * el.kn) - el.n0 * un
        return out

    def stiffness_rows(self):
        """The stiffness (N/m) of each contact component, ``kt`` (and ``kn``), and whether it
        is a normal one."""
        k = np.concatenate([[el.kt, el.kn] if el.ncomp == 2 else [el.kt] for el in self.els])
        normal = np.concatenate([[False, True] if el.ncomp == 2 else [False]
                                 for el in self.els])
        return k, normal

    def total(self, fcs):
        """The contact forces (N) with the normal preload N0 added back."""
        out = fcs.copy()
        for i, el in enumerate(self.els):
            if el.ncomp == 2:
                out[self.offs[i] + 1] += el.n0
        return out

    def solve(self, st, ulin, fprev, uprev):
        """Contact displacements (m) and forces (N) for the states ``st``, from the linear
        predictor ``ulin`` (m)."""
        els, offs, nc = self.els, self.offs, self.nc
        key = tuple(st)
        if key not in self.slopes:
            A = np.zeros((nc, nc))
            for i, el in enumerate(els):
                sl = slice(offs[i], offs[i + 1])
                A[sl, sl] = _laws(el, 0.0, np.zeros(el.ncomp), st[i])[0]
            self.slopes[key] = (A, np.linalg.inv(np.eye(nc) + self.S @ A))
        A, inv = self.slopes[key]
        b = np.empty(nc)
        for i, el in enumerate(els):
            b[offs[i]:offs[i + 1]] = _laws(el, fprev[i], uprev[i], st[i])[1]
        uc = inv @ (ulin - self.S @ b)
        return uc, A @ uc + b

    def states_at(self, uc, fprev, uprev):
        """The state each contact takes at the contact displacements ``uc`` (m)."""
        offs = self.offs
        return [_state_of(el, fprev[i], uprev[i], uc[offs[i]:offs[i + 1]])
                for i, el in enumerate(self.els)]

    def _consistent(self, states, ulin, fprev, uprev, t):
        """The consistent state combination at time ``t`` (s), its contact displacements (m)
        and forces (N): a fixed point on the states from ``states`` (the previous step), else an
        exhaustive search. ConvergenceError when no combination is consistent."""
        tried = set()
        st = list(states)
        for _ in range(4 * len(self.els) + 4):
            key = tuple(st)
            if key in tried:
                break
            tried.add(key)
            uc, fcs = self.solve(st, ulin, fprev, uprev)
            new = self.states_at(uc, fprev, uprev)
            if new == st:
                return st, uc, fcs
            st = new
        for combo in self.combos:
            if combo in tried:
                continue
            uc, fcs = self.solve(list(combo), ulin, fprev, uprev)
            if tuple(self.states_at(uc, fprev, uprev)) == combo:
                return list(combo), uc, fcs
        raise ConvergenceError(f"return mapping found no consistent contact state at "
                               f"t={t:.6g} s")


def fundamental(res: TimeResult, dof: int, harmonic: int = 1):
    """Amplitude (m) of harmonic ``harmonic`` of ``q[:, dof]`` over the last recorded period.

    Parameters
    ----------
    res : TimeResult
        A time integration (displacements in m, frequency ``w`` in rad/s).
    dof : int
        Index of the DOF.
    harmonic : int, optional
        Harmonic order (1 = fundamental, at ``w``); default 1.

    Returns
    -------
    float
        Amplitude of that harmonic (m).
    """
    spp = res.steps_per_period
    x = res.q[-spp:, dof]
    th = harmonic * res.w * res.t[-spp:]
    c = 2.0 / spp * np.sum(x * np.cos(th))
    s = 2.0 / spp * np.sum(x * np.sin(th))
    return math.hypot(c, s)


def harmonics(res: TimeResult, nh: int, *, constant: bool = False):
    """Fourier coefficients (m) of all DOFs over the last recorded period, in the layout of a
    harmonic balance's ``Q`` (blocks of the n DOFs: cos 1, sin 1, ..., cos nh, sin nh; with
    ``constant`` the mean block first).

    Parameters
    ----------
    res : TimeResult
        A time integration (displacements in m, frequency ``w`` in rad/s).
    nh : int
        Harmonics (>= 1).
    constant : bool, optional
        Put the mean first (the layout of ``HBSystem(constant=True)``); default False.

    Returns
    -------
    ((2 nh + constant) n,) ndarray
        The coefficients (m).
    """
    nh = check_count("nh", nh, 1)
    spp = res.steps_per_period
    x, th = res.q[-spp:], res.w * res.t[-spp:]
    rows = [x.mean(axis=0)] if constant else []
    for h in range(1, nh + 1):
        rows += [2.0 / spp * (np.cos(h * th) @ x), 2.0 / spp * (np.sin(h * th) @ x)]
    return np.concatenate(rows)


def initial_from_hb(sys: HBSystem, Q, w, *, nt: int = 2048):
    """(q0, v0, contact_init) at t = 0 from a harmonic-balance solution (m, m/s, N).

    Parameters
    ----------
    sys : HBSystem
        The system the solution was computed on.
    Q : (N,) array
        Harmonic coefficients (m), blocks of the n DOFs: cos 1, sin 1, cos 2, ...
    w : float
        Frequency of the solution (rad/s).
    nt : int, optional
        Samples per period of the contact force histories whose value at t = 0 is taken
        (default 2048; for :class:`~fesub.hbm.Friction3D` contacts, the time integration's
        steps per period puts the integrator on the same samples).

    Returns
    -------
    q0 : (n,) ndarray
        Displacement at t = 0 (m).
    v0 : (n,) ndarray
        Velocity at t = 0 (m/s).
    contact_init : list of float, or (ncontacts, 2) ndarray
        Tangential force of each contact at t = 0 (N); both tangential components for
        :class:`~fesub.hbm.Friction3D` contacts; without the constant term their sample at
        t = 0 is taken less the mean over the period (the decoupled scheme has no mean; onto
        the circle ``mu f_n`` if that puts it outside).
    """
    from .contact import force_history
    from .friction3d import force_history_3d

    n, nh, h0 = sys.n, sys.nh, sys.h0
    Qm = np.asarray(Q).reshape(sys.m, n)
    q0 = Qm[h0::2].sum(axis=0) + (Qm[0] if h0 else 0.0)     # the cosines and the mean
    k = np.arange(1, nh + 1)[:, None]
    v0 = (w * k * Qm[h0 + 1::2]).sum(axis=0)
    finit = []
    for c, P in zip(sys.contacts, sys.P):
        if c.element.ncomp == 3:
            H = force_history_3d(c.element, P @ Q, nh, nt)
            ft = H[0, :2].copy()
            if not sys.constant:
                # the decoupled scheme drops the mean of the force: the time integration
                # starts without it (a stuck element would otherwise keep one that the
                # structure does not carry)
                ft -= H[:, :2].mean(axis=0)
            lim = c.element.mu * H[0, 2]
            r = math.hypot(*ft)
            finit.append(ft * (lim / r) if r > lim else ft)
            continue
        fx, _, _ = force_history(c.element, P @ Q, nh, nt)
        finit.append(float(fx[0]))
    if sys.contacts and sys.contacts[0].element.ncomp == 3:
        finit = np.array(finit)
    return q0, v0, finit
