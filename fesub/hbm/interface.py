"""The state of a 3D friction interface over one period of a harmonic-balance solution.

For points of a backbone (or any solution ``Q`` of an :class:`~fesub.hbm.system.HBSystem` whose
contacts are :class:`~fesub.hbm.friction3d.Friction3D`), :func:`interface_states` marches each
contact's steady state over one period (the same return map as the harmonic balance,
:func:`~fesub.hbm.friction3d.force_history_3d`) and reduces it to what an engineer maps over
the interface: the normal pressure (mean and peak over the period, Pa), the slip amplitude
(half the extent of the slider's path ``u_t - f_t / kt``, m), the fraction of the period the
contact is open, and the energy it dissipates per cycle (J). :class:`InterfaceStates` holds
them for several points (save/``fesub.load``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ModelError, ParameterError
from ..io import Result, summary_record
from .fourier import basis
from .friction3d import Friction3D, force_history_3d

__all__ = ["InterfaceStates", "interface_states"]


@dataclass
class InterfaceStates(Result):
    """Interface maps at a few points of a backbone.

    Saved files: dimensions ``point`` and ``contact``; ``xy`` has a ``plane`` (2) dimension.

    Parameters
    ----------
    a : (npts,) ndarray
        The points' amplitudes (the backbone's own measure, e.g. the dNNM's modal amplitude,
        sqrt(kg) m).
    w : (npts,) ndarray
        Their frequencies (rad/s).
    amplitude : (npts,) ndarray
        Their physical amplitudes (m), as the caller measures them (e.g. a tip displacement).
    xy : (ne, 2) ndarray
        Contact positions on the interface (m).
    area : (ne,) ndarray
        Tributary areas (m^2).
    pressure_mean, pressure_max : (npts, ne) ndarray
        Normal force over the area, mean and largest over the period (Pa).
    slip : (npts, ne) ndarray
        Slip amplitude (m): half the diagonal of the box bounding the slider's path
        ``u_t - f_t / kt`` in the tangent plane while the contact carries load (0 for a contact
        that sticks or stays open).
    open_fraction : (npts, ne) ndarray
        Fraction of the period the contact carries no normal load (-).
    dissipation : (npts, ne) ndarray
        Energy dissipated per cycle (J): the work of the contact force over the period.
    """

    a: np.ndarray
    w: np.ndarray
    amplitude: np.ndarray
    xy: np.ndarray
    area: np.ndarray
    pressure_mean: np.ndarray
    pressure_max: np.ndarray
    slip: np.ndarray
    open_fraction: np.ndarray
    dissipation: np.ndarray

    kind = "interface-states"

    def to_xarray(self):
        import xarray as xr

        pc = ("point", "contact")

        def v(dims, x, units, name):
            return (dims, np.asarray(x, float), {"units": units, "long_name": name})

        return xr.Dataset({
            "a": v("point", self.a, "sqrt(kg) m", "amplitude of the backbone point"),
            "w": v("point", self.w, "rad/s", "frequency"),
            "amplitude": v("point", self.amplitude, "m", "physical amplitude"),
            "xy": v(("contact", "plane"), self.xy, "m", "contact position"),
            "area": v("contact", self.area, "m^2", "tributary area"),
            "pressure_mean": v(pc, self.pressure_mean, "Pa", "mean normal pressure"),
            "pressure_max": v(pc, self.pressure_max, "Pa", "largest normal pressure"),
            "slip": v(pc, self.slip, "m", "slip amplitude"),
            "open_fraction": v(pc, self.open_fraction, "1", "fraction of the period open"),
            "dissipation": v(pc, self.dissipation, "J", "energy dissipated per cycle")})

    @classmethod
    def from_xarray(cls, ds):
        return cls(*(ds[k].values.copy() for k in (
            "a", "w", "amplitude", "xy", "area", "pressure_mean", "pressure_max", "slip",
            "open_fraction", "dissipation")))

    def summary(self) -> dict:
        res = {"points": (len(self.a), None), "frequency": (self.w / (2 * np.pi), "Hz"),
               "amplitude": (self.amplitude, "m"),
               "slipping_share": ((self.slip > 0).mean(axis=1), "1"),
               "largest_slip": (self.slip.max(axis=1), "m"),
               "largest_pressure": (self.pressure_max.max(axis=1), "Pa"),
               "dissipation": (self.dissipation.sum(axis=1), "J")}
        return summary_record(self.kind, {"contacts": (len(self.area), None)}, res)


def interface_states(sys, Q, w, a, amplitude, xy, area, *, nt: int = 512,
                     slip_tol: float = 1e-12) -> InterfaceStates:
    """Pressure, slip, opening and dissipation of every contact at the solutions ``Q``.

    Parameters
    ----------
    sys : HBSystem
        The system the solutions belong to (every contact a :class:`Friction3D`), with or
        without the constant term (the mean of each relative displacement then moves the
        contact's mean pressure and slider; without it the static load is ``n0`` alone, the
        decoupled scheme).
    Q : (npts, N) array
        Harmonic coefficients (m).
    w, a, amplitude : (npts,) arrays
        Frequency (rad/s), the backbone's amplitude and a physical amplitude (m) of each point,
        stored with the maps.
    xy : (ne, 2) array
        Contact positions (m).
    area : (ne,) array
        Tributary areas (m^2), > 0.
    nt : int
        Samples per period (-).
    slip_tol : float
        Slip amplitudes below ``slip_tol`` times the contact's elastic reach ``mu N_max / kt``
        are reported as 0 (rounding of ``u_t - f_t / kt``).

    Returns
    -------
    InterfaceStates
    """
    els = [c.element for c in sys.contacts]
    if not els or not all(isinstance(e, Friction3D) for e in els):
        raise ModelError("interface_states needs a system whose contacts are all Friction3D")
    Q = np.atleast_2d(np.asarray(Q, float))
    ne, nh = len(els), sys.nh
    area = np.asarray(area, float)
    xy = np.asarray(xy, float)
    if area.shape != (ne,) or np.any(area <= 0) or xy.shape != (ne, 2):
        raise ParameterError(f"area must be {ne} positive values and xy of shape ({ne}, 2)")
    tau = 2 * np.pi * np.arange(nt) / nt
    c0 = bool(getattr(sys, "constant", False))
    B = basis(nh, tau, constant=c0)                          # (nt, 2 nh (+ 1))
    Bd = basis(nh, tau, d=1, constant=c0)                    # d/dtau
    m = B.shape[1]
    out = {k: np.zeros((len(Q), ne)) for k in ("pm", "px", "slip", "open", "diss")}
    for j, q in enumerate(Q):
        P = sys.local(q)
        for i, (el, p) in enumerate(zip(els, P)):
            p = np.asarray(p, float)
            if p.size != 3 * m:
                raise ModelError(f"contact {i}: {p.size} local coefficients, expected {3 * m} "
                                 f"(a system {'with' if c0 else 'without'} a constant term)")
            f = force_history_3d(el, p, nh, nt)              # (nt, 3) N
            u = np.stack([B @ p[c * m:(c + 1) * m] for c in range(3)], axis=1)
            du = np.stack([Bd @ p[c * m:(c + 1) * m] for c in range(3)], axis=1)
            fn = f[:, 2]
            out["pm"][j, i] = fn.mean() / area[i]
            out["px"][j, i] = fn.max() / area[i]
            out["open"][j, i] = np.mean(fn <= 0.0)
            closed = fn > 0.0
            s = 0.0
            if np.any(closed):        # the slider's path while the contact carries load
                slider = u[closed, :2] - f[closed, :2] / el.kt
                s = float(np.hypot(*(0.5 * np.ptp(slider, axis=0))))
            reach = el.mu * max(fn.max(), 0.0) / el.kt
            out["slip"][j, i] = s if s > slip_tol * max(reach, 1e-300) else 0.0
            # work of the force on the structure over the period (dissipated, >= 0): the
            # contact force acts on G q with +f, so the structure loses f . du
            out["diss"][j, i] = float(np.sum(f * du) * (2 * np.pi / nt))
    return InterfaceStates(np.asarray(a, float), np.asarray(w, float),
                           np.asarray(amplitude, float), xy, area, out["pm"], out["px"],
                           out["slip"], out["open"], out["diss"])
