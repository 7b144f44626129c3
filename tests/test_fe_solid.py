"""3D solid elements (hexahedron, incompatible-mode hexahedron, tetra, tetra10, wedge).

Independent references: monomial integrals in closed form (quadrature), finite differences
(shape-function derivatives), exact linear fields (patch tests), rigid-body motions, the volume
of the meshed box (mass), the closed-form energy of pure bending, scikit-fem's element matrices,
and the Timoshenko beam frequencies (cantilever convergence).
"""

from __future__ import annotations

from math import factorial

import numpy as np
import pytest

from fesub.errors import MeshError, ModelError
from fesub.fe import Solid, SolidMesh, box, read_solid, solid_matrices, solid_mesh_matrices, solid_strains
from fesub.fe.assembly import solve_static
from fesub.fe.solid_mesh import quadratic_tetra
from fesub.fe.solid_shapes import CELL_NODES, TET10_EDGES, hex_rule, shapes, tet_rule, triangle_rule, wedge_rule

MAT = Solid(210e9, 0.3, 7800.0)
# element variants: (cell type, incompatible modes)
VARIANTS = [("hexahedron", False), ("hexahedron", True), ("tetra", False), ("tetra10", False), ("wedge", False)]
IDS = ["hex8", "hex8-incompatible", "tet4", "tet10", "wedge6"]

_REF = {"hexahedron": np.array([[-1, -1, -1], [1, -1, -1], [1, 1, -1], [-1, 1, -1],
                                [-1, -1, 1], [1, -1, 1], [1, 1, 1], [-1, 1, 1]], float),
        "tetra": np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], float),
        "wedge": np.array([[0, 0, -1], [1, 0, -1], [0, 1, -1], [0, 0, 1], [1, 0, 1], [0, 1, 1]], float)}
_REF["tetra10"] = np.vstack([_REF["tetra"], [0.5 * (_REF["tetra"][a] + _REF["tetra"][b]) for a, b in TET10_EDGES]])


# --------------------------------------------------------------------------- reference element
@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_quadrature_integrates_monomials_exactly(n):
    """Rules with n points per direction integrate every monomial of degree <= 2n - 1 exactly:
    x^a y^b z^c over the tetrahedron is a! b! c! / (a+b+c+3)!, over the triangle a! b! / (a+b+2)!,
    over [-1, 1] 2/(a+1) for even a. Round-off of a few ulps of the (<= 8) weights: 1e-13."""
    deg = 2 * n - 1
    pt, wt = tet_rule(n)
    ptr, wtr = triangle_rule(n)
    ph, wh = hex_rule(n)
    pw, ww = wedge_rule(n)
    line = lambda a: 0.0 if a % 2 else 2.0 / (a + 1)  # noqa: E731
    for a in range(deg + 1):
        for b in range(deg + 1 - a):
            exact2 = factorial(a) * factorial(b) / factorial(a + b + 2)
            assert wtr @ (ptr[:, 0] ** a * ptr[:, 1] ** b) == pytest.approx(exact2, rel=1e-13, abs=1e-16)
            for c in range(deg + 1 - a - b):
                exact = factorial(a) * factorial(b) * factorial(c) / factorial(a + b + c + 3)
                mono = lambda p: p[:, 0] ** a * p[:, 1] ** b * p[:, 2] ** c  # noqa: E731
                assert wt @ mono(pt) == pytest.approx(exact, rel=1e-13, abs=1e-16)
            for c in range(deg + 1):
                assert wh @ (ph[:, 0] ** a * ph[:, 1] ** b * ph[:, 2] ** c) == pytest.approx(
                    line(a) * line(b) * line(c), rel=1e-13, abs=1e-15)
                assert ww @ (pw[:, 0] ** a * pw[:, 1] ** b * pw[:, 2] ** c) == pytest.approx(
                    exact2 * line(c), rel=1e-13, abs=1e-15)


@pytest.mark.parametrize("cell", list(CELL_NODES))
def test_shape_functions_interpolate_and_derivatives_match_finite_differences(cell):
    """N_a(node b) = delta_ab, sum_a N_a = 1, and dN against central differences (step 1e-6:
    truncation ~1e-12 for these polynomials, round-off ~1e-10; tolerance 1e-8)."""
    N, _ = shapes(cell, _REF[cell])
    np.testing.assert_allclose(N, np.eye(CELL_NODES[cell]), atol=1e-14)
    p = np.random.default_rng(1).uniform(0.05, 0.3, (7, 3))  # inside every reference cell
    N, dN = shapes(cell, p)
    np.testing.assert_allclose(N.sum(axis=1), 1.0, atol=1e-14)
    h = 1e-6
    for a in range(3):
        e = np.zeros(3)
        e[a] = h
        fd = (shapes(cell, p + e)[0] - shapes(cell, p - e)[0]) / (2 * h)
        np.testing.assert_allclose(dN[:, :, a], fd, atol=1e-8)


