"""The beam-on-beam study's transient on the contact engine
(:func:`fesub.models.beam_on_beam.transient`: one slave node, the roughness a force series, the
seed method's stops) against an independent implementation of the same forward-increment method:
the paper's equations transcribed literally in the test suite (``two_body_reference``: dense
reduced physical coordinates, a direct inverse of the mass matrix, one multiplier per step with
the friction direction fixed; the engine solves the frictional contact problem by sweeps in modal
coordinates, compiled).

Tolerances. The two marches do the same arithmetic in another order, so they differ by
round-off, amplified by the contact: the multiplier is a predicted gap of ~2e-9 m divided by
h^2 w, so a round-off of the positions (~1e-18 m) is ~5e-10 of it at every step. Two measured
scales: (1) the two-body kernel against its own NumPy twin (the same method, other summation
order) after 0.01 s: lambda 1.3e-9, displacements 2e-8, velocities 4e-8, accelerations 1.3e-6
(relative to the largest value); (2) a march that carries the slider's rigid motion vx t (mm) in
its coordinates where the other keeps displacements of ~1e-6 m: their round-off grows with vx t
(measured lambda: 3.3e-9 at vx t = 0.03 mm, 2.6e-8 at 0.3 mm, 2.6e-7 at 3 mm). The bounds below
are ``floor + slope * vx t`` with the floor 10x scale (1) and the slope 4-5x scale (2); time,
segment, status and steps are compared exactly. At a stop the last step differs by construction
(the engine sticks or opens where the sliding method's velocity or multiplier changes sign): the
signals are compared up to the step before it.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from two_body_reference import simulate_dense

from fesub.contact import simulate_multibody
from fesub.errors import ParameterError
from fesub.models import beam_on_beam as bb

FS_OUT = 50_000.0

#: relative bounds (to the signal's largest value): (floor, slope per metre of vx t), see above
BOUNDS = {"force": (1e-8, 5e-4), "position": (1e-9, 5e-4), "displacement": (2e-7, 5e-4),
          "velocity": (4e-7, 5e-3), "acceleration": (1.3e-5, 1e-3)}
KIND = {"lambda": "force", "f_x": "force", "f_y": "force", "v_t": "velocity", "x_contact": "position"}


@pytest.fixture(scope="module")
def bench():
    """The benchmark and its two-body system."""
    model = bb.build()
    return model, bb.contact_system(model)


def _same(ref, res, vx):
    """``res`` (the engine) is ``ref`` (the literal equations) to the round-off bounds of the module."""
    assert (res.status, res.steps) == (ref.status, ref.steps)
    assert res.stop_time == pytest.approx(ref.steps * ref.h, rel=1e-12) and res.h == ref.h
    assert set(res.signals) == set(ref.signals)
    np.testing.assert_allclose(res.signals["t"], ref.signals["t"], rtol=1e-12, atol=0)
    n = ref.signals["t"].size - (ref.status != "completed")  # the stopping step differs by construction
    np.testing.assert_array_equal(res.signals["segment"][:n], ref.signals["segment"][:n])
    # the gap after the step is closed to round-off of the positions (~1e-18 m on 5 mm) by both
    np.testing.assert_allclose(res.signals["gap"][:n], ref.signals["gap"][:n], rtol=0, atol=1e-16)
    travel = abs(vx) * ref.steps * ref.h
    for k, v in ref.signals.items():
        if k in ("t", "segment", "gap"):
            continue
        kind = KIND[k] if k in KIND else {"u": "displacement", "v": "velocity", "a": "acceleration"}[k[0]]
        floor, slope = BOUNDS[kind]
        scale = np.abs(v).max()
        err = np.abs(res.signals[k][:n] - v[:n]).max() / scale
        assert err <= floor + slope * travel, (k, err, floor + slope * travel)


@pytest.mark.parametrize("mu", [0.1, 0.3])
def test_transient_equals_the_literal_equations(mu, bench, backend):
    """The rough transient of the study (roughness 0.5 % of Fy, seed 0), 0.005 s (20 000 steps;
    0.002 s with the NumPy twins): every signal of the literal equations."""
    model, S = bench
    p = model.params
    dur = 0.005 if backend == "compiled" else 0.002
    kw = dict(mu=mu, duration=dur, fs_out=FS_OUT, roughness_std=p.roughness * p.Fy, roughness_band=p.roughness_band,
              seed=0)
    ref = simulate_dense(S, vx=p.vx, **kw)
    res = bb.transient(model, system=S, **kw)
    assert ref.status == "completed" and res.backend == backend
    _same(ref, res, p.vx)


@pytest.mark.parametrize("case", ["stick", "detachment", "off_surface"])
def test_stops_where_the_literal_equations_stop(case, bench):
    """Runs that stop: the same reason at the same step, every signal up to it. Stick: a slow
    slide (1 mm/s) with a rough force of 5 % of the load, the sliding velocity reverses;
    detachment: a rough force of 25 % of the load lifts the slave; off_surface: the slave starts
    1.5 mm before the end of the target and slides at 0.3 m/s."""
    model, S = bench
    p = model.params
    kw = dict(mu=0.3, duration=0.01, fs_out=FS_OUT, seed=0)
    if case == "stick":
        kw.update(vx=0.001, roughness_std=0.02)
    elif case == "detachment":
        kw.update(vx=p.vx, roughness_std=0.1)
    else:
        model = bb.build(replace(p, s0=0.0985))
        S = bb.contact_system(model)
        kw.update(vx=0.3, mu=0.1)
    ref = simulate_dense(S, **kw)
    res = bb.transient(model, system=S, **kw)
    assert ref.status == case and 0 < ref.steps < 0.01 / ref.h
    _same(ref, res, kw["vx"])


def test_force_series_is_checked(bench):
    """A force series must name a body, a free coordinate of it, and hold one finite force (N)
    per step."""
    model, initial, h = bb.multibody_model(bench[0], mu=0.3)
    C = int(model.contacts[0]["slave"].nodes[0])
    cy = int(model.bodies[0].node_dofs[C, 1])
    ax = int(model.bodies[0].p_idx[0])  # a prescribed coordinate (A, x)
    n = 10
    kw = dict(duration=n * h, h=h, initial=initial)
    good = np.zeros(n)
    for series, match in ((("slider", cy, np.zeros(n + 1)), "one force"), (("slider", cy, np.r_[good[:-1], np.nan]),
                                                                            "finite"),
                          (("slider", ax, good), "free coordinate"), (("slider", 1.5, good), "free coordinate"),
                          (("nobody", cy, good), "no body"), (("slider", cy), "body, coordinate, values"),
                          (("slider", cy, ["a"] * n), "real numbers")):
        for loop in ("kernel", "python"):
            with pytest.raises(ParameterError, match=match):
                simulate_multibody(model, series=[series], loop=loop, **kw)
    # zeros change nothing: the same states and segments, the same numbers to round-off (the
    # kernel takes the series' zeros into the predictor's pass, whose sums over the modes are
    # then grouped otherwise; the contact force, from the gap closed over a step, magnifies their
    # last bits: 1.6e-10 relative measured). Bounds as between the kernel and the Python loop
    # (test_multibody_march): forces and slip velocities 1e-9 of their largest value, the gap
    # after a step (itself round-off, 1e-14 m, when pressed) and the contact point the tol (m)
    a = simulate_multibody(model, **kw)
    b = simulate_multibody(model, series=[("slider", cy, good)], **kw)
    for k, v in a.nodes.items():
        if v.dtype.kind != "f":
            np.testing.assert_array_equal(b.nodes[k], v)
        elif k in ("gap", "contact_x", "contact_y"):
            np.testing.assert_allclose(b.nodes[k], v, rtol=0, atol=a.tol)
        else:
            np.testing.assert_allclose(b.nodes[k], v, rtol=0, atol=1e-9 * np.nanmax(np.abs(v)))


def test_force_series_work_closes_the_energy_balance():
    """A mass on a moving belt pushed by a square-wave force series (+-8 N, 1 s period) on x and
    loaded by a ramp (0 to 2 N) on y: with the series' work in the external work (~8 J of the
    ~10 J done), the energy balance leaves only the O(h^2) residual of the central-difference
    energies (h^2/8 k v^2, 2e-5 J at h = 1 ms with the mass reaching ~2 m/s): it falls 4x when h
    is halved (measured 3.99x)."""
    from test_contact_multinode import belt_model

    out = []
    for h in (1e-3, 5e-4):
        n = int(round(1.5 / h))
        t = np.arange(n) * h
        series = [("mass", 0, np.where((t % 1.0) < 0.5, 8.0, -8.0)), (0, 1, -2.0 * t / t[-1])]
        res = simulate_multibody(belt_model(), duration=1.5, h=h, series=series)
        free = simulate_multibody(belt_model(), duration=1.5, h=h)
        assert res.energies["external_work"][-1] - free.energies["external_work"][-1] > 5.0
        out.append(np.abs(res.energy_residual()).max())
    assert out[0] <= 3e-5 and 3.7 <= out[0] / out[1] <= 4.3
