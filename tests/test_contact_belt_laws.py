"""Friction laws beyond one coefficient in the 2D multibody engine: stick-slip of a mass on a
moving belt (fesub.contact.engine: the compiled march, its NumPy twin and the Python step loop).

A damped spring-mass pressed on a belt moving at VB: with static friction above kinetic
(``StaticKinetic``) or velocity weakening (``Stribeck``) it settles on a stick-slip limit cycle.
Reference, independent of the engine (``belt_reference``, shared with the solid engine's belt):
the event-driven integration of the piecewise-smooth motion from rest, slip phases by SciPy's
``solve_ivp`` (DOP853, rtol 1e-12) with a terminal event where the mass catches the belt (x' =
VB), stick phases in closed form (x' = VB until the spring and damper force k x + c VB reaches
mu_s N). The engine's stick and slip onsets, and the limit cycle's period, must agree within 1e-3
of the period.
"""

from __future__ import annotations

import numpy as np
import pytest

from fesub.contact.engine.bodies import Body, MultibodyModel
from fesub.contact.engine.friction import Coulomb, StaticKinetic, Stribeck, UserLaw
from fesub.contact.engine.interfaces import ContactInterface
from fesub.contact.engine.stepper import simulate_multibody
from fesub.errors import ParameterError

import belt_reference
from belt_reference import engine_events

BM, BK, BN, VB = 1.0, (2 * np.pi) ** 2, 10.0, 0.3      # kg, N/m, N, m/s
BC = 2 * 0.05 * np.sqrt(BK * BM)                         # N s/m (5 % of critical)
LAWS = {"static_kinetic": StaticKinetic(0.5, 0.3), "stribeck": Stribeck(0.5, 0.3, 0.1)}
H = 2e-4     # s: ~5000 steps a period (the periods are 0.9-1.1 s)
T_END = 3.2  # s: the first slip from rest and two cycles


def belt_model(friction=None, mu=None):
    mass = Body(np.eye(2) * BM, np.diag([BK, 0.0]), [[0.0, 0.0]], [[0, 1]], C=np.diag([BC, 0.0]), name="mass",
                loads=[0.0, -BN], outputs={"x": 0})
    belt = Body([[1.0]], [[0.0]], [[-50.0, 0.0], [50.0, 0.0]], [[0, -1], [0, -1]], name="belt", prescribed={0: VB})
    return MultibodyModel([mass, belt], [ContactInterface("mass", [0], "belt", [[0, 1]], mu, friction=friction)])


def reference(law, t_end):
    """Event times from rest of the belt of this file: [("stick", t), ("slip", t), ...] (s)."""
    return belt_reference.reference(law, t_end, m=BM, k=BK, c=BC, N=BN, vb=VB)


@pytest.mark.parametrize("name", sorted(LAWS))
def test_stick_slip_times_and_period_match_the_event_driven_integration(name, backend):
    law = LAWS[name]
    ref = reference(law, T_END)
    res = simulate_multibody(belt_model(law), duration=T_END, h=H)
    assert res.info["loop"] == "kernel" and res.backend == backend and res.status == "completed"
    got = engine_events(res)
    period = ref[3][1] - ref[1][1]  # slip onset to slip onset: the limit cycle from the first stick on
    assert 0.8 < period < 1.3 and [k for k, _ in got] == [k for k, _ in ref], (got, ref)
    err = max(abs(a[1] - b[1]) for a, b in zip(got, ref))
    # the engine resolves an event to its step (H = 2e-4 s): within about H of the reference,
    # 2e-4 of the period; the bound 1e-3 of the period leaves room for the O(h) of the stick onset
    assert err < 1e-3 * period, (err, period)
    assert abs((got[3][1] - got[1][1]) - period) < 1e-3 * period
    # slip at the law's coefficient: mu_k N in static/kinetic slip, mu(v) N with v the step's slip
    st, lt, ln = res.nodes["state"][:, 0], res.nodes["lambda_t"][:, 0], res.nodes["lambda_n"][:, 0]
    v = np.abs(res.nodes["slip_velocity"][:, 0])
    sl = st >= 2
    assert sl.sum() > 1000 and (st == 1).sum() > 1000
    np.testing.assert_allclose(np.abs(lt[sl]), law.coefficient(v[sl]) * ln[sl], rtol=1e-9)
    assert np.all(np.abs(lt[st == 1]) <= law.mu_static * ln[st == 1] * (1 + 1e-12))


def test_the_period_converges_with_the_step(backend):
    """The period's error shrinks with h (first order: events are resolved to a step)."""
    law = LAWS["static_kinetic"]
    ref = reference(law, 2.5)
    period = ref[3][1] - ref[1][1]
    errs = []
    for h in (2e-3, 1e-3, 5e-4):
        got = engine_events(simulate_multibody(belt_model(law), duration=2.5, h=h))
        errs.append(max(abs(a[1] - b[1]) for a, b in zip(got, ref)) / period)
    assert errs[2] < errs[0] / 2.5, errs