# --------------------------------------------------------------------------- single elements
def _distorted(cell, seed=0, amount=0.15):
    """One element: the reference cell scaled to ~1 m, corners moved at random (straight edges
    for tetra10: mid-edge nodes at the middle of the moved vertices)."""
    rng = np.random.default_rng(seed)
    base = _REF["tetra" if cell == "tetra10" else cell].copy()
    x = base + amount * rng.uniform(-1, 1, base.shape)
    if cell == "tetra10":
        x = np.vstack([x, [0.5 * (x[a] + x[b]) for a, b in TET10_EDGES]])
    return x[None]


def _rigid_modes(x):
    """(3k, 6) rigid-body displacement fields at points x (k, 3): translations, rotations."""
    k = len(x)
    R = np.zeros((k, 3, 6))
    for i in range(3):
        R[:, i, i] = 1.0
    for j, axis in enumerate(np.eye(3)):
        R[:, :, 3 + j] = np.cross(axis, x - x.mean(axis=0))
    return R.reshape(3 * k, 6)


@pytest.mark.parametrize("cell,inc", VARIANTS, ids=IDS)
def test_free_element_has_exactly_six_rigid_body_modes(cell, inc):
    """Six zero eigenvalues (round-off, < 1e-12 of the largest), spanned by the rigid motions
    (K R = 0 to round-off), and no spurious zero-energy mode (the 7th eigenvalue is a genuine
    deformation mode, > 1e-4 of the largest on these moderately distorted elements)."""
    x = _distorted(cell)
    Ke, Me = solid_matrices(cell, x, MAT, incompatible=inc)
    K = Ke[0]
    np.testing.assert_allclose(K, K.T, rtol=0, atol=1e-13 * np.abs(K).max())
    lam = np.linalg.eigvalsh(K)
    assert np.all(np.abs(lam[:6]) < 1e-12 * lam[-1])
    assert lam[6] > 1e-4 * lam[-1]
    R = _rigid_modes(x[0])
    assert np.abs(K @ R).max() < 1e-12 * np.abs(K).max() * np.abs(R).max()
    assert np.all(np.linalg.eigvalsh(Me[0]) > 0)  # consistent mass positive definite


def _frustum_hex(a=1.0, b=0.6, h=0.8, shift=(0.1, 0.05)):
    """Hexahedron with planar faces: square a x a at z = 0, square b x b at z = h shifted
    sideways. Its volume is the prismatoid's, h (a^2 + 4 m^2 + b^2) / 6 with m = (a + b) / 2."""
    lo = np.array([[0, 0], [a, 0], [a, a], [0, a]], float)
    c = (a - b) / 2 + np.asarray(shift)
    hi = c + np.array([[0, 0], [b, 0], [b, b], [0, b]], float)
    x = np.vstack([np.column_stack([lo, np.zeros(4)]), np.column_stack([hi, np.full(4, h)])])
    return x[None], h * (a * a + (a + b) ** 2 + b * b) / 6


def test_mass_of_single_elements_is_rho_volume_per_direction():
    """Each direction's block of the consistent and of the lumped mass sums to rho V: the frustum
    hexahedron against the prismatoid formula, a tetrahedron against |det| / 6, a wedge with a
    sheared top against base area x height. Round-off: 1e-13."""
    x, vol = _frustum_hex()
    tet = _distorted("tetra")
    e = tet[0, 1:] - tet[0, 0]
    tet10 = _distorted("tetra10")
    base = np.array([[0, 0, 0], [1.2, 0.1, 0], [0.3, 0.9, 0]])
    wedge = np.vstack([base, base + [0.2, -0.1, 0.7]])[None]
    area = 0.5 * abs(np.cross(base[1] - base[0], base[2] - base[0])[2])
    cases = [("hexahedron", x, vol), ("tetra", tet, abs(np.linalg.det(e)) / 6),
             ("tetra10", tet10, abs(np.linalg.det(e)) / 6), ("wedge", wedge, area * 0.7)]
    for cell, xyz, v in cases:
        for lumped in (False, True):
            _, Me = solid_matrices(cell, xyz, MAT, lumped=lumped)
            for i in range(3):
                assert Me[0, i::3, i::3].sum() == pytest.approx(MAT.rho * v, rel=1e-13)
            assert np.abs(Me[0, 0::3, 1::3]).max() == 0.0  # directions uncoupled


