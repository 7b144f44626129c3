"""Thread limits and worker pools shared by every study (fesub.parallel)."""

from __future__ import annotations

import os

import numpy as np  # noqa: F401 - loads NumPy's OpenBLAS, which the limits act on
import pytest

from fesub import parallel
from fesub.errors import ParameterError


def _live():
    """Thread count of every loaded OpenBLAS (NumPy's and SciPy's), or None when none is."""
    import scipy.linalg  # noqa: F401 - loads SciPy's own OpenBLAS too

    libs = parallel._openblas()
    return [int(g()) for _, g in libs] if libs else None


def test_single_thread_blas_sets_one_and_restores():
    before = _live()
    if before is None:
        pytest.skip("no OpenBLAS loaded in this process")
    old = parallel.set_blas_threads(2)
    try:
        n = len(before)  # NumPy's and SciPy's OpenBLAS: all of them are set
        assert _live() == [2] * n and old == before[0]
        with parallel.single_thread_blas():
            assert _live() == [1] * n
        assert _live() == [2] * n
    finally:
        for (s, _), k in zip(parallel._openblas(), before):
            s(k)
    with pytest.raises(ParameterError):
        parallel.set_blas_threads(0)


def test_openblas_search_repeated_only_after_an_import(monkeypatch):
    """The loaded libraries are searched again (a read of /proc/self/maps) only when modules
    were imported since the last search: an OpenBLAS comes with an import."""
    import builtins
    import sys
    import types

    parallel._openblas()
    reads = []
    real_open = builtins.open

    def counting_open(path, *a, **k):
        if str(path) == "/proc/self/maps":
            reads.append(path)
        return real_open(path, *a, **k)

    monkeypatch.setattr(builtins, "open", counting_open)
    first = parallel._openblas()
    assert reads == [] and parallel._openblas() is first
    monkeypatch.setitem(sys.modules, "fesub_test_new_module", types.ModuleType("x"))
    assert parallel._openblas() == first and len(reads) == 1


def _worker_state(_):
    return ({v: os.environ.get(v) for v in parallel.THREAD_VARS}, _live())


def test_pool_workers_run_one_thread_and_serial_for_one_job():
    with parallel.worker_pool(1) as ex:
        assert ex == "serial"
    with parallel.worker_pool(2) as ex:
        env, live = ex.submit(_worker_state, 0).result(timeout=120)
    assert set(env.values()) == {"1"}
    assert live is None or set(live) == {1}
    for bad in (0, -1, 1.5, "2"):
        with pytest.raises(ParameterError):
            with parallel.worker_pool(bad):
                pass


