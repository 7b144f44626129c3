"""Sliding-contact transient: backends, formulations, conservation, equilibrium, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from fesub import _backend
from fesub.contact import simulate
from fesub.errors import FesubError, MeshError, ModelError, ParameterError
from fesub.models import beam_on_beam as bb
from two_body_reference import simulate_dense


@pytest.fixture(scope="module")
def model():
    return bb.build()


@pytest.fixture(scope="module")
def system(model):
    return bb.contact_system(model)


def _run(system, n_steps, **kw):
    h = 0.9 * system.critical_step()
    kw.setdefault("vx", 0.03)
    return simulate(system, duration=n_steps * h, h=h, fs_out=1.0 / h, **kw)


def _rel(a, b):
    return np.abs(a - b).max() / np.abs(b).max()


@pytest.mark.parametrize("mu", [0.1, 0.3])
def test_compiled_kernel_and_numpy_twin_agree(system, mu):
    if not _backend.compiled_available("multibody"):
        pytest.skip("compiled kernels not built")
    with _backend.use("compiled"):
        a = _run(system, 2000, mu=mu, roughness_std=0.05, seed=1)
    with _backend.use("python"):
        b = _run(system, 2000, mu=mu, roughness_std=0.05, seed=1)
    assert a.backend == "compiled" and b.backend == "python"
    assert a.steps == b.steps == 2000
    # same operations in a different order: round-off (1e-16) amplified by lambda = gap/(h^2 den),
    # where the gap is a difference of positions ~1e-3 m resolved to ~1e-12 m -> 1e-8 is ample
    for key in ("lambda", "u_T_y", "u_C_x", "u_C_y", "x_contact", "v_t"):
        assert _rel(a.signals[key], b.signals[key]) < 1e-8, key


def test_engine_and_literal_equations_agree(system):
    a = _run(system, 2000, mu=0.3, roughness_std=0.05, seed=3)
    h = 0.9 * system.critical_step()
    b = simulate_dense(system, mu=0.3, vx=0.03, duration=2000 * h, h=h, fs_out=1.0 / h, roughness_std=0.05, seed=3)
    assert b.formulation == "dense" and b.steps == 2000
    # the engine's modal coordinates are an exact change of coordinates of the same
    # central-difference recursion
    for key in ("lambda", "u_T_y", "u_C_x", "u_C_y", "v_t"):
        assert _rel(a.signals[key], b.signals[key]) < 1e-8, key
    # accelerations are second differences of displacements ~1e-4 m: round-off 1e-20 m / h^2
    assert _rel(a.signals["a_T_y"], b.signals["a_T_y"]) < 1e-5


def _fixed_contact(geometry):
    """Undamped benchmark with outputs on the target nodes around C, released from the
    equilibrium under 1.2 x the load (mu = 0, vx = 0: free vibration with a fixed contact)."""
    from fesub.contact.sliding.system import SlidingContactSystem

    p = bb.BeamOnBeamParams(rayleigh1=(0.0, 0.0), rayleigh2=(0.0, 0.0))
    model = bb.build(p)
    s1, s2 = model.sub1, model.sub2
    A, C = s1.mesh.nodes("A"), s1.mesh.node("C")
    X2 = s2.mesh.points
    top = np.setdiff1d(s2.mesh.nodes("contact"), s2.mesh.nodes("B"))
    near = top[np.argsort(np.abs(X2[top, 0] - p.s0))[:3]]
    near = near[np.argsort(X2[near, 0])]  # three consecutive top nodes, left to right
    out2 = {f"{k}_{c}": int(s2.dofs([nd], c)[0]) for k, nd in zip("LMR", near) for c in "xy"}
    S = SlidingContactSystem(model.cb1, model.cb2, slave=C, prescribed=s1.dofs(A, "x"), target_edge="contact",
                             loads1={int(d): -p.Fy / A.size for d in s1.dofs(A, "y")},
                             outputs1={"C_x": int(s1.dofs([C], "x")[0]), "C_y": int(s1.dofs([C], "y")[0])},
                             outputs2=out2)
    nominal = S.load1.copy()
    S.load1 = 1.2 * nominal  # start from the equilibrium under 1.2 x the load ...
    w1, q2, _ = S.static_state(0.0, 0.0, geometry=geometry)
    S.load1 = nominal  # ... and release to the nominal load
    return S, (w1, q2), X2[near]


def _free_vibration(S, initial, geometry, n_steps, h, chunk):
    """Run it, recording the discrete energy of the central-difference scheme after every chunk:
    E = |v_{n+1/2}|^2/2 + u_n' K u_{n+1}/2 - f'(u_n + u_{n+1})/2 in modal coordinates (conserved
    exactly when the constraint does no work), relative to the vibration energy (initial energy
    minus the energy of the nominal equilibrium at rest)."""
    energies = []

    def energy(st):
        e = 0.0
        for i in ("1", "2"):
            a, b, f, w2 = st[f"eta{i}_prev"], st[f"eta{i}"], st[f"f{i}"], st[f"w2_{i}"]
            v = (b - a) / st["h"]
            e += 0.5 * v @ v + 0.5 * np.sum(w2 * a * b) - 0.5 * f @ (a + b)
        energies.append(e)

    res = simulate(S, mu=0.0, vx=0.0, duration=n_steps * h, h=h, fs_out=1.0 / h, initial=initial,
                   monitor=energy, chunk=chunk, stop_on_stick=False, geometry=geometry)
    assert res.status == "completed" and res.steps >= n_steps
    E = np.array(energies)
    w1e, q2e, _ = S.static_state(0.0, 0.0, geometry=geometry)
    eta = [S.Phi1.T @ (S.M1 @ w1e), S.Phi2.T @ (S.M2 @ q2e)]
    f = [S.Phi1.T @ S.load1, np.zeros(S.Phi2.shape[1])]
    Eeq = sum(0.5 * np.sum(w2 * e * e) - fi @ e for w2, e, fi in zip((S.w2_1, S.w2_2), eta, f))
    assert E[0] - Eeq > 0
    return res, np.abs(E - E[0]).max() / (E[0] - Eeq), E.size


def _positions(S, res, XT3):
    """Slave and the three target nodes (m) at every output sample, from the output channels."""
    s = res.signals
    C = S.X_C + np.c_[s["u_C_x"], s["u_C_y"]]
    T = [XT3[i] + np.c_[s[f"u_{k}_x"], s[f"u_{k}_y"]] for i, k in enumerate("LMR")]
    return C, T


def _perpendicular(P, Q1, Q2):
    """(alpha, signed distance) of points P from the lines Q1-Q2 (row-wise)."""
    d = Q2 - Q1
    l2 = np.sum(d * d, axis=1)
    alpha = np.sum((P - Q1) * d, axis=1) / l2
    return alpha, (-d[:, 1] * (P[:, 0] - Q1[:, 0]) + d[:, 0] * (P[:, 1] - Q1[:, 1])) / np.sqrt(l2)


def test_energy_conserved_without_friction_and_damping():
    """mu = 0, no damping, vx = 0, fixed contact: the contact row (point alpha0 on the segment,
    direction gamma0) is that of the initial deformed configuration, held for the whole run
    (geometry='frozen', the constraint linearised about the preloaded state). It does no work, so
    the discrete energy is conserved to round-off over 3e4 steps (the engine's Python step loop,
    which marches the frozen frame, takes about 0.8 ms a step), sampled at every step; and the
    slave stays on the deformed target: the perpendicular distance of C from the deformed segment,
    measured from the output positions, is below 1e-9 m at every step.

    Why not the paper's deformed-geometry update: it evaluates the row at the predicted
    configuration u*_{n+1}, so the constraint force does work each step (lambda x the change of
    the row x the displacement over a step); the energy error is then O(h^2), about 1.4e-4 at
    0.9 x the critical step (see the test below)."""
    S, initial, XT3 = _fixed_contact("frozen")
    h = 0.9 * S.critical_step()
    res, drift, n_samples = _free_vibration(S, initial, "frozen", 30_000, h, chunk=1)
    assert n_samples >= 30_000
    # an exact invariant of the recursion; round-off in modal sums of ~250 terms: observed 3.0e-9
    # over 1e5 steps -> 1e-6 (the acceptance bound)
    assert drift < 1e-6, drift
    C, T = _positions(S, res, XT3)
    seg, a0, g0 = S.contact_point(*initial)
    k = [i for i in (0, 1) if np.all(S.XT[S.segs[seg]] == XT3[i:i + 2])]
    assert k, "the frozen segment is not one of the two around C"
    k = k[0]
    # the enforced constraint: n0 . (C - P0) = 0, P0 = (1 - a0) T1 + a0 T2, n0 = (-sin g0, cos g0)
    P0 = (1 - a0) * T[k] + a0 * T[k + 1]
    n0 = np.array([-np.sin(g0), np.cos(g0)])
    t0 = np.array([np.cos(g0), np.sin(g0)])
    residual = (C - P0) @ n0
    # closed by the multiplier; round-off of 5e-3 m coordinates: observed 1e-18 m -> 1e-15 m
    assert np.abs(residual).max() < 1e-15, np.abs(residual).max()
    # the true gap, from the output positions at every step
    alpha, gap = _perpendicular(C, T[k], T[k + 1])
    assert np.all((alpha >= 0) & (alpha <= 1))
    # observed 8.4e-11 m (second order in the vibration about the preloaded state)
    assert np.abs(gap).max() < 1e-9, np.abs(gap).max()
    # what it is made of: with C - P0 along t0 (offset o), the distance from the rotated segment
    # (angle g) is -o sin(g - g0) exactly; second order in the vibration (rotation x sliding)
    slope = np.arctan2(*(T[k + 1] - T[k])[:, ::-1].T)
    offset = (C - P0) @ t0
    # the identity holds up to the residual above (1e-18 m) -> atol 1e-15 m
    np.testing.assert_allclose(gap, -offset * np.sin(slope - g0), rtol=1e-9, atol=1e-15)
    # the kernel's gap (after the step) equals the distance at the next sample: 1e-15 m
    np.testing.assert_allclose(res.signals["gap"][:-1], gap[1:], rtol=0, atol=1e-15)
    assert res.signals["lambda"].min() > 0


def test_undeformed_contact_row_conserves_energy_but_leaves_a_geometric_gap():
    """The same free vibration with the row of the undeformed configuration (geometry='undeformed',
    constant for vx = 0, as assumed by the eigenvalue and TD-FRF analyses): energy conserved to
    round-off too, and B_C (X + u) = 0 holds at every step; but the distance to the deformed target
    is the slope of the edge times the tangential offset of C from the enforced material point,
    both first order in the preload: 6.3e-10 m under the 0.4 N load (3.9e-9 m under 1 N), against
    the frozen row's 8.4e-11 m, which is second order in the vibration only."""
    S, initial, XT3 = _fixed_contact("undeformed")
    h = 0.9 * S.critical_step()
    res, drift, _ = _free_vibration(S, initial, "undeformed", 20_000, h, chunk=1)
    # exact invariant, round-off: observed 2.8e-9 -> 1e-6
    assert drift < 1e-6, drift
    C, T = _positions(S, res, XT3)
    k = 0 if XT3[0, 0] <= S.X_C[0] < XT3[1, 0] else 1
    assert XT3[k, 0] <= S.X_C[0] < XT3[k + 1, 0]
    a = (S.X_C[0] - XT3[k, 0]) / (XT3[k + 1, 0] - XT3[k, 0])
    assert np.ptp(XT3[:, 1]) == 0
    s = res.signals
    # the enforced row: the target edge is straight along x (gamma = 0), so
    # B_C (X + u) = (1 - a)(Y1 + u_1y) + a (Y2 + u_2y) - (Y_C + u_Cy); round-off: 1e-17 m -> 1e-15 m
    residual = (1 - a) * T[k][:, 1] + a * T[k + 1][:, 1] - C[:, 1]
    assert np.abs(residual).max() < 1e-15, np.abs(residual).max()
    _, gap = _perpendicular(C, T[k], T[k + 1])
    np.testing.assert_allclose(s["gap"][:-1], gap[1:], rtol=0, atol=1e-15)
    slope = np.arctan2(*(T[k + 1] - T[k])[:, ::-1].T)
    offset = C[:, 0] - ((1 - a) * T[k][:, 0] + a * T[k + 1][:, 0])
    # C is held at the height of the enforced point; the edge descends towards T (slope < 0), so at
    # the abscissa of C it lies lower by -slope x offset. Second-order remainder ~ slope^2
    # (3e-8 relative; observed 6e-9) -> 1e-6
    np.testing.assert_allclose(gap, -slope * offset, rtol=1e-6, atol=1e-16)
    assert s["lambda"].min() > 0


