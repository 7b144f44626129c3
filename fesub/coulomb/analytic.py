"""Closed-form continuous steady state of a chain with one Coulomb contact (spec sections 2-6).

Frequency-independent modal basis: ``K phi_i = lam_i Gamma phi_i`` with ``phi.T Gamma phi = I``.
With ``R_i = r1 / sqrt(lam_i)`` (forcing over natural frequency) and the contact vector ``w``
(``e_j`` for a wall or a moving base, ``e_b - e_a`` between two masses):

* ``V_k = sum_i phi_ki phi_li / (lam_i - r1^2)``  (undamped receptance, Eq. 36)
* ``u_i = tan(pi / (2 R_i)) / R_i``  (modal damping function, Eq. 28, tan form)
* ``U_k = sum_i phi_ki phi_ci u_i / lam_i`` with ``phi_ci = w @ phi_i``  (Eq. 39)
* ``V_c = w @ V - b_amp`` (``b_amp = 1`` for the moving base, Eq. 112), ``U_c = w @ U``
* relative amplitude ``Z = sqrt(V_c^2 - (beta U_c)^2)`` (Eqs. 41, 90, 112; NaN if the radicand is
  negative: no continuous solution), phase ``phi_c = atan2(-beta U_c / V_c, Z / V_c)``
* time response on ``[0, pi]`` (Eqs. 49, 89, 113; ``tau = 0`` at the maximum of the contact
  coordinate, ``x(tau + pi) = -x(tau)``)::

      x_k(tau) = V_k cos(tau + phi_c) + beta sum_i phi_ki phi_ci / lam_i h_i(tau),
      h_i(tau) = 1 - cos(tau / R_i) - u_i R_i sin(tau / R_i)

  which equals the paper's ``(V_k / V_c)(Z cos tau + beta U_c sin tau) + ...``.

Continuous/stick-slip boundary (Eqs. 56-66, 97, 118)::

    beta_lim = |V_c| / sqrt(U_c^2 + max(S_c, mu sigma_c)^2),   sigma_c = w Gamma^-1 w / r1^2

with ``S_c`` by default the *exact* ``(1/r1^2) sup_tau sum_i phi_ci^2 g_i(tau)`` (the sup of the
sum, which is what condition (56) needs). ``s_method="paper"`` takes the sup of each modal term
first (Eqs. 57-58, conservative), ``"unit"`` sets every ``s_i = 1`` (Eq. 68).

Errata followed (spec section 11): Eq. 30 keeps the beta in the ``sin tau`` coefficient, Eq. 75 uses
``mu^2`` (derived from Eq. 66), Eq. 111 uses ``U_j``, Eq. 119 is written in the original indexing;
the stuck configuration of all three contact kinds is solved with the bordered system
``[[K - r1^2 Gamma, w], [w^T, 0]] [X*; Lambda] = [e_l; b_amp]`` which reproduces Eqs. 79, 101, 120.

Notes on the reference numbers (spec section 8), checked in ``tests/test_coulomb_analytic.py``:

* ``s_method="exact"`` (sup of the sum) is the default, as the spec recommends; the paper's
  Eqs. 57-58 are kept as ``"paper"`` and are never less conservative.
* Lists of "roots of U_k" in the spec include sign changes through poles of ``u`` (e.g.
  r1 = 0.323607 of the unit 2DOF chain, ``R_2 = 1/5``); :func:`fesub.coulomb.features.invariant_points` returns only
  true zeros unless ``poles=True``.
* The approach of ``beta_lim`` to ``pi/4`` at a resonance (j = l) is linear in the frequency
  offset with a slope up to ~33 (first mode of the unit 5DOF chain), so "1e-6 relative gives
  +-1e-5" holds for the 2DOF chain but needs 1e-7 there.
* The monoharmonic amplitude of the free mass of the unit 2DOF chain (j = l, beta = 0.3) is within
  0.13 % of the exact maximum, not the 0.05 % quoted.
"""

from __future__ import annotations

import numpy as np

from .._backend import kernels

from ..errors import ParameterError
from .model import ChainModel, CoulombContact, as_beta, as_r1, check_index, check_mu
from .results import (CONTINUOUS, REGIME_NAMES, STICK_SLIP, STUCK, ModalSums, RegimeMap,
                      SteadyState)

