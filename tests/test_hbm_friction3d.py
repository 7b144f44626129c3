"""3D friction contact element (Friction3D): special cases, closed forms, derivatives, backends."""

import math

import numpy as np
import pytest

from fesub._backend import compiled_available, use
from fesub.errors import ParameterError
from fesub.hbm import ContactElement, HBSystem, Jenkins, StickSlipSeparation, solve_at
from fesub.hbm.friction3d import Friction3D, evaluate_many, force_history_3d

BACKENDS = ["python"] + (["compiled"] if compiled_available("hbm3d") else [])
NH = 3
M = 2 * NH


def _rand_batch(rng, ne, nh=NH, constant=False):
    """Elements and coefficients spanning stick, slip, separation and re-contact (with
    ``constant`` each block has the mean first)."""
    m = 2 * nh + int(constant)
    els, P = [], []
    for i in range(ne):
        kt, kn = 1e5 * (1 + rng.random()), 2e5 * (1 + rng.random())
        mu, n0 = 0.1 + 0.5 * rng.random(), 50.0 + 100 * rng.random()
        els.append(Friction3D(kt, kn, mu, n0))
        p = rng.normal(size=3 * m) * 10.0 ** rng.uniform(-5.5, -3.0)
        p[2 * m:] *= rng.uniform(0.1, 2.0)
        P.append(p)
    return els, np.array(P)


@pytest.mark.parametrize("constant", [False, True])
@pytest.mark.parametrize("backend", BACKENDS)
def test_stiffness_against_central_differences(backend, constant):
    """K is the exact derivative of the discrete map: central differences of the same map agree
    to rounding. Bound: the map is affine in stick and separation (no truncation error) and the
    radial return's curvature ~ K/|t| gives O(h^2 / |t|^2) ~ 1e-12 at h = 1e-6 |p|; the
    differences of the nt-term projections (the samples carry the preload n0 and forces up to
    max|F|) round to ~ eps nt (n0 + max|F|) / h (N/m), the tolerance used. Measured: 0.4 % to
    1.8 % of it over three random sets (2e-10 to 8e-9 of |K|); a missing radial-return or
    interpolation term would be O(1) of |K|. With the constant term the means (the tangential
    ones move the start from rest) are differentiated as well."""
    rng = np.random.default_rng(24 if constant else 1)   # sets where the check is sharp
    els, P = _rand_batch(rng, 12, constant=constant)
    with use(backend):
        for el, p in zip(els, P):
            h = 1e-6 * np.abs(p).max()
            n = p.size
            # p, then p + h e_j and p - h e_j for every j: one batched call
            Pb = np.vstack([p, p + h * np.eye(n), p - h * np.eye(n)])
            F, K, per, _ = evaluate_many([el] * (2 * n + 1), Pb, NH)
            # the same discrete map: as many periods marched at p + h and p - h
            np.testing.assert_array_equal(per, per[0])
            Kfd = (F[1:n + 1] - F[n + 1:]).T / (2 * h)
            bound = np.finfo(float).eps * 128 * (el.n0 + np.abs(F[0]).max()) / h
            assert bound < 1e-6 * np.abs(K[0]).max()     # the check is sharp
            np.testing.assert_allclose(Kfd, K[0], atol=bound)


def test_compiled_matches_twin():
    if not compiled_available("hbm3d"):
        pytest.skip("compiled kernel not built")
    rng = np.random.default_rng(2)
    for constant in (False, True):
        els, P = _rand_batch(rng, 40, constant=constant)
        with use("python"):
            ref = evaluate_many(els, P, NH)
        with use("compiled"):
            out = evaluate_many(els, P, NH)
        # same operations in another order: rounding of the 2 nt-term projections (~1e-15)
        np.testing.assert_allclose(out[0], ref[0], atol=1e-12 * np.abs(ref[0]).max())
        np.testing.assert_allclose(out[1], ref[1], atol=1e-12 * np.abs(ref[1]).max())
        np.testing.assert_array_equal(out[2], ref[2])
        # the sample set covers every regime (slip needs > 1 period; separation: normal < 0)
        assert (ref[2] > 1).any() and (ref[2] == 1).any()


