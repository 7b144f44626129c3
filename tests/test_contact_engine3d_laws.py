"""Friction laws in the 3D engine on coupled nodes: the step's block Gauss-Seidel on the contact
rows in the ``cone`` kernel (built-in laws) against the same step's sweeps in Python over the
dense Delassus operator (a law given as a Python callable takes that path), both backends.

An elastic bed of 4 nodes (each hung from fixed supports in x, y, z and joined to its neighbours,
consistent mass: the contact rows are coupled) pressed on a rigid face by 1 N per node and pulled
along a direction of the plane by a growing force until every node slides (and, held by its
springs, sticks again): the same velocity weakening law as a built-in ``Stribeck`` and as a
``UserLaw`` of the same formula give the same forces, states and slips. And a master face with modes of its own (a sprung plate under a
sticking block) against the central-difference march of the pair written in the test. And
several interfaces in one model (two beds on one ground, with and without a block on the sprung
plate besides) against each one's model run alone.
"""

from __future__ import annotations

import numpy as np
import pytest

from fesub.contact import (
    Body,
    ContactInterface3D,
    MultibodyModel,
    Stribeck,
    UserLaw,
    simulate_multibody,
)

NODES = 4


def bed(friction, name="bed", y=0.0, model=True):
    """The bed on the ground (or, not ``model``: its body and interface), its nodes at ``y`` (m)."""
    n = NODES
    lap = 2 * np.eye(n) - np.eye(n, k=1) - np.eye(n, k=-1)
    lap[0, 0] = lap[-1, -1] = 1.0
    K = np.kron(1e1 * np.eye(n) + 1e3 * lap, np.eye(3))
    M = np.kron(0.1 / 6 * (4 * np.eye(n) + np.eye(n, k=1) + np.eye(n, k=-1)), np.eye(3))
    X = np.column_stack([np.linspace(0.0, 0.05, n), np.full(n, y), np.zeros(n)])
    e = np.array([np.cos(0.5), np.sin(0.5), 0.0])

    def loads(t):
        f = np.zeros((n, 3))
        f[:, 2] = -1.0
        f += (0.35 + 1.0 * t) * e * np.linspace(1.0, 1.1, n)[:, None]  # mu_s N at t = 0.01-0.05 s
        return f.ravel()

    body = Body(M, K, X, np.arange(3 * n).reshape(n, 3), name=name, loads=loads)
    itf = ContactInterface3D(name, np.arange(n), "ground", [[0, 1, 2, 3]], friction=friction, face_type="quad4")
    return MultibodyModel([body, ground()], [itf]) if model else (body, itf)


def ground():
    G = np.array([[-0.1, -0.1, 0.0], [0.2, -0.1, 0.0], [0.2, 0.1, 0.0], [-0.1, 0.1, 0.0]])
    return Body(np.zeros((0, 0)), np.zeros((0, 0)), G, -np.ones((4, 3), int), name="ground")


def sprung_plate(P, m1=1.0, m2=3.0, k=400.0, W=9.81):
    """A block (mass m1, weight W) pulled along e by P(t) on a rigid plate (mass m2) on springs
    k in x and y: (block, plate, interface, e)."""
    e = np.array([np.cos(0.4), np.sin(0.4), 0.0])
    Xp = np.array([[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0.0]])
    plate = Body(m2 * np.eye(2), k * np.eye(2), Xp, [[0, 1, -1]] * 4, name="plate")
    block = Body(m1 * np.eye(3), np.zeros((3, 3)), [[0.0, 0.0, 0.0]], [[0, 1, 2]], name="block",
                 loads=lambda t: P(t) * e + (0.0, 0.0, -W))
    return block, plate, ContactInterface3D("block", [0], "plate", [[0, 1, 2, 3]], 0.3, face_type="quad4"), e


