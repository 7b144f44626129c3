"""Time stepping of a multibody contact model: the forward-increment Lagrange-multiplier method.

Each step n -> n+1 (time step h, modal coordinates eta of :mod:`fesub.contact.multibody`, unit
modal masses):

    eta* = 2 eta_n - eta_{n-1} + h^2 [f_n - C_m (eta_n - eta_{n-1})/h - Omega^2 eta_n]   (predictor)
    search of every slave node on the master positions of eta*  ->  segment, alpha, n, t
    active nodes: predicted gap <= 0, or in contact at the previous step (plus any open node
            that the forces of the others push through its master: solved again with it)
    rows J (normal, tangential) of the active nodes;  b = (predicted gap, predicted slip)
    lambda: frictional contact problem  y = b + h^2 J J' lambda  (kernel ``friction_lcp``, warm
            started from the previous step's forces)
    eta_{n+1} = eta* + h^2 J' lambda

so that lambda is the contact force of the step in N (its impulse divided by h). The gap,
linearised about the predicted positions, closes at n+1 to the kernel's tolerance (on a constant
row that is the gap itself; when the rows turn with the deformed master an O(h^4) gap is left,
see tests/test_contact_energy_deformed.py): the method is perfectly inelastic in the normal direction
(the relative normal velocity is removed), Coulomb's law holds in the slip of the step. A node's
state after the step: open (no normal force), stick (|lambda_t| < mu lambda_n), slip+ / slip-
(at the friction limit, sliding along +t / -t of its master segment).

The steps run in chunks of the compiled kernel ``multibody`` (:mod:`fesub.contact.engine.driver`,
the same operations without returning to Python) whenever the modal damping is diagonal and every
interface takes its frame from the deformed geometry; the Python loop below, one step at a time
over ``friction_lcp``, is the reference and the fallback (about 1 ms a step for one node).

Energies: kinetic at the half step, strain at the mid-step displacement, and the works of every
force accumulated with the exact discrete power of the central-difference equation (force of step
n times (q_{n+1} - q_{n-1})/2): the balance then holds to ``h^2/8 v' K v`` (see
:meth:`ContactRunResult.energy_residual`). On rows that turn with the deformation the normal
force, acting along the predicted rows, also does the work lambda h^2 v' (grad^2 g) v per step
in persistent sliding (g the gap): it is booked in ``impact_loss``, so the balance still closes,
while the mechanical energy of a frictionless slide drifts at O(h).
"""

from __future__ import annotations

import math
import time
import warnings

import numpy as np

from ..._backend import kernels
from ...errors import ParameterError, check_count, check_positive
from ...limits import check_steps
from .checks import refuse_penetration
from .results import ENERGIES, NODE_KEYS_3D, ContactRunResult
from .contacts import OPEN, SLIP_P, InterfaceState
from .contacts3d import InterfaceState3D, contact_step3d
from .laws2d import solve_laws
from . import driver
from .driver import monitor_state
from .bodies import MultibodyModel

__all__ = ["simulate_multibody"]



#: most passes of the active-set loop in one step (each adds the nodes that the forces of the
#: others pushed through their master)
_PASSES = 50


