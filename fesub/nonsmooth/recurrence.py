"""Basins that stop early: recurrence on a coarse grid of the stroboscopic section, and tiles of
rows run as independent jobs on a pool.

Cell mapping by recurrence. The state of a cell's trajectory at t = k T (T the forcing period)
falls in a cell of a coarse grid of the four-dimensional stroboscopic section (side ``cell`` [m,
m/s]). Once a trajectory has settled on a periodic attractor (its stroboscopic state repeats
within ``conv_tol`` after q <= 8 periods), every grid cell it visited is marked with that
attractor and with the orbit point it leads to. A later trajectory whose states fall in
``n_confirm`` successive marked cells, along successive points of one orbit, is labelled at once
and stops; it marks its own path in turn. A grid cell seen on two attractors (or two phases of
one) lies on a basin boundary and is never used: such trajectories integrate on. The kernel is
``basin_transient`` of ``fesub/_core/freeplay.pyx`` (NumPy twin ``freeplay_ref.py``), which also
documents the decisions in detail.

The cells of a block run in runs of ``run`` cells, one after the other, on one table: a run
starts from the paths that every run before it marked, so that a cell is recognised by the paths
of its neighbours. No cell is recognised in its first ``settle`` periods: far from the attractors
the basins interleave finely and a neighbour's path can lie across a basin boundary.

A stopped cell gets the recorded periods of the cell that found its attractor, shifted to the
orbit point it would reach at the end of the full transient: its period, its max and min of x1
are those of full integration, so :func:`~fesub.nonsmooth.basin.assemble_basin` classifies it as
full integration would. Cells that were not recognised are recorded from their end state
(:func:`~fesub.nonsmooth.batch.batch_periodic` with no transient).

Tiles. :func:`run_tiles` runs blocks of rows as independent jobs on an executor, one per
worker and one waiting (no barrier between tiles: a slow tile does not hold the others back), and
hands each new tile the attractors found so far (:func:`merge_attractors`); the first tile runs
alone, so that no tile starts from nothing but the first.
"""

from __future__ import annotations

import math
import os
from concurrent.futures import FIRST_COMPLETED, wait

import numpy as np

from .. import _backend
from ..errors import ParameterError, check_positive
from .batch import batch_periodic, validate_batch

__all__ = ["STOP_DEFAULTS", "stop_options", "transient_stop", "merge_attractors", "run_tiles"]

#: defaults of the recognition: grid side [m, m/s], successive marked cells needed, convergence
#: tolerance of the stroboscopic recurrence [m, m/s] (well below the 1e-6 period tolerance of the
#: classification), tolerance to match a converged state with a known orbit point [m, m/s], cells
#: run in step on one table before the next ones start (``run``), and forcing periods integrated
#: before recognition starts (``settle``). Measured on the 200 x 200 basin of ``fesub freeplay
#: basin`` (W = 1.15, +-1.5 m, 150 periods) against full integration: settle = 0, 10, 20, 30
#: periods gave 29, 17, 0, 0 cells with another label and 25, 23, 31, 42 mean transient periods;
#: all cells in step on one table (no runs) gave 0 and 40 (70 within one block).
STOP_DEFAULTS = dict(cell=0.01, n_confirm=3, conv_tol=1e-9, match_tol=1e-6, run=64,
                     settle=20)
_MAX_ATTRACTORS = 64


def stop_options(options=None) -> dict:
    """The recognition options: :data:`STOP_DEFAULTS` updated with ``options`` (validated)."""
    o = dict(STOP_DEFAULTS)
    options = dict(options or {})
    unknown = set(options) - set(o)
    if unknown:
        raise ParameterError(f"unknown early-stop option(s) {sorted(unknown)}; valid: {sorted(o)}")
    o.update(options)
    for k in ("cell", "conv_tol", "match_tol"):
        o[k] = check_positive(f"early_stop {k}", o[k])
    for k in ("n_confirm", "run", "settle"):
        o[k] = int(o[k])
        low = 0 if k == "settle" else 1
        if o[k] < low:
            raise ParameterError(f"early_stop {k} must be an integer >= {low}, got {o[k]}")
    return o


