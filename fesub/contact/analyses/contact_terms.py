"""The contact terms of the closed nodes of a multibody contact model and their derivatives.

The nonlinear terms of a steady sliding state's equations
(:mod:`fesub.contact.analyses.steady`) and of the equations linearised about it
(:mod:`fesub.contact.analyses.linearised`), for plane bodies (node-to-segment
:class:`~fesub.contact.engine.interfaces.ContactInterface`); solid bodies (node-to-surface
:class:`~fesub.contact.engine.surfaces.ContactInterface3D`) take the same functions, with the
terms of :mod:`fesub.contact.analyses.linearised3d`.

Each closed node (:class:`NodeFrame`) is sliding, on its master segment with the friction force
along the segment's tangent, or sticking, bonded to a master point. :func:`contact_forces` gives

    F(eta, eta', lambda) = sum_i R_i' b_i(x_i) lambda_i,    g(eta),

``F`` the contact forces on the modal coordinates ``eta`` (with a minus sign: ``b`` is the row
B_E of the seed paper's eq. (42) at the deformed contact point and segment angle, ``x_i`` the six
coordinates (m) of segment ends and slave, ``R_i`` their (6, n) rows over ``eta``), ``g`` the
constraints (minus the gaps of sliding nodes, the offsets (x, y) of sticking ones from their
bonded master points). :func:`contact_derivatives` gives their analytic derivatives (checked
against central differences in the tests):

* ``dF/deta``: the geometric stiffness ``lambda_n R' (d b / d x) R`` of the contact rows at the
  deformed configuration (the normal and friction forces turn with the master segment and move
  with the contact point: the follower terms, as :mod:`fesub.contact.analyses.deformed` has them
  for one node, through :func:`~fesub.contact.analyses.deformed.local_contact`), plus the change
  of the slip speed with the configuration times the law's slope;
* ``dF/deta'``: ``lambda_n mu'(v) R' (d b / d mu) (d v / d x') R``, the slope of a
  velocity-dependent law (:meth:`~fesub.contact.engine.friction.Stribeck.slope`): a falling
  ``mu(v)`` is a negative damping along each sliding node's tangent;
* ``B = dF/dlambda`` the force rows (not collocated with ``G = dg/deta`` when mu > 0).

:func:`node_coordinates` and :func:`slide_terms` are one node's coordinates and local terms, which
the steady state also reports (its sticking nodes' forces, its sliding nodes' speeds).

Units: SI (m, N, s); modal coordinates in m kg^0.5.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..engine.contacts import STICK
from .deformed import frame_gradients, local_contact
from .linearised3d import derivatives3d, forces3d

__all__ = ["NodeFrame", "contact_derivatives", "contact_forces", "node_coordinates", "slide_terms"]


@dataclass(eq=False)
class NodeFrame:
    """A closed contact node of the steady state: interface ``interface``, slave node ``node``
    (its index among the interface's slave nodes), ``state`` 1 (stick), 2 or 3 (slip along +t or
    -t of its master: the codes of :mod:`fesub.contact.engine.contacts`), master segment ``seg``, slip direction
    ``sign`` (+-1 along t), friction ``law``, and for a sticking node the master point it is
    bonded to, ``alpha_ref`` (0 at the segment's first node, 1 at its second)."""

    interface: int
    node: int
    state: int
    seg: int
    sign: float
    law: object
    alpha_ref: float = 0.0

    @property
    def size(self) -> int:
        """Multipliers of the node: 1 sliding (normal force), 2 sticking (x and y force)."""
        return 2 if self.state == STICK else 1


def _rows(model, c, i, ab):
    """(6, n_modes) rows of the coordinates [A, B, P] (m) of slave node ``i`` and its master
    segment ends ``ab`` over the modal coordinates."""
    R = np.zeros((6, model.n_modes))
    Mr = c["master"].R
    if Mr.shape[2]:
        R[0:2, c["master"].cols] += Mr[ab[0]]
        R[2:4, c["master"].cols] += Mr[ab[1]]
    R[4:6, c["slave"].cols] += c["slave"].R[i]
    return R


def node_coordinates(model, drive, fr, eta, deta):
    """Positions x (6,) in m, velocities xd (6,) in m/s and rows R (6, n) of one node."""
    c = model.contacts[fr.interface]
    ds, dm, vs, vm = drive[fr.interface]
    ab = c["segments"][fr.seg]
    R = _rows(model, c, fr.node, ab)
    Xm = c["master"].X
    base = np.r_[Xm[ab[0]] + dm[ab[0]], Xm[ab[1]] + dm[ab[1]], c["slave"].X[fr.node] + ds[fr.node]]
    vel = np.r_[vm[ab[0]], vm[ab[1]], vs[fr.node]]
    return base + R @ eta, vel + R @ deta, R


def _tie(alpha):
    """(2, 6) relative displacement of P against the master point at ``alpha`` over [A, B, P]."""
    I = np.eye(2)
    return np.hstack([-(1 - alpha) * I, -alpha * I, I])


def slide_terms(x, xd, fr):
    """One sliding node in its local coordinates: the row b(mu(v)) (1), its derivatives over the
    positions (1/m) and velocities (s/m) of the six coordinates, the constraint -gap (m) and its
    gradient, the slip speed (m/s) and the coefficient."""
    s = fr.sign
    alpha, gamma, bN, dbN, g, dg = local_contact(x, 0.0, s)
    b1, db1 = local_contact(x, 1.0, s)[2:4]
    bT, dbT = b1 - bN, db1 - dbN   # d b / d mu (b is linear in mu)
    t = np.array([np.cos(gamma), np.sin(gamma)])
    n = np.array([-t[1], t[0]])
    vrel = xd[4:6] - (1 - alpha) * xd[0:2] - alpha * xd[2:4]
    v = s * (t @ vrel)                       # the slip speed along the sliding direction
    mu, mu1 = float(fr.law.coefficient(v)), float(fr.law.slope(v))
    _, _, da, dgam = frame_gradients(x)
    dv_dx = s * ((n @ vrel) * dgam + (t @ (xd[0:2] - xd[2:4])) * da)
    dv_dxd = s * (_tie(alpha).T @ t)
    b = bN + mu * bT
    return b, dbN + mu * dbT + mu1 * np.outer(bT, dv_dx), mu1 * np.outer(bT, dv_dxd), g, dg, v, mu


def contact_forces(model, frames_, drive, eta, deta, lam):
    """The nonlinear contact terms of the closed nodes ``frames_`` (their segments and slip
    directions held): F (n_modes,) in N per unit modal mass (minus the contact forces on the
    modal coordinates) and the constraints (m): -gap of each sliding node, the relative
    position (x, y) of each sticking node from its bonded master point, in the order of the
    multipliers ``lam`` (N). A solid model's nodes: see :mod:`~fesub.contact.analyses.linearised3d`
    (sliding: -gap; sticking: the (x, y, z) offset from the bonded master point)."""
    if model.dim == 3:
        return forces3d(model, frames_, drive, eta, deta, lam)
    F = np.zeros(model.n_modes)
    out, k = [], 0
    for fr in frames_:
        x, xd, R = node_coordinates(model, drive, fr, eta, deta)
        if fr.state == STICK:
            T = _tie(fr.alpha_ref)
            F += R.T @ (T.T @ lam[k:k + 2])
            out.extend(T @ x)
        else:
            b, *_, g, _, _, _ = slide_terms(x, xd, fr)
            F += R.T @ b * lam[k]
            out.append(g)
        k += fr.size
    return F, np.array(out)


def contact_derivatives(model, frames_, drive, eta, deta, lam, *, velocity: bool = True):
    """Derivatives of :func:`contact_forces`: dF/deta (N/m per unit modal mass squared: the
    geometric stiffness with the law's slope), dF/deta' (the law's damping; None with
    ``velocity=False``, as a static equilibrium needs none), the force rows
    B = (dF/dlambda)' and the constraint gradient G, each over the modal coordinates (a solid
    model's: see :mod:`~fesub.contact.analyses.linearised3d`; its sliding nodes' dF/deta' also
    holds the damping ``mu lambda_n / v`` across the sliding direction)."""
    if model.dim == 3:
        return derivatives3d(model, frames_, drive, eta, deta, lam, velocity=velocity)
    n = model.n_modes
    K, C = np.zeros((n, n)), (np.zeros((n, n)) if velocity else None)
    B, G = [], []
    k = 0
    for fr in frames_:
        x, xd, R = node_coordinates(model, drive, fr, eta, deta)
        if fr.state == STICK:
            rows = _tie(fr.alpha_ref) @ R
            B.extend(rows)
            G.extend(rows)
        else:
            b, db_dx, db_dxd, _, dg, _, _ = slide_terms(x, xd, fr)
            K += lam[k] * (R.T @ db_dx @ R)
            if velocity:
                C += lam[k] * (R.T @ db_dxd @ R)
            B.append(b @ R)
            G.append(dg @ R)
        k += fr.size
    return K, C, np.array(B, float).reshape(-1, n), np.array(G, float).reshape(-1, n)