@pytest.mark.parametrize("nu", [0.0, 0.3, 0.4999])
def test_incompatible_hexahedron_bends_exactly_and_the_plain_one_locks(nu):
    """A rectangular hexahedron lx x ly x lz under the nodal values of the pure-bending field
    u = k (x z, -nu y z, -(x^2 - nu y^2 + nu z^2)/2) (centred axes): strain energy of the
    condensed incompatible-mode element = the exact E k^2 lx ly lz^3 / 24 to round-off (the
    field lies in its enriched space, which is the whole point of the modes), also when nearly
    incompressible (no volumetric locking in bending: 1e-12, or 1e-9 at nu = 0.4999 where the
    condensation loses log10(lambda / mu) ~ 3.7 digits); the plain hexahedron stores more than
    ten times as much (shear locking, and volumetric locking as nu -> 0.5)."""
    lx, ly, lz, kap = 2.0, 0.5, 0.3, 1e-3
    x = (_REF["hexahedron"] * 0.5 * np.array([lx, ly, lz]))[None]
    MAT = Solid(210e9, nu, 7800.0)
    tol = 1e-9 if nu > 0.49 else 1e-12
    X, Y, Z = x[0].T
    u = kap * np.column_stack([X * Z, -nu * Y * Z, -0.5 * (X**2 - nu * Y**2 + nu * Z**2)]).ravel()
    exact = MAT.E * kap**2 * lx * ly * lz**3 / 24
    Ki, _ = solid_matrices("hexahedron", x, MAT, incompatible=True)
    Kp, _ = solid_matrices("hexahedron", x, MAT, incompatible=False)
    assert 0.5 * u @ Ki[0] @ u == pytest.approx(exact, rel=tol)
    assert 0.5 * u @ Kp[0] @ u > 10 * exact  # (lx / lz)^2 ~ 44: badly locked
    # the strains recovered with the modes are the exact bending strains eps_xx = k z, ...
    pts, eps = solid_strains("hexahedron", x, u[None], MAT, incompatible=True)
    z = pts[0, :, 2]
    want = np.column_stack([kap * z, -nu * kap * z, -nu * kap * z, np.zeros((len(z), 3))])
    np.testing.assert_allclose(eps[0], want, atol=tol * kap * lz)


# --------------------------------------------------------------------------- patch tests
def _patch(cell, seed=3):
    """A unit cube meshed 3 x 3 x 3 (split into tetrahedra or wedges), interior vertices moved at
    random by up to 0.12 of a cell; for tetra10 interior mid-edge nodes then moved by up to 0.03
    of a cell off the middle (curved elements inside)."""
    mesh = box(1.0, 1.0, 1.0, 3, 3, 3, element="tetra" if cell == "tetra10" else cell)
    rng = np.random.default_rng(seed)

    def shake(pts, nodes, amount):
        pts = pts.copy()
        pts[nodes] += rng.uniform(-amount, amount, (nodes.size, 3))
        return pts

    def interior(points):
        on_face = np.zeros(len(points), bool)
        for a in range(3):
            on_face |= (np.abs(points[:, a]) < 1e-12) | (np.abs(points[:, a] - 1.0) < 1e-12)
        return np.flatnonzero(~on_face)

    pts = shake(mesh.points, interior(mesh.points), 0.04)
    cells = dict(mesh.cells)
    if cell == "tetra10":
        n0 = len(pts)
        pts, cells = quadratic_tetra(pts, mesh.cells["tetra"])
        cells = {"tetra10": cells}
        mids = interior(pts)
        pts = shake(pts, mids[mids >= n0], 0.01)
    inner = interior(pts)
    return SolidMesh(pts, cells), np.setdiff1d(np.arange(len(pts)), inner), inner


