"""The node-to-surface terms of a solid (3D) multibody sliding state and their derivatives.

The 3D half of :mod:`fesub.contact.analyses.linearised` (whose public functions take plane and
solid models alike and call these for a model of solid bodies): for each closed slave node ``P``
of a :class:`~fesub.contact.engine.surfaces.ContactInterface3D` on a master face with nodes
``x_j`` (k of them; tri3, quad4, tri6, quad8, quad9), the local coordinates are
``x = [x_1, ..., x_k, P]`` (3(k+1), m) and

* the contact point is the closest point ``x_c = sum_j N_j(a, b) x_j`` of the face, its
  parameters ``(a, b)`` solving ``(P - x_c) . x_,a = (P - x_c) . x_,b = 0`` (Newton's method on
  the face's polynomial, which continues past its edges: a node on an edge takes the face the
  search reported, a one-sided linearisation there);
* the normal ``n = x_,a x x_,b / |x_,a x x_,b|`` (outwards), the gap ``n . (P - x_c)`` (m);
* a **sliding** node carries one multiplier, the normal force ``lambda_n`` (N), and the force on
  the slave ``lambda_n p``, ``p = n - mu(v) e``, with ``v_rel = P' - sum_j N_j x_j'`` its
  velocity relative to the master's material point, ``v_t = (I - n n') v_rel`` its tangential
  part, the slip speed ``v = |v_t|`` (m/s) and the sliding direction ``e = v_t / v`` in the
  tangent plane (the master receives ``-N_j lambda_n p`` at its nodes); the generalised force
  over ``x`` is ``b lambda_n``, ``b = [N_1 p, ..., N_k p, -p]`` (with the sign of
  ``F = -(contact forces)``: ``b`` equals the gradient of ``-gap`` at mu = 0);
* a **sticking** node is bonded to the master point at its reference parameters (three
  multipliers, the bond force's components in x, y, z; linear, no geometric stiffness).

Derivatives of ``b`` by the chain rule through the parameters (the closest-point Hessian
``H_ij = x_,i . x_,j - (P - x_c) . x_,ij``), the shape functions, the normal and the sliding
direction: over the positions, the geometric stiffness (the normal and friction forces turn
with the face, move with the contact point, the sliding direction turns with the normal and
with the master's velocity at the moving contact point) and the law's slope; over the
velocities

    d p / d v_rel = -(mu / v) (I - e e') (I - n n') - mu'(v) e e' (I - n n'),

the first term the damping ``mu lambda_n / v`` across the sliding direction in the tangent
plane (a transverse slip turns the friction force), the second the slope of a
velocity-dependent law along it. :class:`SurfaceGeometry` does the searches of the steady
state (its own copy of each master surface, moved to the deformed positions).

Units: SI (m, N, s).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sps

from ...errors import ModelError
from ..engine.contacts3d import SLIP, STICK
from ..geometry import FaceSet
from ..geometry.faces import FACE_TYPES

__all__ = ["NodeFrame3D", "SurfaceGeometry", "forces3d", "derivatives3d"]

_I3 = np.eye(3)


@dataclass(eq=False)
class NodeFrame3D:
    """A closed node of a solid model's steady state: interface ``interface``, slave node
    ``node`` (index among the interface's slave nodes), ``state`` 1 (stick) or 2 (slip; the
    codes of :mod:`fesub.contact.engine.contacts3d`), master ``face`` (the interface's
    numbering), its parameters ``param`` (the contact point of a sliding node, updated by the
    searches; the bonded master point of a sticking one) and the friction ``law``; ``size`` its
    multipliers: 1 sliding (normal force), 3 sticking (x, y, z force)."""

    interface: int
    node: int
    state: int
    face: int
    param: np.ndarray
    law: object

    @property
    def size(self) -> int:
        # documented in the class docstring (one 'size' target in the docs)
        return 3 if self.state == STICK else 1


def face_nodes(c) -> np.ndarray:
    """(faces, 9) master nodes of each face of interface entry ``c`` in its numbering (-1 past
    a face's last node)."""
    fs = c["faces"]
    return fs.conn[np.argsort(fs.order)]


def _skew(a):
    return np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])


