"""Free-play laws, sigmoid admissibility, radius of influence (spec 2, facts P1 and 4.2)."""

from __future__ import annotations


import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import optimize

from fesub.errors import ParameterError
from fesub.nonsmooth import (SIGMOIDS, FreePlay, FreePlayParams, SigmoidFreePlay, check_sigmoid,
                             delta_for_radius, influence_constant, radius_of_influence,
                             radius_of_influence_closed_form, spurious_force_peak,
                             vector_field_error)

KP, A, DELTA = 10.0, 0.05, 1500.0


@pytest.fixture(scope="module")
def law():
    return SigmoidFreePlay(KP, A, DELTA)


# ---- P1: radius of influence -----------------------------------------------------------------

def test_radius_of_influence_paper_value(law):
    R, E_inf = radius_of_influence(law)
    # paper prints R_i = 0.0017 (2 significant digits): within 5e-5 (spec 4.3)
    assert abs(R - 0.0017) < 5e-5
    # spec value 0.0017187 (5 digits printed)
    assert abs(R - 0.0017187) < 5e-8
    # paper: 3.4 % of the half-gap (printed to 0.1 %)
    assert abs(100 * R / A - 3.4) < 0.05
    # E_inf = pi^2 / (6 delta^2) = 7.3108e-7 (spec, 5 digits)
    assert abs(E_inf - 7.3108e-7) < 5e-11


def test_radius_quadrature_equals_closed_form(law):
    # closed form is exact up to exp(-2 a delta) ~ e^-150 terms; the quadratures are converged
    # to ~1e-13 relative, so 1e-9 (spec 4.3) is a safe absolute bound on R_i
    for frac in (0.5, 0.68, 0.6827, 0.9, 0.95):
        Rq, Eq = radius_of_influence(law, frac)
        Rc, Ec = radius_of_influence_closed_form(DELTA, frac)
        assert abs(Rq - Rc) < 1e-9
        assert abs(Eq - Ec) < 1e-9 * Ec


@pytest.mark.parametrize("frac, expected", [(0.6827, 1.7268e-3), (0.5, 1.2611e-3),
                                            (0.9, 2.7499e-3), (0.95, 3.3172e-3)])
def test_radius_other_fractions(frac, expected):
    R, _ = radius_of_influence_closed_form(DELTA, frac)
    assert abs(R - expected) < 5e-8  # spec values printed to 5 significant digits


def test_influence_constant_and_delta_choice():
    assert abs(influence_constant(0.68) - 2.578019) < 5e-7  # spec U* printed to 7 digits
    # rho = 3.4 % with a = 0.05 gives delta of about 1516 (spec 2.4)
    assert abs(delta_for_radius(A, 0.034) - 1516) < 1.0
    # R_i does not depend on kp or a
    R1, _ = radius_of_influence(SigmoidFreePlay(1.0, 0.2, DELTA))
    R2, _ = radius_of_influence(SigmoidFreePlay(KP, A, DELTA))
    assert abs(R1 - R2) < 1e-9


def test_spurious_force_peak_matches_direct_maximisation(law):
    F, depth = spurious_force_peak(law)
    assert abs(F - 1.8564e-3) < 5e-8  # spec 4.2, 5 digits
    # independent: maximise Fps numerically inside the gap near x = -a
    res = optimize.minimize_scalar(lambda x: -law.force(x), bounds=(-A, -A + 20 / DELTA),
                                   method="bounded", options={"xatol": 1e-12})
    assert abs(-res.fun - F) < 1e-9 * KP
    assert abs((res.x + A) - depth) < 1e-6  # argmax is flat: 1e-6 of a 8.5e-4 depth
    # ratio to the linear restoring force at the gap edge (reported, spec 2.4): 3.7 %
    assert abs(F / (1.0 * A) * 100 - 3.7) < 0.05


# ---- the laws ----------------------------------------------------------------------------------

