"""A small perturbation of the sliding state in the transient, and the poles it grows or decays with.

The eigenvalues of :mod:`fesub.contact.deformed` describe small motions about the quasi-static
sliding state. :func:`perturbation_response` measures them in the nonlinear transient itself: two
runs of :func:`fesub.contact.simulate` from the sliding state at a contact position, one with a
small displacement added (a mode shape, say), and their difference, which is the perturbation's
motion to first order in its size (the slow drift of the state along the path cancels out).
:func:`matrix_pencil` fits damped complex exponentials to that difference (the matrix-pencil
method: a Hankel matrix of the samples, its dominant right singular vectors, the shift between
their rows).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np

from ...errors import ModelError, ParameterError, check_count, check_positive
from .deformed import sliding_state

__all__ = ["translated", "PerturbationResponse", "perturbation_response", "matrix_pencil"]


def translated(system, shift: float):
    """A view of ``system`` with the slider moved rigidly by ``shift`` (m) along x: its slave
    starts at X_C + (shift, 0). The slider's stiffness does not see a rigid translation (the
    system checks that it translates freely along x), so a transient of the view is the original
    system's transient from the time shift / vx on, started at rest there."""
    out = copy.copy(system)
    out.X_C = system.X_C + np.array([float(shift), 0.0])
    return out


@dataclass(eq=False)
class PerturbationResponse:
    """Difference of a perturbed and an unperturbed transient from the sliding state at ``s`` (m).

    ``t`` (s); ``signals`` name -> difference (units of the transient signal: 'u_T_y' m, 'lambda'
    N, ...); ``base`` and ``perturbed``, the two :class:`TransientResult`; ``state``, the
    :class:`SlidingState` both start from; ``amplitude`` (m), the largest displacement of the
    perturbation."""

    s: float
    t: np.ndarray
    signals: dict
    base: object
    perturbed: object
    state: object
    amplitude: float


def perturbation_response(system, s: float, mu: float, shape, *, vx: float, duration: float,
                          amplitude: float = 1e-12, fs_out: float = 200_000.0, geometry: str = "deformed",
                          formulation: str = "modal", state=None) -> PerturbationResponse:
    """Transients from the sliding state at ``s`` (m) with and without a perturbation.

    Parameters
    ----------
    system : SlidingContactSystem.
    s, mu, vx : contact position (m), friction coefficient, sliding velocity (m/s).
    shape : (n_dofs,) real displacement over [q1_free; q2] (a mode shape's real part, say),
        scaled so that its largest entry is ``amplitude`` (m).
    duration : length of both runs (s); ``fs_out`` their output rate (Hz).
    geometry : 'deformed' (rows from the deformed positions, the state of
        :func:`fesub.contact.deformed.sliding_state`) or 'undeformed' (rows from the rigid motion,
        the state of ``system.static_state(..., geometry='undeformed')``).
    formulation : 'modal' or 'dense', as in :func:`fesub.contact.simulate`.

    Returns
    -------
    PerturbationResponse. A run that stops early (stick, detachment) raises :class:`ModelError`
    (the perturbation is too large for the sliding velocity).
    """
    from ..sliding.transient import simulate

    amplitude = check_positive("amplitude (m)", amplitude)
    if geometry not in ("deformed", "undeformed"):
        raise ParameterError(f"geometry must be 'deformed' or 'undeformed', got {geometry!r}")
    shape = np.asarray(shape, float)
    n1 = system.K1.shape[0]
    if shape.shape != (n1 + system.K2.shape[0],) or not np.all(np.isfinite(shape)) or not shape.any():
        raise ParameterError(f"shape must be a finite non-zero ({n1 + system.K2.shape[0]},) displacement")
    st = state if state is not None else sliding_state(system, s, mu, vx=vx)
    view = translated(system, st.shift)
    if geometry == "deformed":
        w1, q2 = st.split(system)
    else:
        w1, q2, _ = view.static_state(mu, vx, 1.0 if vx >= 0 else -1.0, geometry="undeformed")
    du = amplitude * shape / np.abs(shape).max()
    runs = []
    for init in ((w1, q2), (w1 + du[:n1], q2 + du[n1:])):
        r = simulate(view, mu=mu, duration=duration, vx=vx, fs_out=fs_out, initial=init, geometry=geometry,
                     formulation=formulation)
        if r.status != "completed":
            raise ModelError(f"the transient from s = {s} m stopped ({r.status}) at {r.stop_time:.4g} s")
        runs.append(r)
    base, pert = runs
    diff = {k: pert.signals[k] - base.signals[k] for k in base.signals
            if k not in ("t", "segment") and base.signals[k].dtype.kind == "f"}
    return PerturbationResponse(float(s), base.signals["t"].copy(), diff, base, pert, st, float(amplitude))


def matrix_pencil(signals, dt: float, order: int, pencil: int | None = None):
    """Poles (1/s) and amplitudes of damped complex exponentials fitted to sampled signals.

    Parameters
    ----------
    signals : (n_samples,) or (n_channels, n_samples) real samples, every channel the same sum of
        exponentials with its own amplitudes (scale the channels alike).
    dt : sampling interval (s).
    order : number of exponentials (a real oscillation is two: s and its conjugate).
    pencil : pencil parameter L (default n_samples // 2).

    Returns
    -------
    poles : (order,) complex (1/s): growth rate + j angular frequency.
    amplitudes : (n_channels, order) complex amplitudes at the first sample.
    """
    y = np.atleast_2d(np.asarray(signals, float))
    dt = check_positive("dt (s)", dt)
    n = y.shape[1]
    order = check_count("order", order, lo=1)
    L = n // 2 if pencil is None else check_count("pencil", pencil, lo=order, hi=n - order)
    if n - L < order or L < order:
        raise ParameterError(f"{n} samples are too few for {order} exponentials")
    H = np.vstack([np.lib.stride_tricks.sliding_window_view(ch, L + 1) for ch in y])
    _, _, Vh = np.linalg.svd(H, full_matrices=False)
    V = Vh[:order].conj().T
    z = np.linalg.eigvals(np.linalg.pinv(V[:-1]) @ V[1:])
    poles = np.log(z.astype(complex)) / dt
    Z = z[None, :] ** np.arange(n)[:, None]
    amps = np.linalg.lstsq(Z, y.T, rcond=None)[0].T
    return poles, amps
