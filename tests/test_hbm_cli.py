"""`fesub backbone` CLI, the per-case sweep function and the example script."""

from __future__ import annotations

import json
import math
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from fesub.cli import main
from fesub.errors import ParameterError
from fesub.hbm.analysis import solve_at
from fesub.hbm.models import build_model, forced_response_point


def test_cli_backbone_writes_results(tmp_path):
    out = tmp_path / "bb"
    rc = main(["backbone", "--model", "jenkins", "--nh", "1", "--frf-levels", "2",
               "--out", str(out), "--no-progress"])
    assert rc == 0
    s = json.loads((out / "summary.json").read_text())
    assert s["backbone"]["stop_reason"] == "lam_range"
    # every step that can fail without stopping the run records it here
    assert not s.get("failures")
    for name in ("frf_family.png", "contact_timeline.png", "energy.png", "backbone.npz",
                 "backbone.json", "frf_0.npz", "frf_1.npz"):
        assert (out / name).stat().st_size > 0
    d = np.load(out / "backbone.npz")
    # stuck limit of the Nh = 1 backbone: sqrt(2 - c^2/2) rad/s (linear, exact)
    assert d["w"][0] == pytest.approx(math.sqrt(2 - 0.02 ** 2 / 2), rel=1e-9)


def test_cli_backbone_compare_writes_baselines_and_nh_comparison(tmp_path):
    out = tmp_path / "cmp"
    rc = main(["backbone", "--model", "jenkins", "--nh", "3", "--compare", "--frf-levels", "1",
               "--out", str(out), "--no-progress"])
    assert rc == 0
    s = json.loads((out / "summary.json").read_text())
    assert not s.get("failures")
    assert s["nh"] == 3
    assert s["phase_resonance"]["stop_reason"] == "lam_range"
    assert s["dnnm"]["stop_reason"] == "lam_range"
    for name in ("method_comparison.png", "nh_comparison.png", "phase_resonance.npz",
                 "dnnm.npz", "backbone_nh1.npz", "backbone.npz"):
        assert (out / name).stat().st_size > 0
    # the stuck start of every curve is linear (m = 1, c = 0.02, k + kt = 2), exactly known:
    # RMS peak sqrt(2 - c^2/2) for both backbones, quadrature and damped-mode frequency sqrt 2
    # (solver tolerances 1e-8 .. 1e-11 -> 1e-9)
    w_rms, w_n = math.sqrt(2 - 0.02 ** 2 / 2), math.sqrt(2)
    assert np.load(out / "backbone.npz")["w"][0] == pytest.approx(w_rms, rel=1e-9)
    assert np.load(out / "backbone_nh1.npz")["w"][0] == pytest.approx(w_rms, rel=1e-9)
    assert np.load(out / "phase_resonance.npz")["w"][0] == pytest.approx(w_n, rel=1e-9)
    assert np.load(out / "dnnm.npz")["w0"][0] == pytest.approx(w_n, rel=1e-9)
    # both backbones end near the free resonance 1 rad/s (spec 5 B: 1.0033 at 0.2 N, Nh = 7)
    for name in ("backbone.npz", "backbone_nh1.npz"):
        assert 1.0 < np.load(out / name)["w"][-1] < 1.01


def test_cli_bad_input(tmp_path, capsys):
    rc = main(["backbone", "--model", "jenkins", "--alpha-min", "1", "--alpha-max", "0.1",
               "--out", str(tmp_path)])
    assert rc == 1
    assert "alpha-min" in capsys.readouterr().err


def test_forced_response_point_is_pure_and_picklable():
    f = pickle.loads(pickle.dumps(forced_response_point))
    r = f("jenkins_1dof", {"nh": 3}, 0.1, 1.1)
    assert r["converged"]
    sy = build_model("jenkins_1dof", {"nh": 3})
    Q = solve_at(sy, 1.1, 0.1)
    assert r["Am"] == pytest.approx(sy.amplitude(Q), rel=1e-12)
    assert len(r["harmonic_amplitudes"]) == 3
    json.dumps(r)  # JSON-friendly
    with pytest.raises(ParameterError, match="model_name"):
        forced_response_point("bridge", {}, 1.0, 1.0)
    with pytest.raises(ParameterError, match="unknown"):
        forced_response_point("cantilever_contact", {"length": 1.0}, 1.0, 1.0)


def test_example_runs():
    path = Path(__file__).resolve().parents[1] / "examples" / "hbm_jenkins.py"
    proc = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                          timeout=300, cwd=str(path.parents[1]),
                          env={"PYTHONPATH": str(path.parents[1]), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    assert "FRF peak" in proc.stdout
