"""FRF-based substructuring: two chains coupled from their receptances
=====================================================================

Two spring-mass chains (three masses each, 1 kg and 10 kN/m, 2 % structural damping) are
modelled separately; their receptances are computed at every DOF (``frf_from_matrices``) and
coupled by LM-FBS (``fesub.fbs.couple``) at one interface DOF: the last mass of chain A is
rigidly joined to the first mass of chain B. The coupled driving-point and transfer receptances
are compared with a direct solution of the assembled five-mass model (the same structural damping
on both sides, so coupling is exact up to round-off).

    python examples/fbs_coupling.py [OUTDIR]
"""

import sys
from pathlib import Path

import numpy as np

from fesub.fbs import couple, frf_from_matrices
from fesub.plots import style

out = Path(sys.argv[1] if len(sys.argv) > 1 else "fesub-out/fbs_coupling")
out.mkdir(parents=True, exist_ok=True)

k, m, eta = 1.0e4, 1.0, 0.02                     # N/m, kg, loss factor (-)
f = np.linspace(0.5, 60.0, 1200)                  # Hz


def chain(n, grounded):
    """Stiffness (N/m) and mass (kg) of ``n`` masses in a row, the first one grounded or free."""
    K = np.zeros((n, n))
    for i in range(n - 1):
        K[i:i + 2, i:i + 2] += k * np.array([[1.0, -1.0], [-1.0, 1.0]])
    if grounded:
        K[0, 0] += k
    return K, m * np.eye(n)


KA, MA = chain(3, grounded=True)                  # nodes 1, 2, 3
KB, MB = chain(3, grounded=False)                 # nodes 10, 11, 12 (10 joins node 3)
YA = frf_from_matrices(KA, MA, f, {0: (1, 1), 1: (2, 1), 2: (3, 1)}, eta=eta)
YB = frf_from_matrices(KB, MB, f, {0: (10, 1), 1: (11, 1), 2: (12, 1)}, eta=eta)
coupled = couple([YA, YB], {(0, 1): [((3, 1), (10, 1))]})

# the assembled model: node 3 and node 10 are one mass of 2 kg
K = np.zeros((5, 5))
M = np.zeros((5, 5))
K[:3, :3] += KA
M[:3, :3] += MA
K[2:, 2:] += KB
M[2:, 2:] += MB
direct = frf_from_matrices(K, M, f, {0: (1, 1), 1: (2, 1), 2: (3, 1), 3: (11, 1), 4: (12, 1)}, eta=eta)

plt = style.pyplot()
fig, ax = plt.subplots(figsize=(7, 4))
for o, label in (((1, 1), "driving point, mass 1"), ((12, 1), "transfer, mass 1 -> last mass")):
    h_fbs = coupled.select(outputs=[o], inputs=[(1, 1)]).H[:, 0, 0]
    h_dir = direct.select(outputs=[o], inputs=[(1, 1)]).H[:, 0, 0]
    err = np.max(np.abs(h_fbs - h_dir)) / np.max(np.abs(h_dir))
    print(f"{label:32s}: max |H_FBS - H_direct| / max |H_direct| = {err:.2e}")
    ax.semilogy(f, np.abs(h_dir), lw=2.5, alpha=0.4, label=f"{label} (assembled model)")
    ax.semilogy(f, np.abs(h_fbs), "--", lw=1, label=f"{label} (LM-FBS)")
ax.set_xlabel("frequency [Hz]")
ax.set_ylabel("|receptance| [m/N]")
ax.set_title("LM-FBS coupling of two chains against the assembled model")
ax.legend(fontsize=8)
style.save(fig, out / "fbs_coupling.png")
