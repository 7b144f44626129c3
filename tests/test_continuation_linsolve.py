"""The continuation's reused factorisation (GMRES preconditioned by an earlier LU) against direct
solves: single systems, a branch followed both ways, and a damped nonlinear mode both ways;
the harmonic-balance operators applied block by block against the dense matrices."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fesub.continuation import continue_branch
from fesub.continuation.linsolve import ReusedFactorization, gmres_right


def _matrix(n, seed):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, n)) + n ** 0.5 * np.eye(n), rng


def test_gmres_with_an_exact_preconditioner_takes_no_iteration():
    A, rng = _matrix(40, 0)
    b = rng.standard_normal(40)
    Ainv = np.linalg.inv(A)
    x, ok, its = gmres_right(A, b, lambda v: Ainv @ v, Ainv @ b, rtol=1e-12, maxiter=10)
    assert ok and its == 0
    # without a preconditioner and a zero start GMRES ends at n iterations at most (exact
    # arithmetic); the residual it reports is the true one
    x, ok, its = gmres_right(A, b, lambda v: v, np.zeros(40), rtol=1e-10, maxiter=40)
    assert ok and its <= 40
    assert np.linalg.norm(b - A @ x) <= 1e-10 * np.linalg.norm(b)


def test_reused_factorization_solves_a_sequence_of_nearby_matrices():
    n = 120
    A, rng = _matrix(n, 1)
    solver = ReusedFactorization()
    for k in range(6):
        # a slowly drifting matrix with a low-rank change (the continuation's Jacobians from
        # one Newton iteration or step to the next)
        Ak = A + 0.02 * k * np.outer(rng.standard_normal(n), rng.standard_normal(n)) / n \
            + 1e-3 * k * rng.standard_normal((n, n)) / n ** 0.5
        b = rng.standard_normal(n)
        x = solver.solve(Ak, b)
        x_ref = np.linalg.solve(Ak, b)
        # GMRES stops at |b - A x| <= 1e-12 |b|: the error is that residual times the
        # condition number (~10 here), far below the 1e-9 asked
        np.testing.assert_allclose(x, x_ref, rtol=0, atol=1e-9 * np.abs(x_ref).max())
    # one factorisation served the whole sequence, at a few GMRES iterations per solve
    assert solver.factorizations == 1
    assert 0 < solver.krylov_iterations <= 6 * 15


def test_reused_factorization_refactors_a_matrix_far_from_its_factors():
    n = 60
    A, rng = _matrix(n, 2)
    solver = ReusedFactorization(max_krylov=10)
    b = rng.standard_normal(n)
    solver.solve(A, b)
    B, _ = _matrix(n, 3)    # unrelated: GMRES cannot reach the tolerance in 10 iterations
    x = solver.solve(B, b)
    assert solver.factorizations == 2
    np.testing.assert_allclose(B @ x, b, atol=1e-10)
    # another size is factored, not preconditioned
    solver.solve(np.eye(5), np.ones(5))
    assert solver.factorizations == 3
    # an exactly singular matrix raises like the direct solve
    S = A.copy()
    S[:, 3] = 0.0
    with pytest.raises(np.linalg.LinAlgError):
        ReusedFactorization().solve(S, b)


def test_single_precision_factors_give_double_precision_solutions():
    n = 200
    A, rng = _matrix(n, 6)
    b = rng.standard_normal(n)
    x_ref = np.linalg.solve(A, b)
    for single in (True, False):
        solver = ReusedFactorization(single=single)
        x = solver.solve(A, b)
        # the fresh single-precision factors leave a residual of ~1e-6 that GMRES removes
        # (1e-12 asked, condition number ~10): the solution of a double-precision solve
        np.testing.assert_allclose(x, x_ref, rtol=0, atol=1e-10 * np.abs(x_ref).max())
        assert solver._lu[0].dtype == (np.float32 if single else np.float64)
        # double factors solve directly; single ones need GMRES, a few iterations
        assert (1 <= solver.krylov_iterations <= 4) if single else solver.krylov_iterations == 0
        assert solver.factorizations == 1


def test_single_precision_factors_fall_back_to_double():
    n = 80
    A, rng = _matrix(n, 7)
    b = rng.standard_normal(n)
    # entries beyond single precision's range (3.4e38): its factors are not finite, the
    # double ones solve
    big = 1e40 * A
    solver = ReusedFactorization()
    x = solver.solve(big, b)
    assert solver._lu[0].dtype == np.float64 and solver.factorizations == 1
    np.testing.assert_allclose(big @ x, b, atol=1e-10 * np.abs(b).max())
    # a condition number of 1e12 (beyond single precision's 1/6e-8): GMRES on the single
    # factors does not reach the tolerance within its iterations, the double factors do
    U, _ = np.linalg.qr(rng.standard_normal((n, n)))
    ill = U @ np.diag(np.geomspace(1.0, 1e-12, n)) @ U.T
    solver = ReusedFactorization(max_krylov=10)
    x = solver.solve(ill, b)
    assert solver._lu[0].dtype == np.float64
    # a backward error of a direct solve: |b - A x| ~ n eps |A| |x|
    assert np.linalg.norm(ill @ x - b) <= 1e-13 * n * np.linalg.norm(x)


def test_entries_far_below_the_largest_leave_the_single_factors():
    from fesub.continuation.linsolve import SINGLE_DROP

    n = 120
    A, rng = _matrix(n, 8)
    # rounding residue (1e-300 relative): subnormal in single precision, dropped from its
    # factors; the solution is that of the whole matrix (GMRES on A itself)
    mask = rng.random((n, n)) < 0.3
    A[mask] = 1e-300 * rng.standard_normal(mask.sum())
    b = rng.standard_normal(n)
    solver = ReusedFactorization()
    x = solver.solve(A, b)
    lu = solver._lu[0]
    assert lu.dtype == np.float32
    tiny = np.abs(lu[lu != 0]).min()
    assert tiny >= np.finfo(np.float32).tiny   # no subnormal number in the factors
    assert SINGLE_DROP * np.abs(A).max() > 1e-300
    np.testing.assert_allclose(A @ x, b, atol=1e-11 * np.abs(b).max())


def test_an_absolute_tolerance_stops_gmres_at_it():
    n = 150
    A, rng = _matrix(n, 9)
    b = rng.standard_normal(n)
    solver = ReusedFactorization(single=False)
    solver.solve(A, b)       # factors of A
    A2 = A + 0.05 * rng.standard_normal((n, n)) / n ** 0.5
    its = []
    for atol in (None, 1e-6 * np.linalg.norm(b)):
        before = solver.krylov_iterations
        x = solver.solve(A2, b, atol=atol)
        its.append(solver.krylov_iterations - before)
        bound = 1e-12 * np.linalg.norm(b) if atol is None else atol
        assert np.linalg.norm(b - A2 @ x) <= bound
    # the looser stop takes fewer iterations (each one gains about a factor of the drift)
    assert its[1] < its[0]


def _cubic_branch(n, seed):
    """``R(x, lam) = K x + c (x^3) - lam f`` (coupled cubic springs): a branch with a fold
    in ``lam`` once the softening terms dominate."""
    rng = np.random.default_rng(seed)
    L = rng.standard_normal((n, n)) / n
    K = L @ L.T + np.eye(n)
    c = -rng.uniform(0.5, 1.5, n)
    f = rng.standard_normal(n)

    def res(x, lam):
        return K @ x + c * x ** 3 - lam * f

    def jac(x, lam):
        return K + np.diag(3 * c * x ** 2), -f

    return res, jac


def test_branch_with_reused_factorization_equals_the_direct_one():
    res, jac = _cubic_branch(30, 4)
    kw = dict(ds=0.05, ds_max=0.2, max_steps=80, lam_range=(0.0, 10.0))
    ref = continue_branch(res, jac, np.zeros(30), 0.0, **kw)
    new = continue_branch(res, jac, np.zeros(30), 0.0, reuse_factorization=True, **kw)
    # the same steps (the iterates differ by the GMRES residual, 1e-12 relative) and the same
    # points to the corrector's tolerance (1e-10 on |R|, the branch's slope O(1))
    assert len(new.lam) == len(ref.lam) and new.stop_reason == ref.stop_reason
    np.testing.assert_allclose(new.lam, ref.lam, atol=1e-8)
    np.testing.assert_allclose(new.x, ref.x, atol=1e-8)
    assert [e.kind for e in new.events] == [e.kind for e in ref.events]
    assert any(e.kind == "fold" for e in ref.events)
    # fewer factorisations than linear solves: the factors were reused
    assert 1 <= new.stop_info["factorizations"] < 0.5 * len(new.lam)


def _two_dofs(nh=3, damping=1e-6, constant=False):
    """Two DOFs and a 3D element in stick-slip with a varying normal load (both directions of
    the element driven), forced on the first DOF: stiffness-proportional damping ``damping``
    (s), ``nh`` harmonics."""
    from fesub.hbm import ContactElement, Friction3D, HBSystem

    G = np.array([[1.0, 0.0], [0.3, 0.5], [0.0, 0.4]])
    M = np.diag([1.0, 0.5])
    K = np.array([[5e4, -1e4], [-1e4, 3e4]])
    return HBSystem(M, damping * K, K, nh, [ContactElement(Friction3D(2e3, 5e3, 0.3, 2.0, nt=128),
                                                           G, "c")], fex=[1.0, 0.0], dof=0,
                    constant=constant)


def test_damped_mode_with_reused_factorization_equals_the_direct_one():
    from fesub.hbm import dnnm

    sy = _two_dofs()
    kw = dict(max_steps=30)
    ref = dnnm(sy, (1e-5, 3e-3), 0, reuse_factorization=False, **kw)
    new = dnnm(sy, (1e-5, 3e-3), 0, reuse_factorization=True, **kw)
    assert ref.zeta[-1] > 10 * ref.zeta[0]   # the slip's damping was reached
    assert len(new.a) == len(ref.a)
    # the points to the corrector's tolerance (1e-10 on the scaled rows)
    np.testing.assert_allclose(new.w0, ref.w0, rtol=1e-9)
    np.testing.assert_allclose(new.zeta, ref.zeta, rtol=1e-7, atol=1e-12)


def test_dynamic_stiffness_applied_block_by_block_equals_the_dense_matrix():
    from fesub.hbm.system import HBSystem

    rng = np.random.default_rng(5)
    n = 4
    L = rng.standard_normal((n, n))
    K = L @ L.T + n * np.eye(n)
    M = np.eye(n) + 0.1 * np.diag(rng.random(n))
    C = 1e-2 * K + 1e-3 * M
    for constant in (False, True):
        sy = HBSystem(M, C, K, 3, constant=constant)
        v = rng.standard_normal(sy.N)
        w, xi = 1.7, -0.3
        for d in (0, 1, 2):
            Dd = sy.D(w, d, extra_xi=xi)
            np.testing.assert_allclose(sy.D_dot(w, v, d, extra_xi=xi), Dd @ v, rtol=1e-13,
                                       atol=1e-13 * np.abs(Dd).max() * np.abs(v).max())
            out = rng.standard_normal((sy.N, sy.N))
            np.testing.assert_allclose(sy.add_D(out.copy(), w, d, extra_xi=xi), out + Dd,
                                       rtol=0, atol=1e-14 * np.abs(Dd).max())
        np.testing.assert_allclose(sy.D_xi_dot(w, v), sy.D_xi(w) @ v,
                                   atol=1e-13 * np.abs(sy.D_xi(w)).max() * np.abs(v).max())
        # D's xi-derivative by a central difference of D (linear in xi: exact up to rounding)
        h = 1e-3
        fd = (sy.D(w, extra_xi=xi + h) - sy.D(w, extra_xi=xi - h)) / (2 * h)
        np.testing.assert_allclose(fd, sy.D_xi(w), atol=1e-9 * math.fabs(w))


def test_branch_point_with_reused_factorization_equals_the_direct_one():
    # a pitchfork in u at sin(lam) = 1/2, watched with the reused factorisation (single
    # factors, inexact corrections; the corrector's kept arrays are off with branch points)
    def res(x, lam):
        return np.array([x[0] ** 3 - (math.sin(lam) - 0.5) * x[0], x[1] - lam ** 2])

    def jac(x, lam):
        return (np.array([[3 * x[0] ** 2 - (math.sin(lam) - 0.5), 0.0], [0.0, 1.0]]),
                np.array([-math.cos(lam) * x[0], -2 * lam]))

    kw = {"ds": 0.1, "ds_max": 0.1, "lam_range": (0.0, 1.5), "branch_points": True}
    ref = continue_branch(res, jac, [0.0, 0.0], 0.0, **kw)
    new = continue_branch(res, jac, [0.0, 0.0], 0.0, reuse_factorization=True, **kw)
    bp_ref, bp_new = ref.events_of("branch_point"), new.events_of("branch_point")
    assert len(bp_ref) == len(bp_new) == 1
    # located by a secant to 1e-13 in the arclength either way: lam = pi/6 (closed form)
    assert bp_new[0].lam == pytest.approx(math.pi / 6, abs=1e-10)
    assert bp_new[0].lam == pytest.approx(bp_ref[0].lam, abs=1e-10)



def test_forced_response_with_reused_factorization_equals_the_direct_one():
    from fesub.hbm import forced_response

    # forced through the resonance at a level where the element slips over part of the period
    sy = _two_dofs(damping=2e-5)
    kw = {"max_steps": 400}
    ref = forced_response(sy, 30.0, (150.0, 260.0), reuse_factorization=False, **kw)
    new = forced_response(sy, 30.0, (150.0, 260.0), reuse_factorization=True, **kw)
    assert ref.stop_reason == new.stop_reason == "lam_range" and len(new.w) == len(ref.w)
    # the points to the corrector's tolerance (1e-10 of the force on the residual). At this
    # level the element slips: the peak per unit force is 0.63 of the stuck one's, 2.7 % lower
    # in frequency (measured)
    np.testing.assert_allclose(new.w, ref.w, rtol=1e-9)
    np.testing.assert_allclose(new.Am, ref.Am, rtol=1e-7)


def test_damped_mode_from_a_guess_of_fewer_harmonics_equals_the_branch_from_the_start():
    from fesub.errors import ParameterError
    from fesub.hbm import dnnm

    def system(nh):
        return _two_dofs(nh, constant=True)

    low = dnnm(system(1), (1e-5, 1e-3), 0, max_steps=200)
    full = dnnm(system(5), (1e-5, 3e-3), 0, max_steps=200)
    i = int(np.searchsorted(low.a, 8e-4))
    assert low.zeta[i] > 5 * low.zeta[0]          # the element slips there
    part = dnnm(system(5), (low.a[i], 3e-3), 0, max_steps=200,
                guess=(low.Q[i], low.w0[i], low.xi[i]))
    assert part.stop_reason == full.stop_reason == "lam_range"
    # the same end point (the corrector's tolerance, 1e-10 on the scaled rows), reached from a
    # one-harmonic guess whose higher harmonics were zero
    np.testing.assert_allclose(part.w0[-1], full.w0[-1], rtol=1e-9)
    np.testing.assert_allclose(part.zeta[-1], full.zeta[-1], rtol=1e-7)
    np.testing.assert_allclose(part.Q[-1], full.Q[-1], atol=1e-7 * np.abs(full.Q[-1]).max())
    with pytest.raises(ParameterError, match="guess"):
        dnnm(system(1), (1e-5, 1e-3), 0, guess=(np.zeros(3), 200.0, 0.0))
    with pytest.raises(ParameterError, match="guess"):
        dnnm(system(1), (1e-5, 1e-3), 0, guess=(np.ones(system(5).N), 200.0, 0.0))


def _chain(n=100, nh=5):
    """A chain of ``n`` unit masses (springs 2e4 N/m, both ends held) with a 3D element on
    its first two DOFs, forced on the first: N = 2 nh n harmonic unknowns (no constant term),
    1000 by default, from REUSE_FROM on (the reused factorisation)."""
    from fesub.hbm import ContactElement, Friction3D, HBSystem

    K = 2e4 * (2 * np.eye(n) - np.eye(n, k=1) - np.eye(n, k=-1))
    G = np.zeros((3, n))
    G[0, 0] = G[1, 1] = 1.0
    G[2, 0] = 0.5
    return HBSystem(np.eye(n), 1e-6 * K, K, nh, [ContactElement(Friction3D(2e3, 5e3, 0.3, 2.0,
                                                                            nt=128), G, "c")],
                    fex=np.eye(n)[0], dof=0)


@pytest.mark.parametrize("analysis", ["dnnm", "forced_response"])
def test_continuation_memory_estimate_against_the_traced_peak(analysis):
    """What dnnm and forced_response count before their first step (DNNM_ARRAYS, FORCED_ARRAYS
    N x N arrays and the gather matrices) against the peak of the arrays they allocate, traced
    by ``tracemalloc`` (NumPy reports its buffers to it): the estimate covers the peak and is
    not more than 1.3 times it (measured 1.09 and 1.05 at N = 1000), so that a refusal
    means what it says. A memory limit below the estimate refuses the run before it starts."""
    import tracemalloc

    from fesub import limits
    from fesub.errors import ParameterError
    from fesub.hbm import dnnm, forced_response
    from fesub.hbm._common import DNNM_ARRAYS, FORCED_ARRAYS

    sy = _chain()
    assert sy.N >= 1000
    if analysis == "dnnm":
        run, arrays = (lambda: dnnm(sy, (1e-5, 3e-3), 0, max_steps=15)), DNNM_ARRAYS
    else:
        w1 = math.sqrt(np.linalg.eigvalsh(sy.K)[0])
        run, arrays = (lambda: forced_response(sy, 3.0, (0.8 * w1, 1.2 * w1), max_steps=15)), FORCED_ARRAYS
    estimate = sy.memory_bytes(arrays)
    tracemalloc.start()
    try:
        out = run()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert out.stop_reason == "max_steps"
    assert peak <= estimate <= 1.3 * peak, (peak / (8 * sy.N ** 2), arrays)
    with limits.raised(max_memory_gib=0.9 * estimate / 2**30), \
            pytest.raises(ParameterError, match="harmonic unknowns.*max_memory_gib"):
        run()
