"""Signals: band-limited noise, spectrogram, window spectra, burst detection (fesub/signal.py).

References are synthetic signals whose content is known exactly (tones, bursts with known start
and stop), and the FFT of the generated noise.
"""

from __future__ import annotations

import numpy as np
import pytest

from fesub.errors import ParameterError
from fesub.signal import band_limited_noise, burst_windows, dominant_frequency, spectrogram, window_spectrum


# ----------------------------------------------------------------------------- band-limited noise
@pytest.mark.parametrize("band", [(0.0, 2000.0), (500.0, 3000.0), (0.0, None), (1234.5, 1300.0)])
def test_noise_std_and_band(band):
    n, fs, std = 2**15, 10_000.0, 0.05
    x = band_limited_noise(n, fs, band, std, seed=3)
    assert x.shape == (n,)
    # scaled to the requested standard deviation exactly (up to round-off of the std itself)
    assert x.std() == pytest.approx(std, rel=1e-12)
    X = np.fft.rfft(x)
    f = np.fft.rfftfreq(n, 1 / fs)
    lo, hi = band[0], fs / 2 if band[1] is None else band[1]
    out = (f < lo) | (f > hi)
    # ideal FFT filter: out-of-band bins are zero up to the round-off of the irfft/rfft round trip
    # (1e-16 relative per bin), so their energy is < 1e-24 of the total
    e_out = np.sum(np.abs(X[out]) ** 2)
    assert e_out <= 1e-24 * np.sum(np.abs(X) ** 2)
    if lo > 0:
        assert abs(x.mean()) < 1e-15 * std * n                     # no DC when the band excludes 0


def test_noise_is_white_in_band_and_reproducible():
    n, fs = 2**16, 40_000.0
    x = band_limited_noise(n, fs, (0.0, 20_000.0 * 0.5), 1.0, seed=11)
    P = np.abs(np.fft.rfft(x)) ** 2
    f = np.fft.rfftfreq(n, 1 / fs)
    inb = (f > 0) & (f <= 10_000.0)
    half = f[inb] < 5_000.0
    lo_p, hi_p = P[inb][half].mean(), P[inb][~half].mean()
    # each half averages ~8000 exponential(1)-distributed bins: 1.1 % relative std, 10 % = 9 sigma
    assert lo_p / hi_p == pytest.approx(1.0, rel=0.1)
    np.testing.assert_array_equal(x, band_limited_noise(n, fs, (0.0, 10_000.0), 1.0, seed=11))
    assert not np.array_equal(x, band_limited_noise(n, fs, (0.0, 10_000.0), 1.0, seed=12))


# ----------------------------------------------------------------------------- spectra
def test_spectrogram_finds_tones_and_when_they_change():
    fs, T = 10_000.0, 2.0
    t = np.arange(int(fs * T)) / fs
    f1, f2 = 1234.5, 3210.0
    x = np.where(t < 1.0, np.sin(2 * np.pi * f1 * t), 0.5 * np.sin(2 * np.pi * f2 * t))
    x = x + band_limited_noise(t.size, fs, (0.0, None), 0.05, seed=1)
    f, tt, S = spectrogram(x, fs, nperseg=1024)
    df = fs / 1024
    peak = f[np.argmax(S, axis=0)]
    first = tt + 512 / fs < 1.0                                     # segments entirely before t = 1 s
    second = tt - 512 / fs > 1.0
    # the peak bin of a Hann-windowed tone is within half a bin of the tone (one bin of margin)
    assert np.all(np.abs(peak[first] - f1) <= df)
    assert np.all(np.abs(peak[second] - f2) <= df)
    assert first.sum() > 5 and second.sum() > 5


def test_window_spectrum_finds_tone_and_amplitude():
    fs = 8000.0
    t = np.arange(8000) / fs
    # window [0.1, 0.4] s holds samples 800..3200 (2401 samples): a tone on bin 300 of that window
    # is bin-centred, so the Hann-corrected amplitude has no scalloping loss
    n_win = 2401
    f1 = 300 * fs / n_win
    A1, A2 = 0.7, 2.0
    x = np.where(t < 0.5, A1 * np.sin(2 * np.pi * f1 * t + 0.3), A2 * np.sin(2 * np.pi * 2500.0 * t))
    f, X = window_spectrum(t, x, 0.1, 0.4)
    assert f.size == n_win // 2 + 1
    assert dominant_frequency(f, X) == pytest.approx(f1, abs=1e-9)
    # amplitude: leakage of the negative-frequency image and of the mean removal ~1e-4
    assert X.max() == pytest.approx(A1, rel=1e-3)
    # the other tone lives outside the window: its bin holds only the Hann sidelobe of tone 1
    k2 = np.argmin(np.abs(f - 2500.0))
    assert X[k2] < 1e-4 * A1
    # the second window sees the second tone
    f, X = window_spectrum(t, x, 0.6, 0.9)
    assert dominant_frequency(f, X) == pytest.approx(2500.0, abs=fs / 2401)
    assert dominant_frequency(f, X, fmin=3000.0) > 3000.0


