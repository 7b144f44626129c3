"""Friction force and drilling torque over a circular contact; disc and ball on a plane.

* :mod:`~fesub.circular.pressure` -- axisymmetric pressure laws (uniform, Hertz, custom);
* :mod:`~fesub.circular.exact` -- closed-form profiles with the safe series near the extremes;
* :mod:`~fesub.circular.quadrature` -- direct quadrature for any pressure (the independent check);
* :mod:`~fesub.circular.friction` -- the friction-model interface and its implementations;
* :mod:`~fesub.circular.harmonic` -- harmonic expansions of the profiles and their power forms;
* :mod:`~fesub.circular.dynamics` -- reduced slip dynamics, limit directions and bifurcations,
  the bound of the stop time from the slip energy;
* :mod:`~fesub.circular.sliding` -- runs to the stop: the motion ends when the slip speed has
  fallen (not when the direction has converged, which at the pitchfork takes algebraically long),
  the direction is converged after it; the horizon is twice the stop-time bound;
* :mod:`~fesub.circular.results` -- the study's results (:class:`fesub.io.Result`, ``.nc`` files);
* :mod:`~fesub.circular.plots` -- figures drawn from the results; the ``fesub circular`` study is
  :mod:`fesub.cli.circular`.

Choices and corrections (relative to the paper, following the derivations):

* complete (not incomplete) elliptic integrals; the second branch of (58)/(60) for ``eps >= 1``;
  the sign of (45); ``sgn(omega)`` in (53)-(54); series (79) with 5/384 and 3/512;
* the cancellation-prone closed forms are replaced by series below ``EPS_SMALL = 0.03`` (uniform)
  and above ``EPS_LARGE = 7`` (both laws) -- switch points measured against the quadrature, which
  is accurate to ~1e-14 (the specification's 1e-3 and 30 leave ~1e-10 errors at the switch);
* the spin-only/slip-only limits ``C(1)``, ``S(0)`` of any pressure law come from first-order
  expansions (``Q_eps'(0) = pi R int p~ dxi / P``, ``eps T_eps -> pi int p~ xi^3 dxi/(R kappa P)``);
* (96) without the spurious kappa factors; (120) with ``1/cos(theta)`` and ``sin``/``cos`` swapped
  back; tangency at ``R* = 0``; non-trivial limit directions are attracting (``r' < 0``);
* ``x_o = 0`` (no slip, no spin) is set-valued: :class:`FrictionResult` flags it and returns zeros;
* the endpoint-preserving harmonic fits (``fit='endpoint'``, ``'endpoint+slope'``) are fesub's own.
"""

from .dynamics import (LimitDirection, ReducedContactSystem, bifurcation_values,
                       find_limit_directions, find_limit_directions_sphere,
                       limit_direction_diagram)
from .exact import exact_profile, hertz_profile, uniform_profile
from .friction import (ExactCircularFriction, FrictionModel, FrictionResult, HarmonicFriction,
                       LinearEllipsoidalFriction, PointCoulomb, QuadratureFriction,
                       make_friction_model)
from .harmonic import chebyshev_to_power, harmonic_coefficients
from .pressure import CustomPressure, HertzPressure, Pressure, UniformPressure, make_pressure
from .quadrature import quadrature_profile
from .results import (BifurcationValues, CircleCurves, DirectionErrorMap, LimitDirectionDiagram,
                      LimitDirections, ProfileCurves, bifurcation_table, circle_curves,
                      direction_error_map, force_free_stop, profile_curves)
from .sliding import Trajectory, simulate_sliding

__all__ = [
    # pressure laws and the closed-form / quadrature profiles
    "Pressure", "UniformPressure", "HertzPressure", "CustomPressure", "make_pressure",
    "exact_profile", "uniform_profile", "hertz_profile", "quadrature_profile",
    # friction models
    "FrictionModel", "FrictionResult", "ExactCircularFriction", "QuadratureFriction",
    "LinearEllipsoidalFriction", "HarmonicFriction", "PointCoulomb", "make_friction_model",
    "harmonic_coefficients", "chebyshev_to_power",
    # disc and ball: limit directions, bifurcation forces, sliding until the stop
    "ReducedContactSystem", "LimitDirection", "find_limit_directions",
    "find_limit_directions_sphere", "bifurcation_values", "limit_direction_diagram",
    "simulate_sliding", "Trajectory",
    # results of the study
    "ProfileCurves", "DirectionErrorMap", "CircleCurves", "BifurcationValues",
    "LimitDirectionDiagram", "LimitDirections", "profile_curves", "direction_error_map",
    "circle_curves", "bifurcation_table", "force_free_stop",
]
