"""Mode coupling of a multibody sliding state (plane or solid bodies) over the friction coefficient.

:func:`mu_sweep` finds the steady sliding state and the complex eigenvalues of its linearised
equations (:mod:`fesub.contact.analyses.linearised`) at each friction coefficient of a grid, and
the critical friction coefficient of each eigenvalue pair that turns unstable between two grid
points (bisection on the number of unstable eigenvalues, to ``tol``): a :class:`MuSweep` result.

:func:`belt_two_dof` builds the textbook minimal model of mode-coupling instability on the contact
engine (a mass held by two inclined springs, pressed through a contact spring onto a moving belt),
so that its linearised matrices come from the same code as any other model's. With the mass m at
(x, y), springs k1 and k2 along the unit vectors (cos a_i, sin a_i) and the contact spring k3
between the mass and a massless tip on the belt (a tip mass, eliminated exactly by the contact
constraint), the linearised equations are ``m x'' + K_eff x = 0`` with

    K_eff = [[k11, k12 - s mu k3], [k21, k22]],
    k11 = k1 cos^2 a1 + k2 cos^2 a2,   k12 = k21 = k1 cos a1 sin a1 + k2 cos a2 sin a2,
    k22 = k1 sin^2 a1 + k2 sin^2 a2 + k3,

``s`` = +1 when the belt moves along -x (the mass slips along +x on it), -1 otherwise. The two
frequencies merge, and a pair of eigenvalues leaves the imaginary axis, at

    mu_crit = [(k11 - k22)^2 + 4 k12 k21] / (4 s k21 k3)

(the discriminant of ``det(K_eff - m w^2 I) = 0`` in w^2 vanishes there), a closed form the tests
hold the computed value to.

Units: SI (m, kg, N, s; angles in rad; eigenvalues in 1/s, frequencies in Hz).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...errors import ParameterError, check_positive, check_real
from ...io import Result, summary_record
from ..engine.bodies import Body, MultibodyModel
from ..engine.friction import Coulomb
from ..engine.interfaces import ContactInterface
from .band import band_eigenvalues
from .linearised import linearise
from .steady import steady_state

__all__ = ["MuSweep", "mu_sweep", "spectrum_at_mu", "BeltTwoDof", "belt_two_dof"]


def spectrum_at_mu(model, mu, *, t=0.0, law=None, band=None, sliding_velocity=None):
    """Every eigenvalue (1/s) of the steady sliding state of ``model`` at time ``t`` (s) with the
    friction law ``law(mu)`` on every slave node (default Coulomb(mu)), and that state
    (``sliding_velocity``: see :func:`~fesub.contact.analyses.steady.steady_state`). With
    ``band`` (a dict of :func:`~fesub.contact.analyses.band.band_eigenvalues`' arguments:
    ``f_lo``, ``f_hi`` in Hz, ``max_rate`` in 1/s...), the eigenvalues in that band only (and
    their conjugates), by the band-limited method: ``(lam, state, BandSpectrum)``."""
    fr = Coulomb(mu) if law is None else law(mu)
    st = steady_state(model, t, friction=fr, sliding_velocity=sliding_velocity)
    if band is None:
        return linearise(model, st).eigenvalues(), st
    res = band_eigenvalues(linearise(model, st), **band)
    return np.concatenate([res.lam, np.conj(res.lam)]), st, res


def _unstable(lam, rtol):
    """Eigenvalues of positive imaginary part and real part above ``rtol |lambda|`` (below it:
    round-off, ~1e-8 |lambda| near a merging pair)."""
    up = lam[lam.imag > 0]
    return up[up.real > rtol * np.abs(up)]


@dataclass(eq=False)
class MuSweep(Result):
    """Eigenvalues of the linearised steady sliding state over friction coefficients.

    ``mus`` (1); ``lam[a, k]`` (1/s) eigenvalue k (non-negative imaginary part, sorted by it; NaN
    padding) at ``mus[a]``; ``onsets``: per change of the number of unstable eigenvalues between
    grid points, a dict with ``mu`` (its critical value, the upper end of a bracket of width
    ``tol``), ``f_hz`` (the frequency of the pair there, Hz), ``real_1_s`` (its real part
    there), ``kind`` ('unstable': a pair turns unstable as mu rises; 'stable': one turns back)
    and ``contact_change`` (the nodes' states differ at the two ends of the bracket: a node opened
    or closed there, and the eigenvalues jumped rather than crossed); ``states[a, j]`` the state
    of slave node j at ``mus[a]`` (0 open, 1 stick, 2 and 3 slip along +t and -t; a solid model's
    2 slip); ``t`` (s) the drives' time; ``rtol`` the relative real part below which an eigenvalue counts as
    stable; ``unstable_at_start``: pairs already unstable at ``mus[0]``; ``status``; for a
    band-limited sweep ``band`` ((f_lo, f_hi) in Hz) and ``certified[a]`` (the band's eigenvalues
    at ``mus[a]`` certified complete).
    """

    mus: np.ndarray
    lam: np.ndarray
    onsets: list = field(default_factory=list)
    states: np.ndarray | None = None
    t: float = 0.0
    tol: float = 1e-10
    rtol: float = 1e-7
    unstable_at_start: int = 0
    status: str = "completed"
    band: tuple | None = None
    certified: np.ndarray | None = None

    kind = "mu-sweep"

    def tracks(self) -> np.ndarray:
        """The eigenvalues (1/s, non-negative imaginary parts) reordered so that column k follows
        one eigenvalue over mu (n_mu, n_tracks; NaN where it is not in the spectrum or band): each
        mu's eigenvalues assigned to the previous mu's by least total distance (through a merging
        the two members of a pair keep their tracks as they leave the imaginary axis)."""
        from scipy.optimize import linear_sum_assignment

        rows = [r[np.isfinite(r)] for r in self.lam]
        out, last = [], np.zeros(0, complex)
        ids, n_tracks = np.zeros(0, int), 0
        for r in rows:
            new_ids = np.full(r.size, -1)
            if last.size and r.size:
                i, j = linear_sum_assignment(np.abs(last[:, None] - r[None, :]))
                new_ids[j] = ids[i]
            fresh = new_ids < 0
            new_ids[fresh] = n_tracks + np.arange(fresh.sum())
            n_tracks += int(fresh.sum())
            out.append((new_ids, r))
            last, ids = r, new_ids
        lam = np.full((len(rows), n_tracks), np.nan + 0j)
        for a, (ix, r) in enumerate(out):
            lam[a, ix] = r
        return lam

    @property
    def critical_mu(self) -> float:
        """The lowest friction coefficient at which a pair turns unstable (inf if none in the
        range; the first grid value if one is unstable there)."""
        if self.unstable_at_start:
            return float(self.mus[0])
        up = [o["mu"] for o in self.onsets if o["kind"] == "unstable"]
        return min(up) if up else float("inf")

    @property
    def max_real(self) -> np.ndarray:
        """Largest real part (1/s) at each mu."""
        return np.nanmax(self.lam.real, axis=1)

    def to_xarray(self):
        import xarray as xr

        keys = ("mu", "f_hz", "real_1_s")
        units = {"mu": "1", "f_hz": "Hz", "real_1_s": "1/s"}
        data = {f"onset_{k}": ("onset", np.array([o[k] for o in self.onsets], float), {"units": units[k]})
                for k in keys}
        data["onset_kind"] = ("onset", np.array([1 if o["kind"] == "unstable" else -1 for o in self.onsets],
                                                 np.int64),
                              {"units": "1", "long_name": "+1 a pair turns unstable, -1 turns stable"})
        data["onset_contact_change"] = ("onset", np.array([int(o["contact_change"]) for o in self.onsets], np.int64),
                                        {"units": "1", "long_name": "1: a node opened or closed in the bracket"})
        extra = {}
        if self.band is not None:
            extra = {"band_f_lo": float(self.band[0]), "band_f_hi": float(self.band[1])}
            data["certified"] = ("mu", np.asarray(self.certified, np.int64),
                                 {"units": "1", "long_name": "1: the band's eigenvalues certified complete"})
        states = self.states if self.states is not None else np.zeros((self.mus.size, 0), np.int64)
        data["state"] = (("mu", "node"), states,
                         {"units": "1",
                          "long_name": "node state: 0 open, 1 stick, 2 slip (+t in a plane model), 3 slip -t"})
        return xr.Dataset(
            {"lam": (("mu", "mode"), self.lam,
                     {"units": "1/s", "long_name": "complex eigenvalue: growth rate + j angular frequency"}),
             **data},
            coords={"mu": ("mu", self.mus, {"units": "1", "long_name": "friction coefficient"}),
                    "mode": ("mode", np.arange(self.lam.shape[1]), {"units": "1"})},
            attrs={"t": float(self.t), "tol": float(self.tol), "rtol": float(self.rtol),
                   "unstable_at_start": int(self.unstable_at_start), "status": self.status, **extra})

    @classmethod
    def from_xarray(cls, ds):
        a = ds.attrs
        on = [{"mu": float(m), "f_hz": float(f), "real_1_s": float(r), "kind": "unstable" if k > 0 else "stable",
               "contact_change": bool(c)}
              for m, f, r, k, c in zip(ds["onset_mu"].values, ds["onset_f_hz"].values, ds["onset_real_1_s"].values,
                                       ds["onset_kind"].values, ds["onset_contact_change"].values)]
        band = (float(a["band_f_lo"]), float(a["band_f_hi"])) if "band_f_lo" in a else None
        cert = ds["certified"].values.astype(bool) if "certified" in ds else None
        return cls(ds["mu"].values, ds["lam"].values, on, ds["state"].values, t=a["t"], tol=a["tol"], rtol=a["rtol"],
                   unstable_at_start=a["unstable_at_start"], status=a["status"], band=band, certified=cert)

    def summary(self) -> dict:
        crit = self.critical_mu
        first = next((o for o in self.onsets if o["kind"] == "unstable"), None)
        return summary_record(
            self.kind,
            {"mu_min": (float(self.mus.min()), "1"), "mu_max": (float(self.mus.max()), "1"),
             "n_mu": (int(self.mus.size), None), "t": (float(self.t), "s"), "tol": (float(self.tol), "1"),
             "band_f_lo": (float(self.band[0]) if self.band else None, "Hz"),
             "band_f_hi": (float(self.band[1]) if self.band else None, "Hz")},
            {"critical_mu": (crit if np.isfinite(crit) else None, "1"),
             "frequency_at_critical_mu": (first["f_hz"] if first else None, "Hz"),
             "max_real_part": (float(np.nanmax(self.lam.real)), "1/s"),
             "unstable_pairs_at_mu_max": (int((self.lam[-1].real > self.rtol * np.abs(self.lam[-1])).sum()), None),
             "all_certified": (bool(np.all(self.certified)) if self.certified is not None else None, None),
             "status": (self.status, None)},
            details={"onsets": self.onsets})


def mu_sweep(model: MultibodyModel, mus, *, t: float = 0.0, law=None, tol: float = 1e-10, rtol: float = 1e-7,
             band=None, sliding_velocity=None, progress: bool = False) -> MuSweep:
    """Eigenvalues of the linearised steady sliding state at each friction coefficient of
    ``mus``, and the critical coefficient of each pair that changes stability between them.

    Parameters
    ----------
    model : MultibodyModel
        Plane or solid bodies, drives at constant velocities (m/s).
    mus : array_like
        Increasing friction coefficients (dimensionless, >= 0), at least two.
    t : float
        The drives' time (s) of the state.
    law : callable, optional
        ``mu -> friction law`` for every slave node (default ``Coulomb(mu)``; e.g.
        ``lambda mu: Stribeck(1.2 * mu, mu, 0.1)``).
    tol : float
        Bracket width of each critical mu (absolute, dimensionless).
    rtol : float
        An eigenvalue counts as unstable when its real part exceeds ``rtol`` times its modulus
        (dimensionless; the round-off of a merging pair's real part is ~1e-8 of its modulus; for
        an undamped merging pair, whose real part grows as sqrt(mu - mu_crit), the bias this
        leaves in the critical mu is ``(rtol |lambda| / c)^2`` for Re = c sqrt(mu - mu_crit):
        1e-12 on the belt model).
    band : tuple or dict, optional
        ``(f_lo, f_hi)`` in Hz, or a dict of
        :func:`~fesub.contact.analyses.band.band_eigenvalues`' arguments: only the eigenvalues in
        that band, by the band-limited method with its certificate at every mu of ``mus``
        (``certified`` per mu in the result; the bisection's coefficients are not certified);
        the critical mu are those of the pairs in the band.
    sliding_velocity : callable or sequence, optional
        A sliding velocity (m/s) of the slave nodes on their masters beside the drives' (see
        :func:`~fesub.contact.analyses.steady.steady_state`).
    progress : bool
        Show a progress bar.

    Returns
    -------
    MuSweep (:meth:`MuSweep.tracks` follows each eigenvalue over mu); interrupted (Ctrl-C), the coefficients done so far with ``status='interrupted'``.
    """
    from tqdm.auto import tqdm

    try:
        mus = np.asarray(mus, float)
    except (TypeError, ValueError):
        raise ParameterError(f"mus must be a 1-D array of friction coefficients, got {mus!r:.60}") from None
    if mus.ndim != 1 or mus.size < 2 or not np.all(np.isfinite(mus)) or np.any(mus < 0) or np.any(np.diff(mus) <= 0):
        raise ParameterError("mus must be at least two increasing finite friction coefficients >= 0")
    tol, rtol = check_positive("tol", tol), check_positive("rtol", rtol)
    t = check_real("t (s)", t)

    if band is not None and not isinstance(band, dict):
        try:
            f_lo, f_hi = band
        except (TypeError, ValueError):
            raise ParameterError(f"band must be (f_lo, f_hi) in Hz or a dict, got {band!r:.60}") from None
        band = {"f_lo": f_lo, "f_hi": f_hi}
    certified = []
    solved = {}

    def count(mu, record=False):
        # the band's certificate at the grid's coefficients (recorded); the bisection counts
        # unstable eigenvalues found by the same shifts. A coefficient already solved (a
        # bracket's ends after its bisection) is not solved again.
        if mu in solved and not record:
            return solved[mu]
        bnd = band if band is None or record else {**band, "certify": False}
        out = spectrum_at_mu(model, mu, t=t, law=law, band=bnd, sliding_velocity=sliding_velocity)
        lam, st = out[0], out[1]
        if record and band is not None:
            certified.append(out[2].certified)
        solved[mu] = (_unstable(lam, rtol), lam, st.state)
        return solved[mu]

    rows, counts, states, status = [], [], [], "completed"
    onsets = []
    try:
        for mu in tqdm(mus, disable=not progress, desc="mu sweep"):
            un, lam, state = count(mu, record=True)
            rows.append(lam[lam.imag >= 0])
            counts.append(un.size)
            states.append(state)
        for a in range(len(counts) - 1):
            if counts[a + 1] == counts[a]:
                continue
            lo, hi, c_lo = mus[a], mus[a + 1], counts[a]
            while hi - lo > tol:
                mid = 0.5 * (lo + hi)
                if not lo < mid < hi:
                    break
                if count(mid)[0].size == c_lo:
                    lo = mid
                else:
                    hi = mid
            un_hi, _, st_hi = count(hi)
            un_lo, _, st_lo = count(lo)
            rising = un_hi.size > un_lo.size
            # the pair that changed: the unstable eigenvalue farthest from those of the other end
            pick, other = (un_hi, un_lo) if rising else (un_lo, un_hi)
            far = np.abs(pick[:, None] - other[None, :]).min(axis=1) if other.size else np.zeros(pick.size)
            z = pick[np.argmax(far)] if pick.size else np.nan + 0j
            onsets.append({"mu": float(hi), "f_hz": float(z.imag / (2 * np.pi)), "real_1_s": float(z.real),
                           "kind": "unstable" if rising else "stable",
                           "contact_change": bool(np.any(st_hi != st_lo))})
    except KeyboardInterrupt:
        status = "interrupted"
    width = max((r.size for r in rows), default=0)
    lam = np.full((len(rows), width), np.nan + 0j)
    for a, r in enumerate(rows):
        r = r[np.lexsort((r.real, r.imag))]
        lam[a, :r.size] = r
    done = min(len(rows), len(states))
    states = np.array(states[:done], np.int64).reshape(done, -1)
    bnd = (float(band["f_lo"]), float(band["f_hi"])) if band is not None else None
    cert = np.array(certified[:done], bool) if band is not None else None
    return MuSweep(mus[:done], lam[:done], onsets, states, t=float(t), tol=float(tol), rtol=float(rtol),
                   unstable_at_start=int(counts[0]) if counts else 0, status=status, band=bnd, certified=cert)


# ------------------------------------------------------------------------------- the belt model
@dataclass(eq=False)
class BeltTwoDof:
    """The two-degree-of-freedom belt model: the contact engine's ``model`` and the
    ``coefficients`` of its linearised stiffness (N/m: k11, k12, k21, k22, k3; s the sign of
    the slip; m in kg), see the module docstring."""

    model: MultibodyModel
    coefficients: dict


def belt_two_dof(*, m: float = 1.0, k1: float = 1.0e5, alpha1: float = np.radians(40.0), k2: float = 1.0e5,
                 alpha2: float = np.radians(150.0), k3: float = 6.0e4, preload: float = 100.0,
                 v_belt: float = -1.0, damping: float = 0.0, mu: float = 0.0,
                 tip_mass: float | None = None) -> BeltTwoDof:
    """The textbook minimal model of mode-coupling instability on the contact engine.

    Parameters
    ----------
    m : float
        Mass (kg), moving in x and y.
    k1, k2 : float
        Stiffnesses (N/m) of the two springs from the ground to the mass, along the unit
        vectors (cos alpha_i, sin alpha_i).
    alpha1, alpha2 : float
        Directions of the springs (rad).
    k3 : float
        Contact stiffness (N/m) between the mass and its tip on the belt (along y).
    preload : float
        Force pressing the mass onto the belt (N, along -y).
    v_belt : float
        Belt velocity along x (m/s; its sign fixes the slip direction, its size nothing in
        Coulomb friction).
    damping : float
        Viscous damping (N s/m) of the mass in x and y.
    mu : float
        Coulomb coefficient of the contact (dimensionless; a sweep overrides it).
    tip_mass : float, optional
        Mass of the tip (kg, default 1e-3 m): held on the belt by the contact constraint, it
        drops out of the linearised equations exactly.

    Returns
    -------
    BeltTwoDof: the model (bodies 'mass', coordinates x, y, tip y; 'belt', a rigid line at y = 0
    driven at ``v_belt``) and its coefficients.
    """
    m, k1, k2, k3 = (check_positive(n, v) for n, v in (("m (kg)", m), ("k1 (N/m)", k1), ("k2 (N/m)", k2),
                                                        ("k3 (N/m)", k3)))
    preload = check_positive("preload (N)", preload)
    damping = check_positive("damping (N s/m)", damping, strict=False)
    v_belt = check_real("v_belt (m/s)", v_belt)
    if v_belt == 0:
        raise ParameterError("v_belt must be non-zero (m/s): the belt slides under the mass")
    a1, a2 = check_real("alpha1 (rad)", alpha1), check_real("alpha2 (rad)", alpha2)
    mt = 1e-3 * m if tip_mass is None else check_positive("tip_mass (kg)", tip_mass)
    n1, n2 = np.array([np.cos(a1), np.sin(a1)]), np.array([np.cos(a2), np.sin(a2)])
    Ks = k1 * np.outer(n1, n1) + k2 * np.outer(n2, n2)
    K = np.zeros((3, 3))
    K[:2, :2] = Ks
    K[1, 1] += k3
    K[1, 2] = K[2, 1] = -k3
    K[2, 2] = k3
    C = np.diag([damping, damping, 0.0])
    # the tip node shares the mass's x coordinate; its y is coordinate 2
    mass = Body(np.diag([m, m, mt]), K, [[0.0, 0.0]], [[0, 2]], C, name="mass", loads=[0.0, -preload, 0.0],
                outputs={"x": 0, "y": 1})
    span = 1.0
    belt = Body([[1.0]], [[0.0]], [[-span, 0.0], [span, 0.0]], [[0, -1], [0, -1]], name="belt",
                prescribed={0: v_belt})
    model = MultibodyModel([mass, belt], [ContactInterface("mass", [0], "belt", [[0, 1]], mu=mu, name="belt")])
    coeffs = {"m": m, "k11": float(Ks[0, 0]), "k12": float(Ks[0, 1]), "k21": float(Ks[1, 0]),
              "k22": float(Ks[1, 1] + k3), "k3": k3, "s": 1.0 if v_belt < 0 else -1.0}
    return BeltTwoDof(model, coeffs)
