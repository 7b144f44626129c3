"""Figures of the Coulomb-chain study (spec section 10): transmissibility families with the
continuous/stick-slip boundary, the stuck curve and numeric markers; phase curves; regime maps in
the (r1, beta) plane; time histories.

Every function returns the figure; write it with :func:`fesub.plots.style.save`. Results already
computed (a :class:`~fesub.coulomb.SteadyState`, a :class:`~fesub.coulomb.RegimeMap`) can be
passed in, so that a figure shows the numbers a study saved. The study is non-dimensional: axes
are labelled ``[-]`` (amplitudes per unit static deflection ``P/k_1``, or per unit base amplitude
``Y`` for a moving base), phases in degrees, times in rad.
"""

from __future__ import annotations

import numpy as np

from ..plots import style
from .analytic import (CONTINUOUS, REGIME_NAMES, STICK_SLIP, STUCK, beta_limit, regime_map, steady_state,
                       time_response)
from .features import invariant_points
from .model import CoulombContact

__all__ = ["plot_transmissibility", "plot_phase", "plot_phase_panels", "plot_regime_map",
           "plot_time_history", "case_label"]

R1_LABEL = "r1 = omega sqrt(m1/k1) [-]"
_REGIME_COLOURS = ("#cfe8ff", "#ffe0b3", "#d9d9d9")


def _axes(ax, figsize=(6.4, 4.2)):
    if ax is None:  # laid out: a legend may sit beside the axes
        fig, ax = style.pyplot().subplots(figsize=figsize, layout="constrained")
    else:
        fig = ax.figure
    return fig, ax


def case_label(model, contact, load, mu) -> str:
    """``"2-mass chain, wall on mass 1, load on mass 1, mu = 1"`` (masses counted from 1)."""
    contact = CoulombContact.from_spec(contact)
    where = "base motion on mass 1" if contact.kind == "base" else f"load on mass {contact.load_index(load) + 1}"
    return f"{model.n}-mass chain, {contact.label()}, {where}, mu = {mu:g}"


def _symbol(k, contact) -> str:
    norm = "/Y" if CoulombContact.from_spec(contact).kind == "base" else " k1/P"
    return f"Z{norm} (contact coordinate)" if k is None else f"X_{k + 1}{norm}"


def _pick(ss, k):
    """Amplitude/phase arrays (nb, nr) of mass k, or of the contact coordinate when k is None."""
    if k is None:
        return ss.Z, ss.phi_c
    return ss.X[..., k], ss.phi[..., k]


def _colours(n):
    return style.pyplot().cm.viridis(np.linspace(0, 0.9, n))


def _steady(model, contact, load, r1, betas, mu, ss):
    if ss is None:
        ss = steady_state(model, contact, load, r1, betas, mu=mu)
    return ss, ss.masked()


