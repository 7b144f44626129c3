"""Figures of the circular-contact study, drawn from the study's results.

Every function returns the matplotlib figure and, when ``path`` is given, writes it there through
:func:`fesub.plots.style.save` (which closes it). Angles are shown in degrees, dimensionless
quantities carry ``[-]``.
"""

from __future__ import annotations

import math

import numpy as np

from ..plots import style
from .dynamics import COLOURS, ReducedContactSystem, find_limit_directions
from .results import CircleCurves, DirectionErrorMap, LimitDirectionDiagram, ProfileCurves

__all__ = ["plot_profiles", "plot_error_map", "plot_limit_direction_diagram",
           "plot_sphere_portrait", "plot_trajectories", "plot_k_curves"]

#: legend text of each colour of the paper's code: "r' sign, sphere type"
_CLASS_LABEL = {c: f"{k}, {t}" for (k, t), c in COLOURS.items()}
_CLASS_LABEL["grey"] = "non-hyperbolic or tangent"
_EPS_LABEL = r"slip-spin ratio $\varepsilon = |u|/(R|\omega|)$ [-]"


def _finish(fig, path):
    if path is not None:
        style.save(fig, path)
    return fig


def _case(body: str, model: str, f=None) -> str:
    force = "" if f is None else f", F/($\\mu m g$) = {f:.3g}"
    return f"{body}{force}, model {model}"


def plot_profiles(curves: ProfileCurves, path=None):
    """``Q_eps`` and ``T_eps`` against ``eps`` (log axis) for each model, with their errors."""
    plt = style.pyplot()
    eps = curves.eps
    fig, ax = plt.subplots(2, 2, figsize=(11, 7.5), sharex=True)
    ax[0, 0].semilogx(eps, curves.Q_exact, "k", lw=2.5, label="exact")
    ax[0, 1].semilogx(eps, curves.T_exact, "k", lw=2.5, label="exact")
    for lab, Q, T in zip(curves.models, curves.Q, curves.T):
        ax[0, 0].semilogx(eps, Q, label=lab)
        ax[0, 1].semilogx(eps, T, label=lab)
        ax[1, 0].semilogx(eps, Q - curves.Q_exact, label=lab)
        ax[1, 1].semilogx(eps, T - curves.T_exact, label=lab)
    for a in ax[0]:
        a.axvline(1.0, color="0.7", ls=":", lw=1)
    ax[0, 0].set_ylabel(r"force $\mathcal{Q}_\varepsilon = |Q|/(\mu P)$ [-]")
    ax[0, 1].set_ylabel(r"torque $\mathcal{T}_\varepsilon = |T|/(\mu P \kappa)$ [-]")
    ax[1, 0].set_ylabel(r"force error $\mathcal{Q}_\varepsilon - \mathcal{Q}_{exact}$ [-]")
    ax[1, 1].set_ylabel(r"torque error $\mathcal{T}_\varepsilon - \mathcal{T}_{exact}$ [-]")
    for a in ax.flat:
        a.set_xlabel(_EPS_LABEL)
    for a in ax[1]:
        a.axhline(0, color="k", lw=0.5)
    ax[0, 0].legend(fontsize=8)
    fig.suptitle(f"Friction force and torque profiles, {curves.law} pressure, "
                 f"rho/R = {curves.rho / curves.R:.4f}")
    return _finish(fig, path)


