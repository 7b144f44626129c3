"""The per-step state of one contact interface in the stepper: search, rows, close of the step.

:class:`InterfaceState` holds, for one :class:`~fesub.contact.engine.interfaces.ContactInterface`
of a :class:`~fesub.contact.engine.bodies.MultibodyModel`, the slave and master displacements at
the last two steps, the segment of each slave node, its forces and state; the Python step loop of
:mod:`fesub.contact.engine.stepper` asks it for the contact frames at the predicted positions
(:meth:`InterfaceState.search`), the rows of the contact problem (:meth:`InterfaceState.rows`)
and the close of the step (:meth:`InterfaceState.advance`: gaps, slips, states, works).

Where the contact frame (segment, alpha, normal n, tangent t) is taken, the interface's
``geometry``:

* ``'deformed'`` (default): at the predicted deformed positions of slave and master, every step;
* ``'undeformed'``: at the positions of the drives' motion alone (each body's undeformed nodes
  moved by the quasi-static motion of its prescribed coordinates: for a rigid drag, the rigid
  motion): a linear, time-varying constraint, the one the eigenvalue analyses of a sliding state
  assume;
* ``'frozen'``: the frame of the initial configuration held for the whole run (the constraint
  linearised about a preloaded contact that does not slide).

In every case the gap that the step closes is measured along the frame's normal between the
deformed slave and the deformed master point at the frame's alpha,
``g = n . (P - (1 - alpha) A - alpha B)`` (m); the gap reported after the step is the distance of
the slave from its deformed master segment (the two differ, in the last two geometries, by the
turn of the segment times the slave's offset along it).

Units: SI (m, N, s).
"""

from __future__ import annotations

import numpy as np

from .interfaces import frames

__all__ = ["InterfaceState", "node_states", "OPEN", "STICK", "SLIP_P", "SLIP_M", "GEOMETRIES"]

#: state codes of a contact node after a step
OPEN, STICK, SLIP_P, SLIP_M = 0, 1, 2, 3
#: where the contact frame is taken (see the module docstring)
GEOMETRIES = ("deformed", "undeformed", "frozen")


def node_states(lam, mu, slip, closed):
    """State codes (:data:`OPEN`, :data:`STICK`, :data:`SLIP_P`, :data:`SLIP_M`) from the forces
    ``lam`` (k, 2) in N, the friction coefficients ``mu`` (k,), the slip of the step (k,) in m and
    the closed flags (k,)."""
    at_limit = np.abs(lam[:, 1]) >= mu * lam[:, 0] * (1 - 1e-12)
    forward = np.where(slip != 0, slip, -lam[:, 1]) >= 0  # the slip's sign, else against the force
    return np.where(closed, np.where(at_limit, np.where(forward, SLIP_P, SLIP_M), STICK), OPEN).astype(np.int64)


