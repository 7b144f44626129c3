"""Pieces shared by the result classes of :mod:`fesub.nonsmooth`: units, state vectors stored as
positions and velocities, continuation branches inside a dataset.

Units: the model is written in non-dimensional form (:mod:`.system`); with the reference scales of
:meth:`~fesub.nonsmooth.system.FreePlayParams.from_dimensional` at their defaults (``l_r = 1 m``,
``Omega_r = 1 rad/s``, ``m_r = 1 kg``) its numbers are SI numbers, and the results carry those SI
units: displacement m, velocity m/s, time s, forcing frequency rad/s, force N.

A state ``[x1, y1, x2, y2]`` mixes metres and metres per second, so it is stored as two variables
with one unit each: ``NAME_position`` (``[x1, x2]``, m) and ``NAME_velocity`` (``[y1, y2]``, m/s)
along the dimension ``mass`` (1, 2). :func:`join_state` interleaves them back exactly.
"""

from __future__ import annotations

import numpy as np

from ..continuation import Branch, Event
from .system import PARAM_UNITS

POSITION, VELOCITY, FREQUENCY, TIME = "m", "m/s", "rad/s", "s"
STATE_UNITS = "state [x1, y1, x2, y2] in [m, m/s, m, m/s]"
MASS_COORD = ("mass", np.array([1, 2]), {"units": "1", "long_name": "mass number"})


def var(dims, data, units, long_name=None):
    """An :class:`xarray.Variable` with its unit (and a long name when given)."""
    import xarray as xr

    attrs = {"units": units}
    if long_name:
        attrs["long_name"] = long_name
    return xr.Variable(dims, data, attrs)


def split_state(name: str, arr, dims: tuple, what: str = "state") -> dict:
    """``{NAME_position, NAME_velocity}`` variables of a state array (last axis ``[x1, y1, x2,
    y2]``) on ``dims + ('mass',)``."""
    arr = np.asarray(arr, float)
    d = tuple(dims) + ("mass",)
    return {f"{name}_position": var(d, np.ascontiguousarray(arr[..., 0::2]), POSITION,
                                    f"{what}: displacement x1, x2"),
            f"{name}_velocity": var(d, np.ascontiguousarray(arr[..., 1::2]), VELOCITY,
                                    f"{what}: velocity y1, y2")}


def join_state(ds, name: str) -> np.ndarray:
    """Inverse of :func:`split_state`: the ``[x1, y1, x2, y2]`` array (exact)."""
    pos = np.asarray(ds[f"{name}_position"].values, float)
    vel = np.asarray(ds[f"{name}_velocity"].values, float)
    out = np.empty(pos.shape[:-1] + (4,))
    out[..., 0::2] = pos
    out[..., 1::2] = vel
    return out


def params_attrs(params: dict) -> dict:
    """Model parameters as ``{name: value}`` plus ``{name}_units`` for a dataset's attributes."""
    out = {}
    for k, v in params.items():
        out[f"param_{k}"] = float(v)
        out[f"param_{k}_units"] = PARAM_UNITS.get(k, "1")
    return out


# ------------------------------------------------------------------------- continuation branches
def branch_vars(br: Branch, dim: str) -> tuple[dict, dict]:
    """Variables and attributes holding a :class:`~fesub.continuation.Branch` apart from its
    states ``x`` and parameter ``lam`` (which the caller stores with their units)."""
    n = len(br.lam)
    data = {"tangent": var((dim, "tangent_component"), np.asarray(br.tangent, float), "1",
                           "unit tangent in the continuation driver's scaled variables"),
            "newton_iters": var((dim,), np.asarray(
                np.zeros(n, int) if br.newton_iters is None else br.newton_iters, np.int64), "1",
                "corrector iterations of the point")}
    if br.stable is not None:
        data["stable"] = var((dim,), np.asarray(br.stable, np.int8), "1",
                             "1 = stable, 0 = unstable")
    events = [{"kind": e.kind, "index": int(e.index), "lam": float(e.lam),
               "x": np.asarray(e.x, float).tolist(), "info": e.info} for e in br.events]
    attrs = {"stop_reason": br.stop_reason, "events": events, "has_stable": br.stable is not None,
             "has_newton_iters": br.newton_iters is not None, "stop_info": dict(br.stop_info)}
    return data, attrs


def branch_from(ds, x, lam) -> Branch:
    """The :class:`~fesub.continuation.Branch` stored by :func:`branch_vars` (exact)."""
    a = ds.attrs
    events = [Event(e["kind"], int(e["index"]), np.asarray(e["x"], float), e["lam"], e["info"])
              for e in a.get("events", [])]
    stable = np.asarray(ds["stable"].values).astype(bool) if a.get("has_stable") else None
    iters = np.asarray(ds["newton_iters"].values) if a.get("has_newton_iters", True) else None
    return Branch(x=np.asarray(x, float), lam=np.asarray(lam, float),
                  tangent=np.asarray(ds["tangent"].values, float), stable=stable, events=events,
                  stop_reason=a["stop_reason"], newton_iters=iters,
                  stop_info=dict(a.get("stop_info", {})))
