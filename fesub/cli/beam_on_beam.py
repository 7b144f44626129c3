"""``fesub beam-on-beam``: the sliding-contact benchmark study (two beams, frictional contact).

Builds both substructures from the bundled meshes and their Craig-Bampton models, then, each as a
part of the output folder (written as it finishes, reused on a rerun):

* ``loci_mu0.1``, ``loci_mu0.3``: complex eigenvalue loci over the contact positions;
* ``critical_mu``: the critical friction coefficient (bisection over the positions unstable at
  mu = 0.3);
* ``transient_<case>``: the transients of the paper (mu = 0.1 / 0.3, smooth / rough);
* ``tdfrf_mu0.1``: the time-dependent FRF of the stable case;
* ``loci_deformed_mu0.3``: the eigenvalues with the deformed contact rows (linearised about the
  sliding state), where the transients burst and where the undeformed loci are unstable;
* ``burst_table_<case>``: the bursts of the tip acceleration of the mu = 0.3 transients, each with the
  analysis (undeformed, deformed, both or neither) whose unstable eigenvalue predicts it;

and the figures (loci, largest real part, transients, spectrograms, burst spectra, TD-FRF, coupled
mode shapes), ``summary.json`` and ``report.html``.

The transients, the TD-FRF, the burst detection, a share of the deformed analysis and the figures
run on a pool of ``-j/--jobs`` worker processes (default: the cores this process may use) beside
the eigenvalue analyses (the tasks: :mod:`fesub.cli._beam_on_beam_tasks`); ``--jobs 1`` runs
everything in one process, one part after the other, to the same numbers.
"""

from __future__ import annotations

import argparse

from .common import add_common, integer, number

STUDY = "beam-on-beam"
STABLE_MU, UNSTABLE_MU = 0.1, 0.3
#: basis of the eigenvalue analyses: 'all' (every mode of the reduced model, exact: the certified
#: roots of the secular function, fesub.contact.analyses.secular) or N lowest frictionless coupled modes (a
#: Ritz approximation on a dense eig). Measured on this model over the study's 376 positions at
#: mu = 0.3: exact 6.0 s against 233 s for the 120-mode basis (loaded machine), the same unstable
#: positions and critical mu; the largest real part 145.03 against 144.90 1/s.
BASIS_MODES = "all"
FS_OUT = 50_000.0  # Hz, output rate of the transients
#: why the load stays at 0.4 N and not the spec's 10 N (recorded in summary.json, details)
LOAD_REASON = (
    "Fy = 0.4 N on a 10 mm wide plane-stress model, not the spec's 10 N: only Fy/width enters, and "
    "10 N at this Fy/width needs a 0.25 m width, more than the 0.1 m beams are long (a plate, not "
    "plane stress); 10 N on 10 mm deflects the polycarbonate beam about 45 mm, far beyond small "
    "displacements. Not 1 N either: the deformed-state analysis (part loci_deformed_mu0.3, its "
    "rows linearised about the preloaded sliding state) then widens its unstable band near T "
    "(93.375-94.125 mm at least, up to 462 1/s) and the rough mu = 0.3 transient stops for stick "
    "inside it (2.956 s), where the paper reports sliding throughout. At 0.4 N that band is 0.4 mm "
    "wide (+209 1/s): it grows the strongest burst of the run (burst table: predicted by the "
    "deformed analysis only) and the slave keeps sliding.")
TDFRF = {"t0_s": 0.20, "t1_s": 3.13, "dt_s": 5e-3, "f1_hz": 20_000.0, "df_hz": 5.0}  # the paper's grid

__all__ = ["add_arguments", "run", "paper_checks", "case_name", "STABLE_MU", "UNSTABLE_MU"]


def _basis(x: str):
    """argparse type of --basis-modes: an integer >= 1, or 'all'."""
    if x.strip().lower() == "all":
        return "all"
    try:
        return integer(ge=1)(x)
    except argparse.ArgumentTypeError as exc:
        raise argparse.ArgumentTypeError(f"{exc} (or 'all')") from None


_basis.__name__ = "basis"


