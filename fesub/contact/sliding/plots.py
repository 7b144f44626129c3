"""Figures of the sliding-contact study (matplotlib, written to PNG through :mod:`fesub.plots.style`).

Every function draws one figure, writes it with :func:`fesub.plots.style.save` and returns the
path. Axes carry SI-derived units (lengths in mm, frequencies in kHz where that reads better), dB
colour maps span :data:`fesub.plots.style.DB_SPAN` dB below their maximum, and default titles name
the case (friction coefficient, roughness, noise seed, load).

* :func:`plot_loci`, :func:`plot_max_real`, :func:`plot_stability_map` - complex eigenvalues of the
  contact linearised at each position;
* :func:`plot_transient`, :func:`plot_spectrogram`, :func:`plot_burst_spectra` - transients;
* :func:`plot_burst_attribution` - bursts of the transients against the largest real part with
  the undeformed and the deformed contact rows;
* :func:`plot_tdfrf` - time-dependent FRF;
* :func:`plot_coupled_modes` - mode shapes of both substructures in place (from
  :mod:`fesub.plots.modes`).
"""

from __future__ import annotations

import re

import numpy as np

from ...errors import ParameterError
from ...plots import style
from ...plots.modes import plot_coupled_modes

__all__ = ["plot_loci", "plot_max_real", "plot_transient", "plot_spectrogram", "plot_burst_spectra",
           "plot_burst_attribution", "plot_tdfrf", "plot_stability_map", "plot_coupled_modes", "channel_info", "case_label"]

#: signals every transient records: name -> (label, unit shown, factor from SI to the unit shown)
_FIXED_CHANNELS = {
    "t": ("time", "s", 1.0),
    "lambda": ("contact force lambda", "N", 1.0),
    "x_contact": ("contact position on the target", "mm", 1e3),
    "v_t": ("sliding velocity v_t of the slave", "mm/s", 1e3),
    "gap": ("gap after the step", "um", 1e6),
    "segment": ("target segment", "-", 1.0),
    "f_x": ("contact force on the slave f_x", "N", 1.0),
    "f_y": ("contact force on the slave f_y", "N", 1.0),
}
#: output channels 'u_NAME', 'v_NAME', 'a_NAME' of a node/component NAME such as 'T_y'
_OUTPUT_KINDS = {"u": ("displacement", "mm", 1e3), "v": ("velocity", "mm/s", 1e3),
                 "a": ("acceleration", "m/s^2", 1.0)}
_OUTPUT = re.compile(r"^([uva])_(.+)$")


def channel_info(name: str) -> tuple[str, str, str, float]:
    """Label and units of a transient signal channel.

    Parameters
    ----------
    name : str
        A key of :attr:`fesub.contact.TransientResult.signals`: ``'t'``, ``'lambda'``,
        ``'x_contact'``, ``'v_t'``, ``'gap'``, ``'segment'``, ``'f_x'``, ``'f_y'``, or an output
        channel ``'u_NAME'`` (m), ``'v_NAME'`` (m/s), ``'a_NAME'`` (m/s^2) with NAME such as ``'T_y'``.

    Returns
    -------
    (label, si_unit, shown_unit, factor) : the signal is plotted as ``factor * value`` in
    ``shown_unit``; ``si_unit`` is :func:`fesub.contact.transient.signal_unit` (``-`` for a
    dimensionless one). An unknown name is a ParameterError.
    """
    from .transient import signal_unit

    si = signal_unit(name)
    si = "-" if si == "1" else si
    if name in _FIXED_CHANNELS:
        return (_FIXED_CHANNELS[name][0], si, *_FIXED_CHANNELS[name][1:])
    m = _OUTPUT.match(name)
    kind, shown, factor = _OUTPUT_KINDS[m.group(1)]
    node = m.group(2).replace("_", ",", 1)  # T_y -> T,y
    return f"{kind} {m.group(1)}_{node}", si, shown, factor


def _axis_label(name: str) -> str:
    label, _, shown, _ = channel_info(name)
    return f"{label} [{shown}]"


def _record(result, attr: str, info_key: str):
    """``result.attr`` or ``result.info[info_key]`` (None when the result records neither)."""
    value = getattr(result, attr, None)
    if value is None or callable(value):
        value = (getattr(result, "info", None) or {}).get(info_key)
    return value


