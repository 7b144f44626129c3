"""Figures of the harmonic-balance study (matplotlib through :mod:`fesub.plots.style`).

Each function takes computed results and returns the matplotlib Figure (written with
``style.save``, which closes it, when a path is given). Frequencies are drawn in Hz (``hz=True``)
or rad/s, forces in N, amplitudes in m. ``case`` (e.g. ``"jenkins, Nh = 7"``) names the case in
the titles.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["frf_family", "method_comparison", "nh_comparison", "contact_timeline", "energy",
           "stability", "preload_map", "joint_backbone",
           "interface_maps", "ring_down_comparison"]


def _plt():
    from ..plots import style

    return style.pyplot()


def _save(fig, path):
    if path is not None:
        from ..plots import style

        style.save(fig, path)
    return fig


def _freq_label(hz, what="frequency"):
    return f"{what} [Hz]" if hz else f"{what} [rad/s]"


def _titled(title, case):
    return f"{title} ({case})" if case else title


def _broken_at_jumps(bb, *cols):
    """Backbone columns with a NaN between the two points of every jump to another ridge
    (matplotlib then leaves the jump out of the line)."""
    ridge = getattr(bb, "ridge", None)
    cols = [np.asarray(c, float) for c in cols]
    if ridge is None or len(ridge) < 2:
        return cols
    cut = np.flatnonzero(np.diff(ridge) != 0) + 1
    return [np.insert(c, cut, np.nan) for c in cols]


def _jump_segments(bb):
    """(alpha, w, Am) pairs of the two backbone points at each jump between ridges."""
    ridge = getattr(bb, "ridge", None)
    if ridge is None:
        return []
    return [((bb.alpha[i - 1], bb.alpha[i]), (bb.w[i - 1], bb.w[i]), (bb.Am[i - 1], bb.Am[i]))
            for i in np.flatnonzero(np.diff(ridge) != 0) + 1]


def frf_family(frfs, bb=None, *, hz=True, path=None, title="Forced responses and backbone",
               case=""):
    """RMS amplitude vs frequency for several force levels, with the backbone overlaid
    (jumps of the global maximum to another ridge dotted)."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    sc = 1 / (2 * math.pi) if hz else 1.0
    for f in frfs:
        ax.semilogy(f.w * sc, f.Am, lw=1, label=f"alpha = {f.alpha:.3g} N")
    if bb is not None:
        w, am = _broken_at_jumps(bb, bb.w, bb.Am)
        ax.semilogy(w * sc, am, "k-", lw=2, label="backbone (optimality system)")
        for k, (_, wj, aj) in enumerate(_jump_segments(bb)):
            ax.semilogy(np.array(wj) * sc, aj, "k:", lw=1.5,
                        label="jump to another ridge" if k == 0 else None)
        for k, sp in enumerate(bb.singular_points):
            ax.axvline(sp["w"] * sc, color="r", ls=":", lw=1,
                       label="singular point" if k == 0 else None)
    ax.set_xlabel(_freq_label(hz))
    ax.set_ylabel("Am, RMS amplitude [m]")
    ax.set_title(_titled(title, case))
    ax.legend(fontsize=7)
    ax.grid(True, which="both", alpha=0.3)
    return _save(fig, path)


def method_comparison(bb, pr=None, dn=None, *, zoom=None, hz=True, path=None, case=""):
    """Backbones: optimality system vs phase resonance vs dNNM (force-frequency and
    force-amplitude projections), with an optional zoom window ``(alpha_lo, alpha_hi)``."""
    plt = _plt()
    ncol = 3 if zoom else 2
    fig, axs = plt.subplots(1, ncol, figsize=(5 * ncol, 4), layout="constrained")
    sc = 1 / (2 * math.pi) if hz else 1.0
    curves = [("continuation", *_broken_at_jumps(bb, bb.alpha, bb.w, bb.Am), "k-")]
    if pr is not None:
        curves.append(("phase resonance", pr.alpha, pr.w, pr.Am, "b--"))
    if dn is not None:
        curves.append(("dNNM + energy balance", dn.F_eq, dn.w0, dn.Am, "g-."))
    for name, a, w, am, st in curves:
        axs[0].semilogx(a, w * sc, st, label=name)
        axs[1].loglog(a, am, st, label=name)
        if zoom:
            m = np.isnan(a) | ((a >= zoom[0]) & (a <= zoom[1]))  # NaN: break at a jump
            axs[2].plot(a[m], w[m] * sc, st, marker=".", label=name)
    for k, (aj, wj, amj) in enumerate(_jump_segments(bb)):
        lab = "jump to another ridge" if k == 0 else None
        axs[0].semilogx(aj, np.array(wj) * sc, "k:", label=lab)
        axs[1].loglog(aj, amj, "k:", label=lab)
    axs[0].set_xlabel("force alpha [N]")
    axs[0].set_ylabel(_freq_label(hz, "peak frequency"))
    axs[0].set_title("frequency")
    axs[1].set_xlabel("force alpha [N]")
    axs[1].set_ylabel("Am, RMS amplitude [m]")
    axs[1].set_title("amplitude")
    if zoom:
        axs[2].set_xlabel("force alpha [N]")
        axs[2].set_ylabel(_freq_label(hz, "peak frequency"))
        axs[2].set_title("zoom at the stuck -> slip transition")
    fig.suptitle(_titled("Backbone: optimality system, phase resonance, dNNM", case))
    for ax in axs:
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    return _save(fig, path)


