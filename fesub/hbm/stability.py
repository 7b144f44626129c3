"""Stability of harmonic-balance solutions by Hill's method.

A perturbation of the periodic solution ``q(t)`` is sought as a Floquet solution
``dq = e^{lambda t} p(t)``, ``p`` periodic with the harmonics ``0..Nh`` of ``w``. Galerkin
projection of the linearised equations of motion gives the quadratic eigenvalue problem in the
Floquet exponent ``lambda`` (1/s)::

    (lambda^2 Delta_2 + lambda Delta_1 + Delta_0) v = 0

``Delta_0`` is the Jacobian of the harmonic balance extended to the constant harmonic
(``D(w) + dF_nl/dQ``); harmonic ``k`` contributes the blocks ``Delta_1 = [[C, 2 k w M],
[-2 k w M, C]]`` and ``Delta_2 = [[M, 0], [0, M]]`` (cosine then sine rows), the constant
block ``Delta_1 = C``, ``Delta_2 = M``. The problem is linearised (companion form, twice the
size) and solved densely. Of its ``2 n (2 Nh + 1)`` eigenvalues, ``2 n`` are the physical
exponents: the others are copies shifted by ``i k w`` (the same multipliers) whose
approximation degrades towards the truncation. They are picked by

* ``sort='vector'`` (default): the eigenvectors whose weight over the complex harmonics
  ``e^{i j w t}``, ``j = -Nh..Nh`` is centred closest to ``j = 0`` (symmetric eigenvectors, the
  best-resolved copies), or
* ``sort='imag'``: the exponents of smallest ``|Im lambda|`` (the central strip
  ``|Im lambda| <= w / 2``).

Floquet multipliers are ``rho = exp(lambda T)``, ``T = 2 pi / w``; the solution is stable when
every ``|rho| < 1``. A loss of stability is a fold (a real multiplier through +1), a period
doubling (through -1) or a Neimark-Sacker bifurcation (a complex pair through the unit circle).

Memoryless laws (:class:`fesub.hbm.cubic.Cubic` through ``tangent(u)``, the laws of
:mod:`fesub.hbm.laws` through ``law(u, v, order)``) give ``df/du`` and ``df/dv`` at samples of
the orbit: their block on the constant harmonic (when the system has no constant term) and
their part of ``Delta_1`` (``df/dv`` times the ``lambda du`` of the perturbed velocity) follow by
AFT. A
friction law remembers the displacement at the start of each stick interval; for the 1D
Jenkins element that memory is carried exactly (a nonlinear eigenproblem in ``lambda`` solved
by Newton from the Hill estimates, see :func:`floquet`); the 2D stick-slip-separation and 3D
friction elements keep the Jacobian of periodic perturbations (exact at folds only; flagged and
warned). Against the monodromy matrix of the time integration, on a preloaded 3D contact's
S-curve (the user guide's example) the leading multiplier agrees within 5e-5 where the contact is
stuck, or stuck and open in turn; where it also slips within the cycle Hill's leading multiplier
can be far off (0.60 against 0.84 at 185 rad/s on that curve's upper branch).
"""

from __future__ import annotations

import inspect
import math
import warnings
from dataclasses import dataclass, field

import numpy as np

from ..errors import ConvergenceError, ParameterError
from ..io import Result, summary_record
from ._common import single_threaded
from ._hill_memory import galerkin_weights, h0, refine, stick_intervals
from .contact import Jenkins
from .fourier import basis

__all__ = ["Floquet", "Stability", "hill_matrices", "floquet", "frf_stability", "with_stability",
           "backbone_stability", "BIFURCATION_KINDS"]

#: multipliers smaller than this (-) are not refined with the memory of the stuck intervals
RHO_FLOOR = 1e-6

#: names of the losses (and gains) of stability, by the multiplier that crosses the unit circle
BIFURCATION_KINDS = ("fold", "period_doubling", "neimark_sacker")