def _closest(faces, face, param, Xm, P, max_iter: int = 30):
    """Parameters (q, 2) of the closest points of the nodes ``P`` (q, 3) on their faces ``face``
    (q,) (each face's polynomial, not clamped; every face of k nodes ``Xm`` (q, k, 3)), from
    ``param`` (q, 2), and the shape values with derivatives there ((6, q, k)): Newton's method on
    all of them at once, each node's iterations stopped where its own step is below 1e-15 of
    its parameters."""
    face = np.asarray(face, np.int64)
    k = Xm.shape[1]
    rs = np.array(param, float).reshape(-1, 2)
    live = np.ones(face.size, bool)
    for _ in range(max_iter):
        on = np.flatnonzero(live)
        D = faces.shape_derivatives(face[on], rs[on])[:, :, :k]
        xc, xa, xb, xaa, xab, xbb = np.einsum("dqk,qkc->dqc", D, Xm[on])
        u = P[on] - xc
        h11 = np.einsum("qc,qc->q", xa, xa) - np.einsum("qc,qc->q", u, xaa)
        h12 = np.einsum("qc,qc->q", xa, xb) - np.einsum("qc,qc->q", u, xab)
        h22 = np.einsum("qc,qc->q", xb, xb) - np.einsum("qc,qc->q", u, xbb)
        g1, g2 = np.einsum("qc,qc->q", u, xa), np.einsum("qc,qc->q", u, xb)
        det = h11 * h22 - h12 * h12
        step = np.column_stack([(h22 * g1 - h12 * g2) / det, (h11 * g2 - h12 * g1) / det])
        rs[on] += step
        live[on[np.abs(step).max(axis=1) <= 1e-15 * (1.0 + np.abs(rs[on]).max(axis=1))]] = False
        if not live.any():
            break
    return rs, faces.shape_derivatives(face, rs)[:, :, :k]


def _contact_points(model, frames_, pos, fn) -> dict:
    """Shape values with derivatives (6, k) at the closest point of every sliding frame of
    ``frames_``, by its index there: one :func:`_closest` for all the sliding nodes of an
    interface whose faces have the same number of nodes."""
    groups: dict = {}
    for j, fr in enumerate(frames_):
        if fr.state != STICK:
            k = int(np.count_nonzero(fn[fr.interface][fr.face] >= 0))
            groups.setdefault((fr.interface, k), []).append(j)
    out = {}
    for (ci, k), idx in groups.items():
        slaves, masters = pos[ci][:2]
        face = np.array([frames_[j].face for j in idx])
        D = _closest(model.contacts[ci]["faces"], face, [frames_[j].param for j in idx], masters[fn[ci][face][:, :k]],
                     slaves[[frames_[j].node for j in idx]])[1]
        out.update((j, D[:, q, :]) for q, j in enumerate(idx))
    return out