def _contact_step(kernel, contacts, eta_star, up_next, nm, h, tol, max_iter, stop_off=False):
    """Contact forces of one step.

    Rows are built for every slave node over a master segment; the kernel solves those of the
    active nodes (predicted gap <= 0, or pressed at the previous step). A node left out whose gap
    the others' forces close (below -tol) joins the active set and the problem is solved again,
    warm started, until no inactive node penetrates.

    Returns (per contact: on, ab, alpha, n, t, contact point), per contact (m, 2) forces (N), the
    modal correction z, status [sweeps, last change, converged, passes]; None when ``stop_off``
    and a node on its master surface left it (the step is not taken)."""
    if not contacts:
        return [], [], np.zeros(nm), np.array([0.0, 0.0, 1.0, 0.0])
    geo, Js, bs, mus, lam0, act, sizes = [], [], [], [], [], [], []
    laws = any(ct.laws is not None for ct in contacts)  # a law beyond one coefficient: ``solve_laws``
    nlaws, solved = [], None
    for ct in contacts:
        u_star, d_star = ct.displacements(eta_star, up_next)
        on, ab, alpha, gap, nv, tv, point = ct.search(u_star, d_star)
        idx = np.flatnonzero(on)
        rel = ct.relative(u_star, ct.us, ab, alpha)
        Js.append(ct.rows(idx, ab, alpha, nv, tv, nm))
        bc = np.empty(2 * idx.size)
        bc[0::2], bc[1::2] = gap[idx], (rel[idx] * tv[idx]).sum(1)
        bs.append(bc)
        mus.append(ct.mu[idx])
        if laws:
            nlaws += [ct.c["node_laws"][i] for i in idx]
        lam0.append(ct.lam[idx].ravel())
        act.append((gap[idx] <= 0) | (ct.lam[idx, 0] > 0))
        geo.append((on, ab, alpha, nv, tv, point))
        sizes.append(idx)
    if stop_off and any(ct.left for ct in contacts):
        return None
    if len(contacts) == 1:
        J, b, mu, lam_all, active = Js[0], bs[0], mus[0], lam0[0], act[0]
    else:
        J, b, mu = np.vstack(Js), np.concatenate(bs), np.concatenate(mus)
        lam_all, active = np.concatenate(lam0), np.concatenate(act)
    z, stat, out = np.zeros(nm), np.zeros(3), np.zeros(4)
    w = np.full(nm, h * h)
    for passes in range(1, _PASSES + 1):
        z[:] = 0.0
        stat[:] = (0.0, 0.0, 1.0)
        if active.all():  # the whole problem: solved in place, no gather and scatter
            if active.size and laws:
                edge, solved = solve_laws(J, w, b, nlaws, lam_all, z, tol, max_iter, stat, h), slice(None)
            elif active.size:
                kernel.solve(J, w, b, mu, lam_all, z, tol, max_iter, stat)
            out[:3] = (out[0] + stat[0], stat[1], stat[2])
            break
        a = np.flatnonzero(active)
        rows = (2 * a[:, None] + np.arange(2)).ravel()
        lam = lam_all[rows]
        if a.size and laws:
            edge, solved = solve_laws(np.ascontiguousarray(J[rows]), w, b[rows], [nlaws[i] for i in a], lam, z,
                                      tol, max_iter, stat, h), a
        elif a.size:
            kernel.solve(np.ascontiguousarray(J[rows]), w, b[rows], mu[a], lam, z, tol, max_iter, stat)
        lam_all[:] = 0.0
        lam_all[rows] = lam
        out[:3] = (out[0] + stat[0], stat[1], stat[2])
        new = ~active & (b[0::2] + J[0::2] @ z < -tol)
        if stat[2] != 1.0 or not new.any():
            break
        active |= new
    else:
        out[2] = 0.0
    out[3] = passes
    if laws:  # each node's coefficient at the cone's edge, for its state after the step
        full = np.concatenate([ct.mu[idx] for ct, idx in zip(contacts, sizes)])
        if solved is not None:
            full[solved] = edge
    lams, k0 = [], 0
    for ct, idx in zip(contacts, sizes):
        lc = np.zeros_like(ct.lam)
        lc[idx] = lam_all[2 * k0:2 * (k0 + idx.size)].reshape(-1, 2)
        if laws:
            ct.mu_edge = ct.mu.copy()
            ct.mu_edge[idx] = full[k0:k0 + idx.size]
        k0 += idx.size
        lams.append(lc)
    return geo, lams, z, out


def _channels(model):
    """(name, body, modal columns, modal row or None, index among the prescribed coordinates,
    index among the free coordinates) of every body output channel."""
    out = []
    for b, body in enumerate(model.bodies):
        for name, i in body.outputs.items():
            k = int(np.searchsorted(body.f_idx, i))
            if k < body.f_idx.size and body.f_idx[k] == i:
                out.append((name, body, model.cols[b], model.T_body[b][k], -1, k))
            else:
                out.append((name, body, None, None, int(np.searchsorted(body.p_idx, i)), -1))
    return out


