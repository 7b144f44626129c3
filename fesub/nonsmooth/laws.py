"""Free-play restoring-force laws: the exact piecewise law and its sigmoid smoothings.

Non-dimensional units throughout (see :mod:`fesub.nonsmooth.system`): displacement ``x`` in units of
the reference length, force in units of ``m l_r Omega_r^2``.

Exact law (paper Eq. 1 / Eq. 9)::

    Fp(x) = kp (x - a)   x >  a      (region +1)
          = 0            |x| <= a    (region 0)
          = kp (x + a)   x < -a      (region -1)
          = kp (x+a)/2 (1 - sign(x+a)) + kp (x-a)/2 (1 + sign(x-a))

It is continuous and Lipschitz (constant ``kp``): the vector field is piecewise-smooth continuous,
so the saltation matrix at a switch is the identity.

Smoothed law: ``sign`` in Eq. 9 is replaced by a smooth sigmoid ``s(y)``::

    Fps(x) = kp (x+a)/2 (1 - s(x+a)) + kp (x-a)/2 (1 + s(x-a))

With the logistic sigmoid ``s(y) = 2/(1 + exp(-delta y)) - 1 = tanh(delta y / 2)`` this is the
paper's Eq. 8, ``Fps = kp [z1 expit(-delta z1) - z2 expit(-delta z2)]``, ``z1 = a + x``,
``z2 = a - x``.

Erratum followed: the paper's Eq. 7 prints ``2/(1 - exp(-x delta)) - 1``, which is singular at
``x = 0``; the intended (and implemented) form has ``1 + exp``. :func:`check_sigmoid` rejects the
printed form as non-admissible.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy import integrate, optimize, special

from ..errors import ParameterError, check_positive

__all__ = [
    "FreePlay",
    "SigmoidFreePlay",
    "SIGMOIDS",
    "check_sigmoid",
    "radius_of_influence",
    "radius_of_influence_closed_form",
    "delta_for_radius",
    "influence_constant",
    "spurious_force_peak",
    "vector_field_error",
]

#: root of exp(u) (u - 1) = 1: depth (times 1/delta) of the peak spurious in-gap force
_U_PEAK = float(optimize.brentq(lambda u: math.exp(u) * (u - 1.0) - 1.0, 1.0, 2.0, xtol=1e-15))


def _check_gap(kp, a):
    kp = check_positive("kp (free-play contact stiffness)", kp)
    a = check_positive("a (half-gap)", a)
    return kp, a


@dataclass(frozen=True)
class FreePlay:
    """Exact symmetric free-play law, paper Eq. 1.

    Parameters
    ----------
    kp : float
        Contact stiffness (non-dimensional), > 0.
    a : float
        Half-gap (non-dimensional length), > 0.
    """

    kp: float
    a: float
    continuity = "C0-Lipschitz"
    smooth = False

    def __post_init__(self):
        kp, a = _check_gap(self.kp, self.a)
        object.__setattr__(self, "kp", kp)
        object.__setattr__(self, "a", a)

    @property
    def boundaries(self) -> tuple:
        """Switching surfaces x = -a, +a."""
        return (-self.a, self.a)

    @property
    def lipschitz(self) -> float:
        """Lipschitz constant of the law (= kp)."""
        return self.kp

    def region(self, x):
        """Region index: -1 (x < -a), 0 (|x| <= a), +1 (x > a)."""
        x = np.asarray(x, dtype=float)
        return np.where(x > self.a, 1, np.where(x < -self.a, -1, 0))

    def force(self, x, region=None):
        """Restoring force Fp(x). ``region`` forces a region's polynomial (extended past its border)."""
        x = np.asarray(x, dtype=float)
        s = self.region(x) if region is None else np.asarray(region)
        return self.kp * (x - s * self.a) * (s != 0)

    def stiffness(self, x, region=None):
        """dFp/dx: 0 in the gap, kp in contact (one-sided value given by ``region``)."""
        x = np.asarray(x, dtype=float)
        s = self.region(x) if region is None else np.asarray(region)
        return self.kp * (s != 0) * np.ones_like(x)

    def jumps(self) -> np.ndarray:
        """Jump of the force at each boundary (zero for a C0 law)."""
        out = []
        for b, (sl, sr) in zip(self.boundaries, ((-1, 0), (0, 1))):
            out.append(float(self.force(b, region=sr) - self.force(b, region=sl)))
        return np.array(out)


