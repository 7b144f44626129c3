"""NumPy twin of the ``hbm3d`` kernel: sampled return map of many 3-component friction elements.

An element is driven by three sampled scalar histories built from its coefficient vector
``p = [X1; X2; Y]`` (three blocks of ``m`` values) and a sample matrix ``E`` (nt, m):
``a1 = E X1``, ``a2 = E X2`` (the in-plane components) and ``n = n0 + kn E Y`` (the raw
normal value). Its parameters are ``par = [kt, kn, mu, n0]``. The map, sample ``i`` after
sample ``i - 1`` (``nt - 1`` before ``0``, the sequence is periodic):

* ``n_i <= 0``: ``f = 0`` (the components ``f1, f2`` and ``fn``), history erased;
* otherwise the predictor ``t = f_prev + kt (a_i - a_prev)`` (after an erased sample ``f_prev =
  0`` and ``a_prev`` is replaced by the point where ``n`` crosses 0, linear interpolation
  ``theta = -n_prev / (n_i - n_prev)``), then the radial return: ``f = t`` when
  ``|t| <= mu n_i``, else ``f = mu n_i t / |t|``; ``fn = n_i``.

The march starts from the rest state (``f = 0`` with the slider at the origin ``a = 0``: the
first predictor is ``kt a_0``; a contact separated at the last sample starts from the
interpolated crossing as in every period) and runs whole periods until the value at the end of a period
differs from its value at the start (for the first period ``kt a_-1``, the force at ``a_-1`` that
gives sample 0 the same predictor as the rest state) by at most ``tol * mu max(n)`` (the next period would then
repeat the last one to that bound: the return map is non-expansive) or ``max_periods`` are
done. The derivative ``D = d f / d p`` (2, 3m) is carried through every step by the chain rule
(predictor ``D_prev + kt (e_i - e_prev)`` in the block of each component, interpolation
``theta``'s derivative after an erased sample, and in slip
``mu t^ dn + (mu n / |t|) (I - t^ t^T) D_t``), so ``K`` below is the exact derivative of this
discrete map.

Functions
---------
aft_march(P, par, E, tol, max_periods, F, K, H, info, res, work)
    ``P`` (ne, 3m), ``par`` (ne, 4), ``E`` (nt, m); writes for every element the projections
    of the last period ``F = (2/nt) [E^T f1; E^T f2; E^T fn]`` (ne, 3m), ``K = dF/dp``
    (ne, 3m, 3m), ``info`` (ne,) the periods marched and ``res`` (ne,) the end-of-period
    change of the last period (the units of ``f``); with ``H`` of shape (ne, nt, 3) also the
    samples ``[f1, f2, fn]`` of the last period (``H`` of shape (0, 0, 0): not written).
    ``work`` holds >= ``3 nt + 12 m`` values (scratch of the compiled kernel; unused here).
"""

from __future__ import annotations

import numpy as np


def _check(P, par, E, F, K, H, info, res, work):
    ne = P.shape[0]
    nt, m = E.shape
    if P.shape != (ne, 3 * m) or par.shape != (ne, 4):
        raise ValueError(f"P must be (ne, {3 * m}) and par (ne, 4)")
    if F.shape != (ne, 3 * m) or K.shape != (ne, 3 * m, 3 * m) or info.shape[0] != ne \
            or res.shape[0] != ne:
        raise ValueError("F, K, info, res do not match the number of elements")
    if H.shape[0] and H.shape != (ne, nt, 3):
        raise ValueError(f"H must be ({ne}, {nt}, 3) or empty")
    if work.shape[0] < 3 * nt + 12 * m:
        raise ValueError(f"work must hold >= 3 nt + 12 m = {3 * nt + 12 * m} values")
    return ne, nt, m


def _histories(P, par, E):
    m = E.shape[1]
    a1 = P[:, :m] @ E.T
    a2 = P[:, m:2 * m] @ E.T
    nn = par[:, 3:4] + par[:, 1:2] * (P[:, 2 * m:] @ E.T)
    return a1, a2, nn


def _start(a1, a2, nn, period):
    """State before the first sample of a period: the last sample of the previous period, and
    before the first period the rest state (slider at the origin, ``f = 0``: a contact that
    stays stuck is the linear spring ``kt u``, its mean included), unless the last sample is
    separated (then the crossing of ``n = 0`` is interpolated as in every period)."""
    Np = nn[:, -1]
    sep = Np <= 0
    if period == 1:
        return np.where(sep, a1[:, -1], 0.0), np.where(sep, a2[:, -1], 0.0), Np, sep
    return a1[:, -1], a2[:, -1], Np, sep


def _step_values(f1, f2, a1, a2, up1, up2, Ni, Np, sep, kt, mu):
    """One step of the map on arrays over elements (values only)."""
    contact = Ni > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        th = np.where(sep & contact, -Np / (Ni - Np), 0.0)
    g1 = np.where(sep, 0.0, f1)
    g2 = np.where(sep, 0.0, f2)
    t1 = g1 + kt * (1.0 - th) * (a1 - up1)
    t2 = g2 + kt * (1.0 - th) * (a2 - up2)
    lim = mu * Ni
    tn = np.hypot(t1, t2)
    slip = tn > lim
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.where(slip, lim / tn, 1.0)
    f1 = np.where(contact, s * t1, 0.0)
    f2 = np.where(contact, s * t2, 0.0)
    return f1, f2, th, t1, t2, tn, slip, contact


