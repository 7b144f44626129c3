"""Performance tracked by ratio, from one commit to the next: the quick benchmark profile.

This file is its command line and the check (a drop below the floor confirmed by measuring
again); beside it, ``track_measure.py`` takes one run's ratios (kernels, studies),
``track_bench.py`` runs the benchmarks and reads their ratios, ``track_record.py`` keeps the
history of each machine and judges a run against it.

The machines are shared and noisy, so nothing here compares absolute times. Every entry of the
profile is a ratio measured in one run:

* ``bench:<file>::<test>:<label>`` - every ``ratio_<label>`` a benchmark of ``benchmarks/``
  records in pytest-benchmark's ``extra_info`` (the ``ratio_to`` fixture of
  ``benchmarks/conftest.py``: the benchmark against its baseline timed in the same test).
  ``--bench`` runs them timed with a few rounds (``track_bench.BENCH_OPTIONS``) and reads their
  ``--benchmark-json``; those in ``track_bench.UNTIMED`` (too costly to time in the profile's
  budget) run once with ``--benchmark-disable`` instead, so that they cannot rot;
* ``kernel:*`` - a compiled kernel against its NumPy twin on a small problem, the two sides
  alternating round by round (median of ``--rounds`` of each, at least
  ``track_measure.KERNEL_ROUNDS``): the ratio falls when a kernel gets slower;
* ``study:*`` - a bundled study as a user runs it (``fesub STUDY ...`` in a fresh process, short
  configurations listed in ``track_measure.STUDIES``) against the same command on a stored build
  of an earlier commit (``benchmarks/history/BASELINE``: built once in place, in a cache folder,
  from ``git archive`` and ``setup.py build_ext --inplace``), alternating likewise: the ratio
  falls when a study gets slower as a whole, wherever its time goes (the kind of regression a kernel
  benchmark misses). Studies in ``track_measure.AS_USER`` run as a user types them (default
  flags, figures drawn); one may have its own baseline (``track_measure.STUDY_BASELINES``, the
  commit its speed goal in ``track_measure.STUDY_GOALS`` names); those in
  ``track_measure.OPT_IN`` run only when named with ``--studies``.

The ratios of each machine are kept in ``benchmarks/history/<machine>.json`` (the machine named by
its CPU and core count), with, for each ratio, its measured run-to-run spread and the margin
beyond which a drop below the median of its last three records is a regression. The margins come
from the spread measured by ``calibrate`` (the largest relative deviation from the median over
its runs): twice the spread, at least 20 %; a ratio whose margin would exceed 50 % is recorded
and plotted but not judged (its noise alone moves it by a quarter). Ratios may appear and vanish
(benchmarks are added, renamed, removed): a new ratio is recorded and judged once a calibration
gives it a margin; a ratio on record that a run did not measure is reported, not a failure.
A calibration also records the processor it ran on (vendor, family, model, stepping): a virtual
machine may name its CPU by its brand alone, and a run on another processor behind the same
name is reported and not judged until that processor is calibrated (a history from before the
processor was kept is judged as before).

A regression is a drop below the floor that the next measurements repeat: ``run`` measures the
ratios found below their floor again (only those: their benchmarks, kernels or studies), up to
``--confirm`` times (default 2), each time those still below it, and fails on those below it
every time. With some fifty judged ratios, each margin twice its measured spread, one or two
ratios of a run dip below their floor by noise alone (CI on unchanged code failed on two
different ratios in two runs; three runs of unchanged code at load 3-6 had two dips each, the
second measurement of two of them within 11 % of their floor); a slowed kernel stays below its
floor however often it is measured. A run on a machine busier than every
calibration run (its mean load average above the highest the calibration saw) is judged with
margins ``track_record.BUSY_WIDEN`` times wider, and says so: under contention some ratios move
beyond their calibrated spread, every time they are measured.

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
import json
import math
import os
import statistics
import sys
from pathlib import Path

# the parts of the profile beside this file (on the path when run as a script; not when loaded
# from its file by another program)
if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))

from track_bench import ROOT, bench_node, checkout_built
from track_measure import OPT_IN, STUDIES, profile
from track_record import (
    BUSY_WIDEN,
    busier,
    calibrated_load,
    floors,
    history_path,
    load_history,
    margins_from,
    missing,
    other_cpu,
    reference,
    run_margins,
    save_history,
)


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


def _print_check(run, hist, times: int = 1, **kw) -> int:
    if not hist.get("runs"):
        print(f"no ratios recorded for machine {hist['machine']}: nothing to compare with")
        return 0
    theirs = other_cpu(hist, run.get("cpu"))
    if theirs:
        print(f"the history of machine {hist['machine']} was calibrated on another processor "
              f"({theirs}; this one: {run['cpu']}): nothing judged (calibrate this one: "
              "python benchmarks/track.py calibrate --bench)")
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
    if checkout_built() and str(ROOT) not in sys.path:
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
        cpus = {r.get("cpu") for r in done} - {None}   # None: a run from before the CPU was kept
        if len(cpus) > 1:
            ap.error(f"the runs were measured on different processors: {sorted(map(str, cpus))}")
        hist["cpu"] = cpus.pop() if cpus else None
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
