"""The friction cone in 3D, solved exactly: one contact node, many independent ones, or coupled
nodes by projected block Gauss-Seidel.

A node has a normal and two tangential directions; ``W`` (3 x 3, symmetric positive definite,
normal first) maps its contact impulses ``lambda`` (N s; normal >= 0 in compression, then the
tangential 2-vector) to relative velocities (m/s), ``u = W lambda + q`` with ``q`` the free
relative velocity (m/s; ``u_n`` the approach rate, > 0 opening). The solution obeys, with the
node's friction law (:mod:`~fesub.contact.engine.friction`) of stick limit ``mu_s`` and slip
coefficient ``mu(v)``:

* open:   ``lambda = 0``, ``u_n >= 0``;
* stick:  ``u = 0``, ``|lambda_t| <= mu_s lambda_n``;
* slip:   ``u_n = 0``, ``lambda_t = -mu(|u_t|) lambda_n u_t / |u_t|`` (the friction force opposes
  the slip velocity, in the whole tangent plane: the isotropic cone, not a box per direction).

The per-node solver (the ``cone`` kernel, see ``fesub/_core/cone.pyx``) enumerates the three cases
and solves slip exactly by bracketing every root of one scalar equation in the slip angle, nested
in a bracketed root in ``mu`` for a velocity-dependent law. A node whose law is a Python callable
(:class:`~fesub.contact.engine.friction.UserLaw`) is solved here, its outer root by
:func:`scipy.optimize.brentq` around the kernel's constant-coefficient slip solution: the
slower path.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ... import _backend
from ...errors import ConvergenceError, ParameterError, check_count, check_positive
from .friction import UserLaw, law_arrays, node_laws

__all__ = ["ConeSolution", "solve_cone", "solve_cones", "solve_coupled", "OPEN", "STICK", "SLIP",
           "FAILED"]

#: node cases
FAILED, OPEN, STICK, SLIP = -1, 0, 1, 2


@dataclass
class ConeSolution:
    """The solution of a friction-cone problem.

    Parameters
    ----------
    lam : (m, 3) float array
        Impulses per node (N s): normal, two tangential.
    u : (m, 3) float array
        Relative velocities ``W lam + q`` per node (m/s).
    case : (m,) int array
        :data:`OPEN` (0), :data:`STICK` (1), :data:`SLIP` (2), or :data:`FAILED` (-1: no
        admissible solution found for that node).
    sweeps : int
        Gauss-Seidel sweeps done (1 for independent nodes).
    change : float
        The last sweep's largest ``|W_ii delta lambda_i|`` (m/s; 0 for independent nodes).
    converged : bool
        Every node solved, and the sweeps converged.
    """

    lam: np.ndarray
    u: np.ndarray
    case: np.ndarray
    sweeps: int = 1
    change: float = 0.0
    converged: bool = True


def _blocks(W, q):
    W = np.asarray(W, dtype=float)
    q = np.asarray(q, dtype=float)
    if W.ndim == 2:
        W, q = W[None], q[None] if q.ndim == 1 else q
    if W.ndim != 3 or W.shape[1:] != (3, 3) or q.shape != (W.shape[0], 3):
        raise ParameterError(f"W must be (m, 3, 3) and q (m, 3) (or one node: (3, 3) and (3,)), got "
                             f"{W.shape} and {q.shape}")
    _check_spd("W", W)
    if not np.all(np.isfinite(q)):
        raise ParameterError("q (m/s) must be finite")
    return np.ascontiguousarray(W), np.ascontiguousarray(q)


def _check_spd(name, blocks):
    if not np.all(np.isfinite(blocks)):
        raise ParameterError(f"{name} must be finite")
    scale = np.abs(blocks).max(axis=(1, 2)) + np.finfo(float).tiny
    asym = np.abs(blocks - blocks.transpose(0, 2, 1)).max(axis=(1, 2))
    bad = np.flatnonzero(asym > 1e-10 * scale)  # symmetric to round-off of its assembly
    if bad.size:
        raise ParameterError(f"{name}: the 3 x 3 block of node {bad[0]} is not symmetric")
    low = np.linalg.eigvalsh(blocks)[:, 0]
    bad = np.flatnonzero(~(low > 1e-14 * scale))
    if bad.size:
        raise ParameterError(f"{name}: the 3 x 3 block of node {bad[0]} is not positive definite "
                             f"(smallest eigenvalue {low[bad[0]]:.3g})")


def _warm(lam0, m):
    if lam0 is None:
        return np.zeros((m, 3))
    lam = np.array(lam0, dtype=float).reshape(-1)
    if lam.size != 3 * m or not np.all(np.isfinite(lam)):
        raise ParameterError(f"lam0 must hold 3 finite impulses per node ({3 * m}), got {lam.size}")
    return lam.reshape(m, 3).copy()


def _user_node(W, q, law: UserLaw, lam):
    """One node with a Python law: open and stick as the kernel does (stick limit fn(0)), slip by
    brentq on F(mu) = fn(v(mu)) - mu with v(mu) the kernel's slip speed at the constant mu."""
    from scipy.optimize import brentq

    K = _backend.kernels("cone")
    mu0 = law.mu_static
    case = np.zeros(1, np.int64)
    out = lam.reshape(1, 3).copy()
    K.solve_nodes(W[None], q[None], np.zeros(1, np.int64), np.array([[mu0, mu0, 0.0]]), out, case)
    if case[0] != SLIP:  # open, stick or failed are those of the stick limit
        return out[0], int(case[0])
    state = {"lam": out.copy()}

    def F(mu):
        trial = state["lam"].copy()
        K.slip_nodes(W[None], q[None], np.array([mu]), trial, case)
        if case[0] != SLIP:
            raise ConvergenceError(f"no slip solution at mu = {mu:.6g} for a node with a user law")
        state["lam"] = trial
        v = float(np.hypot(*(W[1:] @ trial[0] + q[1:])))
        return law.coefficient(v) - mu

    lo, hi = 0.0, max(mu0, 1e-300)
    f_hi = F(hi)
    for _ in range(60):  # a law above its static value somewhere: widen the bracket
        if f_hi <= 0.0:
            break
        lo, hi = hi, 2.0 * hi
        f_hi = F(hi)
    else:
        raise ConvergenceError("a user friction law: no slip coefficient balances the law "
                               f"below mu = {hi:.3g}")
    root = hi
    if f_hi < 0.0:
        root = lo if F(lo) == 0.0 else brentq(F, lo, hi, xtol=4e-16 * hi, rtol=8.9e-16)
    F(root)  # the state of the root itself
    return state["lam"][0], SLIP


