"""Figures for free-play studies (matplotlib, Agg backend, imported lazily).

Every function returns the matplotlib Figure and, when ``path`` is given, saves it there.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["force_law", "bifurcation", "branches", "basin", "basin_compare", "phase_portrait",
           "vector_field_error_map", "floquet"]

_IC_COLOURS = ["tab:red", "tab:blue", "tab:green", "tab:orange", "tab:purple", "black"]
_EVENT_MARKERS = {"fold": ("s", "SN"), "PD": ("D", "PD"), "BP": ("v", "BP"), "NS": ("^", "TR"), "GR+": ("o", "GR"),
                  "GR-": ("o", "GR"), "stability": (None, None), "NS-neutral-saddle": (None, None)}


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _finish(fig, path):
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=120)
        _plt().close(fig)
    return fig


def force_law(law, *, path=None, span=None):
    """Exact vs smoothed free-play law near x = -a with the radius of influence shaded (Fig. 3/6)."""
    from .laws import radius_of_influence_closed_form

    plt = _plt()
    a, d = law.a, law.delta
    span = 12.0 / d if span is None else span
    x = np.linspace(-a - span, -a + span, 2001)
    R, _ = radius_of_influence_closed_form(d)
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(x, law.exact().force(x) / law.kp, "k-", label="exact Fp/kp")
    ax.plot(x, law.force(x) / law.kp, "b--", label=f"sigmoid, delta={d:g}")
    ax.axvspan(-a - R, -a + R, color="orange", alpha=0.25, label=f"R_i = {R:.3g}")
    ax.set_xlabel("x1")
    ax.set_ylabel("F / kp")
    ax.legend()
    return _finish(fig, path)


def bifurcation(res, *, path=None, ax=None):
    """Section x1 (x1' = 0) against W, coloured by initial condition (Fig. 7)."""
    plt = _plt()
    fig = ax.figure if ax is not None else plt.figure(figsize=(8, 5))
    ax = ax or fig.add_subplot(111)
    for j in range(res.ics.shape[0]):
        Ws = np.repeat(res.W, res.section.shape[2])
        ys = res.section[:, j, :].ravel()
        ok = np.isfinite(ys)
        ax.plot(Ws[ok], ys[ok], ".", color=_IC_COLOURS[j % len(_IC_COLOURS)], ms=2, alpha=0.6,
                label=str(np.round(res.ics[j], 2).tolist()))
    ax.set_xlabel("W")
    ax.set_ylabel("x1 at x1' = 0")
    ax.set_title(f"bifurcation diagram ({res.law} law)")
    ax.legend(markerscale=5, fontsize=7, loc="upper right")
    return _finish(fig, path)


def branches(items, *, projection="peak", path=None, ax=None):
    """Continuation branches: solid stable, dashed unstable, special points marked (Fig. 9/12).

    ``items`` is a list of ``(branch, summary, label)`` with ``summary`` from
    :func:`fesub.nonsmooth.branches.branch_summary`; ``projection`` 'peak' (max |x1|) or 'x1_max'
    (which separates mirror pairs).
    """
    plt = _plt()
    fig = ax.figure if ax is not None else plt.figure(figsize=(7, 5))
    ax = ax or fig.add_subplot(111)
    for k, (br, s, label) in enumerate(items):
        y = s[projection]
        W = s["W"]
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
    ax.set_xlabel("W")
    ax.set_ylabel({"peak": "max |x1|", "x1_max": "max x1"}.get(projection, projection))
    ax.legend(fontsize=8)
    return _finish(fig, path)


def basin(res, *, kind="x1_max", path=None, ax=None, points=True):
    """Basin image: colour = steady-state max x1 (or discrete labels), attractor points overlaid."""
    plt = _plt()
    fig = ax.figure if ax is not None else plt.figure(figsize=(6, 5))
    ax = ax or fig.add_subplot(111)
    ext = [res.x1[0], res.x1[-1], res.x2[0], res.x2[-1]]
    data = res.x1_max if kind == "x1_max" else np.where(res.labels >= 0, res.labels, np.nan)
    cmap = "viridis" if kind == "x1_max" else "tab10"
    im = ax.imshow(data.T, origin="lower", extent=ext, aspect="auto", cmap=cmap,
                   interpolation="nearest")
    fig.colorbar(im, ax=ax, label="max x1" if kind == "x1_max" else "attractor label")
    if points:
        for at in res.attractors:
            pts = np.asarray(at.get("strobe", []))
            if pts.size:
                ax.plot(pts[:, 0], pts[:, 2], "k.", ms=4)
    ax.set_xlabel("x1(0)")
    ax.set_ylabel("x2(0)")
    ax.set_title(f"basins, W = {res.W:g} ({res.law})")
    return _finish(fig, path)


def basin_compare(a, b, *, path=None):
    """Two basins side by side with the mask of cells whose attractors differ (Fig. 16)."""
    plt = _plt()
    fig, axs = plt.subplots(1, 3, figsize=(15, 4.5))
    basin(a, ax=axs[0])
    basin(b, ax=axs[1])
    diff = ~a.same_attractor(b)
    ext = [a.x1[0], a.x1[-1], a.x2[0], a.x2[-1]]
    axs[2].imshow(diff.T, origin="lower", extent=ext, aspect="auto", cmap="Greys",
                  interpolation="nearest")
    axs[2].set_title(f"different attractor ({100 * diff.mean():.1f} % of cells)")
    axs[2].set_xlabel("x1(0)")
    return _finish(fig, path)


def phase_portrait(sys, z0, W, *, n_transient=150, n_periods=5, path=None):
    """Phase portrait x1-y1 coloured by region (red x1 >= a, blue x1 <= -a, black gap), with the
    stroboscopic Poincare points and the time series (Fig. 5/17)."""
    from .integrate import flow, make_system

    plt = _plt()
    sys = make_system(sys)
    T = 2 * math.pi / W
    z = flow(sys, z0, 0.0, n_transient * T, W).z if n_transient else np.asarray(z0, float)
    t_eval = np.linspace(0, n_periods * T, 400 * n_periods + 1)
    fr = flow(sys, z, 0.0, n_periods * T, W, t_eval=t_eval)
    t, Z = fr.t, fr.Z
    a = sys.p.a
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.5))
    for mask, col in ((Z[:, 0] >= a, "red"), (Z[:, 0] <= -a, "blue"), (np.abs(Z[:, 0]) < a, "k")):
        ax1.plot(np.where(mask, Z[:, 0], np.nan), np.where(mask, Z[:, 1], np.nan), "-", color=col,
                 lw=1)
    strobe = Z[np.isclose(np.mod(t / T + 1e-9, 1.0), 0.0, atol=1e-6)]
    ax1.plot(strobe[:, 0], strobe[:, 1], "o", color="orange", ms=5, label="t = nT")
    ax1.axvline(a, color="gray", lw=0.5)
    ax1.axvline(-a, color="gray", lw=0.5)
    ax1.set_xlabel("x1")
    ax1.set_ylabel("x1'")
    ax1.legend()
    ax2.plot(t, Z[:, 0], label="x1")
    ax2.plot(t, Z[:, 2], label="x2")
    ax2.set_xlabel("t")
    ax2.legend()
    fig.suptitle(f"W = {W:g} ({sys.law_name} law)")
    return _finish(fig, path)


