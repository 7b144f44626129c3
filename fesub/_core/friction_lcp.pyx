# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Unilateral constraints with Coulomb friction at one time step: projected Gauss-Seidel, compiled.

Twin: ``friction_lcp_ref.py`` (same function and signature). Inputs are validated by the caller.

Problem. ``m`` constraints act on ``n`` generalised coordinates with a diagonal inverse "mass"
``w``. Constraint ``i`` has a normal row ``J[2i]`` and a tangential row ``J[2i+1]``; with impulses
``lam`` the constraint values are ``y = b + W lam``, ``W = J diag(w) J'``. The solution satisfies

* normal:      ``lam_n >= 0``, ``y_n >= 0``, ``lam_n y_n = 0``;
* tangential:  ``|lam_t| <= mu lam_n``; ``|lam_t| < mu lam_n`` implies ``y_t = 0`` (stick);
  ``y_t != 0`` implies ``lam_t = -mu lam_n sign(y_t)`` (slip opposes the motion).

Method: projected Gauss-Seidel over the rows, normal then tangential for each constraint. Each
row update is exact for its own row given all the others, ``lam_r <- P(lam_r - y_r / W_rr)``, with
``P`` the projection on ``[0, inf)`` (normal) or ``[-mu lam_n, mu lam_n]`` (tangential, with the
``lam_n`` just updated), and ``z = diag(w) J' lam`` is kept up to date after every update, so
``y_r = b_r + J_r . z`` costs one dot product. Why this method: ``W`` is never formed, a sweep
costs O(m n) (one pass over each row of ``J`` for ``y_r`` and ``W_rr`` together, one more for the
update of ``z``), the kernel allocates nothing, and the previous step's impulses are a warm start
that shortens the iteration. A pivoting method (Lemke, active set) needs ``W`` itself, O(m^2 n)
to form and O(m^3) to factor: the cost of a step would then grow faster than the number of active
constraints. Without friction a sweep is the Gauss-Seidel method on the convex quadratic programme
``min 1/2 lam' W lam + b' lam, lam >= 0`` and converges; with friction it is a fixed-point
iteration whose converged point satisfies every condition above, but which can cycle when the
normal and tangential rows are strongly coupled and ``mu`` is large (then ``status`` says so).

Convergence: the largest change of y that one row update produced during a sweep,
``|delta lam_r| W_rr`` (units of ``b``), at most ``tol``. A row with ``W_rr = 0`` (no coordinate
moves it) takes the limit of its update: a tangential one slips (``lam_t = -mu lam_n sign(b_t)``),
a normal one carries no impulse, and a negative normal value on it cannot be corrected, so the
call then never reports convergence (largest change ``inf``).

One constraint (``m = 1``, ``tol >= 0``): its 2 x 2 ``W`` is formed in one pass and the problem
solved in closed form (``_pgs.coulomb_one``), the point the sweeps converge to, exactly. With
``W_nn > 0``, ``mu |W_nt| < W_nn`` and ``det W > 0`` the solution is unique: open when
``b_n >= 0``; otherwise, on the normal row's equality, ``y_t`` grows strictly with ``lam_t``
across the cone's interval, so exactly one of slip in the positive sense (``y_t <= 0`` at
``lam_t = mu lam_n``), slip in the negative sense, or stick (both equalities) holds. The status
is then one sweep, change 0, converged. Outside those conditions (several solutions may exist)
the sweeps run as above.
"""

from fesub._core._pgs cimport pgs_solve


def solve(const double[:, ::1] J, const double[::1] w, const double[::1] b, const double[::1] mu,
          double[::1] lam, double[::1] z, double tol, long max_iter, double[::1] status):
    """Projected Gauss-Seidel solution of the frictional contact problem, in place; see the
    module docstring, and the twin ``friction_lcp_ref.solve`` for every argument and its units.
    The sweeps are ``_pgs.pgs_solve`` (shared with the multibody march)."""
    cdef Py_ssize_t m2 = J.shape[0], n = J.shape[1]
    cdef double st[3]
    if n == 0 or m2 == 0:  # no constraint, or rows with no entry: no impulse
        lam[:] = 0.0
        status[0] = 0
        status[1] = 0.0
        status[2] = 1.0
        return
    with nogil:
        pgs_solve(&J[0, 0], m2, n, &w[0], &b[0], &mu[0], &lam[0], &z[0], tol, max_iter, st)
    status[0] = st[0]
    status[1] = st[1]
    status[2] = st[2]