def aft_march(P, par, E, tol, max_periods, F, K, H, info, res, work):
    ne, nt, m = _check(P, par, E, F, K, H, info, res, work)
    P = np.asarray(P, float)
    E = np.asarray(E, float)
    kt, kn, mu = par[:, 0], par[:, 1], par[:, 2]
    a1, a2, nn = _histories(P, par, E)
    scale = mu * np.maximum(nn.max(axis=1), 0.0)
    # ---- values only: how many periods until the end value repeats the start value
    f1 = np.zeros(ne)
    f2 = np.zeros(ne)
    periods = np.zeros(ne, np.intc)
    resid = np.zeros(ne)
    active = np.ones(ne, bool)
    for period in range(1, max_periods + 1):
        s1, s2 = f1.copy(), f2.copy()
        up1, up2, Np, sep = _start(a1, a2, nn, period)
        if period == 1:
            # the rest state gives sample 0 the predictor of f = kt a_-1 held at a_-1: a period
            # ending there repeats (a contact stuck throughout converges in one period)
            s1 = np.where(sep, 0.0, kt * a1[:, -1])
            s2 = np.where(sep, 0.0, kt * a2[:, -1])
        for i in range(nt):
            Ni = nn[:, i]
            f1, f2, *_ = _step_values(f1, f2, a1[:, i], a2[:, i], up1, up2, Ni, Np, sep, kt, mu)
            up1, up2, Np, sep = a1[:, i], a2[:, i], Ni, Ni <= 0
        r = np.hypot(f1 - s1, f2 - s2)
        periods[active] = period
        resid[active] = r[active]
        active &= ~(r <= tol * scale)
        if not active.any():
            break
    info[:] = periods
    res[:] = resid
    # ---- values and derivatives, the last period of each element projected
    F[:] = 0.0
    K[:] = 0.0
    c = 2.0 / nt
    b1, b2, bn = slice(0, m), slice(m, 2 * m), slice(2 * m, 3 * m)
    f1 = np.zeros(ne)
    f2 = np.zeros(ne)
    D = np.zeros((ne, 2, 3 * m))
    for period in range(1, int(periods.max()) + 1):
        rec = periods == period
        up1, up2, Np, sep = _start(a1, a2, nn, period)
        # the previous sample's basis row; the rest state before the first period is fixed
        ep = np.where((sep | (period > 1))[:, None], E[-1][None, :], 0.0)
        for i in range(nt):
            Ni, ei = nn[:, i], E[i]
            f1, f2, th, t1, t2, tn, slip, contact = _step_values(
                f1, f2, a1[:, i], a2[:, i], up1, up2, Ni, Np, sep, kt, mu)
            # predictor derivative
            Dt = np.where(sep[:, None, None], 0.0, D)
            w = kt * (1.0 - th)
            de = ei[None, :] - ep
            Dt[:, 0, b1] += w[:, None] * de
            Dt[:, 1, b2] += w[:, None] * de
            rc = sep & contact
            if rc.any():
                den = (Ni - Np)[rc] ** 2
                dth = kn[rc, None] * (Np[rc, None] * ei - Ni[rc, None] * ep[rc]) / den[:, None]
                Dt[rc, 0, bn] -= (kt[rc] * (a1[rc, i] - up1[rc]))[:, None] * dth
                Dt[rc, 1, bn] -= (kt[rc] * (a2[rc, i] - up2[rc]))[:, None] * dth
            # radial return derivative
            Dn = np.where(contact[:, None, None], Dt, 0.0)
            if slip.any():
                idx = np.flatnonzero(slip & contact)
                h1, h2 = t1[idx] / tn[idx], t2[idx] / tn[idx]
                q = (mu[idx] * Ni[idx] / tn[idx])[:, None]
                proj = h1[:, None] * Dt[idx, 0] + h2[:, None] * Dt[idx, 1]
                Dn[idx, 0] = q * (Dt[idx, 0] - h1[:, None] * proj)
                Dn[idx, 1] = q * (Dt[idx, 1] - h2[:, None] * proj)
                Dn[idx, 0, bn] += (mu[idx] * kn[idx] * h1)[:, None] * ei
                Dn[idx, 1, bn] += (mu[idx] * kn[idx] * h2)[:, None] * ei
            D = Dn
            if rec.any():
                fn = np.where(contact, Ni, 0.0)
                F[rec, b1] += c * f1[rec, None] * ei
                F[rec, b2] += c * f2[rec, None] * ei
                F[rec, bn] += c * fn[rec, None] * ei
                if H.shape[0]:
                    H[rec, i, 0], H[rec, i, 1], H[rec, i, 2] = f1[rec], f2[rec], fn[rec]
                K[rec, b1, :] += c * ei[None, :, None] * D[rec, 0][:, None, :]
                K[rec, b2, :] += c * ei[None, :, None] * D[rec, 1][:, None, :]
                kc = rec & contact
                K[kc, bn, bn] += (c * kn[kc])[:, None, None] * np.outer(ei, ei)[None]
            up1, up2, Np, sep = a1[:, i], a2[:, i], Ni, Ni <= 0
            ep = np.broadcast_to(ei, ep.shape)
