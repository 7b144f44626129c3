"""Node-to-segment geometry and the coupling rows of a sliding frictional contact (eqs. 34-44)."""

from __future__ import annotations

import numpy as np

from .._backend import kernels
from ..errors import ContactLost, ModelError, ParameterError, check_count

__all__ = ["coupling_rows", "project", "find_segment", "find_segment_brute"]


def coupling_rows(alpha: float, gamma: float, mu: float = 0.0, sign: float = 1.0):
    """Rows of B_E and B_C for a slave C on segment T1-T2 (DOF order T1x, T1y, T2x, T2y, Cx, Cy).

    Parameters
    ----------
    alpha : position of the contact point on the segment (0 at T1, 1 at T2).
    gamma : angle of T1->T2 with the x axis (rad).
    mu : friction coefficient.
    sign : sign of the slave's tangential velocity relative to the target (the friction force on
        the slave opposes it).

    Returns
    -------
    bE, bC : (6,) arrays. With g = -B_E' lambda the interface force and lambda > 0 in compression,
    the force on C is lambda (G1, G2), G1 = -sin g - sign mu cos g, G2 = cos g - sign mu sin g
    (eq. 39 with the sign chosen to oppose sliding); B_C is B_E at mu = 0 (eq. 44) and
    B_C U = -gap for positions U.
    """
    if not (np.isfinite(mu) and mu >= 0):
        raise ParameterError(f"friction coefficient mu must be finite and >= 0, got {mu}")
    if not (np.isfinite(alpha) and np.isfinite(gamma) and np.isfinite(sign)):
        raise ParameterError(f"alpha, gamma and sign must be finite, got {alpha}, {gamma}, {sign}")
    s, c = np.sin(gamma), np.cos(gamma)
    G1 = -s - sign * mu * c
    G2 = c - sign * mu * s
    a = alpha
    bE = np.array([(1 - a) * G1, (1 - a) * G2, a * G1, a * G2, -G1, -G2])
    bC = np.array([-(1 - a) * s, (1 - a) * c, -a * s, a * c, s, -c])
    return bE, bC


def project(P, Q1, Q2):
    """(alpha, gap, gamma) of point P on segment Q1-Q2: eq. (34)/(36) and the normal distance
    (positive on the side of the left-hand normal of Q1->Q2)."""
    P, Q1, Q2 = (np.asarray(v, float) for v in (P, Q1, Q2))
    d = Q2 - Q1
    l2 = d @ d
    if l2 <= 0:
        raise ParameterError("degenerate segment of zero length")
    alpha = ((P - Q1) @ d) / l2
    gap = (-d[1] * (P[0] - Q1[0]) + d[0] * (P[1] - Q1[1])) / np.sqrt(l2)
    return alpha, gap, np.arctan2(d[1], d[0])


def segment_at_x(pos, segs, s: float) -> tuple[int, float]:
    """Segment and local coordinate alpha (0..1) of the surface point at x = ``s`` (m) of the
    polyline ``pos[segs]``; a :class:`ModelError` when ``s`` lies outside it."""
    for k, (a, b) in enumerate(segs):
        x1, x2 = pos[a, 0], pos[b, 0]
        if min(x1, x2) <= s <= max(x1, x2) and x1 != x2:
            alpha = (s - x1) / (x2 - x1)
            if alpha < 1.0 or k == len(segs) - 1:
                return k, alpha
    raise ModelError(f"contact position s = {s} m is not on the target surface "
                     f"(x from {pos[:, 0].min():.4g} to {pos[:, 0].max():.4g} m)")


def _prep(pos, segs):
    pos = np.ascontiguousarray(pos, dtype=float)
    segs = np.ascontiguousarray(segs, dtype=np.int64)
    if pos.ndim != 2 or pos.shape[1] != 2:
        raise ParameterError(f"positions must be (n, 2), got {pos.shape}")
    if segs.ndim != 2 or segs.shape[1] != 2 or segs.shape[0] == 0:
        raise ParameterError(f"segments must be a non-empty (m, 2) array, got {segs.shape}")
    if segs.min() < 0 or segs.max() >= pos.shape[0]:
        raise ParameterError("segment node index outside the positions array")
    if not np.all(np.isfinite(pos)):
        raise ParameterError("target positions contain NaN or inf")
    return pos, segs


def _point(P) -> np.ndarray:
    try:
        P = np.asarray(P, dtype=float)
    except (TypeError, ValueError):
        raise ParameterError(f"slave point must be 2 coordinates (x, y) in m, got {P!r}") from None
    if P.shape != (2,):
        raise ParameterError(f"slave point must have 2 coordinates (x, y), got shape {P.shape}")
    if not np.all(np.isfinite(P)):
        raise ParameterError("slave position contains NaN or inf")
    return P


def find_segment(pos, segs, P, start: int = 0, *, raise_off: bool = False):
    """Master segment under slave point P by a local walk from ``start`` (full scan as fallback).

    Returns (segment, alpha, gap, segments visited); segment = -1 when P projects on no segment
    (or raises :class:`ContactLost` with ``raise_off=True``).
    """
    pos, segs = _prep(pos, segs)
    P = _point(P)
    # start is only a hint of where to begin the walk: any integer, out-of-range ones mean 0
    start = check_count("start", start, lo=-(2**62))
    start = start if 0 <= start < segs.shape[0] else 0
    out = kernels("contact").find_segment(pos, segs, float(P[0]), float(P[1]), start)
    if out[0] < 0 and raise_off:
        raise ContactLost(f"slave point {P.tolist()} is off the target surface")
    return out


def find_segment_brute(pos, segs, P):
    """Full-scan reference of :func:`find_segment`."""
    pos, segs = _prep(pos, segs)
    P = _point(P)
    return kernels("contact").find_segment_brute(pos, segs, float(P[0]), float(P[1]))
