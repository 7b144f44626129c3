"""Quadratic plane elements (Q8, Q9, T6), plane strain, mixed meshes and edge loads.

Independent references: polynomial displacement fields that are exact elasticity solutions (with a
constant body force for a general quadratic field) and lie in the element's space, so that the
Galerkin solution must equal them; the plane-strain / plane-stress equivalence E* = E / (1 - nu^2),
nu* = nu / (1 - nu); Timoshenko and Goodier's elasticity solution of the end-loaded cantilever; Lame's
thick cylinder; the resultant of a uniform pressure; element matrices of scikit-fem.
"""

from __future__ import annotations

import numpy as np
import pytest

from fesub.errors import MeshError, ModelError
from fesub.fe import Mesh, PlaneStrain, PlaneStress, mesh_matrices, read, rectangle, solve_static
from fesub.fe.loads import boundary_faces, edge_load
from fesub.fe.materials import plane_strain_D
from fesub.fe.quadratic import (gauss_rule, q8_matrices, q9_matrices, quadratic_mesh, shape_functions,
                                t6_matrices)

E, NU, RHO, T = 210e9, 0.3, 7800.0, 0.05
STRESS = PlaneStress(E, NU, RHO, T)
STRAIN = PlaneStrain(E, NU, RHO, T)
KINDS = ("quad8", "quad9", "triangle6")
SIDES = ("left", "right", "top", "bottom")


# ---------------------------------------------------------------------------- meshes
def build(kind: str, nx: int, ny: int, *, length=2.0, height=1.0, origin=(0.0, 0.0)) -> Mesh:
    """Structured mesh of ``kind`` (quad, triangle, quad8, quad9, triangle6)."""
    return rectangle(length, height, nx, ny, origin=origin, element=kind)


def distorted(kind: str, *, curved: bool, seed: int = 3) -> Mesh:
    """A 2 m x 1 m patch: interior corner nodes moved by up to 25 % of the spacing (straight-sided
    cells, mid-nodes at mid-edge), and with ``curved`` the interior mid-edge nodes moved too."""
    nx, ny = 4, 3
    lin = rectangle(2.0, 1.0, nx, ny, element="triangle" if "tri" in kind else "quad")
    rng = np.random.default_rng(seed)
    bnd = np.unique(np.concatenate([lin.nodes(s) for s in SIDES]))
    inner = np.setdiff1d(np.arange(lin.n_points), bnd)
    pts = lin.points.copy()
    pts[inner] += rng.uniform(-0.25, 0.25, (inner.size, 2)) * [2.0 / nx, 1.0 / ny]
    lin = Mesh(pts, lin.cells, lin.node_sets, lin.edge_sets)
    if kind in ("quad", "triangle"):
        return lin.check()
    m = quadratic_mesh(lin, quad=kind if kind.startswith("quad") else "quad8")
    if curved:
        qb = np.unique(np.concatenate([m.nodes(s) for s in SIDES]))
        mids = np.setdiff1d(np.arange(lin.n_points, m.n_points), qb)
        m.points[mids] += rng.uniform(-0.06, 0.06, (mids.size, 2)) * [2.0 / nx, 1.0 / ny]
    return m.check()


def boundary(mesh):
    return np.unique(np.concatenate([mesh.nodes(s) for s in SIDES]))


# ---------------------------------------------------------------------------- polynomial fields
def field(c, pts):
    """u = a . [1, x, y, x^2, xy, y^2], v = b . [...] for c = (a, b), (6,) each (m)."""
    x, y = pts[:, 0], pts[:, 1]
    mono = np.column_stack([np.ones_like(x), x, y, x * x, x * y, y * y])
    return np.column_stack([mono @ c[0], mono @ c[1]])


def body_force(c, D):
    """Constant body force (N/m^3) that balances the (linear) stress of the quadratic field c."""
    a, b = c
    dsdx = D @ [2 * a[3], b[4], a[4] + 2 * b[3]]  # d(sxx, syy, sxy)/dx
    dsdy = D @ [a[4], 2 * b[5], 2 * a[5] + b[4]]
    return -np.array([dsdx[0] + dsdy[2], dsdx[2] + dsdy[1]])


def dirichlet_patch(mesh, mat, c):
    """Solve with the field c prescribed on the boundary and its body force inside; return the
    largest nodal error relative to the largest displacement."""
    K, M, dm = mesh_matrices(mesh, mat)
    exact = field(c, mesh.points)
    bnd = boundary(mesh)
    dofs = dm.dofs(bnd)
    pre = dict(zip(dofs.tolist(), exact[bnd].ravel().tolist()))
    # consistent body force: the constant field lies in every element's space, so (M / rho) b
    # integrates int N b t dA exactly
    f = (M / mat.rho) @ np.tile(body_force(c, mat.D), mesh.n_points)
    u = solve_static(K, f, pre).reshape(-1, 2)
    return np.abs(u - exact).max() / np.abs(exact).max()


