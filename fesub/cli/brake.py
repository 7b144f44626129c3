"""``fesub brake``: complex eigenvalue analysis of a disc brake, confirmed by a transient (3D).

The model is :mod:`fesub.models.brake` (a steel disc clamped at its hub and two pads pressed on its
faces and driven around it, each part a Craig-Bampton substructure of the bundled Gmsh model,
reduced in parallel with ``-j`` or on a Dask cluster with ``--scheduler``, and cached on disk by
content). The study:

* ``mu_sweep`` (a :class:`~fesub.contact.analyses.mode_coupling.MuSweep`): the preloaded steady
  sliding state linearised at each friction coefficient of a grid, the eigenvalues in the band
  ``--band`` (certified complete at each grid point) and the critical coefficient of every pair
  in it that turns unstable;
* at the operating ``--mu``: every eigenvalue of the linearised system, the unstable ones, the
  leading one (largest real part) and the leading ones of the band; at the critical coefficient
  of each of the first two band pairs that turn unstable, that pair's mode (the squeal
  candidates); their mode shapes over the three parts, with the disc's nodal diameters
  (:func:`fesub.models.brake.nodal_diameters`), as a VTU file (``modes.vtu``) and, with
  pyvista, rendered pictures;
* ``transient_reference`` and ``transient`` (:class:`~fesub.contact.ContactRunResult`): the
  engine's march from the steady state (the disc moving with its quasi-steady deformation),
  unperturbed and perturbed along the leading mode (1e-12 m); the growth rate and frequency of
  their difference fitted (matrix pencil, :func:`fesub.models.brake.fit_growth`) and its
  spectrogram, against the leading eigenvalue.

Each part is saved through :mod:`fesub.io` as it finishes and reused on a rerun; ``report.html``
and ``summary.json`` as every study.
"""

from __future__ import annotations

from .common import add_common, integer, number

STUDY = "brake"
SWEEP, RUN, REF = "mu_sweep", "transient", "transient_reference"
PARTS = ("disc", "pad_top", "pad_bottom")

__all__ = ["add_arguments", "run"]


def add_arguments(p) -> None:
    g = p.add_argument_group("contact and loading")
    g.add_argument("--mu", type=number(ge=0), default=0.3, metavar="MU",
                   help="friction coefficient of the eigenvalues' details and the transient [-]")
    g.add_argument("--load", type=number(gt=0, unit="N"), default=2000.0, metavar="N",
                   help="normal force pressing each pad [N]")
    g.add_argument("--speed", type=number(gt=0, unit="m/s"), default=1.0, metavar="V",
                   help="sliding speed at the pads' mean radius (0.15 m on the bundled mesh) [m/s]")
    g = p.add_argument_group("complex eigenvalue analysis")
    g.add_argument("--mu-max", type=number(gt=0), default=0.8, metavar="MU", help="largest mu of the sweep [-]")
    g.add_argument("--mu-points", type=integer(ge=2, le=200), default=9, metavar="N",
                   help="friction coefficients of the sweep's grid (0 to --mu-max) [-]")
    g.add_argument("--band", type=number(gt=0, unit="Hz"), nargs=2, default=[1000.0, 10000.0],
                   metavar=("F_LO", "F_HI"), help="frequency band of the sweep's eigenvalues [Hz]")
    g.add_argument("--max-rate", type=number(gt=0, unit="1/s"), default=500.0, metavar="R",
                   help="largest |real part| of the band's eigenvalues [1/s]")
    g.add_argument("--mu-tol", type=number(gt=0), default=1e-3, metavar="TOL",
                   help="bracket width of each critical mu [-]")
    g = p.add_argument_group("model and transient")
    g.add_argument("--disc-modes", type=integer(ge=1, le=400), default=30, metavar="N",
                   help="fixed-interface modes of the disc's reduction [-]")
    g.add_argument("--pad-modes", type=integer(ge=1, le=100), default=12, metavar="N",
                   help="fixed-interface modes of each pad's reduction [-]")
    g.add_argument("--pad-material", type=number(gt=0), nargs=3, default=None, metavar=("E", "NU", "RHO"),
                   help="the pads' Young's modulus [Pa], Poisson's ratio [-] and density [kg/m^3] (default: "
                        "the disc's steel, 200e9 0.3 7800; a friction material is about 5e9 0.25 2500)")
    g.add_argument("--growth-periods", type=number(gt=0), default=5.0, metavar="K",
                   help="length of the transient in time constants 1/Re of the leading eigenvalue [-]")
    g.add_argument("--max-duration", type=number(gt=0, unit="s"), default=1e-3, metavar="S",
                   help="longest transient [s]")
    g.add_argument("--step-fraction", type=number(gt=0, le=1), default=0.5, metavar="F",
                   help="time step as a fraction of the central-difference stability limit [-]")
    g.add_argument("--mesh", default=None, metavar="FILE",
                   help="Gmsh file with the bundled brake.msh's physical groups (volumes disc, pad_top, "
                        "pad_bottom; surfaces hub, disc_top_contact, disc_bottom_contact, pad_*_contact, "
                        "pad_*_back; the disc's axis z) (default: the bundled brake.msh)")
    g.add_argument("--cache", metavar="DIR", default=None,
                   help="cache folder of the parts' reductions (default $FESUB_CACHE_DIR or ~/.cache/fesub/reduced)")
    g.add_argument("--no-cache", action="store_true", help="reduce the parts again, store nothing")
    g.add_argument("--scheduler", metavar="ADDRESS",
                   help="Dask scheduler address, e.g. tcp://host:8786, for the parts' reduction (instead of -j)")
    add_common(p, STUDY, jobs=True, jobs_default=None)


