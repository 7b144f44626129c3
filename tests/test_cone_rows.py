"""The block Gauss-Seidel of the ``cone`` kernel on the rows ``J`` of the nodes (``block_gs_rows``:
``W = J diag(w) J'`` never formed, ``z = diag(w) J' lam`` updated node by node) against the same
sweeps on the dense operator (``block_gs`` given ``W`` formed here by NumPy), both backends, on
random coupled problems with every law: the same cases, sweeps and impulses to round-off, ``z``
and the node blocks equal to their NumPy products. Also with rows of zeros (a direction nothing
moves), where both raise the diagonal to the same floor. And ``frame_rows``, which forms each
node's rows from its frame, against NumPy's products node by node; and ``block_gs_frames``, the
same sweeps on rows given as frames times component rows (a subset of the nodes, over a window of
the columns, one for all nodes or each node its own), against ``block_gs_rows`` on those rows
formed by NumPy.
"""

from __future__ import annotations

import numpy as np
import pytest

from fesub import _backend
from fesub.contact.engine.friction import Coulomb, StaticKinetic, Stribeck, law_arrays

# Both solvers take the same sweeps node by node; they differ only in the order of the sums
# (u_i = J_i z + q_i against u = W lam + q kept up to date), ~1e-16 relative a product, carried
# through a few hundred sweeps (237 in the slowest case here) of contractions with
# cond(W_ii) < 1e3: 1e-10 of the largest impulse leaves a factor > 100 of margin over the worst
# measured (about 1e-13).
RTOL = 1e-10


def same_stop(st, st_ref, tol=1e-13):
    """The two solvers' sweep counts (``status[0]``) are equal, or one apart where the stop was a
    close call: the solver that stopped first changed the impulses by more than half the
    tolerance in its last sweep. Each sweep compares a change of ~1e-13 with the tolerance; the
    solvers' round-off in that change (a few 1e-15 after 200 sweeps: the rows formed by NumPy's
    BLAS against products in the kernel) can move a stop by one sweep when the change lands
    within a few percent of the tolerance (seen on one machine: 237 against 236 sweeps, last
    changes 9.0e-14 and 9.6e-14). The impulses are compared to RTOL after it either way."""
    first = st if st[0] < st_ref[0] else st_ref
    return st[0] == st_ref[0] or (abs(st[0] - st_ref[0]) == 1 and first[1] > 0.5 * tol)


def random_rows(rng, m, n, mu_max=0.6):
    """Rows of m nodes over n columns (each node's three rows mostly on three columns of its
    own, taken modulo n, plus a weaker coupling over all columns), positive weights, free values
    (most nodes pressed) and mixed laws."""
    J = 0.3 * rng.standard_normal((3 * m, n)) / np.sqrt(n)
    for i in range(m):
        cols = (3 * i + np.arange(3)) % n
        J[3 * i:3 * i + 3, cols] += np.eye(3) + 0.2 * rng.standard_normal((3, 3))
    w = rng.uniform(0.5, 2.0, n)
    q = rng.standard_normal(3 * m)
    q[0::3] -= 0.5
    q[1::3] *= 0.1  # small tangential free values: some nodes stick
    q[2::3] *= 0.1
    laws = []
    for _ in range(m):
        mu_s = rng.uniform(0.0, mu_max)
        laws.append([Coulomb(mu_s), StaticKinetic(mu_s, 0.6 * mu_s), Stribeck(mu_s, 0.5 * mu_s, 0.3)][rng.integers(3)])
    return J, w, q, laws


def both(J, w, q, laws, lam0, floor=0.0, tol=1e-13, max_iter=500):
    """(rows solve, dense solve): each (lam, case, status) and the rows solve's (z, blocks)."""
    K = _backend.kernels("cone")
    m = len(laws)
    code, params, _ = law_arrays(laws, m)
    W = (J * w) @ J.T
    d = np.einsum("ii->i", W)
    np.maximum(d, floor * d.max(), out=d)
    lam_r, lam_d = lam0.copy(), lam0.copy()
    case_r, case_d = np.zeros(m, np.int64), np.zeros(m, np.int64)
    st_r, st_d = np.zeros(3), np.zeros(3)
    z, blocks = np.zeros(J.shape[1]), np.zeros((m, 3, 3))
    K.block_gs_rows(J, w, q, code, params, floor, lam_r, z, blocks, case_r, tol, max_iter, st_r)
    K.block_gs(W, q, code, params, lam_d, np.zeros(3 * m), case_d, tol, max_iter, st_d)
    return (lam_r, case_r, st_r), (lam_d, case_d, st_d), (z, blocks)


