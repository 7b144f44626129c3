"""Time-dependent complex eigenvalue analysis of the sliding contact (primal assembly, sect. 3-4).

For a contact position s (undeformed geometry, slave C on the target at x = s), the coupled
system u = L_C q with L_C = null(B_C), projected on L_E = null(B_E) (non-collocated interface):

    Mt = L_E' M L_C,  Ct = L_E' C L_C,  Kt = L_E' K L_C          (eqs. 8-16)

Mt and Kt are not symmetric when mu > 0. The complex eigenvalues come from the first-order form
[[0, I], [-Mt^-1 Kt, -Mt^-1 Ct]]. The prescribed DOFs of the slider are held (zero perturbation).
"""

from __future__ import annotations

import warnings
import weakref
from dataclasses import dataclass
from functools import partial

import numpy as np
import scipy.linalg as sla
from scipy.optimize import linear_sum_assignment

from ...errors import ModelError, ParameterError, check_count, check_positive, check_real
from ...io import Result, summary_record
from ..geometry import coupling_rows  # noqa: F401 - part of this module's namespace
from .primal import _null_times, null_space_row, project_rows
from .secular import SecularSolver, contact_rows, first_order_matrix, lowest_oscillating, resolve_method

__all__ = ["coupled_matrices", "null_space_row", "project_rows", "primal_matrices", "complex_eigenvalues",
           "EigenLoci", "eigenvalue_loci", "StabilityMap", "max_real_part_map", "CriticalMu",
           "critical_mu", "rayleigh_line", "IncompleteSpectrumWarning"]


def coupled_matrices(system, s: float, mu: float, sign: float = 1.0, *, modal_cutoff_hz: float | None = None):
    """Block-diagonal M, C, K and the rows B_E, B_C for contact position ``s`` (x of the contact
    point on the target, m), in the undeformed geometry.

    Coordinates: [q1_free; q2] (reduced physical), or, with ``modal_cutoff_hz``, the modal
    coordinates of each substructure below that frequency (an approximation that converges as the
    cut-off rises; M = I, K = diag(w^2), C = diag(alpha + beta w^2)). Also returns the basis
    mapping those coordinates to [q1_free; q2].
    """
    BE, BC = contact_rows(system, s, _mu(mu), sign)
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
def _count(name: str, value, *, allow_none: bool = False):
    """``value`` as an int >= 1 (``None`` passes when allowed); 2.5, True, '3', 0, -3 are refused."""
    if value is None and allow_none:
        return None
    return check_count(name, value, lo=1)


def _mu(mu) -> float:
    return check_positive("friction coefficient mu", mu, strict=False)


def _position(s) -> float:
    v = check_real("contact position s (m)", s)
    if not np.isfinite(v):
        raise ParameterError(f"contact position s must be finite (m), got {s!r}")
    return v


