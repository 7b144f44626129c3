"""Friction laws: the coefficient of friction as a function of the slip speed.

A law says how large the tangential force of a contact node may be against its normal force:

* :class:`Coulomb` ``(mu)``: one coefficient; stick while ``|lambda_t| <= mu lambda_n``, slip at
  ``mu``;
* :class:`StaticKinetic` ``(mu_s, mu_k)``: stick while ``|lambda_t| <= mu_s lambda_n``, slip at
  ``mu_k <= mu_s``;
* :class:`Stribeck` ``(mu_s, mu_k, v_s)``: velocity weakening; stick as above, slip at
  ``mu(v) = mu_k + (mu_s - mu_k) exp(-|v| / v_s)``;
* :class:`UserLaw` ``(fn)``: a law of your own, ``mu = fn(v)`` for a slip speed ``v >= 0`` (stick
  while ``|lambda_t| <= fn(0) lambda_n``), evaluated in Python: the slower path (each slipping
  node calls ``fn`` some 10-60 times per solve, outside the compiled kernels).

``lambda_n`` (N, >= 0) is the normal force, ``lambda_t`` the tangential force (a scalar in 2D, a
2-vector in the tangent plane in 3D), ``v`` the slip speed (m/s), coefficients dimensionless.
:func:`as_law` turns a number into :class:`Coulomb` and a callable into :class:`UserLaw`;
:func:`law_arrays` encodes one law per node as the flat arrays the compiled kernels read (a law
code and three numbers per node), so that each node may have its own law.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ...errors import ParameterError, check_positive

__all__ = ["Coulomb", "StaticKinetic", "Stribeck", "UserLaw", "as_law", "node_laws", "law_arrays",
           "LAW_CONSTANT", "LAW_STATIC_KINETIC", "LAW_STRIBECK"]

#: law codes of :func:`law_arrays` (the kernels' numbering): slip coefficient p1 constant
#: (0, 1) or p1 + (p0 - p1) exp(-v / p2) (2); the stick limit is p0 for every code
LAW_CONSTANT, LAW_STATIC_KINETIC, LAW_STRIBECK = 0, 1, 2


def _coefficient(name: str, value) -> float:
    return check_positive(f"{name} (dimensionless)", value, strict=False)


def _ordered(mu_s: float, mu_k: float) -> None:
    if mu_k > mu_s:
        raise ParameterError(f"the kinetic coefficient mu_k = {mu_k!r} must not exceed the static "
                             f"one mu_s = {mu_s!r} (0 <= mu_k <= mu_s)")


@dataclass(frozen=True)
class Coulomb:
    """Coulomb friction with one coefficient.

    Parameters
    ----------
    mu : float
        Friction coefficient (dimensionless, >= 0): stick while ``|lambda_t| <= mu lambda_n``,
        slip at ``mu``.
    """

    mu: float

    def __post_init__(self):
        object.__setattr__(self, "mu", _coefficient("mu", self.mu))

    @property
    def mu_static(self) -> float:
        """The stick limit (dimensionless)."""
        return self.mu

    def coefficient(self, v):
        """The slip coefficient at slip speed ``v`` (m/s, scalar or array): ``mu``."""
        return np.full(np.shape(v), self.mu) if np.ndim(v) else self.mu

    def slope(self, v):
        """d mu / d v (s/m) at slip speed ``v`` (m/s, scalar or array): 0 (a constant slip
        coefficient)."""
        return np.zeros(np.shape(v)) if np.ndim(v) else 0.0

    def encode(self) -> tuple[int, tuple[float, float, float]]:
        """(law code, (p0, p1, p2)) for the kernels (see :func:`law_arrays`)."""
        return LAW_CONSTANT, (self.mu, self.mu, 0.0)


@dataclass(frozen=True)
class StaticKinetic:
    """Static and kinetic coefficients: stick holds while ``|lambda_t| <= mu_s lambda_n``, a
    slipping node slips at ``mu_k``.

    Parameters
    ----------
    mu_s : float
        Static coefficient (dimensionless, >= 0).
    mu_k : float
        Kinetic coefficient (dimensionless, 0 <= mu_k <= mu_s).
    """

    mu_s: float
    mu_k: float

    def __post_init__(self):
        object.__setattr__(self, "mu_s", _coefficient("mu_s", self.mu_s))
        object.__setattr__(self, "mu_k", _coefficient("mu_k", self.mu_k))
        _ordered(self.mu_s, self.mu_k)

    @property
    def mu_static(self) -> float:
        """The stick limit ``mu_s`` (dimensionless)."""
        return self.mu_s

    def coefficient(self, v):
        """The slip coefficient at slip speed ``v`` (m/s, scalar or array): ``mu_k``."""
        return np.full(np.shape(v), self.mu_k) if np.ndim(v) else self.mu_k

    def slope(self, v):
        """d mu / d v (s/m) at slip speed ``v`` (m/s, scalar or array): 0 (a constant slip
        coefficient)."""
        return np.zeros(np.shape(v)) if np.ndim(v) else 0.0

    def encode(self) -> tuple[int, tuple[float, float, float]]:
        """(law code, (p0, p1, p2)) for the kernels (see :func:`law_arrays`)."""
        return LAW_STATIC_KINETIC, (self.mu_s, self.mu_k, 0.0)


@dataclass(frozen=True)
class Stribeck:
    """Velocity weakening: ``mu(v) = mu_k + (mu_s - mu_k) exp(-|v| / v_s)``; stick holds while
    ``|lambda_t| <= mu_s lambda_n``.

    Parameters
    ----------
    mu_s : float
        Static coefficient, the limit of ``mu(v)`` at ``v = 0`` (dimensionless, >= 0).
    mu_k : float
        Kinetic coefficient, the limit at high speed (dimensionless, 0 <= mu_k <= mu_s).
    v_s : float
        Stribeck speed (m/s, > 0): the coefficient has fallen by 1/e of ``mu_s - mu_k`` at
        ``|v| = v_s``.
    """

    mu_s: float
    mu_k: float
    v_s: float

    def __post_init__(self):
        object.__setattr__(self, "mu_s", _coefficient("mu_s", self.mu_s))
        object.__setattr__(self, "mu_k", _coefficient("mu_k", self.mu_k))
        object.__setattr__(self, "v_s", check_positive("v_s (m/s)", self.v_s))
        _ordered(self.mu_s, self.mu_k)

    @property
    def mu_static(self) -> float:
        """The stick limit ``mu_s`` (dimensionless)."""
        return self.mu_s

    def coefficient(self, v):
        """The slip coefficient at slip speed ``v`` (m/s, scalar or array)."""
        return self.mu_k + (self.mu_s - self.mu_k) * np.exp(-np.abs(v) / self.v_s)

    def slope(self, v):
        """d mu / d|v| (s/m) at slip speed ``v`` (m/s, scalar or array):
        ``-(mu_s - mu_k) exp(-|v| / v_s) / v_s`` (negative: the coefficient falls with speed)."""
        return -(self.mu_s - self.mu_k) / self.v_s * np.exp(-np.abs(v) / self.v_s)

    def encode(self) -> tuple[int, tuple[float, float, float]]:
        """(law code, (p0, p1, p2)) for the kernels (see :func:`law_arrays`)."""
        return LAW_STRIBECK, (self.mu_s, self.mu_k, self.v_s)


@dataclass(frozen=True)
class UserLaw:
    """A friction law of your own: ``mu = fn(v)`` for a slip speed ``v >= 0`` (m/s).

    Stick holds while ``|lambda_t| <= fn(0) lambda_n``. ``fn`` takes one float and returns one
    float (dimensionless, finite, >= 0). The slower path: the compiled kernels cannot call
    Python, so a node with this law is solved with ``fn`` evaluated in Python (some 10-60 calls
    per slipping node and solve, see :mod:`fesub.contact.engine.cone`); the built-in laws run
    entirely in the kernels.

    Parameters
    ----------
    fn : callable
        ``fn(v) -> mu`` (v in m/s, mu dimensionless).
    """

    fn: Callable[[float], float]

    def __post_init__(self):
        if not callable(self.fn):
            raise ParameterError(f"a user friction law must be a callable mu(v), got {self.fn!r:.60}")
        self.coefficient(0.0)
        self.coefficient(1.0)

    @property
    def mu_static(self) -> float:
        """The stick limit ``fn(0)`` (dimensionless)."""
        return self.coefficient(0.0)

    def coefficient(self, v):
        """``fn(|v|)`` (dimensionless) at slip speed ``v`` (m/s, scalar or array), checked finite
        and >= 0."""
        if np.ndim(v):
            return np.array([self.coefficient(x) for x in np.ravel(v)]).reshape(np.shape(v))
        try:
            mu = float(self.fn(abs(float(v))))
        except (TypeError, ValueError) as exc:
            raise ParameterError(f"the user friction law must return a real number, got {exc}") from None
        if not (math.isfinite(mu) and mu >= 0.0):
            raise ParameterError(f"the user friction law returned mu = {mu!r} at v = {float(v)!r} m/s; "
                                 "it must be finite and >= 0")
        return mu

    def slope(self, v):
        """d mu / d|v| (s/m) at slip speed ``v`` (m/s, scalar or array) by a central difference
        of ``fn`` with step ``1e-6 max(|v|, 1e-3 m/s)`` (one-sided from 0 at ``v = 0``): its error is
        of order ``1e-12`` of the curvature for a smooth ``fn``."""
        if np.ndim(v):
            return np.array([self.slope(x) for x in np.ravel(v)]).reshape(np.shape(v))
        v = abs(float(v))
        h = 1e-6 * max(v, 1e-3)
        lo = max(v - h, 0.0)
        return (self.coefficient(v + h) - self.coefficient(lo)) / (v + h - lo)

    def encode(self):
        """A user law has no kernel code: it is solved in Python."""
        raise ParameterError("a user friction law (a Python callable) cannot be encoded for the "
                             "compiled kernels; it is solved node by node in Python")


#: the laws a node can have
Law = Coulomb | StaticKinetic | Stribeck | UserLaw


def as_law(law) -> Law:
    """A friction law from a law, a number (:class:`Coulomb`) or a callable (:class:`UserLaw`)."""
    if isinstance(law, (Coulomb, StaticKinetic, Stribeck, UserLaw)):
        return law
    if callable(law):
        return UserLaw(law)
    if isinstance(law, (bool, str, bytes)) or np.ndim(law) != 0:
        raise ParameterError(f"a friction law must be a number (Coulomb mu), a law (Coulomb, "
                             f"StaticKinetic, Stribeck) or a callable mu(v), got {law!r:.60}")
    return Coulomb(law)


def node_laws(laws, n: int) -> list:
    """One law per node: ``laws`` is one law (for all ``n`` nodes) or a sequence of ``n``."""
    if isinstance(laws, (list, tuple)) or (isinstance(laws, np.ndarray) and laws.ndim == 1):
        if len(laws) != n:
            raise ParameterError(f"friction laws: one for all nodes or one per node ({n}), "
                                 f"got {len(laws)}")
        return [as_law(x) for x in laws]
    law = as_law(laws)
    return [law] * n


def law_arrays(laws, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The per-node law arrays the compiled kernels read.

    Parameters
    ----------
    laws : law, number, callable or sequence of them
        One law for all ``n`` nodes, or one per node.
    n : int
        Number of nodes.

    Returns
    -------
    code : (n,) int64 array
        :data:`LAW_CONSTANT`, :data:`LAW_STATIC_KINETIC` or :data:`LAW_STRIBECK`.
    params : (n, 3) float array
        (p0, p1, p2) per node: stick limit (dimensionless), slip coefficient (the kinetic one
        for Stribeck, dimensionless), Stribeck speed (m/s; 0 for the other laws).
    user : (n,) bool array
        True where the node's law is a :class:`UserLaw` (its code and params then hold its
        ``fn(0)`` as a constant law: such nodes must be solved in Python).
    """
    per_node = node_laws(laws, n)
    code = np.zeros(n, np.int64)
    params = np.zeros((n, 3))
    user = np.zeros(n, bool)
    for i, law in enumerate(per_node):
        if isinstance(law, UserLaw):
            user[i] = True
            mu0 = law.mu_static
            code[i], params[i] = LAW_CONSTANT, (mu0, mu0, 0.0)
        else:
            c, p = law.encode()
            code[i], params[i] = c, p
    return code, params, user