LINEAR = (np.array([1e-3, 2e-3, -1.5e-3, 0, 0, 0]), np.array([-5e-4, 7e-4, 1.2e-3, 0, 0, 0]))
QUADRATIC = (np.array([1e-3, 2e-3, -1.5e-3, 8e-4, -6e-4, 5e-4]),
             np.array([-5e-4, 7e-4, 1.2e-3, -4e-4, 9e-4, 3e-4]))


@pytest.mark.parametrize("kind", ["quad", "triangle", "quad8", "quad9", "triangle6"])
@pytest.mark.parametrize("mat", [STRESS, STRAIN], ids=["stress", "strain"])
def test_linear_patch(kind, mat):
    # a linear field is exact (no body force) and in every isoparametric space, curved or not:
    # the error is round-off of a solve with condition ~1e4 (1e-10 leaves a 1e2 margin over eps K)
    mesh = distorted(kind, curved=kind not in ("quad", "triangle"))
    assert dirichlet_patch(mesh, mat, LINEAR) < 1e-10


def test_linear_patch_plain_q4_plane_strain():
    mesh = distorted("quad", curved=False)
    K, M, dm = mesh_matrices(mesh, STRAIN, incompatible=False)
    exact = field(LINEAR, mesh.points)
    bnd = boundary(mesh)
    u = solve_static(K, np.zeros(dm.n_dofs), dict(zip(dm.dofs(bnd).tolist(), exact[bnd].ravel().tolist())))
    assert np.abs(u.reshape(-1, 2) - exact).max() < 1e-10 * np.abs(exact).max()


@pytest.mark.parametrize("kind", ["quad9", "triangle6"])
def test_complete_quadratic_on_straight_sided_cells(kind):
    # Q9 holds every polynomial of degree <= 2 in (xi, eta) separately, so on a bilinear map
    # (straight edges, mid-nodes mid-edge) all quadratics in (x, y); T6 on an affine map holds
    # them too. The field with its body force is then reproduced to round-off.
    assert dirichlet_patch(distorted(kind, curved=False), STRESS, QUADRATIC) < 1e-10
    assert dirichlet_patch(distorted(kind, curved=False), STRAIN, QUADRATIC) < 1e-10


def test_q8_quadratics_only_on_parallelograms():
    # serendipity Q8 holds x^2, xy, y^2 on affine (parallelogram) maps only (its space lacks
    # xi^2 eta^2); on a sheared parallelogram mesh the field is exact, on a distorted one it is not
    shear = rectangle(2.0, 1.0, 4, 3)
    shear.points[:, 0] += 0.3 * shear.points[:, 1]
    assert dirichlet_patch(quadratic_mesh(shear), STRESS, QUADRATIC) < 1e-10
    err = dirichlet_patch(distorted("quad8", curved=False), STRESS, QUADRATIC)
    assert err > 1e-5  # a real interpolation error, five orders above round-off


def test_neumann_patch_with_edge_loads():
    # constant stress: the edge loads of sigma . n on the four sides and three supports against
    # rigid motion give the linear field of that stress (curved interior cells)
    eps = np.array([LINEAR[0][1], LINEAR[1][2], LINEAR[0][2] + LINEAR[1][1]])
    for kind in KINDS:
        mesh = distorted(kind, curved=True)
        K, M, dm = mesh_matrices(mesh, STRAIN)
        sxx, syy, sxy = STRAIN.D @ eps
        f = sum(edge_load(mesh, s, force_per_length=np.array(q) * T)
                for s, q in (("left", (-sxx, -sxy)), ("right", (sxx, sxy)),
                             ("bottom", (-sxy, -syy)), ("top", (sxy, syy))))
        exact = field(LINEAR, mesh.points)
        a, b = mesh.node("bottom_left"), mesh.node("bottom_right")
        pre = {2 * a: exact[a, 0], 2 * a + 1: exact[a, 1], 2 * b + 1: exact[b, 1]}
        u = solve_static(K, f, pre).reshape(-1, 2)
        assert np.abs(u - exact).max() < 1e-9 * np.abs(exact).max()


# ---------------------------------------------------------------------------- plane strain
def test_plane_strain_matrix_is_lame():
    lam = E * NU / ((1 + NU) * (1 - 2 * NU))
    mu = E / (2 * (1 + NU))
    ref = np.array([[lam + 2 * mu, lam, 0], [lam, lam + 2 * mu, 0], [0, 0, mu]])
    np.testing.assert_allclose(plane_strain_D(E, NU), ref, rtol=1e-14)  # two algebraic forms


