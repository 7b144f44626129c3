"""The performance page, generated at build time from a pytest-benchmark JSON file.

Every benchmark in ``benchmarks/`` times its baseline in the same run and records ratios
(``ratio_<baseline>``) and goals (``goal_<name>``, ``meets_goal_<name>``) in ``extra_info``
(``benchmarks/conftest.py``). ``write_page`` renders them with the machine that measured them.
The file is taken from ``FESUB_BENCHMARK_JSON``, else ``docs/benchmarks.json``, else
``bench.json`` at the repository root; without one the page says how to produce it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


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
