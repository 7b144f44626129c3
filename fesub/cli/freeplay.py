"""``fesub freeplay``: bifurcation diagrams, basins, periodic orbits and branches of the two-mass
free-play oscillator; writes PNG figures and npz + json results into ``--out``.

Examples::

    fesub freeplay basin --W 1.15 --grid 100 --range 0.5 --law both --out results/
    fesub freeplay bifurcation --W-range 0.8 1.8 --n-W 101 --out results/
    fesub freeplay orbit --W 1.3 --ic 0 0 0 0 --out results/
    fesub freeplay branch --W 1.3 --W-range 1.0 1.6 --out results/
    fesub freeplay radius --out results/
"""

from __future__ import annotations

import json
import os

import numpy as np

from ..errors import ParameterError


def add_arguments(parser) -> None:
    parser.add_argument("task", choices=["basin", "bifurcation", "orbit", "branch", "backbone",
                                         "radius"], help="what to compute")
    parser.add_argument("--out", default="freeplay_out", help="output directory")
    parser.add_argument("--preset", default="P_REF", help="parameter preset (P_REF is provisional)")
    parser.add_argument("--set", nargs=2, action="append", metavar=("NAME", "VALUE"), default=[],
                        help="override a parameter, e.g. --set Q1 0.25")
    parser.add_argument("--law", default="exact", choices=["exact", "smooth", "both"])
    parser.add_argument("--W", type=float, default=1.15, help="forcing frequency")
    parser.add_argument("--W-range", type=float, nargs=2, default=(0.8, 1.8))
    parser.add_argument("--n-W", type=int, default=101, help="frequencies in the diagram")
    parser.add_argument("--grid", type=int, default=100, help="basin cells per side")
    parser.add_argument("--range", type=float, default=1.5, help="basin half-width in x1(0), x2(0)")
    parser.add_argument("--n-transient", type=int, default=None, help="discarded periods")
    parser.add_argument("--steps", type=int, default=200, help="RK4 steps per period")
    parser.add_argument("--early-exit", type=float, default=0.0, metavar="TOL",
                        help="basins: end a cell's transient once its stroboscopic state repeats "
                             "within TOL (e.g. 1e-9); 0 = full transient")
    parser.add_argument("--ic", type=float, nargs=4, default=(0.2, 0.0, 0.2, 0.0))
    parser.add_argument("--periods", type=int, default=1, help="orbit period in forcing periods")
    parser.add_argument("--workers", type=int, default=None,
                        help="processes (default os.cpu_count(); 1 = serial)")
    parser.add_argument("--no-progress", action="store_true")


def _params(args):
    from ..nonsmooth.system import get_params

    over = {}
    for name, val in args.set:
        try:
            over[name] = float(val)
        except ValueError:
            raise ParameterError(f"--set {name}: value must be a number, got {val!r}") from None
    return get_params({"preset": args.preset, **over})


def _executor(args):
    if args.workers is not None and args.workers <= 1:
        return "serial"
    if args.workers is None:
        return None
    from concurrent.futures import ProcessPoolExecutor

    from ..nonsmooth.batch import _init_worker
    return ProcessPoolExecutor(args.workers, initializer=_init_worker)


