"""``fesub backbone``: backbone curves of frictional structures by harmonic balance.

Computes the backbone (Lagrange optimality system, continuation in log force), a family of
forced responses around it, and with ``--compare`` the phase-resonance and dNNM baselines and an
Nh = 1 backbone. Each of these is a part of the output folder (``backbone.nc``, ``frf_0.nc``,
..., ``phase_resonance.nc``, ``dnnm.nc``, ``backbone_nh1.nc``), written as it finishes and
reused by a rerun; ``summary.json``, ``report.html`` and the figures complete the folder.
Frequencies are stored in rad/s, forces in N, amplitudes in m.
"""

from __future__ import annotations

import math
import sys

from .common import add_common, integer, number

STUDY = "backbone"
TWO_PI = 2 * math.pi

MODELS = {
    # name: (builder key, stage-1 window (rad/s), global window (rad/s) or None,
    #        default force range (N), default number of harmonics)
    "jenkins": ("jenkins_1dof", (1.2, 1.6), None, (0.002, 0.2), 7),
    "beam": ("cantilever_contact", (0.95 * TWO_PI * 915.2, 1.05 * TWO_PI * 915.2),
             (TWO_PI * 150, TWO_PI * 1000), (0.01, 1000.0), 3),
    "blade": ("blade_damper_blade", (TWO_PI * 200, TWO_PI * 220), None, (0.01, 1000.0), 3),
}
#: relative half width of each forced response of the family around its backbone point
FRF_SPAN = 0.06


def _per_model(what, fmt):
    return ", ".join(f"{m} {fmt(v)}" for m, v in sorted((m, what(t)) for m, t in MODELS.items()))


def add_arguments(parser) -> None:
    parser.add_argument("--model", choices=sorted(MODELS), default="jenkins",
                        help="jenkins (1-DOF reference), beam (cantilever + pad), blade "
                             "(blade-damper-blade)")
    parser.add_argument("--nh", type=integer(ge=1), default=None, metavar="N",
                        help="number of harmonics (default: "
                             + _per_model(lambda t: t[4], str) + ")")
    parser.add_argument("--alpha-min", type=number(gt=0, unit="N"), default=None, metavar="F",
                        help="smallest force amplitude [N] (default: "
                             + _per_model(lambda t: t[3][0], lambda v: f"{v:g}") + ")")
    parser.add_argument("--alpha-max", type=number(gt=0, unit="N"), default=None, metavar="F",
                        help="largest force amplitude [N] (default: "
                             + _per_model(lambda t: t[3][1], lambda v: f"{v:g}") + ")")
    parser.add_argument("--w-window", type=number(gt=0, unit="rad/s"), nargs=2, default=None,
                        metavar=("LOW", "HIGH"),
                        help="frequency window [rad/s] of the first forced response, at the "
                             "smallest force; must hold the stuck resonance (default: "
                             + _per_model(lambda t: t[1], lambda v: f"{v[0]:.6g} {v[1]:.6g}")
                             + ")")
    parser.add_argument("--max-steps", type=integer(ge=1), default=600, metavar="N",
                        help="continuation steps [-] allowed per traced piece of a backbone")
    parser.add_argument("--frf-levels", type=integer(ge=0), default=5, metavar="N",
                        help="number of forced responses [-] around the backbone (forces "
                             "spread evenly in log between the smallest and largest)")
    parser.add_argument("--compare", action="store_true",
                        help="also compute phase resonance, dNNM and the Nh = 1 backbone")
    parser.add_argument("--global-checks", type=number(ge=0, unit="per decade"), default=2.0,
                        metavar="X",
                        help="check forces per decade of force [1/decade] at which the forced "
                             "response is swept over the global window for ridges the "
                             "backbone does not follow (models with a global window: beam; "
                             "0: no checks)")
    add_common(parser, STUDY)


def _frf_around(sy, a, w0, Q0, rel):
    """Forced response at force ``a`` (N) from ``w0`` (rad/s) down and up by ``rel`` (relative),
    merged into one curve of increasing frequency; an interrupt is raised again."""
    import numpy as np

    from ..hbm import FRF, forced_response
    from .common import check_interrupted

    lo = forced_response(sy, a, (w0, w0 * (1 - rel)), Q0=Q0)
    check_interrupted(lo)
    hi = forced_response(sy, a, (w0, w0 * (1 + rel)), Q0=Q0)
    check_interrupted(hi)
    return FRF(a, np.concatenate([lo.w[::-1], hi.w[1:]]), np.concatenate([lo.Q[::-1], hi.Q[1:]]),
               np.concatenate([lo.Am[::-1], hi.Am[1:]]), "merged")