# ------------------------------------------------------------------------------ Hill matrices
def _basis0(nh, nt, d=0):
    """(nt, 2 nh + 1) samples of ``[1, cos tau, ..., sin nh tau]`` (its ``d``-th derivative)."""
    tau = 2 * math.pi * np.arange(nt) / nt
    return np.column_stack([np.full(nt, 1.0 if d == 0 else 0.0), basis(nh, tau, d)])


def _tangents(el, u, v):
    """``(f_u, f_v)`` (N/m, N s/m) of a memoryless law at samples, or None (friction laws)."""
    if hasattr(el, "law"):            # the laws of fesub.hbm.laws
        out = el.law(u, v, 1)
        return np.broadcast_to(out[1], u.shape), np.broadcast_to(out[2], u.shape)
    if hasattr(el, "tangent"):
        return el.tangent(u), np.zeros_like(u)
    return None


def _contact_terms(sys, Q, w):
    """``dF_nl/dQ`` (N/m) in the basis ``[0; c1; s1; ...]`` (constant block first) and the
    contact part of ``Delta_1`` (N s/m): ``df/dv`` acting on the ``lambda`` part of the
    perturbed velocity ``(lambda + d/dt) du``, by AFT over the law's samples."""
    n, nh = sys.n, sys.nh
    m = 2 * nh
    Nf = (m + 1) * n
    if "w" in inspect.signature(sys.fnl).parameters:
        _, K, _ = sys.fnl(Q, w=w)
    else:
        _, K, _ = sys.fnl(Q)
    const = h0(sys)
    K0 = K.copy() if const else np.zeros((Nf, Nf))
    if not const:
        K0[n:, n:] = K
    C1 = np.zeros((Nf, Nf))
    Qm = np.asarray(Q).reshape(m + const, n)
    qs = np.zeros(n) if const else np.asarray(getattr(sys, "q_static", np.zeros(n)), float)
    for c in sys.contacts:
        el = c.element
        if not (hasattr(el, "law") or hasattr(el, "tangent")):
            continue                  # friction laws: see _hill_memory
        # 4 nh + 2 samples integrate a cubic law exactly; the AFT laws use their own count
        nt = max(4 * nh + 4, int(getattr(el, "nt", 0)))
        E, Ed = _basis0(nh, nt), _basis0(nh, nt, 1)
        Pj = (2 * math.pi / nt) * galerkin_weights(nh)[:, None] * E.T
        for g in np.atleast_2d(np.asarray(c.G, float)):
            p = Qm @ g if const else np.append(0.0, Qm @ g)
            u, v = E @ p + g @ qs, w * (Ed @ p)
            fu, fv = _tangents(el, u, v)
            gg = np.outer(g, g)
            C1 += np.kron(Pj @ (fv[:, None] * E), gg)
            if not const:             # the harmonic block is the law's own, already in K
                Kl = Pj @ (fu[:, None] * E + w * fv[:, None] * Ed)
                Kl[1:, 1:] = 0.0
                K0 += np.kron(Kl, gg)
    return K0, C1


def hill_matrices(sys, Q, w):
    """``(Delta_0, Delta_1, Delta_2)`` of the quadratic Hill problem at a solution.

    Parameters
    ----------
    sys : HBSystem
    Q : (N,) array
        Harmonic coefficients of the periodic solution (m).
    w : float
        Excitation (fundamental) frequency (rad/s).

    Returns
    -------
    D0 : (Nf, Nf) array
        Jacobian extended to the constant harmonic (N/m), ``Nf = n (2 Nh + 1)``, basis
        ``[0; c1; s1; ...; sNh]`` with blocks of the n DOFs.
    D1 : (Nf, Nf) array
        Coefficient of ``lambda`` (N s/m).
    D2 : (Nf, Nf) array
        Coefficient of ``lambda^2`` (kg).
    """
    n, nh = sys.n, sys.nh
    Nf = (2 * nh + 1) * n
    D0, D1 = _contact_terms(sys, np.asarray(Q, float), w)
    D2 = np.zeros((Nf, Nf))
    D0[:n, :n] += sys.K
    D1[:n, :n] += sys.C
    D2[:n, :n] = sys.M
    for k in range(1, nh + 1):
        i = (2 * k - 1) * n
        c, s = slice(i, i + n), slice(i + n, i + 2 * n)
        A = sys.K - (k * w) ** 2 * sys.M
        B = k * w * sys.C
        D0[c, c] += A
        D0[s, s] += A
        D0[c, s] += B
        D0[s, c] -= B
        D1[c, c] += sys.C
        D1[s, s] += sys.C
        D1[c, s] += 2 * k * w * sys.M
        D1[s, c] -= 2 * k * w * sys.M
        D2[c, c] = D2[s, s] = sys.M
    return D0, D1, D2


