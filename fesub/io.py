"""One result protocol: self-describing files, one summary schema, one way to reopen anything.

Every result object of fesub (a transient, eigenvalue loci, a TD-FRF map, a branch, a basin, a
regime map, a trajectory, ...) derives from :class:`Result`:

* ``to_xarray()`` gives a labelled :class:`xarray.Dataset` (named dimensions, coordinates, the
  unit of every variable in its ``units`` attribute);
* ``save(path)`` writes that dataset to ``path.nc`` and ``Class.load(path)`` reads it back
  exactly (float64 values bit for bit);
* :func:`load` (also ``fesub.load``) reopens any fesub file or study folder from what it records
  about itself.

File format: netCDF-4 (HDF5 underneath), written through xarray with the h5netcdf engine. It is
the habit of the field: MATLAB reads it with ``ncread``/``ncinfo``, ParaView and VisIt open it with
their NetCDF readers, and h5py/HDF5 tools see a plain HDF5 file. Complex arrays, which netCDF has
no type for, are stored as two real variables ``NAME__real`` and ``NAME__imag`` (so the file stays
valid netCDF) and recombined on load. Metadata that is not a number or a string (nested dicts,
lists, booleans, None) is stored as JSON text in an attribute whose name ends in ``__json``.

Files that cannot lie: a file written by :func:`save_dataset` ends, after its HDF5 bytes, with a
record of checksums (BLAKE2b-128 of the whole file and of the stored bytes of every variable,
its length and own digest in a 32-byte footer). HDF5 and netCDF readers ignore bytes past the
end the file declares, so other tools read it as before. :func:`fesub.checksums.verify` (called by
:func:`open_dataset` before any HDF5 code sees the file, since a damaged file can make a reader
fail in any way or hang) refuses a damaged file with a :class:`~fesub.errors.FesubError` naming
the variable whose data changed, or saying that the structure or attributes did; a file without
the record (written by another tool, or rewritten by one) is refused as untrusted.

Files are written whole or not at all, through :mod:`fesub.atomic` (a temporary file renamed onto
the path, Ctrl-C held until it is in place), which also writes and reads JSON; its names are
exported here too (:func:`atomic_write`, :func:`atomic_write_text`, :func:`write_json`,
:func:`read_json`, :func:`json_default`).

Summaries (a result's ``summary()`` and a study's ``summary.json``) follow one schema,
:data:`SUMMARY_SCHEMA`, built by :func:`summary_record`: fesub version, study (or result kind),
creation time (UTC, ISO 8601), the parameters and the headline results, each ``{"value", "unit"}``
with SI units.
"""

from __future__ import annotations

import datetime as _dt
import importlib
import json
from pathlib import Path

import numpy as np

from . import checksums
from .atomic import atomic_write, atomic_write_text, json_default, read_json, write_json
from .checksums import verify
from .errors import FesubError
from .version import __version__

__all__ = ["Result", "SUMMARY_SCHEMA", "FORMAT", "json_default", "write_json", "read_json",
           "summary_record", "quantity", "save_dataset", "open_dataset", "load", "info",
           "result_path", "atomic_write_text", "atomic_write", "StudyOutput"]

SUMMARY_SCHEMA = "fesub-summary/1"
FORMAT = "netCDF-4/HDF5 (.nc), written by xarray with the h5netcdf engine"
SUFFIX = ".nc"
#: a folder holding this file is a result of its own (a sweep store, say): ``fesub_class`` in it
#: names the function that opens the folder
FOLDER_MARKER = "fesub-result.json"
_CLASS_ATTR = "fesub_class"
_JSON_TAIL = "__json"


# ------------------------------------------------------------------------------------- summaries
def quantity(value, unit):
    """One entry of a summary: ``{"value": value, "unit": unit}`` (unit ``None`` for what has no
    unit: a status, a name, a count; ``"1"`` for a dimensionless ratio).

    Parameters
    ----------
    value : float or int or str or array_like
        The quantity, in the unit ``unit`` (NumPy arrays and scalars become lists and numbers).
    unit : str or None
        Its SI unit as a string (``"s"``, ``"N"``, ``"m/s"``, ``"Hz"``; ``"1"`` for a dimensionless
        ratio), or None for what has no unit (a status, a name, a count).

    Returns
    -------
    dict
        ``{"value": value, "unit": unit}``.
    """
    if isinstance(value, np.ndarray):
        value = value.tolist()
    elif isinstance(value, np.generic):
        value = value.item()
    return {"value": value, "unit": unit}