@pytest.mark.parametrize("kind", ["quad", "triangle", "quad8", "quad9", "triangle6"])
def test_plane_strain_equals_plane_stress_of_modified_constants(kind):
    mesh = build(kind, 8, 2, length=4.0, height=1.0)
    star = PlaneStress(E / (1 - NU**2), NU / (1 - NU), RHO, T)
    us = []
    for mat in (STRAIN, star):
        K, M, dm = mesh_matrices(mesh, mat)
        f = edge_load(mesh, "right", force_per_length=[0.0, -1e4])
        pre = {d: 0.0 for d in dm.dofs(mesh.nodes("left"))}
        us.append(solve_static(K, f, pre))
    # the two D matrices agree to a few ulps; the solves (condition ~1e5) to ~1e-12
    np.testing.assert_allclose(us[0], us[1], rtol=0, atol=1e-11 * np.abs(us[1]).max())


# ---------------------------------------------------------------------------- cantilever
# Timoshenko and Goodier's plane-stress cantilever: length L, depth H, end shear P (N, upward) as
# a parabolic traction at x = L; x from the support, y from the mid-line. The exact displacements
# are prescribed at x = 0 (the support of the exact solution), the exact traction at x = L.
L_C, H_C, P_C = 4.0, 1.0, 1e4
I_C = T * H_C**3 / 12


def cantilever_exact(p):
    x, y = p[:, 0], p[:, 1]
    c = P_C / (6 * E * I_C)
    ux = -c * y * ((6 * L_C - 3 * x) * x + (2 + NU) * (y**2 - H_C**2 / 4))
    uy = c * (3 * NU * y**2 * (L_C - x) + (4 + 5 * NU) * H_C**2 * x / 4 + (3 * L_C - x) * x**2)
    return np.column_stack([ux, uy])


V_TIP = P_C * L_C**3 / (3 * E * I_C) + P_C * (4 + 5 * NU) * H_C**2 * L_C / (24 * E * I_C)


def test_cantilever_reference_is_an_elasticity_solution():
    # the reference's strains (central differences, h = 1e-4 m: truncation ~1e-8 relative) are
    # those of sxx = -P (L - x) y / I, syy = 0, sxy = P (H^2/4 - y^2) / (2 I), which satisfy
    # equilibrium without body force; its tip deflection is V_TIP
    rng = np.random.default_rng(0)
    p = np.column_stack([rng.uniform(0, L_C, 20), rng.uniform(-H_C / 2, H_C / 2, 20)])
    h = 1e-4
    dx = (cantilever_exact(p + [h, 0]) - cantilever_exact(p - [h, 0])) / (2 * h)
    dy = (cantilever_exact(p + [0, h]) - cantilever_exact(p - [0, h])) / (2 * h)
    eps = np.column_stack([dx[:, 0], dy[:, 1], dx[:, 1] + dy[:, 0]])
    x, y = p[:, 0], p[:, 1]
    sig = np.column_stack([-P_C * (L_C - x) * y / I_C, 0 * x, P_C * (H_C**2 / 4 - y**2) / (2 * I_C)])
    scale = np.abs(sig).max()
    np.testing.assert_allclose(eps @ STRESS.D.T, sig, rtol=0, atol=1e-7 * scale)
    np.testing.assert_allclose(cantilever_exact(np.array([[L_C, 0.0]]))[0, 1], V_TIP, rtol=1e-14)


def cantilever_tip_error(kind, nx, ny, *, incompatible=False):
    mesh = build(kind, nx, ny, length=L_C, height=H_C, origin=(0.0, -H_C / 2))
    K, M, dm = mesh_matrices(mesh, STRESS, incompatible=incompatible)
    left = mesh.nodes("left")
    pre = dict(zip(dm.dofs(left).tolist(), cantilever_exact(mesh.points[left]).ravel().tolist()))
    shear = lambda x: np.column_stack([0 * x[:, 0], P_C / (2 * I_C) * (H_C**2 / 4 - x[:, 1]**2) * T])  # noqa: E731
    u = solve_static(K, edge_load(mesh, "right", force_per_length=shear), pre).reshape(-1, 2)
    return dm.n_dofs, abs(u[mesh.nearest_node((L_C, 0.0)), 1] - V_TIP) / V_TIP


