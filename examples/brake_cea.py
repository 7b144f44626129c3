"""Disc brake: complex eigenvalues of the sliding pads in a band, below and above a critical mu
==============================================================================================

The bundled disc brake (:mod:`fesub.models.brake`: a steel disc clamped at its hub, two steel pads
pressed on its faces with 2000 N each and driven around it at 1 m/s; each part a 3D Craig-Bampton
substructure, reduced in parallel and cached on disk). Its steady sliding state is linearised at
two friction coefficients and the eigenvalues in the band 4-6 kHz are found by the band-limited,
certified method (:func:`~fesub.contact.analyses.band.band_eigenvalues`):

* left, the eigenvalues of the band at mu = 0.3 (circles) and 0.6 (crosses): the pair at 4.79 kHz
  has crossed into the right half-plane (its critical mu is 0.415, ``fesub brake``'s sweep);
* right, that pair's mode at mu = 0.6 (the axial displacement of the disc's nodes, phase-aligned
  real part): five nodal diameters (read from the shape by
  :func:`~fesub.models.brake.nodal_diameters`), the disc's doublet coupled through the pads.

Writes the figure and the results to ``fesub-out/brake_cea`` (or the directory given as the first
argument). The study ``fesub brake`` adds the sweep over mu, the critical mu of every pair, mode
pictures and the transient.

    python examples/brake_cea.py [OUTDIR]
"""

import sys
from pathlib import Path

import numpy as np

from fesub.contact.analyses.band import band_eigenvalues
from fesub.contact.analyses.linearised import linearise
from fesub.contact.analyses.steady import steady_state
from fesub.contact.engine.friction import Coulomb
from fesub.models import brake
from fesub.plots import style

out = Path(sys.argv[1] if len(sys.argv) > 1 else "fesub-out/brake_cea")
out.mkdir(parents=True, exist_ok=True)
model = brake.build(speed=1.0, jobs=2)
print(f"reduced {model.reduction['reduced']}, read from the cache {model.reduction['cached']}")
m = model.model
bands = {}
for mu in (0.3, 0.6):
    state = steady_state(m, friction=Coulomb(mu), sliding_velocity=model.sliding_velocity())
    bands[mu] = band_eigenvalues(linearise(m, state), 4000.0, 6000.0, max_rate=200.0)
    bands[mu].save(out / f"band_mu_{mu:g}")
    lam = bands[mu].lam
    print(f"mu = {mu:g}: {lam.size} eigenvalues in 4-6 kHz (certified {bands[mu].certified}); largest real "
          f"part {lam.real.max():+.3g} 1/s at {lam[np.argmax(lam.real)].imag / (2 * np.pi):.1f} Hz")

# the unstable pair's mode at mu = 0.6 (the full eig of the same system gives the mode)
state = steady_state(m, friction=Coulomb(0.6), sliding_velocity=model.sliding_velocity())
lam, modes = linearise(m, state).eigenvalues(return_modes=True)
target = bands[0.6].lam[np.argmax(bands[0.6].lam.real)]
k = int(np.argmin(np.abs(lam - target)))
v = modes[:, k] / modes[np.argmax(np.abs(modes[:, k])), k]
u = model.displacement("disc", np.real(v))
disc = model.meshes["disc"]
nd, share = brake.nodal_diameters(disc.points, model.displacement("disc", v))
print(f"the unstable pair's mode: {nd} nodal diameters ({100 * share:.0f} % of the rim's axial motion)")
top = disc.points[:, 2] > 0.005 - 1e-9

plt = style.pyplot()
fig, axes = plt.subplots(1, 2, figsize=(10, 4.2))
ax = axes[0]
for mu, mk in ((0.3, "o"), (0.6, "x")):
    lb = bands[mu].lam
    ax.plot(lb.real, lb.imag / (2 * np.pi), mk, mfc="none", label=f"mu = {mu:g}")
ax.axvline(0.0, color="0.5", lw=0.8)
ax.set_xlabel("real part [1/s]")
ax.set_ylabel("frequency [Hz]")
ax.set_title("eigenvalues in 4-6 kHz")
ax.legend()
ax = axes[1]
lim = np.abs(u[top, 2]).max()
sc = ax.scatter(disc.points[top, 0], disc.points[top, 1], c=u[top, 2], s=14, cmap="RdBu_r", vmin=-lim, vmax=lim)
ax.set_aspect("equal")
ax.set_title(f"unstable mode at mu = 0.6\n{lam[k].imag / (2 * np.pi):.0f} Hz, {lam[k].real:+.3g} 1/s, {nd} nodal diameters")
ax.set_xlabel("x [m]")
ax.set_ylabel("y [m]")
fig.colorbar(sc, ax=ax, label="axial displacement (normalised)")
style.save(fig, out / "brake_cea.png")
