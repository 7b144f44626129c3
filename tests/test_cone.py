"""The exact friction cone in 3D (the ``cone`` kernel, both backends, and its wrappers) against
independent solutions: every case of Coulomb's law enumerated here, the slip case solved by
SciPy's ``root`` on the slip velocity vector from many starts (the kernel brackets roots in the
slip angle instead); the 2D closed form of the ``friction_lcp`` kernel on a node whose second
tangent is decoupled; rotations of the tangent plane (isotropy); and the residual of every
Coulomb condition (signs, complementarity, the cone, stick without slip, slip opposing the
friction force) on single and coupled nodes.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import root

from fesub import _backend
from fesub.contact.engine import cone
from fesub.contact.engine.friction import Coulomb, StaticKinetic, Stribeck, UserLaw, law_arrays
from fesub.errors import ParameterError

# The kernel's slip angle is bisected to the last bit and its stick solve is a Cholesky
# factorisation of a block with cond(W) < 1e3 (random_node keeps it so): impulses and velocities
# carry errors of about cond(W) * 1e-16 * |q| ~ 1e-13 relative; SciPy's root stops at xtol 1e-13.
# Comparisons at RTOL = 1e-9 leave a factor 1e3-1e4 of margin for the conditioning of the
# slip equation itself.
RTOL = 1e-9


def random_node(rng, law_kind=None):
    A = rng.standard_normal((3, 3))
    W = A @ A.T + rng.uniform(0.2, 1.0) * np.eye(3)
    assert np.linalg.cond(W) < 1e3
    q = rng.standard_normal(3)
    kind = law_kind or rng.choice(["coulomb", "static_kinetic", "stribeck"])
    mu_s = rng.uniform(0.0, 0.8)
    mu_k = mu_s * rng.uniform(0.2, 1.0)
    law = {"coulomb": lambda: Coulomb(mu_s), "static_kinetic": lambda: StaticKinetic(mu_s, mu_k),
           "stribeck": lambda: Stribeck(mu_s, mu_k, rng.uniform(0.05, 2.0))}[kind]()
    return W, q, law


def mu_slip(law, v):
    return float(law.coefficient(v))


def independent_solutions(W, q, law):
    """Every solution of the node's problem, by case: ('open', 0) when q_n >= 0; ('stick', lam)
    when the linear solve lies in the cone; else every slip solution SciPy's ``root`` finds on
    the unknown slip velocity v (2-vector) from 24 starts."""
    if q[0] >= 0:
        return "open", [np.zeros(3)]
    lam = np.linalg.solve(W, -q)
    if lam[0] >= 0 and np.hypot(lam[1], lam[2]) <= law.mu_static * lam[0] * (1 + 1e-12):
        return "stick", [lam]

    def impulses(v):
        s = np.hypot(*v)
        d = v / s
        mu = mu_slip(law, s)
        a = np.array([1.0, -mu * d[0], -mu * d[1]])
        return -q[0] / (W[0] @ a) * a

    def residual(v):
        return W[1:] @ impulses(v) + q[1:] - v

    found = []
    scale = np.abs(q).max() + np.abs(W).max()
    for k in range(12):
        for r in (0.1, 1.0):
            th = 2 * np.pi * k / 12
            v0 = r * scale * np.array([np.cos(th), np.sin(th)])
            with np.errstate(all="ignore"):
                sol = root(residual, v0, method="hybr", options={"xtol": 1e-13})
            v = sol.x
            if not np.all(np.isfinite(v)) or np.hypot(*v) < 1e-12 * scale:
                continue
            lam = impulses(v)
            if lam[0] <= 0 or np.abs(residual(v)).max() > 1e-11 * scale:
                continue
            if not any(np.allclose(lam, f, rtol=1e-8, atol=1e-10 * scale) for f in found):
                found.append(lam)
    return "slip", found


def coulomb_violation(W, q, lam, law):
    """The largest violation of Coulomb's conditions at one node, relative to |q| + |W lam|."""
    u = W @ lam + q
    scale = np.abs(q).max() + np.abs(W @ lam).max() + 1e-300
    ln, lt, un, ut = lam[0], lam[1:], u[0], u[1:]
    fscale = abs(ln) + np.hypot(*lt) + 1e-300
    v = np.hypot(*ut)
    worst = max(-ln / fscale, -un / scale, 0.0)                     # signs
    worst = max(worst, abs(ln * un) / (fscale * scale))             # complementarity
    worst = max(worst, (np.hypot(*lt) - law.mu_static * ln) / fscale)  # the cone
    if v > 1e-9 * scale:                                            # slip opposes, at mu(v)
        worst = max(worst, np.abs(lt + mu_slip(law, v) * ln * ut / v).max() / fscale)
    elif ln > 0:                                                    # closed and not slipping:
        worst = max(worst, np.abs(u).max() / scale)                 # stick, u = 0
    return worst


