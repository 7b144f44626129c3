"""``fesub joint``: the bolted lap-joint beam (after the Brake-Reuss beam) from its bolt preload to
the amplitude-dependent frequency and damping of its first bending mode.

The model (:mod:`fesub.models.bolted_beam`: two Craig-Bampton half-beams, node-to-node 3D
friction contacts over the lap, three bolts, reduced onto the contacts' relative displacements)
is built from the bundled Gmsh mesh. Parts of the output folder, each written as it finishes and
reused by a rerun:

* ``preload.nc``: the static contact state under the bolts and the stuck-interface modes
  (:meth:`fesub.hbm.BoltedJoint.preload`);
* ``dnnm.nc``: the damped nonlinear mode of the first vertical bending mode about it
  (:func:`fesub.hbm.dnnm`): frequency (rad/s) and damping ratio against the modal amplitude,
  with the mean of the contact forces solved with the harmonics (the mean opening of the lap
  that the vibration builds; ``--decoupled`` drops it);
* ``interface.nc``: pressure, slip, opening and dissipation over the lap at a few points of the
  backbone (:func:`fesub.hbm.interface_states`);
* with ``--ring-down N``: ``ring_down.nc``, a free decay of the same reduced model started at
  the top of the backbone (:func:`fesub.hbm.ring_down`: ``--ring-down-steps`` per period, 512
  by default, ``hht = 0.3``),
  its modal coordinate read half-swing by half-swing, and ``decay_prediction.nc``, the decay the
  backbone predicts by its energy balance between turning points
  (:func:`fesub.hbm.decay_prediction`, on the backbone's points over the decay's half-swings).

``summary.json`` and ``report.html`` complete the folder; the summary records the wall time and
the peak memory of the run's parts.
"""

from __future__ import annotations

import math

from .common import add_common, integer, number

STUDY = "joint"
TWO_PI = 2 * math.pi


def add_arguments(parser) -> None:
    parser.add_argument("--nh", type=integer(ge=1), default=3, metavar="N",
                        help="number of harmonics")
    parser.add_argument("--a-min", type=number(gt=0, unit="sqrt(kg) m"), default=1e-6,
                        metavar="A", help="smallest modal amplitude [sqrt(kg) m] of the backbone")
    parser.add_argument("--a-max", type=number(gt=0, unit="sqrt(kg) m"), default=5e-4,
                        metavar="A", help="largest modal amplitude [sqrt(kg) m] of the backbone")
    parser.add_argument("--max-steps", type=integer(ge=1), default=400, metavar="N",
                        help="continuation steps [-] allowed for the backbone")
    parser.add_argument("--preload", type=number(gt=0, unit="N"), default=12e3, metavar="P",
                        help="tension [N] of each bolt")
    parser.add_argument("--mu", type=number(gt=0, unit="-"), default=0.6, metavar="MU",
                        help="friction coefficient [-]")
    parser.add_argument("--kn-area", type=number(gt=0, unit="N/m^3"), default=1e13,
                        metavar="K", help="normal interface stiffness per unit area [N/m^3] "
                                          "(tangential: Mindlin's 2 (1 - nu) / (2 - nu) of it)")
    parser.add_argument("--zeta", type=number(gt=0, unit="-"), default=5e-4, metavar="Z",
                        help="linear (material) damping ratio [-] of the stuck bending mode")
    parser.add_argument("--maps", type=integer(ge=0), default=3, metavar="N",
                        help="backbone points [-] at which the interface is mapped (spread in "
                             "log amplitude over the top decade of the range)")
    parser.add_argument("--decoupled", action="store_true",
                        help="drop the mean of the contact forces (the static/dynamic decoupled "
                             "scheme: about 3x faster, but the mean opening of the lap that "
                             "the vibration builds is lost)")
    parser.add_argument("--ring-down", type=integer(ge=0), default=0, metavar="N",
                        help="periods [-] of a free decay started at the top of the backbone and "
                             "set beside it and beside the decay it predicts (0: none; else >= 3)")
    parser.add_argument("--ring-down-steps", type=integer(ge=64), default=512, metavar="N",
                        help="time steps [-] per period of the free decay (at the top of the "
                             "default range its damping ratio is within 1.3 %% of 2048 steps' "
                             "with 512, 4.4 %% with 256)")
    parser.add_argument("--mesh", default=None, metavar="FILE",
                        help="mesh file with the bundled mesh's physical groups (default: the "
                             "bundled brake_reuss.msh)")
    add_common(parser, STUDY)


