"""NumPy twin of ``fesub/_core/coulomb.pyx`` (same functions, same signatures).

Kernels of the Coulomb-chain study; they know no physics:

* :func:`absmax_modal` -- exact maxima over [0, pi] of sums of sinusoids (closed-form amplitudes);
* :func:`sup_gsum` -- sup over (0, pi) of a weighted sum of Den Hartog's g functions;
* :func:`run_periods` -- event-driven propagation of a piecewise-linear oscillator whose
  segments are sums of sinusoids (exact modal solution), with stick/slip switching.
"""

from __future__ import annotations

import numpy as np


def _top2(F):
    """Indices (rows, 2) of the two largest local maxima (ends included) of each row of F."""
    G = F.copy()
    m = np.ones(G.shape, bool)
    m[:, 1:] &= G[:, 1:] >= G[:, :-1]
    m[:, :-1] &= G[:, :-1] >= G[:, 1:]
    G = np.where(m, G, -np.inf)
    k = min(2, G.shape[1])
    idx = np.argsort(-G, axis=1, kind="stable")[:, :k]
    valid = np.take_along_axis(G, idx, axis=1) > -np.inf
    return idx, valid


def absmax_modal(sizes, R, u, coef, A, B, beta, X, T, SG, work):
    """Exact maxima of ``x(t) = a cos t + b sin t + beta sum_i coef[k, i] h_i(t)`` on [0, pi].

    ``h_i(t) = 1 - cos(t/R[r, i]) - u[r, i] R[r, i] sin(t/R[r, i])``. For every row ``r`` (grid of
    ``sizes[r]`` points on [0, pi]), coefficient set ``p`` and output ``k``, with
    ``a = A[p, r*n + k]``, ``b = B[p, r*n + k]``: grid scan for the two largest local maxima of
    ``|x|``, 8 Newton steps on ``x' = 0`` from each (kept inside its grid cell), best kept.
    Outputs ``X`` (max |x|), ``T`` (its t) and ``SG`` (signed x there), all (nb, nr*n); NaN
    for rows with a non-finite ``u`` or NaN coefficients. ``work`` is scratch for the compiled
    kernel (at least ``(nm + n + 2) * max(sizes)`` doubles).
    """
    sizes = np.asarray(sizes)
    R = np.asarray(R)
    u = np.asarray(u)
    coef = np.asarray(coef)
    A = np.asarray(A)
    B = np.asarray(B)
    beta = np.asarray(beta)
    nr, nm = R.shape
    n = coef.shape[0]
    nb = A.shape[0]
    A3 = A.reshape(nb, nr, n)
    B3 = B.reshape(nb, nr, n)
    X3 = np.full((nb, nr, n), np.nan)
    T3 = np.full((nb, nr, n), np.nan)
    S3 = np.full((nb, nr, n), np.nan)
    bb = beta[:, None, None, None]
    for nt in np.unique(sizes):
        rows_all = np.nonzero(sizes == nt)[0]
        tau = np.linspace(0.0, np.pi, nt)
        dt = np.pi / (nt - 1)
        for s0 in range(0, rows_all.size, 256):
            rows = rows_all[s0:s0 + 256]
            fin = np.isfinite(u[rows]).all(1)
            rows = rows[fin]
            if rows.size == 0:
                continue
            Rr, ur = R[rows], u[rows]
            h = 1.0 - np.cos(tau / Rr[:, :, None]) - ur[:, :, None] * Rr[:, :, None] * np.sin(tau / Rr[:, :, None])
            H = np.einsum("ki,cit->ckt", coef, h)
            Ar, Br = A3[:, rows, :, None], B3[:, rows, :, None]
            xg = Ar * np.cos(tau) + Br * np.sin(tau) + np.where(bb == 0, 0.0, bb * H[None])
            c = rows.size
            F = np.abs(xg).reshape(nb * c * n, nt)
            cand, valid = _top2(np.where(np.isnan(F), -np.inf, F))
            ib, ir, ik = np.unravel_index(np.arange(nb * c * n), (nb, c, n))
            Rm, um, cm = Rr[ir][:, None, :], ur[ir][:, None, :], coef[ik][:, None, :]
            am = Ar[..., 0].reshape(-1)[:, None]
            bm = Br[..., 0].reshape(-1)[:, None]
            betm = beta[ib][:, None]

            def xval(t, deriv=False):
                ph = t[..., None] / Rm
                sn, cs = np.sin(ph), np.cos(ph)
                hh = (cm * (1.0 - cs - um * Rm * sn)).sum(-1)
                x = am * np.cos(t) + bm * np.sin(t) + np.where(betm == 0, 0.0, betm * hh)
                if not deriv:
                    return x
                h1 = (cm * (sn / Rm - um * cs)).sum(-1)
                h2 = (cm * (cs / Rm ** 2 + um * sn / Rm)).sum(-1)
                x1 = -am * np.sin(t) + bm * np.cos(t) + np.where(betm == 0, 0.0, betm * h1)
                x2 = -am * np.cos(t) - bm * np.sin(t) + np.where(betm == 0, 0.0, betm * h2)
                return x, x1, x2

            tc = cand * dt
            lo = np.maximum(tc - dt, 0.0)
            hi = np.minimum(tc + dt, np.pi)
            t_ref = tc.copy()
            with np.errstate(invalid="ignore", divide="ignore"):
                for _ in range(8):
                    _, x1, x2 = xval(t_ref, deriv=True)
                    step = np.where(x2 != 0, -x1 / x2, 0.0)
                    t_ref = np.clip(t_ref + np.nan_to_num(step), lo, hi)
                t_all = np.concatenate([tc, t_ref], axis=1)
                x_all = xval(t_all)
            ok = np.concatenate([valid, valid], axis=1) & ~np.isnan(x_all)
            a_all = np.where(ok, np.abs(x_all), -np.inf)
            j = np.argmax(a_all, axis=1)
            sel = np.arange(j.size)
            X3[:, rows, :] = np.abs(x_all[sel, j]).reshape(nb, c, n)
            T3[:, rows, :] = t_all[sel, j].reshape(nb, c, n)
            S3[:, rows, :] = x_all[sel, j].reshape(nb, c, n)
    X[...] = X3.reshape(nb, nr * n)
    T[...] = T3.reshape(nb, nr * n)
    SG[...] = S3.reshape(nb, nr * n)


