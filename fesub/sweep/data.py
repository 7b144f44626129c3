"""A sweep store gathered into arrays: :class:`SweepData` and the store's summary."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from ..atomic import json_default
from ..io import Result, summary_record

#: unit recorded for a parameter or result whose study does not declare one
UNKNOWN_UNIT = "unknown"
_STATUS_MEANINGS = "failed missing ok"


def store_summary(manifest: dict, data) -> dict:
    """Summary (the one schema of :mod:`fesub.io`) of a store: the sweep, and its state when
    ``data`` (a :class:`SweepData`) is given."""
    units = manifest.get("units") or {}
    params = {"study": (manifest.get("study"), None), "n_cases": (manifest.get("n_cases"), None)}
    details = {"store_format": manifest.get("format")}
    if manifest.get("grid") is not None:
        details["axes"] = {}
        for k, v in manifest["grid"].items():
            params[k] = ([min(v), max(v)], units.get(k))
            details["axes"][k] = {"num": len(v), "first": v[0], "last": v[-1], "unit": units.get(k)}
    for k, v in (manifest.get("fixed") or {}).items():
        params[k] = (v, units.get(k))
    results, notes = {}, []
    if data is not None:
        st = data.status
        results = {"n_ok": (int((st == 1).sum()), None), "n_failed": (int((st == -1).sum()), None),
                   "n_missing": (int((st == 0).sum()), None)}
        p = data.primary
        z = data.fields.get(p) if p else None
        if z is not None and np.isfinite(z).any():
            results[f"{p}_min"] = (float(np.nanmin(z)), units.get(p))
            results[f"{p}_max"] = (float(np.nanmax(z)), units.get(p))
            if z.shape == data.shape:
                i = int(np.nanargmax(z.ravel()))
                details["max_at"] = {"field": p, "index": i, "params": data.cases[i]}
        if data.failures:
            details["failures"] = [{k: f.get(k) for k in ("index", "params", "error")}
                                   for f in data.failures[:20]]
        if data.problems:
            details["problems"] = data.problems[:20]
            notes.append(f"{len(data.problems)} case file(s) of the store are not used (damaged or "
                         f"not of this sweep); their cases are computed again on the next run")
        if data.warnings:
            first = data.warnings[0]
            details["case_warnings"] = data.warnings[:20]
            notes.append(f"{len(data.warnings)} case(s) emitted warnings (recorded in their case "
                         f"files), e.g. case {first['index']}: {first['warnings'][0]}")
        if results["n_missing"][0]:
            notes.append(f"{results['n_missing'][0]} case(s) missing: run the same sweep again "
                         f"to complete the store")
    return summary_record("sweep", params, results, details=details, notes=notes)


def _dims_of(data, name: str, ndim: int) -> tuple:
    """Names of the extra dimensions of an array result (the study's, else ``NAME_dimK``)."""
    want = tuple(data.dims.get(name, ()))
    if len(want) != ndim:
        want = tuple(f"{name}_dim{k}" for k in range(ndim))
    return want


@dataclass(eq=False)
class SweepData(Result):
    """A result store gathered into arrays.

    Values are in the units the study declares (``units``; ``"1"`` for dimensionless ones, as in
    the non-dimensional studies). :meth:`to_xarray` labels the grid axes as dimensions (``case``
    for a list of cases, with the numbers each case lists as coordinates along it), with their
    values and units as coordinates.

    Parameters
    ----------
    study : str
        Name of the study.
    axes : dict
        Grid name -> 1-D values, in the unit of that parameter (empty for case lists).
    shape : tuple of int
        Grid shape, or (n,) for a list of cases.
    fields : dict
        Result name -> float array of shape ``shape`` (+ the result's own shape for array
        results), in the unit of that result; NaN where the case is missing or failed.
    other : dict
        Results that are not numeric arrays of one shape (object arrays, None where missing).
    status : ndarray of int8
        Per case: 1 ok, 0 missing, -1 failed.
    failures : list of dict
        Index, params, error, traceback of each failed case.
    cases : list of dict
        The full parameter dict of each case (flat, C order).
    manifest : dict
        The store's manifest.
    units : dict, optional
        Name -> SI unit of the parameters and results the study declares.
    dims : dict, optional
        Names of the extra dimensions of array results.
    primary : str or None, optional
        The study's main result.
    problems : list of dict, optional
        Case files of the store that were not used (file, index, problem), their cases counted
        missing.
    categories : dict, optional
        Names of the values of coded results.
    warnings : list, optional
        The warnings cases emitted (index, messages).
    """

    study: str
    axes: dict
    shape: tuple
    fields: dict
    other: dict
    status: np.ndarray
    failures: list
    cases: list
    manifest: dict
    units: dict = field(default_factory=dict)
    dims: dict = field(default_factory=dict)
    primary: str | None = None
    problems: list = field(default_factory=list)
    categories: dict = field(default_factory=dict)
    warnings: list = field(default_factory=list)

    kind = "sweep"

    @property
    def n_missing(self) -> int:
        return int((self.status == 0).sum())

    def unit(self, name: str) -> str:
        """SI unit of a parameter or result (``"unknown"`` where the study declares none)."""
        return self.units.get(name) or UNKNOWN_UNIT

    def summary(self) -> dict:
        return store_summary(self.manifest, self)

    def to_xarray(self):
        """Labelled :class:`xarray.Dataset`: grid axes (or ``case``) as dimensions and
        coordinates, every numeric result a variable (NaN where missing or failed), ``status``,
        other results as JSON text per case; failures, cases and manifest as attributes."""
        import xarray as xr

        if self.axes:
            dims = tuple(self.axes)
            coords = {k: xr.Variable(k, np.asarray(v, float), {"units": self.unit(k)})
                      for k, v in self.axes.items()}
        else:
            dims = ("case",)
            coords = {"case": xr.Variable("case", np.arange(self.shape[0]),
                                          {"units": "1", "long_name": "case number"})}
            # the numbers each listed case gives (force, omega, ...) label the cases too
            listed = dict.fromkeys(k for c in (self.manifest.get("cases") or []) for k in c)
            for k in listed:
                vals = [c.get(k) for c in self.cases]
                if k not in self.fields and k not in self.other and k != "status" and all(
                        isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
                    coords[k] = xr.Variable("case", np.asarray(vals, float), {"units": self.unit(k)})
        ds = xr.Dataset(coords=coords)
        names, taken = [], dict.fromkeys(dims)

        def var_name(name):
            v = name if name not in taken and name != "status" else f"result_{name}"
            taken[v] = None
            return v

        for name, arr in self.fields.items():
            extra = _dims_of(self, name, arr.ndim - len(self.shape))
            attrs = {"units": self.unit(name)}
            if name in self.categories:
                attrs["flag_values"] = np.arange(len(self.categories[name]), dtype=float)
                attrs["flag_meanings"] = " ".join(c.replace(" ", "_") for c in self.categories[name])
            v = var_name(name)
            try:
                ds[v] = xr.Variable(dims + extra, np.asarray(arr, float), attrs)
            except ValueError:  # a declared dimension name with another length elsewhere
                extra = tuple(f"{name}_dim{k}" for k in range(len(extra)))
                ds[v] = xr.Variable(dims + extra, np.asarray(arr, float), attrs)
            names.append([name, v])
        other = []
        for name, arr in self.other.items():
            text = np.array([json.dumps(x, default=json_default) for x in arr.ravel()],
                            dtype=object).reshape(arr.shape)
            v = var_name(name)
            ds[v] = xr.Variable(dims, text, {"units": self.unit(name),
                                             "comment": "JSON text of each case's value"})
            other.append([name, v])
        ds["status"] = xr.Variable(dims, np.asarray(self.status, np.int8), {
            "units": "1", "long_name": "case status",
            "flag_values": np.array([-1, 0, 1], np.int8), "flag_meanings": _STATUS_MEANINGS})
        ds.attrs.update(study=self.study, shape=list(self.shape), axes=list(self.axes),
                        fields=names, other_fields=other, failures=self.failures,
                        cases=self.cases, manifest=self.manifest, units=self.units,
                        dims={k: list(v) for k, v in self.dims.items()}, primary=self.primary,
                        problems=self.problems,
                        categories={k: list(v) for k, v in self.categories.items()},
                        case_warnings=self.warnings)
        return ds

    @classmethod
    def from_xarray(cls, ds):
        a = ds.attrs
        shape = tuple(int(x) for x in a["shape"])
        axes = {k: np.asarray(ds[k].values, float) for k in a["axes"]}
        fields = {name: np.asarray(ds[v].values, float) for name, v in a["fields"]}
        other = {}
        for name, v in a["other_fields"]:
            flat = ds[v].values.ravel()
            obj = np.empty(flat.size, dtype=object)
            for j, text in enumerate(flat):
                obj[j] = json.loads(str(text))
            other[name] = obj.reshape(shape)
        return cls(a["study"], axes, shape, fields, other, np.asarray(ds["status"].values, np.int8),
                   list(a["failures"]), list(a["cases"]), dict(a["manifest"]),
                   dict(a.get("units") or {}), {k: tuple(v) for k, v in (a.get("dims") or {}).items()},
                   a.get("primary"), list(a.get("problems") or []),
                   {k: tuple(v) for k, v in (a.get("categories") or {}).items()},
                   list(a.get("case_warnings") or []))
