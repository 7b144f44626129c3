"""Stability of the deformed sliding state: the nonlinear contact terms against central differences,
the sliding state against the fixed-point static solve, the eigenvalues against the undeformed
analysis where they must coincide, and against the growth of a small perturbation in the nonlinear
transient where they must not.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sla

from fesub.contact.analyses import deformed as D
from fesub.contact.analyses import eigen
from fesub.contact.analyses.perturb import matrix_pencil, perturbation_response, translated
from fesub.errors import ParameterError
from fesub.models.beam_on_beam import BeamOnBeamParams, build, contact_system

MU = 0.3
#: inside the band (93.4-93.8 mm) where the deformed analysis finds the 10.6 kHz pair unstable and
#: the undeformed one does not; mid-segment (alpha = 0.57), away from the kink of the rows at a node
S_BAND = 0.0936
EPS = np.finfo(float).eps


@pytest.fixture(scope="module")
def bench():
    """The benchmark's contact system (full reduced model, 245 coupled DOFs)."""
    return contact_system(build())


@pytest.fixture(scope="module")
def small():
    return contact_system(build(BeamOnBeamParams(nx1=15, nx2=20), from_files=False))


# ------------------------------------------------------------------------------- derivatives
# Central-difference step: the rows vary on the scale of the segment length l (1 mm on the
# benchmark), so the truncation error is ~(dx/l)^2; round-off in the rows is ~eps * |x| / l with
# coordinates |x| ~ 0.1 m, giving an error ~eps * |x| / dx relative to the derivative. dx = 1e-7 m
# balances them near 1e-8 (truncation 1e-8, round-off 2e-10): two orders below the 1e-6 asked.
DX = 1e-7
FD_TOL = 1e-6


def test_local_rows_derivatives_match_central_differences():
    rng = np.random.default_rng(1)
    for _ in range(20):
        T1 = rng.uniform(0, 0.1, 2)
        T2 = T1 + 1e-3 * np.array([np.cos(a := rng.uniform(-0.3, 0.3)), np.sin(a)])
        P = T1 + rng.uniform(0.1, 0.9) * (T2 - T1) + rng.normal(0, 1e-5, 2)  # off the line: gap != 0
        x = np.r_[T1, T2, P]
        for mu, sign in ((0.3, 1.0), (0.5, -1.0)):
            _, _, bE, dbE, g, dg = D.local_contact(x, mu, sign)
            fd_b, fd_g = np.zeros((6, 6)), np.zeros(6)
            for j in range(6):
                e = np.zeros(6)
                e[j] = DX
                bp, gp = D.local_contact(x + e, mu, sign)[2:5:2]
                bm, gm = D.local_contact(x - e, mu, sign)[2:5:2]
                fd_b[:, j], fd_g[j] = (bp - bm) / (2 * DX), (gp - gm) / (2 * DX)
            assert np.abs(fd_b - dbE).max() <= FD_TOL * np.abs(dbE).max()
            assert np.abs(fd_g - dg).max() <= FD_TOL * np.abs(dg).max()


def test_global_jacobian_matches_central_differences(bench):
    """K_g = lambda dB_E'/du and grad g over every coordinate of the benchmark, at the sliding
    state and at a configuration off it (gap != 0, other contact point)."""
    st = D.sliding_state(bench, S_BAND, MU, vx=0.03)
    rng = np.random.default_rng(0)
    worst = 0.0
    for u in (st.u, st.u + rng.normal(0, 2e-6, st.u.size)):
        Kg, BE, G = D.contact_jacobian(bench, u, st.lam, st.seg, MU, 1.0, st.shift)
        fK, fG = np.zeros_like(Kg), np.zeros_like(G)
        for j in range(u.size):
            e = np.zeros(u.size)
            e[j] = DX
            Fp, gp = D.contact_residual(bench, u + e, st.lam, st.seg, MU, 1.0, st.shift)
            Fm, gm = D.contact_residual(bench, u - e, st.lam, st.seg, MU, 1.0, st.shift)
            fK[:, j], fG[j] = (Fp - Fm) / (2 * DX), (gp - gm) / (2 * DX)
        # the force is linear in lambda: its derivative is B_E exactly
        F1 = D.contact_residual(bench, u, 1.0, st.seg, MU, 1.0, st.shift)[0]
        assert np.array_equal(F1, BE)
        errK = np.abs(fK - Kg).max() / np.abs(Kg).max()
        errG = np.abs(fG - G).max() / np.abs(G).max()
        assert errK <= FD_TOL and errG <= FD_TOL, (errK, errG)
        worst = max(worst, errK, errG)
    print(f"largest relative FD error {worst:.2e}")


