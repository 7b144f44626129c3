"""Eigenvalues of the sliding contact as the certified roots of the secular function, against the
dense eig of the primal matrices (an independent path: physical coordinates, pivot null-space
bases, first-order form), extended-precision Newton on the secular function, closed forms (an
uncoupled oscillator, interlacing at mu = 0 without damping) and the other backend.

Tolerance against the dense eig: 1e-8 |lam| + 10 eps w_max^2 / |lam|. The second term is the dense
eig's own accuracy floor (a perturbation of the first-order matrix, of norm ~ w_max^2, moves an
eigenvalue by ~ eps w_max^2 / |lam|; tests/test_contact_eigen.py measures up to 1.7 x that): it
dominates below |lam| ~ sqrt(1e9 eps w_max^2) (1.1e3 1/s on the small model below, 3e3 1/s on
the benchmark), where the extended-precision check shows that the error is the eig's, not the
roots'.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sla
from scipy.optimize import linear_sum_assignment

from fesub import _backend
from fesub.contact.analyses import eigen
from fesub.contact.analyses import secular
from fesub.contact.sliding.system import SlidingContactSystem
from fesub.errors import ParameterError
from fesub.models.beam_on_beam import BeamOnBeamParams, build, contact_system

EPS = np.finfo(float).eps
SMALL = BeamOnBeamParams(nx1=15, nx2=20)  # 84 coupled modes: 168 eigenvalues, ~10 ms per eig


@pytest.fixture(scope="module")
def small():
    return contact_system(build(SMALL, from_files=False))


def dense_all(S, s, mu, sign=1.0, modal_cutoff_hz=None):
    """Every eigenvalue of the primal model by the dense eig, and w_max^2 (rad^2/s^2)."""
    M, C, K, BE, BC, _ = eigen.coupled_matrices(S, s, mu, sign, modal_cutoff_hz=modal_cutoff_hz)
    Mt, Ct, Kt = (eigen.project_rows(X, BE, BC) for X in (M, C, K))
    lam = sla.eigvals(secular.first_order_matrix(Mt, Ct, Kt))
    w2max = sla.eigh(eigen.project_rows(K, BC, BC), eigen.project_rows(M, BC, BC), eigvals_only=True).max()
    return lam, w2max


def matched(a, b):
    """``a`` and ``b`` paired one-to-one (least total distance)."""
    assert a.size == b.size
    r, c = linear_sum_assignment(np.abs(a[:, None] - b[None, :]))
    return a[r], b[c]


def tolerance(lam, w2max):
    return 1e-8 * np.abs(lam) + 10 * EPS * w2max / np.abs(lam)


def ld_newton(f, z, steps=4):
    """Newton on g in extended precision (long double) from ``z``, on the same double data."""
    r, a, b = (np.asarray(x, np.clongdouble) for x in (f.r, f.a, f.b))
    z = np.asarray(z, np.clongdouble)
    for _ in range(steps):
        u, v = z[:, None] - a, z[:, None] - b
        t = r / (u * v)
        z = z - t.sum(1) / (-(t * (1 / u + 1 / v)).sum(1))
    return z


# ----------------------------------------------------------------------------- every eigenvalue
@pytest.mark.parametrize("mu", [0.0, 0.1, 0.2947, 0.7])
def test_every_eigenvalue_equals_the_dense_eig(small, mu):
    """All 2(n - 1) eigenvalues (real ones and both halves of the pairs), matched one-to-one with
    the dense eig's, at positions over every part of the target, warm-started along them; mu = 0,
    small and large friction, and the flutter onset (0.2947, the critical mu at 30 mm, below)."""
    solver = secular.SecularSolver()
    worst = 0.0
    for s in np.linspace(0.003, 0.097, 12):
        lam = solver.all_eigenvalues(small, s, mu)
        ref, w2max = dense_all(small, s, mu)
        a, b = matched(lam, ref)
        err = np.abs(a - b) / tolerance(b, w2max)
        worst = max(worst, err.max())
        assert np.all(err <= 1), (s, b[np.argmax(err)])
    assert solver.counts["eig"] == 0  # every position certified by the roots
    assert worst > 1e-3  # the check measures something (the eig's floor is met within ~10 %)


def test_roots_equal_extended_precision_roots(small):
    """The certified roots equal Newton's in long double on the same modal data within 1e-12
    relative (the certificate accepts 1e-10), each within its certified error bound (plus the
    long double Newton's own round-off, ~1e-16 relative): the 1e-7 departures from the dense eig
    at the lowest frequencies are the eig's."""
    for s, mu in ((0.02, 0.0), (0.05, 0.3), (0.095, 0.7)):
        f = secular.secular_function(small, s, mu)
        z, rad, ok, _ = secular.secular_roots(f)
        assert ok and z.size == f.degree == 2 * small.K1.shape[0] + 2 * small.K2.shape[0] - 2
        zl = ld_newton(f, z)
        err = np.abs(z - zl).astype(float)
        assert np.all(err <= 1e-12 * np.abs(z)), (s, mu, (err / np.abs(z)).max())
        assert np.all(err <= rad + 1e-15 * np.abs(z))
        # the certificate's radii are tight: round-off level, not the tolerance
        assert np.median(rad / np.abs(z)) < 1e-12


def test_frictionless_undamped_roots_interlace_the_poles():
    """mu = 0 without damping (c = e, r_k = c_k^2 > 0): g(j w) = sum r_k / (w_k^2 - w^2) is real
    and increasing in w^2 between poles, so exactly one root lies in each interval (w_k^2,
    w_{k+1}^2) and none elsewhere: bisection on each interval against the roots."""
    rng = np.random.default_rng(3)
    w2 = np.sort(rng.uniform(1.0, 1e6, 40))
    r = rng.uniform(0.1, 2.0, 40)
    f = secular.secular_from_modes(r, w2, np.zeros(40))
    z, rad, ok, _ = secular.secular_roots(f)
    assert ok and z.size == 78
    up = np.sort(z[z.imag > 0].imag ** 2)
    assert up.size == 39 and np.abs(z.real).max() <= 1e-9 * np.abs(z).max()
    ref = []
    for lo, hi in zip(w2[:-1], w2[1:]):
        mid = 0.5 * (lo + hi)
        while lo < mid < hi:  # down to adjacent floats
            g = (r / (w2 - mid)).sum()  # g at s = j sqrt(mid): real, from -inf to +inf
            lo, hi = (lo, mid) if g > 0 else (mid, hi)
            mid = 0.5 * (lo + hi)
        ref.append(mid)
    # bisection ends at adjacent floats; g's round-off near a root moves it by ~1e-14 relative
    np.testing.assert_allclose(up, ref, rtol=1e-12)


@pytest.mark.parametrize("rayleigh", [(0.0, 0.0), (300.0, 1e-6)])
def test_undamped_and_overdamped_models(rayleigh):
    """Without damping (roots on the imaginary axis at mu = 0, the slider's rigid mode a double
    pole at 0; quadruples +- sigma +- j w past the flutter onset) and with heavy damping
    (overdamped modes: real roots, pairs that split on the real axis between positions): every
    eigenvalue equals the dense eig's, and most positions are still solved from the warm start."""
    S = contact_system(build(BeamOnBeamParams(nx1=15, nx2=20, rayleigh1=rayleigh, rayleigh2=rayleigh),
                             from_files=False))
    solver = secular.SecularSolver()
    n_real = 0
    for mu in (0.0, 0.3):
        for s in np.linspace(0.01, 0.09, 6):
            lam = solver.all_eigenvalues(S, s, mu)
            ref, w2max = dense_all(S, s, mu)
            a, b = matched(lam, ref)
            assert np.all(np.abs(a - b) <= tolerance(b, w2max)), (s, mu)
            n_real += np.count_nonzero(lam.imag == 0)
    assert (n_real > 0) == (rayleigh[0] > 0)  # the overdamped case has real eigenvalues
    # most of the 12 positions from the previous roots (the first of each mu starts cold; exact
    # frequency ties of the undamped model send a few more to a cold start: 7 to 9 measured,
    # depending on the factorisation that made the modes), and none needs the dense fallback
    assert solver.counts["warm"] > 12 // 2 and solver.counts["eig"] == 0


def test_solver_and_loci_match_the_eig_with_a_cutoff_and_reversed_sliding(small):
    """``modal_cutoff_hz`` (the truncated modal model) and ``sign = -1`` reach the secular
    function as they reach the dense path."""
    solver = secular.SecularSolver()
    for s in (0.03, 0.06):
        for kw in ({"modal_cutoff_hz": 60e3}, {"sign": -1.0}):
            sign = kw.get("sign", 1.0)
            cut = kw.get("modal_cutoff_hz")
            lam = solver.all_eigenvalues(small, s, 0.4, sign, modal_cutoff_hz=cut)
            ref, w2max = dense_all(small, s, 0.4, sign, cut)
            a, b = matched(lam, ref)
            assert np.all(np.abs(a - b) <= tolerance(b, w2max)), (s, kw)
    lam = solver(small, 0.03, 0.4, 10, modal_cutoff_hz=60e3)
    assert lam[2] == 60e3  # the completeness limit is the cut-off, as on the eig path


# ----------------------------------------------------------------------------- through the onset
def test_flutter_onset_is_found_and_tracked_without_swaps(small):
    """critical_mu by the secular roots equals the eig's bracket; at mu = 0.295, just above it,
    two eigenvalues near 20 kHz merge in frequency and split in real part along 28-32 mm and
    separate again: the tracked loci by the roots equal the eig's column by column (a lost or
    swapped eigenvalue would differ by the ~100 1/s between the two branches)."""
    pos = np.array([0.01, 0.03, 0.05])
    crit_s = eigen.critical_mu(small, pos, mu_max=1.0, n=84, tol=1e-3, method="secular")
    crit_e = eigen.critical_mu(small, pos, mu_max=1.0, n=84, tol=1e-3, method="eig")
    assert crit_s.bracket == crit_e.bracket and 0.29 < float(crit_s) < 0.30
    positions = np.linspace(0.028, 0.032, 41)
    roots = eigen.eigenvalue_loci(small, positions, 0.295, 30, method="secular")
    dense = eigen.eigenvalue_loci(small, positions, 0.295, 30, method="eig")
    _, w2max = dense_all(small, 0.03, 0.295)
    assert np.all(np.abs(roots.lam - dense.lam) <= tolerance(dense.lam, w2max))
    lam = roots.lam
    k = np.argmax(lam.real.max(axis=0))  # the unstable branch and its partner
    j = np.argmin(np.abs(lam[:, k, None] - np.delete(lam, k, 1)).min(axis=0))
    j += j >= k
    gap = np.abs(lam[:, k].imag - lam[:, j].imag)
    split = lam[:, k].real - lam[:, j].real
    merged = gap < 20.0  # rad/s, of 1.26e5: frequencies merged ...
    assert merged[:20].all() and split[:20].min() > 500  # ... with split real parts (1/s)
    assert (~merged[-5:]).all() and np.abs(split[-5:]).max() < 100  # and apart again
    assert roots.lam.real.max() > 0 > dense.lam[-1].real.max()


def test_mu_through_the_coalescence(small):
    """At 30 mm through the onset in mu (0.28 to 0.31, steps 1e-3 around mu_c): every eigenvalue
    equals the dense eig's, the near-double pair included."""
    solver = secular.SecularSolver()
    for mu in np.r_[0.28, np.arange(0.292, 0.298, 1e-3), 0.31]:
        lam = solver.all_eigenvalues(small, 0.03, mu)
        ref, w2max = dense_all(small, 0.03, mu)
        a, b = matched(lam, ref)
        assert np.all(np.abs(a - b) <= tolerance(b, w2max)), mu


# ----------------------------------------------------------------------------- deflation
class _Uncoupled:
    """Slider: C (x and y, mass 1) and an oscillator z never in contact (stiffness 6.25, damping
    0.1); target: a segment from (0, 0) to (1, 0) whose nodes move vertically on springs 1 and 9.
    The z mode keeps its own eigenvalues -0.05 +- j sqrt(6.25 - 0.0025) (deflated: r = 0)."""

    _global_rows = SlidingContactSystem._global_rows

    def __init__(self):
        self.XT = np.array([[0.0, 0.0], [1.0, 0.0]])
        self.segs = np.array([[0, 1]])
        self.T_rows = np.array([[-1, 0], [-1, 1]])
        self.iC = np.array([0, 1])
        self.M1, self.K1, self.C1 = np.eye(3), np.diag([0.25, 0.0, 6.25]), np.diag([0.0, 0.0, 0.1])
        self.M2, self.K2, self.C2 = np.eye(2), np.diag([1.0, 9.0]), np.zeros((2, 2))


def test_an_uncoupled_mode_is_deflated_and_keeps_its_eigenvalues():
    """The z mode (r = 0: c = e = 0) and the x mode of C (+- 0.5 j; r = c e = 0: the horizontal
    segment's normal has no x component, c = 0, although friction pushes it, e != 0 at mu > 0: a
    one-way coupling that leaves its eigenvalues) keep their own eigenvalues; the others equal the
    dense eig."""
    toy = _Uncoupled()
    z_mode = -0.05 + 1j * np.sqrt(6.25 - 0.05 ** 2)
    own = np.sort_complex([-0.5j, np.conj(z_mode), 0.5j, z_mode])
    for alpha, mu in ((0.3, 0.0), (0.7, 0.5)):
        f = secular.secular_function(toy, alpha, mu)
        np.testing.assert_allclose(np.sort_complex(f.deflated), own, rtol=1e-15, atol=0)
        assert f.degree == 4  # C_y (free) and the two target springs: 3 coupled modes, 4 roots
        lam = secular.SecularSolver().all_eigenvalues(toy, alpha, mu)
        ref, _ = dense_all(toy, alpha, mu)
        a, b = matched(lam, ref)
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-13)  # 4 x 4 primal model, eigenvalues ~1
    loci = eigen.eigenvalue_loci(toy, np.linspace(0.05, 0.95, 10), 0.2, 3)
    dense = eigen.eigenvalue_loci(toy, np.linspace(0.05, 0.95, 10), 0.2, 3, method="eig")
    np.testing.assert_allclose(loci.lam, dense.lam, rtol=0, atol=1e-13)


