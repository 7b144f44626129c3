"""Face tractions and pressures on 3D solid meshes (fesub.fe.face_loads).

References are independent of the integration: areas and moments of rectangles in closed form,
the classical nodal splits of a uniform pressure, the vector area of a surface (which depends
only on its boundary curve, so a faceted cylinder and the exact one have the same projected
area), and the exact linear displacement field of a box in uniform tension (patch test).
"""

import meshio
import numpy as np
import pytest

from fesub.errors import MeshError, ModelError
from fesub.fe import Solid, SolidMesh, box, face_forces, face_load, solid_boundary_faces, \
    solid_mesh_matrices, solid_strains, solve_static, surface_cells
from fesub.fe.face_loads import face_shapes
from fesub.fe.solid_mesh import quadratic_tetra
from fesub.fe.solid_shapes import TET10_EDGES

ELEMENTS = ("hexahedron", "tetra", "tetra10", "wedge", "wedge-vtk")
STEEL = Solid(E=210e9, nu=0.3, rho=7850.0)
# the sums below add a few hundred terms of size p A / n: 1e-12 relative is ~1e4 ulps of room
RTOL = 1e-12


def solid_box(lx, ly, lz, nx, ny, nz, *, element, origin=(0.0, 0.0, 0.0)):
    """The box generator's mesh; ``wedge-vtk``: wedges with the base triangle in the other
    (VTK) turning sense, whose faces the loads must orient outwards all the same."""
    if element != "wedge-vtk":
        return box(lx, ly, lz, nx, ny, nz, element=element, origin=origin)
    m = box(lx, ly, lz, nx, ny, nz, element="wedge", origin=origin)
    return SolidMesh(m.points, {"wedge": m.cells["wedge"][:, [0, 2, 1, 3, 5, 4]]}, m.node_sets)


def moment(mesh, f, about):
    """Resultant force (N) and moment (N m) about ``about`` of nodal forces f."""
    F = f.reshape(-1, 3)
    return F.sum(axis=0), np.cross(mesh.points - about, F).sum(axis=0)


REF_NODES = {"triangle": [[0, 0], [1, 0], [0, 1]], "quad": [[-1, -1], [1, -1], [1, 1], [-1, 1]]}
REF_NODES["triangle6"] = REF_NODES["triangle"] + [[0.5, 0], [0.5, 0.5], [0, 0.5]]
REF_NODES["quad8"] = REF_NODES["quad"] + [[0, -1], [1, 0], [0, 1], [-1, 0]]
REF_NODES["quad9"] = REF_NODES["quad8"] + [[0, 0]]


@pytest.mark.parametrize("kind", sorted(REF_NODES))
def test_face_shape_functions(kind):
    # Kronecker delta at the nodes, partition of unity, derivatives by central differences
    nodes = np.array(REF_NODES[kind], float)
    N, _ = face_shapes(kind, nodes)
    np.testing.assert_allclose(N, np.eye(len(nodes)), atol=1e-15)
    lo, hi = (0.05, 0.45) if kind.startswith("tri") else (-0.9, 0.9)  # inside the reference face
    pts = np.random.default_rng(2).uniform(lo, hi, (7, 2))
    N, dN = face_shapes(kind, pts)
    np.testing.assert_allclose(N.sum(axis=1), 1.0, rtol=1e-14)
    h = 1e-6  # central differences of quadratics: exact but for round-off ~1e-16 / h = 1e-10
    for d in range(2):
        e = np.zeros(2)
        e[d] = h
        fd = (face_shapes(kind, pts + e)[0] - face_shapes(kind, pts - e)[0]) / (2 * h)
        np.testing.assert_allclose(dN[..., d], fd, rtol=0, atol=1e-9)


