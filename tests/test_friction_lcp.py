"""The per-step friction-contact kernel (projected Gauss-Seidel), on both backends, against
independent references: SciPy's NNLS on the equivalent convex QP (no friction), an enumeration of
the contact modes written here (friction, m = 1, 2), and the closed form of a block on an incline.
"""

from __future__ import annotations

import itertools
import os

import numpy as np
import pytest
from scipy.linalg import cholesky, solve_triangular
from scipy.optimize import nnls

from fesub import _backend
from fesub.errors import ParameterError

# every solve here converges with the largest per-row change of y below TOL (y is O(1));
# the distance of the iterate to the solution is then about cond(W) * TOL (Gauss-Seidel on a
# symmetric positive definite W), and the random problems below keep cond(W) < 1e3 (asserted),
# so impulses are compared to ATOL = 1e-8 (a factor 10 above 1e3 * 1e-12 for the sums of the
# m <= 4 rows updated after the one checked)
TOL = 1e-12
ATOL = 1e-8


def kern():
    return _backend.kernels("friction_lcp")


def run(J, w, b, mu, lam0=None, tol=TOL, max_iter=10_000):
    m2, n = J.shape
    lam = np.zeros(m2) if lam0 is None else np.array(lam0, dtype=float)
    z = np.zeros(n)
    status = np.zeros(3)
    kern().solve(np.ascontiguousarray(J), w, b, mu, lam, z, tol, max_iter, status)
    return lam, z, status


def random_problem(rng, m, n=None, gap_scale=1.0):
    """J (2m, n) Gaussian, w in [0.5, 2], b normal and tangential of both signs, mu in [0, 1]."""
    n = n or 5 * m + 6
    J = rng.standard_normal((2 * m, n)) / np.sqrt(n)
    w = rng.uniform(0.5, 2.0, n)
    b = rng.standard_normal(2 * m) * gap_scale
    mu = rng.uniform(0.0, 1.0, m)
    return J, w, b, mu


def delassus(J, w):
    return (J * w) @ J.T


def qp_nnls(W, b):
    """min 1/2 x'Wx + b'x over x >= 0 as NNLS: with W = L L', the objective is
    1/2 |L'x + L^-1 b|^2 + const, i.e. nnls(L', -L^-1 b)."""
    L = cholesky(W, lower=True)
    c = solve_triangular(L, b, lower=True)
    x, _ = nnls(L.T, -c, maxiter=50 * len(b))
    return x


def check_conditions(J, w, b, mu, lam, z, atol=ATOL):
    """Every condition of the interface at (lam, z); returns the modes ('open', 'stick', 'slip')."""
    np.testing.assert_allclose(z, w * (J.T @ lam), rtol=0, atol=1e-13)
    y = b + J @ z
    modes = []
    for i in range(len(mu)):
        ln, lt, yn, yt = lam[2 * i], lam[2 * i + 1], y[2 * i], y[2 * i + 1]
        assert ln >= 0.0 and yn >= -atol  # exact projection; y_n to the iteration's accuracy
        assert abs(ln * yn) <= atol * max(1.0, ln)
        assert abs(lt) <= mu[i] * ln  # clamped last against the final lam_n: exact
        if ln <= atol:
            modes.append("open")
        elif abs(lt) < mu[i] * ln - atol:
            assert abs(yt) <= atol, "stick must have no tangential motion"
            modes.append("stick")
        else:
            if abs(yt) > atol:
                # slip opposes the motion at the full friction impulse (exact clamp)
                assert lt == -mu[i] * ln * np.sign(yt), "slip must oppose the motion"
            modes.append("slip")
    return modes


def enumerate_solutions(W, b, mu, atol=1e-9):
    """All solutions of the frictional contact problem by enumeration of the modes of every
    constraint (open / stick / slip+ / slip-): a linear system per combination, kept when it
    satisfies all the conditions (atol: round-off of a 4x4..8x8 solve with cond < 1e3)."""
    m = len(mu)
    sols = []
    for combo in itertools.product(("open", "stick", "slip+", "slip-"), repeat=m):
        A = np.zeros((2 * m, 2 * m))
        rhs = np.zeros(2 * m)
        for i, mode in enumerate(combo):
            n_, t_ = 2 * i, 2 * i + 1
            if mode == "open":
                A[n_, n_] = A[t_, t_] = 1.0
            else:
                A[n_], rhs[n_] = W[n_], -b[n_]  # y_n = 0
                if mode == "stick":
                    A[t_], rhs[t_] = W[t_], -b[t_]  # y_t = 0
                else:  # lam_t = -mu lam_n sign(y_t), with y_t > 0 for slip+
                    A[t_, t_], A[t_, n_] = 1.0, mu[i] * (1.0 if mode == "slip+" else -1.0)
        try:
            lam = np.linalg.solve(A, rhs)
        except np.linalg.LinAlgError:
            continue
        y = b + W @ lam
        ok = True
        for i, mode in enumerate(combo):
            ln, lt, yn, yt = lam[2 * i], lam[2 * i + 1], y[2 * i], y[2 * i + 1]
            if mode == "open":
                ok &= yn >= -atol
            else:
                ok &= ln >= -atol
                if mode == "stick":
                    ok &= abs(lt) <= mu[i] * ln + atol
                else:
                    ok &= (yt >= -atol) if mode == "slip+" else (yt <= atol)
        if ok:
            sols.append(lam)
    return sols


