"""Partial slip of an elastic block: many contact nodes that stick, slip and separate
=====================================================================================

A plane-stress block (0.1 m x 0.02 m, 10 x 2 elements) is pressed onto a rigid ground by 10 N,
then pulled along by a tangential load that grows at 20 N/s, with Coulomb friction mu = 0.3 at
its eleven bottom nodes (:mod:`fesub.contact.engine.bodies`). Slip starts at the leading edge, spreads
across the contact, and the whole block slides once the load reaches mu N = 3 N. Runs in a few
seconds; writes its figures and result to ``fesub-out/block_partial_slip`` (or the directory given
as the first argument).
"""

import sys
from pathlib import Path

import numpy as np

from fesub.contact import Body, ContactInterface, MultibodyModel, simulate_multibody
from fesub.contact.engine.plots import plot_state_map
from fesub.fe import PlaneStress, rectangle
from fesub.substructure import Substructure

out = Path(sys.argv[1] if len(sys.argv) > 1 else "fesub-out/block_partial_slip")
out.mkdir(parents=True, exist_ok=True)

N, MU, RATE, T_PULL = 10.0, 0.3, 20.0, 0.06   # normal load (N), friction, load rate (N/s), start (s)
mesh = rectangle(0.1, 0.02, 10, 2)
sub = Substructure(mesh, PlaneStress(2e6, 0.3, 1000.0, 0.01), rayleigh=(200.0, 0.0))
bottom, top = (mesh.nodes(s) for s in ("bottom", "top"))
bottom = bottom[np.argsort(mesh.points[bottom, 0])]
share = np.ones(top.size)
share[[0, -1]] = 0.5                     # consistent nodal loads of a uniform traction
share /= share.sum()
dx, dy = sub.dofs(top, "x"), sub.dofs(top, "y")


def loads(t):
    """Normal load ramped smoothly to N over 0.05 s, then the tangential pull (N)."""
    f = np.zeros(sub.n_dofs)
    s = min(t / 0.05, 1.0)
    f[dy] = -N * s * s * (3 - 2 * s) * share
    f[dx] = RATE * max(t - T_PULL, 0.0) * share
    return f


block = Body.from_substructure(sub, name="block", loads=loads)
ground = Body(np.zeros((0, 0)), np.zeros((0, 0)), [[-0.05, 0.0], [0.15, 0.0]], [[-1, -1], [-1, -1]],
              name="ground")
model = MultibodyModel([block, ground], [ContactInterface("block", bottom, "ground", [[0, 1]], mu=MU)])
res = simulate_multibody(model, duration=T_PULL + 1.2 * MU * N / RATE, fs_out=1e4, progress=False)
res.save(out / "block")

state = res.nodes["state"]
pull = RATE * np.maximum(res.t - T_PULL, 0.0)
first = np.flatnonzero(np.any(state >= 2, axis=1) & (pull > 0))[0]
gross = np.flatnonzero(np.all(state >= 2, axis=1) & (pull > 0))[0]
print(f"first slip at T = {pull[first]:.3f} N, gross sliding at T = {pull[gross]:.3f} N "
      f"(mu N = {MU * N:.3f} N, {100 * (pull[gross] / (MU * N) - 1):+.2f} %)")
print(f"state changes per node: {res.state_changes.tolist()}, energy residual / work: "
      f"{np.abs(res.energy_residual()).max() / res.energies['external_work'][-1]:.1e}")

# %%
# Node states: open, stick, slip in +x, slip in -x; the dashed lines mark the start of the pull
# and the instant the load reaches mu N.
plot_state_map(res, mesh.points[bottom, 0], out / "states.png",
               title=f"block pulled on the ground, mu = {MU:g}, N = {N:g} N",
               marks=[(T_PULL, "pull starts"), (T_PULL + MU * N / RATE, "T = mu N")])