def _slide(D, Xm, P, Vm, Vp, law, derivatives=True):
    """One sliding node: b (m,), -gap (m), and with ``derivatives`` db/dx (1/m), db/dx' (s/m),
    d(-gap)/dx (1), the slip speed v (m/s) and mu; x = [master face nodes, slave] (m = 3(k+1))."""
    N, Na, Nb, Naa, Nab, Nbb = D
    k = N.size
    xc, xa, xb, xaa, xab, xbb = D @ Xm
    u = P - xc
    c = np.cross(xa, xb)
    cn = np.linalg.norm(c)
    n = c / cn
    vrel = Vp - N @ Vm
    vt = vrel - n * (n @ vrel)
    v = float(np.linalg.norm(vt))
    e = vt / v if v > 0 else np.zeros(3)
    mu = float(law.coefficient(v))
    p = n - mu * e
    b = np.concatenate([np.outer(N, p).ravel(), -p])
    g = -float(n @ u)
    if not derivatives:
        return b, g, v, mu, e
    E = np.kron(np.r_[-N, 1.0][None, :], _I3)         # d u / d x at fixed parameters (3, m)
    Ea = np.kron(np.r_[Na, 0.0][None, :], _I3)        # d x_,a / d x at fixed parameters
    Eb = np.kron(np.r_[Nb, 0.0][None, :], _I3)
    H = np.array([[xa @ xa - u @ xaa, xa @ xb - u @ xab], [xa @ xb - u @ xab, xb @ xb - u @ xbb]])
    Jrs = np.linalg.solve(H, np.vstack([xa @ E + u @ Ea, xb @ E + u @ Eb]))    # (2, m)
    JN = np.outer(Na, Jrs[0]) + np.outer(Nb, Jrs[1])                            # (k, m)
    dxa = Ea + np.outer(xaa, Jrs[0]) + np.outer(xab, Jrs[1])
    dxb = Eb + np.outer(xab, Jrs[0]) + np.outer(xbb, Jrs[1])
    Jn = (_I3 - np.outer(n, n)) @ (-_skew(xb) @ dxa + _skew(xa) @ dxb) / cn
    Ju = E - np.outer(xa, Jrs[0]) - np.outer(xb, Jrs[1])
    dg = -(n @ Ju + u @ Jn)
    Pt = _I3 - np.outer(n, n)
    Jvt_x = Pt @ (-(Vm.T @ JN)) - np.outer(n, vrel @ Jn) - (n @ vrel) * Jn
    Jvt_v = Pt @ E
    mu1 = float(law.slope(v))
    if v > 0:
        Pe = (_I3 - np.outer(e, e)) / v
        Jp_x = Jn - mu * Pe @ Jvt_x - mu1 * np.outer(e, e @ Jvt_x)
        Jp_v = -mu * Pe @ Jvt_v - mu1 * np.outer(e, e @ Jvt_v)
    else:
        Jp_x, Jp_v = Jn, np.zeros_like(Jvt_v)
    m = 3 * (k + 1)
    Jb_x = np.vstack([(N[:, None, None] * Jp_x[None] + p[None, :, None] * JN[:, None, :]).reshape(3 * k, m), -Jp_x])
    Jb_v = np.vstack([(N[:, None, None] * Jp_v[None]).reshape(3 * k, m), -Jp_v])
    return b, g, Jb_x, Jb_v, dg, v, mu


def _positions(model, drive, eta, deta):
    """Per interface: slave and master positions (m) and velocities (m/s) at ``eta``, ``deta``."""
    out = []
    for ci, c in enumerate(model.contacts):
        ds, dm, vs, vm = drive[ci]
        out.append((c["slave"].X + ds + c["slave"].free(eta), c["master"].X + dm + c["master"].free(eta),
                    vs + c["slave"].free(deta), vm + c["master"].free(deta)))
    return out


def _node_keys(fr, fn) -> list:
    """The FE nodes (interface, 0 master / 1 slave, node) of closed node ``fr``'s local
    coordinates ``x = [face nodes, slave]``."""
    conn = fn[fr.interface][fr.face]
    return [(fr.interface, 0, int(j)) for j in conn[conn >= 0]] + [(fr.interface, 1, fr.node)]


def _node_rows(model, keys) -> np.ndarray:
    """(3 len(keys), n_modes) rows of the FE nodes ``keys`` (:func:`_node_keys`) over the modal
    coordinates (m per unit modal coordinate)."""
    R = np.zeros((3 * len(keys), model.n_modes))
    for q, (ci, role, j) in enumerate(keys):
        part = model.contacts[ci]["slave" if role else "master"]
        if part.R.shape[2]:
            R[3 * q:3 * q + 3, part.cols] = part.R[j]
    return R


def _node(model, fr, pos, fn, derivatives, D=None):
    """The local terms of closed node ``fr``: (rows R, local results); ``D`` its contact point's
    shape values with derivatives when known (:func:`_contact_points`)."""
    c = model.contacts[fr.interface]
    conn = fn[fr.interface][fr.face]
    conn = conn[conn >= 0]
    slaves, masters, v_slaves, v_masters = pos[fr.interface]
    P, Q, Vp, Vm = slaves[fr.node], masters[conn], v_slaves[fr.node], v_masters[conn]
    R = _node_rows(model, _node_keys(fr, fn))
    if fr.state == STICK:
        N = c["faces"].shape_values([fr.face], fr.param[None])[0, :conn.size]
        T = np.kron(np.r_[-N, 1.0][None, :], _I3)
        return R, (T, T @ np.r_[Q.ravel(), P])
    if D is None:
        D = _closest(c["faces"], [fr.face], fr.param, Q[None], P[None])[1][:, 0]
    return R, _slide(D, Q, P, Vm, Vp, fr.law, derivatives)


