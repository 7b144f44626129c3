"""Figures of the sliding-contact study (matplotlib, written to PNG)."""

from __future__ import annotations

import numpy as np

__all__ = ["plot_loci", "plot_max_real", "plot_transient", "plot_spectrogram", "plot_burst_spectra",
           "plot_tdfrf", "plot_stability_map"]


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_loci(loci, path, *, rayleigh=(), title=None):
    """Complex-plane eigenvalue loci coloured by contact position, with the Rayleigh lines.

    ``rayleigh`` is a list of (label, alpha, beta) drawn as dotted lines s = -zeta w + j w sqrt(1-zeta^2).
    """
    from ..contact.eigen import rayleigh_line

    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 5))
    lam = loci.lam
    pos = np.repeat(loci.positions[:, None], lam.shape[1], axis=1)
    sc = ax.scatter(lam.real.ravel(), lam.imag.ravel() / (2 * np.pi) / 1e3, c=pos.ravel() * 1e3, s=3,
                    cmap="viridis")
    fig.colorbar(sc, ax=ax, label="contact position x (mm)")
    fmax = lam.imag.max() * 1.05
    w = np.linspace(1.0, fmax, 400)
    for (label, a, b), ls in zip(rayleigh, (":", "--", "-.")):
        r = rayleigh_line(w, a, b)
        ax.plot(r.real, r.imag / (2 * np.pi) / 1e3, "k" + ls, lw=0.8, label=f"Rayleigh {label}")
    ax.axvline(0.0, color="r", lw=0.6)
    ax.set_xlabel("real part (1/s)")
    ax.set_ylabel("frequency (kHz)")
    ax.set_title(title or f"eigenvalue loci, mu = {loci.mu:g}")
    if rayleigh:
        ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_max_real(loci_list, path):
    """Largest real part (1/s) against contact position for several friction coefficients."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 3.5))
    for L in loci_list:
        ax.plot(L.positions * 1e3, L.lam.real.max(axis=1), label=f"mu = {L.mu:g}")
    ax.axhline(0.0, color="k", lw=0.6)
    ax.set_xlabel("contact position x (mm)")
    ax.set_ylabel("max real part (1/s)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_stability_map(positions, mus, maxre, path):
    """Map of the largest real part over (position, mu), zero contour in black."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 4))
    lim = np.abs(maxre).max()
    im = ax.pcolormesh(np.asarray(positions) * 1e3, mus, maxre, cmap="RdBu_r", vmin=-lim, vmax=lim, shading="auto")
    fig.colorbar(im, ax=ax, label="max real part (1/s)")
    if maxre.min() < 0 < maxre.max():
        ax.contour(np.asarray(positions) * 1e3, mus, maxre, levels=[0.0], colors="k", linewidths=0.8)
    ax.set_xlabel("contact position x (mm)")
    ax.set_ylabel("friction coefficient mu")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_transient(result, path, *, title=None):
    """Tip acceleration, contact force and sliding velocity against time (contact status)."""
    plt = _plt()
    s = result.signals
    fig, axs = plt.subplots(3, 1, figsize=(8, 7), sharex=True)
    axs[0].plot(s["t"], s["a_T_y"], lw=0.4)
    axs[0].set_ylabel("a_T,y (m/s^2)")
    axs[1].plot(s["t"], s["lambda"], lw=0.4)
    axs[1].axhline(0, color="r", lw=0.6)
    axs[1].set_ylabel("lambda (N)")
    axs[2].plot(s["t"], s["v_t"] * 1e3, lw=0.4)
    axs[2].axhline(0, color="r", lw=0.6)
    axs[2].set_ylabel("v_t slave (mm/s)")
    axs[2].set_xlabel("time (s)")
    axs[0].set_title(title or f"mu = {result.mu:g}: {result.status} at t = {result.stop_time:.4g} s")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_spectrogram(t, x, fs, path, *, fmax=20e3, marks=(), title=None, nperseg=2048):
    """Spectrogram of ``x`` (dB), with horizontal marks at given frequencies (Hz)."""
    from ..signal import spectrogram

    plt = _plt()
    f, tt, S = spectrogram(x, fs, nperseg=nperseg)
    fig, ax = plt.subplots(figsize=(8, 4))
    sel = f <= fmax
    im = ax.pcolormesh(tt + t[0], f[sel] / 1e3, 10 * np.log10(S[sel] + 1e-30), shading="auto", cmap="magma")
    fig.colorbar(im, ax=ax, label="PSD (dB)")
    for fm in marks:
        ax.axhline(fm / 1e3, color="c", lw=0.6, ls="--")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("frequency (kHz)")
    ax.set_title(title or "spectrogram")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_burst_spectra(spectra, path, *, fmax=20e3):
    """Amplitude spectra of time windows: ``spectra`` is a list of (label, f, |X|)."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(8, 4))
    for label, f, X in spectra:
        sel = f <= fmax
        ax.semilogy(f[sel] / 1e3, X[sel], lw=0.7, label=label)
    ax.set_xlabel("frequency (kHz)")
    ax.set_ylabel("|A| (m/s^2)")
    if spectra:
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_tdfrf(times, freqs, H, path, *, title="time-dependent FRF"):
    """|H(t, f)| in dB as an image over time and frequency."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(8, 4))
    im = ax.pcolormesh(times, np.asarray(freqs) / 1e3, 20 * np.log10(np.abs(H).T + 1e-30), shading="auto",
                       cmap="magma")
    fig.colorbar(im, ax=ax, label="|H| (dB)")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("frequency (kHz)")
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
