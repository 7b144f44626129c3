"""Node-to-segment search and coupling rows (eqs. 34-44), property-based.

The independent reference is :func:`fesub.contact.geometry.project`, a few lines of NumPy applied to
every segment: the set of segments on which the point projects (0 <= alpha <= 1) and its gaps.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from fesub import _backend
from fesub.contact.geometry import coupling_rows, find_segment, find_segment_brute, project
from fesub.errors import ParameterError

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@st.composite
def polylines(draw):
    """A polyline monotone in x (random spacings) with random y perturbations (|slope| <= 0.5)."""
    n = draw(st.integers(2, 25))
    dx = np.array(draw(st.lists(st.floats(0.2, 2.0), min_size=n - 1, max_size=n - 1)))
    slope = np.array(draw(st.lists(st.floats(-0.5, 0.5), min_size=n - 1, max_size=n - 1)))
    x = np.r_[0.0, np.cumsum(dx)] + draw(st.floats(-10, 10))
    y = np.r_[0.0, np.cumsum(slope * dx)] + draw(st.floats(-10, 10))
    pos = np.c_[x, y]
    segs = np.c_[np.arange(n - 1), np.arange(1, n)]
    # shuffle the node numbering: segments refer to nodes by index, not by order in pos
    perm = np.array(draw(st.permutations(range(n))))
    inv = np.argsort(perm)
    return pos[perm], inv[segs]


def candidates(pos, segs, P):
    """alpha, gap of P on every segment (project) and the shadow nodes of convex kinks: P projects
    beyond the end of segment k-1 and before the start of segment k (their common node)."""
    ag = np.array([project(P, pos[a], pos[b])[:2] for a, b in segs])
    cand = np.flatnonzero((ag[:, 0] >= 0) & (ag[:, 0] <= 1))
    shadow = [k for k in range(1, len(segs)) if ag[k - 1, 0] >= 1 and ag[k, 0] < 0]
    return ag, cand, shadow


def _available():
    return ["python", "compiled"] if _backend.compiled_available("contact") else ["python"]


# ----------------------------------------------------------------------------- local walk vs scan
@SETTINGS
@given(poly=polylines(), data=st.data())
def test_walk_vs_brute_point_above(backend, poly, data):
    pos, segs = poly
    m = len(segs)
    k0 = data.draw(st.integers(0, m - 1), label="segment under P")
    a0 = data.draw(st.floats(0.001, 0.999), label="alpha")
    h = data.draw(st.floats(1e-6, 0.05), label="height")          # above, small vs segment length
    start = data.draw(st.integers(0, m - 1), label="start")
    q1, q2 = pos[segs[k0, 0]], pos[segs[k0, 1]]
    d = q2 - q1
    nrm = np.array([-d[1], d[0]]) / np.hypot(*d)
    P = q1 + a0 * d + h * nrm
    ag, cand, shadow = candidates(pos, segs, P)
    assert k0 in cand                                             # construction sanity
    k, al, gap, visited = find_segment(pos, segs, P, start)
    kb, alb, gapb, _ = find_segment_brute(pos, segs, P)
    # the scan returns the admissible segment of smallest |gap| (independent: project on each)
    best = cand[np.argmin(np.abs(ag[cand, 1]))]
    assert kb == best
    np.testing.assert_allclose([alb, gapb], ag[kb], rtol=1e-12, atol=1e-12)
    # the walk returns an admissible segment (or the common node of a convex kink it stops at)
    assert k >= 0
    if k in cand:
        np.testing.assert_allclose([al, gap], ag[k], rtol=1e-12, atol=1e-12)
    else:
        assert (al == 0.0 and k in shadow) or (al == 1.0 and k + 1 in shadow)
    if len(cand) == 1 and not shadow:
        # unambiguous: walk and scan agree exactly
        assert k == kb and al == pytest.approx(alb, abs=1e-14) and gap == pytest.approx(gapb, abs=1e-14)
        # locality: started on the right segment, the walk looks at it only
        assert find_segment(pos, segs, P, kb)[3] == 1
    assert 1 <= visited <= 2 * m


@SETTINGS
@given(poly=polylines(), data=st.data())
def test_backends_agree(poly, data):
    pos, segs = poly
    x0, x1 = pos[:, 0].min(), pos[:, 0].max()
    P = np.array([data.draw(st.floats(x0 - 1, x1 + 1)), data.draw(st.floats(-15, 15))])
    start = data.draw(st.integers(0, len(segs) - 1))
    res = []
    for b in _available():
        with _backend.use(b):
            res.append((find_segment(pos, segs, P, start), find_segment_brute(pos, segs, P)))
    for r in res[1:]:
        for (ka, aa, ga, va), (kb, ab, gb, vb) in zip(res[0], r):
            assert ka == kb and va == vb
            np.testing.assert_allclose([aa, ga], [ab, gb], rtol=1e-14, atol=1e-14)


@SETTINGS
@given(poly=polylines(), data=st.data())
def test_beyond_the_ends_is_off_surface(backend, poly, data):
    pos, segs = poly
    left = data.draw(st.booleans())
    x = pos[:, 0].min() - data.draw(st.floats(0.01, 5.0)) if left else pos[:, 0].max() + data.draw(st.floats(0.01, 5.0))
    yr = pos[:, 1]
    P = np.array([x, data.draw(st.floats(yr.min() - 1, yr.max() + 1))])
    ag, cand, shadow = candidates(pos, segs, P)
    # off every segment by more than round-off: at alpha = 1 within an ulp (an inclined end
    # segment with P on the normal through its end node, e.g. (0, 0.01)-(0.2, 0.05) and
    # P = (0.21, 0)) the reference and the search may round to either side of the end
    off = np.all(np.abs(ag[:, 0] - 0.5) > 0.5 + 1e-12)
    assume(cand.size == 0 and not shadow and off)
    start = data.draw(st.integers(0, len(segs) - 1))
    assert find_segment(pos, segs, P, start)[0] == -1
    assert find_segment_brute(pos, segs, P)[0] == -1


def test_off_surface_can_raise(backend):
    from fesub.errors import ContactLost

    pos = np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]])
    segs = np.array([[0, 1], [1, 2]])
    with pytest.raises(ContactLost, match="off the target"):
        find_segment(pos, segs, [2.5, 0.1], 1, raise_off=True)
    # a point exactly on the last node belongs to the last segment (alpha = 1 admitted by the scan)
    k, al, gap, _ = find_segment_brute(pos, segs, [2.0, 0.0])
    assert k == 1 and al == 1.0 and gap == 0.0


def test_start_outside_the_range_falls_back(backend):
    pos = np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0], [3.0, 0.0]])
    segs = np.array([[0, 1], [1, 2], [2, 3]])
    for start in (-5, 3, 99):
        k, al, gap, _ = find_segment(pos, segs, [2.25, 0.5], start)
        assert k == 2 and al == pytest.approx(0.25) and gap == pytest.approx(0.5)


# ----------------------------------------------------------------------------- bad input
def test_bad_input(backend):
    pos = np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]])
    segs = np.array([[0, 1], [1, 2]])
    with pytest.raises(ParameterError, match="NaN"):
        find_segment(pos, segs, [np.nan, 0.1], 0)
    with pytest.raises(ParameterError, match="NaN"):
        find_segment(pos, segs, [0.5, np.inf], 0)
    with pytest.raises(ParameterError, match="positions"):
        find_segment(np.zeros((3, 3)), segs, [0.5, 0.1], 0)
    with pytest.raises(ParameterError, match="positions"):
        find_segment_brute(pos.ravel(), segs, [0.5, 0.1])
    with pytest.raises(ParameterError, match="segments"):
        find_segment(pos, np.array([[0, 1, 2]]), [0.5, 0.1], 0)
    with pytest.raises(ParameterError, match="segments"):
        find_segment(pos, np.zeros((0, 2), int), [0.5, 0.1], 0)
    with pytest.raises(ParameterError, match="outside"):
        find_segment(pos, np.array([[0, 1], [1, 3]]), [0.5, 0.1], 0)
    with pytest.raises(ParameterError, match="outside"):
        find_segment_brute(pos, np.array([[-1, 1]]), [0.5, 0.1])
    with pytest.raises(ParameterError, match="degenerate"):
        project([0.5, 0.1], [1.0, 1.0], [1.0, 1.0])
    with pytest.raises(ParameterError, match="mu"):
        coupling_rows(0.5, 0.0, -0.1)


def test_brute_rejects_nan_point():
    pos = np.array([[0.0, 0.0], [1.0, 0.0]])
    with pytest.raises(ParameterError):
        find_segment_brute(pos, np.array([[0, 1]]), [np.nan, 0.1])


def test_point_shape_is_checked():
    pos = np.array([[0.0, 0.0], [1.0, 0.0]])
    segs = np.array([[0, 1]])
    for P in ([0.5, 0.1, 7.0], 0.5):
        with pytest.raises(ParameterError):
            find_segment(pos, segs, P, 0)


def test_nan_target_positions_rejected():
    pos = np.array([[0.0, 0.0], [1.0, np.nan], [2.0, 0.0]])
    with pytest.raises(ParameterError):
        find_segment(pos, np.array([[0, 1], [1, 2]]), [0.5, 0.1], 0)


def test_coupling_rows_rejects_nan_mu():
    with pytest.raises(ParameterError):
        coupling_rows(0.5, 0.0, float("nan"))


# ----------------------------------------------------------------------------- coupling rows
angles = st.floats(-np.pi, np.pi)


@settings(max_examples=200, deadline=None)
@given(alpha=st.floats(0, 1), gamma=angles, sign=st.sampled_from([-1.0, 1.0]))
def test_frictionless_rows_are_collocated(alpha, gamma, sign):
    bE, bC = coupling_rows(alpha, gamma, 0.0, sign)
    np.testing.assert_allclose(bE, bC, rtol=0, atol=1e-15)       # eq. (44): B_C = B_E at mu = 0


@settings(max_examples=200, deadline=None)
@given(alpha=st.floats(0, 1), gamma=angles, mu=st.floats(0, 2), sign=st.sampled_from([-1.0, 1.0]),
       T1=st.tuples(st.floats(-5, 5), st.floats(-5, 5)), length=st.floats(0.01, 3))
def test_friction_force_opposes_sliding_and_balances(alpha, gamma, mu, sign, T1, length):
    bE, bC = coupling_rows(alpha, gamma, mu, sign)
    t = np.array([np.cos(gamma), np.sin(gamma)])                  # tangent T1 -> T2
    n = np.array([-np.sin(gamma), np.cos(gamma)])                 # normal towards the slave
    lam = 1.0                                                     # compression
    FC = -bE[4:6] * lam                                           # g = -B_E' lambda, slave entries
    F1, F2 = -bE[0:2] * lam, -bE[2:4] * lam
    # unit-scale quantities built from sin/cos: round-off 1e-15, 1e-12 leaves margin
    assert FC @ n == pytest.approx(lam, abs=1e-12)                # normal force pushes C off the target
    assert FC @ t == pytest.approx(-sign * mu * lam, abs=1e-12)   # Coulomb: |F_t| = mu F_n, opposing
    if mu > 1e-6:                                                 # well above the round-off of FC @ t
        assert np.sign(FC @ t) == -sign
    np.testing.assert_allclose(F1 + F2 + FC, 0.0, atol=1e-12)     # action = reaction
    # the reactions on the target act at the contact point: zero moment about it
    T1 = np.asarray(T1)
    T2 = T1 + length * t
    P = (1 - alpha) * T1 + alpha * T2

    def cross(a, b):
        return a[0] * b[1] - a[1] * b[0]

    assert cross(T1 - P, F1) + cross(T2 - P, F2) == pytest.approx(0.0, abs=1e-11 * (1 + np.abs(T1).max()))
    # compatibility ignores friction and sliding direction
    np.testing.assert_array_equal(bC, coupling_rows(alpha, gamma, 0.0, 1.0)[1])


@settings(max_examples=200, deadline=None)
@given(T1=st.tuples(st.floats(-5, 5), st.floats(-5, 5)), T2=st.tuples(st.floats(-5, 5), st.floats(-5, 5)),
       P=st.tuples(st.floats(-5, 5), st.floats(-5, 5)), mu=st.floats(0, 1), sign=st.sampled_from([-1.0, 1.0]))
def test_compatibility_row_measures_the_gap(T1, T2, P, mu, sign):
    T1, T2, P = (np.asarray(v, float) for v in (T1, T2, P))
    assume(np.hypot(*(T2 - T1)) > 1e-2)
    alpha, gap, gamma = project(P, T1, T2)
    _, bC = coupling_rows(alpha, gamma, mu, sign)
    U = np.r_[T1, T2, P]
    # B_C U = -gap for positions U (spec section 4); coordinates up to 5: round-off ~1e-14
    assert bC @ U == pytest.approx(-gap, abs=1e-12)
    # and the gap is the signed distance along the left-hand normal (independent formula)
    d = (T2 - T1) / np.hypot(*(T2 - T1))
    assert gap == pytest.approx(d[0] * (P[1] - T1[1]) - d[1] * (P[0] - T1[0]), abs=1e-12)
