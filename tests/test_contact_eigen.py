"""Complex eigenvalue analysis of the sliding contact: critical friction coefficient, max-real-part
map, Rayleigh lines and mode tracking, each against an independent computation.

Independent solver used below: the same coupled matrices, but orthonormal (SVD) null-space bases of
B_C and B_E instead of the sparse pivot bases, and NumPy's balanced eigen-solver. Accuracy floor of
either solver: a perturbation of the first-order matrix (norm ~ w_max^2, the highest coupled
frequency squared) moves an eigenvalue by ~ eps w_max^2 / |lambda| (measured up to 1.7 x that on
the small model below), hence the bound 10 eps w_max^2 / |lambda| wherever eigenvalues are compared.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sla

from fesub.contact.analyses import eigen
from fesub.contact.sliding.system import SlidingContactSystem
from fesub.errors import ParameterError
from fesub.models.beam_on_beam import BeamOnBeamParams, build, contact_system

# a small version of the benchmark (15 and 20 elements along the beams, the paper's 20 + 20
# Craig-Bampton modes): 84 coupled DOFs, one dense eigen-solve ~10 ms
SMALL = BeamOnBeamParams(nx1=15, nx2=20)
POSITIONS = np.linspace(0.01, 0.09, 9)
EPS = np.finfo(float).eps


@pytest.fixture(scope="module")
def small():
    return contact_system(build(SMALL, from_files=False))


def independent(S, s, mu, n=20):
    """The n lowest-frequency eigenvalues (positive imaginary part) by the independent solver, and
    w_max^2 of the coupled system (for the accuracy bound)."""
    M, C, K, BE, BC, _ = eigen.coupled_matrices(S, s, mu)
    LC, LE = sla.null_space(BC[None, :]), sla.null_space(BE[None, :])
    Mt, Ct, Kt = LE.T @ M @ LC, LE.T @ C @ LC, LE.T @ K @ LC
    m = Mt.shape[0]
    A = np.block([[np.zeros((m, m)), np.eye(m)], [-np.linalg.solve(Mt, Kt), -np.linalg.solve(Mt, Ct)]])
    lam = np.linalg.eigvals(A)
    osc = lam[lam.imag > 0]
    w2max = sla.eigh(LC.T @ K @ LC, LC.T @ M @ LC, eigvals_only=True).max()
    return osc[np.argsort(osc.imag)][:n], w2max


def accuracy(lam, w2max):
    return 10 * EPS * w2max / np.abs(lam)


def test_independent_solver_agrees(small):
    """The two solvers agree within the accuracy floor (so that the checks below can rely on it)."""
    for s in (0.01, 0.05, 0.09):
        for mu in (0.0, 0.3, 0.6):
            lam, w2max = independent(small, s, mu)
            ref = eigen.complex_eigenvalues(small, s, mu, 20)
            assert np.all(np.abs(lam - ref) < accuracy(ref, w2max)), (s, mu)


def test_critical_mu_brackets_the_first_positive_real_part(small):
    """Bisection result mu_c (tolerance 1e-3): with the independent solver, every one of the 20
    lowest eigenvalues has a negative real part at every position at mu_c - tol and below (scanned
    from 0), and some has a positive one at mu_c."""
    tol = 1e-3
    mu_c = eigen.critical_mu(small, POSITIONS, mu_max=1.0, n=20, tol=tol)
    assert 0.1 < mu_c < 1.0

    def worst(mu):
        out = []
        for s in POSITIONS:
            lam, w2max = independent(small, s, mu)
            k = np.argmax(lam.real)
            out.append((lam.real[k], accuracy(lam, w2max).max()))
        return max(out)

    below, err_b = worst(mu_c - tol)
    above, err_a = worst(mu_c)
    print(f"mu_c = {mu_c:.4f}: max Re {below:.3g} 1/s at mu_c - tol, {above:.3g} 1/s at mu_c")
    # measured -3.4 and +3.6 1/s, against an accuracy floor below 1e-3 1/s
    assert below < -err_b and above > err_a
    # smallest: no unstable window below (a 0.02 scan; measured max Re = -5.0 1/s, the alpha/2
    # decay of the lowest mode, at every mu scanned)
    for mu in np.arange(0.0, mu_c - tol, 0.02):
        assert worst(mu)[0] < 0, mu
    # stable up to mu_max: reported as infinite
    assert eigen.critical_mu(small, POSITIONS, mu_max=0.5 * mu_c, n=20) == float("inf")


def test_max_real_part_map_equals_loci_maxima(small):
    """Each row of the (mu, position) map is the per-position maximum of the tracked loci at that mu
    (tracking only permutes: equal to the last bit), and matches the independent solver."""
    positions = np.array([0.012, 0.027, 0.041, 0.058, 0.073])
    mus = np.array([0.1, 0.45, 0.7])
    smap = eigen.max_real_part_map(small, positions, mus, 20)
    rmap = smap.max_real
    assert rmap.shape == (mus.size, positions.size) and smap.status == "completed"
    np.testing.assert_array_equal(smap.mus, mus)
    np.testing.assert_array_equal(smap.positions, positions)
    for a, mu in enumerate(mus):
        loci = eigen.eigenvalue_loci(small, positions, mu, 20)
        np.testing.assert_array_equal(rmap[a], loci.lam.real.max(axis=1))
        for b, s in enumerate(positions):
            lam, w2max = independent(small, s, mu)
            k = np.argmax(lam.real)
            assert abs(rmap[a, b] - lam.real[k]) < accuracy(lam[k], w2max)
    # the map is not trivially uniform: unstable somewhere at the largest mu only
    assert rmap[0].max() < 0 < rmap[-1].max()


def test_rayleigh_line_is_the_damped_oscillator_root():
    """s = -zeta w + j w sqrt(1 - zeta^2), zeta = alpha/(2w) + beta w/2: the root with positive
    imaginary part of s^2 + (alpha + beta w^2) s + w^2 = 0 (np.roots); beyond critical damping the
    line gives the mean of the two real roots."""
    alpha, beta = 10.0, 9e-8
    # both sides of the two critical frequencies (zeta = 1 near 5 and 2.2e7 rad/s), kept 10 % away
    # from them (a double root there is ill-conditioned: error ~ sqrt(eps))
    w = np.r_[1.0, 2.0, 3.0, np.geomspace(20.0, 2e7, 30), 3e7, 1e8]
    line = eigen.rayleigh_line(w, alpha, beta)
    zeta = alpha / (2 * w) + beta * w / 2
    assert np.abs(zeta - 1).min() > 0.09 and np.any(zeta < 1) and np.any(zeta > 1)
    for wi, si, zi in zip(w, line, zeta):
        r = np.roots([1.0, alpha + beta * wi * wi, wi * wi])
        if zi < 1:
            root = r[np.argmax(r.imag)]
            # roots as companion eigenvalues: a few eps relative, amplified by 1/sqrt(1 - zeta^2)
            # (< 2.3 here) -> 1e-12
            assert abs(si - root) < 1e-12 * wi, wi
            assert abs(-si.real / abs(si) - zi) < 1e-12 and abs(abs(si) - wi) < 1e-12 * wi
        else:
            assert si.imag == 0 and si.real == pytest.approx(r.real.mean(), rel=1e-12)


def test_frictionless_coupled_eigenvalues_lie_on_the_rayleigh_line(small):
    """Both substructures have the same (alpha, beta), so at mu = 0 the coupled damping is
    proportional: every coupled eigenvalue is the Rayleigh-line point of its undamped frequency,
    computed independently by a symmetric solve."""
    assert (small.alpha1, small.beta1) == (small.alpha2, small.beta2)
    for s in (0.02, 0.094):
        M, _, K, _, BC, _ = eigen.coupled_matrices(small, s, 0.0)
        L = sla.null_space(BC[None, :])
        w2 = sla.eigh(L.T @ K @ L, L.T @ M @ L, eigvals_only=True)
        lam = eigen.complex_eigenvalues(small, s, 0.0, 20)
        line = eigen.rayleigh_line(np.sqrt(w2[:20]), small.alpha1, small.beta1)
        # measured up to 1.7 eps w_max^2/|lambda| (the lowest mode near the tip: 1e-4 1/s on 135)
        assert np.all(np.abs(lam - line) < accuracy(line, w2.max())), s


class _Crossing:
    """A contact problem with an exact eigenvalue crossing. Slider: C (x and y, mass m) and an
    oscillator z (damped, never in contact); target: one segment from (0, 0) to (1, 0) whose two
    nodes move vertically on springs ka, kb. Frictionless contact at alpha: C_y = (1 - alpha) T1_y
    + alpha T2_y. The z mode is constant, -c/2 + j sqrt(kz - c^2/4); the two contact modes move with
    alpha, the upper one from 3 (alpha = 0) down to sqrt(4.5) rad/s (alpha = 1), crossing z at 2.5."""

    _global_rows = SlidingContactSystem._global_rows

    def __init__(self, c=0.1):
        self.XT = np.array([[0.0, 0.0], [1.0, 0.0]])
        self.segs = np.array([[0, 1]])
        self.T_rows = np.array([[-1, 0], [-1, 1]])  # x of the target nodes held
        self.iC = np.array([0, 1])
        self.kx, self.kz, self.ka, self.kb, self.c = 0.25, 6.25, 1.0, 9.0, c
        self.M1, self.K1 = np.eye(3), np.diag([self.kx, 0.0, self.kz])
        self.C1 = np.diag([0.0, 0.0, c])
        self.M2, self.K2, self.C2 = np.eye(2), np.diag([self.ka, self.kb]), np.zeros((2, 2))

    def exact(self, alpha):
        """(x mode, contact mode 1, contact mode 2, z mode) in closed form."""
        # contact modes: T = (T1, T2), M = I + w w', K = diag(ka, kb), w = (1 - alpha, alpha):
        # det(K - s M) = 0 is a quadratic in s = omega^2
        a, b = 1 - alpha, alpha
        m11, m12, m22 = 1 + a * a, a * b, 1 + b * b
        qa = m11 * m22 - m12 * m12
        qb = -(self.ka * m22 + self.kb * m11)
        qc = self.ka * self.kb
        disc = np.sqrt(qb * qb - 4 * qa * qc)
        lo, hi = (-qb - disc) / (2 * qa), (-qb + disc) / (2 * qa)
        z = -self.c / 2 + 1j * np.sqrt(self.kz - self.c ** 2 / 4)
        return np.array([1j * np.sqrt(self.kx), 1j * np.sqrt(lo), 1j * np.sqrt(hi), z])


def test_tracking_follows_modes_through_a_crossing():
    """Coarse steps (0.05 in alpha; the upper contact mode moves up to 0.06 rad/s a step, more than
    the 0.05 rad/s damping offset of the z mode) across an exact crossing: every tracked column
    stays on its own closed-form branch, while the order by frequency swaps."""
    toy = _Crossing()
    alphas = np.arange(0.025, 1.0, 0.05)
    loci = eigen.eigenvalue_loci(toy, alphas, 0.0, 4)
    exact = np.array([toy.exact(a) for a in alphas])
    # the first position is ordered by frequency: x (0.5), contact 1, then z (2.5) below contact 2
    # (2.97), so the columns are (x, c1, z, c2)
    branch = np.array([0, 1, 3, 2])  # column -> closed-form branch
    assert np.all(np.diff(exact[0, branch].imag) > 0)
    # 5 x 5 problem, eigenvalues of order 1: round-off ~1e-15 -> 1e-12
    np.testing.assert_allclose(loci.lam, exact[:, branch], rtol=0, atol=1e-12)
    # the crossing is really there: sorted by frequency, z and contact mode 2 swap places, and
    # contact mode 2 passes z within single steps (a tracking by frequency order would jump branch)
    order = np.argsort(loci.lam.imag, axis=1)
    assert (order[0] == np.arange(4)).all() and (order[-1] == [0, 1, 3, 2]).all()
    c2, z = exact[:, 2].imag, exact[:, 3].imag
    k = np.flatnonzero(np.diff(np.sign(c2 - z)))
    assert k.size == 1 and np.abs(np.diff(c2))[k[0]] > abs(exact[0, 3].real)


def test_loci_continuity_on_the_benchmark(small):
    """On the small benchmark at mu = 0.3 over a fine window (0.05 mm steps): each tracked branch
    moves less per step than its distance to any other eigenvalue (continuity), and the tracking
    equals a greedy nearest-neighbour matching of the independent solver's eigenvalues."""
    positions = np.arange(0.030, 0.0331, 0.05e-3)
    loci = eigen.eigenvalue_loci(small, positions, 0.3, 12)
    lam = loci.lam
    step = np.abs(np.diff(lam, axis=0))
    for i in range(1, positions.size):
        d = np.abs(lam[i][:, None] - lam[i][None, :]) + np.diag(np.full(12, np.inf))
        assert np.all(step[i - 1] < 0.5 * d.min(axis=1)), positions[i]
    g, w2max = independent(small, positions[0], 0.3, 12)
    assert np.all(np.abs(g - lam[0]) < accuracy(lam[0], w2max))
    for i, s in enumerate(positions[1:], start=1):
        new, w2max = independent(small, s, 0.3, 12)
        nearest = np.argmin(np.abs(g[:, None] - new[None, :]), axis=1)  # of each previous value
        assert np.unique(nearest).size == 12  # a one-to-one matching
        g = new[nearest]
        assert np.all(np.abs(g - lam[i]) < accuracy(lam[i], w2max)), s


