"""Constant (0th) harmonic term, static preload and the scalar contact laws of fesub.hbm.laws
(unilateral penalty contact, tanh-regularised Coulomb friction, user functions), against
independent references: closed forms, central finite differences, AFT sample-count convergence
and long time integration (scipy's DOP853 at tight tolerances)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fesub.errors import ModelError, ParameterError
from fesub.hbm.contact import Jenkins, StickSlipSeparation
from fesub.hbm.fourier import aft_matrix, aft_projection, basis, global_index, harmonic_amplitudes
from fesub.hbm.system import ContactElement, HBSystem

RNG = np.random.default_rng(7)


# ---------------------------------------------------------------- harmonic basis
def test_basis_with_constant_term():
    nh = 4
    tau = np.linspace(0.0, 6.0, 13)
    for d in (0, 1, 2):
        H0 = basis(nh, tau, d, constant=True)
        np.testing.assert_array_equal(H0[:, 1:], basis(nh, tau, d))
        np.testing.assert_array_equal(H0[:, 0], 1.0 if d == 0 else 0.0)
    # sampling then projecting a trigonometric polynomial of degree nh returns its coefficients,
    # mean included (the trapezoidal rule is exact below degree nt - nh; 1e-13: rounding of
    # sums of nt = 16 terms of O(1))
    X = RNG.normal(size=2 * nh + 1)
    for nt in (2 * nh + 2, 16):
        x = aft_matrix(nh, nt, constant=True) @ X
        np.testing.assert_allclose(aft_projection(nh, nt, constant=True) @ x, X, atol=1e-13)
    # without the constant term the projection is the former (2/nt) E^T
    E = aft_matrix(nh, 16)
    np.testing.assert_allclose(aft_projection(nh, 16), (2.0 / 16) * E.T, rtol=1e-15)
    assert global_index(3, nh, 1, 0, "c", constant=True) == 1
    assert global_index(3, nh, 1, 1, "s", constant=True) == 2 * 3 + 1
    with pytest.raises(ParameterError):
        global_index(3, nh, 1, 0, "c")
    Q = np.arange(3.0 * (2 * nh + 1))
    A = harmonic_amplitudes(Q, 3, nh, 2, constant=True)
    assert A[0] == 2.0 and A[1] == pytest.approx(math.hypot(5.0, 8.0))


# ---------------------------------------------------------------- system with the constant term
def _two_dof(nh, **kw):
    M = np.diag([1.0, 0.5])
    K = np.array([[2.0, -1.0], [-1.0, 1.5]])
    return HBSystem(M, 0.01 * K, K, nh, [], fex=np.array([1.0, 0.3]), dof=1, **kw)


def test_linear_system_with_constant_term_and_preload():
    """Linear structure: the mean is K^-1 f_s and the harmonics are those of the system
    without the constant term (the complex FRF), exactly."""
    nh, w = 3, 1.3
    fs = np.array([0.4, -0.2])
    on = _two_dof(nh, constant=True, fstatic=fs)
    off = _two_dof(nh)
    assert on.N == off.N + 2 and on.constant and not off.constant
    Q1 = on.linear_response(w, 0.7)
    Q0 = off.linear_response(w, 0.7)
    # 1e-13: two 8x8 / 6x6 solves of O(1) well-conditioned systems
    np.testing.assert_allclose(Q1[:2], np.linalg.solve(on.K, fs), rtol=1e-13)
    np.testing.assert_allclose(Q1[2:], Q0, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(on.residual(Q1, w, 0.7), 0.0, atol=1e-13)
    assert on.amplitude(Q1) == pytest.approx(off.amplitude(Q0), rel=1e-13)
    assert on.mean(Q1) == pytest.approx(np.linalg.solve(on.K, fs)[1], rel=1e-13)
    # derivatives of D in w: the mean block is K, constant in w (central differences of a
    # quadratic: exact up to rounding ~1e-16 / h)
    h = 1e-5
    np.testing.assert_allclose(on.D(w, 1), (on.D(w + h) - on.D(w - h)) / (2 * h), atol=1e-9)
    np.testing.assert_allclose(on.D(w, 2), (on.D(w + h, 1) - on.D(w - h, 1)) / (2 * h),
                               atol=1e-9)
    np.testing.assert_allclose(on.D_xi(w)[2:, 2:], off.D_xi(w), rtol=0)


def test_friction_elements_keep_the_decoupled_scheme():
    j = ContactElement(Jenkins(1.0, 0.1, 1.0), np.eye(1))
    s = ContactElement(StickSlipSeparation(1.0, 2.0, 0.3, 0.5), np.eye(2))
    # the friction elements have no constant term: default off, asking for it is an error
    assert not HBSystem(np.eye(1), np.eye(1), np.eye(1), 3, [j]).constant
    assert not HBSystem(np.eye(2), np.eye(2), np.eye(2), 3, [s]).constant
    with pytest.raises(ModelError):
        HBSystem(np.eye(1), np.eye(1), np.eye(1), 3, [j], constant=True)
    with pytest.raises(ParameterError):
        HBSystem(np.eye(1), np.eye(1), np.eye(1), 3, [j], constant="yes")
    with pytest.raises(ParameterError):
        HBSystem(np.eye(1), np.eye(1), np.eye(1), 3, [j], fstatic=[1.0, 2.0])