@pytest.mark.parametrize("m, n", [(1, 5), (4, 30), (12, 20), (25, 200)])
def test_rows_solve_equals_dense_solve(backend, m, n):
    """Random problems (n < 3m: W singular, blocks still definite; n > 3m: W definite), cold and
    warm started: every case, the sweep count and the impulses of the dense sweeps."""
    rng = np.random.default_rng(1000 + 7 * m + n)
    worst, cases = 0.0, set()
    for trial in range(8):
        # a singular W (n < 3m) couples every node: smaller coefficients keep the sweeps from
        # cycling (they may, for large mu under strong coupling)
        J, w, q, laws = random_rows(rng, m, n, mu_max=0.6 if n >= 3 * m else 0.3)
        lam0 = np.zeros(3 * m) if trial % 2 == 0 else np.abs(rng.standard_normal(3 * m)) * 0.1
        (lr, cr, sr), (ld, cd, sd), (z, blocks) = both(J, w, q, laws, lam0)
        assert sd[2] == 1.0 and sr[2] == 1.0, (sd, sr)
        np.testing.assert_array_equal(cr, cd)
        assert sr[0] == sd[0]
        scale = max(np.abs(ld).max(), 1e-300)
        np.testing.assert_allclose(lr, ld, rtol=0, atol=RTOL * scale)
        worst = max(worst, np.abs(lr - ld).max() / scale)
        np.testing.assert_allclose(z, w * (J.T @ lr), rtol=0, atol=1e-13 * np.abs(z).max())
        W = (J * w) @ J.T
        for i in range(m):
            np.testing.assert_allclose(blocks[i], W[3 * i:3 * i + 3, 3 * i:3 * i + 3], rtol=1e-13, atol=1e-15)
        cases.update(cr.tolist())
    assert worst < RTOL
    if m > 1:
        assert {0, 1, 2} <= cases  # open, stick and slip nodes all met


def test_rows_of_zeros_take_the_floor(backend):
    """A second tangent no column moves (a model held in its plane): both raise that diagonal
    to 1e-12 of the largest and give the same impulses, the force along that row zero."""
    rng = np.random.default_rng(5)
    m, n = 10, 40
    J, w, q, laws = random_rows(rng, m, n)
    J[2::3] = 0.0
    q[2::3] = 0.0
    (lr, cr, sr), (ld, cd, sd), _ = both(J, w, q, laws, np.zeros(3 * m), floor=1e-12)
    assert sr[2] == sd[2] == 1.0
    np.testing.assert_array_equal(cr, cd)
    np.testing.assert_allclose(lr, ld, rtol=0, atol=RTOL * np.abs(ld).max())
    # zero to round-off: a slip direction along the first tangent comes out of a root in the
    # slip angle closed to ~1e-15 rad
    assert np.abs(lr[2::3]).max() <= 1e-14 * np.abs(lr).max()


def test_backends_agree_on_rows():
    """The compiled kernel and its twin on the same 25-node problem: impulses to round-off."""
    if not _backend.compiled_available("cone"):
        pytest.skip("compiled kernels not built")
    rng = np.random.default_rng(77)
    J, w, q, laws = random_rows(rng, 25, 120)
    out = {}
    for name in ("compiled", "python"):
        with _backend.use(name):
            out[name] = both(J, w, q, laws, np.zeros(75))[0]
    np.testing.assert_array_equal(out["compiled"][1], out["python"][1])
    np.testing.assert_allclose(out["compiled"][0], out["python"][0], rtol=0,
                               atol=RTOL * np.abs(out["python"][0]).max())


