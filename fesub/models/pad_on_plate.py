"""Pad on plate: an elastic hexahedral pad pressed onto a rigid plate and dragged across it (3D).

SI units. The pad (a stiff polymer block by default) is a box ``pad_length x pad_width x
pad_height`` of ``nx x ny x nz`` 8-node hexahedra with its bottom face on the plate's top (z = 0)
and its corner at (pad_x, pad_y, 0); it is kept whole (every node's x, y, z) and marched in its
free modes by the engine (:class:`~fesub.contact.MultibodyModel`, optionally truncated above
``modal_cutoff_hz``). The plate is rigid and fixed: a grid of quad4 master faces on z = 0 larger
than the pad's path. The ``(nx + 1)(ny + 1)`` bottom nodes of the pad are the slave nodes of one
node-to-surface interface with Coulomb friction mu (:class:`~fesub.contact.ContactInterface3D`,
each step's problem solved on the exact friction cone).

Loading (times in s from the start of the run):

* preload: a uniform pressure on the pad's top face, of resultant ``load`` (N), rises as a cubic
  smoothstep from 0 at t = 0 to its full value at ``t_load``, then is held for ``t_settle``;
* dragging, from ``t_drag = t_load + t_settle``: the top face is moved along +x as a rigid plane
  held in y (its x and y displacements prescribed, z free: it carries the pressure), at a velocity
  rising smoothly from 0 to ``velocity`` over ``t_accel``.

The contact goes through stick, partial slip (the pressed pad's Poisson expansion already has its
rim slipping outwards at the end of the preload; under the drag slip spreads from the leading
and trailing edges inwards) and gross sliding: every closed node slipping, the friction force
magnitude summed over the nodes equal to mu times the normal force. Its x component (the drag
force) approaches mu N as the slip directions turn from the rim's outward spread to the drag
direction, and the pad tilts under the couple of friction (at its bottom) and drive (at its top):
the pressure moves to the leading edge and the trailing row of nodes may open.

Measured with the defaults (``fesub pad-on-plate``: 81 slave nodes, 567 modal coordinates, 3877
steps of 0.54 us): the normal forces carry the load within 2e-4 during the hold; gross sliding at
a drag of 0.90 um (drag force 0.94 mu N), the drag force 0.996 mu N over the last 10 % of the
run. See the study's ``summary.json`` for the numbers of a run.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

import numpy as np

from ..errors import ParameterError, check_names
from .common import spectrum_summary
from .pad_on_beam import ramped_drag, smoothstep

__all__ = ["PadOnPlateParams", "PadOnPlate", "build", "phases"]


@dataclass(frozen=True)
class PadOnPlateParams:
    """Every parameter of the pad-on-plate model (SI units).

    Attributes
    ----------
    pad_length, pad_width, pad_height : float
        Pad size along x (the drag), y and z (m).
    nx, ny, nz : int
        Hexahedra along x, y, z; ``(nx + 1)(ny + 1)`` slave nodes.
    pad_E, pad_nu, pad_rho : float
        Pad material: Young's modulus (Pa), Poisson's ratio (-), density (kg/m^3).
    pad_beta : float
        Stiffness-proportional damping of the pad (s).
    modal_cutoff_hz : float or None
        Keep only the pad's free modes up to this frequency (Hz); None keeps all.
    pad_x, pad_y : float
        Corner of the pad's bottom face with the smallest x and y (m).
    plate_length, plate_width : float
        Plate size (m), centred under the pad's path.
    plate_nx, plate_ny : int
        Master faces of the plate along x and y.
    mu : float
        Coulomb friction coefficient (-).
    load : float
        Normal force pressing the pad (N).
    t_load, t_settle : float
        Duration of the load ramp and of the hold before dragging (s).
    velocity : float
        Drag velocity of the pad's top (m/s).
    t_accel : float
        Time over which the drag velocity rises from 0 (s).
    """

    pad_length: float = 0.020
    pad_width: float = 0.020
    pad_height: float = 0.010
    nx: int = 8
    ny: int = 8
    nz: int = 2
    pad_E: float = 3.6e9
    pad_nu: float = 0.38
    pad_rho: float = 1300.0
    pad_beta: float = 2e-9
    modal_cutoff_hz: float | None = None
    pad_x: float = 0.0
    pad_y: float = 0.0
    plate_length: float = 0.040
    plate_width: float = 0.030
    plate_nx: int = 12
    plate_ny: int = 9
    mu: float = 0.3
    load: float = 100.0
    t_load: float = 0.3e-3
    t_settle: float = 0.3e-3
    velocity: float = 1.0e-3
    t_accel: float = 0.1e-3

    @property
    def t_drag(self) -> float:
        """Start of the dragging (s)."""
        return self.t_load + self.t_settle

    def validate(self) -> "PadOnPlateParams":
        """Check every parameter; ParameterError naming the first bad one and its valid range."""
        positive = ("pad_length", "pad_width", "pad_height", "pad_E", "pad_rho", "plate_length", "plate_width",
                    "load", "t_load", "velocity", "t_accel")
        for name in positive:
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and np.isfinite(v) and v > 0):
                raise ParameterError(f"pad-on-plate parameter {name} must be a finite number > 0, got {v!r}")
        for name in ("pad_beta", "mu", "t_settle"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and np.isfinite(v) and v >= 0):
                raise ParameterError(f"pad-on-plate parameter {name} must be a finite number >= 0, got {v!r}")
        if not (isinstance(self.pad_nu, (int, float)) and -1 < self.pad_nu < 0.5):
            raise ParameterError(f"pad-on-plate parameter pad_nu must lie in (-1, 0.5), got {self.pad_nu!r}")
        for name, hi in (("nx", 60), ("ny", 60), ("nz", 20), ("plate_nx", 400), ("plate_ny", 400)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 1 <= v <= hi:
                raise ParameterError(f"pad-on-plate parameter {name} must be an integer in 1..{hi}, got {v!r}")
        c = self.modal_cutoff_hz
        if c is not None and not (isinstance(c, (int, float)) and np.isfinite(c) and c > 0):
            raise ParameterError(f"pad-on-plate parameter modal_cutoff_hz must be None or a number > 0 (Hz), got {c!r}")
        for name in ("pad_x", "pad_y"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and np.isfinite(v)):
                raise ParameterError(f"pad-on-plate parameter {name} must be a finite number (m), got {v!r}")
        return self

    def to_dict(self) -> dict:
        return asdict(self)


class PadOnPlate:
    """The built model: the pad's mesh and substructure, the rigid plate, the
    :class:`~fesub.contact.MultibodyModel` and the drive.

    Attributes
    ----------
    params : PadOnPlateParams
    mesh : SolidMesh of the pad; ``sub`` its Substructure.
    model : MultibodyModel
        Bodies 'pad' (slave) and 'plate' (master, rigid and fixed), interface 'pad/plate'.
    slave_nodes : (m,) the pad's bottom nodes; ``slave_xy`` their reference (x, y) (m).
    top_nodes : the pad's top nodes.
    surfaces : [RunSurface of the pad's outer surface, RunSurface of the plate]: the deformed
        surfaces of a run (:mod:`fesub.contact.engine.surface_series`); the pad body records
        their displacements as output channels.
    plate_points, plate_faces : the plate's grid (m) and quad4 faces.
    """

    INTERFACE = "pad/plate"

    def __init__(self, params: PadOnPlateParams):
        from ..contact import Body, ContactInterface3D, MultibodyModel
        from ..contact.engine.surface_series import RunSurface
        from ..fe import Solid, box, face_load
        from ..substructure import Substructure

        p = self.params = params.validate()
        self.mesh = mesh = box(p.pad_length, p.pad_width, p.pad_height, p.nx, p.ny, p.nz,
                               origin=(p.pad_x, p.pad_y, 0.0))
        self.sub = sub = Substructure(mesh, Solid(p.pad_E, p.pad_nu, p.pad_rho), rayleigh=(0.0, p.pad_beta),
                                      name="pad")
        self.slave_nodes = mesh.nodes("zmin")
        self.top_nodes = mesh.nodes("zmax")
        self.slave_xy = mesh.points[self.slave_nodes, :2]
        # a uniform pressure on the top face of resultant 1 N, then scaled by the load history
        self._unit_load = face_load(mesh, "zmax", pressure=1.0 / (p.pad_length * p.pad_width))[sub.retained]
        pres = {int(d): self.drag for d in sub.dofs(self.top_nodes, "x")}
        pres.update({int(d): 0.0 for d in sub.dofs(self.top_nodes, "y")})
        pad_surface = RunSurface.from_mesh("pad", mesh, interface=self.INTERFACE)
        outputs = pad_surface.outputs(lambda n, c: int(sub.dofs([n], c)[0]))
        centre = self.top_nodes[np.argmin(np.linalg.norm(mesh.points[self.top_nodes, :2] - mesh.points[
            self.top_nodes, :2].mean(axis=0), axis=1))]
        outputs["pad_top_z"] = int(sub.dofs([centre], "z")[0])
        pad = Body.from_substructure(sub, name="pad", prescribed=pres, outputs=outputs,
                                     loads=lambda t: self.normal_load(t) * self._unit_load)
        # the plate: a rigid fixed grid on z = 0 under the pad's path (its nodes carry no coordinate)
        x0 = p.pad_x + 0.5 * p.pad_length - 0.5 * p.plate_length
        y0 = p.pad_y + 0.5 * p.pad_width - 0.5 * p.plate_width
        xs = x0 + np.linspace(0.0, p.plate_length, p.plate_nx + 1)
        ys = y0 + np.linspace(0.0, p.plate_width, p.plate_ny + 1)
        X, Y = np.meshgrid(xs, ys, indexing="ij")
        self.plate_points = np.column_stack([X.ravel(), Y.ravel(), np.zeros(X.size)])
        nid = np.arange(X.size).reshape(X.shape)
        self.plate_faces = np.column_stack([nid[:-1, :-1].ravel(), nid[1:, :-1].ravel(), nid[1:, 1:].ravel(),
                                            nid[:-1, 1:].ravel()])
        plate = Body(np.zeros((0, 0)), np.zeros((0, 0)), self.plate_points, -np.ones(self.plate_points.shape, int),
                     name="plate")
        itf = ContactInterface3D("pad", self.slave_nodes, "plate", self.plate_faces, mu=p.mu, face_type="quad4",
                                 name=self.INTERFACE)
        self.model = MultibodyModel([pad, plate], [itf], modal_cutoff_hz=p.modal_cutoff_hz)
        self.surfaces = [pad_surface, RunSurface("plate", np.arange(len(self.plate_points)), self.plate_points,
                                                 {"quad": self.plate_faces}, moving=False)]

    # ---------------------------------------------------------------- loading
    def normal_load(self, t: float) -> float:
        """Total normal force pressing the pad at time t (N)."""
        p = self.params
        return p.load * float(smoothstep(t / p.t_load))

    def drag(self, t: float):
        """(u, v, a): prescribed x displacement (m), velocity (m/s), acceleration (m/s^2) of the
        pad's top at time t: zero before t_drag, velocity rising as a smoothstep over t_accel."""
        p = self.params
        return ramped_drag(t - p.t_drag, p.velocity, p.t_accel)

    def drag_displacement(self, t) -> np.ndarray:
        """Prescribed x displacement of the pad's top (m) at the times t (s)."""
        return np.array([self.drag(float(x))[0] for x in np.atleast_1d(np.asarray(t, dtype=float))])

    # ---------------------------------------------------------------- description
    def summary(self) -> dict:
        """Sizes of the model: elements, DOFs, modal coordinates, slave nodes, frequencies, critical step (s)."""
        m = self.model
        return {"pad_elements": int(self.mesh.n_cells), "pad_dofs": int(self.sub.n_dofs),
                "slave_nodes": int(self.slave_nodes.size), "master_faces": int(len(self.plate_faces)),
                **spectrum_summary(m)}


def build(params: PadOnPlateParams | None = None, **overrides) -> PadOnPlate:
    """Build the pad-on-plate model from :class:`PadOnPlateParams` (defaults) with keyword
    overrides of any of its fields (SI units)."""
    p = params or PadOnPlateParams()
    check_names("pad-on-plate parameter(s)", overrides, PadOnPlateParams.__dataclass_fields__)
    return PadOnPlate(replace(p, **overrides))


def phases(res, model: PadOnPlate) -> dict:
    """Headline numbers of a run of the model (a :class:`~fesub.contact.ContactRunResult`).

    Totals over the slave nodes at each sample: the normal force ``N(t) = sum lambda_n``, the drag
    force ``T(t)`` = minus the x component of the contact forces on the pad (the force the pad
    exerts on the plate along the drag, N) and the friction magnitude ``F(t) = sum |lambda_t|``.
    Phases after the drag starts: the first sample with a slipping node that was not slipping
    at the end of the preload (partial slip), the first with every closed node slipping (gross
    sliding).

    Returns a dict (keys carry their units): ``normal_force_preload_N`` (mean N over the last
    20 % of the hold before the drag) and its ratio to the load; at the first slip and at gross
    sliding the drag (m), the time (s) and ``T`` (N); ``drag_force_ratio_gross_sliding``
    (``T / (mu N)`` at the onset), ``drag_force_ratio_end`` (mean ``T / (mu N)`` over the last
    10 % of the run); ``friction_cone_ratio_sliding`` (``F / (mu N)`` over the gross-sliding
    samples: 1 when every closed node is at the cone's limit); ``sliding_fraction_max`` (the
    largest fraction of the closed nodes slipping at one sample of the drag); ``open_nodes_end`` (nodes open at
    the end) and ``stick_fraction_preload`` (nodes sticking at the end of the preload); the
    energy balance residual relative to the external work.
    """
    p = model.params
    t = res.t
    st = res.nodes["state"]
    N = np.nansum(res.nodes["lambda_n"], axis=1)
    F = res.contact_forces()
    T = -F["x"]
    cone = np.nansum(np.hypot(res.nodes["lambda_t1"], res.nodes["lambda_t2"]), axis=1)
    drag = model.drag_displacement(t)
    hold = (t >= p.t_drag - 0.2 * p.t_settle) & (t < p.t_drag)
    out = {"normal_force_preload_N": float(N[hold].mean()) if hold.any() else None}
    out["normal_force_ratio_preload"] = (out["normal_force_preload_N"] / p.load
                                         if out["normal_force_preload_N"] is not None else None)
    before = np.flatnonzero(t < p.t_drag)
    base = st[before[-1]] if before.size else np.zeros(st.shape[1], st.dtype)
    out["stick_fraction_preload"] = float(np.mean(base == 1)) if before.size else None
    dragging = (t > p.t_drag)[:, None]
    closed = st > 0
    newly = ((st == 2) & (base != 2) & dragging).any(axis=1)
    gross = (closed.any(axis=1) & np.all(~closed | (st == 2), axis=1) & dragging[:, 0])
    for key, rows in (("first_slip", np.flatnonzero(newly)), ("gross_sliding", np.flatnonzero(gross))):
        j = int(rows[0]) if rows.size else None
        out[f"{key}_time_s"] = float(t[j]) if j is not None else None
        out[f"{key}_drag_m"] = float(drag[j]) if j is not None else None
        out[f"{key}_drag_force_N"] = float(T[j]) if j is not None else None
    with np.errstate(invalid="ignore", divide="ignore"):
        frac = np.where(dragging[:, 0], (st == 2).sum(axis=1) / np.maximum(closed.sum(axis=1), 1), 0.0)
    out["sliding_fraction_max"] = float(frac.max()) if t.size else 0.0
    g = np.flatnonzero(gross)
    if g.size and p.mu > 0:
        j = g[0]
        out["drag_force_ratio_gross_sliding"] = float(T[j] / (p.mu * N[j]))
        r = cone[g] / (p.mu * N[g])
        out["friction_cone_ratio_sliding_min"] = float(r.min())
        out["friction_cone_ratio_sliding_max"] = float(r.max())
    else:
        out.update(dict.fromkeys(("drag_force_ratio_gross_sliding", "friction_cone_ratio_sliding_min",
                                  "friction_cone_ratio_sliding_max")))
    end = t >= t[-1] - 0.1 * (t[-1] - p.t_drag) if t.size and t[-1] > p.t_drag else np.zeros(t.size, bool)
    ok = end.any() and p.mu > 0
    out["drag_force_ratio_end"] = float(np.mean(T[end] / (p.mu * N[end]))) if ok else None
    out["normal_force_ratio_end"] = float(np.mean(N[end]) / p.load) if ok else None
    out["open_nodes_end"] = int(np.count_nonzero(st[-1] == 0)) if t.size else None
    work = float(res.energies["external_work"][-1]) if t.size else 0.0
    resid = float(np.abs(res.energy_residual()).max()) if t.size else 0.0
    out["energy_residual_ratio"] = resid / work if work > 0 else None
    out["friction_dissipation_J"] = float(res.energies["friction_dissipation"][-1]) if t.size else 0.0
    return out
