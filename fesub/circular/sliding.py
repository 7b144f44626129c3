"""Integration of the reduced disc/ball contact dynamics until the body stops sliding.

The reduced system of :class:`~fesub.circular.dynamics.ReducedContactSystem`,
``x_o' = F_o(w)`` with ``w = x_o/|x_o|`` and ``x_o = (u_x, u_y, rho omega_z)`` (m/s), is
integrated from a sliding start until slip and spin vanish together (or until a time horizon):

* in rescaled time (``method='tau'``, recommended), ``d/dt = r d/dtau`` with ``r = |x_o|``:
  ``(log r)' = R*(w)``, ``w' = V*(w)``, ``t' = r`` -- smooth up to the stop, the stop time
  ``t_stop = int r dtau`` finite and ``w`` converging to the limit direction; once the motion is
  over to double precision the direction alone is converged by a stiff solver;
* in physical time (``method='t'``), ``x_o`` itself up to ``r = r_min |x0|`` (the independent
  check of the rescaled run).

Both keep every accepted step, so that a Ctrl-C returns what was computed as a
:class:`Trajectory` with ``status='interrupted'``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import ParameterError, check_positive
from ..io import Result, summary_record

__all__ = ["Trajectory", "simulate_sliding", "DEEP_STOP"]

#: depth below the stop radius ``r_min |x0|`` at which a run in rescaled time declares the motion
#: over even though the direction has not converged (see :func:`simulate_sliding`)
DEEP_STOP = 1e-300


#: names and units of the trajectory's per-step variables in a saved file (x_o, w, q columns)
_TRAJ_COLUMNS = (("x_o", ("u_x", "u_y", "rho_omega_z"), ("m/s", "m/s", "m/s")),
                 ("w", ("w_1", "w_2", "w_3"), ("1", "1", "1")),
                 ("q", ("q_x", "q_y", "q_angle"), ("m", "m", "rad")))


@dataclass
class Trajectory(Result):
    """Result of :func:`simulate_sliding` (arrays along the solution).

    Attributes
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
        Method, body kind, force ``F`` (N), model name, solver status, and for runs in rescaled
        time ``w_converged`` and ``w_residual = |V*(w_final)|/(mu g)`` (-).
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


def simulate_sliding(system, x0, t_end: float = math.inf, method: str = "tau",
                     r_min: float = 1e-12, rtol: float = 1e-10, atol: float = 1e-12,
                     max_tau: float = 1e6, r_max: float = 1e6,
                     progress: bool = False) -> Trajectory:
    """Integrate ``system`` from ``x0 = (u_x, u_y, rho omega_z)`` until the body stops or ``t_end``.

    Parameters
    ----------
    system : ReducedContactSystem
        The disc or ball (its field ``F_o(w)``, ``R*``, ``V*``, ``mu g``, ``rho``, force ``F``).
    x0 : array_like (3,)
        Initial ``(u_x, u_y, rho omega)`` (m/s), nonzero.
    t_end : float
        Final time (s) when the body does not stop.
    method : {'tau', 't'}
        ``'tau'``: rescaled time (smooth to the stop, recommended). ``'t'``: physical time up
        to ``r = r_min |x0|``, then the remaining time is added as ``r/|R*|``.
    r_min : float
        Relative radius ``|x_o|/|x0|`` (-) below which the stop may be declared. With
        ``'tau'`` the run goes on (in ``tau``; ``r`` keeps shrinking) until also
        ``|V*(w)| < 1e-10 mu g``, so ``w_final`` is the converged limit direction even where
        ``w`` approaches it slowly, as ``r**(|lambda_c|/|R*|)``; with ``'t'`` the run stops
        at ``r_min |x0|``.
    rtol, atol : float
        Tolerances of :func:`scipy.integrate.solve_ivp` (DOP853).
    max_tau, r_max : float
        Safety limits for the rescaled time (s^2/m) and for ``|x_o|/|x0|`` (-, runaway slip).
    progress : bool
        Show a tqdm bar over the rescaled time (``'tau'`` only).

    Returns
    -------
    Trajectory
        With ``status='interrupted'`` and the steps accepted so far when a KeyboardInterrupt
        arrives during the integration.

    Notes
    -----
    At a non-hyperbolic limit direction (``lambda_c = 0``: the pitchfork ``F = -F_P`` of the
    disc, say) ``w`` converges only algebraically in ``tau`` while ``r`` falls exponentially,
    and the explicit integrator is held to steps of order ``1/|lambda_perp|`` by stability.
    Once ``|x_o| < DEEP_STOP r_min |x0|`` the motion is over to double precision (the remaining
    time ``r/|R*|`` and path are below the rounding of ``t`` and ``q``), so the stop is
    declared and the direction alone, ``w' = V*(w)``, is converged to ``|V*| < 1e-10 mu g``
    by a stiff solver (LSODA, ``tau`` up to ``1e12/(mu g)`` more); ``info['w_converged']``
    says whether it got there.
    """
    x0, r0, t_end = _check_start(x0, method, t_end, r_min)
    run = _Run()
    if progress and method == "tau":
        from tqdm.auto import tqdm

        run.bar = tqdm(total=100, desc=f"{system.kind} slip", unit="%")
    try:
        if method == "tau":
            Y, extra = _slide_in_rescaled_time(system, run, x0, r0, t_end, r_min, rtol, atol,
                                               max_tau, r_max)
        else:
            Y, extra = _slide_in_physical_time(system, run, x0, r0, t_end, r_min, rtol, atol,
                                               r_max)
        return _trajectory(system, method, Y[:, 1:], Y[:, 0], "complete", extra)
    except KeyboardInterrupt:
        # what was computed: the finished phases and the steps accepted in the running one
        return _trajectory(system, method, *run.so_far(), "interrupted",
                           {"solver_status": None, "stopped": False})
    finally:
        if run.bar is not None:
            run.bar.close()


