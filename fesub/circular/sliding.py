"""Integration of the reduced disc/ball contact dynamics until the body stops sliding.

The reduced system of :class:`~fesub.circular.dynamics.ReducedContactSystem`,
``x_o' = F_o(w)`` with ``w = x_o/|x_o|`` and ``x_o = (u_x, u_y, rho omega_z)`` (m/s), is
integrated from a sliding start until slip and spin vanish together (or until a time horizon):

* in rescaled time (``method='tau'``, recommended), ``d/dt = r d/dtau`` with ``r = |x_o|``:
  ``(log r)' = R*(w)``, ``w' = V*(w)``, ``t' = r`` -- smooth up to the stop, the stop time
  ``t_stop = int r dtau`` finite and ``w`` converging to the limit direction;
* in physical time (``method='t'``), ``x_o`` itself up to ``r = r_min |x0|`` (the independent
  check of the rescaled run).

The motion and the direction are two questions with two answers. The motion is over once
``r < r_min |x0|`` (the remaining time ``r/|R*|`` is then below the integration error), or once
the direction has settled on a limit direction ``V*(w) = 0``: from there ``r' = R*`` is constant,
so the body stops at ``t + r/|R*|`` along a straight line when ``R* < 0`` and never stops when
``R* >= 0``. The direction of the stop is the limit of the flow ``w' = V*(w)`` on the sphere,
which does not depend on ``r``: after a stop it is converged alone in ``s = log(tau)``. At a
non-hyperbolic limit direction (the pitchfork ``F = -F_P`` of the disc) ``w`` approaches it only
algebraically in ``tau`` -- like ``tau**(-1/2)`` -- while ``r`` falls exponentially; in ``s`` the
approach is exponential again.

The horizon of a run comes from the physics: the kinetic energy of the slip falls at least at
:meth:`~fesub.circular.dynamics.ReducedContactSystem.slowdown_rate`, which bounds the stop time
(:meth:`~fesub.circular.dynamics.ReducedContactSystem.stop_time_bound`) and the rescaled time of
the run; the horizon is ``HORIZON_FACTOR`` times the bound.

Both methods keep every accepted step, so that a Ctrl-C returns what was computed as a
:class:`Trajectory` with ``status='interrupted'``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import ParameterError, check_positive
from ..io import Result, summary_record

__all__ = ["Trajectory", "simulate_sliding", "HORIZON_FACTOR", "VTOL", "NONHYPERBOLIC"]

#: horizon of a run as a multiple of its stop-time bound (the bound is rigorous; the factor
#: covers the sampled minimum of the slowdown rate and the extrapolated end of the motion)
HORIZON_FACTOR = 2.0
#: a direction has settled (converged) when ``|V*(w)| < VTOL mu g``
VTOL = 1e-10
#: a stop direction is reported non-hyperbolic when an eigenvalue of the flow on the sphere there
#: is below ``NONHYPERBOLIC mu g`` in size (converged to ``|V*| < VTOL mu g``, a hyperbolic
#: direction keeps its eigenvalues; at a cubic one, like the pitchfork, they are ~1e-7 mu g)
NONHYPERBOLIC = 1e-6
#: rescaled-time guard (in units of ``1/(mu g)``) of a run whose stop time has no bound
TAU_GUARD = 1e6
#: the names of the terminal events of a motion, in the order of :func:`_motion_events`
_OUTCOMES = ("stopped", "settled", "horizon", "runaway")


#: names and units of the trajectory's per-step variables in a saved file (x_o, w, q columns)
_TRAJ_COLUMNS = (("x_o", ("u_x", "u_y", "rho_omega_z"), ("m/s", "m/s", "m/s")),
                 ("w", ("w_1", "w_2", "w_3"), ("1", "1", "1")),
                 ("q", ("q_x", "q_y", "q_angle"), ("m", "m", "rad")))


@dataclass
class Trajectory(Result):
    """Result of :func:`simulate_sliding` (arrays along the solution).

    Parameters
    ----------
    t : ndarray
        Physical time (s).
    tau : ndarray
        Rescaled time (s^2/m, ``d t = |x_o| d tau``), NaN for ``method='t'``.
    x_o : ndarray (n, 3)
        ``(u_x, u_y, rho omega_z)`` (m/s).
    w : ndarray (n, 3)
        Slip direction (-).
    q : ndarray (n, 3)
        Disc: centre position ``(x_C, y_C)`` (m) and rotation angle ``gamma`` (rad); for the ball
        the contact-point displacement (m) and the spin angle (rad).
    t_stop : float
        Time at which slip and spin vanish together (s), ``inf`` when the body never stops.
    stopped, stuck : bool
        The body stopped; it stays stuck afterwards (``|F| <= F_T``).
    w_final : ndarray (3,)
        Direction at the end (the limit direction of the stop, converged to ``|V*| < 1e-10 mu g``
        unless ``info['w_converged']`` is False).
    rho, R : float
        Length scale of ``w`` and contact radius (m).
    info : dict
        Method, body kind, force ``F`` (N), model name, solver status, ``outcome`` (how the
        motion ended: ``'stopped'``; ``'sliding'``, settled on a limit direction with
        ``R* >= 0``, so it never stops; ``'runaway'``, ``|x_o| > r_max |x0|``; ``'horizon'``,
        ``t`` reached ``t_end``; ``'guard'``, the rescaled time reached ``max_tau``), the
        horizon ``t_end`` (s) and the ``stop_time_bound`` (s), ``w_converged`` and
        ``w_residual = |V*(w_final)|/(mu g)`` (-); after a stop in rescaled time
        ``stop_direction`` ('hyperbolic' or 'non-hyperbolic', e.g. at the pitchfork) and
        ``stop_rates`` (m/s^2, :meth:`ReducedContactSystem.sphere_rates`).
    status : str
        ``'complete'``, or ``'interrupted'`` when a KeyboardInterrupt stopped the run (the arrays
        then hold the steps accepted before it; ``t_stop`` is ``inf``, ``stopped`` False).
    """

    t: np.ndarray
    tau: np.ndarray
    x_o: np.ndarray
    w: np.ndarray
    q: np.ndarray
    t_stop: float
    stopped: bool
    stuck: bool
    w_final: np.ndarray
    rho: float
    R: float
    info: dict = field(default_factory=dict)
    status: str = "complete"

    kind = "trajectory"

    @property
    def r(self) -> np.ndarray:
        """``|x_o|`` (m/s) along the trajectory."""
        return np.linalg.norm(self.x_o, axis=1)

    @property
    def eps(self) -> np.ndarray:
        """Slip-spin ratio ``|u|/(R |omega|)`` along the trajectory."""
        with np.errstate(divide="ignore"):
            return (self.rho / self.R) * np.hypot(self.w[:, 0], self.w[:, 1]) / np.abs(self.w[:, 2])

    @property
    def eps_final(self) -> float:
        """Slip-spin ratio (-) of the final direction."""
        w = self.w_final
        with np.errstate(divide="ignore"):
            return float((self.rho / self.R) * math.hypot(w[0], w[1]) / abs(w[2]))

    def to_xarray(self):
        """Dataset along ``step``: coordinates ``t`` (s) and ``tau`` (s^2/m), the components of
        ``x_o`` (m/s), ``w`` (-) and ``q`` (m, m, rad); scalars as attributes."""
        import xarray as xr

        data = {}
        for attr, names, units in _TRAJ_COLUMNS:
            arr = getattr(self, attr)
            for i, (name, unit) in enumerate(zip(names, units)):
                data[name] = ("step", arr[:, i], {"units": unit})
        return xr.Dataset(
            data, coords={"t": ("step", self.t, {"units": "s", "long_name": "physical time"}),
                          "tau": ("step", self.tau, {"units": "s^2/m",
                                                     "long_name": "rescaled time, dt = |x_o| dtau"})},
            attrs={"t_stop": self.t_stop, "stopped": bool(self.stopped), "stuck": bool(self.stuck),
                   "w_final": np.asarray(self.w_final, float), "rho": self.rho, "R": self.R,
                   "info": self.info, "status": self.status,
                   "units": {"t_stop": "s", "w_final": "1", "rho": "m", "R": "m"}})

    @classmethod
    def from_xarray(cls, ds):
        cols = {attr: np.stack([ds[n].values for n in names], axis=1)
                for attr, names, _ in _TRAJ_COLUMNS}
        a = ds.attrs
        return cls(t=ds["t"].values, tau=ds["tau"].values, **cols, t_stop=float(a["t_stop"]),
                   stopped=bool(a["stopped"]), stuck=bool(a["stuck"]),
                   w_final=np.asarray(a["w_final"], float), rho=float(a["rho"]), R=float(a["R"]),
                   info=dict(a["info"]), status=str(a["status"]))

    def summary(self) -> dict:
        """Stop time, final direction and slip-spin ratio, in the summary schema."""
        i = self.info
        params = {"F": (i.get("F"), "N"), "model": (i.get("model"), None),
                  "body": (i.get("kind"), None), "method": (i.get("method"), None),
                  "x0": (self.x_o[0], "m/s"), "rho": (self.rho, "m"), "R": (self.R, "m")}
        res = {"status": (self.status, None), "stopped": (bool(self.stopped), None),
               "stuck": (bool(self.stuck), None), "t_stop": (self.t_stop, "s"),
               "w_final": (self.w_final, "1"), "eps_final": (self.eps_final, "1")}
        return summary_record(self.kind, params, res)


def simulate_sliding(system, x0, t_end: float | None = None, method: str = "tau",
                     r_min: float = 1e-12, rtol: float = 1e-10, atol: float = 1e-12,
                     max_tau: float | None = None, r_max: float = 1e6,
                     progress: bool = False) -> Trajectory:
    """Integrate ``system`` from ``x0 = (u_x, u_y, rho omega_z)`` until the body stops.

    Parameters
    ----------
    system : ReducedContactSystem
        The disc or ball (its field ``F_o(w)``, ``R*``, ``V*``, ``mu g``, ``rho``, force ``F``).
    x0 : array_like (3,)
        Initial ``(u_x, u_y, rho omega)`` (m/s), nonzero.
    t_end : float, optional
        Horizon (s). Default: ``HORIZON_FACTOR`` times the system's
        :meth:`~fesub.circular.dynamics.ReducedContactSystem.stop_time_bound`, or none (``inf``)
        when the stop time has no bound (``|F|`` at or above about ``F_T``): such a run ends when
        the direction settles, on runaway slip or at ``max_tau``.
    method : {'tau', 't'}
        ``'tau'``: rescaled time (smooth to the stop, recommended). ``'t'``: physical time up
        to ``r = r_min |x0|``, then the remaining time is added as ``r/|R*|``.
    r_min : float
        Relative radius ``|x_o|/|x0|`` (-) at which the motion is over; with ``'tau'`` the
        direction is then converged alone to ``|V*| < VTOL mu g``, so that ``w_final`` is the
        limit direction even where ``w`` approaches it slowly.
    rtol, atol : float
        Tolerances of :func:`scipy.integrate.solve_ivp` (DOP853; LSODA for the direction).
    max_tau : float, optional
        Limit of the rescaled time of the motion (s^2/m). Default: ``HORIZON_FACTOR`` times its
        bound ``e_max log(e_max/(e_min r_min))/beta`` (``beta`` the slowdown rate, ``e`` the
        energy speed of a unit ``x_o``), or ``TAU_GUARD/(mu g)`` when ``beta <= 0``.
    r_max : float
        Limit of ``|x_o|/|x0|`` (-): beyond it the slip has run away.
    progress : bool
        Show a tqdm bar (after half a second) over the fall of ``log |x_o|`` to ``r_min`` or
        the time to the horizon, whichever is further on.

    Returns
    -------
    Trajectory
        ``info['outcome']`` says how the motion ended. With ``status='interrupted'`` and the
        steps accepted so far when a KeyboardInterrupt arrives during the integration.

    Notes
    -----
    The stop does not wait for the direction (see the module notes): at the pitchfork
    ``F = -F_P`` of the disc the motion is over long before ``w`` has converged.
    """
    x0, r0 = _check_start(x0, method, r_min, r_max)
    t_end, max_tau, bound = _horizons(system, x0, t_end, max_tau, r_min)
    run = _Run(r0, r_min, t_end)
    if progress:
        from tqdm.auto import tqdm

        run.bar = tqdm(total=100, desc=f"{system.kind} slip", unit="%", delay=0.5)
    limits = {"t_end": t_end, "stop_time_bound": bound}
    try:
        slide = _slide_in_rescaled_time if method == "tau" else _slide_in_physical_time
        with system.model.pinned_kernels():
            Y, extra = slide(system, run, x0, r0, t_end, r_min, rtol, atol, max_tau, r_max)
        return _trajectory(system, method, Y[:, 1:], Y[:, 0], "complete", {**extra, **limits})
    except KeyboardInterrupt:
        # what was computed: the finished phases and the steps accepted in the running one
        return _trajectory(system, method, *run.so_far(), "interrupted",
                           {"solver_status": None, "outcome": "interrupted", **limits})
    finally:
        if run.bar is not None:
            run.bar.close()


def _check_start(x0, method, r_min, r_max):
    """``(x0, |x0|)`` checked: three finite numbers not all zero, a known method, positive
    relative radii (-)."""
    x0 = np.asarray(x0, dtype=float)
    if x0.shape != (3,) or not np.all(np.isfinite(x0)):
        raise ParameterError("x0 must be 3 finite numbers (u_x, u_y, rho*omega_z)")
    r0 = float(np.linalg.norm(x0))
    if r0 == 0:
        raise ParameterError("x0 = 0 is already stuck (set-valued friction); nothing to do")
    if method not in ("tau", "t"):
        raise ParameterError(f"method must be 'tau' or 't', got {method!r}")
    check_positive("r_min", r_min)
    _positive_or_inf("r_max", r_max)
    return x0, r0


def _positive_or_inf(name, value) -> float:
    """``float(value)`` when it is > 0 (``inf`` allowed: no limit), else ParameterError."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be a real number, got {value!r}") from None
    if not v > 0:
        raise ParameterError(f"{name} must be > 0 (inf: no limit), got {value!r}")
    return v