def test_a_round_off_coupling_is_deflated_a_small_one_is_not():
    """A residue that moves its poles by less than round-off is deflated (the pole is the
    eigenvalue to the last bit); one that moves them by 1e-9 stays and its root is found."""
    w2, d = np.array([1.0, 4.0, 9.0]), np.full(3, 0.01)
    for rk, deflated in ((1e-22, True), (1e-9, False)):
        f = secular.secular_from_modes(np.array([1.0, rk, 1.0]), w2, d)
        assert (f.deflated.size == 2) == deflated
        lam = np.r_[secular.secular_roots(f)[0], f.deflated]
        # the dual form's eigenvalues by a dense eig of the 3-mode primal model (rows c = e)
        c = np.sqrt(np.array([1.0, rk, 1.0]))
        A = secular.first_order_matrix(*(eigen.project_rows(X, c, c) for X in (np.eye(3), np.diag(d), np.diag(w2))))
        a, b = matched(lam, np.linalg.eigvals(A))
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-13)


# ----------------------------------------------------------------------------- fallback, options
def test_the_dense_fallback_when_the_certificate_fails(small):
    """A tolerance no root can meet: every position goes to the dense eig (counted), same values."""
    solver = secular.SecularSolver(rtol=1e-300, max_iter=5)
    for s in (0.02, 0.04):
        lam = solver.all_eigenvalues(small, s, 0.3)
        ref, w2max = dense_all(small, s, 0.3)
        a, b = matched(lam, ref)
        assert np.all(np.abs(a - b) <= tolerance(b, w2max))
    assert solver.counts == {"warm": 0, "cold": 0, "eig": 2}


