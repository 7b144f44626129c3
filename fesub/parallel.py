"""Thread limits and worker processes, once for every study.

Many small dense solves (harmonic balance, eigenvalue loci) and many independent cases (sweeps,
basins, regime maps) share two needs:

* one BLAS/OpenMP thread per process: a multi-threaded BLAS spends more time synchronising than
  computing on systems of a few hundred unknowns, and thrashes on a shared machine
  (:func:`single_thread_blas`, :func:`set_blas_threads`, :data:`THREAD_VARS`); a harmonic
  balance of thousands of dense unknowns keeps the threads outside a pool's workers (its
  products and factorisations gain from them);
* worker processes that leave Ctrl-C to their parent and die quietly on SIGTERM, so that an
  interrupted study prints one message, not a traceback per worker (:func:`init_worker`), a
  pool that is stopped at once when the parent is interrupted (:func:`worker_pool`,
  :func:`shutdown_now`), and workers that are never forked beside a running thread
  (:func:`process_pool`, :func:`pool_start_method`);
* one large computation beside another on a second core, its arrays written into memory shared
  with the parent (:class:`ForkedCall`, :func:`spare_cores`): the constraint modes of a
  Craig-Bampton reduction while the parent finds the fixed-interface modes;
* large results of a pool's workers sent back through files in memory rather than the pool's
  pipe (:func:`reply_through_file`, :func:`received`, :func:`reply_folder`).
"""

from __future__ import annotations

import contextlib
import ctypes
import mmap
import os
import pickle
import signal
import sys
import tempfile
import time
import traceback

import numpy as np

from .errors import check_count

__all__ = ["THREAD_VARS", "set_blas_threads", "single_thread_blas", "init_worker", "worker_pool",
           "process_pool", "pool_start_method", "openmp_team_running", "shutdown_now", "ForkedCall", "spare_cores",
           "FileReply", "reply_through_file", "received", "reply_folder"]

#: environment variables that cap the threads of BLAS/OpenMP libraries (read when they load)
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
               "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")

_blas: dict = {"libs": None}


def _openblas() -> list:
    """``[(set, get), ...]`` of every OpenBLAS loaded in this process (NumPy and SciPy each
    bundle their own), searched again when a new one has been loaded since.

    A library is loaded by an import (an extension module and what it links), so the search
    (a read of ``/proc/self/maps``: 4 ms in a process holding SciPy, matplotlib and xarray,
    paid at every entry of :func:`single_thread_blas`) is repeated only when modules were
    imported since the last one."""
    if _blas["libs"] is not None and _blas.get("modules") == len(sys.modules):
        return _blas["libs"]
    modules = len(sys.modules)
    try:
        with open("/proc/self/maps") as fh:
            paths = sorted({ln.split()[-1] for ln in fh if "openblas" in ln.lower() and ".so" in ln})
    except OSError:
        return []
    if _blas["libs"] is not None and _blas["paths"] == paths:
        _blas["modules"] = modules
        return _blas["libs"]
    libs = []
    for p in paths:
        try:
            lib = ctypes.CDLL(p)
        except OSError:
            continue
        found = None
        for pre in ("scipy_openblas_", "openblas_", ""):
            for suf in ("64_", ""):
                s = getattr(lib, f"{pre}set_num_threads{suf}", None)
                g = getattr(lib, f"{pre}get_num_threads{suf}", None)
                if s is not None and g is not None and found is None:
                    g.restype = ctypes.c_int
                    found = (s, g)
        if found is not None:
            libs.append(found)
    _blas.update(libs=libs, paths=paths, modules=modules)
    return libs


def set_blas_threads(n: int) -> int | None:
    """Set the live thread count of every loaded OpenBLAS (NumPy's and SciPy's) to ``n``;
    returns the previous count (of the first), or None when no OpenBLAS is loaded.

    Parameters
    ----------
    n : int
        Number of threads, an integer >= 1 (dimensionless count).

    Returns
    -------
    int or None
        Previous thread count of the first loaded OpenBLAS (dimensionless count), or None when
        no OpenBLAS is loaded.
    """
    n = check_count("n (BLAS threads)", n, 1)
    libs = _openblas()
    if not libs:
        return None
    old = int(libs[0][1]())
    for s, _ in libs:
        s(ctypes.c_int(n))
    return old


@contextlib.contextmanager
def single_thread_blas():
    """Context manager: every loaded OpenBLAS uses one thread inside; each one's previous count
    is restored."""
    libs = _openblas()
    old = [int(g()) for _, g in libs]
    for s, _ in libs:
        s(ctypes.c_int(1))
    try:
        yield
    finally:
        for (s, _), n in zip(libs, old):
            s(ctypes.c_int(n))


