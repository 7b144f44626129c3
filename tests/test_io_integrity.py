"""Result files that cannot lie: every byte a result file holds is covered by a checksum verified
on load, and a file that is damaged, partial or edited is a FesubError naming the file and what is
wrong, never data read as good."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from fesub import checksums, io
from fesub.errors import FesubError


class _Signals(io.Result):
    """Floats, deflated integers, a complex array and JSON metadata: every kind of stored data."""

    kind = "signals"

    def __init__(self, x, state, z, meta):
        self.x, self.state, self.z, self.meta = x, state, z, meta

    def to_xarray(self):
        t = np.arange(self.x.size) * 1e-3
        return xr.Dataset({"x": ("t", self.x, {"units": "m"}),
                           "state": (("t", "node"), self.state, {"units": "1"}),
                           "z": ("t", self.z, {"units": "N"})},
                          coords={"t": ("t", t, {"units": "s"})}, attrs={"meta": self.meta})

    @classmethod
    def from_xarray(cls, ds):
        return cls(ds["x"].values, ds["state"].values, ds["z"].values, ds.attrs["meta"])


def _signals():
    rng = np.random.default_rng(3)
    n = 400
    return _Signals(0.14 + 1e-3 * rng.standard_normal(n), (np.arange(n * 4).reshape(n, 4) % 3),
                    rng.standard_normal(n) + 1j * rng.standard_normal(n), {"mu": 0.3, "ok": True})


def _flip(raw: bytes, pos: int, bit: int) -> bytes:
    b = bytearray(raw)
    b[pos] ^= 1 << bit
    return bytes(b)


def test_a_bit_flipped_in_a_data_array_is_named_on_load(tmp_path):
    """The example of the report: one bit flipped inside a data array (here the exponent of a
    displacement, 0.14 m read as 0.28 m) was returned as good data."""
    r = _signals()
    p = r.save(tmp_path / "r")
    raw = p.read_bytes()
    rng_x = checksums.byte_ranges(p)["x"]  # where the bytes of x lie in the file
    (off, n), = rng_x
    pos = off + 8 * 5 + 6  # sample 5, byte 6 (little-endian): the exponent's low bits
    bad = tmp_path / "bad.nc"
    bad.write_bytes(_flip(raw, pos, 4))
    with pytest.raises(FesubError, match=r"bad.nc is damaged: the data of variable 'x' changed"):
        io.load(bad)


def test_a_bit_flip_anywhere_in_the_file_is_detected(tmp_path):
    """Over many positions: every variable's data (floats, deflated integer chunks, the two parts
    of a complex array, the coordinate), the HDF5 structure, the attributes and the checksum
    record itself. Each damaged copy is refused, and a flip in a variable's data names it."""
    r = _signals()
    p = r.save(tmp_path / "r")
    raw = p.read_bytes()
    ranges = checksums.byte_ranges(p)
    assert {"x", "state", "z__real", "z__imag", "t"} <= set(ranges)
    rng = np.random.default_rng(0)
    positions = list(rng.integers(0, len(raw), 250))  # anywhere, the footer included
    for name, rr in ranges.items():  # and inside each variable's stored bytes
        for off, n in rr:
            positions += list(off + rng.integers(0, n, 12))
    bad = tmp_path / "bad.nc"
    owner = {int(q): name for name, rr in ranges.items() for off, n in rr for q in range(off, off + n)}
    for k, pos in enumerate(positions):
        bad.write_bytes(_flip(raw, int(pos), k % 8))
        with pytest.raises(FesubError) as exc:
            io.load(bad)
        assert "bad.nc" in str(exc.value)
        if int(pos) in owner:
            assert repr(owner[int(pos)]) in str(exc.value), (pos, str(exc.value))
    assert len(positions) > 300


@pytest.mark.parametrize("cut", [0, 8, 100, 1000, -200, -33, -1])
def test_truncated_or_extended_copies_are_refused(tmp_path, cut):
    p = _signals().save(tmp_path / "r")
    raw = p.read_bytes()
    bad = tmp_path / "cut.nc"
    bad.write_bytes(raw[:cut])
    with pytest.raises(FesubError, match="cut.nc"):
        io.load(bad)
    bad.write_bytes(raw + b"\0")
    with pytest.raises(FesubError, match="cut.nc"):
        io.load(bad)


