"""The version lives in one place (fesub/__init__.py): the build, the command line, the docs,
the changelog and the README's wheel line agree with it."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import fesub

ROOT = Path(__file__).resolve().parents[1]


def test_the_build_reads_the_version_from_the_package():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in meta["project"] and "version" in meta["project"]["dynamic"]
    assert meta["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "fesub.version.__version__"}
    assert re.fullmatch(r"\d+\.\d+\.\d+(\.dev\d+|rc\d+)?", fesub.__version__)


def test_command_line_docs_changelog_and_readme_agree():
    out = subprocess.run([sys.executable, "-m", "fesub.cli", "--version"], capture_output=True,
                         text=True, cwd=ROOT, check=True).stdout
    assert out.strip() == f"fesub {fesub.__version__}"
    assert "release = fesub.__version__" in (ROOT / "docs" / "conf.py").read_text()
    assert f"## {fesub.__version__}" in (ROOT / "CHANGELOG.md").read_text()
    wheel = re.search(r"pip install (fesub-\S+\.whl)", (ROOT / "README.md").read_text())
    assert wheel and wheel.group(1).startswith(f"fesub-{fesub.__version__}-")
    assert "manylinux" in wheel.group(1)
