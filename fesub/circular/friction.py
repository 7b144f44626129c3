"""Friction models of a circular contact: resultant force and drilling torque.

Every model maps the slip state at the contact centre, the velocity ``u = (u_x, u_y)`` (m/s) and the
spin ``omega_z`` (rad/s), to the resultant friction force ``(Q_x, Q_y)`` (N) and torque ``T_z`` (N m)
about the normal through the centre. The signs are the dissipative ones: ``Q.u + T_z omega_z <= 0``.

Three parametrisations of the slip direction are supported (Sect. 1.2 of the theory):

* direction vector ``w = x_o/|x_o|`` on the unit sphere, ``x_o = (u_x, u_y, rho omega_z)``
  (:meth:`FrictionModel.Q_of_w`), with the length scale ``rho`` (default ``kappa``);
* angles ``(theta, phi)``, ``w = (cos th cos ph, cos th sin ph, sin th)`` (:meth:`profile_theta`);
* slip-spin ratio ``eps = |u|/(R |omega_z|)`` (:meth:`profile_eps`). ``eps`` uses ``R``, not ``rho``.

Axisymmetric models are fully described by two even functions of ``w3``,
``C(w3) = Q_w(w3)/sqrt(1 - w3^2)`` and ``S(w3) = T_w(w3)/w3``:
``Q_x = -mu P w1 C(w3)``, ``Q_y = -mu P w2 C(w3)``, ``T_z = -mu P kappa w3 S(w3)`` (eqs. 86-88).

Zero slip together with zero spin (``x_o = 0``) is the set-valued (stick) case: the friction can be
any point of the convex set bounded by the limit surface. :meth:`FrictionModel.force_torque` returns
zero there and flags the entries in :attr:`FrictionResult.set_valued`; it never returns NaN.
"""

from __future__ import annotations

import contextlib
import math
from typing import NamedTuple

import numpy as np

from ..errors import ModelError, ParameterError, check_positive
from .exact import EPS_LARGE, EPS_SMALL, check_eps, eps_as_ab, law_code, profile_ab
from .harmonic import chebyshev_to_power, harmonic_coefficients
from .pressure import Pressure, make_pressure
from .quadrature import quadrature_profile

__all__ = ["FrictionResult", "FrictionModel", "ExactCircularFriction", "QuadratureFriction",
           "LinearEllipsoidalFriction", "HarmonicFriction", "PointCoulomb", "make_friction_model",
           "harmonic_coefficients", "chebyshev_to_power"]


class FrictionResult(NamedTuple):
    """Resultant friction.

    Parameters
    ----------
    Qx, Qy : ndarray
        Friction force components (N).
    Tz : ndarray
        Drilling torque about the contact normal through the centre (N m).
    set_valued : ndarray of bool
        True where slip and spin are both zero: the friction is then set-valued (any point inside
        the limit surface, fixed by the rest of the dynamics) and ``Qx = Qy = Tz = 0`` is returned as
        a placeholder, never NaN.
    """

    Qx: np.ndarray
    Qy: np.ndarray
    Tz: np.ndarray
    set_valued: np.ndarray


def _as_float_array(name, x):
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be a real array, got {x!r}") from None
    if not np.all(np.isfinite(a)):
        raise ParameterError(f"{name} must be finite (no NaN or inf)")
    return a


