"""The linearised steady sliding state of solid (3D) multibody models, node-to-surface contact
(fesub.contact.analyses.linearised with fesub.contact.analyses.linearised3d).

References, each independent of the code under test:
* every derivative of the nonlinear contact terms against central differences of those terms, on
  an elastic hexahedral block dragged obliquely over an elastic plate (bilinear faces that warp
  as the plate deforms, or quadratic triangles, contact points that move, a falling friction law,
  generic velocities); sliding and sticking;
* a 3D model that is effectively plane (the plane block on a belt extruded through its
  thickness, out-of-plane motion held) against the plane linearisation of the plane model;
* a point mass sliding on a belt in 3D against the closed form written here: along the sliding
  direction the law's slope ``mu'(v) N``, across it the damping ``mu N / v``;
* the contact engine's 3D transient about the steady state (a perturbation grows or decays at
  the leading eigenvalue).
"""

from __future__ import annotations

import numpy as np
import pytest

from fesub.contact import ContactInterface3D
from fesub.contact.analyses.contact_terms import contact_derivatives, contact_forces
from fesub.contact.analyses.linearised import linearise
from fesub.contact.analyses.steady import steady_state
from fesub.contact.engine import Body, ContactInterface, MultibodyModel
from fesub.contact.engine.friction import Coulomb, Stribeck
from fesub.contact.geometry import FaceSet
from fesub.errors import ParameterError
from fesub.fe import PlaneStress, Solid, box, rectangle
from fesub.substructure import Substructure
from test_contact_linearised import leading_pole


def sorted_eigs(lam):
    return lam[np.lexsort((lam.real, lam.imag))]


def distance(a, b):
    """Largest distance between two sets of eigenvalues paired one to one (least total distance)."""
    from scipy.optimize import linear_sum_assignment

    assert a.size == b.size
    cost = np.abs(a[:, None] - b[None, :])
    r, c = linear_sum_assignment(cost)
    return cost[r, c].max()


# ------------------------------------------------------------------------------- derivatives
def block_on_plate(law, v=(0.04, 0.02), interference=2e-5, curved=False):
    """An elastic block (0.02 x 0.02 x 0.01 m, 2 x 2 x 1 hexahedra, E = 2 MPa) whose top face is
    dragged in the plane at ``v`` (m/s, x and y; z held) over an elastic plate (0.05 x 0.05 x
    0.005 m, 3 x 3 x 1 hexahedra, E = 5 MPa, clamped underneath), pressed onto it by an
    interference (m): nine slave nodes on the plate's quad4 top faces, none on a face's edge.
    ``curved``: a block of one hexahedron (four slave nodes) on a plate of 2 x 2 x 1 tetra10
    cubes, curved tri6 faces as it deforms, modes up to 3 kHz."""
    n, element = ((2, 1), "tetra10") if curved else ((3, 2), "hexahedron")
    plate_mesh = box(0.05, 0.05, 0.005, n[0], n[0], 1, origin=(-0.005, -0.005, -0.005), element=element)
    plate = Substructure(plate_mesh, Solid(5e6, 0.3, 1000.0), clamped=["zmin"], rayleigh=(0.0, 1e-5), name="plate")
    mesh = box(0.02, 0.02, 0.01, n[1], n[1], 1, origin=(0.007, 0.008, -interference))
    sub = Substructure(mesh, Solid(2e6, 0.3, 1000.0), rayleigh=(0.0, 1e-5), name="block")
    top = mesh.nodes("zmax")
    pres = {int(k): v[0] for k in sub.dofs(top, "x")}
    pres.update({int(k): v[1] for k in sub.dofs(top, "y")})
    pres.update({int(k): 0.0 for k in sub.dofs(top, "z")})
    itf = ContactInterface3D("block", mesh.nodes("zmin"), "plate", FaceSet.from_mesh(plate_mesh, "zmax"),
                             friction=law)
    return MultibodyModel([Body.from_substructure(sub, prescribed=pres), Body.from_substructure(plate)], [itf],
                          modal_cutoff_hz=3000.0 if curved else None)


def central(fun, x, h):
    cols = []
    for j in range(x.size):
        e = np.zeros(x.size)
        e[j] = h
        cols.append((fun(x + e) - fun(x - e)) / (2 * h))
    return np.array(cols).T