def _outputs(n_out, m, chans, filled=True, dim=2):
    """The output arrays of a run of ``n_out`` samples of ``m`` nodes: (per node, per channel,
    energies) as dicts of arrays, and the blocks whose rows some of them are, in the layout the
    kernel loop writes in place: {"geometry": (4, n_out, m) contact_x, contact_y, force_x,
    force_y; "channels": (3 nc, n_out) u, v, a of each channel of modal coordinates (those of
    prescribed coordinates follow); "energies": (6, n_out) in the order of ``ENERGIES``}.
    ``filled``: NaN (state 0, segment -1, channels and energies 0) before the run; else left unset
    (the kernel loop writes every value of every sample it records). ``dim`` 3: the node arrays
    of node-to-surface contact (:mod:`~fesub.contact.engine.contacts3d`), filled."""
    def block(shape, fill, dtype=float):
        return np.full(shape, fill, dtype) if filled else np.empty(shape, dtype)

    if dim == 3:
        out = {k: np.full((n_out, m), np.nan) for k in NODE_KEYS_3D}
        out["state"], out["face"] = np.zeros((n_out, m), np.int64), np.full((n_out, m), -1, np.int64)
        return (out,) + _outputs(n_out, 0, chans)[1:]
    out = {k: block((n_out, m), np.nan) for k in ("lambda_n", "lambda_t", "gap", "slip_velocity")}
    out["state"] = block((n_out, m), 0, np.int64)
    out["segment"] = block((n_out, m), -1, np.int64)
    geometry = block((4, n_out, m), np.nan)
    out.update(zip(("contact_x", "contact_y", "force_x", "force_y"), geometry))
    modal = [c for c in chans if c[3] is not None]
    rows = block((3 * len(chans), n_out), 0.0)
    at = {c[0]: k for k, c in enumerate(modal + [c for c in chans if c[3] is None])}
    ch = {f"{p}_{c[0]}": rows[3 * at[c[0]] + i] for c in chans for i, p in enumerate("uva")}
    energies = block((len(ENERGIES), n_out), 0.0)
    blocks = {"geometry": geometry, "channels": rows[:3 * len(modal)], "energies": energies}
    return out, ch, dict(zip(ENERGIES, energies)), blocks


def _record_bodies(j, en, acc, ch, chans, etas, w2, h, t):
    """Sample j of the energies (kinetic at the half step, strain at the mid-step displacement,
    the accumulated works ``acc``) and of the output channels (displacement at t, central
    velocity, acceleration as the second difference) from the modal states at n-1, n, n+1."""
    eta_prev, eta, eta_next = etas
    v = (eta_next - eta) / h
    mid = 0.5 * (eta + eta_next)
    now = {"kinetic": 0.5 * float(v @ v), "strain": 0.5 * float(w2 @ (mid * mid))}
    for key in en:
        en[key][j] = now.get(key, acc.get(key))
    for name, body, cols, row, pj, _ in chans:
        if row is not None:
            ch[f"u_{name}"][j] = row @ eta[cols]
            ch[f"v_{name}"][j] = row @ (eta_next[cols] - eta_prev[cols]) / (2 * h)
            ch[f"a_{name}"][j] = row @ (eta_next[cols] - 2.0 * eta[cols] + eta_prev[cols]) / (h * h)
        else:
            ch[f"u_{name}"][j], ch[f"v_{name}"][j], ch[f"a_{name}"][j] = body.motion(t)[:, pj]


def _stop(done):
    """'lift_off' when a pressed node opened in the step, 'stick' when a sliding node stuck or
    reversed, else None (from the (..., state, previous state) of every interface)."""
    for *_, st, old in done:
        if np.any((old > OPEN) & (st == OPEN)):
            return "lift_off"
    for *_, st, old in done:
        if np.any((old >= SLIP_P) & (st != old)):
            return "stick"
    return None


