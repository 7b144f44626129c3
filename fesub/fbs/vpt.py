"""Virtual-point transformation: measured channels on a stiff interface to a point's 6 DOFs.

Sensors (or excitations) at positions ``r_i`` with directions ``e_i`` near an interface that
moves as a rigid body see ``u_i = e_i . (t + theta x (r_i - c))``: three translations ``t`` and
three small rotations ``theta`` of the virtual point ``c``. Stacked over the channels this is
``u = R q`` with the interface displacement modes ``R`` (n_ch x 6). With at least six
independent channels the virtual point's motion is the least-squares ``q = T u``,
``T = (R^T W R)^-1 R^T W``; forces transform with the same ``R`` (``f_ch = T_f^T m``, the
virtual forces and moments reproduced by the channel forces), so the virtual-point receptance is
``Y_vp = T_u Y T_f^T``. What the rigid motion cannot explain (interface flexibility, sensor
errors) is left in the residual of ``u - R q``: :func:`consistency` measures it.
"""

from __future__ import annotations

import numpy as np

from ..errors import ParameterError

__all__ = ["interface_modes", "reduction_matrix", "virtual_point_frf", "consistency"]


def _vectors(a, what: str) -> np.ndarray:
    a = np.asarray(a, dtype=float)
    if a.ndim != 2 or a.shape[1] != 3 or not np.all(np.isfinite(a)):
        raise ParameterError(f"{what} must be an (n, 3) array of finite values")
    return a


def interface_modes(positions, directions, center) -> np.ndarray:
    """``R`` (n_ch x 6): channel ``i`` reading of a unit translation (x, y, z; m) or a unit small
    rotation (about x, y, z; rad) of the rigid interface about ``center`` (m).

    Parameters
    ----------
    positions : (n_ch, 3) array
        Channel positions (m).
    directions : (n_ch, 3) array
        Channel directions (normalised here).
    center : (3,) array
        Virtual point (m).
    """
    r = _vectors(positions, "positions") - np.asarray(center, dtype=float)[None, :]
    e = _vectors(directions, "directions")
    norm = np.linalg.norm(e, axis=1)
    if np.any(norm == 0) or len(norm) != len(r):
        raise ParameterError("each channel needs a non-zero direction, one per position")
    e = e / norm[:, None]
    # e . (theta x r) = theta . (r x e)
    return np.hstack([e, np.cross(r, e)])


def reduction_matrix(R: np.ndarray, weights=None) -> np.ndarray:
    """``T = (R^T W R)^-1 R^T W`` (6 x n_ch): channel readings to the virtual point's motion.

    Parameters
    ----------
    R : (n_ch, 6) array
        Interface displacement modes from :func:`interface_modes`: channel readings per unit
        translation (m/m, columns 0-2) and per unit small rotation (m/rad, columns 3-5); at least
        six independent channels.
    weights : (n_ch,) array, optional
        Relative weight of each channel in the least-squares fit (dimensionless, ``W =
        diag(weights)``); None (default) weighs all channels equally.

    Returns
    -------
    (6, n_ch) ndarray
        ``T``: rows 0-2 give the translations of the virtual point (m per m of channel reading),
        rows 3-5 its rotations (rad per m).
    """
    R = np.asarray(R, dtype=float)
    W = np.eye(R.shape[0]) if weights is None else np.diag(np.asarray(weights, dtype=float))
    G = R.T @ W @ R
    if np.linalg.matrix_rank(G) < R.shape[1]:
        raise ParameterError("the channels do not see all six rigid motions of the interface "
                             "(at least six independent channels are needed)")
    return np.linalg.solve(G, R.T @ W)


def virtual_point_frf(Y: np.ndarray, R_u: np.ndarray, R_f: np.ndarray, weights=None):
    """Virtual-point receptance ``T_u Y T_f^T`` (nf, 6, 6) from channel FRFs ``Y`` (nf, n_u,
    n_f): responses at the channels of ``R_u``, forces at those of ``R_f``.

    Parameters
    ----------
    Y : (nf, n_u, n_f) complex array
        Channel receptances (m/N) at each frequency.
    R_u : (n_u, 6) array
        Interface modes of the response channels (see :func:`interface_modes`; m/m and m/rad).
    R_f : (n_f, 6) array
        Interface modes of the excitation channels (same units).
    weights : (n_u,) array, optional
        Relative weights of the response channels (dimensionless; see
        :func:`reduction_matrix`); the excitation channels are weighted equally.

    Returns
    -------
    (nf, 6, 6) complex ndarray
        Virtual-point receptance: translations (m) and rotations (rad) per unit force (N) and
        moment (N m) of the virtual point, e.g. m/N in the upper-left 3 x 3 block and rad/(N m)
        in the lower-right one.
    """
    Y = np.asarray(Y, dtype=complex)
    Tu, Tf = reduction_matrix(R_u, weights), reduction_matrix(R_f)
    return np.einsum("ai,kij,bj->kab", Tu, Y, Tf)


def consistency(Y: np.ndarray, R_u: np.ndarray, weights=None) -> np.ndarray:
    """Per frequency, ``||u - R q|| / ||u||`` over the columns of ``Y``: 0 for a rigid interface
    seen by exact channels, larger with flexibility or noise.

    Parameters
    ----------
    Y : (nf, n_u, n_f) complex array
        Channel receptances (m/N); its columns are the channel responses tested.
    R_u : (n_u, 6) array
        Interface modes of the response channels (see :func:`interface_modes`; m/m and m/rad).
    weights : (n_u,) array, optional
        Relative channel weights of the fit (dimensionless; see :func:`reduction_matrix`).

    Returns
    -------
    (nf,) ndarray
        Relative residual of the rigid-interface fit at each frequency (dimensionless, 0 to 1).
    """
    Y = np.asarray(Y, dtype=complex)
    P = np.asarray(R_u) @ reduction_matrix(R_u, weights)
    res = Y - np.einsum("ij,kjl->kil", P, Y)
    return np.linalg.norm(res, axis=(1, 2)) / np.linalg.norm(Y, axis=(1, 2))