# ----------------------------------------------------------------------------- no silent truncation
def test_small_ritz_basis_warns_and_the_whole_model_finds_the_instability(small):
    """At mu = 0.7 and s = 10 mm the small model has one unstable eigenvalue, near 38 kHz (the 25th
    oscillating one). A Ritz basis of the 12 lowest frictionless coupled modes (up to 10.7 kHz)
    cannot see it: the answer is 'stable', but a warning says the basis leaves modes unexamined
    and the result records up to which frequency it is complete. The default (whole reduced model)
    finds the unstable eigenvalue, equal to the independent dense solve of the state matrix."""
    s, mu = 0.01, 0.7
    ref, w2max = independent(small, s, mu, n=200)
    hot = ref[ref.real > 0]
    assert hot.size == 1  # the setting of this test: one unstable eigenvalue
    f_hot = hot[0].imag / (2 * np.pi)
    with pytest.warns(eigen.IncompleteSpectrumWarning, match=r"12 lowest .* leaves 72 .* 84 modes"):
        ritz = eigen.eigenvalue_loci(small, [s], mu, 12, n_basis=12)
    assert ritz.complete_up_to_hz < f_hot and ritz.n_basis == 12 and ritz.n_modes == 84
    assert ritz.max_real < 0  # the truncated answer misses it ...
    with pytest.warns(eigen.IncompleteSpectrumWarning):
        assert eigen.complex_eigenvalues(small, s, mu, 12, n_basis=12).real.max() < 0
    with pytest.warns(eigen.IncompleteSpectrumWarning):
        assert eigen.critical_mu(small, [s], mu_max=mu, n=12, n_basis=12, tol=0.05) == float("inf")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # ... the whole model warns of nothing and finds it
        full = eigen.eigenvalue_loci(small, [s], mu, 84)
        crit = eigen.critical_mu(small, [s], mu_max=mu, n=84, tol=0.05)
    assert crit <= mu and crit.worst_above.max() > 0  # finite: unstable at mu_max
    assert full.complete_up_to_hz == float("inf") and full.n_basis is None
    k = np.argmax(full.lam[0].real)
    assert abs(full.lam[0, k] - hot[0]) < accuracy(hot[0], w2max)
    # a basis as large as the reduced model leaves nothing out: no warning, same eigenvalues
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        whole = eigen.eigenvalue_loci(small, [s], mu, 84, n_basis=84)
    np.testing.assert_array_equal(whole.lam, full.lam)


