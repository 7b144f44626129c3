"""Models and mode shapes to and from the field's other tools: Nastran OP4 (checked with
pyNastran as the independent reader and writer), the reduced-model export to MatrixMarket,
Abaqus and OP4, and 3D mode shapes in VTU (read back by meshio) and rendered by pyvista."""

from __future__ import annotations

import builtins
import struct

import numpy as np
import pytest
import scipy.sparse as sp

from fesub.errors import FesubError, ParameterError
from fesub.fe import PlaneStress, rectangle
from fesub.fe.matrix_io import export_reduced_model, read_abaqus_matrix, read_reduced_model
from fesub.fe.nastran import read_op4, write_op4

MAT = PlaneStress(210e9, 0.3, 7850.0, 0.01)


def _dense(A):
    return A.toarray() if sp.issparse(A) else np.asarray(A)


@pytest.fixture(scope="module")
def matrices():
    """Real and complex, dense and sparse, with null columns, columns that start late and end
    early, gaps inside columns (several sparse strings per column), a run of 20 000 rows (cut
    into strings of at most 16 000 values), values spread over 30 decades."""
    rng = np.random.default_rng(7)
    A = rng.standard_normal((7, 5)) * 10.0 ** rng.integers(-15, 15, (7, 5))
    A[2:5, 1] = 0.0
    A[:, 3] = 0.0
    A[:2, 0] = 0.0
    A[-1, 4] = 0.0
    long = sp.lil_matrix((20000, 3))
    long[:, 1] = rng.standard_normal((20000, 1))
    long[[3, 7], 2] = 1.5
    S = sp.random(40, 40, density=0.08, random_state=3, format="csr")
    S = sp.csr_matrix(S + S.T + sp.eye(40))
    C = rng.standard_normal((4, 4)) + 1j * rng.standard_normal((4, 4))
    return {"A": A, "KSPARSE": S, "C": C, "CSPARSE": sp.csr_matrix(C * (np.abs(C) > 1)),
            "LONG": sp.csr_matrix(long)}


@pytest.fixture(scope="module")
def reduced():
    from fesub.substructure import CraigBampton, Substructure

    sub = Substructure(rectangle(0.2, 0.05, 8, 3), MAT, clamped=["left"], rayleigh=(2.0, 1e-6), name="plate")
    return CraigBampton(sub, boundary=sub.dofs("right"), n_modes=6)


# ------------------------------------------------------------------------------------------ OP4
@pytest.mark.parametrize("binary", [True, False])
def test_op4_round_trip_is_exact(tmp_path, matrices, binary):
    pytest.importorskip("pyNastran")
    back = read_op4(write_op4(tmp_path / "m.op4", matrices, binary=binary))
    assert sorted(back) == sorted(matrices)
    for name, A in matrices.items():
        # double precision in binary; 17 significant digits (1P,3E23.16) in ASCII: both exact
        np.testing.assert_array_equal(_dense(back[name]), _dense(A), err_msg=name)
        assert back[name].dtype == (np.complex128 if name.startswith("C") else np.float64)
    # binary keeps the storage: real sparse matrices are written as strings and come back sparse
    assert sp.issparse(back["KSPARSE"]) == binary and not sp.issparse(back["CSPARSE"])
    assert not sp.issparse(back["A"])


def test_op4_written_by_fesub_is_read_by_pynastran(tmp_path, matrices):
    """The binary writer is fesub's own: pyNastran's reader is the independent check."""
    op4 = pytest.importorskip("pyNastran.op4.op4")
    from cpylog import SimpleLogger

    write_op4(tmp_path / "m.op4", matrices)
    raw = op4.read_op4(str(tmp_path / "m.op4"), log=SimpleLogger(level="error"))
    for name, A in matrices.items():
        np.testing.assert_array_equal(_dense(raw[name].data), _dense(A), err_msg=name)
    assert raw["KSPARSE"].form == 6 and raw["A"].form == 2 and raw["C"].form == 1  # symmetric, rect., square


