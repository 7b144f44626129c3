"""Where the cases of a sweep run: a local process pool, a Dask cluster, any executor, or serial.

Every case runs through :func:`execute_case`, which never raises: a failing case comes back as a
record of its error, and warnings are kept in the record rather than printed by every worker.
A stop request (SIGINT/SIGTERM, :class:`Interrupted`) is the one thing that goes through.
"""

from __future__ import annotations

import concurrent.futures as cf
import os
import time
import traceback
import warnings

from ..errors import FesubError, ParameterError, check_positive
from ..parallel import THREAD_VARS, init_worker
from .cases import jsonable


class SchedulerError(FesubError, ConnectionError):
    """The Dask scheduler could not be reached (or dask.distributed is missing)."""


class Interrupted(BaseException):
    """SIGINT/SIGTERM inside :func:`run_sweep` (a BaseException, so that no ``except Exception``
    in a study or in :func:`execute_case` records it as a failed case)."""


#: warnings of one case kept in its record (the first ones, each message once)
MAX_CASE_WARNINGS = 5


def execute_case(func, params):
    """Run one case in a worker; never raises (failures come back as data).

    Warnings the study emits are recorded in the case record (``warnings``: the first
    :data:`MAX_CASE_WARNINGS` distinct messages) instead of being printed by every worker for
    every case.
    """
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            res = func(params)
            if not isinstance(res, dict):
                raise TypeError(f"a study must return a dict, got {type(res).__name__}")
            out = {"status": "ok", "result": jsonable(res), "elapsed_s": time.perf_counter() - t0}
        except BaseException as exc:  # noqa: BLE001 - a failing case must not stop the sweep
            if isinstance(exc, (KeyboardInterrupt, SystemExit, Interrupted)):
                raise
            out = {"status": "failed", "error": f"{type(exc).__name__}: {exc}",
                   "traceback": traceback.format_exc(), "elapsed_s": time.perf_counter() - t0}
    seen = list(dict.fromkeys(f"{w.category.__name__}: {w.message}" for w in caught))
    if seen:
        out["warnings"] = seen[:MAX_CASE_WARNINGS]
    return out


class SerialExecutor(cf.Executor):
    """Runs each submitted call at once, in this process (a stop request propagates at once)."""

    def submit(self, fn, *args, **kwargs):
        """Call ``fn`` with the arguments now; a done future with its value, or with the exception
        it raised (an interrupt or a stop request is raised at once)."""
        f = cf.Future()
        try:
            f.set_result(fn(*args, **kwargs))
        except (KeyboardInterrupt, SystemExit, Interrupted):
            raise
        except BaseException as exc:  # noqa: BLE001
            f.set_exception(exc)
        return f


def connect_scheduler(address: str, connect_timeout: float = 5.0):
    """A ``distributed.Client`` connected to the Dask scheduler at ``address`` (``tcp://host:8786``).

    Raises :class:`~fesub.errors.ParameterError` for a malformed address or timeout and
    :class:`SchedulerError` when the scheduler does not answer within ``connect_timeout`` (s) or
    dask.distributed is missing. The caller closes the client; :func:`run_sweep` takes it as
    ``cluster``.

    Parameters
    ----------
    address : str
        Address of the scheduler, ``"tcp://host:port"``.
    connect_timeout : float, optional
        Time allowed for the connection (s); default 5.

    Returns
    -------
    distributed.Client
        The connected client.
    """
    return open_client(address, None, connect_timeout)[0]


#: tries of a connection that fails otherwise than by a refusal or a timeout (a handshake broken
#: off: an empty AssertionError from the client, the scheduler up and its worker registered, was
#: seen once in a test run on a loaded machine, and not in the ten runs of the same test after it)
CONNECT_TRIES = 3


def _client(Client, target, timeout: float):
    """A ``distributed.Client`` of ``target``, tried again (up to :data:`CONNECT_TRIES` times, each
    with what is left of ``timeout`` s, at least 1 s) when a try fails by something else than an
    ``OSError`` (refused, timed out: the client has already tried for the whole timeout) or a
    ``ValueError`` (a malformed address)."""
    deadline = time.monotonic() + timeout
    tries = 0
    while True:
        tries += 1
        try:
            # never the process's default client: one that failed to connect would stay the
            # default, and every later dask computation of the process (xarray's writes among
            # them) would try to reach it
            return Client(target, timeout=max(1.0, deadline - time.monotonic()), set_as_default=False)
        except (OSError, ValueError):
            raise
        except Exception:  # noqa: BLE001 - broken off during the handshake: once more
            if tries >= CONNECT_TRIES or time.monotonic() >= deadline:
                raise
            time.sleep(0.1)


def open_client(scheduler, cluster, connect_timeout):
    try:
        from distributed import Client
    except ImportError as exc:  # pragma: no cover
        raise SchedulerError(f"dask.distributed is needed for scheduler/cluster sweeps: {exc}") from None
    timeout = check_positive("connect_timeout (s)", connect_timeout)
    if cluster is not None:
        if isinstance(cluster, Client):
            return cluster, False
        try:
            return _client(Client, cluster, timeout), True
        except Exception as exc:  # noqa: BLE001 - whatever the transport raises
            raise SchedulerError(f"cannot connect to the cluster {cluster!r}: "
                                 f"{type(exc).__name__}: {exc}") from exc
    if not isinstance(scheduler, str) or not scheduler.strip():
        raise ParameterError(f"scheduler must be an address such as 'tcp://host:8786', got {scheduler!r}")
    try:
        return _client(Client, scheduler, timeout), True
    except ValueError as exc:  # malformed address: unknown scheme, no port
        raise ParameterError(f"bad scheduler address {scheduler!r}: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - refused, timed out, or something else answered
        raise SchedulerError(f"cannot reach the Dask scheduler at {scheduler!r} within "
                             f"{timeout:g} s: {type(exc).__name__}: {exc}") from exc


def open_executor(executor, client, workers, mp_context: str, has_work: bool):
    """``(executor, own, n_workers)``: where the cases run, whether this run made it (and shuts
    it down) and how many cases it runs at once.

    The default is a local process pool of ``workers`` (``os.cpu_count()``) spawned workers with
    one BLAS/OpenMP thread each (set in the environment, which the caller restores, and by
    :func:`fesub.parallel.init_worker` in each worker, which also leaves the signals to the
    parent); none is started when there is nothing to compute.
    """
    if executor == "serial":
        return SerialExecutor(), False, 1
    if client is not None:
        return client.get_executor(pure=False), False, max(1, sum(client.nthreads().values()))
    if executor is not None:
        return executor, False, workers or getattr(executor, "_max_workers", None) or os.cpu_count() or 1
    n_workers = workers or os.cpu_count() or 1
    if not has_work:
        return None, False, n_workers
    import multiprocessing as mp

    for v in THREAD_VARS:  # spawned workers inherit the environment (NumPy loads first)
        os.environ[v] = "1"
    pool = cf.ProcessPoolExecutor(n_workers, mp_context=mp.get_context(mp_context),
                                  initializer=init_worker)
    return pool, True, n_workers


def restore_env(saved: dict) -> None:
    """Put the environment variables of ``saved`` (name -> value, None: unset) back."""
    for v, old in saved.items():
        if old is None:
            os.environ.pop(v, None)
        else:
            os.environ[v] = old
