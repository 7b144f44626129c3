"""The step loop of :func:`fesub.contact.simulate_multibody` in the compiled kernel ``multibody``.

The kernel marches a chunk of steps of the same method as the Python loop of
:mod:`fesub.contact.stepper` (predictor with diagonal modal damping, search of every slave node
from its last segment, rows over the modal coordinates, the frictional contact problem with the
sweeps of ``friction_lcp``, active-set passes, update, works, states, outputs) without returning
to Python. What the Python loop asks of callables comes in as arrays:

* loads: constant loads and prescribed motions at constant velocity make the modal force affine
  in time, ``f = fc + t fr`` (two vectors); time-dependent loads or motions given as callables
  are sampled once per chunk: the callables step by step, then their projections for the whole
  chunk at once (the modal force of each step, the driven displacements of the contact nodes at
  each time index: one matrix product per body);
* force series (one value per step on a body coordinate) are modal rows times a column of
  values, read by the kernel step by step (no Python call per step);
* output channels of free coordinates are modal rows; those of prescribed coordinates are the
  prescribed motion at the sample times, evaluated after the chunk.

A model with a full (non-diagonal) modal damping matrix is left to the Python loop
(:func:`unsupported` says why). Interrupts (Ctrl-C) are honoured between chunks and while the
callables are sampled: the steps sampled before the interrupt are marched, then the run ends.

Units: SI (m, N, s).
"""

from __future__ import annotations

import numpy as np

from ..._backend import kernels

__all__ = ["SampledMotions", "march_chunks", "unsupported"]

#: modal forces sampled per chunk are held as (chunk, n_modes): the chunk is bounded by this size
_SAMPLES = 2_000_000
#: steps of the first chunk; the next ones double up to the steps an estimate of the cost of a
#: step (:func:`_chunk_cap`) puts in about _CHUNK_SECONDS (the progress bar and Ctrl-C answer
#: within that), between _CHUNK_MIN and _CHUNK_MAX steps. The schedule depends on the model only,
#: never on the measured pace: the sampled forces of a chunk are projected in one matrix
#: product, whose rows can round differently with its length, so chunk boundaries that followed
#: the machine's load made two runs of the same command differ by round-off (1e-10 of the
#: contact forces after the dynamics grew it)
_CHUNK = 4096
_CHUNK_SECONDS = 0.1
_CHUNK_MIN = 64
_CHUNK_MAX = 1 << 20


def _chunk_cap(model) -> int:
    """Steps of a chunk of about _CHUNK_SECONDS at most, from the size of the model: a step costs
    about 0.1 us, plus 2 ns per modal coordinate, plus 0.4 us per modal coordinate and contact
    node (the sweeps of the contact problem: measured 1 ms a step for the pad-on-beam model, 119
    modal coordinates and 21 slave nodes, on a loaded machine); an estimate too high only makes
    more, shorter chunks."""
    m = sum(c["slave"].nodes.size for c in model.contacts)
    nm = max(model.n_modes, 1)
    pace = 1e-7 + 2e-9 * nm + 4e-7 * nm * m
    return int(min(_CHUNK_MAX, max(_CHUNK_MIN, _CHUNK_SECONDS / pace)))


def unsupported(model) -> str | None:
    """Why the kernel loop cannot march ``model`` (None when it can).

    Parameters
    ----------
    model : MultibodyModel
        The model (its modal damping, 1/s, must be diagonal).

    Returns
    -------
    str or None
        The reason, or None.
    """
    if not model.damping_diagonal:
        return "the modal damping matrix is not diagonal"
    for c in model.contacts:
        if c["geometry"] != "deformed":
            return f"an interface takes its contact frame from the {c['geometry']} geometry"
    plane = [c for c in model.contacts if c.get("dim", 2) == 2]
    if any(c["law_user"].any() for c in plane):
        return "a slave node has a friction law of its own (a Python callable)"
    return None