# ---------------------------------------------------------------- sigmoids (smooth sign) --------

def _logistic(y, delta):
    return np.tanh(0.5 * delta * y)


def _dlogistic(y, delta):
    t = np.tanh(0.5 * delta * y)
    return 0.5 * delta * (1.0 - t * t)


def _tanh(y, delta):
    return np.tanh(delta * y)


def _dtanh(y, delta):
    t = np.tanh(delta * y)
    return delta * (1.0 - t * t)


def _algebraic(y, delta):
    dy = delta * y
    return dy / np.sqrt(1.0 + dy * dy)


def _dalgebraic(y, delta):
    dy = delta * y
    return delta / (1.0 + dy * dy) ** 1.5


#: name -> (s(y, delta), ds/dy(y, delta))
SIGMOIDS: dict = {
    "logistic": (_logistic, _dlogistic),
    "tanh": (_tanh, _dtanh),
    "algebraic": (_algebraic, _dalgebraic),
}


def check_sigmoid(fn: Callable, delta: float, dfn: Callable | None = None, *, name="sigmoid") -> None:
    """Check that ``fn(y, delta)`` is an admissible smooth approximation of ``sign(y)``.

    Conditions checked numerically on ``|y| <= 200/delta`` (Danca/Filippov regularisation needs a
    bounded, continuous, odd, non-decreasing function tending to +-1; then ``Fps -> Fp``):

    * finite everywhere (rejects the paper's misprinted ``2/(1-exp(-delta y)) - 1``);
    * ``|s| <= 1``, ``s(0) = 0``, odd, non-decreasing;
    * ``|s(+-200/delta) -+ 1| < 1e-3``;
    * if ``dfn`` is given, it matches central differences of ``fn`` (relative 1e-4).

    Parameters
    ----------
    fn : callable
        ``fn(y, delta)``, the candidate smooth sign function (dimensionless values).
    delta : float
        Sharpness (1/m) at which it is checked; ``y`` is then in m.
    dfn : callable, optional
        Its derivative ``dfn(y, delta)`` (1/m).
    name : str
        Name used in error messages.

    Raises
    ------
    ParameterError
        naming the violated condition.
    """
    delta = check_positive("delta (sigmoid sharpness)", delta)
    y = np.linspace(-200.0, 200.0, 40001) / delta
    with np.errstate(all="ignore"):
        try:
            s = np.asarray(fn(y, delta), dtype=float)
        except Exception as exc:  # noqa: BLE001 - reported as a parameter error
            raise ParameterError(f"{name}: evaluation failed ({exc})") from None
    if s.shape != y.shape or not np.all(np.isfinite(s)):
        raise ParameterError(f"{name} is not admissible: not finite on |y| <= 200/delta "
                             "(a smooth sign approximation must be bounded and continuous)")
    if np.max(np.abs(s)) > 1.0 + 1e-12:
        raise ParameterError(f"{name} is not admissible: |s(y)| must be <= 1")
    if abs(s[20000]) > 1e-12 or np.max(np.abs(s + s[::-1])) > 1e-9:
        raise ParameterError(f"{name} is not admissible: s must be odd with s(0) = 0")
    if np.any(np.diff(s) < -1e-12):
        raise ParameterError(f"{name} is not admissible: s must be non-decreasing")
    if abs(s[-1] - 1.0) > 1e-3 or abs(s[0] + 1.0) > 1e-3:
        raise ParameterError(f"{name} is not admissible: s(y) must tend to sign(y) "
                             f"(|s(200/delta) - 1| = {abs(s[-1] - 1.0):.3g} > 1e-3)")
    if dfn is not None:
        yy = np.linspace(-5.0, 5.0, 101) / delta
        eps = 1e-6 / delta
        fd = (np.asarray(fn(yy + eps, delta)) - np.asarray(fn(yy - eps, delta))) / (2 * eps)
        an = np.asarray(dfn(yy, delta))
        if np.max(np.abs(fd - an)) > 1e-4 * np.max(np.abs(fd)):
            raise ParameterError(f"{name}: its derivative does not match finite differences")