def _settings(args):
    from ..errors import ParameterError

    if not args.a_min < args.a_max:
        raise ParameterError(f"--a-min must be < --a-max, got {args.a_min:g} and {args.a_max:g}")
    if 0 < args.ring_down < 3:
        raise ParameterError(f"--ring-down must be 0 (none) or 3 periods or more, got "
                             f"{args.ring_down}")
    return dict(nh=args.nh, a_min=args.a_min, a_max=args.a_max, max_steps=args.max_steps,
                preload=args.preload, mu=args.mu, kn_area=args.kn_area, zeta=args.zeta,
                maps=args.maps, mesh=args.mesh, mean=not args.decoupled,
                ring_down=args.ring_down, ring_down_steps=args.ring_down_steps)


def _decay(hb, dn, weights, periods, steps, progress, timed):
    """The free decay from the top of the backbone and the decay the backbone predicts, on its
    points whose half-swings cover the decay's (one more at each end)."""
    import numpy as np

    from ..hbm import decay_prediction, ring_down
    from ..hbm.ringdown import swing

    rd = timed("ring_down", lambda: ring_down(hb, dn, len(dn.a) - 1, periods=periods,
                                              steps_per_period=steps, observe=weights,
                                              progress=progress, hht=0.3))
    S = np.array([swing(q, hb.n, hb.nh, weights) for q in dn.Q])
    order = np.argsort(S)
    lo = max(int(np.searchsorted(S[order], rd.amp.min())) - 1, 0)
    hi = min(int(np.searchsorted(S[order], rd.amp.max(), side="right")) + 1, len(S))
    lo = max(min(lo, hi - 3), 0)                  # three points at least
    pick = order[lo:max(hi, lo + 3)]
    pred = timed("decay_prediction", lambda: decay_prediction(hb, dn, weights, points=pick))
    return rd, pred


def _decay_results(rd, pred, dn, hb):
    """Summary entries of the ring-down against the backbone and the decay it predicts."""
    import numpy as np

    dw, dz = rd.compare(dn, hb.n, hb.nh)
    _, dzp = rd.compare_prediction(pred)
    ok = np.isfinite(dz) & np.isfinite(dzp)
    res = {"ring_down_readings": (int(ok.sum()), None),
           "ring_down_amp_first": (float(rd.amp[0]), "sqrt(kg) m"),
           "ring_down_amp_last": (float(rd.amp[-1]), "sqrt(kg) m")}
    if ok.any():
        res.update(ring_down_dw_max=(float(np.abs(dw[ok]).max()), "1"),
                   ring_down_dzeta_backbone_min=(float(dz[ok].min()), "1"),
                   ring_down_dzeta_backbone_max=(float(dz[ok].max()), "1"),
                   ring_down_dzeta_prediction_min=(float(dzp[ok].min()), "1"),
                   ring_down_dzeta_prediction_max=(float(dzp[ok].max()), "1"))
    return res


