"""Sliding-contact transient: nonlinear forward-increment dual assembly (eqs. 22-33).

Two Craig-Bampton substructures: 1 (slider, carrying the slave node C, driven along x at its
prescribed DOFs with x = vx t) and 2 (target, carrying the master segments). Each step:

    u*_{n+1} = h^2 M^-1 [f_n - C (u_n - u_{n-1})/h - K u_n] + 2 u_n - u_{n-1}          (28)
    contact search at U* = X + u*  ->  alpha, gamma  ->  B_C, B_E at n+1              (34-44)
    lambda_n = (h^2 B_C M^-1 B_E')^-1 B_C U*_{n+1}                                      (32)
    u_{n+1}  = u* - h^2 M^-1 B_E' lambda_n                                               (29)

``formulation='modal'`` (default) advances the modal coordinates of each substructure in a compiled
kernel (O(n) per step, spec section 8), slider coordinates taken relative to its rigid motion;
``formulation='dense'`` is the literal transcription in reduced physical coordinates (reference).
Both give the same numbers to round-off.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg as sla

from .._backend import kernels
from ..errors import ModelError, ParameterError, check_count, check_positive
from ..io import Result, summary_record
from .geometry import segment_at_x

__all__ = ["SlidingContactSystem", "TransientResult", "simulate", "REASONS", "SIGNAL_UNITS", "signal_unit"]

#: how a run ends: the kernel's stop codes (0-3) and an interrupt (4, Ctrl-C)
REASONS = {0: "completed", 1: "stick", 2: "detachment", 3: "off_surface", 4: "interrupted"}
_MESSAGES = {
    "completed": "reached the requested duration",
    "stick": "the tangential relative velocity of the slave changed sign: sticking could occur",
    "detachment": "the contact multiplier became negative: the slave detaches",
    "off_surface": "the slave left the target surface",
    "interrupted": "interrupted (Ctrl-C): the steps done so far are kept",
}


def _q_index(cb, model_dofs) -> np.ndarray:
    """Positions in the Craig-Bampton coordinates q = [eta; u_b] of boundary model DOFs."""
    pos = {int(d): i for i, d in enumerate(cb.boundary)}
    try:
        return np.array([cb.n_modes + pos[int(d)] for d in np.atleast_1d(model_dofs)], dtype=np.int64)
    except KeyError as exc:
        raise ModelError(f"DOF {exc} is not a boundary DOF of the reduced substructure") from None


class SlidingContactSystem:
    """The data of a two-substructure sliding-contact problem, ready to march.

    Parameters
    ----------
    cb1, cb2 : CraigBampton
        Slider and target reduced models (their substructures carry Rayleigh alpha, beta).
    slave : int
        Mesh node of substructure 1 in contact (its x and y DOFs must be boundary DOFs).
    prescribed : int array
        Model DOFs of substructure 1 moved as x = vx t (boundary DOFs, x components).
    target_edge : str
        Edge set of substructure 2's mesh holding the master segments (their nodes must be boundary
        DOFs or clamped).
    loads1 : dict model DOF -> constant force (N) on substructure 1.
    outputs1, outputs2 : dict name -> model DOF of the output channels.
    rough_dof : 'y' component of the slave that carries the roughness force.
    modal_cutoff_hz : drop modes of the reduced substructures above this frequency (APPROXIMATION:
        enlarges the stable time step, changes the high-frequency content).
    """

    def __init__(self, cb1, cb2, *, slave: int, prescribed, target_edge: str, loads1=None,
                 outputs1=None, outputs2=None, modal_cutoff_hz: float | None = None):
        s1, s2 = cb1.substructure, cb2.substructure
        if s1 is None or s2 is None:
            raise ModelError("the Craig-Bampton models must be built from Substructure objects")
        self.cb1, self.cb2 = cb1, cb2
        self.alpha1, self.beta1 = s1.alpha, s1.beta
        self.alpha2, self.beta2 = s2.alpha, s2.beta
        # ---- substructure 1: free partition of q1 (prescribed DOFs removed)
        n1q = cb1.n_dofs
        self.p1 = _q_index(cb1, prescribed)
        self.f1_idx = np.setdiff1d(np.arange(n1q), self.p1)
        qC = _q_index(cb1, s1.dofs([slave]))
        self.slave_node = int(slave)
        self.X_C = s1.mesh.points[slave].copy()
        self.iC = np.searchsorted(self.f1_idx, qC)
        if not np.array_equal(self.f1_idx[self.iC], qC):
            raise ModelError("the slave DOFs must not be prescribed")
        # rigid translation along x in q1 (eta = 0, boundary x DOFs = 1)
        r = np.zeros(n1q)
        bx = s1.dofmap.components.index("x")
        xdofs = [i for i, d in enumerate(cb1.boundary) if s1.retained[d] % s1.dofmap.ndpn == bx]
        r[cb1.n_modes + np.asarray(xdofs)] = 1.0
        if np.abs(cb1.Kr @ r).max() > 1e-6 * np.abs(cb1.Kr).max():
            raise ModelError("substructure 1 does not translate freely along x (is it clamped?)")
        self.r1 = r
        K1, M1 = cb1.Kr, cb1.Mr
        C1 = cb1.rayleigh(self.alpha1, self.beta1)
        f = self.f1_idx
        self.K1, self.M1, self.C1 = K1[np.ix_(f, f)], M1[np.ix_(f, f)], C1[np.ix_(f, f)]
        self.K1p, self.C1p = K1[np.ix_(f, self.p1)], C1[np.ix_(f, self.p1)]
        self.load1 = np.zeros(f.size)
        for d, v in (loads1 or {}).items():
            if not isinstance(v, (int, float, np.number)) or not np.isfinite(v):
                raise ModelError(f"load on DOF {d} must be a finite force in N, got {v!r}")
            qi = _q_index(cb1, [d])[0]
            k = np.searchsorted(f, qi)
            if k >= f.size or f[k] != qi:
                raise ModelError(f"load on a prescribed DOF {d}")
            self.load1[k] += v
        # ---- substructure 2: all q2 free (clamps already removed)
        self.K2, self.M2 = cb2.Kr, cb2.Mr
        self.C2 = cb2.rayleigh(self.alpha2, self.beta2)
        mesh2 = s2.mesh
        edges = mesh2.edges(target_edge)
        tnodes = np.unique(edges)
        self.target_nodes = tnodes
        self.XT = np.ascontiguousarray(mesh2.points[tnodes])
        loc = {int(nd): i for i, nd in enumerate(tnodes)}
        self.segs = np.ascontiguousarray([[loc[int(a)], loc[int(b)]] for a, b in edges], dtype=np.int64)
        # q2 rows of each target node (-1 where clamped)
        rows = np.full((tnodes.size, 2), -1, np.int64)
        ci = s2._index
        for i, nd in enumerate(tnodes):
            for c in range(2):
                g = s2.dofmap.dofs([nd], s2.dofmap.components[c])[0]
                if ci[g] >= 0:
                    rows[i, c] = _q_index(cb2, [ci[g]])[0]
        self.T_rows = rows
        self.outputs1 = {k: int(np.searchsorted(f, _q_index(cb1, [v])[0])) for k, v in (outputs1 or {}).items()}
        self.outputs2 = {k: int(_q_index(cb2, [v])[0]) for k, v in (outputs2 or {}).items()}
        self.rough_row = self.iC[1]
        # ---- modal bases of both substructures
        self.modal_cutoff_hz = modal_cutoff_hz
        self.w2_1, self.Phi1 = self._modes(self.K1, self.M1)
        self.w2_2, self.Phi2 = self._modes(self.K2, self.M2)

    def _modes(self, K, M):
        lam, phi = sla.eigh(K, M)
        # rigid-body modes: eigenvalues at round-off level of the largest one
        lam = np.where(lam < 1e-12 * lam.max(), 0.0, lam)
        if self.modal_cutoff_hz is not None:
            keep = np.sqrt(lam) / (2 * np.pi) <= self.modal_cutoff_hz
            lam, phi = lam[keep], phi[:, keep]
        return np.ascontiguousarray(lam), np.ascontiguousarray(phi)

    # ------------------------------------------------------------------ time step
    def critical_step(self) -> float:
        """Exact central-difference stability limit (s): min over modes of (2/w)(sqrt(1+z^2) - z).

        w are the natural frequencies of the reduced substructures (rad/s) and z the Rayleigh
        damping ratio of each mode."""
        hs = []
        for w2, a, b in ((self.w2_1, self.alpha1, self.beta1), (self.w2_2, self.alpha2, self.beta2)):
            w = np.sqrt(w2[w2 > 0])
            z = a / (2 * w) + b * w / 2
            hs.append(np.min(2.0 / w * (np.sqrt(1 + z * z) - z)))
        return float(min(hs))

    def max_frequency_hz(self) -> float:
        return float(np.sqrt(max(self.w2_1.max(), self.w2_2.max())) / (2 * np.pi))

    # ------------------------------------------------------------------ coupling geometry
    def target_positions(self, q2) -> np.ndarray:
        """Current target node positions (m) from q2."""
        pos = self.XT.copy()
        for c in range(2):
            ok = self.T_rows[:, c] >= 0
            pos[ok, c] += q2[self.T_rows[ok, c]]
        return pos

    def phiT(self) -> np.ndarray:
        """(nt, 2, n2) modal rows of the target nodes (zero rows for clamped DOFs)."""
        out = np.zeros((self.XT.shape[0], 2, self.Phi2.shape[1]))
        for c in range(2):
            ok = self.T_rows[:, c] >= 0
            out[ok, c] = self.Phi2[self.T_rows[ok, c]]
        return out

    def static_state(self, mu: float, vx: float, sign: float = 1.0, *, tol: float = 1e-13, max_iter: int = 50,
                     geometry: str = "deformed"):
        """Static equilibrium at t = 0 under the loads, with the slave sliding (friction sign
        ``sign``) and the gap closed in the deformed geometry (or the undeformed one, with
        ``geometry='undeformed'``; 'frozen' is the deformed equilibrium).

        The contact point moves with the deformation, so the linear solve is repeated with the
        contact point found in the deformed configuration until it no longer changes (fixed point).
        With a modal cut-off the equilibrium is that of the truncated model (solved in its kept
        modal coordinates), so that a truncated run starts at rest.
        Returns (w1: free q1 relative to the rigid motion, q2, lambda in N).
        """
        _check_geometry(geometry)
        if geometry == "frozen":  # a frozen row at rest is the row of the deformed equilibrium
            geometry = "deformed"
        K = kernels("contact")
        n1, n2 = self.K1.shape[0], self.K2.shape[0]
        f1 = self.load1 - vx * (self.C1 @ self.r1[self.f1_idx] + self.C1p @ self.r1[self.p1])
        trunc = self.modal_cutoff_hz is not None
        if trunc:
            K1, K2, f1 = np.diag(self.w2_1), np.diag(self.w2_2), self.Phi1.T @ f1
        else:
            K1, K2 = self.K1, self.K2
        m1, m2 = K1.shape[0], K2.shape[0]
        w1, q2 = np.zeros(n1), np.zeros(n2)
        seg, al_prev = 0, np.inf
        for _ in range(max_iter):
            pos = self.target_positions(q2) if geometry == "deformed" else self.XT
            P = self.X_C + w1[self.iC] if geometry == "deformed" else self.X_C
            seg, al, _, _ = K.find_segment(pos, self.segs, float(P[0]), float(P[1]), int(seg))
            if seg < 0:
                raise ModelError("the slave node is not above the target surface at t = 0")
            bE, bC, _ = self._rows(seg, al, pos, mu, sign)
            BE, BC = self._global_rows(seg, bE, bC)
            if trunc:
                BE = np.r_[self.Phi1.T @ BE[:n1], self.Phi2.T @ BE[n1:]]
                BC = np.r_[BC[:n1] @ self.Phi1, BC[n1:] @ self.Phi2]
            A = np.zeros((m1 + m2 + 1, m1 + m2 + 1))
            A[:m1, :m1] = K1
            A[m1:-1, m1:-1] = K2
            A[:-1, -1] = BE
            A[-1, :-1] = BC
            rhs = np.zeros(m1 + m2 + 1)
            rhs[:m1] = f1
            j1, j2 = self.segs[seg]
            # B_C (X + u) = 0 with B_C frozen at the current contact point
            rhs[-1] = -(bC @ np.r_[self.XT[j1], self.XT[j2], self.X_C])
            sol = np.linalg.solve(A, rhs)
            w1, q2, lam = sol[:m1], sol[m1:-1], sol[-1]
            if trunc:
                w1, q2 = self.Phi1 @ w1, self.Phi2 @ q2
            if abs(al - al_prev) < tol:
                break
            al_prev = al
        return w1, q2, lam

    def segment_at(self, s: float) -> tuple[int, float]:
        """Target segment and local coordinate alpha (0..1) of the undeformed surface point at
        x = ``s`` (m); a :class:`ModelError` when ``s`` lies outside the target surface."""
        return segment_at_x(self.XT, self.segs, s)

    def surface_point(self, s: float) -> np.ndarray:
        """(x, y) in m of the undeformed target surface at x = ``s`` (where the slave C sits when
        the contact is at ``s``)."""
        k, alpha = self.segment_at(s)
        a, b = self.segs[k]
        return (1.0 - alpha) * self.XT[a] + alpha * self.XT[b]

    def contact_point(self, w1, q2):
        """(segment, alpha, angle of the segment in rad) of the slave projected on the deformed
        target in the configuration (w1, q2): the contact row that ``geometry='frozen'`` holds."""
        pos = self.target_positions(q2)
        P = self.X_C + w1[self.iC]
        seg, al, _, _ = kernels("contact").find_segment(pos, self.segs, float(P[0]), float(P[1]), 0)
        if seg < 0:
            raise ModelError("the slave node is not above the target surface in the initial configuration")
        d = pos[self.segs[seg, 1]] - pos[self.segs[seg, 0]]
        return int(seg), float(al), float(np.arctan2(d[1], d[0]))

    def _rows(self, seg, al, pos, mu, sign):
        from .geometry import coupling_rows

        j1, j2 = self.segs[seg]
        d = pos[j2] - pos[j1]
        gam = np.arctan2(d[1], d[0])
        bE, bC = coupling_rows(al, gam, mu, sign)
        return bE, bC, gam

    def _global_rows(self, seg, bE, bC):
        """B_E, B_C as dense rows over [q1_free; q2] for segment ``seg``."""
        n1, n2 = self.K1.shape[0], self.K2.shape[0]
        BE, BC = np.zeros(n1 + n2), np.zeros(n1 + n2)
        j1, j2 = self.segs[seg]
        for e, (node, c) in enumerate([(j1, 0), (j1, 1), (j2, 0), (j2, 1)]):
            r = self.T_rows[node, c]
            if r >= 0:
                BE[n1 + r] += bE[e]
                BC[n1 + r] += bC[e]
        BE[self.iC] += bE[4:]
        BC[self.iC] += bC[4:]
        return BE, BC


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

    ``signals`` holds 't' (s), 'lambda' (N, > 0 in compression), 'x_contact' (m, contact point on
    the target), 'v_t' (m/s, tangential velocity of the slave relative to the target), 'gap' (m,
    after each step), 'segment', 'f_x' and 'f_y' (N, contact force on the slave), and for every
    output channel NAME: 'u_NAME' (m), 'v_NAME' (m/s), 'a_NAME' (m/s^2). Slider displacements are
    relative to its rigid motion vx t.

    ``status`` is 'completed', 'stick', 'detachment', 'off_surface' (a physical stop, everything
    up to then kept) or 'interrupted' (Ctrl-C: the steps done so far); ``stop_time`` (s),
    ``steps``, ``h`` and ``h_critical`` (s), ``fs_out`` (Hz), ``wall_time`` (s). ``info`` records
    the static multiplier, the requested duration and the loading of the case (roughness, seed,
    sliding velocity).
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
    if isinstance(value, (str, bytes)) or np.ndim(value) != 0:
        raise ParameterError(f"{name} must be a real number, got {value!r}")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be a real number, got {value!r}") from None


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
    seg, al, _, _ = kernels("contact").find_segment(pos, S.segs, float(P[0]), float(P[1]), 0)
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


def _check_geometry(geometry):
    if geometry not in ("deformed", "undeformed", "frozen"):
        raise ParameterError(f"geometry must be 'deformed', 'undeformed' or 'frozen', got {geometry!r}")


#: longest march one call accepts: 2e9 steps is ~10 min of the compiled march with 250 modes and
#: 16 GB of roughness samples; beyond it a typo (duration in ms as s, say) is far more likely
MAX_STEPS = 2e9


def simulate(system: SlidingContactSystem, *, mu: float, duration: float, vx: float,
             h: float | None = None, fs_out: float = 50_000.0, roughness_std: float = 0.0,
             roughness_band=(0.0, 20_000.0), seed=0, formulation: str = "modal",
             progress: bool = False, chunk: int = 200_000, initial=None, monitor=None,
             stop_on_stick: bool = True, geometry: str = "deformed") -> TransientResult:
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
    formulation : 'modal' (compiled kernel or its NumPy twin) or 'dense' (literal eqs. 26-32).
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
    stop_on_stick : stop when the sliding velocity changes sign (the model is valid only while
        sliding); False for studies with a fixed contact (vx = 0).
    monitor : optional callable receiving, after every ``chunk`` steps of the modal march, a dict
        with the modal state (eta1_prev, eta1, eta2_prev, eta2 = states at steps n and n+1), the
        modal loads f1, f2, the squared frequencies w2_1, w2_2, h and the steps done.

    Returns
    -------
    TransientResult; a stop (stick, detachment, slave off the surface) is a normal outcome with
    everything computed up to then; so is an interrupt (Ctrl-C): the result holds the steps done
    so far with ``status='interrupted'``.
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
    _check_geometry(geometry)
    if geometry == "frozen" and vx != 0:
        raise ParameterError(f"geometry='frozen' holds the initial contact point: it needs vx = 0 "
                             f"(a contact that does not slide), got vx = {vx} m/s")
    if formulation not in ("modal", "dense"):
        raise ParameterError(f"formulation must be 'modal' or 'dense', got {formulation!r}")
    if formulation == "dense" and system.modal_cutoff_hz is not None:
        # the dense form marches the full reduced matrices: at the step of the truncated model it
        # would be unstable
        raise ParameterError(f"formulation='dense' has no modal truncation (modal_cutoff_hz = "
                             f"{system.modal_cutoff_hz:.4g} Hz): use formulation='modal'")
    try:
        band = tuple(float(b) for b in roughness_band)
    except (TypeError, ValueError):
        raise ParameterError(f"roughness_band must be (f_lo, f_hi) in Hz, got {roughness_band!r}") from None
    if len(band) != 2:
        raise ParameterError(f"roughness_band must be (f_lo, f_hi) in Hz, got {roughness_band!r}")
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
    rough = np.zeros(n_steps)
    if roughness_std > 0:
        from ..signal import band_limited_noise

        rough = band_limited_noise(n_steps, 1.0 / h, roughness_band, roughness_std, seed)
    sign = 1.0 if vx >= 0 else -1.0
    w1, q2, lam0 = system.static_state(mu, vx, sign, geometry="undeformed" if geometry == "undeformed"
                                       else "deformed")
    if initial is not None:
        w1, q2 = _check_initial(system, initial)
    _check_multiplier_digits(system, w1, q2, mu, sign, h, lam0)
    t0 = time.perf_counter()
    if formulation == "modal":
        sig, status, n_done, backend = _run_modal(system, h, n_steps, dec, w1, q2, rough, vx, mu, sign,
                                                  progress, chunk, monitor, stop_on_stick, geometry)
    else:
        sig, status, n_done, backend = _run_dense(system, h, n_steps, dec, w1, q2, rough, vx, mu, sign, progress,
                                                  stop_on_stick, geometry)
    wall = time.perf_counter() - t0
    approx = None
    if system.modal_cutoff_hz is not None:
        approx = (f"modal truncation above {system.modal_cutoff_hz:.4g} Hz: an approximation "
                  f"(enlarges the stable step; high-frequency content is lost)")
    return TransientResult(signals=sig, status=REASONS[status], stop_time=n_done * h, steps=int(n_done), h=h,
                           h_critical=hc, fs_out=1.0 / (dec * h), wall_time=wall, mu=float(mu),
                           formulation=formulation, backend=backend, approximation=approx,
                           info={"lambda_static_N": float(lam0), "duration_s": float(duration),
                                 "vx_m_s": float(vx), "roughness_std_N": float(roughness_std),
                                 "roughness_band_hz": [float(b) for b in roughness_band],
                                 "seed": _seed_record(seed), "geometry": geometry})


def _seed_record(seed):
    """The noise seed as recorded in a result (an int; None for no seed or a generator object)."""
    return int(seed) if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) else None


def _signal_dict(o_sig, outs):
    sig = {"t": o_sig[:, 0].copy(), "lambda": o_sig[:, 1].copy(), "x_contact": o_sig[:, 2].copy(),
           "v_t": o_sig[:, 3].copy(), "gap": o_sig[:, 4].copy(), "segment": o_sig[:, 5].astype(np.int64),
           "f_x": o_sig[:, 6].copy(), "f_y": o_sig[:, 7].copy()}
    sig.update(outs)
    return sig


def _run_modal(S, h, n_steps, dec, w1, q2, rough, vx, mu, sign, progress, chunk, monitor=None,
               stop_on_stick=True, geometry="deformed"):
    from tqdm.auto import tqdm

    K = kernels("contact")
    backend = "python" if K.__name__.endswith("_ref") else "compiled"
    P1, P2 = S.Phi1, S.Phi2
    # modal coordinates: eta = Phi' M q
    eta1 = np.ascontiguousarray(P1.T @ (S.M1 @ w1))
    eta2 = np.ascontiguousarray(P2.T @ (S.M2 @ q2))
    e1p, e2p = eta1.copy(), eta2.copy()
    c1 = np.ascontiguousarray(S.alpha1 + S.beta1 * S.w2_1)
    c2 = np.ascontiguousarray(S.alpha2 + S.beta2 * S.w2_2)
    phiC = np.ascontiguousarray(P1[S.iC])
    # constant load on 1: external loads and the damping drag of the rigid motion
    f1q = S.load1 - vx * (S.C1 @ S.r1[S.f1_idx] + S.C1p @ S.r1[S.p1])
    f1 = np.ascontiguousarray(P1.T @ f1q)
    f2 = np.zeros(P2.shape[1])
    phiT = np.ascontiguousarray(S.phiT())
    names1, names2 = list(S.outputs1), list(S.outputs2)
    out1 = np.ascontiguousarray(P1[[S.outputs1[k] for k in names1]].reshape(len(names1), -1))
    out2 = np.ascontiguousarray(P2[[S.outputs2[k] for k in names2]].reshape(len(names2), -1))
    n_out = n_steps // dec + 1
    o_sig = np.zeros((n_out, 8))
    o = {k: np.zeros((n_out, len(names1))) for k in ("u1", "v1", "a1")}
    o.update({k: np.zeros((n_out, len(names2))) for k in ("u2", "v2", "a2")})
    # predicted coordinates, and per-segment Gram matrices of the modal rows (see the kernel)
    work = np.zeros(4 * (P1.shape[1] + P2.shape[1]) + 10 * S.segs.shape[0] + 3)
    seg0 = K.find_segment(S.XT, S.segs, float(S.X_C[0]), float(S.X_C[1]), 0)[0]
    state = np.array([float(seg0), sign, sign * abs(vx), 1.0 if stop_on_stick else 0.0,
                      {"deformed": 0.0, "undeformed": 1.0, "frozen": 2.0}[geometry], 0.0, 0.0])
    if geometry == "frozen":
        seg0, state[5], state[6] = S.contact_point(w1, q2)
        state[0] = seg0
    status = np.zeros(3, np.int64)
    done, j, reason = 0, 0, 0
    bar = tqdm(total=n_steps, disable=not progress, unit="step", unit_scale=True, desc=f"mu={mu:g}")
    try:
        while done < n_steps and reason == 0:
            m = min(chunk, n_steps - done)
            sl = slice(j, n_out)
            K.march(h, m, dec, done, S.w2_1, c1, eta1, e1p, phiC, f1, rough[done:done + m], float(vx),
                    float(S.X_C[0]), float(S.X_C[1]), S.w2_2, c2, eta2, e2p, phiT, S.XT, S.segs, f2, float(mu),
                    state, out1, out2, o_sig[sl], o["u1"][sl], o["v1"][sl], o["a1"][sl], o["u2"][sl],
                    o["v2"][sl], o["a2"][sl], work, status)
            # one statement: an interrupt after the march keeps the chunk's counters together
            done, j, reason = done + int(status[0]), j + int(status[2]), int(status[1])
            bar.update(int(status[0]))
            if monitor is not None:
                monitor({"eta1_prev": e1p, "eta1": eta1, "eta2_prev": e2p, "eta2": eta2, "f1": f1, "f2": f2,
                         "w2_1": S.w2_1, "w2_2": S.w2_2, "h": h, "steps": done})
    except KeyboardInterrupt:
        # Ctrl-C: the output up to the last finished chunk (a chunk in flight is dropped)
        reason = 4
    finally:
        bar.close()
    outs = {}
    for i, k in enumerate(names1):
        outs[f"u_{k}"], outs[f"v_{k}"], outs[f"a_{k}"] = o["u1"][:j, i], o["v1"][:j, i], o["a1"][:j, i]
    for i, k in enumerate(names2):
        outs[f"u_{k}"], outs[f"v_{k}"], outs[f"a_{k}"] = o["u2"][:j, i], o["v2"][:j, i], o["a2"][:j, i]
    return _signal_dict(o_sig[:j], outs), reason, done, backend


def _run_dense(S, h, n_steps, dec, w1, q2, rough, vx, mu, sign, progress, stop_on_stick=True,
               geometry="deformed"):
    """Literal eqs. (26)-(32) in reduced physical coordinates u = [q1_free; q2] (total motion)."""
    from tqdm.auto import tqdm

    n1, n2 = S.K1.shape[0], S.K2.shape[0]
    M = sla.block_diag(S.M1, S.M2)
    C = sla.block_diag(S.C1, S.C2)
    Kmat = sla.block_diag(S.K1, S.K2)
    Minv = np.linalg.inv(M)
    rf = S.r1[S.f1_idx]
    rp = S.r1[S.p1]
    u = np.r_[w1, q2]
    u_prev = u - h * np.r_[vx * rf, np.zeros(n2)]  # rigid velocity vx of the slider
    seg = kernels("contact").find_segment(S.XT, S.segs, float(S.X_C[0]), float(S.X_C[1]), 0)[0]
    if geometry == "frozen":
        seg, al_f, gam_f = S.contact_point(w1, q2)
    names1, names2 = list(S.outputs1), list(S.outputs2)
    rows_out = [S.outputs1[k] for k in names1] + [n1 + S.outputs2[k] for k in names2]
    rigid_out = np.r_[[rf[S.outputs1[k]] for k in names1], np.zeros(len(names2))]
    n_out = n_steps // dec + 1
    o_sig = np.zeros((n_out, 8))
    ou, ov, oa = (np.zeros((n_out, len(rows_out))) for _ in range(3))
    j, reason, n_done = 0, 0, n_steps
    search = kernels("contact").find_segment

    def slave_pos(uu):
        return S.X_C + uu[S.iC]

    finished = 0
    try:
        for n in tqdm(range(n_steps), disable=not progress, unit="step", unit_scale=True, desc="dense"):
            t = n * h
            f = np.zeros(n1 + n2)
            f[:n1] = S.load1 - S.K1p @ (rp * vx * t) - S.C1p @ (rp * vx)
            f[S.rough_row] += rough[n]
            u_star = h * h * Minv @ (f - C @ (u - u_prev) / h - Kmat @ u) + 2 * u - u_prev
            pos = S.target_positions(u_star[n1:])
            P = slave_pos(u_star)
            if geometry == "frozen":
                al = al_f
            elif geometry == "deformed":
                seg, al, g, _ = search(np.ascontiguousarray(pos), S.segs, float(P[0]), float(P[1]), int(seg))
            else:  # undeformed configuration: rigid motion of the slave only
                seg, al, g, _ = search(S.XT, S.segs, float(S.X_C[0] + vx * (t + h)), float(S.X_C[1]), int(seg))
            if seg < 0:
                reason, n_done, seg = 3, n, 0
                break
            if geometry == "frozen":
                from .geometry import coupling_rows

                gam = gam_f
                bE, bC = coupling_rows(al, gam, mu, sign)
            else:
                bE, bC, gam = S._rows(seg, al, pos if geometry == "deformed" else S.XT, mu, sign)
            BE, BC = S._global_rows(seg, bE, bC)
            j1, j2 = S.segs[seg]
            BC_U = bC @ np.r_[pos[j1], pos[j2], P]
            lam = BC_U / (h * h * BC @ Minv @ BE)
            u_new = u_star - h * h * Minv @ BE * lam
            # tangential relative velocity at n+1
            pos_new = S.target_positions(u_new[n1:])
            vC = (u_new[S.iC] - u[S.iC]) / h
            vT = ((1 - al) * (pos_new[j1] - S.target_positions(u[n1:])[j1])
                  + al * (pos_new[j2] - S.target_positions(u[n1:])[j2])) / h
            vt = np.cos(gam) * (vC[0] - vT[0]) + np.sin(gam) * (vC[1] - vT[1])
            if n % dec == 0:
                Pn = slave_pos(u_new)
                _, gap = _alpha_gap(Pn, pos_new[j1], pos_new[j2])
                xc = (1 - al) * pos[j1, 0] + al * pos[j2, 0]
                o_sig[j] = (t, lam, xc, vt, gap, seg, -bE[4] * lam, -bE[5] * lam)
                ou[j] = u[rows_out] - rigid_out * vx * t
                ov[j] = (u_new[rows_out] - u_prev[rows_out]) / (2 * h) - rigid_out * vx
                oa[j] = (u_new[rows_out] - 2 * u[rows_out] + u_prev[rows_out]) / h**2
                j += 1
            u_prev, u = u, u_new
            finished = n + 1
            if lam < 0:
                reason, n_done = 2, n + 1
                break
            if stop_on_stick and vt * sign <= 0:
                reason, n_done = 1, n + 1
                break
    except KeyboardInterrupt:  # Ctrl-C: the steps done so far
        reason, n_done = 4, finished
    outs = {}
    for i, k in enumerate(names1 + names2):
        outs[f"u_{k}"], outs[f"v_{k}"], outs[f"a_{k}"] = ou[:j, i], ov[:j, i], oa[:j, i]
    return _signal_dict(o_sig[:j], outs), reason, n_done, "dense-numpy"


def _alpha_gap(P, Q1, Q2):
    d = Q2 - Q1
    l2 = d @ d
    return ((P - Q1) @ d) / l2, (-d[1] * (P[0] - Q1[0]) + d[0] * (P[1] - Q1[1])) / np.sqrt(l2)
