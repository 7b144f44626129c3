"""The validation page, generated at build time: the test suite's own checks, measured now.

``write_page`` runs a set of fast test modules with ``FESUB_VALIDATION_LOG`` set: every
``numpy.testing.assert_allclose`` that passes in them appends a record (test, measured error,
tolerance) through ``tests/conftest.py``. The table lists, per test, the worst record: the largest
error measured against the test's reference (a closed form, a second method, finite differences, a
peer's result, as the test's docstring says) and the tolerance the test allows. Nothing is typed
by hand; a check that fails fails the documentation build.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: fast test modules whose assertions compare with independent references (about 30 s)
MODULES = [
    "tests/test_coulomb_analytic.py",      # closed forms, the spec's facts, second methods
    "tests/test_circular_profiles.py",     # closed forms against two independent quadratures
    "tests/test_fe_beam.py",               # cantilever against the Euler-Bernoulli closed form
    "tests/test_fe_patch.py",              # patch tests: exact linear fields, rigid-body modes
    "tests/test_fe_modal.py",              # sparse shift-invert against dense LAPACK
    "tests/test_nonsmooth_laws.py",        # free-play laws, radius of influence
]


def run_checks(log: Path) -> float:
    """Run :data:`MODULES` with the records on; returns the wall time (s)."""
    env = dict(os.environ, FESUB_VALIDATION_LOG=str(log), MPLBACKEND="Agg", PYTHONSAFEPATH="1",
               OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "pytest", *MODULES, "-q", "-m", "not slow",
                           "-p", "no:cacheprovider", "-p", "no:randomly"],
                          cwd=ROOT, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError("validation checks failed:\n" + proc.stdout[-4000:] + proc.stderr[-2000:])
    return time.perf_counter() - t0


def _first_sentence(doc: str) -> str:
    text = " ".join(doc.split())
    cut = text.find(". ")
    text = text if cut < 0 else text[:cut + 1]
    return text.replace("|", "\\|").replace("*", "\\*").replace("`", "``").replace("````", "``")


def _from_name(nodeid: str) -> str:
    """A test without a docstring is described by its name (``test_closed_forms_agree`` ->
    "closed forms agree")."""
    words = nodeid.partition("::")[2].removeprefix("test_").replace("_", " ")
    return words[:1].upper() + words[1:] + " (from the test's name)."


def _test_name(nodeid: str) -> str:
    path, _, name = nodeid.partition("::")
    return f"``{Path(path).stem}::{name}``"


def table(records: list[dict]) -> list[str]:
    """One row per test: its worst record (largest share of the allowed error used)."""
    worst: dict[str, dict] = {}
    for r in records:
        key = r["test"].split("[")[0]
        if key not in worst or r["used"] > worst[key]["used"]:
            worst[key] = dict(r, n=worst.get(key, {}).get("n", 0))
        worst[key]["n"] = worst[key].get("n", 0) + 1
    lines = [".. list-table::", "   :header-rows: 1", "   :widths: 28 40 10 10 12", "",
             "   * - test", "     - what it checks against", "     - measured error",
             "     - tolerance", "     - share of tolerance used"]
    for key in sorted(worst):
        r = worst[key]
        if r["rtol"] > 0 and r["measured_rel"] is not None:
            measured, tol = f"{r['measured_rel']:.2e} (rel.)", f"rtol {r['rtol']:.0e}"
            if r["atol"] > 0:
                tol += f", atol {r['atol']:.0e}"
        else:
            measured, tol = f"{r['measured_abs']:.2e} (abs.)", f"atol {r['atol']:.0e}"
        lines += [f"   * - {_test_name(key)}", f"     - {_first_sentence(r['doc']) or _from_name(key)}",
                  f"     - {measured}", f"     - {tol}", f"     - {100 * r['used']:.2g} % ({r['n']} checks)"]
    return lines


def write_page(path: Path) -> None:
    """Run the checks and write the reST table included by ``validation.rst``."""
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "records.jsonl"
        seconds = run_checks(log)
        records = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    rows = table(records)
    head = [f"Measured while this page was built: {len(records)} comparisons in "
            f"{len({r['test'].split('[')[0] for r in records})} tests of {len(MODULES)} modules "
            f"({seconds:.0f} s).", ""]
    path.write_text("\n".join(head + rows) + "\n")
