"""The performance page, generated at build time from a pytest-benchmark JSON file.

Every benchmark in ``benchmarks/`` times its baseline in the same run and records ratios
(``ratio_<baseline>``) and goals (``goal_<name>``, ``meets_goal_<name>``) in ``extra_info``
(``benchmarks/conftest.py``). ``write_page`` renders them with the machine that measured them.
The file is taken from ``FESUB_BENCHMARK_JSON``, else ``docs/benchmarks.json``, else
``bench.json`` at the repository root; without one the page says how to produce it.

``write_history`` draws the ratios of the quick profile (``benchmarks/track.py``) recorded in
``benchmarks/history/<machine>.json``, one figure per machine, with the margin of each ratio.
"""

from __future__ import annotations

import json
import os
import statistics
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: the smallest margin benchmarks/track.py gives a ratio (MARGIN_MIN of benchmarks/track_record.py)
MARGIN_FLOOR = 0.20


def find_json() -> Path | None:
    for cand in (os.environ.get("FESUB_BENCHMARK_JSON"), ROOT / "docs" / "benchmarks.json",
                 ROOT / "bench.json"):
        if cand and Path(cand).is_file():
            return Path(cand)
    return None


def _fmt(x) -> str:
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, (int, float)):
        return f"{x:.3g}"
    return str(x)


def rows(data: dict) -> list[tuple[str, str, str, str, str]]:
    """(benchmark, measured, value, goal, met) per ratio or goal in ``extra_info``."""
    out = []
    for b in data.get("benchmarks", []):
        info = b.get("extra_info", {})
        name = b.get("name", "?")
        median = b.get("stats", {}).get("median")
        for key, val in sorted(info.items()):
            if key.startswith("ratio_"):
                out.append((name, f"speed-up over {key[6:]}", _fmt(val), "n/a", "n/a"))
            elif key.startswith("goal_"):
                what = key[5:]
                value = info.get(what, median if what == "median_s" else None)
                out.append((name, what, _fmt(value), _fmt(val),
                            _fmt(info.get(f"meets_goal_{what}", "n/a"))))
    return out


def write_page(path: Path) -> None:
    """Write the reST included by ``performance.rst``."""
    src = find_json()
    if src is None:
        path.write_text(
            "No benchmark file was found when this page was built. Produce one with::\n\n"
            "    pytest benchmarks --benchmark-json=bench.json\n\n"
            "at the repository root (or point ``FESUB_BENCHMARK_JSON`` at a file) and build "
            "the documentation again.\n")
        return
    data = json.loads(src.read_text())
    mach = data.get("machine_info", {})
    cpu = mach.get("cpu", {})
    lines = [f"From ``{src.name}``, measured {data.get('datetime', '?')} with fesub "
             f"{data.get('commit_info', {}).get('id', '')[:10] or ''} on "
             f"{cpu.get('brand_raw', mach.get('processor', '?'))} "
             f"({cpu.get('count', '?')} cores), {mach.get('python_implementation', '')} "
             f"{mach.get('python_version', '')}, {mach.get('system', '')} {mach.get('release', '')}.",
             "", ".. list-table::", "   :header-rows: 1", "",
             "   * - benchmark", "     - quantity", "     - measured", "     - goal", "     - met"]
    for r in rows(data):
        lines += [f"   * - ``{r[0]}``"] + [f"     - {c}" for c in r[1:]]
    if not rows(data):
        lines = lines[:1] + ["", "The file holds no ratios or goals (was it run with "
                             "``--benchmark-disable``?)."]
    path.write_text("\n".join(lines) + "\n")


def _history_files() -> list[Path]:
    return sorted((ROOT / "benchmarks" / "history").glob("*.json"))


