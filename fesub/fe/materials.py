"""Materials and sections: small frozen records validated on construction.

Units: SI throughout (Pa, kg/m^3, m, m^2, m^4).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ModelError, check_positive, check_range

__all__ = ["PlaneStress", "PlaneStrain", "BeamSection", "Solid", "plane_stress_D", "plane_strain_D"]


def plane_stress_D(E: float, nu: float) -> np.ndarray:
    """Plane-stress elasticity matrix (Pa) for Voigt strains (exx, eyy, gxy)."""
    return E / (1.0 - nu * nu) * np.array([[1.0, nu, 0.0], [nu, 1.0, 0.0], [0.0, 0.0, 0.5 * (1.0 - nu)]])


def plane_strain_D(E: float, nu: float) -> np.ndarray:
    """Plane-strain elasticity matrix (Pa) for Voigt strains (exx, eyy, gxy), ezz = 0."""
    c = E / ((1.0 + nu) * (1.0 - 2.0 * nu))
    return c * np.array([[1.0 - nu, nu, 0.0], [nu, 1.0 - nu, 0.0], [0.0, 0.0, 0.5 - nu]])


@dataclass(frozen=True)
class PlaneStress:
    """Isotropic linear-elastic plane-stress material with its out-of-plane thickness.

    Parameters
    ----------
    E : Young's modulus (Pa), > 0
    nu : Poisson's ratio, in (-1, 0.5)
    rho : density (kg/m^3), > 0
    thickness : out-of-plane width (m), > 0
    """

    E: float
    nu: float
    rho: float
    thickness: float = 1.0

    def __post_init__(self):
        check_positive("E (Young's modulus, Pa)", self.E, error=ModelError)
        check_range("nu (Poisson's ratio)", self.nu, -1.0, 0.5, lo_open=True, hi_open=True, error=ModelError)
        check_positive("rho (density, kg/m^3)", self.rho, error=ModelError)
        check_positive("thickness (m)", self.thickness, error=ModelError)

    @property
    def D(self) -> np.ndarray:
        return plane_stress_D(self.E, self.nu)


@dataclass(frozen=True)
class PlaneStrain(PlaneStress):
    """Isotropic linear-elastic plane-strain material (ezz = 0) for a slice of ``thickness``.

    Every plane element (Q4, T3, Q8, Q9, T6) accepts it in place of :class:`PlaneStress`: only
    the elasticity matrix differs. It equals the plane-stress matrix of ``E / (1 - nu^2)`` and
    ``nu / (1 - nu)``; the out-of-plane stress is ``szz = nu (sxx + syy)``.

    Parameters
    ----------
    E : Young's modulus (Pa), > 0
    nu : Poisson's ratio, in (-1, 0.5)
    rho : density (kg/m^3), > 0
    thickness : length of the slice along z (m), > 0; forces and masses are per this length
    """

    @property
    def D(self) -> np.ndarray:
        return plane_strain_D(self.E, self.nu)


@dataclass(frozen=True)
class Solid:
    """Isotropic linear-elastic material of 3D solid elements.

    Parameters
    ----------
    E : float
        Young's modulus (Pa), > 0.
    nu : float
        Poisson's ratio (-), in (-1, 0.5).
    rho : float
        Density (kg/m^3), > 0.
    """

    E: float
    nu: float
    rho: float

    def __post_init__(self):
        check_positive("E (Young's modulus, Pa)", self.E, error=ModelError)
        check_range("nu (Poisson's ratio)", self.nu, -1.0, 0.5, lo_open=True, hi_open=True, error=ModelError)
        check_positive("rho (density, kg/m^3)", self.rho, error=ModelError)

    @property
    def lame(self) -> tuple:
        """Lame's constants (lambda, mu) (Pa)."""
        mu = self.E / (2.0 * (1.0 + self.nu))
        return self.E * self.nu / ((1.0 + self.nu) * (1.0 - 2.0 * self.nu)), mu

    @property
    def D(self) -> np.ndarray:
        """Elasticity matrix (Pa), Voigt order (xx, yy, zz, yz, xz, xy), engineering shear strains."""
        lam, mu = self.lame
        D = np.zeros((6, 6))
        D[:3, :3] = lam
        D[np.arange(3), np.arange(3)] += 2.0 * mu
        D[np.arange(3, 6), np.arange(3, 6)] = mu
        return D


@dataclass(frozen=True)
class BeamSection:
    """Euler-Bernoulli frame section: E (Pa), rho (kg/m^3), area A (m^2), second moment I (m^4).

    Parameters
    ----------
    E : float
        Young's modulus (Pa), > 0.
    rho : float
        Density (kg/m^3), > 0.
    area : float
        Cross-section area A (m^2), > 0.
    inertia : float
        Second moment of area I (m^4) for bending in the plane, > 0.
    """

    E: float
    rho: float
    area: float
    inertia: float

    def __post_init__(self):
        check_positive("E (Young's modulus, Pa)", self.E, error=ModelError)
        check_positive("rho (density, kg/m^3)", self.rho, error=ModelError)
        check_positive("area (m^2)", self.area, error=ModelError)
        check_positive("inertia (m^4)", self.inertia, error=ModelError)

    @classmethod
    def rectangle(cls, E: float, rho: float, width: float, height: float) -> "BeamSection":
        """Solid rectangular section of ``width x height`` (m), bending about the width axis."""
        check_positive("width (m)", width, error=ModelError)
        check_positive("height (m)", height, error=ModelError)
        return cls(E, rho, width * height, width * height**3 / 12.0)
