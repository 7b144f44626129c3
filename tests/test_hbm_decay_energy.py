"""The free decay a damped nonlinear mode predicts by the energy balance between turning points
(:func:`fesub.hbm.decay_prediction`), against closed forms and the contact's work."""

import math

import numpy as np
import pytest

from fesub.errors import ParameterError
from fesub.hbm import (
    ContactElement,
    Friction3D,
    HBSystem,
    Jenkins,
    decay_prediction,
    dnnm,
    initial_from_hb,
    newmark,
    turning_energy,
)


@pytest.mark.parametrize("n0", [40.0, -1e-4 * 5e4])
def test_stored_energy_is_the_work_from_rest(n0):
    """Along a path from rest without slip (tangential force ``kt u_t``) on which the preloaded
    contact opens and closes again (the open one closes its gap): the stored energy
    equals the work of the contact force less its rest load, integrated by the trapezoidal rule
    over 20001 steps (error ~ 1e-8 relative; the kink where it opens is one step wide: bound
    1e-6 of the largest energy)."""
    kt, kn = 1e5, 5e4
    el = Friction3D(kt, kn, 0.8, n0)
    s = np.linspace(0.0, 1.0, 20001)
    ut = 1e-5 * np.stack([np.sin(3 * s), 1 - np.cos(2 * s)], axis=1)
    un = 2e-3 * np.sin(2 * math.pi * s) - 2e-4 * s
    fn = np.maximum(n0 + kn * un, 0.0)
    f = np.column_stack([kt * ut, fn])
    if n0 > 0:
        assert fn.min() == 0.0 and fn[-1] > 0              # it opened and closed
    rest = np.array([0.0, 0.0, max(n0, 0.0)])
    u = np.column_stack([ut, un])
    power = np.einsum("ij,ij->i", 0.5 * (f[1:] + f[:-1]) - rest, np.diff(u, axis=0))
    work = np.concatenate([[0.0], np.cumsum(power)])
    E = el.stored_energy(f, un)
    assert E[0] == pytest.approx(0.0, abs=1e-15)
    np.testing.assert_allclose(E, work, atol=1e-6 * np.abs(work).max())


def _jenkins_mass(nh, nt=512, c=0.4):
    """m = 1 kg, k = 4e4 N/m, a 3D contact sliding along one line (60 deg in its plane, constant
    normal load 2 N, kt = 2e3 N/m, mu = 0.3: slip force 0.6 N, u_s = 3e-4 m)."""
    th = math.radians(60)
    G = np.array([[math.cos(th)], [math.sin(th)], [0.0]])
    return HBSystem(np.eye(1), c * np.eye(1), 4e4 * np.eye(1), nh,
                    [ContactElement(Friction3D(2e3, 5e4, 0.3, 2.0, nt=nt), G, "c")],
                    fex=[1.0], dof=0)