def _horizons(system, x0, t_end, max_tau, r_min):
    """``(t_end, max_tau, stop-time bound)``: the given limits checked, the missing ones from
    the bound of the stop time (s) and of the rescaled time (s^2/m)."""
    bound = system.stop_time_bound(x0)
    if t_end is None:
        t_end = HORIZON_FACTOR * bound
    else:
        t_end = _positive_or_inf("t_end (horizon, s)", t_end)
    if max_tau is None:
        beta = system.slowdown_rate()
        if beta > 0:
            # sqrt(2E/m) = e(w) |x_o| with e between these, and it falls at least at beta in t,
            # so its log falls at least at beta/e_max in tau
            e = np.array([1.0 / math.sqrt(system.A),
                          math.sqrt(system.model.kappa / (system.rho * system.b))])
            max_tau = HORIZON_FACTOR * e.max() * math.log(e.max() / (e.min() * r_min)) / beta
        else:
            max_tau = TAU_GUARD / system.mu_g
    else:
        max_tau = float(check_positive("max_tau (rescaled time, s^2/m)", max_tau))
    return t_end, max_tau, bound


class _Run:
    """What a run has computed, kept where an interrupt can reach it: ``done`` holds the rows
    ``(time, state...)`` of the finished phases (``None`` for the running direction phase),
    ``steps`` the ``(time, state)`` steps accepted in the running phase; and its progress bar."""

    def __init__(self, r0, r_min, t_end):
        self.steps: list = []
        self.done: list = []
        self.bar = None
        self.direction_rows = None      # rows of the direction phase from its (s, z) steps
        self._scale = (math.log(r0), -math.log(r_min), t_end)

    def tick(self, log_r, t):
        """Move the bar to the fall of ``log r`` towards the stop radius or of ``t`` towards the
        horizon, whichever is further on."""
        if self.bar is None:
            return
        lr0, depth, t_end = self._scale
        frac = max((lr0 - log_r) / depth, t / t_end if math.isfinite(t_end) else 0.0)
        pct = int(min(99.0, max(0.0, 100.0 * frac)))
        if pct > self.bar.n:
            self.bar.update(pct - self.bar.n)

    def finish_bar(self):
        if self.bar is not None:
            self.bar.update(100 - self.bar.n)

    def so_far(self):
        """``(states, times)`` of everything accepted so far (interrupted run)."""
        ts, ys = _unzip(self.steps)
        if self.done and self.done[-1] is None:
            self.done[-1] = self.direction_rows(ts, ys)
        elif ts.size:
            self.done.append(np.column_stack([ts, ys]))
        Y = np.concatenate(self.done)
        return Y[:, 1:], Y[:, 0]


