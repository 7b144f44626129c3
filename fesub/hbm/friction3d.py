"""3D friction contact element for harmonic balance: isotropic Coulomb slip in the tangent plane.

:class:`Friction3D` is a node-to-node element with three local components, the two tangential
ones then the normal one: ``u = [u1, u2, un] = G q`` (m). Its laws:

* normal: a penalty spring with a preload, ``f_n = max(N0 + kn un, 0)`` (N); ``N0 < 0`` is an
  initial gap ``g0 = -N0 / kn`` (m). When ``f_n`` vanishes the element separates and the
  tangential force is zero.
* tangential: an elastic spring ``kt`` in series with an isotropic Coulomb slider,
  ``|f_t| <= mu f_n`` (the slip limit is the CIRCLE of radius ``mu f_n`` in the tangent plane,
  not a box per direction).

Harmonic forces come from the alternating frequency-time method (AFT): the coefficients
``p = [X1; X2; Y]`` (three blocks of ``2 nh``: cos 1, sin 1, ..., sin nh; with the constant term
``2 nh + 1``, the mean first) are sampled at ``nt`` points per period, the time-discrete return map
(elastic predictor, radial return onto the circle of the current normal load; re-contact at the
interpolated crossing of ``N0 + kn un = 0``) is marched from rest (``f_t = 0`` with the slider at
the origin, so that a contact that never slips is the spring ``kt u``, mean included) over whole
periods until the hysteresis repeats (the tangential
force at the end of a period equals its value at the start within ``tol * mu max f_n``; the
return map is non-expansive, so the next period then repeats the last to that bound), and the
last period is projected, ``F = (2/nt) E^T f``. The harmonic stiffness ``K = dF/dp`` is the
exact derivative of that discrete map (chain rule through every step of the march, the radial
return's derivative ``mu t^ dN + (mu N/|t|) (I - t^ t^T) dt`` included), so it matches central
finite differences of the same map to rounding.

The mean of the forces: in a system with the constant term (``HBSystem(..., constant=True)``)
it is kept, ``F^0 = (1/nt) sum f``; with a moving normal load the friction force has one, and the
mean normal load differs from ``n0`` once the contact opens. Without it (the default, the
static/dynamic decoupled scheme of :class:`fesub.hbm.contact.StickSlipSeparation`) the means are
discarded: exact for constant normal loads, 7e-4 of the response off with a moving normal load
and 8 % once a contact opens (the 3-DOF example of the time-integration tests). The decoupled
scheme stays the default because a free-floating structure (a free-free jointed beam) has no
static equilibrium of its mean under sliding contacts.

Special cases: motion along one tangential direction with a constant normal load is
:class:`fesub.hbm.contact.Jenkins`'s AFT map; one tangential direction with the normal is
:class:`fesub.hbm.contact.StickSlipSeparation`'s AFT map (same samples, same re-contact rule).

All elements of a system are evaluated in one compiled call, :func:`evaluate_many` (kernel
``hbm3d``, its NumPy twin ``hbm3d_ref``, chosen by :func:`fesub._backend.kernels`).
"""

from __future__ import annotations

import math

import numpy as np

from .._backend import kernels
from ..errors import ParameterError, check_count, check_positive
from ..limits import check_steps
from .contact import ContactResult
from .fourier import aft_matrix, check_nh, n_rows

__all__ = ["Friction3D", "evaluate_many", "force_history_3d", "DEFAULT_TOL", "DEFAULT_PERIODS"]

#: relative end-of-period change (of ``mu max f_n``) at which the hysteresis counts as repeated
DEFAULT_TOL = 1e-12
#: most periods marched before the last one is taken as it is
DEFAULT_PERIODS = 200


def default_nt(nh: int) -> int:
    """Default AFT samples per period: ``max(128, 32 nh)``."""
    return max(128, 32 * nh)