def add_arguments(p) -> None:
    g = p.add_argument_group("cases")
    g.add_argument("--mu", type=number(ge=0), default=None, metavar="MU",
                   help="friction coefficient [-] of a single transient case "
                        f"(default: the paper's {STABLE_MU:g} and {UNSTABLE_MU:g})")
    g.add_argument("--roughness", choices=("on", "off"), default=None,
                   help="roughness force on C (0.5 %% of Fy, band-limited noise) "
                        "(default: both the smooth and the rough case)")
    g.add_argument("--duration", type=number(gt=0, unit="s"), default=None, metavar="S",
                   help="simulated time per transient [s] (default: until C nears T, about 3.13 s)")
    g.add_argument("--seed", type=integer(ge=0), default=0, help="seed of the roughness noise [-] (default: %(default)s)")
    g.add_argument("--no-transient", action="store_true", help="skip the transient simulations")
    g = p.add_argument_group("model and eigenvalue analysis")
    g.add_argument("--refine", action="store_true", help="150 elements along beam 2 instead of 100")
    g.add_argument("--loci-step", type=number(gt=0, lt=0.01, unit="m"), default=0.25e-3, metavar="M",
                   help="spacing of the contact positions of the eigenvalue loci [m]")
    g.add_argument("--basis-modes", type=_basis, default=BASIS_MODES, metavar="N|all",
                   help="basis of the eigenvalue analyses: 'all' (every mode of the reduced model, exact) "
                        "or the N lowest frictionless coupled modes [-] (a Ritz approximation, slower); "
                        "the summary says up to which frequency the loci are complete")
    add_common(p, STUDY, jobs=True, jobs_default=None)


def case_name(mu: float, rough: bool) -> str:
    """Name of a transient case, e.g. ``mu0.3_rough``."""
    return f"mu{mu:g}_{'rough' if rough else 'smooth'}"


def _cases(mu, roughness):
    mus = [STABLE_MU, UNSTABLE_MU] if mu is None else [mu]
    rough = [False, True] if roughness is None else [roughness == "on"]
    return [(m, r) for m in mus for r in rough]


def run(args) -> int:
    """Run the study (``fesub beam-on-beam``); returns the exit status."""
    import warnings

    from ..contact.analyses.eigen import IncompleteSpectrumWarning

    with warnings.catch_warnings():
        # the study records the completeness of the spectra in its results and notes instead
        warnings.simplefilter("ignore", IncompleteSpectrumWarning)
        return _study(args)


def _study(args) -> int:
    """The study in its order: model, eigenvalue analyses, transients, TD-FRF, mode shapes, summary.

    The independent parts (the transients, the TD-FRF, the figures) run on a pool of ``--jobs``
    worker processes while this process does the eigenvalue analyses; every part is the same
    computation as with one job (then all of it runs here, one part after the other)."""
    import time

    from ..models import beam_on_beam as bb
    from ..parallel import worker_pool
    from . import _beam_on_beam_tasks as tasks
    from .common import StudyDir, run_task

    t_start = time.perf_counter()
    n_basis = None if args.basis_modes == "all" else int(args.basis_modes)
    # what changes the numbers of a part (the case selection only chooses which parts are made)
    params = {"refine": args.refine, "loci_step_m": args.loci_step, "basis_modes": args.basis_modes,
              "duration_s": args.duration, "seed": args.seed}
    d = StudyDir(args.out, STUDY, params, overwrite=args.overwrite, figures=not args.no_figures,
                 quiet=args.quiet)
    progress = not args.quiet

    model = bb.build(refine=args.refine)
    system = bb.contact_system(model)
    d.say(model.cb1.summary())
    d.say(model.cb2.summary())
    ref, p, figs = tasks.SystemRef(model, system), model.params, []
    # no more workers than tasks that can run at once: the transients, the TD-FRF, the mode shapes
    n_cases = 0 if args.no_transient else len(_cases(args.mu, args.roughness))
    jobs = min(args.jobs, n_cases + 2)
    if jobs > 1:
        tasks.preload(d.figures_on)
    with worker_pool(jobs) as pool:
        # progress bars only where the work runs in this process
        cases, dur, pending = _submit_transients(d, args, p, ref, pool, progress and pool == "serial")
        tdfrf = _submit_tdfrf(d, p, ref, pool)
        modes = run_task(pool, tasks.mode_figures, ref, d.path) if d.figures_on else None
        eig = _eigen_part(d, args, p, system, n_basis, progress, pool, figs)
        transients, detected, draw = _transient_part(d, pending, eig["unstable_freqs"], args.seed, p, pool)
        checks = paper_checks(eig["loci"], transients)
        # the deformed analysis first on the pool: it is what the summary waits for
        bursts = _burst_part(d, p, ref, eig["loci"][UNSTABLE_MU], detected, progress, pool, jobs,
                             lambda: figs.extend(run_task(pool, fn, *a) for fn, a in draw))
        tdfrf_rec = _tdfrf_record(d, p, tdfrf, pool, figs)
        modes = _mode_record(d, modes) if modes is not None else "figures off"
        for f in figs:
            f.result()  # every figure written (or its error raised) before the report
    record = _summary(args, model, n_basis, eig, cases, dur, transients, checks, tdfrf_rec, modes, t_start)
    _burst_summary(record, bursts, system)
    path = d.finish(record)
    d.say(f"fesub {STUDY}: wrote {path} and report.html; wall time {time.perf_counter() - t_start:.1f} s")
    return 0


