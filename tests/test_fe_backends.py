"""Compiled element kernels and their NumPy twins give the same matrices.

Each test runs under the ``backend`` fixture (the active backend) and compares with the other
implementation computed explicitly; the element matrices are also checked for the properties that
hold whatever the implementation (symmetry, rigid-body null space, positive mass).
"""

from __future__ import annotations

import numpy as np
import pytest

from fesub import _backend
from fesub.fe import PlaneStress, elements, mesh_matrices, rectangle
from fesub.fe.assembly import assemble, element_dofs

MAT = PlaneStress(70e9, 0.33, 2700.0, 0.004)
HAVE_COMPILED = _backend.compiled_available("fe")


def random_quads(ne, seed):
    """Convex, distorted quadrilaterals of varying size, position and orientation (m)."""
    rng = np.random.default_rng(seed)
    base = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1.0]])
    xy = base[None] + rng.uniform(-0.35, 0.35, (ne, 4, 2))  # stays convex (moves < half-width/2)
    size = rng.uniform(1e-3, 0.2, ne)[:, None, None]
    ang = rng.uniform(0, 2 * np.pi, ne)
    R = np.stack([np.stack([np.cos(ang), -np.sin(ang)], -1), np.stack([np.sin(ang), np.cos(ang)], -1)], 1)
    return np.einsum("eij,ekj->eki", R, xy * size) + rng.uniform(-1, 1, (ne, 1, 2))


def random_triangles(ne, seed):
    q = random_quads(ne, seed)
    return q[:, :3].copy()


def random_frames(ne, seed):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, (ne, 2))
    d = rng.normal(size=(ne, 2))
    d *= rng.uniform(1e-2, 1.0, (ne, 1)) / np.linalg.norm(d, axis=1, keepdims=True)
    return np.stack([a, a + d], 1)


def _compute(kind, xy, **kw):
    if kind == "q4":
        return elements.q4_matrices(xy, MAT, incompatible=False, **kw)
    if kind == "q4i":
        return elements.q4_matrices(xy, MAT, incompatible=True, **kw)
    if kind == "t3":
        return elements.t3_matrices(xy, MAT, **kw)
    rng = np.random.default_rng(7)
    ne = len(xy)
    return elements.frame2d_matrices(xy, rng.uniform(5e10, 2e11, ne), rng.uniform(1e-4, 1e-2, ne),
                                     rng.uniform(1e-9, 1e-6, ne), rng.uniform(1e3, 9e3, ne), **kw)


GEN = {"q4": random_quads, "q4i": random_quads, "t3": random_triangles, "frame": random_frames}


