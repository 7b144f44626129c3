"""Interfaces between the reduced bodies of a multibody contact model.

:class:`ContactInterface`: node-to-segment frictional contact. Each slave node of one body is
searched, every step, on a polyline of master segments of another body in its deformed position
(:class:`~fesub.contact.geometry.SegmentSet`, a local walk from the previous answer). The slave
node gives one normal and one tangential row: with ``P`` the slave, ``A -> B`` the master segment
under it, ``alpha`` the coordinate of the projection of ``P`` on it (0 at A, 1 at B),
``t = (B - A)/|B - A|`` and ``n = (-t_y, t_x)`` (the left-hand normal, pointing to the open side),

    normal row:      n . (dP - (1 - alpha) dA - alpha dB)     (the change of the gap, m)
    tangential row:  t . (dP - (1 - alpha) dA - alpha dB)     (the slip of P along the master, m)

for displacement increments d(.); the gap is ``n . (P - A)`` (> 0 open). The multipliers are the
forces of the master on the slave along ``n`` (normal, > 0 in compression) and ``t`` (tangential),
in N; the master receives the opposite forces, shared (1 - alpha, alpha) between A and B.

:class:`TiedInterface`: bonded nodes, whose displacements are equal at all times. A tie is
enforced exactly by primal assembly (the tied coordinates become one coordinate of the assembled
bodies, see :mod:`fesub.contact.multibody`), not by multipliers.

Units: SI (m, N).
"""

from __future__ import annotations

import numpy as np

from ...errors import ModelError, ParameterError
from .checks import node_array
from .friction import Coulomb, law_arrays, node_laws

__all__ = ["ContactInterface", "TiedInterface"]


class ContactInterface:
    """Node-to-segment frictional contact of slave nodes of one body on segments of another.

    Parameters
    ----------
    slave_body, master_body : int or str
        The bodies (index in the model, or name).
    slave_nodes : int sequence
        Nodes of the slave body in contact (each gives one normal and one tangential row).
    master_segments : (s, 2) int array
        Node pairs (A, B) of the master body; the open side is to the left of A -> B (for a
        surface running in +x the open side is +y). Consecutive segments share a node.
    mu : float or sequence, optional
        Coulomb friction coefficient (>= 0), one for all slave nodes or one per node; default 0.
        The same as ``friction=Coulomb(mu)``.
    friction : law or sequence of laws, optional
        Friction law (:mod:`fesub.contact.engine.friction`): ``Coulomb``, ``StaticKinetic``
        (stick while ``|lambda_t| <= mu_s lambda_n``, slip at ``mu_k``), ``Stribeck`` (slip at
        ``mu(v)`` of the step's slip speed v, m/s) or ``UserLaw`` (a callable ``mu(v)``), one for
        all slave nodes or one per node. Not with ``mu`` (one error when both are given, unless
        every law is a ``Coulomb`` of the same coefficients). The compiled march takes the
        built-in laws, each node its own; a ``UserLaw`` runs in the Python step loop (the slower
        path; ``info['python_loop_reason']`` of the result says so).
    name : str, optional
        Label of the interface in results.
    geometry : 'deformed' (default), 'undeformed' or 'frozen'
        Where the contact frame (segment, alpha, n, t) is taken: at the predicted deformed
        positions every step; at the positions of the drives' motion alone (undeformed bodies
        moved by their prescribed motion: a linear, time-varying constraint); or the frame of the
        initial configuration held (see :mod:`fesub.contact.engine.contacts`). The last two run
        in the Python step loop.
    """

    def __init__(self, slave_body, slave_nodes, master_body, master_segments, mu=None, *, name: str | None = None,
                 geometry: str = "deformed", friction=None):
        self.slave_body, self.master_body = slave_body, master_body
        self.slave_nodes = node_array("slave_nodes", slave_nodes)
        segs = np.asarray(master_segments)
        if segs.ndim != 2 or segs.shape[1] != 2 or segs.shape[0] == 0 or segs.dtype.kind not in "iu":
            raise ParameterError(f"master_segments must be a non-empty (s, 2) integer array, got {master_segments!r}")
        if np.any(segs[:, 0] == segs[:, 1]):
            raise ParameterError("a master segment joins a node to itself")
        self.master_segments = segs.astype(np.int64)
        given = mu is not None
        mu = 0.0 if mu is None else mu
        try:
            mu = np.asarray(mu, dtype=float)
        except (TypeError, ValueError):
            raise ParameterError(f"mu must be real numbers >= 0, got {mu!r:.60}") from None
        mu = np.full(self.slave_nodes.size, float(mu)) if mu.ndim == 0 else mu
        if mu.shape != self.slave_nodes.shape or not np.all(np.isfinite(mu)) or np.any(mu < 0):
            raise ParameterError(f"mu must be finite and >= 0, a scalar or one per slave node "
                                 f"({self.slave_nodes.size}), got {mu!r}")
        n = self.slave_nodes.size
        laws = node_laws(friction if friction is not None else [Coulomb(x) for x in mu], n)
        if friction is not None and given and not all(isinstance(w, Coulomb) and w.mu == x for w, x in zip(laws, mu)):
            raise ParameterError("give the friction either as mu (Coulomb) or as friction (a law or one per "
                                 "slave node), not both: mu and friction disagree")
        self.laws = laws
        # per-node law arrays for the kernels: code, (stick limit, slip coefficient, Stribeck speed m/s), user
        self.law_code, self.law_params, self.law_user = law_arrays(laws, n)
        # stick limit of each slave node (the Coulomb coefficient for one-coefficient laws)
        self.mu = self.law_params[:, 0].copy() if friction is not None else mu
        self.name = name
        if geometry not in ("deformed", "undeformed", "frozen"):
            raise ParameterError(f"geometry must be 'deformed', 'undeformed' or 'frozen', got {geometry!r}")
        self.geometry = geometry

    @property
    def master_nodes(self) -> np.ndarray:
        """Nodes of the master body on the segments (sorted)."""
        return np.unique(self.master_segments)

    def __repr__(self) -> str:
        return (f"ContactInterface({self.slave_body!r}: {self.slave_nodes.size} slave nodes on "
                f"{self.master_body!r}: {self.master_segments.shape[0]} segments)")


