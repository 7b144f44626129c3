"""The one place that sets up matplotlib for fesub's figures (off-screen, one house style).

:func:`pyplot` returns :mod:`matplotlib.pyplot` on the off-screen Agg backend; :func:`save`
writes a figure and closes it; :func:`db_limits` gives colour limits for a dB map that span only
the range carrying information; :func:`check_figure` is what the tests use to hold every figure to
the house rules (axis labels with units, a title, finite and bounded colour limits).

What is drawn is cut to what the pixels can show: :func:`envelope` reduces a line of millions of
samples to the lowest and highest sample of each of a few thousand columns (the line covers the same
pixels), and :func:`colour_map` draws a map on a uniform grid as an image (one colour per cell, as
``pcolormesh`` draws it, at the cost of resampling the image instead of filling each cell).
"""

from __future__ import annotations

import re

import numpy as np

__all__ = ["pyplot", "save", "db_limits", "check_figure", "envelope", "colour_map", "DB_SPAN",
           "LINE_COLUMNS"]

#: dynamic range of dB colour maps: what a measured or simulated FRF map carries (dB)
DB_SPAN = 100.0
#: columns of :func:`envelope`: four per pixel of a line 8 inches wide at 120 dpi (960 pixels)
LINE_COLUMNS = 4000
_UNIT = re.compile(r"\[[^\]]+\]|\([^)]*\)")


def pyplot():
    """:mod:`matplotlib.pyplot` on the Agg backend (no screen needed)."""
    import matplotlib

    if matplotlib.get_backend().lower() != "agg":
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


#: zlib level of the PNG files: level 1 writes a study's figures in 0.5 s less CPU than the
#: default 6, for files about a fifth larger
PNG_COMPRESSION = 1


def save(fig, path, *, dpi: int = 120):
    """Write ``fig`` to ``path`` (PNG) and close it; returns the path.

    The figure is written on its own canvas, not cropped to its content (``bbox_inches="tight"``
    costs a layout of every artist before the drawing: 3.1 s of the 7.8 s that the beam-on-beam
    study's 19 figures took to write). Plotting functions keep their content inside the figure,
    which :func:`check_figure` verifies.
    """
    plt = pyplot()
    fig.savefig(path, dpi=dpi, pil_kwargs={"compress_level": PNG_COMPRESSION})
    plt.close(fig)
    return path


def envelope(x, y, columns: int = LINE_COLUMNS):
    """The samples of a line that its drawing at ``columns`` columns across needs: in each column
    of consecutive samples, the lowest and the highest, in their order (the first and the last
    sample are kept). A line of fewer than ``2 columns`` samples is returned as it is.

    Parameters
    ----------
    x : (n,) array
        Abscissae, increasing (any unit, e.g. s).
    y : (n,) array
        Ordinates (any unit); a column holding NaN keeps one (a gap stays a gap).
    columns : int
        Number of columns, a few per pixel of the axes' width (dimensionless count).

    Returns
    -------
    (x, y) : arrays of at most ``2 columns + 2`` samples taken from the input (same units).
    """
    x, y = np.asarray(x), np.asarray(y)
    n = y.size
    if n <= 2 * columns:
        return x, y
    k = n // columns
    m = k * columns
    blocks = y[:m].reshape(columns, k)
    lo, hi = np.argmin(blocks, axis=1), np.argmax(blocks, axis=1)
    first = np.minimum(lo, hi) + np.arange(columns) * k
    second = np.maximum(lo, hi) + np.arange(columns) * k
    idx = np.unique(np.concatenate([[0], np.column_stack([first, second]).ravel(), np.arange(m, n), [n - 1]]))
    return x[idx], y[idx]


def _uniform(v) -> bool:
    d = np.diff(np.asarray(v, float))
    return d.size > 0 and d[0] > 0 and bool(np.all(np.abs(d - d[0]) <= 1e-6 * d[0]))


def colour_map(ax, x, y, c, **kw):
    """Draw ``c`` (ny, nx) with cell centres at ``x`` (nx,) and ``y`` (ny,) like
    ``ax.pcolormesh(x, y, c, shading="auto", **kw)``: as an image (nearest cell, one colour per
    cell) when both grids are uniform and increasing, else as that mesh; returns the artist.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    x, y : 1-D arrays
        Cell centres along the horizontal and the vertical axis (the axes' units).
    c : (ny, nx) array (masked where invalid)
        Values (their unit is the colour bar's).
    **kw
        ``cmap``, ``vmin``, ``vmax``, ``norm``.
    """
    x, y = np.asarray(x, float), np.asarray(y, float)
    if not (_uniform(x) and _uniform(y)):
        return ax.pcolormesh(x, y, c, shading="auto", **kw)
    dx, dy = x[1] - x[0], y[1] - y[0]
    extent = (x[0] - dx / 2, x[-1] + dx / 2, y[0] - dy / 2, y[-1] + dy / 2)
    return ax.imshow(c, origin="lower", extent=extent, aspect="auto", interpolation="nearest", **kw)


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
    colour bar is in dB; nothing drawn lies outside the figure (:func:`save` does not crop).
    """
    problems = _outside(fig)
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


#: how far (inches) a drawn artist may reach past the figure's edge: a glyph's descender or a
#: line's half width, under one pixel at 120 dpi
EDGE_SLACK = 0.01


def _outside(fig) -> list[str]:
    """What a figure draws beyond its edges, which :func:`save` would cut off."""
    box = fig.get_tightbbox(fig.canvas.get_renderer())
    w, h = fig.get_size_inches()
    if box is None or (box.x0 >= -EDGE_SLACK and box.y0 >= -EDGE_SLACK and box.x1 <= w + EDGE_SLACK
                       and box.y1 <= h + EDGE_SLACK):
        return []
    return [f"drawn outside the figure: content spans ({box.x0:.2f}, {box.y0:.2f}) to ({box.x1:.2f}, "
            f"{box.y1:.2f}) in on a {w:.2f} x {h:.2f} in figure"]
