"""Parameter sweeps (fesub.sweep): local pool vs Dask, stop and resume, atomic result files, early
errors, the loader, and each study wired as a sweep against a direct call of what it wraps.

A test study, ``probe``, lives in a module written to a temporary directory (so that spawned pool
workers and a child ``fesub sweep`` process import it through ``FESUB_SWEEP_PLUGINS``). It logs
every computation it performs (one line per case: run tag, x, pid), which is how the tests count
what was computed.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import fesub
from fesub import sweep as sw
from fesub.errors import FesubError, ParameterError

ROOT = Path(fesub.__file__).resolve().parent.parent

PROBE_MODULE = "fesub_sweep_probe"
PROBE_SOURCE = '''
"""Test study for the sweep tests: y = x**2 + offset, with a log of every computation."""
import os
import signal
import time
import warnings

from fesub.sweep import Param, Study, register_study


def probe(params):
    x = params["x"]
    if params["warn"]:
        warnings.warn(f"{params['warn']} at x = {x}")
        warnings.warn(f"{params['warn']} at x = {x}")  # the same message twice: recorded once
    if params["delay"]:
        time.sleep(params["delay"])
    if os.environ.get("PROBE_KILL_AT") and x == float(os.environ["PROBE_KILL_AT"]):
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the handler stops the sweep from inside this call
    if params["log"]:
        line = f"{os.environ.get('PROBE_RUN', '-')} {x!r} {os.getpid()}\\n"
        fd = os.open(params["log"], os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        try:
            os.write(fd, line.encode())  # one O_APPEND write per line: whole lines only
        finally:
            os.close(fd)
    if params["fail_at"] is not None and x == params["fail_at"]:
        raise RuntimeError(f"probe fails at x = {x}")
    return {"y": x * x + params["offset"], "vec": [x, 2.0 * x, 3.0 * x], "tag": f"x={x:g}"}


register_study(Study(
    "probe", probe,
    (Param("x", -1000.0, 1000.0),
     Param("offset", -10.0, 10.0, required=False, default=0.0),
     Param("delay", 0.0, 5.0, required=False, default=0.0),
     Param("fail_at", kind="any", required=False, default=None),
     Param("log", kind="any", required=False, default=None),
     Param("warn", kind="any", required=False, default=None)),
    doc="test study", primary="y"), replace=True)


def _openblas_live_threads():
    """Thread count the loaded OpenBLAS will use (its own get_num_threads), -1 if none is loaded."""
    import ctypes

    try:
        with open("/proc/self/maps") as fh:
            libs = sorted({ln.split()[-1] for ln in fh if "openblas" in ln.lower() and ".so" in ln})
    except OSError:
        return -1
    for path in libs:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for name in ("scipy_openblas_get_num_threads64_", "scipy_openblas_get_num_threads",
                     "openblas_get_num_threads64_", "openblas_get_num_threads"):
            fn = getattr(lib, name, None)
            if fn is not None:
                fn.restype = ctypes.c_int
                return int(fn())
    return -1


def threads(params):
    """The thread limits this process runs under: environment, live OpenBLAS, threadpoolctl."""
    import numpy  # noqa: F401 - a study's worker has NumPy (and its BLAS) loaded

    out = {v: int(os.environ.get(v, "-1"))
           for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
    out["openblas_live"] = _openblas_live_threads()
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        out["pools"] = []
    else:
        out["pools"] = [int(d["num_threads"]) for d in threadpool_info()]
    out["pid"] = os.getpid()
    return out


register_study(Study("probe_threads", threads, (Param("x", 0.0, 100.0),), doc="thread limits"),
               replace=True)
'''


@pytest.fixture(scope="session")
def probe_dir(tmp_path_factory):
    """Directory holding the probe study module, importable here and in spawned workers."""
    d = tmp_path_factory.mktemp("probe")
    (d / f"{PROBE_MODULE}.py").write_text(PROBE_SOURCE)
    sys.path.insert(0, str(d))
    __import__(PROBE_MODULE)
    yield d
    sys.path.remove(str(d))


def _env(probe_dir, run="-"):
    """Environment of a child process: fesub and the probe importable, one BLAS thread."""
    path = os.pathsep.join(p for p in (str(ROOT), str(probe_dir), os.environ.get("PYTHONPATH", "")) if p)
    return dict(os.environ, PYTHONPATH=path, FESUB_SWEEP_PLUGINS=PROBE_MODULE, PROBE_RUN=run,
                OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MPLBACKEND="Agg")


def _log(path) -> list[tuple[str, float]]:
    """(run tag, x) of every computation logged by the probe."""
    if not os.path.exists(path):
        return []
    return [(ln.split()[0], float(ln.split()[1])) for ln in Path(path).read_text().splitlines()]


def _case_files(store):
    d = Path(store) / "cases"
    return sorted(p for p in d.iterdir() if p.name.startswith("case-")) if d.is_dir() else []


def _stray_files(store):
    """Temporary files left in the store (a file being written is a ``.tmp-*`` file)."""
    return [p for p in Path(store).rglob("*") if p.is_file() and ".tmp" in p.name]


def _free_port() -> int:
    """A local TCP port with no listener (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _write(path, text):
    Path(path).write_text(text)
    return str(path)


def _extras_required() -> bool:
    """CI (which installs the test extras, dask included) or FESUB_REQUIRE_EXT is set."""
    return any(os.environ.get(v, "").strip().lower() not in ("", "0", "false")
               for v in ("CI", "FESUB_REQUIRE_EXT"))


def _require_distributed():
    """dask.distributed, or a skip where it is optional; a failure where it must be installed."""
    if _extras_required():
        try:
            import distributed
        except ImportError as exc:
            pytest.fail(f"dask.distributed must be installed when CI or FESUB_REQUIRE_EXT is set "
                        f"(pip install -e '.[test]'): {exc}")
        return distributed
    return pytest.importorskip("distributed")


@pytest.mark.parametrize("env, outcome", [({"CI": "true"}, "fail"), ({"FESUB_REQUIRE_EXT": "1"}, "fail"),
                                          ({}, "skip"), ({"CI": "false", "FESUB_REQUIRE_EXT": "0"}, "skip")])
def test_missing_distributed_fails_where_it_is_required(monkeypatch, env, outcome):
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("FESUB_REQUIRE_EXT", raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setitem(sys.modules, "distributed", None)  # any import of it now fails
    expected = pytest.fail.Exception if outcome == "fail" else pytest.skip.Exception
    with pytest.raises(expected):
        _require_distributed()


# --------------------------------------------------------------------------------------------
# 1. local process pool and Dask LocalCluster give the same results
# --------------------------------------------------------------------------------------------

# a small beam-on-beam map with the study's default Ritz basis (120 modes, 20 eigenvalues): a
# non-square grid (2 x 3) so that a swapped axis cannot pass, stable cells (mu = 0 is damped; at
# s = 0.03 m mu = 0.8 stays stable) and flutter cells (mu = 0.8 at s = 0.0135 m and 0.055 m)
BEAM_GRID = {"mu": [0.0, 0.8], "s": [0.0135, 0.03, 0.055]}
BEAM_FIXED = {"n_basis": 120, "n_eig": 20}
# a Coulomb-chain map whose cells cover the three regimes (continuous, stick-slip, stuck)
COULOMB_GRID = {"r1": [0.45, 1.5], "beta": [0.1, 0.6, 1.2]}
COULOMB_FIXED = {"gamma": [1.0, 1.0], "kappa": [1.0, 1.0], "contact": "wall:0", "load": 0,
                 "amplitudes": True}

# The beam model is rebuilt in every worker process; its substructure modes come from ARPACK with a
# fixed start vector, so the executors agree bit for bit. A direct computation in this process may
# take another path through the eigensolvers (round-off, measured 6e-13 relative before the start
# vector was fixed); 1e-9 is far below any physical meaning of max Re(lambda) (1/s).
BEAM_RTOL = 1e-9


@pytest.fixture(scope="module")
def beam_pool_store(tmp_path_factory):
    """The small beam map computed on the local process pool (2 spawned workers)."""
    store = tmp_path_factory.mktemp("pool") / "beam"
    rep = sw.run_sweep("beam_on_beam_stability", store, grid=BEAM_GRID, fixed=BEAM_FIXED,
                       workers=2, progress=False)
    assert rep.complete and rep.n_failed == 0 and rep.n_computed == 6
    return store


def _direct_max_real(mu, s):
    """max Re(lambda) (1/s) from complex_eigenvalues on a freshly built model (no sweep code)."""
    from fesub.contact.analyses.eigen import complex_eigenvalues
    from fesub.models import beam_on_beam as bb

    system = _direct_max_real.__dict__.get("system")
    if system is None:
        system = _direct_max_real.system = bb.contact_system(bb.build())
    lam = complex_eigenvalues(system, s, mu, BEAM_FIXED["n_eig"], n_basis=BEAM_FIXED["n_basis"])
    return float(lam.real.max())


def test_pool_and_dask_local_cluster_give_identical_results(beam_pool_store, tmp_path):
    distributed = _require_distributed()
    pool_c = sw.run_sweep("coulomb_regime", tmp_path / "pool-coulomb", grid=COULOMB_GRID,
                          fixed=COULOMB_FIXED, workers=2, progress=False)
    # processes=True: real worker processes, as on a cluster (2 workers x 1 thread; they start
    # in ~1-2 s here)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        dask_c = sw.run_sweep("coulomb_regime", tmp_path / "dask-coulomb", grid=COULOMB_GRID,
                              fixed=COULOMB_FIXED, cluster=cluster, progress=False)
        dask_b = sw.run_sweep("beam_on_beam_stability", tmp_path / "dask-beam", grid=BEAM_GRID,
                              fixed=BEAM_FIXED, cluster=cluster, progress=False)
    for rep in (pool_c, dask_c, dask_b):
        assert rep.complete and rep.n_failed == 0 and rep.n_computed == 6

    # a deterministic study: bit-for-bit the same store whichever executor wrote it
    a, b = _case_files(tmp_path / "pool-coulomb"), _case_files(tmp_path / "dask-coulomb")
    assert [f.name for f in a] == [f.name for f in b] and len(a) == 6
    for fa, fb in zip(a, b):
        ra, rb = json.loads(fa.read_text()), json.loads(fb.read_text())
        assert (ra["params"], ra["index"], ra["result"]) == (rb["params"], rb["index"], rb["result"])
    pool, dask = sw.load_store(tmp_path / "pool-coulomb"), sw.load_store(tmp_path / "dask-coulomb")
    for name in ("regime_code", "analytic_regime_code", "periods", "stops_per_period", "Z"):
        np.testing.assert_array_equal(pool.fields[name], dask.fields[name])
    assert set(pool.fields["regime_code"].ravel()) == {0.0, 1.0, 2.0}

    # the beam map: same cells, same values (bit for bit)
    pool, dask = sw.load_store(beam_pool_store), sw.load_store(tmp_path / "dask-beam")
    names = [f.name for f in _case_files(tmp_path / "dask-beam")]
    assert [f.name for f in _case_files(beam_pool_store)] == names
    np.testing.assert_array_equal(pool.status, dask.status)
    for name in ("max_real", "freq_hz"):
        np.testing.assert_array_equal(dask.fields[name], pool.fields[name])
    stable = np.array([[True, True, True], [False, True, False]])
    np.testing.assert_array_equal(pool.fields["max_real"] < 0, stable)
    np.testing.assert_array_equal(dask.fields["max_real"] < 0, stable)


# --------------------------------------------------------------------------------------------
# the loader and the beam-on-beam study against a direct computation
# --------------------------------------------------------------------------------------------


def test_load_store_shape_and_values_match_direct_computation(beam_pool_store, tmp_path):
    data = sw.load_store(beam_pool_store)
    assert data.study == "beam_on_beam_stability"
    assert list(data.axes) == ["mu", "s"] and data.shape == (2, 3)
    np.testing.assert_array_equal(data.axes["mu"], BEAM_GRID["mu"])
    np.testing.assert_array_equal(data.axes["s"], BEAM_GRID["s"])
    assert data.fields["max_real"].shape == (2, 3) and data.status.shape == (2, 3)
    assert (data.status == 1).all() and data.failures == [] and data.n_missing == 0
    for a, mu in enumerate(BEAM_GRID["mu"]):
        for b, s in enumerate(BEAM_GRID["s"]):
            # another build of the model: round-off only (see BEAM_RTOL)
            np.testing.assert_allclose(data.fields["max_real"][a, b], _direct_max_real(mu, s),
                                       rtol=BEAM_RTOL)
            c = data.cases[a * 3 + b]  # flat C order, first axis slowest
            assert (c["mu"], c["s"], c["n_basis"], c["n_eig"]) == (mu, s, 120, 20)
    # independent physics: without friction the damped system is stable everywhere
    assert (data.fields["max_real"][0] < 0).all()

    # a missing case is NaN with status 0; the gathered file round-trips
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(beam_pool_store, copy)
    gone = copy / "cases" / f"case-{sw.case_key(data.study, data.cases[4])}.json"
    gone.unlink()
    part = sw.load_store(copy)
    assert part.status[1, 1] == 0 and part.n_missing == 1
    assert np.isnan(part.fields["max_real"][1, 1])
    np.testing.assert_array_equal(np.delete(part.fields["max_real"].ravel(), 4),
                                  np.delete(data.fields["max_real"].ravel(), 4))
    nc = part.save(tmp_path / "gathered")
    assert nc.name == "gathered.nc"
    back = fesub.load(nc)
    assert isinstance(back, sw.SweepData)
    _assert_same_data(back, part)
    ds = back.to_xarray()
    assert ds["max_real"].dims == ("mu", "s") and ds["max_real"].attrs["units"] == "1/s"
    assert ds["s"].attrs["units"] == "m" and ds["freq_hz"].attrs["units"] == "Hz"
    assert np.isnan(ds["max_real"].sel(mu=0.8, s=0.03).item())  # the missing case
    assert not _stray_files(tmp_path)


def _assert_same_data(a, b):
    """Two SweepData hold the same values (arrays bit for bit, NaN where NaN)."""
    assert type(a) is type(b)
    assert (a.study, a.shape, a.failures, a.cases, a.manifest, a.units, a.dims, a.primary,
            a.problems, a.categories, a.warnings) == (
        b.study, b.shape, b.failures, b.cases, b.manifest, b.units, b.dims, b.primary,
        b.problems, b.categories, b.warnings)
    assert list(a.axes) == list(b.axes) and list(a.fields) == list(b.fields)
    assert list(a.other) == list(b.other)
    for k in a.axes:
        np.testing.assert_array_equal(a.axes[k], b.axes[k], strict=True)
    for k in a.fields:
        np.testing.assert_array_equal(a.fields[k], b.fields[k], strict=True)
    for k in a.other:
        assert a.other[k].shape == b.other[k].shape and a.other[k].tolist() == b.other[k].tolist()
    np.testing.assert_array_equal(a.status, b.status, strict=True)


def test_load_store_array_and_object_fields_failures(probe_dir, tmp_path):
    xs = [-1.0, 0.5, 2.0, 3.0]
    rep = sw.run_sweep("probe", tmp_path / "s", grid={"x": xs, "offset": [0.0, 1.5]},
                       fixed={"fail_at": 2.0}, executor="serial", progress=False)
    assert rep.n_cases == 8 and rep.n_failed == 2 and rep.n_missing == 0
    d = sw.load_store(tmp_path / "s")
    assert d.shape == (4, 2) and d.fields["vec"].shape == (4, 2, 3)
    x, off = np.meshgrid(xs, [0.0, 1.5], indexing="ij")
    expected = np.where(x == 2.0, np.nan, x * x + off)
    np.testing.assert_array_equal(d.fields["y"], expected)
    np.testing.assert_array_equal(d.fields["vec"][3, 1], [3.0, 6.0, 9.0])
    assert np.isnan(d.fields["vec"][2]).all()
    assert d.other["tag"][1, 0] == "x=0.5" and d.other["tag"][2, 1] is None
    np.testing.assert_array_equal(d.status[2], [-1, -1])
    assert [f["index"] for f in d.failures] == [4, 5]
    assert "RuntimeError: probe fails at x = 2" in d.failures[0]["traceback"]
    # array, text and failed cells survive the result file exactly; the store itself reopens
    _assert_same_data(fesub.load(d.save(tmp_path / "gathered")), d)
    _assert_same_data(fesub.load(tmp_path / "s"), d)
    ds = d.to_xarray()
    assert ds["vec"].dims == ("x", "offset", "vec_dim0")
    assert all("units" in ds[v].attrs for v in list(ds.data_vars) + list(ds.coords))


# --------------------------------------------------------------------------------------------
# 2. stop and resume; atomic files; a failing case
# --------------------------------------------------------------------------------------------


def _sweep_cmd(cfg, *extra):
    out = Path(cfg).parent / "store"
    return [sys.executable, "-m", "fesub.cli", "sweep", str(cfg), "--out", str(out),
            "--no-figures", *extra]


def test_sigterm_half_way_then_resume_computes_only_the_missing_cases(probe_dir, tmp_path):
    n = 20
    log = tmp_path / "calls.log"
    cfg = _write(tmp_path / "cfg.toml", f"""
study = "probe"
[grid]
x = {{start = 0, stop = {n - 1}, num = {n}}}
[fixed]
delay = 0.25
fail_at = 3.0
log = "{log}"
""")
    store = tmp_path / "store"
    proc = subprocess.Popen(_sweep_cmd(cfg, "-j", "2"), env=_env(probe_dir, "1"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    t0 = time.monotonic()
    while len(_case_files(store)) < 5:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() - t0 < 60, "the sweep did not start"
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, (out, err)  # SIGTERM (fesub.cli.common.EXIT_SIGTERM)
    assert "interrupted by SIGTERM" in err and "Traceback" not in err

    first = {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in _case_files(store)}
    assert 5 <= len(first) < n, "the stop must land half-way for this test to mean anything"
    assert not _stray_files(store)
    for p in _case_files(store):  # every stored file is complete
        rec = json.loads(p.read_text())
        assert rec["status"] in ("ok", "failed")
        assert p.name == f"case-{sw.case_key('probe', rec['params'])}.json"
    half = sw.load_store(store)
    done_x = {c["x"] for c, st in zip(half.cases, half.status.ravel()) if st != 0}
    missing_x = set(map(float, range(n))) - done_x
    assert len(done_x) == len(first)

    proc2 = subprocess.run(_sweep_cmd(cfg, "-j", "2"), env=_env(probe_dir, "2"),
                           capture_output=True, text=True, timeout=120)
    assert proc2.returncode == 1, proc2.stderr  # 1: one case failed, everything else done
    second = [x for run, x in _log(log) if run == "2"]
    assert sorted(second) == sorted(missing_x)  # each missing case once, nothing else
    assert f"{len(first)} already in" in proc2.stdout and f"{len(missing_x)} computed" in proc2.stdout
    for p in _case_files(store):
        if p.name in first:  # untouched by the second run
            assert (p.stat().st_mtime_ns, p.read_bytes()) == first[p.name]
    # the failing case is reported with its traceback; the other 19 cases completed
    assert "RuntimeError: probe fails at x = 3" in proc2.stderr and "Traceback" in proc2.stderr
    assert "in probe" in proc2.stderr
    full = sw.load_store(store)
    assert full.n_missing == 0 and (full.status == -1).sum() == 1 and full.status[3] == -1
    ok = full.status == 1
    np.testing.assert_array_equal(full.fields["y"][ok], full.axes["x"][ok] ** 2)
    assert not _stray_files(store)
    assert (store / "gathered.nc").is_file()

    # a third run has nothing left to do (the failure is kept); --retry-failed redoes only it
    proc3 = subprocess.run(_sweep_cmd(cfg, "--retry-failed", "-j", "1"), env=_env(probe_dir, "3"),
                           capture_output=True, text=True, timeout=120)
    assert proc3.returncode == 1 and [x for run, x in _log(log) if run == "3"] == [3.0]
    proc4 = subprocess.run(_sweep_cmd(cfg), env=_env(probe_dir, "4"), capture_output=True, text=True,
                           timeout=120)
    assert proc4.returncode == 1 and "0 computed" in proc4.stdout
    assert [x for run, x in _log(log) if run == "4"] == []


def test_sigterm_during_serial_case_stops_without_recording_it(probe_dir, tmp_path, monkeypatch):
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signal handlers need the main thread")
    log = str(tmp_path / "calls.log")
    kw = dict(grid={"x": np.arange(8.0)}, fixed={"log": log}, executor="serial", progress=False)
    handler = signal.getsignal(signal.SIGTERM)
    monkeypatch.setenv("PROBE_KILL_AT", "4.0")
    monkeypatch.setenv("PROBE_RUN", "1")
    rep = sw.run_sweep("probe", tmp_path / "s", **kw)
    # the case running when SIGTERM came is not a failure: it is simply not done
    assert rep.interrupted and rep.n_computed == 4 and rep.n_failed == 0 and rep.n_missing == 4
    assert _log(log) == [("1", 0.0), ("1", 1.0), ("1", 2.0), ("1", 3.0)]
    assert signal.getsignal(signal.SIGTERM) is handler  # restored
    monkeypatch.delenv("PROBE_KILL_AT")
    monkeypatch.setenv("PROBE_RUN", "2")
    rep = sw.run_sweep("probe", tmp_path / "s", **kw)
    assert rep.complete and not rep.interrupted and (rep.n_done_before, rep.n_computed) == (4, 4)
    assert [x for run, x in _log(log) if run == "2"] == [4.0, 5.0, 6.0, 7.0]


def test_stop_during_a_write_completes_that_file(probe_dir, tmp_path, monkeypatch):
    """SIGTERM while a case file is being written: that file is finished, then the sweep stops."""
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signal handlers need the main thread")
    real_replace = os.replace
    fired = []

    def replace_with_signal(src, dst, *a, **k):
        if os.path.basename(dst).startswith("case-") and not fired:
            fired.append(dst)
            os.kill(os.getpid(), signal.SIGTERM)  # handled right here, before the rename
        return real_replace(src, dst, *a, **k)

    monkeypatch.setattr(os, "replace", replace_with_signal)
    rep = sw.run_sweep("probe", tmp_path / "s", grid={"x": np.arange(5.0)}, executor="serial",
                       progress=False)
    assert rep.interrupted and rep.n_computed == 1 and rep.n_missing == 4
    files = _case_files(tmp_path / "s")
    assert [str(f) for f in files] == fired  # the interrupted write went through ...
    assert json.loads(files[0].read_text())["result"]["y"] == 0.0  # ... complete
    assert not _stray_files(tmp_path / "s")


def test_stop_while_claiming_leaves_no_claim_behind(probe_dir, tmp_path, monkeypatch):
    """SIGINT between making a claim file and recording it as this run's: the stopped run still
    leaves an empty claims folder, and the next run finds every unfinished case free."""
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signal handlers need the main thread")
    from fesub.sweep import engine

    real, fired = engine.try_claim, []

    def claim_then_signal(path):
        state = real(path)
        if state == "claimed" and len(fired) < 1 and len(os.listdir(os.path.dirname(path))) == 1:
            fired.append(path)
            os.kill(os.getpid(), signal.SIGINT)  # handled here: the file exists, unrecorded
        return state

    monkeypatch.setattr(engine, "try_claim", claim_then_signal)
    grid = {"x": np.arange(5.0)}
    rep = sw.run_sweep("probe", tmp_path / "s", grid=grid, executor="serial", progress=False)
    assert fired and rep.interrupted and rep.n_computed == 0 and rep.n_missing == 5
    assert not list((tmp_path / "s" / "claims").iterdir())
    monkeypatch.undo()
    rep = sw.run_sweep("probe", tmp_path / "s", grid=grid, executor="serial", progress=False)
    assert rep.complete and rep.n_computed == 5


def test_atomic_write_leaves_old_file_or_nothing(tmp_path, monkeypatch):
    target = tmp_path / "case-x.json"
    sw.store.atomic_write_json(str(target), {"a": 1})
    assert json.loads(target.read_text()) == {"a": 1}
    assert oct(target.stat().st_mode & 0o777) == oct(0o666 & ~_umask())  # not mkstemp's 0600

    def broken_dump(obj, fh, **kw):
        fh.write('{"a": 2, "trunc')  # half of a file, then the writer dies
        raise OSError("disk full")

    monkeypatch.setattr(sw.store.json, "dump", broken_dump)
    with pytest.raises(OSError, match="disk full"):
        sw.store.atomic_write_json(str(target), {"a": 2})
    monkeypatch.undo()
    assert json.loads(target.read_text()) == {"a": 1}  # old content intact
    assert sorted(p.name for p in tmp_path.iterdir()) == ["case-x.json"]  # no temp file left


def _umask() -> int:
    m = os.umask(0)
    os.umask(m)
    return m


def test_resume_after_hard_kill_cleans_temp_files_and_recomputes_damaged_case(probe_dir, tmp_path):
    log = str(tmp_path / "calls.log")
    kw = dict(grid={"x": np.arange(4.0)}, fixed={"log": log}, executor="serial", progress=False)
    store = tmp_path / "s"
    sw.run_sweep("probe", store, **kw)
    files = _case_files(store)
    # what a SIGKILL or a power cut could leave: a temp file, and (written by something else) a
    # truncated case file
    (store / "cases" / ".tmp-123-abc-case-0.json").write_text('{"status": "o')
    damaged = files[2]
    rec = json.loads(damaged.read_text())
    damaged.write_text(damaged.read_text()[:20])
    with pytest.warns(UserWarning, match="unreadable"):
        status = sw.load_store(store).status  # counted as missing, not a crash
    assert list(np.flatnonzero(status == 0)) == [rec["index"]]
    rep = sw.run_sweep("probe", store, **kw)
    assert (rep.n_done_before, rep.n_computed) == (3, 1)
    assert len(_log(log)) == 5 and _log(log)[-1][1] == rec["params"]["x"]
    again = json.loads(damaged.read_text())
    # the same record, rewritten whole (its time and so its checksum differ)
    assert again == {**rec, "elapsed_s": again["elapsed_s"], "checksum": again["checksum"]}
    assert not _stray_files(store)
    assert (sw.load_store(store).status == 1).all()


def test_failing_case_is_reported_with_traceback_and_the_rest_completes(probe_dir, tmp_path):
    rep = sw.run_sweep("probe", tmp_path / "s", grid={"x": np.arange(6.0)}, fixed={"fail_at": 2.0},
                       workers=2, progress=False)
    assert rep.complete and rep.n_computed == 6 and rep.n_failed == 1
    (f,) = rep.failures
    assert f["params"]["x"] == 2.0 and f["error"] == "RuntimeError: probe fails at x = 2.0"
    assert f["traceback"].startswith("Traceback") and 'raise RuntimeError(f"probe fails' in f["traceback"]
    d = sw.load_store(tmp_path / "s")
    np.testing.assert_array_equal(d.status, [1, 1, -1, 1, 1, 1])
    np.testing.assert_array_equal(d.fields["y"], [0.0, 1.0, np.nan, 9.0, 16.0, 25.0])


def test_store_refuses_a_different_sweep(probe_dir, tmp_path):
    sw.run_sweep("probe", tmp_path / "s", grid={"x": [1.0, 2.0]}, executor="serial", progress=False)
    with pytest.raises(sw.SweepError, match="different sweep"):
        sw.run_sweep("probe", tmp_path / "s", grid={"x": [1.0, 3.0]}, executor="serial", progress=False)


# --------------------------------------------------------------------------------------------
# each study wired as a sweep, checked against a direct call of what it wraps
# --------------------------------------------------------------------------------------------


def test_coulomb_regime_sweep_matches_simulate_chain_and_closed_form(tmp_path):
    from fesub.coulomb import ChainModel
    from fesub.coulomb.analytic import steady_state
    from fesub.coulomb.integrate import simulate_chain

    sw.run_sweep("coulomb_regime", tmp_path / "s", grid=COULOMB_GRID, fixed=COULOMB_FIXED,
                 executor="serial", progress=False)
    d = sw.load_store(tmp_path / "s")
    assert d.shape == (2, 3) and (d.status == 1).all()
    model = ChainModel([1.0, 1.0], [1.0, 1.0])
    for a, r1 in enumerate(COULOMB_GRID["r1"]):
        for b, beta in enumerate(COULOMB_GRID["beta"]):
            res = simulate_chain(model, "wall:0", 0, r1, beta, 1.0)
            assert d.fields["regime_code"][a, b] == int(res.regime)
            assert d.fields["periods"][a, b] == res.periods
            assert d.fields["stops_per_period"][a, b] == res.stops_per_period
            # same deterministic integration: equal up to the last bit
            assert d.fields["Z"][a, b] == float(res.Z)
            ss = steady_state(model, "wall:0", 0, r1, beta, amplitude="monoharmonic")
            assert d.fields["analytic_regime_code"][a, b] == int(ss.regime[0, 0])
    # independent: time integration and closed form classify every cell alike, and the cells
    # cover all three regimes
    np.testing.assert_array_equal(d.fields["regime_code"], d.fields["analytic_regime_code"])
    assert set(d.fields["regime_code"].ravel()) == {0.0, 1.0, 2.0}


def test_freeplay_basin_sweep_matches_basins(tmp_path):
    from fesub.nonsmooth import basins

    x1, x2 = [-0.5, 0.5], [-0.5, 0.0, 0.5]
    sw.run_sweep("freeplay_basin", tmp_path / "s", grid={"x1": x1, "x2": x2},
                 fixed={"W": 1.15, "n_transient": 150}, executor="serial", progress=False)
    d = sw.load_store(tmp_path / "s")
    ref = basins(None, 1.15, x1_range=(-0.5, 0.5), x2_range=(-0.5, 0.5), shape=(2, 3),
                 n_transient=150, executor="serial", progress=False)
    np.testing.assert_array_equal(ref.x1, x1)
    np.testing.assert_array_equal(ref.x2, x2)
    np.testing.assert_array_equal(d.fields["period"], ref.period)
    # one trajectory here, a batch of six there: same integrator, round-off at most
    np.testing.assert_allclose(d.fields["x1_max"], ref.x1_max, rtol=1e-10)
    np.testing.assert_allclose(d.fields["x1_min"], ref.x1_min, rtol=1e-10)
    assert np.unique(np.round(ref.x1_max, 6)).size >= 2  # two attractors in this window


def test_freeplay_bifurcation_sweep_matches_bifurcation_diagram(tmp_path):
    from fesub.nonsmooth import bifurcation_diagram

    W = [1.2, 1.3]
    opts = {"n_transient": 20, "n_points": 10}
    sw.run_sweep("freeplay_bifurcation", tmp_path / "s", grid={"W": W}, fixed=opts, executor="serial",
                 progress=False)
    d = sw.load_store(tmp_path / "s")
    ref = bifurcation_diagram(None, W, executor="serial", progress=False, **opts)
    n_ic = ref.ics.shape[0]
    assert d.fields["x1_max"].shape == (2, n_ic)
    assert d.to_xarray()["x1_max"].dims == ("W", "initial_condition")
    np.testing.assert_allclose(d.fields["x1_max"], ref.x1_max, rtol=1e-10)  # round-off at most
    np.testing.assert_allclose(d.fields["x1_min"], ref.x1_min, rtol=1e-10)
    np.testing.assert_array_equal(d.fields["period"], ref.period)
    # section points: a float array when every list has the same length, else gathered as objects
    got = d.fields.get("section_x1", d.other.get("section_x1"))
    for k in range(2):
        for i in range(n_ic):
            sec = ref.section[k, i]
            assert np.isfinite(sec).sum() > 0
            np.testing.assert_allclose(got[k][i], sec[np.isfinite(sec)], rtol=1e-10)


def test_hbm_forced_response_sweep_matches_solve_at_and_linear_limit(tmp_path):
    from fesub.hbm.forced import solve_at
    from fesub.models.jenkins import jenkins_1dof

    cases = [{"force": 0.5, "omega": 1.0}, {"force": 0.2, "omega": 1.3}, {"force": 0.01, "omega": 0.5}]
    sw.run_sweep("hbm_forced_response", tmp_path / "s", cases=cases,
                 fixed={"model": "jenkins_1dof", "nh": 5}, executor="serial", progress=False)
    d = sw.load_store(tmp_path / "s")
    assert d.shape == (3,) and d.axes == {} and d.fields["harmonic_amplitudes"].shape == (3, 5)
    ds = d.to_xarray()  # a list of cases: one "case" dimension, the study's names and units
    assert ds["harmonic_amplitudes"].dims == ("case", "harmonic")
    assert ds["stuck_margin"].dims == ("case", "contact")
    assert [ds[v].attrs["units"] for v in ("Am", "energy_dissipated", "stuck_margin")] == ["m", "J", "N"]
    np.testing.assert_array_equal(ds["case"].values, [0, 1, 2])
    np.testing.assert_array_equal(ds["omega"].values, [1.0, 1.3, 0.5])  # what each case lists
    assert (ds["force"].dims, ds["force"].attrs["units"], ds["omega"].attrs["units"]) == \
        (("case",), "N", "rad/s")
    _assert_same_data(fesub.load(d.save(tmp_path / "g")), d)
    assert (d.fields["converged"] == 1).all()
    for j, c in enumerate(cases):
        sy = jenkins_1dof(nh=5)
        Q = solve_at(sy, c["omega"], c["force"])
        np.testing.assert_allclose(d.fields["Am"][j], sy.amplitude(Q), rtol=1e-12)
        np.testing.assert_allclose(d.fields["energy_dissipated"][j], sy.energy_dissipated(Q),
                                   rtol=1e-12, atol=1e-15)
    # independent: at 0.01 N the Jenkins element stays stuck (|kt x| < mu N0), the oscillator is
    # linear with stiffness k + kt = 2 N/m, so RMS = F / sqrt(2) / |k + kt - m w^2 + i c w|
    m, c, k, kt, w, F = 1.0, 0.02, 1.0, 1.0, 0.5, 0.01
    rms = F / np.sqrt(2) / abs(k + kt - m * w**2 + 1j * c * w)
    np.testing.assert_allclose(d.fields["Am"][2], rms, rtol=1e-8)  # Newton tolerance 1e-11 * F
    assert d.fields["stuck_margin"][2, 0] < 0 < d.fields["stuck_margin"][0, 0]
    assert abs(d.fields["energy_dissipated"][2]) < 1e-12  # a stuck contact dissipates nothing


# --------------------------------------------------------------------------------------------
# 3. bad configurations fail with a fesub exception before any work
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(study="no_such_study", grid={"x": [1.0]}), ParameterError, "unknown study 'no_such_study'"),
    (dict(study="beam_on_beam_stability", grid={"mu": [0.1], "s": [0.01, 0.2]}), ParameterError,
     r"s \(grid axis 's'\) must lie in \[0.005, 0.098\], got 0.2"),
    (dict(study="beam_on_beam_stability", grid={"mu": [-0.1, 0.1], "s": [0.01]}), ParameterError,
     r"mu \(grid axis 'mu'\) must lie in \[0.0, inf\]"),
    (dict(study="beam_on_beam_stability", grid={"mu": [0.1], "s": [0.01]}, fixed={"n_basis": 5}),
     ParameterError, r"n_basis must lie in \[20, 2000\]"),
    (dict(study="beam_on_beam_stability", grid={"mu": [0.1], "s": [0.01]}, fixed={"nbasis": 50}),
     ParameterError, r"unknown parameter\(s\) \['nbasis'\]"),
    # a model parameter only the study's check hook knows, out of range at the LAST grid value
    (dict(study="freeplay_basin", grid={"x1": [0.1], "c": [0.05, 0.02, -0.1]},
          fixed={"x2": 0.0, "W": 1.1}), ParameterError, "c must be finite and >= 0"),
    (dict(study="coulomb_regime", grid={"r1": [0.5], "beta": [0.2]},
          fixed={"gamma": [1.0], "kappa": [1.0], "load": 3}), ParameterError, r"load must be .* \[0, 0\]"),
    (dict(study="hbm_forced_response", cases=[{"force": 1.0, "omega": 1.0}, {"force": 1.0, "omega": -2.0}],
          fixed={"model": "jenkins_1dof"}), ParameterError, r"omega .*must lie in \(0.0, inf\]"),
    (dict(study="probe", grid={"x": [1.0, 2.0, 2.0]}), ParameterError, "duplicate cases"),
], ids=["unknown-study", "s-out-of-range", "negative-mu", "small-n_basis", "unknown-parameter",
        "hook-checked-last-grid-value", "coulomb-load-index", "negative-omega-case", "duplicate-cases"])