def test_frozen_row_backends_and_formulations_agree():
    """geometry='frozen': the engine on the compiled kernels and on their NumPy twins and the
    literal equations march the same recursion. Frictionless: held still (vx = 0) the engine's
    slave sticks where the sliding method would keep its friction force along +t (see
    ``two_body_reference``)."""
    S, initial, _ = _fixed_contact("frozen")
    h = 0.9 * S.critical_step()
    kw = dict(mu=0.0, vx=0.0, duration=2000 * h, h=h, fs_out=1.0 / h, initial=initial, stop_on_stick=False,
              geometry="frozen", roughness_std=0.01, seed=2)
    runs = [simulate_dense(S, **kw)]
    for be in ("compiled", "python"):
        if be == "compiled" and not _backend.compiled_available("friction_lcp"):
            continue
        with _backend.use(be):
            runs.append(simulate(S, **kw))
    assert runs[0].steps == 2000 and len(runs) >= 2
    # same arithmetic in a different order (see test_compiled_kernel_and_numpy_twin_agree)
    for r in runs[1:]:
        for key in ("lambda", "u_C_y", "u_M_y"):
            assert _rel(r.signals[key], runs[0].signals[key]) < 1e-8, key
        # the gap is a difference of 5e-3 m coordinates: round-off 1e-18 m -> 1e-15 m
        np.testing.assert_allclose(r.signals["gap"], runs[0].signals["gap"], rtol=0, atol=1e-15)
    with pytest.raises(ParameterError, match="vx = 0"):
        simulate(S, mu=0.0, vx=0.03, duration=10 * h, geometry="frozen")