class InterfaceState:
    """Per-step state of one interface: node displacements at n-1, n (total and driven part),
    the segment hints, the forces of the previous step, the held frame of a frozen geometry.

    Parameters
    ----------
    model : MultibodyModel
    c : dict
        The interface's entry of ``model.contacts``.
    eta : (n_modes,) array
        Modal coordinates at t = 0 (the initial configuration, where a frozen frame is taken).
    up : list of arrays
        Prescribed displacements (m) of every body at t = 0.
    h : float
        Time step (s).
    """

    def __init__(self, model, c, eta, up, h):
        self.c, self.model, self.h = c, model, h
        self.mu = c["mu"]
        # the friction laws when one goes beyond one coefficient (solved by ``laws2d.solve_laws``), and
        # the coefficient of each node's state test (its cone's edge at the last step)
        self.laws = c["node_laws"] if (c["law_code"].any() or c["law_user"].any()) else None
        self.mu_edge = self.mu
        self.geometry = c.get("geometry", "deformed")
        m = c["slave"].nodes.size
        self.hint = np.zeros(m, np.int64)
        self.off = np.ones(m, bool)  # off the master surface (searched at the first step)
        self.lam = np.zeros((m, 2))
        self.state = np.zeros(m, np.int64)
        self.us, self.ds = self.displacements(eta, up)
        self.us_prev, self.ds_prev = self.us, self.ds
        self.held = None
        if self.geometry == "frozen":
            on, ab, alpha, _, nv, tv, _ = self._search(self.us)
            self.held = (on, ab, alpha, nv, tv)

    def displacements(self, eta, up):
        """((slave, master) total displacements, (slave, master) driven parts), each (k, 2) in m."""
        c = self.c
        ds = (c["slave"].driven(up), c["master"].driven(up))
        return (c["slave"].free(eta) + ds[0], c["master"].free(eta) + ds[1]), ds

    def search(self, u, d=None):
        """Segment, alpha, gap (m), n, t and master point (m) of each slave node for the
        displacements ``u`` = (slave, master) (their driven parts ``d``, needed by the
        'undeformed' geometry): returns (on, segment ends, alpha, gap, n, t, point)."""
        if self.geometry == "deformed":
            return self._search(u)
        if self.geometry == "frozen":
            on, ab, alpha, nv, tv = self.held
        else:
            on, ab, alpha, _, nv, tv, _ = self._search(d)
        c = self.c
        P, Q = c["slave"].X + u[0], c["master"].X + u[1]
        a = alpha[:, None]
        point = (1 - a) * Q[ab[:, 0]] + a * Q[ab[:, 1]]
        gap = ((P - point) * nv).sum(1)
        gap[~on], point[~on] = np.nan, np.nan
        return on, ab, alpha, gap, nv, tv, point

    def _search(self, u):
        """The search on the positions displaced by ``u``.

        A node whose projection stays on its segment of the previous search (0 <= alpha <= 1)
        keeps it (one vectorised test for all nodes); the others are searched by the local walk
        of the :class:`SegmentSet` from there."""
        c = self.c
        P, Q = c["slave"].X + u[0], c["master"].X + u[1]
        seg = self.hint.copy()
        was_on = ~self.off
        ab = c["segments"][seg]
        alpha, gap, nv, tv = frames(P, Q[ab[:, 0]], Q[ab[:, 1]])
        moved = np.flatnonzero(~((alpha >= 0.0) & (alpha <= 1.0)) | self.off)
        for i in moved:
            seg[i] = c["surface"].find(P[i], int(seg[i]), positions=Q)[0]
        self.left = False  # a node on its master surface left it
        if moved.size:
            on = seg >= 0
            self.left = bool(np.any(was_on & ~on))
            self.off = ~on
            self.hint[on] = seg[on]
            ab[moved] = c["segments"][np.where(on[moved], seg[moved], 0)]
            alpha[moved], gap[moved], nv[moved], tv[moved] = frames(P[moved], Q[ab[moved, 0]], Q[ab[moved, 1]])
        on = ~self.off
        gap[self.off] = np.nan
        a = alpha[:, None]
        point = (1 - a) * Q[ab[:, 0]] + a * Q[ab[:, 1]]  # contact point on the master (predicted)
        point[self.off] = np.nan
        return on, ab, alpha, gap, nv, tv, point

    @staticmethod
    def relative(u_new, u_old, ab, alpha):
        """(k, 2) relative displacement of each slave against its master point between two
        states (slave, master) of displacements (k, 2), (k_master, 2)."""
        i0, i1 = ab[:, 0], ab[:, 1]
        a = alpha[:, None]
        mn, mo = u_new[1], u_old[1]  # only the master nodes under the slaves are differenced
        return (u_new[0] - u_old[0]) - ((1 - a) * (mn[i0] - mo[i0]) + a * (mn[i1] - mo[i1]))

    def advance(self, eta_next, up_next, geo, lam, acc):
        """Close the step of this interface: the gaps after it (m), the slips of the step (m),
        the states; the friction, impact and drive works added to ``acc`` (J). Returns
        (the node signals of the step by name, state, state before the step)."""
        on, ab, alpha, nv, tv, point = geo
        u_new, d_new = self.displacements(eta_next, up_next)
        P, Q = self.c["slave"].X + u_new[0], self.c["master"].X + u_new[1]
        gap = frames(P, Q[ab[:, 0]], Q[ab[:, 1]])[1]  # the distance from the deformed segment
        gap[~on] = np.nan
        # relative motion over the step (the slip), over the two half steps n-1 -> n+1 (the
        # power of the step's forces) and of the prescribed motions over them (the drive's work)
        rel = [self.relative(a, b, ab, alpha) for a, b in ((u_new, self.us), (u_new, self.us_prev),
                                                              (d_new, self.ds_prev))]
        rt, rn = [(r * tv).sum(1) for r in rel], [None] + [(r * nv).sum(1) for r in rel[1:]]
        ln, lt = lam[:, 0], lam[:, 1]
        acc["friction_dissipation"] -= 0.5 * float(lt @ rt[1])
        acc["impact_loss"] -= 0.5 * float(ln @ rn[1])
        acc["external_work"] -= 0.5 * float(ln @ rn[2] + lt @ rt[2])
        st = node_states(lam, self.mu_edge, rt[0], ln > 0)
        old = self.state
        self.lam, self.state = lam, st
        self.us_prev, self.ds_prev, self.us, self.ds = self.us, self.ds, u_new, d_new
        force = ln[:, None] * nv + lt[:, None] * tv
        seg = np.where(on, self.hint, -1)
        sig = {"lambda_n": ln, "lambda_t": lt, "gap": gap, "slip_velocity": rt[0] / self.h, "state": st,
               "segment": seg, "contact_x": point[:, 0], "contact_y": point[:, 1], "force_x": force[:, 0],
               "force_y": force[:, 1]}
        return sig, st, old

    def rows(self, idx, ab, alpha, nv, tv, n_modes):
        """(2k, n_modes) rows J of the nodes ``idx``: normal then tangential per node."""
        c = self.c
        every = idx.size == self.mu.size  # all nodes on the master: no gather of the slave rows
        S, Mr = c["slave"].R if every else c["slave"].R[idx], c["master"].R
        J = np.zeros((2 * idx.size, n_modes))
        scols, mcols = c["slave"].cols, c["master"].cols
        if Mr.shape[2]:
            a = alpha[idx][:, None, None]
            Mi = (1 - a) * Mr[ab[idx, 0]] + a * Mr[ab[idx, 1]]  # (k, 2, n_master) master point
        for r, d in ((0, nv), (1, tv)):
            d = d if every else d[idx]
            J[r::2, scols] += np.einsum("kc,kcj->kj", d, S)
            if Mr.shape[2]:
                J[r::2, mcols] -= np.einsum("kc,kcj->kj", d, Mi)
        return J

