"""The complex eigenvalues of the sliding contact at one contact position, and the loci they make.

For a contact position s (undeformed geometry, slave C on the target at x = s), the coupled
system u = L_C q with L_C = null(B_C), projected on L_E = null(B_E) (non-collocated interface):

    Mt = L_E' M L_C,  Ct = L_E' C L_C,  Kt = L_E' K L_C          (eqs. 8-16)

Mt and Kt are not symmetric when mu > 0. The complex eigenvalues come from the first-order form
[[0, I], [-Mt^-1 Kt, -Mt^-1 Ct]]. The prescribed DOFs of the slider are held (zero perturbation).

Here: the matrices and the one-position solve (:func:`complex_eigenvalues`, over a Ritz basis of
frictionless coupled modes when asked), the argument checks and the tracking of eigenvalues from
one position to the next that every analysis over positions shares, and their result
(:class:`EigenLoci`). The analyses over positions (loci, maps, critical mu) are in
:mod:`fesub.contact.analyses.eigen`, the deformed sliding state in
:mod:`fesub.contact.analyses.deformed`.
"""

from __future__ import annotations

import warnings
import weakref
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
from scipy.optimize import linear_sum_assignment

from ...errors import ParameterError, check_count, check_positive, check_real
from ...io import Result, summary_record
from .primal import null_space_row, null_times, project_rows
from .secular import contact_rows, first_order_matrix, lowest_oscillating

__all__ = ["coupled_matrices", "primal_matrices", "complex_eigenvalues", "EigenLoci", "IncompleteSpectrumWarning",
           "DEFAULT_EIG_CUTOFF_HZ", "as_count", "as_mu", "as_position", "as_positions", "spectrum_at",
           "first_order_eigs", "ritz_basis", "warn_incomplete", "basis_leaves_modes", "completeness_attrs",
           "completeness_note", "track"]


def coupled_matrices(system, s: float, mu: float, sign: float = 1.0, *, modal_cutoff_hz: float | None = None):
    """Block-diagonal M, C, K and the rows B_E, B_C for contact position ``s`` (x of the contact
    point on the target, m), in the undeformed geometry.

    Coordinates: [q1_free; q2] (reduced physical), or, with ``modal_cutoff_hz``, the modal
    coordinates of each substructure below that frequency (an approximation that converges as the
    cut-off rises; M = I, K = diag(w^2), C = diag(alpha + beta w^2)). Also returns the basis
    mapping those coordinates to [q1_free; q2].
    """
    BE, BC = contact_rows(system, s, as_mu(mu), sign)
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
    return (project_rows(M, BE, BC), project_rows(C, BE, BC), project_rows(K, BE, BC), LC, LE, V)


#: default cut-off of the substructure modes used by the eigenvalue analysis (Hz): None = the full
#: reduced substructures (exact). Substructure-mode truncation converges slowly for the real parts
#: (a 200 kHz cut-off moves the largest real part at mu = 0.3 by 25 %); the coupled-mode basis of
#: ``complex_eigenvalues(..., n_basis=...)`` converges much faster.
DEFAULT_EIG_CUTOFF_HZ = None


class IncompleteSpectrumWarning(UserWarning):
    """A Ritz basis (``n_basis``) left modes of the reduced model unexamined: the eigenvalues are
    complete only up to the frequency the warning names."""


# ------------------------------------------------------------------------------- argument checks
def as_count(name: str, value, *, allow_none: bool = False):
    """``value`` as an int >= 1 (``None`` passes when allowed); 2.5, True, '3', 0, -3 are refused."""
    if value is None and allow_none:
        return None
    return check_count(name, value, lo=1)


def as_mu(mu) -> float:
    return check_positive("friction coefficient mu", mu, strict=False)


def as_position(s) -> float:
    v = check_real("contact position s (m)", s)
    if not np.isfinite(v):
        raise ParameterError(f"contact position s must be finite (m), got {s!r}")
    return v