def test_deformed_geometry_energy_error_is_second_order_in_the_step():
    """The same free vibration with the paper's deformed-geometry update: non-penetration of the
    deformed target at every step (from the output positions), and an energy drift that is a
    discretisation error of the moving contact row: halving the step divides it by 4."""
    S, initial, XT3 = _fixed_contact("deformed")
    hc = S.critical_step()
    res, drift, _ = _free_vibration(S, initial, "deformed", 100_000, 0.9 * hc, chunk=20)
    _, drift_half, _ = _free_vibration(S, initial, "deformed", 200_000, 0.45 * hc, chunk=20)
    print(f"deformed geometry: energy drift {drift:.3g} (h), {drift_half:.3g} (h/2)")
    # measured 1.4e-4 and 3.5e-5 (ratio 4.0): second order; 3.5..4.5 leaves room for the higher
    # order terms; a first-order error (ratio 2) or round-off (ratio 1) fails
    assert 3.5 < drift / drift_half < 4.5, (drift, drift_half)
    assert drift < 1e-3
    # deformed non-penetration: the multiplier closes the gap along the row of the predicted
    # configuration; what remains after the correction is second order in the change of the row
    # (observed 5e-15 m); measured here from the output positions of C and the target nodes
    C, T = _positions(S, res, XT3)
    gaps = []
    for k in (0, 1):
        alpha, gap = _perpendicular(C, T[k], T[k + 1])
        gaps.append(np.where((alpha >= 0) & (alpha <= 1), np.abs(gap), np.inf))
    gap = np.minimum(*gaps)
    assert np.all(np.isfinite(gap)), "the slave left the two segments around its start"
    assert gap.max() < 1e-9, gap.max()
    assert res.signals["lambda"].min() > 0


