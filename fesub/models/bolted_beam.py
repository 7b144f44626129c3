"""Bolted lap-joint beam after the Brake-Reuss beam: two steel half-beams bolted over a lap.

SI units. Geometry (the bundled Gmsh model ``brake_reuss.geo``/``.msh``, see ``meshes/README.md``):
two half-beams of 25.4 x 25.4 mm section, each 420 mm long, overlapping over 120 mm where each
is 12.7 mm thick (the assembled beam is 720 mm long, the lap 300 <= x <= 420 mm, its faces at
z = 12.7 mm); three bolts at x = 330, 360, 390 mm (-30, 0, 30 mm from the lap centre) on the
beam's axis. 304 stainless steel, E = 192 GPa, nu = 0.29, rho = 7800 kg/m^3; incompatible-mode
hexahedra (:func:`fesub.fe.solid_mesh_matrices`).

The model (:func:`build`):

* **Halves.** Each half is a Craig-Bampton substructure (:class:`fesub.substructure.CraigBampton`)
  with its lap-face nodes kept as boundary DOFs and ``n_modes_half`` fixed-interface modes.
  The beam is free (free-free, as the test beams hung on soft cords): its six rigid-body
  modes are kept out of the static solution by :class:`fesub.hbm.BoltedJoint`.
* **Contact.** The lap faces are meshed alike (node pairs at the same place); each pair is a
  node-to-node :class:`fesub.hbm.Friction3D` contact acting on the relative displacement
  ``r = u_upper - u_lower`` (tangents x, y; normal the approach ``-r_z``), touching unloaded
  (``n0 = 0``). Its stiffnesses are the interface's per unit area times the node's tributary
  area on the lap face (a quarter of each of its quadrilaterals): ``kn = kn_area A``,
  ``kt = kt_area A``. The defaults, ``kn_area = 1e13 N/m^3`` (the compliance of a layer of
  steel ``E / kn_area = 19 um`` thick, the height of the asperities of a ground surface) and
  ``kt_area = 2 (1 - nu) / (2 - nu) kn_area`` (Mindlin's ratio of the tangential to the normal
  stiffness of elastic contacts, 0.83), mu = 0.6 (dry steel on steel).
* **Reduction onto the contacts.** The assembled halves are written in the interface's mean and
  relative displacements ``m = u_lower``, ``r``, and reduced once more by Craig-Bampton with
  ``r`` kept (``n_modes`` modes of the beam with the interface welded): the harmonic balance
  then runs on ``3 n_contacts + n_modes`` coordinates, the contacts' relative displacements
  being coordinates themselves.
* **Bolts.** Each bolt is a :class:`fesub.hbm.Bolt`: its shank (``bolt_stiffness`` = E A / L,
  default an M8 steel shank over the 25.4 mm grip) tightened to ``preload`` (N, default 12 kN),
  its elongation the mean ``u_z`` of the washer patch under the head (top of the upper half,
  16 x 16 mm) minus that under the nut (bottom of the lower half).

:func:`build` returns a :class:`BoltedBeam`; its :attr:`~BoltedBeam.joint` is the
:class:`fesub.hbm.BoltedJoint` whose :meth:`~fesub.hbm.BoltedJoint.preload` gives the prestressed
state and the stuck-interface modes, and :meth:`BoltedBeam.hb_system` the harmonic balance about
it.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from ..errors import MeshError, ModelError, ParameterError, check_count, check_positive

__all__ = [
    "BOLT_X",
    "BoltedBeam",
    "BoltedBeamParams",
    "build",
    "bundled_mesh",
    "tributary_areas",
]

#: bolt positions along the beam (m): -30, 0 and 30 mm from the lap centre
BOLT_X = (0.330, 0.360, 0.390)
#: quadrilateral faces of an eight-node hexahedron (VTK order)
_HEX_FACES = ((0, 1, 2, 3), (4, 5, 6, 7), (0, 1, 5, 4), (1, 2, 6, 5), (2, 3, 7, 6), (3, 0, 4, 7))


def bundled_mesh(coarse: bool = False) -> Path:
    """Path of the bundled mesh ``brake_reuss.msh`` (200 node pairs on the lap), or with
    ``coarse`` of ``brake_reuss_coarse.msh`` (55 node pairs: tests and examples); installed as
    ``fesub/meshes``, or ``meshes/`` in a checkout."""
    from .common import bundled_file

    return bundled_file("brake_reuss_coarse.msh" if coarse else "brake_reuss.msh")


@dataclass(frozen=True)
class BoltedBeamParams:
    """Every parameter of the bolted beam (SI units).

    Attributes
    ----------
    E, nu, rho : float
        Steel: Young's modulus (Pa), Poisson's ratio (-), density (kg/m^3).
    kn_area, kt_area : float
        Normal and tangential interface stiffness per unit area (N/m^3); ``kt_area`` None:
        ``2 (1 - nu) / (2 - nu) kn_area``.
    mu : float
        Friction coefficient (-).
    preload : float
        Tension of each bolt (N).
    bolt_stiffness : float
        Axial stiffness E A / L of each bolt's shank (N/m).
    n_modes_half : int
        Fixed-interface modes of each half's Craig-Bampton reduction.
    n_modes : int
        Modes of the beam with the interface welded kept by the reduction onto the contacts.
    zeta : float
        Linear damping ratio of the stuck first bending mode (-): mass-proportional damping
        ``C = 2 zeta w_1 M``.
    mesh : str or None
        Mesh file (Gmsh, physical groups as in the bundled one); None: the bundled mesh.
    """

    E: float = 192e9
    nu: float = 0.29
    rho: float = 7800.0
    kn_area: float = 1e13
    kt_area: float | None = None
    mu: float = 0.6
    preload: float = 12e3
    bolt_stiffness: float = 200e9 * math.pi * 0.008 ** 2 / 4 / 0.0254
    n_modes_half: int = 12
    n_modes: int = 12
    zeta: float = 5e-4
    mesh: str | None = None

    def __post_init__(self):
        for name in ("E", "rho", "kn_area", "mu", "preload", "bolt_stiffness", "zeta"):
            check_positive(name, getattr(self, name), error=ParameterError)
        if self.kt_area is not None:
            check_positive("kt_area", self.kt_area, error=ParameterError)
        if not -1.0 < self.nu < 0.5:
            raise ParameterError(f"nu (Poisson's ratio) must be in (-1, 0.5), got {self.nu!r}")
        check_count("n_modes_half", self.n_modes_half, 1)
        check_count("n_modes", self.n_modes, 1)

    @property
    def kt_per_area(self) -> float:
        """Tangential stiffness per unit area (N/m^3)."""
        if self.kt_area is not None:
            return float(self.kt_area)
        return 2 * (1 - self.nu) / (2 - self.nu) * self.kn_area


def tributary_areas(mesh, nodes) -> np.ndarray:
    """Area (m^2) each of ``nodes`` carries on the face they form: a quarter of every hexahedron
    face whose four nodes are all in ``nodes`` (a face of two hexahedra counted once)."""
    nodes = np.asarray(nodes, np.int64)
    inset = np.zeros(mesh.n_points, bool)
    inset[nodes] = True
    hexes = mesh.cells.get("hexahedron")
    if hexes is None:
        raise MeshError("tributary areas: the mesh has no hexahedra")
    faces = np.vstack([hexes[:, list(f)] for f in _HEX_FACES])
    faces = faces[np.all(inset[faces], axis=1)]
    faces = faces[np.unique(np.sort(faces, axis=1), axis=0, return_index=True)[1]]
    x = mesh.points[faces]                                      # (nf, 4, 3)
    area = 0.5 * np.linalg.norm(np.cross(x[:, 2] - x[:, 0], x[:, 3] - x[:, 1]), axis=1)
    acc = np.zeros(mesh.n_points)
    np.add.at(acc, faces.ravel(), np.repeat(area / 4, 4))
    return acc[nodes]


def _pairs(lower, upper, tol=1e-9):
    """Node pairs (lower node, upper node) of the two lap faces, at the same place."""
    from scipy.spatial import cKDTree

    a, b = lower.node_sets.get("interface"), upper.node_sets.get("interface")
    if a is None or b is None:
        raise MeshError("the mesh has no physical surface 'interface' on both volumes")
    d, j = cKDTree(upper.points[b]).query(lower.points[a])
    if a.size != b.size or np.any(d > tol * np.ptp(lower.points, axis=0).max()):
        raise MeshError(f"the lap faces are not meshed alike ({a.size} and {b.size} nodes, "
                        f"largest distance between paired nodes {d.max():.3g} m)")
    return np.asarray(a, np.int64), np.asarray(b, np.int64)[j]


def _dofs(nodes):
    return (3 * np.asarray(nodes, np.int64)[:, None] + np.arange(3)).ravel()


@dataclass
class BoltedBeam:
    """The bolted beam, reduced onto its contacts (see the module docstring).

    Attributes
    ----------
    params : BoltedBeamParams
    joint : fesub.hbm.BoltedJoint
        Structure (reduced coordinates ``[eta; r]``: ``n_modes`` modal amplitudes, then the
        relative displacements ``r`` of the node pairs, x, y, z per pair), contacts and bolts.
    xy : (n_contacts, 2) ndarray
        Position of each contact on the lap face (m).
    area : (n_contacts,) ndarray
        Tributary area of each contact (m^2).
    sensors : (4, n) ndarray
        Rows giving ``u_y`` and ``u_z`` (m) at the centre of the lower half's free end, then of
        the upper half's, from the reduced coordinates.
    freq_full_hz : (k,) ndarray
        Lowest stuck-interface frequencies (Hz) of the model before the reduction onto the
        contacts (the two Craig-Bampton halves, all contacts closed, bolts as springs).
    info : dict
        Sizes: nodes, DOFs, contacts, reduced coordinates.
    """

    params: BoltedBeamParams
    joint: object
    xy: np.ndarray
    area: np.ndarray
    sensors: np.ndarray
    freq_full_hz: np.ndarray
    info: dict = field(default_factory=dict)

    @property
    def n_contacts(self) -> int:
        return len(self.joint.contacts)

    def contact_dofs(self) -> np.ndarray:
        """Reduced coordinates of the relative displacements (n_contacts, 3)."""
        return self.joint.n - 3 * self.n_contacts + np.arange(3 * self.n_contacts).reshape(-1, 3)

    def bending_mode(self, shapes, freq_hz, fmin: float = 20.0) -> int:
        """Index of the first vertical (z) bending mode among ``shapes`` (n, k) with
        frequencies ``freq_hz``: the lowest above ``fmin`` (Hz, above the rigid-body modes) whose
        ends move more in z than in y."""
        s = self.sensors @ shapes
        uy = np.abs(s[[0, 2]]).max(axis=0)
        uz = np.abs(s[[1, 3]]).max(axis=0)
        ok = np.flatnonzero((np.asarray(freq_hz) > fmin) & (uz > 2 * uy))
        if ok.size == 0:
            raise ModelError("no vertical bending mode among the modes given")
        return int(ok[0])

    def damping(self, w1: float) -> np.ndarray:
        """Mass-proportional damping ``2 zeta w1 M`` (N s/m) of the damping ratio ``zeta`` at
        the circular frequency ``w1`` (rad/s)."""
        return 2.0 * self.params.zeta * w1 * self.joint.M

    def hb_system(self, state, nh: int, w1: float, dof: int = 0, *, constant: bool = False):
        """The harmonic balance about the preloaded ``state`` (:class:`fesub.hbm.PreloadState`)
        with ``nh`` harmonics, the damping of :meth:`damping` at ``w1`` (rad/s), a unit load
        and the amplitude monitor on the coordinate ``dof``; ``constant`` keeps the mean of
        the contact forces (:meth:`fesub.hbm.BoltedJoint.hb_system`)."""
        return self.joint.hb_system(state, self.damping(w1), nh, fex=dof, dof=dof,
                                    constant=constant)

    def tip_amplitude(self, Q, h0: int = 0) -> np.ndarray:
        """Fundamental-harmonic amplitude (m) of the vertical displacement at the centre of the
        upper half's free end, for harmonic coefficients ``Q`` (npts, N) or (N,) (m) over the
        reduced coordinates, with ``h0`` blocks before the first harmonic (1: the mean, as
        ``HBSystem.h0``)."""
        Q = np.atleast_2d(Q)
        n, s = self.joint.n, self.sensors[3]
        i = int(h0) * n
        return np.hypot(Q[:, i:i + n] @ s, Q[:, i + n:i + 2 * n] @ s)

    def summary(self) -> dict:
        return {**{k: v for k, v in asdict(self.params).items()},
                "kt_per_area": self.params.kt_per_area, **self.info}


def _blockdiag(A, B):
    return np.block([[A, np.zeros((A.shape[0], B.shape[1]))],
                     [np.zeros((B.shape[0], A.shape[1])), B]])


def _lowest_modes(K, M, k):
    """The ``k`` lowest eigenpairs ``(w^2, Phi)`` of dense ``(K, M)`` (rad^2/s^2; mass-normalised)
    by shift-invert Lanczos about a small negative shift (rigid-body modes included). The same
    matrices give the same modes: a fixed start vector (ARPACK's own is random, so a rebuilt
    model's coordinates would not be those of results saved from an earlier build) and each
    mode's largest entry positive."""
    from scipy.sparse.linalg import eigsh

    shift = -1e-6 * np.abs(np.diag(K)).max() / np.abs(np.diag(M)).max()
    v0 = np.random.default_rng(0).standard_normal(K.shape[0])
    w2, Phi = eigsh(K, k, M=M, sigma=shift, which="LM", v0=v0)
    o = np.argsort(w2)
    w2, Phi = w2[o], Phi[:, o]
    Phi = Phi * np.sign(Phi[np.argmax(np.abs(Phi), axis=0), np.arange(Phi.shape[1])])
    return w2, Phi / np.sqrt(np.einsum("ij,ij->j", Phi, M @ Phi))


def _onto_relative(Kz, Mz, nb, n_modes):
    """Ritz basis ``z = T [eta; r]`` keeping the last ``nb`` coordinates ``r`` (the contacts'
    relative displacements) physical: the free modes of the structure with ``r = 0`` (the beam
    with its interface welded: its rigid-body modes and the ``n_modes`` lowest elastic ones) and
    the static responses to unit ``r`` (Craig-Bampton's constraint modes; the welded beam is
    free, so they are solved with its stiffness made regular by ``M R R^T M`` on its rigid
    modes ``R``, which gives the response M-orthogonal to them: the loads ``-K_ir`` have no
    resultant). Returns ``(T, number of rigid-body modes)``."""
    n = Kz.shape[0]
    i = np.arange(n - nb)
    Kii, Mii = Kz[np.ix_(i, i)], Mz[np.ix_(i, i)]
    w2, Phi = _lowest_modes(Kii, Mii, n_modes + 6)
    rigid = w2 < 1e-8 * w2.max()
    R = Phi[:, rigid]
    MR = Mii @ R
    Psi = -np.linalg.solve(Kii + MR @ MR.T, Kz[np.ix_(i, n - nb + np.arange(nb))])
    T = np.zeros((n, Phi.shape[1] + nb))
    T[:n - nb, :Phi.shape[1]] = Phi
    T[:n - nb, Phi.shape[1]:] = Psi
    T[n - nb:, Phi.shape[1]:] = np.eye(nb)
    return T, int(rigid.sum())


def build(*, mesh=None, progress: bool = False, **params) -> BoltedBeam:
    """Build the bolted beam (module docstring) from its mesh and parameters.

    Parameters
    ----------
    mesh : str or path-like, optional
        Mesh file (volumes ``beam1`` (lower lap) and ``beam2``; surfaces ``interface``,
        ``head_k``, ``nut_k``, ``end1``, ``end2``); default the bundled one.
    progress : bool
        Print what is being built.
    **params
        Fields of :class:`BoltedBeamParams`.

    Returns
    -------
    BoltedBeam
    """
    from ..fe import Solid, solid_mesh_matrices
    from ..hbm import Bolt, BoltedJoint, ContactElement, Friction3D
    from ..substructure import CraigBampton
    from ..substructure.volumes import read_volumes


    try:
        p = BoltedBeamParams(mesh=None if mesh is None else str(mesh), **params)
    except TypeError as exc:
        raise ParameterError(f"bolted beam: {exc}") from None
    path = bundled_mesh() if p.mesh is None else Path(p.mesh)
    _, vols = read_volumes(path)
    if "beam1" not in vols or "beam2" not in vols:
        raise MeshError(f"{path}: physical volumes 'beam1' and 'beam2' expected, got {sorted(vols)}")
    lower, upper = vols["beam1"], vols["beam2"]
    a, b = _pairs(lower, upper)
    nc = a.size
    steel = Solid(p.E, p.nu, p.rho)
    halves = []
    for mesh_h, iface, end in ((lower, a, "end1"), (upper, b, "end2")):
        if end not in mesh_h.node_sets:
            raise MeshError(f"{path}: physical surface {end!r} (a free end face) missing")
        K, M, _ = solid_mesh_matrices(mesh_h, steel)
        halves.append((mesh_h, CraigBampton(K, M, _dofs(iface), p.n_modes_half)))
    (m1, cb1), (m2, cb2) = halves
    k1, k2 = cb1.n_modes, cb2.n_modes
    n1, n2 = cb1.n_dofs, cb2.n_dofs
    nb = 3 * nc
    # assembled halves q = [eta1; u1_b; eta2; u2_b] -> z = [eta1; eta2; m; r], u1 = m, u2 = m + r
    T0 = np.zeros((n1 + n2, k1 + k2 + 2 * nb))
    T0[:k1, :k1] = np.eye(k1)
    T0[n1:n1 + k2, k1:k1 + k2] = np.eye(k2)
    T0[k1:n1, k1 + k2:k1 + k2 + nb] = np.eye(nb)
    T0[n1 + k2:, k1 + k2:k1 + k2 + nb] = np.eye(nb)
    T0[n1 + k2:, k1 + k2 + nb:] = np.eye(nb)
    Kz = T0.T @ _blockdiag(cb1.Kr, cb2.Kr) @ T0
    Mz = T0.T @ _blockdiag(cb1.Mr, cb2.Mr) @ T0
    Kz, Mz = 0.5 * (Kz + Kz.T), 0.5 * (Mz + Mz.T)
    T2, n_rigid = _onto_relative(Kz, Mz, nb, p.n_modes)
    Kr, Mr = T2.T @ Kz @ T2, T2.T @ Mz @ T2
    Kr, Mr = 0.5 * (Kr + Kr.T), 0.5 * (Mr + Mr.T)
    n = Kr.shape[0]
    r_dofs = Kz.shape[0] - nb + np.arange(nb)

    def to_z(row1, row2):
        """A row on the full DOFs of each half -> the row on the coordinates z."""
        return T0.T @ np.concatenate([cb1.project(row1), cb2.project(row2)])

    # contacts: relative displacement rows, stiffness by tributary area
    area = tributary_areas(m1, a)
    kn, kt = p.kn_area * area, p.kt_per_area * area
    pos = (n - nb + np.arange(nb)).reshape(nc, 3)
    contacts = []
    for i in range(nc):
        G = np.zeros((3, n))
        G[0, pos[i, 0]] = 1.0          # t1: x slip of the upper face on the lower
        G[1, pos[i, 1]] = 1.0          # t2: y slip
        G[2, pos[i, 2]] = -1.0         # normal: approach (upper moving down on the lower)
        contacts.append(ContactElement(Friction3D(kt[i], kn[i], p.mu, 0.0), G,
                                       f"pair {i} (x = {1e3 * m1.points[a[i], 0]:.1f} mm, "
                                       f"y = {1e3 * m1.points[a[i], 1]:.1f} mm)"))
    bolts, bolt_z = [], []
    for k in range(len(BOLT_X)):
        head, nut = m2.node_sets.get(f"head_{k + 1}"), m1.node_sets.get(f"nut_{k + 1}")
        if head is None or nut is None:
            raise MeshError(f"{path}: washer patches 'head_{k + 1}' and 'nut_{k + 1}' expected")
        g1, g2 = np.zeros(3 * m1.n_points), np.zeros(3 * m2.n_points)
        g2[3 * head + 2] = 1.0 / head.size
        g1[3 * nut + 2] = -1.0 / nut.size
        gz = to_z(g1, g2)
        bolt_z.append(gz)
        bolts.append(Bolt(T2.T @ gz, p.preload, p.bolt_stiffness, f"bolt {k + 1}"))
    joint = BoltedJoint(Kr, Mr, contacts, bolts)
    # sensors: u_y, u_z at the centre of each free end face (nearest node)
    rows = []
    for mesh_h, end, which in ((m1, "end1", 0), (m2, "end2", 1)):
        e = mesh_h.node_sets[end]
        c = e[np.argmin(np.linalg.norm(mesh_h.points[e, 1:] - mesh_h.points[e, 1:].mean(0),
                                       axis=1))]
        for comp in (1, 2):
            r = np.zeros(3 * mesh_h.n_points)
            r[3 * c + comp] = 1.0
            z = [np.zeros(3 * m1.n_points), np.zeros(3 * m2.n_points)]
            z[which] = r
            rows.append(T2.T @ to_z(*z))
    # stuck-interface frequencies before the reduction onto the contacts (a check of it)
    Ks = Kz.copy()
    kz = np.stack([kt, kt, kn], 1).ravel()
    Ks[r_dofs, r_dofs] += kz
    gb = np.array(bolt_z)
    Ks += p.bolt_stiffness * gb.T @ gb
    w2 = _lowest_modes(0.5 * (Ks + Ks.T), Mz, 18)[0]
    f_full = np.sqrt(np.maximum(w2, 0.0)) / (2 * math.pi)
    info = {"nodes": int(m1.n_points + m2.n_points), "dofs": int(3 * (m1.n_points + m2.n_points)),
            "n_contacts": int(nc), "half_coordinates": [int(n1), int(n2)],
            "reduced_coordinates": int(n), "rigid_modes": int(n_rigid), "interface_area": float(area.sum()),
            "mesh": str(path)}
    return BoltedBeam(p, joint, m1.points[a, :2].copy(), area, np.array(rows),
                      f_full, info)