def _quantities(items: dict, what: str) -> dict:
    out = {}
    for k, v in (items or {}).items():
        if isinstance(v, dict) and set(v) == {"value", "unit"}:
            out[k] = quantity(v["value"], v["unit"])
        elif isinstance(v, tuple) and len(v) == 2 and (v[1] is None or isinstance(v[1], str)):
            out[k] = quantity(*v)
        else:
            raise TypeError(f"summary {what} {k!r} must be (value, unit), got {v!r}")
    return out


def summary_record(study: str, parameters: dict, results: dict, *, details=None,
                   notes=None) -> dict:
    """A summary in the one schema of fesub.

    Parameters
    ----------
    study : str
        Study name (``"beam-on-beam"``) or result kind (``"transient"``).
    parameters, results : dict
        ``{name: (value, unit)}``; units are SI strings (``"s"``, ``"N"``, ``"m/s"``, ``"Hz"``,
        ``"1"`` for a ratio, ``None`` where there is no unit).
    details : dict, optional
        Study-specific nested records (their keys carry their units, e.g. ``"min_lambda_N"``).
    notes : list of str, optional
        Caveats a reader must see (departures from a paper, incomplete spectra, ...).
    """

    rec = {
        "schema": SUMMARY_SCHEMA,
        "fesub_version": __version__,
        "study": study,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "parameters": _quantities(parameters, "parameter"),
        "results": _quantities(results, "result"),
    }
    if details:
        rec["details"] = details
    if notes:
        rec["notes"] = list(notes)
    return rec


# ---------------------------------------------------------------------------------------- files
def result_path(path) -> Path:
    """``path`` with the ``.nc`` suffix: appended, not substituted, so that ``tdfrf_mu0.1`` becomes
    ``tdfrf_mu0.1.nc`` (``.npz``/``.json`` of older names are replaced).

    Parameters
    ----------
    path : str or os.PathLike
        File name, with or without the ``.nc`` suffix.

    Returns
    -------
    pathlib.Path
        The name ending in ``.nc``.
    """
    path = Path(path)
    if path.suffix == SUFFIX:
        return path
    if path.suffix in (".npz", ".json"):
        return path.with_suffix(SUFFIX)
    return path.with_name(path.name + SUFFIX)


def _encode_attrs(attrs: dict) -> dict:
    out = {}
    for k, v in attrs.items():
        if isinstance(v, (bool, np.bool_)) or v is None or isinstance(v, (dict, list, tuple)):
            out[k + _JSON_TAIL] = json.dumps(v, default=json_default)
        elif isinstance(v, (str, int, float, np.integer, np.floating)):
            out[k] = v
        elif isinstance(v, np.ndarray) and v.ndim == 1 and v.dtype.kind in "if":
            out[k] = v
        else:
            out[k + _JSON_TAIL] = json.dumps(v, default=json_default)
    return out


def _decode_attrs(attrs: dict, where: str = "") -> dict:
    out = {}
    for k, v in attrs.items():
        if k.endswith(_JSON_TAIL):
            try:
                out[k[: -len(_JSON_TAIL)]] = json.loads(v)
            except (TypeError, ValueError) as exc:
                raise FesubError(f"{where}attribute {k!r} is not valid JSON ({exc})") from None
        else:
            out[k] = v.item() if isinstance(v, np.generic) else v
    return out


