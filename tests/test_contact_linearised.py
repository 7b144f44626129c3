"""The linearised steady sliding state of plane multibody models (fesub.contact.analyses.linearised,
fesub.contact.analyses.mode_coupling).

References, each independent of the code under test:
* the textbook two-degree-of-freedom belt model: its stiffness coefficients written here from the
  springs' directions, the critical mu from the closed form of the discriminant, the eigenvalues
  from the 2x2 matrices of the textbook equations (scipy eig on matrices typed here);
* the same model with a Stribeck law: the friction's slope as a damping mu'(v) lambda_n on x, with
  lambda_n from the textbook statics (a 3x3 linear system written here);
* every derivative of the nonlinear contact terms against central differences of those terms, on
  a block dragged over an elastic strip (segments that turn, contact points that move, a falling
  friction law, generic velocities);
* the steady state against the contact engine's transient: marched from the state, the forces
  stay at the state's.
"""

from __future__ import annotations

import numpy as np
import pytest

import fesub
from fesub.contact.analyses.contact_terms import contact_derivatives, contact_forces
from fesub.contact.analyses.linearised import linearise
from fesub.contact.analyses.mode_coupling import MuSweep, belt_two_dof, mu_sweep, spectrum_at_mu
from fesub.contact.analyses.steady import steady_state
from fesub.contact.engine import Body, ContactInterface, MultibodyModel, simulate_multibody
from fesub.contact.engine.friction import Coulomb, Stribeck, UserLaw
from fesub.errors import ModelError, ParameterError
from fesub.fe import PlaneStress, rectangle
from fesub.substructure import Substructure

K1, A1, K2, A2, K3, MASS = 1.0e5, np.radians(40.0), 1.0e5, np.radians(150.0), 6.0e4, 1.0


def textbook():
    """The coefficients of the belt model, from the springs' unit vectors (cos a, sin a)."""
    k11 = K1 * np.cos(A1) ** 2 + K2 * np.cos(A2) ** 2
    k12 = K1 * np.cos(A1) * np.sin(A1) + K2 * np.cos(A2) * np.sin(A2)
    k22 = K1 * np.sin(A1) ** 2 + K2 * np.sin(A2) ** 2 + K3
    mu_crit = ((k11 - k22) ** 2 + 4 * k12 * k12) / (4 * k12 * K3)
    return k11, k12, k22, mu_crit


def textbook_eigs(mu, cx=0.0, cy=0.0):
    """Eigenvalues (1/s) of m x'' + C x' + K_eff x = 0, K_eff = [[k11, k12 - mu k3], [k21, k22]],
    C = diag(cx, cy)."""
    k11, k12, k22, _ = textbook()
    K = np.array([[k11, k12 - mu * K3], [k12, k22]]) / MASS
    C = np.diag([cx, cy]) / MASS
    A = np.block([[np.zeros((2, 2)), np.eye(2)], [-K, -C]])
    lam = np.linalg.eigvals(A)
    return lam[np.lexsort((lam.real, lam.imag))]


def textbook_normal_force(mu, preload=100.0):
    """lambda_n (N) of the textbook statics: k11 x + k12 y = -mu lambda_n (the mass slips along +x
    on a belt moving along -x: friction along -x), k21 x + k22 y = -preload, lambda_n = -k3 y
    (the tip held on the belt)."""
    k11, k12, k22, _ = textbook()
    A = np.array([[k11, k12, mu], [k12, k22, 0.0], [0.0, K3, 1.0]])
    return np.linalg.solve(A, [0.0, -preload, 0.0])[2]


def distance(a, b):
    """Largest distance between two sets of eigenvalues paired one to one (least total distance)."""
    from scipy.optimize import linear_sum_assignment

    assert a.size == b.size
    cost = np.abs(a[:, None] - b[None, :])
    r, c = linear_sum_assignment(cost)
    return cost[r, c].max()