class FrictionModel:
    """Common interface of all circular-contact friction models (vectorised).

    Parameters
    ----------
    pressure : Pressure or str or callable
        Pressure law (``'uniform'``, ``'hertz'``, a callable shape ``f(z)`` or a :class:`Pressure`).
    mu : float
        Coulomb friction coefficient (-), > 0.
    rho : float, optional
        Length scale (m) of the direction vector ``w``; default ``kappa`` (the paper's choice).
    R, P : float
        Contact radius (m) and normal load (N) when ``pressure`` is given by name or shape.
    """

    #: 'eps' when the model is defined by its profiles, 'w' when by C(w3), S(w3)
    natural = "eps"
    name = "abstract"

    def __init__(self, pressure="uniform", mu: float = 1.0, rho: float | None = None,
                 R: float = 1.0, P: float = 1.0):
        self.pressure: Pressure = make_pressure(pressure, R, P)
        self.mu = check_positive("mu (friction coefficient)", mu)
        self.R = self.pressure.R
        self.P = self.pressure.P
        self.kappa = self.pressure.kappa
        self.rho = self.kappa if rho is None else check_positive("rho (length scale)", rho)

    # ------------------------------------------------------------------ to be provided
    def _profile_ab(self, a, b):
        """(Q_eps, T_eps) at eps = a/b (a, b >= 0 arrays of equal shape, not both 0)."""
        eps = np.where(b > 0, a / np.where(b > 0, b, 1.0), np.inf)
        return self._profile_eps_raw(eps)

    def _profile_eps_raw(self, eps):
        raise NotImplementedError

    def _CS_raw(self, w3):
        """(C, S) at |w3| in [0, 1]."""
        raise NotImplementedError

    # ------------------------------------------------------------------ derived API
    @property
    def C0(self) -> float:
        """``C(0)``: force at pure slip over mu P (1 for the exact models)."""
        return float(self.CS(0.0)[0])

    def profile_eps(self, eps):
        """Force and torque profiles ``(Q_eps, T_eps)`` at slip-spin ratios ``eps`` in [0, inf].

        ``|Q_xy| = mu P Q_eps`` and ``|T_z| = mu P kappa T_eps`` (both >= 0).
        """
        e = check_eps(eps)
        shape = e.shape
        e = np.atleast_1d(e).ravel()
        if self.natural == "eps":
            Q, T = self._profile_ab(*eps_as_ab(e))
        else:
            # |w3| = 1/sqrt(1 + (eps R/rho)^2), w12 = (eps R/rho) |w3|
            g = e * self.R / self.rho
            fin = np.isfinite(g)
            gf = np.where(fin, g, 0.0)
            w3 = np.where(fin, 1.0 / np.sqrt(1.0 + gf * gf), 0.0)
            w12 = np.where(fin, gf * w3, 1.0)
            C, S = self._CS_raw(w3)
            Q, T = w12 * C, w3 * S
        return Q.reshape(shape), T.reshape(shape)

    def CS(self, w3):
        """The even functions ``C(w3) = Q_w/sqrt(1-w3^2)`` and ``S(w3) = T_w/w3``.

        Parameters
        ----------
        w3 : array_like
            Third component of the unit direction vector, in [-1, 1].
        """
        w = np.asarray(w3, dtype=float)
        if np.any(np.isnan(w)) or np.any(np.abs(w) > 1.0 + 1e-12):
            raise ParameterError("w3 must lie in [-1, 1]")
        shape = w.shape
        a3 = np.minimum(np.abs(np.atleast_1d(w).ravel()), 1.0)
        if self.natural == "w":
            C, S = self._CS_raw(a3)
        else:
            w12 = np.sqrt((1.0 - a3) * (1.0 + a3))
            a = (self.rho / self.R) * w12
            a_ = np.where((a == 0) & (a3 == 0), 1.0, a)
            Q, T = self._profile_ab(a_, a3)
            with np.errstate(divide="ignore", invalid="ignore"):
                C = np.where(w12 > 0, Q / np.where(w12 > 0, w12, 1.0),
                             (self.rho / self.R) * self.pressure.slope0)
                S = np.where(a3 > 0, T / np.where(a3 > 0, a3, 1.0),
                             (self.R / self.rho) * self._tail())
        return C.reshape(shape), S.reshape(shape)

    def CS_scalar(self, w3: float) -> tuple:
        """``(C, S)`` at one ``w3`` (a float in [-1, 1], not checked; see :meth:`CS`) as floats:
        the hot path of the slip dynamics, which asks for one direction at a time."""
        C, S = self.CS(w3)
        return float(C), float(S)

    @contextlib.contextmanager
    def pinned_kernels(self):
        """Within the block, :meth:`CS_scalar` uses the kernel module chosen on entry.

        :func:`fesub._backend.kernels` looks the module up on every call, which costs far more
        than one evaluation; a run of one-direction evaluations pins it instead."""
        yield

    def _tail(self) -> float:
        return self.pressure.tail

    def profile_theta(self, theta):
        """``(Q(theta), T(theta))`` on the meridian ``phi = 0``, extended to [-pi, pi) by (80)-(81).

        ``Q_x = -mu P Q(theta)``, ``T_z = -mu P kappa T(theta)`` at ``w = (cos th, 0, sin th)``.
        """
        th = _as_float_array("theta", theta)
        c, s = np.cos(th), np.sin(th)
        C, S = self.CS(np.clip(s, -1.0, 1.0))
        return c * C, s * S

    def force_torque(self, v, omega) -> FrictionResult:
        """Resultant friction for slip velocities ``v`` and spins ``omega``.

        Parameters
        ----------
        v : array_like, shape (..., 2)
            Slip velocity ``u`` of the body point at the contact centre (m/s).
        omega : array_like, shape (...)
            Spin ``omega_z`` (rad/s); broadcast against ``v[..., 0]``.

        Returns
        -------
        FrictionResult
            ``Qx, Qy`` (N), ``Tz`` (N m) and the ``set_valued`` mask (``u = 0`` and ``omega = 0``).
        """
        v = _as_float_array("v (slip velocity)", v)
        om = _as_float_array("omega (spin)", omega)
        if v.ndim == 0 or v.shape[-1] != 2:
            raise ParameterError(f"v (slip velocity) must have shape (..., 2), got {v.shape}")
        try:
            ux, uy, om = np.broadcast_arrays(v[..., 0], v[..., 1], om)
        except ValueError:
            raise ParameterError(f"omega of shape {om.shape} does not broadcast against v of "
                                 f"shape {v.shape}") from None
        return self._force_torque(ux, uy, om)

    def _force_torque(self, ux, uy, om):
        shape = ux.shape
        ux = ux.ravel()
        uy = uy.ravel()
        om = om.ravel()
        speed = np.hypot(ux, uy)
        sv = (speed == 0) & (om == 0)
        mp = self.mu * self.P
        if self.natural == "eps":
            spin = self.R * np.abs(om)
            Q, T = self._profile_ab(np.where(sv, 1.0, speed), spin)
            f = np.where(speed > 0, Q / np.where(speed > 0, speed, 1.0), 0.0)
            Qx = -mp * f * ux
            Qy = -mp * f * uy
            Tz = -mp * self.kappa * np.sign(om) * T
        else:
            x3 = self.rho * om
            r = np.hypot(speed, x3)          # no underflow for tiny slip states
            r_ = np.where(sv, 1.0, r)
            w3 = x3 / r_
            C, S = self._CS_raw(np.minimum(np.abs(w3), 1.0))
            Qx = -mp * C * ux / r_
            Qy = -mp * C * uy / r_
            Tz = -mp * self.kappa * S * w3
        Qx[sv] = 0.0
        Qy[sv] = 0.0
        Tz[sv] = 0.0
        return FrictionResult(Qx.reshape(shape), Qy.reshape(shape), Tz.reshape(shape),
                              sv.reshape(shape))

    def Q_of_w(self, w):
        """Generalised friction ``(Q_x, Q_y, T_z/rho)`` (N) for directions ``w`` of shape (..., 3).

        ``w`` need not be normalised (the friction is positively homogeneous of degree 0, Prop. 1);
        ``w = 0`` is the set-valued case and gives zeros (see :meth:`force_torque`).
        """
        w = _as_float_array("w (slip direction)", w)
        if w.ndim == 0 or w.shape[-1] != 3:
            raise ParameterError(f"w must have shape (..., 3), got {w.shape}")
        res = self._force_torque(w[..., 0], w[..., 1], w[..., 2] / self.rho)
        return np.stack([res.Qx, res.Qy, res.Tz / self.rho], axis=-1)

    def Q_of_angles(self, theta, phi):
        """``(Q_x, Q_y, T_z)`` (N, N, N m) from the angles of the direction vector (eq. 32)."""
        th = _as_float_array("theta", theta)
        ph = _as_float_array("phi", phi)
        th, ph = np.broadcast_arrays(th, ph)
        Qt, Tt = self.profile_theta(th)
        mp = self.mu * self.P
        return -mp * np.cos(ph) * Qt, -mp * np.sin(ph) * Qt, -mp * self.kappa * Tt

    def describe(self) -> dict:
        """JSON-friendly description of the model."""
        return {"model": self.name, "pressure": self.pressure.name, "mu": self.mu, "R": self.R,
                "P": self.P, "kappa": self.kappa, "rho": self.rho}

    def __repr__(self) -> str:
        d = self.describe()
        return f"{type(self).__name__}(" + ", ".join(f"{k}={v!r}" for k, v in d.items()) + ")"


