"""Null-space bases of one contact row and the primal projection L_E' X L_C without dense products.

A contact row b (B_C or B_E, six non-zeros) has the null-space basis of :func:`null_space_row`:
identity but the pivot row (largest |b_i|). Products with it are row selections plus rank-one terms,
O(n^2) for an n x n matrix instead of the O(n^3) of dense products.
"""

from __future__ import annotations

import numpy as np

from ...errors import ModelError

__all__ = ["null_space_row", "null_times", "project_rows"]


def _pivot(b: np.ndarray):
    """Pivot p (largest |b_i|), the other indices and l = -b[others] / b[p] of :func:`null_space_row`."""
    b = np.asarray(b, float)
    p = int(np.argmax(np.abs(b)))
    if b[p] == 0:
        raise ModelError("coupling row is zero")
    keep = np.r_[0:p, p + 1:b.size]
    return p, keep, -b[keep] / b[p]


def null_times(b: np.ndarray, X: np.ndarray) -> np.ndarray:
    """null_space_row(b) @ X in O(n k) for X of shape (n - 1, k): X's rows in the kept places and
    l' X in the pivot's."""
    p, keep, l = _pivot(b)
    out = np.empty((keep.size + 1, X.shape[1]))
    out[keep] = X
    out[p] = l @ X
    return out


def null_space_row(b: np.ndarray) -> np.ndarray:
    """(n, n-1) basis L of the null space of the row ``b`` (b L = 0), with identity on every index
    but the pivot (largest |b_i|): keeps L sparse and well conditioned."""
    p, keep, l = _pivot(b)
    n = keep.size + 1
    L = np.zeros((n, n - 1))
    L[keep, np.arange(n - 1)] = 1.0
    L[p, :] = l
    return L


def project_rows(X: np.ndarray, b_left: np.ndarray, b_right: np.ndarray) -> np.ndarray:
    """L(b_left)' X L(b_right) for the bases of :func:`null_space_row`, in O(n^2).

    Column j of L(b) is e_keep_j + l_j e_p (identity but the pivot row), so the product is the
    kept block of X plus three rank-one terms: the same matrix as the dense products (to round-off)
    without their O(n^3) cost.
    """
    pl, kl, ll = _pivot(b_left)
    pr, kr, lr = _pivot(b_right)
    Y = X[np.ix_(kl, kr)]
    Y += np.outer(ll, X[pl, kr] + X[pl, pr] * lr)
    Y += np.outer(X[kl, pr], lr)
    return Y
