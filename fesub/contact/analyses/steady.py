"""The steady sliding state of a multibody contact model, plane or solid bodies.

Plane bodies (node-to-segment :class:`~fesub.contact.engine.interfaces.ContactInterface`) are
described below; solid bodies (node-to-surface
:class:`~fesub.contact.engine.surfaces.ContactInterface3D`) take the same function, with the
terms of :mod:`fesub.contact.analyses.linearised3d`: each sliding node's friction force along
the tangential part of its velocity relative to the master, the sliding direction in the
tangent plane.

A :class:`~fesub.contact.engine.bodies.MultibodyModel` of plane bodies whose drives move at
constant velocities (a belt, a dragged pad) slides steadily when its modal coordinates ``eta``
(relative to the drives' quasi-static motion, unit modal masses) stand still. At a time ``t`` (the
drives' positions; the state is the same at every t when the surfaces are uniform along the
sliding) every slave node of every :class:`~fesub.contact.engine.interfaces.ContactInterface` is

* open: no force (its gap is positive);
* sliding: on its master segment (gap 0, the normal force ``lambda_n >= 0`` a multiplier) with
  the friction force ``lambda_t = -s mu(v) lambda_n`` along the segment's tangent ``t``, ``s`` the
  direction of the node's slip along ``t`` and ``v`` its slip speed, both from the imposed motion;
* sticking: where the imposed motion gives the node no velocity relative to the master, it is
  bonded to the master point under its undeformed position (the slave on that material point:
  both force components multipliers, the tangential one checked inside the cone
  ``|lambda_t| <= mu_s lambda_n``; the bond is linear in the displacements, without geometric
  stiffness).

:func:`steady_state` finds the state by Newton's method on the open/closed active set:

    Omega^2 eta + F(eta, eta', lambda) = f(t),    g(eta) = 0,

``f`` the modal loads with the drives' damping drag, ``F`` the contact forces and ``g`` the
constraints of :func:`~fesub.contact.analyses.contact_terms.contact_forces` (minus the gaps of
sliding nodes, the offsets (x, y) of sticking ones from their bonded master points), the Newton
matrix from :func:`~fesub.contact.analyses.contact_terms.contact_derivatives`. The equations
linearised about the state: :mod:`fesub.contact.analyses.linearised`.

Units: SI (m, N, s); modal coordinates in m kg^0.5.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...errors import (
    ConvergenceError,
    ModelError,
    ParameterError,
    check_count,
    check_real,
)
from ..engine.bodies import MultibodyModel
from ..engine.contacts import OPEN, SLIP_M, SLIP_P, STICK
from ..engine.friction import node_laws
from ..engine.interfaces import frames
from .contact_terms import (
    NodeFrame,
    contact_derivatives,
    contact_forces,
    node_coordinates,
    slide_terms,
)
from .linearised3d import SurfaceGeometry, slide_state

__all__ = ["SteadyState", "steady_state"]


@dataclass(eq=False)
class SteadyState:
    """The steady sliding state at time ``t`` (s): modal coordinates ``eta`` (m kg^0.5) and the
    closed nodes' ``frames`` with their multipliers ``lam`` (N); per slave node of every interface
    (in the order of ``ContactRunResult.node_id``): ``state`` (plane: 0 open, 1 stick, 2 slip along
    +t, 3 along -t; solid: 0 open, 1 stick, 2 slip), ``lambda_n`` (N, the master's normal force on
    the slave), ``lambda_t`` (N: plane, (m,) along t; solid, (m, 2) along the node's tangents t1
    and t2 of :class:`~fesub.contact.geometry.FaceSet`), ``gap`` (m), ``slip_speed`` (m/s) and
    ``mu`` (the coefficient at that speed; the stick limit for sticking and open nodes); Newton
    ``iterations`` and the final force ``residual`` (N); for a solid model ``direction`` (m, 3),
    each sliding node's sliding direction (unit, in its tangent plane; 0 for the others)."""

    t: float
    eta: np.ndarray
    frames: list
    lam: np.ndarray
    state: np.ndarray
    lambda_n: np.ndarray
    lambda_t: np.ndarray
    gap: np.ndarray
    slip_speed: np.ndarray
    mu: np.ndarray
    iterations: int
    residual: float
    drive: list = field(repr=False, default=None)
    direction: np.ndarray | None = field(repr=False, default=None)


