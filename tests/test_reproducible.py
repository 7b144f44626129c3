"""Two runs of the same command give the same numbers, bit for bit.

Each study runs twice in fresh interpreters, as a user would run it; the second run sees a clock
that runs seven times as fast, as on a slower or loaded machine (nothing a study computes may
depend on how long its steps took: the multibody stepper once sized its chunks by their measured
pace, and a chunk boundary moved the rounding of the sampled forces, 1e-10 of the contact forces
after the dynamics grew it). Every variable of every result file is compared bit for bit, and the
summaries' results (but the wall time).
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from fesub import io

#: runs ``fesub ARGS``; with "slow" first, under a clock seven times as fast
RUNNER = """
import sys, time
if sys.argv[1] == "slow":
    real = time.perf_counter
    t0 = real()
    time.perf_counter = lambda: t0 + 7.0 * (real() - t0)
from fesub.cli import main
sys.exit(main(sys.argv[2:]))
"""


def _run(env, clock, args, out):
    proc = subprocess.run([sys.executable, "-c", RUNNER, clock, *args, "--out", str(out), "-q",
                           "--no-figures"], capture_output=True, text=True, env=env, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]


def _same_bits(a, b, where):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype, where
    if a.dtype.kind in "fciub":
        assert np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes(), where
    else:
        assert a.tolist() == b.tolist(), where


def _compare(d1, d2):
    files = sorted(p.name for p in d1.glob("*.nc"))
    assert files and files == sorted(p.name for p in d2.glob("*.nc"))
    n = 0
    for name in files:
        a, b = io.open_dataset(d1 / name), io.open_dataset(d2 / name)
        assert sorted(a.variables) == sorted(b.variables), name
        for v in a.variables:
            _same_bits(a[v].values, b[v].values, f"{name}: {v}")
            n += 1
    s1, s2 = (json.loads((d / "summary.json").read_text())["results"] for d in (d1, d2))
    for s in (s1, s2):
        s.pop("wall_time", None)
    assert s1 == s2
    return n


@pytest.mark.slow
def test_pad_on_beam_twice_is_bit_identical(tmp_path, subprocess_env):
    env = {k: v for k, v in subprocess_env.items() if k != "OMP_NUM_THREADS"}  # as a user runs it
    args = ["pad-on-beam", "--mu", "0.3", "--pad-nx", "8", "--t-load", "4e-4", "--t-settle", "2e-4",
            "--drag-time", "6e-4"]
    _run(env, "fast", args, tmp_path / "a")
    _run(env, "slow", args, tmp_path / "b")
    assert _compare(tmp_path / "a", tmp_path / "b") > 20


@pytest.mark.slow
def test_beam_on_beam_twice_is_bit_identical(tmp_path, subprocess_env):
    env = {k: v for k, v in subprocess_env.items() if k != "OMP_NUM_THREADS"}
    args = ["beam-on-beam", "--duration", "0.02", "--loci-step", "4e-3", "--roughness", "on"]
    _run(env, "fast", args, tmp_path / "a")
    _run(env, "slow", args, tmp_path / "b")
    assert _compare(tmp_path / "a", tmp_path / "b") > 20
