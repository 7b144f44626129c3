"""``fesub beam-on-beam``: the sliding-contact benchmark study.

Builds both substructures from the bundled meshes, their Craig-Bampton models, the eigenvalue
loci for mu = 0.1 and 0.3 with the critical friction coefficient, the transient cases of the paper
(stable/unstable x smooth/rough), the time-dependent FRF, spectrograms, burst spectra, contact
status plots and coupled mode shapes; writes PNGs, .npz signals and ``summary.json`` to --out.
"""

from __future__ import annotations

import os
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from ..errors import ParameterError
from ..io import write_json

STABLE_MU, UNSTABLE_MU = 0.1, 0.3


def add_arguments(p) -> None:
    p.add_argument("--mu", type=float, default=None,
                   help="friction coefficient of a single transient (default: the paper's 0.1 and 0.3)")
    p.add_argument("--roughness", choices=("on", "off"), default=None,
                   help="roughness force on C (default: both smooth and rough cases)")
    p.add_argument("--duration", type=float, default=None,
                   help="simulated time per transient in s (default: until C nears T, about 3.13 s)")
    p.add_argument("--refine", action="store_true", help="150 elements along beam 2 instead of 100")
    p.add_argument("--out", default="fesub-out/beam-on-beam", help="output directory")
    p.add_argument("--loci-step", type=float, default=0.25e-3,
                   help="spacing of the contact positions of the eigenvalue loci (m)")
    p.add_argument("--no-transient", action="store_true", help="skip the transient simulations")
    p.add_argument("--no-figures", action="store_true", help="write numbers only")
    p.add_argument("--seed", type=int, default=0, help="seed of the roughness noise")
    p.add_argument("--quiet", action="store_true", help="no progress bars")


def _cases(mu, roughness):
    mus = [STABLE_MU, UNSTABLE_MU] if mu is None else [mu]
    rough = [False, True] if roughness is None else [roughness == "on"]
    return [(m, r) for m in mus for r in rough]


def _case_name(mu, rough):
    return f"mu{mu:g}_{'rough' if rough else 'smooth'}"


def run(args) -> int:
    summary = study(out=args.out, mu=args.mu, roughness=args.roughness, duration=args.duration,
                    refine=args.refine, loci_step=args.loci_step, transient=not args.no_transient,
                    figures=not args.no_figures, seed=args.seed, progress=not args.quiet)
    print(f"fesub beam-on-beam: wrote {summary['out']} (summary.json); wall time {summary['wall_time_s']:.1f} s")
    return 0


