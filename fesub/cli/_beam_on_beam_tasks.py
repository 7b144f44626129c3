"""The work of ``fesub beam-on-beam`` that runs in worker processes: each task a module-level
function of picklable arguments, run on the study's pool (:func:`fesub.parallel.worker_pool`) or,
with one job, at once in the study's process (:func:`fesub.cli.common.run_task`).

The contact system holds the compiled search kernel, which does not pickle: tasks receive a
:class:`SystemRef` (the model, which pickles, and a key), and a worker builds the system once from
the model (a forked worker finds the study's own system already built).

* :func:`simulate_case` - one transient case (a part of the study);
* :func:`tdfrf` - the time-dependent FRF of the stable case (a part);
* :func:`deformed_loci` - the deformed analysis over a run of positions;
* :func:`transient_record` - a transient's record (details, burst windows and their dominant
  frequencies) and its bursts (:func:`fesub.contact.analyses.bursts.detect_bursts`);
* :func:`transient_figures`, :func:`eigen_figures`, :func:`tdfrf_figure`, :func:`mode_figures` -
  the figures.
"""

from __future__ import annotations

import numpy as np

#: contact systems by key: the study's own (set by SystemRef), or rebuilt in a spawned worker
_SYSTEMS: dict = {}


def preload(figures: bool) -> None:
    """Import what the workers of the study's pool need, before the pool forks them (a forked
    worker inherits the modules, each would import them again): the result files' (xarray,
    h5netcdf), the signal processing's (scipy.signal) and, with ``figures``, matplotlib's."""
    import h5netcdf  # noqa: F401
    import scipy.signal  # noqa: F401
    import xarray  # noqa: F401

    if figures:
        from ..plots import style

        style.pyplot()


class SystemRef:
    """The study's contact system, passed to workers by reference.

    Parameters
    ----------
    model : fesub.models.beam_on_beam.BeamOnBeam
        The model the system is built from (:func:`fesub.models.beam_on_beam.contact_system`).
    system : fesub.contact.SlidingContactSystem
        The system built in the study's process (kept in this process; forked workers inherit it).
    """

    def __init__(self, model, system):
        _SYSTEMS.clear()  # one study at a time per process
        self.key, self.model = id(system), model
        _SYSTEMS[self.key] = system

    def get(self):
        """The contact system (built from the model once per process when not inherited)."""
        if self.key not in _SYSTEMS:
            from ..models import beam_on_beam as bb

            _SYSTEMS[self.key] = bb.contact_system(self.model)
        return _SYSTEMS[self.key]


def simulate_case(ref, mu, roughness_std, duration, fs_out, p, seed, progress=False):
    """One transient case: friction coefficient ``mu`` (1), roughness force std (N), ``duration``
    (s), output rate ``fs_out`` (Hz), model parameters ``p``, noise ``seed``, on the contact
    engine; the result records the load (N)."""
    from ..contact.sliding.transient import simulate

    res = simulate(ref.get(), mu=mu, duration=duration, vx=p.vx, fs_out=fs_out, roughness_std=roughness_std,
                   roughness_band=p.roughness_band, seed=seed, progress=progress)
    res.info["load_N"] = float(p.Fy)
    return res


def tdfrf(ref, times, freqs, mu, p):
    """The time-dependent FRF (accelerance, force C_y to acceleration T_y) at ``times`` (s) and
    ``freqs`` (Hz), friction coefficient ``mu`` (1)."""
    from ..contact.analyses.frf import time_dependent_frf

    return time_dependent_frf(ref.get(), times, freqs, "C_y", "T_y", mu, p.s0, p.vx, accelerance=True)


def deformed_loci(ref, positions, mu, vx):
    """The eigenvalues of the deformed sliding states at ``positions`` (m), friction coefficient
    ``mu`` (1), sliding velocity ``vx`` (m/s): :func:`fesub.contact.analyses.eigen.eigenvalue_loci` with
    ``geometry='deformed'``."""
    from ..contact.analyses.eigen import eigenvalue_loci
    from ..parallel import single_thread_blas

    with single_thread_blas():
        return eigenvalue_loci(ref.get(), positions, mu, 20, modal_cutoff_hz=None, geometry="deformed", vx=vx)


def burst_info(res) -> dict:
    """Burst windows (s) of the tip acceleration (at most 10), their dominant frequencies (Hz) and
    the contact positions (m) crossed from 30 ms before each window to its end."""
    from ..signal import burst_windows, dominant_frequency, window_spectrum

    s = res.signals
    if s["t"].size < 256:
        return {"bursts_s": [], "burst_dominant_hz": [], "burst_positions_m": []}
    wins = burst_windows(s["t"], s["a_T_y"], min_gap=0.02, min_length=0.005)
    dom, pos = [], []
    for a, b in wins[:10]:
        f, X = window_spectrum(s["t"], s["a_T_y"], a, b)
        dom.append(dominant_frequency(f, X, fmin=100.0))
        pos.append([float(v) for v in np.interp([a - 0.03, b], s["t"], s["x_contact"])])
    return {"bursts_s": [[float(a), float(b)] for a, b in wins[:10]], "burst_dominant_hz": dom,
            "burst_positions_m": pos}


