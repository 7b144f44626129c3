"""The independent reference of the sliding-contact transient: the paper's two-body
forward-increment method (eqs. 26-33) transcribed literally, one step at a time in NumPy, in the
reduced physical coordinates u = [q1_free; q2] of the two substructures.

The package marches the sliding system on its contact engine (``fesub.contact.simulate``:
modal coordinates, a frictional contact problem per step, compiled). This transcription shares
none of that code: dense matrices, a direct inverse of the mass matrix, one multiplier per step
with the friction force tied to it (``B_E = B_C + mu sign (tangential row)``), the coupling rows of
:func:`fesub.contact.geometry.coupling_rows`. The tests compare the two.

One difference in what they model: this method assumes persistent sliding in the direction
``sign`` (the friction force is ``mu lambda`` along the fixed slip direction whatever the slip
velocity does), the engine applies Coulomb's law (a node whose slip would reverse sticks). They
agree step for step while the slave slides, up to and including the step where the sliding
velocity would change sign (where the sliding method stops); a run continued past a stick, or a
run with mu > 0 and no sliding velocity, differs by construction.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import scipy.linalg as sla

from fesub.contact.geometry import coupling_rows
from fesub.signal import band_limited_noise

REASONS = {0: "completed", 1: "stick", 2: "detachment", 3: "off_surface", 4: "interrupted"}


def simulate_dense(S, *, mu, duration, vx=0.0, h=None, fs_out=200_000.0, roughness_std=0.0,
                   roughness_band=(0.0, 20e3), seed=None, initial=None, geometry="deformed", stop_on_stick=True):
    """The transient of the sliding system ``S`` by the literal equations: the arguments of
    ``fesub.contact.simulate`` (the same default step, the same roughness series for the same
    seed); returns a namespace with ``signals``, ``status``, ``steps``, ``h`` and ``formulation``."""
    hc = S.critical_step()
    if h is None:
        dec = int(np.ceil(1.0 / (fs_out * 0.95 * hc)))
        h = 1.0 / (fs_out * dec)
    else:
        dec = max(1, int(round(1.0 / (fs_out * h))))
    n_steps = max(1, int(np.ceil(duration / h - 1e-9)))
    rough = np.zeros(n_steps)
    if roughness_std > 0:
        rough = band_limited_noise(n_steps, 1.0 / h, roughness_band, roughness_std, seed)
    sign = 1.0 if vx >= 0 else -1.0
    w1, q2, lam0 = S.static_state(mu, vx, sign, geometry="undeformed" if geometry == "undeformed" else "deformed")
    if initial is not None:
        w1, q2 = (np.asarray(x, dtype=float) for x in initial)
    sig, reason, n_done, _ = march_dense(S, h, n_steps, dec, w1, q2, rough, vx, mu, sign, False, stop_on_stick,
                                         geometry)
    return SimpleNamespace(signals=sig, status=REASONS[reason], steps=int(n_done), h=h, formulation="dense",
                           info={"lambda_static_N": float(lam0)})


def _signal_dict(o_sig, outs):
    """Signals by name from the output columns and the output channels ``outs``."""
    sig = {"t": o_sig[:, 0].copy(), "lambda": o_sig[:, 1].copy(), "x_contact": o_sig[:, 2].copy(),
           "v_t": o_sig[:, 3].copy(), "gap": o_sig[:, 4].copy(), "segment": o_sig[:, 5].astype(np.int64),
           "f_x": o_sig[:, 6].copy(), "f_y": o_sig[:, 7].copy()}
    sig.update(outs)
    return sig


def march_dense(S, h, n_steps, dec, w1, q2, rough, vx, mu, sign, progress, stop_on_stick=True,
                geometry="deformed"):
    """Literal eqs. (26)-(32) in reduced physical coordinates u = [q1_free; q2] (total motion).

    S : the sliding system; h : time step (s); ``n_steps`` steps, every ``dec``-th written out;
    w1, q2 : initial displacements at rest (m): free q1 relative to the rigid motion, q2; rough :
    (n_steps,) roughness force on the slave's vertical DOF (N); vx : sliding velocity (m/s); mu,
    sign : friction coefficient and slip direction; progress : a progress bar; stop_on_stick :
    stop when the sliding velocity changes sign; geometry : 'deformed', 'undeformed' or 'frozen'.
    Returns (signals, stop code, steps done, ``'dense-numpy'``); an
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