def test_steady_sliding_equilibrium(system, model):
    """mu = 0.1, smooth: after the start-up transient the mean vertical contact force on C balances
    Fy, and the mean horizontal one is the friction force along the deformed target plus the
    x-component of the normal force, with the slope of the target taken from an independent static
    solve of the full finite-element model of beam 2 under the mean contact force."""
    import scipy.sparse.linalg as spla

    mu = 0.1
    res = simulate(system, mu=mu, duration=0.15, vx=model.params.vx, fs_out=50_000)
    assert res.status == "completed"
    s = res.signals
    late = s["t"] > 0.05
    Fy = model.params.Fy
    # beam 1 is quasi-static (first mode 550 Hz >> 1/0.1 s): the mean of the contact force is the
    # applied load up to the tiny Rayleigh drag alpha m vx (~1e-3 N) -> 0.5 % is the stated bound
    assert abs(s["f_y"][late].mean() - Fy) / Fy < 5e-3
    assert s["lambda"].min() > 0 and s["v_t"].min() > 0
    # static slope of the top edge under the contact point: full FE stiffness of beam 2 (not the
    # reduced model of the simulation), loaded by the opposite of the mean contact force on C,
    # split over the two nodes of the segment under x as in eq. (42)
    sub2 = model.sub2
    X2 = sub2.mesh.points
    edges = sub2.mesh.edges("contact")
    x1, x2 = X2[edges[:, 0], 0], X2[edges[:, 1], 0]
    lu = spla.splu(sub2.K.tocsc())
    f_mean = np.array([s["f_x"][late].mean(), s["f_y"][late].mean()])

    def static_slope(x):
        k = np.flatnonzero((np.minimum(x1, x2) <= x) & (x < np.maximum(x1, x2)))[0]
        a, b = edges[k]
        al = (x - X2[a, 0]) / (X2[b, 0] - X2[a, 0])
        F = np.zeros(sub2.n_dofs)
        for node, w in ((a, 1 - al), (b, al)):
            F[sub2.dofs([node], "x")] -= w * f_mean[0]
            F[sub2.dofs([node], "y")] -= w * f_mean[1]
        U = sub2.expand(lu.solve(F))
        d = X2[b] + U[b] - X2[a] - U[a]
        return np.arctan2(d[1], d[0])

    idx = np.flatnonzero(late)[::10]  # 500 samples over 3 mm of sliding (33 per 1 mm segment)
    g = np.array([static_slope(x) for x in s["x_contact"][idx]])
    lam, fx = s["lambda"][idx], s["f_x"][idx]
    # Coulomb along the deformed surface: force on C = lambda (-sin g - mu cos g, cos g - mu sin g)
    predicted = np.mean(lam * (-np.sin(g) - mu * np.cos(g)))
    normal_part = np.mean(lam * np.sin(g))  # x-component of the normal force (-4.7e-4 N here)
    # the slope term is 0.5 % of the friction force: the comparison must resolve it. Measured
    # |fx - predicted| = 4e-5 of it (inertia and the decaying 76 Hz start-up motion of beam 2,
    # which the static solve leaves out); 1 % of it is the bound: leaving out the rotation of the
    # normal, or a wrong sign of the slope, misses by 100 % or more
    assert abs(fx.mean() - predicted) < 0.01 * abs(normal_part), (fx.mean(), predicted, normal_part)
    # the bending slope of beam 2 under the load is negative (deflection grows towards T)
    assert g.max() < 0
    assert fx.mean() < 0  # opposes sliding in +x


