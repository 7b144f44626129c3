"""Axisymmetric normal pressure laws over a circular contact of radius ``R``.

A pressure law is ``p(x, y) = p~(xi)`` with ``xi = sqrt(x**2 + y**2) <= R``, scaled so that
``P = 2 pi int_0^R p~(xi) xi dxi`` (the resultant normal force). Every law exposes

* ``p(xi)`` -- the pressure (Pa, or force per unit area in consistent units), vectorised;
* ``p_z(z)`` -- the same as a function of ``z = 1 - xi**2/R**2`` in [0, 1]; the quadrature of
  :mod:`fesub.circular.quadrature` evaluates ``z`` as a product of two small factors near the rim,
  so a law written in ``z`` (e.g. Hertz, ``sqrt(z)``) keeps full accuracy there;
* ``kappa`` -- the torque radius ``kappa = (2 pi / P) int_0^R p~(xi) xi**2 dxi`` (m), eq. (39);
* ``slope0`` -- ``dQ_eps/d eps`` at ``eps = 0`` (pure spin), ``= pi R int_0^R p~ dxi / P``;
* ``tail`` -- ``lim eps T_eps(eps)`` for ``eps -> inf`` (pure slip),
  ``= pi int_0^R p~ xi**3 dxi / (R kappa P)``.

The two limits follow from a first-order expansion of the unit slip direction about pure spin and
about pure translation; they are evaluated by adaptive quadrature for custom laws and are checked
against the closed forms of the uniform and Hertz laws in the tests.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod

import numpy as np

from ..errors import ParameterError, check_positive

__all__ = ["Pressure", "UniformPressure", "HertzPressure", "CustomPressure", "make_pressure",
           "PRESSURE_LAWS"]


class Pressure(ABC):
    """Axisymmetric pressure over a disc.

    Parameters
    ----------
    R : float
        Contact radius (m), > 0.
    P : float
        Resultant normal force (N), > 0.
    """

    name = "abstract"

    def __init__(self, R: float = 1.0, P: float = 1.0):
        self.R = check_positive("R (contact radius)", R)
        self.P = check_positive("P (normal load)", P)

    # --- the law ------------------------------------------------------------------------------
    @abstractmethod
    def p_z(self, z):
        """Pressure as a function of ``z = 1 - xi**2/R**2`` (``z`` in [0, 1])."""

    def p(self, xi):
        """Pressure (N/m^2) at radius ``xi`` (m); zero outside the disc."""
        xi = np.asarray(xi, dtype=float)
        z = 1.0 - (xi / self.R) ** 2
        inside = z >= 0
        return np.where(inside, self.p_z(np.where(inside, z, 0.0)), 0.0)

    # --- derived constants (numeric; subclasses with closed forms override) ---------------------
    def _moment(self, k: int) -> float:
        """``int_0^R p~(xi) xi^k dxi`` by adaptive quadrature (cached per law)."""
        from scipy.integrate import quad

        cache = self.__dict__.setdefault("_moments", {})
        if k not in cache:
            cache[k], _ = quad(lambda xi: float(self.p(xi)) * xi ** k, 0.0, self.R, limit=200,
                               epsabs=0.0, epsrel=1e-13)
        return cache[k]

    @property
    def kappa(self) -> float:
        """Torque radius kappa (m), eq. (39); 0 < kappa < R."""
        return 2.0 * math.pi * self._moment(2) / self.P

    @property
    def slope0(self) -> float:
        """``Q_eps'(0)`` (dimensionless): slope of the force profile at pure spin."""
        return math.pi * self.R * self._moment(0) / self.P

    @property
    def tail(self) -> float:
        """``lim_{eps->inf} eps T_eps(eps)`` (dimensionless)."""
        return math.pi * self._moment(3) / (self.R * self.kappa * self.P)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(R={self.R!r}, P={self.P!r})"