def test_bad_sweep_raises_before_any_work(probe_dir, tmp_path, kwargs, error, match):
    log = tmp_path / "calls.log"
    if kwargs["study"] == "probe":
        kwargs = dict(kwargs, fixed={"log": str(log)})
    store = tmp_path / "store"
    with pytest.raises(error, match=match) as info:
        sw.run_sweep(kwargs.pop("study"), store, executor="serial", progress=False, **kwargs)
    assert isinstance(info.value, FesubError)
    assert not store.exists() and not log.exists()


def test_unreachable_scheduler_raises_before_any_work(probe_dir, tmp_path):
    _require_distributed()
    log = tmp_path / "calls.log"
    store = tmp_path / "store"
    address = f"tcp://127.0.0.1:{_free_port()}"  # nothing listens there
    t0 = time.monotonic()
    with pytest.raises(sw.SchedulerError, match="cannot reach the Dask scheduler") as info:
        sw.run_sweep("probe", store, grid={"x": [1.0, 2.0]}, fixed={"log": str(log)}, scheduler=address,
                     connect_timeout=1.0, progress=False)
    assert address in str(info.value) and isinstance(info.value, FesubError)
    assert time.monotonic() - t0 < 30  # the timeout is honoured (Dask adds its own retries)
    with pytest.raises(ParameterError, match="bad scheduler address"):
        sw.run_sweep("probe", store, grid={"x": [1.0]}, scheduler="no-port-here", progress=False)
    from distributed import default_client

    with pytest.raises(ValueError, match="No clients found"):  # none left behind as the default
        default_client()
    with pytest.raises(ParameterError, match="connect_timeout"):
        sw.run_sweep("probe", store, grid={"x": [1.0]}, scheduler=address, connect_timeout=0,
                     progress=False)
    assert not store.exists() and not log.exists()


