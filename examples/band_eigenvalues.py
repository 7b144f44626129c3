"""Eigenvalues in a frequency band, certified: a block on a belt and the belt model over mu
=========================================================================================

The complex eigenvalues of a steady sliding state in a frequency band only
(:mod:`fesub.contact.analyses.band`): shift-invert Arnoldi with several shifts covering the band,
and a certificate that none is missed (the winding number of det T around the band's rectangle,
the eigenvalues found divided out).

* left, a plane-stress block (0.4 x 0.02 m, 40 x 2 elements, clamped at its top, 41 contact
  nodes) sliding on a belt at mu = 0.3: every eigenvalue of the linearised system (grey, a dense
  eig), the band 1000-1300 Hz with ``|Re| <= 100`` 1/s (the rectangle, in rad/s), the shifts and the
  disks they searched, and the band's eigenvalues (circles), equal to the dense ones in the
  rectangle;
* right, the textbook belt model beside a chain of 40 masses that no contact touches: the
  band-limited mu sweep (45-70 Hz) follows the eigenvalues over mu (tracks) through the merging of
  the belt pair at the closed-form critical mu.

Writes the figure and the results to ``fesub-out/band_eigenvalues`` (or the directory given as the
first argument).

    python examples/band_eigenvalues.py [OUTDIR]
"""

import sys
from pathlib import Path

import numpy as np

from fesub.contact import Body, ContactInterface, MultibodyModel
from fesub.contact.analyses.band import band_eigenvalues
from fesub.contact.analyses.linearised import linearise
from fesub.contact.analyses.mode_coupling import belt_two_dof, mu_sweep
from fesub.contact.analyses.steady import steady_state
from fesub.contact.engine.friction import Coulomb
from fesub.fe import PlaneStress, rectangle
from fesub.plots import style
from fesub.substructure import Substructure

out = Path(sys.argv[1] if len(sys.argv) > 1 else "fesub-out/band_eigenvalues")
out.mkdir(parents=True, exist_ok=True)

# the block on a belt
mesh = rectangle(0.4, 0.02, 40, 2)
sub = Substructure(mesh, PlaneStress(2e6, 0.3, 1000.0, 0.01), clamped=["top"], name="block")
bottom = mesh.nodes("bottom")
bottom = bottom[np.argsort(mesh.points[bottom, 0])]
belt_body = Body([[1.0]], [[0.0]], [[-0.4, 1e-4], [0.8, 1e-4]], [[0, -1], [0, -1]], name="belt",
                 prescribed={0: -0.1})
block = MultibodyModel([Body.from_substructure(sub), belt_body], [ContactInterface("block", bottom, "belt", [[0, 1]])])
lin = linearise(block, steady_state(block, friction=Coulomb(0.3)))
res = band_eigenvalues(lin, 1000.0, 1300.0, max_rate=100.0)
dense = lin.eigenvalues()
w1, w2 = 2 * np.pi * 1000.0, 2 * np.pi * 1300.0
ref = dense[(dense.imag >= w1) & (dense.imag <= w2) & (np.abs(dense.real) <= 100.0)]
err = max(np.abs(ref - z).min() / abs(z) for z in res.lam)
print(f"block: {res.lam.size} eigenvalues in the band of {res.n_total} (dense eig: {ref.size} in the same region, "
      f"largest relative difference {err:.1e}); certified: {res.certified} (winding {res.winding:.1e}, "
      f"{res.shifts.size} shifts, {res.n_points} contour points)")
res.save(out / "block_band")

# the belt model beside a chain of 40 masses, over mu
b = belt_two_dof()
n = 40
K = np.kron(2e5 * np.eye(n) - 1e5 * (np.eye(n, k=1) + np.eye(n, k=-1)), np.eye(2))
chain = Body(0.5 * np.eye(2 * n), K, np.c_[np.arange(n, dtype=float), np.full(n, 5.0)],
             np.arange(2 * n).reshape(n, 2), name="chain")
model = MultibodyModel([*b.model.bodies, chain], b.model.interfaces)
c = b.coefficients
closed = ((c["k11"] - c["k22"]) ** 2 + 4 * c["k12"] * c["k21"]) / (4 * c["s"] * c["k21"] * c["k3"])
sweep = mu_sweep(model, np.linspace(0.0, 0.3, 16), band={"f_lo": 45.0, "f_hi": 70.0, "max_rate": 20.0}, tol=1e-10)
print(f"belt and chain: critical mu {sweep.critical_mu:.10f}, closed form {closed:.10f} "
      f"(relative difference {abs(sweep.critical_mu / closed - 1):.1e}); every mu certified: {sweep.certified.all()}")
sweep.save(out / "belt_band_sweep")

plt = style.pyplot()
fig, axes = plt.subplots(1, 3, figsize=(11, 4.2), gridspec_kw={"width_ratios": [1.2, 1, 1]})
ax = axes[0]
ax.plot(dense.real, dense.imag, ".", color="0.7", ms=3, label="dense eig (all)")
t = np.linspace(0, 2 * np.pi, 200)
for s, r in zip(res.shifts, res.radii):
    ax.plot(r * np.cos(t), s.imag + r * np.sin(t), color="C2", lw=0.7)
    ax.plot(0, s.imag, "+", color="C2")
ax.plot([-100, 100, 100, -100, -100], [w1, w1, w2, w2, w1], color="C3", lw=1.0, label="band region")
ax.plot(res.lam.real, res.lam.imag, "o", mfc="none", color="C0", ms=6, label="band-limited")
ax.set_aspect("equal")
ax.set_xlim(-1500, 1500)
ax.set_ylim(4500, 10000)
ax.set_xlabel("real part [1/s]")
ax.set_ylabel("imaginary part [rad/s]")
ax.set_title("block on a belt, mu = 0.3")
ax.legend(fontsize=7, loc="lower left")
tr = sweep.tracks()
for k in range(tr.shape[1]):
    axes[1].plot(sweep.mus, tr[:, k].imag / (2 * np.pi), "-", lw=0.8)
    axes[2].plot(sweep.mus, tr[:, k].real, "-", lw=0.8)
for a in axes[1:]:
    a.axvline(closed, color="C3", lw=0.8, ls="--", label="closed-form critical mu")
    a.set_xlabel("friction coefficient mu")
axes[1].set_ylabel("frequency [Hz]")
axes[2].set_ylabel("real part [1/s]")
axes[1].set_title("belt model and chain, 45-70 Hz")
axes[2].legend(fontsize=7)
fig.tight_layout()
style.save(fig, out / "band_eigenvalues.png")