# ------------------------------------------------------------------------------- sliding state
def test_sliding_state_solves_the_contact_and_equals_the_fixed_point_solve(bench):
    """Newton's state against the system's own static solve (a fixed point over the contact
    point, frozen rows per linear solve) on the slider moved to the same position."""
    for s in (0.0505, S_BAND, 0.0985):
        st = D.sliding_state(bench, s, MU, vx=0.03)
        w1, q2, lam = translated(bench, st.shift).static_state(MU, 0.03, 1.0)
        # both stop at their own round-off floor: the Newton steps stall at ~1e-10 of max|u|
        # (sliding_state's tol is 1e-9), the fixed point at 1e-13 on alpha
        assert np.abs(np.r_[w1, q2] - st.u).max() <= 1e-9 * np.abs(st.u).max()
        assert abs(lam - st.lam) <= 1e-9 * st.lam
        # gradient of the gap at the state is the row B_C of eq. (44) at the deformed point
        _, BE, G = D.contact_jacobian(bench, st.u, st.lam, st.seg, MU, 1.0, st.shift)
        bE, bC = eigen.coupling_rows(st.alpha, st.gamma, MU, 1.0)
        BE_ref, BC_ref = bench._global_rows(st.seg, bE, bC)
        assert np.abs(G - BC_ref).max() <= 1e-12 and np.abs(BE - BE_ref).max() <= 1e-12


def test_unloaded_state_gives_the_undeformed_eigenvalues(small):
    """Without load the sliding state is the undeformed configuration (lambda = 0, K_g = 0): the
    deformed analysis must return the eigenvalues of :mod:`fesub.contact.analyses.eigen` (its own code path:
    coupled_matrices, Ritz-free primal projection) to the solvers' accuracy floor."""
    S = small
    S0 = translated(S, 0.0)
    S0.load1 = np.zeros_like(S.load1)
    for s in (0.0205, 0.0555, 0.0905):
        st = D.sliding_state(S0, s, MU)
        assert st.lam == pytest.approx(0.0, abs=1e-12) and np.abs(st.u).max() < 1e-15
        lam_d = D.deformed_eigenvalues(S0, s, MU, 20, state=st)
        lam_u = eigen.complex_eigenvalues(S0, s, MU, 20)
        # floor of either solver: 10 eps w_max^2 / |lambda| (see tests/test_contact_eigen.py), w_max
        # the highest frequency of the frictionless coupled model (rad/s)
        M, _, K, _, BC, _ = eigen.coupled_matrices(S0, s, 0.0)
        w2max = sla.eigh(eigen.project_rows(K, BC, BC), eigen.project_rows(M, BC, BC), eigvals_only=True).max()
        floor = 10 * np.finfo(float).eps * w2max / np.abs(lam_u)
        assert np.all(np.abs(lam_d - lam_u) <= floor), np.abs(lam_d - lam_u).max()