@pytest.mark.parametrize("cell,inc", VARIANTS, ids=IDS)
def test_patch_test_linear_field_gives_exact_constant_strain(cell, inc):
    """Linear displacement u = a + B x imposed on the boundary of a distorted patch: interior
    nodes get the exact field and every integration point the exact strain sym(B) and stress
    D sym(B), to round-off. The patch's K has a condition number ~1e3-1e4 (K entries ~E m):
    errors ~1e-12 relative; tolerance 1e-9 of the imposed displacement and strain."""
    mesh, boundary, inner = _patch(cell)
    K, M, dm = solid_mesh_matrices(mesh, MAT, incompatible=inc)
    rng = np.random.default_rng(7)
    a, B = rng.normal(size=3) * 1e-3, rng.normal(size=(3, 3)) * 1e-3
    exact = (a + mesh.points @ B.T).ravel()
    bd = dm.dofs(boundary)
    u = solve_static(K, np.zeros(dm.n_dofs), dict(zip(bd.tolist(), exact[bd].tolist())))
    assert np.abs(u - exact).max() < 1e-9 * np.abs(exact).max()
    conn = mesh.cells[cell]
    ue = u.reshape(-1, 3)[conn].reshape(len(conn), -1)
    _, eps = solid_strains(cell, mesh.points[conn], ue, MAT, incompatible=inc)
    S = 0.5 * (B + B.T)
    want = np.array([S[0, 0], S[1, 1], S[2, 2], 2 * S[1, 2], 2 * S[0, 2], 2 * S[0, 1]])
    assert np.abs(eps - want).max() < 1e-9 * np.abs(want).max()
    sig = eps @ MAT.D
    assert np.abs(sig - want @ MAT.D).max() < 1e-9 * np.abs(want @ MAT.D).max()
    # the patch is free: 6 rigid-body modes, and its mass is rho x the cube's volume
    R = _rigid_modes(mesh.points)
    assert np.abs(K @ R).max() < 1e-11 * abs(K).max() * np.abs(R).max()
    for i in range(3):
        assert M[i::3, i::3].sum() == pytest.approx(MAT.rho * 1.0, rel=1e-12)


def test_patch_test_mixed_hexahedra_and_wedges(tmp_path):
    """A mesh of two blocks (hexahedra for x < 1/2, wedges beyond) assembles into one model and
    passes the patch test (quadrilateral faces of hexahedra and wedges conform); written by
    meshio (VTU, two cell blocks) and read back, it assembles to the same matrices."""
    hexes = box(1.0, 1.0, 1.0, 4, 2, 2)
    wedge = box(1.0, 1.0, 1.0, 4, 2, 2, element="wedge")
    cx_h = hexes.points[hexes.cells["hexahedron"]].mean(axis=1)[:, 0]
    cx_w = wedge.points[wedge.cells["wedge"]].mean(axis=1)[:, 0]
    cells = {"hexahedron": hexes.cells["hexahedron"][cx_h < 0.5], "wedge": wedge.cells["wedge"][cx_w > 0.5]}
    mesh = SolidMesh(hexes.points, cells, hexes.node_sets)  # box keeps its node numbering
    K, M, dm = solid_mesh_matrices(mesh, MAT)
    boundary = np.unique(np.concatenate([mesh.nodes(s) for s in mesh.node_sets]))
    B = np.array([[1.0, 0.3, -0.2], [0.1, -0.5, 0.4], [0.2, 0.6, 0.7]]) * 1e-3
    exact = (mesh.points @ B.T).ravel()
    bd = dm.dofs(boundary)
    u = solve_static(K, np.zeros(dm.n_dofs), dict(zip(bd.tolist(), exact[bd].tolist())))
    assert np.abs(u - exact).max() < 1e-9 * np.abs(exact).max()  # as in the patch test above
    assert M[0::3, 0::3].sum() == pytest.approx(MAT.rho, rel=1e-12)
    mesh.to_meshio().write(tmp_path / "mixed.vtu")
    back = read_solid(tmp_path / "mixed.vtu")
    assert sorted(back.cells) == ["hexahedron", "wedge"]
    K2, M2, _ = solid_mesh_matrices(back, MAT)
    assert abs(K - K2).max() == 0 and abs(M - M2).max() == 0


def test_gmsh_physical_surface_becomes_a_node_set(tmp_path):
    """A Gmsh 2.2 file with hexahedra and a physical surface "clamp" (quads on x = 0): reading
    keeps the solid cells and turns the surface into the node set of its nodes."""
    import meshio

    mesh = box(1.0, 0.2, 0.2, 3, 1, 1)
    face = np.array([[0, 2, 3, 1]])  # box numbers nodes x-major: nodes 0-3 lie on x = 0
    assert np.all(mesh.points[face.ravel(), 0] == 0)
    m = meshio.Mesh(mesh.points, [("hexahedron", mesh.cells["hexahedron"]), ("quad", face)],
                    cell_data={"gmsh:physical": [np.full(3, 1), np.array([2])],
                               "gmsh:geometrical": [np.full(3, 1), np.array([2])]},
                    field_data={"body": np.array([1, 3]), "clamp": np.array([2, 2])})
    path = tmp_path / "beam.msh"
    m.write(path, file_format="gmsh22", binary=False)
    back = read_solid(path)
    assert list(back.cells) == ["hexahedron"] and back.n_cells == 3
    np.testing.assert_array_equal(back.nodes("clamp"), mesh.nodes("xmin"))