class ExactCircularFriction(FrictionModel):
    """Exact closed forms for uniform (59-60) and Hertz (62-63) pressure, with safe series.

    Evaluated by the compiled kernel ``fesub._core.circular`` (one pass per element, elliptic
    integrals by the arithmetic-geometric mean) or by its NumPy twin (SciPy's elliptic integrals);
    see :mod:`fesub._backend`.

    The pressure must be ``'uniform'`` or ``'hertz'`` (use :class:`QuadratureFriction` for any
    other law); the parameters are those of :class:`FrictionModel`.

    Parameters
    ----------
    pressure : Pressure or str or callable
        Pressure law (see :class:`FrictionModel`).
    mu : float
        Coulomb friction coefficient (-), > 0.
    rho : float, optional
        Length scale (m) of the direction vector ``w``; default ``kappa``.
    R, P : float
        Contact radius (m) and normal load (N) when ``pressure`` is given by name or shape.
    """

    name = "exact"

    def __init__(self, pressure="uniform", mu=1.0, rho=None, R=1.0, P=1.0):
        super().__init__(pressure, mu, rho, R, P)
        if self.pressure.name not in ("uniform", "hertz"):
            raise ParameterError("ExactCircularFriction needs pressure 'uniform' or 'hertz'; "
                                 f"got {self.pressure.name!r} (use QuadratureFriction)")
        self._law = self.pressure.name
        self._code = law_code(self._law)
        self._pinned = None       # kernel module pinned by pinned_kernels()

    def _profile_ab(self, a, b):
        return profile_ab(self._law, a, b)

    def CS_scalar(self, w3: float) -> tuple:
        """``(C, S)`` at one ``w3``: the kernel on one element, the same numbers as :meth:`CS`."""
        from .. import _backend

        a3 = min(abs(w3), 1.0)
        w12 = math.sqrt((1.0 - a3) * (1.0 + a3))
        if w12 == 0.0 or a3 == 0.0:          # the ends: limits, from the general path
            return super().CS_scalar(a3)
        Q, T = np.empty(1), np.empty(1)
        kern = self._pinned if self._pinned is not None else _backend.kernels("circular")
        kern.profile_ab(self._code, np.array([(self.rho / self.R) * w12]), np.array([a3]),
                        EPS_SMALL, EPS_LARGE, Q, T)
        return float(Q[0]) / w12, float(T[0]) / a3

    @contextlib.contextmanager
    def pinned_kernels(self):
        from .. import _backend

        outer, self._pinned = self._pinned, _backend.kernels("circular")
        try:
            yield
        finally:
            self._pinned = outer

    def _force_torque(self, ux, uy, om):
        from .. import _backend

        shape = ux.shape
        ux = np.ascontiguousarray(ux, dtype=float).ravel()
        uy = np.ascontiguousarray(uy, dtype=float).ravel()
        om = np.ascontiguousarray(om, dtype=float).ravel()
        n = ux.size
        Qx, Qy, Tz = np.empty(n), np.empty(n), np.empty(n)
        sv = np.empty(n, dtype=np.uint8)
        _backend.kernels("circular").force_torque(
            self._code, ux, uy, om, self.R, self.mu * self.P, self.kappa, EPS_SMALL,
            EPS_LARGE, Qx, Qy, Tz, sv)
        return FrictionResult(Qx.reshape(shape), Qy.reshape(shape), Tz.reshape(shape),
                              sv.view(bool).reshape(shape))