@pytest.mark.parametrize("stick, curved", [(False, False), (True, False), (False, True)])
def test_every_derivative_against_central_differences(stick, curved):
    # bonded, the pressed block's rim pulls outwards (Poisson): a stick limit of 3 holds it
    law = Stribeck(3.0 if stick else 0.5, 0.3, 0.02)
    model = block_on_plate(law, v=(0.0, 0.0) if stick else (0.04, 0.02), curved=curved)
    assert np.all(model.contacts[0]["faces"].ftype == (2 if curved else 1))     # tri6 or quad4
    st = steady_state(model, 0.01)
    assert st.state.tolist() == [1 if stick else 2] * (4 if curved else 9)
    if not stick:
        # every node slides along the drag (0.04, 0.02) m/s, on the plate's (slightly tilted) faces
        e = np.array([0.04, 0.02, 0.0]) / np.hypot(0.04, 0.02)
        assert np.allclose(st.slip_speed, np.hypot(0.04, 0.02), rtol=1e-6)
        assert np.abs(st.direction - e).max() <= 1e-3
        assert np.allclose(np.hypot(*st.lambda_t.T), st.mu * st.lambda_n, rtol=1e-12)
    assert np.abs(st.gap).max() <= 1e-12 and np.all(st.lambda_n > 0)
    rng = np.random.default_rng(3)
    n = model.n_modes
    # a generic point near the state: perturbed coordinates, velocities (the plate's too: its
    # velocity at the moving contact point enters the slip), multipliers
    eta = st.eta + 1e-3 * np.abs(st.eta).max() * rng.standard_normal(n)
    deta = 1e-4 * rng.standard_normal(n)
    lam = st.lam * (1 + 0.1 * rng.standard_normal(st.lam.size))
    K, C, B, G = contact_derivatives(model, st.frames, st.drive, eta, deta, lam)

    def F(e, d, x):
        return contact_forces(model, st.frames, st.drive, e, d, x)

    # steps: as the plane test (truncation of the exponential law (2e-7 / 0.02)^2 ~ 1e-10); on
    # the truncated curved model the stiffness is 16 times smaller and round-off leads at 1e-6
    # (5e-7 measured): a coordinate step of 1e-5 (6.7e-8 measured)
    he, hv, hl = (1e-5 if curved else 1e-6) * np.abs(eta).max(), 1e-8, 1e-6 * np.abs(lam).max()
    fd = {"dF/deta": (K, central(lambda x: F(x, deta, lam)[0], eta, he)),
          "dg/deta": (G, central(lambda x: F(x, deta, lam)[1], eta, he)),
          "dF/deta'": (C, central(lambda x: F(eta, x, lam)[0], deta, hv)),
          "B'": (B.T, central(lambda x: F(eta, deta, x)[0], lam, hl))}
    # 1e-6 of each matrix's largest entry (measured 1.2e-7 on dF/deta, <1e-9 on the others;
    # curved faces: 6.7e-8 and <1e-9)
    for name, (a, b) in fd.items():
        scale = np.abs(b).max()
        if not stick or name in ("dg/deta", "B'"):   # a bond is linear: no stiffness, no damping
            assert scale > 0, name
        assert np.abs(a - b).max() <= 1e-6 * max(scale, 1e-300), (name, np.abs(a - b).max(), scale)
    if stick:
        assert not K.any() and not C.any()


# ------------------------------------------------------------------------------- effectively plane
def block_on_belt_2d(mu, v=-0.1, interference=1e-4):
    """The plane block of the plane tests: 0.04 x 0.02 m, 4 x 2 Q4, clamped at its top, pressed
    by an interference (m) onto a rigid belt moving along x at ``v`` (m/s): five slave nodes."""
    mesh = rectangle(0.04, 0.02, 4, 2)
    sub = Substructure(mesh, PlaneStress(2e6, 0.3, 1000.0, 0.01), clamped=["top"], name="block")
    bottom = mesh.nodes("bottom")
    bottom = bottom[np.argsort(mesh.points[bottom, 0])]
    belt = Body([[1.0]], [[0.0]], [[-1.0, interference], [1.0, interference]], [[0, -1], [0, -1]], name="belt",
                prescribed={0: v})
    return MultibodyModel([Body.from_substructure(sub), belt], [ContactInterface("block", bottom, "belt", [[0, 1]],
                                                                                 mu=mu)])