def belt(**kw):
    return belt_two_dof(m=MASS, k1=K1, alpha1=A1, k2=K2, alpha2=A2, k3=K3, **kw)


# ------------------------------------------------------------------------------- the belt model
def test_belt_coefficients_and_critical_mu_against_the_closed_form():
    b = belt()
    k11, k12, k22, mu_crit = textbook()
    c = b.coefficients
    assert c["s"] == 1.0
    for key, ref in (("k11", k11), ("k12", k12), ("k21", k12), ("k22", k22), ("k3", K3)):
        assert c[key] == pytest.approx(ref, rel=1e-14)
    sweep = mu_sweep(b.model, np.linspace(0.0, 0.4, 5), tol=1e-11)
    up = [o for o in sweep.onsets if o["kind"] == "unstable"]
    assert len(up) == 1 and sweep.unstable_at_start == 0
    # 1e-8: the bracket is 1e-11 wide and the threshold of 1e-7 |lambda| on the real part leaves a
    # bias (1e-7 |lambda| / c)^2 ~ 1e-12 for the real part c sqrt(mu - mu_crit) of the merged pair
    assert abs(sweep.critical_mu - mu_crit) <= 1e-8 * mu_crit
    # the frequency where the pair merges: the double root w^2 = (k11 + k22) / 2m
    k11, _, k22, _ = textbook()
    assert up[0]["f_hz"] == pytest.approx(np.sqrt((k11 + k22) / (2 * MASS)) / (2 * np.pi), rel=1e-6)


@pytest.mark.parametrize("factor", [0.0, 0.5, 0.99, 1.01, 1.5, 3.0])
def test_belt_eigenvalues_on_both_sides_of_the_critical_mu(factor):
    mu = factor * textbook()[3]
    lam, st = spectrum_at_mu(belt().model, mu)
    ref = textbook_eigs(mu)
    scale = np.abs(ref).max()
    assert lam.size == 4
    # round-off of the eigenvalues of the projected 2x2 system: 1e-12 of their size (1e-9 at 1 %
    # from the merging, where they are ill-conditioned as sqrt(eps) / sqrt(mu - mu_crit))
    assert distance(lam, ref) <= (1e-9 if abs(factor - 1) < 0.1 else 1e-11) * scale
    if factor < 1:
        assert lam.real.max() <= 1e-9 * scale           # stable: on the imaginary axis
    else:
        up = lam[lam.real > 1e-9 * scale]
        assert up.size == 2 and up[0] == pytest.approx(np.conj(up[1]), rel=1e-12)
    assert st.state.tolist() == [2] and st.lambda_n[0] == pytest.approx(textbook_normal_force(mu), rel=1e-12)
    assert st.lambda_t[0] == pytest.approx(-mu * st.lambda_n[0], rel=1e-14, abs=1e-14)


def test_belt_critical_mu_depends_on_neither_preload_nor_tip_mass():
    mu_crit = textbook()[3]
    for kw in ({"preload": 7.0}, {"tip_mass": 0.3}, {"v_belt": -20.0}):
        lam, _ = spectrum_at_mu(belt(**kw).model, mu_crit * 1.01)
        assert distance(lam, textbook_eigs(mu_crit * 1.01)) <= 1e-9 * np.abs(lam).max()


def test_belt_moving_the_other_way_flips_the_coupling():
    b = belt(v_belt=+1.0)
    assert b.coefficients["s"] == -1.0
    # K_eff = [[k11, k12 + mu k3], ...]: the same as mu -> -mu in the textbook matrix
    lam, st = spectrum_at_mu(b.model, 0.3)
    assert distance(lam, textbook_eigs(-0.3)) <= 1e-11 * np.abs(lam).max()
    assert st.state.tolist() == [3]