def kern():
    return _backend.kernels("cone")


def run_nodes(Ws, qs, laws):
    code, params, _ = law_arrays(laws, len(Ws))
    lam = np.zeros((len(Ws), 3))
    case = np.zeros(len(Ws), np.int64)
    kern().solve_nodes(np.ascontiguousarray(Ws), np.ascontiguousarray(qs), code, params, lam, case)
    return lam, case


@pytest.mark.parametrize("kind", ["coulomb", "static_kinetic", "stribeck"])
def test_random_nodes_against_enumeration_and_scipy(backend, kind):
    """120 random nodes per law: the kernel's case and impulses are those of the independent
    enumeration (and, in slip, one of the solutions SciPy's root finds; the unique one where
    it finds one), and every Coulomb condition holds."""
    rng = np.random.default_rng({"coulomb": 1, "static_kinetic": 2, "stribeck": 3}[kind])
    nodes = [random_node(rng, kind) for _ in range(120)]
    for k, (W, q, _) in enumerate(nodes[:60]):
        q[0] = -abs(q[0])  # the first 60 closed: more slip, and stick cases
        if k >= 30:
            q[1:] *= 0.1
    Ws = np.array([n[0] for n in nodes])
    qs = np.array([n[1] for n in nodes])
    laws = [n[2] for n in nodes]
    lam, case = run_nodes(Ws, qs, laws)
    counts = {c: 0 for c in ("open", "stick", "slip")}
    for i, (W, q, law) in enumerate(nodes):
        which, sols = independent_solutions(W, q, law)
        counts[which] += 1
        assert case[i] == {"open": cone.OPEN, "stick": cone.STICK, "slip": cone.SLIP}[which], i
        scale = np.abs(sols[0]).max() if sols else 1.0
        assert sols, f"node {i}: the independent solver found no slip solution"
        err = min(np.abs(lam[i] - s).max() for s in sols)
        assert err <= RTOL * scale, (i, which, lam[i], sols)
        assert coulomb_violation(W, q, lam[i], law) < RTOL
    assert min(counts.values()) >= 10, counts  # every case exercised


def test_backends_agree():
    """The compiled kernel and its twin take the same steps: same cases, impulses to round-off
    (the only difference is libm's cos/sin/exp against Python's; 1e-12 of the impulses)."""
    if not _backend.compiled_available("cone"):
        pytest.skip("compiled cone not built")
    rng = np.random.default_rng(7)
    nodes = [random_node(rng) for _ in range(200)]
    Ws = np.array([n[0] for n in nodes])
    qs = np.array([n[1] for n in nodes])
    laws = [n[2] for n in nodes]
    out = {}
    for b in ("python", "compiled"):
        with _backend.use(b):
            out[b] = run_nodes(Ws, qs, laws)
    np.testing.assert_array_equal(out["python"][1], out["compiled"][1])
    np.testing.assert_allclose(out["python"][0], out["compiled"][0], rtol=1e-12, atol=1e-14)


def test_decoupled_node_is_the_2d_closed_form(backend):
    """A node whose second tangent is decoupled (W_n2 = W_12 = 0, q_2 = 0) is the 2D problem:
    the same impulses as the friction_lcp kernel (its closed form for one constraint)."""
    rng = np.random.default_rng(11)
    lcp = _backend.kernels("friction_lcp")
    for _ in range(60):
        J = rng.standard_normal((2, 6))
        w = rng.uniform(0.5, 2.0, 6)
        b = rng.standard_normal(2)
        mu = rng.uniform(0.0, 0.6)
        lam2 = np.zeros(2)
        lcp.solve(J, w, b, np.array([mu]), lam2, np.zeros(6), 1e-15, 10_000, np.zeros(3))
        W2 = (J * w) @ J.T
        W = np.zeros((3, 3))
        W[:2, :2] = W2
        W[2, 2] = 1.0
        sol = cone.solve_cone(W, np.r_[b, 0.0], Coulomb(mu))
        # the 2D closed form and the 3D bisected angle both reach round-off of O(1) impulses
        np.testing.assert_allclose(sol.lam, np.r_[lam2, 0.0], rtol=1e-9, atol=1e-12)


