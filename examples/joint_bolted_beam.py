"""Bolted lap-joint beam: from the bolt preload to frequency and damping against amplitude
==========================================================================================

The beam of ``fesub joint`` (after the Brake-Reuss beam: two 420 mm steel half-beams of
25.4 mm square section bolted over a 120 mm lap by three bolts of 12 kN) on the bundled
**coarse** mesh (55 node pairs on the lap instead of 200), with one harmonic, so that it runs in
seconds; ``fesub joint`` runs the full-size model with three harmonics.

1. :func:`fesub.models.bolted_beam.build`: two Craig-Bampton half-beams, a
   :class:`~fesub.hbm.Friction3D` contact at each node pair of the lap (stiffness per unit area
   times the node's tributary area), three :class:`~fesub.hbm.Bolt` s, the whole reduced onto
   the contacts' relative displacements.
2. :meth:`~fesub.hbm.BoltedJoint.preload`: the contact state under the bolts (the normal forces
   sum to the bolt loads) and the stuck-interface modes of the free beam.
3. :func:`~fesub.hbm.dnnm` of the first vertical bending mode about the preload, with the mean
   of the contact forces kept (``constant=True``, as ``fesub joint`` does by default: the beam
   is free, and the vibration can push the lap open on average): frequency and damping ratio
   against amplitude, and :func:`~fesub.hbm.interface_states`: pressure and slip over the lap
   at two points of it.
"""

import math
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402

from fesub.hbm import dnnm, interface_states, linear_modes, plots  # noqa: E402
from fesub.models.bolted_beam import build, bundled_mesh  # noqa: E402

out = Path(sys.argv[1] if len(sys.argv) > 1 else "fesub-out/joint_bolted_beam")
out.mkdir(parents=True, exist_ok=True)

# ---- 1. the model ------------------------------------------------------------------------------
model = build(mesh=bundled_mesh(coarse=True), n_modes_half=8, n_modes=8)
print(f"{model.info['dofs']} FE DOFs -> {model.joint.n} coordinates, {model.n_contacts} contacts")

# ---- 2. the preload and the stuck-interface modes ---------------------------------------------------
state = model.joint.preload(n_modes=8)
mode = model.bending_mode(state.shapes, state.freq_hz)
print(f"contacts {state.counts}; normal forces sum to {state.resultant:.6f} N (3 x 12 kN); "
      f"first bending mode {state.freq_hz[mode]:.2f} Hz")
plots.preload_map(state, model.xy, path=out / "preload_map.png", case="12 kN per bolt")

# ---- 3. the damped nonlinear mode and the interface along it ---------------------------------------
drive = int(np.argmax(np.abs(state.shapes[:, mode])))
hb = model.hb_system(state, 1, 2 * math.pi * state.freq_hz[mode], dof=drive, constant=True)
M, _, K = hb.linear_matrices(stuck=True)
_, V = linear_modes(M, K)       # all-stuck modes: the dNNM's start, nearest in shape
start = int(np.argmax(np.abs(V.T @ (M @ state.shapes[:, mode]))))
dn = dnnm(hb, (1e-6, 1.5e-5), start, force_dof=drive, max_steps=120, kink_ds=1e-3)
f = dn.w0 / (2 * math.pi)
print(f"dNNM: {f[0]:.2f} Hz, damping ratio {dn.zeta[0]:.2e} at small amplitude -> {f[-1]:.2f} Hz, "
      f"{dn.zeta[-1]:.2e} at a = {dn.a[-1]:.2e} sqrt(kg) m ({dn.stop_reason})")
tip = model.tip_amplitude(dn.Q, hb.h0)   # the fundamental's amplitude at the upper free end
plots.joint_backbone(dn, state, mode=mode, amplitude=tip,
                     amplitude_label="tip displacement amplitude [m]",
                     path=out / "backbone.png", case="coarse mesh, Nh = 1")
pick = [int(np.argmin(np.abs(np.log(dn.a / (dn.a[-1] / 10))))), len(dn.a) - 1]
maps = interface_states(hb, dn.Q[pick], dn.w0[pick], dn.a[pick], tip[pick], model.xy,
                        model.area)
maps.save(out / "interface")
plots.interface_maps(maps, path=out / "interface.png", case="coarse mesh, Nh = 1")