def _series(model, series, n_steps):
    """(rows (ns, n_modes), windows (ns, 2), values (n_steps, ns) in N) of the force series
    ``series`` = [(body, coordinate, values), ...], checked; None for none."""
    if series is None:
        return None
    if isinstance(series, (str, bytes)) or not hasattr(series, "__len__"):
        raise ParameterError(f"series must be a sequence of (body, coordinate, values in N), got {series!r:.60}")
    if len(series) == 0:
        return None
    rows, wins, vals = [], [], []
    for item in series:
        try:
            key, k, v = item
        except (TypeError, ValueError):
            raise ParameterError(f"each force series must be (body, coordinate, values in N), got {item!r}") from None
        b = model.body_index(key)
        body = model.bodies[b]
        fpos = np.flatnonzero(body.f_idx == k) if isinstance(k, (int, np.integer)) else []
        if len(fpos) != 1:
            raise ParameterError(f"force series coordinate must be a free coordinate of body {body.name!r} "
                                 f"(an integer in 0..{body.n - 1}, not prescribed), got {k!r}")
        try:
            v = np.ascontiguousarray(v, dtype=float)  # (no copy of a float array: runs hold ~1e7 values)
        except (TypeError, ValueError):
            raise ParameterError("force series values must be real numbers (N), one per step") from None
        if v.shape != (n_steps,):
            raise ParameterError(f"force series values on coordinate {k} of body {body.name!r} must hold one force "
                                 f"(N) per step: shape ({n_steps},), got {v.shape}")
        if not np.all(np.isfinite(v)):
            raise ParameterError(f"force series values on coordinate {k} of body {body.name!r} must be finite (N)")
        row = np.zeros(model.n_modes)
        cols = model.cols[b]
        row[cols] = model.T_body[b][fpos[0]]
        rows.append(row)
        wins.append((cols.start, cols.stop))
        vals.append(v)
    values = vals[0].reshape(-1, 1) if len(vals) == 1 else np.ascontiguousarray(np.column_stack(vals))
    return np.ascontiguousarray(rows, dtype=float), np.array(wins, np.int64).reshape(-1, 2), values


def _check(model, duration, h, fs_out, on_stick, tol, max_iter):
    if not isinstance(model, MultibodyModel):
        raise ParameterError(f"model must be a MultibodyModel, got {type(model).__name__}")
    duration = check_positive("duration (s)", duration)
    hc = model.critical_step()
    if h is None:
        if not np.isfinite(hc):
            raise ParameterError("h (s) must be given: the model has no elastic mode to bound it")
        h = 0.9 * hc
    h = check_positive("h (s)", h)
    if h > hc:
        raise ParameterError(f"h = {h:.4g} s is above the central-difference stability limit {hc:.4g} s")
    if on_stick not in ("continue", "stop"):
        raise ParameterError(f"on_stick must be 'continue' or 'stop', got {on_stick!r}")
    n_steps = duration / h - 1e-9
    dec = 1 if fs_out is None else max(1, min(round(1.0 / (check_positive("fs_out (Hz)", fs_out) * h)),
                                              2**62))
    # the output of a sample: 10 arrays per slave node, 3 per channel, the energies (float64);
    # per coordinate driven by a callable, the motions kept for the outputs (3 displacements, 3
    # values when the channels name a prescribed coordinate) and the quasi-static motion formed
    # from them at the end (3 more)
    m = sum(c["mu"].size for c in model.contacts)
    called = sum(b.p_idx.size for b in model.bodies if b.p_idx.size and b._v is None)
    per_sample = 8.0 * (10 * m + 3 * sum(len(b.outputs) for b in model.bodies) + 8 + 9 * called)
    # 0.2 us a step: the compiled march of one sliding node (the cheapest step there is)
    n_steps = check_steps("time steps", n_steps, seconds_each=2e-7, bytes_each=per_sample / dec,
                          hint="a larger h or a shorter duration")
    if tol is None:
        # 1e-12 of the size of the contact region: well above the round-off of the positions
        # (1e-16 of it), well below any gap or slip of interest
        X = np.vstack([np.r_[c["slave"].X, c["master"].X] for c in model.contacts] or [np.zeros((1, 2))])
        tol = 1e-12 * max(float(np.ptp(X, axis=0).max()), 1e-3)
    tol = check_positive("tol (m)", tol)
    max_iter = check_count("max_iter", max_iter, 1)
    return duration, h, hc, n_steps, dec, tol, max_iter