def test_decay_prediction_of_a_jenkins_mass_in_macroslip_closed_form():
    """One harmonic, amplitudes 7e-4 .. 2e-3 m (macroslip, a > u_s). At a turning point the
    contact slips, its spring holds the slip force: ``E = k a^2 / 2 + (mu N)^2 / (2 kt)``
    (closed form), so ``dE/da = k a`` and the decay rate is ``W / (T a k a)`` with the mode's
    ``W = 2 zeta w0 pi w0 a^2``: ``sigma = zeta w0 (w0^2 / k)``, faster than the mode's
    ``zeta w0`` by the contact's share of the stiffness (0.5 % to 2.0 % here). The turning
    points are samples (x = a cos tau; nt even) and E is quadratic in a, which the second-order
    differences take exactly: bound 1e-9 (the continuation's 1e-10 corrector)."""
    sy = _jenkins_mass(1)
    d = dnnm(sy, (7e-4, 2e-3), 0, max_steps=100)
    assert d.stop_reason == "lam_range" and len(d.a) >= 5
    E = np.array([turning_energy(sy, q, w, np.ones(1))[0] for q, w in zip(d.Q, d.w0)])
    S = np.array([turning_energy(sy, q, w, np.ones(1))[1] for q, w in zip(d.Q, d.w0)])
    np.testing.assert_allclose(S, d.a, rtol=1e-12)         # unit modal mass: a is the amplitude
    np.testing.assert_allclose(E, 0.5 * 4e4 * S ** 2 + 0.6 ** 2 / (2 * 2e3), rtol=1e-12)
    pred = decay_prediction(sy, d, np.ones(1))
    o = np.argsort(d.a)
    sigma = np.asarray(d.decay_rate)[o] * d.w0[o] ** 2 / 4e4
    np.testing.assert_allclose(pred.zeta * pred.w, sigma, rtol=1e-9)
    np.testing.assert_allclose(pred.zeta_mode * pred.w, np.asarray(d.decay_rate)[o], rtol=1e-12)
    # W = 4 mu N (a - u_s) + c pi w0 a^2, the describing function's balance: the mode's
    # dissipation from the AFT's 512 samples of the kinked force, measured within 1e-5
    np.testing.assert_allclose(pred.dissipation, 4 * 0.6 * (pred.swing - 3e-4)
                               + 0.4 * np.pi * d.w0[o] * pred.swing ** 2, rtol=5e-5)
    # every other point: the same prediction where they are (second-order differences exact)
    half = decay_prediction(sy, d, np.ones(1), points=o[::2])
    np.testing.assert_allclose(half.zeta, pred.zeta[::2], rtol=1e-9)
    gain = d.w0 ** 2 / 4e4 - 1
    assert 4e-3 < gain.min() and gain.max() < 2.5e-2


def test_decay_prediction_of_a_linear_mode_equals_the_mode():
    """Two DOFs joined by a 3D contact that stays stuck and closed (mu = 5, normal load 100 N,
    normal motion 1e-5 m against 2e-3 m of preload compression) and a viscous damper: a linear
    mode, whose energy at the turning points is ``w0^2 s^2 / 2`` per unit modal mass when the
    kinetic, structural and contact energies (both springs, and the preload's work, cancelled
    between the two turning points) are all counted. The prediction then equals the mode's
    decay: bound 1e-9 (quadratic E; the continuation's corrector). The contact holds 61 % of
    the potential energy of the second mode taken here (asserted > 40 %): left out, the
    prediction would be 2.5 times the decay."""
    M = np.diag([1.0, 2.0])
    K = np.array([[3e4, -1e4], [-1e4, 2e4]])
    G = np.array([[1.0, -1.0], [0.0, 0.0], [0.5, -0.5]])
    el = Friction3D(2e4, 5e4, 5.0, 100.0)
    Kc = G.T @ np.diag([2e4, 2e4, 5e4]) @ G
    # damping proportional to the stuck stiffness: the mode is real, its periodic motion
    # (the extended periodic motion concept) exact
    sy = HBSystem(M, 1e-3 * (K + Kc), K, 2, [ContactElement(el, G, "c")], fex=[1.0, 0.0],
                  dof=0, constant=True)
    d = dnnm(sy, (1e-6, 1e-5), 1, max_steps=30)       # the second mode: the DOFs opposed
    weights = np.array([1.0, -0.5])
    pred = decay_prediction(sy, d, weights)
    o = np.argsort(d.a)
    np.testing.assert_allclose(pred.zeta * pred.w, np.asarray(d.decay_rate)[o], rtol=1e-9)
    # the contact's springs carry a large share of the stiffness (its energy matters)
    q = d.Q[-1][2:4] if sy.h0 else d.Q[-1][:2]
    u = G @ q
    share = (2e4 * u[0] ** 2 + 5e4 * u[2] ** 2) / (q @ K @ q + 2e4 * u[0] ** 2 + 5e4 * u[2] ** 2)
    assert share > 0.4, share


def test_decay_prediction_refuses_what_it_cannot_count():
    sy = _jenkins_mass(1)
    d = dnnm(sy, (7e-4, 8e-4), 0, max_steps=100)
    with pytest.raises(ParameterError, match="three points"):
        decay_prediction(sy, d, np.ones(1), points=[0, 1])
    with pytest.raises(ParameterError, match="three points"):
        decay_prediction(sy, d, np.ones(1), points=[0, 1, len(d.a)])
    sj = HBSystem(np.eye(1), 0.4 * np.eye(1), 4e4 * np.eye(1), 1,
                  [ContactElement(Jenkins(2e3, 0.3, 2.0), np.ones((1, 1)), "j")], fex=[1.0],
                  dof=0)
    with pytest.raises(ParameterError, match="Friction3D"):
        turning_energy(sj, np.array([1e-3, 0.0]), 200.0, np.ones(1))


