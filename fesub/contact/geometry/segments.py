"""Node-to-segment geometry and the coupling rows of a sliding frictional contact (eqs. 34-44)."""

from __future__ import annotations

import math

import numpy as np

from ..._backend import kernels
from ...errors import ContactLost, ModelError, ParameterError, check_count

__all__ = ["coupling_rows", "project", "find_segment", "find_segment_brute", "SegmentSet"]


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
    (positive on the side of the left-hand normal of Q1->Q2).

    Parameters
    ----------
    P : (2,) array_like
        The point (x, y) (m).
    Q1, Q2 : (2,) array_like
        Ends of the segment (m), distinct.

    Returns
    -------
    alpha : float
        Coordinate of the projection of P on the line Q1-Q2 (dimensionless: 0 at Q1, 1 at Q2,
        outside [0, 1] beyond the ends).
    gap : float
        Signed normal distance of P from the line (m), positive on the left of Q1->Q2.
    gamma : float
        Angle of Q1->Q2 with the x axis (rad).
    """
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

    Parameters
    ----------
    pos : (n, 2) array
        Node positions (x, y) of the target surface (m).
    segs : (m, 2) int array
        Segments as node pairs (indices into ``pos``), consecutive segments sharing a node.
    P : (2,) array_like
        The slave point (x, y) (m).
    start : int, optional
        Segment where the walk begins (a hint, typically the previous answer); an index out of
        range means 0.
    raise_off : bool, optional
        Raise :class:`ContactLost` instead of returning segment -1 when P is off the surface.

    Returns
    -------
    segment : int
        Index of the segment under P, or -1.
    alpha : float
        Coordinate of the projection on that segment (dimensionless, 0 at its first node, 1 at
        its second).
    gap : float
        Signed normal distance of P from the segment (m), positive on the side of its left-hand
        normal.
    visited : int
        Number of segments examined (dimensionless count).
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


class SegmentSet:
    """A target surface prepared once for node-to-segment searches at O(1) cost per query.

    :func:`find_segment` validates the whole surface (finite positions, node indices in range) on
    every call, O(n) in the number of segments; in a march or over contact positions the surface
    is the same from call to call. A ``SegmentSet`` does that validation once: each
    :meth:`find` then costs the local walk of the search kernel from the hint (a few segments when
    the hint is the previous answer), independent of the size of the surface.

    Parameters
    ----------
    positions : (n, 2) array
        Node coordinates (x, y) in m.
    segments : (m, 2) int array
        Node indices (into ``positions``) of each segment T1 -> T2, consecutive segments sharing a
        node for the walk to move along them.

    Attributes
    ----------
    positions, segments : the validated, contiguous arrays (read-only).
    backend : str
        'compiled' or 'python': the search kernel chosen (by :func:`fesub._backend.kernels`) when
        the set was made, used by every query.
    hint : int
        Segment of the last successful :meth:`find`, the default start of the next one.

    Examples
    --------
    >>> surf = SegmentSet(xy, segs)                     # doctest: +SKIP
    >>> seg, alpha, gap, visited = surf.find((0.1, 0.0))  # doctest: +SKIP
    """

    def __init__(self, positions, segments):
        pos, segs = _prep(positions, segments)
        pos.setflags(write=False)
        segs.setflags(write=False)
        self.positions, self.segments = pos, segs
        self.hint = 0
        # the kernel in force when the set is made (compiled, or the NumPy twin): resolved once,
        # the chooser's cost would otherwise dominate a query
        self._kernel = kernels("contact")
        self.backend = "python" if self._kernel.__name__.endswith("_ref") else "compiled"

    def __len__(self) -> int:
        return int(self.segments.shape[0])

    def find(self, P, hint: int | None = None, *, positions=None, raise_off: bool = False):
        """Segment under the slave point ``P`` (x, y in m) by a local walk from ``hint``.

        Parameters
        ----------
        P : (2,) array
            Slave point (m).
        hint : int, optional
            Segment where the walk starts (default: the last answer); any integer, out-of-range
            ones mean 0.
        positions : (n, 2) float array, optional
            Current (deformed) node positions in m, same node numbering as the prepared ones; only
            their shape is checked (O(1)): finite values are the caller's responsibility.
        raise_off : bool
            Raise :class:`ContactLost` instead of returning segment -1 when P projects on no
            segment.

        Returns
        -------
        (segment or -1, alpha (0..1), gap in m, segments visited), as :func:`find_segment`.
        """
        try:
            px, py = (float(v) for v in P)
        except (TypeError, ValueError):
            px = py = math.nan
        if not (math.isfinite(px) and math.isfinite(py)):
            _point(P)  # raises the error naming what is wrong
        m = self.segments.shape[0]
        k = self.hint if hint is None else int(hint)
        k = k if 0 <= k < m else 0
        pos = self.positions
        if positions is not None:
            pos = np.ascontiguousarray(positions, dtype=float)
            if pos.shape != self.positions.shape:
                raise ParameterError(f"positions must have the prepared shape {self.positions.shape}, "
                                     f"got {pos.shape}")
        out = self._kernel.find_segment(pos, self.segments, px, py, k)
        if out[0] >= 0:
            self.hint = int(out[0])
        elif raise_off:
            raise ContactLost(f"slave point {[px, py]} is off the target surface")
        return out

    def find_brute(self, P, *, positions=None):
        """Full-scan reference of :meth:`find` (every segment examined, O(n))."""
        P = _point(P)
        pos = self.positions if positions is None else _prep(positions, self.segments)[0]
        return self._kernel.find_segment_brute(pos, self.segments, float(P[0]), float(P[1]))
