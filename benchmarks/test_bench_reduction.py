"""Craig-Bampton reduction of several parts: in parallel, and reopened from the cache.

* Parallel: two parts large enough for a process pool to pay off, reduced by
  :func:`fesub.substructure.reduction.reduce_parts` on a pool of 2 workers against 1 worker (in
  this process), no cache. Each part is a steel plate 300 x 300 x 10 mm of 24 x 24 x 2 hexahedra
  (1875 nodes, 5400 retained DOFs), clamped along one edge, its opposite edge the boundary
  (225 DOFs), 40 fixed-interface modes: about 0.9 s of reduction each with CHOLMOD on the
  reference BLAS, 0.55-0.65 s on OpenBLAS (``docs/performance.rst``). Goal >= 1.7x. (The
  brake's own parts are small and unbalanced: the disc, 2592 DOFs, reduces in ~0.3 s, about the
  cost of starting the pool and sending its transformation back; the pads in a tenth of that.)
  After the earlier benchmarks' CHOLMOD factorisations in this process the pool's workers start
  from a server (``start_method`` in ``extra_info``), which is started before the timed rounds.
  CHOLMOD leaves a team of OpenMP threads behind, but the one-worker call is not parallel: its
  CPU time over its wall time is recorded (``one_worker_cpu_per_wall``, all of this process's
  threads: 0.97-1.00 measured with a core free to it, lower when other processes take it; the
  team's threads used under 0.01 s of CPU a reduction). What caps the ratio below 2 besides the
  pool's own costs is recorded too: the parts' reduction seconds summed, in the workers of the
  last timed call and in the one-worker call (``part_seconds_*``): two reductions at once each
  took 6-7 % more CPU time than one alone (load 4), and other processes' load falls on them.
  And the machine's own ceiling, measured in the same run (``machine_two_process_speedup``): a
  fixed dense computation (products of a 300 x 300 matrix, about 0.3 s, no memory traffic beyond
  the caches) run once alone and twice at once in the same pool of 2 workers, ``2 t_alone /
  t_pair``. On this shared 2-vCPU machine it measured 1.6 to 2.0 with the load under 1: two
  compute-bound processes do not always get two cores' worth, whatever the code does. The same
  for a task bound by memory traffic, as a reduction is (``machine_two_process_speedup_
  streaming``: sums over an array of 24 MB, about a part's working set: its Cholesky factor of
  0.78e6 nonzeros, its 225 constraint modes, 9.3 MB, and its Lanczos basis), for which two
  processes share one L3 cache of 32 MB and the memory bus. Five runs on an EPYC of 2 vCPUs within
  ten minutes, load 0.4 to 0.8: the pool's ratio 1.52 to 1.91 (the goal met in one of five), the
  pair's part seconds 0.91 to 1.24 times those of the parts one after the other, streaming 1.08
  to 2.17 (four of the runs): the ratio follows how the machine shares its memory at the moment.
  With OpenBLAS under CHOLMOD (the parts' reductions a third shorter, the pool's fixed costs the
  same) two runs measured 1.41 and 1.47 (load about 1).
* Cache: the brake's default parts (:func:`fesub.models.brake.part_specs`, as ``fesub brake``
  reduces them: the disc and the two pads), reduced into an empty cache folder (assemble, reduce,
  write) against the same call finding them there (read arrays; nothing assembled or solved).
  Goal >= 10x.

Both record the load average (shared machine). About 7 s timed with 2 rounds.
"""

from __future__ import annotations

import os
import shutil
import statistics
import tempfile
import time
from dataclasses import replace
from functools import partial

import pytest

from fesub.fe import Solid
from fesub.fe.solid_mesh import box
from fesub.models.brake import part_specs
from fesub.substructure.reduction import PartSpec, reduce_parts


@pytest.fixture(scope="module")
def brake_parts():
    return part_specs()


@pytest.fixture(scope="module")
def plates():
    plate = PartSpec("plate_a", box(0.3, 0.3, 0.01, 24, 24, 2), Solid(200e9, 0.3, 7800.0), ("xmax",), 40,
                     clamped=("xmin",))
    return [plate, replace(plate, name="plate_b")]


