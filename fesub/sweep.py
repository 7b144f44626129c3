"""Parameter sweeps from a laptop to a Dask cluster, with resumable result stores.

A *study* is a pure, picklable, module-level function ``f(params: dict) -> dict`` (results are
floats, ints, bools or arrays) together with the names and allowed ranges of its parameters.
:func:`run_sweep` evaluates a study over a grid (the cartesian product of named parameter arrays)
or over an explicit list of cases, on

* a local :class:`~concurrent.futures.ProcessPoolExecutor` (default; ``os.cpu_count()`` workers,
  one BLAS/OpenMP thread per worker to avoid oversubscription),
* a ``dask.distributed`` cluster (a scheduler address, a ``LocalCluster`` or a ``Client``), through
  the client's ``concurrent.futures``-compatible executor (``client.get_executor()``),
* any other :class:`concurrent.futures.Executor`, or ``"serial"`` (in-process loop).

Result store
------------
A directory holding ``manifest.json`` (study, grid or cases, fixed parameters, fesub version),
written before the first case runs and compared on every resume (a different sweep in the same
store is refused with :class:`SweepError`), and ``cases/case-<hash>.json``, one file per case,
named by a SHA-256 hash of the study name and the case's full parameter dict. Each file is written
by the controlling process as soon as its case finishes, into a temporary file in the same
directory that is then renamed with :func:`os.replace` (atomic on POSIX and Windows), so a file in
``cases/`` is always complete. A case that raises is recorded (``status = "failed"``, with the
error and traceback text) and the sweep goes on. Re-running the same sweep on the same store
computes only the cases without a file (``retry_failed=True`` also recomputes failed ones).

SIGINT/SIGTERM stop a sweep cleanly: a case file being written is finished first, cases that
have finished are stored, pending cases are cancelled, the workers of the local pool are
terminated (they ignore SIGINT themselves, so Ctrl-C in a terminal reaches only the controlling
process), and :func:`run_sweep` returns a report with ``interrupted=True``. The case that was
running is not recorded: it is computed on the next run, like every case without a file.

Every argument (study, parameter names and ranges, including every value of every grid axis,
executor, scheduler address) is checked before the store is created or any case runs;
:func:`check_sweep` runs the same checks without running anything.

:func:`load_store` gathers a store into grid-shaped arrays (NaN where a case is missing or
failed) and the list of failures, for plotting.

Studies are registered in :data:`STUDIES` (see :func:`register_study`); modules named in the
environment variable ``FESUB_SWEEP_PLUGINS`` (comma-separated) are imported before a study is
looked up, so that they can register their own studies (also in worker processes, since study
functions are pickled by reference to their module).
"""

from __future__ import annotations

import concurrent.futures as cf
from concurrent.futures.process import BrokenProcessPool
import functools
import hashlib
import inspect
import itertools
import json
import math
import os
import signal
import threading
import time
import traceback
import warnings
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .errors import FesubError, ParameterError, check_positive, check_range

__all__ = [
    "Param", "Study", "STUDIES", "register_study", "get_study", "SweepError", "SchedulerError",
    "SweepReport", "SweepData", "make_grid", "grid_from_spec", "check_sweep", "run_sweep", "load_store",
    "case_key", "beam_on_beam_stability", "coulomb_regime", "freeplay_basin",
    "freeplay_bifurcation", "hbm_forced_response",
]

STORE_FORMAT = "fesub-sweep/1"
_BLAS_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


class SweepError(FesubError, RuntimeError):
    """A result store is inconsistent with the requested sweep, or the executor broke."""


class SchedulerError(FesubError, ConnectionError):
    """The Dask scheduler could not be reached (or dask.distributed is missing)."""


class _Interrupted(BaseException):
    """SIGINT/SIGTERM inside :func:`run_sweep` (a BaseException, so that no ``except Exception``
    in a study or in :func:`_execute` records it as a failed case)."""


# ---------------------------------------------------------------------------------------------
# studies and parameter validation
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Param:
    """One named study parameter and its allowed range.

    ``kind`` is ``"float"`` (checked against ``[lo, hi]``, open ends on request), ``"int"`` (same,
    and integral) or ``"any"`` (not checked here; the study's ``check`` hook may look at it).
    ``required=False`` parameters take ``default`` when absent.
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
    CLI.
    """

    name: str
    func: Callable
    params: tuple
    doc: str = ""
    extra: bool = False
    check: Callable | None = None
    primary: str | None = None

    def param(self, name):
        for p in self.params:
            if p.name == name:
                return p
        return None

    def describe(self) -> str:
        lines = [f"{self.name}: {self.doc}"]
        for p in self.params:
            opt = "" if p.required else f" (optional, default {p.default!r})"
            lines.append(f"  {p.name}: {p.range_text()}{opt} {p.doc}".rstrip())
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
    """Add a study to :data:`STUDIES` (``replace=True`` to override an existing name)."""
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
    """The registered :class:`Study` called ``name`` (ParameterError listing the known ones)."""
    if isinstance(name, Study):
        return name
    _load_plugins()
    if name not in STUDIES:
        raise ParameterError(f"unknown study {name!r}; known studies: {sorted(STUDIES)}")
    return STUDIES[name]


