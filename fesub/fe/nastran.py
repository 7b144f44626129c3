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
  writes column headers as doubles and cannot be read back, so fesub writes the records itself
  (all columns at once, as one array of 32-bit words): header ``NCOL, NROW, FORM, TYPE,
  NAME(2 words)``; one record per non-null column, ``ICOL, IROW, NW`` and the NW words of the
  column from its first to its last non-zero row (dense input); sparse input as strings
  (``IROW = 0``, each run of consecutive rows headed by ``IS = IROW + 65536 (L + 1)``, L its
  number of words, at most 16 000 values; real matrices of up to 65 535 rows: pyNastran 1.4
  reads the strings of a complex column as one, so complex sparse matrices are written as
  dense input is); closing record ``NCOL + 1, 1, 2, 1.0``.

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


def _layout(sizes) -> np.ndarray:
    """Start of each of consecutive blocks of the given sizes (words)."""
    sizes = np.asarray(sizes, dtype=np.int64)
    return np.cumsum(sizes) - sizes


def _column_records(W, at, icol, irow, nw) -> None:
    """Fill the record frames ``[reclen, ICOL, IROW, NW] ... [reclen]`` starting at words ``at``."""
    reclen = 4 * (3 + nw)
    W[at], W[at + 1], W[at + 2], W[at + 3] = reclen, icol, irow, nw
    W[at + 4 + nw] = reclen


def _write_binary_matrix(fh, name: str, A) -> None:
    """One matrix as Fortran records, built as one array of 32-bit words (no loop over columns)."""
    nrow, ncol = A.shape
    cplx = A.dtype == np.complex128
    wpv = 4 if cplx else 2  # 32-bit words per value
    # sparse input as strings, real only: pyNastran 1.4 reads a complex column as one string
    strings = sp.issparse(A) and not cplx and nrow <= 65535
    A = sp.csc_matrix(A)
    A.eliminate_zeros()
    A.sort_indices()
    nnz_col = np.diff(A.indptr)
    col = np.repeat(np.arange(ncol), nnz_col)
    row = A.indices.astype(np.int64)
    cols = np.flatnonzero(nnz_col)  # non-null columns, in order
    if strings:
        run = np.ones(row.size, bool)  # runs of consecutive rows in one column
        run[1:] = (col[1:] != col[:-1]) | (row[1:] != row[:-1] + 1)
        pos = np.arange(row.size) - np.flatnonzero(run)[np.cumsum(run) - 1]
        first = run | (pos % _MAX_STRING == 0)  # long runs are cut into strings of _MAX_STRING
        sid = np.cumsum(first) - 1
        s_first = np.flatnonzero(first)
        s_len = np.diff(np.append(s_first, row.size))
        s_col = col[s_first]
        nw = np.bincount(s_col, weights=1 + wpv * s_len, minlength=ncol).astype(np.int64)[cols]
        irow = np.zeros(cols.size, np.int64)
        value_words = wpv * row.size + s_first.size
    else:
        lo, hi = row[A.indptr[cols]], row[A.indptr[cols + 1] - 1]
        nw = wpv * (hi - lo + 1)
        irow = lo + 1
        value_words = int(nw.sum())
    n_words = 8 + 5 * cols.size + value_words + 7
    W = np.zeros(n_words, dtype=np.uint32)
    W[:8] = np.frombuffer(struct.pack("=i4i8si", 24, ncol, nrow, _form(A), 4 if cplx else 2,
                                      name.upper().ljust(8).encode("ascii"), 24), dtype=np.uint32)
    at = 8 + _layout(5 + nw)  # start of each column record
    _column_records(W, at, cols + 1, irow, nw)
    words = np.ascontiguousarray(A.data).view(np.uint32).reshape(-1, wpv)
    rank = np.zeros(ncol, np.int64)
    rank[cols] = np.arange(cols.size)
    if strings:
        # within a column body the strings follow one another, each a header word and its values
        g = _layout(1 + wpv * s_len)
        s_at = at[rank[s_col]] + 4 + g - g[np.searchsorted(s_col, s_col)]
        W[s_at] = row[s_first] + 1 + 65536 * (wpv * s_len + 1)
        where = s_at[sid] + 1 + wpv * (np.arange(row.size) - s_first[sid])
    else:  # the column from its first to its last non-zero row
        where = at[rank[col]] + 4 + wpv * (row - (irow - 1)[rank[col]])
    W[where[:, None] + np.arange(wpv)] = words
    W[n_words - 7:] = np.frombuffer(struct.pack("=i3idi", 20, ncol + 1, 1, 2, 1.0, 20), dtype=np.uint32)
    fh.write(W.tobytes())