# ---------------------------------------------------------------------------- uniform pressure
@pytest.mark.parametrize("element", ELEMENTS)
def test_uniform_pressure_resultant_is_p_times_area(element):
    lx, ly, lz, o = 2.0, 3.0, 1.5, np.array([0.5, -1.0, 2.0])
    mesh = solid_box(lx, ly, lz, 3, 2, 4, origin=o, element=element)
    p = 2.5e5
    centre = o + [lx, ly, lz]
    faces = (("xmax", 0, 1, ly * lz), ("ymin", 1, -1, lx * lz), ("zmax", 2, 1, lx * ly))
    for name, axis, sign, area in faces:
        face_centre = o + 0.5 * np.array([lx, ly, lz])
        face_centre[axis] = centre[axis] if sign > 0 else o[axis]
        F, M = moment(mesh, face_load(mesh, name, pressure=p), face_centre)
        expected = np.zeros(3)
        expected[axis] = -sign * p * area  # pushes against the outward normal
        np.testing.assert_allclose(F, expected, rtol=0, atol=RTOL * p * area)
        np.testing.assert_allclose(M, 0.0, atol=RTOL * p * area * max(lx, ly, lz))


@pytest.mark.parametrize("element", ELEMENTS)
def test_pressure_on_the_whole_boundary_balances(element):
    # a closed surface has zero vector area: the resultant and the moment vanish
    # (divergence theorem: int n dA = 0 and int x cross n dA = 0), here on curved faces
    mesh = sector(element)
    F, M = moment(mesh, face_load(mesh, solid_boundary_faces(mesh), pressure=1e6), np.zeros(3))
    assert np.abs(F).max() < RTOL * 1e6
    assert np.abs(M).max() < RTOL * 1e6


@pytest.mark.parametrize("element", ELEMENTS)
def test_hydrostatic_pressure_gives_buoyancy(element):
    # p = p0 - rho g z on the closed boundary: int p n dA = int grad p dV, so the resultant is
    # rho g V upwards and acts at the centroid (divergence theorem on the box, V = lx ly lz)
    lx, ly, lz, o = 1.2, 0.7, 0.9, np.array([0.3, 0.1, -2.0])
    rho_g, p0 = 1e4, 2e5
    mesh = solid_box(lx, ly, lz, 3, 2, 2, origin=o, element=element)
    f = face_load(mesh, solid_boundary_faces(mesh), pressure=lambda x: p0 - rho_g * x[:, 2])
    F, M = moment(mesh, f, o + 0.5 * np.array([lx, ly, lz]))
    V = lx * ly * lz
    np.testing.assert_allclose(F, [0.0, 0.0, rho_g * V], rtol=0, atol=RTOL * (p0 + rho_g * lz) * 6)
    np.testing.assert_allclose(M, 0.0, atol=RTOL * (p0 + rho_g * lz) * 6)


def test_nodal_splits_of_a_uniform_pressure():
    p, a, b = 3.0e5, 0.4, 0.25  # a rectangle a x b in the plane z = 0, normal +z
    A = a * b
    sq = np.array([[0, 0], [a, 0], [a, b], [0, b],
                   [a / 2, 0], [a, b / 2], [a / 2, b], [0, b / 2], [a / 2, b / 2]])
    sq = np.column_stack([sq, np.zeros(9)])[None]
    tri = np.array([[[0, 0, 0], [a, 0, 0], [0, b, 0], [a / 2, 0, 0], [a / 2, b / 2, 0], [0, b / 2, 0]]])
    splits = {"quad": (sq[:, :4], A, [1 / 4] * 4),
              "quad8": (sq[:, :8], A, [-1 / 12] * 4 + [1 / 3] * 4),
              "quad9": (sq, A, [1 / 36] * 4 + [1 / 9] * 4 + [4 / 9]),
              "triangle": (tri[:, :3], A / 2, [1 / 3] * 3),
              "triangle6": (tri, A / 2, [0.0] * 3 + [1 / 3] * 3)}
    for kind, (xyz, area, share) in splits.items():
        f = face_forces(kind, xyz, pressure=p)[0]
        np.testing.assert_allclose(f[:, 2], -p * area * np.array(share), rtol=0, atol=RTOL * p * area)
        np.testing.assert_allclose(f[:, :2], 0.0, atol=RTOL * p * area)
    # the same through a mesh: one hexahedron's face x = 1 gets p A / 4 on each of its 4 nodes
    mesh = box(1.0, 0.5, 2.0, 1, 1, 1)
    F = face_load(mesh, "xmax", pressure=p).reshape(-1, 3)
    np.testing.assert_allclose(F[mesh.nodes("xmax"), 0], -p * 1.0 / 4, rtol=RTOL)