def run(args) -> int:
    """Run the study (``fesub brake``); returns the exit status."""
    import time

    import numpy as np

    from ..contact.analyses.mode_coupling import mu_sweep
    from ..errors import ParameterError
    from ..models import brake as brk
    from .common import StudyDir, raise_pending_interrupt

    t_start = time.perf_counter()
    f_lo, f_hi = args.band
    if not f_lo < f_hi:
        raise ParameterError(f"--band F_LO F_HI needs F_LO < F_HI, got {f_lo:g} {f_hi:g}")
    params = {k: getattr(args, k) for k in ("mu", "load", "speed", "mu_max", "mu_points", "band", "max_rate",
                                             "mu_tol", "disc_modes", "pad_modes", "growth_periods",
                                             "max_duration", "step_fraction", "mesh", "pad_material")}
    d = StudyDir(args.out, STUDY, params, overwrite=args.overwrite, figures=not args.no_figures, quiet=args.quiet)
    client = None
    if args.scheduler:
        from ..sweep import connect_scheduler

        client = connect_scheduler(args.scheduler, 5.0)
    try:
        pad = dict(zip(("pad_E", "pad_nu", "pad_rho"), args.pad_material)) if args.pad_material else {}
        model = brk.build(load=args.load, speed=args.speed, mu=args.mu, disc_modes=args.disc_modes,
                          pad_modes=args.pad_modes, mesh=args.mesh, jobs=args.jobs, client=client, **pad,
                          cache=False if args.no_cache else args.cache)
    finally:
        if client is not None:
            client.close()
    size = model.summary()
    d.say(f"{STUDY}: {size['contact_nodes']} contact nodes, {size['modal_coordinates']} modal coordinates; parts "
          f"reduced {model.reduction['reduced'] or 'none'}, from the cache {model.reduction['cached'] or 'none'} "
          f"({model.reduction['wall_time']:.1f} s)")
    m = model.model
    mus = np.linspace(0.0, args.mu_max, args.mu_points)
    band = {"f_lo": f_lo, "f_hi": f_hi, "max_rate": args.max_rate}
    sweep = d.compute(SWEEP, lambda: mu_sweep(m, mus, band=band, tol=args.mu_tol, progress=not args.quiet,
                                              sliding_velocity=model.sliding_velocity()))
    raise_pending_interrupt()
    # the operating point: every eigenvalue, the leading one and its mode
    st, lam, modes, k_lead = brk.leading_eigenvalue(model, args.mu)
    z = complex(lam[k_lead])
    upper = lam.imag > 0
    in_band = upper & (lam.imag >= 2 * np.pi * f_lo) & (lam.imag <= 2 * np.pi * f_hi)
    band_order = np.flatnonzero(in_band)[np.argsort(-lam.real[in_band])][:4]
    d.say(f"{STUDY}: at mu = {args.mu:g}, {int(np.sum(upper & (lam.real > 1e-7 * np.abs(lam))))} unstable pairs; "
          f"leading {z.imag / (2 * np.pi):.1f} Hz, {z.real:.4g} 1/s")
    # the shapes shown: the leading mode, each band pair at the coefficient where it turns
    # unstable (the squeal candidates), the band's least stable modes at --mu
    shapes = [("leading", args.mu, lam[k_lead], modes[:, k_lead])]
    shapes += _onset_shapes(model, sweep)
    shapes += [("band", args.mu, lam[k], modes[:, k]) for k in band_order if k != k_lead]
    shapes = [s + _diameters(model, s[3]) for s in shapes]
    vtu = _modes_vtu(d, model, shapes)
    # the transients from the steady state moving with the pads, unperturbed and perturbed along
    # the leading mode: the difference is the perturbation's growth
    vel = brk.steady_velocity(model, args.mu)
    rate = max(z.real, 1.0 / args.max_duration)
    duration = min(args.growth_periods / rate, args.max_duration)
    h = args.step_fraction * m.critical_step()

    def sim(amplitude):
        from ..contact import simulate_multibody

        start = brk.perturbed_start(model, st, modes[:, k_lead], vel, amplitude)
        return lambda: simulate_multibody(m, duration=duration, h=h, fs_out=None, progress=not args.quiet,
                                          initial=start, accounts=False)

    ref = d.compute(REF, sim(0.0))
    res = d.compute(RUN, sim(1e-12))
    fit = brk.fit_growth(ref, res, st, z)
    if fit["pole"] is not None:
        d.say(f"{STUDY}: the perturbation grows at {fit['pole'].real:.4g} 1/s, {fit['pole'].imag / (2 * np.pi):.1f} Hz "
              f"({100 * fit['rate_error']:+.2f} %, {100 * fit['frequency_error']:+.3f} % from the leading eigenvalue)")
    notes = []
    if d.figures_on:
        _spectrum_figure(d, lam, args)
        _figures(d, sweep, ref, res, z, fit, args)
        _pictures(d, model, shapes, notes)
    record = _summary(args, model, sweep, lam, z, fit, res, vtu, duration, h, notes, t_start, shapes)
    for note in record.get("notes", []):
        d.say(f"{STUDY}: note: {note}")
    path = d.finish(record)
    d.say(f"fesub {STUDY}: wrote {path} and report.html; wall time {time.perf_counter() - t_start:.1f} s")
    return 0