def _eigen_part(d, args, p, system, n_basis, progress, pool, figs) -> dict:
    """Eigenvalue loci (primal assembly) at both friction coefficients and the critical mu, as parts
    of the study, with their figures.

    Returns ``loci`` (mu -> EigenLoci), ``critical_mu``, ``record`` (for the summary's details),
    ``complete_hz`` (Hz, up to where the loci are complete) and ``unstable_freqs`` (Hz, rounded to
    10 Hz: the frequencies of the eigenvalues unstable at mu = 0.3). The figures are drawn on
    ``pool`` (their futures appended to ``figs``).
    """
    import numpy as np

    from ..contact.analyses import eigen

    s_end = p.s0 + p.vx * 3.13
    positions = np.arange(p.s0, min(s_end, p.L2 - 1e-4) + 1e-12, args.loci_step)
    loci = {m: d.compute(f"loci_mu{m:g}", lambda m=m: eigen.eigenvalue_loci(
        system, positions, m, 20, n_basis=n_basis, progress=progress)) for m in (STABLE_MU, UNSTABLE_MU)}
    L3 = loci[UNSTABLE_MU]
    unstable_pos = L3.positions[L3.lam.real.max(axis=1) > 0]

    def crit_fn():
        if unstable_pos.size:
            return eigen.critical_mu(system, unstable_pos, mu_max=UNSTABLE_MU, n_basis=n_basis, tol=2e-3)
        # no position unstable at mu = 0.3: stable up to the search's upper end
        return eigen.CriticalMu(float("inf"), positions=[], bracket=(UNSTABLE_MU, float("inf")),
                                worst_below=[], worst_above=[], mu_max=UNSTABLE_MU, tol=2e-3, n=20,
                                iterations=0, n_basis=L3.n_basis, complete_up_to_hz=L3.complete_up_to_hz,
                                n_modes=L3.n_modes)

    crit = d.compute("critical_mu", crit_fn)
    complete_hz = min(L.complete_up_to_hz for L in loci.values())
    record = {
        "positions_m": [float(positions[0]), float(positions[-1]), int(positions.size)],
        "basis": (f"{n_basis} lowest frictionless coupled modes (Ritz)" if n_basis
                  else "every mode of the reduced model"),
        "complete_up_to_hz": complete_hz,
        "n_modes_reduced_model": L3.n_modes,
        "max_real_part_per_mu_1_s": {f"{m:g}": loci[m].max_real for m in loci},
        "unstable_eigenvalues_mu0.3": [
            {"x_mm": x * 1e3, "f_hz": f, "real_1_s": r} for x, f, r in L3.unstable()],
        "critical_mu": float(crit),
        "critical_mu_bracket": list(crit.bracket),
        "critical_mu_note": "bisection over the positions unstable at mu = 0.3",
    }
    if d.figures_on:
        figs.append(_eigen_figures(d, p, loci, crit, pool))
    return {"loci": loci, "critical_mu": crit, "record": record, "complete_hz": complete_hz,
            "unstable_freqs": sorted({round(f, -1) for _, f, _ in L3.unstable()})}


