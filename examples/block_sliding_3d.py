"""An elastic hexahedral block pulled across a plate in 3D: the friction cone at each node
=========================================================================================

A solid block (20 x 20 x 10 mm, 2 x 2 x 1 hexahedra, E = 2 MPa) is pressed onto a rigid plate by
10 N, then pulled by a tangential load that grows at 20 N/s along a direction 30 degrees off x,
with Coulomb friction mu = 0.3 at its nine bottom nodes (node-to-surface contact,
:class:`fesub.contact.ContactInterface3D`, each step's problem solved on the exact friction cone).
Slip starts at a pull of 2.1 N, spreads over the nodes, and the whole block slides once the load
reaches mu N = 3 N (2.99 N, one output sample of 0.01 N before) (the run stops just after: pulled at its top, the soft block then tips and
chatters). Runs in a few seconds; writes its figure and result to
``fesub-out/block_sliding_3d`` (or the directory given as the first argument).
"""

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from fesub.contact import Body, ContactInterface3D, MultibodyModel, simulate_multibody  # noqa: E402
from fesub.fe import Solid, box  # noqa: E402
from fesub.substructure import Substructure  # noqa: E402

out = Path(sys.argv[1] if len(sys.argv) > 1 else "fesub-out/block_sliding_3d")
out.mkdir(parents=True, exist_ok=True)

N, MU, RATE, T_PULL, ANGLE = 10.0, 0.3, 20.0, 0.06, np.radians(30.0)
e = np.array([np.cos(ANGLE), np.sin(ANGLE)])
mesh = box(0.02, 0.02, 0.01, 2, 2, 1)
sub = Substructure(mesh, Solid(2e6, 0.3, 1000.0), rayleigh=(200.0, 0.0))
bottom, top = mesh.nodes("zmin"), mesh.nodes("zmax")
share = np.ones(top.size) / top.size
dx, dy, dz = (sub.dofs(top, c) for c in "xyz")


def loads(t):
    """Normal load ramped smoothly to N over 0.05 s, then the tangential pull along e (N)."""
    f = np.zeros(sub.n_dofs)
    s = min(t / 0.05, 1.0)
    f[dz] = -N * s * s * (3 - 2 * s) * share
    T = RATE * max(t - T_PULL, 0.0)
    f[dx], f[dy] = T * e[0] * share, T * e[1] * share
    return f


block = Body.from_substructure(sub, name="block", loads=loads)
plate = Body(np.zeros((0, 0)), np.zeros((0, 0)),
             [[-0.05, -0.05, 0.0], [0.07, -0.05, 0.0], [0.07, 0.07, 0.0], [-0.05, 0.07, 0.0]],
             -np.ones((4, 3), int), name="plate")
model = MultibodyModel([block, plate], [ContactInterface3D("block", bottom, "plate", [[0, 1, 2, 3]], MU,
                                                           face_type="quad4")])
res = simulate_multibody(model, duration=T_PULL + 1.04 * MU * N / RATE, fs_out=2e3, progress=False)
res.save(out / "block3d")

state = res.nodes["state"]
pull = RATE * np.maximum(res.t - T_PULL, 0.0)
gross = np.flatnonzero(np.all(state == 2, axis=1) & (pull > 0))[0]
first = np.flatnonzero(np.any(state == 2, axis=1) & (pull > 0))[0]
print(f"first slip at T = {pull[first]:.3f} N, gross sliding at T = {pull[gross]:.3f} N (mu N = {MU * N:.3f} N)")

# %%
# Left: the friction force (the tangential forces summed over the nodes) against the pull, with
# the cone's limit mu times the normal force. Right: each bottom node's state over time (0 open, 1 stick, 2 slip).
F = res.contact_forces()
fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
a.plot(res.t, np.hypot(F["x"], F["y"]), label="|friction force|")
a.plot(res.t, pull, "--", label="pull")
a.plot(res.t, MU * F["normal"], "k", lw=0.8, label="mu x normal force")
a.set(xlabel="t (s)", ylabel="force (N)", title="friction against the pull")
a.legend()
b.imshow(state.T, aspect="auto", interpolation="nearest", origin="lower",
         extent=(res.t[0], res.t[-1], -0.5, state.shape[1] - 0.5), cmap="viridis", vmin=0, vmax=2)
b.set(xlabel="t (s)", ylabel="bottom node", title="state: 0 open, 1 stick, 2 slip")
fig.tight_layout()
fig.savefig(out / "block3d.png", dpi=120)