# --------------------------------------------------------------------------- meshes
def test_box_sets_and_meshio_round_trip(tmp_path):
    """box: face node sets hold the nodes of each face; a mesh written by meshio (VTU) and read
    back assembles to the same matrices; a clamped face by plane matches the set."""
    mesh = box(2.0, 0.5, 0.3, 4, 2, 1, origin=(1.0, 0.0, -0.1))
    assert mesh.n_points == 5 * 3 * 2 and mesh.n_cells == 8
    np.testing.assert_array_equal(mesh.nodes("xmin"), mesh.on_plane("x", 1.0))
    np.testing.assert_allclose(mesh.points[mesh.nodes("zmax"), 2], 0.2)
    assert len(mesh.nodes("xmax")) == 6
    path = tmp_path / "box.vtu"
    mesh.to_meshio().write(path)
    back = read_solid(path)
    np.testing.assert_array_equal(back.nodes("ymax"), mesh.nodes("ymax"))
    K1, M1, _ = solid_mesh_matrices(mesh, MAT)
    K2, M2, _ = solid_mesh_matrices(back, MAT)
    assert abs(K1 - K2).max() == 0 and abs(M1 - M2).max() == 0
    tet = box(1, 1, 1, 2, 2, 2, element="tetra10")
    assert tet.cells["tetra10"].shape == (48, 10) and tet.n_points == 125  # 5^3 grid points


def test_errors_name_the_fault():
    x = _distorted("hexahedron")
    with pytest.raises(MeshError, match="inverted"):
        solid_matrices("hexahedron", x[:, [4, 5, 6, 7, 0, 1, 2, 3]], MAT)
    with pytest.raises(MeshError, match="shape"):
        solid_matrices("tetra", x, MAT)
    with pytest.raises(ModelError, match="Solid"):
        solid_mesh_matrices(box(1, 1, 1, 1, 1, 1), object())
    with pytest.raises(ModelError, match="nu"):
        Solid(1e9, 0.5, 1000.0)
    with pytest.raises(MeshError, match="nx"):
        box(1, 1, 1, 0, 1, 1)
    # both wedge handednesses (Gmsh's and VTK's) give the same matrices
    w = np.array([[[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 0, 1], [0, 1, 1.0]]])
    flip = [0, 2, 1, 3, 5, 4]
    Ka, _ = solid_matrices("wedge", w, MAT)
    Kb, _ = solid_matrices("wedge", w[:, flip], MAT)
    d = (3 * np.array(flip)[:, None] + np.arange(3)).ravel()
    np.testing.assert_allclose(Kb[0], Ka[0][np.ix_(d, d)], rtol=1e-14, atol=1e-14 * np.abs(Ka).max())