def test_user_law_equals_builtin_law_on_coupled_nodes(backend):
    law = Stribeck(0.4, 0.25, 0.05)
    user = UserLaw(lambda v: 0.25 + 0.15 * np.exp(-v / 0.05))
    kw = {"duration": 0.2, "h": 2e-3, "tol": 1e-12}
    a = simulate_multibody(bed(law), **kw)
    b = simulate_multibody(bed(user), **kw)
    st = a.nodes["state"]
    assert a.status == b.status == "completed"
    assert np.all(st[0] == 1) and np.all((st == 2).any(axis=0))  # stuck at first, then every node slides
    np.testing.assert_array_equal(st, b.nodes["state"])
    # the two paths solve the same step problem, the slip coefficient's root to a few ulps
    # (Illinois in the kernel, brentq in Python) and the sweeps to tol / h = 5e-10 m/s: forces
    # agree to round-off amplified through 100 steps (measured: 1e-13 N); 1e-7 of the largest force leaves margin
    for key in ("lambda_n", "lambda_t1", "lambda_t2"):
        np.testing.assert_allclose(a.nodes[key], b.nodes[key], rtol=0, atol=1e-7 * np.abs(a.nodes["lambda_n"]).max())
    slip = np.hypot(a.nodes["slip_velocity_x"], a.nodes["slip_velocity_y"])
    assert slip.max() > 0.05  # sliding at speeds where the law has weakened (v_s = 0.05 m/s)
    for c in "xyz":
        np.testing.assert_allclose(a.nodes[f"slip_velocity_{c}"], b.nodes[f"slip_velocity_{c}"], rtol=0,
                                   atol=1e-7 * slip.max())


def test_block_sticking_on_a_sprung_plate_moves_it(backend):
    """A master face with modes of its own: a rigid plate (mass m2, held in z, on springs k in x
    and y) under a block (mass m1, weight W) pulled along the plane below mu N. Sticking, both
    move as one: (m1 + m2) x'' + k x = P, whose central-difference march is written here; the
    friction force on the block is m1 x'' - P and the normal force W."""
    m1, m2, k, W, h = 1.0, 3.0, 400.0, 9.81, 1e-3
    P = lambda t: 2.0 * min(t / 0.1, 1.0)  # below mu N = 2.94 N
    block, plate, itf, e = sprung_plate(P, m1, m2, k, W)
    model = MultibodyModel([block, plate], [itf])
    res = simulate_multibody(model, duration=0.3, h=h, tol=1e-12)
    n = res.steps
    x = np.zeros(n + 2)  # x[j + 1]: the pair's displacement along e at step j (x[0] at -h)
    for j in range(n):
        x[j + 2] = 2 * x[j + 1] - x[j] + h * h * (P(j * h) - k * x[j + 1]) / (m1 + m2)
    acc = (x[2:] - 2 * x[1:-1] + x[:-2]) / h**2
    t = np.arange(n) * h
    f = m1 * acc - np.array([P(s) for s in t])  # the friction force on the block along e
    nd = res.nodes
    assert np.all(nd["state"] == 1)
    F = np.stack([nd[f"force_{c}"][:, 0] for c in "xyz"], axis=-1)
    # the same recursion in the engine's modal coordinates (the plate's two modes): round-off
    np.testing.assert_allclose(F @ e, f[:F.shape[0]], rtol=0, atol=1e-9 * W)
    np.testing.assert_allclose(F[:, 2], W, rtol=1e-12)
    np.testing.assert_allclose(F @ np.array([-e[1], e[0], 0.0]), 0.0, atol=1e-9 * W)


def two_beds(first=None):
    """Two beds on one ground (bed1 with the law ``first``, default a built-in one): (body,
    interface) of each."""
    first = Stribeck(0.4, 0.25, 0.05) if first is None else first
    return bed(first, "bed1", 0.0, False), bed(Stribeck(0.35, 0.2, 0.02), "bed2", 0.05, False)


