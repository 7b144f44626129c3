"""Your own contact study: a steel block pressed on an aluminium plate and dragged along it
=========================================================================================

A contact study of your own, end to end, on the multibody contact engine
(:mod:`fesub.contact.engine.bodies`): an aluminium cantilever plate (200 x 20 mm, 5 mm thick,
clamped at its left end, reduced by Craig-Bampton with its top edge kept) carries a small steel
block (10 x 5 mm, 5 mm thick) that is pressed on it by 20 N and dragged along it at 0.1 m/s by
its top edge, with Coulomb friction mu = 0.25.

1. meshes and node sets (:func:`fesub.fe.rectangle`: ``top``, ``left``, ``top_left`` ...);
2. substructures: material, clamp, damping (the choice and its reason below);
3. Craig-Bampton reduction of the plate, keeping the DOFs the contact needs;
4. bodies: the block's top edge driven in x, pressed by a load ramp; the contact interface;
5. the run: load ramp, settling, then the drag; stick, slip and the forces against time;
6. figures, the energy accounts, saving and reopening the result.

Damping. Rayleigh damping ``C = alpha M + beta K`` gives the modal damping ratio
``zeta(omega) = alpha / (2 omega) + beta omega / 2``. The plate's first bending mode is near
410 Hz: ``alpha = 2 zeta omega_1`` with zeta = 2 % damps it in a few periods (settling after the
load ramp) without over-damping; ``beta`` damps the high modes of the contact edge (zeta = 5 %
at 20 kHz). Copying another study's ``(alpha, beta)`` is a mistake: the ratio depends on the
frequencies of *your* model. The block gets stiffness-proportional damping only: it moves with
its drive, and mass-proportional damping would resist that rigid motion (a force ``alpha m v``
paid by the drive, not a dissipation of the deformation).

Runs in a few seconds; writes figures and the result to ``fesub-out/own_contact_study`` (or the
directory given as the first argument).
"""

import sys
from pathlib import Path

import numpy as np

import fesub
from fesub.contact import Body, ContactInterface, MultibodyModel, simulate_multibody
from fesub.contact.engine.plots import plot_contact_forces, plot_state_map
from fesub.fe import PlaneStress, rectangle
from fesub.substructure import CraigBampton, Substructure

out = Path(sys.argv[1] if len(sys.argv) > 1 else "fesub-out/own_contact_study")
out.mkdir(parents=True, exist_ok=True)

N, MU, V = 20.0, 0.25, 0.1                  # normal load (N), friction (-), drag velocity (m/s)
T_LOAD, T_DRAG, T_END = 2e-3, 4e-3, 24.5e-3  # end of the load ramp, start of the drag, end (s)

# %%
# 1. Meshes. The plate: 200 x 20 mm in 50 x 4 elements; the block: 10 x 5 mm in 4 x 2,
# placed on the plate's top edge 150 mm from the clamp. Node sets come with the mesh. The
# smallest element sets the stable time step (its highest frequency): keep the contact region
# fine enough for the contact pressure you need, no finer.
plate_mesh = rectangle(0.200, 0.020, 50, 4)
block_mesh = rectangle(0.010, 0.005, 4, 2, origin=(0.150, 0.020))

# %%
# 2. Substructures: plane stress, 5 mm thick, SI units; lumped masses (the explicit time step
# is then about 1.7 times longer than with consistent ones). The damping as explained above.
w1 = 2 * np.pi * 410.0
aluminium = PlaneStress(E=70e9, nu=0.33, rho=2700.0, thickness=0.005)
steel = PlaneStress(E=210e9, nu=0.30, rho=7850.0, thickness=0.005)
plate = Substructure(plate_mesh, aluminium, clamped=["left"], name="plate", lumped=True,
                     rayleigh=(2 * 0.02 * w1, 2 * 0.05 / (2 * np.pi * 20e3)))
block = Substructure(block_mesh, steel, name="block", lumped=True,
                     rayleigh=(0.0, 2 * 0.05 / (2 * np.pi * 200e3)))

# %%
# 3. Craig-Bampton: the plate keeps its top edge (the contact surface) physical, with 12 fixed-
# interface modes. The top-left corner node is clamped: it is part of the clamp, not a boundary
# DOF, so it is left out of the boundary (``plate.dofs`` names it if it is not).
top = np.setdiff1d(plate_mesh.nodes("top"), plate_mesh.nodes("left"))
top = top[np.argsort(plate_mesh.points[top, 0])]
cb = CraigBampton(plate, None, plate.dofs(top), 12)
print(cb.summary())