# --------------------------------------------------------------------------- scikit-fem
def _skfem_matrices(cell, x):
    """Stiffness and mass of one element by scikit-fem, in fesub's DOF order (3 node + dir).

    scikit-fem orders its DOFs by its own numbering: ``nodal_dofs[i, a]`` is direction i at vertex
    a (meshio's vertex order kept), ``edge_dofs[i, m]`` direction i at the middle of its edge m
    (vertex pairs ``mesh.edges``). Its rules: Gauss 2 x 2 x 2 for the hexahedron stiffness (the
    integrand is rational, so the rule must be the same one), exact rules elsewhere.
    """
    skfem = pytest.importorskip("skfem", reason="scikit-fem (the test extra) is not installed")
    import meshio
    from skfem.helpers import dot
    from skfem.io.meshio import from_meshio
    from skfem.models.elasticity import linear_elasticity
    from skfem.quadrature import get_quadrature_line, get_quadrature_tri

    lam, mu = MAT.lame

    @skfem.BilinearForm
    def mass(u, v, w):
        return MAT.rho * dot(u, v)

    def wedge_rule_skfem(order):
        # scikit-fem 12.0.2's own wedge rule (skfem.quadrature, RefWedge) pairs the triangle rule's
        # x and y coordinates as a tensor product: its weights sum to 1/4 instead of the reference
        # wedge's volume 1/2 and its wedge matrices come out wrong. Its triangle rule times its
        # line rule is the correct product rule, built here from its own pieces.
        Xl, Wl = get_quadrature_line(order)
        Xt, Wt = get_quadrature_tri(order)
        X = np.vstack([np.repeat(Xt, Xl.shape[1], axis=1), np.tile(Xl, Xt.shape[1])])
        return X, np.repeat(Wt, len(Wl)) * np.tile(Wl, len(Wt))

    k = len(x)
    if cell == "wedge":
        mesh = skfem.MeshWedge1(np.ascontiguousarray(x.T), np.arange(6)[:, None])
        elem, rules = skfem.ElementWedge1(), ({"quadrature": wedge_rule_skfem(2)},
                                              {"quadrature": wedge_rule_skfem(4)})
    else:
        nv = 4 if cell == "tetra10" else k  # tetra10: straight edges, scikit-fem's P2 on a MeshTet1
        mesh = from_meshio(meshio.Mesh(x[:nv], [("tetra" if cell == "tetra10" else cell, np.arange(nv)[None])]))
        elem, rules = {"hexahedron": (skfem.ElementHex1(), ({"intorder": 3}, {"intorder": 5})),
                       "tetra": (skfem.ElementTetP1(), ({"intorder": 2}, {"intorder": 2})),
                       "tetra10": (skfem.ElementTetP2(), ({"intorder": 2}, {"intorder": 4}))}[cell]
    assert np.abs(mesh.p.T - x[:mesh.p.shape[1]]).max() == 0  # vertices kept in meshio's order
    e = skfem.ElementVector(elem)
    bk, bm = skfem.Basis(mesh, e, **rules[0]), skfem.Basis(mesh, e, **rules[1])
    K = skfem.asm(linear_elasticity(lam, mu), bk).toarray()
    M = skfem.asm(mass, bm).toarray()
    nv = mesh.p.shape[1]
    perm = [bk.nodal_dofs[i, a] for a in range(nv) for i in range(3)]
    if cell == "tetra10":
        edges = [tuple(sorted(p)) for p in mesh.edges.T]
        perm += [bk.edge_dofs[i, edges.index(tuple(sorted(p)))] for p in TET10_EDGES for i in range(3)]
    perm = np.array(perm)
    return K[np.ix_(perm, perm)], M[np.ix_(perm, perm)]


@pytest.mark.parametrize("cell", list(CELL_NODES))
def test_element_matrices_equal_scikit_fem(cell):
    """K and M of one element against scikit-fem's (an independent FE library) to 1e-12 of the
    largest entry (measured: ~1e-15, sums of a few dozen products in another order). The
    hexahedron is distorted (non-affine, rational integrand: same 2x2x2 Gauss rule in both); the
    tetrahedra are distorted with straight edges and the wedge a sheared, oblique prism, so both
    libraries integrate them exactly."""
    if cell == "wedge":
        base = np.array([[0, 0, 0], [1.2, 0.1, 0], [0.3, 0.9, 0]])
        x = np.vstack([base, base + [0.2, -0.1, 0.7]])
    else:
        x = _distorted(cell)[0]
    Ke, Me = solid_matrices(cell, x[None], MAT, incompatible=False)
    K, M = _skfem_matrices(cell, x)
    assert np.abs(K - Ke[0]).max() < 1e-12 * np.abs(K).max()
    assert np.abs(M - Me[0]).max() < 1e-12 * np.abs(M).max()


# --------------------------------------------------------------------------- cantilever vs Timoshenko
BEAM = dict(L=1.0, b=0.1, h=0.1, E=210e9, nu=0.0, rho=7800.0)


