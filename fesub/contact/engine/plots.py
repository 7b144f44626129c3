"""Figures of a multibody contact run (:class:`~fesub.contact.ContactRunResult`).

Imported on its own (``from fesub.contact import plots_multibody``); every function draws one
figure, writes it with :func:`fesub.plots.style.save` and returns its path.

* :func:`plot_state_map`: the state of every slave node (open, stick, slip+, slip-) against its
  position and time, in four discrete colours;
* :func:`plot_force_distributions`: normal and tangential forces per node at chosen instants;
* :func:`plot_friction_curve`: total friction force against the drive's displacement, with the
  Coulomb limit mu N;
* :func:`plot_energy_balance`: the energy accounts and the balance residual against time;
* :func:`plot_contact_forces`: the friction and normal forces of an interface against time;
* :func:`plot_interface_maps`: between solid bodies, the contact pressure and the node states
  (with the slip directions) over the contact face at chosen instants.

Units on the axes: mm for positions, um for drive displacements, ms for times, N, J.
"""

from __future__ import annotations

import numpy as np

from ...plots import style

__all__ = ["plot_state_map", "plot_force_distributions", "plot_friction_curve", "plot_energy_balance",
           "plot_contact_forces", "plot_interface_maps", "STATE_COLOURS"]

#: colour of each node state code (open, stick, slip+, slip-)
STATE_COLOURS = ("#d9d9d9", "#1f77b4", "#d62728", "#ff7f0e")
_STATE_NAMES = ("open", "stick", "slip+", "slip-")


def _edges(c):
    """Cell edges around sorted centres c (for pcolormesh)."""
    c = np.asarray(c, dtype=float)
    if c.size == 1:
        return np.array([c[0] - 0.5, c[0] + 0.5])
    mid = 0.5 * (c[1:] + c[:-1])
    return np.r_[c[0] - (mid[0] - c[0]), mid, c[-1] + (c[-1] - mid[-1])]


def plot_state_map(res, x, path, *, title: str, marks=()):
    """Node state against node position and time, discrete colours.

    Parameters
    ----------
    res : ContactRunResult
    x : (m,) float
        Reference x of each slave node (m), in the order of the result's nodes.
    path : path of the PNG.
    title : str
    marks : sequence of (t in s, label)
        Horizontal lines marking instants (e.g. the start of the dragging).
    """
    from matplotlib.colors import BoundaryNorm, ListedColormap

    plt = style.pyplot()
    order = np.argsort(x)
    fig, ax = plt.subplots(figsize=(7.0, 4.5))
    cmap = ListedColormap(STATE_COLOURS)
    norm = BoundaryNorm(np.arange(-0.5, 4.5), cmap.N)
    mesh = ax.pcolormesh(_edges(np.asarray(x)[order] * 1e3), _edges(res.t * 1e3), res.nodes["state"][:, order],
                         cmap=cmap, norm=norm, shading="flat")
    cb = fig.colorbar(mesh, ax=ax, ticks=range(4))
    cb.ax.set_yticklabels(_STATE_NAMES)
    cb.set_label("node state [-]")
    for t, label in marks:
        ax.axhline(t * 1e3, color="k", lw=0.8, ls="--")
        ax.text(ax.get_xlim()[0], t * 1e3, f" {label}", va="bottom", ha="left", fontsize=8)
    ax.set_xlabel("slave node position x [mm]")
    ax.set_ylabel("time t [ms]")
    ax.set_title(title)
    return style.save(fig, path)


