"""Time-dependent complex eigenvalue analysis of the sliding contact over the contact positions
(primal assembly, sect. 3-4): the tracked loci (:func:`eigenvalue_loci`), the largest real part
over positions and friction coefficients (:func:`max_real_part_map`) and the critical friction
coefficient (:func:`critical_mu`), in the undeformed geometry (dense eig or the secular roots of
:mod:`fesub.contact.analyses.secular`) or the deformed one (:mod:`fesub.contact.analyses.deformed`).

The one-position solve and its matrices are in :mod:`fesub.contact.analyses.spectrum`
(:func:`complex_eigenvalues`, :func:`coupled_matrices`, :class:`EigenLoci`, also named here).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np

from ...errors import ModelError, ParameterError, check_positive
from ...fe.assembly import rayleigh_root as rayleigh_line  # noqa: F401 - the loci figures' damping lines
from ...io import Result, summary_record
from ..geometry import coupling_rows  # noqa: F401 - part of this module's namespace
from .deformed import spectrum_solver
from .primal import null_space_row, project_rows  # noqa: F401 - part of this module's namespace
from .secular import SecularSolver, resolve_method
from .spectrum import (DEFAULT_EIG_CUTOFF_HZ, RITZ_CACHE, EigenLoci, IncompleteSpectrumWarning,  # noqa: F401
                       as_count, as_mu, as_positions, completeness_attrs, completeness_note, complex_eigenvalues,
                       coupled_matrices, primal_matrices, ritz_basis, spectrum_at, track, warn_incomplete)

# the one-position names (complex_eigenvalues, coupled_matrices, primal_matrices, EigenLoci,
# IncompleteSpectrumWarning) are importable from here too; they are documented in spectrum
__all__ = ["null_space_row", "project_rows", "eigenvalue_loci", "StabilityMap", "max_real_part_map", "CriticalMu",
           "critical_mu", "rayleigh_line"]


#: the one-position solve of the undeformed geometry and the Ritz bases it caches (per system), by
#: their names here: :func:`_spectrum_for` looks ``_spectrum`` up at each call
_spectrum, _ritz_basis, _RITZ_CACHE = spectrum_at, ritz_basis, RITZ_CACHE


def _spectrum_for(geometry, vx, modal_cutoff_hz, n_basis, method="eig", system=None):
    """The per-position eigen-solve: :func:`_spectrum` (dense eig, or the secular roots when
    ``method`` resolves to 'secular') or :func:`fesub.contact.deformed.spectrum_solver`."""
    if geometry != "undeformed":
        if method not in ("auto", "eig"):
            raise ParameterError(f"method must be 'auto' or 'eig' with geometry={geometry!r}, got {method!r} "
                                 "(the secular roots are for the undeformed geometry)")
        return spectrum_solver(geometry, vx, modal_cutoff_hz, n_basis)
    if resolve_method(method, n_basis, system, modal_cutoff_hz) == "secular":
        return partial(_spectrum, solver=SecularSolver())
    return _spectrum


def _too_many(n, found, n_modes, s) -> str:
    return (f"n = {n} eigenvalues asked at contact position s = {s:.6g} m, but the reduced coupled model has "
            f"only {found} oscillating ones there ({n_modes} modes; friction and damping can make some "
            f"eigenvalues real): use n <= {found}, or n=None for all of them")


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

    positions, mu, n = as_positions(positions), as_mu(mu), as_count("n", n, allow_none=True)
    n_basis = as_count("n_basis", n_basis, allow_none=True)
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
            lam[i] = ev[:n] if i == 0 else track(lam[i - 1], ev[:n])
            complete = min(complete, top)
            done = i + 1
    except KeyboardInterrupt:
        status = "interrupted"
    finally:
        bar.close()
    warn_incomplete(n_basis, complete, n_modes or 0)
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
            attrs={"n": int(self.n), **completeness_attrs(self)})

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
            notes=completeness_note(self))


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

    positions, n = as_positions(positions), as_count("n", n, allow_none=True)
    mus = as_positions(np.atleast_1d(mus) if np.isscalar(mus) else mus, "mus", "friction coefficients >= 0")
    for m in mus:
        as_mu(m)
    n_basis = as_count("n_basis", n_basis, allow_none=True)
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
    warn_incomplete(n_basis, complete, n_modes or 0)
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
                   **completeness_attrs(self)})

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
            notes=completeness_note(self))

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
    positions, n = as_positions(positions), as_count("n", n, allow_none=True)
    mu_max, tol = check_positive("mu_max", mu_max), check_positive("tol", tol)
    n_basis = as_count("n_basis", n_basis, allow_none=True)
    max_iter = as_count("max_iter", max_iter)
    spectrum = _spectrum_for(geometry, vx, modal_cutoff_hz, n_basis, method, system)
    need = int(np.ceil(np.log2(mu_max / tol))) if tol < mu_max else 0
    if need > max_iter:
        raise ParameterError(f"tol = {tol!r} needs {need} bisection steps from mu_max = {mu_max:g}, "
                             f"more than max_iter = {max_iter}: use tol >= {mu_max / 2.0 ** max_iter:.3g}")
    found = {"complete": float("inf"), "n_modes": None}

    def worst(mu):
        out = np.empty(positions.size)
        for i, s in enumerate(positions):
            ev, _, top, found["n_modes"] = spectrum(system, s, mu, n, modal_cutoff_hz=modal_cutoff_hz,
                                                    n_basis=n_basis)
            out[i] = ev.real.max()
            found["complete"] = min(found["complete"], top)
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
    warn_incomplete(n_basis, found["complete"], found["n_modes"] or 0)
    return CriticalMu(hi, positions=positions, bracket=(lo, hi), worst_below=below, worst_above=above,
                      mu_max=mu_max, tol=tol, n=0 if n is None else n, iterations=it, n_basis=n_basis,
                      complete_up_to_hz=found["complete"], n_modes=found["n_modes"], status=status)