def test_belt_stribeck_slope_is_a_negative_damping():
    law = Stribeck(0.35, 0.05, 0.5)
    v = 1.0                                   # slip speed: the belt at -1 m/s under a still mass
    mu0, slope = law.coefficient(v), law.slope(v)
    assert slope == pytest.approx(-(0.35 - 0.05) / 0.5 * np.exp(-2.0), rel=1e-14)
    c = 3.0
    st = steady_state(belt(damping=c).model, friction=law)
    lam = linearise(belt(damping=c).model, st).eigenvalues()
    # the textbook equations with mu = mu(v) and the x damping c + mu'(v) lambda_n
    ref = textbook_eigs(mu0, c + slope * textbook_normal_force(mu0), c)
    ref = ref[np.lexsort((ref.real, ref.imag))]
    assert distance(lam, ref) <= 1e-10 * np.abs(ref).max()
    assert st.slip_speed[0] == pytest.approx(v, rel=1e-14) and st.mu[0] == pytest.approx(mu0, rel=1e-14)


# ------------------------------------------------------------------------------- many nodes
def dragged_block(law, v=0.05, interference=2e-5):
    """A plane-stress block (0.02 x 0.01 m, 2 x 1 elements) whose top edge is dragged along x at
    ``v`` (m/s) over an elastic strip (0.06 x 0.005 m, 6 x 1 elements, clamped at its ends),
    pressed onto it by an interference (m); three slave nodes on the strip's top edge."""
    strip_mesh = rectangle(0.06, 0.005, 6, 1)
    strip = Substructure(strip_mesh, PlaneStress(5e6, 0.3, 1000.0, 0.01), clamped=["left", "right"],
                         rayleigh=(0.0, 1e-5), name="strip")
    top = strip_mesh.nodes("top")
    top = top[np.argsort(strip_mesh.points[top, 0])]
    mesh = rectangle(0.02, 0.01, 2, 1, origin=(0.017, 0.005 - interference))
    sub = Substructure(mesh, PlaneStress(2e6, 0.3, 1000.0, 0.01), clamped={"top": "y"}, rayleigh=(0.0, 1e-5),
                       name="block")
    bottom = mesh.nodes("bottom")
    bottom = bottom[np.argsort(mesh.points[bottom, 0])]
    block = Body.from_substructure(sub, prescribed={int(k): v for k in sub.dofs("top", "x")})
    segs = np.column_stack([top[:-1], top[1:]])
    itf = ContactInterface("block", bottom, "strip", segs, friction=law)
    return MultibodyModel([block, Body.from_substructure(strip)], [itf])


def test_dragged_block_state_obeys_coulomb_and_closes_every_gap():
    law = Stribeck(0.5, 0.3, 0.02)
    model = dragged_block(law)
    st = steady_state(model, 0.01)
    # the pressed block bears on its edges: the middle node lifts off the soft strip
    assert st.state.tolist() == [2, 0, 2]
    on = st.state == 2
    assert np.all(st.lambda_n[on] > 0) and np.all(st.lambda_n[~on] == 0) and np.all(st.lambda_t[~on] == 0)
    assert np.abs(st.gap[on]).max() <= 1e-12 and np.all(st.gap[~on] > 0)
    # the slip speed is the drag speed along the (turned) tangent; the coefficient is the law's
    assert np.allclose(st.slip_speed[on], 0.05, rtol=1e-2)
    assert np.allclose(st.mu[on], law.coefficient(st.slip_speed[on]), rtol=1e-14)
    assert np.allclose(st.lambda_t, -st.mu * st.lambda_n, rtol=1e-14)
    # without the interference nothing is pressed: every node open (the active set lets go)
    st0 = steady_state(dragged_block(law, interference=-1e-6), 0.01)
    assert np.all(st0.state == 0) and np.all(st0.lambda_n == 0)


def central(fun, x, h):
    cols = []
    for j in range(x.size):
        e = np.zeros(x.size)
        e[j] = h[j] if np.ndim(h) else h
        cols.append((fun(x + e) - fun(x - e)) / (2 * e[j]))
    return np.array(cols).T