# ---------------------------------------------------------------------------------------------
# 1. no friction: a convex QP


@pytest.mark.parametrize("variant", ["mu_zero", "normal_only"])
def test_frictionless_equals_nnls_of_the_qp(backend, variant):
    rng = np.random.default_rng(1)
    worst = 0.0
    for trial in range(40):
        m = int(rng.integers(1, 9))
        J, w, b, mu = random_problem(rng, m)
        if variant == "mu_zero":
            mu[:] = 0.0  # tangential rows present, friction off: lam_t must stay 0
        else:
            J[1::2] = 0.0  # no tangential coupling at all (and mu > 0 must not matter)
        Wn = delassus(J[0::2], w)
        assert np.linalg.cond(Wn) < 1e3  # the premise of ATOL
        ref = qp_nnls(Wn, b[0::2])
        lam, z, st = run(J, w, b, mu)
        assert st[2] == 1.0 and st[1] <= TOL
        if variant == "mu_zero":
            np.testing.assert_array_equal(lam[1::2], 0.0)
        else:  # a zero tangential row cannot stop y_t = b_t: it slips at the full cone (inert)
            np.testing.assert_array_equal(lam[1::2], -mu * lam[0::2] * np.sign(b[1::2]))
        worst = max(worst, np.abs(lam[0::2] - ref).max())
        # the QP objective of the kernel's answer is not above the reference's (both optimal)
        f = lambda x: 0.5 * x @ Wn @ x + b[0::2] @ x  # noqa: E731
        assert f(lam[0::2]) <= f(ref) + 1e-12
        check_conditions(J, w, b, mu, lam, z)
    assert worst < ATOL, worst


# ---------------------------------------------------------------------------------------------
# 2. friction: the conditions, and the enumeration of modes


@pytest.mark.parametrize("m", [1, 2, 3, 4])
def test_friction_conditions_hold_at_the_solution(backend, m):
    rng = np.random.default_rng(10 + m)
    seen = set()
    for trial in range(60):
        J, w, b, mu = random_problem(rng, m)
        lam, z, st = run(J, w, b, mu)
        assert st[2] == 1.0, st
        seen.update(check_conditions(J, w, b, mu, lam, z))
    assert seen == {"open", "stick", "slip"}  # every branch of the conditions was exercised


@pytest.mark.parametrize("m", [1, 2])
def test_friction_matches_mode_enumeration(backend, m):
    rng = np.random.default_rng(20 + m)
    for trial in range(80):
        J, w, b, mu = random_problem(rng, m)
        W = delassus(J, w)
        assert np.linalg.cond(W) < 1e3
        sols = enumerate_solutions(W, b, mu)
        assert sols, "a solution exists for a positive definite W"
        lam, z, st = run(J, w, b, mu)
        assert st[2] == 1.0
        dist = min(np.abs(lam - s).max() for s in sols)
        assert dist < ATOL, (trial, dist, lam, sols)


@pytest.mark.parametrize("m", [1, 2])
def test_strongly_coupled_high_friction_converged_or_reported(backend, m):
    """Few coordinates (n = 2m + 1, W far from diagonal) and mu up to 2: the problem may have
    several solutions and the Gauss-Seidel iteration with friction may cycle. What it reports as
    converged must be one of the enumerated solutions; what it does not is reported (status)."""
    rng = np.random.default_rng(40 + m)
    failed = 0
    for trial in range(100):
        J, w, b, mu = random_problem(rng, m, n=2 * m + 1)
        mu *= 2.0
        W = delassus(J, w)
        # the error of a converged iterate is ~cond(W) * TOL: below ATOL = 1e-8 needs cond < 5e3;
        # the rarer draws worse than that test the reference's round-off, not the kernel
        if np.linalg.cond(W) > 5e3:
            continue
        sols = enumerate_solutions(W, b, mu)
        assert sols
        lam, z, st = run(J, w, b, mu, max_iter=5000)
        if st[2] == 1.0:
            check_conditions(J, w, b, mu, lam, z)
            assert min(np.abs(lam - s).max() for s in sols) < ATOL
        else:
            failed += 1
            assert st[0] == 5000 and st[1] > TOL
    assert failed <= 5  # measured: a few percent of such problems make the iteration cycle


