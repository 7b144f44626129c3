"""3D substructures: an L-bracket in two parts, reduced and tied
==============================================================

A steel L-bracket (the bundled Gmsh mesh ``bracket.msh``: 1445 ten-node tetrahedra, a base plate
60 x 40 x 5 mm clamped at one end and a flange rising 35 mm from the other) is cut along its two
physical volumes, ``base`` and ``flange``. Each becomes a 3D
:class:`~fesub.substructure.Substructure`, reduced by Craig-Bampton to fixed-interface modes
plus the nodes of the shared face ``interface``; the two reduced models are tied by matching
nodes in an :class:`~fesub.substructure.SubstructureAssembly`.

1. read the mesh cut into its volumes (:func:`~fesub.substructure.read_volumes`);
2. one substructure per volume (steel, the base clamped on ``clamp``), Craig-Bampton each;
3. the coupled modes against the monolithic bracket, and how the error falls with the modes kept;
4. the coupled modes written to VTU for ParaView (frequencies as field data), the first two
   rendered off screen (pyvista).

    python examples/bracket_3d.py [OUTDIR]
"""

import importlib.util
import sys
from pathlib import Path

import numpy as np

from fesub.fe import Solid
from fesub.models.common import bundled_file
from fesub.plots import style
from fesub.plots.modes import write_modes_vtu
from fesub.substructure import CraigBampton, Interface, Substructure, SubstructureAssembly, read_volumes

out = Path(sys.argv[1] if len(sys.argv) > 1 else "fesub-out/bracket_3d")
out.mkdir(parents=True, exist_ok=True)

# %%
# The mesh, whole and cut along its physical volumes
# ---------------------------------------------------
# The two volumes share the nodes of the face ``interface``: each sub-mesh keeps them, with the
# node sets that fall inside it (``clamp`` on the base, ``tip`` on the flange).
whole, volumes = read_volumes(bundled_file("bracket.msh"))
for name, mesh in volumes.items():
    print(f"{name:7s}: {mesh.n_cells} tetra10, {mesh.n_points} nodes, node sets {sorted(mesh.node_sets)}")

steel = Solid(E=210e9, nu=0.3, rho=7850.0)                  # Pa, -, kg/m^3
base = Substructure(volumes["base"], steel, clamped=["clamp"], name="base")
flange = Substructure(volumes["flange"], steel, name="flange")
print(base, flange, sep="\n")

# %%
# Craig-Bampton on each part, tied through the interface
# ------------------------------------------------------
# Each part keeps the x, y, z DOFs of its interface nodes and 20 fixed-interface modes; the
# flange floats (no clamp): its interface holds it, so its constraint modes exist.
N_MODES = 20
tie = [Interface("base", "interface", "flange")]


def reduced_assembly(n_modes):
    """The two parts reduced to ``n_modes`` fixed-interface modes each, tied at the interface."""
    parts = [CraigBampton(s, None, s.dofs("interface"), n_modes) for s in (base, flange)]
    return SubstructureAssembly(parts, tie)


assembly = reduced_assembly(N_MODES)
for cb in assembly.parts:
    print(cb.obj.summary())
coupled = assembly.modes(6)

monolithic = Substructure(whole, steel, clamped=["clamp"], name="bracket")
f_ref = monolithic.modes(6)[0]
print(f"\n{'mode':>4} {'monolithic (Hz)':>16} {'coupled CB (Hz)':>16} {'rel. error':>11}")
for i, (fm, fc) in enumerate(zip(f_ref, coupled.freq_hz), 1):
    print(f"{i:>4} {fm:16.3f} {fc:16.3f} {fc / fm - 1:11.2e}")

# %%
# How the error falls with the modes kept
# ---------------------------------------
# The coupled Craig-Bampton model is a Ritz approximation of the monolithic bracket: its
# frequencies lie above, and come down as fixed-interface modes are added.
counts = (0, 5, 10, 20, 40)
plt = style.pyplot()
fig, ax = plt.subplots(figsize=(7, 4))
for k in counts:
    err = (assembly if k == N_MODES else reduced_assembly(k)).frequencies(6) / f_ref - 1.0
    ax.semilogy(np.arange(1, 7), err, "o-", label=f"{k} modes per part" + (" (Guyan)" if k == 0 else ""))
ax.set_xlabel("mode number [-]")
ax.set_ylabel("relative frequency error [-]")
ax.set_title("L-bracket, two Craig-Bampton parts against the monolithic mesh")
ax.legend(fontsize=8)
style.save(fig, out / "bracket_cb_convergence.png")

# %%
# Mode shapes to ParaView and to pictures
# ---------------------------------------
# One VTU file per part, each holding the six coupled modes (``mode_01 (604.684 Hz)``, ...) and the
# frequencies as the field data ``natural_frequency_hz``; open both in ParaView and "Warp By
# Vector". The first two modes are rendered off screen when pyvista can draw.
for s, name in enumerate(assembly.names):
    path = write_modes_vtu(volumes[name], coupled.shapes[s], out / f"bracket_{name}_modes.vtu",
                           frequencies_hz=coupled.freq_hz)
    print("modes for ParaView:", path)

if importlib.util.find_spec("pyvista") is None:
    print("pyvista is not installed: no off-screen rendering (pip install \".[viz]\")")
else:
    try:
        pngs = [assembly.plot_mode(coupled, j, out / f"bracket_mode{j + 1}.png") for j in range(2)]
    except Exception as exc:  # noqa: BLE001 - no OpenGL context (no display, no EGL) is an error of VTK's choosing
        print(f"off-screen rendering is not available here ({type(exc).__name__}: {exc}); see the VTU files")
    else:
        from PIL import Image

        fig, axes = plt.subplots(1, 2, figsize=(11, 3.6))
        for j, (a, png) in enumerate(zip(axes, pngs)):
            img = np.asarray(Image.open(png).convert("RGB"))
            drawn = np.argwhere(np.any(img < 245, axis=2))          # crop the white margins
            (r0, c0), (r1, c1) = drawn.min(axis=0), drawn.max(axis=0) + 1
            a.imshow(img[r0:r1, c0:c1])
            a.set_xlabel("image x [pixel]")
            a.set_ylabel("image y [pixel]")
            a.set_axis_off()
        fig.suptitle("L-bracket, first two coupled Craig-Bampton modes (base and flange tied)", y=1.02)
        style.save(fig, out / "bracket_modes.png")
        print("first two modes rendered to", *pngs)
