# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Node-to-segment contact search over explicit node positions, compiled.

Twin: ``contact_ref.py`` (same functions and signatures). A local walk along the polyline of
segments from a starting segment, with a full scan as the fallback; used by
:class:`fesub.contact.geometry.SegmentSet` (the engine's own step loop searches in its kernel).
Inputs are validated by the caller.
"""

from libc.math cimport sqrt, fabs


cdef inline double _alpha(double px, double py, double x1, double y1, double x2, double y2,
                          double* gap) noexcept nogil:
    """Projection parameter of P on segment 1-2 (0 at node 1, 1 at node 2); gap = normal distance
    (positive on the side of the left-hand normal of 1->2)."""
    cdef double dx = x2 - x1, dy = y2 - y1
    cdef double l2 = dx * dx + dy * dy
    cdef double l = sqrt(l2)
    gap[0] = (-(dy) * (px - x1) + dx * (py - y1)) / l
    return ((px - x1) * dx + (py - y1) * dy) / l2


cdef long _search_pos(const double[:, ::1] pos, const long[:, ::1] segs, double px, double py,
                      long start, double* alpha, double* gap, long* visited) noexcept nogil:
    """Local walk from ``start`` over explicit node positions; full scan as a fallback."""
    cdef long m = segs.shape[0]
    cdef long k = start, prev = -2, steps = 0, best = -1
    cdef double a, g, bestg = 1e300
    visited[0] = 0
    if 0 <= k < m:
        while steps < m:
            a = _alpha(px, py, pos[segs[k, 0], 0], pos[segs[k, 0], 1],
                       pos[segs[k, 1], 0], pos[segs[k, 1], 1], &g)
            steps += 1
            if a < 0.0 and k > 0 and segs[k - 1, 1] == segs[k, 0]:
                if prev == k - 1:
                    break
                prev = k
                k -= 1
            elif a >= 1.0 and k < m - 1 and segs[k + 1, 0] == segs[k, 1]:
                if prev == k + 1:
                    break
                prev = k
                k += 1
            else:
                if 0.0 <= a < 1.0:
                    visited[0] = steps
                    alpha[0] = a
                    gap[0] = g
                    return k
                if (a < 0.0 and prev == k - 1) or (a >= 1.0 and prev == k + 1):
                    # between two segments at their common node (round-off or a kink): the node
                    visited[0] = steps
                    alpha[0] = 0.0 if a < 0.0 else 1.0
                    gap[0] = g
                    return k
                break
    for k in range(m):  # fallback: full scan, nearest admissible segment
        a = _alpha(px, py, pos[segs[k, 0], 0], pos[segs[k, 0], 1],
                   pos[segs[k, 1], 0], pos[segs[k, 1], 1], &g)
        if 0.0 <= a <= 1.0 and fabs(g) < bestg:
            bestg = fabs(g)
            best = k
            alpha[0] = a
            gap[0] = g
    visited[0] = steps + m
    return best


def find_segment(const double[:, ::1] pos, const long[:, ::1] segs, double px, double py, long start):
    """Segment of ``segs`` (node pairs into ``pos``) on which P = (px, py) projects.

    Returns (segment or -1 when P is off the surface, alpha, gap, segments visited).
    """
    cdef double a = 0.0, g = 0.0
    cdef long v = 0, k
    with nogil:
        k = _search_pos(pos, segs, px, py, start, &a, &g, &v)
    return k, a, g, v


def find_segment_brute(const double[:, ::1] pos, const long[:, ::1] segs, double px, double py):
    """Full scan (reference for the local walk): nearest segment with 0 <= alpha < 1."""
    cdef double a = 0.0, g = 0.0
    cdef long v = 0, k
    with nogil:
        k = _search_pos(pos, segs, px, py, -1, &a, &g, &v)
    return k, a, g, v