def _settings(args):
    """The run's settings from the arguments, checked (ParameterError naming the flag)."""
    from ..errors import ParameterError

    key, window, wglob, arange, nh_default = MODELS[args.model]
    nh = args.nh if args.nh is not None else nh_default
    a0 = args.alpha_min if args.alpha_min is not None else arange[0]
    a1 = args.alpha_max if args.alpha_max is not None else arange[1]
    if not a0 < a1:
        raise ParameterError(f"--alpha-min must be < --alpha-max, got {a0:g} N and {a1:g} N")
    w_window = tuple(args.w_window) if args.w_window is not None else window
    if not w_window[0] < w_window[1]:
        raise ParameterError(f"--w-window must be LOW HIGH with LOW < HIGH (rad/s), got "
                             f"{w_window[0]:g} {w_window[1]:g}")
    return dict(model=args.model, builder=key, nh=nh, alpha_min=a0, alpha_max=a1,
                w_window=list(w_window), w_global=None if wglob is None else list(wglob),
                max_steps=args.max_steps, frf_levels=args.frf_levels,
                global_checks=args.global_checks, compare=bool(args.compare))


def _summary(s, bb, frfs, pr, dn, bb1, failures):
    from ..io import summary_record

    ww, wg = s["w_window"], s["w_global"]
    params = {"model": (s["model"], None), "nh": (s["nh"], None),
              "alpha_min": (s["alpha_min"], "N"), "alpha_max": (s["alpha_max"], "N"),
              "w_window_low": (ww[0], "rad/s"), "w_window_high": (ww[1], "rad/s"),
              "max_steps": (s["max_steps"], None), "frf_levels": (s["frf_levels"], None),
              "compare": (s["compare"], None)}
    if wg:  # the backbone is the global maximum in this window (beam)
        params.update(w_global_low=(wg[0], "rad/s"), w_global_high=(wg[1], "rad/s"),
                      global_checks=(s["global_checks"], "1/decade"))
    res = {"backbone_points": (len(bb.alpha), None),
           "backbone_stop_reason": (bb.stop_reason, None),
           "w_start": (float(bb.w[0]), "rad/s"), "f_start": (float(bb.w[0]) / TWO_PI, "Hz"),
           "w_end": (float(bb.w[-1]), "rad/s"), "f_end": (float(bb.w[-1]) / TWO_PI, "Hz"),
           "Am_start": (float(bb.Am[0]), "m"), "Am_end": (float(bb.Am[-1]), "m"),
           "alpha_end": (float(bb.alpha[-1]), "N"),
           "singular_points": (len(bb.singular_points), None),
           "jumps": (len(bb.jumps), None)}
    frf_rows = []
    for name, f in frfs:
        i = max(range(len(f.Am)), key=lambda j: f.Am[j])
        frf_rows.append({"part": name, "alpha_N": float(f.alpha), "w_peak_rad_s": float(f.w[i]),
                         "f_peak_Hz": float(f.w[i]) / TWO_PI, "Am_peak_m": float(f.Am[i])})
    res["frf_alpha"] = ([r["alpha_N"] for r in frf_rows], "N")
    res["frf_peak_w"] = ([r["w_peak_rad_s"] for r in frf_rows], "rad/s")
    res["frf_peak_Am"] = ([r["Am_peak_m"] for r in frf_rows], "m")
    if pr is not None:
        res["phase_resonance_stop_reason"] = (pr.stop_reason, None)
        res["phase_resonance_w_start"] = (float(pr.w[0]), "rad/s")
    if dn is not None:
        res["dnnm_stop_reason"] = (dn.stop_reason, None)
        res["dnnm_w0_start"] = (float(dn.w0[0]), "rad/s")
    if bb1 is not None:
        res["backbone_nh1_stop_reason"] = (bb1.stop_reason, None)
    res["failures"] = (len(failures), None)
    details = {"backbone": {"singular_points": bb.singular_points, "jumps": bb.jumps,
                            "ridges_added_by_checks": sum(r["origin"] == "check"
                                                          for r in bb.ridges),
                            "check_forces_N": [c["alpha"] for c in bb.checks]},
               "frfs": frf_rows,
               "frf_note": "peak = largest sampled point of each forced response"}
    if failures:
        details["failures"] = failures
    return summary_record(STUDY, params, res, details=details,
                          notes=[f"not computed: {f}" for f in failures])


