"""The ratio check of the quick benchmark profile (benchmarks/track.py): margins from the spread,
a regression beyond the margin fails, and a deliberately slowed kernel is caught while the
unchanged kernel passes."""

from __future__ import annotations

import importlib
import importlib.util
import time
from pathlib import Path

import pytest

from fesub import _backend

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def track():
    spec = importlib.util.spec_from_file_location("fesub_track", ROOT / "benchmarks" / "track.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# the parts of the profile beside track.py, which loading it puts on the path
@pytest.fixture(scope="module")
def record(track):
    return importlib.import_module("track_record")


@pytest.fixture(scope="module")
def measuring(track):
    return importlib.import_module("track_measure")


@pytest.fixture(scope="module")
def bench(track):
    return importlib.import_module("track_bench")


def test_margins_are_twice_the_spread_within_bounds(record):
    runs = [{"ratios": {"a": 10.0, "b": 2.0, "c": 5.0}}, {"ratios": {"a": 10.2, "b": 3.0,
                                                                  "c": 5.0}},
            {"ratios": {"a": 9.9, "b": 2.2, "c": 5.0}}]
    spread, margin = record.margins_from(runs)
    assert spread["a"] == pytest.approx(0.2 / 10.0)       # largest deviation from the median 10
    assert margin["a"] == record.MARGIN_MIN               # 4 % doubled is below the floor
    assert spread["b"] == pytest.approx(0.8 / 2.2)
    assert margin["b"] is None                            # 73 % is above the cap: not judged
    assert spread["c"] == 0.0 and margin["c"] == record.MARGIN_MIN
    # a ratio measured in only some runs: its spread from those; in one run only: none
    runs[1]["ratios"]["d"], runs[2]["ratios"]["d"], runs[2]["ratios"]["e"] = 3.0, 3.3, 1.0
    spread, margin = record.margins_from(runs)
    assert spread["d"] == pytest.approx(0.15 / 3.15) and margin["d"] == record.MARGIN_MIN
    assert "e" not in spread and "e" not in margin


def test_only_a_drop_beyond_the_margin_fails(record):
    hist = {"machine": "m", "margins": {"a": 0.2, "b": 0.2},
            "runs": [{"ratios": {"a": 10.0, "b": 4.0}}]}
    assert record.compare({"ratios": {"a": 8.1, "b": 40.0, "new": 1.0}}, hist) == []
    bad = record.compare({"ratios": {"a": 7.9, "b": 4.0}}, hist)
    assert len(bad) == 1 and bad[0].startswith("a:")
    assert record.compare({"ratios": {"a": 1.0}}, {"machine": "m", "margins": {}, "runs": []}) == []
    # a ratio too noisy to judge (margin None) never fails; one gone from the run is reported
    hist["margins"]["b"] = None
    assert record.compare({"ratios": {"a": 9.0, "b": 0.1}}, hist) == []
    hist["margins"]["b"] = 0.2
    assert record.compare({"ratios": {"b": 4.0}}, hist) == []
    assert record.missing({"ratios": {"b": 4.0}}, hist) == ["a"]
    # the reference is the median of the last three records: one low record does not lower it
    hist["runs"] += [{"ratios": {"a": 12.0}}, {"ratios": {"a": 2.0}}]
    assert record.reference(hist)["a"] == 10.0
    assert record.compare({"ratios": {"a": 7.9}}, hist)
    assert not record.compare({"ratios": {"a": 8.1}}, hist)


def test_a_slowed_kernel_fails_the_check_and_the_unchanged_one_passes(track, record, measuring,
                                                                      monkeypatch):
    if not _backend.compiled_available("freeplay"):
        pytest.skip("compiled freeplay kernel not built")
    name, _, fast, base, work = next(c for c in measuring._kernel_cases()
                                     if c[0] == "kernel:freeplay")
    fast(), base()

    def measure():
        tf, tb = measuring.alternate(fast, base, 3)
        return {"ratios": {name: tb / work / tf}}

    # the widest margin a calibration can give: the unchanged kernel must pass it on a noisy
    # machine; a kernel doing its work five times must not
    hist = {"machine": "test", "margins": {name: record.MARGIN_MAX}, "runs": [measure()]}
    assert record.compare(measure(), hist) == []
    k = _backend.kernels("freeplay")
    kernel = k.batch_rk4

    def slowed(*args):
        for _ in range(5):
            kernel(*args)

    monkeypatch.setattr(k, "batch_rk4", slowed)
    slow = measure()
    bad = record.compare(slow, hist)
    assert len(bad) == 1 and bad[0].startswith(name)
    # measured again (the profile's own kernel case, nothing else): still below the floor
    said = []
    low = track.confirm(slow, hist, 1, log=said.append, rounds=3)
    assert list(low) == [name] and slow["again"][0][name] < low[name][2]
    assert any(name in s for s in said)


def test_a_regression_is_a_drop_that_a_second_measurement_repeats(track, record, tmp_path,
                                                                   monkeypatch, capsys):
    """One low measurement (noise) is measured again and passes when the second is above the
    floor; a drop repeated by the second measurement fails; only the low ratios are measured
    again; ``--confirm 0`` lets one measurement decide."""
    monkeypatch.setattr(record, "HISTORY", tmp_path / "history")
    ref = {"bench:a::t:x": 10.0, "kernel:k": 5.0, "study:s": 1.0}
    hist = {"machine": "toy", "margins": dict.fromkeys(ref, 0.2), "spread": {},
            "runs": [{"date": "d", "ratios": ref}]}
    record.save_history(record.history_path("toy"), hist)
    first = {"bench:a::t:x": 7.0, "kernel:k": 5.0, "study:s": 1.0}   # x below its floor 8
    asked = []

    def fake_profile(second):
        def prof(**kw):
            if kw.get("bench") == "run" and kw.get("bench_nodes"):  # measured again
                asked.append((kw["bench_nodes"], kw["kernels"], kw["studies"]))
                return {"ratios": {"bench:a::t:x": second}}
            return {"ratios": dict(first), "what": {"bench:a::t:x": "benchmarks/test_bench_a.py"
                                                    "::t[1], extra_info ratio_x"},
                    "seconds": 1.0, "load_average": [1.0, 1.0]}
        return prof

    argv = ["run", "--no-kernels", "--studies", "--machine", "toy"]
    monkeypatch.setattr(track, "profile", fake_profile(9.5))
    assert track.main(argv) == 0
    assert asked == [(["benchmarks/test_bench_a.py::t[1]"], False, [])]
    assert "ok (again: 9.5x)" in capsys.readouterr().out
    monkeypatch.setattr(track, "profile", fake_profile(7.5))
    assert track.main(argv) == 1
    out = capsys.readouterr().out
    # measured twice more by default, below the floor every time
    assert "REGRESSION (again: 7.5x, 7.5x)" in out and "measured again:\n  bench:a::t:x" in out
    assert len(asked) == 3
    asked.clear()
    monkeypatch.setattr(track, "profile", fake_profile(9.5))
    assert track.main(argv + ["--confirm", "0"]) == 1 and asked == []


BENCH_FILE = """
def test_sum(benchmark, ratio_to):
    benchmark(sum, range(2000))
    ratio_to("python_loop", lambda: [i for i in range(2000)], rounds=3)
    benchmark.extra_info["ratio_flag"] = True  # not a number: skipped


def test_no_ratio(benchmark):
    benchmark(sum, range(10))
"""


def _bench_json(tmp_path, bench, body=BENCH_FILE, name="test_bench_toy.py"):
    """A pytest-benchmark JSON written by the real ``ratio_to`` fixture (benchmarks/conftest.py)
    on a toy benchmark, timed with the profile's own options."""
    import shutil
    import subprocess
    import sys

    d = tmp_path / name.removesuffix(".py")
    d.mkdir()
    shutil.copy(ROOT / "benchmarks" / "conftest.py", d / "conftest.py")
    (d / name).write_text(body)
    out = tmp_path / f"{name}.json"
    proc = subprocess.run([sys.executable, "-m", "pytest", str(d), "-q", "-p", "no:cacheprovider",
                           f"--benchmark-json={out}", *bench.BENCH_OPTIONS],
                          cwd=str(tmp_path), capture_output=True, text=True,
                          env=bench.child_env())  # not an xdist worker's: timed
    assert proc.returncode == 0, proc.stdout[-2000:]
    return out


def test_every_ratio_a_benchmark_records_is_harvested(bench, tmp_path):
    import json

    out = _bench_json(tmp_path, bench)
    ratios, what, times = bench.bench_ratios(out)
    assert list(ratios) == ["bench:toy::test_sum:python_loop"]
    info = next(b for b in json.loads(out.read_text())["benchmarks"]
                if b["name"] == "test_sum")["extra_info"]
    # the value the fixture computed: the baseline's median over the benchmark's median
    assert ratios["bench:toy::test_sum:python_loop"] == info["ratio_python_loop"]
    assert times["bench:toy::test_sum:python_loop"][1] == info["baseline_python_loop_median_s"]
    assert bench.bench_key("benchmarks/test_bench_fe.py::test_q4[tri]", "numpy_twin") == \
        "bench:fe::test_q4[tri]:numpy_twin"


def test_ratios_may_appear_and_vanish_between_runs(track, record, bench, tmp_path, monkeypatch,
                                                   capsys):
    """A benchmark that disappears is reported, not a failure; a new one starts its history
    (recorded, not judged until a calibration gives it a margin)."""
    monkeypatch.setattr(record, "HISTORY", tmp_path / "history")
    first = _bench_json(tmp_path, bench)
    second = _bench_json(tmp_path, bench, BENCH_FILE.replace("test_sum", "test_total"),
                         name="test_bench_other.py")
    argv = ["--no-kernels", "--studies", "--machine", "toy", "--record"]
    assert track.main(["run", "--bench-json", str(first), *argv]) == 0
    hist = record.load_history(record.history_path("toy"))
    old = "bench:toy::test_sum:python_loop"
    assert list(hist["runs"][-1]["ratios"]) == [old]
    hist["margins"], hist["spread"] = {old: 0.5}, {old: 0.1}
    record.save_history(record.history_path("toy"), hist)
    capsys.readouterr()
    assert track.main(["run", "--bench-json", str(second), *argv]) == 0
    out = capsys.readouterr().out
    new = "bench:other::test_total:python_loop"
    assert "not measured in this run (1; not a failure)" in out and old in out
    assert new in out and "new (recorded" in out
    hist = record.load_history(record.history_path("toy"))
    assert [list(r["ratios"]) for r in hist["runs"]] == [[old], [new]]


def test_the_costly_benchmarks_run_once_untimed_the_others_timed(bench, tmp_path, monkeypatch):
    """``--bench``: every benchmark timed with the profile's options and its ratios read, except
    those in UNTIMED, which run once with --benchmark-disable (so that they cannot rot; their
    baselines once, whatever rounds they ask for) and are left out of the JSON; a failing benchmark makes the status non-zero."""
    import json
    import shutil

    root = tmp_path / "repo"
    (root / "benchmarks").mkdir(parents=True)
    shutil.copy(ROOT / "benchmarks" / "conftest.py", root / "benchmarks" / "conftest.py")
    (root / "benchmarks" / "test_bench_toy.py").write_text(BENCH_FILE)
    marker = root / "ran_untimed"
    (root / "benchmarks" / "test_bench_costly.py").write_text(
        "import pathlib\n\n\ndef test_costly(benchmark, ratio_to):\n"
        "    benchmark(sum, range(10))\n"
        "    calls = []\n"
        "    ratio_to('x', calls.append, 1, rounds=5)\n"
        f"    pathlib.Path({str(marker)!r}).write_text(f'{{benchmark.disabled}} {{len(calls)}}')\n")
    monkeypatch.setattr(bench, "ROOT", root)
    # an entry naming a benchmark that no longer exists is reported, not an error
    monkeypatch.setattr(bench, "UNTIMED", {"test_bench_costly.py": "a test",
                                           "test_bench_toy.py::test_gone": "removed since"})
    out = tmp_path / "b.json"
    said = []
    status, _ = bench.run_benchmarks(out, log=said.append)
    assert status == 0
    assert any("benchmarks/test_bench_toy.py::test_gone" in s for s in said)
    assert marker.read_text() == "True 1"   # ran, untimed, its baseline once (not 5 rounds)
    names = [b["name"] for b in json.loads(out.read_text())["benchmarks"]]
    assert sorted(names) == ["test_no_ratio", "test_sum"]
    assert list(bench.bench_ratios(out)[0]) == ["bench:toy::test_sum:python_loop"]
    (root / "benchmarks" / "test_bench_costly.py").write_text("def test_costly():\n    assert 0\n")
    assert bench.run_benchmarks(out, log=lambda *a: None)[0] != 0


def test_calibration_from_runs_measured_earlier(track, record, tmp_path, monkeypatch):
    """``calibrate --from``: margins from runs already measured (a calibration's and the checks
    after it), nothing measured again; those runs become the record."""
    import json

    monkeypatch.setattr(record, "HISTORY", tmp_path / "history")
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    run = {"date": "d", "seconds": 1.0, "load_average": [1.0, 1.0]}
    a.write_text(json.dumps([dict(run, ratios={"x": 10.0, "y": 1.0}),
                             dict(run, ratios={"x": 9.0, "y": 1.0})]))
    b.write_text(json.dumps(dict(run, ratios={"x": 7.0, "y": 1.0})))
    assert track.main(["calibrate", "--from", str(a), str(b), "--machine", "toy"]) == 0
    hist = record.load_history(record.history_path("toy"))
    assert hist["spread"]["x"] == pytest.approx(2.0 / 9.0)       # 7 against the median 9
    assert hist["margins"]["x"] == pytest.approx(4.0 / 9.0)
    assert hist["margins"]["y"] == record.MARGIN_MIN
    assert [r["ratios"]["x"] for r in hist["runs"]] == [10.0, 9.0, 7.0]
    assert all(r["calibration"] for r in hist["runs"])


def test_a_history_of_another_processor_judges_nothing(track, record, tmp_path, monkeypatch, capsys):
    """A history calibrated on one processor does not judge a run on another that shares its
    name (a virtual machine's brand, ``AMD EPYC``): the same drop fails on the processor of the
    calibration and is reported, not judged, on the other; a history from before the processor
    was kept is judged as before; a calibration from runs on two processors is refused, and one
    records its processor."""
    import json

    monkeypatch.setattr(record, "HISTORY", tmp_path / "history")
    ref = {"kernel:k": 10.0}
    mine, other = "AuthenticAMD family 25 model 17 stepping 1", "AuthenticAMD family 25 model 1 stepping 1"
    run = {"ratios": {"kernel:k": 5.0}, "what": {}, "seconds": 1.0, "load_average": [1.0, 1.0], "cpu": mine}
    monkeypatch.setattr(track, "profile", lambda **kw: json.loads(json.dumps(run)))
    argv = ["run", "--studies", "--machine", "toy", "--confirm", "0"]
    for cpu, status in ((mine, 1), (other, 0), (None, 1)):
        hist = {"machine": "toy", "margins": {"kernel:k": 0.2}, "spread": {},
                "runs": [{"date": "d", "ratios": ref}], **({"cpu": cpu} if cpu else {})}
        record.save_history(record.history_path("toy"), hist)
        assert track.main(argv) == status, cpu
        out = capsys.readouterr().out
        assert ("calibrated on another processor" in out) == (cpu == other)
        assert ("REGRESSION" in out) == (status == 1)
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(dict(run, date="d", ratios={"x": 1.0})))
    b.write_text(json.dumps(dict(run, date="d", ratios={"x": 1.1}, cpu=other)))
    with pytest.raises(SystemExit):
        track.main(["calibrate", "--from", str(a), str(b), "--machine", "toy2"])
    assert "different processors" in capsys.readouterr().err
    b.write_text(json.dumps(dict(run, date="d", ratios={"x": 1.1})))
    assert track.main(["calibrate", "--from", str(a), str(b), "--machine", "toy2"]) == 0
    assert record.load_history(record.history_path("toy2"))["cpu"] == mine
    assert record.cpu_signature() is None or "family" in record.cpu_signature()


