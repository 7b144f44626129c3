"""Figures for free-play studies (matplotlib through :mod:`fesub.plots.style`, imported lazily).

Every function returns the matplotlib Figure and, when ``path`` is given, writes it there with
:func:`fesub.plots.style.save` (which closes it). Units are the SI units of the results (see
:mod:`fesub.nonsmooth._dataset`): displacement m, velocity m/s, time s, frequency rad/s.
"""

from __future__ import annotations

import math

import numpy as np

from ..plots import style

__all__ = ["force_law", "bifurcation", "branches", "basin", "basin_compare", "phase_portrait",
           "vector_field_error_map", "floquet", "orbit_backbones", "case_label"]

_IC_COLOURS = ["tab:red", "tab:blue", "tab:green", "tab:orange", "tab:purple", "black"]
_EVENT_MARKERS = {"fold": ("s", "SN"), "PD": ("D", "PD"), "BP": ("v", "BP"), "NS": ("^", "TR"),
                  "GR+": ("o", "GR"), "GR-": ("o", "GR"), "stability": (None, None),
                  "NS-neutral-saddle": (None, None)}
#: colours of the cells that reach no periodic attractor (label -1, -2, -3)
_SPECIAL_COLOURS = {-1: "0.6", -2: "black", -3: "white"}


def case_label(params) -> str:
    """Short description of a parameter set for titles: gap, contact stiffness and forcing."""
    from .system import get_params

    p = get_params(params)
    return f"a = {p.a:g} m, kp = {p.kp:g} N/m, Q1 = {p.Q1:g} N"


def _finish(fig, path):
    if path is not None:
        style.save(fig, path)
    return fig


def force_law(law, *, path=None, span=None):
    """Exact vs smoothed free-play law near x = -a, radius of influence shaded (Fig. 3/6)."""
    from .laws import radius_of_influence_closed_form

    plt = style.pyplot()
    a, d = law.a, law.delta
    span = 12.0 / d if span is None else span
    x = np.linspace(-a - span, -a + span, 2001)
    R, _ = radius_of_influence_closed_form(d)
    fig, ax = plt.subplots(figsize=(6, 4), layout="constrained")
    ax.plot(x, law.exact().force(x) / law.kp, "k-", label="exact law")
    ax.plot(x, law.force(x) / law.kp, "b--", label=f"sigmoid, delta = {d:g} 1/m")
    ax.axvspan(-a - R, -a + R, color="orange", alpha=0.25, label=f"radius of influence {R:.3g} m")
    ax.set_xlabel("x1 [m]")
    ax.set_ylabel("contact force / kp [m]")
    ax.set_title(f"Free-play force near the gap edge -a (a = {a:g} m, kp = {law.kp:g} N/m)", fontsize=10)
    ax.legend()
    return _finish(fig, path)


def bifurcation(res, *, path=None, ax=None, title=None):
    """Section x1 (x1' = 0) against W, coloured by initial condition (Fig. 7)."""
    plt = style.pyplot()
    fig = ax.figure if ax is not None else plt.figure(figsize=(8, 5))
    ax = ax or fig.add_subplot(111)
    for j in range(res.ics.shape[0]):
        Ws = np.repeat(res.W, res.section.shape[2])
        ys = res.section[:, j, :].ravel()
        ok = np.isfinite(ys)
        ax.plot(Ws[ok], ys[ok], ".", color=_IC_COLOURS[j % len(_IC_COLOURS)], ms=2, alpha=0.6,
                label="IC " + str(np.round(res.ics[j], 2).tolist()))
    ax.set_xlabel("forcing frequency W [rad/s]")
    ax.set_ylabel("x1 at x1' = 0 [m]")
    case = case_label(res.options["params"]) if "params" in res.options else ""
    ax.set_title(title or f"Bifurcation diagram, {res.law} law ({case})"
                 + (" - interrupted" if getattr(res, "status", "complete") != "complete" else ""))
    ax.legend(markerscale=5, fontsize=7, loc="upper right", title="initial state [m, m/s]",
              title_fontsize=7)
    return _finish(fig, path)


def _branch_rows(item):
    """``(branch, {W, peak, x1_max, stable}, label)`` of an OrbitBranch or a (branch, summary,
    label) tuple."""
    if isinstance(item, tuple):
        return item
    s = {"W": np.asarray(item.W), "peak": item.peak, "x1_max": item.x1_max,
         "x1_min": item.x1_min, "stable": item.stable}
    return item.branch, s, item.label


