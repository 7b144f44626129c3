"""Band-limited eigenvalues of a linearised sliding state with their certificate
(fesub.contact.analyses.band), and the band-limited mu sweep (fesub.contact.analyses.mode_coupling)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

import fesub
from fesub.contact import Body, ContactInterface, MultibodyModel
from fesub.contact.analyses.band import BandSpectrum, band_eigenvalues, contour_count, projected_matrices
from fesub.contact.analyses.linearised import linearise
from fesub.contact.analyses.mode_coupling import belt_two_dof, mu_sweep
from fesub.contact.analyses.steady import steady_state
from fesub.contact.engine.friction import Coulomb
from fesub.errors import ParameterError
from fesub.fe import PlaneStress, rectangle
from fesub.substructure import Substructure


@pytest.fixture(scope="module")
def block():
    """A 40 x 2 plane-stress block (164 modes) on a belt, 41 sliding nodes, mu = 0.3: N = 123."""
    mesh = rectangle(0.4, 0.02, 40, 2)
    sub = Substructure(mesh, PlaneStress(2e6, 0.3, 1000.0, 0.01), clamped=["top"], name="block")
    bottom = mesh.nodes("bottom")
    bottom = bottom[np.argsort(mesh.points[bottom, 0])]
    belt = Body([[1.0]], [[0.0]], [[-0.4, 1e-4], [0.8, 1e-4]], [[0, -1], [0, -1]], name="belt", prescribed={0: -0.1})
    model = MultibodyModel([Body.from_substructure(sub), belt], [ContactInterface("block", bottom, "belt", [[0, 1]])])
    lin = linearise(model, steady_state(model, friction=Coulomb(0.3)))
    return lin, lin.eigenvalues()


def in_region(lam, f_lo, f_hi, rate):
    return lam[(lam.imag >= 2 * np.pi * f_lo) & (lam.imag <= 2 * np.pi * f_hi) & (np.abs(lam.real) <= rate)]


@pytest.mark.parametrize("f_lo, f_hi, rate", [(1000.0, 2000.0, 100.0), (1200.0, 1300.0, 500.0), (0.0, 400.0, 50.0)])
def test_band_eigenvalues_equal_the_dense_eig_one_to_one(block, f_lo, f_hi, rate):
    lin, dense = block
    res = band_eigenvalues(lin, f_lo, f_hi, max_rate=rate)
    ref = in_region(dense, f_lo, f_hi, rate)
    assert res.method == "arnoldi" and res.n_total == dense.size
    assert res.certified and abs(res.winding) < 1e-6
    assert res.lam.size == ref.size > 0
    D = np.abs(ref[:, None] - res.lam[None, :])
    i, j = linear_sum_assignment(D)
    # ARPACK's tolerance 1e-12 on 1/(lam - sigma) and the dense eig's backward error
    # (~eps ||A|| ~ 1e-16 * w_max^2 / |lam|): 1e-9 of |lam| holds both with a wide margin
    assert np.all(D[i, j] <= 1e-9 * np.abs(ref[i]))
    # one to one: every other pairing is farther than the tolerance
    D[i, j] = np.inf
    assert np.all(D.min(axis=1) > 1e-9 * np.abs(ref))


def test_certificate_fails_when_an_eigenvalue_is_dropped(block):
    lin, dense = block
    Mt, Ct, Kt = projected_matrices(lin)
    region = (-100.0, 100.0, 2 * np.pi * 1000.0, 2 * np.pi * 1200.0)
    inside = in_region(dense, 1000.0, 1200.0, 100.0)
    assert inside.size >= 3
    w_all = contour_count(Mt, Ct, Kt, dense, region)[0]
    assert abs(w_all) < 1e-6
    for drop in (0, inside.size // 2):
        kept = dense[dense != inside[drop]]
        w, _, resolved = contour_count(Mt, Ct, Kt, kept, region)
        assert resolved and abs(w - 1) < 1e-6     # exactly the one eigenvalue left out
    w2 = contour_count(Mt, Ct, Kt, dense[~np.isin(dense, inside[:2])], region)[0]
    assert abs(w2 - 2) < 1e-6


def test_certificate_fails_when_the_shifts_do_not_cover_the_band(block):
    lin, dense = block
    res = band_eigenvalues(lin, 1000.0, 1400.0, max_rate=100.0, k=4, max_shifts=1)
    ref = in_region(dense, 1000.0, 1400.0, 100.0)
    assert res.lam.size < ref.size
    # the count of the eigenvalues left out (exact when no step aliases; the answer is refused
    # either way)
    assert not res.certified and abs(res.winding - (ref.size - res.lam.size)) < 1e-6


def test_band_spectrum_saves_and_reloads(block, tmp_path):
    lin, _ = block
    res = band_eigenvalues(lin, 1000.0, 1300.0, max_rate=100.0)
    back = fesub.load(res.save(tmp_path / "band"))
    assert isinstance(back, BandSpectrum)
    np.testing.assert_array_equal(back.lam, res.lam)
    np.testing.assert_array_equal(back.shifts, res.shifts)
    assert back.certified == res.certified and back.winding == res.winding
    s = back.summary()
    assert s["parameters"]["f_hi"] == {"value": 1300.0, "unit": "Hz"}
    assert s["results"]["n_eigenvalues"]["value"] == res.lam.size


def belt_with_a_chain(n=40):
    """The belt model and a grounded chain of n masses (x and y; 0.5 kg, 1e5 N/m) that no contact
    touches: 2n + 2 eigenvalue pairs, many around the belt pair's 57 Hz, so that the band-limited
    method runs Arnoldi on a system whose band holds the coupling pair among others."""
    b = belt_two_dof()
    K1 = 2e5 * np.eye(n) - 1e5 * (np.eye(n, k=1) + np.eye(n, k=-1))
    K = np.kron(K1, np.eye(2))
    X = np.c_[np.arange(n, dtype=float), np.full(n, 5.0)]
    chain = Body(0.5 * np.eye(2 * n), K, X, np.arange(2 * n).reshape(n, 2), name="chain")
    model = MultibodyModel([*b.model.bodies, chain], b.model.interfaces)
    return b, model


def test_band_mu_sweep_critical_mu_against_the_closed_form():
    b, model = belt_with_a_chain()
    c = b.coefficients
    closed = ((c["k11"] - c["k22"]) ** 2 + 4 * c["k12"] * c["k21"]) / (4 * c["s"] * c["k21"] * c["k3"])
    sweep = mu_sweep(model, np.linspace(0.0, 0.3, 4), band={"f_lo": 45.0, "f_hi": 70.0, "max_rate": 20.0},
                     tol=1e-11)
    assert sweep.band == (45.0, 70.0) and sweep.certified.all()
    assert len(sweep.onsets) == 1 and sweep.onsets[0]["kind"] == "unstable"
    # the bracket is 1e-11 wide; the rtol bias (rtol |lam| / c)^2 ~ 1e-12 (see mu_sweep)
    assert abs(sweep.critical_mu / closed - 1) < 1e-8
    assert abs(sweep.onsets[0]["f_hz"] - np.sqrt((c["k11"] + c["k22"]) / (2 * c["m"])) / (2 * np.pi)) < 1e-3
    # the tracks: the belt pair's two eigenvalues stay apart below the merging, share a frequency above
    tr = sweep.tracks()
    assert tr.shape[0] == 4 and np.isfinite(tr).all(axis=0).sum() >= 2
    assert (tr[-1].real > 1.0).sum() == 1


def test_bad_input(block):
    lin, _ = block
    with pytest.raises(ParameterError):
        band_eigenvalues(lin, 2000.0, 1000.0)
    with pytest.raises(ParameterError):
        band_eigenvalues((np.eye(2), np.eye(3), np.eye(2)), 0.0, 1.0)
    with pytest.raises(ParameterError):
        mu_sweep(belt_two_dof().model, [0.0, 0.1], band=5.0)


def test_projection_by_elimination_has_the_orthonormal_projections_eigenvalues(block):
    """The constrained pencil over the elimination bases (O(n^2 m)) against the one over the
    orthonormal null-space bases (pivoted QR, the reference): the same eigenvalues, one to one."""
    from fesub.contact.analyses.linearised import LinearisedSystem
    from fesub.contact.analyses.secular import first_order_matrix

    lin, dense = block
    LG, LB = lin.eliminated()
    QG, QB = lin.bases()
    scale = np.abs(lin.G).max()
    assert LG.shape == QG.shape and np.abs(lin.G @ LG).max() < 1e-12 * scale and np.abs(lin.B @ LB).max() < 1e-12 * scale
    ref = np.linalg.eigvals(first_order_matrix(*(QB.T @ X @ QG for X in (lin.M, lin.C, lin.K))))
    D = np.abs(dense[:, None] - ref[None, :])
    i, j = linear_sum_assignment(D)
    # two similar pencils (bases of the same null spaces): round-off of the dense eig only,
    # ~1e-13 of the largest modulus here
    assert np.all(D[i, j] <= 1e-9 * np.abs(ref).max())
    # rows of G that are dependent: the orthonormal bases are used (rank from the pivoted QR)
    dup = LinearisedSystem(lin.M, lin.C, lin.K, np.vstack([lin.B, lin.B[:1]]), np.vstack([lin.G, lin.G[:1]]),
                           lin.state)
    assert np.allclose(dup.eliminated()[0].T @ dup.eliminated()[0], np.eye(LG.shape[1]), atol=1e-12)
    lam = dup.eigenvalues()
    D = np.abs(dense[:, None] - lam[None, :])
    i, j = linear_sum_assignment(D)
    assert lam.size == dense.size and np.all(D[i, j] <= 1e-9 * np.abs(dense).max())


def test_divisor_divides_each_found_pair_once():
    """A shift's disk that reaches below the real axis finds both members of a pair: the
    certificate's divisor holds each value once (a value divided out twice is a pole of h)."""
    from fesub.contact.analyses.band import _divisor

    region = (-10.0, 10.0, 100.0, 200.0)
    # -5 +- 250j both found; the conjugates of 3 + 150j (in the region) and 2 + 50j were not
    near = np.array([3 + 150j, -5 + 250j, -5 - 250j, 2 + 50j])
    div = _divisor(near, region)
    assert sorted(div.tolist(), key=lambda z: (z.imag, z.real)) == sorted(
        [3 + 150j, 3 - 150j, -5 + 250j, -5 - 250j, 2 + 50j, 2 - 50j], key=lambda z: (z.imag, z.real))


def test_mu_sweep_solves_each_coefficient_once(monkeypatch):
    """The bisection's bracket ends are not solved again after it."""
    from fesub.contact.analyses import mode_coupling as mc

    calls = []
    real = mc.spectrum_at_mu

    def counted(model, mu, **kw):
        calls.append(float(mu))
        return real(model, mu, **kw)

    monkeypatch.setattr(mc, "spectrum_at_mu", counted)
    b = belt_two_dof()
    sweep = mc.mu_sweep(b.model, [0.0, 0.5], tol=1e-3)
    assert len(sweep.onsets) == 1
    assert len(calls) == len(set(calls))