def test_critical_step_is_the_exact_stability_limit(system):
    """The central-difference recursion of the stiffest damped mode has spectral radius 1 at the
    computed limit: just below it is stable, just above unstable."""
    hc = system.critical_step()
    w2 = np.r_[system.w2_1, system.w2_2]
    c = np.r_[system.alpha1 + system.beta1 * system.w2_1, system.alpha2 + system.beta2 * system.w2_2]

    elastic = w2 > 0  # the rigid mode of beam 1 (w = 0) has a double root at 1 whatever h is
    w2, c = w2[elastic], c[elastic]

    def radius(h):
        # x_{n+1} = (2 - h^2 w^2 - h c) x_n - (1 - h c) x_{n-1}
        r = 0.0
        for a, b in zip(2 - h * h * w2 - h * c, -(1 - h * c)):
            r = max(r, np.abs(np.roots([1.0, -a, -b])).max())
        return r

    assert radius(0.999 * hc) <= 1.0 + 1e-12
    assert radius(1.001 * hc) > 1.0 + 1e-6


def test_time_step_above_critical_is_refused(system):
    with pytest.raises(ParameterError, match="critical"):
        simulate(system, mu=0.1, duration=1e-3, vx=0.03, h=1.01 * system.critical_step())


def test_bad_input_gives_clear_errors(model):
    """Each bad input raises the specific fesub exception with a message naming what is wrong."""
    from fesub.contact.sliding.system import SlidingContactSystem

    S = bb.contact_system(model)
    C = model.sub1.mesh.node("C")
    A_x = model.dofs["A_x"]
    # friction coefficient
    with pytest.raises(ParameterError, match=r"friction coefficient mu must be >= 0, got -0\.1"):
        simulate(S, mu=-0.1, duration=1e-4, vx=0.03)
    with pytest.raises(ParameterError, match="friction coefficient mu must be >= 0, got nan"):
        simulate(S, mu=float("nan"), duration=1e-4, vx=0.03)
    with pytest.raises(ParameterError, match=r"duration must be > 0 s"):
        simulate(S, mu=0.1, duration=0.0, vx=0.03)
    with pytest.raises(ParameterError, match=r"fs_out must be > 0 Hz"):
        simulate(S, mu=0.1, duration=1e-4, vx=0.03, fs_out=0.0)
    # initial state of the wrong size: the message gives the expected shapes
    n1, n2 = S.K1.shape[0], S.K2.shape[0]
    with pytest.raises(ParameterError, match=rf"initial state must have shapes \({n1},\), \({n2},\)"):
        simulate(S, mu=0.1, duration=1e-4, vx=0.03, initial=(np.zeros(3), np.zeros(3)))
    # slave not above the target: C placed beyond the free end of beam 2
    far = bb.build(bb.BeamOnBeamParams())
    far.sub1.mesh.points[:, 0] += 0.2
    with pytest.raises(ModelError, match="slave node is not above the target surface"):
        simulate(bb.contact_system(far), mu=0.1, duration=1e-4, vx=0.03)
    # unknown node set and unknown edge set: the message names the set and lists the available ones
    with pytest.raises(MeshError, match=r"no node set 'Z'; available: \['A', 'C', 'bottom', 'top'\]"):
        model.sub1.dofs("Z")
    with pytest.raises(MeshError, match=r"no edge set 'nope'; available: \['contact'\]"):
        SlidingContactSystem(model.cb1, model.cb2, slave=C, prescribed=A_x, target_edge="nope")
    # mismatched substructure DOFs
    interior = np.setdiff1d(np.arange(model.sub1.n_dofs), model.cb1.boundary)[:1]
    with pytest.raises(ModelError, match=rf"model DOF {interior[0]} \(node \d+ at \(.+\) m, [xy]\) of 'beam 1' is "
                                         r"not a boundary DOF of the Craig-Bampton reduction: keep it physical"):
        SlidingContactSystem(model.cb1, model.cb2, slave=C, prescribed=interior, target_edge="contact")
    with pytest.raises(ModelError, match="slave DOFs must not be prescribed"):
        SlidingContactSystem(model.cb1, model.cb2, slave=C, prescribed=model.dofs["C"][:1], target_edge="contact")
    with pytest.raises(ModelError, match=rf"load on a prescribed DOF {A_x[0]}"):
        SlidingContactSystem(model.cb1, model.cb2, slave=C, prescribed=A_x, target_edge="contact",
                             loads1={int(A_x[0]): 1.0})
    C_y = int(model.dofs["C"][1])
    for bad in (float("nan"), float("inf"), "1"):  # a load is a finite force in N
        with pytest.raises(ModelError, match="must be a finite force in N"):
            SlidingContactSystem(model.cb1, model.cb2, slave=C, prescribed=A_x, target_edge="contact",
                                 loads1={C_y: bad})
    with pytest.raises(ModelError, match=r"DOF 0 \(node \d+ .*\) of 'beam 2' is not a boundary DOF"):  # interior
        SlidingContactSystem(model.cb1, model.cb2, slave=C, prescribed=A_x, target_edge="contact",
                             outputs2={"bad": 0})
    # a clamped substructure as the slider (beam 2 in both roles)
    T, top = model.sub2.mesh.node("T"), model.dofs["contact_nodes"]
    with pytest.raises(ModelError, match="substructure 1 does not translate freely along x"):
        SlidingContactSystem(model.cb2, model.cb2, slave=T, prescribed=model.sub2.dofs(top[:3], "x"),
                             target_edge="contact")
    # every one of them is a FesubError (callers can catch the base class)
    assert all(issubclass(e, FesubError) for e in (ParameterError, ModelError, MeshError))