def _table_size(n: int) -> int:
    # room for every path cell at load 1/2, between 2^16 and 2^21 slots
    return 1 << min(21, max(16, math.ceil(math.log2(2 * max(n, 1)))))


def transient_stop(params, X0, W, *, law="exact", n_transient=150, n_record=4,
                   steps_per_period=200, attractors=(), **options):
    """Steady states of the cells ``X0`` at t0 = 0, each stopped once recognised.

    Parameters
    ----------
    params : FreePlayParams, dict or preset
    X0 : (B, 4) initial states [m, m/s]
    W : float
        Forcing frequency [rad/s].
    law, n_transient, n_record, steps_per_period :
        As in :func:`~fesub.nonsmooth.batch.batch_periodic`.
    attractors : sequence of dict
        Attractors known beforehand (from earlier tiles of the same run): ``period``, ``points``
        (q, 4) [m, m/s] (orbit point i at t = n_transient T + i T), ``strobe`` (n_record + 1, 4)
        [m, m/s] and ``ext`` (max, min of x1) [m] of its recorded periods.
    **options : cell, n_confirm, conv_tol, match_tol (see :data:`STOP_DEFAULTS`)

    Returns
    -------
    dict with ``strobe`` (B, n_record + 1, 4) [m, m/s], ``x1_max``, ``x1_min`` (B,) [m],
    ``n_used`` (B,) transient periods integrated, ``how`` (B,) 0 full transient, 1 converged,
    2 recognised, 3 diverged, and ``attractors`` (the known ones followed by those found here).
    """
    o = stop_options(options)
    p, X0, Wv, code, ntr, nrec, N, _ = validate_batch(params, X0, W, law, n_transient, n_record,
                                                 steps_per_period, 0, 0)
    W = float(Wv[0])
    B = X0.shape[0]
    known = list(attractors)[:_MAX_ATTRACTORS]
    pmax = min(8, nrec)  # periods beyond n_record are not detectable by the classification
    att_pts = np.zeros((_MAX_ATTRACTORS, 8, 4))
    att_per = np.zeros(_MAX_ATTRACTORS, dtype=np.intc)
    att_cell = np.full(_MAX_ATTRACTORS, -1, dtype=np.intc)
    for a, at in enumerate(known):
        att_per[a] = at["period"]
        att_pts[a, :at["period"]] = at["points"]
    counters = np.array([len(known), 0], dtype=np.intc)
    Z = X0.copy()
    # the first ``settle`` periods of every cell are integrated without recognition: far from
    # the attractors the basins interleave finely, and a path recognised there can belong to a
    # neighbour across a basin boundary
    settle = min(o["settle"], ntr)
    if settle > 0:
        Z = batch_periodic(p, Z, W, law=law, n_transient=settle - 1, n_record=1,
                           steps_per_period=N, nsec_max=0).strobe[:, 1].copy()
    nrest = ntr - settle
    tkeys = np.full(_table_size(B * (nrest + 1)), -1, dtype=np.int64)
    tvals = np.full(tkeys.size, -1, dtype=np.intc)
    status = np.empty(B, dtype=np.intc)
    how = np.empty(B, dtype=np.intc)
    used = np.empty(B, dtype=np.intc)
    path = np.empty((B, nrest + 1), dtype=np.int64)
    hist = np.empty((B, pmax + 1, 4))
    costab = np.cos(np.pi * np.arange(2 * N + 1) / N)
    kern, prm = _backend.kernels("freeplay").basin_transient, p.as_array()
    # the cells in runs of ``run`` in turn, on one table: a run starts from the paths of every
    # run before it (cells in step within a run learn from each other only once some converge)
    for b0 in range(0, B, o["run"]):
        b1 = min(b0 + o["run"], B)
        n0 = int(counters[0])
        kern(Z[b0:b1], W, prm, code, nrest, N, costab, float(o["conv_tol"]), pmax,
             float(o["match_tol"]), float(o["cell"]), o["n_confirm"], tkeys, tvals, att_pts,
             att_per, att_cell, counters, status[b0:b1], how[b0:b1], used[b0:b1],
             path[b0:b1], hist[b0:b1])
        att_cell[n0:counters[0]] += b0
    used += settle
    n_att = int(counters[0])
    strobe = np.full((B, nrec + 1, 4), np.nan)
    ext = np.full((B, 2), np.nan)
    # record the cells not recognised and those that found a new attractor
    new = list(range(len(known), n_att))
    rec = np.union1d(np.flatnonzero(status == -1), att_cell[new]).astype(int)
    if rec.size:
        r = batch_periodic(p, Z[rec], W, law=law, n_transient=0, n_record=nrec,
                           steps_per_period=N, nsec_max=0)
        strobe[rec] = r.strobe
        ext[rec, 0], ext[rec, 1] = r.x1_max, r.x1_min
    found = known + [{"period": int(att_per[a]), "points": att_pts[a, :att_per[a]].copy(),
                      "strobe": strobe[att_cell[a]].copy(), "ext": ext[att_cell[a]].copy()}
                     for a in new]
    copy = np.setdiff1d(np.flatnonzero(status >= 0), rec)
    for b in copy:
        at = found[status[b] // 8]
        q, i = at["period"], status[b] % 8
        strobe[b] = at["strobe"][(i + np.arange(nrec + 1)) % q]
        ext[b] = at["ext"]
    return {"strobe": strobe, "x1_max": ext[:, 0], "x1_min": ext[:, 1], "n_used": used,
            "how": how, "attractors": found}


def merge_attractors(known: list, more: list, match_tol: float = STOP_DEFAULTS["match_tol"]):
    """``known`` followed by the attractors of ``more`` that are not in it (same period and an
    orbit point within ``match_tol`` [m, m/s])."""
    out = list(known)
    for at in more:
        q, z0 = at["period"], np.asarray(at["points"])[0]
        if not any(k["period"] == q and np.min(np.max(np.abs(np.asarray(k["points"]) - z0),
                                                      axis=1)) < match_tol for k in out):
            out.append(at)
    return out[:_MAX_ATTRACTORS]


def executor_workers(executor) -> int:
    return int(getattr(executor, "_max_workers", None) or os.cpu_count() or 1)


def run_tiles(job, bounds, executor, out, *, share=None, progress=None, on_done=None,
              shared=None):
    """Run ``job(i0, i1, shared)`` for every tile ``(i0, i1)`` of ``bounds`` into ``out[k]``
    (a list of ``len(bounds)`` entries, filled as tiles finish: on an exception or Ctrl-C, which
    propagate, it holds the tiles done).

    ``executor`` 'serial' runs the tiles here in order; otherwise each tile is one job on the
    executor, at most one per worker and one waiting in flight, submitted as others finish
    (pending ones are cancelled on an exception): a tile submitted later knows more
    attractors. ``job`` returns ``(result, found)``; ``share(shared, found)`` gives the value
    handed to the tiles submitted next (starting from None); with ``share`` the first tile runs
    alone, so that every other starts from what it found (unless ``shared``, the value to start
    from, is given). ``progress`` (a tqdm bar or None) is advanced per tile; ``on_done(k,
    result)`` is called here as tile ``k`` finishes.
    """

    def finish(k, value):
        nonlocal shared
        out[k], found = value
        if on_done is not None:
            on_done(k, out[k])
        if share is not None:
            shared = share(shared, found)
        if progress is not None:
            progress.update(1)

    if executor == "serial":
        for k, (i0, i1) in enumerate(bounds):
            finish(k, job(i0, i1, shared))
        return out
    todo = list(enumerate(bounds))
    running = {}
    depth = executor_workers(executor) + 1
    # with sharing, the first tile runs alone: all others start from the attractors it found
    seeded = share is None or bool(shared)
    try:
        while todo or running:
            while todo and len(running) < (depth if seeded else 1):
                k, (i0, i1) = todo.pop(0)
                running[executor.submit(job, i0, i1, shared)] = k
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for f in sorted(done, key=running.get):
                finish(running.pop(f), f.result())
            seeded = True
    except BaseException:
        for f in running:
            f.cancel()
        raise
    return out
