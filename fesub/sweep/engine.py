"""Running a sweep: :func:`run_sweep`, step by step, and its :class:`SweepReport`.

:func:`run_sweep` evaluates a study over a grid or a list of cases (see :mod:`fesub.sweep.cases`)
on (see :mod:`fesub.sweep.executors`)

* a local :class:`~concurrent.futures.ProcessPoolExecutor` (default; ``os.cpu_count()`` workers,
  one BLAS/OpenMP thread per worker to avoid oversubscription),
* a ``dask.distributed`` cluster (a scheduler address, a ``LocalCluster`` or a ``Client``), through
  the client's ``concurrent.futures``-compatible executor (``client.get_executor()``),
* any other :class:`concurrent.futures.Executor`, or ``"serial"`` (in-process loop).

Each case's outcome is written into the store (:mod:`fesub.sweep.store`) by the controlling
process as soon as the case finishes; a case that raises is recorded (``status = "failed"``,
with the error and traceback text) and the sweep goes on. Re-running the same sweep on the same
store computes only the cases without a valid file (``retry_failed=True`` also recomputes failed
ones; ``overwrite=True`` starts afresh). Before computing a case the run claims it
(:mod:`fesub.sweep.claims`), so that several controllers can share one store. SIGINT/SIGTERM
stop a run between two case files; what finished is kept.
"""

from __future__ import annotations

import concurrent.futures as cf
from concurrent.futures.process import BrokenProcessPool
import math
import os
import signal
import threading
import time
import traceback
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field

from ..atomic import unlink_quietly
from ..errors import ParameterError
from ..parallel import THREAD_VARS, shutdown_now
from .cases import MAX_CASES, Study, get_study, sweep_cases
from .claims import clean_temp_files, try_claim
from .data import SweepData, store_summary
from .executors import Interrupted, SerialExecutor, execute_case, open_client, open_executor, restore_env
from .store import (SweepError, atomic_write_json, case_record, check_manifest, done_case,
                    gather_store, make_manifest, wipe_store, write_marker)


@dataclass
class SweepReport:
    """What :func:`run_sweep` did.

    Parameters
    ----------
    store : str
        Path of the result store.
    n_cases : int
        Cases in the sweep.
    n_done_before : int
        Cases found done in the store at the start.
    n_computed : int
        Cases computed by this run.
    n_failed : int
        Failures in the store at the end.
    n_missing : int
        Cases without a valid file at the end.
    interrupted : bool
        True when SIGINT or SIGTERM stopped the run (``signal`` says which).
    elapsed_s : float
        Wall time of the run (s).
    failures : list of dict, optional
        One per failed case: index, params, error, traceback.
    problems : list of dict, optional
        What was found wrong in the store, each ``{"file", "index", "problem"}``: damaged case
        files, computed again, files of no case of this sweep, a rewritten manifest.
    signal : int or None, optional
        Number of the signal that interrupted the run.
    n_busy : int, optional
        Cases left to a process that holds their claim and whose life cannot be checked from
        here.
    data : SweepData or None, optional
        The store gathered at the end (as :func:`load_store` gives it, with the study's SI
        units).
    """

    store: str
    n_cases: int
    n_done_before: int
    n_computed: int
    n_failed: int
    n_missing: int
    interrupted: bool
    elapsed_s: float
    failures: list = field(default_factory=list)
    problems: list = field(default_factory=list)
    signal: int | None = None
    n_busy: int = 0
    data: SweepData | None = field(default=None, repr=False)

    @property
    def complete(self) -> bool:
        return self.n_missing == 0


