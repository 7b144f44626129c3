"""Patch tests, rigid-body modes and mass conservation of the element library.

Independent references: a linear displacement field is an exact solution of plane elasticity
without body forces; its constant stress integrated along the boundary gives the exact nodal
reactions (consistent edge loads); rigid-body motions are known in closed form; the total mass is
rho * area * thickness.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sla
import scipy.sparse as sp

from fesub.fe import BeamSection, Mesh, PlaneStress, mesh_matrices, rectangle, solve_static
from fesub.fe.mesh import signed_areas

E, NU, RHO, T = 210e9, 0.3, 7800.0, 0.05
MAT = PlaneStress(E, NU, RHO, T)
# linear field u = a0 + a1 x + a2 y, v = b0 + b1 x + b2 y (m); strains exx = a1, eyy = b2, gxy = a2 + b1
A = np.array([1.0e-3, 2.0e-3, -1.5e-3])
B = np.array([-0.5e-3, 0.7e-3, 1.2e-3])
EPS = np.array([A[1], B[2], A[2] + B[1]])


def distorted_mesh(element: str, seed: int = 1) -> Mesh:
    """A 2 m x 1 m patch with interior nodes moved randomly by up to 30 % of the spacing."""
    nx, ny = 5, 4
    mesh = rectangle(2.0, 1.0, nx, ny, element=element)
    rng = np.random.default_rng(seed)
    boundary = np.unique(np.concatenate([mesh.nodes(s) for s in ("left", "right", "top", "bottom")]))
    interior = np.setdiff1d(np.arange(mesh.n_points), boundary)
    pts = mesh.points.copy()
    pts[interior] += rng.uniform(-0.3, 0.3, (interior.size, 2)) * [2.0 / nx, 1.0 / ny]
    # boundary nodes slide along their (straight) edges
    # boundary nodes other than the corners slide along their (straight) edges
    for s, axis, h in (("bottom", 0, 2.0 / nx), ("top", 0, 2.0 / nx),
                       ("left", 1, 1.0 / ny), ("right", 1, 1.0 / ny)):
        inner = mesh.nodes(s)
        inner = inner[(pts[inner, axis] > 1e-9) & (pts[inner, axis] < pts[:, axis].max() - 1e-9)]
        pts[inner, axis] += rng.uniform(-0.25, 0.25, inner.size) * h
    m = Mesh(pts, mesh.cells, mesh.node_sets, mesh.edge_sets)
    m.check()
    conn = m.elements()
    areas = signed_areas(m.points, conn)
    assert np.ptp(areas) > 0.05 * areas.mean()  # really distorted
    return m


def linear_field(pts):
    x, y = pts[:, 0], pts[:, 1]
    return np.column_stack([A[0] + A[1] * x + A[2] * y, B[0] + B[1] * x + B[2] * y])


def boundary_nodes(mesh):
    return np.unique(np.concatenate([mesh.nodes(s) for s in ("left", "right", "top", "bottom")]))


def element_strains(mesh, u):
    """Strains (exx, eyy, gxy) at sample points inside every element, from nodal displacements.

    Written independently of the element kernels: bilinear (Q4) or linear (T3) interpolation,
    derivatives through the isoparametric Jacobian.
    """
    conn = mesh.elements()
    xy = mesh.points[conn]
    ue = u[conn]  # (ne, k, 2)
    out = []
    if conn.shape[1] == 4:
        XI = np.array([-1, 1, 1, -1.0])
        ETA = np.array([-1, -1, 1, 1.0])
        for xi, eta in [(0, 0), (-0.7, -0.5), (0.6, -0.8), (0.5, 0.9), (-0.9, 0.3)]:
            dxi = 0.25 * XI * (1 + eta * ETA)
            deta = 0.25 * ETA * (1 + xi * XI)
            J = np.stack([np.stack([xy[..., 0] @ dxi, xy[..., 1] @ dxi], -1),
                          np.stack([xy[..., 0] @ deta, xy[..., 1] @ deta], -1)], 1)
            G = np.linalg.solve(J, np.broadcast_to(np.stack([dxi, deta]), J.shape[:1] + (2, 4)))
            du = np.einsum("eak,eia->eki", ue, G)  # du[e, comp, dir]
            out.append(np.stack([du[:, 0, 0], du[:, 1, 1], du[:, 0, 1] + du[:, 1, 0]], 1))
    else:
        for e in range(len(conn)):
            P = np.column_stack([np.ones(3), xy[e]])
            coef = np.linalg.solve(P, ue[e])  # rows: const, d/dx, d/dy
            out.append(np.array([[coef[1, 0], coef[2, 1], coef[2, 0] + coef[1, 1]]]))
        out = [np.vstack(out)]
    return np.stack(out)  # (n_points, ne, 3)


def consistent_edge_forces(mesh, sigma):
    """Nodal forces (N) of the constant stress ``sigma`` (sxx, syy, sxy) on the boundary edges."""
    S = np.array([[sigma[0], sigma[2]], [sigma[2], sigma[1]]])
    f = np.zeros((mesh.n_points, 2))
    centre = mesh.points.mean(axis=0)
    for s in ("left", "right", "top", "bottom"):
        for a, b in mesh.edges(s):
            d = mesh.points[b] - mesh.points[a]
            n = np.array([d[1], -d[0]])
            mid = 0.5 * (mesh.points[a] + mesh.points[b])
            if n @ (mid - centre) < 0:
                n = -n
            n /= np.linalg.norm(n)
            t = S @ n * np.linalg.norm(d) * T
            f[a] += 0.5 * t
            f[b] += 0.5 * t
    return f


CASES = [("quad", True), ("quad", False), ("triangle", False)]


@pytest.mark.parametrize("element, incompatible", CASES)
def test_patch_test_constant_strain(element, incompatible, backend):
    mesh = distorted_mesh(element)
    K, M, dm = mesh_matrices(mesh, MAT, incompatible=incompatible)
    exact = linear_field(mesh.points)
    bn = boundary_nodes(mesh)
    bd = dm.dofs(bn)
    u = solve_static(K, np.zeros(dm.n_dofs), dict(zip(bd.tolist(), exact[bn].ravel().tolist())))
    u = u.reshape(-1, 2)
    scale = np.abs(exact).max()
    interior = np.setdiff1d(np.arange(mesh.n_points), bn)
    assert interior.size >= 12
    # 1e-10 relative: the patch test is exact, so only round-off (cond(K) ~ 1e3-1e4) remains
    np.testing.assert_allclose(u[interior], exact[interior], rtol=0, atol=1e-10 * scale)
    eps = element_strains(mesh, u)
    np.testing.assert_allclose(eps, np.broadcast_to(EPS, eps.shape), rtol=0, atol=1e-10 * np.abs(EPS).max())
    # reactions at the boundary nodes equal the consistent loads of the exact constant stress
    sigma = MAT.D @ EPS
    r = (K @ u.ravel()).reshape(-1, 2)
    f_ref = consistent_edge_forces(mesh, sigma)
    fscale = np.abs(f_ref).max()
    # K u sums terms ~|K||u| that cancel to the reactions: 1e-9 of the load scale covers it
    np.testing.assert_allclose(r, f_ref, rtol=0, atol=1e-9 * fscale)


def _rigid_modes_plane(pts):
    n = len(pts)
    R = np.zeros((2 * n, 3))
    R[0::2, 0] = 1.0
    R[1::2, 1] = 1.0
    R[0::2, 2] = -pts[:, 1]
    R[1::2, 2] = pts[:, 0]
    return R


def _bent_frame():
    pts = np.array([[0.0, 0.0], [0.6, 0.1], [1.0, 0.7], [1.5, 0.9]])
    return Mesh(pts, {"line": np.array([[0, 1], [1, 2], [2, 3]])})


@pytest.mark.parametrize("kind", ["quad", "quad-plain", "triangle", "frame"])
def test_free_body_has_exactly_three_rigid_body_modes(kind, backend):
    if kind == "frame":
        mesh = _bent_frame()
        K, M, dm = mesh_matrices(mesh, BeamSection.rectangle(E, RHO, 0.02, 0.05))
        n = mesh.n_points
        R = np.zeros((3 * n, 3))
        R[0::3, 0] = 1.0
        R[1::3, 1] = 1.0
        R[0::3, 2] = -mesh.points[:, 1]
        R[1::3, 2] = mesh.points[:, 0]
        R[2::3, 2] = 1.0
    else:
        mesh = distorted_mesh("triangle" if kind == "triangle" else "quad", seed=3)
        K, M, dm = mesh_matrices(mesh, MAT, incompatible=(kind == "quad"))
        R = _rigid_modes_plane(mesh.points)
    Kd = K.toarray()
    # rigid motions produce no forces (relative to the force scale of a unit strain, K ~ |K| * L)
    assert np.abs(Kd @ R).max() < 1e-10 * np.abs(Kd).max()
    lam = sla.eigh(Kd, M.toarray(), eigvals_only=True)
    # exactly three zero eigenvalues: round-off gives |lam| ~ 1e-12 of the largest, the fourth
    # (first elastic) one is many orders of magnitude above
    assert np.all(np.abs(lam[:3]) < 1e-9 * lam[-1])
    assert lam[3] > 1e-6 * lam[-1]
    assert lam[3] > 1e6 * np.abs(lam[:3]).max()


@pytest.mark.parametrize("element, lumped", [("quad", False), ("quad", True),
                                             ("triangle", False), ("triangle", True)])
def test_mass_sums_to_rho_area_thickness(element, lumped, backend):
    mesh = distorted_mesh(element, seed=5)
    K, M, dm = mesh_matrices(mesh, MAT, lumped=lumped)
    total = RHO * 2.0 * 1.0 * T  # the distorted mesh still covers the 2 m x 1 m rectangle
    ex = np.zeros(dm.n_dofs)
    ex[0::2] = 1.0
    ey = np.zeros(dm.n_dofs)
    ey[1::2] = 1.0
    # 1e-12: a sum of positive terms, exact up to round-off
    np.testing.assert_allclose(ex @ (M @ ex), total, rtol=1e-12)
    np.testing.assert_allclose(ey @ (M @ ey), total, rtol=1e-12)
    assert abs(ex @ (M @ ey)) < 1e-12 * total  # no coupling between the directions
    if lumped:
        assert (M - sp.diags(M.diagonal())).count_nonzero() == 0
        assert np.all(M.diagonal() > 0)


@pytest.mark.parametrize("lumped", [False, True])
def test_frame_mass_per_direction(lumped, backend):
    mesh = _bent_frame()
    sec = BeamSection.rectangle(E, RHO, 0.02, 0.05)
    K, M, dm = mesh_matrices(mesh, sec, lumped=lumped)
    length = np.linalg.norm(np.diff(mesh.points, axis=0), axis=1).sum()
    total = RHO * sec.area * length
    for c in (0, 1):
        e = np.zeros(dm.n_dofs)
        e[c::3] = 1.0
        np.testing.assert_allclose(e @ (M @ e), total, rtol=1e-12)  # exact up to round-off
    # rotary inertia of the whole frame about the origin: rigid rotation r = (-y, x, 1)
    R = np.zeros(dm.n_dofs)
    R[0::3] = -mesh.points[:, 1]
    R[1::3] = mesh.points[:, 0]
    R[2::3] = 1.0
    if not lumped:
        # consistent mass: exact kinetic energy of the rigid rotation of the slender segments,
        # J = rho A sum_e (L_e^3 / 12 + L_e |c_e|^2) (Hermite/linear fields are exact for it)
        P = mesh.points
        J = sum(RHO * sec.area * (np.linalg.norm(P[b] - P[a]) ** 3 / 12
                                  + np.linalg.norm(P[b] - P[a]) * np.sum((0.5 * (P[a] + P[b])) ** 2))
                for a, b in mesh.elements())
        np.testing.assert_allclose(R @ (M @ R), J, rtol=1e-12)


def test_static_solve_bad_input():
    from fesub.errors import MeshError, ModelError
    from fesub.fe import elements

    mesh = rectangle(1.0, 1.0, 2, 2)
    K, M, dm = mesh_matrices(mesh, MAT)
    with pytest.raises(ModelError, match="load vector f must have 18"):
        solve_static(K, np.zeros(5))
    with pytest.raises(ModelError, match="prescribed DOFs must lie in 0..17"):
        solve_static(K, np.zeros(dm.n_dofs), {99: 0.0})
    # no supports at all: a mechanism, not a NaN field
    with pytest.raises(ModelError, match="mechanism"):
        solve_static(K, np.ones(dm.n_dofs))
    # one support only (rotation about it still free): also a mechanism
    with pytest.raises(ModelError, match="mechanism"):
        solve_static(K, np.ones(dm.n_dofs), {0: 0.0, 1: 0.0})
    # re-entrant quadrilateral (positive signed area, but corner 2 points inwards)
    xy = np.array([[[0.0, 0.0], [2.0, 0.0], [0.6, 0.6], [0.0, 2.0]]])
    with pytest.raises(MeshError, match="Q4 element 0 is not convex"):
        elements.q4_matrices(xy, MAT)


def test_inverted_and_bow_tie_quads_rejected():
    from fesub.errors import MeshError
    from fesub.fe import elements

    good = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    xy = np.stack([good, good[::-1]])  # second one clockwise
    with pytest.raises(MeshError, match="Q4 element 1 is inverted"):
        elements.q4_matrices(xy, MAT)
    bow = good[[0, 1, 3, 2]]  # self-intersecting
    with pytest.raises(MeshError, match="Q4 element 0 is"):
        elements.q4_matrices(bow[None], MAT)
    elements.q4_matrices(good[None], MAT)  # and a valid one passes
