"""NumPy twin of ``aberth.pyx``: the Aberth-Ehrlich correction of every root of a rational function's
numerator, and the Weierstrass inclusion disks that certify them.

Same functions and signatures as the compiled kernel. The function is
g(z) = sum_k r_k / ((z - a_k)(z - b_k)) and its numerator N(z) = g(z) prod_k (z - a_k)(z - b_k),
with leading coefficient ``lead`` = sum_k r_k.
"""

from __future__ import annotations

import numpy as np


def aberth_steps(z, active, r, a, b, step):
    """Aberth correction step[i] = 1 / (N'/N(z_i) - sum_{j != i} 1 / (z_i - z_j)) of each root
    index i in ``active``. Returns the number of non-finite steps."""
    zi = z[active]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        u = zi[:, None] - a
        v = zi[:, None] - b
        q = 1.0 / (u * v)
        t = r * q
        h = (u + v) * q
        ratio = -(t * h).sum(1) / t.sum(1) + h.sum(1)
        dz = zi[:, None] - z[None, :]
        dz[np.arange(active.size), active] = np.inf
        st = 1.0 / (ratio - (1.0 / dz).sum(1))
    step[active] = st
    return int(np.count_nonzero(~np.isfinite(st)))


def inclusion_radii(z, idx, r, a, b, lead, rad):
    """Radii rad[i] = D |W_i| of the Weierstrass inclusion disks for each i in ``idx``,
    W_i = N(z_i) / (lead prod_{j != i} (z_i - z_j)), D the number of roots (sums of logarithms:
    no overflow)."""
    D = z.size
    zi = z[idx]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        q = (zi[:, None] - a) * (zi[:, None] - b)
        g = (r / q).sum(1)
        dz = np.abs(zi[:, None] - z[None, :])
        dz[np.arange(idx.size), idx] = 1.0
        lg = np.log(np.abs(q)).sum(1) - np.log(dz).sum(1)
        out = D * np.abs(g) * np.exp(lg) / abs(lead)
    rad[idx] = np.where(np.isfinite(out), out, np.inf)


def disjoint(z, rad):
    """True when the disks |w - z_i| <= rad[i] are pairwise disjoint."""
    d = np.abs(z[:, None] - z[None, :])
    np.fill_diagonal(d, np.inf)
    return bool(np.all(rad[:, None] + rad[None, :] < d))