# ------------------------------------------------------------------------------- the transient
def _dominant_poles(r, order=12, keep=0.2):
    """Matrix-pencil poles of the perturbation's motion (three channels, each scaled to its peak)
    that oscillate at least twice in the window (slower content, the relaxation of the part of the
    initial displacement that is not modal, is not resolved as a pole: 0.65 cycle of a '129 Hz'
    pole with 10 % of the amplitude came out of one fit) and hold more than ``keep`` of the largest
    amplitude among those."""
    chans = np.array([r.signals[k] / np.abs(r.signals[k]).max() for k in ("u_T_y", "u_C_y", "u_C_x")])
    t = r.t
    p, a = matrix_pencil(chans, t[1] - t[0], order)
    osc = p.imag / (2 * np.pi) >= 2.0 / (t[-1] - t[0])
    p, w = p[osc], np.abs(a[:, osc]).sum(axis=0)
    return p[w > keep * w.max()]


def test_perturbation_grows_as_the_deformed_eigenvalue_predicts(bench):
    """At 93.6 mm the deformed analysis has the 10.6 kHz pair unstable (+210 1/s), the undeformed
    one stable (-149 1/s). A small perturbation along the unstable mode in the nonlinear transient
    (deformed rows, as the paper marches) grows at the deformed rate.

    Window and speed: the growth rate changes by ~1e3 1/s per 0.1 mm along the path here (the band
    is 0.4 mm wide), so the contact must stay put during the fit: vx = 1e-5 m/s moves it 0.05 um in
    the 5 ms window (a drift of ~0.5 1/s, 0.25 % of the rate). The perturbation (1e-12 m, so that
    its velocity, at most 2e-7 m/s, stays far below vx: no stick) is 4e4 times the round-off of the
    positions (0.1 m x eps); the fit below shows the noise left is far below the 0.5 % asked.
    """
    vx, T = 1e-5, 0.005
    lam, shapes, st = D.deformed_eigenvalues(bench, S_BAND, MU, 20, vx=vx, return_modes=True)
    k = int(np.argmax(lam.real))
    lead = lam[k]
    r = perturbation_response(bench, S_BAND, MU, shapes[:, k].real, vx=vx, duration=T, state=st)
    poles = _dominant_poles(r)
    meas = poles[np.argmax(poles.real)]
    f_err = abs(meas.imag - lead.imag) / lead.imag
    g_err = abs(meas.real - lead.real) / abs(lead.real)
    print(f"deformed {lead.imag / 2 / np.pi:.2f} Hz {lead.real:.2f} 1/s; transient "
          f"{meas.imag / 2 / np.pi:.2f} Hz {meas.real:.2f} 1/s; errors {f_err:.2e}, {g_err:.2e}")
    assert lead.real > 0 and lead.imag / (2 * np.pi) == pytest.approx(10.6e3, rel=0.01)
    assert f_err < 0.005 and g_err < 0.05
    # linear regime: ten times the perturbation gives the same pole. (The difference signals are
    # not exactly proportional: both carry a slow drift of ~7e-14 m in u_T_y, whatever the
    # perturbation, from the round-off of the multiplier -- a gap of a few mm's coordinates
    # cancelling to 1e-17 m -- which the fit leaves out as content slower than two cycles.)
    r10 = perturbation_response(bench, S_BAND, MU, shapes[:, k].real, vx=vx, duration=T, state=st,
                                amplitude=1e-11)
    p10 = _dominant_poles(r10)
    meas10 = p10[np.argmax(p10.real)]
    print(f"ten times the perturbation: {meas10.imag / 2 / np.pi:.2f} Hz {meas10.real:.2f} 1/s")
    # The 1e-12 m response still carries that round-off drift at 7 % of its first cycles, and it
    # differs between builds of the same kernel: the fitted rate moved by up to 0.3 % between the
    # baseline, AVX2 and AVX-512 builds (209.84, 209.76 and 210.16 1/s). So the two poles agree to
    # 1 % of the rate, measured 0.1-0.3 %; leaving the linear regime (a node sticking, the contact
    # moving across the band) would change the rate by order one.
    assert abs(meas10 - meas) < 1e-2 * abs(meas.real)
    # the undeformed analysis at the same position: every eigenvalue near 10.6 kHz decays
    und = eigen.complex_eigenvalues(bench, S_BAND, MU, 20)
    near = und[np.abs(und.imag - lead.imag) < 0.02 * lead.imag]
    assert near.size and near.real.max() < -100  # measured growth is +210: far outside 5 %


