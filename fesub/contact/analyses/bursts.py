"""Bursts of a transient signal and the eigenvalue analyses that predict them.

A *burst* is a self-excited oscillation that grows out of the background and decays again: in
the sliding transient, a flutter instability passed by the contact point. :func:`detect_bursts`
finds them in a signal (the tip acceleration) from band-limited envelopes; :func:`attribute`
looks each one up in the unstable eigenvalues of one or more analyses along the sliding path
(e.g. the undeformed and the deformed contact rows, :mod:`fesub.contact.deformed`).

Detection rule (defaults in brackets):

1. the signal is split into bands of relative width ``rel_band`` [20 %] covering
   [``fmin``, ``fmax``] [1-20 kHz], each filtered (4th-order Butterworth, zero phase);
2. the Hilbert envelope of each band, averaged over ``smooth`` [1 ms], is divided by its running
   median over ``background`` [0.2 s] (the background);
3. a burst is a peak of that ratio of at least ``ratio`` [8, i.e. 18 dB above the background] in
   any band; peaks closer than ``min_separation`` [20 ms] keep the largest; a rise that starts
   in the first ``skip`` [20 ms] (the start of the drive) is not a burst;
4. the peak must grow: at least ``min_rise`` [8 ms] from 30 % of the way (log amplitude) between
   background and peak to the peak (shorter peaks are spikes of the noise or the ringing after
   the kick of a node crossing; growth rates above about 0.7 ln(ratio) / min_rise, 300 1/s at
   a 30x peak, are missed).

Per burst: the time and contact position of the peak, the dominant frequency (Hz) of the signal
in the rise inside the band, and the growth rate (1/s) fitted log-linearly to the band envelope
over its rise (from 30 % to 90 % of the way, in log amplitude, from the background to the peak;
an amplitude e^{sigma t} is what an eigenvalue of real part sigma grows as).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...errors import ParameterError, check_positive
from ...io import Result, summary_record

__all__ = ["Burst", "BurstTable", "detect_bursts", "attribute", "band_envelopes", "ATTRIBUTIONS"]

#: labels of :meth:`BurstTable.attribution`
ATTRIBUTIONS = ("both", "undeformed", "deformed", "neither")


@dataclass
class Burst:
    """One burst: peak time ``t_peak`` (s), start of its rise ``t_rise`` (s), contact positions at
    both ``x_peak``, ``x_rise`` (m; NaN without a position signal), dominant frequency ``f_hz``
    (Hz), growth rate ``growth_1_s`` (1/s, log-linear fit to the rising envelope) with the fit's
    coefficient of determination ``fit_r2``, envelope ``ratio`` of peak to background (1), the
    detecting band ``band_hz`` (Hz) and ``peak`` envelope amplitude (unit of the signal)."""

    t_peak: float
    t_rise: float
    x_peak: float
    x_rise: float
    f_hz: float
    growth_1_s: float
    fit_r2: float
    ratio: float
    band_hz: tuple
    peak: float


def _bands(fmin, fmax, rel_band):
    edges = [fmin]
    while edges[-1] < fmax:
        edges.append(min(edges[-1] * (1 + rel_band), fmax))
    # half-overlapping bands: a burst on an edge is whole in the neighbouring band
    out = [(a, b) for a, b in zip(edges[:-1], edges[1:])]
    out += [(np.sqrt(a * b), min(np.sqrt(a * b) * (1 + rel_band), fmax)) for a, b in out[:-1]]
    return sorted(out)


def band_envelopes(t, x, *, fmin=1e3, fmax=20e3, rel_band=0.2, smooth=2e-3, background=0.2, step=5e-4):
    """Band-limited envelopes of ``x`` (uniformly sampled at times ``t``, s).

    Returns ``(te, bands, env, bg)``: envelope times te (s, every ``step`` s), the bands (Hz)
    (list of (low, high)), the envelopes env (n_bands, te.size) in the unit of x (Hilbert
    amplitude averaged over ``smooth`` s) and their running medians bg over ``background`` s.
    """
    from scipy.ndimage import median_filter

    t = np.asarray(t, float)
    x = np.asarray(x, float)
    if t.ndim != 1 or t.shape != x.shape or t.size < 64:
        raise ParameterError(f"t and x must be 1D arrays of the same length >= 64, got {t.shape}, {x.shape}")
    fs = 1.0 / float(np.median(np.diff(t)))
    fmax = min(float(fmax), 0.45 * fs)
    if not 0 < fmin < fmax:
        raise ParameterError(f"fmin must lie in (0, min(fmax, 0.45 fs) = {fmax:g}) Hz, got {fmin}")
    check_positive("rel_band", rel_band)
    bands = _bands(float(fmin), fmax, float(rel_band))
    dec = max(1, int(round(step * fs)))
    n_s = max(1, int(round(smooth * fs)))
    X = np.fft.fft(x - x.mean())
    f = np.fft.fftfreq(x.size, 1.0 / fs)
    env = np.empty((len(bands), t[::dec].size))
    for i, (a, b) in enumerate(bands):
        # analytic band signal: positive frequencies in [a, b], cosine tapers of 10 % of the
        # band's width outside it (a sharp edge would ring in time)
        w = 0.1 * (b - a)
        d = np.maximum(np.maximum(a - f, f - b), 0.0)
        H = np.where(f > 0, np.where(d < w, 0.5 + 0.5 * np.cos(np.pi * d / w), 0.0), 0.0)
        e = np.abs(2.0 * np.fft.ifft(X * H))
        env[i] = np.convolve(e, np.ones(n_s) / n_s, mode="same")[::dec]
    n_bg = max(3, int(round(background * fs / dec)) | 1)
    # one band at a time: SciPy's 1-D median filter slides a sorted window (about 50x faster here
    # than the N-D filter with a (1, n_bg) footprint, the same values)
    bg = np.array([median_filter(e, size=n_bg, mode="nearest") for e in env]).reshape(env.shape)
    return t[::dec], bands, env, np.maximum(bg, 1e-300)


def _growth(te, e, bg, i_pk):
    """Log-linear fit of the rise of envelope ``e`` to its peak ``i_pk``: (sigma 1/s, r^2, i_a,
    i_0): the fit runs from i_a (last sample before the peak below 30 % of the way, in log
    amplitude, from the background to the peak) to the first sample above 90 %; i_0 is the last
    sample before the peak at most twice the background (the start of the rise)."""
    y = np.log(e[:i_pk + 1])
    lo, hi = np.log(bg[i_pk]), y[i_pk]
    below = np.flatnonzero(y < lo + 0.3 * (hi - lo))
    i_a = int(below[-1]) if below.size else 0
    above = np.flatnonzero(y[i_a:] >= lo + 0.9 * (hi - lo))
    i_b = i_a + int(above[0]) if above.size else i_pk
    base = np.flatnonzero(e[:i_a + 1] <= 2.0 * bg[:i_a + 1])
    i_0 = int(base[-1]) if base.size else 0
    if i_b - i_a < 3:
        return float("nan"), float("nan"), i_a, i_0
    tt, yy = te[i_a:i_b + 1], y[i_a:i_b + 1]
    c = np.polyfit(tt, yy, 1)
    r = yy - np.polyval(c, tt)
    r2 = 1.0 - float(r @ r) / max(float(((yy - yy.mean()) ** 2).sum()), 1e-300)
    return float(c[0]), r2, i_a, i_0


def _dominant(t, x, t0, t1, band):
    from ...signal import window_spectrum

    t0 = min(t0, t1 - 16 / max(band[0], 1.0))  # at least 16 periods: ~6 % frequency resolution
    f, X = window_spectrum(t, x, t0, t1)
    sel = (f >= band[0] / (1 + 0.1)) & (f <= band[1] * (1 + 0.1))
    if not sel.any():
        return float("nan")
    return float(f[sel][np.argmax(X[sel])])


def detect_bursts(t, x, position=None, *, fmin=1e3, fmax=20e3, rel_band=0.2, ratio=8.0, background=0.2,
                  min_separation=0.02, skip=0.02, smooth=2e-3, min_rise=8e-3) -> list:
    """Bursts of signal ``x`` (sampled at times ``t``, s) by the rule of the module docstring.

    Parameters
    ----------
    t, x : 1D arrays, uniformly sampled (s; any unit).
    position : contact position (m) at each t (for ``x_peak``, ``x_rise``) or None.
    fmin, fmax : frequency range (Hz) searched; rel_band : relative width of each band (1).
    ratio : envelope peak over background (1) to count as a burst.
    background : window (s) of the running median; min_separation, skip, smooth : s.
    min_rise : shortest rise (s) from 30 % of the way (log amplitude) to the peak: shorter
        peaks are spikes of the noise, not a growing oscillation.

    Returns
    -------
    list of :class:`Burst`, in time order.
    """
    import scipy.signal as ss

    check_positive("ratio", ratio)
    check_positive("min_separation (s)", min_separation)
    te, bands, env, bg = band_envelopes(t, x, fmin=fmin, fmax=fmax, rel_band=rel_band, smooth=smooth,
                                        background=background)
    dt = te[1] - te[0]
    dist = max(1, int(round(min_separation / dt)))
    half = dist // 2
    cand = []
    for j in range(len(bands)):
        r = env[j] / bg[j]
        for i in ss.find_peaks(r, height=ratio, distance=dist)[0]:
            # the envelope's own maximum near the peak of the ratio
            a = max(0, i - half)
            i = a + int(np.argmax(env[j, a:i + half + 1]))
            sigma, r2, i_a, i_0 = _growth(te, env[j], bg[j], i)
            if te[i] - te[i_a] >= min_rise and np.isfinite(sigma) and te[i_0] >= te[0] + skip:
                cand.append((float(env[j, i] / bg[j, i]), i, j, sigma, r2, i_0))
    kept = []
    for c in sorted(cand, reverse=True):  # strongest first; weaker peaks nearby dropped
        if all(abs(te[c[1]] - te[k[1]]) >= min_separation for k in kept):
            kept.append(c)
    t_arr = np.asarray(t, float)
    out = []
    for rr, i, j, sigma, r2, i_0 in sorted(kept, key=lambda c: c[1]):
        f = _dominant(t_arr, x, te[i_0], te[i], bands[j])
        pos = ((float("nan"),) * 2 if position is None
               else tuple(float(v) for v in np.interp([te[i], te[i_0]], t_arr, position)))
        out.append(Burst(float(te[i]), float(te[i_0]), pos[0], pos[1], f, sigma, r2, rr,
                         (float(bands[j][0]), float(bands[j][1])), float(env[j, i])))
    return out


def _predict(b: Burst, positions, lam, f_tol, slack):
    """Largest unstable eigenvalue of one analysis at the positions crossed by burst ``b`` (from
    its rise to its peak, widened by ``slack`` m) within relative frequency ``f_tol``: (f Hz,
    real 1/s, position m) or None; NaN triple when the analysis has no position there."""
    x0, x1 = sorted((b.x_rise, b.x_peak))
    sel = (positions >= x0 - slack) & (positions <= x1 + slack)
    if not sel.any():
        return (float("nan"),) * 3
    L = lam[sel]
    f = L.imag / (2 * np.pi)
    ok = (L.real > 0) & (np.abs(f - b.f_hz) <= f_tol * b.f_hz)
    if not ok.any():
        return None
    i, k = np.unravel_index(np.argmax(np.where(ok, L.real, -np.inf)), L.shape)
    return float(f[i, k]), float(L[i, k].real), float(positions[sel][i])


def attribute(bursts, analyses: dict, *, f_tol=0.02, slack=None, name="") -> "BurstTable":
    """The bursts with, per analysis, the unstable eigenvalue that predicts each one.

    Parameters
    ----------
    bursts : list of :class:`Burst` (from :func:`detect_bursts`).
    analyses : ``{'undeformed': (positions m, lam (n_pos, n) 1/s), 'deformed': (...)}``, each the
        eigenvalues along the path (e.g. ``EigenLoci.positions, EigenLoci.lam``).
    f_tol : relative frequency tolerance (1) between a burst and a predicting eigenvalue.
    slack : positions (m) by which the crossed interval [x_rise, x_peak] is widened (default:
        the analysis' largest position spacing, at most 0.5 mm).
    name : label of the signal (e.g. the transient case).

    A burst is predicted by an analysis when an eigenvalue with a positive real part and a
    frequency within ``f_tol`` of the burst's lies at a position crossed while the burst grew.
    """
    check_positive("f_tol", f_tol)
    rows = {k: [] for k in analyses}
    for k, (pos, lam) in analyses.items():
        pos, lam = np.asarray(pos, float), np.asarray(lam, complex)
        sl = slack if slack is not None else (min(float(np.diff(pos).max()), 5e-4) if pos.size > 1 else 0.0)
        rows[k] = [_predict(b, pos, lam, f_tol, sl) for b in bursts]
    return BurstTable.from_bursts(bursts, rows, f_tol=f_tol, name=name)


_COLS = {  # column: (units, long name)
    "t_peak": ("s", "time of the envelope peak"), "t_rise": ("s", "start of the rise"),
    "x_peak": ("m", "contact position at the peak"), "x_rise": ("m", "contact position at the start of the rise"),
    "f_hz": ("Hz", "dominant frequency in the rise"), "growth_1_s": ("1/s", "growth rate of the envelope"),
    "fit_r2": ("1", "coefficient of determination of the log-linear fit"),
    "ratio": ("1", "envelope peak over running-median background"),
    "band_lo": ("Hz", "detecting band, low edge"), "band_hi": ("Hz", "detecting band, high edge"),
    "peak": ("signal unit", "envelope amplitude at the peak"),
}


@dataclass(eq=False)
class BurstTable(Result):
    """Bursts of a signal and their predictions. ``columns`` maps a name of ``_COLS`` (see
    :meth:`to_xarray` for units) to an array per burst; ``predicted[analysis]`` is an
    (n_bursts, 3) array of the predicting eigenvalue's frequency (Hz), real part (1/s) and
    position (m), NaN where the analysis predicts none (``covered[analysis]`` False where it has
    no position in the burst's interval). ``f_tol`` (1) is the frequency tolerance used."""

    columns: dict
    predicted: dict
    covered: dict
    f_tol: float
    name: str = ""
    status: str = "completed"
    kind = "bursts"

    @classmethod
    def from_bursts(cls, bursts, rows: dict, *, f_tol: float, name: str = "") -> "BurstTable":
        cols = {c: np.array([_field(b, c) for b in bursts], float) for c in _COLS}
        nan3 = (np.nan,) * 3
        pred = {k: np.array([r if r is not None else nan3 for r in v], float).reshape(len(bursts), 3)
                for k, v in rows.items()}
        cov = {k: np.array([r is None or np.isfinite(r[0]) for r in v], bool) for k, v in rows.items()}
        return cls(cols, pred, cov, float(f_tol), name)

    def __len__(self):
        return int(self.columns["t_peak"].size)

    def predicted_by(self, analysis: str) -> np.ndarray:
        """Boolean per burst: an unstable eigenvalue of ``analysis`` predicts it."""
        return np.isfinite(self.predicted[analysis][:, 0])

    def attribution(self) -> list:
        """Per burst: 'both', 'undeformed', 'deformed' or 'neither' (of the analyses named so)."""
        n = len(self)
        u = self.predicted_by("undeformed") if "undeformed" in self.predicted else np.zeros(n, bool)
        d = self.predicted_by("deformed") if "deformed" in self.predicted else np.zeros(n, bool)
        return [ATTRIBUTIONS[0] if a and b else ATTRIBUTIONS[1] if a else ATTRIBUTIONS[2] if b
                else ATTRIBUTIONS[3] for a, b in zip(u, d)]

    def records(self) -> list:
        """One dict per burst with SI units in the keys (for summaries)."""
        out = []
        for i, lab in enumerate(self.attribution()):
            c = {k: float(v[i]) for k, v in self.columns.items()}
            r = {"t_peak_s": c["t_peak"], "t_rise_s": c["t_rise"], "x_peak_m": c["x_peak"],
                 "x_rise_m": c["x_rise"], "f_hz": c["f_hz"], "growth_rate_1_s": c["growth_1_s"],
                 "fit_r2": c["fit_r2"], "peak_over_background": c["ratio"],
                 "band_hz": [c["band_lo"], c["band_hi"]], "predicted_by": lab}
            for k, P in self.predicted.items():
                ok = bool(np.isfinite(P[i, 0]))
                r[f"{k}_f_hz"] = float(P[i, 0]) if ok else None
                r[f"{k}_real_1_s"] = float(P[i, 1]) if ok else None
                r[f"{k}_at_m"] = float(P[i, 2]) if ok else None
                r[f"{k}_covered"] = bool(self.covered[k][i])
            out.append(r)
        return out

    def counts(self) -> dict:
        """Number of bursts in total and predicted by each analysis (and by none)."""
        lab = self.attribution()
        out = {"bursts": len(self)}
        out.update({f"predicted_{k}": int(self.predicted_by(k).sum()) for k in self.predicted})
        out["predicted_by_none"] = lab.count("neither")
        return out

    def to_xarray(self):
        import xarray as xr

        data = {c: ("burst", v, {"units": _COLS[c][0], "long_name": _COLS[c][1]}) for c, v in self.columns.items()}
        for k, P in self.predicted.items():
            for j, (q, u) in enumerate((("f", "Hz"), ("real", "1/s"), ("at", "m"))):
                data[f"{k}_{q}"] = ("burst", P[:, j], {"units": u, "long_name": f"{k} analysis: predicting "
                                                                                  f"eigenvalue {q}"})
            data[f"{k}_covered"] = ("burst", self.covered[k].astype(np.int8),
                                    {"units": "1", "long_name": f"{k} analysis has positions there"})
        return xr.Dataset(data, coords={"burst": ("burst", np.arange(len(self)), {"units": "1"})},
                          attrs={"f_tol": self.f_tol, "name": self.name, "status": self.status,
                                 "analyses": ",".join(self.predicted)})

    @classmethod
    def from_xarray(cls, ds):
        names = [k for k in ds.attrs["analyses"].split(",") if k]
        cols = {c: ds[c].values.astype(float) for c in _COLS}
        pred = {k: np.stack([ds[f"{k}_{q}"].values for q in ("f", "real", "at")], axis=1).astype(float)
                for k in names}
        cov = {k: ds[f"{k}_covered"].values.astype(bool) for k in names}
        return cls(cols, pred, cov, float(ds.attrs["f_tol"]), str(ds.attrs["name"]), status=ds.attrs["status"])

    def summary(self) -> dict:
        c = self.counts()
        return summary_record(self.kind, {"f_tol": (self.f_tol, "1"), "signal": (self.name, None)},
                              {k: (v, None) for k, v in c.items()}, details={"bursts": self.records()})


def _field(b: Burst, c: str) -> float:
    if c == "band_lo":
        return b.band_hz[0]
    if c == "band_hi":
        return b.band_hz[1]
    return getattr(b, c)
