"""One implicit time step of :class:`~fesub.hbm.Friction3D` contacts, for :func:`fesub.hbm.newmark`.

Each contact applies, at the end of the step, the time-discrete law that its AFT marches over a
period (:mod:`fesub.hbm.friction3d`), with ``u = [u1, u2, un]`` its local displacement (m):

* raw normal ``N = N0 + kn un``; ``N <= 0``: separated, force zero, tangential history erased;
* predictor ``t = f_prev + kt (u_t - u_t,prev)``; after a separated step ``f_prev = 0`` and
  ``u_t,prev`` is the point where ``N`` crossed zero (``theta = -N_prev / (N - N_prev)``, so the
  increment is ``(1 - theta) (u_t - u_t,prev)``);
* radial return onto the circle: ``f_t = t`` when ``|t| <= mu N``, else ``mu N t / |t|``.

Condensed on the contact coordinates, the step solves ``r(u) = u + S (f(u) - f_0) - u_lin = 0``
(``S = G K_eff^{-1} G^T``, ``f_0`` the static normal loads ``max(N0, 0)``, balanced by the
static load: the decoupled scheme; an open contact has none) by a semismooth Newton method with the law's exact derivative (the radial return's
``mu t^ dN + (mu N / |t|)(I - t^ t^T) dt``, theta's derivative after separation) and
backtracking on ``|r|``. The law is monotone in ``u_t`` (a projection) and ``S`` is symmetric
positive definite, so the iteration converges from the previous step's displacements; it
stops when the contact states repeat and the update is at rounding.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import ConvergenceError, ParameterError

__all__ = ["ReturnMap3D", "law3d"]

#: Newton iterations allowed per step
MAX_ITER = 60


def law3d(u, ft_prev, up, Np, par):
    """Forces and their derivative of many contacts at the local displacements ``u``.

    Parameters
    ----------
    u : (ne, 3) array
        Local displacements at the end of the step (m): tangential 1, 2, normal.
    ft_prev : (ne, 2) array
        Tangential forces at the previous step (N).
    up : (ne, 3) array
        Local displacements at the previous step (m).
    Np : (ne,) array
        Raw normal value ``N0 + kn un`` at the previous step (N).
    par : (ne, 4) array
        ``[kt, kn, mu, N0]`` per contact (N/m, N/m, -, N).

    Returns
    -------
    f : (ne, 3) ndarray
        Tangential and normal forces (N; the normal one including ``N0``).
    D : (ne, 3, 3) ndarray
        ``df/du`` (N/m).
    state : (ne,) ndarray of int
        0 stick, 1 slip, 3 separated.
    """
    ne = u.shape[0]
    f = np.zeros((ne, 3))
    D = np.zeros((ne, 3, 3))
    state = np.zeros(ne, int)
    # a loop over the contacts: the validation integrator's models have a few to a few tens
    # of them, where NumPy's per-call cost would outweigh the arithmetic
    for e, (kt, kn, mu, n0) in enumerate(par.tolist()):
        u1, u2, un = u[e].tolist()
        Ni = n0 + kn * un
        if Ni <= 0.0:
            state[e] = 3
            continue
        p1, p2, _ = up[e].tolist()
        Npe = float(Np[e])
        du1, du2 = u1 - p1, u2 - p2
        if Npe <= 0.0:                      # re-contact: from the crossing of N = 0
            den = Ni - Npe
            wk = kt * (1.0 + Npe / den)
            dth = Npe * kn / (den * den)
            t1, t2 = wk * du1, wk * du2
            d13, d23 = -kt * dth * du1, -kt * dth * du2
        else:
            wk = kt
            g1, g2 = ft_prev[e].tolist()
            t1, t2 = g1 + kt * du1, g2 + kt * du2
            d13 = d23 = 0.0
        tn = math.hypot(t1, t2)
        lim = mu * Ni
        De = D[e]
        De[2, 2] = kn
        f[e, 2] = Ni
        if tn <= lim:
            f[e, 0], f[e, 1] = t1, t2
            De[0, 0] = De[1, 1] = wk
            De[0, 2], De[1, 2] = d13, d23
            continue
        state[e] = 1
        h1, h2 = t1 / tn, t2 / tn
        s = lim / tn
        f[e, 0], f[e, 1] = s * t1, s * t2
        # (mu N / |t|)(I - h h^T) dt/du + mu kn h e_n^T, dt/du = [[wk, 0, d13], [0, wk, d23]]
        pr3 = h1 * d13 + h2 * d23
        De[0, 0] = s * wk * (1.0 - h1 * h1)
        De[0, 1] = -s * wk * h1 * h2
        De[1, 0] = De[0, 1]
        De[1, 1] = s * wk * (1.0 - h2 * h2)
        De[0, 2] = s * (d13 - h1 * pr3) + mu * kn * h1
        De[1, 2] = s * (d23 - h2 * pr3) + mu * kn * h2
    return f, D, state


class ReturnMap3D:
    """The contacts' law through the steps of :func:`fesub.hbm.newmark` (module docstring).

    Parameters
    ----------
    els : list of Friction3D
    S : (3 ne, 3 ne) array
        ``G K_eff^{-1} G^T`` (m/N).
    u0 : (3 ne,) array
        Local displacements at t = 0 (m).
    contact_init : (ne, 2) array, optional
        Tangential forces at t = 0 (N); default zero.
    """

    def __init__(self, els, S, u0, contact_init=None):
        ne = len(els)
        self.ne, self.S, self.nc = ne, S, 3 * ne
        self.par = np.array([e.params() for e in els])
        self.up = np.asarray(u0, float).reshape(ne, 3).copy()
        self.Np = self.par[:, 3] + self.par[:, 1] * self.up[:, 2]
        ft = np.zeros((ne, 2)) if contact_init is None else np.asarray(contact_init, float)
        if ft.shape != (ne, 2):
            raise ParameterError(f"contact_init of Friction3D contacts must have shape "
                                 f"({ne}, 2): the tangential forces at t = 0 (N)")
        lim = self.par[:, 2] * np.maximum(self.Np, 0.0)
        if np.any(np.hypot(ft[:, 0], ft[:, 1]) > lim * (1 + 1e-9) + 1e-300):
            raise ParameterError("contact_init: a tangential force exceeds mu times the normal "
                                 "load at t = 0")
        ft[self.Np <= 0] = 0.0
        self.ft = ft
        # the static state's contact forces, balanced by the static load (decoupled scheme):
        # the normal preload of a closed contact, nothing for an open one (N0 < 0: a gap)
        self.f0 = np.zeros((ne, 3))
        self.f0[:, 2] = np.maximum(self.par[:, 3], 0.0)
        f = np.zeros((ne, 3))
        f[:, :2] = ft
        f[:, 2] = np.maximum(self.Np, 0.0)
        #: contact forces at t = 0 (N; normal ones minus max(N0, 0))
        self.fc = (f - self.f0).ravel()
        self.eye = np.eye(self.nc)
        self.iterations = 0

    def _residual(self, u, ulin):
        f, D, st = law3d(u.reshape(self.ne, 3), self.ft, self.up, self.Np, self.par)
        fc = (f - self.f0).ravel()
        return u + self.S @ fc - ulin, fc, D, st

    def step(self, ulin, t):
        """States (0 stick, 1 slip, 3 separated) and contact forces (N; normal ones minus
        max(N0, 0))
        at the end of the step at time ``t`` (s) from the linear predictor ``ulin`` (m); the
        history is advanced. ConvergenceError when the Newton method does not converge."""
        u = self.up.ravel().copy()
        r, fc, D, st = self._residual(u, ulin)
        scale = np.abs(ulin).max() + np.abs(self.S @ fc).max() + 1e-300
        for it in range(1, MAX_ITER + 1):
            J = self.eye + _times_blockdiag(self.S, D)
            du = np.linalg.solve(J, -r)
            nr = np.abs(r).max()
            lam = 1.0
            for _ in range(30):
                un = u + lam * du
                rn, fcn, Dn, stn = self._residual(un, ulin)
                if np.abs(rn).max() <= max(nr, 1e-13 * scale) or lam < 1e-6:
                    break
                lam *= 0.5
            same = np.array_equal(stn, st)
            u, r, fc, D, st = un, rn, fcn, Dn, stn
            if same and np.abs(r).max() <= 1e-12 * scale:
                self.iterations += it
                self._commit(u, fc)
                return st, fc
        raise ConvergenceError(f"Friction3D return mapping did not converge at t={t:.6g} s "
                               f"(|r| = {np.abs(r).max():.3g} m after {MAX_ITER} iterations)")

    def _commit(self, u, fc):
        uu = u.reshape(self.ne, 3)
        self.ft = fc.reshape(self.ne, 3)[:, :2].copy()
        self.up = uu.copy()
        self.Np = self.par[:, 3] + self.par[:, 1] * uu[:, 2]

    def total(self, fcs):
        """The contact forces (N) with the static normal load max(N0, 0) added back."""
        return fcs + self.f0.ravel()

    def energies(self):
        """Energy (J) each contact stores at the last committed step, (ne, 2): tangential
        ``|f_t|^2 / (2 kt)`` and normal ``max(N, 0)^2 / (2 kn) - f0 un`` less its minimum
        ``f0^2 / (2 kn)`` (``f0 = max(N0, 0)``, balanced by the static load), both >= 0."""
        kt, kn = self.par[:, 0], self.par[:, 1]
        f0 = self.f0[:, 2]
        return np.column_stack([
            0.5 * (self.ft ** 2).sum(axis=1) / kt,
            (np.maximum(self.Np, 0.0) ** 2 - f0 ** 2) / (2 * kn) - f0 * self.up[:, 2]])

    def stiffness_rows(self):
        """The stiffness (N/m) of each contact component, ``kt, kt, kn``, and whether it is
        a normal one."""
        return self.par[:, [0, 0, 1]].ravel(), np.tile([False, False, True], self.ne)


def _times_blockdiag(S, D):
    """``S @ blockdiag(D)`` for ``D`` (ne, 3, 3)."""
    nc, ne = S.shape[0], D.shape[0]
    return np.einsum("iej,ejk->iek", S.reshape(nc, ne, 3), D).reshape(nc, nc)