# --------------------------------------------------------------------------------------------
# 4. the default pool limits BLAS/OpenMP threads; a live scheduler address
# --------------------------------------------------------------------------------------------


def _records(store):
    return {json.loads(f.read_text())["params"]["x"]: json.loads(f.read_text()) for f in _case_files(store)}


def test_default_pool_runs_single_threaded_blas(probe_dir, tmp_path, monkeypatch):
    import concurrent.futures as cf
    import multiprocessing as mp

    probe = sys.modules[PROBE_MODULE]
    for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.delenv(v, raising=False)
    # the default executor (no executor, scheduler or workers given): os.cpu_count() spawned workers
    rep = sw.run_sweep("probe_threads", tmp_path / "s", grid={"x": [1.0, 2.0, 3.0, 4.0]}, progress=False)
    assert rep.complete and rep.n_failed == 0
    recs = _records(tmp_path / "s")
    assert len(recs) == 4
    for rec in recs.values():
        res = rec["result"]
        assert res["pid"] != os.getpid()                   # ran in a worker process
        assert (res["OMP_NUM_THREADS"], res["OPENBLAS_NUM_THREADS"], res["MKL_NUM_THREADS"]) == (1, 1, 1)
        assert res["openblas_live"] in (-1, 1)             # -1: NumPy without OpenBLAS
        assert all(n == 1 for n in res["pools"])           # empty without threadpoolctl
    # the parent's environment is given back as it was (the variables stay unset)
    assert not any(v in os.environ for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"))
    # control, so that the check above can fail: a plain spawned worker from the same environment
    # is not limited (OpenBLAS starts one thread per available core)
    with cf.ProcessPoolExecutor(1, mp_context=mp.get_context("spawn")) as ex:
        ctrl = ex.submit(probe.threads, {"x": 0.0}).result()
    assert ctrl["OMP_NUM_THREADS"] == ctrl["OPENBLAS_NUM_THREADS"] == -1
    if len(os.sched_getaffinity(0)) > 1:
        if ctrl["openblas_live"] != -1:
            assert ctrl["openblas_live"] > 1
        if ctrl["pools"]:
            assert max(ctrl["pools"]) > 1


def test_live_scheduler_address_matches_local_pool(probe_dir, tmp_path):
    distributed = _require_distributed()
    grid = {"x": [-1.5, 0.0, 2.0, 3.25], "offset": [0.0, 0.5]}
    pool = sw.run_sweep("probe", tmp_path / "pool", grid=grid, workers=2, progress=False)
    # a scheduler and one worker thread in this process, reached through its TCP address only
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol="tcp",
                                  host="127.0.0.1", dashboard_address=None) as cluster:
        address = cluster.scheduler_address
        assert address.startswith("tcp://")
        remote = sw.run_sweep("probe", tmp_path / "dask", grid=grid, scheduler=address, progress=False)
        # every case ran on that cluster's (only) worker
        (worker,) = cluster.workers.values()
        assert worker.state.executed_count == 8
    for rep in (pool, remote):
        assert rep.complete and rep.n_computed == 8 and rep.n_failed == 0
    a, b = _case_files(tmp_path / "pool"), _case_files(tmp_path / "dask")
    assert [f.name for f in a] == [f.name for f in b] and len(a) == 8
    for fa, fb in zip(a, b):
        ra, rb = json.loads(fa.read_text()), json.loads(fb.read_text())
        assert (ra["params"], ra["index"], ra["result"]) == (rb["params"], rb["index"], rb["result"])
    # and both hold the probe's formula, y = x^2 + offset, exactly (binary-exact inputs)
    d = sw.load_store(tmp_path / "dask")
    x, off = np.meshgrid(grid["x"], grid["offset"], indexing="ij")
    np.testing.assert_array_equal(d.fields["y"], x * x + off)


