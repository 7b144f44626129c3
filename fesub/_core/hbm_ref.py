"""NumPy twin of the ``hbm`` kernel: transition-time march of a friction contact element.

The element (stick-slip-separation, Yang / Petrov-Ewins) is driven by the zero-mean relative
displacements ``x(tau) = H(tau)^T X`` (tangential) and ``y(tau) = H(tau)^T Y`` (normal),
``H = [cos tau, sin tau, ..., cos nh tau, sin nh tau]``. States: 0 stick, 1 positive slip,
2 negative slip, 3 separation. Every transition is the first upcrossing of a test function
``f(tau) = a + s * d^d/dtau^d (g^T H)`` with ``g`` one of

    g0 = kx X - mu ky Y,   g1 = kx X + mu ky Y,   g2 = ky Y

    stick  -> slip+ : f = c - mu N0 + g0          (f_x reaches +mu f_y)
    stick  -> slip- : f = -c - mu N0 - g1         (f_x reaches -mu f_y)
    contact-> sep.  : f = -N0 - g2                (f_y = N0 + ky y drops to 0)
    slip+  -> stick : f = -d(g0)/dtau             (kx x' - mu ky y' changes sign)
    slip-  -> stick : f = +d(g1)/dtau             (-kx x' - mu ky y' changes sign)
    sep.   -> contact: f = N0 + g2                (stick if kx|x'| <= mu ky y', else slip)

In stick ``f_x = c + kx x``. The march runs over a grid of ``ngrid`` steps per period; each step
is split at the critical point of ``f`` (root of ``f'``, bisection) so that a level crossing that
touches the threshold between two grid points is still bracketed; a crossing is accepted when
``f`` exceeds ``tol`` at the end of an increasing piece, and is refined by bisection to machine
precision. Period 1 starts at tau = 0 from the provisional state (stick with f_x = 0, or
separation) and erases history whenever any slip or separation occurs; period 2 is recorded.

Functions
---------
march(X, Y, nh, kx, ky, mu, n0, ngrid, tol, work, tau_out, from_out, to_out, info) -> int
    ``work`` holds >= 10 nh values (the compiled kernel keeps its trigonometric tables there).
    Writes the transitions of the recorded period (tau in [0, 2 pi]), their from/to states and
    ``info = [state at tau = 0 of the recorded period, number of transitions in period 1]``.
    Returns the number of transitions, or -1 when more than ``len(tau_out)`` occur.
cycle_forces(X, Y, nh, kx, ky, mu, n0, tau, fr, to, F, K, work)
    Writes the harmonic force ``F = (1/pi) int H f dtau`` (4 nh: tangential, normal) and its
    derivative ``K = dF/d[X; Y]`` (4 nh, 4 nh) of the cycle whose transitions (sorted ``tau``,
    from/to states, at least one) the march found: the law is affine in ``[X; Y]`` on every
    interval (stick ``f_x = c_j + kx x`` with the offset ``c_j`` set by the transition that
    starts it, slip ``f_x = xi mu f_y``, separation 0; ``f_y = N0 + ky y`` in contact), the
    interval integrals are closed forms, and ``dc_j`` is the offset's gradient (transition time
    sensitivity included). ``work`` holds >= 4 nh^2 + 12 nh + 2 values.
cycle_hess_lam(X, Y, nh, kx, ky, mu, n0, tau, fr, to, lam, HL, work)
    Writes ``HL = sum_i lam_i d^2 F_i / d[X; Y]^2`` (4 nh, 4 nh) of the same cycle: the
    curvature of the stick offsets ``(lam . w_j) d^2 c_j`` (second derivatives of the
    transition times that start them) and, at every transition where the law's gradient jumps,
    ``(1/pi) (lam . H(tau_t) jump) dtau_t^T``. ``work`` holds >= (transitions + 7) 4 nh values.
"""

from __future__ import annotations

import math

import numpy as np

TWO_PI = 2.0 * math.pi


def _trig(g, nh, tau, d):
    k = np.arange(1, nh + 1, dtype=float)
    th = k * tau + d * (0.5 * math.pi)
    kd = k ** d
    return float(np.sum(kd * (g[0::2] * np.cos(th) + g[1::2] * np.sin(th))))