def run(args) -> int:
    s = _settings(args)
    from .common import StudyDir

    d = StudyDir(args.out, STUDY, {k: v for k, v in s.items() if k != "builder"},
                 overwrite=args.overwrite, figures=not args.no_figures, quiet=args.quiet)

    import warnings

    import numpy as np

    from ..errors import FesubError
    from ..hbm import backbone, dnnm, linear_modes, phase_resonance, plots
    from ..models import build

    progress = not args.quiet
    nh, a0, a1, wg = s["nh"], s["alpha_min"], s["alpha_max"], s["w_global"]
    hz = s["model"] != "jenkins"
    case = f"{s['model']}, Nh = {nh}"
    sy = build(s["builder"], nh=nh)
    # a part that cannot be computed is recorded (and recomputed by a rerun), the run goes on
    recoverable = (FesubError, ArithmeticError, ValueError, np.linalg.LinAlgError)
    failures = []

    def trace_backbone(system):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return backbone(system, (a0, a1), tuple(s["w_window"]), w_global=wg,
                            global_checks=s["global_checks"], max_steps=s["max_steps"],
                            progress=progress)

    bb = d.compute("backbone", lambda: trace_backbone(sy))
    d.say(f"backbone: {len(bb.alpha)} points, {bb.stop_reason}")
    frfs = []
    for k, a in enumerate(np.geomspace(a0, a1, s["frf_levels"]) if s["frf_levels"] else []):
        i = int(np.argmin(np.abs(np.log(bb.alpha / a))))
        try:
            frfs.append((f"frf_{k}", d.compute(f"frf_{k}", lambda i=i: _frf_around(
                sy, bb.alpha[i], bb.w[i], bb.Q[i], FRF_SPAN))))
        except recoverable as exc:
            failures.append(f"FRF at {a:.3g} N: {exc}")
    pr = dn = bb1 = None
    if s["compare"]:
        try:
            pr = d.compute("phase_resonance",
                           lambda: phase_resonance(sy, (a0, a1), bb.w[0], progress=progress))
        except recoverable as exc:
            failures.append(f"phase resonance: {exc}")

        def trace_dnnm():
            M, _, K = sy.linear_matrices(stuck=True)
            wm, V = linear_modes(M, K)
            mode = int(np.argmin(np.abs(wm - bb.w[0])))
            phik = abs(V[sy.dof, mode])
            return dnnm(sy, (bb.Am[0] * math.sqrt(2) / phik, bb.Am[-1] * math.sqrt(2) / phik),
                        mode=mode, progress=progress)

        try:
            dn = d.compute("dnnm", trace_dnnm)
        except recoverable as exc:
            failures.append(f"dNNM: {exc}")
        if nh != 1:
            try:
                bb1 = d.compute("backbone_nh1",
                                lambda: trace_backbone(build(s["builder"], nh=1)))
            except recoverable as exc:
                failures.append(f"Nh = 1 backbone: {exc}")
    if d.figures_on:
        plots.frf_family([f for _, f in frfs], bb, hz=hz, case=case, path=d.figure(
            "frf_family.png", f"Forced responses around the backbone ({case})"))
        plots.contact_timeline(sy, bb, case=case, path=d.figure(
            "contact_timeline.png", f"Stick, slip and separation of contact 0 over one period "
                                    f"along the backbone ({case})"))
        plots.energy(sy, bb, dn, case=case, path=d.figure(
            "energy.png", f"Friction dissipation and equivalent damping ({case})"))
        if s["compare"]:
            zoom = None
            if bb.singular_points:
                sp = bb.singular_points[0]["alpha"]
                zoom = (sp / 3, sp * 3)
            plots.method_comparison(bb, pr, dn, zoom=zoom, hz=hz, case=case, path=d.figure(
                "method_comparison.png",
                f"Backbone by the optimality system, phase resonance and dNNM ({case})"))
            if bb1 is not None:
                plots.nh_comparison({1: bb1, nh: bb}, hz=hz, case=s["model"], path=d.figure(
                    "nh_comparison.png", f"Backbones with Nh = 1 and Nh = {nh} ({s['model']})"))
    d.finish(_summary(s, bb, frfs, pr, dn, bb1, failures))
    for f in failures:  # recorded in summary.json; a rerun tries these parts again
        print(f"fesub backbone: warning: not computed: {f}", file=sys.stderr)
    d.say(f"fesub backbone: {s['model']}, Nh = {nh}: {len(bb.alpha)} backbone points, "
          f"{len(bb.singular_points)} singular points ({len(bb.jumps)} jumps between ridges), "
          f"{bb.w[0] / TWO_PI:.6g} -> {bb.w[-1] / TWO_PI:.6g} Hz; results in {d.path}")
    return 0