# --------------------------------------------------------------------------------------------
# 5. store integrity: index, parameters and checksum of every case file; malformed files;
#    concurrent writers; the size of a grid
# --------------------------------------------------------------------------------------------


def _probe_store(probe_dir, store, n=6, log=None):
    """A complete probe store over x = 0..n-1 (serial); returns the run's keyword arguments."""
    kw = dict(grid={"x": np.arange(float(n))}, fixed={"log": str(log)} if log else {},
              executor="serial", progress=False)
    rep = sw.run_sweep("probe", store, **kw)
    assert rep.complete and rep.n_computed == n
    return kw


def _file_of(store, x):
    """Path and record of the case file of the probe case at x."""
    for p in _case_files(store):
        rec = json.loads(p.read_text())
        if rec["params"]["x"] == x:
            return p, rec
    raise AssertionError(f"no case file for x = {x}")


def _rewrite(path, rec, *, checksum=True):
    """Write a (tampered) record, with a valid checksum of its new content unless told not to."""
    rec = {k: v for k, v in rec.items() if k != "checksum"}
    if checksum:
        rec["checksum"] = sw.store._checksum(rec)
    Path(path).write_text(json.dumps(rec))


@pytest.mark.parametrize("tamper, problem", [
    ("index", "its parameters are not those of case 2"),
    ("params", "its parameters do not match its file name"),
    ("result", "checksum mismatch"),
    ("no-checksum", "no checksum"),
])
def test_a_case_file_that_disagrees_with_itself_is_missing_for_both_loader_and_runner(
        probe_dir, tmp_path, tamper, problem):
    log = tmp_path / "calls.log"
    store = tmp_path / "s"
    kw = _probe_store(probe_dir, store, log=log)
    path, rec = _file_of(store, 1.0)
    bad = dict(rec)
    if tamper == "index":  # case 1's file claims to be case 2 (checksum made to match)
        bad["index"] = 2
    elif tamper == "params":  # parameters of x = 5 in the file of x = 1
        bad["params"] = dict(rec["params"], x=5.0)
    elif tamper == "result":  # a value edited after the file was written
        bad["result"] = dict(rec["result"], y=123.0)
    _rewrite(path, bad, checksum=tamper not in ("result", "no-checksum"))
    if tamper == "result":
        path.write_text(json.dumps(dict(bad, checksum=rec["checksum"])))

    with pytest.warns(UserWarning, match=problem):
        d = sw.load_store(store)
    # nothing lands on the wrong grid point: case 1 is missing, the others keep their own values
    np.testing.assert_array_equal(d.status, [1, 0, 1, 1, 1, 1])
    np.testing.assert_array_equal(d.fields["y"], [0.0, np.nan, 4.0, 9.0, 16.0, 25.0])
    assert [(p["file"], p["problem"].startswith(problem)) for p in d.problems] == [(path.name, True)]
    # the runner sees the same: it computes case 1 (and only it) again
    rep = sw.run_sweep("probe", store, **kw)
    assert (rep.n_done_before, rep.n_computed) == (5, 1) and rep.complete
    assert _log(log)[-1][1] == 1.0 and len(_log(log)) == 7
    assert [(p["file"], p["index"]) for p in rep.problems] == [(path.name, 1)]
    assert rep.problems[0]["problem"].startswith(problem)
    d = sw.load_store(store)
    assert d.problems == [] and (d.status == 1).all()
    np.testing.assert_array_equal(d.fields["y"], np.arange(6.0) ** 2)