def study(out="fesub-out/beam-on-beam", *, mu=None, roughness=None, duration=None, refine=False,
          loci_step=0.25e-3, transient=True, figures=True, seed=0, progress=True) -> dict:
    """Run the beam-on-beam study and return its summary (also written to ``out/summary.json``)."""
    from ..contact import eigen
    from ..contact.transient import simulate
    from ..models import beam_on_beam as bb

    t_start = time.perf_counter()
    if mu is not None and not (np.isfinite(mu) and mu >= 0):
        raise ParameterError(f"--mu must be >= 0, got {mu}")
    if duration is not None and not duration > 0:
        raise ParameterError(f"--duration must be > 0 s, got {duration}")
    if not 0 < loci_step < 0.01:
        raise ParameterError(f"--loci-step must lie in (0, 0.01) m, got {loci_step}")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    say = print if progress else (lambda *a, **k: None)

    model = bb.build(refine=refine)
    p = model.params
    system = bb.contact_system(model)
    summary = {"out": str(out), "model": model.summary(), "parameters": p.to_dict(), "refined": refine,
               "note": "beam-on-beam geometry, materials, damping and load RECONSTRUCTED (see fesub/models/beam_on_beam.py)"}
    summary["model"]["beam1"]["validate_rel_error_first5"] = model.cb1.validate(5)["rel_error"].tolist()
    summary["model"]["beam2"]["validate_rel_error_first5"] = model.cb2.validate(5)["rel_error"].tolist()
    say(model.cb1.summary())
    say(model.cb2.summary())

    # ---- eigenvalue loci (primal assembly, coupled-mode Ritz basis) and critical mu
    s_end = p.s0 + p.vx * 3.13
    positions = np.arange(p.s0, min(s_end, p.L2 - 1e-4) + 1e-12, loci_step)
    loci = {}
    for m in (STABLE_MU, UNSTABLE_MU):
        loci[m] = eigen.eigenvalue_loci(system, positions, m, 20, n_basis=120, progress=progress)
        loci[m].save(out / f"loci_mu{m:g}.npz")
    unstable_pos = positions[loci[UNSTABLE_MU].lam.real.max(axis=1) > 0]
    crit = (eigen.critical_mu(system, unstable_pos, mu_max=UNSTABLE_MU, n_basis=120, tol=2e-3)
            if unstable_pos.size else float("inf"))
    summary["eigen"] = {
        "positions_m": [float(positions[0]), float(positions[-1]), int(positions.size)],
        "basis": "120 lowest frictionless coupled modes (Ritz)",
        "max_real_part_per_mu": {str(m): loci[m].max_real for m in loci},
        "unstable_eigenvalues_mu0.3": [
            {"x_mm": x * 1e3, "f_hz": f, "real_1_s": r} for x, f, r in loci[UNSTABLE_MU].unstable()],
        "critical_mu": crit,
        "critical_mu_note": "bisection over the positions unstable at mu = 0.3",
    }
    unstable_freqs = sorted({round(f, -1) for _, f, _ in loci[UNSTABLE_MU].unstable()})
    if figures:
        from ..plots import contact as pc

        ray = [("beam 1", *p.rayleigh1), ("beam 2", *p.rayleigh2)]
        for m in loci:
            pc.plot_loci(loci[m], out / f"loci_mu{m:g}.png", rayleigh=ray)
        pc.plot_max_real(list(loci.values()), out / "max_real_part.png")

    # ---- transients
    cases = _cases(mu, roughness) if transient else []
    dur = duration if duration is not None else min(3.13, (p.L2 - p.s0 - 1e-3) / p.vx)
    summary["transients"] = {}
    for m, rough in cases:
        name = _case_name(m, rough)
        say(f"transient {name}: {dur:g} s")
        res = simulate(system, mu=m, duration=dur, vx=p.vx, fs_out=50_000.0,
                       roughness_std=p.roughness * p.Fy if rough else 0.0, roughness_band=p.roughness_band,
                       seed=seed, progress=progress)
        res.save(out / f"transient_{name}")
        info = res.summary()
        info.update(_burst_info(res))
        summary["transients"][name] = info
        if figures:
            from ..plots import contact as pc

            pc.plot_transient(res, out / f"transient_{name}.png")
            s = res.signals
            if s["t"].size > 64:
                pc.plot_spectrogram(s["t"], s["a_T_y"], res.fs_out, out / f"spectrogram_{name}.png",
                                    marks=unstable_freqs, title=f"a_T,y spectrogram, {name}")
            spectra = [(f"{a:.3f}-{b:.3f} s", *_window(res, a, b)) for a, b in info["bursts_s"][:3]]
            if spectra:
                pc.plot_burst_spectra(spectra, out / f"bursts_{name}.png")

    summary["paper_checks"] = _paper_checks(loci, summary["transients"])

    # ---- time-dependent FRF (stable case, as in the paper)
    try:
        from ..contact import frf as tdf
    except ImportError:  # pragma: no cover - only in partial builds
        tdf = None
    if tdf is not None and hasattr(tdf, "time_dependent_frf"):
        times = np.arange(0.20, 3.13 + 1e-9, 5e-3)  # the paper's grid; a priori, whatever the transient
        freqs = np.arange(0.0, 20_000.0 + 1e-9, 5.0)
        r = tdf.time_dependent_frf(system, times, freqs, "C_y", "T_y", STABLE_MU, p.s0, p.vx, accelerance=True)
        r.save(out / "tdfrf.npz")
        summary["tdfrf"] = {"times": int(times.size), "freqs": int(freqs.size), "input": "C_y force",
                            "output": "T_y acceleration", "mu": STABLE_MU}
        if figures:
            from ..plots import contact as pc

            pc.plot_tdfrf(r.times, r.freqs, r.H, out / "tdfrf.png")
    else:
        summary["tdfrf"] = "not available in this build"

    # ---- coupled mode shapes (mu = 0, contact at mid-span)
    if figures:
        summary["mode_shapes"] = _mode_figures(model, system, out, progress)

    summary["wall_time_s"] = time.perf_counter() - t_start
    write_json(out / "summary.json", summary)
    return summary


