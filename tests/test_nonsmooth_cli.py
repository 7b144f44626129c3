"""`fesub freeplay`: conventions, resumable output folder, interrupts, result files, figures."""

from __future__ import annotations

import dataclasses
import json
import os
import runpy
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import fesub
from fesub.cli import main
from fesub.nonsmooth import (P_REF, BasinResult, TwoMassFreePlay, assemble_basin, basin_cells,
                             basin_grid, basins, batch_periodic, bifurcation_diagram,
                             continue_orbit, flow, orbit_backbone, orbit_branch, plots)
from fesub.nonsmooth import basin, bifurcation
from fesub.nonsmooth.orbits import orbit_from_ic
from fesub.plots import style

# the basin of the interrupt tests: 6 blocks of one row; 600 transient periods make each block
# take a noticeable time (about 0.2 s) so that the interrupt lands between the first and the last.
# Every cell integrated for the whole transient: the resumed basin then equals an uninterrupted
# run bit for bit (with the early stop, what a block recognises depends on the attractors known
# when it starts; its labels are checked in test_basin_early_stop_is_the_default)
BASIN = ["--grid", "6", "--range", "0.5", "--tile-rows", "1", "--n-transient", "600",
         "--no-early-stop"]


def _basin_cmd(out, *extra):
    return [sys.executable, "-m", "fesub.cli", "freeplay", "basin", *BASIN, "--no-figures",
            "--out", str(out), *extra]


def _tiles(out):
    return sorted(Path(out).glob("basin_W1.15_exact_tile*.nc"))


def _interrupt_after_first_tile(sigint_when, cmd, out, env):
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    stdout, stderr = sigint_when(proc, lambda: bool(_tiles(out)), timeout=300)
    return proc.returncode, stdout, stderr


def _stat(paths):
    return {p.name: (os.stat(p).st_ino, os.stat(p).st_mtime_ns) for p in paths}


def _equal_results(a, b):
    """Field by field, bit for bit (NaN equal to NaN), dtypes included."""
    assert type(a) is type(b)
    for f in dataclasses.fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if dataclasses.is_dataclass(x):
            _equal_results(x, y)
        elif isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and x.shape == y.shape, f.name
            assert np.array_equal(x, y, equal_nan=x.dtype.kind in "fc"), f.name
        elif isinstance(x, list) and x and hasattr(x[0], "kind"):  # continuation events
            assert [(e.kind, e.index, e.lam, np.asarray(e.x).tolist(), e.info) for e in x] == \
                [(e.kind, e.index, e.lam, np.asarray(e.x).tolist(), e.info) for e in y], f.name
        else:
            assert x == y, (f.name, x, y)