def check_sweep(study, *, grid=None, cases=None, fixed=None, max_cases: int | None = MAX_CASES,
                store=None) -> int:
    """Validate a sweep without running or storing anything; return its number of cases.

    Raises the same :class:`~fesub.errors.ParameterError` as :func:`run_sweep` would (unknown
    study or parameter, value out of range, duplicate cases, more than ``max_cases`` cases), so
    that a caller can check a configuration before it starts a cluster. With ``store``, a store
    that holds another sweep is refused (:class:`SweepError`), as :func:`run_sweep` would.

    Parameters
    ----------
    study : str or Study
        The study (a registered name or a :class:`Study`).
    grid : dict, optional
        Grid spec ``{name: values}`` (see :func:`grid_from_spec`; values in the units of the
        study's parameters); give either ``grid`` or ``cases``.
    cases : list of dict, optional
        Explicit list of cases, each a parameter dict (same units).
    fixed : dict, optional
        Parameters common to every case (same units).
    max_cases : int or None, optional
        Largest number of cases allowed (dimensionless count); default :data:`MAX_CASES`.
    store : str or os.PathLike, optional
        Result store the sweep would write to; one that holds another sweep is refused.

    Returns
    -------
    int
        Number of cases of the sweep.
    """
    st = get_study(study)
    full, _, shape, body = sweep_cases(st, grid, cases, fixed, max_cases)
    if store is not None:
        store = os.fspath(store)
        if os.path.exists(store) and not os.path.isdir(store):
            raise SweepError(f"store {store!r} exists and is not a directory")
        if os.path.isdir(store):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                check_manifest(store, make_manifest(st, body, len(full), shape))
    return len(full)


# --- one run, step by step -----------------------------------------------------------------------


def _check_run_options(executor, scheduler, cluster, workers, max_in_flight, mp_context) -> None:
    """Refuse bad executor options (ParameterError) before the store is touched."""
    given = sum(x is not None for x in (executor, scheduler, cluster))
    if given > 1:
        raise ParameterError("give at most one of executor, scheduler and cluster")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ParameterError(f"workers must be an integer >= 1, got {workers!r}")
    if max_in_flight is not None and (isinstance(max_in_flight, bool) or not isinstance(max_in_flight, int)
                                      or max_in_flight < 1):
        raise ParameterError(f"max_in_flight must be an integer >= 1, got {max_in_flight!r}")
    if executor is not None and executor != "serial" and not isinstance(executor, cf.Executor):
        raise ParameterError(f"executor must be a concurrent.futures.Executor or 'serial', got {executor!r}")
    import multiprocessing as mp

    if mp_context not in mp.get_all_start_methods():
        raise ParameterError(f"mp_context must be one of {mp.get_all_start_methods()}, got {mp_context!r}")


def _prepare_store(store: str, manifest: dict, *, manifest_ok: bool, overwrite: bool) -> None:
    """Make the store's folders (emptied first with ``overwrite``), remove what hard-killed
    writers left, and write the manifest and the result marker unless the manifest is in place."""
    if overwrite and os.path.isdir(store):
        wipe_store(store)
    cases_dir = os.path.join(store, "cases")
    os.makedirs(cases_dir, exist_ok=True)
    os.makedirs(os.path.join(store, "claims"), exist_ok=True)
    clean_temp_files(cases_dir)
    if not manifest_ok:
        atomic_write_json(os.path.join(store, "manifest.json"), manifest)
        write_marker(store, store_summary(manifest, None))


