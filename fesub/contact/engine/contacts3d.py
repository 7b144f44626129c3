"""A node-to-surface interface between solid bodies in the stepper: preparation, search, rows,
the exact friction-cone solve of a step, close of the step.

:func:`prepare_surface` turns a :class:`~fesub.contact.engine.surfaces.ContactInterface3D` into the
model's contact entry (slave and master :class:`~fesub.contact.engine.nodes.NodeRows`, the master
:class:`~fesub.contact.geometry.FaceSet` over the master nodes, the friction laws), refusing a
slave set that faces no master face. :class:`InterfaceState3D` holds an interface over a march:
each step it moves the master faces to their predicted positions (:meth:`FaceSet.refit`), finds
every slave node's closest point through a :class:`~fesub.contact.geometry.SlaveTracker`
(candidate faces kept within a margin), builds the three rows per node (normal, t1, t2; the master
point interpolated by the face's shape functions) and closes the step (gaps, slip vectors, states,
works). :func:`contact_step3d` solves the step's frictional contact problem over all the 3D
interfaces of a model.

The step's problem, with ``J`` the (3k, n_modes) rows of the k active nodes, ``b`` their
predicted gaps and slips (m) and unit modal masses: ``y = b + h^2 J J' lambda`` (m) at the end of
the step, lambda the contact forces (N). Divided by h it is the cone problem of
:mod:`~fesub.contact.engine.cone` in velocities: ``u = W lambda + q`` with ``W = h J J'`` (m/s
per N) and ``q = b / h`` (m/s): open (lambda = 0, u_n >= 0), stick (u = 0, |lambda_t| <= mu_s
lambda_n) or slip (u_n = 0, lambda_t = -mu(|u_t|) lambda_n u_t/|u_t|, the slip speed |u_t| the
node's slip of the step over h). It is solved by the projected block Gauss-Seidel of the ``cone``
kernel on the rows themselves, given as each node's frame times the rows of its components
(``block_gs_frames``): neither ``W`` nor ``J`` is formed; the modal impulse ``z = h J' lambda``
is updated node by node, each node's 3 x 3 block ``F_i (h D_i D_i') F_i'`` from the Gram matrix
of its components' rows ``D_i`` and its problem solved exactly. Each node's rows are swept over
its own columns only: those of its slave's group and, if its master has modes, its master's (the
window of its interface), so that a sweep costs O(k n_window), whatever the other bodies' modes.
On one interface whose master has no modes, ``D_i`` are the slave's own modal rows, fixed over
the march: used in place, their Gram matrices formed once; when every node was solved at the
last step's end and is again, with the same frame (a flat rigid master) and its force as the
warm start, the sweeps start from that step's ``diag(w) J' lambda`` instead of forming it (a
pass over the rows less; formed again every :data:`_REFRESH` steps, so that its round-off stays
that of a few steps). On several interfaces whose masters have no modes, the slave rows of all
are stacked once (fixed too: their Gram matrices formed once, the sweeps started from the last
step's modal impulse alike). Nodes with a Python-callable law
(:class:`~fesub.contact.engine.friction.UserLaw`) send the step's sweeps to Python over the dense
``W`` (the slower path). The close of the step (gaps, forces, slip vectors and the works of every node)
is one pass of the ``cone`` kernel's ``close_nodes``; the node displacements at the step's end
and at the next step's prediction are formed in one product over the nodes' rows
(:meth:`InterfaceState3D.displacements`, the stepper predicting the next step with the close of
this one). The step loop itself is Python (the compiled step loop is 2D); its cost grows linearly
with the active nodes (10 to 1000) and is compared with the 2D engine's step in
benchmarks/test_bench_contact3d.py.

States after a step: 0 open, 1 stick, 2 slip (the slip direction is the slip velocity vector).

Units: SI (m, N, s).
"""

from __future__ import annotations

import numpy as np

from ... import _backend
from ...errors import ModelError
from ..geometry import FaceSet
from .cone import solve_coupled
from .friction import node_laws
from .nodes import NodeRows

__all__ = ["prepare_surface", "InterfaceState3D", "contact_step3d", "OPEN", "STICK", "SLIP"]