# --- beam on beam --------------------------------------------------------------------------------


@functools.lru_cache(maxsize=2)
def _beam_system():
    """The beam-on-beam contact system, built once per worker process (~0.5-2 s)."""
    from .models import beam_on_beam as bb

    return bb.contact_system(bb.build())


def beam_on_beam_stability(params: dict) -> dict:
    """Largest real part of the complex eigenvalues of the beam-on-beam model at (mu, s).

    Parameters (dict): ``mu`` friction coefficient (>= 0), ``s`` contact position (m, in
    [0.005, 0.098]), optional ``n_basis`` (modes of the frictionless system used as Ritz basis,
    default 120) and ``n_eig`` (number of eigenvalues, default 20).

    Returns ``max_real`` (1/s; > 0 means flutter instability) and ``freq_hz`` (Hz, frequency
    ``Im(lambda)/2 pi`` of the eigenvalue with the largest real part).
    """
    from .contact.eigen import complex_eigenvalues

    lam = complex_eigenvalues(_beam_system(), float(params["s"]), float(params["mu"]),
                              int(params.get("n_eig", 20)), n_basis=int(params.get("n_basis", 120)))
    i = int(np.argmax(lam.real))
    return {"max_real": float(lam.real[i]), "freq_hz": float(lam.imag[i] / (2 * math.pi))}


# --- Coulomb chains ------------------------------------------------------------------------------


def _check_coulomb(params: dict) -> None:
    from .coulomb import ChainModel, Contact

    for key in ("gamma", "kappa"):
        if not isinstance(params.get(key), (list, tuple)):
            raise ParameterError(f"coulomb_regime needs {key!r} as a list of positive ratios, "
                                 f"got {params.get(key)!r}")
    model = ChainModel(params["gamma"], params["kappa"])
    Contact.from_spec(params.get("contact", "wall:0")).validate(model.n)
    load = params.get("load", 0)
    if isinstance(load, bool) or not isinstance(load, int) or not 0 <= load < model.n:
        raise ParameterError(f"load must be an integer mass index in [0, {model.n - 1}], got {load!r}")
    for key in ("max_periods", "min_periods"):
        if key in params:
            Param(key, 1, None, kind="int").check(params[key])
    if "tol" in params:
        Param("tol", 0, 1, lo_open=True).check(params["tol"])
    known = {"gamma", "kappa", "contact", "load", "mu", "max_periods", "min_periods", "tol",
             "amplitudes", "r1", "beta"}
    unknown = sorted(set(params) - known)
    if unknown:
        raise ParameterError(f"unknown parameter(s) {unknown} for study 'coulomb_regime'; "
                             f"allowed: {sorted(known)}")


def coulomb_regime(params: dict) -> dict:
    """Regime of an MDOF chain with a Coulomb contact at (r1, beta), by time integration.

    Wraps :func:`fesub.coulomb.regime_map_point`. Parameters: ``r1`` frequency ratio (> 0),
    ``beta`` friction ratio (>= 0), ``gamma``/``kappa`` (lists of mass/stiffness ratios),
    optional ``contact``, ``load``, ``mu`` (>= 1), ``max_periods``, ``min_periods``, ``tol``,
    ``amplitudes``. Returns ``regime_code`` (0 continuous, 1 stick-slip, 2 stuck),
    ``analytic_regime_code`` (closed form), ``converged`` (0/1), ``periods``,
    ``stops_per_period``, ``Z`` (amplitude ratio, NaN unless converged with ``amplitudes``).
    """
    from .coulomb import regime_map_point

    chain = {k: v for k, v in params.items() if k not in ("r1", "beta")}
    r = regime_map_point(chain, float(params["r1"]), float(params["beta"]))
    return {"regime_code": int(r["regime_code"]), "analytic_regime_code": int(r["analytic_regime_code"]),
            "converged": int(bool(r["converged"])), "periods": int(r["periods"]),
            "stops_per_period": int(r["stops_per_period"]),
            "Z": math.nan if r["Z"] is None else float(r["Z"])}


# --- free-play oscillator -------------------------------------------------------------------------

_FREEPLAY_BASIN_OPTS = {"law", "n_transient", "n_record", "steps_per_period", "period_tol"}
_FREEPLAY_BIF_OPTS = {"law", "n_transient", "n_points", "section_dir", "steps_per_period",
                      "period_tol", "pmax", "ics"}


def _check_freeplay(params: dict, opts: set, own: set) -> None:
    from .nonsmooth import FreePlayParams, get_params

    names = set(FreePlayParams.__dataclass_fields__)
    model = {k: v for k, v in params.items() if k in names or k == "preset"}
    get_params(model)  # raises ParameterError on a bad model parameter
    unknown = sorted(set(params) - names - {"preset"} - opts - own)
    if unknown:
        raise ParameterError(f"unknown parameter(s) {unknown}; allowed: model parameters "
                             f"{sorted(names | {'preset'})}, options {sorted(opts)} and {sorted(own)}")
    if "law" in params and params["law"] not in ("exact", "smooth"):
        raise ParameterError(f"law must be 'exact' or 'smooth', got {params['law']!r}")