def test_frame_rows_are_the_products_of_each_node(backend):
    """``frame_rows`` adds each node's 3 x 3 directions times its (3, ns) rows into its columns:
    node by node against NumPy's matrix product, the columns outside left as they were."""
    rng = np.random.default_rng(3)
    k, ns, n, c0 = 7, 11, 20, 4
    F, S = rng.standard_normal((k, 3, 3)), rng.standard_normal((k, 3, ns))
    J0 = rng.standard_normal((k, 3, n))
    J = J0.copy()
    _backend.kernels("cone").frame_rows(F, S, -1.0, c0, J)
    for i in range(k):
        np.testing.assert_allclose(J[i, :, c0:c0 + ns], J0[i, :, c0:c0 + ns] - F[i] @ S[i], rtol=1e-14, atol=1e-14)
    np.testing.assert_array_equal(J[:, :, :c0], J0[:, :, :c0])
    np.testing.assert_array_equal(J[:, :, c0 + ns:], J0[:, :, c0 + ns:])


def frames_problem(rng, m, kd, ns, n, c0):
    """A problem of m nodes picked (shuffled) among kd: component rows D (kd, 3, ns) over the
    columns c0 .. c0 + ns of n, random orthonormal frames F (kd, 3, 3), and the rows J (3m, n)
    formed by NumPy."""
    D = random_rows(rng, kd, ns)[0].reshape(kd, 3, ns)
    F = np.stack([np.linalg.qr(rng.standard_normal((3, 3)))[0] for _ in range(kd)])
    nodes = rng.permutation(kd)[:m].astype(np.int64)
    J = np.zeros((3 * m, n))
    for i, j in enumerate(nodes):
        J[3 * i:3 * i + 3, c0:c0 + ns] = F[j] @ D[j]
    _, w, q, laws = random_rows(rng, m, n, mu_max=0.3)  # as the singular cases above: no cycling sweeps
    return D, F, nodes, J, w, q, laws


@pytest.mark.parametrize("m, kd, ns, n, c0", [(1, 1, 6, 6, 0), (5, 9, 30, 40, 7), (20, 25, 150, 160, 10)])
def test_frames_solve_equals_rows_solve(backend, m, kd, ns, n, c0):
    """Cold and warm started, Gram matrices formed and then given: the cases, sweep counts and
    impulses of ``block_gs_rows`` on the rows formed by NumPy (the blocks ``F G F'`` against
    ``J_i diag(w) J_i'`` differ by round-off only: the tolerance of the rows against the dense
    solve holds), ``z`` and the Gram matrices equal to their NumPy products."""
    K = _backend.kernels("cone")
    rng = np.random.default_rng(50 + m + n)
    worst = 0.0
    for trial in range(6):
        D, F, nodes, J, w, q, laws = frames_problem(rng, m, kd, ns, n, c0)
        code, params, _ = law_arrays(laws, m)
        lam0 = np.zeros(3 * m) if trial % 2 == 0 else np.abs(rng.standard_normal(3 * m)) * 0.1
        lam_r, case_r, st_r, z_r = lam0.copy(), np.zeros(m, np.int64), np.zeros(3), np.zeros(n)
        K.block_gs_rows(J, w, q, code, params, 0.0, lam_r, z_r, np.zeros((m, 3, 3)), case_r, 1e-13, 500, st_r)
        gram = np.full((kd, 3, 3), np.nan)
        for given in (False, True):
            lam, case, st, z = lam0.copy(), np.zeros(m, np.int64), np.zeros(3), np.full(n, np.nan)
            K.block_gs_frames(D, nodes, c0, F, w, q, code, params, 0.0, lam, z, gram, given, case, 1e-13, 500, st)
            assert st[2] == st_r[2] == 1.0, (st, st_r)
            np.testing.assert_array_equal(case, case_r)
            assert same_stop(st, st_r), (st, st_r)
            scale = max(np.abs(lam_r).max(), 1e-300)
            np.testing.assert_allclose(lam, lam_r, rtol=0, atol=RTOL * scale)
            worst = max(worst, np.abs(lam - lam_r).max() / scale)
            # to the round-off of the largest vector z held: the warm start's (a node opened from
            # it leaves ~1e-16 of it, as in the test below)
            big = max(np.abs(z).max(), np.abs(w * (J.T @ lam0)).max())
            np.testing.assert_allclose(z, w * (J.T @ lam), rtol=0, atol=1e-13 * big)
        for j in nodes:
            np.testing.assert_allclose(gram[j], (D[j] * w[c0:c0 + ns]) @ D[j].T, rtol=1e-13, atol=1e-15)
        left = np.setdiff1d(np.arange(kd), nodes)
        assert np.isnan(gram[left]).all()  # only the problem's nodes are formed
    assert worst < RTOL