def save_dataset(ds, path, cls=None) -> Path:
    """Write an :class:`xarray.Dataset` to ``path`` (``.nc``) atomically.

    ``cls`` (the result class) is recorded so that :func:`load` can rebuild the object.

    Parameters
    ----------
    ds : xarray.Dataset
        The data, with the SI unit of every variable in its ``units`` attribute (written as is;
        complex variables are split into ``NAME__real`` and ``NAME__imag``).
    path : str or os.PathLike
        File to write (``.nc`` appended when missing, see :func:`result_path`); its folder must
        exist.
    cls : type, optional
        The :class:`Result` subclass the file holds, recorded in the ``fesub_class`` attribute.

    Returns
    -------
    pathlib.Path
        The path of the file written.
    """
    import xarray as xr

    path = result_path(path)
    if not path.parent.is_dir():
        raise FesubError(f"cannot save {path}: {path.parent} is not a directory")
    ds = ds.copy(deep=False)
    for name in list(ds.data_vars) + list(ds.coords):
        var = ds[name]
        if np.iscomplexobj(var.values):
            attrs = dict(var.attrs, fesub_complex=name)
            re = xr.Variable(var.dims, np.ascontiguousarray(var.values.real), attrs)
            im = xr.Variable(var.dims, np.ascontiguousarray(var.values.imag), attrs)
            is_coord = name in ds.coords
            ds = ds.drop_vars(name)
            if is_coord:
                raise FesubError(f"complex coordinate {name!r} cannot be saved")
            ds[name + "__real"], ds[name + "__imag"] = re, im
    attrs = dict(ds.attrs)
    if cls is not None:
        attrs[_CLASS_ATTR] = _spec(cls)

    attrs.setdefault("fesub_version", __version__)
    attrs.setdefault("created", _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"))
    ds.attrs = _encode_attrs(attrs)
    for name in list(ds.variables):
        ds[name].attrs = _encode_attrs(ds[name].attrs)
    # floating-point variables are written uncompressed: the low mantissa bytes of simulated
    # signals are noise, so lossless compression gains little for its cost. Measured on the
    # beam-on-beam study's results (byte shuffle + deflate level 1, the cheapest setting that
    # gains anything): a 3.13 s transient (156 500 samples x 17 signals, 21.3 MB raw) 15.6 MB in
    # 0.49-0.86 s against 21.3 MB in 0.13 s; a TD-FRF (587 x 4001 complex, 37.6 MB raw) 30.5 MB in
    # 1.0 s against 37.6 MB in 0.2 s; reading the compressed files took twice as long. Integer
    # and boolean variables (states, labels, masks) repeat and compress several-fold, cheaply.
    encoding = {name: {"zlib": True, "complevel": 1, "shuffle": True} for name, var in ds.variables.items()
                if var.dtype.kind in "iub" and var.size >= 1024}

    def write(tmp):
        ds.to_netcdf(tmp, engine="h5netcdf", encoding=encoding)
        checksums.seal(tmp)

    return atomic_write(path, write)


def open_dataset(path, *, verify_checksums: bool = True):
    """Read a file written by :func:`save_dataset` into memory (complex variables recombined,
    JSON attributes decoded); the file is closed on return.

    Parameters
    ----------
    path : str or os.PathLike
        File written by :func:`save_dataset` (the ``.nc`` suffix may be omitted).
    verify_checksums : bool, optional
        Verify the file's record of checksums first (:func:`fesub.checksums.verify`; default). False opens a file
        that carries none (written by fesub before it recorded them, or rewritten by another
        tool) without any guarantee that its data are those written.

    Returns
    -------
    xarray.Dataset
        The data in memory, each variable's unit in its ``units`` attribute as written.
    """
    import xarray as xr

    path = Path(path)
    if not path.exists() and result_path(path).exists():
        path = result_path(path)
    if not path.is_file():
        raise FesubError(f"no fesub result at {path}")
    if verify_checksums:
        verify(path)
    try:
        with xr.open_dataset(path, engine="h5netcdf", decode_times=False,
                             decode_timedelta=False) as f:
            ds = f.load()
    except Exception as exc:  # noqa: BLE001 - whatever the readers raise on a file they refuse
        raise FesubError(f"cannot read {path} as a fesub result ({FORMAT}): {exc}") from None
    for name in list(ds.data_vars):
        if name.endswith("__real") and name[:-6] + "__imag" in ds:
            base = name[:-6]
            var = ds[name]
            attrs = {k: v for k, v in var.attrs.items() if k != "fesub_complex"}
            data = var.values + 1j * ds[base + "__imag"].values
            ds = ds.drop_vars([name, base + "__imag"])
            ds[base] = xr.Variable(var.dims, data, attrs)
    ds.attrs = _decode_attrs(ds.attrs, f"{path}: ")
    for name in list(ds.variables):
        ds[name].attrs = _decode_attrs(ds[name].attrs, f"{path}: variable {name!r}: ")
        ds[name].encoding = {}
    return ds


_REGISTRY: dict = {}

#: modules whose result classes moved, old name -> new name: files written before the move name
#: the old module, and still load
MOVED_MODULES = {"fesub.contact.transient": "fesub.contact.sliding.transient",
                 "fesub.contact.eigen": "fesub.contact.analyses.eigen",
                 "fesub.contact.deformed": "fesub.contact.analyses.deformed",
                 "fesub.contact.frf": "fesub.contact.analyses.frf",
                 "fesub.contact.bursts": "fesub.contact.analyses.bursts",
                 "fesub.contact.nodal": "fesub.contact.engine.results"}


def _spec(cls) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def _resolve(spec: str):
    """The class (or opener) a file names: a :class:`Result` subclass already defined (a user's
    own included), or one imported from fesub's own modules; nothing else is imported."""
    if not isinstance(spec, str):
        raise FesubError(f"the result class must be named as 'module:Class', got {spec!r}")
    if spec in _REGISTRY:
        return _REGISTRY[spec]
    mod, _, qual = spec.partition(":")
    mod = MOVED_MODULES.get(mod, mod)
    if not (mod == "fesub" or mod.startswith("fesub.")) or not qual:
        raise FesubError(f"refusing to load a result class outside fesub: {spec!r}")
    try:
        obj = importlib.import_module(mod)
        for part in qual.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError, ValueError):
        raise FesubError(f"no fesub result class {spec!r} (written by another version of "
                         "fesub, or the name was damaged)") from None
    if not callable(obj):
        raise FesubError(f"{spec!r} is not a fesub result class")
    return obj