def _die_with_parent() -> None:
    """Ask Linux to SIGKILL this process when its parent dies, even by SIGKILL (which runs no
    clean-up in the parent): no orphaned workers keep computing. Elsewhere, nothing is done."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        if libc.prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0) == 0 and os.getppid() == 1:
            os._exit(1)  # the parent died before the request took effect
    except (OSError, AttributeError):
        pass


_state = {"worker": False}  # True in a process started by a pool of worker_pool (init_worker)


def spare_cores() -> int:
    """Cores this process may use for its own parallel work (>= 1): the cores it may run on
    (``os.sched_getaffinity`` where there is one), and 1 inside a pool's worker, whose pool
    already keeps every core busy."""
    if _state["worker"]:
        return 1
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _status_bytes(field: str) -> float:
    """A memory field of ``/proc/self/status`` (``VmRSS``, ``VmHWM``) in bytes; 0 where unknown."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return float(line.split()[1]) * 1024  # kB
    except OSError:
        pass
    return 0.0


class ForkedCall:
    """``fn(out)`` run in a forked child process while the caller goes on (POSIX ``fork``).

    The child starts with a copy-on-write image of the parent: it reads whatever the parent built
    (a factorisation, sparse matrices) without pickling, and writes its results into ``out``, a
    dict of float arrays of the given shapes in one anonymous mapping shared with the parent
    (MAP_SHARED). :meth:`result` waits for the child and returns them; :meth:`cancel` kills it.
    A Ctrl-C stops both: the child exits, the parent's ``with`` block cancels.

    Parameters
    ----------
    fn : callable
        ``fn(out)``: fills the arrays of ``out`` (its return value is ignored).
    shapes : dict
        ``{name: shape}`` of the float64 result arrays (any units; zero-filled at start).

    Attributes
    ----------
    out : dict
        The shared arrays (valid in the parent after :meth:`result`).
    child_seconds : float
        Wall time of ``fn`` in the child (s), after :meth:`result`.
    child_max_rss_bytes : int or None
        High-water mark of the child's resident set (bytes; pages it shares with the parent
        included), after :meth:`result`; None where unknown.
    child_growth_bytes : int or None
        How far the child's resident set rose above what it had at the fork (bytes): its own
        allocations and the pages it copied on writing, not the parent's pages it only read
        (Linux: from ``/proc/self/status``; None elsewhere).
    """

    available = hasattr(os, "fork") and hasattr(os, "wait4")

    def __init__(self, fn, shapes: dict):
        if not self.available:
            raise OSError("this platform cannot fork")
        sizes = {k: int(np.prod(v, dtype=np.int64)) for k, v in shapes.items()}
        self._map = mmap.mmap(-1, 8 * (sum(sizes.values()) + 3))  # shared, anonymous, zeroed
        buf = np.frombuffer(self._map, dtype=float)
        self.out, o = {}, 3  # buf[:3]: the child's wall time, resident set at start and peak (bytes)
        for k, shape in shapes.items():
            self.out[k] = buf[o:o + sizes[k]].reshape(shape)
            o += sizes[k]
        self._clock = buf[:3]
        self.child_seconds, self.child_max_rss_bytes, self.child_growth_bytes = 0.0, None, None
        rfd, wfd = os.pipe()
        self._pid = os.fork()
        if self._pid == 0:  # the child: never returns
            code = 1
            try:
                os.close(rfd)
                t0 = time.perf_counter()
                self._clock[1] = _status_bytes("VmRSS")
                fn(self.out)
                self._clock[0] = time.perf_counter() - t0
                self._clock[2] = _status_bytes("VmHWM")
                code = 0
            except BaseException:  # noqa: BLE001 - every failure goes to the parent as text
                with contextlib.suppress(BaseException):
                    os.write(wfd, traceback.format_exc().encode()[-60_000:])
            finally:
                os._exit(code)
        os.close(wfd)
        self._rfd = rfd

    def result(self) -> dict:
        """Wait for the child; its arrays, or RuntimeError with the child's traceback."""
        if self._pid is None:
            raise RuntimeError("the forked call was cancelled")
        chunks = []
        while True:  # read until the child closes its end (it exits), so a long message never blocks
            c = os.read(self._rfd, 65536)
            if not c:
                break
            chunks.append(c)
        _, status, usage = os.wait4(self._pid, 0)
        self._close()
        # Linux reports KiB, macOS bytes
        self.child_max_rss_bytes = int(usage.ru_maxrss) * (1 if sys.platform == "darwin" else 1024)
        if os.waitstatus_to_exitcode(status) != 0:
            msg = b"".join(chunks).decode(errors="replace").strip() or f"exit status {status}"
            raise RuntimeError(f"the forked computation failed:\n{msg}")
        self.child_seconds = float(self._clock[0])
        if self._clock[1] > 0 and self._clock[2] > 0:
            self.child_growth_bytes = int(self._clock[2] - self._clock[1])
        return self.out

    def cancel(self) -> None:
        """Kill the child (if still running) and reap it."""
        if self._pid is None:
            return
        with contextlib.suppress(OSError):
            os.kill(self._pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            os.waitpid(self._pid, 0)
        self._close()

    def _close(self):
        with contextlib.suppress(OSError):
            os.close(self._rfd)
        self._pid = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.cancel()  # nothing left after result(); the child killed on an exception
        return False


def init_worker(env: dict | None = None):
    """Initializer of worker processes: one BLAS/OpenMP thread each (environment for libraries
    still to load, the live OpenBLAS for one already loaded), SIGINT ignored (the parent stops
    the pool), SIGTERM back to its default (a forked worker would inherit the parent's handler),
    and killed with its parent (Linux), even when the parent is killed by SIGKILL.

    Parameters
    ----------
    env : dict, optional
        Environment variables to set first (names to strings, unitless): the parent's
        ``FESUB_*`` settings (backend, instruction set) for a worker that did not start as a copy
        of the parent (:func:`process_pool` passes them).
    """
    _die_with_parent()
    _state["worker"] = True
    os.environ.update(env or {})
    for v in THREAD_VARS:
        os.environ[v] = "1"
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
    except (ValueError, OSError):  # not the main thread of the worker (a thread-based executor)
        pass
    try:
        set_blas_threads(1)
    except Exception:  # noqa: BLE001 - best effort: a worker must start whatever its BLAS
        pass


def _stop_progress_monitors() -> None:
    """Stop tqdm's monitor threads (one per progress-bar class that has made a bar; tqdm starts
    one again with its next bar): housekeeping threads that this process need not run while it
    forks."""
    if "tqdm" not in sys.modules:
        return
    import threading

    try:
        from tqdm._monitor import TMonitor
    except ImportError:
        return
    for th in threading.enumerate():
        if isinstance(th, TMonitor):
            th.exit()


def openmp_team_running() -> bool:
    """True when GNU OpenMP (libgomp) is loaded in this process and the process runs threads that
    Python did not start (Linux; False where ``/proc`` does not tell). CHOLMOD's supernodal
    factorisation keeps a team of libgomp threads after it returns; a forked copy of the process
    sees that team as its own, and its first parallel region waits for threads that do not exist
    in it, for ever."""
    import threading

    try:
        with open("/proc/self/maps") as fh:
            if not any("libgomp" in line for line in fh):
                return False
        return len(os.listdir("/proc/self/task")) > threading.active_count()
    except OSError:
        return False


def pool_start_method() -> str | None:
    """How :func:`process_pool` starts its workers: ``"fork"`` when this process runs no thread
    but its main one (of Python's, and no OpenMP team), ``"forkserver"`` otherwise; None (the
    platform's default) where there is no ``fork``.

    A forked worker is a copy of its parent: it starts at once, with the parent's modules loaded,
    but also with every lock in the state it had at the fork. A lock that another thread of the
    parent held at that instant stays held in the copy for ever, and a worker that needs it waits
    for ever; an OpenMP team of the parent (CHOLMOD's, after a factorisation) is taken by the copy
    for its own and waited for, for ever. So tqdm's monitor threads (which fesub's progress bars
    start) are stopped first; with other Python threads or an OpenMP team still running, the
    workers are forked from a server process started once per process (``forkserver``), which
    runs no thread. It imports NumPy and SciPy once for them, and the Craig-Bampton reduction's
    modules (when this process has loaded them and the server would find this process's fesub,
    not another copy of it on its own path); each worker imports the rest of fesub it needs and,
    like any process started afresh, the main script, whose own work must then sit under
    ``if __name__ == "__main__":``.
    """
    import multiprocessing
    import threading

    methods = multiprocessing.get_all_start_methods()
    if "fork" not in methods:
        return None
    _stop_progress_monitors()
    if threading.active_count() == 1 and not openmp_team_running():
        return "fork"
    return "forkserver" if "forkserver" in methods else "spawn"


#: modules the forkserver imports once for all its workers (those this process has loaded)
_SERVER_PRELOAD = ("numpy", "scipy.linalg", "scipy.sparse", "scipy.sparse.linalg")
#: fesub modules the forkserver also imports (those this process has loaded) when it finds this
#: process's fesub: the Craig-Bampton reduction, whose import took each worker 0.19 s at load 1
#: and up to 0.6 s at load 4, against tasks of about 0.9 s (two 5400-DOF plates). Not the modules
#: that import scikit-sparse at once (the free-play batches, the numeric regime map): the server
#: would load libgomp with its own environment, not the one thread that each worker sets
_SERVER_PRELOAD_FESUB = ("fesub.substructure.reduction",)


def _server_finds_this_fesub() -> bool:
    """True when a forkserver started now would import the fesub package of this process.

    The server is a fresh interpreter (this one's executable, flags, environment and working
    directory) that imports its preload with the working directory first on its path (Python 3.11
    does not apply the caller's path first): in a source checkout, another fesub (without compiled
    kernels). One interpreter is started to ask (40 ms, once per working directory)."""
    cwd = os.getcwd()
    if _state.get("server_fesub", (None,))[0] != cwd:
        import subprocess
        from multiprocessing import spawn, util

        here = sys.modules.get("fesub")
        found = False
        if here is not None and getattr(here, "__file__", None):
            code = "import importlib.util as u; s = u.find_spec('fesub'); print(s.origin if s else '')"
            try:
                cmd = [spawn.get_executable(), *util._args_from_interpreter_flags(), "-c", code]
                out = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=60,
                                     stdin=subprocess.DEVNULL)
                origin = out.stdout.strip()
                found = (out.returncode == 0 and bool(origin)
                         and os.path.realpath(origin) == os.path.realpath(here.__file__))
            except (OSError, subprocess.SubprocessError):
                found = False
        _state["server_fesub"] = (cwd, found)
    return _state["server_fesub"][1]


