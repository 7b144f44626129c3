"""Performance tracked by ratio, from one commit to the next: the quick benchmark profile.

The machines are shared and noisy, so nothing here compares absolute times. Every entry of the
profile is a ratio measured in one run:

* ``bench:<file>::<test>:<label>`` - every ``ratio_<label>`` a benchmark of ``benchmarks/``
  records in pytest-benchmark's ``extra_info`` (the ``ratio_to`` fixture of
  ``benchmarks/conftest.py``: the benchmark against its baseline timed in the same test).
  ``--bench`` runs them timed with a few rounds (:data:`BENCH_OPTIONS`) and reads their
  ``--benchmark-json``; those in :data:`UNTIMED` (too costly to time in the profile's budget)
  run once with ``--benchmark-disable`` instead, so that they cannot rot;
* ``kernel:*`` - a compiled kernel against its NumPy twin on a small problem, the two sides
  alternating round by round (median of ``--rounds`` of each, at least :data:`KERNEL_ROUNDS`):
  the ratio falls when a kernel gets slower;
* ``study:*`` - a bundled study as a user runs it (``fesub STUDY ...`` in a fresh process, short
  configurations listed in :data:`STUDIES`) against the same command on a stored build of an
  earlier commit (``benchmarks/history/BASELINE``: built once in place, in a cache folder, from
  ``git archive`` and ``setup.py build_ext --inplace``), alternating likewise: the ratio falls
  when a study gets slower as a whole, wherever its time goes (the kind of regression a kernel
  benchmark misses). Studies in :data:`AS_USER` run as a user types them (default flags, figures
  drawn); one may have its own baseline (:data:`STUDY_BASELINES`, the commit its speed goal in
  :data:`STUDY_GOALS` names); those in :data:`OPT_IN` run only when named with ``--studies``.

The ratios of each machine are kept in ``benchmarks/history/<machine>.json`` (the machine named by
its CPU and core count), with, for each ratio, its measured run-to-run spread and the margin
beyond which a drop below the median of its last three records is a regression. The margins come
from the spread measured by ``calibrate`` (the largest relative deviation from the median over
its runs): twice the spread, at least 20 %; a ratio whose margin would exceed 50 % is recorded
and plotted but not judged (its noise alone moves it by a quarter). Ratios may appear and vanish
(benchmarks are added, renamed, removed): a new ratio is recorded and judged once a calibration
gives it a margin; a ratio on record that a run did not measure is reported, not a failure.

A regression is a drop below the floor that the next measurements repeat: ``run`` measures the
ratios found below their floor again (only those: their benchmarks, kernels or studies), up to
``--confirm`` times (default 2), each time those still below it, and fails on those below it
every time. With some fifty judged ratios, each margin twice its measured spread, one or two
ratios of a run dip below their floor by noise alone (CI on unchanged code failed on two
different ratios in two runs; three runs of unchanged code at load 3-6 had two dips each, the
second measurement of two of them within 11 % of their floor); a slowed kernel stays below its
floor however often it is measured. A run on a machine busier than every
calibration run (its mean load average above the highest the calibration saw) is judged with
margins :data:`BUSY_WIDEN` times wider, and says so: under contention some ratios move beyond
their calibrated spread, every time they are measured.

    python benchmarks/track.py run --bench          # the profile; compare with the last record
    python benchmarks/track.py run --bench --record # ... and append it to the history
    python benchmarks/track.py calibrate --bench -n 3  # n runs: spreads, margins, a record
    python benchmarks/track.py calibrate --from A.json B.json ...  # ... from runs measured earlier
    python benchmarks/track.py show                 # the history of this machine

Without ``--bench`` only the kernels and studies run (``--bench-json FILE`` takes the
benchmarks' ratios from a file written earlier by ``pytest benchmarks --benchmark-json FILE``).
``run`` exits with status 1 when a judged ratio fell below ``reference * (1 - margin)`` and stayed
below it when measured again, 2 when a benchmark failed. CI runs ``run --bench`` (the current package installed, the baseline from its
cache); ``docs/performance.py`` plots the history.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
HISTORY = HERE / "history"
# at least 20 %: two or three calibration runs underestimate the spread of a ratio on a shared
# machine (two runs at load 11-20 put beam-on-beam at 1 % while the kernels spread 14-33 %)
MARGIN_MIN, MARGIN_MAX = 0.20, 0.50

#: a run busier than the calibration (mean load average above the highest load average of its
#: runs) is judged with its margins this many times wider: unchanged code at load 7-8 (two
#: developers' test runs beside it) put the quadratic triangle assembly's ratio to Q4 at 0.248 and
#: 0.255 when measured again, against 0.34-0.42 in the calibration at load 1.1-4.7 (margin 31 %);
#: contention slows the two sides unequally, so measuring again does not help there
BUSY_WIDEN = 2.0

#: at least this many rounds of each side for a kernel ratio: a call takes 5-250 ms, so that a
#: median of 3 moved kernel:fe by 26 % between calibration and check on unchanged code (6.1x
#: against 8.0-9.4x, load 2-3); 9 rounds cost about 5 s in all
KERNEL_ROUNDS = 9

#: bundled studies, short configurations that the baseline build also accepts (wall time of one
#: run on an idle 2-core machine: a few seconds each, the beam's backbone 15 s)
STUDIES = {
    "beam-on-beam": ["beam-on-beam", "--duration", "0.02", "--loci-step", "0.005"],
    "pad-on-beam": ["pad-on-beam", "--drag-time", "0.002"],
    "coulomb": ["coulomb", "--nr", "200"],
    "backbone": ["backbone"],
    "backbone-beam": ["backbone", "--model", "beam"],
    "circular": ["circular", "--quick"],
    "freeplay-basin": ["freeplay", "basin", "--grid", "60", "-j", "2"],
    "joint": ["joint"],
}

#: studies timed exactly as a user runs them: the command with its default flags (figures drawn,
#: progress shown) into a fresh folder, not with ``--quiet --no-figures`` (a speed goal of a study
#: is met when the study as a user runs it meets it)
AS_USER = {"backbone", "backbone-beam", "joint"}

#: a study judged against another build than :func:`baseline_commit` (the commit its speed goal
#: names), built and cached the same way
STUDY_BASELINES = {"backbone-beam": "189b089e7c3016c3efd5a8224d5161261539f90b",
                   # the joint's backbone before its linear solves reused a factorisation
                   "joint": "81874cb16606544cfc21ba4be1717312daea7dc4"}

#: speed goals of study ratios (x): recorded in the run's ``goals`` and printed beside the ratio
STUDY_GOALS = {"study:backbone-beam": 3.0}

#: studies measured only when named (``--studies NAME``), with the reason: what a default run
#: would cost
OPT_IN = {"backbone-beam": "one round is about 60 s on an idle 2-core machine (15 s against "
                           "45 s on its baseline): three rounds, and the rounds of a "
                           "confirmation, would take minutes of CI's budget",
          "joint": "the bolted beam's backbone (200 contacts, 3 harmonics) as a user runs it: "
                   "minutes a round on the current build, about three times that on its "
                   "baseline; its goal is a wall time (under 5 min on 2 cores), read from "
                   "the recorded times"}


# ------------------------------------------------------------------------------ the machine
def machine_name() -> str:
    """``FESUB_MACHINE``, else the CPU model and the core count (``amd-epyc-2cores``)."""
    if os.environ.get("FESUB_MACHINE"):
        return re.sub(r"[^a-z0-9]+", "-", os.environ["FESUB_MACHINE"].lower()).strip("-")
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            for ln in fh:
                if ln.startswith("model name"):
                    model = ln.split(":", 1)[1]
                    break
    except OSError:
        pass
    slug = re.sub(r"[^a-z0-9]+", "-", model.lower()).strip("-")
    return f"{slug}-{os.cpu_count()}cores"


def history_path(machine: str | None = None) -> Path:
    return HISTORY / f"{machine or machine_name()}.json"


def load_history(path: Path) -> dict:
    if path.is_file():
        return json.loads(path.read_text())
    return {"machine": path.stem, "margins": {}, "spread": {}, "runs": []}


def save_history(path: Path, hist: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(hist, indent=1, sort_keys=True) + "\n")
    tmp.replace(path)


# ------------------------------------------------------------------------- the measurements
def alternate(fast, base, rounds: int) -> tuple[float, float]:
    """Medians (s) of ``rounds`` calls of each, alternating (base first in odd rounds)."""
    tf, tb = [], []
    for r in range(rounds):
        for which in ((base, tb), (fast, tf)) if r % 2 == 0 else ((fast, tf), (base, tb)):
            t0 = time.perf_counter()
            which[0]()
            which[1].append(time.perf_counter() - t0)
    return statistics.median(tf), statistics.median(tb)


class LoadSampler:
    """The 1-minute load average sampled every ``every`` seconds while a run lasts (a thread):
    ``with LoadSampler() as ls: ...``, then ``ls.mean`` and ``ls.peak``."""

    def __init__(self, every: float = 5.0):
        self.every, self.samples = every, [os.getloadavg()[0]]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self):
        while not self._stop.wait(self.every):
            self.samples.append(os.getloadavg()[0])

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.samples.append(os.getloadavg()[0])

    @property
    def mean(self) -> float:
        return statistics.fmean(self.samples)

    @property
    def peak(self) -> float:
        return max(self.samples)


def _kernel_cases():
    """(name, what, fast, baseline, work) of the kernel ratios: small problems, under a second
    each; ``work`` is the baseline's work as a share of the fast side's."""
    import numpy as np

    from fesub import _backend

    def twin(fn):
        def run():
            with _backend.use("python"):
                fn()
        return run

    def freeplay(n=64, n_transient=10):
        from fesub.nonsmooth import P_REF
        from fesub.nonsmooth.batch import batch_periodic

        X0 = np.zeros((n, 4))
        X0[:, 0], X0[:, 2] = np.linspace(-0.5, 0.5, n), np.linspace(0.5, -0.5, n)
        batch_periodic(P_REF, X0, 1.15, n_transient=n_transient, n_record=2,
                       steps_per_period=100)

    def fe():
        from fesub.fe import PlaneStress, mesh_matrices, rectangle

        mesh_matrices(rectangle(1.0, 0.4, 60, 24), PlaneStress(210e9, 0.3, 7800.0, 0.01))

    def coulomb():
        from fesub.coulomb import ChainModel, steady_state

        steady_state(ChainModel.uniform(5), "wall:0", 0, np.linspace(0.1, 2.5, 300),
                     np.linspace(0.0, 0.9, 5))

    def multibody():
        from fesub.contact import Body, ContactInterface, MultibodyModel, simulate_multibody
        from fesub.fe import PlaneStress, rectangle
        from fesub.substructure import Substructure

        mesh = rectangle(0.1, 0.02, 6, 2)
        sub = Substructure(mesh, PlaneStress(2e6, 0.3, 1000.0, 0.01), rayleigh=(200.0, 0.0))
        bottom, top = (mesh.nodes(s) for s in ("bottom", "top"))
        dx, dy = sub.dofs(top, "x"), sub.dofs(top, "y")

        def loads(t):
            f = np.zeros(sub.n_dofs)
            f[dy] = -10.0 * min(t / 0.02, 1.0) / top.size
            f[dx] = 100.0 * max(t - 0.02, 0.0) / top.size
            return f

        block = Body.from_substructure(sub, name="block", loads=loads)
        ground = Body(np.zeros((0, 0)), np.zeros((0, 0)), [[-0.05, 0.0], [0.15, 0.0]],
                      [[-1, -1], [-1, -1]], name="ground")
        model = MultibodyModel([block, ground],
                               [ContactInterface("block", bottom, "ground", [[0, 1]], mu=0.3)])
        simulate_multibody(model, duration=0.01, fs_out=2e3, progress=False)

    # the twin integrates 2 trajectories over 2 periods, the kernel 64 over 12
    return [
        ("kernel:freeplay", "free-play batch RK4 per trajectory-period, compiled / NumPy twin",
         freeplay, twin(lambda: freeplay(2, 0)), (2 * 2) / (64 * 12)),
        ("kernel:fe", "Q4 assembly 60 x 24, compiled / NumPy twin", fe, twin(fe), 1.0),
        ("kernel:coulomb", "closed-form chain steady states, compiled / twin", coulomb,
         twin(coulomb), 1.0),
        ("kernel:multibody", "contact stepper (block on ground), compiled / twin", multibody,
         twin(multibody), 1.0),
    ]


def _study(argv, tree: Path | None, out: Path, as_user: bool = False) -> None:
    """One study in a fresh process: the installed package (or the checkout when it has its
    kernels built in place), or the source tree ``tree`` (an earlier build) first on the path.
    ``as_user``: the command with its default flags (only ``--out``, into a fresh folder)."""
    env = _pytest_env()
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    if as_user:
        shutil.rmtree(out, ignore_errors=True)
        cmd = [sys.executable, "-m", "fesub", *argv, "--out", str(out)]
    else:
        cmd = [sys.executable, "-m", "fesub", *argv, "--quiet", "--no-figures", "--overwrite",
               "--out", str(out)]
    proc = subprocess.run(cmd, env=env, cwd=str(out.parent), stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} ({tree or 'current'}) failed: {proc.stderr[-1500:]}")


def _checkout_built() -> bool:
    return any((ROOT / "fesub" / "_core").glob("freeplay*.so"))


def baseline_commit() -> str:
    return (HISTORY / "BASELINE").read_text().split()[0]


def baseline_tree(commit: str, cache: Path | None = None) -> Path:
    """The source tree of ``commit`` with its kernels built in place (built once, then reused
    from ``FESUB_BASELINE_CACHE`` or ``~/.cache/fesub-baseline``)."""
    cache = Path(cache or os.environ.get("FESUB_BASELINE_CACHE")
                 or Path.home() / ".cache" / "fesub-baseline")
    tree = cache / commit[:12]
    stamp = tree / ".built"
    if stamp.is_file():
        return tree
    cache.mkdir(parents=True, exist_ok=True)
    if tree.exists():
        shutil.rmtree(tree)
    # the commit's files, without a worktree registered in this repository
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", commit],
                             capture_output=True, check=True).stdout
    tree.mkdir()
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    print(f"building the baseline {commit[:12]} in {tree} (once) ...", flush=True)
    env = dict(os.environ, FESUB_REQUIRE_EXT="1")
    subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace", "-j",
                    str(os.cpu_count() or 1)], cwd=tree, env=env, check=True,
                   stdout=subprocess.DEVNULL)
    stamp.write_text(commit + "\n")
    return tree


def profile(**kw) -> dict:
    """One run of the quick profile (:func:`measure`, its keywords) with the machine's load
    average sampled while it runs: ``load_mean`` and ``load_peak`` added to the run."""
    with LoadSampler() as load:
        run = measure(**kw)
    run.update(load_mean=load.mean, load_peak=load.peak)
    return run


def measure(rounds: int = 3, studies=None, kernels=True, tree: Path | None = None,
            bench=None, bench_json: Path | None = None, log=print, bench_nodes=None) -> dict:
    """The ratios of one run of the quick profile: ``{"ratios": {...}, "times": {...}, ...}``.

    ``bench``: ``None`` leaves the benchmarks out; ``"run"`` runs them first
    (:func:`run_benchmarks`, only ``bench_nodes`` when given; their pytest-benchmark JSON kept
    at ``bench_json`` when given) and takes every ``ratio_*`` they record (:func:`bench_ratios`);
    a path reads those ratios from a JSON file written earlier. ``kernels``: all kernel ratios,
    none, or a list of their names."""
    import numpy as np  # noqa: F401 - the kernels' cases import it

    t_start = time.perf_counter()
    ratios, times, what = {}, {}, {}
    load0 = os.getloadavg()[0]
    extra = {}
    if bench is not None:
        if bench == "run":
            with tempfile.TemporaryDirectory(prefix="fesub-bench-") as tmp:
                out = Path(bench_json) if bench_json else Path(tmp) / "benchmarks.json"
                out.unlink(missing_ok=True)
                status, secs = run_benchmarks(out, log=log, nodes=bench_nodes)
                extra.update(bench_status=status, bench_seconds=secs)
                found = bench_ratios(out) if out.is_file() else ({}, {}, {})
        else:
            found = bench_ratios(Path(bench))
        for got, into in zip(found, (ratios, what, times)):
            into.update(got)
        log(f"  {len(found[0])} ratios from the benchmarks"
            + (f" ({extra['bench_seconds']:.0f} s)" if "bench_seconds" in extra else ""))
    if kernels:
        for name, desc, fast, base, work in _kernel_cases():
            if kernels is not True and name not in kernels:
                continue
            fast(), base()  # warm: imports, caches
            tf, tb = alternate(fast, base, max(rounds, KERNEL_ROUNDS))
            # ``work``: the baseline's share of the fast side's work (a slow twin does less)
            r = tb / work / tf
            ratios[name], times[name], what[name] = r, [tf, tb], desc
            log(f"  {name:24s} {r:8.2f}x  ({tf * 1e3:.1f} ms vs {tb * 1e3:.1f} ms)")
    studies = [n for n in STUDIES if n not in OPT_IN] if studies is None else list(studies)
    commit, goals = None, {}
    if studies:
        commit = baseline_commit()
        with tempfile.TemporaryDirectory(prefix="fesub-track-") as tmp:
            for name in studies:
                argv, as_user = STUDIES[name], name in AS_USER
                base = STUDY_BASELINES.get(name, commit)
                # ``tree`` (--baseline-tree) is a build of the profile's baseline commit
                old = (tree or baseline_tree(base)) if base == commit else baseline_tree(base)
                out_new, out_old = Path(tmp) / f"{name}-new", Path(tmp) / f"{name}-old"
                tf, tb = alternate(lambda: _study(argv, None, out_new, as_user),
                                   lambda: _study(argv, old, out_old, as_user), rounds)
                key = f"study:{name}"
                ratios[key], times[key] = tb / tf, [tf, tb]
                what[key] = (f"fesub {' '.join(argv)}{' (default flags)' if as_user else ''}"
                             f" / the same on {base[:10]}")
                goal = STUDY_GOALS.get(key)
                if goal is not None:
                    goals[key] = goal
                log(f"  {key:24s} {tb / tf:8.2f}x  ({tf:.1f} s vs {tb:.1f} s)"
                    + (f"  goal {goal:g}x" if goal is not None else ""))
    return {"date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "commit": _git("rev-parse", "--short=10", "HEAD"), "baseline": commit,
            "rounds": rounds, "load_average": [load0, os.getloadavg()[0]],
            "seconds": time.perf_counter() - t_start, "ratios": ratios, "times": times,
            "what": what, **({"goals": goals} if goals else {}), **extra}


# ------------------------------------------------------------- the benchmarks' own ratios
#: benchmarks that ``--bench`` runs once with ``--benchmark-disable`` (so that they cannot rot)
#: instead of timing them: timed, each costs a large part of CI's budget or more (2-core machine,
#: load 2-3; the cost is timed minus untimed). Their ratios are not tracked. Every other
#: benchmark is timed: together about 20 s more than untimed (measured, 40 benchmarks).
UNTIMED: dict[str, str] = {
    "test_bench_nonsmooth.py::test_bench_basin_full_grid":
        "timed 110 s + 95 s against 3.4 s + 2.9 s untimed (200 x 200 grid, 5 rounds)",
    "test_bench_craig_bampton.py::test_craig_bampton_factored_vs_reference":
        "timed > 280 s (stopped) against 1.0 s untimed (5 rounds of each reduction)",
    "test_bench_contact.py::test_eigenvalue_loci_200_positions":
        "timed > 5 min (stopped) against 0.3 s untimed (200 positions instead of 3)",
    "test_bench_basin.py": "200 x 200 grid and 5 rounds timed, 16 x 16 and 1 untimed",
    "test_bench_contact_frf.py": "the paper's grid and 3 rounds timed, a small grid untimed",
    "test_bench_contact_loci.py": "200 positions and 5 rounds timed, 10 and 1 untimed",
    "test_bench_coulomb.py::test_bench_regime_map_2dof": "the full map timed, a subgrid untimed",
    "test_bench_fe_solid.py": "the full mesh timed, 8 elements a side untimed; scikit-fem minutes",
    "test_bench_nonsmooth.py::test_bench_basin_parallel": "200 x 200 grid timed",
    "test_bench_study.py": "the default study 5 times and 4 variants timed (~30 s each)",
    "test_bench_sweep.py": "40 x 40 map and 3 rounds timed, 6 x 6 and 1 untimed",
    "test_bench_hbm.py::test_bench_beam_backbone_condensed":
        "159 s untimed already (the full backbone 5 times); 4 more condensed rounds timed",
}

#: pytest-benchmark's own rounds for the benchmarks that call ``benchmark(fn)`` (those with
#: explicit rounds keep theirs): a few rounds, a short budget each
BENCH_OPTIONS = ["--benchmark-min-rounds=3", "--benchmark-max-time=0.2",
                 "--benchmark-warmup=off", "--benchmark-sort=fullname",
                 "--benchmark-columns=median,iqr,rounds"]

#: s: a benchmark still running after this long has every thread's stack printed (pytest's
#: faulthandler; the run goes on), so that a hang shows where it waits
STACKS_AFTER_S = 600
#: s: a pytest run of the profile stopped after this long (a hang must not hold the machine
#: for ever); the quick profile takes minutes
PYTEST_LIMIT_S = 1200


def bench_key(fullname: str, label: str) -> str:
    """``bench:<file>::<test>:<label>`` for the ratio ``ratio_<label>`` of a benchmark
    (``benchmarks/test_bench_fe.py::test_bench_q4_assembly_500x200``, ``numpy_twin`` ->
    ``bench:fe::test_bench_q4_assembly_500x200:numpy_twin``)."""
    path, _, test = fullname.partition("::")
    stem = Path(path).stem
    stem = stem[len("test_bench_"):] if stem.startswith("test_bench_") else stem
    return f"bench:{stem}::{test}:{label}"


def bench_ratios(path: Path) -> tuple[dict, dict, dict]:
    """Every ``ratio_<label>`` in the ``extra_info`` of a pytest-benchmark JSON file:
    ``(ratios, what, times)`` keyed by :func:`bench_key` (``times``: the benchmark's median and
    the baseline's, s, when recorded). Values that are not finite positive numbers are skipped."""
    data = json.loads(Path(path).read_text())
    ratios, what, times = {}, {}, {}
    for b in data.get("benchmarks", []):
        full = b.get("fullname") or b.get("name", "?")
        info = b.get("extra_info") or {}
        median = (b.get("stats") or {}).get("median")
        for key, val in sorted(info.items()):
            if not key.startswith("ratio_") or isinstance(val, bool):
                continue
            if not isinstance(val, (int, float)) or not math.isfinite(val) or val <= 0:
                continue
            label = key[len("ratio_"):]
            name = bench_key(full, label)
            ratios[name] = float(val)
            what[name] = f"{full}, extra_info {key}"
            times[name] = [median, info.get(f"baseline_{label}_median_s")]
    return ratios, what, times


def _pytest_env() -> dict:
    """The environment of the profile's child processes (studies, pytest): one BLAS thread, the
    checkout first on the path when its kernels are built in place, else the installed package."""
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    env.pop("PYTHONPATH", None)
    # pytest-benchmark turns its timing off in a pytest-xdist worker's environment
    # (PYTEST_XDIST_WORKER): the profile's pytest is not a worker, even when started from one
    for k in [k for k in env if k.startswith("PYTEST_XDIST")]:
        del env[k]
    if _checkout_built():  # the checkout with its kernels built in place, else the installed one
        env["PYTHONPATH"] = str(ROOT)
    return env


def run_benchmarks(out: Path, log=print, nodes=None) -> tuple[int, float]:
    """The benchmarks of ``benchmarks/``: timed (:data:`BENCH_OPTIONS`) with their JSON written
    to ``out``, then those in :data:`UNTIMED` once with ``--benchmark-disable``; with ``nodes``
    (pytest node ids relative to the repository) only those, timed. Returns the worse pytest
    status and the seconds taken. pytest runs with ``python -P``: the checkout's ``./fesub`` is
    imported only when its kernels are built in place."""
    t0 = time.perf_counter()
    base = [sys.executable, "-P", "-m", "pytest", "-q", "-p", "no:cacheprovider",
            f"--rootdir={ROOT}", "-o", f"faulthandler_timeout={STACKS_AFTER_S}"]
    if nodes:
        log(f"  benchmarks (timed): {len(nodes)} of them")
        status = _pytest(base + list(nodes) + [f"--benchmark-json={out}", *BENCH_OPTIONS], log)
        return status, time.perf_counter() - t0
    # node ids relative to the repository root (pytest's rootdir), as --deselect compares them;
    # an entry that names no benchmark any more (removed or renamed) is reported and dropped
    ids = subprocess.run(base + ["benchmarks", "--collect-only"], cwd=str(ROOT),
                         env=_pytest_env(), capture_output=True, text=True).stdout.split()
    untimed, stale = [], []
    for n in UNTIMED:
        u = f"benchmarks/{n}"
        found = any(i == u or i.startswith((u + "::", u + "[")) for i in ids)
        (untimed if found else stale).append(u)
    if stale:
        log(f"  UNTIMED names no benchmark now (removed or renamed?): {', '.join(stale)}")
    timed = base + ["benchmarks", f"--benchmark-json={out}", *BENCH_OPTIONS]
    timed += [a for n in untimed for a in ("--deselect", n)]
    log(f"  benchmarks (timed): pytest benchmarks {' '.join(BENCH_OPTIONS)}")
    status = _pytest(timed, log)
    if untimed:
        log(f"  benchmarks (once, untimed): {', '.join(UNTIMED)}")
        st = _pytest(base + ["--benchmark-disable", *untimed], log)
        status = status or st
    return status, time.perf_counter() - t0


def _pytest(cmd: list, log) -> int:
    """Run one pytest of the profile (stopped after :data:`PYTEST_LIMIT_S`: status 1)."""
    try:
        return subprocess.run(cmd, cwd=str(ROOT), env=_pytest_env(), timeout=PYTEST_LIMIT_S).returncode
    except subprocess.TimeoutExpired:
        log(f"  pytest did not finish in {PYTEST_LIMIT_S} s and was stopped (a hang? the stacks of "
            f"a benchmark running over {STACKS_AFTER_S} s are printed above)")
        return 1


def _git(*args) -> str | None:
    try:
        return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True,
                              check=True).stdout.strip() or None
    except (OSError, subprocess.CalledProcessError):
        return None


