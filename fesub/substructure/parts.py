"""The substructures of an assembly seen through their coordinates: matrices, nodes, node -> coordinate.

:class:`Part` wraps a whole :class:`~fesub.substructure.Substructure`, a
:class:`~fesub.substructure.CraigBampton` model or a matrix model (``M``, ``K``, ``X``,
``node_dofs``) behind one face, used by :class:`~fesub.substructure.SubstructureAssembly`.

Units: SI (m, kg, N/m).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..errors import MeshError, ModelError, ParameterError
from .craig_bampton import CraigBampton
from .substructure import Substructure

__all__ = ["Part", "default_name"]


class Part:
    """One substructure seen through its coordinates: matrices, nodes, node -> coordinate map.

    Parameters
    ----------
    obj : Substructure, CraigBampton or matrix model
        The model: a whole substructure (coordinates: its retained DOFs), a Craig-Bampton model
        built from a Substructure (coordinates ``q = [eta; u_b]``), or any object with ``M``
        (kg), ``K`` (N/m), optional ``C`` (N s/m), ``X`` (N, 2) node positions (m),
        ``node_dofs`` (N, 2 or 3), optional ``node_sets`` and optional ``comps``, the names of
        the ``node_dofs`` columns (default ``x``, ``y``[, ``rz``]; ``("x", "y", "z")`` makes a 3D
        model, whose ``X`` is then (N, 3)).
    name : str
        Label used in messages.

    Attributes
    ----------
    kind : str
        ``"full"``, ``"craig-bampton"`` or ``"matrices"``.
    M, K, C : CSR matrices
        Mass (kg), stiffness (N/m) and damping (N s/m) over the coordinates.
    X : (N, dim) array
        Node positions (m).
    dim : int
        Space dimension (-): 3 for solid meshes and 3D matrix models, 2 otherwise.
    node_dofs : (N, c) int array
        Coordinate of each node component (``comps``); -1 fixed, -2 not a coordinate (interior
        node of a reduced model).
    """

    def __init__(self, obj, name):
        self.obj, self.name, self.mesh = obj, str(name), None
        if isinstance(obj, CraigBampton) or isinstance(obj, Substructure):
            sub = obj if isinstance(obj, Substructure) else obj.substructure
            if sub is None:
                raise ModelError(f"substructure {name!r}: a Craig-Bampton model must be built from a "
                                 f"Substructure to be assembled (its nodes locate the interfaces)")
            dm = sub.dofmap
            self.mesh, self.sub, self.comps = sub.mesh, sub, tuple(dm.components)
            index = np.full(dm.n_dofs, -1, np.int64)
            index[sub.retained] = np.arange(sub.retained.size)
            nd = index[dm.dofs(np.arange(dm.n_nodes))].reshape(dm.n_nodes, dm.ndpn)
            if isinstance(obj, CraigBampton):
                self.kind = "craig-bampton"
                qpos = np.full(sub.n_dofs, -2, np.int64)
                qpos[obj.boundary] = obj.n_modes + np.arange(obj.boundary.size)
                nd = np.where(nd >= 0, qpos[np.maximum(nd, 0)], -1)
                self.M, self.K = sp.csr_matrix(obj.Mr), sp.csr_matrix(obj.Kr)
                self.C = sp.csr_matrix(obj.rayleigh(sub.alpha, sub.beta))
            else:
                self.kind = "full"
                self.M, self.K, self.C = sub.M, sub.K, sub.C
            self.dim = sub.dim
            self.X, self.node_dofs, self.node_sets = sub.mesh.points[:, :sub.dim], nd, None
        elif all(hasattr(obj, k) for k in ("M", "K", "X", "node_dofs")):
            self.kind = "matrices"
            self.M, self.K = sp.csr_matrix(obj.M, dtype=float), sp.csr_matrix(obj.K, dtype=float)
            C = getattr(obj, "C", None)
            self.C = sp.csr_matrix(self.M.shape) if C is None else sp.csr_matrix(C, dtype=float)
            self.X = np.asarray(obj.X, float)
            nd = np.asarray(obj.node_dofs)
            n = self.M.shape[0]
            if self.M.shape != (n, n) or self.K.shape != (n, n) or self.C.shape != (n, n) or \
                    not all(np.isfinite(A.data).all() for A in (self.M, self.K, self.C)):
                raise ModelError(f"substructure {name!r}: M, K (and C) must be finite square matrices of one size")
            if self.X.ndim != 2 or self.X.shape[1] < 2 or not np.isfinite(self.X).all() or nd.ndim != 2 or \
                    nd.shape[0] != self.X.shape[0] or not 1 <= nd.shape[1] <= 3 or nd.dtype.kind not in "iu" or \
                    nd.min(initial=0) < -2 or nd.max(initial=-1) >= n:
                raise ModelError(f"substructure {name!r}: X must be finite (N, 2 or 3) node positions (m) and node_dofs "
                                 f"an (N, 2 or 3) integer map to coordinates -2..{n - 1}")
            self.comps = _matrix_comps(obj, nd.shape[1], name)
            self.dim = 3 if "z" in self.comps else 2
            if self.X.shape[1] < self.dim:
                raise ModelError(f"substructure {name!r}: components {self.comps} need (N, 3) node positions X (m), "
                                 f"got {self.X.shape}")
            self.X, self.node_dofs = self.X[:, :self.dim], nd.astype(np.int64)
            self.node_sets = dict(getattr(obj, "node_sets", None) or {})
        else:
            raise ParameterError(f"substructure {name!r} must be a Substructure, a CraigBampton model or an "
                                 f"object with M, K, X and node_dofs (such as fesub.contact.Body), got "
                                 f"{type(obj).__name__}")

    @property
    def n(self) -> int:
        return self.M.shape[0]

    def nodes(self, key, itf) -> np.ndarray:
        """Node indices of a set name or an index array (checked), for interface ``itf``'s messages."""
        if isinstance(key, str):
            if self.mesh is not None:
                try:
                    return self.mesh.nodes(key)
                except MeshError:
                    known = sorted(set(self.mesh.node_sets) | set(getattr(self.mesh, "edge_sets", {})))
            else:
                if key in self.node_sets:
                    return np.asarray(self.node_sets[key], np.int64)
                known = sorted(self.node_sets)
            raise ModelError(f"interface {itf.name!r}: substructure {self.name!r} has no node set {key!r}; "
                             f"its node sets are {known}")
        idx = np.atleast_1d(np.asarray(key))
        if idx.size == 0 or idx.dtype.kind not in "iu" or idx.min() < 0 or idx.max() >= self.X.shape[0]:
            raise ModelError(f"interface {itf.name!r}: nodes of {self.name!r} must be a set name or node indices "
                             f"in 0..{self.X.shape[0] - 1}")
        return np.unique(idx.astype(np.int64))

    def coords(self, nodes, comps, itf) -> np.ndarray:
        """(len(nodes), len(comps)) local coordinates; -1 fixed; error where not available."""
        missing = [c for c in comps if c not in self.comps]
        if missing:
            raise ModelError(f"interface {itf.name!r}: substructure {self.name!r} has no component {missing}")
        nd = self.node_dofs[np.ix_(nodes, [self.comps.index(c) for c in comps])]
        if np.any(nd == -2):
            bad = nodes[np.any(nd == -2, axis=1)]
            raise ModelError(f"interface {itf.name!r}: nodes {bad[:10].tolist()} of {self.name!r} are interior "
                             f"nodes of a reduced model; keep them as boundary DOFs to tie them")
        return nd

    def recover(self, q) -> np.ndarray:
        """Nodal field (n_nodes, n_comps, k) of coordinate vectors q (n, k)."""
        if self.kind == "full":
            return self.sub.expand(q)
        if self.kind == "craig-bampton":
            return self.sub.expand(self.obj.recover(q))
        nd = self.node_dofs
        out = np.where((nd >= 0)[..., None], q[np.maximum(nd, 0)], 0.0)
        out[nd == -2] = np.nan
        return out


def _matrix_comps(obj, width, name):
    """Names of the ``node_dofs`` columns of a matrix model: its ``comps``, or x, y[, rz]."""
    comps = getattr(obj, "comps", None)
    if comps is None:
        return ("x", "y", "rz")[:width]
    comps = (comps,) if isinstance(comps, str) else tuple(str(c) for c in comps)
    if len(comps) != width or len(set(comps)) != width or not set(comps) <= {"x", "y", "z", "rz"} or \
            ("z" in comps and "rz" in comps):
        raise ModelError(f"substructure {name!r}: comps must name the {width} columns of node_dofs, distinct, "
                         f"from ('x', 'y', 'rz') in 2D or ('x', 'y', 'z') in 3D; got {comps!r}")
    return comps


def default_name(obj, i):
    """Name of a model: its own ``name``, its substructure's, or ``substructure<i>``.

    Parameters
    ----------
    obj : object
        The model.
    i : int
        Its position in the assembly (-).

    Returns
    -------
    str
    """
    for o in (obj, getattr(obj, "substructure", None)):
        if isinstance(getattr(o, "name", None), str):
            return o.name
    return f"substructure{i}"
