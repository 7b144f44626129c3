"""Mass and stiffness matrices to and from the files of other FE codes.

* MatrixMarket (``.mtx``), read and written by SciPy's maintained reader, with 17
  significant digits so that a round trip is exact;
* Abaqus matrix files (``*MATRIX GENERATE`` output, ``FORMAT=MATRIX INPUT``): one entry per line,
  ``node_i, dof_i, node_j, dof_j, value``, the lower triangle of a symmetric matrix. Reading
  returns the DOF table ``(node, dof)`` of the rows, so that boundary and contact DOFs can be
  picked by node.

Nastran OP4 files are read and written by :mod:`fesub.fe.nastran` (pyNastran for reading).

A reduced model (Craig-Bampton ``Mr``, ``Kr`` and the meaning of each reduced coordinate) is
exported in one call to all three formats by :func:`export_reduced_model`, into a directory that
:func:`read_reduced_model` reads back as a :class:`ReducedModel`, whose ``M, K, X, node_dofs, C``
are the arguments of :class:`fesub.contact.Body`.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..errors import FesubError, ParameterError

__all__ = ["read_matrix", "write_matrix", "read_abaqus_matrix", "write_abaqus_matrix", "ReducedModel",
           "export_reduced_model", "read_reduced_model"]

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
    _check_mm_header(path)
    try:
        A = scipy.io.mmread(str(path))
    except (ValueError, OSError, IndexError) as exc:
        raise FesubError(f"cannot read {path} as MatrixMarket: {exc}") from None
    return sp.csr_matrix(A)


def _check_mm_header(path: Path) -> None:
    """Refuse a MatrixMarket file whose size line announces more than the file can hold (a
    damaged header: the reader would allocate or loop for the announced size)."""
    try:
        with open(path, "rb") as fh:
            lines = fh.read().splitlines()
    except OSError as exc:
        raise FesubError(f"cannot read {path}: {exc.strerror or exc}") from None
    body = [ln for ln in lines if ln.strip() and not ln.startswith(b"%")]
    try:
        dims = [int(x) for x in body[0].split()]
    except (IndexError, ValueError):
        raise FesubError(f"cannot read {path} as MatrixMarket: no size line") from None
    if len(dims) not in (2, 3) or min(dims) < 0:
        raise FesubError(f"cannot read {path} as MatrixMarket: bad size line {body[0][:60]!r}")
    entries = dims[2] if len(dims) == 3 else dims[0] * dims[1]
    if entries > len(body) - 1:
        raise FesubError(f"{path}: the size line announces {entries} entries, the file holds "
                         f"{len(body) - 1} (a damaged or truncated file)")


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
    """Read an Abaqus ``MATRIX INPUT`` file (one triangle, or both, of a symmetric matrix).

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
    if not np.all(np.isfinite(vals)):
        k = int(np.flatnonzero(~np.isfinite(vals))[0])
        raise FesubError(f"{path}: entry {entries[k][:4]} is {vals[k]!r}, not a finite number")
    flat = rows * n + cols
    uniq, first, count = np.unique(flat, return_index=True, return_counts=True)
    if np.any(count > 1):  # summed silently by a sparse constructor: refused
        k = int(first[np.flatnonzero(count > 1)[0]])
        raise FesubError(f"{path}: the entry {entries[k][:4]} is given more than once")
    L = sp.coo_matrix((vals, (rows, cols)), shape=(n, n)).tocsr()
    # an entry whose mirror is not given is mirrored: one triangle of a symmetric matrix, in
    # whatever order its labels sort, becomes the whole. An entry given in both triangles must
    # agree with its mirror: to 1e-10 of the largest entry, far above the round-off of a value
    # printed with 15 or more significant digits (Abaqus writes 17) and far below any real
    # asymmetry; the two are then averaged so that the matrix returned is exactly symmetric.
    given = sp.coo_matrix((np.ones(rows.size), (rows, cols)), shape=(n, n)).tocsr()
    given.data[:] = 1.0
    both = given.multiply(given.T).tocoo()
    if both.nnz:
        a = np.asarray(L[both.row, both.col]).ravel()
        b = np.asarray(L[both.col, both.row]).ravel()
        gap = np.abs(a - b)
        scale = float(np.max(np.abs(vals)))
        if np.any(gap > 1e-10 * scale):
            k = int(np.argmax(gap))
            i, j = keys[both.row[k]], keys[both.col[k]]
            raise FesubError(
                f"{path}: the two triangles disagree: entry (node {i[0]} dof {i[1]}, node {j[0]} "
                f"dof {j[1]}) is {a[k]!r} and its mirror {b[k]!r}; the matrix must be symmetric")
    mirror_only = given.T - given.T.multiply(given)
    A = L + L.T.multiply(mirror_only)
    A = 0.5 * (A + A.T)  # exact for the mirrored entries; the mean of two agreeing ones
    return sp.csr_matrix(A), np.array(keys, dtype=np.int64)


