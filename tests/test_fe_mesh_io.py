"""Mesh files: round trips through meshio with named sets, and one clear error for bad input."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fesub.errors import FesubError, MeshError, ModelError
from fesub.fe import BeamSection, Mesh, PlaneStress, beam_line, read, rectangle


def _sample_meshes():
    q = rectangle(2.0, 1.0, 4, 3, angle=0.3, origin=(0.5, -0.2))
    q.element_sets["left_half"] = ("quad", np.array([0, 1, 4, 5, 8, 9]))
    t = rectangle(1.0, 0.5, 3, 2, element="triangle")
    t.element_sets["first"] = ("triangle", np.array([0, 2]))
    f = beam_line((0.0, 0.0), (1.0, 0.5), 6)
    return {"quad": q, "triangle": t, "frame": f}


FORMATS = [("mesh.msh", {}), ("mesh41.msh", {"file_format": "gmsh"}), ("mesh.vtu", {}),
           ("mesh.xdmf", {"data_format": "XML"})]


def _assert_same(a: Mesh, b: Mesh):
    # coordinates are written with 16-17 significant digits (or binary): exact to round-off
    np.testing.assert_allclose(b.points, a.points, rtol=0, atol=1e-15 * np.abs(a.points).max())
    assert set(b.cells) == set(a.cells)
    for k in a.cells:
        np.testing.assert_array_equal(b.cells[k], a.cells[k])
    assert set(b.node_sets) == set(a.node_sets)
    for k in a.node_sets:
        np.testing.assert_array_equal(b.node_sets[k], a.node_sets[k])
    assert set(b.edge_sets) == set(a.edge_sets)
    for k in a.edge_sets:
        np.testing.assert_array_equal(b.edge_sets[k], a.edge_sets[k])
    assert set(b.element_sets) == set(a.element_sets)
    for k, (etype, idx) in a.element_sets.items():
        assert b.element_sets[k][0] == etype
        np.testing.assert_array_equal(np.sort(b.element_sets[k][1]), np.sort(idx))


@pytest.mark.parametrize("kind", ["quad", "triangle", "frame"])
@pytest.mark.parametrize("fname, kw", FORMATS, ids=["msh22", "msh41", "vtu", "xdmf"])
def test_round_trip_keeps_points_cells_and_sets(tmp_path, kind, fname, kw):
    if fname.endswith(".xdmf"):
        pytest.importorskip("h5py", reason="meshio's XDMF reader and writer import h5py")
    mesh = _sample_meshes()[kind]
    path = tmp_path / fname
    mesh.write(path, **kw)
    back = read(path)
    _assert_same(mesh, back)
    if fname.endswith(".msh"):
        with open(path) as fh:
            head = fh.read(40)
        assert ("4.1" if "41" in fname else "2.2") in head


def test_xdmf_without_h5py_is_a_mesh_error(tmp_path, monkeypatch):
    # hide h5py (installed with the test extras) as on a machine without it
    import sys

    monkeypatch.setitem(sys.modules, "h5py", None)
    with pytest.raises(MeshError, match=r"mesh\.xdmf.*h5py"):
        _sample_meshes()["quad"].write(tmp_path / "mesh.xdmf", data_format="XML")


GMSH41 = textwrap.dedent("""\
    $MeshFormat
    4.1 0 8
    $EndMeshFormat
    $PhysicalNames
    3
    0 3 "tip"
    1 2 "clamp"
    2 1 "plate"
    $EndPhysicalNames
    $Entities
    4 4 1 0
    1 0 0 0 0
    2 2 0 0 0
    3 2 1 0 1 3
    4 0 1 0 0
    1 0 0 0 2 0 0 0 2 1 -2
    2 2 0 0 2 1 0 0 2 2 -3
    3 0 1 0 2 1 0 0 2 3 -4
    4 0 0 0 0 1 0 1 2 2 4 -1
    1 0 0 0 2 1 0 1 1 4 1 2 3 4
    $EndEntities
    $Nodes
    6 6 1 6
    0 1 0 1
    1
    0 0 0
    0 2 0 1
    2
    2 0 0
    0 3 0 1
    3
    2 1 0
    0 4 0 1
    4
    0 1 0
    1 1 0 1
    5
    1 0 0
    1 3 0 1
    6
    1 1 0
    $EndNodes
    $Elements
    3 5 1 5
    0 3 15 1
    1 3
    1 4 1 1
    2 4 1
    2 1 3 2
    3 1 5 6 4
    4 5 2 3 6
    $EndElements
    """)


def test_reads_gmsh41_as_gmsh_writes_it(tmp_path):
    """A hand-written 2 x 1 plate in the layout Gmsh 4.1 uses (nodes grouped by entity)."""
    p = tmp_path / "plate.msh"
    p.write_text(GMSH41)
    m = read(p)
    np.testing.assert_allclose(m.points, [[0, 0], [2, 0], [2, 1], [0, 1], [1, 0], [1, 1]])
    np.testing.assert_array_equal(m.cells["quad"], [[0, 4, 5, 3], [4, 1, 2, 5]])
    np.testing.assert_array_equal(m.nodes("tip"), [2])
    np.testing.assert_array_equal(m.edges("clamp"), [[3, 0]])
    assert m.element_sets["plate"][0] == "quad"
    np.testing.assert_array_equal(np.sort(m.element_sets["plate"][1]), [0, 1])


def test_gmsh41_with_untagged_entities_is_a_clear_error(tmp_path):
    """meshio cannot align physical tags when only some entities have them: a MeshError with a
    hint, not misassigned sets."""
    txt = GMSH41.replace("1 0 0 0 2 1 0 1 1 4 1 2 3 4", "1 0 0 0 2 1 0 0 4 1 2 3 4")
    p = tmp_path / "partial.msh"
    p.write_text(txt)
    with pytest.raises(MeshError, match=r"partial\.msh.*physical group"):
        read(p)


# ---------------------------------------------------------------------------- bad input
def _valid_file(tmp_path, name="ok.msh"):
    p = tmp_path / name
    _sample_meshes()["quad"].write(p)
    return p


def test_missing_file(tmp_path):
    with pytest.raises(MeshError, match=r"nothere\.msh.*no such"):
        read(tmp_path / "nothere.msh")


@pytest.mark.parametrize("name", ["ok.msh", "ok.vtu"])
def test_truncated_file(tmp_path, name):
    p = _valid_file(tmp_path, name)
    data = p.read_bytes()
    p.write_bytes(data[: len(data) // 2])
    with pytest.raises(MeshError, match=rf"{name.replace('.', r'[.]')}.*cannot read"):
        read(p)


def test_garbled_file(tmp_path):
    p = tmp_path / "garbled.msh"
    p.write_text("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\nthree\n1 0 0 0\n$EndNodes\n")
    with pytest.raises(MeshError, match=r"garbled\.msh"):
        read(p)


def test_unknown_cell_type(tmp_path):
    import meshio

    p = tmp_path / "tet.vtu"
    pts = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1.0]])
    meshio.write(p, meshio.Mesh(pts, [("tetra", np.array([[0, 1, 2, 3]]))]))
    with pytest.raises(MeshError, match=r"tet\.vtu.*unknown cell type 'tetra'"):
        read(p)
    with pytest.raises(MeshError, match="unknown cell type 'hexahedron'"):
        Mesh(pts[:, :2], {"hexahedron": np.zeros((1, 8), int)})


def test_missing_node_set():
    m = rectangle(1.0, 1.0, 2, 2)
    with pytest.raises(MeshError, match=r"no node set 'tip'.*available"):
        m.nodes("tip")
    with pytest.raises(MeshError, match=r"no edge set 'tip'"):
        m.edges("tip")


@pytest.mark.parametrize("field, kwargs, match", [
    ("E", dict(E=0.0, nu=0.3, rho=1.0), r"E \(Young's modulus, Pa\) must be finite and > 0"),
    ("E", dict(E=-1e9, nu=0.3, rho=1.0), r"E \(Young's modulus"),
    ("nu", dict(E=1e9, nu=0.5, rho=1.0), r"nu \(Poisson's ratio\) must lie in \(-1.0, 0.5\)"),
    ("nu", dict(E=1e9, nu=-1.0, rho=1.0), r"nu \(Poisson's ratio\)"),
    ("nu", dict(E=1e9, nu=0.7, rho=1.0), r"nu \(Poisson's ratio\)"),
    ("rho", dict(E=1e9, nu=0.3, rho=0.0), r"rho \(density, kg/m\^3\) must be finite and > 0"),
    ("rho", dict(E=1e9, nu=0.3, rho=float("nan")), r"rho \(density"),
])
def test_bad_material(field, kwargs, match):
    with pytest.raises(ModelError, match=match):
        PlaneStress(**kwargs)


def test_bad_beam_section():
    with pytest.raises(ModelError, match=r"E \(Young's modulus"):
        BeamSection(-1.0, 7800.0, 1e-4, 1e-8)
    with pytest.raises(ModelError, match=r"rho \(density"):
        BeamSection(2e11, 0.0, 1e-4, 1e-8)


def test_unused_and_duplicate_nodes(tmp_path):
    m = rectangle(1.0, 1.0, 2, 2)
    pts = np.vstack([m.points, [[5.0, 5.0]]])
    unused = Mesh(pts, m.cells, source="unused.vtu")
    with pytest.raises(MeshError, match=r"unused\.vtu: 1 unused node\(s\), e\.g\. \[9\]"):
        unused.check()
    # through a file: read() checks by default
    unused.write(tmp_path / "unused.vtu")
    with pytest.raises(MeshError, match=r"unused\.vtu: 1 unused node"):
        read(tmp_path / "unused.vtu")
    # duplicate: node 9 at the position of node 4, and one quad uses it instead of 4
    pts = np.vstack([m.points, m.points[4:5]])
    conn = m.cells["quad"].copy()
    conn[3][conn[3] == 4] = 9
    dup = Mesh(pts, {"quad": conn}, source="dup.msh")
    with pytest.raises(MeshError, match=r"dup\.msh: 1 duplicate node\(s\) at \[0\.5, 0\.5\]"):
        dup.check()


def test_bad_connectivity_and_points():
    with pytest.raises(MeshError, match="outside"):
        Mesh(np.zeros((3, 2)), {"triangle": np.array([[0, 1, 3]])})
    with pytest.raises(MeshError, match="NaN"):
        Mesh(np.array([[0, 0], [1, 0], [np.nan, 1.0]]), {"triangle": np.array([[0, 1, 2]])})
    with pytest.raises(MeshError, match="inverted"):
        Mesh(np.array([[0, 0], [0, 1.0], [1, 0]]), {"triangle": np.array([[0, 1, 2]])}).check()


# ---------------------------------------------------------------------------- fuzzing
_FUZZ = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _read_only_mesh_error(path):
    try:
        read(path)
    except MeshError:
        pass
    # any other exception propagates and fails the test


@_FUZZ
@given(data=st.binary(min_size=0, max_size=400), suffix=st.sampled_from([".msh", ".vtu"]))
def test_fuzz_random_bytes(tmp_path, data, suffix):
    p = tmp_path / f"fuzz{suffix}"
    p.write_bytes(data)
    _read_only_mesh_error(p)


@pytest.fixture(scope="module")
def valid_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("valid")
    out = {}
    for name, kw in (("v.msh", {}), ("v41.msh", {"file_format": "gmsh"}), ("v.vtu", {})):
        _sample_meshes()["quad"].write(d / name, **kw)
        out[name] = (d / name).read_bytes()
    return out


@_FUZZ
@given(name=st.sampled_from(["v.msh", "v41.msh", "v.vtu"]), frac=st.floats(0.0, 1.0),
       flip=st.integers(0, 10**6), garble=st.booleans())
def test_fuzz_truncated_or_garbled_valid_file(tmp_path, valid_files, name, frac, flip, garble):
    data = bytearray(valid_files[name])
    if garble:
        i = flip % len(data)
        data[i] = (data[i] + 1 + flip % 254) % 256
    else:
        data = data[: int(frac * len(data))]
    p = tmp_path / name
    p.write_bytes(bytes(data))
    _read_only_mesh_error(p)


def test_all_errors_are_fesub_errors():
    assert issubclass(MeshError, FesubError) and issubclass(ModelError, FesubError)


def test_huge_or_non_finite_coordinates_are_named_not_called_degenerate():
    from fesub.errors import MeshError
    from fesub.fe import rectangle

    with pytest.raises(MeshError, match="below 1e100 m"):
        rectangle(1e300, 1e300, 2, 2)
    m = rectangle(1.0, 1.0, 2, 2)
    m.points[0, 0] = float("nan")
    with pytest.raises(MeshError, match="must be finite"):
        m.check()
    rectangle(1e90, 1e90, 2, 2)  # large but representable: a valid mesh
