"""``fesub beam-on-beam``: the sliding-contact benchmark study (two beams, frictional contact).

Builds both substructures from the bundled meshes and their Craig-Bampton models, then, each as a
part of the output folder (written as it finishes, reused on a rerun):

* ``loci_mu0.1``, ``loci_mu0.3``: complex eigenvalue loci over the contact positions;
* ``critical_mu``: the critical friction coefficient (bisection over the positions unstable at
  mu = 0.3);
* ``transient_<case>``: the transients of the paper (mu = 0.1 / 0.3, smooth / rough);
* ``tdfrf_mu0.1``: the time-dependent FRF of the stable case;

and the figures (loci, largest real part, transients, spectrograms, burst spectra, TD-FRF, coupled
mode shapes), ``summary.json`` and ``report.html``.
"""

from __future__ import annotations

import argparse

from .common import add_common, integer, number

STUDY = "beam-on-beam"
STABLE_MU, UNSTABLE_MU = 0.1, 0.3
#: Ritz basis of the eigenvalue analyses (lowest frictionless coupled modes). Measured on this
#: model: 0.08 s per position against 0.19 s for all 244 modes; the largest real part at mu = 0.3
#: moves by 0.1 %; the basis reaches 266 kHz, the reduced model 1.0 MHz.
BASIS_MODES = 120
FS_OUT = 50_000.0  # Hz, output rate of the transients
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
                   help="Ritz basis of the eigenvalue analyses: the N lowest frictionless coupled modes "
                        "[-] ('all': every mode of the reduced model, about 2.3x the time); the summary "
                        "says up to which frequency the loci are complete")
    add_common(p, STUDY)


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

    from ..contact.eigen import IncompleteSpectrumWarning

    with warnings.catch_warnings():
        # the study records the completeness of the spectra in its results and notes instead
        warnings.simplefilter("ignore", IncompleteSpectrumWarning)
        return _study(args)


def _study(args) -> int:
    """The study in its order: model, eigenvalue analyses, transients, TD-FRF, mode shapes, summary."""
    import time

    from ..models import beam_on_beam as bb
    from .common import StudyDir

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
    eig = _eigen_part(d, args, model.params, system, n_basis, progress)
    cases, dur, transients = _transient_part(d, args, model.params, system, eig["unstable_freqs"], progress)
    checks = paper_checks(eig["loci"], transients)
    tdfrf_rec = _tdfrf_part(d, model.params, system)
    modes = _mode_figures(d, model, system) if d.figures_on else "figures off"
    record = _summary(args, model, n_basis, eig, cases, dur, transients, checks, tdfrf_rec, modes, t_start)
    path = d.finish(record)
    d.say(f"fesub {STUDY}: wrote {path} and report.html; wall time {time.perf_counter() - t_start:.1f} s")
    return 0


def _eigen_part(d, args, p, system, n_basis, progress) -> dict:
    """Eigenvalue loci (primal assembly) at both friction coefficients and the critical mu, as parts
    of the study, with their figures.

    Returns ``loci`` (mu -> EigenLoci), ``critical_mu``, ``record`` (for the summary's details),
    ``complete_hz`` (Hz, up to where the loci are complete) and ``unstable_freqs`` (Hz, rounded to
    10 Hz: the frequencies of the eigenvalues unstable at mu = 0.3).
    """
    import numpy as np

    from ..contact import eigen

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
        _eigen_figures(d, p, loci, crit)
    return {"loci": loci, "critical_mu": crit, "record": record, "complete_hz": complete_hz,
            "unstable_freqs": sorted({round(f, -1) for _, f, _ in L3.unstable()})}