def extruded(plane, width=0.01):
    """The plane model as solid bodies: every node of the block copied at z = 0, w/2 and w,
    sharing the plane node's x and y coordinates, z held; the slave nodes those of the middle
    layer; the belt segment swept along z into one quad face (normal +y)."""
    block, belt = plane.bodies
    itf = plane.interfaces[0]
    N = block.X.shape[0]
    X = np.vstack([np.column_stack([block.X, np.full(N, z)]) for z in (0.0, 0.5 * width, width)])
    nd = np.vstack([np.column_stack([block.node_dofs, np.full(N, -1)])] * 3)
    solid = Body(block.M, block.K, X, nd, block.C, name="block")
    (A, B), = itf.master_segments
    G = np.array([[*belt.X[A], 0.0], [*belt.X[A], width], [*belt.X[B], width], [*belt.X[B], 0.0]])
    floor = Body([[1.0]], [[0.0]], G, [[0, -1, -1]] * 4, name="belt", prescribed=dict(belt.prescribed))
    i3 = ContactInterface3D("block", itf.slave_nodes + N, "belt", np.array([[0, 1, 2, 3]]), itf.mu, face_type="quad4")
    return MultibodyModel([solid, floor], [i3])


@pytest.mark.parametrize("law", [Coulomb(0.3), Stribeck(0.5, 0.3, 0.2)])
def test_effectively_plane_model_has_the_plane_eigenvalues(law):
    plane = block_on_belt_2d(0.3)
    solid = extruded(plane)
    a, b = (steady_state(m, friction=law) for m in (plane, solid))
    assert a.state.tolist() == [2] * 5 and b.state.tolist() == [2] * 5
    np.testing.assert_allclose(b.lambda_n, a.lambda_n, rtol=1e-9)
    # the friction force against the slip along +x (the belt moves along -x)
    np.testing.assert_allclose(np.hypot(*b.lambda_t.T), np.abs(a.lambda_t), rtol=1e-9)
    np.testing.assert_allclose(b.direction, np.tile([1.0, 0.0, 0.0], (5, 1)), atol=1e-12)
    la, lb = (sorted_eigs(linearise(m, s).eigenvalues()) for m, s in ((plane, a), (solid, b)))
    # the same matrices but for round-off (the 3D terms through z multiply zero rows): measured
    # 0 and 2.8e-15 of the largest modulus; 1e-9 leaves room for another BLAS's summation order
    assert la.size == lb.size and la.real.max() > 100.0
    assert distance(la, lb) <= 1e-9 * np.abs(la).max()


# ------------------------------------------------------------------------------- transverse damping
def mass_on_belt(mu_law, v=(0.2, 0.0), m=0.5, kx=4e4, ky=9e4, preload=30.0):
    """A point mass m (kg; x, y, z) held in the plane by springs kx, ky (N/m), pressed by a
    preload (N) onto a rigid belt (the plane z = 0) moving at ``v`` (m/s, x and y)."""
    mass = Body(np.diag([m, m, m]), np.diag([kx, ky, 0.0]), [[0.0, 0.0, 0.0]], [[0, 1, 2]], name="mass",
                loads=[0.0, 0.0, -preload])
    G = [[-1.0, -1.0, 0.0], [1.0, -1.0, 0.0], [1.0, 1.0, 0.0], [-1.0, 1.0, 0.0]]
    belt = Body(np.eye(2), np.zeros((2, 2)), G, [[0, 1, -1]] * 4, name="belt", prescribed={0: v[0], 1: v[1]})
    itf = ContactInterface3D("mass", [0], "belt", np.array([[0, 1, 2, 3]]), face_type="quad4", friction=mu_law)
    return MultibodyModel([mass, belt], [itf])