def _positions(positions, name: str = "positions", what: str = "contact positions in m") -> np.ndarray:
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
def _spectrum(system, s, mu, n, sign=1.0, *, return_modes=False, modal_cutoff_hz=None, n_basis=None,
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
        top, Psi = _ritz_basis(system, s, sign, modal_cutoff_hz, int(n_basis))
        complete = min(complete, top)
        # Psi' L_E' X L_C Psi with L Psi formed in O(n n_basis) (no n x n primal matrices)
        LC, LE_Psi = _null_times(BC, Psi), _null_times(BE, Psi)
        Mt, Ct, Kt = (LE_Psi.T @ (X @ LC) for X in (M, C, K))
    else:
        Mt, Ct, Kt = (project_rows(X, BE, BC) for X in (M, C, K))
        LC = null_space_row(BC) if return_modes else None
    lam, vec = _first_order_eigs(Mt, Ct, Kt, n, return_modes)
    shapes = None
    if return_modes:
        shapes = LC @ vec
        shapes = shapes if V is None else V @ shapes
    return lam, shapes, complete, n_modes


def _first_order_eigs(Mt, Ct, Kt, n, return_modes=False):
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
#: symmetric eigen-solve is done once per position. At most _RITZ_CACHE_MAX bases are kept per system
#: (the oldest dropped; 240 x 120 doubles, 0.23 MB, each on the benchmark).
_RITZ_CACHE: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_RITZ_CACHE_MAX = 1024


def _ritz_basis(system, s, sign, modal_cutoff_hz, nb):
    """(frequency in Hz of the highest mode kept, basis Psi) of the lowest ``nb`` modes of the
    frictionless coupled system at position ``s`` (symmetric, mass-normalised), cached."""
    cache = _RITZ_CACHE.setdefault(system, {})
    key = (float(s), float(sign), modal_cutoff_hz, int(nb))
    if key not in cache:
        M, C, K, BE, BC, V0 = coupled_matrices(system, s, 0.0, sign, modal_cutoff_hz=modal_cutoff_hz)
        w2, Psi = sla.eigh(project_rows(K, BC, BC), project_rows(M, BC, BC), subset_by_index=[0, nb - 1])
        if len(cache) >= _RITZ_CACHE_MAX:
            cache.pop(next(iter(cache)))
        Psi.setflags(write=False)
        cache[key] = (float(np.sqrt(max(w2[-1], 0.0)) / (2 * np.pi)), Psi)
    return cache[key]


def _spectrum_for(geometry, vx, modal_cutoff_hz, n_basis, method="eig", system=None):
    """The per-position eigen-solve: :func:`_spectrum` (dense eig, or the secular roots when
    ``method`` resolves to 'secular') or :func:`fesub.contact.deformed.spectrum_solver`."""
    from .deformed import spectrum_solver

    if geometry != "undeformed":
        if method not in ("auto", "eig"):
            raise ParameterError(f"method must be 'auto' or 'eig' with geometry={geometry!r}, got {method!r} "
                                 "(the secular roots are for the undeformed geometry)")
        return spectrum_solver(geometry, vx, modal_cutoff_hz, n_basis)
    if resolve_method(method, n_basis, system, modal_cutoff_hz) == "secular":
        return partial(_spectrum, solver=SecularSolver())
    return _spectrum


def _basis_leaves_modes(n_basis, n_modes) -> bool:
    return n_basis is not None and n_modes is not None and n_basis < n_modes


def _warn_incomplete(n_basis, complete_hz, n_modes, stacklevel=3):
    if _basis_leaves_modes(n_basis, n_modes):
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
    s, mu, n = _position(s), _mu(mu), _count("n", n, allow_none=True)
    n_basis = _count("n_basis", n_basis, allow_none=True)
    lam, shapes, complete, n_modes = _spectrum(system, s, mu, n, sign, return_modes=return_modes,
                                               modal_cutoff_hz=modal_cutoff_hz, n_basis=n_basis)
    _warn_incomplete(n_basis, complete, n_modes)
    return (lam, shapes) if return_modes else lam


# ------------------------------------------------------------------------------- results
def _completeness_attrs(obj) -> dict:
    return {"n_basis": obj.n_basis, "complete_up_to_hz": float(obj.complete_up_to_hz),
            "n_modes": obj.n_modes, "status": obj.status}


def _completeness_note(obj) -> list:
    if _basis_leaves_modes(obj.n_basis, obj.n_modes):
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
            attrs={"mu": float(self.mu), **_completeness_attrs(self)})

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
            notes=_completeness_note(self))


def _too_many(n, found, n_modes, s) -> str:
    return (f"n = {n} eigenvalues asked at contact position s = {s:.6g} m, but the reduced coupled model has "
            f"only {found} oscillating ones there ({n_modes} modes; friction and damping can make some "
            f"eigenvalues real): use n <= {found}, or n=None for all of them")


def _track(prev: np.ndarray, new: np.ndarray) -> np.ndarray:
    """Reorder ``new`` to follow ``prev`` (assignment minimising eigenvalue distances)."""
    cost = np.abs(prev[:, None] - new[None, :])
    r, c = linear_sum_assignment(cost)
    out = new.copy()
    out[r] = new[c]
    return out