def _trajectory(system, method, Y, tau, status, extra) -> Trajectory:
    """The :class:`Trajectory` of states ``Y`` at (rescaled or physical) times ``tau``; the stop
    time is extrapolated from the last state as ``r/|R*|``."""
    rho = system.rho
    if method == "tau":
        r = np.exp(Y[:, 0])
        W = Y[:, 1:4] / np.linalg.norm(Y[:, 1:4], axis=1, keepdims=True)
        t, q = Y[:, 4], Y[:, 5:8]
    else:
        r = np.linalg.norm(Y[:, :3], axis=1)
        W = Y[:, :3] / r[:, None]
        t, q = tau, Y[:, 3:6]
        tau = np.full(t.size, np.nan)
    w_final = W[-1]
    rdot = float(system.radial(w_final))
    stopped = extra["outcome"] == "stopped" and rdot < 0
    t_stop = float(t[-1] + r[-1] / -rdot) if stopped else math.inf
    stuck = bool(stopped and abs(system.F) <= system.F_T * (1 + 1e-12))
    res = float(np.linalg.norm(system.circumferential(w_final))) / system.mu_g
    info = {"method": method, "kind": system.kind, "F": system.F, "model": system.model.name,
            **extra, "w_residual": res}
    info.setdefault("w_converged", bool(res <= VTOL))
    if stopped and method == "tau" and info["w_converged"]:
        # the eigenvalues of the flow on the sphere at the stop direction: one below
        # NONHYPERBOLIC mu g (the pitchfork, say) means w_final is only as close to the limit
        # direction as |V*| < VTOL mu g allows
        lam = system.sphere_rates(w_final)
        info["stop_rates"] = lam
        info["stop_direction"] = ("non-hyperbolic" if min(map(abs, lam)) < NONHYPERBOLIC
                                  * system.mu_g else "hyperbolic")
    return Trajectory(t=t, tau=tau, x_o=r[:, None] * W, w=W, q=q, t_stop=t_stop,
                      stopped=bool(stopped), stuck=stuck, w_final=w_final, rho=rho,
                      R=system.model.R, info=info, status=status)


