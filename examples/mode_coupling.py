"""Mode coupling of sliding states: the textbook belt model and a five-node block on a belt
========================================================================================

The complex eigenvalues of a steady sliding state against the friction coefficient
(:mod:`fesub.contact.analyses.mode_coupling`, over the linearisation of
:mod:`fesub.contact.analyses.linearised`):

* left, the two-degree-of-freedom belt model built on the contact engine (a mass held by two
  inclined springs, pressed through a contact spring onto a belt): its two frequencies merge and a
  pair of eigenvalues leaves the imaginary axis at the closed form
  ``[(k11 - k22)^2 + 4 k12 k21] / (4 k21 k3)``;
* right, a plane-stress block (0.04 x 0.02 m, clamped at its top, five contact nodes) pressed onto
  a belt moving at 0.1 m/s: several pairs couple as mu rises; near mu = 0.79 a contact node lifts
  off in the steady state and the spectrum jumps.

Writes the figure and the two sweeps to ``fesub-out/mode_coupling`` (or the directory given as the
first argument).

    python examples/mode_coupling.py [OUTDIR]
"""

import sys
from pathlib import Path

import numpy as np

from fesub.contact import Body, ContactInterface, MultibodyModel
from fesub.contact.analyses.mode_coupling import belt_two_dof, mu_sweep
from fesub.fe import PlaneStress, rectangle
from fesub.plots import style
from fesub.substructure import Substructure

out = Path(sys.argv[1] if len(sys.argv) > 1 else "fesub-out/mode_coupling")
out.mkdir(parents=True, exist_ok=True)

# %%
# The belt model: the computed critical mu against the closed form.
belt = belt_two_dof()
c = belt.coefficients
closed = ((c["k11"] - c["k22"]) ** 2 + 4 * c["k12"] * c["k21"]) / (4 * c["s"] * c["k21"] * c["k3"])
sweep_belt = mu_sweep(belt.model, np.linspace(0.0, 0.3, 61))
print(f"belt model: critical mu {sweep_belt.critical_mu:.10f}, closed form {closed:.10f} "
      f"(relative difference {abs(sweep_belt.critical_mu / closed - 1):.1e}), "
      f"at {sweep_belt.onsets[0]['f_hz']:.3f} Hz")
sweep_belt.save(out / "belt_sweep")

# %%
# The block on a belt: five nodes sliding, pressed by an interference of 0.1 mm.
mesh = rectangle(0.04, 0.02, 4, 2)
sub = Substructure(mesh, PlaneStress(2e6, 0.3, 1000.0, 0.01), clamped=["top"], name="block")
bottom = mesh.nodes("bottom")
bottom = bottom[np.argsort(mesh.points[bottom, 0])]
belt_body = Body([[1.0]], [[0.0]], [[-1.0, 1e-4], [1.0, 1e-4]], [[0, -1], [0, -1]], name="belt",
                 prescribed={0: -0.1})
block = MultibodyModel([Body.from_substructure(sub), belt_body],
                       [ContactInterface("block", bottom, "belt", [[0, 1]])])
sweep_block = mu_sweep(block, np.linspace(0.0, 1.0, 41), tol=1e-6)
for o in sweep_block.onsets:
    why = " (a contact node opens there: the eigenvalues jump)" if o["contact_change"] else ""
    print(f"block: a pair turns {o['kind']} at mu = {o['mu']:.5f}, {o['f_hz']:.1f} Hz{why}")
sweep_block.save(out / "block_sweep")

plt = style.pyplot()
fig, axes = plt.subplots(2, 2, figsize=(9, 5.5), sharex="col")
for col, (sw, title, fmax) in enumerate(((sweep_belt, "belt model (2 DOF)", None),
                                         (sweep_block, "block on a belt (5 nodes)", 2500.0))):
    lam = sw.lam
    keep = np.isfinite(lam) & (lam.imag > 0)
    if fmax is not None:
        keep &= lam.imag / (2 * np.pi) <= fmax
    mus = np.broadcast_to(sw.mus[:, None], lam.shape)
    axes[0, col].plot(mus[keep], lam.imag[keep] / (2 * np.pi), ".", ms=3)
    axes[1, col].plot(mus[keep], lam.real[keep], ".", ms=3)
    for o in sw.onsets:
        for ax in axes[:, col]:
            ax.axvline(o["mu"], color="0.5", lw=0.8, ls="--" if o["kind"] == "unstable" else ":")
    axes[0, col].set_title(title)
    axes[0, col].set_ylabel("frequency [Hz]")
    axes[1, col].set_ylabel("real part [1/s]")
    axes[1, col].set_xlabel("friction coefficient mu")
axes[1, 0].axvline(closed, color="C3", lw=0.8, label="closed form")
axes[1, 0].legend(fontsize=8)
fig.tight_layout()
style.save(fig, out / "mode_coupling.png")