_GOLD = (np.sqrt(5.0) - 1.0) / 2.0


def sup_gsum(sizes, R, u, wts, out):
    """``out[r] = max(sum(wts), sup_{0<t<pi} sum_i wts[i] g_i(t))`` with
    ``g_i = [R sin(t/R) + u R^2 (cos t - cos(t/R))] / sin t`` (``R = R[r, i]``, ``u = u[r, i]``).

    Grid ``t_k = k pi/(sizes[r]-1)``, k = 1 .. sizes[r]-2; the three largest local maxima are
    refined by 45 golden-section steps in +-one grid cell. ``inf`` for rows with non-finite u.
    """
    sizes = np.asarray(sizes)
    R = np.asarray(R)
    u = np.asarray(u)
    w1 = np.asarray(wts).reshape(1, -1)
    lim0 = float(np.sum(wts))
    nr = R.shape[0]

    def gsum(t, Rr, ur):
        tt = t[:, None, :]
        Rc, uc = Rr[:, :, None], ur[:, :, None]
        v = (w1[:, :, None] * (Rc * np.sin(tt / Rc) + uc * Rc * Rc * (np.cos(tt) - np.cos(tt / Rc)))).sum(1)
        return v / np.sin(t)

    res = np.full(nr, np.inf)
    fin = np.isfinite(u).all(1)
    for nt in np.unique(sizes):
        rows_all = np.nonzero((sizes == nt) & fin)[0]
        tau = np.linspace(0.0, np.pi, nt)[1:-1]
        dt = np.pi / (nt - 1)
        for s0 in range(0, rows_all.size, 512):
            rows = rows_all[s0:s0 + 512]
            Rr, ur = R[rows], u[rows]
            G = gsum(np.broadcast_to(tau, (rows.size, tau.size)), Rr, ur)
            Gm = np.where(np.isnan(G), -np.inf, G)
            m = np.ones(Gm.shape, bool)
            m[:, 1:] &= Gm[:, 1:] >= Gm[:, :-1]
            m[:, :-1] &= Gm[:, :-1] >= Gm[:, 1:]
            L = np.where(m, Gm, -np.inf)
            k = min(3, L.shape[1])
            cand = np.argsort(-L, axis=1, kind="stable")[:, :k]
            valid = np.take_along_axis(L, cand, axis=1) > -np.inf
            tc = tau[cand]
            a = np.maximum(tc - dt, 1e-9)
            b = np.minimum(tc + dt, np.pi - 1e-9)
            c = b - _GOLD * (b - a)
            d = a + _GOLD * (b - a)
            fc, fd = gsum(c, Rr, ur), gsum(d, Rr, ur)
            for _ in range(45):
                left = fc >= fd
                b = np.where(left, d, b)
                a = np.where(left, a, c)
                cn, dn = b - _GOLD * (b - a), a + _GOLD * (b - a)
                c, d = np.where(left, cn, d), np.where(left, c, dn)
                fnew = gsum(np.where(left, c, d), Rr, ur)
                fc, fd = np.where(left, fnew, fd), np.where(left, fc, fnew)
            ref = gsum(0.5 * (a + b), Rr, ur)
            ref = np.where(valid & ~np.isnan(ref), ref, -np.inf).max(axis=1)
            res[rows] = np.maximum(np.maximum(ref, Gm.max(axis=1)), lim0)
    out[...] = res