def _drive(model, t):
    """Per interface: the drives' displacements (m) and velocities (m/s) of slave and master nodes
    at time ``t`` (s)."""
    uva = [b.motion(t) if b.p_idx.size else np.zeros((3, 0)) for b in model.bodies]
    ups, vps = [x[0] for x in uva], [x[1] for x in uva]
    return [(c["slave"].driven(ups), c["master"].driven(ups), c["slave"].driven(vps), c["master"].driven(vps))
            for c in model.contacts]


def _node_laws(model, friction):
    if friction is None:
        return [list(c["node_laws"]) if "node_laws" in c else node_laws(c["interface"].laws, c["slave"].nodes.size)
                for c in model.contacts]
    return [node_laws(friction, c["slave"].nodes.size) for c in model.contacts]


def _reference(model, drive):
    """Per interface, per slave node: (segment, alpha, gap in m, relative velocity (2,) m/s, t)
    of the undeformed slave on the undeformed master moved by the drives."""
    out = []
    for ci, c in enumerate(model.contacts):
        ds, dm, vs, vm = drive[ci]
        P, Q = c["slave"].X + ds, c["master"].X + dm
        rows = []
        for i in range(P.shape[0]):
            seg = c["surface"].find(P[i], 0, positions=Q)[0]
            if seg < 0:
                rows.append(None)
                continue
            ab = c["segments"][seg]
            al, gap, _, tv = frames(P[i:i + 1], Q[ab[:1]], Q[ab[1:]])
            a = float(al[0])
            vrel = vs[i] - (1 - a) * vm[ab[0]] - a * vm[ab[1]]
            rows.append((int(seg), a, float(gap[0]), vrel, tv[0]))
        out.append(rows)
    return out


def _frame_of(ci, i, ref, law, vtol):
    seg, a, _, vrel, tv = ref
    w = float(tv @ vrel)
    if np.hypot(*vrel) <= vtol:
        return NodeFrame(ci, i, STICK, seg, 0.0, law, a)
    return NodeFrame(ci, i, SLIP_P if w > 0 else SLIP_M, seg, 1.0 if w > 0 else -1.0, law)


def _search(model, drive, frames_, eta):
    """Re-find the segment of each sliding node at the positions of ``eta``."""
    for fr in frames_:
        if fr.state == STICK:
            continue
        c = model.contacts[fr.interface]
        ds, dm = drive[fr.interface][:2]
        P = c["slave"].X[fr.node] + ds[fr.node] + c["slave"].free(eta)[fr.node]
        Q = c["master"].X + dm + c["master"].free(eta)
        seg = c["surface"].find(P, fr.seg, positions=Q)[0]
        if seg < 0:
            raise ModelError(f"steady state: slave node {int(c['slave'].nodes[fr.node])} of interface {fr.interface} "
                             f"left its master surface")
        fr.seg = int(seg)


class _PlaneGeometry:
    """The searches of a plane model's steady state (the segments of its interfaces)."""

    frame_of = staticmethod(_frame_of)

    def __init__(self, model):
        self.model = model

    def reference(self, drive):
        return _reference(self.model, drive)

    def search(self, drive, frames_, eta):
        _search(self.model, drive, frames_, eta)

    def gaps(self, drive, ci, eta):
        return _gaps(self.model, drive, ci, eta)

    def normal_forces(self, drive, frames_, eta, lam):
        """lambda_n (N) of each closed node."""
        out, k = [], 0
        for fr in frames_:
            out.append(lam[k] if fr.state != STICK else _stick_forces(self.model, drive, fr, eta, lam[k:k + 2])[0])
            k += fr.size
        return out


class _SolidGeometry(SurfaceGeometry):
    """:class:`SurfaceGeometry` with the normal forces of the active-set loop."""

    def normal_forces(self, drive, frames_, eta, lam):
        """lambda_n (N) of each closed node."""
        fr3 = {ci: self.frames(drive, ci, eta)[1:] for ci in {fr.interface for fr in frames_ if fr.state == STICK}}
        out, k = [], 0
        for fr in frames_:
            if fr.state == STICK:
                out.append(self.stick_forces(fr, lam[k:k + 3], [a[fr.node] for a in fr3[fr.interface]])[0])
            else:
                out.append(lam[k])
            k += fr.size
        return out


