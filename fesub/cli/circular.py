"""``fesub circular``: friction over a circular contact, disc and ball on a plane.

Example::

    fesub circular --law uniform --N 3 --forces 0.03 0.7 --quick --out fesub-out/circular

The disc and the ball have mass m = 1 kg under gravity g = 1 m/s^2 with mu = 1, contact radius
R = 1 m and load P = 1 N, so forces in N equal F/(mu m g).

Parts written to ``--out`` as they finish (reused on a rerun): ``profiles_<law>.nc`` (force and
torque profiles of every model against the exact one, maximum errors), ``error_map_<law>.nc``
(model errors over slip directions), ``disc_bifurcation_values.nc`` (tangency, pitchfork, fold
forces and force-free stop per model), ``disc_circle_curves.nc``,
``disc_limit_direction_diagram_exact.nc``, ``disc_limit_direction_diagram_N2.nc``,
``disc_limit_directions_F<f>.nc`` (each force level), ``disc_trajectory_<i>.nc`` (four stopping
runs), ``ball_bifurcation_values.nc``, ``ball_limit_direction_diagram_exact.nc``; figures
``profiles_<law>.png``, ``error_map_<law>.png``, ``disc_k_curves.png``, ``disc_bifurcation.png``,
``disc_bifurcation_N2.png``, ``disc_sphere_F<f>.png``, ``disc_trajectories.png``,
``ball_bifurcation.png``; ``summary.json`` and ``report.html``.
"""

from __future__ import annotations

import argparse

from .common import add_common, integer, number

STUDY = "circular"
#: initial (u_x, u_y, rho omega_z) of the disc runs (m/s)
TRAJECTORY_STARTS = ((1.0, 0.0, 0.2), (0.3, 0.6, -0.5), (-0.4, 0.1, 0.9), (0.8, -0.3, 0.05))
#: the system's constants: mass (kg), gravity (m/s^2), friction coefficient, contact radius (m),
#: normal load (N) -- the defaults of the models and of ReducedContactSystem
CONSTANTS = {"m": (1.0, "kg"), "g": (1.0, "m/s^2"), "mu": (1.0, "1"), "R": (1.0, "m"),
             "P": (1.0, "N")}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("friction models")
    g.add_argument("--law", choices=["uniform", "hertz", "both"], default="both",
                   help="pressure law(s) of the force/torque profiles and error maps")
    g.add_argument("--rho", choices=["kappa", "R"], default="kappa",
                   help="length scale of the direction vector of the profiles: the torque radius "
                        "kappa or the contact radius R [m]")
    g.add_argument("--N", type=integer(ge=1, le=12), default=4,
                   help="highest order of the harmonic models, 1 to 12 [-]")
    b = parser.add_argument_group("disc and ball")
    b.add_argument("--forces", type=number(ge=0, unit="[-]"), nargs="+", metavar="F",
                   default=[0.03, 0.2, 0.7, 1.2],
                   help="horizontal forces F/(mu m g) [-] of the disc's limit directions and "
                        "sphere portraits")
    b.add_argument("--traj-force", type=number(unit="[-]"), default=0.2, metavar="F",
                   help="horizontal force F/(mu m g) [-] of the disc's stopping runs")
    b.add_argument("--t-end", type=number(gt=0, unit="s"), default=100.0, metavar="S",
                   help="longest horizon of a stopping run; shorter when twice the bound of "
                        "its stop time from the slip energy is shorter [s]")
    b.add_argument("--lam", type=number(gt=0, unit="[-]"), default=5.0,
                   help="ball radius / Hertz contact radius [-]")
    parser.add_argument("--quick", action="store_true",
                        help="coarser grids (eps, directions, forces) for a fast look")
    add_common(parser, STUDY)