# --- event-driven piecewise-sinusoidal propagator ---------------------------------------------
#
# params: [0] b_amp, [1] Lc0, [2] Lc, [3] L0, [4] mu*beta, [5] kick, [6] h_slip, [7] h_stick,
#         [8] tol_conv
# iparams: [0] max_periods, [1] min_periods, [2] max_seg (per period)
# istate (in/out): [0] mode (-1, +1 slip; 0 stick)
# dstate (in/out): [0] c0 (stick offset), [1] last relative change, [2] contraction estimate
# counts (out): [0] periods run, [1] converged, [2] stick entries, [3] reversals, [4] slip starts
#               (last period), [5] segments logged, [6] status (0 ok, 2 too many segments)
# seglog (out): rows [tau0, mode, c0, x (N), v (N)] for each segment of the last period

TWO_PI = 2.0 * np.pi


def _setup(mode, tau0, x, v, c0, om1, B1, P1, cv1, H1, K1, om2, B2, P2, d2, H2, K2, lrow, p):
    bamp = p[0]
    if mode != 0:
        om, H = om1, H1
        y0 = P1 @ x
        yd0 = P1 @ v
        Pc = mode * K1
    else:
        om, H = om2, H2
        g0 = bamp * np.cos(tau0) + c0
        gd0 = -bamp * np.sin(tau0)
        y0 = P2 @ (x - d2 * g0)
        yd0 = P2 @ (v - d2 * gd0)
        Pc = c0 * K2
    a = y0 - Pc - H * np.cos(tau0)
    b = (yd0 + H * np.sin(tau0)) / om if om.size else yd0 * 0.0
    if mode != 0:
        A = cv1 * om * b
        B = -cv1 * om * a
        C = np.array([0.0, 0.0, bamp - float(cv1 @ H)])
    else:
        A = lrow * a
        B = lrow * b
        C = np.array([float(lrow @ Pc) + p[3] * c0, float(lrow @ H) + p[2], 0.0])
    return om, H, Pc, a, b, A, B, C


def _fval(t, tau0, om, A, B, C):
    t = np.asarray(t, dtype=float)
    ph = om[:, None] * t[None, :] if t.ndim else om * t
    if t.ndim:
        f = (A[:, None] * np.cos(ph) + B[:, None] * np.sin(ph)).sum(0)
    else:
        f = float((A * np.cos(ph) + B * np.sin(ph)).sum())
    return f + C[0] + C[1] * np.cos(tau0 + t) + C[2] * np.sin(tau0 + t)


def _fder(t, tau0, om, A, B, C):
    ph = om * t
    return float((om * (-A * np.sin(ph) + B * np.cos(ph))).sum()) - C[1] * np.sin(tau0 + t) + C[2] * np.cos(tau0 + t)


def _refine(lo, hi, sgn, thr, tau0, om, A, B, C):
    """Root of G(t) = sgn f(t) - thr in [lo, hi] with G(lo) < 0 <= G(hi) (safeguarded Newton)."""
    scale = float(np.abs(A).sum() + np.abs(B).sum() + np.abs(C).sum()) + abs(thr)
    t = 0.5 * (lo + hi)
    for _ in range(100):
        g = sgn * _fval(t, tau0, om, A, B, C) - thr
        if g < 0.0:
            lo = t
        else:
            hi = t
        if abs(g) <= 4e-16 * scale or hi - lo <= 4e-16 * (1.0 + hi):
            break
        d = sgn * _fder(t, tau0, om, A, B, C)
        tn = t - g / d if d != 0.0 else 0.5 * (lo + hi)
        if not (lo < tn < hi):
            tn = 0.5 * (lo + hi)
        t = tn
    return hi if sgn * _fval(hi, tau0, om, A, B, C) - thr >= 0.0 and hi - t < 1e-14 else t


