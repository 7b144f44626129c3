"""The main study end to end: ``fesub beam-on-beam`` with its defaults, as a user runs it.

Wall time (goal: under 30 s on an idle machine) and peak resident memory of the process (goal:
under 2 GiB) of the default study (loci for mu = 0.1 and 0.3, the four 3.13 s transients, TD-FRF,
spectrograms, burst spectra, mode shapes), which by default spreads its independent parts over a
pool of as many worker processes as the machine has cores. Baselines in the same run:

* the same study in one process (``--jobs 1``: every part one after the other, the same numbers),
  whose ratio says what the pool brings on this machine;
* the same study with the eigenvalue analyses on a 120-mode Ritz basis and a dense ``eig`` per
  position (``--basis-modes 120``, the default before the exact loci by the secular roots), whose
  ratio says what the exact loci bring;
* the same command on a short configuration (0.02 s transients, coarse loci, numbers only), once
  compiled and once on the NumPy twins, whose ratio says how much of the study the compiled
  kernels carry;
* with ``FESUB_BENCH_STUDY_CHECKOUT`` naming a source tree of an earlier version (kernels built in
  place), that version's own default study (median of 5 rounds, against the median of 5 of
  today's): goal 3x. Measured against the tree of 9d51351 (the study before its parts ran on a
  pool, with exact loci and fast noise), load 1.0-1.4: 24.8 s against 78.4 s, 3.16x.

Under ``--benchmark-disable`` only short configurations run.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np

SHORT = ["--duration", "0.02", "--loci-step", "0.005", "--no-figures"]


def _run_study(out, extra=(), backend="auto", checkout=None):
    """Run the CLI in a fresh process (the package of ``checkout``, a source tree with its kernels
    built in place, when given); return (wall time s, peak RSS MiB)."""
    env = dict(os.environ, FESUB_BACKEND=backend, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1")
    if checkout is not None:
        env["PYTHONPATH"] = str(checkout)
    cmd = [sys.executable, "-m", "fesub", "beam-on-beam", "--quiet", "--out", str(out), *extra]
    t0 = time.perf_counter()
    # cwd outside the checkout, so that -m imports the installed package, not ./fesub
    proc = subprocess.Popen(cmd, env=env, cwd=str(out.parent), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    assert proc.returncode == 0, err[-2000:]
    return wall, usage.ru_maxrss / 1024.0        # ru_maxrss is in KiB on Linux


def test_bench_default_study(benchmark, goal, tmp_path):
    extra = SHORT if benchmark.disabled else []
    peaks = []

    def run():  # each round in a new folder: a study resumes the parts it finds done
        wall, peak = _run_study(tmp_path / f"default_{len(peaks)}", extra)
        peaks.append(peak)
        return wall

    # medians of 5 rounds for the ratios against an earlier version (below)
    benchmark.pedantic(run, rounds=1 if benchmark.disabled else 5, iterations=1)
    assert (tmp_path / "default_0" / "summary.json").is_file()
    benchmark.extra_info["configuration"] = "short" if benchmark.disabled else "default"
    goal("median_s", 30.0)
    goal("peak_rss_mib", 2048.0, value=max(peaks))

    # baseline: the same study in one process, without the pool
    t_one, _ = _run_study(tmp_path / "one_job", [*extra, "--jobs", "1"])
    benchmark.extra_info["one_job_study_s"] = t_one
    if not benchmark.disabled:
        benchmark.extra_info["ratio_one_job_study"] = t_one / benchmark.stats.stats.median

    # baseline: the same study with the Ritz-basis eigenvalue analyses (the former default)
    t_ritz, _ = _run_study(tmp_path / "ritz_basis", [*extra, "--basis-modes", "120"])
    benchmark.extra_info["ritz_basis_study_s"] = t_ritz
    if not benchmark.disabled:
        # what the exact loci bring within today's study (the 3x goal is against the earlier
        # version as a whole, below)
        benchmark.extra_info["ratio_ritz_basis_study"] = t_ritz / benchmark.stats.stats.median

    # baseline: an earlier version of the package (a source tree with its kernels built in place,
    # e.g. ``git worktree add /tmp/old REV && cd /tmp/old && python setup.py build_ext --inplace``)
    # named by FESUB_BENCH_STUDY_CHECKOUT, running its own default study (median of 5): goal 3x
    old = os.environ.get("FESUB_BENCH_STUDY_CHECKOUT")
    if old and not benchmark.disabled:
        olds = [_run_study(tmp_path / f"checkout_{k}", [], checkout=old)[0] for k in range(5)]
        t_old = float(np.median(olds))
        benchmark.extra_info.update(checkout=old, checkout_study_s=t_old, checkout_study_rounds_s=olds)
        goal("ratio_checkout_study", 3.0, value=t_old / benchmark.stats.stats.median, higher=True)

    # baseline: the short configuration on the compiled kernels and on the NumPy twins
    t_c, _ = _run_study(tmp_path / "short_compiled", SHORT, "auto")
    t_p, _ = _run_study(tmp_path / "short_python", SHORT, "python")
    benchmark.extra_info.update(short_compiled_s=t_c, short_numpy_twin_s=t_p,
                                ratio_numpy_twin_short_study=t_p / t_c)
