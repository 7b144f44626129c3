"""Forced responses of a harmonic-balance system.

:func:`forced_response_point` is the pure, picklable per-case function of parameter sweeps: a
registered model (:mod:`fesub.models`) solved at one force and frequency.
"""

from __future__ import annotations

import math

from ..errors import ConvergenceError
from ..models import build

__all__ = ["forced_response_point"]


def forced_response_point(model_name: str, params: dict, force: float, omega: float) -> dict:
    """Periodic forced response of a registered model at one force (N) and frequency (rad/s).

    Pure and picklable (for sweep engines). ``model_name`` is a harmonic-balance model of
    :data:`fesub.models.MODELS`, ``params`` its builder's parameter overrides. Returns a
    JSON-friendly dict: ``converged``, ``Am`` (RMS amplitude at the monitor DOF, m),
    ``harmonic_amplitudes`` (m, k = 1..nh), ``energy_dissipated`` (J per cycle),
    ``stuck_margin`` (per contact, > 0 = slipping), ``Q`` (list, m) and ``message`` on failure
    (then NaN values).
    """
    from .analysis import solve_at
    from .fourier import harmonic_amplitudes

    sy = build(model_name, **dict(params or {}))
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
