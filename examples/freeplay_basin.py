"""Free-play oscillator: basins of attraction
==========================================

Basins of attraction of the two-mass free-play oscillator at W = 1.15 (a few seconds).

Four stable period-1 orbits coexist (two mirror pairs); the exact piecewise law and its sigmoid
smoothing (delta = 1500) give nearly the same striped basins. Parameters: the provisional set
P_REF of the spec (the paper's Table 2 is not available).
"""

import os
import sys

from fesub.nonsmooth import P_REF, basins
from fesub.nonsmooth import plots

out = sys.argv[1] if len(sys.argv) > 1 else "freeplay_example"
os.makedirs(out, exist_ok=True)
kw = dict(x1_range=(-0.5, 0.5), x2_range=(-0.5, 0.5), shape=(20, 20), n_transient=150,
          n_record=4, steps_per_period=200, executor="serial")
exact = basins(P_REF, 1.15, law="exact", **kw)
smooth = basins(P_REF, 1.15, law="smooth", **kw)
for res in (exact, smooth):
    print(res.law, [(a["period"], round(a["x1_max"], 4), round(a["x1_min"], 4),
                     round(100 * a["fraction"], 1)) for a in res.attractors])
print(f"cells with the same attractor: {100 * exact.agreement(smooth):.1f} %")
plots.basin_compare(exact, smooth, path=os.path.join(out, "basin_W1.15.png"))
exact.save(os.path.join(out, "basin_W1.15_exact"))