def test_method_option(small):
    pos = [0.02, 0.03]
    with pytest.raises(ParameterError, match="method"):
        eigen.eigenvalue_loci(small, pos, 0.3, 5, method="qr")
    with pytest.raises(ParameterError, match="n_basis"):
        eigen.eigenvalue_loci(small, pos, 0.3, 5, method="secular", n_basis=20)
    with pytest.raises(ParameterError, match="undeformed"):
        eigen.eigenvalue_loci(small, pos, 0.3, 5, method="secular", geometry="deformed")
    with pytest.raises(ParameterError, match="rtol"):
        secular.SecularSolver(rtol=0.0)
    # auto: the roots for the whole model (bitwise equal to method='secular'), eig with a basis
    np.testing.assert_array_equal(eigen.eigenvalue_loci(small, pos, 0.3, 5).lam,
                                  eigen.eigenvalue_loci(small, pos, 0.3, 5, method="secular").lam)
    with pytest.warns(eigen.IncompleteSpectrumWarning):
        np.testing.assert_array_equal(eigen.eigenvalue_loci(small, pos, 0.3, 5, n_basis=20).lam,
                                      eigen.eigenvalue_loci(small, pos, 0.3, 5, n_basis=20, method="eig").lam)
    smap = eigen.max_real_part_map(small, pos, [0.3], 5, method="eig")
    np.testing.assert_allclose(smap.max_real[0], eigen.max_real_part_map(small, pos, [0.3], 5).max_real[0],
                               rtol=1e-8)


