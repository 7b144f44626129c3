"""``fesub circular``: friction over a circular contact, disc and ball on a plane.

Writes to ``--out DIR``:

* ``profiles_<law>.png``, ``error_map_<law>.png``, ``profiles_<law>.npz/.json`` -- force and torque
  profiles of every model against the exact one, the model errors over slip directions, the harmonic
  coefficients and the maximum errors;
* ``disc_bifurcation.png``, ``disc_k_curves.png``, ``disc_sphere_F<F>.png``,
  ``disc_trajectories.png``, ``disc.npz/.json`` -- limit directions, bifurcation values
  (tangency, pitchfork, fold) per model, and stopping trajectories;
* ``ball_bifurcation.png``, ``ball.json`` -- the same analysis for the ball (lambda = 5).
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np

from ..errors import ParameterError
from ..io import write_json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", default="circular_out", help="output directory (created)")
    parser.add_argument("--law", choices=["uniform", "hertz", "both"], default="both",
                        help="pressure law(s) for the friction profiles")
    parser.add_argument("--rho", choices=["kappa", "R"], default="kappa",
                        help="length scale of the direction vector")
    parser.add_argument("--N", type=int, default=4, help="highest harmonic order (>= 1)")
    parser.add_argument("--forces", default="0.03,0.2,0.7,1.2",
                        help="comma-separated forces F/(mu m g) for the disc portraits")
    parser.add_argument("--lam", type=float, default=5.0, help="ball radius / contact radius")
    parser.add_argument("--quick", action="store_true", help="coarser grids (for smoke tests)")
    parser.add_argument("--no-progress", action="store_true", help="hide progress bars")


def save_results(path, arrays: dict, summary: dict) -> None:
    """Write ``path.npz`` with ``arrays`` and ``path.json`` with ``summary``."""
    p = Path(path)
    np.savez(p.with_suffix(".npz"), **arrays)
    write_json(p.with_suffix(".json"), summary)


def _models(law, rho_name, N):
    from ..circular.models import ExactCircularFriction, HarmonicFriction, LinearEllipsoidalFriction

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


def run(args) -> int:
    from tqdm.auto import tqdm

    from ..circular.dynamics import ReducedContactSystem, bifurcation_values, find_limit_directions
    from ..circular.plots import (plot_bifurcation_diagram, plot_error_map, plot_k_curves, plot_profiles,
                        plot_sphere_portrait, plot_trajectories)

    if args.N < 1 or args.N > 12:
        raise ParameterError(f"--N must lie in [1, 12], got {args.N}")
    if not (args.lam > 0 and math.isfinite(args.lam)):
        raise ParameterError(f"--lam must be finite and > 0, got {args.lam}")
    try:
        forces = [float(x) for x in args.forces.split(",") if x.strip()]
    except ValueError:
        raise ParameterError(f"--forces must be comma-separated numbers, got {args.forces!r}") \
            from None
    if not forces or not all(math.isfinite(f) and f >= 0 for f in forces):
        raise ParameterError("--forces must be finite numbers >= 0")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    progress = not args.no_progress
    laws = ["uniform", "hertz"] if args.law == "both" else [args.law]
    written = []
    steps = tqdm(total=len(laws) + 2, desc="fesub circular", disable=not progress)

    # ---------------------------------------------------------------- profiles
    eps = np.geomspace(1e-3, 1e3, 200 if args.quick else 800)
    for law in laws:
        ex, approx = _models(law, args.rho, args.N)
        plot_profiles(approx, ex, out / f"profiles_{law}.png", eps=eps)
        fig = plot_error_map(approx, ex, out / f"error_map_{law}.png", n=41 if args.quick else 121)
        th = np.linspace(0, math.pi / 2, 2001 if args.quick else 20001)
        Qe, Te = ex.profile_theta(th)
        arrays = {"eps": eps, "Q_exact": ex.profile_eps(eps)[0], "T_exact": ex.profile_eps(eps)[1]}
        summ = {"law": law, "rho": ex.rho, "R": ex.R, "kappa": ex.kappa, "models": {}}
        for lab, m in approx.items():
            key = lab.split(" (")[0].replace(" ", "_").replace("=", "")
            Q, T = m.profile_eps(eps)
            arrays[f"Q_{key}"], arrays[f"T_{key}"] = Q, T
            Qa, Ta = m.profile_theta(th)
            summ["models"][lab] = {**m.describe(), "max_err_Q": float(np.max(np.abs(Qa - Qe))),
                                   "max_err_T": float(np.max(np.abs(Ta - Te))),
                                   "max_err_direction_map": float(fig.maps[lab].max())}
        save_results(out / f"profiles_{law}", arrays, summ)
        written += [f"profiles_{law}.png", f"error_map_{law}.png", f"profiles_{law}.npz"]
        steps.update()

    # ---------------------------------------------------------------- disc
    ex, approx = _models("uniform", "kappa", args.N)
    systems = {"exact": ReducedContactSystem.disc(ex)}
    systems.update({lab: ReducedContactSystem.disc(m) for lab, m in approx.items()})
    disc_summary = {"A": systems["exact"].A, "b": systems["exact"].b, "models": {}}
    for lab, s in systems.items():
        bv = bifurcation_values(s)
        disc_summary["models"][lab] = {"F_T": bv["F_T"], "F_P": bv["F_P"], "F_F": bv["F_F"],
                                       "folds": bv["folds"]}
        dirs = [d for d in find_limit_directions(s) if 1e-9 < d.w[0] < 1 - 1e-9 and d.w[2] > 0]
        if dirs:
            w = dirs[0].w
            disc_summary["models"][lab]["force_free_stop"] = {
                "w": w.tolist(), "eps": float((s.rho / s.model.R) * w[0] / w[2])}
    plot_k_curves(systems, forces, out / "disc_k_curves.png")
    F_grid = np.linspace(0.0, 1.3, 53 if args.quick else 261)
    arrays = {}
    for lab in ("exact", f"harmonic N={min(2, args.N)}"):
        _, bd = plot_bifurcation_diagram(systems[lab].with_force(0.0), F_grid,
                                         out / ("disc_bifurcation.png" if lab == "exact" else
                                                "disc_bifurcation_N2.png"))
        tag = "exact" if lab == "exact" else "N2"
        for k_, v in bd.items():
            arrays[f"bif_{tag}_{k_}"] = v
    for F in forces:
        s = systems["exact"].with_force(F)
        plot_sphere_portrait(s, out / f"disc_sphere_F{F:g}.png", n=30 if args.quick else 60)
        disc_summary.setdefault("limit_directions_exact", {})[f"{F:g}"] = [
            d.as_dict() for d in find_limit_directions(s)]
    F_traj = 0.2
    s = systems["exact"].with_force(F_traj)
    ics = [np.array(x) for x in ([1.0, 0.0, 0.2], [0.3, 0.6, -0.5], [-0.4, 0.1, 0.9],
                                 [0.8, -0.3, 0.05])]
    trajs = [s.simulate(x0) for x0 in ics]
    plot_trajectories(s, trajs, out / "disc_trajectories.png")
    disc_summary["trajectories"] = {"F": F_traj, "runs": [tr.summary() for tr in trajs]}
    for i, tr in enumerate(trajs):
        arrays[f"traj{i}_t"] = tr.t
        arrays[f"traj{i}_x_o"] = tr.x_o
    save_results(out / "disc", arrays, disc_summary)
    written += ["disc_bifurcation.png", "disc_k_curves.png", "disc_trajectories.png", "disc.npz"]
    steps.update()

    # ---------------------------------------------------------------- ball
    exh, approxh = _models("hertz", "kappa", args.N)
    balls = {"exact": ReducedContactSystem.ball(exh, lam=args.lam)}
    balls.update({lab: ReducedContactSystem.ball(m, lam=args.lam) for lab, m in approxh.items()})
    ball_summary = {"lam": args.lam, "A": balls["exact"].A, "b": balls["exact"].b, "models": {}}
    for lab, s in balls.items():
        bv = bifurcation_values(s)
        ball_summary["models"][lab] = {"F_T": bv["F_T"], "F_P": bv["F_P"], "F_F": bv["F_F"]}
    plot_bifurcation_diagram(balls["exact"], np.linspace(0, 4.0, 41 if args.quick else 161),
                             out / "ball_bifurcation.png")
    write_json(out / "ball.json", ball_summary)
    written += ["ball_bifurcation.png", "ball.json"]
    steps.update()
    steps.close()

    import matplotlib.pyplot as plt

    plt.close("all")
    print(f"fesub circular: wrote {len(list(out.iterdir()))} files to {out}")
    ex_b = disc_summary["models"]["exact"]
    print(f"  disc (exact): F_T = {ex_b['F_T']:.6f}, F_P = {ex_b['F_P']:.6f}, "
          f"F_F = {ex_b['F_F']:.6f}, force-free stop eps* = "
          f"{ex_b['force_free_stop']['eps']:.6f}")
    bx = ball_summary["models"]["exact"]
    print(f"  ball (exact, lambda = {args.lam:g}): F_T = {bx['F_T']:.6f}, F_P = {bx['F_P']:.6f}")
    return 0