def _newton(model, geo, frames_, drive, f, eta, tol, max_iter):
    w2 = model.omega2
    m = sum(fr.size for fr in frames_)
    lam = np.zeros(m)
    n = model.n_modes
    zero = np.zeros(n)
    for it in range(1, max_iter + 1):
        geo.search(drive, frames_, eta)
        F, g = contact_forces(model, frames_, drive, eta, zero, lam)
        K, _, B, G = contact_derivatives(model, frames_, drive, eta, zero, lam, velocity=False)
        A = np.zeros((n + m, n + m))
        A[:n, :n] = np.diag(w2) + K
        A[:n, n:] = B.T
        A[n:, :n] = G
        r = np.r_[w2 * eta + F - f, g]
        try:
            step = np.linalg.solve(A, -r)
        except np.linalg.LinAlgError:
            raise ModelError("steady state: the equilibrium is singular (a body free to move that no closed "
                             "contact node holds: preload it onto its master or drive it)") from None
        eta, lam = eta + step[:n], lam + step[n:]
        size = max(np.abs(eta).max(initial=0.0), 1e-300)
        if it > 1 and np.abs(step[:n]).max(initial=0.0) <= tol * size:
            return eta, lam, it
        if not np.any(step):
            return eta, lam, it
    raise ConvergenceError(f"steady state: Newton's method did not converge in {max_iter} iterations")


def _imposed(model, drive, sliding_velocity):
    """The drives' node motions with ``sliding_velocity`` added to each slave node's velocity
    (m/s), and the largest imposed speed (m/s)."""
    if sliding_velocity is None:
        return drive, 0.0
    out, top = [], 0.0
    for ci, (c, (ds, dm, vs, vm)) in enumerate(zip(model.contacts, drive)):
        pts = c["slave"].X + ds
        try:
            V = sliding_velocity(pts) if callable(sliding_velocity) else sliding_velocity[ci]
            V = np.asarray(V, float)
        except (TypeError, ValueError, IndexError, KeyError):
            V = None
        if V is None or V.shape != vs.shape or not np.all(np.isfinite(V)):
            raise ParameterError(f"sliding_velocity must give ({vs.shape[0]}, {vs.shape[1]}) finite velocities (m/s) "
                                 f"for the slave nodes of interface {ci} (a callable of their positions (m) or one "
                                 f"array per interface)")
        out.append((ds, dm, vs + V, vm))
        top = max(top, float(np.abs(V).max(initial=0.0)))
    return out, top


