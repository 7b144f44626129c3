"""The factored fixed-interface Craig-Bampton reduction (one factor of K_ii, implicit T) against
the textbook construction (``method="reference"``: dense T, two factorisations, T' K T) and
against the full model it reduces.

Independent references: the lowest eigenvalues of the full model with the boundary clamped
(the fixed-interface modes, dense LAPACK on the small mesh, SciPy's own shift-invert Lanczos on the
medium one), the lowest eigenvalues of the full free-boundary model (the reduced frequencies
converge to them from above as modes are added: Rayleigh-Ritz), and the dense eigensolver against
Lanczos for the same basis.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sla
import scipy.sparse.linalg as spla

from fesub.errors import ModelError, ParameterError
from fesub.fe import PlaneStress, factorisations, factorize, modes, rectangle
from fesub.substructure import CraigBampton, Substructure

MAT = PlaneStress(210e9, 0.3, 7800.0, 0.02)

# Relative agreement of the two algorithms (entries against the largest entry of the matrix,
# frequencies against themselves). Both solve the same equations with backward-stable direct
# factorisations, so they differ by round-off amplified by the conditioning: the constraint modes
# carry eps cond(K_ii) ~ 1e-16 x 1e5 (plate meshes below), the Lanczos modes eps x the spread
# (w_k / w_1)^2 ~ 1e-16 x 1e3. Measured: below 1e-12 on both meshes; 1e-10 keeps a margin of 100
# and is still far below any modelling effect (a different mode count changes frequencies by >1e-4).
RTOL = 1e-10


def _hz(lam):
    return np.sqrt(np.clip(lam, 0, None)) / (2 * np.pi)


@pytest.fixture(scope="module", params=["small", "medium"])
def plate(request):
    # small: 30 x 3 cantilever (248 DOFs: dense eigensolvers); medium: 60 x 12 plate (1560 DOFs:
    # Lanczos in the reference path, forced Lanczos in the factored one); boundary = right edge
    nx, ny = (30, 3) if request.param == "small" else (60, 12)
    sub = Substructure(rectangle(1.0, 0.2, nx, ny), MAT, clamped=["left"], name=request.param)
    return sub, sub.dofs("right")


def _aligned(cb, ref):
    """Kr, Mr of ``cb`` with each mode's sign taken as in ``ref`` (a mode is defined up to sign)."""
    k = cb.n_modes
    s = np.sign(np.einsum("ij,ij->j", cb.T[:, :k], cb._M @ ref.T[:, :k]))
    assert np.all(s != 0)
    d = np.concatenate([s, np.ones(cb.boundary.size)])
    return d[:, None] * cb.Kr * d[None, :], d[:, None] * cb.Mr * d[None, :]


def _close(a, b, rtol=RTOL):
    err = np.abs(a - b).max() / np.abs(b).max()
    assert err < rtol, err
    return err


@pytest.mark.parametrize("k", [0, 12])
def test_factored_equals_reference(plate, k):
    sub, b = plate
    ref = CraigBampton(sub, boundary=b, n_modes=k, method="reference")
    new = CraigBampton(sub, boundary=b, n_modes=k, eigensolver="lanczos" if sub.n_dofs > 1000 else "auto")
    assert new.info["factorisation"] in factorisations()
    assert ref.info == {"method": "reference"}
    Kr, Mr = _aligned(new, ref)
    ek, em = _close(Kr, ref.Kr), _close(Mr, ref.Mr)
    ef = _close(new.frequencies(), ref.frequencies())
    print(f"{sub.name}, k={k}: factored vs reference, rel. diff Kr {ek:.1e}, Mr {em:.1e}, freqs {ef:.1e}; "
          f"{new.info['factorisation']}, {new.info['eigensolver']}")
    if k:
        np.testing.assert_allclose(new.mode_freqs_hz, ref.mode_freqs_hz, rtol=RTOL)
    # the implicit T: recover and project as the dense T (same numbers, other order of sums)
    rng = np.random.default_rng(1)
    q, f = rng.normal(size=(new.n_dofs, 3)), rng.normal(size=sub.n_dofs)
    T = new.T
    np.testing.assert_allclose(new.recover(q), T @ q, rtol=0, atol=1e-13 * np.abs(T @ q).max())
    np.testing.assert_allclose(new.project(f), T.T @ f, rtol=0, atol=1e-13 * np.abs(T.T @ f).max())


def test_implicit_psi_equals_stored_psi(plate):
    """Psi not stored (the factor kept, Psi applied by solves): the same reduced model."""
    from fesub.substructure import FixedInterfaceBasis

    sub, b = plate
    i = np.setdiff1d(np.arange(sub.n_dofs), b)
    kw = dict(eigensolver="lanczos" if sub.n_dofs > 1000 else "auto")
    st = FixedInterfaceBasis(sub.K, sub.M, b, i, 8, store_psi=True, **kw)
    im = FixedInterfaceBasis(sub.K, sub.M, b, i, 8, store_psi=False, **kw)
    assert im.Psi is None and st.info["psi"] == "stored"
    # same factor, same modes: only the order of the sums differs (Psi' X as -K_ib' K_ii^-1 X)
    _close(im.Kr, st.Kr, 1e-12)
    _close(im.Mr, st.Mr, 1e-12)
    _close(im.dense_T(), st.dense_T(), 1e-12)
    rng = np.random.default_rng(2)
    q, f = rng.normal(size=8 + b.size), rng.normal(size=sub.n_dofs)
    _close(im.recover(q), st.recover(q), 1e-12)
    _close(im.project(f), st.project(f), 1e-12)


