"""``fesub pad-on-beam``: an elastic pad pressed onto a clamped beam and dragged along it.

The model is :mod:`fesub.models.pad_on_beam` (plane-stress FE pad and beam, Craig-Bampton
reductions, one contact interface of the pad's bottom nodes on the beam's top edge, Coulomb
friction). Each friction coefficient is one part of the output folder (``run_mu<MU>``, a
:class:`~fesub.contact.ContactRunResult`, written as it finishes and reused on a rerun): the pad
is pressed (load ramp, hold), then dragged; the contact goes through stick, partial slip from an
edge and gross sliding. Figures per case: the contact-state map, the force distributions at four
instants, the energy balance, the friction and normal forces against time; for all cases:
friction force against drag displacement with mu N.
"""

from __future__ import annotations

from .common import add_common, integer, number

STUDY = "pad-on-beam"

__all__ = ["add_arguments", "run", "case_name"]


def add_arguments(p) -> None:
    g = p.add_argument_group("cases and loading")
    g.add_argument("--mu", type=number(ge=0), nargs="+", default=[0.1, 0.3], metavar="MU",
                   help="friction coefficients [-], one run each")
    g.add_argument("--load", type=number(gt=0, unit="N"), default=100.0, metavar="N",
                   help="normal force pressing the pad [N]")
    g.add_argument("--drive", choices=("velocity", "force"), default="velocity",
                   help="drag by a prescribed velocity of the pad's top, or by a tangential force rising at "
                        "--force-rate [-]")
    g.add_argument("--velocity", type=number(gt=0, unit="m/s"), default=1e-3, metavar="V",
                   help="drag velocity of the pad's top [m/s]")
    g.add_argument("--force-rate", type=number(gt=0, unit="N/s"), default=6e4, metavar="R",
                   help="rate of the tangential force with --drive force [N/s]")
    g.add_argument("--drag-time", type=number(gt=0, unit="s"), default=2e-3, metavar="S",
                   help="duration of the dragging after the preload [s]")
    g.add_argument("--t-load", type=number(gt=0, unit="s"), default=0.8e-3, metavar="S",
                   help="duration of the normal load ramp [s]")
    g.add_argument("--t-settle", type=number(ge=0, unit="s"), default=0.6e-3, metavar="S",
                   help="hold of the full load before dragging [s]")
    g = p.add_argument_group("model and time stepping")
    g.add_argument("--pad", choices=("craig-bampton", "full"), default="craig-bampton",
                   help="pad reduced by Craig-Bampton (bottom and top edges kept) or kept whole [-]")
    g.add_argument("--clamp", choices=("both", "left"), default="both", help="clamped ends of the beam [-]")
    g.add_argument("--pad-nx", type=integer(ge=2, le=400), default=20, metavar="N",
                   help="elements along the pad [-] (N + 1 slave nodes)")
    g.add_argument("--time-step", type=number(gt=0, unit="s"), default=None, metavar="H",
                   help="time step [s] (default: 0.9 x the central-difference stability limit)")
    g.add_argument("--fs-out", type=number(gt=0, unit="Hz"), default=2e5, metavar="HZ",
                   help="output sampling rate [Hz]")
    add_common(p, STUDY)


def case_name(mu: float) -> str:
    """Part name of the run at friction coefficient mu, e.g. ``run_mu0.3``."""
    return f"run_mu{mu:g}"


def _params(args, mu):
    from ..models.pad_on_beam import PadOnBeamParams

    return PadOnBeamParams(mu=float(mu), load=args.load, drive=args.drive, velocity=args.velocity,
                           force_rate=args.force_rate, t_load=args.t_load, t_settle=args.t_settle,
                           pad_reduction=args.pad, beam_clamp=args.clamp, pad_nx=args.pad_nx)