def as_positions(positions, name: str = "positions", what: str = "contact positions in m") -> np.ndarray:
    """A non-empty 1-D array of finite values (contact positions in m by default)."""
    try:
        p = np.asarray(positions, dtype=float)
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be a 1-D array of {what}, got {positions!r}") from None
    if p.ndim != 1 or p.size == 0:
        raise ParameterError(f"{name} must be a non-empty 1-D array of {what}, got shape {p.shape}")
    if not np.all(np.isfinite(p)):
        raise ParameterError(f"{name} must be finite ({what})")
    return p


# ------------------------------------------------------------------------------- one position
def spectrum_at(system, s, mu, n, sign=1.0, *, return_modes=False, modal_cutoff_hz=None, n_basis=None,
              solver=None):
    """Eigen-solve at one position: (lam (<= n,), shapes or None, complete_up_to_hz, n_modes); by
    the secular ``solver`` (:class:`fesub.contact.secular.SecularSolver`) when one is given.

    ``n_modes`` is the number of modes of the reduced coupled model; ``complete_up_to_hz`` the
    frictionless frequency of the highest mode of the Ritz basis when ``n_basis`` leaves modes out,
    the substructure cut-off ``modal_cutoff_hz`` when one is given, ``inf`` when every mode of the
    reduced model is examined."""
    if solver is not None:
        return solver(system, s, mu, n, sign, return_modes=return_modes, modal_cutoff_hz=modal_cutoff_hz,
                      n_basis=n_basis)
    M, C, K, BE, BC, V = coupled_matrices(system, s, mu, sign, modal_cutoff_hz=modal_cutoff_hz)
    n_modes = M.shape[0] - 1
    complete = float("inf") if modal_cutoff_hz is None else float(modal_cutoff_hz)
    if n_basis is not None and n_basis < n_modes:
        top, Psi = ritz_basis(system, s, sign, modal_cutoff_hz, int(n_basis))
        complete = min(complete, top)
        # Psi' L_E' X L_C Psi with L Psi formed in O(n n_basis) (no n x n primal matrices)
        LC, LE_Psi = null_times(BC, Psi), null_times(BE, Psi)
        Mt, Ct, Kt = (LE_Psi.T @ (X @ LC) for X in (M, C, K))
    else:
        Mt, Ct, Kt = (project_rows(X, BE, BC) for X in (M, C, K))
        LC = null_space_row(BC) if return_modes else None
    lam, vec = first_order_eigs(Mt, Ct, Kt, n, return_modes)
    shapes = None
    if return_modes:
        shapes = LC @ vec
        shapes = shapes if V is None else V @ shapes
    return lam, shapes, complete, n_modes


def first_order_eigs(Mt, Ct, Kt, n, return_modes=False):
    """The ``n`` lowest-frequency eigenvalues (positive imaginary part) of the first-order form
    [[0, I], [-Mt^-1 Kt, -Mt^-1 Ct]], and their displacement parts (None unless ``return_modes``)."""
    m = Mt.shape[0]
    A = first_order_matrix(Mt, Ct, Kt)
    if return_modes:
        lam, vec = sla.eig(A, overwrite_a=True, check_finite=False)
    else:
        lam = sla.eigvals(A, overwrite_a=True, check_finite=False)
    idx = lowest_oscillating(lam, n)
    return lam[idx], (vec[:m, idx] if return_modes else None)


#: Ritz bases already computed, per system: {(s, sign, cut-off, n_basis): (top Hz, Psi)}. The
#: frictionless coupled modes at a position do not depend on mu, and the analyses revisit the same
#: positions at several mu (the loci at two, the bisection of the critical mu at ten or so): the
#: symmetric eigen-solve is done once per position. At most RITZ_CACHE_MAX bases are kept per system
#: (the oldest dropped; 240 x 120 doubles, 0.23 MB, each on the benchmark).
RITZ_CACHE: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
RITZ_CACHE_MAX = 1024


