"""Speed of the circular-contact friction models.

1e6 force/torque evaluations of the exact closed-form model (goal: < 0.5 s), against the direct
quadrature (the independent reference) timed on a subset in the same run and scaled per evaluation.
"""

from __future__ import annotations

import numpy as np
import pytest

from fesub import _backend
from fesub.circular import ExactCircularFriction, HarmonicFriction, QuadratureFriction

N_EVAL = 1_000_000
N_SUBSET = 200


def _inputs(n, seed=0):
    rng = np.random.default_rng(seed)
    v = rng.normal(size=(n, 2))
    om = rng.normal(size=n) * np.exp(rng.uniform(-4, 4, size=n))   # eps over ~7 decades
    return v, om


@pytest.mark.parametrize("law", ["uniform", "hertz"])
def test_bench_exact_force_torque_1e6(benchmark, ratio_to, goal, law):
    exact = ExactCircularFriction(law)
    quad = QuadratureFriction(law)
    v, om = _inputs(N_EVAL)
    res = benchmark(exact.force_torque, v, om)
    assert res.Qx.shape == (N_EVAL,)
    vs, oms = v[:N_SUBSET], om[:N_SUBSET]
    # same numbers on the subset (the quadrature is accurate to ~1e-14 here)
    ref = quad.force_torque(vs, oms)
    for name in ("Qx", "Qy", "Tz"):
        np.testing.assert_allclose(getattr(res, name)[:N_SUBSET], getattr(ref, name), rtol=1e-9,
                                   atol=1e-15)
    ratio_to(f"quadrature_{N_SUBSET}_evals", quad.force_torque, vs, oms, rounds=3)
    base = benchmark.extra_info[f"baseline_quadrature_{N_SUBSET}_evals_median_s"]
    per_eval_quad = base / N_SUBSET
    benchmark.extra_info["quadrature_per_eval_s"] = per_eval_quad
    benchmark.extra_info["quadrature_scaled_to_1e6_s"] = per_eval_quad * N_EVAL
    stats = getattr(benchmark, "stats", None)
    if stats is not None and not getattr(benchmark, "disabled", False):
        med = stats.stats.median
        benchmark.extra_info["exact_per_eval_s"] = med / N_EVAL
        benchmark.extra_info["ratio_quadrature_per_eval"] = per_eval_quad * N_EVAL / med
    benchmark.extra_info["backend"] = _backend.active("circular")
    goal("median_s", 0.5)

    def twin():
        with _backend.use("python"):
            return exact.force_torque(v, om)

    ratio_to("numpy_twin_1e6", twin, rounds=3)


def test_bench_harmonic_force_torque_1e6(benchmark, ratio_to):
    """The N=4 harmonic model (polynomial) against the exact closed forms, 1e6 evaluations each."""
    h = HarmonicFriction("uniform", N=4)
    exact = ExactCircularFriction("uniform")
    v, om = _inputs(N_EVAL, seed=1)
    benchmark(h.force_torque, v, om)
    ratio_to("exact_closed_form", exact.force_torque, v, om, rounds=3)