def test_cantilever_convergence_rates_and_q4_at_equal_dofs():
    # quadratic cells on (4n x n) meshes, Q4 on (8n x 2n): Q9, T6 and Q4 then have the same nodes
    # (Q8 fewer). Measured tip errors (n = 1, 2, 4, 8): Q8 9.0e-4 .. 6.5e-7 (rate ~3.5),
    # Q9 8.3e-4 .. 1.1e-6 (~3.3), T6 5.2e-3 .. 2.8e-6 (~3.7), plain Q4 0.10 .. 1.8e-3 (2.0),
    # Q4 with incompatible modes 2.4e-3 .. 3.8e-5 (2.0). Theory: a displacement converges as h^3
    # (quadratic) and h^2 (bilinear) at least, and up to h^4 at nodes of smooth solutions.
    ns = (1, 2, 4, 8)
    q4 = [cantilever_tip_error("quad", 8 * n, 2 * n) for n in ns]
    rate = lambda e: np.log2(e[-2] / e[-1])  # noqa: E731 - rate over the last halving of h
    assert 1.9 < rate([e for _, e in q4]) < 2.1
    for kind in KINDS:
        res = [cantilever_tip_error(kind, 4 * n, n) for n in ns]
        errs = [e for _, e in res]
        assert np.all(np.diff(np.log(errs)) < 0)
        assert rate(errs) > 3.0, (kind, errs)
        for (nd, e), (nd4, e4) in zip(res, q4):
            assert nd <= nd4 and e < e4 / 20, (kind, nd, e, e4)  # > 20x better, no more DOFs
    # at equal DOFs the quadratic cells also beat Q4 with incompatible modes from n = 2 on
    q4i = [cantilever_tip_error("quad", 8 * n, 2 * n, incompatible=True)[1] for n in ns[1:]]
    q9 = [cantilever_tip_error("quad9", 4 * n, n)[1] for n in ns[1:]]
    assert all(a < b / 3 for a, b in zip(q9, q4i))


# ---------------------------------------------------------------------------- edge loads
def loaded(f):
    """Nodes with a non-zero force and their (fx, fy) (N)."""
    F = f.reshape(-1, 2)
    idx = np.flatnonzero(np.abs(F).sum(axis=1) > 0)
    return idx, F[idx]


@pytest.mark.parametrize("kind", ["quad", "triangle"] + list(KINDS))
def test_uniform_pressure_split_and_resultant(kind):
    # one cell edge of length 0.5 m on a rotated top side: p L t in total along -n, split
    # 1/2-1/2 on a linear edge and 1/6-2/3-1/6 on a quadratic one (integrals of the edge's
    # shape functions); all to round-off
    ang, p = 0.4, 2.5e5
    base = rectangle(0.5, 0.3, 1, 1, angle=ang, element="triangle" if "tri" in kind else "quad")
    mesh = base if kind in ("quad", "triangle") else quadratic_mesh(base, quad=kind if kind.startswith("quad") else "quad8")
    f = edge_load(mesh, "top", pressure=p, thickness=T)
    n_out = np.array([-np.sin(ang), np.cos(ang)])
    idx, F = loaded(f)
    np.testing.assert_allclose(F.sum(axis=0), -p * 0.5 * T * n_out, rtol=1e-14, atol=1e-9)
    share = F @ -n_out / (p * 0.5 * T)
    corners = np.isin(idx, base.nodes("top"))
    np.testing.assert_allclose(share[corners], 0.5 if kind in ("quad", "triangle") else 1 / 6, rtol=1e-13)
    if kind not in ("quad", "triangle"):
        np.testing.assert_allclose(share[~corners], 2 / 3, rtol=1e-13)
    assert np.allclose(F @ [np.cos(ang), np.sin(ang)], 0, atol=1e-9)  # no tangential part


def test_linear_load_on_linear_edges_and_node_set_selection():
    # a load rising linearly along x: per edge of length h, f1 = h (2 q1 + q2) / 6 and
    # f2 = h (q1 + 2 q2) / 6 (closed form); the node set 'top' selects the same edges
    mesh = rectangle(2.0, 1.0, 4, 2)
    q = lambda x: np.column_stack([0 * x[:, 0], 1e3 * (1 + x[:, 0])])  # noqa: E731
    f = edge_load(mesh, "top", force_per_length=q)
    xs = np.linspace(0, 2, 5)
    ref = np.zeros(5)
    qn = 1e3 * (1 + xs)
    ref[:-1] += 0.5 * (2 * qn[:-1] + qn[1:]) / 6
    ref[1:] += 0.5 * (qn[:-1] + 2 * qn[1:]) / 6
    np.testing.assert_allclose(f.reshape(-1, 2)[mesh.nodes("top"), 1], ref, rtol=1e-14)
    mesh.edge_sets.pop("top")
    np.testing.assert_array_equal(edge_load(mesh, "top", force_per_length=q), f)


def test_pressure_on_curved_edge_has_the_chord_resultant():
    # int p n ds along any curve is p times the chord turned by 90 degrees: on the quarter arc
    # r = 1 (isoparametric quadratic arcs) the push outward is p t (1, 1) exactly, and the nodal
    # forces are symmetric about 45 degrees
    mesh = quarter_annulus(2, 5)
    f = edge_load(mesh, "left", pressure=3e6, thickness=T)
    idx, F = loaded(f)
    np.testing.assert_allclose(F.sum(axis=0), 3e6 * T * np.array([1.0, 1.0]), rtol=1e-13)
    order = np.argsort(np.arctan2(mesh.points[idx, 1], mesh.points[idx, 0]))
    # the mirror about y = x maps the node at angle theta to that at 90 deg - theta, (fx, fy) to (fy, fx)
    np.testing.assert_allclose(F[order], F[order[::-1]][:, ::-1], rtol=0, atol=1e-12 * np.abs(F).max())