def case_label(result) -> str:
    """One line naming a transient case: friction coefficient, smooth or rough (noise standard
    deviation and seed), load and sliding velocity, as far as ``result`` records them.

    Looked up as attributes of ``result`` (``mu``, ``roughness_std`` N, ``seed``,
    ``normal_load`` N, ``vx`` m/s) or, failing that, in ``result.info`` (``roughness_std_N``, ``seed``, ``load_N``,
    ``vx_m_s``); what neither records is left out.
    """
    parts = [f"mu = {float(result.mu):g}"]
    std = _record(result, "roughness_std", "roughness_std_N")
    if std is not None:
        std = float(std)
        seed = _record(result, "seed", "seed")
        if std > 0:
            rough = f"rough (noise std {std * 1e3:.3g} mN"
            parts.append(rough + (f", seed {seed})" if seed is not None else ")"))
        else:
            parts.append("smooth")
    load = _record(result, "normal_load", "load_N")
    if load is not None:
        parts.append(f"load {float(load):.3g} N")
    vx = _record(result, "vx", "vx_m_s")
    if vx is not None:
        parts.append(f"vx = {float(vx) * 1e3:.3g} mm/s")
    return ", ".join(parts)


def plot_loci(loci, path, *, rayleigh=(), title=None):
    """Complex-plane eigenvalue loci coloured by contact position, unstable eigenvalues in red.

    Parameters
    ----------
    loci : fesub.contact.eigen.EigenLoci
        ``positions`` (m), ``lam`` (complex, n_positions x n, 1/s), ``mu``.
    path : str or path-like
        PNG to write.
    rayleigh : sequence of (label, alpha, beta)
        Rayleigh damping (1/s, s) drawn as the lines s = -zeta w + j w sqrt(1 - zeta^2).
    title : str, optional
        Default names mu and the number of unstable eigenvalues.
    """
    from ...fe.assembly import rayleigh_root

    plt = style.pyplot()
    lam = np.asarray(loci.lam)
    pos = np.repeat(np.asarray(loci.positions)[:, None] * 1e3, lam.shape[1], axis=1)
    fig, ax = plt.subplots(figsize=(7.5, 5))
    sc = ax.scatter(lam.real.ravel(), lam.imag.ravel() / (2 * np.pi) / 1e3, c=pos.ravel(), s=3,
                    cmap="viridis", label="eigenvalues")
    fig.colorbar(sc, ax=ax, label="contact position [mm]")
    bad = lam.real > 0
    n_bad = int(bad.sum())
    ax.scatter(lam.real[bad], lam.imag[bad] / (2 * np.pi) / 1e3, s=28, facecolors="none", edgecolors="red",
               linewidths=1.0, label=f"Re(lambda) > 0: {n_bad} of {lam.size}", gid="unstable")
    wmax = max(float(np.abs(lam.imag).max()) * 1.05 if lam.size else 0.0, 2.0)  # (an interrupt: none)
    w = np.linspace(1.0, wmax, 400)
    for (label, a, b), ls in zip(rayleigh, (":", "--", "-.")):
        r = rayleigh_root(w, a, b)
        ax.plot(r.real, r.imag / (2 * np.pi) / 1e3, "k" + ls, lw=0.8, label=f"Rayleigh line, {label}")
    ax.axvline(0.0, color="0.4", lw=0.6)
    ax.set_xlabel("Re(lambda) [1/s]")
    ax.set_ylabel("Im(lambda)/2pi [kHz]")
    ax.set_title(title or f"eigenvalue loci, mu = {loci.mu:g}: {n_bad} unstable eigenvalue(s)"
                 + _interrupted(loci))
    ax.legend(loc="upper left", fontsize=8)
    return style.save(fig, path)


def plot_max_real(loci_list, path, *, title=None):
    """Largest real part of the eigenvalues (1/s) against contact position, one line per mu.

    ``loci_list`` holds :class:`fesub.contact.eigen.EigenLoci`; positions where it is positive
    (unstable) are marked.
    """
    plt = style.pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 3.8), layout="constrained")
    for L in loci_list:
        x = np.asarray(L.positions) * 1e3
        m = np.asarray(L.lam).real.max(axis=1)
        (line,) = ax.plot(x, m, label=f"mu = {L.mu:g}")
        hot = m > 0
        if hot.any():
            ax.plot(x[hot], m[hot], "o", ms=3, color=line.get_color(),
                    label=f"mu = {L.mu:g}: unstable at {int(hot.sum())} position(s)")
    ax.axhline(0.0, color="k", lw=0.6, label="stability boundary (0)")
    ax.set_xlabel("contact position [mm]")
    ax.set_ylabel("max Re(lambda) [1/s]")
    mus = ", ".join(f"{L.mu:g}" for L in loci_list)
    ax.set_title(title or f"largest real part of the eigenvalues, mu = {mus}")
    ax.legend(fontsize=8)
    return style.save(fig, path)


