"""One exit status: every command-line error exits 2 with one line on stderr, a missing or
damaged file and a run whose results are not numbers included."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

from fesub import io
from fesub.cli import common
from fesub.errors import FesubError


def _fesub(env, *args, timeout=300):
    proc = subprocess.run([sys.executable, "-m", "fesub.cli", *args], capture_output=True, text=True,
                          env=env, timeout=timeout)
    return proc.returncode, proc.stderr.strip().splitlines()


def _damaged(tmp_path):
    import numpy as np
    import xarray as xr

    p = io.save_dataset(xr.Dataset({"x": ("t", np.arange(50.0))}), tmp_path / "r.nc")
    raw = bytearray(p.read_bytes())
    raw[len(raw) // 3] ^= 4
    p.write_bytes(bytes(raw))
    return p


def test_info_on_a_missing_or_damaged_file_exits_2_with_one_line(tmp_path, subprocess_env):
    """`fesub info` on a missing file exited 1."""
    for target in (tmp_path / "missing.nc", _damaged(tmp_path), tmp_path):
        rc, err = _fesub(subprocess_env, "info", str(target))
        assert rc == 2 and len(err) == 1 and err[0].startswith("fesub info: error: "), (target, err)


def test_an_empty_output_folder_is_refused(tmp_path, subprocess_env):
    """`--out ''` wrote into the current folder."""
    rc, err = _fesub(subprocess_env, "pad-on-beam", "--out", "")
    assert rc == 2 and len(err) == 1 and "--out: must name a folder" in err[0], err
    with pytest.raises(Exception, match="must name a folder"):
        common.out_dir("  ")


@pytest.mark.slow
def test_a_load_that_overflows_exits_2_not_0_with_nan(tmp_path, subprocess_env):
    """`--load 1e308` exited 0 with NaN in summary.json."""
    rc, err = _fesub(subprocess_env, "pad-on-beam", "--mu", "0.3", "--pad-nx", "4", "--t-load", "2e-4",
                     "--t-settle", "1e-4", "--drag-time", "2e-4", "--load", "1e308", "--no-figures", "-q",
                     "--out", str(tmp_path / "o"))
    assert rc == 2 and len(err) == 1 and "overflow" in err[0], err


def test_a_study_whose_results_are_not_numbers_fails(tmp_path):
    d = common.StudyDir(tmp_path / "o", "demo", {})
    rec = io.summary_record("demo", {}, {"x": (math.nan, "m"), "y": ([1.0, math.nan], "m"),
                                         "mu_crit": (math.inf, "1"), "ok": (1.0, "m")})
    with pytest.raises(FesubError, match=r"not numbers \(NaN: x, y\)"):
        d.finish(rec)
    written = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert written["status"] == "failed"
    d.finish(io.summary_record("demo", {}, {"mu_crit": (math.inf, "1")}))  # an infinity is a value
