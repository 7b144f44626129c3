"""`fesub backbone`: the study's output folder (parts, resuming, interrupts, summary, figures),
the result files of harmonic balance (exact round trips), the per-case sweep function and the
example script."""

from __future__ import annotations

import json
import math
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import fesub
from fesub import io
from fesub.cli import main
from fesub.errors import ParameterError
from fesub.hbm.backbone import Backbone, backbone
from fesub.hbm.forced import FRF, forced_response, solve_at
from fesub.hbm.nnm import DNNM, PhaseResonance, dnnm, phase_resonance
from fesub.sweep import forced_response_point
from fesub.models import build
from fesub.models.jenkins import jenkins_1dof

# stuck limit of the Jenkins oscillator (m = 1, c = 0.02, k + kt = 2): linear, exactly known.
# RMS peak at sqrt(2 - c^2/2) rad/s, quadrature and damped-mode frequency sqrt 2 rad/s
W_RMS, W_N = math.sqrt(2 - 0.02 ** 2 / 2), math.sqrt(2)


# ------------------------------------------------------------------------------ the study
def test_cli_backbone_writes_results(tmp_path):
    out = tmp_path / "bb"
    rc = main(["backbone", "--model", "jenkins", "--nh", "1", "--frf-levels", "2",
               "--out", str(out), "-q"])
    assert rc == 0
    s = json.loads((out / "summary.json").read_text())
    assert s["schema"] == io.SUMMARY_SCHEMA and s["study"] == "backbone"
    assert s["parameters"]["alpha_max"] == {"value": 0.2, "unit": "N"}
    assert s["parameters"]["w_window_low"] == {"value": 1.2, "unit": "rad/s"}
    assert s["results"]["backbone_stop_reason"]["value"] == "lam_range"
    # every step that can fail without stopping the run records it here
    assert s["results"]["failures"]["value"] == 0 and not s.get("notes")
    for name in ("frf_family.png", "contact_timeline.png", "energy.png", "backbone.nc",
                 "frf_0.nc", "frf_1.nc", "report.html"):
        assert (out / name).stat().st_size > 0
    assert not list(out.glob("*.npz")) and not (out / "backbone.json").exists()
    # a backbone written by `fesub backbone` reopens, by itself, as a Backbone
    bb = fesub.load(out / "backbone.nc")
    assert type(bb) is Backbone
    # (solver tolerances 1e-8 .. 1e-11 -> 1e-9)
    assert bb.w[0] == pytest.approx(W_RMS, rel=1e-9)
    assert s["results"]["w_start"] == {"value": bb.w[0], "unit": "rad/s"}
    assert s["results"]["Am_end"] == {"value": bb.Am[-1], "unit": "m"}
    # the forced responses: their sampled peaks are the headline results, and the largest of
    # each lies within one continuation step of the backbone (the ridge of the surface)
    study = fesub.load(out)
    frfs = [study[f"frf_{k}"] for k in range(2)]
    assert s["results"]["frf_alpha"]["value"] == [f.alpha for f in frfs]
    for f, am in zip(frfs, s["results"]["frf_peak_Am"]["value"]):
        assert type(f) is FRF and am == f.Am.max() and f.alpha in bb.alpha
        i = int(np.flatnonzero(bb.alpha == f.alpha)[0])
        assert f.Am.max() == pytest.approx(bb.Am[i], rel=1e-3)