def _merged(model):
    """One solid mesh of the three parts (their nodes one after the other) and each part's offset."""
    import numpy as np

    from ..fe import SolidMesh

    pts, cells, offs, n = [], {}, {}, 0
    for name in PARTS:
        mesh = model.meshes[name]
        offs[name] = n
        pts.append(mesh.points)
        for t, c in mesh.cells.items():
            cells.setdefault(t, []).append(c + n)
        n += mesh.n_points
    return SolidMesh(np.vstack(pts), {t: np.vstack(c) for t, c in cells.items()}, source="brake"), offs


def _field(model, eta):
    """Displacements (n_nodes, 3) (m) of the merged mesh for (complex) modal coordinates eta."""
    import numpy as np

    return np.vstack([model.displacement(name, eta) for name in PARTS])


def _aligned(v):
    """A complex mode turned so that its largest entry is real, its real part kept."""
    import numpy as np

    return np.real(v / (v[np.argmax(np.abs(v))] / np.abs(v).max()))


def _onset_shapes(model, sweep, most: int = 2) -> list:
    """``(kind, mu, eigenvalue, mode)`` of the first ``most`` band pairs that turn unstable in
    the sweep, each from the linearisation at its critical coefficient (the eigenvalue nearest
    the onset's)."""
    import numpy as np

    from ..models import brake as brk
    from .common import raise_pending_interrupt

    out = []
    for o in [o for o in sweep.onsets if o["kind"] == "unstable"][:most]:
        raise_pending_interrupt()
        _, lam, modes, _ = brk.leading_eigenvalue(model, o["mu"])
        target = o["real_1_s"] + 2j * np.pi * o["f_hz"]
        k = int(np.argmin(np.where(lam.imag > 0, np.abs(lam - target), np.inf)))
        out.append(("onset", o["mu"], lam[k], modes[:, k]))
    return out