# ----------------------------------------------------------------------------- results on disk
def _units_everywhere(ds):
    return all("units" in ds[v].attrs for v in list(ds.data_vars) + list(ds.coords))


def test_results_round_trip_exactly(small, tmp_path):
    """EigenLoci, StabilityMap and CriticalMu: save -> fesub.load gives the same numbers bit for bit
    and the same metadata; every variable and coordinate carries its unit; mu0.1 and mu0.3 files do
    not collide."""
    import fesub

    positions = np.array([0.02, 0.03, 0.04])
    for mu in (0.1, 0.3):
        loci = eigen.eigenvalue_loci(small, positions, mu, 8)
        assert _units_everywhere(loci.to_xarray())
        p = loci.save(tmp_path / f"loci_mu{mu:g}")
        back = fesub.load(p)
        assert type(back) is eigen.EigenLoci and p.name == f"loci_mu{mu:g}.nc"
        np.testing.assert_array_equal(back.lam, loci.lam)
        np.testing.assert_array_equal(back.positions, loci.positions)
        assert (back.mu, back.n_basis, back.complete_up_to_hz, back.n_modes, back.status) == \
            (loci.mu, None, float("inf"), 84, "completed")
        assert back.summary()["results"]["max_real_part"] == {"value": loci.max_real, "unit": "1/s"}
    assert sorted(f.name for f in tmp_path.iterdir()) == ["loci_mu0.1.nc", "loci_mu0.3.nc"]

    smap = eigen.max_real_part_map(small, positions, [0.1, 0.7], 8)
    ds = smap.to_xarray()
    assert _units_everywhere(ds) and ds["max_real_part"].dims == ("position", "mu")
    np.testing.assert_array_equal(ds["max_real_part"].sel(mu=0.7).values, smap.max_real[1])
    back = fesub.load(smap.save(tmp_path / "map"))
    assert type(back) is eigen.StabilityMap and back.n == 8
    for name in ("positions", "mus", "max_real"):
        np.testing.assert_array_equal(getattr(back, name), getattr(smap, name))

    with pytest.warns(eigen.IncompleteSpectrumWarning):
        crit = eigen.critical_mu(small, positions, mu_max=1.0, n=20, tol=0.01, n_basis=60)
    assert _units_everywhere(crit.to_xarray())
    back = eigen.CriticalMu.load(crit.save(tmp_path / "critical_mu"))
    assert float(back) == float(crit) and back.bracket == crit.bracket and back.bracket[1] == float(crit)
    np.testing.assert_array_equal(back.worst_below, crit.worst_below)
    np.testing.assert_array_equal(back.worst_above, crit.worst_above)
    assert (back.n_basis, back.complete_up_to_hz, back.iterations) == (60, crit.complete_up_to_hz,
                                                                        crit.iterations)
    # the bracket is what it says: stable at its low end, unstable at its high end
    assert crit.worst_below.max() < 0 < crit.worst_above.max()
    assert crit.bracket[1] - crit.bracket[0] <= 0.01