def plot_transmissibility(model, contact, load, r1, betas, k=0, mu=1.0, numeric=None,
                          boundary=True, stuck=True, invariant=True, ax=None, n_boundary=120,
                          ss=None):
    """Transmissibility of mass ``k`` (0-based; ``None``: contact coordinate) against r1.

    Continuous parts are solid (NaN outside the continuous regime), the continuous/stick-slip
    boundary (amplitude at beta = beta_lim) dashed, the stuck configuration dotted, invariant
    points as magenta dots. ``numeric``: list of :class:`~fesub.coulomb.SimResult` drawn as
    circles (continuous) and diamonds (stick-slip/stuck). ``ss``: the
    :class:`~fesub.coulomb.SteadyState` on ``(r1, betas)`` if already computed.
    """
    contact = CoulombContact.from_spec(contact)
    r1 = np.asarray(r1, dtype=float)
    betas = np.atleast_1d(np.asarray(betas, dtype=float))
    fig, ax = _axes(ax)
    ss, sm = _steady(model, contact, load, r1, betas, mu, ss)
    amp, _ = _pick(sm, k)
    colors = _colours(betas.size)
    for ib, b in enumerate(betas):
        ax.plot(r1, amp[ib], color=colors[ib], lw=1.4, label=f"beta = {b:g}")
    if boundary:
        rb = np.linspace(r1.min(), r1.max(), n_boundary)
        bl = beta_limit(model, contact, load, rb, mu=mu)
        vals = np.full(rb.size, np.nan)
        if k is None:   # closed form of the contact coordinate at beta = beta_lim
            sb = steady_state(model, contact, load, rb, 0.0, mu=mu, amplitude="monoharmonic")
            with np.errstate(invalid="ignore"):
                vals = np.sqrt(np.maximum(sb.Vc ** 2 - (bl * sb.Uc) ** 2, 0.0))
        for i, (rr, bb) in enumerate(zip(rb, bl) if k is not None else []):
            if bb > 0 and np.isfinite(bb):
                s1 = steady_state(model, contact, load, rr, bb * (1 - 1e-9), mu=mu)
                vals[i] = _pick(s1, k)[0][0, 0]
        ax.plot(rb, vals, "k--", lw=1.0, label="continuous / stick-slip boundary")
    if stuck:
        if k is None:
            ax.plot(r1, np.abs(ss.X_stuck @ contact.vector(model.n) - contact.b_amp), "k:", lw=1.0,
                    label="stuck configuration")
        else:
            ax.plot(r1, np.abs(ss.X_stuck[:, k]), "k:", lw=1.0, label="stuck configuration")
    if invariant:
        try:
            bpos = betas[betas > 0]
            pts = invariant_points(model, contact, load, k, r_range=(r1.min(), r1.max()), n=4001,
                                   beta=bpos.min() if bpos.size else None, mu=mu)
        except Exception:   # noqa: BLE001 - decoration only
            pts = np.array([])
        if pts.size:
            s2 = steady_state(model, contact, load, pts, betas[:1], mu=mu)
            ax.plot(pts, _pick(s2, k)[0][0], "o", color="m", ms=4, label="invariant points (U = 0)")
    if numeric:
        for res in numeric:
            if not res.converged:
                continue
            val = res.Z if k is None else res.X[k]
            ib = int(np.argmin(np.abs(betas - res.beta)))
            mk = "o" if res.regime == CONTINUOUS else "D"
            ax.plot(res.r1, val, mk, mfc="none", color=colors[ib], ms=5)
        ax.plot([], [], "o", mfc="none", color="0.3", label="time integration: continuous")
        ax.plot([], [], "D", mfc="none", color="0.3", label="time integration: stick-slip")
    ax.set_yscale("log")
    lo, hi = ax.get_ylim()
    ax.set_ylim(max(lo, hi * 1e-6), hi)   # exact zeros of a stuck mass would stretch the axis
    ax.set_xlabel(R1_LABEL)
    ax.set_ylabel(_symbol(k, contact) + " [-]")
    ax.set_title(f"{_symbol(k, contact).split(' (')[0]}: {case_label(model, contact, load, mu)}",
                 fontsize=9)
    ax.legend(fontsize=7, loc="best")
    ax.grid(alpha=0.3, which="both")
    return fig


def plot_phase(model, contact, load, r1, betas, k=0, mu=1.0, numeric=None, ax=None, ss=None):
    """Phase lag (degrees) of mass ``k`` (``None``: contact coordinate), continuous regime only."""
    r1 = np.asarray(r1, dtype=float)
    betas = np.atleast_1d(np.asarray(betas, dtype=float))
    fig, ax = _axes(ax)
    _, sm = _steady(model, contact, load, r1, betas, mu, ss)
    _, ph = _pick(sm, k)
    colors = _colours(betas.size)
    for ib, b in enumerate(betas):
        ax.plot(r1, np.degrees(ph[ib]), color=colors[ib], lw=1.4, label=f"beta = {b:g}")
    if numeric:
        for res in numeric:
            if res.converged and res.regime == CONTINUOUS:
                val = res.phi_c if k is None else res.phi[k]
                ib = int(np.argmin(np.abs(betas - res.beta)))
                ax.plot(res.r1, np.degrees(val), "o", mfc="none", color=colors[ib], ms=5)
    name = "Z" if k is None else f"X_{k + 1}"
    ax.set_xlabel(R1_LABEL)
    ax.set_ylabel(f"phase lag of {name} [deg]")
    ax.set_title(f"phase of {name}: {case_label(model, contact, load, mu)}", fontsize=9)
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    return fig


def plot_phase_panels(model, contact, load, r1, betas, mu=1.0, numeric=None, ss=None):
    """Phase lag of every mass, one panel per mass, on one figure."""
    n = model.n
    fig, axs = style.pyplot().subplots(n, 1, figsize=(6.4, 2.4 * n), sharex=True, squeeze=False)
    for k in range(n):
        ax = axs[k, 0]
        plot_phase(model, contact, load, r1, betas, k=k, mu=mu, numeric=numeric, ax=ax, ss=ss)
        ax.set_title(f"mass {k + 1}", fontsize=9)
        if k < n - 1:
            ax.set_xlabel(R1_LABEL, fontsize=7)
    fig.suptitle(f"phase lags, continuous regime: {case_label(model, contact, load, mu)}",
                 fontsize=9)
    fig.tight_layout()
    return fig


