"""NumPy twin of ``friction_lcp.pyx``: projected Gauss-Seidel for unilateral constraints with
Coulomb friction, one row at a time.

Same function, signature and arithmetic as the compiled kernel (see its module docstring for the
method and the conditions the solution satisfies); the only differences are the summation order
of the dot products (round-off).
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import ParameterError


def _check_shapes(J, w, b, mu, lam, z, status):
    """Cheap shape checks (skipped under ``python -O``): a wrong size would otherwise read or
    write past an array in the compiled kernel."""
    if J.ndim != 2 or J.shape[0] % 2:
        raise ParameterError(f"J must be (2m, n) with an even number of rows, got shape {J.shape}")
    m2, n = J.shape
    for name, arr, size in (("w", w, n), ("b", b, m2), ("mu", mu, m2 // 2), ("lam", lam, m2),
                            ("z", z, n), ("status", status, 3)):
        if arr.shape != (size,):
            raise ParameterError(f"{name} must have shape ({size},) for J of shape {J.shape}, "
                                 f"got {arr.shape}")


def _solve_one(W, b, mu, lam, tol, max_iter, status):
    """Twin of ``_pgs.pgs_solve_one``: the sweeps of :func:`solve` on one constraint with its
    known 2 x 2 W = J diag(w) J' (W[0] normal, W[1] coupling, W[2] tangential)."""
    change, converged, sweeps = math.inf, 0.0, 0
    for sweeps in range(1, max_iter + 1):
        change, infeasible = 0.0, False
        for r in range(2):
            lo, hi = 0.0, math.inf
            if r:
                hi = mu * lam[0]
                lo = -hi
            old = lam[r]
            y = b[r] + W[r] * lam[0] + W[r + 1] * lam[1]
            dr = W[2 * r]
            if dr > 0.0:
                new = old - y / dr
            else:
                new = old if y == 0.0 else (-math.inf if y > 0.0 else math.inf)
                if not r and y < 0.0:
                    new, infeasible = 0.0, True
            new = min(max(new, lo), hi)
            delta = new - old
            if delta != 0.0:
                lam[r] = new
                if dr > 0.0:
                    change = max(change, abs(delta) * dr)
        if infeasible:
            change = math.inf
        if change <= tol:
            converged = 1.0
            break
    status[:] = (sweeps, change, converged)


def coulomb_one(W, b, mu, lam, tol, max_iter, status):
    """Twin of ``_pgs.coulomb_one``: the one constraint's problem in closed form (open, slip in
    either sense or stick; the sense of ``lam[1]`` tried first; see the kernel's module
    docstring), the sweeps of :func:`_solve_one` where the closed form does not apply."""
    wn, wc, wt = W
    bn, bt = b
    if not (wn > 0.0 and mu * abs(wc) < wn and wn * wt - wc * wc > 0.0 and mu >= 0.0):
        _solve_one(W, b, mu, lam, tol, max_iter, status)
        return
    status[:] = (1.0, 0.0, 1.0)
    if not bn < 0.0:
        lam[:] = 0.0
        return
    for sense in ((1.0, -1.0) if lam[1] >= 0.0 else (-1.0, 1.0)):
        ln = -bn / (wn + sense * mu * wc)
        yt = bt + (wc + sense * mu * wt) * ln
        if (yt <= 0.0) if sense > 0 else (yt >= 0.0):
            lam[:] = (ln, sense * mu * ln)
            return
    det = wn * wt - wc * wc
    lam[:] = ((wc * bt - wt * bn) / det, (wc * bn - wn * bt) / det)


def solve(J, w, b, mu, lam, z, tol, max_iter, status):
    """Projected Gauss-Seidel solution of the frictional contact problem, in place.

    Parameters
    ----------
    J : ndarray, shape (2m, n)
        Rows 2i (normal) and 2i+1 (tangential) of constraint i [units of y per coordinate].
    w : ndarray, shape (n,)
        Diagonal of the inverse "mass" (> 0) [coordinate per impulse].
    b : ndarray, shape (2m,)
        Constraint values with no impulse [units of y, e.g. m].
    mu : ndarray, shape (m,)
        Friction coefficients (>= 0) [-].
    lam : ndarray, shape (2m,)
        In: warm start; out: the impulses (normal, tangential per constraint) [impulse units].
    z : ndarray, shape (n,)
        Out: ``diag(w) J' lam`` [coordinate units].
    tol : float
        Convergence when the largest change of y produced by one row update during a sweep,
        ``|delta lam_r| W_rr``, is at most ``tol`` [units of y]. A negative ``tol`` runs
        exactly ``max_iter`` sweeps.
    max_iter : int
        Maximum number of sweeps.
    status : ndarray, shape (3,)
        Out: [sweeps done, final largest change, 1.0 if converged else 0.0]. The change is
        ``inf`` when no sweep was made, or when a normal row no coordinate moves (``W_rr = 0``)
        has a negative value: no impulse can correct it, so no solution exists.

    Notes
    -----
    See the compiled kernel's module docstring for the method, why it was chosen, and when it
    can fail to converge (strongly coupled rows with large ``mu``: the status then says so).
    """
    if __debug__:
        _check_shapes(J, w, b, mu, lam, z, status)
    m2, n = J.shape
    if n == 0 or m2 == 0:  # no constraint, or rows with no entry: no impulse
        lam[:] = 0.0
        status[:] = (0.0, 0.0, 1.0)
        return
    if m2 == 2 and tol >= 0.0 and max_iter >= 1:  # one constraint: the closed form
        W = np.array([(J[0] * J[0]) @ w, (J[0] * J[1]) @ w, (J[1] * J[1]) @ w])
        coulomb_one(W, b, float(mu[0]), lam, tol, max_iter, status)
        z[:] = w * (J.T @ lam)
        return
    d = (J * J) @ w  # W_rr = sum_k J_rk^2 w_k
    z[:] = w * (J.T @ lam)
    change = np.inf
    sweeps = 0
    converged = 0.0
    for sweeps in range(1, max_iter + 1):
        change = 0.0
        infeasible = False
        for r in range(m2):
            lo = 0.0
            if r % 2:
                hi = mu[r // 2] * lam[r - 1]
                lo = -hi
            old = lam[r]
            y = b[r] + J[r] @ z
            if d[r] > 0.0:
                new = old - y / d[r]
            else:  # a zero row: y_r = b_r whatever lam_r; the limit of the update as W_rr -> 0
                new = old if y == 0.0 else (-np.inf if y > 0.0 else np.inf)
                if not r % 2 and y < 0.0:
                    new, infeasible = 0.0, True  # a negative normal value no impulse can change
            new = max(new, lo)
            if r % 2:
                new = min(new, hi)
            delta = new - old
            if delta != 0.0:
                lam[r] = new
                if d[r] > 0.0:
                    z += (delta * w) * J[r]
                    change = max(change, abs(delta) * d[r])
        if infeasible:
            change = np.inf
        if change <= tol:
            converged = 1.0
            break
    status[0] = sweeps
    status[1] = change
    status[2] = converged
