"""Cantilever frequencies against the Euler-Bernoulli closed form.

The reference is independent of the FE code: the roots beta_n L of the clamped-free frequency
equation cos(bL) cosh(bL) = -1, found here with a bracketing root finder, and
f_n = (beta_n L)^2 / (2 pi L^2) sqrt(E I / (rho A)).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import brentq

from fesub.fe import BeamSection, PlaneStress, beam_line, mesh_matrices, modes, rectangle
from fesub.fe.assembly import free_dofs

E, NU, RHO = 210e9, 0.3, 7800.0


def beta_l(n: int) -> np.ndarray:
    """First n roots of cos(x) cosh(x) + 1 = 0 (clamped-free beam)."""
    # equivalent form cos(x) + 1/cosh(x) = 0, well scaled for large x; root k lies within 1/2
    # of (k - 1/2) pi, where cos changes sign by +-sin(1/2) = 0.48 > 1/cosh(x) (x >= 1.07)
    g = lambda x: np.cos(x) + 1.0 / np.cosh(x)  # noqa: E731
    return np.array([brentq(g, (k - 0.5) * np.pi - 0.5, (k - 0.5) * np.pi + 0.5, xtol=1e-15,
                            rtol=1e-15) for k in range(1, n + 1)])


def test_beta_l_roots_match_tabulated_values():
    # the tabulated values quoted in the literature, to the digits given there
    # tabulated to 4 decimals: rounding error <= 5e-5
    np.testing.assert_allclose(beta_l(4), [1.8751, 4.6941, 7.8548, 10.9955], atol=6e-5)
    # residual of the frequency equation at full precision
    b = beta_l(4)
    assert np.all(np.abs(np.cos(b) * np.cosh(b) + 1.0) < 1e-9)  # cosh(11) ~ 3e4 amplifies ulps of b


def analytic_bending_hz(n, L, EI, rhoA):
    return beta_l(n) ** 2 / (2 * np.pi * L**2) * np.sqrt(EI / rhoA)


def _clamped_modes(mesh, material, clamp_set, n, **kw):
    K, M, dm = mesh_matrices(mesh, material, **kw)
    fr = free_dofs(dm.n_dofs, dm.dofs(mesh.nodes(clamp_set)))
    f, phi = modes(K[fr][:, fr], M[fr][:, fr], n)
    full = np.zeros((dm.n_dofs, n))
    full[fr] = phi
    return f, full, M, dm


def _bending_mask(phi, M, dm, axis=(np.cos(0.0), np.sin(0.0))):
    """True for modes whose kinetic energy is mostly transverse to the beam axis ``axis``."""
    ca, sa = axis
    n_nodes = dm.n_nodes
    ux = phi.reshape(n_nodes, dm.ndpn, -1)[:, 0]
    uy = phi.reshape(n_nodes, dm.ndpn, -1)[:, 1]
    # axial displacement pattern of each mode, re-expanded to DOFs
    axial = np.zeros_like(phi)
    a = ca * ux + sa * uy
    axial.reshape(n_nodes, dm.ndpn, -1)[:, 0] = ca * a
    axial.reshape(n_nodes, dm.ndpn, -1)[:, 1] = sa * a
    e_ax = np.einsum("ij,ij->j", axial, M @ axial)
    e_tot = np.einsum("ij,ij->j", phi, M @ phi)
    return e_ax < 0.5 * e_tot


@pytest.mark.parametrize("angle", [0.0, 0.7])
def test_euler_bernoulli_cantilever_20_elements(angle):
    L, b, h = 1.0, 0.02, 0.1  # stocky enough that the first axial mode lies among the bending ones
    sec = BeamSection.rectangle(E, RHO, b, h)
    end = (L * np.cos(angle), L * np.sin(angle))
    mesh = beam_line((0.0, 0.0), end, 20)
    f, phi, M, dm = _clamped_modes(mesh, sec, "start", 8)
    bend = _bending_mask(phi, M, dm, axis=(np.cos(angle), np.sin(angle)))
    f_axial_ref = np.sqrt(E / RHO) / (4 * L)  # first axial mode of a clamped-free bar
    # the axial mode interleaves with the bending ones: it must be found and recognised
    assert (~bend).sum() >= 1
    # linear axial elements, consistent mass, 20 elements: error ~ (pi/40)^2 / 24 = 2.6e-4
    np.testing.assert_allclose(f[~bend][0], f_axial_ref, rtol=2e-3)
    fb = f[bend][:4]
    ref = analytic_bending_hz(4, L, sec.E * sec.inertia, sec.rho * sec.area)
    print("Euler-Bernoulli cantilever, 20 elements, rel. error:", fb / ref - 1)
    # Hermite cubics with consistent mass converge like h^4 in frequency: at 20 elements the
    # 4th mode error is ~1e-4, so 0.1 % (the target accuracy) is met with margin.
    np.testing.assert_allclose(fb, ref, rtol=1e-3)
    assert np.all(fb >= ref * (1 - 1e-9))  # consistent mass + conforming elements: upper bounds


def test_frame_lumped_mass_converges_from_below():
    L, b, h = 1.0, 0.02, 0.01
    sec = BeamSection.rectangle(E, RHO, b, h)
    ref = analytic_bending_hz(3, L, sec.E * sec.inertia, sec.rho * sec.area)
    errs = []
    for n in (10, 20, 40):
        f, phi, M, dm = _clamped_modes(beam_line((0, 0), (L, 0), n), sec, "start", 6, lumped=True)
        fb = f[_bending_mask(phi, M, dm)][:3]
        errs.append(np.abs(fb / ref - 1))
    errs = np.array(errs)
    # lumped mass converges like h^2: halving h must cut the error by about 4 (allow > 3)
    assert np.all(errs[:-1] / errs[1:] > 3.0)
    # and the error itself is small: at 40 elements about a quarter of the 20-element one (~0.9 %)
    assert errs[-1].max() < 3e-3


def _plane_cantilever(nx, ny, incompatible, n=6):
    L, h, t = 3.0, 0.1, 0.02  # L/h = 30
    mat = PlaneStress(E, NU, RHO, t)
    mesh = rectangle(L, h, nx, ny)
    f, phi, M, dm = _clamped_modes(mesh, mat, "left", n, incompatible=incompatible)
    fb = f[_bending_mask(phi, M, dm)][:3]
    ref = analytic_bending_hz(3, L, E * t * h**3 / 12, RHO * t * h)
    return fb / ref - 1


def test_plane_stress_cantilever_incompatible_q4():
    err = _plane_cantilever(100, 2, True)
    print("Q4 incompatible, 100 x 2, rel. error vs Euler-Bernoulli:", err)
    # The plane-stress model includes shear deformation and rotary inertia, which lower the
    # frequencies below Euler-Bernoulli by ~ (n pi h / L)^2 / 10 ~ 0.3-1.2 % for modes 1-3 at
    # L/h = 30; 2 % bounds that plus the discretisation error.
    assert np.all(np.abs(err) < 0.02)


def test_plain_q4_locks_in_bending():
    err_plain = _plane_cantilever(100, 2, False)
    err_inc = _plane_cantilever(100, 2, True)
    print("plain Q4, 100 x 2 (element aspect 0.6), rel. error vs Euler-Bernoulli:", err_plain)
    # On this mesh the elements are shorter than they are tall (0.03 m x 0.05 m), so shear
    # locking of plain Q4 is mild: 1.7-2.9 % above Euler-Bernoulli, and more than 2 % above the
    # (nearly converged) incompatible-mode answer for each mode.
    assert np.all(err_plain > 0.0)
    assert np.all(err_plain > err_inc + 0.02)
    # Elongated elements (30 x 2: 0.1 m x 0.05 m) show the locking in full: plain Q4 is more than
    # 10 % too stiff while the incompatible modes stay within 1 %.
    err_plain_c = _plane_cantilever(30, 2, False)
    err_inc_c = _plane_cantilever(30, 2, True)
    print("plain Q4, 30 x 2 (element aspect 2), rel. error:", err_plain_c, "incompatible:", err_inc_c)
    assert np.all(err_plain_c > 0.10)
    assert np.all(np.abs(err_inc_c) < 0.01)


def test_mesh_convergence_to_a_common_limit():
    """Q4-incompatible, plain Q4 and T3 meshes of the same plane-stress cantilever (L/h = 10)
    converge, under uniform refinement, to one continuum limit (Richardson extrapolation); this
    needs no beam theory, so it also covers the shear/rotary-inertia effects of the 2D model."""
    mat = PlaneStress(E, NU, RHO, 0.02)
    limits, fine = {}, {}
    for name, element, inc in (("Q4i", "quad", True), ("Q4", "quad", False), ("T3", "triangle", False)):
        fs = []
        for nx, ny in ((20, 2), (40, 4), (80, 8), (160, 16)):
            f, _, _, _ = _clamped_modes(rectangle(1.0, 0.1, nx, ny, element=element), mat, "left", 2,
                                        incompatible=inc)
            fs.append(f)
        fs = np.array(fs)
        d1, d2 = fs[2] - fs[1], fs[3] - fs[2]
        # monotone convergence from above: guaranteed for the conforming Q4 and T3 (Ritz), observed
        # for the non-conforming Q4i on this mesh sequence
        assert np.all(d1 < 0) and np.all(d2 < 0)
        order = np.log2(d1 / d2)
        if name != "Q4i":
            # displacement elements: frequency error ~ h^2 (the clamped corners' stress singularity
            # costs a little: observed 1.9)
            assert np.all((order > 1.6) & (order < 2.4)), order
        limits[name] = fs[3] + d2 / (2.0**order - 1)
        fine[name] = fs[3]
    ref = np.mean([limits[k] for k in limits], axis=0)
    print("Richardson limits (Hz):", limits)
    for name, lim in limits.items():
        # three different element families, extrapolated: agree to ~3e-4; 1e-3 is the bound
        np.testing.assert_allclose(lim, ref, rtol=1e-3)
    # the incompatible-mode Q4 is the most accurate: 160 x 16 already within 0.05 % of the limit
    np.testing.assert_allclose(fine["Q4i"], ref, rtol=5e-4)