def test_undeformed_transient_follows_the_undeformed_eigenvalues(bench):
    """The same experiment with the undeformed rows in the transient decays at the undeformed
    eigenvalue: the discrepancy above is the geometry, not the measurement."""
    vx, T = 1e-5, 0.005
    und, shapes = eigen.complex_eigenvalues(bench, S_BAND, MU, 20, return_modes=True)
    k = int(np.argmin(np.abs(und.imag / (2 * np.pi) - 10.6e3)))
    r = perturbation_response(bench, S_BAND, MU, shapes[:, k].real, vx=vx, duration=T, geometry="undeformed")
    poles = _dominant_poles(r)
    meas = poles[np.argmin(np.abs(poles - und[k]))]
    print(f"undeformed {und[k].imag / 2 / np.pi:.2f} Hz {und[k].real:.2f} 1/s; transient "
          f"{meas.imag / 2 / np.pi:.2f} Hz {meas.real:.2f} 1/s")
    assert abs(meas.imag - und[k].imag) < 0.005 * und[k].imag
    assert abs(meas.real - und[k].real) < 0.05 * abs(und[k].real)
    assert poles.real.max() < 0


def test_comparison_along_the_path_round_trips_and_names_the_bands(bench, tmp_path):
    pos = np.array([0.0932, 0.0934, 0.0936, 0.0938, 0.0940])
    res = D.compare_geometries(bench, pos, MU, 14, vx=0.03)
    assert res.bands("deformed") == [(0.0934, 0.0938)] and res.bands("undeformed") == []
    back = D.GeometryComparison.load(res.save(tmp_path / "cmp"))
    for k in ("positions", "lam_deformed", "lam_undeformed", "lam_static", "x_contact", "gamma"):
        assert np.array_equal(getattr(back, k), getattr(res, k))
    ds = res.to_xarray()
    assert all("units" in ds[v].attrs for v in list(ds.data_vars) + list(ds.coords))
    s = res.summary()["results"]
    assert s["max_real_part_deformed"]["value"] > 0 > s["max_real_part_undeformed"]["value"]
    assert res.loci("deformed").unstable() == res.unstable("deformed")
    assert np.array_equal(res.loci("undeformed").lam, res.lam_undeformed)
    (band,) = res.summary()["details"]["unstable_bands_deformed"]
    assert band["max_real_1_s"] == res.lam_deformed.real.max() and band["at_m"] == 0.0936


def test_eigen_analyses_take_the_deformed_geometry(bench):
    """eigen.eigenvalue_loci and eigen.critical_mu with geometry='deformed' delegate to the
    deformed state; the critical mu's bracket is checked by fresh solves at its two ends."""
    pos = np.array([0.0935, 0.0936])
    loci = eigen.eigenvalue_loci(bench, pos, MU, 14, geometry="deformed", vx=0.03)
    cmp = D.compare_geometries(bench, pos, MU, 14, vx=0.03)
    assert np.array_equal(loci.lam, cmp.lam_deformed)
    crit = eigen.critical_mu(bench, [S_BAND], mu_max=0.5, tol=0.02, geometry="deformed", vx=0.03)
    lo, hi = crit.bracket
    assert hi - lo <= 0.02 and 0 < float(crit) < MU
    assert D.deformed_eigenvalues(bench, S_BAND, lo, 20, vx=0.03).real.max() <= 0
    assert D.deformed_eigenvalues(bench, S_BAND, hi, 20, vx=0.03).real.max() > 0
    with pytest.raises(ParameterError):
        eigen.eigenvalue_loci(bench, pos, MU, geometry="deformed", n_basis=40)
    with pytest.raises(ParameterError):
        eigen.critical_mu(bench, pos, geometry="bent")