#: state codes of a 3D contact node after a step
OPEN, STICK, SLIP = 0, 1, 2
#: most passes of the active-set loop of a step
_PASSES = 50
#: steps over which the modal impulse of the sweeps is carried from one step's end to the next
#: step's start (rows, frames and forces unchanged: the same vector, up to the round-off of its
#: updates) before it is formed again from the forces, so that its round-off stays bounded
_REFRESH = 64
#: a direction no free coordinate moves (the out-of-plane tangent of a model held in its plane)
#: has a zero row: its diagonal of W gets this fraction of the largest diagonal entry, so that
#: every node's 3 x 3 block is definite; its velocity is then q (0: nothing moves it) and its
#: force -q / W_rr, 0 to round-off
_FLOOR = 1e-12


def prepare_surface(model, itf, index: int) -> dict:
    """The contact entry of a 3D interface in ``model`` (see the module docstring).

    Raises
    ------
    ModelError
        A slave node that is a node of its own master surface; a slave set that faces no master
        face (every slave beyond the faces' reach or past the master's free border).
    MeshError
        Master faces of zero area, inconsistent orientation or non-manifold edges.
    """
    s, m = model.body_index(itf.slave_body), model.body_index(itf.master_body)
    label = f"interface {itf.name or index}"
    whole = itf.face_set(model.bodies[m].X)
    nodes = np.unique(whole.conn[whole.conn >= 0])
    if s == m:
        own = np.intersect1d(itf.slave_nodes, nodes)
        if own.size:
            raise ModelError(f"{label}: slave nodes {own[:5].tolist()} are nodes of their own master "
                             "surface (a node is never in contact with a face it belongs to)")
    loc = np.full(int(nodes.max()) + 1, -1, np.int64)
    loc[nodes] = np.arange(nodes.size)
    slave, master = NodeRows(model, s, itf.slave_nodes), NodeRows(model, m, nodes)
    conn = np.where(whole.conn >= 0, loc[np.maximum(whole.conn, 0)], -1)
    from ..geometry.faces import FACE_TYPES

    blocks = {name: conn[whole.ftype == code, :k] for name, (code, k) in FACE_TYPES.items()
              if np.any(whole.ftype == code)}
    faces = FaceSet(master.X, blocks, reach=whole.reach, tangent_ref=whole.tangent_ref)
    try:
        faces.check_slaves(slave.X)
    except ModelError as e:
        raise ModelError(f"{label}: {e}") from None
    return {"interface": itf, "slave_body": s, "master_body": m, "slave": slave, "master": master,
            "faces": faces, "mu": itf.mu, "geometry": "deformed", "dim": 3,
            "laws": (itf.law_code, itf.law_params, itf.law_user)}


