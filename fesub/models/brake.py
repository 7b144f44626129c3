"""Disc brake: an annular disc clamped at its hub, two pads pressed on its faces and driven around it (3D).

SI units. The bundled Gmsh model ``brake.msh`` (:mod:`fesub.meshes`, made from ``brake.geo``): a
steel disc 10 mm thick, inner and outer diameters 250 and 350 mm (axis z, faces at z = +-5 mm),
clamped at its inner rim; two steel pads 15 mm thick, each an annular sector over the radii
130-170 mm and 50 degrees centred on the +x axis, one on each face. Hexahedra with incompatible
modes; 1080 disc nodes, 84 per pad.

A user's mesh with the same physical groups (``BrakeParams.mesh``) takes the bundled one's
place, its pads' mean radius read from it; the pads may have their own material
(``pad_E``, ``pad_nu``, ``pad_rho``). :func:`nodal_diameters` names a mode's family on the disc.

Each part is a fixed-interface Craig-Bampton substructure
(:func:`fesub.substructure.reduction.reduce_parts`: reduced in parallel and cached on disk by
content): the disc keeps its nodes under the pads (+-30 degrees of both faces, clamped rim nodes
left out) and ``disc_modes`` modes; each pad its contact face and its back, and ``pad_modes``
modes. The pads' contact nodes (28 each) slide on the disc's faces through node-to-surface
contact with Coulomb friction (:class:`~fesub.contact.ContactInterface3D`, one per pad).

Loading, in the disc's frame (the disc stands still, the pads orbit as a caliper turns around
a disc):

* preload: a uniform pressure on each pad's back of resultant ``load`` (N), pressing it onto
  the disc (constant: the steady state is found directly, not by a ramp);
* drive: every node of a pad's back moves in x and y with the rigid rotation of the pads about
  the disc's axis z at the rate ``speed / r_m`` (``r_m`` = 0.15 m, the pads' mean radius; +z
  sense), to first order in the angle (a constant velocity ``Omega (-y, x)`` per node: the angle
  stays below 1e-3 rad over the runs this model is made for); z of the backs is free (it carries
  the pressure).

The pads slide steadily along the circumference at ``Omega r`` at radius r. The model's
:class:`~fesub.contact.MultibodyModel` is what the engine marches and what
:mod:`fesub.contact.analyses.linearised` linearises about the steady sliding state.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

from ..errors import ParameterError, check_names
from .common import spectrum_summary

__all__ = [
    "PADS",
    "R_MEAN",
    "Brake",
    "BrakeParams",
    "build",
    "fit_growth",
    "leading_eigenvalue",
    "mesh_path",
    "nodal_diameters",
    "part_specs",
    "perturbed_start",
    "steady_velocity",
]

#: mean radius (m) of the bundled pads' contact nodes; a built :class:`Brake` takes its own mesh's
#: (:attr:`Brake.r_mean`) and drives the pads at ``speed / r_mean``
R_MEAN = 0.15
#: the pads: (name, contact face set, back face set, disc face set under it)
PADS = (("pad_top", "pad_top_contact", "pad_top_back", "disc_top_contact"),
        ("pad_bottom", "pad_bottom_contact", "pad_bottom_back", "disc_bottom_contact"))


def mesh_path() -> Path:
    """The bundled ``brake.msh`` (installed as ``fesub/meshes``, or ``meshes/`` in a checkout)."""
    from .common import bundled_file

    return bundled_file("brake.msh")


@dataclass(frozen=True)
class BrakeParams:
    """Every parameter of the brake model (SI units).

    Attributes
    ----------
    E, nu, rho : float
        Steel of the disc (and of the pads, unless given below): Young's modulus (Pa), Poisson's
        ratio (-), density (kg/m^3).
    pad_E, pad_nu, pad_rho : float or None
        The pads' material, each None for the disc's (a brake pad's friction material is far
        softer and lighter than steel: E of a few GPa, rho of 2000-3000 kg/m^3).
    mu : float
        Coulomb friction coefficient (-).
    load : float
        Normal force pressing each pad (N).
    speed : float
        Sliding speed at the pads' mean radius (m/s): that of their contact nodes, 0.15 m on the
        bundled mesh.
    disc_modes, pad_modes : int
        Fixed-interface modes kept by the disc's and each pad's reduction (-).
    alpha, beta : float
        Rayleigh damping of every part: mass- (1/s) and stiffness-proportional (s).
    modal_cutoff_hz : float or None
        Keep only the bodies' modes up to this frequency (Hz) in the multibody model; None keeps all.
    mesh : str or None
        A mesh file with the bundled model's physical groups (None: the bundled ``brake.msh``).
    """

    E: float = 200e9
    nu: float = 0.3
    rho: float = 7800.0
    pad_E: float | None = None
    pad_nu: float | None = None
    pad_rho: float | None = None
    mu: float = 0.3
    load: float = 2000.0
    speed: float = 0.01
    disc_modes: int = 30
    pad_modes: int = 12
    alpha: float = 0.0
    beta: float = 0.0
    modal_cutoff_hz: float | None = None
    mesh: str | None = None

    def validate(self) -> BrakeParams:
        """Check every parameter; ParameterError naming the first bad one and its valid range."""
        for name in ("E", "rho", "load", "speed"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and np.isfinite(v) and v > 0):
                raise ParameterError(f"brake parameter {name} must be a finite number > 0, got {v!r}")
        for name in ("mu", "alpha", "beta"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and np.isfinite(v) and v >= 0):
                raise ParameterError(f"brake parameter {name} must be a finite number >= 0, got {v!r}")
        for name in ("pad_E", "pad_rho"):
            v = getattr(self, name)
            if v is not None and not (isinstance(v, (int, float)) and np.isfinite(v) and v > 0):
                raise ParameterError(f"brake parameter {name} must be None or a finite number > 0, got {v!r}")
        for name in ("nu", "pad_nu"):
            v = getattr(self, name)
            if (v is not None or name == "nu") and not (isinstance(v, (int, float)) and -1 < v < 0.5):
                raise ParameterError(f"brake parameter {name} must lie in (-1, 0.5), got {v!r}")
        for name, hi in (("disc_modes", 400), ("pad_modes", 100)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 1 <= v <= hi:
                raise ParameterError(f"brake parameter {name} must be an integer in 1..{hi}, got {v!r}")
        c = self.modal_cutoff_hz
        if c is not None and not (isinstance(c, (int, float)) and np.isfinite(c) and c > 0):
            raise ParameterError(f"brake parameter modal_cutoff_hz must be None or a number > 0 (Hz), got {c!r}")
        return self

    def to_dict(self) -> dict:
        return asdict(self)


def part_specs(params: BrakeParams | None = None) -> list:
    """The brake's parts as reduced: one :class:`~fesub.substructure.reduction.PartSpec` each for
    the disc (clamped at its hub, boundary its two contact faces) and the pads (boundary their
    contact face and their back), on the mesh, material, modes and damping of ``params``
    (default :class:`BrakeParams`)."""
    from ..fe import Solid
    from ..substructure import read_volumes
    from ..substructure.reduction import PartSpec

    p = (params or BrakeParams()).validate()
    _, vols = read_volumes(p.mesh or mesh_path())
    missing = [n for n in ("disc", "pad_top", "pad_bottom") if n not in vols]
    if missing:
        raise ParameterError(f"brake mesh {p.mesh or mesh_path()}: no physical volume(s) {missing}")
    steel = Solid(p.E, p.nu, p.rho)
    pad = Solid(*(q if q is not None else d for q, d in ((p.pad_E, p.E), (p.pad_nu, p.nu), (p.pad_rho, p.rho))))
    damping = (p.alpha, p.beta)
    specs = [PartSpec("disc", vols["disc"], steel, ("disc_top_contact", "disc_bottom_contact"), p.disc_modes,
                      clamped=("hub",), rayleigh=damping)]
    specs += [PartSpec(name, vols[name], pad, (contact, back), p.pad_modes, rayleigh=damping)
              for name, contact, back, _ in PADS]
    return specs


class Brake:
    """The built brake: meshes, reduced parts, bodies, contact interfaces and the multibody model.

    Parameters
    ----------
    params : BrakeParams
    jobs : int
        Worker processes of the parts' reduction (1: in this process).
    client : distributed.Client, optional
        A Dask client for the reduction instead of the local pool.
    cache : path, bool or None
        Cache folder of the reductions (:func:`fesub.substructure.reduction.cache_dir`); False: none.

    Attributes
    ----------
    params : BrakeParams
    meshes : dict part name -> SolidMesh (``disc``, ``pad_top``, ``pad_bottom``).
    parts : dict part name -> CraigBampton.
    reduction : dict, what :func:`~fesub.substructure.reduction.reduce_parts` reported.
    model : MultibodyModel
        Bodies ``disc`` (master), ``pad_top``, ``pad_bottom``; interfaces ``pad_top/disc``,
        ``pad_bottom/disc``.
    slave_nodes : dict pad name -> its contact nodes (mesh numbering).
    r_mean : float
        Mean radius (m) of the pads' contact nodes about the disc's axis z (0.15 on the bundled mesh).
    omega : float
        Rate of the pads' rotation about the disc's axis (rad/s): ``speed / r_mean``.
    """

    def __init__(self, params: BrakeParams, *, jobs: int = 1, client=None, cache=None):
        from ..contact import Body, ContactInterface3D, MultibodyModel
        from ..contact.geometry import FaceSet
        from ..fe import face_load
        from ..substructure.reduction import reduce_parts

        p = self.params = params.validate()
        specs = part_specs(p)
        self.meshes = vols = {s.name: s.mesh for s in specs}
        self.parts, self.reduction = reduce_parts(specs, jobs=jobs, client=client, cache=cache)
        bodies = [Body.from_craig_bampton(self.parts["disc"], name="disc")]
        interfaces, self.slave_nodes, self._unit_loads = [], {}, {}
        contact_points = np.vstack([vols[name].points[vols[name].nodes(contact)] for name, contact, _, _ in PADS])
        self.r_mean = float(np.hypot(contact_points[:, 0], contact_points[:, 1]).mean())
        if not self.r_mean > 0:
            raise ParameterError(f"brake mesh {p.mesh or mesh_path()}: the pads' contact nodes lie on the "
                                 f"disc's axis (z); the pads must sit off it")
        w = self.omega = p.speed / self.r_mean
        for name, contact, back, disc_face in PADS:
            cb, mesh = self.parts[name], vols[name]
            sub = cb.substructure
            backs = mesh.nodes(back)
            X = mesh.points[backs]
            pres = {int(d): float(-w * y) for d, y in zip(sub.dofs(backs, "x"), X[:, 1])}
            pres.update({int(d): float(w * x) for d, x in zip(sub.dofs(backs, "y"), X[:, 0])})
            unit = face_load(mesh, back, pressure=1.0)           # 1 Pa: its resultant is the area (m^2)
            area = abs(unit.reshape(-1, 3)[:, 2].sum())
            f = (p.load / area) * unit[sub.retained]
            self._unit_loads[name] = cb.project(f)
            bodies.append(Body.from_craig_bampton(cb, name=name, prescribed=pres, loads=self._unit_loads[name]))
            self.slave_nodes[name] = mesh.nodes(contact)
            faces = FaceSet.from_mesh(vols["disc"], disc_face)
            interfaces.append(ContactInterface3D(name, self.slave_nodes[name], "disc", faces, mu=p.mu,
                                                 name=f"{name}/disc"))
        self.model = MultibodyModel(bodies, interfaces, modal_cutoff_hz=p.modal_cutoff_hz)

    # ---------------------------------------------------------------- fields
    def body_coordinates(self, name: str, eta) -> np.ndarray:
        """The coordinates ``q`` of body ``name`` (its Craig-Bampton coordinates, m) from modal
        coordinates ``eta`` of the multibody model, relative to the drives (the drives' own motion
        not included: a mode shape). ``eta`` may be complex, or (n, k) for k of them."""
        m = self.model
        b = m.body_index(name)
        eta = np.asarray(eta)
        q = np.zeros((m.bodies[b].n,) + eta.shape[1:], dtype=eta.dtype)
        q[m.bodies[b].f_idx] = m.T_body[b] @ eta[m.cols[b]]
        return q

    def initial(self, eta, deta=None) -> dict:
        """The engine's ``initial`` (``{body: (u, v)}``, m and m/s) of the state with modal
        coordinates ``eta`` and velocities ``deta`` relative to the drives at t = 0 (default: none,
        a steady state): the drives' quasi-static velocity is added (the pads move with it)."""
        m = self.model
        zero = np.zeros(m.n_modes)
        out = {}
        for b, body in enumerate(m.bodies):
            u = m.coordinates(b, np.asarray(eta, float), 0.0)
            v = m.coordinates(b, zero, 1.0) - m.coordinates(b, zero, 0.0)   # drives at constant velocity
            if deta is not None:
                v = v + self.body_coordinates(body.name, np.asarray(deta, float))
            out[body.name] = (u, v)
        return out

    def sliding_velocity(self) -> list:
        """Per interface, the (k, 3) velocities (m/s) to add to the drives' quasi-static motion of
        the slave nodes for their true sliding velocity, the rigid rotation ``Omega z x X``.

        The engine's quasi-static motion of a driven body leaves out its free rigid modes (here a
        pad's translation along z and its tilts about axes in its back's plane, held by the
        contact); a rigid rotation about the disc's axis is not orthogonal to the tilts in mass
        (the pad's centre of mass lies off its back's plane and off the axis), so the
        quasi-static velocity of the contact nodes differs from the rotation's (by up to 5 % in
        the plane and 25 % of the speed across it at 1 m/s). :func:`~fesub.contact.analyses.steady.steady_state` takes this
        difference as the ``sliding_velocity`` beside the drives (its part in the disc's tangent
        plane sets each node's sliding direction and speed)."""
        m = self.model
        zero = np.zeros(m.n_modes)
        out = []
        for c in m.contacts:
            b = m.body_index(c["interface"].slave_body)
            name = m.bodies[b].name
            nodes = self.slave_nodes[name]
            X = self.meshes[name].points[nodes]
            q = m.coordinates(b, zero, 1.0) - m.coordinates(b, zero, 0.0)
            cb = self.parts[name]
            v = np.column_stack([q[cb.coordinate_index(cb.substructure.dofs(nodes, comp))] for comp in "xyz"])
            out.append(self.omega * np.column_stack([-X[:, 1], X[:, 0], np.zeros(len(X))]) - v)
        return out

    def displacement(self, name: str, eta) -> np.ndarray:
        """Nodal displacements (n_nodes, 3[, k]) (m) of part ``name`` for modal coordinates ``eta``."""
        cb = self.parts[name]
        return cb.substructure.expand(cb.recover(self.body_coordinates(name, eta)))

    # ---------------------------------------------------------------- description
    def summary(self) -> dict:
        """Sizes: elements, DOFs and coordinates per part, contact nodes, frequencies, critical step."""
        out = {}
        for name, cb in self.parts.items():
            out[f"{name}_elements"] = int(self.meshes[name].n_cells)
            out[f"{name}_dofs"] = int(cb.substructure.n_dofs)
            out[f"{name}_coordinates"] = int(cb.n_dofs)
        out["contact_nodes"] = int(sum(v.size for v in self.slave_nodes.values()))
        out["reduced_parts"] = list(self.reduction["reduced"])
        out["cached_parts"] = list(self.reduction["cached"])
        return {**out, **spectrum_summary(self.model)}


