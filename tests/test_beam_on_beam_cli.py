"""``fesub beam-on-beam`` end to end on a short, coarse run: files, summary fields, bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest

from fesub.cli import main
from fesub.contact.transient import TransientResult


def test_short_study_writes_figures_signals_and_summary(tmp_path):
    out = tmp_path / "bob"
    rc = main(["beam-on-beam", "--mu", "0.3", "--roughness", "on", "--duration", "0.02",
               "--loci-step", "0.005", "--out", str(out), "--quiet"])
    assert rc == 0
    s = json.loads((out / "summary.json").read_text())
    tr = s["transients"]["mu0.3_rough"]
    for key in ("status", "stop_reason", "steps", "time_step_s", "wall_time_s", "steps_per_second",
                "max_abs_a_T_y_m_s2", "min_lambda_N", "min_v_t_m_s", "bursts_s", "burst_dominant_hz"):
        assert key in tr, key
    assert tr["status"] == "completed"
    # the explicit step is below the critical one, and steps x h covers the requested duration
    assert tr["time_step_s"] < tr["critical_time_step_s"]
    assert abs(tr["steps"] * tr["time_step_s"] - 0.02) < 2 * tr["time_step_s"]
    assert set(s["eigen"]["max_real_part_per_mu"]) == {"0.1", "0.3"}
    assert s["eigen"]["max_real_part_per_mu"]["0.1"] < 0
    assert "critical_mu" in s["eigen"] and "paper_checks" in s
    # the saved signals reload and agree with the summary
    res = TransientResult.load(out / "transient_mu0.3_rough")
    assert np.isclose(res.signals["lambda"].min(), tr["min_lambda_N"])
    for png in ("loci_mu0.1.png", "loci_mu0.3.png", "transient_mu0.3_rough.png",
                "spectrogram_mu0.3_rough.png", "tdfrf.png"):
        assert (out / png).stat().st_size > 5_000, png


@pytest.mark.parametrize("argv", [["--mu", "-0.1"], ["--duration", "0"], ["--loci-step", "0.5"]])
def test_bad_arguments_are_clear_errors(tmp_path, argv, capsys):
    rc = main(["beam-on-beam", *argv, "--out", str(tmp_path / "o"), "--quiet", "--no-figures"])
    assert rc == 1
    err = capsys.readouterr().err
    assert err.startswith("fesub beam-on-beam: error:") and "must" in err
    assert not (tmp_path / "o" / "summary.json").exists()


def test_paper_checks_tie_each_burst_to_an_unstable_position_and_frequency():
    """A burst counts as explained only where C crossed a position with a positive real part at
    the burst's frequency (1 %): a burst at a stable position, or at another frequency, does not."""
    from types import SimpleNamespace

    from fesub.models.beam_on_beam_cli import UNSTABLE_MU, _paper_checks

    positions = np.arange(0.040, 0.060, 0.25e-3)
    hot = np.argmin(np.abs(positions - 0.0455))
    loci = {UNSTABLE_MU: SimpleNamespace(
        positions=positions, max_real=140.0,
        unstable=lambda: [(float(positions[hot]), 10_600.0, 140.0)])}
    bursts = {"burst_dominant_hz": [10_650.0, 10_650.0, 10_200.0],
              "burst_positions_m": [[0.0448, 0.0453], [0.0940, 0.0945], [0.0450, 0.0456]]}
    info = {"min_lambda_N": 0.3, "status": "completed", "min_v_t_m_s": 0.02, **bursts}
    checks = _paper_checks(loci, {"mu0.3_smooth": info})
    key = "mu0.3_smooth: bursts where an eigenvalue of the same frequency has a positive real part"
    # within one loci step (0.25 mm) of the hot position and 0.5 % off in frequency; 48.5 mm
    # away; 3.8 % off
    assert checks[key] == [True, False, False]
    assert checks["mu0.3_smooth: slave never stops sliding forwards"]
