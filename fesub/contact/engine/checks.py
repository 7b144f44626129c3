"""What a multibody contact model must satisfy before it is marched, checked where it is built.

* :func:`call_checked`: a load or a prescribed motion given as a callable is called through it,
  so that what it returns is checked at every call (shape, real and finite values; the time and
  the callable are named), and an exception of the user's own callable keeps its type and
  traceback, with a note saying which callable failed and at what time.
* :func:`check_definite`: the mass of each group of free coordinates must be positive definite
  and its stiffness positive semi-definite; an indefinite stiffness (a negative eigenvalue, whose
  exact motion grows like ``cosh(sqrt(-lambda) t)``) is refused, never marched as a rigid mode.
* :func:`check_interface`: the contact rows must mean something: no master segment of zero
  length, no slave node that is a node of its own master surface, and a normal that some free
  coordinate can move (a contact between fixed or prescribed nodes only cannot be enforced).
* :func:`node_array`: the slave or tied nodes a user names: distinct integers, one clear error
  otherwise.
* :func:`initial_penetrations` / :func:`refuse_penetration`: the policy for a slave node that
  starts inside its master is to refuse the run, naming the nodes and their depths. Resolving
  the overlap in the first step would launch the node (1 cm in one step of 1 ms is 10 m/s: kinetic
  energy created from nothing, booked as a negative impact loss); the user moves the nodes, or
  starts the bodies apart and presses them together with a load.

Units: SI (m, s, N).
"""

from __future__ import annotations

import math

import numpy as np

from ...errors import ModelError, ParameterError

__all__ = ["call_checked", "check_definite", "check_interface", "check_modal_forces",
           "initial_penetrations", "node_array", "refuse_penetration"]


def _name(fn) -> str:
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)


def call_checked(fn, t: float, shape: tuple, what) -> np.ndarray:
    """``fn(t)`` as a float array of ``shape`` with finite values, else a ParameterError naming
    ``what``, the callable and ``t``; an exception raised by ``fn`` itself propagates unchanged,
    with a note naming the callable and the time. Called at every time step: the check of a
    good value costs about a microsecond.

    Parameters
    ----------
    fn : callable
        The user's function of time ``t`` (s).
    t : float
        Time (s).
    shape : tuple
        Shape its value must have.
    what : str or callable
        What the value is, for the messages (``"loads of body 'pad' (N)"``), or a function of no
        arguments that returns it (formed only for a message).

    Returns
    -------
    ndarray
        The value, float64, of ``shape``.
    """
    try:
        raw = fn(t)
    except Exception as exc:
        exc.add_note(f"raised by {_name(fn)}, the {_what(what)}, at t = {t:.9g} s")
        raise
    try:
        v = np.asarray(raw, dtype=float)
    except (TypeError, ValueError):
        raise ParameterError(f"{_what(what)} ({_name(fn)}) at t = {t:.9g} s must return real numbers, "
                             f"got {raw!r:.80}") from None
    if v.shape != shape:
        raise ParameterError(f"{_what(what)} ({_name(fn)}) at t = {t:.9g} s must return shape {shape}, "
                             f"got shape {v.shape}")
    # a finite sum has finite terms (an infinity or a NaN among them makes it one); a sum that
    # overflows from finite terms is told apart by the full check
    if not math.isfinite(v.sum()) and not np.isfinite(v).all():
        raise ParameterError(f"{_what(what)} ({_name(fn)}) returned a non-finite value at t = {t:.9g} s: "
                             f"{v.tolist()!r:.120}")
    return v


def _what(what) -> str:
    return what() if callable(what) else str(what)


def check_modal_forces(F) -> None:
    """Refuse modal forces (N per unit modal mass) that are not finite: finite loads or motions
    whose projection on the modes overflows (a load of 1e308 N) would march NaN as a result."""
    if not np.isfinite(F).all():
        raise ParameterError("the loads and prescribed motions give modal forces that overflow (not "
                             "finite); they are far beyond any physical size (N, m)")


def check_definite(names, M, K, w2) -> np.ndarray:
    """The squared frequencies ``w2`` (rad^2/s^2) of the generalised problem ``K phi = w2 M phi``
    of a group of free coordinates, with the round-off of rigid modes set to 0, after checking
    that the stiffness is positive semi-definite.

    A negative ``w2`` below round-off (1e-8 of the largest, where a rigid mode computed by a
    dense symmetric eigensolver sits at about 1e-13 of it) means an indefinite stiffness: refused.

    Parameters
    ----------
    names : list of str
        The bodies of the group, for the message.
    M, K : (n, n) arrays
        Mass (kg) and stiffness (N/m) over the group's free coordinates.
    w2 : (n,) array
        Squared frequencies (rad^2/s^2) from the eigensolver, ascending.

    Returns
    -------
    ndarray
        ``w2`` with the rigid modes' round-off set to 0.
    """
    if w2.size == 0:
        return w2
    scale = max(float(np.abs(w2).max()), 1e-300)
    if w2[0] < -1e-8 * scale:
        raise ModelError(
            f"the stiffness of bodies {names} is indefinite over their free coordinates "
            f"(an eigenvalue of K phi = w^2 M phi is {w2[0]:.4g} rad^2/s^2 < 0: a motion that "
            "grows like cosh(w t)); K must be positive semi-definite")
    return np.where(w2 < 1e-10 * max(float(w2.max()), 1e-300), 0.0, w2)