@pytest.mark.parametrize("stick", [False, True])
def test_every_derivative_against_central_differences(stick):
    # bonded, the pressed block's edges pull outwards at 2.4 times their normal force (the
    # Poisson expansion): a stick limit of 3 holds them (0.5 is refused, see test_bad_input)
    law = Stribeck(3.0 if stick else 0.5, 0.3, 0.02)
    model = dragged_block(law, v=0.0 if stick else 0.05)
    st = steady_state(model, 0.01)
    # the middle node lifts off (see above), the others slide or stick
    assert st.state.tolist() == ([1, 0, 1] if stick else [2, 0, 2])
    rng = np.random.default_rng(3)
    n = model.n_modes
    # a generic point near the state: perturbed coordinates, velocities, multipliers
    eta = st.eta + 1e-3 * np.abs(st.eta).max() * rng.standard_normal(n)
    deta = 1e-4 * rng.standard_normal(n)    # node velocities ~2e-3 m/s beside the drag's 0.05 m/s
    lam = st.lam * (1 + 0.1 * rng.standard_normal(st.lam.size))
    K, C, B, G = contact_derivatives(model, st.frames, st.drive, eta, deta, lam)

    def F(e, d, l):
        return contact_forces(model, st.frames, st.drive, e, d, l)

    he = 1e-6 * np.abs(eta).max()
    # velocity steps: a node's velocity moves by |R| hv ~ 20 hv m/s (|R| ~ 1 / sqrt(modal mass of a
    # node) ~ 20 kg^-0.5), 1e-5 of the Stribeck speed 0.02 m/s for hv = 1e-8: the truncation of the
    # exponential law, (2e-7 / 0.02)^2 ~ 1e-10 relative, stays below the tolerance
    hv = 1e-8
    hl = 1e-6 * np.abs(lam).max()
    fd_K = central(lambda e: F(e, deta, lam)[0], eta, he)
    fd_G = central(lambda e: F(e, deta, lam)[1], eta, he)
    fd_C = central(lambda d: F(eta, d, lam)[0], deta, hv)
    fd_B = central(lambda x: F(eta, deta, x)[0], lam, hl)
    # 1e-6 of each matrix's largest entry: central differences leave truncation ~1e-10 and
    # round-off ~1e-9 relative (forces ~1e-16 relative over steps ~1e-7 relative)
    for name, a, b in (("dF/deta", K, fd_K), ("dg/deta", G, fd_G), ("dF/deta'", C, fd_C), ("B'", B.T, fd_B)):
        scale = np.abs(b).max()
        if not stick or name in ("dg/deta", "B'"):   # a bond is linear: no stiffness, no damping
            assert scale > 0, name
        assert np.abs(a - b).max() <= 1e-6 * max(scale, 1e-300), (name, np.abs(a - b).max(), scale)
    if stick:
        assert not K.any() and not C.any()


def test_dragged_block_spectrum_and_sweep_save_and_load(tmp_path):
    model = dragged_block(Coulomb(0.3))
    sweep = mu_sweep(model, np.linspace(0.0, 0.6, 3), t=0.01, tol=1e-3)
    assert sweep.lam.shape[0] == 3 and np.isfinite(sweep.lam[:, 0]).all()
    # frictionless: the linearised system is symmetric (conservative but for the Rayleigh damping):
    # every eigenvalue stable
    assert sweep.lam[0].real.max() <= 1e-9 * np.nanmax(np.abs(sweep.lam[0]))
    for o in sweep.onsets:
        lam, _ = spectrum_at_mu(model, o["mu"], t=0.01)
        assert lam.real.max() > 0
    path = sweep.save(tmp_path / "sweep")
    back = fesub.load(path)
    assert isinstance(back, MuSweep) and back.onsets == sweep.onsets
    assert np.array_equal(back.lam, sweep.lam, equal_nan=True) and back.critical_mu == sweep.critical_mu
    assert sweep.states.shape == (3, 3) and np.array_equal(back.states, sweep.states)
    s = back.summary()
    assert s["results"]["critical_mu"]["unit"] == "1" and s["parameters"]["t"]["unit"] == "s"
    assert s["results"]["max_real_part"]["unit"] == "1/s"