def _diameters(model, mode) -> tuple:
    """(nodal diameters, their share) of the disc's part of a mode (see
    :func:`fesub.models.brake.nodal_diameters`)."""
    from ..models import brake as brk

    n, share = brk.nodal_diameters(model.meshes["disc"].points, model.displacement("disc", mode))
    return (n, share)


#: least share of the rim's axial motion in one family for its nodal diameters to be named
CLEAR_DIAMETERS = 0.3


def _diameters_text(nd, share) -> str:
    if share < CLEAR_DIAMETERS:
        return f"no clear nodal diameters on the disc (at most {100 * share:.0f} % of its rim's axial motion in one family)"
    return f"the disc's part has {nd} nodal diameters ({100 * share:.0f} % of its rim's axial motion)"


def _describe(kind, mu, z, nd, share) -> str:
    """A shape's coefficient (onsets), eigenvalue and nodal diameters, in a few words."""
    import numpy as np

    where = f"mu {mu:.4g}, " if kind == "onset" else ""
    disc = f"disc {nd} ND ({100 * share:.0f} %)" if share >= CLEAR_DIAMETERS else "disc: no clear ND"
    return f"{where}{z.imag / (2 * np.pi):.1f} Hz, {z.real:+.4g} 1/s, {disc}"


def _modes_vtu(d, model, shapes):
    import numpy as np

    from ..plots.modes import write_modes_vtu
    from .common import raise_pending_interrupt

    raise_pending_interrupt()
    mesh, _ = _merged(model)
    fields = [_field(model, _aligned(v)) for _, _, _, v, _, _ in shapes]
    f = [float(z.imag / (2 * np.pi)) for _, _, z, _, _, _ in shapes]
    names = [f"{kind}_{i + 1} ({_describe(kind, mu, z, nd, share)})" for i, (kind, mu, z, _, nd, share) in enumerate(shapes)]
    path = d.path / "modes.vtu"
    write_modes_vtu(mesh, fields, str(path), frequencies_hz=f, names=names)
    return path


