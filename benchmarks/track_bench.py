"""The benchmarks' own ratios in the quick profile: run the benchmarks, read their ratios.

Part of the quick benchmark profile (``benchmarks/track.py``, whose docstring describes it):
every ``ratio_<label>`` a benchmark of ``benchmarks/`` records in pytest-benchmark's
``extra_info`` (the ``ratio_to`` fixture of ``benchmarks/conftest.py``) is a ratio of the profile,
``bench:<file>::<test>:<label>`` (:func:`bench_key`). :func:`run_benchmarks` runs them timed with
a few rounds (:data:`BENCH_OPTIONS`), those in :data:`UNTIMED` once untimed;
:func:`bench_ratios` reads the ratios from their ``--benchmark-json``. The profile's child
processes (pytest, the studies) run in :func:`child_env`.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


#: benchmarks that ``--bench`` runs once with ``--benchmark-disable`` (so that they cannot rot)
#: instead of timing them: timed, each costs a large part of CI's budget or more (2-core machine,
#: load 2-3; the cost is timed minus untimed). Their ratios are not tracked. Every other
#: benchmark is timed: together about 20 s more than untimed (measured, 40 benchmarks).
UNTIMED: dict[str, str] = {
    "test_bench_nonsmooth.py::test_bench_basin_full_grid":
        "timed 110 s + 95 s against 3.4 s + 2.9 s untimed (200 x 200 grid, 5 rounds)",
    "test_bench_craig_bampton.py::test_craig_bampton_factored_vs_reference":
        "timed > 280 s (stopped) against 1.0 s untimed (5 rounds of each reduction)",
    "test_bench_contact.py::test_eigenvalue_loci_200_positions":
        "timed > 5 min (stopped) against 0.3 s untimed (200 positions instead of 3)",
    "test_bench_basin.py": "200 x 200 grid and 5 rounds timed, 16 x 16 and 1 untimed",
    "test_bench_contact_frf.py": "the paper's grid and 3 rounds timed, a small grid untimed",
    "test_bench_contact_loci.py": "200 positions and 5 rounds timed, 10 and 1 untimed",
    "test_bench_coulomb.py::test_bench_regime_map_2dof": "the full map timed, a subgrid untimed",
    "test_bench_fe_solid.py": "the full mesh timed, 8 elements a side untimed; scikit-fem minutes",
    "test_bench_nonsmooth.py::test_bench_basin_parallel": "200 x 200 grid timed",
    "test_bench_study.py": "the default study 5 times and 4 variants timed (~30 s each)",
    "test_bench_sweep.py": "40 x 40 map and 3 rounds timed, 6 x 6 and 1 untimed",
    "test_bench_hbm.py::test_bench_beam_backbone_condensed":
        "77 s untimed (the full backbone twice: its check and its baseline once); 5 condensed "
        "and 5 full rounds timed",
}

#: the untimed benchmarks on two pytest-xdist workers when it is installed (the test extras have
#: it): nothing of them is timed, so sharing the cores costs no measurement. Measured on a 2-core
#: Xeon: 243 s on one process in CI, 196 s on two workers, 108 s on two workers with each
#: baseline run once untimed (``ratio_to`` in conftest.py)
UNTIMED_WORKERS = 2

#: pytest-benchmark's own rounds for the benchmarks that call ``benchmark(fn)`` (those with
#: explicit rounds keep theirs): a few rounds, a short budget each
BENCH_OPTIONS = ["--benchmark-min-rounds=3", "--benchmark-max-time=0.2",
                 "--benchmark-warmup=off", "--benchmark-sort=fullname",
                 "--benchmark-columns=median,iqr,rounds"]

#: s: a benchmark still running after this long has every thread's stack printed (pytest's
#: faulthandler; the run goes on), so that a hang shows where it waits
STACKS_AFTER_S = 600
#: s: a pytest run of the profile stopped after this long (a hang must not hold the machine
#: for ever); the quick profile takes minutes
PYTEST_LIMIT_S = 1200


def bench_key(fullname: str, label: str) -> str:
    """``bench:<file>::<test>:<label>`` for the ratio ``ratio_<label>`` of a benchmark
    (``benchmarks/test_bench_fe.py::test_bench_q4_assembly_500x200``, ``numpy_twin`` ->
    ``bench:fe::test_bench_q4_assembly_500x200:numpy_twin``)."""
    path, _, test = fullname.partition("::")
    stem = Path(path).stem
    stem = stem[len("test_bench_"):] if stem.startswith("test_bench_") else stem
    return f"bench:{stem}::{test}:{label}"


def bench_ratios(path: Path) -> tuple[dict, dict, dict]:
    """Every ``ratio_<label>`` in the ``extra_info`` of a pytest-benchmark JSON file:
    ``(ratios, what, times)`` keyed by :func:`bench_key` (``times``: the benchmark's median and
    the baseline's, s, when recorded). Values that are not finite positive numbers are skipped."""
    data = json.loads(Path(path).read_text())
    ratios, what, times = {}, {}, {}
    for b in data.get("benchmarks", []):
        full = b.get("fullname") or b.get("name", "?")
        info = b.get("extra_info") or {}
        median = (b.get("stats") or {}).get("median")
        for key, val in sorted(info.items()):
            if not key.startswith("ratio_") or isinstance(val, bool):
                continue
            if not isinstance(val, (int, float)) or not math.isfinite(val) or val <= 0:
                continue
            label = key[len("ratio_"):]
            name = bench_key(full, label)
            ratios[name] = float(val)
            what[name] = f"{full}, extra_info {key}"
            times[name] = [median, info.get(f"baseline_{label}_median_s")]
    return ratios, what, times


def child_env() -> dict:
    """The environment of the profile's child processes (studies, pytest): one BLAS thread, the
    checkout first on the path when its kernels are built in place, else the installed package."""
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    env.pop("PYTHONPATH", None)
    # pytest-benchmark turns its timing off in a pytest-xdist worker's environment
    # (PYTEST_XDIST_WORKER): the profile's pytest is not a worker, even when started from one
    for k in [k for k in env if k.startswith("PYTEST_XDIST")]:
        del env[k]
    if checkout_built():  # the checkout with its kernels built in place, else the installed one
        env["PYTHONPATH"] = str(ROOT)
    return env


def run_benchmarks(out: Path, log=print, nodes=None) -> tuple[int, float]:
    """The benchmarks of ``benchmarks/``: timed (:data:`BENCH_OPTIONS`) with their JSON written
    to ``out``, then those in :data:`UNTIMED` once with ``--benchmark-disable``; with ``nodes``
    (pytest node ids relative to the repository) only those, timed. Returns the worse pytest
    status and the seconds taken. pytest runs with ``python -P``: the checkout's ``./fesub`` is
    imported only when its kernels are built in place."""
    t0 = time.perf_counter()
    base = [sys.executable, "-P", "-m", "pytest", "-q", "-p", "no:cacheprovider",
            f"--rootdir={ROOT}", "-o", f"faulthandler_timeout={STACKS_AFTER_S}"]
    if nodes:
        log(f"  benchmarks (timed): {len(nodes)} of them")
        status = _pytest(base + list(nodes) + [f"--benchmark-json={out}", *BENCH_OPTIONS], log)
        return status, time.perf_counter() - t0
    # node ids relative to the repository root (pytest's rootdir), as --deselect compares them;
    # an entry that names no benchmark any more (removed or renamed) is reported and dropped
    ids = subprocess.run(base + ["benchmarks", "--collect-only"], cwd=str(ROOT),
                         env=child_env(), capture_output=True, text=True).stdout.split()
    untimed, stale = [], []
    for n in UNTIMED:
        u = f"benchmarks/{n}"
        found = any(i == u or i.startswith((u + "::", u + "[")) for i in ids)
        (untimed if found else stale).append(u)
    if stale:
        log(f"  UNTIMED names no benchmark now (removed or renamed?): {', '.join(stale)}")
    timed = base + ["benchmarks", f"--benchmark-json={out}", *BENCH_OPTIONS]
    timed += [a for n in untimed for a in ("--deselect", n)]
    log(f"  benchmarks (timed): pytest benchmarks {' '.join(BENCH_OPTIONS)}")
    status = _pytest(timed, log)
    if untimed:
        log(f"  benchmarks (once, untimed): {', '.join(UNTIMED)}")
        workers = (["-n", str(UNTIMED_WORKERS)]
                   if importlib.util.find_spec("xdist") is not None else [])
        st = _pytest(base + ["--benchmark-disable", *workers, *untimed], log)
        status = status or st
    return status, time.perf_counter() - t0


def _pytest(cmd: list, log) -> int:
    """Run one pytest of the profile (stopped after :data:`PYTEST_LIMIT_S`: status 1)."""
    try:
        return subprocess.run(cmd, cwd=str(ROOT), env=child_env(), timeout=PYTEST_LIMIT_S).returncode
    except subprocess.TimeoutExpired:
        log(f"  pytest did not finish in {PYTEST_LIMIT_S} s and was stopped (a hang? the stacks of "
            f"a benchmark running over {STACKS_AFTER_S} s are printed above)")
        return 1


def checkout_built() -> bool:
    return any((ROOT / "fesub" / "_core").glob("freeplay*.so"))

def bench_node(what: str) -> str:
    """The pytest node id of a ``bench:`` ratio from its description in a run's ``what``
    (``"benchmarks/test_bench_fe.py::test_q4[tri], extra_info ratio_numpy_twin"``)."""
    return what.rsplit(", extra_info ", 1)[0]
