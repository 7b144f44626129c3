"""Parameter sweeps from a laptop to a Dask cluster, with resumable result stores.

A *study* is a pure, picklable, module-level function ``f(params: dict) -> dict`` (results are
floats, ints, bools or arrays) together with the names and allowed ranges of its parameters
(:class:`Study`, :class:`Param`). :func:`run_sweep` evaluates a study over a grid (the cartesian
product of named parameter arrays) or over an explicit list of cases, on a local process pool
(default), a ``dask.distributed`` cluster, any :class:`concurrent.futures.Executor`, or
``"serial"``, writing one checked file per case into a result store that a second run resumes.
:func:`load_store` (and :func:`fesub.load`) gathers a store into a :class:`SweepData`:
grid-shaped arrays (NaN where a case is missing or failed), the list of failures, and
``to_xarray()`` with the grid axes as named dimensions and units from the study.

Modules
-------
:mod:`~fesub.sweep.cases`
    Studies and their parameters, the registry :data:`STUDIES`, grids and the list of cases.
:mod:`~fesub.sweep.engine`
    Running: :func:`run_sweep` step by step (resuming, claims, stop signals, progress) and its
    :class:`SweepReport`; :func:`check_sweep`.
:mod:`~fesub.sweep.executors`
    Where cases run (process pool, Dask, any executor, serial): :func:`connect_scheduler`.
:mod:`~fesub.sweep.store`
    The result store: manifest, case files with checksums, gathering, :func:`load_store`.
:mod:`~fesub.sweep.claims`
    Which controller computes which case when several share one store.
:mod:`~fesub.sweep.data`
    :class:`SweepData`, a store gathered into arrays, and the store's summary.
:mod:`~fesub.sweep.studies`
    The catalogue of ready-made studies, registered on import.
"""

from __future__ import annotations

from .cases import (MAX_CASES, STUDIES, Param, Study, case_key, get_study, grid_from_spec,
                    grid_size, make_grid, register_study)
from .data import SweepData
from .engine import SweepReport, check_sweep, run_sweep
from .executors import SchedulerError, connect_scheduler
from .store import SweepError, load_store
from .studies import (beam_on_beam_stability, coulomb_regime, freeplay_basin,
                      freeplay_bifurcation, hbm_forced_response, forced_response_point)

__all__ = [
    "Param", "Study", "STUDIES", "register_study", "get_study", "SweepError", "SchedulerError",
    "SweepReport", "SweepData", "make_grid", "grid_from_spec", "grid_size", "check_sweep", "run_sweep",
    "load_store", "MAX_CASES", "connect_scheduler",
    "case_key", "beam_on_beam_stability", "coulomb_regime", "freeplay_basin",
    "freeplay_bifurcation", "hbm_forced_response", "forced_response_point",
]
