"""Lagrange-multiplier frequency-based substructuring (LM-FBS): coupling and decoupling.

Substructures enter with their FRF matrices ``Y_s`` (receptances at their DOFs, square and
collocated) side by side, ``Y = diag(Y_1, ..., Y_n)``. The interface is a signed Boolean matrix
``B`` (one row per compatibility condition ``u_a - u_b = 0``), used for both compatibility and
equilibrium; the coupled receptance of the whole is, at every frequency,

    Y_c = Y - Y B^T (B Y B^T)^-1 B Y.

Decoupling is the same formula with the known (residual) substructure entered with a minus sign,
``Y = diag(Y_AB, -Y_B)``: its receptance is subtracted from the assembly's. With more interface
conditions than the residual's interface needs (an extended interface, common with measured data),
or noisy data, ``B Y B^T`` is singular or ill-conditioned: ``rcond`` then replaces its inverse by
a truncated-SVD pseudo-inverse (singular values below ``rcond`` times the largest are dropped), and
the result's ``info`` records how many were dropped and the worst condition number met.
"""

from __future__ import annotations

import numpy as np

from ..errors import ParameterError, check_range
from .frf import FRFMatrix, dof_label

__all__ = ["lmfbs", "interface_matrix", "couple", "decouple"]


def lmfbs(Y: np.ndarray, B: np.ndarray, *, rcond: float | None = None):
    """``Y - Y B^T (B Y B^T)^-1 B Y`` at every frequency.

    Parameters
    ----------
    Y : (nf, n, n) complex array
        Uncoupled receptances side by side (m/N), block diagonal.
    B : (m, n) array
        Signed Boolean interface matrix (rows ``u_a - u_b = 0``).
    rcond : float, optional
        Truncated-SVD pseudo-inverse of the interface receptance ``B Y B^T``: singular values
        below ``rcond`` times the largest are dropped. None: an exact solve.

    Returns
    -------
    Yc : (nf, n, n) complex array
        Coupled receptance (m/N).
    stats : dict
        ``max_condition`` of ``B Y B^T`` over the frequencies and ``max_dropped`` singular values.
    """
    Y = np.asarray(Y, dtype=complex)
    B = np.asarray(B, dtype=float)
    if Y.ndim != 3 or Y.shape[1] != Y.shape[2] or B.ndim != 2 or B.shape[1] != Y.shape[1]:
        raise ParameterError(f"Y must be (nf, n, n) and B (m, n); got {Y.shape} and {B.shape}")
    if rcond is not None:
        rcond = check_range("rcond", rcond, 0.0, 1.0, lo_open=True, hi_open=True)
    BY = np.einsum("mi,kij->kmj", B, Y)                      # (nf, m, n)
    YBt = np.einsum("kij,mj->kim", Y, B)                     # (nf, n, m)
    Yint = np.einsum("kmj,lj->kml", BY, B)                   # (nf, m, m)
    s = np.linalg.svd(Yint, compute_uv=False)
    with np.errstate(divide="ignore"):
        cond = float(np.max(s[:, 0] / s[:, -1]))
    dropped = 0
    if rcond is None:
        X = np.linalg.solve(Yint, BY)
    else:
        U, s, Vh = np.linalg.svd(Yint)
        keep = s >= rcond * s[:, :1]
        dropped = int((~keep).sum(axis=1).max())
        sinv = np.where(keep, 1.0 / np.where(keep, s, 1.0), 0.0)
        pinv = np.einsum("kji,kj,klj->kil", Vh.conj(), sinv, U.conj())
        X = pinv @ BY
    return Y - YBt @ X, {"max_condition": cond, "max_dropped": dropped}


def _stack(frfs):
    """Block-diagonal receptance and the DOF table of several collocated FRF matrices."""
    f = frfs[0].frequency
    for s in frfs:
        if not s.collocated:
            raise ParameterError("coupling needs collocated FRF matrices (inputs == outputs)")
        if s.frequency.shape != f.shape or not np.allclose(s.frequency, f, rtol=1e-12, atol=0):
            raise ParameterError("all FRF matrices must share the same frequencies")
        if s.quantity != "receptance":
            raise ParameterError(f"LM-FBS couples receptances (m/N), got a {s.quantity}")
    n = sum(len(s.outputs) for s in frfs)
    Y = np.zeros((f.size, n, n), dtype=complex)
    dofs, owner, i0 = [], [], 0
    for k, s in enumerate(frfs):
        m = len(s.outputs)
        Y[:, i0:i0 + m, i0:i0 + m] = s.H
        dofs.extend(map(tuple, s.outputs))
        owner.extend([k] * m)
        i0 += m
    return f, Y, np.asarray(dofs, dtype=np.int64), np.asarray(owner)