class Friction3D:
    """3D node-to-node friction contact: penalty normal with preload, circular Coulomb slip.

    Parameters
    ----------
    kt : float
        Tangential contact stiffness (N/m), > 0 (the same in both tangential directions).
    kn : float
        Normal contact stiffness (N/m), > 0.
    mu : float
        Friction coefficient (-), >= 0.
    n0 : float
        Static normal load (N) at zero normal displacement: ``f_n = max(n0 + kn un, 0)``.
        Negative: an open gap ``-n0 / kn`` (m).
    nt : int, optional
        AFT samples per period (default ``max(128, 32 nh)``, at least ``4 nh + 2``).
    tol : float, optional
        Periodicity tolerance of the march, relative to ``mu max f_n`` (default 1e-12).
    max_periods : int, optional
        Most periods marched (default 200); :attr:`ContactResult3D.periods` and
        :attr:`ContactResult3D.residual` report what was reached.

    Components (``ncomp = 3``): tangential 1, tangential 2, normal; ``p = [X1; X2; Y]`` (m).
    """

    ncomp = 3
    has_constant = False
    #: evaluated by AFT only (no event method)
    aft_only = True

    def __init__(self, kt: float, kn: float, mu: float, n0: float, *, nt: int | None = None,
                 tol: float = DEFAULT_TOL, max_periods: int = DEFAULT_PERIODS):
        self.kt = check_positive("kt (tangential contact stiffness, N/m)", kt)
        self.kn = check_positive("kn (normal contact stiffness, N/m)", kn)
        self.mu = check_positive("mu (friction coefficient)", mu, strict=False)
        n0 = float(n0)
        if not math.isfinite(n0):
            raise ParameterError(f"n0 (normal preload, N) must be finite, got {n0}")
        self.n0 = n0
        self.nt = None if nt is None else check_count("nt (AFT samples per period)", nt, 8)
        self.tol = check_positive("tol (periodicity tolerance)", tol, strict=False)
        self.max_periods = check_count("max_periods", max_periods, 1)

    @property
    def stiffnesses(self):
        """Per component the stuck stiffness (N/m): ``(kt, kt, kn)``."""
        return (self.kt, self.kt, self.kn)

    #: index of the normal component
    normal_component = 2

    def stored_energy(self, f, un):
        """Energy (J) held by the contact with forces ``f`` (..., 3) (N: tangential 1 and 2,
        normal) at normal displacement ``un`` (...) (m), counted from rest (zero displacement
        and tangential force) less the work of the rest load ``n0+ = max(n0, 0)``, which a
        static load on the structure balances: ``|f_t|^2 / (2 kt) + (f_n^2 - n0+^2) / (2 kn)
        - n0+ un``. Closed: ``kn un^2 / 2`` plus the tangential spring's energy; open: the work
        done against the rest load. Slip dissipates; the spring keeps only ``|f_t|^2 / (2 kt)``."""
        f = np.asarray(f, float)
        n0 = max(self.n0, 0.0)
        dn = f[..., 2] - n0
        # (f_n^2 - n0^2) / (2 kn) - n0 un regrouped: closed, dn / kn - un is rounding only, so
        # a small motion under a large preload keeps its kn un^2 / 2
        return (0.5 * (f[..., 0] ** 2 + f[..., 1] ** 2) / self.kt + 0.5 * dn * dn / self.kn
                + n0 * (dn / self.kn - np.asarray(un, float)))

    def params(self) -> np.ndarray:
        """``[kt, kn, mu, n0]`` (N/m, N/m, -, N), the kernel's parameter row."""
        return np.array([self.kt, self.kn, self.mu, self.n0])

    def evaluate(self, p, nh: int, *, hessian: bool = False, lam=None, nt: int | None = None,
                 method: str = "aft") -> "ContactResult3D":
        """Harmonic force (N) and stiffness ``K = dF/dp`` (N/m) at ``p = [X1; X2; Y]`` (m).

        Parameters
        ----------
        p : (6 nh,) or (3 (2 nh + 1),) array
            Relative displacement coefficients (m): tangential 1, tangential 2, normal (each
            block with its mean first in the second form: the constant term).
        nh : int
            Number of harmonics.
        nt : int, optional
            AFT samples per period (default: the element's ``nt``, else ``max(128, 32 nh)``).
        hessian, lam :
            Not available (the discrete map is piecewise smooth; no Hessian is formed).
        method : {'aft'}
        """
        if method != "aft":
            raise ParameterError(f"Friction3D is evaluated by AFT only, got method={method!r}")
        if hessian or lam is not None:
            raise ParameterError("Friction3D has no Hessian (AFT of a piecewise-smooth map): the "
                                 "backbone's optimality system needs one; use forced_response, "
                                 "dnnm or phase_resonance")
        nh = check_nh(nh)
        F, K, per, res = evaluate_many([self], np.asarray(p, float).reshape(1, -1), nh,
                                       nt=nt if nt is not None else self.nt)
        e = np.zeros(0)
        return ContactResult3D(F[0], K[0], None, None, e, e.astype(int), e.astype(int), -1,
                               int(per[0]), float(res[0]))


class ContactResult3D(ContactResult):
    """:class:`fesub.hbm.contact.ContactResult` of :class:`Friction3D` with ``periods`` (the
    periods marched) and ``residual`` (N, the last period's end-of-period change of the
    tangential force)."""

    def __init__(self, F, K, hess, hess_lam, tau, from_state, to_state, state0, periods,
                 residual):
        super().__init__(F, K, hess, hess_lam, tau, from_state, to_state, state0)
        self.periods = periods
        self.residual = residual


