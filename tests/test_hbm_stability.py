"""Cubic (Duffing) element and the stability of harmonic-balance solutions (Hill's method)
against independent references: central finite differences, the closed form of cos^3, shooting
(monodromy matrices of time integration by scipy's solve_ivp and by an event-exact Jenkins
integration), long time integration and the first-harmonic frequency-response equation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fesub.errors import ParameterError
from fesub.hbm.cubic import Cubic
from fesub.hbm.system import ContactElement, HBSystem

# Duffing oscillator m u'' + c u' + k u + k3 u^3 = F cos(w t) of the acceptance tests
DM, DC, DK, DK3, DF = 1.0, 0.02, 1.0, 0.1, 0.05


def duffing(nh=9, k3=DK3, c=DC):
    return HBSystem(DM * np.eye(1), c * np.eye(1), DK * np.eye(1), nh,
                    [ContactElement(Cubic(k3), np.eye(1), "cubic")], fex=0, dof=0)


def _fd(fun, x, h):
    """Central differences of a vector function (columns: d fun / d x_j)."""
    cols = []
    for j in range(x.size):
        e = np.zeros_like(x)
        e[j] = h
        cols.append((fun(x + e) - fun(x - e)) / (2 * h))
    return np.stack(cols, axis=-1)


# ----------------------------------------------------------------------------- cubic element
def test_cubic_single_harmonic_closed_form():
    # cos^3 = 3/4 cos + 1/4 cos 3: F^c1 = 3/4 k3 a^3, F^c3 = 1/4 k3 a^3, all else 0
    el, nh, a = Cubic(2.5), 4, 0.3
    X = np.zeros(2 * nh)
    X[0] = a
    r = el.evaluate(X, nh)
    ref = np.zeros(2 * nh)
    ref[0], ref[4] = 0.75 * 2.5 * a ** 3, 0.25 * 2.5 * a ** 3
    np.testing.assert_allclose(r.F, ref, atol=1e-15)


@pytest.mark.parametrize("nh", [1, 3, 9])
def test_cubic_derivatives_vs_central_differences(nh):
    rng = np.random.default_rng(nh)
    el = Cubic(-1.7)
    X = rng.normal(size=2 * nh) / np.arange(1, 2 * nh + 1)
    lam = rng.normal(size=2 * nh)
    r = el.evaluate(X, nh, hessian=True, lam=lam)
    # F is a cubic polynomial in X: the central-difference error is h^2/6 |F'''| ~ 1e-12 with
    # h = 1e-6 and |F'''| ~ 6 |k3|, rounding ~ 1e-16 |F| / h ~ 1e-10: 1e-6 relative holds with
    # margin; K is quadratic in X, its central difference is exact up to rounding
    h = 1e-6
    Kfd = _fd(lambda x: el.evaluate(x, nh).F, X, h)
    np.testing.assert_allclose(r.K, Kfd, rtol=1e-6, atol=1e-6 * np.abs(r.K).max())
    Hfd = _fd(lambda x: el.evaluate(x, nh).K, X, h)
    np.testing.assert_allclose(r.hess, Hfd, rtol=1e-6, atol=1e-6 * np.abs(r.hess).max())
    np.testing.assert_allclose(r.hess_lam, np.einsum("i,iab->ab", lam, r.hess), rtol=1e-12,
                               atol=1e-13 * np.abs(r.hess_lam).max())
    # more samples than the exact minimum change nothing but rounding
    np.testing.assert_allclose(el.evaluate(X, nh, nt=512).K, r.K, rtol=1e-12,
                               atol=1e-13 * np.abs(r.K).max())


def test_cubic_in_hbsystem_jacobian_vs_central_differences():
    sy = HBSystem(np.diag([1.0, 2.0]), 0.01 * np.eye(2), np.array([[2.0, -1.0], [-1.0, 1.0]]), 5,
                  [ContactElement(Cubic(0.8), np.array([[1.0, -1.0]]), "spring")],
                  fex=np.array([1.0, 0.0]), dof=1)
    rng = np.random.default_rng(3)
    Q = 0.3 * rng.normal(size=sy.N)
    w = 1.1
    _, RQ, Rw, _ = sy.jacobian(Q, w, 0.7)
    # residual cubic in Q: relative error of central differences ~ h^2 = 1e-12
    np.testing.assert_allclose(RQ, _fd(lambda q: sy.residual(q, w, 0.7), Q, 1e-6), rtol=1e-6,
                               atol=1e-6 * np.abs(RQ).max())
    Fl, Kl, HL = sy.fnl(Q, lam=rng.normal(size=sy.N))
    assert HL is not None and np.all(np.isfinite(HL))


def test_cubic_rejects_bad_input():
    with pytest.raises(ParameterError, match="k3"):
        Cubic(0.0)
    with pytest.raises(ParameterError, match="k3"):
        Cubic(float("inf"))
    with pytest.raises(ParameterError, match="nt"):
        Cubic(1.0).evaluate(np.zeros(6), 3, nt=12)
    with pytest.raises(ParameterError, match="length"):
        Cubic(1.0).evaluate(np.zeros(5), 3)
