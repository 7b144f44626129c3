"""The O(n^2) primal projection (``eigen.project_rows``) against the dense products with the
null-space bases, and the cached frictionless Ritz basis against a fresh eigen-solve."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sla

from fesub.contact.analyses import eigen
from fesub.models.beam_on_beam import BeamOnBeamParams, build, contact_system

EPS = np.finfo(float).eps


@pytest.mark.parametrize("seed", range(5))
def test_project_rows_equals_the_dense_products(seed):
    rng = np.random.default_rng(seed)
    n = 40
    X = rng.standard_normal((n, n)) * 10.0 ** rng.uniform(-3, 3, (n, n))
    bl, br = np.zeros(n), np.zeros(n)
    # six non-zeros each, as a contact row; the pivots of the two rows differ or coincide
    bl[rng.choice(n, 6, replace=False)] = rng.standard_normal(6)
    br[rng.choice(n, 6, replace=False)] = rng.standard_normal(6)
    for b2 in (br, bl):
        ref = eigen.null_space_row(bl).T @ X @ eigen.null_space_row(b2)
        got = eigen.project_rows(X, bl, b2)
        # each entry is a sum of at most four products (|l| <= 1: the pivot is the largest |b_i|):
        # the two evaluation orders differ by a few eps of the largest |X| entry
        np.testing.assert_allclose(got, ref, rtol=0, atol=8 * EPS * np.abs(X).max())
        assert got.shape == (n - 1, n - 1)


def test_ritz_basis_cached_across_mu_is_the_fresh_one():
    S = contact_system(build(BeamOnBeamParams(nx1=15, nx2=20), from_files=False))
    pos = np.linspace(0.02, 0.08, 4)
    with pytest.warns(eigen.IncompleteSpectrumWarning):
        a = eigen.eigenvalue_loci(S, pos, 0.3, 10, n_basis=30)  # fills the cache
    with pytest.warns(eigen.IncompleteSpectrumWarning):
        b = eigen.eigenvalue_loci(S, pos, 0.1, 10, n_basis=30)  # reuses it
    eigen._RITZ_CACHE.pop(S)
    with pytest.warns(eigen.IncompleteSpectrumWarning):
        c = eigen.eigenvalue_loci(S, pos, 0.1, 10, n_basis=30)  # fresh
    np.testing.assert_array_equal(b.lam, c.lam)
    assert a.complete_up_to_hz == b.complete_up_to_hz == c.complete_up_to_hz
    # and the basis is the frictionless coupled modes: compare with a dense eigh (orthonormal
    # null-space basis, independent of the pivot basis) at one position
    M, _, K, _, BC, _ = eigen.coupled_matrices(S, pos[1], 0.0)
    L = sla.null_space(BC[None, :])
    w2 = sla.eigh(L.T @ K @ L, L.T @ M @ L, eigvals_only=True)[:30]
    top, _ = eigen._ritz_basis(S, pos[1], 1.0, None, 30)
    # eigh's accuracy on the highest of the 30: ~ eps times the largest eigenvalue, relative ~1e-10
    assert top == pytest.approx(np.sqrt(w2[-1]) / (2 * np.pi), rel=1e-9)
