"""Craig-Bampton reduction of several parts: in parallel, and reopened from the cache.

* Parallel: two parts of equal size (the brake's disc twice: 2592 DOFs, 312 boundary DOFs,
  30 modes each) reduced by :func:`fesub.substructure.reduction.reduce_parts` on a pool of 2
  workers against 1 worker (in this process), no cache. Goal >= 1.7x. (The brake's own three
  parts are not balanced, the disc costing 10x a pad: two workers cannot halve their time.)
* Cache: the brake's three parts (disc and two pads, as the brake model reduces them), reduced
  into an empty cache folder (reduce and write) against the same call finding them there (read,
  assemble the substructures again: no reduction). Goal >= 10x.

Both record the load average (shared machine). About 10 s with 2 rounds at load 7 (half when the machine is quiet).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path

import pytest

from fesub.fe import Solid
from fesub.substructure import read_volumes
from fesub.substructure.reduction import PartSpec, reduce_parts

MESH = Path(__file__).resolve().parents[1] / "meshes" / "brake.msh"


@pytest.fixture(scope="module")
def specs():
    _, v = read_volumes(MESH)
    mat = Solid(200e9, 0.3, 7800.0)
    return [PartSpec("disc", v["disc"], mat, ("disc_top_contact", "disc_bottom_contact"), 30, clamped=("hub",)),
            PartSpec("pad_top", v["pad_top"], mat, ("pad_top_contact", "pad_top_back"), 12),
            PartSpec("pad_bottom", v["pad_bottom"], mat, ("pad_bottom_contact", "pad_bottom_back"), 12)]


def test_parallel_reduction_two_workers(benchmark, ratio_to, goal, specs):
    twin = [specs[0], replace(specs[0], name="disc_b")]
    rounds = 1 if benchmark.disabled else 2
    models, info = benchmark.pedantic(reduce_parts, (twin,), dict(jobs=2, cache=False), rounds=rounds,
                                      iterations=1)
    assert sorted(info["reduced"]) == ["disc", "disc_b"] and models["disc_b"].n_dofs == models["disc"].n_dofs
    benchmark.extra_info.update(load_average=os.getloadavg()[0], dofs_per_part=int(models["disc"].Kr.shape[0]))
    r = ratio_to("one_worker", reduce_parts, twin, jobs=1, cache=False, rounds=rounds)
    if r is not None:
        goal("ratio_one_worker", 1.7, value=r, higher=True)


def _first_run(specs):
    folder = tempfile.mkdtemp(prefix="fesub-cache-")
    try:
        return reduce_parts(specs, cache=folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_cached_rerun_against_first_run(benchmark, ratio_to, goal, specs, tmp_path):
    reduce_parts(specs, cache=tmp_path)                        # fills the cache
    rounds = 1 if benchmark.disabled else 2
    models, info = benchmark.pedantic(reduce_parts, (specs,), dict(cache=tmp_path), rounds=rounds, iterations=1)
    assert info["cached"] == [s.name for s in specs] and not info["reduced"]
    benchmark.extra_info["load_average"] = os.getloadavg()[0]
    r = ratio_to("first_run", _first_run, specs, rounds=rounds)
    if r is not None:
        goal("ratio_first_run", 10.0, value=r, higher=True)
