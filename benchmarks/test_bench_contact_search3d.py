"""Node-to-face search in 3D through the public API (:class:`fesub.contact.FaceSet`).

* At 1e6 master faces: the prepared search (a hashed uniform grid built once) against the brute
  force (every face projected for every slave point) and against a linear scan (every face's
  box examined, the faces within reach and within the nearest distance so far projected), each
  per query, timed in the same run.
* Query time against the number of faces, 1e3 to 1e6 (one surface refined): O(1) per query
  shows as a flat line (a growth of the time per query from 1e3 to 1e6 faces below that of
  log n, 2x, is the goal); the faces examined per query (the search's work, flat for O(1))
  are recorded beside the times (the time also grows as the data leave the CPU's caches). Two
  query orders, each with its growth and the goal of 2x:

  - random points (``growth_1e3_to_1e6``): no query shares data with the one before, the worst
    case for the caches at 1e6 faces;
  - the nodes of a slave surface as dense as the master, in their mesh order
    (``growth_1e3_to_1e6_slave_surface``): what a contact step asks (a tracker queries its slave
    nodes in their order, neighbours after neighbours), the order the goal is meant for.

  The random points sorted in strips along the surface are timed too (``per_query_sorted_s_*``).

The surface: a wavy plate z = 0.05 sin(6 x) cos(4 y) over the unit square, n x n quad4 faces;
the slave points near it (within a fifth of a face's size, as nodes in contact are).
"""

from __future__ import annotations

import math
import os

import numpy as np
import pytest
from conftest import bench_median, median_time

from fesub.contact import FaceSet

N_QUERY = 2000


def _plate(n):
    x = np.linspace(0.0, 1.0, n + 1)
    X, Y = np.meshgrid(x, x, indexing="ij")
    pts = np.c_[X.ravel(), Y.ravel(), 0.05 * np.sin(6 * X.ravel()) * np.cos(4 * Y.ravel())]
    i, j = (a.ravel() for a in np.meshgrid(np.arange(n), np.arange(n), indexing="ij"))

    def k(a, b):
        return a * (n + 1) + b

    return pts, np.c_[k(i, j), k(i + 1, j), k(i + 1, j + 1), k(i, j + 1)]


def _slaves(n, m, seed=0):
    rng = np.random.default_rng(seed)
    xy = rng.uniform(0.0, 1.0, (m, 2))
    z = 0.05 * np.sin(6 * xy[:, 0]) * np.cos(4 * xy[:, 1]) + rng.uniform(-0.2, 0.2, m) / n
    return np.c_[xy, z]


@pytest.fixture(scope="module")
def plate_1e6():
    pts, quads = _plate(1000)
    return FaceSet(pts, quads, "quad")


def _slave_surface(n, k=45):
    """k x k slave nodes in their mesh order (rows along y), spaced as the master's nodes (at
    most 0.9/k, so that the patch fits on the coarsest plate), a tenth of a face above it."""
    g = 0.05 + np.arange(k) * min(1.0 / n, 0.9 / k) + 0.3 / n
    X, Y = (a.ravel() for a in np.meshgrid(g, g, indexing="ij"))
    return np.c_[X, Y, 0.05 * np.sin(6 * X) * np.cos(4 * Y) + 0.1 / n]


def test_prepared_search_1e6_faces_vs_brute_force(benchmark, goal, plate_1e6):
    fs = plate_1e6
    P = _slaves(1000, N_QUERY)
    got = benchmark(fs.project, P)
    assert (got.face >= 0).all()
    # the baselines on a few of the same points (each costs O(m) per point)
    every = fs.project_brute(P[:1], prune=False)
    scan = fs.project_brute(P[:8])
    np.testing.assert_array_equal(every.face, got.face[:1])
    np.testing.assert_array_equal(scan.face, got.face[:8])
    np.testing.assert_allclose(scan.gap, got.gap[:8], rtol=0, atol=1e-15)
    t_every = median_time(fs.project_brute, P[:1], prune=False, rounds=1)
    t_scan = median_time(fs.project_brute, P[:8], rounds=3) / 8
    benchmark.extra_info.update(n_faces=len(fs), n_queries=N_QUERY,
                                baseline_brute_force_per_query_s=t_every,
                                baseline_linear_scan_per_query_s=t_scan)
    med = bench_median(benchmark)
    if med is not None:
        per_query = med / N_QUERY
        benchmark.extra_info["per_query_s"] = per_query
        goal("ratio_brute_force", 1000.0, value=t_every / per_query, higher=True)
        benchmark.extra_info["ratio_linear_scan"] = t_scan / per_query


def test_query_time_against_face_count(benchmark, goal, plate_1e6):
    sizes = {1000: None, 10_000: None, 100_000: None, 1_000_000: plate_1e6}
    per_query, per_surface = {}, {}
    for m, fs in sizes.items():
        n = round(math.sqrt(m))
        fs = fs if fs is not None else FaceSet(*_plate(n), "quad")
        P = _slaves(n, N_QUERY, seed=1)
        Ps = P[np.lexsort((P[:, 1], np.floor(P[:, 0] * 50)))]  # in 50 strips along y
        # the smaller sets' calls last milliseconds: more rounds, so that one slice of a busy
        # machine's time does not decide the ratio's base
        rounds = 5 if m == 1_000_000 else 15
        benchmark.extra_info[f"per_query_sorted_s_{m}"] = median_time(fs.project, Ps, rounds=rounds) / N_QUERY
        S = _slave_surface(n)
        per_surface[m] = median_time(fs.project, S, rounds=rounds) / len(S)
        benchmark.extra_info[f"per_query_surface_s_{m}"] = per_surface[m]
        if m == 1_000_000:
            benchmark(fs.project, P)
            med = bench_median(benchmark)
            per_query[m] = (med if med is not None else median_time(fs.project, P, rounds=1)) / N_QUERY
        else:
            per_query[m] = median_time(fs.project, P, rounds=rounds) / N_QUERY
        benchmark.extra_info[f"per_query_s_{m}"] = per_query[m]
        fs.project(P)
        benchmark.extra_info[f"faces_examined_per_query_{m}"] = fs.examined / N_QUERY
        benchmark.extra_info[f"newton_iterations_per_query_{m}"] = fs.newton_iterations / N_QUERY
    sizes_ = np.array(sorted(per_query))
    t = np.array([per_query[m] for m in sizes_])
    slope = float(np.polyfit(np.log(sizes_), np.log(t), 1)[0])
    benchmark.extra_info["load_average"] = os.getloadavg()[0]
    benchmark.extra_info["loglog_slope"] = slope  # 0 for O(1), about 0.1 for O(log n) here
    if bench_median(benchmark) is not None:
        # the time per query at 1e6 faces over that at 1e3: 1 for O(1), 2 for O(log n)
        goal("growth_1e3_to_1e6", 2.0, value=per_query[1_000_000] / per_query[1000])
        goal("growth_1e3_to_1e6_slave_surface", 2.0, value=per_surface[1_000_000] / per_surface[1000])