def _eigen_figures(d, p, loci, crit) -> None:
    """Loci at each mu (with the Rayleigh damping lines) and the largest real part per position."""
    from ..contact import plots as pc

    ray = [("beam 1", *p.rayleigh1), ("beam 2", *p.rayleigh2)]
    for m, L in loci.items():
        pc.plot_loci(L, d.figure(f"loci_mu{m:g}.png", f"Eigenvalue loci at mu = {m:g} over the contact "
                                 f"positions, with the Rayleigh damping lines"),
                     rayleigh=ray, title=f"eigenvalue loci, mu = {m:g}, {_basis_words(L)}")
    pc.plot_max_real(list(loci.values()), d.figure(
        "max_real_part.png", "Largest real part of the eigenvalues against the contact position: "
                             "positive means unstable"),
        title=f"largest real part against contact position (critical mu = {float(crit):.3g})")


def _transient_part(d, args, p, system, unstable_freqs, progress):
    """The transient cases chosen on the command line, each a part of the study, with figures.

    Returns the cases ((mu, rough) pairs), the simulated duration (s) and each case's record
    (the result's details and its bursts) by case name.
    """
    from ..contact.transient import simulate

    cases = _cases(args.mu, args.roughness) if not args.no_transient else []
    dur = args.duration if args.duration is not None else min(3.13, (p.L2 - p.s0 - 1e-3) / p.vx)
    transients = {}
    for m, rough in cases:
        name = case_name(m, rough)
        std = p.roughness * p.Fy if rough else 0.0
        d.say(f"transient {name}: {dur:g} s")

        def sim(m=m, std=std):
            res = simulate(system, mu=m, duration=dur, vx=p.vx, fs_out=FS_OUT, roughness_std=std,
                           roughness_band=p.roughness_band, seed=args.seed, progress=progress)
            res.info["load_N"] = float(p.Fy)
            return res

        res = d.compute(f"transient_{name}", sim)
        info = res.details()
        info.update(_burst_info(res))
        transients[name] = info
        if d.figures_on:
            _transient_figures(d, res, name, info, unstable_freqs, rough, args.seed, p.Fy)
    return cases, dur, transients


def _tdfrf_part(d, p, system) -> dict:
    """The time-dependent FRF of the stable case on the paper's grid (a part of the study) and its
    figure; returns its record for the summary."""
    import numpy as np

    from ..contact.frf import time_dependent_frf

    times = np.arange(TDFRF["t0_s"], TDFRF["t1_s"] + 1e-9, TDFRF["dt_s"])  # a priori, whatever the transient
    freqs = np.arange(0.0, TDFRF["f1_hz"] + 1e-9, TDFRF["df_hz"])
    r = d.compute(f"tdfrf_mu{STABLE_MU:g}", lambda: time_dependent_frf(
        system, times, freqs, "C_y", "T_y", STABLE_MU, p.s0, p.vx, accelerance=True))
    if d.figures_on:
        from ..contact import plots as pc

        pc.plot_tdfrf(r, d.figure(f"tdfrf_mu{STABLE_MU:g}.png",
                                  f"Time-dependent FRF at mu = {STABLE_MU:g}: vertical force at C to "
                                  f"vertical acceleration of the tip T, along the sliding path"),
                      title=f"time-dependent FRF, force C,y -> acceleration T,y, mu = {STABLE_MU:g}, "
                            f"vx = {p.vx * 1e3:g} mm/s")
    return {"times": int(r.times.size), "freqs": int(r.freqs_hz.size), "input": "C_y force",
            "output": "T_y acceleration", "mu": STABLE_MU}


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


