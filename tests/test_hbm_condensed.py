"""Harmonic balance condensed exactly onto the contact, load and monitor DOFs
(:mod:`fesub.hbm.condense`): the operator against an explicit Schur complement of the full
dynamic stiffness, its frequency derivatives against finite differences, one-frequency solutions
against the full harmonic balance, and the beam's backbone (Nh = 3) and its Hill stability
against those of the full system."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from fesub.errors import ModelError, ParameterError
from fesub.hbm.backbone import backbone
from fesub.hbm.condense import CondensedSystem, retained_dofs, worth_condensing
from fesub.hbm.forced import solve_at
from fesub.hbm.newton import abs_dynamic_stiffness
from fesub.hbm.optimality import backbone_point
from fesub.hbm.stability import backbone_stability
from fesub.models import cantilever_contact as cc

TWO_PI = 2 * math.pi
WS = TWO_PI * 915.2          # stuck-linear resonance of the beam (rad/s)


@pytest.fixture(scope="module")
def beam():
    sy = cc.build(nh=3)
    return sy, CondensedSystem(sy)


def _rows(sy, dofs):
    """Global rows (harmonic-major) of the given DOFs, every harmonic."""
    return (np.arange(sy.m)[:, None] * sy.n + np.asarray(dofs)[None, :]).ravel()


def _explicit_schur(sy, keep, w, d=0):
    """Schur complement of the full real ``D(w)`` (or, d = 1, the derivative of the complement
    written out from the full ``D`` and ``D'``), by dense solves: independent of the complex
    modal and factorised routes."""
    D = sy.D(w)
    r = _rows(sy, keep)
    i = np.setdiff1d(np.arange(sy.N), r)
    X = np.linalg.solve(D[np.ix_(i, i)], D[np.ix_(i, r)])
    if d == 0:
        return D[np.ix_(r, r)] - D[np.ix_(r, i)] @ X
    D1 = sy.D(w, 1)
    Xt = np.linalg.solve(D[np.ix_(i, i)].T, D[np.ix_(r, i)].T).T
    return (D1[np.ix_(r, r)] - D1[np.ix_(r, i)] @ X - Xt @ D1[np.ix_(i, r)]
            + Xt @ D1[np.ix_(i, i)] @ X)


def test_retained_dofs_and_choice(beam):
    sy, red = beam
    # force and monitor at node 10 (DOF 18), contact at the tip (DOF 38)
    np.testing.assert_array_equal(retained_dofs(sy), [18, 38])
    assert red.n == 2 and red.N == 12 and red.dof == 0 and red.modal
    assert worth_condensing(sy) and not worth_condensing(red)
    with pytest.raises(ModelError):
        CondensedSystem(red)
    with pytest.raises(ModelError):
        red.linear_matrices()
    with pytest.raises(ModelError):
        red.D_xi(WS)
    with pytest.raises(ParameterError):
        CondensedSystem(sy, method="spectral")


@pytest.fixture(scope="module")
def routes(beam):
    sy, red = beam
    return {True: red, False: CondensedSystem(sy, method="factor")}


@pytest.mark.parametrize("f_hz", [150.0, 209.0, 600.0, 915.2, 2500.0])
@pytest.mark.parametrize("modal", [True, False])
def test_operator_is_the_schur_complement(beam, routes, f_hz, modal):
    sy, _ = beam
    red = routes[modal]
    assert red.modal == modal
    w = TWO_PI * f_hz
    for d in (0, 1):
        ref = _explicit_schur(sy, red.keep, w, d)
        err = np.abs(red.D(w, d) - ref).max() / np.abs(ref).max()
        # the complement cancels up to 4 orders of magnitude of the retained stiffness
        # (|S| ~ 1e5-1e6 N/m against K_rr ~ 4e9 N/m at 915 Hz); the factorised route
        # repeats the dense solve's rounding (measured <= 1e-11), the modal one carries
        # the eigen-solver's absolute error on the low modes, eps ||K|| (measured 6e-10)
        assert err <= (2e-9 if modal else 1e-10), (d, err)


@pytest.mark.parametrize("modal", [True, False])
def test_frequency_derivatives_vs_finite_differences(routes, modal):
    red = routes[modal]
    for f_hz in (209.0, 900.0, 1800.0):
        w = TWO_PI * f_hz
        h = 1e-5 * w
        for d in (1, 2):
            def cd(h):
                return (red.D(w + h, d - 1) - red.D(w - h, d - 1)) / (2 * h)

            fd = (4 * cd(h / 2) - cd(h)) / 3      # Richardson: truncation O(h^4)
            an = red.D(w, d)
            if modal and d == 2 and f_hz == 209.0:
                # 0.05 % from a zero of S (the free-beam resonance, a pole of the modal
                # receptance H) the modal S'' = -S H'' S + 2 S H' S H' S cancels: measured
                # 2e-6 of |S''|. D'' enters only the Jacobian of the optimality system (the
                # Newton rate), never a residual, so the solutions keep their accuracy
                assert np.abs(fd - an).max() <= 1e-5 * np.abs(an).max()
                continue
            # near the free resonance the condensed stiffness varies on ~1 % of w, so a plain
            # central difference (h = 1e-5 w) is off by 2e-6: extrapolated, the truncation
            # is ~1e-12 and the rounding of D (~1e-12 of |D|, see the test above) divided by
            # h leaves up to 3e-7 of |D'| (measured, factorised route at 209 Hz; <= 3e-8
            # elsewhere)
            assert np.abs(fd - an).max() <= 1e-6 * np.abs(an).max(), (f_hz, d)


def test_constant_term_block_is_the_static_condensation():
    from fesub.hbm import UnilateralContact
    from fesub.hbm.system import ContactElement, HBSystem

    sy0 = cc.build(nh=2)
    G = np.zeros((1, sy0.n))
    G[0, 38] = 1.0
    sy = HBSystem(sy0.M, sy0.C, sy0.K, 2, [ContactElement(UnilateralContact(1e7, 1e-6), G)],
                  fex=18, dof=18, constant=True, fstatic=np.eye(sy0.n)[38] * -5.0)
    red = CondensedSystem(sy)
    w = TWO_PI * 700.0
    ref = _explicit_schur(sy, red.keep, w)
    assert np.abs(red.D(w) - ref).max() <= 1e-9 * np.abs(ref).max()
    # the static block: exact stiffness seen by the retained DOFs
    assert np.abs(red.D(w)[:2, :2] - ref[:2, :2]).max() <= 1e-12 * np.abs(ref[:2, :2]).max()


@pytest.mark.parametrize("constant", [False, True])
@pytest.mark.parametrize("f_hz", [209.0, 915.0, 3000.0])
def test_expansion_solves_the_eliminated_rows(constant, f_hz):
    """``expand`` (``expand_multipliers``) fills the eliminated DOFs so that the rows of the
    full real ``D(w)`` (``D(w)^T``) there vanish and the retained ones are kept: checked on the
    full real matrices, independent of the complex per-harmonic solves, with the mean block
    (constant term) too, near the free and the stuck resonances and above them."""
    from fesub.hbm import UnilateralContact
    from fesub.hbm.system import ContactElement, HBSystem

    sy0 = cc.build(nh=3)
    if constant:
        G = np.zeros((1, sy0.n))
        G[0, 38] = 1.0
        sy = HBSystem(sy0.M, sy0.C, sy0.K, 3, [ContactElement(UnilateralContact(1e7, 1e-6), G)],
                      fex=18, dof=18, constant=True, fstatic=np.eye(sy0.n)[38] * -5.0)
    else:
        sy = sy0
    red = CondensedSystem(sy)
    w = TWO_PI * f_hz
    D = sy.D(w)
    r = _rows(sy, red.keep)
    i = np.setdiff1d(np.arange(sy.N), r)
    rng = np.random.default_rng(7)
    for M, fun in ((D, red.expand), (D.T, red.expand_multipliers)):
        vr = rng.standard_normal(red.N)
        v = fun(vr, w)
        assert np.array_equal(v[r], vr)
        # the eliminated rows of M v against their rounding scale |M| |v|: a backward-stable
        # solve leaves a few eps of it (measured <= 1e-16; the transposed solve instead of the
        # adjoint one leaves 6e-5)
        scale = np.max(np.abs(M[i]) @ np.abs(v))
        assert np.abs(M[i] @ v).max() <= 1e-13 * scale


@pytest.mark.parametrize("f_hz, alpha", [(915.0, 3.0), (880.0, 20.0), (400.0, 60.0)])
def test_solutions_equal_the_full_harmonic_balance(beam, f_hz, alpha):
    sy, red = beam
    w = TWO_PI * f_hz
    Q = solve_at(sy, w, alpha)
    Qc = red.expand(solve_at(red, w, alpha), w)
    # two Newton solves of the same equations, each to ~1e-13 of its rounding scale; the
    # modal condensed operator carries ~6e-10 of |S| near the stuck resonance (see the
    # operator test), amplified by the conditioning of R_Q there: measured 2.6e-9 at 915 Hz
    # (the factorised operator: 3e-12)
    assert np.abs(Q - Qc).max() <= 1e-8 * np.abs(Q).max()
    # the full residual of the expanded solution: ~6e-10 of |S Q_r| (~10 N) on the retained
    # rows, against a rounding scale |D| |Q| of ~4e4 N (measured 2e-13 of it)
    scale = np.max(abs_dynamic_stiffness(sy, w) @ np.abs(Qc))
    assert np.abs(sy.residual(Qc, w, alpha)).max() <= 1e-12 * scale


@pytest.fixture(scope="module")
def backbones(beam):
    """The beam's local backbone over [0.1, 3] N (stuck, the slip onset near 1 N, slipping),
    traced on the full system and on the condensed one, with the Hill stability."""
    sy, _ = beam
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for c in (False, True):
            out[c] = backbone(sy, (0.1, 3.0), (0.95 * WS, 1.05 * WS), condensed=c,
                              stability=True)
    return out


@pytest.fixture(scope="module")
def cond_at_full(beam, backbones):
    """The condensed ridge at the forces of the full trace: Newton on the condensed
    optimality system from the nearest condensed point, expanded to every DOF: (w, Am, Q,
    lam) per full point."""
    sy, red = beam
    full, cond = backbones[False], backbones[True]
    r = _rows(sy, red.keep)
    out = []
    for a in full.alpha:
        j = int(np.argmin(np.abs(np.log(cond.alpha / a))))
        w_c, Q_c, l_c, _ = backbone_point(red, a, cond.w[j], cond.Q[j][r], cond.lam[j][r])
        out.append((w_c, red.amplitude(Q_c), red.expand(Q_c, w_c),
                    red.expand_multipliers(l_c, w_c)))
    return out


def test_condensed_backbone_equals_the_full_one(beam, backbones, cond_at_full):
    sy, red = beam
    full, cond = backbones[False], backbones[True]
    assert full.stop_reason == cond.stop_reason == "lam_range"
    assert cond.Q.shape[1] == sy.N and cond.lam.shape[1] == sy.N   # same structure
    assert len(full.singular_points) == len(cond.singular_points)
    assert cond.singular_points[0]["alpha"] == pytest.approx(
        full.singular_points[0]["alpha"], rel=2e-3)   # located within a few minimum steps
    err_w = max(abs(c[0] - w) / w for c, w in zip(cond_at_full, full.w))
    err_a = max(abs(c[1] - am) / am for c, am in zip(cond_at_full, full.Am))
    err_q = max(np.abs(c[2] - Q).max() / np.abs(Q).max() for c, Q in zip(cond_at_full, full.Q))
    err_l = max(np.abs(c[3] - lam).max() / np.abs(lam).max()
                for c, lam in zip(cond_at_full, full.lam))
    # the two routes differ by the modal operator's ~6e-10 of |S| (operator test above)
    # amplified by the conditioning near the resonance (2.6e-9 in the one-frequency
    # solutions) and by the optimality tolerance 1e-8 of the scaled residual: measured
    # 2.7e-10 on the frequency, 3.6e-9 on the amplitude
    assert err_w <= 1e-8, err_w
    assert err_a <= 1e-8, err_a
    # harmonics and multipliers: measured 3.6e-9 and 7.7e-9 of their largest entries
    assert err_q <= 1e-6 and err_l <= 1e-6, (err_q, err_l)


def test_condensed_points_solve_the_full_optimality_system(beam, backbones):
    sy, _ = beam
    cond = backbones[True]
    for i in range(0, len(cond.alpha), max(1, len(cond.alpha) // 8)):
        w, Q, lam, its = backbone_point(sy, cond.alpha[i], cond.w[i], cond.Q[i], cond.lam[i])
        # the expanded point already solves the full optimality system to its tolerance 1e-8
        # (measured: Newton takes no step)
        assert abs(w - cond.w[i]) <= 1e-8 * w
        assert abs(sy.amplitude(Q) - cond.Am[i]) <= 1e-8 * cond.Am[i]
        assert cond.eta_alpha[i] == pytest.approx(lam @ sy.fex, rel=1e-6)


def test_condensed_backbone_stability_equals_the_full_one(beam, backbones, cond_at_full):
    from types import SimpleNamespace

    sy, _ = beam
    full, cond = backbones[False], backbones[True]
    st_c = cond.stability
    assert st_c is not None and len(st_c.w) == len(cond.alpha)
    # the condensed backbone's stability is that of the full system at its points
    ref = backbone_stability(sy, cond)
    np.testing.assert_array_equal(st_c.stable, ref.stable)
    np.testing.assert_allclose(st_c.multipliers, ref.multipliers, rtol=0, atol=1e-12)
    # and equals the full backbone's at the same forces: Hill's method at the condensed
    # ridge points solved at the full trace's forces
    at = SimpleNamespace(alpha=full.alpha, w=np.array([c[0] for c in cond_at_full]),
                         Am=np.array([c[1] for c in cond_at_full]),
                         Q=np.array([c[2] for c in cond_at_full]))
    st_at = backbone_stability(sy, at)
    np.testing.assert_array_equal(st_at.stable, full.stability.stable)
    assert ([b["kind"] for b in st_c.bifurcations]
            == [b["kind"] for b in full.stability.bifurcations])
    # the two largest multiplier moduli (the lightly damped mode that decides stability)
    # move with the solution (~4e-9 apart, above): measured 6e-9. (Among the strongly
    # damped high modes, moduli < 0.1, the choice of the physical exponents by Hill's
    # sorting can differ between two solutions 1e-8 apart: not compared. Where the lightly
    # damped mode gives one real multiplier, the second largest is such a modulus: at one
    # point of this backbone 0.085 against 0.028, with the largest equal.)
    rho_c = np.sort(np.abs(st_at.multipliers), axis=1)[:, -2:]
    rho_f = np.sort(np.abs(full.stability.multipliers), axis=1)[:, -2:]
    light = (rho_c >= 0.1) & (rho_f >= 0.1)
    assert light[:, -1].all()  # the largest always among them
    assert np.abs(rho_c - rho_f)[light].max() <= 1e-6