def plot_burst_attribution(loci, deformed, tables, path, *, title=None):
    """Largest real part (1/s) along the sliding path with the undeformed and the deformed contact
    rows, and the bursts of the transients at their contact positions.

    Parameters
    ----------
    loci : fesub.contact.eigen.EigenLoci, the undeformed loci along the whole path (line).
    deformed : fesub.contact.eigen.EigenLoci of the deformed sliding states (dots; e.g.
        ``eigenvalue_loci(..., geometry='deformed')`` or ``GeometryComparison.loci('deformed')``).
    tables : {case: fesub.contact.bursts.BurstTable}; each burst is drawn as a bar from the
        position where it began to rise to that of its peak, at the height of its measured growth
        rate (1/s), coloured by the analysis that predicts it.
    path : PNG to write.
    """
    plt = style.pyplot()
    fig, ax = plt.subplots(figsize=(8.5, 4.2))
    ax.plot(np.asarray(loci.positions) * 1e3, np.asarray(loci.lam).real.max(axis=1), lw=0.8, color="0.4",
            label="undeformed contact rows")
    ax.plot(np.asarray(deformed.positions) * 1e3, np.asarray(deformed.lam).real.max(axis=1), "o", ms=3,
            color="C3", label="deformed sliding state")
    colours = {"both": "C2", "undeformed": "C0", "deformed": "C3", "neither": "k"}
    seen = set()
    for k, (case, T) in enumerate(tables.items()):
        c = T.columns
        for i, lab in enumerate(T.attribution()):
            g = c["growth_1_s"][i]
            ax.plot([c["x_rise"][i] * 1e3, c["x_peak"][i] * 1e3], [g, g], "-", lw=3, color=colours[lab],
                    marker="v" if k else "^", ms=5,
                    label=None if (case, lab) in seen else f"burst, {case}: predicted by {lab}")
            seen.add((case, lab))
    ax.axhline(0.0, color="k", lw=0.6)
    ax.set_xlabel("contact position [mm]")
    ax.set_ylabel("max Re(lambda), burst growth rate [1/s]")
    ax.set_title(title or f"largest real part and bursts, mu = {deformed.mu:g}")
    ax.legend(fontsize=7, ncol=2)
    return style.save(fig, path)


def plot_stability_map(smap, path, *, title=None):
    """Map of the largest real part (1/s) over contact position and friction coefficient.

    Parameters
    ----------
    smap : fesub.contact.eigen.StabilityMap
        ``positions`` (m), ``mus``, ``max_real`` (n_mu, n_pos) (1/s; NaN where not computed), as
        from :func:`fesub.contact.eigen.max_real_part_map`.
    path : PNG to write.
    title : default names the number of eigenvalues examined.

    The colour scale is centred on 0 (blue stable, red unstable); the zero contour, the stability
    boundary, is drawn in black where the map changes sign.
    """
    from matplotlib.colors import Normalize, TwoSlopeNorm
    from matplotlib.lines import Line2D

    positions = np.asarray(smap.positions, float) * 1e3
    mus = np.asarray(smap.mus, float)
    maxre = np.asarray(smap.max_real, float)
    if maxre.shape != (mus.size, positions.size):
        raise ParameterError(f"max_real must have shape (len(mus), len(positions)) = ({mus.size}, "
                             f"{positions.size}), got {maxre.shape}")
    plt = style.pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 4))
    finite = maxre[np.isfinite(maxre)]
    if finite.size and finite.min() < 0 < finite.max():
        # both signs: each side of 0 gets its full half of the colour map
        norm = TwoSlopeNorm(vcenter=0.0, vmin=float(finite.min()), vmax=float(finite.max()))
    else:
        lim = float(np.abs(finite).max()) if finite.size and np.abs(finite).max() > 0 else 1.0
        norm = Normalize(-lim, lim)
    im = ax.pcolormesh(positions, mus, np.ma.masked_invalid(maxre), cmap="RdBu_r", norm=norm, shading="auto")
    fig.colorbar(im, ax=ax, label="max Re(lambda) [1/s]")
    if finite.size and finite.min() < 0 < finite.max() and min(maxre.shape) > 1:
        ax.contour(positions, mus, maxre, levels=[0.0], colors="k", linewidths=1.0)
        ax.legend(handles=[Line2D([], [], color="k", lw=1.0, label="stability boundary, max Re = 0")],
                  loc="upper right", fontsize=8)
    ax.set_xlabel("contact position [mm]")
    ax.set_ylabel("friction coefficient mu [-]")
    n = getattr(smap, "n", None)
    ax.set_title(title or ("stability map: largest real part of the "
                           + (f"{n} lowest eigenvalues" if n else "eigenvalues")
                           + _interrupted(smap)))
    return style.save(fig, path)


