"""Chain model and contact configurations of the MDOF Coulomb study.

A chain of ``N`` masses: mass 0 is tied to the ground by spring 0, spring ``i`` joins masses
``i-1`` and ``i``. Everything is non-dimensional (spec section 1):

* ``gamma[i] = m_i / m_0`` and ``kappa[i] = k_i / k_0`` (so ``gamma[0] = kappa[0] = 1``);
* ``r1 = omega * sqrt(m_0 / k_0)`` is the frequency ratio, ``beta = F / P`` the friction ratio and
  ``mu >= 1`` the static/kinetic friction ratio;
* displacements are scaled by ``P / k_0`` and time by ``tau = omega t``.

Indices count from 0 in code (the paper counts from 1).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.linalg

from ..errors import ModelError, ParameterError

__all__ = ["ChainModel", "CoulombContact", "check_index", "check_mu", "as_r1", "as_beta"]


def check_index(name: str, value, n: int) -> int:
    """Return ``int(value)`` if it is an integer in ``[0, n-1]``, else raise ParameterError."""
    try:
        iv = int(value)
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be an integer mass index, got {value!r}") from None
    if iv != value or not 0 <= iv < n:
        raise ParameterError(f"{name} must be a mass index in [0, {n - 1}] (0-based), got {value!r}")
    return iv


def check_mu(mu) -> float:
    """Static/kinetic friction ratio: finite and >= 1."""
    try:
        m = float(mu)
    except (TypeError, ValueError):
        raise ParameterError(f"mu (static/kinetic friction ratio) must be a real number, got {mu!r}") from None
    if not (np.isfinite(m) and m >= 1.0):
        raise ParameterError(f"mu (static/kinetic friction ratio) must be finite and >= 1, got {mu!r}")
    return m


def _as_array(name: str, values, *, lo: float, strict: bool, what: str) -> np.ndarray:
    try:
        a = np.atleast_1d(np.asarray(values, dtype=float))
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be an array of real numbers, got {values!r}") from None
    if a.ndim != 1:
        raise ParameterError(f"{name} must be a scalar or a 1-D array, got shape {a.shape}")
    if a.size == 0:
        raise ParameterError(f"{name} must not be empty ({what})")
    bad = ~np.isfinite(a) | ((a <= lo) if strict else (a < lo))
    if bad.any():
        rng = f"> {lo}" if strict else f">= {lo}"
        raise ParameterError(f"{name} ({what}) must be finite and {rng}; got {a[bad][:3].tolist()}")
    return a


def as_r1(r1) -> np.ndarray:
    """Validate the frequency ratio(s) r1 = omega sqrt(m_0/k_0): finite, > 0, non-empty."""
    return _as_array("r1", r1, lo=0.0, strict=True, what="frequency ratio omega*sqrt(m1/k1)")


def as_beta(beta) -> np.ndarray:
    """Validate the friction ratio(s) beta = F/P: finite, >= 0, non-empty."""
    return _as_array("beta", beta, lo=0.0, strict=False, what="friction ratio F/P")


@dataclass(frozen=True)
class ChainModel:
    """Chain of N masses with mass ratios ``gamma`` and stiffness ratios ``kappa``.

    Parameters
    ----------
    gamma : array_like, shape (N,)
        Mass ratios ``m_i / m_0`` (dimensionless, > 0). ``gamma[0]`` must be 1.
    kappa : array_like, shape (N,)
        Stiffness ratios ``k_i / k_0`` (dimensionless, > 0). ``kappa[0]`` must be 1; spring 0
        ties mass 0 to the ground, spring ``i`` joins masses ``i-1`` and ``i``.

    Attributes
    ----------
    K : ndarray (N, N)
        Non-dimensional stiffness matrix (Eq. 10).
    Gamma : ndarray (N,)
        Diagonal of the mass-ratio matrix.
    lam : ndarray (N,)
        Eigenvalues of ``K phi = lam Gamma phi``; the natural frequency ratios are ``sqrt(lam)``.
    phi : ndarray (N, N)
        Mode shapes in columns, ``phi.T @ diag(Gamma) @ phi = I``. The frequency-dependent
        mass-normalised shapes of the paper are ``psi_i = phi_i / r1`` (spec section 2).
    """

    gamma: np.ndarray
    kappa: np.ndarray
    K: np.ndarray = field(init=False, repr=False)
    lam: np.ndarray = field(init=False, repr=False)
    phi: np.ndarray = field(init=False, repr=False)

    def __post_init__(self):
        g = _as_array("gamma", self.gamma, lo=0.0, strict=True, what="mass ratios m_i/m_1")
        k = _as_array("kappa", self.kappa, lo=0.0, strict=True, what="stiffness ratios k_i/k_1")
        if g.size != k.size:
            raise ModelError(f"gamma and kappa must have the same length (N masses), got {g.size} and {k.size}")
        if g[0] != 1.0 or k[0] != 1.0:
            raise ParameterError(
                "gamma[0] and kappa[0] must be 1 (ratios to the first mass and spring); "
                f"got {g[0]!r} and {k[0]!r}; use ChainModel.from_physical(m, k) for raw values"
            )
        n = g.size
        K = np.zeros((n, n))
        kk = np.append(k, 0.0)
        for i in range(n):
            K[i, i] = kk[i] + kk[i + 1]
            if i + 1 < n:
                K[i, i + 1] = K[i + 1, i] = -kk[i + 1]
        lam, phi = scipy.linalg.eigh(K, np.diag(g))
        object.__setattr__(self, "gamma", g)
        object.__setattr__(self, "kappa", k)
        object.__setattr__(self, "K", K)
        object.__setattr__(self, "lam", lam)
        object.__setattr__(self, "phi", phi)

    @classmethod
    def from_physical(cls, masses, stiffnesses) -> "ChainModel":
        """Chain from masses (kg) and stiffnesses (N/m), normalised by the first of each."""
        m = _as_array("masses", masses, lo=0.0, strict=True, what="masses in kg")
        k = _as_array("stiffnesses", stiffnesses, lo=0.0, strict=True, what="stiffnesses in N/m")
        return cls(m / m[0], k / k[0])

    @classmethod
    def uniform(cls, n: int) -> "ChainModel":
        """Chain of ``n`` equal masses and springs (the paper's unit chains)."""
        n = int(n)
        if n < 1:
            raise ParameterError(f"n (number of masses) must be >= 1, got {n}")
        return cls(np.ones(n), np.ones(n))

    @property
    def n(self) -> int:
        """Number of masses N."""
        return self.gamma.size

    @property
    def natural_r1(self) -> np.ndarray:
        """Natural frequencies as frequency ratios ``omega_i sqrt(m_0/k_0) = sqrt(lam_i)``."""
        return np.sqrt(self.lam)

    def to_dict(self) -> dict:
        """Plain-Python description (picklable, JSON-able)."""
        return {"gamma": self.gamma.tolist(), "kappa": self.kappa.tolist()}


@dataclass(frozen=True)
class CoulombContact:
    """Where the single Coulomb contact sits (spec section 6, unified notation).

    Use the constructors: :meth:`wall` (mass ``j`` against a fixed wall), :meth:`masses`
    (between masses ``a < b``; the relative coordinate is ``x_b - x_a``) or :meth:`base`
    (mass ``j`` against a base that moves as ``cos(tau)`` and also drives mass 0 through spring 0:
    joined base-wall excitation; the load is then on mass 0 and displacements are scaled by the
    base amplitude Y).

    Parameters
    ----------
    kind : str
        ``"wall"``, ``"masses"`` or ``"base"``.
    a : int
        Mass index (-, 0-based): the contacting mass ``j``, or the first mass of a pair.
    b : int
        Second mass of a ``"masses"`` contact (-, 0-based); -1 otherwise.
    """

    kind: str
    a: int
    b: int = -1

    @classmethod
    def wall(cls, j: int) -> "CoulombContact":
        return cls("wall", int(j))

    @classmethod
    def masses(cls, a: int, b: int) -> "CoulombContact":
        a, b = int(a), int(b)
        if a == b:
            raise ParameterError(f"a contact between masses needs two different indices, got a = b = {a}")
        return cls("masses", min(a, b), max(a, b))

    @classmethod
    def base(cls, j: int) -> "CoulombContact":
        return cls("base", int(j))

    @classmethod
    def from_spec(cls, spec) -> "CoulombContact":
        """Build from a CoulombContact, or a dict/str like ``{"kind": "wall", "j": 0}``,
        ``"wall:0"``, ``"masses:0,1"``, ``"base:0"``."""
        if isinstance(spec, CoulombContact):
            return spec
        if isinstance(spec, str):
            kind, _, rest = spec.partition(":")
            try:
                idx = [int(s) for s in rest.split(",") if s.strip()] if rest else []
            except ValueError:
                idx = []   # not integers: the error below names the accepted forms
            spec = {"kind": kind.strip(), "idx": idx}
        if isinstance(spec, dict):
            kind = spec.get("kind")
            idx = spec.get("idx")
            if idx is None:
                idx = [spec[k] for k in ("j", "a", "b") if k in spec]
            try:
                if kind == "wall" and len(idx) == 1:
                    return cls.wall(idx[0])
                if kind == "base" and len(idx) == 1:
                    return cls.base(idx[0])
                if kind == "masses" and len(idx) == 2:
                    return cls.masses(idx[0], idx[1])
            except (TypeError, ValueError):
                pass
        raise ParameterError(
            f"contact must be 'wall:j', 'masses:a,b' or 'base:j' (0-based indices), got {spec!r}"
        )

    def validate(self, n: int) -> None:
        """Check the indices against a chain of ``n`` masses."""
        if self.kind not in ("wall", "masses", "base"):
            raise ParameterError(f"contact kind must be 'wall', 'masses' or 'base', got {self.kind!r}")
        check_index("contact mass index", self.a, n)
        if self.kind == "masses":
            check_index("contact mass index b", self.b, n)

    def vector(self, n: int) -> np.ndarray:
        """Contact vector w: the relative coordinate is ``w @ x - b_amp cos(tau)``."""
        self.validate(n)
        w = np.zeros(n)
        if self.kind == "masses":
            w[self.b] = 1.0
            w[self.a] = -1.0
        else:
            w[self.a] = 1.0
        return w

    @property
    def b_amp(self) -> float:
        """Amplitude of the wall motion (1 for the moving base, else 0)."""
        return 1.0 if self.kind == "base" else 0.0

    def load_index(self, load) -> int:
        """The loaded mass; a moving base always loads mass 0 (through spring 0)."""
        return 0 if self.kind == "base" else int(load)

    def to_dict(self) -> dict:
        if self.kind == "masses":
            return {"kind": "masses", "idx": [self.a, self.b]}
        return {"kind": self.kind, "idx": [self.a]}

    def spec(self) -> str:
        """The short form :meth:`from_spec` reads: ``"wall:0"``, ``"masses:0,1"``, ``"base:0"``."""
        return f"{self.kind}:{','.join(str(i) for i in self.to_dict()['idx'])}"

    def label(self) -> str:
        if self.kind == "masses":
            return f"masses {self.a + 1}-{self.b + 1}"
        return f"{self.kind} on mass {self.a + 1}"
