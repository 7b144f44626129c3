"""Pad on beam: an elastic pad pressed onto a clamped beam and dragged along it, with friction.

Plane stress, SI units. The beam (steel by default) lies on y in [0, beam_height], x in
[0, beam_length], clamped at both ends (or at x = 0 only); it is reduced by Craig-Bampton with
the nodes of its top edge as boundary (they carry the master segments of the contact). The pad
(a polymer block by default) rests on the beam's top edge from x = pad_x to pad_x + pad_length;
its bottom edge gives the slave nodes of one node-to-segment contact interface with Coulomb
friction mu (:class:`fesub.contact.ContactInterface`); it is kept whole (full FE) or reduced by
Craig-Bampton with its bottom and top edges as boundary.

Loading (every time in s from the start of the run):

* preload: a downward force ``load`` (N) on the pad's top edge, distributed as the consistent
  nodal forces of a uniform pressure, rises smoothly (cubic smoothstep) from 0 at t = 0 to its
  full value at ``t_load``, then is held; ``t_settle`` more seconds let the vibration decay;
* dragging, from ``t_drag = t_load + t_settle``: either (``drive='velocity'``) the pad's top edge
  is moved along +x as a rigid line, its velocity rising smoothly from 0 to ``velocity`` over
  ``t_accel`` (the top's x displacement is prescribed during the preload too: held at 0), or
  (``drive='force'``) a tangential force along +x, ``force_rate (t - t_drag)`` in N, is applied
  to the top edge with the same distribution as the normal load.

The contact then goes through stick, partial slip (from the edges) and gross sliding at
``T = mu N``. The default values are chosen so that the default study runs in well under a
minute: comparable wave speeds in pad and beam (the explicit step is set by the finest element of
either), a short stiff beam whose first bending mode (about 5 kHz) the preload ramp spans several
times, mass-proportional damping of the beam (beam_alpha) to settle the preload, and a drag
velocity slow against the pad's shear stiffness (the friction force rises quasi-statically:
``mu N / k_t`` of drag takes about ``mu N / (k_t velocity)``, 0.5 ms here).

Measured with the defaults (the study ``fesub pad-on-beam``): the preload leaves the pad's edges
at the friction limit (the Poisson expansion of the pressed pad slides them outwards), so a node
slips at the first increment of drag and partial slip grows from the leading edge. At mu = 0.1
gross sliding begins after 0.47 um of drag and is steady (T / (mu N) = 0.999 on average, within
0.6 %). At mu = 0.3 the friction force reaches mu N after about 1.25 um but the sliding does not
settle: the normal force oscillates at about 50 kHz by +-2 % and parts of the contact stick again
(at most 90 % of the nodes slide at once). The oscillation is the model's, not the time step's:
with half the step it has the same frequency and an amplitude within 25 % (N between 0.984 and
1.014 of the load against 0.980 and 1.021).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

import numpy as np

from ..errors import ParameterError, check_names
from .common import spectrum_summary

__all__ = ["PadOnBeamParams", "PadOnBeam", "build", "phases", "smoothstep", "ramped_drag"]

_CLAMPS = ("both", "left")
_REDUCTIONS = ("craig-bampton", "full")
_DRIVES = ("velocity", "force")


@dataclass(frozen=True)
class PadOnBeamParams:
    """Every parameter of the pad-on-beam model (SI units).

    Attributes
    ----------
    beam_length, beam_height : float
        Beam length and depth (m).
    beam_nx, beam_ny : int
        Elements along and across the beam.
    beam_E, beam_nu, beam_rho : float
        Young's modulus (Pa), Poisson's ratio (-), density (kg/m^3) of the beam (steel).
    beam_alpha, beam_beta : float
        Rayleigh damping of the beam, C = alpha M + beta K (alpha in 1/s, beta in s). alpha =
        6000 1/s damps the first bending mode (about 5 kHz) at about 9 % of critical.
    beam_clamp : 'both' or 'left'
        Clamped ends of the beam.
    beam_modes : int
        Fixed-interface modes kept by the beam's Craig-Bampton model.
    pad_length, pad_height : float
        Pad size (m).
    pad_nx, pad_ny : int
        Elements along and across the pad; ``pad_nx + 1`` slave nodes.
    pad_E, pad_nu, pad_rho : float
        Pad material (Pa, -, kg/m^3): a stiff polymer.
    pad_beta : float
        Stiffness-proportional damping of the pad (s); no mass-proportional part (it would drag
        on the pad's rigid motion).
    pad_reduction : 'craig-bampton' or 'full'
        The pad kept whole or reduced (boundary: bottom and top edges).
    pad_modes : int
        Fixed-interface modes of the pad's Craig-Bampton model.
    width : float
        Out-of-plane thickness of pad and beam (m).
    pad_x : float
        x of the pad's left edge (m).
    mu : float
        Coulomb friction coefficient (-).
    load : float
        Normal force pressing the pad (N).
    t_load, t_settle : float
        Duration of the load ramp and of the hold before dragging (s).
    drive : 'velocity' or 'force'
        Drag by a prescribed motion of the pad's top or by a tangential force on it.
    velocity : float
        Drag velocity of the pad's top (m/s, drive='velocity').
    t_accel : float
        Time over which the drag velocity rises from 0 (s).
    force_rate : float
        Rate of the tangential force (N/s, drive='force').
    """

    beam_length: float = 0.100
    beam_height: float = 0.010
    beam_nx: int = 20
    beam_ny: int = 2
    beam_E: float = 210e9
    beam_nu: float = 0.30
    beam_rho: float = 7850.0
    beam_alpha: float = 6000.0
    beam_beta: float = 0.0
    beam_clamp: str = "both"
    beam_modes: int = 10
    pad_length: float = 0.040
    pad_height: float = 0.010
    pad_nx: int = 20
    pad_ny: int = 5
    pad_E: float = 3.6e9
    pad_nu: float = 0.38
    pad_rho: float = 1300.0
    pad_beta: float = 2e-9
    pad_reduction: str = "craig-bampton"
    pad_modes: int = 8
    width: float = 0.010
    pad_x: float = 0.030
    mu: float = 0.3
    load: float = 100.0
    t_load: float = 0.8e-3
    t_settle: float = 0.6e-3
    drive: str = "velocity"
    velocity: float = 1.0e-3
    t_accel: float = 0.2e-3
    force_rate: float = 6.0e4

    @property
    def t_drag(self) -> float:
        """Start of the dragging (s)."""
        return self.t_load + self.t_settle

    def validate(self) -> "PadOnBeamParams":
        """Check every parameter; ParameterError naming the first bad one and its valid range."""
        positive = ("beam_length", "beam_height", "beam_E", "beam_rho", "pad_length", "pad_height", "pad_E",
                    "pad_rho", "width", "load", "t_load", "velocity", "t_accel", "force_rate")
        for name in positive:
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and np.isfinite(v) and v > 0):
                raise ParameterError(f"pad-on-beam parameter {name} must be a finite number > 0, got {v!r}")
        for name in ("beam_alpha", "beam_beta", "pad_beta", "mu", "t_settle"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and np.isfinite(v) and v >= 0):
                raise ParameterError(f"pad-on-beam parameter {name} must be a finite number >= 0, got {v!r}")
        for name in ("beam_nu", "pad_nu"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and -1 < v < 0.5):
                raise ParameterError(f"pad-on-beam parameter {name} must lie in (-1, 0.5), got {v!r}")
        for name, lo in (("beam_nx", 1), ("beam_ny", 1), ("pad_nx", 1), ("pad_ny", 1), ("beam_modes", 0),
                         ("pad_modes", 0)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
                raise ParameterError(f"pad-on-beam parameter {name} must be an integer >= {lo}, got {v!r}")
        for name, allowed in (("beam_clamp", _CLAMPS), ("pad_reduction", _REDUCTIONS), ("drive", _DRIVES)):
            if getattr(self, name) not in allowed:
                raise ParameterError(f"pad-on-beam parameter {name} must be one of {allowed}, "
                                     f"got {getattr(self, name)!r}")
        pad_interior = 2 * (self.pad_nx + 1) * (self.pad_ny - 1)  # DOFs off the pad's bottom and top
        if self.pad_reduction == "craig-bampton" and self.pad_modes > pad_interior:
            raise ParameterError(f"pad-on-beam parameter pad_modes must be <= {pad_interior} (the pad's interior "
                                 f"DOFs with pad_nx = {self.pad_nx}, pad_ny = {self.pad_ny}), got {self.pad_modes}")
        n_clamped = 2 if self.beam_clamp == "both" else 1
        beam_interior = 2 * ((self.beam_nx + 1) * (self.beam_ny + 1) - (self.beam_ny + 1) * n_clamped
                             - (self.beam_nx + 1 - n_clamped))  # retained DOFs off the free top edge
        if self.beam_modes > beam_interior:
            raise ParameterError(f"pad-on-beam parameter beam_modes must be <= {beam_interior} (the beam's interior "
                                 f"DOFs), got {self.beam_modes}")
        if not (0 <= self.pad_x and self.pad_x + self.pad_length <= self.beam_length):
            raise ParameterError(f"the pad (pad_x = {self.pad_x} m, pad_length = {self.pad_length} m) must lie "
                                 f"on the beam, within [0, beam_length = {self.beam_length} m]")
        return self

    def to_dict(self) -> dict:
        return asdict(self)


def smoothstep(s):
    """Cubic smoothstep of s clipped to [0, 1]: 0 -> 0, 1 -> 1, zero slope at both ends (a float
    for a number, an array for an array)."""
    if isinstance(s, (float, int)):  # (called once per time step: plain floats, no array round trip)
        s = min(max(float(s), 0.0), 1.0)
    else:
        s = np.clip(s, 0.0, 1.0)
    return s * s * (3.0 - 2.0 * s)


def ramped_drag(s: float, velocity: float, t_accel: float):
    """(u, v, a) of a drag that starts at rest and reaches ``velocity`` (m/s) smoothly over
    ``t_accel`` (s): displacement (m), velocity (m/s) and acceleration (m/s^2) at the time ``s``
    (s) since it began (all zero for s <= 0; the velocity rises as a cubic smoothstep)."""
    if s <= 0:
        return 0.0, 0.0, 0.0
    if s >= t_accel:
        return velocity * (s - 0.5 * t_accel), velocity, 0.0
    r = s / t_accel
    # v = V (3 r^2 - 2 r^3), u = V t_accel (r^3 - r^4 / 2), a = 6 V r (1 - r) / t_accel
    return (velocity * t_accel * (r ** 3 - 0.5 * r ** 4), velocity * r * r * (3 - 2 * r),
            6 * velocity * r * (1 - r) / t_accel)


def _edge(mesh, name):
    nodes = mesh.nodes(name)
    return nodes[np.argsort(mesh.points[nodes, 0])]


def _uniform_weights(n):
    """Consistent nodal forces of a uniform traction on n equally spaced edge nodes, summing to 1."""
    w = np.ones(n)
    w[[0, -1]] = 0.5
    return w / w.sum()


class PadOnBeam:
    """The built model: substructures, reduced models, the :class:`~fesub.contact.MultibodyModel`,
    and the drive.

    Attributes
    ----------
    params : PadOnBeamParams
    beam, pad : Substructure
    beam_cb, pad_cb : CraigBampton (``pad_cb`` None for a full pad)
    model : MultibodyModel
        Bodies 'pad' (slave) and 'beam' (master), one contact interface 'pad/beam'.
    slave_nodes : (m,) pad bottom nodes in order of x; ``slave_x`` their reference x (m).
    top_nodes : pad top nodes in order of x.
    """

    def __init__(self, params: PadOnBeamParams):
        from ..contact import Body, ContactInterface, MultibodyModel
        from ..fe import PlaneStress, rectangle
        from ..substructure import CraigBampton, Substructure

        p = self.params = params.validate()
        bm = rectangle(p.beam_length, p.beam_height, p.beam_nx, p.beam_ny)
        clamp = ["left", "right"] if p.beam_clamp == "both" else ["left"]
        self.beam = Substructure(bm, PlaneStress(p.beam_E, p.beam_nu, p.beam_rho, p.width), clamped=clamp,
                                 rayleigh=(p.beam_alpha, p.beam_beta), name="beam")
        pm = rectangle(p.pad_length, p.pad_height, p.pad_nx, p.pad_ny, origin=(p.pad_x, p.beam_height))
        self.pad = Substructure(pm, PlaneStress(p.pad_E, p.pad_nu, p.pad_rho, p.width), rayleigh=(0.0, p.pad_beta),
                                name="pad")
        btop = _edge(bm, "top")
        clamped_nodes = np.concatenate([bm.nodes(c) for c in clamp])
        bnd = np.setdiff1d(btop, clamped_nodes)
        self.beam_cb = CraigBampton(self.beam, boundary=self.beam.dofs(bnd), n_modes=p.beam_modes)
        self.slave_nodes, self.top_nodes = _edge(pm, "bottom"), _edge(pm, "top")
        self.slave_x = pm.points[self.slave_nodes, 0]
        mid = bnd[np.argmin(np.abs(bm.points[bnd, 0] - (p.pad_x + 0.5 * p.pad_length)))]
        self.beam_output_node = int(mid)
        beam_body = Body.from_craig_bampton(self.beam_cb, name="beam",
                                            outputs={"beam_y": int(self.beam.dofs([mid], "y")[0])})
        self.pad_body = self._pad_body(Body, CraigBampton)
        segs = np.column_stack([btop[:-1], btop[1:]])
        itf = ContactInterface("pad", self.slave_nodes, "beam", segs, mu=p.mu, name="pad/beam")
        self.model = MultibodyModel([self.pad_body, beam_body], [itf])

    # ---------------------------------------------------------------- loading
    def normal_load(self, t: float) -> float:
        """Total normal force pressing the pad at time t (N)."""
        p = self.params
        return p.load * float(smoothstep(t / p.t_load))

    def tangential_load(self, t: float) -> float:
        """Total tangential force on the pad's top at time t (N; 0 unless drive='force')."""
        p = self.params
        return p.force_rate * max(t - p.t_drag, 0.0) if p.drive == "force" else 0.0

    def drag(self, t: float):
        """(u, v, a): prescribed x displacement (m), velocity (m/s), acceleration (m/s^2) of the
        pad's top at time t: zero before t_drag, velocity rising as a smoothstep over t_accel."""
        p = self.params
        return ramped_drag(t - p.t_drag, p.velocity, p.t_accel)

    def drag_displacement(self, t) -> np.ndarray:
        """Prescribed x displacement of the pad's top (m) at the times t (zero for drive='force')."""
        t = np.atleast_1d(np.asarray(t, dtype=float))
        if self.params.drive != "velocity":
            return np.zeros_like(t)
        return np.array([self.drag(x)[0] for x in t])

    def drag_of(self, res) -> np.ndarray:
        """Drag displacement (m) at the samples of a run ``res``: the prescribed x of the pad's top
        (drive='velocity'), or the x displacement of the top's centre node since the drag began
        (drive='force', from the output channel ``u_pad_top_x``)."""
        if self.params.drive == "velocity":
            return self.drag_displacement(res.t)
        u = np.asarray(res.channels["u_pad_top_x"], dtype=float)
        return u - (np.interp(self.params.t_drag, res.t, u) if res.t.size else 0.0)

    def _pad_body(self, Body, CraigBampton):
        p, pad = self.params, self.pad
        top = self.top_nodes
        w = _uniform_weights(top.size)
        dy, dx = pad.dofs(top, "y"), pad.dofs(top, "x")
        centre_top = top[top.size // 2]
        outputs = {"pad_top_x": int(pad.dofs([centre_top], "x")[0]),
                   "pad_top_y": int(pad.dofs([centre_top], "y")[0])}
        velocity = p.drive == "velocity"
        prescribed = {int(d): self.drag for d in dx} if velocity else None
        if p.pad_reduction == "full":
            self.pad_cb = None
            fy, fx = np.zeros(pad.n_dofs), np.zeros(pad.n_dofs)
            fy[dy] = -w
            if not velocity:
                fx[dx] = w
            return Body.from_substructure(pad, name="pad", prescribed=prescribed, outputs=outputs,
                                          loads=lambda t: self.normal_load(t) * fy + self.tangential_load(t) * fx)
        self.pad_cb = CraigBampton(pad, boundary=np.r_[pad.dofs(self.slave_nodes), pad.dofs(top)], n_modes=p.pad_modes)

        def cb_loads(dofs, values):  # a load over model DOFs as a vector over the reduced coordinates
            return Body.from_craig_bampton(self.pad_cb, loads=dict(zip(map(int, dofs), values))).loads

        fy = cb_loads(dy, -w)
        fx = np.zeros_like(fy) if velocity else cb_loads(dx, w)
        base = Body.from_craig_bampton(self.pad_cb, name="pad", prescribed=prescribed, outputs=outputs)
        # the same body with the time-dependent loads (from_craig_bampton takes constant ones)
        return Body(base.M, base.K, base.X, base.node_dofs, base.C, name="pad", prescribed=base.prescribed,
                    outputs=base.outputs, loads=lambda t: self.normal_load(t) * fy + self.tangential_load(t) * fx)

    # ---------------------------------------------------------------- description
    def summary(self) -> dict:
        """Sizes of the model: elements, DOFs, reduced coordinates, modes, critical step (s)."""
        p, m = self.params, self.model
        return {"beam_elements": int(self.beam.mesh.elements().shape[0]), "beam_dofs": int(self.beam.n_dofs),
                "beam_reduced": int(self.beam_cb.n_dofs),
                "pad_elements": int(self.pad.mesh.elements().shape[0]), "pad_dofs": int(self.pad.n_dofs),
                "pad_reduced": int(self.pad_cb.n_dofs) if self.pad_cb is not None else int(self.pad.n_dofs),
                "pad_reduction": p.pad_reduction, "slave_nodes": int(self.slave_nodes.size),
                "master_segments": int(self.beam.mesh.nodes("top").size - 1),
                **spectrum_summary(m)}


def build(params: PadOnBeamParams | None = None, **overrides) -> PadOnBeam:
    """Build the pad-on-beam model from :class:`PadOnBeamParams` (defaults) with keyword
    overrides of any of its fields (SI units)."""
    p = params or PadOnBeamParams()
    check_names("pad-on-beam parameter(s)", overrides, PadOnBeamParams.__dataclass_fields__)
    return PadOnBeam(replace(p, **overrides))


def phases(res, model: PadOnBeam) -> dict:
    """Headline numbers of a run of the model (a :class:`~fesub.contact.ContactRunResult`).

    Totals over the slave nodes at each sample: the normal force ``N(t) = sum lambda_n`` and the
    friction force on the beam along +x, ``T(t) = -sum lambda_t`` (N). Phases from the node
    states after the drag starts: the first sample with a sliding node (partial slip), the first
    sample with every node sliding (gross sliding).

    Returns a dict (keys carry their units): ``normal_force_preload_N`` (mean N over the last 20 %
    of the hold before dragging) and its ratio to the load; the drag displacement (m) and time (s)
    at the first slip and at gross sliding; the friction force there (N); the mean friction ratio
    ``T / (mu load)`` over the gross-sliding samples (from the onset to the end); the number of
    times a node sticks again after gross sliding began (``restick_events``); the energy balance
    residual relative to the external work. Gross sliding that is not steady (friction-induced
    vibration) shows as a range of the normal force around the load and as nodes that stick
    again (``normal_force_ratio_gross_sliding_min/max``, ``restick_events``);
    ``sliding_fraction_max`` is the largest fraction of nodes sliding at one sample; the mean,
    smallest and largest ``T / (mu load)`` and ``N / load`` over the last 20 % of the drag
    (``friction_ratio_end_*``, ``normal_force_ratio_end_*``) describe the end of the run whatever
    its phase; ``normal_force_oscillation_end_hz`` is the dominant frequency of N over that window
    (Hann window; below the Nyquist frequency of the output rate, None for fewer than 16 samples).
    """
    p = model.params
    t = res.t
    st = res.nodes["state"]
    N = res.nodes["lambda_n"].sum(axis=1)
    T = -res.nodes["lambda_t"].sum(axis=1)
    drag = model.drag_of(res)
    hold = (t >= p.t_drag - 0.2 * p.t_settle) & (t < p.t_drag)
    out = {"normal_force_preload_N": float(N[hold].mean()) if hold.any() else None}
    out["normal_force_ratio_preload"] = (out["normal_force_preload_N"] / p.load
                                         if out["normal_force_preload_N"] is not None else None)
    dragging = t > p.t_drag
    sliding = (st >= 2) & dragging[:, None]
    for key, rows in (("first_slip", np.flatnonzero(sliding.any(axis=1) & (T > 0))),
                      ("gross_sliding", np.flatnonzero(sliding.all(axis=1)))):
        j = int(rows[0]) if rows.size else None
        out[f"{key}_time_s"] = float(t[j]) if j is not None else None
        out[f"{key}_drag_m"] = float(drag[j]) if j is not None else None
        out[f"{key}_friction_N"] = float(T[j]) if j is not None else None
    g = out["gross_sliding_time_s"]
    if g is not None and p.mu > 0:
        after = t >= g
        out["friction_ratio_gross_sliding"] = float(T[after].mean() / (p.mu * p.load))
        out["friction_ratio_gross_sliding_min"] = float(T[after].min() / (p.mu * p.load))
        out["friction_ratio_gross_sliding_max"] = float(T[after].max() / (p.mu * p.load))
        out["normal_force_ratio_gross_sliding_min"] = float(N[after].min() / p.load)
        out["normal_force_ratio_gross_sliding_max"] = float(N[after].max() / p.load)
        out["restick_events"] = int(np.count_nonzero((st[1:] == 1) & (st[:-1] >= 2) & after[1:, None]))
    else:
        out.update(dict.fromkeys(("friction_ratio_gross_sliding", "friction_ratio_gross_sliding_min",
                                  "friction_ratio_gross_sliding_max", "normal_force_ratio_gross_sliding_min",
                                  "normal_force_ratio_gross_sliding_max", "restick_events")))
    out["sliding_fraction_max"] = float(sliding.mean(axis=1).max()) if t.size else 0.0
    end = t >= t[-1] - 0.2 * (t[-1] - p.t_drag) if t.size and t[-1] > p.t_drag else np.zeros(t.size, bool)
    for key, v, s in (("friction_ratio_end", T, p.mu * p.load), ("normal_force_ratio_end", N, p.load)):
        ok = end.any() and s > 0
        out[f"{key}_mean"] = float(v[end].mean() / s) if ok else None
        out[f"{key}_min"] = float(v[end].min() / s) if ok else None
        out[f"{key}_max"] = float(v[end].max() / s) if ok else None
    out["normal_force_oscillation_end_hz"] = _dominant_hz(t[end], N[end])
    work = float(res.energies["external_work"][-1]) if t.size else 0.0
    resid = float(np.abs(res.energy_residual()).max()) if t.size else 0.0
    out["energy_residual_ratio"] = resid / work if work > 0 else None
    out["friction_dissipation_J"] = float(res.energies["friction_dissipation"][-1]) if t.size else 0.0
    return out


def _dominant_hz(t, x):
    """Frequency (Hz) of the largest spectral peak of x(t) (uniform samples, mean removed, Hann
    window); None for fewer than 16 samples."""
    if t.size < 16:
        return None
    x = (x - x.mean()) * np.hanning(x.size)
    X = np.abs(np.fft.rfft(x))
    f = np.fft.rfftfreq(x.size, float(t[1] - t[0]))
    return float(f[1 + np.argmax(X[1:])])
