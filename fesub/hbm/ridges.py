"""Ridges of the forced-response surface, traced one by one, and the global checks that look
for ridges the backbone does not follow.

A ridge is continued on the optimality system (:mod:`fesub.hbm.optimality`) in ``log alpha``
down and/or up to its folds, restarted past singular points. Ridges are plain dicts (``alpha``,
``w``, ``Q``, ``lam``, ``Am``, ``its``, ``seg``, ``qmax``, ``singular``, ``events`` and what
seeded them); their upper envelope (:func:`upper_envelope`) is the backbone of
:mod:`fesub.hbm.backbone` in a global window. The global checks sweep the forced response over
that window at check forces (or take the stuck-linear peaks where every contact stays stuck)
and trace every peak that lies on no known ridge.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq

from ..continuation import continue_branch
from ..errors import ConvergenceError
from ._common import go_on
from .forced import FRF, forced_response, frf_peak
from .optimality import backbone_point, optimality_start


# ------------------------------------------------------------- ridges and their upper envelope
# Two peaks of one forced response whose frequencies differ by less than this (relative) are
# taken as the same ridge: the global checks do not trace a peak this close to a known ridge,
# and the envelope does not switch between two traces this close (interpolated between their
# own points, two traces of one ridge differ by more than their corrector tolerance)
SAME_RIDGE_W = 1e-2
# the envelope switches ridge only for a gain larger than this (relative amplitude): two
# ridges within it are equally good
_SWITCH_GAIN = 1e-6


def ridge_from_pieces(sys, pieces, singular, events, **info):
    """A candidate ridge from continued pieces ``(log alpha, (Q/alpha, lam, w), iterations)``,
    sorted by force, one local segment per piece."""
    N = sys.N
    S = np.concatenate([p[0] for p in pieces])
    X = np.vstack([p[1] for p in pieces])
    its = np.concatenate([p[2] for p in pieces])
    seg = np.concatenate([np.full(len(p[0]), k) for k, p in enumerate(pieces)])
    o = np.argsort(S, kind="stable")
    S, X, its, seg = S[o], X[o], its[o], seg[o]
    keep = np.ones(len(S), bool)
    keep[1:] = np.diff(S) > 0  # the seed of a two-way trace appears in both directions
    S, X, its, seg = S[keep], X[keep], its[keep], seg[keep]
    _, first = np.unique(seg, return_index=True)
    renum = {int(seg[i]): k for k, i in enumerate(np.sort(first))}
    alpha = np.exp(S)
    Q = X[:, :N] * alpha[:, None]
    return dict(alpha=alpha, w=X[:, 2 * N].copy(), Q=Q, lam=X[:, N:2 * N].copy(),
                Am=np.array([sys.amplitude(q) for q in Q]), its=its,
                seg=np.array([renum[int(k)] for k in seg], int),
                qmax=np.abs(Q).max(axis=1), singular=list(singular), events=list(events),
                **info)


def ridge_summary(rd, on_backbone):
    return {"origin": rd["origin"], "alpha_seed": float(rd["alpha_seed"]),
            "w_seed": float(rd["w_seed"]),
            "alpha": [float(rd["alpha"][0]), float(rd["alpha"][-1])],
            "w": [float(rd["w"][0]), float(rd["w"][-1])], "ends": dict(rd["ends"]),
            "npts": int(len(rd["alpha"])), "on_backbone": int(on_backbone)}


def _trace_ridge(sys, alpha, seed, *, s_lo, s_hi, directions=(-1, 1), ds, ds_min, ds_max,
                 max_steps, max_restarts, restart_eps, progress, origin):
    """Ridge through the optimality-system point ``seed = (w, Q, lam)`` at force ``alpha`` (N),
    continued in ``log alpha`` down and/or up to its folds (the located turning point ends it)
    or to ``[s_lo, s_hi]``, restarted past singular points like stage 4 of the backbone."""
    N = sys.N
    s_c = math.log(alpha)
    pieces, singular, events, ends = [], [], [], {}
    for direction in directions:
        side = "low" if direction < 0 else "high"
        bound = s_lo if direction < 0 else s_hi
        if (bound - s_c) * direction <= 1e-12:
            ends[side] = "alpha_range"
            continue
        s0, (y_w, y_Q, y_l) = s_c, seed
        end = f"max_restarts={max_restarts} reached"
        for _ in range(max_restarts + 1):
            opt, y0, sc, evs = optimality_start(sys, math.exp(s0), y_w, y_Q, y_l)
            last = [s0]

            def turned(y, s, last=last, d=direction):
                # the ridge turned back in force: it ended at a fold
                t = (s - last[0]) * d < 0
                last[0] = s
                return t

            try:
                br = continue_branch(opt.residual, opt.jacobian, y0, s0, ds=ds, ds_min=ds_min,
                                     ds_max=ds_max, lam_range=(min(s0, bound), max(s0, bound)),
                                     max_steps=max_steps, direction=direction, tol=1e-8,
                                     max_iter=8, max_angle_deg=10.0, scale=sc, events=evs,
                                     callback=turned, progress=progress)
                go_on(br)
            except ConvergenceError as exc:
                end = f"could not continue from alpha={math.exp(s0):.6g} N: {exc}"
                break
            s, x, its = br.lam, br.x, br.newton_iters
            k = len(s)
            for i in range(1, len(s)):
                if (s[i] - s[i - 1]) * direction < 0:
                    k = i
                    break
            s, x, its = s[:k], x[:k], its[:k]
            folds = [e for e in br.events_of("fold") if e.index < k]
            if folds and (folds[0].lam - s[-1]) * direction > 0:
                s = np.append(s, folds[0].lam)
                x = np.vstack([x, folds[0].x])
                its = np.append(its, 0)
            pieces.append((s, x, its))
            events += [{"kind": e.kind, "alpha": math.exp(e.lam), "w": float(e.x[2 * N])}
                       for e in br.events if e.kind != "fold" and e.index < k]
            if br.stop_reason == "user":
                end = "fold"
                break
            if not br.stop_reason.startswith("corrector_failed"):
                end = br.stop_reason
                break
            s_fail, x_fail = float(s[-1]), x[-1]
            singular.append({"alpha": math.exp(s_fail), "w": float(x_fail[2 * N]),
                             "reason": br.stop_reason})
            s0 = None
            for eps in (restart_eps, 10 * restart_eps, 30 * restart_eps):
                s_r = s_fail + direction * eps
                if (s_r - bound) * direction > 0:
                    break
                a_r = math.exp(s_r)
                try:
                    y_w, y_Q, y_l, _ = backbone_point(sys, a_r, float(x_fail[2 * N]),
                                                      x_fail[:N] * a_r, x_fail[N:2 * N],
                                                      tol=1e-8)
                except ConvergenceError:
                    continue
                s0 = s_r
                break
            if s0 is None:
                end = f"lost after the singular point at alpha={math.exp(s_fail):.6g} N"
                break
        ends[side] = end
    if not pieces:  # the seed at a bound of the range, traced towards it
        y_w, y_Q, y_l = seed
        pieces = [(np.array([s_c]), np.concatenate([y_Q / alpha, y_l, [y_w]])[None, :],
                   np.zeros(1, int))]
    return ridge_from_pieces(sys, pieces, singular, events, origin=origin, alpha_seed=alpha,
                              w_seed=float(seed[0]), ends=ends)


def ridges_from_alpha_max(sys, a_end, w_global, trace, known=None):
    """Ridges of the peaks at the largest force (optimality system started from the stuck and
    the sliding linear peaks in ``w_global``), traced down in force to their folds; a peak on
    the ``known`` ridge (traced over the whole range) is not traced again.

    The forced response can have several peaks (beam: the stuck-tip mode and, once the force
    can drive the sliding structure, the free first mode); the envelope jumps to such a ridge
    where it rises above the others (at its fold or where it crosses them)."""
    out = [] if known is None else [known]
    for w_c, Q_c, l_c in window_maxima(sys, a_end, w_global):
        if any(abs(rd["w"][-1] - w_c) <= SAME_RIDGE_W * w_c for rd in out):
            continue  # both linear peaks led to the same maximum
        try:
            out.append(_trace_ridge(sys, a_end, (w_c, Q_c, l_c), directions=(-1,),
                                    origin="alpha_max", **trace))
        except ConvergenceError:
            continue
    return out if known is None else out[1:]


def _covering_ridge(ridges, alpha, w):
    """Index of a ridge with a segment through force ``alpha`` (N) within ``SAME_RIDGE_W`` of
    the frequency ``w`` (rad/s), or None."""
    la = math.log(alpha)
    for r, rd in enumerate(ridges):
        for k in np.unique(rd["seg"]):
            m = rd["seg"] == k
            al = np.log(rd["alpha"][m])
            if al[0] - 1e-12 <= la <= al[-1] + 1e-12:
                wr = float(np.interp(la, al, rd["w"][m]))
                if abs(wr - w) <= SAME_RIDGE_W * w:
                    return r
    return None


def _linear_Q(sys, w, alpha, mats):
    """Harmonic coefficients (m) of the linear response with the contacts as ``mats = (stuck,
    slip)`` say (:meth:`HBSystem.linear_harmonic`: complex solve per loaded harmonic)."""
    n = sys.n
    Q = np.zeros(sys.N)
    for h in range(1, sys.nh + 1):
        i = (2 * (h - 1) + sys.h0) * n
        f = sys.fex[i:i + n] - 1j * sys.fex[i + n:i + 2 * n]
        if not np.any(f):
            continue
        x = sys.linear_harmonic(h * w, alpha * f, *mats)
        Q[i:i + n], Q[i + n:i + 2 * n] = x.real, -x.imag
    return Q


def _grid_maxima(fun, window, npts=400, refine=None):
    """Local maxima of ``fun`` over ``window`` (rad/s): grid, then bounded Brent around the
    grid maxima (``refine``: how many, largest first; None: every interior one). A sharp
    resonance can fall between grid points; the refinement finds its top."""
    from scipy.optimize import minimize_scalar

    ws = np.linspace(window[0], window[1], npts)
    v = np.array([fun(w) for w in ws])
    idx = [i for i in range(npts) if (i == 0 or v[i] >= v[i - 1]) and
           (i == npts - 1 or v[i] > v[i + 1])]
    if refine is None:
        idx = [i for i in idx if 0 < i < npts - 1]
    else:
        idx = sorted(idx, key=lambda i: -v[i])[:refine]
    out = []
    for i in idx:
        lo, hi = ws[max(i - 1, 0)], ws[min(i + 1, npts - 1)]
        r = minimize_scalar(lambda w: -fun(w), bounds=(lo, hi), method="bounded",
                            options={"xatol": 1e-10 * hi})
        out.append((float(r.x), -float(r.fun)) if -r.fun >= v[i] else (float(ws[i]), v[i]))
    return out


def _stuck_throughout(sys, alpha, window, mats):
    """True when the stuck-linear response at force ``alpha`` (N) keeps every contact stuck
    (at least 0.1 % of its slip margin left) over the whole window: it is then the forced
    response, linear, at every frequency of the window."""
    m0 = sys.stuck_margin(np.zeros(sys.N))
    if np.any(m0 >= 0):
        return False

    def worst(w):  # -1 at rest, 0 at the onset of slip or separation
        return float(np.max(sys.stuck_margin(_linear_Q(sys, w, alpha, mats)) / -m0))

    return max(v for _, v in _grid_maxima(worst, window, refine=3)) < -1e-3


def _sweep_peaks(sys, alpha, window, qscale):
    """Interior peaks of the forced response at force ``alpha`` (N) over ``window`` (rad/s):
    continued down from the top of the window, and up from its bottom to where the first sweep
    stopped if it did not get through. Returns ``([(w, Am, Q, sampled curve around it)],
    missed intervals)``. The unknowns are scaled by the larger of the stuck-linear amplitude
    and ``qscale`` (m; the known ridges' amplitude: fewer steps at large force), the corrector
    tolerance is 1e-8 (that of the optimality system)."""
    w_lo, w_hi = window
    mats = (True, False)  # contacts stuck
    qs = max(max(np.abs(_linear_Q(sys, w, alpha, mats)).max()
                 for w in np.linspace(w_lo, w_hi, 60)), qscale)
    frfs = []

    def sweep(start, end):
        """Continue from ``start`` towards ``end`` (rad/s); return how far it got."""
        try:
            f = go_on(forced_response(sys, alpha, (start, end), qscale=qs, tol=1e-8))
        except ConvergenceError:
            return start
        frfs.append(f)
        if f.stop_reason == "lam_range":
            return end
        return float(f.w.min() if end < start else f.w.max())

    reached = sweep(w_hi, w_lo)
    missed = []
    if reached > w_lo:
        top = sweep(w_lo, reached)
        if top < reached:
            missed.append((top, reached))
    out = []
    for f in frfs:
        am = f.Am
        for j in range(1, len(am) - 1):
            if am[j] >= am[j - 1] and am[j] > am[j + 1]:
                out.append((float(f.w[j]), float(am[j]), f.Q[j],
                            FRF(alpha, f.w[j - 1:j + 2], f.Q[j - 1:j + 2], am[j - 1:j + 2],
                                "sampled")))
    return out, missed


def check_global_peaks(sys, ridges, forces, w_global, trace, progress):
    """At each check force, the interior peaks of the forced response over ``w_global``; a
    peak on none of the known ``ridges`` seeds a new ridge (appended to ``ridges``), traced
    both ways in force. Returns one record per check force."""
    import warnings

    from tqdm.auto import tqdm

    mats = (True, False)  # contacts stuck
    checks, trouble = [], []
    linear = True  # the stuck margins grow with the force: once slipping, always
    for a in tqdm(forces, desc="global checks", unit="force", disable=not progress,
                  leave=False):
        a = float(a)
        rec = {"alpha": a, "peaks": [], "missed": []}
        linear = linear and _stuck_throughout(sys, a, w_global, mats)
        if linear:
            rec["method"] = "linear"
            cands = [(w, am, _linear_Q(sys, w, a, mats), None) for w, am in _grid_maxima(
                lambda w: sys.amplitude(_linear_Q(sys, w, a, mats)), w_global)]
        else:
            rec["method"] = "sweep"
            env = [np.exp(np.interp(math.log(a), np.log(rd["alpha"]), np.log(rd["qmax"])))
                   for rd in ridges if rd["alpha"][0] <= a <= rd["alpha"][-1]]
            cands, rec["missed"] = _sweep_peaks(sys, a, w_global, max(env, default=0.0))
            if rec["missed"]:
                trouble.append(f"at {a:.4g} N the sweep missed "
                               + ", ".join(f"[{lo:.6g}, {hi:.6g}]" for lo, hi in rec["missed"])
                               + " rad/s")
        for w, am, Q, curve in sorted(cands, key=lambda c: -c[1]):
            r = _covering_ridge(ridges, a, w)
            if r is None:
                if curve is not None:
                    try:
                        w, am, Q = frf_peak(sys, curve)
                    except ConvergenceError:
                        pass
                try:
                    w_c, Q_c, l_c, _ = backbone_point(sys, a, w, Q, tol=1e-8)
                    if not (w_global[0] <= w_c <= w_global[1]):
                        raise ConvergenceError(f"the optimality system converged outside "
                                               f"w_global (w={w_c:.6g} rad/s)")
                    r = _covering_ridge(ridges, a, w_c)
                    if r is None:
                        ridges.append(_trace_ridge(sys, a, (w_c, Q_c, l_c), origin="check",
                                                   **trace))
                        r = len(ridges) - 1
                    w, am = w_c, sys.amplitude(Q_c)
                except ConvergenceError as exc:
                    trouble.append(f"the peak at {a:.4g} N, {w:.6g} rad/s could not be "
                                   f"traced ({exc})")
            rec["peaks"].append({"w": float(w), "Am": float(am), "ridge": r})
        checks.append(rec)
    if trouble:
        warnings.warn("backbone: the global maximum is not guaranteed: " + "; ".join(trouble),
                      stacklevel=5)
    return checks


def _ridge_point(sys, rd, alpha):
    """Solution of the optimality system on ridge ``rd`` at force ``alpha`` (N), by Newton
    from the ridge's nearest point; ConvergenceError if it lands on another ridge."""
    la = np.log(rd["alpha"])
    i = int(np.argmin(np.abs(la - math.log(alpha))))
    w, Q, lam, its = backbone_point(sys, alpha, rd["w"][i], rd["Q"][i] * (alpha / rd["alpha"][i]),
                                    rd["lam"][i], tol=1e-8)
    if abs(w - np.interp(math.log(alpha), la, rd["w"])) > SAME_RIDGE_W * w:
        raise ConvergenceError(f"the optimality system at alpha={alpha:.6g} N left the ridge")
    return w, Q, lam, its


def _jump_force(sys, A, B, lo, a_end, b_start, hi):
    """Force (N) where the envelope leaves ridge ``A`` (kept on ``[lo, a_end]``) for ridge
    ``B`` (kept on ``[b_start, hi]``): B's fold where B is born above A, A's end where A is
    lost, else the crossing of the two amplitudes (Brent in log alpha on exact solutions of
    both ridges, searched outwards from ``[a_end, b_start]`` over the ridges' own points when
    the interpolated amplitudes misplaced it). None when it cannot be located."""
    if b_start <= B["alpha"][0] * (1 + 1e-12) and B["ends"].get("low") == "fold":
        return b_start
    if a_end >= A["alpha"][-1] * (1 - 1e-12):
        return a_end
    lo = max(lo, B["alpha"][0])
    hi = min(hi, A["alpha"][-1])
    pts = np.unique(np.concatenate([A["alpha"], B["alpha"], [a_end, b_start]]))
    pts = pts[(pts >= lo * (1 - 1e-12)) & (pts <= hi * (1 + 1e-12))]

    def gain(a):
        return (math.log(sys.amplitude(_ridge_point(sys, B, a)[1]))
                - math.log(sys.amplitude(_ridge_point(sys, A, a)[1])))

    try:
        k = int(np.searchsorted(pts, a_end * (1 - 1e-12)))
        a_l, g_l = pts[k], gain(pts[k])
        while g_l >= 0 and k > 0:
            k -= 1
            a_l, g_l = pts[k], gain(pts[k])
        k = min(int(np.searchsorted(pts, b_start * (1 - 1e-12))), len(pts) - 1)
        a_r, g_r = pts[k], gain(pts[k])
        while g_r <= 0 and k < len(pts) - 1:
            k += 1
            a_r, g_r = pts[k], gain(pts[k])
        if not (g_l < 0 < g_r and a_l < a_r):
            return None
        return math.exp(brentq(lambda s: gain(math.exp(s)), math.log(a_l), math.log(a_r),
                               xtol=1e-12, rtol=1e-14))
    except ConvergenceError:
        return None


def window_maxima(sys, alpha, w_global):
    """Solutions ``(w, Q, lam)`` of the optimality system at force ``alpha`` (N) started from the
    stuck and the sliding linear peaks in ``w_global`` (rad/s) that converge inside it."""
    for wg, Qg in _linear_peak_guesses(sys, alpha, w_global):
        try:
            w_c, Q_c, l_c, _ = backbone_point(sys, alpha, wg, Qg, tol=1e-8)
        except ConvergenceError:
            continue
        if w_global[0] <= w_c <= w_global[1]:
            yield w_c, Q_c, l_c


def _linear_peak_guesses(sys, alpha, window, npts=400):
    """(w, Q) at the RMS peaks of the stuck and of the sliding (kt = 0) linear responses."""
    out = []
    ws = np.linspace(window[0], window[1], npts)
    for stuck in (True, False):
        amps = np.array([abs(sys.linear_harmonic(w, sys.fex[:sys.n], stuck, not stuck)[sys.dof])
                         for w in ws])
        for i in range(1, npts - 1):
            if amps[i] >= amps[i - 1] and amps[i] > amps[i + 1]:
                x = sys.linear_harmonic(ws[i], alpha * sys.fex[:sys.n], stuck, not stuck)
                Q = np.zeros(sys.N)
                Q[:sys.n], Q[sys.n:2 * sys.n] = x.real, -x.imag
                out.append((ws[i], Q))
    return out


def upper_envelope(sys, ridges, a_lo, a_hi):
    """Upper envelope of the candidate ``ridges`` over ``[a_lo, a_hi]`` (N).

    Returns the runs (stretches of one ridge, each with its points ``alpha``, ``w``, ``Q``,
    ``lam``, ``Am``, ``its``, ``seg`` and its ridge index ``r``), the jump records between
    them, the segment index of every point, the singular points and events (sorted by force)
    and the number of points each ridge gives."""
    G, win = _envelope_winners(sys, ridges, a_lo, a_hi)
    runs = _envelope_runs(ridges, G, win)
    _locate_jumps(sys, ridges, runs)
    runs = [run for run in runs if len(run["alpha"])]
    jumps = _jump_records(runs)
    segs, singular, events, on_bb = _envelope_records(ridges, runs, jumps)
    return runs, jumps, segs, singular, events, on_bb


def _envelope_winners(sys, ridges, a_lo, a_hi):
    """Forces ``G`` (N; the union of the ridges' own in ``[a_lo, a_hi]``) and the index of the
    ridge the envelope follows at each of them."""
    from scipy.interpolate import CubicHermiteSpline

    G = np.unique(np.concatenate([rd["alpha"] for rd in ridges]))
    G = G[(G >= a_lo * (1 - 1e-12)) & (G <= a_hi * (1 + 1e-12))]
    lg = np.log(G)
    LA = np.full((len(ridges), len(G)), -np.inf)
    W = np.full((len(ridges), len(G)), np.nan)
    for r, rd in enumerate(ridges):
        la = np.log(rd["alpha"])
        m = (lg >= la[0] - 1e-12) & (lg <= la[-1] + 1e-12)
        lam_fex = rd["lam"] @ sys.fex
        if len(la) > 1:
            LA[r, m] = CubicHermiteSpline(la, np.log(rd["Am"]),
                                          -rd["alpha"] * lam_fex / rd["Am"])(lg[m])
        else:
            LA[r, m] = np.log(rd["Am"][0])
        W[r, m] = np.interp(lg[m], la, rd["w"])

    def same(r, q, j):  # two traces of one ridge
        return abs(W[r, j] - W[q, j]) <= SAME_RIDGE_W * W[q, j]

    win = np.empty(len(G), int)
    cur = -1
    for j in range(len(G)):
        best = int(np.argmax(LA[:, j]))
        if not (cur >= 0 and np.isfinite(LA[cur, j])
                and (LA[best, j] <= LA[cur, j] + _SWITCH_GAIN or same(best, cur, j))):
            # the first trace (main ridge first) of the highest ridge
            cur = min(r for r in range(len(ridges)) if np.isfinite(LA[r, j]) and same(r, best, j))
        win[j] = cur
    return G, win


def _envelope_runs(ridges, G, win):
    """Stretches of one ridge, as force intervals between that ridge's own points: dicts with
    ``r`` (ridge index), ``lo``/``hi`` (N) and ``at_lo``/``at_hi`` (False: no located jump)."""
    runs = []
    j0 = 0
    for j in range(1, len(G) + 1):
        if j == len(G) or win[j] != win[j0]:
            r = int(win[j0])
            al = ridges[r]["alpha"]
            own = al[(al >= G[j0] * (1 - 1e-12)) & (al <= G[j - 1] * (1 + 1e-12))]
            if own.size:
                if runs and runs[-1]["r"] == r:
                    runs[-1]["hi"] = float(own[-1])
                else:
                    runs.append({"r": r, "lo": float(own[0]), "hi": float(own[-1]),
                                 "at_lo": False, "at_hi": False})
            j0 = j
    return runs


def _locate_jumps(sys, ridges, runs):
    """Locate the jumps between consecutive runs on exact solutions (both ridges get a point
    there) and fill each run with its ridge's points (``alpha``, ``w``, ``Q``, ``lam``, ``Am``,
    ``its``, ``seg``), in place."""
    for n in range(1, len(runs)):
        P, R = runs[n - 1], runs[n]
        a_x = _jump_force(sys, ridges[P["r"]], ridges[R["r"]], P["lo"], P["hi"], R["lo"], R["hi"])
        if a_x is not None and P["lo"] <= a_x <= R["hi"]:
            P["hi"], R["lo"] = a_x, a_x
            P["at_hi"], R["at_lo"] = True, True
    keys = ("alpha", "w", "Q", "lam", "Am", "its", "seg")
    for run in runs:
        rd = ridges[run["r"]]
        idx = np.flatnonzero((rd["alpha"] >= run["lo"] * (1 - 1e-12))
                             & (rd["alpha"] <= run["hi"] * (1 + 1e-12)))
        cols = {k: rd[k][idx] for k in keys}
        for edge, flag in ((run["lo"], run["at_lo"]), (run["hi"], run["at_hi"])):
            if not flag or (idx.size and np.min(np.abs(rd["alpha"][idx] / edge - 1)) <= 1e-12):
                continue
            try:
                w_x, Q_x, l_x, its_x = _ridge_point(sys, rd, edge)
            except ConvergenceError:
                continue
            k = int(np.argmin(np.abs(np.log(rd["alpha"] / edge))))
            new = {"alpha": edge, "w": w_x, "Q": Q_x, "lam": l_x, "Am": sys.amplitude(Q_x),
                   "its": its_x, "seg": rd["seg"][k]}
            for key in keys:
                v = np.asarray(new[key])[None, ...]
                cols[key] = np.concatenate([v, cols[key]] if edge == run["lo"]
                                           else [cols[key], v])
        run.update(cols)


def _jump_records(runs):
    """The ``jumps`` records of the backbone, one between each pair of consecutive runs."""
    jumps = []
    for n in range(1, len(runs)):
        P, R = runs[n - 1], runs[n]
        a_j = float(R["alpha"][0])
        located = abs(P["alpha"][-1] / a_j - 1) <= 1e-12
        jumps.append({"alpha": a_j, "w_from": float(P["w"][-1]), "w_to": float(R["w"][0]),
                      "Am_from": float(P["Am"][-1]) if located else None,
                      "Am_to": float(R["Am"][0]), "ridge_from": int(P["r"]),
                      "ridge_to": int(R["r"])})
    return jumps


def _envelope_records(ridges, runs, jumps):
    """Segment index of every backbone point, its singular points (the ridges' own within the
    runs and one per jump) and events, both sorted by force, and the number of points each
    ridge gives the backbone."""
    segs, singular, events = [], [], []
    on_bb = [0] * len(ridges)
    seg_id = -1
    last_key = None
    for n, run in enumerate(runs):
        r, rd = run["r"], ridges[run["r"]]
        sg = []
        for k in run["seg"]:
            if (r, int(k)) != last_key:
                seg_id += 1
                last_key = (r, int(k))
            sg.append(seg_id)
        segs += sg
        on_bb[r] += len(run["alpha"])
        lo, hi = run["alpha"][0] * (1 - 1e-12), run["alpha"][-1] * (1 + 1e-12)
        singular += [p for p in rd["singular"] if lo <= p["alpha"] <= hi]
        for e in rd["events"]:
            if lo <= e["alpha"] <= hi:
                i = min(max(int(np.searchsorted(run["alpha"], e["alpha"])) - 1, 0), len(sg) - 1)
                events.append(dict(e, segment=sg[i]))
        if n:
            jp = jumps[n - 1]
            singular.append({"alpha": jp["alpha"], "w": jp["w_to"],
                             "reason": "global maximum jumps to another ridge (from w = "
                                       f"{jp['w_from']:.6g} rad/s)"})
    singular.sort(key=lambda p: p["alpha"])
    events.sort(key=lambda e: e["alpha"])
    return segs, singular, events, on_bb
