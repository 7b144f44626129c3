# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Node-to-segment contact search and the forward-increment sliding-contact transient, compiled.

Twin: ``contact_ref.py`` (same functions and signatures). The transient works in modal coordinates
of each substructure (spec section 8): a step costs O(n1 + n2) plus the few target nodes the search
visits. Inputs are validated by ``fesub.contact.transient``.
"""

from libc.math cimport sqrt, atan2, sin, cos, fabs

# non-aliasing pointers for the fused passes over the coordinates (the buffers are distinct): the
# compiler vectorises the loops without run-time overlap checks
cdef extern from *:
    ctypedef double* rdp "double * __restrict__"
    ctypedef const double* rcdp "const double * __restrict__"


cdef inline void _node_disp(const double[:, :, ::1] phiT, const double* eta, Py_ssize_t n2, Py_ssize_t j,
                            double* ux, double* uy) noexcept nogil:
    """Displacement of target node j from the modal coordinates eta."""
    cdef Py_ssize_t k
    cdef double sx = 0.0, sy = 0.0
    for k in range(n2):
        sx += phiT[j, 0, k] * eta[k]
        sy += phiT[j, 1, k] * eta[k]
    ux[0] = sx
    uy[0] = sy


cdef inline void _node_pos(const double[:, ::1] XT, const double[:, :, ::1] phiT, const double* eta,
                           Py_ssize_t n2, Py_ssize_t j, double* x, double* y) noexcept nogil:
    """Position of target node j: reference position plus displacement."""
    _node_disp(phiT, eta, n2, j, x, y)
    x[0] += XT[j, 0]
    y[0] += XT[j, 1]


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


cdef inline void _swap_back(double* c, double* p, double* e, double* ep, double* s, Py_ssize_t n) noexcept nogil:
    """Move the rotating buffers (current c, previous p; one of the three free) back to eta, eta_prev."""
    cdef Py_ssize_t k
    if c == e:
        return
    if c == s:           # (c, p, free) = (s, e, ep)
        for k in range(n):
            ep[k] = e[k]
            e[k] = s[k]
    else:                # (c, p, free) = (ep, s, e)
        for k in range(n):
            e[k] = ep[k]
            ep[k] = s[k]


cdef inline void _correct_predict(rcdp A, rcdp B, rcdp F, rcdp older, rdp cur, rdp out,
                                  rcdp q, double hq, Py_ssize_t n, rcdp r0, rcdp r1, rcdp r2,
                                  rcdp r3, Py_ssize_t nr, rcdp d, rdp s) noexcept nogil:
    """One pass over the n coordinates of a substructure: the corrector (29) of this step,
    cur -= sum_i d[i] r_i (cur: eta* -> eta_{n+1}), then the predictor (28) of the next one,
    out = A cur + B older + F (+ hq q) (older: eta_n), and the dot products s[i] = r_i . out of
    the first ``nr`` (2 or 4) rows r0..r3. With d = 0 it is the predictor alone (cur = eta_n,
    older = eta_{n-1})."""
    cdef Py_ssize_t k
    cdef double e, p, s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    cdef double d0 = d[0], d1 = d[1], d2 = d[2], d3 = d[3]
    if nr == 2:
        for k in range(n):
            e = cur[k] - (d0 * r0[k] + d1 * r1[k])
            cur[k] = e
            p = A[k] * e + B[k] * older[k] + F[k] + hq * q[k]
            out[k] = p
            s0 += r0[k] * p
            s1 += r1[k] * p
    else:
        for k in range(n):
            e = cur[k] - (d0 * r0[k] + d1 * r1[k] + d2 * r2[k] + d3 * r3[k])
            cur[k] = e
            p = A[k] * e + B[k] * older[k] + F[k]
            out[k] = p
            s0 += r0[k] * p
            s1 += r1[k] * p
            s2 += r2[k] * p
            s3 += r3[k] * p
    s[0] = s0; s[1] = s1; s[2] = s2; s[3] = s3


cdef inline Py_ssize_t _padded(Py_ssize_t n) noexcept nogil:
    """n rounded up to whole 64-byte lines of doubles."""
    return (n + 7) // 8 * 8


def work_size(long n1, long n2, long nseg):
    """Doubles the ``work`` argument of :func:`march` holds for n1 and n2 modal coordinates and
    nseg segments: up to 7 to reach a 64-byte boundary, five blocks of each substructure's
    coordinates (each padded to whole 64-byte lines), 10 per segment and 3 for the slave."""
    return 7 + 5 * (_padded(n1) + _padded(n2)) + 10 * nseg + 3


def march(double h, long n_steps, long dec, long i0,
          const double[::1] w2_1, const double[::1] c_1, double[::1] eta1, double[::1] eta1_prev,
          const double[:, ::1] phiC, const double[::1] f1, const double[::1] rough,
          double vx, double xc0, double yc0,
          const double[::1] w2_2, const double[::1] c_2, double[::1] eta2, double[::1] eta2_prev,
          const double[:, :, ::1] phiT, const double[:, ::1] XT, const long[:, ::1] segs,
          const double[::1] f2, double mu, double[::1] state,
          const double[:, ::1] out1, const double[:, ::1] out2,
          double[:, ::1] o_sig, double[:, ::1] o_u1, double[:, ::1] o_v1, double[:, ::1] o_a1,
          double[:, ::1] o_u2, double[:, ::1] o_v2, double[:, ::1] o_a2,
          double[::1] work, long[::1] status):
    """Forward-increment dual assembly (eqs. 26-32) in modal coordinates of both substructures.

    Substructure 1 (slider, relative to its rigid motion vx t along x) and 2 (target) are advanced
    by central differences; the slave C of 1 is projected on the target segments at the predicted
    positions, the single multiplier lambda_n closes the predicted gap, and the correction acts
    along M^-1 B_E'. ``state`` = [segment, friction sign, last tangential relative velocity, stop on
    stick (1/0), contact geometry: of the predicted deformed configuration (0), of the undeformed
    one (1) or frozen (2: segment state[0], alpha state[5] and angle state[6] held)] is read and
    updated so that the march can continue in chunks. Every ``dec``
    steps the signals are written: o_sig[j] = (t, lambda, contact x, tangential relative velocity,
    gap after the step, segment, force on the slave along x, along y); o_u/v/a = displacement,
    velocity (central), acceleration of the output rows.
    ``status`` = [steps done, reason (0 done, 1 stick, 2 detachment, 3 off surface), samples].
    ``work`` holds at least ``work_size(n1, n2, nseg)`` doubles: a third coordinate buffer per
    substructure (eta_{n-1}, eta_n and eta*/eta_{n+1} rotate instead of being copied), a copy of
    eta_{n-1} for the steps that write a sample (the corrector of a step and the predictor of the
    next are one pass, which overwrites eta_{n-1} with eta*_{n+2}), the three recursion
    coefficients of each mode, and the Gram matrices of the modal rows of each segment's
    end nodes and of the slave. The Gram matrices turn the denominator of (32) into a 4 x 4 and a
    2 x 2 quadratic form per step, and give the corrected displacements of the contact nodes (hence
    the sliding velocity) without a further pass over the modes.
    """
    cdef Py_ssize_t n1 = eta1.shape[0], n2 = eta2.shape[0]
    cdef Py_ssize_t no1 = out1.shape[0], no2 = out2.shape[0]
    cdef Py_ssize_t n, k, r, j = 0
    cdef long seg = <long>state[0], nseg = segs.shape[0], steps, prevk, j1, j2, cj1 = -1, cj2 = -1
    cdef double sgn = state[1], vt_last = state[2]
    cdef bint check_stick = state[3] != 0.0
    cdef bint ref_geom = state[4] == 1.0
    cdef bint frozen = state[4] == 2.0
    cdef bint deformed = not (ref_geom or frozen)
    # work layout (see work_size): from its first 64-byte boundary, the predicted coordinates of
    # 1 and 2, the saved eta_{n-1} of 1 and 2, then A, B, F of 1 and of 2, each block padded to
    # whole 64-byte lines so that the vector loads of the coordinate loops never straddle two
    # cache lines; then the Gram matrices
    cdef Py_ssize_t m1 = _padded(n1), m2 = _padded(n2)
    cdef Py_ssize_t w0 = ((64 - (<size_t>&work[0]) % 64) % 64) // 8 if work.shape[0] > 8 else 0
    cdef double* wnx1 = &work[w0] if work.shape[0] > 8 else NULL
    cdef double* wnx2 = wnx1 + m1
    cdef double* sv1 = wnx2 + m2
    cdef double* sv2 = sv1 + m1
    cdef double* A1 = sv2 + m2
    cdef double* B1 = A1 + m1
    cdef double* F1 = B1 + m1
    cdef double* A2 = F1 + m1
    cdef double* B2 = A2 + m2
    cdef double* F2 = B2 + m2
    # rotating coordinate buffers: current eta_n, previous eta_{n-1}, predicted/next eta_{n+1}
    cdef double* cu1 = &eta1[0]
    cdef double* pr1 = &eta1_prev[0]
    cdef double* nx1 = wnx1
    cdef double* cu2 = &eta2[0]
    cdef double* pr2 = &eta2_prev[0]
    cdef double* nx2 = wnx2
    cdef double* tmp
    cdef double t, tn1, px, py, x1, y1, x2, y2, al, g, gam, sg, cg, G1, G2, lam, num, den, h2 = h * h
    cdef double bC[6]
    cdef double bE[6]
    cdef double dxs, dys, ls
    cdef double vcx, vcy, vtx, vty, vt, xa, ya, xb, yb, xq, yq, hfr
    cdef double e0, e1, e2, ih = 1.0 / h
    cdef double c0, c1, c2, c3, d0, d1, d2, d3, cc0, cc1
    cdef double ucx, ucy, ucx_n, ucy_n, u1x, u1y, u2x, u2y, u1x_n, u1y_n, u2x_n, u2y_n
    cdef double u1x_c = 0.0, u1y_c = 0.0, u2x_c = 0.0, u2y_c = 0.0, ucx_c = 0.0, ucy_c = 0.0
    cdef const double* p0
    cdef const double* p1
    cdef const double* p2
    cdef const double* p3
    cdef long reason = 0
    cdef bint output
    cdef const double* pC0 = &phiC[0, 0]
    cdef const double* pC1 = &phiC[1, 0]
    cdef double sC[4]
    cdef double sT[4]
    cdef double dC[4]
    cdef double dT[4]
    cdef double zero[4]
    cdef Py_ssize_t gofs = w0 + 5 * (m1 + m2)
    cdef double* G
    cdef double* Gc
    if work.shape[0] < work_size(n1, n2, nseg):
        raise ValueError(f"work must hold work_size(n1, n2, nseg) = {work_size(n1, n2, nseg)} doubles")
    Gc = &work[gofs + 10 * nseg]
    with nogil:
        # recursion coefficients (28) with M = I, C = diag(c), K = diag(w^2):
        # eta* = A eta_n + B eta_{n-1} + F (+ the roughness on the slave row)
        for k in range(n1):
            A1[k] = 2.0 - h2 * w2_1[k] - h * c_1[k]
            B1[k] = h * c_1[k] - 1.0
            F1[k] = h2 * f1[k]
        for k in range(n2):
            A2[k] = 2.0 - h2 * w2_2[k] - h * c_2[k]
            B2[k] = h * c_2[k] - 1.0
            F2[k] = h2 * f2[k]
        # Gram matrices (upper triangles) of the modal rows [T_j1x, T_j1y, T_j2x, T_j2y] of every
        # segment, and of the slave rows [C_x, C_y]
        for r in range(nseg):
            G = &work[gofs + 10 * r]
            j1 = segs[r, 0]
            j2 = segs[r, 1]
            for k in range(10):
                G[k] = 0.0
            for k in range(n2):
                c0 = phiT[j1, 0, k]; c1 = phiT[j1, 1, k]; c2 = phiT[j2, 0, k]; c3 = phiT[j2, 1, k]
                G[0] += c0 * c0; G[1] += c0 * c1; G[2] += c0 * c2; G[3] += c0 * c3
                G[4] += c1 * c1; G[5] += c1 * c2; G[6] += c1 * c3
                G[7] += c2 * c2; G[8] += c2 * c3
                G[9] += c3 * c3
        Gc[0] = 0.0; Gc[1] = 0.0; Gc[2] = 0.0
        dC[2] = 0.0; dC[3] = 0.0
        zero[0] = 0.0; zero[1] = 0.0; zero[2] = 0.0; zero[3] = 0.0
        ucx_c = 0.0; ucy_c = 0.0
        for k in range(n1):
            Gc[0] += phiC[0, k] * phiC[0, k]
            Gc[1] += phiC[0, k] * phiC[1, k]
            Gc[2] += phiC[1, k] * phiC[1, k]
            ucx_c += phiC[0, k] * cu1[k]
            ucy_c += phiC[1, k] * cu1[k]
        # predictor (28) of the first step: each step's corrector pass then predicts the next
        j1 = segs[seg, 0]
        j2 = segs[seg, 1]
        hfr = h2 * rough[0] if n_steps > 0 else 0.0
        _correct_predict(A1, B1, F1, pr1, cu1, nx1, pC1, hfr, n1, pC0, pC1, NULL, NULL, 2, zero, sC)
        _correct_predict(A2, B2, F2, pr2, cu2, nx2, NULL, 0.0, n2, &phiT[j1, 0, 0], &phiT[j1, 1, 0],
                         &phiT[j2, 0, 0], &phiT[j2, 1, 0], 4, zero, sT)
        for n in range(n_steps):
            t = (i0 + n) * h
            tn1 = t + h
            output = (i0 + n) % dec == 0 and j < o_sig.shape[0]
            # --- predicted coordinates (28) eta* (in nx, from the previous step's pass) and their
            #     projections on the slave and on the nodes of the last segment
            j1 = segs[seg, 0]
            j2 = segs[seg, 1]
            ucx = sC[0]; ucy = sC[1]
            u1x = sT[0]; u1y = sT[1]; u2x = sT[2]; u2y = sT[3]
            px = xc0 + vx * tn1 + ucx
            py = yc0 + ucy
            x1 = XT[j1, 0] + u1x; y1 = XT[j1, 1] + u1y; x2 = XT[j2, 0] + u2x; y2 = XT[j2, 1] + u2y
            al = _alpha(px, py, x1, y1, x2, y2, &g)
            steps = 1
            prevk = -2
            if frozen:
                # contact row held: point and direction of the initial configuration
                al = state[5]
                gam = state[6]
            if ref_geom:
                # contact geometry of the undeformed configuration (rigid motion only)
                seg = _search_pos(XT, segs, xc0 + vx * tn1, yc0, seg, &al, &g, &steps)
                if seg < 0:
                    reason = 3
                    seg = 0
                    break
                j1 = segs[seg, 0]
                j2 = segs[seg, 1]
                _node_disp(phiT, nx2, n2, j1, &u1x, &u1y)
                _node_disp(phiT, nx2, n2, j2, &u2x, &u2y)
                x1 = XT[j1, 0] + u1x; y1 = XT[j1, 1] + u1y; x2 = XT[j2, 0] + u2x; y2 = XT[j2, 1] + u2y
                gam = atan2(XT[j2, 1] - XT[j1, 1], XT[j2, 0] - XT[j1, 0])
                steps = nseg + 1  # skip the walk below
            # --- local walk to a neighbour when the slave left the last segment
            while deformed and not (0.0 <= al < 1.0) and steps <= nseg:
                if al < 0.0 and seg > 0 and segs[seg - 1, 1] == j1 and prevk != seg - 1:
                    prevk = seg
                    seg -= 1
                elif al >= 1.0 and seg < nseg - 1 and segs[seg + 1, 0] == j2 and prevk != seg + 1:
                    prevk = seg
                    seg += 1
                else:
                    break
                j1 = segs[seg, 0]
                j2 = segs[seg, 1]
                _node_disp(phiT, nx2, n2, j1, &u1x, &u1y)
                _node_disp(phiT, nx2, n2, j2, &u2x, &u2y)
                x1 = XT[j1, 0] + u1x; y1 = XT[j1, 1] + u1y; x2 = XT[j2, 0] + u2x; y2 = XT[j2, 1] + u2y
                al = _alpha(px, py, x1, y1, x2, y2, &g)
                steps += 1
            if deformed and not (0.0 <= al < 1.0) and ((al < 0.0 and prevk == seg - 1) or (al >= 1.0 and prevk == seg + 1)):
                # between two segments at their common node (round-off or a kink): the node
                al = 0.0 if al < 0.0 else 1.0
            if deformed and not (0.0 <= al <= 1.0):
                # full scan as a fallback
                seg = -1
                for r in range(nseg):
                    _node_pos(XT, phiT, nx2, n2, segs[r, 0], &xa, &ya)
                    _node_pos(XT, phiT, nx2, n2, segs[r, 1], &xb, &yb)
                    e0 = _alpha(px, py, xa, ya, xb, yb, &e1)
                    if 0.0 <= e0 <= 1.0 and (seg < 0 or fabs(e1) < fabs(g)):
                        seg = r
                        al = e0
                        g = e1
                if seg < 0:
                    reason = 3
                    seg = 0
                    break
                j1 = segs[seg, 0]
                j2 = segs[seg, 1]
                _node_disp(phiT, nx2, n2, j1, &u1x, &u1y)
                _node_disp(phiT, nx2, n2, j2, &u2x, &u2y)
                x1 = XT[j1, 0] + u1x; y1 = XT[j1, 1] + u1y; x2 = XT[j2, 0] + u2x; y2 = XT[j2, 1] + u2y
            if deformed:
                # direction of the deformed segment: cosine and sine of its angle from its length
                # (the same numbers as cos, sin of atan2 to round-off, without the three calls)
                dxs = x2 - x1
                dys = y2 - y1
                ls = sqrt(dxs * dxs + dys * dys)
                cg = dxs / ls
                sg = dys / ls
            else:
                sg = sin(gam)
                cg = cos(gam)
            # --- coupling rows (42), (44); DOF order T1x T1y T2x T2y Cx Cy
            G1 = -sg - sgn * mu * cg
            G2 = cg - sgn * mu * sg
            bE[0] = (1 - al) * G1; bE[1] = (1 - al) * G2; bE[2] = al * G1; bE[3] = al * G2
            bE[4] = -G1; bE[5] = -G2
            bC[0] = -(1 - al) * sg; bC[1] = (1 - al) * cg; bC[2] = -al * sg; bC[3] = al * cg
            bC[4] = sg; bC[5] = -cg
            # --- lambda_n (32) with the gap of the predicted geometry: B_C U* = -gap
            num = bC[0] * x1 + bC[1] * y1 + bC[2] * x2 + bC[3] * y2 + bC[4] * px + bC[5] * py
            # den = B_C Phi Phi' B_E' from the Gram matrices (the rows are those of the segment)
            G = &work[gofs + 10 * seg]
            den = (bC[4] * (Gc[0] * bE[4] + Gc[1] * bE[5]) + bC[5] * (Gc[1] * bE[4] + Gc[2] * bE[5])
                   + bC[0] * (G[0] * bE[0] + G[1] * bE[1] + G[2] * bE[2] + G[3] * bE[3])
                   + bC[1] * (G[1] * bE[0] + G[4] * bE[1] + G[5] * bE[2] + G[6] * bE[3])
                   + bC[2] * (G[2] * bE[0] + G[5] * bE[1] + G[7] * bE[2] + G[8] * bE[3])
                   + bC[3] * (G[3] * bE[0] + G[6] * bE[1] + G[8] * bE[2] + G[9] * bE[3]))
            lam = num / (h2 * den)
            # --- corrector (29): eta_{n+1} = eta* - h^2 Phi' B_E' lambda_n, in one pass with the
            #     predictor of the next step (from the segment of this one, where the next step's
            #     search starts)
            cc0 = h2 * lam * bE[4]
            cc1 = h2 * lam * bE[5]
            dC[0] = cc0; dC[1] = cc1
            d0 = h2 * lam * bE[0]; d1 = h2 * lam * bE[1]; d2 = h2 * lam * bE[2]; d3 = h2 * lam * bE[3]
            dT[0] = d0; dT[1] = d1; dT[2] = d2; dT[3] = d3
            # corrected displacements of the slave and the contact nodes: the same correction
            # projected on their rows, i.e. through the Gram matrices
            ucx_n = ucx - (Gc[0] * cc0 + Gc[1] * cc1)
            ucy_n = ucy - (Gc[1] * cc0 + Gc[2] * cc1)
            u1x_n = u1x - (G[0] * d0 + G[1] * d1 + G[2] * d2 + G[3] * d3)
            u1y_n = u1y - (G[1] * d0 + G[4] * d1 + G[5] * d2 + G[6] * d3)
            u2x_n = u2x - (G[2] * d0 + G[5] * d1 + G[7] * d2 + G[8] * d3)
            u2y_n = u2y - (G[3] * d0 + G[6] * d1 + G[8] * d2 + G[9] * d3)
            # velocities (backward differences) of the slave and of the contact point on the target
            if j1 != cj1 or j2 != cj2:
                _node_disp(phiT, cu2, n2, j1, &u1x_c, &u1y_c)
                _node_disp(phiT, cu2, n2, j2, &u2x_c, &u2y_c)
            vcx = vx + (ucx_n - ucx_c) * ih
            vcy = (ucy_n - ucy_c) * ih
            vtx = ((1 - al) * (u1x_n - u1x_c) + al * (u2x_n - u2x_c)) * ih
            vty = ((1 - al) * (u1y_n - u1y_c) + al * (u2y_n - u2y_c)) * ih
            vt = cg * (vcx - vtx) + sg * (vcy - vty)
            cj1 = j1; cj2 = j2
            u1x_c = u1x_n; u1y_c = u1y_n; u2x_c = u2x_n; u2y_c = u2y_n
            ucx_c = ucx_n; ucy_c = ucy_n
            p0 = &phiT[j1, 0, 0]; p1 = &phiT[j1, 1, 0]; p2 = &phiT[j2, 0, 0]; p3 = &phiT[j2, 1, 0]
            if output:
                # eta_{n-1} for the output's differences: its buffer receives the next prediction
                for k in range(n1):
                    sv1[k] = pr1[k]
                for k in range(n2):
                    sv2[k] = pr2[k]
            # the last step of the call predicts without roughness a step that is never taken
            hfr = h2 * rough[n + 1] if n + 1 < n_steps else 0.0
            _correct_predict(A1, B1, F1, cu1, nx1, pr1, pC1, hfr, n1, pC0, pC1, NULL, NULL, 2, dC, sC)
            _correct_predict(A2, B2, F2, cu2, nx2, pr2, NULL, 0.0, n2, p0, p1, p2, p3, 4, dT, sT)
            # --- outputs at t_n (decimated)
            if output:
                # gap after the correction, in the corrected geometry of the same segment
                xa = XT[j1, 0] + u1x_n; ya = XT[j1, 1] + u1y_n
                xb = XT[j2, 0] + u2x_n; yb = XT[j2, 1] + u2y_n
                _alpha(xc0 + vx * tn1 + ucx_n, yc0 + ucy_n, xa, ya, xb, yb, &e2)
                o_sig[j, 0] = t
                o_sig[j, 1] = lam
                o_sig[j, 2] = (1 - al) * x1 + al * x2
                o_sig[j, 3] = vt
                o_sig[j, 4] = e2
                o_sig[j, 5] = seg
                o_sig[j, 6] = G1 * lam
                o_sig[j, 7] = G2 * lam
                for r in range(no1):
                    e0 = 0.0; e1 = 0.0; e2 = 0.0
                    for k in range(n1):
                        e0 += out1[r, k] * cu1[k]
                        e1 += out1[r, k] * (nx1[k] - sv1[k])
                        e2 += out1[r, k] * (nx1[k] - 2.0 * cu1[k] + sv1[k])
                    o_u1[j, r] = e0
                    o_v1[j, r] = e1 / (2.0 * h)
                    o_a1[j, r] = e2 / h2
                for r in range(no2):
                    e0 = 0.0; e1 = 0.0; e2 = 0.0
                    for k in range(n2):
                        e0 += out2[r, k] * cu2[k]
                        e1 += out2[r, k] * (nx2[k] - sv2[k])
                        e2 += out2[r, k] * (nx2[k] - 2.0 * cu2[k] + sv2[k])
                    o_u2[j, r] = e0
                    o_v2[j, r] = e1 / (2.0 * h)
                    o_a2[j, r] = e2 / h2
                j += 1
            # --- advance: rotate the buffers (previous <- current <- next <- free)
            tmp = pr1; pr1 = cu1; cu1 = nx1; nx1 = tmp
            tmp = pr2; pr2 = cu2; cu2 = nx2; nx2 = tmp
            # --- status: detachment or stick (sign change of the sliding velocity)
            if lam < 0.0:
                reason = 2
                n += 1
                break
            if check_stick and vt * sgn <= 0.0:
                reason = 1
                n += 1
                break
            vt_last = vt
        else:
            n = n_steps
        _swap_back(cu1, pr1, &eta1[0], &eta1_prev[0], wnx1, n1)
        _swap_back(cu2, pr2, &eta2[0], &eta2_prev[0], wnx2, n2)
    state[0] = seg
    state[1] = sgn
    state[2] = vt_last
    status[0] = n
    status[1] = reason
    status[2] = j