def _interrupted(result) -> str:
    return " (interrupted: partial)" if getattr(result, "status", "completed") == "interrupted" else ""


def _check_channels(result, channels):
    if isinstance(channels, str):
        channels = (channels,)
    channels = tuple(channels)
    available = sorted(k for k in result.signals if k != "t")
    if not channels:
        raise ParameterError(f"channels: give at least one; available: {', '.join(available)}")
    unknown = [c for c in channels if c not in available]
    if unknown:
        raise ParameterError(f"channels: unknown {', '.join(map(repr, unknown))}; available: "
                             f"{', '.join(available)}")
    return channels


def plot_transient(result, path, *, channels=("a_T_y", "lambda", "v_t"), title=None):
    """Signals of a transient against time, one subplot per channel.

    Parameters
    ----------
    result : fesub.contact.TransientResult
    path : PNG to write.
    channels : str or sequence of str
        Keys of ``result.signals`` (see :func:`channel_info`); default the tip acceleration, the
        contact force and the sliding velocity. An unknown name is a ParameterError listing the
        available channels.
    title : str, optional
        Default: :func:`case_label` and how the run ended.

    Zero lines are drawn on the contact force (detachment below it) and the sliding velocity
    (sticking at it).
    """
    channels = _check_channels(result, channels)
    s = result.signals
    t = np.asarray(s["t"])
    plt = style.pyplot()
    fig, axs = plt.subplots(len(channels), 1, figsize=(8, 1.0 + 2.2 * len(channels)), sharex=True,
                            squeeze=False, layout="constrained")
    axs = axs[:, 0]
    for ax, name in zip(axs, channels):
        factor = channel_info(name)[3]
        # the samples the drawing needs (a 3 s transient holds 150 000; the axes are 960 pixels wide)
        ax.plot(*style.envelope(t, factor * np.asarray(s[name])), lw=0.4)
        if name in ("lambda", "v_t"):
            ax.axhline(0.0, color="r", lw=0.6)
        ax.set_ylabel(_axis_label(name), fontsize=8)
        ax.set_xlabel("time [s]", fontsize=8)
    if title is None:
        title = case_label(result)
        status = getattr(result, "status", None)
        if status is not None:
            title += f"\n{status} at t = {float(result.stop_time):.4g} s"
    fig.suptitle(title, fontsize=10)
    return style.save(fig, path)


def plot_spectrogram(t, x, fs, path, *, channel="a_T_y", fmax=20e3, marks=(), title=None, nperseg=2048):
    """Spectrogram (power spectral density in dB) of a signal, frequency in kHz against time.

    Parameters
    ----------
    t : (n,) times (s); the first one offsets the time axis.
    x : (n,) signal in the SI unit of ``channel`` (see :func:`channel_info`).
    fs : sampling rate (Hz).
    path : PNG to write.
    channel : name of the signal, for the labels and the dB reference (1 SI unit^2/Hz).
    fmax : highest frequency shown (Hz).
    marks : frequencies (Hz) marked by dashed lines (e.g. those of unstable eigenvalues).
    title : default names the channel.
    nperseg : samples per segment.
    """
    from ...signal import spectrogram

    label, si, _, _ = channel_info(channel)
    f, tt, S = spectrogram(x, fs, nperseg=nperseg)
    sel = f <= fmax
    with np.errstate(divide="ignore"):
        db = 10 * np.log10(S[sel])
    lo, hi = style.db_limits(db)
    plt = style.pyplot()
    fig, ax = plt.subplots(figsize=(8, 4))
    im = style.colour_map(ax, tt + t[0], f[sel] / 1e3, np.ma.masked_invalid(db), cmap="magma", vmin=lo, vmax=hi)
    fig.colorbar(im, ax=ax, label=f"PSD [dB re 1 ({si})^2/Hz]")
    for i, fm in enumerate(marks):
        ax.axhline(fm / 1e3, color="tab:cyan", lw=1.0, ls="--",
                   label="frequencies of unstable eigenvalues" if i == 0 else None)
    if len(marks):
        ax.legend(loc="upper right", fontsize=8)
    ax.set_xlabel("time [s]")
    ax.set_ylabel("frequency [kHz]")
    ax.set_title(title or f"spectrogram of {label}")
    return style.save(fig, path)


