"""The roughness noise of the sliding-contact transients (``fesub.signal.band_limited_noise``)
filtered on a fast FFT length: its statistics against the closed forms of band-limited white
noise, and against the noise filtered on exactly n samples.

n is chosen with a large prime factor (n = 2 * 99991), the case where the fast length (a product
of 2, 3, 5 at or above n) differs from n and the realisation changes.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.fft as sfft
import scipy.signal as ss

from fesub.signal import band_limited_noise

N, FS, BAND, STD = 2 * 99_991, 100_000.0, (2_000.0, 20_000.0), 0.7


def _welch(x):
    # 1024-sample Hann segments, half overlap: ~390 segments, each density bin a chi-square
    # average with ~5 % relative std; no detrending (subtracting each segment's mean would itself
    # put a Hann-shaped component at 0-100 Hz, 1e-3 of the in-band level)
    return ss.welch(x, FS, nperseg=1024, detrend=False)


def test_fast_length_differs_and_is_fast():
    nf = sfft.next_fast_len(N, real=True)
    assert nf > N and nf < 1.01 * N


@pytest.mark.parametrize("fast", [True, False])
def test_noise_spectrum_matches_band_limited_white_noise(fast):
    x = band_limited_noise(N, FS, BAND, STD, seed=5, fast_length=fast)
    assert x.shape == (N,)
    assert x.std() == pytest.approx(STD, rel=1e-12)  # scaled exactly
    f, P = _welch(x)
    inb = (f > BAND[0] + 500) & (f < BAND[1] - 500)       # away from the Hann window's edge leakage
    out = (f < BAND[0] - 1000) | (f > BAND[1] + 1000)
    level = STD**2 / (BAND[1] - BAND[0])                  # one-sided density of the closed form
    # mean over ~170 in-band bins of ~5 % relative std each: ~1 % (correlated neighbours: ~2 %)
    assert P[inb].mean() == pytest.approx(level, rel=0.06)
    # flat: the two halves of the band agree to the same statistical accuracy
    h = inb & (f < np.mean(BAND))
    assert P[h].mean() / P[inb & ~h].mean() == pytest.approx(1.0, rel=0.08)
    # out of band: the Hann window's sidelobes at >= 1 kHz (>= 10 bins) from the edges are
    # below 1e-4 of the in-band level; a leak of the filter would be of order 1
    assert P[out].max() < 1e-4 * level
    # Gaussian: excess kurtosis 0 (its estimate's std at N = 2e5 is sqrt(24 / N) = 0.011)
    k = np.mean((x - x.mean()) ** 4) / x.var() ** 2 - 3.0
    assert abs(k) < 0.06


def test_fast_and_exact_lengths_have_the_same_statistics():
    """Ten realisations of each: the ratio of the mean in-band densities is 1 to the statistical
    accuracy (~0.5 % each), the out-of-band density negligible for both."""
    fe, fx = [], []
    for seed in range(10):
        for fast, acc in ((True, fe), (False, fx)):
            f, P = _welch(band_limited_noise(N, FS, BAND, STD, seed=seed, fast_length=fast))
            acc.append(P)
    Pe, Px = np.mean(fe, axis=0), np.mean(fx, axis=0)
    inb = (f > BAND[0] + 500) & (f < BAND[1] - 500)
    assert Pe[inb].mean() / Px[inb].mean() == pytest.approx(1.0, rel=0.03)
    # bin by bin: each bin of the 10-run average has ~1.6 % relative std, the ratio ~2.3 %: 12 %
    # is 5 sigma for the largest of ~185 bins
    np.testing.assert_allclose(Pe[inb] / Px[inb], 1.0, rtol=0.12)


def test_fast_length_keeps_a_fast_n_unchanged():
    n = 2**12 * 5**3  # already a fast length: the exact same realisation as before
    np.testing.assert_array_equal(band_limited_noise(n, FS, BAND, STD, seed=2),
                                  band_limited_noise(n, FS, BAND, STD, seed=2, fast_length=False))
