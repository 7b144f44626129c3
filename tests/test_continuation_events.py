"""Folds, branch points and stop statuses of the continuation driver against closed forms: the
Duffing first-harmonic amplitude-frequency relation (fold amplitudes are the roots of a quintic),
pitchforks with a known branch parameter, and the reasons a branch stops."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fesub.continuation import Branch, continue_branch

# Duffing oscillator x'' + 2 zeta x' + x + gamma x^3 = F cos(w t), first harmonic x = a cos(w t
# - phi): a^2 [(1 - w^2 + c a^2)^2 + (2 zeta w)^2] = F^2 with c = 3 gamma / 4
ZETA, GAMMA, F = 0.05, 1.0, 0.3
C = 0.75 * GAMMA


def duffing_residual(x, w):
    a = x[0]
    p = 1.0 - w * w + C * a * a
    return np.array([a * a * (p * p + (2 * ZETA * w) ** 2) - F * F])


def duffing_jacobian(x, w):
    a = x[0]
    p = 1.0 - w * w + C * a * a
    ra = 2 * a * (p * p + (2 * ZETA * w) ** 2) + a * a * 2 * p * 2 * C * a
    rw = a * a * (2 * p * (-2 * w) + 8 * ZETA * ZETA * w)
    return np.array([[ra]]), np.array([rw])


def duffing_folds():
    """Fold points (w, a) of the amplitude-frequency curve in closed form.

    With A = a^2, W = w^2 and v = 1 + c A - W the relation reads v^2 + 4 z^2 (1 + c A - v)
    = F^2 / A (z = zeta), so v = 2 z^2 - s sqrt(D), D = 4 z^4 - 4 z^2 (1 + c A) + F^2 / A, and
    W(A) = 1 + c A - 2 z^2 + s sqrt(D) on the two sheets s = +-1. A fold in w is dW/dA = 0:
    c = -s D'(A) / (2 sqrt D) with D' = -4 z^2 c - F^2 / A^2 < 0, so s = +1 and
    4 c^2 D = (4 z^2 c + F^2 / A^2)^2, i.e. (times A^4) the quintic
    -16 c^3 z^2 A^5 - 16 c^2 z^2 A^4 + 4 c^2 F^2 A^3 - 8 c z^2 F^2 A^2 - F^4 = 0.
    """
    z2 = ZETA ** 2
    coeffs = [-16 * C ** 3 * z2, -16 * C ** 2 * z2,
              4 * C ** 2 * F ** 2, -8 * z2 * C * F ** 2, 0.0, -F ** 4]
    out = []
    for r in np.roots(coeffs):
        if abs(r.imag) > 1e-9 * abs(r) or r.real <= 0:
            continue
        A = r.real
        for _ in range(3):  # polish the companion-matrix root by Newton on the polynomial
            A -= np.polyval(coeffs, A) / np.polyval(np.polyder(coeffs), A)
        D = 4 * z2 ** 2 - 4 * z2 * (1 + C * A) + F ** 2 / A
        if D < 0:
            continue
        W = 1 + C * A - 2 * z2 + math.sqrt(D)
        out.append((math.sqrt(W), math.sqrt(A)))
    return sorted(out)


def duffing_branch(**kw):
    opts = dict(ds=0.02, ds_max=0.1, lam_range=(0.1, 3.0), max_steps=2000)
    opts.update(kw)
    return continue_branch(duffing_residual, duffing_jacobian, [0.3], 0.1, **opts)


def test_duffing_folds_located_to_1e8():
    ref = duffing_folds()
    assert len(ref) == 2  # the hardening curve bends over once: two folds
    br = duffing_branch(branch_points=True)
    folds = br.events_of("fold")
    assert len(folds) == 2
    for ev, (w_ref, a_ref) in zip(sorted(folds, key=lambda e: e.lam), ref):
        # the fold is located by a secant on the w part of the tangent, each trial point
        # corrected to |R| <= 1e-10 (R ~ F^2 = 0.09): w and a to ~1e-10 relative; 1e-8 is the
        # requirement with margin
        assert ev.lam == pytest.approx(w_ref, rel=1e-8)
        assert ev.x[0] == pytest.approx(a_ref, rel=1e-8)
        # the w part of the tangent vanishes there
        assert abs(ev.info["tangent"][-1]) < 1e-8
    # a fold is no branch point: det [R_y; t] keeps its sign through a regular fold
    assert br.events_of("branch_point") == []


def test_branch_through_two_folds_end_to_end():
    br = duffing_branch()
    assert br.stop_reason == "lam_range" and br.stop_info["code"] == "lam_range"
    # every point on the closed-form curve (corrector tolerance 1e-10 on R ~ F^2)
    r = np.array([duffing_residual(x, w)[0] for x, w in zip(br.x, br.lam)])
    assert np.max(np.abs(r)) < 1e-10
    # w goes up to the upper fold, back to the lower fold, then up to the end bound: the
    # tangent's w part changes sign exactly twice
    dw = np.diff(br.lam)
    assert np.count_nonzero(np.diff(np.sign(dw)) != 0) == 2
    (w1, _), (w2, _) = duffing_folds()
    # no point beyond a fold (up to round-off), the nearest within a step (ds_max = 0.1)
    i1 = int(np.argmax(dw < 0))
    i2 = i1 + int(np.argmax(dw[i1:] > 0))
    assert w2 - 0.1 < br.lam[i1] <= w2 + 1e-12
    assert w1 - 1e-12 <= br.lam[i2] < w1 + 0.1
    assert np.all(br.lam[i1:i2 + 1] <= w2 + 1e-12) and np.all(br.lam[i1:i2 + 1] >= w1 - 1e-12)
    assert br.lam[-1] == pytest.approx(3.0, abs=1e-14)
    # the end point at w = 3 is the single real root of the cubic in A = a^2 there
    p, q2 = 1 - 9.0, (2 * ZETA * 3.0) ** 2
    roots = np.roots([C * C, 2 * C * p, p * p + q2, -F * F])
    A = [r.real for r in roots if abs(r.imag) < 1e-12 and r.real > 0]
    assert len(A) == 1
    assert br.x[-1, 0] == pytest.approx(math.sqrt(A[0]), rel=1e-9)
    # the middle (unstable) sheet was traced: amplitudes between the two fold amplitudes
    # for w between the fold frequencies, on the way back
    assert br.x[:, 0].max() > 1.6894 and np.any((br.lam > w1) & (br.lam < w2) & (br.x[:, 0] > 0.6)
                                               & (br.x[:, 0] < 1.68))


def pitchfork():
    """v = lam^2 (curved primary branch), u^3 - (sin lam - 1/2) u = 0: on u = 0 a symmetric
    pitchfork at sin lam = 1/2, lam = pi/6."""
    def res(x, lam):
        u, v = x
        return np.array([u ** 3 - (math.sin(lam) - 0.5) * u, v - lam ** 2])

    def jac(x, lam):
        u, v = x
        return (np.array([[3 * u * u - (math.sin(lam) - 0.5), 0.0], [0.0, 1.0]]),
                np.array([-math.cos(lam) * u, -2 * lam]))

    return res, jac


def test_pitchfork_flagged_as_branch_point():
    res, jac = pitchfork()
    br = continue_branch(res, jac, [0.0, 0.0], 0.0, ds=0.1, ds_max=0.1, lam_range=(0, 1.5),
                         branch_points=True)
    bps = br.events_of("branch_point")
    assert len(bps) == 1 and br.events_of("fold") == []
    # the test function det [R_y; t0] along the step is smooth in the arclength and the secant
    # converges to 1e-13 in s; lam = pi/6 to well within 1e-8
    assert bps[0].lam == pytest.approx(math.pi / 6, abs=1e-10)
    assert abs(bps[0].x[0]) < 1e-12 and bps[0].x[1] == pytest.approx((math.pi / 6) ** 2, abs=1e-10)
    assert br.lam[bps[0].index] < bps[0].lam < br.lam[bps[0].index + 1]
    # R_y loses rank there: its smallest singular value vanishes to the location accuracy
    # (sigma ~ |sin lam - 1/2| ~ 1e-10 at most), and its two-dimensional kernel holds the
    # symmetry-breaking direction u (unit vector e_u lies in the span of the two rows)
    info = bps[0].info
    assert info["sigma_min"] < 1e-9 and info["sigma_ratio"] < 1e-9
    kernel = info["kernel"]
    assert kernel.shape == (2, 3)
    assert np.linalg.norm(kernel[:, 0]) == pytest.approx(1.0, abs=1e-8)
    # the branch went on along u = 0 through the branch point, to the end of the range
    assert br.stop_reason == "lam_range" and np.max(np.abs(br.x[:, 0])) < 1e-12
    # off by default: the same branch without the test function has no such event
    plain = continue_branch(res, jac, [0.0, 0.0], 0.0, ds=0.1, ds_max=0.1, lam_range=(0, 1.5))
    assert plain.events_of("branch_point") == []
    np.testing.assert_array_equal(plain.lam, br.lam)


def rotated_pitchfork():
    """The pitchfork of pitchfork() on a more curved primary branch (v = 3 lam^2), in
    coordinates rotated by 0.5 rad: ``(rot, residual, jacobian)``."""
    rot = np.array([[math.cos(0.5), -math.sin(0.5)], [math.sin(0.5), math.cos(0.5)]])

    def res(x, lam):
        u, v = rot.T @ x
        return rot @ np.array([u ** 3 - (math.sin(lam) - 0.5) * u, v - 3 * lam ** 2])

    def jac(x, lam):
        u, v = rot.T @ x
        Ju = np.array([[3 * u * u - (math.sin(lam) - 0.5), 0.0], [0.0, 1.0]])
        return rot @ Ju @ rot.T, rot @ np.array([-math.cos(lam) * u, -6 * lam])

    return rot, res, jac


def test_pitchfork_in_rotated_coordinates():
    # the pitchfork of pitchfork() on a more curved primary branch (v = 3 lam^2), seen in
    # coordinates rotated by 0.5 rad: the symmetry-breaking direction is no longer a
    # coordinate axis, so the tangent predictor's curvature error feeds the direction that
    # leads onto the crossing branch. The branch point stays at lam = pi/6.
    rot, res, jac = rotated_pitchfork()
    br = continue_branch(res, jac, [0.0, 0.0], 0.0, ds=0.2, ds_max=0.2, lam_range=(0, 1.5),
                         branch_points=True)
    (bp,) = br.events_of("branch_point")
    # secant on a smooth test function, trial points corrected to |R| <= 1e-10: 1e-10 in lam
    assert bp.lam == pytest.approx(math.pi / 6, abs=1e-10)
    u, v = rot.T @ bp.x
    assert abs(u) < 1e-10 and v == pytest.approx(3 * (math.pi / 6) ** 2, abs=1e-10)
    # the whole branch stayed on u = 0 (it did not switch to the crossing branch)
    assert np.max(np.abs((br.x @ rot)[:, 0])) < 1e-10 and br.stop_reason == "lam_range"


def test_cubic_pitchfork_in_one_unknown():
    # x^3 - lam x = 0 along x = 0 from lam = -1: branch point at lam = 0
    br = continue_branch(lambda x, lam: np.array([x[0] ** 3 - lam * x[0]]),
                         lambda x, lam: (np.array([[3 * x[0] ** 2 - lam]]), np.array([-x[0]])),
                         [0.0], -1.0, ds=0.07, ds_max=0.07, lam_range=(-1, 1), branch_points=True)
    bps = br.events_of("branch_point")
    assert len(bps) == 1
    # the test function is -lam along the trivial branch: the secant lands on 0 to round-off
    assert abs(bps[0].lam) < 1e-12


def test_stop_status_max_steps_and_bound():
    br = duffing_branch(max_steps=10)
    assert br.stop_reason == "max_steps"
    info = br.stop_info
    assert info["code"] == "max_steps" and info["lam"] == br.lam[-1] and info["ds"] > 0
    br = duffing_branch(lam_range=(0.1, 0.5))
    assert br.stop_info["code"] == "lam_range" and br.stop_info["lam"] == pytest.approx(0.5)
    user = duffing_branch(callback=lambda x, w: w > 0.3)
    assert user.stop_info["code"] == "user" and user.stop_info["lam"] == user.lam[-1] > 0.3


def test_stop_status_minimal_step_not_converged():
    # a corner: R = x - 2 |lam - 0.3| has no derivative at lam = 0.3; Newton cannot converge
    # there, the step is halved down to ds_min and the branch stops with the residual reached
    br = continue_branch(lambda x, lam: np.array([x[0] - 2 * abs(lam - 0.3)]),
                         lambda x, lam: (np.eye(1), np.array([-2 * np.sign(lam - 0.3)])),
                         [0.6], 0.0, ds=0.05, ds_min=1e-6, lam_range=(0, 1))
    info = br.stop_info
    assert br.stop_reason.startswith("corrector_failed at lam=")
    assert info["code"] == "min_step" and info["cause"] == "not_converged"
    assert info["ds"] == 1e-6 and info["residual"] > 1e-10 and info["iterations"] >= 1
    assert info["lam"] == br.lam[-1] and abs(br.lam[-1] - 0.3) < 1e-5
    # a residual that stops evaluating (NaN) is a corrector failure too
    nan = continue_branch(lambda x, lam: np.array([x[0] - lam if lam <= 0.5 else np.nan]),
                          lambda x, lam: (np.eye(1), np.array([-1.0])), [0.0], 0.0, ds=0.1,
                          ds_min=1e-4, lam_range=(0, 2))
    assert nan.stop_info["code"] == "min_step" and nan.stop_info["cause"] == "not_converged"
    assert math.isnan(nan.stop_info["residual"])


def test_stop_status_tangent_turned():
    # unit circle from (x, lam) = (1, 0) with a step that cannot shrink (ds = ds_min = 0.5):
    # the corrector converges to lam = 0.5, x = sqrt(3)/2, where the tangent has turned by
    # asin(0.5) = 30 deg, more than the 5 deg allowed
    res, jac = (lambda x, lam: np.array([x[0] ** 2 + lam ** 2 - 1.0]),
                lambda x, lam: (np.array([[2 * x[0]]]), np.array([2 * lam])))
    br = continue_branch(res, jac, [1.0], 0.0, ds=0.5, ds_min=0.5, ds_max=0.5, max_angle_deg=5)
    info = br.stop_info
    assert info["code"] == "min_step" and info["cause"] == "tangent_turned"
    # the corrected point is on the circle to 1e-10: the angle to ~1e-9 deg
    assert info["angle_deg"] == pytest.approx(30.0, abs=1e-6)
    assert len(br) == 1 and info["lam"] == 0.0 and "tangent turned by 30.0 deg" in br.stop_reason


def test_events_and_status_round_trip(tmp_path):
    import fesub

    res, jac = pitchfork()
    br = continue_branch(res, jac, [0.0, 0.0], 0.0, ds=0.1, ds_max=0.1, lam_range=(0, 1.5),
                         branch_points=True)
    back = fesub.load(br.save(tmp_path / "pitchfork"))
    assert isinstance(back, Branch)
    assert back.stop_info == br.stop_info
    (e,) = back.events_of("branch_point")
    (e0,) = br.events_of("branch_point")
    assert e.lam == e0.lam and np.array_equal(e.x, e0.x)
    for k, v in e0.info.items():
        np.testing.assert_array_equal(e.info[k], v)
    # a file written before stop_info existed opens with an empty one
    ds = br.to_xarray()
    del ds.attrs["stop_info"]
    assert Branch.from_xarray(ds).stop_info == {}


# ------------------------------------------------------------------------ branch switching
def test_switching_at_a_cubic_pitchfork_follows_both_halves_of_the_other_branch():
    from fesub.continuation import switch_branch

    def res(x, lam):
        return np.array([x[0] ** 3 - lam * x[0]])

    def jac(x, lam):
        return np.array([[3 * x[0] ** 2 - lam]]), np.array([-x[0]])

    br = continue_branch(res, jac, [0.0], -1.0, ds=0.07, ds_max=0.07, lam_range=(-1, 1),
                         branch_points=True)
    (bp,) = br.events_of("branch_point")
    signs = []
    for side in (+1, -1):
        other = switch_branch(res, jac, bp, ds=0.05, side=side, ds_max=0.05, lam_range=(-1, 1))
        # the other branch is x^2 = lam (closed form), on one side of x = 0, up to lam = 1
        assert np.all(np.abs(other.x[:, 0] ** 2 - other.lam) < 1e-9)
        signs.append(set(np.sign(other.x[:, 0]).tolist()))
        assert other.stop_reason == "lam_range" and other.lam[-1] == pytest.approx(1.0)
    # the two sides are the two halves of the pitchfork
    assert sorted(map(sorted, signs)) == [[-1.0], [1.0]]


def test_switching_in_rotated_coordinates_lands_on_the_crossing_branch():
    from fesub.continuation import switch_branch

    rot, res, jac = rotated_pitchfork()
    br = continue_branch(res, jac, [0.0, 0.0], 0.0, ds=0.2, ds_max=0.2, lam_range=(0, 1.5),
                         branch_points=True)
    (bp,) = br.events_of("branch_point")
    other = switch_branch(res, jac, bp, ds=0.05, ds_max=0.1, lam_range=(0, 1.5), max_steps=200)
    uv = other.x @ rot  # rows (u, v)
    # closed form of the crossing branch: u^2 = sin(lam) - 1/2, v = 3 lam^2, u != 0
    assert np.all(np.abs(uv[:, 0] ** 2 - (np.sin(other.lam) - 0.5)) < 1e-8)
    assert np.all(np.abs(uv[:, 1] - 3 * other.lam ** 2) < 1e-8)
    assert np.all(np.abs(uv[:, 0]) > 0) and other.lam.max() > 1.0


def test_switching_needs_a_branch_point():
    from fesub.continuation import switch_branch
    from fesub.errors import ParameterError

    br = duffing_branch(branch_points=True)
    (fold, *_) = br.events_of("fold")
    with pytest.raises(ParameterError, match="branch_point"):
        switch_branch(lambda x, lam: x, lambda x, lam: (np.eye(1), np.zeros(1)), fold)