def test_edge_load_errors():
    mesh = quadratic_mesh(rectangle(2.0, 1.0, 2, 2))
    with pytest.raises(ModelError, match="exactly one"):
        edge_load(mesh, "top")
    with pytest.raises(MeshError, match="not the corners"):
        edge_load(mesh, np.array([[0, 4]]), pressure=1.0)
    inner = np.array([[1, 4]])  # the vertical edge in the middle of the bottom row
    with pytest.raises(ModelError, match="boundary"):
        edge_load(mesh, inner, pressure=1.0)
    f = edge_load(mesh, inner, force_per_length=[2.0, 0.0])  # a line load inside is allowed
    np.testing.assert_allclose(f.sum(), 2.0 * 0.5, rtol=1e-14)
    with pytest.raises(ModelError, match="thickness"):
        edge_load(mesh, "top", pressure=1.0, thickness=0.0)
    with pytest.raises(ModelError, match="pressure"):
        edge_load(mesh, "top", pressure=lambda x: np.full(3, np.nan))
    assert sum(len(f) for f in boundary_faces(mesh).values()) == 8


# ---------------------------------------------------------------------------- Lame cylinder
def quarter_annulus(nr, nt, *, inner=1.0, outer=2.0, quad="quad8"):
    """Quarter of a ring of quadratic cells: a (r, theta) rectangle mapped to (x, y), so that the
    mid-edge nodes lie on the arcs. Sets: left (r = inner), right (outer), bottom (y = 0), top
    (x = 0)."""
    m = quadratic_mesh(rectangle(outer - inner, np.pi / 2, nr, nt, origin=(inner, 0.0)), quad=quad)
    r, th = m.points[:, 0].copy(), m.points[:, 1].copy()
    m.points[:] = np.column_stack([r * np.cos(th), r * np.sin(th)])
    return m.check()


def test_lame_cylinder_plane_strain():
    # thick cylinder a = 1 m, b = 2 m, internal pressure p, plane strain:
    # u_r = (1 + nu) / E p a^2 / (b^2 - a^2) ((1 - 2 nu) r + b^2 / r). Measured largest nodal error
    # of u_r relative to u_r(a), Q8 (n x 2n) meshes n = 1, 2, 4, 8, 16:
    # 9.2e-3, 9.5e-4, 7.3e-5, 4.9e-6, 3.1e-7 (rate -> 3.96, nodal superconvergence)
    a, b, p = 1.0, 2.0, 50e6

    def ur_exact(r):
        return (1 + NU) / E * p * a**2 / (b**2 - a**2) * ((1 - 2 * NU) * r + b**2 / r)

    errs = []
    for n in (2, 4, 8):
        m = quarter_annulus(n, 2 * n, inner=a, outer=b)
        K, M, dm = mesh_matrices(m, STRAIN)
        pre = {d: 0.0 for d in dm.dofs(m.nodes("bottom"), "y")}
        pre.update({d: 0.0 for d in dm.dofs(m.nodes("top"), "x")})
        u = solve_static(K, edge_load(m, "left", pressure=p, thickness=T), pre).reshape(-1, 2)
        r = np.hypot(*m.points.T)
        ur = np.einsum("ij,ij->i", u, m.points) / r
        ut = (u[:, 1] * m.points[:, 0] - u[:, 0] * m.points[:, 1]) / r
        assert np.abs(ut).max() < 1e-10 * ur_exact(a)  # every ring of cells alike: no swirl
        errs.append(np.abs(ur - ur_exact(r)).max() / ur_exact(a))
    assert errs[0] < 1e-3 and errs[-1] < 1e-5
    assert np.log2(errs[-2] / errs[-1]) > 3.5  # measured 3.9


# ---------------------------------------------------------------------------- scikit-fem
QUAD_XY = np.array([[0.1, 0.0], [2.0, 0.3], [2.3, 1.7], [-0.2, 1.2]])  # a general convex quad (m)
TRI_XY = np.array([[0.1, 0.0], [2.0, 0.3], [0.5, 1.7]])


