"""Figures of the Coulomb-chain study (spec section 10): transmissibility families with the
continuous/stick-slip boundary, the stuck curve and numeric markers; phase curves; regime maps in
the (r1, beta) plane; time histories. matplotlib is imported lazily (Agg backend)."""

from __future__ import annotations

import numpy as np

from .analytic import (CONTINUOUS, STICK_SLIP, STUCK, beta_limit, invariant_points, steady_state,
                       time_response)
from .model import Contact

__all__ = ["plot_transmissibility", "plot_phase", "plot_regime_map", "plot_time_history"]


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _axes(ax, figsize=(6.4, 4.2)):
    plt = _plt()
    if ax is None:
        fig, ax = plt.subplots(figsize=figsize)
    else:
        fig = ax.figure
    return fig, ax


def _label(k, contact):
    if k is None:
        return "Z (contact coordinate)"
    return f"X_{k + 1}"


def _pick(ss, k):
    """Amplitude/phase arrays (nb, nr) of mass k, or of the contact coordinate when k is None."""
    if k is None:
        return ss.Z, ss.phi_c
    return ss.X[..., k], ss.phi[..., k]


def plot_transmissibility(model, contact, load, r1, betas, k=0, mu=1.0, numeric=None,
                          boundary=True, stuck=True, invariant=True, ax=None, n_boundary=120):
    """Transmissibility of mass ``k`` (0-based; ``None``: contact coordinate) against r1.

    Continuous parts are solid (NaN outside the continuous regime), the continuous/stick-slip
    boundary (amplitude at beta = beta_lim) dashed, the stuck configuration dotted, invariant
    points as magenta dots. ``numeric``: list of :class:`~fesub.coulomb.SimResult` drawn as
    circles (continuous) and diamonds (stick-slip/stuck).
    """
    contact = Contact.from_spec(contact)
    r1 = np.asarray(r1, dtype=float)
    betas = np.atleast_1d(np.asarray(betas, dtype=float))
    fig, ax = _axes(ax)
    ss = steady_state(model, contact, load, r1, betas, mu=mu).masked()
    amp, _ = _pick(ss, k)
    colors = _plt().cm.viridis(np.linspace(0, 0.9, betas.size))
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
    ax.set_yscale("log")
    ax.set_xlabel("r1 = omega sqrt(m1/k1)")
    ax.set_ylabel(_label(k, contact) + " (per unit load)")
    ax.set_title(f"{contact.label()}, load on mass {ss.load + 1}, mu = {mu:g}")
    ax.legend(fontsize=7, loc="best")
    ax.grid(alpha=0.3, which="both")
    return fig


def plot_phase(model, contact, load, r1, betas, k=0, mu=1.0, numeric=None, ax=None):
    """Phase lag (degrees) of mass ``k`` (``None``: contact coordinate), continuous regime only."""
    r1 = np.asarray(r1, dtype=float)
    betas = np.atleast_1d(np.asarray(betas, dtype=float))
    fig, ax = _axes(ax)
    ss = steady_state(model, contact, load, r1, betas, mu=mu).masked()
    _, ph = _pick(ss, k)
    colors = _plt().cm.viridis(np.linspace(0, 0.9, betas.size))
    for ib, b in enumerate(betas):
        ax.plot(r1, np.degrees(ph[ib]), color=colors[ib], lw=1.4, label=f"beta = {b:g}")
    if numeric:
        for res in numeric:
            if res.converged and res.regime == CONTINUOUS:
                val = res.phi_c if k is None else res.phi[k]
                ib = int(np.argmin(np.abs(betas - res.beta)))
                ax.plot(res.r1, np.degrees(val), "o", mfc="none", color=colors[ib], ms=5)
    ax.set_xlabel("r1")
    ax.set_ylabel(f"phase of {_label(k, None)} (deg)")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    return fig


