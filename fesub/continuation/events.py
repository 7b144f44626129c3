"""Events of a continuation step: test functions whose sign changes between two accepted
points, located on the branch by secant (Illinois) or bisection on the arclength.

* ``'fold'``: the ``lam`` component of the unit tangent changes sign (a turning point in the
  continuation parameter);
* user test functions ``g(x, lam)`` (any name);
* ``'branch_point'`` (on request): the determinant of the augmented Jacobian ``[R_y; t^T]``
  changes sign (a simple branch point; a regular fold keeps the sign);
* ``'stability'``: a boolean stability callback changes value (bisection).

Every trial point is corrected onto the branch with the arclength constraint
``t0 . (y - y0) = s`` of the step, so a located event lies on the branch to the corrector
tolerance.
"""

from __future__ import annotations

import math

import numpy as np

from .corrector import ScaledProblem

__all__ = ["Segment", "fold_event", "branch_point_event", "user_events", "stability_event",
           "augmented_det"]


class Segment:
    """The branch between an accepted point ``y0`` (unit tangent ``t0``) and the next accepted
    point ``y1``, parametrised by the arclength ``s = dot(t0, y - y0)`` in ``[0, s1]`` (scaled
    variables, dimensionless).

    Parameters
    ----------
    prob : ScaledProblem
        The scaled branch problem.
    y0, t0, y1 : numpy.ndarray, shape (n + 1,)
        Scaled start point, its unit tangent, scaled end point.
    tol : float
        Corrector tolerance on ``max |R|`` (units of ``R``).
    max_iter : int
        Corrector iterations of the step (trial points get 5 more).
    """

    def __init__(self, prob: ScaledProblem, y0, t0, y1, *, tol, max_iter):
        self.prob, self.y0, self.t0, self.y1 = prob, y0, t0, y1
        self.tol, self.max_iter = tol, max_iter
        self.s1 = float(t0 @ (y1 - y0))

    def point(self, s, guess=None):
        """Point on the branch at arclength ``s`` from ``y0`` (Newton from ``guess``, default
        the tangent predictor ``y0 + s t0``), or None if the corrector fails."""
        yp = self.y0 + s * self.t0 if guess is None else guess
        yy, ok, _, _ = self.prob.correct(yp, self.t0, self.y0, s, tol=self.tol,
                                         max_iter=self.max_iter + 5)
        return yy if ok else None

    def locate(self, f0, f1, gfun, *, boolean=False, s_tol=1e-13, chord=False):
        """Scaled point where ``gfun(y)`` changes sign (values ``f0`` at ``s = 0`` and ``f1`` at
        ``s1``): Illinois secant to ``|b - a| <= s_tol (1 + |s1|)``, or bisection to
        ``1e-10 |s1|`` for a boolean ``gfun``; None when a trial point cannot be corrected.

        ``chord``: near a branch point, where another branch crosses the constraint plane
        close by, Newton from the tangent predictor can land on that other branch. Each trial
        then starts from the chord between the two corrected bracket ends (its distance to
        the branch shrinks with the square of the bracket), and a trial that cannot be
        corrected ends the search with the corrected trial of smallest ``|gfun|`` so far."""
        s1 = self.s1
        a, b, fa, fb = 0.0, s1, f0, f1
        ya, yb = self.y0, self.y1
        ym = None
        side = 0
        best, f_best = None, math.inf
        for _ in range(60):
            if boolean:
                m = 0.5 * (a + b)
            else:
                m = b - fb * (b - a) / (fb - fa) if fb != fa else 0.5 * (a + b)
                if not (min(a, b) < m < max(a, b)):
                    m = 0.5 * (a + b)
            ym = self.point(m, ya + (m - a) / (b - a) * (yb - ya) if chord else None)
            if ym is None:
                if chord:
                    return best
                m = 0.5 * (a + b)
                ym = self.point(m)
                if ym is None:
                    return None
            fm = gfun(ym)
            if chord and abs(fm) < f_best:
                best, f_best = ym, abs(fm)
            if boolean:
                if fm == fa:
                    a, fa = m, fm
                else:
                    b, fb = m, fm
                if abs(b - a) <= 1e-10 * abs(s1):
                    break
                continue
            if fm == 0:
                break
            if (fm > 0) == (fa > 0):
                a, fa, ya = m, fm, ym
                if side == -1:
                    fb *= 0.5
                side = -1
            else:
                b, fb, yb = m, fm, ym
                if side == 1:
                    fa *= 0.5
                side = 1
            if abs(b - a) <= s_tol * (1 + abs(s1)):
                break
        return ym