def plot_burst_spectra(spectra, path, *, channel="a_T_y", fmax=20e3, title=None, span_db=style.DB_SPAN):
    """Amplitude spectra of time windows (bursts) of one signal, logarithmic amplitude axis.

    ``spectra`` is a list of ``(label, f Hz, |X|)`` with |X| in the SI unit of ``channel``, as from
    :func:`fesub.signal.window_spectrum`. The amplitude axis spans ``span_db`` dB below the
    largest amplitude shown (round-off far below it carries no information).
    """
    label, si, _, _ = channel_info(channel)
    plt = style.pyplot()
    fig, ax = plt.subplots(figsize=(8, 4))
    top = 0.0
    for name, f, X in spectra:
        f, X = np.asarray(f), np.asarray(X)
        sel = f <= fmax
        ax.plot(f[sel] / 1e3, X[sel], lw=0.7, label=name)
        if sel.any():
            top = max(top, float(np.nanmax(X[sel])))
    ax.set_yscale("log")
    if top > 0:
        ax.set_ylim(top * 10 ** (-span_db / 20), top * 2)
    ax.set_xlabel("frequency [kHz]")
    ax.set_ylabel(f"amplitude of {label} [{si}]")
    ax.set_title(title or f"amplitude spectra of {label} in burst windows")
    if spectra:
        ax.legend(fontsize=8, title="window")
    return style.save(fig, path)


_FRF_REFERENCE = {"accelerance": "(m/s^2)/N", "receptance": "m/N"}


def _channel_words(name: str) -> str:
    node, _, comp = str(name).partition("_")
    return f"{node},{comp}" if comp else node


def plot_tdfrf(result, path, *, title=None, fmax=None):
    """|H(t, f)| of a time-dependent FRF in dB, frequency (kHz) against time (s).

    The colour scale spans :data:`fesub.plots.style.DB_SPAN` dB below the maximum.

    Parameters
    ----------
    result : fesub.contact.frf.TDFRFResult
        ``times`` (s), ``freqs_hz`` (Hz), ``H`` (nt, nf) in (m/s^2)/N (``kind`` 'accelerance') or
        m/N ('receptance'), ``inp``/``out`` channels, ``mu``.
    path : PNG to write.
    title : default names the input and output channels and mu.
    fmax : highest frequency shown (Hz); default all.
    """
    times = np.asarray(result.times, float)
    freqs = np.asarray(result.freqs_hz, float)
    H = np.asarray(result.H)
    if H.shape != (times.size, freqs.size):
        raise ParameterError(f"H must have shape (len(times), len(freqs_hz)) = ({times.size}, {freqs.size}), "
                             f"got {H.shape}")
    sel = freqs <= (np.inf if fmax is None else fmax)
    with np.errstate(divide="ignore"):
        db = 20 * np.log10(np.abs(H[:, sel]).T)
    lo, hi = style.db_limits(db)
    kind = getattr(result, "kind", "accelerance")
    ref = _FRF_REFERENCE.get(kind, "SI")
    plt = style.pyplot()
    fig, ax = plt.subplots(figsize=(8, 4))
    im = style.colour_map(ax, times, freqs[sel] / 1e3, np.ma.masked_invalid(db), cmap="magma", vmin=lo, vmax=hi)
    fig.colorbar(im, ax=ax, label=f"|H| [dB re 1 {ref}]")
    ax.set_xlabel("time [s]")
    ax.set_ylabel("frequency [kHz]")
    response = "acceleration" if kind == "accelerance" else "displacement"
    ax.set_title(title or f"time-dependent FRF ({kind}): force at {_channel_words(result.inp)} -> {response} "
                          f"at {_channel_words(result.out)}, mu = {float(result.mu):g}{_interrupted(result)}")
    return style.save(fig, path)
