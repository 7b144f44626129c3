"""Sliding-contact transient: how a run ends (stick, detachment), the friction direction, the output
decimation and the modal truncation cut-off.

The stops are provoked physically: releasing the slider from the equilibrium under a larger load
makes it spring back, so that its tangential velocity reverses (stick) or, from a smaller load, the
contact unloads (detachment). Each stop is checked against the returned signals, against the dense
literal formulation (a second implementation of the same equations) and through a save/load round
trip.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sla

from fesub.contact import TransientResult, simulate
from fesub.contact.sliding.system import SlidingContactSystem
from fesub.errors import ModelError
from two_body_reference import simulate_dense
from fesub.models import beam_on_beam as bb


@pytest.fixture(scope="module")
def model():
    # the releases below are sized for a 1 N load (spring-back of the slider faster than vx after
    # 2 x the load; unloading below 0.2 x): the benchmark with that load, everything else default
    return bb.build(bb.BeamOnBeamParams(Fy=1.0))


def _system(model, modal_cutoff_hz=None):
    """The benchmark's contact system with outputs also on the target nodes around s0 (to measure
    the relative sliding velocity independently of the kernel)."""
    p = model.params
    s1, s2 = model.sub1, model.sub2
    A, C = s1.mesh.nodes("A"), s1.mesh.node("C")
    X2 = s2.mesh.points
    top = np.setdiff1d(s2.mesh.nodes("contact"), s2.mesh.nodes("B"))
    near = top[np.argsort(np.abs(X2[top, 0] - p.s0))[:3]]
    near = near[np.argsort(X2[near, 0])]
    out2 = {"T_y": int(model.dofs["T_y"][0])}
    out2.update({f"{k}_{c}": int(s2.dofs([nd], c)[0]) for k, nd in zip("LMR", near) for c in "xy"})
    S = SlidingContactSystem(model.cb1, model.cb2, slave=C, prescribed=s1.dofs(A, "x"), target_edge="contact",
                             loads1={int(d): -p.Fy / A.size for d in s1.dofs(A, "y")},
                             outputs1={"C_x": int(s1.dofs([C], "x")[0]), "C_y": int(s1.dofs([C], "y")[0])},
                             outputs2=out2, modal_cutoff_hz=modal_cutoff_hz)
    return S, X2[near]


def _released(S, factor, mu, vx):
    """Sliding equilibrium under ``factor`` x the load (the initial state of a release)."""
    nominal = S.load1.copy()
    S.load1 = factor * nominal
    try:
        return S.static_state(mu, vx, 1.0 if vx >= 0 else -1.0)
    finally:
        S.load1 = nominal


def _sliding_velocity(S, res, XT3, vx):
    """Tangential velocity (m/s) of C relative to the target over each step n -> n+1, from the output
    displacements (slider relative to its rigid motion vx t) and the target segment under C."""
    s = res.signals
    C = S.X_C + np.c_[s["u_C_x"] + vx * s["t"], s["u_C_y"]]
    T = [XT3[i] + np.c_[s[f"u_{k}_x"], s[f"u_{k}_y"]] for i, k in enumerate("LMR")]
    k = 0 if C[0, 0] < XT3[1, 0] else 1
    assert np.all((C[:, 0] >= XT3[k, 0]) & (C[:, 0] < XT3[k + 1, 0])), "C left the segment: shorten the run"
    d = T[k + 1] - T[k]
    e = d / np.linalg.norm(d, axis=1)[:, None]  # unit tangent of the deformed segment
    a = ((C - T[k]) * d).sum(axis=1) / (d * d).sum(axis=1)
    # material point of the target under C, followed over the step (alpha frozen at step n)
    dT = (1 - a[:-1, None]) * np.diff(T[k], axis=0) + a[:-1, None] * np.diff(T[k + 1], axis=0)
    dC = np.diff(C, axis=0)
    return ((dC - dT) * e[:-1]).sum(axis=1) / res.h


def _check_roundtrip(res, tmp_path, name):
    path = res.save(tmp_path / name)
    back = TransientResult.load(path)
    assert (back.status, back.reason, back.steps, back.h, back.fs_out) == (res.status, res.reason, res.steps,
                                                                          res.h, res.fs_out)
    assert back.stop_time == res.stop_time and back.approximation == res.approximation
    assert set(back.signals) == set(res.signals)
    for k, v in res.signals.items():
        np.testing.assert_array_equal(back.signals[k], v, err_msg=k)


def test_run_ends_in_stick(model, backend, tmp_path):
    """Released from the sliding equilibrium under 2 x the load (mu = 0.1, vx = 30 mm/s), the slider
    springs back faster than it is driven: the relative velocity changes sign after ~0.45 ms and the
    run stops there (stick), keeping everything computed."""
    S, XT3 = _system(model)
    w1, q2, _ = _released(S, 2.0, 0.1, 0.03)
    h = 0.9 * S.critical_step()
    kw = dict(mu=0.1, vx=0.03, duration=3000 * h, h=h, fs_out=1.0 / h, initial=(w1, q2))
    res = simulate(S, **kw)
    s = res.signals
    assert res.backend == backend  # the fixture really switched the kernels
    assert res.status == "stick" and "tangential relative velocity" in res.reason
    assert res.info["duration_s"] == kw["duration"] and 0 < res.stop_time < kw["duration"]
    # one sample per step, the last one being the step that stopped the run (labelled with the
    # time at its start): stop time = steps x h, last sample = stop time - h (round-off of n h)
    assert s["t"].size == res.steps and res.steps < 3000
    assert res.stop_time == pytest.approx(res.steps * h, rel=1e-12)
    assert s["t"][-1] <= res.stop_time and s["t"][-1] == pytest.approx(res.stop_time - h, rel=1e-12)
    # sliding forwards until the last step, where the slave sticks (Coulomb: the slip that friction
    # at mu lambda would have reversed is zero), still pressed. The stuck slip is zero to the
    # kernel's tolerance: 1e-20 m a step / h = 4e-14 m/s -> 1e-12 m/s
    assert abs(s["v_t"][-1]) < 1e-12 < s["v_t"][:-1].min()
    assert s["lambda"].min() > 0
    # the same run without the stop goes on: its first steps are the stopped run (same arithmetic)
    free = simulate(S, stop_on_stick=False, **kw)
    assert free.status == "completed" and free.steps == 3000
    for k in ("lambda", "v_t", "u_C_x", "u_C_y", "gap"):
        np.testing.assert_array_equal(free.signals[k][:res.steps], s[k], err_msg=k)
    v = _sliding_velocity(S, free, XT3, 0.03)
    # kernel v_t vs the measured one: both are (x_{n+1} - x_n)/h along the deformed tangent; the
    # kernel takes the contact point and tangent of the predicted configuration, the measure those of
    # step n: a difference of order slope change x |v| (2e-9 m/s observed) -> 1e-7 m/s = 3e-6 vx
    np.testing.assert_allclose(v[:res.steps], s["v_t"], rtol=0, atol=1e-7)
    # the measured velocity falls to zero at that step (within the same 1e-7 m/s) from above it
    assert abs(v[res.steps - 1]) < 1e-7 < v[:res.steps - 1].min()
    # second implementation: the literal equations of the sliding method (friction kept at mu lambda
    # along +t) stop at the same step, where their sliding velocity changes sign
    dense = simulate_dense(S, **kw)
    assert (dense.status, dense.steps) == (res.status, res.steps)
    assert dense.signals["v_t"][-1] <= 0 < dense.signals["v_t"][:-1].min()
    # the recursion amplifies round-off (1e-16) through lambda = gap/(h^2 den) (see the formulation
    # test of test_contact_transient.py): 1e-8 of the largest value (observed 6e-10); the last step
    # differs by construction (stick against slip reversed)
    for k in ("lambda", "v_t"):
        np.testing.assert_allclose(dense.signals[k][:-1], s[k][:-1], rtol=0, atol=1e-8 * np.abs(s[k]).max(),
                                   err_msg=k)
    _check_roundtrip(res, tmp_path, "stick_mu0.1")


def test_run_ends_in_detachment(model, backend, tmp_path):
    """Released from the equilibrium under 0.2 x the load, the slider rebounds and unloads the
    contact: after ~0.18 ms the contact force would have to pull (the sliding method's multiplier
    turns negative), the slave separates and the run stops there (detachment)."""
    S, _ = _system(model)
    w1, q2, _ = _released(S, 0.2, 0.1, 0.03)
    h = 0.9 * S.critical_step()
    kw = dict(mu=0.1, vx=0.03, duration=2000 * h, h=h, fs_out=1.0 / h, initial=(w1, q2))
    res = simulate(S, **kw)
    s = res.signals
    assert res.status == "detachment" and "would have to pull" in res.reason
    assert s["t"].size == res.steps and 1 < res.steps < 2000
    assert res.stop_time == pytest.approx(res.steps * h, rel=1e-12)
    assert s["t"][-1] <= res.stop_time and s["t"][-1] == pytest.approx(res.stop_time - h, rel=1e-12)
    # zero (open) at the last step only; the slave was sliding forwards all along
    assert s["lambda"][-1] == 0 < s["lambda"][:-1].min()
    assert s["v_t"][:-1].min() > 0
    # the contact force on C is lambda (G1, G2), G2 = cos g - mu sin g ~ 1: none at the end
    assert s["f_y"][-1] == 0 < s["f_y"][:-1].min()
    # the literal equations of the sliding method: their multiplier turns negative at that step
    dense = simulate_dense(S, **kw)
    assert (dense.status, dense.steps) == (res.status, res.steps)
    assert dense.signals["lambda"][-1] < 0
    np.testing.assert_allclose(dense.signals["lambda"][:-1], s["lambda"][:-1], rtol=0,
                               atol=1e-8 * np.abs(s["lambda"]).max())  # as in the stick test
    _check_roundtrip(res, tmp_path, "detachment_mu0.1")


def test_pulling_preload_detaches_at_the_first_step(model, backend, tmp_path):
    """A load pulling the slider up: the equilibrium multiplier is the pull itself, negative (vertical
    equilibrium of beam 1, which is free vertically: lambda (cos g - mu sin g) = -Fy): the slave
    separates at the first step (no force: the contact cannot pull) and the run stops after it
    with that one sample kept."""
    S, _ = _system(model)
    S.load1 = -S.load1
    Fy = model.params.Fy
    res = simulate(S, mu=0.1, vx=0.03, duration=1e-3)
    # g is the bending slope of beam 2 at 5 mm from the clamp (~2e-4 rad): mu |g| + g^2/2 ~ 2e-5
    # relative (observed 2.5e-5) -> 1e-4
    assert res.info["lambda_static_N"] == pytest.approx(-Fy, rel=1e-4)
    assert res.status == "detachment" and res.steps == 1
    assert res.stop_time == res.h and res.signals["t"].tolist() == [0.0]
    assert res.signals["lambda"][0] == 0
    _check_roundtrip(res, tmp_path, "pulled")


def test_friction_opposes_sliding_in_both_directions(model, backend):
    """vx = +-30 mm/s from s0 (2 ms each): the mean horizontal contact force on C changes sign with the
    sliding direction and its odd part is the Coulomb force mu lambda; the even part is the
    x-component of the normal force on the bent target, the same in both directions."""
    S = bb.contact_system(model)
    mu = 0.1
    fwd = simulate(S, mu=mu, vx=0.03, duration=2e-3)
    bwd = simulate(S, mu=mu, vx=-0.03, duration=2e-3)
    assert fwd.status == bwd.status == "completed"
    assert fwd.signals["v_t"].min() > 0 > bwd.signals["v_t"].max()
    fx_f, fx_b = fwd.signals["f_x"].mean(), bwd.signals["f_x"].mean()
    assert fx_f < 0 < fx_b
    lam = 0.5 * (fwd.signals["lambda"].mean() + bwd.signals["lambda"].mean())
    odd, even = 0.5 * (fx_b - fx_f), 0.5 * (fx_f + fx_b)
    # odd part: mu lambda cos g (cos g - 1 ~ 2e-8); the normal parts cancel up to the change of the
    # target slope between the two 60 um paths on either side of s0 (observed 1.3e-4 of mu lambda)
    # -> 1e-3 (a wrong friction sign or magnitude misses by 100 %)
    assert odd == pytest.approx(mu * lam, rel=1e-3)
    # even part: -lambda sin g with g < 0 the bending slope near the clamp; |g| < 1e-3 rad (a cantilever
    # estimate Fy s0^2/(2 EI) = 1.7e-4 rad, doubled by the local indentation under the point load;
    # observed 1.8e-4 lambda)
    assert 0 < even < 1e-3 * lam


def test_output_decimation(model, backend):
    """The output step is exactly 1/fs_out, and the decimated signals are every dec-th sample of
    the same run output at every step."""
    S = bb.contact_system(model)
    fs = 50_000.0
    dec_run = simulate(S, mu=0.1, vx=0.03, duration=1e-3, fs_out=fs)
    assert dec_run.fs_out == pytest.approx(fs, rel=1e-12)
    dec = int(round(1.0 / (fs * dec_run.h)))
    assert dec > 1 and dec_run.h < dec_run.h_critical
    t = dec_run.signals["t"]
    # t_k = k dec h with dec h = 1/fs up to the rounding of h (1e-16 relative)
    np.testing.assert_allclose(np.diff(t), 1.0 / fs, rtol=1e-9)
    # samples at the start of steps 0, dec, 2 dec, ... < steps
    assert t[0] == 0.0 and t.size == (dec_run.steps - 1) // dec + 1
    every = simulate(S, mu=0.1, vx=0.03, duration=1e-3, h=dec_run.h, fs_out=1.0 / dec_run.h)
    assert every.steps == dec_run.steps and every.signals["t"].size == every.steps
    for k, v in dec_run.signals.items():  # the same arithmetic: equal to the last bit
        np.testing.assert_array_equal(every.signals[k][::dec], v, err_msg=k)
    # an explicit step that does not divide 1/fs_out: the nearest integer decimation, reported
    h = 0.9 * S.critical_step()
    odd = simulate(S, mu=0.1, vx=0.03, duration=1e-3, h=h, fs_out=fs)
    n = int(round(1.0 / (fs * h)))
    assert odd.fs_out == pytest.approx(1.0 / (n * h), rel=1e-12)
    assert abs(odd.fs_out - fs) <= fs / (2 * n - 1)  # rounding of 1/(fs h) to the nearest integer
    np.testing.assert_allclose(np.diff(odd.signals["t"]), 1.0 / odd.fs_out, rtol=1e-9)


def _modes_below(K, M, wc2):
    """Number of eigenvalues of (K, M) below wc2 by Sylvester's law of inertia: the negative
    eigenvalues of K - wc2 M (LDL' factorisation, no eigen-solve)."""
    _, D, _ = sla.ldl(K - wc2 * M)
    return int(np.sum(np.linalg.eigvalsh(D) < 0))


def test_modal_truncation_is_a_labelled_converging_approximation(model, backend, tmp_path):
    """Dropping the substructure modes above a cut-off: fewer modes (as counted by inertia), a
    larger stable step, a result labelled as an approximation, and the low-frequency output (tip
    displacement of beam 2) approaches the full model's as the cut-off rises."""
    full_S, _ = _system(model)
    full = simulate(full_S, mu=0.1, vx=0.03, duration=4e-3, fs_out=50_000)
    assert full.approximation is None and full.summary()["details"]["approximation"] is None
    ref = full.signals["u_T_y"]
    errors, steps = [], [full_S.critical_step()]
    for fc in (20e3, 50e3, 100e3, 400e3):
        S, _ = _system(model, modal_cutoff_hz=fc)
        wc2 = (2 * np.pi * fc) ** 2
        # the rigid mode of beam 1 (w = 0) counts as a negative pivot of K - wc2 M and is kept too
        assert S.w2_1.size == _modes_below(S.K1, S.M1, wc2) < full_S.w2_1.size
        assert S.w2_2.size == _modes_below(S.K2, S.M2, wc2) < full_S.w2_2.size
        hc = S.critical_step()
        # the limit (2/w)(sqrt(1 + z^2) - z) decreases with w and every kept w is <= wc (both
        # substructures have the same Rayleigh alpha, beta)
        assert (S.alpha1, S.beta1) == (S.alpha2, S.beta2)
        zc = S.alpha2 / (2 * np.sqrt(wc2)) + S.beta2 * np.sqrt(wc2) / 2
        assert hc >= 2 / np.sqrt(wc2) * (np.sqrt(1 + zc * zc) - zc)
        steps.append(hc)
        res = simulate(S, mu=0.1, vx=0.03, duration=4e-3, fs_out=50_000)
        assert res.status == "completed" and res.h > full.h
        assert "approximation" in res.approximation and f"{fc:.4g} Hz" in res.approximation
        assert res.summary()["details"]["approximation"] == res.approximation
        np.testing.assert_allclose(res.signals["t"], full.signals["t"], rtol=0, atol=1e-12)
        errors.append(np.abs(res.signals["u_T_y"] - ref).max() / np.abs(ref).max())
    _check_roundtrip(res, tmp_path, "truncated")
    print("cut-off errors", errors)
    # fewer modes, larger stable step: decreasing as the cut-off rises, all above the full model's
    assert all(later < earlier for earlier, later in zip(steps[1:], steps[2:])), steps
    assert min(steps[1:]) > steps[0]
    # convergence: each higher cut-off is closer (measured 1.3e-3, 2.1e-4, 7.1e-5, 4.8e-5 for
    # 20, 50, 100, 400 kHz over 4 ms); the last one within 2e-4 of the full model
    assert all(b < a for a, b in zip(errors, errors[1:])), errors
    assert errors[-1] < 2e-4


def test_truncated_model_starts_at_rest(model, backend):
    """The initial state of a truncated run is the equilibrium of the truncated model: held still
    (vx = 0), nothing moves, even with the small step of the full model. (Projecting the full
    model's equilibrium on the kept modes would leave an initial gap that the first step closes
    with an impulse.)"""
    S, _ = _system(model, modal_cutoff_hz=50e3)
    h = 0.9 * bb.contact_system(model).critical_step()
    res = simulate(S, mu=0.1, vx=0.0, duration=2000 * h, h=h, fs_out=1.0 / h, stop_on_stick=False)
    s = res.signals
    assert res.status == "completed"
    lam0 = res.info["lambda_static_N"]
    # beam 1 is free vertically: the static multiplier balances the load, lambda (cos g - mu sin g)
    # = Fy with g ~ -2e-4 rad (observed 2e-5 relative) -> 1e-4
    assert lam0 == pytest.approx(model.params.Fy, rel=1e-4)
    # at rest: the multiplier stays the static one and C does not move, to round-off. The gap is
    # resolved to ~1e-18 m in 5e-3 m coordinates and lambda = gap/(h^2 den) with h^2 den ~ 4e-11 m/N
    # at this step: 3e-8 N (observed) -> 1e-6 relative; that force noise moves C by ~1e-14 m
    # (observed 1.3e-14 m) against a static deflection of 7.4e-7 m -> 1e-12 m
    np.testing.assert_allclose(s["lambda"], lam0, rtol=1e-6)
    assert np.ptp(s["u_C_y"]) < 1e-12
    # the same run started from the full model's equilibrium (projected on the kept modes) is not
    # at rest: the dropped modes leave the slave inside the target (6.4e-8 m), which the first step
    # would close with an impulse; the engine refuses such a start
    w1, q2, _ = bb.contact_system(model).static_state(0.1, 0.0)
    with pytest.raises(ModelError, match="start inside their master surface"):
        simulate(S, mu=0.1, vx=0.0, duration=2000 * h, h=h, fs_out=1.0 / h, stop_on_stick=False,
                 initial=(w1, q2))
