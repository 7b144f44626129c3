"""``fesub pad-on-plate``: an elastic hexahedral pad pressed onto a plate and dragged across it (3D).

The model is :mod:`fesub.models.pad_on_plate` (a solid pad of 8-node hexahedra in its free modes,
a rigid plate of quad4 faces, one node-to-surface interface of the pad's bottom nodes with
Coulomb friction on the exact cone). The run is one part of the output folder (``run``, a
:class:`~fesub.contact.ContactRunResult`, written as it finishes and reused on a rerun): the pad
is pressed (load ramp, hold), then its top is dragged along x; the contact goes through stick,
partial slip and gross sliding. Written from it: the deformed surfaces of the pad and the plate
as a ParaView time series (``surfaces.pvd`` and ``surfaces_vtu/``: contact pressure, forces, slip
velocity, gap and state at every output sample); with figures, the pressure and state maps over
the contact face at four instants, the drag force against the drag with mu N, the energy
balance, and (with pyvista, ``pip install 'fesub[viz]'``) an animation ``contact.gif``.
"""

from __future__ import annotations

from .common import add_common, integer, number

STUDY = "pad-on-plate"
RUN = "run"

__all__ = ["add_arguments", "run"]


def add_arguments(p) -> None:
    g = p.add_argument_group("contact and loading")
    g.add_argument("--mu", type=number(ge=0), default=0.3, metavar="MU", help="friction coefficient [-]")
    g.add_argument("--load", type=number(gt=0, unit="N"), default=100.0, metavar="N",
                   help="normal force pressing the pad [N]")
    g.add_argument("--velocity", type=number(gt=0, unit="m/s"), default=1e-3, metavar="V",
                   help="drag velocity of the pad's top [m/s]")
    g.add_argument("--drag-time", type=number(gt=0, unit="s"), default=1.5e-3, metavar="S",
                   help="duration of the dragging after the preload [s]")
    g.add_argument("--t-load", type=number(gt=0, unit="s"), default=0.3e-3, metavar="S",
                   help="duration of the normal load ramp [s]")
    g.add_argument("--t-settle", type=number(ge=0, unit="s"), default=0.3e-3, metavar="S",
                   help="hold of the full load before dragging [s]")
    g = p.add_argument_group("model, time stepping and output")
    g.add_argument("--nx", type=integer(ge=1, le=60), default=8, metavar="N",
                   help="hexahedra along x and along y of the 20 x 20 mm pad [-] ((N + 1)^2 contact nodes)")
    g.add_argument("--nz", type=integer(ge=1, le=20), default=2, metavar="N", help="hexahedra through the pad [-]")
    g.add_argument("--time-step", type=number(gt=0, unit="s"), default=None, metavar="H",
                   help="time step [s] (default: 0.9 x the central-difference stability limit)")
    g.add_argument("--fs-out", type=number(gt=0, unit="Hz"), default=2e4, metavar="HZ",
                   help="output sampling rate [Hz] (also the rate of the ParaView series and the animation)")
    g.add_argument("--gif-scale", type=number(ge=0), default=1000.0, metavar="S",
                   help="displacement magnification of the animation [-]")
    add_common(p, STUDY)


def run(args) -> int:
    """Run the study (``fesub pad-on-plate``); returns the exit status."""
    import time

    from ..contact import simulate_multibody
    from ..errors import ParameterError
    from ..models import pad_on_plate as pop
    from .common import StudyDir

    t_start = time.perf_counter()
    model = pop.build(mu=args.mu, load=args.load, velocity=args.velocity, t_load=args.t_load,
                      t_settle=args.t_settle, nx=args.nx, ny=args.nx, nz=args.nz)
    hc = model.model.critical_step()
    if args.time_step is not None and args.time_step > hc:
        raise ParameterError(f"--time-step {args.time_step:g} s is above the central-difference stability "
                             f"limit {hc:.4g} s of the model")
    params = {k: getattr(args, k) for k in ("mu", "load", "velocity", "drag_time", "t_load", "t_settle", "nx",
                                             "nz", "time_step", "fs_out")}
    d = StudyDir(args.out, STUDY, params, overwrite=args.overwrite, figures=not args.no_figures, quiet=args.quiet)
    p = model.params
    duration = p.t_drag + args.drag_time
    size = model.summary()
    d.say(f"{STUDY}: {size['slave_nodes']} contact nodes, {size['modal_coordinates']} modal coordinates, "
          f"{duration * 1e3:g} ms in steps of {args.time_step or 0.9 * hc:.3g} s")

    def sim():
        return simulate_multibody(model.model, duration=duration, h=args.time_step, fs_out=args.fs_out,
                                  progress=not args.quiet)

    res = d.compute(RUN, sim)
    ph = pop.phases(res, model)
    notes = []
    series = _series(d, model, res)
    if d.figures_on:
        _figures(d, model, res, ph, args)
        gif = _animation(d, model, res, args, notes)
    else:
        gif = None
    record = _summary(args, model, res, ph, series, gif, notes, t_start)
    path = d.finish(record)
    d.say(f"fesub {STUDY}: wrote {path}, report.html and {series.name}; wall time "
          f"{time.perf_counter() - t_start:.1f} s")
    return 0


def _series(d, model, res):
    """The ParaView series of the deformed surfaces (rewritten from the run on every call)."""
    from ..contact.engine.surface_series import write_contact_series
    from .common import raise_pending_interrupt

    raise_pending_interrupt()
    return write_contact_series(res, model.surfaces, d.path / "surfaces.pvd")