# ----------------------------------------------------------------------------- the check
def reference(hist: dict, last: int = 3) -> dict:
    """Per ratio, the median of its values in the ``last`` runs recorded that have it (one noisy
    record does not set the bar alone)."""
    out = {}
    for name in {k for r in hist.get("runs", []) for k in r["ratios"]}:
        vals = [r["ratios"][name] for r in hist["runs"] if name in r["ratios"]][-last:]
        out[name] = statistics.median(vals)
    return out


def floors(run: dict, hist: dict) -> dict:
    """The ratios of ``run`` below their floor ``reference * (1 - margin)`` against the last
    recorded runs of ``hist`` (:func:`reference`: the median of the last three records):
    ``{name: (value, reference, floor, margin)}``. Ratios without a record or a margin (new, or
    too noisy to judge) are not judged; ratios recorded but absent from ``run`` are not
    failures (:func:`missing` names them)."""
    if not hist.get("runs"):
        return {}
    ref, margins = reference(hist), run_margins(run, hist)
    out = {}
    for name, value in run["ratios"].items():
        m = margins.get(name)
        if name not in ref or m is None:
            continue
        floor = ref[name] * (1.0 - m)
        if value < floor:
            out[name] = (value, ref[name], floor, m)
    return out


def run_margins(run: dict, hist: dict) -> dict:
    """The margins ``run`` is judged with: the calibrated ones, :data:`BUSY_WIDEN` times wider
    (at most 95 %) when the run was :func:`busier` than the calibration; ``None`` stays not
    judged."""
    margins = hist.get("margins", {})
    if not busier(run, hist):
        return dict(margins)
    return {n: None if m is None else min(BUSY_WIDEN * m, 0.95) for n, m in margins.items()}