def test_cli_backbone_compare_writes_baselines_and_figures(tmp_path, drawn_figures):
    from fesub.plots import style

    out = tmp_path / "cmp"
    rc = main(["backbone", "--model", "jenkins", "--nh", "3", "--compare", "--frf-levels", "1",
               "--out", str(out), "-q"])
    assert rc == 0
    s = json.loads((out / "summary.json").read_text())
    assert s["results"]["failures"]["value"] == 0
    assert s["parameters"]["nh"]["value"] == 3
    assert s["results"]["phase_resonance_stop_reason"]["value"] == "lam_range"
    assert s["results"]["dnnm_stop_reason"]["value"] == "lam_range"
    parts = {name: fesub.load(out / f"{name}.nc")
             for name in ("backbone", "backbone_nh1", "phase_resonance", "dnnm")}
    assert type(parts["phase_resonance"]) is PhaseResonance and type(parts["dnnm"]) is DNNM
    # the stuck start of every curve is linear, exactly known (solver tolerances 1e-8 .. 1e-11
    # -> 1e-9)
    assert parts["backbone"].w[0] == pytest.approx(W_RMS, rel=1e-9)
    assert parts["backbone_nh1"].w[0] == pytest.approx(W_RMS, rel=1e-9)
    assert parts["phase_resonance"].w[0] == pytest.approx(W_N, rel=1e-9)
    assert parts["dnnm"].w0[0] == pytest.approx(W_N, rel=1e-9)
    # both backbones end near the free resonance 1 rad/s (spec 5 B: 1.0033 at 0.2 N, Nh = 7)
    for name in ("backbone", "backbone_nh1"):
        assert 1.0 < parts[name].w[-1] < 1.01
    # every figure of the study is drawn, meets the house rules and is in the report
    names = sorted(Path(p).name for _, p in drawn_figures)
    assert names == ["contact_timeline.png", "energy.png", "frf_family.png",
                     "method_comparison.png", "nh_comparison.png"]
    for fig, path in drawn_figures:
        assert style.check_figure(fig) == [], path
        assert "jenkins" in (fig._suptitle.get_text() if fig._suptitle else "") + \
            fig.axes[0].get_title()
    report = (out / "report.html").read_text()
    assert all(n in report for n in names)


def test_no_figures(tmp_path, drawn_figures):
    out = tmp_path / "nf"
    assert main(["backbone", "--nh", "1", "--frf-levels", "0", "--alpha-max", "0.004",
                 "--no-figures", "--out", str(out), "-q"]) == 0
    assert drawn_figures == [] and not list(out.glob("*.png"))
    assert (out / "summary.json").is_file() and (out / "backbone.nc").is_file()