def _transient_figures(d, res, name, info, unstable_freqs, rough, seed, Fy) -> None:
    from ..contact import plots as pc

    case = (f"mu = {res.mu:g}, {'rough' if rough else 'smooth'}"
            f"{f' (seed {seed})' if rough else ''}, Fy = {Fy:g} N")
    pc.plot_transient(res, d.figure(f"transient_{name}.png",
                                    f"Transient {case}: tip acceleration, contact force and sliding velocity"),
                      title=f"transient, {case}: {res.status} at t = {res.stop_time:.4g} s")
    s = res.signals
    if s["t"].size > 64:
        pc.plot_spectrogram(s["t"], s["a_T_y"], res.fs_out,
                            d.figure(f"spectrogram_{name}.png",
                                     f"Spectrogram of the tip acceleration, {case}; dashed: frequencies of "
                                     f"the eigenvalues unstable at mu = {UNSTABLE_MU:g}"),
                            marks=unstable_freqs, title=f"spectrogram of a_T,y, {case}",
                            nperseg=min(2048, s["t"].size))
    spectra = [(f"{a:.3f}-{b:.3f} s", *_window(res, a, b)) for a, b in info["bursts_s"][:3]]
    if spectra:
        pc.plot_burst_spectra(spectra, d.figure(f"bursts_{name}.png",
                                                f"Amplitude spectra of the tip acceleration in the first "
                                                f"bursts, {case}"),
                              title=f"burst spectra of a_T,y, {case}")


def paper_checks(loci, transients: dict) -> dict:
    """The paper's qualitative statements, checked on this run (True/False per statement).

    ``loci`` maps mu to :class:`fesub.contact.eigen.EigenLoci`; ``transients`` maps a case name to
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


def _window(res, a, b):
    from ..signal import window_spectrum

    s = res.signals
    return window_spectrum(s["t"], s["a_T_y"], a, b)


def _burst_info(res) -> dict:
    import numpy as np

    from ..signal import burst_windows, dominant_frequency, window_spectrum

    s = res.signals
    if s["t"].size < 256:
        return {"bursts_s": [], "burst_dominant_hz": [], "burst_positions_m": []}
    wins = burst_windows(s["t"], s["a_T_y"], min_gap=0.02, min_length=0.005)
    dom, pos = [], []
    for a, b in wins[:10]:
        f, X = window_spectrum(s["t"], s["a_T_y"], a, b)
        dom.append(dominant_frequency(f, X, fmin=100.0))
        # contact positions crossed while the burst grew (30 ms before its window) and lasted
        pos.append([float(v) for v in np.interp([a - 0.03, b], s["t"], s["x_contact"])])
    return {"bursts_s": [[float(a), float(b)] for a, b in wins[:10]], "burst_dominant_hz": dom,
            "burst_positions_m": pos}


def _mode_figures(d, model, system):
    """Draw the lowest coupled modes (mu = 0, contact at mid-span) of both substructures."""
    import numpy as np

    from ..contact.eigen import complex_eigenvalues
    from ..contact import plots as pc

    p = model.params
    s_mid = 0.5 * (p.s0 + p.L2)
    # beam 1 is drawn where the mode is computed: translated (as the drive moves it) so that its
    # slave node C sits on the target surface at x = s_mid, not at its starting position
    mesh1 = model.sub1.mesh.transformed(translate=system.surface_point(s_mid) - system.X_C)
    lam, shapes = complex_eigenvalues(system, s_mid, 0.0, 4, return_modes=True)
    written = []
    n1 = system.K1.shape[0]
    for k in range(lam.size):
        u = np.real(shapes[:, k] * np.exp(-1j * np.angle(shapes[np.argmax(np.abs(shapes[:, k])), k])))
        q1 = np.zeros(model.cb1.n_dofs)
        q1[system.f1_idx] = u[:n1]
        f1 = model.sub1.expand(model.cb1.recover(q1))
        f2 = model.sub2.expand(model.cb2.recover(u[n1:]))
        fhz = lam[k].imag / (2 * np.pi)
        path = d.figure(f"coupled_mode_{k + 1}.png",
                        f"Coupled mode {k + 1} of the two beams without friction, contact at mid-span: "
                        f"{fhz:.1f} Hz")
        pc.plot_coupled_modes([(mesh1, f1), (model.sub2.mesh, f2)], path, labels=["beam 1", "beam 2"],
                              title=f"coupled mode {k + 1}: {fhz:.1f} Hz (mu = 0, contact at x = "
                                    f"{s_mid * 1e3:.1f} mm)")
        written.append({"file": path.name, "f_hz": fhz})
    return written


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit("run it as: fesub beam-on-beam")
