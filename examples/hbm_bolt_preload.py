"""Harmonic balance: the bolt preload of a jointed structure
===========================================================

Two steel plates (40 x 20 x 5 mm) stacked and clamped together by one bolt; the lower plate is
clamped at x = 0. The interface is 28 node-to-node :class:`~fesub.hbm.Friction3D` contacts,
the structure a Craig-Bampton model with the interface and washer nodes kept.

1. :meth:`~fesub.hbm.BoltedJoint.preload`: the static contact state under a 5 kN bolt (the
   plates bend, the ends lift off, the contacts around the bolt carry the load), whose normal
   forces sum to the bolt load, and the stuck-interface modes about it.
2. The damped nonlinear mode of the harmonic balance about that state
   (:meth:`~fesub.hbm.BoltedJoint.hb_system`, :func:`~fesub.hbm.dnnm`): at small amplitude it
   starts at the stuck-interface frequency; once the most loaded contacts start to slip the
   frequency drops and the damping ratio grows above the viscous one, then the open contacts at
   the plate ends begin to close over part of the cycle and the frequency rises again (this
   joint is bolted through its middle only).
"""

import math
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

from fesub.fe import Solid, box, solid_mesh_matrices  # noqa: E402
from fesub.hbm import Bolt, BoltedJoint, ContactElement, Friction3D, dnnm, plots  # noqa: E402
from fesub.substructure import CraigBampton  # noqa: E402

out = Path(sys.argv[1] if len(sys.argv) > 1 else "fesub-out/hbm_bolt_preload")
out.mkdir(parents=True, exist_ok=True)

# ---- the two plates, clamped lower plate, one model --------------------------------------------
L, W, H = 40e-3, 20e-3, 5e-3                                   # m
steel = Solid(2.0e11, 0.3, 7800.0)                             # Pa, -, kg/m^3
lower, upper = box(L, W, H, 6, 3, 1), box(L, W, H, 6, 3, 1, origin=(0, 0, H))
K1, M1, _ = solid_mesh_matrices(lower, steel)
K2, M2, _ = solid_mesh_matrices(upper, steel)
n1 = 3 * lower.n_points                                        # upper plate's DOFs follow
K, M = sp.block_diag([K1, K2]).tocsr(), sp.block_diag([M1, M2]).tocsr()
clamped = (3 * lower.node_sets["xmin"][:, None] + np.arange(3)).ravel()
free = np.setdiff1d(np.arange(K.shape[0]), clamped)
pos = np.full(K.shape[0], -1)
pos[free] = np.arange(free.size)
K, M = K[free][:, free], M[free][:, free]

# interface node pairs (coincident nodes), washer nodes under the head and the nut
pairs = [(i, int(np.flatnonzero(np.all(np.abs(upper.points - lower.points[i]) < 1e-9, 1))[0]))
         for i in lower.node_sets["zmax"]]
washer = 6e-3                                                  # washer radius (m)
head = [int(k) for k in upper.node_sets["zmax"]
        if np.hypot(*(upper.points[k, :2] - [L / 2, W / 2])) <= washer]
nut = [int(k) for k in lower.node_sets["zmin"]
       if np.hypot(*(lower.points[k, :2] - [L / 2, W / 2])) <= washer]

# ---- Craig-Bampton, the interface and washer nodes kept physical ---------------------------------
nodes = [3 * i for i, _ in pairs] + [n1 + 3 * j for _, j in pairs] + [n1 + 3 * k for k in head] \
    + [3 * k for k in nut]
kept = pos[(np.array(nodes)[:, None] + np.arange(3)).ravel()]
cb = CraigBampton(K, M, np.unique(kept[kept >= 0]), 10)
print(cb.summary())


def row(plus, minus):
    """Reduced row of the relative displacement u[plus] - u[minus] (model DOFs of the unclamped
    numbering; both kept physical by the reduction, a clamped DOF is zero)."""
    r = np.zeros(cb.n_dofs)
    for d, s in ((plus, 1.0), (minus, -1.0)):
        if pos[d] >= 0:
            r[cb.coordinate_index(pos[d])] = s
    return r


kt, kn, mu = 1e8, 3e8, 0.5                                     # N/m, N/m, - (per node)
contacts = [ContactElement(Friction3D(kt, kn, mu, 0.0),        # touching, unloaded
                           np.array([row(n1 + 3 * j, 3 * i),        # t1 = x slip
                                     row(n1 + 3 * j + 1, 3 * i + 1),  # t2 = y slip
                                     row(3 * i + 2, n1 + 3 * j + 2)]),  # n = approach
                           f"node {i}") for i, j in pairs]
# M6 shank: E A / L = 2e11 Pa * 2e-5 m^2 / 10 mm; its elongation is the mean uz under the head
# minus the mean uz under the nut, the washer faces' loads spread over their nodes
bolt = Bolt.between(cb.n_dofs, cb.coordinate_index([pos[n1 + 3 * k + 2] for k in head]),
                    cb.coordinate_index([pos[3 * k + 2] for k in nut]), 5e3, 2e11 * 2e-5 / 0.01,
                    "M6")
joint = BoltedJoint(cb.Kr, cb.Mr, contacts, [bolt])

# ---- 1. the preloaded state -----------------------------------------------------------------------
state = joint.preload(n_modes=4)
state.save(out / "preload")
print(f"contacts: {state.counts}; normal forces sum to {state.resultant:.9f} N "
      f"(bolt {bolt.preload:.0f} N); Newton iterations {state.iterations}")
print("stuck-interface frequencies (Hz):", np.round(state.freq_hz, 1))

# ---- 2. the damped nonlinear mode about it -------------------------------------------------------
drive = int(np.argmax(np.abs(state.shapes[:, 0])))
hb = joint.hb_system(state, 1e-7 * joint.K, 1, fex=drive, dof=drive)   # light damping
mode = dnnm(hb, (1e-7, 6e-6), 0, ds=0.3, ds_max=0.5, max_steps=50)
f_nl = mode.w0 / (2 * math.pi)
print(f"dNNM: {f_nl[0]:.4f} Hz at small amplitude (stuck modes: {state.freq_hz[0]:.4f} Hz), "
      f"{f_nl[-1]:.2f} Hz and damping ratio {mode.zeta[-1]:.2e} at the last point")

xy = lower.points[[i for i, _ in pairs], :2]                   # m
plots.preload_map(state, xy, path=out / "preload_map.png", case="5 kN")
plots.joint_backbone(mode, state, path=out / "backbone.png", case="first bending mode")