def transient_record(res, detect: bool):
    """A transient's record and its bursts.

    Parameters
    ----------
    res : fesub.contact.TransientResult
    detect : bool
        Whether to detect the bursts of the tip acceleration.

    Returns
    -------
    (info, bursts) : the result's details with :func:`burst_info`, and the bursts of the tip
        acceleration (:func:`fesub.contact.analyses.bursts.detect_bursts`) with ``detect`` (None otherwise).
    """
    from ..contact.analyses.bursts import detect_bursts

    info = res.details()
    info.update(burst_info(res))
    s = res.signals
    bursts = None
    if detect:
        bursts = detect_bursts(s["t"], s["a_T_y"], s["x_contact"]) if s["t"].size >= 256 else []
    return info, bursts


def transient_figures(res, windows, paths, case, marks) -> None:
    """The signals of a transient (``paths[0]``), the spectrogram of its tip acceleration
    (``paths[1]``, when drawn) and the spectra of the burst ``windows`` ((start, end) in s;
    ``paths[2]``, when there are any); ``case`` names the case, ``marks`` (Hz) are dashed on the
    spectrogram."""
    from ..contact.sliding import plots as pc
    from ..signal import window_spectrum

    pc.plot_transient(res, paths[0], title=f"transient, {case}: {res.status} at t = {res.stop_time:.4g} s")
    s = res.signals
    if s["t"].size > 64:
        pc.plot_spectrogram(s["t"], s["a_T_y"], res.fs_out, paths[1], marks=marks,
                            title=f"spectrogram of a_T,y, {case}", nperseg=min(2048, s["t"].size))
    if windows:
        spectra = [(f"{a:.3f}-{b:.3f} s", *window_spectrum(s["t"], s["a_T_y"], a, b)) for a, b in windows]
        pc.plot_burst_spectra(spectra, paths[-1], title=f"burst spectra of a_T,y, {case}")


def eigen_figures(loci, paths, rayleigh, titles, crit_title) -> None:
    """The loci at each mu (``paths[:-1]``, with the Rayleigh damping lines) and the largest real
    part per position (``paths[-1]``)."""
    from ..contact.sliding import plots as pc

    for L, path, title in zip(loci, paths, titles):
        pc.plot_loci(L, path, rayleigh=rayleigh, title=title)
    pc.plot_max_real(list(loci), paths[-1], title=crit_title)


def tdfrf_figure(r, path, title) -> None:
    """The time-dependent FRF map."""
    from ..contact.sliding import plots as pc

    pc.plot_tdfrf(r, path, title=title)


def mode_figures(ref, folder, n=4) -> list:
    """Draw the ``n`` lowest coupled modes (mu = 0, contact at mid-span) of both substructures to
    ``folder/coupled_mode_<k>.png``; returns ``(file name, frequency Hz, contact position m)`` of
    each."""
    from pathlib import Path

    from ..contact.sliding import plots as pc
    from ..contact.analyses.eigen import complex_eigenvalues

    model, system = ref.model, ref.get()
    p = model.params
    s_mid = 0.5 * (p.s0 + p.L2)
    # beam 1 is drawn where the mode is computed: translated (as the drive moves it) so that its
    # slave node C sits on the target surface at x = s_mid, not at its starting position
    mesh1 = model.sub1.mesh.transformed(translate=system.surface_point(s_mid) - system.X_C)
    lam, shapes = complex_eigenvalues(system, s_mid, 0.0, n, return_modes=True)
    written = []
    n1 = system.K1.shape[0]
    for k in range(lam.size):
        u = np.real(shapes[:, k] * np.exp(-1j * np.angle(shapes[np.argmax(np.abs(shapes[:, k])), k])))
        q1 = np.zeros(model.cb1.n_dofs)
        q1[system.f1_idx] = u[:n1]
        f1 = model.sub1.expand(model.cb1.recover(q1))
        f2 = model.sub2.expand(model.cb2.recover(u[n1:]))
        fhz = lam[k].imag / (2 * np.pi)
        name = f"coupled_mode_{k + 1}.png"
        pc.plot_coupled_modes([(mesh1, f1), (model.sub2.mesh, f2)], Path(folder) / name,
                              labels=["beam 1", "beam 2"],
                              title=f"coupled mode {k + 1}: {fhz:.1f} Hz (mu = 0, contact at x = "
                                    f"{s_mid * 1e3:.1f} mm)")
        written.append((name, float(fhz), float(s_mid)))
    return written