def _server_preload() -> list:
    """Modules for the forkserver to import (see :func:`pool_start_method`)."""
    mods = [m for m in _SERVER_PRELOAD if m in sys.modules]
    fesub_mods = [m for m in _SERVER_PRELOAD_FESUB if m in sys.modules]
    if fesub_mods and _server_finds_this_fesub():
        mods += fesub_mods
    return mods


def process_pool(jobs: int):
    """A :class:`~concurrent.futures.ProcessPoolExecutor` of ``jobs`` workers set up by
    :func:`init_worker`, started as :func:`pool_start_method` says (the caller shuts it down;
    :func:`worker_pool` does both).

    Parameters
    ----------
    jobs : int
        Number of worker processes (>= 1).
    """
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    jobs = check_count("jobs (worker processes)", jobs, 1)
    method = pool_start_method()
    ctx = multiprocessing.get_context(method)
    if method == "forkserver":
        # taken when the server starts (the first such pool of this process), ignored after
        ctx.set_forkserver_preload(_server_preload())
    env = {k: v for k, v in os.environ.items() if k.startswith("FESUB_")}
    return ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=init_worker, initargs=(env,))


#: results whose arrays hold fewer bytes than this go back through the pool's pipe as they are
FILE_REPLY_BYTES = 1 << 20