# ----------------------------------------------------------------------------- the kernel
@pytest.mark.skipif(not _backend.compiled_available("aberth"), reason="compiled kernel not built")
def test_compiled_kernel_equals_its_twin(small):
    from fesub._core import aberth_ref

    comp = _backend.kernels("aberth")
    f = secular.secular_function(small, 0.04, 0.3)
    z = f.start()
    active = np.arange(0, z.size, 3, dtype=np.int64)
    s1, s2 = np.zeros(z.size, complex), np.zeros(z.size, complex)
    assert comp.aberth_steps(z, active, f.r, f.a, f.b, s1) == aberth_ref.aberth_steps(z, active, f.r, f.a, f.b, s2)
    # sums of ~250 terms in another order: round-off ~1e-13 of the largest step
    np.testing.assert_allclose(s1, s2, rtol=1e-11, atol=1e-13 * np.abs(s2).max())
    # radii away from the roots (g well defined): products of ~170 factors, in another order and
    # another form (running product vs sums of logarithms), ~1e-13 relative
    r1, r2 = np.full(z.size, -1.0), np.full(z.size, -1.0)
    comp.inclusion_radii(z, active, f.r, f.a, f.b, f.lead, r1)
    aberth_ref.inclusion_radii(z, active, f.r, f.a, f.b, f.lead, r2)
    np.testing.assert_allclose(r1, r2, rtol=1e-10)
    assert (r1[active] > 0).all() and (np.delete(r1, active) == -1).all()  # only the rows asked for
    # at the roots g is round-off: both radii at that level and both verdicts 'disjoint'
    zc, _, ok, _ = secular.secular_roots(f)
    every = np.arange(zc.size, dtype=np.int64)
    comp.inclusion_radii(zc, every, f.r, f.a, f.b, f.lead, r1)
    aberth_ref.inclusion_radii(zc, every, f.r, f.a, f.b, f.lead, r2)
    assert ok and comp.disjoint(zc, r1) and aberth_ref.disjoint(zc, r2)
    assert max((r1 / np.abs(zc)).max(), (r2 / np.abs(zc)).max()) < 1e-10
    # overlapping disks: two roots closer than their radii
    near = zc.copy()
    near[1] = near[0] + 0.5 * r1[0] + 0.5 * r1[1]
    assert not comp.disjoint(near, r1) and not aberth_ref.disjoint(near, r1)


def test_both_backends_give_the_loci_of_the_eig(small, backend):
    """The loci by the roots, with the compiled kernel and with its NumPy twin, equal the eig's."""
    pos = np.linspace(0.02, 0.05, 4)
    ref = eigen.eigenvalue_loci(small, pos, 0.3, 10, method="eig")
    _, w2max = dense_all(small, 0.03, 0.3)
    got = eigen.eigenvalue_loci(small, pos, 0.3, 10, method="secular")
    assert np.all(np.abs(got.lam - ref.lam) <= tolerance(ref.lam, w2max))
