# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Contact search of the multibody march: the frame of a slave node on a master segment and the
local walk along the master surface. Raw C arrays, validated by the caller.
"""

from libc.math cimport fabs, sqrt
from fesub._core._multibody_nodes cimport Nodes, cached_disp


cdef inline void segment_frame(double px, double py, double ax, double ay, double bx, double by,
                        double* alpha, double* gap, double* nx, double* ny, double* tx, double* ty) noexcept nogil:
    """Coordinate alpha of the projection of P on A -> B, signed gap along the left normal,
    unit normal and tangent (``interface.frames``). alpha = (r . d) / |d|^2, its division beside
    the root and the tangent's (the step's chain of dependent operations runs through here: a
    division after the tangent's would lengthen it); the tangent d / |d| (exact for a segment
    along an axis)."""
    cdef double dx = bx - ax, dy = by - ay
    cdef double l2 = dx * dx + dy * dy  # (no over- or underflow at lengths of a mesh)
    cdef double ln = sqrt(l2)
    cdef double rx = px - ax, ry = py - ay
    alpha[0] = (rx * dx + ry * dy) / l2
    tx[0] = dx / ln
    ty[0] = dy / ln
    nx[0] = -ty[0]
    ny[0] = tx[0]
    gap[0] = rx * nx[0] + ry * ny[0]


cdef inline double _walk_alpha(double px, double py, double x1, double y1, double x2, double y2,
                               double* gap) noexcept nogil:
    """Projection parameter and gap as the search kernel computes them (``contact._alpha``)."""
    cdef double dx = x2 - x1, dy = y2 - y1
    cdef double l2 = dx * dx + dy * dy
    cdef double l = sqrt(l2)
    gap[0] = (-(dy) * (px - x1) + dx * (py - y1)) / l
    return ((px - x1) * dx + (py - y1) * dy) / l2


cdef inline long segment_walk(Nodes* ms, const long* segs, long lo, long m, double px, double py, long start,
                const double* e, double tt, Py_ssize_t row, long stamp, double* C, long* S) noexcept nogil:
    """Segment (local index in lo..lo+m) under P by the local walk from ``start`` over the master
    positions of state e, full scan as a fallback (``contact._search_pos``); -1 when off."""
    cdef long k = start, prev = -2, steps = 0, best = -1
    cdef double a, g, bestg = 1e300, x1, y1, x2, y2
    cdef const long* sg
    if 0 <= k < m:
        while steps < m:
            sg = &segs[2 * (lo + k)]
            cached_disp(ms, sg[0], e, tt, row, stamp, C, S, &x1, &y1)
            cached_disp(ms, sg[1], e, tt, row, stamp, C, S, &x2, &y2)
            a = _walk_alpha(px, py, ms.X[2 * sg[0]] + x1, ms.X[2 * sg[0] + 1] + y1,
                            ms.X[2 * sg[1]] + x2, ms.X[2 * sg[1] + 1] + y2, &g)
            steps += 1
            if a < 0.0 and k > 0 and segs[2 * (lo + k - 1) + 1] == sg[0]:
                if prev == k - 1:
                    break
                prev = k
                k -= 1
            elif a >= 1.0 and k < m - 1 and segs[2 * (lo + k + 1)] == sg[1]:
                if prev == k + 1:
                    break
                prev = k
                k += 1
            else:
                if 0.0 <= a < 1.0:
                    return k
                if (a < 0.0 and prev == k - 1) or (a >= 1.0 and prev == k + 1):
                    return k
                break
    for k in range(m):
        sg = &segs[2 * (lo + k)]
        cached_disp(ms, sg[0], e, tt, row, stamp, C, S, &x1, &y1)
        cached_disp(ms, sg[1], e, tt, row, stamp, C, S, &x2, &y2)
        a = _walk_alpha(px, py, ms.X[2 * sg[0]] + x1, ms.X[2 * sg[0] + 1] + y1,
                        ms.X[2 * sg[1]] + x2, ms.X[2 * sg[1] + 1] + y2, &g)
        if 0.0 <= a <= 1.0 and fabs(g) < bestg:
            bestg = fabs(g)
            best = k
    return best
