"""Band-limited eigenvalues of a linearised sliding state against a dense eig, per mu value.

* A 100 x 2 plane-stress block (404 modes) on a belt, 101 sliding contact nodes, mu = 0.3: the
  constrained pencil has N = 303 coordinates, 606 eigenvalues. The band 1000-1100 Hz
  (``|Re| <= 100`` 1/s) holds a few of them. Timed: ``band_eigenvalues`` with its certificate
  (the constrained projection included, as in the dense path); baselines in the same run: the
  dense ``LinearisedSystem.eigenvalues`` (every eigenvalue: the cost of a dense sweep per mu
  value), and the band without the certificate. Measured 2.9x with the certificate, 3.7x
  without (load 9.8).
* The disc brake of ``fesub brake`` (default parts, 590 modal coordinates, 56 sliding nodes) at
  mu = 0.3: N = 534, 1068 eigenvalues, the study's band 1-10 kHz (``|Re| <= 500`` 1/s) with 19 of
  them; the band analysis with its certificate against the dense eig of the same system. Measured
  2.2x (load 9.8). Nothing is carried from one mu value to the next.

* The same analysis with two BLAS threads against one (``test_brake_band_threads``): NumPy's
  and SciPy's OpenBLAS each keep a thread pool, and a loop alternating between them on two
  cores runs against the other pool's spinning threads (the analysis was 8x slower with two
  threads than with one until its products moved to SciPy's BLAS). Goal: at least 0.8x.

Goal recorded for the first two: 20x against the dense eig (not met: an LU of the pencil costs
1/50 to 1/130 of the dense eig, the certificate needs at least six, and the shifts' ARPACK
products add a few LUs' worth). The brake's run records that cap as it measures it: one complex
LU at the band's middle (``one_lu_s``), the dense eig in LUs (``dense_eig_in_lus``), and the
ratio the analysis would reach if its LUs were all it did (``ratio_if_only_lus``, ``n_lus`` of
them). About 8 s timed (3 rounds; the brake's parts reduced once into a temporary cache, its
steady state found once).
"""

from __future__ import annotations

import numpy as np
import pytest

from fesub.contact import Body, ContactInterface, MultibodyModel
from fesub.contact.analyses.band import band_eigenvalues
from fesub.contact.analyses.linearised import linearise
from fesub.contact.analyses.steady import steady_state
from fesub.contact.engine.friction import Coulomb
from fesub.fe import PlaneStress, rectangle
from fesub.substructure import Substructure

BAND = dict(f_lo=1000.0, f_hi=1100.0, max_rate=100.0)


@pytest.fixture(scope="module")
def system():
    mesh = rectangle(1.0, 0.02, 100, 2)
    sub = Substructure(mesh, PlaneStress(2e6, 0.3, 1000.0, 0.01), clamped=["top"], name="block")
    bottom = mesh.nodes("bottom")
    bottom = bottom[np.argsort(mesh.points[bottom, 0])]
    belt = Body([[1.0]], [[0.0]], [[-1.0, 1e-4], [2.0, 1e-4]], [[0, -1], [0, -1]], name="belt", prescribed={0: -0.1})
    model = MultibodyModel([Body.from_substructure(sub), belt], [ContactInterface("block", bottom, "belt", [[0, 1]])])
    return linearise(model, steady_state(model, friction=Coulomb(0.3)))


def _equal_to_dense(res, lin, band):
    """The dense eig of ``lin``, after checking that ``res`` is certified and holds the same
    eigenvalues in the band (frequencies to 1e-9 of the band's top)."""
    dense = lin.eigenvalues()
    w1, w2 = 2 * np.pi * band["f_lo"], 2 * np.pi * band["f_hi"]
    ref = dense[(dense.imag >= w1) & (dense.imag <= w2) & (np.abs(dense.real) <= band["max_rate"])]
    assert res.certified and res.lam.size == ref.size
    assert np.all(np.abs(np.sort(res.lam.imag) - np.sort(ref.imag)) <= 1e-9 * w2)
    return dense


def _band(lin, certify=True):
    return band_eigenvalues(lin, certify=certify, **BAND)


def test_band_eigenvalues_against_a_dense_eig(benchmark, ratio_to, goal, system):
    rounds = 1 if benchmark.disabled else 3
    res = benchmark.pedantic(_band, (system,), rounds=rounds, iterations=1)
    dense = _equal_to_dense(res, system, BAND)
    benchmark.extra_info.update(n_modes=int(system.M.shape[0]), n_eigenvalues=int(dense.size),
                                n_in_band=int(res.lam.size), n_shifts=int(res.shifts.size),
                                n_contour_points=int(res.n_points))
    r = ratio_to("dense_eig", system.eigenvalues, rounds=rounds)
    r_nc = ratio_to("band_without_certificate", _band, system, False, rounds=rounds)
    if r is not None:
        goal("ratio_dense_eig", 20.0, value=r, higher=True)
        benchmark.extra_info["ratio_dense_eig_to_band_without_certificate"] = r / r_nc if r_nc else None