# ------------------------------------------------------------------------------ one solution
@dataclass
class Floquet:
    """Floquet exponents and multipliers of one periodic solution.

    Parameters
    ----------
    w : float
        Fundamental frequency (rad/s); period ``T = 2 pi / w`` (s).
    exponents : (2 n,) complex array
        Floquet exponents (1/s), shifted by multiples of ``i w`` into the strip
        ``|Im| <= w / 2`` and sorted by decreasing real part.
    multipliers : (2 n,) complex array
        ``exp(exponents T)`` (-), same order.
    stable : bool
        Every ``|multiplier| < 1 + tol``.
    exact : bool
        False when a law's Floquet perturbation is approximated by its harmonic-balance
        Jacobian (periodic perturbations): the 2D
        :class:`~fesub.hbm.contact.StickSlipSeparation` (memory of its stuck intervals), or a
        law with neither ``law(u, v, order)`` (the laws of :mod:`fesub.hbm.laws`) nor
        ``tangent(u)``; see :func:`floquet`.
    """

    w: float
    exponents: np.ndarray
    multipliers: np.ndarray
    stable: bool
    exact: bool = True

    @property
    def largest(self) -> complex:
        """Multiplier of largest modulus (-)."""
        return complex(self.multipliers[int(np.argmax(np.abs(self.multipliers)))])


def _centroids(V, n, nh):
    """Centre ``sum_j j |c_j|^2 / sum_j |c_j|^2`` of each eigenvector (columns of ``V``) over
    the complex harmonics ``e^{i j w t}``, ``j = -nh..nh``."""
    Vm = V.reshape(2 * nh + 1, n, -1)
    c, s = Vm[1::2], Vm[2::2]
    plus = (np.abs(c - 1j * s) ** 2).sum(axis=1)      # (nh, ncols) weights of e^{+ikwt}
    minus = (np.abs(c + 1j * s) ** 2).sum(axis=1)
    zero = 4 * (np.abs(Vm[0]) ** 2).sum(axis=0)         # |c_0|^2 against |(c - i s)/2|^2
    k = np.arange(1, nh + 1)[:, None]
    return (k * (plus - minus)).sum(axis=0) / (zero + (plus + minus).sum(axis=0))


def _physical_with_memory(sys, Q, w, D, lam0, V0, intervals, sort, count):
    """``count`` physical exponents with the exact memory of the stuck intervals: Newton from
    the best-placed Hill estimates, copies shifted by ``i w`` merged, the best-placed kept."""
    n, nh = sys.n, sys.nh
    groups = {}
    for lam, v in refine(sys, Q, w, D, lam0, V0, intervals):
        centre = lam - 1j * w * round(lam.imag / w)
        key = abs(_centroids(v[:, None], n, nh)[0]) if sort == "vector" else abs(lam.imag)
        for c in groups:
            if abs(c - centre) <= 1e-8 * w:
                groups[c] = min(groups[c], (key, lam), key=lambda kl: kl[0])
                break
        else:
            groups[centre] = (key, lam)
            if len(groups) == count:      # the best-placed candidates come first
                break
    if len(groups) < count:
        raise ConvergenceError(f"Hill's method with the memory of the stuck intervals: "
                               f"{len(groups)} of {count} Floquet exponents converged at "
                               f"w={w:.6g} rad/s")
    best = sorted(groups.values(), key=lambda kl: kl[0])[:count]
    return np.array([lam for _, lam in best])