def simulate_multibody(model: MultibodyModel, *, duration: float, h: float | None = None,
                       fs_out: float | None = None, on_stick: str = "continue", initial=None,
                       tol: float | None = None, max_iter: int = 2000,
                       progress: bool | None = None, loop: str = "auto", series=None,
                       accounts: bool = True, monitor=None, chunk: int | None = None,
                       initial_states=None) -> ContactRunResult:
    """March a multibody contact model in time.

    Parameters
    ----------
    model : MultibodyModel
    duration : float
        Simulated time (s).
    h : float, optional
        Time step (s); default 0.9 x the central-difference stability limit. A step above the
        limit is refused.
    fs_out : float, optional
        Output rate (Hz): one sample every round(1/(fs_out h)) steps; default every step.
    on_stick : 'continue' (default) or 'stop'
        'stop': end at the first stick of a sliding node or lift-off of a closed node (the
        forward-increment method of the two-body sliding core), with status 'stick' or 'lift_off'
        (the stopping step is the last one), or before the step in which a slave node on its
        master surface would leave it, with status 'off_surface' (that step is not taken).
    initial : dict body -> (u, v), optional
        Initial displacements (m) and velocities (m/s) over each body's coordinates; default rest.
    tol : float, optional
        Kernel tolerance (m): largest change of a gap or slip produced by one row update in the
        last sweep; default 1e-12 x the size of the contact region.
    max_iter : int
        Kernel sweeps per step; reaching it ends the run with status 'not_converged' (a warning).
    progress : bool, optional
        tqdm progress bar; default on for runs above 200 000 steps.
    loop : 'auto' (default), 'kernel' or 'python'
        Where the steps are marched: 'kernel' in chunks of the ``multibody`` kernel
        (:mod:`fesub.contact.engine.driver`: compiled, or its NumPy twin when the twins are
        forced), 'python' one step at a time in Python with the ``friction_lcp`` kernel (the
        reference). 'auto' takes the kernel whenever it applies (diagonal modal damping; loads
        and motions given as callables are sampled per chunk). ``info['loop']`` of the result
        says which ran, ``backend`` whether compiled code did.
    series : sequence of (body, coordinate, values), optional
        Force series: on the free coordinate ``coordinate`` (an index of the body's
        coordinates, e.g. ``body.node_dofs[node, 1]``) of ``body`` (name or index), the force
        ``values[n]`` (N) during step n (t_n to t_n+1); ``values`` holds one force per step,
        ``ceil(duration / h)`` of them. Added to the loads (and to their work).
    accounts : bool
        Keep the work accounts (default): damping loss, external work, friction dissipation and
        impact loss, accumulated at every step (``energies`` of the result; the energy balance
        ``ContactRunResult.energy_residual``). False leaves them out (NaN in ``energies``; the
        kinetic and strain energies stay) and the motion unchanged: a step of one sliding node off
        the output grid costs about 1.8 times as much with them (their sums over the modal
        coordinates take e_prev and a third of the operations of the kernel's pass, the node's
        works add to its close of the step, and without them a node that stays on its segment
        takes its steps from its own locals), a saving on long runs that do not need them.
    monitor : callable, optional
        Called after every chunk of steps (and at the end of a run that is not stopped) with a
        dict of the state: ``eta_prev``, ``eta`` (the
        modal coordinates at steps n-1 and n, relative to the drives' quasi-static motion),
        ``steps`` (n), ``t`` (s), ``h`` (s) and ``model``. An exception it raises ends the run
        (a ``KeyboardInterrupt`` as an interrupt, keeping the chunks done).
    chunk : int, optional
        Steps per chunk (between progress updates and ``monitor`` calls); default: chunks of
        about 0.1 s of computing, on a fixed schedule (so that a run does not depend on the
        machine's load).
    initial_states : sequence of int, optional
        State of every slave node (in the order of ``ContactRunResult.node_id``) before the first
        step: 0 open (default), 1 stick, 2 slip along +t, 3 slip along -t. The stops of
        ``on_stick='stop'`` compare each step's states with the previous ones: a node that starts
        sliding (2 or 3) stops the run if it sticks at the first step, one that starts closed
        (1-3) if it opens.

    Returns
    -------
    ContactRunResult; a stop, a failure of the kernel or an interrupt (Ctrl-C) returns what was
    computed up to then with its status.
    """
    from tqdm.auto import tqdm

    duration, h, hc, n_steps, dec, tol, max_iter = _check(model, duration, h, fs_out, on_stick, tol, max_iter)
    if chunk is not None:
        chunk = check_count("chunk (steps between progress updates)", chunk, lo=1)
    m_all = sum(c["mu"].size for c in model.contacts)
    if initial_states is not None:
        initial_states = np.asarray(initial_states)
        if initial_states.shape != (m_all,) or initial_states.dtype.kind not in "iu" or \
                np.any((initial_states < 0) | (initial_states > 3)):
            raise ParameterError(f"initial_states must be {m_all} integer state codes 0-3 (open, stick, slip+, "
                                 f"slip-), one per slave node")
        initial_states = initial_states.astype(np.int64)
    if monitor is not None and not callable(monitor):
        raise ParameterError(f"monitor must be a callable taking the state dict, got {type(monitor).__name__}")
    if loop not in ("auto", "kernel", "python"):
        raise ParameterError(f"loop must be 'auto', 'kernel' or 'python', got {loop!r}")
    why = driver.unsupported(model)
    if model.dim == 3:
        why = "solid bodies: node-to-surface contact runs in the Python step loop"
    if loop == "kernel" and why is not None:
        raise ParameterError(f"loop='kernel' cannot march this model: {why}")
    use_kernel = loop == "kernel" or (loop == "auto" and why is None)
    xs = _series(model, series, n_steps)
    eta, deta = model.modal_state(initial)
    refuse_penetration(model, eta, tol)
    eta_prev = eta - h * deta
    n_out = (n_steps - 1) // dec + 1
    chans = _channels(model)
    out, ch, en, blocks = _outputs(n_out, m_all, chans, filled=not use_kernel, dim=model.dim)
    w2 = model.omega2
    info = {"kinetic_initial_J": 0.5 * float(deta @ deta),
            "strain_initial_J": 0.5 * float(w2 @ (0.5 * (eta + eta_prev)) ** 2),
            "h_critical_s": hc, "bodies": [b.name for b in model.bodies],
            "interfaces": [c["interface"].name or f"interface {i}" for i, c in enumerate(model.contacts)],
            "max_sweeps": 0, "total_sweeps": 0, "max_active_set_passes": 0,
            "loop": "kernel" if use_kernel else "python", "python_loop_reason": None if use_kernel else why,
            "accounts": bool(accounts)}
    t0 = time.perf_counter()
    bar = tqdm(total=n_steps, disable=not (progress if progress is not None else n_steps > 200_000),
               unit="step", unit_scale=True, desc="contact")
    try:
        if use_kernel:
            status, n, j, changes, backend, kept = driver.march_chunks(
                model, h, n_steps, dec, tol, max_iter, on_stick, eta, eta_prev, out, ch, chans, info, bar, xs, blocks,
                accounts, monitor, chunk, initial_states)
            if status == "not_converged":
                warnings.warn(f"contact step {n} (t = {n * h:.6g} s): the kernel did not converge in {max_iter} "
                              f"sweeps (last change {info['last_change_m']:.3g} m > tol {tol:.3g} m) or the active "
                              f"set in {_PASSES} passes; the run stops", RuntimeWarning, stacklevel=2)
        else:
            kept = None
            status, n, j, changes, backend = _python_loop(model, h, n_steps, dec, tol, max_iter, on_stick, eta,
                                                          eta_prev, out, ch, en, chans, info, bar, xs, accounts,
                                                          monitor, chunk, initial_states)
    finally:
        bar.close()
    t_out = np.arange(n_out)[:j] * dec * h
    if status in ("stick", "lift_off") and j:
        t_out[-1] = (n - 1) * h  # the stopping step was recorded off the decimation grid
    _add_quasi_static(model, t_out, h, chans, ch, en, info, kept)
    return ContactRunResult(
        t=t_out, nodes={k: v[:j] for k, v in out.items()}, channels={k: v[:j] for k, v in ch.items()},
        energies={k: v[:j] for k, v in en.items()},
        node_interface=np.concatenate([np.full(c["mu"].size, i) for i, c in enumerate(model.contacts)]
                                      or [np.zeros(0, int)]),
        node_id=np.concatenate([c["slave"].nodes for c in model.contacts] or [np.zeros(0, int)]),
        state_changes=changes, status=status, steps=int(n), h=float(h), fs_out=1.0 / (dec * h),
        wall_time=time.perf_counter() - t0, backend=backend, tol=float(tol), on_stick=on_stick, info=info)


