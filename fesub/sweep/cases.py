"""What a sweep is made of: studies, their parameters, grids and the list of cases.

A *study* (:class:`Study`) is a pure, picklable, module-level function ``f(params: dict) -> dict``
together with its parameters (:class:`Param`: name, allowed range, unit). Studies are registered
in :data:`STUDIES` (:func:`register_study`) and looked up by name (:func:`get_study`); modules named
in the environment variable ``FESUB_SWEEP_PLUGINS`` (comma-separated) are imported first, so that
they can register studies of their own (also in worker processes, since study functions are
pickled by reference to their module).

A sweep runs a study over a grid (the cartesian product of named 1-D parameter arrays,
:func:`grid_from_spec`) or over an explicit list of cases. The number of cases is counted before
any case is built (:func:`grid_size`) and limited by ``max_cases`` (:data:`MAX_CASES` by
default). Each case is a full parameter dict, validated before any work, and named by
:func:`case_key`, a hash of its canonical JSON.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..errors import ParameterError, check_range

#: default limit on the number of cases of one sweep (counted before any case is built)
MAX_CASES = 1_000_000


# --- studies and their parameters ----------------------------------------------------------------

@dataclass(frozen=True)
class Param:
    """One named study parameter and its allowed range.

    ``kind`` is ``"float"`` (checked against ``[lo, hi]``, open ends on request), ``"int"`` (same,
    and integral) or ``"any"`` (not checked here; the study's ``check`` hook may look at it).
    ``required=False`` parameters take ``default`` when absent. ``unit`` is the SI unit of the
    value (``"1"`` for a dimensionless one), used for the axes of gathered results and figures.

    Parameters
    ----------
    name : str
        Name of the parameter (its key in a case's parameter dict).
    lo, hi : float, optional
        Bounds of the allowed range, in the unit ``unit``; None (default) leaves that end
        unbounded.
    lo_open, hi_open : bool, optional
        True excludes the bound itself; default False (closed ends).
    kind : str, optional
        ``"float"`` (default), ``"int"`` or ``"any"``.
    required : bool, optional
        False: the parameter may be absent and then takes ``default``. Default True.
    default : object, optional
        Value of an absent optional parameter (in the unit ``unit``).
    doc : str, optional
        One-line description, shown by the CLI.
    unit : str, optional
        SI unit of the value (``"m"``, ``"N"``, ``"rad/s"``; ``"1"`` for a dimensionless one);
        None when it has none (a name, a list).
    """

    name: str
    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False
    hi_open: bool = False
    kind: str = "float"
    required: bool = True
    default: object = None
    doc: str = ""
    unit: str | None = None

    def range_text(self) -> str:
        if self.kind == "any":
            return "any value"
        left = "(" if self.lo_open else "["
        right = ")" if self.hi_open else "]"
        lo = "-inf" if self.lo is None else repr(self.lo)
        hi = "inf" if self.hi is None else repr(self.hi)
        return f"{self.kind} in {left}{lo}, {hi}{right}"

    def check(self, value, where: str = ""):
        if self.kind == "any":
            return value
        label = f"{self.name}{where}"
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise ParameterError(f"{label} must be a number ({self.range_text()}), got {value!r}")
        v = check_range(label, value, self.lo, self.hi, lo_open=self.lo_open, hi_open=self.hi_open)
        if self.kind == "int":
            if v != int(v):
                raise ParameterError(f"{label} must be an integer ({self.range_text()}), got {value!r}")
            return int(v)
        return v


@dataclass(frozen=True)
class Study:
    """A sweepable study: a picklable module-level ``func(params) -> dict`` and its parameters.

    ``extra`` says whether parameters other than ``params`` are accepted (passed through to
    ``func``; ``check`` should validate them). ``check(params)`` runs once, before any work, on the
    fixed parameters merged with the first case. ``primary`` names the result field mapped by the
    CLI. ``units`` gives the SI unit of each result (and of extra parameters not in ``params``),
    ``dims`` the names of the dimensions of array results (``{"harmonic_amplitudes":
    ("harmonic",)}``) and ``categories`` the names of the values of coded results
    (``{"regime_code": ("continuous", "stick-slip", "stuck")}``); all three are optional and only
    label what is gathered.

    Parameters
    ----------
    name : str
        Name of the study, its key in :data:`STUDIES`.
    func : callable
        Picklable module-level ``func(params: dict) -> dict``: one case's parameters (each in
        the unit of its :class:`Param`) to its results (in the units of ``units``).
    params : tuple of Param
        The named parameters, their ranges and SI units.
    doc : str, optional
        One-line description.
    extra : bool, optional
        Accept parameters other than ``params`` (passed through to ``func``). Default False.
    check : callable, optional
        ``check(params)``: validation hook run once before any work (raises
        :class:`~fesub.errors.ParameterError`).
    primary : str, optional
        Name of the main result (the one the CLI maps).
    units : dict, optional
        ``{name: SI unit}`` of each result and of extra parameters (``"1"``: dimensionless).
    dims : dict, optional
        ``{result name: tuple of dimension names}`` of array results.
    categories : dict, optional
        ``{result name: tuple of value names}`` of coded results.
    """

    name: str
    func: Callable
    params: tuple
    doc: str = ""
    extra: bool = False
    check: Callable | None = None
    primary: str | None = None
    units: dict = field(default_factory=dict, hash=False, compare=False)
    dims: dict = field(default_factory=dict, hash=False, compare=False)
    categories: dict = field(default_factory=dict, hash=False, compare=False)

    def param(self, name):
        for p in self.params:
            if p.name == name:
                return p
        return None

    def unit_table(self) -> dict:
        """Unit of every parameter and result the study knows: ``{name: unit}``."""
        out = {k: v for k, v in self.units.items() if v is not None}
        out.update({p.name: p.unit for p in self.params if p.unit is not None})
        return out

    def describe(self) -> str:
        lines = [f"{self.name}: {self.doc}"]
        for p in self.params:
            opt = "" if p.required else f" (optional, default {p.default!r})"
            unit = f" [{p.unit}]" if p.unit else ""
            lines.append(f"  {p.name}{unit}: {p.range_text()}{opt} {p.doc}".rstrip())
        return "\n".join(lines)

    def validate_names(self, names, where="") -> None:
        known = {p.name for p in self.params}
        unknown = sorted(set(names) - known)
        if unknown and not self.extra:
            raise ParameterError(f"unknown parameter(s) {unknown}{where} for study {self.name!r}; "
                                 f"allowed: {sorted(known)}")

    def complete(self, params: dict, where: str = "") -> dict:
        """Check one case's full parameter dict and fill in defaults (no computation)."""
        out = dict(params)
        for p in self.params:
            if p.name in out:
                out[p.name] = p.check(out[p.name], where)
            elif p.required:
                raise ParameterError(f"study {self.name!r} needs parameter {p.name!r} "
                                     f"({p.range_text()}){where}")
            else:
                out[p.name] = p.default
        return out


#: study name -> :class:`Study`
STUDIES: dict[str, Study] = {}
_PLUGINS_LOADED: set = set()


def register_study(study: Study, *, replace: bool = False) -> Study:
    """Add a study to :data:`STUDIES` (``replace=True`` to override an existing name).

    Parameters
    ----------
    study : Study
        The study, its parameters and results labelled with their SI units (``"1"`` for
        dimensionless ones).
    replace : bool, optional
        Replace a registered study of the same name instead of raising; default False.

    Returns
    -------
    Study
        ``study`` itself.
    """
    if not isinstance(study, Study):
        raise ParameterError(f"study must be a fesub.sweep.Study, got {type(study).__name__}")
    if study.name in STUDIES and not replace and STUDIES[study.name] is not study:
        raise ParameterError(f"a study named {study.name!r} is already registered")
    STUDIES[study.name] = study
    return study


def _load_plugins() -> None:
    import importlib

    for mod in filter(None, (m.strip() for m in os.environ.get("FESUB_SWEEP_PLUGINS", "").split(","))):
        if mod in _PLUGINS_LOADED:
            continue
        try:
            importlib.import_module(mod)
        except ImportError as exc:
            raise ParameterError(f"FESUB_SWEEP_PLUGINS names module {mod!r}, which cannot be "
                                 f"imported: {exc}") from None
        _PLUGINS_LOADED.add(mod)


def get_study(name) -> Study:
    """The registered :class:`Study` called ``name`` (ParameterError listing the known ones).

    Parameters
    ----------
    name : str or Study
        Name of a registered study (modules of ``FESUB_SWEEP_PLUGINS`` are imported first); a
        :class:`Study` is returned as it is.

    Returns
    -------
    Study
        The study, with its parameters' and results' SI units.
    """
    if isinstance(name, Study):
        return name
    _load_plugins()
    if name not in STUDIES:
        raise ParameterError(f"unknown study {name!r}; known studies: {sorted(STUDIES)}")
    return STUDIES[name]


# --- beam on beam --------------------------------------------------------------------------------


# --- grids and cases ------------------------------------------------------------------------------


def jsonable(v):
    """Plain-Python (JSON) version of a parameter or result value."""
    if isinstance(v, dict):
        return {str(k): jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    if isinstance(v, np.ndarray):
        return jsonable(v.tolist())
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return float(v)
    if isinstance(v, complex):
        raise ParameterError(f"complex values cannot be stored; split into real/imag, got {v!r}")
    if v is None or isinstance(v, str):
        return v
    raise ParameterError(f"cannot store a value of type {type(v).__name__}: {v!r}")


def canonical_json(obj) -> str:
    return json.dumps(jsonable(obj), sort_keys=True, separators=(",", ":"))


def case_key(study: str, params: dict) -> str:
    """Stable file key of a case: SHA-256 (first 20 hex digits) of the study and its parameters.

    Parameters
    ----------
    study : str
        Name of the study.
    params : dict
        The case's full parameter dict (values in the units of the study's parameters), hashed
        as canonical JSON.

    Returns
    -------
    str
        20 hexadecimal digits.
    """
    return hashlib.sha256(canonical_json({"study": study, "params": params}).encode()).hexdigest()[:20]


def make_grid(**axes) -> dict:
    """A grid (dict name -> 1-D float array) from keyword arrays; order of keywords = axis order."""
    return grid_from_spec(axes)


def _axis_size(name, v) -> int:
    """Number of values of one grid axis spec, counted without building it."""
    if isinstance(v, dict):
        extra = set(v) - {"start", "stop", "num", "log"}
        if extra or not {"start", "stop", "num"} <= set(v):
            raise ParameterError(f"grid.{name} must be {{start, stop, num[, log]}}, got keys {sorted(v)}")
        num = v["num"]
        if isinstance(num, bool) or not isinstance(num, (int, np.integer)) or num < 1:
            raise ParameterError(f"grid.{name}.num must be an integer >= 1, got {num!r}")
        return int(num)
    if isinstance(v, np.ndarray):
        return int(v.size)
    if isinstance(v, (list, tuple)):
        return len(v)
    return 1


def grid_size(spec: dict) -> int:
    """Number of cases of a grid spec (the product of its axis sizes), without building it.

    Parameters
    ----------
    spec : dict
        ``{parameter name: values}``, each an array or list, a scalar, or ``{start, stop, num[,
        log]}`` (values in the unit of that parameter).

    Returns
    -------
    int
        Number of cases (dimensionless count).
    """
    if not isinstance(spec, dict) or not spec:
        raise ParameterError("grid must be a non-empty mapping of parameter name -> values")
    return math.prod(_axis_size(name, v) for name, v in spec.items())


def _check_size(n: int, max_cases) -> None:
    if max_cases is None:
        return
    if isinstance(max_cases, bool) or not isinstance(max_cases, (int, np.integer)) or max_cases < 1:
        raise ParameterError(f"max_cases must be an integer >= 1, got {max_cases!r}")
    if n > max_cases:
        raise ParameterError(f"the sweep has {n:,} cases, more than max_cases = {max_cases:,}; "
                             f"raise the limit (--max-cases, or max_cases=) if you mean it")


def grid_from_spec(spec: dict, *, max_cases: int | None = MAX_CASES) -> dict:
    """Normalise a grid spec: each value is an array/list, a scalar, or ``{start, stop, num}``.

    ``{start, stop, num}`` is ``numpy.linspace(start, stop, num)``; ``log = true`` uses
    ``numpy.geomspace`` instead. The number of cases (the product of the axis sizes) is counted
    before any axis is built and must not exceed ``max_cases`` (None: no limit).

    Parameters
    ----------
    spec : dict
        ``{parameter name: values}``: an array or list, a scalar, or ``{start, stop, num[,
        log]}``; values in the unit of that parameter (the study's :class:`Param` ``unit``).
    max_cases : int or None, optional
        Largest number of cases allowed (dimensionless count); default :data:`MAX_CASES`.

    Returns
    -------
    dict
        ``{name: 1-D float array}`` in the order of ``spec``, values in the units of the
        parameters.
    """
    _check_size(grid_size(spec), max_cases)
    out = {}
    for name, v in spec.items():
        if isinstance(v, dict):
            num = _axis_size(name, v)
            for key in ("start", "stop"):
                check_range(f"grid.{name}.{key}", v[key])
            if v.get("log", False):
                if v["start"] <= 0 or v["stop"] <= 0:
                    raise ParameterError(f"grid.{name}: log spacing needs start, stop > 0")
                arr = np.geomspace(v["start"], v["stop"], num)
            else:
                arr = np.linspace(v["start"], v["stop"], num)
        else:
            try:
                arr = np.atleast_1d(np.asarray(v, dtype=float))
            except (TypeError, ValueError):
                raise ParameterError(f"grid.{name} must be numbers, got {v!r}") from None
            if arr.ndim != 1 or arr.size == 0:
                raise ParameterError(f"grid.{name} must be a non-empty 1-D list of numbers")
        out[str(name)] = np.asarray(arr, float)
    return out


def sweep_cases(study: Study, grid, cases, fixed, max_cases=MAX_CASES):
    """The sweep's cases, validated: ``(full, keys, shape, body)``.

    ``full`` the full parameter dict of each case (JSON values, defaults filled in), ``keys``
    their :func:`case_key`, ``shape`` the grid shape (or ``(n,)`` for a list of cases) and
    ``body`` what the store's manifest records of the sweep (grid or cases, fixed values).
    """
    fixed = dict(fixed or {})
    if (grid is None) == (cases is None):
        raise ParameterError("give exactly one of grid (dict of arrays) or cases (list of dicts)")
    if grid is not None:
        grid = grid_from_spec(grid, max_cases=max_cases)
        clash = sorted(set(grid) & set(fixed))
        if clash:
            raise ParameterError(f"parameter(s) {clash} are both in the grid and fixed")
        study.validate_names(list(grid) + list(fixed))
        for name, arr in grid.items():  # range checks per axis value: clear, early messages
            p = study.param(name)
            if p is not None:
                for v in arr:
                    p.check(float(v), f" (grid axis {name!r})")
        names = list(grid)
        shape = tuple(a.size for a in grid.values())
        raw = [dict(fixed, **{n: float(x) for n, x in zip(names, combo)})
               for combo in itertools.product(*grid.values())]
        body = {"grid": {k: v.tolist() for k, v in grid.items()}, "cases": None}
    else:
        if not isinstance(cases, (list, tuple)) or not cases or not all(isinstance(c, dict) for c in cases):
            raise ParameterError("cases must be a non-empty list of parameter dicts")
        _check_size(len(cases), max_cases)
        raw = [dict(fixed, **c) for c in cases]
        for i, c in enumerate(raw):
            study.validate_names(c, f" in case {i}")
        shape = (len(raw),)
        body = {"grid": None, "cases": jsonable(list(cases))}
    full = [study.complete(c, "" if grid is not None else f" (case {i})") for i, c in enumerate(raw)]
    if study.check is not None:
        if grid is None:
            probes = range(len(full))
        else:
            # every value of every axis once (the other axes at their first value): a grid axis
            # over a parameter only the hook knows is checked value by value, before any work
            strides = np.cumprod((shape[1:] + (1,))[::-1])[::-1]
            probes = sorted({j * int(st) for n, st in zip(shape, strides) for j in range(n)})
        for i in probes:
            study.check(dict(full[i]))
    full = [jsonable(c) for c in full]
    keys = [case_key(study.name, c) for c in full]
    if len(set(keys)) != len(keys):
        raise ParameterError("the sweep contains duplicate cases (repeated grid values or cases)")
    body["fixed"] = jsonable(fixed)
    return full, keys, shape, body