@dataclass(frozen=True)
class SigmoidFreePlay:
    """Sigmoid-smoothed free-play law (paper Eq. 8 for ``sigmoid='logistic'``).

    Parameters
    ----------
    kp : float
        Contact stiffness, > 0.
    a : float
        Half-gap, > 0.
    delta : float
        Sharpness (1/length), > 0; should satisfy ``delta a >> 1`` (checked: ``delta a >= 10``).
    sigmoid : str or (callable, callable)
        ``'logistic'`` (paper), ``'tanh'``, ``'algebraic'``, or a pair ``(s(y, delta), ds/dy(y, delta))``
        which is checked by :func:`check_sigmoid`.
    """

    kp: float
    a: float
    delta: float
    sigmoid: object = "logistic"
    continuity = "smooth"
    smooth = True

    def __post_init__(self):
        kp, a = _check_gap(self.kp, self.a)
        delta = check_positive("delta (sigmoid sharpness)", self.delta)
        if delta * a < 10.0:
            raise ParameterError(
                f"delta*a must be >= 10 so that the two sigmoids do not overlap, got "
                f"delta={delta!r}, a={a!r} (delta*a={delta * a:.3g})")
        object.__setattr__(self, "kp", kp)
        object.__setattr__(self, "a", a)
        object.__setattr__(self, "delta", delta)
        if isinstance(self.sigmoid, str):
            if self.sigmoid not in SIGMOIDS:
                raise ParameterError(f"sigmoid must be one of {sorted(SIGMOIDS)} or a pair of "
                                     f"callables, got {self.sigmoid!r}")
            fn, dfn = SIGMOIDS[self.sigmoid]
        else:
            try:
                fn, dfn = self.sigmoid
            except (TypeError, ValueError):
                raise ParameterError("sigmoid must be a name or a pair (s, ds/dy) of callables") from None
            if not (callable(fn) and callable(dfn)):
                raise ParameterError("sigmoid must be a name or a pair (s, ds/dy) of callables")
        check_sigmoid(fn, delta, dfn)
        object.__setattr__(self, "_fn", fn)
        object.__setattr__(self, "_dfn", dfn)

    @property
    def boundaries(self) -> tuple:
        return (-self.a, self.a)

    @property
    def is_logistic(self) -> bool:
        return isinstance(self.sigmoid, str) and self.sigmoid == "logistic"

    def force(self, x):
        """Smoothed restoring force Fps(x) (vectorised, overflow safe)."""
        x = np.asarray(x, dtype=float)
        kp, a, d = self.kp, self.a, self.delta
        if self.is_logistic:
            z1, z2 = a + x, a - x
            return kp * (z1 * special.expit(-d * z1) - z2 * special.expit(-d * z2))
        s1 = self._fn(x + a, d)
        s2 = self._fn(x - a, d)
        return 0.5 * kp * ((x + a) * (1.0 - s1) + (x - a) * (1.0 + s2))

    def stiffness(self, x):
        """dFps/dx (vectorised, overflow safe)."""
        x = np.asarray(x, dtype=float)
        kp, a, d = self.kp, self.a, self.delta
        if self.is_logistic:
            def h(z):
                s = special.expit(-d * z)
                return s - d * z * s * (1.0 - s)
            return kp * (h(a + x) + h(a - x))
        s1, ds1 = self._fn(x + a, d), self._dfn(x + a, d)
        s2, ds2 = self._fn(x - a, d), self._dfn(x - a, d)
        return 0.5 * kp * ((1.0 - s1) - (x + a) * ds1 + (1.0 + s2) + (x - a) * ds2)

    @property
    def lipschitz(self) -> float:
        """max |dFps/dx| sampled across both transition bands."""
        d = self.delta
        x = np.concatenate([np.linspace(b - 20 / d, b + 20 / d, 4001) for b in self.boundaries])
        return float(np.max(np.abs(self.stiffness(x))))

    def exact(self) -> FreePlay:
        """The exact law this one approximates."""
        return FreePlay(self.kp, self.a)