@pytest.mark.parametrize("lam0", ["cold", "positive", "negative"])
def test_one_constraint_is_solved_exactly_where_its_solution_is_unique(backend, lam0):
    """One constraint (m = 1) is solved in closed form where the problem has one solution
    (W_nn > 0, mu |W_nt| < W_nn, det W > 0): one pass, the enumerated solution to round-off,
    and the point the sweeps converge to (the same call with tol < 0: 200 fixed sweeps). Every
    mode (open, stick, slip in both senses) and every warm start (the closed form tries the
    sense of the warm start's tangential impulse first) is exercised."""
    rng = np.random.default_rng(60)
    seen = set()
    start = {"cold": 0.0, "positive": 1.0, "negative": -1.0}[lam0]
    for trial in range(200):
        J, w, b, mu = random_problem(rng, 1, n=8)
        W = delassus(J, w)
        if not mu[0] * abs(W[0, 1]) < W[0, 0]:
            continue
        lam, z, st = run(J, w, b, mu, lam0=[abs(start), start])
        np.testing.assert_array_equal(st, [1.0, 0.0, 1.0])  # one exact solve
        (sol,) = enumerate_solutions(W, b, mu)  # unique
        # round-off of a 2 x 2 solve with cond(W) < 1e3: 1e-12 on O(1) impulses
        np.testing.assert_allclose(lam, sol, rtol=0, atol=1e-12)
        swept, _, st_s = run(J, w, b, mu, lam0=[abs(start), start], tol=-1.0, max_iter=200)
        # 200 sweeps of a contraction with cond(W) < 1e3 reach the fixed point to round-off
        np.testing.assert_allclose(lam, swept, rtol=0, atol=1e-10)
        seen.update(check_conditions(J, w, b, mu, lam, z))
        if lam[0] > 0 and abs(lam[1]) == mu[0] * lam[0] and lam[1] != 0:
            seen.add("slip+" if lam[1] > 0 else "slip-")  # tangential impulse sense
    assert seen >= {"open", "stick", "slip", "slip+", "slip-"}


def test_one_strongly_coupled_constraint_falls_back_to_the_sweeps(backend):
    """Outside the conditions of uniqueness (mu |W_nt| >= W_nn) one constraint is left to the
    sweeps: status as the sweeps report it; what converges is one of the enumerated solutions."""
    J = np.array([[1.0, 0.0], [1.5, 0.5]])  # W_nn = 1, W_nt = 1.5, W_tt = 2.5 (det 0.25 > 0)
    w = np.ones(2)
    mu = np.array([0.8])  # mu W_nt = 1.2 >= W_nn
    b = np.array([-1.0, 0.3])
    lam, z, st = run(J, w, b, mu, max_iter=5000)
    sols = enumerate_solutions(delassus(J, w), b, mu)
    if st[2] == 1.0:
        assert st[0] > 1  # the sweeps ran
        assert min(np.abs(lam - s).max() for s in sols) < ATOL
    else:
        assert st[0] == 5000


# ---------------------------------------------------------------------------------------------
# 3. closed form: a block on an incline, pushed along it


@pytest.mark.parametrize("push", [0.5, 0.99, 1.01, 3.0, -2.0])
def test_block_on_incline_stick_and_slip(backend, push):
    """Block of mass M at rest on a plane inclined by alpha, pushed up the slope by a force
    ``push * mu N`` on top of gravity. World coordinates (x, y), inverse mass h^2/M on both;
    normal row (-sin a, cos a), tangential row (cos a, sin a). The predictor from rest is
    q* = h^2 / M * (F + M g) with g = (0, -9.81): y_n* = h^2 (-g cos a), y_t* = h^2/M * F_t with
    F_t = push mu N - M g sin a. Closed form: lam_n = N = M g cos a (impulse per h^2, a force);
    |F_t| <= mu N: stick, lam_t = -F_t; otherwise slip, lam_t = -mu N sign(F_t) and the block
    moves y_t = h^2 / M (F_t + lam_t)."""
    M, h, g, a, mu = 2.0, 1e-3, 9.81, np.deg2rad(20.0), 0.3
    N = M * g * np.cos(a)
    Ft_push = push * mu * N + M * g * np.sin(a)  # applied along the slope, so F_t = push mu N
    F = Ft_push * np.array([np.cos(a), np.sin(a)])
    J = np.array([[-np.sin(a), np.cos(a)], [np.cos(a), np.sin(a)]])
    w = np.full(2, h * h / M)
    qstar = w * (F + M * np.array([0.0, -g]))
    b = J @ qstar
    lam, z, st = run(J, w, b, np.array([mu]))
    Ft = push * mu * N
    if abs(Ft) <= mu * N:
        lam_t, yt = -Ft, 0.0
    else:
        lam_t = -mu * N * np.sign(Ft)
        yt = h * h / M * (Ft + lam_t)
    # W = (h^2/M) I: one sweep is exact, the second confirms (change 0)
    assert st[0] <= 2 and st[2] == 1.0
    # round-off of a few operations on O(10 N) forces and O(1e-5 m) displacements
    np.testing.assert_allclose(lam, [N, lam_t], rtol=1e-12, atol=1e-12)
    y = b + J @ z
    np.testing.assert_allclose(y, [0.0, yt], rtol=0, atol=1e-18)


