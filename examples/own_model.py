"""Your own model, step by step: mesh, node sets, Craig-Bampton, contact, transient, loci
======================================================================================

The beam-on-beam study assembled by hand from its two Gmsh meshes, the way a model of your own
is set up. Replace the two ``.msh`` files with yours: every step reads node sets by their names
(Gmsh physical groups), so nothing else changes.

1. read each mesh (any format meshio reads) and look up its node sets;
2. one :class:`~fesub.substructure.Substructure` per mesh: material, clamps, Rayleigh damping;
3. Craig-Bampton: the DOFs the contact, the loads and the outputs need stay physical;
4. the sliding contact: slave node, target edge, driven DOFs, loads, output channels;
5. complex eigenvalues along the sliding path (stability) and a short transient.

    python examples/own_model.py [OUTDIR]
"""

import sys
from pathlib import Path

import numpy as np

from fesub.contact import SlidingContactSystem, simulate

from fesub.contact.analyses import eigen

from fesub.contact.sliding import plots
from fesub.fe import PlaneStress, read
from fesub.models import beam_on_beam as bb
from fesub.substructure import CraigBampton, Substructure

out = Path(sys.argv[1] if len(sys.argv) > 1 else "fesub-out/own_model")
out.mkdir(parents=True, exist_ok=True)

# 1. meshes (here the bundled ones; node sets are the Gmsh physical groups)
f1, f2 = bb.mesh_paths()
slider, target = read(f1), read(f2)
A, C = slider.nodes("A"), slider.node("C")        # driven upper end (3 nodes), contact corner
print(f"slider: {len(slider.points)} nodes, target: {len(target.points)} nodes")

# 2. substructures: plane stress, 10 mm wide; the target clamped at B; Rayleigh (1/s, s)
aluminium = PlaneStress(E=70e9, nu=0.33, rho=2700.0, thickness=0.010)
polycarbonate = PlaneStress(E=2.4e9, nu=0.37, rho=1200.0, thickness=0.010)
sub1 = Substructure(slider, aluminium, rayleigh=(10.0, 6.5e-8), name="slider")
sub2 = Substructure(target, polycarbonate, clamped=["B"], rayleigh=(10.0, 6.5e-8), name="target")

# 3. Craig-Bampton: the slider keeps A and C physical, the target its whole top edge
boundary1 = np.concatenate([sub1.dofs(A), sub1.dofs([C])])
top = np.setdiff1d(target.nodes("contact"), target.nodes("B"))
cb1 = CraigBampton(sub1, None, boundary1, 20)
cb2 = CraigBampton(sub2, None, sub2.dofs(top), 20)
print(cb1.summary())
print(cb2.summary())

# 4. the contact: C slides on the edge set "contact"; A driven along x, loaded by 0.4 N down
system = SlidingContactSystem(
    cb1, cb2, slave=C, prescribed=sub1.dofs(A, "x"), target_edge="contact",
    loads1={int(d): -0.4 / A.size for d in sub1.dofs(A, "y")},
    outputs1={"C_y": int(sub1.dofs([C], "y")[0])},
    outputs2={"T_y": int(sub2.dofs(target.nodes("T"), "y")[0])})
print(f"critical time step {system.critical_step():.3e} s")

# 5a. stability: complex eigenvalues at a few contact positions (m) for mu = 0.3: every eigenvalue
# of the reduced model (the certified roots of the secular function; the 20 lowest-frequency ones are
# kept: n=None keeps them all, so that an instability of a higher mode is not missed)
positions = np.arange(0.0530, 0.0550, 0.5e-3)
loci = eigen.eigenvalue_loci(system, positions, mu=0.3)
print("unstable (x m, f Hz, Re 1/s):", [tuple(round(v, 4) for v in u) for u in loci.unstable()][:4])
plots.plot_loci(loci, out / "loci.png")

# 5b. a 5 ms transient at mu = 0.3 with a rough surface (0.5 % of the load)
res = simulate(system, mu=0.3, duration=0.005, vx=0.03, roughness_std=0.002, seed=1)
print(res.status, res.steps, "steps; lambda in [%.3f, %.3f] N" % (res.signals["lambda"].min(),
                                                                   res.signals["lambda"].max()))
plots.plot_transient(res, out / "transient.png")       # a_T_y, lambda, v_t
res.save(out / "own_model_mu0.3")