def timoshenko_clamped_free(n, L, b, h, E, nu, rho, kappa=None):
    """First ``n`` bending frequencies (Hz) of a clamped-free Timoshenko beam of rectangular
    section b x h, from its frequency equation solved numerically.

    With w = C e^(l x), psi = D e^(l x) in kGA (w'' - psi') + rho A w^2 w = 0 and
    EI psi'' + kGA (w' - psi) + rho I w^2 psi = 0, l^2 solves
    kGA EI s^2 + w^2 (kGA rho I + rho A EI) s + rho A w^2 (rho I w^2 - kGA) = 0: s = alpha^2 > 0
    and s = -beta^2 below the cut-off frequency. w = (cosh, sinh)(alpha x), (cos, sin)(beta x)
    with psi = (alpha^2 + k)/alpha (sinh, cosh)(alpha x), (k - beta^2)/beta (sin, -cos)(beta x),
    k = rho A w^2 / kGA; the clamp w = psi = 0 and the free end EI psi' = kGA (w' - psi) = 0 give a
    4 x 4 determinant whose roots in w are bracketed on a fine geometric grid and refined (brentq).
    Shear coefficient: Cowper's 10 (1 + nu) / (12 + 11 nu) for a rectangle.
    """
    from scipy.optimize import brentq

    A, I = b * h, b * h**3 / 12
    kappa = 10 * (1 + nu) / (12 + 11 * nu) if kappa is None else kappa
    kGA, EI, rA, rI = kappa * E / (2 * (1 + nu)) * A, E * I, rho * A, rho * I

    def det(w):
        qa, qb, qc = kGA * EI, w * w * (kGA * rI + rA * EI), rA * w * w * (rI * w * w - kGA)
        disc = np.sqrt(qb * qb - 4 * qa * qc)
        al, be = np.sqrt((disc - qb) / (2 * qa)), np.sqrt((disc + qb) / (2 * qa))
        k = rA * w * w / kGA
        pa, pb = (al * al + k) / al, (k - be * be) / be
        ch, sh, c, s = np.cosh(al * L), np.sinh(al * L), np.cos(be * L), np.sin(be * L)
        rows = np.array([[1.0, 0.0, 1.0, 0.0],
                         [0.0, pa, 0.0, -pb],
                         [pa * al * ch, pa * al * sh, pb * be * c, pb * be * s],
                         [(al - pa) * sh, (al - pa) * ch, -(be + pb) * s, (be + pb) * c]])
        return np.linalg.det(rows / np.abs(rows).max(axis=1, keepdims=True))

    cutoff = np.sqrt(kGA / rI)
    grid = np.geomspace(1e-9 * cutoff, 0.999 * cutoff, 30001)  # steps of 0.07%
    roots, prev = [], det(grid[0])
    for lo, hi in zip(grid[:-1], grid[1:]):  # march up until n roots are bracketed
        cur = det(hi)
        if prev * cur < 0:
            roots.append(brentq(det, lo, hi, xtol=1e-12 * hi))
            if len(roots) == n:
                return np.array(roots) / (2 * np.pi)
        prev = cur
    raise AssertionError("fewer bending modes than asked below the cut-off frequency")


def test_timoshenko_reference_tends_to_euler_bernoulli_when_slender():
    """The frequency equation above, for L / h = 1000, gives the Euler-Bernoulli cantilever
    frequencies (beta L)^2 / (2 pi L^2) sqrt(EI / rho A), beta L = 1.875104, 4.694091: the
    shear and rotary-inertia correction, about (beta L)^2 (h / L)^2 (1 + E / kG) / 24, is 3e-6
    for the second mode there (tolerance 2e-5); and it lies below Euler-Bernoulli (shear
    flexibility) for the stubby beam L / h = 10 used below, by 0.7% and 4%."""
    eb = lambda L: np.array([1.875104069, 4.694091133]) ** 2 / (2 * np.pi * L**2) * np.sqrt(  # noqa: E731
        BEAM["E"] * BEAM["h"] ** 2 / 12 / BEAM["rho"])
    np.testing.assert_allclose(timoshenko_clamped_free(2, **dict(BEAM, L=100.0)), eb(100.0), rtol=2e-5)
    stubby = timoshenko_clamped_free(2, **BEAM) / eb(BEAM["L"]) - 1
    assert -0.01 < stubby[0] < -0.005 and -0.05 < stubby[1] < -0.03


def _cantilever(element, n, incompatible=False):
    """Two lowest bending frequencies (Hz) of the solid cantilever (xmin clamped) meshed with
    10 n x n x n cells; the square section gives pairs of equal (or nearly equal, on unsymmetric
    tetrahedral meshes) frequencies: modes 0 and 2 are the first and second bending."""
    from fesub.fe import modes
    from fesub.fe.assembly import free_dofs

    p = BEAM
    mesh = box(p["L"], p["b"], p["h"], 10 * n, n, n, element=element)
    K, M, dm = solid_mesh_matrices(mesh, Solid(p["E"], p["nu"], p["rho"]), incompatible=incompatible)
    free = free_dofs(dm.n_dofs, dm.dofs(mesh.nodes("xmin")))
    f, _ = modes(K[free][:, free], M[free][:, free], 4)
    return f[[0, 2]]


def _rates(errors):
    """Observed orders log2(e_h / e_h/2) of successive halvings of the cell size."""
    e = np.abs(np.asarray(errors))
    return np.log2(e[:-1] / e[1:])


