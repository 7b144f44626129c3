"""Time-dependent FRF of the sliding contact: :func:`time_dependent_frf` and its result.

The time-dependent FRF evaluates eq. (45) (see :mod:`fesub.contact.receptance`) at the contact
positions of the rigid relative motion ``s(t) = s0 + vx t`` in the undeformed geometry (B_E(t),
B_C(t) a priori, as in the paper's section 2.3). Times on the same target segment share the
segment's modal products, so the cost is one small matrix product per segment plus O(1) work per
(t, w). :class:`TDFRFResult` holds the map ``H(t, f)`` with the contact positions and draws it.

Units: forces in N, displacements in m, receptance in m/N, accelerance in (m/s^2)/N, frequencies
``freqs_hz`` in Hz, positions in m, times in s.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...errors import ModelError, ParameterError
from ...io import Result, summary_record
from .receptance import ModalBasis, channel, check_mu, coupled_response, modal_factors, omega_grid

__all__ = ["time_dependent_frf", "TDFRFResult", "segment_positions"]


def segment_positions(system, positions) -> tuple[np.ndarray, np.ndarray]:
    """Target segment and alpha (0 at T1, 1 at T2) of each contact position (x on the target, m,
    undeformed geometry). A position on a node belongs to the segment it starts (the last
    segment keeps its end node). Raises :class:`ParameterError` for positions off the target."""
    s = np.atleast_1d(np.asarray(positions, float))
    if not np.all(np.isfinite(s)):
        raise ParameterError("contact positions must be finite")
    x1 = system.XT[system.segs[:, 0], 0]
    x2 = system.XT[system.segs[:, 1], 0]
    if np.any(x1 == x2):
        raise ModelError("a target segment is vertical: the contact position x does not locate it")
    al = (s[:, None] - x1[None, :]) / (x2 - x1)[None, :]
    last = np.zeros(x1.size, bool)
    last[-1] = True
    ok = (al >= 0) & ((al < 1) | ((al <= 1) & last[None, :]))
    hit = ok.any(axis=1)
    if not hit.all():
        bad = s[~hit]
        raise ParameterError(f"contact positions must lie on the target, x in [{min(x1.min(), x2.min()):.6g}, "
                             f"{max(x1.max(), x2.max()):.6g}] m; got {bad[:3].tolist()} (from s0 + vx t)")
    seg = np.argmax(ok, axis=1)
    return seg, al[np.arange(s.size), seg]


_FRF_UNITS = {"receptance": "m/N", "accelerance": "(m/s^2)/N"}


@dataclass(eq=False)
class TDFRFResult(Result):
    """Time-dependent FRF ``H[i, j]`` at ``times[i]`` (s) and ``freqs_hz[j]`` (Hz).

    ``kind`` is 'receptance' (m/N) or 'accelerance' ((m/s^2)/N); ``positions`` (m) are the contact
    positions s(t) on the target, ``segments``/``alpha`` their target segment and coordinate.
    ``info`` records the status ('completed' or 'interrupted': then the times done so far), s0
    (m), vx (m/s), the friction sign and the number of target segments crossed.
    """

    times: np.ndarray
    freqs_hz: np.ndarray
    H: np.ndarray
    positions: np.ndarray
    segments: np.ndarray
    alpha: np.ndarray
    mu: float
    inp: str
    out: str
    kind: str = field()  # required (the base class's ``kind`` is the result kind of summaries)
    info: dict = field(default_factory=dict)

    @property
    def freqs(self) -> np.ndarray:
        """Alias of ``freqs_hz`` (Hz)."""
        return self.freqs_hz

    @property
    def status(self) -> str:
        """'completed', or 'interrupted' (Ctrl-C: the times done so far)."""
        return self.info.get("status", "completed")

    def magnitude_db(self, ref: float = 1.0) -> np.ndarray:
        """20 log10(|H| / ref) (dB; -inf where H = 0)."""
        with np.errstate(divide="ignore"):
            return 20.0 * np.log10(np.abs(self.H) / ref)

    def details(self) -> dict:
        """Flat record: grid sizes and ranges (keys carry their units), channels, largest |H|."""
        return {"n_times": int(self.times.size), "n_freqs": int(self.freqs_hz.size),
                "t_range_s": [float(self.times.min()), float(self.times.max())] if self.times.size else None,
                "f_range_hz": [float(self.freqs_hz.min()), float(self.freqs_hz.max())],
                "position_range_m": ([float(self.positions.min()), float(self.positions.max())]
                                     if self.positions.size else None),
                "mu": self.mu, "input": self.inp, "output": self.out, "kind": self.kind,
                "max_abs": float(np.abs(self.H).max()) if self.H.size else None, **self.info}

    def summary(self) -> dict:
        unit = _FRF_UNITS.get(self.kind)
        d = self.details()
        return summary_record(
            "time-dependent-frf",
            {"mu": (self.mu, "1"), "input": (self.inp, None), "output": (self.out, None),
             "kind": (self.kind, None), "n_times": (d["n_times"], None), "n_freqs": (d["n_freqs"], None),
             "f_max": (d["f_range_hz"][1], "Hz"), "s0": (self.info.get("s0_m"), "m"),
             "vx": (self.info.get("vx_m_s"), "m/s")},
            {"max_abs_H": (d["max_abs"], unit), "status": (self.status, None)}, details=d)

    def to_xarray(self):
        import xarray as xr

        tdim = ("time",)
        return xr.Dataset(
            {"H": (("time", "frequency"), self.H,
                   {"units": _FRF_UNITS.get(self.kind, "1"), "long_name": f"{self.kind} {self.inp} -> {self.out}"}),
             "positions": (tdim, self.positions, {"units": "m", "long_name": "contact position s(t) on the target"}),
             "segments": (tdim, self.segments, {"units": "1", "long_name": "target segment under the contact"}),
             "alpha": (tdim, self.alpha, {"units": "1", "long_name": "coordinate on the segment (0 at T1, 1 at T2)"})},
            coords={"time": ("time", self.times, {"units": "s"}),
                    "frequency": ("frequency", self.freqs_hz, {"units": "Hz"})},
            attrs={"mu": float(self.mu), "inp": self.inp, "out": self.out, "kind": self.kind, "info": self.info})

    @classmethod
    def from_xarray(cls, ds):
        a = ds.attrs
        return cls(times=ds["time"].values, freqs_hz=ds["frequency"].values, H=ds["H"].values,
                   positions=ds["positions"].values, segments=ds["segments"].values, alpha=ds["alpha"].values,
                   mu=a["mu"], inp=a["inp"], out=a["out"], kind=a["kind"], info=a["info"])

    def plot(self, ax=None, *, vmin_db: float | None = None):
        """Map of 20 log10 |H| over (t, f) (the paper's Fig. 9); returns the matplotlib axes.

        The colour scale spans the top 100 dB (from ``vmin_db`` dB if given)."""
        from ...plots import style

        plt = style.pyplot()
        if ax is None:
            _, ax = plt.subplots(figsize=(7, 4))
        db = self.magnitude_db()
        lo, hi = style.db_limits(db)  # the top 100 dB (a -inf at 0 Hz would spoil the scale)
        lo = lo if vmin_db is None else float(vmin_db)
        im = ax.pcolormesh(self.times, self.freqs_hz / 1e3, np.ma.masked_invalid(db.T), shading="auto",
                           vmin=lo, vmax=hi, cmap="viridis")
        unit = "m/N" if self.kind == "receptance" else "(m/s$^2$)/N"
        ax.figure.colorbar(im, ax=ax, label=f"|H| (dB re 1 {unit})")
        ax.set_xlabel("time (s)")
        ax.set_ylabel("frequency (kHz)")
        ax.set_title(f"time-dependent FRF {self.inp} -> {self.out}, mu = {self.mu:g}")
        return ax


def _name(ch) -> str:
    """Channel name as recorded in a result: a named channel, or 'q1[i]' / 'q2[i]'."""
    return ch if isinstance(ch, str) else f"q{ch[0]}[{ch[1]}]"


def time_dependent_frf(system, times, freqs_hz, inp="C_y", out="T_y", mu: float = 0.0,
                       s0: float | None = None, vx: float = 0.030, *, sign: float | None = None,
                       accelerance: bool = False, progress: bool = False) -> TDFRFResult:
    """Time-dependent FRF, eq. (45), at the contact positions ``s(t) = s0 + vx t``.

    B_E(t), B_C(t) come a priori from the rigid relative motion in the undeformed geometry (the
    paper's section 2.3). Every (t, w) is evaluated with modal receptances restricted to the needed
    rows: per target segment, one product of the few modal rows (slave, segment end nodes, input,
    output) with the modal factor matrix ``D[k, w]``; per time only the position alpha on the
    segment changes, and eq. (45) reduces to scalar operations (plus the rigid-body modes, see the
    module docstring). No matrix is inverted per (t, w).

    Parameters
    ----------
    system : SlidingContactSystem
    times : (nt,) s.
    freqs_hz : (nf,) Hz, >= 0.
    inp, out : channels (see :func:`channel`); default: vertical force at the slave C, vertical
        response of the beam tip T (the paper's Fig. 9).
    mu : friction coefficient.
    s0 : contact position at t = 0 (m); default: x of the slave node in the mesh.
    vx : sliding velocity of the slave along the target (m/s).
    sign : sign of the sliding velocity used by the friction term (default: sign of vx, + for 0).
    accelerance : return -w^2 H ((m/s^2)/N), the paper's input force -> tip acceleration.
    progress : show a progress bar over target segments (off by default: the paper grid takes
        about 1.5 s).

    Returns
    -------
    TDFRFResult with ``H`` of shape (nt, nf). If interrupted (Ctrl-C), the times done so far.
    """
    t, f, s0, sign = _check_path(system, times, freqs_hz, mu, s0, vx, sign)
    w = 2 * np.pi * f
    ci, co = channel(system, inp), channel(system, out)
    pos = s0 + vx * t
    seg, alpha = segment_positions(system, pos)
    rows = _modal_rows(system, ci, co, w)
    H, done, status = _evaluate(system, rows, seg, alpha, ci, co, mu, sign, progress)
    if accelerance:
        H *= -(w * w)[None, :]
    keep = done if status != "completed" else slice(None)
    info = {"status": status, "s0_m": s0, "vx_m_s": float(vx), "sign": float(sign),
            "n_segments": int(np.unique(seg).size)}
    return TDFRFResult(times=t[keep], freqs_hz=f, H=H[keep], positions=pos[keep], segments=seg[keep],
                       alpha=alpha[keep], mu=float(mu), inp=_name(inp), out=_name(out),
                       kind="accelerance" if accelerance else "receptance", info=info)


def _check_path(system, times, freqs_hz, mu, s0, vx, sign):
    """Validate the grid and the sliding path of :func:`time_dependent_frf`.

    Returns the times (s), the frequencies (Hz), s0 (m; default: x of the slave node) and the
    friction sign (default: the sign of vx, + for 0); raises :class:`ParameterError`.
    """
    t = np.atleast_1d(np.asarray(times, float))
    if t.ndim != 1 or t.size == 0 or not np.all(np.isfinite(t)):
        raise ParameterError("times must be a non-empty 1D array of finite values (s)")
    f = omega_grid(freqs_hz, "freqs_hz (Hz)")
    check_mu(mu)
    if not np.isfinite(vx):
        raise ParameterError(f"vx must be finite (m/s), got {vx}")
    s0 = float(system.X_C[0]) if s0 is None else float(s0)
    if sign is None:
        sign = 1.0 if vx >= 0 else -1.0
    elif sign not in (1, -1, 1.0, -1.0):
        raise ParameterError(f"sign must be +1 or -1, got {sign}")
    return t, f, s0, sign


@dataclass
class _ModalRows:
    """What every segment of the path shares: the modal bases ``b1``, ``b2`` with their flexible
    masks ``f1``, ``f2``; the modal factors of the flexible modes as real views ``D1r``, ``D2r``
    (k, 2 nw); the modal rows of the slave (``phiC``, (2, m1)), of the target nodes (``phiT``,
    (nt, 2, m2)), of the input and output channels; the direct term ``Y0`` (nw,) (m/N); and for
    the rigid-body modes of both substructures (mask ``rig``, ``m1`` modes of substructure 1) the
    factors ``dr`` (nw, nr) and the channel rows ``G_r``, ``O_r`` (nr,)."""

    b1: ModalBasis
    b2: ModalBasis
    f1: np.ndarray
    f2: np.ndarray
    D1r: np.ndarray
    D2r: np.ndarray
    phiC: np.ndarray
    phiT: np.ndarray
    phi_in: np.ndarray
    phi_out: np.ndarray
    Y0: np.ndarray
    m1: int
    rig: np.ndarray
    dr: np.ndarray
    G_r: np.ndarray
    O_r: np.ndarray


def _hsum(rows_a, rows_b, Dr):
    """``sum_k a_k b_k D_k`` for stacked rows against a real view of D: (nrows, 2 nw) reals, whose
    complex view is the (nrows, nw) sums."""
    return (rows_a * rows_b) @ Dr


def _modal_rows(system, ci, co, w) -> _ModalRows:
    """The modal data of the path shared by every segment (see :class:`_ModalRows`), for input
    channel ``ci``, output channel ``co`` and angular frequencies ``w`` (rad/s)."""
    b1, b2 = ModalBasis.of_system(system, 1), ModalBasis.of_system(system, 2)
    f1, f2 = ~b1.rigid, ~b2.rigid
    D1 = modal_factors(b1.w2[f1], b1.c[f1], w)
    D2 = modal_factors(b2.w2[f2], b2.c[f2], w)
    # real views (k, 2 nw): a real row times D is one real matrix product
    D1r = np.ascontiguousarray(D1).view(np.float64)
    D2r = np.ascontiguousarray(D2).view(np.float64)
    phiC = b1.phi[system.iC]                     # (2, m1): Cx, Cy rows
    phiT = np.zeros((system.XT.shape[0], 2, b2.w2.size))
    for cc in range(2):
        ok = system.T_rows[:, cc] >= 0
        phiT[ok, cc] = b2.phi[system.T_rows[ok, cc]]
    phi_in = (b1 if ci[0] == 1 else b2).phi[ci[1]]
    phi_out = (b1 if co[0] == 1 else b2).phi[co[1]]
    # direct term: only when input and output are on the same substructure
    if ci[0] == co[0]:
        ff, Dr = (f1, D1r) if ci[0] == 1 else (f2, D2r)
        Y0 = _hsum(phi_out[ff][None], phi_in[ff][None], Dr).view(complex)[0]
    else:
        Y0 = np.zeros(w.size, complex)
    # rigid-body modes of both substructures (module docstring of fesub.contact.receptance)
    m1 = b1.w2.size
    rig = np.r_[b1.rigid, b2.rigid]
    c_r = np.r_[b1.c, b2.c][rig]
    dr = -(w * w)[:, None] + 1j * w[:, None] * c_r[None, :]      # (nw, nr)

    def gvec(sub, phi_row):  # modal row over both substructures, restricted to rigid modes
        v = np.zeros(rig.size)
        if sub == 1:
            v[:m1] = phi_row
        else:
            v[m1:] = phi_row
        return v[rig]

    return _ModalRows(b1, b2, f1, f2, D1r, D2r, phiC, phiT, phi_in, phi_out, Y0, m1, rig, dr,
                      gvec(ci[0], phi_in), gvec(co[0], phi_out))


def _evaluate(system, rows: _ModalRows, seg, alpha, ci, co, mu, sign, progress):
    """Eq. (45) at every time, one target segment at a time (with a progress bar over segments).

    Returns ``H`` (nt, nw) (m/N), the mask of the times done and the status: 'completed', or
    'interrupted' (Ctrl-C: the segments finished so far are kept).
    """
    from tqdm.auto import tqdm

    H = np.zeros((seg.size, rows.dr.shape[0]), complex)
    done = np.zeros(seg.size, bool)
    status = "completed"
    bar = tqdm(np.unique(seg), disable=not progress, desc=f"TD-FRF mu={mu:g}", unit="segment")
    try:
        for k in bar:
            sel = np.flatnonzero(seg == k)
            H[sel] = _segment_frf(system, rows, k, alpha[sel], ci, co, mu, sign)
            done[sel] = True
    except KeyboardInterrupt:
        status = "interrupted"
    finally:
        bar.close()
    return H, done, status


def _segment_frf(system, rows: _ModalRows, k, alpha, ci, co, mu, sign):
    """Eq. (45) at the contact positions ``alpha`` (0 at T1, 1 at T2) on target segment ``k``:
    (len(alpha), nw) receptances (m/N) from the segment's modal sums and the bordered solve."""
    r = rows
    j1, j2 = system.segs[k]
    d = system.XT[j2] - system.XT[j1]
    gam = np.arctan2(d[1], d[0])
    sg, cg = np.sin(gam), np.cos(gam)
    u = np.array([-sg, cg])                            # normal (compatibility) direction
    g = np.array([-sg - sign * mu * cg, cg - sign * mu * sg])  # (G1, G2), eq. (39)
    # slave side (substructure 1): bC_C = -u, bE_C = -g
    uC, gC = u @ r.phiC, g @ r.phiC
    rows1 = [(uC, gC)]
    if ci[0] == 1:
        rows1.append((uC, r.phi_in))
    if co[0] == 1:
        rows1.append((r.phi_out, gC))
    A1 = np.stack([x[r.f1] for x, _ in rows1]), np.stack([y[r.f1] for _, y in rows1])
    S1 = _hsum(A1[0], A1[1], r.D1r).view(complex)
    a1 = S1[0]
    p1 = -S1[1] if ci[0] == 1 else 0.0
    q1 = -S1[-1] if co[0] == 1 else 0.0
    # target side (substructure 2): bC_T = [(1-a) u, a u], bE_T = [(1-a) g, a g]
    U1, U2 = u @ r.phiT[j1], u @ r.phiT[j2]
    E1, E2 = g @ r.phiT[j1], g @ r.phiT[j2]
    rows2 = [(U1, E1), (U1, E2), (U2, E1), (U2, E2)]
    if ci[0] == 2:
        rows2 += [(U1, r.phi_in), (U2, r.phi_in)]
    if co[0] == 2:
        rows2 += [(r.phi_out, E1), (r.phi_out, E2)]
    A2 = np.stack([x[r.f2] for x, _ in rows2]), np.stack([y[r.f2] for _, y in rows2])
    S2 = _hsum(A2[0], A2[1], r.D2r).view(complex)
    al = alpha[:, None]
    be = 1.0 - al
    a = a1[None, :] + be * be * S2[0] + be * al * (S2[1] + S2[2]) + al * al * S2[3]
    i0 = 4
    if ci[0] == 2:
        p = be * S2[i0] + al * S2[i0 + 1]
        i0 += 2
    else:
        p = np.broadcast_to(p1, a.shape)
    if co[0] == 2:
        q = be * S2[i0] + al * S2[i0 + 1]
    else:
        q = np.broadcast_to(q1, a.shape)
    rho, sig = _rigid_rows(r, j1, j2, u, g, al, be)
    return coupled_response(a, p, q, np.broadcast_to(r.Y0, a.shape), rho, sig, r.G_r, r.O_r, r.dr[None])


def _rigid_rows(r: _ModalRows, j1, j2, u, g, al, be):
    """``rho = B_C Phi_r`` and ``sigma = B_E Phi_r`` of the rigid-body modes at each position (over
    the 6 contact DOFs: slave, target nodes ``j1``, ``j2`` weighted ``be``, ``al``), shaped
    (n, 1, nr) for :func:`fesub.contact.receptance.coupled_response` (nr = 0 without rigid modes)."""
    rig = r.rig
    if not rig.any():
        rho = sig = np.zeros((al.shape[0], 1, 0))
        return rho, sig
    m1 = r.m1
    Pr1 = np.zeros((2, rig.size))
    Pr1[:, :m1] = r.phiC
    PrT1 = np.zeros((2, rig.size))
    PrT1[:, m1:] = r.phiT[j1]
    PrT2 = np.zeros((2, rig.size))
    PrT2[:, m1:] = r.phiT[j2]
    Pr1, PrT1, PrT2 = Pr1[:, rig], PrT1[:, rig], PrT2[:, rig]
    rho = (-u @ Pr1)[None, :] + be * (u @ PrT1)[None, :] + al * (u @ PrT2)[None, :]
    sig = (-g @ Pr1)[None, :] + be * (g @ PrT1)[None, :] + al * (g @ PrT2)[None, :]
    return rho[:, None, :], sig[:, None, :]
