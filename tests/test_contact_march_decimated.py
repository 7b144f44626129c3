"""The compiled contact march with decimated output, in chunks and with a stop: the same numbers as
its NumPy twin and as the baseline instruction-set build.

The compiled march does the corrector of a step and the predictor of the next in one pass over the
modal coordinates; a step that writes a sample first keeps a copy of eta_{n-1} (which that pass
overwrites) for the output's differences, and each call (chunk) starts with a predictor alone.
These tests write a sample every 7th step (or fewer), so that steps with and without output, the
chunk starts and a stop between samples are all exercised. (tests/test_contact_status.py checks
that a decimated run's samples equal, to the last bit, those of the same run written at every
step.)
"""

from __future__ import annotations

import numpy as np
import pytest

from fesub import _backend
from fesub.contact import simulate
from fesub.models import beam_on_beam as bb

pytestmark = pytest.mark.skipif(not _backend.compiled_available("contact"),
                                reason="compiled kernels not built")

KEYS = ("lambda", "u_T_y", "u_C_x", "u_C_y", "x_contact", "v_t", "v_C_y", "a_T_y")


@pytest.fixture(scope="module")
def system():
    return bb.contact_system(bb.build())


def _run(system, backend, chunk=200_000, **kw):
    h = 0.9 * system.critical_step()
    kw = {"mu": 0.3, "vx": 0.03, "duration": 3000 * h, "h": h, "fs_out": 1.0 / (7 * h),
          "roughness_std": 0.05, "seed": 1, **kw}
    with _backend.use(backend):
        return simulate(system, chunk=chunk, **kw)


def _rel(a, b):
    return np.abs(a - b).max() / np.abs(b).max()


def _assert_same_march(a, b):
    assert a.steps == b.steps and a.status == b.status
    assert np.array_equal(a.signals["t"], b.signals["t"])
    assert np.array_equal(a.signals["segment"], b.signals["segment"])
    # the same operations summed in a different order: round-off (1e-16) amplified by
    # lambda = gap / (h^2 den), a gap of positions ~1e-3 m resolved to ~1e-12 m: 1e-9 relative,
    # measured 7e-10 (lambda) and <= 6e-10 (the others) over 3000 steps; 1e-8 leaves room for a
    # different compiler, not for a different recursion (a wrong term gives > 1e-3)
    for key in KEYS:
        assert _rel(a.signals[key], b.signals[key]) < 1e-8, key


def test_decimated_march_in_chunks_matches_the_numpy_twin(system):
    """3000 steps, a sample every 7th, chunks of 997 steps (boundaries off the sample grid)."""
    a = _run(system, "compiled", chunk=997)
    b = _run(system, "python")
    assert a.backend == "compiled" and b.backend == "python"
    assert a.steps == 3000 and len(a.signals["t"]) == 429
    _assert_same_march(a, b)


def test_chunk_boundaries_leave_the_march_unchanged(system):
    """One chunk against chunks of 997 steps (each chunk starts with a predictor pass of its own
    and recomputes the slave's velocity reference)."""
    _assert_same_march(_run(system, "compiled", chunk=997), _run(system, "compiled"))


def test_stop_between_samples_at_the_same_step_as_the_twin(system):
    """Detachment at 50 m/s (about 3350 steps, a sample every 41st): the stop step, the samples
    before it and the stop code agree with the twin."""
    kw = {"mu": 0.1, "vx": 50.0, "duration": 0.01, "fs_out": 100_000.0, "h": None,
          "roughness_std": 0.0}
    a = _run(system, "compiled", **kw)
    b = _run(system, "python", **kw)
    assert a.status == "detachment" and 3000 < a.steps < 4000
    _assert_same_march(a, b)


def test_decimated_march_same_numbers_at_every_instruction_set_level(system, monkeypatch):
    """Each built instruction-set variant against the baseline build (FMA and 4- or 8-wide sums
    round differently: 1e-16 per operation, amplified as above)."""
    runs = {}
    for lvl in _backend.isa_levels()[::-1]:
        monkeypatch.setenv("FESUB_ISA", lvl)
        if _backend.isa("contact") != lvl:
            continue  # this level's build is missing
        runs[lvl] = _run(system, "compiled", chunk=997)
    monkeypatch.delenv("FESUB_ISA")
    base = runs.pop("baseline")
    if not runs:
        pytest.skip("only the baseline build runs on this CPU")
    for r in runs.values():
        _assert_same_march(r, base)