@pytest.mark.skipif(not HAVE_COMPILED, reason="compiled fe kernel not built")
@pytest.mark.parametrize("kind", ["q4", "q4i", "t3", "frame"])
def test_backends_identical(kind, backend):
    xy = GEN[kind](300, seed=11)
    K, M = _compute(kind, xy)
    other = "python" if backend == "compiled" else "compiled"
    with _backend.use(other):
        K2, M2 = _compute(kind, xy)
    # same formulas, different summation order: agreement to a few ulps of each element's
    # largest entry; rtol 1e-12 with an absolute floor of 1e-12 x that entry for the exact zeros
    for A, B in ((K, K2), (M, M2)):
        scale = np.abs(A).max(axis=(1, 2))[:, None, None]
        np.testing.assert_allclose(A / scale, B / scale, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kind", ["q4", "q4i", "t3", "frame"])
def test_element_matrix_properties(kind, backend):
    xy = GEN[kind](100, seed=5)
    K, M = _compute(kind, xy)
    scale = np.abs(K).max(axis=(1, 2))[:, None, None]
    assert np.all(np.abs(K - K.transpose(0, 2, 1)) <= 1e-12 * scale)  # symmetric to round-off
    np.testing.assert_allclose(M, M.transpose(0, 2, 1), rtol=0, atol=1e-14 * np.abs(M).max())  # ulps
    # rigid-body motions of each element produce no force
    nn = xy.shape[1]
    ndpn = 3 if kind == "frame" else 2
    R = np.zeros((len(xy), nn * ndpn, 3))
    R[:, 0::ndpn, 0] = 1.0
    R[:, 1::ndpn, 1] = 1.0
    R[:, 0::ndpn, 2] = -xy[:, :, 1]
    R[:, 1::ndpn, 2] = xy[:, :, 0]
    if kind == "frame":
        R[:, 2::ndpn, 2] = 1.0
    KR = np.einsum("eij,ejk->eik", K, R)
    size = np.abs(xy - xy.mean(axis=1, keepdims=True)).max(axis=(1, 2))[:, None, None]
    # exact in exact arithmetic; round-off of sums of O(|K| * coordinate) terms, coordinates up
    # to ~1 m from the origin, so 1e-11 |K| max(size, 1) leaves ~1e4 ulps of headroom
    assert np.all(np.abs(KR) <= 1e-11 * scale * np.maximum(size, 1.0))
    # mass: positive definite
    assert np.all(np.linalg.eigvalsh(M) > 0)
    # stiffness: exactly 3 zero eigenvalues per element (Q4 2x2 Gauss has no spurious modes):
    # the zero ones at round-off (< 1e-10 of the largest), the 4th well above (> 1e-8; the
    # smallest deformation mode of these elements, aspect ratios <= ~2, is ~1e-2 of the largest)
    lam = np.linalg.eigvalsh(K)
    top = lam[:, -1:]
    assert np.all(lam[:, 3] > 1e-8 * top[:, 0])
    assert np.all(np.abs(lam[:, :3]) < 1e-10 * top)


@pytest.mark.skipif(not HAVE_COMPILED, reason="compiled fe kernel not built")
@pytest.mark.parametrize("element", ["quad", "triangle"])
def test_assembled_matrices_identical(element, backend):
    mesh = rectangle(1.0, 0.3, 12, 5, element=element, angle=0.4)
    K, M, dm = mesh_matrices(mesh, MAT)
    other = "python" if backend == "compiled" else "compiled"
    with _backend.use(other):
        K2, M2, _ = mesh_matrices(mesh, MAT)
    for A, B in ((K, K2), (M, M2)):
        D = (A - B).tocoo()
        assert np.all(np.abs(D.data) <= 1e-12 * abs(A).max())  # same sums, round-off only
    # and both agree with the plain COO sum of the element matrices
    conn = mesh.elements()
    fn = elements.q4_matrices if element == "quad" else elements.t3_matrices
    Ke, Me = fn(mesh.points[conn], MAT)
    ed = element_dofs(conn, 2)
    for A, ref in ((K, assemble(ed, Ke, dm.n_dofs)), (M, assemble(ed, Me, dm.n_dofs))):
        assert np.all(np.abs((A - ref).data) <= 1e-12 * abs(ref).max())  # summation order only


@pytest.mark.parametrize("element", ["quad", "triangle", "line"])
def test_scatter_assembly_matches_coo_on_permuted_numbering(element, backend):
    """The node-graph CSR scatter equals the plain COO sum for any node numbering."""
    from fesub.errors import ModelError
    from fesub.fe.assembly import assemble_pair

    rng = np.random.default_rng(2)
    if element == "line":
        n, ndpn, k = 30, 3, 2
        conn = np.column_stack([np.arange(n - 1), np.arange(1, n)])
    else:
        mesh = rectangle(1.0, 0.5, 9, 4, element=element)
        conn, n, ndpn, k = mesh.elements(), mesh.n_points, 2, mesh.elements().shape[1]
    perm = rng.permutation(n)
    conn = perm[conn]
    nd = k * ndpn
    Ke = rng.normal(size=(len(conn), nd, nd))
    Me = rng.normal(size=(len(conn), nd, nd))
    K, M = assemble_pair(conn, n, ndpn, Ke, Me)
    ed = element_dofs(conn, ndpn)
    for A, E in ((K, Ke), (M, Me)):
        ref = assemble(ed, E, n * ndpn)
        # canonical CSR (it is flagged so): strictly increasing columns inside every row
        rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
        same_row = rows[1:] == rows[:-1]
        assert np.all(np.diff(A.indices)[same_row] > 0)
        assert abs(A - ref).max() <= 1e-13 * abs(ref).max()  # same sums, different order
    with pytest.raises(ModelError, match="outside"):
        assemble_pair(conn + n, n, ndpn, Ke, Me)
    with pytest.raises(ModelError, match="Me must have shape"):
        assemble_pair(conn, n, ndpn, Ke, Me[:, :-1])
