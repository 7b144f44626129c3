"""Stable and unstable branches of a forced response with a 3D friction contact
===============================================================================

A 1 kg mass on three springs (3e4, 4e4, 1e4 N/m) is pressed onto the ground by a preloaded 3D
friction contact (5 N, kn = 3e4 N/m, kt = 2e4 N/m, mu = 0.3) and forced in all three
directions (2 N). Near its normal mode the contact opens over part of the cycle: the response
softens into an S-curve with two folds, and Hill's method (``forced_response(...,
stability=True)``) marks its middle branch unstable. The harmonic balance keeps the mean of
the contact forces (``constant=True``): the normal load moves.

The time integration (:func:`~fesub.hbm.newmark`, the contact's own time-discrete law) checks
it: started on the unstable branch with a small perturbation, it leaves the harmonic-balance
orbit by Hill's leading multiplier per period.
"""

import sys
import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from fesub.hbm import (ContactElement, Friction3D, HBSystem, forced_response,  # noqa: E402
                       initial_from_hb, newmark)
from fesub.hbm.plots import stability  # noqa: E402

out = Path(sys.argv[1] if len(sys.argv) > 1 else "fesub-out/hbm_fold_3d")
out.mkdir(parents=True, exist_ok=True)

nt = 256                                                          # AFT samples = steps
K = np.diag([3e4, 4e4, 1e4])                                      # N/m
G = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, -1.0]])  # t1, t2, normal rows
contact = Friction3D(2e4, 3e4, 0.3, 5.0, nt=nt)                   # N/m, N/m, -, N
sy = HBSystem(np.eye(3), 1e-3 * K, K, 5, [ContactElement(contact, G, "contact")],
              fex=np.array([0.3, 0.2, 1.0]), dof=2, constant=True)

with warnings.catch_warnings():
    # Hill's method cannot carry the memory of a stuck friction contact exactly (see the
    # user guide): exact at the folds, checked against time integration on both branches
    warnings.simplefilter("ignore", RuntimeWarning)
    frf = forced_response(sy, 2.0, (140.0, 185.0), stability=True, ds_max=0.2)
frf.save(out / "forced_response")
st = frf.stability
for b in st.bifurcations:
    print(f"{b['kind']} ({b['change']} of stability) at {b['w']:.2f} rad/s, "
          f"Am = {b['Am']:.3e} m")

# the most unstable point, perturbed by 1e-6 of its amplitude and integrated for 8 periods
rho = np.abs(st.multipliers).max(axis=1)
i = int(np.argmax(rho))
w = frf.w[i]
q0, v0, ft = initial_from_hb(sy, frf.Q[i], w, nt=nt)
kw = dict(periods=8, steps_per_period=nt, v0=v0, contact_init=ft, record_periods=8)
a = newmark(sy, 2.0, w, q0=q0, **kw)
b = newmark(sy, 2.0, w, q0=q0 + 1e-6 * np.abs(q0).max() * np.array([0.3, -0.5, 1.0]), **kw)
dev = np.abs(b.q - a.q).reshape(8, nt, 3).max(axis=(1, 2))
rate = (dev[-1] / dev[2]) ** (1 / 5)
print(f"at {w:.2f} rad/s Hill's leading multiplier is {rho[i]:.4f}; the perturbation grows by "
      f"{rate:.4f} per period in the time integration")

stability(st, hz=False, path=out / "stability.png", title="Preloaded 3D contact, 2 N")
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.semilogy(np.arange(1, 9), dev, "o-", label="time integration")
ax.semilogy(np.arange(1, 9), dev[2] * rho[i] ** (np.arange(1, 9) - 3.0), "--",
            label=f"Hill: |rho| = {rho[i]:.3f} per period")
ax.set_xlabel("period")
ax.set_ylabel("deviation from the orbit (m)")
ax.set_title(f"perturbation on the unstable branch, {w:.1f} rad/s")
ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig(out / "departure.png", dpi=120)
