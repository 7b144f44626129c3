"""Matrices to and from other FE codes' files: exact round trips and a hand-written Abaqus file."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from fesub.errors import FesubError, ParameterError
from fesub.fe import PlaneStress, mesh_matrices, rectangle
from fesub.fe.matrix_io import read_abaqus_matrix, read_matrix, write_abaqus_matrix, write_matrix


@pytest.fixture(scope="module")
def plate():
    K, M, dm = mesh_matrices(rectangle(0.2, 0.05, 8, 3), PlaneStress(210e9, 0.3, 7850.0, 0.01))
    return K, M, dm


def test_matrix_market_round_trip_is_exact(tmp_path, plate):
    K, M, _ = plate
    for name, A in (("K.mtx", K), ("M.mtx", M), ("dense.mtx", K[:10, :10].toarray())):
        back = read_matrix(write_matrix(tmp_path / name, A))
        assert (back != sp.csr_matrix(A)).nnz == 0, name  # 17 digits: bit for bit


def test_abaqus_round_trip_is_exact_and_keeps_the_dof_table(tmp_path, plate):
    K, _, dm = plate
    dofs = np.array([(node + 1, comp + 1) for node in range(dm.n_nodes) for comp in range(2)])
    A, table = read_abaqus_matrix(write_abaqus_matrix(tmp_path / "K.mtx", K, dofs))
    assert np.array_equal(table, dofs)
    # the file holds the lower triangle: the matrix read is that triangle mirrored, bit for bit
    # (K itself is symmetric only to round-off when assembled by the NumPy twins)
    lower = sp.tril(K, format="csr")
    assert (A != lower + sp.tril(K, -1, format="csr").T).nnz == 0
    assert abs(A - K).max() <= 1e-15 * abs(K).max()


def test_hand_written_abaqus_spring(tmp_path):
    # two nodes joined by a spring k = 1e3 N/m along x, masses on the diagonal: the lower
    # triangle as Abaqus writes it (comment lines and blank lines are skipped)
    text = "** spring\n1,1,1,1,1000.\n2,1,1,1,-1000.\n\n2,1,2,1,1000.\n"
    path = tmp_path / "spring.mtx"
    path.write_text(text)
    A, dofs = read_abaqus_matrix(path)
    assert np.array_equal(A.toarray(), [[1e3, -1e3], [-1e3, 1e3]])
    assert dofs.tolist() == [[1, 1], [2, 1]]


def test_bad_files_are_named(tmp_path):
    bad = tmp_path / "bad.mtx"
    bad.write_text("1,1,one,1,2.0\n")
    with pytest.raises(FesubError, match="bad.mtx:1"):
        read_abaqus_matrix(bad)
    with pytest.raises(FesubError, match="MatrixMarket"):
        read_matrix(bad)
    with pytest.raises(FesubError, match="no matrix file"):
        read_matrix(tmp_path / "missing.mtx")
    with pytest.raises(ParameterError, match="end in"):
        write_matrix(tmp_path / "K.txt", np.eye(2))