def _motions(model, steps, h, kept=None):
    """Prescribed displacements (m) of every body at the times ``steps * h``: (times, p) arrays
    over each body's ``p_idx`` (constant velocities vectorised; callables taken from ``kept``, a
    :class:`~fesub.contact.engine.driver.SampledMotions`, where the march kept them all, else
    called once per distinct step index)."""
    steps = np.asarray(steps, dtype=np.int64)
    uniq, back = np.unique(steps, return_inverse=True)
    t = uniq * h
    out = []
    for b, body in enumerate(model.bodies):
        u = kept.displacements(b, steps) if kept is not None else None
        if u is not None:
            out.append(u)
        elif not body.p_idx.size:
            out.append(np.zeros((steps.size, 0)))
        elif body._v is not None:
            out.append(steps[:, None] * h * body._v)
        else:
            out.append(np.array([body.motion(x)[0] for x in t]).reshape(t.size, -1)[back])
    return out


def _add_quasi_static(model, t, h, chans, ch, en, info, kept=None):
    """The loops march the motion relative to the quasi-static motion of the drives
    (:meth:`MultibodyModel.quasi_static`); add that motion back to the output channels of free
    coordinates (displacement at t, central velocity, second difference) and its strain energy
    (at the mid-step displacement) to the strain energy, its change to the external work (the
    drives' work on it) and its initial value to ``info['strain_initial_J']``."""
    if not any(model.drivers):
        return
    k = t.size
    if all(model.bodies[b]._v is not None for ds in model.drivers for b in ds):
        _add_constant_drive(model, t, h, chans, ch, en, info)
        return
    n = np.rint(t / h).astype(np.int64)
    every = _motions(model, np.concatenate([[-1, 0], n - 1, n, n + 1]), h, kept)
    U = [[x[2 + i * k:2 + (i + 1) * k] for x in every] for i in range(3)]
    for name, body, cols, row, pj, kf in chans:
        if row is None:
            continue
        b = model.bodies.index(body)
        for d in model.drivers[model.group_of[b]]:
            srow = model.static_rows(b, d, row, kf)
            if srow is None:
                continue
            um, u0, up = (x[d] @ srow for x in U)
            ch[f"u_{name}"][:k] += u0
            ch[f"v_{name}"][:k] += (up - um) / (2 * h)
            ch[f"a_{name}"][:k] += (up - 2.0 * u0 + um) / (h * h)
    start = float(model.static_strain([0.5 * (x[0] + x[1]) for x in every]))
    info["strain_initial_J"] += start
    if k:
        mid = model.static_strain([0.5 * (a + b) for a, b in zip(U[1], U[2])])
        en["strain"][:k] += mid
        en["external_work"][:k] += mid - start