def test_a_run_busier_than_the_calibration_is_judged_with_wider_margins(record, measuring):
    """Margins hold for the load the calibration saw: a run whose mean load average is above the
    calibration's highest is judged with BUSY_WIDEN times the margin (a drop of 30 % passes a
    20 % margin there), and a slowdown beyond the wider margin still fails; the load is sampled
    while a run lasts."""
    cal = [{"calibration": True, "date": "d", "ratios": {"a": 10.0}, "load_average": [1.0, 2.0]},
           {"calibration": True, "date": "d", "ratios": {"a": 10.0}, "load_average": [2.5, 1.5],
            "load_peak": 3.0}]
    hist = {"machine": "m", "margins": {"a": 0.2}, "runs": cal}
    assert record.calibrated_load(hist) == 3.0
    calm = {"ratios": {"a": 7.0}, "load_average": [2.0, 2.0], "load_mean": 2.0}
    busy = dict(calm, load_mean=6.0)
    assert not record.busier(calm, hist) and record.busier(busy, hist)
    assert list(record.floors(calm, hist)) == ["a"]           # 7 < 10 * (1 - 0.2)
    assert record.floors(busy, hist) == {}                    # 7 > 10 * (1 - 2 * 0.2)
    assert list(record.floors(dict(busy, ratios={"a": 5.0}), hist)) == ["a"]
    # without sampled loads: the mean of the run's start and end
    assert record.busier({"ratios": {}, "load_average": [5.0, 2.0]}, hist)
    with measuring.LoadSampler(every=0.01) as ls:
        time.sleep(0.05)
    assert len(ls.samples) >= 3 and ls.peak >= ls.mean >= 0.0