def _bisect_deriv(g, nh, d, s, lo, hi):
    """Root of s * trig_{d+1}(g) in [lo, hi] (sign change assumed)."""
    flo = s * _trig(g, nh, lo, d + 1)
    for _ in range(80):
        m = 0.5 * (lo + hi)
        if m <= lo or m >= hi:
            break
        fm = s * _trig(g, nh, m, d + 1)
        if (fm > 0) == (flo > 0):
            lo, flo = m, fm
        else:
            hi = m
    return 0.5 * (lo + hi)


def _first_up(g, nh, d, a0, s, lo, hi, tol):
    """First upcrossing of f = a0 + s trig_d(g) in [lo, hi], or -1."""
    dl = s * _trig(g, nh, lo, d + 1)
    dr = s * _trig(g, nh, hi, d + 1)
    if (dl > 0) != (dr > 0) and dl != 0 and dr != 0:
        tc = _bisect_deriv(g, nh, d, s, lo, hi)
        pieces = ((lo, tc), (tc, hi))
    else:
        pieces = ((lo, hi),)
    for a, b in pieces:
        fa = a0 + s * _trig(g, nh, a, d)
        fb = a0 + s * _trig(g, nh, b, d)
        if fb > tol and fa < fb:
            la, hb = a, b
            for _ in range(80):
                m = 0.5 * (la + hb)
                if m <= la or m >= hb:
                    break
                if a0 + s * _trig(g, nh, m, d) > 0:
                    hb = m
                else:
                    la = m
            return hb
    return -1.0


def march(X, Y, nh, kx, ky, mu, n0, ngrid, tol, work, tau_out, from_out, to_out, info):
    m = 2 * nh
    g0 = work[0:m]
    g1 = work[m:2 * m]
    g2 = work[2 * m:3 * m]
    g0[:] = kx * X[:m] - mu * ky * Y[:m]
    g1[:] = kx * X[:m] + mu * ky * Y[:m]
    g2[:] = ky * Y[:m]
    normal = bool(np.any(g2 != 0))
    cap = tau_out.shape[0]
    x0 = _trig(X, nh, 0.0, 0)
    N = n0 + _trig(g2, nh, 0.0, 0)
    if N <= 0:
        state, c = 3, 0.0
    else:
        state, c = 0, -kx * x0
    h = TWO_PI / ngrid
    count1 = 0
    n = 0
    for period in range(2):
        if period == 1:
            info[0] = state
        nev = 0
        for i in range(ngrid):
            t = i * h
            b = TWO_PI if i == ngrid - 1 else (i + 1) * h
            while True:
                best, kind = -1.0, -1
                if state == 0:
                    cands = ((g0, 0, c - mu * n0, 1.0, 0), (g1, 0, -c - mu * n0, -1.0, 1),
                             (g2, 0, -n0, -1.0, 2))
                elif state == 1:
                    cands = ((g0, 1, 0.0, -1.0, 3), (g2, 0, -n0, -1.0, 2))
                elif state == 2:
                    cands = ((g1, 1, 0.0, 1.0, 4), (g2, 0, -n0, -1.0, 2))
                else:
                    cands = ((g2, 0, n0, 1.0, 5),)
                if not normal:  # ky Y == 0: f = -N0 < 0 of the separation test never crosses
                    cands = tuple(q for q in cands if q[4] != 2)
                for g, d, a0, s, k in cands:
                    r = _first_up(g, nh, d, a0, s, t, b, tol)
                    if r >= 0 and (best < 0 or r < best):
                        best, kind = r, k
                if best < 0:
                    break
                ts = best
                old = state
                if kind == 0:
                    state = 1
                elif kind == 1:
                    state = 2
                elif kind == 2:
                    state = 3
                elif kind == 3 or kind == 4:
                    xi = 1.0 if kind == 3 else -1.0
                    state = 0
                    c = xi * mu * (n0 + _trig(g2, nh, ts, 0)) - kx * _trig(X, nh, ts, 0)
                else:
                    xd = _trig(X, nh, ts, 1)
                    yd = _trig(g2, nh, ts, 1)
                    if kx * abs(xd) <= mu * yd:
                        state = 0
                        c = -kx * _trig(X, nh, ts, 0)
                    else:
                        state = 1 if xd > 0 else 2
                nev += 1
                if period == 1:
                    if n >= cap:
                        return -1
                    tau_out[n] = ts
                    from_out[n] = old
                    to_out[n] = state
                    n += 1
                elif nev > cap:
                    return -1
                t = ts
        if period == 0:
            count1 = nev
            info[1] = count1
            if count1 == 0:
                info[0] = state
                return 0
    return n