def plot_regime_map(model, contact, load, r1, betas, mu=1.0, numeric_map=None, ax=None,
                    mus=None):
    """Regimes in the (r1, beta) plane: continuous / stick-slip / stuck filled, the exact boundary
    (black), the s_i = 1 approximation of Eq. 68 (red dashes), the stuck boundary (blue); optional
    numeric regimes (:class:`~fesub.coulomb.simulate.NumericRegimeMap`) as markers and boundary
    families for several ``mus``."""
    from matplotlib.colors import ListedColormap

    r1 = np.asarray(r1, dtype=float)
    betas = np.asarray(betas, dtype=float)
    fig, ax = _axes(ax)
    ss = steady_state(model, contact, load, r1, betas, mu=mu, amplitude="monoharmonic")
    cmap = ListedColormap(["#cfe8ff", "#ffe0b3", "#d9d9d9"])
    ax.pcolormesh(r1, betas, ss.regime, cmap=cmap, vmin=-0.5, vmax=2.5, shading="nearest")
    ax.plot(r1, np.minimum(ss.beta_lim, betas.max()), "k-", lw=1.0, label="beta_lim (exact S)")
    approx = beta_limit(model, contact, load, r1, mu=mu, s_method="unit")
    ax.plot(r1, np.minimum(approx, betas.max()), "r--", lw=1.0, label="Eq. 68 (s_i = 1)")
    ax.plot(r1, np.minimum(ss.beta_stuck, betas.max()), "b-", lw=1.0, label="stuck boundary beta*")
    for m in (mus or []):
        ax.plot(r1, np.minimum(beta_limit(model, contact, load, r1, mu=m), betas.max()), lw=0.8,
                label=f"beta_lim, mu = {m:g}")
    if numeric_map is not None:
        marks = {CONTINUOUS: ("o", "tab:blue"), STICK_SLIP: ("D", "tab:orange"), STUCK: ("s", "0.3")}
        R, Bt = np.meshgrid(numeric_map.r1, numeric_map.beta)
        for code, (mk, col) in marks.items():
            sel = (numeric_map.regime == code) & (numeric_map.converged | (code == STUCK))
            ax.plot(R[sel], Bt[sel], mk, ms=2.5, color=col, mfc="none", lw=0)
        sel = ~numeric_map.converged & (numeric_map.regime != STUCK) & (numeric_map.regime >= 0)
        ax.plot(R[sel], Bt[sel], "x", ms=3, color="r", label="numeric: not settled")
    ax.set_ylim(betas.min(), betas.max())
    ax.set_xlabel("r1")
    ax.set_ylabel("beta = F/P")
    ax.set_title("regimes: continuous (blue), stick-slip (orange), stuck (grey)", fontsize=9)
    ax.legend(fontsize=7, loc="upper left")
    return fig


def plot_time_history(model, contact, load, r1, beta, sim=None, ax=None):
    """Analytic time response of every mass over one period (lines), the load, and numeric
    markers from a :class:`~fesub.coulomb.SimResult` (shifted so that tau = 0 is the maximum of
    the contact coordinate)."""
    fig, ax = _axes(ax)
    tau, x, phi_c = time_response(model, contact, load, r1, beta, ntau=801)
    colors = _plt().cm.tab10(np.arange(x.shape[0]) % 10)
    for k in range(x.shape[0]):
        ax.plot(tau, x[k], color=colors[k], lw=1.3, label=f"x_{k + 1}")
    ax.plot(tau, np.cos(tau + phi_c), "k:", lw=0.8, label="load cos(tau + phi)")
    if sim is not None and np.isfinite(phi_c):
        ts = np.linspace(0, 2 * np.pi, 41)
        from .simulate import _period_history, build_system

        sysd = build_system(model, contact, load, r1, beta, sim.mu)
        seglog = sim.state["seglog"]
        xfun, _, _ = _period_history(sysd, seglog, seglog.shape[0])
        xs = xfun(np.mod(ts + phi_c, 2 * np.pi))
        for k in range(x.shape[0]):
            ax.plot(ts, xs[k], "o", mfc="none", color=colors[k], ms=4)
    ax.set_xlabel("tau = omega t (rad)")
    ax.set_ylabel("x (per unit load)")
    ax.set_title(f"r1 = {r1:g}, beta = {beta:g}", fontsize=9)
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    return fig