__all__ = [
    "CONTINUOUS", "STICK_SLIP", "STUCK", "REGIME_NAMES",
    "u_damping", "g_ratio", "den_hartog", "modal_sums", "ModalSums", "s_function", "contact_s",
    "beta_limit", "stuck_response", "steady_state", "SteadyState", "regime_map", "RegimeMap",
    "time_response",
]

_POLE = 1e12  # |u| above this is a pole of tan: treated as +-inf (spec section 10)
_GOLDEN = (np.sqrt(5.0) - 1.0) / 2.0


# ---------------------------------------------------------------------------------------------
# elementary functions

def u_damping(R):
    """Modal damping function ``u(R) = tan(pi / (2R)) / R`` (Eq. 28), dimensionless.

    Poles at ``R = 1/(2m+1)`` (returned as +-inf), zeros at ``R = 1/(2m)``.

    Parameters
    ----------
    R : float or array_like
        Frequency ratio omega / omega_i of a mode (dimensionless).

    Returns
    -------
    numpy.ndarray
        ``u(R)`` (dimensionless), of the shape of ``R``.
    """
    R = np.asarray(R, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        u = np.tan(np.pi / (2.0 * R)) / R
    return np.where(np.abs(u) > _POLE, np.copysign(np.inf, u), u)


def g_ratio(tau, R, u=None):
    """``g(tau) = [R sin(tau/R) + u R^2 (cos tau - cos(tau/R))] / sin tau`` (Eq. 56), for 0<tau<pi.

    Parameters
    ----------
    tau : float or array_like
        Non-dimensional time ``omega t`` (rad), in (0, pi).
    R : float or array_like
        Frequency ratio of the mode (dimensionless), broadcast against ``tau``.
    u : float or array_like, optional
        Modal damping function (dimensionless); default ``u_damping(R)``.

    Returns
    -------
    numpy.ndarray
        ``g(tau)`` (dimensionless).
    """
    tau = np.asarray(tau, dtype=float)
    R = np.asarray(R, dtype=float)
    if u is None:
        u = u_damping(R)
    with np.errstate(invalid="ignore", over="ignore"):
        return (R * np.sin(tau / R) + u * R * R * (np.cos(tau) - np.cos(tau / R))) / np.sin(tau)


def den_hartog(r, beta):
    """Den Hartog's SDOF closed form, written independently of the modal machinery.

    Parameters
    ----------
    r : array_like
        Frequency ratio omega/omega_n (dimensionless, > 0).
    beta : array_like
        Friction ratio F/P (dimensionless, >= 0).

    Returns
    -------
    X, phi : ndarray
        Displacement transmissibility (X k/P) and phase lag (rad); NaN where no continuous
        solution exists.
    """
    r = np.asarray(r, dtype=float)
    beta = np.asarray(beta, dtype=float)
    with np.errstate(all="ignore"):
        V = 1.0 / (1.0 - r * r)
        U = np.sin(np.pi / r) / (r * (1.0 + np.cos(np.pi / r)))
        X = np.sqrt(V * V - (beta * U) ** 2)
        phi = np.arctan2(-beta * U / V, X / V)
    return X, np.where(np.isnan(X), np.nan, phi)


# ---------------------------------------------------------------------------------------------
# modal sums

def contact_setup(model: ChainModel, contact, load):
    """Validated ``(contact, loaded mass index, contact vector w)`` of a chain."""
    if not isinstance(model, ChainModel):
        raise ParameterError(f"model must be a ChainModel, got {type(model).__name__}")
    contact = CoulombContact.from_spec(contact)
    contact.validate(model.n)
    l = check_index("load (loaded mass index)", contact.load_index(load), model.n)
    w = contact.vector(model.n)
    return contact, l, w


def modal_sums(model: ChainModel, contact, load, r1) -> ModalSums:
    """Response and damping functions on a frequency grid.

    Parameters
    ----------
    model : ChainModel
        The chain (mass and stiffness ratios, dimensionless).
    contact : CoulombContact or str
        Where the contact sits (see :meth:`CoulombContact.from_spec`; 0-based indices).
    load : int
        Index of the loaded mass (-); ignored for a moving base, which loads mass 0.
    r1 : array_like (nr,)
        Frequency ratios omega sqrt(m_0/k_0) (dimensionless, > 0).

    Returns
    -------
    ModalSums
        ``R`` (nr, N) frequency ratios per mode, ``u`` (nr, N), ``V`` and ``U`` (nr, N) per
        mass, ``Vc`` (= w@V - b_amp) and ``Uc`` (nr,), ``pc`` (N,) = w @ phi, ``sigma`` (nr,) =
        w Gamma^-1 w / r1^2, and ``coef`` (N, N) with ``coef[k, i] = phi_ki phi_ci / lam_i``;
        all dimensionless.
    """
    contact, l, w = contact_setup(model, contact, load)
    r1 = as_r1(r1)
    lam, phi = model.lam, model.phi
    pc = w @ phi
    R = r1[:, None] / np.sqrt(lam)[None, :]
    u = u_damping(R)
    with np.errstate(divide="ignore", invalid="ignore"):
        V = (phi[l][None, None, :] * phi[None, :, :] / (lam[None, None, :] - r1[:, None, None] ** 2)).sum(-1)
        coef = phi * (pc / lam)[None, :]
        U = (u[:, None, :] * coef[None, :, :]).sum(-1)
        Uc = (u * (pc * pc / lam)[None, :]).sum(-1)
    Vc = V @ w - contact.b_amp
    sigma = float(w @ (w / model.gamma)) / r1 ** 2
    return ModalSums(r1=r1, R=R, u=u, V=V, U=U, Vc=Vc, Uc=Uc, pc=pc, sigma=sigma, coef=coef, l=l,
                     w=w, contact=contact.to_dict())


def _golden_max(fun, lo, hi, iters=60):
    """Vectorised golden-section maximisation of ``fun`` on brackets [lo, hi] (arrays)."""
    a, b = lo.copy(), hi.copy()
    c = b - _GOLDEN * (b - a)
    d = a + _GOLDEN * (b - a)
    fc, fd = fun(c), fun(d)
    for _ in range(iters):
        left = fc >= fd
        b = np.where(left, d, b)
        a = np.where(left, a, c)
        c_new = b - _GOLDEN * (b - a)
        d_new = a + _GOLDEN * (b - a)
        # reuse one evaluation
        c, d = np.where(left, c_new, d), np.where(left, c, d_new)
        f_new = fun(np.where(left, c, d))
        fc, fd = np.where(left, f_new, fd), np.where(left, fc, f_new)
    t = 0.5 * (a + b)
    return t, fun(t)


def s_function(R, ntau: int = 2001):
    """Den Hartog's ``s(R) = sup_{0<tau<pi} g(tau, R)`` including the ``tau -> 0`` limit 1 (Eq. 58).

    Parameters
    ----------
    R : float or array_like
        Frequency ratios (dimensionless).
    ntau : int
        Grid points on [0, pi] for the sup (-).

    Returns
    -------
    numpy.ndarray
        ``s(R)`` (dimensionless), shape ``(len(R),)``.
    """
    R = np.atleast_1d(np.asarray(R, dtype=float))
    return _sup_g(R[:, None], np.ones(1), ntau)


def _grid_sizes(fmax, ntau):
    """Grid points on [0, pi] per row: >= 48 per period of the fastest component, in powers of
    two plus one (bucketed so rows can be processed together), capped at ``ntau``."""
    n = np.clip(np.ceil(24.0 * np.nan_to_num(fmax, nan=1.0, posinf=1e9)), 96, max(96, ntau - 1))
    b = (2 ** np.ceil(np.log2(n))).astype(np.int64) + 1
    return np.minimum(b, max(ntau, 97))


def _top_candidates(F, k=3):
    """Indices (rows, k) of the k largest local maxima (ends included) of each row of F."""
    G = np.where(np.isnan(F), -np.inf, F)
    m = np.ones(G.shape, bool)
    m[:, 1:] &= G[:, 1:] >= G[:, :-1]
    m[:, :-1] &= G[:, :-1] >= G[:, 1:]
    G = np.where(m, G, -np.inf)
    k = min(k, G.shape[1])
    return np.argpartition(-G, k - 1, axis=1)[:, :k]


def _sup_g(R, wts, ntau):
    """sup over 0<tau<pi of sum_i wts[i] g_i(tau; R[:, i]) (with the tau->0 limit sum(wts)).

    Adaptive grid (>= 48 points per period of the fastest mode, at most ``ntau``), the three
    largest local maxima refined by golden section (compiled kernel ``coulomb.sup_gsum`` or its
    NumPy twin); ``inf`` at the poles of ``u``.
    """
    R = np.ascontiguousarray(R, dtype=float)
    u = np.ascontiguousarray(u_damping(R))
    with np.errstate(divide="ignore"):
        fmax = np.maximum(1.0, 1.0 / R.min(axis=1))
    sizes = np.ascontiguousarray(_grid_sizes(fmax, ntau), dtype=np.int64)
    out = np.empty(R.shape[0])
    with np.errstate(invalid="ignore", over="ignore"):
        kernels("coulomb").sup_gsum(sizes, R, u, np.ascontiguousarray(wts, dtype=float), out)
    return out


def contact_s(model: ChainModel, contact, r1, method: str = "exact", ntau: int = 2001, *, ms=None):
    """``S_c`` of the boundary condition (Eqs. 57-58 and the spec's exact sup of the sum).

    Parameters
    ----------
    model : ChainModel
        The chain (dimensionless mass and stiffness ratios).
    contact : CoulombContact or str
        Where the contact sits.
    r1 : array_like (nr,)
        Frequency ratios omega sqrt(m_0/k_0) (dimensionless, > 0).
    method : {'exact', 'paper', 'unit'}
        How ``S_c`` is computed (see the module docstring).
    ntau : int
        Grid points on [0, pi] for the sup (-), >= 11.
    ms : ModalSums, optional
        Precomputed :func:`modal_sums` of the same chain, contact and ``r1`` (then ``r1`` is
        taken from it).

    Returns
    -------
    numpy.ndarray (nr,)
        ``S_c``, dimensionless; ``inf`` at the poles of ``u``.
    """
    if method not in ("exact", "paper", "unit"):
        raise ParameterError(f"s_method must be 'exact', 'paper' or 'unit', got {method!r}")
    ntau = int(ntau)
    if ntau < 11:
        raise ParameterError(f"ntau (grid points on [0, pi]) must be >= 11, got {ntau}")
    if ms is None:
        ms = modal_sums(model, contact, 0, r1)
    r1 = ms.r1
    pc2 = ms.pc ** 2
    if method == "unit":
        return ms.sigma.copy()
    if method == "exact":
        return _sup_g(ms.R, pc2, ntau) / r1 ** 2
    s = np.column_stack([_sup_g(ms.R[:, i:i + 1], np.ones(1), ntau) for i in range(model.n)])
    with np.errstate(invalid="ignore"):
        return (s * pc2[None, :]).sum(1) / r1 ** 2


def _beta_lim(ms, S, mu):
    with np.errstate(invalid="ignore", over="ignore"):
        den = np.sqrt(ms.Uc ** 2 + np.maximum(S, mu * ms.sigma) ** 2)
        bl = np.abs(ms.Vc) / den
    bad = ~np.isfinite(ms.Uc) | ~np.isfinite(S)
    return np.where(bad, 0.0, bl)


def beta_limit(model, contact, load, r1, mu=1.0, s_method="exact", ntau=2001):
    """Continuous/stick-slip boundary ``beta_lim(r1)`` (Eqs. 66, 97, 118), shape (nr,).

    Parameters
    ----------
    model : ChainModel
        The chain (mass and stiffness ratios, dimensionless).
    contact : CoulombContact or str
        Where the contact sits (see :meth:`CoulombContact.from_spec`; 0-based indices).
    load : int
        Index of the loaded mass (-); ignored for a moving base, which loads mass 0.
    r1 : array_like (nr,)
        Frequency ratios omega sqrt(m_0/k_0) (dimensionless, > 0).
    mu : float
        Static/kinetic friction ratio (dimensionless, >= 1).
    s_method : {'exact', 'paper', 'unit'}
        How ``S_c`` is computed (see :func:`contact_s`).
    ntau : int
        Grid points on [0, pi] for the sup (-).

    Returns
    -------
    numpy.ndarray (nr,)
        Boundary friction ratio ``beta_lim = F / P`` (dimensionless).
    """
    mu = check_mu(mu)
    ms = modal_sums(model, contact, load, r1)
    return _beta_lim(ms, contact_s(model, contact, r1, s_method, ntau, ms=ms), mu)


# ---------------------------------------------------------------------------------------------
# stuck configuration

def stuck_response(model: ChainModel, contact, load, r1):
    """Stuck (permanently sticking) forced response from the bordered system (spec section 5).

    Parameters
    ----------
    model : ChainModel
        The chain (mass and stiffness ratios, dimensionless).
    contact : CoulombContact or str
        Where the contact sits (see :meth:`CoulombContact.from_spec`; 0-based indices).
    load : int
        Index of the loaded mass (-); ignored for a moving base, which loads mass 0.
    r1 : array_like (nr,)
        Frequency ratios omega sqrt(m_0/k_0) (dimensionless, > 0).

    Returns
    -------
    X_star : ndarray (nr, N)
        Signed amplitudes of the stuck configuration (per unit load, or per unit base amplitude).
    Lam : ndarray (nr,)
        Signed amplitude of the contact force needed to keep the contact stuck (per unit load).
        The contact slides iff ``|Lam| > mu beta``; the stuck boundary is ``beta* = |Lam| / mu``.
    """
    contact, l, w = contact_setup(model, contact, load)
    r1 = as_r1(r1)
    n = model.n
    A = np.zeros((r1.size, n + 1, n + 1))
    A[:, :n, :n] = model.K[None] - r1[:, None, None] ** 2 * np.diag(model.gamma)[None]
    A[:, :n, n] = w
    A[:, n, :n] = w
    rhs = np.zeros(n + 1)
    rhs[l] = 1.0
    rhs[n] = contact.b_amp
    sol = np.full((r1.size, n + 1), np.nan)
    try:
        sol[:] = np.linalg.solve(A, np.broadcast_to(rhs, (r1.size, n + 1))[..., None])[..., 0]
    except np.linalg.LinAlgError:  # an exact resonance of the stuck subsystem somewhere
        for i in range(r1.size):
            try:
                sol[i] = np.linalg.solve(A[i], rhs)
            except np.linalg.LinAlgError:
                sol[i] = np.inf
    return sol[:, :n], sol[:, n]


# ---------------------------------------------------------------------------------------------
# the steady state

def steady_state(model: ChainModel, contact, load: int = 0, r1=1.0, beta=0.0, mu: float = 1.0,
                 s_method: str = "exact", amplitude: str = "exact", ntau: int = 2001) -> SteadyState:
    """Continuous steady state, boundaries and regimes on a grid of r1 and beta.

    Parameters
    ----------
    model : ChainModel
    contact : CoulombContact or str
        ``CoulombContact.wall(j)``, ``CoulombContact.masses(a, b)`` or ``CoulombContact.base(j)`` (0-based indices).
    load : int
        Index of the loaded mass (ignored for a moving base, which loads mass 0).
    r1 : array_like (nr,)
        Frequency ratios omega sqrt(m_1/k_1) (> 0).
    beta : array_like (nb,)
        Friction ratios F/P (>= 0).
    mu : float
        Static/kinetic friction ratio (>= 1).
    s_method : {'exact', 'paper', 'unit'}
        How ``S_c`` of the boundary is computed (see module docstring).
    amplitude : {'exact', 'monoharmonic'}
        Amplitudes of the masses: exact max of the time response (adaptive grid on [0, pi],
        the two largest local maxima refined by Newton steps) or Eqs. 52-53 / 91 / 114.
    ntau : int
        Most grid points on [0, pi] for the sup of ``S`` and the exact maxima (the grid has at
        least 48 points per period of the fastest mode and 97 points in all).
    """
    mu = check_mu(mu)
    if amplitude not in ("exact", "monoharmonic"):
        raise ParameterError(f"amplitude must be 'exact' or 'monoharmonic', got {amplitude!r}")
    r1 = as_r1(r1)
    beta = as_beta(beta)
    ms = modal_sums(model, contact, load, r1)
    contact, l = CoulombContact.from_spec(ms.contact), ms.l
    S = contact_s(model, contact, r1, s_method, ntau, ms=ms)
    Vc, Uc = ms.Vc, ms.Uc
    b = beta[:, None]
    with np.errstate(invalid="ignore", over="ignore"):
        bU = np.where(b == 0.0, 0.0, b * Uc[None, :])
        Z = np.sqrt(Vc[None, :] ** 2 - bU ** 2)
        phi_c = np.arctan2(-bU / Vc[None, :], Z / Vc[None, :])
    phi_c = np.where(np.isnan(Z), np.nan, phi_c)
    beta_lim = _beta_lim(ms, S, mu)
    X_star, Lam = stuck_response(model, contact, l, r1)
    beta_stuck = np.abs(Lam) / mu
    regime = np.where(b >= beta_stuck[None, :], STUCK,
                      np.where(b < beta_lim[None, :], CONTINUOUS, STICK_SLIP)).astype(np.int8)
    if amplitude == "exact":
        X, phi = _exact_amplitudes(ms, beta, phi_c, ntau)
    else:
        X, phi = _monoharmonic(ms, beta, Z, phi_c)
    return SteadyState(
        r1=r1, beta=beta, mu=mu, model=model.to_dict(), contact=contact.to_dict(), load=l,
        s_method=s_method, amplitude=amplitude, V=ms.V, U=ms.U, Vc=Vc, Uc=Uc, S=S,
        sigma=ms.sigma, Z=Z, phi_c=phi_c, X=X, phi=phi, beta_lim=beta_lim, beta_stuck=beta_stuck,
        X_stuck=X_star, regime=regime,
    )


def _wrap(a):
    return np.pi - np.mod(np.pi - a, 2.0 * np.pi)


def _monoharmonic(ms, beta, Z, phi_c):
    V, U, Vc, Uc = ms.V, ms.U, ms.Vc, ms.Uc
    b = beta[:, None, None]
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        x0 = (V / Vc[:, None])[None] * Z[..., None]                       # Eq. 47
        xd0 = np.where(b == 0, 0.0, b * (V * (Uc / Vc)[:, None] - U)[None])  # Eq. 48
        X = np.hypot(x0, xd0)                                             # Eq. 52 (first form)
        phi = _wrap(phi_c[..., None] + np.arctan2(xd0, x0))               # Eq. 53
    return X, np.where(np.isnan(X), np.nan, phi)


def _h_modes(tau, R, u):
    """h_i(tau) = 1 - cos(tau/R_i) - u_i R_i sin(tau/R_i)."""
    with np.errstate(invalid="ignore", over="ignore"):
        return 1.0 - np.cos(tau / R) - u * R * np.sin(tau / R)


def _exact_amplitudes(ms, beta, phi_c, ntau):
    """X_k = max over [0, pi] of |x_k(tau)| and its phase (Eq. 50), all (nb, nr, N).

    ``x_k = a cos(tau) + b sin(tau) + beta sum_i coef_ki h_i(tau)`` with ``a = V_k cos(phi_c)``,
    ``b = -V_k sin(phi_c)``. Adaptive grid (>= 48 points per period of the fastest mode, at most
    ``ntau``); the two largest local maxima of ``|x_k|`` are refined by Newton steps on
    ``x_k' = 0`` with analytic derivatives, kept inside their grid cells (compiled kernel
    ``coulomb.absmax_modal`` or its NumPy twin).
    """
    V, R, u, coef = ms.V, ms.R, ms.u, ms.coef
    nb, nr, n = beta.size, R.shape[0], coef.shape[0]
    with np.errstate(divide="ignore"):
        fmax = np.maximum(1.0, 1.0 / R.min(axis=1))
    sizes = np.ascontiguousarray(_grid_sizes(fmax, ntau), dtype=np.int64)
    with np.errstate(invalid="ignore"):
        A = np.ascontiguousarray((V[None] * np.cos(phi_c)[..., None]).reshape(nb, nr * n))
        B = np.ascontiguousarray((-V[None] * np.sin(phi_c)[..., None]).reshape(nb, nr * n))
    X = np.empty((nb, nr * n))
    T = np.empty((nb, nr * n))
    SG = np.empty((nb, nr * n))
    work = np.empty((R.shape[1] + n + 2) * int(sizes.max()))
    kernels("coulomb").absmax_modal(sizes, np.ascontiguousarray(R), np.ascontiguousarray(u),
                                    np.ascontiguousarray(coef), A, B, np.ascontiguousarray(beta),
                                    X, T, SG, work)
    X = X.reshape(nb, nr, n)
    T = T.reshape(nb, nr, n)
    SG = SG.reshape(nb, nr, n)
    phi = _wrap(phi_c[..., None] + T + np.where(SG < 0, np.pi, 0.0))            # Eq. 50
    nan = np.isnan(phi_c)[..., None] | ~np.isfinite(X)
    return np.where(nan, np.nan, X), np.where(nan, np.nan, phi)


def regime_map(model: ChainModel, contact, load: int = 0, r1=1.0, beta=0.0, mu: float = 1.0,
               ntau: int = 2001) -> RegimeMap:
    """Closed-form regimes on an (r1, beta) grid with the boundaries that delimit them.

    Parameters
    ----------
    model, contact, load
        As in :func:`steady_state`.
    r1 : array_like (nr,)
        Frequency ratios omega sqrt(m_1/k_1) (> 0, dimensionless).
    beta : array_like (nb,)
        Friction ratios F/P (>= 0, dimensionless).
    mu : float
        Static/kinetic friction ratio (>= 1).
    ntau : int
        Most grid points on [0, pi] for the sup of ``S`` (see :func:`steady_state`).

    Returns
    -------
    RegimeMap
        ``regime`` (nb, nr), the exact boundary ``beta_lim``, its ``s_i = 1`` approximation
        ``beta_lim_unit`` (Eq. 68) and the stuck boundary ``beta_stuck`` (nr,).
    """
    ss = steady_state(model, contact, load, r1, beta, mu=mu, amplitude="monoharmonic", ntau=ntau)
    unit = beta_limit(model, contact, load, ss.r1, mu=ss.mu, s_method="unit", ntau=ntau)
    return RegimeMap(r1=ss.r1, beta=ss.beta, mu=ss.mu, model=ss.model, contact=ss.contact,
                     load=ss.load, regime=ss.regime, beta_lim=ss.beta_lim, beta_lim_unit=unit,
                     beta_stuck=ss.beta_stuck)


def time_response(model: ChainModel, contact, load: int, r1: float, beta: float, tau=None,
                  ntau: int = 801):
    """Analytic continuous time response of every mass over one period.

    Parameters
    ----------
    r1, beta : float
        Frequency and friction ratios (scalars).
    tau : array_like, optional
        Non-dimensional times (rad); default ``ntau`` points on [0, 2 pi]. ``tau = 0`` is the
        maximum of the contact coordinate; the load is ``cos(tau + phi_c)``.

    Returns
    -------
    tau : ndarray (nt,)
    x : ndarray (N, nt)
        Displacements per unit load (NaN if no continuous solution exists).
    phi_c : float
        Phase lag of the contact coordinate (rad).
    """
    r1 = as_r1(r1)
    beta = as_beta(beta)
    if r1.size != 1 or beta.size != 1:
        raise ParameterError("time_response takes scalar r1 and beta")
    if tau is None:
        tau = np.linspace(0.0, 2.0 * np.pi, int(ntau))
    tau = np.asarray(tau, dtype=float)
    ms = modal_sums(model, contact, load, r1)
    b = float(beta[0])
    Vc, Uc = ms.Vc[0], ms.Uc[0]
    bU = 0.0 if b == 0 else b * Uc
    with np.errstate(invalid="ignore"):
        Z = np.sqrt(Vc * Vc - bU * bU)
        phi_c = np.arctan2(-bU / Vc, Z / Vc) if np.isfinite(Z) else np.nan
    t = np.mod(tau, 2.0 * np.pi)
    second = t >= np.pi
    tt = np.where(second, t - np.pi, t)
    h = _h_modes(tt[None, :], ms.R[0][:, None], ms.u[0][:, None])        # (N modes, nt)
    x = ms.V[0][:, None] * np.cos(tt + phi_c)[None, :] + (0.0 if b == 0 else b * (ms.coef @ h))
    x = np.where(second[None, :], -x, x)
    return tau, x, float(phi_c)
