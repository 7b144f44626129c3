"""A pad dragged on a plate in 3D: pressure and states over the contact face, and a ParaView series
======================================================================================================

The model of ``fesub pad-on-plate`` (:mod:`fesub.models.pad_on_plate`) at a small size: a
polymer pad of 3 x 3 x 2 hexahedra (16 contact nodes on a rigid plate, Coulomb friction
mu = 0.3) pressed by 100 N, then its top dragged along x at 1 mm/s. The pad's outer surface is a
:class:`~fesub.contact.engine.surface_series.RunSurface` whose displacements the run records as
output channels; :func:`~fesub.contact.engine.surface_series.write_contact_series` writes the
deformed pad and plate at every output sample as a ParaView time series (``surfaces.pvd`` and its
VTU files) with the contact pressure, forces, slip velocity, gap and state at each node.
Runs in about 10 s; writes to ``fesub-out/pad_on_plate_series`` (or the directory given as the
first argument). The study itself, with 81 contact nodes, figures and an animation, is
``fesub pad-on-plate``.
"""

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from fesub.contact import simulate_multibody  # noqa: E402
from fesub.contact.engine.surface_series import surface_frames, write_contact_series  # noqa: E402
from fesub.models import pad_on_plate  # noqa: E402

out = Path(sys.argv[1] if len(sys.argv) > 1 else "fesub-out/pad_on_plate_series")
out.mkdir(parents=True, exist_ok=True)

model = pad_on_plate.build(nx=3, ny=3, nz=2)
p = model.params
res = simulate_multibody(model.model, duration=p.t_drag + 1.5e-3, fs_out=2e4, progress=False)
pvd = write_contact_series(res, model.surfaces, out / "surfaces.pvd")
ph = pad_on_plate.phases(res, model)
print(f"{res.steps} steps in {res.wall_time:.1f} s; {pvd.name}: {res.t.size} samples of the pad and the plate")
print(f"normal force / load during the hold: {ph['normal_force_ratio_preload']:.5f}; "
      f"drag force / (mu N) at the end: {ph['drag_force_ratio_end']:.4f}")

# %%
# Left: the drag force (the x component of the contact forces on the plate) against the
# prescribed drag of the pad's top, with mu N. Middle and right: the contact pressure over the
# pad's bottom face at the end of the preload and at the end of the run (from the frames written
# to the series), the node states marked (circle stick, triangle slip).
times, frames = surface_frames(res, model.surfaces, samples=[int(np.searchsorted(res.t, p.t_drag)) - 1,
                                                             res.t.size - 1])
F = res.contact_forces()
drag = model.drag_displacement(res.t)
fig, axes = plt.subplots(1, 3, figsize=(13, 3.8), constrained_layout=True)
keep = res.t >= p.t_drag
axes[0].plot(drag[keep] * 1e6, -F["x"][keep], label="drag force")
axes[0].axhline(p.mu * p.load, color="k", ls="--", lw=0.8, label="mu N")
axes[0].set(xlabel="drag of the pad's top (um)", ylabel="force (N)", title="drag force against drag")
axes[0].legend()
for ax, t, fr in zip(axes[1:], times, frames):
    pad = fr["pad"]
    bottom = pad.point_data["state"] >= 0
    xy = (pad.points[bottom, :2]) * 1e3
    pc = ax.tricontourf(xy[:, 0], xy[:, 1], pad.point_data["contact_pressure"][bottom] * 1e-6, levels=12,
                        cmap="viridis")
    st = pad.point_data["state"][bottom]
    ax.scatter(*xy[st == 1].T, marker="o", c="w", edgecolors="k", s=30)
    ax.scatter(*xy[st == 2].T, marker="^", c="r", edgecolors="k", s=30)
    ax.set(xlabel="x (mm)", ylabel="y (mm)", title=f"contact pressure, t = {t * 1e3:.2f} ms", aspect="equal")
    fig.colorbar(pc, ax=ax, label="pressure (MPa)")
fig.savefig(out / "pad_on_plate.png", dpi=110)