def _eigen_figures(d, p, loci, crit, pool):
    """Loci at each mu (with the Rayleigh damping lines) and the largest real part per position,
    drawn on ``pool``; returns the future."""
    from . import _beam_on_beam_tasks as tasks
    from .common import run_task

    paths = [d.figure(f"loci_mu{m:g}.png", f"Eigenvalue loci at mu = {m:g} over the contact positions, "
                      f"with the Rayleigh damping lines") for m in loci]
    paths.append(d.figure("max_real_part.png", "Largest real part of the eigenvalues against the contact "
                                               "position: positive means unstable"))
    return run_task(pool, tasks.eigen_figures, list(loci.values()), paths,
                    [("beam 1", *p.rayleigh1), ("beam 2", *p.rayleigh2)],
                    [f"eigenvalue loci, mu = {m:g}, {_basis_words(L)}" for m, L in loci.items()],
                    f"largest real part against contact position (critical mu = {float(crit):.3g})")


def _submit_transients(d, args, p, ref, pool, progress):
    """Submit the transient cases chosen on the command line to ``pool``, each a part of the study.

    Returns the cases ((mu, rough) pairs), the simulated duration (s) and, by case name, the
    case's (mu, rough, future of its result).
    """
    from . import _beam_on_beam_tasks as tasks

    cases = _cases(args.mu, args.roughness) if not args.no_transient else []
    dur = args.duration if args.duration is not None else min(3.13, (p.L2 - p.s0 - 1e-3) / p.vx)
    pending = {}
    for m, rough in cases:
        name = case_name(m, rough)
        std = p.roughness * p.Fy if rough else 0.0
        d.say(f"transient {name}: {dur:g} s")
        pending[name] = (m, rough, d.submit(pool, f"transient_{name}", tasks.simulate_case, ref, m, std, dur,
                                            FS_OUT, p, args.seed, progress))
    return cases, dur, pending


def _transient_part(d, pending, unstable_freqs, seed, p, pool):
    """Each transient's record (the result's details and its burst windows) and the bursts of the
    mu = 0.3 cases, computed on ``pool`` as each transient finishes, and the figures to draw.

    Returns the records and the detected bursts (list of :class:`fesub.contact.analyses.bursts.Burst`), by
    case name, and the figure tasks ((function, arguments) pairs).
    """
    from . import _beam_on_beam_tasks as tasks
    from .common import run_task

    futs = {name: (rough, run_task(pool, tasks.transient_record, fut.result(), m == UNSTABLE_MU))
            for name, (m, rough, fut) in pending.items()}
    transients, detected, draw = {}, {}, []
    for name, (rough, fut) in futs.items():
        info, bursts = transients[name], detected[name] = fut.result()
        if not d.figures_on:
            continue
        res = pending[name][2].result()
        case = (f"mu = {res.mu:g}, {'rough' if rough else 'smooth'}"
                f"{f' (seed {seed})' if rough else ''}, Fy = {p.Fy:g} N")
        paths = [d.figure(f"transient_{name}.png",
                          f"Transient {case}: tip acceleration, contact force and sliding velocity")]
        if res.signals["t"].size > 64:
            paths.append(d.figure(f"spectrogram_{name}.png",
                                  f"Spectrogram of the tip acceleration, {case}; dashed: frequencies of the "
                                  f"eigenvalues unstable at mu = {UNSTABLE_MU:g}"))
        if info["bursts_s"]:
            paths.append(d.figure(f"bursts_{name}.png",
                                  f"Amplitude spectra of the tip acceleration in the first bursts, {case}"))
        draw.append((tasks.transient_figures, (res, info["bursts_s"][:3], paths, case, unstable_freqs)))
    return transients, {k: v for k, v in detected.items() if v is not None}, draw