def nh_comparison(bbs: dict, *, hz=True, path=None, case=""):
    """Backbones for several numbers of harmonics: ``{nh: Backbone}``."""
    plt = _plt()
    fig, axs = plt.subplots(1, 2, figsize=(10, 4), layout="constrained")
    sc = 1 / (2 * math.pi) if hz else 1.0
    for nh, bb in bbs.items():
        a, w, am = _broken_at_jumps(bb, bb.alpha, bb.w, bb.Am)
        axs[0].semilogx(a, w * sc, label=f"Nh = {nh}")
        axs[1].loglog(a, am, label=f"Nh = {nh}")
    axs[0].set_ylabel(_freq_label(hz, "peak frequency"))
    axs[1].set_ylabel("Am, RMS amplitude [m]")
    axs[0].set_title("frequency")
    axs[1].set_title("amplitude")
    fig.suptitle(_titled("Backbone for several numbers of harmonics", case))
    for ax in axs:
        ax.set_xlabel("force alpha [N]")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    return _save(fig, path)


def contact_timeline(sys, bb, *, contact=0, npts=40, nt=512, path=None, case=""):
    """Stick / slip / separation over one period (horizontal) for backbone points (vertical)."""
    from matplotlib.colors import ListedColormap

    from .contact import force_history

    plt = _plt()
    idx = np.unique(np.linspace(0, len(bb.alpha) - 1, npts).astype(int))
    img = np.zeros((len(idx), nt))
    el = sys.contacts[contact].element
    for r, i in enumerate(idx):
        _, _, st = force_history(el, sys.P[contact] @ bb.Q[i], sys.nh, nt)
        img[r] = st
    fig, ax = plt.subplots(figsize=(7, 4))
    cmap = ListedColormap(["#4c72b0", "#dd8452", "#c44e52"])
    im = ax.imshow(img, aspect="auto", origin="lower", cmap=cmap, vmin=0, vmax=2,
                   extent=[0, 360, 0, len(idx)], interpolation="nearest")
    cb = fig.colorbar(im, ax=ax, ticks=[1 / 3, 1, 5 / 3])
    cb.ax.set_yticklabels(["stick", "slip", "separation"])
    ticks = np.linspace(0, len(idx) - 1, 6).astype(int)
    ax.set_yticks(ticks + 0.5)
    ax.set_yticklabels([f"{bb.alpha[idx[t]]:.3g}" for t in ticks])
    ax.set_xlabel("phase over one period [deg]")
    ax.set_ylabel("force alpha [N] (backbone points)")
    ax.set_title(_titled(f"Contact {contact} along the backbone", case))
    return _save(fig, path)