def boundary_integrals(kind, xyz):
    """Around the boundary of a face (its edges: straight, or parabolas through the mid-nodes),
    by 12-point Gauss on each edge: 1/2 closed-int x cross dx (= int n dA, the vector area) and
    -1/2 closed-int |x|^2 dx (= int x cross n dA)."""
    quadratic = kind in ("triangle6", "quad8", "quad9")
    ncorner = 3 if kind.startswith("triangle") else 4
    s, w = np.polynomial.legendre.leggauss(12)
    area, first = np.zeros(3), np.zeros(3)
    for e in range(ncorner):
        a, b = xyz[e], xyz[(e + 1) % ncorner]
        if quadratic:
            m = xyz[ncorner + e]
            x = np.outer(s * (s - 1) / 2, a) + np.outer(s * (s + 1) / 2, b) + np.outer(1 - s * s, m)
            dx = np.outer(s - 0.5, a) + np.outer(s + 0.5, b) + np.outer(-2 * s, m)
        else:
            x, dx = np.outer((1 - s) / 2, a) + np.outer((1 + s) / 2, b), np.tile((b - a) / 2, (len(s), 1))
        area += 0.5 * np.einsum("g,gc->c", w, np.cross(x, dx))
        first -= 0.5 * np.einsum("g,g,gc->c", w, (x * x).sum(axis=1), dx)
    return area, first


@pytest.mark.parametrize("kind", ("triangle", "triangle6", "quad", "quad8", "quad9"))
def test_pressure_on_a_warped_face_against_boundary_integrals(kind):
    # Stokes: int n dA = 1/2 closed-int x cross dx and int x cross n dA = -1/2 closed-int |x|^2 dx
    # hold for any surface; consistent nodal forces of a uniform p reproduce -p times both
    # (sum N_i = 1 and sum N_i x_i = x), which needs the face rule to be exact for them
    rng = np.random.default_rng(11)
    xy = np.array(REF_NODES[kind], float)
    xyz = np.column_stack([xy, np.zeros(len(xy))]) + rng.uniform(-0.15, 0.15, (len(xy), 3)) + [0.3, -0.2, 0.5]
    p = 7e5
    f = face_forces(kind, xyz[None], pressure=p)[0]
    area, first = boundary_integrals(kind, xyz)
    scale = p * np.linalg.norm(area)
    np.testing.assert_allclose(f.sum(axis=0), -p * area, rtol=0, atol=RTOL * scale)
    np.testing.assert_allclose(np.cross(xyz, f).sum(axis=0), -p * first, rtol=0, atol=RTOL * scale)
    assert np.linalg.norm(first) > 0.1 * np.linalg.norm(area)  # a moment that matters


# ---------------------------------------------------------------------------- linear traction
@pytest.mark.parametrize("element", ELEMENTS)
def test_linear_traction_resultant_and_moment(element):
    a, b, c = 1.5, 2.0, 0.8
    al, be, ga, de = 1e5, 3e4, -5e4, 2e4  # t = (al + be y + ga z, de y, 0) Pa on x = a
    mesh = solid_box(a, b, c, 2, 3, 3, element=element)
    f = face_load(mesh, "xmax", traction=lambda x: np.column_stack(
        [al + be * x[:, 1] + ga * x[:, 2], de * x[:, 1], 0 * x[:, 0]]))
    F, M = moment(mesh, f, np.zeros(3))
    int_tx = al * b * c + be * b**2 * c / 2 + ga * b * c**2 / 2
    int_ty = de * b**2 * c / 2
    int_z_tx = al * b * c**2 / 2 + be * b**2 * c**2 / 4 + ga * b * c**3 / 3
    int_y_tx = al * b**2 * c / 2 + be * b**3 * c / 3 + ga * b**2 * c**2 / 4
    int_z_ty = de * b**2 * c**2 / 4
    # r x t with r = (a, y, z), t = (tx, ty, 0)
    np.testing.assert_allclose(F, [int_tx, int_ty, 0.0], rtol=0, atol=RTOL * abs(int_tx))
    np.testing.assert_allclose(M, [-int_z_ty, int_z_tx, a * int_ty - int_y_tx], rtol=0,
                               atol=RTOL * abs(int_tx) * a)


