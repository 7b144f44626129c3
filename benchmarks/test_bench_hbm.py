"""Harmonic balance benchmarks: analytic vs finite-difference contact Hessian, compiled vs NumPy
event march, full backbone of the beam model."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from fesub import _backend
from fesub.hbm.analysis import backbone, solve_condensed
from fesub.hbm.contact import StickSlipSeparation
from fesub.models import cantilever_contact as cc

TWO_PI = 2 * math.pi


@pytest.fixture(scope="module")
def beam_point():
    """Beam (Nh = 7) at a slipping state near the stuck resonance, random multipliers."""
    sy = cc.build(nh=7)
    w = TWO_PI * 915.0
    Q = solve_condensed(sy, w, 3.0)
    lam = np.random.default_rng(1).standard_normal(sy.N) * 1e-7
    return sy, Q, lam


def _fd_hessian_step(sy, Q, lam, h=None):
    """What a Newton step of the optimality system needs without the analytic Hessian:
    F, K_f, and d(K_f^T lam)/dQ by central differences over each contact's local coordinates
    (same sparse assembly as the analytic route)."""
    F, K, _ = sy.fnl(Q)
    HL = np.zeros((sy.N, sy.N))
    m = 2 * sy.nh
    for c, P, (Gs, cols, rows) in zip(sy.contacts, sy.P, sy._gather):
        p = P @ Q
        ll = P @ lam
        hh = 1e-6 * np.abs(p).max() if h is None else h
        Hloc = np.zeros((p.size, p.size))
        for b in range(p.size):
            e = np.zeros(p.size)
            e[b] = hh
            kp = c.element.evaluate(p + e, sy.nh).K
            km = c.element.evaluate(p - e, sy.nh).K
            Hloc[:, b] = (kp.T @ ll - km.T @ ll) / (2 * hh)
        HL[np.ix_(rows, rows)] += sy._expand(Hloc, Gs, m)
    return F, K, HL


def test_bench_analytic_hessian_newton_step(benchmark, ratio_to, beam_point):
    sy, Q, lam = beam_point
    F, K, HL = benchmark(sy.fnl, Q, lam=lam)
    # same contracted Hessian as the finite-difference one (FD accuracy ~1e-8 relative)
    _, _, HLfd = _fd_hessian_step(sy, Q, lam)
    assert np.abs(HL - HLfd).max() <= 1e-5 * np.abs(HL).max()
    ratio_to("fd_hessian", _fd_hessian_step, sy, Q, lam, rounds=3)


def _yang_case():
    nh = 7
    rng = np.random.default_rng(5)
    X = np.zeros(2 * nh)
    X[0] = 1.5
    X[2:] = 0.075 * rng.standard_normal(2 * nh - 2)
    Y = np.zeros(2 * nh)
    Y[0], Y[1] = 0.45, 1.5
    return StickSlipSeparation(1.0, 1.0, 0.3, 1.0), np.concatenate([X, Y]), nh


@pytest.mark.skipif(not _backend.compiled_available("hbm"), reason="compiled kernel missing")
def test_bench_event_march_compiled(benchmark, ratio_to):
    el, p, nh = _yang_case()

    def compiled():
        with _backend.use("compiled"):
            return el.evaluate(p, nh)

    def numpy_twin():
        with _backend.use("python"):
            return el.evaluate(p, nh)

    r = benchmark(compiled)
    np.testing.assert_allclose(r.F, numpy_twin().F, rtol=1e-12, atol=1e-14)
    ratio_to("numpy_twin", numpy_twin, rounds=3)


def test_bench_beam_full_backbone(benchmark):
    sy = cc.build(nh=3)
    ws = TWO_PI * 915.2

    def run():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return backbone(sy, (0.01, 1000.0), (0.95 * ws, 1.05 * ws),
                            w_global=(TWO_PI * 150, TWO_PI * 1000))

    bb = benchmark.pedantic(run, rounds=1, iterations=1)
    benchmark.extra_info["points"] = int(len(bb.alpha))
    benchmark.extra_info["singular_points"] = len(bb.singular_points)
    benchmark.extra_info["goal_s"] = 60.0
    assert bb.stop_reason == "lam_range"
    # ends at the free cantilever resonance (209.1 Hz) within 0.1 %
    assert bb.w[-1] / TWO_PI == pytest.approx(209.1, rel=1e-3)
