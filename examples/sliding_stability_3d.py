"""Stability of 3D sliding states: the transverse damping of friction and a block on a belt
========================================================================================

The complex eigenvalues of steady sliding states of solid bodies with node-to-surface contact
(:mod:`fesub.contact.analyses.linearised`, its 3D terms in
:mod:`fesub.contact.analyses.linearised3d`):

* left, a point mass (0.5 kg, springs 4e4 N/m along x and 9e4 N/m along y) pressed with 30 N onto
  a belt moving along x: the friction force follows the direction of the slip, so a slip across
  the sliding direction turns it, a damping ``mu N / v`` on the transverse motion (large at slow
  sliding, vanishing at fast sliding), against the closed form
  ``m s^2 + (mu N / v) s + k_y = 0``;
* right, an elastic block (2 x 2 x 2 hexahedra, clamped at its top, nine contact nodes) pressed
  onto a belt moving at 0.1 m/s 30 degrees off its x axis: its eigenvalues against mu; pairs turn
  unstable as mu rises (their critical mu marked).

Writes the figure and the sweep to ``fesub-out/sliding_stability_3d`` (or the directory given as
the first argument).

    python examples/sliding_stability_3d.py [OUTDIR]
"""

import sys
from pathlib import Path

import numpy as np

from fesub.contact import Body, ContactInterface3D, MultibodyModel
from fesub.contact.analyses.linearised import linearise
from fesub.contact.analyses.mode_coupling import mu_sweep
from fesub.contact.analyses.steady import steady_state
from fesub.fe import Solid, box
from fesub.plots import style
from fesub.substructure import Substructure

out = Path(sys.argv[1] if len(sys.argv) > 1 else "fesub-out/sliding_stability_3d")
out.mkdir(parents=True, exist_ok=True)
BELT = np.array([[-1.0, -1.0, 0.0], [1.0, -1.0, 0.0], [1.0, 1.0, 0.0], [-1.0, 1.0, 0.0]])

# %%
# The mass on a belt: the eigenvalue of the transverse motion against the belt's speed.
m, kx, ky, N, mu = 0.5, 4e4, 9e4, 30.0, 0.4
speeds = np.geomspace(0.05, 2.0, 20)   # underdamped above 0.028 m/s
computed, closed = [], []
for v in speeds:
    mass = Body(np.diag([m, m, m]), np.diag([kx, ky, 0.0]), [[0.0, 0.0, 0.0]], [[0, 1, 2]], name="mass",
                loads=[0.0, 0.0, -N])
    belt = Body(np.eye(2), np.zeros((2, 2)), BELT, [[0, 1, -1]] * 4, name="belt", prescribed={0: v, 1: 0.0})
    model = MultibodyModel([mass, belt], [ContactInterface3D("mass", [0], "belt", np.array([[0, 1, 2, 3]]),
                                                              face_type="quad4", mu=mu)])
    lam = linearise(model, steady_state(model)).eigenvalues()
    lam = lam[lam.imag > 0]
    computed.append(lam[np.argmin(lam.real)])   # the transverse pair (the one along x is undamped)
    c = mu * N / v
    closed.append(np.roots([m, c, ky]))
computed = np.array(computed)
print(f"mass on a belt: transverse decay rate {-computed[0].real:.1f} 1/s at {speeds[0]} m/s, "
      f"{-computed[-1].real:.2f} 1/s at {speeds[-1]} m/s (the closed form mu N / 2 m v: "
      f"{mu * N / (2 * m * speeds[0]):.1f}, {mu * N / (2 * m * speeds[-1]):.2f})")

# %%
# The block on a belt sliding obliquely: eigenvalues against mu.
mesh = box(0.04, 0.04, 0.02, 2, 2, 2)
sub = Substructure(mesh, Solid(2e6, 0.3, 1000.0), clamped=["zmax"], name="block")
a = np.radians(30.0)
belt = Body(np.eye(2), np.zeros((2, 2)), BELT + [0.0, 0.0, 1e-4], [[0, 1, -1]] * 4, name="belt",
            prescribed={0: -0.1 * np.cos(a), 1: -0.1 * np.sin(a)})
block = MultibodyModel([Body.from_substructure(sub), belt],
                       [ContactInterface3D("block", mesh.nodes("zmin"), "belt", np.array([[0, 1, 2, 3]]),
                                           face_type="quad4")])
sweep = mu_sweep(block, np.linspace(0.0, 0.6, 31), tol=1e-3)
for o in sweep.onsets:
    print(f"block: a pair turns {o['kind']} at mu = {o['mu']:.4f}, {o['f_hz']:.1f} Hz")
sweep.save(out / "block_sweep")

plt = style.pyplot()
fig, axes = plt.subplots(1, 2, figsize=(9, 3.8))
ax = axes[0]
ax.semilogx(speeds, -computed.real, "o", ms=4, label="linearised (3D contact)")
ax.semilogx(speeds, [-r.real.max() for r in closed], "-", lw=1, label="closed form")
ax.set_xlabel("belt speed v [m/s]")
ax.set_ylabel("decay rate of the transverse mode [1/s]")
ax.set_title("mass on a belt: damping mu N / v")
ax.legend(fontsize=8)
ax = axes[1]
lam = sweep.lam
keep = np.isfinite(lam) & (lam.imag > 0) & (lam.imag / (2 * np.pi) <= 2000.0)
mus = np.broadcast_to(sweep.mus[:, None], lam.shape)
ax.plot(mus[keep], lam.real[keep], ".", ms=3)
for o in sweep.onsets:
    ax.axvline(o["mu"], color="0.5", lw=0.8, ls="--" if o["kind"] == "unstable" else ":")
ax.set_xlabel("friction coefficient mu")
ax.set_ylim(-1000.0, 1000.0)   # the heavily damped modes below, off the plot
ax.set_ylabel("real part [1/s]")
ax.set_title("block on a belt, 9 nodes, up to 2 kHz")
fig.tight_layout()
style.save(fig, out / "sliding_stability_3d.png")