# ---------------------------------------------------------------------------- scikit-fem
@pytest.mark.parametrize("cell", ("hexahedron", "tetra10"))
def test_nodal_forces_equal_scikit_fem(cell):
    """Node by node against scikit-fem's facet assembly (an independent FE library, its own
    facet search, outward normals and rules) of a polynomial traction and a linear pressure on
    the face y = 0.8 of a box; both integrate exactly there, so they agree to round-off
    (measured 3e-16 to 2e-15 of the largest force; 1e-13 leaves room for the summation order)."""
    skfem = pytest.importorskip("skfem", reason="scikit-fem (the test extra) is not installed")
    from skfem.helpers import dot
    from skfem.io.meshio import from_meshio

    def trac(x):  # x: (3, ...) points (m) -> (3, ...) Pa
        return np.stack([1e5 * (1 + x[0] * x[1] + x[2] ** 2), 1e5 * (x[1] - 2 * x[2]), 5e4 + 0 * x[0]])

    def pres(x):
        return 2e5 * (1 + x[0] - 3 * x[2])

    mesh = box(1.0, 0.8, 0.6, 2, 3, 2, element=cell)
    lin = box(1.0, 0.8, 0.6, 2, 3, 2, element="tetra") if cell == "tetra10" else mesh
    sm = from_meshio(meshio.Mesh(lin.points, list(lin.cells.items())))
    assert np.abs(sm.p.T - lin.points).max() == 0  # vertices kept in fesub's order
    elem = skfem.ElementVector(skfem.ElementHex1() if cell == "hexahedron" else skfem.ElementTetP2())
    fb = skfem.FacetBasis(sm, elem, facets=sm.facets_satisfying(lambda x: np.isclose(x[1], 0.8)), intorder=6)

    @skfem.LinearForm
    def traction_form(v, w):
        return dot(trac(w.x), v)

    @skfem.LinearForm
    def pressure_form(v, w):
        return -pres(w.x) * dot(w.n, v)

    nv = sm.p.shape[1]
    perm = [fb.nodal_dofs[i, a] for a in range(nv) for i in range(3)]
    if cell == "tetra10":  # fesub's mid-nodes n >= nv -> scikit-fem's edge DOFs
        edges = {tuple(sorted(p)): j for j, p in enumerate(sm.edges.T)}
        mid = np.empty(mesh.n_points, int)
        for k, (a, c) in enumerate(TET10_EDGES):
            for e in mesh.cells["tetra10"]:
                mid[e[4 + k]] = edges[tuple(sorted((e[a], e[c])))]
        perm += [fb.edge_dofs[i, mid[n]] for n in range(nv, mesh.n_points) for i in range(3)]
    perm = np.array(perm)
    for form, kw in ((traction_form, {"traction": lambda x: trac(x.T).T}),
                     (pressure_form, {"pressure": lambda x: pres(x.T)})):
        ref = skfem.asm(form, fb)[perm]
        f = face_load(mesh, "ymax", **kw)
        assert np.abs(f - ref).max() < 1e-13 * np.abs(ref).max()