# ------------------------------------------------------------------------------- the brake
#: the band of ``fesub brake`` (its default --band and --max-rate)
BRAKE_BAND = dict(f_lo=1000.0, f_hi=10000.0, max_rate=500.0)


@pytest.fixture(scope="module")
def brake_system(tmp_path_factory):
    """The disc brake of ``fesub brake`` (default parts: 590 modal coordinates, 56 sliding nodes)
    linearised at mu = 0.3, its operating point: the constrained pencil has N = 534 coordinates."""
    from fesub.models import brake as brk

    model = brk.build(speed=1.0, cache=str(tmp_path_factory.mktemp("brake-cache")))
    state = steady_state(model.model, friction=Coulomb(0.3), sliding_velocity=model.sliding_velocity())
    return linearise(model.model, state)


def _brake_band(lin):
    return band_eigenvalues(lin, **BRAKE_BAND)


def test_brake_band_against_a_dense_eig_per_mu(benchmark, ratio_to, goal, brake_system):
    """One mu value of the brake's sweep: the band analysis with its certificate (projection on the
    constraints' null spaces included) against the dense eig of the same linearised system (every
    eigenvalue, the same projection), both timed in this run. Nothing is reused from one mu
    value to the next (no amortisation over a sweep): the ratio is that of each mu value."""
    import os

    rounds = 1 if benchmark.disabled else 3
    res = benchmark.pedantic(_brake_band, (brake_system,), rounds=rounds, iterations=1)
    _equal_to_dense(res, brake_system, BRAKE_BAND)
    benchmark.extra_info.update(load_average=os.getloadavg()[0], n_modes=int(brake_system.M.shape[0]),
                                n_constrained=int(res.n_total // 2), n_in_band=int(res.lam.size),
                                n_shifts=int(res.shifts.size), n_contour_points=int(res.n_points),
                                band_solve_s=float(res.seconds), band_certificate_s=float(res.certify_seconds))
    r = ratio_to("dense_eig", brake_system.eigenvalues, rounds=rounds)
    if r is not None:
        goal("ratio_dense_eig", 20.0, value=r, higher=True)
        # what caps the ratio, measured in this run: one complex LU of T(z) (N x N) at the band's
        # middle, and the ratio the analysis would reach if it cost nothing but its LUs (one per
        # shift and per contour point of the certificate)
        import scipy.linalg as sla
        from conftest import median_time

        from fesub.contact.analyses.band import projected_matrices

        M, C, K = projected_matrices(brake_system)
        z = 2j * np.pi * 0.5 * (BRAKE_BAND["f_lo"] + BRAKE_BAND["f_hi"])
        lu = median_time(sla.lu_factor, z * z * M + z * C + K, rounds=5, check_finite=False)
        dense = benchmark.extra_info["baseline_dense_eig_median_s"]
        n_lu = int(res.shifts.size + res.n_points)
        benchmark.extra_info.update(one_lu_s=lu, dense_eig_in_lus=dense / lu, n_lus=n_lu,
                                    ratio_if_only_lus=dense / (n_lu * lu))


def _brake_band_one_thread(lin):
    from fesub.parallel import single_thread_blas

    with single_thread_blas():
        return _brake_band(lin)


def test_brake_band_threads(benchmark, ratio_to, goal, brake_system):
    """The brake's band analysis with two threads in every loaded OpenBLAS (NumPy's and SciPy's
    wheels each carry one) against one thread. The quick profile runs the benchmarks with one
    BLAS thread, where the two pools cannot collide; this one sets two itself, as a user's
    process has on two cores. A loop that alternates small products of one library with calls
    of the other runs against the other pool's spinning threads: the analysis took 2.0-2.8 s
    with two threads against 0.29-0.31 s with one before its products moved to SciPy's BLAS
    (NumPy 2.4, SciPy 1.17, 2 vCPUs). Goal: two threads at least 0.8x as fast as one (the
    analysis is LUs of N = 534 and ARPACK's small products: two threads gain little, and must
    not lose much)."""
    from fesub.parallel import set_blas_threads

    rounds = 1 if benchmark.disabled else 3
    old = set_blas_threads(2)
    try:
        res = benchmark.pedantic(_brake_band, (brake_system,), rounds=rounds, iterations=1)
    finally:
        if old is not None:
            set_blas_threads(old)
    assert res.certified
    r = ratio_to("one_blas_thread", _brake_band_one_thread, brake_system, rounds=rounds)
    if r is not None:
        goal("ratio_one_blas_thread", 0.8, value=r, higher=True)
