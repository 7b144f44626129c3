"""The two-mass free-play oscillator (paper Eq. 2), its parameters and vector fields.

Non-dimensional equations of motion (spec 1.1)::

    m x1'' + c x1' + k x1 + mu x1^3 - kd r - mud r^3 - cd r' + F(x1) = Q1 cos(W t)
    m x2'' + c x2' + k x2 + mu x2^3 + kd r + mud r^3 + cd r' = Q2 cos(W t),     r = x2 - x1

State ``z = [x1, y1, x2, y2]`` (4-D, non-autonomous, t0 = 0). The autonomous 6-D form with the
forcing oscillator ``(u, v)`` (reconstruction of the missing Eq. A1, spec 1.3) is :meth:`rhs6`.

The non-dimensional mapping (``t~ = Omega_r t``, ``x~ = x/l_r``, ``k~ = k/(m Omega_r^2)``, ...) is an
assumption (the paper's Table 1 is missing); :meth:`FreePlayParams.from_dimensional` applies it
with the scales defaulting to 1, so that the non-dimensional numbers equal the SI numbers.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace

import numpy as np

from ..errors import ParameterError, check_names, check_positive
from .laws import FreePlay, SigmoidFreePlay

__all__ = ["FreePlayParams", "PARAM_UNITS", "P_REF", "PRESETS", "get_params", "TwoMassFreePlay"]

#: SI unit of every parameter of :class:`FreePlayParams` (the reference scales at 1 m, 1 rad/s,
#: 1 kg make the non-dimensional numbers SI numbers)
PARAM_UNITS = {"m": "kg", "c": "N s/m", "k": "N/m", "mu": "N/m^3", "cd": "N s/m", "kd": "N/m",
               "mud": "N/m^3", "kp": "N/m", "a": "m", "delta": "1/m", "Q1": "N", "Q2": "N"}


@dataclass(frozen=True)
class FreePlayParams:
    """Parameters of the two-mass free-play oscillator (non-dimensional).

    Parameters
    ----------
    m, c, k, mu : float
        Mass, damping, linear and cubic stiffness to ground (each mass).
    cd, kd, mud : float
        Coupling damping, linear and cubic coupling stiffness.
    kp, a : float
        Free-play contact stiffness and half-gap (on mass 1).
    delta : float
        Sigmoid sharpness for the smoothed law (1/length).
    Q1, Q2 : float
        Forcing amplitudes on masses 1 and 2.
    """

    m: float = 1.0
    c: float = 0.05
    k: float = 1.0
    mu: float = 0.1
    cd: float = 0.05
    kd: float = 0.3
    mud: float = 0.1
    kp: float = 10.0
    a: float = 0.05
    delta: float = 1500.0
    Q1: float = 0.2
    Q2: float = 0.0

    def __post_init__(self):
        check_positive("m (mass)", self.m)
        for name in ("c", "k", "mu", "cd", "kd", "mud"):
            check_positive(name, getattr(self, name), strict=False)
        check_positive("kp (free-play contact stiffness)", self.kp, strict=False)
        check_positive("a (half-gap)", self.a)
        check_positive("delta (sigmoid sharpness)", self.delta)
        for name in ("Q1", "Q2"):
            v = float(getattr(self, name))
            if not math.isfinite(v):
                raise ParameterError(f"{name} must be finite, got {v!r}")

    def to_dict(self) -> dict:
        return asdict(self)

    def quantities(self) -> dict:
        """The parameters as summary entries ``{name: (value, SI unit)}`` (see
        :data:`PARAM_UNITS`), for :func:`fesub.io.summary_record`."""
        return {k: (float(v), PARAM_UNITS.get(k, "1")) for k, v in self.to_dict().items()}

    def replace(self, **kw) -> "FreePlayParams":
        return replace(self, **kw)

    def as_array(self) -> np.ndarray:
        """Kernel parameter vector [m, c, k, mu, cd, kd, mud, kp, a, Q1, Q2, delta]."""
        return np.array([self.m, self.c, self.k, self.mu, self.cd, self.kd, self.mud, self.kp,
                         self.a, self.Q1, self.Q2, self.delta], dtype=float)

    @property
    def wn(self) -> tuple:
        """Linear natural frequencies (no gap contact): (sqrt(k/m), sqrt((k+2kd)/m))."""
        return math.sqrt(self.k / self.m), math.sqrt((self.k + 2 * self.kd) / self.m)

    @property
    def zeta(self) -> tuple:
        """Modal damping ratios (z1, z2): 2 z1 wn1 = c/m, 2 z2 wn2 = (c + 2 cd)/m."""
        w1, w2 = self.wn
        return self.c / (2 * self.m * w1), (self.c + 2 * self.cd) / (2 * self.m * w2)

    @classmethod
    def from_dimensional(cls, m, c, k, mu, cd, kd, mud, kp, a, Q1, Q2, delta=1500.0, *,
                         Omega_r=1.0, l_r=1.0):
        """Non-dimensional parameters from SI values (mapping assumed, spec 1.1).

        ``k~ = k/(m Om^2)``, ``mu~ = mu l^2/(m Om^2)``, ``c~ = c/(m Om)``, ``Q~ = Q/(m l Om^2)``,
        ``a~ = a/l``, ``delta~ = delta l``; the non-dimensional mass is 1.
        Time in the result is ``t~ = Omega_r t`` and the forcing frequency ``W~ = W/Omega_r``.
        """
        Om = check_positive("Omega_r (reference frequency, rad/s)", Omega_r)
        lr = check_positive("l_r (reference length, m)", l_r)
        m = check_positive("m (mass, kg)", m)
        s = m * Om ** 2
        return cls(m=1.0, c=c / (m * Om), k=k / s, mu=mu * lr ** 2 / s, cd=cd / (m * Om),
                   kd=kd / s, mud=mud * lr ** 2 / s, kp=kp / s, a=a / lr, delta=delta * lr,
                   Q1=Q1 / (s * lr), Q2=Q2 / (s * lr))


#: Provisional parameter set of spec 1.5 -- NOT the paper's Table 2 (which is missing from the
#: source). Chosen so that contact, coexisting attractors, symmetry breaking and non-periodic
#: windows occur for W in [0.8, 1.8]. Replace with Table 2 when available.
P_REF = FreePlayParams()

PRESETS = {"P_REF": P_REF}


def get_params(params=None) -> FreePlayParams:
    """Normalise ``None`` / preset name / dict / FreePlayParams to FreePlayParams.

    Parameters
    ----------
    params : None, str, dict or FreePlayParams
        None for :data:`P_REF`; a preset name of :data:`PRESETS`; a dict of
        :class:`FreePlayParams` fields in their units (:data:`PARAM_UNITS`: m in kg, c in N s/m,
        kp in N/m, a in m, delta in 1/m, Q1 in N, ...) overriding a ``"preset"`` entry (default
        :data:`P_REF`); or a FreePlayParams, returned as it is.

    Returns
    -------
    FreePlayParams
    """
    if params is None:
        return P_REF
    if isinstance(params, FreePlayParams):
        return params
    if isinstance(params, str):
        if params not in PRESETS:
            raise ParameterError(f"unknown parameter preset {params!r}; choose from {sorted(PRESETS)}")
        return PRESETS[params]
    if isinstance(params, dict):
        d = dict(params)
        base = get_params(d.pop("preset", None))
        check_names("parameter name(s)", d, base.to_dict())
        return base.replace(**d)
    raise ParameterError(f"params must be a preset name, dict or FreePlayParams, got {type(params)}")


class TwoMassFreePlay:
    """Vector fields of the two-mass free-play oscillator.

    Parameters
    ----------
    params : FreePlayParams, dict or preset name
        Model parameters, in the units of :data:`PARAM_UNITS` (see :func:`get_params`).
    law : {'exact', 'smooth'} or a law object
        ``'exact'`` uses :class:`FreePlay`, ``'smooth'`` the logistic :class:`SigmoidFreePlay` with
        ``params.delta``.
    """

    def __init__(self, params=None, law="exact"):
        self.p = get_params(params)
        p = self.p
        if isinstance(law, str):
            if law == "exact":
                law = FreePlay(p.kp, p.a)
            elif law in ("smooth", "sigmoid"):
                law = SigmoidFreePlay(p.kp, p.a, p.delta)
            else:
                raise ParameterError(f"law must be 'exact' or 'smooth', got {law!r}")
        if not isinstance(law, (FreePlay, SigmoidFreePlay)):
            raise ParameterError("law must be 'exact', 'smooth', FreePlay or SigmoidFreePlay")
        self.law = law
        self.exact = not law.smooth

    @property
    def law_name(self) -> str:
        return "exact" if self.exact else "smooth"

    # ---- forces ---------------------------------------------------------------------------
    def _force(self, x1, region):
        if self.exact:
            return self.law.force(x1, region=region)
        return self.law.force(x1)

    def _dforce(self, x1, region):
        if self.exact:
            return self.law.stiffness(x1, region=region)
        return self.law.stiffness(x1)

    def rhs(self, t, z, W, region=None):
        """dz/dt of the 4-D form; ``region`` fixes the exact law's branch (event-driven use)."""
        p = self.p
        x1, y1, x2, y2 = z[0], z[1], z[2], z[3]
        r, rv = x2 - x1, y2 - y1
        cw = math.cos(W * t)
        coup = p.kd * r + p.mud * r ** 3 + p.cd * rv
        F = self._force(x1, region)
        a1 = (p.Q1 * cw - p.c * y1 - p.k * x1 - p.mu * x1 ** 3 + coup - F) / p.m
        a2 = (p.Q2 * cw - p.c * y2 - p.k * x2 - p.mu * x2 ** 3 - coup) / p.m
        return np.array([y1, a1, y2, a2], dtype=float)

    def jac(self, t, z, W, region=None):
        """df/dz (4 x 4) of the 4-D form."""
        p = self.p
        x1, x2 = z[0], z[2]
        r = x2 - x1
        kc = p.kd + 3 * p.mud * r * r
        dF = float(self._dforce(x1, region))
        J = np.zeros((4, 4))
        J[0, 1] = 1.0
        J[2, 3] = 1.0
        J[1, 0] = (-p.k - 3 * p.mu * x1 * x1 - kc - dF) / p.m
        J[1, 1] = (-p.c - p.cd) / p.m
        J[1, 2] = kc / p.m
        J[1, 3] = p.cd / p.m
        J[3, 0] = kc / p.m
        J[3, 1] = p.cd / p.m
        J[3, 2] = (-p.k - 3 * p.mu * x2 * x2 - kc) / p.m
        J[3, 3] = (-p.c - p.cd) / p.m
        return J

    def dfdW(self, t, z, W):
        """Partial derivative of the 4-D field with respect to the forcing frequency W."""
        p = self.p
        sw = -math.sin(W * t) * t
        return np.array([0.0, p.Q1 * sw / p.m, 0.0, p.Q2 * sw / p.m])

    def rhs6(self, t, z6, W, region=None):
        """Autonomous 6-D form [x1, y1, x2, y2, u, v] with the forcing oscillator (spec 1.3).

        ``u' = u + W v - u (u^2+v^2)``, ``v' = v - W u - v (u^2+v^2)``: the circle u^2+v^2 = 1 is
        attracting and ``u = cos(W t)``, ``v = -sin(W t)`` on it; ``cos(W t)`` is replaced by ``u``.
        """
        p = self.p
        x1, y1, x2, y2, u, v = z6
        r, rv = x2 - x1, y2 - y1
        coup = p.kd * r + p.mud * r ** 3 + p.cd * rv
        F = self._force(x1, region)
        rr = u * u + v * v
        return np.array([
            y1, (p.Q1 * u - p.c * y1 - p.k * x1 - p.mu * x1 ** 3 + coup - F) / p.m,
            y2, (p.Q2 * u - p.c * y2 - p.k * x2 - p.mu * x2 ** 3 - coup) / p.m,
            u + W * v - u * rr, v - W * u - v * rr], dtype=float)

    # ---- modal form (Eq. 11) ------------------------------------------------------------------
    def modal_rhs(self, t, q, W, region=None):
        """Modal form ``x1 = q1 + q2``, ``x2 = q1 - q2`` (paper Eq. 11); q = [q1, q1', q2, q2'].

        ``q1'' + 2 z1 wn1 q1' + wn1^2 q1 + mu/(2m)[(q1+q2)^3 + (q1-q2)^3] + Fp/(2m) = (Q1+Q2)/(2m) cos Wt``
        ``q2'' + 2 z2 wn2 q2' + wn2^2 q2 + mu/(2m)[(q1+q2)^3 - (q1-q2)^3] + 8 mud/m q2^3 + Fp/(2m)
        = (Q1-Q2)/(2m) cos Wt``.
        """
        p = self.p
        q1, v1, q2, v2 = q
        x1, x2 = q1 + q2, q1 - q2
        F = self._force(x1, region)
        cw = math.cos(W * t)
        a1 = ((p.Q1 + p.Q2) / 2 * cw - p.c * v1 - p.k * q1 - p.mu / 2 * (x1 ** 3 + x2 ** 3) - F / 2) / p.m
        a2 = ((p.Q1 - p.Q2) / 2 * cw - (p.c + 2 * p.cd) * v2 - (p.k + 2 * p.kd) * q2
              - p.mu / 2 * (x1 ** 3 - x2 ** 3) - 8 * p.mud * q2 ** 3 - F / 2) / p.m
        return np.array([v1, a1, v2, a2])

    @staticmethod
    def mirror(z):
        """Symmetry: if X(t) solves the system, -X(t + T/2) does too (spec 4.2)."""
        return -np.asarray(z, dtype=float)

    def region(self, x1) -> int:
        return int(FreePlay(self.p.kp, self.p.a).region(x1))


def split_params(params):
    """Split a dict into model parameters and run options."""
    if isinstance(params, FreePlayParams) or params is None or isinstance(params, str):
        return get_params(params), {}
    if not isinstance(params, dict):
        raise ParameterError(f"params must be a dict, preset name or FreePlayParams, got {type(params)}")
    names = set(FreePlayParams.__dataclass_fields__)
    model = {k: v for k, v in params.items() if k in names or k == "preset"}
    opts = {k: v for k, v in params.items() if k not in model}
    return get_params(model), opts
