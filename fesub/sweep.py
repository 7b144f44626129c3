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
A directory holding ``manifest.json`` (study, grid or cases, fixed parameters, units, fesub
version), written before the first case runs and compared on every resume (a different sweep in
the same store is refused with :class:`SweepError`; a missing or unreadable manifest is reported
and written again), ``fesub-result.json`` (the store is a result folder: :func:`fesub.load`
reopens it as :class:`SweepData`; it also holds the store's summary), ``cases/case-<hash>.json``,
one file per case, named by a SHA-256 hash of the study name and the case's full parameter dict,
and ``claims/``. Each case file records the case's index, its parameters, its outcome and a
SHA-256 checksum of all three; it is written by the controlling process as soon as its case
finishes, into a temporary file in the same directory that is then renamed with
:func:`os.replace` (atomic on POSIX and Windows), so a file in ``cases/`` is always complete. A
case that raises is recorded (``status = "failed"``, with the error and traceback text) and the
sweep goes on. Re-running the same sweep on the same store computes only the cases without a
valid file (``retry_failed=True`` also recomputes failed ones; ``overwrite=True`` starts afresh).

Every case file is checked when it is read, by :func:`run_sweep` and :func:`load_store` alike:
a file that cannot be read, is not a case record, fails its checksum, or whose index or
parameters are not those of a case of this sweep is not used; its case counts as missing (and is
computed again) and the file is listed in ``SweepData.problems`` and ``SweepReport.problems``.

Several controllers may run the same sweep into one store (two terminals, two machines sharing a
file system): before computing a case a controller claims it by creating ``claims/<hash>``
exclusively (``O_CREAT | O_EXCL``, holding its pid, host and process start time); a case
claimed by another live process is left to it (and waited for, on the same machine), a claim
whose process is gone is taken over, and a claim is released once the case file is in place.

The number of cases is counted before any case is built and limited by ``max_cases``
(:data:`MAX_CASES` by default).

:func:`load_store` gathers a store into a :class:`SweepData` (a :class:`fesub.io.Result`):
grid-shaped arrays (NaN where a case is missing or failed), the list of failures, and
``to_xarray()`` with the grid axes as named dimensions and units from the study.

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
import socket
import threading
import time
import traceback
import warnings
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .errors import FesubError, ParameterError, check_positive, check_range
from .io import Result, json_default
from .parallel import THREAD_VARS

__all__ = [
    "Param", "Study", "STUDIES", "register_study", "get_study", "SweepError", "SchedulerError",
    "SweepReport", "SweepData", "make_grid", "grid_from_spec", "grid_size", "check_sweep", "run_sweep",
    "load_store", "MAX_CASES", "connect_scheduler",
    "case_key", "beam_on_beam_stability", "coulomb_regime", "freeplay_basin",
    "freeplay_bifurcation", "hbm_forced_response",
]

STORE_FORMAT = "fesub-sweep/2"
#: stores of this format are read (and resumed: their case files, which carry no checksum, are
#: computed again)
_OLD_FORMATS = ("fesub-sweep/1",)
#: default limit on the number of cases of one sweep (counted before any case is built)
MAX_CASES = 1_000_000
_BLAS_VARS = THREAD_VARS


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
    ``required=False`` parameters take ``default`` when absent. ``unit`` is the SI unit of the
    value (``"1"`` for a dimensionless one), used for the axes of gathered results and figures.
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
    (Param("mu", 0.0, None, doc="friction coefficient", unit="1"),
     Param("s", 0.005, 0.098, doc="contact position (m)", unit="m"),
     Param("n_basis", 20, 2000, kind="int", required=False, default=120, doc="Ritz modes", unit="1"),
     Param("n_eig", 1, 200, kind="int", required=False, default=20, doc="eigenvalues", unit="1")),
    doc="max real part of the complex eigenvalues (1/s) over friction and contact position",
    primary="max_real", units={"max_real": "1/s", "freq_hz": "Hz"}))
register_study(Study(
    "coulomb_regime", coulomb_regime,
    (Param("r1", 0.0, None, lo_open=True, doc="frequency ratio", unit="1"),
     Param("beta", 0.0, None, doc="friction ratio", unit="1"),
     Param("mu", 1.0, None, required=False, default=1.0, doc="static/kinetic friction ratio",
           unit="1"),
     Param("gamma", kind="any", doc="mass ratios (list)", unit="1"),
     Param("kappa", kind="any", doc="stiffness ratios (list)", unit="1")),
    doc="regime of a chain with one Coulomb contact by time integration (and closed form)",
    extra=True, check=_check_coulomb, primary="regime_code",
    units={"regime_code": "1", "analytic_regime_code": "1", "converged": "1", "periods": "1",
           "stops_per_period": "1", "Z": "1", "load": "1", "max_periods": "1",
           "min_periods": "1", "tol": "1"},
    categories={"regime_code": ("continuous", "stick-slip", "stuck"),
                "analytic_regime_code": ("continuous", "stick-slip", "stuck")}))