# ---------------------------------------------------------------------------- reduced models
_FORMAT = "fesub reduced model"
_ABAQUS_DOF = {"x": 1, "y": 2, "z": 3, "rx": 4, "ry": 5, "rz": 6}
_SOURCES = {"mtx": ("M.mtx", "K.mtx"), "abaqus": ("M_abaqus.mtx", "K_abaqus.mtx"), "op4": ("model.op4",)}


@dataclass
class ReducedModel:
    """A reduced linear model read back from files: matrices and the meaning of each coordinate.

    Parameters
    ----------
    M, K : (n, n) float arrays
        Reduced mass (kg) and stiffness (N/m), coordinates ``q = [eta; u_b]`` (modal amplitudes
        first, then the physical boundary DOFs in m).
    kind : (n,) str array
        ``"mode"`` or ``"boundary"`` for each coordinate.
    model_dof : (n,) int array
        DOF of the unreduced model (clamped DOFs removed) of each boundary coordinate; -1 for
        modal coordinates.
    node, component : (n,) arrays
        Mesh node (-1 when unknown or modal) and component name (``"x"``, ``"y"``, ``"rz"``;
        ``""``) of each coordinate.
    mode_freqs_hz : (k,) float array
        Frequencies (Hz) of the kept normal modes.
    X : (N, 2) float array or None
        Mesh node positions (m), when the model was built from a mesh.
    node_dofs : (N, 2) int array or None
        Coordinate of the x and y displacement of each node; -1 clamped, -2 not in the reduced
        model (as :class:`fesub.contact.Body` takes it).
    rayleigh : (float, float)
        Rayleigh damping ``(alpha, beta)`` (1/s, s) of the model: ``C = alpha M + beta K``.
    name : str
        Label of the model.
    """

    M: np.ndarray
    K: np.ndarray
    kind: np.ndarray
    model_dof: np.ndarray
    node: np.ndarray
    component: np.ndarray
    mode_freqs_hz: np.ndarray
    X: np.ndarray | None = None
    node_dofs: np.ndarray | None = None
    rayleigh: tuple = (0.0, 0.0)
    name: str = "reduced model"
    source: dict = field(default_factory=dict)

    @property
    def n_dofs(self) -> int:
        return self.M.shape[0]

    @property
    def n_modes(self) -> int:
        return int(np.count_nonzero(self.kind == "mode"))

    @property
    def boundary(self) -> np.ndarray:
        """Model DOFs of the boundary coordinates, in the order of ``q``."""
        return self.model_dof[self.kind == "boundary"]

    @property
    def C(self) -> np.ndarray:
        """Rayleigh damping ``alpha M + beta K`` (N s/m)."""
        return self.rayleigh[0] * self.M + self.rayleigh[1] * self.K

    def frequencies(self, n: int | None = None) -> np.ndarray:
        """Natural frequencies (Hz) of the reduced model (lowest ``n``).

        Parameters
        ----------
        n : int, optional
            Number of frequencies (default all).

        Returns
        -------
        (n,) float array
            Frequencies in Hz, ascending.
        """
        import scipy.linalg as sla

        lam = sla.eigh(self.K, self.M, eigvals_only=True)
        f = np.sqrt(np.clip(lam, 0, None)) / (2 * np.pi)
        return f if n is None else f[:n]


