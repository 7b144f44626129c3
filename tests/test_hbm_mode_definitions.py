"""The damped nonlinear mode (the extended periodic motion concept's equations) against closed
forms, and its two readings (periodic motion, free decay) at strong damping."""

import math

import numpy as np

from fesub.hbm import ContactElement, Friction3D, HBSystem, dnnm
from fesub.hbm.ringdown import ring_down
from fesub.models.jenkins import jenkins_1dof


def test_linear_mode_at_strong_damping_two_readings():
    """One DOF, m = 2 kg, k + kt = 8e4 N/m (a 3D contact that never slips), zeta = 0.2.

    Closed forms: the mode's periodic motion has w0 = sqrt((k + kt)/m) and zeta = c/(2 m w0)
    (exact: a linear mode); the free decay oscillates at w0 sqrt(1 - zeta^2) with the damping
    ratio (rate over frequency) zeta / sqrt(1 - zeta^2). The two readings differ by zeta^2/2 =
    2 %: asserted to 10 % of that difference, and the ring-down read against the mode's decay
    reading within the integrator's error (256 steps per period, average acceleration: 5e-5 of
    the period; half-swings by a parabola through three samples)."""
    m, k, kt, z = 2.0, 6e4, 2e4, 0.2
    w0 = math.sqrt((k + kt) / m)
    c = 2 * z * m * w0
    G = np.array([[1.0], [0.0], [0.0]])
    sy = HBSystem(np.array([[m]]), np.array([[c]]), np.array([[k]]), 1,
                  [ContactElement(Friction3D(kt, 1e6, 0.5, 1e6), G, "stuck")], fex=[1.0], dof=0)
    d = dnnm(sy, (1e-4, 1e-3), 0, max_steps=20)
    np.testing.assert_allclose(d.w0, w0, rtol=1e-10)
    np.testing.assert_allclose(d.zeta, z, rtol=1e-10)
    np.testing.assert_allclose(d.damped_frequency, w0 * math.sqrt(1 - z * z), rtol=1e-12)
    rd = ring_down(sy, d, len(d.a) - 1, periods=5, steps_per_period=256)
    zr = rd.zeta
    np.testing.assert_allclose(rd.w, w0 * math.sqrt(1 - z * z), rtol=2e-4)
    np.testing.assert_allclose(zr, z / math.sqrt(1 - z * z), rtol=2e-3)
    dw, dz = rd.compare(d, sy.n, sy.nh)
    assert np.nanmax(np.abs(dw)) < 2e-4 and np.nanmax(np.abs(dz)) < 2e-3
    # the periodic-motion reading (w0, zeta) is zeta^2/2 = 2 % away from the decay's
    assert np.all(np.abs(rd.w / w0 - 1 + z * z / 2) < 0.1 * z * z / 2 + 2e-4)
    assert np.all(np.abs(zr / z - 1 - z * z / 2) < 0.1 * z * z / 2 + 2e-3)


def _jenkins_closed_form(a, k, kt, fs, c):
    """Single-harmonic (describing-function) mode of the Jenkins oscillator (m = 1): w0 (rad/s)
    and zeta at the fundamental amplitude a (m). Stuck below u_s = fs/kt; above it the in-phase
    stiffness (kt/pi)(b - sin(2b)/2), cos b = 1 - 2 u_s/a, and the dissipation per cycle
    4 fs (a - u_s) balanced by the extra damping: zeta = (c + W/(pi w0 a^2)) / (2 w0)."""
    us = fs / kt
    if a <= us:
        w = math.sqrt(k + kt)
        return w, c / (2 * w)
    b = math.acos(1 - 2 * us / a)
    keq = kt / math.pi * (b - 0.5 * math.sin(2 * b))
    w = math.sqrt(k + keq)
    W = 4 * fs * (a - us)
    return w, (c + W / (math.pi * w * a * a)) / (2 * w)


def test_single_harmonic_mode_of_the_jenkins_oscillator_closed_form():
    """dnnm with one harmonic on the Jenkins oscillator (its event method: exact harmonic
    forces) equals the describing-function mode at every point, from stuck through microslip
    to macroslip (a = 0.05 .. 3 u_s .. 20 u_s): the continuation's corrector converges to 1e-10
    on rows scaled to O(1), so 1e-8 relative is the bound."""
    k, kt, mu, N0, c = 1.0, 1.0, 0.1, 1.0, 0.02
    sy = jenkins_1dof(nh=1, c=c, k=k, kt=kt, mu=mu, N0=N0)
    d = dnnm(sy, (0.05, 2.0), 0, max_steps=300)
    assert d.stop_reason == "lam_range"
    ref = np.array([_jenkins_closed_form(a, k, kt, mu * N0, c) for a in d.a])
    np.testing.assert_allclose(d.w0, ref[:, 0], rtol=1e-8)
    np.testing.assert_allclose(d.zeta, ref[:, 1], rtol=1e-8)
    assert d.zeta.max() > 5 * d.zeta[0]                   # friction dominates at the top