def test_turning_energy_and_dissipation_against_a_free_decay():
    """Three harmonics, the mass with its contact in macroslip let go from the mode at 1.5e-3 m
    (newmark, 256 steps per period, 12 periods). The decay's own energy (kinetic, spring and
    :meth:`Friction3D.stored_energy` of the integrator's contact force) at its turning points,
    pairwise averaged, against :func:`turning_energy` of the mode at the same half-swing:
    measured within 1.7e-4 (1.4e-4 at 512 steps), bound 5e-4. The energy lost over each cycle
    against the mode's ``W = 2 zeta w0 J`` at the cycle's amplitude: measured -0.53 % to +0.01 %
    (the same at 512 steps; the slow flow's, and the interpolation of ``W / s^2`` between the
    mode's points), bound 1 %. Together they are what :func:`decay_prediction` assumes."""
    sy = _jenkins_mass(3, nt=256)
    el = sy.contacts[0].element
    d = dnnm(sy, (7e-4, 2e-3), 0, max_steps=100)
    point = int(np.searchsorted(d.a, 1.5e-3))
    q0, v0, finit = initial_from_hb(sy, d.Q[point], d.w0[point], nt=256)
    res = newmark(sy, 0.0, d.w0[point], periods=12, steps_per_period=256, q0=q0, v0=v0,
                  contact_init=finit, record_periods=12)
    q, v = res.q[:, 0], res.v[:, 0]
    E = 0.5 * v ** 2 + 0.5 * 4e4 * q ** 2 + el.stored_energy(res.fc, np.zeros(len(q)))
    j = np.flatnonzero((q[1:-1] - q[:-2]) * (q[2:] - q[1:-1]) < 0) + 1
    Ej, s = E[j], 0.5 * np.abs(np.diff(q[j]))
    assert len(s) >= 20 and s[-1] < 0.75 * s[0]
    mode = np.array([turning_energy(sy, Q, w, np.ones(1)) for Q, w in zip(d.Q, d.w0)])
    o = np.argsort(mode[:, 1])
    Sm, Em, Jm = mode[o, 1], mode[o, 0], mode[o, 2]
    Wm = 2 * np.asarray(d.zeta)[o] * d.w0[o] * Jm
    pair = 0.5 * (Ej[1:] + Ej[:-1])
    np.testing.assert_allclose(pair, np.interp(s, Sm, Em / Sm ** 2) * s ** 2, rtol=5e-4)
    sc = np.sqrt(s[:-1] * s[1:])
    lost = Ej[:-2] - Ej[2:]
    np.testing.assert_allclose(lost, np.interp(sc, Sm, Wm / Sm ** 2) * sc ** 2, rtol=1e-2)


def test_decay_prediction_saved_and_reopened(tmp_path):
    """A prediction is a result: saved, reopened by ``fesub.load`` with the same arrays, its
    summary in SI units; a ring-down of another signal is refused by the comparison."""
    import fesub
    from fesub.hbm import DecayPrediction, ring_down

    sy = _jenkins_mass(1, nt=256)
    d = dnnm(sy, (7e-4, 2e-3), 0, max_steps=100)
    pred = decay_prediction(sy, d, np.ones(1))
    back = fesub.load(pred.save(tmp_path / "prediction"))
    assert isinstance(back, DecayPrediction)
    for k in ("swing", "w", "zeta", "zeta_mode", "energy", "dissipation", "weights"):
        np.testing.assert_array_equal(getattr(back, k), getattr(pred, k))
    r = pred.summary()["results"]
    assert r["swing_max"]["unit"] == "m" and r["decay_over_mode_max"]["value"] > 0
    rd = ring_down(sy, d, len(d.a) - 1, periods=4, steps_per_period=64, observe=2 * np.ones(1))
    with pytest.raises(ParameterError, match="another signal"):
        rd.compare_prediction(pred)