def _models(law, rho_name, N):
    """Exact model and the approximations (label -> model) of one pressure law."""
    from ..circular.friction import ExactCircularFriction, HarmonicFriction, \
        LinearEllipsoidalFriction

    ex = ExactCircularFriction(law)
    rho = ex.kappa if rho_name == "kappa" else ex.R
    ex = ExactCircularFriction(law, rho=rho)
    approx = {"linear": LinearEllipsoidalFriction(law, rho=rho)}
    for n in range(1, N + 1):
        approx[f"harmonic N={n}"] = HarmonicFriction(law, rho=rho, N=n)
    if N >= 2:
        approx["endpoint N=2 (fesub)"] = HarmonicFriction(law, rho=rho, N=2, fit="endpoint")
    if N >= 3:
        approx["endpoint+slope N=3 (fesub)"] = HarmonicFriction(law, rho=rho, N=3,
                                                                fit="endpoint+slope")
    return ex, approx


def _second_model(N):
    """File tag and label of the harmonic model drawn beside the exact one (order 2 or N)."""
    return f"N{min(2, N)}", f"harmonic N={min(2, N)}"


class _Once:
    """A value computed on first use (the models are built only when a part or figure needs
    them, so that a resumed run does not rebuild them for nothing)."""

    def __init__(self, fn):
        self.fn, self.value, self.ready = fn, None, False

    def __call__(self):
        if not self.ready:
            self.value, self.ready = self.fn(), True
        return self.value


def run(args) -> int:
    from .common import StudyDir

    laws = ["uniform", "hertz"] if args.law == "both" else [args.law]
    params = {"law": args.law, "rho": args.rho, "N": args.N, "forces": list(args.forces),
              "traj_force": args.traj_force, "t_end": args.t_end, "lam": args.lam,
              "quick": bool(args.quick)}
    d = StudyDir(args.out, STUDY, params, overwrite=args.overwrite, figures=not args.no_figures,
                 quiet=args.quiet)
    profiles = {law: _profiles(args, d, law) for law in laws}
    disc = _disc(args, d)
    ball_bv = _ball(args, d)
    d.finish(_summary(params, profiles, disc, ball_bv))
    d.say(f"fesub circular: results in {d.path}")
    ex_d, ex_b = disc["values"].row("exact"), ball_bv.row("exact")
    stop = ex_d["force_free_stop"]
    ff = "none" if ex_d["F_F"] is None else f"{ex_d['F_F']:.6f}"
    d.say(f"  disc (exact): F_T = {ex_d['F_T']:.6f} N, F_P = {ex_d['F_P']:.6f} N, F_F = {ff} N, "
          f"force-free stop eps* = {stop['eps'] if stop else float('nan'):.6f}")
    d.say(f"  ball (exact, lambda = {args.lam:g}): F_T = {ex_b['F_T']:.6f} N, "
          f"F_P = {ex_b['F_P']:.6f} N")
    return 0


def _profiles(args, d, law):
    """Parts ``profiles_<law>`` and ``error_map_<law>`` and their figures; returns both."""
    import numpy as np

    from ..circular import plots
    from ..circular.results import direction_error_map, profile_curves

    quick = args.quick
    eps = np.geomspace(1e-3, 1e3, 200 if quick else 800)
    models = _Once(lambda: _models(law, args.rho, args.N))
    prof = d.compute(f"profiles_{law}", lambda: profile_curves(
        models()[0], models()[1], eps, n_theta=2001 if quick else 20001))
    emap = d.compute(f"error_map_{law}", lambda: direction_error_map(
        models()[0], models()[1], n=41 if quick else 121))
    d.say(f"profiles and error map of the {law} law: done")
    if d.figures_on:
        plots.plot_profiles(prof, d.figure(
            f"profiles_{law}.png", f"Force and torque profiles Q_eps, T_eps of the models "
            f"against the exact {law}-pressure profiles, and their errors."))
        plots.plot_error_map(emap, d.figure(
            f"error_map_{law}.png", f"Error |Q_model - Q_exact|/(mu P) of each model over "
            f"the slip directions, {law} pressure."))
    return prof, emap