class FileReply:
    """What :func:`reply_through_file` sends back in place of a large result: the result pickled
    with its arrays left out (pickle protocol 5) and the file holding the arrays' bytes, one after
    another; :func:`received` turns it back into the result.

    Parameters
    ----------
    data : bytes
        The pickle without the arrays' bytes.
    path : str
        The file of the arrays' bytes.
    sizes : list of int
        Bytes of each array, in the pickle's order (dimensionless counts).
    """

    def __init__(self, data: bytes, path: str, sizes: list):
        self.data, self.path, self.sizes = data, path, sizes


def reply_through_file(folder, fn, *args, **kwargs):
    """A pool's task: ``fn(*args, **kwargs)``, its arrays written to a new file in ``folder`` when
    they hold 1 MB or more (a :class:`FileReply`, for :func:`received`), else the value itself.

    Through the pool's pipe a result is pickled into one buffer, sent in pieces of the pipe's size
    that the parent reads in turn, and copied again when unpickled; two workers' results go one
    after the other. Measured (two workers, 20 MB each at the same instant, load 2.2): 0.15-0.18 s
    until both were in the parent, 0.05 s through files in ``/dev/shm``. A file that cannot be
    written leaves the value to the pipe.

    Parameters
    ----------
    folder : str or None
        Folder of the file (:func:`reply_folder`); None: the value itself, always.
    fn : callable
        The computation, called with the arguments that follow (unitless here: its value passes
        unchanged).
    """
    value = fn(*args, **kwargs)
    if folder is None:
        return value
    buffers = []
    data = pickle.dumps(value, protocol=5, buffer_callback=buffers.append)
    views = [b.raw() for b in buffers]
    if sum(v.nbytes for v in views) < FILE_REPLY_BYTES:
        return value
    path = None
    try:
        fd, path = tempfile.mkstemp(dir=folder, suffix=".reply")
        with os.fdopen(fd, "wb") as fh:
            for v in views:
                fh.write(v)
    except OSError:  # no such folder, or a memory file system full: through the pipe
        with contextlib.suppress(OSError, TypeError):
            os.unlink(path)
        return value
    return FileReply(data, path, [v.nbytes for v in views])