def skfem_element(kind, mat):
    """Stiffness and mass of one straight-sided cell from scikit-fem, in fesub's DOF order.

    Q8 and Q9 on scikit-fem's bilinear quad map (which fesub's isoparametric map reproduces when
    the mid-nodes sit mid-edge) with its 3-point Gauss product rule (intorder 5); T6 on the
    affine triangle (every rule of degree >= 4 is exact). Plane strain through scikit-fem's own
    linear_elasticity form (3D Lame constants); plane stress through its modified lambda.
    """
    skfem = pytest.importorskip("skfem")
    from skfem.helpers import dot
    from skfem.models.elasticity import lame_parameters, linear_elasticity

    if kind == "triangle6":
        corners, mesh = TRI_XY, skfem.MeshTri(TRI_XY.T.copy(), np.array([[0, 1, 2]]).T)
        elem, order = skfem.ElementTriP2(), 4
    else:
        corners, mesh = QUAD_XY, skfem.MeshQuad(QUAD_XY.T.copy(), np.array([[0, 1, 2, 3]]).T)
        elem, order = (skfem.ElementQuadS2() if kind == "quad8" else skfem.ElementQuad2()), 5
    basis = skfem.Basis(mesh, skfem.ElementVector(elem), intorder=order)
    lam, mu = lame_parameters(mat.E, mat.nu)
    if not isinstance(mat, PlaneStrain):
        lam = 2 * lam * mu / (lam + 2 * mu)
    K = skfem.asm(linear_elasticity(lam, mu), basis).toarray() * mat.thickness
    M = skfem.asm(skfem.BilinearForm(lambda u, v, w: mat.rho * mat.thickness * dot(u, v)), basis).toarray()
    # fesub's nodes: corners, mid-edges (corner order), centre; scikit-fem's DOFs by location
    ncorner = len(corners)
    nodes = [*corners, *(0.5 * (corners + np.roll(corners, -1, axis=0)))]
    if kind == "quad9":
        nodes.append(np.mean(corners, axis=0))
    nodes = np.array(nodes)
    comp = np.empty(basis.N, int)
    for dofs in (basis.nodal_dofs, basis.facet_dofs, getattr(basis, "interior_dofs", np.zeros((0, 0), int))):
        for c, row in enumerate(dofs):
            comp[row] = c
    perm = []
    for xy in nodes:
        at = np.flatnonzero(np.hypot(*(basis.doflocs.T - xy).T) < 1e-12)
        perm += [int(at[comp[at] == 0][0]), int(at[comp[at] == 1][0])]
    assert len(set(perm)) == basis.N == 2 * len(nodes) and ncorner in (3, 4)
    perm = np.array(perm)
    return nodes, K[np.ix_(perm, perm)], M[np.ix_(perm, perm)]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("mat", [STRESS, STRAIN], ids=["stress", "strain"])
def test_element_matrices_match_scikit_fem(kind, mat):
    nodes, Kref, Mref = skfem_element(kind, mat)
    fn = {"quad8": q8_matrices, "quad9": q9_matrices, "triangle6": t6_matrices}[kind]
    Ke, Me = fn(nodes[None], mat)
    # same integrals with the same (or exact) rules: round-off of sums of ~100 terms
    np.testing.assert_allclose(Ke[0], Kref, rtol=0, atol=1e-12 * np.abs(Kref).max())
    np.testing.assert_allclose(Me[0], Mref, rtol=0, atol=1e-12 * np.abs(Mref).max())


@pytest.mark.parametrize("kind", KINDS)
def test_element_rigid_modes_mass_and_curved_cells(kind):
    # three zero-energy modes (translations, rotation) and no spurious one with the full rules,
    # on a cell with curved edges; total mass rho A t with A from Green's theorem on the
    # isoparametric boundary (quadratic edges: Simpson's rule is exact for x dy)
    nodes = skfem_element(kind, STRESS)[0].copy()
    ncorner = 3 if kind == "triangle6" else 4
    nodes[ncorner:ncorner + ncorner] += [[0.05, -0.04], [0.06, 0.03], [-0.02, 0.07], [-0.05, 0.02]][:ncorner]
    fn = {"quad8": q8_matrices, "quad9": q9_matrices, "triangle6": t6_matrices}[kind]
    Ke, Me = fn(nodes[None], STRESS)
    lam = np.linalg.eigvalsh(Ke[0])
    assert np.all(np.abs(lam[:3]) < 1e-12 * lam[-1]) and lam[3] > 1e-4 * lam[-1]
    x = nodes[:, 0]
    area = 0.0
    for i in range(ncorner):  # int x dy along edge i, s in [-1, 1]: (f(-1) + 4 f(0) + f(1)) / 3
        a, b, m = i, (i + 1) % ncorner, ncorner + i
        dy = lambda s: (s - 0.5) * nodes[a, 1] + (s + 0.5) * nodes[b, 1] - 2 * s * nodes[m, 1]  # noqa: E731
        area += (x[a] * dy(-1) + 4 * x[m] * dy(0) + x[b] * dy(1)) / 3
    np.testing.assert_allclose(Me[0][0::2, 0::2].sum(), RHO * area * T, rtol=1e-13)
    lumped = fn(nodes[None], STRESS, lumped=True)[1][0]
    assert np.all(np.diag(lumped) > 0) and np.count_nonzero(lumped - np.diag(np.diag(lumped))) == 0
    np.testing.assert_allclose(np.diag(lumped)[0::2].sum(), RHO * area * T, rtol=1e-13)


