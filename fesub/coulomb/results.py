"""Results of the Coulomb-chain study, on the one result protocol of :mod:`fesub.io`.

* :class:`ModalSums` -- response and damping functions of a chain on a frequency grid;
* :class:`SteadyState` -- closed-form continuous steady state, boundaries and regimes on an
  (beta, r1) grid (the transmissibility and phase families);
* :class:`RegimeMap` -- closed-form regimes in the (r1, beta) plane with the exact boundary, the
  ``s_i = 1`` approximation (Eq. 68) and the stuck boundary;
* :class:`SimResult` -- steady state found by stick-slip time integration at one (r1, beta);
* :class:`RegimePoint` -- one point of a numeric regime map (time integration and closed form);
* :class:`NumericRegimeMap` -- regimes found by time integration on an (r1, beta) grid.

The study is non-dimensional (see :mod:`fesub.coulomb.model`): frequency ratios
``r1 = omega sqrt(m_1/k_1)``, friction ratios ``beta = F/P``, displacements per unit static
deflection ``P/k_1`` (or per unit base amplitude ``Y``), times ``tau = omega t``. Their ``units``
attribute is therefore ``"1"``; phases and ``tau`` are in ``"rad"``. Every result writes itself
with ``save(path)`` (netCDF, ``path.nc``) and reopens exactly with ``Class.load`` or
:func:`fesub.load`; NaN (no continuous solution, not converged) and inf (poles) are stored as such.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, fields

import numpy as np

from ..io import Result, summary_record

__all__ = ["CONTINUOUS", "STICK_SLIP", "STUCK", "REGIME_NAMES", "NOT_COMPUTED", "ModalSums", "SteadyState",
           "RegimeMap", "SimResult", "RegimePoint", "NumericRegimeMap"]

CONTINUOUS, STICK_SLIP, STUCK = 0, 1, 2
REGIME_NAMES = ("continuous", "stick-slip", "stuck")
#: regime code of a point that was not computed (an interrupted map, a resonant r1)
NOT_COMPUTED = -1
ONE, RAD = "1", "rad"

_COORDS = {
    "beta": (ONE, "friction ratio F/P"),
    "r1": (ONE, "frequency ratio omega sqrt(m_1/k_1)"),
    "mass": (ONE, "mass index (0-based)"),
    "mode": (ONE, "mode index (0-based, ascending natural frequency)"),
    "tau": (RAD, "non-dimensional time omega t over one forcing period"),
    "segment": (ONE, "stick/slip segment of the last period"),
    "seglog_column": (ONE, "column of the segment log: tau0, mode, c0, x (N), v (N)"),
}
_REGIME_ATTRS = {"units": ONE, "flag_values": [NOT_COMPUTED, CONTINUOUS, STICK_SLIP, STUCK],
                 "flag_meanings": "not_computed continuous stick_slip stuck"}


def _regime_name(code) -> str:
    code = int(code)
    return REGIME_NAMES[code] if 0 <= code < len(REGIME_NAMES) else "not determined"


class _Tabled(Result):
    """Dataclass results stored field by field: ``_VARS`` maps a field to (dims, units, long
    name); every other field is an attribute of the dataset (JSON where it is not a number or a
    string). Coordinates are the fields named in :data:`_COORDS`, or index ranges."""

    _VARS: dict = {}

    @classmethod
    def _coord_fields(cls) -> set:
        """Fields that are coordinates: those used as a dimension of a variable."""
        return {d for v in cls._VARS.values() for d in v[0]} & {f.name for f in fields(cls)}

    def _coord_values(self, dims) -> dict:
        out = {}
        for d in dims:
            if d in self._coord_fields():
                out[d] = np.asarray(getattr(self, d))
            else:
                size = next(np.shape(getattr(self, k))[v[0].index(d)] for k, v in self._VARS.items()
                            if d in v[0] and getattr(self, k) is not None)
                out[d] = np.arange(size)
        return out

    def _extra_vars(self) -> dict:
        return {}

    def to_xarray(self):
        import xarray as xr

        data, attrs = {}, {}
        for f in fields(self):
            val = getattr(self, f.name)
            if f.name in self._VARS:
                dims, unit, what = self._VARS[f.name]
                a = dict(_REGIME_ATTRS) if f.name == "regime" else {"units": unit}
                data[f.name] = (dims, np.asarray(val), dict(a, long_name=what))
            elif f.name not in self._coord_fields():
                attrs[f.name] = val
        data.update(self._extra_vars())
        dims = sorted({d for v in data.values() for d in v[0]})
        coords = {d: (d, v, {"units": _COORDS[d][0], "long_name": _COORDS[d][1]})
                  for d, v in self._coord_values(dims).items()}
        return xr.Dataset(data, coords=coords, attrs=attrs)

    @classmethod
    def _kwargs(cls, ds) -> dict:
        kw = {}
        for f in fields(cls):
            if f.name in cls._VARS or f.name in cls._coord_fields():
                if f.name in ds.variables:
                    v = ds[f.name].values
                    kw[f.name] = v.item() if v.ndim == 0 else v
            elif f.name in ds.attrs:
                kw[f.name] = ds.attrs[f.name]
        return kw

    @classmethod
    def from_xarray(cls, ds):
        return cls(**cls._kwargs(ds))


def _scalar(v):
    return float(v) if v is not None else None


# --------------------------------------------------------------------------------- closed form
@dataclass(eq=False)
class _ChainGrid(_Tabled):
    """Fields of the closed-form results on an (r1, beta) grid: the grid, ``mu``, the chain
    (``model``: gamma, kappa), the contact and the loaded mass (0-based)."""

    r1: np.ndarray
    beta: np.ndarray
    mu: float
    model: dict
    contact: dict
    load: int = field()   # shadows Result.load (a classmethod) on instances only


@dataclass(eq=False)
class ModalSums(_Tabled):
    """Response and damping functions on a frequency grid (:func:`fesub.coulomb.modal_sums`).

    ``R`` (nr, N modes) forcing over natural frequency, ``u`` (nr, N) modal damping function,
    ``V`` and ``U`` (nr, N masses), ``Vc`` (= w @ V - b_amp) and ``Uc`` (nr,), ``pc`` (N,) =
    w @ phi, ``sigma`` (nr,) = w Gamma^-1 w / r1^2, ``coef`` (N masses, N modes) with
    ``coef[k, i] = phi_ki phi_ci / lam_i``, the loaded mass ``l``, the contact vector ``w`` and
    the contact (a dict, :meth:`fesub.coulomb.CoulombContact.to_dict`); all dimensionless.

    Parameters
    ----------
    r1 : numpy.ndarray (nr,)
        Frequency ratios omega sqrt(m_0/k_0) (dimensionless).
    R : numpy.ndarray (nr, N)
        Forcing over natural frequency ``r1 / sqrt(lam_i)`` (dimensionless).
    u : numpy.ndarray (nr, N)
        Modal damping function ``u(R)`` (Eq. 28, dimensionless).
    V, U : numpy.ndarray (nr, N)
        Undamped receptance ``V_k`` per unit load and damping function ``U_k`` of each mass
        (dimensionless).
    Vc, Uc : numpy.ndarray (nr,)
        The same for the contact coordinate (dimensionless).
    pc : numpy.ndarray (N,)
        Modal participation of the contact coordinate ``w @ phi_i`` (dimensionless).
    sigma : numpy.ndarray (nr,)
        ``w Gamma^-1 w / r1^2`` (dimensionless).
    coef : numpy.ndarray (N, N)
        ``phi_ki phi_ci / lam_i`` (dimensionless).
    l : int
        Index of the loaded mass (-, 0-based).
    w : numpy.ndarray (N,)
        Contact vector (dimensionless).
    contact : dict
        The contact, :meth:`fesub.coulomb.CoulombContact.to_dict`.
    """

    kind = "coulomb-modal-sums"
    _VARS = {
        "R": (("r1", "mode"), ONE, "forcing over natural frequency r1 / sqrt(lam_i)"),
        "u": (("r1", "mode"), ONE, "modal damping function u(R) (Eq. 28)"),
        "V": (("r1", "mass"), ONE, "undamped receptance V_k (Eq. 36) per unit load"),
        "U": (("r1", "mass"), ONE, "damping function U_k (Eq. 39)"),
        "Vc": (("r1",), ONE, "receptance of the contact coordinate V_c"),
        "Uc": (("r1",), ONE, "damping function of the contact coordinate U_c"),
        "pc": (("mode",), ONE, "modal participation of the contact coordinate w @ phi_i"),
        "sigma": (("r1",), ONE, "w Gamma^-1 w / r1^2"),
        "coef": (("mass", "mode"), ONE, "phi_ki phi_ci / lam_i"),
        "w": (("mass",), ONE, "contact vector"),
    }

    r1: np.ndarray
    R: np.ndarray
    u: np.ndarray
    V: np.ndarray
    U: np.ndarray
    Vc: np.ndarray
    Uc: np.ndarray
    pc: np.ndarray
    sigma: np.ndarray
    coef: np.ndarray
    l: int
    w: np.ndarray
    contact: dict


@dataclass(eq=False)
class SteadyState(_ChainGrid):
    """Closed-form steady state on an (r1, beta) grid; arrays are shaped (nb, nr[, N]).

    Amplitudes are per unit load amplitude (``X k_1 / P``) or per unit base amplitude; phases are
    lags in rad, in (-pi, pi]. NaN marks points with no continuous solution.

    Parameters
    ----------
    r1 : numpy.ndarray (nr,)
        Frequency ratios omega sqrt(m_0/k_0) (dimensionless).
    beta : numpy.ndarray (nb,)
        Friction ratios F/P (dimensionless).
    mu : float
        Static/kinetic friction ratio (dimensionless).
    model : dict
        The chain, :meth:`fesub.coulomb.ChainModel.to_dict`.
    contact : dict
        The contact, :meth:`fesub.coulomb.CoulombContact.to_dict`.
    load : int
        Index of the loaded mass (-, 0-based).
    s_method : str
        How ``S_c`` was computed: ``"exact"``, ``"paper"`` or ``"unit"``.
    amplitude : str
        ``"exact"`` or ``"monoharmonic"`` amplitudes.
    V, U : numpy.ndarray (nr, N)
        Undamped receptance ``V_k`` (Eq. 36) per unit load and damping function ``U_k`` (Eq. 39)
        of each mass (dimensionless).
    Vc, Uc : numpy.ndarray (nr,)
        The same for the contact coordinate (dimensionless).
    S : numpy.ndarray (nr,)
        ``S_c`` of the continuous/stick-slip boundary (dimensionless).
    sigma : numpy.ndarray (nr,)
        ``w Gamma^-1 w / r1^2`` (dimensionless).
    Z : numpy.ndarray (nb, nr)
        Amplitude of the contact coordinate per unit load (dimensionless).
    phi_c : numpy.ndarray (nb, nr)
        Phase lag of the contact coordinate (rad).
    X : numpy.ndarray (nb, nr, N)
        Amplitude of each mass per unit load (dimensionless).
    phi : numpy.ndarray (nb, nr, N)
        Phase lag of each mass (rad).
    beta_lim : numpy.ndarray (nr,)
        Continuous/stick-slip boundary ``beta_lim`` (dimensionless).
    beta_stuck : numpy.ndarray (nr,)
        Stuck boundary ``beta* = |Lambda| / mu`` (dimensionless).
    X_stuck : numpy.ndarray (nr, N)
        Signed amplitudes of the stuck configuration (dimensionless).
    regime : numpy.ndarray (nb, nr)
        Regime code (-): 0 continuous, 1 stick-slip, 2 stuck.
    extra : dict
        Further records kept with the result.
    """

    kind = "coulomb-steady-state"
    _VARS = {
        "V": (("r1", "mass"), ONE, "undamped receptance V_k (Eq. 36) per unit load"),
        "U": (("r1", "mass"), ONE, "damping function U_k (Eq. 39)"),
        "Vc": (("r1",), ONE, "receptance of the contact coordinate V_c"),
        "Uc": (("r1",), ONE, "damping function of the contact coordinate U_c"),
        "S": (("r1",), ONE, "S_c of the continuous/stick-slip boundary"),
        "sigma": (("r1",), ONE, "w Gamma^-1 w / r1^2"),
        "Z": (("beta", "r1"), ONE, "amplitude of the contact coordinate per unit load"),
        "phi_c": (("beta", "r1"), RAD, "phase lag of the contact coordinate"),
        "X": (("beta", "r1", "mass"), ONE, "amplitude of each mass per unit load"),
        "phi": (("beta", "r1", "mass"), RAD, "phase lag of each mass"),
        "beta_lim": (("r1",), ONE, "continuous/stick-slip boundary beta_lim"),
        "beta_stuck": (("r1",), ONE, "stuck boundary beta* = |Lambda| / mu"),
        "X_stuck": (("r1", "mass"), ONE, "signed amplitudes of the stuck configuration"),
        "regime": (("beta", "r1"), ONE, "regime: 0 continuous, 1 stick-slip, 2 stuck"),
    }

    s_method: str
    amplitude: str
    V: np.ndarray
    U: np.ndarray
    Vc: np.ndarray
    Uc: np.ndarray
    S: np.ndarray
    sigma: np.ndarray
    Z: np.ndarray
    phi_c: np.ndarray
    X: np.ndarray
    phi: np.ndarray
    beta_lim: np.ndarray
    beta_stuck: np.ndarray
    X_stuck: np.ndarray
    regime: np.ndarray
    extra: dict = field(default_factory=dict)

    def masked(self) -> "SteadyState":
        """Copy with Z, phi_c, X, phi set to NaN wherever the regime is not continuous."""
        out = copy.copy(self)
        m = self.regime != CONTINUOUS
        out.Z = np.where(m, np.nan, self.Z)
        out.phi_c = np.where(m, np.nan, self.phi_c)
        out.X = np.where(m[..., None], np.nan, self.X)
        out.phi = np.where(m[..., None], np.nan, self.phi)
        return out

    def regime_fractions(self) -> np.ndarray:
        """Fraction of the r1 grid in each regime for every beta, shape (nb, 3), dimensionless."""
        return np.stack([(self.regime == c).mean(axis=1) for c in range(len(REGIME_NAMES))], axis=1)

    def peak_continuous(self) -> list:
        """Largest amplitude of each mass in the continuous regime, per beta: (nb, N) nested
        lists, None where a beta has no continuous point (dimensionless)."""
        m = self.masked()
        return [[float(np.nanmax(m.X[ib, :, k])) if np.isfinite(m.X[ib, :, k]).any() else None
                 for k in range(self.X.shape[-1])] for ib in range(self.beta.size)]

    def summary(self) -> dict:
        return summary_record(
            self.kind,
            {"beta": (self.beta, ONE), "r1_min": (float(self.r1.min()), ONE),
             "r1_max": (float(self.r1.max()), ONE), "n_r1": (int(self.r1.size), None),
             "mu": (self.mu, ONE), "contact": (self.contact, None), "load": (self.load, None)},
            {"continuous_fraction": (self.regime_fractions()[:, CONTINUOUS], ONE),
             "peak_continuous_X": (self.peak_continuous(), ONE)},
            details={"model": self.model, "s_method": self.s_method, "amplitude": self.amplitude})


@dataclass(eq=False)
class RegimeMap(_ChainGrid):
    """Closed-form regimes in the (r1, beta) plane (:func:`fesub.coulomb.regime_map`).

    ``regime`` is (nb, nr); ``beta_lim`` (exact ``S_c``), ``beta_lim_unit`` (Eq. 68,
    ``s_i = 1``) and ``beta_stuck`` are (nr,), all dimensionless.

    Parameters
    ----------
    r1 : numpy.ndarray (nr,)
        Frequency ratios omega sqrt(m_0/k_0) (dimensionless).
    beta : numpy.ndarray (nb,)
        Friction ratios F/P (dimensionless).
    mu : float
        Static/kinetic friction ratio (dimensionless).
    model : dict
        The chain, :meth:`fesub.coulomb.ChainModel.to_dict`.
    contact : dict
        The contact, :meth:`fesub.coulomb.CoulombContact.to_dict`.
    load : int
        Index of the loaded mass (-, 0-based).
    regime : numpy.ndarray (nb, nr)
        Regime code (-): 0 continuous, 1 stick-slip, 2 stuck.
    beta_lim : numpy.ndarray (nr,)
        Continuous/stick-slip boundary with the exact ``S_c`` (dimensionless).
    beta_lim_unit : numpy.ndarray (nr,)
        The same boundary with ``s_i = 1`` (Eq. 68, dimensionless).
    beta_stuck : numpy.ndarray (nr,)
        Stuck boundary ``beta* = |Lambda| / mu`` (dimensionless).
    """

    kind = "coulomb-regime-map"
    _VARS = {
        "regime": (("beta", "r1"), ONE, "regime: 0 continuous, 1 stick-slip, 2 stuck"),
        "beta_lim": (("r1",), ONE, "continuous/stick-slip boundary (exact S_c)"),
        "beta_lim_unit": (("r1",), ONE, "continuous/stick-slip boundary with s_i = 1 (Eq. 68)"),
        "beta_stuck": (("r1",), ONE, "stuck boundary beta* = |Lambda| / mu"),
    }

    regime: np.ndarray
    beta_lim: np.ndarray
    beta_lim_unit: np.ndarray
    beta_stuck: np.ndarray

    def summary(self) -> dict:
        frac = [float((self.regime == c).mean()) for c in range(len(REGIME_NAMES))]
        fin = np.isfinite(self.beta_lim)
        return summary_record(
            self.kind,
            {"mu": (self.mu, ONE), "contact": (self.contact, None), "load": (self.load, None),
             "n_r1": (int(self.r1.size), None), "n_beta": (int(self.beta.size), None)},
            {"area_fraction": (dict(zip(REGIME_NAMES, frac)), ONE),
             "max_beta_lim": (float(self.beta_lim[fin].max()) if fin.any() else None, ONE)},
            details={"model": self.model})


# ---------------------------------------------------------------------------- time integration
@dataclass(eq=False)
class SimResult(_Tabled):
    """Steady state found by time integration.

    Amplitudes per unit load (or per unit base amplitude), phases in rad in (-pi, pi] measured
    from the load maximum (the load is ``cos tau``); ``Z``/``phi_c`` refer to the contact
    coordinate ``w @ x - b_amp cos tau``. When ``converged`` is False the numbers are those of the
    last period run and must not be read as a steady state (``X`` etc. are NaN then unless
    ``keep_unconverged=True`` was asked for). In stick-slip the contact coordinate dwells at its
    extremes while stuck, so ``phi_c`` (time of its maximum) is only defined up to the dwell.
    ``status`` is ``"complete"``, or ``"interrupted"`` when Ctrl-C stopped the run (regime -1,
    amplitudes NaN, ``state`` what the integrator held).

    Parameters
    ----------
    r1, beta, mu : float
        Frequency ratio, friction ratio F/P and static/kinetic ratio (dimensionless).
    converged : bool
        The Poincare map settled.
    periods : int
        Forcing periods run (-).
    delta : float
        Last relative change of the Poincare state (-).
    regime : int
        Regime code (-): 0 continuous, 1 stick-slip, 2 stuck, -1 not computed.
    stops_per_period, reversals_per_period, slip_starts_per_period : int
        Stick entries, velocity reversals and slip starts per period of the last period (-).
    X : numpy.ndarray (N,)
        Amplitude of each mass per unit load (dimensionless).
    phi : numpy.ndarray (N,)
        Phase lag of each mass from the load maximum (rad).
    Z : float
        Amplitude of the contact coordinate per unit load (dimensionless).
    phi_c : float
        Phase lag of the contact coordinate (rad).
    tau : numpy.ndarray (nt,)
        Non-dimensional times ``omega t`` of the last period (rad).
    x : numpy.ndarray (N, nt)
        Displacements over the last period per unit load (dimensionless).
    state : dict
        What the integrator held at the end (state, mode, segment log).
    status : str
        ``"complete"`` or ``"interrupted"``.
    """

    kind = "coulomb-simulation"
    _VARS = {
        "X": (("mass",), ONE, "amplitude of each mass per unit load"),
        "phi": (("mass",), RAD, "phase lag of each mass from the load maximum"),
        "Z": ((), ONE, "amplitude of the contact coordinate per unit load"),
        "phi_c": ((), RAD, "phase lag of the contact coordinate"),
        "delta": ((), ONE, "last relative change of the Poincare state"),
        "x": (("mass", "tau"), ONE, "displacements over the last period per unit load"),
    }

    r1: float
    beta: float
    mu: float
    converged: bool
    periods: int
    delta: float
    regime: int
    stops_per_period: int
    reversals_per_period: int
    slip_starts_per_period: int
    X: np.ndarray
    phi: np.ndarray
    Z: float
    phi_c: float
    tau: np.ndarray = field(repr=False)
    x: np.ndarray = field(repr=False)
    state: dict = field(default_factory=dict, repr=False)
    status: str = "complete"

    @property
    def regime_name(self) -> str:
        return _regime_name(self.regime)

    @property
    def stick_fraction(self) -> float:
        """Fraction of the last period spent stuck (dimensionless; NaN without a segment log)."""
        log = self.state.get("seglog")
        if log is None or len(log) == 0:
            return float("nan")
        starts = log[:, 0]
        ends = np.append(starts[1:], 2.0 * np.pi)
        return float(((ends - starts)[log[:, 1] == 0]).sum() / (2.0 * np.pi))

    def to_xarray(self):
        ds = super().to_xarray()
        del ds.attrs["state"]
        st = self.state
        ds["state_x"] = ("mass", np.asarray(st["x"]), {"units": ONE, "long_name": "final displacements"})
        ds["state_v"] = ("mass", np.asarray(st["v"]),
                         {"units": ONE, "long_name": "final velocities d x / d tau"})
        ds.attrs["state_mode"] = int(st["mode"])
        ds.attrs["state_c0"] = float(st["c0"])
        if "seglog" in st:
            ds["seglog"] = (("segment", "seglog_column"), np.asarray(st["seglog"]),
                            {"units": ONE, "long_name": _COORDS["seglog_column"][1]})
            for d in ("segment", "seglog_column"):
                ds.coords[d] = (d, np.arange(ds.sizes[d]),
                                {"units": _COORDS[d][0], "long_name": _COORDS[d][1]})
        return ds

    @classmethod
    def from_xarray(cls, ds):
        kw = cls._kwargs(ds)
        kw["state"] = {"x": ds["state_x"].values, "v": ds["state_v"].values,
                       "mode": ds.attrs["state_mode"], "c0": ds.attrs["state_c0"]}
        if "seglog" in ds:
            kw["state"]["seglog"] = ds["seglog"].values
        return cls(**kw)

    def summary(self) -> dict:
        return summary_record(
            self.kind,
            {"r1": (self.r1, ONE), "beta": (self.beta, ONE), "mu": (self.mu, ONE)},
            {"status": (self.status, None), "converged": (bool(self.converged), None),
             "regime": (self.regime_name, None), "periods": (int(self.periods), None),
             "X": (np.asarray(self.X), ONE), "Z": (self.Z, ONE),
             "stick_fraction": (self.stick_fraction, ONE),
             "stops_per_period": (int(self.stops_per_period), None)})


@dataclass
class RegimePoint(_Tabled):
    """One point of a numeric regime map (:func:`fesub.coulomb.regime_map_point`).

    ``regime``/``regime_code`` found by time integration (0 continuous, 1 stick-slip, 2 stuck),
    ``analytic_regime``/``analytic_regime_code`` the closed-form prediction; ``Z`` and ``X``
    (amplitudes per unit load, a tuple) are None unless converged and asked for. Fields are also
    readable by key (``point["regime"]``), as a mapping.

    Parameters
    ----------
    r1, beta, mu : float
        Frequency ratio, friction ratio F/P and static/kinetic ratio (dimensionless).
    regime : str
        Regime found by time integration.
    regime_code : int
        Its code (-): 0 continuous, 1 stick-slip, 2 stuck.
    converged : bool
        The Poincare map settled.
    periods : int
        Forcing periods run (-).
    stops_per_period : int
        Stick entries per period (-).
    Z : float or None
        Amplitude of the contact coordinate per unit load (dimensionless).
    X : tuple of float or None
        Amplitude of each mass per unit load (dimensionless).
    analytic_regime : str
        Closed-form regime.
    analytic_regime_code : int
        Its code (-).
    """

    kind = "coulomb-regime-point"
    _VARS = {"X": (("mass",), ONE, "amplitude of each mass per unit load")}

    r1: float
    beta: float
    mu: float
    regime: str
    regime_code: int
    converged: bool
    periods: int
    stops_per_period: int
    Z: float | None
    X: tuple | None
    analytic_regime: str
    analytic_regime_code: int

    def __getitem__(self, key):
        return getattr(self, key)

    def keys(self):
        return [f.name for f in fields(self)]

    def to_xarray(self):
        import xarray as xr

        attrs = {k: getattr(self, k) for k in self.keys() if k != "X"}
        data = {} if self.X is None else {"X": ("mass", np.asarray(self.X, dtype=float),
                                                 {"units": ONE, "long_name": self._VARS["X"][2]})}
        coords = {} if self.X is None else {"mass": ("mass", np.arange(len(self.X)),
                                                     {"units": ONE, "long_name": _COORDS["mass"][1]})}
        return xr.Dataset(data, coords=coords, attrs=attrs)

    @classmethod
    def from_xarray(cls, ds):
        kw = {k: ds.attrs[k] for k in (f.name for f in fields(cls)) if k != "X"}
        kw["X"] = tuple(float(v) for v in ds["X"].values) if "X" in ds else None
        kw["Z"] = _scalar(kw["Z"])
        return cls(**kw)

    def summary(self) -> dict:
        return summary_record(
            self.kind, {"r1": (self.r1, ONE), "beta": (self.beta, ONE), "mu": (self.mu, ONE)},
            {"regime": (self.regime, None), "analytic_regime": (self.analytic_regime, None),
             "converged": (bool(self.converged), None), "Z": (self.Z, ONE)})


@dataclass(eq=False)
class NumericRegimeMap(_Tabled):
    """Regimes found by time integration on an (r1, beta) grid; arrays are (nb, nr).

    ``regime`` is -1 where a point was not computed (interrupted run, or an r1 at a natural
    frequency); ``status`` is ``"complete"`` or ``"interrupted"``.

    Parameters
    ----------
    r1 : numpy.ndarray (nr,)
        Frequency ratios omega sqrt(m_0/k_0) (dimensionless).
    beta : numpy.ndarray (nb,)
        Friction ratios F/P (dimensionless).
    regime : numpy.ndarray (nb, nr)
        Regime code (-): -1 not computed, 0 continuous, 1 stick-slip, 2 stuck.
    converged : numpy.ndarray (nb, nr) of bool
        The Poincare map settled.
    stops : numpy.ndarray (nb, nr)
        Stick entries per period (-).
    Z : numpy.ndarray (nb, nr)
        Amplitude of the contact coordinate per unit load (dimensionless; NaN if not converged).
    chain_params : dict
        Keyword parameters of the chain, contact and integrator the map was run with.
    status : str
        ``"complete"`` or ``"interrupted"``.
    """

    kind = "coulomb-numeric-regime-map"
    _VARS = {
        "regime": (("beta", "r1"), ONE, "regime: -1 not computed, 0 continuous, 1 stick-slip, 2 stuck"),
        "converged": (("beta", "r1"), ONE, "the Poincare map settled"),
        "stops": (("beta", "r1"), ONE, "stick entries per period"),
        "Z": (("beta", "r1"), ONE, "amplitude of the contact coordinate per unit load (NaN if not converged)"),
    }

    r1: np.ndarray
    beta: np.ndarray
    regime: np.ndarray
    converged: np.ndarray
    stops: np.ndarray
    Z: np.ndarray
    chain_params: dict
    status: str = "complete"

    def summary(self) -> dict:
        done = self.regime != NOT_COMPUTED
        return summary_record(
            self.kind, {"chain": (self.chain_params, None), "n_r1": (int(self.r1.size), None),
                        "n_beta": (int(self.beta.size), None)},
            {"status": (self.status, None), "points_computed": (int(done.sum()), None),
             "points_converged": (int((self.converged & done).sum()), None)})
