"""Hill stability of forced responses with a 3D friction contact, against time integration.

The model: a 1 kg mass on three springs (3e4, 4e4, 1e4 N/m, damping 1e-3 K) pressed onto the
ground by a preloaded Friction3D contact (5 N, kn 3e4 N/m, kt 2e4 N/m, mu 0.3), forced in all
three directions. Near the normal mode (200 rad/s stuck) the contact opens over part of the
cycle and the response softens into an S-curve with two folds (147.3 and 170.1 rad/s at 2 N):
its middle branch is unstable. The forced response from 165 rad/s upwards starts on the lower
(stuck) branch, turns at the upper fold onto the middle branch and comes back to 165 rad/s.

The monodromy matrix of the time integration (``newmark``, the same discrete contact law as the
harmonic balance's AFT: steps per period = nt) is formed independently by central differences of
its one-period map over its full state: displacements, velocities and the contact's two
tangential forces.
"""

import math
import warnings

import numpy as np
import pytest

from fesub.hbm import (ContactElement, Friction3D, HBSystem, forced_response, initial_from_hb,
                       newmark)

NH, NT, ALPHA = 7, 256, 2.0
G = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, -1.0]])   # normal: pressed by -z


def _system():
    K = np.diag([3e4, 4e4, 1e4])
    el = Friction3D(2e4, 3e4, 0.3, 5.0, nt=NT)
    # the constant term: the normal load moves, so the forces' means matter
    return HBSystem(np.eye(3), 1e-3 * K, K, NH, [ContactElement(el, G, "c")],
                    fex=np.array([0.3, 0.2, 1.0]), dof=2, constant=True)


@pytest.fixture(scope="module")
def s_curve():
    sy = _system()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)     # Floquet.exact is False (memory)
        frf = forced_response(sy, ALPHA, (165.0, 175.0), stability=True, max_steps=200)
    return sy, frf


def _period_map(sy, w, x, periods=1):
    """``newmark`` from the state ``x = [q, v, f_t]`` (m, m/s, N) over ``periods`` periods; the
    tangential force is put back on the circle ``mu N`` of the perturbed normal load."""
    el = sy.contacts[0].element
    q0, v0, ft = x[:3], x[3:6], x[6:8].copy()
    lim = el.mu * max(el.n0 + el.kn * (G @ q0)[2], 0.0)
    r = math.hypot(*ft)
    if r > lim:
        ft *= lim / r
    return newmark(sy, ALPHA, w, periods=periods, steps_per_period=NT, q0=q0, v0=v0,
                   contact_init=ft[None, :], record_periods=periods)


def _start(sy, Q, w):
    q0, v0, fi = initial_from_hb(sy, Q, w, nt=NT)
    x0 = np.concatenate([q0, v0, np.asarray(fi).ravel()])
    scale = np.concatenate([np.full(3, np.abs(q0).max()), np.full(3, np.abs(v0).max()),
                            np.full(2, 1.5)])                 # mu n0 = 1.5 N
    return x0, scale


def test_forced_response_reports_the_fold_with_a_3d_contact(s_curve, tmp_path):
    """The forced-response API reports the stability along a 3D-contact forced response: the
    lower branch stable, the middle one unstable, the fold between them located where a real
    multiplier leaves through +1 (the curve turns there: largest frequency); saved and
    reloaded with the curve."""
    import fesub

    sy, frf = s_curve
    st = frf.stability
    assert frf.stop_reason == "lam_range"
    assert st.stable[0] and not st.stable[-1]
    assert frf.Am[-1] > 1.5 * frf.Am[0]                     # back at 165 rad/s, higher up
    folds = [b for b in st.bifurcations if b["kind"] == "fold"]
    assert len(folds) == 1 and folds[0]["change"] == "loss", st.bifurcations
    # the fold is the curve's turning point (the largest frequency reached), to the spacing of
    # the points there
    i = folds[0]["index"]
    assert abs(folds[0]["w"] - frf.w.max()) <= abs(frf.w[i] - frf.w[i - 1]) + 1e-6 * frf.w.max()
    assert abs(folds[0]["multiplier"][0] - 1.0) < 1e-2 and folds[0]["multiplier"][1] == 0.0
    frf.save(tmp_path / "frf")
    back = fesub.load(tmp_path / "frf")
    np.testing.assert_array_equal(back.stability.stable, st.stable)