def _interval_integrals(nh, a, b):
    """``w = (1/pi) int_a^b H`` (2 nh,) and ``W = (1/pi) int_a^b H H^T`` (2 nh, 2 nh): with
    ``C_k = (sin kb - sin ka) / k``, ``S_k = (cos ka - cos kb) / k`` (``C_0 = b - a``), the
    products ``cos n cos q = (cos(n-q) + cos(n+q)) / 2`` etc. integrate to sums of them."""
    k = np.arange(1, 2 * nh + 1, dtype=float)
    C = np.concatenate([[b - a], (np.sin(k * b) - np.sin(k * a)) / k])
    S = np.concatenate([[0.0], (np.cos(k * a) - np.cos(k * b)) / k])
    n = np.arange(1, nh + 1)
    dif = np.abs(n[:, None] - n[None, :])
    add = n[:, None] + n[None, :]
    sgn = np.sign(n[:, None] - n[None, :])
    W = np.empty((2 * nh, 2 * nh))
    W[0::2, 0::2] = 0.5 * (C[dif] + C[add])
    W[1::2, 1::2] = 0.5 * (C[dif] - C[add])
    W[0::2, 1::2] = 0.5 * (S[add] - sgn * S[dif])
    W[1::2, 0::2] = 0.5 * (S[add] + sgn * S[dif])
    w = np.empty(2 * nh)
    w[0::2], w[1::2] = C[1:nh + 1], S[1:nh + 1]
    return w / math.pi, W / math.pi


def cycle_forces(X, Y, nh, kx, ky, mu, n0, tau, fr, to, F, K, work):
    m, mp = 2 * nh, 4 * nh
    if len(work) < 4 * nh * nh + 12 * nh + 2:
        raise ValueError(f"work must hold >= 4 nh^2 + 12 nh + 2 = {4 * nh * nh + 12 * nh + 2} "
                         f"values, got {len(work)}")
    if F.shape != (mp,) or K.shape != (mp, mp):
        raise ValueError(f"F must be ({mp},) and K ({mp}, {mp})")
    X, Y = np.asarray(X, float), np.asarray(Y, float)
    F[:] = 0.0
    K[:] = 0.0
    nev = len(tau)
    k = np.arange(1, nh + 1, dtype=float)
    for j in range(nev):
        s = to[j]
        if s == 3:
            continue
        ta = tau[j]
        tb = tau[j + 1] if j + 1 < nev else tau[0] + TWO_PI
        w, W = _interval_integrals(nh, ta, tb)
        if s == 0:
            Hs = np.empty(m)
            Hs[0::2], Hs[1::2] = np.cos(k * ta), np.sin(k * ta)
            Hd = np.empty(m)
            Hd[0::2], Hd[1::2] = -k * Hs[1::2], k * Hs[0::2]
            x, y, xd, yd = Hs @ X, Hs @ Y, Hd @ X, Hd @ Y
            if fr[j] in (1, 2):  # slip -> stick
                xi = 1.0 if fr[j] == 1 else -1.0
                c = xi * mu * (n0 + ky * y) - kx * x
                dc = np.concatenate([-kx * Hs, xi * mu * ky * Hs])
            else:  # re-contact in stick (N0 + ky y = 0 at ta)
                c = -kx * x
                dc = np.concatenate([-kx * Hs, kx * xd * Hs / yd])
            F[:m] += kx * W @ X + c * w
            K[:m, :m] += kx * W
            K[:m, :] += np.outer(w, dc)
        else:
            xi = 1.0 if s == 1 else -1.0
            F[:m] += xi * mu * (n0 * w + ky * W @ Y)
            K[:m, m:] += xi * mu * ky * W
        F[m:] += n0 * w + ky * W @ Y
        K[m:, m:] += ky * W