# ---------------------------------------------------------------------------- patch test
def distorted_box(element, seed=5):
    """A 2 x 1 x 1.5 m box whose interior nodes are moved by up to 20 % of the spacing."""
    n = (3, 2, 3)
    lin = solid_box(2.0, 1.0, 1.5, *n, element="tetra" if element == "tetra10" else element)
    bnd = np.unique(np.concatenate([lin.nodes(s) for s in lin.node_sets]))
    inner = np.setdiff1d(np.arange(lin.n_points), bnd)
    pts = lin.points.copy()
    size = np.array([2.0, 1.0, 1.5])
    pts[inner] += np.random.default_rng(seed).uniform(-0.2, 0.2, (inner.size, 3)) * size / n
    if element == "tetra10":
        pts, conn = quadratic_tetra(pts, lin.cells["tetra"])
        cells = {"tetra10": conn}
    else:
        cells = lin.cells
    sets = {}
    for k in lin.node_sets:  # boundary nodes did not move: the face sets by their coordinates
        axis = "xyz".index(k[0])
        sets[k] = np.flatnonzero(np.abs(pts[:, axis] - (0.0 if k[1:] == "min" else size[axis])) < 1e-12)
    return SolidMesh(pts, cells, sets)


@pytest.mark.parametrize("element", ELEMENTS)
@pytest.mark.parametrize("how", ("traction", "pressure"))
def test_uniform_tension_patch(element, how):
    # sigma_xx = p everywhere: u = (p x, -nu p y, -nu p z) / E with symmetry supports
    mesh = distorted_box(element)
    K, _, dm = solid_mesh_matrices(mesh, STEEL)
    p = 1e8
    f = (face_load(mesh, "xmax", traction=[p, 0.0, 0.0], dofmap=dm) if how == "traction"
         else face_load(mesh, "xmax", pressure=-p, dofmap=dm))
    pre = {int(d): 0.0 for s, c in (("xmin", "x"), ("ymin", "y"), ("zmin", "z"))
           for d in dm.dofs(mesh.nodes(s), c)}
    u = solve_static(K, f, pre).reshape(-1, 3)
    x = mesh.points
    exact = p / STEEL.E * np.column_stack([x[:, 0], -STEEL.nu * x[:, 1], -STEEL.nu * x[:, 2]])
    # measured 6e-16..2e-15 relative (round-off of a solve with cond(K) ~ 1e4..1e5): 1e-12 is
    # round-off with room, and far below any discretisation error of a wrong load
    assert np.abs(u - exact).max() < 1e-12 * np.abs(exact).max()
    (cell, conn), = mesh.cells.items()
    _, strain = solid_strains(cell, x[conn], u[conn].reshape(len(conn), -1), STEEL,
                              incompatible=cell == "hexahedron")
    stress = strain @ STEEL.D
    np.testing.assert_allclose(stress[..., 0], p, rtol=1e-12)  # measured below 1e-14
    assert np.abs(stress[..., 1:]).max() < 1e-12 * p


# ---------------------------------------------------------------------------- curved surfaces
def sector(element, r1=0.5, r2=0.8, theta=1.1, h=0.4):
    """A cylinder sector r in [r1, r2], angle in [0, theta], z in [0, h]: the box generator's
    mesh mapped to polar coordinates (mid-nodes of tetra10 land on the arcs: curved faces)."""
    m = solid_box(r2 - r1, theta, h, 3, 5, 2, origin=(r1, 0.0, 0.0), element=element)
    r, t = m.points[:, 0], m.points[:, 1]
    pts = np.column_stack([r * np.cos(t), r * np.sin(t), m.points[:, 2]])
    return SolidMesh(pts, m.cells, m.node_sets)


