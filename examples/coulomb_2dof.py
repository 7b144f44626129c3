"""Coulomb steady state of a two-mass chain
========================================

Two-mass chain with a Coulomb contact on mass 1 and the load on mass 1 (paper Figs 4-6).

Closed-form continuous steady state, its regime boundaries, and a check against stick-slip time
integration from rest at a few frequencies. Runs in a few seconds; writes figures and numbers to
``fesub-out/coulomb_2dof`` (or the directory given as the first argument).
"""

import sys
from pathlib import Path

import numpy as np

from fesub.coulomb import REGIME_NAMES, ChainModel, CoulombContact, simulate_chain, steady_state
from fesub.coulomb.plots import plot_regime_map, plot_transmissibility

out = Path(sys.argv[1] if len(sys.argv) > 1 else "fesub-out/coulomb_2dof")
out.mkdir(parents=True, exist_ok=True)

chain = ChainModel(gamma=[1.0, 1.0], kappa=[1.0, 1.0])
contact = CoulombContact.wall(0)   # mass 1 (index 0) rubs on a fixed wall
load = 0                           # harmonic load on mass 1
r1 = np.linspace(0.05, 2.5, 400)
betas = [0.0, 0.2, 0.4, 0.6, 0.8]

ss = steady_state(chain, contact, load, r1, betas)
ss.save(out / "steady_state")

print(" r1    beta  regime        X1 closed   X1 simulated  X2 closed   X2 simulated  periods")
sims = []
for r, b in [(0.45, 0.3), (0.8, 0.3), (1.3, 0.3), (0.45, 0.7)]:
    sim = simulate_chain(chain, contact, load, r, b)
    sims.append(sim)
    cf = steady_state(chain, contact, load, r, b).masked()   # NaN unless continuous
    print(f"{r:5.2f} {b:5.2f}  {REGIME_NAMES[cf.regime[0, 0]]:12s}  {cf.X[0, 0, 0]:10.6f}  "
          f"{sim.X[0]:12.6f}  {cf.X[0, 0, 1]:10.6f}  {sim.X[1]:12.6f}  {sim.periods:6d}")

plot_transmissibility(chain, contact, load, r1, betas, k=1, numeric=sims).savefig(out / "X2.png", dpi=110)
plot_regime_map(chain, contact, load, r1, np.linspace(0, 1.2, 200)).savefig(out / "regimes.png", dpi=110)
print(f"figures and numbers in {out}")