class _NodeArrays:
    """Rows over all modal coordinates, column windows, positions and driven velocities of the
    slave or master nodes of every interface, stacked in interface order."""

    def __init__(self, model, key, v_body):
        rows, nodes = [], [c[key] for c in model.contacts]
        k = sum(r.nodes.size for r in nodes)
        self.R = np.zeros((k, 2, model.n_modes))
        self.win = np.zeros((k, 2), np.int64)
        self.dv = np.zeros((k, 2))
        self.sets, start = [], 0
        for c, r in zip(model.contacts, nodes):
            sl = slice(start, start + r.nodes.size)
            self.R[sl, :, r.cols] = r.R
            self.win[sl] = (r.cols.start, r.cols.stop)
            b = c["slave_body" if key == "slave" else "master_body"]
            if r.drivers and all(v is not None for v in v_body):
                self.dv[sl] = r.driven(v_body)
            self.sets.append((sl, r, b))
            rows.append(r.X)
            start += r.nodes.size
        self.X = np.ascontiguousarray(np.vstack(rows)) if rows else np.zeros((0, 2))

    def driven(self, ups, out):
        """Driven displacements (m) of the nodes into ``out`` (times, k, 2) for the prescribed
        displacements of each body at those times, ``ups[b]`` (times, body b's prescribed
        coordinates): one matrix product per node set for all the times."""
        for sl, r, b in self.sets:
            if r.drivers:
                out[:, sl] = r.driven(ups)


