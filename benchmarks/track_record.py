"""The record of the quick profile's ratios per machine, and a run judged against it.

Part of the quick benchmark profile (``benchmarks/track.py``, whose docstring describes it). The
ratios of each machine are kept in ``benchmarks/history/<machine>.json`` (the machine named by its
CPU and core count), with, for each ratio, its measured run-to-run spread and the margin beyond
which a drop below the median of its last three records is a regression (:func:`floors`); the
margins come from the spread of a calibration's runs (:func:`margins_from`); a run on a machine
busier than every calibration run is judged with margins :data:`BUSY_WIDEN` times wider.
"""

from __future__ import annotations

import json
import os
import platform
import re
import statistics
from pathlib import Path

HERE = Path(__file__).resolve().parent
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


def cpu_signature() -> str | None:
    """The processor behind :func:`machine_name`: vendor, family, model and stepping from
    ``/proc/cpuinfo`` (``AuthenticAMD family 25 model 17 stepping 1``); None where unknown.

    A virtual machine may name its CPU only by its brand (``AMD EPYC``): two generations then
    share one history file, and their compiled-to-NumPy ratios differ by more than a margin
    (the same kernels, unchanged since the calibration, measured 395x against 616-778x recorded,
    on a family 25 model 17 EPYC against the one of the calibration)."""
    fields = {}
    try:
        with open("/proc/cpuinfo") as fh:
            for ln in fh:
                if not ln.strip():
                    break                          # the first processor's block
                key, _, val = ln.partition(":")
                fields[key.strip()] = val.strip()
    except OSError:
        return None
    if "cpu family" not in fields or "model" not in fields:
        return None
    return (f"{fields.get('vendor_id', '?')} family {fields['cpu family']} model {fields['model']} "
            f"stepping {fields.get('stepping', '?')}")


def other_cpu(hist: dict, cpu: str | None) -> str | None:
    """The processor the history ``hist`` was calibrated on when it is not ``cpu`` (this one);
    None when they are the same, or either is unknown (a history calibrated before the
    processor was recorded is judged as before)."""
    theirs = hist.get("cpu")
    return theirs if theirs and cpu and theirs != cpu else None


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