#: offset (m) of the deformed analysis' positions from the 0.25 mm grid: the target nodes (every
#: 1 mm) are kinks of the contact row where the sliding state has no solution
DEFORMED_OFFSET = 0.125e-3
DEFORMED_STEP = 0.25e-3  # m, spacing of the deformed analysis' positions
BURST_F_TOL = 0.02  # relative frequency tolerance of a prediction (see _burst_part)


def _deformed_positions(p, L3, detected) -> "np.ndarray":
    """Positions (m) of the deformed analysis: the undeformed loci's unstable positions and the
    positions each burst crossed while it grew (from its rise to its peak, widened by 0.25 mm),
    on the grid k DEFORMED_STEP + DEFORMED_OFFSET, off the target nodes."""
    import numpy as np

    spans = [(x - DEFORMED_STEP, x + DEFORMED_STEP) for x in L3.positions[L3.lam.real.max(axis=1) > 0]]
    spans += [(b.x_rise - DEFORMED_STEP, b.x_peak + DEFORMED_STEP) for bs in detected.values() for b in bs]
    out = set()
    for a, b in spans:
        k = np.arange(np.ceil((a - DEFORMED_OFFSET) / DEFORMED_STEP),
                      np.floor((b - DEFORMED_OFFSET) / DEFORMED_STEP) + 1)
        out |= {round(float(v), 9) for v in k * DEFORMED_STEP + DEFORMED_OFFSET if p.s0 <= v < p.L2 - 1e-4}
    return np.array(sorted(out))


def _burst_part(d, p, ref, L3, detected, progress, pool, jobs, submitted=None) -> dict:
    """The bursts of the mu = 0.3 transients (``detected``, by case name) and the analyses that
    predict them (parts ``loci_deformed_mu0.3`` and ``burst_table_<case>``), with the figure;
    returns ``tables`` (case -> BurstTable), ``deformed`` (EigenLoci of the deformed sliding
    states, or None) and its ``wall_time_s``.

    Detection: :func:`fesub.contact.analyses.bursts.detect_bursts` on the tip acceleration (defaults: an
    envelope peak 18 dB over its 0.2 s running median in a 20 % band of 1-20 kHz, rising for
    at least 8 ms). A burst is predicted by an analysis when an eigenvalue with a positive real
    part lies at a position crossed while it grew, with a frequency within 2 % of the burst's
    (the burst's frequency is read from a window of 16 periods or more, ~6 % resolution of one
    bin but the peak bin of a growing sinusoid within ~1 %; the 10.6 kHz pair moves by ~0.5 %
    across a band). The deformed analysis runs only where needed (about 0.1 s per position here:
    the whole reduced model, one Newton solve of the sliding state and one dense eigenproblem),
    its positions split in consecutive runs among this process and the pool's workers (joined by
    :func:`fesub.contact.analyses.deformed.join_loci`, the same loci as one run); ``submitted`` is called
    once the pool has its share (to queue more work behind it).
    """
    import time

    import numpy as np

    from ..contact.analyses import eigen
    from ..contact.analyses.bursts import attribute
    from ..parallel import single_thread_blas
    from . import _beam_on_beam_tasks as tasks
    from .common import run_task

    positions = _deformed_positions(p, L3, detected)
    name = f"loci_deformed_mu{UNSTABLE_MU:g}"
    runs = [positions]
    if pool != "serial" and not d.done(name) and positions.size > 1:
        runs = np.array_split(positions, min(jobs + 1, positions.size))
    futs = [run_task(pool, tasks.deformed_loci, ref, r, UNSTABLE_MU, p.vx) for r in runs[1:]]
    if submitted is not None:
        submitted()
    Ld, wall = None, 0.0
    if positions.size:
        t0 = time.perf_counter()
        # small dense eigenproblems, one per position: threads only contend on a shared machine
        with single_thread_blas():
            Ld = d.compute(name, lambda: _joined([eigen.eigenvalue_loci(
                ref.get(), runs[0], UNSTABLE_MU, 20, modal_cutoff_hz=None, geometry="deformed", vx=p.vx,
                progress=progress)] + [f.result() for f in futs]))
        wall = time.perf_counter() - t0
    analyses = {"undeformed": (L3.positions, L3.lam)}
    if Ld is not None:
        analyses["deformed"] = (Ld.positions, Ld.lam)
    tables = {name: d.compute(f"burst_table_{name}", lambda bs=bs, name=name: attribute(
        bs, analyses, f_tol=BURST_F_TOL, name=f"a_T_y of transient {name}")) for name, bs in detected.items()}
    if d.figures_on and Ld is not None:
        from ..contact.sliding import plots as pc

        pc.plot_burst_attribution(L3, Ld, tables, d.figure(
            f"bursts_vs_stability_mu{UNSTABLE_MU:g}.png",
            f"Largest real part along the path at mu = {UNSTABLE_MU:g} with the undeformed and the deformed "
            f"contact rows, and the bursts of the transients at their contact positions"),
            title=f"largest real part, undeformed vs deformed rows, and bursts, mu = {UNSTABLE_MU:g}")
    return {"tables": tables, "deformed": Ld, "wall_time_s": wall}