def run(args) -> int:
    """Run the study (``fesub pad-on-beam``); returns the exit status."""
    import time

    from ..contact import simulate_multibody
    from ..models import pad_on_beam as pob
    from .common import StudyDir

    t_start = time.perf_counter()
    from ..errors import ParameterError

    mus = list(dict.fromkeys(float(m) for m in args.mu))
    # every model parameter and the time step checked before the output folder is made
    models = {m: pob.PadOnBeam(_params(args, m)) for m in mus}
    for model in models.values():
        hc = model.model.critical_step()
        if args.time_step is not None and args.time_step > hc:
            raise ParameterError(f"--time-step {args.time_step:g} s is above the central-difference stability "
                                 f"limit {hc:.4g} s of the model")
    params = {k: getattr(args, k) for k in ("load", "drive", "velocity", "force_rate", "drag_time", "t_load",
                                             "t_settle", "pad", "clamp", "pad_nx", "time_step", "fs_out")}
    d = StudyDir(args.out, STUDY, params, overwrite=args.overwrite, figures=not args.no_figures, quiet=args.quiet)
    cases = {}
    for m, model in models.items():
        p = model.params
        duration = p.t_drag + args.drag_time
        d.say(f"{case_name(m)}: {model.summary()['modal_coordinates']} modal coordinates, "
              f"{model.slave_nodes.size} slave nodes, {duration * 1e3:g} ms")

        def sim(model=model, duration=duration):
            return simulate_multibody(model.model, duration=duration, h=args.time_step, fs_out=args.fs_out,
                                      progress=not args.quiet)

        res = d.compute(case_name(m), sim)
        cases[m] = (model, res, pob.phases(res, model))
        if d.figures_on:
            _case_figures(d, m, model, res, cases[m][2])
    if d.figures_on:
        _friction_figure(d, cases, args)
    record = _summary(args, cases, t_start)
    path = d.finish(record)
    d.say(f"fesub {STUDY}: wrote {path} and report.html; wall time {time.perf_counter() - t_start:.1f} s")
    return 0


def _label(p) -> str:
    drive = (f"dragged at {p.velocity * 1e3:g} mm/s" if p.drive == "velocity"
             else f"tangential force at {p.force_rate:g} N/s")
    return f"mu = {p.mu:g}, N = {p.load:g} N, {drive}"


def _case_figures(d, m, model, res, ph) -> None:
    from ..contact.engine import plots as pm

    p, name = model.params, case_name(m)
    x = model.slave_x
    marks = [(p.t_load, "full load"), (p.t_drag, "drag starts")]
    if ph["gross_sliding_time_s"] is not None:
        marks.append((ph["gross_sliding_time_s"], "gross sliding"))
    pm.plot_state_map(res, x, d.figure(f"states_{name}.png", f"Contact state of every pad node against time, "
                                                            f"{_label(p)}"),
                      title=f"contact states, {_label(p)}", marks=marks)
    instants = [(p.t_drag, "end of preload")]
    if ph["first_slip_time_s"] is not None:
        g = ph["gross_sliding_time_s"] or res.t[-1]
        instants.append((0.5 * (ph["first_slip_time_s"] + g), "partial slip"))
    if ph["gross_sliding_time_s"] is not None:
        instants.append((ph["gross_sliding_time_s"], "onset of gross sliding"))
    instants.append((res.t[-1], "end"))
    pm.plot_force_distributions(res, x, instants, d.figure(f"forces_{name}.png", f"Normal and tangential node "
                                                                                f"forces at four instants, {_label(p)}"),
                                title=f"contact forces along the pad, {_label(p)}", mu=p.mu)
    pm.plot_energy_balance(res, d.figure(f"energy_{name}.png", f"Energy accounts and balance residual, {_label(p)}"),
                           title=f"energy balance, {_label(p)}")
    pm.plot_contact_forces(res, d.figure(f"contact_forces_{name}.png", f"Friction force (sum of the tangential "
                                                                       f"multipliers) and normal force on the pad "
                                                                       f"against time, {_label(p)}"),
                           title=f"friction and normal force, {_label(p)}", mu=p.mu)