@pytest.mark.slow
def test_hill_multipliers_against_the_monodromy_of_time_integration(s_curve):
    """Hill's leading multiplier against the eigenvalues of the time integration's monodromy
    matrix (central differences, step 1e-6 of each state's scale: the map is piecewise
    smooth, its curvature error ~1e-12 and its rounding ~1e-10 are far below the bound).

    Unstable point (middle branch, 165 rad/s): |rho| 1.63284 (Hill) against 1.63287 (time
    integration). Stable point (lower branch, the contact stuck): 0.826629 against 0.826664;
    the integration's state has one more multiplier at 1 (to 2e-6): the slider of a contact
    stuck over the whole cycle is neutral (a family of periodic orbits with other mean
    tangential forces), which a harmonic balance in the displacements cannot have.

    Bound 3e-4 (relative): what separates the two is Newmark's step against the
    continuous-time Hill problem (both apply the same discrete contact law at the same samples)
    and Hill's harmonic truncation. Measured, relative differences:

    ===============  ==============  ===============
    Nh, nt = spp     stable (lower)  unstable (middle)
    ===============  ==============  ===============
    7, 128           1.7e-4          2.6e-4
    7, 256 (here)    4.2e-5          1.9e-5
    7, 512           8.8e-6          8.9e-5
    5, 256           4.2e-5          1.2e-4
    9, 256           4.2e-5          4.8e-5
    ===============  ==============  ===============

    The stable point converges as the step squared (Newmark's order); at the unstable one
    Hill's value moves by 1e-4 with Nh and the samples (the kinks of the opening contact),
    which the bound covers twice over at the settings used."""
    sy, frf = s_curve
    got = {}
    for i in (0, -1):
        w, Q = frf.w[i], frf.Q[i]
        x0, sc = _start(sy, Q, w)
        M = np.zeros((8, 8))
        for j in range(8):
            e = np.zeros(8)
            e[j] = 1e-6 * sc[j]

            def one(x):
                r = _period_map(sy, w, x)
                return np.concatenate([r.q[-1], r.v[-1], r.fc[-1, :2]])

            M[:, j] = (one(x0 + e) - one(x0 - e)) / (2 * e[j])
        mu = np.linalg.eigvals(M)
        got[i] = mu[np.argsort(-np.abs(mu))]
    rho = np.abs(frf.stability.multipliers).max(axis=1)
    # unstable: the leading multiplier is real, > 1, and the same
    assert rho[-1] > 1.5 and abs(got[-1][0].imag) < 1e-9
    assert abs(abs(got[-1][0]) - rho[-1]) < 3e-4 * rho[-1], (got[-1][:3], rho[-1])
    # stable: the neutral slider at 1, then Hill's leading pair
    assert abs(got[0][0] - 1.0) < 1e-4, got[0][:3]
    assert abs(abs(got[0][1]) - rho[0]) < 3e-4 * rho[0], (got[0][:3], rho[0])
    assert abs(got[0][1].imag) > 0.1                        # a complex pair, as Hill's


@pytest.mark.slow
def test_perturbations_grow_and_decay_at_the_leading_multiplier(s_curve):
    """A small perturbation of the displacements (1e-6 of the amplitude) integrated for eight
    periods beside the unperturbed run: on the middle branch it grows by Hill's leading
    multiplier per period, on the lower branch it dies out at the rate of its leading pair.
    Measured (geometric mean over periods 3 to 8): 1.6349 against 1.6328 and 0.8282 against
    0.8266. Bounds 0.5 % and 1 %: the other multipliers (|rho| <= 0.57 on the middle branch)
    leave a transient of (0.57/1.63)^3 ~ 4 % of the leading mode at period 3 and 2e-4 at
    period 8, and a complex pair beats in a norm sampled once per period."""
    sy, frf = s_curve
    rho = np.abs(frf.stability.multipliers).max(axis=1)
    periods = 8
    for i in (0, -1):
        w, Q = frf.w[i], frf.Q[i]
        x0, sc = _start(sy, Q, w)
        d = np.zeros(8)
        d[:3] = 1e-6 * sc[0] * np.array([0.3, -0.5, 1.0])
        a = _period_map(sy, w, x0, periods)
        b = _period_map(sy, w, x0 + d, periods)
        # largest deviation over each period, displacements and velocities in their scales
        dq = np.abs(b.q - a.q) / sc[0]
        dv = np.abs(b.v - a.v) / sc[3]
        dev = np.maximum(dq, dv).reshape(periods, NT, 3).max(axis=(1, 2))
        rate = (dev[-1] / dev[2]) ** (1.0 / (periods - 3))
        if i == -1:
            assert dev[-1] > 20 * dev[0]                      # it departs (28x)
            assert abs(rate - rho[i]) < 5e-3 * rho[i], (rate, rho[i])
        else:
            assert dev[-1] < 0.5 * dev[0]                     # it returns (0.26x)
            assert abs(rate - rho[i]) < 1e-2 * rho[i], (rate, rho[i])