def _check_sort(sort):
    if sort not in ("vector", "imag"):
        raise ParameterError(f"sort must be 'vector' or 'imag', got {sort!r}")
    return sort


@single_threaded
def floquet(sys, Q, w, *, sort: str = "vector", tol: float = 1e-8) -> Floquet:
    """Floquet exponents and multipliers of a harmonic-balance solution by Hill's method.

    Parameters
    ----------
    sys : HBSystem
    Q : (N,) array
        Harmonic coefficients of the periodic solution (m).
    w : float
        Its fundamental (excitation) frequency (rad/s).
    sort : {'vector', 'imag'}
        How the ``2 n`` physical exponents are picked among the ``2 n (2 Nh + 1)``
        eigenvalues (module docstring).
    tol : float
        Stable when every ``|rho| < 1 + tol`` (-): a multiplier on the unit circle (a fold
        point) counts as stable up to the rounding of the eigen solve.

    Returns
    -------
    Floquet

    Notes
    -----
    A friction law remembers: in a stick interval started at ``t_s`` the force of a Floquet
    perturbation ``e^{lambda t} p(t)`` holds the offset ``e^{lambda t_s} p(t_s)``, which the
    harmonic-balance Jacobian (periodic perturbations) takes as ``p(t_s)``. For the 1D Jenkins
    element the memory is exact: the ``2 n`` physical exponents are solved by Newton on the
    nonlinear eigenproblem ``T(lambda) v = 0`` (stick-interval integrals in closed form),
    started from the Hill estimates; estimates with ``|rho| <`` :data:`RHO_FLOOR` (strongly
    damped modes) are kept as they are. The 2D stick-slip-separation element keeps the
    periodic-perturbation Jacobian (``Floquet.exact`` False, a RuntimeWarning): its multipliers
    are exact at ``lambda = 0`` (folds) only.

    Cost: a dense eigen solve of size ``2 n (2 Nh + 1)`` (single-threaded BLAS): about one
    Newton solve of the point for a few DOFs, some fifty for the 40-DOF cantilever of
    :mod:`fesub.models` at Nh = 5 (6 s).
    """
    _check_sort(sort)
    w = float(w)
    if not (w > 0 and math.isfinite(w)):
        raise ParameterError(f"w (rad/s) must be finite and > 0, got {w!r}")
    n, nh = sys.n, sys.nh
    D0, D1, D2 = hill_matrices(sys, Q, w)
    Nf = D0.shape[0]
    A = np.zeros((2 * Nf, 2 * Nf))
    A[:Nf, Nf:] = np.eye(Nf)
    A[Nf:, :Nf] = -np.linalg.solve(D2, D0)
    A[Nf:, Nf:] = -np.linalg.solve(D2, D1)
    lam, Z = np.linalg.eig(A)
    key = np.abs(_centroids(Z[:Nf], n, nh)) if sort == "vector" else np.abs(lam.imag)
    intervals = stick_intervals(sys, Q)
    if intervals:
        order = np.argsort(key, kind="stable")
        # strongly damped exponents (|rho| < RHO_FLOOR at lambda = 0) are kept as estimated:
        # the memory moves them, it cannot bring them near the unit circle
        small = np.abs(np.exp(lam * (2 * math.pi / w))) < RHO_FLOOR
        keep = order[:2 * n][small[order[:2 * n]]]
        cand = [i for i in order[:6 * n] if not small[i]]
        found = _physical_with_memory(sys, Q, w, (D0, D1, D2), lam[cand], Z[:Nf, cand],
                                      intervals, sort, 2 * n - keep.size) if cand else []
        lam = np.concatenate([np.asarray(found, complex), lam[keep]])
    else:
        lam = lam[np.argsort(key, kind="stable")[:2 * n]]
    lam = lam - 1j * w * np.round(lam.imag / w)          # into the central strip
    lam = lam[np.lexsort((-lam.imag, -lam.real))]
    rho = np.exp(lam * (2 * math.pi / w))
    exact = all(hasattr(c.element, "law") or hasattr(c.element, "tangent")
                or isinstance(c.element, Jenkins) for c in sys.contacts)
    if not exact:
        warnings.warn("Hill's method: a contact law of this system cannot form its Floquet "
                      "perturbation exactly (the memory of the 2D stick-slip-separation "
                      "or 3D friction element, or a law without a tangent df/du for the "
                      "constant harmonic); "
                      "its multipliers are exact only at lambda = 0 (folds)", RuntimeWarning,
                      stacklevel=2)
    return Floquet(w, lam, rho, bool(np.abs(rho).max() < 1 + tol), exact)