def test_exact_law_regions_and_sign_form():
    fp = FreePlay(KP, A)
    x = np.linspace(-0.3, 0.3, 2001)
    # Eq. 9 (sign form) equals Eq. 1
    eq9 = KP * (x + A) / 2 * (np.sign(-x - A) + 1) + KP * (x - A) / 2 * (np.sign(x - A) + 1)
    assert_allclose(fp.force(x), eq9, atol=1e-15)
    assert_allclose(fp.jumps(), 0.0, atol=0)
    assert fp.lipschitz == KP and fp.continuity == "C0-Lipschitz"
    assert fp.force(0.1) == pytest.approx(KP * 0.05) and fp.force(-0.1) == pytest.approx(-KP * 0.05)


def test_logistic_equals_eq8_and_eq7_corrected(law):
    x = np.linspace(-0.2, 0.2, 4001)
    # Eq. 8 written with exp (safe on this range: delta |z| <= 375)
    eq8 = KP * (A + x) / (np.exp(DELTA * (A + x)) + 1) - KP * (A - x) / (np.exp(DELTA * (A - x)) + 1)
    assert_allclose(law.force(x), eq8, rtol=1e-12, atol=1e-15)
    y = np.linspace(-0.01, 0.01, 101)
    # corrected Eq. 7: 2/(1+exp(-delta y)) - 1 = tanh(delta y / 2)
    assert_allclose(SIGMOIDS["logistic"][0](y, DELTA), 2 / (1 + np.exp(-DELTA * y)) - 1,
                    atol=1e-14)


@pytest.mark.parametrize("name", sorted(SIGMOIDS))
def test_smoothed_law_properties(name):
    law = SigmoidFreePlay(KP, A, DELTA, sigmoid=name)
    x = np.linspace(-1.5, 1.5, 30001)
    with np.errstate(over="raise", invalid="raise", divide="raise"):  # safe at delta |z| ~ 2400
        F = law.force(x)
        k = law.stiffness(x)
    assert_allclose(F, -law.force(-x), atol=1e-15)  # odd
    far = np.abs(np.abs(x) - A) > 0.05
    if name == "algebraic":  # algebraic tails decay like 1/(delta z)^2, not exponentially
        assert np.max(np.abs(F - FreePlay(KP, A).force(x))[far]) < KP / DELTA ** 2 * 10
    else:  # exponential convergence to Fp away from +-a
        assert np.max(np.abs(F - FreePlay(KP, A).force(x))[far]) < 1e-12
    # stiffness = dF/dx: central differences, step 1e-7 (band width ~1/delta = 7e-4)
    h = 1e-7
    xs = np.linspace(-0.06, 0.06, 2001)
    fd = (law.force(xs + h) - law.force(xs - h)) / (2 * h)
    assert_allclose(law.stiffness(xs), fd, atol=1e-5 * KP)
    assert np.all(np.isfinite(k))


def test_logistic_vanishes_at_gap_edges(law):
    # Fps(+-a) = 0 up to kp 2a exp(-2 a delta) ~ e^-150
    assert abs(law.force(A)) < 1e-60 and abs(law.force(-A)) < 1e-60


def test_vector_field_error_confined_to_boundaries(law):
    p = FreePlayParams()
    x = np.linspace(-0.2, 0.2, 4001)[:, None]
    y = np.linspace(-0.3, 0.3, 61)[None, :]
    mag, ang = vector_field_error(p.k + p.kd, p.mu + p.mud, law, FreePlay(KP, A), x, y)
    near = (np.abs(np.abs(x) - A) < 30 / DELTA) * np.ones_like(y, dtype=bool)
    assert np.nanmax(mag[~near]) < 1e-9 and np.nanmax(ang[~near]) < 1e-9
    assert np.nanmax(mag[near]) > 0.1  # the error does exist at the switching boundary
    with pytest.raises(ParameterError, match="empty"):
        vector_field_error(1, 0, law, FreePlay(KP, A), np.array([]), np.array([]))


