"""Sliding contact: beam-on-beam in a few seconds
==============================================

Beam-on-beam in a few seconds: build the benchmark, check its reduced models, find where it is
unstable at mu = 0.3 and run 20 ms of the compiled transient.

    python examples/beam_on_beam_quick.py [OUTDIR]
"""

import sys
import tempfile
from pathlib import Path

import numpy as np

from fesub.contact import simulate

from fesub.contact.analyses import eigen

from fesub.contact.sliding import plots
from fesub.models import beam_on_beam as bb

out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp())
model = bb.build()
print(model.cb1.summary())
print(model.cb2.summary())
system = bb.contact_system(model)
print(f"critical time step {system.critical_step():.3e} s (highest reduced frequency "
      f"{system.max_frequency_hz() / 1e3:.0f} kHz)")

positions = np.arange(0.0535, 0.0545, 0.25e-3)  # around one of the unstable positions
loci = eigen.eigenvalue_loci(system, positions, mu=0.3, n_basis=120)
for x, f, re in loci.unstable():
    print(f"unstable at x = {x * 1e3:.2f} mm: {f:.0f} Hz, real part {re:.1f} 1/s")

res = simulate(system, mu=0.3, duration=0.02, vx=model.params.vx, roughness_std=model.params.roughness * model.params.Fy, seed=1)
print(res.status, res.steps, "steps", f"({res.steps / res.wall_time:.3g} steps/s)")
print("lambda in [%.3f, %.3f] N" % (res.signals["lambda"].min(), res.signals["lambda"].max()))
print("wrote", res.save(out / "beam_on_beam_mu0.3"))

# the figures of the study: contact force, sliding velocity and tip acceleration; the loci
plots.plot_transient(res, out / "transient_mu0.3.png")
plots.plot_loci(loci, out / "loci_mu0.3.png")
