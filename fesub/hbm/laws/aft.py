"""The alternating frequency-time (AFT) evaluation shared by the scalar laws ``f(u, v)``.

A law :class:`AFTLaw` gives its force ``f`` (N) and derivatives at sampled relative displacements
``u`` (m) and velocities ``v`` (m/s); this module turns them into harmonic forces, the harmonic
stiffness, the Hessian and the derivative in the frequency. With ``E`` (nt, rows) the basis at
``tau_i = 2 pi i / nt`` and ``E'`` its derivative in tau (:func:`fesub.hbm.fourier.aft_matrix`),
``Pj`` the quadrature of the Galerkin projections (:func:`fesub.hbm.fourier.aft_projection`)::

    u = E p + u_s,   v = w E' p
    F = Pj f(u, v)
    K = dF/dp = Pj [diag(f_u) E + w diag(f_v) E']
    hess[i] = sum_s Pj[i, s] (f_uu e e^T + w f_uv (e e'^T + e' e^T) + w^2 f_vv e' e'^T)_s
    dF/dw = Pj (f_v E' p)

(``e``, ``e'`` the rows of ``E``, ``E'`` at sample ``s``; ``u_s`` the static offset of the
decoupled scheme, 0 with the constant term). These are the exact derivatives of the sampled
(discrete) map, so they match central differences of it to rounding; the map itself approaches
the continuous Galerkin integrals as ``nt`` grows, spectrally for smooth laws and as ``nt^-2``
for laws with a kink (:class:`~fesub.hbm.laws.UnilateralContact`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...errors import ParameterError, check_count
from ..contact import ContactResult
from ..fourier import aft_matrix, aft_projection, check_nh, n_rows

__all__ = ["AFTLaw", "LawResult", "min_samples", "check_samples"]


@dataclass
class LawResult(ContactResult):
    """:class:`fesub.hbm.contact.ContactResult` of a scalar law, with ``F_w = dF/dw``
    (N s/rad; None for laws that do not depend on the velocity). ``tau``, ``from_state`` and
    ``to_state`` are empty and ``state0`` is -1 (no stick/slip states)."""

    F_w: np.ndarray | None = None


def min_samples(nh: int) -> int:
    """Fewest AFT samples accepted: ``4 nh + 2``, so that the products of two truncated
    series in the stiffness (harmonics up to ``2 nh``) are not aliased onto the retained ones."""
    return 4 * nh + 2


def check_samples(nt) -> int:
    """A law's default samples per period: an integer >= 8 (each evaluation further requires
    :func:`min_samples`)."""
    return check_count("nt (AFT samples per period)", nt, 8)


class AFTLaw:
    """A scalar contact law ``f(u, v)`` evaluated by AFT (base of the laws of this package).

    Subclasses set ``symmetric`` (odd law: ``f(-u, -v) = -f(u, v)``), ``velocity_dependent``,
    ``linear_stiffness`` (N/m, the stiffness of the linear guesses), ``nt`` (default samples per
    period) and implement :meth:`law`.
    """

    ncomp = 1
    has_constant = True
    symmetric = False
    velocity_dependent = False
    linear_stiffness = 0.0
    nt = 512

    def law(self, u, v, order: int):
        """Force (N) at displacements ``u`` (m) and velocities ``v`` (m/s), arrays of one
        shape; ``order`` 1 adds ``(f_u, f_v)`` (N/m, N s/m), 2 adds ``(f_uu, f_uv, f_vv)``."""
        raise NotImplementedError

    def static(self, u):
        """Force (N) and stiffness ``f_u`` (N/m) at rest (``v = 0``), ``u`` (m) of shape (1,)."""
        u = np.atleast_1d(np.asarray(u, float))
        out = self.law(u, np.zeros_like(u), 1)
        return out[0], out[1]

    def samples(self, nt=None) -> int:
        """Samples per period: ``nt`` if given, else the law's default."""
        return self.nt if nt is None else nt

    def evaluate(self, p, nh: int, *, constant: bool = False, offset=0.0, w=None,
                 hessian: bool = False, lam=None, nt=None, method: str = "aft") -> LawResult:
        """Harmonic force (N), stiffness (N/m), Hessian (N/m^2) and ``dF/dw`` at ``p`` (m).

        Parameters
        ----------
        p : (rows,) array
            Coefficients of the relative displacement (m), ``rows = 2 nh (+ 1 with constant)``.
        nh : int
            Number of harmonics.
        constant : bool
            ``p`` (and the forces) carry the constant term first.
        offset : float
            Static relative displacement ``u_s`` (m) added to the samples (decoupled scheme).
        w : float, optional
            Frequency (rad/s); required by velocity-dependent laws.
        hessian : bool
            Return the full Hessian tensor ``hess[i, a, b] = dK[i, a]/dp_b``.
        lam : (rows,) array, optional
            Multipliers; return ``sum_i lam_i hess[i]``.
        nt : int, optional
            AFT samples per period (default: the law's ``nt``; at least ``4 nh + 2``).
        method : {'aft'}
        """
        nh = check_nh(nh)
        if method != "aft":
            raise ParameterError(f"method must be 'aft' for {type(self).__name__}, "
                                 f"got {method!r}")
        nt = check_count("nt (AFT samples per period)", self.samples(nt), min_samples(nh))
        rows = n_rows(nh, constant)
        p = np.asarray(p, float).ravel()
        if p.size != rows:
            raise ParameterError(f"p must have length {rows}, got {p.size}")
        if not np.all(np.isfinite(p)):
            raise ParameterError("p (displacement coefficients, m) contains NaN or inf")
        if self.velocity_dependent and w is None:
            raise ParameterError(f"{type(self).__name__} depends on the velocity: "
                                 "w (rad/s) must be given")
        ww = 0.0 if (w is None or not self.velocity_dependent) else float(w)
        E = aft_matrix(nh, nt, constant)
        Ed = aft_matrix(nh, nt, constant, d=1)
        Pj = aft_projection(nh, nt, constant)
        dxdtau = Ed @ p
        u = E @ p + float(offset)
        v = ww * dxdtau
        order = 2 if (hessian or lam is not None) else 1
        out = self.law(u, v, order)
        f, fu, fv = out[0], out[1], out[2]
        F = Pj @ f
        Ev = ww * Ed
        K = Pj @ (fu[:, None] * E + fv[:, None] * Ev)
        hess = hl = None
        if order == 2:
            fuu, fuv, fvv = out[3], out[4], out[5]
            if hessian:
                hess = (np.einsum("is,sa,sb->iab", Pj * fuu, E, E)
                        + np.einsum("is,sa,sb->iab", Pj * fuv, E, Ev)
                        + np.einsum("is,sa,sb->iab", Pj * fuv, Ev, E)
                        + np.einsum("is,sa,sb->iab", Pj * fvv, Ev, Ev))
            if lam is not None:
                lam = np.asarray(lam, float).ravel()
                if lam.size != rows:
                    raise ParameterError(f"lam must have length {rows}, got {lam.size}")
                g = lam @ Pj
                B = (g * fuv)[:, None] * Ev
                hl = (E.T @ ((g * fuu)[:, None] * E) + E.T @ B + B.T @ E
                      + Ev.T @ ((g * fvv)[:, None] * Ev))
        Fw = Pj @ (fv * dxdtau) if self.velocity_dependent else None
        e = np.zeros(0)
        return LawResult(F, K, hess, hl, e, e.astype(int), e.astype(int), -1, Fw)
