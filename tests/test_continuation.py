"""Tests of the pseudo-arclength continuation driver against closed-form branches."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fesub.continuation import Branch, continue_branch
from fesub.errors import ConvergenceError, ParameterError


def circle():
    def res(x, lam):
        return np.array([x[0] ** 2 + lam ** 2 - 1.0])

    def jac(x, lam):
        return np.array([[2 * x[0]]]), np.array([2 * lam])

    return res, jac


def test_circle_through_both_folds():
    res, jac = circle()
    br = continue_branch(res, jac, [1.0], 0.0, ds=0.05, ds_max=0.1, max_steps=200,
                         lam_range=(-2, 2), callback=None)
    # every point lies on the circle (corrector tolerance 1e-10 on |R|)
    assert np.max(np.abs(br.x[:, 0] ** 2 + br.lam ** 2 - 1)) < 1e-9
    folds = br.events_of("fold")
    lam_f = sorted(e.lam for e in folds[:2])
    # the folds of the circle are at lam = -1 and +1 (x = 0); located by secant on the lam
    # component of the tangent, which is linear in x near the fold -> |lam| error ~ x^2 ~ 1e-20
    assert len(folds) >= 2
    assert lam_f[0] == pytest.approx(-1.0, abs=1e-10)
    assert lam_f[1] == pytest.approx(1.0, abs=1e-10)
    for e in folds[:2]:
        assert abs(e.x[0]) < 1e-6
    # the branch went round: lam reached both sides and x changed sign
    assert br.x[:, 0].min() < -0.9 and br.x[:, 0].max() > 0.9
    assert br.stop_reason == "max_steps"
    # the tangents are unit vectors
    assert np.allclose(np.linalg.norm(br.tangent, axis=1), 1.0, atol=1e-12)


def test_cubic_fold_located_to_1e8():
    # x^3 - 3x + lam = 0: folds at x = +-1, lam = +-2
    def res(x, lam):
        return np.array([x[0] ** 3 - 3 * x[0] + lam])

    def jac(x, lam):
        return np.array([[3 * x[0] ** 2 - 3]]), np.array([1.0])

    br = continue_branch(res, jac, [2.2], -4.0, ds=0.2, ds_max=0.3, lam_range=(-4, 4),
                         max_steps=500, direction=+1)
    assert br.stop_reason == "lam_range"
    folds = br.events_of("fold")
    assert len(folds) == 2
    lam_f = sorted(e.lam for e in folds)
    assert lam_f[0] == pytest.approx(-2.0, abs=1e-8)
    assert lam_f[1] == pytest.approx(2.0, abs=1e-8)
    # the last point lies exactly on the bound lam = 4 (Newton at fixed lam)
    assert br.lam[-1] == pytest.approx(4.0, abs=1e-14)


def test_user_event_located():
    # line x = lam; event g = x - 0.123456789
    def res(x, lam):
        return np.array([x[0] - lam, x[1] - lam ** 2])

    def jac(x, lam):
        return np.eye(2), np.array([-1.0, -2 * lam])

    br = continue_branch(res, jac, [0, 0], 0.0, ds=0.05, ds_max=0.05, lam_range=(0, 0.5),
                         events={"g": lambda x, lam: x[0] - 0.123456789})
    ev = br.events_of("g")
    assert len(ev) == 1
    # secant on a linear test function along the branch: exact up to the corrector tolerance
    assert ev[0].lam == pytest.approx(0.123456789, abs=1e-10)
    assert br.lam[ev[0].index] < ev[0].lam < br.lam[ev[0].index + 1]


def test_stability_change_by_bisection():
    def res(x, lam):
        return np.array([x[0] - lam])

    def jac(x, lam):
        return np.eye(1), np.array([-1.0])

    br = continue_branch(res, jac, [0.0], 0.0, ds=0.1, ds_max=0.1, lam_range=(0, 1),
                         stability=lambda x, lam: lam < 0.3141592)
    ev = br.events_of("stability")
    assert len(ev) == 1
    # bisection stops at 1e-10 of the step (0.1)
    assert ev[0].lam == pytest.approx(0.3141592, abs=1e-9)
    assert br.stable[0] and not br.stable[-1]


def test_corrector_failure_returns_partial_branch():
    # the residual becomes undefined (NaN) for lam > 0.5: the corrector fails at ds_min
    def res(x, lam):
        r = x[0] - lam
        return np.array([r if lam <= 0.5 else np.nan])

    def jac(x, lam):
        return np.eye(1), np.array([-1.0])

    br = continue_branch(res, jac, [0.0], 0.0, ds=0.1, ds_min=1e-4, ds_max=0.1,
                         lam_range=(0, 2))
    assert br.stop_reason.startswith("corrector_failed at lam=")
    assert "ds=" in br.stop_reason
    assert 0.49 < br.lam[-1] <= 0.5
    assert np.allclose(br.x[:, 0], br.lam)


def test_cannot_start_raises():
    def res(x, lam):
        return np.array([x[0] ** 2 + 1.0])  # no real root

    def jac(x, lam):
        return np.array([[2 * x[0]]]), np.array([0.0])

    with pytest.raises(ConvergenceError, match="cannot start"):
        continue_branch(res, jac, [0.3], 0.0)


def test_bad_parameters():
    res, jac = circle()
    with pytest.raises(ParameterError, match="ds_min"):
        continue_branch(res, jac, [1.0], 0.0, ds_min=-1)
    with pytest.raises(ParameterError, match="direction"):
        continue_branch(res, jac, [1.0], 0.0, direction=0)
    with pytest.raises(ParameterError, match="lam0"):
        continue_branch(res, jac, [1.0], 0.0, lam_range=(0.5, 1))


def test_angle_test_and_scaling():
    # scaled unknowns: x in mm-like units (1e-3) -> the driver follows it when scaled
    def res(x, lam):
        return np.array([(x[0] / 1e-3) ** 2 + lam ** 2 - 1.0])

    def jac(x, lam):
        return np.array([[2 * x[0] / 1e-6]]), np.array([2 * lam])

    br = continue_branch(res, jac, [1e-3], 0.0, ds=0.05, ds_max=0.1, max_steps=150,
                         scale=[1e-3, 1.0], max_angle_deg=10)
    assert np.max(np.abs((br.x[:, 0] / 1e-3) ** 2 + br.lam ** 2 - 1)) < 1e-9
    # consecutive tangents never turn more than the allowed 10 degrees
    cosang = np.sum(br.tangent[1:] * br.tangent[:-1], axis=1)
    assert np.all(cosang >= np.cos(np.radians(10)) - 1e-12)


def _assert_same_branch(b2, br):
    """Bit-for-bit equality of two branches (arrays with their dtypes, events, metadata)."""
    for name in ("x", "lam", "tangent", "stable", "newton_iters"):
        a, b = getattr(b2, name), getattr(br, name)
        if b is None:
            assert a is None, name
            continue
        assert a.dtype == b.dtype and np.array_equal(a, b), name
    assert (b2.stop_reason, b2.x_unit, b2.lam_unit) == (br.stop_reason, br.x_unit, br.lam_unit)
    assert len(b2.events) == len(br.events)
    for e2, e in zip(b2.events, br.events):
        assert (e2.kind, e2.index, e2.lam) == (e.kind, e.index, e.lam)
        assert np.array_equal(e2.x, e.x)
        assert e2.info.keys() == e.info.keys()
        for k, v in e.info.items():
            if isinstance(v, np.ndarray):
                assert isinstance(e2.info[k], np.ndarray) and e2.info[k].dtype == v.dtype
                assert np.array_equal(e2.info[k], v), k
            else:
                assert e2.info[k] == v, k


def test_save_load_round_trip_is_exact(tmp_path):
    import fesub

    res, jac = circle()
    # folds (info: tangent arrays), a user event (info: float), stability flags (bool)
    br = continue_branch(res, jac, [1.0], 0.0, ds=0.1, max_steps=40,
                         events={"g": lambda x, lam: x[0] - 0.5},
                         stability=lambda x, lam: x[0] > 0)
    br.x_unit, br.lam_unit = "m", "N"
    assert {e.kind for e in br.events} == {"fold", "g", "stability"}
    p = br.save(tmp_path / "circle_mu0.1")  # the suffix is appended: no clash with mu0.3
    assert p.name == "circle_mu0.1.nc"
    _assert_same_branch(Branch.load(p), br)
    _assert_same_branch(fesub.load(p), br)
    # without stability flags or iteration counts, and without events
    plain = Branch(br.x[:3], br.lam[:3], br.tangent[:3], None, [], "max_steps")
    q = plain.save(tmp_path / "circle_mu0.3")
    _assert_same_branch(Branch.load(q), plain)
    _assert_same_branch(Branch.load(p), br)  # the first file is untouched
    ds = br.to_xarray()
    for name in list(ds.data_vars) + list(ds.coords):
        assert "units" in ds[name].attrs, name
    assert ds["x"].attrs["units"] == "m" and ds["lam"].attrs["units"] == "N"
    s = br.summary()
    assert s["results"]["points"]["value"] == len(br.lam)
    assert s["results"]["lam_end"] == {"value": br.lam[-1], "unit": "N"}


def test_keyboard_interrupt_returns_the_points_so_far():
    # the residual is a straight line; Ctrl-C arrives in the 40th residual evaluation
    calls = {"n": 0}

    def res(x, lam):
        calls["n"] += 1
        if calls["n"] == 40:
            raise KeyboardInterrupt
        return np.array([x[0] - 2 * lam])

    def jac(x, lam):
        return np.eye(1), np.array([-2.0])

    br = continue_branch(res, jac, [0.0], 0.0, ds=0.01, ds_max=0.01, lam_range=(0, 10),
                         stability=lambda x, lam: True)
    assert br.stop_reason == "interrupted" and br.status == "interrupted"
    assert 1 < len(br) < 40
    # every kept point is a converged point of the branch, lists of equal length
    assert np.allclose(br.x[:, 0], 2 * br.lam, atol=1e-12)
    assert len(br.tangent) == len(br.stable) == len(br.newton_iters) == len(br)
    # an uninterrupted branch reports "finished"
    calls["n"] = -10**9
    full = continue_branch(res, jac, [0.0], 0.0, ds=0.01, ds_max=0.01, lam_range=(0, 0.1))
    assert full.status == "finished" and full.stop_reason == "lam_range"
    # the interrupted branch is the beginning of the uninterrupted one (same steps)
    n = min(len(br), len(full)) - 1
    np.testing.assert_array_equal(br.lam[:n], full.lam[:n])


def test_residual_raising_is_a_corrector_failure():
    # a residual that raises (e.g. a model leaving its domain) stops the branch with the
    # partial result instead of propagating the exception mid-branch
    def res(x, lam):
        if lam > 0.5:
            raise ArithmeticError("outside the model's domain")
        return np.array([x[0] - lam])

    def jac(x, lam):
        return np.eye(1), np.array([-1.0])

    br = continue_branch(res, jac, [0.0], 0.0, ds=0.1, ds_min=1e-3, ds_max=0.1, lam_range=(0, 2))
    assert br.stop_reason.startswith("corrector_failed at lam=")
    assert 0.49 < br.lam[-1] <= 0.5


def test_a_missing_kernel_is_not_a_convergence_failure():
    """Newton treats a residual that fails to evaluate as a failed step, but a missing compiled
    kernel (a broken installation) must surface, not read as 'did not converge'."""
    import pytest

    from fesub.continuation import newton
    from fesub.errors import BackendError

    def broken(x):
        raise BackendError("compiled kernel fesub._core.hbm is required but does not import")

    with pytest.raises(BackendError, match="does not import"):
        newton(broken, [1.0])

    def singular(x):
        raise ZeroDivisionError  # an evaluation failure: reported, not raised

    x, ok, its, nr = newton(singular, [1.0])
    assert not ok and its == 0 and nr == float("inf")


def _zigzag(lam):
    """A branch x = g(lam) with kinks every 0.1: slope 1 and 1.6 in turn (the tangent turns by
    13 degrees at each), and its slope."""
    k = np.floor(lam / 0.1)
    slope = np.where(k % 2 == 1, 1.6, 1.0)
    base = 0.1 * k + 0.06 * np.floor(k / 2)          # g at the start of interval k
    return base + slope * (lam - 0.1 * k), slope


def test_kinks_are_passed_without_crawling_after_them():
    """On a branch with kinks (the Jacobian jumps), the step is cut until the kink is located
    (kink_ds) and accepted; past it the branch is smooth again, and the step goes on from half
    the step the smooth branch had before the kink, not from the tiny one that located it
    (which would take ~19 growths by 1.5 from 1e-6 back to 0.02 after each of the ten kinks)."""
    def R(x, lam):
        return x - _zigzag(lam)[0]

    def J(x, lam):
        return np.eye(1), -_zigzag(lam)[1]

    br = continue_branch(R, J, np.zeros(1), 0.0, ds=0.02, ds_max=0.02, ds_min=1e-9,
                         lam_range=(0.0, 1.0), max_angle_deg=10.0, kink_ds=1e-6, tol=1e-12,
                         max_steps=500)
    assert br.stop_reason == "lam_range"
    np.testing.assert_allclose(br.x[:, 0], _zigzag(br.lam)[0], atol=1e-12)
    kinks = [e for e in br.events if e.kind == "kink"]
    assert len(kinks) >= 9
    # arclength of the branch in (x, lam) ~ 1.66, steps of <= 0.02: >= 83 points; locating
    # each kink takes ~8 accepted steps closing in on it (measured 168 points), and without the
    # restored step another ~17 growing ones after it (343 points)
    assert len(br.lam) < 200


def test_progress_follows_the_share_of_the_range():
    from fesub.continuation.driver import _Progress, _validated

    _, s, _ = _validated(1, 0.0, ds=0.1, ds_min=1e-8, ds_max=0.1, tol=1e-10, direction=1,
                         max_steps=50, max_iter=10, lam_range=(-1.0, 3.0), scale=None,
                         max_angle_deg=15.0, kink_ds=None)
    for direction, lam, want in ((1, 0.0, 25.0), (1, 2.0, 75.0), (-1, 2.0, 25.0), (1, 4.0, 100.0)):
        bar = _Progress(0.0, direction, 50, s)
        bar.step(lam)
        # percent of the range from its start in the branch's direction, clamped to it
        assert bar.bar.n == pytest.approx(want) and bar.steps == 1
        bar.close()
    # an unbounded range counts steps against max_steps
    _, s, _ = _validated(1, 0.0, ds=0.1, ds_min=1e-8, ds_max=0.1, tol=1e-10, direction=1,
                         max_steps=50, max_iter=10, lam_range=(-math.inf, math.inf), scale=None,
                         max_angle_deg=15.0, kink_ds=None)
    bar = _Progress(0.0, 1, 50, s)
    bar.step(7.0)
    assert bar.bar.n == 1 and bar.bar.total == 50
    bar.close()