def _coordinate_table(cb):
    """kind, model DOF, node, component, Abaqus (node, dof) of each reduced coordinate; mesh
    positions and node -> coordinate map when the model came from a Substructure."""
    k, b = int(cb.n_modes), np.asarray(cb.boundary, dtype=np.int64)
    n = k + b.size
    kind = np.array(["mode"] * k + ["boundary"] * b.size)
    model_dof = np.concatenate([np.full(k, -1), b]).astype(np.int64)
    node, comp = np.full(n, -1, np.int64), np.full(n, "", dtype=object)
    sub = getattr(cb, "substructure", None)
    X = node_dofs = None
    if sub is not None:
        dm = sub.dofmap
        g = np.asarray(sub.retained)[b]
        node[k:] = g // dm.ndpn
        comp[k:] = [dm.components[c] for c in g % dm.ndpn]
        X = np.asarray(sub.mesh.points, dtype=float)[:, :2]
        index = np.full(dm.n_dofs, -2, np.int64)  # -2: not a reduced coordinate
        index[np.asarray(sub.clamped, dtype=np.int64)] = -1
        index[g] = k + np.arange(b.size)
        node_dofs = np.column_stack([index[dm.dofs(np.arange(dm.n_nodes), c)] for c in ("x", "y")])
        labels = np.column_stack([node[k:] + 1, [_ABAQUS_DOF[c] for c in comp[k:]]])
        first_modal = dm.n_nodes + 1
    else:  # plain matrices: one Abaqus node per model DOF
        labels = np.column_stack([b + 1, np.ones(b.size, np.int64)])
        first_modal = int(b.max(initial=-1)) + 2
    abaqus = np.vstack([np.column_stack([first_modal + np.arange(k), np.ones(k, np.int64)]),
                        labels]).astype(np.int64)
    return kind, model_dof, node, comp.astype(str), abaqus, X, node_dofs