# ---------------------------------------------------------------- radius of influence -----------

def _fermi_integral(U):
    """int_0^U u/(e^u+1) du (quadrature, overflow safe)."""
    val, _ = integrate.quad(lambda u: u * special.expit(-u), 0.0, U, epsabs=1e-15, epsrel=1e-13,
                            limit=200)
    return val


def influence_constant(frac: float = 0.68) -> float:
    """U*(frac): root of int_0^U u/(e^u+1) du = frac pi^2/12 (so that R_i = U*/delta).

    Parameters
    ----------
    frac : float
        Fraction of the total error area ``E_inf`` (dimensionless), in (0, 1).

    Returns
    -------
    float
        ``U*`` (dimensionless).
    """
    frac = float(frac)
    if not (0.0 < frac < 1.0):
        raise ParameterError(f"frac must lie in (0, 1), got {frac!r}")
    target = frac * math.pi ** 2 / 12.0
    return float(optimize.brentq(lambda U: _fermi_integral(U) - target, 1e-12, 200.0, xtol=1e-14,
                                 rtol=1e-14))


def radius_of_influence_closed_form(delta: float, frac: float = 0.68) -> tuple:
    """Closed form (exact for ``delta a >> 1``): ``R_i = U*/delta``, ``E_inf = pi^2/(6 delta^2)``.

    Parameters
    ----------
    delta : float
        Sigmoid sharpness (1/m), > 0.
    frac : float
        Fraction of ``E_inf`` defining ``R_i`` (dimensionless), in (0, 1).

    Returns
    -------
    (R_i, E_inf) : (float [m], float [m^2, in the (x, F/kp) plane])
    """
    delta = check_positive("delta (sigmoid sharpness)", delta)
    return influence_constant(frac) / delta, math.pi ** 2 / (6.0 * delta ** 2)


def radius_of_influence(law: SigmoidFreePlay, frac: float = 0.68, *, r_inf: float | None = None):
    """Radius of influence R_i of a smoothed law by direct quadrature of paper Eq. 10.

    At the boundary x = -a, in the plane (x, F/kp)::

        E(r) = int_{-a}^{-a+r} Fps/kp dx + | int_{-a-r}^{-a+r} Fp/kp dx - int_{-a-r}^{-a} Fps/kp dx |

    ``E_inf = E(r_inf)`` (default ``r_inf = min(a, 60/delta)``: the integrand decays like
    ``exp(-delta r)``), and ``R_i`` solves ``E(R_i) = frac E_inf``.

    Parameters
    ----------
    law : SigmoidFreePlay
        The smoothed law (half-gap ``a`` in m, stiffness ``kp`` in N/m, sharpness ``delta`` in 1/m).
    frac : float
        Fraction of ``E_inf`` defining ``R_i`` (dimensionless), in (0, 1).
    r_inf : float, optional
        Distance (m) at which ``E`` is taken as converged.

    Returns
    -------
    (R_i, E_inf) : (float, float)
        Radius of influence (m) and total error area (m^2, in the (x, F/kp) plane).
    """
    if not isinstance(law, SigmoidFreePlay):
        raise ParameterError("law must be a SigmoidFreePlay")
    frac = float(frac)
    if not (0.0 < frac < 1.0):
        raise ParameterError(f"frac must lie in (0, 1), got {frac!r}")
    a, kp, d = law.a, law.kp, law.delta
    exact = law.exact()
    if r_inf is None:
        r_inf = min(a, 60.0 / d)

    def area1(r):  # spurious in-gap force (the exact law is 0 there)
        return integrate.quad(lambda x: law.force(x) / kp, -a, -a + r, epsabs=1e-16,
                              epsrel=1e-12, limit=200)[0]

    def area2(r):  # contact-side deficit; int of Fp over (-a, -a+r) is zero
        ex = integrate.quad(lambda x: exact.force(x) / kp, -a - r, -a, epsabs=1e-16,
                            epsrel=1e-12, limit=200)[0]
        sm = integrate.quad(lambda x: law.force(x) / kp, -a - r, -a, epsabs=1e-16,
                            epsrel=1e-12, limit=200)[0]
        return abs(ex - sm)

    def E(r):
        return area1(r) + area2(r)

    E_inf = E(r_inf)
    R = optimize.brentq(lambda r: E(r) - frac * E_inf, 1e-12, r_inf, xtol=1e-15, rtol=1e-13)
    return float(R), float(E_inf)