class _Run:
    """One run of a sweep into a store: the cases it holds the claim of, the cases in flight,
    the cases another process holds, and the stop request.

    SIGINT/SIGTERM (see :meth:`catch_stop_signals`) raise :class:`Interrupted` at once, except
    inside a critical section (:meth:`critical`: a case file being written, a claim being made
    or given back): then the stop waits until the section is done.
    """

    def __init__(self, study: Study, store: str, full: list, keys: list, retry_failed: bool):
        self.study, self.store, self.full, self.keys = study, store, full, keys
        self.retry_failed = retry_failed
        self.cases_dir = os.path.join(store, "cases")
        self.claims_dir = os.path.join(store, "claims")
        self.pending: dict = {}  # future -> case
        self.mine: set = set()  # cases this run holds the claim of
        self.waiting: dict = {}  # case -> claim state, for cases another process holds
        self.stop_requested = None  # the signal number of a stop request
        self.writing = 0  # depth of the critical sections open (see :meth:`critical`)
        self.n_computed = 0
        self.bar = None

    def case_path(self, i: int) -> str:
        return os.path.join(self.cases_dir, f"case-{self.keys[i]}.json")

    def is_done(self, i: int, retry_failed: bool, problems: list | None = None) -> bool:
        """Whether case ``i`` has a valid file to keep (see :func:`done_case`)."""
        return done_case(self.case_path(i), self.study.name, len(self.full), self.keys, i,
                          retry_failed, problems)

    @contextmanager
    def critical(self):
        """A block that a stop signal does not cut: the signal is noted and acted on after it
        (a claim file made but not yet recorded as this run's, or a case file half in place,
        would otherwise outlive the run)."""
        self.writing += 1
        try:
            yield
        finally:
            self.writing -= 1

    def release(self, i: int) -> None:
        with self.critical():
            if i in self.mine:
                unlink_quietly(os.path.join(self.claims_dir, self.keys[i]))
                self.mine.discard(i)

    def take(self, i: int) -> bool:
        """Claim case ``i`` for this run; False when it is done or another process has it."""
        with self.critical():
            state = try_claim(os.path.join(self.claims_dir, self.keys[i]))
            if state == "claimed":
                self.mine.add(i)
        if self.stop_requested is not None:  # arrived while claiming: the claim is released
            raise Interrupted(self.stop_requested)  # on the way out, with the others
        if state != "claimed":
            self.waiting[i] = state
            return False
        self.waiting.pop(i, None)
        # finished by another process between the scan and the claim: nothing to do
        if self.is_done(i, self.retry_failed):
            self.release(i)
            return False
        return True

    def submit(self, executor, i: int) -> None:
        self.pending[executor.submit(execute_case, self.study.func, self.full[i])] = i

    def record(self, fut) -> None:
        """Write the record of a finished future and forget the future (one critical section)."""
        i = self.pending[fut]
        try:
            rec = fut.result()
        except BrokenProcessPool as exc:
            raise SweepError(f"the worker pool broke ({exc}); finished cases are saved in "
                             f"{self.store!r}: run the same sweep again to resume") from None
        except cf.CancelledError:
            del self.pending[fut]  # not run: stays missing
            self.release(i)
            return
        except Exception as exc:  # noqa: BLE001 - e.g. a Dask worker lost
            rec = {"status": "failed", "error": f"{type(exc).__name__}: {exc}",
                   "traceback": "".join(traceback.format_exception(exc)), "elapsed_s": math.nan}
        rec = case_record(i, self.full[i], rec)
        with self.critical():
            atomic_write_json(self.case_path(i), rec)
            del self.pending[fut]
            self.release(i)  # after the file is in place: a process that claims next sees it done
            self.n_computed += 1
        if self.bar is not None:
            self.bar.update(1)

    def submit_todo(self, executor, todo, window: int) -> bool:
        """Claim and submit cases of ``todo`` (an iterator) up to ``window`` in flight; True
        once ``todo`` is exhausted."""
        while len(self.pending) < window:
            i = next(todo, None)
            if i is None:
                return True
            if self.take(i):
                self.submit(executor, i)
        return False

    def retake_waiting(self, executor, window: int) -> None:
        """Cases another process of this machine was computing: done by now (forgotten), or
        free again when that process stopped (claimed and submitted)."""
        for i in [j for j, s in self.waiting.items() if s == "live"]:
            if len(self.pending) >= window:
                break
            if self.is_done(i, False):
                self.waiting.pop(i)
            elif self.take(i):
                self.submit(executor, i)

    def compute(self, executor, todo: list, window: int) -> None:
        """Compute the cases of ``todo`` with at most ``window`` in flight, writing each case
        file as its case finishes, until every case is done or held by another process."""
        it = iter(todo)
        exhausted = False
        while True:
            if not exhausted:
                exhausted = self.submit_todo(executor, it, window)
            if exhausted and len(self.pending) < window:
                self.retake_waiting(executor, window)
            if not self.pending:
                if exhausted and any(s == "live" for s in self.waiting.values()):
                    time.sleep(0.2)
                    continue
                break
            done, _ = cf.wait(list(self.pending), timeout=0.5, return_when=cf.FIRST_COMPLETED)
            for fut in done:
                self.record(fut)
                if self.stop_requested is not None:  # arrived during the write
                    raise Interrupted(self.stop_requested)

    def catch_stop_signals(self) -> dict:
        """Make SIGINT/SIGTERM stop this run (from the main thread only); returns the handlers
        to put back."""
        old = {}
        if threading.current_thread() is not threading.main_thread():
            return old

        def handler(signum, frame):
            self.stop_requested = signum
            if not self.writing:
                raise Interrupted(signum)

        for sig in (signal.SIGTERM, signal.SIGINT):
            try:
                old[sig] = signal.signal(sig, handler)
            except (ValueError, OSError):  # pragma: no cover
                pass
        return old

    def keep_finished(self) -> None:
        """After a stop: write the cases that finished while it was handled (best effort)."""
        for fut in [f for f in self.pending if f.done() and not f.cancelled()]:
            try:
                self.record(fut)
            except Exception:  # noqa: BLE001 - best effort; the case stays missing
                pass

    def shut_down(self, executor, own_executor: bool, interrupted: bool) -> None:
        """Stop what is in flight and give back the claims of the cases not finished."""
        if own_executor:
            # our own pool: its manager thread cancels what is queued (a future cancelled from
            # here while queued would make it fail when the terminated workers break the pool)
            if interrupted:  # do not wait for running cases: stop the workers
                shutdown_now(executor)
            else:
                executor.shutdown(wait=True, cancel_futures=True)
        else:
            for fut in self.pending:
                fut.cancel()
        for i in list(self.mine):  # cases this run did not finish: free for the next run
            self.release(i)

    def report(self, t_start: float, n_before: int, interrupted: bool, problems: list) -> SweepReport:
        """Gather the store, refresh its marker and say what the run did."""
        data = gather_store(self.store, self.study, full=self.full, keys=self.keys)
        fixed_now = {p["file"] for p in problems}
        problems = problems + [p for p in data.problems if p["file"] not in fixed_now]
        write_marker(self.store, data.summary())
        busy = [i for i, s in self.waiting.items() if s != "claimed" and data.status.flat[i] == 0]
        return SweepReport(self.store, len(self.full), n_before, self.n_computed,
                           len(data.failures), data.n_missing, interrupted,
                           time.perf_counter() - t_start, data.failures, problems,
                           int(self.stop_requested) if interrupted else None, len(busy), data)