def test_help_shows_defaults_units_and_common_flags(capsys, subprocess_env):
    assert main(["backbone", "--help"]) == 0
    h = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
    for text in ("--out DIR", "(default: fesub-out/backbone)", "-q, --quiet", "--overwrite",
                 "--no-figures", "smallest force amplitude [N] (default: beam 0.01",
                 "jenkins 0.002)", "frequency window [rad/s]", "jenkins 1.2 1.6)",
                 "[1/decade]", "(default: 2.0)", "(default: 600)", "(default: 5)",
                 "number of harmonics (default: beam 3, blade 3, jenkins 7)"):
        assert text in h, text
    for gone in ("--no-progress", "backbone_out", "--jobs"):
        assert gone not in h
    # the study module imports nothing numerical to answer --help
    code = ("import sys; from fesub.cli import build_parser; build_parser('backbone'); "
            "assert 'fesub.cli.backbone' in sys.modules; "
            "print(' '.join(m for m in ('numpy', 'scipy', 'matplotlib', 'xarray') "
            "if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], env=subprocess_env, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == ""


@pytest.mark.parametrize("args, words", [
    (["--alpha-min", "-1"], "--alpha-min"),
    (["--alpha-min", "1", "--alpha-max", "0.1"], "--alpha-min must be < --alpha-max"),
    (["--nh", "0"], "--nh"),
    (["--max-steps", "0"], "--max-steps"),
    (["--frf-levels", "-1"], "--frf-levels"),
    (["--frf-levels", "1.5"], "--frf-levels"),
    (["--global-checks", "nan"], "--global-checks"),
    (["--w-window", "1.6", "1.2"], "--w-window"),
    (["--w-window", "0", "1.6"], "--w-window"),
    (["--model", "bridge"], "--model"),
])
def test_bad_arguments_exit_2_with_one_line(tmp_path, capsys, args, words):
    out = tmp_path / "never"
    rc = main(["backbone", *args, "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 2
    assert err.startswith("fesub backbone: error:") and err.count("\n") == 1, err
    assert words in err
    assert not out.exists()  # validated before any folder is made


def test_out_that_is_a_file_exits_2(tmp_path, capsys):
    f = tmp_path / "a_file"
    f.write_text("x")
    assert main(["backbone", "--out", str(f)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fesub backbone: error:") and err.count("\n") == 1
    assert f.read_text() == "x"


def test_sigint_keeps_finished_parts_and_rerun_resumes(tmp_path, subprocess_env, capsys,
                                                       sigint_when):
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "fesub.cli", "backbone", "--nh", "1", "--alpha-max", "0.02",
           "--frf-levels", "3", "--out", str(out)]
    part = out / "backbone.nc"
    proc = subprocess.Popen(cmd, env=subprocess_env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    _, err = sigint_when(proc, part.exists, timeout=120)
    # the three forced responses and the figures follow the backbone (seconds): the interrupt
    # arrives while they are computed
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "interrupted by SIGINT" in err
    assert not (out / "summary.json").exists()
    st = part.stat()
    kept = fesub.load(part)
    assert kept.status == "finished" and kept.w[0] == pytest.approx(W_RMS, rel=1e-9)
    # rerun: the backbone is reused, not recomputed (same file), the rest is computed
    done = subprocess.run(cmd, env=subprocess_env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "backbone: finished in an earlier run, reused" in done.stdout
    assert (part.stat().st_ino, part.stat().st_mtime_ns) == (st.st_ino, st.st_mtime_ns)
    s = json.loads((out / "summary.json").read_text())
    assert "backbone" in s["details"]["resumed_parts"]
    assert all((out / f"frf_{k}.nc").is_file() for k in range(3))
    # --overwrite recomputes every part (a new file, same numbers)
    again = subprocess.run(cmd + ["--overwrite", "--no-figures", "-q"], env=subprocess_env,
                           capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert part.stat().st_ino != st.st_ino
    np.testing.assert_array_equal(fesub.load(part).Am, kept.Am)
    # other parameters into the same folder are refused, nothing replaced
    st = part.stat()
    assert main(cmd[3:] + ["--nh", "2"]) == 2
    assert (part.stat().st_ino, part.stat().st_mtime_ns) == (st.st_ino, st.st_mtime_ns)


# --------------------------------------------------------------- result files (round trips)
def _units_everywhere(ds):
    for name in list(ds.data_vars) + list(ds.coords):
        assert "units" in ds[name].attrs, name


def _same_arrays(a, b, names):
    for n in names:
        x, y = getattr(a, n), getattr(b, n)
        if y is None:
            assert x is None, n
            continue
        x, y = np.asarray(x), np.asarray(y)
        assert x.dtype == y.dtype and x.shape == y.shape and np.array_equal(x, y), n


BB_ARRAYS = ("alpha", "w", "Am", "Q", "lam", "eta_alpha", "segments", "newton_iters", "ridge")
BB_RECORDS = ("singular_points", "events", "ridges", "jumps", "checks", "stop_reason")


def _same_backbone(a, b):
    _same_arrays(a, b, BB_ARRAYS)
    for n in BB_RECORDS:
        assert getattr(a, n) == getattr(b, n), n


@pytest.fixture(scope="module")
def jenkins_results():
    """Jenkins oscillator, Nh = 1: backbone with global checks (ridges, checks, events,
    singular points), a forced response, phase resonance and dNNM."""
    sy = jenkins_1dof(1)
    bb = backbone(sy, (0.002, 0.05), (1.2, 1.6), w_global=(0.5, 2.0), global_checks=1.0)
    frf = forced_response(sy, 0.01, (1.2, 1.5))
    pr = phase_resonance(sy, (0.002, 0.05), bb.w[0])
    dn = dnnm(sy, (0.01, 0.5))
    return sy, bb, frf, pr, dn


def test_backbone_round_trip_is_exact(tmp_path, jenkins_results):
    _, bb, _, _, _ = jenkins_results
    assert bb.checks and bb.ridges and bb.singular_points  # events: the next test
    p = bb.save(tmp_path / "bb_mu0.1")
    back = fesub.load(p)
    assert type(back) is Backbone
    _same_backbone(back, bb)
    _same_backbone(Backbone.load(tmp_path / "bb_mu0.1"), bb)
    ds = bb.to_xarray()
    _units_everywhere(ds)
    assert (ds["alpha"].attrs["units"], ds["w"].attrs["units"], ds["Am"].attrs["units"]) == \
        ("N", "rad/s", "m")
    assert io.info(p)["results"]["points"]["value"] == len(bb.alpha)
    # a backbone file is not a continuation branch: a clear error, not a KeyError
    from fesub.continuation import Branch
    from fesub.errors import FesubError

    with pytest.raises(FesubError, match="holds a Backbone, not a Branch"):
        Branch.load(p)


def test_backbone_files_of_two_cases_do_not_clash(tmp_path, jenkins_results):
    _, bb, _, _, _ = jenkins_results
    # a second case with every record filled: a jump (one of them not located: Am_from None),
    # a sweep that missed an interval (a tuple, given back as a list), several ridges
    other = Backbone(
        alpha=bb.alpha[:5], w=bb.w[:5], Am=bb.Am[:5], Q=bb.Q[:5], lam=bb.lam[:5],
        eta_alpha=bb.eta_alpha[:5], segments=np.array([0, 0, 1, 1, 2]),
        singular_points=[{"alpha": 0.003, "w": 1.41, "reason": "global maximum jumps"}],
        events=[{"kind": "slip_onset_0", "alpha": 0.0028, "w": 1.414, "segment": 0}],
        newton_iters=None, stop_reason="lam_range", ridge=np.array([0, 0, 1, 1, 0]),
        ridges=[{"origin": "w_window"}, {"origin": "check", "ends": {"low": "fold"}}],
        jumps=[{"alpha": 0.003, "w_from": 1.41, "w_to": 1.2, "Am_from": None, "Am_to": 0.1,
                "ridge_from": 0, "ridge_to": 1}],
        checks=[{"alpha": 0.004, "method": "sweep", "peaks": [], "missed": [(1.0, 1.1)]}])
    assert other.checks[0]["missed"] == [[1.0, 1.1]]  # records are plain JSON values
    p1 = bb.save(tmp_path / "bb_mu0.1")
    p3 = other.save(tmp_path / "bb_mu0.3")
    assert p1 != p3 and {p1.name, p3.name} == {"bb_mu0.1.nc", "bb_mu0.3.nc"}
    _same_backbone(fesub.load(p3), other)
    _same_backbone(fesub.load(p1), bb)
    assert sorted(f.name for f in tmp_path.iterdir()) == ["bb_mu0.1.nc", "bb_mu0.3.nc"]


def test_frf_phase_resonance_dnnm_round_trips_are_exact(tmp_path, jenkins_results):
    _, _, frf, pr, dn = jenkins_results
    cases = [(frf, ("w", "Q", "Am")), (pr, ("alpha", "w", "Am", "Q")),
             (dn, ("a", "w0", "xi", "zeta", "Q", "Am", "F_eq"))]
    for res, arrays in cases:
        p = res.save(tmp_path / res.kind)
        back = fesub.load(p)
        assert type(back) is type(res)
        _same_arrays(back, res, arrays)
        assert back.stop_reason == res.stop_reason and back.status == "finished"
        _units_everywhere(res.to_xarray())
        assert io.info(p)["study"] == res.kind
    assert fesub.load(tmp_path / "frf.nc").alpha == frf.alpha
    ds = frf.to_xarray()
    assert (ds["alpha"].attrs["units"], ds["w"].attrs["units"]) == ("N", "rad/s")
    assert dn.to_xarray()["F_eq"].attrs["units"] == "N"
    # the FRF's headline: its largest sampled amplitude
    assert frf.summary()["results"]["Am_max"] == {"value": frf.Am.max(), "unit": "m"}


# ------------------------------------------------------------- interrupts of the long runs
class _InterruptAfter:
    """Contact forces of a system (``real``: its ``fnl``) where Ctrl-C arrives at the ``n``-th
    evaluation (never when ``n`` < 1); counts the evaluations."""

    def __init__(self, real, n):
        self.real, self.n, self.calls = real, n, 0

    def __call__(self, *a, **k):
        self.calls += 1
        if self.calls == self.n:
            raise KeyboardInterrupt
        return self.real(*a, **k)


def test_interrupted_backbone_returns_its_first_points():
    sy = jenkins_1dof(1)
    real = sy.fnl
    sy.fnl = counter = _InterruptAfter(real, 0)
    full = backbone(sy, (0.002, 0.05), (1.2, 1.6))
    assert full.status == "finished"
    # Ctrl-C at 90 % of the contact evaluations of the same run (the first 60 % are the
    # forced response and its peak that start the backbone): past the slip onset, where the
    # backbone restarted
    assert len(full.singular_points) == 1
    sy.fnl = _InterruptAfter(real, counter.calls * 9 // 10)
    part = backbone(sy, (0.002, 0.05), (1.2, 1.6))
    assert part.status == "interrupted" and part.stop_reason == "interrupted"
    assert 1 < len(part.alpha) < len(full.alpha)
    assert part.singular_points == full.singular_points and part.segments[-1] == 1
    # the points computed before the interrupt are those of the uninterrupted run
    n = len(part.alpha)
    np.testing.assert_array_equal(part.alpha, full.alpha[:n])
    np.testing.assert_array_equal(part.Q, full.Q[:n])
    # interrupted right at the start: an empty backbone, not an exception
    sy.fnl = _InterruptAfter(real, 1)
    empty = backbone(sy, (0.002, 0.05), (1.2, 1.6))
    assert empty.status == "interrupted" and len(empty.alpha) == 0
    assert empty.Q.shape == (0, sy.N)


def test_interrupted_forced_response_phase_resonance_dnnm():
    runs = {"forced response": lambda sy: forced_response(sy, 0.01, (1.2, 1.5)),
            "phase resonance": lambda sy: phase_resonance(sy, (0.002, 0.05), W_N),
            "dnnm": lambda sy: dnnm(sy, (0.01, 0.5))}
    for name, run in runs.items():
        ref = run(jenkins_1dof(1))
        sy = jenkins_1dof(1)
        sy.fnl = _InterruptAfter(sy.fnl, 60)
        part = run(sy)
        assert part.status == "interrupted" and ref.status == "finished", name
        # the points before the interrupt are those of the uninterrupted run
        n = len(part.Q)
        assert 1 < n < len(ref.Q), name
        np.testing.assert_array_equal(part.Q, ref.Q[:n], err_msg=name)


def test_library_checks_arguments_naming_them():
    sy = jenkins_1dof(1)
    with pytest.raises(ParameterError, match="w_window must be increasing"):
        backbone(sy, (0.01, 0.1), (1.6, 1.2))
    for fn in (lambda: backbone(sy, (0.01, 0.1), (1.2, 1.6), max_steps=0),
               lambda: forced_response(sy, 0.1, (1.2, 1.6), max_steps=0),
               lambda: phase_resonance(sy, (0.01, 0.1), 1.4, max_steps=2.5),
               lambda: dnnm(sy, (0.01, 0.1), max_steps=-1)):
        with pytest.raises(ParameterError, match="max_steps must be an integer >= 1"):
            fn()


# ---------------------------------------------------------------- sweep function, example
def test_forced_response_point_is_pure_and_picklable():
    f = pickle.loads(pickle.dumps(forced_response_point))
    r = f("jenkins_1dof", {"nh": 3}, 0.1, 1.1)
    assert r["converged"]
    sy = build("jenkins_1dof", nh=3)
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
                          env={"PYTHONPATH": str(path.parents[1]), "PATH": "/usr/bin:/bin",
                               "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")})
    assert proc.returncode == 0, proc.stderr
    assert "FRF peak" in proc.stdout