def steady_state(model: MultibodyModel, t: float = 0.0, *, friction=None, sliding_velocity=None,
                 tol: float = 1e-11, max_iter: int = 50, max_passes: int = 30) -> SteadyState:
    """The preloaded steady sliding state of a multibody model (plane or solid bodies) at time
    ``t`` (s).

    Parameters
    ----------
    model : MultibodyModel
        Plane bodies with :class:`~fesub.contact.engine.interfaces.ContactInterface` (node to
        segment) or solid bodies with :class:`~fesub.contact.engine.surfaces.ContactInterface3D`
        (node to surface). The sliding comes from the drives (prescribed coordinates at constant
        velocities, m/s: a belt, a dragged pad) and/or ``sliding_velocity``.
    t : float
        Time (s) at which the drives' positions are taken.
    friction : law or float, optional
        A law (or a number: Coulomb mu) for every slave node instead of the interfaces' own laws
        (:mod:`fesub.contact.engine.friction`); a sweep over mu passes it.
    sliding_velocity : callable or sequence, optional
        A velocity (m/s) of each slave node relative to its master imposed on top of the drives'
        motion, as the steady sliding of a part whose motion the drives do not describe (a disc
        turning under pads: ``lambda X: np.cross([0, 0, omega], X)`` in the frame of the pads):
        ``f(X) -> V`` of the slave nodes' positions ``X`` (k, dim) in m (undeformed, moved by
        the drives), or one (k, dim) array per interface. Only its part in the master's tangent
        plane counts (the sliding direction and speed); it moves nothing (a steady state).
    tol : float
        Newton's convergence on the step of the modal coordinates, relative to their largest
        value (dimensionless; the force residual is checked after it).
    max_iter, max_passes : int
        Newton iterations per active set; changes of the active set (a closed node pulled, an
        open node pushed through its master).

    Returns
    -------
    SteadyState. Each slave node on its master with a non-positive gap in the reference
    configuration starts closed: sliding when the imposed motion moves it relative to the
    master's material point (its sliding direction: along +-t in a plane model, the tangential
    part of that relative velocity in a solid one), sticking otherwise; a closed node pulled by
    its master (lambda_n < 0) opens, an open node pushed through it closes, until no node
    changes. :class:`ModelError` if a sticking node's force leaves the friction cone or a
    drive's velocity is not constant.
    """
    if not isinstance(model, MultibodyModel):
        raise ParameterError(f"model must be a MultibodyModel, got {type(model).__name__}")
    speeds = [v for b in model.bodies for v in b.prescribed.values()]
    if any(callable(v) for v in speeds):
        raise ModelError("the steady sliding state needs drives at constant velocities (prescribed as floats, m/s)")
    t = check_real("t (s)", t)
    max_iter, max_passes = check_count("max_iter", max_iter, lo=1), check_count("max_passes", max_passes, lo=1)
    drive, top = _imposed(model, _drive(model, t), sliding_velocity)
    vtol = 1e-9 * max([abs(v) for v in speeds] + [top, 0.0])
    laws = _node_laws(model, friction)
    geo = _SolidGeometry(model) if model.dim == 3 else _PlaneGeometry(model)
    ref = geo.reference(drive)
    size = max(max(np.ptp(c["master"].X, axis=0).max(), np.ptp(c["slave"].X, axis=0).max()) for c in model.contacts) \
        if model.contacts else 1.0
    closed = [[r is not None and r[2] <= 1e-9 * size for r in rows] for rows in ref]
    f = model.modal_force(t)
    eta = np.zeros(model.n_modes)
    for passes in range(1, max_passes + 1):
        frames_ = [geo.frame_of(ci, i, r, laws[ci][i], vtol) for ci, rows in enumerate(ref)
                   for i, r in enumerate(rows) if closed[ci][i]]
        eta, lam, it = _newton(model, geo, frames_, drive, f, eta, tol, max_iter)
        changed = False
        for fr, ln in zip(frames_, geo.normal_forces(drive, frames_, eta, lam)):
            if ln < 0:
                closed[fr.interface][fr.node] = False
                changed = True
        for ci, rows in enumerate(ref):
            gaps = geo.gaps(drive, ci, eta)
            for i, r in enumerate(rows):
                if r is not None and not closed[ci][i] and gaps[i] < -1e-9 * size:
                    closed[ci][i] = True
                    changed = True
        if not changed:
            break
    else:
        raise ConvergenceError(f"steady state: the active set did not settle in {max_passes} passes")
    if model.dim == 3:
        return _finish3d(model, geo, t, drive, frames_, eta, lam, it, f, laws)
    return _finish(model, t, drive, frames_, eta, lam, it, f, laws)


def _stick_forces(model, drive, fr, eta, mu_xy):
    """(lambda_n, lambda_t) in N of a sticking node: its bond force on the slave along the
    deformed master segment's normal and tangent."""
    x, _, _ = node_coordinates(model, drive, fr, eta, np.zeros(model.n_modes))
    _, _, nv, tv = frames(x[None, 4:6], x[None, 0:2], x[None, 2:4])
    force = -np.asarray(mu_xy)
    return float(force @ nv[0]), float(force @ tv[0])


def _gaps(model, drive, ci, eta):
    """Gap (m) of every slave node of interface ``ci`` from the deformed master (inf off it)."""
    c = model.contacts[ci]
    ds, dm = drive[ci][:2]
    P, Q = c["slave"].X + ds + c["slave"].free(eta), c["master"].X + dm + c["master"].free(eta)
    out = np.full(P.shape[0], np.inf)
    for i in range(P.shape[0]):
        seg, _, gap, _ = c["surface"].find(P[i], 0, positions=Q)
        if seg >= 0:
            out[i] = gap
    return out


