"""Named harmonic-balance models and a picklable per-case function for parameter sweeps."""

from __future__ import annotations

import math

import numpy as np

from ..errors import ConvergenceError, ParameterError

__all__ = ["MODELS", "build_model", "forced_response_point", "jenkins_1dof"]


def jenkins_1dof(nh=7, m=1.0, c=0.02, k=1.0, kt=1.0, mu=0.1, N0=1.0):
    """1-DOF oscillator with a grounded Jenkins element (spec 5B reference; SI units)."""
    from .contact import Jenkins
    from .system import Contact, HBSystem

    return HBSystem(np.array([[m]]), np.array([[c]]), np.array([[k]]), nh,
                    [Contact(Jenkins(kt, mu, N0), np.eye(1), "jenkins")], fex=0, dof=0)


def _beam(**p):
    from ..models import cantilever_contact

    return cantilever_contact.build(**p)


def _blade(**p):
    from ..models import blade_damper_blade

    return blade_damper_blade.build(**p)


#: model name -> builder(**params) -> HBSystem
MODELS = {"jenkins_1dof": jenkins_1dof, "cantilever_contact": _beam,
          "blade_damper_blade": _blade}


def build_model(model_name: str, params: dict | None = None):
    """Build a named model (see :data:`MODELS`) with parameter overrides."""
    if model_name not in MODELS:
        raise ParameterError(f"model_name must be one of {sorted(MODELS)}, got {model_name!r}")
    try:
        return MODELS[model_name](**dict(params or {}))
    except TypeError as exc:
        raise ParameterError(f"bad parameters for model {model_name!r}: {exc}") from None


def forced_response_point(model_name: str, params: dict, force: float, omega: float) -> dict:
    """Periodic forced response of a named model at one force (N) and frequency (rad/s).

    Pure and picklable (for sweep engines). Returns a JSON-friendly dict: ``converged``,
    ``Am`` (RMS amplitude at the monitor DOF, m), ``harmonic_amplitudes`` (m, k = 1..nh),
    ``energy_dissipated`` (J per cycle), ``stuck_margin`` (per contact, > 0 = slipping),
    ``Q`` (list, m) and ``message`` on failure (then NaN values).
    """
    from .analysis import solve_at
    from .fourier import harmonic_amplitudes

    sy = build_model(model_name, params)
    out = {"model": model_name, "params": dict(params or {}), "force": float(force),
           "omega": float(omega), "nh": sy.nh}
    try:
        Q = solve_at(sy, float(omega), float(force))
    except ConvergenceError as exc:
        out.update(converged=False, message=str(exc), Am=math.nan,
                   harmonic_amplitudes=[math.nan] * sy.nh, energy_dissipated=math.nan,
                   stuck_margin=[math.nan] * len(sy.contacts), Q=[])
        return out
    out.update(converged=True, message="", Am=sy.amplitude(Q),
               harmonic_amplitudes=harmonic_amplitudes(Q, sy.n, sy.nh, sy.dof).tolist(),
               energy_dissipated=float(sy.energy_dissipated(Q)),
               stuck_margin=sy.stuck_margin(Q).tolist(), Q=Q.tolist())
    return out