def calibrated_load(hist: dict) -> float | None:
    """The highest load average the calibration's runs saw (their samples' peak, else the load
    at their start and end); ``None`` without a calibration."""
    cal = [r for r in hist.get("runs", []) if r.get("calibration")]
    loads = [r.get("load_peak", max(r.get("load_average") or [0.0])) for r in cal]
    return max(loads) if loads else None


def busier(run: dict, hist: dict) -> bool:
    """Whether ``run`` ran on a machine busier than every calibration run: its mean load average
    (or the mean of its start and end) above :func:`calibrated_load`."""
    ceiling = calibrated_load(hist)
    if ceiling is None or not run.get("load_average"):
        return False
    mean = run.get("load_mean", statistics.fmean(run["load_average"]))
    return mean > ceiling


def compare(run: dict, hist: dict) -> list[str]:
    """:func:`floors` as lines of text: one measurement's drops beyond the margin."""
    return [f"{name}: {v:.3g}x against {ref:.3g}x recorded (floor {fl:.3g}x, margin "
            f"{100 * m:.0f} %)" for name, (v, ref, fl, m) in floors(run, hist).items()]


def bench_node(what: str) -> str:
    """The pytest node id of a ``bench:`` ratio from its description in a run's ``what``
    (``"benchmarks/test_bench_fe.py::test_q4[tri], extra_info ratio_numpy_twin"``)."""
    return what.rsplit(", extra_info ", 1)[0]


