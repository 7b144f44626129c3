"""Assembly of the global K and M of a 500 x 200 Q4 mesh (100 000 elements, 101 202 DOFs).

Compared in the same run:

* the default path (compiled element kernel + compiled CSR scatter);
* the NumPy-vectorised twins of the same kernels (``fesub._backend.use("python")``);
* a naive per-element Python loop (element matrices one by one with small NumPy products, COO
  triplets -> CSR). It is far too slow to run on all elements here, so it is timed on the first
  ``N_NAIVE`` elements and the ratio is extrapolated linearly in the number of elements (the
  loop does the same work per element); both the measured and the extrapolated ratios are stored.
* the element kernels followed by the plain COO -> CSR ``assemble`` (the assembly this
  scatter replaced).
"""

from __future__ import annotations

import numpy as np
import pytest

import scipy.sparse as sp

import fesub
from fesub.fe import PlaneStress, mesh_matrices, rectangle
from fesub.fe import elements
from fesub.fe.assembly import DofMap, assemble, element_dofs

MAT = PlaneStress(210e9, 0.3, 7800.0, 0.01)
N_NAIVE = 2000


@pytest.fixture(scope="module")
def mesh():
    return rectangle(5.0, 2.0, 500, 200)


def naive_q4_assembly(points, conn, material, n_dofs):
    """Per-element loop: 2x2 Gauss Q4 with incompatible modes, then COO -> CSR."""
    D = material.D
    t, rho = material.thickness, material.rho
    g = 1.0 / np.sqrt(3.0)
    XI = np.array([-1.0, 1.0, 1.0, -1.0])
    ETA = np.array([-1.0, -1.0, 1.0, 1.0])
    rows, cols, kv, mv = [], [], [], []
    for nodes in conn:
        xy = points[nodes]
        Ke = np.zeros((8, 8))
        Me = np.zeros((8, 8))
        Kci = np.zeros((8, 4))
        Kii = np.zeros((4, 4))
        J0 = np.array([[XI @ xy[:, 0], XI @ xy[:, 1]], [ETA @ xy[:, 0], ETA @ xy[:, 1]]]) / 4
        J0inv = np.linalg.inv(J0)
        det0 = np.linalg.det(J0)
        for xi, eta in ((-g, -g), (g, -g), (g, g), (-g, g)):
            N = 0.25 * (1 + xi * XI) * (1 + eta * ETA)
            dN = np.array([0.25 * XI * (1 + eta * ETA), 0.25 * ETA * (1 + xi * XI)])
            J = dN @ xy
            det = np.linalg.det(J)
            dxy = np.linalg.solve(J, dN)
            B = np.zeros((3, 8))
            B[0, 0::2] = dxy[0]
            B[1, 1::2] = dxy[1]
            B[2, 0::2] = dxy[1]
            B[2, 1::2] = dxy[0]
            dP = J0inv @ np.array([[-2 * xi, 0.0], [0.0, -2 * eta]]) * det0 / det
            Bi = np.zeros((3, 4))
            Bi[0, 0::2] = dP[0]
            Bi[1, 1::2] = dP[1]
            Bi[2, 0::2] = dP[1]
            Bi[2, 1::2] = dP[0]
            w = det * t
            Ke += B.T @ D @ B * w
            Kci += B.T @ D @ Bi * w
            Kii += Bi.T @ D @ Bi * w
            NN = np.outer(N, N) * rho * w
            Me[0::2, 0::2] += NN
            Me[1::2, 1::2] += NN
        Ke -= Kci @ np.linalg.solve(Kii, Kci.T)
        dofs = np.ravel(np.column_stack([2 * nodes, 2 * nodes + 1]))
        rows.append(np.repeat(dofs, 8))
        cols.append(np.tile(dofs, 8))
        kv.append(Ke.ravel())
        mv.append(Me.ravel())
    r, c = np.concatenate(rows), np.concatenate(cols)
    K = sp.csr_matrix((np.concatenate(kv), (r, c)), shape=(n_dofs, n_dofs))
    M = sp.csr_matrix((np.concatenate(mv), (r, c)), shape=(n_dofs, n_dofs))
    return K, M


def numpy_twin(mesh):
    with fesub._backend.use("python"):
        return mesh_matrices(mesh, MAT)


def kernels_then_coo(mesh):
    conn = mesh.elements()
    Ke, Me = elements.q4_matrices(mesh.points[conn], MAT)
    ed = element_dofs(conn, 2)
    n = DofMap(mesh.n_points, 2).n_dofs
    return assemble(ed, Ke, n), assemble(ed, Me, n)


def test_naive_loop_agrees(mesh):
    """The baseline computes the same matrices (so the comparison is fair)."""
    sub = rectangle(1.0, 0.4, 10, 4)
    K, M, dm = mesh_matrices(sub, MAT)
    Kn, Mn = naive_q4_assembly(sub.points, sub.elements(), MAT, dm.n_dofs)
    assert abs(K - Kn).max() <= 1e-12 * abs(K).max()
    assert abs(M - Mn).max() <= 1e-12 * abs(M).max()


def test_bench_q4_assembly_500x200(benchmark, ratio_to, goal, mesh):
    n_dofs = 2 * mesh.n_points
    K, M, _ = benchmark.pedantic(mesh_matrices, args=(mesh, MAT), rounds=5, iterations=1, warmup_rounds=1)
    assert K.shape == (n_dofs, n_dofs) and M.nnz == K.nnz
    benchmark.extra_info["backend"] = fesub._backend.active("fe")
    benchmark.extra_info["n_elements"] = int(len(mesh.elements()))
    ratio_to("numpy_twin", numpy_twin, mesh, rounds=2)
    ratio_to("kernels_then_coo_assemble", kernels_then_coo, mesh, rounds=3)
    conn = mesh.elements()
    r = ratio_to(f"naive_loop_first_{N_NAIVE}_elements", naive_q4_assembly, mesh.points, conn[:N_NAIVE], MAT,
                 n_dofs, rounds=1)
    if r is not None:
        benchmark.extra_info["ratio_naive_loop_extrapolated"] = r * len(conn) / N_NAIVE
    goal("median_s", 0.5)
