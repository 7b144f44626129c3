"""NumPy twin of ``contact.pyx``: node-to-segment search and the modal forward-increment march.

Same functions, signatures and arithmetic as the compiled kernels, written with NumPy one step at a
time. See ``fesub.contact.sliding.march`` for the dense (reduced physical coordinates) form of the same
equations, which is the literal transcription of eqs. (26)-(32).
"""

from __future__ import annotations

import math

import numpy as np


def _alpha(px, py, x1, y1, x2, y2):
    dx, dy = x2 - x1, y2 - y1
    l2 = dx * dx + dy * dy
    gap = (-dy * (px - x1) + dx * (py - y1)) / math.sqrt(l2)
    return ((px - x1) * dx + (py - y1) * dy) / l2, gap


def _search(node_xy, segs, px, py, start):
    m = segs.shape[0]
    k, prev, steps = start, -2, 0
    if 0 <= k < m:
        while steps < m:
            (x1, y1), (x2, y2) = node_xy(segs[k, 0]), node_xy(segs[k, 1])
            a, g = _alpha(px, py, x1, y1, x2, y2)
            steps += 1
            if a < 0.0 and k > 0 and segs[k - 1, 1] == segs[k, 0]:
                if prev == k - 1:
                    break
                prev, k = k, k - 1
            elif a >= 1.0 and k < m - 1 and segs[k + 1, 0] == segs[k, 1]:
                if prev == k + 1:
                    break
                prev, k = k, k + 1
            else:
                if 0.0 <= a < 1.0:
                    return k, a, g, steps
                if (a < 0.0 and prev == k - 1) or (a >= 1.0 and prev == k + 1):
                    # between two segments at their common node (round-off or a kink): the node
                    return k, (0.0 if a < 0.0 else 1.0), g, steps
                break
    best, ba, bg = -1, 0.0, 0.0
    for r in range(m):
        (x1, y1), (x2, y2) = node_xy(segs[r, 0]), node_xy(segs[r, 1])
        a, g = _alpha(px, py, x1, y1, x2, y2)
        if 0.0 <= a <= 1.0 and (best < 0 or abs(g) < abs(bg)):
            best, ba, bg = r, a, g
    return best, ba, bg, steps + m


def find_segment(pos, segs, px, py, start):
    """Segment on which P projects: (segment or -1, alpha, gap, segments visited)."""
    return _search(lambda i: pos[i], segs, px, py, start)


def find_segment_brute(pos, segs, px, py):
    """Full scan: nearest segment with 0 <= alpha < 1."""
    return _search(lambda i: pos[i], segs, px, py, -1)


def work_size(n1, n2, nseg):
    """Doubles of the ``work`` argument of :func:`march` (the compiled kernel's layout; unused here)."""
    def padded(n):
        return (n + 7) // 8 * 8
    return 7 + 5 * (padded(n1) + padded(n2)) + 10 * nseg + 3