def energy(sys, bb, dn=None, *, path=None, case=""):
    """Friction dissipation per cycle and equivalent damping ratio along the backbone
    (``zeta_eq = E_diss / (4 pi E_kin,max)``); dNNM damping ratio if given."""
    plt = _plt()
    from .fourier import basis

    tau = 2 * math.pi * np.arange(256) / 256
    Hd = basis(sys.nh, tau, 1)
    Ef = np.array([sys.energy_dissipated(q) for q in bb.Q])
    zeta = np.empty(len(bb.alpha))
    for i, (q, w) in enumerate(zip(bb.Q, bb.w)):
        Qm = q.reshape(2 * sys.nh, sys.n)
        v = w * Hd @ Qm                    # (nt, n) velocities
        ekin = 0.5 * np.einsum("ti,ij,tj->t", v, sys.M, v).max()
        # total dissipation: friction + linear damping (pi w sum k Q^T C Q k)
        lin = sum(math.pi * w * k * (Qm[2 * k - 2] @ sys.C @ Qm[2 * k - 2]
                                     + Qm[2 * k - 1] @ sys.C @ Qm[2 * k - 1])
                  for k in range(1, sys.nh + 1))
        zeta[i] = (Ef[i] + lin) / (4 * math.pi * ekin)
    fig, axs = plt.subplots(1, 2, figsize=(10, 4), layout="constrained")
    # stuck points dissipate nothing by friction: drawn on a log axis where they do
    axs[0].semilogx(bb.alpha, np.where(Ef > 0, Ef, np.nan), "k-")
    if np.any(Ef > 0):
        axs[0].set_yscale("log")
    axs[0].set_ylabel("friction dissipation per cycle [J]")
    axs[0].set_title("friction dissipation")
    axs[1].semilogx(bb.alpha, 100 * zeta, "k-", label="backbone: E_diss / (4 pi E_kin,max)")
    if dn is not None:
        axs[1].semilogx(dn.F_eq, 100 * dn.zeta, "g-.", label="dNNM")
    axs[1].set_ylabel("equivalent damping ratio [%]")
    axs[1].set_title("equivalent damping")
    fig.suptitle(_titled("Energy along the backbone", case))
    for ax in axs:
        ax.set_xlabel("force alpha [N]")
        ax.grid(True, which="both", alpha=0.3)
    axs[1].legend(fontsize=7)
    return _save(fig, path)


#: marker, colour and legend label of each kind of bifurcation in :func:`stability`
_BIF_STYLE = {"fold": ("o", "k", "fold"),
              "period_doubling": ("^", "tab:blue", "period doubling"),
              "neimark_sacker": ("s", "tab:red", "Neimark-Sacker")}


def _runs(stable):
    """``(start, stop, stable)`` runs of equal stability; each run ends on the first point of
    the next one, so that the drawn curve stays connected."""
    cut = np.flatnonzero(np.diff(np.asarray(stable, int)) != 0) + 1
    starts = np.concatenate([[0], cut])
    stops = np.concatenate([cut + 1, [len(stable)]])
    return [(a, min(b, len(stable)), bool(stable[a])) for a, b in zip(starts, stops)]


def stability(curves, *, hz=True, path=None, title="Forced response and its stability",
              case="", multipliers=True, logy=False):
    """Amplitude against frequency, stable parts solid and unstable parts dashed, with the
    folds, period doublings and Neimark-Sacker points marked; optionally the largest Floquet
    multiplier modulus against frequency below.

    Parameters
    ----------
    curves : Stability or list of Stability
        Results of :func:`fesub.hbm.stability.frf_stability` or
        :func:`~fesub.hbm.stability.backbone_stability` (they hold ``w`` in rad/s and ``Am`` in
        m).
    hz : bool
        Frequencies in Hz (else rad/s).
    path : path-like, optional
        Written with ``style.save`` when given.
    multipliers : bool
        Add the panel of ``max |rho|`` (-) with the unit circle's ``|rho| = 1``.
    logy : bool
        Logarithmic amplitude axis.
    """
    plt = _plt()
    curves = [curves] if not isinstance(curves, (list, tuple)) else list(curves)
    if multipliers:
        fig, (ax, axm) = plt.subplots(2, 1, figsize=(7, 6), sharex=True,
                                      gridspec_kw={"height_ratios": [3, 1.4]})
    else:
        fig, ax = plt.subplots(figsize=(7, 4.5))
        axm = None
    sc = 1 / (2 * math.pi) if hz else 1.0
    seen = set()
    for k, st in enumerate(curves):
        color = f"C{k % 10}"
        w, am = np.asarray(st.w) * sc, np.asarray(st.Am)
        label = f"alpha = {float(np.ravel(st.alpha)[0]):.3g} N" if len(st.alpha) else None
        for a, b, ok in _runs(st.stable):
            ax.plot(w[a:b], am[a:b], ls="-" if ok else "--", color=color, lw=1.3,
                    label=label)
            label = None
        if axm is not None:
            axm.plot(w, np.abs(st.multipliers).max(axis=1), color=color, lw=1)
        for bif in st.bifurcations:
            mk, col, name = _BIF_STYLE[bif["kind"]]
            ax.plot(bif["w"] * sc, bif["Am"], mk, color=col, ms=6, mfc="none", mew=1.5,
                    label=None if name in seen else name, zorder=3)
            seen.add(name)
    ax.plot([], [], "k-", lw=1.3, label="stable")
    ax.plot([], [], "k--", lw=1.3, label="unstable (Hill)")
    if logy:
        ax.set_yscale("log")
    ax.set_ylabel("Am, RMS amplitude [m]")
    ax.set_title(_titled(title, case))
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    if axm is not None:
        axm.axhline(1.0, color="0.4", lw=0.8, ls=":")
        axm.set_ylabel("max |Floquet multiplier| [-]")
        axm.set_xlabel(_freq_label(hz))
        axm.set_title("largest Floquet multiplier (unstable above 1)", fontsize=9)
        axm.grid(True, alpha=0.3)
    ax.set_xlabel(_freq_label(hz))
    return _save(fig, path)


