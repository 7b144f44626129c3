"""What the ready-made models share: where their bundled meshes are, and the description of a
reduced model's spectrum."""

from __future__ import annotations

import importlib.resources
from pathlib import Path

import numpy as np

from ..errors import MeshError

__all__ = ["bundled_file", "spectrum_summary"]


def bundled_file(name: str) -> Path:
    """Path of a bundled mesh or Gmsh model (``brake.msh``, ``bracket.msh``, ...): installed as
    the package data ``fesub/meshes``, or the folder ``meshes/`` beside the package in a source
    checkout (which has no ``fesub.meshes`` to import).

    Raises
    ------
    MeshError
        When neither place holds ``name``.
    """
    try:
        p = Path(str(importlib.resources.files("fesub.meshes") / name))
        if p.exists():
            return p
    except ModuleNotFoundError:
        pass
    p = Path(__file__).resolve().parents[2] / "meshes" / name
    if p.exists():
        return p
    raise MeshError(f"bundled file {name} not found (expected in fesub/meshes, or ./meshes in a checkout)")


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