def branches(items, *, projection="peak", path=None, ax=None, title=None):
    """Continuation branches: solid stable, dashed unstable, special points marked (Fig. 9/12).

    ``items`` is a list of :class:`~fesub.nonsmooth.branches.OrbitBranch` or of ``(branch,
    summary, label)`` with ``summary`` from :func:`fesub.nonsmooth.branches.branch_summary`;
    ``projection`` 'peak' (max |x1|) or 'x1_max' (which separates mirror pairs).
    """
    plt = style.pyplot()
    fig = ax.figure if ax is not None else plt.figure(figsize=(7, 5))
    ax = ax or fig.add_subplot(111)
    for k, item in enumerate(items):
        br, s, label = _branch_rows(item)
        y = np.asarray(s[projection])
        W = np.asarray(s["W"])
        st = np.asarray(s["stable"], bool)
        col = f"C{k}"
        for i in range(len(W) - 1):
            ax.plot(W[i:i + 2], y[i:i + 2], "-" if st[i] and st[i + 1] else "--", color=col,
                    lw=1.5)
        ax.plot([], [], "-", color=col, label=label)
        for e in br.events:
            mk, name = _EVENT_MARKERS.get(e.kind, (None, None))
            if mk is None:
                continue
            i = min(e.index, len(W) - 1)
            yv = y[i] if i + 1 >= len(W) else np.interp(e.lam, sorted(W[i:i + 2]),
                                                        y[i:i + 2] if W[i] <= W[i + 1] else y[i:i + 2][::-1])
            ax.plot(e.lam, yv, mk, color="k", mfc="none")
            ax.annotate(name, (e.lam, yv), fontsize=7, xytext=(3, 3), textcoords="offset points")
    ax.plot([], [], "k--", label="unstable")
    ax.set_xlabel("forcing frequency W [rad/s]")
    ax.set_ylabel({"peak": "max |x1| [m]", "x1_max": "max x1 [m]"}.get(projection,
                                                                         f"{projection} [m]"))
    ax.set_title(title or "Periodic-orbit branches (solid stable, dashed unstable)")
    ax.legend(fontsize=8)
    return _finish(fig, path)


def _basin_categories(res):
    """Labels present in a basin in legend order, and a colour for each."""
    present = set(np.unique(res.labels).tolist())
    labs = [a["label"] for a in res.attractors]
    cyc = [f"C{i}" for i in range(10)] if len(labs) <= 10 else \
        [style.pyplot().get_cmap("tab20")(i % 20) for i in range(len(labs))]
    cats = [(lab, cyc[i]) for i, lab in enumerate(labs)]
    cats += [(lab, _SPECIAL_COLOURS[lab]) for lab in (-1, -2, -3) if lab in present]
    return cats


def basin(res, *, path=None, ax=None, points=True, title=None, legend=True):
    """Basin image with a discrete colour per attractor and a legend naming each one
    ("period-1 orbit, x1 from ... to ... m", "divergent", "not converged"); the attractors'
    stroboscopic points are overlaid."""
    from matplotlib.colors import BoundaryNorm, ListedColormap
    from matplotlib.patches import Patch

    plt = style.pyplot()
    fig = ax.figure if ax is not None else plt.figure(figsize=(8.5, 5), layout="constrained")
    ax = ax or fig.add_subplot(111)
    cats = _basin_categories(res)
    idx = np.zeros(res.labels.shape, dtype=int)
    for k, (lab, _) in enumerate(cats):
        idx[res.labels == lab] = k
    n = max(len(cats), 1)
    cmap = ListedColormap([c for _, c in cats] or ["white"])
    norm = BoundaryNorm(np.arange(n + 1) - 0.5, n)
    dx = (res.x1[1] - res.x1[0]) / 2 if len(res.x1) > 1 else 0.5
    dy = (res.x2[1] - res.x2[0]) / 2 if len(res.x2) > 1 else 0.5
    ext = [res.x1[0] - dx, res.x1[-1] + dx, res.x2[0] - dy, res.x2[-1] + dy]
    ax.imshow(idx.T, origin="lower", extent=ext, aspect="equal", cmap=cmap, norm=norm,
              interpolation="nearest")
    handles = []
    total = res.labels.size
    for lab, col in cats:
        frac = 100.0 * np.count_nonzero(res.labels == lab) / total
        handles.append(Patch(facecolor=col, edgecolor="0.3",
                             label=f"{res.attractor_name(lab)} ({frac:.1f} %)"))
    if points:
        colour = dict(cats)
        shown = False
        for at in res.attractors:
            pts = np.asarray(at.get("strobe", []))
            if pts.size:
                ax.plot(pts[:, 0], pts[:, 2], "o", mfc=colour.get(at["label"], "k"), mec="k",
                        ms=6)
                shown = True
        if shown:
            handles.append(ax.plot([], [], "o", mfc="none", mec="k", ms=6,
                                   label="attractor at t = nT (x1, x2)")[0])
    ax.set_xlabel("initial displacement x1(0) [m]")
    ax.set_ylabel("initial displacement x2(0) [m]")
    case = case_label(res.options["params"]) if "params" in res.options else ""
    ax.set_title(title or f"Basins of attraction, W = {res.W:g} rad/s, {res.law} law\n({case})"
                 + (" - interrupted" if res.status != "complete" else ""), fontsize=10)
    if legend:
        ax.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0),
                  borderaxespad=0.0, title="attractor reached", title_fontsize=8)
    return _finish(fig, path)