def plot_force_distributions(res, x, instants, path, *, title: str, mu=None):
    """Normal and tangential force of every node at a few instants.

    Parameters
    ----------
    res : ContactRunResult
    x : (m,) reference x of the slave nodes (m).
    instants : sequence of (t in s, label); the nearest sample is drawn.
    mu : float, optional
        Draws +-mu lambda_n (dotted) with the tangential forces.
    """
    plt = style.pyplot()
    order = np.argsort(x)
    xs = np.asarray(x)[order] * 1e3
    fig, (a1, a2) = plt.subplots(2, 1, figsize=(7.0, 6.0), sharex=True, constrained_layout=True)
    for k, (t, label) in enumerate(instants):
        j = int(np.argmin(np.abs(res.t - t)))
        c = f"C{k}"
        ln, lt = res.nodes["lambda_n"][j, order], res.nodes["lambda_t"][j, order]
        a1.plot(xs, ln, "o-", ms=3, color=c, label=f"{label} (t = {res.t[j] * 1e3:.3f} ms)")
        a2.plot(xs, lt, "o-", ms=3, color=c)
        if mu is not None:
            a2.plot(xs, mu * ln, ":", color=c, lw=0.8)
            a2.plot(xs, -mu * ln, ":", color=c, lw=0.8)
    a1.set_ylabel("normal force lambda_n [N]")
    a1.set_xlabel("slave node position x [mm]")
    a1.set_title(title)
    a1.legend(fontsize=8)
    a2.set_ylabel("tangential force lambda_t [N]")
    a2.set_xlabel("slave node position x [mm]")
    a2.set_title("tangential force on the slave (dotted: +-mu lambda_n)" if mu is not None else
                 "tangential force on the slave")
    return style.save(fig, path)


def plot_friction_curve(curves, path, *, title: str, limits=(), ylabel: str = "friction force on the beam T [N]"):
    """Total friction force against the drive's displacement.

    Parameters
    ----------
    curves : sequence of (drive displacement in m, friction force in N, label)
    limits : sequence of (force in N, label)
        Horizontal lines (the Coulomb limit mu N of each curve).
    ylabel : str
        Label of the force axis (with its unit).
    """
    plt = style.pyplot()
    fig, ax = plt.subplots(figsize=(7.0, 4.5))
    for k, (u, T, label) in enumerate(curves):
        ax.plot(np.asarray(u) * 1e6, T, color=f"C{k}", label=label)
    for k, (F, label) in enumerate(limits):
        ax.axhline(F, color=f"C{k}", ls="--", lw=0.9, label=label)
    ax.set_xlabel("drive displacement [um]")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=8)
    return style.save(fig, path)


def plot_energy_balance(res, path, *, title: str):
    """Energy accounts (J) against time and the residual of the balance."""
    plt = style.pyplot()
    e, i = res.energies, res.info
    t = res.t * 1e3
    fig, (a1, a2) = plt.subplots(2, 1, figsize=(7.0, 6.0), sharex=True, constrained_layout=True,
                                 gridspec_kw={"height_ratios": (3, 1)})
    a1.plot(t, e["external_work"], label="external work")
    a1.plot(t, e["kinetic"] - i["kinetic_initial_J"], label="kinetic energy (change)")
    a1.plot(t, e["strain"] - i["strain_initial_J"], label="strain energy (change)")
    a1.plot(t, e["friction_dissipation"], label="friction dissipation")
    a1.plot(t, e["damping_loss"], label="damping loss")
    a1.plot(t, e["impact_loss"], label="impact loss")
    a1.set_ylabel("energy [J]")
    a1.set_xlabel("time t [ms]")
    a1.set_title(title)
    a1.legend(fontsize=8)
    a2.plot(t, res.energy_residual(), color="k")
    a2.set_ylabel("residual [J]")
    a2.set_xlabel("time t [ms]")
    a2.set_title("work minus energy changes and losses")
    return style.save(fig, path)


def plot_contact_forces(res, path, *, title: str, interface=None, mu=None):
    """Friction and normal force of an interface against time.

    Parameters
    ----------
    res : ContactRunResult
    path : path of the figure file
    title : str
    interface : int or str, optional
        Interface index or name; default all (:meth:`ContactRunResult.contact_forces`).
    mu : float, optional
        Friction coefficient: draws the Coulomb limit ``mu`` x the normal force (dashed).

    The friction force is the sum of the tangential multipliers (along the master), the normal
    force that of the normal multipliers (N); times in ms.
    """
    plt = style.pyplot()
    f = res.contact_forces(interface)
    t = res.t * 1e3
    fig, ax = plt.subplots(figsize=(7.0, 4.5), constrained_layout=True)
    ax.plot(t, f["normal"], color="C0", label="normal force (sum of lambda_n)")
    ax.plot(t, f["friction"], color="C3", label="friction force (sum of lambda_t)")
    if mu is not None:
        ax.plot(t, mu * f["normal"], color="C3", ls="--", lw=0.9, label="+-mu x normal force")
        ax.plot(t, -mu * f["normal"], color="C3", ls="--", lw=0.9)
    ax.set_xlabel("time t [ms]")
    ax.set_ylabel("force on the slave body [N]")
    ax.set_title(title)
    ax.legend(fontsize=8)
    return style.save(fig, path)


