"""Closed-form steady state of MDOF chains with one Coulomb contact, and stick-slip time integration.

Extends Den Hartog's exact SDOF solution to chains of N masses with a single Coulomb contact:
against a fixed wall, between two masses, or against a moving base that also drives the chain
(joined base-wall excitation). See :mod:`fesub.coulomb.analytic` for the closed forms,
:mod:`fesub.coulomb.simulate` for the exact-segment event-driven integrator that validates them
and :mod:`fesub.coulomb.results` for the result classes (saved and reopened through
:mod:`fesub.io`).
"""

from .model import ChainModel, Contact
from .analytic import (
    CONTINUOUS, STICK_SLIP, STUCK, REGIME_NAMES, RegimeMap, SteadyState, regime_map, steady_state,
    time_response, den_hartog, u_damping, g_ratio, s_function, contact_s, beta_limit, stuck_response,
    resonance_thresholds, quasi_static, beta_inf, beta_stuck_inf, invariant_points,
    inversion_intervals, modal_sums, ModalSums,
)
from .simulate import (NumericRegimeMap, RegimePoint, SimResult, numeric_regime_map, period_history,
                       regime_map_point, simulate, simulate_scipy)

__all__ = [
    "ChainModel", "Contact", "CONTINUOUS", "STICK_SLIP", "STUCK", "REGIME_NAMES", "SteadyState",
    "steady_state", "RegimeMap", "regime_map", "time_response", "den_hartog", "u_damping",
    "g_ratio", "s_function", "contact_s", "beta_limit", "stuck_response", "resonance_thresholds",
    "quasi_static", "beta_inf", "beta_stuck_inf", "invariant_points", "inversion_intervals",
    "modal_sums", "ModalSums", "SimResult", "simulate", "simulate_scipy", "period_history",
    "regime_map_point", "RegimePoint", "numeric_regime_map", "NumericRegimeMap",
]
