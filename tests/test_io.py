"""JSON summaries with NumPy values."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from fesub.io import json_default, write_json


def test_numpy_values_round_trip_through_json(tmp_path):
    obj = {"f": np.float64(0.1), "i": np.int64(7), "b": np.bool_(True), "a": np.arange(3.0),
           "m": np.eye(2, dtype=np.int32), "nan": np.float64("nan"), "inf": np.array([np.inf]),
           "p": Path("out") / "x.npz", "plain": [1, "s", None]}
    back = json.loads(write_json(tmp_path / "s.json", obj).read_text())
    assert back["f"] == 0.1 and type(back["f"]) is float
    assert back["i"] == 7 and type(back["i"]) is int
    assert back["b"] is True
    assert back["a"] == [0.0, 1.0, 2.0] and back["m"] == [[1, 0], [0, 1]]
    assert np.isnan(back["nan"]) and back["inf"] == [np.inf]
    assert back["p"] == str(Path("out") / "x.npz") and back["plain"] == [1, "s", None]


def test_unknown_types_are_refused_not_stringified():
    with pytest.raises(TypeError, match="not JSON serialisable: object"):
        json.dumps({"x": object()}, default=json_default)
    with pytest.raises(TypeError, match="complex"):
        json.dumps({"z": 1 + 2j}, default=json_default)


# ---- the result protocol: self-describing netCDF files, exact round trips, one summary schema
import os
import subprocess
import sys

import xarray as xr

from fesub import io
from fesub.atomic import atomic_write
from fesub.errors import FesubError, ParameterError


class _Demo(io.Result):
    """A result of every storable shape: real, complex, boolean, string and nested metadata."""

    kind = "demo"

    def __init__(self, t, z, flags, meta):
        self.t, self.z, self.flags, self.meta = t, z, flags, meta

    def to_xarray(self):
        return xr.Dataset(
            {"z": (("t", "mode"), self.z, {"units": "1/s"}),
             "flags": ("t", self.flags, {"units": "1"})},
            coords={"t": ("t", self.t, {"units": "s"})}, attrs={"meta": self.meta, "mu": 0.3})

    @classmethod
    def from_xarray(cls, ds):
        return cls(ds["t"].values, ds["z"].values, ds["flags"].values, ds.attrs["meta"])

    def summary(self):
        return io.summary_record("demo", {"mu": (0.3, "1")}, {"n": (int(self.t.size), None)})


def _demo():
    rng = np.random.default_rng(1)
    t = np.linspace(0, 1, 7) + 1e-17 * rng.standard_normal(7)
    z = rng.standard_normal((7, 3)) + 1j * rng.standard_normal((7, 3))
    return _Demo(t, z, t > 0.5, {"events": [{"t": 0.1, "what": "fold"}], "ok": True, "none": None})


def test_result_round_trips_bit_for_bit_and_reopens_by_itself(tmp_path):
    r = _demo()
    p = r.save(tmp_path / "demo_mu0.1")  # appended, not substituted: no clash with demo_mu0.3
    assert p.name == "demo_mu0.1.nc"
    back = io.load(p)  # fesub.load: the file says which class it holds
    assert type(back) is _Demo
    assert np.array_equal(back.t, r.t) and np.array_equal(back.z, r.z)  # exact, complex included
    assert back.flags.dtype == bool and np.array_equal(back.flags, r.flags)
    assert back.meta == r.meta
    assert _Demo.load(tmp_path / "demo_mu0.1").z.dtype == complex


def test_saved_file_is_plain_netcdf_with_units(tmp_path):
    p = _demo().save(tmp_path / "d")
    # read with xarray alone, without fesub's decoding: a valid netCDF-4 file for other tools
    with xr.open_dataset(p, engine="h5netcdf") as ds:
        assert ds["z__real"].attrs["units"] == "1/s" and ds["t"].attrs["units"] == "s"
        assert "fesub_class" in ds.attrs
    import h5py

    with h5py.File(p) as f:  # and a plain HDF5 file (MATLAB's h5read, ParaView)
        assert "z__imag" in f


def test_summary_schema_and_info(tmp_path):
    p = _demo().save(tmp_path / "d")
    s = io.info(p)
    assert s["schema"] == io.SUMMARY_SCHEMA and s["study"] == "demo"
    assert s["parameters"]["mu"] == {"value": 0.3, "unit": "1"}
    for key in ("fesub_version", "created", "results"):
        assert key in s
    with pytest.raises(TypeError, match="must be \\(value, unit\\)"):
        io.summary_record("x", {"mu": 0.3}, {})


def test_fesub_info_command(tmp_path, capsys):
    from fesub.cli import main

    p = _demo().save(tmp_path / "d")
    assert main(["info", str(p)]) == 0
    out = capsys.readouterr().out
    assert "study: demo" in out and "mu = 0.3 1" in out
    assert main(["info", str(tmp_path / "missing.nc")]) == 2  # every command-line error: 2


def test_corrupt_or_foreign_files_are_clear_errors(tmp_path):
    bad = tmp_path / "bad.nc"
    bad.write_bytes(b"not a netcdf file")
    with pytest.raises(FesubError, match="cannot read"):
        io.load(bad)
    xr.Dataset({"a": ("x", np.arange(3.0))}).to_netcdf(tmp_path / "plain.nc", engine="h5netcdf")
    with pytest.raises(FesubError, match="carries no checksums"):  # not written by fesub
        io.load(tmp_path / "plain.nc")
    io.save_dataset(xr.Dataset({"a": ("x", np.arange(3.0))}), tmp_path / "anon.nc")
    with pytest.raises(FesubError, match="does not say which fesub result"):
        io.load(tmp_path / "anon.nc")
    ds = xr.Dataset(attrs={"fesub_class": "os:system"})
    io.save_dataset(ds, tmp_path / "evil.nc")
    with pytest.raises(FesubError, match="outside fesub"):
        io.load(tmp_path / "evil.nc")


def test_study_folder_reopens_with_every_result(tmp_path):
    _demo().save(tmp_path / "a")
    _demo().save(tmp_path / "b")
    io.write_json(tmp_path / "summary.json", io.summary_record("demo", {}, {}))
    out = io.load(tmp_path)
    assert sorted(out) == ["a", "b"] and out.summary["study"] == "demo"
    with pytest.raises(FesubError, match="holds no fesub results"):
        io.load(tmp_path / "a.nc").__class__ and io.load(_empty(tmp_path))


def _empty(tmp_path):
    (tmp_path / "empty").mkdir()
    return tmp_path / "empty"


# ---- the command-line conventions every study shares
from fesub.cli import common  # noqa: E402


def test_study_dir_refuses_files_and_unwritable_folders(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(ParameterError, match="is an existing file"):
        common.StudyDir(f, "demo", {})
    with pytest.raises(ParameterError, match="is a file, not a folder"):
        common.StudyDir(f / "sub", "demo", {})
    if os.geteuid() != 0:  # root writes anywhere: the read-only case needs a normal user
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o500)
        with pytest.raises(ParameterError, match="not a writable folder"):
            common.StudyDir(ro / "out", "demo", {})


def test_study_dir_resumes_parts_and_refuses_other_parameters(tmp_path):
    calls = []

    def make():
        calls.append(1)
        return _demo()

    d = common.StudyDir(tmp_path / "o", "demo", {"mu": 0.3})
    d.compute("part", make)
    d = common.StudyDir(tmp_path / "o", "demo", {"mu": 0.3})
    assert isinstance(d.compute("part", make), _Demo) and len(calls) == 1  # resumed
    with pytest.raises(ParameterError, match="other parameters \\(mu\\).*--overwrite"):
        common.StudyDir(tmp_path / "o", "demo", {"mu": 0.1})
    d = common.StudyDir(tmp_path / "o", "demo", {"mu": 0.1}, overwrite=True)
    d.compute("part", make)
    assert len(calls) == 2  # recomputed


def test_number_and_integer_argument_types():
    import argparse

    pos = common.number(gt=0, unit="s")
    assert pos("0.5") == 0.5
    for bad in ("0", "-1", "nan", "inf", "x"):
        with pytest.raises(argparse.ArgumentTypeError):
            pos(bad)
    n = common.integer(ge=1)
    assert n("3") == 3
    for bad in ("0", "1.5", "x"):
        with pytest.raises(argparse.ArgumentTypeError):
            n(bad)


@pytest.mark.parametrize("argv", [["nope"], ["info"], ["beam-on-beam", "--no-such-flag"]])
def test_usage_errors_are_one_line_and_status_2(argv, subprocess_env):
    proc = subprocess.run([sys.executable, "-m", "fesub.cli", *argv], capture_output=True,
                          text=True, env=subprocess_env, timeout=60)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and ": error: " in lines[0], proc.stderr


def test_result_files_are_compressed_losslessly_and_readable_by_others(tmp_path):
    class Big(io.Result):
        def __init__(self, a, k):
            self.a, self.k = a, k

        def to_xarray(self):
            return xr.Dataset({"a": (("i", "j"), self.a, {"units": "m"}),
                               "k": (("i", "j"), self.k, {"units": "1"})})

        @classmethod
        def from_xarray(cls, ds):
            return cls(ds["a"].values, ds["k"].values)

    a = np.repeat(np.random.default_rng(0).standard_normal((200, 1)), 500, axis=1)
    k = np.repeat(np.arange(200, dtype=np.int64)[:, None] % 3, 500, axis=1)  # e.g. contact states
    p = Big(a, k).save(tmp_path / "big")
    back = io.load(p)
    assert np.array_equal(back.a, a) and np.array_equal(back.k, k)  # lossless
    # floats are written as they are (their noisy low bytes do not compress), integers deflated:
    # the file holds the 800 kB of floats and a few kB of the 800 kB of integers, plus headers
    assert a.nbytes < p.stat().st_size < a.nbytes + k.nbytes / 10
    mask = os.umask(0)
    os.umask(mask)
    assert p.stat().st_mode & 0o777 == 0o666 & ~mask  # not the 0600 of a temporary file
    js = io.write_json(tmp_path / "s.json", {"a": 1})
    assert js.stat().st_mode & 0o777 == 0o666 & ~mask


def test_ctrl_c_during_a_write_is_held_until_the_file_is_in_place(tmp_path):
    """A SIGINT that arrives while a result file is written is delivered once the file is in
    place: the file is whole (no temporary left) and the interrupt still ends the caller."""
    import signal

    target = tmp_path / "part.json"
    before = signal.getsignal(signal.SIGINT)

    def write(tmp):
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C in the middle of the write
        Path(tmp).write_text('{"done": true}')

    with pytest.raises(KeyboardInterrupt):
        atomic_write(target, write)
    assert json.loads(target.read_text()) == {"done": True}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["part.json"]
    assert signal.getsignal(signal.SIGINT) is before  # the caller's handler is back


def test_a_file_written_before_its_class_moved_still_loads(tmp_path):
    """A result file names its class by module; files written before a result class moved (the
    contact package's re-layout) name the old module and must reopen as the same result."""
    import h5netcdf

    from fesub.contact.analyses.eigen import EigenLoci

    loci = EigenLoci(np.array([0.01, 0.02]), np.array([[-1 + 10j], [2 + 11j]]), 0.3)
    path = loci.save(tmp_path / "loci")
    with h5netcdf.File(path, "r+") as f:
        assert f.attrs["fesub_class"].endswith(":EigenLoci")
        f.attrs["fesub_class"] = "fesub.contact.eigen:EigenLoci"  # where the class lived before
    # a file edited in place is no longer the file written: refused unless asked (an older
    # fesub's files carry no checksums either)
    with pytest.raises(FesubError, match="verify=False"):
        io.load(path)
    back = io.load(path, verify=False)
    assert type(back) is EigenLoci
    np.testing.assert_array_equal(back.lam, loci.lam)
    ds = loci.to_xarray()  # and a file with checksums naming the old module
    ds.attrs["fesub_class"] = "fesub.contact.eigen:EigenLoci"
    back = io.load(io.save_dataset(ds, tmp_path / "old"))
    assert type(back) is EigenLoci
    np.testing.assert_array_equal(back.lam, loci.lam)
    for old, new in io.MOVED_MODULES.items():  # every new home exists
        assert __import__(new, fromlist=["_"]).__name__ == new, old


def test_the_atomic_writers_are_exported_by_io():
    """The writers of whole files live in fesub.atomic; fesub.io, their documented home, exports
    the same objects."""
    from fesub import atomic

    for name in atomic.__all__:
        assert name in io.__all__ and getattr(io, name) is getattr(atomic, name)
