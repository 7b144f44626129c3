"""Matrices to and from Nastran OUTPUT4 (OP4) files, the exchange format of Nastran DMAP.

Reading goes through pyNastran, a maintained reader of both OP4 variants (``pip install
pyNastran``, fesub's ``nastran`` extra). Writing:

* ASCII (``binary=False``): pyNastran's writer, values with 17 significant digits
  (``1P,3E23.16``), so that a double-precision round trip is exact. Sparse matrices are
  written column by column from their first to their last non-zero row (the format's
  non-sparse form), which pyNastran writes correctly; its sparse ASCII strings carry wrong
  string lengths when a column has several strings, so fesub does not use them.
* binary (``binary=True``, the default): written here, Fortran unformatted sequential records
  in the machine's byte order, IEEE double precision (exact). pyNastran 1.4's binary writer
  writes column headers as doubles and cannot be read back, so fesub writes the records itself:
  header ``NCOL, NROW, FORM, TYPE, NAME(2 words)``; one record per non-null column
  ``ICOL, IROW, NW, values``; sparse matrices as strings (``IROW = 0``, each string headed by
  ``IS = IROW + 65536 (L + 1)`` with L its number of words; real matrices of up to 65535
  rows: pyNastran 1.4 reads the strings of a complex column as one, so complex sparse
  matrices are written column by column); closing record ``NCOL + 1, 1, 2, 1.0``.

Matrices are real (TYPE 2) or complex (TYPE 4) double precision; FORM 6 (symmetric) when the
matrix is square and symmetric, 1 (square) or 2 (rectangular) otherwise.
"""

from __future__ import annotations

import re
import struct
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..errors import FesubError, ParameterError

__all__ = ["read_op4", "write_op4"]

_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,7}$")
_MAX_STRING = 16000  # values per sparse string: 65536 (L + 1) stays inside a 32-bit word


def _pynastran_op4():
    try:
        from pyNastran.op4 import op4
    except ImportError:
        raise FesubError("reading OP4 files and writing ASCII OP4 files needs pyNastran: "
                         "pip install pyNastran (or pip install 'fesub[nastran]')") from None
    return op4


def _quiet_log():
    """A pyNastran logger that only reports errors (its readers log every matrix read)."""
    from cpylog import SimpleLogger

    return SimpleLogger(level="error")


def read_op4(path, names=None) -> dict:
    """Read the matrices of a Nastran OP4 file (ASCII or binary, any precision).

    Parameters
    ----------
    path : str or os.PathLike
        OP4 file; the values are taken in the units of the model that wrote it (SI for files
        fesub wrote: kg, N/m).
    names : sequence of str, optional
        Matrices to read (default all).

    Returns
    -------
    dict
        Name -> matrix: a ``numpy.ndarray`` for matrices stored column by column, a
        ``scipy.sparse.csr_matrix`` for matrices stored as sparse strings; float64 or
        complex128. A name found several times in the file gives a list, in file order.
    """
    op4 = _pynastran_op4()
    path = Path(path)
    if not path.is_file():
        raise FesubError(f"no OP4 file at {path}")
    try:
        raw = op4.read_op4(str(path), matrix_names=None if names is None else list(names),
                           precision="double", log=_quiet_log())
    except Exception as exc:  # noqa: BLE001 - the reader raises bare errors of every kind
        raise FesubError(f"cannot read {path} as an OP4 file ({type(exc).__name__}: {exc})") from None
    out = {}
    for name, mat in raw.items():
        data = mat.data if isinstance(mat.data, list) else [mat.data]
        data = [sp.csr_matrix(a) if sp.issparse(a) else np.asarray(a) for a in data]
        out[name] = data if len(data) > 1 else data[0]
    if names is not None:
        missing = [n for n in names if n not in out]
        if missing:
            raise FesubError(f"{path}: no matrix {missing}; found {sorted(out)}")
    return out


def _checked(name, A):
    if not isinstance(name, str) or not _NAME.match(name):
        raise ParameterError(f"OP4 matrix names are 1-8 letters, digits or _, starting with a letter; "
                             f"got {name!r}")
    if sp.issparse(A):
        A = sp.csc_matrix(A)
        values = A.data
    else:
        A = np.asarray(A)
        values = A
    if A.ndim != 2 or 0 in A.shape:
        raise ParameterError(f"OP4 matrix {name!r} must be a non-empty 2-D array or sparse matrix, "
                             f"got shape {A.shape}")
    if values.dtype.kind not in "iufc":
        raise ParameterError(f"OP4 matrix {name!r} must be numeric, got {values.dtype}")
    if not np.all(np.isfinite(values)):
        raise ParameterError(f"OP4 matrix {name!r} contains NaN or inf")
    dtype = np.complex128 if values.dtype.kind == "c" else np.float64
    return A.astype(dtype)


