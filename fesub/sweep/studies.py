"""The catalogue of ready-made studies, registered in :data:`fesub.sweep.STUDIES` on import.

Each study wraps one per-case function of a physics package (imported when a case runs, so that
loading the catalogue stays light): ``beam_on_beam_stability`` (complex eigenvalues of the
beam-on-beam contact model), ``coulomb_regime`` (regime of a chain with a Coulomb contact),
``freeplay_basin`` and ``freeplay_bifurcation`` (steady states of the free-play oscillator) and
``hbm_forced_response`` (harmonic-balance forced response of a model of :mod:`fesub.models`, through
:func:`forced_response_point`).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ..errors import ParameterError
from .cases import Param, Study, register_study


# --- beam on beam --------------------------------------------------------------------------------

@functools.lru_cache(maxsize=2)
def _beam_system():
    """The beam-on-beam contact system, built once per worker process (~0.5-2 s)."""
    from ..models import beam_on_beam as bb

    return bb.contact_system(bb.build())


def beam_on_beam_stability(params: dict) -> dict:
    """Largest real part of the complex eigenvalues of the beam-on-beam model at (mu, s).

    Parameters
    ----------
    params : dict
        ``mu`` friction coefficient (dimensionless, >= 0), ``s`` contact position (m, in
        [0.005, 0.098]), optional ``n_basis`` (modes of the frictionless system used as Ritz
        basis, default 120) and ``n_eig`` (number of eigenvalues, default 20).

    Returns
    -------
    dict
        ``max_real`` (1/s; > 0 means flutter instability) and ``freq_hz`` (Hz, frequency
        ``Im(lambda)/2 pi`` of the eigenvalue with the largest real part).
    """
    from ..contact.analyses.eigen import complex_eigenvalues

    lam = complex_eigenvalues(_beam_system(), float(params["s"]), float(params["mu"]),
                              int(params.get("n_eig", 20)), n_basis=int(params.get("n_basis", 120)))
    i = int(np.argmax(lam.real))
    return {"max_real": float(lam.real[i]), "freq_hz": float(lam.imag[i] / (2 * math.pi))}


# --- Coulomb chains ------------------------------------------------------------------------------


def _check_coulomb(params: dict) -> None:
    from ..coulomb import ChainModel, CoulombContact

    for key in ("gamma", "kappa"):
        if not isinstance(params.get(key), (list, tuple)):
            raise ParameterError(f"coulomb_regime needs {key!r} as a list of positive ratios, "
                                 f"got {params.get(key)!r}")
    model = ChainModel(params["gamma"], params["kappa"])
    CoulombContact.from_spec(params.get("contact", "wall:0")).validate(model.n)
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

    Wraps :func:`fesub.coulomb.regime_map_point`. The study is non-dimensional: every parameter
    and result is a ratio or a count.

    Parameters
    ----------
    params : dict
        ``r1`` frequency ratio (dimensionless, > 0), ``beta`` friction ratio (dimensionless,
        >= 0), ``gamma``/``kappa`` (lists of mass/stiffness ratios, dimensionless), optional
        ``contact`` (``"wall:0"``, ``"masses:0,1"``, ``"base:0"`` or a dict), ``load`` (index of
        the loaded mass), ``mu`` (static/kinetic friction ratio, dimensionless, >= 1),
        ``max_periods``, ``min_periods`` (limits on the number of forcing periods), ``tol``
        (relative tolerance on the distance of the Poincare state to its fixed point,
        dimensionless, in (0, 1)), ``amplitudes`` (bool).

    Returns
    -------
    dict
        ``regime_code`` (0 continuous, 1 stick-slip, 2 stuck), ``analytic_regime_code`` (closed
        form), ``converged`` (0/1), ``periods``, ``stops_per_period``, ``Z`` (amplitude ratio,
        dimensionless, NaN unless converged with ``amplitudes``).
    """
    from ..coulomb import regime_map_point

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
    from ..nonsmooth import FreePlayParams, get_params

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

    Wraps :func:`fesub.nonsmooth.basin_point`. The free-play oscillator is non-dimensional:
    every parameter and result is a ratio.

    Parameters
    ----------
    params : dict
        All dimensionless: ``x1``, ``x2`` initial positions (the masses at rest), ``W`` forcing
        frequency (> 0), any :class:`~fesub.nonsmooth.FreePlayParams` field or ``preset``, and
        options ``law`` (``"exact"`` or ``"smooth"``), ``n_transient``, ``n_record``,
        ``steps_per_period``, ``period_tol``.

    Returns
    -------
    dict
        ``period`` (in forcing periods; 0 = none found), ``x1_max``, ``x1_min`` (extremes of
        the position of mass 1), all dimensionless.
    """
    from ..nonsmooth import basin_point

    p = {k: v for k, v in params.items() if k not in ("x1", "x2")}
    r = basin_point(p, (float(params["x1"]), float(params["x2"])))
    return {"period": int(r["period"]), "x1_max": float(r["x1_max"]), "x1_min": float(r["x1_min"])}


def freeplay_bifurcation(params: dict) -> dict:
    """Steady states of the free-play oscillator at one forcing frequency ``W`` from the paper's ICs.

    Wraps :func:`fesub.nonsmooth.bifurcation_point`. The free-play oscillator is
    non-dimensional: every parameter and result is a ratio.

    Parameters
    ----------
    params : dict
        All dimensionless: ``W`` forcing frequency (> 0), any
        :class:`~fesub.nonsmooth.FreePlayParams` field or ``preset``, and options ``law``,
        ``n_transient``, ``n_points``, ``section_dir``, ``steps_per_period``, ``period_tol``,
        ``pmax``, ``ics``.

    Returns
    -------
    dict
        Per initial condition ``period`` (in forcing periods), ``x1_max``, ``x1_min`` (arrays)
        and ``section_x1`` (ragged list of section points), all dimensionless.
    """
    from ..nonsmooth import bifurcation_point

    p = {k: v for k, v in params.items() if k != "W"}
    r = bifurcation_point(p, float(params["W"]))
    return {"period": np.asarray(r["period"], float), "x1_max": np.asarray(r["x1_max"], float),
            "x1_min": np.asarray(r["x1_min"], float), "section_x1": r["section_x1"]}


# --- harmonic balance ------------------------------------------------------------------------------


def _check_hbm(params):
    """The model is a harmonic-balance model of :data:`fesub.models.MODELS` and every other
    parameter (besides force and omega) one its builder accepts."""
    from ..models import names, parameters

    model = params.get("model")
    if model not in names("hb"):
        raise ParameterError(f"model must be one of {names('hb')}, got {model!r}")
    allowed = parameters(model)  # None: the builder checks its keyword names itself
    if allowed is not None:
        bad = sorted(set(params) - {"model", "force", "omega"} - allowed)
        if bad:
            raise ParameterError(f"unknown parameter(s) {bad} for HB model {model!r}; "
                                 f"allowed: {sorted(allowed)}")


def forced_response_point(model_name: str, params: dict, force: float, omega: float) -> dict:
    """Periodic forced response of a registered model at one force (N) and frequency (rad/s).

    Pure and picklable (a sweep's case runs it in a worker): the model is built from its name
    and parameters (:func:`fesub.models.build`) and solved by
    :func:`fesub.hbm.forced_response_record`.

    Parameters
    ----------
    model_name : str
        Name of a harmonic-balance model of :data:`fesub.models.MODELS`.
    params : dict
        Overrides of the builder's parameters (in the units that builder documents).
    force : float
        Force amplitude (N), > 0.
    omega : float
        Excitation frequency (rad/s), > 0.

    Returns
    -------
    dict
        JSON-friendly: the inputs (``model``, ``params``, ``force`` in N, ``omega`` in rad/s,
        ``nh``) and ``converged``, ``message``, ``Am`` (m), ``harmonic_amplitudes`` (m),
        ``energy_dissipated`` (J per cycle), ``stuck_margin`` (N), ``Q`` (m); NaN values where
        the solve did not converge.
    """
    from ..hbm.forced import forced_response_record
    from ..models import build

    sy = build(model_name, **dict(params or {}))
    return {"model": model_name, "params": dict(params or {}),
            **forced_response_record(sy, float(force), float(omega))}


def hbm_forced_response(params: dict) -> dict:
    """Periodic forced response of a named harmonic-balance model at one (force, omega).

    Wraps :func:`forced_response_point`.

    Parameters
    ----------
    params : dict
        ``model`` (the name of a harmonic-balance model of :data:`fesub.models.MODELS`),
        ``force`` (N, >= 0), ``omega`` (rad/s, > 0) and any parameter of the model's builder (in
        the units that builder documents).

    Returns
    -------
    dict
        ``converged`` (0/1), ``Am`` (RMS amplitude at the monitor DOF, m),
        ``energy_dissipated`` (J per cycle), ``harmonic_amplitudes`` (m, k = 1..nh) and
        ``stuck_margin`` (N, per contact, > 0 = slipping); NaN where the solver did not
        converge.
    """
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
    (Param("model", kind="any", doc="name of a harmonic-balance model of fesub.models.MODELS"),
     Param("force", 0.0, None, doc="forcing amplitude (N)", unit="N"),
     Param("omega", 0.0, None, lo_open=True, doc="forcing frequency (rad/s)", unit="rad/s")),
    doc="harmonic-balance forced response at one (force, omega)",
    extra=True, check=_check_hbm, primary="Am",
    units={"converged": "1", "Am": "m", "energy_dissipated": "J", "harmonic_amplitudes": "m",
           "stuck_margin": "N", "nh": "1"},
    dims={"harmonic_amplitudes": ("harmonic",), "stuck_margin": ("contact",)}))
