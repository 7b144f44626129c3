"""Every eigenvalue of a linearised sliding state in a frequency band, with a count that none is missed.

The constrained linearised equations of :mod:`fesub.contact.analyses.linearised`, projected on
the null spaces of their constraint and force rows (``Mt, Ct, Kt``, N coordinates), have 2N
complex eigenvalues ``lam`` (1/s), the zeros of ``det T(lam)``, ``T(z) = z^2 Mt + z Ct + Kt``.
:func:`band_eigenvalues` finds those in the region of the band

    Omega = { z : 2 pi f_lo <= Im z <= 2 pi f_hi,  |Re z| <= max_rate }

(the growth rates and decay rates of interest bounded by ``max_rate``, 1/s), and proves the list
complete.

Method (the choices and why):

* **Shift-invert Arnoldi on the first-order pencil**, not a projection on real modes. A projection
  on the real (undamped, symmetric-part) modes, as the commercial complex eigenvalue analyses do,
  gives the eigenvalues of the projected system: their error is the truncation of the basis, which
  nothing bounds a priori, and the friction terms (unsymmetric stiffness, the law's damping)
  change with mu and the steady state, so the basis must be rebuilt or checked at each mu anyway
  (on the disc brake of ``fesub brake``, the parts' modes below 2 f_hi with one block of static
  corrections, 92 vectors: errors up to 2e-4 of |lam| in the band; the contact constraints
  change the modes under the pads much).
  Shift-invert Arnoldi gives eigenvalues of the system itself, to the Arnoldi tolerance. For a
  shift ``sigma`` on the imaginary axis, the operator ``(A - sigma B)^-1 B`` of the first-order
  pencil ``B u' = A u``, ``u = (q, q')``, is applied through one complex LU of ``T(sigma)``
  (N x N, 1/50 to 1/130 of a dense eig of the 2N first-order matrix for N = 300):
  ``x1 = -T(sigma)^-1 (Ct y1 + Mt (sigma y1 + y2))``, ``x2 = y1 + sigma x1`` (one product of the
  real ``[Ct, Mt]`` with the real and imaginary parts, on SciPy's BLAS, and a pair of triangular
  solves, O(N^2) a product); its eigenvalues ``theta = 1/(lam - sigma)``. ARPACK returns the
  ``k`` eigenvalues nearest the shift: the disk of radius ``r`` (the farthest of them) around
  the shift is searched, and covers the band's rectangle over ``[Im sigma - w, Im sigma + w]``,
  ``w = sqrt(r^2 - max_rate^2)``.
* **Several shifts** cover the band: the band's two ends first (their LUs are points of the
  certificate's contour), then each one in the middle of the part of the band not yet covered
  (``k`` doubles when a disk is narrower than the rectangle). By default (``k`` not given) the
  first shift keeps 16 eigenvalues and each later one as many as reach the far end of its part
  of the band, from the eigenvalues per unit radius of the disk before (with a quarter more):
  the shift at the band's top then closes the band where, with a fixed ``k``, a third shift
  (an LU, ARPACK's products, certificate points near it) filled a sliver between two disks. An
  eigenvalue found by two shifts is kept from the nearer one.
* **Certificate** (argument principle): the number of eigenvalues in ``Omega`` is the winding
  number of ``det T`` around its boundary. With the eigenvalues found (in and near the region)
  and their conjugates divided out (each value once: a disk reaching below the real axis finds
  both members of a pair), ``h(z) = det T(z) / prod_j (z - lam_j)`` winds once per eigenvalue
  in ``Omega`` that was *not* found. Its phase is followed along the rectangle (one complex LU per point,
  ``det T`` from the LU's diagonal and pivots), each step refined until its phase change is below
  pi/4 and its change of log|h| below 1. The eigenvalues not divided out give log h a smooth
  trend, nearly a quadratic polynomial p over the region (several pi of phase per side): p is
  measured from two short differences and ``h exp(-p)`` followed instead (no zeros or poles, the
  same winding; seven to nine points then suffice on a narrow band). The phase change along a straight step is the sum of the
  angles that the unfound eigenvalues subtend on it (those found cancel), each below pi; the count
  is exact when, on every final step, that sum is below pi in magnitude: then the principal
  values add up to the true winding. The answer is certified when the winding is 0 (within 0.05:
  the found eigenvalues' errors leave a tiny dipole each).
* **Retry**: a failed certificate repeats the search once with ``k`` doubled (more eigenvalues
  divided out near the region, smoother steps); a wide band with many eigenvalues near its
  boundary was refused twice in 20 cases of the tests' block without it, never with it.
* **Dense eig** below ``dense_below`` first-order coordinates (ARPACK needs ``k < 2N - 1``),
  certified by the same count.

Cost: every step is a dense LU of ``T(z)`` (N x N complex) or a product with one; the certificate
needs at least six LUs (four corners, the trend's two short differences). On the disc brake of
``fesub brake`` (N = 534, 19 eigenvalues in 1-10 kHz) a dense eig costs about 60 LUs; the
analysis takes two shifts, 8 to 10 LUs and 140 to 160 products (see the benchmarks). Much more
needs a count of the eigenvalues that does not factor ``T(z)`` at every contour point.

Units: eigenvalues in 1/s (growth rate + j angular frequency), frequencies in Hz, rates in 1/s.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg as sla

from ...errors import ParameterError, check_count, check_positive
from ...io import Result, summary_record
from .secular import first_order_matrix

__all__ = ["BandSpectrum", "band_eigenvalues", "contour_count", "projected_matrices"]

#: largest phase change (rad) and change of log|h| of one step of the certificate's contour
PHASE_STEP, LOG_STEP = np.pi / 4, 1.0
#: largest default number of eigenvalues per shift (ARPACK's work per product grows with k)
K_MAX = 96
#: winding accepted as zero (the found eigenvalues' errors leave a dipole of winding ~|error|/distance)
WINDING_TOL = 0.05


def projected_matrices(system):
    """(Mt, Ct, Kt): the constrained pencil of a
    :class:`~fesub.contact.analyses.linearised.LinearisedSystem` (its projection on the null spaces
    of the constraint and force rows), or a tuple (M, C, K) of square matrices used as given
    (kg, N s/m, N/m or per unit modal mass)."""
    if hasattr(system, "projected"):
        return tuple(np.asarray(X, float) for X in system.projected())
    try:
        M, C, K = (np.asarray(X, float) for X in system)
    except (TypeError, ValueError):
        raise ParameterError("system must be a LinearisedSystem or a tuple (M, C, K) of square matrices") from None
    n = M.shape[0] if M.ndim == 2 else -1
    if any(X.ndim != 2 or X.shape != (n, n) for X in (M, C, K)) or n < 1:
        raise ParameterError("M, C and K must be square matrices of one size")
    return M, C, K


def _logdet(T):
    """(log|det T|, arg det T) of a complex matrix from its LU factors."""
    lu, piv = sla.lu_factor(T, check_finite=False)
    d = np.diag(lu)
    swaps = int(np.count_nonzero(piv != np.arange(piv.size)))
    return float(np.log(np.abs(d)).sum()), float(np.angle(d).sum() + np.pi * swaps)


def contour_count(Mt, Ct, Kt, found, region, *, max_depth: int = 12, known=None):
    """Winding number of ``det T(z) / prod_j (z - found_j)`` around the rectangle ``region``.

    Parameters
    ----------
    Mt, Ct, Kt : (N, N) arrays
        The pencil ``T(z) = z^2 Mt + z Ct + Kt``.
    found : array_like of complex
        Eigenvalues (1/s) divided out: those claimed in the region and any others near it.
    region : tuple
        ``(re_min, re_max, im_min, im_max)`` in 1/s.
    max_depth : int
        Bisections of one step at most.
    known : dict, optional
        ``{z: (log|det T(z)|, arg det T(z))}`` already computed (the Arnoldi shifts' LUs); the
        contour passes through those on its horizontal sides.

    Returns
    -------
    (winding, n_points, resolved): the winding (float; an integer up to the found eigenvalues'
    errors: the number of eigenvalues inside the rectangle that are not in ``found``), the
    points where ``det T`` was evaluated (LUs), and whether every step met the phase and
    log-modulus limits (:data:`PHASE_STEP`, :data:`LOG_STEP`) within ``max_depth`` bisections.
    The contour starts from its four corners and the points of ``known`` on it.
    """
    a, b, c, d = (float(v) for v in region)
    lam = np.asarray(found, complex).ravel()
    known = dict(known or {})
    n_pts = [0]

    def h(z):
        if z in known:
            lg, ph = known[z]
        else:
            lg, ph = _logdet(z * z * Mt + z * Ct + Kt)
            n_pts[0] += 1
        dz = z - lam
        return lg - np.log(np.abs(dz)).sum(), ph - np.angle(dz).sum()

    # the eigenvalues not divided out (hundreds, far from the region) add a smooth trend to log h,
    # nearly a quadratic polynomial over the region (several pi of phase per side): estimated
    # from the derivatives at the middle of the bottom and top sides (one more point on each, a
    # short step away) and subtracted. exp(-p) of a polynomial p has no zeros or poles and winds
    # zero times: the count is unchanged, the steps become smooth.
    raw = h
    mids = []
    for y in (c, d):
        on = [z for z in known if z.imag == y and a < z.real < b]
        mids.append(min(on, key=lambda z: abs(z.real - 0.5 * (a + b))) if on else complex(0.5 * (a + b), y))
    step = min(b - a, d - c) / 32   # short: the phase difference over it well below pi
    slopes = []
    for z, sgn in zip(mids, (1.0, -1.0)):
        z2 = z + sgn * step if a < z.real + sgn * step < b else z - sgn * step
        v1, v2 = raw(z), raw(z2)
        known[z], known[z2] = _logdet_of(z, v1, lam), _logdet_of(z2, v2, lam)
        dph = (v2[1] - v1[1] + np.pi) % (2 * np.pi) - np.pi
        slopes.append(complex(v2[0] - v1[0], dph) / (z2 - z))
    zb, zt = mids
    c1, c2 = slopes[0], (slopes[1] - slopes[0]) / (zt - zb)

    def h(z):
        lg, ph = raw(z)
        p = c1 * (z - zb) + 0.5 * c2 * (z - zb) ** 2
        return lg - p.real, ph - p.imag

    corners = [complex(a, c), complex(b, c), complex(b, d), complex(a, d)]
    nodes = []
    for s in range(4):
        z0, z1 = corners[s], corners[(s + 1) % 4]
        on = [z for z in known if abs(z.imag - z0.imag) < 1e-12 * abs(z0) and z0.imag == z1.imag
              and min(z0.real, z1.real) < z.real < max(z0.real, z1.real)]
        on.sort(key=lambda z: abs(z - z0))
        nodes.extend([z0] + on)
    vals = [h(z) for z in nodes]
    total, resolved = 0.0, True
    stack = [(nodes[i], nodes[(i + 1) % len(nodes)], vals[i], vals[(i + 1) % len(nodes)], 0)
             for i in range(len(nodes))][::-1]
    while stack:
        z0, z1, v0, v1, depth = stack.pop()
        dph = (v1[1] - v0[1] + np.pi) % (2 * np.pi) - np.pi
        if (abs(dph) > PHASE_STEP or abs(v1[0] - v0[0]) > LOG_STEP) and depth < max_depth:
            zm = 0.5 * (z0 + z1)
            vm = h(zm)
            stack.append((zm, z1, vm, v1, depth + 1))
            stack.append((z0, zm, v0, vm, depth + 1))
            continue
        if abs(dph) > PHASE_STEP:
            resolved = False
        total += dph
    return total / (2 * np.pi), n_pts[0], resolved


def _logdet_of(z, v, lam):
    """(log|det T(z)|, arg det T(z)) back from h's values ``v`` at ``z`` (``lam`` divided out)."""
    dz = z - lam
    return v[0] + np.log(np.abs(dz)).sum(), v[1] + np.angle(dz).sum()


@dataclass(eq=False)
class BandSpectrum(Result):
    """The eigenvalues of a linearised system in a frequency band, certified.

    ``lam`` (1/s) the eigenvalues in the region (growth rate + j angular frequency; sorted by
    imaginary part), ``f_lo``, ``f_hi`` (Hz) the band and ``max_rate`` (1/s) the bound on |Re lam|
    of the region; ``shifts`` (1/s) the Arnoldi shifts and ``radii`` (1/s) the disks they searched;
    ``winding`` the certificate's count of eigenvalues in the region not in ``lam`` (float, ~0),
    ``certified`` (the winding rounds to 0 and every contour step was resolved), ``n_points`` the
    contour points, ``n_total`` the system's eigenvalue count (2N), ``method`` ('arnoldi' or
    'dense'), ``seconds`` the solve's and ``certify_seconds`` the certificate's wall time (s).
    """

    lam: np.ndarray
    f_lo: float
    f_hi: float
    max_rate: float
    shifts: np.ndarray = field(default_factory=lambda: np.zeros(0, complex))
    radii: np.ndarray = field(default_factory=lambda: np.zeros(0))
    winding: float = float("nan")
    certified: bool = False
    n_points: int = 0
    n_total: int = 0
    method: str = "arnoldi"
    seconds: float = 0.0
    certify_seconds: float = 0.0

    kind = "band-spectrum"

    @property
    def frequencies_hz(self) -> np.ndarray:
        """Frequencies (Hz) of the eigenvalues."""
        return self.lam.imag / (2 * np.pi)

    @property
    def unstable(self) -> np.ndarray:
        """The eigenvalues with a positive real part (1/s)."""
        return self.lam[self.lam.real > 0]

    def to_xarray(self):
        import xarray as xr

        return xr.Dataset(
            {"lam": ("mode", self.lam, {"units": "1/s", "long_name": "complex eigenvalue: growth rate + j angular "
                                                                       "frequency"}),
             "shifts": ("shift", self.shifts, {"units": "1/s", "long_name": "Arnoldi shift"}),
             "radii": ("shift", self.radii, {"units": "1/s", "long_name": "radius searched around the shift"})},
            coords={"mode": ("mode", np.arange(self.lam.size), {"units": "1"}),
                    "shift": ("shift", np.arange(self.shifts.size), {"units": "1"})},
            attrs={"f_lo": float(self.f_lo), "f_hi": float(self.f_hi), "max_rate": float(self.max_rate),
                   "winding": float(self.winding), "certified": int(self.certified), "n_points": int(self.n_points),
                   "n_total": int(self.n_total), "method": self.method, "seconds": float(self.seconds),
                   "certify_seconds": float(self.certify_seconds)})

    @classmethod
    def from_xarray(cls, ds):
        a = ds.attrs
        return cls(ds["lam"].values.astype(complex), a["f_lo"], a["f_hi"], a["max_rate"],
                   ds["shifts"].values.astype(complex), ds["radii"].values.astype(float), winding=a["winding"],
                   certified=bool(a["certified"]), n_points=int(a["n_points"]), n_total=int(a["n_total"]),
                   method=a["method"], seconds=a["seconds"], certify_seconds=a["certify_seconds"])

    def summary(self) -> dict:
        un = self.unstable
        return summary_record(
            self.kind,
            {"f_lo": (float(self.f_lo), "Hz"), "f_hi": (float(self.f_hi), "Hz"),
             "max_rate": (float(self.max_rate), "1/s"), "n_total": (int(self.n_total), None)},
            {"n_eigenvalues": (int(self.lam.size), None), "certified": (bool(self.certified), None),
             "winding": (float(self.winding), "1"), "n_unstable": (int(un.size), None),
             "max_real_part": (float(self.lam.real.max()) if self.lam.size else None, "1/s"),
             "n_shifts": (int(self.shifts.size), None), "n_contour_points": (int(self.n_points), None),
             "seconds": (float(self.seconds), "s"), "certify_seconds": (float(self.certify_seconds), "s")},
            details={"frequencies_hz": self.frequencies_hz.tolist(), "real_parts_1_s": self.lam.real.tolist()})


def _factor(Mt, Ct, Kt, sigma):
    """(lu, piv, (log|det|, arg det)) of ``T(sigma)``."""
    lu, piv = sla.lu_factor(sigma * sigma * Mt + sigma * Ct + Kt, check_finite=False)
    d = np.diag(lu)
    return lu, piv, (float(np.log(np.abs(d)).sum()),
                     float(np.angle(d).sum() + np.pi * np.count_nonzero(piv != np.arange(piv.size))))


def _arnoldi(CM, sigma, k, tol, fac):
    """The ``k`` eigenvalues nearest ``sigma`` (1/s) by shift-invert Arnoldi with the LU ``fac``
    of ``T(sigma)`` (:func:`_factor`); ``CM`` the real ``[Ct, Mt]`` (N x 2N, Fortran order)."""
    from scipy.sparse.linalg import ArpackNoConvergence, LinearOperator, eigs

    n = CM.shape[0]
    lu, piv = fac[:2]
    # each product: the real [Ct, Mt] on the real and imaginary parts of [y1; sigma y1 + y2] (no
    # complex copy of them) and a pair of triangular solves with the LU, O(N^2); forming
    # T(sigma)^-1 [Ct + sigma Mt, Mt] once instead is a solve with 2N right-hand sides (O(N^3),
    # several LUs' worth), more than the few dozen products ARPACK asks per shift.
    # The product goes through SciPy's BLAS, as ARPACK and the LU do, not NumPy's: the wheels of
    # NumPy and SciPy each carry an OpenBLAS with its own thread pool, and on a machine with few
    # cores the idle threads of one pool spin while the other works; alternating between them at
    # every product made the analysis about 8x slower on 2 cores (see docs/performance.rst).
    getrs = sla.get_lapack_funcs("getrs", (lu,))
    gemm = sla.get_blas_funcs("gemm", (CM,))
    rhs = np.empty((2 * n, 2), order="F")

    def op(y):
        y = np.asarray(y, complex).ravel()
        y1 = y[:n]
        w = sigma * y1 + y[n:]
        rhs[:n, 0], rhs[:n, 1], rhs[n:, 0], rhs[n:, 1] = y1.real, y1.imag, w.real, w.imag
        p = gemm(-1.0, CM, rhs)   # -(Ct y1 + Mt w), real and imaginary parts as its two columns
        x1, _ = getrs(lu, piv, p[:, 0] + 1j * p[:, 1])
        return np.concatenate([x1, y1 + sigma * x1])

    A = LinearOperator((2 * n, 2 * n), matvec=op, dtype=complex)
    v0 = np.ones(2 * n, complex) / np.sqrt(2 * n) + 1e-3 * np.cos(np.arange(2 * n))  # deterministic
    try:
        theta = eigs(A, k=k, which="LM", tol=tol, v0=v0, return_eigenvectors=False)
    except ArpackNoConvergence as e:  # the converged ones; the certificate judges the rest
        theta = e.eigenvalues
    theta = theta[np.abs(theta) > 0]
    return sigma + 1.0 / theta


def _searched(lam, sigma):
    """Radius (1/s) of the disk around ``sigma`` that the eigenvalues ``lam`` nearest it are all
    of: up to the second farthest (an eigenvalue at the farthest one's distance, its twin across
    the shift's axis, may not have been returned)."""
    dist = np.sort(np.abs(lam - sigma))
    return float(dist[-2]) * (1 - 1e-9) if dist.size > 1 else 0.0


def _divisor(near, region):
    """The points divided out of ``det T`` on the certificate's contour: the eigenvalues found
    (in the region and near it) and their conjugates outside the region (eigenvalues too: the
    matrices are real). Points outside the region do not change the winding; they keep the phase
    of h smooth along the contour (without the conjugates, the hundreds of eigenvalues of the
    lower half-plane add a smooth phase of several pi per side). A conjugate that is itself among
    those found (a shift's disk reaching below the real axis finds both members of a pair) is
    not added again: divided out twice, it would leave a pole of h near the contour."""
    a, b, c, d = region
    conj = np.conj(near)
    out = (conj.real < a) | (conj.real > b) | (conj.imag < c) | (conj.imag > d)
    if near.size:
        order = np.argsort(near.real)
        srt = near[order]
        # nearest found value to each conjugate (sorted by real part: a search over a window)
        pos = np.searchsorted(srt.real, conj.real)
        gap = np.full(conj.size, np.inf)
        for off in range(-8, 9):
            j = np.clip(pos + off, 0, srt.size - 1)
            gap = np.minimum(gap, np.abs(srt[j] - conj))
        out &= gap > 1e-8 * np.abs(conj)
    return np.concatenate([near, conj[out]])


def band_eigenvalues(system, f_lo: float, f_hi: float, *, max_rate: float | None = None, k: int | None = None,
                     tol: float = 1e-10, certify: bool = True, dense_below: int = 40,
                     max_shifts: int = 200, retries: int = 1) -> BandSpectrum:
    """Every eigenvalue of a linearised system in the band [f_lo, f_hi] (Hz), certified.

    Parameters
    ----------
    system : LinearisedSystem or tuple
        The linearised equations (:func:`~fesub.contact.analyses.linearised.linearise`), or the
        matrices (M, C, K) of ``M q'' + C q' + K q = 0``.
    f_lo, f_hi : float
        The band (Hz), ``0 <= f_lo < f_hi``.
    max_rate : float, optional
        Bound on the real part (1/s) of the eigenvalues sought: the region is
        ``|Re lam| <= max_rate`` over the band. Default ``0.1 * 2 pi f_hi`` (damping ratios and
        growth rates up to about 10 %).
    k : int, optional
        Eigenvalues per shift (doubled where a shift's disk is narrower than the region). Default:
        16 at the first shift, then as many as each shift needs to reach the far end of the part
        of the band left (at least 16, at most :data:`K_MAX`): see the module docstring.
    tol : float
        ARPACK's relative tolerance on the Ritz values (dimensionless).
    certify : bool
        Count the eigenvalues in the region by the argument principle (:func:`contour_count`);
        without it ``certified`` is False and ``winding`` NaN.
    dense_below : int
        Systems of fewer first-order coordinates (2N) are solved by a dense eig.
    max_shifts : int
        Shifts at most (the certificate tells when they did not cover the band).
    retries : int
        Times the search is repeated with ``k`` doubled when the certificate fails (more
        eigenvalues found near the region: the contour's steps become smoother); the last
        attempt is returned.

    Returns
    -------
    BandSpectrum
    """
    f_lo = check_positive("f_lo (Hz)", f_lo, strict=False)
    f_hi = check_positive("f_hi (Hz)", f_hi)
    if f_hi <= f_lo:
        raise ParameterError(f"the band needs f_lo < f_hi (Hz), got [{f_lo}, {f_hi}]")
    w1, w2 = 2 * np.pi * f_lo, 2 * np.pi * f_hi
    rho = 0.1 * w2 if max_rate is None else check_positive("max_rate (1/s)", max_rate)
    Mt, Ct, Kt = projected_matrices(system)
    grow = k is None
    k = 16 if grow else check_count("k", k, lo=1)
    tol = check_positive("tol", tol)
    retries = check_count("retries", retries, lo=0)
    t0 = time.perf_counter()
    spent = 0.0
    for attempt in range(retries + 1):
        res = _solve(Mt, Ct, Kt, f_lo, f_hi, w1, w2, rho, k * 2 ** attempt, tol, certify, dense_below, max_shifts,
                     grow)
        spent += res.certify_seconds
        if res.certified or not certify:
            break
    res.certify_seconds = spent
    res.seconds = time.perf_counter() - t0 - spent
    return res


def _solve(Mt, Ct, Kt, f_lo, f_hi, w1, w2, rho, k, tol, certify, dense_below, max_shifts, grow=False):
    n = Mt.shape[0]
    t0 = time.perf_counter()
    shifts, radii, found, known = [], [], [], {}
    if 2 * n < max(dense_below, k + 3):
        lam_all = sla.eigvals(first_order_matrix(Mt, Ct, Kt), check_finite=False)
        method = "dense"
        near = lam_all
    else:
        method = "arnoldi"
        CM = np.asfortranarray(np.hstack([Ct, Mt]))   # the product's matrix, once for every shift
        kk = min(k, 2 * n - 2)
        todo = [(w1, w2)]
        starts = [w1, w2]   # the band's ends first: their LUs are points of the certificate's contour
        while todo and len(shifts) < max_shifts:
            a, b = todo.pop()
            sigma = 1j * (starts.pop(0) if starts else 0.5 * (a + b))
            if grow and shifts and radii[-1] > 0:
                # sized from the last disk: its eigenvalues per unit radius, times the radius
                # that reaches the far end of this part of the band (one shift where the last
                # one fell short by a little, not two)
                span = max(abs(b - sigma.imag), abs(sigma.imag - a))
                need = 1.25 * found[-1].size / radii[-1] * np.hypot(span, rho)
                kk = int(min(max(np.ceil(need) + 4, k), K_MAX, 2 * n - 2))
            fac = _factor(Mt, Ct, Kt, sigma)
            lam = _arnoldi(CM, sigma, kk, tol, fac)
            r = _searched(lam, sigma)
            ld = fac[2]
            shifts.append(sigma)
            radii.append(r)
            found.append(lam)
            known[sigma] = ld
            w = np.sqrt(max(r * r - rho * rho, 0.0))
            lo, hi = sigma.imag - w, sigma.imag + w
            if w <= 0.05 * r:   # a disk hardly wider than the region: more eigenvalues per shift
                if kk >= 2 * n - 2:
                    break
                kk = min(2 * kk, 2 * n - 2)
            if lo > a:
                todo.append((a, min(lo, b)))
            if hi < b:
                todo.append((max(hi, a), b))
        sh = np.array(shifts)
        lam_all = np.concatenate(found) if found else np.zeros(0, complex)
        own = np.concatenate([np.full(f.size, j) for j, f in enumerate(found)]) if found else np.zeros(0, int)
        # each eigenvalue kept from the nearest shift whose disk holds it; one outside every disk
        # kept once (the same value from another shift dropped)
        dist = np.abs(lam_all[:, None] - sh[None, :])
        inside = dist < np.array(radii)[None, :]
        dist[~inside] = np.inf
        held = inside.any(axis=1)
        keep = held & (np.argmin(dist, axis=1) == own)
        for i in np.flatnonzero(~held):
            same = (~held[:i]) & keep[:i] & (own[:i] != own[i]) & (np.abs(lam_all[:i] - lam_all[i])
                                                                  <= 1e-8 * abs(lam_all[i]))
            keep[i] = not same.any()
        near = lam_all[keep]
    region = (-rho, rho, w1, w2)
    sel = (np.abs(near.real) <= rho) & (near.imag >= w1) & (near.imag <= w2)
    lam = near[sel]
    lam = lam[np.lexsort((lam.real, lam.imag))]
    seconds = time.perf_counter() - t0
    winding, n_pts, certified, cs = float("nan"), 0, False, 0.0
    if certify:
        t1 = time.perf_counter()
        winding, n_pts, resolved = contour_count(Mt, Ct, Kt, _divisor(near, region),
                                                 region, known=known)
        certified = bool(resolved and abs(winding) < WINDING_TOL)
        cs = time.perf_counter() - t1
    return BandSpectrum(lam, float(f_lo), float(f_hi), float(rho), np.array(shifts, complex), np.array(radii, float),
                        winding=float(winding), certified=certified, n_points=int(n_pts), n_total=2 * n,
                        method=method, seconds=float(seconds), certify_seconds=float(cs))