def build(params: BrakeParams | None = None, *, jobs: int = 1, client=None, cache=None, **overrides) -> Brake:
    """Build the brake model from :class:`BrakeParams` (defaults) with keyword overrides of any
    of its fields (SI units); ``jobs``, ``client`` and ``cache`` go to the parts' reduction."""
    p = params or BrakeParams()
    check_names("brake parameter(s)", overrides, BrakeParams.__dataclass_fields__)
    return Brake(replace(p, **overrides), jobs=jobs, client=client, cache=cache)


def leading_eigenvalue(brake: Brake, mu: float):
    """The steady sliding state at ``mu`` (Coulomb), every eigenvalue of its linearisation (1/s)
    with the modes, and the index of the leading one (largest real part, positive frequency).

    Returns
    -------
    state : SteadyState
    lam : (2n,) complex eigenvalues (1/s); modes : (n_modes, 2n) complex modal shapes.
    k : int, the leading eigenvalue's index.
    """
    from ..contact.analyses.linearised import linearise
    from ..contact.analyses.steady import steady_state
    from ..contact.engine.friction import Coulomb

    state = steady_state(brake.model, friction=Coulomb(mu), sliding_velocity=brake.sliding_velocity())
    lam, modes = linearise(brake.model, state).eigenvalues(return_modes=True)
    k = int(np.argmax(np.where(lam.imag > 0, lam.real, -np.inf)))
    return state, lam, modes, k


