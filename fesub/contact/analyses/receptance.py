"""Frequency response of the sliding contact at a frozen contact position: substructure
receptances, LM-FBS coupling (eq. 45) and the primal check.

Coupled receptance at a frozen contact configuration (dual assembly, eq. 45)::

    H^C(jw) = H - H B_E' (B_C H B_E')^-1 B_C H,        H = blockdiag(H_1, H_2)

with the receptance of each substructure in its own modal basis (``K phi = w_k^2 M phi``,
``phi' M phi = I``, Rayleigh damping ``C = alpha M + beta K`` is diagonal: ``c_k = alpha + beta w_k^2``)::

    H_r(jw)[a, b] = sum_k phi_a,k phi_b,k / (w_k^2 - w^2 + j w c_k)

Rigid-body modes (``w_k = 0``, e.g. the vertical translation of the slider, whose driven DOFs only
hold it along x) make ``H_r`` infinite at ``w = 0`` although the coupled system is held. They are
therefore not summed into ``H``: their amplitudes ``eta_r`` stay unknowns next to the multiplier,

    [ B_C H_f B_E'   -B_C Phi_r ] [lambda]   [ B_C H_f f ]
    [ Phi_r' B_E'     diag(d_r) ] [ eta_r] = [ Phi_r' f  ],      d_r = -w^2 + j w c_r,

    u = H_f (f - B_E' lambda) + Phi_r eta_r,

which is eq. (45) exactly for ``w > 0`` (eliminate ``eta_r``) and its finite limit at ``w = 0``.
``H_f`` sums the flexible modes only.

The primal form (eqs. 8-14) ``u = L_C (L_E' Z L_C)^-1 L_E' f`` with ``Z = K - w^2 M + j w C``,
``B_C L_C = 0`` and ``B_E L_E = 0`` gives the same receptance and is solved directly (dense) by
:func:`primal_frf`: the independent check.

Units: forces in N, displacements in m, receptance in m/N, accelerance in (m/s^2)/N, angular
frequencies ``omega`` in rad/s, ``freqs_hz`` in Hz, positions in m, times in s.

With friction (mu > 0) the coupling is that of steady sliding in one direction: the friction force
stays mu times the normal force and keeps its sign (B_E carries it, eq. 42), so the FRFs describe
small vibrations about a sliding state; they are not reciprocal (B_E != B_C).

The time-dependent FRF (:mod:`fesub.contact.frf`) evaluates eq. (45) along the sliding path with
the modal data, channels and the bordered solve of this module.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla

from ...errors import ModelError, ParameterError
from .eigen import coupled_matrices, null_space_row

__all__ = ["ModalBasis", "modal_factors", "substructure_receptance", "channel", "lmfbs_frf", "primal_frf",
           "dense_dual_frf"]


# ---------------------------------------------------------------------------- modal data
@dataclass
class ModalBasis:
    """Modal data of one substructure: ``w2`` (n,) squared natural frequencies (rad^2/s^2; exact
    zeros for rigid-body modes), ``phi`` (ndof, n) mass-normalised shapes and ``c`` (n,) modal
    damping (1/s), so that the modal equation is ``eta'' + c eta' + w2 eta = phi' f``."""

    w2: np.ndarray
    phi: np.ndarray
    c: np.ndarray

    @property
    def rigid(self) -> np.ndarray:
        """Boolean mask of the rigid-body modes (w2 == 0)."""
        return self.w2 == 0.0

    @classmethod
    def from_rayleigh(cls, w2, phi, alpha: float, beta: float) -> "ModalBasis":
        """Basis of a Rayleigh-damped substructure (``c = alpha + beta w2``)."""
        w2 = np.asarray(w2, float)
        return cls(w2, np.asarray(phi, float), alpha + beta * w2)

    @classmethod
    def from_matrices(cls, K, M, C=None, *, rigid_tol: float = 1e-12, diag_tol: float = 1e-8) -> "ModalBasis":
        """Modes of dense symmetric (K, M) (K semi-definite, M definite) and the modal damping of ``C``.

        Accuracy: the direct problem ``K phi = w^2 M phi`` gives each eigenvalue with an absolute
        error of about eps * w_max^2, i.e. a RELATIVE error eps * w_max^2 / w_k^2 for the low modes
        (1e-8 for the reduced beam 2, whose boundary DOFs push w_max^2 / w_1^2 to 1e8), and the
        receptance at low frequency inherits it. The modes are therefore computed from the
        flexibility form ``M phi = mu (K + sigma M) phi``, ``w^2 = 1/mu - sigma``, which resolves the
        low modes to round-off relative to themselves (sigma = 0 when K is definite, otherwise a
        tenth of the lowest flexible eigenvalue, so that K + sigma M is definite). Rigid-body modes
        (eigenvalues below ``rigid_tol`` times the largest in the direct problem) get w2 = 0 exactly.

        ``C`` must be diagonal in the modal basis (Rayleigh or any modal damping); its largest
        off-diagonal modal entry may be ``diag_tol`` times the largest diagonal one, otherwise
        :class:`ModelError` (a non-proportional damping needs :func:`primal_frf` instead).
        """
        K = np.asarray(K.toarray() if hasattr(K, "toarray") else K, float)
        M = np.asarray(M.toarray() if hasattr(M, "toarray") else M, float)
        if K.ndim != 2 or K.shape[0] != K.shape[1] or M.shape != K.shape:
            raise ModelError(f"K and M must be square and of equal shape, got {K.shape} and {M.shape}")
        lam0 = sla.eigh(K, M, eigvals_only=True)
        n_rigid = int(np.sum(lam0 < rigid_tol * lam0.max()))
        if n_rigid == lam0.size:
            raise ModelError("every mode of the substructure is a rigid-body mode")
        sigma = 0.0 if n_rigid == 0 else 0.1 * lam0[n_rigid]
        mu, phi = sla.eigh(M, K + sigma * M)
        order = np.argsort(-mu)
        mu, phi = mu[order], phi[:, order]
        w2 = 1.0 / mu - sigma
        w2[:n_rigid] = 0.0
        phi = phi / np.sqrt(mu)[None, :]            # K+sigma M -normalised -> mass-normalised
        if C is None:
            c = np.zeros_like(w2)
        else:
            C = np.asarray(C.toarray() if hasattr(C, "toarray") else C, float)
            if C.shape != K.shape:
                raise ModelError(f"C must have the shape of K {K.shape}, got {C.shape}")
            Cm = phi.T @ C @ phi
            c = np.diag(Cm).copy()
            off = np.abs(Cm - np.diag(c)).max()
            if off > diag_tol * max(np.abs(c).max(), 1e-300):
                raise ModelError("the damping matrix is not diagonal in the modal basis (largest off-diagonal "
                                 f"modal entry {off:.3g} vs diagonal {np.abs(c).max():.3g}); use primal_frf")
        return cls(w2, phi, c)

    @classmethod
    def of_system(cls, system, which: int) -> "ModalBasis":
        """Accurate modal basis (see :meth:`from_matrices`) of substructure ``which`` (1 or 2) of a
        :class:`SlidingContactSystem` (its free partitions, Rayleigh damping), cached per system."""
        if which not in (1, 2):
            raise ParameterError(f"substructure must be 1 or 2, got {which!r}")
        cache = _BASES.setdefault(system, {})
        if which not in cache:
            K, M = (system.K1, system.M1) if which == 1 else (system.K2, system.M2)
            a, b = (system.alpha1, system.beta1) if which == 1 else (system.alpha2, system.beta2)
            base = cls.from_matrices(K, M)
            if system.modal_cutoff_hz is not None:
                keep = np.sqrt(base.w2) / (2 * np.pi) <= system.modal_cutoff_hz
                base = cls(base.w2[keep], base.phi[:, keep], base.c[keep])
            cache[which] = cls.from_rayleigh(base.w2, base.phi, a, b)
        return cache[which]


_BASES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def omega_grid(omega, name: str = "omega (rad/s)") -> np.ndarray:
    w = np.atleast_1d(np.asarray(omega, dtype=float))
    if w.ndim != 1 or w.size == 0:
        raise ParameterError(f"{name} must be a non-empty 1D array, got shape {np.shape(omega)}")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ParameterError(f"{name} must be finite and >= 0")
    return w


def modal_factors(w2, c, omega) -> np.ndarray:
    """``D[k, i] = 1 / (w2_k - omega_i^2 + j omega_i c_k)`` (s^2 per unit modal mass), shape (n, nw).

    Raises :class:`ParameterError` where a factor is infinite (a rigid-body mode at omega = 0)."""
    w = omega_grid(omega)
    w2 = np.asarray(w2, float)
    c = np.asarray(c, float)
    den = w2[:, None] - (w * w)[None, :] + 1j * w[None, :] * c[:, None]
    if np.any(den == 0):
        raise ParameterError("omega = 0 with a rigid-body mode (w_k = 0): the substructure receptance is "
                             "infinite there; use the coupled FRF (lmfbs_frf) or omega > 0")
    return 1.0 / den


def substructure_receptance(basis: ModalBasis, rows, cols, omega) -> np.ndarray:
    """Receptance (m/N) ``H[a, b, i] = sum_k phi_a,k phi_b,k / (w_k^2 - w_i^2 + j w_i c_k)`` for the
    requested DOF ``rows`` and ``cols`` only (modal superposition over every mode of ``basis``).

    Returns shape (len(rows), len(cols), len(omega)). Rigid-body modes are allowed for omega > 0.
    """
    rows = _dof_list(rows, basis.phi.shape[0], "rows")
    cols = _dof_list(cols, basis.phi.shape[0], "cols")
    D = modal_factors(basis.w2, basis.c, omega)
    pr, pc = basis.phi[rows], basis.phi[cols]
    prod = (pr[:, None, :] * pc[None, :, :]).reshape(-1, pr.shape[1])
    return (prod @ D).reshape(rows.size, cols.size, -1)


def _dof_list(idx, n, name) -> np.ndarray:
    a = np.atleast_1d(np.asarray(idx))
    if a.ndim != 1 or a.size == 0 or not np.issubdtype(a.dtype, np.integer):
        raise ParameterError(f"{name} must be a non-empty list of integer DOF indices")
    if a.min() < 0 or a.max() >= n:
        raise ParameterError(f"{name} must lie in 0..{n - 1}, got {a.tolist()}")
    return a.astype(np.int64)


# ---------------------------------------------------------------------------- channels
def channel(system, ch) -> tuple[int, int]:
    """(substructure 1|2, reduced DOF index) of a channel.

    ``ch`` is a name of ``system.outputs1`` / ``system.outputs2`` (e.g. 'C_y' for the vertical DOF of
    the slave, 'T_y' for the beam tip) or a pair (1, index into the free q1) / (2, index into q2).
    """
    n1, n2 = system.K1.shape[0], system.K2.shape[0]
    if isinstance(ch, str):
        if ch in system.outputs1:
            return 1, int(system.outputs1[ch])
        if ch in system.outputs2:
            return 2, int(system.outputs2[ch])
        names = sorted(list(system.outputs1) + list(system.outputs2))
        raise ParameterError(f"unknown channel {ch!r}; named channels are {names} or (1|2, index) pairs")
    try:
        sub, idx = ch
        ok = float(sub) == int(sub) and float(idx) == int(idx)
        sub, idx = int(sub), int(idx)
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ParameterError(f"a channel is a name or a (substructure, integer index) pair, got {ch!r}")
    if sub not in (1, 2):
        raise ParameterError(f"channel substructure must be 1 or 2, got {sub}")
    n = n1 if sub == 1 else n2
    if not 0 <= idx < n:
        raise ParameterError(f"channel index of substructure {sub} must lie in 0..{n - 1}, got {idx}")
    return sub, idx


def _channels(system, chs):
    single = isinstance(chs, str) or (isinstance(chs, tuple) and len(chs) == 2 and not isinstance(chs[0], (str, tuple)))
    lst = [chs] if single else list(chs)
    if not lst:
        raise ParameterError("channel list must not be empty")
    return [channel(system, c) for c in lst], single


def _global_index(system, ch) -> int:
    sub, idx = ch
    return idx if sub == 1 else system.K1.shape[0] + idx


# ---------------------------------------------------------------------------- small coupled solve
def coupled_response(a, P, Q, Y0, rho, sigma, G, Orig, dr):
    """Coupled response ``Y0 - Q lambda + Or eta`` from the bordered system of the module docstring.

    Shapes broadcast over a leading grid ``S`` (e.g. (nw,) or (nt, nw)): ``a, P, Q, Y0`` of shape S;
    ``rho, sigma`` (..., nr) broadcastable to S + (nr,); ``G, Orig`` (nr,); ``dr`` S + (nr,).
    """
    nr = dr.shape[-1]
    if nr == 0:
        lam = P / a
        return Y0 - Q * lam
    if nr == 1:
        r, s_, g, o, d = rho[..., 0], sigma[..., 0], G[0], Orig[0], dr[..., 0]
        det = a * d + r * s_
        lam = (P * d + r * g) / det
        eta = (a * g - s_ * P) / det
        return Y0 - Q * lam + o * eta
    shape = np.broadcast_shapes(a.shape, P.shape, dr.shape[:-1])
    m = nr + 1
    A = np.zeros(shape + (m, m), complex)
    A[..., 0, 0] = a
    A[..., 0, 1:] = -np.broadcast_to(rho, shape + (nr,))
    A[..., 1:, 0] = np.broadcast_to(sigma, shape + (nr,))
    idx = np.arange(nr)
    A[..., 1 + idx, 1 + idx] = dr
    b = np.zeros(shape + (m,), complex)
    b[..., 0] = P
    b[..., 1:] = G
    x = np.linalg.solve(A, b[..., None])[..., 0]
    return Y0 - Q * x[..., 0] + x[..., 1:] @ Orig


# ---------------------------------------------------------------------------- frozen position
def lmfbs_frf(system, s: float, omega, inp, out, mu: float = 0.0, *, sign: float = 1.0,
              accelerance: bool = False) -> np.ndarray:
    """Coupled FRF at a frozen contact position ``s`` (m) by LM-FBS, eq. (45).

    Parameters
    ----------
    system : SlidingContactSystem
    s : x of the contact point on the target (m), undeformed geometry.
    omega : angular frequencies (rad/s), >= 0 (omega = 0 is the static compliance).
    inp, out : channel or list of channels (see :func:`channel`): the unit force is applied at
        ``inp``, the response read at ``out``.
    mu : friction coefficient; ``sign`` : sign of the slave's sliding velocity relative to the target.
    accelerance : return ``-omega^2 H`` ((m/s^2)/N) instead of the receptance (m/N).

    Returns
    -------
    (nw,) complex for single channels, else (n_out, n_in, nw).
    """
    w = omega_grid(omega)
    check_mu(mu)
    ins, single_in = _channels(system, inp)
    outs, single_out = _channels(system, out)
    _, _, _, BE, BC, _ = coupled_matrices(system, s, mu, sign)
    b1, b2 = ModalBasis.of_system(system, 1), ModalBasis.of_system(system, 2)
    n1 = system.K1.shape[0]
    # global modal basis V = blockdiag(Phi1, Phi2); every quantity is x' H y = sum_k (V'x)_k (V'y)_k D_k
    vE = np.r_[b1.phi.T @ BE[:n1], b2.phi.T @ BE[n1:]]
    vC = np.r_[b1.phi.T @ BC[:n1], b2.phi.T @ BC[n1:]]

    def modal_rows(chs):
        out_ = np.zeros((vE.size, len(chs)))
        m1 = b1.w2.size
        for j, (sub, idx) in enumerate(chs):
            if sub == 1:
                out_[:m1, j] = b1.phi[idx]
            else:
                out_[m1:, j] = b2.phi[idx]
        return out_

    Vi, Vo = modal_rows(ins), modal_rows(outs)
    w2 = np.r_[b1.w2, b2.w2]
    c = np.r_[b1.c, b2.c]
    rig = w2 == 0.0
    fl = ~rig
    D = modal_factors(w2[fl], c[fl], w)
    a = (vC[fl] * vE[fl]) @ D                                      # (nw,)
    P = (vC[fl, None] * Vi[fl]).T @ D                              # (nin, nw)
    Q = (Vo[fl] * vE[fl, None]).T @ D                              # (nout, nw)
    Y0 = (Vo[fl, :, None] * Vi[fl, None, :]).reshape(fl.sum(), -1).T @ D
    Y0 = Y0.reshape(len(outs), len(ins), w.size)
    dr = (-(w * w)[:, None] + 1j * w[:, None] * c[rig][None, :])   # (nw, nr)
    H = np.zeros((len(outs), len(ins), w.size), complex)
    for i in range(len(ins)):
        for o in range(len(outs)):
            H[o, i] = coupled_response(a, P[i], Q[o], Y0[o, i], vC[rig], vE[rig], Vi[rig, i], Vo[rig, o], dr)
    if accelerance:
        H *= -(w * w)
    return H[0, 0] if (single_in and single_out) else H


def primal_frf(system, s: float, omega, inp, out, mu: float = 0.0, *, sign: float = 1.0,
               accelerance: bool = False) -> np.ndarray:
    """The same FRF as :func:`lmfbs_frf` by primal assembly (eqs. 8-14), solved directly.

    ``Zt(w) = L_E' (K - w^2 M + j w C) L_C``, ``q = Zt^-1 L_E' f``, ``u = L_C q`` in the reduced
    physical coordinates [q1_free; q2] (one dense solve per frequency: the reference, not fast).
    Returns (nw,) for single channels, else (n_out, n_in, nw).
    """
    w = omega_grid(omega)
    check_mu(mu)
    ins, single_in = _channels(system, inp)
    outs, single_out = _channels(system, out)
    M, C, K, BE, BC, _ = coupled_matrices(system, s, mu, sign)
    LC, LE = null_space_row(BC), null_space_row(BE)
    Mt, Ct, Kt = LE.T @ M @ LC, LE.T @ C @ LC, LE.T @ K @ LC
    F = np.zeros((M.shape[0], len(ins)))
    for j, ch in enumerate(ins):
        F[_global_index(system, ch), j] = 1.0
    Ft = LE.T @ F
    Lo = LC[[_global_index(system, ch) for ch in outs]]
    H = np.zeros((len(outs), len(ins), w.size), complex)
    for k, wk in enumerate(w):
        q = np.linalg.solve(Kt - wk * wk * Mt + 1j * wk * Ct, Ft)
        H[:, :, k] = Lo @ q
    if accelerance:
        H *= -(w * w)
    return H[0, 0] if (single_in and single_out) else H


def dense_dual_frf(system, s: float, omega, inp, out, mu: float = 0.0, *, sign: float = 1.0,
                   accelerance: bool = False) -> np.ndarray:
    """Eq. (45) the slow way: one dense bordered solve ``[[Z, B_E'], [B_C, 0]]`` per frequency.

    The baseline of the benchmarks (what the modal evaluation avoids). Single channels only; (nw,).
    """
    w = omega_grid(omega)
    check_mu(mu)
    (ci,), _ = _channels(system, [inp])
    (co,), _ = _channels(system, [out])
    M, C, K, BE, BC, _ = coupled_matrices(system, s, mu, sign)
    n = M.shape[0]
    A = np.zeros((n + 1, n + 1), complex)
    A[:n, n] = BE
    A[n, :n] = BC
    f = np.zeros(n + 1)
    f[_global_index(system, ci)] = 1.0
    io = _global_index(system, co)
    H = np.zeros(w.size, complex)
    for k, wk in enumerate(w):
        A[:n, :n] = K - wk * wk * M + 1j * wk * C
        H[k] = np.linalg.solve(A, f)[io]
    return -(w * w) * H if accelerance else H


def check_mu(mu):
    if not np.isfinite(mu) or mu < 0:
        raise ParameterError(f"friction coefficient mu must be finite and >= 0, got {mu}")