def remeasure(names, run: dict, log=print, **kw) -> dict:
    """The ratios ``names`` of ``run`` measured again, and only them: their benchmarks (by
    node id), kernel cases or studies (``kw``: :func:`profile`'s ``rounds`` and ``tree``).
    Returns the new values; a ratio that could not be measured again is absent."""
    nodes = sorted({bench_node(run["what"][n]) for n in names
                    if n.startswith("bench:") and n in run.get("what", {})})
    kernels = [n for n in names if n.startswith("kernel:")]
    studies = [n[len("study:"):] for n in names if n.startswith("study:")
               and n[len("study:"):] in STUDIES]
    again = profile(studies=studies, kernels=kernels or False, bench="run" if nodes else None,
                    bench_nodes=nodes, log=log, **kw)
    return {n: again["ratios"][n] for n in names if n in again["ratios"]}


def confirm(run: dict, hist: dict, times: int = 1, measure=remeasure, log=print, **kw) -> dict:
    """The drops of ``run`` below their floor (:func:`floors`) that ``times`` more measurements
    (``measure``: :func:`remeasure`) repeat, each time of those still below it:
    ``{name: (value, reference, floor, margin)}``. The values measured again are kept in
    ``run["again"]`` (one dict per round), the first measurement stays the run's ratio."""
    low = floors(run, hist)
    for i in range(times):
        if not low:
            break
        log(f"{len(low)} ratio(s) below the floor, measured again ({i + 1} of {times}): "
            + ", ".join(low))
        got = measure(list(low), run, log=log, **kw)
        run.setdefault("again", []).append(got)
        low = {n: t for n, t in low.items() if got.get(n, -math.inf) < t[2]}
    return low