class StudyOutput:
    """A study's output folder reopened: its summary and every result file in it, by name.

    Parameters
    ----------
    path : str or os.PathLike
        The output folder.
    summary : dict or None
        Content of its ``summary.json`` (the schema of :func:`summary_record`: every quantity as
        ``{"value", "unit"}`` with its SI unit), or None when the folder has none.
    results : dict
        ``{file stem: result object}`` for every ``.nc`` file of the folder, as :func:`load`
        reopens them.
    """

    def __init__(self, path, summary, results: dict):
        self.path, self.summary, self.results = Path(path), summary, results

    def __getitem__(self, name):
        return self.results[name]

    def __iter__(self):
        return iter(self.results)

    def __repr__(self):
        return f"StudyOutput({str(self.path)!r}, results={sorted(self.results)})"


def load(path, *, verify: bool = True):
    """Reopen any fesub result from what the file (or folder) records about itself.

    * a ``.nc`` file written by a :class:`Result` -> that result object;
    * a folder with ``fesub-result.json`` (a sweep store) -> what its opener returns;
    * a study's output folder (``summary.json`` and ``.nc`` files) -> a :class:`StudyOutput`.

    Parameters
    ----------
    path : str or os.PathLike
        A result file (``.nc``) or a folder (sweep store or study output).
    verify : bool, optional
        Verify each result file's checksums before reading it (default). False opens files that
        carry none (written by fesub before it recorded them), without that guarantee.

    Returns
    -------
    Result or StudyOutput or object
        The result object the file names, what a folder's opener returns, or a
        :class:`StudyOutput`; values in the units the result documents.
    """
    path = Path(path)
    if path.is_dir():
        marker = path / FOLDER_MARKER
        if marker.is_file():
            rec = read_json(marker)
            if not isinstance(rec, dict) or _CLASS_ATTR not in rec:
                raise FesubError(f"{marker} does not say which fesub result the folder holds "
                                 f"({_CLASS_ATTR} missing)")
            return _opened(path, lambda: _resolve(rec[_CLASS_ATTR])(path))
        summary = read_json(path / "summary.json") if (path / "summary.json").is_file() else None
        files = sorted(path.glob("*" + SUFFIX))
        if summary is None and not files:
            raise FesubError(f"{path} holds no fesub results (no summary.json, no {SUFFIX} files)")
        return StudyOutput(path, summary, {f.stem: load(f, verify=verify) for f in files})
    ds = open_dataset(path, verify_checksums=verify)
    spec = ds.attrs.get(_CLASS_ATTR)
    if not spec:
        raise FesubError(f"{path} does not say which fesub result it holds ({_CLASS_ATTR} missing)")
    cls = _resolve(spec)
    return _opened(path, lambda: cls.from_xarray(ds))