def test_workers_die_with_their_parent_even_after_sigkill(subprocess_env, tmp_path):
    """A parent killed by SIGKILL runs no clean-up: its pool workers must not stay as orphans."""
    import signal
    import subprocess
    import sys
    import time

    code = (
        "import os, time\n"
        "from fesub import parallel\n"
        "def pid(_):\n    return os.getpid()\n"
        "with parallel.worker_pool(2) as ex:\n"
        "    pids = sorted({f.result() for f in [ex.submit(pid, i) for i in range(8)]})\n"
        "    print(*pids, flush=True)\n"
        "    time.sleep(600)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                            env=subprocess_env)
    pids = [int(p) for p in proc.stdout.readline().split()]
    assert pids, "no worker answered"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    deadline = time.monotonic() + 20
    alive = pids
    while alive and time.monotonic() < deadline:
        time.sleep(0.1)
        alive = [p for p in pids if _running(p)]
    assert alive == []


#: held most of the time by a thread of the parent in the test below; a worker that is a copy of
#: the parent made while the thread held it would find it held for ever
_HELD = __import__("threading").Lock()


def _worker_setting(_):
    free = _HELD.acquire(timeout=2.0)  # s: the thread holds it for 1 ms at a time
    if free:
        _HELD.release()
    return free, os.environ.get("FESUB_TEST_SETTING"), os.environ.get("OMP_NUM_THREADS"), parallel._state["worker"]


def test_workers_are_not_forked_beside_a_running_thread(monkeypatch):
    """A worker forked while another thread of the parent holds a lock keeps that lock held for
    ever: with a thread running, the pool starts its workers from a server process instead, and
    they still get the parent's fesub settings and the workers' set-up."""
    import threading

    if parallel.pool_start_method() is None:
        pytest.skip("no fork here: the platform's own start method")
    monkeypatch.setenv("FESUB_TEST_SETTING", "from the parent")
    stop = threading.Event()

    def hold():  # a thread that holds a lock most of the time, as a progress bar's monitor may
        while not stop.is_set():
            with _HELD:
                stop.wait(0.001)

    th = threading.Thread(target=hold, daemon=True)
    th.start()
    try:
        assert parallel.pool_start_method() in ("forkserver", "spawn")
        with parallel.worker_pool(2) as ex:
            got = [f.result(timeout=120) for f in [ex.submit(_worker_setting, i) for i in range(4)]]
    finally:
        stop.set()
        th.join()
    assert got == [(True, "from the parent", "1", True)] * 4
    if threading.active_count() == 1 and not parallel.openmp_team_running():
        assert parallel.pool_start_method() == "fork"


def test_a_progress_bar_monitor_does_not_keep_the_pool_from_forking():
    """tqdm's monitor thread (started by a progress bar) is stopped before the workers are forked,
    so a study with progress bars keeps the fast start; the next bar starts it again."""
    import threading

    from tqdm import tqdm
    from tqdm._monitor import TMonitor

    if parallel.pool_start_method() is None:
        pytest.skip("no fork here: the platform's own start method")
    others = [t for t in threading.enumerate() if t is not threading.main_thread() and not isinstance(t, TMonitor)]
    if others or parallel.openmp_team_running():
        pytest.skip(f"threads other than tqdm's run in this process: {others or 'an OpenMP team'}")
    with open(os.devnull, "w") as sink:
        for _ in tqdm(range(2), file=sink):
            pass
        assert tqdm.monitor is not None and tqdm.monitor.is_alive()
        assert parallel.pool_start_method() == "fork"
        assert not any(isinstance(t, TMonitor) for t in threading.enumerate())
        for _ in tqdm(range(2), file=sink):
            pass
        assert tqdm.monitor.is_alive()


def test_a_pool_after_a_cholmod_factorisation_starts_and_agrees(subprocess_env, tmp_path):
    """CHOLMOD's supernodal factorisation leaves an OpenMP (libgomp) team running; a worker forked
    after it that factorises again waits for that team for ever. The pool then starts its workers
    from a server instead, and they give the numbers of the same factorisation in this process."""
    import subprocess
    import sys

    pytest.importorskip("sksparse.cholmod")
    code = (
        "import os, threading, numpy as np, scipy.sparse as sp\n"
        "from fesub import parallel\n"
        "from fesub.fe import factorize\n"
        "def solve(K):\n"
        "    return factorize(K, method='cholmod').solve(np.ones(K.shape[0]))\n"
        "if __name__ == '__main__':\n"
        "    n = 20\n"  # 8000 unknowns: supernodes large enough for CHOLMOD's parallel loop
        "    A = sp.diags([-1.0, 2.001, -1.0], [-1, 0, 1], shape=(n, n))\n"
        "    K = sp.kronsum(sp.kronsum(A, A), A).tocsc()\n"
        "    x = solve(K)\n"
        "    team = len(os.listdir('/proc/self/task')) > threading.active_count()\n"
        "    print('TEAM', team, parallel.openmp_team_running(), parallel.pool_start_method(), flush=True)\n"
        "    with parallel.worker_pool(2) as ex:\n"
        "        xs = [f.result(timeout=120) for f in [ex.submit(solve, K) for _ in range(2)]]\n"
        "    print('SAME', all(np.array_equal(x, y) for y in xs), flush=True)\n")
    script = tmp_path / "study.py"  # a script of the user's: its workers import it
    script.write_text(code)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=subprocess_env,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    team = "TEAM True" in proc.stdout
    # without a team (a CHOLMOD built without OpenMP) the fast start stays
    assert f"TEAM {team} {team} {'forkserver' if team else 'fork'}" in proc.stdout, proc.stdout
    assert "SAME True" in proc.stdout, proc.stdout


#: a study whose pool starts from the server (a thread runs): what its worker holds at its first task
_PRELOAD_SCRIPT = (
    "import threading\n"
    "if __name__ == '__main__':\n"
    "    import fesub, fesub.substructure.reduction\n"
    "    from fesub import parallel\n"
    "    stop = threading.Event()\n"
    "    threading.Thread(target=stop.wait, daemon=True).start()\n"
    "    print('METHOD', parallel.pool_start_method(), flush=True)\n"
    "    ask = \"('fesub.substructure.reduction' in __import__('sys').modules, __import__('fesub').__file__)\"\n"
    "    with parallel.worker_pool(2) as ex:\n"
    "        loaded, where = ex.submit(eval, ask).result(timeout=120)\n"
    "    stop.set()\n"
    "    print('GOT', loaded, where == fesub.__file__, flush=True)\n")


def test_the_server_preloads_the_reduction_only_from_this_process_fesub(subprocess_env, tmp_path):
    """Workers started from the server find the Craig-Bampton reduction already imported when the
    server finds the caller's fesub; from a folder holding another package named fesub (a source
    checkout without kernels, first on the server's path) the server imports none of it, and the
    workers import the caller's fesub."""
    import multiprocessing
    import subprocess
    import sys

    if "forkserver" not in multiprocessing.get_all_start_methods():
        pytest.skip("no forkserver here")
    script = tmp_path / "study.py"
    script.write_text(_PRELOAD_SCRIPT)
    plain = tmp_path / "plain"
    other = tmp_path / "checkout"
    (other / "fesub" / "substructure").mkdir(parents=True)
    for name in ("__init__.py", "substructure/__init__.py", "substructure/reduction.py"):
        (other / "fesub" / name).write_text("")  # imports, but is not the fesub under test
    plain.mkdir()
    env = {k: v for k, v in subprocess_env.items() if k != "PYTHONSAFEPATH"}  # the working directory first
    for cwd, expected in ((plain, "GOT True True"), (other, "GOT False True")):
        proc = subprocess.run([sys.executable, str(script)], check=False, capture_output=True, text=True, env=env,
                              cwd=cwd, timeout=300)
        assert proc.returncode == 0, proc.stderr
        assert "METHOD forkserver" in proc.stdout, proc.stdout
        assert expected in proc.stdout, (cwd, proc.stdout)


def _large_result(seed):
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    a = rng.standard_normal((700, 300))  # 1.7 MB: more than FILE_REPLY_BYTES
    return {"c": a, "f": np.asfortranarray(a[:, :7]), "strided": a[::3, ::2], "int": np.arange(5),
            "sparse": sp.random(200, 200, density=0.05, random_state=seed, format="csr"), "seed": seed}


def _same(got, ref):
    assert set(got) == set(ref) and got["seed"] == ref["seed"]
    for k in ("c", "f", "strided", "int"):
        assert got[k].dtype == ref[k].dtype and np.array_equal(got[k], ref[k]), k
        assert got[k].flags.writeable and got[k].flags.aligned, k
    assert got["f"].flags.f_contiguous and (got["sparse"] != ref["sparse"]).nnz == 0


def test_a_large_result_comes_back_through_a_file_bit_for_bit(tmp_path):
    """A result of 1.7 MB of arrays comes back from a pool's workers through files, equal to the
    value computed here bit for bit (any layout, a sparse matrix), writable, its file removed; a
    small one, or one without a folder, comes back as it is."""
    with parallel.reply_folder() as folder:
        with parallel.worker_pool(2) as ex:
            futures = [ex.submit(parallel.reply_through_file, folder, _large_result, seed) for seed in (1, 2)]
            replies = [f.result(timeout=120) for f in futures]
        assert all(isinstance(r, parallel.FileReply) for r in replies) and len(os.listdir(folder)) == 2
        for seed, r in zip((1, 2), replies):
            _same(parallel.received(r), _large_result(seed))
        assert os.listdir(folder) == []
        small = parallel.reply_through_file(folder, dict, x=np.ones(3))
        assert not isinstance(small, parallel.FileReply) and np.array_equal(small["x"], np.ones(3))
    assert not os.path.exists(folder)  # removed on exit
    assert isinstance(parallel.reply_through_file(None, _large_result, 3), dict)
    # a folder that cannot take the file (gone, or a memory file system full): the value itself
    direct = parallel.reply_through_file(str(tmp_path / "missing"), _large_result, 4)
    _same(parallel.received(direct), _large_result(4))


def _running(pid):
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split()[2] != "Z"  # a zombie has exited
    except OSError:
        return False


# ---------------------------------------------------------------- one computation forked beside another
pytestmark_fork = pytest.mark.skipif(not parallel.ForkedCall.available, reason="no fork here")


def _fill(out):
    out["a"][...] = np.arange(6.0).reshape(2, 3) ** 2
    out["b"][...] = os.getpid()


@pytestmark_fork
def test_forked_call_returns_the_child_arrays():
    with parallel.ForkedCall(_fill, {"a": (2, 3), "b": (1,)}) as task:
        parent_value = sum(range(1000))  # the parent goes on meanwhile
        out = task.result()
    np.testing.assert_array_equal(out["a"], np.arange(6.0).reshape(2, 3) ** 2)
    assert out["b"][0] != os.getpid()  # computed in another process
    assert parent_value == 499500 and task.child_seconds >= 0
    assert task.child_max_rss_bytes > 0
    if os.path.exists("/proc/self/status"):
        assert 0 <= task.child_growth_bytes < task.child_max_rss_bytes


def _fail(out):
    raise ValueError("a planted failure in the child")


@pytestmark_fork
def test_a_failure_in_the_child_is_raised_with_its_traceback():
    task = parallel.ForkedCall(_fail, {"x": (1,)})
    with pytest.raises(RuntimeError, match="a planted failure in the child"):
        task.result()


def _sleep(out):
    import time

    time.sleep(60)


@pytestmark_fork
def test_an_exception_in_the_parent_kills_the_child():
    import time

    t0 = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        with parallel.ForkedCall(_sleep, {"x": (1,)}) as task:
            pid = task._pid
            raise KeyboardInterrupt  # as a Ctrl-C in the parent's own work
    assert time.perf_counter() - t0 < 10  # killed, not waited for
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # reaped: no such process
    with pytest.raises(RuntimeError, match="cancelled"):
        task.result()


def test_spare_cores_is_one_in_a_worker(monkeypatch):
    assert parallel.spare_cores() >= 1
    monkeypatch.setitem(parallel._state, "worker", True)
    assert parallel.spare_cores() == 1