# the free-play oscillator is non-dimensional: every parameter and result is a ratio
_FREEPLAY_UNITS = {"period": "1", "x1_max": "1", "x1_min": "1", "section_x1": "1",
                   **{k: "1" for k in ("m", "c", "k", "mu", "cd", "kd", "mud", "kp", "a", "delta",
                                       "Q1", "Q2", "n_transient", "n_record", "n_points",
                                       "steps_per_period", "period_tol", "pmax")}}
register_study(Study(
    "freeplay_basin", freeplay_basin,
    (Param("x1", doc="initial position of mass 1", unit="1"),
     Param("x2", doc="initial position of mass 2", unit="1"),
     Param("W", 0.0, None, lo_open=True, doc="forcing frequency", unit="1")),
    doc="basin of attraction cell of the free-play oscillator",
    extra=True, check=_check_basin, primary="x1_max", units=_FREEPLAY_UNITS))
register_study(Study(
    "freeplay_bifurcation", freeplay_bifurcation,
    (Param("W", 0.0, None, lo_open=True, doc="forcing frequency", unit="1"),),
    doc="steady states of the free-play oscillator from the paper's initial conditions",
    extra=True, check=_check_bif, primary="x1_max", units=_FREEPLAY_UNITS,
    dims={"period": ("initial_condition",), "x1_max": ("initial_condition",),
          "x1_min": ("initial_condition",)}))
register_study(Study(
    "hbm_forced_response", hbm_forced_response,
    (Param("model", kind="any", doc="harmonic-balance model name"),
     Param("force", 0.0, None, doc="forcing amplitude (N)", unit="N"),
     Param("omega", 0.0, None, lo_open=True, doc="forcing frequency (rad/s)", unit="rad/s")),
    doc="harmonic-balance forced response at one (force, omega)",
    extra=True, check=_check_hbm, primary="Am",
    units={"converged": "1", "Am": "m", "energy_dissipated": "J", "harmonic_amplitudes": "m",
           "stuck_margin": "N", "nh": "1"},
    dims={"harmonic_amplitudes": ("harmonic",), "stuck_margin": ("contact",)}))


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
    """Number of cases of a grid spec (the product of its axis sizes), without building it."""
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


def _cases(study: Study, grid, cases, fixed, max_cases=MAX_CASES):
    """Validated list of full case dicts, the grid shape (or (n,)) and the manifest body."""
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


def check_sweep(study, *, grid=None, cases=None, fixed=None, max_cases: int | None = MAX_CASES,
                store=None) -> int:
    """Validate a sweep without running or storing anything; return its number of cases.

    Raises the same :class:`~fesub.errors.ParameterError` as :func:`run_sweep` would (unknown
    study or parameter, value out of range, duplicate cases, more than ``max_cases`` cases), so
    that a caller can check a configuration before it starts a cluster. With ``store``, a store
    that holds another sweep is refused (:class:`SweepError`), as :func:`run_sweep` would.
    """
    st = get_study(study)
    full, _, shape, body = _cases(st, grid, cases, fixed, max_cases)
    if store is not None:
        store = os.fspath(store)
        if os.path.exists(store) and not os.path.isdir(store):
            raise SweepError(f"store {store!r} exists and is not a directory")
        if os.path.isdir(store):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _check_manifest(store, _manifest(st, body, len(full), shape))
    return len(full)


