"""``fesub STUDY --help`` answers at once: a child interpreter printing a study's help, timed
against a child interpreter that only imports NumPy (goal: the help at most as slow as that
import, ratio >= 1; the study modules import their numerical libraries only when they run)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import fesub


def _env():
    from pathlib import Path

    root = str(Path(fesub.__file__).resolve().parent.parent)
    return dict(os.environ, PYTHONPATH=root, OMP_NUM_THREADS="1")


def _child(*argv):
    subprocess.run([sys.executable, *argv], check=True, capture_output=True, env=_env())


@pytest.mark.parametrize("study", ["beam-on-beam", "backbone", "sweep"])
def test_help_time(benchmark, ratio_to, study):
    benchmark.extra_info["goal"] = "ratio_import_numpy >= 1 (help no slower than `import numpy`)"
    benchmark.pedantic(_child, args=("-m", "fesub.cli", study, "--help"), rounds=5, iterations=1)
    ratio_to("import_numpy", _child, "-c", "import numpy", rounds=5)