def _kind(rho, rtol=1e-6):
    """Bifurcation named by the multiplier ``rho`` leaving (or entering) the unit circle."""
    if abs(rho.imag) <= rtol * abs(rho):
        return "fold" if rho.real > 0 else "period_doubling"
    return "neimark_sacker"


# ------------------------------------------------------------------------------ along a curve
@dataclass
class Stability(Result):
    """Floquet multipliers along a curve of periodic solutions (forced response or backbone).

    Parameters
    ----------
    w : (npts,) array
        Frequency of each point (rad/s).
    alpha : (npts,) array
        Force amplitude of each point (N).
    Am : (npts,) array
        RMS amplitude at the monitor DOF (m).
    exponents : (npts, 2 n) complex array
        Floquet exponents (1/s), central strip ``|Im| <= w / 2``.
    multipliers : (npts, 2 n) complex array
        Floquet multipliers ``exp(lambda 2 pi / w)`` (-).
    stable : (npts,) bool array
        Every ``|multiplier| < 1 + tol`` at that point.
    bifurcations : list of dict
        Where the stability changes: ``kind`` (``'fold'``, ``'period_doubling'``,
        ``'neimark_sacker'``), ``change`` (``'loss'`` or ``'gain'`` along the curve),
        ``index`` (it lies between points ``index - 1`` and ``index``), ``w`` (rad/s),
        ``alpha`` (N), ``Am`` (m), ``multiplier`` ([re, im] of the crossing multiplier, -),
        ``located`` (``'corrected'``: solved on the curve where ``max |rho| = 1``;
        ``'interpolated'``: linear interpolation of ``max |rho| - 1`` between the points).
    sort : str
        How the physical exponents were picked (``'vector'`` or ``'imag'``).
    exact : bool
        False when a law's Floquet perturbation is approximated (see :class:`Floquet`).
    """

    w: np.ndarray
    alpha: np.ndarray
    Am: np.ndarray
    exponents: np.ndarray
    multipliers: np.ndarray
    stable: np.ndarray
    bifurcations: list = field(default_factory=list)
    sort: str = "vector"
    exact: bool = True

    kind = "stability"

    def data_vars(self) -> dict:
        """The variables (dimensions ``point``, ``exponent``) a curve's dataset takes on."""
        return {
            "stable": ("point", np.asarray(self.stable, np.int8),
                       {"units": "1", "long_name": "stable (1) or unstable (0), Hill's method"}),
            "floquet_exponents": (("point", "exponent"), np.asarray(self.exponents, complex),
                                  {"units": "1/s", "long_name": "Floquet exponents, central "
                                   "strip |Im| <= w/2"}),
            "floquet_multipliers": (("point", "exponent"), np.asarray(self.multipliers, complex),
                                    {"units": "1", "long_name": "Floquet multipliers"})}

    def attrs(self) -> dict:
        """The attributes a curve's dataset takes on."""
        return {"bifurcations": self.bifurcations, "stability_sort": self.sort,
                "stability_exact": bool(self.exact)}

    def to_xarray(self):
        import xarray as xr

        data = self.data_vars()
        data["Am"] = ("point", np.asarray(self.Am, float),
                      {"units": "m", "long_name": "RMS amplitude at the monitor DOF"})
        data["alpha"] = ("point", np.asarray(self.alpha, float),
                         {"units": "N", "long_name": "force amplitude"})
        return xr.Dataset(data, coords={"w": ("point", np.asarray(self.w, float),
                                              {"units": "rad/s", "long_name": "frequency"})},
                          attrs=self.attrs())

    @classmethod
    def from_dataset(cls, ds, w, alpha, Am):
        """The stability a curve's dataset holds (None when it holds none)."""
        if "stable" not in ds:
            return None
        a = ds.attrs
        return cls(np.asarray(w, float), np.asarray(alpha, float), np.asarray(Am, float),
                   ds["floquet_exponents"].values.copy(),
                   ds["floquet_multipliers"].values.copy(), ds["stable"].values.astype(bool),
                   list(a["bifurcations"]), a["stability_sort"], bool(a["stability_exact"]))

    @classmethod
    def from_xarray(cls, ds):
        return cls.from_dataset(ds, ds["w"].values.copy(), ds["alpha"].values.copy(),
                                ds["Am"].values.copy())

    def summary(self) -> dict:
        kinds = {k: sum(b["kind"] == k for b in self.bifurcations) for k in BIFURCATION_KINDS}
        res = {"points": (len(self.w), None), "unstable_points": (int(np.sum(~self.stable)), None),
               **{f"{k}_points": (v, None) for k, v in kinds.items()}}
        return summary_record(self.kind, {"sort": (self.sort, None)}, res)