def test_interrupted_analyses_return_what_was_done(small, monkeypatch):
    """Ctrl-C during the loci, the map or the bisection: the positions (entries, bracket) done so
    far, equal to an uninterrupted run's, with status 'interrupted'."""
    positions = np.array([0.02, 0.03, 0.04, 0.05])
    whole = eigen.eigenvalue_loci(small, positions, 0.3, 8)
    smap = eigen.max_real_part_map(small, positions, [0.3], 8)
    real = eigen._spectrum
    calls = {"n": 0}

    def flaky(*a, **k):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(eigen, "_spectrum", flaky)
    part = eigen.eigenvalue_loci(small, positions, 0.3, 8)
    assert part.status == "interrupted" and part.positions.size == 2
    np.testing.assert_array_equal(part.lam, whole.lam[:2])
    calls["n"] = 0
    pmap = eigen.max_real_part_map(small, positions, [0.3], 8)
    assert pmap.status == "interrupted"
    np.testing.assert_array_equal(pmap.max_real[0, :2], smap.max_real[0, :2])
    assert np.isnan(pmap.max_real[0, 2:]).all()
    calls["n"] = 0
    crit = eigen.critical_mu(small, [0.03], mu_max=1.0, n=20, tol=0.01)
    assert crit.status == "interrupted" and crit.iterations == 0 and crit.bracket == (0.0, 1.0)


