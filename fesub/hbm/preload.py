"""Bolt preload: the nonlinear static state of 3D friction contacts under bolt loads, and the
stuck-interface modes about it.

A :class:`BoltedJoint` is a structure (stiffness ``K``, mass ``M``, any coordinates: physical
DOFs or a Craig-Bampton reduction with the interface nodes kept) with
:class:`~fesub.hbm.friction3d.Friction3D` contacts placed by :class:`~fesub.hbm.system.ContactElement`
and :class:`Bolt` s. A bolt's shank is a spring of axial stiffness ``k_b`` with a pretension: it
is tightened until its tension is the preload ``P`` (the nut's turn is part of the solution,
:attr:`PreloadState.bolt_shortening`), so in the static solve it pulls its head and nut faces
together with the force ``P`` and in the dynamics about the preloaded state it adds its spring
``k_b g g^T`` to the structure. The static equilibrium solved is::

    R(q) = K q + sum_e G_e^T f_e(G_e q) + sum_b g_b P_b - f_ext = 0

with each contact's law at rest from the unloaded state in one step: ``N = max(n0 + kn un, 0)``,
the tangential force the radial return of ``kt u_t`` onto the circle ``|f_t| <= mu N`` (the
first step of the element's own return map; a proportional loading that does not reverse), by
:func:`fesub.hbm.newton.damped_newton` with the analytic Jacobian. Without external loads the
normal contact forces then balance the bolt loads exactly (:attr:`PreloadState.resultant`).

:meth:`BoltedJoint.preload` returns a :class:`PreloadState` (normal force, gap, tangential force
and stick/slip/open state per contact; bolt tensions; the linearised stuck-interface modes:
closed contacts as their ``kt, kt, kn`` springs, open ones absent, bolts as springs).
:meth:`BoltedJoint.hb_system` gives the harmonic balance about that state: the same contacts
with the static normal load as their preload ``n0`` (the static/dynamic decoupled scheme of
:mod:`fesub.hbm.system`), whose small-amplitude limit is the stuck-interface modes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.linalg import eigh

from ..errors import ConvergenceError, ModelError, ParameterError, check_count, check_positive
from ..io import Result, summary_record
from .friction3d import Friction3D
from .newton import RTOL, damped_newton
from .nnm import linear_modes
from .system import ContactElement, HBSystem

__all__ = ["Bolt", "BoltedJoint", "PreloadState", "OPEN", "STUCK", "SLIP"]

#: contact states of :attr:`PreloadState.state`
OPEN, STUCK, SLIP = 0, 1, 2
_STATE_NAMES = {OPEN: "open", STUCK: "stuck", SLIP: "slip"}


@dataclass
class Bolt:
    """A bolt: a shank spring with a pretension between its head and nut faces.

    Parameters
    ----------
    g : (n,) array
        Elongation row (-): the shank's elongation is ``g @ q`` (m), positive when the head
        and nut faces move apart along the bolt axis. :meth:`between` builds it from the
        washer faces' DOFs; for a reduced model use ``T.T @ g_full`` (:meth:`reduced`).
    preload : float
        Tension (N) the bolt is tightened to, > 0.
    stiffness : float
        Axial stiffness of the shank ``E A / L`` (N/m), >= 0.
    name : str
        Label in messages and summaries.
    """

    g: np.ndarray
    preload: float
    stiffness: float
    name: str = ""

    def __post_init__(self):
        what = f"bolt {self.name!r}" if self.name else "bolt"
        p = float(self.preload)
        if not math.isfinite(p) or p <= 0:
            raise ParameterError(f"{what}: preload (bolt tension, N) must be finite and > 0, "
                                 f"got {self.preload!r} (a compressed bolt cannot clamp a joint)")
        self.preload = p
        self.stiffness = check_positive(f"{what}: stiffness (shank E A / L, N/m)",
                                        self.stiffness, strict=False)
        g = np.asarray(self.g, float).ravel()
        if not np.all(np.isfinite(g)) or not np.any(g):
            raise ParameterError(f"{what}: elongation row g must be finite and not all zero")
        self.g = g

    @classmethod
    def between(cls, n, head_dofs, nut_dofs, preload, stiffness, name=""):
        """Bolt whose elongation is the mean axial displacement of its head face minus that of
        its nut face.

        Parameters
        ----------
        n : int
            DOFs of the model.
        head_dofs, nut_dofs : int arrays
            DOFs of the axial displacement component (along the axis from the nut to the head)
            at the washer nodes under the head and under the nut; averaged over each face.
        preload, stiffness, name :
            As in :class:`Bolt` (N, N/m).
        """
        n = check_count("n (model DOFs)", n, 1)
        g = np.zeros(n)
        for dofs, sign, what in ((head_dofs, 1.0, "head_dofs"), (nut_dofs, -1.0, "nut_dofs")):
            d = np.atleast_1d(np.asarray(dofs))
            if d.size == 0 or d.dtype.kind not in "iu" or d.min() < 0 or d.max() >= n:
                raise ParameterError(f"{what} must be DOF indices in 0..{n - 1}, got {dofs!r}")
            np.add.at(g, d, sign / d.size)
        return cls(g, preload, stiffness, name)

    def reduced(self, T):
        """The same bolt on reduced coordinates ``u = T q`` (``g_r = T^T g``)."""
        return Bolt(np.asarray(T).T @ self.g, self.preload, self.stiffness, self.name)


def _law(el, u):
    """Static force (3,) (N), stiffness (3, 3) (N/m) and state of a Friction3D at ``u`` (m)."""
    k = np.zeros((3, 3))
    Ntr = el.n0 + el.kn * u[2]
    if Ntr < 0.0:
        return np.zeros(3), k, OPEN
    # closed (N = 0 exactly counts as closed: the Newton start has its normal stiffness)
    N = Ntr
    t = el.kt * u[:2]
    nt = math.hypot(t[0], t[1])
    k[2, 2] = el.kn
    if nt <= el.mu * N:
        k[0, 0] = k[1, 1] = el.kt
        return np.array([t[0], t[1], N]), k, STUCK
    e = t / nt
    ft = el.mu * N * e
    k[:2, :2] = (el.mu * N / nt) * el.kt * (np.eye(2) - np.outer(e, e))
    k[:2, 2] = el.mu * el.kn * e
    return np.array([ft[0], ft[1], N]), k, SLIP


class BoltedJoint:
    """A structure with 3D friction contacts clamped by bolts.

    Parameters
    ----------
    K, M : (n, n) arrays
        Stiffness (N/m) and mass (kg) of the structure without contacts and bolts (physical or
        reduced coordinates). Held (clamped) or free: the rigid-body modes of the structure
        with every contact stuck (:meth:`rigid_modes`) are kept out of the static solution.
    contacts : list of ContactElement
        The interface: :class:`~fesub.hbm.friction3d.Friction3D` laws (``n0``: the normal load
        at zero normal displacement, 0 for faces that touch unloaded, < 0 for a gap) with
        their gather matrices (3, n).
    bolts : list of Bolt
        The bolts (at least one).
    fext : (n,) array, optional
        Other static loads (N) applied together with the bolts.
    """

    def __init__(self, K, M, contacts, bolts, *, fext=None):
        self.K = np.asarray(K, float)
        n = self.K.shape[0]
        if self.K.shape != (n, n) or not np.all(np.isfinite(self.K)):
            raise ModelError(f"K must be a finite square matrix, got shape {self.K.shape}")
        self.M = np.asarray(M, float)
        if self.M.shape != (n, n) or not np.all(np.isfinite(self.M)):
            raise ModelError(f"M must be a finite ({n}, {n}) matrix, got shape {self.M.shape}")
        self.n = n
        self.contacts = list(contacts)
        if not self.contacts:
            raise ModelError("a bolted joint needs contact elements (none given): the bolt loads "
                             "have nothing to be balanced by")
        for i, c in enumerate(self.contacts):
            if not isinstance(c.element, Friction3D):
                raise ModelError(f"contact {i}: the preload is solved for Friction3D contacts, "
                                 f"got {type(c.element).__name__}")
            if np.shape(c.G) != (3, n):
                raise ModelError(f"contact {i}: gather matrix must have shape (3, {n}), "
                                 f"got {np.shape(c.G)}")
        self.G = np.array([np.asarray(c.G, float) for c in self.contacts])   # (ne, 3, n)
        self.bolts = list(bolts)
        if not self.bolts:
            raise ModelError("a bolted joint needs at least one Bolt")
        for b in self.bolts:
            if not isinstance(b, Bolt) or b.g.size != n:
                raise ModelError(f"bolts must be Bolt objects with an elongation row of {n} "
                                 f"entries, got {b!r}")
        self.fext = np.zeros(n) if fext is None else np.asarray(fext, float).ravel()
        if self.fext.size != n or not np.all(np.isfinite(self.fext)):
            raise ParameterError(f"fext (static loads, N) must be {n} finite values")
        gb = np.array([b.g for b in self.bolts])
        self._fbolt = gb.T @ np.array([b.preload for b in self.bolts])
        self.K_bolts = gb.T @ (np.array([b.stiffness for b in self.bolts])[:, None] * gb)

    # ------------------------------------------------------------------ the static problem
    def contact_forces(self, q):
        """Per contact: local forces (ne, 3) (N; t1, t2, normal), stiffness (ne, 3, 3) (N/m) and
        state (ne,) (:data:`OPEN`, :data:`STUCK`, :data:`SLIP`) at the displacement ``q``."""
        U = self.G @ np.asarray(q, float)
        ne = len(self.contacts)
        f, k, s = np.zeros((ne, 3)), np.zeros((ne, 3, 3)), np.zeros(ne, int)
        for i, c in enumerate(self.contacts):
            f[i], k[i], s[i] = _law(c.element, U[i])
        return f, k, s

    def residual(self, q):
        """``(R, J, s)`` of the static equilibrium (module doc): residual (N), Jacobian (N/m) and
        the rounding scale of ``R`` per component (N)."""
        q = np.asarray(q, float)
        f, k, _ = self.contact_forces(q)
        Gs = self.G.reshape(-1, self.n)                     # (3 ne, n)
        fc = Gs.T @ f.ravel()
        R = self.K @ q + fc + self._fbolt - self.fext
        J = self.K + Gs.T @ np.einsum("ecd,edj->ecj", k, self.G).reshape(-1, self.n)
        s = (np.abs(self.K) @ np.abs(q) + np.abs(Gs).T @ np.abs(f).ravel()
             + np.abs(self._fbolt) + np.abs(self.fext))
        return R, J, s

    def stuck_stiffness(self, closed=None):
        """``K`` + bolt springs + the stuck springs ``(kt, kt, kn)`` of the contacts ``closed``
        (bool (ne,), default all) (N/m)."""
        k = np.array([[c.element.kt, c.element.kt, c.element.kn] for c in self.contacts])
        if closed is not None:
            k = k * np.asarray(closed, bool)[:, None]
        Gs = self.G.reshape(-1, self.n)
        return self.K + self.K_bolts + Gs.T @ (k.reshape(-1, 1) * Gs)

    def rigid_modes(self, rtol: float = 1e-10):
        """Rigid-body modes (n, r) of the structure with every contact stuck and the bolts as
        springs: the mass-normalised eigenvectors whose ``w^2`` is below ``rtol`` times the
        largest (rounding leaves them near 1e-16 of it; none for a held structure). A free
        structure is solved with ``R^T M q = 0`` (its static state without rigid motion, the
        loads self-equilibrated)."""
        Ks = self.stuck_stiffness()
        w2, V = eigh(0.5 * (Ks + Ks.T), self.M)
        return V[:, w2 < rtol * abs(w2).max()]

    def preload(self, n_modes: int = 6, *, q0=None, rtol: float = RTOL, max_iter: int = 100):
        """Solve the static state under the bolt loads and the stuck-interface modes about it.

        Parameters
        ----------
        n_modes : int
            Linearised stuck-interface modes kept (lowest first).
        q0 : (n,) array, optional
            Start (m); default the linear response with every contact closed and stuck.
        rtol : float
            Relative residual tolerance of :func:`~fesub.hbm.newton.damped_newton` (-).
        max_iter : int
            Newton iterations.

        Returns
        -------
        PreloadState
        """
        n_modes = check_count("n_modes", n_modes, 1, self.n)
        R0 = self.rigid_modes()
        nr = R0.shape[1]
        MR = self.M @ R0
        A = np.block([[self.stuck_stiffness(), MR], [MR.T, np.zeros((nr, nr))]])
        if q0 is None:
            try:
                q0 = np.linalg.solve(A, np.concatenate([self.fext - self._fbolt,
                                                        np.zeros(nr)]))[:self.n]
            except np.linalg.LinAlgError:
                raise ModelError("the structure with every contact stuck is not held (singular "
                                 "stiffness): clamp it or add contacts") from None
        q0 = np.asarray(q0, float)
        if q0.shape != (self.n,):
            raise ParameterError(f"q0 must have {self.n} entries, got shape {q0.shape}")

        def fun(x):     # the equilibrium bordered by R0^T M q = 0 (no rigid motion)
            q, lam = x[:self.n], x[self.n:]
            R, J, sc = self.residual(q)
            Ja = np.block([[J, MR], [MR.T, np.zeros((nr, nr))]])
            return (np.concatenate([R + MR @ lam, MR.T @ q]), Ja,
                    np.concatenate([sc + np.abs(MR) @ np.abs(lam),
                                    np.abs(MR.T) @ np.abs(q) + 1e-300]))

        x, st = damped_newton(fun, np.concatenate([q0, np.zeros(nr)]), rtol=rtol,
                              max_iter=max_iter)
        q, lam = x[:self.n], x[self.n:]
        if nr and st.converged and np.abs(MR @ lam).max() > 1e-9 * max(
                np.abs(self._fbolt).max(), np.abs(self.fext).max()):
            raise ModelError(f"the structure is free ({nr} rigid-body modes) and the static loads "
                             "fext have a resultant: no static equilibrium (hold it, or give "
                             "self-equilibrated loads)")
        f, _, state = self.contact_forces(q)
        if not np.any(state != OPEN):
            raise ModelError("separation everywhere: no contact carries load under the bolt "
                             "loads (check the bolts' elongation rows point from the nut to the "
                             "head, and the contacts' gaps n0)")
        if not st.converged:
            raise ConvergenceError(f"bolt preload: no static equilibrium ({st.describe()}); "
                                   f"{int(np.sum(state == OPEN))} of {state.size} contacts open "
                                   "at the best iterate (a part held only by open contacts "
                                   "makes the Jacobian singular)")
        U = self.G @ q
        els = [c.element for c in self.contacts]
        n0 = np.array([e.n0 for e in els])
        kn = np.array([e.kn for e in els])
        gap = np.maximum(-(n0 + kn * U[:, 2]) / kn, 0.0)
        Ks = self.stuck_stiffness(state != OPEN)
        w, V = linear_modes(self.M, 0.5 * (Ks + Ks.T))
        w, V = w[nr:], V[:, nr:]        # the rigid-body modes of a free structure left out
        return PreloadState(
            q=q, normal=f[:, 2].copy(), gap=gap, tangential=f[:, :2].copy(), state=state,
            mu=np.array([e.mu for e in els]),
            bolt_load=np.array([b.preload for b in self.bolts]),
            bolt_shortening=np.array([b.preload / b.stiffness - b.g @ q if b.stiffness > 0
                                      else math.nan for b in self.bolts]),
            freq_hz=w[:n_modes] / (2 * math.pi), shapes=V[:, :n_modes], n_rigid=nr,
            iterations=st.iterations, relative_residual=st.relative_residual,
            names=[c.name or f"contact {i}" for i, c in enumerate(self.contacts)])

    # ------------------------------------------------------------------ the dynamics about it
    def dynamic_contacts(self, state: "PreloadState"):
        """The contacts for the harmonic balance about ``state``: each
        :class:`~fesub.hbm.friction3d.Friction3D` with ``n0`` the static normal trial force
        ``n0 + kn un`` there (N; < 0 for an open contact: its gap), the rest unchanged."""
        U = self.G @ state.q
        out = []
        for i, c in enumerate(self.contacts):
            el = c.element
            dyn = Friction3D(el.kt, el.kn, el.mu, el.n0 + el.kn * U[i, 2], nt=el.nt, tol=el.tol,
                             max_periods=el.max_periods)
            out.append(ContactElement(dyn, c.G, c.name))
        return out

    def hb_system(self, state: "PreloadState", C, nh: int, fex=0, dof: int = 0, *,
                  constant: bool = False) -> HBSystem:
        """Harmonic balance of the vibrations about the preloaded ``state``: ``K`` + bolt
        springs, the contacts of :meth:`dynamic_contacts`, damping ``C`` (N s/m), ``nh``
        harmonics, load pattern ``fex`` and monitor ``dof`` as in
        :class:`~fesub.hbm.system.HBSystem`. ``constant=True`` keeps the mean of the contact
        forces (the mean displacement solved with the harmonics); on a free structure its mean
        is held by the support ``M R w^2 R^T M`` on the :meth:`rigid_modes` ``R`` (``w`` the
        lowest stuck-interface frequency of ``state``, rad/s, for the scaling only), which
        leaves the mean of the self-equilibrated contact forces free of rigid motion
        (``R^T M Q^0 = 0``, as in :meth:`preload`). The default drops the mean (the decoupled
        scheme)."""
        support = None
        if constant:
            R = self.rigid_modes()
            if R.shape[1]:
                MR = self.M @ R
                w2 = (2 * math.pi * float(state.freq_hz[0])) ** 2 if len(state.freq_hz) else 1.0
                support = w2 * (MR @ MR.T)
        return HBSystem(self.M, C, self.K + self.K_bolts, nh, self.dynamic_contacts(state),
                        fex, dof, constant=bool(constant), mean_support=support)


@dataclass
class PreloadState(Result):
    """The prestressed state of a bolted joint and its stuck-interface modes.

    Saved files: dimensions ``contact``, ``tangent`` (2), ``bolt``, ``dof``, ``mode``.

    Parameters
    ----------
    q : (n,) ndarray
        Static displacement (m; generalised coordinates of a reduced model).
    normal : (ne,) ndarray
        Normal contact force per contact (N, compression > 0).
    gap : (ne,) ndarray
        Normal gap per contact (m; 0 where closed).
    tangential : (ne, 2) ndarray
        Tangential contact force (N), the stuck (or slipped) tangential state.
    state : (ne,) ndarray of int
        :data:`OPEN` (0), :data:`STUCK` (1) or :data:`SLIP` (2).
    mu : (ne,) ndarray
        Friction coefficients (-).
    bolt_load, bolt_shortening : (nb,) ndarray
        Bolt tension (N), and the shortening of the shank's free length that gives it (m; the
        nut's turn: ``P / k_b`` minus the elongation ``g @ q`` of the clamped length; nan for a
        bolt without stiffness).
    freq_hz : (nm,) ndarray
        Linearised stuck-interface natural frequencies (Hz).
    shapes : (n, nm) ndarray
        Their mode shapes, mass-normalised (1/sqrt(kg)).
    iterations : int
        Newton iterations of the static solve.
    n_rigid : int
        Rigid-body modes of the structure (0 when held; a free one's are left out of
        ``freq_hz``: give ``mode=n_rigid`` to :func:`~fesub.hbm.dnnm` for its first elastic
        mode).
    relative_residual : float
        Its final residual in units of the rounding scale (-).
    names : list of str
        Contact labels.
    """

    q: np.ndarray
    normal: np.ndarray
    gap: np.ndarray
    tangential: np.ndarray
    state: np.ndarray
    mu: np.ndarray
    bolt_load: np.ndarray
    bolt_shortening: np.ndarray
    freq_hz: np.ndarray
    shapes: np.ndarray
    iterations: int
    relative_residual: float
    names: list
    n_rigid: int = 0

    kind = "bolt-preload"

    @property
    def resultant(self) -> float:
        """Sum of the normal contact forces (N); equals the sum of the bolt loads without other
        loads (and with the contact normals along the bolt axes)."""
        return float(np.sum(self.normal))

    @property
    def counts(self) -> dict:
        """Contacts per state: ``{'open': .., 'stuck': .., 'slip': ..}``."""
        return {name: int(np.sum(self.state == k)) for k, name in _STATE_NAMES.items()}

    @property
    def slip_ratio(self) -> np.ndarray:
        """``|f_t| / (mu N)`` per contact (-; 1 on the slip circle, nan where open)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.hypot(*self.tangential.T) / (self.mu * self.normal)
        return np.where(self.state == OPEN, np.nan, r)

    def to_xarray(self):
        import xarray as xr

        def v(dims, x, units, name):
            return (dims, np.asarray(x), {"units": units, "long_name": name})

        return xr.Dataset(
            {"q": v("dof", self.q, "m", "static displacement (generalised coordinates)"),
             "normal": v("contact", self.normal, "N", "normal contact force"),
             "gap": v("contact", self.gap, "m", "normal gap"),
             "tangential": v(("contact", "tangent"), self.tangential, "N",
                             "tangential contact force"),
             "state": v("contact", self.state.astype(np.int8), "1",
                        "contact state: 0 open, 1 stuck, 2 slip"),
             "mu": v("contact", self.mu, "1", "friction coefficient"),
             "bolt_load": v("bolt", self.bolt_load, "N", "bolt tension"),
             "bolt_shortening": v("bolt", self.bolt_shortening, "m",
                                  "shortening of the shank's free length (nut turn)"),
             "freq_hz": v("mode", self.freq_hz, "Hz", "stuck-interface natural frequency"),
             "shapes": v(("dof", "mode"), self.shapes, "1/sqrt(kg)", "mass-normalised shape")},
            coords={"contact": np.array(self.names, dtype=object)},
            attrs={"iterations": int(self.iterations), "n_rigid": int(self.n_rigid),
                   "relative_residual": float(self.relative_residual)})

    @classmethod
    def from_xarray(cls, ds):
        return cls(ds["q"].values.copy(), ds["normal"].values.copy(), ds["gap"].values.copy(),
                   ds["tangential"].values.copy(), ds["state"].values.astype(int),
                   ds["mu"].values.copy(), ds["bolt_load"].values.copy(),
                   ds["bolt_shortening"].values.copy(), ds["freq_hz"].values.copy(),
                   ds["shapes"].values.copy(), int(ds.attrs["iterations"]),
                   float(ds.attrs["relative_residual"]),
                   [str(x) for x in ds["contact"].values], int(ds.attrs.get("n_rigid", 0)))

    def summary(self) -> dict:
        c = self.counts
        bolts = float(np.sum(self.bolt_load))
        res = {"contact_resultant": (self.resultant, "N"), "bolt_loads": (bolts, "N"),
               "resultant_error": (abs(self.resultant - bolts) / bolts, "1"),
               "max_normal": (float(self.normal.max()), "N"),
               "max_gap": (float(self.gap.max()), "m"),
               "open": (c["open"], None), "stuck": (c["stuck"], None), "slip": (c["slip"], None),
               "freq_hz": (self.freq_hz, "Hz"), "iterations": (int(self.iterations), None)}
        res["rigid_modes"] = (int(self.n_rigid), None)
        return summary_record(self.kind, {"bolts": (len(self.bolt_load), None),
                                          "contacts": (len(self.normal), None)}, res)