# ---------------------------------------------------------------------------- interrupts, resume
def test_sigint_during_basin_keeps_tiles_and_rerun_resumes(tmp_path, subprocess_env, sigint_when):
    out = tmp_path / "run"
    rc, _, err = _interrupt_after_first_tile(sigint_when, _basin_cmd(out, "-q"), out, subprocess_env)
    assert rc == 130, err
    assert "Traceback" not in err and "interrupted by SIGINT" in err, err
    kept = _tiles(out)
    assert 1 <= len(kept) < 6, "the interrupt must land between the first and the last block"
    assert not (out / "basin_W1.15_exact.nc").exists() and not (out / "summary.json").exists()
    before = _stat(kept)

    done = subprocess.run(_basin_cmd(out), env=subprocess_env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    for p in kept:  # reused, not recomputed: same file (inode) and modification time
        assert f"{p.stem}: finished in an earlier run, reused" in done.stdout
    assert _stat(kept) == before
    assert len(_tiles(out)) == 6
    summary = json.loads((out / "summary.json").read_text())
    assert sorted(summary["details"]["resumed_parts"]) == sorted(p.stem for p in kept)

    # the assembled basin equals one uninterrupted library run, bit for bit
    got = fesub.load(out / "basin_W1.15_exact.nc")
    ref = basins(P_REF, 1.15, x1_range=(-0.5, 0.5), x2_range=(-0.5, 0.5), shape=(6, 6),
                 n_transient=600, executor="serial", progress=False)
    _equal_results(got, ref)
    assert ref.status == "complete" and len(ref.attractors) >= 2  # classified, not all -1

    # --overwrite recomputes every block (new files) and gives the same numbers
    assert main(["freeplay", "basin", *BASIN, "--no-figures", "-q", "--overwrite",
                 "--out", str(out)]) == 0
    after = _stat(_tiles(out))
    assert all(after[k][0] != before[k][0] for k in before)
    _equal_results(fesub.load(out / "basin_W1.15_exact.nc"), ref)


def test_basin_early_stop_is_the_default(tmp_path):
    # the command's default stops cells early on known attractors; its labels are those of
    # every cell integrated for the whole transient (--no-early-stop) on the study's range
    common = ["freeplay", "basin", "--grid", "24", "--tile-rows", "4", "--no-figures", "-q"]
    assert main([*common, "--out", str(tmp_path / "early")]) == 0
    assert main([*common, "--no-early-stop", "--out", str(tmp_path / "full")]) == 0
    early = fesub.load(tmp_path / "early" / "basin_W1.15_exact.nc")
    full = fesub.load(tmp_path / "full" / "basin_W1.15_exact.nc")
    assert early.options["early_stop"]["settle"] >= 1 and "early_stop" not in full.options
    assert np.array_equal(early.labels, full.labels)
    assert early.options["mean_transient_periods"] < 0.5 * full.options["mean_transient_periods"]
    summary = json.loads((tmp_path / "early" / "summary.json").read_text())
    assert summary["parameters"]["early_stop"]["value"] is True
    # the two ways to end a transient are exclusive
    assert main([*common, "--early-exit", "1e-9", "--out", str(tmp_path / "both")]) == 2


def _processes_mentioning(text):
    found = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if text in (d / "cmdline").read_bytes().decode(errors="replace"):
                    found.append(int(d.name))
            except OSError:
                continue
    return found


def test_sigint_with_worker_pool_stops_workers(tmp_path, subprocess_env, sigint_when):
    out = tmp_path / "pool"
    rc, _, err = _interrupt_after_first_tile(sigint_when, _basin_cmd(out, "-q", "-j", "2"), out,
                                             subprocess_env)
    assert rc == 130 and "Traceback" not in err, err
    assert len(_tiles(out)) >= 1
    t0 = time.time()  # the parent has exited; its workers must be gone too
    while _processes_mentioning(str(out)) and time.time() - t0 < 10:
        time.sleep(0.1)
    assert _processes_mentioning(str(out)) == []


def _interrupt_at_call(monkeypatch, module, name, n):
    """Make ``module.NAME`` raise KeyboardInterrupt (Ctrl-C) at its ``n``-th call."""
    real, calls = getattr(module, name), []

    def fn(*a, **k):
        calls.append(1)
        if len(calls) == n:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(module, name, fn)


def test_library_basins_and_diagram_return_what_was_done_on_interrupt(monkeypatch):
    kw = dict(x1_range=(-0.5, 0.5), x2_range=(-0.5, 0.5), shape=(4, 3), n_transient=20,
              n_record=2, steps_per_period=100, executor="serial", tile_rows=1, progress=False)
    full = basins(P_REF, 1.15, **kw)
    W = [1.2, 1.3, 1.35]
    bkw = dict(n_transient=20, n_points=6, block=1, executor="serial", progress=False)
    ref = bifurcation_diagram(P_REF, W, **bkw)

    _interrupt_at_call(monkeypatch, basin, "basin_cells", 3)
    part = basins(P_REF, 1.15, **kw)
    assert part.status == "interrupted"
    assert np.array_equal(part.x1_max[:2], full.x1_max[:2])
    assert np.all(part.labels[2:] == basin.NOT_COMPUTED) and np.all(np.isnan(part.x1_max[2:]))

    _interrupt_at_call(monkeypatch, bifurcation, "batch_parallel", 2)
    r = bifurcation_diagram(P_REF, W, **bkw)
    assert r.status == "interrupted" and r.W.tolist() == [1.2]
    assert np.array_equal(r.section, ref.section[:1], equal_nan=True)


def test_interrupted_library_pool_leaves_no_workers():
    import multiprocessing
    import threading

    from fesub.nonsmooth import batch

    # Ctrl-C reaches the parent one second into a basin that needs far longer on the local pool
    # basins() creates: the blocks done so far come back and the workers are terminated
    timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT))
    t0 = time.time()
    timer.start()
    try:
        r = basins(P_REF, 1.15, shape=(16, 16), n_transient=3000, tile_rows=4, executor=None,
                   progress=False)
    finally:
        timer.cancel()
    assert r.status == "interrupted" and np.any(r.labels == basin.NOT_COMPUTED)
    assert time.time() - t0 < 20  # did not wait for the running chunks (about 20 s of work)
    assert multiprocessing.active_children() == []
    with pytest.raises(KeyboardInterrupt):
        with batch.worker_pool(2) as ex:
            ex.submit(time.sleep, 30)
            raise KeyboardInterrupt
    assert multiprocessing.active_children() == []