def _joined(parts):
    """The loci of consecutive runs of positions as one (the only one as it is)."""
    from ..contact.analyses.deformed import join_loci

    return parts[0] if len(parts) == 1 else join_loci(parts)


def _unstable_runs(L) -> list:
    """Runs of consecutive deformed-analysis positions (DEFORMED_STEP apart) with a positive real
    part: ends (m), largest real part (1/s), its frequency (Hz) and position (m)."""
    import numpy as np

    hot = np.flatnonzero(L.lam.real.max(axis=1) > 0)
    runs = np.split(hot, np.flatnonzero(np.diff(L.positions[hot]) > 1.5 * DEFORMED_STEP) + 1) if hot.size else []
    out = []
    for r in runs:
        i, k = np.unravel_index(np.argmax(L.lam[r].real), (r.size, L.lam.shape[1]))
        out.append({"from_m": float(L.positions[r[0]]), "to_m": float(L.positions[r[-1]]),
                    "max_real_1_s": float(L.lam[r[i], k].real), "f_hz": float(L.lam[r[i], k].imag / (2 * np.pi)),
                    "at_m": float(L.positions[r[i]])})
    return out


def _burst_summary(record: dict, bursts: dict, system) -> None:
    """Add the burst tables (details), their counts (results) and the load's reason to the summary.

    Each burst record also names ``node_before_peak_m``: the target node crossed at most 0.1 mm
    (3.3 ms) before the peak, if any (the contact row's kink there kicks the structure: a burst
    right after it that no analysis predicts is the ringing of that kick, not an instability)."""
    import numpy as np

    nodes = np.sort(system.target_positions(np.zeros(system.K2.shape[0]))[:, 0])
    Ld = bursts["deformed"]
    det = record["details"]
    det["bursts"] = {}
    for name, T in bursts["tables"].items():
        recs = T.records()
        for r in recs:
            before = nodes[(nodes <= r["x_peak_m"]) & (nodes >= r["x_peak_m"] - 1e-4)]
            r["node_before_peak_m"] = float(before[-1]) if before.size else None
        det["bursts"][name] = recs
    det["bursts_rule"] = ("envelope peak >= 8x (18 dB) its 0.2 s running median in a 20 % band of 1-20 kHz, "
                          "rising >= 8 ms; growth rate: log-linear fit of the rise; predicted by an analysis "
                          f"when an unstable eigenvalue within {BURST_F_TOL:.0%} in frequency lies where "
                          "the burst grew")
    if Ld is not None:
        det["deformed"] = {"positions_m": Ld.positions.tolist(), "wall_time_s": bursts["wall_time_s"],
                           "unstable_bands": _unstable_runs(Ld)}
    det["load_reason"] = LOAD_REASON
    res = record["results"]
    for name, T in bursts["tables"].items():
        c = T.counts()
        for key, v in (("", c["bursts"]), ("_predicted_undeformed", c.get("predicted_undeformed")),
                       ("_predicted_deformed", c.get("predicted_deformed")),
                       ("_predicted_by_none", c["predicted_by_none"])):
            res[f"bursts{key}_{name}"] = {"value": v, "unit": None}