def _spectrum_figure(d, lam, args) -> None:
    """Every eigenvalue at ``--mu`` (upper half-plane): real part against frequency, the unstable
    ones in red, the band of the sweep shaded (the picture a complex eigenvalue analysis is read
    from)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    up = lam[lam.imag > 0]
    bad = up.real > 1e-7 * np.abs(up)
    fig, ax = plt.subplots(figsize=(8, 4.2))
    ax.axvspan(args.band[0] / 1e3, args.band[1] / 1e3, color="0.92", label="band of the sweep")
    ax.axhline(0.0, color="0.4", lw=0.8)
    ax.semilogx(up[~bad].imag / (2e3 * np.pi), up[~bad].real, "o", ms=3, mfc="none", color="C0",
                label=f"stable ({np.count_nonzero(~bad)})")
    ax.semilogx(up[bad].imag / (2e3 * np.pi), up[bad].real, "o", ms=4, color="r",
                label=f"unstable ({np.count_nonzero(bad)})")
    ax.set_xlabel("frequency [kHz]")
    ax.set_ylabel("real part [1/s]")
    ax.set_yscale("symlog", linthresh=1.0)
    ax.grid(True, which="both", alpha=0.3)
    ax.set_title(f"eigenvalues of the linearised sliding state at mu = {args.mu:g}")
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(d.figure("eigenvalues.png", f"Every eigenvalue at mu = {args.mu:g} (positive frequencies): real "
                                            f"part (symmetric log scale) against frequency; unstable in red, the "
                                            f"sweep's band shaded"), dpi=110)
    plt.close(fig)


def _figures(d, sweep, ref, res, z, fit, args) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from ..signal import spectrogram

    tr = sweep.tracks()
    fig, ax = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
    for j in range(tr.shape[1]):
        ax[0].plot(sweep.mus, tr[:, j].imag / (2 * np.pi), "-", lw=1)
        ax[1].plot(sweep.mus, tr[:, j].real, "-", lw=1)
    for o in sweep.onsets:
        if o["kind"] == "unstable":
            ax[0].plot(o["mu"], o["f_hz"], "rv")
            ax[1].axvline(o["mu"], color="r", lw=0.5, ls=":")
    ax[0].set_ylabel("frequency [Hz]")
    ax[1].set_ylabel("real part [1/s]")
    ax[1].set_xlabel("friction coefficient mu [-]")
    ax[0].set_title(f"eigenvalues in {sweep.band[0]:g}-{sweep.band[1]:g} Hz against mu (onsets: red)")
    fig.tight_layout()
    fig.savefig(d.figure("eigenvalues_mu.png", "Eigenvalues of the linearised sliding state in the band against mu: "
                                               "frequency and real part; a pair turns unstable at each red mark"),
                dpi=110)
    plt.close(fig)
    dev = np.nan_to_num(res.nodes["lambda_n"] - ref.nodes["lambda_n"]).sum(axis=1)
    fs = 1.0 / res.h
    n = int(min(1024, max(64, 2 ** np.floor(np.log2(len(dev) / 8)))))
    f, t, S = spectrogram(dev, fs, nperseg=n, noverlap=7 * n // 8)     # a short run: overlapping segments
    fig, ax = plt.subplots(2, 1, figsize=(7, 6))
    ax[0].pcolormesh(t * 1e3, f / 1e3, 10 * np.log10(np.abs(S) + 1e-300), shading="auto")
    ax[0].axhline(z.imag / (2 * np.pi) / 1e3, color="w", ls="--", lw=0.8)
    ax[0].set_ylabel("frequency [kHz]")
    ax[0].set_xlim(0.0, res.t[-1] * 1e3)              # the time axis of the panel below
    ax[0].set_ylim(0, min(fs / 2, 3 * z.imag / (2 * np.pi)) / 1e3)
    ax[0].set_title("perturbation's normal force: spectrogram (dashed: leading eigenvalue)", fontsize=10)
    ax[1].semilogy(res.t * 1e3, np.abs(dev) + 1e-30, lw=0.6, label="|sum of normal forces: perturbed - reference|")
    t0, t1 = fit["window_s"]
    ax[1].axvspan(t0 * 1e3, t1 * 1e3, color="0.9", label="window of the fit")
    env = np.abs(dev).max() * np.exp(z.real * (res.t - res.t[-1]))
    ax[1].semilogy(res.t * 1e3, env, "r--", lw=1, label=f"exp(Re t), Re = {z.real:.4g} 1/s")
    ax[1].set_xlabel("time [ms]")
    ax[1].set_ylabel("[N]")
    ax[1].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(d.figure("transient.png", f"The transient at mu = {args.mu:g} from the perturbed steady state: "
                                          f"spectrogram and growth of the perturbation (perturbed minus reference "
                                          f"run's normal forces) against the leading eigenvalue"), dpi=110)
    plt.close(fig)


def _pictures(d, model, shapes, notes, most: int = 4) -> None:
    import numpy as np

    from ..plots.modes import render_mode
    from .common import raise_pending_interrupt

    mesh, _ = _merged(model)
    what = {"leading": "The leading eigenvalue's mode (largest real part)",
            "onset": "A band pair's mode where it turns unstable",
            "band": "One of the band's least stable modes"}
    for i, (kind, mu, z, v, nd, share) in enumerate(shapes[:most]):
        raise_pending_interrupt()
        path = d.figure(f"mode_{i + 1}.png", f"{what[kind]} at mu = {mu:.4g}: {z.imag / (2 * np.pi):.1f} Hz, real "
                                             f"part {z.real:.4g} 1/s; {_diameters_text(nd, share)}; disc and "
                                             f"pads, phase-aligned real part")
        try:
            render_mode(mesh, _field(model, _aligned(v)), str(path), title=f"{kind}: {_describe(kind, mu, z, nd, share)}")
        except ImportError as exc:
            notes.append(f"no mode pictures: {exc}")
            return


def _summary(args, model, sweep, lam, z, fit, res, vtu, duration, h, notes, t_start, shapes) -> dict:
    import resource
    import time

    import numpy as np

    from ..io import summary_record

    unstable = lam[(lam.imag > 0) & (lam.real > 1e-7 * np.abs(lam))]
    unstable = unstable[np.argsort(-unstable.real)]
    onsets = [o for o in sweep.onsets if o["kind"] == "unstable"]
    crit = min((o["mu"] for o in onsets), default=float("inf"))
    p = fit.get("pole")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024.0
    results = {
        "critical_mu_band": (crit, "1"),
        "band_onsets": ([[o["mu"], o["f_hz"], o["real_1_s"]] for o in onsets], "1, Hz, 1/s"),
        "band_onset_nodal_diameters": ([[s[4], s[5]] for s in shapes if s[0] == "onset"], "-, 1"),
        "unstable_pairs": (int(unstable.size), None),
        "unstable_pairs_leading": ([[u.imag / (2 * np.pi), u.real] for u in unstable[:10]], "Hz, 1/s"),
        "leading_frequency": (z.imag / (2 * np.pi), "Hz"),
        "leading_real_part": (z.real, "1/s"),
        "transient_frequency": (p.imag / (2 * np.pi) if p is not None else None, "Hz"),
        "transient_rate": (p.real if p is not None else None, "1/s"),
        "transient_rate_error": (fit.get("rate_error"), "1"),
        "transient_frequency_error": (fit.get("frequency_error"), "1"),
        "transient_fit_window": (fit["window_s"], "s"),
        "transient_duration": (duration, "s"),
        "time_step": (h, "s"),
        "all_certified": (bool(np.all(sweep.certified)) if sweep.certified is not None else None, None),
        "peak_memory": (peak, "B"),
        "wall_time": (time.perf_counter() - t_start, "s"),
    }
    details = {"model": model.summary(), "parameters": model.params.to_dict(), "reduction": model.reduction,
               "files": {"modes": vtu.name}, "steps": res.steps, "status": res.status}
    parameters = {"mu": (args.mu, "1"), "load": (args.load, "N"), "speed": (args.speed, "m/s"),
                  "mu_grid": ([0.0, args.mu_max, args.mu_points], "1, 1, -"), "band": (list(args.band), "Hz"),
                  "max_rate": (args.max_rate, "1/s"), "disc_modes": (args.disc_modes, None),
                  "pad_modes": (args.pad_modes, None), "mesh": (args.mesh, None),
                  "pad_material": (args.pad_material, "Pa, 1, kg/m^3"),
                  "pads_mean_radius": (model.r_mean, "m")}
    return summary_record(STUDY, parameters, results, details=details, notes=notes)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit("run it as: fesub brake")
