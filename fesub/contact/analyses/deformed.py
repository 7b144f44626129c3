"""Stability of the deformed sliding state: the contact rows linearised about the preloaded state.

The complex eigenvalue analysis of :mod:`fesub.contact.eigen` takes the contact rows B_E, B_C from
the undeformed geometry (the paper's linear analysis). The transient takes them from the deformed
one: the contact point alpha and the segment angle gamma follow the displacements. Here the
forward-increment dual equations are linearised about the quasi-static sliding state itself.

Sliding state at a contact position s (the slider translated rigidly so that its slave C would sit
at x = s on the undeformed target, as at time t = (s - X_C)/vx of a transient), unknowns the
displacements u = [w1; q2] (slider relative to its rigid motion, target) and the multiplier lambda:

    K u + B_E(u)' lambda = f,    g(u) = 0,

f the loads and the damping drag of the rigid motion, g(u) = B_C(u) . [T1, T2, P] = -gap the
signed distance of the slave from the deformed segment (the row the transient closes), B_E(u) the
rows of eq. (42) at the deformed alpha(u), gamma(u). Solved by Newton's method (:func:`sliding_state`).

Linearised about it, with u = u0 + du, lambda = lambda0 + dl:

    M du'' + C du' + (K + K_g) du + B_E' dl = 0,    grad g . du = 0,

K_g = lambda0 dB_E'/du, the geometric stiffness of the contact: the friction and normal forces
turn with the deformed target slope and move with the contact point (not symmetric). At the state
(gap = 0) grad g is B_C at the deformed alpha, gamma. The complex eigenvalues follow from the primal
form L_E' (.) L_C as in :mod:`fesub.contact.eigen` (:func:`deformed_eigenvalues`);
:func:`compare_geometries` sets them beside the undeformed ones along the sliding path.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla

from ...errors import ConvergenceError, ModelError, ParameterError, check_count, check_positive
from ...io import Result, summary_record
from .spectrum import EigenLoci, as_position, as_positions, complex_eigenvalues, first_order_eigs, track
from ..geometry import coupling_rows
from .primal import null_space_row, project_rows

__all__ = ["SlidingState", "frame_gradients", "local_contact", "sliding_state", "contact_residual", "contact_jacobian",
           "deformed_eigenvalues", "GeometryComparison", "compare_geometries", "spectrum_solver", "join_loci"]


# ------------------------------------------------------------------------------- local rows
def frame_gradients(x):
    """Contact point and segment angle of a slave on a segment, with their gradients, from the six
    coordinates ``x = [T1x, T1y, T2x, T2y, Px, Py]`` (m).

    Returns
    -------
    alpha : contact point (0 at T1, 1 at T2), ``(P - T1) . d / |d|^2`` with ``d = T2 - T1``.
    gamma : angle of ``d`` with the x axis (rad).
    da : (6,) gradient of alpha (1/m).
    dgam : (6,) gradient of gamma (rad/m).
    """
    x = np.asarray(x, float)
    T1, T2, P = x[0:2], x[2:4], x[4:6]
    d = T2 - T1
    v = P - T1
    l2 = d @ d
    alpha = (v @ d) / l2
    gamma = np.arctan2(d[1], d[0])
    da_dT2 = v / l2 - 2 * alpha * d / l2
    da_dP = d / l2
    da = np.r_[-da_dT2 - da_dP, da_dT2, da_dP]
    perp = np.array([-d[1], d[0]]) / l2
    dgam = np.r_[-perp, perp, 0.0, 0.0]
    return alpha, gamma, da, dgam


def local_contact(x, mu: float, sign: float = 1.0):
    """Contact rows and their derivatives for one slave on one segment, from the six coordinates
    ``x = [T1x, T1y, T2x, T2y, Px, Py]`` (m) of the deformed segment ends and the slave.

    Returns
    -------
    alpha, gamma : contact point (0 at T1, 1 at T2) and segment angle (rad), eqs. (34)-(37).
    bE : (6,) row of eq. (42) at (alpha, gamma).
    dbE : (6, 6) derivative d bE_i / d x_j (1/m).
    g : float, -gap (m): B_C . x with B_C of eq. (44) (the gap, independent of alpha).
    dg : (6,) gradient of g (1); equal to B_C where gap = 0.
    """
    x = np.asarray(x, float)
    T1, T2, P = x[0:2], x[2:4], x[4:6]
    d = T2 - T1
    v = P - T1
    l2 = d @ d
    l = np.sqrt(l2)
    alpha, gamma, da, dgam = frame_gradients(x)
    bE, bC = coupling_rows(alpha, gamma, mu, sign)
    s, c = np.sin(gamma), np.cos(gamma)
    G1, G2 = bE[4:] * -1.0
    # d(G1, G2)/d gamma
    dG1, dG2 = -c + sign * mu * s, -s - sign * mu * c
    dbE_da = np.array([-G1, -G2, G1, G2, 0.0, 0.0])
    a = alpha
    dbE_dg = np.array([(1 - a) * dG1, (1 - a) * dG2, a * dG1, a * dG2, -dG1, -dG2])
    dbE = np.outer(dbE_da, da) + np.outer(dbE_dg, dgam)
    # g = -gap, gap = (d x v) / l
    cross = d[0] * v[1] - d[1] * v[0]
    g = -cross / l
    n = np.array([-d[1], d[0]]) / l
    dgap_dT2 = np.array([v[1], -v[0]]) / l - cross * d / (l2 * l)
    dg = -np.r_[-n - dgap_dT2, dgap_dT2, n]
    return alpha, gamma, bE, dbE, g, dg


# ------------------------------------------------------------------------------- global assembly
def _dof_map(system, seg):
    """Global rows over [q1_free; q2] of the six local coordinates of segment ``seg`` and the
    slave (-1 where a target DOF is clamped)."""
    n1 = system.K1.shape[0]
    j1, j2 = system.segs[seg]
    rows = [system.T_rows[j1, 0], system.T_rows[j1, 1], system.T_rows[j2, 0], system.T_rows[j2, 1]]
    return np.array([n1 + r if r >= 0 else -1 for r in rows] + [int(system.iC[0]), int(system.iC[1])])


def _local_x(system, u, seg, shift):
    """The six coordinates [T1, T2, P] (m) of segment ``seg`` and the slave in configuration u, the
    slider translated by ``shift`` (m) along x."""
    n1 = system.K1.shape[0]
    pos = system.target_positions(u[n1:])
    j1, j2 = system.segs[seg]
    P = system.X_C + np.array([shift, 0.0]) + u[system.iC]
    return np.r_[pos[j1], pos[j2], P]


def contact_residual(system, u, lam, seg, mu, sign=1.0, shift=0.0):
    """Contact force B_E(u)' lambda (N, over [q1_free; q2]) and constraint g(u) = -gap (m) on
    segment ``seg``, the slider translated by ``shift`` (m): the nonlinear terms of the sliding
    equations."""
    idx = _dof_map(system, seg)
    _, _, bE, _, g, _ = local_contact(_local_x(system, u, seg, shift), mu, sign)
    F = np.zeros(u.size)
    ok = idx >= 0
    np.add.at(F, idx[ok], bE[ok] * lam)
    return F, g


def contact_jacobian(system, u, lam, seg, mu, sign=1.0, shift=0.0):
    """Derivatives of :func:`contact_residual`: the geometric stiffness K_g = lambda dB_E'/du (N/m,
    n x n, not symmetric), the row B_E (1) = dF/dlambda, and grad g (1), over [q1_free; q2]."""
    n = u.size
    idx = _dof_map(system, seg)
    _, _, bE, dbE, _, dg = local_contact(_local_x(system, u, seg, shift), mu, sign)
    ok = np.flatnonzero(idx >= 0)
    Kg = np.zeros((n, n))
    Kg[np.ix_(idx[ok], idx[ok])] += lam * dbE[np.ix_(ok, ok)]
    BE, G = np.zeros(n), np.zeros(n)
    np.add.at(BE, idx[ok], bE[ok])
    np.add.at(G, idx[ok], dg[ok])
    return Kg, BE, G


# ------------------------------------------------------------------------------- sliding state
@dataclass(eq=False)
class SlidingState:
    """The quasi-static sliding state at contact position ``s`` (m): displacements ``u`` over
    [q1_free (relative to the rigid motion); q2] (m), multiplier ``lam`` (N, > 0 in compression),
    the segment ``seg``, the deformed contact point ``alpha`` and angle ``gamma`` (rad), the x of
    the contact point on the deformed target ``x_contact`` (m), the slider translation ``shift``
    (m), the Newton iterations and the final residual norm (N)."""

    s: float
    u: np.ndarray
    lam: float
    seg: int
    alpha: float
    gamma: float
    x_contact: float
    shift: float
    iterations: int
    residual: float

    def split(self, system):
        """(w1, q2): the state as the ``initial`` argument of :func:`fesub.contact.simulate`."""
        n1 = system.K1.shape[0]
        return self.u[:n1].copy(), self.u[n1:].copy()


def _loads(system, vx):
    """Constant loads over [q1_free; q2] (N): the slider's loads and the damping drag of its rigid
    motion at ``vx`` (m/s), as the transient applies them."""
    n2 = system.K2.shape[0]
    f1 = system.load1 - vx * (system.C1 @ system.r1[system.f1_idx] + system.C1p @ system.r1[system.p1])
    return np.r_[f1, np.zeros(n2)]


def sliding_state(system, s: float, mu: float, *, vx: float = 0.0, tol: float = 1e-9,
                  max_iter: int = 40) -> SlidingState:
    """Preloaded quasi-static sliding state at contact position ``s`` (m) by Newton's method.

    Parameters
    ----------
    system : SlidingContactSystem (without modal cut-off).
    s : x (m) of the undeformed target point under the rigidly moved slave (the slider is
        translated by s - X_C along x: time (s - X_C)/vx of a transient).
    mu : friction coefficient; the slave slides towards +x relative to the target when ``vx`` >= 0
        (friction sign +1), towards -x otherwise.
    vx : sliding velocity (m/s): only the damping drag of the rigid motion depends on it (0: the
        limit of slow sliding).
    tol : convergence on the Newton step, relative to the largest displacement (the steps stall at
        about 1e-10 of it on the benchmark: the round-off of the saddle-point solve); the force
        residual and the gap are checked after convergence.

    Returns
    -------
    SlidingState; :class:`ConvergenceError` if Newton's method does not converge or the contact
    point sits on a node of the target, :class:`ModelError` if the slave is not above the target
    or the multiplier is negative (detachment).
    """
    if system.modal_cutoff_hz is not None:
        raise ModelError("the deformed-state analysis uses the full reduced substructures "
                         "(build the system without modal_cutoff_hz)")
    mu = check_positive("friction coefficient mu", mu, strict=False)
    max_iter = check_count("max_iter", max_iter, lo=1)
    s = as_position(s)
    vx = float(as_positions([vx], "vx", "sliding velocities in m/s")[0])
    sign = 1.0 if vx >= 0 else -1.0
    shift = s - float(system.X_C[0])
    n1, n2 = system.K1.shape[0], system.K2.shape[0]
    K = sla.block_diag(system.K1, system.K2)
    f = _loads(system, vx)
    u, lam = np.zeros(n1 + n2), 0.0
    seg = system.surface.find(system.X_C + np.array([shift, 0.0]), 0)[0]
    fscale = np.abs(f).max() + 1.0
    for it in range(1, max_iter + 1):
        pos = system.target_positions(u[n1:])
        P = system.X_C + np.array([shift, 0.0]) + u[system.iC]
        seg = system.surface.find(P, int(max(seg, 0)), positions=pos)[0]
        if seg < 0:
            raise ModelError(f"the slave is not above the target surface at s = {s} m")
        F, g = contact_residual(system, u, lam, seg, mu, sign, shift)
        Kg, BE, G = contact_jacobian(system, u, lam, seg, mu, sign, shift)
        A = np.zeros((n1 + n2 + 1, n1 + n2 + 1))
        A[:-1, :-1] = K + Kg
        A[:-1, -1] = BE
        A[-1, :-1] = G
        r = np.r_[K @ u + F - f, g]
        step = np.linalg.solve(A, -r)
        u, lam = u + step[:-1], lam + step[-1]
        if np.abs(step[:-1]).max() <= tol * max(np.abs(u).max(), 1e-300) and it > 1:
            break
    else:
        raise ConvergenceError(f"sliding state at s = {s} m: Newton's method did not converge in "
                               f"{max_iter} iterations")
    pos = system.target_positions(u[n1:])
    P = system.X_C + np.array([shift, 0.0]) + u[system.iC]
    seg2, al, _, _ = system.surface.find(P, int(seg), positions=pos)
    if seg2 != seg:
        raise ConvergenceError(f"sliding state at s = {s} m: the contact point sits on a node "
                               f"between segments {seg} and {seg2} (choose a position off the node)")
    F, g = contact_residual(system, u, lam, seg, mu, sign, shift)
    res = float(np.abs(K @ u + F - f).max())
    if res > 1e-8 * fscale or abs(g) > 1e-12:
        raise ConvergenceError(f"sliding state at s = {s} m: residual {res:.3g} N, gap {g:.3g} m")
    if lam < -1e-12 * fscale:
        raise ModelError(f"no sliding state at s = {s} m: the contact multiplier {lam:.3g} N is negative "
                         f"(the slave would detach)")
    al, gam = local_contact(_local_x(system, u, seg, shift), mu, sign)[:2]
    j1, j2 = system.segs[seg]
    xc = (1 - al) * pos[j1, 0] + al * pos[j2, 0]
    return SlidingState(s, u, float(lam), int(seg), float(al), float(gam), float(xc), shift, it, res)


# ------------------------------------------------------------------------------- eigenvalues
def deformed_eigenvalues(system, s: float, mu: float, n: int = 20, *, vx: float = 0.0, state=None,
                         return_modes: bool = False, geometric_stiffness: bool = True):
    """The ``n`` lowest-frequency complex eigenvalues (1/s) of the sliding state at ``s`` (m)
    linearised with its deformed contact rows.

    Parameters
    ----------
    system, s, mu, vx : as in :func:`sliding_state`; ``state``, if given, is reused (it must be
        the state of the same s, mu and vx).
    n : number of eigenvalues (positive imaginary part, lowest first).
    return_modes : also return the mode shapes over [q1_free; q2] (n_dofs, n) and the state.
    geometric_stiffness : False drops K_g (rows at the deformed point, but held fixed): to
        separate the effect of the deformed rows from that of their variation.

    Returns
    -------
    lam (n,) complex (1/s); with ``return_modes`` (lam, shapes, state).
    """
    n = check_count("n", n, lo=1)
    st = state if state is not None else sliding_state(system, s, mu, vx=vx)
    sign = 1.0 if vx >= 0 else -1.0
    M = sla.block_diag(system.M1, system.M2)
    C = sla.block_diag(system.C1, system.C2)
    K = sla.block_diag(system.K1, system.K2)
    Kg, BE, BC = contact_jacobian(system, st.u, st.lam, st.seg, mu, sign, st.shift)
    if geometric_stiffness:
        K = K + Kg
    Mt, Ct, Kt = (project_rows(X, BE, BC) for X in (M, C, K))
    lam, vec = first_order_eigs(Mt, Ct, Kt, n, return_modes)
    if not return_modes:
        return lam
    return lam, null_space_row(BC) @ vec, st


# ------------------------------------------------------------------------------- along the path
def _bands(positions, unstable):
    """Contiguous runs of positions where ``unstable`` holds, as (first, last) in m."""
    out, start = [], None
    for i, u in enumerate(unstable):
        if u and start is None:
            start = i
        if start is not None and (not u or i == len(unstable) - 1):
            end = i if u else i - 1
            out.append((float(positions[start]), float(positions[end])))
            start = None
    return out


@dataclass(eq=False)
class GeometryComparison(Result):
    """Eigenvalues along the sliding path with the deformed and with the undeformed contact rows.

    ``lam_deformed[i, k]`` and ``lam_undeformed[i, k]`` (1/s): eigenvalue k (tracked along the
    positions, lowest frequencies) at contact position ``positions[i]`` (m), friction coefficient
    ``mu``, sliding velocity ``vx`` (m/s); the sliding states' multiplier ``lam_static`` (N),
    contact point ``x_contact`` on the deformed target (m) and deformed segment angle ``gamma``
    (rad); ``status`` 'completed' or 'interrupted' (then the positions done so far).
    """

    positions: np.ndarray
    lam_deformed: np.ndarray
    lam_undeformed: np.ndarray
    lam_static: np.ndarray
    x_contact: np.ndarray
    gamma: np.ndarray
    mu: float
    vx: float
    status: str = "completed"

    kind = "deformed-vs-undeformed-eigenvalues"

    def unstable(self, which: str = "deformed"):
        """(position m, frequency Hz, real part 1/s) of every eigenvalue with a positive real part,
        ``which`` = 'deformed' or 'undeformed'."""
        lam = self.lam_deformed if which == "deformed" else self.lam_undeformed
        i, k = np.nonzero(lam.real > 0)
        return [(float(self.positions[a]), float(lam[a, b].imag / (2 * np.pi)), float(lam[a, b].real))
                for a, b in zip(i, k)]

    def bands(self, which: str = "deformed"):
        """Position ranges (first, last in m) with a positive real part, ``which`` as in
        :meth:`unstable`."""
        lam = self.lam_deformed if which == "deformed" else self.lam_undeformed
        return _bands(self.positions, (lam.real > 0).any(axis=1) if lam.size else [])

    def loci(self, which: str = "deformed"):
        """The eigenvalues of one geometry as :class:`fesub.contact.eigen.EigenLoci` (for the
        figures of :mod:`fesub.contact.plots`: ``plot_loci``, ``plot_max_real``)."""
        lam = self.lam_deformed if which == "deformed" else self.lam_undeformed
        return EigenLoci(self.positions.copy(), lam.copy(), float(self.mu), status=self.status)

    def band_table(self, which: str = "deformed") -> list:
        """Per unstable band (:meth:`bands`): its ends (m) and its largest real part (1/s) with
        the frequency (Hz) and position (m) where it occurs."""
        lam = self.lam_deformed if which == "deformed" else self.lam_undeformed
        out = []
        for a, b in self.bands(which):
            sel = (self.positions >= a) & (self.positions <= b)
            sub = lam[sel]
            i, k = np.unravel_index(np.argmax(sub.real), sub.shape)
            out.append({"from_m": a, "to_m": b, "max_real_1_s": float(sub[i, k].real),
                        "f_hz": float(sub[i, k].imag / (2 * np.pi)), "at_m": float(self.positions[sel][i])})
        return out

    def to_xarray(self):
        import xarray as xr

        pm = ("position", "mode")
        lam_attrs = {"units": "1/s", "long_name": "complex eigenvalue: growth rate + j angular frequency"}
        return xr.Dataset(
            {"lam_deformed": (pm, self.lam_deformed, {**lam_attrs, "rows": "deformed sliding state"}),
             "lam_undeformed": (pm, self.lam_undeformed, {**lam_attrs, "rows": "undeformed geometry"}),
             "lam_static": ("position", self.lam_static, {"units": "N", "long_name": "contact multiplier"}),
             "x_contact": ("position", self.x_contact,
                           {"units": "m", "long_name": "contact point x on the deformed target"}),
             "gamma": ("position", self.gamma, {"units": "rad", "long_name": "deformed segment angle"})},
            coords={"position": ("position", self.positions,
                                 {"units": "m", "long_name": "contact position x on the undeformed target"}),
                    "mode": ("mode", np.arange(self.lam_deformed.shape[1]),
                             {"units": "1", "long_name": "tracked eigenvalue index"})},
            attrs={"mu": float(self.mu), "vx": float(self.vx), "status": self.status})

    @classmethod
    def from_xarray(cls, ds):
        a = ds.attrs
        return cls(ds["position"].values, ds["lam_deformed"].values, ds["lam_undeformed"].values,
                   ds["lam_static"].values, ds["x_contact"].values, ds["gamma"].values, a["mu"], a["vx"],
                   status=a["status"])

    def summary(self) -> dict:
        p = self.positions

        def worst(lam):
            if not lam.size:
                return None, None, None
            i, k = np.unravel_index(np.argmax(lam.real), lam.shape)
            return float(lam[i, k].real), float(lam[i, k].imag / (2 * np.pi)), float(p[i])

        rd, fd, xd = worst(self.lam_deformed)
        ru, fu, xu = worst(self.lam_undeformed)
        return summary_record(
            self.kind,
            {"mu": (float(self.mu), "1"), "vx": (float(self.vx), "m/s"), "n_positions": (int(p.size), None),
             "position_min": (float(p.min()) if p.size else None, "m"),
             "position_max": (float(p.max()) if p.size else None, "m")},
            {"max_real_part_deformed": (rd, "1/s"), "frequency_of_max_deformed": (fd, "Hz"),
             "position_of_max_deformed": (xd, "m"), "max_real_part_undeformed": (ru, "1/s"),
             "frequency_of_max_undeformed": (fu, "Hz"), "position_of_max_undeformed": (xu, "m"),
             "status": (self.status, None)},
            details={"unstable_bands_deformed": self.band_table("deformed"),
                     "unstable_bands_undeformed": self.band_table("undeformed")})


def compare_geometries(system, positions, mu: float, n: int = 20, *, vx: float = 0.0,
                       progress: bool = False) -> GeometryComparison:
    """Eigenvalues of the deformed sliding state (:func:`deformed_eigenvalues`) and of the
    undeformed analysis (:func:`fesub.contact.eigen.complex_eigenvalues`) at each contact position
    (m), each tracked from one position to the next.

    ``n`` eigenvalues (lowest frequencies) per position; ``mu``, ``vx`` (m/s) as in
    :func:`sliding_state`. Positions on a node of the target (the contact row has a kink there)
    raise :class:`ConvergenceError` from the sliding state: step around them. Interrupted
    (Ctrl-C), the positions done so far with ``status='interrupted'``.
    """
    from tqdm.auto import tqdm

    positions = as_positions(positions)
    n = check_count("n", n, lo=1)
    m = positions.size
    ld, lu = np.zeros((m, n), complex), np.zeros((m, n), complex)
    lam0, xc, gam = np.zeros(m), np.zeros(m), np.zeros(m)
    done, status = 0, "completed"
    try:
        for i, s in enumerate(tqdm(positions, disable=not progress, desc=f"deformed vs undeformed mu={mu:g}")):
            st = sliding_state(system, s, mu, vx=vx)
            d = deformed_eigenvalues(system, s, mu, n, vx=vx, state=st)
            u = complex_eigenvalues(system, s, mu, n, sign=1.0 if vx >= 0 else -1.0)
            if d.size < n or u.size < n:
                raise ModelError(f"fewer than {n} oscillating eigenvalues at s = {s} m")
            ld[i] = d if i == 0 else track(ld[i - 1], d)
            lu[i] = u if i == 0 else track(lu[i - 1], u)
            lam0[i], xc[i], gam[i] = st.lam, st.x_contact, st.gamma
            done = i + 1
    except KeyboardInterrupt:
        status = "interrupted"
    k = slice(0, done)
    return GeometryComparison(positions[k], ld[k], lu[k], lam0[k], xc[k], gam[k], float(mu), float(vx),
                              status=status)


def spectrum_solver(geometry: str, vx: float, modal_cutoff_hz=None, n_basis=None):
    """The per-position eigen-solve of the deformed sliding state at velocity ``vx`` (m/s), in the
    form the analyses of :mod:`fesub.contact.eigen` call (``geometry='deformed'`` there):
    ``f(system, s, mu, n, ...) -> (lam, None, inf, n_modes)`` (every mode of the reduced model is
    examined). The deformed analysis takes the whole reduced model: a modal cut-off or a Ritz basis
    is refused."""
    if geometry != "deformed":
        raise ParameterError(f"geometry must be 'undeformed' or 'deformed', got {geometry!r}")
    if modal_cutoff_hz is not None or n_basis is not None:
        raise ParameterError("geometry='deformed' examines the whole reduced model: modal_cutoff_hz and "
                             "n_basis must be None")
    vx = float(as_positions([vx], "vx", "sliding velocities in m/s")[0])

    def solve(system, s, mu, n, sign=1.0, **_):
        lam = deformed_eigenvalues(system, s, mu, n, vx=vx)
        return lam, None, float("inf"), system.K1.shape[0] + system.K2.shape[0] - 1

    return solve


def join_loci(parts):
    """One :class:`fesub.contact.eigen.EigenLoci` from loci computed over consecutive runs of the
    positions (e.g. by several processes): the eigenvalues of each run tracked on from the last
    position of the one before, as :func:`fesub.contact.eigen.eigenvalue_loci` tracks them over all
    the positions in one call.

    Tracking pairs each eigenvalue with the nearest of the previous position by an assignment of
    least total distance, whose result does not depend on the order in which a run listed its
    eigenvalues: the joined loci equal those of one call (but where two pairings tie exactly).

    Parameters
    ----------
    parts : sequence of EigenLoci
        Loci over consecutive runs of positions (m), in order, of the same friction coefficient
        (1) and number of eigenvalues; eigenvalues in 1/s.

    Returns
    -------
    EigenLoci
        Over all the positions; ``complete_up_to_hz`` (Hz) the lowest of the parts, ``status``
        'interrupted' from the first interrupted part on (the later parts dropped).
    """
    parts = list(parts)
    if not parts:
        raise ParameterError("parts must hold at least one EigenLoci")
    if len({(float(L.mu), L.lam.shape[1], L.n_basis, L.n_modes) for L in parts}) != 1:
        raise ParameterError("parts must share mu, the number of eigenvalues, n_basis and n_modes")
    rows, positions, status = [], [], "completed"
    for L in parts:
        for s, lam in zip(L.positions, L.lam):
            rows.append(lam if not rows else track(rows[-1], lam))
            positions.append(s)
        if L.status != "completed":
            status = L.status
            break
    first = parts[0]
    lam = np.array(rows) if rows else np.zeros((0, first.lam.shape[1]), complex)
    return EigenLoci(np.array(positions, float), lam, float(first.mu), n_basis=first.n_basis,
                     complete_up_to_hz=min(float(L.complete_up_to_hz) for L in parts), n_modes=first.n_modes,
                     status=status)