def _check_basin(params):
    _check_freeplay(params, _FREEPLAY_BASIN_OPTS, {"W", "x1", "x2"})


def _check_bif(params):
    _check_freeplay(params, _FREEPLAY_BIF_OPTS, {"W"})


def freeplay_basin(params: dict) -> dict:
    """Steady state of the free-play oscillator from the initial positions (x1, x2) at rest.

    Wraps :func:`fesub.nonsmooth.basin_point`. Parameters (non-dimensional): ``x1``, ``x2``
    initial positions, ``W`` forcing frequency (> 0), any :class:`~fesub.nonsmooth.FreePlayParams`
    field or ``preset``, and options ``law``, ``n_transient``, ``n_record``,
    ``steps_per_period``, ``period_tol``. Returns ``period`` (0 = none found), ``x1_max``,
    ``x1_min``.
    """
    from .nonsmooth import basin_point

    p = {k: v for k, v in params.items() if k not in ("x1", "x2")}
    r = basin_point(p, (float(params["x1"]), float(params["x2"])))
    return {"period": int(r["period"]), "x1_max": float(r["x1_max"]), "x1_min": float(r["x1_min"])}


def freeplay_bifurcation(params: dict) -> dict:
    """Steady states of the free-play oscillator at one forcing frequency ``W`` from the paper's ICs.

    Wraps :func:`fesub.nonsmooth.bifurcation_point`. Returns per initial condition ``period``,
    ``x1_max``, ``x1_min`` (arrays) and ``section_x1`` (ragged list of section points).
    """
    from .nonsmooth import bifurcation_point

    p = {k: v for k, v in params.items() if k != "W"}
    r = bifurcation_point(p, float(params["W"]))
    return {"period": np.asarray(r["period"], float), "x1_max": np.asarray(r["x1_max"], float),
            "x1_min": np.asarray(r["x1_min"], float), "section_x1": r["section_x1"]}


# --- harmonic balance ------------------------------------------------------------------------------


def _hbm_builder_names(model_name):
    from .hbm.models import MODELS

    if model_name not in MODELS:
        raise ParameterError(f"model must be one of {sorted(MODELS)}, got {model_name!r}")
    fn = MODELS[model_name]
    if model_name == "cantilever_contact":
        from .models import cantilever_contact as m
        fn = m.build
    elif model_name == "blade_damper_blade":
        from .models import blade_damper_blade as m
        fn = m.build
    sig = inspect.signature(fn)
    if any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values()):
        return None
    return {n for n, p in sig.parameters.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}


def _check_hbm(params):
    names = _hbm_builder_names(params.get("model"))
    extra = sorted(set(params) - {"model", "force", "omega"})
    if names is not None:
        bad = sorted(set(extra) - names)
        if bad:
            raise ParameterError(f"unknown parameter(s) {bad} for HB model {params['model']!r}; "
                                 f"allowed: {sorted(names)}")


def hbm_forced_response(params: dict) -> dict:
    """Periodic forced response of a named harmonic-balance model at one (force, omega).

    Wraps :func:`fesub.hbm.models.forced_response_point`. Parameters: ``model`` (name in
    :data:`fesub.hbm.models.MODELS`), ``force`` (N, >= 0), ``omega`` (rad/s, > 0) and any builder
    parameter of the model. Returns ``converged`` (0/1), ``Am`` (RMS amplitude at the monitor DOF,
    m), ``energy_dissipated`` (J per cycle), ``harmonic_amplitudes`` (m, k = 1..nh) and
    ``stuck_margin`` (per contact, > 0 = slipping); NaN where the solver did not converge.
    """
    from .hbm.models import forced_response_point

    model_params = {k: v for k, v in params.items() if k not in ("model", "force", "omega")}
    r = forced_response_point(params["model"], model_params, float(params["force"]), float(params["omega"]))
    return {"converged": int(bool(r["converged"])), "Am": float(r["Am"]),
            "energy_dissipated": float(r["energy_dissipated"]),
            "harmonic_amplitudes": np.asarray(r["harmonic_amplitudes"], float),
            "stuck_margin": np.asarray(r["stuck_margin"], float)}


register_study(Study(
    "beam_on_beam_stability", beam_on_beam_stability,
    (Param("mu", 0.0, None, doc="friction coefficient"),
     Param("s", 0.005, 0.098, doc="contact position (m)"),
     Param("n_basis", 20, 2000, kind="int", required=False, default=120, doc="Ritz modes"),
     Param("n_eig", 1, 200, kind="int", required=False, default=20, doc="eigenvalues")),
    doc="max real part of the complex eigenvalues (1/s) over friction and contact position",
    primary="max_real"))
register_study(Study(
    "coulomb_regime", coulomb_regime,
    (Param("r1", 0.0, None, lo_open=True, doc="frequency ratio"),
     Param("beta", 0.0, None, doc="friction ratio"),
     Param("mu", 1.0, None, required=False, default=1.0, doc="static/kinetic friction ratio"),
     Param("gamma", kind="any", doc="mass ratios (list)"),
     Param("kappa", kind="any", doc="stiffness ratios (list)")),
    doc="regime of a chain with one Coulomb contact by time integration (and closed form)",
    extra=True, check=_check_coulomb, primary="regime_code"))