@pytest.mark.parametrize("content", [
    b"[1, 2, 3]", b'"text"', b'{"status": "ok", "index": 1}', b'{"status": "maybe"}',
    b"\xff\xfe not utf-8", b'{"status": "ok", "result": {"y": 1}, "index": "1", "checksum": "x"}',
], ids=["list", "string", "ok-without-result", "unknown-status", "not-utf8", "index-as-text"])
def test_malformed_case_files_are_reported_never_raised_and_recomputed(probe_dir, tmp_path, content):
    log = tmp_path / "calls.log"
    store = tmp_path / "s"
    kw = _probe_store(probe_dir, store, log=log)
    path, _ = _file_of(store, 3.0)
    path.write_bytes(content)
    stray = store / "cases" / "case-0123456789abcdef0123.json"  # of no case of this sweep
    stray.write_bytes(content)
    with pytest.warns(UserWarning, match="2 case file"):
        d = sw.load_store(store)
    assert sorted(p["file"] for p in d.problems) == sorted([path.name, stray.name])
    assert d.status[3] == 0 and d.n_missing == 1
    rep = sw.run_sweep("probe", store, **kw)
    assert rep.n_computed == 1 and rep.complete and _log(log)[-1][1] == 3.0
    # the damaged file was found and computed again; the stray one is still there, harmless
    assert sorted(p["file"] for p in rep.problems) == sorted([path.name, stray.name])
    assert json.loads(path.read_text())["result"]["y"] == 9.0


