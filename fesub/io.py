"""JSON summaries beside NumPy results.

Results save their arrays to ``.npz`` and a summary to ``.json`` beside it; the summary may hold
NumPy scalars and arrays, which :func:`json_default` turns into plain Python values.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

__all__ = ["json_default", "write_json"]


def json_default(o):
    """``default=`` hook of :func:`json.dumps` for NumPy scalars and arrays and paths.

    Non-finite floats are written as JSON's NaN/Infinity extensions (which :mod:`json` reads back);
    any other type is an error rather than a silent string.
    """
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def write_json(path, obj, indent: int = 2) -> Path:
    """Write ``obj`` (with NumPy values) as JSON to ``path``; returns the path."""
    path = Path(path)
    path.write_text(json.dumps(obj, indent=indent, default=json_default))
    return path
