"""3D friction contact elements (Friction3D) at scale: the AFT of every element of a joint in one
compiled call, against its NumPy twin (vectorised over the elements) and a per-element Python loop
(one element evaluation per contact, what a system without the batched call does)."""

from __future__ import annotations

import statistics
import timeit

import numpy as np
import pytest

from fesub import _backend
from fesub.hbm.friction3d import Friction3D, evaluate_many

NH = 3


def _joint(ne, seed=0):
    """``ne`` elements of a bolted interface: normal loads from 5 to 60 N, tangential motions of
    0.2-2 um with some separation at the edge (stick, microslip, gross slip and separation)."""
    rng = np.random.default_rng(seed)
    m = 2 * NH
    els = [Friction3D(2e6, 2e7, 0.6, float(n0)) for n0 in rng.uniform(5.0, 60.0, ne)]
    P = rng.normal(size=(ne, 3 * m)) * 10.0 ** rng.uniform(-6.7, -5.7, (ne, 1))
    P[:, 2 * m:] *= 0.3
    return els, P


@pytest.mark.skipif(not _backend.compiled_available("hbm3d"), reason="compiled kernel missing")
@pytest.mark.parametrize("ne", [200, 500])
def test_bench_friction3d_batch(benchmark, ratio_to, goal, ne):
    """All ``ne`` elements (Nh = 3, 128 samples per period) in one compiled call. Goal: >= 50x the
    NumPy twin; the per-element loop and the cost per element (linear in ``ne``) recorded."""
    els, P = _joint(ne)

    def compiled():
        with _backend.use("compiled"):
            return evaluate_many(els, P, NH)

    def numpy_twin():
        with _backend.use("python"):
            return evaluate_many(els, P, NH)

    def per_element_loop():
        with _backend.use("compiled"):
            return [el.evaluate(p, NH) for el, p in zip(els, P)]

    F, K, per, _ = benchmark(compiled)
    Ft, Kt, _, _ = numpy_twin()
    np.testing.assert_allclose(F, Ft, atol=1e-12 * np.abs(Ft).max())
    np.testing.assert_allclose(K, Kt, atol=1e-12 * np.abs(Kt).max())
    benchmark.extra_info["elements"] = ne
    benchmark.extra_info["periods_marched_mean"] = float(per.mean())
    r = ratio_to("numpy_twin", numpy_twin, rounds=3)
    if r is not None:
        goal("ratio_numpy_twin", 50.0, value=r, higher=True)
    ratio_to("per_element_loop", per_element_loop, rounds=3)
    # linearity: cost per element at ne against a tenth of it (same mix of states)
    small = max(ne // 10, 1)
    t_small = statistics.median(timeit.repeat(lambda: evaluate_many(els[:small], P[:small], NH),
                                              number=1, repeat=9))
    t_full = statistics.median(timeit.repeat(lambda: evaluate_many(els, P, NH), number=1,
                                             repeat=5))
    benchmark.extra_info["cost_per_element_ratio_full_to_tenth"] = (t_full / ne) / (t_small / small)


@pytest.mark.skipif(not _backend.compiled_available("hbm3d"), reason="compiled kernel missing")
def test_bench_friction3d_system_fnl(benchmark, ratio_to):
    """Contact forces and stiffness of a harmonic-balance system with 200 Friction3D contacts
    (600 DOFs, Nh = 3): the batched route (one kernel call, sparse gather and scatter) against
    the per-contact loop (one element evaluation and one dense scatter per contact)."""
    from fesub.hbm import ContactElement, HBSystem

    ne = 200
    els, _ = _joint(ne)
    n = 3 * ne
    cts = []
    for i, el in enumerate(els):
        G = np.zeros((3, n))
        G[:, 3 * i:3 * i + 3] = np.eye(3)
        cts.append(ContactElement(el, G))
    K0 = 1e6 * np.eye(n)
    sy = HBSystem(np.eye(n), 1e-4 * K0, K0, NH, cts, fex=0, dof=0)
    Q = np.random.default_rng(1).normal(size=sy.N) * 1e-6

    def per_contact():
        F = np.zeros(sy.N)
        K = np.zeros((sy.N, sy.N))
        m = sy.m
        Qm = Q.reshape(m, n)
        Fm = F.reshape(m, n)
        for i, (Gs, cols, rows) in enumerate(sy._gather):
            r = sy.evaluate_contact(i, (Gs @ Qm[:, cols].T).ravel())
            Fm[:, cols] += (Gs.T @ r.F.reshape(3, m)).T
            K[np.ix_(rows, rows)] += sy._expand(r.K, Gs, m)
        return F, K

    F, K, _ = benchmark(sy.fnl, Q)
    Fr, Kr = per_contact()
    np.testing.assert_allclose(F, Fr, atol=1e-12 * np.abs(Fr).max())
    np.testing.assert_allclose(K, Kr, atol=1e-12 * np.abs(Kr).max())
    ratio_to("per_contact_loop", per_contact, rounds=3)