# ------------------------------------------------------------------------- the motion
def _radial_and_circumferential(system, w):
    """``(R*(w), V*(w))`` (m/s^2) from one evaluation of the field (``w`` normalised here)."""
    wn = w / math.sqrt(w @ w)
    Fo = system.field(wn)
    Rs = float(wn @ Fo)
    return Rs, Fo - Rs * wn, wn


def _settled_gap(system, w, scaled: bool = True):
    """``log(|V*(w)|/tol)``: negative once the direction has settled on a limit direction,
    ``tol = VTOL mu g``. ``scaled``: ``tol`` shrinks with ``|R*|/(mu g)`` (to ``1e-3`` at
    least), so that the straight-line end of a motion from there keeps its error
    ``~ |w - w_limit|/|R*|`` small."""
    Rs, V, _ = _radial_and_circumferential(system, w)
    tol = VTOL * system.mu_g
    if scaled:
        tol *= min(1.0, max(abs(Rs) / system.mu_g, 1e-3))
    return math.log(math.sqrt(V @ V) + 1e-300) - math.log(tol)


def _motion_events(system, r0, r_min, r_max, t_end, state):
    """Terminal events of a motion, in the order of ``_OUTCOMES``: ``|x_o|`` down to
    ``r_min |x0|``, direction settled, horizon ``t_end`` reached, runaway slip. ``state(time, y)``
    gives ``(log |x_o|, w, t)``."""

    def ev_stop(s, y):
        return state(s, y)[0] - math.log(r_min * r0)

    def ev_settled(s, y):
        return _settled_gap(system, state(s, y)[1])

    def ev_time(s, y):
        return state(s, y)[2] - t_end if math.isfinite(t_end) else -1.0

    def ev_run(s, y):
        return state(s, y)[0] - math.log(r_max * r0)

    for ev in (ev_stop, ev_settled, ev_time, ev_run):
        ev.terminal = True
    ev_stop.direction = ev_settled.direction = -1
    return [ev_stop, ev_settled, ev_time, ev_run]