@pytest.mark.parametrize("damage", ["truncated", "list", "missing", "no-grid"])
def test_a_damaged_manifest_is_reported_and_does_not_block_a_rerun(probe_dir, tmp_path, damage):
    log = tmp_path / "calls.log"
    store = tmp_path / "s"
    kw = _probe_store(probe_dir, store, log=log)
    man = store / "manifest.json"
    good = json.loads(man.read_text())
    if damage == "truncated":
        man.write_text(man.read_text()[:30])
    elif damage == "list":
        man.write_text("[]")
    elif damage == "missing":
        man.unlink()
    else:
        man.write_text(json.dumps({k: v for k, v in good.items() if k != "grid"}))
    with pytest.raises(sw.SweepError) as info:  # one clear sentence, no traceback from json
        sw.load_store(store)
    assert "manifest" in str(info.value) and "\n" not in str(info.value)
    rep = sw.run_sweep("probe", store, **kw)  # resumes: nothing computed again
    assert rep.complete and (rep.n_done_before, rep.n_computed) == (6, 0)
    assert len(_log(log)) == 6
    assert [p["file"] for p in rep.problems] == ["manifest.json"]
    assert json.loads(man.read_text())["grid"] == good["grid"]
    assert (sw.load_store(store).status == 1).all()


def test_a_readable_manifest_of_another_sweep_is_still_refused(probe_dir, tmp_path):
    store = tmp_path / "s"
    _probe_store(probe_dir, store)
    with pytest.raises(sw.SweepError, match="different sweep"):
        sw.run_sweep("probe", store, grid={"x": [7.0]}, executor="serial", progress=False)
    with pytest.raises(sw.SweepError, match="different sweep"):
        sw.check_sweep("probe", grid={"x": [7.0]}, store=store)
    rep = sw.run_sweep("probe", store, grid={"x": [7.0]}, executor="serial", progress=False,
                       overwrite=True)
    assert rep.complete and rep.n_done_before == 0 and len(_case_files(store)) == 1


