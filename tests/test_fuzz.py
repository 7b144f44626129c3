"""Hostile and careless input to the public API: a result or a :class:`FesubError`, never another
exception, never a hang.

Hypothesis draws finite and non-finite floats, wrong types, empty and huge sizes for the
parameters of the public functions; each example must either return or raise a FesubError.
Examples are bounded (``max_examples``) and derandomised, so CI runs the same inputs every time,
and each has a deadline, so a hang fails instead of stalling the run.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fesub.contact.geometry  # noqa: F401 - imported once, outside the per-example deadline
import fesub.signal  # noqa: F401
from fesub.errors import FesubError

# the deadline is per example: far above any legitimate call here (< 0.1 s once imported, the
# imports are done below), far below a hang
FUZZ = settings(max_examples=60, deadline=5000, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

#: any scalar a careless caller may pass: finite, huge, tiny, non-finite, wrong types
anything = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-10**12, max_value=10**12),
    st.sampled_from([None, "x", "1", [], [1.0, 2.0], (), {}, True, 1e300, -1e-300, 0, 0.0]),
)
counts = st.one_of(st.integers(min_value=-5, max_value=60), st.floats(allow_nan=True),
                   st.sampled_from(["3", 2.0, 10**12, True]))


def _ok_or_fesub_error(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except FesubError:
        return None


@pytest.fixture(scope="module")
def small():
    from fesub.fe import PlaneStress, rectangle
    from fesub.substructure import Substructure

    return Substructure(rectangle(1.0, 0.1, 8, 2), PlaneStress(210e9, 0.3, 7800.0, 0.02),
                        clamped=["left"])


@FUZZ
@given(E=anything, nu=anything, rho=anything, t=anything)
def test_materials(E, nu, rho, t):
    from fesub.fe import PlaneStress

    _ok_or_fesub_error(PlaneStress, E, nu, rho, t)


@FUZZ
@given(L=anything, H=anything, nx=counts, ny=counts)
def test_rectangle_mesh(L, H, nx, ny):
    from fesub.fe import rectangle

    m = _ok_or_fesub_error(rectangle, L, H, nx, ny)
    if m is not None:  # a mesh that is made is a valid one: positive areas, finite points
        assert np.all(np.isfinite(m.points))


@FUZZ
@given(n=counts)
def test_modes_count(small, n):
    from fesub.fe.assembly import modes

    r = _ok_or_fesub_error(modes, small.K, small.M, n)
    if r is not None:
        f, phi = r
        assert f.shape == (n,) and np.all(np.diff(f) >= 0)


@FUZZ
@given(boundary=st.one_of(st.lists(st.integers(-3, 60), max_size=6),
                          st.lists(st.floats(allow_nan=True), max_size=3), anything),
       n_modes=counts)
def test_craig_bampton(small, boundary, n_modes):
    from fesub.substructure import CraigBampton

    cb = _ok_or_fesub_error(CraigBampton, small, boundary=boundary, n_modes=n_modes)
    if cb is not None:  # a reduction that is made is positive semi-definite
        lam = np.linalg.eigvalsh(cb.Kr)
        assert lam.min() > -1e-8 * lam.max()


@FUZZ
@given(value=anything, comp=st.sampled_from(["x", "y", "z", "rz", 3, None]))
def test_loads(small, value, comp):
    _ok_or_fesub_error(small.load, "right", comp, value)


@FUZZ
@given(alpha=anything, beta=anything)
def test_rayleigh(small, alpha, beta):
    from fesub.fe.assembly import rayleigh

    C = _ok_or_fesub_error(rayleigh, small.M, small.K, alpha, beta)
    if C is not None:
        assert np.all(np.isfinite(C.data))


@FUZZ
@given(n=counts, fs=anything, std=anything, seed=st.one_of(st.integers(0, 10), anything))
def test_band_limited_noise(n, fs, std, seed):
    from fesub.signal import band_limited_noise

    x = _ok_or_fesub_error(band_limited_noise, n, fs, std=std, seed=seed)
    if x is not None:
        assert np.all(np.isfinite(x))


@FUZZ
@given(P=st.one_of(st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=0, max_size=3),
                   anything),
       start=st.one_of(st.integers(-5, 20), anything))
def test_segment_search(P, start):
    from fesub.contact.geometry import find_segment

    pos = np.column_stack([np.linspace(0, 1, 11), np.zeros(11)])
    segs = np.column_stack([np.arange(10), np.arange(1, 11)])
    _ok_or_fesub_error(find_segment, pos, segs, P, start)


# ---- the sliding-contact analyses, on a small model (15 + 20 elements)
@pytest.fixture(scope="module")
def contact_system():
    from fesub.models.beam_on_beam import BeamOnBeamParams, build, contact_system

    return contact_system(build(BeamOnBeamParams(nx1=15, nx2=20), from_files=False))


@settings(FUZZ, max_examples=80)
@given(name=st.sampled_from(["mu", "duration", "vx", "h", "fs_out", "chunk", "seed", "roughness_std",
                             "roughness_band", "initial", "geometry", "formulation"]),
       value=st.one_of(anything, st.tuples(anything, anything)))
def test_transient(contact_system, name, value):
    import warnings

    from fesub.contact import simulate

    args = {"mu": 0.3, "duration": 2e-4, "vx": 0.03, "progress": False, name: value}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tiny steps warn of lost digits: a reported status
        r = _ok_or_fesub_error(simulate, contact_system, **args)
    if r is not None:
        assert r.status in ("completed", "stick", "detachment", "off_surface", "interrupted",
                            "reversed") or isinstance(r.status, str)


@settings(FUZZ, max_examples=60)
@given(s=anything, mu=anything, n=counts, n_basis=st.one_of(st.none(), counts))
def test_eigenvalues(contact_system, s, mu, n, n_basis):
    import warnings

    from fesub.contact.analyses import eigen

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a basis that leaves modes out warns: a reported status
        lam = _ok_or_fesub_error(eigen.complex_eigenvalues, contact_system, s, mu, n, n_basis=n_basis)
    if lam is not None:
        assert lam.shape == (n,) and np.all(np.isfinite(lam))


@settings(FUZZ, max_examples=40)
@given(positions=st.one_of(anything, st.lists(st.floats(allow_nan=True, allow_infinity=True),
                                              max_size=3)),
       tol=anything, mu_max=anything)
def test_critical_mu(contact_system, positions, tol, mu_max):
    from fesub.contact.analyses import eigen

    _ok_or_fesub_error(eigen.critical_mu, contact_system, positions, tol=tol, mu_max=mu_max,
                       n_basis=20)