class SampledMotions:
    """The prescribed motions (callables) that the march sampled, kept where the outputs need
    them, so that nothing calls them again: at each output sample ``n = i dec`` the
    displacements at the time indices ``n - 1, n, n + 1`` (the quasi-static motion added back to
    the channels of free coordinates, with its central differences) and, when ``full``, the
    motion (u, v, a) at ``n`` (the channels of prescribed coordinates). What was not sampled
    (NaN) is called for by the reader.

    Parameters
    ----------
    bodies : list of Body
        The model's bodies; those with a callable motion are kept.
    n_out : int
        Output samples of the run; ``dec`` steps between two.
    full : bool
        Keep (u, v, a) at the samples too.
    """

    def __init__(self, bodies, n_out: int, dec: int, full: bool):
        self.n_out, self.dec = int(n_out), int(dec)
        mine = [b for b, body in enumerate(bodies) if body.p_idx.size and body._v is None]
        self.u = {b: np.full((self.n_out, 3, bodies[b].p_idx.size), np.nan) for b in mine}
        self.uva = {b: np.full((self.n_out, 3, bodies[b].p_idx.size), np.nan) for b in mine} if full else {}

    def add_displacements(self, b: int, k0: int, U) -> None:
        """The displacements ``U`` (times, n_p) of body ``b`` at the time indices ``k0, k0 + 1,
        ...``: those the outputs need are kept."""
        if b not in self.u:
            return
        ks = k0 + np.arange(len(U))
        for slot in range(3):
            q, r = np.divmod(ks + 1 - slot, self.dec)
            sel = (r == 0) & (q >= 0) & (q < self.n_out)
            self.u[b][q[sel], slot] = U[sel]

    def add_motion(self, b: int, k: int, uva) -> None:
        """The motion ``uva`` (3, n_p) of body ``b`` at the time index ``k``, kept if the
        channels need it."""
        if b in self.uva and k % self.dec == 0 and 0 <= k // self.dec < self.n_out:
            self.uva[b][k // self.dec] = uva

    def _slots(self, steps):
        """(sample, slot, found) of each time index: the first slot of the three that holds it."""
        steps = np.asarray(steps, np.int64)
        q, j, ok = np.zeros(steps.size, np.int64), np.zeros(steps.size, np.int64), np.zeros(steps.size, bool)
        for slot in (1, 0, 2):
            qs, r = np.divmod(steps + 1 - slot, self.dec)
            new = ~ok & (r == 0) & (qs >= 0) & (qs < self.n_out)
            q[new], j[new] = qs[new], slot
            ok |= new
        return q, j, ok

    def displacements(self, b: int, steps):
        """(len(steps), n_p) prescribed displacements (m) of body ``b`` at the time indices
        ``steps``, or None when one of them was not kept."""
        if b not in self.u:
            return None
        q, j, ok = self._slots(steps)
        out = self.u[b][q, j]
        return out if ok.all() and not np.isnan(out).any() else None

    def motion(self, b: int, n: int):
        """(3, n_p) motion of body ``b`` at the time index ``n`` (an output sample), or None."""
        if b not in self.uva or n % self.dec or not 0 <= n // self.dec < self.n_out:
            return None
        uva = self.uva[b][n // self.dec]
        return None if np.isnan(uva).any() else uva


class _Plan:
    """Everything the kernel needs from the model, built once per run."""

    def __init__(self, model):
        bodies = model.bodies
        nm = model.n_modes
        # motions: constant velocities (affine forces and driven displacements), or sampled
        consts = [b._v if b.p_idx.size else np.zeros(0) for b in bodies]
        self.sample_drive = any(v is None for v in consts)
        self.sample_force = self.sample_drive or bool(model._f_t)
        v_body = [None] * len(bodies) if self.sample_drive else consts
        self.fc, self.fr = np.zeros(nm), np.zeros(nm)
        if not self.sample_force:
            self.fc += model._f0
            for body, cols, Gk, Gc, _ in model._f_p:
                v = body._v
                self.fc[cols] -= Gc @ v
                self.fr[cols] -= Gk @ v
        self.slave, self.master = _NodeArrays(model, "slave", v_body), _NodeArrays(model, "master", v_body)
        segs, node_segs, node_itf, offset, lo = [], [], [], 0, 0
        for i, c in enumerate(model.contacts):
            s = c["segments"]
            segs.append(s + offset)
            node_segs += [(lo, lo + s.shape[0])] * c["slave"].nodes.size
            node_itf += [i] * c["slave"].nodes.size
            offset += c["master"].nodes.size
            lo += s.shape[0]
        self.segs = np.ascontiguousarray(np.vstack(segs)) if segs else np.zeros((0, 2), np.int64)
        self.node_segs = np.array(node_segs, np.int64).reshape(-1, 2)
        self.node_itf = np.array(node_itf, np.int64)
        self.mu = np.concatenate([c["mu"] for c in model.contacts] or [np.zeros(0)])
        self.law_code = np.concatenate([c["law_code"] for c in model.contacts] or [np.zeros(0, np.int64)])
        self.law_params = np.ascontiguousarray(np.concatenate([c["law_params"] for c in model.contacts]
                                                              or [np.zeros((0, 3))]))
        self.n_itf = len(model.contacts)
        self.motion = [b.motion for b in bodies]
        self.has_p = [b.p_idx.size > 0 for b in bodies]

    def samples(self, model, n0, count, h, keep=None):
        """Modal forces of the steps n0 .. n0 + count - 1 and driven displacements of the nodes at
        the time indices n0 - 1 .. n0 + count, as the Python loop forms them; stops early at an
        interrupt. The prescribed motions it calls are added to ``keep`` (a
        :class:`SampledMotions`) when given. Returns (fs, slave ds, master ds, steps sampled,
        interrupted)."""
        nm = model.n_modes
        fs = np.zeros((count if self.sample_force else 0, nm))
        ks, km = self.slave.X.shape[0], self.master.X.shape[0]
        sds = np.zeros((count + 2 if self.sample_drive else 0, ks, 2))
        mds = np.zeros((count + 2 if self.sample_drive else 0, km, 2))
        if not (self.sample_force or self.sample_drive):
            return fs, sds, mds, count, False  # nothing sampled: no loop over the steps
        # the model's callables are called step by step (an interrupt keeps the steps sampled);
        # the projections on the modes and on the nodes are then made for all of them at once.
        # A prescribed motion is called once per time k h: the drive samples it a step ahead,
        # and the coupling forces of the next step take it from there
        inputs, ups = [], []
        driven = [(b, m) for b, (m, p) in enumerate(zip(self.motion, self.has_p)) if p]
        none = [np.zeros(0)] * len(self.motion)
        index = {id(body): b for b, body in enumerate(model.bodies)}
        latest = {}  # body -> (time index, its motion) last called
        now = [n0]   # the time index of the step whose coupling forces are formed

        def motion_at(b, k):
            got = latest.get(b)
            if got is None or got[0] != k:
                got = latest[b] = (k, self.motion[b](k * h))
                if keep is not None and keep.uva:
                    keep.add_motion(b, k, got[1])
            return got[1]

        def motion_now(body):
            return motion_at(index[id(body)], now[0])

        def drive(k):
            u = list(none)
            for b, _ in driven:
                u[b] = motion_at(b, k)[0]
            ups.append(u)

        s, stopped = 0, False
        try:
            if self.sample_drive:
                drive(n0 - 1)
                drive(n0)
            for s in range(count):
                k = now[0] = n0 + s
                if self.sample_force:
                    inputs.append(model.force_inputs(k * h, motion_now))
                if self.sample_drive:
                    drive(k + 1)
            else:
                s = count
        except KeyboardInterrupt:
            stopped = True
        # steps whose force inputs and driven motions (two rows ahead) are all in
        s = max(0, min(s, len(inputs) if self.sample_force else s, len(ups) - 2 if self.sample_drive else s))
        if s and self.sample_force:
            fs[:s] = model.modal_forces(inputs[:s])
        if s and self.sample_drive:
            per_body = [np.array([u[b] for u in ups[:s + 2]]) for b in range(len(self.motion))]
            if keep is not None:
                for b, U in enumerate(per_body):
                    keep.add_displacements(b, n0 - 1, U)
            self.slave.driven(per_body, sds[:s + 2])
            self.master.driven(per_body, mds[:s + 2])
        return fs, sds, mds, s, stopped


def monitor_state(model, eta_prev, eta, steps, h):
    """The dict a ``monitor`` of :func:`simulate_multibody` receives (copies of the state)."""
    return {"eta_prev": eta_prev.copy(), "eta": eta.copy(), "steps": int(steps), "t": steps * h, "h": h,
            "model": model}


def march_chunks(model, h, n_steps, dec, tol, max_iter, on_stick, eta, eta_prev, out, ch, chans, info, bar,
                 series, blocks, accounts=True, monitor=None, fixed_chunk=None, states0=None):
    """March the whole run in chunks of the kernel, filling the output arrays in place.

    Parameters
    ----------
    model : MultibodyModel
    h : float
        Time step (s); ``n_steps`` steps, one sample every ``dec``.
    tol : float
        Kernel tolerance (m); ``max_iter`` sweeps per solve.
    on_stick : str
        'stop' ends at the first stick or lift-off.
    eta, eta_prev : (n_modes,) arrays
        Modal coordinates (m) at t = 0 and t = -h (advanced in place).
    out, ch : dicts of output arrays (nodes, channels), filled in place.
    chans : the output channels (``stepper._channels``).
    series : (rows, windows, values) or None
        Force series: (ns, n_modes) modal rows, (ns, 2) their non-zero column windows and
        (n_steps, ns) values (N) at each step (``stepper._series``); None: none.
    blocks : dict
        The blocks the kernel writes in place (``stepper._outputs``): node geometry, the
        channels of modal coordinates (in the order of ``chans``, those of prescribed
        coordinates left out) and the energies.
    info : dict
        The kernel's statistics are added to it.
    bar : tqdm progress bar.
    accounts : bool
        Accumulate the work accounts (False: their energies are NaN; the motion is the same).
    monitor : callable or None
        Called after every chunk that did not stop the run with the state (``stepper.monitor_state``).
    fixed_chunk : int or None
        Steps per chunk; None: the schedule below.
    states0 : (m,) int array or None
        State codes of the slave nodes before the first step (None: open).

    Returns
    -------
    (status, steps done, samples written, state changes per node, backend name, the prescribed
    motions kept for the outputs: a :class:`SampledMotions` or None)
    """
    K = kernels("multibody")
    backend = "python" if K.__name__.endswith("_ref") else "compiled"
    plan = _Plan(model)
    nm = model.n_modes
    sl, ma = plan.slave, plan.master
    m = sl.X.shape[0]
    free = [(k, c) for k, c in enumerate(chans) if c[3] is not None]
    orow = np.zeros((len(free), nm))
    owin = np.zeros((len(free), 2), np.int64)
    for r, (_, (_, _, cols, row, _, _)) in enumerate(free):
        orow[r, cols], owin[r] = row, (cols.start, cols.stop)
    o_geo, o_energy, o_chan = blocks["geometry"], blocks["energies"], blocks["channels"]
    xrow, xwin, xval = series if series is not None else (np.zeros((0, nm)), np.zeros((0, 2), np.int64),
                                                          np.zeros((n_steps, 0)))
    hint = plan.node_segs[:, 0].copy()
    off = np.ones(m, np.int64)
    lam = np.zeros((m, 2))
    code = np.zeros(m, np.int64) if states0 is None else np.array(states0, np.int64)
    changes = np.zeros(m, np.int64)
    acc = np.zeros(4)
    nd, nl = K.work_sizes(nm, m, ma.X.shape[0], plan.n_itf)
    work, iwork = np.zeros(nd), np.zeros(nl, np.int64)
    stats = np.zeros(4)
    status = np.zeros(3, np.int64)
    w2 = np.ascontiguousarray(model.omega2, dtype=float)
    cdamp = np.ascontiguousarray(np.diag(model.Cm), dtype=float) if nm else np.zeros(0)
    # a chunk holds its sampled forces and motions (at most _SAMPLES values) and its length in
    # time is about _CHUNK_SECONDS (estimated from the model's size, see _CHUNK): few returns to
    # Python (each costs a call and the kernel's set-up) while the progress bar and Ctrl-C still
    # answer promptly
    sampled = plan.sample_force or plan.sample_drive
    most = max(_CHUNK_MIN, min(_CHUNK_MAX, _chunk_cap(model),
                               _SAMPLES // max(nm, 1) if sampled else _CHUNK_MAX))
    chunk = min(_CHUNK, most) if fixed_chunk is None else fixed_chunk
    done, j, reason, stop = 0, 0, 0, False
    codes = {1: "stick", 2: "lift_off", 3: "not_converged", 4: "off_surface"}
    # the prescribed motions the outputs need, kept as the march samples them
    kept = SampledMotions(model.bodies, (n_steps - 1) // dec + 1, dec, any(c[3] is None for c in chans)) \
        if plan.sample_drive else None
    try:
        while done < n_steps and reason == 0 and not stop:
            fs, sds, mds, count, stop = plan.samples(model, done, min(chunk, n_steps - done), h, kept)
            if count == 0:
                break
            K.march(h, count, dec, done, tol, max_iter, int(on_stick == "stop"), int(accounts), w2, cdamp, plan.fc,
                    plan.fr, fs, xrow, xwin, xval[done:done + count], eta, eta_prev, sl.R, sl.win, sl.X, sl.dv, sds,
                    ma.R, ma.win, ma.X, ma.dv, mds, plan.segs, plan.node_segs, plan.node_itf, plan.mu, plan.n_itf,
                    plan.law_code, plan.law_params,
                    hint, off, lam, code, changes, acc, orow, owin, out["lambda_n"][j:], out["lambda_t"][j:],
                    out["gap"][j:], out["slip_velocity"][j:], out["state"][j:], out["segment"][j:], o_geo[:, j:],
                    o_energy[:, j:], o_chan[:, j:], work, iwork,
                    stats, status)
            # one statement: an interrupt after the kernel keeps the chunk's counters together
            done, j, reason = done + int(status[0]), j + int(status[2]), int(status[1])
            bar.update(int(status[0]))
            if fixed_chunk is None:
                chunk = min(most, 2 * chunk)  # a fixed schedule: see _CHUNK
            if monitor is not None and reason == 0 and status[0]:
                monitor(monitor_state(model, eta_prev, eta, done, h))
    except KeyboardInterrupt:  # between chunks: what was marched is kept
        stop = True
    status_name = codes.get(reason, "interrupted" if stop else "completed")
    info.update(max_sweeps=int(stats[0]), total_sweeps=int(stats[1]), max_active_set_passes=int(stats[2]),
                last_change_m=float(stats[3]))
    steps_at = np.arange(j) * dec
    if reason in (1, 2) and j:
        steps_at[-1] = done - 1  # the stopping step was recorded off the decimation grid
    # the channels of prescribed coordinates: each body's motion at each sample, as the march
    # sampled it or called now (a motion that is not sampled, a constant velocity)
    index = {id(body): b for b, body in enumerate(model.bodies)}
    for body in {id(c[1]): c[1] for c in chans if c[3] is None}.values():
        mine = [(name, pj) for name, b, _, row, pj, _ in chans if row is None and b is body]
        for k, n in enumerate(steps_at):
            uva = kept.motion(index[id(body)], int(n)) if kept is not None else None
            uva = body.motion(n * h) if uva is None else uva
            for name, pj in mine:
                ch[f"u_{name}"][k], ch[f"v_{name}"][k], ch[f"a_{name}"][k] = uva[:, pj]
    return status_name, done, j, changes, backend, kept