# ---- admissibility and bad input -------------------------------------------------------------

def test_paper_misprint_sigmoid_is_rejected():
    def misprint(y, d):  # paper Eq. 7 as printed: singular at y = 0
        with np.errstate(all="ignore"):
            return 2 / (1 - np.exp(-d * y)) - 1
    with pytest.raises(ParameterError, match="not admissible"):
        check_sigmoid(misprint, DELTA)
    with pytest.raises(ParameterError, match="not admissible"):
        SigmoidFreePlay(KP, A, DELTA, sigmoid=(misprint, lambda y, d: 0 * y))


@pytest.mark.parametrize("fn, msg", [
    (lambda y, d: 0.5 * np.tanh(d * y), "tend to sign"),
    (lambda y, d: np.tanh(d * y - 1.0), "odd"),
    (lambda y, d: np.sin(d * y) * (np.abs(d * y) < np.pi / 2) + np.sign(y) * (np.abs(d * y) >= np.pi / 2) * (1 - 0.5 * np.exp(-np.abs(d * y))), "non-decreasing"),
])
def test_non_admissible_sigmoids(fn, msg):
    with pytest.raises(ParameterError, match=msg):
        check_sigmoid(fn, DELTA)


def test_wrong_derivative_is_rejected():
    with pytest.raises(ParameterError, match="derivative"):
        SigmoidFreePlay(KP, A, DELTA, sigmoid=(SIGMOIDS["tanh"][0], SIGMOIDS["logistic"][1]))


@pytest.mark.parametrize("kw, name", [
    (dict(kp=10, a=0.0), "a"), (dict(kp=10, a=-0.1), "a"), (dict(kp=0, a=0.05), "kp"),
    (dict(kp=10, a=float("nan")), "a")])
def test_bad_gap(kw, name):
    with pytest.raises(ParameterError, match=name):
        FreePlay(**kw)


@pytest.mark.parametrize("delta", [0.0, -1500.0, float("inf")])
def test_bad_delta(delta):
    with pytest.raises(ParameterError, match="delta"):
        SigmoidFreePlay(KP, A, delta)
    with pytest.raises(ParameterError, match="delta"):
        FreePlayParams(delta=delta)


def test_overlapping_sigmoids_rejected():
    with pytest.raises(ParameterError, match="delta\\*a"):
        SigmoidFreePlay(KP, A, 100.0)  # delta a = 5: the two transitions overlap


def test_bad_params():
    with pytest.raises(ParameterError, match="a \\(half-gap\\)"):
        FreePlayParams(a=0.0)
    with pytest.raises(ParameterError, match="m"):
        FreePlayParams(m=-1)
    with pytest.raises(ParameterError, match="frac"):
        influence_constant(1.2)
    with pytest.raises(ParameterError, match="unknown sigmoid|sigmoid must be"):
        SigmoidFreePlay(KP, A, DELTA, sigmoid="cubic")


def test_from_dimensional_scales():
    p = FreePlayParams.from_dimensional(2.0, 0.1, 2.0, 0.2, 0.1, 0.6, 0.2, 20.0, 0.05, 0.4, 0.0)
    # dividing every force by m = 2 gives P_REF back
    ref = FreePlayParams()
    for f in ("c", "k", "mu", "cd", "kd", "mud", "kp", "a", "Q1", "Q2"):
        assert getattr(p, f) == pytest.approx(getattr(ref, f))
    p2 = FreePlayParams.from_dimensional(1, 0.05, 4.0, 0.1, 0.05, 0.3, 0.1, 10, 0.05, 0.2, 0,
                                         Omega_r=2.0, l_r=0.5)
    assert p2.k == pytest.approx(1.0) and p2.a == pytest.approx(0.1)
    assert p2.mu == pytest.approx(0.1 * 0.25 / 4) and p2.Q1 == pytest.approx(0.2 / 4 / 0.5)