def test_transient_crossing_the_band_bursts_only_with_deformed_rows(bench):
    """The burst the deformed analysis predicts: rough transients (noise 0.5 % of Fy) from the
    sliding state at 92.5 mm across the band (93.4-93.8 mm, growth up to 210 1/s; the positive
    real part integrated over the crossing at vx = 0.03 m/s is 2.4, an amplification of
    e^2.4 ~ 11) grow a 10.6 kHz burst in a_T_y with the deformed rows; with the undeformed rows
    (every real part there about -149 1/s at 10.6 kHz) they do not.

    What the noise drives into the band differs from one realisation to the next (the peak ratio
    of single seeds ranges from 2 to 15), so the amplification is read from the mean peak of 8
    seeds (mean ~9 measured; its relative standard error ~20 %): the factor 5 asked is half the
    predicted amplification. Every deformed burst peaks just after the band.

    The undeformed rows are marched by the contact engine's Python step loop (its compiled loop
    takes the frame from the deformed geometry only), about 1 ms a step: they run on the model
    truncated at 50 kHz (34 modes, a 28x larger stable step; the band's 10.6 kHz is far below the
    cut-off) and for 4 seeds, whose response (decaying: nothing to amplify) varies less."""
    from scipy.signal import butter, sosfiltfilt

    from fesub.contact import simulate

    vx, s0, s1, fs = 0.03, 0.0925, 0.0950, 100_000.0
    st = D.sliding_state(bench, s0, MU, vx=vx)
    view = {"deformed": translated(bench, st.shift),
            "undeformed": translated(contact_system(build(), modal_cutoff_hz=50e3), st.shift)}
    sos = butter(4, [10_000, 11_200], btype="band", fs=fs, output="sos")
    init = {"deformed": st.split(bench),
            "undeformed": view["undeformed"].static_state(MU, vx, 1.0, geometry="undeformed")[:2]}
    peak = {"deformed": [], "undeformed": []}
    for seed in range(8):
        for geo in ("deformed", "undeformed") if seed < 4 else ("deformed",):
            r = simulate(view[geo], mu=MU, duration=(s1 - s0) / vx, vx=vx, fs_out=fs, roughness_std=0.005 * 0.4,
                         seed=seed, initial=init[geo], geometry=geo)
            assert r.status == "completed"
            b = sosfiltfilt(sos, r.signals["a_T_y"])
            rms = np.sqrt((b[: b.size // 100 * 100].reshape(-1, 100) ** 2).mean(axis=1))  # 1 ms windows
            x = s0 + vx * (np.arange(rms.size) + 0.5) * 1e-3
            inside = (x > 0.0933) & (x < 0.0943)  # the band and the 0.5 mm after it (the burst decays there)
            peak[geo].append((rms[inside].max(), x[inside][np.argmax(rms[inside])]))
    (d, xd), (u, _) = (np.array(peak[g]).T for g in ("deformed", "undeformed"))
    print(f"10-11.2 kHz RMS of a_T_y, mean peak: deformed {d.mean():.3g} m/s^2 (8 seeds), "
          f"undeformed {u.mean():.3g} m/s^2 (4 seeds)")
    assert d.mean() > 5 * u.mean()
    assert np.all((0.0934 <= xd) & (xd <= 0.0942))


def test_sliding_state_refuses_what_has_no_sliding_state(small):
    from fesub.errors import ModelError

    for bad in ("x", np.nan, [0.05, 0.06]):
        with pytest.raises(ParameterError):
            D.sliding_state(small, bad, MU)
    with pytest.raises(ParameterError):
        D.sliding_state(small, 0.05, -0.1)
    with pytest.raises(ModelError):  # beyond the free end T
        D.sliding_state(small, 0.2, MU)
    lifted = translated(small, 0.0)
    lifted.load1 = -small.load1  # pulled up: the contact would be in tension
    with pytest.raises(ModelError, match="detach"):
        D.sliding_state(lifted, 0.0505, MU)
    with pytest.raises(ModelError, match="modal_cutoff"):
        D.sliding_state(contact_system(build(BeamOnBeamParams(nx1=15, nx2=20), from_files=False),
                                       modal_cutoff_hz=50e3), 0.0505, MU)


def test_eigenvalues_with_orthonormal_null_space_bases(bench):
    """The sparse-pivot primal reduction of deformed_eigenvalues against orthonormal (SVD) bases of
    the null spaces of B_C and B_E and NumPy's eigen-solver (the independent solver of
    tests/test_contact_eigen.py), with the non-symmetric geometric stiffness in place."""
    st = D.sliding_state(bench, S_BAND, MU, vx=0.03)
    ref = D.deformed_eigenvalues(bench, S_BAND, MU, 20, vx=0.03, state=st)
    M = sla.block_diag(bench.M1, bench.M2)
    C = sla.block_diag(bench.C1, bench.C2)
    K = sla.block_diag(bench.K1, bench.K2)
    Kg, BE, BC = D.contact_jacobian(bench, st.u, st.lam, st.seg, MU, 1.0, st.shift)
    LC, LE = sla.null_space(BC[None, :]), sla.null_space(BE[None, :])
    Mt, Ct, Kt = LE.T @ M @ LC, LE.T @ C @ LC, LE.T @ (K + Kg) @ LC
    m = Mt.shape[0]
    A = np.block([[np.zeros((m, m)), np.eye(m)], [-np.linalg.solve(Mt, Kt), -np.linalg.solve(Mt, Ct)]])
    ev = np.linalg.eigvals(A)
    ev = ev[ev.imag > 0]
    ev = ev[np.argsort(ev.imag)][:20]
    # accuracy floor of either solver, as in tests/test_contact_eigen.py: 10 eps w_max^2 / |lambda|
    w2max = sla.eigh(LC.T @ K @ LC, LC.T @ M @ LC, eigvals_only=True).max()
    err = np.abs(ev - ref)
    print(f"largest difference {err.max():.2e} 1/s, floor at the leading eigenvalue "
          f"{10 * EPS * w2max / abs(ref[np.argmax(ref.real)]):.2e} 1/s")
    assert np.all(err <= 10 * EPS * w2max / np.abs(ref))


def test_joined_runs_track_like_one_run():
    """Two eigenvalues whose frequencies cross (lambda_1 = -1 + j(10 + s), lambda_2 = -2 + j(20 - s)
    1/s over s = 0..20): each position lists them lowest frequency first, as an eigen-solve does.
    Tracked over all positions they follow the two lines (the closed form); loci of two runs
    joined give the same, where simply stacking the runs would swap them in the second run."""
    s = np.arange(21.0)
    lines = np.column_stack([-1 + 1j * (10 + s), -2 + 1j * (20 - s)])
    listed = np.sort_complex(lines * -1j) * 1j  # each row ordered by frequency (sorted by -j lambda)
    assert not np.array_equal(listed, lines)  # the listing order changes at the crossing (s = 5)

    def loci(rows):
        return D.join_loci([eigen.EigenLoci(s[[i]], listed[[i]], MU) for i in rows])

    whole = loci(range(21))
    np.testing.assert_array_equal(whole.lam, lines)
    runs = [loci(range(0, 8)), loci(range(8, 21))]
    joined = D.join_loci(runs)
    np.testing.assert_array_equal(joined.lam, lines)
    np.testing.assert_array_equal(joined.positions, s)
    assert not np.array_equal(np.concatenate([r.lam for r in runs]), lines)
    with pytest.raises(ParameterError):
        D.join_loci([])
    with pytest.raises(ParameterError):
        D.join_loci([runs[0], eigen.EigenLoci(s[:1], listed[:1], 0.1)])