def basin_compare(a, b, *, path=None):
    """Two basins side by side with the mask of cells whose attractors differ (Fig. 16)."""
    from matplotlib.colors import BoundaryNorm, ListedColormap
    from matplotlib.patches import Patch

    plt = style.pyplot()
    fig, axs = plt.subplots(1, 3, figsize=(19, 5), layout="constrained")
    basin(a, ax=axs[0], title=f"{a.law} law")
    basin(b, ax=axs[1], title=f"{b.law} law")
    diff = ~a.same_attractor(b)
    dx = (a.x1[1] - a.x1[0]) / 2 if len(a.x1) > 1 else 0.5
    dy = (a.x2[1] - a.x2[0]) / 2 if len(a.x2) > 1 else 0.5
    ext = [a.x1[0] - dx, a.x1[-1] + dx, a.x2[0] - dy, a.x2[-1] + dy]
    axs[2].imshow(diff.T.astype(int), origin="lower", extent=ext, aspect="auto",
                  cmap=ListedColormap(["white", "tab:red"]), norm=BoundaryNorm([-0.5, 0.5, 1.5], 2),
                  interpolation="nearest")
    axs[2].legend(handles=[Patch(facecolor="white", edgecolor="0.3", label="same attractor"),
                           Patch(facecolor="tab:red", label="different attractor")], fontsize=7,
                  loc="upper left", bbox_to_anchor=(1.02, 1.0))
    axs[2].set_title(f"different attractor ({100 * diff.mean():.1f} % of cells)")
    axs[2].set_xlabel("initial displacement x1(0) [m]")
    axs[2].set_ylabel("initial displacement x2(0) [m]")
    case = case_label(a.options["params"]) if "params" in a.options else ""
    fig.suptitle(f"Basins of attraction, W = {a.W:g} rad/s: {a.law} vs {b.law} law ({case})")
    return _finish(fig, path)


def phase_portrait(sys, z0, W, *, n_transient=150, n_periods=5, path=None):
    """Phase portrait x1-y1 coloured by region (red x1 >= a, blue x1 <= -a, black gap), with the
    stroboscopic Poincare points and the time series (Fig. 5/17)."""
    from .integrate import flow, make_system

    plt = style.pyplot()
    sys = make_system(sys)
    T = 2 * math.pi / W
    z = flow(sys, z0, 0.0, n_transient * T, W).z if n_transient else np.asarray(z0, float)
    t_eval = np.linspace(0, n_periods * T, 400 * n_periods + 1)
    fr = flow(sys, z, 0.0, n_periods * T, W, t_eval=t_eval)
    t, Z = fr.t, fr.Z
    a = sys.p.a
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.5), layout="constrained")
    for mask, col, lab in ((Z[:, 0] >= a, "red", "x1 >= a"), (Z[:, 0] <= -a, "blue", "x1 <= -a"),
                           (np.abs(Z[:, 0]) < a, "k", "in the gap")):
        ax1.plot(np.where(mask, Z[:, 0], np.nan), np.where(mask, Z[:, 1], np.nan), "-", color=col,
                 lw=1, label=lab)
    strobe = Z[np.isclose(np.mod(t / T + 1e-9, 1.0), 0.0, atol=1e-6)]
    ax1.plot(strobe[:, 0], strobe[:, 1], "o", color="orange", ms=5, label="t = nT")
    ax1.axvline(a, color="gray", lw=0.5)
    ax1.axvline(-a, color="gray", lw=0.5)
    ax1.set_xlabel("x1 [m]")
    ax1.set_ylabel("x1' [m/s]")
    ax1.set_title("phase portrait of mass 1")
    ax1.legend(fontsize=8)
    ax2.plot(t, Z[:, 0], label="x1")
    ax2.plot(t, Z[:, 2], label="x2")
    ax2.set_xlabel("time t [s]")
    ax2.set_ylabel("displacement [m]")
    ax2.set_title(f"{n_periods} forcing periods")
    ax2.legend()
    fig.suptitle(f"Periodic orbit, W = {W:g} rad/s, {sys.law_name} law ({case_label(sys.p)})")
    return _finish(fig, path)