def preload_map(state, xy, *, path=None, case=""):
    """The contact state at a bolt preload over the interface: normal force (N) with the open
    (x) and slipping (circled) contacts marked, and the tangential load ratio
    ``|f_t| / (mu N)`` (-; 1 = on the slip circle).

    Parameters
    ----------
    state : fesub.hbm.PreloadState
    xy : (ne, 2) array
        In-plane coordinates of the contacts (m), drawn in mm.
    """
    plt = _plt()
    xy = 1e3 * np.asarray(xy, float)
    if xy.shape != (len(state.normal), 2):
        raise ValueError(f"xy must have shape ({len(state.normal)}, 2), got {xy.shape}")
    span = np.ptp(xy, axis=0)
    if span[0] > 2.0 * span[1]:     # a long interface (a lap): the two maps one above the other
        fig, axs = plt.subplots(2, 1, figsize=(10, 2.2 + 2 * 7.5 * max(span[1], 0.15 * span[0]) / span[0]),
                                layout="constrained")
    else:
        fig, axs = plt.subplots(1, 2, figsize=(11, 4), layout="constrained")
    sc = axs[0].scatter(*xy.T, c=state.normal, s=80, cmap="viridis")
    fig.colorbar(sc, ax=axs[0], label="normal force [N]")
    for mask, kw in ((state.state == 0, dict(marker="x", c="r", label="open")),
                     (state.state == 2, dict(marker="o", facecolors="none", edgecolors="k",
                                             s=150, label="slipping"))):
        if np.any(mask):
            axs[0].scatter(*xy[mask].T, **kw)
    axs[0].set_title(f"normal force (sum {state.resultant:.6g} N)")
    r = state.slip_ratio
    closed = state.state != 0
    sc = axs[1].scatter(*xy[closed].T, c=r[closed], s=80, cmap="plasma", vmin=0.0, vmax=1.0)
    axs[1].scatter(*xy[~closed].T, marker="x", c="0.6", label="open")
    fig.colorbar(sc, ax=axs[1], label="|f_t| / (mu N) [-]")
    axs[1].set_title("tangential load ratio")
    for ax in axs:
        ax.set_aspect("equal")
        ax.set_xlabel("x [mm]")
        ax.set_ylabel("y [mm]")
    if np.any(state.state != 1):
        axs[0].legend(fontsize=7, loc="lower left", bbox_to_anchor=(0.0, 1.08), ncol=2)
    fig.suptitle(_titled("Contact state at the bolt preload", case))
    return _save(fig, path)


def joint_backbone(dn, state=None, *, mode: int = 0, amplitude=None,
                   amplitude_label="RMS amplitude at the monitor DOF [m]", path=None, case=""):
    """Frequency (Hz) and damping ratio (-) of a damped nonlinear mode against its amplitude
    (``amplitude``, m, one per point; default the RMS amplitude at the monitor DOF), with the
    stuck-interface frequency of mode ``mode`` of ``state`` (a :class:`fesub.hbm.PreloadState`)
    as its small-amplitude limit."""
    plt = _plt()
    x = dn.Am if amplitude is None else np.asarray(amplitude, float)
    fig, axs = plt.subplots(1, 2, figsize=(10, 4), layout="constrained")
    axs[0].semilogx(x, np.asarray(dn.w0) / (2 * math.pi), "k-", label="dNNM")
    if state is not None:
        axs[0].axhline(state.freq_hz[mode], ls="--", c="tab:blue", lw=0.8,
                       label="stuck-interface mode")
    axs[0].set_ylabel("frequency [Hz]")
    axs[0].legend(fontsize=7)
    axs[1].loglog(x, dn.zeta, "k-")
    axs[1].set_ylabel("damping ratio [-]")
    for ax in axs:
        ax.set_xlabel(amplitude_label)
        ax.grid(True, which="both", alpha=0.3)
    fig.suptitle(_titled("Backbone of the jointed structure", case))
    return _save(fig, path)