def eigenvalue_loci(system, positions, mu: float, n: int | None = 20, *, progress: bool = False,
                    modal_cutoff_hz: float | None = DEFAULT_EIG_CUTOFF_HZ, n_basis: int | None = None,
                    geometry: str = "undeformed", vx: float = 0.0, method: str = "auto") -> EigenLoci:
    """Complex eigenvalues at every contact position (m), tracked from one position to the next.

    ``n``: the ``n`` lowest-frequency oscillating eigenvalues at each position (not the least
    stable: an instability of a higher mode is outside them, in :meth:`EigenLoci.unstable` as in
    :func:`critical_mu` with the same ``n``); ``None``: all of them, as many as the first position
    has (at most the number of modes of the reduced coupled model).

    ``n_basis`` as in :func:`complex_eigenvalues` (one :class:`IncompleteSpectrumWarning` per call
    when the basis leaves modes out; the result records ``complete_up_to_hz``, the lowest over the
    positions). ``geometry='deformed'`` linearises about the preloaded sliding state at each
    position instead (:mod:`fesub.contact.deformed`; ``vx`` in m/s, whole reduced model only).
    ``method``: 'secular' (the certified roots of the secular function, warm-started along the
    positions, :mod:`fesub.contact.secular`), 'eig' (a dense eig per position), 'auto' (default:
    secular where it is exact and complete: undeformed geometry, ``n_basis=None``, damping
    diagonal in the substructure modes; eig elsewhere).
    Interrupted (Ctrl-C), it returns the positions done so far with ``status='interrupted'``.
    """
    from tqdm.auto import tqdm

    positions, mu, n = _positions(positions), _mu(mu), _count("n", n, allow_none=True)
    n_basis = _count("n_basis", n_basis, allow_none=True)
    spectrum = _spectrum_for(geometry, vx, modal_cutoff_hz, n_basis, method, system)
    lam = None
    complete, n_modes, done, status = float("inf"), None, 0, "completed"
    bar = tqdm(positions, disable=not progress, desc=f"loci mu={mu:g}")
    try:
        for i, s in enumerate(bar):
            ev, _, top, n_modes = spectrum(system, s, mu, n, modal_cutoff_hz=modal_cutoff_hz, n_basis=n_basis)
            if lam is None:
                n = ev.size if n is None else n
                lam = np.zeros((positions.size, n), complex)
            if ev.size < n:
                raise ModelError(_too_many(n, ev.size, n_modes, s))
            lam[i] = ev[:n] if i == 0 else _track(lam[i - 1], ev[:n])
            complete = min(complete, top)
            done = i + 1
    except KeyboardInterrupt:
        status = "interrupted"
    finally:
        bar.close()
    _warn_incomplete(n_basis, complete, n_modes or 0)
    if lam is None:
        lam = np.zeros((positions.size, n or 0), complex)
    return EigenLoci(positions[:done], lam[:done], float(mu), n_basis=n_basis, complete_up_to_hz=complete,
                     n_modes=n_modes, status=status)