def vector_field_error_map(params, law_s, *, x_span=None, y_span=0.3, n=401, path=None):
    """Magnitude and direction error (%) of the smoothed vs exact field near the gap (Fig. 4).

    Field of :func:`fesub.nonsmooth.laws.vector_field_error` (undamped, unforced, mass 2 blocked).
    """
    from .laws import vector_field_error
    from .system import get_params

    plt = style.pyplot()
    p = get_params(params)
    a = law_s.a
    x_span = 2 * a if x_span is None else x_span
    x = np.linspace(-x_span, x_span, n)[:, None]
    y = np.linspace(-y_span, y_span, n)[None, :]
    mag, ang = vector_field_error(p.k + p.kd, p.mu + p.mud, law_s, law_s.exact(), x, y, m=p.m)
    fig, axs = plt.subplots(1, 2, figsize=(11, 4.5), layout="constrained")
    for ax, data, title in ((axs[0], mag, "magnitude error"), (axs[1], ang, "direction error")):
        im = ax.imshow(data.T, origin="lower", aspect="auto", cmap="magma",
                       extent=[x.min(), x.max(), y.min(), y.max()])
        fig.colorbar(im, ax=ax, label=f"{title} [%]")
        ax.set_title(f"{title} (max {np.nanmax(data):.2g} %)")
        ax.set_xlabel("x1 [m]")
        ax.set_ylabel("x1' [m/s]")
    fig.suptitle(f"Sigmoid law (delta = {law_s.delta:g} 1/m) against the exact law, "
                 f"a = {a:g} m")
    return _finish(fig, path)


def floquet(multipliers, *, W=None, path=None, ax=None, title=None):
    """Floquet multipliers in the complex plane with the unit circle; coloured by W if given."""
    plt = style.pyplot()
    fig = ax.figure if ax is not None else plt.figure(figsize=(6, 5))
    ax = ax or fig.add_subplot(111)
    th = np.linspace(0, 2 * np.pi, 400)
    ax.plot(np.cos(th), np.sin(th), "k-", lw=0.8, label="|multiplier| = 1")
    lam = np.asarray(multipliers)
    if lam.ndim == 1:
        lam = lam[None]
    c = None if W is None else np.repeat(np.asarray(W, float), lam.shape[1])
    sc = ax.scatter(lam.real.ravel(), lam.imag.ravel(), c=c, s=8,
                    **({} if c is None else {"cmap": "viridis"}), label="multipliers")
    if W is not None:
        fig.colorbar(sc, ax=ax, label="forcing frequency W [rad/s]")
    ax.set_aspect("equal")
    ax.set_xlabel("Re(multiplier) [-]")
    ax.set_ylabel("Im(multiplier) [-]")
    ax.set_title(title or "Floquet multipliers (stable inside the unit circle)")
    return _finish(fig, path)


def orbit_backbones(items, *, path=None, ax=None, title=None):
    """Backbones (conservative NNM families): frequency against amplitude A = x1 at rest.

    ``items`` is a list of :class:`~fesub.nonsmooth.branches.OrbitBackbone`.
    """
    plt = style.pyplot()
    fig = ax.figure if ax is not None else plt.figure(figsize=(7, 5))
    ax = ax or fig.add_subplot(111)
    for bb in items:
        ax.plot(bb.frequency, bb.A, label=f"{bb.law} law, mode {bb.mode}")
    ax.set_xlabel("frequency [rad/s]")
    ax.set_ylabel("amplitude A = x1 at rest [m]")
    ax.set_title(title or "Backbones of the conservative system (c = cd = 0, no forcing)")
    ax.legend()
    return _finish(fig, path)