def _compute_cases(run: _Run, todo: list, n_before: int, executor, client, workers, max_in_flight,
                   mp_context: str, progress: bool) -> bool:
    """Compute the cases ``todo`` of ``run`` on the chosen executor, with a progress bar and
    SIGINT/SIGTERM caught; everything this started is stopped and put back on the way out.
    Returns whether a stop signal ended the run."""
    env_saved = {v: os.environ.get(v) for v in THREAD_VARS}
    executor, own_executor, n_workers = open_executor(executor, client, workers, mp_context,
                                                       bool(todo))
    # a serial run computes at submit time: one case in flight, so that a stop loses nothing
    window = 1 if isinstance(executor, SerialExecutor) else (max_in_flight or 4 * n_workers)
    if progress:
        from tqdm.auto import tqdm

        run.bar = tqdm(total=len(run.full), initial=n_before, desc=f"sweep {run.study.name}",
                       unit="case")
    old_handlers = run.catch_stop_signals()
    interrupted = False
    try:
        run.compute(executor, todo, window)
    except (Interrupted, KeyboardInterrupt) as exc:
        interrupted = True
        if run.stop_requested is None:
            run.stop_requested = exc.args[0] if isinstance(exc, Interrupted) and exc.args \
                else signal.SIGINT
    finally:
        for sig, h in old_handlers.items():  # a second signal now acts as usual
            signal.signal(sig, h)
        if interrupted:  # keep the cases that finished while the stop was handled
            run.keep_finished()
        run.shut_down(executor, own_executor, interrupted)
        restore_env(env_saved)
        if run.bar is not None:
            run.bar.close()
    return interrupted