def _add_constant_drive(model, t, h, chans, ch, en, info):
    """:func:`_add_quasi_static` for drives at constant velocities ``u = v t``: the quasi-static
    motion is linear in t, its strain energy ``c t^2`` (one evaluation of ``c``), nothing
    evaluated per sample but a few in-place vector operations (a run with an output at every step
    of a one-node model costs ~0.2 us a step: this adds a few ns a sample)."""
    k = t.size
    v = [b._v if b.p_idx.size else np.zeros(0) for b in model.bodies]
    for name, body, cols, row, pj, kf in chans:
        if row is None:
            continue
        b = model.bodies.index(body)
        rate = sum(float(model.static_rows(b, d, row, kf) @ v[d]) for d in model.drivers[model.group_of[b]]
                   if model.Xi[d] is not None)
        if rate:
            u = ch[f"u_{name}"][:k]
            u += rate * t
            ch[f"v_{name}"][:k] += rate
    c = float(model.static_strain(v))
    # a rigid drag stores nothing: c is then the round-off of K q for the rigid motion (~1e-16 of
    # the energy the drive's own coordinates would store moved alone), left out
    alone = sum(0.5 * float(b._v @ b.K[np.ix_(b.p_idx, b.p_idx)] @ b._v) for b in model.bodies if b.p_idx.size)
    if abs(c) <= 1e-12 * alone:
        return
    start = c * (0.5 * h) ** 2
    info["strain_initial_J"] += start
    if k:
        mid = t + 0.5 * h
        mid *= mid
        mid *= c
        en["strain"][:k] += mid
        if info.get("accounts", True):
            mid -= start
            en["external_work"][:k] += mid


