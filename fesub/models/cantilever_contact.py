"""Cantilever Euler-Bernoulli beam with a friction pad (paper section 5.1, Table 1).

20 classical Hermite beam elements (consistent mass), clamped at x = 0, 2 DOFs per free node
(transverse w, rotation theta) -> 40 DOFs. The pad is a fixed ground contact under a constant
normal load, i.e. a 1D Jenkins element on the transverse DOF of the contact node.

The paper gives neither the contact, excitation and monitor locations nor the damping or the
force range; the documented substitutes (spec 4.1) are the defaults: contact at the tip (node
20), force and monitor at node 10 (transverse), ``C = beta K`` with ``beta = 7.61e-6 s``
(0.5 % at the free first mode), ``alpha in [0.01, 1000] N``. The paper's "20 elements and 21
nodes (excluding the fixed node)" is read as 21 nodes including the clamp.
"""

from __future__ import annotations

import numpy as np

from ..errors import ParameterError, check_names, check_positive

__all__ = ["PAPER", "beam_matrices", "build", "dof_w"]

#: Table 1 of the paper plus the documented substitutes.
PAPER = dict(E=210e9, rho=7830.0, L=0.2, b=0.01, h=0.01, ne=20, kt=2e8, mu=0.3, N0=40.0,
             contact_node=20, force_node=10, monitor_node=10, beta=7.61e-6, nh=3)


def dof_w(node: int) -> int:
    """Index of the transverse DOF of a free node (1..ne) in the reduced 2-DOF/node vector."""
    return 2 * (int(node) - 1)


def beam_matrices(E, rho, L, b, h, ne):
    """Clamped-free EB beam (M, K) with DOFs (w_1, theta_1, ..., w_ne, theta_ne), SI units."""
    from ..fe.elements import frame2d_matrices

    ne = int(ne)
    if ne < 1:
        raise ParameterError(f"ne (number of beam elements) must be >= 1, got {ne}")
    for nm, v in (("E (Pa)", E), ("rho (kg/m^3)", rho), ("L (m)", L), ("b (m)", b), ("h (m)", h)):
        check_positive(nm, v)
    A = b * h
    I = b * h ** 3 / 12.0  # noqa: E741
    xs = np.linspace(0.0, L, ne + 1)
    xy = np.zeros((ne, 2, 2))
    xy[:, 0, 0], xy[:, 1, 0] = xs[:-1], xs[1:]
    Ke, Me = frame2d_matrices(xy, E, A, I, rho, lumped=False)
    nd = 3 * (ne + 1)
    K = np.zeros((nd, nd))
    M = np.zeros((nd, nd))
    for e in range(ne):
        d = np.arange(3 * e, 3 * e + 6)
        K[np.ix_(d, d)] += Ke[e]
        M[np.ix_(d, d)] += Me[e]
    keep = np.array([3 * j + c for j in range(1, ne + 1) for c in (1, 2)])
    return M[np.ix_(keep, keep)], K[np.ix_(keep, keep)]


def build(nh: int | None = None, **params):
    """Harmonic-balance system of the beam model; unknown keys raise ParameterError.

    Parameters (defaults :data:`PAPER`): E (Pa), rho (kg/m^3), L, b, h (m), ne, kt (N/m),
    mu (-), N0 (N), contact_node, force_node, monitor_node (1..ne), beta (s), nh.
    """
    from ..hbm.contact import Jenkins
    from ..hbm.system import ContactElement, HBSystem

    check_names("beam parameter(s)", params, PAPER)
    p = dict(PAPER, **params)
    if nh is not None:
        p["nh"] = nh
    M, K = beam_matrices(p["E"], p["rho"], p["L"], p["b"], p["h"], p["ne"])
    beta = check_positive("beta (stiffness-proportional damping, s)", p["beta"], strict=False)
    n = M.shape[0]
    for key in ("contact_node", "force_node", "monitor_node"):
        if not 1 <= int(p[key]) <= p["ne"]:
            raise ParameterError(f"{key} must lie in [1, {p['ne']}], got {p[key]}")
    G = np.zeros((1, n))
    G[0, dof_w(p["contact_node"])] = 1.0
    el = Jenkins(p["kt"], p["mu"], p["N0"])
    return HBSystem(M, beta * K, K, p["nh"], [ContactElement(el, G, "pad")],
                    fex=dof_w(p["force_node"]), dof=dof_w(p["monitor_node"]))