def _form(A) -> int:
    n, m = A.shape
    if n != m:
        return 2
    sym = (abs(A - A.T) > 0).nnz == 0 if sp.issparse(A) else np.array_equal(A, A.T)
    return 6 if sym else 1


def write_op4(path, matrices, *, binary: bool = True) -> Path:
    """Write named matrices to a Nastran OP4 file (double precision, exact).

    Parameters
    ----------
    path : str or os.PathLike
        File to write (overwritten).
    matrices : dict
        Name (1-8 characters, Nastran's DMAP names such as ``KAA``, ``MAA``) -> matrix (dense
        array or scipy.sparse; real or complex; values in the model's units, e.g. N/m, kg),
        written in the order of the dict.
    binary : bool, optional
        Binary (default: compact, exact, native byte order) or ASCII (portable, 17 significant
        digits: exact too; needs pyNastran; sparse matrices are written column by column, so
        a large sparse matrix is better written binary).

    Returns
    -------
    pathlib.Path
        The file written.
    """
    if not isinstance(matrices, dict) or not matrices:
        raise ParameterError("write_op4 takes a non-empty dict of name -> matrix")
    mats = {name: _checked(name, A) for name, A in matrices.items()}
    path = Path(path)
    if binary:
        with open(path, "wb") as fh:
            for name, A in mats.items():
                _write_binary_matrix(fh, name, A)
        return path
    op4 = _pynastran_op4()
    dense = {name: (_form(A), A.toarray() if sp.issparse(A) else A) for name, A in mats.items()}
    op4.write_op4(str(path), dense, name_order=list(dense), precision="double", is_binary=False,
                  log=_quiet_log())
    return path


def _record(fh, payload: bytes) -> None:
    n = struct.pack("=i", len(payload))
    fh.write(n + payload + n)


def _words(A: np.ndarray) -> np.ndarray:
    """Values as float64 words: real as they are, complex as (real, imag) pairs."""
    return np.ascontiguousarray(A).view(np.float64) if A.dtype == np.complex128 else A


def _write_binary_matrix(fh, name: str, A) -> None:
    nrow, ncol = A.shape
    cplx = A.dtype == np.complex128
    nwpv = 4 if cplx else 2  # 32-bit words per value
    _record(fh, struct.pack("=4i8s", ncol, nrow, _form(A), 4 if cplx else 2,
                            name.upper().ljust(8).encode("ascii")))
    # sparse strings for real matrices only: pyNastran 1.4 reads a complex column as one string
    if sp.issparse(A) and not cplx and nrow <= 65535:
        for j in range(ncol):
            rows = A.indices[A.indptr[j]:A.indptr[j + 1]]
            vals = A.data[A.indptr[j]:A.indptr[j + 1]]
            keep = vals != 0
            rows, vals = rows[keep], vals[keep]
            if rows.size == 0:
                continue
            order = np.argsort(rows, kind="stable")
            rows, vals = rows[order], vals[order]
            # strings: runs of consecutive rows, at most _MAX_STRING values each
            breaks = np.flatnonzero(np.diff(rows) != 1) + 1
            parts = []
            for r, v in zip(np.split(rows, breaks), np.split(vals, breaks)):
                for k in range(0, r.size, _MAX_STRING):
                    rr, vv = r[k:k + _MAX_STRING], v[k:k + _MAX_STRING]
                    L = nwpv * rr.size
                    parts.append(struct.pack("=i", int(rr[0]) + 1 + 65536 * (L + 1)) + _words(vv).tobytes())
            body = b"".join(parts)
            _record(fh, struct.pack("=3i", j + 1, 0, len(body) // 4) + body)
    else:
        A = A.toarray() if sp.issparse(A) else np.asfortranarray(A)
        for j in range(ncol):
            nz = np.flatnonzero(A[:, j])
            if nz.size == 0:
                continue
            col = A[nz[0]:nz[-1] + 1, j]
            _record(fh, struct.pack("=3i", j + 1, int(nz[0]) + 1, nwpv * col.size) + _words(col).tobytes())
    _record(fh, struct.pack("=3id", ncol + 1, 1, 2, 1.0))
