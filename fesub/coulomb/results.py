"""Saving results of the Coulomb study: arrays to ``.npz`` with a JSON summary beside them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

__all__ = ["save_result", "load_result"]


def _jsonable(v):
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, np.ndarray):
        return _jsonable(v.tolist())
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating, float)):
        f = float(v)
        return f if np.isfinite(f) else str(f)
    if isinstance(v, (np.bool_,)):
        return bool(v)
    return v


def save_result(path, arrays: dict, meta: dict) -> tuple[str, str]:
    """Write ``<path>.npz`` with ``arrays`` and ``<path>.json`` with ``meta``; return both paths."""
    p = Path(path)
    if p.suffix in (".npz", ".json"):
        p = p.with_suffix("")
    p.parent.mkdir(parents=True, exist_ok=True)
    npz = p.with_suffix(".npz")
    js = p.with_suffix(".json")
    np.savez_compressed(npz, **{k: np.asarray(v) for k, v in arrays.items()})
    meta = dict(meta)
    meta["arrays"] = {k: list(np.shape(v)) for k, v in arrays.items()}
    js.write_text(json.dumps(_jsonable(meta), indent=2))
    return str(npz), str(js)


def load_result(path) -> tuple[dict, dict]:
    """Load what :func:`save_result` wrote: (arrays, meta)."""
    p = Path(path)
    if p.suffix in (".npz", ".json"):
        p = p.with_suffix("")
    with np.load(p.with_suffix(".npz")) as f:
        arrays = {k: f[k] for k in f.files}
    meta = json.loads(p.with_suffix(".json").read_text())
    return arrays, meta
