"""Harmonic balance benchmarks: analytic vs finite-difference contact Hessian, compiled vs NumPy
event march, full backbone of the beam model (global maximum vs local ridges only)."""

from __future__ import annotations

import math
import os
import warnings

import numpy as np
import pytest

from fesub import _backend
from fesub.hbm.backbone import backbone
from fesub.hbm.forced import solve_condensed
from fesub.hbm.contact import StickSlipSeparation
from fesub.models import cantilever_contact as cc

TWO_PI = 2 * math.pi


def median_time(fn, *args, rounds=3, **kwargs):
    """Median wall time (s) of ``rounds`` calls (same as the conftest helper)."""
    import statistics
    import time

    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn(*args, **kwargs)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


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


class _FDSystem:
    """The HB system with ``fnl(Q, lam=...)`` returning the finite-difference Hessian term."""

    def __init__(self, sy):
        self._sy = sy

    def __getattr__(self, name):
        return getattr(self._sy, name)

    def fnl(self, Q, *, lam=None, method="event", nt=None):
        if lam is None:
            return self._sy.fnl(Q)
        return _fd_hessian_step(self._sy, Q, lam)


def _newton_step(opt, y, s):
    """One Newton step of the optimality system: residual, Jacobian, dense solve."""
    J, _ = opt.jacobian(y, s)
    return np.linalg.solve(J, -opt.residual(y, s))


def test_bench_analytic_hessian_newton_step(benchmark, ratio_to, beam_point):
    """What each Newton step of the backbone needs from the contacts (F, K_f and the contracted
    Hessian d(K_f^T lam)/dQ): analytic vs central differences of K_f (2 x 14 extra element
    evaluations). Also recorded: the same ratio for the element alone, and for a complete
    Newton step (Jacobian of size 2N + 1 = 1121 and its dense solve, which both share)."""
    from fesub.hbm.optimality import OptimalitySystem

    sy, Q, lam = beam_point
    F, K, HL = benchmark(sy.fnl, Q, lam=lam)
    # same contracted Hessian as the finite-difference one (FD accuracy ~1e-8 relative)
    _, _, HLfd = _fd_hessian_step(sy, Q, lam)
    assert np.abs(HL - HLfd).max() <= 1e-5 * np.abs(HL).max()
    benchmark.extra_info["goal_ratio"] = 20.0
    ratio_to("fd_hessian", _fd_hessian_step, sy, Q, lam, rounds=5)
    # element level (one Jenkins element, Nh = 7; spec 5B reference: ~23x)
    el, P, nh = sy.contacts[0].element, sy.P[0], sy.nh
    p, ll = P @ Q, P @ lam

    def fd_element():
        el.evaluate(p, nh)
        for b in range(p.size):
            e = np.zeros(p.size)
            e[b] = 1e-6 * np.abs(p).max()
            el.evaluate(p + e, nh).K.T @ ll - el.evaluate(p - e, nh).K.T @ ll

    t_el = median_time(el.evaluate, p, nh, lam=ll, rounds=21)
    t_el_fd = median_time(fd_element, rounds=5)
    benchmark.extra_info["element_analytic_median_s"] = t_el
    benchmark.extra_info["element_fd_median_s"] = t_el_fd
    benchmark.extra_info["ratio_element_fd_hessian"] = t_el_fd / t_el
    # a complete Newton step of the optimality system
    alpha = 3.0
    opt = OptimalitySystem(sy, r3scale=1.0)
    opt_fd = OptimalitySystem(_FDSystem(sy), r3scale=1.0)
    y = np.concatenate([Q / alpha, lam, [TWO_PI * 915.0]])
    s = math.log(alpha)
    d_an, d_fd = _newton_step(opt, y, s), _newton_step(opt_fd, y, s)
    # same step to the FD accuracy (the dense solve amplifies by the condition number)
    assert np.abs(d_an - d_fd).max() <= 1e-3 * np.abs(d_an).max()
    t_step = median_time(_newton_step, opt, y, s, rounds=5)
    t_step_fd = median_time(_newton_step, opt_fd, y, s, rounds=5)
    benchmark.extra_info["newton_step_analytic_median_s"] = t_step
    benchmark.extra_info["newton_step_fd_median_s"] = t_step_fd
    benchmark.extra_info["ratio_newton_step_fd_hessian"] = t_step_fd / t_step


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
    # whole element evaluation (march and cycle forces, both kernels)
    ratio_to("numpy_twin", numpy_twin, rounds=3)
    # the march kernel alone, same inputs as the element passes it
    X, Y = p[:2 * nh].copy(), p[2 * nh:].copy()
    cap = 16 * nh + 16
    args = (X, Y, nh, el.kt, el.kn, el.mu, el.n0, 64 * nh, 1e-13 * nh)

    def run(mod):
        mod.march(*args, np.empty(10 * nh), np.empty(cap), np.empty(cap, np.intc),
                  np.empty(cap, np.intc), np.zeros(2, np.intc))

    from fesub._core import hbm as compiled_mod
    from fesub._core import hbm_ref as twin_mod

    t_c = median_time(run, compiled_mod, rounds=21)
    t_p = median_time(run, twin_mod, rounds=3)
    benchmark.extra_info["march_compiled_median_s"] = t_c
    benchmark.extra_info["march_numpy_median_s"] = t_p
    benchmark.extra_info["ratio_march_numpy_twin"] = t_p / t_c