@pytest.mark.parametrize("element", ELEMENTS)
def test_pressure_on_a_cylinder_is_the_projected_area(element):
    # int n dA over a surface depends on its boundary only: for the outer arc r = r2 between the
    # angles 0 and theta over a height h, h r2 (sin theta, 1 - cos theta, 0), faceted or not
    r1, r2, theta, h = 0.5, 0.8, 1.1, 0.4
    mesh = sector(element, r1, r2, theta, h)
    chord = np.array([np.sin(theta), 1 - np.cos(theta), 0.0])
    p0 = 4e6
    F = face_load(mesh, "xmax", pressure=p0).reshape(-1, 3).sum(axis=0)
    np.testing.assert_allclose(F, -p0 * h * r2 * chord, rtol=0, atol=RTOL * p0 * h * r2)
    F = face_load(mesh, "xmin", pressure=p0).reshape(-1, 3).sum(axis=0)  # inner face: normal inwards
    np.testing.assert_allclose(F, p0 * h * r1 * chord, rtol=0, atol=RTOL * p0 * h * r1)
    # a pressure growing linearly with z: its mean, 1.5 p0, times the projected area
    F = face_load(mesh, "xmax", pressure=lambda x: p0 * (1 + x[:, 2] / h)).reshape(-1, 3).sum(axis=0)
    np.testing.assert_allclose(F, -1.5 * p0 * h * r2 * chord, rtol=0, atol=RTOL * p0 * h * r2)


@pytest.mark.parametrize("element", ELEMENTS)
def test_hydrostatic_pressure_on_a_curved_solid(element):
    # the same on the cylinder sector (curved tetra10 faces): resultant rho V g, moment about
    # the origin rho X x g, X = int x dV; V and X from volume integrals, the row sums of the
    # consistent mass (rho int N_i dV, exact with the mass rule: sum_j N_j = 1)
    mesh = sector(element)
    _, M, _ = solid_mesh_matrices(mesh, STEEL)
    w = np.asarray(M.sum(axis=1)).reshape(-1, 3)[:, 0] / STEEL.rho  # int N_i dV (m^3)
    V, X = w.sum(), w @ mesh.points
    rho_g, p0 = 1e4 * np.array([0.6, 0.8, -0.3]), 2e5  # a tilted gravity: p quadratic on the faces
    f = face_load(mesh, solid_boundary_faces(mesh), pressure=lambda x: p0 - x @ rho_g)
    F, Mo = moment(mesh, f, np.zeros(3))
    np.testing.assert_allclose(F, rho_g * V, rtol=0, atol=RTOL * p0)
    np.testing.assert_allclose(Mo, np.cross(X, rho_g), rtol=0, atol=RTOL * p0)


# ---------------------------------------------------------------------------- surface cells
def test_gmsh_surface_cells_select_the_same_faces(tmp_path):
    mesh = box(1.0, 2.0, 1.0, 2, 3, 2)
    quads = np.vstack([b.take(np.isin(b.nodes, mesh.nodes("xmax")).all(axis=1)).nodes
                       for b in solid_boundary_faces(mesh)])
    # reversed node order and mid-nodes of quad8/quad9 cells do not matter: the corners select
    n = mesh.n_points
    extra = np.arange(n, n + 5 * len(quads)).reshape(len(quads), 5)
    pts = np.vstack([mesh.points, np.zeros((extra.size, 3))])
    cells = [("hexahedron", mesh.cells["hexahedron"]), ("quad", quads[:2, ::-1]),
             ("quad8", np.hstack([quads[2:4], extra[2:4, :4]])), ("quad9", np.hstack([quads[4:], extra[4:]]))]
    phys = [np.full(len(c), 1 if t == "hexahedron" else 7) for t, c in cells]
    m = meshio.Mesh(pts, cells, cell_data={"gmsh:physical": phys, "gmsh:geometrical": phys},
                    field_data={"body": np.array([1, 3]), "load": np.array([7, 2])})
    path = tmp_path / "box.msh"
    meshio.write(path, m, file_format="gmsh22", binary=False)
    m = meshio.read(path)
    solid = SolidMesh(m.points, {"hexahedron": m.cells_dict["hexahedron"]}, mesh.node_sets)
    f = face_load(solid, surface_cells(m, "load"), pressure=1e5)
    np.testing.assert_allclose(f[:3 * n], face_load(mesh, "xmax", pressure=1e5), rtol=0, atol=1e-9)
    assert not f[3 * n:].any()
    blocks = [b for b in m.cells if b.type != "hexahedron"]  # meshio cell blocks directly
    np.testing.assert_array_equal(face_load(solid, blocks, pressure=1e5), f)
    with pytest.raises(MeshError, match="no physical surface 'lid'"):
        surface_cells(m, "lid")


