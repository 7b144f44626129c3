"""Ring-down: the free decay of a structure with friction contacts started on a nonlinear mode,
and the frequency and damping ratio read from it cycle by cycle.

:func:`ring_down` starts :func:`fesub.hbm.newmark` (no load) from a point of a damped nonlinear
mode (:class:`~fesub.hbm.DNNM`): displacement, velocity and contact forces at t = 0 from its
harmonics (:func:`fesub.hbm.initial_from_hb`), and records an observed signal, a DOF or a
weighted sum of the DOFs (``phi^T M q``, the modal coordinate of a mode, filters the other
modes out). :func:`decay_rates` reads the signal **half-swing by half-swing**: its extrema
(parabola through the three samples around each), the half-swings ``s_j = |x_{j+1} - x_j| / 2``
at the mid-times, the frequency ``2 pi / (t_{j+1} - t_{j-1})`` (one period between the mid-times
two half-swings apart) and the decay rate ``sigma = ln(s_j / s_{j+1}) / (t_{j+1} - t_j)`` between
neighbours, the damping ratio ``zeta = sigma / w`` and the amplitude ``sqrt(s_j s_{j+1})``.
Half-swings cancel the static offset a friction contact leaves (the centre of a Coulomb decay
moves by the friction force each half cycle). The reading is that of the slow flow (the
amplitude changes little per cycle), the assumption under the damped nonlinear mode too:
where the damping ratio changes quickly with the amplitude the two read different averages.

:meth:`RingDown.compare` sets a ring-down beside the mode it started from at the same
half-swing of the same signal (the mode's periodic motion sampled over its period).

**The decay a mode predicts.** The mode's damping ratio balances the dissipation per cycle ``W``
against its extra damping: ``W = 2 zeta w0 int q'^T M q' dt``, twice the kinetic energy of the
cycle. A free decay loses ``W`` between turning points too, but its amplitude falls by what the
energy **held at the turning points**, ``E(s)``, loses: ``-ds/dt = W / (T dE/ds)`` (period
``T``, half-swing ``s``). The two agree for a linear mode (``E = w0^2 s^2 / 2`` per unit modal
mass). Friction does not: a contact that slips adds to the stiffness the cycle sees (the
frequency) but, slipping, keeps only ``|f_t|^2 / (2 kt)`` in its spring, the same at every
larger amplitude, so ``dE/ds`` is smaller than ``w0^2 s`` and the decay faster than ``zeta w0``:
on a mass with a Jenkins contact in macroslip exactly by ``w0^2 / k`` (the stiffness without the
contact). :func:`decay_prediction` reads ``E`` from the mode's orbit (kinetic energy,
``q^T K q / 2`` and each contact's :meth:`~fesub.hbm.Friction3D.stored_energy` from its force
history, at the turning points of the observed signal, the two averaged; a
:class:`DecayPrediction`) and :meth:`RingDown.compare_prediction` sets a ring-down beside it.
The balance takes the periodic orbit's energy and dissipation for the decay's at the same
half-swing. The contacts of a decaying motion reach each amplitude from a larger one: on the bundled
bolted joint the decay held the orbit's energy at its turning points within 0.3 % but lost per
cycle -1.3 % to +2.0 % of the orbit's dissipation (user guide).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import ParameterError, check_count
from ..io import Result, summary_record
from .friction3d import Friction3D, force_history_3d
from .timeint import initial_from_hb, newmark

__all__ = ["DecayPrediction", "RingDown", "decay_prediction", "decay_rates", "ring_down", "swing",
           "turning_energy"]


def decay_rates(t, x):
    """Frequency and damping ratio of a free decay, half-swing by half-swing (module docstring).

    Parameters
    ----------
    t : (ns,) array
        Sample times (s), uniform.
    x : (ns,) array
        The observed signal (m, or any unit).

    Returns
    -------
    tc : (nc,) ndarray
        Time of each reading (s).
    amp : (nc,) ndarray
        Amplitude (half-swing, unit of ``x``).
    w : (nc,) ndarray
        Frequency (rad/s).
    zeta : (nc,) ndarray
        Damping ratio (-).
    """
    t = np.asarray(t, float)
    x = np.asarray(x, float)
    if t.ndim != 1 or t.shape != x.shape or t.size < 8:
        raise ParameterError("t and x must be 1-D arrays of the same length (>= 8)")
    dt = t[1] - t[0]
    j = np.flatnonzero((x[1:-1] - x[:-2]) * (x[2:] - x[1:-1]) < 0) + 1
    a, b, c = x[j - 1], x[j], x[j + 1]
    den = a - 2 * b + c
    d = np.where(den != 0, 0.5 * (a - c) / np.where(den != 0, den, 1.0), 0.0)
    te = t[j] + d * dt
    xe = b - 0.25 * (a - c) * d
    s = 0.5 * np.abs(np.diff(xe))
    ts = 0.5 * (te[1:] + te[:-1])
    if s.size < 4:
        raise ParameterError("the signal holds fewer than four half-swings")
    m = np.arange(1, s.size - 2)
    w = 2 * math.pi / (ts[m + 1] - ts[m - 1])
    sigma = np.log(s[m] / s[m + 1]) / (ts[m + 1] - ts[m])
    return 0.5 * (ts[m] + ts[m + 1]), np.sqrt(s[m] * s[m + 1]), w, sigma / w


def swing(Q, n, nh, weights, nt=4096):
    """Half peak-to-peak (unit of the signal) of ``weights @ q(t)`` over one period of the
    harmonic coefficients ``Q`` (m, blocks of the n DOFs: cos 1, sin 1, ...; with the constant
    term the mean block first, which a half peak-to-peak does not see)."""
    tau = np.linspace(0.0, 2 * math.pi, nt, endpoint=False)
    Q = np.asarray(Q, float)
    Qm = Q[Q.size - 2 * nh * n:].reshape(2 * nh, n) @ weights     # a mean block first is skipped
    h = np.arange(1, nh + 1)[:, None]
    x = (Qm[0::2, None] * np.cos(h * tau) + Qm[1::2, None] * np.sin(h * tau)).sum(axis=0)
    return 0.5 * (x.max() - x.min())


def turning_energy(sys, Q, w, weights, *, nt: int = 512):
    """Mechanical energy of a harmonic-balance motion at the turning points of an observed
    signal (module docstring).

    Parameters
    ----------
    sys : HBSystem
        The system (its contacts :class:`~fesub.hbm.Friction3D`).
    Q : (N,) array
        Harmonic coefficients (m).
    w : float
        Frequency (rad/s).
    weights : (n,) array
        The observed signal ``x = weights @ q`` (unit of ``x`` per m).
    nt : int, optional
        Samples per period (default 512): the turning points are the samples where ``x`` is
        largest and smallest.

    Returns
    -------
    energy : float
        Kinetic energy, ``q^T K q / 2`` and the contacts' stored energy at the two turning
        points, averaged (J; from rest, the static loads' work taken off).
    swing : float
        Half peak-to-peak of ``x`` over the samples (unit of ``x``).
    action : float
        ``int_0^T q'^T M q' dt`` (J s): the mode's dissipation per cycle is ``2 zeta w0``
        times it.

    Notes
    -----
    The count takes each contact's full force, its mean included, as a system with the constant
    term does; in the decoupled scheme, which drops that mean, it is an estimate.
    """
    nt = check_count("nt (samples per period)", nt, 4 * sys.nh + 2)
    n, nh, h0 = sys.n, sys.nh, sys.h0
    Qm = np.asarray(Q, float).reshape(sys.m, n)
    weights = np.asarray(weights, float)
    h = np.arange(1, nh + 1)
    tau = 2 * math.pi * np.arange(nt) / nt
    cos, sin = np.cos(np.outer(tau, h)), np.sin(np.outer(tau, h))
    Qc, Qs = Qm[h0::2], Qm[h0 + 1::2]
    q = cos @ Qc + sin @ Qs + (Qm[0] if h0 else 0.0)
    x = q @ weights
    turn = np.array([np.argmax(x), np.argmin(x)])
    qt = q[turn]
    vt = w * ((-sin[turn] * h) @ Qc + (cos[turn] * h) @ Qs)
    E = 0.5 * (np.einsum("ti,ij,tj->t", vt, sys.M, vt) + np.einsum("ti,ij,tj->t", qt, sys.K, qt))
    for c, P in zip(sys.contacts, sys.P):
        el = c.element
        if not isinstance(el, Friction3D):
            raise ParameterError("the energy at the turning points needs each contact's stored "
                                 f"energy: Friction3D contacts only, got {type(el).__name__}")
        f = force_history_3d(el, P @ Q, nh, nt)[turn]
        E += el.stored_energy(f, qt @ np.atleast_2d(c.G)[2])
    kinetic = np.einsum("hi,ij,hj->h", Qc, sys.M, Qc) + np.einsum("hi,ij,hj->h", Qs, sys.M, Qs)
    action = math.pi * w * float(np.sum(h * h * kinetic))
    return float(E.mean()), 0.5 * float(x.max() - x.min()), action


def decay_prediction(sys, mode, weights, *, points=None, nt: int = 512) -> DecayPrediction:
    """The free decay a damped nonlinear mode predicts, by the energy balance between turning
    points (module docstring): ``sigma = W / (T s dE/ds)``, ``W = 2 zeta w0`` times the action
    and ``T = 2 pi / w0`` (for a linear mode ``sigma = zeta w0`` exactly).

    Parameters
    ----------
    sys : HBSystem
        The system the mode was computed on (its contacts :class:`~fesub.hbm.Friction3D`).
    mode : DNNM
        The mode (``Q`` in m, ``w0`` in rad/s).
    weights : (n,) array
        The observed signal ``x = weights @ q`` (unit of ``x`` per m).
    points : sequence of int, optional
        Indices of the mode's points to use, three or more (default all): the energy at the
        turning points costs one force history per contact and point.
    nt : int, optional
        Samples per period of :func:`turning_energy` (default 512).

    Returns
    -------
    DecayPrediction
        Frequency and damping ratio of the decay against the half-swing, increasing; ``dE/ds``
        by second-order differences along the mode.
    """
    idx = np.arange(len(mode.w0)) if points is None else np.asarray(points, int).ravel()
    if idx.size < 3 or idx.min(initial=0) < 0 or idx.max(initial=0) >= len(mode.w0):
        raise ParameterError(f"the prediction needs three points or more of the mode's "
                             f"{len(mode.w0)}, got {idx.tolist()}")
    weights = np.asarray(weights, float)
    E, S, act = np.array([turning_energy(sys, mode.Q[i], mode.w0[i], weights, nt=nt)
                          for i in idx]).T
    order = np.argsort(S)
    E, S, act, idx = E[order], S[order], act[order], idx[order]
    if np.any(np.diff(S) <= 0):
        raise ParameterError("the mode's half-swings must differ from point to point")
    w0 = np.asarray(mode.w0, float)[idx]
    wd = np.asarray(mode.damped_frequency, float)[idx]
    W = 2 * np.asarray(mode.zeta, float)[idx] * w0 * act
    # over the mode's period 2 pi / w0, whose dissipation W is: exact for a linear mode
    sigma = W * w0 / (2 * math.pi * S * np.gradient(E, S, edge_order=2))
    return DecayPrediction(S, wd, sigma / wd, np.asarray(mode.decay_rate, float)[idx] / wd, E, W,
                           weights)


@dataclass
class DecayPrediction(Result):
    """The free decay a damped nonlinear mode predicts (:func:`decay_prediction`).

    Saved files: dimensions ``point`` and ``dof``.

    Parameters
    ----------
    swing : (npts,) ndarray
        Half-swing of the observed signal (unit of the signal), increasing.
    w : (npts,) ndarray
        Frequency of the decay (rad/s): the mode's damped frequency.
    zeta : (npts,) ndarray
        Damping ratio of the decay, decay rate over ``w`` (-).
    zeta_mode : (npts,) ndarray
        The mode's own damping ratio read as a decay, ``decay_rate / damped_frequency`` (-).
    energy : (npts,) ndarray
        Energy held at the turning points (J).
    dissipation : (npts,) ndarray
        Energy dissipated per cycle, ``W`` (J).
    weights : (n,) ndarray
        The observed signal ``x = weights @ q``.
    """

    swing: np.ndarray
    w: np.ndarray
    zeta: np.ndarray
    zeta_mode: np.ndarray
    energy: np.ndarray
    dissipation: np.ndarray
    weights: np.ndarray

    kind = "decay-prediction"

    def to_xarray(self):
        import xarray as xr

        f = lambda v: np.asarray(v, float)
        pt = "point"
        return xr.Dataset(
            {"w": (pt, f(self.w), {"units": "rad/s", "long_name": "frequency of the decay"}),
             "zeta": (pt, f(self.zeta), {"units": "1", "long_name": "damping ratio of the decay"}),
             "zeta_mode": (pt, f(self.zeta_mode),
                           {"units": "1", "long_name": "the mode's damping ratio as a decay"}),
             "energy": (pt, f(self.energy),
                        {"units": "J", "long_name": "energy held at the turning points"}),
             "dissipation": (pt, f(self.dissipation),
                             {"units": "J", "long_name": "energy dissipated per cycle"}),
             "weights": ("dof", f(self.weights), {"units": "1",
                                                  "long_name": "observation x = weights @ q"})},
            {"swing": (pt, f(self.swing), {"units": "m", "long_name": "half-swing"})})

    @classmethod
    def from_xarray(cls, ds):
        return cls(*(ds[k].values.copy() for k in ("swing", "w", "zeta", "zeta_mode", "energy",
                                                   "dissipation", "weights")))

    def summary(self) -> dict:
        res = {"points": (len(self.swing), None)}
        if len(self.swing):
            gain = np.asarray(self.zeta) / np.asarray(self.zeta_mode) - 1
            res.update(swing_min=(float(self.swing[0]), "m"),
                       swing_max=(float(self.swing[-1]), "m"),
                       decay_over_mode_min=(float(gain.min()), "1"),
                       decay_over_mode_max=(float(gain.max()), "1"))
        return summary_record(self.kind, {}, res)


@dataclass
class RingDown(Result):
    """A free decay and its half-swing reading.

    Saved files: dimensions ``sample`` and ``reading``.

    Parameters
    ----------
    t : (ns,) ndarray
        Time (s).
    x : (ns,) ndarray
        The observed signal (m for a DOF; sqrt(kg) m for a modal coordinate ``phi^T M q``).
    tc : (nc,) ndarray
        Time of each reading (s).
    amp : (nc,) ndarray
        Half-swing amplitude (unit of ``x``).
    w : (nc,) ndarray
        Frequency (rad/s).
    zeta : (nc,) ndarray
        Damping ratio (-).
    weights : (n,) ndarray
        The observation ``x = weights @ q``.
    steps_per_period : int
        Time steps per period of the start frequency.
    """

    t: np.ndarray
    x: np.ndarray
    tc: np.ndarray
    amp: np.ndarray
    w: np.ndarray
    zeta: np.ndarray
    weights: np.ndarray
    steps_per_period: int

    kind = "ring-down"

    def to_xarray(self):
        import xarray as xr

        f = lambda v: np.asarray(v, float)
        return xr.Dataset(
            {"x": ("sample", f(self.x), {"units": "m", "long_name": "observed signal"}),
             "amp": ("reading", f(self.amp), {"units": "m", "long_name": "half-swing"}),
             "w": ("reading", f(self.w), {"units": "rad/s", "long_name": "frequency"}),
             "zeta": ("reading", f(self.zeta), {"units": "1", "long_name": "damping ratio"}),
             "weights": ("dof", f(self.weights), {"units": "1",
                                                  "long_name": "observation x = weights @ q"})},
            {"t": ("sample", f(self.t), {"units": "s", "long_name": "time"}),
             "tc": ("reading", f(self.tc), {"units": "s", "long_name": "time of the reading"})},
            attrs={"steps_per_period": int(self.steps_per_period)})

    @classmethod
    def from_xarray(cls, ds):
        return cls(*(ds[k].values.copy() for k in ("t", "x", "tc", "amp", "w", "zeta",
                                                   "weights")),
                   int(ds.attrs["steps_per_period"]))

    def summary(self) -> dict:
        res = {"readings": (len(self.tc), None), "steps_per_period": (self.steps_per_period, None)}
        if len(self.tc):
            res.update(w_first=(float(self.w[0]), "rad/s"), w_last=(float(self.w[-1]), "rad/s"),
                       zeta_first=(float(self.zeta[0]), "1"),
                       zeta_last=(float(self.zeta[-1]), "1"),
                       amp_first=(float(self.amp[0]), "m"), amp_last=(float(self.amp[-1]), "m"),
                       duration=(float(self.t[-1] - self.t[0]), "s"))
        return summary_record(self.kind, {}, res)

    def compare(self, mode, n: int, nh: int):
        """Relative differences of frequency and damping ratio against a damped nonlinear mode
        at the same half-swing of the same signal.

        Parameters
        ----------
        mode : DNNM
            The mode (its ``Q`` in m, ``w0`` in rad/s, ``zeta``).
        n, nh : int
            DOFs and harmonics of the system the mode was computed on.

        Returns
        -------
        dw, dzeta : (nc,) ndarray
            ``w / w_mode - 1`` and ``zeta / zeta_mode - 1`` at each reading (NaN outside the
            mode's range of half-swings), the mode read as a free decay: its
            :attr:`~fesub.hbm.DNNM.damped_frequency` and damping ratio
            ``decay_rate / damped_frequency`` (the definitions of the readings; they differ
            from the mode's ``w0`` and ``zeta`` by ``zeta^2 / 2``).
        """
        S = np.array([swing(q, n, nh, self.weights) for q in mode.Q])
        order = np.argsort(S)
        wd = np.asarray(mode.damped_frequency)
        return self._against(S[order], wd[order], (np.asarray(mode.decay_rate) / wd)[order])

    def _against(self, S, w, zeta):
        """``w / w_ref - 1`` and ``zeta / zeta_ref - 1`` at each reading, the reference
        (increasing half-swings ``S``) interpolated in log half-swing; NaN outside it."""
        ls, la = np.log(S), np.log(self.amp)
        inside = (la >= ls[0]) & (la <= ls[-1])
        return (np.where(inside, self.w / np.interp(la, ls, w) - 1, np.nan),
                np.where(inside, self.zeta / np.interp(la, ls, zeta) - 1, np.nan))

    def compare_prediction(self, prediction: DecayPrediction):
        """As :meth:`compare`, against the decay a mode predicts by its energy balance between
        turning points (:func:`decay_prediction` of the same observed signal).

        Returns
        -------
        dw, dzeta : (nc,) ndarray
            ``w / w_pred - 1`` and ``zeta / zeta_pred - 1`` at each reading (NaN outside the
            prediction's range of half-swings).
        """
        if np.shape(prediction.weights) != np.shape(self.weights) or not np.allclose(
                prediction.weights, self.weights, rtol=1e-12, atol=0.0):
            raise ParameterError("the prediction observes another signal than the ring-down "
                                 "(give decay_prediction the ring-down's weights)")
        return self._against(prediction.swing, prediction.w, prediction.zeta)


def ring_down(sys, mode, point: int, *, periods: int = 20, steps_per_period: int = 256,
              observe=None, progress: bool = False, hht: float = 0.0) -> RingDown:
    """Free decay of ``sys`` from a point of a damped nonlinear mode, read half-swing by half-swing.

    Parameters
    ----------
    sys : HBSystem
        The system the mode was computed on (its load is not used).
    mode : DNNM
        The mode (harmonic coefficients ``Q`` in m, frequency ``w0`` in rad/s).
    point : int
        Index of the mode's point to start from.
    periods : int, optional
        Periods of the start frequency integrated (>= 3); default 20.
    steps_per_period : int, optional
        Time steps per period of the start frequency (>= 8); default 256.
    observe : int or (n,) array, optional
        The observed signal: a DOF, or weights ``x = weights @ q`` (``phi^T M`` for a modal
        coordinate); default the system's monitor DOF.
    progress : bool, optional
        tqdm progress bar over the steps.
    hht : float, optional
        :func:`~fesub.hbm.newmark`'s numerical dissipation in [0, 1/3] (default 0: average
        acceleration). On stiff penalty contacts (contact modes ``w_c dt >> 1``) 0.3 damps
        their step-to-step alternation, filtering those modes out: on the coarse bolted
        joint's decay from 1.5e-5 the relative damping error against the dNNM moved by at
        most 0.09 from 512 to 2048 steps per period with 0.3, by up to 3 from 256 to 8192
        without it (not settled).

    Returns
    -------
    RingDown
        The signal and its readings (frequency in rad/s, damping ratio, half-swing).

    Raises
    ------
    ConvergenceError
        From :func:`~fesub.hbm.newmark`: a step's return mapping failed, or the contact laws
        created more energy than the start held (the step does not resolve the contacts'
        penalty modes; a :class:`~fesub.errors.StepWarning` comes first, from 1 % of it).
    """
    npts = len(mode.w0)
    if int(point) != point or not -npts <= point < npts:
        raise ParameterError(f"point must be an index of the mode's {npts} points, got {point!r}")
    periods = check_count("periods", periods, 3)
    n = sys.n
    if observe is None:
        weights = np.zeros(n)
        weights[sys.dof] = 1.0
    elif np.ndim(observe) == 0:
        weights = np.zeros(n)
        weights[check_count("observe (DOF)", observe, 0, n - 1)] = 1.0
    else:
        weights = np.asarray(observe, float)
        if weights.shape != (n,):
            raise ParameterError(f"observe must be a DOF or ({n},) weights")
    Q, w0 = mode.Q[point], float(mode.w0[point])
    q0, v0, finit = initial_from_hb(sys, Q, w0, nt=steps_per_period)
    res = newmark(sys, 0.0, w0, periods=periods, steps_per_period=steps_per_period, q0=q0,
                  v0=v0, contact_init=finit, record_periods=periods, progress=progress,
                  hht=hht)
    t = np.concatenate([[0.0], res.t])
    x = np.concatenate([[q0 @ weights], res.q @ weights])
    tc, amp, w, zeta = decay_rates(t, x)
    return RingDown(t, x, tc, amp, w, zeta, weights, int(steps_per_period))