def test_isotropy(backend):
    """An isotropic node (W = diag(wn, wt, wt)) turned in its tangent plane: the impulses turn
    with it, and in slip the friction force lies exactly against the slip (an exact cone, not a
    box per direction: a box would give |lam_t| = sqrt(2) mu lam_n at 45 degrees)."""
    W = np.diag([2.0, 1.5, 1.5])
    law = Coulomb(0.3)
    base = cone.solve_cone(W, np.array([-1.0, 2.0, 0.0]), law)
    assert base.case == cone.SLIP
    for th in np.linspace(0, 2 * np.pi, 9)[:-1]:
        R = np.array([[np.cos(th), -np.sin(th)], [np.sin(th), np.cos(th)]])
        q = np.r_[-1.0, R @ [2.0, 0.0]]
        sol = cone.solve_cone(W, q, law)
        np.testing.assert_allclose(sol.lam, np.r_[base.lam[0], R @ base.lam[1:]], rtol=1e-12, atol=1e-14)
        # closed form: lam_n = 1 / 2, |lam_t| = mu lam_n, u_t = q_t + 1.5 lam_t along q_t
        np.testing.assert_allclose(sol.lam[0], 0.5, rtol=1e-14)
        np.testing.assert_allclose(np.hypot(*sol.lam[1:]), 0.15, rtol=1e-13)