def evaluate_many(elements, P, nh: int, *, nt: int | None = None, tol: float | None = None,
                  max_periods: int | None = None):
    """Harmonic forces and stiffness blocks of many :class:`Friction3D` elements in one call.

    Parameters
    ----------
    elements : sequence of Friction3D
        The elements (their ``kt``, ``kn`` in N/m, ``mu``, ``n0`` in N).
    P : (ne, 6 nh) or (ne, 3 (2 nh + 1)) array
        Each element's coefficients ``[X1; X2; Y]`` (m); the second form has the constant
        term (each block's mean first, projected with ``1/nt``).
    nh : int
        Number of harmonics.
    nt : int, optional
        AFT samples per period (default ``max(128, 32 nh)``).
    tol, max_periods : optional
        Periodicity tolerance (relative) and most periods (default: the first element's).

    Returns
    -------
    F : (ne, 3 m) ndarray
        Harmonic forces (N), ``m`` the coefficients per block of ``P``.
    K : (ne, 3 m, 3 m) ndarray
        ``dF/dp`` per element (N/m).
    periods : (ne,) ndarray of int
        Periods marched.
    residual : (ne,) ndarray
        End-of-period change of the tangential force in the last period (N).
    """
    nh = check_nh(nh)
    return _run(elements, P, nh, nt, tol, max_periods, np.zeros((0, 0, 0)))


def _run(elements, P, nh, nt, tol, max_periods, H):
    """Validate, allocate and call the kernel (:func:`evaluate_many`; ``H`` the force samples
    of the last period, (ne, nt, 3), or (0, 0, 0) for none)."""
    elements = list(elements)
    ne = len(elements)
    P = np.ascontiguousarray(P, float)
    constant = P.ndim == 2 and P.shape[1] == 3 * (2 * nh + 1)
    m = n_rows(nh, constant)
    if P.shape != (ne, 3 * m):
        raise ParameterError(f"P must have shape ({ne}, {6 * nh}) (no mean) or ({ne}, "
                             f"{3 * (2 * nh + 1)}) (the mean first in each block), got {P.shape}")
    if not np.all(np.isfinite(P)):
        raise ParameterError("contact displacement coefficients contain NaN or inf")
    nt = default_nt(nh) if nt is None else check_count("nt (AFT samples per period)", nt, 8)
    if nt < 4 * nh + 2:
        raise ParameterError(f"nt must be >= 4 nh + 2 = {4 * nh + 2}, got {nt}")
    check_steps("samples per period (nt)", nt, bytes_each=8.0 * (3 * m + 8))
    if ne == 0:
        return np.zeros((0, 3 * m)), np.zeros((0, 3 * m, 3 * m)), np.zeros(0, int), np.zeros(0)
    first = elements[0]
    tol = first.tol if tol is None else check_positive("tol", tol, strict=False)
    max_periods = first.max_periods if max_periods is None else check_count("max_periods",
                                                                            max_periods, 1)
    par = np.ascontiguousarray(np.array([e.params() for e in elements]))
    E = np.ascontiguousarray(aft_matrix(nh, nt, constant))
    F = np.empty((ne, 3 * m))
    K = np.empty((ne, 3 * m, 3 * m))
    info = np.zeros(ne, np.intc)
    res = np.zeros(ne)
    work = np.empty(3 * nt + 12 * m)
    kernels("hbm3d").aft_march(P, par, E, float(tol), int(max_periods), F, K, H, info, res,
                                 work)
    if constant:     # the kernel projects every row with 2/nt; the mean's weight is 1/nt
        F[:, ::m] *= 0.5
        K[:, ::m, :] *= 0.5
    return F, K, info, res


def force_history_3d(element: Friction3D, p, nh: int, nt: int = 1024):
    """Steady-state forces of a :class:`Friction3D` over one period at ``tau_i = 2 pi i / nt``.

    Parameters
    ----------
    element : Friction3D
    p : (6 nh,) or (3 (2 nh + 1),) array
        Coefficients ``[X1; X2; Y]`` of the relative displacement (m), without or with the
        constant term.
    nh : int
        Number of harmonics.
    nt : int
        Samples per period (-).

    Returns
    -------
    f : (nt, 3) ndarray
        Tangential 1, tangential 2 and normal force (N; the normal includes ``n0``), the last
        period of the same return map as :meth:`Friction3D.evaluate` (marched until the
        hysteresis repeats).
    """
    nh = check_nh(nh)
    nt = check_count("nt (samples per period)", nt, 4 * nh + 2)
    H = np.empty((1, nt, 3))
    _run([element], np.asarray(p, float).reshape(1, -1), nh, nt, None, None, H)
    return H[0]