def run_periods(x, v, istate, dstate, om1, B1, P1, cv1, H1, K1, om2, B2, P2, d2, H2, K2,
                lrow, w, kw, params, iparams, seglog, counts, work):
    """Propagate whole forcing periods (tau from 0 to 2 pi) until the Poincare map settles.

    Returns the status (0 ran normally, 2 segment cap exceeded). See the module comment for the
    layout of the arrays; ``x``, ``v``, ``istate``, ``dstate`` are updated in place. ``work`` is
    a scratch array of at least ``20 * N + 16`` doubles (used by the compiled kernel only).
    """
    n = x.shape[0]
    p = np.asarray(params)
    bamp, Lc0, mubeta, kick, h1, h2, tol = p[0], p[1], p[4], p[5], p[6], p[7], p[8]
    max_periods, min_periods, max_seg = int(iparams[0]), int(iparams[1]), int(iparams[2])
    om1, B1, P1, cv1, H1, K1 = map(np.asarray, (om1, B1, P1, cv1, H1, K1))
    om2, B2, P2, d2, H2, K2, lrow, w, kw = map(np.asarray, (om2, B2, P2, d2, H2, K2, lrow, w, kw))
    xs = np.array(x, dtype=float)
    vs = np.array(v, dtype=float)
    mode = int(istate[0])
    c0 = float(dstate[0])
    delta_prev = np.inf
    delta = np.inf
    rho = 1.0
    status = 0
    conv = 0
    nper = 0
    for nper in range(1, max_periods + 1):
        z_old = np.concatenate([xs, vs])
        mode_old = mode
        tau = 0.0
        nseg = 0
        nstick = nrev = nslip = 0
        while True:
            if nseg >= max_seg:
                status = 2
                break
            seglog[nseg, 0] = tau
            seglog[nseg, 1] = mode
            seglog[nseg, 2] = c0
            seglog[nseg, 3:3 + n] = xs
            seglog[nseg, 3 + n:3 + 2 * n] = vs
            nseg += 1
            om, H, Pc, a, b, A, B, C = _setup(mode, tau, xs, vs, c0, om1, B1, P1, cv1, H1, K1,
                                              om2, B2, P2, d2, H2, K2, lrow, p)
            T = TWO_PI - tau
            h = h1 if mode != 0 else h2
            nk = max(1, int(np.ceil(T / h)))
            tk = np.minimum(np.arange(1, nk + 1) * h, T)
            f = _fval(tk, tau, om, A, B, C)
            if mode != 0:
                ev = -mode * f
            else:
                ev = np.abs(f) - mubeta
            hit = np.nonzero(ev >= 0.0)[0]
            if hit.size:
                k = hit[0]
                lo = 0.0 if k == 0 else tk[k - 1]
                hi = tk[k]
                if mode != 0:
                    sg, thr = -float(mode), 0.0
                else:
                    sg, thr = (1.0 if f[k] > 0 else -1.0), mubeta
                if k == 0 and sg * _fval(0.0, tau, om, A, B, C) - thr >= 0.0:
                    te = 0.0
                else:
                    te = _refine(lo, hi, sg, thr, tau, om, A, B, C)
                t_end = te
            else:
                t_end = T
            # state at t_end
            ph = om * t_end
            y = a * np.cos(ph) + b * np.sin(ph) + Pc + H * np.cos(tau + t_end)
            yd = om * (-a * np.sin(ph) + b * np.cos(ph)) - H * np.sin(tau + t_end)
            te_abs = tau + t_end
            if mode != 0:
                xs = B1 @ y
                vs = B1 @ yd
            else:
                xs = B2 @ y + d2 * (bamp * np.cos(te_abs) + c0)
                vs = B2 @ yd + d2 * (-bamp * np.sin(te_abs))
            if not hit.size:
                break
            tau = te_abs
            if mode != 0:
                lam_n = Lc0 * np.cos(tau) - float(kw @ xs)
                vs = vs - d2 * (float(w @ vs) + bamp * np.sin(tau))
                if abs(lam_n) <= mubeta:
                    mode = 0
                    c0 = float(w @ xs) - bamp * np.cos(tau)
                    nstick += 1
                else:
                    mode = 1 if lam_n > 0 else -1
                    vs = vs + mode * kick * d2
                    nrev += 1
            else:
                lam_s = _fval(t_end, tau - t_end, om, A, B, C)
                mode = 1 if lam_s > 0 else -1
                vs = vs + mode * kick * d2
                nslip += 1
        if status:
            break
        z = np.concatenate([xs, vs])
        scale = max(float(np.abs(z).max()), 1e-300)
        delta = float(np.abs(z - z_old).max()) / scale
        rho = min(max(delta / delta_prev, 0.0), 0.999) if delta_prev > 0 else 0.0
        delta_prev = delta
        counts[2], counts[3], counts[4], counts[5] = nstick, nrev, nslip, nseg
        if nper >= min_periods and mode == mode_old and delta / (1.0 - rho) < tol:
            conv = 1
            break
    x[:] = xs
    v[:] = vs
    istate[0] = mode
    dstate[0] = c0
    dstate[1] = delta
    dstate[2] = rho
    counts[0] = nper
    counts[1] = conv
    counts[6] = status
    return status