def _progress(it, progress, desc):
    if not progress:
        return it
    from tqdm import tqdm

    return tqdm(it, desc=desc, unit="point")


def _along(sys, Qs, ws, alphas, sort, progress, desc):
    fl = [floquet(sys, q, w, sort=sort) for q, w in _progress(zip(Qs, ws), progress, desc)]
    n2 = 2 * sys.n
    ex = np.array([f.exponents for f in fl]).reshape(-1, n2)
    rho = np.array([f.multipliers for f in fl]).reshape(-1, n2)
    st = np.array([f.stable for f in fl], bool)
    exact = all(f.exact for f in fl)
    Am = np.array([sys.amplitude(q) for q in Qs])
    return Stability(np.asarray(ws, float), np.asarray(alphas, float), Am, ex, rho, st, [],
                     sort, exact)


def _record(kind_rho, i, stab_prev, w, alpha, Am, located):
    return {"kind": _kind(kind_rho), "change": "loss" if stab_prev else "gain", "index": int(i),
            "w": float(w), "alpha": float(alpha), "Am": float(Am),
            "multiplier": [float(kind_rho.real), float(kind_rho.imag)], "located": located}


def _interpolated(st: Stability):
    """Bifurcations between the points, located by linear interpolation."""
    g = np.abs(st.multipliers).max(axis=1) - 1
    out = []
    for i in np.flatnonzero(st.stable[1:] != st.stable[:-1]) + 1:
        j = i if st.stable[i - 1] else i - 1            # the unstable point of the two
        rho = st.multipliers[j][np.argmax(np.abs(st.multipliers[j]))]
        t = g[i - 1] / (g[i - 1] - g[i]) if g[i - 1] != g[i] else 0.5
        lerp = [(1 - t) * v[i - 1] + t * v[i] for v in (st.w, st.alpha, st.Am)]
        out.append(_record(rho, i, st.stable[i - 1], *lerp, "interpolated"))
    return out


def _on_curve(sys, alpha, ya, yb, s, tol=1e-11, max_iter=30):
    """Solution ``(Q, w)`` of the forced response on the hyperplane through
    ``ya + s (yb - ya)`` normal to the secant ``yb - ya`` (scaled unknowns)."""
    N = sys.N
    sc = np.append(np.full(N, max(np.abs(ya[:N]).max(), np.abs(yb[:N]).max())), abs(ya[N]))
    za, zb = ya / sc, yb / sc
    d = zb - za
    z0 = za + s * d
    z = z0.copy()
    for _ in range(max_iter):
        y = z * sc
        R, RQ, Rw, _ = sys.jacobian(y[:N], y[N], alpha)
        if np.abs(R).max() <= tol * alpha and abs(d @ (z - z0)) <= tol:
            return y[:N], y[N]
        J = np.vstack([np.column_stack([RQ * sc[:N], Rw * sc[N]]) / alpha, d])
        z = z - np.linalg.solve(J, np.append(R / alpha, d @ (z - z0)))
    raise ConvergenceError(f"stability: no forced response on the curve between "
                           f"w={ya[N]:.6g} and {yb[N]:.6g} rad/s")


