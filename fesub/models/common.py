"""What the ready-made contact models share: the description of a reduced model's spectrum."""

from __future__ import annotations

import numpy as np

__all__ = ["spectrum_summary"]


def spectrum_summary(model) -> dict:
    """The spectrum of a :class:`fesub.contact.MultibodyModel` as a model's summary gives it:
    ``modal_coordinates``, ``lowest_elastic_frequency_hz`` (the lowest non-zero natural frequency,
    Hz; ``None`` when every mode is rigid), ``highest_frequency_hz`` (Hz) and
    ``critical_time_step_s`` (the central-difference stability limit of the stepper, s)."""
    w = np.sqrt(np.asarray(model.omega2, dtype=float))
    return {"modal_coordinates": int(model.n_modes),
            "lowest_elastic_frequency_hz": float(w[w > 0].min() / (2 * np.pi)) if np.any(w > 0) else None,
            "highest_frequency_hz": float(w.max() / (2 * np.pi)),
            "critical_time_step_s": float(model.critical_step())}
