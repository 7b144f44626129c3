"""Frequency response of the sliding contact: substructure receptances, LM-FBS coupling (eq. 45),
the primal check and the time-dependent FRF.

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

The time-dependent FRF (:func:`time_dependent_frf`) evaluates eq. (45) at the contact positions of
the rigid relative motion ``s(t) = s0 + vx t`` in the undeformed geometry (B_E(t), B_C(t) a priori,
as in the paper's section 2.3). Times on the same target segment share the segment's modal
products, so the cost is one small matrix product per segment plus O(1) work per (t, w).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg as sla

from ..errors import ModelError, ParameterError
from ..io import Result, summary_record
from .eigen import coupled_matrices, null_space_row

__all__ = ["ModalBasis", "modal_factors", "substructure_receptance", "lmfbs_frf", "primal_frf",
           "time_dependent_frf", "dense_dual_frf", "TDFRFResult", "channel", "segment_positions"]


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


def _omega(omega, name: str = "omega (rad/s)") -> np.ndarray:
    w = np.atleast_1d(np.asarray(omega, dtype=float))
    if w.ndim != 1 or w.size == 0:
        raise ParameterError(f"{name} must be a non-empty 1D array, got shape {np.shape(omega)}")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ParameterError(f"{name} must be finite and >= 0")
    return w


def modal_factors(w2, c, omega) -> np.ndarray:
    """``D[k, i] = 1 / (w2_k - omega_i^2 + j omega_i c_k)`` (s^2 per unit modal mass), shape (n, nw).

    Raises :class:`ParameterError` where a factor is infinite (a rigid-body mode at omega = 0)."""
    w = _omega(omega)
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
def _couple(a, P, Q, Y0, rho, sigma, G, Orig, dr):
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
    w = _omega(omega)
    _check_mu(mu)
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
            H[o, i] = _couple(a, P[i], Q[o], Y0[o, i], vC[rig], vE[rig], Vi[rig, i], Vo[rig, o], dr)
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
    w = _omega(omega)
    _check_mu(mu)
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
    w = _omega(omega)
    _check_mu(mu)
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


def _check_mu(mu):
    if not np.isfinite(mu) or mu < 0:
        raise ParameterError(f"friction coefficient mu must be finite and >= 0, got {mu}")


# ---------------------------------------------------------------------------- time-dependent FRF
def segment_positions(system, positions) -> tuple[np.ndarray, np.ndarray]:
    """Target segment and alpha (0 at T1, 1 at T2) of each contact position (x on the target, m,
    undeformed geometry). A position on a node belongs to the segment it starts (the last
    segment keeps its end node). Raises :class:`ParameterError` for positions off the target."""
    s = np.atleast_1d(np.asarray(positions, float))
    if not np.all(np.isfinite(s)):
        raise ParameterError("contact positions must be finite")
    x1 = system.XT[system.segs[:, 0], 0]
    x2 = system.XT[system.segs[:, 1], 0]
    if np.any(x1 == x2):
        raise ModelError("a target segment is vertical: the contact position x does not locate it")
    al = (s[:, None] - x1[None, :]) / (x2 - x1)[None, :]
    last = np.zeros(x1.size, bool)
    last[-1] = True
    ok = (al >= 0) & ((al < 1) | ((al <= 1) & last[None, :]))
    hit = ok.any(axis=1)
    if not hit.all():
        bad = s[~hit]
        raise ParameterError(f"contact positions must lie on the target, x in [{min(x1.min(), x2.min()):.6g}, "
                             f"{max(x1.max(), x2.max()):.6g}] m; got {bad[:3].tolist()} (from s0 + vx t)")
    seg = np.argmax(ok, axis=1)
    return seg, al[np.arange(s.size), seg]


_FRF_UNITS = {"receptance": "m/N", "accelerance": "(m/s^2)/N"}


@dataclass(eq=False)
class TDFRFResult(Result):
    """Time-dependent FRF ``H[i, j]`` at ``times[i]`` (s) and ``freqs_hz[j]`` (Hz).

    ``kind`` is 'receptance' (m/N) or 'accelerance' ((m/s^2)/N); ``positions`` (m) are the contact
    positions s(t) on the target, ``segments``/``alpha`` their target segment and coordinate.
    ``info`` records the status ('completed' or 'interrupted': then the times done so far), s0
    (m), vx (m/s), the friction sign and the number of target segments crossed.
    """

    times: np.ndarray
    freqs_hz: np.ndarray
    H: np.ndarray
    positions: np.ndarray
    segments: np.ndarray
    alpha: np.ndarray
    mu: float
    inp: str
    out: str
    kind: str = field()  # required (the base class's ``kind`` is the result kind of summaries)
    info: dict = field(default_factory=dict)

    @property
    def freqs(self) -> np.ndarray:
        """Alias of ``freqs_hz`` (Hz)."""
        return self.freqs_hz

    @property
    def status(self) -> str:
        """'completed', or 'interrupted' (Ctrl-C: the times done so far)."""
        return self.info.get("status", "completed")

    def magnitude_db(self, ref: float = 1.0) -> np.ndarray:
        """20 log10(|H| / ref) (dB; -inf where H = 0)."""
        with np.errstate(divide="ignore"):
            return 20.0 * np.log10(np.abs(self.H) / ref)

    def details(self) -> dict:
        """Flat record: grid sizes and ranges (keys carry their units), channels, largest |H|."""
        return {"n_times": int(self.times.size), "n_freqs": int(self.freqs_hz.size),
                "t_range_s": [float(self.times.min()), float(self.times.max())] if self.times.size else None,
                "f_range_hz": [float(self.freqs_hz.min()), float(self.freqs_hz.max())],
                "position_range_m": ([float(self.positions.min()), float(self.positions.max())]
                                     if self.positions.size else None),
                "mu": self.mu, "input": self.inp, "output": self.out, "kind": self.kind,
                "max_abs": float(np.abs(self.H).max()) if self.H.size else None, **self.info}

    def summary(self) -> dict:
        unit = _FRF_UNITS.get(self.kind)
        d = self.details()
        return summary_record(
            "time-dependent-frf",
            {"mu": (self.mu, "1"), "input": (self.inp, None), "output": (self.out, None),
             "kind": (self.kind, None), "n_times": (d["n_times"], None), "n_freqs": (d["n_freqs"], None),
             "f_max": (d["f_range_hz"][1], "Hz"), "s0": (self.info.get("s0_m"), "m"),
             "vx": (self.info.get("vx_m_s"), "m/s")},
            {"max_abs_H": (d["max_abs"], unit), "status": (self.status, None)}, details=d)

    def to_xarray(self):
        import xarray as xr

        tdim = ("time",)
        return xr.Dataset(
            {"H": (("time", "frequency"), self.H,
                   {"units": _FRF_UNITS.get(self.kind, "1"), "long_name": f"{self.kind} {self.inp} -> {self.out}"}),
             "positions": (tdim, self.positions, {"units": "m", "long_name": "contact position s(t) on the target"}),
             "segments": (tdim, self.segments, {"units": "1", "long_name": "target segment under the contact"}),
             "alpha": (tdim, self.alpha, {"units": "1", "long_name": "coordinate on the segment (0 at T1, 1 at T2)"})},
            coords={"time": ("time", self.times, {"units": "s"}),
                    "frequency": ("frequency", self.freqs_hz, {"units": "Hz"})},
            attrs={"mu": float(self.mu), "inp": self.inp, "out": self.out, "kind": self.kind, "info": self.info})

    @classmethod
    def from_xarray(cls, ds):
        a = ds.attrs
        return cls(times=ds["time"].values, freqs_hz=ds["frequency"].values, H=ds["H"].values,
                   positions=ds["positions"].values, segments=ds["segments"].values, alpha=ds["alpha"].values,
                   mu=a["mu"], inp=a["inp"], out=a["out"], kind=a["kind"], info=a["info"])

    def plot(self, ax=None, *, vmin_db: float | None = None):
        """Map of 20 log10 |H| over (t, f) (the paper's Fig. 9); returns the matplotlib axes.

        The colour scale spans the top 100 dB (from ``vmin_db`` dB if given)."""
        from ..plots import style

        plt = style.pyplot()
        if ax is None:
            _, ax = plt.subplots(figsize=(7, 4))
        db = self.magnitude_db()
        lo, hi = style.db_limits(db)  # the top 100 dB (a -inf at 0 Hz would spoil the scale)
        lo = lo if vmin_db is None else float(vmin_db)
        im = ax.pcolormesh(self.times, self.freqs_hz / 1e3, np.ma.masked_invalid(db.T), shading="auto",
                           vmin=lo, vmax=hi, cmap="viridis")
        unit = "m/N" if self.kind == "receptance" else "(m/s$^2$)/N"
        ax.figure.colorbar(im, ax=ax, label=f"|H| (dB re 1 {unit})")
        ax.set_xlabel("time (s)")
        ax.set_ylabel("frequency (kHz)")
        ax.set_title(f"time-dependent FRF {self.inp} -> {self.out}, mu = {self.mu:g}")
        return ax


def _name(ch) -> str:
    return ch if isinstance(ch, str) else f"q{ch[0]}[{ch[1]}]"


def time_dependent_frf(system, times, freqs_hz, inp="C_y", out="T_y", mu: float = 0.0,
                       s0: float | None = None, vx: float = 0.030, *, sign: float | None = None,
                       accelerance: bool = False, progress: bool = False) -> TDFRFResult:
    """Time-dependent FRF, eq. (45), at the contact positions ``s(t) = s0 + vx t``.

    B_E(t), B_C(t) come a priori from the rigid relative motion in the undeformed geometry (the
    paper's section 2.3). Every (t, w) is evaluated with modal receptances restricted to the needed
    rows: per target segment, one product of the few modal rows (slave, segment end nodes, input,
    output) with the modal factor matrix ``D[k, w]``; per time only the position alpha on the
    segment changes, and eq. (45) reduces to scalar operations (plus the rigid-body modes, see the
    module docstring). No matrix is inverted per (t, w).

    Parameters
    ----------
    system : SlidingContactSystem
    times : (nt,) s.
    freqs_hz : (nf,) Hz, >= 0.
    inp, out : channels (see :func:`channel`); default: vertical force at the slave C, vertical
        response of the beam tip T (the paper's Fig. 9).
    mu : friction coefficient.
    s0 : contact position at t = 0 (m); default: x of the slave node in the mesh.
    vx : sliding velocity of the slave along the target (m/s).
    sign : sign of the sliding velocity used by the friction term (default: sign of vx, + for 0).
    accelerance : return -w^2 H ((m/s^2)/N), the paper's input force -> tip acceleration.
    progress : show a progress bar over target segments (off by default: the paper grid takes
        about 1.5 s).

    Returns
    -------
    TDFRFResult with ``H`` of shape (nt, nf). If interrupted (Ctrl-C), the times done so far.
    """
    from tqdm.auto import tqdm

    t = np.atleast_1d(np.asarray(times, float))
    if t.ndim != 1 or t.size == 0 or not np.all(np.isfinite(t)):
        raise ParameterError("times must be a non-empty 1D array of finite values (s)")
    f = _omega(freqs_hz, "freqs_hz (Hz)")
    w = 2 * np.pi * f
    _check_mu(mu)
    if not np.isfinite(vx):
        raise ParameterError(f"vx must be finite (m/s), got {vx}")
    s0 = float(system.X_C[0]) if s0 is None else float(s0)
    if sign is None:
        sign = 1.0 if vx >= 0 else -1.0
    elif sign not in (1, -1, 1.0, -1.0):
        raise ParameterError(f"sign must be +1 or -1, got {sign}")
    ci, co = channel(system, inp), channel(system, out)
    pos = s0 + vx * t
    seg, alpha = segment_positions(system, pos)

    b1, b2 = ModalBasis.of_system(system, 1), ModalBasis.of_system(system, 2)
    f1, f2 = ~b1.rigid, ~b2.rigid
    D1 = modal_factors(b1.w2[f1], b1.c[f1], w)
    D2 = modal_factors(b2.w2[f2], b2.c[f2], w)
    # real views (k, 2 nw): a real row times D is one real matrix product
    D1r = np.ascontiguousarray(D1).view(np.float64)
    D2r = np.ascontiguousarray(D2).view(np.float64)

    def hsum(rows_a, rows_b, Dr):  # sum_k a_k b_k D_k for stacked rows -> (nrows, nw) complex
        return (rows_a * rows_b) @ Dr

    phiC = b1.phi[system.iC]                     # (2, m1): Cx, Cy rows
    phiT = np.zeros((system.XT.shape[0], 2, b2.w2.size))
    for cc in range(2):
        ok = system.T_rows[:, cc] >= 0
        phiT[ok, cc] = b2.phi[system.T_rows[ok, cc]]
    phi_in = (b1 if ci[0] == 1 else b2).phi[ci[1]]
    phi_out = (b1 if co[0] == 1 else b2).phi[co[1]]
    # direct term: only when input and output are on the same substructure
    if ci[0] == co[0]:
        bb, ff, Dr = (b1, f1, D1r) if ci[0] == 1 else (b2, f2, D2r)
        Y0 = hsum(phi_out[ff][None], phi_in[ff][None], Dr).view(complex)[0]
    else:
        Y0 = np.zeros(w.size, complex)
    # rigid-body modes of both substructures (module docstring)
    m1 = b1.w2.size
    rig = np.r_[b1.rigid, b2.rigid]
    c_r = np.r_[b1.c, b2.c][rig]
    dr = -(w * w)[:, None] + 1j * w[:, None] * c_r[None, :]      # (nw, nr)
    def gvec(sub, phi_row):  # modal row over both substructures, restricted to rigid modes
        v = np.zeros(rig.size)
        if sub == 1:
            v[:m1] = phi_row
        else:
            v[m1:] = phi_row
        return v[rig]
    G_r = gvec(ci[0], phi_in)
    O_r = gvec(co[0], phi_out)

    H = np.zeros((t.size, w.size), complex)
    done = np.zeros(t.size, bool)
    order = np.unique(seg)
    status = "completed"
    bar = tqdm(order, disable=not progress, desc=f"TD-FRF mu={mu:g}", unit="segment")
    try:
        for k in bar:
            sel = np.flatnonzero(seg == k)
            j1, j2 = system.segs[k]
            d = system.XT[j2] - system.XT[j1]
            gam = np.arctan2(d[1], d[0])
            sg, cg = np.sin(gam), np.cos(gam)
            u = np.array([-sg, cg])                            # normal (compatibility) direction
            g = np.array([-sg - sign * mu * cg, cg - sign * mu * sg])  # (G1, G2), eq. (39)
            # slave side (substructure 1): bC_C = -u, bE_C = -g
            uC, gC = u @ phiC, g @ phiC
            rows1 = [(uC, gC)]
            if ci[0] == 1:
                rows1.append((uC, phi_in))
            if co[0] == 1:
                rows1.append((phi_out, gC))
            A1 = np.stack([x[f1] for x, _ in rows1]), np.stack([y[f1] for _, y in rows1])
            S1 = hsum(A1[0], A1[1], D1r).view(complex)
            a1 = S1[0]
            p1 = -S1[1] if ci[0] == 1 else 0.0
            q1 = -S1[-1] if co[0] == 1 else 0.0
            # target side (substructure 2): bC_T = [(1-a) u, a u], bE_T = [(1-a) g, a g]
            U1, U2 = u @ phiT[j1], u @ phiT[j2]
            E1, E2 = g @ phiT[j1], g @ phiT[j2]
            rows2 = [(U1, E1), (U1, E2), (U2, E1), (U2, E2)]
            if ci[0] == 2:
                rows2 += [(U1, phi_in), (U2, phi_in)]
            if co[0] == 2:
                rows2 += [(phi_out, E1), (phi_out, E2)]
            A2 = np.stack([x[f2] for x, _ in rows2]), np.stack([y[f2] for _, y in rows2])
            S2 = hsum(A2[0], A2[1], D2r).view(complex)
            al = alpha[sel][:, None]
            be = 1.0 - al
            a = a1[None, :] + be * be * S2[0] + be * al * (S2[1] + S2[2]) + al * al * S2[3]
            i0 = 4
            if ci[0] == 2:
                p = be * S2[i0] + al * S2[i0 + 1]
                i0 += 2
            else:
                p = np.broadcast_to(p1, a.shape)
            if co[0] == 2:
                q = be * S2[i0] + al * S2[i0 + 1]
            else:
                q = np.broadcast_to(q1, a.shape)
            # rigid modes: rho = B_C Phi_r, sigma = B_E Phi_r (per time, over the 6 contact DOFs)
            if rig.any():
                Pr1 = np.zeros((2, rig.size))
                Pr1[:, :m1] = phiC
                PrT1 = np.zeros((2, rig.size))
                PrT1[:, m1:] = phiT[j1]
                PrT2 = np.zeros((2, rig.size))
                PrT2[:, m1:] = phiT[j2]
                Pr1, PrT1, PrT2 = Pr1[:, rig], PrT1[:, rig], PrT2[:, rig]
                rho = (-u @ Pr1)[None, :] + be * (u @ PrT1)[None, :] + al * (u @ PrT2)[None, :]
                sig = (-g @ Pr1)[None, :] + be * (g @ PrT1)[None, :] + al * (g @ PrT2)[None, :]
                rho, sig = rho[:, None, :], sig[:, None, :]
            else:
                rho = sig = np.zeros((sel.size, 1, 0))
            H[sel] = _couple(a, p, q, np.broadcast_to(Y0, a.shape), rho, sig, G_r, O_r, dr[None])
            done[sel] = True
    except KeyboardInterrupt:
        status = "interrupted"
    finally:
        bar.close()
    if accelerance:
        H *= -(w * w)[None, :]
    keep = done if status != "completed" else slice(None)
    info = {"status": status, "s0_m": s0, "vx_m_s": float(vx), "sign": float(sign),
            "n_segments": int(order.size)}
    return TDFRFResult(times=t[keep], freqs_hz=f, H=H[keep], positions=pos[keep], segments=seg[keep],
                       alpha=alpha[keep], mu=float(mu), inp=_name(inp), out=_name(out),
                       kind="accelerance" if accelerance else "receptance", info=info)
