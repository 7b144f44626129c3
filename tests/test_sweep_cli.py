"""The ``fesub sweep CONFIG.toml`` command: configuration errors before any work, a run on a Dask
LocalCluster started by the command, the gathered file and the map."""

from __future__ import annotations

import socket
from pathlib import Path

import numpy as np
import pytest

from fesub import sweep as sw
from fesub.cli import main as cli_main

COULOMB_TOML = """
study = "coulomb_regime"
[grid]
r1 = [0.45, 1.5]
beta = {start = 0.1, stop = 1.2, num = 3}
[fixed]
gamma = [1.0, 1.0]
kappa = [1.0, 1.0]
"""


def _cfg(tmp_path, text, name="cfg.toml"):
    p = tmp_path / name
    p.write_text(text)
    return p


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _no_results(store: Path) -> bool:
    return not store.exists() or not any((store / "cases").glob("case-*"))


@pytest.mark.parametrize("text, extra, match", [
    ('study = "nope"\n[grid]\nx = [1.0]\n', [], "unknown study 'nope'"),
    ('study = "beam_on_beam_stability"\n[grid]\nmu = [0.1, 0.2]\ns = [0.01, 0.5]\n', [],
     r"s \(grid axis 's'\) must lie in \[0.005, 0.098\], got 0.5"),
    ('study = "beam_on_beam_stability"\n[grid]\nmu = [0.1]\ns = [0.01]\n[fixed]\nn_eig = 0\n', [],
     r"n_eig must lie in \[1, 200\]"),
    ('study = "beam_on_beam_stability"\n[grid]\nmu = [0.1]\n', [], "needs parameter 's'"),
    ('study = "beam_on_beam_stability"\n[grid]\nmu = {start = 0, stop = 1}\ns = [0.01]\n', [],
     r"grid.mu must be \{start, stop, num"),
    ('study = "beam_on_beam_stability"\n[grid]\nmu = [0.1]\ns = [0.01]\n[[cases]]\nmu = 0.1\n', [],
     "exactly one of"),
    ('study = "beam_on_beam_stability"\ngird = 1\n', [], r"unknown key\(s\) \['gird'\]"),
    ('study = "beam_on_beam_stability"\n[grid\n', [], "not valid TOML"),
    (COULOMB_TOML, ["--scheduler", "tcp://127.0.0.1:{port}", "--connect-timeout", "1"],
     "cannot reach the Dask scheduler at 'tcp://127.0.0.1:"),
    (COULOMB_TOML, ["--workers", "0"], "--workers must be >= 1"),
], ids=["unknown-study", "out-of-range", "int-out-of-range", "missing-param", "bad-linspace",
        "grid-and-cases", "unknown-key", "bad-toml", "unreachable-scheduler", "zero-workers"])
def test_bad_config_is_one_clear_error_and_no_results(tmp_path, capsys, text, extra, match):
    import re

    if "{port}" in " ".join(extra):
        pytest.importorskip("distributed")
        extra = [e.format(port=_free_port()) for e in extra]
    cfg = _cfg(tmp_path, text)
    rc = cli_main(["sweep", str(cfg), "--no-progress", "--no-plot", *extra])
    err = capsys.readouterr().err
    assert rc == 1
    assert err.startswith("fesub sweep: error: ") and re.search(match, err), err
    assert "Traceback" not in err  # one line, not a stack dump
    assert _no_results(tmp_path / "cfg.sweep")


def test_bad_config_does_not_start_a_cluster(tmp_path, capsys, monkeypatch):
    distributed = pytest.importorskip("distributed")

    def no_cluster(*a, **k):
        raise AssertionError("a LocalCluster was started for a configuration that is wrong")

    monkeypatch.setattr(distributed, "LocalCluster", no_cluster)
    cfg = _cfg(tmp_path, COULOMB_TOML.replace("r1 = [0.45, 1.5]", "r1 = [0.45, -1.5]"))
    rc = cli_main(["sweep", str(cfg), "--local-cluster", "2", "--no-progress", "--no-plot"])
    assert rc == 1 and "r1 (grid axis 'r1') must lie in (0.0, inf]" in capsys.readouterr().err
    assert _no_results(tmp_path / "cfg.sweep")


def test_local_cluster_run_gathers_results_and_draws_the_map(tmp_path, capsys):
    pytest.importorskip("distributed")
    pytest.importorskip("matplotlib")
    cfg = _cfg(tmp_path, COULOMB_TOML)
    rc = cli_main(["sweep", str(cfg), "--local-cluster", "2", "--no-progress"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "6 cases, 0 already in" in out and "6 computed, 0 failed, 0 missing" in out
    store = tmp_path / "cfg.sweep"
    assert (store / "map.png").stat().st_size > 1000
    # the gathered file holds what the store holds, and the store what a serial run computes
    ref = sw.run_sweep("coulomb_regime", tmp_path / "serial", grid={"r1": [0.45, 1.5],
                       "beta": np.linspace(0.1, 1.2, 3)}, fixed={"gamma": [1.0, 1.0], "kappa": [1.0, 1.0]},
                       executor="serial", progress=False)
    assert ref.complete
    want = sw.load_store(tmp_path / "serial")
    with np.load(store / "gathered.npz") as z:
        np.testing.assert_array_equal(z["axis_beta"], np.linspace(0.1, 1.2, 3))
        for name in ("regime_code", "periods", "stops_per_period"):
            np.testing.assert_array_equal(z[f"field_{name}"], want.fields[name])
        assert (z["status"] == 1).all()
    # running the command again finds everything done
    assert cli_main(["sweep", str(cfg), "--no-progress", "--no-plot"]) == 0
    assert "6 already in" in capsys.readouterr().out