class QuadratureFriction(FrictionModel):
    """Direct quadrature over the contact for any axisymmetric pressure (the reference model).

    Extra keyword arguments go to :func:`fesub.circular.quadrature.quadrature_profile` (node
    counts). Accurate to ~1e-14 relative for smooth pressure laws; ~1 ms per slip direction.

    Parameters
    ----------
    pressure : Pressure or str or callable
        Pressure law (see :class:`FrictionModel`).
    mu : float
        Coulomb friction coefficient (-), > 0.
    rho : float, optional
        Length scale (m) of the direction vector ``w``; default ``kappa``.
    R, P : float
        Contact radius (m) and normal load (N) when ``pressure`` is given by name or shape.
    **quad_options
        Node counts of :func:`fesub.circular.quadrature.quadrature_profile`.
    """

    name = "quadrature"

    def __init__(self, pressure="uniform", mu=1.0, rho=None, R=1.0, P=1.0, **quad_options):
        super().__init__(pressure, mu, rho, R, P)
        self._opts = quad_options

    def _profile_eps_raw(self, eps):
        return quadrature_profile(self.pressure, eps, **self._opts)

    def _tail(self) -> float:
        from .quadrature import quadrature_tail

        return quadrature_tail(self.pressure)


class LinearEllipsoidalFriction(FrictionModel):
    """Linear-ellipsoidal model ``Q(w) = Pi_hat w`` (Sect. 5, eqs. 64-72).

    Parameters
    ----------
    pressure, mu, rho, R, P
        As in :class:`FrictionModel`. ``rho`` selects the scaling: ``kappa`` (default, the paper's
        preference, ``Pi = I``) or ``R``.
    Pi_hat : (3, 3) array_like, optional
        General matrix (N) mapping ``w`` to ``(Q_x, Q_y, T_z/rho)``; default the axisymmetric
        ``diag(-mu P, -mu P, -mu P kappa/rho)`` (67). Use :meth:`from_fit` to fit it to any model.
    """

    natural = "w"
    name = "linear"

    def __init__(self, pressure="uniform", mu=1.0, rho=None, R=1.0, P=1.0, Pi_hat=None):
        super().__init__(pressure, mu, rho, R, P)
        mp = self.mu * self.P
        diag = np.diag([-mp, -mp, -mp * self.kappa / self.rho])
        if Pi_hat is None:
            self.Pi_hat = diag
        else:
            Pi = _as_float_array("Pi_hat", Pi_hat)
            if Pi.shape != (3, 3):
                raise ParameterError(f"Pi_hat must be a 3x3 matrix, got shape {Pi.shape}")
            self.Pi_hat = Pi
        self.axisymmetric = bool(np.allclose(self.Pi_hat, diag, rtol=1e-12, atol=0.0))

    @classmethod
    def from_fit(cls, model: FrictionModel, rho: float | None = None):
        """Fit ``Pi_hat = [Q(w_i) Q(w_ii) Q(w_iii)]`` on the three unit directions (eq. 66)."""
        rho = model.rho if rho is None else check_positive("rho (length scale)", rho)
        cols = model.Q_of_w(np.eye(3))     # rows: Q(w_i), Q(w_ii), Q(w_iii) with T_z/model.rho
        cols[:, 2] *= model.rho / rho      # the unit directions are the same for any rho
        return cls(model.pressure, model.mu, rho, Pi_hat=cols.T)

    def _CS_raw(self, w3):
        if not self.axisymmetric:
            raise ModelError("C(w3), S(w3) exist only for the axisymmetric Pi_hat")
        return np.ones_like(w3), np.ones_like(w3)

    def CS_scalar(self, w3: float) -> tuple:
        if not self.axisymmetric:
            return super().CS_scalar(w3)        # raises the error of CS
        return 1.0, 1.0

    def _force_torque(self, ux, uy, om):
        if self.axisymmetric:
            return super()._force_torque(ux, uy, om)
        shape = ux.shape
        x = np.stack([ux.ravel(), uy.ravel(), self.rho * om.ravel()], axis=-1)
        r = np.linalg.norm(x, axis=-1)
        sv = r == 0
        w = x / np.where(sv, 1.0, r)[:, None]
        Q = w @ self.Pi_hat.T
        Q[sv] = 0.0
        return FrictionResult(Q[:, 0].reshape(shape), Q[:, 1].reshape(shape),
                              (self.rho * Q[:, 2]).reshape(shape), sv.reshape(shape))

    def describe(self) -> dict:
        d = super().describe()
        d["Pi_hat"] = self.Pi_hat.tolist()
        return d