@dataclass(eq=False)
class StabilityMap(Result):
    """Largest real part ``max_real[a, b]`` (1/s) of the ``n`` lowest eigenvalues at friction
    coefficient ``mus[a]`` and contact position ``positions[b]`` (m); in :meth:`to_xarray` the
    variable ``max_real_part`` over the dimensions (position, mu).

    ``n``: eigenvalues examined per entry (the lowest-frequency oscillating ones; 0: all of
    them). ``n_basis``, ``complete_up_to_hz``, ``n_modes`` as in :class:`EigenLoci`; ``status``
    'completed' or 'interrupted' (entries not computed are NaN).
    """

    positions: np.ndarray
    mus: np.ndarray
    max_real: np.ndarray
    n: int = 20
    n_basis: int | None = None
    complete_up_to_hz: float = float("inf")
    n_modes: int | None = None
    status: str = "completed"

    kind = "stability-map"

    @property
    def unstable(self) -> np.ndarray:
        """Boolean (mu, position) map: a positive real part."""
        return self.max_real > 0

    def to_xarray(self):
        import xarray as xr

        return xr.Dataset(
            {"max_real_part": (("position", "mu"), self.max_real.T,
                               {"units": "1/s", "long_name": f"largest real part of the {self.n} "
                                                             f"lowest eigenvalues"})},
            coords={"mu": ("mu", self.mus, {"units": "1", "long_name": "friction coefficient"}),
                    "position": ("position", self.positions,
                                 {"units": "m", "long_name": "contact position x on the target"})},
            attrs={"n": int(self.n), **_completeness_attrs(self)})

    @classmethod
    def from_xarray(cls, ds):
        a = ds.attrs
        return cls(ds["position"].values, ds["mu"].values,
                   np.ascontiguousarray(ds["max_real_part"].transpose("mu", "position").values), n=a["n"],
                   n_basis=a["n_basis"], complete_up_to_hz=a["complete_up_to_hz"], n_modes=a["n_modes"],
                   status=a["status"])

    def summary(self) -> dict:
        unst = self.unstable
        first = [float(self.mus[a]) for a in range(self.mus.size) if unst[a].any()]
        return summary_record(
            self.kind,
            {"mu_min": (float(self.mus.min()), "1"), "mu_max": (float(self.mus.max()), "1"),
             "n_mu": (int(self.mus.size), None), "n_positions": (int(self.positions.size), None),
             "n_eigenvalues": (int(self.n), None), "n_basis": (self.n_basis, None)},
            {"max_real_part": (float(np.nanmax(self.max_real)) if np.isfinite(self.max_real).any()
                               else None, "1/s"),
             "lowest_unstable_mu_on_grid": (first[0] if first else None, "1"),
             "complete_up_to": (float(self.complete_up_to_hz), "Hz"), "status": (self.status, None)},
            notes=_completeness_note(self))


def max_real_part_map(system, positions, mus, n: int | None = 20, *, progress: bool = False,
                      modal_cutoff_hz: float | None = DEFAULT_EIG_CUTOFF_HZ,
                      n_basis: int | None = None, method: str = "auto") -> StabilityMap:
    """max Re(lambda) (1/s) over the ``n`` lowest-frequency oscillating eigenvalues (``None``:
    all of them; fewer where the model has fewer), for each (mu, position); ``method`` as in
    :func:`eigenvalue_loci`.

    Returns a :class:`StabilityMap` (``max_real`` of shape (len(mus), len(positions))); interrupted
    (Ctrl-C), the entries done so far and NaN elsewhere, ``status='interrupted'``.
    """
    from tqdm.auto import tqdm

    positions, n = _positions(positions), _count("n", n, allow_none=True)
    mus = _positions(np.atleast_1d(mus) if np.isscalar(mus) else mus, "mus", "friction coefficients >= 0")
    for m in mus:
        _mu(m)
    n_basis = _count("n_basis", n_basis, allow_none=True)
    _spectrum_for("undeformed", 0.0, modal_cutoff_hz, n_basis, method, system)  # checks the method
    out = np.full((mus.size, positions.size), np.nan)
    complete, n_modes, status = float("inf"), None, "completed"
    with tqdm(total=out.size, disable=not progress, desc="max Re map") as bar:
        try:
            for a, mu in enumerate(mus):
                # one solver per mu, warm-started along the positions as in eigenvalue_loci
                spectrum = _spectrum_for("undeformed", 0.0, modal_cutoff_hz, n_basis, method, system)
                for b, s in enumerate(positions):
                    ev, _, top, n_modes = spectrum(system, s, mu, n, modal_cutoff_hz=modal_cutoff_hz,
                                                   n_basis=n_basis)
                    out[a, b] = ev.real.max()
                    complete = min(complete, top)
                    bar.update()
        except KeyboardInterrupt:
            status = "interrupted"
    _warn_incomplete(n_basis, complete, n_modes or 0)
    return StabilityMap(positions, mus, out, n=0 if n is None else n, n_basis=n_basis, complete_up_to_hz=complete,
                        n_modes=n_modes, status=status)