def _residual(model, frames_, drive, eta, lam, f):
    """The force residual (N) of the state and its scale; ConvergenceError above 1e-8 of it."""
    F, _ = contact_forces(model, frames_, drive, eta, np.zeros(model.n_modes), lam)
    res = float(np.abs(model.omega2 * eta + F - f).max(initial=0.0))
    scale = np.abs(f).max(initial=0.0) + np.abs(F).max(initial=0.0) + 1e-300
    if res > 1e-8 * scale:
        raise ConvergenceError(f"steady state: force residual {res:.3g} N (of {scale:.3g} N)")
    return res


def _refuse_slip(j, lt, ln, mu):
    raise ModelError(f"steady state: sticking node {j} needs |lambda_t| = {lt:.4g} N above "
                     f"mu_s lambda_n = {mu * ln:.4g} N (it would slide)")


def _finish(model, t, drive, frames_, eta, lam, it, f, laws):
    m_all = sum(c["slave"].nodes.size for c in model.contacts)
    start = np.cumsum([0] + [c["slave"].nodes.size for c in model.contacts])
    state = np.full(m_all, OPEN, np.int64)
    ln, lt, spd = np.zeros(m_all), np.zeros(m_all), np.zeros(m_all)
    mu = np.array([law.mu_static for rows in laws for law in rows], float)
    gap = np.concatenate([_gaps(model, drive, ci, eta) for ci in range(len(model.contacts))] or [np.zeros(0)])
    k = 0
    for fr in frames_:
        j = start[fr.interface] + fr.node
        state[j] = fr.state
        if fr.state == STICK:
            ln[j], lt[j] = _stick_forces(model, drive, fr, eta, lam[k:k + 2])
            if abs(lt[j]) > mu[j] * ln[j] * (1 + 1e-9):
                _refuse_slip(j, abs(lt[j]), ln[j], mu[j])
        else:
            x, xd, _ = node_coordinates(model, drive, fr, eta, np.zeros(model.n_modes))
            *_, spd[j], mu[j] = slide_terms(x, xd, fr)
            ln[j], lt[j] = lam[k], -fr.sign * mu[j] * lam[k]
        k += fr.size
    res = _residual(model, frames_, drive, eta, lam, f)
    return SteadyState(float(t), eta, frames_, lam, state, ln, lt, gap, spd, mu, it, res, drive)


def _finish3d(model, geo, t, drive, frames_, eta, lam, it, f, laws):
    m_all = sum(c["slave"].nodes.size for c in model.contacts)
    start = np.cumsum([0] + [c["slave"].nodes.size for c in model.contacts])
    state = np.full(m_all, OPEN, np.int64)
    ln, lt, spd, dirs = np.zeros(m_all), np.zeros((m_all, 2)), np.zeros(m_all), np.zeros((m_all, 3))
    mu = np.array([law.mu_static for rows in laws for law in rows], float)
    per = [geo.frames(drive, ci, eta) for ci in range(len(model.contacts))]
    gap = np.concatenate([p[0] for p in per] or [np.zeros(0)])
    k = 0
    for fr in frames_:
        j = start[fr.interface] + fr.node
        frame = [a[fr.node] for a in per[fr.interface][1:]]
        state[j] = fr.state
        if fr.state == STICK:
            ln[j], lt[j] = geo.stick_forces(fr, lam[k:k + 3], frame)
            if np.hypot(*lt[j]) > mu[j] * ln[j] * (1 + 1e-9):
                _refuse_slip(j, np.hypot(*lt[j]), ln[j], mu[j])
        else:
            spd[j], mu[j], dirs[j] = slide_state(model, drive, fr, eta)
            ln[j] = lam[k]
            lt[j] = -mu[j] * lam[k] * np.array([dirs[j] @ frame[1], dirs[j] @ frame[2]])
        k += fr.size
    res = _residual(model, frames_, drive, eta, lam, f)
    return SteadyState(float(t), eta, frames_, lam, state, ln, lt, gap, spd, mu, it, res, drive, dirs)