def march(h, n_steps, dec, i0, w2_1, c_1, eta1, eta1_prev, phiC, f1, rough, vx, xc0, yc0,
          w2_2, c_2, eta2, eta2_prev, phiT, XT, segs, f2, mu, state, out1, out2,
          o_sig, o_u1, o_v1, o_a1, o_u2, o_v2, o_a2, work, status):
    """Modal forward-increment march; see the compiled ``march`` for the meaning of every argument."""
    seg, sgn, vt_last = int(state[0]), float(state[1]), float(state[2])
    nseg = segs.shape[0]
    h2 = h * h
    j = 0
    reason = 0
    n_done = n_steps

    def node(s2, i):
        return XT[i] + phiT[i] @ s2

    for n in range(n_steps):
        t = (i0 + n) * h
        tn1 = t + h
        s1 = h2 * (f1 + rough[n] * phiC[1] - c_1 * (eta1 - eta1_prev) / h - w2_1 * eta1) + 2 * eta1 - eta1_prev
        s2 = h2 * (f2 - c_2 * (eta2 - eta2_prev) / h - w2_2 * eta2) + 2 * eta2 - eta2_prev
        px, py = np.array([xc0 + vx * tn1, yc0]) + phiC @ s1
        # local walk (same rules as the compiled kernel)
        steps, prevk = 0, -2
        if state[4] == 2.0:  # frozen contact row
            j1, j2 = segs[seg]
            (x1, y1), (x2, y2) = node(s2, j1), node(s2, j2)
            al, gam = state[5], state[6]
        if state[4] == 1.0:
            seg, al, g, _ = _search(lambda i: XT[i], segs, xc0 + vx * tn1, yc0, seg)
            if seg < 0:
                reason, seg, n_done = 3, 0, n
                break
            j1, j2 = segs[seg]
            (x1, y1), (x2, y2) = node(s2, j1), node(s2, j2)
            gam = math.atan2(XT[j2, 1] - XT[j1, 1], XT[j2, 0] - XT[j1, 0])
        while state[4] == 0.0:
            j1, j2 = segs[seg]
            (x1, y1), (x2, y2) = node(s2, j1), node(s2, j2)
            al, g = _alpha(px, py, x1, y1, x2, y2)
            steps += 1
            if al < 0 and seg > 0 and segs[seg - 1, 1] == j1 and prevk != seg - 1 and steps <= nseg:
                prevk, seg = seg, seg - 1
            elif al >= 1 and seg < nseg - 1 and segs[seg + 1, 0] == j2 and prevk != seg + 1 and steps <= nseg:
                prevk, seg = seg, seg + 1
            else:
                break
        if state[4] == 0.0 and not (0.0 <= al < 1.0) and (
                (al < 0.0 and prevk == seg - 1) or (al >= 1.0 and prevk == seg + 1)):
            al = 0.0 if al < 0.0 else 1.0  # at the common node of two segments
        if state[4] == 0.0 and not (0.0 <= al <= 1.0):
            r, a, gg, _ = _search(lambda i: node(s2, i), segs, px, py, -1)
            if r < 0:
                reason, seg, n_done = 3, 0, n
                break
            seg, al, g = r, a, gg
            j1, j2 = segs[seg]
            (x1, y1), (x2, y2) = node(s2, j1), node(s2, j2)
        if state[4] == 0.0:  # direction of the deformed segment from its length
            dxs, dys = x2 - x1, y2 - y1
            ls = math.sqrt(dxs * dxs + dys * dys)
            cg, sg = dxs / ls, dys / ls
        else:
            sg, cg = math.sin(gam), math.cos(gam)
        G1 = -sg - sgn * mu * cg
        G2 = cg - sgn * mu * sg
        bE = np.array([(1 - al) * G1, (1 - al) * G2, al * G1, al * G2, -G1, -G2])
        bC = np.array([-(1 - al) * sg, (1 - al) * cg, -al * sg, al * cg, sg, -cg])
        num = bC @ np.array([x1, y1, x2, y2, px, py])
        a1 = bE[4] * phiC[0] + bE[5] * phiC[1]
        a2 = bE[0] * phiT[j1, 0] + bE[1] * phiT[j1, 1] + bE[2] * phiT[j2, 0] + bE[3] * phiT[j2, 1]
        den = (bC[4] * phiC[0] + bC[5] * phiC[1]) @ a1 + (
            bC[0] * phiT[j1, 0] + bC[1] * phiT[j1, 1] + bC[2] * phiT[j2, 0] + bC[3] * phiT[j2, 1]) @ a2
        lam = num / (h2 * den)
        s1 = s1 - h2 * lam * a1
        s2 = s2 - h2 * lam * a2
        vc = np.array([vx, 0.0]) + phiC @ (s1 - eta1) / h
        wT = (1 - al) * phiT[j1] + al * phiT[j2]
        vtg = wT @ (s2 - eta2) / h
        vt = cg * (vc[0] - vtg[0]) + sg * (vc[1] - vtg[1])
        if (i0 + n) % dec == 0 and j < o_sig.shape[0]:
            (xa, ya), (xb, yb) = node(s2, j1), node(s2, j2)
            xq, yq = np.array([xc0 + vx * tn1, yc0]) + phiC @ s1
            _, e2 = _alpha(xq, yq, xa, ya, xb, yb)
            o_sig[j] = (t, lam, (1 - al) * x1 + al * x2, vt, e2, seg, G1 * lam, G2 * lam)
            o_u1[j] = out1 @ eta1
            o_v1[j] = out1 @ (s1 - eta1_prev) / (2 * h)
            o_a1[j] = out1 @ (s1 - 2 * eta1 + eta1_prev) / h2
            o_u2[j] = out2 @ eta2
            o_v2[j] = out2 @ (s2 - eta2_prev) / (2 * h)
            o_a2[j] = out2 @ (s2 - 2 * eta2 + eta2_prev) / h2
            j += 1
        eta1_prev[:] = eta1
        eta1[:] = s1
        eta2_prev[:] = eta2
        eta2[:] = s2
        if lam < 0.0:
            reason, n_done = 2, n + 1
            break
        if state[3] != 0.0 and vt * sgn <= 0.0:
            reason, n_done = 1, n + 1
            break
        vt_last = vt
    state[0], state[1], state[2] = seg, sgn, vt_last
    status[0], status[1], status[2] = n_done, reason, j