def forces3d(model, frames_, drive, eta, deta, lam):
    """F (n_modes,) and the constraints, as :func:`fesub.contact.analyses.contact_terms.contact_forces`."""
    F = np.zeros(model.n_modes)
    pos = _positions(model, drive, eta, deta)
    fn = [face_nodes(c) for c in model.contacts]
    points = _contact_points(model, frames_, pos, fn)
    out, k = [], 0
    for j, fr in enumerate(frames_):
        R, loc = _node(model, fr, pos, fn, False, points.get(j))
        if fr.state == STICK:
            T, gap = loc
            F += R.T @ (T.T @ lam[k:k + 3])
            out.extend(gap)
        else:
            b, g = loc[:2]
            F += R.T @ b * lam[k]
            out.append(g)
        k += fr.size
    return F, np.array(out)


def derivatives3d(model, frames_, drive, eta, deta, lam, *, velocity: bool = True):
    """(dF/deta, dF/deta', B, G), as :func:`fesub.contact.analyses.contact_terms.contact_derivatives`;
    dF/deta' None with ``velocity=False``.

    The sliding nodes' local matrices (over ``x = [face nodes, slave]``) are first summed over the
    FE nodes they share (a master node is on the faces of up to four slave nodes), then carried
    to the modal coordinates by one product ``R' A R`` with ``R`` the rows of those FE nodes
    alone: on the disc brake 176 FE nodes instead of 280 node blocks (56 sliding nodes on faces
    of four nodes), and as many times fewer operations in that product."""
    n = model.n_modes
    pos = _positions(model, drive, eta, deta)
    fn = [face_nodes(c) for c in model.contacts]
    points = _contact_points(model, frames_, pos, fn)
    index: dict = {}
    rows, cols, Kv, Cv, B, G = [], [], [], [], [], []
    k = 0
    for j, fr in enumerate(frames_):
        R, loc = _node(model, fr, pos, fn, True, points.get(j))
        if fr.state == STICK:
            st = loc[0] @ R
            B.extend(st)
            G.extend(st)
        else:
            b, _, Jb_x, Jb_v, dg, _, _ = loc
            at = np.array([3 * index.setdefault(key, len(index)) + c for key in _node_keys(fr, fn) for c in range(3)])
            rows.append(np.repeat(at, at.size))
            cols.append(np.tile(at, at.size))
            Kv.append((lam[k] * Jb_x).ravel())
            Cv.append((lam[k] * Jb_v).ravel())
            B.append(b @ R)
            G.append(dg @ R)
        k += fr.size
    if index:
        RU = _node_rows(model, list(index))
        shape = (RU.shape[0],) * 2
        rc = (np.concatenate(rows), np.concatenate(cols))
        K = RU.T @ (sps.csr_matrix((np.concatenate(Kv), rc), shape=shape) @ RU)
        C = RU.T @ (sps.csr_matrix((np.concatenate(Cv), rc), shape=shape) @ RU) if velocity else None
    else:
        K, C = np.zeros((n, n)), (np.zeros((n, n)) if velocity else None)
    return K, C, np.array(B, float).reshape(-1, n), np.array(G, float).reshape(-1, n)


