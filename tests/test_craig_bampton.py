"""Craig-Bampton reduction against the full model it reduces.

Independent references: the dense generalized eigenproblem of the full (unreduced) matrices,
the Schur complement (static condensation) for the Guyan limit, and the Rayleigh-Ritz property
(a reduced model of a conforming basis over-estimates every eigenvalue).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sla

from fesub.errors import ModelError
from fesub.fe import PlaneStress, rectangle
from fesub.substructure import CraigBampton, Substructure

MAT = PlaneStress(210e9, 0.3, 7800.0, 0.02)


@pytest.fixture(scope="module")
def cantilever():
    # 1 m x 0.1 m cantilever, 30 x 3 incompatible Q4, clamped on the left; boundary = free-end edge
    mesh = rectangle(1.0, 0.1, 30, 3)
    sub = Substructure(mesh, MAT, clamped=["left"], name="cantilever")
    b = sub.dofs("right")
    lam, phi = sla.eigh(sub.K.toarray(), sub.M.toarray())
    return sub, b, lam, phi


def _hz(lam):
    return np.sqrt(np.clip(lam, 0, None)) / (2 * np.pi)


def test_all_interior_modes_reproduce_full_eigenvalues(cantilever):
    sub, b, lam, _ = cantilever
    n_int = sub.n_dofs - b.size
    cb = CraigBampton(sub, boundary=b, n_modes=n_int)
    assert cb.n_dofs == sub.n_dofs  # the basis spans the whole space
    lam_r = sla.eigh(cb.Kr, cb.Mr, eigvals_only=True)
    # complete basis: the reduced problem is a congruence transform of the full one; 1e-8
    # relative allows for the conditioning of T (K_ii^-1 K_ib with cond(K) ~ 1e8)
    np.testing.assert_allclose(lam_r, lam, rtol=1e-8)


def test_twenty_modes_give_lowest_ten_within_half_percent(cantilever):
    sub, b, lam, _ = cantilever
    cb = CraigBampton(sub, boundary=b, n_modes=20)
    f_full = _hz(lam[:10])
    f_red = cb.frequencies(10)
    err = f_red / f_full - 1
    print("fixed-interface CB (20 modes + 8 boundary DOFs), rel. error of the lowest 10:", err)
    # target accuracy of the reduction; Rayleigh-Ritz: never below the full-model value
    assert np.all(err < 5e-3)
    assert np.all(err > -1e-10)
    # validate() reports the same comparison (its full model is solved by shift-invert Lanczos)
    v = cb.validate(10)
    # validate() solves the full model by Lanczos, the reference by dense LAPACK: round-off
    np.testing.assert_allclose(v["full_hz"], f_full, rtol=1e-8)
    np.testing.assert_allclose(v["reduced_hz"], f_red, rtol=1e-12)
    np.testing.assert_allclose(v["rel_error"], err, atol=1e-8)


def test_free_interface_twenty_modes(cantilever):
    sub, b, lam, _ = cantilever
    cb = CraigBampton(sub, boundary=b, n_modes=20, free_interface=True)
    f_full = _hz(lam[:10])
    err = cb.frequencies(10) / f_full - 1
    print("free-interface (20 modes + residual flexibility), rel. error of the lowest 10:", err)
    # With the boundary left free, the kept free-interface modes ARE the lowest modes of this
    # model, so the lowest 10 come out exact up to round-off (~1e-11 here); the target 0.5 % is
    # met trivially, the non-trivial check is the boundary-clamped test below.
    assert np.all(np.abs(err) < 1e-9)
    # the kept free modes are exact: modes 1..10 of the clamped cantilever are among them
    np.testing.assert_allclose(cb.mode_freqs_hz[:10], f_full, rtol=1e-8)  # Lanczos vs LAPACK


def test_free_interface_boundary_clamped_converges(cantilever):
    """Free-interface modes with the boundary DOFs then clamped: a non-trivial Ritz problem
    (the clamped-clamped modes are not in the basis), compared with the full clamped-clamped model."""
    sub, b, _, _ = cantilever
    i = np.setdiff1d(np.arange(sub.n_dofs), b)
    K, M = sub.K.toarray(), sub.M.toarray()
    f_cc = _hz(sla.eigh(K[np.ix_(i, i)], M[np.ix_(i, i)], eigvals_only=True)[:10])
    errs = []
    for k in (12, 20, 40):
        cb = CraigBampton(sub, boundary=b, n_modes=k, free_interface=True)
        keep = np.arange(k)  # modal coordinates only: boundary DOFs held at zero
        f_red = _hz(sla.eigh(cb.Kr[np.ix_(keep, keep)], cb.Mr[np.ix_(keep, keep)], eigvals_only=True)[:10])
        err = f_red / f_cc - 1
        assert np.all(err > -1e-9)  # Ritz upper bound (round-off ~1e-12)
        errs.append(err.max())
        if k == 20:
            print("free-interface, boundary clamped, 20 modes, rel. error of the lowest 10:", err)
            assert err.max() < 5e-3  # target accuracy of the reduction
    assert errs[0] > errs[1] > errs[2]  # more modes, better Ritz basis


@pytest.mark.parametrize("free_interface", [False, True])
def test_static_boundary_load_is_exact(cantilever, free_interface):
    """Both bases contain K^-1 E_b (constraint modes / residual flexibility): a load on the
    boundary DOFs gives the exact static displacement field."""
    sub, b, _, _ = cantilever
    rng = np.random.default_rng(0)
    f = np.zeros(sub.n_dofs)
    f[b] = rng.normal(size=b.size) * 1e3
    u_full = np.linalg.solve(sub.K.toarray(), f)
    cb = CraigBampton(sub, boundary=b, n_modes=6, free_interface=free_interface)
    u_red = cb.recover(np.linalg.solve(cb.Kr, cb.T.T @ f))
    np.testing.assert_allclose(u_red, u_full, atol=1e-8 * np.abs(u_full).max())  # cond(K) ~ 1e8


def test_recover_reproduces_full_mode_shapes(cantilever):
    sub, b, lam, phi = cantilever
    cb = CraigBampton(sub, boundary=b, n_modes=sub.n_dofs - b.size)
    lam_r, q = sla.eigh(cb.Kr, cb.Mr)
    u = cb.recover(q[:, :8])
    for j in range(8):
        ref = phi[:, j]
        s = np.sign(u[:, j] @ (sub.M @ ref))
        # both mass-normalised, distinct eigenvalues: agreement limited by round-off in T
        np.testing.assert_allclose(s * u[:, j], ref, atol=1e-7 * np.abs(ref).max())
    # recovered boundary DOFs are the physical boundary coordinates of q
    np.testing.assert_allclose(u[b], q[cb.boundary_slice, :8], atol=1e-14)  # identity rows of T


def test_recover_of_truncated_model_matches_low_modes(cantilever):
    sub, b, lam, phi = cantilever
    cb = CraigBampton(sub, boundary=b, n_modes=20)
    _, q = sla.eigh(cb.Kr, cb.Mr)
    u = cb.recover(q[:, :3])
    M = sub.M
    for j in range(3):
        mac = (u[:, j] @ (M @ phi[:, j])) ** 2 / ((u[:, j] @ (M @ u[:, j])) * (phi[:, j] @ (M @ phi[:, j])))
        assert mac > 1 - 1e-6  # lowest modes converge first; MAC is quadratic in the shape error


def test_guyan_equals_static_condensation(cantilever):
    sub, b, _, _ = cantilever
    cb = CraigBampton(sub, boundary=b, n_modes=0)
    K = sub.K.toarray()
    i = np.setdiff1d(np.arange(sub.n_dofs), b)
    schur = K[np.ix_(b, b)] - K[np.ix_(b, i)] @ np.linalg.solve(K[np.ix_(i, i)], K[np.ix_(i, b)])
    np.testing.assert_allclose(cb.Kr, schur, rtol=1e-9, atol=1e-9 * np.abs(schur).max())  # cond(K_ii) ~ 1e8


def test_bad_inputs_raise_model_error(cantilever):
    sub, b, _, _ = cantilever
    with pytest.raises(ModelError, match="boundary"):
        CraigBampton(sub, boundary=[])
    with pytest.raises(ModelError, match="boundary"):
        CraigBampton(sub, boundary=[0, 0])
    with pytest.raises(ModelError, match="n_modes"):
        CraigBampton(sub, boundary=b, n_modes=sub.n_dofs)
    cb = CraigBampton(sub, boundary=b, n_modes=4)
    with pytest.raises(ModelError, match="reduced vector"):
        cb.recover(np.zeros(3))


# ---- bad models are reported, never reduced silently
def _floating():
    return Substructure(rectangle(1.0, 0.1, 30, 3), MAT, name="floating")


@pytest.mark.parametrize("k", [0, 5])
def test_one_node_boundary_of_a_floating_body_is_a_mechanism(k):
    # held at one node, the body can still rotate about it: K_ii is singular (before: a silent
    # 0 Hz fixed-interface mode and a reduced stiffness with negative eigenvalues)
    sub = _floating()
    with pytest.raises(ModelError, match="mechanism.*do not hold the substructure"):
        CraigBampton(sub, boundary=sub.dofs([0]), n_modes=k)
    # two nodes hold it: no mechanism, and the reduced K is positive semi-definite with the
    # floating body's three rigid-body modes (independent check: dense eigenvalues of Kr, Mr)
    cb = CraigBampton(sub, boundary=sub.dofs([0, 30]), n_modes=k)
    lam = sla.eigh(cb.Kr, cb.Mr, eigvals_only=True)
    scale = lam.max()
    assert np.sum(np.abs(lam) < 1e-9 * scale) == 3 and lam.min() > -1e-9 * scale


def test_indefinite_stiffness_is_refused_not_a_silent_zero_frequency(cantilever):
    from fesub.fe.assembly import modes

    sub, b, lam, _ = cantilever
    with pytest.raises(ModelError, match="not positive semi-definite"):
        modes(-sub.K, sub.M, 3)
    f, _ = modes(sub.K, sub.M, 3)
    np.testing.assert_allclose(f, _hz(lam[:3]), rtol=1e-8)  # dense LAPACK vs Lanczos: round-off


@pytest.mark.parametrize("kw, match", [
    ({"boundary": [1.7]}, "integer indices"),
    ({"n_modes": float("nan")}, "n_modes must be an integer"),
    ({"n_modes": 2.5}, "n_modes must be an integer"),
    ({"zero_mass": True}, "positive diagonal"),
    ({"nan_k": True}, "NaN or infinite"),
])
def test_bad_inputs_are_model_errors(cantilever, kw, match):
    sub, b, _, _ = cantilever
    K, M = sub.K.copy(), sub.M.copy()
    if kw.pop("zero_mass", False):
        M = 0 * M
    if kw.pop("nan_k", False):
        K.data[0] = np.nan
    args = {"boundary": b, "n_modes": 3, **kw}
    with pytest.raises(ModelError, match=match):
        CraigBampton(K, M, **args)


def test_nan_rayleigh_and_nan_loads_are_refused(cantilever):
    sub, b, _, _ = cantilever
    cb = CraigBampton(sub, boundary=b, n_modes=3)
    for a, bb in ((float("nan"), 0.0), (0.0, float("nan")), (-1.0, 0.0)):
        with pytest.raises(ModelError, match="Rayleigh"):
            cb.rayleigh(a, bb)
    with pytest.raises(ModelError, match="Rayleigh"):
        Substructure(rectangle(1.0, 0.1, 4, 1), MAT, clamped=["left"], rayleigh=(float("nan"), 0))
    for v in (float("nan"), float("inf"), "1"):
        with pytest.raises(ModelError, match="finite force"):
            sub.load("right", "y", v)
    np.testing.assert_allclose(sub.load("right", "y", 2.0).sum(), 2.0)