def check_interface(model, c: dict, index: int) -> None:
    """Refuse contact rows that cannot mean anything (see the module docstring).

    Parameters
    ----------
    model : MultibodyModel
        The model being built.
    c : dict
        Its prepared contact (``slave``, ``master`` NodeRows, ``segments``, bodies).
    index : int
        Index of the interface, for the messages.
    """
    itf = c["interface"]
    label = f"interface {itf.name or index}"
    X = c["master"].X
    segs = c["segments"]
    nodes = c["master"].nodes
    length = np.hypot(*(X[segs[:, 1]] - X[segs[:, 0]]).T)
    scale = max(float(np.ptp(X, axis=0).max()), float(np.abs(X).max()), 1e-300)
    zero = np.flatnonzero(length <= 1e-12 * scale)
    if zero.size:
        s = int(zero[0])
        raise ModelError(f"{label}: master segment {s} (nodes {nodes[segs[s, 0]]}, {nodes[segs[s, 1]]}) "
                         "has zero length; a segment must join two distinct positions")
    if c["slave_body"] == c["master_body"]:
        own = np.intersect1d(c["slave"].nodes, nodes)
        if own.size:
            raise ModelError(f"{label}: slave nodes {own[:5].tolist()} are nodes of their own master "
                             "surface (a node is never in contact with a segment it ends)")
    # the normal row of each slave node over the segment under it at rest: a node whose row has
    # no free coordinate (slave and master ends fixed or prescribed along the normal) cannot be
    # held by a contact force
    surf = c["surface"]
    S, Mr = c["slave"].R, c["master"].R
    for i, P in enumerate(c["slave"].X):
        seg, alpha = surf.find(P, 0)[:2]
        if seg < 0:
            continue
        a, b = segs[seg]
        d = X[b] - X[a]
        n = np.array([-d[1], d[0]]) / np.hypot(*d)
        row_s = n @ S[i]
        row_m = n @ ((1 - alpha) * Mr[a] + alpha * Mr[b]) if Mr.shape[2] else np.zeros(0)
        if not (np.any(row_s) or np.any(row_m)):
            raise ModelError(
                f"{label}: the contact of slave node {int(c['slave'].nodes[i])} on master segment "
                f"{int(seg)} cannot be enforced: no free coordinate moves either along the normal "
                "(both are fixed or prescribed there)")


def initial_penetrations(model, eta, t: float = 0.0, tol: float = 0.0) -> list:
    """Slave nodes inside their master at time ``t`` for the modal state ``eta``.

    Parameters
    ----------
    model : MultibodyModel
        The model.
    eta : (n_modes,) array
        Modal coordinates (m kg^0.5) of the state, relative to the drives' quasi-static motion
        (as :meth:`MultibodyModel.modal_state` gives them).
    t : float
        Time (s) of the prescribed motions.
    tol : float
        Depth (m) tolerated (the round-off of the positions).

    Returns
    -------
    list of (interface label, slave node, depth in m)
        Depths > ``tol``, deepest first.
    """
    out = []
    ups = [b.motion(t)[0] if b.p_idx.size else np.zeros(0) for b in model.bodies]
    for k, c in enumerate(model.contacts):
        if c.get("geometry") == "undeformed":
            # its constraint holds the slave on the undeformed frame; the distance from the
            # deformed surface is then first order in the preload (the row's geometric gap), not
            # a penetration that the first step would undo
            continue
        P = c["slave"].X + c["slave"].free(eta) + c["slave"].driven(ups)
        Q = c["master"].X + c["master"].free(eta) + c["master"].driven(ups)
        label = c["interface"].name or f"interface {k}"
        if c.get("dim") == 3:  # node-to-surface: the closest points on the faces moved to Q
            c["faces"].refit(Q)
            pr = c["faces"].project(P)
            deep = np.flatnonzero(pr.faces_master & (pr.gap < -tol))
            out.extend((label, int(c["slave"].nodes[i]), float(-pr.gap[i])) for i in deep)
            continue
        for i in range(P.shape[0]):
            seg, _, gap = c["surface"].find(P[i], 0, positions=Q)[:3]
            if seg >= 0 and gap < -tol:
                out.append((label, int(c["slave"].nodes[i]), float(-gap)))
    return sorted(out, key=lambda x: -x[2])


def refuse_penetration(model, eta, tol: float = 0.0) -> None:
    """Raise a ModelError naming the slave nodes that start inside their master and their
    depths; the policy is stated in the module docstring.

    A depth up to 1e-12 of the size of the contact region (the round-off of positions, 1e-16 of
    it, with room for a model built by sums of coordinates; 1.8e-18 m is measured on the
    beam-on-beam benchmark, whose slave starts on its master) or up to ``tol`` (m) is touching,
    not penetrating."""
    X = [np.r_[c["slave"].X, c["master"].X] for c in model.contacts]
    scale = max((float(np.ptp(x, axis=0).max()) for x in X), default=0.0)
    found = initial_penetrations(model, eta, 0.0, max(float(tol), 1e-12 * scale))
    if found:
        shown = "; ".join(f"{lab} node {n}: {d:.4g} m" for lab, n, d in found[:5])
        more = f" (and {len(found) - 5} more)" if len(found) > 5 else ""
        raise ModelError(
            f"{len(found)} slave node(s) start inside their master surface: {shown}{more}. "
            "A run would push them out in the first step with energy from nothing; move the "
            "nodes (or the initial displacements) so that every gap is >= 0, or start apart and "
            "press the bodies together with a load")


def node_array(name: str, nodes) -> np.ndarray:
    """``nodes`` as a (k,) int64 array of distinct node indices; a :class:`ParameterError`
    naming ``name`` for anything else (empty, not integers, not 1D, a node repeated)."""
    arr = np.atleast_1d(np.asarray(nodes))
    if arr.ndim != 1 or arr.size == 0 or arr.dtype.kind not in "iu":
        raise ParameterError(f"{name} must be a non-empty sequence of integer node indices, got {nodes!r}")
    if np.unique(arr).size != arr.size:
        raise ParameterError(f"{name} must not repeat a node")
    return arr.astype(np.int64)