def _motion(run, f, span, y0, settled, events, tick, t_end, t_col, rtol, atol):
    """Rows ``(time, state)`` of a motion integrated by DOP853 from ``y0`` over ``span`` (none
    when it starts ``settled``), which event ended it (see :func:`_outcome`) and the solver's
    status; ``t_col`` is the column of the physical time in a row."""
    from scipy.integrate import DOP853, solve_ivp

    run.done.append(np.concatenate([[span[0]], y0])[None, :])
    if settled:
        return run.done[0], "settled", None
    sol = solve_ivp(f, span, y0, method=_recording(DOP853, run.steps, tick), rtol=rtol,
                    atol=atol, events=events)
    rows = np.column_stack([sol.t, sol.y.T])
    run.done[:] = [rows]
    run.steps.clear()
    return rows, _outcome(sol, rows[-1, t_col], t_end), int(sol.status)


def _outcome(sol, t_last, t_end) -> str:
    """Which event (or limit) ended the motion."""
    fired = [name for name, te in zip(_OUTCOMES, sol.t_events) if len(te)]
    if fired:
        return fired[0]
    if sol.status == 0:
        return "horizon" if t_last >= t_end else "guard"
    return "failed"


def _straight_end(system, r, w, r_end):
    """Settled motion: ``r' = R*`` with ``R* < 0`` constant along ``w`` from ``r`` down to
    ``r_end`` (m/s); returns the rescaled time (s^2/m), time (s) and ``q`` increments."""
    Rs = -float(system.radial(w))
    dq = (r * r - r_end * r_end) / (2 * Rs) * np.array([w[0], w[1], w[2] / system.rho])
    return math.log(r / r_end) / Rs, (r - r_end) / Rs, dq