def solve_cones(W, q, laws, lam0=None) -> ConeSolution:
    """Independent nodes' exact friction-cone problems.

    Parameters
    ----------
    W : (m, 3, 3) or (3, 3) float array
        Each node's Delassus block (m/s per N s): symmetric positive definite, normal first.
    q : (m, 3) or (3,) float array
        Free relative velocities (m/s), normal first.
    laws : law, number, callable, or a sequence of one per node
        Friction laws (:mod:`~fesub.contact.engine.friction`; a number is Coulomb's mu).
    lam0 : (m, 3) float array, optional
        Warm start (N s): where slip has several solutions, the branch nearest its direction.

    Returns
    -------
    ConeSolution
    """
    W, q = _blocks(W, q)
    m = W.shape[0]
    code, params, user = law_arrays(laws, m)
    lam = _warm(lam0, m)
    case = np.zeros(m, np.int64)
    _backend.kernels("cone").solve_nodes(W, q, code, params, lam, case)
    if user.any():
        per_node = node_laws(laws, m)
        for i in np.flatnonzero(user):
            lam[i], case[i] = _user_node(W[i], q[i], per_node[i], _warm(lam0, m)[i])
    u = np.einsum("ijk,ik->ij", W, lam) + q
    return ConeSolution(lam, u, case, converged=bool(np.all(case != FAILED)))


def solve_cone(W, q, law, lam0=None) -> ConeSolution:
    """One node's exact friction-cone problem (:func:`solve_cones` with ``m = 1``).

    Parameters
    ----------
    W : (3, 3) float array
        The node's Delassus block (m/s per N s): symmetric positive definite, normal first.
    q : (3,) float array
        Free relative velocity (m/s), normal first.
    law : law, number or callable
        The node's friction law (a number is Coulomb's mu).
    lam0 : (3,) float array, optional
        Warm start (N s), choosing the slip branch where there are several.

    Returns
    -------
    ConeSolution
        ``lam`` (N s) and ``u`` (m/s) of shape (3,), ``case`` an int.
    """
    sol = solve_cones(np.asarray(W, dtype=float).reshape(1, 3, 3) if np.size(W) == 9 else W,
                      np.asarray(q, dtype=float).reshape(1, 3) if np.size(q) == 3 else q, law, lam0)
    if sol.lam.shape[0] != 1:
        raise ParameterError("solve_cone takes one node: W (3, 3) and q (3,)")
    return ConeSolution(sol.lam[0], sol.u[0], int(sol.case[0]), converged=sol.converged)