class InterfaceState3D:
    """Per-step state of one 3D interface: node displacements at n-1 and n (total and driven
    part), the slave tracker, the forces and states of the previous step.

    Parameters
    ----------
    model : MultibodyModel
    c : dict
        The interface's entry of ``model.contacts`` (from :func:`prepare_surface`).
    eta : (n_modes,) array
        Modal coordinates at t = 0.
    up : list of arrays
        Prescribed displacements (m) of every body at t = 0.
    h : float
        Time step (s).
    """

    def __init__(self, model, c, eta, up, h):
        self.c, self.model, self.h = c, model, h
        self.mu = c["mu"]
        m = self.mu.size
        self.code, self.params, self.user = c["laws"]
        #: the law of each node (the Python path of a user law needs them; else the arrays do)
        self.per_node = node_laws(c["interface"].laws, m) if self.user.any() else [None] * m
        self.faces = c["faces"]
        #: the ``cone`` kernel (compiled or its twin), chosen once for the march
        self.kernel = _backend.kernels("cone")
        #: the master nodes of each face, in the numbering of the projections
        self.face_nodes = self.faces.conn[np.argsort(self.faces.order)]
        # nodes of the largest face of the set: the columns of the shape values that can be nonzero
        self._width = int((self.face_nodes >= 0).sum(1).max()) if self.face_nodes.size else 1
        #: a master that never moves (no modes, no drive): its faces stay where they were
        #: prepared and the relative motion of a slave is its own
        self.still = not c["master"].R.shape[2] and not c["master"].drivers
        # the displacements of a side that nothing drives (and of a still master: none at all),
        # read only: shared by every step
        self._zero = tuple(np.zeros((side.nodes.size, 3)) for side in (c["slave"], c["master"]))
        for z in self._zero:
            z.flags.writeable = False
        #: the five states of the relative motions that close a step (see :meth:`advance`), kept
        #: over the steps for the slave and the master nodes
        self._S, self._M = np.empty((5, m, 3)), np.empty((5, c["master"].nodes.size, 3))
        #: which of those states change from step to step: the slave's displacements (0-2) and,
        #: for a driven side, its driven parts (3, 4); a still master's stay zero, as do the
        #: driven parts of an undriven side (set once here)
        self._moving = (range(5) if c["slave"].drivers else range(3),
                        () if self.still else (range(5) if c["master"].drivers else range(3)))
        self._S[3:], self._M[:] = 0.0, 0.0
        #: the master node positions of a still master (the same every step)
        self._Q = c["master"].X + self._zero[1] if self.still else None
        #: the two states of the joint product of :meth:`displacements`
        self._E = np.empty((2, model.n_modes))
        self.tracker = self.faces.tracker(m)
        self.lam = np.zeros((m, 3))
        self.state = np.zeros(m, np.int64)
        self.case = np.zeros(m, np.int64)
        self.left = False
        self.on = np.zeros(m, bool)
        self._ahead = None
        self.us, self.ds = self.displacements(eta, up)
        self.us_prev, self.ds_prev = self.us, self.ds
        #: storage for the rows of a step (see :func:`contact_step3d`)
        self.buffer = np.zeros(0)
        #: the columns where this interface's rows can be nonzero, [start, stop): the slave's
        #: group's, and its master's if that has modes (each group's modal coordinates are one
        #: block of the model's)
        sc, mc = c["slave"].cols, c["master"].cols
        self.window = ((sc.start, sc.stop) if not c["master"].R.shape[2] else
                       (min(sc.start, mc.start), max(sc.stop, mc.stop)))
        #: the rows of several interfaces whose masters have no modes, fixed over the march (see
        #: :func:`_stack`): built at the first step, held by the first interface
        self.stack = None
        #: the 3 x 3 Gram matrix ``h R_i R_i'`` of each slave node's modal rows, formed the first
        #: time the node is solved (used when the master has no modes: the rows are then fixed)
        self.gram = np.zeros((m, 3, 3))
        self.gram_done = np.zeros(m, bool)
        #: the indices of every slave node (the active set of a step where all are over a face)
        self.every = np.arange(m)
        #: the column weights of the step's problem (h per modal coordinate), kept over the steps
        self.w = np.full(model.n_modes, h)
        #: the sweeps' ``diag(w) J' lam`` at the end of the last step whose final problem held every
        #: node on fixed rows (else None), the frames it was formed with and the steps it has been
        #: carried over (see :data:`_REFRESH`)
        self.z_end, self.F_end, self.carried = None, None, 0

    def displacements(self, eta, up, ahead=None):
        """((slave, master) total displacements, (slave, master) driven parts), each (k, 3) in m.

        ``ahead`` = (eta2, up2): those of a second state formed in the same products over the
        nodes' rows (one pass over them for both) and kept for the next call with ``eta2`` (the
        step's end and the next step's prediction). A call with the kept state returns them."""
        kept, self._ahead = self._ahead, None
        if kept is not None and kept[0] is eta:
            return kept[1]
        c = self.c
        sl, ma = c["slave"], c["master"]
        if ahead is not None:
            E = self._E
            E[0], E[1] = eta, ahead[0]
            pair = [self._driven(x) for x in (up, ahead[1])]
            us = sl.free(E)
            um = None if self.still else ma.free(E)
            out = [self._total(us[i], None if um is None else um[i], pair[i]) for i in range(2)]
            self._ahead = (ahead[0], out[1])
            return out[0]
        ds = self._driven(up)
        return self._total(sl.free(eta), None if self.still else ma.free(eta), ds)

    def _driven(self, up):
        sl, ma = self.c["slave"], self.c["master"]
        return sl.driven(up) if sl.drivers else self._zero[0], ma.driven(up) if ma.drivers else self._zero[1]

    def _total(self, us, um, ds):
        """(the free parts ``us``, ``um`` plus the driven ones ``ds``, ``ds``); ``um`` None: a still
        master."""
        c = self.c
        us = us + ds[0] if c["slave"].drivers else us
        if um is None:
            return (us, self._zero[1]), ds
        return (us, um + ds[1] if c["master"].drivers else um), ds

    def search(self, u, d=None):
        """Closest points on the master faces at the displacements ``u`` = (slave, master):
        (on, (face nodes (k, w), shape values (k, w)), face, gap (m), frames (k, 3, 3: n, t1, t2),
        point (m))."""
        c = self.c
        P = c["slave"].X + u[0]
        if not self.still:
            self.faces.refit(c["master"].X + u[1])
        iout, fout = self.tracker.project_rows(P)
        stored = iout[:, 0]
        on = (stored >= 0) & (iout[:, 2] != 1)  # a face within reach, not off the master's border
        F = fout[:, 6:15].reshape(-1, 3, 3).copy()  # normal, t1, t2 of each node: its frame
        if on.all():  # every node over its master (the common case): nothing to mask
            self.left, self.on = False, on
            face = self.faces.order[stored]
            N = self.faces.shape_values(stored, fout[:, 0:2], stored=True)[:, :self._width]
            conn = self.face_nodes[face, :self._width]
            return on, (conn, N), face, fout[:, 5], F, fout[:, 2:5]
        self.left = bool(np.any(self.on & ~on))
        self.on = on
        face = np.where(on, self.faces.order[np.maximum(stored, 0)], 0)
        N = self.faces.shape_values(face, fout[:, 0:2])[:, :self._width]
        conn = self.face_nodes[face, :self._width]
        N[~on] = 0.0
        gap = np.where(on, fout[:, 5], np.nan)
        point = np.where(on[:, None], fout[:, 2:5], np.nan)
        return on, (conn, N), np.where(on, face, -1), gap, F, point

    def relative(self, u_new, u_old, shape):
        """(k, 3) relative displacement of each slave against its master point between two
        states (slave, master) of displacements."""
        if self.still:
            return u_new[0] - u_old[0]
        conn, N = shape
        dm = u_new[1] - u_old[1]
        return (u_new[0] - u_old[0]) - np.einsum("kj,kjc->kc", N, dm[np.maximum(conn, 0)])

    def components(self, idx, shape, D):
        """Add the rows of the x, y, z components of the relative displacement of the nodes
        ``idx`` (slave node less its master point) into ``D`` (k, 3, >= the width of
        :attr:`window`), zero on entry, over the columns of :attr:`window` (the first of ``D``
        its first), in the ``cone`` kernel's ``frame_rows`` (identity frames)."""
        c = self.c
        conn, N = shape
        kernel = self.kernel
        S = c["slave"].R if idx.size == c["slave"].R.shape[0] else c["slave"].R[idx]
        I = np.broadcast_to(np.eye(3), (idx.size, 3, 3)).copy()
        lo = self.window[0]
        kernel.frame_rows(I, S, 1.0, c["slave"].cols.start - lo, D)
        Mr = c["master"].R
        if Mr.shape[2]:
            Mi = np.ascontiguousarray(np.einsum("kj,kjcm->kcm", N[idx], Mr[np.maximum(conn[idx], 0)]))
            kernel.frame_rows(I, Mi, -1.0, c["master"].cols.start - lo, D)

    def advance(self, eta_next, up_next, geo, lam, acc, ahead=None):
        """Close the step: the gaps after it (m), the slip vectors of the step (m), the states;
        the friction, impact and drive works added to ``acc`` (J), all in one pass of the
        ``cone`` kernel's ``close_nodes``. ``ahead``: the next step's prediction (eta*, prescribed
        displacements), whose displacements are formed with the step's end (see
        :meth:`displacements`). Returns (the node signals of the step by name, state, state
        before the step)."""
        on, shape, face, F, point = geo
        u_new, d_new = self.displacements(eta_next, up_next, ahead)
        conn, N = shape
        P = self.c["slave"].X + u_new[0]
        Q = self._Q if self.still else self.c["master"].X + u_new[1]
        # the five states of the relative motions: the step's (new - now), the central one over
        # two steps (new - previous, the works' discrete power) and the drives' (driven parts)
        S, M = self._S, self._M
        for X, i, moving in ((S, 0, self._moving[0]), (M, 1, self._moving[1])):
            for r in moving:
                X[r] = (u_new, self.us, self.us_prev, d_new, self.ds_prev)[r][i]
        k = on.size
        gap, force, slip, works = np.empty(k), np.empty((k, 3)), np.empty((k, 3)), np.empty(3)
        self.kernel.close_nodes(P, Q, conn, N, F, lam, on.view(np.uint8), S, M, gap, force, slip, works)
        acc["friction_dissipation"] -= 0.5 * float(works[0])
        acc["impact_loss"] -= 0.5 * float(works[1])
        acc["external_work"] -= 0.5 * float(works[2])
        pressed = lam[:, 0] > 0
        st = pressed.astype(np.int64)  # OPEN 0, STICK 1, SLIP 2
        st += pressed & (self.case == SLIP)
        old = self.state
        self.lam, self.state = lam, st
        self.us_prev, self.ds_prev, self.us, self.ds = self.us, self.ds, u_new, d_new
        v = slip / self.h
        sig = {"lambda_n": lam[:, 0], "lambda_t1": lam[:, 1], "lambda_t2": lam[:, 2], "gap": gap,
               "slip_velocity_x": v[:, 0], "slip_velocity_y": v[:, 1], "slip_velocity_z": v[:, 2], "state": st,
               "face": face, "contact_x": point[:, 0], "contact_y": point[:, 1], "contact_z": point[:, 2],
               "force_x": force[:, 0], "force_y": force[:, 1], "force_z": force[:, 2]}
        return sig, st, old


