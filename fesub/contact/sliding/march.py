"""The sliding-contact march: nonlinear forward-increment dual assembly (eqs. 22-33).

Two Craig-Bampton substructures: 1 (slider, carrying the slave node C, driven along x at its
prescribed DOFs with x = vx t) and 2 (target, carrying the master segments). Each step:

    u*_{n+1} = h^2 M^-1 [f_n - C (u_n - u_{n-1})/h - K u_n] + 2 u_n - u_{n-1}          (28)
    contact search at U* = X + u*  ->  alpha, gamma  ->  B_C, B_E at n+1              (34-44)
    lambda_n = (h^2 B_C M^-1 B_E')^-1 B_C U*_{n+1}                                      (32)
    u_{n+1}  = u* - h^2 M^-1 B_E' lambda_n                                               (29)

:func:`march_modal` advances the modal coordinates of each substructure in a compiled kernel (O(n)
per step, spec section 8), slider coordinates taken relative to its rigid motion;
:func:`march_dense` is the literal transcription in reduced physical coordinates (reference).
Both give the same numbers to round-off. Both return the decimated signals, the stop code (the
keys of :data:`fesub.contact.transient.REASONS`: 0 completed, 1 stick, 2 detachment, 3 off the
surface, 4 interrupted), the steps done and the backend; :func:`fesub.contact.simulate` checks
the arguments, chooses the step and wraps them in a result.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from ..._backend import kernels
from ..geometry import coupling_rows

__all__ = ["march_modal", "march_dense"]


def _signal_dict(o_sig, outs):
    """Signals by name from the kernel's output columns and the output channels ``outs``."""
    sig = {"t": o_sig[:, 0].copy(), "lambda": o_sig[:, 1].copy(), "x_contact": o_sig[:, 2].copy(),
           "v_t": o_sig[:, 3].copy(), "gap": o_sig[:, 4].copy(), "segment": o_sig[:, 5].astype(np.int64),
           "f_x": o_sig[:, 6].copy(), "f_y": o_sig[:, 7].copy()}
    sig.update(outs)
    return sig


def _aligned(a):
    """C-contiguous float64 copy of ``a`` starting on a 64-byte boundary: the kernel's vector
    loads over the modal coordinates then never straddle two cache lines."""
    a = np.asarray(a, dtype=float)
    buf = np.empty(a.size + 8)
    start = (-buf.ctypes.data % 64) // 8
    out = buf[start:start + a.size].reshape(a.shape)
    out[...] = a
    return out