def test_studies_run_as_a_user_runs_them_against_their_own_baseline(measuring, monkeypatch,
                                                                      tmp_path):
    """The study ratios' command lines, without running a study: the default list leaves the
    opt-in studies out; a study of AS_USER gets its default flags (only --out), the others
    --quiet --no-figures; a study with its own baseline is run on that commit's build and its
    goal is recorded."""
    calls, trees = [], []
    monkeypatch.setattr(measuring, "baseline_commit", lambda: "a" * 40)
    monkeypatch.setattr(measuring, "baseline_tree", lambda c: trees.append(c) or tmp_path / c[:12])
    monkeypatch.setattr(measuring, "_study", lambda argv, tree, out, as_user=False:
                        calls.append((tuple(argv), tree, as_user)))
    run = measuring.measure(rounds=1, kernels=False, log=lambda *a: None)
    names = {k[len("study:"):] for k in run["ratios"]}
    assert names == set(measuring.STUDIES) - set(measuring.OPT_IN)
    assert "backbone-beam" in measuring.OPT_IN
    assert ("backbone",) in [c[0] for c in calls if c[2]] and "goals" not in run
    assert all(c[2] == (name in measuring.AS_USER) for c in calls
               for name in [n for n, a in measuring.STUDIES.items() if tuple(a) == c[0]])
    calls.clear()
    run = measuring.measure(rounds=1, kernels=False, studies=["backbone-beam"],
                            log=lambda *a: None)
    base = measuring.STUDY_BASELINES["backbone-beam"]
    assert base.startswith("189b089") and trees[-1] == base
    assert {c[1] for c in calls} == {None, tmp_path / base[:12]} and all(c[2] for c in calls)
    assert run["goals"] == {"study:backbone-beam": 3.0}
    assert "(default flags)" in run["what"]["study:backbone-beam"]
