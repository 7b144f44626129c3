"""Closed-form steady state of MDOF chains with one Coulomb contact, and stick-slip time integration.

Extends Den Hartog's exact SDOF solution to chains of N masses with a single Coulomb contact:
against a fixed wall, between two masses, or against a moving base that also drives the chain
(joined base-wall excitation).

* :mod:`~fesub.coulomb.model` -- the chain (:class:`ChainModel`: mass and stiffness ratios) and
  where its contact sits (:class:`CoulombContact`);
* :mod:`~fesub.coulomb.analytic` -- the closed forms: continuous steady state, regime
  boundaries and maps (:func:`steady_state`, :func:`regime_map`);
* :mod:`~fesub.coulomb.features` -- what the closed forms give without a sweep: resonance
  thresholds, high-frequency limits, invariant points (:func:`invariant_points`);
* :mod:`~fesub.coulomb.integrate` -- the exact-segment event-driven stick-slip integrator that
  validates them (:func:`simulate_chain`) and its ``solve_ivp`` baseline
  (:func:`simulate_chain_scipy`);
* :mod:`~fesub.coulomb.numeric_map` -- regime maps by time integration, point by point or on a
  pool (:func:`regime_map_point`, :func:`numeric_regime_map`);
* :mod:`~fesub.coulomb.results` -- the result classes (saved and reopened through
  :mod:`fesub.io`);
* :mod:`~fesub.coulomb.plots` -- figures; the ``fesub coulomb`` study is :mod:`fesub.cli.coulomb`.
"""

from .analytic import (
    CONTINUOUS, REGIME_NAMES, STICK_SLIP, STUCK, ModalSums, RegimeMap, SteadyState, beta_limit,
    contact_s, den_hartog, g_ratio, modal_sums, regime_map, s_function, steady_state,
    stuck_response, time_response, u_damping,
)
from .features import (beta_inf, beta_stuck_inf, invariant_points, inversion_intervals, quasi_static,
                       resonance_thresholds)
from .integrate import SimResult, period_history, simulate_chain, simulate_chain_scipy
from .model import ChainModel, CoulombContact
from .numeric_map import NumericRegimeMap, RegimePoint, numeric_regime_map, regime_map_point

__all__ = [
    # the chain and its contact
    "ChainModel", "CoulombContact",
    # closed forms
    "CONTINUOUS", "STICK_SLIP", "STUCK", "REGIME_NAMES", "SteadyState", "steady_state",
    "RegimeMap", "regime_map", "time_response", "den_hartog", "u_damping", "g_ratio",
    "s_function", "contact_s", "beta_limit", "stuck_response", "resonance_thresholds",
    "quasi_static", "beta_inf", "beta_stuck_inf", "invariant_points", "inversion_intervals",
    "modal_sums", "ModalSums",
    # time integration and regime maps built from it
    "SimResult", "simulate_chain", "simulate_chain_scipy", "period_history",
    "regime_map_point", "RegimePoint", "numeric_regime_map", "NumericRegimeMap",
]