def nodal_diameters(points, displacement, nmax: int | None = None):
    """Number of nodal diameters of a disc's mode shape, and how clearly it has them.

    The axial (z) displacement of the nodes on the disc's outer rim (those within 1e-6 of the
    largest radius about the z axis, at every height) is split into circumferential harmonics
    ``exp(i n theta)``, ``|n| <= nmax``; the mode has the ``n >= 0`` whose pair ``+-n`` holds the
    most of it. A complex shape (a travelling wave, or the two members of a pair mixed) is split
    the same way.

    Parameters
    ----------
    points : (k, 3) array
        The disc's nodes (m), its axis z.
    displacement : (k, 3) array, real or complex
        The mode's displacements at those nodes (m, any scale).
    nmax : int, optional
        Largest harmonic; default: the most the rim's distinct angles resolve (half of them, less one).

    Returns
    -------
    n : int, nodal diameters (-).
    share : float, the share of the rim's axial displacement (sum of squared harmonics) in
        ``+-n`` (1: a pure ``n``-diameter shape; the rest is other harmonics).
    """
    from ..errors import ParameterError

    X = np.asarray(points, float)
    u = np.asarray(displacement)
    if X.ndim != 2 or X.shape[1] != 3 or u.shape != X.shape:
        raise ParameterError(f"points and displacement must both be (k, 3) arrays, got {X.shape} and {u.shape}")
    r = np.hypot(X[:, 0], X[:, 1])
    rim = np.flatnonzero(r >= r.max() * (1 - 1e-6))
    theta = np.arctan2(X[rim, 1], X[rim, 0])
    angles = np.unique(np.round(theta, 9)).size
    top = angles // 2 - 1 if nmax is None else int(nmax)
    if top < 0:
        raise ParameterError(f"the disc's outer rim has {angles} distinct angles: too few for nodal diameters")
    n = np.arange(-top, top + 1)
    c = np.abs(np.exp(-1j * np.outer(n, theta)) @ u[rim, 2]) ** 2
    pairs = c[top:].copy()                  # n = 0 .. top, each with its -n
    pairs[1:] += c[:top][::-1]
    total = pairs.sum()
    if not total > 0:
        raise ParameterError("the shape does not move the disc's outer rim axially")
    k = int(np.argmax(pairs))
    return k, float(pairs[k] / total)


