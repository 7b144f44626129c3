"""Node-to-surface contact between solid bodies in the multibody engine, against closed forms and
against the 2D engine.

* solid bodies: a 3D substructure gives a body of three DOFs per node, whose free modes are those
  of the substructure (SciPy's generalised eigenproblem on its matrices);
* onset of sliding on an inclined plane (tangent 0.1, mu 0.3, the block pushed up the slope by a
  horizontal force): ``F / W = (tan a + mu) / (1 - mu tan a)`` within 0.1 %;
* isotropy: a block on a flat, pulled in 8 directions of the plane, starts gross sliding at
  ``mu N`` within 0.5 % and slides along the pull to 1e-3 rad;
* a 3D model that is effectively 2D (the plane-stress block of ``test_contact_multinode``
  extruded into one layer, out-of-plane motion held) reproduces the 2D engine's forces, gaps,
  slips and states;
* complementarity at every output sample of every node of every run (signs, the cone, stick
  without slip, slip at the limit opposing the friction force), and the energy balance;
* bad input: a slave set that faces no master, initial penetration.

The 3D contact problem of a step is solved by the ``cone`` kernel: every test runs on both
backends (the NumPy twin is slow: the runs are short).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sla

from fesub.contact.engine import Body, MultibodyModel, simulate_multibody
from fesub.contact.engine.interfaces import ContactInterface
from fesub.contact.engine.surfaces import ContactInterface3D
from fesub.errors import ModelError, ParameterError

from test_contact_multinode import block_model


def check_complementarity_3d(res, model, normals, factor=10.0):
    """Signorini and the isotropic Coulomb cone at every sample of every node.

    ``normals`` (m, 3): the master normal under each node (flat masters). The cone kernel's
    sweeps stop when no node's velocity changed by more than tol / h: the residual gap or slip of
    a node is a few such changes of its neighbours, ``factor * tol`` (m) leaves room for them;
    forces at the friction limit are compared with a relative 1e-9 (the node's problem is solved
    on the cone exactly: only round-off remains)."""
    tol = factor * res.tol
    mu = np.concatenate([c["mu"] for c in model.contacts])
    nd = res.nodes
    ln, gap, st = nd["lambda_n"], nd["gap"], nd["state"]
    lt = np.hypot(nd["lambda_t1"], nd["lambda_t2"])
    F = np.stack([nd["force_x"], nd["force_y"], nd["force_z"]], axis=-1)
    ft = F - ln[..., None] * normals[None]  # tangential force (global), N
    assert np.allclose(np.linalg.norm(ft, axis=-1)[np.isfinite(gap)], lt[np.isfinite(gap)], rtol=0,
                       atol=1e-9 * max(np.abs(ln).max(), 1e-300))
    slip = np.stack([nd[f"slip_velocity_{c}"] for c in "xyz"], axis=-1) * res.h  # slip of the step, m
    s = np.linalg.norm(slip, axis=-1)
    on = np.isfinite(gap)
    scale = max(np.abs(ln).max(initial=0.0), 1e-300)
    assert np.all(ln[on] >= 0)
    assert np.all(gap[on] >= -tol), gap[on].min()
    closed = ln > 0
    assert np.all(np.abs(gap[closed]) <= tol), np.abs(gap[closed]).max()
    assert np.all(lt[~closed] == 0)
    assert np.all(lt <= mu * ln + 1e-9 * scale)  # the cone
    assert np.all(np.isin(st, (0, 1, 2)))
    assert np.all((st > 0) == closed)
    stick, sliding = st == 1, st == 2
    assert np.all(s[stick] <= tol), s[stick].max(initial=0)  # stick without slip
    assert np.all(np.abs(lt[sliding] - (mu * ln)[sliding]) <= 1e-9 * scale)  # slip at the limit
    # the friction force opposes the slip: ft = -|ft| slip/|slip| where the slip is resolved; the
    # slip is known to ``tol`` (the sweeps' residual), its direction to tol / |slip|
    moving = sliding & (s > 100 * tol)
    if moving.any():
        unit = slip[moving] / s[moving][:, None]
        assert np.all(np.linalg.norm(ft[moving] + lt[moving][:, None] * unit, axis=-1)
                      <= lt[moving] * 2 * tol / s[moving] + 1e-9 * scale)
    return moving


# ------------------------------------------------------------------------------- models
def point_block(normal_tilt=0.0, pull=None, W=9.81, mu=0.3, m=1.0, friction=None):
    """A rigid block (mass m kg, one contact node, three translations) on a fixed quad face
    through the origin rising along x with slope ``normal_tilt`` (tan a); its weight W (N) along
    -z and the horizontal pull ``pull(t)`` (N, a 3-vector) on it."""
    ta = normal_tilt
    Xm = np.array([[x, y, x * ta] for x, y in ((-1, -1), (1, -1), (1, 1), (-1, 1))], float)
    plane = Body(np.zeros((0, 0)), np.zeros((0, 0)), Xm, -np.ones((4, 3), int), name="plane")
    block = Body(m * np.eye(3), np.zeros((3, 3)), [[0.0, 0.0, 0.0]], [[0, 1, 2]], name="block",
                 loads=lambda t: np.asarray(pull(t), dtype=float) + (0.0, 0.0, -W))
    itf = ContactInterface3D("block", [0], "plane", np.array([[0, 1, 2, 3]]), None if friction else mu,
                             friction=friction, face_type="quad4")
    n = np.array([-ta, 0.0, 1.0]) / np.hypot(ta, 1.0)
    return MultibodyModel([block, plane], [itf]), n


def onset(res):
    """Index of the first sample at which the node slides and keeps sliding to the end."""
    st = res.nodes["state"][:, 0]
    assert st[-1] == 2 and st[0] == 1
    return int(np.flatnonzero(st != 2)[-1] + 1)


# ------------------------------------------------------------------------------- tests
def test_solid_substructure_gives_a_solid_body_with_its_free_modes():
    from fesub.fe.materials import Solid
    from fesub.fe.solid_mesh import box
    from fesub.substructure import Substructure

    mesh = box(0.02, 0.01, 0.01, 2, 1, 1)
    sub = Substructure(mesh, Solid(2e8, 0.3, 1000.0), clamped=["xmin"])
    body = Body.from_substructure(sub, name="solid")
    assert body.dim == 3 and body.X.shape == (mesh.points.shape[0], 3)
    xmin = mesh.nodes("xmin")
    assert np.all(body.node_dofs[xmin] == -1) and np.all(body.node_dofs[np.setdiff1d(np.arange(12), xmin)] >= 0)
    model = MultibodyModel([body])
    w2 = sla.eigh(sub.K.toarray() if hasattr(sub.K, "toarray") else sub.K,
                  sub.M.toarray() if hasattr(sub.M, "toarray") else sub.M, eigvals_only=True)
    np.testing.assert_allclose(np.sort(model.omega2), w2, rtol=1e-9)
    # the node rows of a 3D body: its z displacement is its own coordinate
    node = int(np.setdiff1d(np.arange(12), xmin)[0])
    eta = np.zeros(model.n_modes)
    u = np.zeros(body.n)
    u[body.node_dofs[node]] = (1e-3, 2e-3, 3e-3)
    eta, _ = model.modal_state({"solid": (u, np.zeros(body.n))})
    np.testing.assert_allclose(model.coordinates(0, eta, 0.0)[body.node_dofs[node]], (1e-3, 2e-3, 3e-3),
                               atol=1e-15)
    plane = Body(np.eye(2), np.zeros((2, 2)), [[0.0, 0.0]], [[0, 1]], name="plane")
    with pytest.raises(ParameterError, match="all plane"):
        MultibodyModel([body, plane])
    with pytest.raises(ParameterError, match="ContactInterface3D"):
        MultibodyModel([body, Body(np.eye(3), np.zeros((3, 3)), [[0, 0, 0.0]], [[0, 1, 2]], name="b")],
                       [ContactInterface("solid", [1], "b", [[0, 1]])])


def test_onset_of_sliding_up_an_inclined_plane(backend):
    ta, mu, W = 0.1, 0.3, 9.81
    Fc = W * (ta + mu) / (1 - mu * ta)
    steps = 200
    # the horizontal push ramps from 0.95 to 1.05 times the closed form: 5e-4 of it per step, the
    # resolution of the onset (the block sticks at rest: the friction balances the push exactly)
    pull = lambda t: (Fc * (0.95 + 0.1 * t), 0.0, 0.0)
    model, n = point_block(ta, pull, W, mu)
    res = simulate_multibody(model, duration=1.0, h=1.0 / steps)
    assert res.backend == ("compiled" if backend == "compiled" else "python")
    check_complementarity_3d(res, model, n[None])
    k = onset(res)
    F = Fc * (0.95 + 0.1 * res.t)
    assert F[k - 1] < Fc * (1 + 1e-3) and F[k] > Fc * (1 - 1e-3)
    assert abs(F[k] / Fc - 1) <= 1e-3
    # sliding up the slope
    u = res.nodes["slip_velocity_x"][-1, 0], res.nodes["slip_velocity_z"][-1, 0]
    assert u[0] > 0 and abs(u[1] / u[0] - ta) <= 1e-9


@pytest.mark.parametrize("direction", range(8))
def test_isotropic_onset_and_slip_along_the_pull(backend, direction):
    mu, W = 0.3, 9.81
    th = 2 * np.pi * direction / 8 + 0.1  # off the frame's axes
    e = np.array([np.cos(th), np.sin(th), 0.0])
    steps = 100
    pull = lambda t: mu * W * (0.95 + 0.1 * t) * e  # 1e-3 of mu N per step
    model, n = point_block(0.0, pull, W, mu)
    res = simulate_multibody(model, duration=1.0, h=1.0 / steps)
    moving = check_complementarity_3d(res, model, n[None])
    k = onset(res)
    P = mu * W * (0.95 + 0.1 * res.t)
    assert abs(P[k] / (mu * W) - 1) <= 5e-3
    v = np.stack([res.nodes[f"slip_velocity_{c}"][:, 0] for c in "xyz"], axis=-1)[moving[:, 0]]
    angle = np.arccos(np.clip(v @ e / np.linalg.norm(v, axis=1), -1, 1))
    assert angle.size > 5 and angle.max() <= 1e-3


def extruded_block(rate, width=0.01):
    """The plane-stress block of ``test_contact_multinode.block_model`` as solid bodies: every
    node of the plane block copied at z = 0, w/2 and w (the block) or z = 0 and w (the ground),
    the copies sharing the plane node's x and y coordinates, z fixed (out-of-plane motion held).
    The slave nodes are the bottom nodes of the middle layer; the master is the ground segment
    swept along z (one quad face, normal +y)."""
    plane = block_model(rate)
    block, ground = plane.bodies
    itf = plane.interfaces[0]
    N = block.X.shape[0]
    zs = (0.0, 0.5 * width, width)
    X = np.vstack([np.column_stack([block.X, np.full(N, z)]) for z in zs])
    nd = np.vstack([np.column_stack([block.node_dofs, np.full(N, -1)])] * 3)
    solid = Body(block.M, block.K, X, nd, block.C, name="block", loads=block.loads)
    (A, B), = itf.master_segments
    G = np.array([[*ground.X[A], 0.0], [*ground.X[A], width], [*ground.X[B], width], [*ground.X[B], 0.0]])
    floor = Body(np.zeros((0, 0)), np.zeros((0, 0)), G, -np.ones((4, 3), int), name="ground")
    i3 = ContactInterface3D("block", itf.slave_nodes + N, "ground", np.array([[0, 1, 2, 3]]), itf.mu,
                            face_type="quad4")
    return plane, MultibodyModel([solid, floor], [i3])


def test_effectively_2d_model_reproduces_the_2d_engine(backend):
    plane, solid = extruded_block(rate=40.0)
    kw = dict(duration=0.1, fs_out=1e4)
    a = simulate_multibody(plane, loop="python", **kw)
    b = simulate_multibody(solid, **kw)
    assert b.info["loop"] == "python" and b.t.size == a.t.size
    na, nb = a.nodes, b.nodes
    # the same states (2D slip+ and slip- are the 3D slip), the same forces: the two solve the
    # same frictional contact problem per step (rows n = +y, t = +x) to their tolerance
    np.testing.assert_array_equal(np.minimum(na["state"], 2), nb["state"])
    assert np.any(nb["state"] == 2) and np.any(nb["state"] == 1) and np.any(nb["state"] == 0)
    scale = np.abs(na["lambda_n"]).max()
    for k2, k3 in (("lambda_n", "lambda_n"), ("force_x", "force_x"), ("force_y", "force_y")):
        np.testing.assert_allclose(nb[k3], na[k2], rtol=0, atol=1e-6 * scale)
    np.testing.assert_allclose(nb["force_z"], 0.0, atol=1e-12 * scale)
    np.testing.assert_allclose(nb["gap"], na["gap"], rtol=0, atol=10 * a.tol)
    np.testing.assert_allclose(nb["slip_velocity_x"] * b.h, na["slip_velocity"] * a.h, rtol=0, atol=10 * a.tol)
    for k in ("kinetic", "strain", "friction_dissipation", "external_work"):
        np.testing.assert_allclose(b.energies[k], a.energies[k], rtol=1e-6, atol=1e-9 * np.abs(a.energies[k]).max())
    check_complementarity_3d(b, solid, np.array([[0.0, 1.0, 0.0]]))
    res = b.energy_residual()
    assert np.abs(res).max() <= 1e-3 * b.energies["external_work"].max()


def hex_block(direction=(1.0, 0.0), mu=0.3, rate=20.0):
    """An elastic hexahedral block 20 x 20 x 10 mm (2 x 2 x 1 hex8, E = 2 MPa) on a rigid plate:
    a normal load of 10 N on its top ramped over 0.05 s, then a tangential load ``rate (t -
    0.06)`` (N) along ``direction`` in the plane; its 9 bottom nodes are the slave nodes."""
    from fesub.fe.materials import Solid
    from fesub.fe.solid_mesh import box
    from fesub.substructure import Substructure

    mesh = box(0.02, 0.02, 0.01, 2, 2, 1)
    sub = Substructure(mesh, Solid(2e6, 0.3, 1000.0), rayleigh=(200.0, 0.0))
    bottom, top = mesh.nodes("zmin"), mesh.nodes("zmax")
    w = np.ones(top.size) / top.size
    e = np.asarray(direction, float) / np.linalg.norm(direction)
    dx, dy, dz = (sub.dofs(top, c) for c in "xyz")

    def loads(t):
        f = np.zeros(sub.n_dofs)
        s = min(t / 0.05, 1.0)
        f[dz] = -10.0 * s * s * (3 - 2 * s) * w
        T = rate * max(t - 0.06, 0.0)
        f[dx], f[dy] = T * e[0] * w, T * e[1] * w
        return f

    block = Body.from_substructure(sub, name="block", loads=loads)
    G = np.array([[-0.05, -0.05, 0.0], [0.07, -0.05, 0.0], [0.07, 0.07, 0.0], [-0.05, 0.07, 0.0]])
    plate = Body(np.zeros((0, 0)), np.zeros((0, 0)), G, -np.ones((4, 3), int), name="plate")
    itf = ContactInterface3D("block", bottom, "plate", np.array([[0, 1, 2, 3]]), mu, face_type="quad4")
    return MultibodyModel([block, plate], [itf])


def test_elastic_block_slides_at_mu_N_with_complementarity_everywhere():
    """(The kernels' twins run the tests above; this march of 2000 steps of 9 coupled nodes takes
    minutes on them.)"""
    model = hex_block(direction=(np.cos(0.5), np.sin(0.5)))
    res = simulate_multibody(model, duration=0.25, fs_out=2e3)
    moving = check_complementarity_3d(res, model, np.array([[0.0, 0.0, 1.0]]))
    st = res.nodes["state"]
    T = 20.0 * np.maximum(res.t - 0.06, 0.0)
    gross = np.flatnonzero(np.all(st == 2, axis=1) & (T > 0))[0]
    # quasi-static loading: gross sliding at mu N within 2 % (the load grows 0.01 N, 0.3 %, per
    # output sample; the block's inertia adds the rest)
    assert abs(T[gross] / (0.3 * 10.0) - 1) <= 0.02
    assert moving.any()


def test_saved_and_reopened(tmp_path):
    import fesub

    model, n = point_block(0.0, lambda t: (2.0 + 2.0 * t, 1.0, 0.0))
    res = simulate_multibody(model, duration=0.2, h=1e-2)
    path = res.save(tmp_path / "run3d.nc")
    back = fesub.load(path)
    assert set(back.nodes) == set(res.nodes)
    for k, v in res.nodes.items():
        np.testing.assert_array_equal(back.nodes[k], v)
    np.testing.assert_array_equal(back.energy_residual(), res.energy_residual())
    assert back.contact_forces()["z"].shape == res.t.shape


def test_bad_input_one_clear_error():
    far = Body(np.eye(3), np.zeros((3, 3)), [[5.0, 5.0, 0.0]], [[0, 1, 2]], name="block")
    plane = Body(np.zeros((0, 0)), np.zeros((0, 0)), [[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0.0]],
                 -np.ones((4, 3), int), name="plane")
    with pytest.raises(ModelError, match="faces no master"):
        MultibodyModel([far, plane], [ContactInterface3D("block", [0], "plane", [[0, 1, 2, 3]], 0.3,
                                                         face_type="quad4")])
    inside = Body(np.eye(3), np.zeros((3, 3)), [[0.2, 0.1, -1e-3]], [[0, 1, 2]], name="block")
    model = MultibodyModel([inside, plane], [ContactInterface3D("block", [0], "plane", [[0, 1, 2, 3]], 0.3,
                                                                face_type="quad4")])
    with pytest.raises(ModelError, match=r"start inside their master surface: interface 0 node 0: 0\.001 m"):
        simulate_multibody(model, duration=0.01, h=1e-3)


def test_craig_bampton_solid_block_carries_its_load():
    """A Craig-Bampton model of the hexahedral block (its 9 bottom nodes' x, y, z as boundary
    DOFs, 6 fixed-interface modes) pressed on the plate: its bottom nodes are interface nodes (the
    others, interior, cannot be), and at rest the normal forces carry the 10 N load (statics; 1e-3
    of it: the transient of the ramp, damped by the Rayleigh damping, is left at 0.15 s)."""
    from fesub.fe.materials import Solid
    from fesub.fe.solid_mesh import box
    from fesub.substructure import CraigBampton, Substructure

    mesh = box(0.02, 0.02, 0.01, 2, 2, 1)
    sub = Substructure(mesh, Solid(2e6, 0.3, 1000.0), rayleigh=(200.0, 0.0))
    bottom, top = mesh.nodes("zmin"), mesh.nodes("zmax")
    cb = CraigBampton(sub, boundary=sub.dofs(bottom), n_modes=6)
    f = np.zeros(sub.n_dofs)
    f[sub.dofs(top, "z")] = -10.0 / top.size
    fq = cb.project(f)
    block = Body.from_craig_bampton(cb, name="block", loads=lambda t: fq * min(t / 0.05, 1.0))
    assert block.dim == 3 and np.all(block.node_dofs[bottom] >= 0) and np.all(block.node_dofs[top] == -2)
    G = np.array([[-0.05, -0.05, 0.0], [0.07, -0.05, 0.0], [0.07, 0.07, 0.0], [-0.05, 0.07, 0.0]])
    plate = Body(np.zeros((0, 0)), np.zeros((0, 0)), G, -np.ones((4, 3), int), name="plate")
    model = MultibodyModel([block, plate], [ContactInterface3D("block", bottom, "plate", [[0, 1, 2, 3]], 0.3,
                                                               face_type="quad4")])
    res = simulate_multibody(model, duration=0.15, fs_out=1e3)
    check_complementarity_3d(res, model, np.array([[0.0, 0.0, 1.0]]))
    assert abs(res.contact_forces()["normal"][-1] - 10.0) <= 1e-2


def test_shape_values_interpolate_the_closest_point(backend):
    """The master point of a contact row is ``sum_j N_j x_j``: on curved quadratic faces
    (quad8 and tri6 of a bent surface, several faces) the shape values at the projections'
    parameters give back their closest points, and sum to 1."""
    from fesub.contact.geometry import FaceSet
    from fesub.fe.solid_mesh import box

    mesh = box(0.04, 0.03, 0.01, 4, 3, 1, element="tetra10")
    pts = mesh.points.copy()
    pts[:, 2] += 0.2 * pts[:, 0] ** 2 + 0.1 * pts[:, 0] * pts[:, 1]  # curved: the faces are not flat
    from fesub.fe.solid_mesh import SolidMesh

    bent = SolidMesh(pts, mesh.cells, mesh.node_sets, source="bent")
    fs = FaceSet.from_mesh(bent, "zmax")
    rng = np.random.default_rng(0)
    P = np.column_stack([rng.uniform(0.002, 0.038, 50), rng.uniform(0.002, 0.028, 50), np.zeros(50)])
    P[:, 2] = 0.01 + 0.2 * P[:, 0] ** 2 + 0.1 * P[:, 0] * P[:, 1] + rng.uniform(-1e-3, 1e-3, 50)
    pr = fs.project(P)
    assert np.all(pr.face >= 0) and len(np.unique(pr.face)) > 10
    N = fs.shape_values(pr.face, pr.param)
    conn = fs.conn[np.argsort(fs.order)][pr.face]
    x = np.einsum("kj,kjc->kc", N, fs.points[np.maximum(conn, 0)])
    np.testing.assert_allclose(N.sum(1), 1.0, atol=1e-14)
    np.testing.assert_allclose(x, pr.point, atol=1e-15)


def test_static_and_kinetic_friction_in_3d(backend):
    """A static/kinetic law (mu_s = 0.4, mu_k = 0.25): the block sticks until the pull reaches
    mu_s N, then slides with the friction force at mu_k N opposing the slip; its acceleration
    is (P - mu_k N) / m along the pull (the closed form of a sliding rigid block)."""
    from fesub.contact import StaticKinetic

    W, m = 9.81, 1.0
    e = np.array([np.cos(0.7), np.sin(0.7), 0.0])
    pull = lambda t: W * (0.38 + 0.04 * t) * e  # 4e-4 of N per step
    model, n = point_block(0.0, pull, W, m=m, friction=StaticKinetic(0.4, 0.25))
    res = simulate_multibody(model, duration=1.0, h=1e-2)
    k = onset(res)
    P = W * (0.38 + 0.04 * res.t)
    assert P[k - 1] <= 0.4 * W < P[k] + 1e-12 and abs(P[k] / (0.4 * W) - 1) <= 1e-3
    nd = res.nodes
    lt = np.hypot(nd["lambda_t1"], nd["lambda_t2"])[k:, 0]
    np.testing.assert_allclose(lt, 0.25 * nd["lambda_n"][k:, 0], rtol=1e-9)
    np.testing.assert_allclose(nd["lambda_n"][:, 0], W, rtol=1e-9)
    # the slip velocity grows by (P - mu_k N)/m h per step along the pull (central differences
    # of a rigid body under constant-in-the-step forces: exact)
    v = np.stack([nd[f"slip_velocity_{c}"][:, 0] for c in "xyz"], axis=-1)
    dv = np.diff(v[k:] @ e)
    np.testing.assert_allclose(dv, (P[k + 1:] - 0.25 * W) / m * res.h, rtol=1e-6, atol=1e-12)
    with pytest.raises(ParameterError, match="not both"):
        ContactInterface3D("block", [0], "plane", [[0, 1, 2, 3]], 0.3, friction=StaticKinetic(0.4, 0.25),
                           face_type="quad4")


def test_carried_modal_impulse_gives_the_run_of_formed_ones(backend, monkeypatch):
    """On fixed rows (one interface, a rigid master) a step's sweeps start from the last step's
    modal impulse ``diag(w) J' lam`` instead of forming it again (frames and forces unchanged):
    the run is that of forming it every step (``_REFRESH`` 0). The elastic block loaded, then
    sliding (the NumPy twin: the load's ramp only, its sweeps are slow)."""
    from fesub.contact.engine import contacts3d

    model = hex_block(direction=(np.cos(0.5), np.sin(0.5)))
    duration = 0.25 if backend == "compiled" else 0.03
    carried = simulate_multibody(model, duration=duration, fs_out=2e3)
    monkeypatch.setattr(contacts3d, "_REFRESH", 0)
    formed = simulate_multibody(model, duration=duration, fs_out=2e3)
    assert carried.status == formed.status == "completed"
    np.testing.assert_array_equal(carried.nodes["state"], formed.nodes["state"])
    # the two starts differ by round-off; the sweeps stop once a sweep changes no node's velocity
    # by more than tol / h, so the two runs' forces and slips differ by about what one sweep
    # below that tolerance leaves (measured 2e-10 N of 4.4 N, 3e-10 m/s of 2.3 m/s): 1e-8 of the
    # largest value leaves a margin of 20 over it; a sticking node's slip is that sweep's
    # residual itself (below tol / h), its gap below tol: those are added
    tol, h = formed.tol, formed.h
    for key, rel, floor in (("lambda_n", 1e-8, 0.0), ("lambda_t1", 1e-8, 0.0), ("lambda_t2", 1e-8, 0.0),
                            ("slip_velocity_x", 1e-8, tol / h), ("slip_velocity_y", 1e-8, tol / h),
                            ("gap", 1e-8, tol)):
        a, b = carried.nodes[key], formed.nodes[key]
        np.testing.assert_allclose(a, b, rtol=0, atol=rel * np.nanmax(np.abs(b)) + floor, err_msg=key)