def _settled_outcome(system, w) -> str:
    """'stopped' when the settled direction ``w`` slows down, 'sliding' when it does not: a
    rate ``R* >= -VTOL mu g`` counts as steady sliding (the stop would take longer than
    ``|x_o|/(VTOL mu g)``, and ``R*`` is not known better than that on a settled direction)."""
    return "stopped" if system.radial(w) < -VTOL * system.mu_g else "sliding"


# ------------------------------------------------------------------------- rescaled time
def _rescaled_field(system):
    """Right-hand side of ``(log r, w, t, q)`` in rescaled time (``|w|`` held at 1)."""
    rho = system.rho

    def f(tau, y):
        Rs, V, wn = _radial_and_circumferential(system, y[1:4])
        r = math.exp(y[0])
        dy = np.empty(8)
        dy[0] = Rs
        dy[1:4] = V + (1.0 - math.sqrt(y[1:4] @ y[1:4])) * wn        # keep |w| = 1
        dy[4] = r
        dy[5:8] = r * r * np.array([wn[0], wn[1], wn[2] / rho])
        return dy

    return f


def _slide_in_rescaled_time(system, run, x0, r0, t_end, r_min, rtol, atol, max_tau, r_max):
    """Rows ``(tau, log r, w, t, q)`` of the run in rescaled time and the solver's report."""
    y0 = np.concatenate([[math.log(r0)], x0 / r0, [0.0, 0.0, 0.0, 0.0]])
    events = _motion_events(system, r0, r_min, r_max, t_end, lambda s, y: (y[0], y[1:4], y[4]))
    rows, outcome, status = _motion(
        run, _rescaled_field(system), (0.0, max_tau), y0, _settled_gap(system, y0[1:4]) < 0,
        events, lambda s, y: run.tick(y[0], y[4]), t_end, 5, rtol, atol)
    extra = {"solver_status": status}
    if outcome == "settled":
        last = rows[-1]
        r, w = math.exp(last[1]), last[2:5] / np.linalg.norm(last[2:5])
        outcome = _settled_outcome(system, w)
        extra["w_converged"] = True
        if outcome == "stopped" and r > r_min * r0:
            dtau, dt, dq = _straight_end(system, r, w, r_min * r0)
            end = np.concatenate([[last[0] + dtau, math.log(r_min * r0)], w,
                                  [last[5] + dt], last[6:9] + dq])
            run.done.append(end[None, :])
    elif outcome == "stopped":
        extra.update(_converge_direction(system, run, rows, rtol, atol))
    extra["outcome"] = outcome
    run.finish_bar()
    return np.concatenate(run.done), extra