@pytest.mark.parametrize("backend", BACKENDS)
def test_one_direction_is_jenkins(backend):
    """Motion along one tangential direction at constant normal load: Jenkins's AFT map (same
    samples, same start), and it converges to the Jenkins event method as nt grows."""
    kt, mu, n0, kn = 2.0e5, 0.3, 100.0, 5e5
    jen = Jenkins(kt, mu, n0)
    X = np.array([3e-4, 1e-4, 0.0, 5e-5, 2e-5, 0.0])
    phi = 0.7   # any direction of the tangent plane (isotropy)
    p = np.concatenate([math.cos(phi) * X, math.sin(phi) * X, np.zeros(M)])
    el = Friction3D(kt, kn, mu, n0)
    ev = jen.evaluate(X, NH)                       # event method: exact transitions
    errs = []
    with use(backend):
        for nt in (128, 512, 2048):
            r = el.evaluate(p, NH, nt=nt)
            ra = jen.evaluate(X, NH, method="aft", nt=nt)
            Ft = math.cos(phi) * r.F[:M] + math.sin(phi) * r.F[M:2 * M]
            # same discrete map: rounding only (rotation adds a few ulps)
            np.testing.assert_allclose(Ft, ra.F, atol=1e-12 * np.abs(ra.F).max())
            np.testing.assert_allclose(r.F[2 * M:], 0.0, atol=1e-12 * n0)
            Kt = (math.cos(phi) ** 2 * r.K[:M, :M] + math.sin(phi) ** 2 * r.K[M:2 * M, M:2 * M]
                  + math.sin(phi) * math.cos(phi) * (r.K[:M, M:2 * M] + r.K[M:2 * M, :M]))
            np.testing.assert_allclose(Kt, ra.K, atol=1e-10 * np.abs(ra.K).max())
            errs.append(np.abs(Ft - ev.F).max() / np.abs(ev.F).max())
    # AFT of a kinked law: the error falls at least like nt^-1 (factor 4 per step of 4 in nt)
    assert errs[1] < errs[0] / 4 and errs[2] < errs[1] / 4, errs
    assert errs[2] < 1e-3


@pytest.mark.parametrize("backend", BACKENDS)
def test_plane_motion_is_stick_slip_separation(backend):
    """Tangential + normal in a plane: the 2D element's AFT map (separation and re-contact
    included), converging to its event method."""
    el2 = StickSlipSeparation(1.0e5, 2.0e5, 0.4, 60.0)
    X = np.array([4e-4, 1e-4, 0.0, 6e-5, 0.0, 0.0])
    Y = np.array([1e-4, 3.5e-4, 2e-5, 0.0, 0.0, 0.0])     # separates (kn |Y| > n0)
    ev = el2.evaluate(np.concatenate([X, Y]), NH)
    assert 3 in ev.to_state   # separation occurs
    el3 = Friction3D(1.0e5, 2.0e5, 0.4, 60.0)
    p = np.concatenate([np.zeros(M), X, Y])        # the second tangential direction
    errs = []
    with use(backend):
        for nt in (256, 1024, 4096):
            r = el3.evaluate(p, NH, nt=nt)
            ra = el2.evaluate(np.concatenate([X, Y]), NH, method="aft", nt=nt)
            sel = np.r_[M:3 * M]
            np.testing.assert_allclose(r.F[sel], ra.F, atol=1e-12 * np.abs(ra.F).max())
            np.testing.assert_allclose(r.K[np.ix_(sel, sel)], ra.K,
                                       atol=1e-12 * np.abs(ra.K).max())
            np.testing.assert_allclose(r.F[:M], 0.0, atol=1e-12 * np.abs(ra.F).max())
            errs.append(np.abs(r.F[sel] - ev.F).max() / np.abs(ev.F).max())
    assert errs[1] < errs[0] / 2 and errs[2] < errs[1] / 2, errs
    assert errs[2] < 1e-3