def ritz_basis(system, s, sign, modal_cutoff_hz, nb):
    """(frequency in Hz of the highest mode kept, basis Psi) of the lowest ``nb`` modes of the
    frictionless coupled system at position ``s`` (symmetric, mass-normalised), cached."""
    cache = RITZ_CACHE.setdefault(system, {})
    key = (float(s), float(sign), modal_cutoff_hz, int(nb))
    if key not in cache:
        M, C, K, BE, BC, V0 = coupled_matrices(system, s, 0.0, sign, modal_cutoff_hz=modal_cutoff_hz)
        w2, Psi = sla.eigh(project_rows(K, BC, BC), project_rows(M, BC, BC), subset_by_index=[0, nb - 1])
        if len(cache) >= RITZ_CACHE_MAX:
            cache.pop(next(iter(cache)))
        Psi.setflags(write=False)
        cache[key] = (float(np.sqrt(max(w2[-1], 0.0)) / (2 * np.pi)), Psi)
    return cache[key]


def basis_leaves_modes(n_basis, n_modes) -> bool:
    return n_basis is not None and n_modes is not None and n_basis < n_modes


def warn_incomplete(n_basis, complete_hz, n_modes, stacklevel=3):
    if basis_leaves_modes(n_basis, n_modes):
        warnings.warn(
            f"the Ritz basis of the {n_basis} lowest frictionless coupled modes (up to "
            f"{complete_hz:.4g} Hz) leaves {n_modes - n_basis} of the reduced model's {n_modes} modes "
            f"unexamined: the eigenvalues are complete up to {complete_hz:.4g} Hz only "
            f"(n_basis=None examines the whole reduced model)", IncompleteSpectrumWarning,
            stacklevel=stacklevel)


def complex_eigenvalues(system, s: float, mu: float, n: int | None = 20, *, sign: float = 1.0,
                        return_modes: bool = False, modal_cutoff_hz: float | None = DEFAULT_EIG_CUTOFF_HZ,
                        n_basis: int | None = None):
    """The ``n`` lowest-frequency complex eigenvalues (1/s) with positive imaginary part.

    Parameters
    ----------
    system : SlidingContactSystem
    s : float
        Contact position, x of the contact point on the target (m), undeformed geometry.
    mu : float
        Friction coefficient (>= 0).
    n : int or None
        Number of eigenvalues returned (>= 1): the ``n`` lowest-frequency oscillating ones
        (positive imaginary part), lowest first; ``None``: all of them (the maximum: as many as
        the reduced coupled model has modes, less those that friction or damping made real).
    modal_cutoff_hz : float, optional
        ``None`` (default) uses the full reduced substructures (exact).
    n_basis : int, optional
        ``None`` (default) examines every eigenvalue of the reduced model. An integer projects the
        friction problem on the lowest ``n_basis`` modes of the frictionless coupled system (an
        approximation: with 120 modes the largest real part of the benchmark at mu = 0.3 moves by
        0.1 %, for less than half the cost); when that leaves modes of the reduced model out, an
        :class:`IncompleteSpectrumWarning` names the frequency up to which the answer is complete.

    Returns
    -------
    lam : (n,) complex (1/s); with ``return_modes`` also the mode shapes over [q1_free; q2]
        (n_dofs, n).
    """
    s, mu, n = as_position(s), as_mu(mu), as_count("n", n, allow_none=True)
    n_basis = as_count("n_basis", n_basis, allow_none=True)
    lam, shapes, complete, n_modes = spectrum_at(system, s, mu, n, sign, return_modes=return_modes,
                                               modal_cutoff_hz=modal_cutoff_hz, n_basis=n_basis)
    warn_incomplete(n_basis, complete, n_modes)
    return (lam, shapes) if return_modes else lam


# ------------------------------------------------------------------------------- results
def completeness_attrs(obj) -> dict:
    return {"n_basis": obj.n_basis, "complete_up_to_hz": float(obj.complete_up_to_hz),
            "n_modes": obj.n_modes, "status": obj.status}