def interface_maps(maps, *, path=None, case=""):
    """Mean contact pressure (MPa) and slip amplitude (um) over the interface at each point of
    an :class:`fesub.hbm.InterfaceStates` (one row per point; slip-free contacts grey, contacts
    open over part of the period circled)."""
    plt = _plt()
    xy = 1e3 * np.asarray(maps.xy, float)
    npts = len(maps.a)
    fig, axs = plt.subplots(npts, 2, figsize=(11, 1.2 + 1.6 * npts), layout="constrained",
                            squeeze=False)
    pmax = float(np.nanmax(maps.pressure_mean)) / 1e6 or 1.0
    smax = float(np.nanmax(maps.slip)) * 1e6 or 1.0
    for j in range(npts):
        sc = axs[j, 0].scatter(*xy.T, c=maps.pressure_mean[j] / 1e6, s=30, cmap="viridis",
                               vmin=0.0, vmax=pmax)
        part = (maps.open_fraction[j] > 0) & (maps.open_fraction[j] < 1)
        if np.any(part):
            axs[j, 0].scatter(*xy[part].T, marker="o", facecolors="none", edgecolors="r",
                              s=60, lw=0.8)
        fig.colorbar(sc, ax=axs[j, 0], label="pressure [MPa]")
        sl = maps.slip[j] > 0
        axs[j, 1].scatter(*xy[~sl].T, c="0.8", s=30)
        sc = axs[j, 1].scatter(*xy[sl].T, c=maps.slip[j][sl] * 1e6, s=30, cmap="plasma",
                               vmin=0.0, vmax=smax)
        fig.colorbar(sc, ax=axs[j, 1], label="slip amplitude [um]")
        f = maps.w[j] / (2 * math.pi)
        axs[j, 0].set_title(f"mean pressure, {f:.2f} Hz, amplitude {maps.amplitude[j]:.3g} m "
                            "(red: opens in the cycle)", fontsize=8)
        axs[j, 1].set_title(f"slip ({int(sl.sum())} of {sl.size} contacts slip)", fontsize=8)
        for ax in axs[j]:
            ax.set_aspect("equal")
            ax.set_ylabel("y [mm]")
    for ax in axs[-1]:
        ax.set_xlabel("x [mm]")
    fig.suptitle(_titled("Contact pressure and slip over the interface", case))
    return _save(fig, path)


def ring_down_comparison(rd, prediction, dn, n: int, nh: int, *, unit="m", path=None,
                         case=""):
    """A free decay (:class:`fesub.hbm.RingDown`: the signal, its half-swings, frequency in Hz
    and damping ratio) against the damped nonlinear mode ``dn`` it started from (read as a
    decay at the same half-swing; ``n`` DOFs, ``nh`` harmonics) and the decay the mode
    predicts by its energy balance (:class:`fesub.hbm.DecayPrediction`), all against the
    half-swing of the observed signal (in ``unit``)."""
    from .ringdown import swing

    plt = _plt()
    S = np.array([swing(q, n, nh, rd.weights) for q in dn.Q])
    o = np.argsort(S)
    lo, hi = 0.9 * float(np.min(rd.amp)), 1.1 * float(np.max(rd.amp))
    near = (S[o] >= lo) & (S[o] <= hi)
    fig, axs = plt.subplots(1, 3, figsize=(13, 3.8), layout="constrained")
    axs[0].plot(1e3 * rd.t, rd.x, lw=0.6, c="0.3")
    axs[0].plot(1e3 * rd.tc, rd.amp, "o", ms=3, c="tab:red", label="half-swing")
    axs[0].set_xlabel("time [ms]")
    axs[0].set_ylabel(f"observed signal [{unit}]")
    axs[0].legend(fontsize=7)
    wd = np.asarray(dn.damped_frequency)[o]
    axs[1].plot(S[o][near], wd[near] / (2 * math.pi), "k-", label="backbone (as a decay)")
    axs[1].plot(rd.amp, rd.w / (2 * math.pi), "o", ms=3, c="tab:red", label="ring-down")
    axs[1].set_ylabel("frequency [Hz]")
    zm = (np.asarray(dn.decay_rate) / np.asarray(dn.damped_frequency))[o]
    axs[2].plot(S[o][near], zm[near], "k-", label="backbone (as a decay)")
    axs[2].plot(prediction.swing, prediction.zeta, "--", c="tab:blue",
                label="decay it predicts (energy balance)")
    axs[2].plot(rd.amp, rd.zeta, "o", ms=3, c="tab:red", label="ring-down")
    axs[2].set_ylabel("damping ratio [-]")
    axs[0].ticklabel_format(axis="y", style="sci", scilimits=(-3, 3))
    for ax in axs[1:]:
        ax.set_xlabel(f"half-swing [{unit}]")
        ax.set_xlim(lo, hi)
        ax.ticklabel_format(axis="x", style="sci", scilimits=(-3, 3))
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(_titled("Free decay against the backbone", case))
    return _save(fig, path)