def march_modal(S, h, n_steps, dec, w1, q2, rough, vx, mu, sign, progress, chunk, monitor=None,
                stop_on_stick=True, geometry="deformed"):
    """March in the modal coordinates of both substructures with the contact kernel, in chunks.

    Parameters
    ----------
    S : SlidingContactSystem
    h : time step (s); ``n_steps`` steps, every ``dec``-th written out.
    w1, q2 : initial displacements at rest (m): free q1 relative to the rigid motion, q2.
    rough : (n_steps,) roughness force on the slave's vertical DOF (N) at each step.
    vx : sliding velocity (m/s); ``mu`` friction coefficient; ``sign`` friction sign (+1 or -1).
    progress : show a progress bar; ``chunk`` : steps per kernel call (between updates).
    monitor : optional callable given the modal state after every chunk (see ``simulate``).
    stop_on_stick : stop when the sliding velocity changes sign.
    geometry : 'deformed', 'undeformed' or 'frozen' (see ``simulate``).

    Returns
    -------
    (signals, stop code, steps done, backend name); an interrupt (Ctrl-C) keeps the finished
    chunks and returns code 4.
    """
    from tqdm.auto import tqdm

    K = kernels("contact")
    backend = "python" if K.__name__.endswith("_ref") else "compiled"
    P1, P2 = S.Phi1, S.Phi2
    # modal coordinates: eta = Phi' M q
    eta1 = _aligned(P1.T @ (S.M1 @ w1))
    eta2 = _aligned(P2.T @ (S.M2 @ q2))
    e1p, e2p = _aligned(eta1), _aligned(eta2)
    c1 = np.ascontiguousarray(S.alpha1 + S.beta1 * S.w2_1)
    c2 = np.ascontiguousarray(S.alpha2 + S.beta2 * S.w2_2)
    phiC = _aligned(P1[S.iC])
    # constant load on 1: external loads and the damping drag of the rigid motion
    f1q = S.load1 - vx * (S.C1 @ S.r1[S.f1_idx] + S.C1p @ S.r1[S.p1])
    f1 = np.ascontiguousarray(P1.T @ f1q)
    f2 = np.zeros(P2.shape[1])
    phiT = _aligned(S.phiT())
    names1, names2 = list(S.outputs1), list(S.outputs2)
    out1 = np.ascontiguousarray(P1[[S.outputs1[k] for k in names1]].reshape(len(names1), -1))
    out2 = np.ascontiguousarray(P2[[S.outputs2[k] for k in names2]].reshape(len(names2), -1))
    n_out = n_steps // dec + 1
    o_sig = np.zeros((n_out, 8))
    o = {k: np.zeros((n_out, len(names1))) for k in ("u1", "v1", "a1")}
    o.update({k: np.zeros((n_out, len(names2))) for k in ("u2", "v2", "a2")})
    # predicted coordinates, and per-segment Gram matrices of the modal rows (see the kernel)
    work = np.zeros(K.work_size(P1.shape[1], P2.shape[1], S.segs.shape[0]))
    seg0 = S.surface.find(S.X_C, 0)[0]
    state = np.array([float(seg0), sign, sign * abs(vx), 1.0 if stop_on_stick else 0.0,
                      {"deformed": 0.0, "undeformed": 1.0, "frozen": 2.0}[geometry], 0.0, 0.0])
    if geometry == "frozen":
        seg0, state[5], state[6] = S.contact_point(w1, q2)
        state[0] = seg0
    status = np.zeros(3, np.int64)
    done, j, reason = 0, 0, 0
    bar = tqdm(total=n_steps, disable=not progress, unit="step", unit_scale=True, desc=f"mu={mu:g}")
    try:
        while done < n_steps and reason == 0:
            m = min(chunk, n_steps - done)
            sl = slice(j, n_out)
            K.march(h, m, dec, done, S.w2_1, c1, eta1, e1p, phiC, f1, rough[done:done + m], float(vx),
                    float(S.X_C[0]), float(S.X_C[1]), S.w2_2, c2, eta2, e2p, phiT, S.XT, S.segs, f2, float(mu),
                    state, out1, out2, o_sig[sl], o["u1"][sl], o["v1"][sl], o["a1"][sl], o["u2"][sl],
                    o["v2"][sl], o["a2"][sl], work, status)
            # one statement: an interrupt after the march keeps the chunk's counters together
            done, j, reason = done + int(status[0]), j + int(status[2]), int(status[1])
            bar.update(int(status[0]))
            if monitor is not None:
                monitor({"eta1_prev": e1p, "eta1": eta1, "eta2_prev": e2p, "eta2": eta2, "f1": f1, "f2": f2,
                         "w2_1": S.w2_1, "w2_2": S.w2_2, "h": h, "steps": done})
    except KeyboardInterrupt:
        # Ctrl-C: the output up to the last finished chunk (a chunk in flight is dropped)
        reason = 4
    finally:
        bar.close()
    outs = {}
    for i, k in enumerate(names1):
        outs[f"u_{k}"], outs[f"v_{k}"], outs[f"a_{k}"] = o["u1"][:j, i], o["v1"][:j, i], o["a1"][:j, i]
    for i, k in enumerate(names2):
        outs[f"u_{k}"], outs[f"v_{k}"], outs[f"a_{k}"] = o["u2"][:j, i], o["v2"][:j, i], o["a2"][:j, i]
    return _signal_dict(o_sig[:j], outs), reason, done, backend