class TiedInterface:
    """Bonded nodes: ``u_a(nodes_a[i]) = u_b(nodes_b[i])`` (x and y) at all times.

    Enforced exactly by primal assembly: the two bodies become one assembled body whose
    coordinates satisfy the ties identically (null space of the tie rows), and its free modes are
    computed over those coordinates. The reference positions of the pairs may differ (the offset
    is kept: it is the displacements that are equal). Tied coordinates must be free (neither
    prescribed nor fixed on one side only).

    Parameters
    ----------
    body_a, body_b : int or str
        The bodies (index or name); they may be the same body.
    nodes_a, nodes_b : int sequences of equal length
        The paired nodes, whose x and y displacements (m) are held equal.
    """

    def __init__(self, body_a, nodes_a, body_b, nodes_b):
        self.body_a, self.body_b = body_a, body_b
        self.nodes_a = node_array("nodes_a", nodes_a)
        self.nodes_b = node_array("nodes_b", nodes_b)
        if self.nodes_a.size != self.nodes_b.size:
            raise ParameterError(f"nodes_a and nodes_b must pair up, got {self.nodes_a.size} and {self.nodes_b.size}")

    def __repr__(self) -> str:
        return f"TiedInterface({self.body_a!r} <-> {self.body_b!r}: {self.nodes_a.size} node pairs)"


def frames(P, A, B):
    """Contact frames of slave points on master segments, vectorised.

    Parameters
    ----------
    P, A, B : (k, 2) arrays
        Slave points and the segment ends (m).

    Returns
    -------
    alpha (k,), gap (k,) in m, n (k, 2), t (k, 2): coordinate of the projection on A -> B, the
    signed distance along the left-hand normal n, the unit normal and tangent.
    """
    d = B - A
    ln = np.hypot(d[:, 0], d[:, 1])
    if np.any(ln <= 0):
        raise ModelError("a master segment has collapsed to zero length")
    t = d / ln[:, None]
    n = t[:, ::-1] * (-1.0, 1.0)
    rel = P - A
    alpha = (rel * t).sum(1) / ln
    gap = (rel * n).sum(1)
    return alpha, gap, n, t