@pytest.mark.parametrize("m, kd, ns, n, c0", [(1, 1, 6, 6, 0), (5, 9, 30, 40, 7), (20, 25, 150, 160, 10)])
def test_frames_carried_z_equals_formed_z(backend, m, kd, ns, n, c0):
    """Bit 2 of ``given``: ``z`` taken as ``diag(w) J' lam`` of the warm start instead of formed.
    Given as NumPy forms it (and the Gram matrices given), the sweeps are those of a solve that
    forms both: the same cases and sweep counts, impulses and ``z`` to round-off; a second solve
    started from the first one's ``z`` and impulses (a step whose rows and forces are unchanged)
    is converged at once (one sweep, no change beyond the tolerance)."""
    K = _backend.kernels("cone")
    rng = np.random.default_rng(90 + m + n)
    for trial in range(4):
        D, F, nodes, J, w, q, laws = frames_problem(rng, m, kd, ns, n, c0)
        code, params, _ = law_arrays(laws, m)
        lam0 = np.abs(rng.standard_normal(3 * m)) * 0.1
        gram = np.zeros((kd, 3, 3))
        lam_f, case_f, st_f, z_f = lam0.copy(), np.zeros(m, np.int64), np.zeros(3), np.zeros(n)
        K.block_gs_frames(D, nodes, c0, F, w, q, code, params, 0.0, lam_f, z_f, gram, 0, case_f, 1e-13, 500, st_f)
        lam, case, st, z = lam0.copy(), np.zeros(m, np.int64), np.zeros(3), w * (J.T @ lam0)
        K.block_gs_frames(D, nodes, c0, F, w, q, code, params, 0.0, lam, z, gram, 3, case, 1e-13, 500, st)
        assert st[2] == st_f[2] == 1.0 and same_stop(st, st_f), (st, st_f)
        np.testing.assert_array_equal(case, case_f)
        scale = max(np.abs(lam_f).max(), 1e-300)
        np.testing.assert_allclose(lam, lam_f, rtol=0, atol=RTOL * scale)  # (see RTOL)
        # z against NumPy's product of the final impulses (as in the test above), to the round-off
        # of the largest vector it held: the start's (an opened node's updates leave ~1e-16 of it)
        big = max(np.abs(z).max(), np.abs(w * (J.T @ lam0)).max())
        np.testing.assert_allclose(z, w * (J.T @ lam), rtol=0, atol=1e-13 * big)
        # the next problem on the same rows and free values, warm started from this one's end
        st2 = np.zeros(3)
        K.block_gs_frames(D, nodes, c0, F, w, q, code, params, 0.0, lam, z, gram, 3, case, 1e-13, 500, st2)
        assert st2[0] == 1.0 and st2[1] <= 1e-13 and st2[2] == 1.0, st2


