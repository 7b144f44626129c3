"""Global sparse assembly, boundary conditions, Rayleigh damping and modal analysis."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from .._backend import kernels
from ..errors import MeshError, ModelError, check_positive
from . import elements, quadratic

__all__ = ["DofMap", "element_dofs", "assemble", "assemble_pair", "node_graph", "dof_pattern",
           "mesh_matrices", "rayleigh", "modes", "dense_modes", "factor_stiffness", "check_pair", "rayleigh_ratio", "free_dofs", "solve_static"]

_COMPONENTS = {2: ("x", "y"), 3: ("x", "y", "rz")}
_QUADRATIC = {"quad8": quadratic.q8_matrices, "quad9": quadratic.q9_matrices,
              "triangle6": quadratic.t6_matrices}


@dataclass(frozen=True)
class DofMap:
    """Node-major DOF numbering: DOF of (node, component) = ndpn * node + component.

    Parameters
    ----------
    n_nodes : int
        Number of mesh nodes (-).
    ndpn : int
        DOFs per node (-): 2 (``x``, ``y``) for plane meshes, 3 (``x``, ``y``, ``rz``) for frames.
    """

    n_nodes: int
    ndpn: int

    @property
    def n_dofs(self) -> int:
        return self.n_nodes * self.ndpn

    @property
    def components(self) -> tuple:
        return _COMPONENTS[self.ndpn]

    def dofs(self, nodes, comps=None) -> np.ndarray:
        """DOF indices of ``nodes`` for components ``comps`` (names like 'x', 'y', 'rz'), node-major."""
        raw = np.atleast_1d(np.asarray(nodes))
        if raw.size and raw.dtype.kind not in "iu":
            raise ModelError(f"node indices must be integers, got {nodes!r}")
        nodes = raw.astype(np.int64)
        if comps is None:
            comps = self.components
        elif isinstance(comps, str):
            comps = (comps,)
        elif isinstance(comps, (list, tuple)):
            comps = tuple(comps)
        else:
            raise ModelError(f"DOF components must be names like {self.components}, got {comps!r}")
        idx = []
        for c in comps:
            if c not in self.components:
                raise ModelError(f"unknown DOF component {c!r}; this model has {self.components}")
            idx.append(self.components.index(c))
        if nodes.size and (nodes.min() < 0 or nodes.max() >= self.n_nodes):
            raise ModelError(f"node index outside 0..{self.n_nodes - 1}")
        return (self.ndpn * nodes[:, None] + np.asarray(idx)[None, :]).ravel()


def element_dofs(conn: np.ndarray, ndpn: int) -> np.ndarray:
    """(ne, k * ndpn) DOF indices of each element, node by node."""
    conn = np.asarray(conn, dtype=np.int64)
    return (ndpn * conn[:, :, None] + np.arange(ndpn)[None, None, :]).reshape(len(conn), -1)


def assemble(edofs: np.ndarray, Ke: np.ndarray, n_dofs: int) -> sp.csr_matrix:
    """Sum element matrices (ne, nd, nd) into a CSR matrix through COO triplets."""
    ne, nd = edofs.shape
    rows = np.repeat(edofs, nd, axis=1).ravel()
    cols = np.tile(edofs, (1, nd)).ravel()
    A = sp.csr_matrix((Ke.ravel(), (rows, cols)), shape=(n_dofs, n_dofs))
    A.sum_duplicates()
    return A


def node_graph(conn: np.ndarray, n_nodes: int):
    """Node adjacency of the elements ``conn`` (ne, k): CSR arrays (ptr, idx), idx sorted per row.

    Nodes ``a`` and ``b`` are adjacent when an element holds both (every node is its own neighbour).
    """
    conn = np.ascontiguousarray(conn, dtype=np.int64)
    if conn.ndim != 2 or (conn.size and (conn.min() < 0 or conn.max() >= n_nodes)):
        raise ModelError(f"connectivity must be an (ne, k) array of nodes in 0..{n_nodes - 1}")
    ne, k = conn.shape
    fe = kernels("fe")
    ne_ptr = np.zeros(n_nodes + 1, dtype=np.int64)
    np.cumsum(np.bincount(conn.ravel(), minlength=n_nodes), out=ne_ptr[1:])
    ne_idx = np.empty(ne * k, dtype=np.int64)
    fe.node_elements(conn, ne_ptr, np.empty(n_nodes, dtype=np.int64), ne_idx)
    ptr = np.empty(n_nodes + 1, dtype=np.int64)
    idx = np.empty(ne * k * k, dtype=np.int64)
    fe.node_graph_fill(conn, ne_ptr, ne_idx, np.empty(n_nodes, dtype=np.int64), ptr, idx)
    return ptr, idx[: ptr[-1]].copy()


def dof_pattern(node_ptr: np.ndarray, node_idx: np.ndarray, ndpn: int):
    """CSR ``indptr``, ``indices`` of the DOF matrix whose node blocks follow the node graph.

    DOF row ``(n, i)`` (DOF ``ndpn n + i``) starts at ``ndpn^2 node_ptr[n] + i ndpn deg(n)``; its
    columns are, for each neighbour ``m`` of ``n`` in increasing order, ``ndpn m + j``,
    ``j = 0..ndpn-1``: sorted, so the matrix is in canonical CSR form.
    """
    n = node_ptr.size - 1
    node_ptr = np.ascontiguousarray(node_ptr, dtype=np.int64)
    node_idx = np.ascontiguousarray(node_idx, dtype=np.int64)
    if node_ptr[0] != 0 or np.any(np.diff(node_ptr) < 0) or node_ptr[-1] != node_idx.size:
        raise ModelError("node graph: ptr must start at 0, not decrease and end at len(idx)")
    indptr = np.empty(n * ndpn + 1, dtype=np.int64)
    indices = np.empty(ndpn * ndpn * node_idx.size, dtype=np.int64)
    kernels("fe").dof_pattern(node_ptr, node_idx, int(ndpn), indptr, indices)
    return indptr, indices


def assemble_pair(conn: np.ndarray, n_nodes: int, ndpn: int, Ke: np.ndarray, Me: np.ndarray):
    """Assemble two sets of element matrices with the same connectivity (e.g. K and M) into CSR.

    The CSR pattern is built once from the node graph of ``conn`` and both matrices are
    scattered into it by the ``fe.csr_scatter`` kernel (no COO triplets, no sorting of the
    ``ne (k ndpn)^2`` entries).

    Parameters
    ----------
    conn : (ne, k) int array
        Element node indices in 0..n_nodes-1.
    n_nodes, ndpn : int
        Number of nodes, DOFs per node (node-major numbering, :class:`DofMap`).
    Ke, Me : (ne, k ndpn, k ndpn) float arrays
        Element matrices, DOFs node by node.

    Returns
    -------
    K, M : scipy.sparse.csr_matrix (n_nodes ndpn square), canonical (sorted, no duplicates).
    """
    conn = np.ascontiguousarray(conn, dtype=np.int64)
    if conn.ndim != 2 or conn.shape[0] == 0:
        raise ModelError(f"connectivity must be a non-empty (ne, k) array, got shape {conn.shape}")
    ne, k = conn.shape
    if conn.min() < 0 or conn.max() >= n_nodes:
        raise ModelError(f"connectivity refers to nodes outside 0..{n_nodes - 1}")
    nd = k * ndpn
    mats = []
    for name, A in (("Ke", Ke), ("Me", Me)):
        A = np.ascontiguousarray(A, dtype=float)
        if A.shape != (ne, nd, nd):
            raise ModelError(f"{name} must have shape ({ne}, {nd}, {nd}), got {A.shape}")
        mats.append(A)
    node_ptr, node_idx = node_graph(conn, n_nodes)
    indptr, indices = dof_pattern(node_ptr, node_idx, ndpn)
    Kdata = np.zeros(indices.size)
    Mdata = np.zeros(indices.size)
    kernels("fe").csr_scatter(conn, node_ptr, node_idx, int(ndpn), mats[0], mats[1], Kdata, Mdata)
    n = n_nodes * ndpn
    idx_t = np.int32 if max(indices.size, n) < 2**31 - 1 else np.int64
    out = []
    for data in (Kdata, Mdata):
        A = sp.csr_matrix((data, indices.astype(idx_t), indptr.astype(idx_t)), shape=(n, n), copy=False)
        A.has_sorted_indices = True
        A.has_canonical_format = True
        out.append(A)
    return out[0], out[1]


def mesh_matrices(mesh, material, *, incompatible: bool = True, lumped: bool = False):
    """Global stiffness and mass (CSR) of a plane (stress or strain) or frame mesh.

    A plane mesh may hold several area blocks (e.g. ``quad`` and ``triangle``, or ``quad8`` and
    ``triangle6``): each block is assembled and the matrices summed.

    Parameters
    ----------
    mesh : fesub.fe.mesh.Mesh
        The mesh, node coordinates in m.
    material : PlaneStress, PlaneStrain or BeamSection
        PlaneStress or PlaneStrain for meshes of quad, triangle, quad8, quad9 and triangle6
        cells, BeamSection for line meshes (moduli in Pa, density in kg/m^3).
    incompatible : bool
        Q4 with incompatible modes (default) or plain Q4.
    lumped : bool
        HRZ-lumped mass.

    Returns
    -------
    K (N/m), M (kg) : scipy.sparse.csr_matrix, and the :class:`DofMap`.
        Rotational DOFs of frames carry N m/rad and kg m^2.
    """
    from .materials import BeamSection, PlaneStress

    if mesh.element_type == "line":
        if not isinstance(material, BeamSection):
            raise ModelError(f"{mesh.source}: a line (frame) mesh needs a BeamSection, got {type(material).__name__}")
        conn = mesh.elements()
        Ke, Me = elements.frame2d_matrices(mesh.points[conn], material.E, material.area,
                                           material.inertia, material.rho, lumped=lumped)
        return (*assemble_pair(conn, mesh.n_points, 3, Ke, Me), DofMap(mesh.n_points, 3))
    if not isinstance(material, PlaneStress):  # PlaneStrain is one too
        raise ModelError(f"{mesh.source}: a plane mesh needs a PlaneStress or PlaneStrain material, "
                         f"got {type(material).__name__}")
    K = M = None
    for kind, conn in mesh.blocks().items():
        xy = mesh.points[conn]
        if kind == "quad":
            Ke, Me = elements.q4_matrices(xy, material, incompatible=incompatible, lumped=lumped)
        elif kind == "triangle":
            Ke, Me = elements.t3_matrices(xy, material, lumped=lumped)
        elif kind in _QUADRATIC:
            Ke, Me = _QUADRATIC[kind](xy, material, lumped=lumped)
        else:  # pragma: no cover - Mesh validates its cell types
            raise MeshError(f"{mesh.source}: unsupported element type {kind!r}")
        Kb, Mb = assemble_pair(conn, mesh.n_points, 2, Ke, Me)
        K, M = (Kb, Mb) if K is None else (K + Kb, M + Mb)
    return K, M, DofMap(mesh.n_points, 2)


def rayleigh(M, K, alpha: float, beta: float):
    """Rayleigh damping C = alpha M + beta K (alpha in 1/s, beta in s).

    Parameters
    ----------
    M : array_like or sparse matrix
        Mass matrix (kg).
    K : array_like or sparse matrix
        Stiffness matrix (N/m).
    alpha : float
        Mass-proportional coefficient (1/s), >= 0.
    beta : float
        Stiffness-proportional coefficient (s), >= 0.

    Returns
    -------
    C : array_like or sparse matrix
        Damping matrix (N s/m), of the type of ``M`` and ``K``.
    """
    alpha = check_positive("Rayleigh alpha (1/s)", alpha, strict=False, error=ModelError)
    beta = check_positive("Rayleigh beta (s)", beta, strict=False, error=ModelError)
    return alpha * M + beta * K


def rayleigh_ratio(omega, alpha: float, beta: float):
    """Modal damping ratio of Rayleigh damping: zeta(w) = alpha/(2w) + beta w/2 (w in rad/s).

    Parameters
    ----------
    omega : float or array_like
        Angular frequency w (rad/s).
    alpha : float
        Mass-proportional coefficient (1/s).
    beta : float
        Stiffness-proportional coefficient (s).

    Returns
    -------
    zeta : float or numpy.ndarray
        Damping ratio (-), of the shape of ``omega``; infinite at ``omega = 0`` when alpha > 0.
    """
    omega = np.asarray(omega, dtype=float)
    with np.errstate(divide="ignore"):
        return alpha / (2 * omega) + beta * omega / 2


def rayleigh_root(omega, alpha: float, beta: float):
    """Eigenvalue (1/s) of a Rayleigh-damped oscillator of natural frequency ``omega`` (rad/s):
    s = -zeta w + j w sqrt(1 - zeta^2), zeta = :func:`rayleigh_ratio` (overdamped: the imaginary
    part 0). ``alpha`` in 1/s, ``beta`` in s."""
    omega = np.asarray(omega, float)
    z = rayleigh_ratio(omega, alpha, beta)
    return -z * omega + 1j * omega * np.sqrt(np.clip(1 - z * z, 0, None))


def free_dofs(n_dofs: int, fixed) -> np.ndarray:
    """Complement of ``fixed`` in 0..n_dofs-1."""
    mask = np.ones(n_dofs, bool)
    mask[np.asarray(fixed, dtype=np.int64)] = False
    return np.flatnonzero(mask)


def solve_static(K, f, prescribed: dict | None = None) -> np.ndarray:
    """Solve K u = f with prescribed DOF values {dof: value (m or rad)}; returns full u.

    Parameters
    ----------
    K : sparse matrix
        Stiffness matrix, n x n (N/m; N m/rad on rotational DOFs).
    f : array_like
        Load vector of n entries (N; N m on rotational DOFs).
    prescribed : dict of int to float, optional
        Prescribed displacements ``{dof: value}`` (m or rad); the loads on these DOFs are
        ignored.

    Returns
    -------
    u : numpy.ndarray
        Displacements of all n DOFs (m or rad), prescribed ones included.

    Raises :class:`ModelError` for a load vector of the wrong length, prescribed DOFs outside
    the model, or a stiffness that is singular on the free DOFs (a mechanism: missing supports).
    """
    n = K.shape[0]
    f = np.asarray(f, dtype=float).ravel()
    if f.shape != (n,):
        raise ModelError(f"load vector f must have {n} entries (one per DOF), got {f.size}")
    u = np.zeros(n)
    pres = prescribed or {}
    pd = np.fromiter(pres.keys(), dtype=np.int64, count=len(pres))
    if pd.size and (pd.min() < 0 or pd.max() >= n):
        raise ModelError(f"prescribed DOFs must lie in 0..{n - 1}")
    u[pd] = np.fromiter(pres.values(), dtype=float, count=len(pres))
    if not np.all(np.isfinite(u[pd])) or not np.all(np.isfinite(f)):
        raise ModelError("prescribed values and loads must be finite")
    fr = free_dofs(n, pd)
    K = sp.csr_matrix(K)
    rhs = f[fr] - K[fr][:, pd] @ u[pd]
    lu = factor_stiffness(K[fr][:, fr], "the free DOFs", "prescribe more DOFs")
    u[fr] = lu.solve(rhs)
    if not np.all(np.isfinite(u)):
        raise ModelError("stiffness is singular on the free DOFs: the model is a mechanism; prescribe more DOFs")
    return u


def factor_stiffness(K, where: str, remedy: str):
    """Sparse LU factor (``scipy.sparse.linalg.splu``) of a stiffness matrix that must be
    non-singular; a mechanism (exactly or numerically singular) is a :class:`ModelError` naming
    ``where`` and the ``remedy``."""
    try:
        lu = spla.splu(sp.csc_matrix(K))
    except RuntimeError as exc:  # exactly singular factor
        raise ModelError(f"stiffness is singular on {where} ({exc}): the model is a mechanism; "
                         f"{remedy}") from None
    piv = np.abs(lu.U.diagonal())
    # a mechanism leaves a round-off pivot (~1e-16 of the largest); supported models, even very
    # slender ones, stay above ~1e-8, so 1e-13 separates the two
    if piv.size and not piv.min() > 1e-13 * piv.max():
        raise ModelError(f"stiffness is singular on {where} (pivot ratio "
                         f"{piv.min() / piv.max():.1e}): the model is a mechanism; {remedy}")
    return lu


def dense_modes(size: int, n: int, dense_below: int = 400) -> bool:
    """True when :func:`modes` solves densely: ``size < dense_below``, or ``n`` above a quarter of
    ``size`` (or ``n >= size - 1``, which Lanczos cannot do)."""
    return size < dense_below or 4 * n > size or n >= size - 1


def check_pair(K, M):
    """K and M finite, square, of equal size; M with a positive diagonal (a mass matrix)."""
    if K.shape != M.shape or K.shape[0] != K.shape[1]:
        raise ModelError(f"K and M must be square and of equal size, got {K.shape} and {M.shape}")
    for name, A in (("K", K), ("M", M)):
        data = A.data if sp.issparse(A) else np.asarray(A)
        if not np.all(np.isfinite(data)):
            raise ModelError(f"{name} has NaN or infinite entries")
    dm = M.diagonal() if sp.issparse(M) else np.diag(np.asarray(M))
    if not np.all(dm > 0):
        raise ModelError(f"M must have a positive diagonal (masses in kg), got min {dm.min():g}")


def modes(K, M, n: int, *, sigma: float | None = None, dense_below: int = 400, factor=None):
    """Lowest ``n`` undamped modes of (K, M).

    Shift-invert Lanczos (``scipy.sparse.linalg.eigsh``) about ``sigma`` (rad^2/s^2); by default a
    small negative shift, so that rigid-body modes (eigenvalue 0) are found too. Small problems
    (fewer than ``dense_below`` DOFs) and requests for more than a quarter of the modes use the
    dense symmetric solver (LAPACK): Lanczos then needs a Krylov space of more than half the size
    (``ncv = 2 n + 1``), as much memory as the dense matrices and many more solves.

    Parameters
    ----------
    K, M : sparse or dense (size, size)
        Stiffness (N/m) and mass (kg).
    n : int
        Number of modes, 1..size.
    sigma : float, optional
        Shift (rad^2/s^2); with ``factor`` it must equal ``factor.shift`` (or be None).
    dense_below : int
        Size below which the dense solver is used.
    factor : fesub.fe.factor.SparseFactor, optional
        A factor of ``K - factor.shift M`` already computed (e.g. for static solves): Lanczos
        reuses it instead of factoring again.

    Returns
    -------
    freq_hz : (n,) natural frequencies (Hz); rigid-body modes give ~0.
    phi : (ndof, n) mass-normalised mode shapes (phi' M phi = I).
    """
    size = K.shape[0]
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 1 or n > size:
        raise ModelError(f"number of modes must be an integer in 1..{size}, got {n!r}")
    n = int(n)
    check_pair(K, M)
    if factor is not None:
        if sigma is not None and sigma != factor.shift:
            raise ModelError(f"shift sigma = {sigma!r} rad^2/s^2 does not match the factor's shift "
                             f"{factor.shift!r} rad^2/s^2 (the factor is of K - shift M)")
        if factor.n != size:
            raise ModelError(f"factor is of size {factor.n}, the model has {size} DOFs")
    if dense_modes(size, n, dense_below):
        Kd = K.toarray() if sp.issparse(K) else np.asarray(K)
        Md = M.toarray() if sp.issparse(M) else np.asarray(M)
        lam, phi = sla.eigh(Kd, Md, subset_by_index=[0, n - 1])
    else:
        # a fixed start vector: the same model gives bit-identical modes in every process
        v0 = np.random.default_rng(0).standard_normal(K.shape[0])
        if factor is not None:
            lam, phi = spla.eigsh(sp.csc_matrix(K), k=n, M=sp.csc_matrix(M), sigma=factor.shift,
                                  which="LM", OPinv=factor.operator(), mode="normal", v0=v0)
        else:
            if sigma is None:
                dk = np.abs(K.diagonal()).mean()
                dm = np.abs(M.diagonal()).mean()
                sigma = -1e-6 * dk / dm
            lam, phi = spla.eigsh(sp.csc_matrix(K), k=n, M=sp.csc_matrix(M), sigma=sigma, which="LM",
                                  v0=v0)
        order = np.argsort(lam)
        lam, phi = lam[order], phi[:, order]
        # re-normalise (eigsh returns M-orthonormal vectors up to round-off)
        phi = phi / np.sqrt(np.einsum("ij,ij->j", phi, M @ phi))
    # eigenvalues are accurate to about eps x the largest one of the pencil, itself >= the mean
    # ratio of the diagonals; 1e-14 of that ratio (~50 eps) is indistinguishable from zero, and a
    # negative eigenvalue beyond it is a stiffness that is not positive semi-definite
    dk = np.abs(K.diagonal()).mean()
    dm = np.abs(M.diagonal()).mean()
    zero = 1e-14 * dk / dm
    if lam.min() < -zero:
        raise ModelError(f"K is not positive semi-definite: eigenvalue {lam.min():.4g} rad^2/s^2 "
                         "(a negative stiffness or a wrong sign); no frequency can be given")
    lam = np.where(np.abs(lam) < max(zero, 1e-9 * max(1.0, np.abs(lam).max())), 0.0, lam)
    return np.sqrt(np.clip(lam, 0, None)) / (2 * np.pi), phi