def steady_velocity(brake: Brake, mu: float, drive: float = 1e-6) -> np.ndarray:
    """Rate of change (m kg^0.5 / s) of the steady state's modal coordinates as the pads move:
    the disc's deformation travels with them. A central difference of the states at +-``drive``
    (m) of the pads' travel at the mean radius."""
    from ..contact.analyses.steady import steady_state
    from ..contact.engine.friction import Coulomb

    dt = drive / brake.params.speed
    law, v = Coulomb(mu), brake.sliding_velocity()
    return (steady_state(brake.model, dt, friction=law, sliding_velocity=v).eta
            - steady_state(brake.model, -dt, friction=law, sliding_velocity=v).eta) / (2 * dt)


def perturbed_start(brake: Brake, state, mode, velocity, amplitude: float = 1e-12) -> dict:
    """The engine's ``initial`` of the steady state moving with the pads (``velocity`` from
    :func:`steady_velocity`), perturbed along the phase-aligned real part of ``mode`` so that the
    largest displacement of a coordinate is ``amplitude`` (m; 0: unperturbed)."""
    shape = np.real(mode / mode[np.argmax(np.abs(mode))])
    peak = max(np.abs(brake.body_coordinates(b.name, shape)).max() for b in brake.model.bodies)
    return brake.initial(state.eta + (amplitude / peak) * shape, velocity)