def block_on_belt(mu, v=-0.1, interference=1e-4, rayleigh=(0.0, 0.0)):
    """A plane-stress block (0.04 x 0.02 m, 4 x 2 elements) clamped at its top, pressed by an
    interference (m) onto a rigid belt moving along x at ``v`` (m/s): five slave nodes."""
    mesh = rectangle(0.04, 0.02, 4, 2)
    sub = Substructure(mesh, PlaneStress(2e6, 0.3, 1000.0, 0.01), clamped=["top"], name="block",
                       rayleigh=rayleigh)
    bottom = mesh.nodes("bottom")
    bottom = bottom[np.argsort(mesh.points[bottom, 0])]
    belt_body = Body([[1.0]], [[0.0]], [[-1.0, interference], [1.0, interference]], [[0, -1], [0, -1]],
                     name="belt", prescribed={0: v})
    return MultibodyModel([Body.from_substructure(sub), belt_body],
                          [ContactInterface("block", bottom, "belt", [[0, 1]], mu=mu)]), sub


def test_block_on_belt_state_holds_in_the_transient():
    model, _ = block_on_belt(0.3)
    st = steady_state(model)
    assert np.all(st.state == 2)       # the block slips along +x (+t) on a belt moving along -x
    u = np.zeros(model.bodies[0].n)
    u[model.bodies[0].f_idx] = model.T_body[0] @ st.eta[model.cols[0]]
    res = simulate_multibody(model, duration=2e-3, h=model.critical_step() / 4, fs_out=None,
                             initial={"block": (u, np.zeros_like(u))}, initial_states=[2] * 5)
    # the state is an equilibrium of the march: after 2 ms (at a growth of ~460 1/s the unstable
    # pair's round-off start has grown by e^0.9) the forces are the state's to 1e-6 of the largest
    ln = res.nodes["lambda_n"][-1]
    assert np.abs(ln - st.lambda_n).max() <= 1e-6 * st.lambda_n.max()
    assert np.all(res.nodes["state"][-1] == 2)


def test_bad_input():
    b = belt()
    with pytest.raises(ParameterError):
        mu_sweep(b.model, [0.3, 0.1])
    with pytest.raises(ParameterError):
        belt_two_dof(v_belt=0.0)
    with pytest.raises(ParameterError):
        steady_state("model")
    with pytest.raises(ModelError, match="it would slide"):
        steady_state(dragged_block(Coulomb(0.5), v=0.0), 0.01)


def leading_pole(model, duration, t_fit, frac=10):
    """The leading eigenvalue z (1/s) of the linearised steady state, and the pole of largest real
    part fitted (matrix pencil, 8 exponentials) to the difference of the normal forces of two
    transients of the engine (h = h_c / frac) from the state (every slave node sliding), one
    perturbed by 1 nm along z's mode, after ``t_fit`` (s)."""
    from fesub.contact.analyses.perturb import matrix_pencil

    st = steady_state(model)
    lam, modes = linearise(model, st).eigenvalues(return_modes=True)
    k = int(np.argmax(np.where(lam.imag > 0, lam.real, -np.inf)))
    z = lam[k]

    def coords(eta):
        u = np.zeros(model.bodies[0].n)
        u[model.bodies[0].f_idx] = model.T_body[0] @ eta[model.cols[0]]
        return u

    u0, shape = coords(st.eta), coords(modes[:, k].real)
    du = 1e-9 * shape / np.abs(shape).max()
    # a tenth of the stability limit: the central differences' period error (w h)^2 / 24 ~ 3e-4
    h = model.critical_step() / frac
    runs = [simulate_multibody(model, duration=duration, h=h, fs_out=None, initial_states=[2] * st.state.size,
                               initial={"block": (u0 + d, np.zeros_like(u0))}) for d in (0 * du, du)]
    assert all(r.status == "completed" and np.all(r.nodes["state"] == 2) for r in runs)
    diff = runs[1].nodes["lambda_n"] - runs[0].nodes["lambda_n"]
    sel = runs[0].t > t_fit
    dec = max(1, round(1.0 / (40 * z.imag / (2 * np.pi) * h)))
    y = diff[sel][::dec].T
    poles, amps = matrix_pencil(y / np.abs(y).max(), dec * h, 8)
    # the exponentials the signal holds, not the fit's noise: on the stable block the decaying
    # pair has amplitude 0.5, the next mode 2e-6, and the round-off of the two runs' difference
    # (a 1 nm perturbation) gives pairs of 2e-8 to 5e-8 whose rates depend on the CPU's kernels;
    # a floor of 1e-5 of the largest amplitude keeps a margin of 200 over that noise
    amp = np.abs(amps).max(axis=0)
    keep = (poles.imag > 0) & (amp >= 1e-5 * amp.max())
    poles = poles[keep]
    return z, poles[np.argmax(poles.real)]