register_study(Study(
    "freeplay_basin", freeplay_basin,
    (Param("x1", doc="initial position of mass 1"), Param("x2", doc="initial position of mass 2"),
     Param("W", 0.0, None, lo_open=True, doc="forcing frequency")),
    doc="basin of attraction cell of the free-play oscillator",
    extra=True, check=_check_basin, primary="x1_max"))
register_study(Study(
    "freeplay_bifurcation", freeplay_bifurcation,
    (Param("W", 0.0, None, lo_open=True, doc="forcing frequency"),),
    doc="steady states of the free-play oscillator from the paper's initial conditions",
    extra=True, check=_check_bif, primary="x1_max"))
register_study(Study(
    "hbm_forced_response", hbm_forced_response,
    (Param("model", kind="any", doc="harmonic-balance model name"),
     Param("force", 0.0, None, doc="forcing amplitude (N)"),
     Param("omega", 0.0, None, lo_open=True, doc="forcing frequency (rad/s)")),
    doc="harmonic-balance forced response at one (force, omega)",
    extra=True, check=_check_hbm, primary="Am"))


# ---------------------------------------------------------------------------------------------
# grids, cases and the store
# ---------------------------------------------------------------------------------------------


def _jsonable(v):
    """Plain-Python (JSON) version of a parameter or result value."""
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, np.ndarray):
        return _jsonable(v.tolist())
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


def _canon(obj) -> str:
    return json.dumps(_jsonable(obj), sort_keys=True, separators=(",", ":"))


def case_key(study: str, params: dict) -> str:
    """Stable file key of a case: SHA-256 (first 20 hex digits) of the study and its parameters."""
    return hashlib.sha256(_canon({"study": study, "params": params}).encode()).hexdigest()[:20]


def make_grid(**axes) -> dict:
    """A grid (dict name -> 1-D float array) from keyword arrays; order of keywords = axis order."""
    return grid_from_spec(axes)


def grid_from_spec(spec: dict) -> dict:
    """Normalise a grid spec: each value is an array/list, a scalar, or ``{start, stop, num}``.

    ``{start, stop, num}`` is ``numpy.linspace(start, stop, num)``; ``log = true`` uses
    ``numpy.geomspace`` instead.
    """
    if not isinstance(spec, dict) or not spec:
        raise ParameterError("grid must be a non-empty mapping of parameter name -> values")
    out = {}
    for name, v in spec.items():
        if isinstance(v, dict):
            extra = set(v) - {"start", "stop", "num", "log"}
            if extra or not {"start", "stop", "num"} <= set(v):
                raise ParameterError(f"grid.{name} must be {{start, stop, num[, log]}}, got keys {sorted(v)}")
            num = v["num"]
            if isinstance(num, bool) or not isinstance(num, int) or num < 1:
                raise ParameterError(f"grid.{name}.num must be an integer >= 1, got {num!r}")
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


def _cases(study: Study, grid, cases, fixed):
    """Validated list of full case dicts, the grid shape (or (n,)) and the manifest body."""
    fixed = dict(fixed or {})
    if (grid is None) == (cases is None):
        raise ParameterError("give exactly one of grid (dict of arrays) or cases (list of dicts)")
    if grid is not None:
        grid = grid_from_spec(grid)
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
        raw = [dict(fixed, **c) for c in cases]
        for i, c in enumerate(raw):
            study.validate_names(c, f" in case {i}")
        shape = (len(raw),)
        body = {"grid": None, "cases": _jsonable(list(cases))}
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
    full = [_jsonable(c) for c in full]
    keys = [case_key(study.name, c) for c in full]
    if len(set(keys)) != len(keys):
        raise ParameterError("the sweep contains duplicate cases (repeated grid values or cases)")
    body["fixed"] = _jsonable(fixed)
    return full, keys, shape, body


def check_sweep(study, *, grid=None, cases=None, fixed=None) -> int:
    """Validate a sweep without running or storing anything; return its number of cases.

    Raises the same :class:`~fesub.errors.ParameterError` as :func:`run_sweep` would (unknown
    study or parameter, value out of range, duplicate cases), so that a caller can check a
    configuration before it starts a cluster.
    """
    full, _, _, _ = _cases(get_study(study), grid, cases, fixed)
    return len(full)


def _temp_beside(path: str):
    """A new temporary file ``.tmp-*`` in the directory of ``path``: (fd, name).

    Unlike :func:`tempfile.mkstemp` (mode 0600) the file gets the usual permissions (0666 minus
    the umask), which the final file keeps after :func:`os.replace`.
    """
    d = os.path.dirname(path) or "."
    for _ in range(100):
        tmp = os.path.join(d, f".tmp-{os.getpid()}-{os.urandom(6).hex()}-{os.path.basename(path)}")
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), tmp
        except FileExistsError:  # pragma: no cover - 48 random bits
            continue
    raise SweepError(f"cannot create a temporary file in {d!r}")  # pragma: no cover


