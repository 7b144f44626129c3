# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""A chunk of steps of the multibody contact march, compiled: central differences on modal
coordinates with diagonal damping, node-to-segment frictional contact by projected Gauss-Seidel.

Twin: ``multibody_ref.py`` (same functions and signatures). The step's parts live in the
``_multibody_*.pxd`` modules beside it, by purpose (listed in ``_multibody_nodes.pxd``): this
module holds the work layout and the order of a step. Arrays in, arrays out; the caller
(``fesub.contact.engine.driver``) validates every input and gives the meaning. Step n -> n+1
(time index i, t = i h; the state at index i is that after step i - 1):

    f     = fc + t fr (+ fs[s])                 modal force of the step (fs: sampled per chunk)
    e*    = 2 e - e_prev + h^2 (f - c (e - e_prev)/h - w2 e)  (+ h^2 xval[s] . xrow: force series)
    each slave node: position on the masters of e* (the walk over its interface's segments from
          its last segment), frame (alpha, gap, n, t); rows J (normal, tangential) over the modal
          coordinates of the nodes on a segment; b = (gap, slip of the step)
    active set: gap <= 0 or pressed at the previous step; ``pgs_solve`` (shared with
          ``friction_lcp``) on the active rows; nodes the others push through (gap < -tol) join
    e_next = e* + z,  z = h^2 J' lam
    works, states, decimated outputs, stop on stick / lift-off

A node's displacement is ``R[node] . e + dv[node] t (+ ds[sample, node])`` (its modal rows and
its driven part). Master node displacements are computed when the walk or the rows need them and
kept for the step (stamped caches), so a step costs O(n_modes) per slave node and per master node
visited, and allocates nothing. One slave node without sampled forces: the predicted displacements
of the node and of the master nodes of its last segment come out of the predictor's pass, and the
update, the works and the energies are one pass (``predict_one``, ``advance_one``), which also
forms the next step's predictor while the node stays on its segment (``lean_next``, from
coefficients formed once per call, e_next written over e* and the predictor into the free
buffer): one pass over the modal coordinates per step. The node's contact problem is solved in
closed form where it has one solution (``_pgs.coulomb_one``), by the sweeps otherwise; a node
whose law code ``lcode`` is not 0 (static/kinetic 1, Stribeck 2; ``lpar`` its stick limit, slip
coefficient and Stribeck speed, m/s) by ``_laws.law_closed`` (no closed form: the step is
reported unconverged). Several slave nodes of which any has such a law: the contact problem is
solved by ``_laws.pgs_laws`` (block Gauss-Seidel, each node's 2 x 2 problem by ``law_closed``
with its own law, Coulomb nodes included) instead of ``pgs_solve``; the state test takes each
node's coefficient at the cone's edge. Without
the work accounts, while the node stays closed on the segment of the last step's pass and the
closed form applies, a step is taken from the locals of that node alone (``slide`` in ``march``:
its frame on that segment, no walk, active set or per-node arrays; the same arithmetic as the
general body, which takes every other step, and takes the step again where a test of the slide
fails before anything is stored). A force series then moves the predicted node by its
products with the node rows (``_series_dots``, once per segment), and its work comes from its
projections on the states (on e* in the pass that adds it, and on e_next through those products),
so it costs one short pass over its window. The gap after a step (an output only) is formed on the
output grid. ``accounts`` = 0 leaves the works out (``acc`` untouched, NaN for them in
``o_energy``): the one-node pass off the output grid then has no e_prev (``_lean_bare``).