def test_info_on_a_damaged_file_is_a_clear_error(tmp_path):
    from fesub.cli import main

    p = _signals().save(tmp_path / "r")
    raw = p.read_bytes()
    (off, n), = checksums.byte_ranges(p)["x"]
    p.write_bytes(_flip(raw, off + 3, 1))
    with pytest.raises(FesubError, match="damaged"):
        io.info(p)
    assert main(["info", str(p)]) == 2


def test_a_file_rewritten_by_another_tool_is_not_trusted(tmp_path):
    p = _signals().save(tmp_path / "r")
    with xr.open_dataset(p, engine="h5netcdf") as ds:  # readable by others as plain netCDF
        ds.load().to_netcdf(tmp_path / "copy.nc", engine="h5netcdf")
    with pytest.raises(FesubError, match="carries no checksums"):
        io.load(tmp_path / "copy.nc")


def test_missing_or_malformed_variables_and_attributes_name_the_file(tmp_path):
    r = _signals()
    ds = r.to_xarray().drop_vars("x")  # a partial dataset saved under the class's name
    io.save_dataset(ds, tmp_path / "partial", _Signals)
    with pytest.raises(FesubError, match=r"partial.nc: a variable or attribute is missing .*'x'"):
        io.load(tmp_path / "partial.nc")
    ds = r.to_xarray()
    del ds.attrs["meta"]
    io.save_dataset(ds, tmp_path / "noattr", _Signals)
    with pytest.raises(FesubError, match=r"noattr.nc: a variable or attribute is missing .*'meta'"):
        io.load(tmp_path / "noattr.nc")
    ds = r.to_xarray()
    ds.attrs = {"meta__json": "{not json"}  # an attribute edited by hand, then saved
    io.save_dataset(ds, tmp_path / "badjson", _Signals)
    with pytest.raises(FesubError, match=r"badjson.nc: attribute 'meta__json' is not valid JSON"):
        io.load(tmp_path / "badjson.nc")
    for spec, msg in [("fesub.no_such_module:X", "no fesub result class"),
                      ("fesub.io:NoSuchClass", "no fesub result class")]:
        io.save_dataset(xr.Dataset(attrs={"fesub_class": spec}), tmp_path / "cls")
        with pytest.raises(FesubError, match=msg):
            io.load(tmp_path / "cls.nc")


def test_folder_markers_without_their_class_are_refused(tmp_path):
    d = tmp_path / "store"
    d.mkdir()
    for content, msg in [("{}", "fesub_class missing"), ("[1, 2]", "fesub_class missing"),
                         ("{not json", "cannot read"),
                         ('{"fesub_class": "fesub.nope:open"}', "no fesub result class"),
                         ('{"fesub_class": 3}', "module:Class")]:
        (d / io.FOLDER_MARKER).write_text(content)
        with pytest.raises(FesubError, match=msg):
            io.load(d)


def test_study_folder_with_a_damaged_part_names_it(tmp_path):
    _signals().save(tmp_path / "a")
    p = _signals().save(tmp_path / "b")
    io.write_json(tmp_path / "summary.json", io.summary_record("demo", {}, {}))
    raw = p.read_bytes()
    p.write_bytes(_flip(raw, len(raw) // 2, 0))
    with pytest.raises(FesubError, match="b.nc"):
        io.load(tmp_path)
    (tmp_path / "summary.json").write_text("{truncated")
    with pytest.raises(FesubError, match="summary.json"):
        io.load(tmp_path)


def test_a_sweep_store_whose_manifest_changed_is_refused(tmp_path):
    """A byte of a store's manifest changed (a field's name in its unit table) was read as good:
    the store's fields came back renamed."""
    import fesub.sweep as sw

    store = tmp_path / "s"
    sw.run_sweep("coulomb_regime", store, grid={"r1": [0.45, 1.5], "beta": [0.1, 0.6]},
                 fixed={"gamma": [1.0, 1.0], "kappa": [1.0, 1.0], "contact": "wall:0", "load": 0},
                 executor="serial", progress=False)
    assert "regime_code" in io.load(store).fields
    man = store / "manifest.json"
    raw = man.read_bytes()
    assert b'"regime_code"' in raw
    man.write_bytes(raw.replace(b'"regime_code"', b'"regime_codg"', 1))  # one bit
    with pytest.raises(FesubError, match="manifest of store .* is damaged"):
        io.load(store)