def test_fixed_interface_modes_equal_full_model_with_boundary_clamped(plate):
    sub, b = plate
    i = np.setdiff1d(np.arange(sub.n_dofs), b)
    Kii, Mii = sub.K[i][:, i], sub.M[i][:, i]
    if sub.n_dofs < 1000:
        f_ref = _hz(sla.eigh(Kii.toarray(), Mii.toarray(), eigvals_only=True)[:12])
    else:  # SciPy's own shift-invert (its own SuperLU factor of K_ii - sigma M_ii)
        f_ref = np.sort(_hz(spla.eigsh(Kii.tocsc(), k=12, M=Mii.tocsc(), sigma=-1.0, which="LM",
                                       return_eigenvectors=False)))
    cb = CraigBampton(sub, boundary=b, n_modes=12, eigensolver="lanczos" if sub.n_dofs > 1000 else "auto")
    # two eigensolvers, the same eigenproblem: round-off (eps x spread of the 12 eigenvalues)
    np.testing.assert_allclose(cb.mode_freqs_hz, f_ref, rtol=1e-9)


def test_reduced_frequencies_converge_to_full_model(plate):
    sub, b = plate
    if sub.n_dofs < 1000:
        f_full = _hz(sla.eigh(sub.K.toarray(), sub.M.toarray(), eigvals_only=True)[:8])
    else:
        f_full = np.sort(_hz(spla.eigsh(sub.K.tocsc(), k=8, M=sub.M.tocsc(), sigma=-1.0, which="LM",
                                        return_eigenvectors=False)))
    errs = []
    for k in (2, 6, 20, 60):
        err = CraigBampton(sub, boundary=b, n_modes=k).frequencies(8) / f_full - 1
        assert np.all(err > -1e-9)  # Rayleigh-Ritz upper bound, up to round-off
        errs.append(err.max())
    print(f"{sub.name}: max rel. error of the lowest 8 frequencies for 2, 6, 20, 60 modes:", errs)
    assert errs[0] > errs[1] > errs[2] > errs[3]  # more modes, better basis
    assert errs[-1] < 1e-3  # 60 modes: the lowest 8 within 0.1 %


def test_dense_branch_equals_lanczos_branch(plate):
    sub, b = plate
    lz = CraigBampton(sub, boundary=b, n_modes=10, eigensolver="lanczos")
    de = CraigBampton(sub, boundary=b, n_modes=10, eigensolver="dense")
    assert (lz.info["eigensolver"], de.info["eigensolver"]) == ("lanczos-shift-invert", "dense-eigh")
    Kr, Mr = _aligned(de, lz)
    _close(Kr, lz.Kr)
    _close(Mr, lz.Mr)
    np.testing.assert_allclose(de.mode_freqs_hz, lz.mode_freqs_hz, rtol=RTOL)
    np.testing.assert_allclose(de.frequencies(), lz.frequencies(), rtol=RTOL)


def test_many_modes_go_dense_and_all_modes_are_exact(plate):
    sub, b = plate
    n_int = sub.n_dofs - b.size
    cb = CraigBampton(sub, boundary=b, n_modes=n_int // 3)
    assert cb.info["eigensolver"] == "dense-eigh"  # k > n_i / 4
    if sub.n_dofs > 1000:
        return  # the complete basis below needs the dense solve of the whole model: small mesh only
    full = CraigBampton(sub, boundary=b, n_modes=n_int)  # complete basis: a congruence
    lam = sla.eigh(sub.K.toarray(), sub.M.toarray(), eigvals_only=True)
    # 1e-8: conditioning of T (K_ii^-1 K_ib, cond(K) ~ 1e8), as in test_craig_bampton
    np.testing.assert_allclose(sla.eigh(full.Kr, full.Mr, eigvals_only=True), lam, rtol=1e-8)


def test_modes_reuses_a_factor_and_checks_its_shift():
    sub = Substructure(rectangle(1.0, 0.2, 60, 12), MAT, clamped=["left"])
    F = factorize(sub.K, sub.M, shift=-1e3)
    f1, _ = modes(sub.K, sub.M, 6, factor=F)
    f0, _ = modes(sub.K, sub.M, 6)
    lam = sla.eigh(sub.K.toarray(), sub.M.toarray(), eigvals_only=True, subset_by_index=[0, 5])
    np.testing.assert_allclose(f1, _hz(lam), rtol=1e-10)  # Lanczos (shared factor) vs LAPACK
    np.testing.assert_allclose(f0, f1, rtol=1e-10)
    with pytest.raises(ModelError, match="does not match the factor"):
        modes(sub.K, sub.M, 6, factor=F, sigma=0.0)


def test_factorisation_choice_and_errors():
    sub = Substructure(rectangle(1.0, 0.1, 10, 2), MAT, clamped=["left"])
    assert factorisations()[-1] == "superlu"
    F = factorize(sub.K)
    assert F.name == factorisations()[0]
    x = np.random.default_rng(0).normal(size=sub.n_dofs)
    np.testing.assert_allclose(sub.K @ F.solve(x), x, atol=1e-9 * np.abs(x).max())  # cond(K) ~ 1e7
    with pytest.raises(ParameterError, match="factorisation method"):
        factorize(sub.K, method="umfpack")
    for name in ("cholmod", "pardiso"):
        if name not in factorisations():
            with pytest.raises(ParameterError, match="not installed"):
                factorize(sub.K, method=name)
    with pytest.raises(ParameterError, match="method"):
        CraigBampton(sub, boundary=sub.dofs("right"), n_modes=2, method="fast")
    with pytest.raises(ParameterError, match="eigensolver"):
        CraigBampton(sub, boundary=sub.dofs("right"), n_modes=2, eigensolver="arpack")
    floating = Substructure(rectangle(1.0, 0.1, 10, 2), MAT)
    with pytest.raises(ModelError, match="mechanism"):
        factorize(floating.K)
