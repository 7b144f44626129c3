"""Instruction-set builds of the compiled kernels: the widest one the CPU runs is chosen, each
gives the baseline build's numbers up to round-off, and a bad or unsupported choice is refused."""

from __future__ import annotations

import importlib
import os

import numpy as np
import pytest
from numpy.testing import assert_allclose

import fesub
from fesub import _backend
from fesub.errors import BackendError

VARIANT_KERNELS = ("coulomb", "freeplay", "friction_lcp", "multibody", "cone")


def _levels():
    """Levels this CPU runs for which every variant kernel was built, narrowest first."""
    out = []
    for lvl in _backend.isa_levels()[::-1]:
        mods = [f"fesub._core.{k}" + ("" if lvl == "baseline" else f"_{lvl}")
                for k in VARIANT_KERNELS]
        try:
            for m in mods:
                importlib.import_module(m)
        except ImportError:
            continue
        out.append(lvl)
    return out


pytestmark = pytest.mark.skipif(not _backend.compiled_available("multibody"),
                                reason="compiled kernels not built")


def test_the_widest_level_the_cpu_runs_is_chosen():
    levels = _levels()
    for k in VARIANT_KERNELS:
        assert _backend.isa(k) == levels[-1], k
    # a kernel without instruction-set builds uses its baseline build
    assert _backend.isa("fe") == "baseline"
    info = fesub.show_config(file=open(os.devnull, "w"))
    assert info["cpu_isa"] == _backend.isa_levels()
    assert levels[-1] in info["kernels"]["multibody"]["reason"]


def test_wider_builds_exist_where_the_cpu_has_them():
    # a default build on x86-64 makes every level; the wheel and CI require the kernels, so a
    # missing build on a CPU that runs it is a packaging fault, not a choice
    if os.environ.get("FESUB_REQUIRE_EXT", "0") in ("", "0") or os.environ.get("FESUB_NATIVE"):
        pytest.skip("only checked for a required default build")
    assert _levels() == _backend.isa_levels()[::-1]


def test_bad_or_unsupported_level_is_refused(monkeypatch):
    missing = [lvl for lvl in _backend.ISA_LEVELS if lvl not in _backend.isa_levels()]
    monkeypatch.setenv("FESUB_ISA", "sse9")
    with pytest.raises(BackendError, match="FESUB_ISA must be"):
        _backend.kernels("multibody")
    if missing:
        monkeypatch.setenv("FESUB_ISA", missing[-1])
        with pytest.raises(BackendError, match="this CPU runs only"):
            _backend.kernels("multibody")


def _each_level(monkeypatch, run):
    """``run()`` under every built level; the baseline result first."""
    out = {}
    for lvl in _levels():
        monkeypatch.setenv("FESUB_ISA", lvl)
        for k in VARIANT_KERNELS:
            assert _backend.isa(k) == lvl
        out[lvl] = run()
    monkeypatch.delenv("FESUB_ISA")
    if len(out) < 2:
        pytest.skip("only the baseline build runs on this CPU")
    return out


@pytest.fixture(scope="module")
def contact_system():
    from fesub.models import beam_on_beam as bb

    return bb.contact_system(bb.build())


def test_sliding_transient_same_numbers_at_every_level(monkeypatch, contact_system):
    from fesub.contact import simulate

    h = 0.9 * contact_system.critical_step()
    runs = _each_level(monkeypatch, lambda: simulate(
        contact_system, duration=2000 * h, h=h, fs_out=1.0 / h, vx=0.03, mu=0.3,
        roughness_std=0.05, seed=1))
    base = runs.pop("baseline")
    for lvl, r in runs.items():
        assert r.steps == base.steps == 2000
        # FMA and wider sums round differently (1e-16 per operation); the multiplier is a gap of
        # ~1e-3 m resolved to ~1e-12 m divided by h^2: 1e-8 relative, as between the twins
        for key in ("lambda", "u_T_y", "u_C_x", "u_C_y", "x_contact", "v_t"):
            a, b = r.signals[key], base.signals[key]
            assert np.abs(a - b).max() <= 1e-8 * np.abs(b).max(), (lvl, key)


def test_solid_bed_same_numbers_at_every_level(monkeypatch):
    """3D contact (the ``cone`` kernel's sweeps and close): a bed of coupled nodes that sticks,
    then slides under a Stribeck law, at every level."""
    from test_contact_engine3d_laws import bed

    from fesub.contact import Stribeck, simulate_multibody

    runs = _each_level(monkeypatch, lambda: simulate_multibody(bed(Stribeck(0.4, 0.25, 0.05)), duration=0.2,
                                                               h=2e-3, tol=1e-12))
    base = runs.pop("baseline")
    for lvl, r in runs.items():
        assert r.status == base.status == "completed", lvl
        np.testing.assert_array_equal(r.nodes["state"], base.nodes["state"])
        # wider sums and FMA round differently (1e-16 per operation), the sweeps stop at tol / h =
        # 5e-10 m/s: through 100 steps the forces agree to ~4e-14 N (measured); 1e-7 of the
        # largest force leaves margin, as between the two law paths of the bed's own test
        for key in ("lambda_n", "lambda_t1", "lambda_t2"):
            a, b = r.nodes[key], base.nodes[key]
            assert np.abs(a - b).max() <= 1e-7 * np.abs(b).max(), (lvl, key)


def test_coulomb_chain_same_numbers_at_every_level(monkeypatch):
    from fesub.coulomb import ChainModel
    from fesub.coulomb.integrate import simulate_chain

    u2 = ChainModel.uniform(2)
    runs = _each_level(monkeypatch, lambda: [simulate_chain(u2, c, 0, r, b, max_periods=400)
                                             for c, r, b in (("wall:0", 0.45, 0.3),
                                                             ("wall:1", 1.2, 1.0))])
    base = runs.pop("baseline")
    for lvl, rs in runs.items():
        for r, q in zip(rs, base):
            # round-off over hundreds of periods, as between the twins: 1e-8 relative
            assert r.regime == q.regime and r.stops_per_period == q.stops_per_period, lvl
            assert_allclose(r.x, q.x, rtol=1e-8, atol=1e-9)


def test_freeplay_batch_same_numbers_at_every_level(monkeypatch):
    from fesub.nonsmooth import P_REF, batch_periodic

    x0 = np.array([[0.2, 0, 0.2, 0], [-0.2, 0, -0.2, 0], [1.5, 0, -1.5, 0], [0.3, 0.1, -0.2, 0]])
    runs = _each_level(monkeypatch, lambda: batch_periodic(P_REF, x0, 1.15, law="exact",
                                                           n_transient=3, n_record=3,
                                                           steps_per_period=100))
    base = runs.pop("baseline")
    for lvl, r in runs.items():
        # a few periods of O(1) states: round-off of FMA contractions stays below 1e-12
        assert_allclose(r.strobe, base.strobe, rtol=0, atol=1e-12)
        assert np.array_equal(r.nswitch, base.nswitch), lvl