def _friction_figure(d, cases, args) -> None:
    from ..contact.engine import plots as pm

    curves, limits = [], []
    for m, (model, res, _) in cases.items():
        p = model.params
        u = model.drag_of(res)
        keep = res.t >= p.t_drag
        curves.append((u[keep], -res.nodes["lambda_t"][keep].sum(axis=1), f"mu = {m:g}"))
        limits.append((m * p.load, f"mu N = {m * p.load:g} N"))
    what = "prescribed x of the pad's top" if args.drive == "velocity" else "x of the pad's top centre since the drag began"
    pm.plot_friction_curve(curves, d.figure("friction.png", f"Total friction force against the drag ({what}), "
                                                            f"with the Coulomb limit mu N"),
                           title=f"friction force against drag, N = {args.load:g} N, drive: {args.drive}",
                           limits=limits)


def _summary(args, cases, t_start) -> dict:
    import time

    from ..io import summary_record

    results, details, notes = {}, {"cases": {}}, []
    for m, (model, res, ph) in cases.items():
        tag = f"mu{m:g}"
        results[f"normal_force_ratio_preload_{tag}"] = (ph["normal_force_ratio_preload"], "1")
        results[f"first_slip_drag_{tag}"] = (ph["first_slip_drag_m"], "m")
        results[f"gross_sliding_drag_{tag}"] = (ph["gross_sliding_drag_m"], "m")
        results[f"gross_sliding_friction_{tag}"] = (ph["gross_sliding_friction_N"], "N")
        results[f"friction_ratio_gross_sliding_{tag}"] = (ph["friction_ratio_gross_sliding"], "1")
        results[f"friction_ratio_end_{tag}"] = (ph["friction_ratio_end_mean"], "1")
        results[f"sliding_fraction_max_{tag}"] = (ph["sliding_fraction_max"], "1")
        results[f"energy_residual_ratio_{tag}"] = (ph["energy_residual_ratio"], "1")
        results[f"status_{tag}"] = (res.status, None)
        details["cases"][tag] = {**ph, "status": res.status, "steps": res.steps, "time_step_s": res.h,
                                 "wall_time_s": res.wall_time, "backend": res.backend,
                                 "state_changes": int(res.state_changes.sum()),
                                 "max_kernel_sweeps": res.info.get("max_sweeps")}
        if ph["gross_sliding_time_s"] is None and ph["friction_ratio_end_mean"] is not None:
            notes.append(f"mu = {m:g}: never every node sliding at once within the drag time ({args.drag_time:g} s;"
                         f" at most {100 * ph['sliding_fraction_max']:.0f} %); over the last 20 % of the drag "
                         f"T / (mu N) = {ph['friction_ratio_end_min']:.3f} to {ph['friction_ratio_end_max']:.3f}, "
                         f"N / load = {ph['normal_force_ratio_end_min']:.3f} to {ph['normal_force_ratio_end_max']:.3f}, "
                         f"oscillating at {ph['normal_force_oscillation_end_hz'] or float('nan'):.4g} Hz: the sliding is "
                         f"not steady")
        if (ph["restick_events"] or 0) > 0:
            notes.append(f"mu = {m:g}: nodes stuck again {ph['restick_events']} times after gross sliding began "
                         f"(local stick-slip)")
    model = next(iter(cases.values()))[0]
    details["model"] = model.summary()
    details["parameters"] = {k: v for k, v in model.params.to_dict().items() if k != "mu"}
    results["wall_time"] = (time.perf_counter() - t_start, "s")
    p = model.params
    parameters = {"mu": (list(cases), "1"), "load": (args.load, "N"), "drive": (args.drive, None),
                  "velocity": (args.velocity if args.drive == "velocity" else None, "m/s"),
                  "force_rate": (args.force_rate if args.drive == "force" else None, "N/s"),
                  "t_load": (args.t_load, "s"), "t_settle": (args.t_settle, "s"), "drag_time": (args.drag_time, "s"),
                  "pad_reduction": (args.pad, None), "beam_clamp": (args.clamp, None),
                  "slave_nodes": (int(model.slave_nodes.size), None),
                  "time_step": (next(iter(cases.values()))[1].h, "s"), "fs_out": (args.fs_out, "Hz"),
                  "pad_size": ([p.pad_length, p.pad_height], "m"), "beam_size": ([p.beam_length, p.beam_height], "m")}
    return summary_record(STUDY, parameters, results, details=details, notes=notes)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit("run it as: fesub pad-on-beam")