def _submit_tdfrf(d, p, ref, pool):
    """The time-dependent FRF of the stable case on the paper's grid (a part of the study),
    submitted to ``pool``; returns its future."""
    import numpy as np

    from . import _beam_on_beam_tasks as tasks

    times = np.arange(TDFRF["t0_s"], TDFRF["t1_s"] + 1e-9, TDFRF["dt_s"])  # a priori, whatever the transient
    freqs = np.arange(0.0, TDFRF["f1_hz"] + 1e-9, TDFRF["df_hz"])
    return d.submit(pool, f"tdfrf_mu{STABLE_MU:g}", tasks.tdfrf, ref, times, freqs, STABLE_MU, p)


def _tdfrf_record(d, p, fut, pool, figs) -> dict:
    """The TD-FRF's record for the summary; its figure is drawn on ``pool`` (future appended to
    ``figs``)."""
    from . import _beam_on_beam_tasks as tasks
    from .common import run_task

    r = fut.result()
    if d.figures_on:
        path = d.figure(f"tdfrf_mu{STABLE_MU:g}.png",
                        f"Time-dependent FRF at mu = {STABLE_MU:g}: vertical force at C to "
                        f"vertical acceleration of the tip T, along the sliding path")
        figs.append(run_task(pool, tasks.tdfrf_figure, r, path,
                             f"time-dependent FRF, force C,y -> acceleration T,y, mu = {STABLE_MU:g}, "
                             f"vx = {p.vx * 1e3:g} mm/s"))
    return {"times": int(r.times.size), "freqs": int(r.freqs_hz.size), "input": "C_y force",
            "output": "T_y acceleration", "mu": STABLE_MU}


def _mode_record(d, fut) -> list:
    """The coupled mode shapes drawn (:func:`_beam_on_beam_tasks.mode_figures`), recorded for the
    report; returns their files and frequencies (Hz) for the summary."""
    written = []
    for name, fhz, s_mid in fut.result():
        d.figure(name, f"Coupled mode {len(written) + 1} of the two beams without friction, contact at "
                       f"mid-span: {fhz:.1f} Hz")
        written.append({"file": name, "f_hz": fhz})
    return written


def _summary(args, model, n_basis, eig, cases, dur, transients, checks, tdfrf_rec, modes, t_start) -> dict:
    """The study's summary record: parameters and results with units, notes and the details."""
    import time

    from ..io import summary_record

    p = model.params
    loci, crit, complete_hz = eig["loci"], eig["critical_mu"], eig["complete_hz"]
    notes = ["beam-on-beam geometry, materials, damping and load RECONSTRUCTED "
             "(see fesub/models/beam_on_beam.py)",
             _completeness_note(complete_hz, n_basis, loci[UNSTABLE_MU].n_modes)]
    notes += [f"transient {k}: {v['stop_reason']} at t = {v['stop_time_s']:.4g} s" for k, v in transients.items()
              if v["status"] != "completed"]
    results = {"critical_mu": (float(crit), "1"),
               "loci_complete_up_to": (complete_hz, "Hz")}
    for m, L in loci.items():
        results[f"max_real_part_mu{m:g}"] = (L.max_real, "1/s")
    for name, info in transients.items():
        results[f"status_{name}"] = (info["status"], None)
        results[f"min_lambda_{name}"] = (info.get("min_lambda_N"), "N")
        results[f"min_v_t_{name}"] = (info.get("min_v_t_m_s"), "m/s")
    results["paper_checks_passed"] = (_passed(checks), None)
    results["wall_time"] = (time.perf_counter() - t_start, "s")
    parameters = {
        "mu": ([m for m, _ in cases] or None, "1"), "roughness": ([("rough" if r_ else "smooth")
                                                                  for _, r_ in cases] or None, None),
        "loci_mu": ([STABLE_MU, UNSTABLE_MU], "1"), "Fy": (p.Fy, "N"), "vx": (p.vx, "m/s"),
        "s0": (p.s0, "m"), "roughness_std": (p.roughness * p.Fy, "N"), "seed": (args.seed, None),
        "duration": (dur if cases else None, "s"), "fs_out": (FS_OUT, "Hz"),
        "loci_step": (args.loci_step, "m"), "basis_modes": (args.basis_modes, None),
        "refine": (bool(args.refine), None)}
    details = {"model": _model_record(model), "parameters": p.to_dict(), "refined": bool(args.refine),
               "eigen": eig["record"], "transients": transients, "paper_checks": checks, "tdfrf": tdfrf_rec,
               "mode_shapes": modes}
    return summary_record(STUDY, parameters, results, details=details, notes=notes)


