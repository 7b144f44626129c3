"""``fesub freeplay``: basins of attraction, bifurcation diagrams, periodic orbits with their
Floquet multipliers, branches and backbones of the two-mass free-play oscillator.

Examples::

    fesub freeplay basin --W 1.15 --grid 100 --range 0.5 --law both -j 2
    fesub freeplay bifurcation --W-range 0.8 1.8 --n-W 101
    fesub freeplay orbit --W 1.3 --ic 0 0 0 0
    fesub freeplay branch --W 1.3 --W-range 1.0 1.6
    fesub freeplay backbone
    fesub freeplay radius

Units: the model is non-dimensional; with the reference scales 1 m, 1 rad/s and 1 kg its numbers
are SI numbers, and the results carry those units (displacement m, velocity m/s, frequency rad/s,
force N).

Output folder (``--out``), resumed part by part: a basin is computed in blocks of ``--tile-rows``
rows, each written as it finishes (``basin_W1.15_exact_tile000.nc``, ...) and assembled into
``basin_W1.15_exact.nc``; the bifurcation diagram likewise in blocks of ``--tile-W`` frequencies.
Orbits (``orbit_W1.3_exact.nc``), branches (``branch_exact_up.nc``) and backbones
(``backbone_exact_mode1.nc``) are parts of their own. ``summary.json``, ``report.html`` and the
PNG figures complete the folder.
"""

from __future__ import annotations

import argparse

from .common import add_common, integer, number

STUDY = "freeplay"
TASKS = ("basin", "bifurcation", "orbit", "branch", "backbone", "radius")
DEFAULT_TRANSIENT = {"basin": 150, "orbit": 150, "branch": 150, "bifurcation": 300}
#: basin classification tolerances of :func:`fesub.nonsmooth.basin.basins`
PERIOD_TOL, CLUSTER_TOL = 1e-6, 1e-3


def add_arguments(parser) -> None:
    parser.add_argument("task", choices=TASKS, help="what to compute")
    parser.add_argument("--preset", default="P_REF", choices=["P_REF"],
                        help="parameter preset (P_REF is provisional: the paper's table is "
                             "missing)")
    parser.add_argument("--set", nargs=2, action="append", metavar=("NAME", "VALUE"), default=[],
                        help="override a parameter in SI units, e.g. --set Q1 0.25 (N); names: "
                             "m [kg], c cd [N s/m], k kd kp [N/m], mu mud [N/m^3], a [m], "
                             "delta [1/m], Q1 Q2 [N]")
    parser.add_argument("--law", default="exact", choices=["exact", "smooth", "both"],
                        help="free-play law: exact piecewise-linear, sigmoid-smoothed, or both")
    parser.add_argument("--W", type=number(gt=0, unit="rad/s"), default=1.15, metavar="W",
                        help="forcing frequency [rad/s] (basin, orbit, branch start)")
    parser.add_argument("--W-range", type=number(gt=0, unit="rad/s"), nargs=2, default=(0.8, 1.8),
                        metavar=("LOW", "HIGH"),
                        help="forcing frequencies [rad/s] of the bifurcation diagram and the "
                             "branch bounds")
    parser.add_argument("--n-W", type=integer(ge=1), default=101, metavar="N",
                        help="frequencies in the bifurcation diagram [-]")
    parser.add_argument("--tile-W", type=integer(ge=1), default=10, metavar="N",
                        help="frequencies per saved block of the bifurcation diagram [-]")
    parser.add_argument("--grid", type=integer(ge=1), default=100, metavar="N",
                        help="basin cells per side [-]")
    parser.add_argument("--range", type=number(gt=0, unit="m"), default=1.5, metavar="X",
                        help="basin half-width in x1(0) and x2(0) [m]")
    parser.add_argument("--tile-rows", type=integer(ge=1), default=10, metavar="N",
                        help="basin rows per saved block [-] (a rerun computes only the missing "
                             "blocks)")
    parser.add_argument("--n-transient", type=integer(ge=0), default=None, metavar="N",
                        help="discarded forcing periods [-] (default: 150 for basin, orbit and "
                             "branch, 300 for the bifurcation diagram)")
    parser.add_argument("--steps", type=integer(ge=8), default=200, metavar="N",
                        help="RK4 steps per forcing period [-] (basin, bifurcation)")
    parser.add_argument("--early-stop", action=argparse.BooleanOptionalAction, default=True,
                        help="basins: stop a cell as soon as its stroboscopic path is recognised "
                             "as leading to an attractor found before (cell mapping by "
                             "recurrence; the labels of full integration on every cell of the "
                             "measured 200 x 200 basin); --no-early-stop integrates every cell "
                             "for the whole transient (default: on)")
    parser.add_argument("--early-exit", type=number(ge=0, unit="m"), default=0.0, metavar="TOL",
                        help="basins with --no-early-stop: end a cell's transient once its "
                             "stroboscopic state repeats within TOL [m, m/s] (e.g. 1e-9); 0 = "
                             "full transient (default: %(default)g)")
    parser.add_argument("--ic", type=number(), nargs=4, default=(0.2, 0.0, 0.2, 0.0),
                        metavar=("X1", "Y1", "X2", "Y2"),
                        help="initial state of orbit and branch [m, m/s, m, m/s]")
    parser.add_argument("--periods", type=integer(ge=1), default=1, metavar="N",
                        help="orbit period in forcing periods [-]")
    parser.add_argument("--A-max", type=number(gt=0, unit="m"), default=None, metavar="A",
                        help="backbone: largest amplitude x1 [m] (default 2 a + 0.1 m)")
    add_common(parser, STUDY, jobs=True)


