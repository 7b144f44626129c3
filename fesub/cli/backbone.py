"""``fesub backbone``: backbone curves of frictional structures by harmonic balance.

Computes the backbone (Lagrange optimality system, continuation in log force), a family of
forced responses, and optionally the phase-resonance and dNNM baselines and an Nh = 1
comparison; writes PNG figures and ``.npz`` + ``.json`` results to ``--out``.
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import numpy as np

from ..errors import ParameterError

MODELS = {
    # name: (builder key, stage-1 window (rad/s), global window or None, default alpha range)
    "jenkins": ("jenkins_1dof", (1.2, 1.6), None, (0.002, 0.2)),
    "beam": ("cantilever_contact", (0.95 * 2 * math.pi * 915.2, 1.05 * 2 * math.pi * 915.2),
             (2 * math.pi * 150, 2 * math.pi * 1000), (0.01, 1000.0)),
    "blade": ("blade_damper_blade", (2 * math.pi * 200, 2 * math.pi * 220), None, (0.01, 1000.0)),
}


def add_arguments(parser) -> None:
    parser.add_argument("--model", choices=sorted(MODELS), default="jenkins",
                        help="jenkins (1-DOF reference), beam (cantilever + pad), blade "
                             "(blade-damper-blade)")
    parser.add_argument("--nh", type=int, default=None, help="number of harmonics (default: "
                        "7 jenkins, 3 beam/blade)")
    parser.add_argument("--alpha-min", type=float, default=None, help="smallest force (N)")
    parser.add_argument("--alpha-max", type=float, default=None, help="largest force (N)")
    parser.add_argument("--frf-levels", type=int, default=5,
                        help="number of forced-response curves in the family plot")
    parser.add_argument("--compare", action="store_true",
                        help="also compute phase resonance, dNNM and the Nh = 1 backbone")
    parser.add_argument("--global-checks", type=float, default=2.0,
                        help="check forces per decade at which the forced response is swept "
                             "over the global window for ridges the backbone does not follow "
                             "(models with a global window: beam; 0: no checks)")
    parser.add_argument("--out", default="backbone_out", help="output directory")
    parser.add_argument("--no-progress", action="store_true", help="hide progress bars")


def _frf_around(sy, a, w0, Q0, rel):
    from ..hbm.analysis import FRF, forced_response

    lo = forced_response(sy, a, (w0, w0 * (1 - rel)), Q0=Q0)
    hi = forced_response(sy, a, (w0, w0 * (1 + rel)), Q0=Q0)
    return FRF(a, np.concatenate([lo.w[::-1], hi.w[1:]]), np.concatenate([lo.Q[::-1], hi.Q[1:]]),
               np.concatenate([lo.Am[::-1], hi.Am[1:]]), "merged")


def run(args) -> int:
    from ..hbm import plots
    from ..hbm.analysis import backbone, dnnm, linear_modes, phase_resonance
    from ..hbm.models import build_model

    key, window, wglob, arange = MODELS[args.model]
    nh = args.nh if args.nh is not None else (7 if args.model == "jenkins" else 3)
    a0 = args.alpha_min if args.alpha_min is not None else arange[0]
    a1 = args.alpha_max if args.alpha_max is not None else arange[1]
    if not 0 < a0 < a1:
        raise ParameterError(f"need 0 < --alpha-min < --alpha-max, got {a0}, {a1}")
    if args.frf_levels < 0:
        raise ParameterError(f"--frf-levels must be >= 0, got {args.frf_levels}")
    if not args.global_checks >= 0:
        raise ParameterError(f"--global-checks must be >= 0, got {args.global_checks}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    progress = not args.no_progress
    sy = build_model(key, {"nh": nh})
    summary = {"model": args.model, "nh": nh, "alpha_range": [a0, a1]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        bb = backbone(sy, (a0, a1), window, w_global=wglob, global_checks=args.global_checks,
                      progress=progress)
    bb.save(out / "backbone.npz")
    summary["backbone"] = {"points": int(len(bb.alpha)), "stop_reason": bb.stop_reason,
                           "singular_points": bb.singular_points,
                           "jumps": bb.jumps,
                           "ridges_added_by_checks": sum(r["origin"] == "check"
                                                         for r in bb.ridges),
                           "check_forces": [c["alpha"] for c in bb.checks],
                           "w_start_hz": float(bb.w[0] / (2 * math.pi)),
                           "w_end_hz": float(bb.w[-1] / (2 * math.pi))}
    # forced-response family around the backbone
    frfs = []
    for a in np.geomspace(a0, a1, args.frf_levels) if args.frf_levels else []:
        i = int(np.argmin(np.abs(np.log(bb.alpha / a))))
        try:
            frfs.append(_frf_around(sy, bb.alpha[i], bb.w[i], bb.Q[i], 0.06))
        except Exception as exc:  # noqa: BLE001 - reported, the run goes on
            summary.setdefault("failures", []).append(f"FRF at {a:.3g} N: {exc}")
    for k, f in enumerate(frfs):
        np.savez(out / f"frf_{k}.npz", alpha=f.alpha, w=f.w, Am=f.Am)
    plots.frf_family(frfs, bb, hz=args.model != "jenkins", path=out / "frf_family.png")
    plots.contact_timeline(sy, bb, path=out / "contact_timeline.png")
    pr = dn = None
    if args.compare:
        try:
            pr = phase_resonance(sy, (a0, a1), bb.w[0], progress=progress)
            np.savez(out / "phase_resonance.npz", alpha=pr.alpha, w=pr.w, Am=pr.Am)
            summary["phase_resonance"] = {"points": int(len(pr.alpha)),
                                          "stop_reason": pr.stop_reason}
        except Exception as exc:  # noqa: BLE001
            summary.setdefault("failures", []).append(f"phase resonance: {exc}")
        try:
            M, _, K = sy.linear_matrices(stuck=True)
            wm, V = linear_modes(M, K)
            mode = int(np.argmin(np.abs(wm - bb.w[0])))
            phik = abs(V[sy.dof, mode])
            dn = dnnm(sy, (bb.Am[0] * math.sqrt(2) / phik, bb.Am[-1] * math.sqrt(2) / phik),
                      mode=mode, progress=progress)
            np.savez(out / "dnnm.npz", a=dn.a, w0=dn.w0, xi=dn.xi, F_eq=dn.F_eq, Am=dn.Am)
            summary["dnnm"] = {"points": int(len(dn.a)), "stop_reason": dn.stop_reason}
        except Exception as exc:  # noqa: BLE001
            summary.setdefault("failures", []).append(f"dNNM: {exc}")
        zoom = None
        if bb.singular_points:
            s = bb.singular_points[0]["alpha"]
            zoom = (s / 3, s * 3)
        plots.method_comparison(bb, pr, dn, zoom=zoom, hz=args.model != "jenkins",
                                path=out / "method_comparison.png")
        if nh != 1:
            try:
                s1 = build_model(key, {"nh": 1})
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    bb1 = backbone(s1, (a0, a1), window, w_global=wglob,
                                   global_checks=args.global_checks, progress=progress)
                bb1.save(out / "backbone_nh1.npz")
                plots.nh_comparison({1: bb1, nh: bb}, hz=args.model != "jenkins",
                                    path=out / "nh_comparison.png")
            except Exception as exc:  # noqa: BLE001
                summary.setdefault("failures", []).append(f"Nh = 1 backbone: {exc}")
    plots.energy(sy, bb, dn, path=out / "energy.png")
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=float))
    print(f"fesub backbone: {args.model}, Nh = {nh}: {len(bb.alpha)} backbone points, "
          f"{len(bb.singular_points)} singular points ({len(bb.jumps)} jumps between ridges), "
          f"{bb.w[0] / (2 * math.pi):.6g} -> {bb.w[-1] / (2 * math.pi):.6g} Hz; results in {out}")
    return 0
