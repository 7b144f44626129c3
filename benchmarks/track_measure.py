"""One measurement of the quick profile: kernels against their twins, studies against a baseline.

Part of the quick benchmark profile (``benchmarks/track.py``, whose docstring describes it):
:func:`measure` takes every ratio of one run (the benchmarks' through
:mod:`track_bench`, the kernel cases of :func:`_kernel_cases` and the studies of :data:`STUDIES`,
each side alternating with its baseline round by round, :func:`alternate`); :func:`profile`
samples the machine's load average while it runs (:class:`LoadSampler`). A study's baseline is a
stored build of an earlier commit (:func:`baseline_tree`).
"""

from __future__ import annotations

import datetime as _dt
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from track_bench import ROOT, bench_ratios, child_env, run_benchmarks
from track_record import HISTORY, cpu_signature

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
    env = child_env()
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
            "what": what, "cpu": cpu_signature(), **({"goals": goals} if goals else {}), **extra}


def _git(*args) -> str | None:
    try:
        return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True,
                              check=True).stdout.strip() or None
    except (OSError, subprocess.CalledProcessError):
        return None