def run(args) -> int:
    from ..nonsmooth import plots
    from ..nonsmooth.analysis import basins, bifurcation_diagram

    os.makedirs(args.out, exist_ok=True)
    p = _params(args)
    laws = ["exact", "smooth"] if args.law == "both" else [args.law]
    prog = not args.no_progress
    out = args.out
    written = []
    if args.task == "radius":
        from ..nonsmooth.laws import SigmoidFreePlay, radius_of_influence, spurious_force_peak
        law = SigmoidFreePlay(p.kp, p.a, p.delta)
        R, E = radius_of_influence(law)
        F, depth = spurious_force_peak(law)
        info = {"R_i": R, "R_i_over_a": R / p.a, "E_inf": E, "spurious_force_peak": F,
                "spurious_force_depth": depth, "ratio_to_linear_force": F / (p.k * p.a)}
        with open(os.path.join(out, "radius.json"), "w") as f:
            json.dump(info, f, indent=1)
        plots.force_law(law, path=os.path.join(out, "force_law.png"))
        plots.vector_field_error_map(p, law, path=os.path.join(out, "vector_field_error.png"))
        print(json.dumps(info, indent=1))
        return 0
    if args.task == "basin":
        ex = _executor(args)
        res = {}
        for law in laws:
            r = basins(p, args.W, law=law, x1_range=(-args.range, args.range),
                       x2_range=(-args.range, args.range), shape=(args.grid, args.grid),
                       n_transient=args.n_transient or 150, steps_per_period=args.steps,
                       early_exit_tol=args.early_exit, executor=ex, progress=prog)
            res[law] = r
            written.append(r.save(os.path.join(out, f"basin_W{args.W:g}_{law}")))
            plots.basin(r, path=os.path.join(out, f"basin_W{args.W:g}_{law}.png"))
            print(f"{law}: " + ", ".join(f"[{a['label']}] p={a['period']} max={a['x1_max']:.4f} "
                                         f"min={a['x1_min']:.4f} {100 * a['fraction']:.1f}%"
                                         for a in r.attractors)
                  + f"; unclassified {100 * r.unclassified:.1f}%")
        if len(res) == 2:
            plots.basin_compare(res["exact"], res["smooth"],
                                path=os.path.join(out, f"basin_W{args.W:g}_compare.png"))
            print(f"cells with the same attractor: {100 * res['exact'].agreement(res['smooth']):.1f}%")
        if hasattr(ex, "shutdown"):
            ex.shutdown()
    elif args.task == "bifurcation":
        ex = _executor(args)
        W = np.linspace(args.W_range[0], args.W_range[1], args.n_W)
        for law in laws:
            r = bifurcation_diagram(p, W, law=law, n_transient=args.n_transient or 300,
                                    steps_per_period=args.steps, executor=ex, progress=prog)
            written.append(r.save(os.path.join(out, f"bifurcation_{law}")))
            plots.bifurcation(r, path=os.path.join(out, f"bifurcation_{law}.png"))
        if hasattr(ex, "shutdown"):
            ex.shutdown()
    elif args.task == "orbit":
        from ..nonsmooth.orbits import orbit_from_ic
        from ..nonsmooth.system import TwoMassFreePlay
        for law in laws:
            sys = TwoMassFreePlay(p, law)
            o = orbit_from_ic(sys, args.ic, args.W, args.periods,
                              n_transient=args.n_transient or 150)
            with open(os.path.join(out, f"orbit_W{args.W:g}_{law}.json"), "w") as f:
                json.dump(o.to_dict(), f, indent=1)
            plots.phase_portrait(sys, o.z0, args.W, n_transient=0, n_periods=max(3, args.periods),
                                 path=os.path.join(out, f"orbit_W{args.W:g}_{law}.png"))
            print(f"{law}: max x1 {o.x1_max:.7f}, min x1 {o.x1_min:.7f}, "
                  f"max|multiplier| {o.max_multiplier:.5f}, stable {o.stable}")
    elif args.task == "branch":
        from ..nonsmooth.branches import branch_summary, continue_orbit
        from ..nonsmooth.orbits import orbit_from_ic
        from ..nonsmooth.system import TwoMassFreePlay
        items, mults, Ws = [], [], []
        for law in laws:
            sys = TwoMassFreePlay(p, law)
            o = orbit_from_ic(sys, args.ic, args.W, args.periods,
                              n_transient=args.n_transient or 150)
            for d in (+1, -1):
                br, prob = continue_orbit(sys, o.z0, args.W, args.W_range,
                                          n_periods=args.periods, direction=d, progress=prog)
                s = branch_summary(br, prob)
                tag = f"branch_{law}_{'up' if d > 0 else 'down'}"
                br.save(os.path.join(out, tag + ".npz"))
                with open(os.path.join(out, tag + ".json"), "w") as f:
                    json.dump({"stop_reason": br.stop_reason,
                               "events": [{"kind": e.kind, "W": e.lam} for e in br.events],
                               **{k: np.asarray(v).tolist() for k, v in s.items()}}, f, indent=1)
                items.append((br, s, f"{law} {'up' if d > 0 else 'down'}"))
                mults.append(np.array([np.linalg.eigvals(prob.monodromy(x, W))
                                       for x, W in zip(br.x, br.lam)]))
                Ws.append(br.lam)
                print(f"{tag}: {len(br.lam)} points, stop: {br.stop_reason}, events: "
                      + ", ".join(f"{e.kind}@{e.lam:.5f}" for e in br.events))
        plots.branches(items, projection="peak", path=os.path.join(out, "branches_peak.png"))
        plots.floquet(np.concatenate(mults), W=np.concatenate(Ws),
                      path=os.path.join(out, "branches_floquet.png"))
        plots.branches(items, projection="x1_max", path=os.path.join(out, "branches_x1max.png"))
    elif args.task == "backbone":
        from ..nonsmooth.branches import backbone
        from ..nonsmooth.system import TwoMassFreePlay
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots()
        for law in laws:
            for mode in (1, 2):
                bb = backbone(TwoMassFreePlay(p, law), mode, (0.005, 2 * p.a + 0.1))
                np.savez(os.path.join(out, f"backbone_{law}_mode{mode}.npz"), A=bb.A, x2=bb.x2,
                         frequency=bb.frequency)
                ax.plot(bb.frequency, bb.A, label=f"{law}, mode {mode}")
        ax.set_xlabel("frequency")
        ax.set_ylabel("x1 amplitude")
        ax.legend()
        fig.savefig(os.path.join(out, "backbones.png"), dpi=120)
        plt.close(fig)
    print(f"results written to {os.path.abspath(out)}")
    return 0