def _disc(args, d) -> dict:
    """The disc's parts (bifurcation values, circle curves, limit-direction diagrams, limit
    directions per force, stopping runs) and figures; returns the values, limit directions and
    trajectories."""
    import numpy as np

    from ..circular.dynamics import ReducedContactSystem
    from ..circular.results import (LimitDirectionDiagram, LimitDirections, bifurcation_table,
                                    circle_curves)

    quick = args.quick
    tag2, lab2 = _second_model(args.N)

    def disc_systems():
        ex, approx = _models("uniform", "kappa", args.N)
        systems = {"exact": ReducedContactSystem.disc(ex)}
        systems.update({lab: ReducedContactSystem.disc(m) for lab, m in approx.items()})
        return systems

    discs = _Once(disc_systems)
    disc_bv = d.compute("disc_bifurcation_values", lambda: bifurcation_table(discs()))
    curves = d.compute("disc_circle_curves", lambda: circle_curves(discs(), args.forces))
    F_grid = np.linspace(0.0, 1.3, 53 if quick else 261)
    diagrams = {lab: d.compute(f"disc_limit_direction_diagram_{tag}", lambda lab=lab:
                               LimitDirectionDiagram.compute(discs()[lab], F_grid))
                for tag, lab in (("exact", "exact"), (tag2, lab2))}
    limit_dirs = {F: d.compute(f"disc_limit_directions_F{F:g}", lambda F=F:
                               LimitDirections.compute(discs()["exact"].with_force(F)))
                  for F in args.forces}
    d.say("disc: bifurcation values, diagrams and limit directions done")
    s_traj = _Once(lambda: discs()["exact"].with_force(args.traj_force))
    trajs = [d.compute(f"disc_trajectory_{i}", lambda x0=x0: _stopping_run(
        s_traj(), x0, args.t_end, progress=not args.quiet))
        for i, x0 in enumerate(TRAJECTORY_STARTS)]
    d.say(f"disc: {len(trajs)} stopping runs done")
    if d.figures_on:
        _disc_figures(args, d, discs, curves, diagrams, limit_dirs, s_traj(), trajs)
    return {"values": disc_bv, "limit_directions": limit_dirs, "trajectories": trajs}


def _stopping_run(system, x0, t_cap, progress):
    """The run from ``x0`` (m/s) to the stop, its horizon the shorter of ``t_cap`` (s) and the
    physical one (twice the stop-time bound; none when the stop time has no bound)."""
    import numpy as np

    from ..circular.sliding import HORIZON_FACTOR

    horizon = min(t_cap, HORIZON_FACTOR * system.stop_time_bound(x0))
    return system.simulate_sliding(np.array(x0), t_end=horizon, progress=progress)


def _disc_figures(args, d, discs, curves, diagrams, limit_dirs, system, trajs):
    """The disc's figures: circle curves, limit-direction diagrams, sphere portraits, runs."""
    from ..circular import plots

    tag2, lab2 = _second_model(args.N)
    plots.plot_k_curves(curves, d.figure(
        "disc_k_curves.png", "Disc: m(psi) = cos(psi) k(sin psi) on the invariant circle per "
        "model; a crossing with a force level is a non-trivial limit direction."))
    for lab, fname in (("exact", "disc_bifurcation.png"),
                       (lab2, f"disc_bifurcation_{tag2}.png")):
        plots.plot_limit_direction_diagram(diagrams[lab], d.figure(
            fname, f"Disc, {lab} model: limit directions against the force, coloured by "
            "stability, with the tangency (T), pitchfork (P) and fold (F) forces."))
    for F, ld in limit_dirs.items():
        plots.plot_sphere_portrait(
            discs()["exact"].with_force(F), d.figure(
                f"disc_sphere_F{F:g}.png", f"Disc, exact model, F/(mu m g) = {F:g}: flow of "
                "the slip direction on the sphere and the limit directions."),
            n=30 if args.quick else 60, directions=ld.directions)
    plots.plot_trajectories(system, trajs, d.figure(
        "disc_trajectories.png", f"Disc, exact model, F/(mu m g) = {args.traj_force:g}: "
        "slip and spin of four runs until they stop."))