@pytest.mark.parametrize("backend", BACKENDS)
def test_circular_orbit_full_slip_closed_form(backend):
    """Circular tangential orbit of radius r with kt r > mu N at constant N: steady full slip,
    slider on the circle r_s = sqrt(r^2 - (mu N / kt)^2), force of magnitude mu N along the
    slip velocity, lagging the displacement by pi/2 - phi with sin(phi) = mu N / (kt r).
    First harmonic: F1 = mu N [sin phi, -cos phi], F2 = mu N [cos phi, sin phi]; energy per
    cycle 2 pi mu N r_s. The time discretisation (backward Euler of the slider) costs O(1/nt)."""
    kt, kn, mu, n0, r = 1e5, 1e6, 0.25, 80.0, 5e-4
    el = Friction3D(kt, kn, mu, n0)
    fs = mu * n0
    ph = math.asin(fs / (kt * r))
    p = np.zeros(3 * M)
    p[0], p[M + 1] = r, r          # u1 = r cos tau, u2 = r sin tau
    exact = np.zeros(3 * M)
    exact[[0, 1]] = fs * math.sin(ph), -fs * math.cos(ph)
    exact[[M, M + 1]] = fs * math.cos(ph), fs * math.sin(ph)
    W_exact = 2 * math.pi * fs * math.sqrt(r * r - (fs / kt) ** 2)
    errs = []
    with use(backend):
        for nt in (128, 512, 2048):
            res = el.evaluate(p, NH, nt=nt)
            errs.append(np.abs(res.F - exact).max() / fs)
            # dissipation pi sum_k k (F^ck Q^sk - F^sk Q^ck) over both tangential directions
            W = math.pi * sum(k * (res.F[c * M + 2 * k - 2] * p[c * M + 2 * k - 1]
                                   - res.F[c * M + 2 * k - 1] * p[c * M + 2 * k - 2])
                              for c in (0, 1) for k in range(1, NH + 1))
            assert abs(W - W_exact) < 10.0 * (2 * math.pi / nt) * W_exact
        f = force_history_3d(el, p, NH, nt=2048)
    # first order in 1/nt: error x nt roughly constant (within a factor 1.5), small at 2048
    assert errs[2] < 4e-3 and 4 * errs[2] < 1.5 * errs[1] and 4 * errs[1] < 1.5 * errs[0], errs
    # magnitude mu N at every sample (the radial return puts it on the circle exactly)
    np.testing.assert_allclose(np.hypot(f[:, 0], f[:, 1]), fs, rtol=1e-12)
    # turning with the motion: angle of f minus angle of u is pi/2 - phi (+ half a step lag)
    tau = 2 * math.pi * np.arange(2048) / 2048
    lag = np.angle(np.exp(1j * (np.arctan2(f[:, 1], f[:, 0]) - tau)))
    np.testing.assert_allclose(lag, math.pi / 2 - ph, atol=20 * 2 * math.pi / 2048)


def _slider_ode(u1, u2, kt, fs, tau, substeps):
    """Independent time integration of the continuous spring-slider (not the return map): the
    force f = kt (u - s) obeys f' = kt (u' - lam f/|f|), lam = max(f/|f| . u', 0) when
    |f| = fs (slip keeps |f| = fs), else lam = 0; midpoint rule on a fine grid, magnitude
    clipped to the circle only to remove the O(h^2) drift of the midpoint step."""
    n = tau.size
    h = (tau[1] - tau[0]) / substeps
    f = np.zeros(2)
    out = np.zeros((n, 2))

    def rate(f, du):
        nf = math.hypot(*f)
        if nf >= fs * (1 - 1e-12):
            e = f / nf
            lam = max(e @ du, 0.0)
            return kt * (du - lam * e)
        return kt * du

    for period in range(3):
        for i in range(n):
            for k in range(substeps):
                t = tau[i] + k * h
                du = np.array([u1(t, 1), u2(t, 1)])
                dum = np.array([u1(t + h / 2, 1), u2(t + h / 2, 1)])
                fm = f + 0.5 * h * rate(f, du)
                f = f + h * rate(fm, dum)
                nf = math.hypot(*f)
                if nf > fs:
                    f *= fs / nf
            out[(i + 1) % n] = f
    return out