def _opened(path, build):
    """``build()``, a result rebuilt from a file or folder whose checksums held: a variable or an
    attribute its class needs and does not find, or finds malformed (a file saved from a dataset
    edited by hand, or by another version), is a FesubError naming the file and what is wrong."""
    try:
        return build()
    except FesubError:
        raise
    except KeyError as exc:
        what = exc.args[0] if exc.args else exc
        raise FesubError(f"{path}: a variable or attribute is missing "
                         f"({what if isinstance(what, str) and ' ' in what else repr(what)})") from None
    except (AttributeError, TypeError, ValueError, IndexError, LookupError) as exc:
        raise FesubError(f"{path}: a variable or attribute is malformed "
                         f"({type(exc).__name__}: {exc})") from None


def info(path) -> dict:
    """The summary a result file or study folder records (for ``fesub info``).

    Parameters
    ----------
    path : str or os.PathLike
        A result file (``.nc``), a JSON summary, or a folder holding ``summary.json`` or
        ``fesub-result.json``.

    Returns
    -------
    dict
        The recorded summary (quantities as ``{"value", "unit"}``, SI units), or, for a file
        without one, its class and the dimensions and ``units`` of each variable.
    """
    path = Path(path)
    if path.is_dir():
        for name in ("summary.json", FOLDER_MARKER):
            if (path / name).is_file():
                return read_json(path / name)
        raise FesubError(f"{path} holds no summary.json")
    if path.suffix == ".json":
        return read_json(path)
    ds = open_dataset(path)
    s = ds.attrs.get("summary")
    if isinstance(s, dict):
        return s
    return {"fesub_class": ds.attrs.get(_CLASS_ATTR), "variables": {
        k: {"dims": list(v.dims), "units": v.attrs.get("units")} for k, v in ds.data_vars.items()}}


# ----------------------------------------------------------------------------------- the protocol
class Result:
    """Base of every fesub result: ``to_xarray``/``from_xarray``, ``save``/``load``, ``summary``.

    Subclasses implement :meth:`to_xarray` (every variable with a ``units`` attribute) and
    :meth:`from_xarray` (its exact inverse) and :meth:`summary` (a :func:`summary_record`).
    """

    #: short name of the result kind, used in summaries
    kind = "result"

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        _REGISTRY[_spec(cls)] = cls

    def to_xarray(self):  # pragma: no cover - abstract
        raise NotImplementedError

    @classmethod
    def from_xarray(cls, ds):  # pragma: no cover - abstract
        raise NotImplementedError

    def summary(self) -> dict:
        return summary_record(self.kind, {}, {})

    def save(self, path) -> Path:
        """Write the result to ``path`` (``.nc`` appended when missing); returns the file's path."""
        ds = self.to_xarray()
        try:
            s = self.summary()
        except Exception:  # noqa: BLE001 - a summary must never stop a save
            s = None
        if s is not None:
            ds.attrs["summary"] = s
        return save_dataset(ds, path, type(self))

    @classmethod
    def load(cls, path):
        """Read a result written by :meth:`save` (the file must hold this class or a subclass)."""
        obj = load(result_path(path) if not Path(path).exists() else path)
        if not isinstance(obj, cls):
            raise FesubError(f"{path} holds a {type(obj).__name__}, not a {cls.__name__}")
        return obj

