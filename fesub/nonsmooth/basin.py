"""Basins of attraction of the free-play oscillator on the compiled batch integrator.

:func:`basins` integrates a grid of initial positions ``(x1(0), x2(0))`` with zero velocities at
t = 0; each cell runs ``n_transient`` periods (discarded) and ``n_record`` periods (recorded), and
its attractor is identified by Poincare return: the period ``p`` is the smallest ``p <= pmax``
with ``|P^p(x) - x|_inf < period_tol`` on the stroboscopic points, and the signature
``(p, max x1, min x1)`` is clustered (``max |x1|`` alone would merge mirror pairs). ``p = 0``
means non-periodic (chaotic or unconverged) and gets the label ``-1``; diverged cells get ``-2``.

A basin is computed in blocks of rows (:func:`basin_cells`, each a :class:`BasinCells` that can be
saved as it finishes) and joined and classified by :func:`assemble_basin` into a
:class:`BasinResult` (the result classes and the classification live in
:mod:`fesub.nonsmooth.basin_results`; this module re-exports them). :func:`basin_point` is the pure, picklable single-point function for a
sweep engine.

With ``basins(early_stop=True)`` a cell stops as soon as its stroboscopic path is recognised as
leading to an attractor found before (cell mapping by recurrence on a coarse grid of the section,
:mod:`fesub.nonsmooth.recurrence`); it then carries the record of that attractor, so that the
classification is the one of full integration. Blocks of rows run as independent jobs on a pool,
one per worker, and pass the attractors they found to the blocks after them.
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np

from .. import _backend
from ..errors import ParameterError, check_positive
from .batch import batch_parallel, batch_periodic, executor_scope, period_of, tile_bounds, validate_batch
from .recurrence import executor_workers, merge_attractors, run_tiles, stop_options, transient_stop
from .system import get_params, split_params
from .basin_results import (DIVERGENT, LABEL_NAMES, NOT_COMPUTED, NOT_PERIODIC, BasinCells,
                            BasinResult, classify)

__all__ = ["classify", "BasinCells", "BasinResult", "basin_grid", "basin_cells", "assemble_basin",
           "basins", "basin_run", "basin_tiles", "attractors_of", "basin_point", "LABEL_NAMES",
           "NOT_PERIODIC", "DIVERGENT", "NOT_COMPUTED"]


def _grid(rng, n, name):
    try:
        lo, hi = (float(v) for v in rng)
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be a pair (lo, hi), got {rng!r}") from None
    n = int(n)
    if n < 1:
        raise ParameterError(f"grid size along {name} must be >= 1 (empty grid), got {n}")
    if not (math.isfinite(lo) and math.isfinite(hi)) or (n > 1 and not hi > lo):
        raise ParameterError(f"{name} must satisfy lo < hi (finite), got {rng!r}")
    return np.linspace(lo, hi, n)


def basin_grid(x1_range=(-0.5, 0.5), x2_range=(-0.5, 0.5), shape=(20, 20)):
    """The grid of initial positions of :func:`basins`: ``np.linspace(lo, hi, n)`` per axis [m].

    Parameters
    ----------
    x1_range, x2_range : tuple of float
        ``(lo, hi)`` of the initial positions x1 and x2 (m).
    shape : tuple of int
        ``(n1, n2)`` grid points per axis (-).

    Returns
    -------
    (x1, x2) : ndarrays of shapes (n1,), (n2,)
        Initial positions (m).
    """
    try:
        n1, n2 = (int(s) for s in shape)
    except (TypeError, ValueError):
        raise ParameterError(f"shape must be a pair (n1, n2), got {shape!r}") from None
    return _grid(x1_range, n1, "x1_range"), _grid(x2_range, n2, "x2_range")


def _grid_states(g1, g2):
    """States [x1, 0, x2, 0] of the grid g1 x g2 (rows along x1)."""
    X1, X2 = np.meshgrid(g1, g2, indexing="ij")
    X0 = np.zeros((X1.size, 4))
    X0[:, 0] = X1.ravel()
    X0[:, 2] = X2.ravel()
    return X0


def basin_cells(params, W, x1, x2, *, law="exact", n_transient=150, n_record=4,
                steps_per_period=200, early_exit_tol=0.0, executor="serial",
                progress=False) -> BasinCells:
    """Integrate the cells ``x1 x x2`` of a basin grid (zero velocities, t0 = 0).

    Parameters
    ----------
    params : FreePlayParams, dict or preset
    W : float
        Forcing frequency [rad/s].
    x1, x2 : array_like
        Initial positions of the rows and columns [m].
    law, n_transient, n_record, steps_per_period, early_exit_tol :
        As in :func:`basins`.
    executor : 'serial', None or a concurrent.futures executor
        Where the chunks of cells run (see :func:`~fesub.nonsmooth.batch.batch_parallel`).
    progress : bool
        Progress bar over the chunks.

    Returns
    -------
    BasinCells
    """
    p = get_params(params)
    W = check_positive("W (forcing frequency)", W)
    g1 = np.asarray(x1, float).ravel()
    g2 = np.asarray(x2, float).ravel()
    if g1.size == 0 or g2.size == 0:
        raise ParameterError("x1 and x2 must hold at least one initial position (empty grid)")
    if not (np.all(np.isfinite(g1)) and np.all(np.isfinite(g2))):
        raise ParameterError("x1 and x2 (initial positions) must be finite")
    n1, n2 = g1.size, g2.size
    r = batch_parallel(p, _grid_states(g1, g2), W, executor=executor, progress=progress, law=law,
                       n_transient=n_transient, n_record=n_record,
                       steps_per_period=steps_per_period, nsec_max=0,
                       early_exit_tol=early_exit_tol)
    opts = dict(W=W, law=law, n_transient=n_transient, n_record=n_record,
                steps_per_period=steps_per_period, early_exit_tol=early_exit_tol,
                params=p.to_dict())
    return BasinCells(W=W, law=law, x1=g1, x2=g2, strobe=r.strobe.reshape(n1, n2, -1, 4),
                      x1_max=r.x1_max.reshape(n1, n2), x1_min=r.x1_min.reshape(n1, n2),
                      n_used=r.n_used.reshape(n1, n2), options=opts)


def assemble_basin(cells, x1, x2, *, period_tol=1e-6, cluster_tol=1e-3, x1_range=None,
                   x2_range=None, run=None) -> BasinResult:
    """Join blocks of rows computed by :func:`basin_cells` and classify the attractors.

    Parameters
    ----------
    cells : sequence of BasinCells
        Blocks of rows of the grid ``x1 x x2`` (any subset, any order); rows no block holds are
        "not computed" (label -3) and make the result ``status='interrupted'``.
    x1, x2 : array_like
        The whole grid [m] (the blocks' rows must be found in ``x1`` exactly).
    period_tol : float
        Stroboscopic recurrence tolerance (max norm over the state [m, m/s]).
    cluster_tol : float
        Tolerance on max/min x1 [m] when clustering signatures.
    x1_range, x2_range : (lo, hi), optional
        Recorded in the options [m] (default: the ends of the grid).
    run : dict, optional
        Run options (``BasinCells.options``); needed when ``cells`` is empty, otherwise taken
        from the first block (every block must have the same).

    Returns
    -------
    BasinResult
    """
    cells = list(cells)
    x1 = np.asarray(x1, float)
    x2 = np.asarray(x2, float)
    if run is None:
        if not cells:
            raise ParameterError("assemble_basin needs the run options when no cells are given")
        run = cells[0].options
    n1, n2 = x1.size, x2.size
    nrec = int(run["n_record"])
    strobe = np.full((n1, n2, nrec + 1, 4), np.nan)
    xM = np.full((n1, n2), np.nan)
    xm = np.full((n1, n2), np.nan)
    used = np.zeros((n1, n2), dtype=np.int32)
    done = np.zeros((n1, n2), dtype=bool)
    for c in cells:
        if c.options != run:
            raise ParameterError("basin blocks come from different runs (options differ)")
        if not np.array_equal(c.x2, x2):
            raise ParameterError("a basin block has other x2 columns than the grid")
        hit = np.flatnonzero(x1 == c.x1[0])
        i0 = int(hit[0]) if hit.size else -1
        if i0 < 0 or not np.array_equal(x1[i0:i0 + len(c.x1)], c.x1):
            raise ParameterError("a basin block's x1 rows are not rows of the grid")
        sl = slice(i0, i0 + len(c.x1))
        strobe[sl], xM[sl], xm[sl], used[sl] = c.strobe, c.x1_max, c.x1_min, c.n_used
        done[sl] = True
    B = n1 * n2
    comp = done.ravel()
    sf = strobe.reshape(B, nrec + 1, 4)
    per = np.zeros(B, dtype=int)
    per[comp] = period_of(sf[comp], period_tol)
    labels = np.full(B, NOT_COMPUTED, dtype=int)
    lab_c, attractors = classify(per[comp], xM.ravel()[comp], xm.ravel()[comp],
                                 cluster_tol=cluster_tol)
    labels[comp] = lab_c
    for at in attractors:
        sel = np.nonzero(labels == at["label"])[0]
        at["fraction"] = at["count"] / B
        at["strobe"] = sf[sel[0], :at["period"]].tolist()
    x1_range = [float(x1[0]), float(x1[-1])] if x1_range is None else list(map(float, x1_range))
    x2_range = [float(x2[0]), float(x2[-1])] if x2_range is None else list(map(float, x2_range))
    opts = dict(x1_range=x1_range, x2_range=x2_range, shape=[n1, n2],
                n_transient=run["n_transient"], n_record=run["n_record"],
                steps_per_period=run["steps_per_period"], period_tol=period_tol,
                cluster_tol=cluster_tol, early_exit_tol=run["early_exit_tol"],
                params=run["params"],
                mean_transient_periods=float(np.mean(used.ravel()[comp])) if comp.any()
                else float("nan"))
    if "early_stop" in run:
        opts["early_stop"] = run["early_stop"]
    return BasinResult(W=run["W"], law=run["law"], x1=x1, x2=x2, labels=labels.reshape(n1, n2),
                       period=per.reshape(n1, n2), x1_max=xM, x1_min=xm, attractors=attractors,
                       strobe_last=strobe[:, :, -1], options=opts,
                       status="complete" if comp.all() else "interrupted")


def basins(params=None, W=1.15, *, law="exact", x1_range=(-0.5, 0.5), x2_range=(-0.5, 0.5),
           shape=(20, 20), n_transient=150, n_record=4, steps_per_period=200, period_tol=1e-6,
           cluster_tol=1e-3, early_exit_tol=0.0, early_stop=False, tile_rows=None,
           executor=None, progress=True) -> BasinResult:
    """Basins of attraction over initial positions (x1(0), x2(0)), zero velocities, t0 = 0.

    The grid is integrated in blocks of ``tile_rows`` rows (:func:`basin_cells`) and classified
    once at the end (:func:`assemble_basin`). On Ctrl-C (KeyboardInterrupt) the blocks finished
    so far are returned with ``status='interrupted'`` (the other cells have label -3) and the
    worker processes of a pool created here are stopped.

    Parameters
    ----------
    params : FreePlayParams, dict or preset
    W : float
        Forcing frequency [rad/s].
    law : 'exact' | 'smooth'
    x1_range, x2_range : (lo, hi)
        Initial positions [m]; grid ``np.linspace(lo, hi, n)``.
    shape : (n1, n2)
        Cells along x1 and x2.
    n_transient, n_record : int
        Discarded and recorded forcing periods.
    steps_per_period : int
        RK4 steps per period.
    period_tol : float
        Stroboscopic recurrence tolerance (max norm over the state [m, m/s]).
    cluster_tol : float
        Tolerance on max/min x1 [m] when clustering signatures.
    early_exit_tol : float
        If > 0, a cell's transient ends once its stroboscopic state repeats within this tolerance
        (see :func:`~fesub.nonsmooth.batch.batch_periodic`); use it well below ``period_tol``
        (e.g. 1e-9). 0 (default) keeps the fixed ``n_transient`` protocol.
    early_stop : bool or dict
        True (or a dict of options, see :data:`~fesub.nonsmooth.recurrence.STOP_DEFAULTS`):
        a cell stops as soon as its stroboscopic path is recognised on a coarse grid of the
        section as leading to an attractor found before (cell mapping by recurrence, see
        :mod:`fesub.nonsmooth.recurrence`); the blocks share what they found. The labels are
        those of full integration except, rarely, on basin boundaries. False (default):
        every cell runs the full transient.
    tile_rows : int, optional
        Rows per block (default: the grid in about 10 blocks, at least 4 per worker; at most 4
        rows with ``early_stop``).
    executor : None, 'serial' or a concurrent.futures executor
        None: a local process pool with os.cpu_count() workers (created and stopped here).
        Each block is one job; one per worker and one waiting are in flight.
    progress : bool
        Progress bar over the blocks.

    Returns
    -------
    BasinResult
    """
    p = get_params(params)
    g1, g2 = basin_grid(x1_range, x2_range, shape)
    # the run options validated before any work (a bad option must not look like an interrupt)
    run, stop = basin_run(p, W, law=law, n_transient=n_transient, n_record=n_record,
                          steps_per_period=steps_per_period, early_exit_tol=early_exit_tol,
                          early_stop=early_stop)
    W = run["W"]
    cells = []
    try:
        with executor_scope(executor) as ex:
            nw = 1 if ex == "serial" else executor_workers(ex)
            if tile_rows is None:
                # early stop: small blocks pass the attractors they found to more blocks
                tile_rows = max(1, math.ceil(g1.size / max(10, 4 * nw)))
                tile_rows = min(tile_rows, 4) if stop is not None else tile_rows
            bounds = tile_bounds(g1.size, tile_rows)
            done = [None] * len(bounds)
            try:
                basin_tiles(p, W, g1, g2, bounds, run, stop, done, executor=ex,
                            progress=f"basin W={W:g} ({law})" if progress else None)
            finally:
                cells = [c for c in done if c is not None]
    except KeyboardInterrupt:
        pass
    return assemble_basin(cells, g1, g2, period_tol=period_tol, cluster_tol=cluster_tol,
                          x1_range=x1_range, x2_range=x2_range, run=run)


def basin_run(params, W, *, law="exact", n_transient=150, n_record=4, steps_per_period=200,
              early_exit_tol=0.0, early_stop=False):
    """The run options of a basin, validated: ``(run, stop)`` for :func:`basin_tiles`.

    Parameters
    ----------
    params : FreePlayParams, dict or preset
        Model parameters (units of :data:`~fesub.nonsmooth.system.PARAM_UNITS`).
    W : float
        Forcing frequency [rad/s].
    law, n_transient, n_record, steps_per_period, early_exit_tol, early_stop :
        As in :func:`basins` (periods and steps are counts [-], ``early_exit_tol`` in m, m/s).

    Returns
    -------
    run : dict
        The options every block records in :attr:`BasinCells.options` (W in rad/s).
    stop : dict or None
        The recognition options (None without ``early_stop``).
    """
    p = get_params(params)
    W = check_positive("W (forcing frequency)", W)
    validate_batch(p, np.zeros((1, 4)), W, law, n_transient, n_record, steps_per_period, 0, 0)
    check_positive("early_exit_tol", early_exit_tol, strict=False)
    run = dict(W=W, law=law, n_transient=int(n_transient), n_record=int(n_record),
               steps_per_period=int(steps_per_period), early_exit_tol=float(early_exit_tol),
               params=p.to_dict())
    stop = None
    if early_stop is not False and early_stop is not None:
        if early_exit_tol > 0:
            raise ParameterError("early_exit_tol and early_stop are two ways to end a transient: "
                                 "choose one (early_exit_tol = 0 with early_stop)")
        stop = stop_options({} if early_stop is True else early_stop)
        run["early_stop"] = stop
    return run, stop


def basin_tiles(params, W, x1, x2, bounds, run, stop, done, *, executor="serial",
                on_tile=None, progress=None) -> list:
    """Compute the blocks of rows ``bounds`` of the grid ``x1 x x2`` that ``done`` lacks.

    Each block is one job on ``executor`` (one per worker and one waiting, no barrier between
    blocks); with early stop the blocks pass on the attractors they found, and blocks finished
    before (entries of ``done`` that are not None, e.g. reopened from files) seed them.

    Parameters
    ----------
    params : FreePlayParams, dict or preset
    W : float
        Forcing frequency [rad/s].
    x1, x2 : ndarray
        The whole grid of initial positions [m].
    bounds : list of (i0, i1)
        Rows of each block (see :func:`~fesub.nonsmooth.batch.tile_bounds`).
    run, stop : dict, dict or None
        From :func:`basin_run`.
    done : list
        One entry per block, None for the blocks to compute; filled with each
        :class:`BasinCells` as it finishes (on Ctrl-C or an error it holds the blocks finished).
    executor : 'serial' or a concurrent.futures executor
    on_tile : callable, optional
        ``on_tile(k, cells)`` in this process as block ``k`` finishes (e.g. to save it).
    progress : str, optional
        Label of a progress bar over the blocks (None: no bar).

    Returns
    -------
    list
        ``done``, every entry a :class:`BasinCells`.
    """
    p = get_params(params)
    g1, g2 = np.asarray(x1, float), np.asarray(x2, float)
    todo = [k for k, c in enumerate(done) if c is None]
    seed = None
    if stop is not None:
        seed = []
        for c in done:
            if c is not None:
                seed = merge_attractors(seed, attractors_of(c), stop["match_tol"])
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(bounds), initial=len(bounds) - len(todo), desc=progress,
                   unit="block")
    part = [None] * len(todo)

    def keep(k, cells):
        done[todo[k]] = cells
        if on_tile is not None:
            on_tile(todo[k], cells)

    job = partial(_tile, _backend.active("freeplay"), p, g1, g2, run, stop)
    try:
        run_tiles(job, [bounds[k] for k in todo], executor, part, progress=bar, on_done=keep,
                  share=None if stop is None else _share(stop["match_tol"]), shared=seed)
    finally:
        if bar is not None:
            bar.close()
    return done


def attractors_of(cells: BasinCells, period_tol: float = 1e-6) -> list:
    """The attractors a finished block reached, as :func:`~fesub.nonsmooth.recurrence.transient_stop`
    takes them: one per distinct signature (period, max and min x1).

    Parameters
    ----------
    cells : BasinCells
        A finished block.
    period_tol : float
        Stroboscopic recurrence tolerance (max norm over the state [m, m/s]).

    Returns
    -------
    list of dict
        ``period`` [-], ``points`` (q, 4) orbit points [m, m/s], ``strobe`` (n_record + 1, 4)
        [m, m/s] and ``ext`` (max, min of x1) [m].
    """
    n = cells.strobe.shape[0] * cells.strobe.shape[1]
    sf = cells.strobe.reshape(n, -1, 4)
    per = period_of(sf, period_tol)
    xM, xm = cells.x1_max.ravel(), cells.x1_min.ravel()
    labels, atts = classify(per, xM, xm)
    out = []
    for at in atts:
        b = int(np.flatnonzero(labels == at["label"])[0])
        if at["period"] > 8:
            continue
        out.append({"period": int(at["period"]), "points": sf[b, :at["period"]].copy(),
                    "strobe": sf[b].copy(), "ext": np.array([xM[b], xm[b]])})
    return out


def _share(match_tol):
    return lambda known, found: merge_attractors(known or [], found, match_tol)


def _tile(backend, p, g1, g2, run, stop, i0, i1, attractors):
    """One block of rows of :func:`basins` (a job: picklable, runs on any worker)."""
    kw = {k: run[k] for k in ("law", "n_transient", "n_record", "steps_per_period")}
    with _backend.use(backend):
        if stop is None:
            return basin_cells(p, run["W"], g1[i0:i1], g2, executor="serial", progress=False,
                               early_exit_tol=run["early_exit_tol"], **kw), None
        X0 = _grid_states(g1[i0:i1], g2)
        r = transient_stop(p, X0, run["W"], attractors=attractors or (), **kw, **stop)
    n = (i1 - i0, g2.size)
    return BasinCells(W=run["W"], law=run["law"], x1=g1[i0:i1], x2=g2,
                      strobe=r["strobe"].reshape(n + (-1, 4)), x1_max=r["x1_max"].reshape(n),
                      x1_min=r["x1_min"].reshape(n), n_used=r["n_used"].reshape(n),
                      options=run), r["attractors"]


# ---------------------------------------------------------------- sweep-engine entry point ----

_POINT_DEFAULTS = dict(law="exact", n_transient=150, n_record=4, steps_per_period=200,
                       period_tol=1e-6)


def basin_point(params: dict, x0) -> dict:
    """Steady state reached from one initial condition (pure and picklable, for sweeps).

    Parameters
    ----------
    params : dict
        Model parameters (any :class:`FreePlayParams` field in the units of
        :data:`PARAM_UNITS`, or ``preset``) plus the forcing frequency ``W`` (rad/s, required)
        and optional run options ``law``, ``n_transient``, ``n_record``, ``steps_per_period``,
        ``period_tol`` [m, m/s].
    x0 : sequence
        ``(x1, x2)`` initial positions (m, zero velocities) or a full state
        ``(x1, y1, x2, y2)`` [m, m/s].

    Returns
    -------
    dict with ``period``, ``x1_max``, ``x1_min``, ``strobe`` (list of states) and the inputs.
    """
    p, opts = split_params(params)
    o = dict(_POINT_DEFAULTS)
    unknown = set(opts) - set(o) - {"W"}
    if unknown:
        raise ParameterError(f"unknown option(s) {sorted(unknown)} for basin_point")
    if "W" not in opts:
        raise ParameterError("basin_point needs the forcing frequency 'W' in params")
    o.update(opts)
    x0 = np.asarray(x0, float).ravel()
    if x0.size == 2:
        z0 = np.array([x0[0], 0.0, x0[1], 0.0])
    elif x0.size == 4:
        z0 = x0
    else:
        raise ParameterError(f"x0 must have 2 (x1, x2) or 4 (x1, y1, x2, y2) entries, got {x0.size}")
    r = batch_periodic(p, z0[None], o["W"], law=o["law"], n_transient=o["n_transient"],
                       n_record=o["n_record"], steps_per_period=o["steps_per_period"], nsec_max=0)
    per = int(period_of(r.strobe, o["period_tol"])[0])
    return {"W": float(o["W"]), "x0": z0.tolist(), "law": o["law"], "period": per,
            "x1_max": float(r.x1_max[0]), "x1_min": float(r.x1_min[0]),
            "strobe": r.strobe[0].tolist()}
