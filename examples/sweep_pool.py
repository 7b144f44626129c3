"""Parameter sweep on a local process pool: Coulomb regimes by time integration
==============================================================================

The study ``coulomb_regime`` integrates a two-mass chain with a Coulomb contact at each point of
a grid of frequency ratio ``r1`` and friction ratio ``beta`` and classifies the steady state
(continuous sliding, stick-slip, stuck); the closed form's regime is returned beside it. The
sweep runs on a local pool of two worker processes and writes one checked file per case into a
result store: run the script again and nothing is recomputed. The same grid runs on a Dask
cluster with ``run_sweep(..., scheduler="tcp://HOST:8786")`` or ``fesub sweep CONFIG.toml``.

    python examples/sweep_pool.py [OUTDIR]
"""

import sys
from pathlib import Path

import numpy as np

from fesub.coulomb import REGIME_NAMES
from fesub.plots import style
from fesub.sweep import load_store, run_sweep

if __name__ == "__main__":          # the pool's worker processes import this file: run it once
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "fesub-out/sweep_pool")
    out.mkdir(parents=True, exist_ok=True)
    grid = {"r1": np.linspace(0.3, 1.8, 6), "beta": np.linspace(0.1, 1.1, 5)}
    report = run_sweep("coulomb_regime", out / "store", grid=grid,
                       fixed={"gamma": [1.0, 1.0], "kappa": [1.0, 1.0], "max_periods": 60},
                       workers=2, progress=False)
    print(report)
    data = load_store(out / "store")
    numeric, closed = data.fields["regime_code"], data.fields["analytic_regime_code"]
    agree = np.mean(numeric == closed)
    print(f"{data.shape} cases; time integration and closed form agree on {100 * agree:.0f} % of them")

    plt = style.pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.5), sharey=True)
    extent = (grid["r1"][0], grid["r1"][-1], grid["beta"][0], grid["beta"][-1])
    for ax, field, name in zip(axes, (numeric, closed), ("time integration", "closed form")):
        im = ax.imshow(field.T, origin="lower", aspect="auto", extent=extent, vmin=0, vmax=2, cmap="viridis")
        ax.set_title(f"regime, {name}")
        ax.set_xlabel("frequency ratio r1 [-]")
    axes[0].set_ylabel("friction ratio beta [-]")
    cb = fig.colorbar(im, ax=axes, ticks=[0, 1, 2])
    cb.ax.set_yticklabels([REGIME_NAMES[i] for i in range(3)])
    style.save(fig, out / "regimes.png")