def _check_start(x0, method, t_end, r_min):
    """``(x0, |x0|, t_end)`` checked: three finite numbers not all zero, a known method, a
    positive horizon (s) and stop radius (-)."""
    x0 = np.asarray(x0, dtype=float)
    if x0.shape != (3,) or not np.all(np.isfinite(x0)):
        raise ParameterError("x0 must be 3 finite numbers (u_x, u_y, rho*omega_z)")
    r0 = float(np.linalg.norm(x0))
    if r0 == 0:
        raise ParameterError("x0 = 0 is already stuck (set-valued friction); nothing to do")
    if method not in ("tau", "t"):
        raise ParameterError(f"method must be 'tau' or 't', got {method!r}")
    t_end = float(t_end)
    if not t_end > 0:
        raise ParameterError(f"t_end must be > 0, got {t_end!r}")
    check_positive("r_min", r_min)
    return x0, r0, t_end


class _Run:
    """What a run has computed, kept where an interrupt can reach it: ``done`` holds the rows
    ``(time, state...)`` of the finished phases (``None`` for the running direction phase),
    ``steps`` the ``(time, state)`` steps accepted in the running phase."""

    def __init__(self):
        self.steps: list = []
        self.done: list = []
        self.bar = None
        self.direction_rows = None      # rows of the direction phase from its (tau, z) steps

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
    stopped = extra.pop("stopped")
    rdot = float(system.radial(w_final))
    if stopped and rdot < 0:
        t_stop = float(t[-1] + r[-1] / -rdot)
    else:
        stopped = False
        t_stop = math.inf
    stuck = bool(stopped and abs(system.F) <= system.F_T * (1 + 1e-12))
    res = float(np.linalg.norm(system.circumferential(w_final))) / system.mu_g
    info = {"method": method, "kind": system.kind, "F": system.F, "model": system.model.name,
            **extra, "w_residual": res}
    info.setdefault("w_converged", bool(res <= 1e-10))
    return Trajectory(t=t, tau=tau, x_o=r[:, None] * W, w=W, q=q, t_stop=t_stop,
                      stopped=bool(stopped), stuck=stuck, w_final=w_final, rho=rho,
                      R=system.model.R, info=info, status=status)


# ------------------------------------------------------------------------- rescaled time
def _rescaled_field(system, r0, r_min, bar):
    """Right-hand side of ``(log r, w, t, q)`` in rescaled time (``|w|`` held at 1)."""
    rho = system.rho

    def f(tau, y):
        lr, w = y[0], y[1:4]
        nw = math.sqrt(w @ w)
        wn = w / nw
        Fo = system.field(wn)
        Rs = float(wn @ Fo)
        V = Fo - Rs * wn
        r = math.exp(lr)
        dy = np.empty(8)
        dy[0] = Rs
        dy[1:4] = V + (1.0 - nw) * wn        # keep |w| = 1
        dy[4] = r
        dy[5:8] = r * r * np.array([wn[0], wn[1], wn[2] / rho])
        if bar is not None:
            bar.n = min(99, int(100 * (math.log(r0) - lr) / -math.log(r_min)))
            bar.refresh()
        return dy

    return f


def _rescaled_events(system, r0, t_end, r_min, r_max, log_vtol):
    """Terminal events of the rescaled run: stopped with a converged direction, time horizon
    reached, runaway slip, motion over to double precision."""

    def ev_stop(tau, y):
        V = system.circumferential(y[1:4])
        return max(y[0] - math.log(r_min * r0),
                   math.log(np.linalg.norm(V) + 1e-300) - log_vtol)
    ev_stop.terminal = True
    ev_stop.direction = -1

    def ev_time(tau, y):
        return y[4] - t_end
    ev_time.terminal = True

    def ev_run(tau, y):
        return y[0] - math.log(r_max * r0)
    ev_run.terminal = True

    def ev_deep(tau, y):
        return y[0] - math.log(DEEP_STOP * r_min * r0)
    ev_deep.terminal = True
    return [ev_stop, ev_time, ev_run, ev_deep]


