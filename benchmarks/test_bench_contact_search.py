"""Node-to-segment search at 1e5 segments through the public API: the prepared surface
(:class:`fesub.contact.SegmentSet`, validated once, local walk from the previous answer) against
the brute-force scan of every segment, timed in the same run."""

from __future__ import annotations

import numpy as np

from fesub.contact import SegmentSet, find_segment
from fesub.contact.geometry import find_segment_brute

N_SEG = 100_000
N_QUERY = 200


def _case():
    rng = np.random.default_rng(0)
    dx = rng.uniform(0.5, 1.5, N_SEG)
    x = np.r_[0.0, np.cumsum(dx)]
    y = np.r_[0.0, np.cumsum(rng.uniform(-0.2, 0.2, N_SEG) * dx)]
    pos, segs = np.c_[x, y], np.c_[np.arange(N_SEG), np.arange(1, N_SEG + 1)]
    # a slave sliding along the middle of the surface, about one segment per query (a march moves
    # far less per step; the eigenvalue loci about one segment per position)
    xs = np.linspace(x[N_SEG // 2], x[N_SEG // 2 + N_QUERY], N_QUERY)
    P = np.c_[xs, np.interp(xs, x, y) + 1e-3]
    return pos, segs, P


def test_prepared_search_vs_brute(benchmark, ratio_to, goal):
    pos, segs, P = _case()
    surf = SegmentSet(pos, segs)

    def prepared():
        return [surf.find(p)[0] for p in P]

    got = benchmark(prepared)
    ref = [find_segment_brute(pos, segs, p)[0] for p in P]
    assert got == ref
    r = ratio_to("brute_force", lambda: [find_segment_brute(pos, segs, p) for p in P], rounds=5)

    def revalidating():  # the one-off search, started from the previous answer too
        k = ref[0]
        for p in P:
            k = find_segment(pos, segs, p, k)[0]

    r_wrap = ratio_to("find_segment_revalidating", revalidating, rounds=3)
    benchmark.extra_info.update(n_segments=N_SEG, n_queries=N_QUERY)
    if r is not None:
        goal("ratio_brute_force", 100.0, value=r, higher=True)
        benchmark.extra_info["ratio_find_segment_revalidating"] = r_wrap