def test_mixed_mesh_faces_shared_across_cell_types():
    # a hexahedron and two wedges (its neighbour cut in two) share the quad x = 1: an interior
    # face, as is the wedges' common diagonal quad; on the boundary remain 5 quads of the
    # hexahedron, the 4 triangles and 3 quads (y = 0, x = 2, y = 1) of the wedges, and the whole
    # boundary under a uniform pressure balances
    h = box(2.0, 1.0, 1.0, 2, 1, 1)
    hexes = h.cells["hexahedron"]
    wedges = np.vstack([hexes[1, [0, 1, 2, 4, 5, 6]], hexes[1, [0, 2, 3, 4, 6, 7]]])
    mesh = SolidMesh(h.points, {"hexahedron": hexes[:1], "wedge": wedges}, h.node_sets)
    faces = solid_boundary_faces(mesh)
    assert sorted((f.cell_type, f.face_type, len(f)) for f in faces) == [
        ("hexahedron", "quad", 5), ("wedge", "quad", 3), ("wedge", "triangle", 4)]
    F, M = moment(mesh, face_load(mesh, faces, pressure=1e5), np.zeros(3))
    assert np.abs(F).max() < RTOL * 1e5 and np.abs(M).max() < RTOL * 1e5
    F = face_load(mesh, "ymin", pressure=1e5).reshape(-1, 3).sum(axis=0)  # a hexahedron and a wedge quad
    np.testing.assert_allclose(F, [0.0, 1e5 * 2.0, 0.0], rtol=RTOL)


# ---------------------------------------------------------------------------- interior faces, errors
def test_traction_on_an_interior_face_loads_it_once():
    mesh = box(2.0, 1.0, 1.0, 2, 1, 1)
    hexes = mesh.cells["hexahedron"]
    inner = hexes[0, [1, 2, 6, 5]]  # the face x = 1 shared by the two cells
    F = face_load(mesh, {"quad": inner[None]}, traction=[2.0, 0.0, 0.0]).reshape(-1, 3)
    np.testing.assert_allclose(F.sum(axis=0), [2.0, 0.0, 0.0], rtol=RTOL)
    with pytest.raises(ModelError, match="boundary faces only"):
        face_load(mesh, {"quad": inner[None]}, pressure=1.0)


def test_clear_errors():
    mesh = box(1.0, 1.0, 1.0, 2, 2, 2, element="tetra")
    with pytest.raises(MeshError, match="no node set 'top'"):
        face_load(mesh, "top", pressure=1.0)
    with pytest.raises(MeshError, match="'polygon' cells are no faces"):
        face_load(mesh, {"polygon": np.array([[0, 1, 2, 3, 4]])}, pressure=1.0)
    with pytest.raises(MeshError, match="not the corners of a face"):
        face_load(mesh, {"triangle": np.array([[0, 1, 26]])}, pressure=1.0)
    with pytest.raises(MeshError, match="face nodes outside"):
        face_load(mesh, {"triangle": np.array([[0, 1, mesh.n_points]])}, pressure=1.0)
    with pytest.raises(ModelError, match="exactly one"):
        face_load(mesh, "xmax")
    with pytest.raises(ModelError, match="exactly one"):
        face_load(mesh, "xmax", pressure=1.0, traction=[1.0, 0, 0])
    with pytest.raises(ModelError, match="traction"):
        face_load(mesh, "xmax", traction=[1.0, 0.0])
    with pytest.raises(MeshError, match="unknown face type"):
        face_forces("hexagon", np.zeros((1, 6, 3)), pressure=1.0)