def vector_field_error_map(params, law_s, *, x_span=None, y_span=0.3, n=401, path=None):
    """Magnitude and direction error (%) of the smoothed vs exact field near the gap (Fig. 4).

    Field of :func:`fesub.nonsmooth.laws.vector_field_error` (undamped, unforced, mass 2 blocked).
    """
    from .laws import vector_field_error
    from .system import get_params

    plt = _plt()
    p = get_params(params)
    a = law_s.a
    x_span = 2 * a if x_span is None else x_span
    x = np.linspace(-x_span, x_span, n)[:, None]
    y = np.linspace(-y_span, y_span, n)[None, :]
    mag, ang = vector_field_error(p.k + p.kd, p.mu + p.mud, law_s, law_s.exact(), x, y, m=p.m)
    fig, axs = plt.subplots(1, 2, figsize=(11, 4.5))
    for ax, data, title in ((axs[0], mag, "magnitude error %"), (axs[1], ang, "direction error %")):
        im = ax.imshow(data.T, origin="lower", aspect="auto", cmap="magma",
                       extent=[x.min(), x.max(), y.min(), y.max()])
        fig.colorbar(im, ax=ax)
        ax.set_title(f"{title} (max {np.nanmax(data):.2g})")
        ax.set_xlabel("x1")
        ax.set_ylabel("x1'")
    return _finish(fig, path)


def floquet(multipliers, *, W=None, path=None, ax=None):
    """Floquet multipliers in the complex plane with the unit circle; coloured by W if given."""
    plt = _plt()
    fig = ax.figure if ax is not None else plt.figure(figsize=(5, 5))
    ax = ax or fig.add_subplot(111)
    th = np.linspace(0, 2 * np.pi, 400)
    ax.plot(np.cos(th), np.sin(th), "k-", lw=0.8)
    lam = np.asarray(multipliers)
    if lam.ndim == 1:
        lam = lam[None]
    c = None if W is None else np.repeat(np.asarray(W, float), lam.shape[1])
    sc = ax.scatter(lam.real.ravel(), lam.imag.ravel(), c=c, s=8, cmap="viridis")
    if W is not None:
        fig.colorbar(sc, ax=ax, label="W")
    ax.set_aspect("equal")
    ax.set_xlabel("Re")
    ax.set_ylabel("Im")
    return _finish(fig, path)