#: colours of the node states of a run between solid bodies (open, stick, slip)
STATE_COLOURS_3D = ("#bdbdbd", "#1f77b4", "#d62728")


def plot_interface_maps(res, xy, areas, instants, path, *, title: str, columns=None):
    """Contact pressure and node states over a contact face at a few instants (solid bodies).

    Parameters
    ----------
    res : ContactRunResult
        A run between solid bodies (3D node results).
    xy : (m, 2) float
        In-plane reference position of each slave node (m), in the order of ``columns``.
    areas : (m,) float
        Tributary area of each node on the contact face (m^2): the pressure is ``lambda_n / area``.
    instants : sequence of (t in s, label); the nearest sample is drawn, one column each.
    columns : (m,) int, optional
        The result's node columns drawn (default all, in order).

    Top row: contact pressure (MPa, one colour range for all instants, interpolated over the
    nodes' triangulation). Bottom row: each node's state (open, stick, slip) with an arrow along
    its slip velocity where it slips (arrow lengths scaled per instant).
    """
    from matplotlib.colors import BoundaryNorm, ListedColormap
    from matplotlib.tri import Triangulation

    plt = style.pyplot()
    cols = np.arange(res.node_id.size) if columns is None else np.asarray(columns)
    xy = np.asarray(xy, dtype=float) * 1e3
    areas = np.asarray(areas, dtype=float)
    if xy.shape != (cols.size, 2) or areas.shape != (cols.size,) or np.any(areas <= 0):
        raise ValueError(f"xy must be ({cols.size}, 2) positions and areas ({cols.size},) > 0")
    rows = [int(np.argmin(np.abs(res.t - t))) for t, _ in instants]
    p = [np.nan_to_num(res.nodes["lambda_n"][j, cols]) / areas * 1e-6 for j in rows]
    top = max(float(max(v.max() for v in p)), 1e-12)
    tri = Triangulation(xy[:, 0], xy[:, 1])
    k = len(rows)
    fig, axes = plt.subplots(2, k, figsize=(3.4 * k + 1.2, 6.6), squeeze=False, constrained_layout=True)
    cmap = ListedColormap(STATE_COLOURS_3D)
    norm = BoundaryNorm(np.arange(-0.5, 3.5), cmap.N)
    for c, (j, (t, label)) in enumerate(zip(rows, instants)):
        a, b = axes[0, c], axes[1, c]
        im = a.tripcolor(tri, p[c], shading="gouraud", cmap="viridis", vmin=0.0, vmax=top)
        a.set_title(f"{label}\nt = {res.t[j] * 1e3:.3f} ms", fontsize=9)
        st = res.nodes["state"][j, cols]
        sc = b.scatter(xy[:, 0], xy[:, 1], c=st, cmap=cmap, norm=norm, s=28, edgecolors="k", linewidths=0.3)
        v = np.column_stack([res.nodes["slip_velocity_x"][j, cols], res.nodes["slip_velocity_y"][j, cols]])
        slip = (st == 2) & np.all(np.isfinite(v), axis=1)
        if slip.any() and np.abs(v[slip]).max() > 0:
            b.quiver(xy[slip, 0], xy[slip, 1], v[slip, 0], v[slip, 1], color="k", width=0.004,
                     angles="xy", pivot="tail")
        b.set_title(f"states, slip directions\nt = {res.t[j] * 1e3:.3f} ms", fontsize=9)
        for ax in (a, b):
            ax.set_aspect("equal")
            ax.set_xlabel("x [mm]")
            ax.set_ylabel("y [mm]")
    cb = fig.colorbar(im, ax=list(axes[0]), shrink=0.9)
    cb.set_label("contact pressure [MPa]")
    cb2 = fig.colorbar(sc, ax=list(axes[1]), ticks=range(3), shrink=0.9)
    cb2.ax.set_yticklabels(("open", "stick", "slip"))
    cb2.set_label("node state [-]")
    fig.suptitle(title, fontsize=10)
    return style.save(fig, path)