def test_block_on_belt_perturbation_grows_at_the_leading_eigenvalue():
    """Unstable (mu = 0.3, undamped block: 463 1/s at 1191 Hz): the perturbation of the five-node
    steady state grows in the transient at the leading eigenvalue's rate and frequency."""
    z, p = leading_pole(block_on_belt(0.3)[0], 0.012, 0.004)
    assert z.real > 100.0
    # measured: 0.10 % on the rate and 0.034 % on the frequency at h = h_c / 10 (0.65 % and 0.21 %
    # at h_c / 4, 0.034 % and 0.009 % at h_c / 20: the step's O(h^2))
    assert abs(p.real / z.real - 1) <= 0.05
    assert abs(p.imag / z.imag - 1) <= 0.005


def test_block_on_belt_stable_perturbation_decays_at_the_least_damped_eigenvalue():
    """Stable (mu = 0.3, Rayleigh damping 20 1/s and 2e-5 s: every real part negative, the least
    damped -54.3 1/s at 335 Hz): the slowest decay of the perturbation is that eigenvalue's."""
    z, p = leading_pole(block_on_belt(0.3, rayleigh=(20.0, 2e-5))[0], 0.03, 0.01)
    assert -60.0 < z.real < 0
    # measured: 0.055 % on the rate, 0.030 % on the frequency
    assert abs(p.real / z.real - 1) <= 0.05
    assert abs(p.imag / z.imag - 1) <= 0.005


@pytest.mark.parametrize("law", [Stribeck(0.5, 0.3, 0.02), Coulomb(0.4),
                                 UserLaw(lambda v: 0.3 + 0.2 / (1 + 30 * v))])
def test_law_slopes_against_central_differences(law):
    v = np.array([1e-3, 0.01, 0.05, 0.3])
    h = 1e-7   # truncation (h / 0.02)^2 ~ 2.5e-11 of the slope's scale
    fd = (law.coefficient(v + h) - law.coefficient(v - h)) / (2 * h)
    scale = max(np.abs(fd).max(), 1.0)
    # the user law's own slope is a central difference of step 1e-6 max(v, 1e-3): error ~1e-10
    assert np.abs(law.slope(v) - fd).max() <= 1e-6 * scale
    assert np.ndim(law.slope(0.05)) == 0


def test_the_moved_names_are_still_importable_from_linearised():
    """The steady state and the contact terms have modules of their own; the names the module
    ``linearised`` held before stay importable from it, the same objects."""
    from fesub.contact.analyses import contact_terms, linearised, steady

    for name in ("steady_state", "SteadyState"):
        assert getattr(linearised, name) is getattr(steady, name)
    for name in ("contact_forces", "contact_derivatives", "NodeFrame"):
        assert getattr(linearised, name) is getattr(contact_terms, name)
