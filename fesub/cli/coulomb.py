"""``fesub coulomb``: the paper's figures for a chain given on the command line or in a TOML file.

Example::

    fesub coulomb --gamma 1 1 --kappa 1 1 --contact wall:0 --load 0 --out out/2dof
    fesub coulomb --config chain.toml

The study is non-dimensional: mass and stiffness ratios ``gamma = m_i/m_1``, ``kappa = k_i/k_1``,
frequency ratio ``r1 = omega sqrt(m_1/k_1)``, friction ratio ``beta = F/P``, static/kinetic ratio
``mu``; amplitudes are per unit static deflection ``P/k_1`` (per unit base amplitude ``Y`` for a
moving base); all are dimensionless ("[-]").

TOML keys (all optional): ``gamma``, ``kappa`` (lists), ``contact`` (``"wall:j"``,
``"masses:a,b"``, ``"base:j"``; 0-based), ``load``, ``mu``, ``betas``, ``r_min``, ``r_max``,
``nr``, ``numeric`` (numeric points per beta), ``map`` ([n_r1, n_beta] of a numeric regime map),
``out`` (used when ``--out`` is not given). Command-line options override the file.

Parts written to ``--out`` as they finish (reused on a rerun): ``steady_state.nc`` (closed form
on the r1 x beta grid), ``sim_beta<B>_r<R>.nc`` (each simulated point), ``regime_map.nc``
(closed-form regimes), ``regime_map_numeric.nc`` (with ``--map``), ``time_history_sim.nc``;
figures ``transmissibility_<k>.png`` for every mass and the contact coordinate, ``phase.png``,
``regime_map.png``, ``time_history.png``; ``summary.json`` and ``report.html``.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from ..errors import ParameterError
from .common import add_common, integer, number

STUDY = "coulomb"
_OUT_DEFAULT = f"fesub-out/{STUDY}"
_DEFAULTS = {
    "gamma": [1.0, 1.0], "kappa": [1.0, 1.0], "contact": "wall:0", "load": 0, "mu": 1.0,
    "betas": [0.0, 0.2, 0.4, 0.6, 0.8], "r_min": 0.05, "r_max": 2.5, "nr": 500, "numeric": 8,
    "map": None, "out": None,
}
#: relative shift of the simulated r1 off the plotted grid (keeps exact resonances away)
_R_SHIFT = 1.234e-4


def _dflt(key) -> str:
    v = _DEFAULTS[key]
    if v is None:
        return "(default: none)"
    return f"(default: {' '.join(f'{x:g}' for x in v) if isinstance(v, list) else v})"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("chain (dimensionless ratios; a TOML --config may give them)")
    g.add_argument("--config", metavar="FILE",
                   help="TOML file with the keys below (command-line options override it)")
    g.add_argument("--gamma", type=number(gt=0), nargs="+", metavar="G",
                   help=f"mass ratios m_i/m_1 [-], the first 1 {_dflt('gamma')}")
    g.add_argument("--kappa", type=number(gt=0), nargs="+", metavar="K",
                   help=f"stiffness ratios k_i/k_1 [-], the first 1 {_dflt('kappa')}")
    g.add_argument("--contact", metavar="SPEC",
                   help="'wall:j', 'masses:a,b' or 'base:j' (0-based mass indices) "
                        f"{_dflt('contact')}")
    g.add_argument("--load", type=integer(ge=0), metavar="J",
                   help=f"loaded mass, 0-based (a moving base loads mass 0) {_dflt('load')}")
    g.add_argument("--mu", type=number(ge=1), help=f"static/kinetic friction ratio [-] {_dflt('mu')}")
    s = parser.add_argument_group("what to compute")
    s.add_argument("--betas", type=number(ge=0), nargs="+", metavar="B",
                   help=f"friction ratios F/P [-] of the curve families {_dflt('betas')}")
    s.add_argument("--r-min", dest="r_min", type=number(gt=0),
                   help=f"smallest frequency ratio omega sqrt(m1/k1) [-] {_dflt('r_min')}")
    s.add_argument("--r-max", dest="r_max", type=number(gt=0),
                   help=f"largest frequency ratio omega sqrt(m1/k1) [-] {_dflt('r_max')}")
    s.add_argument("--nr", type=integer(ge=2), help=f"number of frequency ratios {_dflt('nr')}")
    s.add_argument("--numeric", type=integer(ge=0),
                   help=f"points per beta checked by time integration (0: none) {_dflt('numeric')}")
    s.add_argument("--map", type=integer(ge=1), nargs=2, metavar=("NR", "NB"),
                   help="also compute a numeric regime map of NR frequency ratios x NB friction "
                        f"ratios by time integration, on -j worker processes {_dflt('map')}")
    add_common(parser, STUDY, jobs=True)


# ------------------------------------------------------------------------------ configuration
def _number(key, v, *, gt=None, ge=None) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or \
            (gt is not None and not v > gt) or (ge is not None and not v >= ge):
        want = f"> {gt:g}" if gt is not None else f">= {ge:g}" if ge is not None else "finite"
        raise ParameterError(f"{key} must be a finite number {want}, got {v!r}")
    return float(v)


def _integer(key, v, *, ge) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < ge:
        raise ParameterError(f"{key} must be an integer >= {ge}, got {v!r}")
    return int(v)


def _numbers(key, v, **bound) -> list:
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        v = [v]
    if not isinstance(v, list) or not v:
        raise ParameterError(f"{key} must be a non-empty list of numbers, got {v!r}")
    return [_number(f"{key}[{i}]", x, **bound) for i, x in enumerate(v)]


def _check_map(v):
    if v is None:
        return None
    if not isinstance(v, list) or len(v) != 2:
        raise ParameterError(f"map must be [n_r1, n_beta] (two integers >= 1), got {v!r}")
    return [_integer("map[0] (n_r1)", v[0], ge=1), _integer("map[1] (n_beta)", v[1], ge=1)]


def _check_contact(v):
    if not isinstance(v, (str, dict)):
        raise ParameterError(f"contact must be 'wall:j', 'masses:a,b' or 'base:j', got {v!r}")
    return v


def _check_out(v):
    if v is not None and not isinstance(v, str):
        raise ParameterError(f"out must be a folder name (a string), got {v!r}")
    return v


_CHECKS = {
    "gamma": lambda v: _numbers("gamma (mass ratios m_i/m_1)", v, gt=0),
    "kappa": lambda v: _numbers("kappa (stiffness ratios k_i/k_1)", v, gt=0),
    "contact": _check_contact,
    "load": lambda v: _integer("load (loaded mass, 0-based)", v, ge=0),
    "mu": lambda v: _number("mu (static/kinetic friction ratio)", v, ge=1),
    "betas": lambda v: _numbers("betas (friction ratios F/P)", v, ge=0),
    "r_min": lambda v: _number("r_min (smallest frequency ratio)", v, gt=0),
    "r_max": lambda v: _number("r_max (largest frequency ratio)", v, gt=0),
    "nr": lambda v: _integer("nr (number of frequency ratios)", v, ge=2),
    "numeric": lambda v: _integer("numeric (simulated points per beta)", v, ge=0),
    "map": _check_map,
    "out": _check_out,
}


def load_config(args) -> dict:
    """Defaults <- TOML file <- command line, every value checked (ParameterError, one line)."""
    cfg = dict(_DEFAULTS)
    if getattr(args, "config", None):
        import tomllib

        path = Path(args.config)
        try:
            with open(path, "rb") as f:
                data = tomllib.load(f)
        except (FileNotFoundError, IsADirectoryError):
            raise ParameterError(f"config file {str(path)!r} does not exist") from None
        except tomllib.TOMLDecodeError as exc:
            raise ParameterError(f"config file {str(path)!r} is not valid TOML: {exc}") from None
        unknown = set(data) - set(_DEFAULTS)
        if unknown:
            raise ParameterError(f"config file {str(path)!r}: unknown keys {sorted(unknown)}; "
                                 f"allowed: {sorted(_DEFAULTS)}")
        for key, val in data.items():
            try:
                cfg[key] = _CHECKS[key](val)
            except ParameterError as exc:
                raise ParameterError(f"config file {str(path)!r}: {exc}") from None
    for key in _DEFAULTS:
        val = getattr(args, key, None)
        if val is not None and key != "out":
            cfg[key] = _CHECKS[key](val)
    if not cfg["r_min"] < cfg["r_max"]:
        raise ParameterError(f"need r_min < r_max, got r_min = {cfg['r_min']!r}, "
                             f"r_max = {cfg['r_max']!r}")
    return cfg


def _chain(cfg):
    """The chain, its contact and the loaded mass, checked (ParameterError)."""
    from ..coulomb.model import ChainModel, CoulombContact, check_index
    from ..errors import ModelError

    try:
        model = ChainModel(cfg["gamma"], cfg["kappa"])
    except ModelError as exc:
        raise ParameterError(str(exc)) from None
    contact = CoulombContact.from_spec(cfg["contact"])
    contact.validate(model.n)
    load = check_index("load (loaded mass index)", contact.load_index(cfg["load"]), model.n)
    return model, contact, load


# ------------------------------------------------------------------------------------ the run
def run(args) -> int:
    import numpy as np

    from ..coulomb.analytic import CONTINUOUS, regime_map, steady_state
    from ..coulomb.features import beta_inf, beta_stuck_inf, resonance_thresholds
    from ..coulomb.integrate import simulate_chain
    from ..coulomb.numeric_map import numeric_regime_map
    from ..errors import ConvergenceError
    from .common import StudyDir

    cfg = load_config(args)
    model, contact, load = _chain(cfg)
    out = cfg["out"] if (args.out == _OUT_DEFAULT and cfg["out"]) else args.out
    args.out = out
    mu, nnum = cfg["mu"], cfg["numeric"]
    betas = np.asarray(cfg["betas"], dtype=float)
    r1 = np.linspace(cfg["r_min"], cfg["r_max"], cfg["nr"])
    params = {k: v for k, v in cfg.items() if k != "out"}
    params["contact"] = contact.to_dict()
    d = StudyDir(out, STUDY, params, overwrite=args.overwrite, figures=not args.no_figures,
                 quiet=args.quiet)

    ss = d.compute("steady_state", lambda: steady_state(model, contact, load, r1, betas, mu=mu))

    # numeric markers: a few points per beta, spread over the range (exact resonances avoided)
    sims, skipped = [], []
    rs = np.linspace(r1[0], r1[-1], nnum + 2)[1:-1] * (1 + _R_SHIFT) if nnum > 0 else []
    pts = [(float(b), float(r)) for b in betas for r in rs]
    if pts:
        from tqdm.auto import tqdm

        for b, r in tqdm(pts, disable=args.quiet, desc="simulating"):
            try:
                sims.append(d.compute(f"sim_beta{b:g}_r{r:.6g}", lambda: simulate_chain(
                    model, contact, load, r, b, mu=mu, max_periods=5000)))
            except (ParameterError, ConvergenceError) as exc:
                skipped.append(f"r1 = {r:.6g}, beta = {b:g}: {exc}")

    bmax = max(1.2, float(betas.max()) * 1.2)
    bgrid = np.linspace(0.0, bmax, 240)
    rmap = d.compute("regime_map", lambda: regime_map(model, contact, load, r1, bgrid, mu=mu))
    nmap = None
    if cfg["map"]:
        nr_m, nb_m = cfg["map"]
        chain = {"gamma": model.gamma.tolist(), "kappa": model.kappa.tolist(),
                 "contact": contact.to_dict(), "load": load, "mu": mu}
        nmap = d.compute("regime_map_numeric", lambda: numeric_regime_map(
            chain, np.linspace(r1[0], r1[-1], nr_m) * (1 + _R_SHIFT),
            np.linspace(0.02, bmax, nb_m), progress=not args.quiet, jobs=args.jobs))

    # time history at a continuous point (the first beta > 0 with a continuous stretch)
    th = None
    cont = np.argwhere(ss.regime == CONTINUOUS)
    cont = cont[ss.beta[cont[:, 0]] > 0] if cont.size else cont
    if cont.size:
        ib, ir = cont[len(cont) // 2]
        th_r, th_b = float(r1[ir]), float(betas[ib])
        try:
            th = d.compute("time_history_sim", lambda: simulate_chain(model, contact, load, th_r, th_b,
                                                                mu=mu, max_periods=20000))
        except (ParameterError, ConvergenceError) as exc:
            skipped.append(f"time history r1 = {th_r:.6g}, beta = {th_b:g}: {exc}")
        th = (th_r, th_b, th)

    if d.figures_on:
        _figures(d, model, contact, load, mu, r1, betas, bgrid, ss, rmap, nmap, sims, th)

    summary = _summary(model, contact, load, cfg, ss, rmap, nmap, sims, th, skipped,
                       resonance_thresholds(model, contact, load),
                       beta_inf(model, contact, load, mu), beta_stuck_inf(model, contact, load, mu))
    d.finish(summary)
    d.say(f"fesub coulomb: wrote {len(d.figures)} figures and the numbers to {out}")
    return 0


def _figures(d, model, contact, load, mu, r1, betas, bgrid, ss, rmap, nmap, sims, th):
    from ..coulomb.plots import (case_label, plot_phase_panels, plot_regime_map, plot_time_history,
                                 plot_transmissibility)
    from ..plots import style

    case = case_label(model, contact, load, mu)
    for k in list(range(model.n)) + [None]:
        name = f"transmissibility_{'contact' if k is None else k + 1}.png"
        what = "the contact coordinate" if k is None else f"mass {k + 1}"
        fig = plot_transmissibility(model, contact, load, r1, betas, k=k, mu=mu, numeric=sims, ss=ss)
        style.save(fig, d.figure(name, f"Amplitude of {what} against the frequency ratio for "
                                       f"beta = {', '.join(f'{b:g}' for b in betas)} ({case}); "
                                       "continuous regime solid, boundary dashed, stuck dotted, "
                                       "time integration as markers."))
    fig = plot_phase_panels(model, contact, load, r1, betas, mu=mu, numeric=sims, ss=ss)
    style.save(fig, d.figure("phase.png", f"Phase lag of every mass in the continuous regime "
                                          f"({case}); markers from time integration."))
    fig = plot_regime_map(model, contact, load, r1, bgrid, mu=mu, numeric_map=nmap, rmap=rmap)
    style.save(fig, d.figure("regime_map.png", f"Regimes in the (r1, beta) plane ({case}): exact "
                                               "boundary, Eq. 68 approximation, stuck boundary"
                                               + ("; numeric map as markers." if nmap else ".")))
    if th is not None:
        th_r, th_b, sim = th
        fig = plot_time_history(model, contact, load, th_r, th_b,
                                sim=sim if sim is not None and sim.converged else None, mu=mu)
        style.save(fig, d.figure("time_history.png", f"One period at r1 = {th_r:g}, "
                                                     f"beta = {th_b:g} ({case}): closed form "
                                                     "(lines) and time integration (markers)."))


def _summary(model, contact, load, cfg, ss, rmap, nmap, sims, th, skipped, thresholds, b_inf,
             b_stuck_inf) -> dict:
    """summary.json: the parameters, and how closed form and time integration compare."""
    import numpy as np

    from ..coulomb.analytic import CONTINUOUS, REGIME_NAMES, steady_state
    from ..io import summary_record

    one = "1"
    records, diffs, agree = [], [], []
    for s in sims:
        cf = steady_state(model, contact, load, s.r1, s.beta, mu=s.mu)
        code = int(cf.regime[0, 0])
        rec = {"r1": s.r1, "beta": s.beta, "converged": bool(s.converged), "regime": s.regime_name,
               "closed_form_regime": REGIME_NAMES[code], "periods": int(s.periods),
               "stops_per_period": int(s.stops_per_period), "stick_fraction": s.stick_fraction,
               "X": np.asarray(s.X).tolist(), "closed_form_X": cf.X[0, 0].tolist()}
        records.append(rec)
        if s.converged:
            agree.append(s.regime == code)
            if code == CONTINUOUS and s.regime == CONTINUOUS:
                diffs.append(float(np.max(np.abs(s.X - cf.X[0, 0]) / np.abs(cf.X[0, 0]))))
    frac = ss.regime_fractions()
    results = {
        "natural_frequency_ratios": (model.natural_r1, one),
        "resonance_thresholds_beta": (thresholds, one),
        "beta_lim_high_frequency": (b_inf, one),
        "beta_stuck_high_frequency": (b_stuck_inf, one),
        "continuous_fraction": (frac[:, CONTINUOUS], one),
        "peak_continuous_X": (ss.peak_continuous(), one),
        "simulations": (len(sims), None),
        "simulations_converged": (sum(bool(s.converged) for s in sims), None),
        "regime_agreement_simulated_vs_closed_form": (
            float(np.mean(agree)) if agree else None, one),
        "max_relative_difference_X_simulated_vs_closed_form": (max(diffs) if diffs else None, one),
    }
    if th is not None and th[2] is not None:
        sim = th[2]
        results.update({"time_history_r1": (sim.r1, one), "time_history_beta": (sim.beta, one),
                        "time_history_regime": (sim.regime_name, None),
                        "time_history_X": (np.asarray(sim.X), one),
                        "time_history_Z": (sim.Z, one),
                        "time_history_stick_fraction": (sim.stick_fraction, one)})
    if nmap is not None:
        done = nmap.regime >= 0
        results["numeric_map_points_computed"] = (int(done.sum()), None)
    notes = ["the study is non-dimensional: amplitudes X are per unit static deflection P/k_1 "
             "(per unit base amplitude Y for a moving base), frequencies are r1 = omega "
             "sqrt(m_1/k_1), friction ratios beta = F/P"]
    notes += [f"not simulated: {s}" for s in skipped]
    return summary_record(
        STUDY,
        {"gamma": (model.gamma, one), "kappa": (model.kappa, one),
         "contact": (contact.spec(), None), "load": (load, None), "mu": (cfg["mu"], one),
         "betas": (ss.beta, one), "r1_min": (cfg["r_min"], one), "r1_max": (cfg["r_max"], one),
         "n_r1": (cfg["nr"], None), "numeric_points_per_beta": (cfg["numeric"], None),
         "numeric_map": (cfg["map"], None)},
        results,
        details={"regime_fractions": {name: frac[:, c].tolist() for c, name in enumerate(REGIME_NAMES)},
                 "regime_map_area_fractions": {name: float((rmap.regime == c).mean())
                                               for c, name in enumerate(REGIME_NAMES)},
                 "simulations": records},
        notes=notes)