def test_op4_written_by_pynastran_is_read_by_fesub(tmp_path, matrices):
    op4 = pytest.importorskip("pyNastran.op4.op4")
    from cpylog import SimpleLogger

    given = {"A": (2, matrices["A"]), "C": (1, matrices["C"]),
             "KSPARSE": (6, sp.coo_matrix(sp.csc_matrix(matrices["KSPARSE"])))}
    op4.write_op4(str(tmp_path / "p.op4"), given, is_binary=False, log=SimpleLogger(level="error"))
    back = read_op4(tmp_path / "p.op4")
    for name in given:
        np.testing.assert_array_equal(_dense(back[name]), _dense(matrices[name]), err_msg=name)


def test_hand_written_op4_files(tmp_path):
    """A spring of 1e3 N/m between two DOFs, written from the format's definition: ASCII (one
    column per record, 3 values per line) and binary (Fortran records, big-endian here to check
    that the byte order is detected)."""
    pytest.importorskip("pyNastran")
    text = ("       2       2       6       2KSPRING 1P,3E23.16\n"
            "       1       1       2\n"
            " 1.0000000000000000E+03-1.0000000000000000E+03\n"
            "       2       1       2\n"
            "-1.0000000000000000E+03 1.0000000000000000E+03\n"
            "       3       1       1\n"
            " 1.0000000000000000E+00\n")
    (tmp_path / "a.op4").write_text(text)
    K = np.array([[1e3, -1e3], [-1e3, 1e3]])
    np.testing.assert_array_equal(read_op4(tmp_path / "a.op4")["KSPRING"], K)

    def record(payload):
        n = struct.pack(">i", len(payload))
        return n + payload + n

    blob = record(struct.pack(">4i8s", 2, 2, 6, 2, b"KSPRING "))
    for j in range(2):
        blob += record(struct.pack(">3i2d", j + 1, 1, 4, *K[:, j]))
    blob += record(struct.pack(">3id", 3, 1, 2, 1.0))
    (tmp_path / "b.op4").write_bytes(blob)
    np.testing.assert_array_equal(read_op4(tmp_path / "b.op4")["KSPRING"], K)


def test_op4_errors(tmp_path, monkeypatch):
    with pytest.raises(ParameterError, match="names"):
        write_op4(tmp_path / "x.op4", {"TOOLONGNAME": np.eye(2)})
    with pytest.raises(ParameterError, match="NaN"):
        write_op4(tmp_path / "x.op4", {"A": np.array([[np.nan]])})
    with pytest.raises(ParameterError, match="2-D"):
        write_op4(tmp_path / "x.op4", {"A": np.ones(3)})
    # pyNastran missing: the error names the package and the extra
    real_import = builtins.__import__

    def no_pynastran(name, *args, **kw):
        if name.startswith("pyNastran"):
            raise ImportError(name)
        return real_import(name, *args, **kw)

    monkeypatch.setattr(builtins, "__import__", no_pynastran)
    for call in (lambda: read_op4(tmp_path / "x.op4"),
                 lambda: write_op4(tmp_path / "x.op4", {"A": np.eye(2)}, binary=False)):
        with pytest.raises(FesubError, match=r"pip install pyNastran .*fesub\[nastran\]"):
            call()
    # the binary writer is fesub's own: no pyNastran needed
    assert write_op4(tmp_path / "ok.op4", {"A": np.eye(2)}).stat().st_size > 0


def test_op4_bad_files_are_named(tmp_path):
    pytest.importorskip("pyNastran")
    write_op4(tmp_path / "ok.op4", {"A": np.eye(2)})
    (tmp_path / "junk.op4").write_bytes(b"\x00" * 40)
    with pytest.raises(FesubError, match="junk.op4"):
        read_op4(tmp_path / "junk.op4")
    with pytest.raises(FesubError, match="no OP4 file"):
        read_op4(tmp_path / "missing.op4")
    with pytest.raises(FesubError, match="no matrix"):
        read_op4(tmp_path / "ok.op4", ["B"])