class SurfaceGeometry:
    """The searches of a solid model's steady state: a copy of every interface's master surface
    (moved to the positions asked for; the model's own stays as prepared)."""

    def __init__(self, model):
        self.model = model
        self.fn = [face_nodes(c) for c in model.contacts]
        self.surfaces = []
        for c, conn in zip(model.contacts, self.fn):
            fs = c["faces"]
            ftype = fs.ftype[np.argsort(fs.order)]
            blocks = {name: conn[ftype == code, :k] for name, (code, k) in FACE_TYPES.items() if np.any(ftype == code)}
            self.surfaces.append(FaceSet(c["master"].X, blocks, reach=fs.reach, tangent_ref=fs.tangent_ref))

    def project(self, ci, P, Q):
        """Projection (:class:`~fesub.contact.geometry.FaceProjection`) of the slave positions
        ``P`` on interface ``ci``'s master at ``Q`` (m)."""
        fs = self.surfaces[ci]
        fs.refit(Q)
        return fs.project(P)

    def reference(self, drive):
        """Per interface, per slave node: (face, parameters, gap in m, relative velocity (3,) in
        m/s, normal) of the undeformed slave on the undeformed master moved by the drives (None
        off the master)."""
        out = []
        for ci, c in enumerate(self.model.contacts):
            ds, dm, vs, vm = drive[ci]
            pr = self.project(ci, c["slave"].X + ds, c["master"].X + dm)
            N = c["faces"].shape_values(np.maximum(pr.face, 0), pr.param)
            rows = []
            for i in range(pr.face.size):
                if not pr.faces_master[i]:
                    rows.append(None)
                    continue
                conn = self.fn[ci][pr.face[i]]
                vrel = vs[i] - N[i, conn >= 0] @ vm[conn[conn >= 0]]
                rows.append((int(pr.face[i]), pr.param[i].copy(), float(pr.gap[i]), vrel, pr.normal[i].copy()))
            out.append(rows)
        return out

    @staticmethod
    def frame_of(ci, i, ref, law, vtol):
        """The closed node's frame: sticking when the imposed motion moves it less than ``vtol``
        (m/s) along the master's tangent plane, sliding otherwise."""
        face, param, _, vrel, n = ref
        vt = vrel - n * (n @ vrel)
        state = STICK if np.linalg.norm(vt) <= vtol else SLIP
        return NodeFrame3D(ci, i, state, face, param.copy(), law)

    def _deformed(self, drive, ci, eta):
        c = self.model.contacts[ci]
        ds, dm = drive[ci][:2]
        return c["slave"].X + ds + c["slave"].free(eta), c["master"].X + dm + c["master"].free(eta)

    def search(self, drive, frames_, eta):
        """Find again the face and parameters of each sliding node at ``eta``."""
        for ci in {fr.interface for fr in frames_ if fr.state != STICK}:
            pr = self.project(ci, *self._deformed(drive, ci, eta))
            for fr in frames_:
                if fr.interface != ci or fr.state == STICK:
                    continue
                if not pr.faces_master[fr.node]:
                    c = self.model.contacts[ci]
                    raise ModelError(f"steady state: slave node {int(c['slave'].nodes[fr.node])} of interface {ci} "
                                     f"left its master surface")
                fr.face, fr.param = int(pr.face[fr.node]), pr.param[fr.node].copy()

    def gaps(self, drive, ci, eta):
        """Gap (m) of every slave node of interface ``ci`` from the deformed master (inf off it)."""
        return self.frames(drive, ci, eta)[0]

    def frames(self, drive, ci, eta):
        """(gap (m; inf off the master), n, t1, t2) of every slave node of interface ``ci``."""
        pr = self.project(ci, *self._deformed(drive, ci, eta))
        return np.where(pr.faces_master, pr.gap, np.inf), pr.normal, pr.tangent1, pr.tangent2

    @staticmethod
    def stick_forces(fr, lam, frame):
        """(lambda_n, (lambda_t1, lambda_t2)) in N of a sticking node: its bond force on the
        slave (``-lam``) in the node's frame ``frame`` = (n, t1, t2)."""
        f = -np.asarray(lam, float)
        return float(f @ frame[0]), np.array([f @ frame[1], f @ frame[2]])


def slide_state(model, drive, fr, eta):
    """(slip speed (m/s), coefficient, sliding direction (3,)) of sliding node ``fr`` at ``eta``
    (no perturbation velocity)."""
    pos = _positions(model, drive, eta, np.zeros(model.n_modes))
    _, (_, _, v, mu, e) = _node(model, fr, pos, [face_nodes(c) for c in model.contacts], False)
    return v, mu, e
