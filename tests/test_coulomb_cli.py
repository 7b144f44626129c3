"""The ``fesub coulomb`` subcommand and the example script run end to end and write their files."""

from __future__ import annotations

import json
import runpy
import sys

import numpy as np
import pytest

from fesub.cli import main


def test_cli_writes_figures_and_numbers(tmp_path):
    rc = main(["coulomb", "--gamma", "1", "1", "--kappa", "1", "1", "--contact", "wall:1", "--load", "0",
               "--betas", "0", "0.3", "--nr", "60", "--numeric", "1", "--out", str(tmp_path), "--no-progress"])
    assert rc == 0
    for name in ("transmissibility_1.png", "transmissibility_2.png", "transmissibility_contact.png",
                 "phase.png", "regime_map.png", "time_history.png", "steady_state.npz",
                 "steady_state.json", "numeric.json"):
        assert (tmp_path / name).stat().st_size > 0
    # the time history is drawn at a continuous point (beta = 0.3 has one: spec row 18), and is
    # a real PNG listed in the run summary
    assert (tmp_path / "time_history.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert "time_history.png" in summary["figures"]
    meta = json.loads((tmp_path / "steady_state.json").read_text())
    assert meta["contact"] == {"kind": "wall", "idx": [1]}
    with np.load(tmp_path / "steady_state.npz") as f:
        assert f["Z"].shape == (2, 60)
    nums = json.loads((tmp_path / "numeric.json").read_text())
    assert len(nums) == 2


def test_cli_toml_config(tmp_path):
    cfg = tmp_path / "chain.toml"
    cfg.write_text('gamma = [1.0, 0.5]\nkappa = [1.0, 0.5]\ncontact = "masses:0,1"\n'
                   'betas = [0.0, 0.15]\nnr = 60\nnumeric = 0\n')
    assert main(["coulomb", "--config", str(cfg), "--out", str(tmp_path / "o"), "--no-progress"]) == 0
    assert (tmp_path / "o" / "regime_map.png").exists()


def test_cli_bad_input_is_a_clear_error(tmp_path, capsys):
    assert main(["coulomb", "--gamma", "1", "1", "--kappa", "1", "1", "--contact", "wall:7",
                 "--out", str(tmp_path)]) == 1
    assert "contact mass index" in capsys.readouterr().err
    bad = tmp_path / "bad.toml"
    bad.write_text("gamma = [1, 1]\nkappa = [1, 1]\nfoo = 3\n")
    assert main(["coulomb", "--config", str(bad), "--out", str(tmp_path)]) == 1
    assert "unknown keys" in capsys.readouterr().err
    assert main(["coulomb", "--mu", "0.5", "--out", str(tmp_path)]) == 1


def test_example_runs(tmp_path, monkeypatch, capsys):
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[1] / "examples" / "coulomb_2dof.py"
    monkeypatch.setattr(sys, "argv", [str(path), str(tmp_path)])
    runpy.run_path(str(path), run_name="__main__")
    assert (tmp_path / "X2.png").exists() and (tmp_path / "steady_state.npz").exists()
    assert "continuous" in capsys.readouterr().out
