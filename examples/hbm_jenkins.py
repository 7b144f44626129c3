"""Harmonic balance: backbone of a Jenkins oscillator
==================================================

Backbone of a 1-DOF oscillator with a Jenkins friction element.

m x'' + c x' + k x + f_J = alpha cos(w t), f_J = Jenkins element (kt, slip force fs).
The backbone (peak frequency and amplitude vs force) is traced by the Lagrange optimality
system; at low force the contact sticks (resonance sqrt((k + kt)/m)), at high force it slides
(resonance sqrt(k/m)).
"""

import sys
from pathlib import Path

import numpy as np

from fesub.hbm import backbone, forced_response, frf_peak, plots
from fesub.models.jenkins import jenkins_1dof

sy = jenkins_1dof(nh=5)                      # m = 1, c = 0.02, k = 1, kt = 1, fs = 0.1
bb = backbone(sy, (0.002, 0.2), (1.2, 1.6), progress=False)
print(f"{len(bb.alpha)} points, singular points at alpha = "
      f"{[round(p['alpha'], 5) for p in bb.singular_points]}")
for a in (0.002, 0.02, 0.2):
    i = int(np.argmin(abs(np.log(bb.alpha / a))))
    print(f"alpha = {bb.alpha[i]:.4g} N: peak at w = {bb.w[i]:.6f} rad/s, Am = {bb.Am[i]:.5g} m")

# cross-check one level against the brute-force maximum of a forced-response curve
frf = forced_response(sy, 0.1, (0.9, 1.6))
w_pk, am_pk, _ = frf_peak(sy, frf)
i = int(np.argmin(abs(np.log(bb.alpha / 0.1))))
print(f"alpha = 0.1 N: FRF peak w = {w_pk:.6f} rad/s (backbone point nearby: {bb.w[i]:.6f})")

out = Path(sys.argv[1] if len(sys.argv) > 1 else "fesub-out/hbm_jenkins")
out.mkdir(parents=True, exist_ok=True)
plots.frf_family([frf], bb, path=out / "backbone.png", case="Jenkins 1-DOF")
