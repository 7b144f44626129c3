"""Slip dynamics of a disc and a ball on a plane; limit directions and their bifurcations.

Both test problems reduce to an autonomous system in the friction variables
``x_o = (u_x, u_y, rho omega_z)`` (m/s)::

    x_o' = -mu g (A C(w3) w1, A C(w3) w2, b S(w3) w3) + (F/m, 0, 0),     w = x_o/|x_o|,

with ``A = 1``, ``b = rho kappa/(j Rbar^2)`` for the disc (``j = 1/2``, uniform pressure) and
``A = (1+j)/j``, ``b = rho kappa/(j Rbar^2)`` for the ball (``j = 2/5``, Hertz pressure, ``Rbar =
lambda R``), ``F`` a constant horizontal force (N) along x on the centre of mass. The right-hand side
depends on the direction ``w`` only, so the radial and circumferential parts are exactly their
asymptotic forms: ``r' = R*(w) = w.F_o``, ``w' = V*(w)/r``, ``V* = F_o - R* w``.

Integration until the body stops uses the time rescaling ``d/dt = r d/dtau``: ``(log r)' = R*(w)``,
``w' = V*(w)``, ``t' = r`` -- smooth, with the stop time ``t_stop = int r dtau`` finite and ``w``
converging to the limit direction (:meth:`ReducedContactSystem.simulate_sliding`, implemented in
:mod:`fesub.circular.sliding`); with ``method='t'`` it integrates ``x_o`` in physical time
instead (an independent check). The kinetic energy of the slip falls at least at
:meth:`ReducedContactSystem.slowdown_rate` whatever the direction, which bounds the stop time
(:meth:`ReducedContactSystem.stop_time_bound`) and sets the horizon of a run.

Limit directions ``V*(w) = 0`` lie on the invariant great circle ``w = (cos psi, 0, sin psi)`` when
``C`` has no zero on the sphere (true for the exact models and the harmonic models used here;
:func:`find_limit_directions_sphere` checks it with a multistart solve on the whole sphere). On the
circle ``psi' = g(psi) = mu g sin(psi) [cos(psi) k(sin psi) - f]`` with ``k = A C - b S`` and
``f = F/(mu m g)``. The eigenvalues of the modified Jacobian (119) are the in-circle one
``lambda_c = g'(psi)`` and the transversal one ``lambda_perp = -(mu g A C + R*)``.

Corrections to the printed paper followed here (see the specification): the tangency bifurcation is
at ``R* = 0``; non-trivial limit directions have ``r' < 0`` (attracting); the angle equations (120) are
replaced by the correct ones; the paper omits the ball's ``G(q)``, so only the contact-point slip and
the friction-free velocity ``v_Q`` of the ball are integrated.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import ParameterError, check_positive
from .friction import FrictionModel, HarmonicFriction
from .sliding import Trajectory, simulate_sliding

__all__ = ["ReducedContactSystem", "LimitDirection", "find_limit_directions",
           "find_limit_directions_sphere", "bifurcation_values", "limit_direction_diagram",
           "COLOURS"]

_BAD_W = "w must be finite and nonzero (x_o = 0 is the set-valued case)"

#: colour code of the paper's figures (sphere type with r' sign)
COLOURS = {
    ("repelling", "stable node"): "purple",
    ("attracting", "unstable node"): "red",
    ("attracting", "saddle-stable-in-circle"): "green",
    ("attracting", "saddle-unstable-in-circle"): "brown",
    ("attracting", "stable node"): "blue",
    ("repelling", "unstable node"): "orange",
    ("repelling", "saddle-stable-in-circle"): "olive",
    ("repelling", "saddle-unstable-in-circle"): "pink",
}


@dataclass
class LimitDirection:
    """A limit direction ``w`` with ``V*(w) = 0``.

    Parameters
    ----------
    w : ndarray (3,)
        Unit direction ``(w1, w2, w3)``.
    rdot : float
        ``R*(w)`` (m/s^2): < 0 attracting (slip -> stick in finite time), > 0 repelling.
    lam_c, lam_perp : float
        Eigenvalues (m/s^2) of the modified Jacobian inside the circle ``w2 = 0`` and across it,
        rates in the rescaled time ``tau`` (``dt = |x_o| dtau``); in physical time they are
        divided by ``|x_o|``.
    kind : str
        'attracting', 'repelling' or 'tangent' (``R* = 0``).
    sphere_type : str
        'stable node', 'unstable node', 'saddle-stable-in-circle', 'saddle-unstable-in-circle' or
        'non-hyperbolic'.
    colour : str
        Colour of the paper's figures (purple, red, green, brown, blue; others for cases the
        paper does not colour).
    """

    w: np.ndarray
    rdot: float
    lam_c: float
    lam_perp: float
    kind: str
    sphere_type: str
    colour: str

    @property
    def psi(self) -> float:
        """Angle on the invariant circle, ``w = (cos psi, 0, sin psi)`` (rad)."""
        return math.atan2(self.w[2], self.w[0])

    def as_dict(self) -> dict:
        return {"w": [float(x) for x in self.w], "rdot": self.rdot, "lam_c": self.lam_c,
                "lam_perp": self.lam_perp, "kind": self.kind, "sphere_type": self.sphere_type,
                "colour": self.colour}


class ReducedContactSystem:
    """``x_o' = -mu g (A C w1, A C w2, b S w3) + (F/m, 0, 0)`` for a friction model.

    Parameters
    ----------
    model : FrictionModel
        Friction model (its ``C(w3)``, ``S(w3)``, ``mu``, ``rho`` are used; the normal load is
        ``m g``, the model's ``P`` is not used).
    A, b : float
        Coefficients of the reduced form (> 0).
    m : float
        Mass (kg).
    F : float
        Constant horizontal force along x (N), any sign.
    g : float
        Gravity (m/s^2).
    kind : str
        Label ('disc', 'ball' or 'custom').
    """

    def __init__(self, model: FrictionModel, A: float, b: float, m: float = 1.0, F: float = 0.0,
                 g: float = 1.0, kind: str = "custom"):
        if not isinstance(model, FrictionModel):
            raise ParameterError(f"model must be a FrictionModel, got {type(model).__name__}")
        self.model = model
        self.A = check_positive("A", A)
        self.b = check_positive("b", b)
        self.m = check_positive("m (mass)", m)
        self.g = check_positive("g (gravity)", g)
        try:
            self.F = float(F)
        except (TypeError, ValueError):
            raise ParameterError(f"F (force) must be a real number, got {F!r}") from None
        if not math.isfinite(self.F):
            raise ParameterError(f"F (force) must be finite, got {F!r}")
        self.mu_g = model.mu * self.g
        self.f = self.F / (self.m * self.mu_g)
        self.rho = model.rho
        self.kind = kind
        self._beta = None           # slowdown rate, computed on first use

    # -------------------------------------------------------------------- constructors
    @classmethod
    def disc(cls, model: FrictionModel, m: float = 1.0, F: float = 0.0, g: float = 1.0,
             Rbar: float | None = None, j: float = 0.5):
        """Disc of radius ``Rbar`` (default: the contact radius) flat on the plane (eq. 13)."""
        Rbar = model.R if Rbar is None else check_positive("Rbar (disc radius)", Rbar)
        j = check_positive("j (inertia ratio)", j)
        return cls(model, 1.0, model.rho * model.kappa / (j * Rbar ** 2), m, F, g, "disc")

    @classmethod
    def ball(cls, model: FrictionModel, m: float = 1.0, F: float = 0.0, g: float = 1.0,
             lam: float = 5.0, j: float = 0.4):
        """Ball of radius ``Rbar = lam R`` on the plane (eq. 18), ``R`` the Hertz contact radius."""
        lam = check_positive("lam (ball radius / contact radius)", lam)
        j = check_positive("j (inertia ratio)", j)
        Rbar = lam * model.R
        return cls(model, (1.0 + j) / j, model.rho * model.kappa / (j * Rbar ** 2), m, F, g,
                   "ball")

    def with_force(self, F: float) -> "ReducedContactSystem":
        """Same system with another force ``F`` (N)."""
        return ReducedContactSystem(self.model, self.A, self.b, self.m, F, self.g, self.kind)

    # -------------------------------------------------------------------- vector field
    def k(self, w3):
        """``k(w3) = A C(w3) - b S(w3)`` (-)."""
        C, S = self.model.CS(w3)
        return self.A * C - self.b * S

    def field(self, w):
        """``F_o(w)`` (m/s^2) for directions ``w`` of shape (..., 3) (normalised internally)."""
        w = np.asarray(w, dtype=float)
        if w.shape == (3,):           # one direction (a step of the integrators): in floats
            return self._field_one(w)
        n = np.linalg.norm(w, axis=-1, keepdims=True)
        if np.any(n == 0) or not np.all(np.isfinite(w)):
            raise ParameterError(_BAD_W)
        w = w / n
        C, S = self.model.CS(np.clip(w[..., 2], -1.0, 1.0))
        out = np.empty_like(w)
        out[..., 0] = -self.mu_g * self.A * C * w[..., 0] + self.F / self.m
        out[..., 1] = -self.mu_g * self.A * C * w[..., 1]
        out[..., 2] = -self.mu_g * self.b * S * w[..., 2]
        return out

    def _field_one(self, w):
        """``F_o`` at one direction ``w`` (3,), with :meth:`FrictionModel.CS_scalar`."""
        x, y, z = (float(v) for v in w)
        n = math.sqrt(x * x + y * y + z * z)
        if not 0.0 < n < math.inf:
            raise ParameterError(_BAD_W)
        x, y, z = x / n, y / n, z / n
        C, S = self.model.CS_scalar(max(-1.0, min(1.0, z)))
        a = self.mu_g * self.A * C
        return np.array([-a * x + self.F / self.m, -a * y, -self.mu_g * self.b * S * z])

    def rhs(self, t, x_o):
        """``dx_o/dt`` (m/s^2) at ``x_o != 0`` (for ODE solvers)."""
        return self.field(x_o)

    def radial(self, w):
        """``R*(w) = w . F_o(w)`` (m/s^2)."""
        w = np.asarray(w, float)
        w = w / np.linalg.norm(w, axis=-1, keepdims=True)
        return np.sum(w * self.field(w), axis=-1)

    def circumferential(self, w):
        """``V*(w) = (I - w w^T) F_o(w)`` (m/s^2)."""
        w = np.asarray(w, float)
        w = w / np.linalg.norm(w, axis=-1, keepdims=True)
        Fo = self.field(w)
        return Fo - np.sum(w * Fo, axis=-1, keepdims=True) * w

    def modified_jacobian(self, w, h: float = 1e-6):
        """``V*_w - V*_w w w^T`` (m/s^2, rates in rescaled time) at ``w`` by central differences
        (eq. 119)."""
        w = np.asarray(w, float)
        w = w / np.linalg.norm(w)
        J = np.empty((3, 3))
        for i in range(3):
            d = np.zeros(3)
            d[i] = h
            J[:, i] = (self.circumferential_raw(w + d) - self.circumferential_raw(w - d)) / (2 * h)
        return J - J @ np.outer(w, w)

    def sphere_rates(self, w) -> list:
        """Real parts of the two eigenvalues (m/s^2, rates in rescaled time) of the fast flow
        ``w' = V*(w)`` on the sphere at ``w``: :meth:`modified_jacobian` restricted to the
        tangent plane (the third, trivial, eigenvalue is left out). Near zero at a
        non-hyperbolic limit direction (a bifurcation point, or a circle of them)."""
        w = np.asarray(w, float) / np.linalg.norm(w)
        P = np.linalg.svd(np.eye(3) - np.outer(w, w))[0][:, :2]       # tangent-plane basis
        lam = np.linalg.eigvals(P.T @ self.modified_jacobian(w) @ P)
        return sorted(float(x) for x in lam.real)

    def circumferential_raw(self, x):
        """``V`` of the un-normalised field ``F_o(x/|x|)`` projected with ``x/|x|`` -- as a function
        of ``x`` in R^3 (used for Jacobians)."""
        x = np.asarray(x, float)
        w = x / np.linalg.norm(x)
        Fo = self.field(w)
        return Fo - np.dot(w, Fo) * w

    def angle_rates(self, theta, phi):
        """Rates ``(theta', phi')`` (rad per unit rescaled time) of the fast flow ``w' = V*(w)``.

        ``phi' = (-F1 sin phi + F2 cos phi)/cos theta`` and
        ``theta' = -(F1 cos phi + F2 sin phi) sin theta + F3 cos theta`` -- the corrected form of
        the paper's (120), which lacks the ``1/cos theta`` and swaps ``sin phi``, ``cos phi``.
        """
        th, ph = np.broadcast_arrays(np.asarray(theta, float), np.asarray(phi, float))
        w = np.stack([np.cos(th) * np.cos(ph), np.cos(th) * np.sin(ph), np.sin(th)], axis=-1)
        F = self.field(w)
        dph = (-F[..., 0] * np.sin(ph) + F[..., 1] * np.cos(ph)) / np.cos(th)
        dth = (-(F[..., 0] * np.cos(ph) + F[..., 1] * np.sin(ph)) * np.sin(th)
               + F[..., 2] * np.cos(th))
        return dth, dph

    def ball_centre_velocity(self, traj: "Trajectory", vQ0=(0.0, 0.0)):
        """Ball only: centre velocity ``v_C = (v_Q + j u)/(1 + j)`` (m/s) along ``traj``.

        ``v_Q = (1 + j) v_C - j u`` is the friction-free combination, ``v_Q' = F/m`` (e_x), so
        ``v_Q(t) = vQ0 + F t/m``; ``u`` is the contact-point slip of the trajectory.
        """
        if self.kind != "ball":
            raise ParameterError("ball_centre_velocity needs a system built by .ball()")
        j = 1.0 / (self.A - 1.0)
        vQ = np.zeros((traj.t.size, 2)) + np.asarray(vQ0, float)
        vQ[:, 0] += self.F / self.m * traj.t
        return (vQ + j * traj.x_o[:, :2]) / (1.0 + j)

    # -------------------------------------------------------------------- circle functions
    def circle_m(self, psi):
        """``m(psi) = cos(psi) k(sin psi)``: non-trivial limit directions satisfy ``m = f``."""
        psi = np.asarray(psi, float)
        return np.cos(psi) * self.k(np.sin(psi))

    def circle_m_prime(self, psi, h: float = 1e-5):
        """``dm/dpsi``: analytic for polynomial (harmonic) models, 4th-order differences else."""
        psi = np.asarray(psi, float)
        if isinstance(self.model, HarmonicFriction):
            s, c = np.sin(psi), np.cos(psi)
            dC, dS = self.model.dCS(s)
            dk = self.A * dC - self.b * dS
            return -s * self.k(s) + c * c * dk
        m = self.circle_m
        return (m(psi - 2 * h) - 8 * m(psi - h) + 8 * m(psi + h) - m(psi + 2 * h)) / (12 * h)

    # -------------------------------------------------------------------- bifurcation values
    @property
    def F_T(self) -> float:
        """Tangency force ``mu m g A C(0)`` (N): above it pure translation is repelling."""
        return self.m * self.mu_g * self.A * float(self.model.CS(0.0)[0])

    @property
    def F_P(self) -> float:
        """Pitchfork force ``mu m g |A C(0) - b S(0)|`` (N)."""
        return self.m * self.mu_g * abs(float(self.k(0.0)))

    def folds(self, n: int = 4001):
        """Fold (saddle-node) points: interior extrema of ``m(psi)`` on (0, pi) with ``m > 0``.

        Returns a list of dicts ``{'F': force (N), 'psi': rad, 'w3': -, 'w1': -}``.
        """
        from scipy.optimize import minimize_scalar

        psi = np.linspace(0.0, math.pi, n)[1:-1]
        mv = self.circle_m(psi)
        d = np.diff(mv)
        out = []
        for i in range(1, d.size):
            if d[i - 1] * d[i] < 0 and 2 <= i <= psi.size - 3:
                sgn = 1.0 if d[i - 1] > 0 else -1.0      # +1 at a maximum
                res = minimize_scalar(lambda x: -sgn * float(self.circle_m(x)),
                                      bounds=(psi[i - 1], psi[i + 1]), method="bounded",
                                      options={"xatol": 1e-12})
                p = float(res.x)
                val = float(self.circle_m(p))
                if val > 0:
                    out.append({"F": self.m * self.mu_g * val, "psi": p, "w3": math.sin(p),
                                "w1": math.cos(p)})
        return out

    # -------------------------------------------------------------------- stop-time bound
    def energy_speed(self, x_o):
        """``sqrt(2 E/m)`` (m/s) of slip states ``x_o`` (..., 3), ``E`` the kinetic energy of the
        slip, ``E = x_o^T M_o x_o/2`` with ``M_o = m diag(1/A, 1/A, kappa/(rho b))`` -- the mass
        matrix of eqs. (11), (16) restricted to ``x_o`` (for the disc ``m (u^2 + J omega^2/m)``)."""
        x = np.asarray(x_o, dtype=float)
        k3 = self.model.kappa / (self.rho * self.b)
        return np.sqrt((x[..., 0] ** 2 + x[..., 1] ** 2) / self.A + k3 * x[..., 2] ** 2)

    def slowdown_rate(self, n: int = 2049) -> float:
        """Least rate ``beta`` (m/s^2) at which the energy speed ``sqrt(2 E/m)`` falls.

        The friction power and the work of ``F`` give, at ``x_o = r w``,
        ``d sqrt(2E/m)/dt = -[mu g (C w12^2 + (kappa/rho) S w3^2) - F w1/(A m)]/e(w)`` with
        ``w12^2 = w1^2 + w2^2`` and ``e(w) = sqrt(w12^2/A + kappa w3^2/(rho b))``: it depends on
        the direction only, and for a fixed ``w3`` it is least at ``w1 = sgn(F) w12``, ``w2 = 0``.
        ``beta`` is its minimum over ``w3 = sin(psi)``, ``psi`` in [0, pi/2], found on ``n``
        angles and refined by a bounded scalar search. ``beta <= 0`` (``|F|`` at or above about
        ``F_T``) means that some direction does not slow down.
        """
        if self._beta is None:
            from scipy.optimize import minimize_scalar

            k3 = self.model.kappa / (self.rho * self.b)

            def rate(psi):
                c, w3 = np.cos(psi), np.sin(psi)
                C, S = self.model.CS(w3)
                diss = self.mu_g * (C * c * c + (self.model.kappa / self.rho) * S * w3 * w3)
                return (diss - abs(self.F) * c / (self.A * self.m)) / np.sqrt(
                    c * c / self.A + k3 * w3 * w3)

            psi = np.linspace(0.0, 0.5 * math.pi, n)
            rv = rate(psi)
            i = int(np.argmin(rv))
            res = minimize_scalar(lambda p: float(rate(p)), method="bounded",
                                  bounds=(psi[max(i - 1, 0)], psi[min(i + 1, n - 1)]),
                                  options={"xatol": 1e-12})
            self._beta = float(min(rv[i], res.fun))
        return self._beta

    def stop_time_bound(self, x0) -> float:
        """Upper bound ``sqrt(2 E0/m)/beta`` (s) of the stop time from ``x0 = (u_x, u_y,
        rho omega_z)`` (m/s): the energy speed falls at least at :meth:`slowdown_rate` ``beta``
        whatever the direction does. ``inf`` when ``beta <= 0`` (the body may slide for ever)."""
        beta = self.slowdown_rate()
        return float(self.energy_speed(x0)) / beta if beta > 0 else math.inf

    # -------------------------------------------------------------------- sliding
    def simulate_sliding(self, x0, t_end: float | None = None, method: str = "tau",
                         r_min: float = 1e-12, rtol: float = 1e-10, atol: float = 1e-12,
                         max_tau: float | None = None, r_max: float = 1e6,
                         progress: bool = False) -> Trajectory:
        """Integrate from ``x0 = (u_x, u_y, rho omega_z)`` (m/s) until the body stops sliding or
        the horizon ``t_end`` (s; by default twice :meth:`stop_time_bound`); see
        :func:`fesub.circular.sliding.simulate_sliding` for the parameters (``method`` 'tau' in
        rescaled time or 't' in physical time, stop radius ``r_min``, ...).

        Returns
        -------
        Trajectory
            With ``status='interrupted'`` and the steps accepted so far when a KeyboardInterrupt
            arrives during the integration.
        """
        return simulate_sliding(self, x0, t_end=t_end, method=method, r_min=r_min, rtol=rtol,
                                atol=atol, max_tau=max_tau, r_max=r_max, progress=progress)


# ------------------------------------------------------------------------ limit directions
def _classify(system: ReducedContactSystem, w, lam_c, rdot, tol=1e-10) -> LimitDirection:
    C = float(system.model.CS(w[2])[0])
    lam_p = -(system.mu_g * system.A * C + rdot)
    sc = system.mu_g * tol
    kind = "attracting" if rdot < -sc else ("repelling" if rdot > sc else "tangent")
    if abs(lam_c) <= sc or abs(lam_p) <= sc:
        st = "non-hyperbolic"
    elif lam_c < 0 and lam_p < 0:
        st = "stable node"
    elif lam_c > 0 and lam_p > 0:
        st = "unstable node"
    elif lam_c < 0:
        st = "saddle-stable-in-circle"
    else:
        st = "saddle-unstable-in-circle"
    colour = COLOURS.get((kind, st), "grey")
    return LimitDirection(np.asarray(w, float), float(rdot), float(lam_c), float(lam_p), kind, st,
                          colour)


def find_limit_directions(system: ReducedContactSystem, n: int = 4001):
    """All limit directions on the invariant circle ``w2 = 0``, classified.

    Parameters
    ----------
    system : ReducedContactSystem
        The body (mass in kg, force in N, gravity in m/s^2) and its friction model.
    n : int
        Samples of ``psi`` in (0, pi) used to bracket the roots of ``m(psi) = f`` (-).

    Returns
    -------
    list of LimitDirection
        The trivial directions ``(1, 0, 0)`` and ``(-1, 0, 0)`` first, then the non-trivial ones in
        pairs ``(w1, 0, +-w3)``.
    """
    from scipy.optimize import brentq

    mg = system.mu_g
    f = system.f
    out = []
    k1 = float(system.k(0.0))
    for sgn in (1.0, -1.0):
        w = np.array([sgn, 0.0, 0.0])
        lam_c = mg * (k1 - sgn * f)
        out.append(_classify(system, w, lam_c, float(system.radial(w))))
    psi = np.linspace(0.0, math.pi, n)[1:-1]
    h = system.circle_m(psi) - f
    roots = []
    for i in range(psi.size - 1):
        if h[i] == 0.0:
            roots.append(psi[i])
        elif h[i] * h[i + 1] < 0:
            roots.append(brentq(lambda x: float(system.circle_m(x)) - f, psi[i], psi[i + 1],
                                xtol=1e-14, rtol=1e-15))
    for p in roots:
        dm = float(system.circle_m_prime(p))
        lam_c = mg * math.sin(p) * dm
        for s in (1.0, -1.0):
            w = np.array([math.cos(p), 0.0, s * math.sin(p)])
            out.append(_classify(system, w, lam_c, float(system.radial(w))))
    return out


def find_limit_directions_sphere(system: ReducedContactSystem, n_seeds: int = 200,
                                 tol: float = 1e-10):
    """Limit directions anywhere on the sphere by multistart root finding (generic check).

    Solves ``F_o(w) - rdot w = 0``, ``|w|^2 = 1`` for ``(w, rdot)`` from Fibonacci-sphere seeds and
    removes duplicates. Returns an (m, 3) array of directions.

    Parameters
    ----------
    system : ReducedContactSystem
        The body (mass in kg, force in N, gravity in m/s^2) and its friction model.
    n_seeds : int
        Number of seeds (-).
    tol : float
        Acceptance of a root: its circumferential field must stay below ``1e3 tol mu g``
        (dimensionless, relative to ``mu g``).

    Returns
    -------
    numpy.ndarray (m, 3)
        Unit directions (dimensionless).
    """
    from scipy.optimize import root

    i = np.arange(n_seeds) + 0.5
    z = 1.0 - 2.0 * i / n_seeds
    a = math.pi * (1.0 + 5 ** 0.5) * i
    seeds = np.stack([np.sqrt(1 - z * z) * np.cos(a), np.sqrt(1 - z * z) * np.sin(a), z], axis=1)

    def eqs(y):
        w = y[:3]
        Fo = system.field(w) if np.linalg.norm(w) > 0 else np.zeros(3)
        return np.concatenate([Fo - y[3] * w, [w @ w - 1.0]])

    found = []
    for s in seeds:
        y0 = np.concatenate([s, [float(system.radial(s))]])
        sol = root(eqs, y0, method="hybr", options={"xtol": 1e-13})
        if not sol.success:
            continue
        w = sol.x[:3] / np.linalg.norm(sol.x[:3])
        if np.linalg.norm(system.circumferential(w)) > tol * system.mu_g * 1e3:
            continue
        if not any(np.linalg.norm(w - g) < 1e-6 for g in found):
            found.append(w)
    return np.array(found).reshape(-1, 3)


def bifurcation_values(system: ReducedContactSystem) -> dict:
    """``{'F_T': N, 'F_P': N, 'folds': [...], 'F_F': N or None}`` for the system's model.

    Parameters
    ----------
    system : ReducedContactSystem
        The body (mass in kg, gravity in m/s^2) and its friction model; its force is not used.

    Returns
    -------
    dict
        Tangency ``F_T`` and pitchfork ``F_P`` forces (N), the folds (each with its force ``F`` in
        N) and the largest fold force ``F_F`` (N, None without a fold).
    """
    folds = system.folds()
    return {"F_T": system.F_T, "F_P": system.F_P, "folds": folds,
            "F_F": max((d["F"] for d in folds), default=None)}


def limit_direction_diagram(system: ReducedContactSystem, F_grid,
                            progress: bool = False) -> dict:
    """Limit directions against the force (for Fig. 13-14 style diagrams).

    Returns arrays ``F`` (N), ``psi`` (rad), ``w3``, ``rdot`` and ``colour`` (one row per limit
    direction and force).

    Parameters
    ----------
    system : ReducedContactSystem
        The body and its friction model; its force is replaced by each of ``F_grid``.
    F_grid : array_like
        Forces scanned (N).
    progress : bool
        Show a progress bar.
    """
    F_grid = np.asarray(F_grid, float)
    if F_grid.ndim != 1 or not np.all(np.isfinite(F_grid)):
        raise ParameterError("F_grid must be a 1-D array of finite forces")
    it = F_grid
    if progress:
        from tqdm.auto import tqdm

        it = tqdm(F_grid, desc="limit directions")
    rows = []
    for F in it:
        for d in find_limit_directions(system.with_force(float(F)), n=1201):
            rows.append((F, d.psi, d.w[2], d.rdot, d.colour))
    if not rows:
        return {"F": np.zeros(0), "psi": np.zeros(0), "w3": np.zeros(0), "rdot": np.zeros(0),
                "colour": np.zeros(0, dtype=str)}
    F, psi, w3, rd, col = zip(*rows)
    return {"F": np.array(F), "psi": np.array(psi), "w3": np.array(w3), "rdot": np.array(rd),
            "colour": np.array(col)}