@pytest.mark.parametrize("name", sorted(LAWS))
def test_compiled_loop_twin_and_python_loop_agree(name, backend):
    """The kernel loop (compiled, or the twin when forced) and the Python step loop (the cone
    kernel per step) take the same steps: forces and states to round-off."""
    law = LAWS[name]
    model = belt_model(law)
    kw = dict(duration=1.6, h=1e-3)
    a = simulate_multibody(model, loop="kernel", **kw)
    b = simulate_multibody(model, loop="python", **kw)
    assert a.backend == backend and a.info["loop"] == "kernel" and b.info["loop"] == "python"
    np.testing.assert_array_equal(a.nodes["state"], b.nodes["state"])
    for key in ("lambda_n", "lambda_t", "slip_velocity"):
        # the closed form (kernel) and the cone's enumeration (Python loop) differ in round-off;
        # over 1600 steps it grows to ~1e-12 of the force scale
        np.testing.assert_allclose(a.nodes[key], b.nodes[key], rtol=1e-8, atol=1e-9 * BN)
    np.testing.assert_allclose(a.channels["u_x"], b.channels["u_x"], rtol=1e-8, atol=1e-12)


def test_a_user_law_runs_the_python_loop_and_equals_the_built_in_law():
    law = LAWS["stribeck"]
    user = UserLaw(lambda v: 0.3 + 0.2 * np.exp(-v / 0.1))
    kw = dict(duration=1.6, h=1e-3)
    a = simulate_multibody(belt_model(law), **kw)
    b = simulate_multibody(belt_model(user), **kw)
    assert b.info["loop"] == "python" and "Python callable" in b.info["python_loop_reason"]
    np.testing.assert_array_equal(a.nodes["state"], b.nodes["state"])
    # brentq on the user law (xtol 2e-12 in mu) against the kernel's root to a few ulps
    np.testing.assert_allclose(a.nodes["lambda_t"], b.nodes["lambda_t"], rtol=1e-8, atol=1e-9 * BN)
    with pytest.raises(ParameterError, match="Python callable"):
        simulate_multibody(belt_model(user), loop="kernel", **kw)


def test_coulomb_as_a_law_is_the_same_run_as_mu(backend):
    kw = dict(duration=1.0, h=1e-3)
    a = simulate_multibody(belt_model(mu=0.4), **kw)
    b = simulate_multibody(belt_model(Coulomb(0.4)), **kw)
    c = simulate_multibody(belt_model(StaticKinetic(0.4, 0.4)), **kw)
    for key in ("lambda_n", "lambda_t", "state"):
        np.testing.assert_array_equal(a.nodes[key], b.nodes[key])
        # the same law through the law path: the closed forms agree to round-off
        np.testing.assert_allclose(a.nodes[key], c.nodes[key], rtol=1e-10, atol=1e-12)


def test_bad_friction_input_gets_one_clear_error():
    with pytest.raises(ParameterError, match="mu_k"):
        StaticKinetic(0.3, 0.5)
    with pytest.raises(ParameterError, match="not both"):
        ContactInterface("mass", [0], "belt", [[0, 1]], 0.5, friction=StaticKinetic(0.5, 0.3))
    with pytest.raises(ParameterError, match="one per node"):
        ContactInterface("mass", [0, 1], "belt", [[0, 1]], friction=[Coulomb(0.3)] * 3)
    with pytest.raises(ParameterError, match="friction law"):
        ContactInterface("mass", [0], "belt", [[0, 1]], friction="dry")
    # a Coulomb law of the same coefficient as mu is consistent
    itf = ContactInterface("mass", [0], "belt", [[0, 1]], 0.5, friction=Coulomb(0.5))
    assert itf.mu.tolist() == [0.5] and itf.law_code.tolist() == [0]


def test_two_masses_with_laws_run_the_kernel_each_as_the_single_one(backend):
    """Two masses on one belt (two interfaces, one static/kinetic, one Stribeck): the kernel's
    block sweeps with each node's own law (``pgs_laws``), and each mass moves as it does alone
    (the one-node closed form, another path through the kernel)."""
    def body(name):
        return Body(np.eye(2) * BM, np.diag([BK, 0.0]), [[0.0, 0.0]], [[0, 1]], C=np.diag([BC, 0.0]), name=name,
                    loads=[0.0, -BN], outputs={"x": 0})

    belt = Body([[1.0]], [[0.0]], [[-50.0, 0.0], [50.0, 0.0]], [[0, -1], [0, -1]], name="belt", prescribed={0: VB})
    model = MultibodyModel([body("a"), body("b"), belt],
                           [ContactInterface("a", [0], "belt", [[0, 1]], friction=LAWS["static_kinetic"]),
                            ContactInterface("b", [0], "belt", [[0, 1]], friction=LAWS["stribeck"])])
    kw = dict(duration=1.6, h=1e-3)
    both = simulate_multibody(model, **kw)
    assert both.info["loop"] == "kernel" and both.backend == backend
    for i, name in enumerate(("static_kinetic", "stribeck")):
        one = simulate_multibody(belt_model(LAWS[name]), **kw)
        np.testing.assert_array_equal(both.nodes["state"][:, i], one.nodes["state"][:, 0])
        # two uncoupled nodes: the block sweeps end in their second sweep at the single node's
        # solution, to round-off
        np.testing.assert_allclose(both.nodes["lambda_t"][:, i], one.nodes["lambda_t"][:, 0], rtol=1e-8,
                                   atol=1e-9 * BN)