def march_dense(S, h, n_steps, dec, w1, q2, rough, vx, mu, sign, progress, stop_on_stick=True,
                geometry="deformed"):
    """Literal eqs. (26)-(32) in reduced physical coordinates u = [q1_free; q2] (total motion).

    The arguments are those of :func:`march_modal` (no chunks, no monitor); one step at a time in
    NumPy (the reference). Returns (signals, stop code, steps done, ``'dense-numpy'``); an
    interrupt keeps the finished steps and returns code 4.
    """
    from tqdm.auto import tqdm

    n1, n2 = S.K1.shape[0], S.K2.shape[0]
    M = sla.block_diag(S.M1, S.M2)
    C = sla.block_diag(S.C1, S.C2)
    Kmat = sla.block_diag(S.K1, S.K2)
    Minv = np.linalg.inv(M)
    rf = S.r1[S.f1_idx]
    rp = S.r1[S.p1]
    u = np.r_[w1, q2]
    u_prev = u - h * np.r_[vx * rf, np.zeros(n2)]  # rigid velocity vx of the slider
    seg = S.surface.find(S.X_C, 0)[0]
    if geometry == "frozen":
        seg, al_f, gam_f = S.contact_point(w1, q2)
    names1, names2 = list(S.outputs1), list(S.outputs2)
    rows_out = [S.outputs1[k] for k in names1] + [n1 + S.outputs2[k] for k in names2]
    rigid_out = np.r_[[rf[S.outputs1[k]] for k in names1], np.zeros(len(names2))]
    n_out = n_steps // dec + 1
    o_sig = np.zeros((n_out, 8))
    ou, ov, oa = (np.zeros((n_out, len(rows_out))) for _ in range(3))
    j, reason, n_done = 0, 0, n_steps
    search = S.surface.find

    def slave_pos(uu):
        return S.X_C + uu[S.iC]

    finished = 0
    try:
        for n in tqdm(range(n_steps), disable=not progress, unit="step", unit_scale=True, desc="dense"):
            t = n * h
            f = np.zeros(n1 + n2)
            f[:n1] = S.load1 - S.K1p @ (rp * vx * t) - S.C1p @ (rp * vx)
            f[S.rough_row] += rough[n]
            u_star = h * h * Minv @ (f - C @ (u - u_prev) / h - Kmat @ u) + 2 * u - u_prev
            pos = S.target_positions(u_star[n1:])
            P = slave_pos(u_star)
            if geometry == "frozen":
                al = al_f
            elif geometry == "deformed":
                seg, al, g, _ = search(P, int(seg), positions=pos)
            else:  # undeformed configuration: rigid motion of the slave only
                seg, al, g, _ = search((S.X_C[0] + vx * (t + h), S.X_C[1]), int(seg))
            if seg < 0:
                reason, n_done, seg = 3, n, 0
                break
            if geometry == "frozen":
                gam = gam_f
                bE, bC = coupling_rows(al, gam, mu, sign)
            else:
                bE, bC, gam = S._rows(seg, al, pos if geometry == "deformed" else S.XT, mu, sign)
            BE, BC = S._global_rows(seg, bE, bC)
            j1, j2 = S.segs[seg]
            BC_U = bC @ np.r_[pos[j1], pos[j2], P]
            lam = BC_U / (h * h * BC @ Minv @ BE)
            u_new = u_star - h * h * Minv @ BE * lam
            # tangential relative velocity at n+1
            pos_new = S.target_positions(u_new[n1:])
            vC = (u_new[S.iC] - u[S.iC]) / h
            vT = ((1 - al) * (pos_new[j1] - S.target_positions(u[n1:])[j1])
                  + al * (pos_new[j2] - S.target_positions(u[n1:])[j2])) / h
            vt = np.cos(gam) * (vC[0] - vT[0]) + np.sin(gam) * (vC[1] - vT[1])
            if n % dec == 0:
                Pn = slave_pos(u_new)
                _, gap = _alpha_gap(Pn, pos_new[j1], pos_new[j2])
                xc = (1 - al) * pos[j1, 0] + al * pos[j2, 0]
                o_sig[j] = (t, lam, xc, vt, gap, seg, -bE[4] * lam, -bE[5] * lam)
                ou[j] = u[rows_out] - rigid_out * vx * t
                ov[j] = (u_new[rows_out] - u_prev[rows_out]) / (2 * h) - rigid_out * vx
                oa[j] = (u_new[rows_out] - 2 * u[rows_out] + u_prev[rows_out]) / h**2
                j += 1
            u_prev, u = u, u_new
            finished = n + 1
            if lam < 0:
                reason, n_done = 2, n + 1
                break
            if stop_on_stick and vt * sign <= 0:
                reason, n_done = 1, n + 1
                break
    except KeyboardInterrupt:  # Ctrl-C: the steps done so far
        reason, n_done = 4, finished
    outs = {}
    for i, k in enumerate(names1 + names2):
        outs[f"u_{k}"], outs[f"v_{k}"], outs[f"a_{k}"] = ou[:j, i], ov[:j, i], oa[:j, i]
    return _signal_dict(o_sig[:j], outs), reason, n_done, "dense-numpy"


def _alpha_gap(P, Q1, Q2):
    """Coordinate along Q1 -> Q2 (0 at Q1, 1 at Q2) and signed normal gap (m) of the point P."""
    d = Q2 - Q1
    l2 = d @ d
    return ((P - Q1) @ d) / l2, (-d[1] * (P[0] - Q1[0]) + d[0] * (P[1] - Q1[1])) / np.sqrt(l2)