def run_sweep(study, store, *, grid=None, cases=None, fixed=None, executor=None, scheduler=None,
              cluster=None, workers=None, connect_timeout: float = 5.0, retry_failed: bool = False,
              max_in_flight: int | None = None, progress: bool = True, mp_context: str = "spawn",
              overwrite: bool = False, max_cases: int | None = MAX_CASES) -> SweepReport:
    """Evaluate a study over a grid or a list of cases, writing one file per case into ``store``.

    Parameters
    ----------
    study : str or Study
        Registered study name (see :data:`STUDIES`).
    store : path
        Result-store directory (created if needed; resumed if it holds the same sweep).
    grid : dict, optional
        Parameter name -> 1-D values (or ``{start, stop, num}``); the sweep is their cartesian
        product, first name = first (slowest) axis.
    cases : list of dict, optional
        Explicit cases instead of a grid.
    fixed : dict, optional
        Parameters shared by every case.
    executor : concurrent.futures.Executor or "serial", optional
        Where to run the cases (not shut down here). Default: a local process pool.
    scheduler : str, optional
        Address of a Dask scheduler (``tcp://host:8786``); reached within ``connect_timeout`` s
        or :class:`SchedulerError` is raised before any work.
    cluster : distributed.LocalCluster or distributed.Client, optional
        A Dask cluster/client to run on.
    workers : int, optional
        Local pool size (default ``os.cpu_count()``).
    connect_timeout : float
        Time allowed to reach the scheduler (s).
    retry_failed : bool
        Also recompute cases recorded as failed.
    max_in_flight : int, optional
        Cases submitted ahead (default 4 per worker); bounds memory and the work lost on a stop.
    progress : bool
        tqdm progress bar.
    mp_context : str
        Start method of the local pool (``"spawn"`` is safe with threads; ``"fork"`` starts faster).
    overwrite : bool
        Start the store afresh: its case files, claims and manifest are removed first (nothing
        else in the directory is touched).
    max_cases : int or None
        Largest number of cases accepted (counted before any case is built); None: no limit.

    Returns
    -------
    SweepReport
    """
    t_start = time.perf_counter()
    st = get_study(study)
    full, keys, shape, body = sweep_cases(st, grid, cases, fixed, max_cases)
    store = os.fspath(store)
    manifest = make_manifest(st, body, len(full), shape)
    # every argument is checked before the store is touched or a worker started
    _check_run_options(executor, scheduler, cluster, workers, max_in_flight, mp_context)
    if os.path.exists(store) and not os.path.isdir(store):
        raise SweepError(f"store {store!r} exists and is not a directory")
    problems: list = []
    manifest_ok = False
    if os.path.isdir(store) and not overwrite:
        manifest_ok, problems = check_manifest(store, manifest)
    client, own_client = None, False
    if scheduler is not None or cluster is not None:
        client, own_client = open_client(scheduler, cluster, connect_timeout)
    try:
        _prepare_store(store, manifest, manifest_ok=manifest_ok, overwrite=overwrite)
        run = _Run(st, store, full, keys, retry_failed)
        todo = [i for i in range(len(full)) if not run.is_done(i, retry_failed, problems)]
        n_before = len(full) - len(todo)
        interrupted = _compute_cases(run, todo, n_before, executor, client, workers,
                                     max_in_flight, mp_context, progress)
    finally:
        if own_client:
            client.close()
    return run.report(t_start, n_before, interrupted, problems)
