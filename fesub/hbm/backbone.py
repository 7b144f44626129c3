"""Backbone curves: the ridge of the forced-response surface, traced on the optimality system
(:mod:`fesub.hbm.optimality`) by continuation in ``s = log(alpha)``.

Stages (paper 3.2):

1. forced response at ``alpha_min`` over a frequency window, its maximum located;
2. multipliers from ``lstsq([R_Q^T; (D'Q)^T], [-grad Am; 0])`` (equivalent to the paper's
   continuation in ``eta_Am`` from 0 to 1, consistent at the extremum);
3. continuation in ``log alpha``;
4. on a corrector failure (singular point) restart at ``log alpha + 1e-3`` with stages 1-3.

With a global frequency window the backbone is the global maximum of the forced response: the
upper envelope of the ridge from stage 1, of the ridges traced down from the peaks at the
largest force, and of the ridges seeded by forced responses swept over the window at check
forces ("global checks", :mod:`fesub.hbm.ridges`); it jumps where another ridge rises above the
followed one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..continuation import continue_branch
from ..errors import ConvergenceError, ParameterError, check_positive
from ..atomic import json_default
from ..io import summary_record
from ._common import Curve, go_on, increasing_range, single_threaded, step_count
from .condense import CondensedSystem, worth_condensing
from .forced import forced_response, frf_peak
from .optimality import backbone_point, optimality_start, start_multipliers
from .ridges import (SAME_RIDGE_W, check_global_peaks, ridge_from_pieces, ridge_summary,
                     ridges_from_alpha_max, upper_envelope, window_maxima)
from .stability import Stability, backbone_stability, with_stability
from .system import HBSystem

__all__ = ["Backbone", "backbone"]


def _plain(obj):
    """``obj`` as plain JSON values (tuples as lists, NumPy scalars as Python numbers): the
    records of a result are then equal to what its saved file gives back."""
    import json

    return json.loads(json.dumps(obj, default=json_default))


@dataclass
class Backbone(Curve):
    """Backbone (ridge of the forced-response surface).

    The records are plain JSON values (lists, not tuples), as a saved file gives them back.
    ``stop_reason == 'interrupted'`` (``status``): a KeyboardInterrupt stopped the trace; the
    backbone then holds the points of the ridge from ``w_window`` computed before it.
    Saved files (``save``/``fesub.load``): dimensions ``point`` and ``coefficient``, ``alpha``
    (N) the coordinate along ``point``, ``w`` in rad/s, the records as attributes.

    Parameters
    ----------
    alpha : (npts,) ndarray
        Force amplitude (N).
    w : (npts,) ndarray
        Peak frequency (rad/s).
    Am : (npts,) ndarray
        Peak RMS amplitude at the monitor DOF (m).
    Q : (npts, N) ndarray
        Harmonic coefficients (m).
    lam : (npts, N) ndarray
        Multipliers (m/N).
    eta_alpha : (npts,) ndarray
        ``F_ex^T lam = -dAm*/dalpha`` (m/N).
    segments : (npts,) ndarray
        Segment index (increments at every restart and at every jump).
    singular_points : list of dict, optional
        ``alpha`` (N), ``w`` (rad/s), ``reason``: restarts of the continuation and jumps of the
        global maximum to another ridge (reason ``'global maximum jumps to another ridge (from
        w = ... rad/s)'``).
    events : list, optional
        Continuation events (e.g. 'slip_onset_0' = contact 0 starts to slip).
    newton_iters : (npts,) ndarray, optional
        Corrector iterations of each point.
    stop_reason : str, optional
        Why the trace stopped (``'interrupted'``: a KeyboardInterrupt).
    ridge : (npts,) ndarray, optional
        Index into ``ridges`` of the ridge each point lies on.
    ridges : list of dict, optional
        The candidate ridges whose upper envelope is the backbone: ``origin`` (``'w_window'``:
        traced from the stage-1 peak; ``'alpha_max'``: traced down from a peak at the largest
        force; ``'check'``: traced both ways from a peak found by a global check),
        ``alpha_seed``/``w_seed`` (N, rad/s) where it was seeded, ``alpha``/``w`` (N, rad/s)
        its range, ``ends`` (why it ends below/above), ``npts`` and ``on_backbone`` (number of
        its points kept).
    jumps : list of dict, optional
        Where the backbone switches ridge: ``alpha`` (N; the fold where the new ridge is born,
        the end of the old one, or the crossing of their amplitudes; both ridges have a point
        there), ``w_from``/``w_to`` (rad/s), ``Am_from``/``Am_to`` (m; ``Am_from`` None when
        the jump could not be located and the old ridge's last point lies below ``alpha``;
        ``w_from`` is then that point's), ``ridge_from``/``ridge_to``.
    checks : list of dict, optional
        One per global check force: ``alpha`` (N), ``method`` (``'linear'``: every contact
        stays stuck over the window, the stuck-linear peaks are exact; ``'sweep'``: forced
        response continued over the window), ``peaks`` (``w``, ``Am``: the sampled peak,
        solved on the optimality system where it seeded a ridge; ``ridge``: the ridge it lies
        on, or None when it could not be traced), ``missed`` (frequency intervals (rad/s) the
        sweep could not cover).
    stability : Stability or None, optional
        Floquet multipliers and stability of every point (``backbone(..., stability=True)``).
    """

    alpha: np.ndarray
    w: np.ndarray
    Am: np.ndarray
    Q: np.ndarray
    lam: np.ndarray
    eta_alpha: np.ndarray
    segments: np.ndarray
    singular_points: list = field(default_factory=list)
    events: list = field(default_factory=list)
    newton_iters: np.ndarray | None = None
    stop_reason: str = ""
    ridge: np.ndarray | None = None
    ridges: list = field(default_factory=list)
    jumps: list = field(default_factory=list)
    checks: list = field(default_factory=list)
    stability: Stability | None = None

    kind = "backbone"

    def __post_init__(self):
        for name in ("singular_points", "events", "ridges", "jumps", "checks"):
            setattr(self, name, _plain(getattr(self, name)))

    def to_xarray(self):
        """Dataset with dimensions ``point`` and ``coefficient``; ``alpha`` (N) the coordinate
        along ``point``, frequencies in rad/s; the records (singular points, events, ridges,
        jumps, checks) as attributes."""
        pt = "point"
        data = {"w": (pt, np.asarray(self.w, float),
                      {"units": "rad/s", "long_name": "peak frequency"}),
                "Am": (pt, np.asarray(self.Am, float),
                       {"units": "m", "long_name": "peak RMS amplitude at the monitor DOF"}),
                "Q": self._Q(self.Q),
                "lam": (("point", "coefficient"), np.asarray(self.lam, float),
                        {"units": "m/N", "long_name": "multipliers of the optimality system"}),
                "eta_alpha": (pt, np.asarray(self.eta_alpha, float),
                              {"units": "m/N", "long_name": "F_ex^T lam = -dAm*/dalpha"}),
                "segments": (pt, np.asarray(self.segments, np.int64),
                             {"units": "1", "long_name": "segment index"})}
        if self.newton_iters is not None:
            data["newton_iters"] = (pt, np.asarray(self.newton_iters, np.int64),
                                    {"units": "1", "long_name": "corrector iterations"})
        if self.ridge is not None:
            data["ridge"] = (pt, np.asarray(self.ridge, np.int64),
                             {"units": "1", "long_name": "index into the ridges record"})
        ds = self._dataset(
            data, {"alpha": (pt, np.asarray(self.alpha, float),
                             {"units": "N", "long_name": "force amplitude"})},
            {"stop_reason": self.stop_reason, "singular_points": self.singular_points,
             "events": self.events, "ridges": self.ridges, "jumps": self.jumps,
             "checks": self.checks})
        return with_stability(ds, self.stability)

    @classmethod
    def from_xarray(cls, ds):
        a = ds.attrs

        def opt(name):
            return ds[name].values.copy() if name in ds else None

        bb = cls(alpha=ds["alpha"].values.copy(), w=ds["w"].values.copy(),
                 Am=ds["Am"].values.copy(), Q=ds["Q"].values.copy(),
                 lam=ds["lam"].values.copy(), eta_alpha=ds["eta_alpha"].values.copy(),
                 segments=ds["segments"].values.copy(), singular_points=a["singular_points"],
                 events=a["events"], newton_iters=opt("newton_iters"),
                 stop_reason=a["stop_reason"], ridge=opt("ridge"), ridges=a["ridges"],
                 jumps=a["jumps"], checks=a["checks"])
        bb.stability = Stability.from_dataset(ds, bb.w, bb.alpha, bb.Am)
        return bb

    def summary(self) -> dict:
        res = {"points": (len(self.alpha), None), "stop_reason": (self.stop_reason, None),
               "singular_points": (len(self.singular_points), None),
               "jumps": (len(self.jumps), None)}
        par = {}
        if len(self.alpha):
            par = {"alpha_first": (float(self.alpha[0]), "N"),
                   "alpha_last": (float(self.alpha[-1]), "N")}
            res.update(w_first=(float(self.w[0]), "rad/s"), w_last=(float(self.w[-1]), "rad/s"),
                       Am_first=(float(self.Am[0]), "m"), Am_last=(float(self.Am[-1]), "m"))
        return summary_record(self.kind, par, res)


def _expanded(red, bb):
    """The backbone ``bb`` of the condensed system ``red`` with its harmonics and multipliers
    expanded to every DOF of ``red.full``."""
    Q = np.array([red.expand(q, w) for q, w in zip(bb.Q, bb.w)]).reshape(-1, red.full.N)
    lam = np.array([red.expand_multipliers(lr, w)
                    for lr, w in zip(bb.lam, bb.w)]).reshape(-1, red.full.N)
    return Backbone(alpha=bb.alpha, w=bb.w, Am=bb.Am, Q=Q, lam=lam,
                    eta_alpha=lam @ red.full.fex, segments=bb.segments,
                    singular_points=bb.singular_points, events=bb.events,
                    newton_iters=bb.newton_iters, stop_reason=bb.stop_reason, ridge=bb.ridge,
                    ridges=bb.ridges, jumps=bb.jumps, checks=bb.checks)


def _peak_start(sys, alpha, w_window):
    """Stage 1: frequency (rad/s) and harmonic coefficients (m) of the largest peak of the forced
    response at force ``alpha`` (N) over ``w_window`` (rad/s)."""
    frf = go_on(forced_response(sys, alpha, w_window))
    wp, _, Qp = frf_peak(sys, frf)
    return wp, Qp


@single_threaded
def backbone(sys: HBSystem, alpha_range, w_window, *, ds=0.05, ds_max=1.0, ds_min=1e-3,
             max_steps=600, max_restarts=8, restart_eps=1e-3, w_global=None, global_checks=2.0,
             progress=False, stability=False, condensed=None) -> Backbone:
    """Trace the backbone from ``alpha_range[0]`` to ``alpha_range[1]`` (N).

    Parameters
    ----------
    sys : HBSystem
    alpha_range : (float, float)
        Force amplitudes (N), 0 < alpha_min < alpha_max.
    w_window : (float, float)
        Frequency window (rad/s), ``0 < low < high``, of the stage-1 forced response at
        ``alpha_min``; must contain the stuck-linear resonance of interest.
    ds, ds_max, ds_min : float
        Arclength steps in the scaled unknowns.
    max_steps : int
        Continuation steps (>= 1) allowed per traced piece of a ridge.
    max_restarts : int
        Restarts allowed at singular points (stage 4), per traced ridge and direction.
    restart_eps : float
        Restart offset in ``log alpha`` (spec: 1e-3).
    w_global : (float, float), optional
        Frequency window (rad/s) in which the backbone is the *global* maximum of the forced
        response (largest interior peak) at every force. Default: only the local ridge started
        in ``w_window`` is followed. With a window the backbone is the upper envelope of
        candidate ridges, each traced with the optimality system:

        * the ridge from ``w_window``; at every restart it jumps to the highest of the maxima
          started from the stuck and the sliding linear peaks in the window (two-peak forced
          responses);
        * the ridges of the peaks at ``alpha_max`` (from the same linear peaks), traced down in
          force to their folds (beam: the friction-limited free-mode peak, which only exists
          once the force can overcome the friction dissipation, overtakes the partially stuck
          ridge long before that ridge is lost);
        * global checks (``global_checks``): at check forces spread evenly in ``log alpha``
          the forced response is swept over the whole window (or, where every contact stays
          stuck over the window, the stuck-linear peaks are taken: exact), and every interior
          peak that lies on none of the ridges above (frequency within 1 %) seeds a new ridge,
          traced both ways in force to its folds (beam: a ridge near 400 Hz that exists only
          between ~9 and ~78 N and is the global maximum, up to 1.8x above the others, between
          ~29 and ~44 N).

        Where the envelope changes ridge the backbone jumps (``jumps``, and a singular point
        with reason ``'global maximum jumps to another ridge ...'``).
    global_checks : float or None
        Check forces per decade of force (with ``w_global`` only; 0 or None: no checks).
        The checks are placed at ``ceil(global_checks * decades) + 1`` forces from
        ``alpha_min`` to the end of the backbone. Limitation: a ridge that exists only between
        two neighbouring check forces (and is not reached from ``w_window`` or ``alpha_max``)
        is not found, nor is a peak that the sweep steps over (much narrower than its steps);
        raise ``global_checks`` when the forced responses change faster in force. Default 2
        (one per half-decade): the beam's intermediate ridge spans almost a decade. Cost: one
        sweep per check force at which a contact can slip (stuck-linear checks are almost
        free) and the traces of the new ridges; beam (20 elements, [0.01, 1000] N): 17 s
        instead of 8 s without checks.
    progress : bool
        Show progress bars (continuations, global checks).
    stability : bool
        Also evaluate the Floquet multipliers of every point by Hill's method
        (:func:`~fesub.hbm.stability.backbone_stability`; ``Backbone.stability``).
    condensed : bool or None
        Solve on the harmonic balance condensed exactly onto the DOFs of the contacts, load,
        preload and monitor (:class:`~fesub.hbm.condense.CondensedSystem`: the same ridge,
        found with unknowns of ``2 Nh`` times the retained DOFs instead of ``2 Nh n``), then
        expand ``Q`` and ``lam`` to every DOF. None (default): when the retained DOFs are at
        most a quarter of the DOFs (:func:`~fesub.hbm.condense.worth_condensing`); False: the
        full system. The points of the two routes differ (continuation steps are taken in
        different unknowns) but lie on the same ridge (beam: within 1e-8 relative).

    Returns
    -------
    Backbone
        On a KeyboardInterrupt, the points of the ridge from ``w_window`` traced before it,
        with ``stop_reason = 'interrupted'`` (``status``).
    """
    if condensed is None:
        condensed = worth_condensing(sys)
    if condensed:
        red = sys if isinstance(sys, CondensedSystem) else CondensedSystem(sys)
        bb = backbone(red, alpha_range, w_window, ds=ds, ds_max=ds_max, ds_min=ds_min,
                      max_steps=max_steps, max_restarts=max_restarts, restart_eps=restart_eps,
                      w_global=w_global, global_checks=global_checks, progress=progress,
                      condensed=False)
        bb = _expanded(red, bb)
        if stability:
            bb.stability = backbone_stability(red.full, bb, progress=progress)
        return bb
    a0, a1 = increasing_range("alpha_range", alpha_range, " (N)")
    w_lo, w_hi = increasing_range("w_window", w_window, " (rad/s)")
    max_steps = step_count("max_steps", max_steps)
    if w_global is not None:
        w_global = increasing_range("w_global", w_global, " (rad/s)")
    if int(max_restarts) != max_restarts or max_restarts < 0:
        raise ParameterError(f"max_restarts must be an integer >= 0, got {max_restarts!r}")
    check_positive("restart_eps", restart_eps)
    n_checks = _check_count("global_checks", global_checks)
    steps = dict(ds=ds, ds_min=ds_min, ds_max=ds_max, max_steps=max_steps,
                 max_restarts=max_restarts, restart_eps=restart_eps, progress=progress)
    pieces, singular, events = [], [], []  # the ridge from w_window, kept on an interrupt
    try:
        stop = _trace_window_ridge(sys, (a0, a1), (w_lo, w_hi), w_global, pieces, singular,
                                   events, **steps)
        main = ridge_from_pieces(sys, pieces, singular, events, origin="w_window", alpha_seed=a0,
                                  w_seed=float(pieces[0][1][0][2 * sys.N]),
                                  ends={"low": "alpha_range", "high": stop})
        if w_global is None:
            bb = _local_backbone(sys, pieces, singular, events, stop,
                                 [ridge_summary(main, sum(len(p[0]) for p in pieces))])
        else:
            bb = _global_backbone(sys, main, pieces, stop, a0, w_global, n_checks, steps)
        if stability:
            bb.stability = backbone_stability(sys, bb, progress=progress)
        return bb
    except KeyboardInterrupt:
        return _local_backbone(sys, pieces, singular, events, "interrupted", [])


def _trace_window_ridge(sys, alpha_range, window, w_global, pieces, singular, events, *, ds,
                        ds_min, ds_max, max_steps, max_restarts, restart_eps, progress):
    """Stages 1-4: the ridge from the peak of the forced response at ``alpha_range[0]`` (N) in
    ``window`` (rad/s), continued in ``log alpha`` and restarted past singular points.

    Appends to ``pieces`` (continued pieces ``(log alpha, (Q/alpha, lam, w), iterations)``),
    ``singular`` and ``events`` as it goes (a KeyboardInterrupt leaves what was traced before
    it there) and returns why the trace stopped."""
    N = sys.N
    s_start, s_end = math.log(alpha_range[0]), math.log(alpha_range[1])
    stop = ""
    y_restart = None
    for seg in range(max_restarts + 1):
        alpha = math.exp(s_start)
        if y_restart is not None:
            wp, Qp, lam = y_restart
        else:
            wp, Qp = _peak_start(sys, alpha, window)
            lam = start_multipliers(sys, Qp, wp, alpha)
        opt, y0, sc, evs = optimality_start(sys, alpha, wp, Qp, lam)
        try:
            br = _continue_backbone(opt, y0, s_start, s_end, ds, ds_min, ds_max, max_steps, sc,
                                    evs, progress)
        except ConvergenceError as exc:
            if seg == 0:
                raise ConvergenceError(f"backbone cannot start at alpha={alpha:.6g} N, "
                                       f"w={wp:.6g} rad/s: {exc}") from None
            stop = f"segment {seg} could not start at alpha={math.exp(s_start):.6g} N: {exc}"
            break
        pieces.append((br.lam, br.x, br.newton_iters))
        go_on(br)
        for e in br.events:
            events.append({"kind": e.kind, "alpha": math.exp(e.lam), "w": float(e.x[2 * N]),
                           "segment": seg})
        stop = br.stop_reason
        if not stop.startswith("corrector_failed"):
            break
        s_fail = float(br.lam[-1])
        margin_before = sys.stuck_margin(math.exp(s_fail) * br.x[-1][:N])
        singular.append({"alpha": math.exp(s_fail), "w": float(br.x[-1][2 * N]), "reason": stop})
        if s_fail + restart_eps >= s_end:
            break
        restart = _restart_past(sys, br, restart_eps, w_global)
        if restart is None:
            stop = f"restart failed after singular point at alpha={math.exp(s_fail):.6g} N"
            break
        s_start, y_restart = restart
        onset = _slip_onset(sys, margin_before, sys.stuck_margin(y_restart[1]))
        if onset:
            singular[-1]["slip_onset_contacts"] = onset
    if stop.startswith("corrector_failed"):
        # where in physical units (the driver reports lam = log alpha) and why it stopped
        why = (f"max_restarts={max_restarts} reached" if len(singular) > max_restarts
               else f"within restart_eps={restart_eps:g} of alpha_range[1]")
        stop += (f" [backbone stopped at alpha={math.exp(pieces[-1][0][-1]):.6g} N, "
                 f"w={pieces[-1][1][-1][2 * N]:.6g} rad/s: {why}]")
    return stop


def _restart_past(sys, br, restart_eps, w_global):
    """Stage 4: a point of the optimality system just beyond the singular point where the
    continuation ``br`` failed, as ``(log alpha, (w, Q, lam))``, or None.

    A Newton solve of the optimality system from the last point, else stages 1-3 from a new
    forced response; offsets ``restart_eps``, 10x, 30x in ``log alpha`` (the kink region of a
    non-smooth point can be wide). With ``w_global`` the highest of these maxima and of those
    started from the linear peaks in the window is kept."""
    N = sys.N
    s_fail = float(br.lam[-1])
    w_fail = float(br.x[-1][2 * N])
    for eps in (restart_eps, 10 * restart_eps, 30 * restart_eps):
        a_r = math.exp(s_fail + eps)
        y_restart = None
        try:
            w_r, Q_r, l_r, _ = backbone_point(sys, a_r, w_fail,
                                              math.exp(eps) * br.x[-1][:N] * math.exp(s_fail),
                                              br.x[-1][N:2 * N], tol=1e-8)
            y_restart = (w_r, Q_r, l_r)
        except ConvergenceError:
            try:
                wg, Qg = _peak_start(sys, a_r, (w_fail * 0.7, w_fail * 1.15))
                w_r, Q_r, l_r, _ = backbone_point(sys, a_r, wg, Qg, tol=1e-8)
                y_restart = (w_r, Q_r, l_r)
            except ConvergenceError:
                pass
        if w_global is not None:
            # the tracked local maximum may have vanished or been overtaken by another ridge
            # (two-peak responses, spec 2.3 4(d)): try the optimality system from the linear
            # peaks of the stuck and the sliding structures in the window and keep the highest
            # maximum
            for w_c, Q_c, l_c in window_maxima(sys, a_r, w_global):
                if y_restart is None or sys.amplitude(Q_c) > sys.amplitude(y_restart[1]) * (
                        1 + 1e-6):
                    y_restart = (w_c, Q_c, l_c)
        if y_restart is not None:
            return s_fail + eps, y_restart
    return None


def _slip_onset(sys, margin_before, margin_after):
    """Contacts that start to slip at a singular point: stuck margin ~0 at the failure point
    (within 1 % of the slip force) or stuck before the restart and slipping after it."""
    return [i for i in range(len(margin_before))
            if (margin_before[i] <= 0 < margin_after[i])
            or abs(margin_before[i]) <= 1e-2 * sys.contacts[i].element.mu
            * sys.contacts[i].element.n0]


def _global_backbone(sys, main, pieces, stop, a0, w_global, n_checks, steps):
    """The backbone as the global maximum in ``w_global`` (rad/s): the upper envelope of the
    ridge ``main`` from the window, the ridges of the peaks at its largest force and those the
    global checks (``n_checks`` per decade) find. ``steps``: the continuation settings."""
    N = sys.N
    a_end = float(main["alpha"][-1])
    trace = dict(s_lo=math.log(a0), s_hi=math.log(a_end), **steps)
    ridges = [main]
    if stop == "lam_range":
        # the main ridge is known down to alpha_min when no restart jumped to another peak
        jump_free = all(abs(pieces[k][1][0][2 * N] - pieces[k - 1][1][-1][2 * N])
                        <= SAME_RIDGE_W * pieces[k - 1][1][-1][2 * N]
                        for k in range(1, len(pieces)))
        ridges += ridges_from_alpha_max(sys, a_end, w_global, trace,
                                         known=main if jump_free else None)
    checks = []
    if n_checks > 0 and a_end > a0:
        checks = check_global_peaks(sys, ridges, np.geomspace(
            a0, a_end, max(2, int(math.ceil(n_checks * math.log10(a_end / a0) - 1e-9)) + 1)),
            w_global, trace, steps["progress"])
    return _envelope_backbone(sys, ridges, checks, a0, a_end, stop)


def _local_backbone(sys, pieces, singular, events, stop, ridges):
    """The backbone of the ridge from ``w_window`` alone, in continuation order (``pieces``:
    continued pieces ``(log alpha, (Q/alpha, lam, w), iterations)``, none when interrupted
    before the first)."""
    N = sys.N
    if not pieces:
        pieces = [(np.zeros(0), np.zeros((0, 2 * N + 1)), np.zeros(0, int))]
    S = np.concatenate([p[0] for p in pieces])
    alpha = np.exp(S)
    Y = np.vstack([p[1] for p in pieces])
    Q = Y[:, :N] * alpha[:, None]
    lam = Y[:, N:2 * N]
    return Backbone(alpha=alpha, w=Y[:, 2 * N], Am=np.array([sys.amplitude(q) for q in Q]),
                    Q=Q, lam=lam, eta_alpha=lam @ sys.fex,
                    segments=np.concatenate([np.full(len(p[0]), k)
                                             for k, p in enumerate(pieces)]),
                    singular_points=singular, events=events,
                    newton_iters=np.concatenate([p[2] for p in pieces]), stop_reason=stop,
                    ridge=np.zeros(len(S), int), ridges=ridges)


def _check_count(name, value):
    """Check forces per decade: a finite number >= 0 (None: 0)."""
    if value is None:
        return 0.0
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be a number of check forces per decade >= 0 "
                             f"(0 or None: no checks), got {value!r}") from None
    if not (math.isfinite(v) and v >= 0):
        raise ParameterError(f"{name} must be a number of check forces per decade >= 0 "
                             f"(0 or None: no checks), got {value!r}")
    return v


@single_threaded
def _continue_backbone(opt, y0, s_start, s_end, ds, ds_min, ds_max, max_steps, sc, evs,
                       progress):
    return continue_branch(opt.residual, opt.jacobian, y0, s_start, ds=ds, ds_min=ds_min,
                           ds_max=ds_max, lam_range=(s_start, s_end), max_steps=max_steps,
                           tol=1e-8, max_iter=8, max_angle_deg=10.0, scale=sc, events=evs,
                           progress=progress)


def _envelope_backbone(sys, ridges, checks, a_lo, a_hi, stop):
    """Backbone = upper envelope of the candidate ridges over ``[a_lo, a_hi]`` (N).

    On the union of all ridges' forces, each ridge's amplitude is interpolated in log-log by
    cubic Hermite polynomials with the exact slopes of the envelope theorem
    (``dAm*/dalpha = -F_ex^T lam``); the envelope keeps its ridge while that one exists and no
    ridge at another frequency is higher. Each stretch keeps the points of its own ridge; at a
    jump (located on exact solutions) both ridges get a point at the jump force, so the jump is
    vertical in force."""
    runs, jumps, segs, singular, events, on_bb = upper_envelope(sys, ridges, a_lo, a_hi)
    lam = np.vstack([run["lam"] for run in runs])
    return Backbone(alpha=np.concatenate([run["alpha"] for run in runs]),
                    w=np.concatenate([run["w"] for run in runs]),
                    Am=np.concatenate([run["Am"] for run in runs]),
                    Q=np.vstack([run["Q"] for run in runs]), lam=lam, eta_alpha=lam @ sys.fex,
                    segments=np.array(segs, int), singular_points=singular, events=events,
                    newton_iters=np.concatenate([run["its"] for run in runs]),
                    stop_reason=stop,
                    ridge=np.concatenate([np.full(len(run["alpha"]), run["r"]) for run in runs]),
                    ridges=[ridge_summary(rd, on_bb[r]) for r, rd in enumerate(ridges)],
                    jumps=jumps, checks=checks)
