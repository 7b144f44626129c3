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
    """Real and complex, dense and sparse, with null columns and gaps inside columns (several
    sparse strings per column), values spread over 30 decades."""
    rng = np.random.default_rng(7)
    A = rng.standard_normal((7, 5)) * 10.0 ** rng.integers(-15, 15, (7, 5))
    A[2:5, 1] = 0.0
    A[:, 3] = 0.0
    S = sp.random(40, 40, density=0.08, random_state=3, format="csr")
    S = sp.csr_matrix(S + S.T + sp.eye(40))
    C = rng.standard_normal((4, 4)) + 1j * rng.standard_normal((4, 4))
    return {"A": A, "KSPARSE": S, "C": C, "CSPARSE": sp.csr_matrix(C * (np.abs(C) > 1))}


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
    # binary keeps the storage: sparse strings come back sparse
    assert sp.issparse(back["KSPARSE"]) == binary and not sp.issparse(back["CSPARSE"])


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
    write_op4(tmp_path / "ok.op4", {"A": np.eye(2)})
    monkeypatch.undo()
    pytest.importorskip("pyNastran")
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