def completeness_note(obj) -> list:
    if basis_leaves_modes(obj.n_basis, obj.n_modes):
        return [f"Ritz basis of the {obj.n_basis} lowest frictionless coupled modes: eigenvalues "
                f"complete up to {obj.complete_up_to_hz:.4g} Hz; the {obj.n_modes - obj.n_basis} "
                f"modes of the reduced model above are not examined"]
    return []


@dataclass(eq=False)
class EigenLoci(Result):
    """Tracked eigenvalues over contact positions: ``lam[i, k]`` (1/s) = eigenvalue k at
    ``positions[i]`` (m), friction coefficient ``mu``.

    ``n_basis`` is the Ritz basis used (None: the whole reduced model), ``complete_up_to_hz`` the
    frequency up to which every mode of the reduced model was examined (``inf``: all of them): the
    frictionless frequency of the basis's highest mode (friction couples it to the modes left out,
    so check eigenvalues near it by enlarging the basis), or the ``modal_cutoff_hz`` asked for,
    ``n_modes`` the number of modes of the reduced coupled model, ``status`` 'completed' or
    'interrupted' (then the positions done so far).
    """

    positions: np.ndarray
    lam: np.ndarray
    mu: float
    n_basis: int | None = None
    complete_up_to_hz: float = float("inf")
    n_modes: int | None = None
    status: str = "completed"

    kind = "eigenvalue-loci"

    @property
    def max_real(self) -> float:
        """Largest real part (1/s) over every position and tracked eigenvalue (NaN if none)."""
        return float(self.lam.real.max()) if self.lam.size else float("nan")

    @property
    def stable(self) -> bool:
        return self.max_real < 0

    def unstable(self):
        """(position, frequency Hz, real part 1/s) of every eigenvalue with positive real part."""
        i, k = np.nonzero(self.lam.real > 0)
        return [(float(self.positions[a]), float(self.lam[a, b].imag / (2 * np.pi)), float(self.lam[a, b].real))
                for a, b in zip(i, k)]

    def to_xarray(self):
        import xarray as xr

        return xr.Dataset(
            {"lam": (("position", "mode"), self.lam,
                     {"units": "1/s", "long_name": "complex eigenvalue: growth rate + j angular frequency"})},
            coords={"position": ("position", self.positions,
                                 {"units": "m", "long_name": "contact position x on the target"}),
                    "mode": ("mode", np.arange(self.lam.shape[1]),
                             {"units": "1", "long_name": "tracked eigenvalue index"})},
            attrs={"mu": float(self.mu), **completeness_attrs(self)})

    @classmethod
    def from_xarray(cls, ds):
        a = ds.attrs
        return cls(ds["position"].values, ds["lam"].values, a["mu"], n_basis=a["n_basis"],
                   complete_up_to_hz=a["complete_up_to_hz"], n_modes=a["n_modes"], status=a["status"])

    def summary(self) -> dict:
        p = self.positions
        return summary_record(
            self.kind,
            {"mu": (float(self.mu), "1"), "n_positions": (int(p.size), None),
             "position_min": (float(p.min()) if p.size else None, "m"),
             "position_max": (float(p.max()) if p.size else None, "m"),
             "n_eigenvalues": (int(self.lam.shape[1]), None), "n_basis": (self.n_basis, None)},
            {"max_real_part": (self.max_real, "1/s"), "stable": (bool(self.stable), None),
             "complete_up_to": (float(self.complete_up_to_hz), "Hz"), "status": (self.status, None)},
            details={"unstable_eigenvalues": [{"x_m": x, "f_hz": f, "real_1_s": r}
                                              for x, f, r in self.unstable()]},
            notes=completeness_note(self))


def track(prev: np.ndarray, new: np.ndarray) -> np.ndarray:
    """Reorder ``new`` to follow ``prev`` (assignment minimising eigenvalue distances)."""
    cost = np.abs(prev[:, None] - new[None, :])
    r, c = linear_sum_assignment(cost)
    out = new.copy()
    out[r] = new[c]
    return out
