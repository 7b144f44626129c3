"""Figures of the circular-contact study (matplotlib, Agg backend, imported lazily).

Every function returns the matplotlib figure and, when ``path`` is given, writes a PNG there.
"""

from __future__ import annotations

import math

import numpy as np

from .dynamics import ReducedContactSystem, bifurcation_diagram, find_limit_directions
from .models import FrictionModel

__all__ = ["plot_profiles", "plot_error_map", "plot_bifurcation_diagram", "plot_sphere_portrait",
           "plot_trajectories", "plot_k_curves"]


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _finish(fig, path):
    if path is not None:
        fig.savefig(path, dpi=110, bbox_inches="tight")
    return fig


def plot_profiles(models: dict, exact: FrictionModel, path=None, eps=None):
    """``Q_eps`` and ``T_eps`` against ``eps`` (log axis) for each model, with their errors.

    Parameters
    ----------
    models : dict
        ``label -> FrictionModel`` (approximations).
    exact : FrictionModel
        Reference model (drawn black).
    """
    plt = _plt()
    eps = np.geomspace(1e-3, 1e3, 600) if eps is None else np.asarray(eps, float)
    Qe, Te = exact.profile_eps(eps)
    fig, ax = plt.subplots(2, 2, figsize=(11, 7), sharex=True)
    ax[0, 0].semilogx(eps, Qe, "k", lw=2.5, label="exact")
    ax[0, 1].semilogx(eps, Te, "k", lw=2.5, label="exact")
    for lab, m in models.items():
        Q, T = m.profile_eps(eps)
        ax[0, 0].semilogx(eps, Q, label=lab)
        ax[0, 1].semilogx(eps, T, label=lab)
        ax[1, 0].semilogx(eps, Q - Qe, label=lab)
        ax[1, 1].semilogx(eps, T - Te, label=lab)
    for a in ax[0]:
        a.axvline(1.0, color="0.7", ls=":", lw=1)
    ax[0, 0].set_ylabel(r"$\mathcal{Q}_\varepsilon$ = |Q|/($\mu P$)")
    ax[0, 1].set_ylabel(r"$\mathcal{T}_\varepsilon$ = |T|/($\mu P \kappa$)")
    ax[1, 0].set_ylabel("force error")
    ax[1, 1].set_ylabel("torque error")
    for a in ax[1]:
        a.set_xlabel(r"slip-spin ratio $\varepsilon = |u|/(R|\omega|)$")
        a.axhline(0, color="k", lw=0.5)
    ax[0, 0].legend(fontsize=8)
    fig.suptitle(f"{exact.pressure.name} pressure, rho/R = {exact.rho / exact.R:.4f}")
    return _finish(fig, path)


