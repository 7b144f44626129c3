"""Frequency-based substructuring against the monolithic model, virtual points against rigid-body
kinematics, UFF 58 and netCDF round trips."""

from __future__ import annotations

import numpy as np
import pytest

import fesub
from fesub.errors import FesubError, ParameterError
from fesub.fbs import (FRFMatrix, consistency, couple, decouple, frf_from_matrices,
                       interface_modes, read_uff58, virtual_point_frf, write_uff58)
from fesub.fe import PlaneStress, mesh_matrices, rectangle

STEEL = PlaneStress(E=210e9, nu=0.3, rho=7850.0, thickness=0.01)
L, H, NX, NY = 0.2, 0.05, 6, 2
FREQ = np.linspace(50.0, 8000.0, 25)  # Hz: spans the first bending modes of the 0.4 m plate
ETA = 0.02  # structural damping: uniform, so the halves and the whole carry the same law


def _plate(x0, nx, length):
    mesh = rectangle(length, H, nx, NY, origin=(x0, 0.0))
    K, M, _ = mesh_matrices(mesh, STEEL)
    return mesh, K, M


def _labels(points, whole_points):
    """Global node numbers of ``points`` (by coordinates in the whole plate's mesh)."""
    d = np.linalg.norm(points[:, None, :] - whole_points[None, :, :], axis=2)
    idx = d.argmin(axis=1)
    assert np.all(d[np.arange(len(points)), idx] < 1e-12)
    return idx


def _frf(mesh, K, M, nodes, freq=FREQ):
    dofs = {2 * i + c: (int(n) + 1, c + 1) for i, n in enumerate(nodes) for c in (0, 1)}
    return frf_from_matrices(K, M, freq, dofs, eta=ETA)


@pytest.fixture(scope="module")
def plates():
    whole, Kw, Mw = _plate(0.0, 2 * NX, 2 * L)
    a, Ka, Ma = _plate(0.0, NX, L)
    b, Kb, Mb = _plate(L, NX, L)
    na, nb = _labels(a.points, whole.points), _labels(b.points, whole.points)
    Yw = _frf(whole, Kw, Mw, np.arange(whole.n_points))
    Ya, Yb = _frf(a, Ka, Ma, na), _frf(b, Kb, Mb, nb)
    shared = sorted(set(na) & set(nb))
    assert len(shared) == NY + 1
    pairs = [((n + 1, c), (n + 1, c)) for n in shared for c in (1, 2)]
    return dict(Yw=Yw, Ya=Ya, Yb=Yb, pairs=pairs, na=na, nb=nb)


def _rel(a, b):
    return np.abs(a - b).max() / np.abs(b).max()


def test_coupling_the_halves_gives_the_whole_plate(plates):
    Yc = couple([plates["Ya"], plates["Yb"]], {(0, 1): plates["pairs"]})
    ref = plates["Yw"].select(Yc.outputs, Yc.inputs)
    # exact algebra on both sides, one LU of a (n x n) complex system per frequency each: the
    # difference is round-off amplified by the conditioning near resonance (about 1e-11 seen)
    assert _rel(Yc.H, ref.H) < 1e-8
    assert len(Yc.outputs) == plates["Yw"].outputs.shape[0]
    assert Yc.info["method"] == "LM-FBS coupling" and Yc.info["n_interface_conditions"] == 6


def test_decoupling_recovers_a_half_from_the_whole(plates):
    # the assembly's DOFs carry the whole plate's labels; removing half B (standard interface:
    # the shared nodes only) leaves half A at its own DOFs and the interface
    Ya = decouple(plates["Yw"], plates["Yb"], plates["pairs"])
    ref = plates["Ya"].select(Ya.outputs, Ya.inputs)
    assert len(Ya.outputs) == len(plates["Ya"].outputs)
    assert _rel(Ya.H, ref.H) < 1e-8


def test_decoupling_with_an_extended_interface_needs_and_takes_regularisation(plates):
    nb = plates["nb"]
    extended = [((n + 1, c), (n + 1, c)) for n in nb for c in (1, 2)]  # every DOF of B
    Ya = decouple(plates["Yw"], plates["Yb"], extended, rcond=1e-10,
                  keep=plates["Ya"].outputs)
    ref = plates["Ya"].select(Ya.outputs, Ya.inputs)
    # the pseudo-inverse drops the redundant directions (B's internal DOFs add no new
    # information in exact data): the same answer, to the truncation level
    assert _rel(Ya.H, ref.H) < 1e-6
    assert Ya.info["max_dropped"] > 0


