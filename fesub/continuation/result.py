"""The result of a continuation: :class:`Branch` (points, tangents, stability flags, events and
why it stopped) and :class:`Event` (a located special point), on the :mod:`fesub.io` protocol."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..io import Result, summary_record

__all__ = ["Branch", "Event"]


@dataclass
class Event:
    """A located special point between ``Branch`` points ``index`` and ``index + 1``.

    Parameters
    ----------
    kind : str
        ``'fold'`` (turning point in ``lam``), ``'branch_point'`` (the determinant of the
        augmented Jacobian changed sign), ``'kink'``, ``'stability'`` or the name of a user
        test function.
    index : int
        Index of the accepted branch point just before the event.
    x : numpy.ndarray
        State at the event (in the units of the problem, the branch's ``x_unit``).
    lam : float
        Continuation parameter at the event (the branch's ``lam_unit``).
    info : dict
        Extra data: ``'tangent'`` (fold, scaled unit tangent, dimensionless),
        ``'singular_values'`` and ``'kernel'`` (branch point, scaled variables), ``'scale'``
        (branch point, the scaling of the unknowns, units of x then lam), ``'g'`` (user test
        function), ``'angle_deg'`` (kink, deg), ...
    """

    kind: str
    index: int
    x: np.ndarray
    lam: float
    info: dict = field(default_factory=dict)


@dataclass
class Branch(Result):
    """A continued solution branch.

    Parameters
    ----------
    x : numpy.ndarray, shape (npts, n)
        Converged states (in the units of the problem, ``x_unit``).
    lam : numpy.ndarray, shape (npts,)
        Continuation parameter (``lam_unit``).
    tangent : numpy.ndarray, shape (npts, n + 1)
        Unit tangents (x part, lam part) in the *scaled* variables used by the driver
        (dimensionless).
    stable : numpy.ndarray of bool or None
        Stability flags (only with a ``stability`` callback).
    events : list of Event
        Located special points.
    stop_reason : str
        ``'lam_range'``, ``'max_steps'``, ``'corrector_failed at lam=... (...)'``, ``'user'`` or
        ``'interrupted'`` (KeyboardInterrupt: the points accepted before it).
    newton_iters : numpy.ndarray, shape (npts,)
        Corrector iterations of each accepted point (0 for the start point).
    x_unit, lam_unit : str
        Units of ``x`` and ``lam`` recorded in saved files (``"1"``: dimensionless or as the
        problem defines them; a caller that knows them sets them).
    stop_info : dict
        Why and where the branch stopped, as data: ``'code'`` is ``'max_steps'`` (the step
        budget is spent), ``'lam_range'`` (the parameter reached a bound), ``'min_step'`` (a
        step failed at ``ds_min``), ``'user'`` (the callback stopped it) or ``'interrupted'``;
        ``'lam'`` the parameter of the last point (``lam_unit``), ``'ds'`` the step then
        (scaled, dimensionless). A ``'min_step'`` stop adds ``'cause'``: ``'not_converged'``
        (with ``'residual'``, the ``max |R|`` the corrector reached, in the units of ``R``,
        NaN or inf when the residual was not finite or raised, and ``'iterations'``),
        ``'singular_jacobian'`` or ``'tangent_turned'`` (with ``'angle_deg'``). Empty for a
        branch built by hand or read from a file that predates it.
    """

    x: np.ndarray
    lam: np.ndarray
    tangent: np.ndarray
    stable: np.ndarray | None
    events: list
    stop_reason: str
    newton_iters: np.ndarray | None = None
    x_unit: str = "1"
    lam_unit: str = "1"
    stop_info: dict = field(default_factory=dict)

    kind = "branch"

    def __len__(self) -> int:
        return len(self.lam)

    @property
    def status(self) -> str:
        """``'interrupted'`` when a KeyboardInterrupt stopped the branch, else ``'finished'``."""
        return "interrupted" if self.stop_reason == "interrupted" else "finished"

    def events_of(self, kind: str) -> list:
        """Events of one kind."""
        return [e for e in self.events if e.kind == kind]

    def to_xarray(self):
        """Dataset with dims ``point``, ``state``, ``tangent_component`` and ``event``.

        Events are stored as ``event_x``/``event_lam``/``event_index`` and the attributes
        ``event_kinds`` and ``event_info`` (arrays in the info kept as arrays)."""
        import xarray as xr

        n = self.x.shape[1] if self.x.ndim == 2 else 0
        xu, lu = self.x_unit, self.lam_unit
        v = {"x": (("point", "state"), np.asarray(self.x, float),
                   {"units": xu, "long_name": "converged state"}),
             "lam": ("point", np.asarray(self.lam, float),
                     {"units": lu, "long_name": "continuation parameter"}),
             "tangent": (("point", "tangent_component"), np.asarray(self.tangent, float),
                         {"units": "1", "long_name": "unit tangent in the scaled variables"}),
             "event_x": (("event", "state"),
                         np.array([np.asarray(e.x, float) for e in self.events]).reshape(
                             len(self.events), n), {"units": xu}),
             "event_lam": ("event", np.array([float(e.lam) for e in self.events], float),
                           {"units": lu}),
             "event_index": ("event", np.array([int(e.index) for e in self.events], np.int64),
                             {"units": "1", "long_name": "branch point just before the event"})}
        if self.stable is not None:
            v["stable"] = ("point", np.asarray(self.stable, bool), {"units": "1"})
        if self.newton_iters is not None:
            v["newton_iters"] = ("point", np.asarray(self.newton_iters), {"units": "1"})
        return xr.Dataset(v, attrs={
            "stop_reason": self.stop_reason, "stop_info": dict(self.stop_info),
            "x_unit": xu, "lam_unit": lu,
            "event_kinds": [e.kind for e in self.events],
            "event_info": [_encode_info(e.info) for e in self.events]})

    @classmethod
    def from_xarray(cls, ds) -> "Branch":
        a = ds.attrs
        events = [Event(k, int(i), x.copy(), float(lm), _decode_info(info))
                  for k, i, x, lm, info in zip(a["event_kinds"], ds["event_index"].values,
                                               ds["event_x"].values, ds["event_lam"].values,
                                               a["event_info"])]
        return cls(x=ds["x"].values.copy(), lam=ds["lam"].values.copy(),
                   tangent=ds["tangent"].values.copy(),
                   stable=ds["stable"].values.copy() if "stable" in ds else None,
                   events=events, stop_reason=a["stop_reason"],
                   newton_iters=ds["newton_iters"].values.copy() if "newton_iters" in ds
                   else None, x_unit=a["x_unit"], lam_unit=a["lam_unit"],
                   stop_info=dict(a.get("stop_info", {})))

    def summary(self) -> dict:
        lam = np.asarray(self.lam, float)
        res = {"points": (len(lam), None), "stop_reason": (self.stop_reason, None),
               "events": (len(self.events), None)}
        if len(lam):
            res["lam_start"] = (float(lam[0]), self.lam_unit)
            res["lam_end"] = (float(lam[-1]), self.lam_unit)
        kinds = sorted({e.kind for e in self.events})
        return summary_record(self.kind, {}, res, details={
            "events_by_kind": {k: len(self.events_of(k)) for k in kinds},
            "stop_info": dict(self.stop_info)})


_ARRAY_KEY = "__ndarray__"


def _encode_info(info: dict) -> dict:
    """Event info as JSON values; an array becomes ``{"__ndarray__": values, "dtype": ...}``."""
    return {k: ({_ARRAY_KEY: v.tolist(), "dtype": v.dtype.str} if isinstance(v, np.ndarray)
                else v) for k, v in info.items()}


def _decode_info(info: dict) -> dict:
    return {k: (np.array(v[_ARRAY_KEY], dtype=v["dtype"])
                if isinstance(v, dict) and _ARRAY_KEY in v else v) for k, v in info.items()}