class PointCoulomb(LinearEllipsoidalFriction):
    """Point Coulomb friction, the ``R -> 0`` limit of the linear model (eq. 75): ``T_z = 0``.

    Parameters
    ----------
    pressure : Pressure or str or callable
        Pressure law (see :class:`FrictionModel`).
    mu : float
        Coulomb friction coefficient (-), > 0.
    rho : float, optional
        Length scale (m) of the direction vector ``w``; default ``kappa``.
    R, P : float
        Contact radius (m) and normal load (N) when ``pressure`` is given by name or shape.
    """

    name = "point"

    def __init__(self, pressure="uniform", mu=1.0, rho=None, R=1.0, P=1.0):
        super().__init__(pressure, mu, rho, R, P)
        self.Pi_hat = np.diag([-self.mu * self.P, -self.mu * self.P, 0.0])
        self.axisymmetric = False

    def CS(self, w3):
        raise ModelError("point Coulomb friction has no drilling torque; C, S are not defined")


# ----------------------------------------------------------------------------- harmonic models
class HarmonicFriction(FrictionModel):
    """Harmonic-expansion model of order ``N`` (Sect. 6, eqs. 82-88), coefficients computed.

    Parameters
    ----------
    pressure, mu, rho, R, P
        As in :class:`FrictionModel`.
    N : int
        Number of odd harmonics (N = 1 is the 'linear model from harmonic expansion').
    fit : {'fourier', 'endpoint', 'endpoint+slope'}
        See :func:`harmonic_coefficients`.
    source : FrictionModel, optional
        Model to expand; default the exact closed forms (uniform/Hertz) or the quadrature model.

    Attributes
    ----------
    c, s : ndarray
        Harmonic coefficients ``c_i``, ``s_i``.
    C, S : ndarray
        Power coefficients of ``C(w3)``, ``S(w3)`` in ``w3^(2k-2)``.
    """

    natural = "w"
    name = "harmonic"

    def __init__(self, pressure="uniform", mu=1.0, rho=None, R=1.0, P=1.0, N: int = 2,
                 fit: str = "fourier", source: FrictionModel | None = None):
        super().__init__(pressure, mu, rho, R, P)
        if source is None:
            if self.pressure.name in ("uniform", "hertz"):
                source = ExactCircularFriction(self.pressure, self.mu, self.rho)
            else:
                source = QuadratureFriction(self.pressure, self.mu, self.rho)
        elif abs(source.rho - self.rho) > 1e-14 * self.rho:
            source = type(source)(source.pressure, source.mu, self.rho)
        self.N = N
        self.fit = fit
        self.c, self.s = harmonic_coefficients(source, N, fit)
        self.C, self.S = chebyshev_to_power(self.c, self.s)
        self._C_list, self._S_list = self.C.tolist(), self.S.tolist()

    def _CS_raw(self, w3):
        y = w3 * w3
        return np.polynomial.polynomial.polyval(y, self.C), \
            np.polynomial.polynomial.polyval(y, self.S)

    def CS_scalar(self, w3: float) -> tuple:
        """``(C, S)`` at one ``w3`` by Horner's rule in floats (the order of ``polyval``)."""
        a3 = min(abs(w3), 1.0)
        y = a3 * a3
        out = []
        for coef in (self._C_list, self._S_list):
            acc = coef[-1]
            for c in coef[-2::-1]:
                acc = c + acc * y
            out.append(acc)
        return out[0], out[1]

    def dCS(self, w3):
        """Derivatives ``(C'(w3), S'(w3))`` of the polynomial forms."""
        from numpy.polynomial import polynomial as Po

        w3 = np.asarray(w3, float)
        y = w3 * w3
        dC = Po.polyval(y, Po.polyder(self.C)) * 2.0 * w3 if self.C.size > 1 else 0.0 * w3
        dS = Po.polyval(y, Po.polyder(self.S)) * 2.0 * w3 if self.S.size > 1 else 0.0 * w3
        return dC, dS

    def describe(self) -> dict:
        d = super().describe()
        d.update(N=self.N, fit=self.fit, c=self.c.tolist(), s=self.s.tolist(),
                 C=self.C.tolist(), S=self.S.tolist())
        return d


_FRICTION_MODELS = {"exact": ExactCircularFriction, "quadrature": QuadratureFriction,
           "linear": LinearEllipsoidalFriction, "harmonic": HarmonicFriction,
           "point": PointCoulomb}


def make_friction_model(kind: str, pressure="uniform", **kwargs) -> FrictionModel:
    """Build a model by name: 'exact', 'quadrature', 'linear', 'harmonic', 'point'.

    Parameters
    ----------
    kind : str
        ``'exact'``, ``'quadrature'``, ``'linear'``, ``'harmonic'`` or ``'point'``.
    pressure : Pressure or str or callable
        Pressure law (see :class:`FrictionModel`).
    **kwargs
        Further parameters of the model class: ``mu`` (-), ``rho`` (m), ``R`` (m), ``P`` (N), ...

    Returns
    -------
    FrictionModel
    """
    if kind not in _FRICTION_MODELS:
        raise ParameterError(f"model must be one of {sorted(_FRICTION_MODELS)}, got {kind!r}")
    return _FRICTION_MODELS[kind](pressure, **kwargs)