def plot_error_map(models: dict, exact: FrictionModel, path=None, n: int = 181):
    """Error ``|Q_model(w) - Q_exact(w)|/(mu P)`` of the generalised friction over slip directions
    ``(phi, theta)`` (one panel per model)."""
    plt = _plt()
    th = np.linspace(-math.pi / 2, math.pi / 2, n)
    ph = np.linspace(-math.pi, math.pi, 2 * n)
    PH, TH = np.meshgrid(ph, th)
    w = np.stack([np.cos(TH) * np.cos(PH), np.cos(TH) * np.sin(PH), np.sin(TH)], axis=-1)
    Qe = exact.Q_of_w(w)
    k = len(models)
    ncol = min(4, k)
    nrow = -(-k // ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.2 * ncol, 3.4 * nrow), squeeze=False)
    for a in axes.flat[k:]:
        a.set_visible(False)
    maps = {}
    for a, (lab, m) in zip(axes.flat, models.items()):
        if abs(m.rho - exact.rho) > 1e-12 * exact.rho:
            raise ValueError("models and exact must share rho for a direction map")
        E = np.linalg.norm(m.Q_of_w(w) - Qe, axis=-1) / (exact.mu * exact.P)
        maps[lab] = E
        im = a.pcolormesh(np.degrees(PH), np.degrees(TH), E, shading="auto", cmap="magma")
        fig.colorbar(im, ax=a, shrink=0.85)
        a.set_title(f"{lab}: max {E.max():.3f}", fontsize=9)
        a.set_xlabel(r"$\varphi$ (deg)")
        a.set_ylabel(r"$\theta$ (deg)")
    fig.tight_layout()
    fig.maps = maps
    return _finish(fig, path)


def plot_k_curves(systems: dict, F_levels=(0.03, 0.2, 0.7, 1.2), path=None):
    """``k(w3) w1`` on the invariant circle against horizontal force levels (Fig. 17-18 style)."""
    plt = _plt()
    psi = np.linspace(0, math.pi, 1000)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for lab, s in systems.items():
        ax.plot(np.degrees(psi), s.circle_m(psi), label=lab)
    for F in F_levels:
        ax.axhline(F, color="0.6", ls="--", lw=0.8)
    ax.axhline(0, color="k", lw=0.5)
    ax.set_xlabel(r"$\psi$ (deg), $w = (\cos\psi, 0, \sin\psi)$")
    ax.set_ylabel(r"$k(w_3)\,w_1$ (= F/($\mu m g$) at a limit direction)")
    ax.legend(fontsize=8)
    return _finish(fig, path)


def plot_bifurcation_diagram(system: ReducedContactSystem, F_grid, path=None, data=None):
    """Limit directions (``w3``) against the force, colour-coded, with F_T, F_P, F_F marked."""
    from .dynamics import bifurcation_values

    plt = _plt()
    bd = bifurcation_diagram(system, F_grid) if data is None else data
    bv = bifurcation_values(system)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    Fs = bd["F"] / (system.m * system.mu_g)
    ax.scatter(Fs, np.degrees(bd["psi"]), c=list(bd["colour"]), s=6)
    for name, val in (("T", bv["F_T"]), ("P", bv["F_P"]), ("F", bv["F_F"])):
        if val is not None:
            ax.axvline(val / (system.m * system.mu_g), color="0.4", ls=":", lw=1)
            ax.text(val / (system.m * system.mu_g), 182, name, ha="center", va="bottom")
    ax.set_xlabel(r"$F/(\mu m g)$")
    ax.set_ylabel(r"limit direction $\psi$ (deg)")
    ax.set_ylim(-185, 195)
    ax.set_title(f"{system.kind}, model {system.model.name}")
    return _finish(fig, path), bd


def plot_sphere_portrait(system: ReducedContactSystem, path=None, n: int = 60):
    """Fast flow ``w' = V*(w)`` on the sphere in the chart ``(phi, theta)``, limit directions
    coloured (Fig. 11-12 style)."""
    plt = _plt()
    th = np.linspace(-math.pi / 2 + 0.02, math.pi / 2 - 0.02, n)
    ph = np.linspace(-math.pi, math.pi, 2 * n)
    PH, TH = np.meshgrid(ph, th)
    dth, dph = system.angle_rates(TH, PH)      # the corrected form of (120)
    fig, ax = plt.subplots(figsize=(8, 4.2))
    ax.streamplot(np.degrees(ph), np.degrees(th), dph, dth, color="0.55", density=1.3,
                  linewidth=0.7)
    for d in find_limit_directions(system):
        t = math.degrees(math.asin(max(-1.0, min(1.0, d.w[2]))))
        p = math.degrees(math.atan2(d.w[1], d.w[0]))
        for pp in ((p, -180.0) if abs(abs(p) - 180) < 1e-9 else (p,)):
            ax.plot(pp, t, "o", color=d.colour, ms=9, mec="k")
    ax.set_xlabel(r"$\varphi$ (deg)")
    ax.set_ylabel(r"$\theta$ (deg)")
    ax.set_xlim(-180, 180)
    ax.set_ylim(-90, 90)
    ax.set_title(f"{system.kind}, F/(mu m g) = {system.f:.3g}, model {system.model.name}")
    return _finish(fig, path)


def plot_trajectories(system: ReducedContactSystem, trajectories, path=None):
    """Trajectories in the slip-spin plane ``(|u|, rho omega)`` and ``eps(t)``."""
    plt = _plt()
    fig, ax = plt.subplots(1, 2, figsize=(11, 4.5))
    for tr in trajectories:
        u = np.hypot(tr.x_o[:, 0], tr.x_o[:, 1]) * np.sign(tr.x_o[:, 0] + 1e-300)
        ax[0].plot(u, tr.x_o[:, 2], lw=1.2)
        ax[0].plot(u[0], tr.x_o[0, 2], "k.", ms=6)
        ax[1].semilogy(tr.t, np.maximum(tr.eps, 1e-6), lw=1.2,
                       label=f"t_stop = {tr.t_stop:.4g} s")
    rmax = max(float(np.max(tr.r)) for tr in trajectories)
    for d in find_limit_directions(system):
        if abs(d.w[1]) < 1e-9:
            ax[0].plot([0, rmax * d.w[0]], [0, rmax * d.w[2]], color=d.colour, ls="--", lw=1)
    ax[0].set_xlabel(r"signed slip $\pm|u|$ (m/s)")
    ax[0].set_ylabel(r"$\rho\,\omega_z$ (m/s)")
    ax[0].set_aspect("equal", adjustable="datalim")
    ax[1].set_xlabel("t (s)")
    ax[1].set_ylabel(r"$\varepsilon(t) = |u|/(R|\omega|)$")
    ax[1].legend(fontsize=8)
    fig.suptitle(f"{system.kind}, F/(mu m g) = {system.f:.3g}, model {system.model.name}")
    return _finish(fig, path)
