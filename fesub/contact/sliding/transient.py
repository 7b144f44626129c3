"""Sliding-contact transient: :func:`simulate` and its result, :class:`TransientResult`.

:func:`simulate` checks every argument, chooses the time step below the critical one, draws the
roughness force, finds the static equilibrium at t = 0 and marches the system as a model of the
contact engine (:meth:`SlidingContactSystem.multibody_model` run by
:func:`fesub.contact.simulate_multibody`: modal coordinates, the forward-increment
Lagrange-multiplier step, compiled), returning the signals of the seed method. A stop (stick,
detachment, slave off the surface) or an interrupt is a normal outcome with everything computed
up to then.

The engine applies Coulomb's law: a slave whose sliding velocity would change sign sticks (the
run stops there by default, ``stop_on_stick``). Continued past that (``stop_on_stick=False``), or
held still with mu > 0 (vx = 0), the slave sticks; the seed paper's two-body method instead
kept the friction force ``mu lambda`` along the slip direction of ``vx`` (persistent sliding).
While the slave slides the two are the same recursion (the test suite checks it against a
literal transcription of the paper's equations).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...errors import ConvergenceError, ParameterError, check_count, check_positive, check_real
from ...io import Result, summary_record
from ...parallel import single_thread_blas
from ..engine import simulate_multibody
from .system import SlidingContactSystem, check_geometry

__all__ = ["TransientResult", "simulate", "REASONS", "SIGNAL_UNITS", "signal_unit", "MAX_STEPS"]


#: how a run ends: the kernel's stop codes (0-3) and an interrupt (4, Ctrl-C)
REASONS = {0: "completed", 1: "stick", 2: "detachment", 3: "off_surface", 4: "interrupted"}
_MESSAGES = {
    "completed": "reached the requested duration",
    "stick": "the tangential relative velocity of the slave changed sign: sticking could occur",
    "detachment": "the contact force would have to pull (the multiplier of the sliding method turns negative): the slave detaches",
    "off_surface": "the slave left the target surface",
    "interrupted": "interrupted (Ctrl-C): the steps done so far are kept",
}


#: unit of each signal of a :class:`TransientResult` (output channels by their prefix)
SIGNAL_UNITS = {"t": "s", "lambda": "N", "x_contact": "m", "v_t": "m/s", "gap": "m", "segment": "1",
                "f_x": "N", "f_y": "N"}
_OUTPUT_UNITS = {"u_": "m", "v_": "m/s", "a_": "m/s^2"}
_SIGNAL_NAMES = {"t": "time", "lambda": "contact multiplier (normal force, > 0 in compression)",
                 "x_contact": "contact point x on the target", "gap": "gap after each step",
                 "v_t": "tangential velocity of the slave relative to the target",
                 "segment": "target segment under the slave", "f_x": "contact force on the slave, x",
                 "f_y": "contact force on the slave, y"}


def signal_unit(name: str) -> str:
    """SI unit of the transient signal ``name`` ('t', 'lambda', ..., 'u_T_y', 'a_C_x', ...)."""
    if name in SIGNAL_UNITS:
        return SIGNAL_UNITS[name]
    unit = _OUTPUT_UNITS.get(name[:2])
    if unit is None:
        raise ParameterError(f"unknown transient signal {name!r}")
    return unit


_META = ("status", "stop_time", "steps", "h", "h_critical", "fs_out", "wall_time", "mu", "formulation",
         "backend", "approximation", "info")


@dataclass(eq=False)
class TransientResult(Result):
    """Signals of a sliding-contact transient (SI units), decimated to ``fs_out``.

    Parameters
    ----------
    signals : dict of str to (k,) ndarray
        't' (s), 'lambda' (N, > 0 in compression), 'x_contact' (m, contact point on the target),
        'v_t' (m/s, tangential velocity of the slave relative to the target), 'gap' (m, after
        each step), 'segment' (index of the target segment under the slave), 'f_x' and 'f_y' (N,
        contact force on the slave), and for every output channel NAME: 'u_NAME' (m), 'v_NAME'
        (m/s), 'a_NAME' (m/s^2). Slider displacements are relative to its rigid motion vx t.
    status : str
        'completed', 'stick', 'detachment', 'off_surface' (a physical stop, everything up to then
        kept) or 'interrupted' (Ctrl-C: the steps done so far).
    stop_time : float
        Time reached (s).
    steps : int
        Number of time steps computed.
    h, h_critical : float
        Time step used and critical (stability limit) time step (s).
    fs_out : float
        Output sampling rate (Hz).
    wall_time : float
        Computing time of the run (s).
    mu : float
        Coulomb friction coefficient (dimensionless).
    formulation : str
        'modal' (modal coordinates) or 'dense' (reduced physical coordinates) of this two-body
        core, or 'multibody' (the same case on the general stepper,
        :func:`fesub.models.beam_on_beam.transient`).
    backend : str
        'compiled' or 'python': the kernel that ran the march.
    approximation : str or None, optional
        What a modal cut-off approximates (its frequency in Hz), None without one.
    info : dict, optional
        The static multiplier (N), the requested duration (s) and the loading of the case
        (roughness, seed, sliding velocity).
    """

    signals: dict
    status: str
    stop_time: float
    steps: int
    h: float
    h_critical: float
    fs_out: float
    wall_time: float
    mu: float
    formulation: str
    backend: str
    approximation: str | None = None
    info: dict = field(default_factory=dict)

    kind = "transient"

    @property
    def reason(self) -> str:
        return _MESSAGES[self.status]

    def details(self) -> dict:
        """Flat record of the run: status, steps, time steps, speed and the extremes of the
        signals (keys carry their units)."""
        s = self.signals
        out = {"status": self.status, "stop_reason": self.reason, "stop_time_s": self.stop_time,
               "steps": self.steps, "time_step_s": self.h, "critical_time_step_s": self.h_critical,
               "wall_time_s": self.wall_time,
               "steps_per_second": self.steps / self.wall_time if self.wall_time > 0 else None,
               "mu": self.mu, "formulation": self.formulation, "backend": self.backend,
               "approximation": self.approximation}
        if s["t"].size:
            out["min_lambda_N"] = float(s["lambda"].min())
            out["min_v_t_m_s"] = float(s["v_t"].min())
            out["max_abs_gap_m"] = float(np.abs(s["gap"]).max())
            for k in s:
                if k.startswith("a_"):
                    out[f"max_abs_{k}_m_s2"] = float(np.abs(s[k]).max())
        out.update(self.info)
        return out

    def summary(self) -> dict:
        d = self.details()
        info = self.info
        params = {"mu": (self.mu, "1"), "duration": (info.get("duration_s"), "s"), "time_step": (self.h, "s"),
                  "fs_out": (self.fs_out, "Hz"), "vx": (info.get("vx_m_s"), "m/s"),
                  "roughness_std": (info.get("roughness_std_N"), "N"), "seed": (info.get("seed"), None),
                  "formulation": (self.formulation, None)}
        results = {"status": (self.status, None), "stop_time": (self.stop_time, "s"),
                   "steps": (self.steps, None), "min_lambda": (d.get("min_lambda_N"), "N"),
                   "min_v_t": (d.get("min_v_t_m_s"), "m/s"), "wall_time": (self.wall_time, "s")}
        notes = [self.approximation] if self.approximation else None
        return summary_record(self.kind, params, results, details=d, notes=notes)

    def to_xarray(self):
        import xarray as xr

        t = self.signals["t"]
        data = {k: ("t", v, {"units": signal_unit(k), "long_name": _SIGNAL_NAMES.get(k, k)})
                for k, v in self.signals.items() if k != "t"}
        attrs = {k: getattr(self, k) for k in _META}
        attrs["signal_order"] = list(self.signals)
        return xr.Dataset(data, coords={"t": ("t", t, {"units": "s", "long_name": "time"})}, attrs=attrs)

    @classmethod
    def from_xarray(cls, ds):
        a = dict(ds.attrs)
        order = a.get("signal_order") or ["t", *ds.data_vars]
        sig = {k: ds[k].values for k in order}
        return cls(signals=sig, **{k: a[k] for k in _META})


def _real(name: str, value) -> float:
    """``float(value)`` for a real number (NaN and inf pass: the caller states the range)."""
    return check_real(name, value)


def _check_seed(seed) -> None:
    ok = seed is None or isinstance(seed, (np.random.Generator, np.random.SeedSequence)) or (
        isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_)) and seed >= 0)
    if not ok:
        raise ParameterError(f"seed of the roughness noise must be None or an integer >= 0, got {seed!r}")


def _check_initial(system, initial):
    n1, n2 = system.K1.shape[0], system.K2.shape[0]
    try:
        w1, q2 = (np.array(v, dtype=float) for v in initial)
    except (TypeError, ValueError):
        raise ParameterError(f"initial must be a pair (w1, q2) of arrays of shapes ({n1},), ({n2},) (m)") from None
    if w1.shape != (n1,) or q2.shape != (n2,):
        raise ParameterError(f"initial state must have shapes ({n1},), ({n2},), got {w1.shape}, {q2.shape}")
    if not (np.all(np.isfinite(w1)) and np.all(np.isfinite(q2))):
        raise ParameterError("initial state (w1, q2) must be finite (m)")
    return w1, q2


#: estimated relative round-off of the contact multiplier above which :func:`simulate` warns (about
#: 3 digits left) and at which it refuses the time step (see :func:`_check_multiplier_digits`)
MULTIPLIER_WARN, MULTIPLIER_REFUSE = 1e-3, 0.3


def _check_multiplier_digits(S, w1, q2, mu, sign, h, lam0) -> None:
    """Refuse (or warn about) a time step so small that the multiplier is mostly round-off.

    lambda = B_C U* / (h^2 w), w = B_C M^-1 B_E' (1/kg): the predicted gap B_C U* is a sum of
    node coordinates times the coupling row whose terms (of total size ``scale``, a few mm here:
    the gap is mostly a difference of heights) cancel down to h^2 w lambda. Their round-off, about
    eps * scale, becomes a multiplier error eps * scale / (h^2 w): relative to the static
    multiplier, ``rel = eps * scale / (h^2 w lambda_static)``, growing as 1/h^2. On the benchmark
    at rest (vx = 0, where lambda must stay at its static value): rel = 1.5e-3 at h = 1e-10 s
    against a measured largest deviation of 4.1e-3 over 200 steps (std 6e-4), 0.15 at 1e-11 s
    against 0.42; the default step (2.4e-7 s) has rel ~ 3e-10. Since the largest deviations
    reach about 3 rel, ``rel >= 0.3`` (lambda may change sign from round-off alone: a spurious
    detachment) is refused, and ``rel > 1e-3`` warned with the digits that are left.
    """
    if not lam0 > 0:  # a contact that is not pressed at rest: nothing to compare the error with
        return
    pos = S.target_positions(q2)
    P = S.X_C + w1[S.iC]
    seg, al, _, _ = S.surface.find(P, 0, positions=pos)
    if seg < 0:
        return  # the run stops at once (off the surface); the step is not the issue
    bE, bC, _ = S._rows(seg, al, pos, mu, sign)
    BE, BC = S._global_rows(seg, bE, bC)
    n1 = S.K1.shape[0]
    # M^-1 = Phi Phi' for mass-normalised modes (of the truncated model when truncated)
    w = abs((BC[:n1] @ S.Phi1) @ (BE[:n1] @ S.Phi1) + (BC[n1:] @ S.Phi2) @ (BE[n1:] @ S.Phi2))
    j1, j2 = S.segs[seg]
    scale = np.abs(bC) @ np.abs(np.r_[pos[j1], pos[j2], P])  # the terms summed into the gap (m)
    rel = np.finfo(float).eps * scale / (h * h * w * lam0)
    h_min = np.sqrt(np.finfo(float).eps * scale / (MULTIPLIER_REFUSE * w * lam0))
    if rel >= MULTIPLIER_REFUSE:
        raise ParameterError(f"time step h = {h:.3g} s is too small: the contact multiplier would be "
                             f"round-off (relative error ~{rel:.2g} of the static {lam0:.3g} N); "
                             f"use h >= {h_min * 1.06:.2g} s")  # rounded up: the advice passes
    if rel > MULTIPLIER_WARN:
        import warnings

        warnings.warn(f"time step h = {h:.3g} s: the contact multiplier keeps about "
                      f"{max(0.0, -np.log10(rel)):.1f} correct digits (relative round-off ~{rel:.2g}, "
                      f"growing as 1/h^2)", UserWarning, stacklevel=3)



#: longest march one call accepts: 2e9 steps is ~10 min of the compiled march with 250 modes and
#: 16 GB of roughness samples; beyond it a typo (duration in ms as s, say) is far more likely
MAX_STEPS = 2e9


def simulate(system: SlidingContactSystem, *, mu: float, duration: float, vx: float,
             h: float | None = None, fs_out: float = 50_000.0, roughness_std: float = 0.0,
             roughness_band=(0.0, 20_000.0), seed=0, formulation: str = "modal",
             progress: bool = False, chunk: int = 200_000, initial=None, monitor=None,
             stop_on_stick: bool = True, geometry: str = "deformed", loop: str = "auto") -> TransientResult:
    """Run the sliding-contact transient.

    Parameters
    ----------
    mu : friction coefficient (>= 0).
    duration : simulated time (s).
    vx : velocity of the prescribed DOFs of substructure 1 along x (m/s).
    h : time step (s); default: the largest step below 0.95 x the critical step that makes the
        output rate an integer number of steps. A step above the critical one is refused.
    fs_out : output sampling rate (Hz).
    roughness_std : standard deviation (N) of the band-limited white-noise vertical force on the
        slave; ``roughness_band`` (Hz) and ``seed`` define it.
    formulation : 'modal' (the contact engine in modal coordinates; 'multibody' names the same).
    loop : 'auto', 'kernel' or 'python': the step loop of the contact engine (the compiled
        ``multibody`` kernel, or one step at a time in Python over ``friction_lcp``; 'auto' takes
        the kernel for the deformed geometry, the Python loop for 'undeformed' and 'frozen').
    progress : show a progress bar.
    initial : optional (w1, q2) initial displacements at rest (slider relative to its rigid motion,
        free reduced coordinates); default: the static equilibrium under the loads.
    geometry : 'deformed' (default, the paper's method: contact point and direction from the
        predicted deformed positions), 'undeformed' (from the rigid motion only: a linear,
        time-varying constraint, as assumed by the eigenvalue and TD-FRF analyses) or 'frozen'
        (vx = 0 only: the contact point and direction of the initial deformed configuration, held
        fixed -- the constraint linearised about the preloaded state, for vibration about a
        contact that does not slide; being linear and workless at mu = 0, it conserves the
        discrete energy of the central-difference scheme exactly).
    stop_on_stick : stop at the step where the sliding velocity would change sign (the slave
        sticks); False continues (Coulomb's law: stick, slip again), for studies with a fixed
        contact (vx = 0).
    monitor : optional callable receiving, after every ``chunk`` steps, a dict with the modal
        state of each substructure (eta1_prev, eta1, eta2_prev, eta2 = the modal coordinates of
        the slider, relative to its drive's motion, and of the target at steps n-1 and n, for
        unit modal masses), the modal loads f1, f2 (N), the squared frequencies w2_1, w2_2
        (rad^2/s^2), h (s) and the steps done.

    Returns
    -------
    TransientResult; a stop (stick, detachment, slave off the surface) is a normal outcome with
    everything computed up to then; so is an interrupt (Ctrl-C): the result holds the steps done
    so far with ``status='interrupted'``.
    """
    mu, duration, vx, fs_out, roughness_std, chunk = _check_arguments(
        system, mu, duration, vx, fs_out, roughness_std, roughness_band, chunk, seed, geometry, formulation)
    h, hc, dec, n_steps = _time_step(system, duration, fs_out, h)
    rough = _roughness(n_steps, h, roughness_std, roughness_band, seed)
    # one BLAS thread for the whole run: the set-up's LAPACK calls would otherwise leave OpenBLAS
    # threads spinning beside the single-threaded march (0.68 against 0.41 us per step measured
    # on a busy two-core machine)
    return _simulate_on_engine(system, mu, duration, vx, h, hc, dec, rough, roughness_std, roughness_band, seed,
                               progress, initial, monitor, chunk, stop_on_stick, geometry, loop)


def _check_arguments(system, mu, duration, vx, fs_out, roughness_std, roughness_band, chunk, seed, geometry,
                     formulation):
    """Validate the arguments of :func:`simulate` that do not depend on the time step.

    Returns mu, duration (s), vx (m/s), fs_out (Hz), roughness_std (N) and chunk as checked
    numbers; raises :class:`ParameterError` naming the first one out of its range.
    """
    mu = _real("friction coefficient mu", mu)
    if not (np.isfinite(mu) and mu >= 0):
        raise ParameterError(f"friction coefficient mu must be >= 0, got {mu}")
    duration = _real("duration", duration)
    if not (np.isfinite(duration) and duration > 0):
        raise ParameterError(f"duration must be > 0 s and finite, got {duration}")
    vx = _real("vx", vx)
    if not np.isfinite(vx):
        raise ParameterError(f"vx must be finite (m/s), got {vx}")
    fs_out = _real("fs_out", fs_out)
    if not (np.isfinite(fs_out) and fs_out > 0):
        raise ParameterError(f"fs_out must be > 0 Hz and finite, got {fs_out}")
    roughness_std = check_positive("roughness_std (N)", roughness_std, strict=False)
    chunk = check_count("chunk (steps between progress updates)", chunk, lo=1)
    _check_seed(seed)
    check_geometry(geometry)
    if geometry == "frozen" and vx != 0:
        raise ParameterError(f"geometry='frozen' holds the initial contact point: it needs vx = 0 "
                             f"(a contact that does not slide), got vx = {vx} m/s")
    if formulation not in ("modal", "multibody"):
        raise ParameterError(f"formulation must be 'modal' (the contact engine; 'multibody' is the same), "
                             f"got {formulation!r}")
    try:
        band = tuple(float(b) for b in roughness_band)
    except (TypeError, ValueError):
        raise ParameterError(f"roughness_band must be (f_lo, f_hi) in Hz, got {roughness_band!r}") from None
    if len(band) != 2:
        raise ParameterError(f"roughness_band must be (f_lo, f_hi) in Hz, got {roughness_band!r}")
    return mu, duration, vx, fs_out, roughness_std, chunk


#: kernel tolerance (m) of the contact engine's runs. The gap closed
#: in a step is h^2 w lambda ~ 2e-9 m on the benchmark (w the inverse mass of the contact row), its
#: round-off ~1e-16 of the positions (~1e-17 m), one last sweep's change in round-off ~1e-25 m:
#: 1e-20 m leaves a sweep error ~1e-11 of the multiplier (below its round-off, ~3e-10 per step) and
#: is 1e5 above the level where the sweeps could stall. The engine's default (1e-13 m) leaves 2e-8.
ENGINE_TOL = 1e-20
#: the engine's stop names that the sliding transient names otherwise
_ENGINE_STATUS = {"lift_off": "detachment"}


def _simulate_on_engine(system, mu, duration, vx, h, hc, dec, rough, roughness_std, roughness_band, seed,
                        progress, initial, monitor, chunk, stop_on_stick, geometry, loop) -> TransientResult:
    """The system on the contact engine (:meth:`SlidingContactSystem.multibody_model` marched by
    :func:`fesub.contact.simulate_multibody`): the roughness a force series on the slave's y
    coordinate, the run stopped as the sliding method stops it; the signals those of the
    sliding transient (slider displacements relative to its rigid motion)."""
    sign = 1.0 if vx >= 0 else -1.0
    with single_thread_blas():
        if initial is not None:
            initial = _check_initial(system, initial)
        mb, init, lam0 = system.multibody_model(mu, vx, geometry=geometry, initial=initial)
        w1, q2 = init["slider"][0][system.f1_idx], init["target"][0]
        _check_multiplier_digits(system, w1, q2, mu, sign, h, lam0)
        slider = mb.bodies[0]
        series = None
        if roughness_std > 0:
            series = [("slider", int(slider.node_dofs[system.slave_node, 1]), rough)]
        watch = None
        if monitor is not None:
            cols = [mb.cols[0], mb.cols[1]]

            def watch(state):  # the state by substructure, as the modal coordinates of each
                f = mb.modal_force(state["t"])
                monitor({"eta1_prev": state["eta_prev"][cols[0]], "eta1": state["eta"][cols[0]],
                         "eta2_prev": state["eta_prev"][cols[1]], "eta2": state["eta"][cols[1]],
                         "f1": f[cols[0]], "f2": f[cols[1]], "w2_1": mb.omega2[cols[0]],
                         "w2_2": mb.omega2[cols[1]], "h": state["h"], "steps": state["steps"]})
        # the signals need no work accounts (the energies are not returned): left out
        res = simulate_multibody(mb, duration=duration, h=h, fs_out=1.0 / (dec * h),
                                 on_stick="stop" if stop_on_stick else "continue", initial=init, tol=ENGINE_TOL,
                                 progress=progress, loop=loop, series=series, accounts=False, monitor=watch,
                                 chunk=chunk, initial_states=[2 if sign > 0 else 3])  # it starts sliding
    if res.status == "not_converged":
        raise ConvergenceError(f"the contact kernel did not converge at step {res.steps} (t = {res.steps * h:.6g} s)")
    keep = res.t.size
    if res.status in ("stick", "lift_off") and keep and (res.steps - 1) % dec:
        keep -= 1  # the stopping step, recorded off the output grid: the signals keep the grid
    t = res.t[:keep]
    nodes = {k: v[:keep, 0] for k, v in res.nodes.items()}
    sig = {"t": t, "lambda": nodes["lambda_n"], "x_contact": nodes["contact_x"], "v_t": nodes["slip_velocity"],
           "gap": nodes["gap"], "segment": nodes["segment"], "f_x": nodes["force_x"], "f_y": nodes["force_y"]}
    for b, body in enumerate(mb.bodies):
        for name, k in body.outputs.items():
            rigid = vx * system.r1[k] if b == 0 else 0.0  # the slider's rigid velocity along this coordinate
            sig[f"u_{name}"] = res.channels[f"u_{name}"][:keep] - rigid * t
            sig[f"v_{name}"] = res.channels[f"v_{name}"][:keep] - rigid
            sig[f"a_{name}"] = res.channels[f"a_{name}"][:keep]
    return TransientResult(
        signals=sig, status=_ENGINE_STATUS.get(res.status, res.status), stop_time=res.steps * h, steps=res.steps,
        h=h, h_critical=hc, fs_out=res.fs_out, wall_time=res.wall_time, mu=float(mu), formulation="modal",
        backend=res.backend, approximation=_approximation(system),
        info={"lambda_static_N": float(lam0), "duration_s": float(duration), "vx_m_s": float(vx),
              "roughness_std_N": float(roughness_std), "roughness_band_hz": [float(b) for b in roughness_band],
              "seed": _seed_record(seed), "geometry": geometry, "loop": res.info["loop"]})


def _time_step(system, duration: float, fs_out: float, h):
    """Time step and length of the march.

    Returns ``(h, h_crit, dec, n_steps)``: the step (s; the given one, checked to be below the
    critical step, or by default the largest below 0.95 h_crit that makes 1/fs_out a whole number
    of steps), the critical step (s), the steps per output sample and the steps covering
    ``duration`` (s). A march longer than :data:`MAX_STEPS` is refused before any allocation.
    """
    hc = system.critical_step()
    if duration / hc > MAX_STEPS:  # every step is below h_crit
        raise ParameterError(f"duration / h_crit = {duration / hc:.3g} steps exceeds {MAX_STEPS:.0e} "
                             f"(fesub.contact.transient.MAX_STEPS): shorten the duration or split the run")
    if fs_out * hc * MAX_STEPS < 1.0:  # one output sample per MAX_STEPS steps at the least
        raise ParameterError(f"fs_out must be >= {1 / (hc * MAX_STEPS):.3g} Hz (one output sample "
                             f"per {MAX_STEPS:.0e} steps), got {fs_out:.4g} Hz")
    if h is None:
        dec = int(np.ceil(1.0 / (fs_out * 0.95 * hc)))
        h = 1.0 / (fs_out * dec)
    else:
        h = _real("time step h", h)
        if not 0 < h < hc:
            raise ParameterError(f"time step h = {h:.4g} s is not below the critical step {hc:.4g} s "
                                 f"(highest reduced frequency {system.max_frequency_hz():.4g} Hz)")
        if duration / h > MAX_STEPS:
            raise ParameterError(f"duration / h = {duration / h:.3g} steps exceeds {MAX_STEPS:.0e} "
                                 f"(fesub.contact.transient.MAX_STEPS): a larger h or a shorter run")
        dec = max(1, int(round(1.0 / (fs_out * h))))
    # steps to cover the duration; a quotient that is an integer up to round-off counts as one
    steps = duration / h
    if steps > MAX_STEPS:
        raise ParameterError(f"duration / h = {steps:.3g} steps exceeds {MAX_STEPS:.0e} (fesub.contact."
                             f"transient.MAX_STEPS): shorten the duration or split the run")
    n_steps = max(1, int(np.ceil(steps - 1e-9)))
    return h, hc, dec, n_steps


def _roughness(n_steps: int, h: float, roughness_std: float, roughness_band, seed) -> np.ndarray:
    """(n_steps,) roughness force on the slave (N): band-limited white noise of standard deviation
    ``roughness_std`` in ``roughness_band`` (Hz) sampled at 1/h, or zeros when the std is 0."""
    rough = np.zeros(n_steps)
    if roughness_std > 0:
        from ...signal import band_limited_noise

        rough = band_limited_noise(n_steps, 1.0 / h, roughness_band, roughness_std, seed)
    return rough


def _approximation(system) -> str | None:
    """What a modal cut-off of ``system`` approximates (None without a cut-off)."""
    if system.modal_cutoff_hz is None:
        return None
    return (f"modal truncation above {system.modal_cutoff_hz:.4g} Hz: an approximation "
            f"(enlarges the stable step; high-frequency content is lost)")


def _seed_record(seed):
    """The noise seed as recorded in a result (an int; None for no seed or a generator object)."""
    return int(seed) if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) else None