def plot_regime_map(model, contact, load, r1, betas, mu=1.0, numeric_map=None, ax=None,
                    mus=None, rmap=None):
    """Regimes in the (r1, beta) plane: continuous / stick-slip / stuck filled, the exact boundary
    (black), the s_i = 1 approximation of Eq. 68 (red dashes), the stuck boundary (blue); optional
    numeric regimes (:class:`~fesub.coulomb.NumericRegimeMap`) as markers and boundary
    families for several ``mus``. ``rmap``: the :class:`~fesub.coulomb.RegimeMap` on
    ``(r1, betas)`` if already computed."""
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    r1 = np.asarray(r1, dtype=float)
    betas = np.asarray(betas, dtype=float)
    fig, ax = _axes(ax)
    if rmap is None:
        rmap = regime_map(model, contact, load, r1, betas, mu=mu)
    top = betas.max()
    ax.pcolormesh(r1, betas, rmap.regime, cmap=ListedColormap(list(_REGIME_COLOURS)), vmin=-0.5,
                  vmax=2.5, shading="nearest")
    ax.plot(r1, np.minimum(rmap.beta_lim, top), "k-", lw=1.0, label="beta_lim (exact S)")
    ax.plot(r1, np.minimum(rmap.beta_lim_unit, top), "r--", lw=1.0, label="Eq. 68 (s_i = 1)")
    ax.plot(r1, np.minimum(rmap.beta_stuck, top), "b-", lw=1.0, label="stuck boundary beta*")
    for m in (mus or []):
        ax.plot(r1, np.minimum(beta_limit(model, contact, load, r1, mu=m), top), lw=0.8,
                label=f"beta_lim, mu = {m:g}")
    if numeric_map is not None:
        marks = {CONTINUOUS: ("o", "tab:blue"), STICK_SLIP: ("D", "tab:orange"), STUCK: ("s", "0.3")}
        R, Bt = np.meshgrid(numeric_map.r1, numeric_map.beta)
        for code, (mk, col) in marks.items():
            sel = (numeric_map.regime == code) & (numeric_map.converged | (code == STUCK))
            ax.plot(R[sel], Bt[sel], mk, ms=2.5, color=col, mfc="none", lw=0,
                    label=f"numeric: {REGIME_NAMES[code]}")
        sel = ~numeric_map.converged & (numeric_map.regime != STUCK) & (numeric_map.regime >= 0)
        ax.plot(R[sel], Bt[sel], "x", ms=3, color="r", label="numeric: not settled")
    handles, _ = ax.get_legend_handles_labels()
    handles += [Patch(facecolor=c, edgecolor="0.5", label=name) for c, name in
                zip(_REGIME_COLOURS, REGIME_NAMES)]
    ax.set_ylim(betas.min(), top)
    ax.set_xlabel(R1_LABEL)
    ax.set_ylabel("beta = F/P [-]")
    ax.set_title(f"regimes: {case_label(model, contact, load, mu)}", fontsize=9)
    ax.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0),
              borderaxespad=0.0)   # outside: the map fills the axes
    return fig


def plot_time_history(model, contact, load, r1, beta, sim=None, ax=None, mu=None):
    """Analytic time response of every mass over one period (lines), the load, and numeric
    markers from a :class:`~fesub.coulomb.SimResult` (shifted so that tau = 0 is the maximum of
    the contact coordinate). ``mu`` (for the title) defaults to the simulation's, else 1."""
    from .integrate import period_history

    fig, ax = _axes(ax)
    tau, x, phi_c = time_response(model, contact, load, r1, beta, ntau=801)
    colors = style.pyplot().cm.tab10(np.arange(x.shape[0]) % 10)
    for k in range(x.shape[0]):
        ax.plot(tau, x[k], color=colors[k], lw=1.3, label=f"x_{k + 1} (closed form)")
    ax.plot(tau, np.cos(tau + phi_c), "k:", lw=0.8, label="load cos(tau + phi)")
    if sim is not None and np.isfinite(phi_c):
        ts = np.linspace(0, 2 * np.pi, 41)
        xs = period_history(model, contact, load, sim, np.mod(ts + phi_c, 2 * np.pi))
        for k in range(x.shape[0]):
            ax.plot(ts, xs[k], "o", mfc="none", color=colors[k], ms=4)
        ax.plot([], [], "o", mfc="none", color="0.3", label="time integration")
    norm = "/Y" if CoulombContact.from_spec(contact).kind == "base" else " k1/P"
    ax.set_xlabel("tau = omega t [rad]")
    ax.set_ylabel(f"x_k{norm} [-]")
    mu = mu if mu is not None else (sim.mu if sim is not None else 1.0)
    ax.set_title(f"r1 = {r1:g}, beta = {beta:g}:\n{case_label(model, contact, load, mu)}",
                 fontsize=9)
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    return fig