def _paper_checks(loci, transients: dict) -> dict:
    """The paper's qualitative statements, checked on this run (True/False per statement)."""
    checks = {}
    if STABLE_MU in loci:
        checks[f"mu={STABLE_MU:g}: all eigenvalue real parts < 0"] = bool(loci[STABLE_MU].max_real < 0)
    if UNSTABLE_MU in loci:
        checks[f"mu={UNSTABLE_MU:g}: some eigenvalue real part > 0"] = bool(loci[UNSTABLE_MU].max_real > 0)
    for name, info in transients.items():
        checks[f"{name}: lambda > 0 throughout"] = bool(info["min_lambda_N"] > 0)
        checks[f"{name}: slave never stops sliding forwards"] = bool(
            info["status"] == "completed" and info["min_v_t_m_s"] > 0)
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
    from ..signal import burst_windows, dominant_frequency, window_spectrum

    s = res.signals
    if s["t"].size < 256:
        return {"bursts_s": [], "burst_dominant_hz": []}
    wins = burst_windows(s["t"], s["a_T_y"], min_gap=0.02, min_length=0.005)
    dom, pos = [], []
    for a, b in wins[:10]:
        f, X = window_spectrum(s["t"], s["a_T_y"], a, b)
        dom.append(dominant_frequency(f, X, fmin=100.0))
        # contact positions crossed while the burst grew (30 ms before its window) and lasted
        pos.append([float(v) for v in np.interp([a - 0.03, b], s["t"], s["x_contact"])])
    return {"bursts_s": [[float(a), float(b)] for a, b in wins[:10]], "burst_dominant_hz": dom,
            "burst_positions_m": pos}


def _mode_figures(model, system, out: Path, progress: bool):
    """Render the lowest coupled modes (mu = 0, contact at mid-span) of both substructures."""
    from ..contact.eigen import complex_eigenvalues

    p = model.params
    s_mid = 0.5 * (p.s0 + p.L2)
    lam, shapes = complex_eigenvalues(system, s_mid, 0.0, 4, return_modes=True, n_basis=120)
    written = []
    try:
        from ..plots import modes as pm
    except ImportError:
        return "pyvista rendering not available"
    n1 = system.K1.shape[0]
    for k in range(lam.size):
        u = np.real(shapes[:, k] * np.exp(-1j * np.angle(shapes[np.argmax(np.abs(shapes[:, k])), k])))
        q1 = np.zeros(model.cb1.n_dofs)
        q1[system.f1_idx] = u[:n1]
        f1 = model.sub1.expand(model.cb1.recover(q1))
        f2 = model.sub2.expand(model.cb2.recover(u[n1:]))
        path = out / f"coupled_mode_{k + 1}.png"
        fhz = lam[k].imag / (2 * np.pi)
        try:
            pm.render_modes([(model.sub1.mesh, f1), (model.sub2.mesh, f2)], path,
                            title=f"coupled mode {k + 1}: {fhz:.1f} Hz (mu = 0, x = {s_mid * 1e3:.1f} mm)")
        except Exception as exc:  # noqa: BLE001 - rendering depends on the machine's OpenGL
            return f"rendering failed: {exc}"
        written.append({"file": path.name, "f_hz": fhz})
    return written