# ------------------------------------------------------------------------------------ the door
def _params(args):
    from ..errors import ParameterError
    from ..nonsmooth.system import FreePlayParams, get_params

    names = set(FreePlayParams.__dataclass_fields__)
    over = {}
    for name, val in args.set:
        if name not in names:
            raise ParameterError(f"--set {name}: unknown parameter; choose from {sorted(names)}")
        try:
            v = float(val)
        except ValueError:
            raise ParameterError(f"--set {name}: value must be a number, got {val!r}") from None
        over[name] = v
    return get_params({"preset": args.preset, **over})


def _settings(args, p) -> dict:
    """The run's parameters as recorded in the output folder (checked at the door)."""
    from ..errors import ParameterError

    lo, hi = args.W_range
    if args.task in ("bifurcation", "branch") and not lo < hi:
        raise ParameterError(f"--W-range must be LOW HIGH with LOW < HIGH [rad/s], got {lo:g} "
                             f"{hi:g}")
    if args.task == "branch" and not lo <= args.W <= hi:
        raise ParameterError(f"--W {args.W:g} rad/s must lie in --W-range {lo:g} {hi:g} rad/s")
    if args.task == "basin" and args.early_stop and args.early_exit > 0:
        raise ParameterError("--early-exit applies with --no-early-stop (two ways to end a "
                             "transient: choose one)")
    if args.task == "backbone" and args.A_max is not None and not args.A_max > 0.005:
        raise ParameterError(f"--A-max must be > 0.005 m (the linear start), got {args.A_max:g}")
    s = {"task": args.task, "params": p.to_dict(), "law": args.law}
    n_tr = args.n_transient if args.n_transient is not None else \
        DEFAULT_TRANSIENT.get(args.task)
    if args.task == "basin":
        s.update(W=args.W, grid=args.grid, range=args.range, tile_rows=args.tile_rows,
                 n_transient=n_tr, steps=args.steps, early_exit=args.early_exit,
                 early_stop=args.early_stop)
    elif args.task == "bifurcation":
        s.update(W_range=[lo, hi], n_W=args.n_W, tile_W=args.tile_W, n_transient=n_tr,
                 steps=args.steps)
    elif args.task in ("orbit", "branch"):
        s.update(W=args.W, ic=list(args.ic), periods=args.periods, n_transient=n_tr)
        if args.task == "branch":
            s.update(W_range=[lo, hi])
    elif args.task == "backbone":
        s.update(A_max=args.A_max if args.A_max is not None else 2 * p.a + 0.1)
    return s


