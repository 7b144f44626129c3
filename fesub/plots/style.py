"""The one place that sets up matplotlib for fesub's figures (off-screen, one house style).

:func:`pyplot` returns :mod:`matplotlib.pyplot` on the off-screen Agg backend; :func:`save`
writes a figure and closes it; :func:`db_limits` gives colour limits for a dB map that span only
the range carrying information; :func:`check_figure` is what the tests use to hold every figure to
the house rules (axis labels with units, a title, finite and bounded colour limits).
"""

from __future__ import annotations

import re

import numpy as np

__all__ = ["pyplot", "save", "db_limits", "check_figure", "DB_SPAN"]

#: dynamic range of dB colour maps: what a measured or simulated FRF map carries (dB)
DB_SPAN = 100.0
_UNIT = re.compile(r"\[[^\]]+\]|\([^)]*\)")


def pyplot():
    """:mod:`matplotlib.pyplot` on the Agg backend (no screen needed)."""
    import matplotlib

    if matplotlib.get_backend().lower() != "agg":
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save(fig, path, *, dpi: int = 120):
    """Write ``fig`` to ``path`` (PNG) and close it; returns the path."""
    plt = pyplot()
    fig.savefig(path, dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    return path


def db_limits(db, span: float = DB_SPAN):
    """``(vmin, vmax)`` for a dB map: the maximum finite value and ``span`` dB below it."""
    db = np.asarray(db, dtype=float)
    finite = db[np.isfinite(db)]
    if finite.size == 0:
        return -1.0, 0.0
    top = float(finite.max())
    return top - span, top


def check_figure(fig) -> list[str]:
    """What a figure lacks by the house rules (empty when it passes).

    Every axes with data has a title (on it or the figure) and x/y labels with a unit in brackets
    or parentheses, unless the label names a dimensionless quantity listed as such by an ``[-]``
    or ``(-)``; every colour-mapped image has finite limits spanning at most 150 dB when its
    colour bar is in dB.
    """
    problems = []
    suptitle = fig._suptitle.get_text() if getattr(fig, "_suptitle", None) else ""
    for i, ax in enumerate(fig.axes):
        if getattr(ax, "_colorbar", None) is not None or ax.get_label() == "<colorbar>":
            continue
        if not (ax.lines or ax.collections or ax.images or ax.patches):
            continue
        if not (ax.get_title() or suptitle):
            problems.append(f"axes {i}: no title")
        for which in ("x", "y"):
            lab = getattr(ax, f"get_{which}label")()
            if not lab:
                problems.append(f"axes {i}: no {which} label")
            elif not _UNIT.search(lab):
                problems.append(f"axes {i}: {which} label {lab!r} has no unit")
        for art in list(ax.images) + [c for c in ax.collections if c.get_array() is not None]:
            lo, hi = art.get_clim()
            if lo is None or hi is None or not (np.isfinite(lo) and np.isfinite(hi)):
                problems.append(f"axes {i}: colour limits not finite ({lo}, {hi})")
            cb = getattr(art, "colorbar", None)
            if cb is not None and "dB" in (cb.ax.get_ylabel() + cb.ax.get_xlabel()) and hi - lo > 150:
                problems.append(f"axes {i}: dB colour scale spans {hi - lo:.0f} dB")
        for axis in (ax.xaxis, ax.yaxis):
            if axis.get_scale() == "log":
                lo, hi = (ax.get_xlim() if axis is ax.xaxis else ax.get_ylim())
                if lo <= 0 or hi / lo > 1e40:
                    problems.append(f"axes {i}: log axis spans {lo:.3g} to {hi:.3g}")
    return problems