def write_history(path: Path, fig_dir: Path) -> None:
    """Write the reST of the tracked ratios (one plot and one table per machine)."""
    files = _history_files()
    if not files:
        path.write_text("No ratios are recorded yet (``python benchmarks/track.py run "
                        "--record``).\n")
        return
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lines = []
    for f in files:
        hist = json.loads(f.read_text())
        runs = hist.get("runs", [])
        if not runs:
            continue
        names = sorted({k for r in runs for k in r["ratios"]})
        own = [n for n in names if not n.startswith("bench:")]
        bench = [n for n in names if n.startswith("bench:")]
        x = list(range(1, len(runs) + 1))
        fig, axes = plt.subplots(2 if bench else 1, 1, figsize=(8.0, 8.0 if bench else 4.5),
                                 squeeze=False, sharex=True)
        ax = axes[0, 0]
        for name in own:
            y = [r["ratios"].get(name, float("nan")) for r in runs]
            ax.plot(x, y, marker="o", label=name)
        ax.set_yscale("log")
        ax.set_ylabel("ratio to the in-run baseline [-]")
        ax.set_title(f"Quick profile on {hist['machine']}: kernels and studies")
        ax.grid(True, which="both", alpha=0.3)
        if own:
            ax.legend(fontsize=7, ncol=2, loc="best")
        if bench:
            # dozens of ratios of very different sizes: each over its own median on record, so
            # that a drop reads the same for all of them
            ax = axes[1, 0]
            lo, hi = 0.5, 2.0
            for name in bench:
                vals = [r["ratios"].get(name, float("nan")) for r in runs]
                med = statistics.median(v for v in vals if v == v)
                rel = [v / med for v in vals]
                lo, hi = min([lo] + [v for v in rel if v == v]), max([hi] + [v for v in rel if v == v])
                ax.plot(x, rel, marker=".", lw=0.8, alpha=0.7)
            ax.set_ylim(lo / 1.1, hi * 1.1)
            ax.axhspan(1.0 - MARGIN_FLOOR, 1.0 + MARGIN_FLOOR, color="0.85", zorder=0,
                       label=f"the narrowest margin ({100 * MARGIN_FLOOR:.0f} %)")
            ax.set_yscale("log")
            ax.set_ylabel("ratio over its median on record [-]")
            ax.set_title(f"the {len(bench)} ratios the benchmarks record (ratio_* in extra_info)")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=7, loc="lower left")
        axes[-1, 0].set_xlabel("recorded run [-] (oldest first)")
        axes[-1, 0].set_xticks(x)
        png = fig_dir / f"performance_history_{f.stem}.png"
        fig.savefig(png, dpi=110, bbox_inches="tight")
        plt.close(fig)
        last = runs[-1]
        lines += [hist["machine"], "-" * len(hist["machine"]), "",
                  f".. figure:: _generated/{png.name}", "   :width: 90%", "",
                  f"   The ratios of the quick profile, each recorded run (last: {last['date']}, "
                  f"commit {last.get('commit')}, load average "
                  f"{last['load_average'][0]:.2f}; {last['seconds']:.0f} s).", "",
                  ".. list-table::", "   :header-rows: 1", "",
                  "   * - ratio", "     - what", "     - last", "     - spread", "     - margin"]
        for name in names:
            m, sp = hist.get("margins", {}).get(name), hist.get("spread", {}).get(name)
            v = last["ratios"].get(name)
            what = next((r["what"][name] for r in reversed(runs)
                         if name in r.get("what", {})), "")
            if name.startswith("bench:") and what:
                what = f"``{what}``"  # a pytest node id: literal text
            if m is not None:
                m_s = f"{100 * m:.0f} %"
            else:
                m_s = "not judged" if sp is not None else "not calibrated"
            lines += [f"   * - ``{name}``", f"     - {what}",
                      f"     - {_fmt(v) + 'x' if v is not None else 'not in the last run'}",
                      f"     - {f'{100 * sp:.1f} %' if sp is not None else 'n/a'}",
                      f"     - {m_s}"]
        lines.append("")
    path.write_text("\n".join(lines) + "\n")