def fold_event(seg: Segment, t1, record, idx):
    """Locate a fold in the segment when the ``lam`` parts of ``seg.t0`` and ``t1`` differ in
    sign, and ``record('fold', y, idx, {'tangent': t})`` it."""
    prob, t0 = seg.prob, seg.t0
    if not t0[-1] * t1[-1] < 0:
        return

    def gfold(yy):
        _, Jy = prob.RJ(yy)
        tt = prob.tangent(Jy, t0)
        return tt[-1] if tt is not None else 0.0

    yf = seg.locate(t0[-1], t1[-1], gfold)
    if yf is not None:
        _, Jf = prob.RJ(yf)
        tf = prob.tangent(Jf, t0)
        record("fold", yf, idx, {"tangent": tf * 1.0 if tf is not None else None})


def user_events(seg: Segment, events: dict, gvals: dict, x1, lam1, record, idx):
    """Evaluate each test function ``g(x1, lam1)``, locate the sign changes since the values
    ``gvals`` of the previous point, record them (info ``{'g': value at the event}``) and
    update ``gvals`` in place."""
    unpack = seg.prob.unpack
    for name, g in events.items():
        g1 = float(g(x1, lam1))
        g0 = gvals[name]
        if np.isfinite(g0) and np.isfinite(g1) and (g0 > 0) != (g1 > 0) and g0 != 0:
            ye = seg.locate(g0, g1, lambda yy, g=g: float(g(*unpack(yy))))
            if ye is not None:
                record(name, ye, idx, {"g": float(g(*unpack(ye)))})
        gvals[name] = g1


def stability_event(seg: Segment, stability, st0: bool, x1, lam1, record, idx) -> bool:
    """Stability flag at the new point; a change from ``st0`` is located by bisection and
    recorded as ``'stability'`` (info ``{'from': st0, 'to': st1}``)."""
    unpack = seg.prob.unpack
    st1 = bool(stability(x1, lam1))
    if st1 != st0:
        ye = seg.locate(st0, st1, lambda yy: bool(stability(*unpack(yy))), boolean=True)
        if ye is not None:
            record("stability", ye, idx, {"from": st0, "to": st1})
    return st1


def augmented_det(J, t):
    """``(sign, log|det|)`` of the augmented Jacobian ``[J; t^T]`` (scaled variables)."""
    return np.linalg.slogdet(np.vstack([J, t[None, :]]))


def branch_point_event(seg: Segment, J1, t1, sign0, record, idx):
    """Branch-point test: the sign of ``det [J; t^T]`` at the new point against ``sign0`` at
    the last one. A regular fold keeps it (the tangent turns with the branch); a simple branch
    point, where ``J`` loses rank, changes it. A change is located by secant on
    ``det [J(y); t0^T]`` (smooth along the step, of the same sign as the per-point test at
    both ends since ``t0 . t1 > 0``) and recorded as ``'branch_point'`` with the two smallest
    singular values of ``J`` and its two-dimensional kernel there (rows, scaled variables:
    they span the tangents of the crossing branches). Returns the sign to carry on."""
    sign1, _ = augmented_det(J1, t1)
    if sign1 == 0:
        return sign0
    if sign0 == 0 or sign1 == sign0:
        return sign1
    prob, t0 = seg.prob, seg.t0
    _, J0 = prob.RJ(seg.y0)
    s_ref, ref = augmented_det(J0, t0)

    def gdet(J):
        sg, logabs = augmented_det(J, t0)
        return float(sg * math.exp(min(logabs - ref, 700.0)))

    f1 = gdet(J1)
    if s_ref * f1 < 0:
        # the branch through a branch point is pinned to ~sqrt(tol) across it: a bracket
        # of 1e-10 in the arclength is as fine as the point itself
        yb = seg.locate(float(s_ref), f1, lambda yy: gdet(prob.RJ(yy)[1]), s_tol=1e-10,
                        chord=True)
        if yb is not None:
            _, Jb = prob.RJ(yb)
            _, sv, vt = np.linalg.svd(Jb)
            record("branch_point", yb, idx, {"sigma_min": float(sv[-1]), "sigma_ratio":
                                             float(sv[-1] / sv[0]) if sv[0] > 0 else 0.0,
                                             "kernel": vt[-2:].copy(), "test": gdet(Jb),
                                             "tangent": t0.copy(),
                                             "scale": np.asarray(prob.s, float).copy()})
    return sign1