def fit_growth(reference, perturbed, state, z, *, order: int = 4, linear: float = 0.05) -> dict:
    """Growth rate and frequency of a perturbation in the transient against the eigenvalue ``z``.

    The signal: the difference of the nodes' normal forces between the ``perturbed`` and the
    ``reference`` runs (:class:`~fesub.contact.ContactRunResult`, the same steps; what the
    reference does away from the steady state cancels while both stay linear). The window: from
    30 % of the linear range to its end, the linear range being the samples before any node of
    either run leaves sliding and while the reference's normal forces stay within ``linear`` times
    their mean from the steady ``state``'s. The pole: of ``order`` exponentials fitted by the matrix
    pencil (:func:`~fesub.contact.analyses.perturb.matrix_pencil`), the largest at the window's end.

    Returns a dict: ``pole`` (1/s, complex), ``rate_error`` and ``frequency_error`` (relative to
    ``z``), ``window_s`` ([t0, t1], s), ``samples``.
    """
    from ..contact.analyses.perturb import matrix_pencil

    t, h = reference.t, reference.h
    ln0 = np.asarray(state.lambda_n, float)
    drift = np.abs(np.nan_to_num(reference.nodes["lambda_n"] - ln0)).max(axis=1)
    ok = np.all(reference.nodes["state"] == 2, axis=1) & np.all(perturbed.nodes["state"] == 2, axis=1) & \
        (drift <= linear * ln0.mean())
    end = int(np.argmin(ok)) - 1 if not ok.all() else t.size - 1
    start = int(np.searchsorted(t, 0.3 * t[max(end, 0)]))
    out = {"pole": None, "rate_error": None, "frequency_error": None,
           "window_s": [float(t[start]), float(t[max(end, 0)])], "samples": 0}
    dec = max(1, round(1.0 / (40 * abs(z.imag) / (2 * np.pi) * h))) if z.imag else 1
    y = np.nan_to_num(perturbed.nodes["lambda_n"] - reference.nodes["lambda_n"])[start:end + 1:dec].T
    out["samples"] = int(y.shape[1])
    if y.shape[1] < 4 * order or not np.any(y):
        return out
    poles, amps = matrix_pencil(y / np.abs(y).max(), dec * h, order)
    size = np.linalg.norm(amps, axis=0) * np.exp(poles.real * (t[end] - t[start]))
    up = np.flatnonzero(poles.imag > 0)
    if not up.size:
        return out
    p = complex(poles[up[np.argmax(size[up])]])
    out.update(pole=p, rate_error=p.real / z.real - 1 if z.real else None,
               frequency_error=p.imag / z.imag - 1 if z.imag else None)
    return out
