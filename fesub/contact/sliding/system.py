"""The sliding-contact system: two Craig-Bampton substructures and the contact between them.

Substructure 1 (the slider) carries the slave node C and is driven along x at its prescribed DOFs
(x = vx t); substructure 2 (the target) carries the master segments of one edge of its mesh.
:class:`SlidingContactSystem` holds what every analysis of the pair needs: the free partitions of
the reduced matrices, the modal bases of both substructures, the target geometry (node positions
in m, segments, reduced rows of each target DOF), the output channels, the static equilibrium at
t = 0 and the contact rows B_E, B_C over the reduced coordinates [q1_free; q2] (eqs. 34-44).
The transient (:mod:`fesub.contact.transient`), the eigenvalue analysis
(:mod:`fesub.contact.eigen`) and the FRFs (:mod:`fesub.contact.receptance`,
:mod:`fesub.contact.frf`) take it as their first argument.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from ...errors import ModelError, ParameterError
from ..engine import Body, ContactInterface, MultibodyModel
from ..geometry import SegmentSet, coupling_rows, segment_at_x

__all__ = ["SlidingContactSystem"]


class SlidingContactSystem:
    """The data of a two-substructure sliding-contact problem, ready to march.

    Parameters
    ----------
    cb1, cb2 : CraigBampton
        Slider and target reduced models (their substructures carry Rayleigh alpha, beta).
    slave : int
        Mesh node of substructure 1 in contact (its x and y DOFs must be boundary DOFs).
    prescribed : int array
        Model DOFs of substructure 1 moved as x = vx t (boundary DOFs, x components).
    target_edge : str
        Edge set of substructure 2's mesh holding the master segments (their nodes must be boundary
        DOFs or clamped).
    loads1 : dict model DOF -> constant force (N) on substructure 1.
    outputs1, outputs2 : dict name -> model DOF of the output channels.
    modal_cutoff_hz : drop modes of the reduced substructures above this frequency (APPROXIMATION:
        enlarges the stable time step, changes the high-frequency content).

    The roughness force of a transient acts on the slave's y DOF (``rough_row``).
    """

    def __init__(self, cb1, cb2, *, slave: int, prescribed, target_edge: str, loads1=None,
                 outputs1=None, outputs2=None, modal_cutoff_hz: float | None = None):
        s1, s2 = cb1.substructure, cb2.substructure
        if s1 is None or s2 is None:
            raise ModelError("the Craig-Bampton models must be built from Substructure objects")
        self.cb1, self.cb2 = cb1, cb2
        # the model DOFs of the definition, as given: the same system on the contact engine
        # (:meth:`multibody_model`) is built from them
        self.spec = {"prescribed": [int(d) for d in np.atleast_1d(prescribed)], "target_edge": target_edge,
                     "loads1": dict(loads1 or {}), "outputs1": dict(outputs1 or {}), "outputs2": dict(outputs2 or {})}
        self.alpha1, self.beta1 = s1.alpha, s1.beta
        self.alpha2, self.beta2 = s2.alpha, s2.beta
        self._slider(slave, prescribed, loads1)
        self._target(target_edge)
        f = self.f1_idx
        self.outputs1 = {k: int(np.searchsorted(f, cb1.coordinate_index([v])[0])) for k, v in (outputs1 or {}).items()}
        self.outputs2 = {k: int(cb2.coordinate_index([v])[0]) for k, v in (outputs2 or {}).items()}
        self.rough_row = self.iC[1]
        # ---- modal bases of both substructures
        self.modal_cutoff_hz = modal_cutoff_hz
        self.w2_1, self.Phi1 = self._modes(self.K1, self.M1)
        self.w2_2, self.Phi2 = self._modes(self.K2, self.M2)

    def _slider(self, slave, prescribed, loads1):
        """Substructure 1: the free partition of q1 (prescribed DOFs removed), the slave's rows and
        position (m), the rigid translation along x, the partitioned matrices and the loads (N)."""
        cb1 = self.cb1
        s1 = cb1.substructure
        n1q = cb1.n_dofs
        self.p1 = cb1.coordinate_index(prescribed)
        self.f1_idx = np.setdiff1d(np.arange(n1q), self.p1)
        qC = cb1.coordinate_index(s1.dofs([slave]))
        self.slave_node = int(slave)
        self.X_C = s1.mesh.points[slave].copy()
        self.iC = np.searchsorted(self.f1_idx, qC)
        if not np.array_equal(self.f1_idx[self.iC], qC):
            raise ModelError("the slave DOFs must not be prescribed")
        # rigid translation along x in q1 (eta = 0, boundary x DOFs = 1)
        r = np.zeros(n1q)
        bx = s1.dofmap.components.index("x")
        xdofs = [i for i, d in enumerate(cb1.boundary) if s1.retained[d] % s1.dofmap.ndpn == bx]
        r[cb1.n_modes + np.asarray(xdofs)] = 1.0
        if np.abs(cb1.Kr @ r).max() > 1e-6 * np.abs(cb1.Kr).max():
            raise ModelError("substructure 1 does not translate freely along x (is it clamped?)")
        self.r1 = r
        K1, M1 = cb1.Kr, cb1.Mr
        C1 = cb1.rayleigh(self.alpha1, self.beta1)
        f = self.f1_idx
        self.K1, self.M1, self.C1 = K1[np.ix_(f, f)], M1[np.ix_(f, f)], C1[np.ix_(f, f)]
        self.K1p, self.C1p = K1[np.ix_(f, self.p1)], C1[np.ix_(f, self.p1)]
        self.load1 = np.zeros(f.size)
        for d, v in (loads1 or {}).items():
            if not isinstance(v, (int, float, np.number)) or not np.isfinite(v):
                raise ModelError(f"load on DOF {d} must be a finite force in N, got {v!r}")
            qi = cb1.coordinate_index([d])[0]
            k = np.searchsorted(f, qi)
            if k >= f.size or f[k] != qi:
                raise ModelError(f"load on a prescribed DOF {d}")
            self.load1[k] += v

    def _target(self, target_edge):
        """Substructure 2, all q2 free (clamps already removed): its matrices, the target nodes, their
        positions (m), the segments and the q2 rows of each target node (-1 where clamped)."""
        cb2 = self.cb2
        s2 = cb2.substructure
        self.K2, self.M2 = cb2.Kr, cb2.Mr
        self.C2 = cb2.rayleigh(self.alpha2, self.beta2)
        mesh2 = s2.mesh
        edges = mesh2.edges(target_edge)
        tnodes = np.unique(edges)
        self.target_nodes = tnodes
        self.XT = np.ascontiguousarray(mesh2.points[tnodes])
        loc = {int(nd): i for i, nd in enumerate(tnodes)}
        self.segs = np.ascontiguousarray([[loc[int(a)], loc[int(b)]] for a, b in edges], dtype=np.int64)
        # q2 rows of each target node (-1 where clamped)
        rows = np.full((tnodes.size, 2), -1, np.int64)
        ci = s2._index
        for i, nd in enumerate(tnodes):
            for c in range(2):
                g = s2.dofmap.dofs([nd], s2.dofmap.components[c])[0]
                if ci[g] >= 0:
                    rows[i, c] = cb2.coordinate_index([ci[g]])[0]
        self.T_rows = rows
        #: the target surface, validated once: every search of the system goes through it
        self.surface = SegmentSet(self.XT, self.segs)

    def _modes(self, K, M):
        """Squared natural frequencies (rad^2/s^2; rigid-body modes exactly 0) and mass-normalised
        shapes of (K, M), the modes above ``modal_cutoff_hz`` dropped."""
        lam, phi = sla.eigh(K, M)
        # rigid-body modes: eigenvalues at round-off level of the largest one
        lam = np.where(lam < 1e-12 * lam.max(), 0.0, lam)
        if self.modal_cutoff_hz is not None:
            keep = np.sqrt(lam) / (2 * np.pi) <= self.modal_cutoff_hz
            lam, phi = lam[keep], phi[:, keep]
        return np.ascontiguousarray(lam), np.ascontiguousarray(phi)

    # ------------------------------------------------------------------ time step
    def critical_step(self) -> float:
        """Exact central-difference stability limit (s): min over modes of (2/w)(sqrt(1+z^2) - z).

        w are the natural frequencies of the reduced substructures (rad/s) and z the Rayleigh
        damping ratio of each mode."""
        hs = []
        for w2, a, b in ((self.w2_1, self.alpha1, self.beta1), (self.w2_2, self.alpha2, self.beta2)):
            w = np.sqrt(w2[w2 > 0])
            z = a / (2 * w) + b * w / 2
            hs.append(np.min(2.0 / w * (np.sqrt(1 + z * z) - z)))
        return float(min(hs))

    def max_frequency_hz(self) -> float:
        """Highest natural frequency (Hz) of the two reduced substructures (after any cut-off)."""
        return float(np.sqrt(max(self.w2_1.max(), self.w2_2.max())) / (2 * np.pi))

    # ------------------------------------------------------------------ coupling geometry
    def target_positions(self, q2) -> np.ndarray:
        """Current target node positions (m) from q2."""
        pos = self.XT.copy()
        for c in range(2):
            ok = self.T_rows[:, c] >= 0
            pos[ok, c] += q2[self.T_rows[ok, c]]
        return pos

    def phiT(self) -> np.ndarray:
        """(nt, 2, n2) modal rows of the target nodes (zero rows for clamped DOFs)."""
        out = np.zeros((self.XT.shape[0], 2, self.Phi2.shape[1]))
        for c in range(2):
            ok = self.T_rows[:, c] >= 0
            out[ok, c] = self.Phi2[self.T_rows[ok, c]]
        return out

    def static_state(self, mu: float, vx: float, sign: float = 1.0, *, tol: float = 1e-13, max_iter: int = 50,
                     geometry: str = "deformed"):
        """Static equilibrium at t = 0 under the loads, with the slave sliding (friction sign
        ``sign``) and the gap closed in the deformed geometry (or the undeformed one, with
        ``geometry='undeformed'``; 'frozen' is the deformed equilibrium).

        The contact point moves with the deformation, so the linear solve is repeated with the
        contact point found in the deformed configuration until it no longer changes (fixed point).
        With a modal cut-off the equilibrium is that of the truncated model (solved in its kept
        modal coordinates), so that a truncated run starts at rest.
        Returns (w1: free q1 relative to the rigid motion, q2, lambda in N).
        """
        check_geometry(geometry)
        if geometry == "frozen":  # a frozen row at rest is the row of the deformed equilibrium
            geometry = "deformed"
        n1, n2 = self.K1.shape[0], self.K2.shape[0]
        f1 = self.load1 - vx * (self.C1 @ self.r1[self.f1_idx] + self.C1p @ self.r1[self.p1])
        trunc = self.modal_cutoff_hz is not None
        if trunc:
            K1, K2, f1 = np.diag(self.w2_1), np.diag(self.w2_2), self.Phi1.T @ f1
        else:
            K1, K2 = self.K1, self.K2
        m1, m2 = K1.shape[0], K2.shape[0]
        w1, q2 = np.zeros(n1), np.zeros(n2)
        seg, al_prev = 0, np.inf
        for _ in range(max_iter):
            pos = self.target_positions(q2) if geometry == "deformed" else self.XT
            P = self.X_C + w1[self.iC] if geometry == "deformed" else self.X_C
            seg, al, _, _ = self.surface.find(P, int(seg), positions=pos)
            if seg < 0:
                raise ModelError("the slave node is not above the target surface at t = 0")
            bE, bC, _ = self._rows(seg, al, pos, mu, sign)
            BE, BC = self._global_rows(seg, bE, bC)
            if trunc:
                BE = np.r_[self.Phi1.T @ BE[:n1], self.Phi2.T @ BE[n1:]]
                BC = np.r_[BC[:n1] @ self.Phi1, BC[n1:] @ self.Phi2]
            A = np.zeros((m1 + m2 + 1, m1 + m2 + 1))
            A[:m1, :m1] = K1
            A[m1:-1, m1:-1] = K2
            A[:-1, -1] = BE
            A[-1, :-1] = BC
            rhs = np.zeros(m1 + m2 + 1)
            rhs[:m1] = f1
            j1, j2 = self.segs[seg]
            # B_C (X + u) = 0 with B_C frozen at the current contact point
            rhs[-1] = -(bC @ np.r_[self.XT[j1], self.XT[j2], self.X_C])
            sol = np.linalg.solve(A, rhs)
            w1, q2, lam = sol[:m1], sol[m1:-1], sol[-1]
            if trunc:
                w1, q2 = self.Phi1 @ w1, self.Phi2 @ q2
            if abs(al - al_prev) < tol:
                break
            al_prev = al
        return w1, q2, lam

    def multibody_model(self, mu: float, vx: float, *, geometry: str = "deformed", initial=None):
        """This system on the contact engine: (:class:`~fesub.contact.MultibodyModel`, initial
        state, static multiplier in N).

        The slider (body ``'slider'``) driven at ``vx`` (m/s) along x on its prescribed DOFs and
        loaded by ``loads1``, the target (body ``'target'``), one slave node on the target edge
        with friction coefficient ``mu`` and the contact frame of ``geometry`` ('deformed',
        'undeformed' or 'frozen', see :func:`fesub.contact.simulate`), the modal cut-off and the
        output channels of the system. The initial state (body name -> (displacements in m,
        velocities in m/s), the slider's total displacements) is ``initial`` = (w1, q2) at rest
        when given, else the static sliding state (:meth:`static_state`, in the undeformed
        geometry for ``geometry='undeformed'``); the multiplier is that of the static state."""
        check_geometry(geometry)
        spec, s2 = self.spec, self.cb2.substructure
        # the loads as they are now (``load1`` over the free coordinates may have been changed)
        loads = np.zeros(self.cb1.n_dofs)
        loads[self.f1_idx] = self.load1
        slider = Body.from_craig_bampton(self.cb1, name="slider", prescribed={d: vx for d in spec["prescribed"]},
                                         loads=loads, outputs=spec["outputs1"])
        target = Body.from_craig_bampton(self.cb2, name="target", outputs=spec["outputs2"])
        # a view of the system whose slave starts elsewhere (X_C moved): the slider moved with it
        shift = self.X_C - slider.X[self.slave_node]
        if np.any(shift != 0.0):
            slider.X = slider.X + shift
        mb = MultibodyModel([slider, target], [ContactInterface(
            "slider", [self.slave_node], "target", s2.mesh.edges(spec["target_edge"]), mu=mu, geometry=geometry)],
            modal_cutoff_hz=self.modal_cutoff_hz)
        sign = 1.0 if vx >= 0 else -1.0
        w1, q2, lam0 = self.static_state(mu, vx, sign, geometry="undeformed" if geometry == "undeformed"
                                         else "deformed")
        if initial is not None:
            w1, q2 = initial
        u1, v1 = np.zeros(slider.n), np.zeros(slider.n)
        u1[self.f1_idx], v1[self.f1_idx] = w1, vx * self.r1[self.f1_idx]
        return mb, {"slider": (u1, v1), "target": (q2, np.zeros(target.n))}, lam0

    def segment_at(self, s: float) -> tuple[int, float]:
        """Target segment and local coordinate alpha (0..1) of the undeformed surface point at
        x = ``s`` (m); a :class:`ModelError` when ``s`` lies outside the target surface."""
        return segment_at_x(self.XT, self.segs, s)

    def surface_point(self, s: float) -> np.ndarray:
        """(x, y) in m of the undeformed target surface at x = ``s`` (where the slave C sits when
        the contact is at ``s``)."""
        k, alpha = self.segment_at(s)
        a, b = self.segs[k]
        return (1.0 - alpha) * self.XT[a] + alpha * self.XT[b]

    def contact_point(self, w1, q2):
        """(segment, alpha, angle of the segment in rad) of the slave projected on the deformed
        target in the configuration (w1, q2): the contact row that ``geometry='frozen'`` holds."""
        pos = self.target_positions(q2)
        P = self.X_C + w1[self.iC]
        seg, al, _, _ = self.surface.find(P, 0, positions=pos)
        if seg < 0:
            raise ModelError("the slave node is not above the target surface in the initial configuration")
        d = pos[self.segs[seg, 1]] - pos[self.segs[seg, 0]]
        return int(seg), float(al), float(np.arctan2(d[1], d[0]))

    def _rows(self, seg, al, pos, mu, sign):
        """Local rows (b_E, b_C) over [T1x, T1y, T2x, T2y, Cx, Cy] on segment ``seg`` at ``al``, with
        the nodes at ``pos`` (m), and the segment's angle (rad)."""
        j1, j2 = self.segs[seg]
        d = pos[j2] - pos[j1]
        gam = np.arctan2(d[1], d[0])
        bE, bC = coupling_rows(al, gam, mu, sign)
        return bE, bC, gam

    def _global_rows(self, seg, bE, bC):
        """B_E, B_C as dense rows over [q1_free; q2] for segment ``seg``."""
        n1, n2 = self.K1.shape[0], self.K2.shape[0]
        BE, BC = np.zeros(n1 + n2), np.zeros(n1 + n2)
        j1, j2 = self.segs[seg]
        for e, (node, c) in enumerate([(j1, 0), (j1, 1), (j2, 0), (j2, 1)]):
            r = self.T_rows[node, c]
            if r >= 0:
                BE[n1 + r] += bE[e]
                BC[n1 + r] += bC[e]
        BE[self.iC] += bE[4:]
        BC[self.iC] += bC[4:]
        return BE, BC


def check_geometry(geometry):
    """Refuse a contact ``geometry`` other than 'deformed', 'undeformed' or 'frozen'."""
    if geometry not in ("deformed", "undeformed", "frozen"):
        raise ParameterError(f"geometry must be 'deformed', 'undeformed' or 'frozen', got {geometry!r}")