def belt_closed_form(mu, slope, v, m, kx, ky, N):
    """Eigenvalues (1/s) of m q'' + C q' + K q = 0 over the in-plane motion q of the mass on the
    belt moving at v: the friction force on the mass is -mu(|w|) N w / |w|, w = q' - v its
    velocity relative to the belt; about w0 = -v, with e = w0 / |w0|, d(w / |w|) = (I - e e')
    dw / |w0| and d mu = mu' e . dw, so C = (mu N / |v|) (I - e e') + mu'(|v|) N e e', and
    K = diag(kx, ky) (the normal force N is the preload: nothing moves the mass off the belt)."""
    e = -np.asarray(v, float) / np.linalg.norm(v)
    C = mu * N / np.linalg.norm(v) * (np.eye(2) - np.outer(e, e)) + slope * N * np.outer(e, e)
    K = np.diag([kx, ky])
    A = np.block([[np.zeros((2, 2)), np.eye(2)], [-K / m, -C / m]])
    return sorted_eigs(np.linalg.eigvals(A))


@pytest.mark.parametrize("angle", [0.0, 35.0])
@pytest.mark.parametrize("law", [Coulomb(0.4), Stribeck(0.6, 0.3, 0.1)])
def test_transverse_slip_is_damped_by_mu_n_over_v(law, angle):
    m, kx, ky, N, speed = 0.5, 4e4, 9e4, 30.0, 0.2
    v = speed * np.array([np.cos(np.radians(angle)), np.sin(np.radians(angle))])
    model = mass_on_belt(law, v=v, m=m, kx=kx, ky=ky, preload=N)
    st = steady_state(model)
    assert st.state.tolist() == [2] and st.lambda_n[0] == pytest.approx(N, rel=1e-12)
    mu, slope = float(law.coefficient(speed)), float(law.slope(speed))
    lam = sorted_eigs(linearise(model, st).eigenvalues())
    ref = belt_closed_form(mu, slope, v, m, kx, ky, N)
    # measured <= 4e-16 of the largest modulus (a 4 x 4 eig of matrices equal to round-off)
    assert lam.size == 4 and distance(lam, ref) <= 1e-10 * np.abs(ref).max()
    if angle == 0.0:
        # the closed form across the sliding (y): m s^2 + (mu N / v) s + ky = 0
        c = mu * N / speed
        s_y = -c / (2 * m) + 1j * np.sqrt(ky / m - (c / (2 * m)) ** 2)
        # along it (x): m s^2 + mu'(v) N s + kx = 0 (negative damping for a falling law)
        s_x = -slope * N / (2 * m) + 1j * np.sqrt(kx / m - (slope * N / (2 * m)) ** 2)
        up = lam[lam.imag > 0]
        assert np.abs(up - s_y).min() <= 1e-10 * abs(s_y) and np.abs(up - s_x).min() <= 1e-10 * abs(s_x)
        assert (up.real > 0).any() == (slope < 0)


def test_sliding_velocity_imposed_without_drives():
    # the belt at rest, the same sliding imposed node by node: the same state and eigenvalues
    law = Stribeck(0.6, 0.3, 0.1)
    v = np.array([0.15, -0.1])
    driven = mass_on_belt(law, v=v)
    still = mass_on_belt(law, v=(0.0, 0.0))
    a = steady_state(driven)
    b = steady_state(still, sliding_velocity=lambda X: np.tile([-v[0], -v[1], 0.0], (len(X), 1)))
    c = steady_state(still, sliding_velocity=[np.array([[-v[0], -v[1], 0.0]])])
    for s in (b, c):
        assert s.state.tolist() == [2] and s.slip_speed[0] == pytest.approx(np.hypot(*v), rel=1e-14)
        la, lb = (sorted_eigs(linearise(m, x).eigenvalues()) for m, x in ((driven, a), (still, s)))
        assert distance(la, lb) <= 1e-12 * np.abs(la).max()
    # at rest without it: sticking (bonded)
    assert steady_state(still).state.tolist() == [1]
    with pytest.raises(ParameterError, match="sliding_velocity"):
        steady_state(still, sliding_velocity=[np.zeros((2, 3))])