def _slide_in_rescaled_time(system, run, x0, r0, t_end, r_min, rtol, atol, max_tau, r_max):
    """Rows ``(tau, log r, w, t, q)`` of the run in rescaled time and the solver's report."""
    from scipy.integrate import DOP853, solve_ivp

    log_vtol = math.log(1e-10 * system.mu_g)
    y0 = np.concatenate([[math.log(r0)], x0 / r0, [0.0, 0.0, 0.0, 0.0]])
    run.done.append(np.concatenate([[0.0], y0])[None, :])
    sol = solve_ivp(_rescaled_field(system, r0, r_min, run.bar), (0.0, max_tau), y0,
                    method=_recording(DOP853, run.steps), rtol=rtol, atol=atol,
                    events=_rescaled_events(system, r0, t_end, r_min, r_max, log_vtol),
                    dense_output=False)
    rows = np.column_stack([sol.t, sol.y.T])
    run.done[:] = [rows]
    run.steps.clear()
    extra = {"solver_status": int(sol.status),
             "stopped": sol.status == 1 and len(sol.t_events[0]) > 0}
    if len(sol.t_events[0]):
        extra["w_converged"] = True
    elif sol.status == 1 and len(sol.t_events[3]):
        # the motion is over; converge the direction alone (t and q are final)
        extra.update(_converge_direction(system, run, rows, log_vtol, rtol, atol))
    if run.bar is not None:
        run.bar.n = 100
        run.bar.close()
        run.bar = None
    return np.concatenate(run.done), extra


def _converge_direction(system, run, rows, log_vtol, rtol, atol) -> dict:
    """Converge ``w' = V*(w)`` from the last row of a run whose motion is over (``t`` and ``q``
    frozen) with LSODA until ``|V*| < 1e-10 mu g``; appends its rows to ``run.done``."""
    from scipy.integrate import LSODA, solve_ivp

    def f(tau, z):
        w = z[1:4]
        nw = math.sqrt(w @ w)
        wn = w / nw
        Fo = system.field(wn)
        Rs = float(wn @ Fo)
        return np.concatenate([[Rs], Fo - Rs * wn + (1.0 - nw) * wn])

    def ev_conv(tau, z):
        return math.log(np.linalg.norm(system.circumferential(z[1:4])) + 1e-300) - log_vtol
    ev_conv.terminal = True
    ev_conv.direction = -1

    run.direction_rows = _rows_with(rows[-1, 5:9])
    run.done.append(None)      # placeholder for the direction phase (see _Run.so_far)
    tau0 = rows[-1, 0]
    sol = solve_ivp(f, (tau0, tau0 + 1e12 / system.mu_g), rows[-1, 1:5],
                    method=_recording(LSODA, run.steps), rtol=rtol, atol=atol, events=[ev_conv])
    run.done[-1] = run.direction_rows(sol.t[1:], sol.y.T[1:])
    run.steps.clear()
    return {"stopped": True, "w_converged": len(sol.t_events[0]) > 0,
            "direction_solver_status": int(sol.status)}


# ------------------------------------------------------------------------- physical time
def _slide_in_physical_time(system, run, x0, r0, t_end, r_min, rtol, atol, r_max):
    """Rows ``(t, x_o, q)`` of the run in physical time and the solver's report."""
    from scipy.integrate import DOP853, solve_ivp

    rho = system.rho

    def f(t, y):
        x = y[:3]
        out = np.empty(6)
        out[:3] = system.field(x)
        out[3:] = [x[0], x[1], x[2] / rho]
        return out

    def ev_stop(t, y):
        return np.linalg.norm(y[:3]) - r_min * r0
    ev_stop.terminal = True
    ev_stop.direction = -1

    def ev_run(t, y):
        return np.linalg.norm(y[:3]) - r_max * r0
    ev_run.terminal = True

    T_cap = t_end if math.isfinite(t_end) else 1e6 * r0 / system.mu_g
    y0 = np.concatenate([x0, np.zeros(3)])
    run.done.append(np.concatenate([[0.0], y0])[None, :])
    sol = solve_ivp(f, (0.0, T_cap), y0, method=_recording(DOP853, run.steps), rtol=rtol,
                    atol=atol * r0 * r_min, events=[ev_stop, ev_run])
    return np.column_stack([sol.t, sol.y.T]), {
        "solver_status": int(sol.status),
        "stopped": sol.status == 1 and len(sol.t_events[0]) > 0}


# ------------------------------------------------------------------------- step records
def _recording(base, log: list):
    """The SciPy ODE solver class ``base`` appending each accepted step ``(t, y)`` to ``log``
    (so that an interrupted integration still returns what it computed)."""

    class Recording(base):
        def step(self):
            msg = super().step()
            if self.status != "failed":
                log.append((self.t, self.y.copy()))
            return msg

    return Recording


def _unzip(steps):
    """``(times, states)`` arrays of a list of ``(t, y)`` steps."""
    if not steps:
        return np.zeros(0), np.zeros((0, 0))
    t, y = zip(*steps)
    return np.array(t), np.array(y)


def _rows_with(frozen):
    """Rows ``(tau, log r, w, t, q)`` of the direction phase from its ``(tau, (log r, w))``
    states, ``(t, q)`` held at ``frozen``."""

    def rows(tau, z):
        z = np.asarray(z).reshape(len(tau), 4)
        return np.column_stack([tau, z, np.tile(frozen, (len(tau), 1))])

    return rows
