"""Every solver path of the factored Craig-Bampton reduction against the textbook construction.

The factored reduction (``method="factored"``) can factor K_ii with each sparse library installed
(:func:`fesub.fe.factorisations`: SuperLU always, CHOLMOD when scikit-sparse is importable), find
the fixed-interface modes densely or by shift-invert Lanczos on that factor, and keep the
constraint modes Psi or re-solve them. Each combination must give the reduced model of
``method="reference"`` (dense T, SciPy's default SuperLU, ``eigsh`` with its own factor,
``T' K T``), an independent computation of the same equations.

The fixed-interface modes are defined up to an orthogonal transformation inside each eigenspace
(a sign for a simple eigenvalue), so Kr and Mr are compared through quantities that do not depend
on that choice: with ``q = [eta; u_b]``, the boundary blocks, the mode-space eigenvalues
(Kr_mm = diag(w^2), Mr_mm = I) and the products ``Mr_bm Mr_mb`` and ``Mr_bm Kr_mm Mr_mb``
(invariant under Phi -> Phi Q for Q orthogonal and commuting with diag(w^2)), and the reduced
frequencies (eigenvalues of (Kr, Mr), invariant under any change of basis).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.linalg as sla

from fesub.fe import PlaneStress, factorisations, factorize, rectangle
from fesub.substructure import CraigBampton, FixedInterfaceBasis, Substructure
from fesub.substructure import fixed_interface

MAT = PlaneStress(210e9, 0.3, 7800.0, 0.02)
# Both constructions are backward stable; they differ by round-off amplified by cond(K_ii) ~ 1e5
# (constraint modes) and the eigenvalue spread (w_k / w_1)^2 ~ 1e3 (modes): ~1e-13 measured, so
# 1e-10 (as tests/test_craig_bampton_fast.py) leaves a margin of 100 or more.
RTOL = 1e-10
K_MODES = 12


@pytest.fixture(scope="module")
def plate():
    # 60 x 12 plate, 1 560 DOFs, boundary = right edge (26 DOFs): large enough for Lanczos
    sub = Substructure(rectangle(1.0, 0.2, 60, 12), MAT, clamped=["left"], name="plate")
    return sub, sub.dofs("right")


@pytest.fixture(scope="module")
def reference(plate):
    sub, b = plate
    return CraigBampton(sub, boundary=b, n_modes=K_MODES, method="reference")


def _invariants(Kr, Mr, k):
    """Quantities of (Kr, Mr) that do not depend on the basis chosen inside each eigenspace."""
    m, b = slice(0, k), slice(k, None)
    return {
        "Kr_bb": Kr[b, b], "Mr_bb": Mr[b, b],
        "Kr_mm eigenvalues": np.sort(np.linalg.eigvalsh(Kr[m, m])),
        "Mr_mm eigenvalues": np.sort(np.linalg.eigvalsh(Mr[m, m])),
        "Mr_bm Mr_mb": Mr[b, m] @ Mr[m, b],
        "Mr_bm Kr_mm Mr_mb": Mr[b, m] @ Kr[m, m] @ Mr[m, b],
    }


def _rel(a, ref):
    """Largest difference relative to the largest entry of the reference (0 for a zero block)."""
    scale = np.abs(ref).max()
    return np.abs(a - ref).max() / scale if scale > 0 else np.abs(a).max()


@pytest.mark.parametrize("solver,eigensolver,store_psi", list(itertools.product(
    factorisations(), ("dense", "lanczos"), (True, False))))
def test_every_path_equals_the_reference(plate, reference, solver, eigensolver, store_psi):
    sub, b = plate
    i = np.setdiff1d(np.arange(sub.n_dofs), b)
    fb = FixedInterfaceBasis(sub.K, sub.M, b, i, K_MODES, factorisation=solver,
                             eigensolver=eigensolver, store_psi=store_psi)
    assert fb.info["factorisation"] == solver
    new = _invariants(fb.Kr, fb.Mr, K_MODES)
    old = _invariants(reference.Kr, reference.Mr, K_MODES)
    errs = {name: _rel(new[name], old[name]) for name in old}
    # Kr's coupling of modes and boundary is zero in exact arithmetic (K_ii Psi + K_ib = 0)
    assert np.abs(fb.Kr[:K_MODES, K_MODES:]).max() < RTOL * np.abs(fb.Kr).max()
    print(f"{solver}, {eigensolver}, Psi {'stored' if store_psi else 'implicit'}: "
          + ", ".join(f"{n} {e:.1e}" for n, e in errs.items()))
    assert max(errs.values()) < RTOL, errs
    np.testing.assert_allclose(fb.freq_hz, reference.mode_freqs_hz, rtol=RTOL)
    # reduced frequencies (symmetric-definite eigensolver, as CraigBampton.frequencies)
    f_new = np.sqrt(sla.eigh(fb.Kr, fb.Mr, eigvals_only=True)) / (2 * np.pi)
    np.testing.assert_allclose(f_new, reference.frequencies(), rtol=RTOL)


@pytest.mark.parametrize("solver", factorisations())
def test_factor_solves_with_many_right_hand_sides(plate, solver):
    """The factor's solve of a block of right-hand sides leaves a round-off residual (the check
    does not use the factor: K x - b with the assembled K)."""
    sub, b = plate
    F = factorize(sub.K, method=solver)
    B = np.random.default_rng(3).standard_normal((sub.n_dofs, 70))
    X = F.solve(B)
    # backward-stable Cholesky / LU: residual ~ eps cond(K) |b| with cond(K) ~ 1e7 on this plate
    assert np.abs(sub.K @ X - B).max() < 1e-8 * np.abs(B).max()
    # one column alone as inside the block (other BLAS kernels: round-off x cond(K) apart)
    np.testing.assert_allclose(F.solve(B[:, 5]), X[:, 5], rtol=0, atol=1e-8 * np.abs(X).max())


@pytest.mark.skipif(len(factorisations()) < 2, reason="only SuperLU installed")
def test_factorisations_agree(plate):
    """CHOLMOD (or PARDISO) and SuperLU: the same reduced model to round-off."""
    sub, b = plate
    cbs = [CraigBampton(sub, boundary=b, n_modes=K_MODES, factorisation=s, eigensolver="lanczos")
           for s in factorisations()]
    for cb in cbs[1:]:
        np.testing.assert_allclose(cb.frequencies(), cbs[0].frequencies(), rtol=RTOL)
        np.testing.assert_allclose(cb.Kr[K_MODES:, K_MODES:], cbs[0].Kr[K_MODES:, K_MODES:],
                                   rtol=0, atol=RTOL * np.abs(cbs[0].Kr).max())


@pytest.mark.skipif("cholmod" not in factorisations(), reason="block Lanczos runs on a Cholesky factor")
def test_block_lanczos_against_arpack_and_lapack(plate, monkeypatch):
    """The fixed-interface modes by block Lanczos (the default on a Cholesky factor) against
    ARPACK on the same operator (the fallback when the block basis would grow too large) and
    against dense LAPACK on the pencil (K_ii, M_ii)."""
    sub, b = plate
    i = np.setdiff1d(np.arange(sub.n_dofs), b)
    kw = dict(factorisation="cholmod", eigensolver="lanczos")
    blk = FixedInterfaceBasis(sub.K, sub.M, b, i, K_MODES, **kw)
    assert "block Lanczos" in blk.info["lanczos_form"]
    with monkeypatch.context() as mp:
        mp.setattr(fixed_interface, "_block_lanczos", lambda *a, **kw: None)
        arp = FixedInterfaceBasis(sub.K, sub.M, b, i, K_MODES, **kw)
    assert "ARPACK" in arp.info["lanczos_form"]
    Kii, Mii = sub.K[i][:, i], sub.M[i][:, i]
    lam = sla.eigh(Kii.toarray(), Mii.toarray(), eigvals_only=True, subset_by_index=[0, K_MODES - 1])
    # three eigensolvers, one pencil: round-off x eigenvalue spread (RTOL, as above)
    np.testing.assert_allclose(blk.freq_hz, np.sqrt(lam) / (2 * np.pi), rtol=RTOL)
    np.testing.assert_allclose(arp.freq_hz, blk.freq_hz, rtol=RTOL)
    # the modes (simple eigenvalues on this plate: equal up to sign), M-orthonormal
    s = np.sign(np.einsum("ij,ij->j", blk.Phi, Mii @ arp.Phi))
    assert _rel(blk.Phi * s, arp.Phi) < RTOL
    assert np.abs(blk.Phi.T @ (Mii @ blk.Phi) - np.eye(K_MODES)).max() < RTOL
    # residuals of the pencil: ~eps cond(K_ii) like ARPACK's
    w2 = (2 * np.pi * blk.freq_hz) ** 2
    R = Kii @ blk.Phi - (Mii @ blk.Phi) * w2
    assert (np.linalg.norm(R, axis=0) / np.linalg.norm(Kii @ blk.Phi, axis=0)).max() < RTOL
    # a basis limit too small to converge in: None (the caller falls back to ARPACK)
    F = factorize(Kii, method="cholmod")
    perm, sl, slt = F.split
    Mp = Mii[perm][:, perm]
    assert fixed_interface._block_lanczos(lambda y: sl(Mp @ slt(y)), i.size, K_MODES,
                                          max_dim=K_MODES + 8) is None


@pytest.mark.skipif(not fixed_interface.ForkedCall.available, reason="no fork here")
@pytest.mark.parametrize("store_psi", (True, False))
def test_constraint_modes_forked_beside_the_modes_are_the_same(plate, monkeypatch, store_psi):
    """With two processes the constraint modes and their products come from a forked child while
    the parent finds the modes: the same operations on the same factor, so the same numbers bit
    for bit (and the reference's, through the path test above)."""
    sub, b = plate
    i = np.setdiff1d(np.arange(sub.n_dofs), b)
    monkeypatch.setattr(fixed_interface, "FORK_ABOVE", 0)  # the plate is below the default size
    kw = dict(eigensolver="lanczos", store_psi=store_psi)
    one = FixedInterfaceBasis(sub.K, sub.M, b, i, K_MODES, jobs=1, **kw)
    two = FixedInterfaceBasis(sub.K, sub.M, b, i, K_MODES, jobs=2, **kw)
    assert not one.info["concurrent"] and two.info["concurrent"]
    assert two.info["peak_rss_child_bytes"] > 0 and two.info["time_constraint_modes_s"] > 0
    for name in ("Kr", "Mr", "Phi", "freq_hz") + (("Psi",) if store_psi else ()):
        np.testing.assert_array_equal(getattr(two, name), getattr(one, name), err_msg=name)
    q = np.random.default_rng(4).normal(size=K_MODES + b.size)
    np.testing.assert_array_equal(two.recover(q), one.recover(q))


def test_jobs_is_checked(plate):
    from fesub.errors import ParameterError

    sub, b = plate
    with pytest.raises(ParameterError, match="jobs"):
        CraigBampton(sub, boundary=b, n_modes=2, jobs=0)
