"""What the figures draw of long signals and dense maps (fesub.plots.style.envelope, colour_map):
against brute force and against the drawing they replace."""

from __future__ import annotations

import numpy as np

from fesub.plots import style


def test_envelope_keeps_the_extremes_of_every_column_in_order():
    """Each column of consecutive samples keeps its lowest and highest sample (brute force per
    column), in time order, the first and last samples included; short lines pass unchanged."""
    rng = np.random.default_rng(3)
    n, columns = 100_003, 500
    x = np.arange(n) * 2e-5
    y = np.cumsum(rng.standard_normal(n)) + 50 * (np.arange(n) == 777)  # with a one-sample spike
    xs, ys = style.envelope(x, y, columns)
    assert xs.size <= 2 * columns + 2 + n % columns and np.all(np.diff(xs) > 0)
    assert xs[0] == x[0] and xs[-1] == x[-1] and ys.max() == y.max() and ys.min() == y.min()
    idx = np.searchsorted(x, xs)
    np.testing.assert_array_equal(y[idx], ys)  # samples of the line, not new values
    k = n // columns
    for c in range(columns):
        sel = (idx >= c * k) & (idx < (c + 1) * k)
        block = y[c * k:(c + 1) * k]
        assert ys[sel].min() == block.min() and ys[sel].max() == block.max(), c
    xs2, ys2 = style.envelope(x[:999], y[:999], columns)
    assert xs2 is not None and np.array_equal(ys2, y[:999])


def _pixels(draw):
    plt = style.pyplot()
    fig, ax = plt.subplots(figsize=(4, 3), dpi=100)
    draw(ax)
    ax.set_axis_off()
    fig.subplots_adjust(0, 0, 1, 1)
    fig.canvas.draw()
    px = np.asarray(fig.canvas.buffer_rgba())[..., :3].astype(int)
    plt.close(fig)
    return px


def test_colour_map_draws_a_uniform_grid_like_the_quad_mesh():
    """On a uniform grid the image shows each cell in its colour where the quad mesh does: the
    same pixels (within one level of 255: the image rounds its colours once more) but for those on
    cell edges, where the two may sample either neighbour (a grid of 40 x 30 cells on 400 x 300
    pixels: at most the pixels of the 70 edge lines)."""
    x = np.linspace(0.2, 3.1, 40)
    y = np.linspace(0.0, 20.0, 30)
    c = np.sin(x[None, :] * 3) * np.cos(y[:, None] / 3)
    c = np.ma.masked_invalid(np.where(c > 0.9, np.nan, c))  # masked cells stay blank in both
    img = _pixels(lambda ax: style.colour_map(ax, x, y, c, cmap="magma", vmin=-1, vmax=1))
    mesh = _pixels(lambda ax: ax.pcolormesh(x, y, c, shading="auto", cmap="magma", vmin=-1, vmax=1))
    differ = (np.abs(img - mesh).max(axis=-1) > 1).mean()
    assert differ < 70 * 400 / (400 * 300), differ
    # a non-uniform grid keeps the quad mesh
    plt = style.pyplot()
    fig, ax = plt.subplots()
    art = style.colour_map(ax, np.r_[0.0, 1.0, 3.0], y, np.zeros((30, 3)))
    assert type(art).__name__ == "QuadMesh"
    plt.close(fig)
