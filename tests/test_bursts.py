"""Burst detection and attribution (fesub.contact.analyses.bursts) on synthetic signals of known growth
rate and frequency, and the burst table in the beam-on-beam study's summary."""

import numpy as np
import pytest

from fesub.contact.analyses.bursts import BurstTable, attribute, detect_bursts

FS = 50_000.0


def _signal(bursts, duration=1.0, noise=1.0, seed=0):
    """White noise (std ``noise``) plus bursts (t_peak s, f Hz, sigma 1/s, ratio of peak to the
    noise's band envelope): each grows as exp(sigma t) to its peak and decays at 3 sigma."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(duration * FS)) / FS
    x = noise * rng.standard_normal(t.size)
    for tp, f, sig, amp in bursts:
        a = np.exp(np.where(t <= tp, sig * (t - tp), -3 * sig * (t - tp)))
        x += amp * a * np.sin(2 * np.pi * f * t)
    return t, x


def test_detector_measures_growth_rate_and_frequency_of_synthetic_bursts():
    # two bursts 30x the noise level in their band; the noise's band envelope in a 20 % band at
    # ~10 kHz is about sqrt(2 kHz / 25 kHz) = 0.28 of its std, so the peaks are ~100x background
    true = [(0.35, 10_600.0, 150.0, 30.0), (0.7, 4_200.0, 80.0, 30.0)]
    t, x = _signal(true)
    pos = 0.005 + 0.03 * t
    found = detect_bursts(t, x, pos)
    assert len(found) == 2
    for b, (tp, f, sig, _) in zip(found, true):
        # peak time within the 2 ms envelope smoothing plus one 0.5 ms envelope step
        assert abs(b.t_peak - tp) < 2.5e-3
        # frequency: the window spans >= 16 periods (~6 % bins), the peak bin of a growing sine
        # lies within half a bin; 2 % holds at these window lengths (~15-40 ms: 25-70 Hz bins)
        assert abs(b.f_hz - f) / f < 0.02, (b.f_hz, f)
        # growth rate: the log-linear fit of a clean exponential is exact; the noise and the
        # 2 ms smoothing bias it by a few per cent -> 10 %
        assert abs(b.growth_1_s - sig) / sig < 0.10, (b.growth_1_s, sig)
        assert b.fit_r2 > 0.95
        assert b.x_peak == pytest.approx(0.005 + 0.03 * b.t_peak)
        assert b.x_rise < b.x_peak


def test_background_is_the_running_median_of_each_envelope():
    """The background of each band is the median of the envelope over a window of ``background``
    s centred on each sample, the ends held at their edge values (an odd window: the median is
    one of its samples), computed here by brute force."""
    from fesub.contact.analyses.bursts import band_envelopes

    t, x = _signal([(0.35, 10_600.0, 150.0, 30.0)], duration=0.5)
    te, bands, env, bg = band_envelopes(t, x, background=0.02)
    w = int(round(0.02 / (te[1] - te[0]))) | 1
    h = w // 2
    padded = np.pad(env, ((0, 0), (h, h)), mode="edge")
    for j in (0, len(bands) // 2, len(bands) - 1):
        for i in (0, 3, te.size // 2, te.size - 1):
            assert bg[j, i] == max(np.median(padded[j, i:i + w]), 1e-300)


def test_noise_alone_and_short_spikes_are_not_bursts():
    t, x = _signal([])
    assert detect_bursts(t, x) == []
    # a spike growing at 3000 1/s (rises in ~1 ms) is not a growing oscillation
    t, x = _signal([(0.5, 10_000.0, 3000.0, 30.0)])
    assert detect_bursts(t, x) == []


def test_attribution_by_position_frequency_and_sign_of_the_real_part():
    t, x = _signal([(0.35, 10_600.0, 150.0, 30.0)])
    b = detect_bursts(t, x, 0.005 + 0.03 * t)[0]
    pos = np.arange(0.0, 0.05, 0.25e-3)
    base = np.full((pos.size, 2), -5.0 + 2j * np.pi * 7000.0)
    base[:, 1] = -5.0 + 2j * np.pi * 10_610.0
    und = base.copy()  # stable everywhere
    dfm = base.copy()
    hot = (pos > b.x_rise) & (pos < b.x_peak)
    dfm[hot, 1] = 120.0 + 2j * np.pi * 10_610.0  # unstable where the burst grew
    far = base.copy()
    far[pos > b.x_peak + 2e-3, 1] = 120.0 + 2j * np.pi * 10_610.0  # unstable, but further on
    off = base.copy()
    off[hot, 1] = 120.0 + 2j * np.pi * 12_000.0  # unstable there at another frequency
    T = attribute([b], {"undeformed": (pos, und), "deformed": (pos, dfm)})
    assert T.attribution() == ["deformed"]
    assert T.predicted["deformed"][0, 1] == 120.0 and T.predicted["deformed"][0, 0] == pytest.approx(10_610.0)
    assert attribute([b], {"undeformed": (pos, dfm), "deformed": (pos, dfm)}).attribution() == ["both"]
    assert attribute([b], {"undeformed": (pos, dfm), "deformed": (pos, off)}).attribution() == ["undeformed"]
    T = attribute([b], {"undeformed": (pos, far), "deformed": (pos, off)})
    assert T.attribution() == ["neither"] and T.counts() == {
        "bursts": 1, "predicted_undeformed": 0, "predicted_deformed": 0, "predicted_by_none": 1}
    # an analysis without positions at the burst does not cover it
    T = attribute([b], {"undeformed": (pos, und), "deformed": (pos[-3:] + 1.0, dfm[-3:])})
    assert not T.covered["deformed"][0] and T.covered["undeformed"][0]


def test_burst_table_round_trip_and_records(tmp_path):
    t, x = _signal([(0.35, 10_600.0, 150.0, 30.0), (0.7, 4_200.0, 80.0, 30.0)])
    bs = detect_bursts(t, x, 0.005 + 0.03 * t)
    pos = np.arange(0.0, 0.05, 0.25e-3)
    lam = np.full((pos.size, 1), 50.0 + 2j * np.pi * 10_600.0)
    T = attribute(bs, {"undeformed": (pos, lam)}, name="synthetic")
    back = BurstTable.load(T.save(tmp_path / "b"))
    for k in T.columns:
        np.testing.assert_array_equal(back.columns[k], T.columns[k])
    np.testing.assert_array_equal(back.predicted["undeformed"], T.predicted["undeformed"])
    assert back.attribution() == T.attribution() == ["undeformed", "neither"]
    r = back.records()[0]
    assert r["undeformed_real_1_s"] == 50.0 and r["predicted_by"] == "undeformed" and "growth_rate_1_s" in r
    ds = T.to_xarray()
    assert all("units" in ds[v].attrs for v in ds.data_vars)


def test_attribution_figure_passes_the_house_rules(tmp_path, drawn_figures):
    from fesub.contact.sliding import plots as pc
    from fesub.contact.analyses.eigen import EigenLoci
    from fesub.plots import style

    t, x = _signal([(0.35, 10_600.0, 150.0, 30.0)])
    bs = detect_bursts(t, x, 0.005 + 0.03 * t)
    pos = np.arange(0.0, 0.05, 0.25e-3)
    lam = np.full((pos.size, 1), -5.0 + 2j * np.pi * 10_600.0)
    lam[(pos > bs[0].x_rise) & (pos < bs[0].x_peak)] += 150.0
    T = attribute(bs, {"undeformed": (pos, lam), "deformed": (pos, lam)})
    L = EigenLoci(pos, lam, 0.3)
    path = pc.plot_burst_attribution(L, L, {"synthetic": T}, tmp_path / "b.png")
    assert path.is_file()
    (fig, _), = drawn_figures
    assert style.check_figure(fig) == []


def test_study_summary_holds_the_burst_table(tmp_path):
    """The study's burst part on a short run: the table, its counts and the load's reason."""
    import json

    from fesub.cli import main

    out = tmp_path / "bob"
    rc = main(["beam-on-beam", "--mu", "0.3", "--roughness", "on", "--duration", "0.02",
               "--loci-step", "0.005", "--out", str(out), "--quiet", "--no-figures"])
    assert rc == 0
    s = json.loads((out / "summary.json").read_text())
    table = BurstTable.load(out / "burst_table_mu0.3_rough.nc").records()
    # the study adds the target node crossed just before each peak to the table's records
    assert [{k: v for k, v in r.items() if k != "node_before_peak_m"}
            for r in s["details"]["bursts"]["mu0.3_rough"]] == table
    assert s["results"]["bursts_mu0.3_rough"]["value"] == len(s["details"]["bursts"]["mu0.3_rough"])
    assert "bursts_predicted_deformed_mu0.3_rough" in s["results"]
    assert "0.25 m" in s["details"]["load_reason"] and "bursts_rule" in s["details"]


def test_deformed_positions_cover_each_burst_and_avoid_the_target_nodes():
    """The study's deformed analysis runs where the undeformed loci are unstable and where each
    burst grew, never on a target node (every 1 mm: there the sliding state has no solution)."""
    from fesub.cli.beam_on_beam import _deformed_positions
    from fesub.contact.analyses.bursts import Burst
    from fesub.contact.analyses.eigen import EigenLoci
    from fesub.models.beam_on_beam import BeamOnBeamParams

    pos = np.arange(0.005, 0.098, 0.25e-3)
    lam = np.full((pos.size, 1), -5.0 + 1j)
    lam[np.abs(pos - 0.045) < 0.3e-3] += 100.0
    b = Burst(2.96, 2.94, 0.0939, 0.0933, 10_600.0, 170.0, 0.99, 30.0, (9.7e3, 11.7e3), 1.0)
    P = _deformed_positions(BeamOnBeamParams(), EigenLoci(pos, lam, 0.3), {"case": [b]})
    off = np.abs(P * 1e3 - np.round(P * 1e3))
    assert off.min() > 0.1  # mm from the nearest node
    assert np.all(np.diff(P) > 0)
    for x0, x1 in ((0.0933, 0.0939), (0.04475, 0.04525)):
        inside = P[(P >= x0 - 0.25e-3) & (P <= x1 + 0.25e-3)]
        assert inside.min() <= x0 and inside.max() >= x1
    assert P.size < 20  # only there: nothing else along the path
