"""Benchmarks of the exact 3D friction cone (the ``cone`` kernel).

A batch of m = 500 independent nodes (random symmetric positive definite 3 x 3 blocks, closed,
about two thirds slipping), one law for all: Coulomb, and Stribeck (the nested root in mu,
about ten slip solves per slipping node). Baseline in the same run: the NumPy twin on a slice of
the batch (it is ~100x slower; the ratio is per node). Goals: the compiled kernel at least 30x
the twin per node; a Coulomb node in under 5 us (a 3D step of the contact engine with a few
hundred active nodes then spends about a millisecond in its local solves).

Also the block Gauss-Seidel over m = 40 coupled nodes (dense W), compiled against the twin.
"""

from __future__ import annotations

import numpy as np
import pytest

from fesub import _backend
from fesub.contact.engine.friction import Coulomb, Stribeck, law_arrays

M = 500
TWIN_M = 25


def batch(m, law, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((m, 3, 3))
    W = np.ascontiguousarray(A @ A.transpose(0, 2, 1) + 0.5 * np.eye(3))
    q = rng.standard_normal((m, 3))
    q[:, 0] = -np.abs(q[:, 0])
    code, params, _ = law_arrays(law, m)
    return W, q, code, params


def caller(m, law, backend):
    W, q, code, params = batch(m, law)
    with _backend.use(backend):
        solve = _backend.kernels("cone").solve_nodes
    lam, case = np.zeros((m, 3)), np.zeros(m, np.int64)

    def call():
        lam[:] = 0.0
        solve(W, q, code, params, lam, case)
        return case

    return call


def _need_compiled():
    if not _backend.compiled_available("cone"):
        pytest.skip("compiled cone not built")


@pytest.mark.parametrize("law", [Coulomb(0.4), Stribeck(0.5, 0.3, 0.2)], ids=["coulomb", "stribeck"])
def test_cone_batch_compiled_vs_twin(benchmark, ratio_to, goal, law):
    """Per node: the compiled batch of M nodes, and the twin on TWIN_M of them as baseline."""
    _need_compiled()
    case = benchmark(caller(M, law, "compiled"))
    assert np.all(case >= 0)
    r = ratio_to("numpy_twin_batch", caller(TWIN_M, law, "python"), rounds=3)
    if r is not None:
        per_node = r * M / TWIN_M  # the twin did TWIN_M nodes, the kernel M
        med = benchmark.stats.stats.median
        benchmark.extra_info.update(m=M, twin_m=TWIN_M, us_per_node=1e6 * med / M,
                                    slip_share=float(np.mean(case == 2)))
        goal("ratio_numpy_twin", 30.0, value=per_node, higher=True)
        if isinstance(law, Coulomb):
            goal("us_per_node", 5.0, value=1e6 * med / M)


def test_cone_block_gauss_seidel(benchmark, ratio_to, goal):
    """Block Gauss-Seidel on 40 coupled nodes to 1e-10, compiled against the twin."""
    _need_compiled()
    m = 40
    rng = np.random.default_rng(3)
    B = rng.standard_normal((3 * m, 3 * m + 2))
    W = np.ascontiguousarray(B @ B.T / (3 * m) + 0.5 * np.eye(3 * m))
    q = rng.standard_normal(3 * m)
    code, params, _ = law_arrays(Coulomb(0.3), m)

    def run(backend):
        with _backend.use(backend):
            gs = _backend.kernels("cone").block_gs
        lam, u, case, status = np.zeros(3 * m), np.zeros(3 * m), np.zeros(m, np.int64), np.zeros(3)

        def call():
            lam[:] = 0.0
            gs(W, q, code, params, lam, u, case, 1e-10, 500, status)
            return status

        return call

    st = benchmark(run("compiled"))
    assert st[2] == 1.0
    r = ratio_to("numpy_twin", run("python"), rounds=1)
    if r is not None:
        benchmark.extra_info.update(m=m, sweeps=int(st[0]))
        goal("ratio_numpy_twin", 30.0, value=r, higher=True)