# ---------------------------------------------------------------------------------------------
# 4. backends, warm start, honest status


@pytest.mark.parametrize("m", [30, 40])
def test_backends_agree_to_round_off(m):
    """m = 30: the rows' W_rr kept on the stack of the compiled call; m = 40 (80 rows): in a
    buffer allocated for it (the compiled kernel keeps them from the first sweep, the twin
    computes them before the sweeps)."""
    if not _backend.compiled_available("friction_lcp"):
        if os.environ.get("FESUB_REQUIRE_EXT", "0") not in ("", "0"):
            pytest.fail("compiled friction_lcp missing")
        pytest.skip("compiled friction_lcp not built")
    rng = np.random.default_rng(5)
    J, w, b, mu = random_problem(rng, m, n=120)
    out = {}
    for name in ("python", "compiled"):
        with _backend.use(name):
            out[name] = run(J, w, b, mu, max_iter=25)  # same fixed number of sweeps
    (l1, z1, s1), (l2, z2, s2) = out["python"], out["compiled"]
    assert s1[0] == s2[0] == 25
    # the two differ only by the summation order of dot products of length 120 (a few ulp of
    # O(1) numbers), amplified over 25 sweeps by at most the iteration's contraction (< 1)
    np.testing.assert_allclose(l1, l2, rtol=0, atol=1e-12)
    np.testing.assert_allclose(z1, z2, rtol=0, atol=1e-12)


def test_warm_start_needs_fewer_sweeps(backend):
    """A step's problem changes little from the previous step's: started from the previous
    impulses, the solver needs fewer sweeps than from zero (same tolerance, same answer)."""
    rng = np.random.default_rng(7)
    J, w, b, mu = random_problem(rng, 20, n=100, gap_scale=1e-3)
    lam_prev, _, st0 = run(J, w, b, mu, tol=1e-15)
    assert st0[2] == 1.0
    b2 = b + 1e-6 * rng.standard_normal(b.size)  # next step: 0.1 % change of the constraint values
    cold, _, sc = run(J, w, b2, mu, tol=1e-15)
    warm, _, sw = run(J, w, b2, mu, lam0=lam_prev, tol=1e-15)
    assert sc[2] == sw[2] == 1.0
    assert sw[0] < sc[0], (sw, sc)
    np.testing.assert_allclose(warm, cold, rtol=0, atol=1e-9)  # 1e3 * tol / 1e-3 scale: see TOL


def test_warm_start_at_the_solution_stops_after_one_sweep(backend):
    rng = np.random.default_rng(8)
    J, w, b, mu = random_problem(rng, 10)
    lam, _, _ = run(J, w, b, mu)
    again, _, st = run(J, w, b, mu, lam0=lam, tol=1e-10)
    assert st[0] == 1 and st[2] == 1.0


def test_status_reports_non_convergence(backend):
    rng = np.random.default_rng(9)
    J, w, b, mu = random_problem(rng, 20, n=60)
    lam, z, st = run(J, w, b, mu, max_iter=2)
    assert st[0] == 2 and st[2] == 0.0 and st[1] > TOL
    # the reported change is the last sweep's: one more sweep from here starts where it stopped
    full, _, stf = run(J, w, b, mu)
    assert stf[2] == 1.0 and stf[0] > 2
    assert np.abs(lam - full).max() > ATOL  # what was returned is indeed not the solution
    _, _, st0 = run(J, w, b, mu, max_iter=0)
    assert st0[0] == 0 and st0[2] == 0.0 and st0[1] == np.inf