def delta_for_radius(a: float, ratio: float, frac: float = 0.68) -> float:
    """Sharpness ``delta = U*(frac)/(ratio a)`` giving ``R_i / a = ratio``.

    Parameters
    ----------
    a : float
        Half-gap (m), > 0.
    ratio : float
        Wanted ``R_i / a`` (dimensionless), > 0.
    frac : float
        Fraction of ``E_inf`` defining ``R_i`` (dimensionless), in (0, 1).

    Returns
    -------
    float
        Sharpness ``delta`` (1/m).
    """
    a = check_positive("a (half-gap)", a)
    ratio = check_positive("ratio (R_i / a)", ratio)
    return influence_constant(frac) / (ratio * a)


def spurious_force_peak(law: SigmoidFreePlay) -> tuple:
    """Peak spurious in-gap force of the logistic law and its depth into the gap.

    Returns ``(kp * 0.27846/delta, 1.27846/delta)``: ``u* = 1.27846`` solves ``e^u (u-1) = 1``
    and ``F_max = kp (u* - 1)/delta`` (closed form for ``delta a >> 1``).

    Parameters
    ----------
    law : SigmoidFreePlay
        The logistic law (``kp`` in N/m, ``delta`` in 1/m).

    Returns
    -------
    (F_max, depth) : (float, float)
        Peak spurious force (N) and its distance from the gap edge into the gap (m).
    """
    return law.kp * (_U_PEAK - 1.0) / law.delta, _U_PEAK / law.delta


# ---------------------------------------------------------------- vector-field error (Fig. 4) ---

def vector_field_error(k_tot: float, mu_tot: float, law_s, law_e, x, y, m: float = 1.0):
    """Relative error maps between the smoothed and exact vector fields (paper Fig. 4).

    Field: undamped, unforced, mass 2 blocked: ``x' = y``, ``y' = -[k_tot x + mu_tot x^3 + F(x)]/m``
    with ``k_tot = k + kd``, ``mu_tot = mu + mud``.

    Definitions (not given in the paper, see spec 2.5): magnitude error
    ``| |f_s| - |f_e| | / |f_e| * 100`` and direction error ``angle(f_s, f_e)/pi * 100`` (percent).

    Parameters
    ----------
    k_tot : float
        Linear stiffness ``k + kd`` (N/m).
    mu_tot : float
        Cubic stiffness ``mu + mud`` (N/m^3).
    law_s, law_e : force law objects
        Smoothed and exact laws, ``force(x)`` in N for ``x`` in m.
    x, y : array_like
        Grid of displacements (m) and velocities (m/s), broadcast together.
    m : float
        Mass (kg).

    Returns
    -------
    (mag_pct, dir_pct) : arrays of shape ``np.broadcast(x, y).shape``
        Magnitude and direction errors (percent, dimensionless).
    """
    x, y = np.broadcast_arrays(np.asarray(x, float), np.asarray(y, float))
    if x.size == 0:
        raise ParameterError("vector_field_error: the grid (x, y) is empty")
    fe = np.stack([y, -(k_tot * x + mu_tot * x ** 3 + law_e.force(x)) / m])
    fs = np.stack([y, -(k_tot * x + mu_tot * x ** 3 + law_s.force(x)) / m])
    ne, ns = np.hypot(*fe), np.hypot(*fs)
    with np.errstate(invalid="ignore", divide="ignore"):
        mag = np.abs(ns - ne) / ne * 100.0
        cross = fe[0] * fs[1] - fe[1] * fs[0]
        ang = np.abs(np.arctan2(cross, (fe * fs).sum(0))) / np.pi * 100.0
    return mag, ang
