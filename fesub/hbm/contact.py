"""Friction contact elements for harmonic balance: Fourier coefficients, stiffness, Hessian.

Two elements (spec section 1.5):

* :class:`StickSlipSeparation` -- Yang / Petrov-Ewins 2D element with variable normal load:
  tangential relative displacement ``x(tau) = H^T X``, normal ``y(tau) = H^T Y`` (zero-mean
  dynamic parts), ``f_y = max(N0 + kn y, 0)``, tangential stick ``f_x = c_j + kt x`` /
  slip ``f_x = xi mu f_y`` / separation ``f_x = 0``.
* :class:`Jenkins` -- the 1D special case with a constant normal load (``kn y == 0``): slip force
  ``fs = mu N0``.

Fourier coefficients (``F = (1/pi) int_0^{2pi} H f dtau``, the mean is discarded) are computed by
the **event method**: the exact transition times are found by the compiled march
(``fesub._core.hbm``), the law is affine in ``p = [X; Y]`` on every interval, and the integrals
``W_j = (1/pi) int H H^T``, ``w_j = (1/pi) int H`` are closed forms (force and stiffness of the
whole cycle in one compiled call, ``cycle_forces`` of the same kernel). A second, independent
method (**AFT**: time sampling, discrete return map, FFT-like projection) is provided for
cross-checks.

Stiffness ``K = dF/dp`` and the Hessian tensor ``Hes[i, a, b] = d K[i, a] / d p_b`` are analytic.
The Hessian uses the clean form of the spec (equivalent to paper eqs. 44-63)::

    Hes_i = sum_{stick j} w_j[i] d2c_j/dp2
          + sum_{transitions t} (1/pi) H_i(tau_t) (df^-/dp - df^+/dp)(tau_t) (dtau_t/dp)^T

with ``c_j = f_x(tau_j) - kt x(tau_j)`` the offset of the stick interval starting at ``tau_j``.
The paper's printed eqs. 50-53 contain index typos (eq. 52 should pair ``dtau/dY dtau/dX``, eq. 53
``y'' dtau/dY dtau/dY``); the clean form is derived independently and verified against central
finite differences in the tests. Transition-time sensitivities for stick->slip and
contact->separation (not given in the paper) follow from implicit differentiation of their
defining conditions ``g(tau, p) = 0``: ``dtau/dp = -g_p / g_tau``.

Normal-axis convention: ``f_y = N0 + kn y``, so contact is lost when ``N0 + kn y`` decreases
through 0 and regained when it increases through 0 (the paper's printed signs of ``y'`` assume the
opposite orientation; the implementation uses the sign of ``d(N0 + kn y)/dtau``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._backend import kernels
from ..errors import ConvergenceError, ParameterError, check_count, check_positive
from ..limits import check_steps
from .fourier import aft_matrix, basis, check_nh, interval_w

__all__ = ["StickSlipSeparation", "Jenkins", "ContactResult", "STICK", "SLIP_POS", "SLIP_NEG",
           "SEPARATION"]

STICK, SLIP_POS, SLIP_NEG, SEPARATION = 0, 1, 2, 3
_XI = {SLIP_POS: 1.0, SLIP_NEG: -1.0}


@dataclass
class ContactResult:
    """Fourier coefficients of one element and their derivatives (local ordering ``p``).

    Parameters
    ----------
    F : (m,) array
        Force coefficients (N), ``m = 4 nh`` (2D: ``[F_x; F_y]``) or ``2 nh`` (1D).
    K : (m, m) array
        ``dF/dp`` (N/m). Not symmetric in 2D.
    hess : (m, m, m) array or None
        ``hess[i, a, b] = d K[i, a] / d p_b`` (N/m^2), each ``hess[i]`` symmetric.
    hess_lam : (m, m) array or None
        ``sum_i lam_i hess[i]`` for the multiplier vector given (N/m^2 times the unit of
        ``lam``).
    tau, from_state, to_state : arrays
        Transition times (rad, in [0, 2 pi]) and states (0 stick, 1 slip+, 2 slip-, 3 separation).
    state0 : int
        State at tau = 0.
    """

    F: np.ndarray
    K: np.ndarray
    hess: np.ndarray | None
    hess_lam: np.ndarray | None
    tau: np.ndarray
    from_state: np.ndarray
    to_state: np.ndarray
    state0: int


def _march(X, Y, nh, kx, ky, mu, n0, ngrid):
    k = kernels("hbm")
    cap = 16 * nh + 16
    X = np.ascontiguousarray(X, float)
    Y = np.ascontiguousarray(Y, float)
    if X.shape != (2 * nh,) or Y.shape != (2 * nh,):
        raise ParameterError(f"X and Y must have shape ({2 * nh},), got {X.shape}, {Y.shape}")
    if not (np.all(np.isfinite(X)) and np.all(np.isfinite(Y))):
        raise ParameterError("contact displacement coefficients X, Y contain NaN or inf")
    work = np.empty(10 * nh)
    tau = np.empty(cap)
    fr = np.empty(cap, np.intc)
    to = np.empty(cap, np.intc)
    info = np.zeros(2, np.intc)
    fscale = mu * n0 + kx * np.abs(X).sum() + ky * (1 + mu) * np.abs(Y).sum()
    tol = 1e-13 * fscale * nh
    n = k.march(X, Y, nh, float(kx), float(ky), float(mu), float(n0), int(ngrid), float(tol),
                work, tau, fr, to, info)
    if n < 0:
        raise ConvergenceError(f"contact element: more than {cap} transitions per period "
                               "(chattering); reduce the harmonic content or refine ngrid")
    # the recorded period is marched forward from tau = 0: the times come out sorted
    return tau[:n], fr[:n], to[:n], int(info[0])


class StickSlipSeparation:
    """2D stick-slip-separation friction element with variable normal load.

    Parameters
    ----------
    kt : float
        Tangential contact stiffness (N/m), > 0.
    kn : float
        Normal contact stiffness (N/m), > 0.
    mu : float
        Friction coefficient (-), >= 0.
    n0 : float
        Static normal preload (N), > 0.
    """

    ncomp = 2
    #: index of the normal component
    normal_component = 1

    def __init__(self, kt: float, kn: float, mu: float, n0: float):
        self.kt = check_positive("kt (tangential contact stiffness, N/m)", kt)
        self.kn = check_positive("kn (normal contact stiffness, N/m)", kn)
        self.mu = check_positive("mu (friction coefficient)", mu, strict=False)
        self.n0 = check_positive("n0 (normal preload, N)", n0)

    @property
    def stiffnesses(self):
        """Per component the stuck stiffness (N/m): ``(kt, kn)``."""
        return (self.kt, self.kn)

    # ------------------------------------------------------------------ helpers
    def _split(self, p, nh):
        p = np.asarray(p, float).ravel()
        if p.size != 4 * nh:
            raise ParameterError(f"p must have length 4*nh = {4 * nh}, got {p.size}")
        return p[:2 * nh], p[2 * nh:]

    def evaluate(self, p, nh: int, *, hessian: bool = False, lam=None, ngrid: int | None = None,
                 method: str = "event", nt: int | None = None) -> ContactResult:
        """Fourier coefficients, stiffness and (optionally) Hessian at ``p = [X; Y]`` (m).

        Parameters
        ----------
        p : (4 nh,) array
            Relative displacement coefficients (m), tangential then normal.
        nh : int
            Number of harmonics.
        hessian : bool
            Return the full Hessian tensor (event method only).
        lam : (4 nh,) array, optional
            Multipliers; return ``sum_i lam_i hess[i]`` (event method only).
        ngrid : int, optional
            Grid steps per period of the transition search (default ``64 nh``).
        method : {'event', 'aft'}
        nt : int, optional
            AFT samples per period (default ``max(256, 64 nh)``: 448 at nh = 7; the harmonic
            forces converge as ``nt^-2``, about 5e-5 relative to the event method there).
        """
        nh = check_nh(nh)
        X, Y = self._split(p, nh)
        return _evaluate(X, Y, nh, self.kt, self.kn, self.mu, self.n0, hessian, lam, ngrid,
                         method, nt, twod=True)


class Jenkins:
    """1D Jenkins element (constant normal load): spring ``kt`` in series with a slider ``fs``.

    Parameters
    ----------
    kt : float
        Tangential stiffness (N/m), > 0.
    mu : float
        Friction coefficient (-), >= 0.
    n0 : float
        Constant normal load (N), > 0. Slip force ``fs = mu n0`` (N).
    """

    ncomp = 1
    #: no normal component (constant normal load)
    normal_component = None

    def __init__(self, kt: float, mu: float, n0: float):
        self.kt = check_positive("kt (tangential contact stiffness, N/m)", kt)
        self.mu = check_positive("mu (friction coefficient)", mu, strict=False)
        self.n0 = check_positive("n0 (normal load, N)", n0)

    @property
    def stiffnesses(self):
        """Per component the stuck stiffness (N/m): ``(kt,)``."""
        return (self.kt,)

    @property
    def fs(self) -> float:
        """Slip force (N)."""
        return self.mu * self.n0

    def evaluate(self, p, nh: int, *, hessian: bool = False, lam=None, ngrid: int | None = None,
                 method: str = "event", nt: int | None = None) -> ContactResult:
        """As :meth:`StickSlipSeparation.evaluate` with ``p = X`` (2 nh,) (m)."""
        nh = check_nh(nh)
        X = np.asarray(p, float).ravel()
        if X.size != 2 * nh:
            raise ParameterError(f"p must have length 2*nh = {2 * nh}, got {X.size}")
        lam2 = None if lam is None else np.concatenate([np.asarray(lam, float).ravel(),
                                                        np.zeros(2 * nh)])
        r = _evaluate(X, np.zeros(2 * nh), nh, self.kt, 0.0, self.mu, self.n0, hessian, lam2,
                      ngrid, method, nt, twod=False)
        m = 2 * nh
        return ContactResult(
            F=r.F[:m], K=r.K[:m, :m], hess=None if r.hess is None else r.hess[:m, :m, :m],
            hess_lam=None if r.hess_lam is None else r.hess_lam[:m, :m], tau=r.tau,
            from_state=r.from_state, to_state=r.to_state, state0=r.state0)


def _evaluate(X, Y, nh, kx, ky, mu, n0, want_hess, lam, ngrid, method, nt, twod):
    """Harmonic contact force, stiffness and (optionally) Hessian by the event method (the
    transitions of the exact periodic cycle) or by AFT; see :class:`StickSlipSeparation`."""
    if method == "aft":
        return _evaluate_aft(X, Y, nh, kx, ky, mu, n0, want_hess, lam, nt)
    if method != "event":
        raise ParameterError(f"method must be 'event' or 'aft', got {method!r}")
    ngrid = check_count("ngrid (samples of the event search)", ngrid, 8) if ngrid is not None else 64 * nh
    check_steps("samples per period (ngrid)", ngrid, bytes_each=8.0 * (4 * nh + 8))
    m = 2 * nh
    mp = 4 * nh
    if not twod and kx * _amplitude_sum(X, nh) < mu * n0 * (1.0 - 1e-9):
        # 1D: the elastic force kx x(t) spans at most 2 kx sum_k |X_k| < 2 mu n0, so the
        # element stays stuck over the cycle (no transition; the march would find none)
        tau, fr, to, state0 = np.zeros(0), np.zeros(0, np.intc), np.zeros(0, np.intc), STICK
    else:
        tau, fr, to, state0 = _march(X, Y, nh, kx, ky, mu, n0, ngrid)
    lam = None if lam is None else np.asarray(lam, float).ravel()
    if lam is not None and lam.size != mp:
        raise ParameterError(f"lam must have length {mp}, got {lam.size}")
    F = np.zeros(mp)
    K = np.zeros((mp, mp))
    hess = np.zeros((mp, mp, mp)) if want_hess else None
    hl = np.zeros((mp, mp)) if lam is not None else None
    nev = tau.size
    if nev == 0:
        if state0 == STICK:  # linear (fully stuck, slider offset only moves the mean)
            F[:m] = kx * X
            F[m:] = ky * Y
            K[:m, :m] = kx * np.eye(m)
            K[m:, m:] = ky * np.eye(m)
        return ContactResult(F, K, hess, hl, tau, fr, to, state0)
    # consistency of the recorded cycle
    for j in range(nev):
        if fr[(j + 1) % nev] != to[j]:
            raise ConvergenceError("contact element: inconsistent transition sequence "
                                   f"{list(zip(fr, to))} (march did not reach a periodic cycle)")
    # force and stiffness: every interval of the cycle in one compiled call
    k = kernels("hbm")
    args = (X, Y, nh, float(kx), float(ky), float(mu), float(n0), tau, fr, to)
    k.cycle_forces(*args, F, K, np.empty(4 * nh * nh + 12 * nh + 2))
    if lam is not None and not want_hess:
        # the contraction alone, compiled too (the tensor below is for the checks)
        k.cycle_hess_lam(*args, lam, hl, np.empty((nev + 7) * mp))
    elif want_hess:
        tr = _Transitions(nh, tau, X, Y)
        wj = interval_w(nh, tau, np.append(tau[1:], tau[0] + 2 * math.pi))
        _, dc, d2c = _stick_offsets(tr, fr, to, kx, ky, mu, n0, True)
        _curvature_terms(hess, hl, lam, tr, fr, to, wj, dc, d2c, kx, ky, mu)
    return ContactResult(F, K, hess, hl, tau, fr, to, state0)


def _amplitude_sum(X, nh):
    """``sum_k |X_k|`` (m), the harmonic amplitudes of ``X = [c1, s1, ..., cnh, snh]``: a
    bound on ``max |x(t)|``."""
    X = np.asarray(X, float)
    return float(np.hypot(X[0:2 * nh:2], X[1:2 * nh:2]).sum())


def _evaluate_aft(X, Y, nh, kx, ky, mu, n0, want_hess, lam, nt):
    """Force and stiffness by AFT (:func:`_aft`); no Hessian."""
    if want_hess or lam is not None:
        raise ParameterError("the AFT method has no Hessian (piecewise-linear discrete map); "
                             "use method='event'")
    nt = check_count("nt (samples per period)", nt, 1) if nt is not None else max(256, 64 * nh)
    check_steps("samples per period (nt)", nt, bytes_each=8.0 * (4 * nh + 8))
    if nt < 4 * nh + 2:
        raise ParameterError(f"nt must be >= 4 nh + 2 = {4 * nh + 2}, got {nt}")
    F, K = _aft(X, Y, nh, kx, ky, mu, n0, nt)
    e = np.zeros(0)
    return ContactResult(F, K, None, None, e, e.astype(int), e.astype(int), -1)


class _Transitions:
    """Fourier rows at the transition times ``tau`` (``Hs``, ``Hd``, ``Hdd``: value, first and
    second derivative) and the relative displacements there (``x``, ``xd``, ``xdd`` tangential,
    ``y``, ``yd``, ``ydd`` normal, m and m/rad^k); ``vx``/``vy`` place a row of ``2 nh``
    entries in the tangential/normal half of the ``4 nh`` unknowns."""

    def __init__(self, nh, tau, X, Y):
        self.m, self.mp = 2 * nh, 4 * nh
        self.Hs = basis(nh, tau, 0)
        self.Hd = basis(nh, tau, 1)
        self.Hdd = basis(nh, tau, 2)
        self.x, self.xd, self.xdd = self.Hs @ X, self.Hd @ X, self.Hdd @ X
        self.y, self.yd, self.ydd = self.Hs @ Y, self.Hd @ Y, self.Hdd @ Y

    def vx(self, v):
        out = np.zeros(self.mp)
        out[:self.m] = v
        return out

    def vy(self, v):
        out = np.zeros(self.mp)
        out[self.m:] = v
        return out


def _stick_offsets(tr, fr, to, kx, ky, mu, n0, curvature):
    """Slider offsets ``c_j`` (N) of the stick intervals and their first (and, with
    ``curvature``, second) derivatives in the unknowns, by the transition that starts them."""
    nev = len(to)
    Hs, Hd, vx, vy = tr.Hs, tr.Hd, tr.vx, tr.vy
    x, xd, xdd, y, yd, ydd = tr.x, tr.xd, tr.xdd, tr.y, tr.yd, tr.ydd
    c = np.zeros(nev)
    dc = [None] * nev
    d2c = [None] * nev
    for j in range(nev):
        if to[j] != STICK:
            continue
        if fr[j] in _XI:  # slip -> stick
            xi = _XI[fr[j]]
            c[j] = xi * mu * (n0 + ky * y[j]) - kx * x[j]
            gp = xi * kx * vx(Hd[j]) - mu * ky * vy(Hd[j])
            gt = xi * kx * xdd[j] - mu * ky * ydd[j]
            dtau = -gp / gt
            dc[j] = xi * mu * ky * vy(Hs[j]) - kx * vx(Hs[j])
            if curvature:
                ppt = xi * mu * ky * vy(Hd[j]) - kx * vx(Hd[j])
                ptt = xi * mu * ky * ydd[j] - kx * xdd[j]
                d2c[j] = np.outer(ppt, dtau) + np.outer(dtau, ppt) + ptt * np.outer(dtau, dtau)
        elif fr[j] == SEPARATION:  # re-contact in stick
            c[j] = -kx * x[j]
            dtau = -vy(Hs[j]) / yd[j]
            dc[j] = -kx * (vx(Hs[j]) + xd[j] * dtau)
            if curvature:
                gpt = ky * vy(Hd[j])
                d2tau = -(np.outer(gpt, dtau) + np.outer(dtau, gpt)
                          + ky * ydd[j] * np.outer(dtau, dtau)) / (ky * yd[j])
                hx = vx(Hd[j])
                d2c[j] = -kx * (np.outer(hx, dtau) + np.outer(dtau, hx)
                                + xdd[j] * np.outer(dtau, dtau) + xd[j] * d2tau)
        else:  # pragma: no cover - the march never produces stick -> stick
            raise ConvergenceError("contact element: stick interval without a starting transition")
    return c, dc, d2c


def _curvature_terms(hess, hl, lam, tr, fr, to, wj, dc, d2c, kx, ky, mu):
    """Add the Hessian (``hess``, N/m^2) and its contraction with ``lam`` (``hl``): the
    curvature of the stick offsets and the jump terms at the transitions."""
    nev = len(to)
    m, mp = tr.m, tr.mp
    Hs, vx, vy, xd, yd = tr.Hs, tr.vx, tr.vy, tr.xd, tr.yd
    ipi = 1.0 / math.pi
    # ---- stick-interval curvature of c_j
    for j in range(nev):
        if to[j] == STICK:
            if hess is not None:
                hess[:m] += wj[j][:, None, None] * d2c[j][None, :, :]
            if hl is not None:
                hl += (lam[:m] @ wj[j]) * d2c[j]

    # ---- transition (limit) terms
    def dlaw(state, j_stick, t):
        if state == STICK:
            return kx * vx(Hs[t]) + dc[j_stick], ky * vy(Hs[t])
        if state == SEPARATION:
            return np.zeros(mp), np.zeros(mp)
        return _XI[state] * mu * ky * vy(Hs[t]), ky * vy(Hs[t])

    for t in range(nev):
        jb = (t - 1) % nev  # interval before transition t
        sb, sa = fr[t], to[t]
        if sb in _XI and sa == STICK:
            continue  # slip -> stick: the law is C1 in p there (jump = 0)
        if sb == STICK and sa in _XI:
            xs = _XI[sa]
            gp = kx * vx(Hs[t]) + dc[jb] - xs * mu * ky * vy(Hs[t])
            gt = kx * xd[t] - xs * mu * ky * yd[t]
            dtau = -gp / gt
        else:  # any transition defined by N0 + ky y = 0
            dtau = -vy(Hs[t]) / yd[t]
        fxb, fyb = dlaw(sb, jb, t)
        fxa, fya = dlaw(sa, t, t)
        jx, jy = fxb - fxa, fyb - fya
        Ht = Hs[t]
        if hess is not None:
            hess[:m] += ipi * Ht[:, None, None] * np.outer(jx, dtau)[None]
            hess[m:] += ipi * Ht[:, None, None] * np.outer(jy, dtau)[None]
        if hl is not None:
            hl += ipi * np.outer((lam[:m] @ Ht) * jx + (lam[m:] @ Ht) * jy, dtau)


def _aft(X, Y, nh, kx, ky, mu, n0, nt):
    """Alternating frequency/time method with the discrete return map (2 periods).

    The scalar return map is marched over two periods (the first erases the provisional start);
    the derivative of the discrete map is exact: in a stick run that began after sample ``L``,
    ``d f_x = kt (E_i - E_L)`` (X part) plus the Y part of ``d f_x`` at ``L``; in slip
    ``d f_x = xi mu kn E_i`` (Y part); in separation 0. After a separation the spring origin is
    the re-contact point ``x_c = x_L + theta (x_{L+1} - x_L)``, ``theta`` from linear
    interpolation of ``N0 + kn y`` between the samples (the re-contact time depends on Y: with
    ``x_L`` as the origin the force would carry an O(1/nt) offset over the whole stick
    interval and ``dF_x/dY`` would miss the term ``-kt x' dtau/dY``, spec eq. 41/43); then
    ``d x_c = (1 - theta) E_L + theta E_{L+1}`` (X) ``+ (x_{L+1} - x_L) d theta`` (Y).
    """
    m = 2 * nh
    E = aft_matrix(nh, nt)
    xs, ys = E @ X, E @ Y
    fx, fy, st, xis, th = _return_map_march(xs, ys, kx, ky, mu, n0, 2)
    n2 = 2 * nt
    st = np.array(st)
    xis = np.array(xis)
    idx = np.arange(n2)
    last = np.maximum.accumulate(np.where(st != 0, idx, -1))
    sel = slice(nt, n2)
    Ei = E[idx[sel] % nt]
    L = last[sel]
    s2 = st[sel]
    dfx = np.zeros((nt, 2 * m))
    dfy = np.zeros((nt, 2 * m))
    contact = s2 != 2
    dfy[contact, m:] = ky * Ei[contact]
    slip = s2 == 1
    dfx[slip, m:] = (xis[sel][slip] * mu * ky)[:, None] * Ei[slip]
    stick = s2 == 0
    if np.any(stick):
        Ls = L[stick]
        EL = np.where((Ls >= 0)[:, None], E[np.maximum(Ls, 0) % nt], E[-1])
        dfx[stick, :m] = kx * (Ei[stick] - EL)
        from_slip = (Ls >= 0) & (st[np.maximum(Ls, 0)] == 1)
        rows = np.flatnonzero(stick)[from_slip]
        dfx[rows, m:] = (xis[Ls[from_slip]] * mu * ky)[:, None] * E[Ls[from_slip] % nt]
        # stick after a re-contact: origin at the interpolated contact point (see above)
        from_sep = (Ls >= 0) & (st[np.maximum(Ls, 0)] == 2)
        if np.any(from_sep):
            rows = np.flatnonzero(stick)[from_sep]
            a_, b_ = Ls[from_sep] % nt, (Ls[from_sep] + 1) % nt
            t_ = np.array(th)[Ls[from_sep] + 1][:, None]
            dfx[rows, :m] = kx * (Ei[rows] - (1 - t_) * E[a_] - t_ * E[b_])
            Na, Nb = n0 + ky * ys[a_], n0 + ky * ys[b_]
            dth = ky * (Na[:, None] * E[b_] - Nb[:, None] * E[a_]) / ((Nb - Na) ** 2)[:, None]
            dfx[rows, m:] = -kx * (xs[b_] - xs[a_])[:, None] * dth
    fxa = np.array(fx[nt:])
    fya = np.array(fy[nt:])
    F = np.concatenate([(2.0 / nt) * E.T @ fxa, (2.0 / nt) * E.T @ fya])
    K = np.vstack([(2.0 / nt) * E.T @ dfx, (2.0 / nt) * E.T @ dfy])
    return F, K


def _return_map_march(xs, ys, kx, ky, mu, n0, periods):
    """Discrete return map over ``periods`` repetitions of the samples (start: f_x = 0).

    Returns ``(fx, fy, state, xi, theta)``; ``theta[k]`` is the interpolated re-contact
    fraction between samples ``k - 1`` (separated) and ``k`` (0 elsewhere).
    """
    xs = np.asarray(xs, float).tolist()
    ys = np.asarray(ys, float).tolist()
    nt = len(xs)
    n2 = periods * nt
    fx = [0.0] * n2
    fy = [0.0] * n2
    st = [0] * n2          # 0 stick, 1 slip, 2 separation
    xis = [0.0] * n2
    th = [0.0] * n2
    f_prev = 0.0
    x_prev = xs[-1]
    N_prev = n0 + ky * ys[-1]
    sep_prev = False
    for k in range(n2):
        i = k % nt
        Nr = n0 + ky * ys[i]
        N = Nr
        if N <= 0:
            f, N, s, xi = 0.0, 0.0, 2, 0.0
        else:
            x_ref = x_prev
            if sep_prev:  # re-contact: spring origin at the interpolated contact point
                t = -N_prev / (Nr - N_prev)
                th[k] = t
                x_ref = x_prev + t * (xs[i] - x_prev)
            trial = f_prev + kx * (xs[i] - x_ref)
            lim = mu * N
            if trial > lim:
                f, s, xi = lim, 1, 1.0
            elif trial < -lim:
                f, s, xi = -lim, 1, -1.0
            else:
                f, s, xi = trial, 0, 0.0
        fx[k], fy[k], st[k], xis[k] = f, N, s, xi
        f_prev, x_prev, N_prev, sep_prev = f, xs[i], Nr, s == 2
    return fx, fy, st, xis, th


def force_history(element, p, nh: int, nt: int = 1024):
    """Steady-state contact forces over one period sampled at ``tau_i = 2 pi i / nt``.

    Returns ``(fx, fy, state)`` arrays (N, N, 0 stick / 1 slip / 2 separation), from the discrete
    return map marched over three periods on the harmonic displacement ``p`` (m).

    Parameters
    ----------
    element : Jenkins or StickSlipSeparation
        The contact element (stiffnesses ``kt``, ``kn`` in N/m, friction coefficient ``mu``
        dimensionless, normal preload ``n0`` in N).
    p : array_like
        Harmonic coefficients of the local relative displacement (m): tangential ``X`` (2 nh),
        then normal ``Y`` (2 nh) for the 2D element; cos 1, sin 1, cos 2, ... (no mean).
    nh : int
        Number of harmonics.
    nt : int, optional
        Samples per period (-); default 1024.

    Returns
    -------
    fx : (nt,) ndarray
        Tangential contact force (N).
    fy : (nt,) ndarray
        Normal contact force (N), including the preload ``n0``; ``n0`` for the 1D element.
    state : (nt,) ndarray of int
        0 stick, 1 slip, 2 separation.
    """
    nh = check_nh(nh)
    nt = check_count("nt (samples per period)", nt, 4 * nh + 2)
    check_steps("samples per period (nt)", nt, bytes_each=8.0 * (4 * nh + 8))
    E = aft_matrix(nh, nt)
    p = np.asarray(p, float).ravel()
    X = p[:2 * nh]
    if element.ncomp == 2:
        Y, ky = p[2 * nh:], element.kn
    else:
        Y, ky = np.zeros(2 * nh), 0.0
    fx, fy, st, _, _ = _return_map_march(E @ X, E @ Y, element.kt, ky, element.mu, element.n0,
                                         3)
    sl = slice(2 * int(nt), 3 * int(nt))
    return np.array(fx[sl]), np.array(fy[sl]), np.array(st[sl])
