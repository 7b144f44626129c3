"""Branch switching at a located branch point: the other branch through it, continued.

At a simple branch point the Jacobian ``R_y`` of the branch problem (scaled unknowns) has a
two-dimensional kernel that holds the tangents of both branches. The branch followed so far
arrives along ``t_c`` (its tangent, projected on the kernel); the direction orthogonal to it
within the kernel, ``t_o``, leaves that branch. The first point of the other branch is the
predictor ``y_b + ds t_o`` corrected on the hyperplane ``t_o . (y - y_b) = ds`` (which the
branch followed so far does not cross near ``y_b``), and the usual pseudo-arclength continuation
goes on from there, away from the branch point.
"""

from __future__ import annotations

import numpy as np

from ..errors import ConvergenceError, ParameterError
from .corrector import ScaledProblem
from .driver import continue_branch

__all__ = ["switch_branch", "other_tangent"]


def other_tangent(event) -> np.ndarray:
    """Unit direction (scaled unknowns) of the other branch through the branch point ``event``:
    orthogonal, within the two-dimensional kernel, to the tangent it was reached along.

    Parameters
    ----------
    event : Event
        A ``'branch_point'`` event of a branch continued with ``branch_points=True`` (its
        ``info`` holds the ``'kernel'`` and the arrival ``'tangent'``: unit vectors in the
        scaled variables, dimensionless).

    Returns
    -------
    (n + 1,) ndarray
        Unit direction in the scaled unknowns ``(x, lam) / scale`` (dimensionless).
    """
    info = getattr(event, "info", None) or {}
    if getattr(event, "kind", None) not in ("branch_point", "BP") or "kernel" not in info:
        raise ParameterError("switch_branch needs a 'branch_point' event of a branch continued "
                             "with branch_points=True")
    if "tangent" not in info:
        raise ParameterError("this branch point records no arrival tangent (a branch saved by an "
                             "older fesub): continue the branch again with branch_points=True")
    V = np.asarray(info["kernel"], dtype=float)          # (2, n + 1), orthonormal rows
    t = np.asarray(info["tangent"], dtype=float)
    tc = V.T @ (V @ t)
    tc /= np.linalg.norm(tc)
    # the kernel vector orthogonal to tc: rotate tc's kernel coordinates by 90 degrees
    a = V @ tc
    to = V.T @ np.array([-a[1], a[0]])
    return to / np.linalg.norm(to)


def switch_branch(residual, jacobian, event, *, ds=0.01, side=+1, tol=1e-10, max_iter=20,
                  **kw):
    """Continue the other branch through the branch point ``event``.

    Parameters
    ----------
    residual, jacobian : callable
        The branch problem, as for :func:`~fesub.continuation.continue_branch`.
    event : Event
        A ``'branch_point'`` event of a branch continued with ``branch_points=True``.
    ds : float
        Distance of the first point of the new branch from the branch point, and first
        arclength step (dimensionless: in the scaled unknowns ``(x, lam) / scale``).
    side : {+1, -1}
        Which half of the other branch to follow (a pitchfork has two).
    tol, max_iter : float, int
        Corrector tolerance on ``max |R|`` (in the units of ``R``) and maximum corrector
        iterations per step, for the first point and the branch.
    **kw
        Passed to :func:`~fesub.continuation.continue_branch` (``lam_range``, ``max_steps``,
        ``ds_max``, ...). The scaling is the one the branch point was found with.

    Returns
    -------
    Branch
        The other branch, starting next to the branch point and leading away from it.
    """
    if side not in (+1, -1):
        raise ParameterError(f"side must be +1 or -1, got {side!r}")
    if "scale" in kw:
        raise ParameterError("the scaling of the new branch is the branch point's own")
    to = side * other_tangent(event)
    scale = np.asarray(event.info["scale"], dtype=float)
    n = scale.size - 1
    prob = ScaledProblem(residual, jacobian, n, scale)
    yb = np.append(np.asarray(event.x, float) / scale[:-1], float(event.lam) / scale[-1])
    y1, ok, its, nr = prob.correct(yb + ds * to, to, yb, ds, tol=tol, max_iter=max_iter)
    if not ok:
        raise ConvergenceError(f"no point of the other branch at distance {ds:g} from the "
                               f"branch point (|R|={nr:.3e} after {its} iterations); try a "
                               "smaller ds")
    _, J = prob.RJ(y1)
    t1 = prob.tangent(J, to)
    if t1 is None:
        raise ConvergenceError("the other branch is singular next to the branch point")
    direction = 1 if t1[-1] >= 0 else -1  # t1 is oriented away from the branch point, like to
    x1, lam1 = prob.unpack(y1)
    return continue_branch(residual, jacobian, x1, lam1, ds=ds, direction=direction,
                           scale=scale, tol=tol, **kw)