def _corrected(sys, frf, st: Stability, sort):
    """Bifurcations of a forced response located on the curve: ``max |rho| = 1`` by Brent's
    method on the hyperplanes between the two points that bracket it."""
    from scipy.optimize import brentq

    out = []
    for b in _interpolated(st):
        i = b["index"]
        ya = np.append(frf.Q[i - 1], frf.w[i - 1])
        yb = np.append(frf.Q[i], frf.w[i])
        memo = {}

        def g(s):
            Q, w = _on_curve(sys, frf.alpha, ya, yb, s)
            f = floquet(sys, Q, w, sort=sort)
            memo[s] = (Q, w, f)
            return float(np.abs(f.multipliers).max() - 1)

        try:
            s = brentq(g, 0.0, 1.0, xtol=1e-12, rtol=1e-12, maxiter=100)
        except (ValueError, ConvergenceError):
            out.append(b)                                # keep the interpolated location
            continue
        Q, w, f = memo[s] if s in memo else (*_on_curve(sys, frf.alpha, ya, yb, s), None)
        rho = b["multiplier"][0] + 1j * b["multiplier"][1]
        if f is not None:
            rho = f.largest
        out.append(_record(rho, i, st.stable[i - 1], w, frf.alpha, sys.amplitude(Q),
                           "corrected"))
    return out


@single_threaded
def with_stability(ds, stability):
    """``ds`` (a curve's dataset) with the variables and attributes of ``stability`` added
    (unchanged when it is None)."""
    if stability is not None:
        ds = ds.assign(stability.data_vars())
        ds.attrs.update(stability.attrs())
    return ds


def frf_stability(sys, frf, *, sort: str = "vector", locate: bool = True,
                  progress: bool = False) -> Stability:
    """Stability of every point of a forced response (:class:`~fesub.hbm.forced.FRF`).

    Parameters
    ----------
    sys : HBSystem
        The system the forced response was computed on.
    frf : FRF
    sort : {'vector', 'imag'}
        Selection of the physical Floquet exponents (see :func:`floquet`).
    locate : bool
        Locate each change of stability on the curve (``max |rho| = 1``, Brent's method on
        the forced response between the two points); else interpolate between the points.
    progress : bool
        tqdm progress bar over the points.

    Returns
    -------
    Stability
    """
    _check_sort(sort)
    st = _along(sys, frf.Q, frf.w, np.full(len(frf.w), float(frf.alpha)), sort, progress,
                "Hill stability")
    st.bifurcations = _corrected(sys, frf, st, sort) if locate else _interpolated(st)
    return st


@single_threaded
def backbone_stability(sys, bb, *, sort: str = "vector", progress: bool = False) -> Stability:
    """Stability of every point of a backbone (:class:`~fesub.hbm.backbone.Backbone`): each
    point is the forced response at its force ``alpha`` (N) and frequency ``w`` (rad/s).
    Changes of stability are interpolated between the points (see :func:`frf_stability`).

    Parameters
    ----------
    sys : HBSystem
        The system the backbone was computed on.
    bb : Backbone
        The backbone: forces ``alpha`` (N), frequencies ``w`` (rad/s), harmonic coefficients
        ``Q`` (m), amplitudes ``Am`` (m).
    sort : {'vector', 'imag'}
        Selection of the physical Floquet exponents (see :func:`floquet`).
    progress : bool
        tqdm progress bar over the points.

    Returns
    -------
    Stability
        Floquet exponents (1/s) and multipliers (-) of every point, stability flags and the
        interpolated changes of stability (w in rad/s, alpha in N, Am in m).
    """
    _check_sort(sort)
    st = _along(sys, bb.Q, bb.w, bb.alpha, sort, progress, "Hill stability")
    st.bifurcations = _interpolated(st)
    return st