class CriticalMu(float, Result):
    """The critical friction coefficient (a float) with the record of its bisection.

    Attributes: ``positions`` (m) examined; ``bracket`` (lo, hi): stable at lo, unstable at hi;
    ``worst_below`` / ``worst_above`` (1/s): largest real part at each position at lo / hi (NaN
    where that end was not evaluated); ``mu_max``, ``tol``, ``n`` (eigenvalues examined per
    position, 0: all of them), ``iterations``; ``n_basis``,
    ``complete_up_to_hz``, ``n_modes`` as in :class:`EigenLoci`; ``status`` 'completed' or
    'interrupted' (then the value is the upper end of the bracket reached).
    """

    kind = "critical-mu"

    def __new__(cls, value, *, positions, bracket, worst_below, worst_above, mu_max, tol, n,
                iterations, n_basis=None, complete_up_to_hz=float("inf"), n_modes=None,
                status="completed"):
        obj = super().__new__(cls, value)
        obj.positions = np.asarray(positions, float)
        obj.bracket = (float(bracket[0]), float(bracket[1]))
        obj.worst_below = np.asarray(worst_below, float)
        obj.worst_above = np.asarray(worst_above, float)
        obj.mu_max, obj.tol, obj.n = float(mu_max), float(tol), int(n)
        obj.iterations = int(iterations)
        obj.n_basis, obj.complete_up_to_hz, obj.n_modes = n_basis, float(complete_up_to_hz), n_modes
        obj.status = status
        return obj

    @property
    def value(self) -> float:
        return float(self)

    def to_xarray(self):
        import xarray as xr

        pos = {"units": "m", "long_name": "contact position x on the target"}
        return xr.Dataset(
            {"worst_below": ("position", self.worst_below,
                             {"units": "1/s", "long_name": "largest real part at mu = bracket[0]"}),
             "worst_above": ("position", self.worst_above,
                             {"units": "1/s", "long_name": "largest real part at mu = bracket[1]"})},
            coords={"position": ("position", self.positions, pos)},
            attrs={"critical_mu": float(self), "bracket": list(self.bracket), "mu_max": self.mu_max,
                   "tol": self.tol, "n": self.n, "iterations": self.iterations,
                   **_completeness_attrs(self)})

    @classmethod
    def from_xarray(cls, ds):
        a = ds.attrs
        return cls(a["critical_mu"], positions=ds["position"].values, bracket=a["bracket"],
                   worst_below=ds["worst_below"].values, worst_above=ds["worst_above"].values,
                   mu_max=a["mu_max"], tol=a["tol"], n=a["n"], iterations=a["iterations"],
                   n_basis=a["n_basis"], complete_up_to_hz=a["complete_up_to_hz"], n_modes=a["n_modes"],
                   status=a["status"])

    def summary(self) -> dict:
        return summary_record(
            self.kind,
            {"mu_max": (self.mu_max, "1"), "tol": (self.tol, "1"), "n_positions": (int(self.positions.size), None),
             "n_eigenvalues": (self.n, None), "n_basis": (self.n_basis, None)},
            {"critical_mu": (float(self), "1"), "bracket_low": (self.bracket[0], "1"),
             "bracket_high": (self.bracket[1], "1"), "iterations": (self.iterations, None),
             "complete_up_to": (self.complete_up_to_hz, "Hz"), "status": (self.status, None)},
            notes=_completeness_note(self))

    def __reduce__(self):
        return (_rebuild_critical_mu, (float(self), dict(self.__dict__)))


def _rebuild_critical_mu(value, state):
    return CriticalMu(value, **state)