@pytest.mark.parametrize("m, kd, ns, n", [(1, 1, 3, 9), (6, 9, 12, 40), (24, 30, 40, 160)])
def test_frames_windows_of_each_node(backend, m, kd, ns, n):
    """Each node its own window of the columns (``c0`` a (kd, 2) array of first column and
    width): the cases, sweep counts and impulses of ``block_gs_rows`` on the rows placed by
    NumPy into their windows (zero elsewhere), ``z`` and the Gram matrices their NumPy products;
    the columns of ``D`` past a node's width (NaN here) are never read."""
    K = _backend.kernels("cone")
    rng = np.random.default_rng(400 + m + n)
    for trial in range(4):
        D, F, nodes, _, w, q, laws = frames_problem(rng, m, kd, ns, n, 0)
        width = rng.integers(min(3, ns), ns + 1, kd)
        for j in range(kd):  # each node's rows mostly on three columns of its window (definite blocks)
            D[j] = 0.3 * rng.standard_normal((3, ns)) / np.sqrt(width[j])
            D[j][:, rng.choice(width[j], 3, replace=False)] += np.eye(3) + 0.2 * rng.standard_normal((3, 3))
        win = np.column_stack([rng.integers(0, n - width + 1), width]).astype(np.int64)
        J = np.zeros((3 * m, n))
        for i, j in enumerate(nodes):
            J[3 * i:3 * i + 3, win[j, 0]:win[j, 0] + width[j]] = F[j] @ D[j, :, :width[j]]
        for j in range(kd):
            D[j, :, width[j]:] = np.nan
        code, params, _ = law_arrays(laws, m)
        lam0 = np.zeros(3 * m) if trial % 2 == 0 else np.abs(rng.standard_normal(3 * m)) * 0.1
        lam_r, case_r, st_r, z_r = lam0.copy(), np.zeros(m, np.int64), np.zeros(3), np.zeros(n)
        K.block_gs_rows(J, w, q, code, params, 1e-12, lam_r, z_r, np.zeros((m, 3, 3)), case_r, 1e-13, 500, st_r)
        lam, case, st, z = lam0.copy(), np.zeros(m, np.int64), np.zeros(3), np.full(n, np.nan)
        gram = np.zeros((kd, 3, 3))
        K.block_gs_frames(D, nodes, win, F, w, q, code, params, 1e-12, lam, z, gram, 0, case, 1e-13, 500, st)
        assert st[2] == st_r[2] == 1.0 and same_stop(st, st_r), (st, st_r)
        np.testing.assert_array_equal(case, case_r)
        np.testing.assert_allclose(lam, lam_r, rtol=0, atol=RTOL * max(np.abs(lam_r).max(), 1e-300))  # (see RTOL)
        np.testing.assert_allclose(z, w * (J.T @ lam), rtol=0, atol=1e-13 * np.abs(z).max())
        for j in nodes:
            Dj = D[j, :, :width[j]]
            np.testing.assert_allclose(gram[j], (Dj * w[win[j, 0]:win[j, 0] + width[j]]) @ Dj.T, rtol=1e-13,
                                       atol=1e-15)


def test_frames_refuse_indices_outside():
    """A node index or a column window (one for all nodes or one per node) outside the arrays is
    refused by both backends (the compiled loops read and write without bounds checks)."""
    rng = np.random.default_rng(8)
    D, F, nodes, J, w, q, laws = frames_problem(rng, 3, 4, 10, 12, 1)
    code, params, _ = law_arrays(laws, 3)
    for name in ("compiled", "python") if _backend.compiled_available("cone") else ("python",):
        with _backend.use(name):
            K = _backend.kernels("cone")
            # per-node windows leaving z (12 columns) or D (10), starting before 0, or too few
            wins = [np.array([[3, 10]] * 4), np.array([[0, 11]] * 4), np.array([[-1, 5]] * 4), np.array([[0, 10]] * 3)]
            for bad_nodes, c0 in ((np.array([0, 1, 4]), 1), (nodes, 3), (nodes, -1), *((nodes, c) for c in wins)):
                with pytest.raises((ValueError, Exception)):
                    K.block_gs_frames(D, bad_nodes, c0, F, w, q, code, params, 0.0, np.zeros(9), np.zeros(12),
                                      np.zeros((4, 3, 3)), False, np.zeros(3, np.int64), 1e-12, 50, np.zeros(3))


def test_backends_agree_on_frames():
    """The compiled kernel and its twin on the same 20-node problem: impulses to round-off."""
    if not _backend.compiled_available("cone"):
        pytest.skip("compiled kernels not built")
    rng = np.random.default_rng(78)
    D, F, nodes, J, w, q, laws = frames_problem(rng, 20, 24, 100, 110, 5)
    code, params, _ = law_arrays(laws, 20)
    out = {}
    for name in ("compiled", "python"):
        lam, case = np.zeros(60), np.zeros(20, np.int64)
        with _backend.use(name):
            _backend.kernels("cone").block_gs_frames(D, nodes, 5, F, w, q, code, params, 0.0, lam, np.zeros(110),
                                                     np.zeros((24, 3, 3)), False, case, 1e-13, 500, np.zeros(3))
        out[name] = lam, case
    np.testing.assert_array_equal(out["compiled"][1], out["python"][1])
    np.testing.assert_allclose(out["compiled"][0], out["python"][0], rtol=0, atol=RTOL * np.abs(out["python"][0]).max())