@pytest.mark.parametrize("variant", ["stacked", "plate", "user"])
def test_interfaces_side_by_side_run_as_each_alone(backend, variant):
    """Two beds on one ground (their slave rows stacked once, each node swept over its own bed's
    columns); with a block on a sprung plate besides (a master with modes: every interface's rows
    formed each step over its own columns); with a user law on the first bed (the whole step in
    Python over the dense operator). Nothing couples the bodies, so each interface's forces,
    slips and states are those of its model run alone (the one-interface paths: a rigid master's
    rows used in place, a moving master's formed over all columns)."""
    kw = {"duration": 0.2, "h": 1e-3, "tol": 1e-12}
    P = lambda t: 4.0 * min(t / 0.1, 1.0)  # above mu N = 2.94 N: the block slides
    plate = variant == "plate"
    (b1, i1), (b2, i2) = two_beds(UserLaw(lambda v: 0.25 + 0.15 * np.exp(-v / 0.05)) if variant == "user"
                                  else Stribeck(0.4, 0.25, 0.05))
    parts = [MultibodyModel([b1, ground()], [i1]), MultibodyModel([b2, ground()], [i2])]
    bodies, itfs = [b1, b2, ground()], [i1, i2]
    if plate:
        block, pl, i3, _ = sprung_plate(P)
        parts.append(MultibodyModel([block, pl], [i3]))
        # the plate's modes first, the first bed's between them and the block's (in that interface's
        # window of the columns, zero in its rows)
        bodies, itfs = [pl, b1, block, b2, ground()], [i1, i3, i2]
        parts[1:] = parts[2], parts[1]
    res = simulate_multibody(MultibodyModel(bodies, itfs), **kw)
    assert res.status == "completed"
    col = 0
    for part in parts:
        alone = simulate_multibody(part, **kw)
        k = alone.nodes["state"].shape[1]
        st = alone.nodes["state"]
        assert (st == 1).any() and (st == 2).any()  # sticking, then sliding
        np.testing.assert_array_equal(res.nodes["state"][:, col:col + k], st)
        # the coupled sweeps run until every interface's change is within tol / h (1e-9 m/s), so
        # an interface may take a sweep more than alone: both solve the step to that tolerance,
        # the gaps (m) to tol, the slip velocities to tol / h; forces to that change times a
        # block's inverse (~1e-9 N here). 1e-7 of the largest force and slip speed leaves margin
        # (measured, both backends: up to 2e-10 of it, and 4e-18 m)
        for key, scale in (("lambda_n", "lambda_n"), ("lambda_t1", "lambda_n"), ("lambda_t2", "lambda_n"),
                           ("slip_velocity_x", None), ("slip_velocity_y", None)):
            a, b = alone.nodes[key], res.nodes[key][:, col:col + k]
            top = np.abs(alone.nodes[scale] if scale else a).max()
            np.testing.assert_allclose(b, a, rtol=0, atol=1e-7 * top, err_msg=key)
        np.testing.assert_allclose(res.nodes["gap"][:, col:col + k], alone.nodes["gap"], rtol=0, atol=kw["tol"])
        col += k
    assert col == res.nodes["state"].shape[1]


def test_stacked_interfaces_carry_their_modal_impulse(backend, monkeypatch):
    """Several interfaces on rigid masters start a step's sweeps from the last step's modal
    impulse as one interface does: the run is that of forming it every step (``_REFRESH`` 0),
    loaded, sticking and sliding."""
    from fesub.contact.engine import contacts3d

    (b1, i1), (b2, i2) = two_beds()
    model = MultibodyModel([b1, b2, ground()], [i1, i2])
    kw = {"duration": 0.2, "h": 1e-3, "tol": 1e-12}
    carried = simulate_multibody(model, **kw)
    monkeypatch.setattr(contacts3d, "_REFRESH", 0)
    formed = simulate_multibody(model, **kw)
    st = formed.nodes["state"]
    assert carried.status == formed.status == "completed" and (st == 1).any() and (st == 2).any()
    np.testing.assert_array_equal(carried.nodes["state"], st)
    # the two starts differ by round-off and the sweeps stop once no node's velocity changes by
    # more than tol / h: forces and slips differ by what a sweep below that leaves, as on one
    # interface (tests/test_contact_engine3d.py); 1e-8 of the largest value, the gaps to tol
    for key in ("lambda_n", "lambda_t1", "lambda_t2", "slip_velocity_x", "slip_velocity_y"):
        a, b = carried.nodes[key], formed.nodes[key]
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-8 * np.abs(b).max() + kw["tol"] / kw["h"], err_msg=key)
    np.testing.assert_allclose(carried.nodes["gap"], formed.nodes["gap"], rtol=0, atol=kw["tol"])