CONCURRENT = '''
import os, sys, time
sys.path.insert(0, {probe_dir!r})
import {module}
from fesub import sweep as sw

while not os.path.exists({go!r}):
    time.sleep(0.005)
rep = sw.run_sweep("probe", {store!r}, grid={{"x": [float(i) for i in range({n})]}},
                   fixed={{"delay": 0.05, "log": {log!r}}}, executor="serial", progress=False)
print(rep.n_computed, rep.n_missing, rep.complete, len(rep.problems))
'''


def test_two_identical_sweeps_into_one_store_compute_each_case_once(probe_dir, tmp_path):
    n = 24
    log, go, store = tmp_path / "calls.log", tmp_path / "go", tmp_path / "s"
    code = CONCURRENT.format(probe_dir=str(probe_dir), module=PROBE_MODULE, go=str(go),
                             store=str(store), n=n, log=str(log))
    procs = [subprocess.Popen([sys.executable, "-c", code], env=_env(probe_dir, tag),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for tag in ("a", "b")]
    time.sleep(1.0)  # both have imported fesub and wait for the start
    go.write_text("")
    outs = [p.communicate(timeout=120) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
    computed = [int(out.split()[0]) for out, _ in outs]
    assert [out.split()[1:] for out, _ in outs] == [["0", "True", "0"]] * 2  # both complete
    calls = _log(log)
    assert sorted(x for _, x in calls) == list(map(float, range(n)))  # each case exactly once
    assert sum(computed) == n and all(c > 0 for c in computed)  # and both did some of them
    assert {run for run, _ in calls} == {"a", "b"}
    assert not list((store / "claims").iterdir())
    assert (sw.load_store(store).status == 1).all()


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_claims_stale_ones_are_taken_over_live_ones_waited_for_foreign_ones_left(probe_dir, tmp_path):
    log = tmp_path / "calls.log"
    store = tmp_path / "s"
    xs = np.arange(4.0)
    kw = dict(grid={"x": xs}, fixed={"log": str(log)}, executor="serial", progress=False)
    full = [sw.Study.complete(sw.get_study("probe"), {"x": float(x), "log": str(log)}) for x in xs]
    keys = [sw.case_key("probe", c) for c in full]
    claims = store / "claims"
    claims.mkdir(parents=True)
    host = sw.claims._HOST
    # case 0: a claim of a process that is gone; case 1: of a live process of this machine, which
    # finishes the case 0.5 s later; case 2: of another machine
    (claims / keys[0]).write_text(json.dumps({"pid": _dead_pid(), "host": host}))
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        (claims / keys[1]).write_text(json.dumps({"pid": holder.pid, "host": host,
                                                  "start": sw.claims._proc_start(holder.pid)}))
        (claims / keys[2]).write_text(json.dumps({"pid": 1, "host": "elsewhere.example"}))

        def other_process_finishes_case_1():
            time.sleep(0.5)
            rec = sw.store.case_record(1, full[1], {"status": "ok", "result": {"y": 1.0}, "elapsed_s": 0.1})
            (store / "cases").mkdir(exist_ok=True)
            sw.store.atomic_write_json(str(store / "cases" / f"case-{keys[1]}.json"), rec)
            (claims / keys[1]).unlink()

        t = threading.Thread(target=other_process_finishes_case_1)
        t.start()
        t0 = time.monotonic()
        rep = sw.run_sweep("probe", store, **kw)
        t.join()
    finally:
        holder.kill()
        holder.wait()
    assert time.monotonic() - t0 >= 0.5  # it waited for the live claim
    assert sorted(x for _, x in _log(log)) == [0.0, 3.0]  # 1 by the other process, 2 left alone
    assert rep.n_busy == 1 and rep.n_missing == 1 and not rep.complete
    d = sw.load_store(store)
    np.testing.assert_array_equal(d.status, [1, 1, 0, 1])
    assert sorted(os.listdir(claims)) == [keys[2]]  # the foreign claim is not touched


def test_temporary_files_of_a_live_writer_are_kept_those_of_dead_ones_removed(probe_dir, tmp_path):
    store = tmp_path / "s"
    kw = _probe_store(probe_dir, store, n=2)
    cases = store / "cases"
    tag = sw.claims.HOST_TAG
    live = cases / f".tmp-{os.getpid()}@{tag}-abc-case-x.json"
    dead = cases / f".tmp-{_dead_pid()}@{tag}-abc-case-y.json"
    other_new = cases / ".tmp-1@ffffffff-abc-case-z.json"  # another machine, being written
    other_old = cases / ".tmp-1@ffffffff-abd-case-z.json"  # another machine, long ago
    for p in (live, dead, other_new, other_old):
        p.write_text("{")
    os.utime(other_old, (time.time() - 3600, time.time() - 3600))
    sw.run_sweep("probe", store, **kw)
    assert sorted(p.name for p in cases.iterdir() if p.name.startswith(".tmp")) == \
        sorted([live.name, other_new.name])


def test_grid_size_is_counted_before_the_grid_is_built(probe_dir, tmp_path):
    big = {"x": {"start": 0.0, "stop": 1.0, "num": 10**9}, "offset": [0.0, 1.0]}
    t0 = time.monotonic()
    assert sw.grid_size(big) == 2 * 10**9
    with pytest.raises(ParameterError, match=r"has 2,000,000,000 cases, more than max_cases = 1,000,000"):
        sw.run_sweep("probe", tmp_path / "s", grid=big, executor="serial", progress=False)
    with pytest.raises(ParameterError, match="more than max_cases = 10"):
        sw.check_sweep("probe", grid={"x": np.arange(11.0)}, max_cases=10)
    with pytest.raises(ParameterError, match="more than max_cases = 2"):
        sw.check_sweep("probe", cases=[{"x": 1.0}, {"x": 2.0}, {"x": 3.0}], max_cases=2)
    assert time.monotonic() - t0 < 5 and not (tmp_path / "s").exists()
    # the limit is the user's to raise
    assert sw.check_sweep("probe", grid={"x": np.arange(11.0)}, max_cases=11) == 11
    assert sw.check_sweep("probe", grid={"x": np.arange(11.0)}, max_cases=None) == 11
    with pytest.raises(ParameterError, match="max_cases must be an integer >= 1"):
        sw.check_sweep("probe", grid={"x": [1.0]}, max_cases=0)


def test_warnings_of_a_case_are_recorded_in_its_file_not_printed(probe_dir, tmp_path):
    import warnings

    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        rep = sw.run_sweep("probe", tmp_path / "s", grid={"x": [1.0, 2.0]}, fixed={"warn": "careful"},
                           executor="serial", progress=False)
    # only the cases' own warnings are this test's business: a library imported for the first time
    # in this process (the order of tests differs between workers) may warn on its own
    assert rep.complete and [str(w.message) for w in shown if "careful" in str(w.message)] == []
    d = rep.data
    assert d.warnings == [{"index": 0, "warnings": ["UserWarning: careful at x = 1.0"]},
                          {"index": 1, "warnings": ["UserWarning: careful at x = 2.0"]}]
    assert "2 case(s) emitted warnings" in " ".join(d.summary()["notes"])
    _assert_same_data(fesub.load(d.save(tmp_path / "g")), d)


def test_a_store_of_the_older_format_is_read_and_recomputed_not_refused(probe_dir, tmp_path):
    log = tmp_path / "calls.log"
    store = tmp_path / "s"
    kw = _probe_store(probe_dir, store, n=3, log=log)
    # what an older fesub wrote: format 1, case files without a checksum
    man = json.loads((store / "manifest.json").read_text())
    (store / "manifest.json").write_text(json.dumps(dict(man, format="fesub-sweep/1")))
    for p in _case_files(store):
        rec = json.loads(p.read_text())
        p.write_text(json.dumps({k: v for k, v in rec.items() if k != "checksum"}))
    with pytest.warns(UserWarning, match="no checksum"):
        assert sw.load_store(store).n_missing == 3
    assert sw.check_sweep("probe", store=store, **{k: kw[k] for k in ("grid", "fixed")}) == 3
    rep = sw.run_sweep("probe", store, **kw)
    assert rep.complete and rep.n_computed == 3 and len(_log(log)) == 6
    assert rep.problems[0]["file"] == "manifest.json" and "older fesub" in rep.problems[0]["problem"]
    assert json.loads((store / "manifest.json").read_text())["format"] == sw.store.STORE_FORMAT
    assert sw.load_store(store).problems == []


class _FlakyClient:
    """Stands for ``distributed.Client``: raises the next of ``errors`` at each construction, then
    connects; records the timeout of each try."""

    def __init__(self, errors):
        self.errors, self.timeouts = list(errors), []

    def __call__(self, target, *, timeout, set_as_default):
        assert set_as_default is False
        self.timeouts.append(timeout)
        if self.errors:
            raise self.errors.pop(0)
        return ("client", target)


def test_a_handshake_broken_off_is_tried_again_within_the_timeout():
    from fesub.sweep.executors import CONNECT_TRIES, _client

    flaky = _FlakyClient([AssertionError()])
    assert _client(flaky, "tcp://h:1", 5.0) == ("client", "tcp://h:1")
    assert len(flaky.timeouts) == 2 and flaky.timeouts[1] <= 5.0
    broken = _FlakyClient([AssertionError("a")] * (CONNECT_TRIES + 1))
    with pytest.raises(AssertionError, match="a"):                   # gives up after its tries
        _client(broken, "tcp://h:1", 5.0)
    assert len(broken.timeouts) == CONNECT_TRIES
    for exc in (OSError("refused"), TimeoutError("timed out"), ValueError("no port")):
        once = _FlakyClient([exc])                                    # the timeout was spent, or
        with pytest.raises(type(exc)):                                # the address is bad: at once
            _client(once, "tcp://h:1", 5.0)
        assert len(once.timeouts) == 1