def _python_loop(model, h, n_steps, dec, tol, max_iter, on_stick, eta, eta_prev, out, ch, en, chans, info, bar,
                 series=None, accounts=True, monitor=None, chunk=None, states0=None):
    """The reference loop: one step at a time, the contact problem in ``friction_lcp`` (solid
    bodies: the friction cone of :mod:`~fesub.contact.engine.contacts3d` in the ``cone``
    kernel). Fills the output arrays; returns (status, steps done, samples, state changes,
    backend). Without ``accounts`` the works start (and stay) NaN."""
    solid = model.dim == 3
    kernel = kernels("cone" if solid else "friction_lcp")
    backend = "python" if kernel.__name__.endswith("_ref") else "compiled"
    State = InterfaceState3D if solid else InterfaceState
    nm = model.n_modes
    bodies = model.bodies
    motion = [lambda t, b=b: b.motion(t)[0] if b.p_idx.size else np.zeros(0) for b in bodies]
    up_prev, up = [m(-h) for m in motion], [m(0.0) for m in motion]
    contacts = [State(model, c, eta, up, h) for c in model.contacts]
    if states0 is not None:
        k0 = 0
        for ct in contacts:
            ct.state = states0[k0:k0 + ct.mu.size].copy()
            k0 += ct.mu.size
    for ct in contacts:
        ct.us_prev, ct.ds_prev = ct.displacements(eta_prev, up_prev)
    acc = dict.fromkeys(en, 0.0 if accounts else math.nan)
    changes = np.zeros(sum(ct.mu.size for ct in contacts), np.int64)
    w2 = model.omega2
    Cm = np.diag(model.Cm).copy() if model.damping_diagonal else model.Cm

    def predict(n, eta, eta_prev):
        """(force, damping force, eta*, prescribed displacements at its end) of step n."""
        t = n * h
        f = model.modal_force(t)
        if series is not None:
            f = f + series[2][n] @ series[0]
        damp = Cm * (eta - eta_prev) / h if model.damping_diagonal else Cm @ ((eta - eta_prev) / h)
        return f, damp, 2 * eta - eta_prev + h * h * (f - damp - w2 * eta), [m(t + h) for m in motion]

    status, j, n = "completed", 0, 0
    ahead = None  # solid bodies: the next step's prediction, made with the close of this one
    try:
        for n in range(n_steps):
            t = n * h
            f, damp, eta_star, up_next = ahead if ahead is not None else predict(n, eta, eta_prev)
            if solid:
                step = contact_step3d(contacts, eta_star, up_next, nm, h, tol, max_iter, on_stick == "stop")
            else:
                step = _contact_step(kernel, contacts, eta_star, up_next, nm, h, tol, max_iter, on_stick == "stop")
            if step is None:
                status = "off_surface"
                break
            geo, lams, z, stat = step
            info["max_sweeps"] = max(info["max_sweeps"], int(stat[0]))
            info["total_sweeps"] += int(stat[0])
            info["max_active_set_passes"] = max(info["max_active_set_passes"], int(stat[3]))
            if stat[2] != 1.0:
                status = "not_converged"
                warnings.warn(f"contact step {n} (t = {t:.6g} s): the kernel did not converge in {max_iter} "
                              f"sweeps (last change {stat[1]:.3g} m > tol {tol:.3g} m) or the active set in "
                              f"{_PASSES} passes; the run stops", RuntimeWarning, stacklevel=3)
                break
            eta_next = eta_star + z
            a_mod = 0.5 * (eta_next - eta_prev)
            acc["damping_loss"] += float(damp @ a_mod)
            acc["external_work"] += float(f @ a_mod)
            record = n % dec == 0
            if solid:
                # the next step's prediction now: its node displacements are formed with the ones
                # of this step's end, in one pass over the nodes' rows
                ahead = predict(n + 1, eta_next, eta) if n + 1 < n_steps else None
                nxt = None if ahead is None else ahead[2:]
                done = [ct.advance(eta_next, up_next, g, lc, acc, nxt) for ct, g, lc in zip(contacts, geo, lams)]
            else:
                done = [ct.advance(eta_next, up_next, g, lc, acc) for ct, g, lc in zip(contacts, geo, lams)]
            stop = _stop(done) if on_stick == "stop" else None
            record = record or stop is not None
            col = 0
            for sig, st, old in done:
                sl = slice(col, col + st.size)
                changes[sl] += st != old
                if record:
                    for key, v in sig.items():
                        out[key][j, sl] = v
                col += st.size
            if record:
                _record_bodies(j, en, acc, ch, chans, (eta_prev, eta, eta_next), w2, h, t)
                j += 1
            eta_prev, eta = eta, eta_next
            bar.update(1)   # a step here costs far more than the bar's update
            if monitor is not None and ((n + 1) % (chunk or 1000) == 0 or n + 1 == n_steps):
                monitor(monitor_state(model, eta_prev, eta, n + 1, h))
            if stop is not None:
                status, n = stop, n + 1
                break
        else:
            n = n_steps
    except KeyboardInterrupt:
        status = "interrupted"
    return status, n, j, changes, backend
