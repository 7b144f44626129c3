"""Mass and stiffness matrices to and from the files of other FE codes.

* MatrixMarket (``.mtx``), read and written by SciPy's maintained reader, with 17
  significant digits so that a round trip is exact;
* Abaqus matrix files (``*MATRIX GENERATE`` output, ``FORMAT=MATRIX INPUT``): one entry per line,
  ``node_i, dof_i, node_j, dof_j, value``, the lower triangle of a symmetric matrix. Reading
  returns the DOF table ``(node, dof)`` of the rows, so that boundary and contact DOFs can be
  picked by node.

Nastran OP4/punch files are read by pyNastran where it is installed (``pip install pyNastran``):
``pyNastran.op4.op4.read_op4`` gives the matrices as arrays, which every fesub function accepts.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..errors import FesubError, ParameterError

__all__ = ["read_matrix", "write_matrix", "read_abaqus_matrix", "write_abaqus_matrix"]

_MM_SUFFIXES = (".mtx",)  # SciPy appends .mtx to any other name


def write_matrix(path, A) -> Path:
    """Write ``A`` (dense or sparse) to a MatrixMarket file, exactly (17 digits).

    Parameters
    ----------
    path : str or os.PathLike
        File to write; its name must end in ``.mtx``.
    A : array_like or sparse matrix
        2-D matrix, written as it is (values in the units of the matrix, e.g. N/m or kg).

    Returns
    -------
    pathlib.Path
        The file written.
    """
    import scipy.io

    path = Path(path)
    if path.suffix not in _MM_SUFFIXES:
        raise ParameterError(f"MatrixMarket files end in {_MM_SUFFIXES}, got {path.name!r} "
                             "(write_abaqus_matrix writes Abaqus files)")
    A = sp.coo_matrix(A) if sp.issparse(A) or np.ndim(A) == 2 else None
    if A is None:
        raise ParameterError("write_matrix takes a 2-D array or sparse matrix")
    scipy.io.mmwrite(str(path), A, precision=17)
    return path


def read_matrix(path) -> sp.csr_matrix:
    """Read a MatrixMarket file into a CSR matrix.

    Parameters
    ----------
    path : str or os.PathLike
        MatrixMarket file to read; its values are taken in the units of the file.

    Returns
    -------
    scipy.sparse.csr_matrix
        The matrix, values in the units of the file (SI for matrices fesub wrote: N/m, kg).
    """
    import scipy.io

    path = Path(path)
    if not path.is_file():
        raise FesubError(f"no matrix file at {path}")
    try:
        A = scipy.io.mmread(str(path))
    except (ValueError, OSError, IndexError) as exc:
        raise FesubError(f"cannot read {path} as MatrixMarket: {exc}") from None
    return sp.csr_matrix(A)


def write_abaqus_matrix(path, A, dofs) -> Path:
    """Write the lower triangle of the symmetric ``A`` in Abaqus' ``MATRIX INPUT`` format.

    Parameters
    ----------
    A : (n, n) array or sparse matrix
        Symmetric matrix (N/m for a stiffness, kg for a mass).
    dofs : (n, 2) int array
        ``(node, dof)`` of each row (Abaqus numbering: dof 1-6).
    """
    A = sp.coo_matrix(sp.tril(sp.csr_matrix(A)))
    dofs = np.asarray(dofs, dtype=np.int64)
    if dofs.shape != (A.shape[0], 2):
        raise ParameterError(f"dofs must be ({A.shape[0]}, 2) (node, dof) pairs")
    lines = [f"{dofs[i, 0]},{dofs[i, 1]},{dofs[j, 0]},{dofs[j, 1]},{v!r}"
             for i, j, v in sorted(zip(A.row.tolist(), A.col.tolist(), A.data.tolist()))]
    path = Path(path)
    path.write_text("\n".join(lines) + "\n", encoding="ascii")
    return path


def read_abaqus_matrix(path):
    """Read an Abaqus ``MATRIX INPUT`` file (lower or full triangle of a symmetric matrix).

    Parameters
    ----------
    path : str or os.PathLike
        Abaqus matrix file, lines ``node, dof, node, dof, value``; the values are taken in the
        units of the file (SI when the Abaqus model is in SI: N/m, kg).

    Returns
    -------
    A : scipy.sparse.csr_matrix
        The symmetric matrix, rows ordered by (node, dof).
    dofs : (n, 2) int array
        ``(node, dof)`` of each row.
    """
    path = Path(path)
    if not path.is_file():
        raise FesubError(f"no matrix file at {path}")
    entries = []
    for k, line in enumerate(path.read_text(encoding="ascii", errors="replace").splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("**") or line.startswith("*"):
            continue
        parts = [p.strip() for p in line.split(",")]
        try:
            ni, di, nj, dj = (int(p) for p in parts[:4])
            v = float(parts[4])
        except (ValueError, IndexError):
            raise FesubError(f"{path}:{k}: expected 'node, dof, node, dof, value', got "
                             f"{line[:60]!r}") from None
        entries.append((ni, di, nj, dj, v))
    if not entries:
        raise FesubError(f"{path} holds no matrix entries")
    keys = sorted({(e[0], e[1]) for e in entries} | {(e[2], e[3]) for e in entries})
    index = {key: i for i, key in enumerate(keys)}
    rows = np.array([index[(e[0], e[1])] for e in entries])
    cols = np.array([index[(e[2], e[3])] for e in entries])
    vals = np.array([e[4] for e in entries])
    n = len(keys)
    L = sp.coo_matrix((vals, (rows, cols)), shape=(n, n)).tocsr()
    if sp.triu(L, 1).nnz and sp.tril(L, -1).nnz:
        return L, np.array(keys, dtype=np.int64)  # both triangles given: taken as they are
    A = L + L.T - sp.diags(L.diagonal())
    return sp.csr_matrix(A), np.array(keys, dtype=np.int64)
