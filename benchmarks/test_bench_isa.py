"""The default build's instruction-set choice: the sliding transient on the contact engine with
the build the running CPU gets (the widest it runs) against the baseline x86-64 build, in the same
run (the ratio to the NumPy twin is in test_bench_contact.py)."""

from __future__ import annotations

import pytest

from fesub import _backend
from fesub.contact import simulate
from fesub.models import beam_on_beam as bb
from fesub.parallel import single_thread_blas

pytestmark = pytest.mark.skipif(not _backend.compiled_available("multibody"),
                                reason="compiled kernels not built")


@pytest.fixture(scope="module")
def system():
    return bb.contact_system(bb.build())


def test_sliding_transient_widest_build_vs_baseline(benchmark, ratio_to, goal, system,
                                                        monkeypatch):
    """mu = 0.3, 0.05 s simulated (about 2e5 steps) with the build chosen at import."""
    duration = 1e-3 if benchmark.disabled else 0.05
    level = _backend.isa("multibody")

    def march():  # one BLAS thread: see test_bench_contact.test_transient_compiled_vs_numpy_twin
        with single_thread_blas(), _backend.use("compiled"):
            return simulate(system, mu=0.3, duration=duration, vx=0.03)

    res = benchmark.pedantic(march, rounds=1 if benchmark.disabled else 5, iterations=1)
    benchmark.extra_info.update(isa=level, steps=res.steps)

    def baseline_build():
        with monkeypatch.context() as m:
            m.setenv("FESUB_ISA", "baseline")
            return march()

    r = ratio_to("baseline_build", baseline_build, rounds=1 if benchmark.disabled else 5)
    if r is not None:
        # a wider build must not be slower than the baseline one (>= 1, and more where the
        # march's dot products vectorise)
        goal("ratio_baseline_build", 1.0, value=r, higher=True)
