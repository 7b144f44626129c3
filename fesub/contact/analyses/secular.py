"""Eigenvalues of the sliding contact as the roots of a secular function (undeformed geometry).

In the modal coordinates eta of each substructure (unit modal mass, K = diag(w_k^2) and, for
Rayleigh or any damping the undamped modes diagonalise, C = diag(d_k)), the contact at position s
couples the modes through one constraint row c = B_C V and one force row e = B_E V (V the
block-diagonal mode shapes, B_E = b_n + mu b_t and B_C = b_n the rows of
:mod:`fesub.contact.geometry`). The dual form of the eigenproblem,

    (lam^2 + d_k lam + w_k^2) eta_k = -e_k Lambda,      sum_k c_k eta_k = 0,

is an exact change of coordinates of the primal model L_E' (lam^2 M + lam C + K) L_C of
:mod:`fesub.contact.eigen` when every mode is kept. Eliminating eta, its finite eigenvalues are the
roots of the secular function

    g(lam) = sum_k r_k / p_k(lam),   r_k = c_k e_k,   p_k(lam) = (lam - a_k)(lam - b_k),

the numerator N(lam) = g(lam) prod_k p_k(lam) = sum_k r_k prod_{j != k} p_j(lam), a polynomial of
degree 2(m - 1) over the m coupled modes, with leading coefficient sum_k r_k = B_C M^-1 B_E'. A
mode with r_k = 0 (or whose coupling moves its eigenvalues by less than round-off) keeps its own
two eigenvalues a_k, b_k and is deflated; two modes with the same poles share one pole of g and
one of them is deflated. The n - 1 DOF primal model has 2(n - 1) eigenvalues: 2(m - 1) roots and
2(n - m) deflated poles. The coordinates are those of the primal path: the free partition of the
slider (its prescribed DOFs held) and the whole target; a rigid-body mode of the free slider
(w = 0) is a pole pair at 0 and -d_k like any other mode (a real pair), and ``sign`` and
``modal_cutoff_hz`` reach the rows and the modes exactly as in
:func:`fesub.contact.eigen.coupled_matrices`.

Method (the choices and why):

* **Aberth-Ehrlich iteration** on N, all roots at once (cubic convergence for simple roots). The
  Newton ratio N/N' comes from the poles in O(m) per root, N'/N = g'/g + sum_k p_k'/p_k, with
  p_k in factored form (accurate near its poles), so a sweep costs O(m^2) and never forms the
  ill-scaled coefficients of N.
* **Warm start** from the roots at the previous position (or at the same position for another mu):
  most roots move little between neighbouring positions (on the 200-position benchmark about
  half of them are done after three sweeps, the last few after 15 to 30). A linear
  extrapolation from the last two positions was tried and converged more slowly (the rows are
  only piecewise smooth in the position: kinks at the target's nodes). **Cold start** (first
  position, or a warm start that fails): the points halfway between consecutive poles, where the
  roots lie at mu = 0 without damping (they interlace the w_k^2).
* **Conjugate symmetry**: N has real coefficients, so a warm start iterates on the upper half
  and the real roots only and mirrors the rest (half the work). A pair that must split into two
  real roots cannot do so in this form: the certificate then fails and the cold start (which
  is not symmetric) takes over.
* **Certificate** of every answer (no eigenvalue lost or doubled): the Weierstrass corrections
  W_i = N(z_i) / (lead prod_{j != i} (z_i - z_j)) give disks |z - z_i| <= D |W_i| (D the degree)
  whose union holds every root, each connected component as many roots as disks (Braess-Hadeler,
  Carstensen). Disjoint disks thus mean one root in each; their radii bound the error. An answer
  is accepted when the disks are pairwise disjoint and every radius is below ``rtol`` |z_i|.
* **Dense eig** when the certificate fails after a cold start (two roots closer than their
  error bounds: a coalescence at the flutter onset, or poles that nearly coincide), or when the
  leading coefficient nearly vanishes (a root near infinity: the primal mass matrix is nearly
  singular). It is the eig of the same modal primal matrices; the solver counts each case. No
  periodic eig is run: the certificate checks every position.

Units: eigenvalues and poles in 1/s (lam = growth rate + j angular frequency), residues r_k in
1/kg (mass-normalised modes, dimensionless rows).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg as sla

from ..._backend import kernels
from ...errors import ModelError, ParameterError
from ..geometry import coupling_rows, segment_at_x
from .primal import project_rows

__all__ = ["SecularFunction", "secular_function", "secular_from_modes", "secular_roots", "SecularSolver",
           "modal_data", "contact_rows", "lowest_oscillating", "first_order_matrix", "resolve_method"]

EPS = np.finfo(float).eps
#: relative error bound (certificate radius / |lam|) below which a root is accepted
RTOL = 1e-10
#: relative step below which a root stops moving (its error then ~ the step cubed)
STEP_TOL = 1e-9


def contact_rows(system, s: float, mu: float, sign: float = 1.0):
    """Rows (B_E, B_C) over [q1_free; q2] at contact position ``s`` (m) in the undeformed geometry.

    Parameters
    ----------
    system : SlidingContactSystem
    s : float
        Contact position, x of the contact point on the target (m).
    mu : float
        Friction coefficient (dimensionless, >= 0).
    sign : float
        Sign of the slave's tangential velocity relative to the target (dimensionless).

    Returns
    -------
    BE, BC : (n,) arrays, dimensionless.
    """
    seg, alpha = segment_at_x(system.XT, system.segs, s)
    j1, j2 = system.segs[seg]
    d = system.XT[j2] - system.XT[j1]
    bE, bC = coupling_rows(alpha, np.arctan2(d[1], d[0]), mu, sign)
    return system._global_rows(seg, bE, bC)


def first_order_matrix(Mt, Ct, Kt) -> np.ndarray:
    """The first-order matrix [[0, I], [-Mt^-1 Kt, -Mt^-1 Ct]] (1/s blocks) of Mt, Ct, Kt.

    Parameters
    ----------
    Mt, Ct, Kt : (m, m) arrays
        Mass (kg), damping (N s/m) and stiffness (N/m) matrices, not necessarily symmetric.

    Returns
    -------
    A : (2m, 2m) array (1/s, 1/s^2 blocks).
    """
    m = Mt.shape[0]
    MiK, MiC = np.split(np.linalg.solve(Mt, np.hstack([Kt, Ct])), 2, axis=1)
    A = np.zeros((2 * m, 2 * m))
    A[:m, m:] = np.eye(m)
    A[m:, :m] = -MiK
    A[m:, m:] = -MiC
    return A


def lowest_oscillating(lam, n: int) -> np.ndarray:
    """Indices of the ``n`` lowest-frequency oscillating eigenvalues of the set ``lam`` (1/s):
    imaginary part above 1e-6 of the largest modulus, sorted by imaginary part.

    Parameters
    ----------
    lam : (N,) complex array
        Eigenvalues (1/s).
    n : int
        How many (dimensionless count).

    Returns
    -------
    idx : int array of at most ``n`` indices into ``lam``.
    """
    lam = np.asarray(lam)
    idx = np.flatnonzero(lam.imag > 1e-6 * np.abs(lam).max())
    return idx[np.argsort(lam.imag[idx], kind="stable")][:n]


# ----------------------------------------------------------------------------- modal data
_MODAL: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _body_modes(K, M, C):
    """(w^2, d, Phi) of one substructure: undamped modes and the diagonal of Phi' C Phi; a
    ModelError when C is not diagonal in them (non-proportional damping)."""
    w2, Phi = sla.eigh(K, M)
    Cm = Phi.T @ C @ Phi
    d = np.diag(Cm).copy()
    off = Cm - np.diag(d)
    scale = max(np.abs(Cm).max(), EPS)
    if np.abs(off).max() > 1e-8 * scale:
        raise ModelError("the damping is not diagonal in the undamped modes (not proportional): "
                         "use method='eig'")
    return w2, d, Phi


def modal_data(system, modal_cutoff_hz: float | None = None):
    """Modal data of both substructures: (w^2 in rad^2/s^2, d in 1/s, Phi1, Phi2), cached per system.

    Parameters
    ----------
    system : SlidingContactSystem
        Its free partitions (M1, C1, K1) and (M2, C2, K2).
    modal_cutoff_hz : float, optional
        ``None``: every mode of the reduced substructures (an exact change of coordinates). A
        frequency (Hz): the system's modes up to it with Rayleigh damping, as
        :func:`fesub.contact.eigen.coupled_matrices` uses them.

    Returns
    -------
    w2 : (m,) array (rad^2/s^2); d : (m,) array (1/s); Phi1, Phi2 : mode shapes (1/sqrt(kg)).
    """
    cache = _MODAL.setdefault(system, {})
    key = None if modal_cutoff_hz is None else float(modal_cutoff_hz)
    if key not in cache:
        if key is None:
            w1, d1, P1 = _body_modes(system.K1, system.M1, system.C1)
            w2, d2, P2 = _body_modes(system.K2, system.M2, system.C2)
        else:
            wc2 = (2 * np.pi * key) ** 2
            k1, k2 = system.w2_1 <= wc2, system.w2_2 <= wc2
            w1, w2 = system.w2_1[k1], system.w2_2[k2]
            P1, P2 = system.Phi1[:, k1], system.Phi2[:, k2]
            d1, d2 = system.alpha1 + system.beta1 * w1, system.alpha2 + system.beta2 * w2
        cache[key] = (np.r_[w1, w2], np.r_[d1, d2], P1, P2)
    return cache[key]


def _poles(w2, d):
    """Roots (a, b) of lam^2 + d lam + w^2 (1/s), a with the non-negative imaginary part; real
    pairs by the cancellation-free formula (a = w^2 / q, b = q)."""
    disc = 0.25 * d * d - w2
    osc = disc < 0
    root = np.sqrt(np.abs(disc))
    a = np.where(osc, -0.5 * d + 1j * root, 0j)
    b = np.conj(a)
    q = -(0.5 * d + np.copysign(root, d))
    real = ~osc
    with np.errstate(divide="ignore", invalid="ignore"):
        a[real] = np.where(q[real] != 0, w2[real] / q[real], 0.0)
    b[real] = q[real]
    return a, b


# ----------------------------------------------------------------------------- the function
@dataclass
class SecularFunction:
    """g(lam) = sum_k r_k / ((lam - a_k)(lam - b_k)) of the coupled modes, and the eigenvalues of
    the deflated ones.

    Attributes: ``r`` residues (1/kg), ``a``, ``b`` poles (1/s), ``deflated`` eigenvalues of the
    uncoupled modes (1/s), ``n_modes`` the number of modes of the primal model (n - 1, the number
    of eigenvalue pairs), ``order`` the frequency order of the coupled modes (ascending |a_k|).
    """

    r: np.ndarray
    a: np.ndarray
    b: np.ndarray
    deflated: np.ndarray
    n_modes: int
    order: np.ndarray = field(repr=False, default=None)

    @property
    def degree(self) -> int:
        """Number of roots, 2(m - 1) for m coupled modes (dimensionless)."""
        return max(2 * self.r.size - 2, 0)

    @property
    def lead(self) -> float:
        """Leading coefficient of the numerator N (1/kg): sum_k r_k."""
        return float(self.r.sum())

    def __call__(self, lam):
        """g at ``lam`` (complex, 1/s); returns s^2/kg."""
        z = np.asarray(lam, complex)[..., None]
        return (self.r / ((z - self.a) * (z - self.b))).sum(-1)

    def start(self) -> np.ndarray:
        """Cold start (1/s): the points halfway between consecutive poles of the upper and of the
        lower family, sorted by frequency (where the undamped frictionless roots lie)."""
        a, b = self.a[self.order], self.b[self.order]
        z = np.r_[0.5 * (a[1:] + a[:-1]), 0.5 * (b[1:] + b[:-1])]
        return z * (1 + 1e-3j)  # off the real axis and off conjugate symmetry


def secular_function(system, s: float, mu: float, sign: float = 1.0, *,
                     modal_cutoff_hz: float | None = None) -> SecularFunction:
    """The secular function of the contact at position ``s`` (undeformed geometry).

    Parameters
    ----------
    system : SlidingContactSystem
    s : float
        Contact position (m).
    mu : float
        Friction coefficient (dimensionless, >= 0).
    sign : float
        Sign of the slave's tangential velocity relative to the target (dimensionless).
    modal_cutoff_hz : float, optional
        As in :func:`modal_data` (Hz); ``None`` keeps every mode (exact).

    Returns
    -------
    SecularFunction
    """
    w2, d, P1, P2 = modal_data(system, modal_cutoff_hz)
    BE, BC = contact_rows(system, s, mu, sign)
    n1 = P1.shape[0]
    i1 = np.flatnonzero((BE[:n1] != 0) | (BC[:n1] != 0))
    i2 = np.flatnonzero((BE[n1:] != 0) | (BC[n1:] != 0))
    c = np.r_[BC[:n1][i1] @ P1[i1], BC[n1:][i2] @ P2[i2]]
    e = np.r_[BE[:n1][i1] @ P1[i1], BE[n1:][i2] @ P2[i2]]
    return secular_from_modes(c * e, w2, d)


def secular_from_modes(r, w2, d) -> SecularFunction:
    """The secular function of modes with residues ``r``, squared frequencies ``w2`` and damping
    ``d``: modes whose poles coincide (to round-off) merged, uncoupled modes deflated.

    Parameters
    ----------
    r : (m,) array
        Residues r_k = c_k e_k (1/kg).
    w2 : (m,) array
        Squared undamped frequencies (rad^2/s^2).
    d : (m,) array
        Modal damping d_k = 2 zeta_k w_k (1/s).

    Returns
    -------
    SecularFunction
    """
    r, w2, d = (np.asarray(x, float) for x in (r, w2, d))
    a, b = _poles(w2, d)
    order = np.lexsort((d, w2))
    keep = np.ones(r.size, bool)
    r = r.astype(float).copy()
    # modes with the same poles (to round-off): one pole of g, the other mode deflated
    for i, j in zip(order[:-1], order[1:]):
        if abs(a[i] - a[j]) <= 4 * EPS * abs(a[i]) and abs(b[i] - b[j]) <= 4 * EPS * abs(b[i]):
            r[j] += r[i]
            keep[i] = False
    # uncoupled modes: a zero residue, or one whose first-order shift of its poles,
    # -r_k / (p_k'(pole) g_rest(pole)), is below round-off of the pole
    big = np.abs(r[keep]).max() if keep.any() else 0.0
    for k in np.flatnonzero(keep & (np.abs(r) <= 1e-6 * big)):
        if r[k] == 0:
            keep[k] = False
            continue
        rest = keep.copy()
        rest[k] = False
        ok = a[k] != b[k]
        for pole, dp in ((a[k], a[k] - b[k]), (b[k], b[k] - a[k])):
            grest = (r[rest] / ((pole - a[rest]) * (pole - b[rest]))).sum()
            ok = ok and abs(r[k]) <= EPS * abs(pole) * abs(dp * grest)
        keep[k] = not ok
    dfl = np.r_[a[~keep], b[~keep]]
    ka = np.flatnonzero(keep)
    return SecularFunction(r[ka], a[ka], b[ka], dfl, int(r.size - 1), order=np.lexsort((d[ka], w2[ka])))


# ----------------------------------------------------------------------------- the roots
def _symmetric(z):
    """``z`` as [upper half; real; conjugates of the upper half] (a conjugate-symmetric set) and the
    number of upper roots, or (None, 0) when ``z`` is not such a set to 1e-8 of its scale."""
    scale = np.abs(z).max()
    tiny = 1e-13 * scale
    up, lo = z[z.imag > tiny], z[z.imag < -tiny]
    if up.size != lo.size:
        return None, 0
    if up.size:  # each upper root has its own mirror image among the lower ones
        dist = np.abs(up[:, None] - np.conj(lo)[None, :])
        j = dist.argmin(axis=1)
        if np.unique(j).size != up.size or dist[np.arange(up.size), j].max() > 1e-8 * scale:
            return None, 0
    re = z[np.abs(z.imag) <= tiny].real
    return np.r_[up, re, np.conj(up)].astype(complex), up.size


def secular_roots(f: SecularFunction, start=None, *, max_iter: int = 60, rtol: float = RTOL,
                  symmetric: bool = True):
    """Every root of the secular function ``f`` by the Aberth-Ehrlich iteration, certified.

    Parameters
    ----------
    f : SecularFunction
    start : (degree,) complex array, optional
        Initial roots (1/s), e.g. those at a neighbouring position; ``None`` (or the wrong size)
        for the cold start :meth:`SecularFunction.start`.
    max_iter : int
        Cap on the sweeps (dimensionless count).
    rtol : float
        Accepted relative error bound (dimensionless): certificate radius <= rtol |z_i| (plus
        rtol times the largest |pole| for a root at 0).
    symmetric : bool
        The numerator has real coefficients, so its roots are real or conjugate pairs: when a
        ``start`` is given and is such a set, iterate on the upper half and the real roots only (half the
        work), the others their mirror images. A conjugate pair cannot split into two real roots
        this way: the certificate then fails, and the caller starts again without it.

    Returns
    -------
    z : (degree,) complex array (1/s), the roots (in the order of ``start`` when not symmetric;
        upper half, real roots, lower half when symmetric).
    radius : (degree,) array (1/s): error bound of each root (inf where not certified).
    ok : bool, True when the disks are disjoint and every radius below the tolerance.
    sweeps : int, the number of sweeps done.
    """
    ker = kernels("aberth")
    D = f.degree
    if D == 0:
        return np.zeros(0, complex), np.zeros(0), True, 0
    warm = start is not None and np.size(start) == D
    z = np.array(start if warm else f.start(), complex)
    symmetric = symmetric and warm  # the cold start is not conjugate-symmetric
    nu = 0
    if symmetric:
        z, nu = _symmetric(z)
        if z is None:
            return np.zeros(D, complex), np.full(D, np.inf), False, 0
    own = D - nu if symmetric else D  # the roots iterated: the upper half and the real ones
    r, a, b = (np.ascontiguousarray(x) for x in (f.r, f.a, f.b))
    floor = rtol * np.abs(np.r_[a, b]).max()
    step, rad = np.zeros(D, complex), np.full(D, np.inf)
    it, ok = 0, False
    for _ in range(2):  # a failed certificate: once more with every root free
        active = np.arange(own, dtype=np.int64)
        while active.size and it < max_iter:
            it += 1
            if ker.aberth_steps(z, active, r, a, b, step):
                return z, np.full(D, np.inf), False, it
            za = z[active]
            st = step[active]
            z[active] = za - st
            if symmetric:
                z.imag[nu:own] = 0.0
                z[own:] = np.conj(z[:nu])
            # cubic convergence: after a step below STEP_TOL |z| the error is far below round-off
            active = active[np.abs(st) > STEP_TOL * np.abs(za) + 1e-3 * floor]
        ker.inclusion_radii(z, np.arange(own, dtype=np.int64), r, a, b, f.lead, rad)
        rad[own:] = rad[:D - own]
        ok = bool(np.all(rad <= rtol * np.abs(z) + floor)) and ker.disjoint(z, rad)
        if ok or it >= max_iter:
            break
    return z, rad.copy(), ok, it


def _dense_eigenvalues(w2, d, c, e) -> np.ndarray:
    """All eigenvalues (1/s) of the primal model by a dense eig in modal coordinates."""
    M, C, K = np.eye(w2.size), np.diag(d), np.diag(w2)
    A = first_order_matrix(project_rows(M, e, c), project_rows(C, e, c), project_rows(K, e, c))
    return sla.eigvals(A, overwrite_a=True, check_finite=False)


def resolve_method(method: str, n_basis, system, modal_cutoff_hz=None) -> str:
    """'secular' or 'eig': the solver the eigenvalue analyses use for ``method``.

    Parameters
    ----------
    method : {'auto', 'secular', 'eig'}
        'auto' takes the secular roots where they are exact and complete (the whole reduced
        model: no Ritz basis, or one of every mode; damping diagonal in the undamped modes of each
        substructure), the dense eig elsewhere. 'secular' refuses a Ritz basis that leaves modes
        out and non-proportional damping.
    n_basis : int or None
        The Ritz basis asked for (dimensionless count of modes).
    system : SlidingContactSystem
    modal_cutoff_hz : float, optional
        Substructure cut-off (Hz), as in :func:`modal_data`.

    Returns
    -------
    str
    """
    if method not in ("auto", "secular", "eig"):
        raise ParameterError(f"method must be 'auto', 'secular' or 'eig', got {method!r}")
    if method == "eig":
        return "eig"
    try:
        n_modes = modal_data(system, modal_cutoff_hz)[0].size - 1
    except (ModelError, AttributeError, TypeError):
        if method == "secular":
            raise
        return "eig"
    if n_basis is not None and n_basis < n_modes:  # a Ritz basis that leaves modes out
        if method == "secular":
            raise ParameterError("method='secular' examines the whole reduced model: n_basis must be "
                                 f"None or >= {n_modes}, got {n_basis}")
        return "eig"
    return "secular"


class SecularSolver:
    """Eigenvalues at successive contact positions by the secular roots, warm-started.

    Called like the dense per-position solve of :mod:`fesub.contact.eigen`:
    ``solver(system, s, mu, n, sign=1.0, modal_cutoff_hz=None)`` returns (the ``n`` lowest
    oscillating eigenvalues (1/s), None, the completeness limit (Hz), the number of modes).
    Each call starts from the roots found last at the same position (another mu), else from the
    last roots found. ``counts`` records how each position was solved: 'warm', 'cold' (cold start
    after a failed warm one) and 'eig' (dense fallback), and ``sweeps`` the total of sweeps.

    Parameters
    ----------
    max_iter : int
        Cap on the sweeps of one root finding (dimensionless count).
    rtol : float
        Relative error bound accepted (dimensionless), see :func:`secular_roots`.
    """

    def __init__(self, *, max_iter: int = 60, rtol: float = RTOL):
        if not 0 < rtol < 1:
            raise ParameterError(f"rtol must be in (0, 1), got {rtol!r}")
        self.max_iter, self.rtol = int(max_iter), float(rtol)
        self.counts = {"warm": 0, "cold": 0, "eig": 0}
        self.sweeps = 0
        self._last = None
        self._at: dict = {}

    def all_eigenvalues(self, system, s, mu, sign=1.0, *, modal_cutoff_hz=None) -> np.ndarray:
        """Every eigenvalue (1/s) of the primal model at position ``s`` (m), friction ``mu``:
        the certified roots followed by the deflated poles."""
        w2, d, P1, P2 = modal_data(system, modal_cutoff_hz)
        f = secular_function(system, s, mu, sign, modal_cutoff_hz=modal_cutoff_hz)
        key = (float(s), float(sign), modal_cutoff_hz)
        start = self._at.get(key, self._last)
        z, ok = None, False
        if abs(f.lead) > 1e-12 * np.abs(f.r).sum():
            if start is not None and np.size(start) == f.degree:
                z, _, ok, k = secular_roots(f, start, max_iter=self.max_iter, rtol=self.rtol)
                self.sweeps += k
                kind = "warm"
            if not ok:
                z, _, ok, k = secular_roots(f, None, max_iter=self.max_iter, rtol=self.rtol)
                self.sweeps += k
                kind = "cold"
        if not ok:
            BE, BC = contact_rows(system, s, mu, sign)
            n1 = P1.shape[0]
            c = np.r_[BC[:n1] @ P1, BC[n1:] @ P2]
            e = np.r_[BE[:n1] @ P1, BE[n1:] @ P2]
            lam = _dense_eigenvalues(w2, d, c, e)
            self.counts["eig"] += 1
            return lam
        self.counts[kind] += 1
        self._at[key] = z
        self._last = z
        return np.r_[z, f.deflated]

    def __call__(self, system, s, mu, n, sign=1.0, *, return_modes=False, modal_cutoff_hz=None,
                 n_basis=None):
        """The ``n`` lowest-frequency oscillating eigenvalues (1/s) at position ``s`` (m), friction
        ``mu``, as (lam, None, completeness limit in Hz, number of modes); ``return_modes`` and a
        Ritz basis ``n_basis`` smaller than the model are refused (ParameterError)."""
        if return_modes:
            raise ParameterError("the secular method gives eigenvalues, no mode shapes: use method='eig'")
        lam = self.all_eigenvalues(system, s, mu, sign, modal_cutoff_hz=modal_cutoff_hz)
        if n_basis is not None and n_basis < lam.size // 2:
            raise ParameterError("the secular method examines the whole reduced model: n_basis must be "
                                 f"None or >= {lam.size // 2}, got {n_basis}")
        complete = float("inf") if modal_cutoff_hz is None else float(modal_cutoff_hz)
        return lam[lowest_oscillating(lam, n)], None, complete, (lam.size // 2)