def test_static_kinetic_threshold(backend):
    """Stick holds up to mu_s lam_n and slip then runs at mu_k: a decoupled node, q_n = -1,
    W = I, so stick needs |lam_t| = |q_t| and lam_n = 1."""
    law = StaticKinetic(0.5, 0.3)
    W = np.eye(3)
    hold = cone.solve_cone(W, np.array([-1.0, 0.49, 0.0]), law)
    assert hold.case == cone.STICK and np.allclose(hold.u, 0)
    slip = cone.solve_cone(W, np.array([-1.0, 0.51, 0.0]), law)
    assert slip.case == cone.SLIP
    np.testing.assert_allclose(slip.lam, [1.0, -0.3, 0.0], rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(slip.u, [0.0, 0.21, 0.0], atol=1e-14)


def test_stribeck_slip_speed_closed_form(backend):
    """W = I: in slip lam_n = -q_n and the slip speed solves v = |q_t| - mu(v) lam_n, a scalar
    equation solved here by SciPy's brentq."""
    from scipy.optimize import brentq

    law = Stribeck(0.6, 0.2, 0.1)
    qt = 0.8
    v = brentq(lambda v: v - qt + float(law.coefficient(v)) * 1.0, 0.0, qt, xtol=1e-15)
    sol = cone.solve_cone(np.eye(3), np.array([-1.0, 0.0, qt]), law)
    assert sol.case == cone.SLIP
    np.testing.assert_allclose(sol.u[2], v, rtol=1e-12)
    np.testing.assert_allclose(sol.lam[2], -float(law.coefficient(v)), rtol=1e-12)


def test_user_law_equals_builtin(backend):
    """A Python callable equal to the Stribeck law gives the built-in law's solution (the slow
    path's brentq against the kernel's regula falsi, both to a few ulps of mu)."""
    rng = np.random.default_rng(5)
    law = Stribeck(0.7, 0.25, 0.3)
    user = UserLaw(lambda v: 0.25 + 0.45 * np.exp(-v / 0.3))
    Ws, qs = [], []
    for _ in range(20):
        W, q, _ = random_node(rng)
        q[0] = -abs(q[0])
        Ws.append(W)
        qs.append(q)
    a = cone.solve_cones(Ws, qs, law)
    b = cone.solve_cones(Ws, qs, user)
    np.testing.assert_array_equal(a.case, b.case)
    np.testing.assert_allclose(b.lam, a.lam, rtol=1e-10, atol=1e-13)
    # per node: one node with the user law among built-in ones
    mixed = cone.solve_cones(Ws, qs, [law] * 10 + [user] + [law] * 9)
    np.testing.assert_allclose(mixed.lam, a.lam, rtol=1e-10, atol=1e-13)


def random_coupled(rng, m, mu_max=0.4):
    B = rng.standard_normal((3 * m, 3 * m + 2))
    W = B @ B.T / (3 * m) + 0.5 * np.eye(3 * m)
    q = rng.standard_normal(3 * m)
    laws = []
    for _ in range(m):
        mu_s = rng.uniform(0.0, mu_max)
        laws.append([Coulomb(mu_s), StaticKinetic(mu_s, 0.6 * mu_s),
                     Stribeck(mu_s, 0.5 * mu_s, 0.3)][rng.integers(3)])
    return W, q, laws


@pytest.mark.parametrize("m", [2, 4, 8])
def test_block_gauss_seidel_satisfies_coulomb(backend, m):
    """Coupled nodes: the converged sweeps give impulses for which every node's Coulomb
    conditions hold on u = W lam + q recomputed here (the residual of a solution, whatever
    solver found it), over random problems with mu up to 0.4."""
    rng = np.random.default_rng(100 + m)
    for _ in range(10):
        W, q, laws = random_coupled(rng, m)
        sol = cone.solve_coupled(W, q, laws, tol=1e-13)
        assert sol.converged, (sol.sweeps, sol.change)
        u = W @ sol.lam.reshape(-1) + q
        np.testing.assert_allclose(sol.u.reshape(-1), u, atol=1e-11)
        for i in range(m):
            s = slice(3 * i, 3 * i + 3)
            # each node solved exactly given the others (to the sweep tolerance 1e-13 times
            # cond(W) < 1e2 for these blocks), relative to O(1) velocities
            q_i = u[s] - W[s, s] @ sol.lam[i]
            assert coulomb_violation(W[s, s], q_i, sol.lam[i], laws[i]) < 1e-9


def test_block_gauss_seidel_decoupled_is_one_sweep(backend):
    """A block-diagonal W: the sweeps are the independent node solves, converged in two sweeps
    (the second changes nothing)."""
    rng = np.random.default_rng(9)
    nodes = [random_node(rng) for _ in range(5)]
    W = np.zeros((15, 15))
    for i, (Wi, _, _) in enumerate(nodes):
        W[3 * i:3 * i + 3, 3 * i:3 * i + 3] = Wi
    q = np.concatenate([n[1] for n in nodes])
    laws = [n[2] for n in nodes]
    sol = cone.solve_coupled(W, q, laws)
    ind = cone.solve_cones([n[0] for n in nodes], [n[1] for n in nodes], laws)
    assert sol.converged and sol.sweeps == 2
    np.testing.assert_array_equal(sol.lam, ind.lam)


def test_block_gauss_seidel_status_when_not_converged(backend):
    """One sweep with a tolerance it cannot meet: status says not converged, sweeps = 1."""
    rng = np.random.default_rng(2)
    W, q, laws = random_coupled(rng, 4)
    q[::3] = -1.0
    sol = cone.solve_coupled(W, q, laws, tol=1e-300, max_iter=1)
    assert not sol.converged and sol.sweeps == 1 and sol.change > 0


def test_coupled_user_law_matches_kernel(backend):
    """Coupled nodes with a Python law (the sweeps in Python) reach the kernel's solution of the
    same built-in law to the sweep tolerance."""
    rng = np.random.default_rng(4)
    W, q, _ = random_coupled(rng, 3)
    law = Stribeck(0.3, 0.15, 0.2)
    user = UserLaw(lambda v: 0.15 + 0.15 * np.exp(-v / 0.2))
    a = cone.solve_coupled(W, q, law, tol=1e-13)
    b = cone.solve_coupled(W, q, user, tol=1e-13)
    assert a.converged and b.converged
    np.testing.assert_allclose(b.lam, a.lam, atol=1e-10)


def test_bad_input():
    with pytest.raises(ParameterError, match="not positive definite"):
        cone.solve_cone(np.diag([1.0, -1.0, 1.0]), np.zeros(3), 0.3)
    with pytest.raises(ParameterError, match="not symmetric"):
        cone.solve_cone(np.array([[1.0, 0.5, 0], [0, 1, 0], [0, 0, 1]]), np.zeros(3), 0.3)
    with pytest.raises(ParameterError, match="q"):
        cone.solve_cone(np.eye(3), [np.nan, 0, 0], 0.3)
    with pytest.raises(ParameterError, match="one per node"):
        cone.solve_cones(np.stack([np.eye(3)] * 2), np.zeros((2, 3)), [0.1, 0.2, 0.3])
    with pytest.raises(ParameterError, match="3m"):
        cone.solve_coupled(np.eye(4), np.zeros(4), 0.3)
    with pytest.raises(ParameterError, match="tol"):
        cone.solve_coupled(np.eye(3), np.zeros(3), 0.3, tol=0.0)