def test_error_growth_of_decoupling_under_noise(plates):
    """Noise on the assembly's FRFs grows through the interface inverse; regularisation by
    truncated SVD keeps the decoupled FRF bounded. The ratio of output to input error is what a
    user must expect (recorded here as an upper bound, measured about 10-300 near resonances)."""
    rng = np.random.default_rng(0)
    Yw = plates["Yw"]
    errs = []
    for level in (1e-6, 1e-4):
        noise = level * np.abs(Yw.H) * (rng.standard_normal(Yw.H.shape)
                                        + 1j * rng.standard_normal(Yw.H.shape))
        noisy = FRFMatrix(Yw.frequency, Yw.H + noise, Yw.outputs, Yw.inputs)
        Ya = decouple(noisy, plates["Yb"], plates["pairs"], rcond=1e-8)
        ref = plates["Ya"].select(Ya.outputs, Ya.inputs)
        # median over FRFs of the relative error at each frequency
        err = np.median(np.abs(Ya.H - ref.H) / np.abs(ref.H).max(axis=(1, 2))[:, None, None])
        errs.append(err)
        assert err < 1e4 * level
    # linear in the noise: 100x the noise gives 100x the error, within a factor of 3
    assert 30 < errs[1] / errs[0] < 300


def _rigid_channels(rng, n=9):
    pos = rng.uniform(-0.05, 0.05, (n, 3))
    dirs = rng.standard_normal((n, 3))
    return pos, dirs / np.linalg.norm(dirs, axis=1)[:, None]


def test_interface_modes_follow_rigid_body_kinematics():
    rng = np.random.default_rng(1)
    pos, dirs = _rigid_channels(rng)
    c = np.array([0.01, -0.02, 0.005])
    R = interface_modes(pos, dirs, c)
    t, theta = rng.standard_normal(3) * 1e-3, rng.standard_normal(3) * 1e-3
    # displacement of each channel's point under a small rigid motion: u = t + theta x (r - c)
    u = t[None, :] + np.cross(theta[None, :], pos - c[None, :])
    assert np.allclose(R @ np.concatenate([t, theta]), np.einsum("ij,ij->i", u, dirs),
                       rtol=0, atol=1e-15)


def test_virtual_point_recovers_the_rigid_interface_frf():
    rng = np.random.default_rng(2)
    pos, dirs = _rigid_channels(rng)
    R = interface_modes(pos, dirs, np.zeros(3))
    Yvp = rng.standard_normal((4, 6, 6)) + 1j * rng.standard_normal((4, 6, 6))
    Ych = np.einsum("ia,kab,jb->kij", R, Yvp, R)  # channels on a rigid interface, exact
    back = virtual_point_frf(Ych, R, R)
    assert np.abs(back - Yvp).max() < 1e-10 * np.abs(Yvp).max()
    assert consistency(Ych, R).max() < 1e-12
    noisy = Ych + 1e-3 * np.abs(Ych).max() * rng.standard_normal(Ych.shape)
    assert consistency(noisy, R).min() > 1e-5  # the flexibility/noise shows
    with pytest.raises(ParameterError, match="six rigid motions"):
        virtual_point_frf(Ych[:, :5, :5], R[:5], R[:5])


def test_uff58_round_trip(tmp_path, plates):
    pytest.importorskip("pyuff")
    Y = plates["Ya"].select([(1, 1), (1, 2), (2, 1)], [(1, 1), (3, 2)])
    path = write_uff58(Y, tmp_path / "ya.uff")
    back = read_uff58(path)
    assert np.array_equal(back.outputs, Y.outputs) and np.array_equal(back.inputs, Y.inputs)
    assert back.quantity == "receptance"
    # ASCII double-precision ordinates with 12 significant digits
    assert np.abs(back.H - Y.H).max() <= 1e-11 * np.abs(Y.H).max()
    assert np.allclose(back.frequency, Y.frequency, rtol=1e-12)


def test_frf_matrix_saves_and_reloads_exactly(tmp_path, plates):
    Y = plates["Ya"]
    ds = Y.to_xarray()
    for v in list(ds.data_vars) + list(ds.coords):
        assert "units" in ds[v].attrs, v
    back = fesub.load(Y.save(tmp_path / "ya"))
    assert isinstance(back, FRFMatrix)
    assert np.array_equal(back.H, Y.H) and np.array_equal(back.frequency, Y.frequency)
    assert np.array_equal(back.outputs, Y.outputs) and back.info == Y.info
    assert back.summary()["parameters"]["f_max"] == {"value": FREQ[-1], "unit": "Hz"}


def test_bad_input_is_refused(plates):
    Ya, Yb = plates["Ya"], plates["Yb"]
    with pytest.raises(ParameterError, match="not a DOF"):
        couple([Ya, Yb], {(0, 1): [((999, 1), (999, 1))]})
    with pytest.raises(ParameterError, match="at least two"):
        couple([Ya], {})
    with pytest.raises(ParameterError, match="strictly increasing"):
        FRFMatrix(FREQ[::-1], Ya.H, Ya.outputs, Ya.inputs)
    with pytest.raises(ParameterError, match="direction"):
        FRFMatrix(FREQ, Ya.H, np.c_[Ya.outputs[:, 0], Ya.outputs[:, 1] + 6], Ya.inputs)
    with pytest.raises(ParameterError, match="same frequencies"):
        couple([Ya, _frf_shift(Yb)], {(0, 1): plates["pairs"]})
    with pytest.raises(FesubError, match="not a UFF file"):
        read_uff58(__file__)


def _frf_shift(Y):
    return FRFMatrix(Y.frequency * 1.01, Y.H, Y.outputs, Y.inputs)