``status`` (out) = [steps done, reason (0 done, 1 stick, 2 lift-off, 3 not converged, 4 a slave
node left its master surface: that step is not taken), samples].
``stats`` (in/out) = [largest sweeps of a step, total sweeps, largest active-set passes, last
largest change of the kernel]. ``acc`` (in/out) = accumulated damping loss, external work,
friction dissipation, impact loss. Node state arrays (in/out): ``hint`` (segment of each slave
node, global index), ``off`` (1: off its master surface), ``lam`` (forces of the last step),
``code`` (0 open, 1 stick, 2 slip+, 3 slip-), ``changes`` (state changes).
"""

from libc.math cimport NAN, INFINITY
from libc.stdlib cimport malloc, free
from fesub._core._pgs cimport coulomb_one, coulomb_closed
from fesub._core._laws cimport law_closed
from fesub._core._multibody_active cimport Active, active_passes
from fesub._core._multibody_nodes cimport Nodes, step_time, driven_disp, node_disp, cached_disp
from fesub._core._multibody_series cimport Series, series_start, series_add, series_move, series_work
from fesub._core._multibody_search cimport segment_frame, segment_walk
from fesub._core._multibody_one cimport gram, gram_quad, w_one, one_rows, update_one, node_state, count_change
from fesub._core._multibody_passes cimport Step, Passes, node_passes, predict_one, advance_one
from fesub._core._multibody_lean cimport Lean, lean_ranges, lean_next, tight_next, tight_energy
from fesub._core._multibody_record cimport Record, record_step
from fesub._core._multibody_close cimport Close, close_nodes

#: most passes of the active-set loop in one step
PASSES = 50
cdef long _PASSES = 50
cdef long _NEVER = -4611686018427387904  # a stamp no state has


cdef void _set_nodes(Nodes* s, const double[:, :, ::1] R, const long[:, ::1] win, const double[:, ::1] X,
                     const double[:, ::1] dv, const double[:, :, ::1] ds, Py_ssize_t nm):
    """Point ``s`` at the arrays of a node set (NULL where they are empty)."""
    cdef Py_ssize_t k = X.shape[0]
    s.R = &R[0, 0, 0] if k and nm else NULL
    s.win = &win[0, 0] if k else NULL
    s.X = &X[0, 0] if k else NULL
    s.dv = &dv[0, 0] if k else NULL
    s.ds = &ds[0, 0, 0] if ds.shape[0] and k else NULL
    s.k = k
    s.nm = nm


cdef inline void _swap(double** E, long a, long b) noexcept nogil:
    """Swap the buffers of the states a and b."""
    cdef double* t = E[a]
    E[a] = E[b]
    E[b] = t


def work_sizes(long nm, long m, long n_master, long n_itf):
    """(doubles, integers) of the work arrays of :func:`march`."""
    return (8 * nm + 4 * m * nm + 26 * m + 8 * n_master + 4 * n_itf + 36, 7 * m + 4 * n_master)


def march(double h, long n_steps, long dec, long i0, double tol, long max_iter, long stop_on_change, long accounts,
          const double[::1] w2, const double[::1] cdamp, const double[::1] fc, const double[::1] fr,
          const double[:, ::1] fs, const double[:, ::1] xrow, const long[:, ::1] xwin,
          const double[:, ::1] xval, double[::1] eta, double[::1] eta_prev,
          const double[:, :, ::1] srow, const long[:, ::1] swin, const double[:, ::1] sX,
          const double[:, ::1] sdv, const double[:, :, ::1] sds,
          const double[:, :, ::1] mrow, const long[:, ::1] mwin, const double[:, ::1] mX,
          const double[:, ::1] mdv, const double[:, :, ::1] mds,
          const long[:, ::1] segs, const long[:, ::1] node_segs, const long[::1] node_itf,
          const double[::1] mu, long n_itf, const long[::1] lcode, const double[:, ::1] lpar,
          long[::1] hint, long[::1] off, double[:, ::1] lam, long[::1] code, long[::1] changes,
          double[::1] acc, const double[:, ::1] orow, const long[:, ::1] owin,
          double[:, ::1] o_ln, double[:, ::1] o_lt, double[:, ::1] o_gap, double[:, ::1] o_slip,
          long[:, ::1] o_state, long[:, ::1] o_seg, double[:, :, :] o_geo, double[:, :] o_energy,
          double[:, :] o_chan,
          double[::1] work, long[::1] iwork, double[::1] stats, long[::1] status):
    """March ``n_steps`` steps from time index ``i0``; see the module docstring and the twin
    ``multibody_ref.march`` for every argument and its units."""
    cdef Py_ssize_t nm = eta.shape[0], m = sX.shape[0], M = mX.shape[0], nc = orow.shape[0]
    cdef Py_ssize_t no = o_ln.shape[0], ns = xrow.shape[0]
    cdef Nodes ss, ms
    cdef Py_ssize_t s, i, p, q, k, r, nd, na, ia, ib
    cdef long n, reason = 0, j = 0, passes, lo, mseg, sgk, slot_p = 0, slot_n = 1, slot_x = 2, tmpi
    cdef double t, tt_n, tt_x, tt_p, h2 = h * h, inv_h = 1.0 / h
    cdef double px, py, ax, ay, bx, by, al, g, nx, ny, tx, ty, a1, val, dx, dy, ex, ey
    cdef double rx, ry, ln, lt, rt0, qax, qay, qbx, qby
    cdef double st3[3]
    cdef double mul = mu[0] if m else 0.0   # one node: the coefficient its step reached the cone's edge at
    cdef bint law = m == 1 and lcode[0] != 0   # one node with a law beyond one coefficient (``_laws.pxd``)
    cdef double cx0, cy0, cx1, cy1, sxp = 0.0, syp = 0.0, kin, strn
    cdef bint conv, record, sampled = fs.shape[0] > 0, solved
    cdef bint slide            # the step of one node sliding on its segment (below)
    cdef bint fast = m == 1 and nm > 0 and M > 0
    cdef bint laws = False    # several nodes (or one off the one-node path) with laws: ``pgs_laws``
    cdef bint fused, fused2   # one node, no sampled forces: predictor and update fused with the node rows
    cdef bint left            # a slave node left its master surface in the search
    cdef bint grid            # the step is on the output grid (n % dec == 0)
    cdef bint fok = False     # the fused passes apply on the master nodes (fa, fb) of ``F``
    cdef bint pre = False     # the predictor of this step was done in the last step's update pass
    cdef bint xpre = False    # ... with the force series' value of this step (row . e* in xnext)
    cdef double xnext = 0.0, hxv
    cdef double dpre[6]       # (a two-row window's pass adds zeros to the two places after it: lean_next)
    cdef double Q18[18]       # one node: its W as a quadratic in alpha (``gram_quad``)
    cdef double W3[3]         # ... its W, b, multipliers and row coefficients (normal, tangent)
    cdef double b2[2]
    cdef double l2[2]
    cdef double cN12[12]
    cdef double fm[4]         # predicted displacements of the master nodes of the fused pass
    cdef double* dsrc
    cdef long rem, fa = -1, fb = -1
    cdef Step P
    cdef Passes F
    cdef double d6[6]
    cdef double c6[6]
    cdef double sums[4]
    cdef long seg0 = -1, gseg = -1
    cdef double* G6
    cdef long st, old, stop_lift, stop_stick
    cdef double* E[4]
    cdef double* Ep
    cdef double* En
    cdef double* Ex
    cdef double* Es
    cdef double* z
    cdef double* w
    cdef double* J
    cdef double* Ja
    cdef double* b
    cdef double* ba
    cdef double* lall
    cdef double* la
    cdef double* mua
    cdef double* muo
    cdef double* alpha
    cdef double* gnv
    cdef double* gap
    cdef double* cpt
    cdef double* SU[3]   # slave displacements of the states E[0..2] (the predicted one per node)
    cdef double* MC[4]
    cdef long* MS[4]
    cdef double* fsum
    cdef double* mue          # (m) with ``laws``: the edge coefficient of each solved node, in order
    cdef double* mun          # (m) ... of each slave node (its stick limit where not solved)
    cdef long* lidx           # (m) ... the nodes of the active subset, in order
    cdef long* ab
    cdef long* idx
    cdef long* act
    cdef long* oldc
    cdef const double* r0
    cdef const double* r1
    cdef const double* q0
    cdef const double* q1
    cdef const double* c0
    cdef const double* c1
    cdef double* Jn
    cdef double* Jt
    cdef Series X         # the force series (``Series``: tracked with one node, no sampled forces)
    cdef Lean L           # one node: the coefficients of the lean pass (``lean_next``)
    cdef Record Rc        # the output record (``record_step``)
    cdef Close C          # several nodes, or one with the works: the close of a step (``close_nodes``)
    cdef Active A         # several nodes: the active-set passes (``active_passes``)
    cdef double* lcoef = NULL
    cdef double* base
    cdef double* rcopy = NULL
    cdef Py_ssize_t shift = 0, stride = 0
    cdef long nd_need, nl_need
    nd_need, nl_need = work_sizes(nm, m, M, n_itf)
    if work.shape[0] < nd_need or iwork.shape[0] < nl_need:
        raise ValueError(f"work must hold {nd_need} doubles and iwork {nl_need} integers")
    _set_nodes(&ss, srow, swin, sX, sdv, sds, nm)
    _set_nodes(&ms, mrow, mwin, mX, mdv, mds, nm)
    # work layout
    for k in range(4):
        E[k] = &work[k * nm]
    z = &work[6 * nm]
    w = &work[7 * nm]
    J = &work[8 * nm]
    Ja = &work[8 * nm + 2 * m * nm]
    q = 8 * nm + 4 * m * nm
    b = &work[q]
    ba = &work[q + 2 * m]
    lall = &work[q + 4 * m]
    la = &work[q + 6 * m]
    mua = &work[q + 8 * m]
    muo = &work[q + 9 * m]
    alpha = &work[q + 10 * m]
    gnv = &work[q + 11 * m]        # (m, 4): nx, ny, tx, ty
    gap = &work[q + 15 * m]
    for k in range(3):
        SU[k] = &work[q + 16 * m + 2 * k * m]
    cpt = &work[q + 22 * m]        # (m, 2) contact point on the master (predicted positions)
    q = q + 24 * m
    for k in range(4):
        MC[k] = &work[q + 2 * k * M]
        MS[k] = &iwork[6 * m + k * M]
    fsum = &work[q + 8 * M]        # (n_itf, 4) per-interface sums of the works
    G6 = &work[q + 8 * M + 4 * n_itf]   # one slave node: Gram matrix of its rows (6 x 6)
    mue = &work[q + 8 * M + 4 * n_itf + 36]
    mun = &mue[m]
    lidx = &iwork[6 * m + 4 * M]
    for i in range(m):
        if lcode[i] != 0 and not fast:
            laws = True
    ab = &iwork[0]                 # (m, 2) master nodes of each slave's segment
    idx = &iwork[2 * m]            # nodes on their master surface, in order
    act = &iwork[3 * m]            # active flag of each of them
    oldc = &iwork[4 * m]
    # the parts of the step in their own modules: the output record (``_multibody_record``), the
    # close of several nodes (``_multibody_close``), their active-set passes (``_multibody_active``)
    Rc.ms = ms; Rc.sX = ss.X; Rc.mX = &mX[0, 0] if M else NULL
    Rc.lam = &lam[0, 0] if m else NULL; Rc.gap = gap
    Rc.alpha = alpha; Rc.code = &code[0] if m else NULL; Rc.off = &off[0] if m else NULL
    Rc.hint = &hint[0] if m else NULL
    Rc.node_segs = &node_segs[0, 0] if m else NULL; Rc.cpt = cpt; Rc.gnv = gnv; Rc.ab = ab
    Rc.acc = &acc[0] if acc.shape[0] else NULL
    Rc.w2 = &w2[0] if nm else NULL; Rc.orow = &orow[0, 0] if nc and nm else NULL; Rc.owin = &owin[0, 0] if nc else NULL
    Rc.orow_n = orow.shape[1]; Rc.m = m; Rc.nm = nm; Rc.nc = nc
    Rc.h = h; Rc.h2 = h2; Rc.inv_h = inv_h; Rc.accounts = accounts != 0
    Rc.o_ln = <char*> &o_ln[0, 0] if no and m else NULL; Rc.o_lt = <char*> &o_lt[0, 0] if no and m else NULL
    Rc.o_gap = <char*> &o_gap[0, 0] if no and m else NULL; Rc.o_slip = <char*> &o_slip[0, 0] if no and m else NULL
    Rc.o_state = <char*> &o_state[0, 0] if no and m else NULL
    Rc.o_seg = <char*> &o_seg[0, 0] if no and m else NULL
    Rc.o_geo = <char*> &o_geo[0, 0, 0] if no and m else NULL
    Rc.o_energy = <char*> &o_energy[0, 0] if no else NULL; Rc.o_chan = <char*> &o_chan[0, 0] if no and nc else NULL
    for k in range(2):
        Rc.s_ln[k] = o_ln.strides[k]; Rc.s_lt[k] = o_lt.strides[k]; Rc.s_gap[k] = o_gap.strides[k]
        Rc.s_slip[k] = o_slip.strides[k]; Rc.s_state[k] = o_state.strides[k]; Rc.s_seg[k] = o_seg.strides[k]
        Rc.s_energy[k] = o_energy.strides[k]; Rc.s_chan[k] = o_chan.strides[k]
    for k in range(3):
        Rc.s_geo[k] = o_geo.strides[k]
    C.ss = &ss; C.ms = &ms; C.mX = &mX[0, 0] if M else NULL; C.lam = &lam[0, 0] if m else NULL
    C.code = &code[0] if m else NULL; C.oldc = oldc; C.changes = &changes[0] if m else NULL
    C.off = &off[0] if m else NULL; C.alpha = alpha; C.gnv = gnv; C.gap = gap; C.ab = ab; C.idx = idx
    C.lall = lall; C.mu = &mu[0] if m else NULL; C.mun = mun; C.node_itf = &node_itf[0] if m else NULL
    C.fsum = fsum; C.acc = &acc[0] if acc.shape[0] else NULL; C.SU = SU; C.MC = MC; C.MS = MS; C.m = m
    C.n_itf = n_itf; C.fast = fast; C.accounts = accounts != 0; C.laws = laws
    A.J = J; A.Ja = Ja; A.b = b; A.ba = ba; A.lall = lall; A.la = la; A.z = z; A.w = w
    A.muo = muo; A.mua = mua; A.mue = mue; A.mun = mun; A.act = act; A.idx = idx; A.lidx = lidx
    A.lcode = &lcode[0] if m else NULL
    A.lpar = &lpar[0, 0] if m else NULL
    A.nm = nm; A.h = h; A.tol = tol; A.max_iter = max_iter; A.max_passes = _PASSES; A.laws = laws
    P.fc = &fc[0] if nm else NULL
    P.fr = &fr[0] if nm else NULL
    P.cd = &cdamp[0] if nm else NULL
    P.w2 = &w2[0] if nm else NULL
    P.h2 = h2
    P.inv_h = inv_h
    X.row = &xrow[0, 0] if ns and nm else NULL
    X.win = &xwin[0, 0] if ns else NULL
    X.val = &xval[0, 0] if ns and xval.shape[0] else NULL
    X.ns = ns if nm and xval.shape[0] else 0
    X.nm = nm
    X.track = fast and not sampled and X.ns > 0
    X.xa = -1
    X.xb = -1
    X.xd = NULL
    if X.track:
        X.xd = <double*> malloc(10 * ns * sizeof(double))
        if X.xd == NULL:
            raise MemoryError("work space of the force series")
        X.xs = &X.xd[6 * ns]
        X.xe = &X.xd[7 * ns]
    L.q = NULL
    L.works = accounts != 0
    if fast and not sampled:
        # one block for the four states, the lean pass's coefficients (q, p, H, Hr), the copies
        # of the six node rows and the coefficients A, B of the pass without the works, every
        # array at the same place in a 64-byte line, chosen so that the first coordinate of the
        # master window is at a line's start (the long pass starts aligned)
        if 0 <= hint[0] < segs.shape[0]:
            shift = (8 - mwin[segs[hint[0], 0], 0] % 8) % 8
        # (one line more than whole lines: arrays a multiple of 4096 bytes apart would make the
        # loads of one wait on the stores of another with the same low address bits)
        stride = (nm + shift + 7) // 8 * 8 + 8
        lcoef = <double*> malloc((16 * stride + 8) * sizeof(double))
        if lcoef == NULL:
            free(X.xd)
            raise MemoryError("work space of the one-node passes")
        base = &lcoef[((64 - (<size_t> lcoef) % 64) % 64) // 8 + shift]
        for k in range(4):
            E[k] = &base[k * stride]
        L.q = &base[4 * stride]
        L.p = &base[5 * stride]
        L.H = &base[6 * stride]
        L.Hr = &base[7 * stride]
        rcopy = &base[8 * stride]
        L.A = &base[14 * stride]
        L.B = &base[15 * stride]
        for k in range(nm):
            base[4 * stride + k] = h2 * w2[k]
            base[5 * stride + k] = h * cdamp[k]
            base[6 * stride + k] = h2 * fc[k]
            base[7 * stride + k] = h2 * fr[k]
            base[14 * stride + k] = 2.0 - h2 * w2[k] - h * cdamp[k]
            base[15 * stride + k] = h * cdamp[k] - 1.0
    with nogil:  # (nothing in it raises: X.xd and lcoef are freed after it)
        for k in range(4 * M):
            iwork[6 * m + k] = _NEVER
        for k in range(nm):
            E[0][k] = eta_prev[k]
            E[1][k] = eta[k]
            w[k] = h2
        # slave displacements at the states i0 - 1 and i0 (slots of E[0], E[1])
        tt_p = step_time(i0 - 1, h)
        tt_n = step_time(i0, h)
        for i in range(m):
            node_disp(&ss, i, E[0], tt_p, 0, &SU[0][2 * i], &SU[0][2 * i + 1])
            node_disp(&ss, i, E[1], tt_n, 1, &SU[1][2 * i], &SU[1][2 * i + 1])
        series_start(&X, E[0], E[1])
        rem = i0 % dec
        for s in range(n_steps):
            n = i0 + s
            t = n * h
            Ep = E[slot_p]
            En = E[slot_n]
            Ex = E[slot_x]
            Es = E[3]
            tt_p = step_time(n - 1, h)
            tt_n = step_time(n, h)
            tt_x = t + h
            P.t = t
            grid = rem == 0
            # --- one node sliding on the segment of the last step's pass (``slide``): the step
            #     from the locals of its node alone; the general body below takes every other
            #     step, and this one when the node left the segment, opened or the closed form of
            #     its problem does not apply (nothing is stored before those tests)
            slide = (pre and not L.works and not off[0] and s + 1 < n_steps and gseg == hint[0]
                     and (X.ns == 0 or L.xrange >= 0))
            if slide:
                # the predicted node displacements (the last pass's products and the driven parts)
                driven_disp(&ss, 0, tt_x, s + 2, &ax, &ay)
                sxp = dpre[0] + ax
                syp = dpre[1] + ay
                driven_disp(&ms, fa, tt_x, s + 2, &ax, &ay)
                ax = dpre[2] + ax
                ay = dpre[3] + ay
                driven_disp(&ms, fb, tt_x, s + 2, &bx, &by)
                bx = dpre[4] + bx
                by = dpre[5] + by
                segment_frame(ss.X[0] + sxp, ss.X[1] + syp, mX[fa, 0] + ax, mX[fa, 1] + ay, mX[fb, 0] + bx,
                       mX[fb, 1] + by, &al, &g, &nx, &ny, &tx, &ty)
                slide = al >= 0.0 and al <= 1.0 and (g <= 0 or lam[0, 0] > 0)
                if slide:
                    # the relative motion over the step against the state n (its cache: the last
                    # step's update), W from the Gram matrix, the closed-form solve
                    cx0 = MC[slot_n][2 * fa]
                    cy0 = MC[slot_n][2 * fa + 1]
                    cx1 = MC[slot_n][2 * fb]
                    cy1 = MC[slot_n][2 * fb + 1]
                    rx = (sxp - SU[slot_n][0]) - ((1 - al) * (ax - cx0) + al * (bx - cx1))
                    ry = (syp - SU[slot_n][1]) - ((1 - al) * (ay - cy0) + al * (by - cy1))
                    w_one(Q18, al, nx, ny, tx, ty, h2, W3)
                    b2[0] = g
                    b2[1] = rx * tx + ry * ty
                    l2[0] = lam[0, 0]
                    l2[1] = lam[0, 1]
                    if law:
                        slide = law_closed(W3, b2, lcode[0], &lpar[0, 0], h, l2, &mul)
                    else:
                        slide = coulomb_closed(W3, b2, mu[0], l2)  # (else the sweeps, below)
            if slide:
                stats[1] += 1
                if stats[0] < 1:
                    stats[0] = 1
                if stats[2] < 1:
                    stats[2] = 1
                stats[3] = 0.0
                if X.ns:  # (the series' product with e*: the last pass's)
                    X.xs[0] = xnext
                # update: the rows' coefficients and the node displacements after the step, then
                # the pass (e_next, the next predictor and its products with the rows)
                one_rows(al, nx, ny, tx, ty, cN12)
                update_one(&ss, &ms, fa, fb, Es, Ex, h2, l2, cN12, G6, True, sxp, syp, ax, ay, bx, by,
                            &SU[slot_x][0], &MC[slot_x][0], &MS[slot_x][0], n + 1, c6)
                xpre = L.xrange >= 0
                hxv = h2 * X.val[(s + 1) * X.ns] if xpre else 0.0
                if L.tight and not grid:  # (the two windows' loops inlined)
                    tight_next(&L, (n + 1) * h, Es, En, Ex, &F, c6, dpre, X.row if xpre else NULL, hxv, &xnext)
                elif L.tight:
                    tight_energy(&L, &P, (n + 1) * h, Es, En, Ex, &F, c6, sums, dpre, X.row if xpre else NULL, hxv,
                                  &xnext)
                else:
                    lean_next(&L, &P, (n + 1) * h, Es, En, Ep, Ex, &F, c6, grid, sums, dpre,
                               X.row if xpre else NULL, hxv, &xnext)
                _swap(E, 3, slot_x)
                Es = E[3]
                Ex = E[slot_x]
                kin = sums[2] if grid else -1.0
                strn = sums[3] if grid else 0.0
                # close: the forces, the slip of the step (after it, against the state n), the state
                # (the one-node close of the general body below does the same; reached from here
                # through it, the step measured 2-4 ns slower, so the slide keeps its own)
                lam[0, 0] = l2[0]
                lam[0, 1] = l2[1]
                qax = MC[slot_x][2 * fa]
                qay = MC[slot_x][2 * fa + 1]
                qbx = MC[slot_x][2 * fb]
                qby = MC[slot_x][2 * fb + 1]
                rx = (SU[slot_x][0] - SU[slot_n][0]) - ((1 - al) * (qax - cx0) + al * (qbx - cx1))
                ry = (SU[slot_x][1] - SU[slot_n][1]) - ((1 - al) * (qay - cy0) + al * (qby - cy1))
                rt0 = rx * tx + ry * ty
                stop_lift = 0
                stop_stick = 0
                st = node_state(l2[0], l2[1], mul, rt0)
                count_change(st, code[0], &changes[0], &stop_lift, &stop_stick)
                code[0] = st
                alpha[0] = rt0
                gap[0] = NAN
                if grid:  # the gap after the step
                    segment_frame(ss.X[0] + SU[slot_x][0], ss.X[1] + SU[slot_x][1], mX[fa, 0] + qax, mX[fa, 1] + qay,
                           mX[fb, 0] + qbx, mX[fb, 1] + qby, &a1, &gap[0], &ex, &ey, &dx, &dy)
                if grid or stop_on_change:  # what a sample records: the contact point and frame of the step
                    cpt[0] = (1 - al) * (mX[fa, 0] + ax) + al * (mX[fb, 0] + bx)
                    cpt[1] = (1 - al) * (mX[fa, 1] + ay) + al * (mX[fb, 1] + by)
                    gnv[0] = nx
                    gnv[1] = ny
                    gnv[2] = tx
                    gnv[3] = ty
            else:
                # --- predictor: one store per element, no branch, no division (the loop vectorises);
                #     the sampled forces are added after. One node: in the same pass as the predicted
                #     displacements of the slave and of the master nodes of its last segment
                fused = False
                if fast and not sampled:
                    if segs[hint[0], 0] != fa or segs[hint[0], 1] != fb:  # (computed again when they change)
                        fa = segs[hint[0], 0]
                        fb = segs[hint[0], 1]
                        fok = node_passes(&ss, &ms, fa, fb, &F, rcopy, stride)
                        if fok:
                            lean_ranges(&L, &F, &X)
                    fused = fok
                if fused:
                    if pre:  # e* and the node parts came out of the last step's update pass (into dpre)
                        dsrc = dpre
                    else:
                        predict_one(&P, En, Ep, Es, &F, d6)
                        dsrc = d6
                    driven_disp(&ss, 0, tt_x, s + 2, &ax, &ay)
                    sxp = dsrc[0] + ax
                    syp = dsrc[1] + ay
                    # (the master nodes' displacements also stay in locals for the search below: their
                    # way through the cache would lengthen the step's chain of dependent operations)
                    for r in range(2):
                        ia = segs[hint[0], r]
                        driven_disp(&ms, ia, tt_x, s + 2, &ax, &ay)
                        fm[2 * r] = dsrc[2 + 2 * r] + ax
                        fm[2 * r + 1] = dsrc[3 + 2 * r] + ay
                        MC[3][2 * ia] = fm[2 * r]
                        MC[3][2 * ia + 1] = fm[2 * r + 1]
                        MS[3][ia] = n + 1
                else:
                    for k in range(nm):
                        Es[k] = 2 * En[k] - Ep[k] + h2 * ((fc[k] + t * fr[k]) - cdamp[k] * (En[k] - Ep[k]) * inv_h
                                                          - w2[k] * En[k])
                if sampled:
                    for k in range(nm):
                        Es[k] += h2 * fs[s, k]
                if fused and pre and xpre:  # the series came with the predictor (in e* and d6)
                    X.xs[0] = xnext
                else:
                    series_add(&X, s, h2, Es)  # force series: over the window of each row
                    if fused and X.track:  # the node displacements the predictor's pass gave: the series' part
                        series_move(&X, &ss, &ms, s, h2, fa, fb, &sxp, &syp, MC[3])
                        fm[0] = MC[3][2 * fa]
                        fm[1] = MC[3][2 * fa + 1]
                        fm[2] = MC[3][2 * fb]
                        fm[3] = MC[3][2 * fb + 1]
                # --- search and rows of the nodes on their master surface
                na = 0
                left = False
                for i in range(m):
                    if not fused:
                        node_disp(&ss, i, Es, tt_x, s + 2, &sxp, &syp)
                    px = ss.X[2 * i] + sxp
                    py = ss.X[2 * i + 1] + syp
                    lo = node_segs[i, 0]
                    mseg = node_segs[i, 1] - lo
                    sgk = hint[i]
                    if fused:  # (m = 1: the nodes of segment hint[0], from the fused pass)
                        ax = fm[0]
                        ay = fm[1]
                        bx = fm[2]
                        by = fm[3]
                    else:
                        cached_disp(&ms, segs[sgk, 0], Es, tt_x, s + 2, n + 1, MC[3], MS[3], &ax, &ay)
                        cached_disp(&ms, segs[sgk, 1], Es, tt_x, s + 2, n + 1, MC[3], MS[3], &bx, &by)
                    segment_frame(px, py, mX[segs[sgk, 0], 0] + ax, mX[segs[sgk, 0], 1] + ay,
                           mX[segs[sgk, 1], 0] + bx, mX[segs[sgk, 1], 1] + by, &al, &g, &nx, &ny, &tx, &ty)
                    if not (al >= 0.0 and al <= 1.0) or off[i]:
                        k = segment_walk(&ms, &segs[0, 0], lo, mseg, px, py, sgk - lo, Es, tt_x, s + 2, n + 1,
                                         MC[3], MS[3])
                        if k >= 0:
                            off[i] = 0
                            sgk = lo + k
                            hint[i] = sgk
                        else:
                            if not off[i] and stop_on_change:
                                left = True  # it was on its surface: the step is not taken
                            off[i] = 1
                            sgk = lo
                        cached_disp(&ms, segs[sgk, 0], Es, tt_x, s + 2, n + 1, MC[3], MS[3], &ax, &ay)
                        cached_disp(&ms, segs[sgk, 1], Es, tt_x, s + 2, n + 1, MC[3], MS[3], &bx, &by)
                        segment_frame(px, py, mX[segs[sgk, 0], 0] + ax, mX[segs[sgk, 0], 1] + ay,
                               mX[segs[sgk, 1], 0] + bx, mX[segs[sgk, 1], 1] + by, &al, &g, &nx, &ny, &tx, &ty)
                    ia = segs[sgk, 0]
                    ib = segs[sgk, 1]
                    ab[2 * i] = ia
                    ab[2 * i + 1] = ib
                    alpha[i] = al
                    gnv[4 * i] = nx
                    gnv[4 * i + 1] = ny
                    gnv[4 * i + 2] = tx
                    gnv[4 * i + 3] = ty
                    gap[i] = g
                    cpt[2 * i] = (1 - al) * (mX[ia, 0] + ax) + al * (mX[ib, 0] + bx)
                    cpt[2 * i + 1] = (1 - al) * (mX[ia, 1] + ay) + al * (mX[ib, 1] + by)
                    if off[i]:
                        cpt[2 * i] = NAN
                        cpt[2 * i + 1] = NAN
                        continue
                    # relative motion of the slave against its master point over the predicted step
                    cached_disp(&ms, ia, En, tt_n, s + 1, n, MC[slot_n], MS[slot_n], &cx0, &cy0)
                    cached_disp(&ms, ib, En, tt_n, s + 1, n, MC[slot_n], MS[slot_n], &cx1, &cy1)
                    rx = (sxp - SU[slot_n][2 * i]) - ((1 - al) * (ax - cx0) + al * (bx - cx1))
                    ry = (syp - SU[slot_n][2 * i + 1]) - ((1 - al) * (ay - cy0) + al * (by - cy1))
                    b[2 * na] = g
                    b[2 * na + 1] = rx * tx + ry * ty
                    seg0 = sgk
                    Jn = &J[2 * na * nm]
                    Jt = &J[(2 * na + 1) * nm]
                    if not fast:  # (one node: its rows enter through the Gram matrix, below)
                        for k in range(nm):
                            Jn[k] = 0.0
                            Jt[k] = 0.0
                        r0 = &ss.R[2 * i * nm]
                        r1 = &ss.R[(2 * i + 1) * nm]
                        for k in range(swin[i, 0], swin[i, 1]):
                            Jn[k] += nx * r0[k] + ny * r1[k]
                            Jt[k] += tx * r0[k] + ty * r1[k]
                    if M and nm and not fast:
                        q0 = &ms.R[2 * ia * nm]
                        q1 = &ms.R[(2 * ia + 1) * nm]
                        c0 = &ms.R[2 * ib * nm]
                        c1 = &ms.R[(2 * ib + 1) * nm]
                        for k in range(mwin[ia, 0], mwin[ia, 1]):
                            ex = (1 - al) * q0[k] + al * c0[k]
                            ey = (1 - al) * q1[k] + al * c1[k]
                            Jn[k] -= nx * ex + ny * ey
                            Jt[k] -= tx * ex + ty * ey
                    muo[na] = mu[i]
                    lall[2 * na] = lam[i, 0]
                    lall[2 * na + 1] = lam[i, 1]
                    act[na] = g <= 0 or lam[i, 0] > 0
                    idx[na] = i
                    na += 1
                if left:
                    reason = 4
                    break
                # --- the contact problem, with the active-set passes
                st3[0] = 0.0
                st3[1] = 0.0
                st3[2] = 1.0
                if laws:  # (a node not solved keeps its stick limit for the state test)
                    for i in range(m):
                        mun[i] = mu[i]
                val = 0.0  # sweeps of the step
                passes = 0
                conv = True
                solved = False
                if fast:
                    # one slave node: W = h^2 J J' from the Gram matrix of its rows and of its
                    # master nodes' (computed again only when its segment changes); the rows, z and
                    # the displacements after the step follow from it without a pass over the modes
                    passes = 1
                    if na == 1 and act[0]:
                        if gseg != seg0:
                            gram(&ss, &ms, 0, ab[0], ab[1], G6)
                            gram_quad(G6, Q18)
                            gseg = seg0
                        # (from the search's locals of the node and into local arrays, which the
                        # compiler keeps in registers: the step's chain of dependent operations runs
                        # through here, and every way through memory would lengthen it)
                        one_rows(al, nx, ny, tx, ty, cN12)
                        w_one(Q18, al, nx, ny, tx, ty, h2, W3)
                        b2[0] = g
                        b2[1] = rx * tx + ry * ty
                        l2[0] = lall[0]
                        l2[1] = lall[1]
                        if not law:
                            coulomb_one(W3, b2, mu[0], l2, tol, max_iter, st3)
                        elif law_closed(W3, b2, lcode[0], &lpar[0, 0], h, l2, &mul):
                            st3[0] = 1.0
                            st3[1] = 0.0
                            st3[2] = 1.0
                        else:  # (no closed form: the step is reported unconverged)
                            st3[0] = 1.0
                            st3[1] = INFINITY
                            st3[2] = 0.0
                        lall[0] = l2[0]
                        lall[1] = l2[1]
                        val = st3[0]
                        solved = True
                    elif na == 1:
                        lall[0] = 0.0
                        lall[1] = 0.0
                if not fast:
                    conv = active_passes(&A, na, st3, &passes, &val)
                stats[1] += val
                if val > stats[0]:
                    stats[0] = val
                if passes > stats[2]:
                    stats[2] = passes
                stats[3] = st3[1]
                if st3[2] != 1.0 or not conv:
                    reason = 3
                    break
                # --- update and the works of the loads and of the damping
                fused2 = False
                if fast and not sampled:
                    if ab[0] != fa or ab[1] != fb:
                        fa = ab[0]
                        fb = ab[1]
                        fok = node_passes(&ss, &ms, fa, fb, &F, rcopy, stride)
                        if fok:
                            lean_ranges(&L, &F, &X)
                    fused2 = fok
                if fast:
                    update_one(&ss, &ms, ab[0], ab[1], Es, Ex, h2, l2, cN12, G6, solved, sxp, syp, ax, ay, bx, by,
                                &SU[slot_x][0], &MC[slot_x][0], &MS[slot_x][0], n + 1, c6 if fused2 else NULL)
                else:
                    for k in range(nm):
                        Ex[k] = Es[k] + z[k]
                a1 = 0.0
                val = 0.0
                kin = -1.0  # twice the kinetic and strain energies: in the same pass when sampled
                strn = 0.0
                pre = False
                if fused2 and s + 1 < n_steps and not off[0]:
                    # the update, works, energies and the next step's predictor (on the same segment:
                    # the node is on it) in one pass
                    # (e_next over e*, the next predictor into the free buffer of slot x: the two
                    # buffers swap)
                    xpre = L.xrange >= 0  # (the next step's force series value in the same pass)
                    lean_next(&L, &P, (n + 1) * h, Es, En, Ep, Ex, &F, c6, grid, sums, dpre,
                               X.row if xpre else NULL, h2 * X.val[(s + 1) * X.ns] if xpre else 0.0, &xnext)
                    _swap(E, 3, slot_x)
                    Es = E[3]
                    Ex = E[slot_x]
                    pre = True
                elif fused2:  # the update, works and energies in one pass
                    advance_one(&P, Ep, En, Es, Ex, &F, c6, grid, sums)
                if fused2:
                    a1 = sums[0]
                    val = sums[1]
                    if grid:
                        kin = sums[2]
                        strn = sums[3]
                elif grid:
                    kin = 0.0
                    for k in range(nm):
                        ex = 0.5 * (Ex[k] - Ep[k])
                        a1 += cdamp[k] * (En[k] - Ep[k]) * inv_h * ex
                        val += (fc[k] + t * fr[k]) * ex
                        ey = (Ex[k] - En[k]) * inv_h
                        kin += ey * ey
                        ey = 0.5 * (En[k] + Ex[k])
                        strn += w2[k] * (ey * ey)
                elif accounts:
                    for k in range(nm):  # the step's damping and modal forces again, times (e_next - e_prev)/2
                        ex = 0.5 * (Ex[k] - Ep[k])
                        a1 += cdamp[k] * (En[k] - Ep[k]) * inv_h * ex
                        val += (fc[k] + t * fr[k]) * ex
                if accounts:
                    if sampled:
                        for k in range(nm):
                            val += fs[s, k] * (0.5 * (Ex[k] - Ep[k]))
                    val += series_work(&X, &ss, &ms, s, fa, fb, c6 if fused2 else NULL, Ex, Ep, slot_p, slot_x)
                    acc[0] += a1
                    acc[1] += val
                # --- close the step of every node: gap after it, slip, works, state
                stop_lift = 0
                stop_stick = 0
                if fast and not accounts:
                    # one node without the works: from the locals of its search (alpha, frame, the
                    # displacements of the state n) and of its update (the cache of the state after)
                    ln = lall[0] if na else 0.0
                    lt = lall[1] if na else 0.0
                    lam[0, 0] = ln
                    lam[0, 1] = lt
                    ia = ab[0]
                    ib = ab[1]
                    ax = MC[slot_x][2 * ia]
                    ay = MC[slot_x][2 * ia + 1]
                    bx = MC[slot_x][2 * ib]
                    by = MC[slot_x][2 * ib + 1]
                    g = NAN
                    if grid and not off[0]:
                        segment_frame(ss.X[0] + SU[slot_x][0], ss.X[1] + SU[slot_x][1], mX[ia, 0] + ax, mX[ia, 1] + ay,
                               mX[ib, 0] + bx, mX[ib, 1] + by, &a1, &g, &ex, &ey, &dx, &dy)
                    if off[0]:
                        cached_disp(&ms, ia, En, tt_n, s + 1, n, MC[slot_n], MS[slot_n], &cx0, &cy0)
                        cached_disp(&ms, ib, En, tt_n, s + 1, n, MC[slot_n], MS[slot_n], &cx1, &cy1)
                    rx = (SU[slot_x][0] - SU[slot_n][0]) - ((1 - al) * (ax - cx0) + al * (bx - cx1))
                    ry = (SU[slot_x][1] - SU[slot_n][1]) - ((1 - al) * (ay - cy0) + al * (by - cy1))
                    rt0 = rx * tx + ry * ty
                    st = node_state(ln, lt, mul, rt0)
                    count_change(st, code[0], &changes[0], &stop_lift, &stop_stick)
                    code[0] = st
                    gap[0] = g
                    alpha[0] = rt0
                else:
                    close_nodes(&C, na, Ep, En, Ex, tt_p, tt_n, tt_x, s, n, slot_p, slot_n, slot_x, grid, mul,
                                cx0, cy0, cx1, cy1, &stop_lift, &stop_stick)
            if stop_on_change:
                reason = 2 if stop_lift else (1 if stop_stick else 0)
            record = grid or reason != 0
            if record and j < no:
                record_step(&Rc, j, grid, Ep, En, Ex, tt_x, s, n, SU[slot_x], MC[slot_x], MS[slot_x], kin, strn)
                j += 1
            # --- advance: rotate the states (previous <- current <- next)
            rem += 1
            if rem == dec:
                rem = 0
            tmpi = slot_p
            slot_p = slot_n
            slot_n = slot_x
            slot_x = tmpi
            if reason != 0:
                s += 1
                break
        else:
            s = n_steps
        for k in range(nm):
            eta_prev[k] = E[slot_p][k]
            eta[k] = E[slot_n][k]
    free(X.xd)
    free(lcoef)
    status[0] = s
    status[1] = reason
    status[2] = j