def test_stop_is_a_reported_outcome_with_results_kept(system, tmp_path):
    """A run that stops (here: the slave leaves the surface) keeps and saves everything up to then."""
    res = simulate(system, mu=0.1, duration=0.02, vx=5.0, fs_out=20_000)  # 5 m/s: off after ~19 ms
    assert res.status == "off_surface"
    assert 0 < res.stop_time < 0.02 and res.signals["t"][-1] <= res.stop_time
    assert "left the target surface" in res.reason
    path = res.save(tmp_path / "run_mu0.1")
    back = type(res).load(path)
    assert back.status == res.status and np.array_equal(back.signals["lambda"], res.signals["lambda"])


def test_result_roundtrip_keeps_dots_in_names(system, tmp_path):
    res = _run(system, 50, mu=0.1)
    res.save(tmp_path / "transient_mu0.1_smooth")
    res.save(tmp_path / "transient_mu0.1_rough")
    # the .nc suffix is appended: the two cases do not overwrite each other as "transient_mu0.nc"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["transient_mu0.1_rough.nc", "transient_mu0.1_smooth.nc"]


def test_result_round_trips_exactly_with_units(system, tmp_path):
    """save -> fesub.load: every signal bit for bit (dtype and channel order kept) and every scalar
    and record; every variable and coordinate carries its SI unit."""
    import fesub

    res = _run(system, 400, mu=0.3, roughness_std=0.002, seed=3)
    ds = res.to_xarray()
    units = {k: ds[k].attrs["units"] for k in list(ds.data_vars) + list(ds.coords)}
    assert units["t"] == "s" and units["lambda"] == "N" and units["v_t"] == "m/s"
    assert units["a_T_y"] == "m/s^2" and units["u_C_x"] == "m" and units["v_T_y"] == "m/s"
    assert set(units) == set(res.signals)
    back = fesub.load(res.save(tmp_path / "transient_mu0.3_rough"))
    assert list(back.signals) == list(res.signals)
    for k, v in res.signals.items():
        assert back.signals[k].dtype == v.dtype and np.array_equal(back.signals[k], v), k
    for k in ("status", "stop_time", "steps", "h", "h_critical", "fs_out", "wall_time", "mu", "formulation",
              "backend", "approximation", "info"):
        assert getattr(back, k) == getattr(res, k), k
    assert back.info["seed"] == 3 and back.info["roughness_std_N"] == 0.002
    s = back.summary()
    assert s["schema"] == "fesub-summary/1" and s["results"]["min_lambda"]["unit"] == "N"
    assert s["results"]["min_lambda"]["value"] == res.signals["lambda"].min()