class UniformPressure(Pressure):
    """Uniform pressure ``p~ = P/(pi R^2)`` (eq. 56), ``kappa = 2R/3`` (eq. 76).

    Parameters
    ----------
    R : float
        Contact radius (m), > 0.
    P : float
        Normal load (N), > 0.
    """

    name = "uniform"

    def p_z(self, z):
        z = np.asarray(z, dtype=float)
        return np.full_like(z, self.P / (math.pi * self.R ** 2))

    @property
    def kappa(self) -> float:
        return 2.0 * self.R / 3.0

    @property
    def slope0(self) -> float:
        return 1.0

    @property
    def tail(self) -> float:
        return 3.0 / 8.0


class HertzPressure(Pressure):
    """Hertz (parabolic) pressure ``p~ = 3P/(2 pi R^2) sqrt(1 - xi^2/R^2)`` (eq. 61).

    ``kappa = 3 pi R / 16`` (eq. 77).

    Parameters
    ----------
    R : float
        Contact radius (m), > 0.
    P : float
        Normal load (N), > 0.
    """

    name = "hertz"

    def p_z(self, z):
        z = np.asarray(z, dtype=float)
        return 1.5 * self.P / (math.pi * self.R ** 2) * np.sqrt(np.maximum(z, 0.0))

    @property
    def kappa(self) -> float:
        return 3.0 * math.pi * self.R / 16.0

    @property
    def slope0(self) -> float:
        return 3.0 * math.pi / 8.0

    @property
    def tail(self) -> float:
        return 16.0 / (15.0 * math.pi)


class CustomPressure(Pressure):
    """Any axisymmetric law given by its shape; it is rescaled to the resultant ``P``.

    Parameters
    ----------
    shape : callable
        ``shape(z)`` with ``z = 1 - xi**2/R**2`` in [0, 1], vectorised, finite and >= 0, not
        identically zero (only the shape matters: the law is normalised to ``P``).
    R, P : float
        Contact radius (m) and resultant normal force (N).
    """

    name = "custom"

    def __init__(self, shape, R: float = 1.0, P: float = 1.0):
        super().__init__(R, P)
        if not callable(shape):
            raise ParameterError(f"pressure shape must be a callable of z = 1 - xi^2/R^2, "
                                 f"got {shape!r}")
        self._shape = shape
        probe = np.asarray(shape(np.linspace(0.0, 1.0, 33)), dtype=float)
        if probe.shape != (33,) or not np.all(np.isfinite(probe)) or np.any(probe < 0):
            raise ParameterError("pressure shape(z) must return finite values >= 0 of the same "
                                 "shape as z for z in [0, 1]")
        self._scale = 1.0
        total = 2.0 * math.pi * self._moment(1)
        if not total > 0:
            raise ParameterError("pressure shape integrates to zero over the disc")
        self._scale = self.P / total
        self.__dict__.pop("_moments", None)     # moments of the unscaled shape

    def p_z(self, z):
        return self._scale * np.asarray(self._shape(np.asarray(z, dtype=float)), dtype=float)


PRESSURE_LAWS = {"uniform": UniformPressure, "hertz": HertzPressure, "parabolic": HertzPressure}


def make_pressure(law, R: float = 1.0, P: float = 1.0) -> Pressure:
    """Return a :class:`Pressure` from a name (``'uniform'``, ``'hertz'``/``'parabolic'``), a
    callable shape ``f(z)`` or an existing :class:`Pressure` (returned unchanged).

    Parameters
    ----------
    law : str, callable or Pressure
        Law name, shape ``f(z)`` of the dimensionless radius, or a Pressure.
    R : float
        Contact radius (m), used with a name or a shape.
    P : float
        Normal load (N), used with a name or a shape.

    Returns
    -------
    Pressure
    """
    if isinstance(law, Pressure):
        return law
    if callable(law):
        return CustomPressure(law, R, P)
    if isinstance(law, str) and law.lower() in PRESSURE_LAWS:
        return PRESSURE_LAWS[law.lower()](R, P)
    raise ParameterError(f"pressure law must be one of {sorted(PRESSURE_LAWS)}, a callable shape "
                         f"f(z) or a Pressure instance, got {law!r}")
