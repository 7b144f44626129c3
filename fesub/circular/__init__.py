"""Friction force and drilling torque over a circular contact; disc and ball on a plane.

* :mod:`~fesub.circular.pressure` -- axisymmetric pressure laws (uniform, Hertz, custom);
* :mod:`~fesub.circular.exact` -- closed-form profiles with the safe series near the extremes;
* :mod:`~fesub.circular.quadrature` -- direct quadrature for any pressure (the independent check);
* :mod:`~fesub.circular.models` -- the friction-model interface and its implementations;
* :mod:`~fesub.circular.dynamics` -- reduced slip dynamics, limit directions and bifurcations.
"""

from .exact import exact_profile, hertz_profile, uniform_profile
from .models import (ExactCircularFriction, FrictionModel, FrictionResult, HarmonicFriction,
                     LinearEllipsoidalFriction, PointCoulomb, QuadratureFriction,
                     chebyshev_to_power, harmonic_coefficients, make_model)
from .pressure import CustomPressure, HertzPressure, Pressure, UniformPressure, make_pressure
from .quadrature import quadrature_profile

__all__ = [
    "Pressure", "UniformPressure", "HertzPressure", "CustomPressure", "make_pressure",
    "exact_profile", "uniform_profile", "hertz_profile", "quadrature_profile",
    "FrictionModel", "FrictionResult", "ExactCircularFriction", "QuadratureFriction",
    "LinearEllipsoidalFriction", "HarmonicFriction", "PointCoulomb", "make_model",
    "harmonic_coefficients", "chebyshev_to_power",
]