def test_bench_beam_full_backbone(benchmark, ratio_to):
    """The spec's beam over [0.01, 1000] N with the global window (global maximum: default
    global checks, two per decade). Baseline: the same without the checks (the ridges traced
    from the stage-1 peak and from alpha_max only; not the global maximum between 29 and 44
    N), i.e. the ratio is what the checks cost."""
    sy = cc.build(nh=3)
    ws = TWO_PI * 915.2

    def run(global_checks=2.0):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return backbone(sy, (0.01, 1000.0), (0.95 * ws, 1.05 * ws),
                            w_global=(TWO_PI * 150, TWO_PI * 1000), global_checks=global_checks)

    bb = benchmark.pedantic(run, rounds=1, iterations=1)
    benchmark.extra_info["points"] = int(len(bb.alpha))
    benchmark.extra_info["singular_points"] = len(bb.singular_points)
    benchmark.extra_info["newton_iterations"] = int(bb.newton_iters.sum())
    benchmark.extra_info["check_forces"] = len(bb.checks)
    benchmark.extra_info["check_sweeps"] = sum(c["method"] == "sweep" for c in bb.checks)
    benchmark.extra_info["ridges_added_by_checks"] = sum(r["origin"] == "check"
                                                         for r in bb.ridges)
    benchmark.extra_info["jumps"] = len(bb.jumps)
    benchmark.extra_info["goal_s"] = 60.0
    assert bb.stop_reason == "lam_range"
    # ends at the free cantilever resonance (209.1 Hz) within 0.1 %
    assert bb.w[-1] / TWO_PI == pytest.approx(209.1, rel=1e-3)
    # the checks found the intermediate ridge (global maximum between its crossings with the
    # partially stuck and the free-mode ridges, 28.7 and 44.0 N)
    assert benchmark.extra_info["ridges_added_by_checks"] == 1
    assert [j["ridge_to"] for j in bb.jumps] == [2, 1]
    ratio_to("no_global_checks", run, 0.0, rounds=1)


def test_bench_beam_backbone_condensed(benchmark, ratio_to):
    """The beam's backbone (Nh = 3, [0.01, 1000] N, global window, two global checks per
    decade) on the harmonic balance condensed onto the contact, load and monitor DOFs (2 of
    40 DOFs: 12 harmonic unknowns instead of 240, optimality system 25 instead of 481).
    Baseline in the same run: the same backbone on the full system. Goal: 5x. Measured 6.3x
    (medians of 5 rounds of each, 10.0 s against 63.0 s, load average 5.9 before and 4.7
    after on two shared cores; 4.8x before the contact forces, stiffness and Hessian
    contraction of the event cycle were compiled)."""
    sy = cc.build(nh=3)
    ws = TWO_PI * 915.2

    def run(condensed):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return backbone(sy, (0.01, 1000.0), (0.95 * ws, 1.05 * ws),
                            w_global=(TWO_PI * 150, TWO_PI * 1000), condensed=condensed)

    benchmark.extra_info["loadavg_1min_before"] = os.getloadavg()[0]
    bb = benchmark.pedantic(run, args=(True,), rounds=5, iterations=1)
    benchmark.extra_info["goal_ratio"] = 5.0
    benchmark.extra_info["points"] = int(len(bb.alpha))
    benchmark.extra_info["newton_iterations"] = int(bb.newton_iters.sum())
    assert bb.stop_reason == "lam_range" and bb.Q.shape[1] == sy.N
    full = run(False)
    # the same backbone: the jumps between ridges (located on exact solutions of each route)
    # agree to the accuracy of the modal condensed operator (measured 5e-10 relative)
    assert [j["ridge_to"] for j in bb.jumps] == [j["ridge_to"] for j in full.jumps]
    dj = max(abs(a["alpha"] - b["alpha"]) / b["alpha"] for a, b in zip(bb.jumps, full.jumps))
    benchmark.extra_info["jump_alpha_max_rel_difference"] = dj
    assert dj <= 1e-8
    assert bb.w[-1] == pytest.approx(full.w[-1], rel=1e-8)
    ratio_to("full", run, False, rounds=5)   # medians of 5 rounds of each route
    benchmark.extra_info["loadavg_1min_after"] = os.getloadavg()[0]