def run(args) -> int:
    from .common import StudyDir

    p = _params(args)
    s = _settings(args, p)
    d = StudyDir(args.out, STUDY, s, overwrite=args.overwrite, figures=not args.no_figures,
                 quiet=args.quiet)
    laws = ["exact", "smooth"] if args.law == "both" else [args.law]
    task = {"basin": _basin, "bifurcation": _bifurcation, "orbit": _orbit, "branch": _branch,
            "backbone": _backbone, "radius": _radius}[args.task]
    results, details = task(args, d, p, laws, s)
    from ..io import summary_record

    par = {"task": (args.task, None), "law": (args.law, None), **p.quantities()}
    for k, unit in (("W", "rad/s"), ("W_range", "rad/s"), ("n_W", None), ("grid", None),
                    ("range", "m"), ("tile_rows", None), ("tile_W", None), ("n_transient", None),
                    ("steps", None), ("early_exit", "m"), ("early_stop", None), ("ic", "m, m/s, m, m/s"),
                    ("periods", None), ("A_max", "m")):
        if k in s:
            par[k] = (s[k], unit)
    d.finish(summary_record(STUDY, par, results, details=details))
    d.say(f"results written to {d.path.resolve()}")
    return 0


# ---------------------------------------------------------------------------------------- tasks
def _tiled(d, name, bounds, block, describe, combine):
    """Part ``NAME`` computed block by block: ``block(i0, i1)`` for each ``(i0, i1)`` of ``bounds``
    is the part ``NAME_tile000``, ``NAME_tile001``, ..., each saved as it finishes and reused by a
    rerun; ``combine(blocks)`` joins them into the part ``NAME`` itself."""
    def tiles():
        parts = []
        for k, (i0, i1) in enumerate(bounds):
            part = f"{name}_tile{k:03d}"
            parts.append(d.compute(part, lambda i0=i0, i1=i1: block(i0, i1)))
            d.say(f"{part}: {describe(i0, i1)} done")
        return combine(parts)

    return d.compute(name, tiles)


def _basin(args, d, p, laws, s):
    from ..nonsmooth import plots
    from ..nonsmooth.basin import assemble_basin, basin_grid, basin_run, basin_tiles
    from ..nonsmooth.batch import tile_bounds, worker_pool

    rng = (-args.range, args.range)
    g1, g2 = basin_grid(rng, rng, (args.grid, args.grid))
    bounds = tile_bounds(g1.size, args.tile_rows)
    res, details = {}, {}
    with worker_pool(args.jobs) as ex:
        for law in laws:
            name = f"basin_W{args.W:g}_{law}"
            run, stop = basin_run(p, args.W, law=law, n_transient=s["n_transient"], n_record=4,
                                  steps_per_period=args.steps, early_exit_tol=args.early_exit,
                                  early_stop=args.early_stop)

            def blocks(law=law, name=name, run=run, stop=stop):
                # every block is a part of its own, saved here as it finishes while the workers
                # go on with the next ones (no barrier between blocks)
                parts = [f"{name}_tile{k:03d}" for k in range(len(bounds))]
                done = [None] * len(parts)
                for k, part in enumerate(parts):
                    if d.done(part):
                        done[k] = d.load(part)
                        d.say(f"{part}: finished in an earlier run, reused")

                def keep(k, cells):
                    d.save(parts[k], cells)
                    i0, i1 = bounds[k]
                    d.say(f"{parts[k]}: rows {i0}-{i1 - 1} of {g1.size} done")

                basin_tiles(p, args.W, g1, g2, bounds, run, stop, done, executor=ex,
                            on_tile=keep, progress=None if args.quiet else f"basin ({law})")
                return assemble_basin(done, g1, g2, period_tol=PERIOD_TOL,
                                      cluster_tol=CLUSTER_TOL, x1_range=rng, x2_range=rng)

            r = d.compute(name, blocks)
            res[law] = r
            if d.figures_on:
                plots.basin(r, path=d.figure(
                    f"{name}.png", f"Basins of attraction at W = {args.W:g} rad/s, {law} law: one "
                    f"colour per attractor reached from rest at (x1(0), x2(0))"))
            d.say(f"{law}: " + "; ".join(f"{r.attractor_name(a['label'])} "
                                         f"{100 * a['fraction']:.1f} %" for a in r.attractors)
                  + f"; unclassified {100 * r.unclassified:.1f} %")
            details[law] = {"attractors": [
                {"name": r.attractor_name(a["label"]), "period": a["period"],
                 "x1_max_m": a["x1_max"], "x1_min_m": a["x1_min"], "fraction": a["fraction"]}
                for a in r.attractors], "unclassified_fraction": r.unclassified,
                "mean_transient_periods": r.options["mean_transient_periods"]}
    results = {f"attractors_{law}": (len(r.attractors), None) for law, r in res.items()}
    results.update({f"unclassified_fraction_{law}": (r.unclassified, "1")
                    for law, r in res.items()})
    if len(res) == 2:
        agree = res["exact"].agreement(res["smooth"])
        results["same_attractor_fraction"] = (agree, "1")
        d.say(f"cells with the same attractor: {100 * agree:.1f} %")
        if d.figures_on:
            plots.basin_compare(res["exact"], res["smooth"], path=d.figure(
                f"basin_W{args.W:g}_compare.png",
                "Exact against smoothed law: basins and the cells whose attractor differs"))
    return results, details