def interface_matrix(dofs: np.ndarray, owner: np.ndarray, pairs, sides=(0, 1)) -> np.ndarray:
    """Signed Boolean ``B`` for ``pairs`` of DOFs ``((node_a, dir_a), (node_b, dir_b))`` meaning
    ``u_a = u_b``, ``a`` in the substructure ``sides[0]`` and ``b`` in ``sides[1]`` (a pair whose
    directions have opposite signs means ``u_a = -u_b``).

    Parameters
    ----------
    dofs : (n, 2) int array
        ``(node, direction)`` of every DOF of the stacked substructures, in the order of the
        block-diagonal receptance (direction codes as in :func:`dof_label`: translations in m,
        rotations in rad).
    owner : (n,) int array
        Index of the substructure each DOF belongs to.
    pairs : list of ((int, int), (int, int))
        ``((node_a, dir_a), (node_b, dir_b))`` for each compatibility condition, in the same units
        on both sides (a translation with a translation, a rotation with a rotation).
    sides : (int, int), optional
        Substructure indices of ``a`` and ``b``; default ``(0, 1)``.

    Returns
    -------
    (m, n) ndarray
        Signed Boolean interface matrix (dimensionless entries 0, +1, -1), one row per pair.
    """
    table = {}
    for i, ((n, d), k) in enumerate(zip(dofs, owner)):
        table[(int(k), int(n), abs(int(d)))] = (i, int(np.sign(d)))
    pairs = list(pairs)
    if not pairs:
        raise ParameterError("the interface needs at least one pair of DOFs")
    B = np.zeros((len(pairs), len(dofs)))
    for r, (a, b) in enumerate(pairs):
        for side, (n, d), sign in ((sides[0], a, 1.0), (sides[1], b, -1.0)):
            key = (int(side), int(n), abs(int(d)))
            if key not in table:
                raise ParameterError(f"interface DOF {dof_label(n, d)} is not a DOF of "
                                     f"substructure {side}")
            i, s = table[key]
            B[r, i] = sign * s * np.sign(d)
    return B


def couple(substructures, interfaces, *, rcond: float | None = None) -> FRFMatrix:
    """Receptance of substructures coupled through their interfaces.

    Parameters
    ----------
    substructures : list of FRFMatrix
        Collocated receptances (m/N) on one frequency grid; a DOF may appear in several (the two
        sides of an interface carry the same label or different ones, as the user numbers them).
    interfaces : dict
        ``{(a, b): [((node_a, dir_a), (node_b, dir_b)), ...]}``: for each pair of substructure
        indices, the DOFs held together (``u_a = u_b``).
    rcond : float, optional
        Truncated-SVD regularisation of the interface problem (see :func:`lmfbs`).

    Returns
    -------
    FRFMatrix
        Receptance at every DOF of every substructure (the two sides of an interface hold the
        same response after coupling; both are kept, the first of equal labels is kept once).
    """
    subs = list(substructures)
    if len(subs) < 2:
        raise ParameterError("coupling needs at least two substructures")
    f, Y, dofs, owner = _stack(subs)
    rows = []
    for (a, b), pairs in dict(interfaces).items():
        for k in (a, b):
            if not 0 <= int(k) < len(subs):
                raise ParameterError(f"substructure index {k} is not in 0..{len(subs) - 1}")
        rows.append(interface_matrix(dofs, owner, pairs, (a, b)))
    B = np.vstack(rows)
    Yc, stats = lmfbs(Y, B, rcond=rcond)
    keep = _first_of_each_label(dofs)
    return FRFMatrix(f, Yc[:, keep][:, :, keep], dofs[keep], dofs[keep], "receptance",
                     {"method": "LM-FBS coupling", "n_substructures": len(subs),
                      "n_interface_conditions": int(B.shape[0]),
                      "rcond": rcond if rcond is not None else "exact", **stats})


def _first_of_each_label(dofs) -> np.ndarray:
    seen, keep = set(), []
    for i, (n, d) in enumerate(dofs):
        key = (int(n), abs(int(d)))
        if key not in seen:
            seen.add(key)
            keep.append(i)
    return np.asarray(keep, dtype=int)


def decouple(assembly: FRFMatrix, residual: FRFMatrix, interface, *,
             rcond: float | None = None, keep=None) -> FRFMatrix:
    """Receptance of the unknown part of an assembly, by removing a known residual substructure.

    Parameters
    ----------
    assembly : FRFMatrix
        Collocated receptance of the assembly (m/N), measured or computed.
    residual : FRFMatrix
        Collocated receptance of the substructure to remove, on the same frequencies.
    interface : list
        ``[((node_assembly, dir), (node_residual, dir)), ...]``: DOFs of the assembly held equal
        to DOFs of the residual. The coupling interface between the two parts is the least
        (standard interface); adding internal DOFs of the residual (an extended interface) needs
        ``rcond``.
    rcond : float, optional
        Truncated-SVD regularisation (see :func:`lmfbs`), needed with an extended interface and
        advisable with noisy data.
    keep : list of (node, direction), optional
        The assembly DOFs to return. Default: those that are not DOFs of the residual, plus the
        interface (assembly side); with an extended interface, name the remaining part's DOFs.

    Returns
    -------
    FRFMatrix
        Receptance of the remaining part at the kept DOFs.
    """
    neg = FRFMatrix(residual.frequency, -residual.H, residual.outputs, residual.inputs,
                    residual.quantity)
    f, Y, dofs, owner = _stack([assembly, neg])
    B = interface_matrix(dofs, owner, interface, (0, 1))
    Yc, stats = lmfbs(Y, B, rcond=rcond)
    if keep is None:
        iface = {(int(n), abs(int(d))) for (n, d), _ in interface}
        res_only = {(int(n), abs(int(d))) for n, d in residual.outputs} - iface
        keep = np.array([i for i, (n, d) in enumerate(assembly.outputs)
                         if (int(n), abs(int(d))) not in res_only], dtype=int)
    else:
        keep = assembly.index(keep)
    return FRFMatrix(f, Yc[:, keep][:, :, keep], assembly.outputs[keep], assembly.outputs[keep],
                     "receptance", {"method": "LM-FBS decoupling",
                                    "n_interface_conditions": int(B.shape[0]),
                                    "rcond": rcond if rcond is not None else "exact", **stats})