# ------------------------------------------------------------------------------- against the transient
def block_on_belt(mu, v=0.1, angle=30.0, interference=1e-4, rayleigh=(0.0, 0.0)):
    """An elastic block (0.04 x 0.04 x 0.02 m, 2 x 2 x 2 hexahedra, E = 2 MPa) clamped at its top,
    pressed by an interference (m) onto a rigid belt (the plane z = interference) moving in the
    plane at ``v`` (m/s) along ``angle`` (degrees from -x): nine slave nodes, all sliding."""
    mesh = box(0.04, 0.04, 0.02, 2, 2, 2)
    sub = Substructure(mesh, Solid(2e6, 0.3, 1000.0), clamped=["zmax"], name="block", rayleigh=rayleigh)
    a = np.radians(angle)
    G = [[-1.0, -1.0, interference], [1.0, -1.0, interference], [1.0, 1.0, interference], [-1.0, 1.0, interference]]
    belt = Body(np.eye(2), np.zeros((2, 2)), G, [[0, 1, -1]] * 4, name="belt",
                prescribed={0: -v * np.cos(a), 1: -v * np.sin(a)})
    itf = ContactInterface3D("block", mesh.nodes("zmin"), "belt", np.array([[0, 1, 2, 3]]), face_type="quad4", mu=mu)
    return MultibodyModel([Body.from_substructure(sub), belt], [itf])


@pytest.mark.slow
def test_block_on_belt_perturbation_grows_at_the_leading_eigenvalue():
    """Unstable (mu = 0.3, undamped block sliding obliquely: 400 1/s at 1194 Hz, the transverse
    damping of the friction direction included): the perturbation of the nine-node steady state
    grows in the engine's 3D transient at the leading eigenvalue's rate and frequency."""
    z, p = leading_pole(block_on_belt(0.3), 0.012, 0.004, 8)
    assert z.real > 100.0
    # measured at h = h_c / 8: rate -0.069 %, frequency +0.075 % (h_c / 10: -0.13 %, +0.057 %)
    assert abs(p.real / z.real - 1) <= 0.05
    assert abs(p.imag / z.imag - 1) <= 0.005


@pytest.mark.slow
def test_block_on_belt_stable_perturbation_decays_at_the_least_damped_eigenvalue():
    """Stable (Rayleigh damping 20 1/s and 2e-5 s: the least damped eigenvalue -56.0 1/s at
    344 Hz): the slowest decay of the perturbation is that eigenvalue's."""
    z, p = leading_pole(block_on_belt(0.3, rayleigh=(20.0, 2e-5)), 0.012, 0.002, 8)
    assert -70.0 < z.real < 0
    # measured at h = h_c / 8: rate -1.2 %, frequency +0.053 %
    assert abs(p.real / z.real - 1) <= 0.05
    assert abs(p.imag / z.imag - 1) <= 0.005


# ------------------------------------------------------------------------------- band and sweep
def test_band_eigenvalues_and_mu_sweep_on_a_solid_model():
    from fesub.contact.analyses.band import band_eigenvalues
    from fesub.contact.analyses.mode_coupling import mu_sweep, spectrum_at_mu

    model = block_on_belt(0.3)
    system = linearise(model, steady_state(model))
    lo, hi, rate = 1000.0, 1400.0, 600.0
    dense = system.eigenvalues()
    inside = dense[(dense.imag >= 2 * np.pi * lo) & (dense.imag <= 2 * np.pi * hi) & (np.abs(dense.real) <= rate)]
    # 54 modal coordinates, 9 sliding rows: 90 first-order eigenvalues, above the dense threshold
    assert dense.size == 90 and inside.size >= 10
    res = band_eigenvalues(system, lo, hi, max_rate=rate)
    assert res.certified and res.lam.size == inside.size
    assert distance(sorted_eigs(res.lam), sorted_eigs(inside)) <= 1e-9 * np.abs(inside).max()
    # the sweep of the band, certified at each grid coefficient; the critical mu of its first pair
    # brackets a change of the dense spectrum's unstable count in the band
    band = {"f_lo": lo, "f_hi": hi, "max_rate": rate}
    sweep = mu_sweep(model, [0.0, 0.1], band=band, tol=1e-3)
    assert sweep.certified.all() and sweep.critical_mu < 0.1

    def unstable(mu):
        lam = spectrum_at_mu(model, mu)[0]
        sel = (lam.imag >= 2 * np.pi * lo) & (lam.imag <= 2 * np.pi * hi) & (lam.real > 1e-7 * np.abs(lam))
        return int(sel.sum())

    assert unstable(sweep.critical_mu - 1e-3) < unstable(sweep.critical_mu)