def test_interrupt_returns_the_steps_done(system):
    """Ctrl-C during the march: the result holds the steps done so far (whole chunks), equal to
    the uninterrupted run's, with status 'interrupted'."""
    n = 60
    whole = _run(system, n, mu=0.3, chunk=20)
    calls = []

    def monitor(state):  # called after each chunk of 20 steps
        calls.append(state["steps"])
        if len(calls) == 2:
            raise KeyboardInterrupt

    part = _run(system, n, mu=0.3, chunk=20, monitor=monitor)
    done = 40
    assert calls == [20, 40]
    assert part.status == "interrupted" and "interrupted" in part.reason
    assert part.steps == done and part.stop_time == done * part.h
    for k, v in part.signals.items():
        np.testing.assert_array_equal(v, whole.signals[k][:v.size], err_msg=k)
    assert part.signals["t"].size == done


# ----------------------------------------------------------------------------- argument checks
@pytest.mark.parametrize("kw, match", [
    ({"chunk": 0}, "chunk"), ({"chunk": -5}, "chunk"), ({"chunk": 1.5}, "chunk"), ({"chunk": True}, "chunk"),
    ({"duration": float("inf")}, "duration must be > 0 s and finite"),
    ({"duration": "1"}, "duration must be a real number"),
    ({"fs_out": float("inf")}, "fs_out must be > 0 Hz and finite"),
    ({"vx": float("nan")}, "vx must be finite"),
    ({"mu": "x"}, "mu must be a real number"),
    ({"h": "x"}, "time step h must be a real number"),
    ({"seed": "x"}, "seed"), ({"seed": -1}, "seed"), ({"seed": 1.5}, "seed"),
    ({"roughness_std": float("nan")}, "roughness_std"),
])
def test_simulate_refuses_bad_arguments_before_any_work(system, kw, match):
    """chunk = 0 used to loop for ever and 1.5 was accepted; duration = inf and fs_out = inf failed
    deep inside; seed 'x' failed in NumPy: each is now a ParameterError naming the argument."""
    args = {"mu": 0.1, "duration": 1e-4, "vx": 0.03, **kw}
    with pytest.raises(ParameterError, match=match):
        simulate(system, **args)


