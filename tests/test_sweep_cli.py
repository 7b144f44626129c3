"""The ``fesub sweep CONFIG.toml`` command: bad input refused in one line before any work, a run on a
Dask LocalCluster started by the command, interrupt / resume / --overwrite in a child process, the
result folder reopened by ``fesub.load``, summary.json and report.html, and the figure.

A small test study, ``cli_probe`` (y = x**2 + offset, with a log of every computation), lives in a
module written to a temporary directory, so that a child ``fesub sweep`` process and spawned pool
workers import it (``FESUB_SWEEP_PLUGINS``).
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import fesub
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

PROBE_MODULE = "fesub_cli_probe"
PROBE_SOURCE = '''
"""Test study of the sweep CLI tests: y = x**2 + offset (m^2), with a log of every computation."""
import os
import time

from fesub.sweep import Param, Study, register_study


def cli_probe(params):
    time.sleep(params["delay"])
    if params["log"]:
        fd = os.open(params["log"], os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        try:
            os.write(fd, f"{os.environ.get('PROBE_RUN', '-')} {params['x']!r} {params['offset']!r}\\n"
                     .encode())
        finally:
            os.close(fd)
    return {"y": params["x"] ** 2 + params["offset"], "half": [0.5 * params["x"]] * 2}


register_study(Study(
    "cli_probe", cli_probe,
    (Param("x", -100.0, 100.0, unit="m"),
     Param("offset", -10.0, 10.0, required=False, default=0.0, unit="m^2"),
     Param("delay", 0.0, 5.0, required=False, default=0.0, unit="s"),
     Param("log", kind="any", required=False, default=None)),
    doc="CLI test study", primary="y", units={"y": "m^2", "half": "m"}), replace=True)
'''


@pytest.fixture(scope="module")
def probe_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli-probe")
    (d / f"{PROBE_MODULE}.py").write_text(PROBE_SOURCE)
    sys.path.insert(0, str(d))
    __import__(PROBE_MODULE)
    yield d
    sys.path.remove(str(d))


@pytest.fixture
def probe_env(probe_dir, subprocess_env):
    """Environment of a child ``fesub sweep``: fesub and the probe study importable."""
    path = os.pathsep.join([str(probe_dir), subprocess_env["PYTHONPATH"]])
    return dict(subprocess_env, PYTHONPATH=path, FESUB_SWEEP_PLUGINS=PROBE_MODULE)


def _cfg(tmp_path, text, name="cfg.toml"):
    p = tmp_path / name
    p.write_text(text)
    return p


def _probe_cfg(tmp_path, n, delay=0.0, log=None, name="cfg.toml"):
    log_line = f'log = "{log}"\n' if log else ""
    return _cfg(tmp_path, f'study = "cli_probe"\n[grid]\nx = {{start = 0, stop = {n - 1}, num = {n}}}\n'
                          f'offset = [0.0, 0.5]\n[fixed]\ndelay = {delay}\n{log_line}', name)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _case_files(store: Path):
    d = store / "cases"
    return sorted(p for p in d.iterdir() if p.name.startswith("case-")) if d.is_dir() else []


def _log(path, run):
    """(x, offset) of every computation the probe logged in run ``run``."""
    p = Path(path)
    rows = [ln.split() for ln in p.read_text().splitlines()] if p.exists() else []
    return sorted((float(r[1]), float(r[2])) for r in rows if r[0] == run)


def _cmd(cfg, *extra):
    return [sys.executable, "-m", "fesub.cli", "sweep", str(cfg), *extra]


# ------------------------------------------------------------------------------------------------
# bad input: one line, exit status 2 (1 for a scheduler that cannot be reached), nothing written
# ------------------------------------------------------------------------------------------------

BAD = [
    ('study = "nope"\n[grid]\nx = [1.0]\n', [], 2, "unknown study 'nope'"),
    ('study = "beam_on_beam_stability"\n[grid]\nmu = [0.1, 0.2]\ns = [0.01, 0.5]\n', [], 2,
     r"s \(grid axis 's'\) must lie in \[0.005, 0.098\], got 0.5"),
    ('study = "beam_on_beam_stability"\n[grid]\nmu = [0.1]\ns = [0.01]\n[fixed]\nn_eig = 0\n', [], 2,
     r"n_eig must lie in \[1, 200\]"),
    ('study = "beam_on_beam_stability"\n[grid]\nmu = [0.1]\n', [], 2, "needs parameter 's'"),
    ('study = "beam_on_beam_stability"\n[grid]\nmu = {start = 0, stop = 1}\ns = [0.01]\n', [], 2,
     r"grid.mu must be \{start, stop, num"),
    ('study = "beam_on_beam_stability"\n[grid]\nmu = {start = 0, stop = 1, num = 0}\ns = [0.01]\n',
     [], 2, r"grid.mu.num must be an integer >= 1, got 0"),
    ('study = "beam_on_beam_stability"\n[grid]\nmu = [0.1]\ns = [0.01]\n[[cases]]\nmu = 0.1\n', [], 2,
     "exactly one of"),
    ('study = "beam_on_beam_stability"\ngird = 1\n', [], 2, r"unknown key\(s\) \['gird'\]"),
    ('study = "beam_on_beam_stability"\n[grid\n', [], 2, "not valid TOML"),
    (b'study = "beam_on_beam_stability"\n# d\xe9bit\n', [], 2, r"is not UTF-8 text \(byte 36"),
    # a billion cases are counted, not built
    ('study = "beam_on_beam_stability"\n[grid]\nmu = {start = 0, stop = 1, num = 1000000000}\n'
     's = [0.01]\n', [], 2, r"has 1,000,000,000 cases, more than max_cases = 1,000,000"),
    (COULOMB_TOML, ["--max-cases", "5"], 2, "has 6 cases, more than max_cases = 5"),
    (COULOMB_TOML, ["--scheduler", "tcp://127.0.0.1:{port}", "--connect-timeout", "1"], 2,
     "cannot reach the Dask scheduler at 'tcp://127.0.0.1:"),
    (COULOMB_TOML, ["-j", "0"], 2, r"argument -j/--jobs: must be an integer >= 1, got 0"),
    (COULOMB_TOML, ["--connect-timeout", "-1"], 2, r"--connect-timeout: must be > 0 s, got -1"),
    (COULOMB_TOML, ["--connect-timeout", "nan"], 2, r"--connect-timeout: must be > 0 s, got nan"),
    (COULOMB_TOML, ["--local-cluster", "0"], 2, r"--local-cluster: must be an integer >= 1, got 0"),
    (COULOMB_TOML, ["--max-cases", "0"], 2, r"--max-cases: must be an integer >= 1, got 0"),
    (COULOMB_TOML, ["--out", "{file}"], 2, r"--out .*is an existing file, not a folder"),
    (COULOMB_TOML, ["--out", "{file}/sub"], 2, r"--out .*is a file, not a folder"),
]


@pytest.mark.parametrize("text, extra, status, match", BAD, ids=[
    "unknown-study", "out-of-range", "int-out-of-range", "missing-param", "bad-linspace", "zero-num",
    "grid-and-cases", "unknown-key", "bad-toml", "not-utf8", "billion-cases", "max-cases",
    "unreachable-scheduler", "zero-jobs", "negative-timeout", "nan-timeout", "zero-local-cluster",
    "zero-max-cases", "out-is-a-file", "out-under-a-file"])
def test_bad_input_is_one_line_and_writes_nothing(tmp_path, capsys, monkeypatch, text, extra,
                                                  status, match):
    if "{port}" in " ".join(extra):
        pytest.importorskip("distributed")
    monkeypatch.chdir(tmp_path)
    a_file = tmp_path / "a_file"
    a_file.write_text("not a folder")
    extra = [e.format(port=_free_port(), file=a_file) for e in extra]
    cfg = tmp_path / "cfg.toml"
    cfg.write_bytes(text if isinstance(text, bytes) else text.encode())
    before = sorted(p.name for p in tmp_path.iterdir())
    t0 = time.monotonic()
    rc = cli_main(["sweep", str(cfg), "-q", *extra])
    err = capsys.readouterr().err
    assert rc == status, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("fesub sweep: error: "), err
    assert re.search(match, lines[0]), lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no fesub-out, no store
    assert time.monotonic() - t0 < 30  # nothing was built (a billion cases would not be)


def test_bad_config_does_not_start_a_cluster(tmp_path, capsys, monkeypatch):
    distributed = pytest.importorskip("distributed")

    def no_cluster(*a, **k):
        raise AssertionError("a LocalCluster was started for a configuration that is wrong")

    monkeypatch.setattr(distributed, "LocalCluster", no_cluster)
    cfg = _cfg(tmp_path, COULOMB_TOML.replace("r1 = [0.45, 1.5]", "r1 = [0.45, -1.5]"))
    rc = cli_main(["sweep", str(cfg), "--local-cluster", "2", "-q", "--out", str(tmp_path / "o")])
    assert rc == 2 and "r1 (grid axis 'r1') must lie in (0.0, inf]" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_another_sweep_in_the_same_folder_is_refused_before_any_work(probe_dir, tmp_path, capsys):
    out = tmp_path / "o"
    assert cli_main(["sweep", str(_probe_cfg(tmp_path, 2)), "-q", "--no-figures", "--out", str(out)]) == 0
    files = {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file()}
    capsys.readouterr()
    other = _probe_cfg(tmp_path, 3, name="other.toml")
    assert cli_main(["sweep", str(other), "-q", "--out", str(out)]) == 2  # every command-line error: status 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "holds a different sweep" in err[0], err
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file()} == files


# ------------------------------------------------------------------------------------------------
# a run on a LocalCluster started by the command; the gathered file holds what the store holds
# ------------------------------------------------------------------------------------------------


def test_local_cluster_run_gathers_results_and_draws_the_map(tmp_path, capsys, monkeypatch,
                                                             drawn_figures):
    pytest.importorskip("distributed")
    from fesub.plots import style

    monkeypatch.chdir(tmp_path)
    cfg = _cfg(tmp_path, COULOMB_TOML)
    rc = cli_main(["sweep", str(cfg), "--local-cluster", "2", "-q"])
    assert rc == 0, capsys.readouterr()
    store = tmp_path / "fesub-out" / "sweep" / "cfg"  # the default output folder
    assert (store / "map.png").stat().st_size > 1000
    # the regime map: a discrete colour scale named by regime, axes with their units
    ((fig, path),) = drawn_figures
    assert Path(path).resolve() == store / "map.png" and style.check_figure(fig) == []
    ax = fig.axes[0]
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("beta [-]", "r1 [-]")
    assert [t.get_text() for t in fig.axes[1].get_yticklabels()] == ["continuous", "stick-slip", "stuck"]
    # the store holds what a serial run computes
    ref = sw.run_sweep("coulomb_regime", tmp_path / "serial", grid={"r1": [0.45, 1.5],
                       "beta": np.linspace(0.1, 1.2, 3)}, fixed={"gamma": [1.0, 1.0], "kappa": [1.0, 1.0]},
                       executor="serial", progress=False)
    assert ref.complete
    want = sw.load_store(tmp_path / "serial")
    got = fesub.load(store / "gathered.nc")
    np.testing.assert_array_equal(got.axes["beta"], np.linspace(0.1, 1.2, 3))
    for name in ("regime_code", "periods", "stops_per_period"):
        np.testing.assert_array_equal(got.fields[name], want.fields[name])
    assert (got.status == 1).all()
    # running the command again finds everything done
    assert cli_main(["sweep", str(cfg), "--no-figures"]) == 0
    assert "6 already in" in capsys.readouterr().out


# ------------------------------------------------------------------------------------------------
# interrupt, resume, --overwrite (a child process, as a user runs it)
# ------------------------------------------------------------------------------------------------


def test_sigint_keeps_finished_cases_resume_skips_them_overwrite_recomputes(probe_env, tmp_path,
                                                                           sigint_when):
    n = 6  # x 2 offsets = 12 cases of 0.15 s on one worker
    log = tmp_path / "calls.log"
    cfg = _probe_cfg(tmp_path, n, delay=0.15, log=log)
    out = tmp_path / "out"
    proc = subprocess.Popen(_cmd(cfg, "--out", str(out), "-j", "1"), env=dict(probe_env, PROBE_RUN="1"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, err = sigint_when(proc, lambda: len(_case_files(out)) >= 2, timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert f"interrupted by SIGINT; finished parts are kept in {out}" in err
    kept = {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in _case_files(out)}
    assert 2 <= len(kept) < 2 * n, "the interrupt must land half-way for this test to mean anything"
    assert not list((out / "claims").iterdir())  # the stopped run released its claims
    assert not (out / "summary.json").exists()  # nothing gathered from an unfinished store
    stored = {tuple(json.loads(p.read_text())["params"][k] for k in ("x", "offset"))
              for p in _case_files(out)}

    # rerun: the finished cases are reused untouched, each missing case is computed once
    res = subprocess.run(_cmd(cfg, "--out", str(out), "-j", "1"), env=dict(probe_env, PROBE_RUN="2"),
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert f"{len(kept)} already in" in res.stdout and f"{2 * n - len(kept)} computed" in res.stdout
    every = sorted((float(x), off) for x in range(n) for off in (0.0, 0.5))
    assert _log(log, "2") == sorted(set(every) - stored)  # each missing case once, nothing else
    for p in _case_files(out):
        if p.name in kept:
            assert (p.stat().st_ino, p.stat().st_mtime_ns) == kept[p.name]
    data = fesub.load(out)
    assert (data.status == 1).all()
    x, off = np.meshgrid(np.arange(n, dtype=float), [0.0, 0.5], indexing="ij")
    np.testing.assert_array_equal(data.fields["y"], x * x + off)

    # --overwrite: every case again
    res = subprocess.run(_cmd(cfg, "--out", str(out), "-j", "1", "--overwrite", "-q"),
                         env=dict(probe_env, PROBE_RUN="3"), capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout == ""  # -q
    assert _log(log, "3") == every
    for p in _case_files(out):
        assert p.name not in kept or (p.stat().st_ino, p.stat().st_mtime_ns) != kept[p.name]


# ------------------------------------------------------------------------------------------------
# the output folder: fesub.load, gathered.nc, summary.json, report.html, the figure
# ------------------------------------------------------------------------------------------------


def test_output_folder_reopens_exactly_with_units_summary_and_report(probe_dir, tmp_path, capsys,
                                                                    drawn_figures):
    from fesub.io import SUMMARY_SCHEMA
    from fesub.plots import style

    out = tmp_path / "o"
    cfg = _probe_cfg(tmp_path, 4)
    assert cli_main(["sweep", str(cfg), "--out", str(out), "-q"]) == 0
    data = fesub.load(out)  # the store itself is a result folder
    assert isinstance(data, sw.SweepData)
    gathered = fesub.load(out / "gathered.nc")
    for a, b in ((data, gathered), (gathered, sw.SweepData.load(gathered.save(tmp_path / "again")))):
        assert (a.study, a.shape, a.cases, a.failures, a.units, a.manifest) == \
            (b.study, b.shape, b.cases, b.failures, b.units, b.manifest)
        for k in a.fields:
            np.testing.assert_array_equal(a.fields[k], b.fields[k], strict=True)
        for k in a.axes:
            np.testing.assert_array_equal(a.axes[k], b.axes[k], strict=True)
        np.testing.assert_array_equal(a.status, b.status, strict=True)
    ds = data.to_xarray()
    assert ds["y"].dims == ("x", "offset") and ds["half"].dims == ("x", "offset", "half_dim0")
    for name in list(ds.data_vars) + list(ds.coords):
        assert "units" in ds[name].attrs, name
    assert (ds["x"].attrs["units"], ds["offset"].attrs["units"], ds["y"].attrs["units"]) == \
        ("m", "m^2", "m^2")
    np.testing.assert_array_equal(ds["y"].sel(x=3.0).values, [9.0, 9.5])

    summary = json.loads((out / "summary.json").read_text())
    assert summary["schema"] == SUMMARY_SCHEMA and summary["study"] == "sweep"
    assert summary["parameters"]["study"]["value"] == "cli_probe"
    assert summary["parameters"]["x"] == {"value": [0.0, 3.0], "unit": "m"}
    assert summary["results"]["n_ok"]["value"] == 8 and summary["results"]["n_missing"]["value"] == 0
    assert summary["results"]["y_max"] == {"value": 9.5, "unit": "m^2"}
    assert fesub.io.info(out)["schema"] == SUMMARY_SCHEMA
    report = (out / "report.html").read_text()
    assert 'src="map.png"' in report and "cli_probe" in report

    ((fig, path),) = drawn_figures
    assert style.check_figure(fig) == []
    ax = fig.axes[0]
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("offset [m^2]", "x [m]")
    assert fig.axes[1].get_ylabel() == "y [m^2]"  # the colour bar
    assert "cli_probe: y" in ax.get_title()


def test_one_dimensional_grid_draws_curves_with_units(probe_dir, tmp_path, drawn_figures):
    from fesub.plots import style

    out = tmp_path / "o"
    cfg = _cfg(tmp_path, 'study = "cli_probe"\n[grid]\nx = [0.0, 1.0, 2.0]\n')
    assert cli_main(["sweep", str(cfg), "--out", str(out), "-q"]) == 0
    ((fig, _),) = drawn_figures
    assert style.check_figure(fig) == []
    assert (fig.axes[0].get_xlabel(), fig.axes[0].get_ylabel()) == ("x [m]", "y [m^2]")
    np.testing.assert_array_equal(fig.axes[0].lines[0].get_ydata(), [0.0, 1.0, 4.0])


def test_no_figures_draws_nothing(probe_dir, tmp_path, drawn_figures):
    out = tmp_path / "o"
    assert cli_main(["sweep", str(_probe_cfg(tmp_path, 2)), "--out", str(out), "-q",
                     "--no-figures"]) == 0
    assert drawn_figures == [] and not (out / "map.png").exists()
    assert (out / "summary.json").is_file() and (out / "gathered.nc").is_file()


def test_a_damaged_case_file_is_reported_and_computed_again(probe_dir, tmp_path, capsys):
    out = tmp_path / "o"
    cfg = _probe_cfg(tmp_path, 3)
    assert cli_main(["sweep", str(cfg), "--out", str(out), "-q", "--no-figures"]) == 0
    victim = _case_files(out)[2]
    rec = json.loads(victim.read_text())
    victim.write_text(json.dumps(dict(rec, result={"y": -1.0, "half": [0.0, 0.0]})))  # edited
    capsys.readouterr()
    assert cli_main(["sweep", str(cfg), "--out", str(out), "--no-figures"]) == 0
    cap = capsys.readouterr()
    assert f"{victim.name}: checksum mismatch (the file changed after it was written); computed again" \
        in cap.err
    assert "5 already in" in cap.out and "1 computed" in cap.out
    assert json.loads(victim.read_text())["result"] == rec["result"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["results"]["n_ok"]["value"] == 6
    assert [p["file"] for p in summary["details"]["problems_found_in_this_run"]] == [victim.name]


def test_signed_result_map_is_diverging_about_zero(tmp_path, drawn_figures):
    from fesub.cli.sweep import plot_map
    from fesub.plots import style

    z = np.array([[-2.0, np.nan, 1.0], [0.5, 3.0, -0.1]])
    data = sw.SweepData("probe", {"mu": np.array([0.1, 0.2]), "s": np.array([0.01, 0.02, 0.03])},
                        (2, 3), {"max_real": z}, {}, np.where(np.isnan(z), 0, 1).astype(np.int8),
                        [], [], {"fixed": {"n_basis": 120}}, {"mu": "1", "s": "m", "max_real": "1/s"})
    plot_map(data, "max_real", tmp_path / "m.png")
    ((fig, _),) = drawn_figures
    assert style.check_figure(fig) == []
    (mesh,) = fig.axes[0].collections
    assert mesh.get_cmap().name == "RdBu_r" and mesh.norm.vcenter == 0.0
    assert mesh.get_clim() == (-2.0, 3.0)  # the data's own range, failed cell blank
    assert "n_basis = 120" in fig.axes[0].get_title()