def test_elliptical_orbit_against_time_integration():
    """A genuinely 2D elliptical orbit with partial stick at varying direction: the harmonic
    forces of the AFT map at nt = 4096 against a fine midpoint integration of the continuous
    slider (written here): first-order errors of both, ~1e-3 of mu N."""
    kt, kn, mu, n0 = 1e5, 1e6, 0.3, 50.0
    a, b = 3e-4, 1.2e-4           # kt a = 30 N > mu N = 15 N > kt b = 12 N
    el = Friction3D(kt, kn, mu, n0)
    nh = 5
    m = 2 * nh
    p = np.zeros(3 * m)
    p[0] = a
    p[m + 1] = b
    p[m + 2] = 0.3 * b            # a second harmonic in direction 2

    def u1(t, d):
        return -a * math.sin(t) if d else a * math.cos(t)

    def u2(t, d):
        if d:
            return b * math.cos(t) - 0.3 * b * 2 * math.sin(2 * t)
        return b * math.sin(t) + 0.3 * b * math.cos(2 * t)

    nt = 512
    tau = 2 * math.pi * np.arange(nt) / nt
    f = _slider_ode(u1, u2, kt, mu * n0, tau, substeps=16)
    E = np.column_stack([g(k * tau) for k in range(1, nh + 1) for g in (np.cos, np.sin)])
    Fref = np.concatenate([(2.0 / nt) * E.T @ f[:, 0], (2.0 / nt) * E.T @ f[:, 1]])
    r = el.evaluate(p, nh, nt=4096)
    err = np.abs(r.F[:2 * m] - Fref).max() / (mu * n0)
    # both first order in their step (2 pi / 8192 for the ODE, 2 pi / 4096 for the map):
    # ~ 2 pi / 4096 = 1.5e-3 of the slip force, sampling of the reference projection exact
    assert err < 5e-3, err
    # the orbit is neither fully stuck nor fully slipping
    fh = force_history_3d(el, p, nh, nt=1024)
    mag = np.hypot(fh[:, 0], fh[:, 1])
    assert (mag < 0.99 * mu * n0).any() and (abs(mag - mu * n0) < 1e-9).any()


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_slip_is_linear_spring(backend):
    """Small motion, no separation: F = [kt X1; kt X2; kn Y], K = diag(kt, kt, kn) exactly."""
    kt, kn = 1e5, 3e5
    el = Friction3D(kt, kn, 0.5, 100.0)
    rng = np.random.default_rng(3)
    p = rng.normal(size=3 * M) * 1e-5         # kt |u| <= 6 N << mu N (1 - ...) = 50 N
    with use(backend):
        r = el.evaluate(p, NH)
    k = np.repeat([kt, kt, kn], M)
    np.testing.assert_allclose(r.F, k * p, atol=1e-12 * np.abs(k * p).max())
    np.testing.assert_allclose(r.K, np.diag(k), atol=1e-12 * kn)
    # with the constant term: the spring from rest, its mean included (the march starts with
    # the slider at the origin), and the normal mean n0 + kn Y0
    pc = rng.normal(size=3 * (M + 1)) * 1e-5
    with use(backend):
        rc = el.evaluate(pc, NH)
    kc = np.repeat([kt, kt, kn], M + 1)
    Fc = kc * pc
    Fc[2 * (M + 1)] += 100.0
    np.testing.assert_allclose(rc.F, Fc, atol=1e-12 * np.abs(Fc).max())
    np.testing.assert_allclose(rc.K, np.diag(kc), atol=1e-12 * kn)
    # a contact stuck throughout repeats after the first period: one period marched
    assert r.periods == 1 and rc.periods == 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_isotropy_rotation(backend):
    """Rotating the tangential motion by any angle rotates the tangential forces (the circle;
    a box per direction would fail this)."""
    rng = np.random.default_rng(4)
    el = Friction3D(1e5, 2e5, 0.3, 60.0)
    p = rng.normal(size=3 * M) * 4e-4
    p[2 * M:] *= 0.3
    c, s = math.cos(1.1), math.sin(1.1)
    q = p.copy()
    q[:M], q[M:2 * M] = c * p[:M] - s * p[M:2 * M], s * p[:M] + c * p[M:2 * M]
    with use(backend):
        r, rq = el.evaluate(p, NH), el.evaluate(q, NH)
    rot = np.concatenate([c * r.F[:M] - s * r.F[M:2 * M], s * r.F[:M] + c * r.F[M:2 * M],
                          r.F[2 * M:]])
    np.testing.assert_allclose(rq.F, rot, atol=1e-10 * np.abs(r.F).max())


