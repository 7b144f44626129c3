"""A linear substructure: FE matrices, DOF map, node coordinates and node sets.

One class for every mesh the FE layer assembles: plane and frame meshes
(:class:`fesub.fe.Mesh`, DOFs ``x``, ``y``[, ``rz``]) and 3D solid meshes
(:class:`fesub.fe.SolidMesh`, DOFs ``x``, ``y``, ``z``). The mesh decides the element family, the
rest (clamps, DOF lookup, damping, expansion) is the same, so Craig-Bampton reduction and the
assembly take either.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..errors import ModelError
from ..fe.assembly import DofMap, free_dofs, mesh_matrices, modes
from ..fe.assembly import rayleigh as rayleigh_matrix
from ..fe.assembly3d import solid_mesh_matrices
from ..fe.materials import Solid
from ..fe.solid_mesh import SolidMesh

__all__ = ["Substructure"]


class Substructure:
    """Linear time-invariant substructure ``M u'' + C u' + K u = f + g`` built from a mesh.

    Parameters
    ----------
    mesh : fesub.fe.Mesh or fesub.fe.SolidMesh
        Plane or frame mesh, or a 3D solid mesh; node coordinates in m.
    material : PlaneStress, PlaneStrain, BeamSection or Solid
        PlaneStress or PlaneStrain for plane meshes, BeamSection for frame meshes, Solid for
        solid meshes (moduli in Pa, density in kg/m^3).
    clamped : sequence of str, or dict of str to components
        Node-set names, or name -> components ('x', 'y', 'rz' in 2D; 'x', 'y', 'z' in 3D): DOFs
        removed from the model (zero displacement).
    rayleigh : tuple of float
        ``(alpha, beta)``: Rayleigh damping C = alpha M + beta K (alpha in 1/s, beta in s).
    incompatible, lumped : bool
        Element options (see :func:`fesub.fe.mesh_matrices` and
        :func:`fesub.fe.assembly3d.solid_mesh_matrices`: incompatible modes of Q4 and 8-node
        hexahedra, HRZ-lumped mass).
    name : str
        Label used in messages and plots.

    Attributes
    ----------
    K, M, C : CSR matrices over the retained (non-clamped) DOFs.
    dofmap : node-major numbering of all DOFs (before clamping): a :class:`fesub.fe.DofMap`, or
        a :class:`fesub.fe.SolidDofMap` (components x, y, z) for a solid mesh.
    retained : indices (in ``dofmap`` numbering) of the retained DOFs; model DOF i is
        ``retained[i]``.
    """

    def __init__(self, mesh, material, *, clamped=(), rayleigh=(0.0, 0.0), incompatible: bool = True,
                 lumped: bool = False, name: str = "substructure"):
        self.mesh = mesh
        self.material = material
        self.name = name
        solid_mesh, solid_material = isinstance(mesh, SolidMesh), isinstance(material, Solid)
        if solid_mesh != solid_material:
            want = "a Solid material" if solid_mesh else "a PlaneStress, PlaneStrain or BeamSection material"
            raise ModelError(f"substructure {name!r}: a {type(mesh).__name__} needs {want}, got "
                             f"{type(material).__name__}")
        assemble = solid_mesh_matrices if solid_mesh else mesh_matrices
        K, M, dm = assemble(mesh, material, incompatible=incompatible, lumped=lumped)
        self._constrain(K, M, dm, clamped, rayleigh)

    @classmethod
    def from_matrices(cls, mesh, material, K, M, dofmap, *, clamped=(), rayleigh=(0.0, 0.0),
                      name: str = "substructure", retained_only: bool = False) -> "Substructure":
        """A substructure of matrices already assembled on ``mesh`` (no assembly): ``K`` (N/m) and
        ``M`` (kg) over every DOF of ``dofmap`` (before clamping), as
        :func:`fesub.fe.assembly3d.solid_mesh_matrices` or :func:`fesub.fe.mesh_matrices` return
        them, or with ``retained_only`` over the DOFs the clamps leave (in order: the ``K`` and
        ``M`` of a substructure); clamps, damping and name as in the constructor. A reduction
        cache restores substructures this way (:mod:`fesub.substructure.reduction`)."""
        self = cls.__new__(cls)
        self.mesh, self.material, self.name = mesh, material, name
        if not retained_only and (K.shape != (dofmap.n_dofs, dofmap.n_dofs) or M.shape != K.shape):
            raise ModelError(f"substructure {name!r}: K and M must be ({dofmap.n_dofs}, {dofmap.n_dofs}) "
                             f"over the DOF map, got {K.shape} and {M.shape}")
        self._constrain(K, M, dofmap, clamped, rayleigh, retained_only=retained_only)
        return self

    def _constrain(self, K, M, dm, clamped, rayleigh, *, retained_only: bool = False) -> None:
        """Clamps, retained DOFs, the retained matrices (``K``, ``M`` taken as they are with
        ``retained_only``) and the Rayleigh damping."""
        mesh = self.mesh
        self.dofmap: DofMap = dm
        if isinstance(clamped, dict):
            items = clamped.items()
        else:
            items = [(c, None) for c in clamped]
        fixed = [dm.dofs(mesh.nodes(set_name), comps) for set_name, comps in items]
        self._clamp_sets = [(str(c), comps) for c, comps in items]
        fixed = np.unique(np.concatenate(fixed)) if fixed else np.zeros(0, np.int64)
        self.clamped = fixed
        self.retained = free_dofs(dm.n_dofs, fixed)
        self._index = np.full(dm.n_dofs, -1, np.int64)
        self._index[self.retained] = np.arange(self.retained.size)
        if retained_only:
            n = self.retained.size
            if K.shape != (n, n) or M.shape != K.shape:
                raise ModelError(f"substructure {self.name!r}: K and M must be ({n}, {n}) over the "
                                 f"retained DOFs, got {K.shape} and {M.shape}")
            self.K, self.M = sp.csr_matrix(K), sp.csr_matrix(M)
        else:
            self.K = sp.csr_matrix(K[self.retained][:, self.retained])
            self.M = sp.csr_matrix(M[self.retained][:, self.retained])
        self.alpha, self.beta = (float(v) for v in rayleigh)
        self.C = rayleigh_matrix(self.M, self.K, self.alpha, self.beta)

    @property
    def n_dofs(self) -> int:
        return self.retained.size

    @property
    def points(self) -> np.ndarray:
        return self.mesh.points

    @property
    def dim(self) -> int:
        """Space dimension of the model (-): 3 for a solid mesh, 2 for plane and frame meshes."""
        return 3 if isinstance(self.mesh, SolidMesh) else 2

    def dofs(self, nodes_or_set, comps=None) -> np.ndarray:
        """Model DOF indices of a node set (by name) or node indices, for the given components
        (``"x"``, ``"y"``, ``"rz"`` in 2D, ``"x"``, ``"y"``, ``"z"`` in 3D; default all), node-major.

        Raises :class:`ModelError` if one of them is clamped.
        """
        nodes = self.mesh.nodes(nodes_or_set) if isinstance(nodes_or_set, str) else nodes_or_set
        g = self.dofmap.dofs(nodes, comps)
        idx = self._index[g]
        if np.any(idx < 0):
            raise ModelError(self._clamped_message(nodes_or_set, g[idx < 0]))
        return idx

    def _clamped_message(self, nodes_or_set, dofs) -> str:
        """What a user knows of clamped DOFs asked for: nodes, coordinates (m), components, the
        clamp sets that hold them, and how to leave them out."""
        dm = self.dofmap
        dofs = np.asarray(dofs, dtype=np.int64)
        nodes = np.unique(dofs // dm.ndpn)
        where = []
        for i in nodes[:4]:
            held = [dm.components[int(d) % dm.ndpn] for d in dofs if int(d) // dm.ndpn == i]
            xyz = ", ".join(f"{v:.6g}" for v in self.mesh.points[i][:self.dim])
            alone = [k for k, v in self.mesh.node_sets.items() if v.size == 1 and v[0] == i]
            named = f" ({', '.join(repr(k) for k in alone)})" if alone else ""
            where.append(f"node {int(i)}{named} at ({xyz}) m, {'/'.join(held)}")
        more = f" and {nodes.size - 4} more nodes" if nodes.size > 4 else ""
        holders = [name for name, _ in self._clamp_sets
                   if name in self.mesh.node_sets or name in self.mesh.edge_sets
                   if np.intersect1d(self.mesh.nodes(name), nodes).size]
        clamp = f" (clamped by {', '.join(repr(h) for h in holders)})" if holders else ""
        if isinstance(nodes_or_set, str) and holders:
            fix = f"leave them out: np.setdiff1d(mesh.nodes({nodes_or_set!r}), mesh.nodes({holders[0]!r}))"
        else:
            fix = "leave them out of the nodes given"
        label = f"node set {nodes_or_set!r} includes" if isinstance(nodes_or_set, str) else \
            "the nodes given include"
        return (f"{self.name}: {label} clamped DOFs{clamp}: {'; '.join(where)}{more}. A clamped DOF "
                f"is no coordinate of the model (not a boundary DOF, load, output or drive): {fix}")

    def expand(self, u) -> np.ndarray:
        """Full nodal field (n_nodes, ndpn[, ...]) from model DOF values (clamped DOFs = 0)."""
        u = np.asarray(u)
        full = np.zeros((self.dofmap.n_dofs,) + u.shape[1:], dtype=u.dtype)
        full[self.retained] = u
        return full.reshape((self.dofmap.n_nodes, self.dofmap.ndpn) + u.shape[1:])

    def load(self, nodes_or_set, comp: str, value: float) -> np.ndarray:
        """Load vector (N) with ``value`` split evenly over the nodes of the set, on one component."""
        value = float(value) if isinstance(value, (int, float, np.number)) else value
        if not isinstance(value, float) or not np.isfinite(value):
            raise ModelError(f"load value must be a finite force in N, got {value!r}")
        idx = self.dofs(nodes_or_set, comp)
        f = np.zeros(self.n_dofs)
        f[idx] = value / idx.size
        return f

    def modes(self, n: int):
        """Lowest ``n`` modes of the substructure with its clamps: (freq_hz, phi)."""
        return modes(self.K, self.M, n)

    def __repr__(self) -> str:
        blocks = self.mesh.cells if isinstance(self.mesh, SolidMesh) else self.mesh.blocks()
        cells = ", ".join(f"{len(c)} {t}" for t, c in blocks.items())
        return f"Substructure({self.name!r}, {cells} elements, {self.mesh.n_points} nodes, {self.n_dofs} DOFs)"