def _basis_words(L) -> str:
    import math

    if math.isfinite(L.complete_up_to_hz):
        return f"{L.n_basis}-mode basis (complete to {L.complete_up_to_hz / 1e3:.0f} kHz)"
    return "all modes"


def _completeness_note(complete_hz, n_basis, n_modes) -> str:
    import math

    if math.isfinite(complete_hz):
        return (f"eigenvalue loci and critical mu: Ritz basis of the {n_basis} lowest frictionless coupled "
                f"modes, complete up to {complete_hz / 1e3:.1f} kHz; the {n_modes - n_basis} modes of the "
                f"reduced model above are not examined (--basis-modes all examines them)")
    return f"eigenvalue loci and critical mu: every one of the {n_modes} modes of the reduced model examined"


def _passed(checks: dict) -> str:
    flat = [v for c in checks.values() for v in (c if isinstance(c, list) else [c])]
    return f"{sum(bool(v) for v in flat)}/{len(flat)}"


def _model_record(model) -> dict:
    rec = model.summary()
    rec["beam1"]["validate_rel_error_first5"] = model.cb1.validate(5)["rel_error"].tolist()
    rec["beam2"]["validate_rel_error_first5"] = model.cb2.validate(5)["rel_error"].tolist()
    return rec


def paper_checks(loci, transients: dict) -> dict:
    """The paper's qualitative statements, checked on this run (True/False per statement).

    ``loci`` maps mu to :class:`fesub.contact.analyses.eigen.EigenLoci`; ``transients`` maps a case name to
    its record (``min_lambda_N``, ``status``, ``min_v_t_m_s``, ``burst_dominant_hz``,
    ``burst_positions_m``).
    """
    import numpy as np

    checks = {}
    if STABLE_MU in loci:
        checks[f"mu={STABLE_MU:g}: all eigenvalue real parts < 0"] = bool(loci[STABLE_MU].max_real < 0)
    if UNSTABLE_MU in loci:
        checks[f"mu={UNSTABLE_MU:g}: some eigenvalue real part > 0"] = bool(loci[UNSTABLE_MU].max_real > 0)
    for name, info in transients.items():
        checks[f"{name}: lambda > 0 throughout"] = bool(info.get("min_lambda_N", -1.0) > 0)
        checks[f"{name}: slave never stops sliding forwards"] = bool(
            info["status"] == "completed" and info.get("min_v_t_m_s", -1.0) > 0)
        if info.get("burst_dominant_hz") and UNSTABLE_MU in loci:
            # a burst is explained when, at a position C crossed while it grew (from 30 ms before
            # its window to the window's end, widened by one loci step), an eigenvalue has a
            # positive real part and a frequency within 1 % of the burst's (burst spectra of
            # windows of a few ms resolve ~1 %)
            L = loci[UNSTABLE_MU]
            step = float(np.diff(L.positions[:2])[0]) if L.positions.size > 1 else 0.0
            hot = L.unstable()
            checks[f"{name}: bursts where an eigenvalue of the same frequency has a positive real part"] = [
                bool(any(x0 - step <= x <= x1 + step and abs(f - fu) / fu < 0.01 for x, fu, _ in hot))
                for f, (x0, x1) in zip(info["burst_dominant_hz"], info["burst_positions_m"])]
    return checks


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit("run it as: fesub beam-on-beam")