def test_bad_input():
    el = Friction3D(1e5, 2e5, 0.3, 60.0)
    with pytest.raises(ParameterError):
        el.evaluate(np.zeros(5), NH)
    with pytest.raises(ParameterError):
        el.evaluate(np.zeros(3 * M), NH, lam=np.zeros(3 * M))
    with pytest.raises(ParameterError):
        el.evaluate(np.full(3 * M, np.nan), NH)
    with pytest.raises(ParameterError):
        el.evaluate(np.zeros(3 * M), NH, nt=10)
    with pytest.raises(ParameterError):
        Friction3D(-1.0, 2e5, 0.3, 60.0)


def _system(elements_and_G, nh=3):
    Mm = np.diag([1.0, 1.0, 1.0])
    K = np.diag([4e4, 5e4, 6e4])
    C = 2e-4 * K
    cts = [ContactElement(e, G, f"c{i}") for i, (e, G) in enumerate(elements_and_G)]
    return HBSystem(Mm, C, K, nh, cts, fex=np.array([1.0, 0.5, 0.0]), dof=0)


def test_system_one_direction_reproduces_jenkins_system():
    """A 3D element whose tangential motion is along DOF 0 only (second tangential and normal
    on a DOF that stays at rest): the same forced response as the Jenkins system at the same
    AFT samples."""
    kt, mu, n0 = 2e4, 0.2, 50.0
    G3 = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    s3 = _system([(Friction3D(kt, 1e5, mu, n0, nt=256), G3)])
    s1 = _system([(Jenkins(kt, mu, n0), G3[:1])])
    w = math.sqrt(5e4)
    Q3 = solve_at(s3, w, 12.0)
    F1, K1, _ = s1.fnl(Q3, method="aft", nt=256)
    F3, K3, _ = s3.fnl(Q3)
    np.testing.assert_allclose(F3, F1, atol=1e-11 * np.abs(F1).max())
    np.testing.assert_allclose(K3, K1, atol=1e-11 * np.abs(K1).max())
    # the system residual at the 3D solution vanishes for the Jenkins system too
    R1 = s1.D(w) @ Q3 + F1 - 12.0 * s1.fex
    assert np.abs(R1).max() < 1e-8 * 12.0
    assert s3.amplitude(Q3) > 0


def test_system_forced_response_with_two_elements():
    """Two 3D elements between the DOFs: the forced response runs, the Jacobian of the system
    matches central differences of its residual, and stuck at small load it is the linear
    system with the contact springs."""
    th = 0.5
    Ga = np.array([[1.0, -1.0, 0.0], [0.0, 1.0, -1.0], [0.0, 0.0, 1.0]])
    Gb = np.array([[math.cos(th), math.sin(th), 0.0], [-math.sin(th), math.cos(th), 0.0],
                   [0.0, 0.0, -1.0]])
    els = [(Friction3D(1e4, 5e4, 0.3, 20.0), Ga), (Friction3D(2e4, 5e4, 0.2, 30.0), Gb)]
    sy = _system(els)
    w = 260.0
    Q = solve_at(sy, w, 5.0)
    _, J, _, _ = sy.jacobian(Q, w, 5.0)
    h = 1e-6 * np.abs(Q).max()
    Jfd = np.column_stack([(sy.residual(Q + h * e, w, 5.0) - sy.residual(Q - h * e, w, 5.0))
                           / (2 * h) for e in np.eye(sy.N)])
    np.testing.assert_allclose(Jfd, J, atol=1e-6 * np.abs(J).max())
    # tiny load: stuck, the linear response with kt, kt, kn springs
    Qs = solve_at(sy, w, 1e-4)
    np.testing.assert_allclose(Qs, sy.linear_response(w, 1e-4, stuck=True),
                               rtol=1e-8, atol=1e-10 * np.abs(Qs).max())
    assert np.all(sy.stuck_margin(Qs) < 0)
    assert np.any(sy.stuck_margin(Q) > 0)