def _stream(megabytes: float, passes: int) -> float:
    """Sum ``passes`` times over an array of ``megabytes`` MB (a task bound by memory traffic)."""
    import numpy as np

    a = np.ones(int(megabytes * 2**20) // 8)
    return float(sum(a.sum() for _ in range(passes)))


def _two_process_speedup(rounds: int, task=None) -> float:
    """``2 t_alone / t_pair`` (median over ``rounds``) of a fixed computation ``task`` run alone
    and twice at once in one pool of 2 workers: the speed-up this machine gives two such processes
    at the time of the run (2 on two free cores with their own caches). By default products of a
    300 x 300 matrix (compute-bound, within the caches)."""
    import numpy as np

    from fesub.parallel import process_pool

    if task is None:
        q = np.linalg.qr(np.random.default_rng(0).standard_normal((300, 300)))[0]
        task = partial(np.linalg.matrix_power, q, 2**50 - 1)  # about 100 products, the result bounded
    ratios = []
    with process_pool(2) as pool:
        list(pool.map(abs, range(2)))                        # both workers started
        for _ in range(rounds):
            t0 = time.perf_counter()
            pool.submit(task).result()
            alone = time.perf_counter() - t0
            t0 = time.perf_counter()
            for f in [pool.submit(task) for _ in range(2)]:
                f.result()
            ratios.append(2 * alone / (time.perf_counter() - t0))
    return statistics.median(ratios)


def test_parallel_reduction_two_workers(benchmark, ratio_to, goal, plates):
    from fesub.parallel import pool_start_method

    rounds = 1 if benchmark.disabled else 2
    # after a CHOLMOD factorisation in this process (earlier benchmarks) the workers start from a
    # server process (fesub.parallel.pool_start_method): it starts once per process, here before
    # the timed rounds, as in a study that reduces more than once
    method = pool_start_method()
    if method == "forkserver" and not benchmark.disabled:
        small = [replace(p, mesh=box(0.3, 0.3, 0.01, 2, 2, 1), n_modes=2) for p in plates]
        reduce_parts(small, jobs=2, cache=False)
    models, info = benchmark.pedantic(reduce_parts, (plates,), {"jobs": 2, "cache": False}, rounds=rounds,
                                      iterations=1)
    assert sorted(info["reduced"]) == ["plate_a", "plate_b"]
    benchmark.extra_info.update(load_average=os.getloadavg()[0], start_method=method,
                                dofs_per_part=int(models["plate_a"].substructure.n_dofs),
                                reduced_size=int(models["plate_a"].Kr.shape[0]))
    seen = {"cpu": [], "parts": []}

    def one_worker():
        c0, t0 = time.process_time(), time.perf_counter()
        _, one = reduce_parts(plates, jobs=1, cache=False)
        seen["cpu"].append((time.process_time() - c0) / (time.perf_counter() - t0))
        seen["parts"].append(sum(one["seconds"].values()))

    r = ratio_to("one_worker", one_worker, rounds=rounds)
    benchmark.extra_info.update(one_worker_cpu_per_wall=statistics.median(seen["cpu"]),
                                part_seconds_one_worker=statistics.median(seen["parts"]),
                                part_seconds_two_workers=sum(info["seconds"].values()))
    if r is not None:
        goal("ratio_one_worker", 1.7, value=r, higher=True)
        benchmark.extra_info["machine_two_process_speedup"] = _two_process_speedup(rounds=3)
        benchmark.extra_info["machine_two_process_speedup_streaming"] = _two_process_speedup(
            rounds=3, task=partial(_stream, 24.0, 60))


def _first_run(specs):
    folder = tempfile.mkdtemp(prefix="fesub-cache-")
    try:
        return reduce_parts(specs, cache=folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_cached_rerun_against_first_run(benchmark, ratio_to, goal, brake_parts, tmp_path):
    reduce_parts(brake_parts, cache=tmp_path)                  # fills the cache
    rounds = 1 if benchmark.disabled else 3
    _models, info = benchmark.pedantic(reduce_parts, (brake_parts,), {"cache": tmp_path}, rounds=rounds,
                                      iterations=1)
    assert info["cached"] == [s.name for s in brake_parts] and not info["reduced"]
    benchmark.extra_info["load_average"] = os.getloadavg()[0]
    r = ratio_to("first_run", _first_run, brake_parts, rounds=rounds)
    if r is not None:
        goal("ratio_first_run", 10.0, value=r, higher=True)