def contact_step3d(contacts, eta_star, up_next, nm, h, tol, max_iter, stop_off=False):
    """Contact forces of one step over the 3D interfaces ``contacts`` (:class:`InterfaceState3D`).

    Rows are built for every slave node over a master face; the cone problem is solved for the
    active nodes (predicted gap <= 0, or pressed at the previous step); a node left out whose gap
    the others' forces close (below -tol) joins, and the problem is solved again, warm started.

    The kernel takes each node's rows as its frame (normal, t1, t2) times the rows of its
    components: on one interface whose master has no modes those are the slave's own modal rows,
    fixed over the march (nothing is copied, and their Gram matrices are formed once); on several
    such interfaces they are stacked once; otherwise the components' rows of every interface are
    written, over the interface's columns only, into a buffer kept over the steps.

    Returns (per contact: on, shape values, face, frames (m, 3, 3: n, t1, t2), point), per contact (m, 3) forces
    (N), the modal correction z, status [sweeps, last change, converged, passes]; None when
    ``stop_off`` and a node on its master surface left it."""
    if not contacts:
        return [], [], np.zeros(nm), np.array([0.0, 0.0, 1.0, 0.0])
    geo, bs, lam0, act, sizes, laws, frames = [], [], [], [], [], [], []
    for ct in contacts:
        u_star, d_star = ct.displacements(eta_star, up_next)
        on, shape, face, gap, F, point = ct.search(u_star, d_star)
        every = on.all()
        idx = ct.every if every else np.flatnonzero(on)
        pick = slice(None) if every else idx  # every node: views, no gathers
        rel = ct.relative(u_star, ct.us, shape)
        bc = np.empty((idx.size, 3))
        if every:
            bc[:, 0] = gap
            bc[:, 1:] = np.einsum("kdc,kc->kd", F[:, 1:], rel)
            lam0.append(ct.lam)
            act.append((gap <= 0) | (ct.lam[:, 0] > 0))
            laws.append((ct.code, ct.params, ct.user))
        else:
            bc[:, 0] = gap[pick]
            bc[:, 1:] = np.einsum("kdc,kc->kd", F[pick, 1:], rel[pick])
            lam0.append(ct.lam[pick])
            act.append((gap[pick] <= 0) | (ct.lam[pick, 0] > 0))
            laws.append((ct.code[pick], ct.params[pick], ct.user[pick]))
        bs.append(bc.ravel())
        geo.append((on, shape, face, F, point))
        sizes.append(idx)
        frames.append(F)
    if stop_off and any(ct.left for ct in contacts):
        return None
    b = np.concatenate(bs) if len(bs) > 1 else bs[0]
    first = contacts[0]
    rigid = not any(ct.c["master"].R.shape[2] for ct in contacts) if len(contacts) > 1 else \
        not first.c["master"].R.shape[2]
    fixed = len(contacts) == 1 and rigid
    if fixed:
        # the rows of the components are the slave's modal rows: used in place
        D, c0, F, at = first.c["slave"].R, first.c["slave"].cols.start, frames[0], sizes[0]
        gram, done, every = first.gram, first.gram_done, first.every
    elif rigid:
        # several interfaces on masters without modes: their slave rows, fixed, stacked once;
        # each node's sweeps over its own group's columns
        if first.stack is None or first.stack[-1] != h:  # (the Gram matrices are of w = h)
            first.stack = _stack(contacts, h)
        D, c0, starts, gram, done, every, _ = first.stack
        full = all(idx is ct.every for ct, idx in zip(contacts, sizes))
        at = every if full else np.concatenate([k0 + idx for k0, idx in zip(starts, sizes)])
        F = np.concatenate(frames)
    else:
        # the components' rows of every interface over its columns (:attr:`InterfaceState3D.window`),
        # written in place into a buffer kept over the steps (a fresh array of this size costs its
        # page faults every step)
        ns = max(ct.window[1] - ct.window[0] for ct in contacts)
        if first.buffer.size < b.size * ns:
            first.buffer = np.empty(b.size * ns)
        D, k0 = first.buffer[:b.size * ns].reshape(-1, 3, ns), 0
        D.fill(0.0)
        c0 = np.empty((D.shape[0], 2), np.int64)
        for ct, idx, g in zip(contacts, sizes, geo):
            ct.components(idx, g[1], D[k0:k0 + idx.size])
            c0[k0:k0 + idx.size] = ct.window[0], ct.window[1] - ct.window[0]
            k0 += idx.size
        at = np.arange(b.size // 3)
        F = np.concatenate([f[idx] for f, idx in zip(frames, sizes)]) if len(contacts) > 1 else frames[0][sizes[0]]
        gram, done = np.empty((at.size, 3, 3)), np.zeros(at.size, bool)
    if rigid:
        # the last step ended with every node on these rows, its frames are these and its forces
        # the warm start (they are: ``advance`` keeps them): its sweeps' z is this start's
        carry = (first.z_end is not None and first.carried < _REFRESH and first.h == h and at is every
                 and np.array_equal(F, first.F_end))
        z_start, first.z_end = first.z_end if carry else None, None  # (kept again only by a solve of every node, the last of the step)
    lam_all, active = np.concatenate(lam0), np.concatenate(act)  # (copies: the forces are new)
    if len(laws) == 1:
        code, params, user = laws[0]
    else:
        code, params = np.concatenate([x[0] for x in laws]), np.concatenate([x[1] for x in laws])
        user = np.concatenate([x[2] for x in laws])
    case_all = np.zeros(active.size, np.int64)
    kernel = first.kernel
    # W = J diag(w) J' = h J J'
    w = first.w if first.w.shape == (nm,) and first.h == h else np.full(nm, h)
    z, out = np.zeros(nm), np.array([0.0, 0.0, 1.0, 0.0])
    passes = 0
    for passes in range(1, _PASSES + 1):
        whole = active.all()  # every node: the arrays as they are (the forces solved in place)
        a = every if whole and at is every else np.flatnonzero(active)
        if not whole:
            lam_all[~active] = 0.0
        z[:] = 0.0
        if a.size:
            q = b / h if whole else b[(3 * a[:, None] + np.arange(3)).ravel()] / h
            users = user.any() if whole else user[a].any()
            inplace = whole and not users  # the kernel's forces and cases written where they are kept
            lam = lam_all.reshape(-1) if inplace else np.ascontiguousarray(lam_all[a].reshape(-1))
            nodes = at if whole else at[a]
            if users:
                Ja = np.zeros((a.size, 3, nm))
                for sel, cols, width in _windows(c0, nodes, D.shape[2]):
                    Ja[sel, :, cols] = np.einsum("krc,kcj->krj", F[nodes[sel]], D[nodes[sel], :, :width])
                Ja = Ja.reshape(-1, nm)
                W = h * (Ja @ Ja.T)
                d = np.einsum("ii->i", W)
                np.maximum(d, _FLOOR * d.max(), out=d)
                for ct in contacts:  # (an interface without user laws has its laws as arrays only)
                    if ct.per_node[:1] == [None]:
                        ct.per_node = node_laws(ct.c["interface"].laws, ct.mu.size)
                per = [ct.per_node[i] for ct, idx in zip(contacts, sizes) for i in idx]
                sol = solve_coupled(W, q, [per[i] for i in a], lam, tol=tol / h, max_iter=max_iter)
                lam, case, stat = sol.lam.ravel(), sol.case, (sol.sweeps, sol.change, float(sol.converged))
                z = h * h * (Ja.T @ lam)
            else:
                case, stat = case_all if whole else np.zeros(a.size, np.int64), np.zeros(3)
                given = int(done.all() if nodes is every else done[nodes].all())  # bit 1: Gram; bit 2: z
                if rigid and whole and passes == 1 and carry:
                    z[:] = z_start
                    given |= 2
                kernel.block_gs_frames(D, nodes, c0, F, w, q, code if whole else code[a],
                                       np.ascontiguousarray(params if whole else params[a]), _FLOOR, lam, z, gram,
                                       given, case, tol / h, max_iter, stat)
                done[nodes] = True
                if rigid and whole and at is every:
                    first.z_end, first.F_end, first.carried = z, F, (first.carried + 1 if given & 2 else 0)
                z = z * h  # the modal correction h^2 J' lam
            if not inplace:
                lam_all[a] = lam.reshape(-1, 3)
                case_all[:] = OPEN
                case_all[a] = case
            out[:3] = (out[0] + stat[0], stat[1] * h, stat[2])
        if out[2] != 1.0 or a.size == active.size:
            break
        rest = np.flatnonzero(~active)
        # the normal gaps of the nodes left out, after the others' forces
        nodes = at[rest]
        u = np.empty((nodes.size, 3))
        for sel, cols, width in _windows(c0, nodes, D.shape[2]):
            u[sel] = D[nodes[sel], :, :width] @ z[cols]
        new = rest[b[3 * rest] + np.einsum("kc,kc->k", F[nodes, 0], u) < -tol]
        if not new.size:
            break
        active[new] = True
    else:
        out[2] = 0.0
    out[3] = passes
    lams, k0 = [], 0
    for ct, idx in zip(contacts, sizes):
        if idx is ct.every and len(contacts) == 1:  # every node of the one interface: as they are
            lams.append(lam_all)
            ct.case = case_all
            continue
        lc = np.zeros_like(ct.lam)
        lc[idx] = lam_all[k0:k0 + idx.size]
        ct.case = np.zeros(ct.mu.size, np.int64)
        ct.case[idx] = case_all[k0:k0 + idx.size]
        k0 += idx.size
        lams.append(lc)
    return geo, lams, z, out


def _stack(contacts, h):
    """The rows of the interfaces ``contacts`` whose masters have no modes, fixed over the march:
    (the slave rows of all their nodes (kd, 3, ns), each node's window of the columns (kd, 2: first
    column, width), the first node of each interface, Gram matrices (kd, 3, 3), formed (kd,), the
    indices of all nodes, the step h (s) they are for), the rows of each node on the first columns
    (the rest zero)."""
    R = [ct.c["slave"].R for ct in contacts]
    starts = np.cumsum([0] + [r.shape[0] for r in R])
    D = np.zeros((starts[-1], 3, max(r.shape[2] for r in R)))
    win = np.empty((starts[-1], 2), np.int64)
    for ct, r, k0 in zip(contacts, R, starts):
        D[k0:k0 + r.shape[0], :, :r.shape[2]] = r
        win[k0:k0 + r.shape[0]] = ct.c["slave"].cols.start, r.shape[2]
    return D, win, starts[:-1], np.zeros((starts[-1], 3, 3)), np.zeros(starts[-1], bool), np.arange(starts[-1]), h


def _windows(c0, nodes, ns):
    """The nodes (indices into the rows ``D``) by their window of the columns: (selection of
    ``nodes``, columns, width) of each window; ``c0`` one first column for every node (an int,
    the width ``ns``) or each node's (first column, width) (see ``cone.block_gs_frames``)."""
    if not isinstance(c0, np.ndarray):
        return [(slice(None), slice(c0, c0 + ns), ns)]
    wins, inv = np.unique(c0[nodes], axis=0, return_inverse=True)
    return [(inv.ravel() == i, slice(int(lo), int(lo + width)), int(width)) for i, (lo, width) in enumerate(wins)]