def _summary(s, model, state, dn, maps, mode, times, peak_mb, decay=None, hb=None):
    import numpy as np

    from ..io import summary_record

    f = np.asarray(dn.w0) / TWO_PI
    f0 = float(state.freq_hz[mode])
    h0 = 1 if s["mean"] else 0
    tip = model.tip_amplitude(dn.Q, h0)
    ipk = int(np.argmax(f))
    params = {"nh": (s["nh"], None), "a_min": (s["a_min"], "sqrt(kg) m"),
              "a_max": (s["a_max"], "sqrt(kg) m"), "max_steps": (s["max_steps"], None),
              "preload": (s["preload"], "N"), "mu": (s["mu"], "1"),
              "kn_area": (s["kn_area"], "N/m^3"),
              "kt_area": (model.params.kt_per_area, "N/m^3"), "zeta": (s["zeta"], "1"),
              "maps": (s["maps"], None), "mesh": (model.info["mesh"], None),
              "mean": (bool(s["mean"]), None), "ring_down": (s["ring_down"], None),
              "ring_down_steps": (s["ring_down_steps"], None)}
    res = {"contacts": (model.n_contacts, None),
           "reduced_coordinates": (model.joint.n, None),
           "fe_dofs": (model.info["dofs"], None),
           "preload_open": (state.counts["open"], None),
           "preload_stuck": (state.counts["stuck"], None),
           "preload_slip": (state.counts["slip"], None),
           "contact_resultant": (state.resultant, "N"),
           "bolt_loads": (float(np.sum(state.bolt_load)), "N"),
           "f_stuck": (f0, "Hz"),
           "f_all_closed": (float(model.freq_full_hz[state.n_rigid]), "Hz"),
           "backbone_points": (len(dn.a), None), "backbone_stop_reason": (dn.stop_reason, None),
           "f_start": (float(f[0]), "Hz"), "zeta_start": (float(dn.zeta[0]), "1"),
           "f_end": (float(f[-1]), "Hz"), "zeta_end": (float(dn.zeta[-1]), "1"),
           "f_change_end": (float(f[-1] / f[0] - 1), "1"),
           "f_peak": (float(f[ipk]), "Hz"), "f_change_peak": (float(f[ipk] / f[0] - 1), "1"),
           "a_end": (float(dn.a[-1]), "sqrt(kg) m"),
           "tip_amplitude_start": (float(tip[0]), "m"),
           "tip_amplitude_end": (float(tip[-1]), "m"),
           "tip_acceleration_end": (float(tip[-1] * dn.w0[-1] ** 2 / 9.80665), "g"),
           "time_model": (times["model"], "s"), "time_preload": (times.get("preload", 0.0), "s"),
           "time_backbone": (times.get("dnnm", 0.0), "s"), "peak_memory": (peak_mb, "MB")}
    if decay is not None:
        res.update(_decay_results(*decay, dn, hb))
        res["time_ring_down"] = (times.get("ring_down", 0.0) + times.get("decay_prediction", 0.0),
                                 "s")
    details = {"stuck_frequencies_hz": [float(x) for x in state.freq_hz],
               "first_bending_mode_index": mode,
               "times_note": "wall time of the parts computed in this run (0: reused)",
               "damping_note": "the damping ratio needs more harmonics than the frequency: at "
                               "the top of the default range a free decay (512 steps per "
                               "period) reads it 16-27 % above Nh = 3, and one of 256 steps "
                               "7-10 % above Nh = 7 (--ring-down; user guide, bolted joint)"}
    if maps is not None:
        res["maps_tip_amplitude"] = (maps.amplitude, "m")
        res["maps_frequency"] = (maps.w / TWO_PI, "Hz")
        res["maps_slipping_share"] = ((maps.slip > 0).mean(axis=1), "1")
    return summary_record(STUDY, params, res, details=details)