def _ball(args, d):
    """The ball's parts (bifurcation values, limit-direction diagram) and figure; returns the
    bifurcation values."""
    import numpy as np

    from ..circular import plots
    from ..circular.dynamics import ReducedContactSystem
    from ..circular.results import LimitDirectionDiagram, bifurcation_table

    def ball_systems():
        exh, approxh = _models("hertz", "kappa", args.N)
        balls = {"exact": ReducedContactSystem.ball(exh, lam=args.lam)}
        balls.update({lab: ReducedContactSystem.ball(m, lam=args.lam)
                      for lab, m in approxh.items()})
        return balls

    balls = _Once(ball_systems)
    ball_bv = d.compute("ball_bifurcation_values",
                        lambda: bifurcation_table(balls(), lam=args.lam))
    ball_diag = d.compute("ball_limit_direction_diagram_exact",
                          lambda: LimitDirectionDiagram.compute(
                              balls()["exact"], np.linspace(0, 4.0, 41 if args.quick else 161)))
    d.say("ball: bifurcation values and diagram done")
    if d.figures_on:
        plots.plot_limit_direction_diagram(ball_diag, d.figure(
            "ball_bifurcation.png", f"Ball (radius {args.lam:g} R), exact Hertz model: limit "
            "directions against the force."))
    return ball_bv


def _summary(params, profiles, disc, ball_bv) -> dict:
    """The study's summary record: the exact models' bifurcation forces and stop, the linear
    model's errors; every model's numbers under ``details``."""
    from ..io import summary_record

    disc_bv, limit_dirs, trajs = disc["values"], disc["limit_directions"], disc["trajectories"]
    ex_d, ex_b = disc_bv.row("exact"), ball_bv.row("exact")
    stop = ex_d["force_free_stop"]
    results = {"disc_F_T": (ex_d["F_T"], "N"), "disc_F_P": (ex_d["F_P"], "N"),
               "disc_F_F": (ex_d["F_F"], "N"),
               "disc_force_free_stop_eps": (stop["eps"] if stop else None, "1"),
               "disc_t_stop": ([tr.t_stop for tr in trajs], "s"),
               "ball_F_T": (ex_b["F_T"], "N"), "ball_F_P": (ex_b["F_P"], "N")}
    for law, (prof, emap) in profiles.items():
        results[f"max_err_Q_linear_{law}"] = (prof.max_errors()["linear"][0], "1")
    details = {
        "disc_models_N": {m: disc_bv.row(m) for m in disc_bv.models},
        "ball_models_N": {m: ball_bv.row(m) for m in ball_bv.models},
        "profile_max_errors": {law: {m: {"Q": q, "T": t} for m, (q, t) in
                                     prof.max_errors().items()}
                               for law, (prof, _) in profiles.items()},
        "direction_map_max_errors": {law: emap.max_error() for law, (_, emap) in
                                     profiles.items()},
        "disc_limit_directions": {f"{F:g}": [x.as_dict() for x in ld.directions]
                                  for F, ld in limit_dirs.items()},
        "disc_trajectories": [{"x0_m_per_s": list(x0), "t_stop_s": tr.t_stop,
                               "stopped": tr.stopped, "stuck": tr.stuck,
                               "w_final": tr.w_final.tolist(), "eps_final": tr.eps_final}
                              for x0, tr in zip(TRAJECTORY_STARTS, trajs)],
    }
    units = {"law": None, "rho": None, "N": None, "forces": "1", "traj_force": "1",
             "t_end": "s", "lam": "1", "quick": None}
    return summary_record(STUDY, {**{k: (v, units[k]) for k, v in params.items()},
                                  **CONSTANTS}, results, details=details)
