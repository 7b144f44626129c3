"""Time-dependent complex eigenvalue analysis of the sliding contact (primal assembly, sect. 3-4).

For a contact position s (undeformed geometry, slave C on the target at x = s), the coupled
system u = L_C q with L_C = null(B_C), projected on L_E = null(B_E) (non-collocated interface):

    Mt = L_E' M L_C,  Ct = L_E' C L_C,  Kt = L_E' K L_C          (eqs. 8-16)

Mt and Kt are not symmetric when mu > 0. The complex eigenvalues come from the first-order form
[[0, I], [-Mt^-1 Kt, -Mt^-1 Ct]]. The prescribed DOFs of the slider are held (zero perturbation).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
from scipy.optimize import linear_sum_assignment

from ..errors import ModelError, ParameterError
from .geometry import coupling_rows

__all__ = ["coupled_matrices", "null_space_row", "primal_matrices", "complex_eigenvalues",
           "EigenLoci", "eigenvalue_loci", "max_real_part_map", "critical_mu", "rayleigh_line"]


def null_space_row(b: np.ndarray) -> np.ndarray:
    """(n, n-1) basis L of the null space of the row ``b`` (b L = 0), with identity on every index
    but the pivot (largest |b_i|): keeps L sparse and well conditioned."""
    b = np.asarray(b, float)
    p = int(np.argmax(np.abs(b)))
    if b[p] == 0:
        raise ModelError("coupling row is zero")
    n = b.size
    keep = np.r_[0:p, p + 1:n]
    L = np.zeros((n, n - 1))
    L[keep, np.arange(n - 1)] = 1.0
    L[p, :] = -b[keep] / b[p]
    return L


def _segment_at(system, s: float):
    xt = system.XT
    for k, (a, b) in enumerate(system.segs):
        x1, x2 = xt[a, 0], xt[b, 0]
        if min(x1, x2) <= s <= max(x1, x2) and x1 != x2:
            alpha = (s - x1) / (x2 - x1)
            if alpha < 1.0 or k == len(system.segs) - 1:
                return k, alpha
    raise ModelError(f"contact position s = {s} m is not on the target surface "
                     f"(x from {xt[:, 0].min():.4g} to {xt[:, 0].max():.4g} m)")


def coupled_matrices(system, s: float, mu: float, sign: float = 1.0, *, modal_cutoff_hz: float | None = None):
    """Block-diagonal M, C, K and the rows B_E, B_C for contact position ``s`` (x of the contact
    point on the target, m), in the undeformed geometry.

    Coordinates: [q1_free; q2] (reduced physical), or, with ``modal_cutoff_hz``, the modal
    coordinates of each substructure below that frequency (an approximation that converges as the
    cut-off rises; M = I, K = diag(w^2), C = diag(alpha + beta w^2)). Also returns the basis
    mapping those coordinates to [q1_free; q2].
    """
    if mu < 0:
        raise ParameterError(f"friction coefficient mu must be >= 0, got {mu}")
    seg, alpha = _segment_at(system, s)
    pos = system.XT
    j1, j2 = system.segs[seg]
    d = pos[j2] - pos[j1]
    bE, bC = coupling_rows(alpha, np.arctan2(d[1], d[0]), mu, sign)
    BE, BC = system._global_rows(seg, bE, bC)
    if modal_cutoff_hz is None:
        M = sla.block_diag(system.M1, system.M2)
        C = sla.block_diag(system.C1, system.C2)
        K = sla.block_diag(system.K1, system.K2)
        return M, C, K, BE, BC, None
    wc2 = (2 * np.pi * float(modal_cutoff_hz)) ** 2
    k1, k2 = system.w2_1 <= wc2, system.w2_2 <= wc2
    V = sla.block_diag(system.Phi1[:, k1], system.Phi2[:, k2])
    w2 = np.r_[system.w2_1[k1], system.w2_2[k2]]
    c = np.r_[system.alpha1 + system.beta1 * system.w2_1[k1], system.alpha2 + system.beta2 * system.w2_2[k2]]
    return np.eye(w2.size), np.diag(c), np.diag(w2), BE @ V, BC @ V, V


def primal_matrices(system, s: float, mu: float, sign: float = 1.0, *, modal_cutoff_hz: float | None = None):
    """Primal-assembled (Mt, Ct, Kt), L_C, L_E and the basis V (None for reduced physical
    coordinates) at contact position ``s``."""
    M, C, K, BE, BC, V = coupled_matrices(system, s, mu, sign, modal_cutoff_hz=modal_cutoff_hz)
    LC, LE = null_space_row(BC), null_space_row(BE)
    return LE.T @ M @ LC, LE.T @ C @ LC, LE.T @ K @ LC, LC, LE, V


#: default cut-off of the substructure modes used by the eigenvalue analysis (Hz): None = the full
#: reduced substructures (exact). Substructure-mode truncation converges slowly for the real parts
#: (a 200 kHz cut-off moves the largest real part at mu = 0.3 by 25 %); the coupled-mode basis of
#: ``complex_eigenvalues(..., n_basis=...)`` converges much faster.
DEFAULT_EIG_CUTOFF_HZ = None


def complex_eigenvalues(system, s: float, mu: float, n: int = 20, *, sign: float = 1.0,
                        return_modes: bool = False, modal_cutoff_hz: float | None = DEFAULT_EIG_CUTOFF_HZ,
                        n_basis: int | None = None):
    """The ``n`` lowest-frequency complex eigenvalues (1/s) with positive imaginary part.

    ``modal_cutoff_hz=None`` (default) uses the full reduced substructures (exact). ``n_basis``
    projects the friction problem on the lowest ``n_basis`` modes of the frictionless coupled
    system (an approximation: with 120 modes the largest real part of the benchmark at mu = 0.3
    moves by 0.05 %, for a quarter of the cost). Returns ``lam`` (n,) (and the mode shapes over
    [q1_free; q2], (n_dofs, n), if asked).
    """
    Mt, Ct, Kt, LC, _, V = primal_matrices(system, s, mu, sign, modal_cutoff_hz=modal_cutoff_hz)
    if n_basis is not None:
        # Ritz basis: the lowest n_basis modes of the frictionless coupled system (symmetric)
        M, C, K, BE, BC, V0 = coupled_matrices(system, s, 0.0, sign, modal_cutoff_hz=modal_cutoff_hz)
        L0 = null_space_row(BC)
        nb = min(int(n_basis), L0.shape[1])
        _, Psi = sla.eigh(L0.T @ K @ L0, L0.T @ M @ L0, subset_by_index=[0, nb - 1])
        Mt, Ct, Kt = Psi.T @ Mt @ Psi, Psi.T @ Ct @ Psi, Psi.T @ Kt @ Psi
        LC = LC @ Psi
    m = Mt.shape[0]
    MiK = np.linalg.solve(Mt, Kt)
    MiC = np.linalg.solve(Mt, Ct)
    A = np.zeros((2 * m, 2 * m))
    A[:m, m:] = np.eye(m)
    A[m:, :m] = -MiK
    A[m:, m:] = -MiC
    if return_modes:
        lam, vec = sla.eig(A, overwrite_a=True, check_finite=False)
    else:
        lam = sla.eigvals(A, overwrite_a=True, check_finite=False)
    osc = lam.imag > 1e-6 * np.abs(lam).max()
    idx = np.flatnonzero(osc)
    idx = idx[np.argsort(lam.imag[idx])][:n]
    if return_modes:
        shapes = LC @ vec[:m, idx]
        return lam[idx], (shapes if V is None else V @ shapes)
    return lam[idx]


@dataclass
class EigenLoci:
    """Tracked eigenvalues over contact positions: ``lam[i, k]`` = eigenvalue k at ``positions[i]``."""

    positions: np.ndarray
    lam: np.ndarray
    mu: float

    @property
    def max_real(self) -> float:
        return float(self.lam.real.max())

    @property
    def stable(self) -> bool:
        return self.max_real < 0

    def unstable(self):
        """(position, frequency Hz, real part 1/s) of every eigenvalue with positive real part."""
        i, k = np.nonzero(self.lam.real > 0)
        return [(float(self.positions[a]), float(self.lam[a, b].imag / (2 * np.pi)), float(self.lam[a, b].real))
                for a, b in zip(i, k)]

    def save(self, path):
        np.savez_compressed(path, positions=self.positions, lam=self.lam, mu=self.mu)


def _track(prev: np.ndarray, new: np.ndarray) -> np.ndarray:
    """Reorder ``new`` to follow ``prev`` (assignment minimising eigenvalue distances)."""
    cost = np.abs(prev[:, None] - new[None, :])
    r, c = linear_sum_assignment(cost)
    out = new.copy()
    out[r] = new[c]
    return out


def eigenvalue_loci(system, positions, mu: float, n: int = 20, *, progress: bool = False,
                    modal_cutoff_hz: float | None = DEFAULT_EIG_CUTOFF_HZ, n_basis: int | None = None) -> EigenLoci:
    """Complex eigenvalues at every contact position (m), tracked from one position to the next."""
    from tqdm.auto import tqdm

    positions = np.asarray(positions, float)
    if positions.size == 0:
        raise ParameterError("positions must not be empty")
    lam = np.zeros((positions.size, n), complex)
    for i, s in enumerate(tqdm(positions, disable=not progress, desc=f"loci mu={mu:g}")):
        ev = complex_eigenvalues(system, s, mu, n, modal_cutoff_hz=modal_cutoff_hz, n_basis=n_basis)
        if ev.size < n:
            raise ModelError(f"only {ev.size} oscillating eigenvalues at s = {s}")
        lam[i] = ev if i == 0 else _track(lam[i - 1], ev)
    return EigenLoci(positions, lam, float(mu))


def max_real_part_map(system, positions, mus, n: int = 20, *, progress: bool = False,
                      modal_cutoff_hz: float | None = DEFAULT_EIG_CUTOFF_HZ, n_basis: int | None = None) -> np.ndarray:
    """max Re(lambda) (1/s) over the ``n`` lowest eigenvalues, for each (mu, position)."""
    from tqdm.auto import tqdm

    mus = np.asarray(mus, float)
    positions = np.asarray(positions, float)
    out = np.zeros((mus.size, positions.size))
    with tqdm(total=out.size, disable=not progress, desc="max Re map") as bar:
        for a, mu in enumerate(mus):
            for b, s in enumerate(positions):
                out[a, b] = complex_eigenvalues(system, s, mu, n, modal_cutoff_hz=modal_cutoff_hz,
                                                n_basis=n_basis).real.max()
                bar.update()
    return out


def critical_mu(system, positions, *, mu_max: float = 1.0, n: int = 20, tol: float = 1e-3,
                modal_cutoff_hz: float | None = DEFAULT_EIG_CUTOFF_HZ, n_basis: int | None = None) -> float:
    """Smallest friction coefficient with a positive real part at some position (bisection).

    Returns ``inf`` if the system is stable up to ``mu_max``. Assumes instability persists above
    the critical value (checked at mu_max)."""
    positions = np.asarray(positions, float)

    def worst(mu):
        return max(complex_eigenvalues(system, s, mu, n, modal_cutoff_hz=modal_cutoff_hz,
                                       n_basis=n_basis).real.max() for s in positions)

    if worst(0.0) > 0:
        return 0.0
    if worst(mu_max) <= 0:
        return float("inf")
    lo, hi = 0.0, float(mu_max)
    while hi - lo > tol:
        mid = 0.5 * (lo + hi)
        if worst(mid) > 0:
            hi = mid
        else:
            lo = mid
    return hi


def rayleigh_line(omega, alpha: float, beta: float):
    """Eigenvalues of a Rayleigh-damped oscillator of natural frequency omega (rad/s):
    s = -zeta w + j w sqrt(1 - zeta^2), zeta = alpha/(2w) + beta w/2 (the dotted lines)."""
    omega = np.asarray(omega, float)
    z = alpha / (2 * omega) + beta * omega / 2
    return -z * omega + 1j * omega * np.sqrt(np.clip(1 - z * z, 0, None))