def plot_error_map(emap: DirectionErrorMap, path=None):
    """Error of the generalised friction over slip directions ``(phi, theta)``, one panel per
    model, one colour scale for all."""
    plt = style.pyplot()
    k = len(emap.models)
    ncol = min(4, k)
    nrow = -(-k // ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.2 * ncol, 3.4 * nrow), squeeze=False)
    for a in axes.flat[k:]:
        a.set_visible(False)
    top = float(np.max(emap.error)) if emap.error.size else 1.0
    PH, TH = np.meshgrid(np.degrees(emap.phi), np.degrees(emap.theta))
    for a, lab, E in zip(axes.flat, emap.models, emap.error):
        im = a.pcolormesh(PH, TH, E, shading="auto", cmap="magma", vmin=0.0, vmax=top or 1.0)
        cb = fig.colorbar(im, ax=a, shrink=0.85)
        cb.set_label(r"$|Q - Q_{exact}|/(\mu P)$ [-]")
        a.set_title(f"{lab}: max {E.max():.3f}", fontsize=9)
        a.set_xlabel(r"slip angle $\varphi$ [deg]")
        a.set_ylabel(r"spin angle $\theta$ [deg]")
    fig.suptitle(f"Error of the friction models over slip directions, {emap.law} pressure, "
                 f"rho/R = {emap.rho / emap.R:.4f}")
    fig.tight_layout()
    return _finish(fig, path)


def plot_k_curves(curves: CircleCurves, path=None):
    """``m(psi) = cos(psi) k(sin psi)`` on the invariant circle with the force levels
    ``F/(mu m g)`` (Fig. 17-18 style): each crossing is a non-trivial limit direction."""
    plt = style.pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    deg = np.degrees(curves.psi)
    for lab, m in zip(curves.models, curves.m):
        ax.plot(deg, m, label=lab)
    for i, f in enumerate(curves.levels):
        ax.axhline(f, color="0.6", ls="--", lw=0.8,
                   label="force levels F/($\\mu m g$)" if i == 0 else None)
    ax.axhline(0, color="k", lw=0.5)
    ax.set_xlabel(r"direction angle $\psi$ [deg], $w = (\cos\psi, 0, \sin\psi)$")
    ax.set_ylabel(r"$m(\psi) = \cos\psi\,k(\sin\psi)$ [-]")
    ax.set_title(f"{curves.body}: limit directions where m = F/(mu m g), levels "
                 + ", ".join(f"{f:g}" for f in curves.levels))
    ax.legend(fontsize=7)
    return _finish(fig, path)


def plot_limit_direction_diagram(diagram: LimitDirectionDiagram, path=None):
    """Limit directions (``psi``) against the force, one colour per class, with F_T, F_P, F_F
    marked."""
    plt = style.pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    scale = diagram.force_scale
    Fs = diagram.F / scale
    for c in sorted(set(diagram.colour.tolist())):
        sel = diagram.colour == c
        ax.scatter(Fs[sel], np.degrees(diagram.psi[sel]), color=c, s=6,
                   label=_CLASS_LABEL.get(c, c))
    for name, val in (("T", diagram.values["F_T"]), ("P", diagram.values["F_P"]),
                      ("F", diagram.values["F_F"])):
        if val is not None:
            ax.axvline(val / scale, color="0.4", ls=":", lw=1)
            ax.annotate(name, (val / scale, 1.0), xycoords=("data", "axes fraction"),
                        xytext=(0, 2), textcoords="offset points", ha="center", va="bottom")
    ax.set_xlabel(r"force $F/(\mu m g)$ [-]")
    ax.set_ylabel(r"limit direction $\psi$ [deg]")
    ax.set_ylim(-185, 195)
    s = diagram.system
    ax.set_title(f"Limit directions against the force: {_case(s['body'], s['model'])}"
                 + (" (interrupted)" if diagram.status != "complete" else ""), pad=16)
    ax.legend(fontsize=7, loc="lower right", markerscale=2)
    return _finish(fig, path)


def plot_sphere_portrait(system: ReducedContactSystem, path=None, n: int = 60, directions=None):
    """Fast flow ``w' = V*(w)`` on the sphere in the chart ``(phi, theta)``, limit directions
    coloured by class (Fig. 11-12 style); ``directions`` defaults to
    :func:`find_limit_directions` of ``system``."""
    plt = style.pyplot()
    th = np.linspace(-math.pi / 2 + 0.02, math.pi / 2 - 0.02, n)
    ph = np.linspace(-math.pi, math.pi, 2 * n)
    PH, TH = np.meshgrid(ph, th)
    dth, dph = system.angle_rates(TH, PH)      # the corrected form of (120)
    fig, ax = plt.subplots(figsize=(8, 4.2))
    ax.streamplot(np.degrees(ph), np.degrees(th), dph, dth, color="0.55", density=1.3,
                  linewidth=0.7)
    seen = set()
    for d in find_limit_directions(system) if directions is None else directions:
        t = math.degrees(math.asin(max(-1.0, min(1.0, d.w[2]))))
        p = math.degrees(math.atan2(d.w[1], d.w[0]))
        for pp in ((p, -180.0) if abs(abs(p) - 180) < 1e-9 else (p,)):
            lab = None if d.colour in seen else _CLASS_LABEL.get(d.colour, d.colour)
            seen.add(d.colour)
            ax.plot(pp, t, "o", color=d.colour, ms=9, mec="k", label=lab)
    ax.set_xlabel(r"slip angle $\varphi$ [deg]")
    ax.set_ylabel(r"spin angle $\theta$ [deg]")
    ax.set_xlim(-180, 180)
    ax.set_ylim(-90, 90)
    ax.set_title(f"Slip-direction flow on the sphere: {_case(system.kind, system.model.name, system.f)}")
    ax.legend(fontsize=7, loc="lower right")
    return _finish(fig, path)


def plot_trajectories(system: ReducedContactSystem, trajectories, path=None):
    """Trajectories in the slip-spin plane ``(|u|, rho omega)`` and ``eps(t)``."""
    plt = style.pyplot()
    fig, ax = plt.subplots(1, 2, figsize=(11, 4.5))
    for tr in trajectories:
        u = np.hypot(tr.x_o[:, 0], tr.x_o[:, 1]) * np.sign(tr.x_o[:, 0] + 1e-300)
        ax[0].plot(u, tr.x_o[:, 2], lw=1.2)
        ax[0].plot(u[0], tr.x_o[0, 2], "k.", ms=6)
        # eps is 0 in pure spin and inf in pure slip: shown within 1e-6 .. 1e6
        ax[1].semilogy(tr.t, np.clip(tr.eps, 1e-6, 1e6), lw=1.2,
                       label="x0 = (" + ", ".join(f"{v:.2g}" for v in tr.x_o[0])
                       + f") m/s: t_stop = {tr.t_stop:.4g} s")
    rmax = max(float(np.max(tr.r)) for tr in trajectories)
    for d in find_limit_directions(system):
        if abs(d.w[1]) < 1e-9:
            ax[0].plot([0, rmax * d.w[0]], [0, rmax * d.w[2]], color=d.colour, ls="--", lw=1)
    ax[0].set_xlabel(r"signed slip $\pm|u|$ [m/s]")
    ax[0].set_ylabel(r"$\rho\,\omega_z$ [m/s]")
    ax[0].set_aspect("equal", adjustable="datalim")
    ax[0].set_title("slip-spin plane (dashed: limit directions)", fontsize=9)
    ax[1].set_xlabel("time t [s]")
    ax[1].set_ylabel(r"$\varepsilon(t) = |u|/(R|\omega|)$ [-]")
    ax[1].set_title("slip-spin ratio until the stop", fontsize=9)
    ax[1].legend(fontsize=7)
    fig.suptitle(f"Slip and spin until the stop: {_case(system.kind, system.model.name, system.f)}")
    return _finish(fig, path)