def test_hexahedral_cantilever_converges_to_timoshenko_at_second_order():
    """Clamped-free beam L / h = 10, square section, nu = 0 (the clamp then adds no Poisson
    stiffening, and Cowper's shear coefficient is 5/6): 3D elasticity and Timoshenko's theory
    differ by ~1e-4 here (warping at the clamp), far below the discretisation errors compared.

    Plain hexahedra (full 2x2x2): the frequency error falls as h^2 (eigenvalue error
    O(h^(2p)), p = 1); measured 22%, 6.1%, 1.6% for the first mode at n = 1, 2, 4 (observed
    orders 1.87, 1.96), 24%, 6.9%, 1.8% for the second (1.83, 1.94). Incompatible-mode
    hexahedra do not lock: 0.2% already with one cell through the section."""
    ref = timoshenko_clamped_free(2, **BEAM)
    plain = np.array([_cantilever("hexahedron", n) for n in (1, 2, 4)])
    err = plain / ref - 1
    assert np.all(err > 0)  # a compatible displacement model is stiffer than the limit
    rates = np.array([_rates(err[:, m]) for m in range(2)])
    print("hexahedron errors", err.T, "orders", rates)
    assert np.all((rates[:, -1] > 1.85) & (rates[:, -1] < 2.15))  # expected 2, within 8%
    assert np.all(np.abs(err[-1]) < 0.02)
    inc = np.array([_cantilever("hexahedron", n, incompatible=True) for n in (1, 2)])
    err_inc = inc / ref - 1
    print("incompatible-mode hexahedron errors", err_inc.T)
    assert np.all(np.abs(err_inc[:, 0]) < 3e-3) and np.all(np.abs(err_inc[:, 1]) < 3e-2)
    assert np.all(np.abs(err_inc[1]) < np.abs(err_inc[0]))


def test_tetrahedral_cantilever_converges_to_timoshenko():
    """The same beam in tetrahedra (6 per hexahedral cell). Linear tetrahedra: expected order 2,
    observed on n = 1, 2, 4: 83%, 27%, 7.4% (orders 1.63, 1.84; second mode 1.57, 1.82: still
    pre-asymptotic, stiff in bending). Quadratic tetrahedra: expected order 4; observed with n = 1, 2 about 3.2 (first
    mode, 9e-4 -> 9e-5) and 3.0 (second, 6e-3 -> 7.5e-4): the second mesh's error is within a few
    times the 1e-5-1e-4 gap between 3D elasticity and Timoshenko's beam, which flattens the
    measured order; it is well above the linear elements' 2."""
    ref = timoshenko_clamped_free(2, **BEAM)
    lin = np.array([_cantilever("tetra", n) for n in (1, 2, 4)]) / ref - 1
    r_lin = np.array([_rates(lin[:, m]) for m in range(2)])
    print("tetra errors", lin.T, "orders", r_lin)
    assert np.all(lin > 0) and np.all((r_lin[:, -1] > 1.7) & (r_lin[:, -1] < 2.3))
    quad = np.array([_cantilever("tetra10", n) for n in (1, 2)]) / ref - 1
    r_quad = _rates(quad)
    print("tetra10 errors", quad.T, "orders", r_quad)
    assert np.all(quad > 0) and np.all(r_quad > 2.7)
    assert np.all(np.abs(quad[-1]) < 1e-3)


def test_assembly_is_the_sum_of_element_matrices_on_both_backends(backend):
    """The chunked CSR scatter (compiled kernel or NumPy twin) equals the plain COO sum of the
    element matrices, whatever the chunk size (exact: the same sums, round-off only from their
    order, 1e-15 of the largest entry)."""
    import scipy.sparse as sp

    mesh = box(1.0, 0.5, 0.4, 3, 2, 2, element="tetra10")
    conn = mesh.cells["tetra10"]
    Ke, Me = solid_matrices("tetra10", mesh.points[conn], MAT)
    dofs = (3 * conn[:, :, None] + np.arange(3)).reshape(len(conn), -1)
    rows, cols = np.repeat(dofs, 30, axis=1).ravel(), np.tile(dofs, (1, 30)).ravel()
    n = 3 * mesh.n_points
    Kc = sp.csr_matrix((Ke.ravel(), (rows, cols)), shape=(n, n))
    Mc = sp.csr_matrix((Me.ravel(), (rows, cols)), shape=(n, n))
    for chunk in (7, 4096):
        K, M, _ = solid_mesh_matrices(mesh, MAT, chunk=chunk)
        assert abs(K - Kc).max() < 1e-15 * abs(Kc).max() and abs(M - Mc).max() < 1e-15 * abs(Mc).max()