def received(value):
    """The result that :func:`reply_through_file` sent: a :class:`FileReply`'s arrays read into
    this process's memory and its file removed; any other value as it is.

    Parameters
    ----------
    value : FileReply or object
        What the task returned.
    """
    if not isinstance(value, FileReply):
        return value
    arrays = []
    try:
        with open(value.path, "rb") as fh:
            for n in value.sizes:
                a = np.empty(n, np.uint8)
                if fh.readinto(a) != n:
                    raise OSError(f"the reply file {value.path} is shorter than its result")
                arrays.append(a)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(value.path)
    return pickle.loads(value.data, buffers=arrays)


@contextlib.contextmanager
def reply_folder():
    """Context manager: a new private folder for :func:`reply_through_file`, in memory
    (``/dev/shm``) where there is one, else the temporary folder; removed on exit with whatever
    replies were not received (a failed or interrupted call)."""
    base = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    with tempfile.TemporaryDirectory(prefix="fesub-replies-", dir=base, ignore_cleanup_errors=True) as folder:
        yield folder


def shutdown_now(executor) -> None:
    """Stop an executor at once: pending work is cancelled and worker processes are terminated
    (a plain ``shutdown`` would wait for the running tasks to finish).

    Parameters
    ----------
    executor : concurrent.futures.Executor or str or None
        The pool to stop (a process pool's workers are terminated); None or ``"serial"`` (no
        pool) does nothing.
    """
    if executor is None or executor == "serial":
        return
    terminate = getattr(executor, "terminate_workers", None)  # Python >= 3.14
    if terminate is not None:
        terminate()
        return
    procs = list((getattr(executor, "_processes", None) or {}).values())
    # a Ctrl-C that lands while the pool forks a worker (after the fork, before the pool records
    # it) leaves a worker the pool does not know: find it by the call queue it was started with
    queue = getattr(executor, "_call_queue", None)
    if queue is not None:
        import multiprocessing

        procs += [p for p in multiprocessing.active_children()
                  if p not in procs and queue in (getattr(p, "_args", None) or ())]
    manager = getattr(executor, "_executor_manager_thread", None)
    executor.shutdown(wait=False, cancel_futures=True)
    for proc in procs:
        if proc.is_alive():
            proc.terminate()
    for proc in procs:
        proc.join(timeout=5)
        if proc.is_alive():
            proc.kill()
            proc.join(timeout=5)
    # the pool's manager thread reaps the same workers when it sees them die: a worker it has
    # reaped but not yet marked as ended still looks alive, so wait for that thread to finish
    if manager is not None and manager.is_alive():
        manager.join(timeout=5)


@contextlib.contextmanager
def worker_pool(jobs: int | None = None):
    """A local process pool of ``jobs`` workers (``os.cpu_count()`` when None; ``'serial'`` for
    one job), shut down on exit; on an exception or Ctrl-C its workers are terminated at once.

    Parameters
    ----------
    jobs : int or None
        Number of worker processes (>= 1).
    """
    jobs = (os.cpu_count() or 1) if jobs is None else check_count("jobs (worker processes)", jobs, 1)
    if jobs == 1:
        yield "serial"
        return
    ex = process_pool(jobs)
    try:
        yield ex
    except BaseException as exc:
        shutdown_now(ex)
        _explain_broken_pool(exc, ex)
        raise
    ex.shutdown(wait=True)


def _explain_broken_pool(exc: BaseException, executor) -> None:
    """Add to a broken pool's error what a user can do about a worker that ended as it started:
    a worker that is not a copy of its parent imports the main script, whose own work must sit
    under ``if __name__ == "__main__":``."""
    from concurrent.futures.process import BrokenProcessPool

    method = getattr(getattr(executor, "_mp_context", None), "get_start_method", lambda: None)()
    if isinstance(exc, BrokenProcessPool) and method in ("forkserver", "spawn"):
        exc.add_note(f"fesub started these workers by {method!r} (this process runs other threads or "
                     "an OpenMP team; see fesub.parallel.pool_start_method): each imports the main "
                     "script, so a script that starts a pool must do its work under "
                     "'if __name__ == \"__main__\":'")