def solve_coupled(W, q, laws, lam0=None, *, tol: float = 1e-12, max_iter: int = 1000) -> ConeSolution:
    """Coupled nodes: projected block Gauss-Seidel, each node's cone problem solved exactly with
    the others' impulses frozen.

    Parameters
    ----------
    W : (3m, 3m) float array
        Delassus operator (m/s per N s), symmetric positive semi-definite with positive definite
        3 x 3 diagonal blocks; rows in node order, each node normal first.
    q : (3m,) or (m, 3) float array
        Free relative velocities (m/s).
    laws : law, number, callable, or a sequence of one per node
        Friction laws. Nodes with a Python callable make the sweeps run in Python (slower).
    lam0 : (3m,) float array, optional
        Warm start (N s).
    tol : float
        Convergence (m/s): the largest velocity change ``|W_ii delta lambda_i|`` of a sweep.
    max_iter : int
        Largest number of sweeps.

    Returns
    -------
    ConeSolution
        ``converged`` False when the sweeps did not reach ``tol`` (Gauss-Seidel on the cone can
        cycle for large coefficients with strong coupling) or a node had no solution.
    """
    W = np.ascontiguousarray(np.asarray(W, dtype=float))
    q = np.ascontiguousarray(np.asarray(q, dtype=float).reshape(-1))
    if W.ndim != 2 or W.shape[0] != W.shape[1] or W.shape[0] % 3 or W.shape[0] == 0 or q.size != W.shape[0]:
        raise ParameterError(f"W must be (3m, 3m) and q hold 3m values, got {W.shape} and {q.size}")
    if not np.all(np.isfinite(q)):
        raise ParameterError("q (m/s) must be finite")
    m = W.shape[0] // 3
    if not np.all(np.isfinite(W)) or np.abs(W - W.T).max() > 1e-10 * np.abs(W).max():
        raise ParameterError("W must be finite and symmetric")
    _check_spd("W", np.stack([W[3 * i:3 * i + 3, 3 * i:3 * i + 3] for i in range(m)]))
    tol = check_positive("tol (m/s)", tol)
    max_iter = check_count("max_iter", max_iter, 1)
    code, params, user = law_arrays(laws, m)
    lam = _warm(lam0, m).reshape(-1)
    case = np.zeros(m, np.int64)
    u = np.zeros(3 * m)
    status = np.zeros(3)
    if not user.any():
        _backend.kernels("cone").block_gs(W, q, code, params, lam, u, case, tol, max_iter, status)
        return ConeSolution(lam.reshape(m, 3), u.reshape(m, 3), case, int(status[0]), float(status[1]),
                            bool(status[2]))
    return _coupled_python(W, q, node_laws(laws, m), lam, tol, max_iter)


def _coupled_python(W, q, per_node, lam, tol, max_iter) -> ConeSolution:
    """The block sweeps in Python, node by node through :func:`solve_cone` (a user law)."""
    m = len(per_node)
    u = W @ lam + q
    case = np.zeros(m, np.int64)
    change = np.inf
    for sweep in range(1, max_iter + 1):
        change, failed = 0.0, False
        for i in range(m):
            s = slice(3 * i, 3 * i + 3)
            Wi = W[s, s]
            old = lam[s].copy()
            sol = solve_cone(Wi, u[s] - Wi @ old, per_node[i], old)
            case[i] = sol.case
            if sol.case == FAILED:
                failed = True
                continue
            d = sol.lam - old
            lam[s] = sol.lam
            u += W[:, s] @ d
            change = max(change, float(np.abs(Wi @ d).max()))
        if failed:
            change = np.inf
        if change <= tol:
            return ConeSolution(lam.reshape(m, 3), u.reshape(m, 3), case, sweep, change, True)
    return ConeSolution(lam.reshape(m, 3), u.reshape(m, 3), case, max_iter, change, False)
