"""Pseudo-arclength continuation of solution branches ``R(x, lam) = 0``.

One driver for the whole project (harmonic balance, backbones, periodic orbits of free-play
oscillators). The branch is followed in the scaled unknowns ``y = (x, lam) / scale``:

* tangent predictor ``y_p = y_k + ds t_k``;
* Newton corrector on the bordered system ``[R(y); t_k^T (y - y_p)] = 0``;
* the new tangent solves ``[J(y); t_k^T] t = e_{n+1}`` (keeps the orientation), then is normalised;
* the linear systems of both: factored each time, or (``reuse_factorization``, for large dense
  Jacobians) solved by GMRES preconditioned with an earlier Jacobian's LU factors (kept in
  single precision), Newton's corrections to a tenth of its tolerance;
* step control: halve ``ds`` on corrector failure or when the angle between consecutive tangents
  exceeds ``max_angle_deg``; grow it by 1.5 after a fast (<= 3 iterations) convergence;
* events: the built-in ``'fold'`` (sign change of the ``lam`` part of the tangent: the branch
  steps through turning points and reports them), on request ``'branch_point'`` (sign change of
  ``det [R_y; t^T]``, the augmented Jacobian), user test functions ``g(x, lam)`` and a
  stability callback are located between accepted points by secant/bisection on the
  arclength, each trial point being corrected onto the branch.

When the corrector fails at ``ds_min`` the driver stops, records where and why in
``Branch.stop_reason`` (words) and ``Branch.stop_info`` (data: the stop code, the step, the
cause and the residual reached) and returns the branch computed so far; it never raises
mid-branch. A
KeyboardInterrupt (Ctrl-C) during the steps likewise returns the points accepted so far, with
``stop_reason='interrupted'`` (``Branch.status == 'interrupted'``).
A branch that cannot start (no convergence of the initial correction at fixed ``lam0``) raises
:class:`~fesub.errors.ConvergenceError`.

Map
---
=============  ===========================================================================
``driver``     :func:`continue_branch`: validation, start, predictor-corrector loop, step
               control, parameter bounds, bookkeeping
``corrector``  :func:`newton`, the scaled problem with its bordered corrector and tangent
``linsolve``   the corrector's linear solves: direct, or GMRES preconditioned by the LU
               factors of an earlier Jacobian (``continue_branch(reuse_factorization=True)``)
``events``     test functions of a step located on the arclength (folds, branch points,
               user, stability)
``result``     :class:`Branch` and :class:`Event` on the :mod:`fesub.io` protocol
``switching``  :func:`switch_branch`: the other branch through a located branch point
=============  ===========================================================================
"""

from __future__ import annotations

from .corrector import newton
from .driver import continue_branch
from .result import Branch, Event
from .switching import other_tangent, switch_branch

__all__ = ["Branch", "Event", "continue_branch", "newton", "switch_branch", "other_tangent"]
