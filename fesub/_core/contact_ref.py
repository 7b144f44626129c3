"""NumPy twin of ``contact.pyx``: node-to-segment search over explicit node positions.

Same functions, signatures and arithmetic as the compiled kernel.
"""

from __future__ import annotations

import math



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
