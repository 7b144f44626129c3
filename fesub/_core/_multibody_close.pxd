# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The close of a step of the multibody march (``multibody.pyx``) for several slave nodes, or one
with the work accounts: each node's forces, the gap after the step (on the output grid), the slip
of the step, the works of its forces and its state. Raw C arrays of the march's work space and of
its node state arrays, validated by the caller.
"""

from libc.math cimport NAN
from fesub._core._multibody_nodes cimport Nodes, driven_disp, node_disp, cached_disp
from fesub._core._multibody_search cimport segment_frame
from fesub._core._multibody_one cimport node_state, count_change


cdef struct Close:
    # the arrays of the close (set once, after the work layout of the march)
    Nodes* ss           # slave and master node sets
    Nodes* ms
    const double* mX    # (M, 2) reference positions of the master nodes
    double* lam         # (m, 2) out: forces of the step (normal, tangential)
    long* code          # (m) in/out: state (0 open, 1 stick, 2 slip+, 3 slip-)
    long* oldc          # (m) the states before the step
    long* changes       # (m) in/out: state changes
    const long* off     # (m) 1: off its master surface
    double* alpha       # (m) in: contact coordinate of the search, out: the slip of the step
    const double* gnv   # (m, 4) frame of the search (nx, ny, tx, ty)
    double* gap         # (m) out: the gap after the step (NaN off the grid)
    const long* ab      # (m, 2) master nodes of each slave's segment
    const long* idx     # (na) slave node of each node on its surface
    const double* lall  # (2 na) forces of the nodes on their surface
    const double* mu    # (m) coefficients
    const double* mun   # (m) with ``laws``: the coefficient of each node at the cone's edge
    const long* node_itf    # (m) interface of each slave node
    double* fsum        # (n_itf, 4) per-interface sums of the works
    double* acc         # (4) in/out: damping loss, external work, friction dissipation, impact loss
    double** SU         # (3) slave displacements of the three rotating states
    double** MC         # (4) stamped caches of master node displacements (three states, e*)
    long** MS           # (4) their stamps
    Py_ssize_t m
    Py_ssize_t n_itf
    bint fast           # one slave node (its displacements after the step in the caches)
    bint accounts       # the works
    bint laws           # several nodes with laws beyond one coefficient


cdef inline void node_works(Nodes* ss, Nodes* ms, Py_ssize_t i, Py_ssize_t ia, Py_ssize_t ib, double al,
                            double nx, double ny, double tx, double ty, double ln, double lt, double ax, double ay,
                            double bx, double by, const double* Ep, double tt_p, double tt_x, Py_ssize_t s, long n,
                            const double* sux, const double* sup, double* mcp, long* msp, double* f4) noexcept nogil:
    """Add the works over step n of slave node i's forces (ln, lt; frame n, t; contact coordinate
    al on the master nodes ia, ib, displaced by (ax, ay), (bx, by) after the step; sux, sup the
    slave displacements after the step and at n - 1) to its interface's sums f4: the tangential
    and the normal force on the relative motion n-1 -> n+1, the normal and the tangential force
    on the driven part of that motion."""
    cdef double cx0, cy0, cx1, cy1, r2x, r2y, r3x, r3y, dx, dy, ex, ey
    # motion over the two half steps n-1 -> n+1 (the power of the step's forces)
    cached_disp(ms, ia, Ep, tt_p, s, n - 1, mcp, msp, &cx0, &cy0)
    cached_disp(ms, ib, Ep, tt_p, s, n - 1, mcp, msp, &cx1, &cy1)
    r2x = (sux[2 * i] - sup[2 * i]) - ((1 - al) * (ax - cx0) + al * (bx - cx1))
    r2y = (sux[2 * i + 1] - sup[2 * i + 1]) - ((1 - al) * (ay - cy0) + al * (by - cy1))
    # motion of the prescribed coordinates over them (the drive's work)
    driven_disp(ss, i, tt_x, s + 2, &dx, &dy)
    driven_disp(ss, i, tt_p, s, &ex, &ey)
    r3x = dx - ex
    r3y = dy - ey
    driven_disp(ms, ia, tt_x, s + 2, &dx, &dy)
    driven_disp(ms, ia, tt_p, s, &ex, &ey)
    cx0 = dx - ex
    cy0 = dy - ey
    driven_disp(ms, ib, tt_x, s + 2, &dx, &dy)
    driven_disp(ms, ib, tt_p, s, &ex, &ey)
    r3x = r3x - ((1 - al) * cx0 + al * (dx - ex))
    r3y = r3y - ((1 - al) * cy0 + al * (dy - ey))
    f4[0] += lt * (r2x * tx + r2y * ty)
    f4[1] += ln * (r2x * nx + r2y * ny)
    f4[2] += ln * (r3x * nx + r3y * ny)
    f4[3] += lt * (r3x * tx + r3y * ty)


cdef inline void close_nodes(Close* C, Py_ssize_t na, const double* Ep, const double* En, const double* Ex,
                             double tt_p, double tt_n, double tt_x, Py_ssize_t s, long n, long slot_p, long slot_n,
                             long slot_x, bint grid, double mul, double cx0, double cy0, double cx1, double cy1,
                             long* stop_lift, long* stop_stick) noexcept nogil:
    """Close step n (states ``Ep``, ``En``, ``Ex`` in the slots p, n, x; times tt_p, tt_n, tt_x)
    for every slave node: its forces from those of the ``na`` nodes on their surface, the gap
    after the step on the output grid (``grid``), the slip of the step, the works (with
    ``accounts``: into ``acc``), the state and its change (``stop_lift``, ``stop_stick``). One node
    (``fast``): the coefficient ``mul`` its step reached the cone's edge at, and on its surface the
    displacements (cx0, cy0), (cx1, cy1) of its master nodes at the state n from its search."""
    cdef Py_ssize_t i, p, r, k, ia, ib
    cdef double al, nx, ny, tx, ty, ax, ay, bx, by, g, rx, ry, rt0, ln, lt, a1, ex, ey, dx, dy
    cdef long st
    cdef double* sux = C.SU[slot_x]
    cdef double* sun = C.SU[slot_n]
    cdef const double* mX = C.mX
    for k in range(4 * C.n_itf):
        C.fsum[k] = 0.0
    for i in range(C.m):
        C.oldc[i] = C.code[i]
        C.lam[2 * i] = 0.0
        C.lam[2 * i + 1] = 0.0
    for p in range(na):
        C.lam[2 * C.idx[p]] = C.lall[2 * p]
        C.lam[2 * C.idx[p] + 1] = C.lall[2 * p + 1]
    for i in range(C.m):
        ia = C.ab[2 * i]
        ib = C.ab[2 * i + 1]
        al = C.alpha[i]
        nx = C.gnv[4 * i]
        ny = C.gnv[4 * i + 1]
        tx = C.gnv[4 * i + 2]
        ty = C.gnv[4 * i + 3]
        if C.fast:  # (``update_one`` put the displacements after the step of ia, ib in the cache)
            ax = C.MC[slot_x][2 * ia]
            ay = C.MC[slot_x][2 * ia + 1]
            bx = C.MC[slot_x][2 * ib]
            by = C.MC[slot_x][2 * ib + 1]
        else:
            node_disp(C.ss, i, Ex, tt_x, s + 2, &sux[2 * i], &sux[2 * i + 1])
            cached_disp(C.ms, ia, Ex, tt_x, s + 2, n + 1, C.MC[slot_x], C.MS[slot_x], &ax, &ay)
            cached_disp(C.ms, ib, Ex, tt_x, s + 2, n + 1, C.MC[slot_x], C.MS[slot_x], &bx, &by)
        g = NAN  # the gap after the step: an output only (off the grid, formed if a stop needs it)
        if grid and not C.off[i]:
            segment_frame(C.ss.X[2 * i] + sux[2 * i], C.ss.X[2 * i + 1] + sux[2 * i + 1],
                          mX[2 * ia] + ax, mX[2 * ia + 1] + ay, mX[2 * ib] + bx, mX[2 * ib + 1] + by,
                          &a1, &g, &ex, &ey, &dx, &dy)
        # slip of the step (against the state n; one node on its surface: the search's)
        if not C.fast or C.off[i]:
            cached_disp(C.ms, ia, En, tt_n, s + 1, n, C.MC[slot_n], C.MS[slot_n], &cx0, &cy0)
            cached_disp(C.ms, ib, En, tt_n, s + 1, n, C.MC[slot_n], C.MS[slot_n], &cx1, &cy1)
        rx = (sux[2 * i] - sun[2 * i]) - ((1 - al) * (ax - cx0) + al * (bx - cx1))
        ry = (sux[2 * i + 1] - sun[2 * i + 1]) - ((1 - al) * (ay - cy0) + al * (by - cy1))
        rt0 = rx * tx + ry * ty
        ln = C.lam[2 * i]
        lt = C.lam[2 * i + 1]
        if C.accounts:
            node_works(C.ss, C.ms, i, ia, ib, al, nx, ny, tx, ty, ln, lt, ax, ay, bx, by, Ep, tt_p, tt_x, s, n,
                       sux, C.SU[slot_p], C.MC[slot_p], C.MS[slot_p], &C.fsum[4 * C.node_itf[i]])
        st = node_state(ln, lt, mul if C.fast else (C.mun[i] if C.laws else C.mu[i]), rt0)
        count_change(st, C.oldc[i], &C.changes[i], stop_lift, stop_stick)
        C.code[i] = st
        C.gap[i] = g
        C.alpha[i] = rt0  # the slip of the step, for the output
    for r in range(C.n_itf if C.accounts else 0):
        C.acc[2] -= 0.5 * C.fsum[4 * r]
        C.acc[3] -= 0.5 * C.fsum[4 * r + 1]
        C.acc[1] -= 0.5 * (C.fsum[4 * r + 2] + C.fsum[4 * r + 3])