# %%
# 4. Bodies and the contact. The block's top edge is driven in x: still until T_DRAG, then its
# velocity rises smoothly to V over 1 ms (a callable t -> (u m, v m/s, a m/s^2)). The normal load
# rises smoothly to N by T_LOAD, shared over the top edge like a uniform traction; it is given
# as force series (one value per time step on each loaded coordinate: no Python call per step,
# where a callable ``loads=`` would be called at every step). The block's bottom nodes are the
# slaves on the plate's top edge (the open side is +y).


def drag(t):
    """Displacement (m), velocity (m/s), acceleration (m/s^2) of the block's top edge."""
    tau, r = max(t - T_DRAG, 0.0), 1e-3
    if tau < r:
        s = tau / r
        return V * r * (s ** 3 - 0.5 * s ** 4), V * (3 * s * s - 2 * s ** 3), V * (6 * s - 6 * s * s) / r
    return V * (tau - 0.5 * r), V, 0.0


btop, bbottom = block_mesh.nodes("top"), block_mesh.nodes("bottom")
bbottom = bbottom[np.argsort(block_mesh.points[bbottom, 0])]
share = np.ones(btop.size)
share[[0, -1]] = 0.5
share /= share.sum()
plate_body = Body.from_craig_bampton(cb, name="plate")
block_body = Body.from_substructure(block, name="block",
                                    prescribed={int(d): drag for d in block.dofs(btop, "x")})
segments = np.column_stack([top[:-1], top[1:]])
contact = ContactInterface("block", bbottom, "plate", segments, mu=MU, name="block on plate")
model = MultibodyModel([plate_body, block_body], [contact])

# %%
# 5. The run: 24.5 ms (load ramp, settling, 2 mm of drag) at 0.9 times the stability limit,
# sampled at 50 kHz. The load ramp as force series needs the time step first.
h = 0.9 * model.critical_step()
steps = int(np.ceil(T_END / h - 1e-9))
ramp = np.clip(np.arange(steps) * h / T_LOAD, 0.0, 1.0)
ramp = -N * ramp * ramp * (3 - 2 * ramp)
series = [("block", int(d), ramp * w) for d, w in zip(block.dofs(btop, "y"), share)]
res = simulate_multibody(model, duration=T_END, h=h, fs_out=50e3, series=series, progress=False)
state = res.nodes["state"]
forces = res.contact_forces()
sliding = (res.t > T_DRAG + 4e-3) & np.all(state >= 2, axis=1)
ratio = np.abs(forces["friction"][sliding]) / forces["normal"][sliding]
print(f"{res.status}: {res.steps} steps of {res.h:.3g} s in {res.wall_time:.2f} s")
print(f"sliding: friction / normal force = {ratio.mean():.4f} (mu = {MU})")

# %%
# The energy accounts (J): the strain energy is that of the deformation (the block dragged 2 mm
# stores only what friction shears into it, plus the plate's bending under the 20 N), the drive's
# work is what friction dissipates, and the balance closes.
e = res.energies
print("energies (J): " + ", ".join(f"{k} {v[-1]:.4g}" for k, v in e.items()))
print(f"friction dissipation {e['friction_dissipation'][-1]:.4g} J; mu N x 2 mm = "
      f"{MU * N * (V * (T_END - T_DRAG - 0.5e-3)):.4g} J; balance residual "
      f"{np.abs(res.energy_residual()).max():.2g} J")

# %%
# 6. Figures: the states of the block's bottom nodes, and the friction and normal forces
# against time (the sums of the tangential and normal multipliers over the interface). While
# the load rises the plate bends under the block and its top fibre moves along x by about 10 um:
# the block, held by its still drive, slides on it (slip-) and back as the plate rings; the drag
# then makes it slide forward (slip+), the friction force at -mu times the normal force.
plot_state_map(res, block_mesh.points[bbottom, 0], out / "states.png",
               title=f"steel block dragged on the plate, mu = {MU:g}",
               marks=[(T_LOAD, "load on"), (T_DRAG, "drag starts")])
plot_contact_forces(res, out / "forces.png", title="block on plate: contact forces", mu=MU)

# %%
# Saving and reopening: any result reopens with ``fesub.load``, and ``to_xarray`` gives the same
# data with units.
path = res.save(out / "block_on_plate")
again = fesub.load(path)
print(again.summary()["results"]["friction_dissipation"])