def _animation(d, model, res, args, notes):
    """contact.gif when pyvista is installed (a note saying how to get it otherwise)."""
    from ..contact.engine.surface_series import animate_contact
    from .common import raise_pending_interrupt

    raise_pending_interrupt()
    path = d.figure("contact.gif", f"The pad's surface (displacements x {args.gif_scale:g}) and the plate "
                                   f"(wireframe) seen from below, coloured by node state, one picture per "
                                   f"output sample")
    try:
        animate_contact(res, model.surfaces, path, scale=args.gif_scale, styles={"plate": "wireframe"})
    except ImportError as exc:
        notes.append(f"no animation: {exc}")
        return None
    return path


def _instants(model, res, ph):
    p = model.params
    out = [(p.t_drag, "end of the preload")]
    first, gross = ph["first_slip_time_s"], ph["gross_sliding_time_s"]
    if first is not None:
        out.append((0.5 * (first + (gross or res.t[-1])), "partial slip"))
    if gross is not None:
        out.append((gross, "onset of gross sliding"))
    out.append((res.t[-1], "end"))
    return out


def _figures(d, model, res, ph, args) -> None:
    import numpy as np

    from ..contact.engine import plots as pm

    p = model.params
    label = f"mu = {p.mu:g}, N = {p.load:g} N, dragged at {p.velocity * 1e3:g} mm/s"
    cols = np.flatnonzero(res.node_interface == 0)
    pad = model.surfaces[0]
    xy = model.mesh.points[res.node_id[cols], :2]
    areas = pad.contact_areas(model.slave_nodes)[np.searchsorted(pad.nodes, res.node_id[cols])]
    pm.plot_interface_maps(res, xy, areas, _instants(model, res, ph),
                           d.figure("interface.png", f"Contact pressure (top) and node states with the slip "
                                                     f"directions (bottom) over the pad's bottom face, {label}"),
                           title=f"contact over the interface, {label}", columns=cols)
    F = res.contact_forces()
    u = model.drag_displacement(res.t)
    keep = res.t >= p.t_drag
    cone = np.nansum(np.hypot(res.nodes["lambda_t1"], res.nodes["lambda_t2"]), axis=1)
    pm.plot_friction_curve([(u[keep], -F["x"][keep], "drag force (x of the contact forces on the plate)"),
                            (u[keep], cone[keep], "sum of |friction force| of the nodes")],
                           d.figure("drag_force.png", f"Drag force and the sum of the nodes' friction force "
                                                      f"magnitudes against the prescribed drag of the pad's top, "
                                                      f"with mu N, {label}"),
                           title=f"drag force against drag, {label}", limits=[(p.mu * p.load, f"mu N = "
                                                                                               f"{p.mu * p.load:g} N")],
                           ylabel="force [N]")
    pm.plot_energy_balance(res, d.figure("energy.png", f"Energy accounts and balance residual, {label}"),
                           title=f"energy balance, {label}")


def _summary(args, model, res, ph, series, gif, notes, t_start) -> dict:
    import time

    from ..io import summary_record

    p = model.params
    results = {
        "normal_force_ratio_preload": (ph["normal_force_ratio_preload"], "1"),
        "stick_fraction_preload": (ph["stick_fraction_preload"], "1"),
        "first_slip_drag": (ph["first_slip_drag_m"], "m"),
        "gross_sliding_drag": (ph["gross_sliding_drag_m"], "m"),
        "gross_sliding_drag_force": (ph["gross_sliding_drag_force_N"], "N"),
        "drag_force_ratio_gross_sliding": (ph["drag_force_ratio_gross_sliding"], "1"),
        "drag_force_ratio_end": (ph["drag_force_ratio_end"], "1"),
        "friction_cone_ratio_sliding_min": (ph["friction_cone_ratio_sliding_min"], "1"),
        "friction_cone_ratio_sliding_max": (ph["friction_cone_ratio_sliding_max"], "1"),
        "sliding_fraction_max": (ph["sliding_fraction_max"], "1"),
        "open_nodes_end": (ph["open_nodes_end"], None),
        "energy_residual_ratio": (ph["energy_residual_ratio"], "1"),
        "friction_dissipation": (ph["friction_dissipation_J"], "J"),
        "status": (res.status, None),
        "steps": (res.steps, None),
        "run_wall_time": (res.wall_time, "s"),
        "wall_time": (time.perf_counter() - t_start, "s"),
    }
    if ph["gross_sliding_time_s"] is None:
        notes.append(f"no sample with every closed node slipping within the drag time ({args.drag_time:g} s; at most "
                     f"{100 * ph['sliding_fraction_max']:.0f} % of the closed nodes slipped at once); over the last "
                     f"10 % of the run the drag force is {ph['drag_force_ratio_end']:.3f} mu N")
    details = {"model": model.summary(), "parameters": p.to_dict(), "phases": ph,
               "files": {"series": series.name, "series_folder": series.stem + "_vtu",
                         "animation": gif.name if gif is not None else None},
               "time_step_s": res.h, "backend": res.backend, "loop": res.info.get("loop"),
               "state_changes": int(res.state_changes.sum())}
    parameters = {"mu": (p.mu, "1"), "load": (p.load, "N"), "velocity": (p.velocity, "m/s"),
                  "t_load": (p.t_load, "s"), "t_settle": (p.t_settle, "s"), "drag_time": (args.drag_time, "s"),
                  "pad_size": ([p.pad_length, p.pad_width, p.pad_height], "m"),
                  "elements": ([p.nx, p.ny, p.nz], None), "slave_nodes": (int(model.slave_nodes.size), None),
                  "time_step": (res.h, "s"), "fs_out": (args.fs_out, "Hz")}
    return summary_record(STUDY, parameters, results, details=details, notes=notes)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit("run it as: fesub pad-on-plate")