def _atomic_write_json(path: str, obj) -> None:
    """Write ``obj`` as JSON to ``path`` through a temporary file and :func:`os.replace`: ``path``
    is either absent, the old file or the complete new one, never a partial file."""
    fd, tmp = _temp_beside(path)
    try:
        with os.fdopen(fd, "w") as fh:
            json.dump(obj, fh, indent=1)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _read_json(path):
    with open(path) as fh:
        return json.load(fh)


def _manifest(study: Study, body: dict, n: int, shape) -> dict:
    from . import __version__

    return {"format": STORE_FORMAT, "study": study.name, **body, "shape": list(shape),
            "n_cases": n, "fesub_version": __version__,
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def _check_manifest(store: str, want: dict) -> bool:
    """True when the store already holds this sweep; SweepError when it holds another one."""
    path = os.path.join(store, "manifest.json")
    if not os.path.exists(path):
        cases_dir = os.path.join(store, "cases")
        if os.path.isdir(cases_dir) and any(f.endswith(".json") for f in os.listdir(cases_dir)):
            raise SweepError(f"store {store!r} holds case files but no manifest.json; "
                             f"use another directory")
        return False
    try:
        have = _read_json(path)
    except (OSError, ValueError) as exc:
        raise SweepError(f"cannot read the manifest of store {store!r}: {exc}") from None
    if have.get("format") != STORE_FORMAT:
        raise SweepError(f"store {store!r} is not a fesub sweep store (format {have.get('format')!r})")
    for key in ("study", "grid", "cases", "fixed"):
        if _canon(have.get(key)) != _canon(want.get(key)):
            raise SweepError(
                f"store {store!r} holds a different sweep ({key} differs: stored "
                f"{_short(have.get(key))}, requested {_short(want.get(key))}); refusing to mix "
                f"sweeps in one store: use another directory or delete this one")
    if have.get("fesub_version") != want.get("fesub_version"):
        warnings.warn(f"store {store!r} was started with fesub {have.get('fesub_version')}, "
                      f"resuming with {want.get('fesub_version')}", stacklevel=3)
    return True


def _short(v, n=120):
    s = json.dumps(v)
    return s if len(s) <= n else s[: n - 3] + "..."


# ---------------------------------------------------------------------------------------------
# executors
# ---------------------------------------------------------------------------------------------


def _worker_init():
    """Process-pool initializer: one BLAS/OpenMP thread per worker, signals left to the parent.

    Ctrl-C reaches the whole foreground process group: workers ignore SIGINT so that only the
    controlling process reacts (it stops the pool itself). SIGTERM gets its default action back
    (a forked worker would otherwise inherit the parent's handler).
    """
    for var in _BLAS_VARS:
        os.environ[var] = "1"
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
    except (ValueError, OSError):  # pragma: no cover - not the main thread
        pass
    try:  # NumPy is already loaded here (unpickling this function imports it): limit the live library
        import ctypes

        from .hbm import _threads

        if _threads._find():
            _threads._SET(ctypes.c_int(1))
    except Exception:  # pragma: no cover - best effort only
        pass


def _execute(func, params):
    """Run one case in a worker; never raises (failures come back as data)."""
    t0 = time.perf_counter()
    try:
        res = func(params)
        if not isinstance(res, dict):
            raise TypeError(f"a study must return a dict, got {type(res).__name__}")
        return {"status": "ok", "result": _jsonable(res), "elapsed_s": time.perf_counter() - t0}
    except BaseException as exc:  # noqa: BLE001 - a failing case must not stop the sweep
        if isinstance(exc, (KeyboardInterrupt, SystemExit, _Interrupted)):
            raise
        return {"status": "failed", "error": f"{type(exc).__name__}: {exc}",
                "traceback": traceback.format_exc(), "elapsed_s": time.perf_counter() - t0}


class _SerialExecutor(cf.Executor):
    """Runs each submitted call at once, in this process (a stop request propagates at once)."""

    def submit(self, fn, *args, **kwargs):
        f = cf.Future()
        try:
            f.set_result(fn(*args, **kwargs))
        except (KeyboardInterrupt, SystemExit, _Interrupted):
            raise
        except BaseException as exc:  # noqa: BLE001
            f.set_exception(exc)
        return f


def _connect(scheduler, cluster, connect_timeout):
    try:
        from distributed import Client
    except ImportError as exc:  # pragma: no cover
        raise SchedulerError(f"dask.distributed is needed for scheduler/cluster sweeps: {exc}") from None
    timeout = check_positive("connect_timeout (s)", connect_timeout)
    if cluster is not None:
        if isinstance(cluster, Client):
            return cluster, False
        try:
            return Client(cluster, timeout=timeout), True
        except Exception as exc:  # noqa: BLE001 - whatever the transport raises
            raise SchedulerError(f"cannot connect to the cluster {cluster!r}: "
                                 f"{type(exc).__name__}: {exc}") from None
    if not isinstance(scheduler, str) or not scheduler.strip():
        raise ParameterError(f"scheduler must be an address such as 'tcp://host:8786', got {scheduler!r}")
    try:
        return Client(scheduler, timeout=timeout), True
    except ValueError as exc:  # malformed address: unknown scheme, no port
        raise ParameterError(f"bad scheduler address {scheduler!r}: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - refused, timed out, or something else answered
        raise SchedulerError(f"cannot reach the Dask scheduler at {scheduler!r} within "
                             f"{timeout:g} s: {type(exc).__name__}: {exc}") from None


# ---------------------------------------------------------------------------------------------
# running
# ---------------------------------------------------------------------------------------------


@dataclass
class SweepReport:
    """What :func:`run_sweep` did.

    ``n_cases`` in the sweep, ``n_done_before`` found in the store, ``n_computed`` now,
    ``n_failed`` failures in the store at the end, ``n_missing`` cases without a file at the end,
    ``interrupted`` (SIGINT/SIGTERM), ``elapsed_s`` wall time (s), ``store`` path.
    """

    store: str
    n_cases: int
    n_done_before: int
    n_computed: int
    n_failed: int
    n_missing: int
    interrupted: bool
    elapsed_s: float
    failures: list = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return self.n_missing == 0


def run_sweep(study, store, *, grid=None, cases=None, fixed=None, executor=None, scheduler=None,
              cluster=None, workers=None, connect_timeout: float = 5.0, retry_failed: bool = False,
              max_in_flight: int | None = None, progress: bool = True, mp_context: str = "spawn"
              ) -> SweepReport:
    """Evaluate a study over a grid or a list of cases, writing one file per case into ``store``.

    Parameters
    ----------
    study : str or Study
        Registered study name (see :data:`STUDIES`).
    store : path
        Result-store directory (created if needed; resumed if it holds the same sweep).
    grid : dict, optional
        Parameter name -> 1-D values (or ``{start, stop, num}``); the sweep is their cartesian
        product, first name = first (slowest) axis.
    cases : list of dict, optional
        Explicit cases instead of a grid.
    fixed : dict, optional
        Parameters shared by every case.
    executor : concurrent.futures.Executor or "serial", optional
        Where to run the cases (not shut down here). Default: a local process pool.
    scheduler : str, optional
        Address of a Dask scheduler (``tcp://host:8786``); reached within ``connect_timeout`` s
        or :class:`SchedulerError` is raised before any work.
    cluster : distributed.LocalCluster or distributed.Client, optional
        A Dask cluster/client to run on.
    workers : int, optional
        Local pool size (default ``os.cpu_count()``).
    retry_failed : bool
        Also recompute cases recorded as failed.
    max_in_flight : int, optional
        Cases submitted ahead (default 4 per worker); bounds memory and the work lost on a stop.
    progress : bool
        tqdm progress bar.
    mp_context : str
        Start method of the local pool (``"spawn"`` is safe with threads; ``"fork"`` starts faster).

    Returns
    -------
    SweepReport
    """
    t_start = time.perf_counter()
    st = get_study(study)
    full, keys, shape, body = _cases(st, grid, cases, fixed)
    store = os.fspath(store)
    manifest = _manifest(st, body, len(full), shape)
    # every argument is checked before the store is touched or a worker started
    given = sum(x is not None for x in (executor, scheduler, cluster))
    if given > 1:
        raise ParameterError("give at most one of executor, scheduler and cluster")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ParameterError(f"workers must be an integer >= 1, got {workers!r}")
    if max_in_flight is not None and (isinstance(max_in_flight, bool) or not isinstance(max_in_flight, int)
                                      or max_in_flight < 1):
        raise ParameterError(f"max_in_flight must be an integer >= 1, got {max_in_flight!r}")
    if executor is not None and executor != "serial" and not isinstance(executor, cf.Executor):
        raise ParameterError(f"executor must be a concurrent.futures.Executor or 'serial', got {executor!r}")
    import multiprocessing as mp

    if mp_context not in mp.get_all_start_methods():
        raise ParameterError(f"mp_context must be one of {mp.get_all_start_methods()}, got {mp_context!r}")
    if os.path.exists(store) and not os.path.isdir(store):
        raise SweepError(f"store {store!r} exists and is not a directory")
    resuming = _check_manifest(store, manifest) if os.path.isdir(store) else False

    client = None
    own_client = False
    if scheduler is not None or cluster is not None:
        client, own_client = _connect(scheduler, cluster, connect_timeout)

    try:
        cases_dir = os.path.join(store, "cases")
        os.makedirs(cases_dir, exist_ok=True)
        for f in os.listdir(cases_dir):  # temp files of a hard-killed run
            if f.startswith(".tmp-"):
                try:
                    os.unlink(os.path.join(cases_dir, f))
                except OSError:
                    pass
        if not resuming:
            _atomic_write_json(os.path.join(store, "manifest.json"), manifest)
    except BaseException:
        if own_client:
            client.close()
        raise

    todo, n_before = [], 0
    for i, k in enumerate(keys):
        path = os.path.join(cases_dir, f"case-{k}.json")
        if os.path.exists(path):
            try:
                status = _read_json(path).get("status")
            except (OSError, ValueError, AttributeError):
                status = None  # unreadable: computed again
            if status == "ok" or (status == "failed" and not retry_failed):
                n_before += 1
                continue
        todo.append(i)

    env_saved = {v: os.environ.get(v) for v in _BLAS_VARS}
    own_executor = False
    n_workers = 1
    if executor == "serial":
        executor = _SerialExecutor()
    elif client is not None:
        executor = client.get_executor(pure=False)
        n_workers = max(1, sum(client.nthreads().values()))
    elif executor is None:
        n_workers = workers or os.cpu_count() or 1
        if todo:
            for v in _BLAS_VARS:  # spawned workers inherit the environment (NumPy loads first)
                os.environ[v] = "1"
            executor = cf.ProcessPoolExecutor(n_workers, mp_context=mp.get_context(mp_context),
                                              initializer=_worker_init)
            own_executor = True
    else:
        n_workers = workers or getattr(executor, "_max_workers", None) or os.cpu_count() or 1
    # a serial run computes at submit time: one case in flight, so that a stop loses nothing
    window = 1 if isinstance(executor, _SerialExecutor) else (max_in_flight or 4 * n_workers)

    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(full), initial=n_before, desc=f"sweep {st.name}", unit="case")

    # SIGINT/SIGTERM raise _Interrupted in this (main) thread, except while a case file is being
    # written: then the stop waits until the file is in place
    stop = {"requested": None, "writing": False}
    old_handlers = {}
    if threading.current_thread() is threading.main_thread():
        def _handler(signum, frame):
            stop["requested"] = signum
            if not stop["writing"]:
                raise _Interrupted(signum)

        for sig in (signal.SIGTERM, signal.SIGINT):
            try:
                old_handlers[sig] = signal.signal(sig, _handler)
            except (ValueError, OSError):  # pragma: no cover
                pass

    n_computed = 0
    interrupted = False
    pending = {}

    def _store(fut) -> None:
        """Write the record of a finished future and forget the future (one critical section)."""
        nonlocal n_computed
        i = pending[fut]
        try:
            rec = fut.result()
        except BrokenProcessPool as exc:
            raise SweepError(f"the worker pool broke ({exc}); finished cases are saved in "
                             f"{store!r}: run the same sweep again to resume") from None
        except cf.CancelledError:
            del pending[fut]  # not run: stays missing
            return
        except Exception as exc:  # noqa: BLE001 - e.g. a Dask worker lost
            rec = {"status": "failed", "error": f"{type(exc).__name__}: {exc}",
                   "traceback": "".join(traceback.format_exception(exc)), "elapsed_s": math.nan}
        rec = {"params": full[i], "index": i, **rec}
        stop["writing"] = True
        try:
            _atomic_write_json(os.path.join(cases_dir, f"case-{keys[i]}.json"), rec)
            del pending[fut]
            n_computed += 1
        finally:
            stop["writing"] = False
        if bar is not None:
            bar.update(1)

    try:
        it = iter(todo)
        exhausted = False
        while True:
            while not exhausted and len(pending) < window:
                i = next(it, None)
                if i is None:
                    exhausted = True
                    break
                pending[executor.submit(_execute, st.func, full[i])] = i
            if not pending:
                break
            done, _ = cf.wait(list(pending), timeout=0.5, return_when=cf.FIRST_COMPLETED)
            for fut in done:
                _store(fut)
                if stop["requested"] is not None:  # arrived during the write
                    raise _Interrupted(stop["requested"])
    except (_Interrupted, KeyboardInterrupt):
        interrupted = True
    finally:
        for sig, h in old_handlers.items():  # a second signal now acts as usual
            signal.signal(sig, h)
        if interrupted:  # keep the cases that finished while the stop was handled
            for fut in [f for f in pending if f.done() and not f.cancelled()]:
                try:
                    _store(fut)
                except Exception:  # noqa: BLE001 - best effort; the case stays missing
                    pass
        if own_executor:
            # our own pool: its manager thread cancels what is queued (a future cancelled from
            # here while queued would make it fail when the terminated workers break the pool)
            if interrupted:  # do not wait for running cases: stop the workers
                for p in list((getattr(executor, "_processes", None) or {}).values()):
                    try:
                        p.terminate()
                    except Exception:  # pragma: no cover
                        pass
            executor.shutdown(wait=True, cancel_futures=True)
        else:
            for fut in pending:
                fut.cancel()
        if client is not None and own_client:
            client.close()
        for v, old in env_saved.items():
            if old is None:
                os.environ.pop(v, None)
            else:
                os.environ[v] = old
        if bar is not None:
            bar.close()

    failures, n_missing = [], 0
    for i, k in enumerate(keys):
        path = os.path.join(cases_dir, f"case-{k}.json")
        try:
            rec = _read_json(path)
        except (OSError, ValueError):  # absent (or unreadable: computed again on the next run)
            n_missing += 1
            continue
        if rec.get("status") != "ok":
            failures.append({"index": i, "params": rec.get("params"), "error": rec.get("error"),
                             "traceback": rec.get("traceback")})
    return SweepReport(store, len(full), n_before, n_computed, len(failures), n_missing,
                       interrupted, time.perf_counter() - t_start, failures)


# ---------------------------------------------------------------------------------------------
# gathering
# ---------------------------------------------------------------------------------------------


@dataclass
class SweepData:
    """A result store gathered into arrays.

    ``axes``: grid name -> 1-D values (empty for case lists); ``shape``: grid shape or (n,);
    ``fields``: result name -> float array of shape ``shape`` (+ the result's own shape for array
    results), NaN where the case is missing or failed; ``other``: results that are not numeric
    arrays of one shape (object arrays, None where missing); ``status``: int8 array, 1 ok,
    0 missing, -1 failed; ``failures``: list of dicts (params, error, traceback);
    ``cases``: the full parameter dict of each case (flat, C order); ``manifest``.
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

    @property
    def n_missing(self) -> int:
        return int((self.status == 0).sum())

    def save(self, path) -> str:
        """Write ``<path>.npz`` (axes, fields, status) and ``<path>.json`` (manifest, failures)."""
        path = os.fspath(path)
        base = path[:-4] if path.endswith(".npz") else path
        arrays = {f"axis_{k}": v for k, v in self.axes.items()}
        arrays.update({f"field_{k}": v for k, v in self.fields.items()})
        arrays["status"] = self.status
        fd, tmp = _temp_beside(base + ".npz")
        try:  # same rule as the case files: the .npz is complete or absent
            with os.fdopen(fd, "wb") as fh:
                np.savez_compressed(fh, **arrays)
            os.replace(tmp, base + ".npz")
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        meta = {"study": self.study, "shape": list(self.shape), "axes": list(self.axes),
                "fields": list(self.fields), "manifest": self.manifest,
                "failures": self.failures, "n_missing": self.n_missing}
        _atomic_write_json(base + ".json", meta)
        return base + ".npz"


def load_store(store) -> SweepData:
    """Gather a result store into grid-shaped arrays and the list of failures (see :class:`SweepData`)."""
    store = os.fspath(store)
    path = os.path.join(store, "manifest.json")
    if not os.path.exists(path):
        raise SweepError(f"{store!r} is not a sweep store (no manifest.json)")
    man = _read_json(path)
    if man.get("format") != STORE_FORMAT:
        raise SweepError(f"{store!r} is not a fesub sweep store (format {man.get('format')!r})")
    if man["grid"] is not None:
        axes = {k: np.asarray(v, float) for k, v in man["grid"].items()}
        shape = tuple(a.size for a in axes.values())
        fixed = man["fixed"]
        full = [dict(fixed, **dict(zip(axes, map(float, combo))))
                for combo in itertools.product(*axes.values())]
    else:
        axes, shape = {}, (len(man["cases"]),)
        full = [dict(man["fixed"], **c) for c in man["cases"]]
    n = len(full)
    status = np.zeros(n, np.int8)
    results: list = [None] * n
    failures = []
    cases_dir = os.path.join(store, "cases")
    files = sorted(f for f in os.listdir(cases_dir) if f.startswith("case-") and f.endswith(".json")) \
        if os.path.isdir(cases_dir) else []
    for f in files:
        try:
            rec = _read_json(os.path.join(cases_dir, f))
        except (OSError, ValueError) as exc:  # damaged from outside: run_sweep computes it again
            warnings.warn(f"store {store!r}: unreadable case file {f} counted as missing ({exc})",
                          stacklevel=2)
            continue
        i = rec.get("index")
        # the file name is the hash of the parameters actually run: a stray file cannot land
        # on the wrong grid point
        if not isinstance(i, int) or not 0 <= i < n or \
                f != f"case-{case_key(man['study'], rec.get('params'))}.json":
            raise SweepError(f"store {store!r}: case file {f} does not belong to this sweep")
        full[i] = rec["params"]
        if rec.get("status") == "ok":
            status[i] = 1
            results[i] = rec["result"]
        else:
            status[i] = -1
            failures.append({"index": i, "params": rec.get("params"), "error": rec.get("error"),
                             "traceback": rec.get("traceback")})
    failures.sort(key=lambda d: d["index"])
    names = []
    for r in results:
        for k in r or {}:
            if k not in names:
                names.append(k)
    fields, other = {}, {}
    for k in names:
        vals = [None if r is None else r.get(k) for r in results]
        arrs, ok = [], True
        for v in vals:
            if v is None:
                arrs.append(None)
                continue
            try:
                a = np.asarray(v, dtype=float)
            except (TypeError, ValueError):
                ok = False
                break
            arrs.append(a)
        shapes = {a.shape for a in arrs if a is not None}
        if ok and len(shapes) == 1:
            sub = shapes.pop()
            out = np.full((n,) + sub, np.nan)
            for i, a in enumerate(arrs):
                if a is not None:
                    out[i] = a
            fields[k] = out.reshape(shape + sub)
        else:
            obj = np.empty(n, dtype=object)
            for i, v in enumerate(vals):
                obj[i] = v
            other[k] = obj.reshape(shape)
    return SweepData(man["study"], axes, shape, fields, other, status.reshape(shape), failures,
                     full, man)