def _bifurcation(args, d, p, laws, s):
    import numpy as np

    from ..nonsmooth import plots
    from ..nonsmooth.batch import tile_bounds
    from ..nonsmooth.bifurcation import BifurcationResult, bifurcation_diagram
    from ..nonsmooth.batch import worker_pool

    W = np.linspace(args.W_range[0], args.W_range[1], args.n_W)
    bounds = tile_bounds(W.size, args.tile_W)
    results, details = {}, {}
    with worker_pool(args.jobs) as ex:
        for law in laws:
            name = f"bifurcation_{law}"

            def block(i0, i1, law=law):
                return bifurcation_diagram(p, W[i0:i1], law=law, n_transient=s["n_transient"],
                                           steps_per_period=args.steps, executor=ex,
                                           progress=False)

            r = _tiled(d, name, bounds, block,
                       lambda i0, i1: f"W {W[i0]:g} to {W[i1 - 1]:g} rad/s",
                       BifurcationResult.concat)
            if d.figures_on:
                plots.bifurcation(r, path=d.figure(
                    f"{name}.png", f"Bifurcation diagram ({law} law): x1 where x1' = 0 in the "
                    f"steady state from six initial conditions"))
            per = r.period
            results[f"periodic_fraction_{law}"] = (float(np.mean(per > 0)), "1")
            details[law] = {"periods_found": sorted({int(v) for v in np.unique(per) if v > 0})}
    return results, details


def _orbit_part(args, d, p, law, s):
    from ..nonsmooth.orbits import orbit_from_ic
    from ..nonsmooth.system import TwoMassFreePlay

    sys_ = TwoMassFreePlay(p, law)
    o = d.compute(f"orbit_W{args.W:g}_{law}", lambda: orbit_from_ic(
        sys_, args.ic, args.W, args.periods, n_transient=s["n_transient"]))
    return sys_, o


def _orbit(args, d, p, laws, s):
    from ..nonsmooth import plots

    results, details = {}, {}
    for law in laws:
        sys_, o = _orbit_part(args, d, p, law, s)
        if d.figures_on:
            plots.phase_portrait(sys_, o.z0, args.W, n_transient=0,
                                 n_periods=max(3, args.periods), path=d.figure(
                                     f"orbit_W{args.W:g}_{law}.png",
                                     f"Periodic orbit at W = {args.W:g} rad/s ({law} law): phase "
                                     f"portrait and time series"))
            plots.floquet(o.floquet, path=d.figure(
                f"orbit_W{args.W:g}_{law}_floquet.png", f"Floquet multipliers of the orbit "
                f"({law} law)"), title=f"Floquet multipliers, W = {args.W:g} rad/s, {law} law")
        d.say(f"{law}: max x1 {o.x1_max:.7f} m, min x1 {o.x1_min:.7f} m, "
              f"max |multiplier| {o.max_multiplier:.5f}, stable {o.stable}")
        results.update({f"x1_max_{law}": (o.x1_max, "m"), f"x1_min_{law}": (o.x1_min, "m"),
                        f"max_multiplier_{law}": (o.max_multiplier, "1"),
                        f"stable_{law}": (bool(o.stable), None)})
        details[law] = {"floquet_real": o.floquet.real.tolist(),
                        "floquet_imag": o.floquet.imag.tolist(), "switches": o.n_switch}
    return results, details


