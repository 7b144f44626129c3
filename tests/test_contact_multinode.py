"""Multibody contact with many nodes that stick, slip and separate (fesub.contact.engine.stepper).

References, each independent of the stepper:
* impacts of two free masses: the perfectly inelastic loss 1/2 m_eff v_rel^2 computed by hand
  from the velocities before the impact, and momentum conservation;
* a damped spring-mass on a moving belt: stick and slip times from an event-driven integration
  of the piecewise-smooth equations (scipy ``solve_ivp`` with events, written here);
* an elastic block (plane-stress FE) under a slowly growing tangential load: gross sliding at
  T = mu N (Coulomb's law over the whole contact), partial slip from an edge before it;
* the energy balance, whose residual must shrink as h^2;
* complementarity and Coulomb's law at every output sample of every node of every run;
* the compiled kernel and its NumPy twin give the same per-node results.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from fesub import _backend
from fesub.contact.engine.interfaces import ContactInterface, TiedInterface
from fesub.contact.engine.bodies import Body, MultibodyModel
from fesub.contact.engine.stepper import simulate_multibody
from fesub.errors import ModelError, ParameterError
from fesub.fe import PlaneStress, rectangle
from fesub.substructure import CraigBampton, Substructure

HAVE_COMPILED = _backend.compiled_available("friction_lcp")
REQUIRE_EXT = os.environ.get("FESUB_REQUIRE_EXT", "0") not in ("", "0")


def check_complementarity(res, model, factor=10.0):
    """Signorini and Coulomb conditions at every sample of every node.

    The kernel stops when no row update changed a gap or slip by more than ``tol`` during a sweep;
    the remaining violation of any row is then a sum of a few such changes of its neighbours. A
    bound of ``factor * tol`` (gap in m, slip = slip velocity * h in m) leaves room for them;
    forces are compared with a relative 1e-9 (the kernel clamps the tangential force exactly to
    mu lambda_n: only round-off remains)."""
    tol = factor * res.tol
    mu = np.concatenate([c["mu"] for c in model.contacts])
    ln, lt = res.nodes["lambda_n"], res.nodes["lambda_t"]
    gap, slip, st = res.nodes["gap"], res.nodes["slip_velocity"] * res.h, res.nodes["state"]
    on = np.isfinite(gap)
    scale = max(np.abs(ln).max(initial=0.0), 1e-300)
    assert np.all(ln >= 0)
    assert np.all(gap[on] >= -tol), gap[on].min()
    closed = ln > 0
    # lambda_n * gap = 0: a pressed node has no gap (to tol), an open one no force
    assert np.all(np.abs(gap[closed]) <= tol), np.abs(gap[closed]).max()
    assert np.all(lt[~closed] == 0)
    assert np.all(np.abs(lt) <= mu * ln + 1e-9 * scale)
    assert np.all(np.isin(st, (0, 1, 2, 3)))
    assert np.all((st > 0) == closed)
    stick = st == 1
    assert np.all(np.abs(slip[stick]) <= tol), np.abs(slip[stick]).max(initial=0)
    assert np.all(np.abs(lt[stick]) < mu[None, :].repeat(st.shape[0], 0)[stick] * ln[stick])
    slip_p, slip_m = st == 2, st == 3
    # sliding: the friction force is at the limit and opposes the slip
    assert np.all(np.abs(np.abs(lt[slip_p | slip_m]) - (mu * ln)[slip_p | slip_m]) <= 1e-9 * scale)
    assert np.all(slip[slip_p] >= -tol) and np.all(slip[slip_m] <= tol)
    assert np.all(lt[slip_p] <= 0) and np.all(lt[slip_m] >= 0)


# ------------------------------------------------------------------------------- models
M1, M2 = 2.0, 3.0  # kg


def two_masses():
    """Slave mass m1 at x = 0 moving along x, master m2 with a vertical face at x = 0.01 m (the
    segment runs in +y, so the open side is -x)."""
    pulses = [(0.03, 0.04, -100.0), (0.06, 0.08, 100.0)]  # (start s, end s, force on m1 in N)

    def f1(t):
        return np.array([sum(F for a, b, F in pulses if a <= t < b)])

    b1 = Body([[M1]], [[0.0]], [[0.0, 0.0]], [[0, -1]], name="m1", loads=f1, outputs={"x1": 0})
    b2 = Body([[M2]], [[0.0]], [[0.01, -1.0], [0.01, 1.0]], [[0, -1], [0, -1]], name="m2", outputs={"x2": 0})
    return MultibodyModel([b1, b2], [ContactInterface("m1", [0], "m2", [[0, 1]], mu=0.0)])


# spring-mass on a belt: m x'' + c x' + k x = friction, normal load N, belt speed VB
BM, BK, BZETA, BMU, BN, VB = 1.0, (2 * np.pi) ** 2, 0.05, 0.5, 10.0, 0.3
BC = 2 * BZETA * np.sqrt(BK * BM)
PERIOD = 2 * np.pi * np.sqrt(BM / BK)  # 1 s


def belt_model():
    mass = Body(np.eye(2) * BM, np.diag([BK, 0.0]), [[0.0, 0.0]], [[0, 1]], C=np.diag([BC, 0.0]), name="mass",
                loads=[0.0, -BN], outputs={"x": 0})
    belt = Body([[1.0]], [[0.0]], [[-50.0, 0.0], [50.0, 0.0]], [[0, -1], [0, -1]], name="belt", prescribed={0: VB})
    return MultibodyModel([mass, belt], [ContactInterface("mass", [0], "belt", [[0, 1]], mu=BMU)])


def belt_events(t_end):
    """Stick and slip times of the mass from rest, by event-driven integration of the smooth
    phases: slip (friction + mu N along the belt while the mass is slower than the belt), stick
    (x' = VB while |k x + c VB| <= mu N)."""
    F = BMU * BN
    rtol = dict(rtol=1e-12, atol=1e-14)

    def slip(t, y):
        return [y[1], (F - BC * y[1] - BK * y[0]) / BM]

    def catch(t, y):  # relative velocity reaches zero from below
        return y[1] - VB

    catch.terminal, catch.direction = True, 1
    events, t0, y0 = [], 0.0, [0.0, 0.0]
    while t0 < t_end:
        sol = solve_ivp(slip, (t0, t_end), y0, events=catch, **rtol)
        if not sol.t_events[0].size:
            break
        t1 = float(sol.t_events[0][0])
        x1 = float(sol.y_events[0][0][0])
        events.append(("stick", t1))
        # stick: x = x1 + VB (t - t1) until the spring and damper force reaches mu N
        t2 = t1 + ((F - BC * VB) / BK - x1) / VB
        events.append(("slip", t2))
        # leave the stick with the slip equation's acceleration just below zero: start a hair
        # after t2 so that the catch event does not fire at its own start
        t0, y0 = t2 + 1e-9, [(F - BC * VB) / BK + VB * 1e-9, VB]
    return events


def block_model(rate):
    """Plane-stress block 0.1 x 0.02 m (10 x 2 Q4) on a rigid ground, normal load ramped to 10 N
    over 0.05 s, then a tangential load T = rate (t - 0.06) on its top (N)."""
    mesh = rectangle(0.1, 0.02, 10, 2)
    sub = Substructure(mesh, PlaneStress(2e6, 0.3, 1000.0, 0.01), rayleigh=(200.0, 0.0))
    bottom, top = (mesh.nodes(s) for s in ("bottom", "top"))
    bottom = bottom[np.argsort(mesh.points[bottom, 0])]
    wts = np.ones(top.size)
    wts[[0, -1]] = 0.5  # consistent nodal loads of a uniform traction
    wts /= wts.sum()
    dx, dy = sub.dofs(top, "x"), sub.dofs(top, "y")

    def loads(t):
        f = np.zeros(sub.n_dofs)
        s = min(t / 0.05, 1.0)
        f[dy] = -10.0 * s * s * (3 - 2 * s) * wts
        f[dx] = rate * max(t - 0.06, 0.0) * wts
        return f

    block = Body.from_substructure(sub, name="block", loads=loads)
    ground = Body(np.zeros((0, 0)), np.zeros((0, 0)), [[-0.05, 0.0], [0.15, 0.0]], [[-1, -1], [-1, -1]],
                  name="ground")
    return MultibodyModel([block, ground], [ContactInterface("block", bottom, "ground", [[0, 1]], mu=0.3)])


# ------------------------------------------------------------------------------- tests
def test_impacts_lose_the_inelastic_energy_and_nothing_between():
    model = two_masses()
    h = 1e-4
    res = simulate_multibody(model, duration=0.2, h=h, initial={"m1": ([0.0], [1.0])})
    check_complementarity(res, model)
    assert res.status == "completed"
    u1, u2 = res.channels["u_x1"], res.channels["u_x2"]
    # an impact: the normal force jumps to the impulsive level (m v / h ~ 1e4 N); persistent
    # contact after it carries round-off forces (~1e-9 N) that come and go with the sign of the
    # round-off of the predicted gap
    ln = res.nodes["lambda_n"][:, 0]
    pressed = ln > 1e-6 * ln.max()
    starts = np.flatnonzero(pressed[1:] & ~pressed[:-1]) + 1
    assert starts.size == 2  # the initial impact, and the one after the push
    m_eff = M1 * M2 / (M1 + M2)
    loss, T = res.energies["impact_loss"], res.energies["kinetic"]
    for k in starts:
        # velocities over the last free step before the impact (free flight: f = 0 there)
        v1, v2 = (u1[k] - u1[k - 1]) / h, (u2[k] - u2[k - 1]) / h
        hand = 0.5 * m_eff * (v1 - v2) ** 2
        assert abs((loss[k + 5] - loss[k - 1]) - hand) <= 1e-9 * hand
        assert abs((T[k - 1] - T[k + 5]) - hand) <= 1e-9 * hand
        # relative velocity removed, momentum kept
        w1, w2 = (u1[k + 6] - u1[k + 5]) / h, (u2[k + 6] - u2[k + 5]) / h
        assert abs(w1 - w2) <= 1e-9 * abs(v1 - v2)
        assert abs(M1 * w1 + M2 * w2 - (M1 * v1 + M2 * v2)) <= 1e-12 * (M1 * abs(v1) + M2 * abs(v2))
    # between impacts: no loss, and kinetic energy changes only by the work of the pulses
    quiet = np.ones(loss.size, bool)
    for k in starts:
        quiet[k - 1:k + 6] = False
    dloss = np.diff(loss)[quiet[1:] & quiet[:-1]]
    assert np.abs(dloss).max() <= 1e-12 * 0.5 * M1
    # K = 0: the balance is exact; round-off of ~2000 sums of ~1 J terms: 2000 x 2e-16 J
    assert np.abs(res.energy_residual()).max() <= 1e-11


def test_belt_stick_slip_times_match_event_driven_integration():
    model = belt_model()
    h = 2e-4  # 2e-4 of the period: the forward-increment times are within O(h) of the exact ones
    res = simulate_multibody(model, duration=2.0, h=h)
    check_complementarity(res, model)
    st = res.nodes["state"][:, 0]
    changes = np.flatnonzero(np.diff(st)) + 1
    got = [("stick" if st[i] == 1 else "slip", res.t[i]) for i in changes]
    ref = belt_events(2.0)
    assert [g[0] for g in got] == [r[0] for r in ref] == ["stick", "slip"]
    err = max(abs(g[1] - r[1]) for g, r in zip(got, ref)) / PERIOD
    assert err <= 1e-3, err
    assert np.all(st[:changes[0]] == 3)  # slower than the belt: slip- (along -x relative to it)
    np.testing.assert_allclose(res.nodes["lambda_n"][:, 0], BN, rtol=1e-9)


def test_energy_balance_with_friction_converges_as_h_squared():
    model = belt_model()
    out = []
    for h in (1e-3, 5e-4):
        res = simulate_multibody(model, duration=1.5, h=h)
        check_complementarity(res, model)
        out.append(np.abs(res.energy_residual()).max() / res.energies["external_work"][-1])
        # closed form of the residual: the central-difference scheme conserves exactly the
        # energy with strain 1/2 q_n' K q_{n+1} = V(q_mid) - h^2/8 v' K v; from rest, the residual
        # is -h^2/8 k v_{n+1/2}^2 (half-step velocity from the output channel, every step).
        # Measured 2.7e-13 J against a residual of 4.4e-7 J: round-off of ~1500 sums of ~1 J
        v = np.diff(res.channels["u_x"]) / h
        np.testing.assert_allclose(res.energy_residual()[:-1], -h * h / 8 * BK * v * v, rtol=0, atol=1e-11)
    ratio = out[0] / out[1]
    # second order: 4 for a residual exactly h^2/8 v'Kv on the same trajectory; the trajectories
    # differ by O(h) (measured 4.00002)
    assert 3.6 <= ratio <= 4.4, (out, ratio)
    assert out[0] < 1e-5


def test_block_slides_at_mu_N_after_partial_slip_from_an_edge():
    model = block_model(rate=10.0)
    res = simulate_multibody(model, duration=0.42, fs_out=1e4)
    check_complementarity(res, model)
    st = res.nodes["state"]
    T = 10.0 * np.maximum(res.t - 0.06, 0.0)
    gross = np.flatnonzero(np.all(st >= 2, axis=1) & (T > 0))[0]
    # quasi-static loading (0.36 s, 30 periods of the first mode): T = mu N at gross sliding to 1 %
    assert abs(T[gross] / (0.3 * 10.0) - 1) <= 0.01
    first = np.flatnonzero(np.any(st >= 2, axis=1) & (T > 0))[0]
    slipping = np.flatnonzero(st[first] >= 2)
    assert T[first] < 0.5 * T[gross]
    assert set(slipping.tolist()) <= {0, st.shape[1] - 1}  # an edge node slips first
    partial = np.any(st >= 2, axis=1) & np.any(st == 1, axis=1)
    assert partial[first:gross].all()


@pytest.mark.skipif(not (HAVE_COMPILED or REQUIRE_EXT), reason="compiled friction_lcp kernel not built")
def test_compiled_and_twin_kernels_give_the_same_node_results():
    model = block_model(rate=40.0)
    out = {}
    for backend in ("python", "compiled"):
        with _backend.use(backend):
            out[backend] = simulate_multibody(model, duration=0.12, fs_out=1e4)
    a, b = out["python"], out["compiled"]
    assert (a.backend, b.backend) == ("python", "compiled")
    np.testing.assert_array_equal(a.nodes["state"], b.nodes["state"])
    # the two differ in the summation order only: round-off (measured 1.4e-14 N on 1.2 N), which
    # the iteration could amplify only by ending after a different number of sweeps
    for k in ("lambda_n", "lambda_t"):
        np.testing.assert_allclose(a.nodes[k], b.nodes[k], rtol=0, atol=1e-9 * np.abs(a.nodes[k]).max())
    np.testing.assert_allclose(a.nodes["gap"], b.nodes["gap"], rtol=0, atol=10 * a.tol)


def test_stop_on_first_stick_and_result_round_trip(tmp_path):
    from fesub import load

    model = belt_model()
    res = simulate_multibody(model, duration=2.0, h=1e-3, on_stick="stop", fs_out=100.0)
    assert res.status == "stick"
    assert res.nodes["state"][-1, 0] == 1 and np.all(res.nodes["state"][:-1, 0] == 3)
    assert abs(res.t[-1] - belt_events(2.0)[0][1]) <= 2e-3
    back = load(res.save(tmp_path / "belt"))
    for k, v in res.nodes.items():
        np.testing.assert_array_equal(back.nodes[k], v)
    for k, v in res.energies.items():
        np.testing.assert_array_equal(back.energies[k], v)
    np.testing.assert_array_equal(back.channels["u_x"], res.channels["u_x"])
    assert back.status == "stick" and back.info == res.info
    assert res.summary()["results"]["status"]["value"] == "stick"
    ds = res.to_xarray()
    assert all("units" in ds[v].attrs for v in ds.variables)


def test_tied_bodies_move_as_one():
    # two masses on springs, tied: one mass m1 + m2 on k1 + k2 (closed form frequency)
    k1, k2 = 100.0, 300.0
    b1 = Body([[M1]], [[k1]], [[0.0, 0.0]], [[0, -1]], name="a", outputs={"xa": 0})
    b2 = Body([[M2]], [[k2]], [[0.0, 0.0]], [[0, -1]], name="b", outputs={"xb": 0})
    model = MultibodyModel([b1, b2], ties=[TiedInterface("a", [0], "b", [0])])
    assert model.n_modes == 1
    np.testing.assert_allclose(model.omega2, (k1 + k2) / (M1 + M2), rtol=1e-12)
    res = simulate_multibody(model, duration=0.5, h=1e-3, initial={"a": ([0.01], [0.0]), "b": ([0.01], [0.0])})
    # the two outputs are the same modal motion through two equal rows of the basis; the BLAS
    # product may round the two rows differently (its vector kernels depend on the CPU and the
    # rows' positions): equal to a few units in the last place of the largest displacement
    ua, ub = res.channels["u_xa"], res.channels["u_xb"]
    np.testing.assert_allclose(ua, ub, rtol=0, atol=4 * np.finfo(float).eps * np.abs(ua).max())
    assert np.abs(ua).max() > 0.009  # it moves: 0.01 m at the start


def test_bad_arguments_are_refused():
    model = belt_model()
    with pytest.raises(ParameterError, match="stability limit"):
        simulate_multibody(model, duration=1.0, h=1.0)
    with pytest.raises(ParameterError, match="on_stick"):
        simulate_multibody(model, duration=1.0, h=1e-3, on_stick="halt")
    with pytest.raises(ParameterError, match="mu"):
        ContactInterface(0, [0], 1, [[0, 1]], mu=-0.1)
    with pytest.raises(ParameterError, match="body"):
        MultibodyModel(model.bodies, [ContactInterface("nobody", [0], "belt", [[0, 1]])])
    bad = Body([[1.0]], [[1.0]], [[0.0, 0.0]], [[0, -1]], name="bad", loads=lambda t: np.zeros(2))
    with pytest.raises(ParameterError, match="loads"):
        simulate_multibody(MultibodyModel([bad]), duration=0.01, h=1e-3)
    # the initial state is a dict {body: (u, v)}: an array, a bad pair or a bad shape is named
    for initial, what in ((np.zeros(3), "must be a dict"), ({"mass": 1.0}, "pair"),
                          ({"mass": (np.zeros(5), np.zeros(5))}, "initial state of body"),
                          ({"nobody": ([0.0], [0.0])}, "body")):
        with pytest.raises(ParameterError, match=what):
            simulate_multibody(model, duration=1e-3, h=1e-3, initial=initial)
    cb_like = Body(np.eye(2), np.eye(2), [[0.0, 0.0]], [[-2, -2]], name="x")
    with pytest.raises(ModelError, match="interior"):
        MultibodyModel([cb_like, model.bodies[1]], [ContactInterface("x", [0], "belt", [[0, 1]])])


@pytest.mark.parametrize("reduced", [False, True])
def test_pressed_block_carries_the_consistent_nodal_loads(reduced):
    """A frictionless block pressed by a uniform traction on a flat rigid ground: once the
    vibration of the load ramp has died out (Rayleigh alpha = 200 1/s, e^-7 of it left after
    0.07 s), each bottom node carries the consistent nodal force of a uniform pressure, 10 N x
    (1/2, 1, ..., 1, 1/2)/10. The Craig-Bampton body (bottom and top nodes as boundary, 8
    fixed-interface modes) is statically exact for loads on its boundary: the same forces."""
    mesh = rectangle(0.1, 0.02, 10, 2)
    sub = Substructure(mesh, PlaneStress(2e6, 0.3, 1000.0, 0.01), rayleigh=(200.0, 0.0))
    bottom, top = (mesh.nodes(s) for s in ("bottom", "top"))
    bottom = bottom[np.argsort(mesh.points[bottom, 0])]
    dy = sub.dofs(top, "y")
    wts = np.ones(top.size)
    wts[[0, -1]] = 0.5
    wts /= wts.sum()
    if reduced:
        cb = CraigBampton(sub, boundary=np.r_[sub.dofs(bottom), dy], n_modes=8)
        block = Body.from_craig_bampton(cb, name="block", loads={int(d): -10.0 * w for d, w in zip(dy, wts)})
    else:
        f = np.zeros(sub.n_dofs)
        f[dy] = -10.0 * wts
        block = Body.from_substructure(sub, name="block", loads=f)
    ground = Body(np.zeros((0, 0)), np.zeros((0, 0)), [[-0.05, 0.0], [0.15, 0.0]], [[-1, -1], [-1, -1]],
                  name="ground")
    model = MultibodyModel([block, ground], [ContactInterface("block", bottom, "ground", [[0, 1]], mu=0.0)])
    res = simulate_multibody(model, duration=0.1, h=1e-4, fs_out=1e3)
    check_complementarity(res, model)
    # residual vibration: measured 5e-5 N on 1 N (both bodies); 1e-3 leaves room, any mapping
    # error of a node (a wrong DOF, a missing boundary) is a whole newton
    np.testing.assert_allclose(res.nodes["lambda_n"][-1], 10.0 * wts[np.argsort(mesh.points[top, 0])], atol=1e-3)
    assert np.all(res.nodes["state"][-1] >= 2)  # mu = 0: every pressed node is at the (zero) limit


def test_interrupt_returns_the_steps_done():
    model = belt_model()
    mass = model.bodies[0]

    def loads(t):
        if t > 0.05:
            raise KeyboardInterrupt
        return np.array([0.0, -BN])

    mass.loads = loads
    model = MultibodyModel(model.bodies, model.interfaces)
    res = simulate_multibody(model, duration=1.0, h=1e-3)
    assert res.status == "interrupted"
    assert res.t.size == 51 and res.steps == 51 and res.t[-1] == pytest.approx(0.05)


def test_one_slave_node_reproduces_the_two_body_sliding_core():
    """The beam-on-beam benchmark as an instance of the general system: slider and target from
    their Craig-Bampton models, the slider driven along x at A, one slave node C on the target's
    top edge, started from the core's static sliding state. The two-body core closes the gap by
    one division with the friction force fixed along the sliding direction; here the kernel
    finds the normal and tangential forces by iteration to its tolerance (and the slip direction
    by itself). Measured: lambda within 1.7e-8, displacements within 3e-11 (relative)."""
    from fesub.contact import simulate
    from fesub.models import beam_on_beam as bb

    mu, vx = 0.3, 0.03
    bbm = bb.build()
    S = bb.contact_system(bbm)
    model, initial, h = bb.multibody_model(bbm, mu=mu, vx=vx)
    assert h == 0.9 * S.critical_step() and model.critical_step() == pytest.approx(S.critical_step(), rel=1e-12)
    ref = simulate(S, mu=mu, duration=400 * h, h=h, fs_out=1 / h, vx=vx)
    res = simulate_multibody(model, duration=400 * h, h=h, initial=initial)
    check_complementarity(res, model)
    assert res.steps == ref.steps == 400 and np.all(res.nodes["state"][:, 0] == 2)  # slip+ throughout
    ln = res.nodes["lambda_n"][:, 0]
    # the kernel stops when a sweep changes the gap by < tol (1e-13 m here); the force that
    # leaves is far below 1e-6 of lambda (measured 1.7e-8)
    assert np.abs(ln - ref.signals["lambda"]).max() <= 1e-6 * np.abs(ref.signals["lambda"]).max()
    np.testing.assert_allclose(res.nodes["lambda_t"][:, 0], -mu * ln, rtol=1e-12)
    np.testing.assert_allclose(res.nodes["slip_velocity"][:, 0], ref.signals["v_t"], rtol=1e-8)
    for k in ("u_T_y", "u_C_y"):
        assert np.abs(res.channels[k] - ref.signals[k]).max() <= 1e-9 * np.abs(ref.signals[k]).max(), k


def test_tied_halves_press_and_stick_as_the_whole_block():
    """Two FE half-blocks (5 x 2 Q4 each) tied along their common edge, each with its bottom
    nodes in frictional contact (mu = 0.3) with the ground, against the whole 10 x 2 block: the
    tie (primal assembly) makes the same model in other coordinates, so forces and states agree
    to round-off (measured 3.8e-14 N on 2 N)."""
    mat = PlaneStress(2e6, 0.3, 1000.0, 0.01)

    def pressed(length, nx, x0, total, name):
        mesh = rectangle(length, 0.02, nx, 2, origin=(x0, 0.0))
        sub = Substructure(mesh, mat, rayleigh=(200.0, 0.0), name=name)
        top = mesh.nodes("top")
        w = np.ones(top.size)
        w[[0, -1]] = 0.5
        f = np.zeros(sub.n_dofs)
        f[sub.dofs(top, "y")] = -total * w / w.sum()
        return mesh, Body.from_substructure(sub, name=name, loads=f)

    ground = Body(np.zeros((0, 0)), np.zeros((0, 0)), [[-0.05, 0.0], [0.15, 0.0]], [[-1, -1], [-1, -1]],
                  name="ground")
    ml, left = pressed(0.05, 5, 0.0, 5.0, "left")
    mr, right = pressed(0.05, 5, 0.05, 5.0, "right")
    edge_l, edge_r = ml.nodes("right"), mr.nodes("left")  # both sorted by y (node numbering)
    halves = MultibodyModel(
        [left, right, ground],
        [ContactInterface("left", ml.nodes("bottom"), "ground", [[0, 1]], mu=0.3),
         ContactInterface("right", np.setdiff1d(mr.nodes("bottom"), mr.nodes("bottom_left")), "ground", [[0, 1]],
                          mu=0.3)],  # the shared bottom node is a slave of the left half only
        ties=[TiedInterface("left", edge_l, "right", edge_r)])
    mw, whole = pressed(0.1, 10, 0.0, 10.0, "block")
    one = MultibodyModel([whole, ground], [ContactInterface("block", mw.nodes("bottom"), "ground", [[0, 1]], mu=0.3)])
    assert halves.n_modes == one.n_modes == 66
    a = simulate_multibody(one, duration=0.05, h=1e-4, fs_out=1e3)
    b = simulate_multibody(halves, duration=0.05, h=1e-4, fs_out=1e3)
    check_complementarity(b, halves)
    np.testing.assert_array_equal(a.nodes["state"], b.nodes["state"])
    for k in ("lambda_n", "lambda_t"):
        np.testing.assert_allclose(b.nodes[k], a.nodes[k], rtol=0, atol=1e-10 * np.abs(a.nodes["lambda_n"]).max())


def test_one_motion_on_many_coordinates_is_called_once_per_time():
    """A driven edge (the same callable on several coordinates, a bound method given again and
    again included) is called once per time: the motion is the callable's (u, v, a) on each of
    them, the constant velocities beside it u = v t, and a bad return still names a coordinate."""
    calls = []

    class Drive:
        def motion(self, t):
            calls.append(t)
            return (0.1 * t * t, 0.2 * t, 0.2)

    d = Drive()
    body = Body(np.eye(4), np.eye(4), np.zeros((2, 2)), [[0, 1], [2, 3]], name="edge",
                prescribed={0: d.motion, 2: d.motion, 1: 0.5})  # two bound-method objects, one motion
    uva = body.motion(2.0)
    assert len(calls) == 1
    np.testing.assert_array_equal(uva, [[0.4, 1.0, 0.4], [0.4, 0.5, 0.4], [0.2, 0.0, 0.2]])
    class Unhashable:  # a callable object with __eq__ and no __hash__ (a dataclass's default)
        __hash__ = None

        def __eq__(self, other):
            return isinstance(other, Unhashable)

        def __call__(self, t):
            return (t, 1.0, 0.0)

    odd = Body(np.eye(3), np.eye(3), np.zeros((1, 2)), [[0, 1]], name="odd",
               prescribed={0: Unhashable(), 2: Unhashable(), 1: 0.5})
    np.testing.assert_array_equal(odd.motion(2.0), [[2.0, 1.0, 2.0], [1.0, 0.5, 1.0], [0.0, 0.0, 0.0]])
    bad = Body(np.eye(2), np.eye(2), np.zeros((1, 2)), [[0, 1]], name="bad", prescribed={1: lambda t: (t, 1.0)})
    with pytest.raises(ParameterError, match="coordinate 1 of body 'bad'"):
        bad.motion(0.5)


def test_modal_forces_of_many_times_are_those_of_each_time():
    """The kernel loop projects the sampled loads and motions of a whole chunk at once: the same
    modal forces as the definition, formed here from the body's matrices time by time (to
    round-off: one matrix product against many). The marched coordinates are relative to the
    quasi-static motion ``S u_p`` of the free coordinates (``K_ff S = -K_fp``, solved directly
    here): their force is ``T' (f - (C_fp + C_ff S) v_p - (M_fp + M_ff S) a_p)``, the stiffness
    terms cancelling."""
    rng = np.random.default_rng(3)
    n = 5
    A = rng.standard_normal((n, n))
    K = A @ A.T + n * np.eye(n)
    M = np.eye(n) + 0.1 * np.ones((n, n))
    C = 0.01 * K
    body = Body(M, K, np.zeros((1, 2)), [[0, 1]], C=C, name="b",
                prescribed={4: lambda t: (np.sin(t), np.cos(t), -np.sin(t))},
                loads=lambda t: np.arange(1.0, n + 1) * t)
    model = MultibodyModel([body])
    times = np.linspace(0.0, 2.0, 7)
    got = model.modal_forces([model.force_inputs(t) for t in times])
    fi, pi = body.f_idx, body.p_idx
    T = model.T_body[0]
    S = -np.linalg.solve(K[np.ix_(fi, fi)], K[np.ix_(fi, pi)])
    Cq = C[np.ix_(fi, pi)] + C[np.ix_(fi, fi)] @ S
    Mq = M[np.ix_(fi, pi)] + M[np.ix_(fi, fi)] @ S
    for k, t in enumerate(times):
        v, a = np.cos(t), -np.sin(t)   # velocity and acceleration of the prescribed sin(t)
        f = np.arange(1.0, n + 1)[fi] * t - (Cq @ [v] + Mq @ [a])
        # round-off of sums of terms as large as the largest force of the run (at t = 0 the
        # force is 0 and only that round-off is left)
        np.testing.assert_allclose(got[k], T.T @ f, rtol=1e-12, atol=1e-12 * np.abs(got).max())
        np.testing.assert_array_equal(model.modal_force(t), model.modal_forces([model.force_inputs(t)])[0])