def _temp_beside(path: str):
    """A new temporary file ``.tmp-<pid>@<host tag>-*`` in the directory of ``path``: (fd, name).

    Unlike :func:`tempfile.mkstemp` (mode 0600) the file gets the usual permissions (0666 minus
    the umask), which the final file keeps after :func:`os.replace`.
    """
    d = os.path.dirname(path) or "."
    for _ in range(100):
        tmp = os.path.join(d, f".tmp-{os.getpid()}@{_HOST_TAG}-{os.urandom(6).hex()}-"
                              f"{os.path.basename(path)}")
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
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def _manifest(study: Study, body: dict, n: int, shape) -> dict:
    from . import __version__

    return {"format": STORE_FORMAT, "study": study.name, **body, "shape": list(shape),
            "n_cases": n, "units": study.unit_table(), "primary": study.primary,
            "dims": {k: list(v) for k, v in study.dims.items()},
            "categories": {k: list(v) for k, v in study.categories.items()},
            "fesub_version": __version__,
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def _check_manifest(store: str, want: dict) -> tuple:
    """``(ok, problems)``: ``ok`` when the store's manifest is this sweep's, in the current format.

    A missing, unreadable or malformed manifest (or one of an older store format) is reported in
    ``problems`` and is to be written again: the case files name their parameters and are checked
    one by one, so nothing of another sweep can be mixed in. A readable manifest of another sweep
    is refused with :class:`SweepError`.
    """
    path = os.path.join(store, "manifest.json")
    again = "; it is written again (each case file is checked against this sweep)"

    def problem(text):
        return [{"file": "manifest.json", "index": None, "problem": text}]

    if not os.path.exists(path):
        cases_dir = os.path.join(store, "cases")
        if os.path.isdir(cases_dir) and any(f.endswith(".json") for f in os.listdir(cases_dir)):
            return False, problem(f"missing{again}")
        return False, []
    try:
        have = _read_json(path)
    except (OSError, ValueError) as exc:
        return False, problem(f"unreadable ({exc}){again}")
    if not isinstance(have, dict) or "format" not in have:
        return False, problem(f"not a sweep manifest{again}")
    if have["format"] not in (STORE_FORMAT, *_OLD_FORMATS):
        raise SweepError(f"store {store!r} is not a fesub sweep store (format {have['format']!r})")
    if not _manifest_ok(have):
        return False, problem(f"malformed (study, grid or cases, fixed){again}")
    for key in ("study", "grid", "cases", "fixed"):
        try:
            same = _canon(have.get(key)) == _canon(want.get(key))
        except ParameterError:
            same = False
        if not same:
            raise SweepError(
                f"store {store!r} holds a different sweep ({key} differs: stored "
                f"{_short(have.get(key))}, requested {_short(want.get(key))}); refusing to mix "
                f"sweeps in one store: use another directory or start it afresh (overwrite)")
    if have["format"] != STORE_FORMAT:
        return False, problem(f"written by an older fesub ({have['format']}): the manifest is "
                              f"written again and the case files, which carry no checksum, are "
                              f"computed again")
    if have.get("fesub_version") != want.get("fesub_version"):
        warnings.warn(f"store {store!r} was started with fesub {have.get('fesub_version')}, "
                      f"resuming with {want.get('fesub_version')}", stacklevel=3)
    return True, []


def _short(v, n=120):
    s = json.dumps(v, default=str)
    return s if len(s) <= n else s[: n - 3] + "..."


def _write_marker(store: str, summary: dict) -> None:
    """``fesub-result.json``: the store is a result folder that :func:`fesub.load` reopens."""
    from .io import FOLDER_MARKER, write_json

    write_json(os.path.join(store, FOLDER_MARKER), {"fesub_class": "fesub.sweep:load_store",
                                                   **summary})


def _wipe_store(store: str) -> None:
    """Remove what a sweep store holds (case files, claims, manifest, marker); nothing else."""
    from .io import FOLDER_MARKER

    for sub, ok in (("cases", lambda f: f.startswith(("case-", ".tmp-"))),
                    ("claims", lambda f: True)):
        d = os.path.join(store, sub)
        if os.path.isdir(d):
            for f in os.listdir(d):
                if ok(f):
                    _unlink(os.path.join(d, f))
    for f in ("manifest.json", FOLDER_MARKER):
        _unlink(os.path.join(store, f))


def _unlink(path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


# --- case records ------------------------------------------------------------------------------


def _checksum(rec: dict) -> str:
    """SHA-256 of the canonical JSON of a case record (without its checksum)."""
    return hashlib.sha256(_canon({k: v for k, v in rec.items() if k != "checksum"}).encode()
                          ).hexdigest()


def _case_record(i: int, params: dict, outcome: dict) -> dict:
    """The record of case ``i`` as written: index, parameters, outcome and their checksum."""
    rec = {"index": i, "params": params, **outcome}
    rec["checksum"] = _checksum(rec)
    return rec


def _case_problem(rec, fname: str, study: str, n: int, keys=None, base=None):
    """Why ``rec`` (read from ``cases/fname``) is not a valid case of this sweep, or None.

    Valid: a JSON object with status ``ok`` (and a ``result`` object) or ``failed``, whose
    checksum matches its content, whose index is a case of the sweep and whose parameters are
    those of that case (their hash is the file name, and the case's own key in ``keys``, or
    they contain the grid point or listed case ``base(index)`` when the study is not at hand).
    """
    if not isinstance(rec, dict):
        return f"not a case record (a JSON {type(rec).__name__})"
    status = rec.get("status")
    if status not in ("ok", "failed"):
        return f"status {status!r} is neither 'ok' nor 'failed'"
    if status == "ok" and not isinstance(rec.get("result"), dict):
        return "status 'ok' without a result"
    if "checksum" not in rec:
        return "no checksum (written by an older fesub)"
    try:
        if rec["checksum"] != _checksum(rec):
            return "checksum mismatch (the file changed after it was written)"
    except ParameterError as exc:
        return f"not JSON data ({exc})"
    i, params = rec.get("index"), rec.get("params")
    if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < n:
        return f"index {i!r} is not a case of this sweep (0 to {n - 1})"
    if not isinstance(params, dict):
        return "no parameters"
    if fname != f"case-{case_key(study, params)}.json":
        return "its parameters do not match its file name"
    if keys is not None:
        if fname != f"case-{keys[i]}.json":
            return f"its parameters are not those of case {i}"
    else:
        for k, v in base(i).items():
            if k not in params or _canon(params[k]) != _canon(v):
                return f"its parameters are not those of case {i} ({k} differs)"
    return None


def _read_case(path: str):
    """``(record, None)`` or ``(None, problem)`` for the case file ``path``."""
    try:
        return _read_json(path), None
    except FileNotFoundError:
        return None, None
    except (OSError, ValueError) as exc:  # UnicodeDecodeError is a ValueError
        return None, f"unreadable ({type(exc).__name__}: {exc})"


def _done_case(path: str, study: str, n: int, keys, i: int, retry_failed: bool,
               problems: list | None = None) -> bool:
    """Whether case ``i`` has a valid file that a run is to keep (what is wrong with an invalid
    one is appended to ``problems``)."""
    rec, prob = _read_case(path)
    if rec is not None:
        prob = _case_problem(rec, os.path.basename(path), study, n, keys=keys)
    if prob is not None:
        if problems is not None:
            problems.append({"file": os.path.basename(path), "index": i,
                             "problem": f"{prob}; computed again"})
        return False
    return rec is not None and (rec.get("status") == "ok" or not retry_failed)


# --- claims: one controller computes a case, even with several sweeps on one store --------------

_HOST = socket.gethostname()
_HOST_TAG = hashlib.sha256(_HOST.encode()).hexdigest()[:8]
#: a claim file that is empty or unreadable is taken as being written for this long (s)
CLAIM_GRACE_S = 60.0


def _proc_start(pid: int):
    """Start time of process ``pid`` (clock ticks since boot, Linux), None where unknown."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def _claim_state(path: str) -> str:
    """``"live"`` (a running process of this machine holds it), ``"foreign"`` (a process whose
    life cannot be checked from here holds it: another machine, or no POSIX process table) or
    ``"stale"`` (its process is gone, or the pid now belongs to another process)."""
    try:
        with open(path, encoding="utf-8") as fh:
            info = json.loads(fh.read())
    except FileNotFoundError:
        return "stale"
    except (OSError, ValueError):
        info = None
    if not isinstance(info, dict) or not isinstance(info.get("pid"), int):
        try:  # a claim being written, or damaged: live while young
            young = time.time() - os.stat(path).st_mtime < CLAIM_GRACE_S
        except OSError:
            return "stale"
        return "live" if young else "stale"
    if info.get("host") != _HOST or os.name != "posix":
        return "foreign"
    pid = info["pid"]
    if pid <= 0 or not _pid_alive(pid):
        return "stale"
    start = info.get("start")
    if start is not None:
        now = _proc_start(pid)
        if now is not None and now != start:
            return "stale"
    return "live"


def _try_claim(path: str) -> str:
    """Claim a case (``O_CREAT | O_EXCL``: one process wins): ``"claimed"``, or the state of the
    claim that another process holds (``"live"`` or ``"foreign"``). A stale claim is taken over:
    it is renamed away (one process succeeds) and the claim is made afresh."""
    text = json.dumps({"pid": os.getpid(), "host": _HOST, "start": _proc_start(os.getpid()),
                       "time": time.time()})
    for _ in range(5):
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            state = _claim_state(path)
            if state != "stale":
                return state
            tomb = f"{path}.stale-{os.getpid()}-{os.urandom(4).hex()}"
            try:
                os.rename(path, tomb)
            except FileNotFoundError:  # another process took it over first
                continue
            if _claim_state(tomb) != "stale":  # a fresh claim made meanwhile: give it back
                try:
                    os.link(tomb, path)
                except OSError:
                    pass
                _unlink(tomb)
                return "live"
            _unlink(tomb)
            continue
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        return "claimed"
    return "live"  # pragma: no cover - lost five races in a row


def _pid_alive(pid: int) -> bool:
    """Whether process ``pid`` of this machine exists (True where that cannot be checked)."""
    if os.name != "posix":
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process
        return True
    return True


def _clean_temp_files(cases_dir: str) -> None:
    """Remove temporary files left by a hard-killed writer, not those of a writer still at work.

    A temporary file is named ``.tmp-<pid>@<host tag>-...``: one of this machine is removed when
    its process is gone; one of another machine (a store on a shared file system) when it is
    older than :data:`CLAIM_GRACE_S` (a write takes milliseconds); one without a host tag when
    either holds.
    """
    for f in os.listdir(cases_dir):
        if not f.startswith(".tmp-"):
            continue
        path = os.path.join(cases_dir, f)
        owner = f[5:].split("-", 1)[0]
        pid_text, _, host = owner.partition("@")
        try:
            pid = int(pid_text)
        except ValueError:
            pid = -1
        try:
            old = time.time() - os.stat(path).st_mtime > CLAIM_GRACE_S
        except OSError:
            continue
        dead = pid <= 0 or not _pid_alive(pid)
        if (host == _HOST_TAG and dead) or (host and host != _HOST_TAG and old) or \
                (not host and (dead or old)):
            _unlink(path)


# ---------------------------------------------------------------------------------------------
# executors
# ---------------------------------------------------------------------------------------------


def _worker_init():
    """Process-pool initializer: :func:`fesub.parallel.init_worker` (one BLAS/OpenMP thread per
    worker, the live OpenBLAS too, since unpickling this function has already loaded NumPy;
    signals left to the parent)."""
    from .parallel import init_worker

    init_worker()


#: warnings of one case kept in its record (the first ones, each message once)
MAX_CASE_WARNINGS = 5


def _execute(func, params):
    """Run one case in a worker; never raises (failures come back as data).

    Warnings the study emits are recorded in the case record (``warnings``: the first
    :data:`MAX_CASE_WARNINGS` distinct messages) instead of being printed by every worker for
    every case.
    """
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            res = func(params)
            if not isinstance(res, dict):
                raise TypeError(f"a study must return a dict, got {type(res).__name__}")
            out = {"status": "ok", "result": _jsonable(res), "elapsed_s": time.perf_counter() - t0}
        except BaseException as exc:  # noqa: BLE001 - a failing case must not stop the sweep
            if isinstance(exc, (KeyboardInterrupt, SystemExit, _Interrupted)):
                raise
            out = {"status": "failed", "error": f"{type(exc).__name__}: {exc}",
                   "traceback": traceback.format_exc(), "elapsed_s": time.perf_counter() - t0}
    seen = list(dict.fromkeys(f"{w.category.__name__}: {w.message}" for w in caught))
    if seen:
        out["warnings"] = seen[:MAX_CASE_WARNINGS]
    return out


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


def connect_scheduler(address: str, connect_timeout: float = 5.0):
    """A ``distributed.Client`` connected to the Dask scheduler at ``address`` (``tcp://host:8786``).

    Raises :class:`~fesub.errors.ParameterError` for a malformed address or timeout and
    :class:`SchedulerError` when the scheduler does not answer within ``connect_timeout`` (s) or
    dask.distributed is missing. The caller closes the client; :func:`run_sweep` takes it as
    ``cluster``.
    """
    return _connect(address, None, connect_timeout)[0]


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
    ``n_failed`` failures in the store at the end, ``n_missing`` cases without a valid file at
    the end, ``interrupted`` (SIGINT/SIGTERM; ``signal`` says which), ``elapsed_s`` wall time (s),
    ``store`` path, ``failures`` (index, params, error, traceback), ``problems`` (what was found
    wrong in the store, each ``{"file", "index", "problem"}``: damaged case files, computed
    again, files of no case of this sweep, a rewritten manifest), ``n_busy`` cases
    left to a process that holds their claim and whose life cannot be checked from here,
    ``data`` the store gathered at the end (:class:`SweepData`, as :func:`load_store` gives it).
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
    problems: list = field(default_factory=list)
    signal: int | None = None
    n_busy: int = 0
    data: "SweepData | None" = field(default=None, repr=False)

    @property
    def complete(self) -> bool:
        return self.n_missing == 0


def run_sweep(study, store, *, grid=None, cases=None, fixed=None, executor=None, scheduler=None,
              cluster=None, workers=None, connect_timeout: float = 5.0, retry_failed: bool = False,
              max_in_flight: int | None = None, progress: bool = True, mp_context: str = "spawn",
              overwrite: bool = False, max_cases: int | None = MAX_CASES) -> SweepReport:
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
    connect_timeout : float
        Time allowed to reach the scheduler (s).
    retry_failed : bool
        Also recompute cases recorded as failed.
    max_in_flight : int, optional
        Cases submitted ahead (default 4 per worker); bounds memory and the work lost on a stop.
    progress : bool
        tqdm progress bar.
    mp_context : str
        Start method of the local pool (``"spawn"`` is safe with threads; ``"fork"`` starts faster).
    overwrite : bool
        Start the store afresh: its case files, claims and manifest are removed first (nothing
        else in the directory is touched).
    max_cases : int or None
        Largest number of cases accepted (counted before any case is built); None: no limit.

    Returns
    -------
    SweepReport
    """
    t_start = time.perf_counter()
    st = get_study(study)
    full, keys, shape, body = _cases(st, grid, cases, fixed, max_cases)
    store = os.fspath(store)
    manifest = _manifest(st, body, len(full), shape)
    n = len(full)
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
    problems: list = []
    manifest_ok = False
    if os.path.isdir(store) and not overwrite:
        manifest_ok, problems = _check_manifest(store, manifest)

    client = None
    own_client = False
    if scheduler is not None or cluster is not None:
        client, own_client = _connect(scheduler, cluster, connect_timeout)

    cases_dir = os.path.join(store, "cases")
    claims_dir = os.path.join(store, "claims")
    try:
        if overwrite and os.path.isdir(store):
            _wipe_store(store)
        os.makedirs(cases_dir, exist_ok=True)
        os.makedirs(claims_dir, exist_ok=True)
        _clean_temp_files(cases_dir)
        if not manifest_ok:
            _atomic_write_json(os.path.join(store, "manifest.json"), manifest)
            _write_marker(store, _store_summary(manifest, None))
    except BaseException:
        if own_client:
            client.close()
        raise

    def case_path(i):
        return os.path.join(cases_dir, f"case-{keys[i]}.json")

    todo = [i for i in range(n)
            if not _done_case(case_path(i), st.name, n, keys, i, retry_failed, problems)]
    n_before = n - len(todo)

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

        bar = tqdm(total=n, initial=n_before, desc=f"sweep {st.name}", unit="case")

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
    mine = set()  # cases this run holds the claim of
    waiting = {}  # case -> claim state, for cases another process holds

    def claim_path(i):
        return os.path.join(claims_dir, keys[i])

    def release(i):
        if i in mine:
            mine.discard(i)
            _unlink(claim_path(i))

    def take(i) -> bool:
        """Claim case ``i`` for this run; False when it is done or another process has it."""
        state = _try_claim(claim_path(i))
        if state != "claimed":
            waiting[i] = state
            return False
        mine.add(i)
        waiting.pop(i, None)
        # finished by another process between the scan and the claim: nothing to do
        if _done_case(case_path(i), st.name, n, keys, i, retry_failed):
            release(i)
            return False
        return True

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
            release(i)
            return
        except Exception as exc:  # noqa: BLE001 - e.g. a Dask worker lost
            rec = {"status": "failed", "error": f"{type(exc).__name__}: {exc}",
                   "traceback": "".join(traceback.format_exception(exc)), "elapsed_s": math.nan}
        rec = _case_record(i, full[i], rec)
        stop["writing"] = True
        try:
            _atomic_write_json(case_path(i), rec)
            del pending[fut]
            release(i)  # after the file is in place: a process that claims next sees it done
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
                if take(i):
                    pending[executor.submit(_execute, st.func, full[i])] = i
            if exhausted and len(pending) < window:
                # cases another process of this machine was computing: done by now, or free
                # again when that process stopped
                for i in [j for j, s in waiting.items() if s == "live"]:
                    if len(pending) >= window:
                        break
                    if _done_case(case_path(i), st.name, n, keys, i, False):
                        waiting.pop(i)
                    elif take(i):
                        pending[executor.submit(_execute, st.func, full[i])] = i
            if not pending:
                if exhausted and any(s == "live" for s in waiting.values()):
                    time.sleep(0.2)
                    continue
                break
            done, _ = cf.wait(list(pending), timeout=0.5, return_when=cf.FIRST_COMPLETED)
            for fut in done:
                _store(fut)
                if stop["requested"] is not None:  # arrived during the write
                    raise _Interrupted(stop["requested"])
    except (_Interrupted, KeyboardInterrupt) as exc:
        interrupted = True
        if stop["requested"] is None:
            stop["requested"] = exc.args[0] if isinstance(exc, _Interrupted) and exc.args \
                else signal.SIGINT
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
        for i in list(mine):  # cases this run did not finish: free for the next run
            release(i)
        if client is not None and own_client:
            client.close()
        for v, old in env_saved.items():
            if old is None:
                os.environ.pop(v, None)
            else:
                os.environ[v] = old
        if bar is not None:
            bar.close()

    data = _gather(store, st, full=full, keys=keys)
    fixed_now = {p["file"] for p in problems}
    problems = problems + [p for p in data.problems if p["file"] not in fixed_now]
    _write_marker(store, data.summary())
    busy = [i for i, s in waiting.items() if s != "claimed" and data.status.flat[i] == 0]
    return SweepReport(store, n, n_before, n_computed, len(data.failures), data.n_missing,
                       interrupted, time.perf_counter() - t_start, data.failures, problems,
                       int(stop["requested"]) if interrupted else None, len(busy), data)


# ---------------------------------------------------------------------------------------------
# gathering
# ---------------------------------------------------------------------------------------------

#: unit recorded for a parameter or result whose study does not declare one
UNKNOWN_UNIT = "unknown"
_STATUS_MEANINGS = "failed missing ok"


def _store_summary(manifest: dict, data) -> dict:
    """Summary (the one schema of :mod:`fesub.io`) of a store: the sweep, and its state when
    ``data`` (a :class:`SweepData`) is given."""
    from .io import summary_record

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

    ``axes``: grid name -> 1-D values (empty for case lists); ``shape``: grid shape or (n,);
    ``fields``: result name -> float array of shape ``shape`` (+ the result's own shape for array
    results), NaN where the case is missing or failed; ``other``: results that are not numeric
    arrays of one shape (object arrays, None where missing); ``status``: int8 array, 1 ok,
    0 missing, -1 failed; ``failures``: list of dicts (index, params, error, traceback);
    ``cases``: the full parameter dict of each case (flat, C order); ``manifest``; ``units``:
    name -> SI unit of the parameters and results the study declares; ``dims``: names of the
    extra dimensions of array results; ``primary``: the study's main result; ``problems``: case
    files of the store that were not used (file, index, problem), their cases counted missing;
    ``categories``: names of the values of coded results; ``warnings``: the warnings cases
    emitted (index, messages).

    :meth:`to_xarray` labels the grid axes as dimensions (``case`` for a list of cases, with the
    numbers each case lists as coordinates along it), with their values and units as
    coordinates.
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
        return _store_summary(self.manifest, self)

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


def _manifest_ok(man: dict) -> bool:
    """Whether a manifest has what gathering needs: a study, a grid or cases, fixed values."""
    grid, cases, fixed = man.get("grid"), man.get("cases"), man.get("fixed")
    return isinstance(man.get("study"), str) and isinstance(fixed, dict) and (
        (isinstance(grid, dict) and bool(grid) and cases is None
         and all(isinstance(v, list) and v for v in grid.values()))
        or (grid is None and isinstance(cases, list) and bool(cases)
            and all(isinstance(c, dict) for c in cases)))


def _read_manifest(store: str) -> dict:
    """The manifest of a store, or :class:`SweepError` saying why it cannot be used."""
    path = os.path.join(store, "manifest.json")
    if not os.path.isdir(store):
        raise SweepError(f"{store!r} is not a sweep store (not a directory)")
    if not os.path.exists(path):
        raise SweepError(f"{store!r} is not a sweep store (no manifest.json)")
    try:
        man = _read_json(path)
    except (OSError, ValueError) as exc:
        raise SweepError(f"the manifest of store {store!r} is unreadable ({exc}); run the sweep "
                         f"again to rewrite it") from None
    if not isinstance(man, dict) or man.get("format") not in (STORE_FORMAT, *_OLD_FORMATS):
        what = man.get("format") if isinstance(man, dict) else type(man).__name__
        raise SweepError(f"{store!r} is not a fesub sweep store (manifest format {what!r})")
    if not _manifest_ok(man):
        raise SweepError(f"the manifest of store {store!r} is malformed (study, grid or cases, "
                         f"fixed); run the sweep again to rewrite it")
    return man


def _gather(store: str, study=None, *, full=None, keys=None) -> SweepData:
    """Gather a store; case files that are not valid cases of its sweep are listed in
    ``problems`` (not raised). ``full``/``keys``: the sweep's cases and their keys when known."""
    store = os.fspath(store)
    man = _read_manifest(store)
    fixed = man["fixed"]
    if man["grid"] is not None:
        try:
            axes = {k: np.asarray(v, float) for k, v in man["grid"].items()}
        except (TypeError, ValueError):
            raise SweepError(f"the manifest of store {store!r} has a grid axis that is not numbers") from None
        shape = tuple(a.size for a in axes.values())

        def base(i):
            idx = np.unravel_index(i, shape)
            return dict(fixed, **{k: float(a[j]) for (k, a), j in zip(axes.items(), idx)})
    else:
        axes, shape = {}, (len(man["cases"]),)

        def base(i):
            return dict(fixed, **man["cases"][i])
    n = math.prod(shape)
    st = study
    if st is None:
        try:
            st = get_study(man["study"])
        except ParameterError:  # a plugin study not importable here: checked against the grid
            st = None
    if keys is None and st is not None:
        try:
            full, keys, _, _ = _cases(st, man["grid"], man["cases"], fixed, None)
        except FesubError:  # the study's ranges changed since: checked against the grid
            full, keys = None, None
    cases = list(full) if full is not None else [base(i) for i in range(n)]
    status = np.zeros(n, np.int8)
    results: list = [None] * n
    failures, problems, warned = [], [], []
    cases_dir = os.path.join(store, "cases")
    files = sorted(f for f in os.listdir(cases_dir) if f.startswith("case-") and f.endswith(".json")) \
        if os.path.isdir(cases_dir) else []
    for f in files:
        rec, prob = _read_case(os.path.join(cases_dir, f))
        if rec is None and prob is None:  # removed meanwhile
            continue
        if prob is None:
            prob = _case_problem(rec, f, man["study"], n, keys=keys, base=base)
        if prob is None and status[rec["index"]] != 0:
            prob = f"a second file for case {rec['index']}"
        if prob is not None:
            idx = rec.get("index") if isinstance(rec, dict) else None
            problems.append({"file": f, "index": idx if isinstance(idx, int) else None,
                             "problem": prob})
            continue
        i = rec["index"]
        cases[i] = rec["params"]
        if isinstance(rec.get("warnings"), list) and rec["warnings"]:
            warned.append({"index": i, "warnings": rec["warnings"]})
        if rec["status"] == "ok":
            status[i] = 1
            results[i] = rec["result"]
        else:
            status[i] = -1
            failures.append({"index": i, "params": rec["params"], "error": rec.get("error"),
                             "traceback": rec.get("traceback")})
    failures.sort(key=lambda d: d["index"])
    warned.sort(key=lambda d: d["index"])
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
    units = dict(man.get("units") or (st.unit_table() if st is not None else {}))
    dims = {k: tuple(v) for k, v in (man.get("dims") or (st.dims if st is not None else {})).items()}
    cats = {k: tuple(v) for k, v in
            (man.get("categories") or (st.categories if st is not None else {})).items()}
    primary = man.get("primary", st.primary if st is not None else None)
    return SweepData(man["study"], axes, shape, fields, other, status.reshape(shape), failures,
                     cases, man, units, dims, primary, problems, cats, warned)


def load_store(store, *, warn: bool = True) -> SweepData:
    """Gather a result store into grid-shaped arrays and the list of failures (see :class:`SweepData`).

    Every case file is checked (its checksum, its index and its parameters against the sweep):
    one that fails is not used, its case counts as missing (and is computed again by the next
    :func:`run_sweep`), and it is listed in ``SweepData.problems`` (and warned about when
    ``warn``). Also what :func:`fesub.load` returns for a store.
    """
    data = _gather(store)
    if warn and data.problems:
        shown = "; ".join(f"{p['file']}: {p['problem']}" for p in data.problems[:5])
        more = f" (and {len(data.problems) - 5} more)" if len(data.problems) > 5 else ""
        warnings.warn(f"store {os.fspath(store)!r}: {len(data.problems)} case file(s) not used, "
                      f"their cases count as missing: {shown}{more}", stacklevel=2)
    return data
