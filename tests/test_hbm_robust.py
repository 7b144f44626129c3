"""Robustness of the harmonic-balance Newton solvers on the 20-element friction beam
(``fesub.models.build("cantilever_contact")``): tolerances scaled to the problem, warm starts at
least as reliable as cold starts, every solution checked by something independent of the solver.

Independent references:

* the residual of the full system re-evaluated at the returned ``Q`` (``HBSystem.residual``,
  not the solver's own assembly) and with the contact forces of the second method (AFT);
* the condensed harmonic balance (:func:`solve_condensed`), another formulation;
* small force (contact stuck): the linear FRF peak of the modal solution (complex modes of the
  first-order form, left and right eigenvectors, peak by Brent on ``d|x|^2/dw``);
* every force: the slip-force bound. The Jenkins force never exceeds ``fs = mu N0``, so its
  harmonic coefficients obey ``|F_c|_2 <= sqrt(2) fs`` (Parseval) and, with ``Z = D(w)^-1`` (the
  structure without the contact), ``|Am - Am_free| <= |Z_P[monitor]|_2 fs``, ``Am_free`` the
  response of the structure without contact to the same force.

Solutions are compared within ``10 eps cond(J)``: the computed solution of a system with
Jacobian ``J`` is only determined to ``eps cond(J)`` (``cond`` 2e8 at the stuck resonance, 8e9
near the free one), whatever the solver.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.linalg import eig
from scipy.optimize import brentq

from fesub.errors import ConvergenceError
from fesub.hbm.contact import Jenkins, StickSlipSeparation
from fesub.hbm.forced import FRF, frf_peak, solve_at, solve_condensed
from fesub.hbm.newton import RTOL, damped_newton
from fesub.models import build

EPS = np.finfo(float).eps
FORCES = (0.1, 1.0, 10.0, 50.0, 200.0)
GRID = np.linspace(1000.0, 7000.0, 25)  # rad/s: the free (1314) and stuck (5753) first modes


@pytest.fixture(scope="module")
def beam():
    return build("cantilever_contact")


def _cond(sy, Q, w, a):
    _, RQ, _, _ = sy.jacobian(Q, w, a)
    return float(np.linalg.cond(RQ))


def _check_solution(sy, Q, w, a):
    """The independent checks every returned solution must pass."""
    # residual re-evaluated by the system's own assembly, against the componentwise sum of the
    # absolute terms (each summand's rounding): 10x the solver's 1e-13, another summation order
    R = sy.residual(Q, w, a)
    F, _, _ = sy.fnl(Q)
    _, _, Ks = sy.linear_matrices(stuck=True)
    P = sy.P[0]
    kt = sy.contacts[0].element.kt
    terms = (np.abs(sy.D(w)) @ np.abs(Q) + np.abs(F) + a * np.abs(sy.fex)
             + kt * P.T @ np.abs(P @ Q))
    assert np.abs(R).max() <= 1e-12 * terms.max()
    # second contact method, AFT with 16384 samples: its force error is that of transitions
    # placed to 1/16384 of the period, measured up to 2e-5 fs on this beam (spring forces kt x
    # up to 1e4 fs at 200 N); 1e-4 fs is 5x that
    fs = sy.contacts[0].element.mu * sy.contacts[0].element.n0
    F_aft, _, _ = sy.fnl(Q, method="aft", nt=16384)
    assert np.abs(sy.D(w) @ Q + F_aft - a * sy.fex).max() <= 1e-4 * fs + 1e-12 * terms.max()
    # slip-force bound (module doc), rounding slack 1e-9
    assert np.linalg.norm(P @ F) <= math.sqrt(2) * fs * (1 + 1e-9)
    Z = np.linalg.solve(sy.D(w), np.column_stack([sy.fex, P.T]))
    am_free = sy.amplitude(a * Z[:, 0])
    bound = np.linalg.norm(Z[sy.idx, 1:], 2) * fs
    assert abs(sy.amplitude(Q) - am_free) <= bound * (1 + 1e-9)


def _modal_peak(sy):
    """Peak (w, |x|/sqrt 2 per N) of the stuck linear FRF at the monitor, by modal
    superposition of the complex modes (independent of D(w) and of any HB solve)."""
    M, C, K = sy.linear_matrices(stuck=True)
    n, d = sy.n, sy.dof
    A = np.block([[np.zeros((n, n)), np.eye(n)],
                  [-np.linalg.solve(M, K), -np.linalg.solve(M, C)]])
    lam, VL, VR = eig(A, left=True, right=True)
    b = np.concatenate([np.zeros(n), np.linalg.solve(M, sy.fex[:n])])
    c = VR[d, :] * (VL.conj().T @ b) / np.einsum("ij,ij->j", VL.conj(), VR)

    def x(w):
        return np.sum(c / (1j * w - lam))

    def dx2(w):
        return (np.conj(x(w)) * np.sum(-1j * c / (1j * w - lam) ** 2)).real

    wl = brentq(dx2, 5600.0, 5900.0, xtol=1e-12, rtol=1e-15)
    return wl, abs(x(wl)) / math.sqrt(2)


def _sweep(sy, a, ws):
    """Warm-started solves along ``ws``, each from the previous solution, as a curve."""
    Qs, stats = [], []
    Q, wp = None, None
    for w in ws:
        Q, st = solve_at(sy, w, a, Q, w0=wp, alpha0=a, return_status=True)
        Qs.append(Q)
        stats.append(st)
        wp = w
    Qs = np.array(Qs)
    return FRF(a, np.asarray(ws, float), Qs, np.array([sy.amplitude(q) for q in Qs]),
               "lam_range"), stats


@pytest.fixture(scope="module", params=FORCES, ids=lambda a: f"{a:g}N")
def grid(beam, request):
    """Cold solves over the frequency grid at one force, and warm solves from the neighbour."""
    a = request.param
    cold, failed = [], []
    for w in GRID:
        try:
            cold.append(solve_at(beam, w, a))
        except ConvergenceError:
            cold.append(None)
            failed.append(w)
    warm = []
    for k in range(1, len(GRID)):
        if cold[k] is None or cold[k - 1] is None:
            continue
        Q, st = solve_at(beam, GRID[k], a, cold[k - 1], w0=GRID[k - 1], alpha0=a,
                         return_status=True)
        warm.append((k, Q, st))
    return a, cold, failed, warm


def test_warm_start_converges_wherever_the_cold_start_does(beam, grid):
    a, cold, failed, warm = grid
    assert not failed  # the cold start itself (linear limits, homotopy) reaches every point
    assert len(warm) == len(GRID) - 1
    for k, Q, st in warm:
        assert st.converged and st.relative_residual <= RTOL
        # one periodic solution: warm and cold agree to the conditioning of the solution
        tol = 10 * EPS * _cond(beam, Q, GRID[k], a)
        assert np.abs(Q - cold[k]).max() <= tol * np.abs(cold[k]).max(), GRID[k]
    # the warm start itself (not the fall-back) converges almost everywhere; where it did not,
    # the status says which start did
    fell_back = [st for _, _, st in warm if st.start != "warm"]
    assert len(fell_back) <= 2
    for st in fell_back:
        assert st.attempts[0].startswith("warm start failed")


def test_frf_peak_on_the_beam(beam, grid):
    """frf_peak on a curve of warm-started solves: the peak at every force, checked by the
    independent references; at small force the modal linear peak."""
    a, cold, _, _ = grid
    am = np.array([beam.amplitude(q) for q in cold])
    wc = GRID[int(np.argmax(am))]
    frf, stats = _sweep(beam, a, np.linspace(wc - 250.0, wc + 250.0, 21))
    assert all(st.converged for st in stats)
    w_p, am_p, Q_p = frf_peak(beam, frf)
    _check_solution(beam, Q_p, w_p, a)
    cond = _cond(beam, Q_p, w_p, a)
    # the condensed harmonic balance, another formulation, at the same frequency: it inverts
    # D(w) of the structure without contact, whose conditioning enters too
    Q_c = solve_condensed(beam, w_p, a)
    cond_c = max(cond, float(np.linalg.cond(beam.D(w_p))))
    assert np.abs(Q_c - Q_p).max() <= 10 * EPS * cond_c * np.abs(Q_p).max()
    # a maximum of the sampled curve's neighbourhood: no sample above it
    assert am_p >= frf.Am.max() * (1 - 10 * EPS * cond)
    if beam.stuck_margin(Q_p)[0] < 0:  # stuck: the linear system exactly
        w_l, x_l = _modal_peak(beam)
        assert a <= 1.0  # the small forces are the stuck ones
        # Am is determined to eps cond(J); the peak frequency, a root of dAm/dw of slope
        # Am/(zeta w)^2, moves by that relative error times zeta (2.2 % at 5750 rad/s)
        assert am_p == pytest.approx(a * x_l, rel=10 * EPS * cond)
        assert w_p == pytest.approx(w_l, rel=10 * EPS * cond * 0.022)
    else:
        assert a >= 10.0


def test_every_grid_solution_passes_the_independent_checks(beam, grid):
    a, cold, _, warm = grid
    for k in range(0, len(GRID), 6):
        _check_solution(beam, cold[k], GRID[k], a)
    for k, Q, _ in warm[::6]:
        _check_solution(beam, Q, GRID[k], a)


def test_failed_warm_start_falls_back_and_says_so(beam):
    bad = np.full(beam.N, np.nan)
    Q, st = solve_at(beam, 4750.0, 10.0, bad, return_status=True)
    assert st.converged and st.start == "cold"
    assert st.attempts[0] == "warm start failed (not_finite): |R|=inf after 0 iterations"
    _check_solution(beam, Q, 4750.0, 10.0)


def test_failure_is_a_clear_status_not_a_wrong_answer(beam):
    # one iteration per start cannot reach a slipping solution from either linear limit
    with pytest.raises(ConvergenceError, match=r"w=4750 rad/s, alpha=10 N did not converge "
                                               r"\(\|R\|=\S+ N after 2 iterations") as exc:
        solve_at(beam, 4750.0, 10.0, max_iter=2)
    st = exc.value.status
    assert not st.converged and st.iterations == 2
    assert "homotopy start not tried (iterations spent)" in st.attempts
    # partial is the best iterate, with the residual the message names
    R = beam.residual(exc.value.partial, 4750.0, 10.0)
    assert np.abs(R).max() == pytest.approx(st.residual, rel=1e-12)
    # a tolerance below the rounding of the residual cannot be met: an error, not a wrong answer
    # (a stuck point: the linear limit is the solution to rounding, yet not to 1e-22)
    with pytest.raises(ConvergenceError, match="did not converge"):
        solve_at(beam, 3000.0, 0.1, rtol=1e-22, max_iter=2)


def test_default_tolerance_is_reachable_and_met(beam):
    """The default rtol is a few hundred ulps of the rounding scale: the converged residuals
    sit far below it (measured ~1e-16 of the scale), a margin of two orders and more."""
    Q, st = solve_at(beam, 1314.0, 50.0, return_status=True)
    assert st.converged and st.criterion == "residual"
    assert st.relative_residual <= RTOL / 100
    assert 100 * EPS <= RTOL <= 1000 * EPS


def test_damped_newton_globalises_and_stops_on_the_step():
    """arctan(x) = 0: plain Newton diverges from |x0| > 1.39; the damped iteration reaches the
    root 0 (closed form). x^2 = 2 converges to sqrt(2) within the relative tolerance."""
    def atan(x):  # one term of unit size: converged at |atan x| <= 1e-13
        return np.arctan(x), np.array([[1.0 / (1.0 + x[0] ** 2)]]), 1.0

    x, st = damped_newton(atan, np.array([10.0]), max_iter=50)
    assert st.converged and abs(x[0]) <= RTOL

    def sq(x):
        return x ** 2 - 2.0, np.array([[2.0 * x[0]]]), x[0] ** 2 + 2.0

    x, st = damped_newton(sq, np.array([1.0]))
    # |x^2 - 2| <= 4 rtol: |x - sqrt 2| <= 4 rtol / (2 sqrt 2)
    assert st.converged and x[0] == pytest.approx(math.sqrt(2), rel=RTOL)
    x, st = damped_newton(sq, np.array([1.0]), max_iter=2)
    assert not st.converged and st.criterion == "max_iter" and st.iterations == 2


@pytest.mark.parametrize("element", [Jenkins(1.0, 0.3, 1.0),
                                     StickSlipSeparation(1.0, 0.5, 0.3, 1.0)],
                         ids=["jenkins", "2d"])
def test_aft_default_sample_count_and_its_convergence(element):
    """The AFT default is max(256, 64 nh) samples (448 at nh = 7), and the harmonic forces
    converge to the event method as nt^-2 (the interpolated transitions): the median error of
    20 random slipping states falls by 4^2 = 16 from 448 to 1792 samples (accepted 6..40: the
    error of one state depends on where the transitions fall between samples)."""
    nh = 7
    rng = np.random.default_rng(1)
    e448, e1792 = [], []
    for _ in range(20):
        p = np.zeros(2 * nh * element.ncomp)
        for c in range(element.ncomp):
            X = np.zeros(2 * nh)
            X[:2] = rng.standard_normal(2) * (3.0 if c == 0 else 1.5)
            X[2:] = 0.2 * rng.standard_normal(2 * nh - 2) / np.repeat(np.arange(2, nh + 1), 2)
            p[2 * nh * c:2 * nh * (c + 1)] = X
        Fe = element.evaluate(p, nh).F
        Fd = element.evaluate(p, nh, method="aft").F
        assert np.array_equal(Fd, element.evaluate(p, nh, method="aft", nt=448).F)
        e448.append(np.abs(Fd - Fe).max() / np.abs(Fe).max())
        F4 = element.evaluate(p, nh, method="aft", nt=1792).F
        e1792.append(np.abs(F4 - Fe).max() / np.abs(Fe).max())
    ratio = np.median(e448) / np.median(e1792)
    assert 6.0 <= ratio <= 40.0
    assert np.median(e448) <= 1e-4