# ----------------------------------------------------------------------------- argument checks
@pytest.mark.parametrize("tol", [0.0, -1e-3, float("nan"), float("inf"), "x"])
def test_critical_mu_refuses_a_bad_tolerance(small, tol):
    """tol = 0 (or NaN) used to bisect for ever; each is a ParameterError naming tol."""
    with pytest.raises(ParameterError, match="tol"):
        eigen.critical_mu(small, [0.03], tol=tol)


def test_critical_mu_caps_its_iterations(small):
    """A tolerance that needs more bisection steps than max_iter is refused before any work (with
    the smallest usable tol); a bracket of two adjacent floats ends the loop (tol below the float
    spacing at mu_max would otherwise never be reached)."""
    with pytest.raises(ParameterError, match=r"needs 70 bisection steps .* max_iter = 60"):
        eigen.critical_mu(small, [0.03], mu_max=1.0, tol=1e-21)
    with pytest.raises(ParameterError, match="max_iter"):
        eigen.critical_mu(small, [0.03], max_iter=0)
    crit = eigen.critical_mu(small, [0.03], mu_max=1.0, tol=1e-18, n=20)  # spacing at 0.5: 1.1e-16
    assert crit.status == "completed" and crit.iterations < 60
    lo, hi = crit.bracket
    assert np.nextafter(lo, 1.0) == hi and crit.worst_below.max() < 0 < crit.worst_above.max()