def run(args) -> int:
    s = _settings(args)
    from .common import StudyDir

    d = StudyDir(args.out, STUDY, s, overwrite=args.overwrite, figures=not args.no_figures,
                 quiet=args.quiet)

    import resource
    import time

    import numpy as np

    from ..hbm import dnnm, interface_states, plots
    from ..hbm.nnm import linear_modes
    from ..models.bolted_beam import build

    progress = not args.quiet
    times = {}
    t0 = time.perf_counter()
    d.say("building the model (mesh, two Craig-Bampton halves, reduction onto the contacts)")
    model = build(mesh=s["mesh"], preload=s["preload"], mu=s["mu"], kn_area=s["kn_area"],
                  zeta=s["zeta"])
    times["model"] = time.perf_counter() - t0
    d.say(f"model: {model.info['dofs']} FE DOFs, {model.n_contacts} contacts, "
          f"{model.joint.n} reduced coordinates ({times['model']:.1f} s)")

    def timed(name, fn):
        def run_part():
            t = time.perf_counter()
            out = fn()
            times[name] = time.perf_counter() - t
            return out
        return d.compute(name, run_part)

    state = timed("preload", lambda: model.joint.preload(n_modes=12))
    mode = model.bending_mode(state.shapes, state.freq_hz)
    w1 = TWO_PI * state.freq_hz[mode]
    d.say(f"preload: {state.counts}, contact resultant {state.resultant:.6g} N; first bending "
          f"mode {state.freq_hz[mode]:.2f} Hz")
    drive = int(np.argmax(np.abs(state.shapes[:, mode])))
    hb = model.hb_system(state, s["nh"], w1, dof=drive, constant=s["mean"])
    # the dNNM starts from the all-stuck modes (open contacts closed too) and its Newton finds
    # the stuck-interface limit: follow the all-stuck mode closest in shape
    M, _, K = hb.linear_matrices(stuck=True)
    _, V = linear_modes(M, K)
    start = int(np.argmax(np.abs(V.T @ (M @ state.shapes[:, mode]))))
    # the joint's contacts change state at many amplitudes: kinks passed at a step of 1e-3
    # (the default 1e-5 takes half as many steps again to locate each of them)
    dn = timed("dnnm", lambda: dnnm(hb, (s["a_min"], s["a_max"]), start, force_dof=drive,
                                    max_steps=s["max_steps"], progress=progress, kink_ds=1e-3))
    d.say(f"backbone: {len(dn.a)} points ({dn.stop_reason}), {dn.w0[0] / TWO_PI:.2f} -> "
          f"{dn.w0[-1] / TWO_PI:.2f} Hz, damping ratio {dn.zeta[0]:.3g} -> {dn.zeta[-1]:.3g}")
    maps = None
    if s["maps"]:
        a = np.asarray(dn.a)
        targets = np.geomspace(a[-1] / 10, a[-1], s["maps"]) if s["maps"] > 1 else a[-1:]
        pick = sorted({int(np.argmin(np.abs(np.log(a / t)))) for t in targets})
        maps = timed("interface", lambda: interface_states(
            hb, dn.Q[pick], dn.w0[pick], a[pick],
            model.tip_amplitude(dn.Q[pick], hb.h0), model.xy, model.area))
    decay = None
    if s["ring_down"]:
        phi = state.shapes[:, mode]
        weights = hb.M @ phi / math.sqrt(phi @ hb.M @ phi)     # the bending mode's coordinate
        decay = _decay(hb, dn, weights, s["ring_down"], s["ring_down_steps"], progress, timed)
        d.say(f"ring-down: {len(decay[0].tc)} readings from a modal amplitude of "
              f"{decay[0].amp[0]:.3g} to {decay[0].amp[-1]:.3g}")
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    if d.figures_on:
        case = f"{model.n_contacts} contacts, Nh = {s['nh']}"
        plots.preload_map(state, model.xy, case=f"{s['preload'] / 1e3:g} kN per bolt",
                          path=d.figure("preload_map.png", "Contact state under the bolt "
                                        "preload over the lap (x along the beam, y across)"))
        plots.joint_backbone(dn, state, mode=mode, amplitude=model.tip_amplitude(
            dn.Q, hb.h0), amplitude_label="tip displacement amplitude [m]",
            case=case, path=d.figure("backbone.png", "Frequency and damping ratio of the "
                                     "first bending mode against its amplitude (dNNM)"))
        if maps is not None:
            plots.interface_maps(maps, case=case, path=d.figure(
                "interface.png", "Contact pressure and slip over the lap at points of the "
                                 "backbone"))
        if decay is not None:
            plots.ring_down_comparison(*decay, dn, hb.n, hb.nh, case=case, unit="sqrt(kg) m",
                                       path=d.figure(
                "ring_down.png", "A free decay from the top of the backbone, read half-swing "
                                 "by half-swing, against the backbone and the decay it "
                                 "predicts"))
    d.finish(_summary(s, model, state, dn, maps, mode, times, peak_mb, decay, hb))
    d.say(f"fesub joint: stuck {state.freq_hz[mode]:.2f} Hz; at the top of the range "
          f"{dn.w0[-1] / TWO_PI:.2f} Hz ({100 * (dn.w0[-1] / dn.w0[0] - 1):+.2f} %), damping "
          f"ratio {100 * dn.zeta[-1]:.3g} %; results in {d.path}")
    return 0