def test_quadrature_rules_are_exact_to_their_degree():
    # monomials on the reference cells: int xi^i eta^j over the triangle is i! j! / (i + j + 2)!
    from math import factorial

    pts, w = gauss_rule("triangle6")
    for i in range(5):
        for j in range(5 - i):
            ref = factorial(i) * factorial(j) / factorial(i + j + 2)
            np.testing.assert_allclose(w @ (pts[:, 0]**i * pts[:, 1]**j), ref, rtol=1e-14)
    pts, w = gauss_rule("quad9")  # 3 x 3 Gauss: exact to degree 5 in each of xi and eta
    mono = lambda i: (1 + (-1) ** i) / (i + 1)  # noqa: E731 - int_-1^1 s^i ds
    for i in range(6):
        for j in range(6):
            np.testing.assert_allclose(w @ (pts[:, 0]**i * pts[:, 1]**j), mono(i) * mono(j), atol=1e-15)


@pytest.mark.parametrize("kind", KINDS)
def test_shape_functions_partition_and_derivatives(kind):
    # Kronecker property at the nodes, partition of unity, and derivatives against central
    # differences (h = 1e-6: truncation ~1e-12, round-off ~1e-10)
    rng = np.random.default_rng(1)
    p = rng.uniform(0.05, 0.45, (7, 2)) if kind == "triangle6" else rng.uniform(-0.9, 0.9, (7, 2))
    N, dN = shape_functions(kind, p)
    np.testing.assert_allclose(N.sum(axis=1), 1.0, rtol=1e-14)
    np.testing.assert_allclose(dN.sum(axis=2), 0.0, atol=1e-13)
    h = 1e-6
    for a in range(2):
        e = np.eye(2)[a] * h
        fd = (shape_functions(kind, p + e)[0] - shape_functions(kind, p - e)[0]) / (2 * h)
        np.testing.assert_allclose(dN[:, a], fd, rtol=0, atol=1e-9)
    ref = {"triangle6": [[0, 0], [1, 0], [0, 1], [0.5, 0], [0.5, 0.5], [0, 0.5]]}.get(
        kind, [[-1, -1], [1, -1], [1, 1], [-1, 1], [0, -1], [1, 0], [0, 1], [-1, 0], [0, 0]])
    k = {"quad8": 8, "quad9": 9, "triangle6": 6}[kind]
    np.testing.assert_allclose(shape_functions(kind, np.array(ref[:k], float))[0], np.eye(k), atol=1e-15)


# ---------------------------------------------------------------------------- mixed meshes, files
def mixed(mesh):
    """The quads of ``mesh`` whose centre lies right of x = 1 m split into two triangles each."""
    q = mesh.cells["quad"]
    right = mesh.points[q].mean(axis=1)[:, 0] > 1.0
    tri = np.vstack([q[right][:, [0, 1, 2]], q[right][:, [0, 2, 3]]])
    return Mesh(mesh.points, {"quad": q[~right], "triangle": tri}, mesh.node_sets, mesh.edge_sets)


@pytest.mark.parametrize("quad", [None, "quad8", "quad9"])
def test_mixed_mesh_assembles_into_one_model(quad):
    lin = mixed(distorted("quad", curved=False))
    mesh = lin if quad is None else quadratic_mesh(lin, quad=quad)
    assert mesh.element_type == "mixed" and len(mesh.blocks()) == 2
    with pytest.raises(MeshError, match="blocks"):
        mesh.elements()
    K, M, dm = mesh_matrices(mesh, STRAIN)
    # one connected body: exactly three rigid modes (two disjoint blocks would have six)
    lam = np.linalg.eigvalsh(K.toarray())
    assert np.all(np.abs(lam[:3]) < 1e-11 * lam[-1]) and lam[3] > 1e-7 * lam[-1]
    np.testing.assert_allclose(M.sum() / 2, RHO * 2.0 * 1.0 * T, rtol=1e-13)  # rho A t
    assert dirichlet_patch(mesh, STRAIN, LINEAR) < 1e-10


def test_mixed_q8_t6_reproduces_quadratics_on_rectangles():
    # Q8 on rectangles and T6 on straight triangles both hold every quadratic (see above)
    mesh = quadratic_mesh(mixed(rectangle(2.0, 1.0, 4, 2)))
    assert set(mesh.blocks()) == {"quad8", "triangle6"}
    assert dirichlet_patch(mesh, STRESS, QUADRATIC) < 1e-10


