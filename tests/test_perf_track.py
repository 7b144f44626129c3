"""The ratio check of the quick benchmark profile (benchmarks/track.py): margins from the spread,
a regression beyond the margin fails, and a deliberately slowed kernel is caught while the
unchanged kernel passes."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from fesub import _backend

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def track():
    spec = importlib.util.spec_from_file_location("fesub_track", ROOT / "benchmarks" / "track.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_margins_are_twice_the_spread_within_bounds(track):
    runs = [{"ratios": {"a": 10.0, "b": 2.0, "c": 5.0}}, {"ratios": {"a": 10.2, "b": 3.0,
                                                                  "c": 5.0}},
            {"ratios": {"a": 9.9, "b": 2.2, "c": 5.0}}]
    spread, margin = track.margins_from(runs)
    assert spread["a"] == pytest.approx(0.2 / 10.0)       # largest deviation from the median 10
    assert margin["a"] == track.MARGIN_MIN                # 4 % doubled is below the floor
    assert spread["b"] == pytest.approx(0.8 / 2.2)
    assert margin["b"] == track.MARGIN_MAX                # 73 % is above the cap
    assert spread["c"] == 0.0 and margin["c"] == track.MARGIN_MIN


def test_only_a_drop_beyond_the_margin_fails(track):
    hist = {"machine": "m", "margins": {"a": 0.2, "b": 0.2},
            "runs": [{"ratios": {"a": 10.0, "b": 4.0}}]}
    assert track.compare({"ratios": {"a": 8.1, "b": 40.0, "new": 1.0}}, hist) == []
    bad = track.compare({"ratios": {"a": 7.9, "b": 4.0}}, hist)
    assert len(bad) == 1 and bad[0].startswith("a:")
    assert track.compare({"ratios": {"a": 1.0}}, {"machine": "m", "margins": {}, "runs": []}) == []
    # the reference is the median of the last three records: one low record does not lower it
    hist["runs"] += [{"ratios": {"a": 12.0}}, {"ratios": {"a": 2.0}}]
    assert track.reference(hist)["a"] == 10.0
    assert track.compare({"ratios": {"a": 7.9}}, hist) and not track.compare({"ratios": {"a": 8.1}},
                                                                             hist)


def test_a_slowed_kernel_fails_the_check_and_the_unchanged_one_passes(track, monkeypatch):
    if not _backend.compiled_available("freeplay"):
        pytest.skip("compiled freeplay kernel not built")
    name, _, fast, base, work = next(c for c in track._kernel_cases() if c[0] == "kernel:freeplay")
    fast(), base()

    def measure():
        tf, tb = track.alternate(fast, base, 3)
        return {"ratios": {name: tb / work / tf}}

    # the widest margin a calibration can give: the unchanged kernel must pass it on a noisy
    # machine; a kernel doing its work five times must not
    hist = {"machine": "test", "margins": {name: track.MARGIN_MAX}, "runs": [measure()]}
    assert track.compare(measure(), hist) == []
    k = _backend.kernels("freeplay")
    kernel = k.batch_rk4

    def slowed(*args):
        for _ in range(5):
            kernel(*args)

    monkeypatch.setattr(k, "batch_rk4", slowed)
    bad = track.compare(measure(), hist)
    assert len(bad) == 1 and bad[0].startswith(name)
