# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The output record of the multibody march (``multibody.pyx``) on its grid (and at a stop): each
slave node's forces, gap, slip velocity, state, segment and contact point and force, the energies
and the output channels. Raw C arrays (the outputs with their strides in bytes), validated by the
caller; it runs on output steps only.
"""

from libc.math cimport NAN
from fesub._core._multibody_nodes cimport Nodes, cached_disp
from fesub._core._multibody_search cimport segment_frame


cdef struct Record:
    # the arrays of a record (set once, after the work layout of the march; copies of its node
    # sets, not the march's own: a record then takes the address of none of the march's locals)
    Nodes ms            # master node set
    const double* sX    # (m, 2) reference positions of the slave nodes
    const double* mX    # (M, 2) ... of the master nodes
    const double* lam   # (m, 2) forces of the step
    double* gap         # (m) gap after the step (formed here at a stop off the grid)
    const double* alpha     # (m) slip of the step
    const long* code    # (m) state
    const long* off     # (m) 1: off its master surface
    const long* hint    # (m) segment of each slave node (global index)
    const long* node_segs   # (m, 2) first and last+1 segment of each node's master surface
    const double* cpt   # (m, 2) contact point
    const double* gnv   # (m, 4) frame (nx, ny, tx, ty)
    const long* ab      # (m, 2) master nodes of each slave's segment
    const double* acc   # (4) works
    const double* w2    # (nm) squared circular frequencies
    const double* orow  # (nc, nm) modal rows of the output channels
    const long* owin    # (nc, 2) their windows
    # outputs (byte strides): node arrays (rows: samples), energies (6, samples), channels (3 nc,
    # samples), contact point and force (4, samples, m)
    char* o_ln
    char* o_lt
    char* o_gap
    char* o_slip
    char* o_state
    char* o_seg
    char* o_energy
    char* o_chan
    char* o_geo
    Py_ssize_t s_ln[2]
    Py_ssize_t s_lt[2]
    Py_ssize_t s_gap[2]
    Py_ssize_t s_slip[2]
    Py_ssize_t s_state[2]
    Py_ssize_t s_seg[2]
    Py_ssize_t s_energy[2]
    Py_ssize_t s_chan[2]
    Py_ssize_t s_geo[3]
    Py_ssize_t m
    Py_ssize_t nm
    Py_ssize_t nc
    Py_ssize_t orow_n   # row length of orow
    double h
    double h2
    double inv_h
    bint accounts


cdef inline double* _d2(char* a, const Py_ssize_t* st, Py_ssize_t i, Py_ssize_t j) noexcept nogil:
    return <double*> (a + i * st[0] + j * st[1])


cdef inline double* _d3(char* a, const Py_ssize_t* st, Py_ssize_t c, Py_ssize_t i, Py_ssize_t j) noexcept nogil:
    return <double*> (a + c * st[0] + i * st[1] + j * st[2])


cdef inline long* _l2(char* a, const Py_ssize_t* st, Py_ssize_t i, Py_ssize_t j) noexcept nogil:
    return <long*> (a + i * st[0] + j * st[1])


cdef inline void record_step(Record* R, Py_ssize_t j, bint grid, const double* Ep, const double* En,
                             const double* Ex, double tt_x, Py_ssize_t s, long n, const double* sux, double* mcx,
                             long* msx, double kin, double strn) noexcept nogil:
    """Record sample ``j`` after step n (states ``Ep``, ``En``, ``Ex``; the state after it at time
    tt_x, its slave displacements ``sux`` and its cache of master displacements ``mcx``, ``msx``).
    ``kin`` and ``strn``: twice the kinetic and strain energies after the step when the step's
    pass formed them, else ``kin`` < 0 (off the grid: a stop), and then the gaps after the step
    are formed here too."""
    cdef Py_ssize_t i, k, r, ia, ib
    cdef double ax, ay, bx, by, a1, val, ex, ey, dx, dy
    cdef const double* mX = R.mX
    cdef const double* lam = R.lam
    cdef const double* orow
    for i in range(R.m):
        if not grid and not R.off[i]:  # a stop off the grid: the gap after the step
            ia = R.ab[2 * i]
            ib = R.ab[2 * i + 1]
            cached_disp(&R.ms, ia, Ex, tt_x, s + 2, n + 1, mcx, msx, &ax, &ay)
            cached_disp(&R.ms, ib, Ex, tt_x, s + 2, n + 1, mcx, msx, &bx, &by)
            segment_frame(R.sX[2 * i] + sux[2 * i], R.sX[2 * i + 1] + sux[2 * i + 1],
                          mX[2 * ia] + ax, mX[2 * ia + 1] + ay, mX[2 * ib] + bx, mX[2 * ib + 1] + by,
                          &a1, &R.gap[i], &ex, &ey, &dx, &dy)
        _d2(R.o_ln, R.s_ln, j, i)[0] = lam[2 * i]
        _d2(R.o_lt, R.s_lt, j, i)[0] = lam[2 * i + 1]
        _d2(R.o_gap, R.s_gap, j, i)[0] = R.gap[i]
        _d2(R.o_slip, R.s_slip, j, i)[0] = R.alpha[i] / R.h
        _l2(R.o_state, R.s_state, j, i)[0] = R.code[i]
        _l2(R.o_seg, R.s_seg, j, i)[0] = -1 if R.off[i] else R.hint[i] - R.node_segs[2 * i]
        _d3(R.o_geo, R.s_geo, 0, j, i)[0] = R.cpt[2 * i]
        _d3(R.o_geo, R.s_geo, 1, j, i)[0] = R.cpt[2 * i + 1]
        _d3(R.o_geo, R.s_geo, 2, j, i)[0] = lam[2 * i] * R.gnv[4 * i] + lam[2 * i + 1] * R.gnv[4 * i + 2]
        _d3(R.o_geo, R.s_geo, 3, j, i)[0] = lam[2 * i] * R.gnv[4 * i + 1] + lam[2 * i + 1] * R.gnv[4 * i + 3]
    if kin < 0.0:  # a stop sampled off the decimation grid
        kin = 0.0
        for k in range(R.nm):
            ex = (Ex[k] - En[k]) * R.inv_h
            kin += ex * ex
            ey = 0.5 * (En[k] + Ex[k])
            strn += R.w2[k] * (ey * ey)
    _d2(R.o_energy, R.s_energy, 0, j)[0] = 0.5 * kin
    _d2(R.o_energy, R.s_energy, 1, j)[0] = 0.5 * strn
    for k in range(4):
        _d2(R.o_energy, R.s_energy, 2 + k, j)[0] = R.acc[k] if R.accounts else NAN
    for r in range(R.nc):
        a1 = 0.0
        val = 0.0
        ey = 0.0
        orow = &R.orow[r * R.orow_n]
        for k in range(R.owin[2 * r], R.owin[2 * r + 1]):
            a1 += orow[k] * En[k]
            val += orow[k] * (Ex[k] - Ep[k])
            ey += orow[k] * (Ex[k] - 2.0 * En[k] + Ep[k])
        _d2(R.o_chan, R.s_chan, 3 * r, j)[0] = a1
        _d2(R.o_chan, R.s_chan, 3 * r + 1, j)[0] = val / (2 * R.h)
        _d2(R.o_chan, R.s_chan, 3 * r + 2, j)[0] = ey / R.h2
