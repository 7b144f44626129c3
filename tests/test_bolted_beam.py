"""The bolted lap-joint beam (fesub.models.bolted_beam) and the ``fesub joint`` study, on the
bundled coarse mesh (55 node pairs): the preload against the bolt loads, the reduction onto the
contacts against the model before it, the backbone's small-amplitude limit against the
stuck-interface modes, the interface maps against the harmonic-balance energy, the study's
files; and on the bundled mesh (200 node pairs) the backbone with the mean against a free decay
(slow)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from fesub.hbm import dnnm, interface_states
from fesub.models.bolted_beam import build, bundled_mesh, tributary_areas

TWO_PI = 2 * math.pi


@pytest.fixture(scope="module")
def beam():
    model = build(mesh=bundled_mesh(coarse=True), n_modes_half=8, n_modes=8)
    state = model.joint.preload(n_modes=8)
    return model, state


def _bending_backbone_system(model, state, nh, mean):
    """(hb, drive, start, mode): the harmonic balance of the first bending mode about the
    preload (``nh`` harmonics, the mean kept or not), driven at that mode's largest entry, and
    the all-stuck mode closest in shape, where the dNNM starts (as ``fesub joint`` does)."""
    from fesub.hbm import linear_modes

    mode = model.bending_mode(state.shapes, state.freq_hz)
    drive = int(np.argmax(np.abs(state.shapes[:, mode])))
    hb = model.hb_system(state, nh, TWO_PI * state.freq_hz[mode], dof=drive, constant=mean)
    M, _, K = hb.linear_matrices(stuck=True)
    _, V = linear_modes(M, K)
    start = int(np.argmax(np.abs(V.T @ (M @ state.shapes[:, mode]))))
    return hb, drive, start, mode


def test_preload_balances_the_bolts(beam):
    model, state = beam
    assert model.n_contacts == 55 and state.n_rigid == 6
    # three bolts of 12 kN: the normal contact forces carry exactly their sum (free beam, no
    # other load; measured 2e-16: the Newton solution's rounding)
    np.testing.assert_allclose(state.resultant, 3 * 12e3, rtol=1e-10)
    np.testing.assert_allclose(state.bolt_load, 12e3, rtol=1e-15)
    # tributary areas cover the lap face exactly
    np.testing.assert_allclose(model.area.sum(), 0.120 * 0.0254, rtol=1e-12)
    assert np.all(state.state[state.normal > 0] != 0)


def test_reduction_onto_the_contacts_keeps_the_stuck_modes(beam):
    model, state = beam
    # the model before the reduction onto the relative displacements (two Craig-Bampton halves,
    # every contact closed, bolts as springs) against the reduced one: the second reduction
    # keeps the relative displacements exactly and 8 modes of the welded beam, so the lowest
    # bending modes agree to its truncation (measured 2.0e-6, 3e-10, 1.1e-6; 1e-4 allowed)
    from fesub.hbm import linear_modes

    Ks = model.joint.stuck_stiffness()
    w, _ = linear_modes(model.joint.M, 0.5 * (Ks + Ks.T))
    f = w[6:9] / TWO_PI
    np.testing.assert_allclose(f, model.freq_full_hz[6:9], rtol=1e-4)
    # the first bending mode is a vertical one between the rigid-body modes and 300 Hz
    i = model.bending_mode(state.shapes, state.freq_hz)
    assert 150 < state.freq_hz[i] < 300


@pytest.mark.parametrize("mean", [False, True])
def test_backbone_starts_at_the_stuck_interface_mode_and_maps_the_interface(beam, mean):
    """Decoupled, and with the mean of the contact forces (the free beam's mean held on its
    rigid-body modes): the same checks hold for both."""
    model, state = beam
    hb, drive, start, i = _bending_backbone_system(model, state, 1, mean)
    dn = dnnm(hb, (1e-7, 2e-4), start, force_dof=drive, max_steps=25)
    # small-amplitude limit = the linearised stuck-interface mode of the preload (open contacts
    # absent, closed ones as springs), a separate eigenproblem; Newton's tolerance 1e-10
    np.testing.assert_allclose(dn.w0[0] / TWO_PI, state.freq_hz[i], rtol=1e-8)
    np.testing.assert_allclose(dn.zeta[0], model.params.zeta, rtol=1e-6)
    pick = [0, len(dn.a) - 1]
    amp = np.ones(2)
    maps = interface_states(hb, dn.Q[pick], dn.w0[pick], dn.a[pick], amp, model.xy,
                            model.area, nt=2048)
    # stuck and closed at the first point: the mean normal force over the period is the static
    # one, so the pressures integrate to the bolt loads; nothing slips or dissipates
    np.testing.assert_allclose(maps.pressure_mean[0] @ model.area, 36e3, rtol=1e-9)
    assert np.all(maps.slip[0] == 0) and abs(maps.dissipation[0].sum()) < 1e-12
    # at the last point the contacts dissipate what the harmonic balance's work says: the
    # harmonic sum pi sum_k k (F^c Q^s - F^s Q^c) with the forces' AFT at nt = 2048 samples
    # against the time-domain integral of f . du over the same 2048 samples (the same return
    # map, read two ways; both are a small difference of the elastic works, which rounds at
    # ~1e-16 of those: measured 3e-9 with the mean, whose 6e-12 J at the onset of slip is
    # 2e-7 of the mode's energy w^2 a^2 / 2; bound 1e-6). With the backbone's own 128 samples the
    # harmonic sum differs by the march's first-order sampling: 6e-4 decoupled, 1e-2 with the
    # mean, whose last point is at the onset of slip (little slip against the sampling step)
    for c in hb.contacts:
        c.element.nt = 2048
    E_hb = hb.energy_dissipated(dn.Q[-1])
    assert E_hb > 0 and np.any(maps.slip[1] > 0)
    np.testing.assert_allclose(maps.dissipation[1].sum(), E_hb, rtol=1e-6)


def test_a_rebuilt_model_has_the_same_coordinates(beam):
    """The reduced coordinates are modal amplitudes of the welded beam: a rebuild must give the
    same modes (ARPACK's random start vector gave other signs and other rigid-body bases, so a
    dNNM or preload saved by one run of ``fesub joint`` did not belong to the model a rerun
    rebuilt). Same matrices, same arithmetic: equal to rounding (1e-12 of each array's
    largest entry leaves room for a threaded BLAS summing in another order; measured 0)."""
    model, _ = beam
    again = build(mesh=bundled_mesh(coarse=True), n_modes_half=8, n_modes=8)
    for a, b in ((model.joint.M, again.joint.M), (model.joint.K, again.joint.K),
                 (model.sensors, again.sensors)):
        np.testing.assert_allclose(b, a, rtol=0, atol=1e-12 * np.abs(a).max())
    for ba, bb in zip(model.joint.bolts, again.joint.bolts):
        np.testing.assert_allclose(bb.g, ba.g, rtol=0, atol=1e-12 * np.abs(ba.g).max())


def test_tributary_areas_of_a_plain_face():
    from fesub.fe import box

    m = box(0.04, 0.02, 0.01, 4, 2, 1)
    top = m.node_sets["zmax"]
    a = tributary_areas(m, top)
    np.testing.assert_allclose(a.sum(), 0.04 * 0.02, rtol=1e-14)
    # corner nodes carry a quarter of one element, inner nodes a whole one
    np.testing.assert_allclose(min(a), 0.01 * 0.01 / 4, rtol=1e-12)
    np.testing.assert_allclose(max(a), 0.01 * 0.01, rtol=1e-12)


def test_joint_study_files_and_reload(tmp_path):
    import fesub
    from fesub.cli import main

    out = tmp_path / "joint"
    rc = main(["joint", "--mesh", str(bundled_mesh(coarse=True)), "--nh", "1",
               "--a-max", "1e-4", "--max-steps", "12", "--maps", "2", "--no-figures", "-q",
               "--out", str(out)])
    assert rc == 0
    s = json.loads((out / "summary.json").read_text())
    r = s["results"]
    assert r["contacts"]["value"] == 55
    np.testing.assert_allclose(r["contact_resultant"]["value"], 36e3, rtol=1e-10)
    assert (out / "report.html").is_file()
    for part in ("preload", "dnnm", "interface"):
        obj = fesub.load(out / f"{part}.nc")
        assert obj is not None
    dn = fesub.load(out / "dnnm.nc")
    np.testing.assert_allclose(dn.w0[0] / TWO_PI, r["f_stuck"]["value"], rtol=1e-8)
    # a rerun with the same flags reuses every part
    assert main(["joint", "--mesh", str(bundled_mesh(coarse=True)), "--nh", "1",
                 "--a-max", "1e-4", "--max-steps", "12", "--maps", "2", "--no-figures", "-q",
                 "--out", str(out)]) == 0
    s2 = json.loads((out / "summary.json").read_text())
    assert sorted(s2["details"]["resumed_parts"]) == ["dnnm", "interface", "preload"]
    # the mean is kept by default (it comes first in Q); --decoupled drops it. At the start of
    # the backbone (linear, no mean) both read the same tip amplitude from their fundamental
    assert s["parameters"]["mean"]["value"] is True and dn.Q.shape[1] == 3 * r["reduced_coordinates"]["value"]
    dec = tmp_path / "decoupled"
    assert main(["joint", "--mesh", str(bundled_mesh(coarse=True)), "--nh", "1",
                 "--a-max", "1e-5", "--max-steps", "4", "--maps", "0", "--no-figures", "-q",
                 "--decoupled", "--out", str(dec)]) == 0
    rd = json.loads((dec / "summary.json").read_text())
    assert rd["parameters"]["mean"]["value"] is False
    assert fesub.load(dec / "dnnm.nc").Q.shape[1] == 2 * r["reduced_coordinates"]["value"]
    np.testing.assert_allclose(rd["results"]["tip_amplitude_start"]["value"],
                               r["tip_amplitude_start"]["value"], rtol=1e-8)


@pytest.mark.slow
def test_default_joint_backbone_with_the_mean_against_a_free_decay():
    """The bundled joint (200 contacts, 40 open at the preload) with the mean of the contact
    forces (the study's default), against a free decay of the same reduced model
    (:func:`fesub.hbm.ring_down`: newmark from the Nh = 3 backbone's point at the modal
    amplitude 3e-4, 256 steps per period with hht = 0.3, which damps the penalty contacts' own
    vibration; 256 against 512 steps moved the readings by 0.02 Hz and 0.6 % in damping), read
    half-swing by half-swing over four periods, down to about 2.2e-4.

    The backbone at the study's Nh = 3 (from 5e-5): frequency measured within 1e-4 to 7e-4 of
    the decay's, bound 2e-3 (the decoupled backbone, the mean dropped, stands 3.6 % above:
    the bound fails without the mean). Its damping ratio is not converged in the harmonics:
    the decay's is 2.7 % to 5.0 % below it (asserted between -8 % and 0).

    The same backbone with Nh = 5 and 7, each continued from the Nh = 3 point at 1.8e-4
    (``dnnm(guess=)``: the higher harmonics start at zero; the top points equal those of
    branches from 5e-5 to 1e-12). Frequencies measured within -1.0e-3 to -6.9e-4 (Nh 5) and
    2.7e-4 to 5.3e-4 (Nh 7), bound 2e-3. Damping ratio: the decay's is 5.1 % to 5.4 % above
    the Nh = 5 backbone's and 1.1 % to 1.6 % below the Nh = 7 one's: between them at every
    reading (asserted), within 2 % of Nh = 7 (asserted). At 3e-4 the backbone's damping ratio
    is 1.210 % (Nh 5), 1.284 % (Nh 7), 1.229 % (Nh 9), 1.250 % (Nh 11) and 1.248 % (Nh 13),
    each measured once: successive truncations straddle their limit with shrinking differences
    (Nh 11 and 13 within 0.6 % at every reading here; against them a decay reads the damping
    0.2-4.2 % higher, 1.8 % on average, also when started on the Nh = 11 orbit; the decay the
    backbone predicts by the energy balance between turning points,
    :func:`fesub.hbm.decay_prediction`, 2.1-4.9 % faster, reads four decays -0.7 % on average,
    rms 1.6 %: the user guide's bolted-joint page). A decay started from the Nh = 7 point
    instead read +0.8 % to -1.3 % against Nh = 7 over the same range: a decay's start moves it
    by 1-2 %. About 7 minutes on 2 cores.
    """
    from fesub.hbm import ring_down

    model = build()
    state = model.joint.preload(n_modes=12)
    hb, drive, start, mode = _bending_backbone_system(model, state, 3, True)
    dn = dnnm(hb, (5e-5, 3e-4), start, force_dof=drive, max_steps=300, kink_ds=1e-3)
    assert dn.stop_reason == "lam_range"
    phi = state.shapes[:, mode]
    weights = model.joint.M @ phi / math.sqrt(phi @ model.joint.M @ phi)
    rd = ring_down(hb, dn, len(dn.a) - 1, periods=4, steps_per_period=256, observe=weights,
                   hht=0.3)
    dw, dz = rd.compare(dn, hb.n, hb.nh)
    ok = np.isfinite(dw) & np.isfinite(dz)
    assert ok.sum() >= 3, (dw, dz)
    assert np.abs(dw[ok]).max() <= 2e-3, dw
    assert np.all((dz[ok] >= -0.08) & (dz[ok] <= 0.0)), dz
    # Nh = 5 and 7 from the Nh = 3 branch where the decay's lowest reading lies below it
    i = int(np.searchsorted(dn.a, 1.8e-4))
    dz_by = {}
    for nh in (5, 7):
        hbh = model.hb_system(state, nh, TWO_PI * state.freq_hz[mode], dof=drive, constant=True)
        dnh = dnnm(hbh, (dn.a[i], 3e-4), start, force_dof=drive, max_steps=100, kink_ds=1e-3,
                   guess=(dn.Q[i], dn.w0[i], dn.xi[i]))
        assert dnh.stop_reason == "lam_range"
        dwh, dzh = rd.compare(dnh, hbh.n, hbh.nh)
        okh = np.isfinite(dwh) & np.isfinite(dzh)
        assert okh.sum() >= ok.sum() - 1, (nh, dwh, dzh)
        assert np.abs(dwh[okh]).max() <= 2e-3, (nh, dwh)
        dz_by[nh] = np.where(okh, dzh, np.nan)
    both = np.isfinite(dz_by[5]) & np.isfinite(dz_by[7])
    assert both.sum() >= ok.sum() - 1
    # the decay's damping ratio lies between the two truncations' at every reading (their
    # relative differences to it have opposite signs): the harmonics, not the slow flow, make
    # the Nh = 3 backbone's gap
    assert np.all(dz_by[5][both] * dz_by[7][both] < 0), dz_by
    # and within 2 % of the Nh = 7 backbone's; measured 1.6 % at most (a decay's own
    # dependence on its start is 1-2 %, see above)
    assert np.nanmax(np.abs(dz_by[7])) <= 0.02, dz_by

def test_joint_study_ring_down(tmp_path, capsys):
    """``--ring-down N``: a free decay from the top of the backbone and the decay the backbone
    predicts, saved as parts (reopened by ``fesub.load`` and reused by a rerun) and set side by
    side in the summary, whose differences are those of the reopened results; fewer than three
    periods are refused (exit status 2)."""
    import fesub
    from fesub.cli import main

    out = tmp_path / "joint"
    flags = ["joint", "--mesh", str(bundled_mesh(coarse=True)), "--nh", "1", "--a-max", "3e-5",
             "--max-steps", "60", "--maps", "0", "--ring-down-steps", "128", "--ring-down", "4",
             "--no-figures", "-q", "--out", str(out)]
    assert main(flags) == 0
    r = json.loads((out / "summary.json").read_text())["results"]
    # the decay's time steps are those asked for: 4 periods of 128 steps, sampled at every step
    assert json.loads((out / "summary.json").read_text())["parameters"]["ring_down_steps"]["value"] == 128
    rd, pred, dn = (fesub.load(out / f"{k}.nc") for k in ("ring_down", "decay_prediction", "dnnm"))
    assert rd.steps_per_period == 128 and rd.t.size == 4 * 128 + 1
    assert r["ring_down_readings"]["value"] >= 3 and len(pred.swing) >= 3
    # the prediction covers the decay's half-swings (points one beyond each end)
    assert pred.swing[0] <= rd.amp.min() and pred.swing[-1] >= rd.amp.max()
    n = r["reduced_coordinates"]["value"]
    _, dz = rd.compare(dn, n, 1)
    _, dzp = rd.compare_prediction(pred)
    ok = np.isfinite(dz) & np.isfinite(dzp)
    assert r["ring_down_dzeta_backbone_max"]["value"] == pytest.approx(dz[ok].max(), rel=1e-12)
    assert r["ring_down_dzeta_prediction_min"]["value"] == pytest.approx(dzp[ok].min(), rel=1e-12)
    assert r["ring_down_dw_max"]["unit"] == "1"
    assert main(flags) == 0
    s2 = json.loads((out / "summary.json").read_text())
    assert {"ring_down", "decay_prediction"} <= set(s2["details"]["resumed_parts"])
    capsys.readouterr()
    assert main(flags[:-6] + ["--ring-down", "2", "-q", "--out", str(tmp_path / "x")]) == 2
    assert "--ring-down must be 0 (none) or 3 periods or more" in capsys.readouterr().err