@pytest.mark.parametrize("suffix,fmt", [(".vtu", None), (".msh", None), (".msh", "gmsh41")])
def test_quadratic_mixed_mesh_file_round_trip(tmp_path, suffix, fmt):
    mesh = quadratic_mesh(mixed(distorted("quad", curved=False)), quad="quad9")
    path = tmp_path / f"m{suffix}"
    mesh.write(path, file_format=fmt)
    back = read(path)
    assert {k: v.shape for k, v in back.blocks().items()} == {k: v.shape for k, v in mesh.blocks().items()}
    for k in SIDES:
        np.testing.assert_array_equal(back.nodes(k), mesh.nodes(k))
    Ka, Ma, _ = mesh_matrices(mesh, STRESS)
    Kb, Mb, _ = mesh_matrices(back, STRESS)
    assert abs(Ka - Kb).max() <= 1e-12 * abs(Ka).max() and abs(Ma - Mb).max() <= 1e-12 * abs(Ma).max()


GMSH_QUAD9 = """$MeshFormat
2.2 0 8
$EndMeshFormat
$PhysicalNames
2
1 1 "right"
2 2 "body"
$EndPhysicalNames
$Nodes
9
1 0 0 0
2 2 0 0
3 2 1 0
4 0 1 0
5 1 0 0
6 2 0.5 0
7 1 1 0
8 0 0.5 0
9 1 0.5 0
$EndNodes
$Elements
2
1 8 2 1 1 2 3 6
2 10 2 2 1 1 2 3 4 5 6 7 8 9
$EndElements
"""


def test_gmsh_second_order_file_assembles_directly(tmp_path):
    # a 2 m x 1 m Gmsh 9-node quad written by hand in Gmsh's own node order (corners, mid-edge
    # nodes of edges 1-2, 2-3, 3-4, 4-1, centre) with a 3-node line group on its right side
    path = tmp_path / "q9.msh"
    path.write_text(GMSH_QUAD9)
    mesh = read(path)
    np.testing.assert_array_equal(mesh.cells["quad9"], [np.arange(9)])
    np.testing.assert_array_equal(mesh.edges("right"), [[1, 2]])
    np.testing.assert_array_equal(mesh.nodes("right"), [1, 2, 5])  # mid-node kept for supports
    K, M, dm = mesh_matrices(mesh, STRESS)
    np.testing.assert_allclose(M.sum() / 2, RHO * 2.0 * T, rtol=1e-13)
    lam = np.linalg.eigvalsh(K.toarray())
    assert np.all(np.abs(lam[:3]) < 1e-12 * lam[-1]) and lam[3] > 1e-4 * lam[-1]
    f = edge_load(mesh, "right", force_per_length=[6.0, 0.0])
    np.testing.assert_allclose(f.reshape(-1, 2)[[1, 2, 5], 0], [1.0, 1.0, 4.0], rtol=1e-14)
    np.testing.assert_array_equal(edge_load(mesh, np.array([[1, 2, 5]]), force_per_length=[6.0, 0.0]), f)
    # uniaxial stress sxx = 6 N/m / (1 m x T) in plane stress: u(2, y) = 2 sxx / E exactly
    pre = {d: 0.0 for d in dm.dofs([0, 3, 7], "x")}  # the nodes at x = 0
    pre[1] = 0.0  # node 0, y
    u = solve_static(K, f, pre).reshape(-1, 2)
    np.testing.assert_allclose(u[[1, 2, 5], 0], 2.0 * 6.0 / T / E, rtol=1e-12)


def test_quadratic_mesh_and_element_errors():
    with pytest.raises(MeshError, match="quad/triangle"):
        quadratic_mesh(rectangle(1.0, 1.0, 1, 1, element="quad8"))
    with pytest.raises(MeshError, match="quad8"):
        quadratic_mesh(rectangle(1.0, 1.0, 1, 1), quad="quad6")
    lin = rectangle(1.0, 1.0, 2, 2)
    lin.edge_sets["diag"] = np.array([[0, 4]])
    with pytest.raises(MeshError, match="no cell edge"):
        quadratic_mesh(lin)
    xy = rectangle(1.0, 1.0, 1, 1, element="quad8")
    xy = xy.points[xy.cells["quad8"]]
    with pytest.raises(MeshError, match="inverted"):
        q8_matrices(xy[:, [0, 3, 2, 1, 7, 6, 5, 4]], STRESS)  # clockwise
    bad = xy.copy()
    bad[0, 4] = [0.1, 0.0]  # mid-node nearer a corner than the quarter point: the map folds
    with pytest.raises(MeshError, match="distorted"):
        q8_matrices(bad, STRESS)
    with pytest.raises(MeshError, match="shape"):
        q9_matrices(xy, STRESS)