def test_simulate_refuses_a_non_finite_initial_state(system):
    n1, n2 = system.K1.shape[0], system.K2.shape[0]
    w1 = np.zeros(n1)
    w1[3] = np.nan
    with pytest.raises(ParameterError, match="initial state .* must be finite"):
        simulate(system, mu=0.1, duration=1e-4, vx=0.03, initial=(w1, np.zeros(n2)))
    with pytest.raises(ParameterError, match="initial must be a pair"):
        simulate(system, mu=0.1, duration=1e-4, vx=0.03, initial=(np.zeros(n1), "ab"))


def test_tiny_time_step_warns_of_lost_digits_and_is_refused_when_none_are_left(system):
    """At rest (vx = 0, mu = 0, starting from the static equilibrium) the multiplier must stay at
    its static value: what it moves by is round-off, the independent measure of the estimate
    that simulate warns with. The estimate is the typical one-step error (measured largest
    deviation over 200 steps 1-3x the estimate, std 0.3-0.5x) and grows as 1/h^2."""
    import re
    import warnings

    measured, stated = {}, {}
    for h in (1e-10, 3e-11):
        with pytest.warns(UserWarning, match=r"keeps about [0-9.]+ correct digits") as rec:
            r = simulate(system, mu=0.0, duration=200 * h, h=h, fs_out=1 / h, vx=0.0, stop_on_stick=False)
        stated[h] = float(re.search(r"relative round-off ~([0-9.e+-]+)", str(rec[0].message)).group(1))
        lam, lam0 = r.signals["lambda"], r.info["lambda_static_N"]
        measured[h] = np.abs(lam - lam0).max() / lam0
        # the same order of magnitude: within a factor 10 either way
        assert 0.1 < measured[h] / stated[h] < 10, (h, measured[h], stated[h])
    # 1/h^2: (1e-10 / 3e-11)^2 = 11.1 (the message gives 2 digits, +-3.4 % each: 8 % on the
    # ratio); the measured ratio 8.7 (a largest value of 200 samples)
    assert stated[3e-11] / stated[1e-10] == pytest.approx(11.1, rel=0.08)
    assert 4 < measured[3e-11] / measured[1e-10] < 25
    with warnings.catch_warnings():  # an ordinary step: no warning, lambda exact to ~1e-7
        warnings.simplefilter("error")
        r = simulate(system, mu=0.0, duration=200e-8, h=1e-8, fs_out=1e8, vx=0.0, stop_on_stick=False)
    assert np.abs(r.signals["lambda"] / r.info["lambda_static_N"] - 1).max() < 1e-6
    # a step where lambda could change sign from round-off alone is refused, with a usable bound
    with pytest.raises(ParameterError, match=r"too small: .* use h >= ") as exc:
        simulate(system, mu=0.3, duration=1e-9, h=5e-12, vx=0.03)
    h_ok = float(re.search(r"use h >= ([0-9.e+-]+) s", str(exc.value)).group(1))
    with pytest.warns(UserWarning, match="correct digits"):
        simulate(system, mu=0.3, duration=20 * h_ok, h=h_ok, fs_out=1 / h_ok, vx=0.03)


@pytest.mark.parametrize("kw, match", [
    ({"duration": 1e300}, "exceeds 2e\\+09"),       # would allocate a march of 1e305 steps
    ({"h": 1e-300}, "exceeds 2e\\+09"),
    ({"fs_out": 1e300}, "exceeds 2e\\+09"),          # a step of 1e-300 s to sample that fast
    ({"fs_out": 1e-300}, "one output sample per 2e\\+09 steps"),
    ({"roughness_band": 5.0}, "roughness_band must be"),
    ({"roughness_band": (0.0, "x")}, "roughness_band must be"),
    ({"roughness_band": (1.0, 2.0, 3.0)}, "roughness_band must be"),
])
def test_simulate_refuses_marches_too_long_or_bands_that_are_not_bands(system, kw, match):
    args = {"mu": 0.3, "duration": 1e-3, "vx": 0.03, "progress": False, **kw}
    with pytest.raises(ParameterError, match=match):
        simulate(system, **args)