def _branch(args, d, p, laws, s):
    import numpy as np

    from ..nonsmooth import plots
    from ..nonsmooth.branches import continue_orbit, orbit_branch
    from .common import check_interrupted

    items, results, details = [], {}, {}
    for law in laws:
        sys_, o = _orbit_part(args, d, p, law, s)
        for direction in (+1, -1):
            name = f"branch_{law}_{'up' if direction > 0 else 'down'}"

            def fn(sys_=sys_, o=o, direction=direction):
                br, prob = continue_orbit(sys_, o.z0, args.W, args.W_range,
                                          n_periods=args.periods, direction=direction,
                                          progress=not args.quiet)
                check_interrupted(br)  # Ctrl-C: no orbit data for the points of a lost part
                return orbit_branch(br, prob, direction)

            ob = d.compute(name, fn)
            items.append(ob)
            d.say(f"{name}: {len(ob.W)} points, stop: {ob.branch.stop_reason}, events: "
                  + ", ".join(f"{e.kind}@{e.lam:.5f}" for e in ob.events))
            results[f"points_{name}"] = (len(ob.W), None)
            details[name] = {"stop_reason": ob.branch.stop_reason,
                             "events": [{"kind": e.kind, "W_rad_per_s": float(e.lam)}
                                        for e in ob.events]}
    if d.figures_on:
        from ..nonsmooth.plots import case_label

        case = case_label(p)
        plots.branches(items, projection="peak", path=d.figure(
            "branches_peak.png", "Periodic-orbit branches: max |x1| against W"),
            title=f"Periodic-orbit branches from W = {args.W:g} rad/s ({case})")
        plots.branches(items, projection="x1_max", path=d.figure(
            "branches_x1max.png", "Periodic-orbit branches: max x1 (separates mirror pairs)"),
            title=f"Periodic-orbit branches, max x1 ({case})")
        plots.floquet(np.concatenate([ob.multipliers for ob in items]),
                      W=np.concatenate([ob.W for ob in items]), path=d.figure(
                          "branches_floquet.png", "Floquet multipliers along the branches"),
                      title=f"Floquet multipliers along the branches ({case})")
    return results, details


def _backbone(args, d, p, laws, s):
    from ..nonsmooth import plots
    from ..nonsmooth.branches import orbit_backbone
    from ..nonsmooth.system import TwoMassFreePlay

    items, results = [], {}
    for law in laws:
        for mode in (1, 2):
            name = f"backbone_{law}_mode{mode}"
            bb = d.compute(name, lambda law=law, mode=mode: orbit_backbone(
                TwoMassFreePlay(p, law), mode, (0.005, s["A_max"])))
            items.append(bb)
            results[f"points_{name}"] = (len(bb.A), None)
            d.say(f"{name}: {len(bb.A)} points, frequency {bb.frequency.min():.5g} to "
                  f"{bb.frequency.max():.5g} rad/s")
    if d.figures_on:
        plots.orbit_backbones(items, path=d.figure("backbones.png", "Backbones of the "
                                                   "conservative system (modes 1 and 2)"),
                              title=f"Backbones, conservative system (a = {p.a:g} m, "
                                    f"kp = {p.kp:g} N/m)")
    return results, None


def _radius(args, d, p, laws, s):
    from ..nonsmooth import plots
    from ..nonsmooth.laws import SigmoidFreePlay, radius_of_influence, spurious_force_peak

    law = SigmoidFreePlay(p.kp, p.a, p.delta)
    R, E = radius_of_influence(law)
    F, depth = spurious_force_peak(law)
    results = {"radius_of_influence": (R, "m"), "radius_over_half_gap": (R / p.a, "1"),
               "E_inf": (E, "m^2"), "spurious_force_peak": (F, "N"),
               "spurious_force_depth": (depth, "m"),
               "spurious_force_over_linear_force": (F / (p.k * p.a), "1")}
    if d.figures_on:
        plots.force_law(law, path=d.figure("force_law.png", "Exact and sigmoid free-play laws "
                                           "with the radius of influence"))
        plots.vector_field_error_map(p, law, path=d.figure(
            "vector_field_error.png", "Error of the smoothed vector field near the gap"))
    d.say(", ".join(f"{k} = {v:.6g} {u}" for k, (v, u) in results.items()))
    return results, None