@pytest.mark.parametrize("bad", [{"n": -3}, {"n": 0}, {"n": 2.5}, {"n": True}, {"n_basis": 0},
                                 {"n_basis": -1}, {"n_basis": 1.5}, {"mu": float("nan")},
                                 {"mu": -0.1}, {"s": "0.03"}, {"s": [0.03, 0.04]}, {"s": float("inf")}])
def test_complex_eigenvalues_refuses_bad_arguments(small, bad):
    args = {"s": 0.03, "mu": 0.3, "n": 20, **bad}
    name = next(iter(bad))
    with pytest.raises(ParameterError, match={"s": "position", "mu": "mu"}.get(name, name)):
        eigen.complex_eigenvalues(small, args.pop("s"), args.pop("mu"), **args)


@pytest.mark.parametrize("positions, match", [([], "non-empty"), ([[0.02, 0.03]], "1-D"),
                                              ("0.02", "1-D"), (["a", "b"], "positions"),
                                              ([0.02, float("nan")], "finite")])
def test_position_lists_are_checked(small, positions, match):
    for call in (lambda: eigen.critical_mu(small, positions),
                 lambda: eigen.eigenvalue_loci(small, positions, 0.3),
                 lambda: eigen.max_real_part_map(small, positions, [0.3])):
        with pytest.raises(ParameterError, match=match):
            call()


def test_stability_map_checks_its_friction_coefficients(small):
    for mus, match in (([], "mus must be a non-empty"), ([0.1, -0.2], "mu must be finite and >= 0"),
                       ([[0.1]], "mus must be a non-empty 1-D")):
        with pytest.raises(ParameterError, match=match):
            eigen.max_real_part_map(small, [0.03], mus)
    one = eigen.max_real_part_map(small, [0.03], 0.3, 8)  # a single mu is a 1 x n map
    assert one.max_real.shape == (1, 1) and one.mus.tolist() == [0.3]


def test_a_substructure_cutoff_is_recorded_as_the_completeness_limit(small):
    """modal_cutoff_hz is an approximation asked for by name: the loci record it as the frequency
    up to which they are complete (no warning: the Ritz warning is for a basis that drops modes)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loci = eigen.eigenvalue_loci(small, [0.03], 0.3, 8, modal_cutoff_hz=100e3)
    assert loci.complete_up_to_hz == 100e3 and loci.summary().get("notes") is None
    with pytest.warns(eigen.IncompleteSpectrumWarning):
        both = eigen.eigenvalue_loci(small, [0.03], 0.3, 8, modal_cutoff_hz=100e3, n_basis=10)
    assert both.complete_up_to_hz < 100e3 and "Ritz basis" in both.summary()["notes"][0]


def test_n_none_examines_every_oscillating_eigenvalue_and_the_limit_is_named(small):
    """``n`` is the number of lowest-frequency oscillating eigenvalues examined; ``None`` takes all
    of them (against the independent solver's count); asking for more names the maximum."""
    s, mu = 0.05, 0.3
    ref, _ = independent(small, s, mu, n=None)
    every = eigen.complex_eigenvalues(small, s, mu, None)
    assert every.size == ref.size
    # every one, the highest included: the friction-coupled high modes are less well conditioned
    # than the floor estimated on the lowest 20 (measured: 6e-7 of |lambda| at most)
    np.testing.assert_allclose(every, ref, rtol=2e-6)
    with pytest.raises(Exception, match=rf"only {ref.size} oscillating ones there .* use n <= {ref.size}, or "
                                        r"n=None for all of them"):
        eigen.eigenvalue_loci(small, [s], mu, n=ref.size + 10)
    loci = eigen.eigenvalue_loci(small, [0.04, s], mu, n=None)
    assert loci.lam.shape[1] >= ref.size - 2


def test_critical_mu_and_unstable_agree_for_the_same_n(small):
    """The same eigenvalues decide both: with every eigenvalue examined (n=None) the critical mu
    is at most that of the lowest ten, and just above it the loci of the same n show an unstable
    eigenvalue, just below none."""
    pos = np.linspace(0.02, 0.08, 4)
    c_all = eigen.critical_mu(small, pos, n=None, tol=1e-3)
    c_ten = eigen.critical_mu(small, pos, n=10, tol=1e-3)
    assert float(c_all) <= float(c_ten)
    assert c_all.n == 0
    if np.isfinite(c_all):
        lo, hi = c_all.bracket
        assert eigen.eigenvalue_loci(small, pos, hi, n=None).unstable()
        assert not eigen.eigenvalue_loci(small, pos, lo, n=None).unstable()
