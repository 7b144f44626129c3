"""The prepared target surface :class:`fesub.contact.SegmentSet` against the full scan.

The reference is the brute-force search (every segment examined, :meth:`SegmentSet.find_brute`
and :func:`find_segment_brute`), independent of the local walk from a hint that the prepared set
uses. Queries are random, and include the ends of the surface, the shared nodes (corners of a
kinked polyline) and points off the surface.
"""

from __future__ import annotations

import numpy as np
import pytest

from fesub import _backend
from fesub.contact import SegmentSet
from fesub.contact.geometry import find_segment_brute
from fesub.errors import ContactLost, ParameterError


def _surface(n, rng):
    """A kinked polyline of n segments monotone in x (random spacings and slopes |s| <= 0.5)."""
    dx = rng.uniform(0.2, 2.0, n)
    x = np.r_[0.0, np.cumsum(dx)]
    y = np.r_[0.0, np.cumsum(rng.uniform(-0.5, 0.5, n) * dx)]
    return np.c_[x, y], np.c_[np.arange(n), np.arange(1, n + 1)]


def _backends():
    return ["python", "compiled"] if _backend.compiled_available("contact") else ["python"]


def _same(a, b, pos=None, segs=None):
    """Same segment, alpha and gap (to round-off of the two evaluation orders: 1e-12 on O(1)
    data). At a shared node (a corner) the two segments meeting there are the same contact: there
    the projected point and the gap are compared instead of the segment number."""
    assert (a[0] < 0) == (b[0] < 0)
    if a[0] < 0:
        return
    if a[0] != b[0] and pos is not None:
        pa = (1 - a[1]) * pos[segs[a[0], 0]] + a[1] * pos[segs[a[0], 1]]
        pb = (1 - b[1]) * pos[segs[b[0], 0]] + b[1] * pos[segs[b[0], 1]]
        assert min(a[1], 1 - a[1]) < 1e-12 and min(b[1], 1 - b[1]) < 1e-12  # both at the node
        np.testing.assert_allclose(pa, pb, rtol=0, atol=1e-12)
        np.testing.assert_allclose(a[2], b[2], rtol=0, atol=1e-12)
        return
    assert a[0] == b[0]
    np.testing.assert_allclose(a[1:3], b[1:3], rtol=0, atol=1e-12)


@pytest.mark.parametrize("backend", _backends())
def test_prepared_equals_brute_on_random_queries(backend):
    rng = np.random.default_rng(3)
    pos, segs = _surface(400, rng)
    with _backend.use(backend):  # the set keeps the kernel chosen when it is made
        surf = SegmentSet(pos, segs)
    assert surf.backend == backend
    # random points above and below (close enough, |h| <= 1e-3 with alpha in [0.01, 0.99], that
    # one segment only is under them: the nearest one is then the one answer), the two end
    # nodes, every 10th shared node (a corner) and points just beyond both ends (off the surface)
    k = rng.integers(0, 400, 300)
    a = rng.uniform(0.01, 0.99, 300)
    P = (1 - a)[:, None] * pos[segs[k, 0]] + a[:, None] * pos[segs[k, 1]]
    P[:, 1] += rng.uniform(-1e-3, 1e-3, 300)
    ends = np.r_[pos[:1], pos[-1:], pos[10:400:10], pos[:1] - [1e-3, 0], pos[-1:] + [1e-3, 0]]
    with _backend.use(backend):
        for j, p in enumerate(np.r_[P, ends]):
            hint = int(rng.integers(-5, 405)) if j % 3 == 0 else None  # also bad hints
            _same(surf.find(p, hint), surf.find_brute(p), pos, segs)
            _same(surf.find(p, hint), find_segment_brute(pos, segs, p), pos, segs)


def test_walk_from_the_previous_answer_is_local():
    """Consecutive queries along the surface: each visits a handful of segments, not the n."""
    pos, segs = _surface(10_000, np.random.default_rng(0))
    surf = SegmentSet(pos, segs)
    visited = []
    for x in np.linspace(pos[0, 0] + 1e-3, pos[-1, 0] - 1e-3, 2000):
        k = np.searchsorted(pos[:, 0], x) - 1
        a = (x - pos[k, 0]) / (pos[k + 1, 0] - pos[k, 0])
        P = (1 - a) * pos[k] + a * pos[k + 1] + [0, 1e-4]
        out = surf.find(P)
        assert out[0] == k
        visited.append(out[3])
    # 2000 points over 10000 segments: about 5 segments apart, a walk of about 6
    assert max(visited) < 50


def test_deformed_positions_and_errors():
    pos, segs = _surface(50, np.random.default_rng(1))
    surf = SegmentSet(pos, segs)
    moved = pos + [0.0, 0.3]
    P = 0.5 * (moved[20] + moved[21]) + [0, 1e-4]
    _same(surf.find(P, 0, positions=moved), surf.find_brute(P, positions=moved))
    assert surf.find(P, 0, positions=moved)[0] == 20
    with pytest.raises(ParameterError):
        surf.find(P, positions=moved[:-1])
    with pytest.raises(ContactLost):
        surf.find(pos[0] - [1.0, 0.0], raise_off=True)
    with pytest.raises(ParameterError):
        SegmentSet(np.r_[pos[:-1], [[np.nan, 0.0]]], segs)
    with pytest.raises(ParameterError):
        SegmentSet(pos, segs + 1)  # last index outside the positions
    with pytest.raises(ParameterError):
        surf.find((np.inf, 0.0))