def chain_model(n=6):
    """``n`` masses in a row on the belt, coupled by horizontal (20 N/m) and vertical (500 N/m)
    springs, pressed by unequal loads, each node with its own law (Coulomb, static/kinetic,
    Stribeck in turn, with coefficients that differ from node to node)."""
    M = np.eye(2 * n) * BM
    K, C = np.zeros((2 * n, 2 * n)), np.zeros((2 * n, 2 * n))
    K[0::2, 0::2] += np.eye(n) * BK
    C[0::2, 0::2] += np.eye(n) * BC
    for i in range(n - 1):
        for d, s in ((0, 20.0), (1, 500.0)):
            a, b = 2 * i + d, 2 * i + 2 + d
            K[[a, b], [a, b]] += s
            K[a, b] -= s
            K[b, a] -= s
    loads = np.zeros(2 * n)
    loads[1::2] = -BN * (1 + 0.3 * np.sin(np.arange(n)))
    laws = [Coulomb(0.4) if i % 3 == 0 else StaticKinetic(0.5 + 0.01 * i, 0.3) if i % 3 == 1
            else Stribeck(0.55, 0.3, 0.05 + 0.01 * i) for i in range(n)]
    chain = Body(M, K, np.c_[np.arange(n) * 0.1, np.zeros(n)], np.arange(2 * n).reshape(n, 2), C=C, name="chain",
                 loads=loads, outputs={"x0": 0})
    belt = Body([[1.0]], [[0.0]], [[-50.0, 0.0], [50.0, 0.0]], [[0, -1], [0, -1]], name="belt", prescribed={0: VB})
    return MultibodyModel([chain, belt], [ContactInterface("chain", list(range(n)), "belt", [[0, 1]],
                                                           friction=laws)]), laws


@pytest.fixture(scope="module")
def chain_python_loop():
    model, laws = chain_model()
    return simulate_multibody(model, loop="python", duration=1.5, h=1e-3, progress=False)


def test_coupled_nodes_each_with_its_own_law_kernel_equals_the_python_loop(chain_python_loop, backend):
    """Six coupled nodes with mixed laws: the kernel loop (compiled, or its twin) and the Python
    step loop (the cone kernel's block sweeps on the 2D problem embedded in 3D) take the same
    steps; every node obeys its own law."""
    model, laws = chain_model()
    a = simulate_multibody(model, duration=1.5, h=1e-3, progress=False)
    b = chain_python_loop
    assert a.info["loop"] == "kernel" and a.backend == backend and b.info["loop"] == "python"
    assert a.status == "completed" and b.status == "completed"
    st = a.nodes["state"]
    np.testing.assert_array_equal(st, b.nodes["state"])
    assert (np.diff(st, axis=0) != 0).sum() >= 10  # stick and slip alternate at the nodes
    # round-off: a stuck node's force is its predicted slip (a difference of positions ~0.3 m,
    # round-off ~1e-17 m) over W_tt ~ h^2 / m = 1e-6 m/N, so ~1e-11 N (measured 1.4e-10 over the run)
    for key in ("lambda_n", "lambda_t"):
        np.testing.assert_allclose(a.nodes[key], b.nodes[key], rtol=0, atol=1e-9 * BN)
    np.testing.assert_allclose(a.nodes["slip_velocity"], b.nodes["slip_velocity"], rtol=0, atol=1e-10)
    np.testing.assert_allclose(a.channels["u_x0"], b.channels["u_x0"], rtol=1e-10, atol=1e-13)
    ln, lt, v = a.nodes["lambda_n"], a.nodes["lambda_t"], np.abs(a.nodes["slip_velocity"])
    for i, law in enumerate(laws):
        sl, sk = st[:, i] >= 2, st[:, i] == 1
        assert sl.sum() > 50 and sk.sum() > 50, (i, sl.sum(), sk.sum())
        # slip at the node's own coefficient of its own slip speed; stick inside its static cone
        np.testing.assert_allclose(np.abs(lt[sl, i]), law.coefficient(v[sl, i]) * ln[sl, i], rtol=1e-9)
        assert np.all(np.abs(lt[sk, i]) <= law.mu_static * ln[sk, i] * (1 + 1e-12))
        assert np.all(ln[:, i] > 0)