# ------------------------------------------------------------------------- reduced-model export
@pytest.mark.parametrize("source", ["mtx", "abaqus", "op4"])
def test_reduced_model_export_round_trip(tmp_path, reduced, source):
    if source == "op4":
        pytest.importorskip("pyNastran")
    from fesub.contact import Body

    cb = reduced
    rm = read_reduced_model(export_reduced_model(cb, tmp_path / "plate"), source=source)
    # every format holds the symmetrised matrices bit for bit
    np.testing.assert_array_equal(rm.M, 0.5 * (cb.Mr + cb.Mr.T))
    np.testing.assert_array_equal(rm.K, 0.5 * (cb.Kr + cb.Kr.T))
    # eigenfrequencies to round-off: the symmetrisation moves entries by ~1 ulp, the
    # eigenvalues by as much relative to the largest (1e-12 leaves 1e3 ulp of room)
    f0 = cb.frequencies()
    np.testing.assert_allclose(rm.frequencies(), f0, rtol=1e-12)
    np.testing.assert_array_equal(rm.mode_freqs_hz, cb.mode_freqs_hz)  # written with repr: exact
    assert rm.n_modes == cb.n_modes and np.array_equal(rm.boundary, cb.boundary)
    # the coordinate table says which node and component each boundary coordinate is
    sub = cb.substructure
    g = sub.retained[cb.boundary]
    np.testing.assert_array_equal(rm.node[cb.n_modes:], g // 2)
    assert list(rm.component[cb.n_modes:]) == ["x", "y"] * (cb.boundary.size // 2)
    assert np.all(sub.mesh.points[rm.node[cb.n_modes:], 0] == 0.2)  # the right edge
    # the same contact body as the one built from the Craig-Bampton model itself
    ref = Body.from_craig_bampton(cb)
    body = Body(rm.M, rm.K, rm.X, rm.node_dofs, rm.C, name=rm.name)
    for a in ("M", "K", "C", "X", "node_dofs"):
        np.testing.assert_array_equal(getattr(body, a), getattr(ref, a), err_msg=a)
    assert rm.rayleigh == (2.0, 1e-6) and rm.name == "plate"


def test_reduced_model_abaqus_labels(tmp_path, reduced):
    """Boundary rows carry (node + 1, 1 | 2) labels, modal rows labels after the mesh's nodes."""
    cb = reduced
    d = export_reduced_model(cb, tmp_path / "plate")
    _, table = read_abaqus_matrix(d / "K_abaqus.mtx")
    n_nodes = cb.substructure.mesh.n_points
    modal = table[table[:, 0] > n_nodes]
    assert modal.tolist() == [[n_nodes + 1 + j, 1] for j in range(cb.n_modes)]
    g = cb.substructure.retained[cb.boundary]
    assert sorted(map(tuple, table[table[:, 0] <= n_nodes])) == sorted(zip(g // 2 + 1, g % 2 + 1))


def test_reduced_model_of_plain_matrices(tmp_path):
    """A Craig-Bampton model of bare matrices (a spring chain) exports without node geometry."""
    from fesub.substructure import CraigBampton

    n = 12
    K = sp.diags([2e4 * np.ones(n), -1e4 * np.ones(n - 1), -1e4 * np.ones(n - 1)], [0, 1, -1], format="csr")
    M = sp.identity(n, format="csr") * 0.5
    cb = CraigBampton(K, M, boundary=[0, n - 1], n_modes=3)
    rm = read_reduced_model(export_reduced_model(cb, tmp_path / "chain"), source="abaqus")
    assert rm.X is None and rm.node_dofs is None and rm.rayleigh == (0.0, 0.0)
    np.testing.assert_allclose(rm.frequencies(), cb.frequencies(), rtol=1e-12)
    with pytest.raises(ParameterError, match="source"):
        read_reduced_model(tmp_path / "chain", source="nastran")
    with pytest.raises(FesubError, match="not a reduced model"):
        read_reduced_model(tmp_path / "nowhere")


# ------------------------------------------------------------------------------ 3D mode shapes
def _box(nx=4, ny=2, nz=2, lx=0.4, ly=0.1, lz=0.1):
    """A structured box of hexahedra (VTK order), as meshio points and cells."""
    x, y, z = (np.linspace(0.0, L, n + 1) for L, n in ((lx, nx), (ly, ny), (lz, nz)))
    X, Y, Z = np.meshgrid(x, y, z, indexing="ij")
    pts = np.column_stack([X.ravel(), Y.ravel(), Z.ravel()])
    node = np.arange(pts.shape[0]).reshape(nx + 1, ny + 1, nz + 1)
    i, j, k = (a.ravel() for a in np.meshgrid(np.arange(nx), np.arange(ny), np.arange(nz), indexing="ij"))
    hexes = np.column_stack([node[i, j, k], node[i + 1, j, k], node[i + 1, j + 1, k], node[i, j + 1, k],
                             node[i, j, k + 1], node[i + 1, j, k + 1], node[i + 1, j + 1, k + 1],
                             node[i, j + 1, k + 1]])
    return pts, hexes


def _tetra10(pts, tets):
    """Quadratic tetrahedra: a node at the middle of every edge (VTK edge order)."""
    edges = [(0, 1), (1, 2), (0, 2), (0, 3), (1, 3), (2, 3)]
    pairs = np.sort(np.stack([tets[:, [a, b]] for a, b in edges], axis=1).reshape(-1, 2), axis=1)
    uniq, inv = np.unique(pairs, axis=0, return_inverse=True)
    mid = 0.5 * (pts[uniq[:, 0]] + pts[uniq[:, 1]])
    return np.vstack([pts, mid]), np.hstack([tets, pts.shape[0] + inv.reshape(-1, 6)])


def _bending(points, lx=0.4):
    """An analytic field: first-bending-like deflection w = (x/L)^2 along z, with the rotation's
    axial displacement -z' w' (plane sections stay plane), and a twist about x."""
    x, y, z = points.T
    w = (x / lx) ** 2
    return np.column_stack([-(z - 0.05) * 2 * x / lx ** 2, -0.3 * (z - 0.05) * x / lx, w + 0.3 * (y - 0.05) * x / lx])


@pytest.fixture(scope="module")
def solid_meshes():
    import meshio

    pts, hexes = _box()
    tets = np.vstack([hexes[:, c] for c in ([0, 1, 2, 6], [0, 2, 3, 6], [0, 3, 7, 6], [0, 7, 4, 6],
                                            [0, 4, 5, 6], [0, 5, 1, 6])])
    wedges = np.vstack([hexes[:, [0, 1, 2, 4, 5, 6]], hexes[:, [0, 2, 3, 4, 6, 7]]])
    p10, t10 = _tetra10(pts, tets)
    return {"hexahedron": meshio.Mesh(pts, [("hexahedron", hexes)]),
            "tetra": meshio.Mesh(pts, [("tetra", tets)]),
            "tetra10": meshio.Mesh(p10, [("tetra10", t10)]),
            "wedge": meshio.Mesh(pts, [("wedge", wedges)]),
            "mixed": meshio.Mesh(pts, [("hexahedron", hexes[:4]), ("wedge", wedges[8:])])}


@pytest.mark.parametrize("kind", ["hexahedron", "tetra", "tetra10", "wedge", "mixed"])
def test_solid_modes_vtu_read_by_meshio(tmp_path, solid_meshes, kind):
    import meshio

    from fesub.plots import modes as pm

    mesh = solid_meshes[kind]
    u1 = _bending(mesh.points)
    u2 = np.column_stack([np.zeros(len(mesh.points)), mesh.points[:, 0], -mesh.points[:, 1]])
    f = np.array([123.456789012345, 987.654321098765])
    zeta = np.array([0.01, 0.0234567890123])
    out = pm.write_modes_vtu(mesh, [u1, u2.ravel()], tmp_path / f"{kind}.vtu", frequencies_hz=f,
                             damping_ratios=zeta)
    back = meshio.read(out)
    np.testing.assert_array_equal(back.points, mesh.points)
    for block in mesh.cells:
        np.testing.assert_array_equal(back.cells_dict[block.type], block.data)
    # every component written (binary VTU: exact), z included
    np.testing.assert_array_equal(back.point_data[f"mode_01 ({f[0]:.6g} Hz)"], u1)
    np.testing.assert_array_equal(back.point_data[f"mode_02 ({f[1]:.6g} Hz)"], u2)
    # frequency (Hz) and damping ratio recovered as numbers, exactly (17 digits)
    np.testing.assert_array_equal(back.field_data["natural_frequency_hz"], f)
    np.testing.assert_array_equal(back.field_data["damping_ratio"], zeta)


def test_solid_modes_not_expanded_are_refused(tmp_path, solid_meshes):
    from fesub.plots import modes as pm

    mesh = solid_meshes["hexahedron"]
    n = len(mesh.points)
    with pytest.raises(ParameterError, match=rf"shapes\[0\]: got shape \({3 * n - 12},\); expected each mode a "
                       rf"nodal field \({n}, 3\) or a DOF vector of {3 * n} entries.*expanded to every node"):
        pm.write_modes_vtu(mesh, [np.zeros(3 * n - 12)], tmp_path / "x.vtu")
    with pytest.raises(ParameterError, match=r"\(45, 3\)"):  # plane (n, 2) fields do not fit a solid
        pm.write_modes_vtu(mesh, [np.zeros((n, 2))], tmp_path / "x.vtu")
    with pytest.raises(ParameterError, match="damping ratios"):
        pm.write_modes_vtu(mesh, [np.zeros((n, 3))], tmp_path / "x.vtu", damping_ratios=[0.1, 0.2])
    with pytest.raises(ParameterError, match="plane meshes"):
        pm.plot_coupled_modes([(mesh, np.zeros((n, 3)))], tmp_path / "x.png")
    assert not (tmp_path / "x.vtu").exists()


def test_solid_deformed_grid_moves_every_component(solid_meshes):
    pytest.importorskip("pyvista")
    from fesub.plots import modes as pm

    mesh = solid_meshes["tetra10"]
    u = _bending(mesh.points)
    grid = pm.deformed_grid(mesh, u, scale=0.05)
    # the warp is x + s u, node by node (VTK stores float32 points only if asked: here float64)
    np.testing.assert_allclose(np.asarray(grid.points), mesh.points + 0.05 * u, rtol=0, atol=1e-15)
    np.testing.assert_allclose(grid.point_data["magnitude"], np.linalg.norm(u, axis=1), rtol=1e-15)
    assert grid.n_cells == len(mesh.cells[0].data) and set(grid.celltypes) == {24}  # VTK_QUADRATIC_TETRA


@pytest.mark.parametrize("kind", ["hexahedron", "tetra10"])
def test_solid_mode_rendered_off_screen(tmp_path, solid_meshes, kind):
    """Rendering needs pyvista and Pillow (optional), as in the plane-mode rendering tests."""
    pytest.importorskip("pyvista")
    Image = pytest.importorskip("PIL.Image")
    from fesub.plots import modes as pm

    mesh = solid_meshes[kind]
    out = pm.render_mode(mesh, _bending(mesh.points), tmp_path / "mode.png", title=f"{kind} bending",
                         frequency_hz=123.4, window_size=(480, 320))
    img = np.asarray(Image.open(out).convert("RGB")).astype(int)
    assert img.shape == (320, 480, 3)
    painted = np.any(np.abs(img - 255) > 8, axis=-1)
    # the warped box, the label and the colour bar cover several % of the picture, in many colours
    assert painted.mean() > 0.02, painted.mean()
    assert len(np.unique(img.reshape(-1, 3), axis=0)) > 20
    blank = pm.render_mode(mesh, np.zeros((len(mesh.points), 3)), tmp_path / "rest.png", window_size=(480, 320))
    rest = np.asarray(Image.open(blank).convert("RGB")).astype(int)
    assert np.mean(np.any(rest != img, axis=-1)) > 0.01  # the deformation is drawn