def missing(run: dict, hist: dict) -> list[str]:
    """Ratios with a margin on record that ``run`` did not measure (a benchmark removed or
    renamed, or left out of this run): reported, never a failure."""
    return sorted(n for n, m in hist.get("margins", {}).items()
                  if m is not None and n not in run["ratios"])


def margins_from(runs: list[dict]) -> tuple[dict, dict]:
    """Per ratio measured in at least two of ``runs``: the relative spread (largest deviation
    from the median, over the median) and the margin chosen from it: twice the spread, at least
    ``MARGIN_MIN``; ``None`` (recorded, not judged) when that would exceed ``MARGIN_MAX``,
    i.e. when the run-to-run noise alone moves the ratio by more than a quarter."""
    spread, margin = {}, {}
    for name in sorted({k for r in runs for k in r["ratios"]}):
        vals = [r["ratios"][name] for r in runs if name in r["ratios"]]
        if len(vals) < 2:
            continue
        med = statistics.median(vals)
        spread[name] = max(abs(v - med) for v in vals) / med
        m = max(MARGIN_MIN, 2.0 * spread[name])
        margin[name] = m if m <= MARGIN_MAX else None
    return spread, margin


def _print_check(run, hist, times: int = 1, **kw) -> int:
    if not hist.get("runs"):
        print(f"no ratios recorded for machine {hist['machine']}: nothing to compare with")
        return 0
    bad = confirm(run, hist, times, **kw)
    again = run.get("again", [])
    last = hist["runs"][-1]
    refs = reference(hist)
    margins, spreads = run_margins(run, hist), hist.get("spread", {})
    print(f"compared with the median of the last records (the last of {last['date']}, commit "
          f"{last.get('commit')}), machine {hist['machine']}:")
    if busier(run, hist):
        mean = run.get("load_mean", statistics.fmean(run["load_average"]))
        print(f"the machine was busier than in the calibration (mean load {mean:.2f} against at "
              f"most {calibrated_load(hist):.2f}): margins {BUSY_WIDEN:g} times wider")
    width = max([24] + [len(n) for n in run["ratios"]])
    for name, v in sorted(run["ratios"].items()):
        ref, m = refs.get(name), margins.get(name)
        if ref is None:
            status = "new (recorded with --record; judged once calibrated)"
        elif m is None:
            sp = spreads.get(name)
            status = ("not judged (spread " + (f"{100 * sp:.0f} %)" if sp is not None else
                                               "not calibrated)"))
        else:
            status = "ok"
            if v < ref * (1 - m):
                seen = ", ".join(f"{a[name]:.3g}x" for a in again if name in a)
                status = ("REGRESSION" if name in bad else "ok") + f" (again: {seen or '-'})"
        ref_s = "-" if ref is None else f"{ref:.3g}x"
        m_s = "-" if m is None else f"{100 * m:.0f} %"
        print(f"  {name:{width}s} {v:9.3g}x  last {ref_s:>8}  margin {m_s:>5}  {status}")
    gone = missing(run, hist)
    if gone:
        print(f"not measured in this run ({len(gone)}; not a failure):\n  " + "\n  ".join(gone))
    if bad:
        print("performance regression beyond the margin, measured again:\n  " + "\n  ".join(
            f"{n}: {v:.3g}x against {ref:.3g}x recorded (floor {fl:.3g}x, margin "
            f"{100 * m:.0f} %); again " + ", ".join(f"{a[n]:.3g}x" for a in again if n in a)
            for n, (v, ref, fl, m) in bad.items()))
        return 1
    print("no ratio fell beyond its margin" + (" when measured again" if again else ""))
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("run", "calibrate"):
        p = sub.add_parser(name)
        p.add_argument("--rounds", type=int, default=3, help="rounds of each side per ratio")
        p.add_argument("--studies", nargs="*", default=None, choices=list(STUDIES),
                       help="studies to time (default: all but " + ", ".join(OPT_IN)
                            + "; none: kernels only)")
        p.add_argument("--no-kernels", action="store_true", help="studies only")
        p.add_argument("--baseline-tree", type=Path, default=None,
                       help="a built source tree of the baseline commit (default: the cache)")
        p.add_argument("--machine", default=None, help="history file name (default: this CPU)")
        p.add_argument("--json", type=Path, default=None, help="also write the run(s) here")
        p.add_argument("--bench", action="store_true",
                       help="also run the benchmarks (pytest-benchmark, a few rounds) and track "
                            "every ratio_* they record")
        p.add_argument("--bench-json", type=Path, default=None,
                       help="with --bench: keep their pytest-benchmark JSON here; without: "
                            "take the benchmarks' ratios from this file")
    sub.choices["run"].add_argument("--record", action="store_true",
                                    help="append the run to the machine's history")
    sub.choices["run"].add_argument(
        "--confirm", type=int, default=2, metavar="N",
        help="measure the ratios below their floor again, N times; a regression is a drop that "
             "every measurement repeats (default 2; 0: one measurement decides)")
    sub.choices["calibrate"].add_argument("-n", type=int, default=3, help="runs (>= 2)")
    sub.choices["calibrate"].add_argument(
        "--from", dest="from_runs", nargs="+", type=Path, default=None,
        help="no measuring: margins from runs measured earlier (files of run/calibrate --json)")
    sub.add_parser("show").add_argument("--machine", default=None)
    args = ap.parse_args(argv)
    if _checkout_built() and str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))  # the checkout, kernels built in place, as the studies run it
    path = history_path(args.machine)
    hist = load_history(path)
    if args.cmd == "show":
        print(json.dumps(hist, indent=1))
        return 0
    if args.cmd == "calibrate" and args.bench_json and not args.bench:
        ap.error("calibrate measures the spread of repeated runs: --bench-json needs --bench")
    bench = "run" if args.bench else args.bench_json
    kw = dict(rounds=args.rounds, studies=args.studies, kernels=not args.no_kernels,
              tree=args.baseline_tree, bench=bench, bench_json=args.bench_json)
    print(f"quick profile on {hist['machine']} (load {os.getloadavg()[0]:.2f})", flush=True)
    if args.cmd == "run":
        run = profile(**kw)
        print(f"quick profile: {run['seconds']:.0f} s, load {run['load_average'][0]:.2f} -> "
              f"{run['load_average'][1]:.2f} (mean {run.get('load_mean', 0):.2f}, peak "
              f"{run.get('load_peak', 0):.2f})")
        if args.json:
            args.json.write_text(json.dumps(run, indent=1))
        status = _print_check(run, hist, args.confirm, rounds=args.rounds,
                              tree=args.baseline_tree)
        if args.json and run.get("again"):
            args.json.write_text(json.dumps(run, indent=1))
        if run.get("bench_status"):
            print(f"the benchmarks failed (pytest status {run['bench_status']})")
            status = 2
        if args.record:
            hist["runs"].append(run)
            save_history(path, hist)
            print(f"recorded in {path}")
        return status
    def store(done):
        spread, margin = margins_from(done)
        hist["spread"], hist["margins"] = spread, margin
        hist["calibration"] = {"date": done[-1]["date"], "runs": len(done),
                               "ratios": {n: [r["ratios"].get(n) for r in done] for n in spread},
                               "seconds": [r["seconds"] for r in done],
                               "load_average": [r["load_average"] for r in done]}
        # the calibration's runs are the record (a new calibration replaces the last one's)
        hist["runs"] = [r for r in hist["runs"] if not r.get("calibration")]
        hist["runs"] += [dict(r, calibration=True) for r in done]
        save_history(path, hist)
        return spread, margin

    runs = []
    for f in args.from_runs or []:  # runs measured earlier (run --json, calibrate --json)
        got = json.loads(Path(f).read_text())
        runs += got if isinstance(got, list) else [got]
    if args.from_runs:
        if len(runs) < 2:
            ap.error("--from needs at least two runs")
        spread, margin = store(runs)
    for i in range(0 if args.from_runs else max(2, args.n)):
        print(f"calibration run {i + 1} of {max(2, args.n)}", flush=True)
        runs.append(profile(**kw))
        print(f"  {runs[-1]['seconds']:.0f} s, load {runs[-1]['load_average'][1]:.2f}")
        if args.json:
            args.json.write_text(json.dumps(runs, indent=1))
        if len(runs) >= 2:  # written after every run from the second on: a long calibration
            spread, margin = store(runs)  # stopped early keeps what it measured
    width = max([24] + [len(k) for k in spread])
    for k in spread:
        vals = ", ".join(f"{r['ratios'][k]:.3g}" for r in runs if k in r["ratios"])
        m_s = "not judged" if margin[k] is None else f"margin {100 * margin[k]:3.0f} %"
        print(f"  {k:{width}s} spread {100 * spread[k]:5.1f} %  {m_s}  ({vals})")
    print(f"margins written to {path}")
    return 2 if any(r.get("bench_status") for r in runs) else 0


if __name__ == "__main__":
    sys.exit(main())