def test_system_condensed_route_and_hill_stability():
    """The condensed solver (unknowns: the contact coordinates only, an independent route) gives
    the full harmonic balance's solution; Hill's method runs on it."""
    from fesub.hbm import floquet, solve_condensed
    Ga = np.array([[1.0, -1.0, 0.0], [0.0, 1.0, -1.0], [0.0, 0.0, 1.0]])
    sy = _system([(Friction3D(1e4, 5e4, 0.3, 20.0), Ga)])
    w = 250.0
    Q = solve_at(sy, w, 5.0)
    Qc = solve_condensed(sy, w, 5.0)
    # both Newton solutions to their rounding-relative tolerances (~1e-12 of the response)
    np.testing.assert_allclose(Qc, Q, atol=1e-8 * np.abs(Q).max())
    with pytest.warns(RuntimeWarning, match="Hill's method"):   # memory of the stuck state
        fl = floquet(sy, Q, w)
    assert np.all(np.isfinite(fl.multipliers)) and fl.multipliers.size == 2 * sy.n


@pytest.mark.parametrize("backend", BACKENDS)
def test_system_batched_assembly_against_dense_projection(backend):
    """The batched route (one kernel call, sparse gather and scatter) against the dense
    projections written out: F = sum P_e^T F_e, K = sum P_e^T K_e P_e with every contact
    evaluated on its own. Contacts share DOFs, use two AFT settings (two groups), and a Jenkins
    contact goes the per-contact route beside them."""
    rng = np.random.default_rng(5)
    n = 7
    cts = []
    for i in range(6):
        G = rng.normal(size=(3, n)) * (rng.random((3, n)) < 0.4)
        G[:, i] += 1.0
        el = Friction3D(1e4 * (1 + i), 5e4, 0.2 + 0.05 * i, 10.0 + 5 * i,
                        nt=None if i % 2 else 256)
        cts.append(ContactElement(el, G))
    cts.append(ContactElement(Jenkins(1e4, 0.3, 10.0), np.eye(n)[:1]))
    K0 = np.eye(n) * 1e5
    sy = HBSystem(np.eye(n), 1e-4 * K0, K0, NH, cts, fex=0, dof=0)
    Q = rng.normal(size=sy.N) * 3e-4
    with use(backend):
        F, K, _ = sy.fnl(Q)
        Fr, Kr = _each_contact(sy, Q)
    # same numbers summed in another order: rounding of the sums only
    np.testing.assert_allclose(F, Fr, atol=1e-12 * np.abs(Fr).max())
    np.testing.assert_allclose(K, Kr, atol=1e-12 * np.abs(Kr).max())
    assert len(sy._groups3d) == 2


def _each_contact(sy, Q):
    """The nonlinear forces and their Jacobian of ``sy`` at ``Q`` summed contact by contact, each
    evaluated on its own with its current settings."""
    Fr, Kr = np.zeros(sy.N), np.zeros((sy.N, sy.N))
    for i, P in enumerate(sy.P):
        r = sy.evaluate_contact(i, P @ Q)
        Fr += P.T @ r.F
        Kr += P.T @ r.K @ P
    return Fr, Kr


def test_system_follows_settings_changed_after_it_was_built():
    """An element's AFT samples (and periodicity settings) set after the system was built are
    the ones used: the batched route regroups and agrees with every contact evaluated on its
    own with its current settings (rounding of the sums, as above), and the samples do change
    the forces (96 samples against the default 128 at NH = 3: the first-order return map moves
    them by far more than rounding). Once the batched route kept the settings of construction."""
    rng = np.random.default_rng(7)
    n = 4
    cts = [ContactElement(Friction3D(1e4 * (1 + i), 5e4, 0.3, 10.0 + 5 * i),
                          rng.normal(size=(3, n)) + np.eye(n)[i]) for i in range(3)]
    K0 = np.eye(n) * 1e5
    sy = HBSystem(np.eye(n), 1e-4 * K0, K0, NH, cts, fex=0, dof=0)
    Q = rng.normal(size=sy.N) * 3e-4
    F0 = sy.fnl(Q)[0]
    for c in cts[:2]:
        c.element.nt = 96
    F, K, _ = sy.fnl(Q)
    Fr, Kr = _each_contact(sy, Q)
    np.testing.assert_allclose(F, Fr, atol=1e-12 * np.abs(Fr).max())
    np.testing.assert_allclose(K, Kr, atol=1e-12 * np.abs(Kr).max())
    assert len(sy._groups3d) == 2
    assert np.abs(F - F0).max() > 1e-6 * np.abs(F0).max()