def critical_mu(system, positions, *, mu_max: float = 1.0, n: int | None = 20, tol: float = 1e-3,
                modal_cutoff_hz: float | None = DEFAULT_EIG_CUTOFF_HZ, n_basis: int | None = None,
                max_iter: int = 60, geometry: str = "undeformed", vx: float = 0.0,
                method: str = "auto") -> CriticalMu:
    """Smallest friction coefficient with a positive real part at some position (bisection).

    Parameters
    ----------
    positions : 1-D array of contact positions (m).
    mu_max : upper end of the search (finite, > 0).
    n : eigenvalues examined per position: the ``n`` lowest-frequency oscillating ones, as in
        :func:`eigenvalue_loci` (the same ``n`` there gives the same verdict in
        :meth:`EigenLoci.unstable`); ``None``: all of them, so that no mode's instability is
        missed (fewer where the model has fewer).
    tol : width of the final bracket (finite, > 0).
    n_basis : as in :func:`complex_eigenvalues`.
    max_iter : cap on the bisection steps; a ``tol`` that would need more (log2(mu_max / tol)
        steps) is refused before any work.
    geometry, vx : 'undeformed' (default) or 'deformed' (the sliding state at each position and
        mu, sliding velocity ``vx`` in m/s), as in :func:`eigenvalue_loci`.
    method : 'auto', 'secular' or 'eig', as in :func:`eigenvalue_loci`.

    Returns
    -------
    CriticalMu : a float (the upper end of the final bracket), ``inf`` if the system is stable up
    to ``mu_max``, 0 if unstable without friction; it carries the bracket and the largest real
    part per position at both ends. Assumes instability persists above the critical value
    (checked at mu_max). Interrupted (Ctrl-C): the bracket reached, ``status='interrupted'``.
    """
    positions, n = _positions(positions), _count("n", n, allow_none=True)
    mu_max, tol = check_positive("mu_max", mu_max), check_positive("tol", tol)
    n_basis = _count("n_basis", n_basis, allow_none=True)
    max_iter = _count("max_iter", max_iter)
    spectrum = _spectrum_for(geometry, vx, modal_cutoff_hz, n_basis, method, system)
    need = int(np.ceil(np.log2(mu_max / tol))) if tol < mu_max else 0
    if need > max_iter:
        raise ParameterError(f"tol = {tol!r} needs {need} bisection steps from mu_max = {mu_max:g}, "
                             f"more than max_iter = {max_iter}: use tol >= {mu_max / 2.0 ** max_iter:.3g}")
    track = {"complete": float("inf"), "n_modes": None}

    def worst(mu):
        out = np.empty(positions.size)
        for i, s in enumerate(positions):
            ev, _, top, track["n_modes"] = spectrum(system, s, mu, n, modal_cutoff_hz=modal_cutoff_hz,
                                                    n_basis=n_basis)
            out[i] = ev.real.max()
            track["complete"] = min(track["complete"], top)
        return out

    nan = np.full(positions.size, np.nan)
    lo, hi, below, above, it, status = 0.0, float(mu_max), nan, nan, 0, "completed"
    try:
        w = worst(0.0)
        if w.max() > 0:
            hi, above = 0.0, w
        else:
            below = w
            w = worst(mu_max)
            if w.max() <= 0:
                lo, hi, below = float(mu_max), float("inf"), w
            else:
                above = w
                while hi - lo > tol and it < max_iter:
                    mid = 0.5 * (lo + hi)
                    if not lo < mid < hi:  # the bracket is two adjacent floats: nothing to halve
                        break
                    w = worst(mid)
                    it += 1
                    if w.max() > 0:
                        hi, above = mid, w
                    else:
                        lo, below = mid, w
    except KeyboardInterrupt:
        status = "interrupted"
    _warn_incomplete(n_basis, track["complete"], track["n_modes"] or 0)
    return CriticalMu(hi, positions=positions, bracket=(lo, hi), worst_below=below, worst_above=above,
                      mu_max=mu_max, tol=tol, n=0 if n is None else n, iterations=it, n_basis=n_basis,
                      complete_up_to_hz=track["complete"], n_modes=track["n_modes"], status=status)


def rayleigh_line(omega, alpha: float, beta: float):
    """Eigenvalues of a Rayleigh-damped oscillator of natural frequency omega (rad/s):
    s = -zeta w + j w sqrt(1 - zeta^2), zeta = alpha/(2w) + beta w/2 (the dotted lines)."""
    omega = np.asarray(omega, float)
    z = alpha / (2 * omega) + beta * omega / 2
    return -z * omega + 1j * omega * np.sqrt(np.clip(1 - z * z, 0, None))
