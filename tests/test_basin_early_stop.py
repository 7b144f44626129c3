"""Basins that stop early (cell mapping by recurrence on the stroboscopic section) against full
integration of every cell, on both backends; the compiled kernel against its NumPy twin."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from numpy.testing import assert_allclose

from fesub import _backend
from fesub.errors import ParameterError
from fesub.nonsmooth import P_REF, basin_grid, basins
from fesub.nonsmooth.basin import _grid_states
from fesub.nonsmooth.recurrence import merge_attractors, transient_stop

# The reference protocol: every cell integrated for the full transient. 40 x 40 cells is the
# smallest grid on which the four period-1 attractors of W = 1.15 have ragged, interleaved basins
# (about 1 cell in 5 on a boundary), so that a wrong recognition would show.
BIG = dict(x1_range=(-0.5, 0.5), x2_range=(-0.5, 0.5), shape=(40, 40), n_transient=150,
           n_record=4, steps_per_period=200, progress=False)
# The NumPy twin is about 200 times slower: a smaller grid with the smooth law (no event location)
# and fewer steps, still long enough (120 periods) for the recurrence to converge to 1e-9.
SMALL = dict(x1_range=(-0.5, 0.5), x2_range=(-0.5, 0.5), shape=(5, 5), n_transient=120,
             n_record=4, steps_per_period=32, progress=False, law="smooth")


def _needs_compiled():
    if not _backend.compiled_available("freeplay"):
        pytest.skip("compiled freeplay kernel not built (the 40 x 40 basin needs it)")


def _on_boundary(labels, i, j):
    """The cell (i, j) has a 4-neighbour with another label in ``labels``."""
    n1, n2 = labels.shape
    nb = [(i + di, j + dj) for di, dj in ((1, 0), (-1, 0), (0, 1), (0, -1))
          if 0 <= i + di < n1 and 0 <= j + dj < n2]
    return any(labels[a, b] != labels[i, j] for a, b in nb)


def _compare(early, full):
    """Fraction of equal labels; the cells that differ must lie on a basin boundary of the full
    basin; the attractors (period, max and min x1) must be the same."""
    assert [a["period"] for a in early.attractors] == [a["period"] for a in full.attractors]
    for a, b in zip(early.attractors, full.attractors):
        # a stopped cell carries the record of the cell that found its attractor, converged to
        # the 1e-9 recurrence tolerance: max and min agree far below the 1e-3 clustering
        assert abs(a["x1_max"] - b["x1_max"]) < 1e-6 and abs(a["x1_min"] - b["x1_min"]) < 1e-6
    diff = np.argwhere(early.labels != full.labels)
    assert all(_on_boundary(full.labels, i, j) for i, j in diff), diff
    return 1.0 - len(diff) / full.labels.size


@pytest.fixture(scope="module")
def big_pair():
    _needs_compiled()
    with _backend.use("compiled"):
        full = basins(P_REF, 1.15, executor="serial", **BIG)
        early = basins(P_REF, 1.15, executor="serial", early_stop=True, **BIG)
    return early, full


def test_early_stop_labels_equal_full_integration_compiled(big_pair):
    early, full = big_pair
    assert len(full.attractors) == 4  # the four period-1 orbits of W = 1.15
    # the goal: the same label on >= 99.5 % of the cells, the others on basin boundaries
    assert _compare(early, full) >= 0.995
    # the cells really stopped early (periods integrated, not time): the first ones of the grid
    # find the attractors, most others are recognised well before the 150 periods
    assert early.options["mean_transient_periods"] < 0.5 * BIG["n_transient"]
    assert full.options["mean_transient_periods"] == BIG["n_transient"]


def test_early_stop_with_parallel_tiles_equals_full_integration(big_pair):
    # tiles on two workers receive the attractors found by the tiles done before them: other
    # decisions, the same labels
    _needs_compiled()
    early, full = big_pair
    with _backend.use("compiled"), ThreadPoolExecutor(2) as ex:
        par = basins(P_REF, 1.15, executor=ex, early_stop=True, tile_rows=4, **BIG)
    assert _compare(par, full) >= 0.995


def test_period_three_orbit_stops_in_phase():
    # W = 1.45: a period-1 orbit and the symmetric period-3 orbit share the grid. A stopped cell
    # gets the record of the cell that found its orbit, shifted to the orbit point it would
    # reach after the full transient: its last stroboscopic state is the fully integrated one
    # to the 1e-9 convergence tolerance of the recurrence (6e-10 measured), for every cell
    _needs_compiled()
    kw = dict(x1_range=(-0.5, 0.5), x2_range=(-0.5, 0.5), shape=(8, 8), n_transient=300,
              n_record=4, steps_per_period=400, progress=False, executor="serial")
    with _backend.use("compiled"):
        full = basins(P_REF, 1.45, **kw)
        early = basins(P_REF, 1.45, early_stop=True, **kw)
    assert sorted(a["period"] for a in full.attractors) == [1, 3]
    assert _compare(early, full) == 1.0
    assert np.max(np.abs(early.strobe_last - full.strobe_last)) < 1e-8
    assert early.options["mean_transient_periods"] < 0.5 * kw["n_transient"]


@pytest.mark.slow
def test_early_stop_labels_equal_full_integration_twin():
    with _backend.use("python"):
        full = basins(P_REF, 1.15, executor="serial", **SMALL)
        early = basins(P_REF, 1.15, executor="serial", early_stop=True, **SMALL)
    assert _compare(early, full) >= 0.995
    assert early.options["mean_transient_periods"] < SMALL["n_transient"]


@pytest.mark.parametrize("law", ["exact", "smooth"])
def test_kernel_and_twin_take_the_same_decisions(law):
    if not _backend.compiled_available("freeplay"):
        pytest.skip("compiled freeplay kernel not built")
    g1, g2 = basin_grid((-0.5, 0.5), (-0.5, 0.5), (5, 5))
    X0 = _grid_states(g1, g2)
    kw = dict(law=law, n_transient=120, n_record=4, steps_per_period=40)
    out = {}
    for backend in ("compiled", "python"):
        with _backend.use(backend):
            first = transient_stop(P_REF, X0[:12], 1.15, **kw)
            # the second half starts from the attractors the first found (as a later tile)
            out[backend] = (first, transient_stop(P_REF, X0[12:], 1.15,
                                                  attractors=first["attractors"], **kw))
    for c, t in zip(out["compiled"], out["python"]):
        # discrete decisions identical; states to round-off (same operations, same order)
        for k in ("how", "n_used"):
            assert np.array_equal(c[k], t[k]), k
        assert_allclose(c["strobe"], t["strobe"], rtol=0, atol=1e-10, equal_nan=True)
        assert len(c["attractors"]) == len(t["attractors"])
        for a, b in zip(c["attractors"], t["attractors"]):
            assert a["period"] == b["period"]
            assert_allclose(a["points"], b["points"], rtol=0, atol=1e-10)
    # the later tile used what the first found: some of its cells were recognised at once
    assert np.any(out["compiled"][1]["how"] == 2)


def test_a_cell_started_on_a_known_orbit_is_recognised_after_n_confirm_periods(backend):
    # a converged state of a first run, given as a known attractor: a cell started exactly on
    # its orbit point is in marked cells from its first period on, so it stops after n_confirm
    kw = dict(law="smooth", n_transient=150, n_record=4, steps_per_period=40)
    first = transient_stop(P_REF, [[0.3, 0.0, 0.3, 0.0]], 1.15, **kw)
    assert first["how"][0] == 1 and len(first["attractors"]) == 1
    at = first["attractors"][0]
    second = transient_stop(P_REF, at["points"][:1], 1.15, attractors=first["attractors"],
                            n_confirm=3, settle=0, **kw)
    assert second["how"][0] == 2 and second["n_used"][0] == 3
    # with settle periods integrated first, recognition starts after them: on the orbit it
    # stays, so it stops n_confirm periods later
    late = transient_stop(P_REF, at["points"][:1], 1.15, attractors=first["attractors"],
                          n_confirm=3, settle=20, **kw)
    assert late["how"][0] == 2 and late["n_used"][0] == 23
    # its record is that of the orbit: period-q recurrence and the same extrema
    # (the copy repeats the first q points: equal to the recorded ones within the 1e-9
    # convergence tolerance, a little amplified over the recorded periods)
    assert_allclose(second["strobe"][0], first["strobe"][0], rtol=0, atol=1e-8)
    assert second["x1_max"][0] == first["x1_max"][0]


def test_merge_attractors_keeps_one_of_each():
    a = {"period": 1, "points": np.array([[0.1, 0.0, 0.2, 0.0]])}
    b = {"period": 1, "points": np.array([[0.1 + 1e-8, 0.0, 0.2, 0.0]])}  # the same orbit
    c = {"period": 2, "points": np.array([[0.1, 0.0, 0.2, 0.0], [-0.1, 0.0, -0.2, 0.0]])}
    assert merge_attractors([a], [b, c]) == [a, c]


@pytest.mark.parametrize("opt", [{"cell": 0}, {"n_confirm": 0}, {"conv_tol": -1},
                                 {"unknown": 1}])
def test_bad_early_stop_options(opt):
    with pytest.raises(ParameterError):
        basins(P_REF, 1.15, shape=(2, 2), n_transient=5, executor="serial", progress=False,
               early_stop=opt)


def test_grid_cells_seen_on_two_attractors_are_never_used():
    # the hash table of the twin (the kernel's decisions are the twin's, test above): a cell
    # marked with two (attractor, orbit point) values becomes a conflict; the table stops
    # taking new cells at half load
    from fesub._core import freeplay_ref as ref

    tkeys = np.full(8, -1, dtype=np.int64)
    tvals = np.full(8, -1, dtype=np.intc)
    counters = np.zeros(2, dtype=np.intc)
    k1 = ref._cell_key(np.array([0.011, -0.02, 0.3, 0.0]), 0.01)
    k2 = ref._cell_key(np.array([0.019, -0.011, 0.3, 0.009]), 0.01)  # the same cell
    assert k1 == k2 and k1 != -1
    ref._mark(k1, 8 * 1 + 0, tkeys, tvals, counters)
    assert ref._lookup(k1, tkeys, tvals) == 8
    ref._mark(k2, 8 * 1 + 0, tkeys, tvals, counters)  # same value again: still usable
    assert ref._lookup(k1, tkeys, tvals) == 8
    ref._mark(k1, 8 * 2 + 0, tkeys, tvals, counters)  # another attractor: a basin boundary
    assert ref._lookup(k1, tkeys, tvals) == -2
    for x in (1.0, 2.0, 3.0, 4.0):
        ref._mark(ref._cell_key(np.array([x, 0, 0, 0]), 0.01), 0, tkeys, tvals, counters)
    assert counters[1] == 4 and np.sum(tkeys != -1) == 4  # half of 8 slots
    assert ref._cell_key(np.array([400.0, 0, 0, 0]), 0.01) == -1  # off the grid: never marked


def test_early_stopped_basin_saves_its_options(tmp_path):
    import fesub

    r = basins(P_REF, 1.15, shape=(3, 3), n_transient=30, steps_per_period=40, executor="serial",
               progress=False, early_stop={"n_confirm": 4})
    back = fesub.load(r.save(tmp_path / "basin"))
    assert back.options["early_stop"]["n_confirm"] == 4
    assert np.array_equal(back.labels, r.labels) and np.array_equal(back.x1_max, r.x1_max,
                                                                      equal_nan=True)