def export_reduced_model(cb, directory, *, name: str | None = None, rayleigh=None) -> Path:
    """Write a reduced model to a directory in MatrixMarket, Abaqus and Nastran OP4 form.

    Files: ``M.mtx``, ``K.mtx`` (MatrixMarket, 17 digits), ``M_abaqus.mtx``, ``K_abaqus.mtx``
    (Abaqus ``MATRIX INPUT``, lower triangle), ``model.op4`` (binary OP4, matrices ``MAA``,
    ``KAA``), ``coordinates.csv`` (one row per reduced coordinate: kind, model DOF, node,
    component, its Abaqus node and DOF labels, the frequency of a modal coordinate),
    ``nodes.csv`` (node positions and their coordinates, when the model came from a mesh) and
    ``model.json`` (name, sizes, Rayleigh damping, units). Every file holds the same numbers
    exactly; the matrices are written symmetrised, ``(A + A') / 2``.

    Modal coordinates have Abaqus node labels after the mesh's (``n_nodes + 1 + j``, DOF 1);
    boundary DOFs are ``(node + 1, 1 | 2 | 6)`` for x, y, rz.

    Parameters
    ----------
    cb : CraigBampton
        The reduced model (``Mr`` in kg, ``Kr`` in N/m, ``n_modes``, ``boundary``,
        ``mode_freqs_hz`` in Hz); node positions and labels come from its ``substructure``
        when it was built from one.
    directory : str or os.PathLike
        Directory to write (created; existing files of these names are overwritten).
    name : str, optional
        Label of the model (default the substructure's name).
    rayleigh : (float, float), optional
        Rayleigh ``(alpha, beta)`` (1/s, s); default the substructure's, else no damping.

    Returns
    -------
    pathlib.Path
        The directory written.
    """
    from .nastran import write_op4

    Mr, Kr = (np.asarray(getattr(cb, a), dtype=float) for a in ("Mr", "Kr"))
    M, K = 0.5 * (Mr + Mr.T), 0.5 * (Kr + Kr.T)
    kind, model_dof, node, comp, abaqus, X, node_dofs = _coordinate_table(cb)
    if M.shape != (kind.size, kind.size) or K.shape != M.shape:
        raise ParameterError(f"reduced matrices of shape {Mr.shape}, {Kr.shape} for {kind.size} coordinates")
    sub = getattr(cb, "substructure", None)
    if rayleigh is None:
        rayleigh = (sub.alpha, sub.beta) if sub is not None else (0.0, 0.0)
    alpha, beta = (float(v) for v in rayleigh)
    name = name or (getattr(sub, "name", None) or "reduced model")
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    write_matrix(d / "M.mtx", M)
    write_matrix(d / "K.mtx", K)
    write_abaqus_matrix(d / "M_abaqus.mtx", M, abaqus)
    write_abaqus_matrix(d / "K_abaqus.mtx", K, abaqus)
    write_op4(d / "model.op4", {"MAA": M, "KAA": K}, binary=True)
    freqs = np.asarray(cb.mode_freqs_hz, dtype=float)
    with open(d / "coordinates.csv", "w", newline="", encoding="ascii") as fh:
        w = csv.writer(fh)
        w.writerow(["q", "kind", "model_dof", "node", "component", "abaqus_node", "abaqus_dof", "frequency_hz"])
        for q in range(kind.size):
            w.writerow([q, kind[q], model_dof[q], node[q], comp[q], abaqus[q, 0], abaqus[q, 1],
                        repr(float(freqs[q])) if q < freqs.size else ""])
    if X is not None:
        with open(d / "nodes.csv", "w", newline="", encoding="ascii") as fh:
            w = csv.writer(fh)
            w.writerow(["node", "x_m", "y_m", "q_x", "q_y"])
            for i in range(X.shape[0]):
                w.writerow([i, repr(float(X[i, 0])), repr(float(X[i, 1])), node_dofs[i, 0], node_dofs[i, 1]])
    meta = {"format": _FORMAT, "version": 1, "name": str(name), "n_modes": int(cb.n_modes),
            "n_boundary": int(kind.size - cb.n_modes), "rayleigh_alpha_per_s": alpha,
            "rayleigh_beta_s": beta, "units": {"M": "kg", "K": "N/m", "x": "m", "frequency": "Hz"},
            "files": {"mtx": list(_SOURCES["mtx"]), "abaqus": list(_SOURCES["abaqus"]),
                      "op4": {"file": "model.op4", "M": "MAA", "K": "KAA"}}}
    (d / "model.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="ascii")
    return d


def _read_csv(path):
    try:
        with open(path, newline="", encoding="ascii") as fh:
            return list(csv.DictReader(fh))
    except csv.Error as exc:
        raise ValueError(f"{path}: {exc}") from None


def read_reduced_model(directory, *, source: str = "mtx") -> ReducedModel:
    """Read a reduced model written by :func:`export_reduced_model`.

    Parameters
    ----------
    directory : str or os.PathLike
        The directory written by :func:`export_reduced_model`.
    source : {"mtx", "abaqus", "op4"}
        Which copy of the matrices (M in kg, K in N/m) to read (all hold the same numbers;
        ``"op4"`` needs pyNastran). The Abaqus rows are put back in the order of the coordinates through their
        labels in ``coordinates.csv``.

    Returns
    -------
    ReducedModel
        ``M`` (kg), ``K`` (N/m), the coordinate table, mode frequencies (Hz) and, when the model
        came from a mesh, ``X`` (m) and ``node_dofs``: ``fesub.contact.Body(rm.M, rm.K, rm.X,
        rm.node_dofs, rm.C)`` is the body of the reduced substructure.
    """
    if source not in _SOURCES:
        raise ParameterError(f"source must be one of {sorted(_SOURCES)}, got {source!r}")
    d = Path(directory)
    for f in ("model.json", "coordinates.csv"):
        try:
            if f == "model.json":
                meta = json.loads((d / f).read_text(encoding="ascii"))
            else:
                rows = _read_csv(d / f)
        except (OSError, ValueError) as exc:
            raise FesubError(f"{d} is not a reduced model written by export_reduced_model "
                             f"({d / f}: {exc})") from None
    if not isinstance(meta, dict) or meta.get("format") != _FORMAT:
        raise FesubError(f"{d / 'model.json'} does not describe a {_FORMAT}")
    n = len(rows)
    if n == 0:
        raise FesubError(f"{d / 'coordinates.csv'} lists no coordinates")
    if source == "mtx":
        M, K = (read_matrix(d / f) for f in _SOURCES["mtx"])
        if M.shape != (n, n) or K.shape != (n, n):  # before a dense copy of a damaged size
            raise FesubError(f"{d}: matrices of shape {M.shape}, {K.shape} for {n} coordinates in "
                             "coordinates.csv")
        M, K = M.toarray(), K.toarray()
    elif source == "op4":
        from .nastran import read_op4

        mats = read_op4(d / "model.op4", ["MAA", "KAA"])
        M, K = (np.asarray(mats[k].toarray() if sp.issparse(mats[k]) else mats[k], dtype=float)
                for k in ("MAA", "KAA"))
    else:
        M, K = (_abaqus_in_order(d / f, rows) for f in _SOURCES["abaqus"])
    if M.shape != (n, n) or K.shape != (n, n):
        raise FesubError(f"{d}: matrices of shape {M.shape}, {K.shape} for {n} coordinates in coordinates.csv")
    for name, A in (("M", M), ("K", K)):
        if not np.all(np.isfinite(A)):
            raise FesubError(f"{d}: {name} holds non-finite values")
    where = d / "coordinates.csv"
    try:
        kind = np.array([_field(r, "kind") for r in rows])
        bad = sorted(set(kind.tolist()) - {"mode", "boundary"})
        if bad:
            raise ValueError(f"kind must be 'mode' or 'boundary', got {bad[0]!r}")
        freqs = np.array([_finite(_field(r, "frequency_hz")) for r in rows if r["kind"] == "mode"])
        model_dof = np.array([int(_field(r, "model_dof")) for r in rows], dtype=np.int64)
        node = np.array([int(_field(r, "node")) for r in rows], dtype=np.int64)
        component = np.array([_field(r, "component") for r in rows])
        X = node_dofs = None
        if (d / "nodes.csv").is_file():
            where = d / "nodes.csv"
            nodes = _read_csv(where)
            X = np.array([[_finite(_field(r, "x_m")), _finite(_field(r, "y_m"))] for r in nodes],
                         dtype=float).reshape(-1, 2)
            node_dofs = np.array([[int(_field(r, "q_x")), int(_field(r, "q_y"))] for r in nodes],
                                 dtype=np.int64).reshape(-1, 2)
            if np.any((node_dofs < -2) | (node_dofs >= n)):
                raise ValueError(f"q_x and q_y must be coordinates in -2..{n - 1}")
        where = d / "model.json"
        ray = (_finite(_field(meta, "rayleigh_alpha_per_s")), _finite(_field(meta, "rayleigh_beta_s")))
        name = str(_field(meta, "name"))
    except (OSError, TypeError, ValueError) as exc:
        raise FesubError(f"{where}: {exc}") from None
    return ReducedModel(M, K, kind, model_dof, node, component, freqs, X, node_dofs, ray, name,
                        {"directory": str(d), "matrices": source})


def _field(record, key):
    """``record[key]`` of a CSV row or the JSON record, its absence a ValueError naming it."""
    value = record.get(key) if isinstance(record, dict) else None
    if value is None:
        raise ValueError(f"the field {key!r} is missing")
    return value


def _finite(text) -> float:
    v = float(text)
    if not np.isfinite(v):
        raise ValueError(f"{text!r} is not a finite number")
    return v


def _abaqus_in_order(path, rows) -> np.ndarray:
    A, table = read_abaqus_matrix(path)
    where = {(int(a), int(b)): i for i, (a, b) in enumerate(table)}
    try:
        labels = [(int(_field(r, "abaqus_node")), int(_field(r, "abaqus_dof"))) for r in rows]
    except (TypeError, ValueError) as exc:
        raise FesubError(f"{path.parent / 'coordinates.csv'}: {exc}") from None
    missing = [lab for lab in labels if lab not in where]
    if missing:
        raise FesubError(f"{path}: no row for the Abaqus label {missing[0]} of coordinates.csv")
    if len(set(labels)) != len(labels):
        raise FesubError(f"{path.parent / 'coordinates.csv'}: an Abaqus label is given twice")
    perm = np.array([where[lab] for lab in labels], dtype=np.int64)
    return A.toarray()[np.ix_(perm, perm)]
