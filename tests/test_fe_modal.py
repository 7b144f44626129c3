"""Modal analysis: the sparse shift-invert path against dense LAPACK, Rayleigh damping ratios
against the complex eigenvalues of the damped first-order system."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sla

from fesub.errors import ModelError
from fesub.fe import PlaneStress, mesh_matrices, modes, rayleigh, rayleigh_ratio, rectangle
from fesub.fe.assembly import free_dofs

MAT = PlaneStress(70e9, 0.33, 2700.0, 0.01)


@pytest.mark.parametrize("clamped", [True, False])
def test_sparse_modes_match_dense(clamped):
    mesh = rectangle(0.6, 0.2, 24, 8)  # 450 DOFs: above the dense threshold, so eigsh is used
    K, M, dm = mesh_matrices(mesh, MAT)
    if clamped:
        fr = free_dofs(dm.n_dofs, dm.dofs(mesh.nodes("left")))
        K, M = K[fr][:, fr], M[fr][:, fr]
    assert K.shape[0] >= 400
    f, phi = modes(K, M, 8)
    lam = sla.eigh(K.toarray(), M.toarray(), eigvals_only=True, subset_by_index=[0, 7])
    f_ref = np.sqrt(np.clip(lam, 0, None)) / (2 * np.pi)
    if clamped:
        np.testing.assert_allclose(f, f_ref, rtol=1e-9)  # both converge to round-off
    else:
        # free body: 3 rigid-body modes reported as exactly 0, the elastic ones as above
        assert np.all(f[:3] == 0.0)
        np.testing.assert_allclose(f[3:], f_ref[3:], rtol=1e-9)
    # mass-normalised and K-orthogonal
    # orthonormality to round-off of the Lanczos vectors (re-normalised, not re-orthogonalised)
    np.testing.assert_allclose(phi.T @ (M @ phi), np.eye(8), atol=1e-9)
    Kp = phi.T @ (K @ phi)
    np.testing.assert_allclose(Kp, np.diag((2 * np.pi * f) ** 2), atol=1e-7 * Kp.max())


def test_rayleigh_damping_ratios_match_complex_eigenvalues():
    mesh = rectangle(0.5, 0.05, 20, 2)
    K, M, dm = mesh_matrices(mesh, MAT)
    fr = free_dofs(dm.n_dofs, dm.dofs(mesh.nodes("left")))
    K, M = K[fr][:, fr].toarray(), M[fr][:, fr].toarray()
    alpha, beta = 3.0, 2e-6
    C = rayleigh(M, K, alpha, beta)
    n = K.shape[0]
    A = np.block([[np.zeros((n, n)), np.eye(n)], [-np.linalg.solve(M, K), -np.linalg.solve(M, C)]])
    s = np.linalg.eigvals(A)
    s = s[s.imag > 0]
    s = s[np.argsort(np.abs(s))][:5]
    wn = np.abs(s)  # undamped natural frequency (rad/s) for proportional damping
    zeta = -s.real / wn
    # |s| = w_n exactly for proportional damping; eigvals of the 1st-order system to ~1e-10
    np.testing.assert_allclose(wn / (2 * np.pi), modes(K, M, 5)[0], rtol=1e-8)
    np.testing.assert_allclose(zeta, rayleigh_ratio(wn, alpha, beta), rtol=1e-7)  # eigvals round-off
    with pytest.raises(ModelError, match="Rayleigh"):
        rayleigh(M, K, -1.0, 0.0)


def test_modes_bad_count():
    K, M, dm = mesh_matrices(rectangle(1.0, 1.0, 1, 1), MAT)
    with pytest.raises(ModelError, match="number of modes"):
        modes(K, M, 0)
    with pytest.raises(ModelError, match="number of modes"):
        modes(K, M, dm.n_dofs + 1)
