"""The equations of motion of a multibody contact model linearised about its steady sliding state.

About a steady sliding state (:func:`~fesub.contact.analyses.steady.steady_state`, plane or solid
bodies), ``eta = eta0 + d``, ``lambda = lambda0 + l``, :func:`linearise` gives

    d'' + (C_m + dF/deta') d' + (Omega^2 + dF/deta) d + B' l = 0,     G d = 0,

with ``B = dF/dlambda`` (the force rows, not collocated with ``G = dg/deta`` when mu > 0), the
derivatives of the contact terms ``F`` and constraints ``g`` from
:func:`~fesub.contact.analyses.contact_terms.contact_derivatives`:

* ``dF/deta``: the geometric stiffness of the contact rows at the deformed configuration (the
  normal and friction forces turn with the master segment and move with the contact point: the
  follower terms), plus the change of the slip speed with the configuration times the law's
  slope;
* ``dF/deta'``: the slope of a velocity-dependent law
  (:meth:`~fesub.contact.engine.friction.Stribeck.slope`): a falling ``mu(v)`` is a negative
  damping along each sliding node's tangent; for solid bodies (the terms of
  :mod:`fesub.contact.analyses.linearised3d`) also the damping ``mu lambda_n / |v|`` across the
  sliding direction, which turns in the tangent plane with a transverse slip.

:class:`LinearisedSystem` holds the matrices and gives the complex eigenvalues through the primal
projection ``L_B' (.) L_G`` on the null spaces of the force and constraint rows. Those bases are
built by elimination, ``L_G = P [-G_1^-1 G_2; I]`` (``G_1`` the m columns a pivoted QR of ``G``
picks), so that each product costs O(n^2 m) rather than the O(n^3) of products with orthonormal
bases (the eigenvalues do not depend on the basis; dependent rows fall back to the orthonormal
bases).

The steady state and the contact terms were defined here before they got modules of their own;
they are still importable from here (``from fesub.contact.analyses.linearised import
steady_state``), documented in :mod:`~fesub.contact.analyses.steady` and
:mod:`~fesub.contact.analyses.contact_terms`.

Units: SI (m, N, s); modal coordinates in m kg^0.5, eigenvalues in 1/s.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla

from ..engine.bodies import MultibodyModel
from .contact_terms import NodeFrame, contact_derivatives, contact_forces  # noqa: F401 - importable from here
from .secular import first_order_matrix
from .steady import SteadyState, steady_state  # noqa: F401 - importable from here

__all__ = ["LinearisedSystem", "linearise"]


@dataclass(eq=False)
class LinearisedSystem:
    """The equations of motion linearised about a
    :class:`~fesub.contact.analyses.steady.SteadyState`, over the modal coordinates (unit masses): ``M d'' + C d' + K d + B' l = 0``, ``G d = 0``; ``M`` (kg, the
    identity), ``C`` (1/s: modal damping plus the friction law's slope), ``K`` (1/s^2: Omega^2
    plus the geometric stiffness), ``B`` the force rows and ``G`` the constraint rows (one per
    sliding node, two per sticking node), and the ``state``."""

    M: np.ndarray
    C: np.ndarray
    K: np.ndarray
    B: np.ndarray
    G: np.ndarray
    state: SteadyState

    def bases(self):
        """(L_G, L_B): orthonormal null-space bases of G and B (the identity without
        constraints)."""
        n = self.M.shape[0]
        if not self.G.shape[0]:
            return np.eye(n), np.eye(n)
        return _null_space(self.G), _null_space(self.B)

    def eliminated(self):
        """(L_G, L_B): null-space bases of G and B by elimination, ``L_G = P [-G_1^-1 G_2; I]``
        (``G_1`` the m columns of G that its pivoted QR picks, ``P`` the permutation), or the
        orthonormal :meth:`bases` when G or B is rank deficient. They span the same null spaces
        as :meth:`bases` (the constrained pencil's eigenvalues do not depend on the basis); the
        products with them cost O(n^2 m) instead of O(n^3) (see :meth:`projected`)."""
        n = self.M.shape[0]
        if not self.G.shape[0]:
            return np.eye(n), np.eye(n)
        out = [_eliminator(self.G), _eliminator(self.B)]
        if out[0] is None or out[1] is None:
            return self.bases()
        return tuple(_basis(e, n) for e in out)

    def projected(self):
        """(Mt, Ct, Kt) = L_B' (M, C, K) L_G: the constrained system over the coordinates q of
        ``d = L_G q`` (the multipliers eliminated), with the bases of :meth:`eliminated`: each
        product ``X L_G = X[:, free] - X[:, piv] (G_1^-1 G_2)`` and ``L_B' Y`` likewise costs
        O(n^2 m) for m constraint rows."""
        if not self.G.shape[0]:
            return self.M.copy(), self.C.copy(), self.K.copy()
        eg, eb = _eliminator(self.G), _eliminator(self.B)
        if eg is None or eb is None:
            LG, LB = self.bases()
            return tuple(LB.T @ X @ LG for X in (self.M, self.C, self.K))
        (pg, fg, Xg), (pb, fb, Xb) = eg, eb

        def right(X):   # X L_G
            return X[:, fg] - X[:, pg] @ Xg

        def left(Y):    # L_B' Y
            return Y[fb] - Xb.T @ Y[pb]

        return tuple(left(right(X)) for X in (self.M, self.C, self.K))

    def eigenvalues(self, return_modes: bool = False):
        """Every complex eigenvalue (1/s) of the constrained system, sorted by imaginary part
        then real part; with ``return_modes`` also the mode shapes over the modal coordinates
        (n_modes, 2 m)."""
        Mt, Ct, Kt = self.projected()
        A = first_order_matrix(Mt, Ct, Kt)
        if return_modes:
            lam, vec = sla.eig(A, check_finite=False)
        else:
            lam, vec = sla.eigvals(A, check_finite=False), None
        order = np.lexsort((lam.real, lam.imag))
        if not return_modes:
            return lam[order]
        return lam[order], self.eliminated()[0] @ vec[:Mt.shape[0], order]


def _eliminator(A, rtol: float = 1e-10):
    """(piv, free, X) of the rows ``A`` (m, n) of full rank m: ``piv`` the m columns its
    pivoted QR picks first, ``free`` the others (in order), ``X = A[:, piv]^-1 A[:, free]``;
    None when the rank (R's diagonal relative to its largest entry) is below m."""
    m, n = A.shape
    R, perm = sla.qr(A, mode="r", pivoting=True, check_finite=False)
    d = np.abs(np.diag(R))
    if m > n or not d.size or d.min() <= rtol * d.max():
        return None
    piv = np.sort(perm[:m])
    free = np.setdiff1d(np.arange(n), piv)
    return piv, free, np.linalg.solve(A[:, piv], A[:, free])


def _basis(elim, n):
    """The (n, n - m) null-space basis ``P [-X; I]`` of :func:`_eliminator`'s answer."""
    piv, free, X = elim
    L = np.zeros((n, free.size))
    L[free, np.arange(free.size)] = 1.0
    L[piv] = -X
    return L


def _null_space(A, rtol: float = 1e-12):
    """Orthonormal basis (n, n - rank) of the null space of the rows ``A`` (m, n): the trailing
    columns of the pivoted QR of ``A'`` (O(n^2 m) instead of the O(n^3) of the full SVD; the rank
    from R's diagonal, relative to its largest entry)."""
    Q, R, _ = sla.qr(A.T, pivoting=True, check_finite=False)
    d = np.abs(np.diag(R))
    rank = int(np.count_nonzero(d > rtol * d.max())) if d.size and d.max() > 0 else 0
    return Q[:, rank:]


def linearise(model: MultibodyModel, state: SteadyState) -> LinearisedSystem:
    """The linearised equations of motion of ``model`` about ``state`` (see the module
    docstring): contact rows at the deformed configuration with their geometric stiffness, the
    friction force's follower terms and the slope of a velocity-dependent law; for solid bodies
    also the damping ``mu lambda_n / v`` of the friction direction across the sliding.

    Parameters
    ----------
    model : MultibodyModel
        The model ``state`` was found for (plane or solid bodies).
    state : fesub.contact.analyses.steady.SteadyState
        From :func:`~fesub.contact.analyses.steady.steady_state` (its drives' motion and imposed
        sliding velocities included).

    Returns
    -------
    LinearisedSystem over the model's modal coordinates (unit modal masses; M 1, C in 1/s, K in
    1/s^2, rows B and G in 1/kg^0.5): its :meth:`~LinearisedSystem.eigenvalues` (1/s), or
    :func:`~fesub.contact.analyses.band.band_eigenvalues` for those of a band.
    """
    n = model.n_modes
    K, C, B, G = contact_derivatives(model, state.frames, state.drive, state.eta, np.zeros(n), state.lam)
    return LinearisedSystem(np.eye(n), model.Cm + C, np.diag(model.omega2) + K, B, G, state)