# ----------------------------------------------------------------------------- bursts
def synthetic_bursts(bursts, fs=20_000.0, T=1.0, f0=5000.0, noise=0.01, seed=0):
    t = np.arange(int(fs * T)) / fs
    x = band_limited_noise(t.size, fs, (0.0, None), noise, seed=seed)
    for a, b in bursts:
        on = (t >= a) & (t < b)
        x[on] += np.sin(2 * np.pi * f0 * t[on])
    return t, x


def test_burst_windows_find_start_and_stop():
    t, x = synthetic_bursts([(0.300, 0.450)])
    win = burst_windows(t, x)
    assert len(win) == 1
    a, b = win[0]
    # envelope smoothed over 1 ms: the edges move by < 1 ms; 3 ms = "a few ms"
    assert a == pytest.approx(0.300, abs=3e-3)
    assert b == pytest.approx(0.450, abs=3e-3)


def test_burst_windows_merge_and_split():
    t, x = synthetic_bursts([(0.200, 0.250), (0.255, 0.300), (0.600, 0.700)])
    win = burst_windows(t, x, min_gap=0.01)
    # the 5 ms gap is shorter than min_gap: merged; the third burst stays apart
    assert len(win) == 2
    assert win[0][0] == pytest.approx(0.200, abs=3e-3) and win[0][1] == pytest.approx(0.300, abs=3e-3)
    assert win[1][0] == pytest.approx(0.600, abs=3e-3) and win[1][1] == pytest.approx(0.700, abs=3e-3)
    win = burst_windows(t, x, min_gap=0.002)
    assert len(win) == 3
    # short blips below min_length are dropped; an explicit threshold above the burst finds nothing
    t, x = synthetic_bursts([(0.5, 0.5008)])
    assert burst_windows(t, x, min_length=0.005) == []
    t, x = synthetic_bursts([(0.3, 0.4)])
    assert burst_windows(t, x, threshold=5.0) == []


def test_burst_at_the_edges():
    t, x = synthetic_bursts([(0.0, 0.1), (0.9, 1.0)])
    win = burst_windows(t, x)
    assert len(win) == 2
    assert win[0][0] == t[0] and win[1][1] == t[-1]
    assert win[0][1] == pytest.approx(0.1, abs=3e-3) and win[1][0] == pytest.approx(0.9, abs=3e-3)


# ----------------------------------------------------------------------------- bad input
def test_bad_input():
    with pytest.raises(ParameterError, match="n must"):
        band_limited_noise(1.5, 1000.0)
    with pytest.raises(ParameterError, match="n must"):
        band_limited_noise(1, 1000.0)
    with pytest.raises(ParameterError, match="fs"):
        band_limited_noise(100, -1.0)
    with pytest.raises(ParameterError, match="band"):
        band_limited_noise(100, 1000.0, (300.0, 200.0))
    with pytest.raises(ParameterError, match="band"):
        band_limited_noise(100, 1000.0, (0.0, 600.0))
    with pytest.raises(ParameterError, match="std"):
        band_limited_noise(100, 1000.0, (0.0, None), -1.0)
    with pytest.raises(ParameterError, match="std"):
        band_limited_noise(100, 1000.0, (0.0, None), float("nan"))
    with pytest.raises(ParameterError, match="1D"):
        spectrogram(np.zeros((3, 10)), 1000.0)
    with pytest.raises(ParameterError, match="8 samples"):
        spectrogram(np.zeros(4), 1000.0)
    with pytest.raises(ParameterError, match="fs"):
        spectrogram(np.zeros(100), 0.0)
    t = np.arange(100) * 1e-3
    with pytest.raises(ParameterError, match="fewer than 8"):
        window_spectrum(t, np.zeros(100), 0.05, 0.052)
    with pytest.raises(ParameterError, match="fewer than 8"):
        window_spectrum(t, np.zeros(100), 0.05, 0.01)             # reversed window


def test_window_spectrum_length_mismatch():
    with pytest.raises(ParameterError):
        window_spectrum(np.arange(100) * 1e-3, np.zeros(50), 0.0, 0.05)


def test_burst_windows_length_mismatch():
    with pytest.raises(ParameterError):
        burst_windows(np.arange(100) * 1e-3, np.zeros(50))


def test_burst_windows_nan_signal():
    with pytest.raises(ParameterError):
        burst_windows(np.arange(100) * 1e-3, np.full(100, np.nan))


def test_dominant_frequency_empty_range():
    with pytest.raises(ParameterError):
        dominant_frequency([1.0, 2.0], [1.0, 2.0], 5.0)
