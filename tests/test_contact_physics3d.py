"""Frictional contact between solid bodies against closed forms of contact mechanics
(fesub.contact.engine: ContactInterface3D on solid bodies made from fesub's 3D meshes).

* Hertz: an elastic sphere cap (a block whose top is the paraboloid ``z = -r^2 / (2 R)``,
  Hertz's own profile) pressed by a rigid flat: contact radius ``a^3 = 3 F R / (4 E*)`` and
  peak pressure ``p0 = 3 F / (2 pi a^2)``, ``E* = E / (1 - nu^2)`` (the flat is rigid), on three
  meshes of decreasing node spacing s;
* Cattaneo-Mindlin: the same cap under a constant normal load P and a tangential load Q growing to
  0.97 mu P: the stick radius ``c = a (1 - Q / (mu P))^(1/3)`` within one node spacing;
* stick-slip of a mass on a belt sliding along a direction off the frame's axes, with
  static/kinetic and Stribeck friction: stick and slip times and the limit cycle's period against
  the event-driven integration of ``belt_reference`` (shared with the plane engine's belt test)
  within 1e-3 of the period;
* the energy balance with friction of an elastic block sliding on a belt under a smoothly varying
  load converges as O(h^2).

The caps are quasi-static problems solved by the dynamic engine: the cap is a Guyan reduction
(:class:`~fesub.substructure.CraigBampton` with no modes) of a graded hexahedral mesh on the nodes
of its top within 1.6 contact radii, with a scaled mass (every coordinate's own frequency 1 rad/s,
so that the spectrum is narrow and a slow ramp is quasi-static in a hundred steps) and damping at
the lowest frequency; the rigid flat is driven down (and then sideways) by smooth ramps, and the
loads F, P, Q are the sums of the contact forces. The runs take the default kernel backend (the
cone kernel's twin is checked against it in test_cone and test_contact_engine3d).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sla
from scipy.optimize import brentq

from fesub.contact.engine import Body, MultibodyModel, simulate_multibody
from fesub.contact.engine.friction import StaticKinetic, Stribeck
from fesub.contact.engine.surfaces import ContactInterface3D
from fesub.fe.materials import Solid
from fesub.fe.solid_mesh import SolidMesh, box
from fesub.substructure import CraigBampton, Substructure

import belt_reference
from belt_reference import engine_events

E, R, A0 = 1e6, 0.1, 5e-3  # Pa, m (sphere radius), m (the nominal contact radius of the meshes)
PATCH = 1.6                # contact nodes: the top nodes within PATCH * A0 of the axis
T_PRESS, T_SLIDE = 60.0, 120.0  # s: the ramps of the flat's motion down and along x (the caps' slowest
                                # periods are 12-30 s: quasi-static; doubling them changes nothing)


def graded(s, n_fine, L, n_coarse):
    """Node coordinates 0, s, ..., n_fine s, then n_coarse cells growing geometrically to L (m)."""
    x0 = n_fine * s
    q = brentq(lambda q: s * q * (q ** n_coarse - 1) / (q - 1) - (L - x0), 1.0001, 10.0)
    xs = list(np.arange(n_fine + 1) * s)
    for k in range(1, n_coarse + 1):
        xs.append(x0 + s * q * (q ** k - 1) / (q - 1))
    xs[-1] = L
    return np.array(xs)


def cap(n_per_a, nu, half=False, size=8.0):
    """The elastic cap: a block ``size`` A0 deep and from the axis, clamped at its bottom, node
    spacing s = A0 / n_per_a on and under its top within 1.75 A0, graded beyond; its top is the
    paraboloid of radius R (the morph fades to the bottom). A quarter (symmetry planes x = 0 and
    y = 0) or, with ``half``, a half (y >= 0, for a tangential load along x). Returns the Guyan
    stiffness (N/m) over the free x, y, z of the top nodes within PATCH * A0, their positions and
    coordinate map, and s."""
    s, L = A0 / n_per_a, size * A0
    nf = int(np.ceil(PATCH * n_per_a)) + 1
    nc = max(3, int(round(0.8 * n_per_a)) + 2)
    xs = graded(s, nf, L, nc)
    xf = np.concatenate([-xs[:0:-1], xs]) if half else xs
    nx, ny, nz = xf.size - 1, xs.size - 1, xs.size - 1
    unit = box(1.0, 1.0, 1.0, nx, ny, nz)
    i, j, k = (np.rint(unit.points[:, c] * n).astype(int) for c, n in enumerate((nx, ny, nz)))
    x, y, z = xf[i], xs[j], -xs[nz - k]
    z = z - (x * x + y * y) / (2 * R) * (z + L) / L
    mesh = SolidMesh(np.column_stack([x, y, z]), unit.cells, unit.node_sets, source="sphere cap")
    clamped = {"zmin": None, "ymin": "y"} if half else {"zmin": None, "ymin": "y", "xmin": "x"}
    sub = Substructure(mesh, Solid(E, nu, 1000.0), clamped=clamped)
    top = mesh.nodes("zmax")
    top = top[np.hypot(x[top], y[top]) <= PATCH * A0 + 1e-12]
    nd = np.full((top.size, 3), -1, np.int64)
    b = []
    for c, comp in enumerate("xyz"):
        for q, node in enumerate(top):
            g = sub.dofmap.dofs([node], comp)[0]
            dof = np.searchsorted(sub.retained, g)  # model DOF of a retained (not clamped) one
            if dof < sub.retained.size and sub.retained[dof] == g:
                nd[q, c] = len(b)
                b.append(int(dof))
    cb = CraigBampton(sub, boundary=np.array(b), n_modes=0)
    ci = cb.coordinate_index(b)
    K = cb.Kr[np.ix_(ci, ci)]
    return 0.5 * (K + K.T), mesh.points[top], nd, s


def smooth(t, t0, T):
    """A smooth step from 0 at t0 to 1 at t0 + T: (value, rate 1/s, second rate 1/s^2)."""
    r = min(max((t - t0) / T, 0.0), 1.0)
    inside = t0 < t < t0 + T
    return r * r * (3 - 2 * r), 6 * r * (1 - r) / T if inside else 0.0, (6 - 12 * r) / T ** 2 if inside else 0.0


def press(K, X, nd, *, depth, mu=0.0, slide=0.0, t_press=T_PRESS, t_slide=0.0):
    """The rigid flat (one quad face at z = 0, facing down) driven down by ``depth`` (m) over
    ``t_press`` s, held, then (``slide`` m) along x over ``t_slide`` s from 1.3 t_press; the cap
    mass-scaled (each coordinate's own frequency 1 rad/s) and damped at its lowest frequency
    (about critically). Time step half the critical one."""
    M = np.diag(np.diag(K))
    w2 = sla.eigh(K, M, eigvals_only=True)
    C = 2 * np.sqrt(w2[0]) * M
    down = lambda t: tuple(-depth * v for v in smooth(t, 0.0, t_press))
    along = lambda t: tuple(slide * v for v in smooth(t, 1.3 * t_press, max(t_slide, 1.0)))
    corners = np.array([[-1, -1, 0], [-1, 1, 0], [1, 1, 0], [1, -1, 0.0]])  # counter-clockwise from below
    flat = Body(np.eye(2), np.zeros((2, 2)), corners, np.array([[0, -1, 1]] * 4), name="flat",
                prescribed={0: along, 1: down})
    body = Body(M, K, X, nd, C, name="cap")
    model = MultibodyModel([body, flat], [ContactInterface3D("cap", np.arange(X.shape[0]), "flat", [[0, 1, 2, 3]],
                                                             mu, face_type="quad4")])
    h = 0.5 * 2 / np.sqrt(w2[-1])
    duration = 1.3 * t_press + (1.01 * t_slide if t_slide else 0.0)
    return simulate_multibody(model, duration=duration, h=h)


def hertz(F, nu):
    """Hertz's contact radius (m) and peak pressure (Pa) of the load F (N), rigid flat."""
    a = (3 * F * R / (4 * E / (1 - nu * nu))) ** (1 / 3)
    return a, 3 * F / (2 * np.pi * a * a)


# ------------------------------------------------------------------------------- Hertz
def test_hertz_contact_radius_and_peak_pressure_converge():
    """Quarter cap, nu = 0.3, meshes of A0/2, A0/3, A0/4 spacing. The contact radius from the
    outermost closed node is within s / sqrt(2) of Hertz's (a closed node carries the pressure
    on its tributary square: it can lie outside the contact circle by up to the square's
    half-diagonal; measured 0.19 s, 0.06 s, 0.11 s). The load-weighted radius sqrt(5/2 <r^2>)
    (Hertz's pressure has <r^2> = 2 a^2 / 5) and the centre node's pressure (its force on its
    tributary area) converge to Hertz's: errors 7.1 %, 3.1 %, 1.5 % and 1.4 %, 1.5 %, 0.7 %."""
    nu = 0.3
    err_m, err_p = [], []
    for n in (2, 3, 4):
        K, X, nd, s = cap(n, nu)
        res = press(K, X, nd, depth=A0 * A0 / R)
        ln = res.nodes["lambda_n"]
        F = 4 * ln[-1].sum()  # the quarter carries a quarter of the load
        # quasi-static: the load is still at the end of the hold (1e-5 of it over the last samples)
        assert np.ptp(4 * ln[-5:].sum(1)) <= 1e-5 * F
        a, p0 = hertz(F, nu)
        r = np.hypot(X[:, 0], X[:, 1])
        closed = ln[-1] > 0
        rc, ro = r[closed].max(), r[~closed].min()
        assert abs(rc - a) <= s / np.sqrt(2), (n, rc / a, s / a)
        assert ro > a  # no open node inside Hertz's circle
        err_m.append(abs(np.sqrt(2.5 * (ln[-1] * r * r).sum() / ln[-1].sum()) / a - 1))
        centre = np.argmin(r)
        assert r[centre] == 0.0
        err_p.append(abs(ln[-1, centre] / (s * s / 4) / p0 - 1))
    # each refinement shrinks the radius error by more than 1.5 (measured 2.3 and 2.1); the peak
    # pressure error by more than 1.5 over the two refinements (measured 2.0), 1 % at A0/4
    assert err_m[1] < err_m[0] / 1.5 and err_m[2] < err_m[1] / 1.5 and err_m[2] < 0.02, err_m
    assert err_p[2] < err_p[0] / 1.5 and err_p[2] < 0.01, err_p


# ------------------------------------------------------------------------------- Cattaneo-Mindlin
def partial_slip(nu, n=4, mu=0.3):
    """Half cap pressed to about A0 and then slid by 1.4 times Mindlin's displacement at Q =
    0.9 mu P: returns the run, the nodes' positions, s and (P, Q) per sample (N)."""
    K, X, nd, s = cap(n, nu, half=True)
    depth = A0 * A0 / R
    P_est = 4 / 3 * E / (1 - nu * nu) * np.sqrt(R) * depth ** 1.5
    G = E / (2 * (1 + nu))
    slide = 1.4 * 3 * mu * P_est * (2 - nu) / (16 * G * A0) * (1 - 0.1 ** (2 / 3))
    res = press(K, X, nd, depth=depth, mu=mu, slide=slide, t_slide=T_SLIDE)
    P = 2 * res.nodes["lambda_n"].sum(1)  # the half carries half the loads
    Q = 2 * res.nodes["force_x"].sum(1)
    return res, X, s, P, Q


def stick_radii(res, X, P, Q, mu, nu):
    """Per sample of the growing tangential load (Q/(mu P) > 0.05, the flat still sliding at
    more than a third of its top rate: a node stops slipping, and is reported stick, where the
    drive stops): Q/(mu P), the outermost stick node's radius c, the centroid x of the stick
    nodes, Hertz's a (m)."""
    st = res.nodes["state"]
    r = np.hypot(X[:, 0], X[:, 1])
    out = []
    for j in range(st.shape[0]):
        q = Q[j] / (mu * P[j])
        if q > 0.05 and 0.05 < (res.t[j] - 1.3 * T_PRESS) / T_SLIDE < 0.9 and np.any(st[j] == 1):
            stick = st[j] == 1
            out.append((q, r[stick].max(), X[stick, 0].mean(), hertz(P[j], nu)[0]))
    return np.array(out)


@pytest.mark.slow
def test_cattaneo_mindlin_stick_radius_within_the_mesh_resolution():
    """nu = 0.49: Dundurs' beta = (1 - 2 nu) / (2 (1 - nu)) of an elastic body on a rigid one is
    0.02, Mindlin's assumption (no coupling of normal and tangential tractions) holds. Over the
    growing Q (to 0.97 mu P), the outermost stick node is within one node spacing s of Cattaneo-
    Mindlin's c = a (1 - Q/(mu P))^(1/3) (a node-based radius has the resolution s; measured at
    most 0.40 s, 0.18 s on average), and the stick zone stays centred: the centroid of its nodes
    within 0.75 s of the axis (measured 0.5 s: the stick nodes of a grid of spacing s, two
    columns of them).

    nu = 0.3 (beta = 0.29): the tangential tractions load one side of the contact more than the
    other and the stick zone moves off the axis, to -x (the side the flat comes from), beyond the
    resolution (centroid at -1.0 s to -1.3 s for Q > 0.6 mu P on the A0/3 mesh, -1.2 s to -1.8 s
    on the A0/4 one: the departure grows under refinement): the known departure of dissimilar
    materials from Cattaneo-Mindlin. The test asserts it, so the check above is not passing by
    accident of a coarse mesh."""
    mu = 0.3
    res, X, s, P, Q = partial_slip(0.49)
    assert np.ptp(P[res.t > 1.3 * T_PRESS]) <= 0.02 * P[-1]  # the normal load constant to 2 % while Q grows
    q, c, xc, a = stick_radii(res, X, P, Q, mu, 0.49).T
    assert q.max() > 0.94 and len(q) > 100
    c_cm = a * (1 - q) ** (1 / 3)
    assert np.all(np.abs(c - c_cm) <= s), (np.abs(c - c_cm).max() / s)
    assert np.all(np.abs(xc) <= 0.75 * s), np.abs(xc).max() / s
    res3, X3, s3, P3, Q3 = partial_slip(0.3, n=3)
    q3, _, xc3, _ = stick_radii(res3, X3, P3, Q3, mu, 0.3).T
    assert xc3[q3 > 0.6].max() < -0.75 * s3


# ------------------------------------------------------------------------------- belt
BM, BK, BN, VB = 1.0, (2 * np.pi) ** 2, 10.0, 0.3      # kg, N/m, N, m/s (as the plane belt)
BC = 2 * 0.05 * np.sqrt(BK * BM)                         # N s/m (5 % of critical)
SLIDE = np.array([np.cos(0.6), np.sin(0.6), 0.0])         # the belt's direction, off the axes


def belt_3d(law):
    """A mass (three translations) on springs BK and dampers BC along x and y, pressed by BN
    on a rigid belt (one large quad face) moving at VB along SLIDE."""
    mass = Body(np.eye(3) * BM, np.diag([BK, BK, 0.0]), [[0.0, 0.0, 0.0]], [[0, 1, 2]], C=np.diag([BC, BC, 0.0]),
                name="mass", loads=[0.0, 0.0, -BN])
    corners = np.array([[-50, -50, 0], [50, -50, 0], [50, 50, 0], [-50, 50, 0.0]])
    belt = Body(np.eye(2), np.zeros((2, 2)), corners, [[0, 1, -1]] * 4, name="belt",
                prescribed={0: VB * SLIDE[0], 1: VB * SLIDE[1]})
    return MultibodyModel([mass, belt], [ContactInterface3D("mass", [0], "belt", [[0, 1, 2, 3]], friction=law,
                                                            face_type="quad4")])


@pytest.mark.slow
@pytest.mark.parametrize("law", [StaticKinetic(0.5, 0.3), Stribeck(0.5, 0.3, 0.1)], ids=["static_kinetic", "stribeck"])
def test_belt_stick_slip_in_3d_matches_the_event_driven_integration(law):
    """The isotropic springs keep the motion on the belt's line: the 1D reference applies. Time
    step 2e-4 s (5000 a period): events resolved to a step, measured within 5.5e-4 and 2.5e-4 of
    the period (static/kinetic, Stribeck); the bound is the acceptance's 1e-3."""
    t_end = 1.6  # from rest: slip, stick, slip, stick, slip (the period from the first to the second slip)
    ref = belt_reference.reference(law, t_end, m=BM, k=BK, c=BC, N=BN, vb=VB)
    res = simulate_multibody(belt_3d(law), duration=t_end, h=2e-4)
    got = engine_events(res)
    assert [k for k, _ in got] == [k for k, _ in ref] == ["stick", "slip", "stick", "slip"], (got, ref)
    period = ref[3][1] - ref[1][1]
    assert 0.9 < period < 1.2
    assert max(abs(a[1] - b[1]) for a, b in zip(got, ref)) < 1e-3 * period
    assert abs((got[3][1] - got[1][1]) - period) < 1e-3 * period
    nd = res.nodes
    st = nd["state"][:, 0]
    v = np.stack([nd[f"slip_velocity_{c}"][:, 0] for c in "xyz"], axis=-1)
    lt = np.stack([nd["force_x"][:, 0], nd["force_y"][:, 0]], axis=-1)
    sl = st == 2
    speed = np.linalg.norm(v[sl], axis=1)
    # slip along the belt's line (the mass is behind the belt: slip -SLIDE), to 1e-7 rad
    assert np.all(np.linalg.norm(np.cross(v[sl], SLIDE), axis=1) <= 1e-7 * speed)
    assert np.all(v[sl] @ SLIDE < 0)
    # slip at the law's coefficient of the slip speed, the force along the belt's motion
    np.testing.assert_allclose(np.linalg.norm(lt[sl], axis=1), law.coefficient(speed) * nd["lambda_n"][sl, 0],
                               rtol=1e-9)
    assert np.all(lt[sl] @ SLIDE[:2] > 0)


# ------------------------------------------------------------------------------- energy
def sliding_block():
    """An elastic hexahedron 20 x 20 x 10 mm (E = 2 MPa, mass damping 2000 1/s), its top held in
    x and y and pressed by N(t) = 10 N (1 + 0.5 sin(2 pi 40 t)) after a smooth 5 ms ramp, its
    four bottom nodes on a belt moving at 20 m/s along a direction off the axes (mu = 0.3): they
    slide all the time (the block's own vibration never reverses the slip)."""
    mesh = box(0.02, 0.02, 0.01, 1, 1, 1)
    sub = Substructure(mesh, Solid(2e6, 0.3, 1000.0), clamped={"zmax": ("x", "y")}, rayleigh=(2000.0, 0.0))
    bottom, top = mesh.nodes("zmin"), mesh.nodes("zmax")
    dz = sub.dofs(top, "z")

    def loads(t):
        f = np.zeros(sub.n_dofs)
        f[dz] = -10.0 * smooth(t, 0.0, 0.005)[0] * (1 + 0.5 * np.sin(2 * np.pi * 40 * t)) / top.size
        return f

    block = Body.from_substructure(sub, name="block", loads=loads)
    corners = np.array([[-1, -1, 0.0], [1, -1, 0], [1, 1, 0], [-1, 1, 0]])
    e = 20.0 * np.array([np.cos(0.4), np.sin(0.4)])
    belt = Body(np.eye(2), np.zeros((2, 2)), corners, np.array([[0, 1, -1]] * 4), name="belt",
                prescribed={0: e[0], 1: e[1]})
    return MultibodyModel([block, belt], [ContactInterface3D("block", bottom, "belt", [[0, 1, 2, 3]], 0.3,
                                                             face_type="quad4")])


def test_energy_balance_with_friction_converges_as_h_squared():
    """Steps h, h/2, h/4 (h = 4e-5 s, 0.4 of the critical step): the largest energy residual
    over the run falls by 4 per halving (measured order 1.998 and 1.999), 5.4e-8 of the work of
    the friction at h (bound 1e-7, scaled by h^2). The residual is the central difference's
    h^2/8 v'K v (ContactRunResult.energy_residual): no node sticks or opens after the first
    0.4 ms (the load's ramp from zero), so no event resolved to a step adds its own error."""
    model = sliding_block()
    peaks = []
    for h in (4e-5, 2e-5, 1e-5):
        res = simulate_multibody(model, duration=0.02, h=h, fs_out=2.5e4)
        st = res.nodes["state"]
        assert np.all(st[res.t > 4e-4] == 2)
        peaks.append(np.abs(res.energy_residual()).max())
        assert peaks[-1] <= 1e-7 * res.energies["friction_dissipation"][-1] * (h / 4e-5) ** 2 * 1.1
    order = np.log2(np.array(peaks[:-1]) / np.array(peaks[1:]))
    # second order to 0.1 (the fit over two halvings; a first-order term would show as < 1.9)
    assert np.all(np.abs(order - 2.0) <= 0.1), order
