"""Harmonic balance: 3D friction contacts
=======================================

Circular Coulomb slip in the tangent plane, variable normal load.

Two parts.

1. One :class:`~fesub.hbm.Friction3D` element driven on a circular tangential orbit of radius
   ``r > mu N / kt``: steady full slip, the friction force of constant magnitude ``mu N`` turning
   with the motion, and the energy per cycle ``2 pi mu N sqrt(r^2 - (mu N / kt)^2)``.
2. A three-DOF structure (two in-plane DOFs and a normal one) held by two 3D contacts, forced at
   growing amplitudes: the resonance softens and flattens as the contacts slip.
"""

import math
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from fesub.hbm import (ContactElement, Friction3D, HBSystem, force_history_3d,  # noqa: E402
                       forced_response)

out = Path(sys.argv[1] if len(sys.argv) > 1 else "fesub-out/hbm_friction3d")
out.mkdir(parents=True, exist_ok=True)

# ---- 1. circular orbit ---------------------------------------------------------------------
kt, kn, mu, n0, r = 1e5, 1e6, 0.25, 80.0, 5e-4       # N/m, N/m, -, N, m
nh = 3
m = 2 * nh
el = Friction3D(kt, kn, mu, n0)
p = np.zeros(3 * m)
p[0], p[m + 1] = r, r                                  # u1 = r cos, u2 = r sin
f = force_history_3d(el, p, nh, nt=1024)
res = el.evaluate(p, nh, nt=1024)
W = math.pi * sum(k * (res.F[c * m + 2 * k - 2] * p[c * m + 2 * k - 1]
                       - res.F[c * m + 2 * k - 1] * p[c * m + 2 * k - 2])
                  for c in (0, 1) for k in range(1, nh + 1))
fs = mu * n0
W_exact = 2 * math.pi * fs * math.sqrt(r * r - (fs / kt) ** 2)
print(f"|f_t| from {np.hypot(f[:, 0], f[:, 1]).min():.6f} to "
      f"{np.hypot(f[:, 0], f[:, 1]).max():.6f} N (mu N = {fs} N)")
print(f"energy per cycle {W:.6e} J, closed form {W_exact:.6e} J "
      f"(relative {W / W_exact - 1:+.1e}, first order in 1/nt)")

# ---- 2. a small structure on two 3D contacts -----------------------------------------------
M = np.eye(3)                                          # kg
K = np.diag([4e4, 5e4, 6e4])                           # N/m
C = 2e-4 * K                                           # N s/m
Ga = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])       # t1, t2, n
th = 0.5
Gb = np.array([[math.cos(th), math.sin(th), 0.0], [-math.sin(th), math.cos(th), 0.0],
               [0.0, 0.0, -1.0]])
contacts = [ContactElement(Friction3D(2e4, 5e4, 0.3, 20.0), Ga, "a"),
            ContactElement(Friction3D(2e4, 5e4, 0.2, 30.0), Gb, "b")]
sy = HBSystem(M, C, K, 3, contacts, fex=np.array([1.0, 0.5, 0.2]), dof=0)
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
ax1.plot(f[:, 0], f[:, 1], lw=1.5, label="friction force (N)")
ax1.add_patch(plt.Circle((0, 0), fs, fill=False, ls="--", color="k", label="mu N"))
ax1.set_aspect("equal")
ax1.set_xlabel("f1 (N)")
ax1.set_ylabel("f2 (N)")
ax1.set_title("circular orbit, full slip")
ax1.legend(loc="lower right", fontsize=8)
for alpha in (0.5, 5.0, 20.0):
    frf = forced_response(sy, alpha, (170.0, 330.0), tol=1e-8)
    ax2.plot(frf.w, frf.Am / alpha, label=f"alpha = {alpha} N")
    i = int(np.argmax(frf.Am))
    print(f"alpha = {alpha:5.1f} N: peak at {frf.w[i]:.2f} rad/s, Am/alpha = "
          f"{frf.Am[i] / alpha:.3e} m/N")
ax2.set_xlabel("w (rad/s)")
ax2.set_ylabel("Am / alpha (m/N)")
ax2.set_title("forced response, two 3D contacts")
ax2.legend(fontsize=8)
fig.tight_layout()
fig.savefig(out / "friction3d.png", dpi=120)