# ------------------------------------------------------------------------------------ bad input
@pytest.mark.parametrize("argv", [
    ["basin", "--steps", "0"], ["basin", "--jobs", "0"], ["basin", "--early-exit", "-1"],
    ["bifurcation", "--W-range", "1.8", "0.8"], ["branch", "--W-range", "1.6", "1.0"],
    ["basin", "--grid", "0"], ["basin", "--W", "-1"], ["basin", "--W", "nan"],
    ["basin", "--range", "0"], ["bifurcation", "--n-W", "0"], ["orbit", "--periods", "0"],
    ["basin", "--n-transient", "-5"], ["radius", "--set", "a", "-1"],
    ["radius", "--set", "bogus", "1"], ["radius", "--set", "Q1", "x"],
    ["branch", "--W", "2.0", "--W-range", "1.0", "1.6"]])
def test_bad_arguments_exit_2_with_one_line_and_write_nothing(tmp_path, capsys, argv):
    out = tmp_path / "out"
    assert main(["freeplay", *argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("fesub freeplay: error:"), err
    assert not out.exists()


def test_out_that_is_a_file_exits_2(tmp_path, capsys):
    f = tmp_path / "file"
    f.write_text("x")
    assert main(["freeplay", "radius", "--out", str(f)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("fesub freeplay: error:") and "file" in err[0]
    assert f.read_text() == "x"


def test_help_shows_units_defaults_and_common_flags(capsys):
    assert main(["freeplay", "--help"]) == 0
    h = " ".join(capsys.readouterr().out.split())
    for s in ("fesub-out/freeplay", "-j N, --jobs N", "--overwrite", "--no-figures", "--quiet",
              "[rad/s] (basin, orbit, branch start) (default: 1.15)", "[m] (default: 1.5)",
              "RK4 steps per forcing period [-] (basin, bifurcation) (default: 200)"):
        assert s in h, s
    for gone in ("--workers", "--no-progress", "freeplay_out"):
        assert gone not in h


# ------------------------------------------------------------------------ study runs, summary
def test_cli_radius(tmp_path):
    assert main(["freeplay", "radius", "-q", "--out", str(tmp_path)]) == 0
    s = json.loads((tmp_path / "summary.json").read_text())
    assert s["schema"] == "fesub-summary/1" and s["parameters"]["a"] == {"value": 0.05, "unit": "m"}
    # closed form R_i = U*/delta with U* = 2.578 (laws.radius_of_influence_closed_form)
    assert abs(s["results"]["radius_of_influence"]["value"] - 0.0017187) < 5e-8
    assert s["results"]["radius_of_influence"]["unit"] == "m"
    assert (tmp_path / "force_law.png").stat().st_size > 0 and (tmp_path / "report.html").exists()
    assert (tmp_path / "vector_field_error.png").exists()


def test_cli_orbit_and_resume(tmp_path, capsys):
    argv = ["freeplay", "orbit", "--W", "1.3", "--ic", "0", "0", "0", "0", "--no-figures",
            "--out", str(tmp_path)]
    assert main(argv) == 0
    o = fesub.load(tmp_path / "orbit_W1.3_exact.nc")
    assert abs(o.x1_max - 0.0884306) < 1e-7 and o.stable
    s = json.loads((tmp_path / "summary.json").read_text())
    assert s["results"]["x1_max_exact"] == {"value": o.x1_max, "unit": "m"}
    ino = os.stat(tmp_path / "orbit_W1.3_exact.nc").st_ino
    capsys.readouterr()
    assert main(argv) == 0
    assert "orbit_W1.3_exact: finished in an earlier run, reused" in capsys.readouterr().out
    assert os.stat(tmp_path / "orbit_W1.3_exact.nc").st_ino == ino
    # other parameters into the same folder are refused (it would mix two runs)
    assert main(argv[:3] + ["1.31"] + argv[4:]) == 2


def test_cli_bifurcation_tiles_equal_one_run(tmp_path):
    argv = ["freeplay", "bifurcation", "--W-range", "1.2", "1.4", "--n-W", "5", "--tile-W", "2",
            "--n-transient", "20", "-q", "--no-figures", "--out", str(tmp_path)]
    assert main(argv) == 0
    assert len(list(tmp_path.glob("bifurcation_exact_tile*.nc"))) == 3
    got = fesub.load(tmp_path / "bifurcation_exact.nc")
    ref = bifurcation_diagram(P_REF, np.linspace(1.2, 1.4, 5), n_transient=20, executor="serial",
                              progress=False)
    _equal_results(got, ref)
    # a block lost (as after an interrupt): the rerun computes that block only
    (tmp_path / "bifurcation_exact.nc").unlink()
    (tmp_path / "bifurcation_exact_tile001.nc").unlink()
    kept = _stat([tmp_path / f"bifurcation_exact_tile{k:03d}.nc" for k in (0, 2)])
    assert main(argv) == 0
    assert _stat([tmp_path / n for n in kept]) == kept
    _equal_results(fesub.load(tmp_path / "bifurcation_exact.nc"), ref)
    folder = fesub.load(tmp_path)  # the whole study folder reopens
    assert folder.summary["study"] == "freeplay" and "bifurcation_exact" in folder.results


# ----------------------------------------------------------------------- results: round trips
@pytest.fixture(scope="module")
def results():
    sys_ = TwoMassFreePlay(P_REF, "exact")
    kw = dict(x1_range=(-0.5, 0.5), x2_range=(-0.5, 0.5), shape=(5, 4), n_transient=150,
              n_record=4, steps_per_period=200, executor="serial", progress=False)
    ex = basins(P_REF, 1.15, law="exact", **kw)
    sm = basins(P_REF, 1.15, law="smooth", **kw)
    g1, g2 = basin_grid(kw["x1_range"], kw["x2_range"], kw["shape"])
    cells = basin_cells(P_REF, 1.15, g1[:2], g2, n_transient=150)
    partial = assemble_basin([cells], g1, g2)  # rows 2.. not computed
    bif = bifurcation_diagram(P_REF, [1.2, 1.3], n_transient=20, n_points=10, executor="serial",
                              progress=False)
    o = orbit_from_ic(sys_, [0, 0, 0, 0], 1.5)
    br, prob = continue_orbit(sys_, o.z0, 1.5, (1.45, 1.55), ds=0.05, ds_max=0.05,
                              progress=False)
    ob = orbit_branch(br, prob, +1)
    bb = orbit_backbone(sys_, 1, (0.005, 0.045), ds=0.01, ds_max=0.01)
    T = 2 * np.pi / 1.3
    fl = flow(sys_, [0.2, 0, 0.1, 0], 0.0, 3 * T, 1.3, variational=True, sens_W=True,
              t_eval=np.linspace(0, 3 * T, 31))
    batch = batch_periodic(P_REF, [[0.2, 0, 0.1, 0], [0, 0, 0, 0]], 1.3, n_transient=10)
    return dict(basin=ex, basin_smooth=sm, cells=cells, partial=partial, bifurcation=bif,
                orbit=o, branch=ob, backbone=bb, system=sys_, flow=fl, batch=batch)


@pytest.mark.parametrize("name", ["basin", "cells", "partial", "bifurcation", "orbit", "branch",
                                  "backbone", "flow", "batch"])
def test_round_trip_exact_with_units(results, tmp_path, name):
    r = results[name]
    path = r.save(tmp_path / name)
    assert path.name == f"{name}.nc"
    back = fesub.load(path)
    _equal_results(back, r)
    _equal_results(type(r).load(tmp_path / name), r)
    ds = r.to_xarray()
    missing = [v for v in list(ds.data_vars) + list(ds.coords) if "units" not in ds[v].attrs]
    assert missing == []
    if name == "flow":  # the switches survive (times, edges and regions)
        assert len(back.switches) == len(r.switches) > 0 and back.Z.shape == (31, 4)
    s = r.summary()
    assert s["schema"] == "fesub-summary/1" and s["study"] == r.kind


def test_flow_with_sparse_output_times_matches_flow_without(results):
    # 31 output times over 3 periods leave some segments between switches without a sample;
    # the output times do not change SciPy's steps, so everything agrees exactly
    fl = results["flow"]
    T = 2 * np.pi / 1.3
    ref = flow(results["system"], [0.2, 0, 0.1, 0], 0.0, 3 * T, 1.3, variational=True,
               sens_W=True)
    assert fl.switches == ref.switches and fl.x1_max == ref.x1_max and fl.x1_min == ref.x1_min
    assert np.array_equal(fl.z, ref.z) and np.array_equal(fl.Phi, ref.Phi)
    assert np.array_equal(fl.Z[-1], ref.z)


def test_partial_basin_is_marked(results):
    p, full = results["partial"], results["basin"]
    assert p.status == "interrupted"
    assert np.array_equal(p.x1_max[:2], full.x1_max[:2])
    assert np.all(p.labels[2:] == -3) and np.all(p.labels[:2] >= -2)


def test_orbit_floquet_stored_with_the_orbit(results, tmp_path):
    o = results["orbit"]
    back = fesub.load(o.save(tmp_path / "o"))
    # the multipliers are the eigenvalues of the stored monodromy matrix (independent check)
    lam = np.linalg.eigvals(back.monodromy)
    assert np.allclose(np.sort_complex(lam), np.sort_complex(back.floquet), rtol=0, atol=1e-12)
    assert back.stable == (np.max(np.abs(lam)) < 1)


# --------------------------------------------------------------------------------------- figures
def test_every_figure_passes_the_house_rules(results, drawn_figures, tmp_path):
    from fesub.nonsmooth.laws import SigmoidFreePlay

    ex, sm, ob = results["basin"], results["basin_smooth"], results["branch"]
    plots.basin(ex, path=tmp_path / "basin.png")
    plots.basin(results["partial"], path=tmp_path / "partial.png")
    plots.basin_compare(ex, sm, path=tmp_path / "compare.png")
    plots.bifurcation(results["bifurcation"], path=tmp_path / "bif.png")
    plots.branches([ob], path=tmp_path / "br.png")
    plots.branches([ob], projection="x1_max", path=tmp_path / "br2.png")
    plots.floquet(ob.multipliers, W=ob.W, path=tmp_path / "fl.png")
    plots.floquet(results["orbit"].floquet, path=tmp_path / "fl1.png")
    plots.phase_portrait(results["system"], results["orbit"].z0, 1.5, n_transient=0,
                         n_periods=2, path=tmp_path / "pp.png")
    law = SigmoidFreePlay(P_REF.kp, P_REF.a, P_REF.delta)
    plots.force_law(law, path=tmp_path / "law.png")
    plots.vector_field_error_map(P_REF, law, n=51, path=tmp_path / "vf.png")
    plots.orbit_backbones([results["backbone"]], path=tmp_path / "bb.png")
    assert len(drawn_figures) == 12
    for fig, path in drawn_figures:
        assert style.check_figure(fig) == [], path
        assert Path(path).stat().st_size > 0


def test_basin_figure_names_each_attractor_with_a_discrete_colour(results, drawn_figures,
                                                                   tmp_path):
    r = results["partial"]
    plots.basin(r, path=tmp_path / "b.png")
    (fig, _), = drawn_figures
    ax = fig.axes[0]
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    for a in r.attractors:
        assert any(t.startswith(f"period-{a['period']} orbit, x1 from") and t.endswith("%)")
                   and " m (" in t for t in texts)
    assert any(t.startswith("not computed") for t in texts)
    im = ax.images[0]
    # one colour per category: the image shows integers mapped through as many colours
    assert im.cmap.N == len(r.attractors) + len(set(r.labels[r.labels < 0].tolist()))
    assert "W = 1.15 rad/s" in ax.get_title() and "exact law" in ax.get_title()


def test_study_figures_through_the_cli(tmp_path, drawn_figures):
    assert main(["freeplay", "basin", "--grid", "4", "--range", "0.5", "--tile-rows", "2",
                 "--n-transient", "40", "--law", "both", "-q", "--out", str(tmp_path / "b")]) == 0
    assert main(["freeplay", "orbit", "--W", "1.3", "-q", "--out", str(tmp_path / "o")]) == 0
    names = sorted(Path(p).name for _, p in drawn_figures)
    assert names == ["basin_W1.15_compare.png", "basin_W1.15_exact.png", "basin_W1.15_smooth.png",
                     "orbit_W1.3_exact.png", "orbit_W1.3_exact_floquet.png"]
    for fig, path in drawn_figures:
        assert style.check_figure(fig) == [], path
    report = (tmp_path / "b" / "report.html").read_text()
    assert "basin_W1.15_compare.png" in report


# ------------------------------------------------------------------------------------- example
def test_example_runs(tmp_path, monkeypatch):
    path = os.path.join(os.path.dirname(__file__), "..", "examples", "freeplay_basin.py")
    monkeypatch.setattr(sys, "argv", [path, str(tmp_path)])
    runpy.run_path(path, run_name="__main__")
    assert (tmp_path / "basin_W1.15.png").exists()
    assert isinstance(fesub.load(tmp_path / "basin_W1.15_exact.nc"), BasinResult)
