"""Compiled kernels and their NumPy twins: same numbers, different speed
=======================================================================

Every hot loop of fesub is a compiled (Cython) kernel with a NumPy twin of the same functions.
``FESUB_BACKEND=python`` forces the twins; ``fesub.show_config()`` says which backend runs and
why. This script runs one stick-slip integration of a two-mass Coulomb chain in two child
interpreters, with the default backend and with the twins, and compares the steady-state
amplitudes and the wall times.

    python examples/backends.py [OUTDIR]
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import fesub
from fesub.plots import style

out = Path(sys.argv[1] if len(sys.argv) > 1 else "fesub-out/backends")
out.mkdir(parents=True, exist_ok=True)
info = fesub.show_config()

CHILD = """
import json, time
import fesub
from fesub.coulomb import ChainModel, CoulombContact, simulate_chain
chain, contact = ChainModel(gamma=[1.0, 1.0], kappa=[1.0, 1.0]), CoulombContact.wall(0)
simulate_chain(chain, contact, 0, 0.8, 0.3)                    # warm-up
t0 = time.perf_counter()
sims = [simulate_chain(chain, contact, 0, r, 0.3) for r in (0.45, 1.3)]
print(json.dumps({"backend": fesub.backend_name(), "seconds": time.perf_counter() - t0,
                  "X": [list(map(float, s.X)) for s in sims]}))
"""

runs = {}
for label, env in (("default", {}), ("NumPy twins", {"FESUB_BACKEND": "python"})):
    proc = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, check=True,
                          env=dict(os.environ, **env))
    runs[label] = json.loads(proc.stdout.strip().splitlines()[-1])
    print(f"{label:12s}: backend {runs[label]['backend']:9s} {runs[label]['seconds']:.3f} s")

X0, X1 = runs["default"]["X"], runs["NumPy twins"]["X"]
diff = max(abs(a - b) / abs(b) for ra, rb in zip(X0, X1) for a, b in zip(ra, rb))
print(f"largest relative difference of the amplitudes between the backends: {diff:.1e}")

plt = style.pyplot()
fig, ax = plt.subplots(figsize=(5, 3))
ax.bar([f"{k}\n({v['backend']})" for k, v in runs.items()], [v["seconds"] for v in runs.values()],
       color=["tab:blue", "tab:orange"])
ax.set_ylabel("wall time of 2 runs [s]")
ax.set_title("Coulomb chain integration, compiled vs twin")
style.save(fig, out / "backends.png")