def test_no_constraint():
    """m = 0: nothing to do, and it says so."""
    lam, z, st = run(np.zeros((0, 5)), np.ones(5), np.zeros(0), np.zeros(0))
    assert lam.size == 0 and np.all(z == 0.0) and list(st) == [0.0, 0.0, 1.0]


# ---------------------------------------------------------------------------------------------
# 5. shapes (the twin, in debug mode)


@pytest.mark.parametrize("bad", ["odd_rows", "w", "b", "mu", "lam", "z", "status"])
def test_twin_rejects_shape_mismatch(bad):
    from fesub._core import friction_lcp_ref as ref

    m, n = 3, 7
    args = dict(J=np.zeros((2 * m, n)), w=np.ones(n), b=np.zeros(2 * m), mu=np.zeros(m),
                lam=np.zeros(2 * m), z=np.zeros(n), status=np.zeros(3))
    if bad == "odd_rows":
        args["J"] = np.zeros((2 * m - 1, n))
    else:
        args[bad] = np.zeros(args[bad].size + 1)
    with pytest.raises(ParameterError, match="J must" if bad == "odd_rows" else bad):
        ref.solve(args["J"], args["w"], args["b"], args["mu"], args["lam"], args["z"], 1e-9, 10,
                  args["status"])


@pytest.mark.parametrize("bad", ["odd_rows", "w", "b", "mu", "lam", "z", "status", "dtype", "strided",
                                 "read_only", "list"])
def test_compiled_rejects_bad_arguments(bad):
    """The compiled kernel takes its arrays' data directly: a wrong shape, dtype or layout, or a
    read-only output, is an error (the twin's shape errors included), not a read past an array."""
    if not _backend.compiled_available("friction_lcp"):
        if os.environ.get("FESUB_REQUIRE_EXT", "0") not in ("", "0"):
            pytest.fail("compiled friction_lcp missing")
        pytest.skip("compiled friction_lcp not built")
    with _backend.use("compiled"):
        solve = kern().solve
    m, n = 3, 7
    args = {"J": np.zeros((2 * m, n)), "w": np.ones(n), "b": np.zeros(2 * m), "mu": np.zeros(m),
            "lam": np.zeros(2 * m), "z": np.zeros(n), "status": np.zeros(3)}
    err, match = ValueError, bad
    if bad == "odd_rows":
        args["J"], match = np.zeros((2 * m - 1, n)), "J must"
    elif bad == "dtype":
        args["w"], err, match = np.ones(n, np.float32), TypeError, "w must be of dtype float64"
    elif bad == "strided":
        args["lam"], match = np.zeros(4 * m)[::2], "lam must be C-contiguous"
    elif bad == "read_only":
        args["z"].setflags(write=False)
        match = "z is written to but is read-only"
    elif bad == "list":
        args["b"], err, match = [0.0] * (2 * m), TypeError, "b must be a NumPy array"
    else:
        args[bad] = np.zeros(args[bad].size + 1)
    with pytest.raises(err, match=match):
        solve(args["J"], args["w"], args["b"], args["mu"], args["lam"], args["z"], 1e-9, 10, args["status"])


def test_zero_normal_row_with_penetration_is_reported(backend):
    """A normal row no coordinate moves cannot correct a negative value: no solution exists, and
    the status says so (never converged, change inf) instead of returning lam_n = 0 as a solution."""
    J = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 0.0]])
    lam, z, st = run(J, np.ones(2), np.array([-1.0, 0.0, -1.0, 0.0]), np.array([0.5, 0.5]),
                     max_iter=5)
    assert st[2] == 0.0 and st[1] == np.inf and st[0] == 5
    assert lam[0] == 0.0 and lam[2] == 1.0  # the other constraint is still solved


def test_every_instruction_set_build_gives_the_same_numbers(monkeypatch):
    """The AVX2/AVX-512 builds reassociate the dot products: same impulses to round-off."""
    if not _backend.compiled_available("friction_lcp"):
        pytest.skip("compiled friction_lcp not built")
    rng = np.random.default_rng(11)
    J, w, b, mu = random_problem(rng, 30, n=120)
    out = {}
    for lvl in _backend.isa_levels():
        monkeypatch.setenv("FESUB_ISA", lvl)
        with _backend.use("compiled"):
            if _backend.isa("friction_lcp") != lvl:
                continue  # no build at this level
            out[lvl] = run(J, w, b, mu, max_iter=25)[0]
    assert "baseline" in out
    for lvl, lam in out.items():
        # as in test_backends_agree_to_round_off: summation order only
        np.testing.assert_allclose(lam, out["baseline"], rtol=0, atol=1e-12, err_msg=lvl)