def close_problem(rng, k=9, nq=7, w=4):
    """Random nodes over a master of nq nodes: faces of 3 or 4 nodes (a -1 after a 3-node face),
    frames from random rotations, some nodes off their master."""
    P, Q = rng.standard_normal((k, 3)), rng.standard_normal((nq, 3))
    conn = np.array([rng.choice(nq, w, replace=False) for _ in range(k)], dtype=np.int64)
    N = rng.uniform(0.0, 1.0, (k, w))
    conn[::3, w - 1] = -1  # a tri3 face in a set of quads: no fourth node
    N[::3, w - 1] = 0.0
    F = np.linalg.qr(rng.standard_normal((k, 3, 3)))[0].transpose(0, 2, 1).copy()
    lam = rng.standard_normal((k, 3))
    on = (rng.uniform(size=k) > 0.2).astype(np.uint8)
    S, M = rng.standard_normal((5, k, 3)), rng.standard_normal((5, nq, 3))
    return P, Q, conn, N, F, lam, on, S, M


def close_by_node(P, Q, conn, N, F, lam, on, S, M):
    """The close of a step written node by node in plain Python: (gap, force, slip, works)."""
    k = P.shape[0]
    gap, force, slip, works = np.empty(k), np.empty((k, 3)), np.empty((k, 3)), np.zeros(3)

    def rel(i, a, b):
        r = S[a, i] - S[b, i]
        for j, m in enumerate(conn[i]):
            if m >= 0:
                r = r - N[i, j] * (M[a, m] - M[b, m])
        return r

    for i in range(k):
        n, t1, t2 = F[i]
        x = sum((N[i, j] * Q[m] for j, m in enumerate(conn[i]) if m >= 0), np.zeros(3))
        gap[i] = float(np.dot(P[i] - x, n)) if on[i] else np.nan
        force[i] = lam[i, 0] * n + lam[i, 1] * t1 + lam[i, 2] * t2
        r0, r1, r2 = rel(i, 0, 1), rel(i, 0, 2), rel(i, 3, 4)
        slip[i] = r0 - np.dot(r0, n) * n
        works += [np.dot(lam[i, 1] * t1 + lam[i, 2] * t2, r1), lam[i, 0] * np.dot(r1, n), np.dot(force[i], r2)]
    return gap, force, slip, works


def run_close(K, args):
    k = args[0].shape[0]
    out = np.empty(k), np.empty((k, 3)), np.empty((k, 3)), np.empty(3)
    K.close_nodes(*args, *out)
    return out


def test_close_nodes_against_a_loop_over_the_nodes(backend):
    """``close_nodes`` (the close of a 3D contact step in one pass) against the same quantities
    written node by node here: gaps (NaN off the master), forces, the tangential part of the
    step's relative motion and the three sums of work. Tolerance: a few products and sums of
    O(1) numbers in another order, ~1e-15; 1e-13 leaves a wide margin."""
    rng = np.random.default_rng(31)
    args = close_problem(rng)
    got = run_close(_backend.kernels("cone"), args)
    ref = close_by_node(*args)
    on = args[6].astype(bool)
    assert np.all(np.isnan(got[0][~on])) and on.sum() < on.size
    for g, r in zip(got, ref):
        np.testing.assert_allclose(g, r, rtol=0, atol=1e-13)


def test_close_nodes_backends_agree_and_refuse_outside():
    """The compiled ``close_nodes`` and its twin on the same problem to round-off; a master node
    index outside the master refused by both."""
    if not _backend.compiled_available("cone"):
        pytest.skip("compiled kernels not built")
    rng = np.random.default_rng(32)
    args = close_problem(rng, k=40, nq=30)
    out = {}
    for name in ("compiled", "python"):
        with _backend.use(name):
            K = _backend.kernels("cone")
            out[name] = run_close(K, args)
            bad = list(args)
            bad[2] = args[2].copy()
            bad[2][5, 0] = 30
            with pytest.raises((ValueError, Exception)):
                run_close(K, bad)
    for c, p in zip(out["compiled"], out["python"]):
        np.testing.assert_allclose(c, p, rtol=0, atol=1e-14 * max(1.0, np.nanmax(np.abs(p))))