def _converge_direction(system, run, rows, rtol, atol) -> dict:
    """Converge the direction of a finished motion, ``w' = V*(w)`` (``t``, ``q`` frozen), until
    ``|V*| < VTOL mu g``; appends its rows to ``run.done``.

    Integrated in ``s = log(1 + mu g (tau - tau_end))`` by LSODA: an algebraic approach in
    ``tau`` (non-hyperbolic limit direction) is exponential in ``s``, a hyperbolic one is stiff
    there and LSODA switches to its implicit method; ``tau`` runs up to ``1e12/(mu g)`` more.
    ``log r`` is not integrated (the motion is over; it would make the step follow its
    exponential fall in ``s``): the rows extrapolate it with ``R*`` at the end of the motion.
    """
    from scipy.integrate import LSODA, solve_ivp

    last = rows[-1]
    if _settled_gap(system, last[2:5], scaled=False) < 0:
        return {"w_converged": True}
    T = 1.0 / system.mu_g

    def f(s, w):
        _, V, _ = _radial_and_circumferential(system, w)
        return T * math.exp(s) * V

    def ev_conv(s, w):
        return _settled_gap(system, w, scaled=False)
    ev_conv.terminal = True
    ev_conv.direction = -1

    run.direction_rows = _rows_with(last, float(system.radial(last[2:5])), T)
    run.done.append(None)      # placeholder for the direction phase (see _Run.so_far)
    sol = solve_ivp(f, (0.0, math.log(1e12)), last[2:5], method=_recording(LSODA, run.steps),
                    rtol=rtol, atol=atol, events=[ev_conv])
    run.done[-1] = run.direction_rows(sol.t[1:], sol.y.T[1:])
    run.steps.clear()
    return {"w_converged": len(sol.t_events[0]) > 0,
            "direction_solver_status": int(sol.status)}


# ------------------------------------------------------------------------- physical time
def _slide_in_physical_time(system, run, x0, r0, t_end, r_min, rtol, atol, max_tau, r_max):
    """Rows ``(t, x_o, q)`` of the run in physical time and the solver's report (``max_tau``
    is not used; without a horizon the run is held to ``TAU_GUARD |x0|/(mu g)``)."""
    rho = system.rho

    def f(t, y):
        x = y[:3]
        out = np.empty(6)
        out[:3] = system.field(x)
        out[3:] = [x[0], x[1], x[2] / rho]
        return out

    def state(t, y):
        return math.log(math.sqrt(y[:3] @ y[:3]) + 1e-300), y[:3], t

    T_cap = t_end if math.isfinite(t_end) else TAU_GUARD * r0 / system.mu_g
    rows, outcome, status = _motion(
        run, f, (0.0, T_cap), np.concatenate([x0, np.zeros(3)]), _settled_gap(system, x0) < 0,
        _motion_events(system, r0, r_min, r_max, t_end, state),
        lambda t, y: run.tick(*state(t, y)[::2]), t_end, 0, rtol, atol * r0 * r_min)
    extra = {"solver_status": status}
    if outcome == "settled":
        last = rows[-1]
        r = float(np.linalg.norm(last[1:4]))
        w = last[1:4] / r
        outcome = _settled_outcome(system, w)
        if outcome == "stopped" and r > r_min * r0:
            _, dt, dq = _straight_end(system, r, w, r_min * r0)
            end = np.concatenate([[last[0] + dt], r_min * r0 * w, last[4:7] + dq])
            run.done.append(end[None, :])
    extra["outcome"] = outcome
    run.finish_bar()
    return np.concatenate(run.done), extra


# ------------------------------------------------------------------------- step records
def _recording(base, log: list, tick=None):
    """The SciPy ODE solver class ``base`` appending each accepted step ``(t, y)`` to ``log``
    (so that an interrupted integration still returns what it computed) and calling
    ``tick(t, y)`` after it."""

    class Recording(base):
        def step(self):
            msg = super().step()
            if self.status != "failed":
                log.append((self.t, self.y.copy()))
                if tick is not None:
                    tick(self.t, self.y)
            return msg

    return Recording


def _unzip(steps):
    """``(times, states)`` arrays of a list of ``(t, y)`` steps."""
    if not steps:
        return np.zeros(0), np.zeros((0, 0))
    t, y = zip(*steps)
    return np.array(t), np.array(y)


def _rows_with(last, rdot, T):
    """Rows ``(tau, log r, w, t, q)`` of the direction phase from its ``(s, w)`` states after
    the motion's ``last`` row: ``tau = tau_end + T (e^s - 1)``, ``log r`` extrapolated with the
    rate ``rdot`` (m/s^2), ``(t, q)`` held."""

    def rows(s, w):
        s = np.asarray(s, dtype=float)
        w = np.asarray(w).reshape(len(s), 3)
        dtau = T * np.expm1(s)
        return np.column_stack([last[0] + dtau, last[1] + rdot * dtau, w,
                                np.tile(last[5:9], (len(s), 1))])

    return rows
