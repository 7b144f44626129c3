"""``fesub coulomb``: the paper's figures for a chain given on the command line or in a TOML file.

Example::

    fesub coulomb --gamma 1 1 --kappa 1 1 --contact wall:0 --load 0 --out out/2dof
    fesub coulomb --config chain.toml

TOML keys (all optional except gamma/kappa): ``gamma``, ``kappa`` (lists), ``contact``
(``"wall:j"``, ``"masses:a,b"``, ``"base:j"``; 0-based), ``load``, ``mu``, ``betas``, ``r_min``,
``r_max``, ``nr``, ``numeric`` (numeric points per beta), ``map`` ([n_r1, n_beta] of a numeric
regime map), ``out``. Command-line options override the file.

Writes to ``--out``: ``transmissibility_<k>.png`` for every mass and the contact coordinate,
``phase.png``, ``regime_map.png``, ``time_history.png``, ``steady_state.npz/json`` and
``numeric.json`` (the simulated points), ``regime_map_numeric.npz/json`` if asked for.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from ..errors import ParameterError

_DEFAULTS = {
    "gamma": [1.0, 1.0], "kappa": [1.0, 1.0], "contact": "wall:0", "load": 0, "mu": 1.0,
    "betas": [0.0, 0.2, 0.4, 0.6, 0.8], "r_min": 0.05, "r_max": 2.5, "nr": 500, "numeric": 8,
    "map": None, "out": "fesub-out/coulomb",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", help="TOML file with the chain and plot settings")
    parser.add_argument("--gamma", type=float, nargs="+", help="mass ratios m_i/m_1 (first must be 1)")
    parser.add_argument("--kappa", type=float, nargs="+", help="stiffness ratios k_i/k_1 (first must be 1)")
    parser.add_argument("--contact", help="'wall:j', 'masses:a,b' or 'base:j' (0-based mass indices)")
    parser.add_argument("--load", type=int, help="loaded mass (0-based; a moving base loads mass 0)")
    parser.add_argument("--mu", type=float, help="static/kinetic friction ratio (>= 1)")
    parser.add_argument("--betas", type=float, nargs="+", help="friction ratios F/P of the curve families")
    parser.add_argument("--r-min", dest="r_min", type=float, help="smallest frequency ratio")
    parser.add_argument("--r-max", dest="r_max", type=float, help="largest frequency ratio")
    parser.add_argument("--nr", type=int, help="number of frequency ratios")
    parser.add_argument("--numeric", type=int, help="simulated points per beta (0: none)")
    parser.add_argument("--map", type=int, nargs=2, metavar=("NR", "NB"),
                        help="also compute a numeric regime map of NR x NB points")
    parser.add_argument("--out", help="output directory")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")


def load_config(args) -> dict:
    """Defaults <- TOML file <- command line."""
    cfg = dict(_DEFAULTS)
    if getattr(args, "config", None):
        import tomllib

        path = Path(args.config)
        try:
            with open(path, "rb") as f:
                data = tomllib.load(f)
        except FileNotFoundError:
            raise ParameterError(f"config file {str(path)!r} does not exist") from None
        except tomllib.TOMLDecodeError as exc:
            raise ParameterError(f"config file {str(path)!r} is not valid TOML: {exc}") from None
        unknown = set(data) - set(_DEFAULTS)
        if unknown:
            raise ParameterError(f"config file {str(path)!r}: unknown keys {sorted(unknown)}; "
                                 f"allowed: {sorted(_DEFAULTS)}")
        cfg.update(data)
    for key in _DEFAULTS:
        val = getattr(args, key, None)
        if val is not None:
            cfg[key] = val
    if cfg["nr"] is None or int(cfg["nr"]) < 2:
        raise ParameterError(f"nr (number of frequency ratios) must be >= 2, got {cfg['nr']!r}")
    if not (0 < float(cfg["r_min"]) < float(cfg["r_max"])):
        raise ParameterError(f"need 0 < r_min < r_max, got r_min = {cfg['r_min']!r}, r_max = {cfg['r_max']!r}")
    return cfg


def run(args) -> int:
    from ..coulomb.analytic import CONTINUOUS, REGIME_NAMES, steady_state
    from ..coulomb.model import ChainModel, Contact
    from ..coulomb.plots import plot_phase, plot_regime_map, plot_time_history, plot_transmissibility
    from ..coulomb.simulate import numeric_regime_map, simulate
    from ..coulomb.results import save_result

    cfg = load_config(args)
    progress = not getattr(args, "no_progress", False)
    model = ChainModel(cfg["gamma"], cfg["kappa"])
    contact = Contact.from_spec(cfg["contact"])
    contact.validate(model.n)
    load = contact.load_index(cfg["load"])
    mu = float(cfg["mu"])
    betas = np.asarray(cfg["betas"], dtype=float)
    r1 = np.linspace(float(cfg["r_min"]), float(cfg["r_max"]), int(cfg["nr"]))
    out = Path(cfg["out"])
    out.mkdir(parents=True, exist_ok=True)

    ss = steady_state(model, contact, load, r1, betas, mu=mu)
    ss.save(out / "steady_state")

    # numeric markers: a few points per beta, spread over the range (exact resonances avoided)
    sims = []
    nnum = int(cfg["numeric"] or 0)
    if nnum > 0:
        from tqdm.auto import tqdm

        rs = np.linspace(r1[0], r1[-1], nnum + 2)[1:-1] * (1 + 1.234e-4)
        pts = [(float(b), float(r)) for b in betas for r in rs]
        for b, r in tqdm(pts, disable=not progress, desc="simulating"):
            try:
                sims.append(simulate(model, contact, load, r, b, mu=mu, max_periods=5000))
            except ParameterError:
                continue
    (out / "numeric.json").write_text(json.dumps([
        {"r1": s.r1, "beta": s.beta, "converged": s.converged, "regime": REGIME_NAMES[s.regime],
         "stops_per_period": s.stops_per_period, "periods": s.periods,
         "Z": s.Z if np.isfinite(s.Z) else None,
         "X": [float(v) for v in s.X] if np.isfinite(s.X).all() else None,
         "phi_deg": [float(np.degrees(v)) for v in s.phi] if np.isfinite(s.phi).all() else None}
        for s in sims], indent=2))

    written = []
    for k in list(range(model.n)) + [None]:
        fig = plot_transmissibility(model, contact, load, r1, betas, k=k, mu=mu, numeric=sims)
        name = f"transmissibility_{'contact' if k is None else k + 1}.png"
        fig.savefig(out / name, dpi=120)
        written.append(name)
    import matplotlib.pyplot as plt

    fig, axs = plt.subplots(model.n, 1, figsize=(6.4, 2.2 * model.n), sharex=True, squeeze=False)
    for k in range(model.n):
        plot_phase(model, contact, load, r1, betas, k=k, mu=mu, numeric=sims, ax=axs[k, 0])
    fig.tight_layout()
    fig.savefig(out / "phase.png", dpi=120)
    written.append("phase.png")

    nmap = None
    if cfg["map"]:
        nr_m, nb_m = (int(v) for v in cfg["map"])
        params = {"gamma": model.gamma.tolist(), "kappa": model.kappa.tolist(),
                  "contact": contact.to_dict(), "load": load, "mu": mu}
        nmap = numeric_regime_map(params, np.linspace(r1[0], r1[-1], nr_m) * (1 + 1.234e-4),
                                  np.linspace(0.02, max(1.2, betas.max() * 1.2), nb_m), progress=progress)
        nmap.save(out / "regime_map_numeric")
    bmax = max(1.2, float(betas.max()) * 1.2)
    fig = plot_regime_map(model, contact, load, r1, np.linspace(0.0, bmax, 240), mu=mu, numeric_map=nmap)
    fig.savefig(out / "regime_map.png", dpi=120)
    written.append("regime_map.png")

    # time history at a continuous point (the first beta > 0 with a continuous stretch)
    cont = np.argwhere(ss.regime == CONTINUOUS)
    cont = cont[ss.beta[cont[:, 0]] > 0] if cont.size else cont
    if cont.size:
        ib, ir = cont[len(cont) // 2]
        rr, bb = float(r1[ir]), float(betas[ib])
        try:
            sim = simulate(model, contact, load, rr, bb, mu=mu, max_periods=20000)
        except ParameterError:
            sim = None
        fig = plot_time_history(model, contact, load, rr, bb, sim=sim if sim and sim.converged else None)
        fig.savefig(out / "time_history.png", dpi=120)
        written.append("time_history.png")
    plt.close("all")
    save_result(out / "summary", {"r1": r1, "betas": betas},
                {"model": model.to_dict(), "contact": contact.to_dict(), "load": load, "mu": mu,
                 "figures": written, "n_numeric": len(sims)})
    print(f"fesub coulomb: wrote {len(written)} figures and the numbers to {out}")
    return 0