def _point(nh, X, Y, tau):
    """Rows ``H(tau)``, ``H'(tau)`` and ``(x, x', x'', y, y', y'')`` at ``tau``."""
    k = np.arange(1, nh + 1, dtype=float)
    Hs = np.empty(2 * nh)
    Hs[0::2], Hs[1::2] = np.cos(k * tau), np.sin(k * tau)
    Hd = np.empty(2 * nh)
    Hd[0::2], Hd[1::2] = -k * Hs[1::2], k * Hs[0::2]
    Hdd = -np.repeat(k * k, 2) * Hs
    return Hs, Hd, (Hs @ X, Hd @ X, Hdd @ X, Hs @ Y, Hd @ Y, Hdd @ Y)


def _sym(coef, p, d, q):
    """``coef (p d^T + d p^T + q d d^T)``."""
    return coef * (np.outer(p, d) + np.outer(d, p) + q * np.outer(d, d))


def cycle_hess_lam(X, Y, nh, kx, ky, mu, n0, tau, fr, to, lam, HL, work):
    m, mp = 2 * nh, 4 * nh
    nev = len(tau)
    if len(work) < (nev + 7) * mp:
        raise ValueError(f"work must hold >= (transitions + 7) 4 nh = {(nev + 7) * mp} values, "
                         f"got {len(work)}")
    if len(lam) != mp or HL.shape != (mp, mp):
        raise ValueError(f"lam must be ({mp},) and HL ({mp}, {mp})")
    X, Y, lam = np.asarray(X, float), np.asarray(Y, float), np.asarray(lam, float)
    HL[:] = 0.0
    dc = np.zeros((nev, mp))
    z = np.zeros(m)
    # stick intervals: offset gradients dc_j and the curvature (lam . w_j) d2c_j
    for j in range(nev):
        if to[j] != 0:
            continue
        ta = tau[j]
        tb = tau[j + 1] if j + 1 < nev else tau[0] + TWO_PI
        w, _ = _interval_integrals(nh, ta, tb)
        aj = lam[:m] @ w
        Hs, Hd, (x, xd, xdd, y, yd, ydd) = _point(nh, X, Y, ta)
        if fr[j] in (1, 2):  # slip -> stick: xi kx x' = mu ky y' defines the time
            xi = 1.0 if fr[j] == 1 else -1.0
            dc[j] = np.concatenate([-kx * Hs, xi * mu * ky * Hs])
            dt = -np.concatenate([xi * kx * Hd, -mu * ky * Hd]) / (xi * kx * xdd - mu * ky * ydd)
            p = np.concatenate([-kx * Hd, xi * mu * ky * Hd])
            HL += _sym(aj, p, dt, xi * mu * ky * ydd - kx * xdd)
        else:  # re-contact in stick: N0 + ky y = 0 defines the time
            dc[j] = np.concatenate([-kx * Hs, kx * xd * Hs / yd])
            dt = np.concatenate([z, -Hs / yd])
            p = np.concatenate([Hd, -(xd / yd) * Hd])
            HL += _sym(-kx * aj, p, dt, xdd - xd * ydd / yd)
    # transitions: jump of the law's gradient times the transition-time sensitivity
    for t in range(nev):
        jb = (t - 1) % nev
        sb, sa = fr[t], to[t]
        if sb in (1, 2) and sa == 0:
            continue  # slip -> stick: the law is C1 there
        Hs, _, (x, xd, xdd, y, yd, ydd) = _point(nh, X, Y, tau[t])
        vy = np.concatenate([z, Hs])
        if sb == 0 and sa in (1, 2):
            xs = 1.0 if sa == 1 else -1.0
            gp = kx * np.concatenate([Hs, z]) + dc[jb] - xs * mu * ky * vy
            dt = -gp / (kx * xd - xs * mu * ky * yd)
        else:
            dt = -vy / yd
        jx, jy = np.zeros(mp), np.zeros(mp)
        for j, s, sign in ((jb, sb, 1.0), (t, sa, -1.0)):
            if s == 3:
                continue
            jy += sign * ky * vy
            if s == 0:
                jx += sign * (kx * np.concatenate([Hs, z]) + dc[j])
            else:
                jx += sign * (1.0 if s == 1 else -1.0) * mu * ky * vy
        HL += np.outer((lam[:m] @ Hs) * jx + (lam[m:] @ Hs) * jy, dt) / math.pi
