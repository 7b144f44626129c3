"""Results of the circular-contact study, each a :class:`fesub.io.Result` (``.nc`` files).

* :class:`ProfileCurves` -- force and torque profiles ``Q_eps``, ``T_eps`` of approximate models
  against the exact one, with their maximum errors over the slip directions;
* :class:`DirectionErrorMap` -- the error of each model's generalised friction over ``(phi, theta)``;
* :class:`CircleCurves` -- ``m(psi) = cos(psi) k(sin psi)`` on the invariant circle per model
  (its intersections with ``F/(mu m g)`` are the non-trivial limit directions);
* :class:`BifurcationValues` -- tangency, pitchfork and fold forces and the force-free stop
  direction per model;
* :class:`LimitDirectionDiagram` -- the limit directions against the force;
* :class:`LimitDirections` -- the limit directions of one system at one force.

The trajectory of a run is :class:`fesub.circular.sliding.Trajectory`. Forces are in N with the
system's mass ``m`` (kg), gravity ``g`` (m/s^2) and friction coefficient ``mu`` recorded, so
``F/(mu m g)`` is always at hand; dimensionless quantities have the unit ``"1"``.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import ParameterError
from ..io import Result, summary_record
from .dynamics import (LimitDirection, ReducedContactSystem, bifurcation_values,
                       find_limit_directions, limit_direction_diagram)
from .friction import FrictionModel

__all__ = ["ProfileCurves", "DirectionErrorMap", "CircleCurves", "BifurcationValues",
           "LimitDirectionDiagram", "LimitDirections", "profile_curves", "direction_error_map",
           "circle_curves", "bifurcation_table", "force_free_stop"]


def _xr():
    import xarray as xr

    return xr


def _labels(models) -> list:
    return [str(k) for k in models]


def _system_attrs(system: ReducedContactSystem) -> dict:
    """What a result records about the system it came from (units in ``units``)."""
    return {"body": system.kind, "model": system.model.name, "A": system.A, "b": system.b,
            "m": system.m, "g": system.g, "mu": system.model.mu, "rho": system.rho,
            "R": system.model.R}


_SYSTEM_UNITS = {"A": "1", "b": "1", "m": "kg", "g": "m/s^2", "mu": "1", "rho": "m", "R": "m"}


# ------------------------------------------------------------------------------- profiles
class ProfileCurves(Result):
    """Force and torque profiles of approximate models and of the exact model.

    Parameters
    ----------
    eps : ndarray
        Slip-spin ratios ``|u|/(R |omega|)`` (-).
    Q_exact, T_exact : ndarray
        Exact ``|Q_xy|/(mu P)`` and ``|T_z|/(mu P kappa)`` (-) at ``eps``.
    models : list of str
        Labels of the approximate models.
    Q, T : ndarray (n_models, n_eps)
        Their profiles (-).
    max_err_Q, max_err_T : ndarray (n_models,)
        Maximum errors of ``Q(theta)``, ``T(theta)`` (-) over ``n_theta`` meridian angles in
        [0, pi/2].
    law : str
        Pressure law.
    rho, R, kappa : float
        Length scale of ``w``, contact radius and torque radius (m).
    n_theta : int
        Number of angles of the maximum-error scan (-).
    descriptions : list of dict
        ``describe()`` of each model (coefficients of the harmonic models included).
    """

    kind = "circular-profiles"

    def __init__(self, eps, Q_exact, T_exact, models, Q, T, max_err_Q, max_err_T, law, rho, R,
                 kappa, n_theta, descriptions):
        self.eps, self.Q_exact, self.T_exact = eps, Q_exact, T_exact
        self.models, self.Q, self.T = list(models), Q, T
        self.max_err_Q, self.max_err_T = max_err_Q, max_err_T
        self.law, self.rho, self.R, self.kappa = law, rho, R, kappa
        self.n_theta, self.descriptions = int(n_theta), list(descriptions)

    def to_xarray(self):
        one = {"units": "1"}
        return _xr().Dataset(
            {"Q_exact": ("eps", self.Q_exact, {"units": "1", "long_name": "|Q_xy|/(mu P), exact"}),
             "T_exact": ("eps", self.T_exact, {"units": "1",
                                               "long_name": "|T_z|/(mu P kappa), exact"}),
             "Q": (("model", "eps"), self.Q, {"units": "1", "long_name": "|Q_xy|/(mu P)"}),
             "T": (("model", "eps"), self.T, {"units": "1", "long_name": "|T_z|/(mu P kappa)"}),
             "max_err_Q": ("model", self.max_err_Q, one),
             "max_err_T": ("model", self.max_err_T, one)},
            coords={"eps": ("eps", self.eps, {"units": "1", "long_name": "slip-spin ratio"}),
                    "model": ("model", self.models, {"units": "1", "long_name": "model label"})},
            attrs={"law": self.law, "rho": self.rho, "R": self.R, "kappa": self.kappa,
                   "n_theta": self.n_theta, "descriptions": self.descriptions,
                   "units": {"rho": "m", "R": "m", "kappa": "m"}})

    @classmethod
    def from_xarray(cls, ds):
        a = ds.attrs
        return cls(ds["eps"].values, ds["Q_exact"].values, ds["T_exact"].values,
                   [str(m) for m in ds["model"].values], ds["Q"].values, ds["T"].values,
                   ds["max_err_Q"].values, ds["max_err_T"].values, a["law"], a["rho"], a["R"],
                   a["kappa"], a["n_theta"], a["descriptions"])

    def max_errors(self) -> dict:
        """``{model: (max_err_Q, max_err_T)}`` (-)."""
        return {m: (float(q), float(t)) for m, q, t in zip(self.models, self.max_err_Q,
                                                           self.max_err_T)}

    def summary(self) -> dict:
        return summary_record(
            self.kind, {"law": (self.law, None), "rho": (self.rho, "m"), "R": (self.R, "m")},
            {f"max_err_Q[{m}]": (q, "1") for m, (q, _) in self.max_errors().items()}
            | {f"max_err_T[{m}]": (t, "1") for m, (_, t) in self.max_errors().items()})


def profile_curves(exact: FrictionModel, models: dict, eps, n_theta: int = 20001) -> ProfileCurves:
    """Profiles of ``models`` (label -> model) and of ``exact`` at ``eps``, with the maximum errors
    of ``Q(theta)``, ``T(theta)`` over ``n_theta`` angles in [0, pi/2].

    Parameters
    ----------
    exact : FrictionModel
        The reference model.
    models : dict of str to FrictionModel
        The approximate models.
    eps : array_like
        Slip-spin ratios ``|u|/(R |omega|)`` (-).
    n_theta : int
        Number of angles of the maximum-error scan (-).

    Returns
    -------
    ProfileCurves
        Dimensionless profiles and errors.
    """
    eps = np.asarray(eps, float)
    Qe, Te = exact.profile_eps(eps)
    th = np.linspace(0, math.pi / 2, int(n_theta))
    Qt, Tt = exact.profile_theta(th)
    Q, T, eq, et = [], [], [], []
    for m in models.values():
        q, t = m.profile_eps(eps)
        Q.append(q)
        T.append(t)
        qa, ta = m.profile_theta(th)
        eq.append(np.max(np.abs(qa - Qt)))
        et.append(np.max(np.abs(ta - Tt)))
    return ProfileCurves(eps, Qe, Te, _labels(models), np.array(Q).reshape(len(models), eps.size),
                         np.array(T).reshape(len(models), eps.size), np.array(eq, float),
                         np.array(et, float), exact.pressure.name, exact.rho, exact.R,
                         exact.kappa, n_theta, [m.describe() for m in models.values()])


# ------------------------------------------------------------------------------ error maps
class DirectionErrorMap(Result):
    """``|Q_model(w) - Q_exact(w)|/(mu P)`` (-) over slip directions
    ``w = (cos th cos ph, cos th sin ph, sin th)``, ``Q = (Q_x, Q_y, T_z/rho)``.

    Parameters
    ----------
    theta, phi : ndarray
        Angles (rad) of the grid.
    models : list of str
        Labels of the models.
    error : ndarray (n_models, n_theta, n_phi)
        The error (-) of each model on the grid.
    law : str
        Pressure law.
    rho, R : float
        Length scale and contact radius (m).
    """

    kind = "circular-error-map"

    def __init__(self, theta, phi, models, error, law, rho, R):
        self.theta, self.phi, self.models, self.error = theta, phi, list(models), error
        self.law, self.rho, self.R = law, rho, R

    def to_xarray(self):
        return _xr().Dataset(
            {"error": (("model", "theta", "phi"), self.error,
                       {"units": "1", "long_name": "|Q_model(w) - Q_exact(w)|/(mu P)"})},
            coords={"theta": ("theta", self.theta, {"units": "rad"}),
                    "phi": ("phi", self.phi, {"units": "rad"}),
                    "model": ("model", self.models, {"units": "1", "long_name": "model label"})},
            attrs={"law": self.law, "rho": self.rho, "R": self.R,
                   "units": {"rho": "m", "R": "m"}})

    @classmethod
    def from_xarray(cls, ds):
        a = ds.attrs
        return cls(ds["theta"].values, ds["phi"].values, [str(m) for m in ds["model"].values],
                   ds["error"].values, a["law"], a["rho"], a["R"])

    def max_error(self) -> dict:
        """``{model: max error}`` (-) over the grid."""
        return {m: float(e.max()) for m, e in zip(self.models, self.error)}

    def summary(self) -> dict:
        return summary_record(self.kind, {"law": (self.law, None), "rho": (self.rho, "m")},
                              {f"max_error[{m}]": (v, "1") for m, v in self.max_error().items()})


def direction_error_map(exact: FrictionModel, models: dict, n: int = 181) -> DirectionErrorMap:
    """Error maps of ``models`` against ``exact`` on ``n`` latitudes and ``2 n`` longitudes.

    Parameters
    ----------
    exact : FrictionModel
        The reference model.
    models : dict of str to FrictionModel
        The approximate models.
    n : int
        Number of latitudes (-).

    Returns
    -------
    DirectionErrorMap
        Errors ``|Q_model - Q_exact|/(mu P)`` (-) on the grid of angles (rad).
    """
    th = np.linspace(-math.pi / 2, math.pi / 2, n)
    ph = np.linspace(-math.pi, math.pi, 2 * n)
    PH, TH = np.meshgrid(ph, th)
    w = np.stack([np.cos(TH) * np.cos(PH), np.cos(TH) * np.sin(PH), np.sin(TH)], axis=-1)
    Qe = exact.Q_of_w(w)
    maps = []
    for lab, m in models.items():
        if abs(m.rho - exact.rho) > 1e-12 * exact.rho:
            raise ParameterError(f"model {lab!r} has rho = {m.rho}, the exact one {exact.rho}: "
                                 "a direction map needs one rho")
        maps.append(np.linalg.norm(m.Q_of_w(w) - Qe, axis=-1) / (exact.mu * exact.P))
    return DirectionErrorMap(th, ph, _labels(models), np.array(maps).reshape(len(models), n, 2 * n),
                             exact.pressure.name, exact.rho, exact.R)


# -------------------------------------------------------------------------- circle curves
class CircleCurves(Result):
    """``m(psi) = cos(psi) k(sin psi)`` (-) on the invariant circle ``w = (cos psi, 0, sin psi)``.

    A non-trivial limit direction at the force ``F`` is where ``m(psi) = F/(mu m g)``.

    Parameters
    ----------
    psi : ndarray
        Angle on the circle (rad).
    models : list of str
        Labels of the systems.
    m : ndarray (n_models, n_psi)
        ``m(psi)`` of each (-).
    levels : ndarray
        Force levels ``F/(mu m g)`` (-) drawn with the curves.
    body : str
        Body kind (``'disc'``, ``'ball'`` or ``'custom'``).
    """

    kind = "circular-circle-curves"

    def __init__(self, psi, models, m, levels, body):
        self.psi, self.models, self.m = psi, list(models), m
        self.levels, self.body = np.asarray(levels, float), body

    def to_xarray(self):
        return _xr().Dataset(
            {"m": (("model", "psi"), self.m,
                   {"units": "1", "long_name": "cos(psi) k(sin psi)"})},
            coords={"psi": ("psi", self.psi, {"units": "rad"}),
                    "model": ("model", self.models, {"units": "1", "long_name": "model label"})},
            attrs={"levels": self.levels, "body": self.body, "units": {"levels": "1"}})

    @classmethod
    def from_xarray(cls, ds):
        return cls(ds["psi"].values, [str(m) for m in ds["model"].values], ds["m"].values,
                   np.atleast_1d(np.asarray(ds.attrs["levels"], float)), ds.attrs["body"])

    def summary(self) -> dict:
        return summary_record(self.kind, {"body": (self.body, None),
                                          "levels": (self.levels, "1")}, {})


def circle_curves(systems: dict, levels=(), n: int = 1000) -> CircleCurves:
    """``m(psi)`` of each system (label -> :class:`ReducedContactSystem`) on ``n`` angles in
    [0, pi].

    Parameters
    ----------
    systems : dict of str to ReducedContactSystem
        The systems.
    levels : sequence of float
        Force levels ``F/(mu m g)`` (-) drawn with the curves.
    n : int
        Number of angles (-).

    Returns
    -------
    CircleCurves
        ``m(psi)`` (-) against ``psi`` (rad).
    """
    psi = np.linspace(0, math.pi, n)
    m = np.array([s.circle_m(psi) for s in systems.values()]).reshape(len(systems), n)
    body = next(iter(systems.values())).kind if systems else ""
    return CircleCurves(psi, _labels(systems), m, np.asarray(levels, float), body)


# --------------------------------------------------------------------- bifurcation values
def force_free_stop(system: ReducedContactSystem):
    """The direction in which the force-free body stops (``w1`` in (0, 1), ``w3 > 0``), and its
    slip-spin ratio: ``(w, eps)``, or ``(None, None)`` when there is none.

    Parameters
    ----------
    system : ReducedContactSystem
        The body (mass in kg, gravity in m/s^2) and its friction model; the stop is found at
        zero force, whatever the system's force.

    Returns
    -------
    (w, eps) : (numpy.ndarray (3,), float) or (None, None)
        Unit direction (-) and slip-spin ratio (-).
    """
    s = system.with_force(0.0)
    dirs = [d for d in find_limit_directions(s) if 1e-9 < d.w[0] < 1 - 1e-9 and d.w[2] > 0]
    if not dirs:
        return None, None
    w = dirs[0].w
    return w, float((s.rho / s.model.R) * w[0] / w[2])


class BifurcationValues(Result):
    """Tangency ``F_T``, pitchfork ``F_P`` and fold ``F_F`` forces (N) per model of one body, and
    the direction of the force-free stop.

    Parameters
    ----------
    models : list of str
        Labels of the models.
    F_T, F_P, F_F : ndarray (n_models,)
        Forces (N); ``F_F`` is NaN where the model has no fold.
    stop_w : ndarray (n_models, 3)
        Force-free stop direction (-), NaN where there is none.
    stop_eps : ndarray (n_models,)
        Its slip-spin ratio (-).
    folds : dict
        ``{model: [{'F': N, 'psi': rad, 'w3': -, 'w1': -}, ...]}``.
    system : dict
        Body and constants of the system (see ``units``): ``body``, ``A``, ``b``, ``m``, ``g``,
        ``mu``, ``rho``, ``R``, and ``lam`` for the ball.
    """

    kind = "circular-bifurcation-values"

    def __init__(self, models, F_T, F_P, F_F, stop_w, stop_eps, folds, system):
        self.models = list(models)
        self.F_T, self.F_P, self.F_F = F_T, F_P, F_F
        self.stop_w, self.stop_eps = stop_w, stop_eps
        self.folds, self.system = dict(folds), dict(system)

    @property
    def force_scale(self) -> float:
        """``mu m g`` (N)."""
        s = self.system
        return s["mu"] * s["m"] * s["g"]

    def row(self, model: str) -> dict:
        """One model's values: ``F_T``, ``F_P``, ``F_F`` (N, ``None`` without a fold), ``folds``,
        and ``force_free_stop`` (``{'w', 'eps'}`` or ``None``)."""
        i = self.models.index(model)
        ff = float(self.F_F[i])
        stop = None if np.isnan(self.stop_eps[i]) else {"w": self.stop_w[i].tolist(),
                                                         "eps": float(self.stop_eps[i])}
        return {"F_T": float(self.F_T[i]), "F_P": float(self.F_P[i]),
                "F_F": None if np.isnan(ff) else ff, "folds": self.folds[model],
                "force_free_stop": stop}

    def to_xarray(self):
        N = {"units": "N"}
        return _xr().Dataset(
            {"F_T": ("model", self.F_T, dict(N, long_name="tangency force")),
             "F_P": ("model", self.F_P, dict(N, long_name="pitchfork force")),
             "F_F": ("model", self.F_F, dict(N, long_name="largest fold force (NaN: no fold)")),
             "stop_w": (("model", "component"), self.stop_w,
                        {"units": "1", "long_name": "force-free stop direction"}),
             "stop_eps": ("model", self.stop_eps,
                          {"units": "1", "long_name": "slip-spin ratio of the force-free stop"})},
            coords={"model": ("model", self.models, {"units": "1", "long_name": "model label"}),
                    "component": ("component", np.arange(1, 4),
                                  {"units": "1", "long_name": "index of w"})},
            attrs={"folds": self.folds, "system": self.system,
                   "units": dict(_SYSTEM_UNITS, lam="1", folds="F: N, psi: rad, w1 and w3: 1")})

    @classmethod
    def from_xarray(cls, ds):
        return cls([str(m) for m in ds["model"].values], ds["F_T"].values, ds["F_P"].values,
                   ds["F_F"].values, ds["stop_w"].values, ds["stop_eps"].values,
                   ds.attrs["folds"], ds.attrs["system"])

    def summary(self) -> dict:
        params = {k: (v, _SYSTEM_UNITS.get(k, "1" if k == "lam" else None))
                  for k, v in self.system.items() if k != "model"}
        res = {}
        for m in self.models:
            r = self.row(m)
            for k in ("F_T", "F_P", "F_F"):
                res[f"{k}[{m}]"] = (r[k], "N")
        return summary_record(self.kind, params, res)


def bifurcation_table(systems: dict, **extra) -> BifurcationValues:
    """Bifurcation values and force-free stop of each system (label -> system); ``extra`` goes to
    the recorded system constants (``lam`` of the ball, say).

    Parameters
    ----------
    systems : dict of str to ReducedContactSystem
        The systems of one body (mass in kg, gravity in m/s^2).
    **extra
        Further system constants to record, in SI units (``lam`` of the ball, say).

    Returns
    -------
    BifurcationValues
        Forces in N, directions dimensionless.
    """
    F_T, F_P, F_F, stop_w, stop_eps, folds = [], [], [], [], [], {}
    for lab, s in systems.items():
        bv = bifurcation_values(s)
        F_T.append(bv["F_T"])
        F_P.append(bv["F_P"])
        F_F.append(np.nan if bv["F_F"] is None else bv["F_F"])
        folds[lab] = bv["folds"]
        w, eps = force_free_stop(s)
        stop_w.append(np.full(3, np.nan) if w is None else np.asarray(w, float))
        stop_eps.append(np.nan if eps is None else eps)
    sysd = _system_attrs(next(iter(systems.values())))
    del sysd["model"]
    sysd.update(extra)
    return BifurcationValues(_labels(systems), np.array(F_T, float), np.array(F_P, float),
                             np.array(F_F, float), np.array(stop_w, float).reshape(-1, 3),
                             np.array(stop_eps, float), folds, sysd)


# -------------------------------------------------------------------- limit directions
#: classes of limit directions: (kind, sphere type), in the order of the paper's colours
_CLASSES = [("repelling", "stable node"), ("attracting", "unstable node"),
            ("attracting", "saddle-stable-in-circle"), ("attracting", "saddle-unstable-in-circle"),
            ("attracting", "stable node"), ("repelling", "unstable node"),
            ("repelling", "saddle-stable-in-circle"), ("repelling", "saddle-unstable-in-circle")]


class LimitDirections(Result):
    """The limit directions of one system at one force (:func:`find_limit_directions`).

    Parameters
    ----------
    directions : list of LimitDirection
        The directions (unit vectors, -) and their rates (m/s^2).
    F : float
        Force (N).
    system : dict
        Body, model and constants of the system (units in the file's ``units`` attribute).
    """

    kind = "circular-limit-directions"

    def __init__(self, directions, F, system):
        self.directions, self.F, self.system = list(directions), float(F), dict(system)

    @classmethod
    def compute(cls, system: ReducedContactSystem) -> "LimitDirections":
        return cls(find_limit_directions(system), system.F, _system_attrs(system))

    @property
    def f(self) -> float:
        """``F/(mu m g)`` (-)."""
        s = self.system
        return self.F / (s["mu"] * s["m"] * s["g"])

    def to_xarray(self):
        d = self.directions
        col = lambda get: np.array([get(x) for x in d], float)  # noqa: E731
        W = np.array([x.w for x in d], float).reshape(len(d), 3)
        return _xr().Dataset(
            {"w": (("direction", "component"), W, {"units": "1", "long_name": "unit direction"}),
             "rdot": ("direction", col(lambda x: x.rdot),
                      {"units": "m/s^2", "long_name": "R*(w) = d|x_o|/dt on the direction"}),
             "lam_c": ("direction", col(lambda x: x.lam_c),
                       {"units": "m/s^2", "long_name": "in-circle eigenvalue in rescaled time"}),
             "lam_perp": ("direction", col(lambda x: x.lam_perp),
                          {"units": "m/s^2",
                           "long_name": "transversal eigenvalue in rescaled time"})},
            coords={"component": ("component", np.arange(1, 4),
                                  {"units": "1", "long_name": "index of w"})},
            attrs={"F": self.F, "system": self.system,
                   "kinds": [x.kind for x in d], "sphere_types": [x.sphere_type for x in d],
                   "colours": [x.colour for x in d],
                   "units": dict(_SYSTEM_UNITS, F="N")})

    @classmethod
    def from_xarray(cls, ds):
        a = ds.attrs
        W = ds["w"].values
        dirs = [LimitDirection(W[i], float(ds["rdot"].values[i]), float(ds["lam_c"].values[i]),
                               float(ds["lam_perp"].values[i]), a["kinds"][i],
                               a["sphere_types"][i], a["colours"][i]) for i in range(W.shape[0])]
        return cls(dirs, a["F"], a["system"])

    def summary(self) -> dict:
        s = self.system
        return summary_record(
            self.kind, {"F": (self.F, "N"), "body": (s["body"], None), "model": (s["model"], None)},
            {"directions": (len(self.directions), None),
             "attracting": (sum(d.kind == "attracting" for d in self.directions), None)},
            details={"directions": [d.as_dict() for d in self.directions]})


# ------------------------------------------------------------- limit-direction diagram
class LimitDirectionDiagram(Result):
    """Limit directions on the invariant circle against the force.

    Parameters
    ----------
    F : ndarray
        Force (N) of each point.
    psi : ndarray
        Angle of the limit direction on the circle (rad).
    w3 : ndarray
        Its third component (-).
    rdot : ndarray
        ``R*`` (m/s^2): < 0 attracting.
    colour : ndarray of str
        Colour of the class of each point (the paper's code, see
        :data:`fesub.circular.dynamics.COLOURS`).
    F_grid : ndarray
        Forces scanned (N).
    values : dict
        ``F_T``, ``F_P``, ``F_F`` (N; ``F_F`` None without a fold).
    system : dict
        Body, model and constants of the system (SI units, see the file's ``units``).
    status : str
        ``'complete'`` or ``'interrupted'`` (then the points of the forces scanned so far).
    """

    kind = "circular-limit-direction-diagram"

    def __init__(self, F, psi, w3, rdot, colour, F_grid, values, system, status="complete"):
        self.F, self.psi, self.w3, self.rdot = F, psi, w3, rdot
        self.colour = np.asarray(colour, dtype=str)
        self.F_grid, self.values, self.system = F_grid, dict(values), dict(system)
        self.status = status

    @classmethod
    def compute(cls, system: ReducedContactSystem, F_grid) -> "LimitDirectionDiagram":
        """Scan ``F_grid`` (N); a KeyboardInterrupt returns the forces done, ``'interrupted'``."""
        F_grid = np.asarray(F_grid, float)
        rows, status = [], "complete"
        try:
            for F in F_grid:
                bd = limit_direction_diagram(system, np.array([F]))
                rows.append(bd)
        except KeyboardInterrupt:
            status = "interrupted"
        cat = {k: np.concatenate([r[k] for r in rows]) if rows else np.zeros(0)
               for k in ("F", "psi", "w3", "rdot", "colour")}
        bv = bifurcation_values(system)
        return cls(cat["F"].astype(float), cat["psi"].astype(float), cat["w3"].astype(float),
                   cat["rdot"].astype(float), cat["colour"].astype(str), F_grid,
                   {"F_T": bv["F_T"], "F_P": bv["F_P"], "F_F": bv["F_F"]},
                   _system_attrs(system), status)

    @property
    def force_scale(self) -> float:
        """``mu m g`` (N)."""
        s = self.system
        return s["mu"] * s["m"] * s["g"]

    def to_xarray(self):
        classes = sorted(set(self.colour.tolist()))
        code = np.array([classes.index(c) for c in self.colour], dtype=np.int64)
        return _xr().Dataset(
            {"F": ("point", self.F, {"units": "N"}),
             "psi": ("point", self.psi, {"units": "rad"}),
             "w3": ("point", self.w3, {"units": "1"}),
             "rdot": ("point", self.rdot, {"units": "m/s^2"}),
             "colour_index": ("point", code, {"units": "1", "long_name": "index into colours"})},
            coords={"F_grid": ("force", self.F_grid, {"units": "N", "long_name": "forces scanned"})},
            attrs={"colours": classes, "values": self.values, "system": self.system,
                   "status": self.status,
                   "units": dict(_SYSTEM_UNITS, values="N")})

    @classmethod
    def from_xarray(cls, ds):
        a = ds.attrs
        classes = list(a["colours"])
        colour = np.array([classes[i] for i in ds["colour_index"].values], dtype=str)
        return cls(ds["F"].values, ds["psi"].values, ds["w3"].values, ds["rdot"].values,
                   colour, ds["F_grid"].values, a["values"], a["system"], a["status"])

    def summary(self) -> dict:
        v = self.values
        s = self.system
        return summary_record(
            self.kind, {"body": (s["body"], None), "model": (s["model"], None),
                        "F_min": (float(self.F_grid.min()) if self.F_grid.size else None, "N"),
                        "F_max": (float(self.F_grid.max()) if self.F_grid.size else None, "N")},
            {"F_T": (v["F_T"], "N"), "F_P": (v["F_P"], "N"), "F_F": (v["F_F"], "N"),
             "points": (int(self.F.size), None), "status": (self.status, None)})
