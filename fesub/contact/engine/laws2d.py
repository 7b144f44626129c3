"""The frictional contact problem of one step of the Python step loop with friction laws beyond
one coefficient (:mod:`~fesub.contact.engine.friction`): the same contract as the
``friction_lcp`` kernel's ``solve``, each node's problem solved exactly by the friction-cone
kernel (:mod:`~fesub.contact.engine.cone`).

The 2D problem ``y = b + J diag(w) J' lam`` (rows normal, tangential per node; ``y`` and ``b`` in
m over the step, ``lam`` in N, ``w = h^2`` per unit modal mass) is the cone's problem in
velocities, ``u = (W / h) lam + b / h`` (m/s), with a second tangent of its own (unit diagonal,
uncoupled, no free velocity): its impulse is zero at the solution, so the isotropic cone reduces
to the 2D law. Stick holds while ``|lam_t| <= mu_s lam_n``; a slipping node reaches the cone's
edge at ``mu(v)``, ``v = |y_t| / h`` the slip speed of the step itself (implicit: the cone
kernel's bracketed root in ``mu``). One node is solved in one exact solve; coupled nodes by the
cone's projected block Gauss-Seidel sweeps. A ``UserLaw`` is evaluated in Python (the slower
path).
"""

from __future__ import annotations

import numpy as np

from .cone import SLIP, solve_coupled

__all__ = ["solve_laws"]


def solve_laws(J, w, b, laws, lam, z, tol, max_iter, status, h):
    """Solve one step's contact problem of the nodes with the friction laws ``laws``, in place.

    Parameters
    ----------
    J : (2k, n) array
        Rows (normal, tangential) of the k nodes over the modal coordinates.
    w : (n,) array
        ``h^2`` per modal coordinate (s^2 per unit modal mass).
    b : (2k,) array
        Predicted gap and slip of the step (m).
    laws : sequence of k laws
        Each node's friction law.
    lam : (2k,) array
        In: warm start; out: forces (N), normal then tangential per node.
    z : (n,) array
        Out: ``diag(w) J' lam``.
    tol : float
        Tolerance (m) of the sweeps' largest change of a gap or slip.
    max_iter : int
        Sweeps allowed.
    status : (3,) array
        Out: sweeps, last largest change (m), converged 1/0.
    h : float
        Time step (s).

    Returns
    -------
    (k,) array
        The coefficient at which each node reached the cone's edge (the slip coefficient of a
        slipping node, the stick limit otherwise): the state test's coefficient.
    """
    k = len(laws)
    W2 = (J * w) @ J.T / h
    W = np.zeros((3 * k, 3 * k))
    r = (3 * np.arange(k)[:, None] + np.arange(2)).ravel()
    W[np.ix_(r, r)] = W2
    W[3 * np.arange(k) + 2, 3 * np.arange(k) + 2] = 1.0
    q = np.zeros(3 * k)
    q[r] = b / h
    lam0 = np.zeros((k, 3))
    lam0[:, :2] = lam.reshape(k, 2)
    sol = solve_coupled(W, q, laws, lam0, tol=tol / h, max_iter=max_iter)
    lam[:] = sol.lam[:, :2].ravel()
    z[:] = w * (J.T @ lam)
    status[:] = (sol.sweeps, sol.change * h, 1.0 if sol.converged else 0.0)
    edge = np.array([law.mu_static for law in laws])
    slip = np.flatnonzero(sol.case == SLIP)
    for i in slip:
        edge[i] = laws[i].coefficient(abs(sol.u[i, 1]))
    return edge
