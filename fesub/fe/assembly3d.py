"""Global stiffness and mass of 3D solid meshes (one or several cell types).

The sparsity pattern of each cell block is built once from its node graph
(:func:`fesub.fe.assembly.node_graph`, :func:`~fesub.fe.assembly.dof_pattern`) and the element
matrices are computed (single-threaded BLAS) and scattered into it chunk by chunk
(``fe.csr_scatter`` kernel), so that the ``ne (3k)^2`` element entries of a large mesh never sit
in memory at once. Mixed meshes add
the matrices of their blocks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .._backend import kernels
from ..errors import ModelError, check_count
from ..parallel import single_thread_blas
from .solid import solid_matrices

__all__ = ["SolidDofMap", "solid_mesh_matrices"]


@dataclass(frozen=True)
class SolidDofMap:
    """Node-major DOF numbering of a solid mesh: DOF of (node, component) = 3 node + component,
    components ``x``, ``y``, ``z`` (displacements in m); the 3D counterpart of
    :class:`fesub.fe.DofMap`, with the same methods.

    Parameters
    ----------
    n_nodes : int
        Number of mesh nodes (-).
    """

    n_nodes: int
    ndpn = 3
    components = ("x", "y", "z")

    @property
    def n_dofs(self) -> int:
        return 3 * self.n_nodes

    def dofs(self, nodes, comps=None) -> np.ndarray:
        """DOF indices of ``nodes`` for components ``comps`` (``"x"``, ``"y"``, ``"z"``), node-major."""
        from .assembly import DofMap  # the package's map imports this module: no cycle at load

        return DofMap.dofs(self, nodes, comps)


def _csr(data: np.ndarray, indices: np.ndarray, indptr: np.ndarray, n: int) -> sp.csr_matrix:
    A = sp.csr_matrix((data, indices, indptr), shape=(n, n), copy=False)
    A.has_sorted_indices = True
    A.has_canonical_format = True
    return A


def _block_matrices(points, cell, conn, material, incompatible, lumped, chunk):
    from .assembly import dof_pattern, node_graph  # see SolidDofMap.dofs

    n_nodes = len(points)
    node_ptr, node_idx = node_graph(conn, n_nodes)
    indptr, indices = dof_pattern(node_ptr, node_idx, 3)
    Kdata, Mdata = np.zeros(indices.size), np.zeros(indices.size)
    scatter = kernels("fe").csr_scatter
    # the element products are tiny (3x8 by 8xq, 24xq by qx24): threaded BLAS only adds
    # synchronisation to them (measured 2x slower on two cores)
    with single_thread_blas():
        for s in range(0, len(conn), chunk):
            c = np.ascontiguousarray(conn[s:s + chunk])
            Ke, Me = solid_matrices(cell, points[c], material, incompatible=incompatible, lumped=lumped)
            scatter(c, node_ptr, node_idx, 3, Ke, Me, Kdata, Mdata)
    n = 3 * n_nodes
    idx_t = np.int32 if max(indices.size, n) < 2**31 - 1 else np.int64
    indices, indptr = indices.astype(idx_t), indptr.astype(idx_t)
    return _csr(Kdata, indices, indptr, n), _csr(Mdata, indices, indptr, n)


def solid_mesh_matrices(mesh, material, *, incompatible: bool = True, lumped: bool = False,
                        chunk: int = 4096):
    """Global stiffness and mass (CSR) of a 3D solid mesh, all its cell blocks together.

    Parameters
    ----------
    mesh : fesub.fe.SolidMesh
        The mesh, node coordinates in m; hexahedron, tetra, tetra10 and wedge blocks.
    material : fesub.fe.Solid
        Young's modulus (Pa), Poisson's ratio (-), density (kg/m^3).
    incompatible : bool
        Hexahedra with the nine condensed incompatible modes (default), or plain 2x2x2 ones.
    lumped : bool
        HRZ-lumped (diagonal) mass instead of the consistent one.
    chunk : int
        Elements whose matrices are computed at once (-), >= 1: bounds the memory to about
        ``chunk (3k)^2`` doubles per matrix.

    Returns
    -------
    K : scipy.sparse.csr_matrix
        Stiffness (N/m), 3 n_points square, canonical.
    M : scipy.sparse.csr_matrix
        Mass (kg).
    dofs : SolidDofMap
        The DOF numbering (components ``x``, ``y``, ``z``).
    """
    chunk = check_count("chunk", chunk, 1, error=ModelError)
    K = M = None
    for cell, conn in mesh.cells.items():
        Kb, Mb = _block_matrices(mesh.points, cell, conn, material, incompatible, lumped, chunk)
        K, M = (Kb, Mb) if K is None else (K + Kb, M + Mb)
    return K, M, SolidDofMap(mesh.n_points)
